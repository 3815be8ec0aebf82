#!/usr/bin/env python3
"""A/B table of bench_elementwise's permutation rows timed with
KG_EW_BENCH_ALT (the default choice and the alternative interleaved in one
process, best of KG_EW_BENCH_ALT_ROUNDS each): every row whose variant the
alternative changes, with both figures as % of the copy limit the bench
measured, the ratio (default time / alternative time: above 1 the
alternative is faster) and PyTorch's x.permute(p).contiguous() beside; the
rows it leaves alone (their ratios: the timing noise); each seeded sweep's
worst row, default and alternative; and the decision the rule below gives.

Rule (make the alternative the default): faster (ratio > --gain, default 1) on at least
--share of the changed rows, no changed row below --floor, and the sweeps'
worst case (the lowest % of copy over every sweep row, each side its own)
not worse: the alternative's at least --worst times the default's.

usage: python3 bench/perm_ab.py bench.log [more.log ...] [--dtype bf16] [--share 0.9]
       [--floor 0.97] [--worst 0.99] [--gain 1.0] [--no-torch]
"""
import argparse
import re
import sys

ROW = re.compile(r"^(?P<name>(?:copy|add) \S+ p[\d.]+(?: \[[^\]]+\])?)\s+(?P<dt>f32|f16|bf16)\s+(?P<n>\d+)\s+"
                 r"(?P<us>[\d.]+)\s+(?P<gbps>[\d.]+)\s+(?P<pc>[\d.]+)%\s+(?P<var>\S+)"
                 r"\s+\|\s+alt\s+(?P<aus>[\d.]+)\s+(?P<apc>[\d.]+)%\s+(?P<avar>\S+)\s+x(?P<x>[\d.]+)")
LIMIT = re.compile(r"device-to-device copy: (\d+) GB/s")


def torch_pct(name, dt, copy):
    """PyTorch's x.permute(p).contiguous() on the row's layout, % of copy."""
    import torch
    from torch_common import time_us
    words = name.split()
    shape = [int(v) for v in words[1].split("x")]
    perm = [int(v) for v in words[2][1:].split(".")]
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dt]
    a = torch.empty(shape, device="cuda", dtype=tdt).uniform_(-3, 3)
    x = a.permute(perm)
    us = time_us(lambda: x.contiguous(), 10)
    n = a.numel()
    del a, x
    return 100.0 * 2 * n * (2 if dt != "f32" else 4) / (us * 1e3) / copy


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log", nargs="+", help="bench_elementwise outputs (one process each)")
    ap.add_argument("--dtype", default=None, help="only rows of this dtype count for the rule (all are listed)")
    ap.add_argument("--share", type=float, default=0.9)
    ap.add_argument("--floor", type=float, default=0.97)
    ap.add_argument("--worst", type=float, default=0.99)
    ap.add_argument("--gain", type=float, default=1.0,
                    help="a changed row counts as faster above this ratio (default 1.0)")
    ap.add_argument("--no-torch", action="store_true")
    a = ap.parse_args()
    copy, rows = None, []
    for path in a.log:
        with open(path) as f:
            for line in f:
                m = LIMIT.search(line)
                if m and copy is None:
                    copy = float(m.group(1))
                m = ROW.match(line.rstrip("\n"))
                if m:
                    rows.append(m.groupdict())
    if not rows:
        print("perm_ab: no A/B rows in", " ".join(a.log))
        return 1
    changed = [r for r in rows if r["var"] != r["avar"] and r["name"].startswith("copy")]
    same = [r for r in rows if r["var"] == r["avar"]]
    use_torch = not a.no_torch and copy is not None
    print(f"copy limit {copy} GB/s; {len(rows)} A/B rows, {len(changed)} changed, {len(same)} unchanged")
    print(f"{'changed row':44} {'dtype':5} {'variant':15} {'default':>8} {'alt':>8} {'ratio':>7} "
          f"{'torch':>7}  row says")
    counted = []
    for r in changed:
        x = float(r["x"])
        tp = ""
        if use_torch:
            try:
                tp = f"{torch_pct(r['name'], r['dt'], copy):6.1f}%"
            except Exception as e:  # a row torch cannot run is reported, not fatal
                tp = "   err"
                print(f"  (torch: {e})", file=sys.stderr)
        says = "alt faster" if x > a.gain else "default faster" if x < 1.0 else f"level (x{a.gain} not reached)"
        if x < a.floor:
            says += f" (below {a.floor})"
        print(f"{r['name']:44} {r['dt']:5} {r['var'] + '->' + r['avar']:15} {float(r['pc']):7.1f}% "
              f"{float(r['apc']):7.1f}% x{x:.3f} {tp:>7}  {says}")
        if a.dtype is None or r["dt"] == a.dtype:
            counted.append(x)
    if same:
        xs = sorted(float(r["x"]) for r in same)
        print(f"unchanged rows (noise): {len(xs)}, ratio {xs[0]:.3f} .. {xs[-1]:.3f}, median {xs[len(xs) // 2]:.3f}")
    sweep = [r for r in rows if "sweep]" in r["name"]]
    ok_worst = True
    if sweep:
        wd = min(sweep, key=lambda r: float(r["pc"]))
        wa = min(sweep, key=lambda r: float(r["apc"]))
        ok_worst = float(wa["apc"]) >= a.worst * float(wd["pc"])
        print(f"sweep worst ({len(sweep)} rows): default {float(wd['pc']):.1f}% ({wd['dt']} {wd['name']}), "
              f"alt {float(wa['apc']):.1f}% ({wa['dt']} {wa['name']}): {'not worse' if ok_worst else 'WORSE'}")
    faster = sum(1 for x in counted if x > a.gain)
    share = faster / len(counted) if counted else 0.0
    low = min(counted) if counted else 0.0
    ok_share, ok_floor = bool(counted) and share >= a.share, bool(counted) and low >= a.floor
    print(f"rule: faster (x > {a.gain}) on {faster}/{len(counted)} changed rows ({100 * share:.0f}%, "
          f"need {100 * a.share:.0f}%): "
          f"{'ok' if ok_share else 'FAIL'}; lowest ratio {low:.3f} (need {a.floor}): {'ok' if ok_floor else 'FAIL'}; "
          f"sweep worst: {'ok' if ok_worst else 'FAIL'}")
    print("DECISION:", "make the alternative the default" if ok_share and ok_floor and ok_worst
          else "keep the default (the alternative stays forced-only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
