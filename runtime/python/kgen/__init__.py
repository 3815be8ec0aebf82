"""kgen for Python: kgen's CUDA kernels on any tensor that speaks DLPack.

    import torch, kgen
    x = torch.randn(4096, 1024, device="cuda")
    y = torch.empty_like(x)
    kgen.gelu(x, out=y)                      # element-wise: every catalogue op
    kgen.sum(y, axes=[1], out=torch.empty(4096, device="cuda"))

Arguments are any objects with __dlpack__ (PyTorch, CuPy, JAX arrays, ...);
inputs are positional, results are written into the tensors given as out=
(and indices=, lse=): kgen allocates nothing per call, as in C. Calls run on
the caller's current CUDA stream (PyTorch's or CuPy's current stream of the
first tensor's framework, or the stream= argument: a handle or an object with
.cuda_stream or .ptr) and return without waiting, like the framework's own
ops. A failed call raises kgen.Error whose text is kgen's message
(kg_errmsg) and whose .status/.name are the kg_status code. An argument that
cannot be passed to C at all raises before the call, naming it: TypeError for
a non-tensor (no __dlpack__), a missing out= or a value of the wrong kind
(eps=None), ValueError for an int outside a C int (axes, axis, k, device), a
scale beyond a C float, an unknown epilogue= or backend=, or a stream= handle
that is not a pointer value.

This module is pure Python over the shared library (ctypes, no compiled
extension). It finds libkgen.so through $KGEN_LIBRARY, else the build tree it
sits in (build/libkgen.so), else the dynamic loader (libkgen.so.MAJOR after
`ninja install` and ldconfig, or on LD_LIBRARY_PATH).
"""
import ctypes
import ctypes.util
import math
import operator
import os
import sys
import threading

__all__ = ["Error", "version", "bundle_info", "device_info", "reserve_scratch", "library_path"]

# ---- the library --------------------------------------------------------

_SOVERSION = 0  # KG_VERSION_MAJOR of the headers this module was written for


def _find_library():
    env = os.environ.get("KGEN_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.join(here, "..", "..", "..", "build", "libkgen.so")
    if os.path.exists(tree):
        return os.path.normpath(tree)
    return "libkgen.so.%d" % _SOVERSION


library_path = _find_library()
_lib = ctypes.CDLL(library_path)

KG_MAX_DIMS = 8
_c_int64_p = ctypes.POINTER(ctypes.c_int64)


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int),
        ("ndim", ctypes.c_int),
        ("shape", ctypes.c_int64 * KG_MAX_DIMS),
        ("strides", ctypes.c_int64 * KG_MAX_DIMS),
    ]


_TensorP = ctypes.POINTER(_Tensor)


class _OpInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("arity", ctypes.c_int),
        ("out_rule", ctypes.c_int),
        ("cond_first", ctypes.c_int),
        ("inputs", ctypes.c_char_p * 3),
        ("dtype_mask", ctypes.c_uint),
        ("doc", ctypes.c_char_p),
    ]


class _MatmulOpts(ctypes.Structure):
    _fields_ = [("bias", _TensorP), ("epilogue", ctypes.c_int), ("backend", ctypes.c_int)]


class _AttentionOpts(ctypes.Structure):
    _fields_ = [("scale", ctypes.c_float), ("causal", ctypes.c_int)]


def _proto(name, restype, *argtypes):
    fn = getattr(_lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


_vp = ctypes.c_void_p
_kg_open = _proto("kg_open", ctypes.c_int, ctypes.POINTER(_vp), ctypes.c_int)
_kg_close = _proto("kg_close", None, _vp)
_kg_errmsg = _proto("kg_errmsg", ctypes.c_char_p, _vp)
_kg_status_name = _proto("kg_status_name", ctypes.c_char_p, ctypes.c_int)
_kg_status_text = _proto("kg_status_text", ctypes.c_char_p, ctypes.c_int)
_kg_set_stream = _proto("kg_set_stream", ctypes.c_int, _vp, _vp)
_kg_version = _proto("kg_version", ctypes.c_char_p, _vp, _vp, _vp)
_kg_bundle_info = _proto(
    "kg_bundle_info", ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int),
    ctypes.POINTER(ctypes.c_size_t))
_kg_device_info = _proto(
    "kg_device_info", ctypes.c_int, _vp, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int),
    ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
_kg_reserve_scratch = _proto("kg_reserve_scratch", ctypes.c_int, _vp, ctypes.c_size_t)
_kg_from_dlpack = _proto("kg_tensor_from_dlpack", ctypes.c_int, _vp, _vp, _TensorP)
_kg_op_get_info = _proto("kg_op_get_info", ctypes.POINTER(_OpInfo), ctypes.c_int)
_kg_elementwise = _proto("kg_elementwise", ctypes.c_int, _vp, ctypes.c_int, _TensorP, ctypes.POINTER(_TensorP),
                         ctypes.c_int)

_capsule_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get_pointer.restype = ctypes.c_void_p
_capsule_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

# ---- errors -------------------------------------------------------------


class Error(Exception):
    """A kgen call failed: str(e) is kgen's message, e.status the kg_status
    code and e.name its name ("KG_ERR_SHAPE", ...)."""

    def __init__(self, status, message):
        self.status = status
        self.name = _kg_status_name(status).decode()
        super().__init__(message or _kg_status_text(status).decode())


def _check(ctx, status):
    if status != 0:
        raise Error(status, _kg_errmsg(ctx).decode())


def version():
    """The library's version, e.g. "0.1.0"."""
    return _kg_version(None, None, None).decode()


def bundle_info():
    """(architectures as text, kernel count, module count, bytes) of the bundle."""
    k, m, b = ctypes.c_int(), ctypes.c_int(), ctypes.c_size_t()
    archs = _kg_bundle_info(ctypes.byref(k), ctypes.byref(m), ctypes.byref(b))
    return archs.decode(), k.value, m.value, b.value


# ---- contexts and streams -----------------------------------------------

_local = threading.local()  # a context is used by one thread at a time


def _context(device):
    ctxs = getattr(_local, "contexts", None)
    if ctxs is None:
        ctxs = _local.contexts = {}
    ctx = ctxs.get(device)
    if ctx is None:
        h = _vp()
        _kg_open(ctypes.byref(h), device)  # a failed context still validates calls and says why
        if not h.value:
            raise Error(12, "kg_open: out of host memory")
        ctx = ctxs[device] = _Context(h)
    return ctx


class _Context:
    def __init__(self, handle):
        self.handle = handle

    def __del__(self):
        if _kg_close is not None:
            _kg_close(self.handle)


def device_info(device=0):
    """(name, (major, minor), SM count) of a CUDA device; raises kgen.Error
    (KG_ERR_NO_DEVICE) where there is none."""
    ctx = _context(_c_int("device_info", "device", device)).handle
    name = ctypes.create_string_buffer(256)
    ma, mi, sms = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    _check(ctx, _kg_device_info(ctx, name, len(name), ctypes.byref(ma), ctypes.byref(mi), ctypes.byref(sms)))
    return name.value.decode(), (ma.value, mi.value), sms.value


def reserve_scratch(nbytes=0, device=0, stream=None):
    """Before capturing a CUDA graph: makes kgen's device scratch for `stream`
    hold at least nbytes bytes (0: the default size, the split counters and
    4 MiB of partials; a captured call that needs more raises kgen.Error
    naming the bytes to pass), allocating it now
    (kg_reserve_scratch). Split reductions, normalizations and split decode
    attention keep partial results there; it is one buffer per stream and
    cannot be allocated during capture, so a captured call that needs it and
    finds none raises kgen.Error. stream: the stream to be captured (a handle
    or an object with .cuda_stream / .ptr); default: PyTorch's current stream
    on `device` where torch is imported, else the legacy default stream.
    Synchronizes the device when it allocates: call it outside capture, from
    the thread that will capture (the package keeps one kgen context per
    thread and device, and the scratch belongs to the context)."""
    device = _c_int("reserve_scratch", "device", device)
    n = _convert("reserve_scratch", "nbytes is", nbytes, operator.index, "an integer")
    if not 0 <= n < 2**64:
        raise ValueError("reserve_scratch() nbytes=%d is outside 0..2**64-1" % n)
    handle = _stream_handle(stream)
    if handle is None:
        handle = 0
        torch = sys.modules.get("torch")
        if torch is not None:
            try:
                raw = _torch_raw_stream(torch)
                handle = int(raw(device)) if raw is not None else torch.cuda.current_stream(device).cuda_stream
            except Exception:  # no CUDA in torch: the call below reports the device
                handle = 0
    ctx = _context(device).handle
    _check(ctx, _kg_set_stream(ctx, handle or None))
    _check(ctx, _kg_reserve_scratch(ctx, n))


_TORCH_RAW_STREAM = None  # torch's C function giving a device's current stream as an int, or False


def _torch_raw_stream(torch):
    """torch._C._cuda_getCurrentRawStream where this torch has it (about 0.3 us
    against about 5 us for torch.cuda.current_stream(device).cuda_stream, which
    builds a Stream object; the same handle), else None."""
    global _TORCH_RAW_STREAM
    if _TORCH_RAW_STREAM is None:
        _TORCH_RAW_STREAM = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None) or False
    return _TORCH_RAW_STREAM or None


def _current_stream(obj, device):
    """The caller's current stream for obj's framework: a handle (0 = legacy default)."""
    mod = type(obj).__module__.split(".")[0]
    try:
        if mod == "torch":
            import torch
            raw = _torch_raw_stream(torch)
            if raw is not None:
                return int(raw(device))
            return torch.cuda.current_stream(device).cuda_stream
        if mod == "cupy":
            import cupy
            return cupy.cuda.get_current_stream().ptr
    except Exception:  # no CUDA in that framework: the tensor is not on a GPU, which the call reports
        pass
    return 0


def _stream_handle(stream):
    if stream is None:
        return None
    handle = None
    if isinstance(stream, int):
        handle = stream
    for attr in ("cuda_stream", "ptr"):
        if handle is None and hasattr(stream, attr):
            handle = int(getattr(stream, attr))
    if handle is None:
        raise TypeError("stream= takes a CUDA stream handle (int) or an object with .cuda_stream or .ptr")
    if not 0 <= handle < 2**64:  # a pointer; ctypes would truncate a larger one
        raise ValueError("stream= handle %d is not a pointer value (0..2**64-1)" % handle)
    return handle


_KDLCUDA, _KDLCUDA_MANAGED = 2, 13


def _device_of(obj):
    if not hasattr(obj, "__dlpack__"):
        raise TypeError("kgen takes objects with __dlpack__ (PyTorch, CuPy, JAX arrays, ...), not %s"
                        % type(obj).__name__)
    if hasattr(obj, "__dlpack_device__"):
        dtype, dev = obj.__dlpack_device__()
        if int(dtype) in (_KDLCUDA, _KDLCUDA_MANAGED):
            return int(dev)
    return 0  # not CUDA: kg_tensor_from_dlpack says so


# A torch.Tensor read from its attributes, where that says exactly what its
# DLPack export would: about 2 us a tensor instead of about 21 us for
# __dlpack__(stream=...) (torch 2.11 on an H200 host, 2026-12-02: kgen.add
# from Python took 100-120 us a call, torch.add 8). Only for a plain strided
# CUDA tensor of a kgen dtype, on the context's device, that does not require
# grad, in a call on torch's current stream, where DLPack's stream handshake
# orders nothing; anything else takes the DLPack path, which also gives every
# error. kgen's own checks of the kg_tensor run in the call either way.
_TORCH_KG_DTYPES = None


def _torch_kg_dtypes(torch):
    global _TORCH_KG_DTYPES
    if _TORCH_KG_DTYPES is None:
        _TORCH_KG_DTYPES = {torch.float32: 0, torch.float64: 1, torch.float16: 2, torch.bfloat16: 3,
                            torch.int32: 4, torch.int64: 5, torch.uint8: 6, torch.bool: 7}
    return _TORCH_KG_DTYPES


def _torch_tensor(obj, device):
    """obj as a kg_tensor without DLPack, or None where the fast path does not apply."""
    torch = sys.modules.get("torch")
    if torch is None or type(obj) is not torch.Tensor:
        return None
    if not obj.is_cuda or obj.layout is not torch.strided or obj.requires_grad or obj.get_device() != device:
        return None
    code = _torch_kg_dtypes(torch).get(obj.dtype)
    n = obj.dim()
    if code is None or n > KG_MAX_DIMS:
        return None
    t = _Tensor()
    t.data = obj.data_ptr()
    t.dtype = code
    t.ndim = n
    if n:
        t.shape[:n] = obj.shape
        t.strides[:n] = obj.stride()
    return t


def _is_torch(obj):
    return type(obj).__module__.split(".")[0] == "torch"


def _tensor(ctx, obj, stream, keep):
    """obj as a kg_tensor; the DLPack capsule is kept in `keep` for the call."""
    on_cuda = hasattr(obj, "__dlpack_device__") and int(obj.__dlpack_device__()[0]) in (_KDLCUDA, _KDLCUDA_MANAGED)
    if on_cuda:
        try:
            # DLPack's stream convention: 1 is the legacy default stream, else
            # the handle; the producer orders its pending work before that stream.
            cap = obj.__dlpack__(stream=stream if stream else 1)
        except TypeError:
            cap = obj.__dlpack__()
    else:
        cap = obj.__dlpack__()  # not on a GPU (stream must be None): kg_tensor_from_dlpack says so
    keep.append(cap)
    ptr = _capsule_get_pointer(cap, b"dltensor")  # DLManagedTensor starts with its DLTensor
    t = _Tensor()
    _check(ctx, _kg_from_dlpack(ctx, ptr, ctypes.byref(t)))
    return t


# ---- op families ----------------------------------------------------------
#
# Every entry point is described by its C arguments after the context, in
# order, each a (kind, name[, default]) pair:
#   "in"    a required input tensor, passed positionally
#   "out"   a required output tensor, keyword (out=, indices=, ...)
#   "opt"   an optional tensor, keyword, None -> NULL
#   "axes"  a list of axes (None: every axis) -> const int *axes, int n_axes
#   "int"   an int keyword with a default (a C int: a value outside it is a
#           ValueError, never truncated)
#   "bool"  a truth-value keyword with a default (a C int 0 or 1)
#   "double" a float keyword with a default (a C double)
#   "opts"  a struct pointer built from keywords by a builder (below)
# Adding a family (normalization, attention backward, ...) is one entry in
# _FAMILIES, plus a builder when it takes an options struct.

_EPILOGUES = {"none": 0, "relu": 1, "gelu_tanh": 2}
_BACKENDS = {"auto": 0, "cublas": 1, "cublaslt": 2}
_INT_MIN, _INT_MAX = -2**31, 2**31 - 1


def _choice(pyname, name, table, value):
    if not isinstance(value, str) or value not in table:
        raise ValueError("%s() %s=%r: expected one of %s" % (pyname, name, value, ", ".join(repr(k) for k in table)))
    return table[value]


def _convert(pyname, what, value, conv, kind):
    """conv(value), or the same exception class naming the argument."""
    try:
        return conv(value)
    except (TypeError, ValueError) as e:
        raise type(e)("%s() %s %r, not %s" % (pyname, what, value, kind)) from None


def _c_int(pyname, name, value, in_list=False):
    """int(value) for a C int argument; a value a C int cannot hold is refused, not truncated."""
    if in_list:
        v = _convert(pyname, name + " holds", value, operator.index, "an integer")
    else:
        v = _convert(pyname, name + " is", value, int, "an integer")
    if not _INT_MIN <= v <= _INT_MAX:
        raise ValueError("%s() %s outside a C int (%d..%d)"
                         % (pyname, ("%s holds %d," if in_list else "%s=%d is") % (name, v), _INT_MIN, _INT_MAX))
    return v


def _matmul_opts(pyname, kw, tensor):
    return _MatmulOpts(
        ctypes.pointer(tensor(kw["bias"], "bias=")) if kw["bias"] is not None else None,
        _choice(pyname, "epilogue", _EPILOGUES, kw["epilogue"]), _choice(pyname, "backend", _BACKENDS, kw["backend"]))


def _attention_opts(pyname, kw, tensor):
    scale = _convert(pyname, "scale is", kw["scale"], float, "a number")
    if math.isfinite(scale) and math.isinf(ctypes.c_float(scale).value):
        raise ValueError("%s() scale=%r does not fit a C float (at most %r in magnitude)"
                         % (pyname, scale, 3.4028234663852886e+38))
    return _AttentionOpts(scale, int(bool(kw["causal"])))


_RED = [("out", "out"), ("in", "x"), ("axes", "axes"), ("bool", "keepdim", False)]
_ARG = [("out", "indices"), ("in", "x"), ("axes", "axes"), ("bool", "keepdim", False)]
_WITH = [("out", "out"), ("out", "indices"), ("in", "x"), ("axes", "axes"), ("bool", "keepdim", False)]

_FAMILIES = {
    # python name: (C entry point, C arguments after ctx, options builder, doc)
    "sum": ("kg_sum", _RED, None, "sum over axes"),
    "mean": ("kg_mean", _RED, None, "mean over axes"),
    "prod": ("kg_prod", _RED, None, "product over axes"),
    "norm": ("kg_norm", _RED, None, "L2 norm over axes"),
    "max": ("kg_max", _RED, None, "maximum over axes"),
    "min": ("kg_min", _RED, None, "minimum over axes"),
    "argmax": ("kg_argmax", _ARG, None, "index of the maximum over axes (i64)"),
    "argmin": ("kg_argmin", _ARG, None, "index of the minimum over axes (i64)"),
    "max_with_indices": ("kg_max_with_indices", _WITH, None, "maximum and its index over axes"),
    "min_with_indices": ("kg_min_with_indices", _WITH, None, "minimum and its index over axes"),
    "logsumexp": ("kg_logsumexp", _RED, None, "log(sum(exp(x))) over axes"),
    "softmax": ("kg_softmax", [("out", "out"), ("in", "x"), ("int", "axis", -1)], None, "softmax along axis"),
    "log_softmax": ("kg_log_softmax", [("out", "out"), ("in", "x"), ("int", "axis", -1)], None,
                    "log_softmax along axis"),
    "layer_norm": ("kg_layer_norm",
                   [("out", "out"), ("opt", "mean"), ("opt", "rstd"), ("in", "x"), ("int", "k", 1),
                    ("opt", "weight"), ("opt", "bias"), ("double", "eps", 1e-5)],
                   None, "layer_norm over the last k dims (optional weight, bias; mean and rstd out)"),
    "rms_norm": ("kg_rms_norm", [("out", "out"), ("in", "x"), ("opt", "weight"), ("double", "eps", 1e-6)], None,
                 "rms_norm over the last dim"),
    "rms_norm_residual": ("kg_rms_norm_residual",
                          [("out", "out"), ("in", "residual"), ("in", "x"), ("opt", "weight"),
                           ("double", "eps", 1e-6)],
                          None, "residual += x (in place), then out = rms_norm(residual)"),
    "matmul": ("kg_matmul_ex",
               [("out", "out"), ("in", "a"), ("in", "b"),
                ("opts", [("bias", None), ("epilogue", "none"), ("backend", "auto")])],
               _matmul_opts, "a @ b (+ bias, relu or gelu_tanh epilogue) through cuBLAS"),
    "attention": ("kg_attention",
                  [("out", "out"), ("opt", "lse"), ("in", "q"), ("in", "k"), ("in", "v"), ("opt", "mask"),
                   ("opts", [("scale", 0.0), ("causal", False)])],
                  _attention_opts, "softmax(scale q k^T + mask) v, fused (flash attention)"),
    "attention_backward": ("kg_attention_backward",
                           [("out", "dq"), ("out", "dk"), ("out", "dv"), ("in", "dout"), ("in", "q"), ("in", "k"),
                            ("in", "v"), ("in", "out"), ("in", "lse"), ("opt", "mask"),
                            ("opts", [("scale", 0.0), ("causal", False)])],
                           _attention_opts, "dq, dk, dv of attention from dout, the forward's inputs, out and lse"),
}


def _bind(pyname, cargs, ins, args, kw):
    """Python arguments -> {name: value} in the order of cargs; ins: the names
    of cargs' "in" arguments (listed once, where the op is made)."""
    if len(args) != len(ins):
        raise TypeError("%s() takes %d positional tensors (%s), got %d" % (pyname, len(ins), ", ".join(ins), len(args)))
    vals = dict(zip(ins, args))
    for a in cargs:
        kind, name = a[0], a[1]
        if kind == "in":
            continue
        if kind == "opts":
            for oname, default in name:
                vals[oname] = kw.pop(oname, default)
        elif kind == "out":
            if name not in kw:
                raise TypeError("%s() needs %s= (the tensor the result is written to)" % (pyname, name))
            vals[name] = kw.pop(name)
        else:
            vals[name] = kw.pop(name, a[2] if len(a) > 2 else None)
    if kw:
        raise TypeError("%s() got unexpected keyword arguments %s" % (pyname, ", ".join(sorted(kw))))
    return vals


def _first_tensor(pyname, cargs, vals):
    for a in cargs:
        if a[0] in ("in", "out") and vals.get(a[1]) is not None:
            return vals[a[1]]
    names = [a[1] if a[0] == "in" else a[1] + "=" for a in cargs if a[0] in ("in", "out")]
    raise TypeError("%s() got no tensor: %s and %s are %s None"
                    % (pyname, ", ".join(names[:-1]), names[-1], "both" if len(names) == 2 else "all"))


def _torch_device(obj):
    """A plain torch.Tensor's CUDA device index (0 where it is not on a GPU, as
    _device_of says), or None for anything else."""
    torch = sys.modules.get("torch")
    if torch is None or type(obj) is not torch.Tensor:
        return None
    return obj.get_device() if obj.is_cuda else 0


def _call(pyname, cfn, cargs, ins, builder, args, kw):
    stream = _stream_handle(kw.pop("stream", None))
    vals = _bind(pyname, cargs, ins, args, kw)
    first = _first_tensor(pyname, cargs, vals)
    device = _torch_device(first)  # what __dlpack_device__ says, without its Python-level cost
    if device is None:
        device = _device_of(first)
    fast = False
    if _is_torch(first):
        current = _current_stream(first, device)
        fast = stream is None or stream == current
        stream = current if stream is None else stream
    elif stream is None:
        stream = _current_stream(first, device)
    ctx = _context(device).handle
    keep = []

    def tensor(obj, what):
        if not hasattr(obj, "__dlpack__"):
            raise TypeError("%s() %s takes an object with __dlpack__ (PyTorch, CuPy, JAX arrays, ...), not %s"
                            % (pyname, what, type(obj).__name__))
        t = _torch_tensor(obj, device) if fast else None
        return t if t is not None else _tensor(ctx, obj, stream, keep)

    cvals = []
    for a in cargs:
        kind, name = a[0], a[1]
        if kind in ("in", "out"):
            cvals.append(ctypes.pointer(tensor(vals[name], name if kind == "in" else name + "=")))
        elif kind == "opt":
            cvals.append(ctypes.pointer(tensor(vals[name], name + "=")) if vals[name] is not None else None)
        elif kind == "axes":
            axes = vals[name]
            if axes is None:
                axes = []
            else:
                try:  # one axis: an int, numpy.int64, ...
                    axes = [operator.index(axes)]
                except TypeError:  # a sequence of them
                    axes = list(axes)
            axes = [_c_int(pyname, name, x, in_list=True) for x in axes]
            cvals.append((ctypes.c_int * (len(axes) or 1))(*axes))
            cvals.append(len(axes))
        elif kind == "int":
            cvals.append(_c_int(pyname, name, vals[name]))
        elif kind == "bool":
            cvals.append(int(bool(vals[name])))
        elif kind == "double":
            cvals.append(ctypes.c_double(_convert(pyname, name + " is", vals[name], float, "a number")))
        elif kind == "opts":
            cvals.append(ctypes.byref(builder(pyname, vals, tensor)))
    _check(ctx, _kg_set_stream(ctx, stream or None))
    _check(ctx, cfn(ctx, *cvals))
    del keep  # the capsules (and the producers' DLManagedTensors) are released after the call


def _make(pyname, cname, cargs, builder, doc):
    cfn = getattr(_lib, cname)
    cfn.restype = ctypes.c_int

    in_names = [a[1] for a in cargs if a[0] == "in"]

    def op(*args, **kw):
        return _call(pyname, cfn, cargs, in_names, builder, args, kw)

    ins = ", ".join(in_names)
    kws = ", ".join("%s=%s" % (a[1], "..." if a[0] == "out" else a[2] if len(a) > 2 else None)
                    for a in cargs if a[0] not in ("in", "opts"))
    opts = ", ".join("%s=%r" % o for a in cargs if a[0] == "opts" for o in a[1])
    op.__name__ = op.__qualname__ = pyname
    op.__doc__ = "%s(%s, %s%s): %s (C: %s)" % (pyname, ins, kws, ", " + opts if opts else "", doc, cname)
    return op


def _elementwise(op_index, info):
    names = [info.inputs[i].decode() for i in range(info.arity)]
    cargs = [("in", n) for n in names] + [("out", "out")]
    pyname = info.name.decode()

    arr = _TensorP * 3  # made once: an array type per call costs a few us

    def cfn(ctx, *cvals):
        *ins, out = cvals
        return _kg_elementwise(ctx, op_index, out, arr(*ins), len(ins))

    def op(*args, **kw):
        return _call(pyname, cfn, cargs, names, None, args, kw)

    op.__name__ = op.__qualname__ = pyname
    op.__doc__ = "%s(%s, out=...): %s (C: kg_%s)" % (pyname, ", ".join(names), info.doc.decode(), pyname)
    return op


elementwise_ops = []  # the names of the element-wise ops, in catalogue order
family_ops = []  # the names of the other families' entry points (_FAMILIES) this library has


def _install():
    g = globals()
    i = 1
    while True:  # every element-wise op of the catalogue, as the library lists them
        info = _kg_op_get_info(i)
        if not info:
            break
        name = info.contents.name.decode()
        g[name] = _elementwise(i, info.contents)
        elementwise_ops.append(name)
        i += 1
    for pyname, (cname, cargs, builder, doc) in _FAMILIES.items():
        if hasattr(_lib, cname):  # a family this library build has
            g[pyname] = _make(pyname, cname, cargs, builder, doc)
            family_ops.append(pyname)
    __all__.extend(elementwise_ops + family_ops + ["elementwise_ops", "family_ops"])


_install()
