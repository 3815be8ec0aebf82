-- catalogue.lua - every op kgen generates, as data.
--
-- Element-wise ops. One entry per op:
--   name     the op (kg_<name> is its entry point, KG_OP_<NAME> its enum)
--   inputs   operand names used by the expressions (default {"a"} / {"a","b"})
--   dtypes   "float" (f32 f64 f16 bf16), "numeric" (float + i32 i64 u8),
--            or "all" (numeric + bool): the dtypes the op accepts
--   out      "same" (default): the output has the inputs' dtype;
--            "bool": the output is bool
--   cond     true when the first input is a bool condition (where)
--   moves    true when the result is the input as it is (copy): its kernels
--            move the input's bits (no round trip through the compute
--            type) and it gets the copy kernels of the tperm modules
--   expr     one C expression computing the result from the inputs, used
--            verbatim in the device kernel and in the float64 CPU reference.
--            T names the compute type: float on the device for f32/f16/bf16,
--            double for f64 and in the reference.
--   int_expr the expression for integer and bool dtypes, when it differs;
--            T is the integer compute type (int32_t, int64_t, uint32_t for u8
--            and bool on the device; int64_t in the reference, whose result
--            is then wrapped to the dtype's width). A bool result is stored
--            as (x != 0), so on bool inputs a + b is a logical or, a * b a
--            logical and. kg_ipow(a, b) is the integer power (defined in the
--            device loops and in the reference).
--   half_expr the device expression for f16 and bf16, when it differs: the
--            fast form (intrinsics) of expr, whose error is far below those
--            types' rounding step; the reference and the tests use expr.
--   doc      one line for the manifest and the header
--   group    the op's module group: its kernels go in the module
--            ew_<dtype>_<group> (ew_<dtype> for "core"), one per accepted
--            dtype, compiled apart from the other groups. A new op joins the
--            group of its kind (or a new one), so adding it recompiles only
--            those few small modules; keep a group to a handful of ops.
--
-- Adding an op is adding an entry here and running `ninja`.
local M = {}

M.elementwise = {
  -- binary arithmetic
  { name = "add", group = "core", arity = 2, dtypes = "all", expr = "a + b", doc = "a + b (integers wrap; bool: a or b)" },
  { name = "sub", group = "core", arity = 2, dtypes = "numeric", expr = "a - b", doc = "a - b (integers wrap)" },
  { name = "mul", group = "core", arity = 2, dtypes = "all", expr = "a * b", doc = "a * b (integers wrap; bool: a and b)" },
  { name = "div", group = "core", arity = 2, dtypes = "numeric", expr = "a / b",
    int_expr = "b == (T)0 ? (T)0 : (b == (T)-1 ? (T)0 - a : a / b)",
    doc = "a / b; floats IEEE (x/0 = +-inf or nan); integers truncate, x/0 = 0" },
  { name = "maximum", group = "select", arity = 2, dtypes = "all", expr = "(a != a || a > b) ? a : b",
    int_expr = "a > b ? a : b", doc = "larger of a and b; NaN if either is NaN" },
  { name = "minimum", group = "select", arity = 2, dtypes = "all", expr = "(a != a || a < b) ? a : b",
    int_expr = "a < b ? a : b", doc = "smaller of a and b; NaN if either is NaN" },
  { name = "pow", group = "pow", arity = 2, dtypes = "numeric", expr = "pow(a, b)", int_expr = "(T)kg_ipow((int64_t)a, (int64_t)b)",
    doc = "a raised to b (floats: C pow; integers: exact, wrapping; b < 0 gives 1 for a = 1, +-1 for a = -1, else 0)" },
  -- comparisons (bool out)
  { name = "eq", group = "cmp", arity = 2, dtypes = "all", out = "bool", expr = "a == b", doc = "a == b" },
  { name = "ne", group = "cmp", arity = 2, dtypes = "all", out = "bool", expr = "a != b", doc = "a != b (true for NaN)" },
  { name = "lt", group = "cmp", arity = 2, dtypes = "all", out = "bool", expr = "a < b", doc = "a < b" },
  { name = "le", group = "cmp", arity = 2, dtypes = "all", out = "bool", expr = "a <= b", doc = "a <= b" },
  { name = "gt", group = "cmp", arity = 2, dtypes = "all", out = "bool", expr = "a > b", doc = "a > b" },
  { name = "ge", group = "cmp", arity = 2, dtypes = "all", out = "bool", expr = "a >= b", doc = "a >= b" },
  -- selection
  { name = "where", group = "select", arity = 3, inputs = { "cond", "a", "b" }, cond = true, dtypes = "all",
    expr = "cond ? a : b", doc = "cond ? a : b, cond a bool tensor" },
  -- unary, any numeric dtype
  { name = "neg", group = "unary", arity = 1, dtypes = "numeric", expr = "-a", int_expr = "(T)0 - a", doc = "-a (integers wrap)" },
  { name = "abs", group = "unary", arity = 1, dtypes = "all", expr = "fabs(a)", int_expr = "a < (T)0 ? (T)0 - a : a",
    doc = "|a| (abs of the most negative integer wraps to itself; bool: a)" },
  { name = "sign", group = "unary", arity = 1, dtypes = "all", expr = "a != a ? a : (T)((a > (T)0) - (a < (T)0))",
    int_expr = "(T)((a > (T)0) - (a < (T)0))", doc = "-1, 0 or 1 (NaN stays NaN; bool: a)" },
  { name = "relu", group = "unary", arity = 1, dtypes = "numeric", expr = "a < (T)0 ? (T)0 : a", doc = "max(a, 0); NaN stays NaN" },
  -- unary, float dtypes only
  { name = "exp", group = "math", arity = 1, dtypes = "float", expr = "exp(a)", half_expr = "kg_exp_fast(a)", doc = "e^a" },
  { name = "log", group = "math", arity = 1, dtypes = "float", expr = "log(a)", doc = "natural log; NaN below 0, -inf at 0" },
  { name = "sin", group = "trig", arity = 1, dtypes = "float", expr = "sin(a)", doc = "sine" },
  { name = "cos", group = "trig", arity = 1, dtypes = "float", expr = "cos(a)", doc = "cosine" },
  { name = "sqrt", group = "math", arity = 1, dtypes = "float", expr = "sqrt(a)", doc = "square root; NaN below 0" },
  { name = "rsqrt", group = "math", arity = 1, dtypes = "float", expr = "(T)1 / sqrt(a)", doc = "1 / sqrt(a)" },
  { name = "tanh", group = "trig", arity = 1, dtypes = "float", expr = "tanh(a)", doc = "hyperbolic tangent" },
  { name = "sigmoid", group = "act", arity = 1, dtypes = "float", expr = "(T)1 / ((T)1 + exp(-a))", doc = "1 / (1 + e^-a)" },
  { name = "gelu", group = "act", arity = 1, dtypes = "float",
    expr = "(T)0.5 * a * ((T)1 + erf(a * (T)0.70710678118654752440))", half_expr = "kg_gelu_fast(a)",
    doc = "a/2 * (1 + erf(a/sqrt 2))" },
  { name = "silu", group = "act", arity = 1, dtypes = "float", expr = "a / ((T)1 + exp(-a))", doc = "a * sigmoid(a)" },
  { name = "floor", group = "unary", arity = 1, dtypes = "numeric", expr = "floor(a)", int_expr = "a",
    doc = "round toward -inf (integers: the identity)" },
  { name = "ceil", group = "unary", arity = 1, dtypes = "numeric", expr = "ceil(a)", int_expr = "a",
    doc = "round toward +inf (integers: the identity)" },
  { name = "round", group = "unary", arity = 1, dtypes = "numeric", expr = "rint(a)", int_expr = "a",
    doc = "round half to even (integers: the identity)" },
  { name = "reciprocal", group = "math", arity = 1, dtypes = "float", expr = "(T)1 / a", doc = "1 / a" },
  -- data movement, any dtype
  { name = "copy", group = "core", arity = 1, dtypes = "all", expr = "a", moves = true,
    doc = "a, into out's layout (a strided copy: transposes, permutes, broadcasts)" },
}

-- cast between any two dtypes: one kernel per (source, destination). Its
-- conversions are fixed by the expander (elementwise.lua) and documented
-- in the README: float -> int truncates toward zero, saturates, NaN -> 0;
-- int -> narrower int wraps; anything -> bool is (x != 0).
M.cast = { name = "cast", doc = "convert to the output's dtype" }

-- Reductions (gen/reduce.lua). One entry per op; adding an entry (say, a sum
-- of squares: map = "x * x", combine = "a + b") is all a new reduction takes.
--   name      the op: kg_<name> is its entry point, KG_RED_<NAME> its enum
--   dtypes    "float", "numeric" or "all", as for element-wise ops
--   acc       the accumulator: "wide" = f32 for f32/f16/bf16, f64 for f64,
--             i64 for integers and bool; "compute" = the dtype's compute
--             type (f32 for f16/bf16, the integer itself otherwise)
--   out       the result's dtype: "same" = the input's; "wide" = the
--             input's for floats, i64 for integers and bool
--   identity  "0", "1", "lowest" (-inf, or the type's minimum) or "highest";
--             an op whose identity is lowest/highest has no value for an
--             empty reduced slice, and such a call is an error
--   map       what each element contributes, from x (default "x")
--   combine   value reductions: merges two partial results a and b
--   better    index reductions: true when value a beats value b; ties go to
--             the smaller index, so a NaN that beats everything is the first
--             NaN's index
--   finish    the result from the accumulator acc and the count n of
--             reduced elements (default "acc")
--   int_*     the expression for integer and bool dtypes, when it differs
--   with_values  index reductions: the name of the entry point that returns
--             the values and the indices together
-- Expressions are C, typed by T (the accumulator type), used verbatim in the
-- kernels and in the float64 / int64 CPU reference.
M.reduce = {
  { name = "sum", dtypes = "all", acc = "wide", out = "wide", identity = "0", combine = "a + b",
    doc = "sum of the elements (integers and bool sum in i64)" },
  { name = "mean", dtypes = "float", acc = "wide", out = "same", identity = "0", combine = "a + b",
    finish = "acc / (T)n", doc = "arithmetic mean (NaN for an empty slice)" },
  { name = "prod", dtypes = "all", acc = "wide", out = "wide", identity = "1", combine = "a * b",
    doc = "product of the elements (integers and bool multiply in i64, wrapping)" },
  { name = "norm", dtypes = "float", acc = "wide", out = "same", identity = "0", map = "x * x",
    combine = "a + b", finish = "sqrt(acc)", doc = "Euclidean (L2) norm: sqrt of the sum of squares" },
  { name = "max", dtypes = "all", acc = "compute", out = "same", identity = "lowest",
    combine = "(a != a || a > b) ? a : b", int_combine = "a > b ? a : b",
    doc = "largest element; NaN if any is NaN" },
  { name = "min", dtypes = "all", acc = "compute", out = "same", identity = "highest",
    combine = "(a != a || a < b) ? a : b", int_combine = "a < b ? a : b",
    doc = "smallest element; NaN if any is NaN" },
  { name = "argmax", dtypes = "numeric", acc = "compute", out = "same", identity = "lowest",
    better = "a > b || (a != a && b == b)", int_better = "a > b", with_values = "max_with_indices",
    doc = "index of the largest element (the first one; a NaN counts as the largest)" },
  { name = "argmin", dtypes = "numeric", acc = "compute", out = "same", identity = "highest",
    better = "a < b || (a != a && b == b)", int_better = "a < b", with_values = "min_with_indices",
    doc = "index of the smallest element (the first one; a NaN counts as the smallest)" },
}

-- Normalizations (gen/norm.lua): per row (the normalized elements of one
-- position of the other dims) a statistic, then an element-wise apply.
--   name     the op: KG_NORM_<NAME> its enum (entry points: runtime/kg_norm.h)
--   stats    what the row is reduced to (shared code in templates/norm.cuh):
--            "lse"     m = the row's maximum where finite, else 0 (the shift),
--                      s = sum of exp(x - m), lse = m + log(s)
--            "moments" mean = sum(x) / n, rstd = 1 / sqrt(sum((x-mean)^2) / n + eps)
--            "sumsq"   rstd = 1 / sqrt(sum(x^2) / n + eps)
--   axes     "one" (one axis), "any" (any set of axes, a reduction),
--            "last" (the last k dims) or "last1" (the last dim)
--   apply    the output element from x, the row's values (m, s, ls, lse, mean,
--            rstd) and, for the norms, w (weight, 1 when absent) and b (bias,
--            0 when absent); nil: the op writes only its row results
--   results  the per-row results it can return (from the row's values)
--   residual true: a fused form reads a residual r, writes h = x + r back
--            into it (rounded to the dtype) and normalizes h
-- Expressions are C, typed by T (float on the device for f32/f16/bf16,
-- double for f64 and in the float64 CPU reference); on the device exp() of a
-- float is 2^(x log2 e) on the special-function unit (templates/norm.cuh).
M.norm = {
  { name = "softmax", stats = "lse", axes = "one", apply = "exp(x - m) * ((T)1 / s)",
    doc = "exp(x - max) / sum(exp(x - max)) along one axis" },
  { name = "log_softmax", stats = "lse", axes = "one", apply = "x - m - ls",
    doc = "x - logsumexp(x) along one axis" },
  { name = "logsumexp", stats = "lse", axes = "any", results = { "lse" },
    doc = "log(sum(exp(x))) over any set of axes (a reduction)" },
  { name = "layer_norm", stats = "moments", axes = "last", apply = "(x - mean) * rstd * w + b",
    results = { "mean", "rstd" }, doc = "(x - mean) / sqrt(var + eps) * weight + bias over the last k dims" },
  { name = "rms_norm", stats = "sumsq", axes = "last1", apply = "x * rstd * w", residual = true,
    doc = "x / sqrt(mean(x^2) + eps) * weight over the last dim (and the fused residual form)" },
}

return M
