#!/usr/bin/env python3
"""PyTorch side of bench_attention: the same cases through
torch.nn.functional.scaled_dot_product_attention with the FLASH_ATTENTION and
CUDNN_ATTENTION backends (f32: EFFICIENT_ATTENTION, the only fused one that
takes f32), timed the same way (CUDA events around back-to-back calls, median
of 7 repeats), printed next to kgen's figures from the CSV bench_attention
wrote. TFLOP/s = 4 B H Sq Sk D, halved when causal.

usage: KG_BENCH_CSV=a.csv build/bench/bench_attention && python3 bench/torch_attention.py a.csv

Rows attention_gqa (q [B,Hq,Sq,D], k/v [B,Hkv,Sk,D]) run with enable_gqa=True
(K/V read once per KV head, as kgen does); causal with Sq != Sk uses
torch.nn.attention.bias.causal_lower_right (kgen's bottom-right rule). A
backend that refuses a case prints nan.
"""
import csv
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel

from torch_common import Results, sdpa_backends, time_us

try:
    from torch.nn.attention.bias import causal_lower_right
except ImportError:  # older torch
    causal_lower_right = None


def gqa_rows(rows, results):
    print(f"{'case':44} {'kgen us':>8} {'flash':>8} {'cudnn':>8} {'kg/fl':>6} {'kg/cd':>6} {'kgTF':>6} {'KV%copy':>7}"
          "   (ratio = speedup of kgen)")
    worst = {}
    for dn, B, Hq, Hkv, Sq, Sk, D, causal, kg_us, kg_tf, kg_gbps, copy in rows:
        dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dn]
        q = torch.empty(B, Hq, Sq, D, device="cuda", dtype=dt).uniform_(-1, 1)
        k, v = (torch.empty(B, Hkv, Sk, D, device="cuda", dtype=dt).uniform_(-1, 1) for _ in range(2))
        kw = {"enable_gqa": Hq != Hkv}
        if causal and Sq == Sk:
            kw["is_causal"] = True
        elif causal:
            kw["attn_mask"] = causal_lower_right(Sq, Sk) if causal_lower_right else None
        flop = kg_tf * kg_us * 1e6
        inner = 5 if flop > 1e11 else 20 if flop > 1e9 else 200
        res = {}
        backs = sdpa_backends(dn)
        for name, be in backs:
            try:
                with sdpa_kernel([be]):
                    fn = lambda: F.scaled_dot_product_attention(q, k, v, **kw)
                    fn()
                    res[name] = time_us(fn, inner, reps=7)
            except (RuntimeError, TypeError):
                res[name] = None
        nan = float("nan")
        f_us, c_us = res["flash"] or nan, res["cudnn"] or nan
        case = f"{dn} B{B} Hq{Hq} Hkv{Hkv} Sq{Sq} Sk{Sk} D{D}{' causal' if causal else ''}"
        for name, us in res.items():
            if us:
                name_ = "attention" if Hq == Hkv and Sq == Sk else f"attention Hkv {Hkv} Sk {Sk}"
                results.add("attention", name_ + (" causal" if causal else ""), dn, [B, Hq, Sq, D], us,
                            tflops=flop / (us * 1e6),
                            backend="efficient" if dn == "f32" and name == "flash" else name)
        print(f"{case:44} {kg_us:8.1f} {f_us:8.1f} {c_us:8.1f} {f_us / kg_us:6.2f} {c_us / kg_us:6.2f} "
              f"{kg_tf:6.1f} {100 * kg_gbps / copy:6.0f}%")
        kind = "decode" if Sq <= 16 else "prefill"
        for nm, us in (("flash", f_us), ("cudnn", c_us)):
            r = us / kg_us
            if r == r and (worst.get((kind, nm)) is None or r < worst[(kind, nm)][0]):
                worst[(kind, nm)] = (r, case)
        del q, k, v
    for (kind, nm), (r, case) in sorted(worst.items()):
        print(f"# worst {kind} speedup over {nm}: {r:.2f} ({case})")


def main():
    rows, grows = [], []
    with open(sys.argv[1]) as f:
        for row in csv.reader(f):
            if row and row[0] == "attention":
                rows.append((row[1], *map(int, row[2:7]), float(row[7]), float(row[8])))
            if row and row[0] == "attention_gqa":
                grows.append((row[1], *map(int, row[2:9]), *map(float, row[9:13])))
    dts = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    results = Results()
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}")
    print(f"{'case':34} {'kgen':>8} {'flash':>8} {'cudnn':>8} {'kg/flash':>8} {'kg/cudnn':>8}   (TFLOP/s; us for small)")
    for dn, B, H, S, D, causal, kg_us, kg_tf in rows:
        dt = dts[dn]
        q, k, v = (torch.empty(B, H, S, D, device="cuda", dtype=dt).uniform_(-1, 1) for _ in range(3))
        flop = 4.0 * B * H * S * S * D / (2 if causal else 1)
        inner = 5 if flop > 1e11 else 20 if flop > 1e9 else 200
        res = {}
        backs = sdpa_backends(dn)
        for name, be in backs:
            try:
                with sdpa_kernel([be]):
                    fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
                    fn()
                    res[name] = time_us(fn, inner, reps=7)
            except RuntimeError:
                res[name] = None
        def tf(us):
            return flop / (us * 1e6) if us else float("nan")
        case = f"{dn} B{B} H{H} S{S} D{D}{' causal' if causal else ''}"
        for name, us in res.items():
            if us:
                results.add("attention", "attention causal" if causal else "attention", dn, [B, H, S, D], us,
                            tflops=tf(us), backend="efficient" if dn == "f32" and name == "flash" else name)
        if flop < 1e9:
            f_us, c_us = res["flash"], res["cudnn"]
            print(f"{case:34} {kg_us:7.1f}u {f_us or float('nan'):7.1f}u {c_us or float('nan'):7.1f}u "
                  f"{(f_us or float('nan')) / kg_us:8.2f} {(c_us or float('nan')) / kg_us:8.2f}   (us; ratio = speedup)")
        else:
            print(f"{case:34} {kg_tf:8.1f} {tf(res['flash']):8.1f} {tf(res['cudnn']):8.1f} "
                  f"{kg_tf / tf(res['flash']):8.2f} {kg_tf / tf(res['cudnn']):8.2f}")
        del q, k, v
    if grows:
        gqa_rows(grows, results)
    results.save()
    print("# f32 'flash' column is PyTorch's EFFICIENT_ATTENTION (FLASH_ATTENTION has no f32)")


if __name__ == "__main__":
    main()
