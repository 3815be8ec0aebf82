#!/usr/bin/env python3
"""PyTorch side of bench_norm: the same normalizations (torch.softmax,
log_softmax, logsumexp, F.layer_norm, F.rms_norm, and the residual add
followed by F.rms_norm), timed the same way (CUDA events around back-to-back
calls, median of 15 repeats), printed next to kgen's figures from the CSV
that bench_norm wrote, with the ratio and both as a percentage of the copy
bandwidth kgen measured in the same run. Bytes are counted as bench_norm
counts them (every tensor read once, every result written once).

usage: KG_BENCH_CSV=norm.csv build/bench/bench_norm && python3 bench/torch_norm.py norm.csv
"""
import csv
import re
import sys

import torch
import torch.nn.functional as F
from torch_common import time_us


def main():
    kg, copy, order, sweep = {}, None, [], set()
    with open(sys.argv[1]) as f:
        for row in csv.reader(f):
            if row[0] == "norm-limit":
                copy = float(row[5])
            elif row[0] in ("norm", "norm-sweep"):
                kg[(row[1], row[2])] = (float(row[4]), float(row[5]))
                order.append((row[1], row[2]))
                if row[0] == "norm-sweep":
                    sweep.add((row[1], row[2]))
    if copy is None:
        print("bench_norm wrote no rows: nothing to compare")
        return
    dev = torch.device("cuda")
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}; kgen's copy limit {copy:.0f} GB/s")
    base = torch.empty(1 << 28, device=dev).uniform_(-4, 4)
    dts = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f64": torch.float64}
    print(f"{'case':34} {'dtype':5} {'kgen GB/s':>10} {'torch GB/s':>10} {'kgen/torch':>10} "
          f"{'kgen %copy':>10} {'torch %copy':>11}")
    worst = {}
    for name, dn in order:
        dt = dts[dn]
        m = re.match(r"(\S+) \[(\d+),(\d+)(?:,(\d+))?\](?: dim (\d))?", name)
        op, r, c = m.group(1), int(m.group(2)), int(m.group(3))
        dim = int(m.group(5)) if m.group(5) else 1
        if m.group(4):
            # [outer, n, inner] along dim 1 (softmax / log_softmax): timed as such, dim 0 of each [n, inner]
            o, r, c = r, c, int(m.group(4))
            x = base[: o * r * c].view(o, r, c).to(dt)
            dim, tdim = 0, 1
        else:
            x = base[: r * c].view(r, c).to(dt)
            o, tdim = 1, dim
        r *= o
        es = x.element_size()
        n = r * c
        w = torch.empty(c, device=dev, dtype=dt).uniform_(0.5, 1.5)
        b = torch.empty(c, device=dev, dtype=dt).uniform_(-0.5, 0.5)
        nbytes = 2 * n * es
        if op == "softmax":
            fn = lambda: torch.softmax(x, tdim)
        elif op == "log_softmax":
            fn = lambda: torch.log_softmax(x, tdim)
        elif op == "logsumexp":
            fn = lambda: torch.logsumexp(x, dim)
            nbytes = n * es + (r if dim == 1 else c) * es
        elif op == "layer_norm":
            fn = lambda: F.layer_norm(x, (c,), w, b, 1e-5)
        elif op == "rms_norm":
            fn = lambda: F.rms_norm(x, (c,), w, 1e-6)
        else:  # rms_norm+residual: the add, then the norm (what an eager model runs)
            res = torch.empty_like(x).uniform_(-1, 1)

            def fn():
                res.add_(x)
                return F.rms_norm(res, (c,), w, 1e-6)

            nbytes = 4 * n * es
        # PyTorch's dim-0 softmax runs at ~100 GB/s: fewer calls per repeat
        # (and five repeats of one call for the seeded sweep's dim-0 cases)
        if dim == 0 and op != "logsumexp" and (name, dn) in sweep:
            us = time_us(fn, 1, reps=5)
        else:
            us = time_us(fn, 2 if dim == 0 and op != "logsumexp" else 10)
        tg = nbytes / (us * 1e3)
        k = kg.get((name, dn))
        ratio = k[1] / tg
        print(f"{name:34} {dn:5} {k[1]:10.1f} {tg:10.1f} {ratio:9.2f}x {100 * k[1] / copy:9.1f}% "
              f"{100 * tg / copy:10.1f}%" + ("  (sweep)" if (name, dn) in sweep else ""))
        if (name, dn) in sweep:
            worst[(name, dn)] = (100 * k[1] / copy, ratio)
        del x
    torch.cuda.synchronize()
    if worst:
        # the seeded sweep (bench_norm's KG_NORM_RAND): worst and median, of copy and of the ratio
        pc = sorted(worst.items(), key=lambda kv: kv[1][0])
        rt = sorted(worst.items(), key=lambda kv: kv[1][1])
        print(f"# sweep of {len(pc)} cases: kgen %copy worst {pc[0][1][0]:.1f}% ({pc[0][0][0]} {pc[0][0][1]}), "
              f"median {pc[len(pc) // 2][1][0]:.1f}%; kgen/torch worst {rt[0][1][1]:.2f}x "
              f"({rt[0][0][0]} {rt[0][0][1]}), median {rt[len(rt) // 2][1][1]:.2f}x")


if __name__ == "__main__":
    main()
