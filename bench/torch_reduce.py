#!/usr/bin/env python3
"""PyTorch side of bench_reduce: the same reductions, timed the same way
(CUDA events around back-to-back calls, median of 15 repeats), printed next
to kgen's figures from the CSV that bench_reduce wrote, with the ratio and
both as a percentage of the copy bandwidth kgen measured in the same run.

The any-axes rows (issue 10: the named shapes and the seeded random sweep)
are rebuilt here from their shape, memory order and axes, timed, and
summarized: kgen as a percentage of copy and as a ratio to PyTorch, worst,
median and distribution, and every case under target (< 90% of copy or
slower than PyTorch).

usage: KG_BENCH_CSV=red.csv build/bench/bench_reduce && python3 bench/torch_reduce.py red.csv
"""
import csv
import math
import os
import sys
import time

import torch
from torch_common import Results, host_us, time_us


DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "i32": torch.int32}
OUT_SIZE = {"f32": 4, "bf16": 2, "f16": 2, "i32": 8}


def any_axes(rows, copy, dev):
    """Times PyTorch on each any-axes case and prints the comparison."""
    print(f"\n# any axes: kgen vs PyTorch, same run (target: >= 90% of copy and >= PyTorch)")
    print(f"{'case':46} {'dtype':5} {'class':9} {'kgen GB/s':>9} {'torch GB/s':>10} {'kgen/torch':>10} "
          f"{'kgen %copy':>10} {'torch %copy':>11}")
    res = []
    # KG_RED_TORCH_SECONDS: time no further case after that long (a
    # time-capped GPU run still prints the summaries over the cases timed)
    cap = float(os.environ.get("KG_RED_TORCH_SECONDS", "0"))
    t_end = time.monotonic() + cap if cap > 0 else None
    torch_us = {}
    for kind, label, dn, numel, us, gbps, shape, perm, axes, cls in rows:
        if t_end is not None and time.monotonic() > t_end:
            print(f"# stopped after {len(res)} of {len(rows)} cases (KG_RED_TORCH_SECONDS={cap:g})")
            break
        shape = [int(v) for v in shape.split("x")]
        perm = [int(v) for v in perm.split(".")]
        axes = [int(v) for v in axes.split(".")]
        phys = [shape[p] for p in perm]
        # bench_reduce's full cases (KG_RED_FULL_CASES): "full <op> [...]" or
        # "rows <op> [...]" rows of prod and argmax (values and indices) time
        # the same op
        op = label.split()[1] if label.split()[0] in ("full", "rows") else "sum"
        if dn == "i32":
            x = torch.randint(-1000, 1000, phys, device=dev, dtype=torch.int32)
        else:
            x = torch.empty(phys, device=dev).uniform_(-1, 1)
            if op == "prod":
                x = 1 + x * 1e-3
            x = x.to(DTYPES[dn])
        where = {p: i for i, p in enumerate(perm)}
        t = x.permute([where[d] for d in range(len(shape))])
        n_out = t.numel() // max(1, math.prod(shape[a] for a in axes))
        out_bytes = OUT_SIZE[dn]
        if op == "prod" and len(axes) == t.dim() == 1:
            fn = lambda: t.prod()
        elif op == "argmax" and len(axes) == 1:
            fn = lambda: t.max(dim=axes[0])
            out_bytes += 8
        else:
            fn = lambda: t.sum(dim=axes)
        nbytes = t.numel() * t.element_size() + n_out * out_bytes
        tu = time_us(fn, 3, 5)  # as bench_reduce times these: inputs far above L2
        tg = nbytes / (tu * 1e3)
        torch_us[(label, dn)] = tu
        kg = float(gbps)
        res.append((label, dn, cls, kg, tg, kind))
        print(f"{label:46} {dn:5} {cls:9} {kg:9.1f} {tg:10.1f} {kg / tg:9.2f}x {100 * kg / copy:9.1f}% "
              f"{100 * tg / copy:10.1f}%")
        del x, t
    sweep = [r for r in res if r[5] == "reduce-sweep"]
    if sweep:
        pc = sorted(100 * r[3] / copy for r in sweep)
        rt = sorted(r[3] / r[4] for r in sweep)
        n = len(sweep)
        q = lambda v, f: v[min(n - 1, int(f * n))]
        print(f"\n# sweep of {n} cases: kgen % of copy: worst {pc[0]:.1f}, 10th pct {q(pc, .1):.1f}, median "
              f"{q(pc, .5):.1f}, 90th pct {q(pc, .9):.1f}, best {pc[-1]:.1f}")
        print(f"# sweep: kgen / PyTorch: worst {rt[0]:.2f}x, 10th pct {q(rt, .1):.2f}x, median {q(rt, .5):.2f}x, "
              f"90th pct {q(rt, .9):.2f}x, best {rt[-1]:.2f}x")
        edges = [0, 50, 70, 80, 90, 95, 100, 1000]
        hist = [sum(1 for v in pc if lo <= v < hi) for lo, hi in zip(edges, edges[1:])]
        print("# distribution of kgen % of copy: " +
              ", ".join(f"[{lo},{hi}): {h}" for lo, hi, h in zip(edges, edges[1:], hist)))
        by = {}
        for r in sweep:
            by.setdefault(r[2], []).append(100 * r[3] / copy)
        print("# by class: " + ", ".join(f"{k} n={len(v)} worst {min(v):.1f}% median {sorted(v)[len(v) // 2]:.1f}%"
                                          for k, v in sorted(by.items())))
    under = [r for r in res if 100 * r[3] / copy < 90 or r[3] < r[4]]
    print(f"\n# {len(under)} of {len(res)} any-axes cases under target:")
    for label, dn, cls, kg, tg, kind in sorted(under, key=lambda r: r[3] / copy):
        print(f"#   {label:46} {dn:5} {cls:9} kgen {100 * kg / copy:5.1f}% of copy, {kg / tg:.2f}x PyTorch")
    return torch_us


def best_rows(rows):
    """The any-axes rows with one row per (kind, label, dtype): the fastest
    of a KG_RED_ROUNDS run's repeats (PyTorch is timed once per case)."""
    best = {}
    for r in rows:
        k = (r[0], r[1], r[2])
        if k not in best or float(r[4]) < float(best[k][4]):
            best[k] = r
    return list(best.values())


def ab_table(rows, alts, torch_us, copy, win, floor):
    """The A/B table of every case timed beside KG_RED_ALTS tunings (best of
    the rounds each, same process): default and alternative us, the
    alternative's speedup x (default us / its us), both against PyTorch, and
    per alternative and element size (2-byte: bf16 / f16, 4-byte: f32 / i32)
    the decision its changed rows support: make it the default for that
    class if the geometric mean of x >= win, every key sweep case (#71 for
    2-byte, #179 and #9 for 4-byte) >= win, and no changed row < floor."""
    if not alts:
        return
    names = sorted({a for v in alts.values() for a in v})
    print(f"\n# A/B (same process, best of the rounds): default vs each KG_RED_ALTS tuning; x = default us / "
          f"alt us; /T = PyTorch us / kgen us (>1: kgen faster)")
    print(f"{'case':40} {'dt':4} {'def us':>8} {'torch us':>8} {'def/T':>6} " +
          " ".join(f"{n[:10]:>10} {'x':>5} {'alt/T':>6}" for n in names) + "  row supports")
    summary = {n: [] for n in names}
    for r in rows:
        kind, label, dn, us = r[0], r[1], r[2], float(r[4])
        key = (label, dn)
        if key not in alts:
            continue
        tu = torch_us.get(key, float("nan"))
        cells, notes = [], []
        for n in names:
            a = alts[key].get(n)
            if a is None:
                cells.append(f"{'-':>10} {'-':>5} {'-':>6}")
                continue
            aus, changed = a
            x = us / aus
            cells.append(f"{aus:10.1f} {x:5.2f} {tu / aus:6.2f}")
            if changed:
                summary[n].append((x, label, dn, tu / aus))
                notes.append(f"{n[:10]}:{'win' if x >= win else 'LOSS' if x < floor else 'level'}")
            else:
                notes.append(f"{n[:10]}:same")
        print(f"{label[:40]:40} {dn:4} {us:8.1f} {tu:8.1f} {tu / us:6.2f} " + " ".join(cells) +
              ("  " + " ".join(notes) if notes else ""))
    if not os.environ.get("KG_RED_AB_KEYS"):
        print(f"# rule per alternative and element size: geomean x >= {win:.2f}, key cases (#71; #179, #9) x >= {win:.2f}, "
          f"no changed row x < {floor:.2f}")
    for n in names:
        if os.environ.get("KG_RED_AB_KEYS"):
            break  # the rule of ab_keys instead
        for group, dts, keys in (("2-byte", ("bf16", "f16"), ("#71 ",)), ("4-byte", ("f32", "i32"), ("#179 ", "#9 "))):
            v = [t for t in summary[n] if t[2] in dts]
            if not v:
                continue
            worst = min(v)
            geo = math.exp(sum(math.log(t[0]) for t in v) / len(v))
            kx = [t[0] for t in v if t[1].startswith(keys)]
            vs_t = min(t[3] for t in v)
            ok = geo >= win and all(x >= win for x in kx) and worst[0] >= floor
            print(f"# {n} {group}: {len(v)} rows changed, geomean {geo:.3f}x, min {worst[0]:.3f}x ({worst[1]} "
                  f"{worst[2]}), key {', '.join(f'{x:.3f}' for x in kx) or '-'}; vs PyTorch worst {vs_t:.2f}x -> "
                  f"{'MAKE DEFAULT for the ' + group + ' class' if ok else 'keep forced-only'}")
    ab_keys(summary, names, win, floor)


def ab_keys(alts_rows, names, win, floor):
    """KG_RED_AB_KEYS="prefix;prefix": per alternative, over every row it
    changes (any dtype), the rule geomean x >= KG_RED_AB_GEO (default win),
    each row whose label starts with a key prefix x >= win, no changed row
    x < floor."""
    keys = [k for k in os.environ.get("KG_RED_AB_KEYS", "").split(";") if k]
    if not keys:
        return
    # KG_RED_AB_GEO: the geomean's bar (default: win)
    geo_min = float(os.environ.get("KG_RED_AB_GEO", str(win)))
    print(f"# rule over every changed row: geomean x >= {geo_min:.2f}, key rows ({'; '.join(keys)}) x >= {win:.2f}, "
          f"no changed row x < {floor:.2f}")
    for n in names:
        v = alts_rows[n]
        if not v:
            print(f"# {n} all: no row changed")
            continue
        worst = min(v)
        geo = math.exp(sum(math.log(t[0]) for t in v) / len(v))
        kx = [(t[0], t[1], t[2]) for t in v if any(t[1].startswith(k) for k in keys)]
        ok = geo >= geo_min and kx and all(x[0] >= win for x in kx) and worst[0] >= floor
        print(f"# {n} all: {len(v)} rows changed, geomean {geo:.3f}x, min {worst[0]:.3f}x ({worst[1]} {worst[2]}), "
              f"keys {', '.join(f'{x[0]:.3f} {x[2]}' for x in kx) or '-'} -> "
              f"{'MAKE DEFAULT' if ok else 'keep forced-only'}")


def main():
    # KG_RED_TORCH_ONLY_ANY=1: only the any-axes comparison (a time-capped run)
    only_any = os.environ.get("KG_RED_TORCH_ONLY_ANY")
    kg, copy = {}, None
    rows = []
    alts = {}  # (label, dtype) -> {alt label: (best us, changed)}
    with open(sys.argv[1]) as f:
        for row in csv.reader(f):
            if row[0] == "reduce-limit" and len(row) >= 6:
                copy = float(row[5])
            elif row[0] in ("reduce-named", "reduce-sweep", "reduce-class"):
                if len(row) == 10:  # a run cut short may leave a partial last line
                    rows.append(row)
            elif row[0] == "reduce-alt":
                if len(row) == 7:
                    d = alts.setdefault((row[1], row[3]), {})
                    us = float(row[4])
                    if row[2] not in d or us < d[row[2]][0]:
                        d[row[2]] = (us, row[6] == "changed")
            elif row[0].startswith("reduce") and len(row) >= 6:
                kg[(row[0], row[1], row[2])] = (float(row[4]), float(row[5]))
    if copy is None:
        print("bench_reduce wrote no rows: nothing to compare")
        return
    dev = torch.device("cuda")
    rows = best_rows(rows)
    # KG_RED_AB_WIN / KG_RED_AB_FLOOR: the A/B table's decision rule
    win = float(os.environ.get("KG_RED_AB_WIN", "1.05"))
    floor = float(os.environ.get("KG_RED_AB_FLOOR", "0.98"))
    if only_any:
        print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}; kgen's copy limit {copy:.0f} GB/s")
        if rows:
            ab_table(rows, alts, any_axes(rows, copy, dev), copy, win, floor)
        return
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
    del x, xb, xi, xp, sq, sqb, sr, lc, m
    if rows:
        ab_table(rows, alts, any_axes(rows, copy, dev), copy, win, floor)


if __name__ == "__main__":
    main()
