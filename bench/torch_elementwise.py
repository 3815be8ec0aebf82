#!/usr/bin/env python3
"""PyTorch side of bench_elementwise: the same cases, timed the same way
(CUDA events around back-to-back calls, median of 15 repeats), printed next
to kgen's figures from the CSV that bench_elementwise wrote.

usage: KG_BENCH_CSV=ew.csv build/bench/bench_elementwise && python3 bench/torch_elementwise.py ew.csv
"""
import csv
import sys

import torch
from torch_common import Results, host_us, time_us


def perm_rows(perms, copy, dev, dts):
    """The permutation rows: input a = a dense buffer of physical shape P
    permuted by p (logical dim d = physical dim p[d]); out (and b) dense."""
    print(f"\n{'permutation':44} {'dtype':5} {'kgen GB/s':>9} {'%copy':>6} {'torch GB/s':>10} {'%copy':>6} "
          f"{'kgen/torch':>10}")
    worst = {}
    for name, dn, n, kus, kgbps in perms:
        words = name.split()
        op, shape, perm = words[0], [int(x) for x in words[1].split("x")], [int(x) for x in words[2][1:].split(".")]
        tag = " ".join(words[3:])
        dt = dts[dn]
        a = torch.empty(shape, device=dev, dtype=dt).uniform_(-3, 3)
        x = a.permute(perm)
        out = torch.empty(x.shape, device=dev, dtype=dt)
        if op == "add":
            b = torch.empty(x.shape, device=dev, dtype=dt).uniform_(-3, 3)
            fn, nbytes = (lambda: torch.add(x, b, out=out)), 3 * n * a.element_size()
        else:
            fn, nbytes = (lambda: out.copy_(x)), 2 * n * a.element_size()
        tg = nbytes / (time_us(fn, 10) * 1e3)
        print(f"{name:44} {dn:5} {kgbps:9.1f} {100 * kgbps / copy:5.1f}% {tg:10.1f} {100 * tg / copy:5.1f}% "
              f"{kgbps / tg:9.2f}x")
        group = ("sweep" if "[sweep]" in tag else "even sweep" if "[even sweep]" in tag
                 else "tile (before)" if "[tile]" in tag
                 else "forced variant" if "[" in tag else "fixed")
        w = worst.get((group, dn))
        if w is None or kgbps / copy < w[0]:
            worst[(group, dn)] = (kgbps / copy, kgbps / tg, name)
        wr = worst.get((group + " vs torch", dn))
        if wr is None or kgbps / tg < wr[1]:
            worst[(group + " vs torch", dn)] = (kgbps / copy, kgbps / tg, name)
        del a, x, out
    for (group, dn), (fc, ft, name) in sorted(worst.items()):
        print(f"worst {group:22} {dn:5}: {100 * fc:5.1f}% of copy, {ft:.2f}x torch  ({name})")


def main():
    kg = {}
    perms = []
    with open(sys.argv[1]) as f:
        for row in csv.reader(f):
            if len(row) < 6:
                continue  # a row cut short (the bench was stopped)
            if row[0] in ("elementwise", "host", "limit"):
                kg[(row[1], row[2], int(row[3]))] = (float(row[4]), float(row[5]))
            elif row[0] == "perm":
                perms.append((row[1], row[2], int(row[3]), float(row[4]), float(row[5])))
    copy = next(v[1] for k, v in kg.items() if k[0] == "copy")
    res = Results()
    dev = torch.device("cuda")
    dts = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}; kgen's copy limit {copy:.0f} GB/s")
    print(f"{'case':24} {'dtype':5} {'elements':>11} {'kgen GB/s':>10} {'torch GB/s':>10} {'kgen/torch':>10}")
    maxn = 1 << 28
    for dn, dt in dts.items():
        a = torch.empty(maxn, device=dev, dtype=dt).uniform_(-3, 3)
        b = torch.empty(maxn, device=dev, dtype=dt).uniform_(-3, 3)
        c = torch.rand(maxn, device=dev) < 0.5
        o = torch.empty(maxn, device=dev, dtype=dt)
        for name in ("add", "mul", "exp", "gelu", "where", "cast"):
            for lg in range(12, 29, 4):
                n = 1 << lg
                cname = name if name != "cast" else ("cast->bf16" if dt == torch.float32 else "cast->f32")
                if (cname, dn, n) not in kg:
                    continue  # kgen did not time it (KG_EW_BENCH_QUICK)
                x, y, z, out = a[:n], b[:n], c[:n], o[:n]
                if name == "add":
                    fn, nbytes = (lambda: torch.add(x, y, out=out)), 3 * n * x.element_size()
                elif name == "mul":
                    fn, nbytes = (lambda: torch.mul(x, y, out=out)), 3 * n * x.element_size()
                elif name == "exp":
                    fn, nbytes = (lambda: torch.exp(x, out=out)), 2 * n * x.element_size()
                elif name == "gelu":
                    fn, nbytes = (lambda: torch.nn.functional.gelu(x)), 2 * n * x.element_size()
                elif name == "where":
                    fn, nbytes = (lambda: torch.where(z, x, y, out=out)), 3 * n * x.element_size() + n
                else:
                    to = torch.bfloat16 if dt == torch.float32 else torch.float32
                    fn = lambda: x.to(to)
                    nbytes = n * x.element_size() + n * torch.empty(0, dtype=to).element_size()
                    name = "cast->bf16" if dt == torch.float32 else "cast->f32"
                inner = 200 if lg <= 20 else 50 if lg <= 24 else 10
                us = time_us(fn, inner)
                tg = nbytes / (us * 1e3)
                k = kg.get((name, dn, n))
                res.add("elementwise", name, dn, [n], us, gbps=tg)
                kgs = f"{k[1]:10.1f} {tg:10.1f} {k[1] / tg:9.2f}x" if k else f"{'-':>10} {tg:10.1f} {'-':>10}"
                print(f"{name:24} {dn:5} {n:11d} {kgs}")
                name = "cast" if name.startswith("cast") else name
        del a, b, c, o
    A = torch.empty(4096, 4096, device=dev).uniform_(-3, 3)
    B = torch.empty(4096, 4096, device=dev).uniform_(-3, 3)
    r = B[0].clone()
    O = torch.empty(4096, 4096, device=dev)
    nb = 4096 * 4096 * 4
    for name, fn, nbytes in (("add [4096,4096]+[4096]", lambda: torch.add(A, r, out=O), 2 * nb + 4096 * 4),
                             ("add a^T + b [4096^2]", lambda: torch.add(A.t(), B, out=O), 3 * nb)):
        k = kg.get((name, "f32", 4096 * 4096))
        if k is None:
            continue  # kgen did not time it (KG_EW_BENCH_PERM_ONLY)
        us = time_us(fn, 20)
        tg = nbytes / (us * 1e3)
        res.add("elementwise", name, "f32", [4096, 4096], us, gbps=tg)
        print(f"{name:24} {'f32':5} {4096 * 4096:11d} {k[1]:10.1f} {tg:10.1f} {k[1] / tg:9.2f}x  "
              f"({100 * k[1] / copy:.0f}% vs {100 * tg / copy:.0f}% of copy)")
    perm_rows(perms, copy, dev, dts)
    x, y, out = torch.randn(16, device=dev), torch.randn(16, device=dev), torch.empty(16, device=dev)
    torch_host = host_us(lambda: torch.add(x, y, out=out), inner=500, reps=41)
    res.add("host", "add", "f32", [16], torch_host)
    res.save()
    kt = kg.get(("tiny add", "f32", 16), (float("nan"), 0))[0]
    kb = kg.get(("bare launch", "f32", 16), (float("nan"), 0))[0]
    print(f"host time per tiny add: kgen {kt:.2f} us, torch {torch_host:.2f} us, bare cudaLaunchKernel {kb:.2f} us")


if __name__ == "__main__":
    main()
