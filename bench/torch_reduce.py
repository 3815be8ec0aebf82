#!/usr/bin/env python3
"""PyTorch side of bench_reduce: the same reductions, timed the same way
(CUDA events around back-to-back calls, median of 15 repeats), printed next
to kgen's figures from the CSV that bench_reduce wrote, with the ratio and
both as a percentage of the copy bandwidth kgen measured in the same run.

usage: KG_BENCH_CSV=red.csv build/bench/bench_reduce && python3 bench/torch_reduce.py red.csv
"""
import csv
import sys

import torch
from torch_common import Results, host_us, time_us


def main():
    kg, copy = {}, None
    with open(sys.argv[1]) as f:
        for row in csv.reader(f):
            if row[0] == "reduce-limit":
                copy = float(row[5])
            elif row[0].startswith("reduce"):
                kg[(row[0], row[1], row[2])] = (float(row[4]), float(row[5]))
    if copy is None:
        print("bench_reduce wrote no rows: nothing to compare")
        return
    dev = torch.device("cuda")
    res = Results()
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}; kgen's copy limit {copy:.0f} GB/s")
    n = 1 << 28
    x = torch.empty(n, device=dev).uniform_(-1, 1)
    xb = x.to(torch.bfloat16)
    xi = x.view(torch.int32)
    xp = 1 + x * 1e-3
    sq, sqb = x.view(16384, 16384), xb.view(16384, 16384)
    sr, lc = x.view(4194304, 64), x.view(64, 4194304)
    fb, bb = 4 * n, 2 * n
    cases = [
        ("sum 2^28 all", "f32", lambda: x.sum(), fb + 4),
        ("sum [16384,16384] dim 1", "f32", lambda: sq.sum(1), fb + 4 * 16384),
        ("sum [16384,16384] dim 0", "f32", lambda: sq.sum(0), fb + 4 * 16384),
        ("sum [16384,16384] dim 1", "bf16", lambda: sqb.sum(1), bb + 2 * 16384),
        ("sum [4194304,64] dim 1", "f32", lambda: sr.sum(1), fb + 4 * 4194304),
        ("sum [64,4194304] dim 0", "f32", lambda: lc.sum(0), fb + 4 * 4194304),
        ("sum 2^28 all", "i32", lambda: xi.sum(), fb + 8),
        ("max+indices [16384,16384] dim 1", "f32", lambda: sq.max(1), fb + 12 * 16384),
        ("argmax [4194304,64] dim 1", "f32", lambda: sr.argmax(1), fb + 8 * 4194304),
        ("prod 2^28 all", "f32", lambda: xp.prod(), fb + 4),
    ]
    print(f"{'case':34} {'dtype':5} {'kgen GB/s':>10} {'torch GB/s':>10} {'kgen/torch':>10} "
          f"{'kgen %copy':>10} {'torch %copy':>11}")
    for name, dn, fn, nbytes in cases:
        us = time_us(fn, 20)
        tg = nbytes / (us * 1e3)
        k = kg.get(("reduce", name, dn))
        res.add("reduce", name, dn, None, us, gbps=tg)
        if k:
            print(f"{name:34} {dn:5} {k[1]:10.1f} {tg:10.1f} {k[1] / tg:9.2f}x {100 * k[1] / copy:9.1f}% "
                  f"{100 * tg / copy:10.1f}%")
        else:
            print(f"{name:34} {dn:5} {'-':>10} {tg:10.1f}")
    m = x[: 32 * 64 * 128].view(32, 64, 128)
    mean = lambda: m.mean(1, keepdim=True)
    dev_us, h_us = time_us(mean, 200), host_us(mean)
    name = "mean keepdim [32,64,128] dim 1"
    res.add("reduce", name, "f32", [32, 64, 128], dev_us)
    res.add("host", name, "f32", [32, 64, 128], h_us)
    res.save()
    kd = kg.get(("reduce-latency", name, "f32"), (float("nan"), 0))[0]
    kh = kg.get(("reduce-host", name, "f32"), (float("nan"), 0))[0]
    kb = kg.get(("reduce-host", "bare launch", "f32"), (float("nan"), 0))[0]
    print(f"{name}: per call on the GPU kgen {kd:.2f} us, torch {dev_us:.2f} us; host time per call kgen "
          f"{kh:.2f} us (bare cudaLaunchKernel {kb:.2f} us), torch {h_us:.2f} us")


if __name__ == "__main__":
    main()
