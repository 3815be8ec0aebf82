#!/usr/bin/env python3
"""The Python package on the GPU against PyTorch: every op family on torch
tensors (every element-wise op of the catalogue in f32, f16 and bf16 where it
takes them, broadcast and strided views, every reduction, matmul with its
epilogues, attention with GQA, causal, a mask and lse, attention backward
against autograd, every normalization
in four dtypes), kgen's errors as
kgen.Error, and the caller's current stream. The reference is PyTorch's own
op, with float64 where a low-precision result is compared (TESTING.md's
tolerances: torch.testing's defaults per dtype). Prints one line per check
and exits 1 if any failed; without a CUDA device it says so and exits 0.

usage: PYTHONPATH=runtime/python python3 tests/test_python_torch.py
"""
import sys
import time

import torch
import torch.nn.functional as F

import kgen

if not torch.cuda.is_available():
    print("test_python_torch: no CUDA device: nothing ran")
    sys.exit(0)

dev = torch.device("cuda")
torch.manual_seed(1234)
torch.backends.cuda.matmul.allow_tf32 = False
failures = []
counts = {}


def check(ok, family, what):
    counts[family] = counts.get(family, 0) + 1
    if not ok:
        failures.append(f"{family}: {what}")
        print(f"FAILED {family}: {what}")


def close(got, want, family, what, rtol=None, atol=None):
    try:
        torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True, check_dtype=True)
        check(True, family, what)
    except AssertionError as e:
        check(False, family, f"{what}: {str(e).splitlines()[0:4]}")


DT = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
      "i32": torch.int32, "i64": torch.int64, "u8": torch.uint8, "bool": torch.bool}
FLOATS = ("f32", "f16", "bf16", "f64")

# ---- element-wise: every op the library lists ------------------------------------
REF = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "maximum": torch.maximum,
    "minimum": torch.minimum, "pow": torch.pow, "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le,
    "gt": torch.gt, "ge": torch.ge, "where": torch.where, "neg": torch.neg, "abs": torch.abs, "sign": torch.sign,
    "relu": torch.relu, "exp": torch.exp, "log": torch.log, "sin": torch.sin, "cos": torch.cos, "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "gelu": F.gelu, "silu": F.silu,
    "floor": torch.floor, "ceil": torch.ceil, "round": torch.round, "reciprocal": torch.reciprocal,
    "copy": torch.clone,
}
POSITIVE = {"log", "sqrt", "rsqrt", "pow", "reciprocal"}


def ew_input(name, dt, shape):
    x = torch.empty(shape, device=dev, dtype=torch.float64).uniform_(-3, 3)
    if name in POSITIVE:
        x = x.abs() + 0.25
    if name == "div":
        x = x.sign() * (x.abs() + 0.5)
    return x.to(DT[dt])


ops = kgen.elementwise_ops
check(len(ops) > 30 and "add" in ops and "cast" in ops, "elementwise", f"the package lists {len(ops)} ops")
for name in ops:
    if name == "cast":
        for src, dst in (("f32", "bf16"), ("bf16", "f32"), ("f32", "i32"), ("f16", "f32"), ("i64", "f64")):
            x = (torch.randn(1000, 37, device=dev) * 100).to(DT[src])
            out = torch.empty(1000, 37, device=dev, dtype=DT[dst])
            kgen.cast(x, out=out)
            close(out, x.to(DT[dst]), "elementwise", f"cast {src}->{dst}")
        continue
    if name not in REF:
        check(False, "elementwise", f"{name}: no PyTorch reference in this test: add one to REF")
        continue
    arity = 3 if name == "where" else 2 if name in ("add", "sub", "mul", "div", "maximum", "minimum", "pow", "eq",
                                                     "ne", "lt", "le", "gt", "ge") else 1
    for dt in ("f32", "f16", "bf16"):
        shape = (513, 129)
        ins = [ew_input(name, dt, shape) for _ in range(arity)]
        if name == "where":
            ins[0] = torch.rand(shape, device=dev) < 0.5
        if name in ("eq", "ne", "lt", "le", "gt", "ge"):
            ins[1] = torch.where(torch.rand(shape, device=dev) < 0.3, ins[0], ins[1])
        want_dtype = torch.bool if name in ("eq", "ne", "lt", "le", "gt", "ge") else DT[dt]
        out = torch.empty(shape, device=dev, dtype=want_dtype)
        try:
            getattr(kgen, name)(*ins, out=out)
        except kgen.Error as e:
            check(False, "elementwise", f"{name} {dt}: {e.name}: {e}")
            continue
        # the reference: PyTorch in float64 rounded once to the dtype (kgen computes f16/bf16 in f32)
        ref_ins = [x if x.dtype == torch.bool else x.double() for x in ins]
        want = REF[name](*ref_ins).to(want_dtype)
        rtol, atol = (2e-6, 1e-5) if dt == "f32" else (None, None)
        close(out, want, "elementwise", f"{name} {dt}", rtol=rtol, atol=atol)

# broadcasting, a transposed view, an expanded (stride-0) view, in place
a = torch.randn(64, 96, device=dev)
b = torch.randn(96, device=dev)
bexp = b[:64].view(64, 1).expand(64, 96)
out = torch.empty(96, 64, device=dev)
kgen.add(a.t(), bexp.t(), out=out)
close(out, a.t() + bexp.t(), "elementwise", "add of a transposed and an expanded view")
o = a.clone()
kgen.mul(o, b, out=o)
close(o, a * b, "elementwise", "mul in place with a broadcast row")
x = torch.randn(10, 20, device=dev)[:, ::2]
y = torch.empty(10, 10, device=dev)
kgen.exp(x, out=y)
close(y, torch.exp(x), "elementwise", "exp of a strided slice")

# ---- reductions ---------------------------------------------------------------
# Tolerance (TESTING.md's rule): max|kgen - f64| <= 2 max|torch f32 - f64| + 1e-6 sum|x| over the slice.


def close_lp(got, lp, ref, floor, family, what):
    err = (got.double() - ref).abs().max().item()
    tol = 2 * (lp.double() - ref).abs().max().item() + floor
    check(err <= tol, family, f"{what}: max error {err:.3g}, tolerance {tol:.3g}")


x = torch.randn(37, 129, 65, device=dev)
xp = 1 + x * 0.01


def torch_reduce(name, t, dims, keep):
    if name == "prod":
        for d in sorted(dims, reverse=True):
            t = t.prod(d, keepdim=True)
        return t if keep else t.reshape([s for i, s in enumerate(t.shape) if i not in dims])
    fn = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin,
          "norm": torch.linalg.vector_norm}[name]
    return fn(t, dim=dims, keepdim=keep)


for name in ("sum", "mean", "prod", "norm", "max", "min"):
    for axes, keep in (([1], False), ([0, 2], True), ([-1], False), (None, False), ([2, 0], False)):
        dims = tuple(range(3)) if axes is None else tuple(sorted(a % 3 for a in axes))
        src = xp if name == "prod" else x
        ref = torch_reduce(name, src.double(), dims, keep)
        lp = torch_reduce(name, src, dims, keep)
        out = torch.full(ref.shape, float("nan"), device=dev)
        getattr(kgen, name)(src, axes=axes, keepdim=keep, out=out)
        floor = 1e-6 * torch_reduce("sum", src.double().abs(), dims, keep).max().item()
        close_lp(out, lp, ref, floor, "reduce", f"{name} axes={axes} keepdim={keep}")
xi = torch.randint(-1000, 1000, (300, 77), device=dev, dtype=torch.int32)
out = torch.empty(300, device=dev, dtype=torch.int64)
kgen.sum(xi, axes=[1], out=out)
close(out, xi.sum(1), "reduce", "sum of i32 into i64")
xb = torch.randn(4096, 512, device=dev).to(torch.bfloat16)
out = torch.empty(4096, device=dev, dtype=torch.bfloat16)
kgen.sum(xb, axes=[1], out=out)
close_lp(out, xb.sum(1), xb.double().sum(1), 1e-6 * xb.double().abs().sum(1).max().item(), "reduce",
         "sum bf16 dim 1")
idx = torch.empty(37, 65, device=dev, dtype=torch.int64)
kgen.argmax(x, axes=[1], indices=idx)
close(idx, x.argmax(1), "reduce", "argmax dim 1")
kgen.argmin(x, axes=[1], indices=idx)
close(idx, x.argmin(1), "reduce", "argmin dim 1")
vals = torch.empty(37, 129, device=dev)
idx = torch.empty(37, 129, device=dev, dtype=torch.int64)
kgen.max_with_indices(x, axes=[2], out=vals, indices=idx)
w = x.max(2)
close(vals, w.values, "reduce", "max_with_indices values")
close(idx, w.indices, "reduce", "max_with_indices indices")
kgen.min_with_indices(x, axes=[2], out=vals, indices=idx)
w = x.min(2)
close(vals, w.values, "reduce", "min_with_indices values")
close(idx, w.indices, "reduce", "min_with_indices indices")

# ---- matmul -------------------------------------------------------------------
for dt in ("f32", "f64", "f16", "bf16"):
    a = torch.randn(3, 200, 64, device=dev, dtype=DT[dt])
    b = torch.randn(64, 96, device=dev, dtype=DT[dt])
    out = torch.empty(3, 200, 96, device=dev, dtype=DT[dt])
    kgen.matmul(a, b, out=out)
    want = (a.double() @ b.double()).to(DT[dt])
    tol = {"f32": (1e-4, 1e-4), "f64": (1e-12, 1e-12), "f16": (2e-3, 2e-2), "bf16": (1.6e-2, 1e-1)}[dt]
    close(out, want, "matmul", f"{dt} [3,200,64] @ [64,96]", *tol)
a = torch.randn(128, 256, device=dev, dtype=torch.bfloat16)
b = torch.randn(512, 256, device=dev, dtype=torch.bfloat16)
bias = torch.randn(512, device=dev, dtype=torch.bfloat16)
for epi, fn in (("none", lambda z: z), ("relu", torch.relu), ("gelu_tanh", lambda z: F.gelu(z, approximate="tanh"))):
    out = torch.empty(128, 512, device=dev, dtype=torch.bfloat16)
    kgen.matmul(a, b.t(), out=out, bias=bias, epilogue=epi)
    want = fn(a.double() @ b.double().t() + bias.double()).to(torch.bfloat16)
    close(out, want, "matmul", f"bf16 linear layer (b transposed) + bias, epilogue {epi}", 3e-2, 2e-1)

# ---- attention ----------------------------------------------------------------
# Tolerance (TESTING.md): max|kgen - f64| <= 2 max|PyTorch's SDPA in the dtype - f64| + atol of the dtype.
ATOL = {"f32": 1e-5, "f16": 1e-5, "bf16": 1e-5}
for dt, D, causal, hkv, sq, sk in (("bf16", 128, False, 8, 512, 512), ("f16", 64, True, 2, 256, 384),
                                  ("f32", 64, False, 4, 100, 130), ("bf16", 64, True, 1, 1024, 1024),
                                  ("f16", 256, False, 8, 200, 300), ("bf16", 32, True, 4, 300, 200)):
    q = torch.randn(2, 8, sq, D, device=dev, dtype=DT[dt])
    k = torch.randn(2, hkv, sk, D, device=dev, dtype=DT[dt])
    v = torch.randn(2, hkv, sk, D, device=dev, dtype=DT[dt])
    out = torch.full_like(q, float("nan"))
    lse = torch.full((2, 8, sq), float("nan"), device=dev, dtype=torch.float32)
    kgen.attention(q, k, v, out=out, lse=lse, causal=causal)
    kr = k.repeat_interleave(8 // hkv, dim=1)
    vr = v.repeat_interleave(8 // hkv, dim=1)
    mask = None
    if causal:
        i = torch.arange(sq, device=dev).view(-1, 1)
        j = torch.arange(sk, device=dev).view(1, -1)
        mask = torch.where(j > i + sk - sq, float("-inf"), 0.0)
    s = q.double() @ kr.double().transpose(-1, -2) / D ** 0.5 + (0 if mask is None else mask.double())
    ref = torch.softmax(s, -1).nan_to_num(0) @ vr.double()
    lp = F.scaled_dot_product_attention(q, kr, vr, attn_mask=None if mask is None else mask.to(DT[dt]))
    what = f"{dt} D{D} Hq8 Hkv{hkv} Sq{sq} Sk{sk} causal={causal}"
    close_lp(out, lp.nan_to_num(0), ref, ATOL[dt], "attention", what)
    lse_ref = torch.logsumexp(s, -1)
    full = torch.isfinite(lse_ref)
    check(bool(torch.equal(torch.isneginf(lse), ~full)), "attention", f"{what}: lse -inf exactly on empty rows")
    close(lse[full].double(), lse_ref[full], "attention", f"{what}: lse", 1e-4, 1e-4)
q = torch.randn(1, 4, 64, 64, device=dev, dtype=torch.bfloat16)
kv = torch.randn(1, 4, 96, 64, device=dev, dtype=torch.bfloat16)
mask = torch.where(torch.rand(1, 1, 64, 96, device=dev) < 0.2, float("-inf"), 0.0).float()
out = torch.empty_like(q)
kgen.attention(q, kv, kv, out=out, mask=mask, scale=0.1)
ref = F.scaled_dot_product_attention(q.double(), kv.double(), kv.double(), attn_mask=mask.double(), scale=0.1)
lp = F.scaled_dot_product_attention(q, kv, kv, attn_mask=mask.to(torch.bfloat16), scale=0.1)
close_lp(out, lp, ref, 1e-5, "attention", "bf16 with an additive mask and scale 0.1")

# ---- attention backward -----------------------------------------------------------
# Reference: autograd of the same math in f64; the rule as the forward's, with
# PyTorch's own backward in the dtype as the low-precision reference.
if hasattr(kgen, "attention_backward"):
    for dt, D, causal, hkv, sq, sk in (("bf16", 64, True, 2, 256, 256), ("f16", 128, False, 4, 128, 200),
                                      ("f32", 64, True, 1, 100, 130), ("bf16", 128, False, 4, 300, 300)):
        q = torch.randn(2, 4, sq, D, device=dev, dtype=DT[dt])
        k = torch.randn(2, hkv, sk, D, device=dev, dtype=DT[dt])
        v = torch.randn(2, hkv, sk, D, device=dev, dtype=DT[dt])
        dout = torch.randn(2, 4, sq, D, device=dev, dtype=DT[dt])
        out = torch.empty_like(q)
        lse = torch.empty(2, 4, sq, device=dev, dtype=torch.float32)
        kgen.attention(q, k, v, out=out, lse=lse, causal=causal)
        dq, dk, dv = (torch.full_like(t, float("nan")) for t in (q, k, v))
        kgen.attention_backward(dout, q, k, v, out, lse, dq=dq, dk=dk, dv=dv, causal=causal)
        mask = torch.zeros(sq, sk, device=dev)
        if causal:
            i = torch.arange(sq, device=dev).view(-1, 1)
            j = torch.arange(sk, device=dev).view(1, -1)
            mask = torch.where(j > i + sk - sq, float("-inf"), 0.0)

        def grads(qq, kk, vv, in_dtype):
            qq, kk, vv = (t.detach().clone().requires_grad_(True) for t in (qq, kk, vv))
            kr, vr = kk.repeat_interleave(4 // hkv, dim=1), vv.repeat_interleave(4 // hkv, dim=1)
            o = F.scaled_dot_product_attention(qq, kr, vr, attn_mask=mask.to(in_dtype))
            o.backward(dout.to(in_dtype))
            return qq.grad, kk.grad, vv.grad

        ref = grads(q.double(), k.double(), v.double(), torch.float64)
        lp = grads(q, k, v, DT[dt])
        what = f"{dt} D{D} Hq4 Hkv{hkv} Sq{sq} Sk{sk} causal={causal}"
        for name, got, l, r in zip(("dq", "dk", "dv"), (dq, dk, dv), lp, ref):
            close_lp(got, l, r, 1e-5, "attention_bwd", f"{what} {name}")
else:
    check(False, "attention_bwd", "this library has no attention backward")

# ---- normalization -----------------------------------------------------------------
# Tolerance (TESTING.md): as element-wise for the output dtype, reference in f64.
if hasattr(kgen, "softmax"):
    for dt in ("f32", "f16", "bf16", "f64"):
        x = (torch.randn(33, 1000, device=dev) * 3).to(DT[dt])
        xd = x.double()
        # row statistics sum 1000 values: f32 accumulation, not one rounding
        stol = (1e-10, 1e-10) if dt == "f64" else (1e-5, 1e-5)
        for name, ref in (("softmax", torch.softmax), ("log_softmax", torch.log_softmax)):
            for axis in (-1, 0):
                out = torch.full_like(x, float("nan"))
                getattr(kgen, name)(x, axis=axis, out=out)
                close(out, ref(xd, axis).to(DT[dt]), "norm", f"{name} {dt} axis {axis}")
        out = torch.empty(33, 1, device=dev, dtype=DT[dt])
        kgen.logsumexp(x, axes=[1], keepdim=True, out=out)
        close(out, torch.logsumexp(xd, 1, keepdim=True).to(DT[dt]), "norm", f"logsumexp {dt}",
              *(stol if dt in ("f32", "f64") else (None, None)))
        w = torch.randn(1000, device=dev, dtype=DT[dt])
        b = torch.randn(1000, device=dev, dtype=DT[dt])
        out = torch.full_like(x, float("nan"))
        stat = torch.float64 if dt == "f64" else torch.float32
        mean = torch.empty(33, device=dev, dtype=stat)
        rstd = torch.empty(33, device=dev, dtype=stat)
        kgen.layer_norm(x, k=1, weight=w, bias=b, eps=1e-5, out=out, mean=mean, rstd=rstd)
        want = F.layer_norm(xd, (1000,), w.double(), b.double(), 1e-5)
        close(out, want.to(DT[dt]), "norm", f"layer_norm {dt}")
        close(mean, xd.mean(1).to(stat), "norm", f"layer_norm {dt} mean", *stol)
        close(rstd, (xd.var(1, unbiased=False) + 1e-5).rsqrt().to(stat), "norm", f"layer_norm {dt} rstd", *stol)
        out = torch.full_like(x, float("nan"))
        kgen.rms_norm(x, weight=w, eps=1e-6, out=out)
        rms = lambda h: h * (h.pow(2).mean(-1, keepdim=True) + 1e-6).rsqrt() * w.double()
        close(out, rms(xd).to(DT[dt]), "norm", f"rms_norm {dt}")
        res = torch.randn_like(x)
        res0 = res.clone()
        kgen.rms_norm_residual(res, x, weight=w, eps=1e-6, out=out)
        h = (res0.double() + xd).to(DT[dt])
        close(res, h, "norm", f"rms_norm_residual {dt}: residual += x")
        close(out, rms(h.double()).to(DT[dt]), "norm", f"rms_norm_residual {dt}")
    x = torch.randn(8, 64, 50, device=dev).transpose(1, 2)  # a strided, permuted input
    out = torch.empty(8, 50, 64, device=dev)
    kgen.softmax(x, axis=1, out=out)
    close(out, torch.softmax(x.double(), 1).float(), "norm", "softmax along a strided axis")
else:
    check(False, "norm", "this library has no normalization family")

# ---- errors, streams ------------------------------------------------------------
try:
    kgen.add(torch.zeros(2, 3, device=dev), torch.zeros(4, device=dev), out=torch.empty(2, 3, device=dev))
    check(False, "errors", "a shape mismatch raised nothing")
except kgen.Error as e:
    check(e.name == "KG_ERR_SHAPE" and str(e) == "shape mismatch: a is [2,3], b is [4] (dim -1: 3 vs 4 do not "
          "broadcast)", "errors", f"shape mismatch message: {e.name}: {e}")
try:
    kgen.neg(torch.zeros(4), out=torch.empty(4, device=dev))
    check(False, "errors", "a CPU tensor raised nothing")
except kgen.Error as e:
    check(e.name == "KG_ERR_INVALID_ARGUMENT" and "CPU" in str(e), "errors", f"CPU tensor: {e}")

s = torch.cuda.Stream()
x = torch.zeros(1 << 24, device=dev)
y = torch.empty_like(x)
torch.cuda.synchronize()
with torch.cuda.stream(s):
    torch.cuda._sleep(50_000_000)  # keeps the side stream busy, so a kernel on another stream would race ahead
    x.fill_(1.0)
    kgen.neg(x, out=y)
s.synchronize()
check(bool((y == -1).all()), "streams", "kgen.neg runs on torch's current stream, after the fill it follows")

# ---- torch tensors without DLPack (the wrapper's fast path) --------------------
plain = torch.arange(24, device=dev, dtype=torch.float32).reshape(4, 6)
check(kgen._torch_tensor(plain, plain.get_device()) is not None, "fast path", "a plain CUDA tensor is read directly")
for what, t in (("requires grad", torch.zeros(3, device=dev, requires_grad=True)), ("CPU", torch.zeros(3)),
                ("int16", torch.zeros(3, device=dev, dtype=torch.int16)),
                ("a subclass", torch.nn.Parameter(torch.zeros(3, device=dev), requires_grad=False)),
                ("9 dims", torch.zeros([1] * 9, device=dev))):
    check(kgen._torch_tensor(t, 0) is None, "fast path", f"{what}: left to DLPack")
views = {"offset slice": plain[1:, 2:], "transpose": plain.t(), "expanded": torch.arange(6., device=dev).expand(4, 6),
         "0-d": torch.tensor(2.5, device=dev), "empty": plain[:0], "step": plain[::2, ::3]}
for what, v in views.items():
    other = torch.full_like(v, 0.5)
    got = torch.empty_like(v)
    kgen.add(v, other, out=got)
    check(torch.equal(got, v + other), "fast path", f"add of a {what} view: exact")
    t = kgen._torch_tensor(v, 0)
    # ctypes reads a NULL c_void_p as None; torch's data_ptr() of an empty tensor is 0
    check(t is not None and (t.data or 0) == v.data_ptr() and list(t.shape[:v.dim()]) == list(v.shape)
          and list(t.strides[:v.dim()]) == list(v.stride()), "fast path", f"{what}: pointer, shape, strides")
try:
    kgen.neg(torch.zeros(3, device=dev, requires_grad=True), out=torch.empty(3, device=dev))
    check(False, "fast path", "a tensor that requires grad raised nothing")
except Exception as e:  # torch's own DLPack refusal, as before the fast path
    check("grad" in str(e), "fast path", f"requires grad: {type(e).__name__}: {e}")
s2 = torch.cuda.Stream()
x = torch.zeros(1 << 24, device=dev)
y = torch.empty_like(x)
torch.cuda.synchronize()
torch.cuda._sleep(50_000_000)  # the current stream is busy: a call on s2 must wait for the fill below
x.fill_(2.0)
kgen.neg(x, out=y, stream=s2.cuda_stream)  # not the current stream: the DLPack path orders it
s2.synchronize()
check(bool((y == -2).all()), "streams", "stream= another stream: kgen waits for the current stream's pending fill")

def capture(stream, fn):
    """fn() captured in a new CUDA graph on stream: (the graph, the kgen.Error it raised or None)."""
    g, err = torch.cuda.CUDAGraph(), None
    try:
        with torch.cuda.stream(stream), torch.cuda.graph(g, stream=stream):
            fn()
    except kgen.Error as e:
        err = e
    torch.cuda.current_stream().wait_stream(stream)
    return g, err


# ---- CUDA graphs: a captured call that needs scratch (split decode attention) -----
# A new stream has no scratch and none can be allocated during capture: the captured call raises kgen.Error;
# after kgen.reserve_scratch(stream=...) the same capture works and its replay equals an eager call bitwise.
qd = torch.randn(1, 32, 1, 128, device=dev, dtype=torch.float16)
kd = torch.randn(1, 1, 32768, 128, device=dev, dtype=torch.float16)
vd = torch.randn_like(kd)
od, oe = torch.full_like(qd, float("nan")), torch.empty_like(qd)
kgen.attention(qd, kd, vd, out=oe)  # eager, on the current stream (the modules load here, outside capture)
torch.cuda.synchronize()
for reserve in (False, True):
    sg = torch.cuda.Stream()
    sg.wait_stream(torch.cuda.current_stream())
    if reserve:
        kgen.reserve_scratch(stream=sg)
    g, err = capture(sg, lambda: kgen.attention(qd, kd, vd, out=od))
    if not reserve:
        check(err is not None and err.name == "KG_ERR_INVALID_ARGUMENT" and "graph capture" in str(err)
              and "kg_reserve_scratch" in str(err), "graphs",
              f"a split decode call captured on a stream without scratch raises kgen.Error ({err})")
    else:
        check(err is None, "graphs", f"after reserve_scratch(stream=) the capture succeeds ({err})")
        if err is None:
            g.replay()
            torch.cuda.synchronize()
            check(bool(torch.equal(od, oe)), "graphs", "the replay equals the eager call bitwise")

# Too little scratch: a decode call whose split partials pass the default size (B8 Hq32 Hkv8 Sq16 Sk32768 D128:
# 64 row tiles of 64 rows, several splits each) captured after reserve_scratch() with the default raises,
# naming the bytes to reserve; reserving them makes the capture work, bitwise equal to an eager call.
import re
qd = torch.randn(8, 32, 16, 128, device=dev, dtype=torch.bfloat16)
kd = torch.randn(8, 8, 32768, 128, device=dev, dtype=torch.bfloat16)
vd = torch.randn_like(kd)
od, oe = torch.full_like(qd, float("nan")), torch.empty_like(qd)
kgen.attention(qd, kd, vd, out=oe)
torch.cuda.synchronize()
sg = torch.cuda.Stream()
sg.wait_stream(torch.cuda.current_stream())
kgen.reserve_scratch(stream=sg)
need = None
for attempt in (0, 1):
    g, err = capture(sg, lambda: kgen.attention(qd, kd, vd, out=od))
    if attempt == 0:
        m = re.search(r"kg_reserve_scratch\(ctx, (\d+)\)", str(err) if err else "")
        check(err is not None and m is not None and int(m.group(1)) > 4 << 20, "graphs",
              f"partials past the default size: the capture raises naming the bytes to reserve ({err})")
        if m is None:
            break
        need = int(m.group(1))
        kgen.reserve_scratch(need, stream=sg)
    else:
        check(err is None, "graphs", f"after reserve_scratch({need}, stream=) the capture succeeds ({err})")
        if err is None:
            g.replay()
            torch.cuda.synchronize()
            check(bool(torch.equal(od, oe)), "graphs", "its replay equals the eager call bitwise")
del qd, kd, vd, od, oe

a16, b16, o16 = (torch.ones(16, device=dev) for _ in range(3))
for _ in range(200):
    kgen.add(a16, b16, out=o16)
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(2000):
    kgen.add(a16, b16, out=o16)
kg_host = (time.perf_counter() - t0) / 2000 * 1e6
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(2000):
    torch.add(a16, b16, out=o16)
th_host = (time.perf_counter() - t0) / 2000 * 1e6
torch.cuda.synchronize()
print(f"host time per call, 16-element add from Python: kgen {kg_host:.1f} us, torch {th_host:.1f} us")

print("checks per family:", ", ".join(f"{k} {v}" for k, v in counts.items()))
print(f"{sum(counts.values())} checks, {len(failures)} failed")
sys.exit(1 if failures else 0)
