"""The Python package without a GPU (part of `ninja test`, from
tests/test_install.sh): it imports, lists every op family, reports
KG_ERR_NO_DEVICE as a kgen.Error, and returns kgen's own messages for bad
arguments. Tensors are stand-ins that speak DLPack (a ctypes DLManagedTensor
in a "dltensor" capsule) with fake device addresses: every call fails on the
host before anything is dereferenced. The GPU is hidden
(CUDA_VISIBLE_DEVICES=""), so this runs the same on every machine."""
import ctypes
import os
import re
import sys

os.environ["CUDA_VISIBLE_DEVICES"] = ""
import kgen  # noqa: E402

failures = []


def check(ok, what):
    print(("ok: " if ok else "FAILED: ") + what)
    if not ok:
        failures.append(what)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

DTYPES = {"f32": (2, 32), "f16": (2, 16), "bf16": (4, 16), "i64": (0, 64), "bool": (6, 8), "c64": (5, 64)}
_next_addr = [0x10000000]


class Fake:
    """A tensor of a framework kgen has never heard of, on a fake address."""

    def __init__(self, shape, dtype="f32", device_type=2):
        self.shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self.m = DLManagedTensor()
        t = self.m.dl_tensor
        t.data = _next_addr[0]
        _next_addr[0] += 1 << 20
        t.device = DLDevice(device_type, 0)
        t.ndim = len(shape)
        t.dtype = DLDataType(*DTYPES[dtype], 1)
        t.shape = self.shape
        t.strides = None
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return _capsule_new(ctypes.addressof(self.m), b"dltensor", None)

    def __dlpack_device__(self):
        return (self.m.dl_tensor.device.device_type, 0)


def raises(fn, status_name, pattern):
    try:
        fn()
    except kgen.Error as e:
        ok = e.name == status_name and re.fullmatch(pattern, str(e)) is not None
        return ok, "%s: %s" % (e.name, e)
    except Exception as e:  # noqa: BLE001
        return False, "%s: %s" % (type(e).__name__, e)
    return False, "no exception"


def expect_error(what, fn, status_name, pattern):
    ok, got = raises(fn, status_name, pattern)
    check(ok, "%s -> %s (%s)" % (what, status_name, got))


# ---- the package and the library ------------------------------------------
header = open(os.path.join(os.path.dirname(__file__), "..", "runtime", "kgen.h")).read()
want = ".".join(re.search(r"#define KG_VERSION_%s (\d+)" % p, header).group(1) for p in ("MAJOR", "MINOR", "PATCH"))
check(kgen.version() == want, "kgen.version() %s is the headers' %s (%s)" % (kgen.version(), want, kgen.library_path))
check(kgen._SOVERSION == int(want.split(".")[0]),
      "the package's SONAME major %d is KG_VERSION_MAJOR %s" % (kgen._SOVERSION, want.split(".")[0]))
archs, kernels, modules, nbytes = kgen.bundle_info()
check(kernels > 0 and modules > 0 and nbytes > 0 and "sm_" in archs,
      "bundle_info: %d kernels in %d modules, %d bytes, %s" % (kernels, modules, nbytes, archs))

manifest = os.path.join(os.path.dirname(__file__), "..", "generated", "kg_ops.h")
ew = re.findall(r"^KG_API kg_status kg_(\w+)\(kg_context \*ctx, const kg_tensor \*out", open(manifest).read(), re.M)
missing = [n for n in ew if not callable(getattr(kgen, n, None))]
check(len(ew) > 30 and not missing, "every element-wise op of kg_ops.h is a function (%d; missing %s)" % (len(ew), missing))
families = ["sum", "mean", "prod", "norm", "max", "min", "argmax", "argmin", "max_with_indices", "min_with_indices",
            "matmul", "attention", "softmax", "log_softmax", "logsumexp", "layer_norm", "rms_norm",
            "rms_norm_residual", "attention_backward"]
missing = [n for n in families if not callable(getattr(kgen, n, None))]
check(not missing, "reductions, matmul, attention (forward and backward) and normalizations are functions (missing %s)" % missing)

# ---- no device -------------------------------------------------------------
expect_error("device_info() without a GPU", kgen.device_info, "KG_ERR_NO_DEVICE", r"no CUDA driver or device: .+")
a, b, c = Fake([2, 3]), Fake([3]), Fake([2, 3])
expect_error("a valid add without a GPU", lambda: kgen.add(a, b, out=c), "KG_ERR_NO_DEVICE",
             r"no CUDA driver or device: .+")
check(a.streams == [1], "with no framework stream, the producer is asked for the legacy default stream (got %s)"
      % a.streams)
expect_error("a valid exp with stream= without a GPU", lambda: kgen.exp(a, out=c, stream=0x1234), "KG_ERR_NO_DEVICE",
             r"no CUDA driver or device: .+")
check(a.streams[-1] == 0x1234, "stream= is passed to __dlpack__ (got %s)" % a.streams[-1])
expect_error("reserve_scratch() without a GPU", kgen.reserve_scratch, "KG_ERR_NO_DEVICE", r"no CUDA driver or device: .+")
expect_error("reserve_scratch(1 << 20, stream=0x1234) without a GPU", lambda: kgen.reserve_scratch(1 << 20, stream=0x1234),
             "KG_ERR_NO_DEVICE", r"no CUDA driver or device: .+")

# ---- kgen's messages, as in C ----------------------------------------------
expect_error("add of [2,3] and [4]", lambda: kgen.add(Fake([2, 3]), Fake([4]), out=Fake([2, 3])), "KG_ERR_SHAPE",
             re.escape("shape mismatch: a is [2,3], b is [4] (dim -1: 3 vs 4 do not broadcast)"))
expect_error("exp of i64", lambda: kgen.exp(Fake([4], "i64"), out=Fake([4], "i64")), "KG_ERR_DTYPE",
             re.escape("exp is not available for i64 (it accepts f32, f64, f16, bf16)"))
expect_error("a CPU tensor", lambda: kgen.neg(Fake([4], device_type=1), out=Fake([4])), "KG_ERR_INVALID_ARGUMENT",
             re.escape("invalid argument: DLPack tensor is on a CPU device (device_type 1); kgen needs CUDA device "
                       "memory (kDLCUDA or kDLCUDAManaged)"))
expect_error("a complex64 tensor", lambda: kgen.neg(Fake([4], "c64"), out=Fake([4])), "KG_ERR_DTYPE",
             re.escape("DLPack dtype complex64 (code 5) is not supported (kgen has float16/32/64, bfloat16, int32/64, "
                       "uint8 and bool)"))
expect_error("sum over a duplicate axis", lambda: kgen.sum(Fake([4, 5]), axes=[1, -1], out=Fake([4])),
             "KG_ERR_INVALID_ARGUMENT", re.escape("invalid argument: sum: axis -1 (dim 1) appears twice in axes"))
expect_error("layer_norm with a NaN eps", lambda: kgen.layer_norm(Fake([4, 8]), out=Fake([4, 8]), eps=float("nan")),
             "KG_ERR_INVALID_ARGUMENT",
             re.escape("invalid argument: layer_norm: eps is nan (it must be finite and at most 3.40282e+38 in "
                       "magnitude, the largest float)"))
expect_error("softmax along axis 5 of a 2-d tensor", lambda: kgen.softmax(Fake([4, 8]), axis=5, out=Fake([4, 8])),
             "KG_ERR_INVALID_ARGUMENT",
             re.escape("invalid argument: softmax: axis 5 is out of range for a 2-dim input (valid: -2..1)"))
expect_error("matmul f32 @ f16", lambda: kgen.matmul(Fake([4, 8]), Fake([8, 2], "f16"), out=Fake([4, 2])),
             "KG_ERR_DTYPE", re.escape("dtype mismatch: matmul: a is f32, b is f16 (a, b and out share one dtype)"))
expect_error("attention with head dim 300",
             lambda: kgen.attention(Fake([1, 2, 8, 300], "f16"), Fake([1, 2, 8, 300], "f16"),
                                    Fake([1, 2, 8, 300], "f16"), out=Fake([1, 2, 8, 300], "f16")),
             "KG_ERR_INVALID_ARGUMENT",
             re.escape("invalid argument: attention: head dim 300 is larger than 256 (generated: 32, 64, 96, 128, 256; "
                       "a smaller one is zero-padded to the next)"))

# ---- Python-side argument errors ---------------------------------------------
for what, fn in [("add without out=", lambda: kgen.add(Fake([2]), Fake([2]))),
                 ("a list instead of a tensor", lambda: kgen.neg([1, 2], out=Fake([2]))),
                 ("an unknown keyword", lambda: kgen.sum(Fake([2]), out=Fake([]), axis=0))]:
    try:
        fn()
        check(False, what + " raises TypeError")
    except TypeError as e:
        check(True, "%s raises TypeError (%s)" % (what, e))

# ---- argument values the C types cannot carry, and non-tensors after the first
# (before session 27: an unknown epilogue raised KeyError, axes=[2**32 + 1]
# reached C as axis 1 and keepdim=2**32 as 0, and out=None raised
# AttributeError from inside the package)


def expect_python_error(what, fn, exc, text):
    try:
        fn()
        check(False, "%s raises %s (no exception)" % (what, exc.__name__))
    except exc as e:
        check(str(e) == text, "%s raises %s: %s%s" % (what, exc.__name__, e,
                                                      "" if str(e) == text else " (want: %s)" % text))
    except Exception as e:  # noqa: BLE001
        check(False, "%s raises %s (got %s: %s)" % (what, exc.__name__, type(e).__name__, e))


expect_python_error("matmul(epilogue='bogus')",
                    lambda: kgen.matmul(Fake([4, 8]), Fake([8, 2]), out=Fake([4, 2]), epilogue="bogus"), ValueError,
                    "matmul() epilogue='bogus': expected one of 'none', 'relu', 'gelu_tanh'")
expect_python_error("matmul(backend=1)",
                    lambda: kgen.matmul(Fake([4, 8]), Fake([8, 2]), out=Fake([4, 2]), backend=1), ValueError,
                    "matmul() backend=1: expected one of 'auto', 'cublas', 'cublaslt'")
expect_python_error("sum(axes=[2**32 + 1])", lambda: kgen.sum(Fake([4, 5]), axes=[2**32 + 1], out=Fake([4])),
                    ValueError, "sum() axes holds 4294967297, outside a C int (-2147483648..2147483647)")
expect_python_error("softmax(axis=-2**40)", lambda: kgen.softmax(Fake([4, 5]), axis=-2**40, out=Fake([4, 5])),
                    ValueError, "softmax() axis=-1099511627776 is outside a C int (-2147483648..2147483647)")
expect_python_error("layer_norm(k=2**32 + 1)", lambda: kgen.layer_norm(Fake([4, 5]), k=2**32 + 1, out=Fake([4, 5])),
                    ValueError, "layer_norm() k=4294967297 is outside a C int (-2147483648..2147483647)")
expect_python_error("attention(scale=1e40)",
                    lambda: kgen.attention(Fake([1, 2, 8, 64], "f16"), Fake([1, 2, 8, 64], "f16"),
                                           Fake([1, 2, 8, 64], "f16"), out=Fake([1, 2, 8, 64], "f16"), scale=1e40),
                    ValueError, "attention() scale=1e+40 does not fit a C float (at most 3.4028234663852886e+38 in "
                    "magnitude)")
expect_python_error("add(out=None)", lambda: kgen.add(Fake([2]), Fake([2]), out=None), TypeError,
                    "add() out= takes an object with __dlpack__ (PyTorch, CuPy, JAX arrays, ...), not NoneType")
expect_python_error("rms_norm(weight=[1, 2])", lambda: kgen.rms_norm(Fake([4, 2]), weight=[1, 2], out=Fake([4, 2])),
                    TypeError,
                    "rms_norm() weight= takes an object with __dlpack__ (PyTorch, CuPy, JAX arrays, ...), not list")
expect_python_error("add(a, None)", lambda: kgen.add(Fake([2]), None, out=Fake([2])), TypeError,
                    "add() b takes an object with __dlpack__ (PyTorch, CuPy, JAX arrays, ...), not NoneType")
expect_python_error("reserve_scratch(-1)", lambda: kgen.reserve_scratch(-1), ValueError,
                    "reserve_scratch() nbytes=-1 is outside 0..2**64-1")
expect_python_error("reserve_scratch(2**64)", lambda: kgen.reserve_scratch(2**64), ValueError,
                    "reserve_scratch() nbytes=18446744073709551616 is outside 0..2**64-1")
expect_python_error("reserve_scratch(1.5)", lambda: kgen.reserve_scratch(1.5), TypeError,
                    "reserve_scratch() nbytes is 1.5, not an integer")
expect_python_error("reserve_scratch(device=2**40)", lambda: kgen.reserve_scratch(device=2**40), ValueError,
                    "reserve_scratch() device=1099511627776 is outside a C int (-2147483648..2147483647)")
expect_python_error("device_info(2**40)", lambda: kgen.device_info(2**40), ValueError,
                    "device_info() device=1099511627776 is outside a C int (-2147483648..2147483647)")
expect_python_error("add(stream=2**70)", lambda: kgen.add(Fake([2]), Fake([2]), out=Fake([2]), stream=2**70),
                    ValueError, "stream= handle 1180591620717411303424 is not a pointer value (0..2**64-1)")
for what, fn in [("sum(axes=[1.5])", lambda: kgen.sum(Fake([4, 5]), axes=[1.5], out=Fake([4]))),
                 ("sum(axes='1')", lambda: kgen.sum(Fake([4, 5]), axes="1", out=Fake([4])))]:
    try:
        fn()
        check(False, what + " raises TypeError")
    except TypeError as e:
        check(True, "%s raises TypeError (%s)" % (what, e))
expect_python_error("add(None, None, out=None)", lambda: kgen.add(None, None, out=None), TypeError,
                    "add() got no tensor: a, b and out= are all None")
# a single axis may be any integer-like object (numpy.int64, ...), not only int


class Axis:
    def __index__(self):
        return 1


expect_error("sum(axes=<an __index__ object>)", lambda: kgen.sum(Fake([4, 5]), axes=Axis(), out=Fake([4])),
             "KG_ERR_NO_DEVICE", r"no CUDA driver or device: .+")
# a value of the wrong kind names its argument (before session 27: Python's
# bare "float() argument must be a string or a real number, not 'NoneType'")
expect_python_error("rms_norm(eps=None)", lambda: kgen.rms_norm(Fake([4, 2]), eps=None, out=Fake([4, 2])), TypeError,
                    "rms_norm() eps is None, not a number")
expect_python_error("layer_norm(k='a')", lambda: kgen.layer_norm(Fake([4, 2]), k="a", out=Fake([4, 2])), ValueError,
                    "layer_norm() k is 'a', not an integer")
expect_python_error("sum(axes=[None])", lambda: kgen.sum(Fake([4, 2]), axes=[None], out=Fake([4])), TypeError,
                    "sum() axes holds None, not an integer")
expect_python_error("attention(scale=None)",
                    lambda: kgen.attention(Fake([1, 2, 8, 64], "f16"), Fake([1, 2, 8, 64], "f16"),
                                           Fake([1, 2, 8, 64], "f16"), out=Fake([1, 2, 8, 64], "f16"), scale=None),
                    TypeError, "attention() scale is None, not a number")
# keepdim is a truth value: 2**32 keeps the dims (it reached C as 0)
expect_error("sum(keepdim=2**32) keeps the dims",
             lambda: kgen.sum(Fake([4, 5]), axes=[1], keepdim=2**32, out=Fake([4])), "KG_ERR_SHAPE",
             re.escape("shape mismatch: sum: out is [4] but reducing in [4,5] gives [4,1]"))

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
