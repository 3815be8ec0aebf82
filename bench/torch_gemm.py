#!/usr/bin/env python3
"""PyTorch side of bench_gemm: the same shapes and dtypes, timed the same way
(CUDA events around back-to-back calls, median of repeats after warm-up, about
2 ms per repeat), printed next to kgen's figures from the CSV bench_gemm wrote.
Inputs are uniform in [-1, 1). f32 runs with TF32 off; "tf32" with it on
(torch.backends.cuda.matmul.allow_tf32), as kg_set_tf32 does.

Rows where kgen's call takes at least 150 us are also timed IN THIS PROCESS,
kgen through its Python package (runtime/python, on the same tensors) and
torch.matmul alternately, five rounds each: clocks and power drift between
processes, and this ratio is the one that compares the two libraries. The
GPU spins while the host queues each batch of calls, so the wrapper's host
time is not counted.
(Below 150 us the Python wrapper's host time would be what is measured.)

usage: KG_BENCH_CSV=b.csv build/bench/bench_gemm && python3 bench/torch_gemm.py b.csv
"""
import os
import sys

import torch
from torch_common import Results, csv_rows, time_us


def kgen_module():
    """kgen's Python package from runtime/python, or None where it does not load."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "runtime", "python"))
    try:
        import kgen
        return kgen
    except Exception as e:  # no library built: the in-process column is left out, and says why
        print("torch_gemm: kgen's Python package did not load (%s): no in-process column" % e)
        return None


def set_tf32(kgen, on):
    import ctypes
    fn = kgen._lib.kg_set_tf32
    fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]
    fn(kgen._context(torch.cuda.current_device()).handle, int(on))


def interleaved(fk, ft, est):
    """Median device time of fk and of ft, timed alternately in 5 rounds."""
    inner = max(1, min(40, int(3000.0 / max(est, 1.0))))
    ks, ts = [], []
    for _ in range(5):
        ts.append(time_us(ft, inner, 3, spin=True))
        ks.append(time_us(fk, inner, 3, spin=True))
    ks.sort()
    ts.sort()
    return ks[2], ts[2]


def main():
    rows = csv_rows(sys.argv[1], "gemm")
    if not rows:
        print("torch_gemm: no gemm rows in", sys.argv[1])
        return
    dts = {"f32": torch.float32, "tf32": torch.float32, "f64": torch.float64, "f16": torch.float16,
           "bf16": torch.bfloat16}
    dev = torch.device("cuda")
    out = []
    same = []
    kg = kgen_module()
    res = Results()
    for row in rows:
        name, label = row[1], row[2]
        batch, M, N, K = (int(x) for x in row[3:7])
        kg_us, kg_tf = float(row[7]), float(row[8])
        torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
        dt = dts[name]
        shp_a, shp_b = ([batch, M, K], [batch, K, N]) if batch > 1 else ([M, K], [K, N])
        a = torch.empty(shp_a, device=dev, dtype=dt).uniform_(-1, 1)
        b = torch.empty(shp_b, device=dev, dtype=dt).uniform_(-1, 1)
        c = torch.empty((batch, M, N) if batch > 1 else (M, N), device=dev, dtype=dt)
        fn = lambda: torch.matmul(a, b, out=c)
        est = time_us(fn, 1, 3)
        inner = max(1, min(2000, int(2000.0 / max(est, 1.0))))
        reps = 7 if est > 5000 else 15
        t = time_us(fn, inner, reps)
        flops = 2.0 * batch * M * N * K
        tf = flops / t / 1e6
        out.append((name, label, kg_us, kg_tf, t, tf, kg_tf / tf))
        res.add("gemm", "matmul " + name, None, [batch, M, N, K], t, tflops=tf)
        if kg is not None and kg_us >= 150.0:
            set_tf32(kg, name == "tf32")
            fk = lambda: kg.matmul(a, b, out=c)
            ku, tu = interleaved(fk, fn, t)
            same.append((name, label, ku, tu))
            set_tf32(kg, False)
        del a, b, c
        torch.cuda.empty_cache()
    torch.backends.cuda.matmul.allow_tf32 = False
    res.save()
    print(f"\n== GEMM: kgen vs PyTorch {torch.__version__} (same shapes; ratio = kgen TFLOP/s / torch TFLOP/s) ==")
    print(f"{'dtype':5} {'shape':16} {'kg us':>10} {'kg TF/s':>9} {'torch us':>10} {'torch TF/s':>10} {'ratio':>7}")
    for name, label, kus, ktf, tus, ttf, r in out:
        print(f"{name:5} {label:16} {kus:10.1f} {ktf:9.1f} {tus:10.1f} {ttf:10.1f} {r:7.3f}")
    if same:
        print("\n== GEMM in one process: kgen (Python package) and torch.matmul alternately, 5 rounds, "
              "same tensors (ratio = torch us / kgen us) ==")
        print(f"{'dtype':5} {'shape':16} {'kg us':>10} {'torch us':>10} {'ratio':>7}")
        for name, label, ku, tu in same:
            print(f"{name:5} {label:16} {ku:10.1f} {tu:10.1f} {tu / ku:7.3f}")


if __name__ == "__main__":
    main()
