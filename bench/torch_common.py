"""Timing shared by the PyTorch side-by-side scripts (bench/torch_*.py), the
same method as bench/bench_common.c: CUDA events around `inner` back-to-back
calls after a warm-up, median of `reps` repeats; host time per call on the
host's clock in batches that stay below the launch queue's depth."""
import time

import torch


def time_us(fn, inner, reps=15):
    """Median device time per call, microseconds."""
    for _ in range(inner):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
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
