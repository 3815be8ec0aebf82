#!/usr/bin/env python3
"""PyTorch side of bench_attention_bwd: the backward of the same cases through
torch.nn.functional.scaled_dot_product_attention with the FLASH_ATTENTION and
CUDNN_ATTENTION backends (f32: EFFICIENT_ATTENTION, the only fused one that
takes f32), timed the same way (CUDA events around back-to-back
torch.autograd.grad calls on a retained graph, median of 5 repeats),
printed next to kgen's figures from the CSV bench_attention_bwd wrote.
TFLOP/s = 2.5 x 4 B H Sq Sk D, halved when causal. The seeded sweep's rows
(KG_BENCH_SWEEP, family attention_bwd_sweep: odd lengths, GQA through
enable_gqa) are printed after, with the worst ratio per column.

KG_TORCH_BACKENDS=flash (or cudnn) times only that column's backend (the
other prints nan), for short runs.

KG_TORCH_INPROC=<rounds> times, instead, kgen (its Python package,
runtime/python, default tuning) and PyTorch's flash (f32: efficient) IN THIS
PROCESS on the same tensors, alternately: rounds of (kgen, flash) and
(flash, kgen) in turn, each timing `inner` back-to-back calls between CUDA
events, so that the GPU's clock and temperature drift over a run falls on
both alike; per case the medians, their ratio and the rounds kgen won. Only
the CSV's shapes are used (its kgen figures come from another process).

usage: KG_BENCH_CSV=a.csv build/bench/bench_attention_bwd && python3 bench/torch_attention_bwd.py a.csv
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel

from torch_common import Results, csv_rows, sdpa_backends, time_us


def bench_backends(dn, B, Hq, Hkv, S, D, causal):
    """{column: microseconds or None} of PyTorch's backward on one shape."""
    dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dn]
    q = torch.empty(B, Hq, S, D, device="cuda", dtype=dt).uniform_(-1, 1).requires_grad_()
    k, v = (torch.empty(B, Hkv, S, D, device="cuda", dtype=dt).uniform_(-1, 1).requires_grad_() for _ in range(2))
    dout = torch.empty(B, Hq, S, D, device="cuda", dtype=dt).uniform_(-1, 1)
    flop = 2.5 * 4.0 * B * Hq * S * S * D / (2 if causal else 1)
    inner = 3 if flop > 1e12 else 10 if flop > 1e10 else 100
    res, expanded = {}, []
    for name, be in sdpa_backends(dn):
        res[name] = None
        # GQA: enable_gqa where the backend takes it, else k and v repeated
        # per query head inside the graph (the backward then sums them back)
        for expand in ([False, True] if Hq != Hkv else [False]):
            try:
                with sdpa_kernel([be]):
                    if expand:
                        kk, vv = k.repeat_interleave(Hq // Hkv, 1), v.repeat_interleave(Hq // Hkv, 1)
                        out = F.scaled_dot_product_attention(q, kk, vv, is_causal=bool(causal))
                    else:
                        out = F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal), enable_gqa=Hq != Hkv)
                    fn = lambda: torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
                    fn()
                    res[name] = time_us(fn, inner, reps=5)
                del out
                if expand:
                    expanded.append(name)
                break
            except RuntimeError:
                pass
    del q, k, v, dout
    return res, flop, expanded


def kgen_module():
    """kgen's Python package from runtime/python (it loads build/libkgen.so)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runtime", "python"))
    import kgen
    return kgen


def events_us(fn, inner):
    """Device time a call of inner back-to-back calls, microseconds."""
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(inner):
        fn()
    e1.record()
    e1.synchronize()
    return 1000.0 * e0.elapsed_time(e1) / inner


def inproc(path, rounds):
    """kgen and PyTorch alternately in this process on the CSV's shapes."""
    kg = kgen_module()
    dts = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    print(f"# attention backward in one process, {torch.cuda.get_device_name()} torch {torch.__version__}: "
          f"kgen (Python package, default tuning) and flash (f32: efficient) alternately, {rounds} rounds")
    print(f"{'case':34} {'kgen us':>10} {'flash us':>10} {'kgen':>8} {'flash':>8} {'kg/flash':>8} {'kg won':>7}"
          f"   (TFLOP/s, medians)")
    seen = set()
    for row in csv_rows(path, "attention_bwd"):
        dn = row[1]
        B, H, S, D, causal = map(int, row[2:7])
        if (dn, B, H, S, D, causal) in seen:
            continue
        seen.add((dn, B, H, S, D, causal))
        dt = dts[dn]
        q, k, v, dout = (torch.empty(B, H, S, D, device="cuda", dtype=dt).uniform_(-1, 1) for _ in range(4))
        out = torch.empty_like(q)
        lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
        kg.attention(q, k, v, out=out, lse=lse, causal=bool(causal))
        dq, dk, dv = (torch.empty_like(t) for t in (q, k, v))
        fk = lambda: kg.attention_backward(dout, q, k, v, out, lse, dq=dq, dk=dk, dv=dv, causal=bool(causal))
        qg, kgr, vg = (t.detach().requires_grad_() for t in (q, k, v))
        with sdpa_kernel([sdpa_backends(dn)[0][1]]):
            o = F.scaled_dot_product_attention(qg, kgr, vg, is_causal=bool(causal))
        ft = lambda: torch.autograd.grad(o, (qg, kgr, vg), dout, retain_graph=True)
        flop = 2.5 * 4.0 * B * H * S * S * D / (2 if causal else 1)
        inner = 3 if flop > 1e12 else 10 if flop > 1e10 else 100
        fk()
        ft()
        ks, ts, won = [], [], 0
        for r in range(rounds):
            if r % 2 == 0:
                a = events_us(fk, inner)
                b = events_us(ft, inner)
            else:
                b = events_us(ft, inner)
                a = events_us(fk, inner)
            ks.append(a)
            ts.append(b)
            won += a < b
        ks.sort()
        ts.sort()
        ku, tu = (ks[(rounds - 1) // 2] + ks[rounds // 2]) / 2, (ts[(rounds - 1) // 2] + ts[rounds // 2]) / 2
        case = f"{dn} B{B} H{H} S{S} D{D}{' causal' if causal else ''}"
        print(f"{case:34} {ku:10.1f} {tu:10.1f} {flop / ku / 1e6:8.1f} {flop / tu / 1e6:8.1f} {tu / ku:8.3f} "
              f"{won:3d}/{rounds}", flush=True)
        del q, k, v, dout, out, lse, dq, dk, dv, qg, kgr, vg, o
        torch.cuda.empty_cache()


def sweep(path):
    """The seeded sweep's rows beside PyTorch; the worst ratio per column."""
    rows = csv_rows(path, "attention_bwd_sweep")
    if not rows:
        return
    print(f"# seeded sweep: {'case':44} {'tune':>12} {'kgen':>8} {'flash':>8} {'cudnn':>8} {'kg/flash':>8} "
          f"{'kg/cudnn':>8}   (TFLOP/s; f32: flash column = efficient)")
    worst, seen = {}, {}
    for row in rows:
        dn = row[1]
        B, Hq, Hkv, S, D, causal = map(int, row[2:8])
        kg_tf, tune = float(row[9]), row[10] if len(row) > 10 else "default"
        # the same shape under several tunings: PyTorch runs once
        key = (dn, B, Hq, Hkv, S, D, causal)
        if key not in seen:
            seen[key] = bench_backends(dn, B, Hq, Hkv, S, D, causal)
        res, flop, expanded = seen[key]

        def tf(us):
            return flop / (us * 1e6) if us else float("nan")
        case = f"{dn} B{B} Hq{Hq} Hkv{Hkv} S{S} D{D}{' causal' if causal else ''}"
        r_f, r_c = kg_tf / tf(res["flash"]), kg_tf / tf(res["cudnn"])
        print(f"{case:58} {tune:>12} {kg_tf:8.1f} {tf(res['flash']):8.1f} {tf(res['cudnn']):8.1f} {r_f:8.2f} "
              f"{r_c:8.2f}" + (f"  (k, v repeated for {', '.join(expanded)})" if expanded else ""))
        for col, r in (("flash (f32: efficient)", r_f), ("cudnn", r_c)):
            key = (tune, col, "D64/128" if D in (64, 128) else "other D")
            if r == r and (key not in worst or r < worst[key][1]):
                worst[key] = (case, r)
    for (tune, col, dims), (case, r) in sorted(worst.items()):
        print(f"# sweep worst kgen ({tune}) / {col}, {dims}: {case}: {r:.2f}")


def main():
    if os.environ.get("KG_TORCH_INPROC"):
        inproc(sys.argv[1], max(2, int(os.environ["KG_TORCH_INPROC"])))
        return
    rows = [(row[1], *map(int, row[2:7]), float(row[7]), float(row[8]), row[9] if len(row) > 9 else "default")
            for row in csv_rows(sys.argv[1], "attention_bwd")]
    if not rows:
        sweep(sys.argv[1])
        return
    dts = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    results = Results()
    print(f"# attention backward, {torch.cuda.get_device_name()} torch {torch.__version__}")
    print(f"{'case':34} {'tune':>12} {'kgen':>8} {'flash':>8} {'cudnn':>8} {'kg/flash':>8} {'kg/cudnn':>8}   (TFLOP/s)")
    worst = None
    # the same case under several tunings (KG_ATTNB_TUNE): torch runs once
    cases = {}
    for r in rows:
        cases.setdefault(r[:6], []).append(r[6:])
    for (dn, B, H, S, D, causal), kg in cases.items():
        dt = dts[dn]
        q, k, v = (torch.empty(B, H, S, D, device="cuda", dtype=dt).uniform_(-1, 1).requires_grad_()
                   for _ in range(3))
        dout = torch.empty(B, H, S, D, device="cuda", dtype=dt).uniform_(-1, 1)
        flop = 2.5 * 4.0 * B * H * S * S * D / (2 if causal else 1)
        inner = 3 if flop > 1e12 else 10 if flop > 1e10 else 100
        res = {}
        only = os.environ.get("KG_TORCH_BACKENDS")
        backs = [(n, be) for n, be in sdpa_backends(dn) if not only or n in only.split(",")]
        for n, _ in sdpa_backends(dn):
            res[n] = None
        for name, be in backs:
            try:
                with sdpa_kernel([be]):
                    out = F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
                    fn = lambda: torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
                    fn()
                    res[name] = time_us(fn, inner, reps=5)
                del out
            except RuntimeError:
                res[name] = None

        def tf(us):
            return flop / (us * 1e6) if us else float("nan")
        case = f"{dn} B{B} H{H} S{S} D{D}{' causal' if causal else ''}"
        for name, us in res.items():
            if us:
                results.add("attention_bwd", "attention backward causal" if causal else "attention backward", dn,
                            [B, H, S, D], us, tflops=tf(us), backend="efficient" if dn == "f32" and name == "flash"
                            else name)
        for kg_us, kg_tf, tune in kg:
            r_f, r_c = kg_tf / tf(res["flash"]), kg_tf / tf(res["cudnn"])
            print(f"{case:34} {tune:>12} {kg_tf:8.1f} {tf(res['flash']):8.1f} {tf(res['cudnn']):8.1f} {r_f:8.2f} "
                  f"{r_c:8.2f}")
            if tune == "default" and (worst is None or r_f < worst[1]):
                worst = (case, r_f)
        del q, k, v, dout
    results.save()
    if worst:
        print(f"# worst kgen (default tuning) / flash (f32: / efficient): {worst[0]}: {worst[1]:.2f}")
    print("# f32 'flash' column is PyTorch's EFFICIENT_ATTENTION (FLASH_ATTENTION has no f32)")
    sweep(sys.argv[1])


if __name__ == "__main__":
    main()
