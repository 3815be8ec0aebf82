"""PyTorch side of bench_attention_f64, for the same run: SDPA times for the
f64 shapes and the head dims kgen zero-pads (100, 8), and the same with a
head dim of stride 2."""
import torch
import torch.nn.functional as F


def t(fn, n=10):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(n):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / n * 1000


for D in (64, 128):
    q = torch.zeros(1, 8, 1024, D, dtype=torch.float64, device="cuda")
    us = t(lambda: F.scaled_dot_product_attention(q, q, q))
    print("torch f64 [1,8,1024,%d] | %.1f | %.2f TFLOP/s" % (D, us, 4 * 8 * 1024 * 1024 * D / us * 1e-6))
for dt, shape in ((torch.bfloat16, (4, 16, 2048, 100)), (torch.float16, (4, 4, 1024, 8)),
                  (torch.bfloat16, (4, 16, 2048, 128))):
    q = torch.zeros(*shape, dtype=dt, device="cuda")
    print("torch %s %s | %.1f" % (dt, list(shape), t(lambda: F.scaled_dot_product_attention(q, q, q))))
    qs = torch.zeros(*shape[:3], 2 * shape[3], dtype=dt, device="cuda")[..., ::2]
    print("torch %s %s head dim stride 2 | %.1f" % (dt, list(shape),
                                                   t(lambda: F.scaled_dot_product_attention(qs, qs, qs))))
