"""Timing shared by the PyTorch side-by-side scripts (bench/torch_*.py), the
same method as bench/bench_common.c: CUDA events around `inner` back-to-back
calls after a warm-up, median of `reps` repeats; host time per call on the
host's clock in batches that stay below the launch queue's depth;
Results, which adds PyTorch's figures to kgen's cases in build/bench.json;
reading a bench program's CSV; the fused attention backends compared with."""
import csv
import json
import os
import time

import torch


def csv_rows(path, family):
    """The rows of a bench program's CSV ($KG_BENCH_CSV) whose first column
    is family, as lists of strings."""
    with open(path) as f:
        return [row for row in csv.reader(f) if row and row[0] == family]


def sdpa_backends(dtype_name):
    """The fused scaled_dot_product_attention backends kgen's attention is
    compared with, as (column, backend): flash and cuDNN; for f32, which the
    flash backend does not take, the memory-efficient one in flash's column."""
    from torch.nn.attention import SDPBackend
    first = SDPBackend.EFFICIENT_ATTENTION if dtype_name == "f32" else SDPBackend.FLASH_ATTENTION
    return [("flash", first), ("cudnn", SDPBackend.CUDNN_ATTENTION)]


def time_us(fn, inner, reps=15, spin=False):
    """Median device time per call, microseconds. spin: the GPU is held in a
    spin (torch.cuda._sleep, about 0.25 ms per call at 2 GHz) while the host
    queues the inner calls, so a caller's host time (a Python wrapper's
    ~0.1 ms a call) adds no idle gap on the GPU."""
    for _ in range(inner):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if spin:
            torch.cuda._sleep(int(5e5 * inner))
        e0.record()
        for _ in range(inner):
            fn()
        e1.record()
        e1.synchronize()
        ts.append(1000.0 * e0.elapsed_time(e1) / inner)
    ts.sort()
    return ts[len(ts) // 2]


def host_us(fn, inner=1000, reps=15):
    """Median host time per call, microseconds."""
    per = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        per.append((time.perf_counter() - t0) / inner * 1e6)
    torch.cuda.synchronize()
    per.sort()
    return per[len(per) // 2]


class Results:
    """build/bench.json ($KG_BENCH_JSON): kgen's cases, one schema for every
    family, written by the bench programs through bench/run-all.sh. add()
    puts PyTorch's figures into the matching case's "torch" column, keyed by
    backend ("eager" for a plain PyTorch op, "flash", "cudnn", ...); a case
    kgen did not record is appended with kgen's fields null. save() writes
    the file back."""

    def __init__(self, path=None):
        self.path = path or os.environ.get("KG_BENCH_JSON") or os.path.join("build", "bench.json")
        self.rows = []
        if os.path.exists(self.path):
            with open(self.path) as f:
                self.rows = json.load(f)
        copies = [r["gbps"] for r in self.rows if r["family"] == "limit" and r.get("gbps")]
        self.copy_gbps = copies[-1] if copies else None

    def add(self, family, case, dtype, shape, time_us, gbps=None, tflops=None, backend="eager"):
        """shape or dtype None: match on the other keys alone."""
        row = next((r for r in self.rows if r["family"] == family and r["case"] == case
                    and (dtype is None or r["dtype"] == dtype) and (shape is None or r["shape"] == list(shape))),
                   None)
        if row is None:
            row = {"family": family, "case": case, "dtype": dtype, "shape": list(shape or []), "time_us": None,
                   "gbps": None, "tflops": None, "pct_of_limit": None, "limit": None, "note": "PyTorch only",
                   "gpu": torch.cuda.get_device_name(), "sm": None, "date": None, "torch": {}}
            self.rows.append(row)
        pct = 100.0 * gbps / self.copy_gbps if gbps and self.copy_gbps else None
        row.setdefault("torch", {})[backend] = {
            "time_us": time_us, "gbps": gbps, "tflops": tflops, "pct_of_limit": pct,
            "version": torch.__version__}

    def save(self):
        # a script run from outside the repository root (no build/ there)
        # writes its own file rather than failing after it printed
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            f.write("[\n" + ",\n".join(json.dumps(r) for r in self.rows) + "\n]\n")
        os.replace(tmp, self.path)
