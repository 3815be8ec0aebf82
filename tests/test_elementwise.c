/*
 * test_elementwise.c - every element-wise op x dtype x layout variant on the
 * GPU against the CPU reference (generated from the same catalogue
 * expressions, computed in float64 / int64), over TESTING.md's element-wise
 * shapes, broadcasts, views and values. Skipped, with the reason, where there
 * is no CUDA device.
 *
 * Every case runs once per layout variant the call is eligible for (the
 * runtime's test hook forces each in turn), and each op x dtype asserts that
 * every variant ran somewhere in its cases. The perm variant has its own
 * tests: every permutation of 3-d and 4-d views (odd and vector-aligned
 * sizes, misaligned, broadcast, in place), and CPU tests of its planner that
 * walk every tile of a plan and check it covers each output element once,
 * reading the right input element.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "internal.h"
#include "kg_ew_table.h"
#include "kg_params.h"
#include "kg_reference.h"
#include "kg_test.h"
#include "layout.h"

/* runtime/elementwise.c: the perm variant's plan (kg_params.h; tperm's is in layout.h) */
int kg_ew_plan_perm(const kg_layout *L, const void *const *ptrs, const size_t *es, int vec, kg_perm *o);

/* ---- views: a shape, strides and an offset into a storage buffer -------- */

typedef struct {
    int ndim;
    int64_t shape[KG_MAX_DIMS];
    int64_t strides[KG_MAX_DIMS];
    int64_t offset; /* elements */
} view;

static view dense(int ndim, const int64_t *shape)
{
    view v;
    memset(&v, 0, sizeof v);
    v.ndim = ndim;
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        v.shape[d] = shape[d];
        v.strides[d] = s;
        s *= shape[d];
    }
    return v;
}

/* Every `step`-th element: strides scaled (a non-dense view). */
static view stepped(view v, int64_t step)
{
    for (int d = 0; d < v.ndim; d++)
        v.strides[d] *= step;
    return v;
}

static view offset(view v, int64_t off)
{
    v.offset += off;
    return v;
}

static int64_t numel(const view *v)
{
    int64_t n = 1;
    for (int d = 0; d < v->ndim; d++)
        n *= v->shape[d];
    return n;
}

/* Elements of storage the view needs. */
static int64_t storage(const view *v)
{
    int64_t end = v->offset;
    for (int d = 0; d < v->ndim; d++) {
        if (v->shape[d] == 0)
            return v->offset + 1;
        end += (v->shape[d] - 1) * v->strides[d];
    }
    return end + 1;
}

#define S(...) ((const int64_t[]){__VA_ARGS__})

/* ---- values ---------------------------------------------------------------- */

enum fill { FILL_MIXED, FILL_NAN3 };

/* A NaN of dtype dt (float) with r's sign and payload bits (quiet or
   signalling, the payload never 0) at element i: copies must move it as
   it is (run_case compares their bits) */
static void set_nan_bits(void *buf, kg_dtype dt, int64_t i, uint64_t r)
{
    switch (dt) {
    case KG_F32: {
        uint32_t u = 0x7f800000u | ((uint32_t)r & 0x807fffffu);
        ((uint32_t *)buf)[i] = (u & 0x007fffffu) ? u : u | 1u;
        break;
    }
    case KG_F64: {
        uint64_t u = 0x7ff0000000000000ull | (r & 0x800fffffffffffffull);
        ((uint64_t *)buf)[i] = (u & 0x000fffffffffffffull) ? u : u | 1u;
        break;
    }
    case KG_F16: {
        uint16_t u = (uint16_t)(0x7c00u | ((uint32_t)r & 0x83ffu));
        ((uint16_t *)buf)[i] = (u & 0x03ffu) ? u : (uint16_t)(u | 1u);
        break;
    }
    default: { /* bf16 */
        uint16_t u = (uint16_t)(0x7f80u | ((uint32_t)r & 0x807fu));
        ((uint16_t *)buf)[i] = (u & 0x007fu) ? u : (uint16_t)(u | 1u);
        break;
    }
    }
}

static void fill(void *buf, kg_dtype dt, int64_t n, enum fill how, uint64_t *rng)
{
    static const double fspecial[] = {0,
                                      -0.0,
                                      0.001,
                                      -0.001,
                                      0.25,
                                      -0.25,
                                      1,
                                      -1,
                                      1.5707963267948966,
                                      -1.5707963267948966,
                                      3.141592653589793,
                                      -3.141592653589793,
                                      INFINITY,
                                      -INFINITY,
                                      NAN};
    static const int64_t ispecial[] = {0, 1, -1, 127, -127, -128};
    for (int64_t i = 0; i < n; i++) {
        const uint64_t r = kt_next(rng);
        if (kt_is_float(dt)) {
            double x;
            if (how == FILL_NAN3 && i % 3 == 0) {
                set_nan_bits(buf, dt, i, r >> 7);
                continue;
            } else if (r % 3 == 0) {
                const uint64_t k = (r >> 8) % (sizeof fspecial / sizeof fspecial[0] + 2);
                const double big = dt == KG_F16 ? 13437.7 : 1e20;
                x = k < sizeof fspecial / sizeof fspecial[0] ? fspecial[k] : (k % 2 ? big : -big);
            } else
                x = kt_uniform(rng, -4, 4);
            kt_set(buf, dt, i, x);
        } else {
            int64_t x;
            if (r % 3 == 0) {
                const uint64_t k = (r >> 8) % (sizeof ispecial / sizeof ispecial[0] + 2);
                const int64_t max = dt == KG_I32 ? INT32_MAX : dt == KG_I64 ? INT64_MAX : 255;
                const int64_t min = dt == KG_I32 ? INT32_MIN : dt == KG_I64 ? INT64_MIN : 0;
                x = k < sizeof ispecial / sizeof ispecial[0] ? ispecial[k] : (k % 2 ? max : min);
            } else
                x = (int64_t)kt_next(rng);
            kt_set_i(buf, dt, i, dt == KG_BOOL ? (x & 1) : x);
        }
    }
}

/* ---- the reference of one element ------------------------------------------- */

static int64_t wrap(kg_dtype dt, int64_t v)
{
    switch (dt) {
    case KG_I32: return (int32_t)(uint32_t)(uint64_t)v;
    case KG_U8: return (uint8_t)(uint64_t)v;
    case KG_BOOL: return v != 0;
    default: return v;
    }
}

static int64_t saturate(kg_dtype dt, double x)
{
    if (isnan(x))
        return 0;
    const double lo = dt == KG_I32 ? -2147483648.0 : dt == KG_I64 ? -9223372036854775808.0 : 0;
    const double hi = dt == KG_I32 ? 2147483648.0 : dt == KG_I64 ? 9223372036854775808.0 : 256.0;
    if (x <= lo)
        return dt == KG_I32 ? INT32_MIN : dt == KG_I64 ? INT64_MIN : 0;
    if (x >= hi)
        return dt == KG_I32 ? INT32_MAX : dt == KG_I64 ? INT64_MAX : 255;
    if (dt == KG_U8 && x >= 255)
        return 255;
    return (int64_t)x; /* truncates toward zero */
}

typedef struct {
    int is_float;
    double f;
    int64_t i;
} value;

/* The cast README specifies: floats truncate and saturate into integers
   (NaN -> 0), integers wrap, anything -> bool is != 0, i64 -> float rounds
   through f64. */
static value ref_cast(kg_dtype src, kg_dtype dst, const void *buf, int64_t at)
{
    value v = {0, 0, 0};
    const int sf = kt_is_float(src);
    if (kt_is_float(dst)) {
        v.is_float = 1;
        v.f = kt_round(dst, sf ? kt_get(buf, src, at) : (double)kt_get_i(buf, src, at));
    } else if (dst == KG_BOOL) {
        v.i = sf ? kt_get(buf, src, at) != 0 : kt_get_i(buf, src, at) != 0;
    } else {
        v.i = sf ? saturate(dst, kt_get(buf, src, at)) : wrap(dst, kt_get_i(buf, src, at));
    }
    return v;
}

static value ref_op(kg_op op, kg_dtype dt, kg_dtype out_dt, const kg_op_info *info, void *const *bufs,
                    const int64_t *at)
{
    value v = {0, 0, 0};
    if (op == KG_OP_CAST)
        return ref_cast(dt, out_dt, bufs[0], at[0]);
    if (kt_is_float(dt)) {
        double in[3];
        for (int k = 0; k < info->arity; k++)
            in[k] =
                (info->cond_first && k == 0) ? (double)kt_get_i(bufs[k], KG_BOOL, at[k]) : kt_get(bufs[k], dt, at[k]);
        const double r = kg_ref_ops[op].f(in);
        if (out_dt == KG_BOOL)
            v.i = r != 0;
        else {
            v.is_float = 1;
            v.f = kt_round(out_dt, r);
        }
    } else {
        int64_t in[3];
        for (int k = 0; k < info->arity; k++)
            in[k] = kt_get_i(bufs[k], (info->cond_first && k == 0) ? KG_BOOL : dt, at[k]);
        v.i = wrap(out_dt, kg_ref_ops[op].i(in));
    }
    return v;
}

/* ---- how a result is compared ------------------------------------------------ */

/* Ops whose float result a correct kernel returns exactly: the exact value
   of the op on the inputs is representable in the output dtype, or (casts)
   is rounded once to nearest even (README "cast": one rounding; i32/i64
   through f64, as ref_cast does). The kernels compute these in the
   catalogue's expression on the loaded values (f16/bf16 in f32, exactly) and
   store with __float2half_rn / __float2bfloat16_rn / __double2half /
   __double2bfloat16 / a plain conversion (gen/elementwise.lua cast_plan,
   gen/dtypes.lua), all round to nearest even. Copies and identity casts
   move bits: run_case compares their raw bits besides (moves_bits). */
static int exact_op(kg_op op, kg_dtype out_dt)
{
    switch (op) {
    case KG_OP_COPY:
    case KG_OP_NEG:
    case KG_OP_ABS:
    case KG_OP_SIGN:
    case KG_OP_RELU:
    case KG_OP_FLOOR:
    case KG_OP_CEIL:
    case KG_OP_ROUND:
    case KG_OP_MAXIMUM:
    case KG_OP_MINIMUM:
    case KG_OP_WHERE: return 1;
    case KG_OP_CAST: return kt_is_float(out_dt);
    default: return 0;
    }
}

/* Element i of buf (dtype dt) against want, the reference already rounded
   to dt: bit for bit when `exact` (so -0 is not +0 and one ulp is a
   failure), with any NaN matching any NaN (the README documents no NaN
   payload for computed results; copies and identity casts are compared
   bit for bit with their input by run_case, moves_bits); else within
   rtol/atol (kt_close). */
static int float_matches(const void *buf, kg_dtype dt, int64_t i, double want, int exact, double rtol, double atol)
{
    const double got = kt_get(buf, dt, i);
    if (!exact)
        return kt_close(got, want, rtol, atol);
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    switch (dt) {
    case KG_F32: {
        const float w = (float)want;
        return memcmp((const float *)buf + i, &w, sizeof w) == 0;
    }
    case KG_F64: return memcmp((const double *)buf + i, &want, sizeof want) == 0;
    case KG_F16: return ((const uint16_t *)buf)[i] == kt_to_f16(want);
    case KG_BF16: return ((const uint16_t *)buf)[i] == kt_to_bf16(want);
    default: return 0;
    }
}

/* Element i of an integer or bool output against want. A bool is read as
   its raw byte, which must be exactly 0 or 1 (kt_get_i reads any non-zero
   byte as true, so the 0xFF poison of an unwritten element would pass). */
static int int_matches(const void *buf, kg_dtype dt, int64_t i, int64_t want, int64_t *got)
{
    *got = dt == KG_BOOL ? (int64_t)((const uint8_t *)buf)[i] : kt_get_i(buf, dt, i);
    return *got == want;
}

/* The comparison itself, on the CPU: a cast that truncates f32 to bf16 (one
   bf16 ulp at most, under the bf16 tolerance 1.6e-2) fails the exact
   comparison, as does -0 for +0; any NaN matches any NaN; an unwritten bool
   (the 0xFF poison, true for kt_get_i) fails. */
Test(compare, exact_results_are_bits_and_bools_are_0_or_1)
{
    uint64_t r = kt_seed();
    enum { N = 256 };
    uint16_t trunc[N], rne[N];
    double want[N];
    int differ = 0;
    double rtol, atol;
    kt_tolerance(KG_BF16, &rtol, &atol);
    for (int i = 0; i < N; i++) {
        const float x = (float)kt_uniform(&r, -4, 4);
        uint32_t u;
        memcpy(&u, &x, sizeof u);
        trunc[i] = (uint16_t)(u >> 16); /* round toward zero */
        want[i] = kt_round(KG_BF16, x);
        rne[i] = kt_to_bf16(x);
        cr_assert(float_matches(rne, KG_BF16, i, want[i], 1, 0, 0), "bf16 of %.9g: round to nearest even fails",
                  (double)x);
        cr_assert(float_matches(trunc, KG_BF16, i, want[i], 0, rtol, atol),
                  "truncating %.9g fails the bf16 tolerance too (the exact check is not what catches it here)",
                  (double)x);
        differ += !float_matches(trunc, KG_BF16, i, want[i], 1, 0, 0);
    }
    /* x's 16 dropped bits are above half of a bf16 ulp about half the time */
    cr_assert_gt(differ, N / 8,
                 "a truncating f32 -> bf16 cast failed the exact check on only %d of %d values (seed %llu)", differ, N,
                 (unsigned long long)kt_seed());
    const float mz = -0.0f, q = NAN, q2 = -NAN;
    cr_assert(!float_matches(&mz, KG_F32, 0, 0.0, 1, 0, 0), "-0 matched +0 exactly");
    cr_assert(float_matches(&mz, KG_F32, 0, -0.0, 1, 0, 0));
    cr_assert(float_matches(&q2, KG_F32, 0, (double)q, 1, 0, 0), "NaNs of other bits must match");
    cr_assert(!float_matches(&q, KG_F32, 0, 1.0, 1, 0, 0) && !float_matches(&mz, KG_F32, 0, NAN, 1, 0, 0));
    const uint8_t bools[3] = {0, 1, 0xff};
    int64_t got;
    cr_assert(int_matches(bools, KG_BOOL, 0, 0, &got) && int_matches(bools, KG_BOOL, 1, 1, &got));
    cr_assert_eq(kt_get_i(bools, KG_BOOL, 2), 1, "kt_get_i reads 0xFF as true");
    cr_assert(!int_matches(bools, KG_BOOL, 2, 1, &got), "the 0xFF poison matched true");
    cr_assert_eq(got, 0xff);
}

/* ---- one case: upload, run each variant, compare every element ------------ */

/* 1 where op over dt -> out_dt moves its input's bits (README "cast":
   copies and identity casts; bool aside, whose copy stores 0 or 1) */
static int moves_bits(kg_op op, kg_dtype dt, kg_dtype out_dt)
{
    return (op == KG_OP_COPY || op == KG_OP_CAST) && dt == out_dt && dt != KG_BOOL;
}

/* The raw bits of element i of a buffer of es-byte elements */
static uint64_t raw_bits(const void *buf, size_t es, int64_t i)
{
    uint64_t u = 0;
    memcpy(&u, (const char *)buf + (size_t)i * es, es);
    return u;
}

typedef struct {
    const char *what;
    int n_in;
    view in[3];
    view out;
    int inplace; /* input index the output aliases, or -1 */
    enum fill fill;
    int all_variants; /* 0: the runtime's own choice only (large cases) */
} ew_case;

static kg_context *ctx;
static uint64_t rng;

static void setup(void)
{
    ctx = kt_open_gpu();
    rng = kt_seed();
}

static void teardown(void) { kg_close(ctx); }

/* The variant run_case forces where a case runs the runtime's own choice
   (-1: none; the tplane test forces KG_EW_TPLANE). */
static int force_variant = -1;

/* Runs `c` for op over dtype dt (output out_dt); ORs the variants that ran
   into *ran. */
static void run_case(kg_op op, kg_dtype dt, kg_dtype out_dt, const ew_case *c, unsigned *ran)
{
    const kg_op_info *info = kg_op_get_info(op);
    void *host[3], *dev[3];
    kg_dtype dts[3];
    for (int k = 0; k < c->n_in; k++) {
        dts[k] = (info->cond_first && k == 0) ? KG_BOOL : dt;
        const int64_t n = storage(&c->in[k]);
        const size_t es = kg_dtype_size(dts[k]);
        host[k] = malloc((size_t)n * es);
        cr_assert_not_null(host[k]);
        fill(host[k], dts[k], n, c->fill, &rng);
        dev[k] = kt_alloc(ctx, (size_t)n * es);
        kt_upload(ctx, dev[k], host[k], (size_t)n * es);
    }
    const size_t oes = kg_dtype_size(out_dt);
    if (c->inplace >= 0 && oes != kg_dtype_size(dts[c->inplace])) {
        /* in place with another element size is not "the same elements": refused */
        kg_tensor a = kg_tensor_contiguous(dev[c->inplace], dts[c->inplace], c->in[0].ndim, c->in[0].shape);
        kg_tensor o = a;
        o.dtype = out_dt;
        const kg_tensor *ins[3] = {&a, &a, &a}; /* where's outputs match a's size: never here */
        cr_assert_eq(kg_elementwise(ctx, op, &o, ins, c->n_in), KG_ERR_INVALID_ARGUMENT,
                     "%s %s->%s in place over a different element size was not refused", info->name, kg_dtype_name(dt),
                     kg_dtype_name(out_dt));
        for (int k = 0; k < c->n_in; k++) {
            free(host[k]);
            KT_OK(ctx, kg_free(ctx, dev[k]));
        }
        return;
    }
    const int64_t on = c->inplace >= 0 ? storage(&c->in[c->inplace]) : storage(&c->out);
    void *odev = c->inplace >= 0 ? dev[c->inplace] : kt_alloc(ctx, (size_t)on * oes);
    void *ohost = malloc((size_t)on * oes);
    cr_assert_not_null(ohost);

    kg_tensor t[3], o;
    for (int k = 0; k < c->n_in; k++) {
        memset(&t[k], 0, sizeof t[k]);
        t[k].data = (char *)dev[k] + c->in[k].offset * (int64_t)kg_dtype_size(dts[k]);
        t[k].dtype = dts[k];
        t[k].ndim = c->in[k].ndim;
        memcpy(t[k].shape, c->in[k].shape, sizeof t[k].shape);
        memcpy(t[k].strides, c->in[k].strides, sizeof t[k].strides);
    }
    const view *ov = c->inplace >= 0 ? &c->in[c->inplace] : &c->out;
    memset(&o, 0, sizeof o);
    o.data = (char *)odev + ov->offset * (int64_t)oes;
    o.dtype = out_dt;
    o.ndim = ov->ndim;
    memcpy(o.shape, ov->shape, sizeof o.shape);
    memcpy(o.strides, ov->strides, sizeof o.strides);

    double rtol, atol;
    kt_tolerance(kt_is_float(dt) ? dt : out_dt, &rtol, &atol);
    if (op == KG_OP_CAST)
        kt_tolerance(out_dt, &rtol, &atol);
    const int exact = exact_op(op, out_dt), bits = moves_bits(op, dt, out_dt);
    const int64_t n = numel(ov);
    const int nv = c->all_variants ? KG_EW_VARIANT_COUNT : 1;
    for (int vi = 0; vi < nv; vi++) {
        kg_test_force_ew_variant(ctx, c->all_variants ? vi : force_variant);
        if (c->inplace >= 0) /* restore the input the last run overwrote */
            kt_upload(ctx, dev[c->inplace], host[c->inplace],
                      (size_t)storage(&c->in[c->inplace]) * kg_dtype_size(dts[c->inplace]));
        else
            KT_OK(ctx, kg_memset(ctx, odev, 0xff, (size_t)on * oes)); /* poison: NaN / -1 */
        const kg_tensor *ins[3] = {&t[0], &t[1], &t[2]};
        KT_OK(ctx, kg_elementwise(ctx, op, &o, ins, c->n_in));
        KT_OK(ctx, kg_sync(ctx));
        const int used = kg_test_last_ew_variant(ctx);
        if (n > 0)
            *ran |= 1u << used;
        kt_download(ctx, ohost, odev, (size_t)on * oes);
        /* walk the output's elements in row-major order */
        int64_t idx[KG_MAX_DIMS] = {0};
        for (int64_t e = 0; e < n; e++) {
            int64_t at[3], oat = ov->offset;
            for (int d = 0; d < ov->ndim; d++)
                oat += idx[d] * ov->strides[d];
            for (int k = 0; k < c->n_in; k++) {
                const view *iv = &c->in[k];
                at[k] = iv->offset;
                for (int d = 0; d < iv->ndim; d++) {
                    const int od = d + ov->ndim - iv->ndim;
                    at[k] += (iv->shape[d] == 1 ? 0 : idx[od]) * iv->strides[d];
                }
            }
            const value want = ref_op(op, dt, out_dt, info, host, at);
            if (bits && raw_bits(ohost, oes, oat) != raw_bits(host[0], oes, at[0]))
                cr_assert_fail("%s %s->%s, case %s, variant %d, element %lld: bits %#llx, want the input's %#llx "
                               "(seed %llu)",
                               info->name, kg_dtype_name(dt), kg_dtype_name(out_dt), c->what, used, (long long)e,
                               (unsigned long long)raw_bits(ohost, oes, oat),
                               (unsigned long long)raw_bits(host[0], oes, at[0]), (unsigned long long)kt_seed());
            if (want.is_float) {
                const double got = kt_get(ohost, out_dt, oat);
                if (!float_matches(ohost, out_dt, oat, want.f, exact, rtol, atol)) {
                    double a0 = c->n_in > 0 ? kt_get(host[0], dts[0], at[0]) : 0;
                    double a1 = c->n_in > 1 ? kt_get(host[1], dts[1], at[1]) : 0;
                    cr_assert_fail("%s %s->%s, case %s, variant %d, element %lld: got %.9g, want %.9g%s "
                                   "(inputs %.9g, %.9g) (seed %llu)",
                                   info->name, kg_dtype_name(dt), kg_dtype_name(out_dt), c->what, used, (long long)e,
                                   got, want.f, exact ? " bit for bit" : "", a0, a1, (unsigned long long)kt_seed());
                }
            } else {
                int64_t got;
                if (!int_matches(ohost, out_dt, oat, want.i, &got)) {
                    double a0 = c->n_in > 0 ? kt_get(host[0], dts[0], at[0]) : 0;
                    double a1 = c->n_in > 1 ? kt_get(host[1], dts[1], at[1]) : 0;
                    cr_assert_fail("%s %s->%s, case %s, variant %d, element %lld: got %lld, want %lld "
                                   "(inputs %.17g, %.17g) (seed %llu)",
                                   info->name, kg_dtype_name(dt), kg_dtype_name(out_dt), c->what, used, (long long)e,
                                   (long long)got, (long long)want.i, a0, a1, (unsigned long long)kt_seed());
                }
            }
            for (int d = ov->ndim - 1; d >= 0; d--) {
                if (++idx[d] < ov->shape[d])
                    break;
                idx[d] = 0;
            }
        }
    }
    kg_test_force_ew_variant(ctx, -1);
    for (int k = 0; k < c->n_in; k++) {
        free(host[k]);
        KT_OK(ctx, kg_free(ctx, dev[k]));
    }
    if (c->inplace < 0)
        KT_OK(ctx, kg_free(ctx, odev));
    free(ohost);
}

/* ---- the cases (TESTING.md) ----------------------------------------------- */

static int n_cases;
static ew_case cases[64];

static void add_case(const char *what, int n_in, view a, view b, view c3, view out, int inplace, enum fill f, int all)
{
    ew_case *c = &cases[n_cases++];
    c->what = what;
    c->n_in = n_in;
    c->in[0] = a;
    c->in[1] = b;
    c->in[2] = c3;
    c->out = out;
    c->inplace = inplace;
    c->fill = f;
    c->all_variants = all;
}

/* Builds the case list for ops of `arity` inputs. Broadcast pairs apply to
   the first two inputs; a third input (where) takes the output's shape. */
static void build_cases(int arity)
{
    n_cases = 0;
    static const struct {
        int n;
        int64_t s[3];
    } same[] = {{1, {0}}, {3, {1, 0, 3}}, {0, {0}}, {1, {1}}, {1, {20}}, {1, {23}}, {1, {812}}};
    static const char *same_names[] = {"(0,)", "(1,0,3)", "()", "(1,)", "(20,)", "(23,)", "(812,)"};
    for (int i = 0; i < 7; i++) {
        view v = dense(same[i].n, same[i].s);
        add_case(same_names[i], arity, v, v, v, v, -1, FILL_MIXED, 1);
    }
    view big = dense(2, S(1029, 917));
    add_case("(1029,917)", arity, big, big, big, big, -1, FILL_MIXED, 0);
    view r = dense(2, S(64, 48)), row = dense(1, S(48));
    if (arity >= 2) {
        static const struct {
            int na, nb, no;
            int64_t a[3], b[3], o[3];
            const char *name;
        } pairs[] = {
            {1, 0, 1, {1}, {0}, {1}, "(1,)/()"},
            {1, 0, 1, {2}, {0}, {2}, "(2,)/()"},
            {1, 1, 1, {1}, {2}, {2}, "(1,)/(2,)"},
            {2, 1, 2, {2, 1}, {2}, {2, 2}, "(2,1)/(2,)"},
            {2, 1, 2, {1, 2}, {2}, {1, 2}, "(1,2)/(2,)"},
            {2, 1, 2, {3, 2}, {2}, {3, 2}, "(3,2)/(2,)"},
            {3, 1, 3, {1, 3, 2}, {2}, {1, 3, 2}, "(1,3,2)/(2,)"},
            {3, 2, 3, {1, 3, 2}, {3, 2}, {1, 3, 2}, "(1,3,2)/(3,2)"},
            {3, 2, 3, {3, 1, 2}, {3, 2}, {3, 3, 2}, "(3,1,2)/(3,2)"},
            {3, 0, 3, {2, 3, 2}, {0}, {2, 3, 2}, "(2,3,2)/()"},
            {3, 3, 3, {3, 1, 2}, {1, 3, 2}, {3, 3, 2}, "(3,1,2)/(1,3,2)"},
            {3, 3, 3, {0, 1, 3}, {0, 10, 3}, {0, 10, 3}, "(0,1,3)/(0,10,3)"},
        };
        for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
            view a = dense(pairs[i].na, pairs[i].a), b = dense(pairs[i].nb, pairs[i].b),
                 o = dense(pairs[i].no, pairs[i].o);
            add_case(pairs[i].name, arity, a, b, o, o, -1, FILL_MIXED, 1);
            add_case(pairs[i].name, arity, stepped(a, 2), stepped(b, 3), stepped(o, 2), o, -1, FILL_MIXED, 1);
        }
        add_case("(64,48)/(48,)", arity, r, row, r, r, -1, FILL_MIXED, 1);
        add_case("(48,)/(64,48) into a strided out", arity, row, r, r, stepped(r, 2), -1, FILL_MIXED, 1);
    } else {
        add_case("(64,48)", arity, r, r, r, r, -1, FILL_MIXED, 1);
        add_case("(64,48) into a strided out", arity, r, r, r, stepped(r, 2), -1, FILL_MIXED, 1);
    }
    /* views */
    view t = dense(2, S(357, 789));
    t.strides[0] = 1;
    t.strides[1] = 357; /* (789,357) transposed */
    view tout = dense(2, S(357, 789));
    add_case("(789,357)T", arity, t, tout, tout, tout, -1, FILL_MIXED, 1);
    view half = stepped(dense(1, S(1000)), 2);
    add_case("every other element", arity, half, dense(1, S(1000)), half, dense(1, S(1000)), -1, FILL_MIXED, 1);
    view sl = dense(2, S(40, 50));
    sl.strides[0] = 150;
    sl.offset = 50; /* x[:, 1, ...] of a (40,3,50) */
    add_case("x[:,1,...]", arity, sl, dense(2, S(40, 50)), sl, dense(2, S(40, 50)), -1, FILL_MIXED, 1);
    view ex = dense(2, S(40, 64));
    ex.strides[0] = 0; /* a (64,) expanded to (40,64) */
    add_case("expanded", arity, ex, dense(2, S(40, 64)), ex, dense(2, S(40, 64)), -1, FILL_MIXED, 1);
    view mis = offset(dense(1, S(1001)), 1);
    add_case("misaligned", arity, mis, mis, mis, offset(dense(1, S(1001)), 1), -1, FILL_MIXED, 1);
    view ip = dense(1, S(333));
    add_case("in place", arity, ip, ip, ip, ip, arity == 3 ? 1 : 0, FILL_MIXED, 1);
    add_case("every third NaN", arity, dense(1, S(300)), dense(1, S(300)), dense(1, S(300)), dense(1, S(300)), -1,
             FILL_NAN3, 1);
}

static void check_op_dtype(kg_op op, kg_dtype dt, kg_dtype out_dt)
{
    unsigned ran = 0;
    if (!kt_take(16)) /* sanitizer mode (kg_test.h): a seeded sample of the (op, dtype) pairs */
        return;
    for (int i = 0; i < n_cases; i++)
        run_case(op, dt, out_dt, &cases[i], &ran);
    /* (tperm, outside kg_ew_variant, may serve cases whose forced variant
       is not eligible: the runtime's own choice then) */
    cr_assert_eq(ran & ((1u << KG_EW_VARIANT_COUNT) - 1), (1u << KG_EW_VARIANT_COUNT) - 1,
                 "%s %s->%s: variants run %#x, want all of them",
                 kg_op_get_info(op)->name, kg_dtype_name(dt), kg_dtype_name(out_dt), ran);
}

static void check_arity(int arity)
{
    build_cases(arity);
    for (int op = KG_OP_NONE + 1; op < KG_OP_COUNT; op++) {
        const kg_op_info *info = kg_op_get_info((kg_op)op);
        if (info->arity != arity || op == KG_OP_CAST)
            continue;
        for (int dt = 0; dt < KG_DTYPE_COUNT; dt++)
            if (info->dtype_mask & (1u << dt))
                check_op_dtype((kg_op)op, (kg_dtype)dt, info->out_rule == KG_OUT_BOOL ? KG_BOOL : (kg_dtype)dt);
    }
}

TestSuite(elementwise, .init = setup, .fini = teardown, .timeout = 600);

Test(elementwise, unary_ops_every_dtype_and_variant) { check_arity(1); }
Test(elementwise, binary_ops_every_dtype_and_variant) { check_arity(2); }
Test(elementwise, where_every_dtype_and_variant) { check_arity(3); }

Test(elementwise, cast_between_every_pair_of_dtypes)
{
    build_cases(1);
    for (int s = 0; s < KG_DTYPE_COUNT; s++)
        for (int d = 0; d < KG_DTYPE_COUNT; d++)
            check_op_dtype(KG_OP_CAST, (kg_dtype)s, (kg_dtype)d);
}

/* ---- pinned semantics ------------------------------------------------------ */

static void run_small(kg_op op, kg_dtype dt, kg_dtype odt, int n, const void *a, const void *b, void *out)
{
    const size_t es = kg_dtype_size(dt), oes = kg_dtype_size(odt);
    void *da = kt_alloc(ctx, n * es), *db = kt_alloc(ctx, n * es), *dout = kt_alloc(ctx, n * oes);
    kt_upload(ctx, da, a, n * es);
    if (b)
        kt_upload(ctx, db, b, n * es);
    kg_tensor ta = kg_tensor_contiguous(da, dt, 1, S(n)), tb = kg_tensor_contiguous(db, dt, 1, S(n)),
              to = kg_tensor_contiguous(dout, odt, 1, S(n));
    const kg_tensor *in[2] = {&ta, &tb};
    KT_OK(ctx, kg_elementwise(ctx, op, &to, in, b ? 2 : 1));
    kt_download(ctx, out, dout, n * oes);
    kg_free(ctx, da);
    kg_free(ctx, db);
    kg_free(ctx, dout);
}

Test(semantics, integer_division_by_zero_is_zero_and_overflow_wraps, .init = setup, .fini = teardown)
{
    int32_t a[5] = {7, -7, 5, INT32_MIN, INT32_MAX}, b[5] = {0, 2, -1, -1, 0}, q[5];
    run_small(KG_OP_DIV, KG_I32, KG_I32, 5, a, b, q);
    cr_assert(q[0] == 0 && q[1] == -3 && q[2] == -5 && q[3] == INT32_MIN && q[4] == 0, "%d %d %d %d %d", q[0], q[1],
              q[2], q[3], q[4]);
    int32_t x[2] = {INT32_MAX, INT32_MIN}, y[2] = {1, -1}, s[2];
    run_small(KG_OP_ADD, KG_I32, KG_I32, 2, x, y, s);
    cr_assert(s[0] == INT32_MIN && s[1] == INT32_MAX);
    uint8_t u[2] = {3, 250}, v[2] = {5, 10}, w[2];
    run_small(KG_OP_SUB, KG_U8, KG_U8, 2, u, v, w);
    cr_assert(w[0] == 254 && w[1] == 240);
}

Test(semantics, float_division_log_nan_and_f16_overflow, .init = setup, .fini = teardown)
{
    float a[4] = {1, -1, 0, -2}, b[4] = {0, 0, 0, 1}, q[4];
    run_small(KG_OP_DIV, KG_F32, KG_F32, 4, a, b, q);
    cr_assert(isinf(q[0]) && q[0] > 0 && isinf(q[1]) && q[1] < 0 && isnan(q[2]) && q[3] == -2);
    float l[4];
    run_small(KG_OP_LOG, KG_F32, KG_F32, 4, a, NULL, l);
    cr_assert(l[0] == 0 && isnan(l[1]) && isinf(l[2]) && l[2] < 0 && isnan(l[3]));
    float m1[3] = {NAN, 1, 2}, m2[3] = {1, NAN, 3}, mx[3];
    run_small(KG_OP_MAXIMUM, KG_F32, KG_F32, 3, m1, m2, mx);
    cr_assert(isnan(mx[0]) && isnan(mx[1]) && mx[2] == 3);
    run_small(KG_OP_MINIMUM, KG_F32, KG_F32, 3, m1, m2, mx);
    cr_assert(isnan(mx[0]) && isnan(mx[1]) && mx[2] == 2);
    uint16_t h[2] = {kt_to_f16(60000), kt_to_f16(-60000)}, hs[2];
    run_small(KG_OP_ADD, KG_F16, KG_F16, 2, h, h, hs);
    cr_assert(isinf(kt_from_f16(hs[0])) && kt_from_f16(hs[0]) > 0 && isinf(kt_from_f16(hs[1])) &&
              kt_from_f16(hs[1]) < 0);
}

Test(semantics, cast_saturates_and_maps_nan_to_zero, .init = setup, .fini = teardown)
{
    float a[6] = {NAN, INFINITY, -INFINITY, 3e9f, -2.7f, 300.5f};
    int32_t i[6];
    run_small(KG_OP_CAST, KG_F32, KG_I32, 6, a, NULL, i);
    cr_assert(i[0] == 0 && i[1] == INT32_MAX && i[2] == INT32_MIN && i[3] == INT32_MAX && i[4] == -2 && i[5] == 300);
    uint8_t u[6];
    run_small(KG_OP_CAST, KG_F32, KG_U8, 6, a, NULL, u);
    cr_assert(u[0] == 0 && u[1] == 255 && u[2] == 0 && u[3] == 255 && u[4] == 0 && u[5] == 255);
    uint8_t bo[6];
    run_small(KG_OP_CAST, KG_F32, KG_BOOL, 6, a, NULL, bo);
    cr_assert(bo[0] == 1 && bo[1] == 1 && bo[4] == 1);
}

/* ---- graph capture, huge tensors, OOM, threads ----------------------------- */

Test(runtime, ops_are_captured_in_a_cuda_graph_and_replayed, .init = setup, .fini = teardown)
{
    const int n = 4099;
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *got = malloc(n * sizeof *got);
    void *da = kt_alloc(ctx, n * 4), *db = kt_alloc(ctx, n * 4), *dt = kt_alloc(ctx, n * 4),
         *dout = kt_alloc(ctx, n * 4);
    kg_tensor ta = kg_tensor_contiguous(da, KG_F32, 1, S(n)), tb = kg_tensor_contiguous(db, KG_F32, 1, S(n)),
              tt = kg_tensor_contiguous(dt, KG_F32, 1, S(n)), to = kg_tensor_contiguous(dout, KG_F32, 1, S(n));
    /* warm up outside capture (module load) on the default stream, on
       initialized inputs (compute-sanitizer's initcheck) */
    for (int i = 0; i < n; i++) a[i] = b[i] = 1.0f;
    kt_upload(ctx, da, a, n * 4);
    kt_upload(ctx, db, b, n * 4);
    KT_OK(ctx, kg_add(ctx, &tt, &ta, &tb));
    KT_OK(ctx, kg_sync(ctx));
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    KT_OK(ctx, kg_set_stream(ctx, (kg_stream)s));
    cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    KT_OK(ctx, kg_mul(ctx, &tt, &ta, &tb));
    KT_OK(ctx, kg_exp(ctx, &to, &tt));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    cr_assert_eq(cudaStreamEndCapture(s, &g), cudaSuccess);
    cr_assert_eq(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
    for (int rep = 0; rep < 2; rep++) {
        for (int i = 0; i < n; i++) {
            a[i] = (float)kt_uniform(&rng, -2, 2);
            b[i] = (float)kt_uniform(&rng, -2, 2);
        }
        kt_upload(ctx, da, a, n * 4);
        kt_upload(ctx, db, b, n * 4);
        cr_assert_eq(cudaGraphLaunch(ge, s), cudaSuccess);
        KT_OK(ctx, kg_sync(ctx));
        kt_download(ctx, got, dout, n * 4);
        for (int i = 0; i < n; i++) {
            const double want = exp((double)(float)((double)a[i] * b[i]));
            cr_assert(kt_close(got[i], want, 1.3e-6, 1e-5), "replay %d element %d: %g vs %g (seed %llu)", rep, i,
                      got[i], want, (unsigned long long)kt_seed());
        }
    }
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    KT_OK(ctx, kg_set_stream(ctx, NULL));
    cudaStreamDestroy(s);
    free(a);
    free(b);
    free(got);
    kg_free(ctx, da);
    kg_free(ctx, db);
    kg_free(ctx, dt);
    kg_free(ctx, dout);
}

/* Over 2^31 elements: the dense path (64-bit indices) and a broadcast that
   needs the nd64 variant. u8 keeps it at a few GB. */
Test(runtime, more_than_2_pow_31_elements, .init = setup, .fini = teardown, .timeout = 600)
{
    const int64_t rows = 3, cols = ((int64_t)1 << 30) + 7, n = rows * cols; /* 3.2e9 > 2^31 */
    uint8_t *a = malloc((size_t)n), *b = malloc((size_t)cols), *got = malloc((size_t)n);
    cr_assert(a && b && got);
    for (int64_t i = 0; i < n; i++)
        a[i] = (uint8_t)(i * 7 + (i >> 13));
    for (int64_t j = 0; j < cols; j++)
        b[j] = (uint8_t)(j * 13 + 5);
    void *da = kt_alloc(ctx, (size_t)n), *db = kt_alloc(ctx, (size_t)cols), *dout = kt_alloc(ctx, (size_t)n);
    kt_upload(ctx, da, a, (size_t)n);
    kt_upload(ctx, db, b, (size_t)cols);
    kg_tensor ta = kg_tensor_contiguous(da, KG_U8, 2, S(rows, cols)), tb = kg_tensor_contiguous(db, KG_U8, 1, S(cols)),
              to = kg_tensor_contiguous(dout, KG_U8, 2, S(rows, cols));
    KT_OK(ctx, kg_add(ctx, &to, &ta, &tb));
    cr_assert_eq(kg_test_last_ew_variant(ctx), KG_EW_ND64);
    kt_download(ctx, got, dout, (size_t)n);
    for (int64_t i = 0; i < n; i++)
        if (got[i] != (uint8_t)(a[i] + b[i % cols]))
            cr_assert_fail("broadcast add element %lld: %u vs %u", (long long)i, got[i], (uint8_t)(a[i] + b[i % cols]));
    kg_tensor fa = kg_tensor_contiguous(da, KG_U8, 1, S(n)), fo = kg_tensor_contiguous(dout, KG_U8, 1, S(n));
    KT_OK(ctx, kg_neg(ctx, &fo, &fa));
    cr_assert_eq(kg_test_last_ew_variant(ctx), KG_EW_DENSE);
    kt_download(ctx, got, dout, (size_t)n);
    for (int64_t i = 0; i < n; i++)
        if (got[i] != (uint8_t)(0 - a[i]))
            cr_assert_fail("dense neg element %lld: %u vs %u", (long long)i, got[i], (uint8_t)(0 - a[i]));
    kg_free(ctx, da);
    kg_free(ctx, db);
    kg_free(ctx, dout);
    free(a);
    free(b);
    free(got);
}

Test(runtime, out_of_memory_is_reported_and_the_context_stays_usable, .init = setup, .fini = teardown)
{
    void *p = (void *)1;
    kg_status st = kg_malloc(ctx, &p, (size_t)1 << 50);
    cr_assert_eq(st, KG_ERR_OUT_OF_MEMORY, "%s: %s", kg_status_name(st), kg_errmsg(ctx));
    cr_assert_null(p);
    cr_assert(strncmp(kg_errmsg(ctx), "out of memory: requested 1048576.00 GiB", 39) == 0, "%s", kg_errmsg(ctx));
    cr_assert_not_null(strstr(kg_errmsg(ctx), "GiB total"), "%s", kg_errmsg(ctx));
    float x[3] = {1, 2, 3}, y[3];
    run_small(KG_OP_NEG, KG_F32, KG_F32, 3, x, NULL, y);
    cr_assert(y[0] == -1 && y[1] == -2 && y[2] == -3);
}

Test(runtime, device_index_out_of_range, .init = setup, .fini = teardown)
{
    kg_context *c2 = NULL;
    kg_status st = kg_open(&c2, 4096);
    cr_assert_eq(st, KG_ERR_DEVICE_RANGE, "%s: %s", kg_status_name(st), kg_errmsg(c2));
    cr_assert(strncmp(kg_errmsg(c2), "device index out of range: 4096 (this machine has ", 50) == 0, "%s",
              kg_errmsg(c2));
    kg_close(c2);
}

static void *thread_body(void *arg)
{
    int *ok = arg;
    kg_context *c = NULL;
    if (kg_open(&c, 0) != KG_OK) {
        kg_close(c);
        return NULL;
    }
    const int n = 100000;
    float *h = malloc(n * sizeof *h);
    void *d = NULL;
    kg_malloc(c, &d, n * 4);
    for (int i = 0; i < n; i++)
        h[i] = (float)i;
    kg_copy_in(c, d, h, n * 4);
    kg_tensor t = kg_tensor_contiguous(d, KG_F32, 1, S(n));
    int good = 1;
    for (int rep = 0; rep < 50; rep++)
        good &= kg_add(c, &t, &t, &t) == KG_OK;
    good &= kg_copy_out(c, h, d, n * 4) == KG_OK;
    for (int i = 0; i < n && good; i++)
        good = h[i] == (float)i * 1125899906842624.0f; /* 2^50 */
    kg_free(c, d);
    kg_close(c);
    free(h);
    *ok = good;
    return NULL;
}

Test(runtime, separate_contexts_in_separate_threads, .init = setup, .fini = teardown)
{
    pthread_t th[4];
    int ok[4] = {0};
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, thread_body, &ok[i]);
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        cr_assert(ok[i], "thread %d computed a wrong result", i);
    }
}

/* ---- perm: transposes and permutations of any rank -------------------------- */

/* A view of a dense buffer whose dims are laid out in the order `perm`
   (perm[0] the slowest): logical shape `shape`, strides permuted. */
static view permuted(int nd, const int64_t *shape, const int *perm)
{
    view v;
    memset(&v, 0, sizeof v);
    v.ndim = nd;
    int64_t s = 1;
    for (int i = nd - 1; i >= 0; i--) {
        v.strides[perm[i]] = s;
        s *= shape[perm[i]];
    }
    for (int d = 0; d < nd; d++)
        v.shape[d] = shape[d];
    return v;
}

/* A dense buffer of shape P read with its dims in the order p: logical dim d
   is the buffer's dim p[d] (shape P[p[d]], the buffer's stride of that dim);
   the logical shape into shape. */
static view read_in_order(int nd, const int64_t *P, const int *p, int64_t *shape)
{
    int64_t ps[KG_MAX_DIMS], s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        ps[d] = s;
        s *= P[d];
    }
    view v;
    memset(&v, 0, sizeof v);
    v.ndim = nd;
    for (int d = 0; d < nd; d++) {
        shape[d] = v.shape[d] = P[p[d]];
        v.strides[d] = ps[p[d]];
    }
    return v;
}

/* The next permutation in lexicographic order; 0 after the last. */
static int next_perm(int *p, int n)
{
    int i = n - 2;
    while (i >= 0 && p[i] >= p[i + 1])
        i--;
    if (i < 0)
        return 0;
    int j = n - 1;
    while (p[j] <= p[i])
        j--;
    int t = p[i];
    p[i] = p[j];
    p[j] = t;
    for (int a = i + 1, b = n - 1; a < b; a++, b--) {
        t = p[a];
        p[a] = p[b];
        p[b] = t;
    }
    return 1;
}

/* The variant check_perms asserts: perm / permf, or tperm (the tperm tests
   set it; the tuning hook then routes every planned call to tperm), or
   tperma (want_tperm 2: the tperma tests), or either of tperm and tperms
   (3: the tperms tests, whose kernel takes only plans with a c axis of one
   dim; each test asserts that tperms ran from ran_total), or either of
   tperm and tpermc (4: the tpermc tests, forced; its kernel takes only
   plans whose c axis is one run of the output). */
static int want_tperm;
static unsigned ran_total; /* every variant check_perms saw run */

/* Every permutation of `shape` as input 0 (the others dense, or permuted the
   reverse way every other time), into a dense output; then a misaligned
   one, one with a broadcast input and one in place. Asserts the perm (or
   tperm) variant ran. */
static void check_perms(kg_op op, kg_dtype dt, kg_dtype odt, int nd, const int64_t *shape)
{
    if (!kt_take(4)) /* sanitizer mode (kg_test.h): a seeded sample of the shapes */
        return;
    const int arity = op == KG_OP_CAST ? 1 : kg_op_get_info(op)->arity;
    int perm[KG_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        perm[d] = d;
    unsigned ran = 0;
    int idx = 0;
    const view o = dense(nd, shape);
    do {
        int rev[KG_MAX_DIMS];
        for (int d = 0; d < nd; d++)
            rev[d] = perm[nd - 1 - d];
        const view a = permuted(nd, shape, perm), b = (idx++ % 2) ? permuted(nd, shape, rev) : o;
        ew_case c = {"every permutation", arity, {a, b, b}, o, -1, FILL_MIXED, 0};
        run_case(op, dt, odt, &c, &ran);
    } while (next_perm(perm, nd));
    for (int d = 0; d < nd; d++)
        perm[d] = nd - 1 - d;
    const view a = permuted(nd, shape, perm);
    ew_case mis = {"misaligned permutation", arity, {offset(a, 1), offset(o, 1), offset(o, 3)}, offset(o, 1), -1,
                   FILL_MIXED, 0};
    run_case(op, dt, odt, &mis, &ran);
    if (arity >= 2) {
        int64_t bs[KG_MAX_DIMS];
        for (int d = 0; d < nd; d++)
            bs[d] = d % 2 ? shape[d] : 1;
        ew_case bc = {"permutation with a broadcast input", arity, {a, dense(nd, bs), o}, o, -1, FILL_MIXED, 0};
        run_case(op, dt, odt, &bc, &ran);
        ew_case ip = {"permutation in place", arity, {a, o, o}, o, 1, FILL_MIXED, 0};
        run_case(op, dt, odt, &ip, &ran);
    }
    ran_total |= ran;
    if (want_tperm == 4)
        cr_assert(ran & ((1u << KG_EW_TPERMC) | (1u << KG_EW_TPERM)), "%s %s: neither tpermc nor tperm ran (variants %#x)",
                  kg_op_get_info(op)->name, kg_dtype_name(dt), ran);
    else if (want_tperm == 3)
        cr_assert(ran & ((1u << KG_EW_TPERMS) | (1u << KG_EW_TPERM)), "%s %s: neither tperms nor tperm ran (variants %#x)",
                  kg_op_get_info(op)->name, kg_dtype_name(dt), ran);
    else if (want_tperm == 2)
        cr_assert(ran & (1u << KG_EW_TPERMA), "%s %s: tperma never ran (variants %#x)", kg_op_get_info(op)->name,
                  kg_dtype_name(dt), ran);
    else if (want_tperm)
        cr_assert(ran & (1u << KG_EW_TPERM), "%s %s: tperm never ran (variants %#x)", kg_op_get_info(op)->name,
                  kg_dtype_name(dt), ran);
    else
        cr_assert(ran & ((1u << KG_EW_PERM) | (1u << KG_EW_PERMF)), "%s %s: perm never ran (variants %#x)",
                  kg_op_get_info(op)->name, kg_dtype_name(dt), ran);
}

static void check_perm_shapes(kg_op op, kg_dtype dt, kg_dtype odt)
{
    check_perms(op, dt, odt, 2, S(6007 / 8, 503));
    check_perms(op, dt, odt, 3, S(37, 66, 45));
    check_perms(op, dt, odt, 3, S(24, 64, 40));
    check_perms(op, dt, odt, 4, S(5, 34, 7, 67));
    check_perms(op, dt, odt, 4, S(4, 16, 24, 64));
    check_perms(op, dt, odt, 3, S(7, 301, 5)); /* dims shorter than a tile: folded */
    check_perms(op, dt, odt, 4, S(5, 67, 3, 70));
}

/* (op, input dtype, output dtype) triples for the permutation tests */
typedef struct {
    kg_op op;
    kg_dtype dt, odt;
} tp_call;

/* The perm tests' calls, by test: copies, casts, ops of two and three
   inputs, integer ops */
static const struct {
    size_t n;
    tp_call c[5];
} perm_groups[] = {
    {5,
     {{KG_OP_COPY, KG_F32, KG_F32},
      {KG_OP_COPY, KG_BF16, KG_BF16},
      {KG_OP_COPY, KG_F64, KG_F64},
      {KG_OP_COPY, KG_U8, KG_U8},
      {KG_OP_COPY, KG_BOOL, KG_BOOL}}},
    {4,
     {{KG_OP_CAST, KG_BF16, KG_BF16},
      {KG_OP_CAST, KG_F16, KG_F32},
      {KG_OP_CAST, KG_F32, KG_BF16},
      {KG_OP_CAST, KG_I32, KG_I64}}},
    {5,
     {{KG_OP_ADD, KG_F32, KG_F32},
      {KG_OP_ADD, KG_BF16, KG_BF16},
      {KG_OP_MUL, KG_I64, KG_I64},
      {KG_OP_LT, KG_F16, KG_BOOL},
      {KG_OP_WHERE, KG_F32, KG_F32}}},
    {3, {{KG_OP_SUB, KG_U8, KG_U8}, {KG_OP_DIV, KG_I64, KG_I64}, {KG_OP_ADD, KG_BOOL, KG_BOOL}}},
};

/* perm and permf (tperm: the tests below) on every permutation of the perm
   shapes of each call of group g */
static void check_perm_group(int g)
{
    kg_test_ew_tune(KG_EW_TUNE_TPERM, 2);
    for (size_t i = 0; i < perm_groups[g].n; i++)
        check_perm_shapes(perm_groups[g].c[i].op, perm_groups[g].c[i].dt, perm_groups[g].c[i].odt);
}

Test(perm, copy_every_permutation, .init = setup, .fini = teardown, .timeout = 600) { check_perm_group(0); }

Test(perm, cast_every_permutation, .init = setup, .fini = teardown, .timeout = 600) { check_perm_group(1); }

Test(perm, binary_and_where_every_permutation, .init = setup, .fini = teardown, .timeout = 600)
{
    check_perm_group(2);
}

Test(perm, integer_ops_every_permutation, .init = setup, .fini = teardown, .timeout = 600) { check_perm_group(3); }

/* Persistent perm blocks (fewer blocks than tiles): a block takes several
   tiles in turn. */
Test(perm, persistent_blocks_every_permutation, .init = setup, .fini = teardown, .timeout = 600)
{
    kg_test_ew_tune(KG_EW_TUNE_TPERM, 2);
    kg_test_ew_tune(KG_EW_TUNE_PERM_BLOCKS_PER_SM, 1);
    check_perm_shapes(KG_OP_COPY, KG_BF16, KG_BF16);
    check_perm_shapes(KG_OP_COPY, KG_F32, KG_F32);
    check_perm_shapes(KG_OP_CAST, KG_F16, KG_F32);
    check_perm_shapes(KG_OP_ADD, KG_BF16, KG_BF16);
    check_perm_shapes(KG_OP_WHERE, KG_F32, KG_F32);
    kg_test_ew_tune(KG_EW_TUNE_PERM_BLOCKS_PER_SM, 0);
}

/* A permutation that keeps an odd inner dim in place (no vector fits) runs
   rows: each row's offsets once, lanes along it. By default only for
   elements of up to 2 bytes (nd32 is faster for wider ones); the tuning
   hook opens it to every dtype here, so the kernel is checked on each. */
Test(perm, inner_dim_in_place_runs_rows, .init = setup, .fini = teardown)
{
    kg_test_ew_tune(KG_EW_TUNE_TPERM, 2); /* rows and nd32 (tperm takes these by default) */
    kg_test_ew_tune(KG_EW_TUNE_ROWS_MAX_BYTES, 8);
    kg_test_ew_tune(KG_EW_TUNE_ROWS_MIN_WARPS, 0); /* these tensors are small */
    static const struct {
        int nd;
        int64_t s[4];
        int perm[4];
    } cs[] = {{3, {37, 66, 45}, {1, 0, 2}}, {4, {5, 34, 7, 67}, {2, 0, 1, 3}}, {3, {3, 101, 33}, {1, 0, 2}},
              {3, {40, 31, 9}, {1, 0, 2}}, {4, {6, 5, 11, 17}, {1, 2, 0, 3}}}; /* 32, 8 and 4 lanes per row */
    const kg_dtype dts[] = {KG_F32, KG_BF16, KG_U8, KG_F64};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
            unsigned ran = 0;
            const view a = permuted(cs[i].nd, cs[i].s, cs[i].perm), o = dense(cs[i].nd, cs[i].s);
            ew_case c = {"inner dim in place", 1, {a, o, o}, o, -1, FILL_MIXED, 0};
            run_case(KG_OP_COPY, dts[d], dts[d], &c, &ran);
            cr_assert_eq(ran, 1u << KG_EW_ROWS, "case %zu %s: variants %#x, want rows", i, kg_dtype_name(dts[d]), ran);
            ran = 0;
            ew_case b = {"inner dim in place, binary", 2, {a, offset(o, 1), o}, offset(o, 1), -1, FILL_MIXED, 0};
            run_case(KG_OP_ADD, dts[d], dts[d], &b, &ran);
            cr_assert_eq(ran, 1u << KG_EW_ROWS, "case %zu %s add: variants %#x, want rows", i, kg_dtype_name(dts[d]),
                         ran);
        }
    kg_test_ew_tune(KG_EW_TUNE_ROWS_MAX_BYTES, 2);
    kg_test_ew_tune(KG_EW_TUNE_ROWS_MIN_WARPS, 16);
    unsigned ran = 0;
    const view a = permuted(3, S(37, 66, 45), (const int[]){1, 0, 2}), o = dense(3, S(37, 66, 45));
    ew_case c = {"inner dim in place, f32", 1, {a, o, o}, o, -1, FILL_MIXED, 0};
    run_case(KG_OP_COPY, KG_F32, KG_F32, &c, &ran);
    cr_assert_eq(ran, 1u << KG_EW_ND32, "f32: variants %#x, want nd32 (rows only up to 2-byte elements)", ran);
}

/* ---- tperm: permutations through per-tile offset tables ----------------------- */

static void check_tperm_shapes(kg_op op, kg_dtype dt, kg_dtype odt)
{
    check_perm_shapes(op, dt, odt);
    check_perms(op, dt, odt, 5, S(3, 5, 7, 9, 11)); /* every dim shorter than a tile */
    check_perms(op, dt, odt, 3, S(3, 131, 67));     /* several tiles along c and j, a short batch dim */
    check_perms(op, dt, odt, 2, S(33, 2048));       /* one short side: part of the long one moves over */
    check_perms(op, dt, odt, 2, S(1536, 11));
    check_perms(op, dt, odt, 2, S(25, 1155)); /* an odd long side: 5 of its 1155 move over */
}

/* The tuning hook routes every planned call to tperm (element mapping
   `map`); check_perms asserts that it ran (bitwise results: copy and cast
   are exact, the arithmetic ops round once like the reference). */
static void check_tperm_calls(const tp_call *cs, size_t n, int map)
{
    kg_test_ew_tune(KG_EW_TUNE_TPERM, 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_MAP, map);
    want_tperm = 1;
    for (size_t i = 0; i < n; i++)
        check_tperm_shapes(cs[i].op, cs[i].dt, cs[i].odt);
}

#define TP_CALLS(...) ((const tp_call[]){__VA_ARGS__}), sizeof((const tp_call[]){__VA_ARGS__}) / sizeof(tp_call)

Test(tperm, copy_every_permutation, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tperm_calls(TP_CALLS({KG_OP_COPY, KG_F32, KG_F32}, {KG_OP_COPY, KG_BF16, KG_BF16}, {KG_OP_COPY, KG_F16, KG_F16},
                               {KG_OP_COPY, KG_F64, KG_F64}, {KG_OP_COPY, KG_U8, KG_U8}, {KG_OP_COPY, KG_BOOL, KG_BOOL},
                               {KG_OP_COPY, KG_I32, KG_I32}),
                      1);
}

Test(tperm, cast_every_permutation, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tperm_calls(TP_CALLS({KG_OP_CAST, KG_BF16, KG_BF16}, {KG_OP_CAST, KG_F16, KG_F32}, {KG_OP_CAST, KG_F32, KG_BF16},
                               {KG_OP_CAST, KG_U8, KG_F64}, {KG_OP_CAST, KG_I32, KG_I64}),
                      1);
}

Test(tperm, binary_every_permutation, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tperm_calls(TP_CALLS({KG_OP_ADD, KG_F32, KG_F32}, {KG_OP_ADD, KG_BF16, KG_BF16}, {KG_OP_SUB, KG_F16, KG_F16},
                               {KG_OP_MUL, KG_I64, KG_I64}, {KG_OP_DIV, KG_U8, KG_U8}),
                      1);
}

/* The other element mappings (kg_tp_v: strided rows per thread; kg_tp_stage:
   1- and 2-byte rows packed into 32-bit shared-memory stores) */
static void check_other_mapping(int map)
{
    kg_test_ew_tune(KG_EW_TUNE_TPERM_FLAT, 0);   /* and tables where the axes are one dim, */
    kg_test_ew_tune(KG_EW_TUNE_TPERM_JFIRST, 1); /* the other block order */
    check_tperm_calls(TP_CALLS({KG_OP_COPY, KG_BF16, KG_BF16}, {KG_OP_COPY, KG_F64, KG_F64}, {KG_OP_CAST, KG_U8, KG_F32},
                               {KG_OP_ADD, KG_F32, KG_F32}, {KG_OP_ADD, KG_F16, KG_F16}, {KG_OP_COPY, KG_BOOL, KG_BOOL},
                               {KG_OP_CAST, KG_F32, KG_BF16}),
                      map);
}

Test(tperm, mapping_0, .init = setup, .fini = teardown, .timeout = 600)
{
    check_other_mapping(0);
}

Test(tperm, mapping_2, .init = setup, .fini = teardown, .timeout = 600)
{
    check_other_mapping(2);
}

/* Ops of one input whose elements have at most 2 bytes run two tiles per
   pass by default (<op>_tperm2: the tests above, including a last pass with
   one tile where the tiles are odd); here one tile per pass (<op>_tperm),
   with and without tables. */
static void check_other_tiles_per_pass(int flat)
{
    kg_test_ew_tune(KG_EW_TUNE_TPERM_FLAT, flat);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_PAIR, 0);
    check_tperm_calls(TP_CALLS({KG_OP_COPY, KG_BF16, KG_BF16}, {KG_OP_COPY, KG_U8, KG_U8}, {KG_OP_CAST, KG_F16, KG_BF16}),
                      1);
}

Test(tperm, other_tiles_per_pass_flat, .init = setup, .fini = teardown, .timeout = 600)
{
    check_other_tiles_per_pass(1);
}

Test(tperm, other_tiles_per_pass_tables, .init = setup, .fini = teardown, .timeout = 600)
{
    check_other_tiles_per_pass(0);
}

/* Copies of dt on every permutation of the tperm shapes and of rows of 255,
   387, 31, 4097, 2 and 1 elements (the tperma and tperms tests) */
static void check_tile_copy_shapes(kg_dtype dt)
{
    check_tperm_shapes(KG_OP_COPY, dt, dt);
    check_perms(KG_OP_COPY, dt, dt, 2, S(255, 387));
    check_perms(KG_OP_COPY, dt, dt, 2, S(4097, 31));
    check_perms(KG_OP_COPY, dt, dt, 3, S(31, 2, 255));
    check_perms(KG_OP_COPY, dt, dt, 3, S(65, 129, 63));
}

/* The tile tunings the tperma and tperms tests set, back to the defaults */
static void reset_tile_tunings(void)
{
    static const int tv[][2] = {{KG_EW_TUNE_TPERM_WORDS, 2}, {KG_EW_TUNE_TPERM_RECT, 56}, {KG_EW_TUNE_TPERMA_BPS, 0},
                                {KG_EW_TUNE_TPERM_FLAT, 1},  {KG_EW_TUNE_TPERMA, 2},      {KG_EW_TUNE_TPERMS, 2},
                                {KG_EW_TUNE_TPERMW, 2},      {KG_EW_TUNE_TPERMW_FORM, 1}, {KG_EW_TUNE_TPERMW_BPS, 0},
                                {KG_EW_TUNE_TPERMW_CW, 0},   {KG_EW_TUNE_TPX_A, 1},       {KG_EW_TUNE_TPERMC, 1},
                                {KG_EW_TUNE_TPERMS_CHAIN, 1}};
    for (size_t i = 0; i < sizeof tv / sizeof tv[0]; i++)
        kg_test_ew_tune(tv[i][0], tv[i][1]);
}

/* Rank-6 copies, the reversal and a rotation (every permutation of 6 dims
   is 720 cases), twice each (dtype d0, then d1), misaligned; asserts that
   a variant of the mask `want` ran each time */
static void check_6d_copies(kg_dtype d0, kg_dtype d1, unsigned want)
{
    for (size_t i = 0; i < 4; i++) {
        unsigned ran = 0;
        const int64_t shape[6] = {3, 5, 2, 7, 67, 4};
        const int rv[6] = {5, 4, 3, 2, 1, 0}, rot[6] = {4, 5, 0, 1, 2, 3};
        const view o = dense(6, shape), a = permuted(6, shape, i % 2 ? rot : rv);
        const kg_dtype dt = i < 2 ? d0 : d1;
        ew_case c = {"6-d permutation", 1, {offset(a, 1), o, o}, offset(o, 3), -1, FILL_MIXED, 0};
        run_case(KG_OP_COPY, dt, dt, &c, &ran);
        cr_assert(ran & want, "6-d case %zu: variants %#x, want one of %#x", i, ran, want);
    }
}

/* Copies of 2-byte elements by <op>_tperma (tperm's tiles at 6 blocks per
   SM, two buffers; KG_EW_TUNE_TPERMA 1: wherever tperm runs with square
   tiles; word pairs and rect tiles off so that it runs on even shapes and
   short dims too; check_perms asserts it ran): every permutation of the
   tperm shapes (2 to 5 dims, odd and short dims folded, misaligned bases),
   rows that are no multiple of 16 bytes (255, 387, 31, 4097), a 6-d
   reversal and rotation, with and without tables, one tile a block (the
   default), one block per SM (each block pipelining many tiles) and six.
   Bits exact. */
static void check_tperma(int flat, int bps)
{
    kg_test_ew_tune(KG_EW_TUNE_TPERM, 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERMA, 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_FLAT, flat);
    kg_test_ew_tune(KG_EW_TUNE_TPERMA_BPS, bps);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_WORDS, 0);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT, 0); /* rect plans (a short output dim 0) keep tperm */
    want_tperm = 2;
    check_tile_copy_shapes(KG_BF16);
    check_tile_copy_shapes(KG_F16);
    check_6d_copies(KG_F16, KG_BF16, 1u << KG_EW_TPERMA);
    reset_tile_tunings();
}

Test(tperma, copies_every_permutation, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tperma(1, 0);
}

Test(tperma, copies_every_permutation_tables_one_block_per_sm, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tperma(0, 1);
}

Test(tperma, copies_every_permutation_six_blocks_per_sm, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tperma(1, 6);
}

/* Copies by <op>_tperms (output rows cut at 32-byte sectors): 4-byte
   elements (templates/elementwise_tph.cuh; KG_EW_TUNE_TPERMS 1: wherever
   the plan's c axis is one dim of output stride 1 and input 0 is staged,
   tperm elsewhere), with and without tables, or 2-byte ones (es 2:
   templates/elementwise_tpw.cuh, 32-bit words on both sides;
   KG_EW_TUNE_TPERMW 1 with the word pairs off, so even shapes take it too,
   tperm elsewhere): every permutation of the tperm shapes (2 to 5 dims,
   short and odd dims folded, a misaligned base), rows of 255, 387, 31,
   4097, 2 and 1 elements, [300,7,261] (whole tiles and both word parities
   of the input's rows), each output phase within a sector (the output 0 to
   32 / es - 1 elements off, the input off by other amounts) on a 2-d and a
   3-d transposition, twice each, a 6-d reversal and rotation; f32 and i32,
   or bf16 and f16. Bits exact against the reference. form (2-byte
   elements): KG_EW_TUNE_TPERMW_FORM, 0 session 23's words, 1 pairs made in
   registers (templates/elementwise_tpx.cuh; 2: the same in c tiles of 64
   everywhere, KG_EW_TUNE_TPERMW_CW), which also takes every
   permutation of [127,33,259] (whole tiles along both axes, j axes of one
   and two dims, both parities of the rows) and of [5,3,35,129] (c axes of
   up to three dims with whole j tiles: the rows' offsets from a table). */
static void check_tph(int flat, int es, int form)
{
    kg_test_ew_tune(KG_EW_TUNE_TPERM, 1);
    kg_test_ew_tune(es == 4 ? KG_EW_TUNE_TPERMS : KG_EW_TUNE_TPERMW, 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERMW_FORM, form ? 1 : 0);
    kg_test_ew_tune(KG_EW_TUNE_TPERMW_CW, form == 2 ? 64 : 0);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_WORDS, es == 4 ? 2 : 0);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_FLAT, flat);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT, 0); /* rect plans (a short output dim 0) keep tperm */
    want_tperm = 3;
    const kg_dtype dts[] = {es == 4 ? KG_F32 : KG_BF16, es == 4 ? KG_I32 : KG_F16};
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        ran_total = 0;
        check_tile_copy_shapes(dts[i]);
        check_perms(KG_OP_COPY, dts[i], dts[i], 3, S(2, 387, 1));
        check_perms(KG_OP_COPY, dts[i], dts[i], 4, S(7, 65, 3, 71));
        check_perms(KG_OP_COPY, dts[i], dts[i], 3, S(300, 7, 261));
        if (form) {
            check_perms(KG_OP_COPY, dts[i], dts[i], 3, S(127, 33, 259));
            check_perms(KG_OP_COPY, dts[i], dts[i], 4, S(5, 3, 35, 129));
        }
        cr_assert(ran_total & (1u << KG_EW_TPERMS), "%s: tperms never ran (variants %#x)", kg_dtype_name(dts[i]),
                  ran_total);
    }
    /* every output phase within a sector, the input off by another amount */
    const int phases = 32 / es;
    for (int k = 0; k < 4 * phases; k++) {
        unsigned ran = 0;
        const int64_t s2[2] = {257, 131}, s3[3] = {67, 5, 130};
        const int t2[2] = {1, 0}, r3[3] = {2, 1, 0};
        const int nd = k % 2 ? 3 : 2, oo = (k / 2) % phases, io = (k * 3 + 1) % phases;
        const view o = dense(nd, nd == 2 ? s2 : s3), a = permuted(nd, nd == 2 ? s2 : s3, nd == 2 ? t2 : r3);
        const kg_dtype dt = dts[k < 2 * phases ? 0 : 1];
        ew_case c = {"output phase", 1, {offset(a, io), o, o}, offset(o, oo), -1, FILL_MIXED, 0};
        run_case(KG_OP_COPY, dt, dt, &c, &ran);
        cr_assert(ran & (1u << KG_EW_TPERMS), "phase case %d: tperms did not run (variants %#x)", k, ran);
    }
    check_6d_copies(dts[0], dts[1], (1u << KG_EW_TPERMS) | (1u << KG_EW_TPERM));
    reset_tile_tunings();
}

Test(tperms, copies_rows_cut_at_sectors, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tph(1, 4, 0);
}

Test(tperms, copies_rows_cut_at_sectors_tables, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tph(0, 4, 0);
}

/* 2-byte copies by words (templates/elementwise_tpw.cuh; its plan is
   always flat, kg_ew_plan_tpw) */
Test(tperms, copies_2byte_words_rows_cut_at_sectors, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tph(1, 2, 0);
}

/* 2-byte copies by pairs made in registers (templates/elementwise_tpx.cuh,
   kg_ew_plan_tpx: its j axis folds the input's contiguous run) */
Test(tperms, copies_2byte_pairs_rows_cut_at_sectors, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tph(1, 2, 1);
}

/* the same kernel in c tiles of 64 positions on every plan (the plan's
   choice only where those fill the c axis by a tenth more) */
Test(tperms, copies_2byte_pairs_c_tiles_of_64, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tph(1, 2, 2);
}

/* A permutation case of up to 3 dims for the tperma choice tests (the GPU
   test tperma::default_choice and the CPU test
   tperm_plan::tperma_where_it_measured_faster): shape s, permutation perm
   (each test says how it reads them) and the expected outcome want. */
typedef struct {
    int nd;
    int64_t s[3];
    int perm[3];
    int want;
} tperma_case;

/* The layouts of tperms::copies_2byte_pairs_by_the_rule (the GPU test) and
   of tperm_plan::tpx_where_it_measured_faster's second part (permuted()):
   want 1 where kg_ew_tpx_by_default takes the copy */
static const tperma_case tpx_rule_cases[] = {
    {2, {62, 16411}, {1, 0}, 1}, {2, {124, 32771}, {1, 0}, 1},       {3, {130, 259, 127}, {2, 1, 0}, 1},
    {2, {1031, 499}, {1, 0}, 0}, {3, {129, 257, 255}, {2, 1, 0}, 0}, {2, {95, 91}, {1, 0}, 0},
    {2, {63, 16411}, {1, 0}, 0},
};

/* The default choice (KG_EW_TUNE_TPERMW 2, KG_EW_TUNE_TPERMW_FORM 1):
   the second form (tpx) where kg_ew_tpx_by_default, i.e. where main's
   choice would be tperm2 by kg_ew_tperma_by_default's tile-count clauses
   and tpx's tiles are at least 80% full: 62 x 16411 and 124 x 32771
   transposes (flat, 1 and 2 j tiles against 257 and 513 c tiles) and a
   [130,259,127] reversal (tables, 2 c tiles against 527 j tiles); the
   choice before elsewhere: tperma's 1031 x 499 transpose and [129,257,255]
   reversal (4 x 519 tiles), a 95 x 91 transpose, and a 63 x 16411 one
   (tperm2's, but tpx's j tile 51% full). The input and the output off by
   0 or 1 element; bf16 and f16; bits exact. */
Test(tperms, copies_2byte_pairs_by_the_rule, .init = setup, .fini = teardown, .timeout = 600)
{
    reset_tile_tunings(); /* the defaults */
    const tperma_case *cs = tpx_rule_cases;
    for (size_t i = 0; i < sizeof tpx_rule_cases / sizeof tpx_rule_cases[0]; i++)
        for (int k = 0; k < 8; k++) {
            unsigned ran = 0;
            const view o = dense(cs[i].nd, cs[i].s), a = permuted(cs[i].nd, cs[i].s, cs[i].perm);
            ew_case c = {"tpx by the rule", 1, {offset(a, k % 2), o, o}, offset(o, (k / 2) % 2), -1, FILL_MIXED, 0};
            const kg_dtype dt = k < 4 ? KG_BF16 : KG_F16;
            run_case(KG_OP_COPY, dt, dt, &c, &ran);
            cr_assert(!(ran & (1u << KG_EW_TPERMS)) == !cs[i].want, "case %zu.%d: variants %#x", i, k, ran);
        }
}

/* the same kernel held to 4 blocks a multiprocessor by dynamic shared
   memory (KG_EW_TUNE_TPERMW_BPS 4), then 5: a 3-d reversal (a j axis of
   two dims), a 2-d transpose of whole tiles and a 4-d permutation, each at
   the output's 16 phases within a sector and the input off by one element
   or none, every other one in c tiles of 64; bits exact */
Test(tperms, copies_2byte_pairs_fewer_blocks, .init = setup, .fini = teardown, .timeout = 600)
{
    kg_test_ew_tune(KG_EW_TUNE_TPERM, 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERMW, 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERMW_FORM, 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_WORDS, 0);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT, 0);
    for (int k = 0; k < 2 * 3 * 16; k++) {
        unsigned ran = 0;
        kg_test_ew_tune(KG_EW_TUNE_TPERMW_BPS, k < 48 ? 4 : 5);
        kg_test_ew_tune(KG_EW_TUNE_TPERMW_CW, (k / 3) % 2 ? 64 : 0);
        const int64_t s2[2] = {701, 259}, s3[3] = {67, 5, 130}, s4[4] = {7, 65, 3, 71};
        const int t2[2] = {1, 0}, r3[3] = {2, 1, 0}, p4[4] = {3, 1, 0, 2};
        const int sh = k % 3, nd = sh + 2, oo = (k / 3) % 16, io = k % 2;
        const int64_t *sz = sh == 0 ? s2 : sh == 1 ? s3 : s4;
        const view o = dense(nd, sz), a = permuted(nd, sz, sh == 0 ? t2 : sh == 1 ? r3 : p4);
        ew_case c = {"fewer blocks", 1, {offset(a, io), o, o}, offset(o, oo), -1, FILL_MIXED, 0};
        run_case(KG_OP_COPY, KG_BF16, KG_BF16, &c, &ran);
        cr_assert(ran & (1u << KG_EW_TPERMS), "case %d: tperms did not run (variants %#x)", k, ran);
    }
    reset_tile_tunings();
}

/* The default choice (KG_EW_TUNE_TPERMA 2, KG_EW_TUNE_TPERM 0) on odd
   shapes, bits exact: bf16 / f16 copies that kg_ew_tperma_by_default takes
   never run tperm (the 2-d transpose's output rows of 751 start off
   sectors, so it runs tpermc, KG_EW_TUNE_TPERMC 1 since round s31r1; want
   -1: tperma or a variant other than tperm that the default prefers), the
   one it leaves (input 0 not staged) runs tperm. */
Test(tperma, default_choice, .init = setup, .fini = teardown, .timeout = 600)
{
    static const tperma_case cs[] = {
        {2, {503, 751}, {1, 0}, KG_EW_TPERMC},        /* flat, 12 x 8 tiles, rows off sectors */
        {3, {37, 66, 45}, {2, 1, 0}, -1},           /* tables, 4 x 8 tiles */
        {3, {37, 66, 45}, {1, 0, 2}, KG_EW_TPERM},  /* input 0 not staged */
        {3, {37, 66, 45}, {2, 0, 1}, -1},
        {3, {131, 67, 3}, {1, 2, 0}, -1},           /* flat, 3 x 4 tiles */
    };
    const kg_dtype dts[] = {KG_BF16, KG_F16};
    for (size_t d = 0; d < 2; d++)
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            unsigned ran = 0;
            const view a = permuted(cs[i].nd, cs[i].s, cs[i].perm), o = dense(cs[i].nd, cs[i].s);
            ew_case c = {"tperma by default", 1, {offset(a, 1), o, o}, o, -1, FILL_MIXED, 0};
            run_case(KG_OP_COPY, dts[d], dts[d], &c, &ran);
            if (cs[i].want >= 0)
                cr_assert_eq(ran, 1u << cs[i].want, "%s case %zu: variants %#x, want %d", kg_dtype_name(dts[d]), i,
                             ran, cs[i].want);
            else
                cr_assert(!(ran & (1u << KG_EW_TPERM)), "%s case %zu: tperm ran (variants %#x)", kg_dtype_name(dts[d]),
                          i, ran);
        }
}

/* Copies of rows kept in place (<op>_rowsv; KG_EW_TUNE_ROWSV 2 and rows
   from 64 bytes: wherever dim 0 is contiguous both sides, so short rows
   exercise the row ends too): every permutation of the outer dims with the
   inner one in place (the identity: one contiguous row), rows of 16 to 4100
   elements, input and output each 0 to 7 elements off alignment (every
   relative misalignment of the 16-byte chunks for 2-byte elements; the
   chunks at both row ends move element by element). Results are exact
   (checked against the reference). */
Test(rowsv, copies_of_rows_kept_in_place, .init = setup, .fini = teardown, .timeout = 600)
{
    kg_test_ew_tune(KG_EW_TUNE_ROWSV, 2);
    kg_test_ew_tune(KG_EW_TUNE_ROWSV_MIN_BYTES, 64);
    static const struct {
        int nd;
        int64_t s[4];
    } shapes[] = {{3, {5, 7, 91}}, {4, {3, 4, 5, 33}}, {3, {9, 2, 4100}}, {3, {4, 6, 16}}, {4, {2, 3, 5, 257}}};
    const kg_dtype dts[] = {KG_BF16, KG_F32, KG_U8, KG_F64, KG_I32, KG_F16};
    for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
        unsigned ran = 0;
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            const int nd = shapes[si].nd;
            int perm[KG_MAX_DIMS];
            for (int d = 0; d < nd; d++)
                perm[d] = d;
            int idx = 0;
            do {
                if (perm[nd - 1] != nd - 1)
                    continue;
                const view a = permuted(nd, shapes[si].s, perm), o = dense(nd, shapes[si].s);
                const int ia = idx % 8, io = (idx * 3 + 1) % 8;
                idx++;
                ew_case c = {"rows in place", 1, {offset(a, ia), o, o}, offset(o, io), -1, FILL_MIXED, 0};
                run_case(KG_OP_COPY, dts[di], dts[di], &c, &ran);
            } while (next_perm(perm, nd));
        }
        cr_assert(ran & (1u << KG_EW_ROWSV), "%s: rowsv never ran (variants %#x)", kg_dtype_name(dts[di]), ran);
    }
}

/* Copies of planes contiguous in both operands and transposed
   (<op>_tplanev, forced; planes from 1 byte, KG_EW_TUNE_TPLANE_MIN_BYTES 1):
   the buffer's last two dims swapped, with the outer dims in order or
   swapped too (planes apart), one plane (a 2-d transpose), odd and even
   plane sides, a side of 2 and 3, planes of more chunks than a block's
   threads take in one pass, input and output 0 to 7 elements off alignment
   (each run's ends in partial chunks of every alignment); the chunks
   gathered in order or (rot) rotated. Results are exact (bits). */
static void check_tplane(int rot)
{
    kg_test_ew_tune(KG_EW_TUNE_GATHER_ROT, rot);
    kg_test_ew_tune(KG_EW_TUNE_TPLANE_MIN_BYTES, 1);
    force_variant = KG_EW_TPLANE;
    static const struct {
        int nd;
        int64_t P[4];
        int p[4];
    } cs[] = {{4, {2, 3, 37, 41}, {0, 1, 3, 2}}, {4, {3, 2, 37, 41}, {1, 0, 3, 2}}, {3, {5, 64, 64}, {0, 2, 1}},
              {2, {33, 128}, {1, 0}},         {3, {4, 2, 700}, {0, 2, 1}},       {2, {700, 3}, {1, 0}},
              {3, {3, 95, 91}, {0, 2, 1}},    {4, {2, 2, 45, 46}, {1, 0, 3, 2}}};
    const kg_dtype dts[] = {KG_BF16, KG_F32, KG_U8, KG_F64, KG_I32, KG_F16};
    for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
        unsigned ran = 0;
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            int64_t shape[KG_MAX_DIMS];
            const view a = read_in_order(cs[i].nd, cs[i].P, cs[i].p, shape), o = dense(cs[i].nd, shape);
            const int ia = (int)(i * 5 + di) % 8, io = (int)(i * 3 + 1) % 8;
            ew_case c = {"transposed planes", 1, {offset(a, ia), o, o}, offset(o, io), -1, FILL_MIXED, 0};
            run_case(KG_OP_COPY, dts[di], dts[di], &c, &ran);
            if (dts[di] != KG_F64 || i != 6) /* f64 95 x 91: a buffer over 48 KiB, no plan */
                cr_assert(ran & (1u << KG_EW_TPLANE), "%s case %zu: tplanev (rot %d) did not run (variants %#x)",
                          kg_dtype_name(dts[di]), i, rot, ran);
            ran = 0;
        }
    }
    force_variant = -1;
}

Test(tplane, copies_of_transposed_planes, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tplane(0);
}

Test(tplane, copies_of_transposed_planes_rotated, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tplane(1);
}

/* Copies of planes transposed several a block (<op>_tplanem, forced): the
   buffer's last two dims swapped with the outer dims in order (planes one
   after the other in both operands), small planes on either side (81 x 7
   and 7 x 81, the bench's [273,147,81,7] p0.1.3.2 plane; 2 x 3, 3 x 5, 16 x
   16, 13 x 9; sides under a chunk's elements), planes of more bytes than a
   group (one a group), outer dims of more than one dim (groups restart at
   each row of dim 2: 3 x 33 planes of 13 x 9); groups of 64, 1000 and the
   default 16384 bytes (uneven last groups, one plane a group); 2- and
   4-byte elements (bf16, f16, f32, i32), input and output 0 to 7 elements
   off alignment (runs in partial chunks at every alignment); the chunks
   gathered in order or (rot) rotated. Every element's bits are compared
   with its input's, and its value with the reference (run_case). */
static void check_tplanem(int rot)
{
    kg_test_ew_tune(KG_EW_TUNE_GATHER_ROT, rot);
    force_variant = KG_EW_TPLANEM;
    static const struct {
        int nd;
        int64_t P[4];
        int p[4];
    } cs[] = {{3, {301, 81, 7}, {0, 2, 1}},     {3, {203, 7, 81}, {0, 2, 1}},     {3, {999, 2, 3}, {0, 2, 1}},
              {4, {5, 41, 3, 5}, {0, 1, 3, 2}}, {3, {37, 16, 16}, {0, 2, 1}},     {4, {3, 33, 13, 9}, {0, 1, 3, 2}},
              {3, {5, 70, 65}, {0, 2, 1}},      {4, {2, 3, 9, 130}, {0, 1, 3, 2}}};
    const kg_dtype dts[] = {KG_BF16, KG_F32, KG_F16, KG_I32};
    const int bytes[] = {64, 1000, 16384};
    for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++)
        for (size_t bi = 0; bi < sizeof bytes / sizeof bytes[0]; bi++) {
            kg_test_ew_tune(KG_EW_TUNE_TPLANEM_BYTES, bytes[bi]);
            for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
                unsigned ran = 0;
                int64_t shape[KG_MAX_DIMS];
                const view a = read_in_order(cs[i].nd, cs[i].P, cs[i].p, shape), o = dense(cs[i].nd, shape);
                const int ia = (int)(i * 5 + di + bi) % 8, io = (int)(i * 3 + 1 + 2 * bi) % 8;
                ew_case c = {"planes several a block", 1, {offset(a, ia), o, o}, offset(o, io), -1, FILL_MIXED, 0};
                run_case(KG_OP_COPY, dts[di], dts[di], &c, &ran);
                cr_assert(ran & (1u << KG_EW_TPLANEM),
                          "%s case %zu (%d bytes): tplanem (rot %d) did not run (variants %#x)", kg_dtype_name(dts[di]),
                          i, bytes[bi], rot, ran);
            }
        }
    kg_test_ew_tune(KG_EW_TUNE_TPLANEM_BYTES, 16384);
    kg_test_ew_tune(KG_EW_TUNE_GATHER_ROT, 2);
    force_variant = -1;
}

Test(tplanem, copies_of_transposed_planes_several_a_block, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tplanem(0);
}

Test(tplanem, copies_of_transposed_planes_several_a_block_rotated, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tplanem(1);
}

/* The default choice (KG_EW_TUNE_TPLANEM 1, the default since round
   s30r1; kg_ew_tplanem_by_default): tplanem takes the copies whose planes
   are under tplanev's floor (the bench's f32 [273,147,81,7] p0.1.3.2 at a
   smaller size, bf16 and f32 planes of 7 x 81 and 3 x 5, f16 and i32
   planes of 16 x 16 with the input and the output off alignment),
   tplanev keeps planes of 16 KB up, and with KG_EW_TUNE_TPLANEM 0 none of
   them runs tplanem; every element's bits compared with its input's and
   its value with the reference (run_case). */
Test(tplanem, default_choice, .init = setup, .fini = teardown, .timeout = 600)
{
    static const struct {
        int nd;
        int64_t P[4];
        int p[4];
        kg_dtype dt;
        int want; /* KG_EW_TPLANEM, KG_EW_TPLANE */
        int ia, io; /* input and output elements off alignment */
    } cs[] = {{4, {13, 147, 81, 7}, {0, 1, 3, 2}, KG_F32, KG_EW_TPLANEM, 0, 0},
              {3, {301, 7, 81}, {0, 2, 1}, KG_BF16, KG_EW_TPLANEM, 0, 0},
              {3, {2001, 3, 5}, {0, 2, 1}, KG_F32, KG_EW_TPLANEM, 0, 0},
              {3, {517, 16, 16}, {0, 2, 1}, KG_F16, KG_EW_TPLANEM, 3, 5},
              {3, {517, 16, 16}, {0, 2, 1}, KG_I32, KG_EW_TPLANEM, 1, 2},
              {3, {3, 95, 91}, {0, 2, 1}, KG_F32, KG_EW_TPLANE, 0, 0}};
    const int was = kg_test_ew_tune(KG_EW_TUNE_TPLANEM, 1);
    for (int mode = 1; mode >= 0; mode--) {
        kg_test_ew_tune(KG_EW_TUNE_TPLANEM, mode);
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            unsigned ran = 0;
            int64_t shape[KG_MAX_DIMS];
            const view a = read_in_order(cs[i].nd, cs[i].P, cs[i].p, shape), o = dense(cs[i].nd, shape);
            ew_case c = {
                "planes, default choice", 1, {offset(a, cs[i].ia), o, o}, offset(o, cs[i].io), -1, FILL_MIXED, 0};
            run_case(KG_OP_COPY, cs[i].dt, cs[i].dt, &c, &ran);
            if (mode)
                cr_assert_eq(ran, 1u << cs[i].want, "case %zu: variants %#x, want %d", i, ran, cs[i].want);
            else
                cr_assert(!(ran & (1u << KG_EW_TPLANEM)), "case %zu: tplanem ran with KG_EW_TUNE_TPLANEM 0", i);
        }
    }
    kg_test_ew_tune(KG_EW_TUNE_TPLANEM, was);
}

/* Copies by slabs of whole output rows (<op>_tslab, forced, KG_EW_TUNE_TSLAB
   4096): the output's fast dim short (2, 3, 33, 64) and its next dim the
   input's fast one, the input's rows one plane apart (a 2-d transpose) or
   further (outer dims between them), outer dims on either side; buffers of
   1024 bytes (many slabs, the last one cut; with 2 and 3 rows fewer than a
   chunk's elements) and of the default 16384; input and output 0 to 7
   elements off alignment (rows realigned at every offset, runs cut into
   partial chunks); the chunks gathered in order or (rot) rotated. Results
   are exact (bits). */
static void check_tslab(int rot)
{
    kg_test_ew_tune(KG_EW_TUNE_GATHER_ROT, rot);
    kg_test_ew_tune(KG_EW_TUNE_TSLAB, 4096);
    force_variant = KG_EW_TSLAB;
    static const struct {
        int nd;
        int64_t P[4];
        int p[4];
    } cs[] = {{2, {33, 1000}, {1, 0}},          {4, {33, 2, 3, 95}, {2, 1, 3, 0}}, {2, {2, 5000}, {1, 0}},
              {3, {3, 7, 300}, {1, 2, 0}},       {3, {64, 3, 130}, {1, 2, 0}},      {4, {5, 3, 4, 77}, {2, 1, 3, 0}},
              {3, {19, 2, 517}, {1, 2, 0}},      {4, {3, 33, 2, 95}, {2, 0, 3, 1}}};
    const kg_dtype dts[] = {KG_BF16, KG_F32, KG_U8, KG_F64, KG_I32, KG_F16};
    const int bytes[] = {1024, 16384};
    for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
        for (size_t bi = 0; bi < 2; bi++) {
            kg_test_ew_tune(KG_EW_TUNE_TSLAB_BYTES, bytes[bi]);
            for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
                unsigned ran = 0;
                int64_t shape[KG_MAX_DIMS];
                const view a = read_in_order(cs[i].nd, cs[i].P, cs[i].p, shape), o = dense(cs[i].nd, shape);
                const int ia = (int)(i * 5 + di + bi) % 8, io = (int)(i * 3 + 1 + 2 * bi) % 8;
                ew_case c = {"slabs of output rows", 1, {offset(a, ia), o, o}, offset(o, io), -1, FILL_MIXED, 0};
                run_case(KG_OP_COPY, dts[di], dts[di], &c, &ran);
                /* 64 rows in 1024 bytes: less than one 16-byte chunk a row, no plan */
                if (!(bi == 0 && i == 4))
                    cr_assert(ran & (1u << KG_EW_TSLAB), "%s case %zu (%d bytes): tslab (rot %d) did not run (variants %#x)",
                              kg_dtype_name(dts[di]), i, bytes[bi], rot, ran);
            }
        }
    }
    force_variant = -1;
}

Test(tslab, copies_by_slabs_of_output_rows, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tslab(0);
}

Test(tslab, copies_by_slabs_of_output_rows_rotated, .init = setup, .fini = teardown, .timeout = 600)
{
    check_tslab(1);
}

/* The dense kernels under every launch the tunings give
   (KG_EW_TUNE_DENSE_VPT 1 and 2 vectors a thread, KG_EW_TUNE_DENSE_THREADS
   128 and 256): unary, binary and ternary ops and a cast on sizes with a
   vector body and a scalar tail, one block or many, f32, f16 and bf16. */
Test(dense, launches_of_one_or_two_vectors_a_thread, .init = setup, .fini = teardown, .timeout = 600)
{
    static const int64_t sizes[] = {23, 812, (1 << 20) + 5};
    static const kg_op ops[] = {KG_OP_EXP, KG_OP_ADD, KG_OP_WHERE, KG_OP_GELU};
    const kg_dtype dts[] = {KG_F32, KG_F16, KG_BF16};
    for (int vpt = 1; vpt <= 2; vpt++)
        for (int th = 128; th <= 256; th += 128) {
            kg_test_ew_tune(KG_EW_TUNE_DENSE_VPT, vpt);
            kg_test_ew_tune(KG_EW_TUNE_DENSE_THREADS, th);
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                const view v = dense(1, S(sizes[si]));
                for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
                    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
                        unsigned ran = 0;
                        const int n_in = kg_op_get_info(ops[oi])->arity;
                        ew_case c = {"dense launch", n_in, {v, v, v}, v, -1, FILL_MIXED, 0};
                        run_case(ops[oi], dts[di], dts[di], &c, &ran);
                        cr_assert(ran & (1u << KG_EW_DENSE), "%s %s n %lld (vpt %d, %d threads): dense did not run",
                                  kg_op_get_info(ops[oi])->name, kg_dtype_name(dts[di]), (long long)sizes[si], vpt, th);
                    }
                    unsigned ran = 0;
                    ew_case c = {"dense launch", 1, {v, v, v}, v, -1, FILL_MIXED, 0};
                    run_case(KG_OP_CAST, dts[di], KG_F32, &c, &ran);
                    cr_assert(ran & (1u << KG_EW_DENSE), "cast %s n %lld: dense did not run", kg_dtype_name(dts[di]),
                              (long long)sizes[si]);
                }
            }
        }
    kg_test_ew_tune(KG_EW_TUNE_DENSE_VPT, 0);
    kg_test_ew_tune(KG_EW_TUNE_DENSE_THREADS, 256);
}

/* The dense launch's rule (kg_ew_dense_vpt, H200 run s18r2): one vector a
   thread for exp and add, two for the others (gelu lost 4.7% with one);
   the tuning overrides it. */
Test(dense_plan, vectors_a_thread_by_op)
{
    cr_assert_eq(kg_test_ew_tune(KG_EW_TUNE_DENSE_VPT, 0), 0, "KG_EW_TUNE_DENSE_VPT's default");
    cr_assert_eq(kg_ew_dense_vpt(KG_OP_EXP), 1);
    cr_assert_eq(kg_ew_dense_vpt(KG_OP_ADD), 1);
    cr_assert_eq(kg_ew_dense_vpt(KG_OP_GELU), 2);
    cr_assert_eq(kg_ew_dense_vpt(KG_OP_CAST), 2);
    kg_test_ew_tune(KG_EW_TUNE_DENSE_VPT, 2);
    cr_assert_eq(kg_ew_dense_vpt(KG_OP_EXP), 2);
    kg_test_ew_tune(KG_EW_TUNE_DENSE_VPT, 1);
    cr_assert_eq(kg_ew_dense_vpt(KG_OP_GELU), 1);
    kg_test_ew_tune(KG_EW_TUNE_DENSE_VPT, 0);
}

/* Copies by tiles of aligned 16-byte chunks (<op>_tchunk, forced,
   KG_EW_TUNE_TCHUNK 1): since session 37 the bundle holds no tchunk kernel
   (gen/elementwise.lua; forced only, it lost every measured row), so the
   force and the tuning plan as without it: on the cases the tchunk test
   ran (the output's fast dim of 3 to 1000 elements, the input's fast dim
   next to it or not, 2-d transposes, reversals, 4-d; input and output 0 to
   7 elements off alignment), with tchunk's plan tunings at their defaults
   and at 3 chunks a row, 8 tiles a block, the copies are exact (bits) and
   tchunk never runs. */
Test(tchunk, forced_without_a_kernel_plans_as_without, .init = setup, .fini = teardown, .timeout = 600)
{
    kg_test_ew_tune(KG_EW_TUNE_TCHUNK, 1);
    force_variant = KG_EW_TCHUNK;
    static const struct {
        int nd;
        int64_t P[4];
        int p[4];
    } cs[] = {{2, {67, 300}, {1, 0}},          {3, {45, 7, 131}, {2, 1, 0}},     {4, {3, 33, 5, 95}, {2, 0, 3, 1}},
              {3, {200, 3, 70}, {2, 0, 1}},     {2, {1000, 9}, {1, 0}},           {3, {2, 517, 19}, {0, 2, 1}},
              {2, {130, 257}, {1, 0}},          {3, {23, 29, 31}, {1, 2, 0}}};
    static const int cq[2] = {0, 3}, tpb[2] = {1, 8};
    const kg_dtype dts[] = {KG_BF16, KG_F32, KG_U8, KG_F64, KG_I32, KG_F16, KG_I64};
    for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
        cr_assert_eq(kg_ew_copy_tpk[dts[di]][KG_EW_TPK_TCHUNK], -1, "%s: a tchunk kernel", kg_dtype_name(dts[di]));
        for (int ti = 0; ti < 2; ti++) {
            kg_test_ew_tune(KG_EW_TUNE_TCHUNK_CQ, cq[ti]);
            kg_test_ew_tune(KG_EW_TUNE_TCHUNK_TPB, tpb[ti]);
            for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
                unsigned ran = 0;
                int64_t shape[KG_MAX_DIMS];
                const view a = read_in_order(cs[i].nd, cs[i].P, cs[i].p, shape), o = dense(cs[i].nd, shape);
                const int ia = (int)(i * 5 + di + ti) % 8, io = (int)(i * 3 + 1 + 2 * ti) % 8;
                ew_case c = {"tiles of aligned chunks", 1, {offset(a, ia), o, o}, offset(o, io), -1, FILL_MIXED, 0};
                run_case(KG_OP_COPY, dts[di], dts[di], &c, &ran);
                cr_assert(!(ran & (1u << KG_EW_TCHUNK)), "%s case %zu: tchunk ran (variants %#x)",
                          kg_dtype_name(dts[di]), i, ran);
            }
        }
    }
    kg_test_ew_tune(KG_EW_TUNE_TCHUNK_CQ, 0);
    kg_test_ew_tune(KG_EW_TUNE_TCHUNK_TPB, 1);
    kg_test_ew_tune(KG_EW_TUNE_TCHUNK, 0);
    force_variant = -1;
}

/* ---- copies move bits, in every variant ------------------------------------ */

/* The layouts of elementwise::copies_of_2byte_floats_move_bits_in_every_variant,
   each reading at least 65536 consecutive storage positions of its input
   (every residue mod 65536: bits_layouts_read_every_pattern checks it on
   the CPU), picked for the variants that serve them: a contiguous range
   (dense), odd and even 2-d transposes with the input one element off or
   aligned (perm, permf, tile, nd32, nd64, rows, tperm / tperm2 with and
   without word pairs, tperma, tperms by words and by pairs, tchunk), rows
   of a wider pitch (nd32v, rowsv from rows of 64 bytes), rows of 8200
   bytes kept in place under swapped outer dims, one element off (rowsv),
   planes transposed (tplanev) and output rows of 33 (tslab). */
enum { BITS_LAYOUTS = 8 };

static int bits_layout(int i, view *in, view *out)
{
    int64_t shape[KG_MAX_DIMS];
    switch (i) {
    case 0: *in = *out = dense(1, S(65541)); return 1;
    case 1: *in = offset(read_in_order(2, S(257, 263), (const int[]){1, 0}, shape), 1); break;
    case 2: *in = read_in_order(2, S(256, 258), (const int[]){1, 0}, shape); break;
    case 3:
        *in = *out = dense(2, S(540, 240)); /* 540 rows: what a row's gap skips is read 2^16 later */
        in->strides[0] = 248;
        return 1;
    case 4:
        *in = offset(permuted(3, S(9, 2, 4100), (const int[]){1, 0, 2}), 1);
        *out = dense(3, S(9, 2, 4100));
        return 1;
    case 5: *in = read_in_order(3, S(17, 64, 64), (const int[]){0, 2, 1}, shape); break;
    case 6: *in = read_in_order(2, S(33, 2100), (const int[]){1, 0}, shape); break;
    case 7: *in = read_in_order(2, S(67, 1000), (const int[]){1, 0}, shape); break;
    default: return 0;
    }
    *out = dense(in->ndim, shape);
    return 1;
}

/* The storage positions view v reads, in the output's row-major order, into
   pos (numel(v) of them) */
static void view_positions(const view *v, int64_t *pos)
{
    int64_t idx[KG_MAX_DIMS] = {0};
    const int64_t n = numel(v);
    for (int64_t e = 0; e < n; e++) {
        int64_t at = v->offset;
        for (int d = 0; d < v->ndim; d++)
            at += idx[d] * v->strides[d];
        pos[e] = at;
        for (int d = v->ndim - 1; d >= 0; d--) {
            if (++idx[d] < v->shape[d])
                break;
            idx[d] = 0;
        }
    }
}

/* The input's element at storage position s: for 2-byte types the pattern
   s * 40503 mod 2^16 (a bijection of the residues, so a layout reading
   65536 consecutive positions puts every pattern through); for f32 / f64
   three NaNs in four of every sign and payload, quiet and signalling, the
   fourth any bits */
static void bits_fill(void *buf, kg_dtype dt, int64_t n)
{
    uint64_t r = 0x5eed0000u;
    for (int64_t s = 0; s < n; s++) {
        const uint64_t h = kt_next(&r);
        if (kg_dtype_size(dt) == 2)
            ((uint16_t *)buf)[s] = (uint16_t)((uint64_t)s * 40503u);
        else if (s % 4 != 3)
            set_nan_bits(buf, dt, s, h);
        else if (dt == KG_F32)
            ((uint32_t *)buf)[s] = (uint32_t)h;
        else
            ((uint64_t *)buf)[s] = h;
    }
}

/* Runs op (copy, or the identity cast) over dt on every layout, each under
   the runtime's own choice and forced to every variant (the kg_ew_variant
   ones and the tperm kernels': tperm, rowsv, tplanev, tslab, tchunk (no
   kernel since session 37: planned as without it), tperma, tperms,
   tplanem), first with the default tunings, then with rowsv from
   rows of 64 bytes (KG_EW_TUNE_ROWSV 2), tplanev from planes of 1 byte,
   tchunk allowed (which has no kernel), one tile a pass in tperm (KG_EW_TUNE_TPERM_PAIR 0) and
   the word form of the 2-byte tperms (KG_EW_TUNE_TPERMW_FORM 0); compares
   every output element's bits with its input element's. Returns the
   variants that ran. */
static unsigned check_bits(kg_op op, kg_dtype dt)
{
    static const int t1[][2] = {{KG_EW_TUNE_ROWSV, 2},        {KG_EW_TUNE_ROWSV_MIN_BYTES, 64},
                                {KG_EW_TUNE_TPLANE_MIN_BYTES, 1}, {KG_EW_TUNE_TCHUNK, 1},
                                {KG_EW_TUNE_TPERM_PAIR, 0},     {KG_EW_TUNE_TPERMW_FORM, 0}};
    enum { NT = sizeof t1 / sizeof t1[0] };
    const size_t es = kg_dtype_size(dt);
    unsigned ran = 0;
    int runs = 0;
    for (int li = 0; li < BITS_LAYOUTS; li++) {
        view iv, ov;
        bits_layout(li, &iv, &ov);
        const int64_t in_n = storage(&iv), on = storage(&ov), n = numel(&ov);
        void *host = malloc((size_t)in_n * es), *ohost = malloc((size_t)on * es);
        int64_t *ipos = malloc((size_t)n * sizeof *ipos), *opos = malloc((size_t)n * sizeof *opos);
        cr_assert(host && ohost && ipos && opos);
        bits_fill(host, dt, in_n);
        view_positions(&iv, ipos);
        view_positions(&ov, opos);
        void *idev = kt_alloc(ctx, (size_t)in_n * es), *odev = kt_alloc(ctx, (size_t)on * es);
        kt_upload(ctx, idev, host, (size_t)in_n * es);
        kg_tensor a = kg_tensor_contiguous((char *)idev + iv.offset * (int64_t)es, dt, iv.ndim, iv.shape);
        kg_tensor o = kg_tensor_contiguous((char *)odev + ov.offset * (int64_t)es, dt, ov.ndim, ov.shape);
        memcpy(a.strides, iv.strides, sizeof a.strides);
        memcpy(o.strides, ov.strides, sizeof o.strides);
        for (int tu = 0; tu < 2; tu++) {
            int was[NT];
            if (tu)
                for (int k = 0; k < NT; k++)
                    was[k] = kg_test_ew_tune(t1[k][0], t1[k][1]);
            for (int force = -1; force <= KG_EW_TPERMC; force++) {
                const int poison = runs++ % 2 ? 0x5a : 0xff; /* each poison is one pattern: two of them */
                KT_OK(ctx, kg_memset(ctx, odev, poison, (size_t)on * es));
                kg_test_force_ew_variant(ctx, force);
                const kg_tensor *ins[1] = {&a};
                KT_OK(ctx, kg_elementwise(ctx, op, &o, ins, 1));
                KT_OK(ctx, kg_sync(ctx));
                const int used = kg_test_last_ew_variant(ctx);
                ran |= 1u << used;
                kt_download(ctx, ohost, odev, (size_t)on * es);
                for (int64_t e = 0; e < n; e++)
                    if (raw_bits(ohost, es, opos[e]) != raw_bits(host, es, ipos[e]))
                        cr_assert_fail("%s %s, layout %d, forced %d, tunings %d, variant %d, element %lld: bits %#llx, "
                                       "want the input's %#llx",
                                       kg_op_get_info(op)->name, kg_dtype_name(dt), li, force, tu, used, (long long)e,
                                       (unsigned long long)raw_bits(ohost, es, opos[e]),
                                       (unsigned long long)raw_bits(host, es, ipos[e]));
            }
            if (tu)
                for (int k = 0; k < NT; k++)
                    kg_test_ew_tune(t1[k][0], was[k]);
        }
        kg_test_force_ew_variant(ctx, -1);
        KT_OK(ctx, kg_free(ctx, idev));
        KT_OK(ctx, kg_free(ctx, odev));
        free(host);
        free(ohost);
        free(ipos);
        free(opos);
    }
    return ran;
}

/* Copies and identity casts move bits (README "cast") in every variant
   the runtime can pick: f16 and bf16 on all 65536 bit patterns (NaNs of
   every sign and payload included, which a round trip through f32 turns
   into the canonical NaN), f32 and f64 on NaNs of every sign and payload,
   quiet and signalling; each on every layout of bits_layout under the
   runtime's own choice and forced to each variant (check_bits). Asserts
   that every variant ran: for copies of 2-byte types the eight of
   kg_ew_variant and tperm, rowsv, tplanev, tslab, tperma, tperms,
   tplanem, tpermc (forced on the odd transpose, layout 1; tchunk until
   session 37, which removed its kernels);
   for identity casts (which only copies' kernels after tperm serve) and
   f32 / f64 the eight and tperm. */
Test(elementwise, copies_of_2byte_floats_move_bits_in_every_variant, .timeout = 600)
{
    const unsigned base = ((1u << KG_EW_VARIANT_COUNT) - 1) | 1u << KG_EW_TPERM;
    const unsigned all = base | 1u << KG_EW_ROWSV | 1u << KG_EW_TPLANE | 1u << KG_EW_TSLAB | 1u << KG_EW_TPERMA |
                         1u << KG_EW_TPERMS | 1u << KG_EW_TPLANEM | 1u << KG_EW_TPERMC;
    const kg_dtype dts[] = {KG_F16, KG_BF16, KG_F32, KG_F64};
    for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++)
        for (int c = 0; c < 2; c++) {
            const kg_op op = c ? KG_OP_CAST : KG_OP_COPY;
            const unsigned ran = check_bits(op, dts[di]), want = !c && kg_dtype_size(dts[di]) == 2 ? all : base;
            cr_assert_eq(ran & want, want, "%s %s: variants run %#x, want all of %#x", kg_op_get_info(op)->name,
                         kg_dtype_name(dts[di]), ran, want);
        }
}

/* The CPU half of the test above: each of its layouts reads at least 65536
   consecutive storage positions of its input (so every 2-byte pattern goes
   through), each position once, and writes each output position once. */
Test(bits_plan, bits_layouts_read_every_pattern)
{
    for (int li = 0; li < BITS_LAYOUTS; li++) {
        view iv, ov;
        cr_assert(bits_layout(li, &iv, &ov));
        const int64_t n = numel(&ov), in_n = storage(&iv), on = storage(&ov);
        cr_assert_eq(numel(&iv), n, "layout %d: input and output sizes differ", li);
        int64_t *pos = malloc((size_t)n * sizeof *pos);
        unsigned char *seen = calloc((size_t)(in_n > on ? in_n : on), 1), *pat = calloc(65536, 1);
        cr_assert(pos && seen && pat);
        view_positions(&iv, pos);
        for (int64_t e = 0; e < n; e++) {
            cr_assert(pos[e] >= 0 && pos[e] < in_n && !seen[pos[e]], "layout %d: input position %lld", li,
                      (long long)pos[e]);
            seen[pos[e]] = 1;
            pat[(uint16_t)((uint64_t)pos[e] * 40503u)] = 1;
        }
        for (int k = 0; k < 65536; k++)
            cr_assert(pat[k], "layout %d: pattern %#x never read", li, k);
        memset(seen, 0, (size_t)(in_n > on ? in_n : on));
        view_positions(&ov, pos);
        for (int64_t e = 0; e < n; e++) {
            cr_assert(pos[e] >= 0 && pos[e] < on && !seen[pos[e]], "layout %d: output position %lld", li,
                      (long long)pos[e]);
            seen[pos[e]] = 1;
        }
        free(pos);
        free(seen);
        free(pat);
    }
}

/* The word path of <op>_tperm2 (kg_ew_tperm_words_ok: 2-byte elements as
   32-bit pairs, on by default): every permutation of shapes whose dims are
   all even (pairs on both sides; tiles whole and cut at every edge, several
   dims per axis, a short side split over), copies and identity casts (bits
   moved) and casts between f16 and bf16 (the op applied to each half); the
   CPU test below checks where the path is taken. Then the same without it. */
static void check_words_shapes(kg_op op, kg_dtype dt, kg_dtype odt)
{
    check_perms(op, dt, odt, 2, S(1024, 22)); /* short side: 8 of the 1024 fold over */
    check_perms(op, dt, odt, 2, S(130, 194));
    check_perms(op, dt, odt, 3, S(2, 130, 66));
    check_perms(op, dt, odt, 3, S(64, 8, 64));
    check_perms(op, dt, odt, 4, S(6, 34, 10, 70));
    check_perms(op, dt, odt, 4, S(4, 16, 24, 64));
    check_perms(op, dt, odt, 3, S(37, 66, 45)); /* odd dims: the element path where they lead an axis */
}

static void check_words(int words)
{
    kg_test_ew_tune(KG_EW_TUNE_TPERM, 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_WORDS, words);
    want_tperm = 1;
    const tp_call cs[] = {{KG_OP_COPY, KG_BF16, KG_BF16}, {KG_OP_COPY, KG_F16, KG_F16}, {KG_OP_CAST, KG_BF16, KG_BF16},
                          {KG_OP_CAST, KG_F16, KG_BF16},  {KG_OP_CAST, KG_BF16, KG_F16}};
    for (int flat = 1; flat >= 0; flat--) {
        kg_test_ew_tune(KG_EW_TUNE_TPERM_FLAT, flat);
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
            check_words_shapes(cs[i].op, cs[i].dt, cs[i].odt);
    }
    kg_test_ew_tune(KG_EW_TUNE_TPERM_FLAT, 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_WORDS, 1);
}

Test(tperm, words_every_permutation, .init = setup, .fini = teardown, .timeout = 600)
{
    check_words(1);
}

Test(tperm, words_off_every_permutation, .init = setup, .fini = teardown, .timeout = 600)
{
    check_words(0);
}

/* The word path for ops of two inputs (KG_EW_TUNE_TPERM_WORDS 2: <op>_tperm,
   input 0 staged, input 1 direct, both as 32-bit pairs): the shapes above
   (check_perms: input 1 dense or permuted the other way, misaligned,
   broadcast, in place), add, sub and mul in bf16 and f16, with and without
   offset tables, against the reference. */
Test(tperm, words_two_inputs_every_permutation, .init = setup, .fini = teardown, .timeout = 600)
{
    kg_test_ew_tune(KG_EW_TUNE_TPERM, 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_WORDS, 2);
    want_tperm = 1;
    const tp_call cs[] = {{KG_OP_ADD, KG_BF16, KG_BF16}, {KG_OP_SUB, KG_F16, KG_F16}, {KG_OP_MUL, KG_BF16, KG_BF16}};
    for (int flat = 1; flat >= 0; flat--) {
        kg_test_ew_tune(KG_EW_TUNE_TPERM_FLAT, flat);
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
            check_words_shapes(cs[i].op, cs[i].dt, cs[i].odt);
    }
}

/* Passes of whole tiles run without predicates by default (elements of at
   most 2 bytes; the tests above); here with them, and the same ops with
   words off so the element path's whole tiles are checked on copies too. */
Test(tperm, whole_tiles_with_predicates, .init = setup, .fini = teardown, .timeout = 600)
{
    kg_test_ew_tune(KG_EW_TUNE_TPERM_FULL, 0);
    check_tperm_calls(TP_CALLS({KG_OP_COPY, KG_BF16, KG_BF16}, {KG_OP_ADD, KG_BF16, KG_BF16}, {KG_OP_COPY, KG_U8, KG_U8}), 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_FULL, 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_WORDS, 0);
    check_tperm_calls(TP_CALLS({KG_OP_COPY, KG_BF16, KG_BF16}, {KG_OP_CAST, KG_F16, KG_BF16}, {KG_OP_COPY, KG_U8, KG_U8}), 1);
    for (int flat = 0; flat < 2; flat++) {
        kg_test_ew_tune(KG_EW_TUNE_TPERM_FLAT, flat);
        check_words_shapes(KG_OP_COPY, KG_BF16, KG_BF16);
        check_words_shapes(KG_OP_ADD, KG_F16, KG_F16);
    }
    kg_test_ew_tune(KG_EW_TUNE_TPERM_WORDS, 1);
}

/* The fill threshold changes which dims fold into the axes: every setting
   is a valid plan. */
Test(tperm, every_fill_threshold, .init = setup, .fini = teardown, .timeout = 600)
{
    const int fills[] = {1, 50, 100};
    for (int i = 0; i < 3; i++) {
        kg_test_ew_tune(KG_EW_TUNE_TPERM_FILL, fills[i]);
        check_tperm_calls(TP_CALLS({KG_OP_COPY, KG_BF16, KG_BF16}, {KG_OP_ADD, KG_F32, KG_F32}), 1);
    }
}


/* The default choice (kg_ew_tperm_preferred; its rule is checked on the CPU
   below): tperm for permutations no vector fits, perm where it stores
   vectors along the output's fast dim with full tiles, nd32v for an aligned
   inner dim kept in place, nd32 for a 4-byte one whose rows miss sectors,
   and never for ops without a tperm kernel; tslab for 2-byte copies with
   short output rows and a long input row (kg_ew_tslab_by_default); tpermc
   for a 2-byte copy tperma would take whose output rows start off sectors
   (KG_EW_TUNE_TPERMC 1, since round s31r1). */
Test(tperm, default_choice, .init = setup, .fini = teardown)
{
    static const struct {
        int nd;
        int64_t s[4];
        int perm[4];
        kg_op op;
        kg_dtype dt;
        int want;
    } cs[] = {
        {2, {503, 751}, {1, 0}, KG_OP_COPY, KG_F32, KG_EW_TPERMS},  /* 4-byte copy, c one dim: rows cut at sectors */
        {2, {503, 751}, {1, 0}, KG_OP_COPY, KG_BF16, KG_EW_TPERMC}, /* 2-byte copy, rows off sectors: tpermc */
        {2, {503, 751}, {1, 0}, KG_OP_COPY, KG_I32, KG_EW_TPERMS},  /* the same kernel for every 4-byte copy */
        {2, {1001, 64}, {1, 0}, KG_OP_COPY, KG_F32, KG_EW_PERM},   /* vector stores, full tiles: perm */
        {2, {1024, 64}, {1, 0}, KG_OP_COPY, KG_BF16, KG_EW_TPERM}, /* 2-byte, vectors both sides: tperm */
        {2, {1001, 64}, {1, 0}, KG_OP_COPY, KG_BF16, KG_EW_PERM},  /* the same in bf16 (1001: scalar loads) */
        {2, {1000, 190}, {1, 0}, KG_OP_COPY, KG_BF16, KG_EW_TPERM}, /* vector stores, full tiles, but word pairs */
        {2, {1000, 190}, {1, 0}, KG_OP_ADD, KG_BF16, KG_EW_TPERM},  /* the same, two inputs (words, b direct) */
        {3, {37, 66, 45}, {2, 1, 0}, KG_OP_ADD, KG_F32, KG_EW_TPERM},
        {3, {37, 66, 45}, {1, 0, 2}, KG_OP_COPY, KG_BF16, KG_EW_TPERM}, /* odd inner dim kept in place */
        {3, {37, 66, 45}, {1, 0, 2}, KG_OP_COPY, KG_F32, KG_EW_ND32},  /* the same, 4-byte, rows off sectors */
        {2, {256, 512}, {1, 0}, KG_OP_COPY, KG_F32, KG_EW_PERM},
        {4, {2, 64, 8, 64}, {0, 2, 1, 3}, KG_OP_COPY, KG_BF16, KG_EW_ND32V},
        {3, {37, 66, 45}, {2, 1, 0}, KG_OP_EXP, KG_F32, -1}, /* no tperm kernel: perm or permf */
        {2, {2000, 33}, {1, 0}, KG_OP_COPY, KG_BF16, KG_EW_TSLAB}, /* 2-byte, rows of 33, dim 1 a whole slab */
        {2, {2000, 33}, {1, 0}, KG_OP_COPY, KG_F16, KG_EW_TSLAB},
        {2, {2000, 33}, {1, 0}, KG_OP_COPY, KG_F32, KG_EW_TPERM}, /* 4-byte: rect */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        unsigned ran = 0;
        const view a = permuted(cs[i].nd, cs[i].s, cs[i].perm), o = dense(cs[i].nd, cs[i].s);
        const int arity = kg_op_get_info(cs[i].op)->arity;
        ew_case c = {"default choice", arity, {a, o, o}, o, -1, FILL_MIXED, 0};
        run_case(cs[i].op, cs[i].dt, cs[i].dt, &c, &ran);
        if (cs[i].want >= 0)
            cr_assert_eq(ran, 1u << cs[i].want, "case %zu: variants %#x, want %d", i, ran, cs[i].want);
        else
            cr_assert(ran & ((1u << KG_EW_PERM) | (1u << KG_EW_PERMF)), "case %zu: variants %#x, want perm", i, ran);
    }
}

/* ---- perm's planner (CPU) ---------------------------------------------------- */

static uint32_t magic_div(uint32_t r, uint32_t magic, uint32_t shift)
{
    return (uint32_t)((((uint64_t)r * magic) >> 32) + r) >> shift;
}

/* kg_perm_offc / kg_perm_offj of elementwise.cuh */
static int64_t offc(const kg_perm *L, int k, int64_t c)
{
    if (!L->fold_c)
        return c * L->stride[k][0];
    const int64_t hi = magic_div((uint32_t)c, L->fmagic_c, L->fshift_c);
    cr_assert_eq(hi, c / L->fold_c);
    return (c - hi * L->fold_c) * L->stride[k][0] + hi * L->fstride[0][k];
}

static int64_t offj(const kg_perm *L, int k, int64_t j)
{
    if (!L->fold_j)
        return j * L->stride[k][1];
    const int64_t hi = magic_div((uint32_t)j, L->fmagic_j, L->fshift_j);
    cr_assert_eq(hi, j / L->fold_j);
    return (j - hi * L->fold_j) * L->stride[k][1] + hi * L->fstride[1][k];
}

/* A plan walker's visit of one position: got[0] its output offset (out
   dense), got[1 + k] input k's offset; the output element must be new and
   every input offset the one input k's broadcast strides bst[k] give. */
static void visit(unsigned char *seen, int64_t n, const kg_tensor *out, int n_in,
                  const int64_t (*bst)[KG_MAX_DIMS], const int64_t *got)
{
    const int64_t o = got[0];
    cr_assert(o >= 0 && o < n, "output offset %lld outside [0, %lld)", (long long)o, (long long)n);
    cr_assert_eq(seen[o], 0, "output element %lld visited twice", (long long)o);
    seen[o] = 1;
    for (int k = 0; k < n_in; k++) {
        int64_t r = o, want = 0;
        for (int d = out->ndim - 1; d >= 0; d--) {
            want += (r % out->shape[d]) * bst[k][d];
            r /= out->shape[d];
        }
        cr_assert_eq(got[k + 1], want, "input %d at output element %lld: offset %lld, want %lld", k, (long long)o,
                     (long long)got[k + 1], (long long)want);
    }
}

static int folded; /* plans walked with a folded axis */

/* Plans out = f(ins) and walks every tile of the plan the way kg_ew_perm
   does: each output element must be visited once, with every input's offset
   the one its broadcast strides give. Returns the plan (0 = not planned). */
static int walk_plan(const kg_tensor *out, const kg_tensor *const *in, int n_in, kg_perm *pm)
{
    kg_layout L;
    kg_layout_build(&L, out, in, n_in);
    const void *ptrs[KG_EW_MAX_OPERANDS] = {out->data, 0, 0, 0};
    size_t es[KG_EW_MAX_OPERANDS] = {kg_dtype_size(out->dtype), 0, 0, 0}, maxes = es[0];
    for (int k = 0; k < n_in; k++) {
        ptrs[k + 1] = in[k]->data;
        es[k + 1] = kg_dtype_size(in[k]->dtype);
        maxes = es[k + 1] > maxes ? es[k + 1] : maxes;
    }
    const int vec = (int)(16 / maxes);
    if (!kg_ew_plan_perm(&L, ptrs, es, vec, pm))
        return 0;
    const int64_t T = maxes >= 8 ? 32 : 64, n = kg_numel(out);
    /* out is dense: its offset is the row-major index */
    int64_t bst[KG_EW_MAX_OPERANDS][KG_MAX_DIMS];
    for (int k = 0; k < n_in; k++)
        kg_broadcast_strides(in[k], out->ndim, out->shape, bst[k]);
    unsigned char *seen = calloc((size_t)n, 1);
    cr_assert_not_null(seen);
    cr_assert_eq(pm->tiles, (uint32_t)(pm->tiles_c * pm->tiles_j * (uint64_t)(n / (pm->n0 * pm->nj))));
    for (uint32_t tile = 0; tile < pm->tiles; tile++) {
        const uint32_t q = magic_div(tile, pm->magic_c, pm->shift_c);
        uint32_t b = magic_div(q, pm->magic_j, pm->shift_j);
        cr_assert_eq(q, tile / pm->tiles_c);
        cr_assert_eq(b, q / pm->tiles_j);
        const int64_t c0 = (int64_t)(tile - q * pm->tiles_c) * T, j0 = (int64_t)(q - b * pm->tiles_j) * T;
        int64_t off[KG_EW_MAX_OPERANDS] = {0, 0, 0, 0};
        for (int d = 0; d < pm->nbatch; d++) {
            const uint32_t nb = magic_div(b, pm->bmagic[d], pm->bshift[d]);
            cr_assert_eq(nb, b / pm->bsize[d]);
            for (int k = 0; k < KG_EW_MAX_OPERANDS; k++)
                off[k] += (int64_t)(b - nb * pm->bsize[d]) * pm->stride[k][2 + d];
            b = nb;
        }
        for (int64_t j = j0; j < j0 + T && j < pm->nj; j++)
            for (int64_t c = c0; c < c0 + T && c < pm->n0; c++) {
                int64_t got[KG_EW_MAX_OPERANDS];
                for (int k = 0; k <= n_in; k++)
                    got[k] = off[k] + offj(pm, k, j) + offc(pm, k, c);
                visit(seen, n, out, n_in, (const int64_t(*)[KG_MAX_DIMS])bst, got);
            }
    }
    for (int64_t e = 0; e < n; e++)
        cr_assert_eq(seen[e], 1, "output element %lld never visited", (long long)e);
    free(seen);
    folded += pm->fold_c || pm->fold_j;
    /* vectors only where the sizes allow (within a fold) */
    if (pm->vec_c)
        cr_assert_eq(L.size[0] % vec, 0);
    if (pm->vec_j)
        cr_assert_eq((pm->fold_j ? pm->fold_j : pm->nj) % vec, 0);
    return 1;
}

static kg_tensor tview(void *data, kg_dtype dt, const view *v)
{
    kg_tensor t;
    memset(&t, 0, sizeof t);
    t.data = (char *)data + v->offset * (int64_t)kg_dtype_size(dt);
    t.dtype = dt;
    t.ndim = v->ndim;
    memcpy(t.shape, v->shape, sizeof t.shape);
    memcpy(t.strides, v->strides, sizeof t.strides);
    return t;
}

/* The layout of a copy of a dense buffer of shape P read in the order p
   (read_in_order) into a dense output, both of dtype dt, at the plan tests'
   device addresses: the input at KT_DEV(0), the output at KT_DEV(1 << 28). */
static kg_layout copy_in_order_layout_at(int nd, const int64_t *P, const int *p, kg_dtype dt, int64_t in_off,
                                         int64_t out_off)
{
    int64_t shape[KG_MAX_DIMS];
    const view a = offset(read_in_order(nd, P, p, shape), in_off), o = offset(dense(nd, shape), out_off);
    kg_tensor ta = tview(KT_DEV(0), dt, &a), to = tview(KT_DEV(1 << 28), dt, &o);
    const kg_tensor *ins[1] = {&ta};
    kg_layout L;
    kg_layout_build(&L, &to, ins, 1);
    return L;
}

static kg_layout copy_in_order_layout(int nd, const int64_t *P, const int *p, kg_dtype dt)
{
    return copy_in_order_layout_at(nd, P, p, dt, 0, 0);
}

Test(perm_plan, every_permutation_of_2_to_5_dims_covers_each_element_once)
{
    static const struct {
        int nd;
        int64_t s[5];
    } shapes[] = {{2, {130, 67}},       {3, {3, 70, 129}},       {3, {64, 8, 64}},     {4, {3, 70, 5, 67}},
                  {5, {2, 3, 65, 2, 66}}, {4, {7, 130, 5, 9}}, {5, {3, 5, 7, 9, 11}}, {3, {7, 301, 5}}};
    folded = 0;
    static const kg_dtype dts[] = {KG_F32, KG_BF16, KG_F64, KG_U8};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
            const int nd = shapes[si].nd;
            int perm[5] = {0, 1, 2, 3, 4};
            int planned = 0, count = 0;
            do {
                const view a = permuted(nd, shapes[si].s, perm), o = dense(nd, shapes[si].s);
                kg_tensor ta = tview(KT_DEV(0), dts[di], &a), tb = tview(KT_DEV(1 << 24), dts[di], &o),
                          to = tview(KT_DEV(1 << 26), dts[di], &o);
                const kg_tensor *ins[2] = {&ta, &tb};
                kg_perm pm;
                const int ok = walk_plan(&to, ins, 2, &pm);
                /* planned exactly when a's fast dim is not the output's */
                cr_assert_eq(ok, perm[nd - 1] != nd - 1, "shape %zu perm %d: planned %d", si, count, ok);
                if (ok) {
                    cr_assert_eq(pm.staged, 2u, "a staged, b direct");
                    planned++;
                }
                count++;
            } while (next_perm(perm, nd));
            cr_assert(planned > 0);
        }
    cr_assert(folded > 0, "no plan folded a short dim");
}

Test(perm_plan, vectors_only_where_sizes_strides_and_pointers_allow)
{
    kg_perm pm;
    view a = permuted(2, S(4096, 4096), (const int[]){1, 0}), o = dense(2, S(4096, 4096));
    kg_tensor ta = tview(KT_DEV(0), KG_F32, &a), to = tview(KT_DEV(1 << 28), KG_F32, &o);
    const kg_tensor *ins[1] = {&ta};
    cr_assert(walk_plan(&to, ins, 1, &pm));
    cr_assert(pm.vec_j && pm.vec_c && pm.staged == 2u && pm.nbatch == 0);
    cr_assert_eq(pm.tiles, 64u * 64u);
    /* a misaligned input: no vectors along J; the output still vectorizes */
    kg_tensor tm = tview(KT_DEV(4), KG_F32, &a);
    ins[0] = &tm;
    cr_assert(walk_plan(&to, ins, 1, &pm));
    cr_assert(!pm.vec_j && pm.vec_c);
    /* odd sizes: no vectors on either side */
    view a2 = permuted(2, S(6007, 5003), (const int[]){1, 0}), o2 = dense(2, S(6007, 5003));
    kg_tensor ta2 = tview(KT_DEV(0), KG_F32, &a2), to2 = tview(KT_DEV(1 << 28), KG_F32, &o2);
    ins[0] = &ta2;
    cr_assert(walk_plan(&to2, ins, 1, &pm));
    cr_assert(!pm.vec_j && !pm.vec_c);
    /* [B,S,H,D] -> [B,H,S,D]: the fast dim stays, nothing to stage */
    const int64_t bshd[4] = {2, 64, 8, 64};
    view p = permuted(4, bshd, (const int[]){0, 2, 1, 3}), od = dense(4, bshd);
    kg_tensor tp = tview(KT_DEV(0), KG_BF16, &p), tod = tview(KT_DEV(1 << 28), KG_BF16, &od);
    ins[0] = &tp;
    cr_assert_not(walk_plan(&tod, ins, 1, &pm));
    /* a broadcast input along the output's fast dim is read directly */
    view bc = dense(2, S(4096, 1));
    bc.shape[1] = 4096;
    bc.strides[1] = 0;
    kg_tensor tbc = tview(KT_DEV(0), KG_F32, &bc);
    const kg_tensor *two[2] = {&ta, &tbc};
    cr_assert(walk_plan(&to, two, 2, &pm));
    cr_assert(pm.staged == 2u && pm.vec_c && pm.vec_j);
    /* more tiles than a 32-bit grid: not planned (nothing is allocated) */
    view h = permuted(3, S(1 << 20, 1 << 16, 1 << 12), (const int[]){0, 2, 1}), oh = dense(3, S(1 << 20, 1 << 16, 1 << 12));
    kg_tensor th = tview(KT_DEV(0), KG_U8, &h), toh = tview(KT_DEV(1 << 28), KG_U8, &oh);
    kg_layout L;
    const kg_tensor *hi[1] = {&th};
    kg_layout_build(&L, &toh, hi, 1);
    const void *ptrs[4] = {toh.data, th.data, 0, 0};
    const size_t es[4] = {1, 1, 0, 0};
    cr_assert_not(kg_ew_plan_perm(&L, ptrs, es, 16, &pm));
}

/* ---- tperm's planner (CPU) --------------------------------------------------- */

/* kg_tp_offsets of elementwise_tperm.cuh, with the magic divisions checked */
static void tp_offsets(const kg_tperm *L, int a, uint32_t x, int n_ops, int64_t *off)
{
    for (int d = 0; d < L->nd[a]; d++) {
        const uint32_t q = magic_div(x, L->magic[a][d], L->shift[a][d]);
        cr_assert_eq(q, x / L->size[a][d]);
        const int64_t m = x - (int64_t)q * L->size[a][d];
        x = q;
        for (int k = 0; k < n_ops; k++)
            off[k] += m * L->stride[a][k][d];
    }
    cr_assert_eq(x, 0u, "axis %d position beyond its dims", a);
}

/* Plans out = f(ins) for tperm and walks every tile the way kg_ew_tperm
   does (dense out): each output element visited once, every input's offset
   the one its broadcast strides give. Returns the plan (0 = not planned). */
static int walk_tperm(const kg_tensor *out, const kg_tensor *const *in, int n_in, kg_tperm *tp)
{
    kg_layout L;
    kg_layout_build(&L, out, in, n_in);
    size_t es[KG_EW_MAX_OPERANDS] = {kg_dtype_size(out->dtype), 0, 0, 0}, maxes = es[0];
    for (int k = 0; k < n_in; k++) {
        es[k + 1] = kg_dtype_size(in[k]->dtype);
        maxes = es[k + 1] > maxes ? es[k + 1] : maxes;
    }
    if (!kg_ew_plan_tperm(&L, es, tp))
        return 0;
    const int64_t T = maxes >= 8 ? 32 : 64, n = kg_numel(out);
    int64_t bst[KG_EW_MAX_OPERANDS][KG_MAX_DIMS];
    for (int k = 0; k < n_in; k++)
        kg_broadcast_strides(in[k], out->ndim, out->shape, bst[k]);
    cr_assert_eq((int64_t)tp->n[0] * tp->n[1] * tp->n[2], n, "axes cover %u x %u x %u of %lld elements", tp->n[0],
                 tp->n[1], tp->n[2], (long long)n);
    cr_assert_eq(tp->tiles, tp->tiles_c * tp->tiles_j * tp->n[2]);
    cr_assert_eq(tp->tiles_c, (tp->n[0] + (tp->rect ? tp->rc : T) - 1) / (tp->rect ? tp->rc : T));
    cr_assert_eq(tp->tiles_j, (tp->n[1] + (tp->rect ? tp->rj : T) - 1) / (tp->rect ? tp->rj : T));
    /* every dim in one axis (a split dim in two) */
    cr_assert(tp->nd[0] + tp->nd[1] + tp->nd[2] >= L.ndim && tp->nd[0] + tp->nd[1] + tp->nd[2] <= KG_LAYOUT_MAX_DIMS);
    cr_assert_eq(tp->flat, tp->nd[0] == 1 && tp->nd[1] == 1);
    unsigned char *seen = calloc((size_t)n, 1);
    cr_assert_not_null(seen);
    /* tile extents: T x T, or rect's rc x rj (kg_tpr_tile) */
    const int64_t xc = tp->rect ? tp->rc : T, xj = tp->rect ? tp->rj : T;
    if (tp->rect) {
        cr_assert(tp->flat && tp->nd[0] == 1 && tp->nd[1] == 1 && !tp->full && tp->rc >= 2 && tp->rj >= 2);
        cr_assert_leq((int64_t)tp->rc * tp->rj, T * T, "rect %u x %u beyond a tile's %lld positions", tp->rc, tp->rj,
                     (long long)(T * T));
        for (int k = 1; k <= n_in; k++) /* every staging buffer holds rc rows of the pitch */
            cr_assert_leq((int64_t)tp->rc * KG_TPR_PITCH(es[k], tp->rj), (int64_t)KG_TP_STAGE_ELEMS(es[k], T));
        for (uint32_t e = 0; e < T * T; e++) /* the kernel's divisions of a tile position */
            cr_assert(magic_div(e, tp->magic_rc, tp->shift_rc) == e / tp->rc &&
                      magic_div(e, tp->magic_rj, tp->shift_rj) == e / tp->rj);
    }
    for (uint32_t tile = 0; tile < tp->tiles; tile++) {
        const uint32_t q = magic_div(tile, tp->magic_c, tp->shift_c);
        const uint32_t b = magic_div(q, tp->magic_j, tp->shift_j);
        cr_assert_eq(q, tile / tp->tiles_c);
        cr_assert_eq(b, q / tp->tiles_j);
        const int64_t c0 = (int64_t)(tile - q * tp->tiles_c) * xc, j0 = (int64_t)(q - b * tp->tiles_j) * xj;
        int64_t boff[KG_EW_MAX_OPERANDS] = {0, 0, 0, 0};
        tp_offsets(tp, KG_TP_B, b, n_in + 1, boff);
        for (int64_t j = j0; j < j0 + xj && j < tp->n[1]; j++) {
            int64_t joff[KG_EW_MAX_OPERANDS] = {0, 0, 0, 0};
            tp_offsets(tp, KG_TP_J, (uint32_t)j, n_in + 1, joff);
            for (int64_t c = c0; c < c0 + xc && c < tp->n[0]; c++) {
                int64_t off[KG_EW_MAX_OPERANDS];
                memcpy(off, boff, sizeof off);
                tp_offsets(tp, KG_TP_C, (uint32_t)c, n_in + 1, off);
                for (int k = 0; k <= n_in; k++)
                    off[k] += joff[k];
                visit(seen, n, out, n_in, (const int64_t(*)[KG_MAX_DIMS])bst, off);
            }
        }
    }
    for (int64_t e = 0; e < n; e++)
        cr_assert_eq(seen[e], 1, "output element %lld never visited", (long long)e);
    free(seen);
    return 1;
}

Test(tperm_plan, every_permutation_of_2_to_5_dims_covers_each_element_once)
{
    static const struct {
        int nd;
        int64_t s[5];
    } shapes[] = {{2, {130, 67}},       {3, {3, 70, 129}},     {3, {64, 8, 64}},        {4, {3, 70, 5, 67}},
                  {5, {2, 3, 65, 2, 66}}, {4, {7, 130, 5, 9}}, {5, {3, 5, 7, 9, 11}}, {3, {7, 301, 5}},
                  {2, {33, 2048}},        {2, {1536, 11}},     {3, {5, 33, 1024}},  {2, {25, 1155}},
                  {3, {3, 29, 2541}}};
    static const kg_dtype dts[] = {KG_F32, KG_BF16, KG_F64, KG_U8};
    const int fills[] = {90, 1, 100};
    for (int fi = 0; fi < 3; fi++) {
        kg_test_ew_tune(KG_EW_TUNE_TPERM_FILL, fills[fi]);
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
                const int nd = shapes[si].nd;
                int perm[5] = {0, 1, 2, 3, 4}, count = 0;
                do {
                    const view a = permuted(nd, shapes[si].s, perm), o = dense(nd, shapes[si].s);
                    kg_tensor ta = tview(KT_DEV(0), dts[di], &a), tb = tview(KT_DEV(1 << 24), dts[di], &o),
                              to = tview(KT_DEV(1 << 26), dts[di], &o);
                    const kg_tensor *ins[2] = {&ta, &tb};
                    kg_tperm tp;
                    int ident = 1;
                    for (int d = 0; d < nd; d++)
                        ident = ident && perm[d] == d;
                    /* planned unless everything is dense (one coalesced dim) */
                    const int ok = walk_tperm(&to, ins, 2, &tp);
                    cr_assert_eq(ok, !ident, "shape %zu perm %d: planned %d", si, count, ok);
                    if (!ok) {
                        count++;
                        continue;
                    }
                    /* a is staged exactly when its fast dim is not the output's */
                    cr_assert_eq(tp.staged, perm[nd - 1] != nd - 1 ? 2u : 0u, "shape %zu perm %d: staged %#x", si,
                                 count, tp.staged);
                    /* a broadcast input (every other dim) is never staged along a dim it lacks */
                    view bv = o;
                    for (int d = 0; d < nd; d += 2)
                        bv.strides[d] = 0;
                    kg_tensor tbv = tview(KT_DEV(1 << 24), dts[di], &bv);
                    const kg_tensor *ins2[2] = {&ta, &tbv};
                    cr_assert(walk_tperm(&to, ins2, 2, &tp));
                    count++;
                } while (next_perm(perm, nd));
            }
    }
    kg_test_ew_tune(KG_EW_TUNE_TPERM_FILL, 90);
    /* short dims fold: [3,5,7,9,11] reversed fills both axes past a tile */
    const view a = permuted(5, S(3, 5, 7, 9, 11), (const int[]){4, 3, 2, 1, 0}), o = dense(5, S(3, 5, 7, 9, 11));
    kg_tensor ta = tview(KT_DEV(0), KG_BF16, &a), to = tview(KT_DEV(1 << 26), KG_BF16, &o);
    const kg_tensor *ins[1] = {&ta};
    kg_tperm tp;
    cr_assert(walk_tperm(&to, ins, 1, &tp));
    cr_assert(tp.n[0] >= 64 && tp.n[1] >= 64 && tp.nd[0] >= 2 && tp.nd[1] >= 2, "c %u (%d dims), j %u (%d dims)",
              tp.n[0], tp.nd[0], tp.n[1], tp.nd[1]);
    /* a transpose with one short side: a power-of-2 part of the long side
       moves over, so both axes fill tiles */
    /* (an odd long side with a short j, the input's rows: a divisor other
       than a power of 2, 1155 = 5 x 231) */
    const int64_t sides[3][2] = {{33, 2048}, {2048, 33}, {25, 1155}};
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT, 0); /* (the short c of {2048, 33} takes rect by default) */
    for (int i = 0; i < 3; i++) {
        const view at = permuted(2, sides[i], (const int[]){1, 0}), ot = dense(2, sides[i]);
        kg_tensor tat = tview(KT_DEV(0), KG_BF16, &at), tot = tview(KT_DEV(1 << 26), KG_BF16, &ot);
        const kg_tensor *one[1] = {&tat};
        cr_assert(walk_tperm(&tot, one, 1, &tp));
        for (int a = 0; a < 2; a++) /* each axis at least 90% of its tiles */
            cr_assert(tp.n[a] >= 64 && tp.n[a] * 10 >= (tp.n[a] + 63) / 64 * 64 * 9 && !tp.flat, "side %d: c %u, j %u", i,
                      tp.n[0], tp.n[1]);
    }
    /* offsets beyond 31 bits: not planned */
    view h = permuted(2, S(1 << 16, 1 << 16), (const int[]){1, 0}), oh = dense(2, S(1 << 16, 1 << 16));
    kg_tensor th = tview(KT_DEV(0), KG_F32, &h), toh = tview(KT_DEV(1 << 28), KG_F32, &oh);
    kg_layout L;
    const kg_tensor *hi[1] = {&th};
    kg_layout_build(&L, &toh, hi, 1);
    const size_t es[4] = {4, 4, 0, 0};
    cr_assert_not(kg_ew_plan_tperm(&L, es, &tp));
}

/* How many permutations of `shape` (input 0 permuted, the output dense)
   tperm plans with rect tiles under the current tunings (dtype dt). */
static int rect_plans(int nd, const int64_t *shape, kg_dtype dt)
{
    int perm[KG_MAX_DIMS], n = 0;
    for (int d = 0; d < nd; d++)
        perm[d] = d;
    do {
        const view a = permuted(nd, shape, perm), o = dense(nd, shape);
        kg_tensor ta = tview(KT_DEV(0), dt, &a), to = tview(KT_DEV(1 << 28), dt, &o);
        const kg_tensor *ins[1] = {&ta};
        kg_layout L;
        kg_layout_build(&L, &to, ins, 1);
        const size_t es[4] = {kg_dtype_size(dt), kg_dtype_size(dt), 0, 0};
        kg_tperm tp;
        n += kg_ew_plan_tperm(&L, es, &tp) && tp.rect;
    } while (next_perm(perm, nd));
    return n;
}

/* the shapes of tperm::rect_every_permutation (below) */
static const struct {
    int nd;
    int64_t s[4];
} rect_shapes[] = {{3, {33, 130, 5}}, {3, {3001, 2, 9}}, {4, {1, 600, 1, 7}}, {3, {130, 128, 3}}, {2, {2100, 2}},
                   {3, {64, 33, 64}}};

/* rect's plan (kg_tperm.h; KG_EW_TUNE_TPERM_RECT and the tunings beside
   it): every permutation of shapes with short sides is planned and walked
   (each element once, tile extents within the buffers, the kernel's
   divisions exact), with rect off, at any long side in steps of 32 and of
   8; rect is taken only where its rule holds (the output's dim 0 short and
   its dim 1 the input's fast dim) with tiles at least 90% full, and there
   each tile's output is one contiguous run. Then the defaults: the bench's
   [33,64,95,91] p1.2.3.0 (a short c and a long j) takes rect in f32, not
   in bf16 (2-byte elements); a short j (p2.1.3.0) and a short input fast
   dim (p1.0.3.2) do not. Last, the GPU test's shapes each have
   permutations it plans with rect (its tunings). */
Test(tperm_plan, rect_tiles_cover_each_element_once_in_contiguous_runs)
{
    static const struct {
        int nd;
        int64_t s[4];
    } shapes[] = {{3, {33, 8, 200}}, {2, {1000, 33}}, {3, {7, 3, 700}},  {3, {95, 3, 91}}, {4, {1, 33, 1, 130}},
                  {3, {128, 2, 300}}, {2, {129, 64}},  {3, {2, 40, 3}}, {3, {64, 33, 64}}, {3, {5, 600, 9}}};
    static const kg_dtype dts[] = {KG_F32, KG_BF16, KG_F64, KG_U8};
    int taken = 0, refused = 0;
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT_TILES, 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT_MIN_BYTES, 1);
    for (int on = 0; on < 3; on++) { /* off, on in steps of 32, on in steps of 8 */
        kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT, on ? 128 : 0);
        const uint32_t step = on == 1 ? 32 : 8;
        kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT_STEP, (int)step);
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
                const int nd = shapes[si].nd;
                int perm[4] = {0, 1, 2, 3};
                do {
                    const view a = permuted(nd, shapes[si].s, perm), o = dense(nd, shapes[si].s);
                    kg_tensor ta = tview(KT_DEV(0), dts[di], &a), to = tview(KT_DEV(1 << 26), dts[di], &o);
                    const kg_tensor *ins[1] = {&ta};
                    kg_tperm tp;
                    if (!walk_tperm(&to, ins, 1, &tp))
                        continue;
                    cr_assert(on || !tp.rect, "rect planned with the tuning off");
                    if (!on)
                        continue;
                    /* the rule, from the coalesced layout */
                    kg_layout L;
                    kg_layout_build(&L, &to, ins, 1);
                    const int64_t T = kg_dtype_size(dts[di]) >= 8 ? 32 : 64;
                    int fast = -1;
                    for (int d = 0; d < L.ndim; d++)
                        if (L.stride[1][d] != 0 && (fast < 0 || L.stride[1][d] < L.stride[1][fast]))
                            fast = d;
                    const int64_t n0 = L.size[0], nf = fast > 0 ? L.size[fast] : 0;
                    const int b = fast == 1 && n0 >= 2 && n0 <= 128 && nf >= 64 && L.stride[0][0] == 1 &&
                                  L.stride[0][1] == n0;
                    cr_assert(!tp.rect || b, "shape %zu %s: rect without its rule", si, kg_dtype_name(dts[di]));
                    if (!tp.rect) {
                        refused++;
                        continue;
                    }
                    cr_assert_geq((int64_t)tp.rc * tp.rj * 10, T * T * 9, "rect %u x %u: tiles under 90%% full", tp.rc,
                                  tp.rj);
                    /* the output offset of (c, j) = c + n0 j: each tile's output one run */
                    cr_assert_eq(tp.rect, 1u);
                    cr_assert(tp.rc == tp.n[0] && tp.stride[KG_TP_C][0][0] == 1 &&
                              tp.stride[KG_TP_J][0][0] == (int32_t)tp.n[0]);
                    cr_assert(tp.rj % step == 0 && tp.rj >= 32);
                    taken++;
                } while (next_perm(perm, nd));
            }
    }
    cr_assert(taken > 10 && refused > 10, "rect %d, refused %d", taken, refused);
    /* the defaults on the bench's [33,64,95,91] (logical dim d = physical dim p[d], the output dense) */
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT, 56);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT_TILES, 16);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT_STEP, 8);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT_MIN_BYTES, 4);
    static const struct {
        int p[4];
        kg_dtype dt;
        uint32_t rc, rj; /* 0: no rect */
    } ws[] = {{{1, 2, 3, 0}, KG_F32, 33, 120}, /* a 2-d [553280, 33]^T: class B, 3960 positions */
              {{1, 2, 3, 0}, KG_BF16, 0, 0},   /* 2-byte elements: not by default */
              {{2, 1, 3, 0}, KG_BF16, 0, 0}, /* j of 91: its tiles would be cut */
              {{1, 0, 3, 2}, KG_F32, 0, 0}}; /* a short input fast dim (class A: removed) */
    for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++) {
        const int64_t P[4] = {33, 64, 95, 91};
        const kg_layout L = copy_in_order_layout(4, P, ws[i].p, ws[i].dt);
        const size_t es[4] = {kg_dtype_size(ws[i].dt), kg_dtype_size(ws[i].dt), 0, 0};
        kg_tperm tp;
        cr_assert(kg_ew_plan_tperm(&L, es, &tp), "case %zu: no tperm plan", i);
        cr_assert((tp.rect != 0) == (ws[i].rc != 0) && (!tp.rect || (tp.rc == ws[i].rc && tp.rj == ws[i].rj)),
                  "case %zu: rect %u, %u x %u", i, tp.rect, tp.rc, tp.rj);
    }
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT, 128);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT_TILES, 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT_MIN_BYTES, 1);
    for (size_t si = 0; si < sizeof rect_shapes / sizeof rect_shapes[0]; si++)
        cr_assert_gt(rect_plans(rect_shapes[si].nd, rect_shapes[si].s, KG_F32), 0, "shape %zu: rect never planned", si);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT, 56);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT_TILES, 16);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT_MIN_BYTES, 4);
}

/* rect (kg_tperm.h; KG_EW_TUNE_TPERM_RECT, any long side):
   every permutation of shapes with a short side (odd, even, 1-element
   dims, a cut last tile along the long side), then a misaligned one, one
   with a broadcast input and one in place (check_perms), against the
   reference; copies and casts bitwise; the long side in steps of 8 (the
   default: warps cross rows) and of 32; ops of one input of at most 2-byte
   elements two tiles per pass. The planner takes rect for some
   permutations of every shape (tperm_plan::rect_tiles_cover_..., same
   tunings). */
Test(tperm, rect_every_permutation, .init = setup, .fini = teardown, .timeout = 600)
{
    kg_test_ew_tune(KG_EW_TUNE_TPERM, 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT, 128);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT_TILES, 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT_MIN_BYTES, 1);
    want_tperm = 1;
    const tp_call cs[] = {{KG_OP_COPY, KG_F32, KG_F32},  {KG_OP_COPY, KG_BF16, KG_BF16}, {KG_OP_COPY, KG_U8, KG_U8},
                          {KG_OP_COPY, KG_F64, KG_F64},  {KG_OP_CAST, KG_F16, KG_F32},   {KG_OP_CAST, KG_F32, KG_BF16},
                          {KG_OP_ADD, KG_F32, KG_F32},   {KG_OP_ADD, KG_BF16, KG_BF16},  {KG_OP_MUL, KG_I64, KG_I64},
                          {KG_OP_CAST, KG_F16, KG_BF16}};
    for (size_t si = 0; si < sizeof rect_shapes / sizeof rect_shapes[0]; si++) {
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
            check_perms(cs[i].op, cs[i].dt, cs[i].odt, rect_shapes[si].nd, rect_shapes[si].s);
    }
    /* the long side in steps of 32 */
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT_STEP, 32);
    static const int few[] = {0, 1, 2, 4, 7, 9}; /* copy f32, bf16, u8; casts f16 -> f32, f16 -> bf16; add bf16 */
    for (size_t si = 0; si < sizeof rect_shapes / sizeof rect_shapes[0]; si++)
        for (size_t i = 0; i < sizeof few / sizeof few[0]; i++)
            check_perms(cs[few[i]].op, cs[few[i]].dt, cs[few[i]].odt, rect_shapes[si].nd, rect_shapes[si].s);
}

/* The word path's rule (kg_ew_tperm_words_ok) and what the kernel relies
   on where it holds: in every tile, for each even c the output offsets of
   (c, j) and (c + 1, j) are an even pair, for each even j the input
   offsets of (c, j) and (c, j + 1) likewise, and tiles (64 elements) cut
   the axes at even positions. Taken for every permutation that stages the
   input when every dim is even; never with an odd leading dim, a pointer
   off 4 bytes, or an unstaged input. */
Test(tperm_plan, word_pairs_where_the_rule_allows)
{
    static const struct {
        int nd;
        int64_t s[4];
        int all_even;
    } shapes[] = {{2, {1024, 22}, 1}, {2, {1538, 22}, 1}, {3, {2, 130, 66}, 1}, {4, {6, 34, 10, 70}, 1}, {3, {64, 8, 64}, 1},
                  {3, {37, 66, 45}, 0}, {2, {33, 2048}, 0}, {4, {3, 70, 5, 67}, 0}};
    int taken = 0, refused = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int nd = shapes[si].nd;
        int perm[4] = {0, 1, 2, 3};
        do {
            const view a = permuted(nd, shapes[si].s, perm), o = dense(nd, shapes[si].s);
            kg_tensor ta = tview(KT_DEV(0), KG_BF16, &a), to = tview(KT_DEV(1 << 26), KG_BF16, &o);
            const kg_tensor *ins[1] = {&ta};
            kg_tperm tp;
            if (!walk_tperm(&to, ins, 1, &tp))
                continue;
            const int ok = kg_ew_tperm_words_ok(&tp, to.data, ta.data, NULL);
            cr_assert(!ok || tp.staged == 2u, "shape %zu: words without a staged input", si);
            if (shapes[si].all_even && tp.size[KG_TP_C][0] % 2 == 0 && tp.size[KG_TP_J][0] % 2 == 0)
                cr_assert_eq(ok, tp.staged == 2u, "shape %zu: words %d, staged %#x", si, ok, tp.staged);
            cr_assert_not(kg_ew_tperm_words_ok(&tp, to.data, (char *)ta.data + 2, NULL), "input off 4 bytes");
            cr_assert_not(kg_ew_tperm_words_ok(&tp, (char *)to.data + 2, ta.data, NULL), "output off 4 bytes");
            {
                /* two inputs (add a + b): b dense, as the output (direct), takes
                   words where a alone does; not off 4 bytes, nor where b is
                   staged too (b = a's layout) or broadcast along c */
                kg_tensor tb = tview(KT_DEV(1 << 27), KG_BF16, &o), tz = tview(KT_DEV(1 << 27), KG_BF16, &a);
                int64_t bs[4] = {1, 1, 1, 1};
                for (int d = 0; d + 1 < nd; d++)
                    bs[d] = shapes[si].s[d];
                const view bv = dense(nd, bs);
                kg_tensor tbc = tview(KT_DEV(1 << 27), KG_BF16, &bv);
                const kg_tensor *in2[2] = {&ta, &tb}, *inz[2] = {&ta, &tz}, *inc[2] = {&ta, &tbc};
                kg_tperm t2;
                cr_assert(walk_tperm(&to, in2, 2, &t2));
                const int ok2 = kg_ew_tperm_words_ok(&t2, to.data, ta.data, tb.data);
                cr_assert_eq(ok2, ok, "shape %zu: words of two inputs %d, of one %d", si, ok2, ok);
                cr_assert(!ok2 || (t2.stride[KG_TP_C][2][0] == 1 && t2.staged == 2u));
                cr_assert_not(kg_ew_tperm_words_ok(&t2, to.data, ta.data, (char *)tb.data + 2), "b off 4 bytes");
                if (walk_tperm(&to, inz, 2, &t2))
                    cr_assert_not(kg_ew_tperm_words_ok(&t2, to.data, ta.data, tz.data), "b staged");
                if (shapes[si].s[nd - 1] > 1 && walk_tperm(&to, inc, 2, &t2))
                    cr_assert_not(kg_ew_tperm_words_ok(&t2, to.data, ta.data, tbc.data), "b broadcast along c");
            }
            taken += ok;
            refused += !ok;
            if (!ok)
                continue;
            cr_assert(tp.n[0] % 2 == 0 && tp.n[1] % 2 == 0);
            for (uint32_t j = 0; j < tp.n[1]; j++)
                for (uint32_t c = 0; c < tp.n[0]; c++)
                    for (uint32_t b = tp.n[2] / 2; b == tp.n[2] / 2; b++) {
                        int64_t o00[4] = {0}, o10[4] = {0}, o01[4] = {0};
                        tp_offsets(&tp, KG_TP_B, b, 2, o00);
                        tp_offsets(&tp, KG_TP_B, b, 2, o10);
                        tp_offsets(&tp, KG_TP_B, b, 2, o01);
                        tp_offsets(&tp, KG_TP_C, c, 2, o00);
                        tp_offsets(&tp, KG_TP_J, j, 2, o00);
                        tp_offsets(&tp, KG_TP_C, c ^ 1u, 2, o10);
                        tp_offsets(&tp, KG_TP_J, j, 2, o10);
                        tp_offsets(&tp, KG_TP_C, c, 2, o01);
                        tp_offsets(&tp, KG_TP_J, j ^ 1u, 2, o01);
                        cr_assert(o00[0] % 2 == (int64_t)(c % 2) && o10[0] - o00[0] == (c % 2 ? -1 : 1),
                                  "shape %zu: output pair at c %u j %u", si, c, j);
                        cr_assert(o00[1] % 2 == (int64_t)(j % 2) && o01[1] - o00[1] == (j % 2 ? -1 : 1),
                                  "shape %zu: input pair at c %u j %u", si, c, j);
                    }
        } while (next_perm(perm, nd));
    }
    cr_assert(taken > 20 && refused > 10, "words taken %d, refused %d", taken, refused);
}

/* tplane's rule (kg_ew_plan_tplane): planes contiguous in both operands
   and transposed, of at least 16384 bytes, their buffer (the plane + 32
   bytes) at most 48 KiB; the plane count and the magic division by nc;
   rotated gathers (KG_EW_TUNE_GATHER_ROT 2, the default) where the rows
   have an even number of elements. */
Test(tplane_plan, the_rule)
{
    static const struct {
        int nd;
        int64_t P[4];
        int p[4];
        kg_dtype dt;
        int want;
        uint32_t nc, nj, planes;
    } cs[] = {
        /* buffer shape P read in the order p (read_in_order), output dense */
        {4, {33, 64, 95, 91}, {1, 0, 3, 2}, KG_F32, 1, 95, 91, 2112},  /* the bench's p1.0.3.2 */
        {4, {33, 64, 95, 91}, {0, 1, 3, 2}, KG_BF16, 1, 95, 91, 2112}, /* planes in a row: one dim */
        {4, {24, 64, 204, 70}, {0, 1, 3, 2}, KG_BF16, 1, 204, 70, 1536},
        {4, {24, 64, 204, 70}, {0, 1, 3, 2}, KG_F32, 0, 0, 0, 0},  /* 204 x 70 x 4 B over 48 KiB */
        {3, {5, 128, 128}, {0, 2, 1}, KG_U8, 1, 128, 128, 5},
        {3, {5, 80, 64}, {0, 2, 1}, KG_F64, 1, 80, 64, 5},
        {3, {5, 96, 64}, {0, 2, 1}, KG_F64, 0, 0, 0, 0},           /* a 48 KiB plane, its buffer 49184 B */
        {2, {33, 128}, {1, 0}, KG_F32, 1, 33, 128, 1},             /* one plane */
        {3, {9, 63, 65}, {0, 2, 1}, KG_F32, 0, 0, 0, 0},           /* 16380 B: under the floor */
        {3, {9, 64, 64}, {0, 2, 1}, KG_F32, 1, 64, 64, 9},         /* 16384 B */
        {3, {33, 95, 91}, {1, 0, 2}, KG_F32, 0, 0, 0, 0},          /* inner dim in place: no plane */
        {3, {33, 95, 91}, {2, 1, 0}, KG_F32, 0, 0, 0, 0},          /* dims 0 and 1 not one plane */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const kg_layout L = copy_in_order_layout(cs[i].nd, cs[i].P, cs[i].p, cs[i].dt);
        kg_tplane q;
        size_t smem;
        const size_t es = kg_dtype_size(cs[i].dt);
        cr_assert_eq(kg_ew_plan_tplane(&L, es, &q, &smem), cs[i].want, "case %zu", i);
        if (!cs[i].want)
            continue;
        cr_assert_eq(q.nc, cs[i].nc, "case %zu", i);
        cr_assert_eq(q.nj, cs[i].nj, "case %zu", i);
        cr_assert_eq(q.planes, cs[i].planes, "case %zu", i);
        cr_assert_eq(q.rot, q.nj % 2 == 0 ? 1u : 0u, "case %zu: rotated gathers on even rows only", i);
        cr_assert_eq(smem, (size_t)q.nc * q.nj * es + 32, "case %zu", i);
        for (uint32_t x = 0; x < q.nc * q.nj; x += 1 + x / 64)
            cr_assert_eq(magic_div(x, q.magic_nc, q.shift_nc), x / q.nc, "case %zu x %u", i, x);
    }
    kg_test_ew_tune(KG_EW_TUNE_TPLANE, 0);
    {
        const kg_layout L = copy_in_order_layout(4, S(33, 64, 95, 91), (const int[]){1, 0, 3, 2}, KG_F32);
        kg_tplane q;
        size_t smem;
        cr_assert_eq(kg_ew_plan_tplane(&L, 4, &q, &smem), 0, "KG_EW_TUNE_TPLANE 0 still plans");
    }
}

/* tplanem's plan (kg_ew_plan_tplanem): tplanev's planes whose layout dim
   2 has stride nc * nj in both operands, 2- and 4-byte elements; the
   groups (walked as the kernel does: r = g / gpr by the magic division,
   first plane (g % gpr) * ppb, cnt = min(ppb, s0 - first)) cover every
   plane exactly once, each group's planes one run in both operands (their
   offsets consecutive multiples of nc * nj from the first's), ppb the most
   planes within the group bytes evened out over dim 2, the buffer ppb
   planes + 32 bytes within 48 KiB; refused for 1- and 8-byte elements,
   outer dims permuted (planes apart), a single plane and a plane over 48
   KiB. */
Test(tplanem_plan, groups_cover_each_plane_once_in_runs)
{
    static const struct {
        int nd;
        int64_t P[5];
        int p[5];
        kg_dtype dt;
        int want;
        uint32_t ppb;
    } cs[] = {
        {4, {273, 147, 81, 7}, {0, 1, 3, 2}, KG_F32, 1, 7},     /* the bench's row: 2268-byte planes */
        {4, {273, 147, 81, 7}, {0, 1, 3, 2}, KG_BF16, 1, 14},   /* 1134 bytes: 14 fit; 2867 groups, the last of 7 */
        {3, {999, 2, 3}, {0, 2, 1}, KG_F32, 1, 500},            /* 24-byte planes: 682 fit; 2 groups, 500 + 499 */
        {4, {3, 33, 13, 9}, {0, 1, 3, 2}, KG_F32, 1, 33},       /* outer dims one dim: 99 planes in a row */
        {5, {3, 4, 33, 13, 9}, {1, 0, 2, 4, 3}, KG_F32, 1, 33}, /* outer dims permuted: rows of 33 planes */
        {3, {5, 70, 65}, {0, 2, 1}, KG_F32, 1, 1},              /* 18200 bytes: one a group */
        {3, {5, 70, 65}, {0, 2, 1}, KG_U8, 0, 0},               /* 1-byte elements */
        {3, {5, 70, 65}, {0, 2, 1}, KG_F64, 0, 0},              /* 8-byte elements */
        {4, {3, 33, 13, 9}, {1, 0, 3, 2}, KG_F32, 0, 0},        /* dim 2 (33) apart in the input */
        {2, {81, 7}, {1, 0}, KG_F32, 0, 0},                     /* one plane: no dim 2 */
        {3, {3, 110, 112}, {0, 2, 1}, KG_F32, 0, 0},            /* 49280 bytes: over 48 KiB */
        {3, {33, 95, 91}, {1, 0, 2}, KG_F32, 0, 0},             /* inner dim in place: no plane */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const kg_layout L = copy_in_order_layout(cs[i].nd, cs[i].P, cs[i].p, cs[i].dt);
        kg_tplanem m;
        size_t smem;
        const size_t es = kg_dtype_size(cs[i].dt);
        cr_assert_eq(kg_ew_plan_tplanem(&L, es, &m, &smem), cs[i].want, "case %zu", i);
        if (!cs[i].want)
            continue;
        const uint32_t n = m.q.nc * m.q.nj;
        cr_assert_eq(m.ppb, cs[i].ppb, "case %zu: ppb %u", i, m.ppb);
        cr_assert_eq(smem, (size_t)m.ppb * n * es + 32, "case %zu", i);
        cr_assert(smem <= 48 * 1024, "case %zu", i);
        cr_assert(m.ppb == 1 || (size_t)m.ppb * n * es <= 16384, "case %zu: groups over 16384 bytes", i);
        cr_assert_eq(m.q.planes % m.s0, 0, "case %zu", i);
        cr_assert_eq(m.groups, m.gpr * (m.q.planes / m.s0), "case %zu", i);
        cr_assert_eq(m.q.rot, m.q.nj % 2 == 0 ? 1u : 0u, "case %zu", i);
        uint8_t *seen = calloc(m.q.planes, 1);
        cr_assert_not_null(seen);
        for (uint32_t g = 0; g < m.groups; g++) {
            const uint32_t r = magic_div(g, m.magic_gpr, m.shift_gpr), first = (g - r * m.gpr) * m.ppb;
            cr_assert_eq(r, g / m.gpr, "case %zu g %u", i, g);
            cr_assert(first < m.s0, "case %zu g %u: an empty group", i, g);
            const uint32_t cnt = m.s0 - first < m.ppb ? m.s0 - first : m.ppb;
            int64_t o0[2] = {0, 0};
            for (uint32_t k = 0; k < cnt; k++) {
                const uint32_t b = r * m.s0 + first + k;
                cr_assert(!seen[b], "case %zu: plane %u twice", i, b);
                seen[b] = 1;
                /* plane b's offsets from B (its dims: L's from 2) */
                int64_t off[2] = {0, 0}, rem = b;
                for (int d = 0; d < m.q.B.ndim; d++) {
                    const int64_t x = rem % m.q.B.size[d];
                    rem /= m.q.B.size[d];
                    for (int op = 0; op < 2; op++)
                        off[op] += x * m.q.B.stride[op][d];
                }
                if (k == 0) {
                    o0[0] = off[0];
                    o0[1] = off[1];
                }
                for (int op = 0; op < 2; op++)
                    cr_assert_eq(off[op], o0[op] + (int64_t)k * n, "case %zu g %u plane %u: not one run", i, g, k);
            }
        }
        for (uint32_t b = 0; b < m.q.planes; b++)
            cr_assert(seen[b], "case %zu: plane %u in no group", i, b);
        free(seen);
        for (uint32_t x = 0; x < m.ppb * m.q.nj; x += 1 + x / 64)
            cr_assert_eq(magic_div(x, m.magic_nj, m.shift_nj), x / m.q.nj, "case %zu x %u", i, x);
    }
}

/* tplanem's default choice (kg_ew_tplanem_by_default, KG_EW_TUNE_TPLANEM
   1): tplanem plans whose planes are under tplanev's floor (16384 bytes),
   tplanev's plan from it, so that each plane of 2- or 4-byte elements
   within tplanev's buffer goes to exactly one of the two (the bench's
   [273,147,81,7] p0.1.3.2 in f32 and bf16, 3 x 4 planes, a plane 4 bytes
   under the floor, planes of 16384 and 18200 bytes); none with
   KG_EW_TUNE_TPLANEM 0, and none where tplanev takes planes from 1 byte
   (KG_EW_TUNE_TPLANE_MIN_BYTES 1). */
Test(tplanem_plan, the_default_choice)
{
    static const struct {
        int nd;
        int64_t P[4];
        int p[4];
        kg_dtype dt;
        int want;
    } cs[] = {
        {4, {273, 147, 81, 7}, {0, 1, 3, 2}, KG_F32, 1},  /* 2268-byte planes */
        {4, {273, 147, 81, 7}, {0, 1, 3, 2}, KG_BF16, 1}, /* 1134 */
        {3, {1001, 3, 4}, {0, 2, 1}, KG_F32, 1},          /* 48 */
        {3, {9, 63, 65}, {0, 2, 1}, KG_F32, 1},           /* 16380: tplanev refuses it */
        {3, {9, 64, 64}, {0, 2, 1}, KG_F32, 0},           /* 16384: tplanev's */
        {3, {9, 64, 64}, {0, 2, 1}, KG_BF16, 1},          /* 8192 */
        {3, {5, 70, 65}, {0, 2, 1}, KG_F32, 0},           /* 18200: tplanev's */
    };
    for (int tu = 0; tu < 3; tu++) {
        const int what = tu == 1 ? KG_EW_TUNE_TPLANEM : KG_EW_TUNE_TPLANE_MIN_BYTES;
        const int was = tu ? kg_test_ew_tune(what, tu == 1 ? 0 : 1) : 0;
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            const kg_layout L = copy_in_order_layout(cs[i].nd, cs[i].P, cs[i].p, cs[i].dt);
            const size_t es = kg_dtype_size(cs[i].dt);
            kg_tplanem m;
            kg_tplane q;
            size_t smem;
            cr_assert(kg_ew_plan_tplanem(&L, es, &m, &smem), "case %zu: no tplanem plan", i);
            const int got = kg_ew_tplanem_by_default(&m, es), tplanev = kg_ew_plan_tplane(&L, es, &q, &smem);
            cr_assert_eq(got, tu ? 0 : cs[i].want, "case %zu, tunings %d: tplanem by default %d", i, tu, got);
            if (tu != 1)
                cr_assert_eq(got + tplanev, 1, "case %zu, tunings %d: tplanem %d, tplanev %d", i, tu, got, tplanev);
        }
        if (tu)
            kg_test_ew_tune(what, was);
    }
}

/* tslab's rule (kg_ew_plan_tslab): the output's dim 0 short (2 to
   KG_EW_TUNE_TSLAB), its dim 1 the input's fast dim; J the largest multiple
   of 16 / es whose buffer (rows of J * es + 4 bytes, 8-byte elements + 8)
   fits the buffer bytes, at most dim 1 rounded up; the slab count, the
   input's row stride and the magic divisions. Then the default choice
   (kg_ew_tslab_by_default, KG_EW_TUNE_TSLAB 56): 2-byte elements whose dim
   1 fills a whole slab. */
Test(tslab_plan, the_rule_and_the_slabs)
{
    cr_assert_eq(kg_test_ew_tune(KG_EW_TUNE_TSLAB, 56), 56, "KG_EW_TUNE_TSLAB's default");
    cr_assert_eq(kg_test_ew_tune(KG_EW_TUNE_TSLAB_BYTES, 16384), 16384, "KG_EW_TUNE_TSLAB_BYTES's default");
    static const struct {
        int nd;
        int64_t P[4];
        int p[4];
        kg_dtype dt;
        int max_nc, bytes, want;
        uint32_t nc, nj, J, sj, slabs, pitch;
        int32_t sci;
    } cs[] = {
        /* the bench's p1.2.3.0: a 33 x 553280 plane, too big for tplanev */
        {4, {33, 64, 95, 91}, {1, 2, 3, 0}, KG_BF16, 64, 16384, 1, 33, 553280, 240, 2306, 2306, 484, 553280},
        {4, {33, 64, 95, 91}, {1, 2, 3, 0}, KG_F32, 64, 16384, 1, 33, 553280, 120, 4611, 4611, 484, 553280},
        /* p2.1.3.0: rows of 91 (J 96 > 91: one slab a row), 6080 of them */
        {4, {33, 64, 95, 91}, {2, 1, 3, 0}, KG_BF16, 64, 16384, 1, 33, 91, 96, 1, 6080, 196, 553280},
        /* [19, 1034] and [5, 2100] once coalesced: planes over the buffer */
        {3, {19, 2, 517}, {1, 2, 0}, KG_F64, 64, 4096, 1, 19, 1034, 24, 44, 44, 200, 1034},
        {3, {5, 3, 700}, {1, 2, 0}, KG_U8, 64, 1024, 1, 5, 2100, 192, 11, 11, 196, 2100},
        {4, {33, 64, 95, 91}, {1, 2, 3, 0}, KG_BF16, 0, 16384, 0, 0, 0, 0, 0, 0, 0, 0},  /* off */
        {4, {33, 64, 95, 91}, {1, 2, 3, 0}, KG_BF16, 32, 16384, 0, 0, 0, 0, 0, 0, 0, 0}, /* 33 rows over 32 */
        {3, {64, 3, 130}, {1, 2, 0}, KG_F64, 64, 1024, 0, 0, 0, 0, 0, 0, 0, 0},          /* 16 B a row: J < 2 */
        {3, {33, 95, 91}, {1, 0, 2}, KG_F32, 64, 16384, 0, 0, 0, 0, 0, 0, 0, 0},         /* inner dim in place */
        {3, {33, 95, 91}, {2, 1, 0}, KG_F32, 64, 16384, 0, 0, 0, 0, 0, 0, 0, 0}, /* dim 1 not the input's fast */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        kg_test_ew_tune(KG_EW_TUNE_TSLAB, cs[i].max_nc);
        kg_test_ew_tune(KG_EW_TUNE_TSLAB_BYTES, cs[i].bytes);
        const kg_layout L = copy_in_order_layout(cs[i].nd, cs[i].P, cs[i].p, cs[i].dt);
        kg_tslab z;
        size_t smem;
        const size_t es = kg_dtype_size(cs[i].dt);
        cr_assert_eq(kg_ew_plan_tslab(&L, es, &z, &smem), cs[i].want, "case %zu", i);
        if (!cs[i].want)
            continue;
        cr_assert_eq(z.nc, cs[i].nc, "case %zu", i);
        cr_assert_eq(z.nj, cs[i].nj, "case %zu", i);
        cr_assert_eq(z.J, cs[i].J, "case %zu", i);
        cr_assert_eq(z.sj, cs[i].sj, "case %zu", i);
        cr_assert_eq(z.slabs, cs[i].slabs, "case %zu", i);
        cr_assert_eq(z.pitch, cs[i].pitch, "case %zu", i);
        cr_assert_eq(z.sci, cs[i].sci, "case %zu", i);
        cr_assert_eq(z.cpr, z.J * es / 16, "case %zu", i);
        cr_assert_eq(smem, (size_t)z.nc * z.pitch, "case %zu", i);
        cr_assert(smem <= (size_t)cs[i].bytes, "case %zu: %zu bytes", i, smem);
        cr_assert_eq(z.pitch % (es >= 8 ? 8 : 4), 0, "case %zu", i);
        cr_assert_eq(z.pitch / (es >= 8 ? 8 : 4) % 2, 1, "case %zu: pitch %u", i, z.pitch);
        for (uint32_t x = 0; x < 100000; x += 1 + x / 64)
            cr_assert_eq(magic_div(x, z.magic_nc, z.shift_nc), x / z.nc, "case %zu x %u", i, x);
        for (uint32_t x = 0; x < z.slabs; x += 1 + x / 64)
            cr_assert_eq(magic_div(x, z.magic_sj, z.shift_sj), x / z.sj, "case %zu x %u", i, x);
        /* by default: bf16 p1.2.3.0 only (f32: 4-byte; p2.1.3.0: 91 < J = 96; the others: 1 and 8 bytes) */
        cr_assert_eq(kg_ew_tslab_by_default(&z, es), i == 0, "case %zu: by default", i);
        cr_assert_eq(z.rot, 0u, "case %zu: tslab gathers in order by default", i);
    }
}

/* tchunk's plan (kg_ew_plan_tchunk) and its tiles, walked as the kernel
   walks them (kg_tc_tile, kg_tc_store, kg_tc_chunk) for every output
   misalignment s (0 .. M - 1 elements): every output element is stored by
   exactly one tile, from a stage row the tile loaded (c within its cn rows)
   at a j it loaded, and a tile's loaded rows (KG_TC_JN elements at most)
   fit the stage. Off by default; no plan where the output's dim 0 is not of
   unit stride or no dim is the input's fast one. */
/* No dtype's copy has a tchunk kernel since session 37 (gen/elementwise.lua):
   kg_ew_copy_tpk holds -1, which the runtime checks before it launches one */
Test(tchunk_plan, no_dtype_has_a_tchunk_kernel)
{
    for (int d = 0; d < KG_DTYPE_COUNT; d++)
        cr_assert_eq(kg_ew_copy_tpk[d][KG_EW_TPK_TCHUNK], -1, "%s", kg_dtype_name((kg_dtype)d));
}

Test(tchunk_plan, tiles_store_each_output_element_once)
{
    cr_assert_eq(kg_test_ew_tune(KG_EW_TUNE_TCHUNK, 1), 0, "KG_EW_TUNE_TCHUNK's default");
    static const struct {
        int nd;
        int64_t P[4];
        int p[4];
        kg_dtype dt;
        int cq, want;
    } cs[] = {
        {3, {255, 37, 259}, {2, 1, 0}, KG_F32, 0, 1},   {3, {255, 37, 259}, {2, 1, 0}, KG_BF16, 0, 1},
        {4, {33, 4, 95, 91}, {1, 2, 3, 0}, KG_BF16, 0, 1},  {2, {607, 503}, {1, 0}, KG_U8, 0, 1},
        {3, {45, 7, 131}, {2, 1, 0}, KG_F64, 3, 1},      {3, {200, 3, 70}, {2, 0, 1}, KG_F32, 1, 1},
        {2, {1000, 9}, {1, 0}, KG_F16, 5, 1},            {3, {23, 29, 31}, {1, 2, 0}, KG_I32, 0, 1},
        {2, {300, 517}, {1, 0}, KG_F32, 8, 1},           {2, {300, 517}, {1, 0}, KG_BF16, 12, 1},
        {3, {33, 95, 91}, {1, 0, 2}, KG_F32, 0, 0}, /* inner dim in place: dim 0 the input's fast dim */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        kg_test_ew_tune(KG_EW_TUNE_TCHUNK_CQ, cs[i].cq);
        const kg_layout L = copy_in_order_layout(cs[i].nd, cs[i].P, cs[i].p, cs[i].dt);
        const int64_t es = (int64_t)kg_dtype_size(cs[i].dt), M = 16 / es;
        kg_tchunk z;
        size_t smem;
        cr_assert_eq(kg_ew_plan_tchunk(&L, (size_t)es, &z, &smem), cs[i].want, "case %zu", i);
        if (!cs[i].want)
            continue;
        cr_assert(z.cq >= 1 && z.cq <= (uint32_t)(cs[i].cq ? cs[i].cq : KG_TC_CQ_MAX(es)), "case %zu: cq %u", i, z.cq);
        cr_assert(z.jn >= 1 && z.jn <= (uint32_t)KG_TC_JN, "case %zu: jn %u", i, z.jn);
        cr_assert_eq(z.stage, (uint32_t)KG_TC_STAGE_BYTES(es, (int64_t)z.cq), "case %zu", i);
        cr_assert_eq(smem, (size_t)z.stage, "case %zu", i);
        cr_assert(smem <= 48 * 1024, "case %zu: %zu bytes", i, smem);
        cr_assert_eq(z.tpb, 1u, "case %zu: tiles a block", i);
        /* the loads' chunks (4 es a row, 16 bytes each) end within a stage row, the rows within the stage */
        cr_assert(4 * es * 16 <= KG_TC_PITCH(es) && (int64_t)z.cq * M * KG_TC_PITCH(es) <= (int64_t)z.stage,
                  "case %zu: the stage", i);
        const int64_t n = (int64_t)z.nc * z.nj * z.B.n;
        unsigned char *seen = malloc((size_t)n);
        cr_assert_not_null(seen);
        for (int64_t s = 0; s < M; s++) {
            memset(seen, 0, (size_t)n);
            for (uint32_t tile = 0; tile < z.tiles; tile++) {
                const uint32_t r = magic_div(tile, z.magic_c, z.shift_c), b = magic_div(r, z.magic_j, z.shift_j);
                cr_assert_eq(r, tile / z.tiles_c, "case %zu tile %u", i, tile);
                cr_assert_eq(b, r / z.tiles_j, "case %zu tile %u", i, tile);
                const int64_t c0 = (int64_t)(tile - r * z.tiles_c) * z.cq * M, j0 = (int64_t)(r - b * z.tiles_j) * z.jn;
                const int64_t cn = z.nc - c0 < z.cq * M ? z.nc - c0 : z.cq * M;
                const int64_t jnn = z.nj - j0 < z.jn ? z.nj - j0 : z.jn;
                cr_assert(cn >= 1 && jnn >= 1, "case %zu tile %u: empty", i, tile);
                /* b's output offset (B's dims, innermost first) */
                int64_t x = b, ob = 0;
                for (int d = 0; d < z.B.ndim; d++) {
                    ob += (x % z.B.size[d]) * z.B.stride[0][d];
                    x /= z.B.size[d];
                }
                /* kg_tc_store's chunks (jj, q): units of 4 rows x 8 chunks, then q = cq where cq is 8 or 16 */
                const int64_t hs = z.cq <= 8 ? 0 : 1, units = ((jnn + 3) / 4) << hs;
                int64_t slots = 0, slot[2048][2];
                for (int64_t u = 0; u < units; u++)
                    for (int64_t lane = 0; lane < 32; lane++) {
                        const int64_t jj = (u >> hs) * 4 + lane / 8, q = (u & hs) * 8 + lane % 8;
                        if (jj < jnn && q <= (int64_t)z.cq) {
                            slot[slots][0] = jj;
                            slot[slots++][1] = q;
                        }
                    }
                if (z.cq == 8 || z.cq == 16)
                    for (int64_t jj = 0; jj < jnn; jj++) {
                        slot[slots][0] = jj;
                        slot[slots++][1] = z.cq;
                    }
                for (int64_t t = 0; t < slots; t++) {
                    const int64_t jj = slot[t][0], q = slot[t][1], j = j0 + jj;
                    const int64_t so = (s + ob + j * z.soj + c0) % M; /* the row's offset in its chunk, elements */
                    if (16 * q >= so * es + cn * es)
                        continue;
                    for (int64_t e = q * M - so; e < q * M - so + M; e++) {
                        if (e < 0 || e >= cn)
                            continue;
                        const int64_t el = (b * z.nj + j) * z.nc + c0 + e;
                        cr_assert_eq(seen[el], 0, "case %zu (s %lld): element %lld stored twice", i, (long long)s,
                                     (long long)el);
                        seen[el] = 1;
                    }
                }
            }
            for (int64_t e = 0; e < n; e++)
                cr_assert_eq(seen[e], 1, "case %zu (s %lld): element %lld not stored", i, (long long)s, (long long)e);
        }
        free(seen);
    }
    kg_test_ew_tune(KG_EW_TUNE_TCHUNK_CQ, 0);
    kg_test_ew_tune(KG_EW_TUNE_TCHUNK, 0);
}

/* rowsv's rule (kg_ew_plan_rowsv, H200 run r3 of 2026-12-02: it won for
   rows of 10.8 KB and up and for misaligned contiguous copies, lost for
   rows of at most 1 KB and over nd32v) and its chunk arithmetic: the cpr
   chunks of every row cover the row's output bytes exactly once at any
   alignment, by the kernel's own steps (kg_ew_rowsv), and the magic
   division finds each chunk's row. */
Test(rowsv_plan, the_rule_and_the_chunks)
{
    static const struct {
        int nd;
        int64_t P[4];
        int p[4];
        kg_dtype dt;
        int nd32v, want;
    } cs[] = {
        /* shape P (logical), input physical order p (permuted()), output dense */
        {4, {64, 33, 95, 91}, {1, 0, 2, 3}, KG_BF16, 0, 1},  /* rows of 8645: 17290 B */
        {4, {64, 33, 95, 91}, {1, 0, 2, 3}, KG_F32, 0, 1},   /* 34580 B */
        {4, {99, 83, 129, 21}, {1, 0, 2, 3}, KG_F32, 0, 1},  /* rows of 2709: 10836 B */
        {4, {33, 64, 95, 91}, {0, 2, 1, 3}, KG_BF16, 0, 0},  /* rows of 91: 182 B */
        {3, {387, 255, 259}, {1, 0, 2}, KG_F32, 0, 0},      /* rows of 259: 1036 B */
        {3, {9, 2, 2048}, {1, 0, 2}, KG_BF16, 0, 1},        /* 4096 B: the floor */
        {3, {9, 2, 2047}, {1, 0, 2}, KG_BF16, 0, 0},        /* 4094 B */
        {3, {9, 2, 4096}, {1, 0, 2}, KG_BF16, 1, 0},        /* nd32v would serve it */
        {2, {64, 4096}, {1, 0}, KG_F32, 0, 0},              /* a transpose: dim 0 strided in the input */
        {1, {1 << 20}, {0}, KG_BF16, 0, 1},                 /* one row (a misaligned contiguous copy) */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const view a = permuted(cs[i].nd, cs[i].P, cs[i].p), o = dense(cs[i].nd, cs[i].P);
        kg_tensor ta = tview(KT_DEV(0), cs[i].dt, &a), to = tview(KT_DEV(1 << 28), cs[i].dt, &o);
        const kg_tensor *ins[1] = {&ta};
        kg_layout L;
        kg_layout_build(&L, &to, ins, 1);
        kg_rowsv r;
        const size_t es = kg_dtype_size(cs[i].dt);
        cr_assert_eq(kg_ew_plan_rowsv(&L, es, cs[i].nd32v, &r), cs[i].want, "case %zu", i);
        if (!cs[i].want)
            continue;
        const int64_t n0 = L.size[0], nb = n0 * (int64_t)es, rows = kg_numel(&to) / n0;
        cr_assert_eq(r.L.size[0], (uint32_t)n0, "case %zu", i);
        cr_assert_eq(r.cpr, (uint32_t)(nb / 16 + 2), "case %zu", i);
        cr_assert_eq(r.chunks, (uint32_t)(rows * r.cpr), "case %zu", i);
        for (int64_t t = 0; t < r.chunks; t += 1 + r.chunks / 4099)
            cr_assert_eq(magic_div((uint32_t)t, r.magic, r.shift), (uint32_t)(t / r.cpr), "case %zu chunk %lld", i,
                         (long long)t);
        cr_assert_eq(magic_div(r.chunks - 1, r.magic, r.shift), (uint32_t)(rows - 1), "case %zu", i);
    }
    /* the chunk arithmetic of kg_ew_rowsv at every alignment of the output
       and input row (byte addresses mod 16) and row lengths around chunk
       multiples: each output byte once, from its own input byte, whole
       chunks by aligned 16-byte loads inside the input row */
    static unsigned char hit[4200 * 8];
    for (int es = 1; es <= 8; es *= 2)
        for (int64_t n0 = 64 / es; n0 < 4200; n0 += n0 < 300 / es ? 1 : 97)
            for (int oa = 0; oa < 16; oa += es)
                for (int ia = 0; ia < 16; ia += es) {
                    const int64_t nb = n0 * es, cpr = nb / 16 + 2, ob = 4096 + oa, ib = (1 << 20) + ia, d = ib - ob;
                    memset(hit, 0, (size_t)nb);
                    for (int64_t k = 0; k < cpr; k++) {
                        const int64_t o0 = (ob & ~(int64_t)15) + 16 * k;
                        const int64_t lo = o0 > ob ? o0 : ob, hi = o0 + 16 < ob + nb ? o0 + 16 : ob + nb;
                        if (lo >= hi)
                            continue;
                        const int64_t s = (o0 + d) & 15, at = o0 + d - s;
                        if (lo == o0 && hi == o0 + 16 && at >= ib && at + (s ? 32 : 16) <= ib + nb) {
                            cr_assert(at % 16 == 0);
                            for (int64_t x = o0; x < o0 + 16; x++)
                                hit[x - ob]++;
                        } else {
                            for (int64_t x = o0; x < o0 + 16; x += es)
                                if (x >= lo && x < hi) {
                                    cr_assert(x + d >= ib && x + d + es <= ib + nb);
                                    for (int b = 0; b < es; b++)
                                        hit[x - ob + b]++;
                                }
                        }
                    }
                    for (int64_t b = 0; b < nb; b++)
                        cr_assert_eq(hit[b], 1, "es %d n0 %lld out+%d in+%d: byte %lld written %d times", es,
                                     (long long)n0, oa, ia, (long long)b, hit[b]);
                }
}

/* The default choice's rule against the winners measured on the H200
   (2026-12-01, same run, bench/RESULTS.md): bench_elementwise's layouts (input a = a
   dense buffer of physical shape P, logical dim d = physical dim p[d]; out
   dense). */
/* The block order (kg_tperm.h jfirst; KG_EW_TUNE_TPERM_JFIRST 2, the
   default): the j tiles fastest where the elements have 4 bytes or more
   and the c axis has at least 256 times as many tiles (the H200 runs
   s14r2 and s14r3's winners, bench_elementwise cases), the c tiles
   elsewhere; 0 and 1 force either order. */
/* kg_ew_tperma_by_default (H200 run s21r2's rule) on the bench's bf16
   rows: tperma where it gained, tperm2 where it lost (input 0 not staged,
   a flat plan with a short j axis, a table plan with a short c axis). */
Test(tperm_plan, tperma_where_it_measured_faster)
{
    static const tperma_case cs[] = {
        {2, {6007, 5003}, {1, 0}, 1},      {3, {255, 387, 259}, {0, 2, 1}, 1}, {3, {255, 387, 259}, {1, 2, 0}, 1},
        {3, {115, 1041, 183}, {0, 2, 1}, 1}, {2, {11009, 1983}, {1, 0}, 1},
        {3, {255, 387, 259}, {1, 0, 2}, 0}, /* input 0 not staged */
        {3, {255, 387, 259}, {2, 0, 1}, 0}, /* flat, 1542 x 5 tiles */
        {3, {533, 179, 229}, {2, 0, 1}, 0}, /* flat, 1491 x 4 */
        {3, {255, 387, 259}, {2, 1, 0}, 0}, /* tables, 4 x 1567 */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        /* the bench's layout: physical shape s, logical dim d = physical perm[d] */
        int64_t L[3], ps[3], st = 1;
        for (int d = cs[i].nd - 1; d >= 0; d--) {
            ps[d] = st;
            st *= cs[i].s[d];
        }
        for (int d = 0; d < cs[i].nd; d++)
            L[d] = cs[i].s[cs[i].perm[d]];
        kg_tensor to = kg_tensor_contiguous(KT_DEV(1 << 26), KG_BF16, cs[i].nd, L);
        kg_tensor ta = kg_tensor_contiguous(KT_DEV(0), KG_BF16, cs[i].nd, L);
        for (int d = 0; d < cs[i].nd; d++)
            ta.strides[d] = ps[cs[i].perm[d]];
        const kg_tensor *ins[1] = {&ta};
        kg_layout Ly;
        kg_layout_build(&Ly, &to, ins, 1);
        const size_t es[KG_EW_MAX_OPERANDS] = {2, 2, 0, 0};
        kg_tperm tp;
        cr_assert(kg_ew_plan_tperm(&Ly, es, &tp), "case %zu: no tperm plan", i);
        cr_assert_eq(kg_ew_tperma_by_default(&tp), cs[i].want, "case %zu (flat %u, %u x %u tiles, staged %#x)", i,
                     tp.flat, tp.tiles_c, tp.tiles_j, tp.staged);
    }
}

/* tperms (templates/elementwise_tph.cuh) cuts each output row at 32-byte
   sectors of S positions (4-byte: S = 8, 2-byte: 16): row j of c tile t
   (c0 = 64 t) writes c0 + h .. c0 + 63 + h (h = the positions from c0 to
   the row's first sector boundary, 0 to S - 1; tile 0 from 0, the last
   tile to the end) from the positions c0 .. c0 + 63 + S it loaded. Walked
   here for rows of 1 to 4097 positions at each phase of a row's start:
   every position is written once, by a tile that loaded it, and the
   stores from c0 + h on start on a sector. */
Test(tperm_plan, tperms_rows_cut_at_sectors_cover_each_position_once)
{
    static const int ns[] = {1, 2, 7, 8, 9, 31, 63, 64, 65, 71, 72, 127, 128, 129, 255, 259, 387, 1023, 4097};
    static unsigned char hits[4097];
    for (uint32_t S = 8; S <= 16; S += 8)
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (uint32_t phase = 0; phase < S; phase++) { /* the row's start, in elements past a sector */
            const int n = ns[i], tiles = (n + 63) / 64;
            memset(hits, 0, sizeof hits);
            for (int t = 0; t < tiles; t++) {
                const int c0 = 64 * t, ncr = n - c0;
                const int h = (int)((0u - (phase + (uint32_t)c0)) & (S - 1));
                for (int lo = 0; lo < 64; lo++) {
                    if (h + lo < ncr) {
                        cr_assert(h + lo < 64 + (int)S, "n %d phase %u tile %d: position %d not loaded", n, phase, t,
                                  h + lo);
                        hits[c0 + h + lo]++;
                    }
                    if (c0 == 0 && lo < h && lo < ncr)
                        hits[lo]++;
                }
                cr_assert_eq((phase + (uint32_t)(c0 + h)) % S, 0u, "n %d phase %u tile %d: rows start off a sector", n,
                             phase, t);
            }
            for (int c = 0; c < n; c++)
                cr_assert_eq(hits[c], 1, "n %d phase %u: position %d written %d times", n, phase, c, hits[c]);
        }
}

/* kg_ew_plan_tpw (the 2-byte tperms, templates/elementwise_tpw.cuh), walked
   as the kernel walks it: tile t -> (c tile, j tile, b) with c tiles
   fastest; row j of a tile owns the KG_TPW_CW positions from its first
   sector boundary at or after c0 (h = 0 .. 15 positions on; the first c
   tile from 0, the last to the axis's end) as words (c, c + 1), from the
   KG_TPW_CW + 16 stage rows it loaded. For permuted copies of 2 to 5 dims
   (odd and even sizes, short axes) at each phase of the output's address:
   every output element is written once, from the input element the layout
   puts there, by a tile that loaded its c row. */
Test(tperm_plan, tpw_covers_each_element_once)
{
    static const struct {
        int nd;
        int64_t P[5];
        int p[5];
    } cs[] = {
        {2, {6007 / 8, 503}, {1, 0}},        {3, {255, 387, 259}, {2, 1, 0}}, {3, {37, 66, 45}, {1, 2, 0}},
        {3, {300, 7, 261}, {2, 0, 1}},       {4, {5, 34, 7, 67}, {3, 1, 0, 2}}, {2, {129, 2}, {1, 0}},
        {5, {3, 5, 7, 9, 11}, {4, 2, 0, 3, 1}}, {3, {2, 387, 1}, {1, 2, 0}},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const kg_layout L = copy_in_order_layout(cs[i].nd, cs[i].P, cs[i].p, KG_BF16);
        kg_tperm tp;
        cr_assert(kg_ew_plan_tpw(&L, &tp), "case %zu: no plan", i);
        cr_assert(tp.flat && tp.staged == 2u && tp.nd[KG_TP_C] == 1 && tp.nd[KG_TP_J] == 1, "case %zu", i);
        cr_assert_eq(tp.stride[KG_TP_C][0][0], 1, "case %zu: c stride", i);
        cr_assert_eq(tp.stride[KG_TP_J][1][0], 1, "case %zu: j stride", i);
        int64_t n = 1;
        for (int d = 0; d < L.ndim; d++)
            n *= L.size[d];
        unsigned char *hits = calloc((size_t)n, 1);
        for (uint32_t phase = 0; phase < 16; phase++) {
            memset(hits, 0, (size_t)n);
            for (uint32_t t = 0; t < tp.tiles; t++) {
                const uint32_t ct = t % tp.tiles_c, jt = t / tp.tiles_c % tp.tiles_j, b = t / tp.tiles_c / tp.tiles_j;
                int64_t bo[2] = {0, 0};
                for (int d = 0, x = (int)b; d < tp.nd[KG_TP_B]; x /= (int)tp.size[KG_TP_B][d], d++)
                    for (int k = 0; k < 2; k++)
                        bo[k] += (int64_t)(x % (int)tp.size[KG_TP_B][d]) * tp.stride[KG_TP_B][k][d];
                const int64_t c0 = (int64_t)ct * KG_TPW_CW, ncr = tp.n[KG_TP_C] - c0;
                for (int64_t j = (int64_t)jt * KG_TPW_TJ; j < tp.n[KG_TP_J] && j < (int64_t)(jt + 1) * KG_TPW_TJ; j++) {
                    const int64_t ro = bo[0] + j * tp.stride[KG_TP_J][0][0] + c0;
                    const int h = (int)((16 - (phase + (uint64_t)ro) % 16) % 16);
                    for (int cc = 0; cc < h + KG_TPW_CW && cc < ncr; cc++) {
                        if (cc < h && ct != 0)
                            continue;
                        cr_assert(cc < KG_TPW_CW + 16, "case %zu: position %d not loaded", i, cc);
                        const int64_t c = c0 + cc, o = ro + cc;
                        cr_assert(o >= 0 && o < n, "case %zu: offset %lld", i, (long long)o);
                        hits[o]++;
                        /* the input element the layout puts at output offset o */
                        int64_t r = o, want = 0;
                        for (int d = 0; d < L.ndim; d++) {
                            want += r % L.size[d] * L.stride[1][d];
                            r /= L.size[d];
                        }
                        cr_assert_eq(bo[1] + c * tp.stride[KG_TP_C][1][0] + j, want, "case %zu: input offset", i);
                    }
                }
            }
            for (int64_t e = 0; e < n; e++)
                cr_assert_eq(hits[e], 1, "case %zu phase %u: element %lld written %d times", i, phase, (long long)e,
                             hits[e]);
        }
        free(hits);
    }
}

/* The output and input offsets of position x of axis a of plan tp */
static void tp_axis_offsets(const kg_tperm *tp, int a, int64_t x, int64_t off[2])
{
    for (int d = 0; d < tp->nd[a]; x /= tp->size[a][d], d++)
        for (int k = 0; k < 2; k++)
            off[k] += x % tp->size[a][d] * tp->stride[a][k][d];
}

/* kg_ew_plan_tpx (the second form of the 2-byte tperms,
   templates/elementwise_tpx.cuh), walked as the kernel walks it: tile t ->
   (c tile, j tile, b), c tiles fastest; the j axis is one contiguous run
   of the input (the input's unit-stride dim and the dims that continue
   it), the c axis one of the output (dim 0, and the dims that continue it
   where its tiles would be less than 90% full), in tiles of CW = tp.rc
   positions (128, or 64 by the plan's choice; then every plan forced to
   64); a tile loads stage rows c < min(CW + 16, the positions left): whole
   j tiles (j0 + KG_TPX_TJ < nj) as the 32-bit words from j0 - p (p: the
   row's parity; lane 31 only where p = 1), each of which must hold an
   element of the row's tile; the last j tile as halfwords inside it.
   Output row j owns the CW positions from its first sector boundary at or
   after c0 (the first c tile from 0, the last to the axis's end), in
   16-byte chunks from that boundary. For every permutation of 2 to 5 dims
   (odd and even sizes, short axes, j and c axes of several dims) at each
   phase of the output's address (the input's parity mixed in): every
   output element is written once, from the input element the layout puts
   there, by a tile that loaded its row. */
/* one kg_ew_plan_tpx walk (tperm_plan::tpx_covers_each_element_once) */
static void check_tpx_walks(int *planned, int *folded, int *cfolded, int *narrow)
{
    static const struct {
        int nd;
        int64_t P[5];
    } cs[] = {{2, {130, 67}}, {3, {37, 66, 45}}, {4, {5, 34, 7, 67}}, {5, {3, 5, 7, 9, 11}}, {3, {2, 387, 1}},
              {3, {65, 129, 63}}, {2, {145, 63}}, {2, {16, 300}}, {4, {5, 3, 35, 129}}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const int nd = cs[i].nd;
        int p[5] = {0, 1, 2, 3, 4};
        int64_t n = 1;
        for (int d = 0; d < nd; d++)
            n *= cs[i].P[d];
        unsigned char *hits = calloc((size_t)n, 1);
        do {
            const kg_layout L = copy_in_order_layout(nd, cs[i].P, p, KG_BF16);
            kg_tperm tp;
            if (!kg_ew_plan_tpx(&L, &tp)) {
                cr_assert(L.ndim < 2 || L.stride[1][0] == 1, "case %zu: no plan", i);
                continue;
            }
            ++*planned;
            *folded += tp.nd[KG_TP_J] > 1;
            *cfolded += tp.nd[KG_TP_C] > 1;
            *narrow += tp.rc == 64;
            cr_assert(tp.words == 2 && tp.staged == 2u && (tp.rc == 64 || tp.rc == KG_TPX_CW), "case %zu", i);
            const int64_t cw = tp.rc;
            cr_assert_eq(tp.tiles_c, (tp.n[KG_TP_C] + cw - 1) / cw, "case %zu: c tiles", i);
            for (int d = 0, run = 1; d < tp.nd[KG_TP_J]; run *= (int)tp.size[KG_TP_J][d], d++)
                cr_assert_eq(tp.stride[KG_TP_J][1][d], run, "case %zu: the j axis is no run of the input", i);
            for (int d = 0, run = 1; d < tp.nd[KG_TP_C]; run *= (int)tp.size[KG_TP_C][d], d++)
                cr_assert_eq(tp.stride[KG_TP_C][0][d], run, "case %zu: the c axis is no run of the output", i);
            const int64_t nc = tp.n[KG_TP_C], nj = tp.n[KG_TP_J];
            cr_assert_eq(tp.tiles, tp.tiles_c * tp.tiles_j * tp.n[KG_TP_B], "case %zu: tiles", i);
            for (uint32_t phase = 0; phase < 16; phase++) { /* the output's phase in a sector, the input's parity */
                const uint32_t ph = phase, ip = (phase / 3 + (uint32_t)*planned) & 1;
                memset(hits, 0, (size_t)n);
                for (uint32_t t = 0; t < tp.tiles; t++) {
                    const uint32_t ct = t % tp.tiles_c, jt = t / tp.tiles_c % tp.tiles_j, b = t / tp.tiles_c / tp.tiles_j;
                    int64_t bo[2] = {0, 0};
                    tp_axis_offsets(&tp, KG_TP_B, b, bo);
                    const int64_t c0 = (int64_t)ct * cw, j0 = (int64_t)jt * KG_TPX_TJ, ncr = nc - c0;
                    const int64_t jn = nj - j0 < KG_TPX_TJ ? nj - j0 : KG_TPX_TJ;
                    for (int64_t c = 0; c < ncr && c < cw + 16; c++) { /* the loads */
                        int64_t co[2] = {0, 0};
                        tp_axis_offsets(&tp, KG_TP_C, c0 + c, co);
                        cr_assert_eq(co[0], c0 + c, "case %zu: c output offset", i);
                        const int64_t a = bo[1] + co[1] + j0;
                        for (int l = 0; l < 32; l++) {
                            if (j0 + KG_TPX_TJ < nj) {
                                const int64_t pr = (ip + a) & 1, x = a - pr + 2 * l;
                                if (l < 31 || pr)
                                    cr_assert((x >= a && x < a + jn + 1) || (x + 1 >= a && x + 1 < a + jn + 1),
                                              "case %zu: word %lld off its row", i, (long long)x);
                            } else if (2 * l < jn) {
                                cr_assert(a + 2 * l >= 0 && a + 2 * l + (2 * l + 1 < jn) < n, "case %zu", i);
                            }
                        }
                    }
                    for (int64_t jj = 0; jj < jn; jj++) { /* the stores */
                        int64_t jo[2] = {0, 0};
                        tp_axis_offsets(&tp, KG_TP_J, j0 + jj, jo);
                        cr_assert_eq(jo[1], j0 + jj, "case %zu: j input offset", i);
                        const int64_t ro = bo[0] + jo[0] + c0;
                        const int h = (int)((16 - (ph + (uint64_t)ro) % 16) % 16);
                        for (int64_t cc = ct ? h : 0; cc < h + cw && cc < ncr; cc++) {
                            cr_assert(cc < cw + 16, "case %zu: position %lld not loaded", i, (long long)cc);
                            if (cc >= h && (cc - h) % 8 == 0 && cc + 8 <= ncr)
                                cr_assert_eq((ph + ro + cc) % 8, 0, "case %zu: a chunk off 16 bytes", i);
                            const int64_t o = ro + cc;
                            cr_assert(o >= 0 && o < n, "case %zu: offset %lld", i, (long long)o);
                            hits[o]++;
                            int64_t r = o, want = 0; /* the input element the layout puts at o */
                            for (int d = 0; d < L.ndim; d++) {
                                want += r % L.size[d] * L.stride[1][d];
                                r /= L.size[d];
                            }
                            int64_t co[2] = {0, 0};
                            tp_axis_offsets(&tp, KG_TP_C, c0 + cc, co);
                            cr_assert_eq(bo[1] + co[1] + j0 + jj, want, "case %zu: input offset", i);
                        }
                    }
                }
                for (int64_t e = 0; e < n; e++)
                    cr_assert_eq(hits[e], 1, "case %zu phase %u: element %lld written %d times", i, phase,
                                 (long long)e, hits[e]);
            }
        } while (next_perm(p, nd));
        free(hits);
    }
}

Test(tperm_plan, tpx_covers_each_element_once)
{
    int planned = 0, folded = 0, cfolded = 0, narrow = 0;
    check_tpx_walks(&planned, &folded, &cfolded, &narrow);
    cr_assert(planned >= 100 && folded >= 20 && cfolded >= 10 && narrow >= 10,
              "%d plans, %d with a folded j axis, %d c, %d in c tiles of 64", planned, folded, cfolded, narrow);
    int forced = 0;
    kg_test_ew_tune(KG_EW_TUNE_TPERMW_CW, 64); /* every plan in c tiles of 64 */
    planned = 0;
    check_tpx_walks(&planned, &folded, &cfolded, &forced);
    kg_test_ew_tune(KG_EW_TUNE_TPERMW_CW, 0);
    cr_assert_eq(forced, planned, "%d of %d plans in c tiles of 64", forced, planned);
}

/* kg_ew_tpx_by_default (the default since H200 run s25r1) on the perm
   bench's bf16 rows (input a = a dense buffer of physical shape P read in
   the order p, out dense), with main's choice and the A/B's x (main / tpx)
   in the comments: tpx where tperma's rule leaves the copy to tperm2 by its
   tile counts and tpx's tiles are at least 80% full; then the GPU test
   tperms::copies_2byte_pairs_by_the_rule's layouts (permuted()). */
Test(tperm_plan, tpx_where_it_measured_faster)
{
    static const struct {
        int nd;
        int64_t P[4];
        int p[4], want;
    } cs[] = {
        {3, {255, 387, 259}, {2, 0, 1}, 1},       /* tperm2 flat 1542 x 5 tiles, x1.21 (tpx j 259: 0.84) */
        {3, {255, 387, 259}, {2, 1, 0}, 1},       /* tperm2 tables 4 x 1567, x1.17 */
        {3, {533, 179, 229}, {2, 0, 1}, 1},       /* tperm2 flat 1491 x 4, x1.10 */
        {2, {6007, 5003}, {1, 0}, 0},             /* tperma, x1.05 */
        {2, {1031, 16411}, {1, 0}, 0},            /* tperma, x0.94 */
        {2, {4097, 3001}, {1, 0}, 0},             /* tperma, x0.90 */
        {3, {255, 387, 259}, {1, 2, 0}, 0},       /* tperma, x0.98 */
        {3, {255, 387, 259}, {0, 2, 1}, 0},       /* tperma, x0.99 */
        {3, {255, 387, 259}, {1, 0, 2}, 0},       /* tperm2, input 0 not staged (no tpx run) */
        {3, {429, 487, 105}, {2, 1, 0}, 0},       /* tperma, x1.23 */
        {4, {33, 64, 95, 91}, {3, 2, 0, 1}, 0},   /* tperma, x0.91 */
        {4, {33, 64, 95, 91}, {2, 1, 3, 0}, 0},   /* tperma, x0.68 (c 33) */
        {4, {157, 195, 73, 11}, {3, 1, 0, 2}, 0}, /* tperma, x0.30 (j 11) */
    };
    const size_t es[4] = {2, 2, 0, 0};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const kg_layout L = copy_in_order_layout(cs[i].nd, cs[i].P, cs[i].p, KG_BF16);
        kg_tperm tp, tw;
        cr_assert(kg_ew_plan_tperm(&L, es, &tp), "case %zu: no tperm plan", i);
        const int got = kg_ew_plan_tpx(&L, &tw) && kg_ew_tpx_by_default(&tp, &tw);
        cr_assert_eq(got, cs[i].want, "case %zu (tperm %u x %u tiles, flat %u)", i, tp.tiles_c, tp.tiles_j, tp.flat);
    }
    const tperma_case *gs = tpx_rule_cases;
    for (size_t i = 0; i < sizeof tpx_rule_cases / sizeof tpx_rule_cases[0]; i++) {
        const view a = permuted(gs[i].nd, gs[i].s, gs[i].perm), o = dense(gs[i].nd, gs[i].s);
        kg_tensor ta = tview(KT_DEV(0), KG_BF16, &a), to = tview(KT_DEV(1 << 28), KG_BF16, &o);
        const kg_tensor *ins[1] = {&ta};
        kg_layout L;
        kg_layout_build(&L, &to, ins, 1);
        kg_tperm tp, tw;
        cr_assert(kg_ew_plan_tperm(&L, es, &tp), "GPU case %zu: no tperm plan", i);
        const int got = kg_ew_plan_tpx(&L, &tw) && kg_ew_tpx_by_default(&tp, &tw);
        cr_assert_eq(got, gs[i].want, "GPU case %zu (tperm %u x %u tiles, flat %u)", i, tp.tiles_c, tp.tiles_j,
                     tp.flat);
    }
}

/* Rule A (kg_ew_tpx_a, KG_EW_TUNE_TPX_A 1: the default since round
   s29r1) on the perm bench's bf16 rows that rounds s28r1 and s29r1
   measured (input a = a dense buffer of physical shape P read in the
   order p, out dense), at 132 multiprocessors (H100 SXM and H200: waves of
   792 tpx tiles): the four A rows named in runtime/elementwise.c and a
   sweep row take it; its two losing classes do not (one c tile; c tiles
   of 64, the last 128-wide wave holding 4 tiles), nor do the rows s25r1
   measured slower (2.03 and 2.04 waves, a c axis 89.5% full), a plan in c
   tiles of 64, a c axis 88.1% full, tperm2's tpx-by-default row and a j
   axis of 3 tiles. Then the waves on other counts of multiprocessors. */
Test(tperm_plan, tpx_a_where_rule_a_takes_it)
{
    static const struct {
        int nd;
        int64_t P[5];
        int p[5], want;
    } cs[] = {
        {2, {6007, 5003}, {1, 0}, 1},                           /* 47 x 81 tiles, 4.81 waves; s28r1 x1.26 */
        {3, {1999, 5, 2053}, {2, 1, 0}, 1},                     /* 16 x 166, 3.35 waves; x1.24 */
        {3, {7, 2053, 1999}, {0, 2, 1}, 1},                     /* 17 x 33 x 7, 4.96 waves; x1.30 */
        {2, {2053, 8191}, {1, 0}, 1},                           /* 17 x 133, 2.85 waves; x1.29 */
        {2, {11009, 1983}, {1, 0}, 1},                          /* 87 x 32, 3.52 waves (the sweep's) */
        {5, {119, 9, 31, 31, 31}, {3, 4, 2, 1, 0}, 0},          /* 1 c tile (119 positions); x0.977 */
        {4, {33, 64, 95, 91}, {3, 2, 0, 1}, 0},                 /* 17 x 140 = 2380 tiles: 4 in the last wave */
        {2, {3001, 4097}, {1, 0}, 0},                           /* 1608 tiles, 2.03 waves */
        {2, {4097, 3001}, {1, 0}, 0},                           /* 1617 tiles, 2.04 waves; s25r1 x0.90 */
        {2, {1031, 16411}, {1, 0}, 0},                          /* c 1031 in 9 tiles: 89.5%; s25r1 x0.94 */
        {3, {429, 487, 105}, {2, 1, 0}, 0},                     /* the plan's c tiles of 64 */
        {3, {789, 1137, 33}, {2, 1, 0}, 0},                     /* c 789 in 7 tiles: 88.1% */
        {3, {255, 387, 259}, {2, 0, 1}, 0},                     /* tperm2's (tpx by default) */
        {3, {115, 1041, 183}, {0, 2, 1}, 0},                    /* 3 j tiles */
    };
    cr_assert_eq(kg_test_ew_tune(KG_EW_TUNE_TPX_A, 1), 1, "KG_EW_TUNE_TPX_A's default (on since s29r1)");
    cr_assert_eq(kg_test_ew_tune(KG_EW_TUNE_TPX_A, -1), 1);
    cr_assert_eq(kg_test_ew_tune(KG_EW_TUNE_TPX_A, 1), 1, "KG_EW_TUNE_TPX_A out of range: not the default");
    const size_t es[4] = {2, 2, 0, 0};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const kg_layout L = copy_in_order_layout(cs[i].nd, cs[i].P, cs[i].p, KG_BF16);
        kg_tperm tp, tw;
        cr_assert(kg_ew_plan_tperm(&L, es, &tp), "case %zu: no tperm plan", i);
        cr_assert(kg_ew_plan_tpx(&L, &tw), "case %zu: no tpx plan", i);
        cr_assert_eq(kg_ew_tpx_a(&tp, &tw, 132), cs[i].want, "case %zu (tpx %u x %u tiles of %u, %u in all)", i,
                     tw.tiles_c, tw.tiles_j, tw.rc, tw.tiles);
        cr_assert(!(cs[i].want && kg_ew_tpx_by_default(&tp, &tw)), "case %zu: already tpx by default", i);
        /* the same answer with the input and the output one element off
           (the f16 runs of tperms::copies_2byte_pairs_by_rule_a) */
        const kg_layout L1 = copy_in_order_layout_at(cs[i].nd, cs[i].P, cs[i].p, KG_F16, 1, 1);
        kg_tperm tp1, tw1;
        cr_assert(kg_ew_plan_tperm(&L1, es, &tp1) && kg_ew_plan_tpx(&L1, &tw1), "case %zu, one off: no plans", i);
        cr_assert_eq(kg_ew_tpx_a(&tp1, &tw1, 132), cs[i].want, "case %zu, one off", i);
    }
    /* 2053 x 8191^T: 2261 tiles; waves of 6 blocks on n multiprocessors */
    static const int sms[][2] = {{100, 1}, {132, 1}, {160, 1}, {180, 0}, {188, 0}, {189, 0}, {0, 0}};
    const kg_layout L = copy_in_order_layout(2, cs[3].P, cs[3].p, KG_BF16);
    kg_tperm tp, tw;
    cr_assert(kg_ew_plan_tperm(&L, es, &tp) && kg_ew_plan_tpx(&L, &tw));
    cr_assert_eq(tw.tiles, 2261u);
    for (size_t i = 0; i < sizeof sms / sizeof sms[0]; i++)
        cr_assert_eq(kg_ew_tpx_a(&tp, &tw, sms[i][0]), sms[i][1], "%d multiprocessors", sms[i][0]);
}

/* One copy of 2-byte elements (dtype dt) from the view a of a buffer to
   the view o of another, by the default choice; every output element's
   bits against its input element's. The input holds arbitrary bits (a
   hash of the position and a seed: NaNs of every payload among them),
   never 0xffff, the output's poison, so an unwritten element fails. The
   check walks the output in row-major order with the input's position
   kept by its strides (no reference values: a copy's want is the input's
   bits), so copies of 3e7 elements take well under a second of CPU each.
   Returns the variant that ran. */
static int copy_2byte_bits(const view *a, const view *o, kg_dtype dt)
{
    const int64_t an = storage(a), on = storage(o), n = numel(o);
    uint16_t *hin = malloc((size_t)an * 2), *hout = malloc((size_t)on * 2);
    cr_assert(hin && hout);
    const uint64_t seed = rng++ * 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; i < an; i++) {
        uint64_t z = seed + (uint64_t)i * 0xBF58476D1CE4E5B9ull;
        z ^= z >> 31;
        z *= 0x94D049BB133111EBull;
        const uint16_t h = (uint16_t)(z >> 40);
        hin[i] = h == 0xffff ? 0xfffe : h;
    }
    void *din = kt_alloc(ctx, (size_t)an * 2), *dout = kt_alloc(ctx, (size_t)on * 2);
    kt_upload(ctx, din, hin, (size_t)an * 2);
    KT_OK(ctx, kg_memset(ctx, dout, 0xff, (size_t)on * 2));
    const kg_tensor ta = tview(din, dt, a), to = tview(dout, dt, o);
    const kg_tensor *ins[3] = {&ta, &ta, &ta};
    KT_OK(ctx, kg_elementwise(ctx, KG_OP_COPY, &to, ins, 1));
    KT_OK(ctx, kg_sync(ctx));
    const int used = kg_test_last_ew_variant(ctx);
    kt_download(ctx, hout, dout, (size_t)on * 2);
    const int nd = o->ndim;
    int64_t idx[KG_MAX_DIMS] = {0}, ia = a->offset, io = o->offset;
    for (int64_t e = 0; e < n; e++) {
        if (hout[io] != hin[ia])
            cr_assert_fail("%s copy, variant %d, element %lld: bits %#x, want the input's %#x", kg_dtype_name(dt),
                           used, (long long)e, hout[io], hin[ia]);
        for (int d = nd - 1; d >= 0; d--) {
            ia += a->strides[d];
            io += o->strides[d];
            if (++idx[d] < o->shape[d])
                break;
            ia -= idx[d] * a->strides[d];
            io -= idx[d] * o->strides[d];
            idx[d] = 0;
        }
    }
    KT_OK(ctx, kg_free(ctx, din));
    KT_OK(ctx, kg_free(ctx, dout));
    free(hin);
    free(hout);
    return used;
}

/* Rule A by the default choice (the default tunings: KG_EW_TUNE_TPX_A 1
   since round s29r1): the perm bench's bf16 rows that rounds s28r1 and
   s29r1 measured and two sweep rows (input a = a dense buffer of physical
   shape P read in the order p, out dense), the tpx kernel where kg_ew_tpx_a
   takes the copy on this GPU's multiprocessors (the rows it takes on 132),
   tperma where it does not (its two losing classes); then 6007x5003^T with
   KG_EW_TUNE_TPX_A 0 (the knob that turns A off: tperma). Since round
   s31r1 (KG_EW_TUNE_TPERMC 1) a copy rule A leaves runs tpermc instead of
   tperma where kg_ew_tpermc_ok and its output rows start off sectors
   (kg_ew_tpermc_rows_off at the output's offset), e.g. 6007x5003^T with A
   off. bf16 aligned,
   f16 on three rows with the input and the output one element off. Bits
   exact on every element (copy_2byte_bits: about 2.7e8 elements, well
   under a minute; in s29r1 the same rows through run_case, whose
   per-element reference and index arithmetic cost about 0.1 us an
   element on the CPU, ran past the round's 45 s). */
Test(tperms, copies_2byte_pairs_by_rule_a, .init = setup, .fini = teardown, .timeout = 600)
{
    static const struct {
        int nd;
        int64_t P[5];
        int p[5], f16;
    } cs[] = {
        {2, {6007, 5003}, {1, 0}, 1},          {3, {1999, 5, 2053}, {2, 1, 0}, 0},
        {3, {7, 2053, 1999}, {0, 2, 1}, 0},    {2, {2053, 8191}, {1, 0}, 1},
        {2, {11009, 1983}, {1, 0}, 0},         {4, {73, 85, 219, 17}, {2, 3, 0, 1}, 0},
        {5, {119, 9, 31, 31, 31}, {3, 4, 2, 1, 0}, 1}, {4, {33, 64, 95, 91}, {3, 2, 0, 1}, 0},
    };
    reset_tile_tunings(); /* the defaults */
    const size_t es[4] = {2, 2, 0, 0};
    int took = 0;
    for (size_t i = 0; i <= sizeof cs / sizeof cs[0]; i++) {
        const int off = i == sizeof cs / sizeof cs[0]; /* last: row 0 with rule A off */
        const size_t r = off ? 0 : i;
        const kg_layout L = copy_in_order_layout(cs[r].nd, cs[r].P, cs[r].p, KG_BF16);
        kg_tperm tp, tw;
        cr_assert(kg_ew_plan_tperm(&L, es, &tp) && kg_ew_plan_tpx(&L, &tw), "case %zu: no plans", r);
        const int want = !off && kg_ew_tpx_a(&tp, &tw, ctx->sm_count);
        took += want;
        if (off)
            kg_test_ew_tune(KG_EW_TUNE_TPX_A, 0);
        for (int k = 0; k < 1 + (!off && cs[r].f16); k++) {
            int64_t shape[KG_MAX_DIMS];
            const view a = read_in_order(cs[r].nd, cs[r].P, cs[r].p, shape), o = dense(cs[r].nd, shape);
            const view ak = offset(a, k), ok = offset(o, k);
            const kg_dtype dt = k ? KG_F16 : KG_BF16;
            const int c = !want && kg_ew_tpermc_ok(&tp) && kg_ew_tpermc_rows_off(&tp, KT_DEV((1 << 28) + 2 * k));
            const int used = copy_2byte_bits(&ak, &ok, dt);
            cr_assert_eq(used, want ? KG_EW_TPERMS : c ? KG_EW_TPERMC : KG_EW_TPERMA,
                         "%s case %zu%s: variant %d, want %s", kg_dtype_name(dt), r, off ? " (rule A off)" : "", used,
                         want ? "tperms" : c ? "tpermc" : "tperma");
        }
    }
    reset_tile_tunings();
    cr_assert_gt(took, 0, "rule A took no case on %d multiprocessors", ctx->sm_count);
}

/* The planners behind elementwise::copies_of_2byte_floats_move_bits_in_every_variant's
   forced runs, on its layouts (bits_layout) at the plan tests' addresses:
   tperm square tiles and a tpx plan for the odd transpose (tperm, tperm2,
   tperma, tperms), rowsv for the pitched rows (nd32v's, under
   KG_EW_TUNE_ROWSV 2 from 64-byte rows) and for the rows kept in place
   (by default), tplanev for the planes (planes from 1 byte; by default
   from 16384 bytes, so the runtime's own choice runs tplanem on the 2-byte
   planes and tplanev on the 4- and 8-byte ones), tslab for the
   output rows of 33, tchunk for the 67 x 1000 transpose (KG_EW_TUNE_TCHUNK
   1); f16 / bf16, f32 and f64 elements. */
Test(bits_plan, bits_layouts_are_planned_by_the_copy_kernels)
{
    const size_t ess[3] = {2, 4, 8};
    const kg_dtype dts[3] = {KG_BF16, KG_F32, KG_F64};
    for (int di = 0; di < 3; di++) {
        const size_t es = ess[di];
        kg_layout L[BITS_LAYOUTS];
        for (int li = 0; li < BITS_LAYOUTS; li++) {
            view iv, ov;
            bits_layout(li, &iv, &ov);
            kg_tensor ta = tview(KT_DEV(0), dts[di], &iv), to = tview(KT_DEV(1 << 28), dts[di], &ov);
            const kg_tensor *ins[1] = {&ta};
            kg_layout_build(&L[li], &to, ins, 1);
        }
        const size_t tes[4] = {es, es, 0, 0};
        kg_tperm tp, tw;
        cr_assert(kg_ew_plan_tperm(&L[1], tes, &tp) && !tp.rect, "%zu-byte: layout 1, no square tperm plan", es);
        cr_assert(es != 2 || kg_ew_plan_tpx(&L[1], &tw), "layout 1: no tpx plan");
        cr_assert(es != 2 || kg_ew_tpermc_ok(&tp), "layout 1: no tpermc plan");
        kg_rowsv rv;
        cr_assert(kg_ew_plan_rowsv(&L[4], es, 0, &rv), "%zu-byte: layout 4, no rowsv plan", es);
        kg_tplane tq;
        kg_tslab tz;
        kg_tchunk tc;
        size_t smem;
        cr_assert(kg_ew_plan_tslab(&L[6], es, &tz, &smem), "%zu-byte: layout 6, no tslab plan", es);
        /* the default choice on layout 5 (17 planes of 64 x 64): tplanem for
           2-byte elements (8192-byte planes), tplanev from 16384 bytes */
        kg_tplanem tm;
        const int tpm = kg_ew_plan_tplanem(&L[5], es, &tm, &smem);
        cr_assert_eq(tpm && kg_ew_tplanem_by_default(&tm, es), es == 2, "%zu-byte: layout 5, tplanem by default", es);
        cr_assert_eq(kg_ew_plan_tplane(&L[5], es, &tq, &smem), es != 2, "%zu-byte: layout 5, tplanev by default", es);
        const int was[4] = {kg_test_ew_tune(KG_EW_TUNE_ROWSV, 2), kg_test_ew_tune(KG_EW_TUNE_ROWSV_MIN_BYTES, 64),
                            kg_test_ew_tune(KG_EW_TUNE_TPLANE_MIN_BYTES, 1), kg_test_ew_tune(KG_EW_TUNE_TCHUNK, 1)};
        cr_assert(kg_ew_plan_rowsv(&L[3], es, 1, &rv), "%zu-byte: layout 3, no rowsv plan", es);
        cr_assert(kg_ew_plan_tplane(&L[5], es, &tq, &smem), "%zu-byte: layout 5, no tplane plan", es);
        cr_assert_eq(kg_ew_plan_tplanem(&L[5], es, &tm, &smem), es != 8, "%zu-byte: layout 5, tplanem plan", es);
        cr_assert(kg_ew_plan_tchunk(&L[7], es, &tc, &smem), "%zu-byte: layout 7, no tchunk plan", es);
        kg_test_ew_tune(KG_EW_TUNE_ROWSV, was[0]);
        kg_test_ew_tune(KG_EW_TUNE_ROWSV_MIN_BYTES, was[1]);
        kg_test_ew_tune(KG_EW_TUNE_TPLANE_MIN_BYTES, was[2]);
        kg_test_ew_tune(KG_EW_TUNE_TCHUNK, was[3]);
    }
}

/* kg_ew_tperms_ok on the perm bench's f32 rows (input a = a dense buffer of
   physical shape P read in the order p, out dense): the rows whose output
   fast dim comes from a moved input dim can take tperms; one whose
   inner dim stays in place (input 0 not staged) does not. */
Test(tperm_plan, tperms_takes_the_transposed_rows)
{
    static const struct {
        int nd;
        int64_t P[3];
        int p[3];
        int want;
    } cs[] = {
        {2, {6007, 5003}, {1, 0}, 1},       {3, {255, 387, 259}, {2, 1, 0}, 1},
        {3, {255, 387, 259}, {1, 2, 0}, 1}, {3, {255, 387, 259}, {2, 0, 1}, 1},
        {3, {255, 387, 259}, {0, 2, 1}, 1}, {3, {255, 387, 259}, {1, 0, 2}, 0},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const kg_layout L = copy_in_order_layout(cs[i].nd, cs[i].P, cs[i].p, KG_F32);
        const size_t es[4] = {4, 4, 0, 0};
        kg_tperm tp;
        cr_assert(kg_ew_plan_tperm(&L, es, &tp), "case %zu: no tperm plan", i);
        cr_assert_eq(kg_ew_tperms_ok(&tp), cs[i].want, "case %zu (staged %#x, c dims %d, c stride %d, flat %u)", i,
                     tp.staged, tp.nd[KG_TP_C], tp.stride[KG_TP_C][0][0], tp.flat);
    }
}

/* kg_ew_tperms_by_default (H200 run s22r2's rule) on the perm bench's f32
   rows (input a = a dense buffer of physical shape P read in the order p,
   out dense at a 32-byte aligned address): tperms where it gained (output
   rows off sectors, a c axis of 125 to 6007), tperm where every output row
   starts on a sector (c axis of 64 or 100320 with row strides of multiples
   of 8) and where the c axis is short (81); an output 4 bytes off its
   sector takes tperms wherever it is eligible. */
Test(tperm_plan, tperms_where_it_measured_faster)
{
    static const struct {
        int nd;
        int64_t P[4];
        int p[4];
        int want;
    } cs[] = {
        {2, {6007, 5003}, {1, 0}, 1},         {3, {255, 387, 259}, {2, 1, 0}, 1},
        {3, {255, 387, 259}, {2, 0, 1}, 1},   {3, {255, 387, 259}, {0, 2, 1}, 1},
        {4, {125, 239, 223, 5}, {2, 1, 3, 0}, 1}, {3, {181, 669, 181}, {1, 2, 0}, 1},
        {4, {33, 64, 95, 91}, {0, 3, 2, 1}, 0}, /* c = 64, rows on sectors: 86.2 -> 78.2 */
        {4, {33, 64, 95, 91}, {2, 0, 3, 1}, 0}, {4, {33, 64, 95, 91}, {3, 0, 2, 1}, 0},
        {4, {33, 64, 95, 91}, {3, 0, 1, 2}, 0}, /* c = 100320, rows on sectors: 81.4 -> 80.7 */
        {4, {273, 147, 81, 7}, {0, 1, 3, 2}, 0}, /* c = 81: 75.3 -> 63.4 */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const kg_layout L = copy_in_order_layout(cs[i].nd, cs[i].P, cs[i].p, KG_F32);
        const size_t es[4] = {4, 4, 0, 0};
        kg_tperm tp;
        cr_assert(kg_ew_plan_tperm(&L, es, &tp), "case %zu: no tperm plan", i);
        cr_assert_eq(kg_ew_tperms_by_default(&tp, KT_DEV(1 << 28)), cs[i].want, "case %zu (c %u, %u x %u tiles)", i,
                     tp.n[KG_TP_C], tp.tiles_c, tp.tiles_j);
        /* the output 4 bytes off a sector: every row off (where eligible and c >= 96) */
        cr_assert_eq(kg_ew_tperms_by_default(&tp, (const char *)KT_DEV(1 << 28) + 4),
                     kg_ew_tperms_ok(&tp) && tp.n[KG_TP_C] >= 96, "case %zu, output 4 bytes off", i);
    }
}

Test(tperm_plan, block_order_follows_the_tile_counts)
{
    static const struct {
        int nd;
        int64_t P[4];
        int p[4];
        kg_dtype dt;
        int want; /* 1: j tiles fastest */
    } cs[] = {
        {4, {33, 64, 95, 91}, {3, 0, 1, 2}, KG_F32, 1},  /* 1568 x 3 tiles: 75.2 -> 81.5% of copy */
        {4, {33, 64, 95, 91}, {3, 1, 2, 0}, KG_BF16, 0}, /* 1568 x 3, 2-byte: c first */
        {3, {255, 387, 259}, {2, 0, 1}, KG_F32, 1},      /* 1542 x 5: 64.1 -> 68.9 */
        {3, {533, 179, 229}, {2, 0, 1}, KG_BF16, 0},     /* 1491 x 4, 2-byte: s14r3 53.6 (c first) vs 48.9 */
        {3, {255, 387, 259}, {1, 0, 2}, KG_BF16, 0},     /* 1032 x 7 (ratio 147): 46.7 -> 43.6 */
        {3, {203, 189, 569}, {2, 1, 0}, KG_F32, 0},      /* 600 x 9: 69.7 -> 66.3 */
        {2, {6007, 5003}, {1, 0}, KG_F32, 0},            /* 94 x 79: 74.3 -> 65.3 */
        {3, {255, 387, 259}, {0, 2, 1}, KG_F32, 0},      /* 7 x 1032: 80.6 -> 49.9 */
    };
    for (int mode = 3; mode >= 0; mode--) {
        kg_test_ew_tune(KG_EW_TUNE_TPERM_JFIRST, mode);
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            const kg_layout L = copy_in_order_layout(cs[i].nd, cs[i].P, cs[i].p, cs[i].dt);
            const size_t es[4] = {kg_dtype_size(cs[i].dt), kg_dtype_size(cs[i].dt), 0, 0};
            kg_tperm tp;
            cr_assert(kg_ew_plan_tperm(&L, es, &tp), "case %zu: no tperm plan", i);
            const int want = mode >= 2 ? cs[i].want : mode;
            cr_assert_eq((int)tp.jfirst, want, "case %zu, mode %d: jfirst %u (tiles %u x %u), want %d", i, mode,
                         tp.jfirst, tp.tiles_c, tp.tiles_j, want);
            if (mode == 2)
                cr_assert_eq(cs[i].want, kg_dtype_size(cs[i].dt) >= 4 && tp.tiles_c >= 256u * tp.tiles_j,
                             "case %zu: tiles %u x %u", i, tp.tiles_c, tp.tiles_j);
        }
    }
    /* ops of two inputs (input 1 laid out as the output): with 2-byte
       elements the j tiles go first where the output runs on along j (mode
       2, the default; mode 3 the tile counts only), measured in s15r1 */
    static const struct {
        int nd;
        int64_t P[5];
        int p[5];
        kg_dtype dt;
        int want;
    } bs[] = {
        {4, {160, 214, 118, 6}, {0, 2, 3, 1}, KG_BF16, 1},        /* c 214 x 160, j 708 at stride 214: 64.0 -> 80.2 */
        {5, {78, 24, 18, 18, 36}, {0, 3, 1, 2, 4}, KG_BF16, 1},   /* c 36 x 78, j 18 x 432 (432 at 36): 57.4 -> 67.2 */
        {4, {127, 69, 227, 11}, {3, 0, 2, 1}, KG_BF16, 1},        /* c 69 x 127, j 11 x 227 (227 at 69): 56.0 -> 59.7 */
        {4, {48, 178, 44, 60}, {3, 2, 1, 0}, KG_BF16, 0},         /* c 48 x 178 chained in the output */
        {2, {6007, 5003}, {1, 0}, KG_BF16, 0},                    /* c one dim: 72.9 -> 62.0 under j first */
        {3, {213, 871, 119}, {1, 2, 0}, KG_BF16, 0},              /* 66.4 -> 42.7 */
        {4, {160, 214, 118, 6}, {0, 2, 3, 1}, KG_F32, 0},         /* 4-byte: the tile counts (535 x 12) */
    };
    for (int mode = 3; mode >= 2; mode--) {
        kg_test_ew_tune(KG_EW_TUNE_TPERM_JFIRST, mode);
        for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++) {
            int64_t shape[5];
            const view a = read_in_order(bs[i].nd, bs[i].P, bs[i].p, shape);
            const view o = dense(bs[i].nd, shape);
            kg_tensor ta = tview(KT_DEV(0), bs[i].dt, &a), tb = tview(KT_DEV(1 << 27), bs[i].dt, &o),
                      to = tview(KT_DEV(1 << 28), bs[i].dt, &o);
            const kg_tensor *ins[2] = {&ta, &tb};
            kg_layout L;
            kg_layout_build(&L, &to, ins, 2);
            const size_t es[4] = {kg_dtype_size(bs[i].dt), kg_dtype_size(bs[i].dt), kg_dtype_size(bs[i].dt), 0};
            kg_tperm tp;
            cr_assert(kg_ew_plan_tperm(&L, es, &tp), "two inputs, case %zu: no tperm plan", i);
            const int want = mode == 2 && bs[i].want;
            cr_assert_eq((int)tp.jfirst, want, "two inputs, case %zu, mode %d: jfirst %u, want %d", i, mode, tp.jfirst,
                         want);
        }
    }
}

Test(tperm_plan, default_choice_follows_the_measured_winners)
{
    static const struct {
        int nd;
        int64_t P[4];
        int p[4];
        kg_dtype dt;
        int want; /* 1: tperm */
    } cs[] = {
        {4, {33, 64, 95, 91}, {1, 0, 2, 3}, KG_F32, 0},  /* nd32 74.9% vs tperm 61.7% */
        {4, {33, 64, 95, 91}, {1, 2, 0, 3}, KG_F32, 0},  /* nd32 74.5 vs 69.8 */
        {3, {255, 387, 259}, {1, 0, 2}, KG_F32, 0},      /* nd32 76.2 vs 65.1 */
        {4, {83, 99, 129, 21}, {1, 0, 2, 3}, KG_F32, 0}, /* nd32 74.7 vs 64.1 */
        {4, {33, 64, 95, 91}, {0, 2, 1, 3}, KG_F32, 1},  /* tperm 86.0 vs nd32 66.4 */
        {4, {33, 64, 95, 91}, {2, 0, 1, 3}, KG_F32, 1},  /* tperm 83.4 vs nd32 73.7 */
        {2, {6007, 5003}, {1, 0}, KG_F32, 1},           /* tperm 74.2 vs perm 71.4 */
        {4, {33, 64, 95, 91}, {1, 3, 2, 0}, KG_F32, 1},  /* tperm 71.1 vs permf 49.4 */
        {4, {33, 64, 95, 91}, {0, 2, 3, 1}, KG_BF16, 0}, /* perm (vector stores, full tiles) 64.3 vs tperm 56.3 */
        {4, {33, 64, 95, 91}, {2, 3, 0, 1}, KG_BF16, 0}, /* perm 65.8 vs 56.4 */
        {4, {33, 64, 95, 91}, {0, 3, 1, 2}, KG_BF16, 1}, /* perm's j tiles 71% full: tperm 54.2 vs perm 50.8 */
        {4, {33, 64, 95, 91}, {0, 2, 3, 1}, KG_F32, 0},  /* perm 88.4 vs tperm 87.5 */
        {3, {115, 1041, 183}, {0, 2, 1}, KG_BF16, 1},   /* tperm 55.6 vs perm 50.3 */
        {2, {8192, 8192}, {1, 0}, KG_BF16, 1},          /* 2-byte, flat: tperm 72.8 vs perm 72.0 (r5) */
        {2, {6016, 5024}, {1, 0}, KG_BF16, 1},          /* tperm 67.9 vs perm 64.9 (r5) */
        {2, {6016, 5024}, {1, 0}, KG_F32, 0},           /* perm 91.4 vs tperm 90.5 (r5) */
        {2, {8192, 8192}, {1, 0}, KG_F32, 0},           /* perm 96.8 vs tperm 96.2 (r5) */
        {3, {429, 487, 105}, {2, 1, 0}, KG_BF16, 1},    /* tperm 52.0 vs perm 44.9 */
        {3, {255, 387, 259}, {0, 2, 1}, KG_BF16, 1},    /* tperm 52.2 vs perm 41.5 */
        {4, {33, 64, 95, 91}, {0, 1, 3, 2}, KG_BF16, 1}, /* tperm 53.0 vs perm 32.1 */
        {4, {33, 64, 95, 91}, {0, 2, 1, 3}, KG_BF16, 1}, /* tperm 58.1 vs rows 42.0 */
        {4, {33, 64, 95, 91}, {1, 3, 2, 0}, KG_BF16, 1}, /* tperm 53.0 vs permf 23.8 */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const kg_layout L = copy_in_order_layout(cs[i].nd, cs[i].P, cs[i].p, cs[i].dt);
        const size_t es[4] = {kg_dtype_size(cs[i].dt), kg_dtype_size(cs[i].dt), 0, 0};
        const void *ptrs[4] = {KT_DEV(1 << 28), KT_DEV(0), 0, 0};
        kg_tperm tp;
        kg_perm pm;
        cr_assert(kg_ew_plan_tperm(&L, es, &tp), "case %zu: no tperm plan", i);
        const int permf_ok = kg_ew_plan_perm(&L, ptrs, es, (int)(16 / es[0]), &pm);
        const int perm_ok = permf_ok && !pm.fold_c && !pm.fold_j;
        /* nd32v: the inner dim kept in place and a multiple of a vector (none of these) */
        const int got = kg_ew_tperm_preferred(&tp, &pm, perm_ok, 0, es[0], es[0]);
        cr_assert_eq(got, cs[i].want, "case %zu (%s): tperm preferred %d, want %d (flat %u, staged %#x)", i,
                     kg_dtype_name(cs[i].dt), got, cs[i].want, tp.flat, tp.staged);
    }
    /* the GPU test tperm::default_choice's layouts (permuted()) */
    static const struct {
        int nd;
        int64_t s[3];
        int perm[3];
        kg_dtype dt;
        int want;
    } gs[] = {{2, {503, 751}, {1, 0}, KG_F32, 1},
              {2, {503, 751}, {1, 0}, KG_BF16, 1},
              {2, {1001, 64}, {1, 0}, KG_F32, 0},
              {2, {1001, 64}, {1, 0}, KG_BF16, 0},
              {2, {1024, 64}, {1, 0}, KG_BF16, 1},
              {3, {37, 66, 45}, {2, 1, 0}, KG_F32, 1},
              {3, {37, 66, 45}, {1, 0, 2}, KG_BF16, 1},
              {3, {37, 66, 45}, {1, 0, 2}, KG_F32, 0}};
    for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++) {
        const view a = permuted(gs[i].nd, gs[i].s, gs[i].perm), o = dense(gs[i].nd, gs[i].s);
        kg_tensor ta = tview(KT_DEV(0), gs[i].dt, &a), to = tview(KT_DEV(1 << 28), gs[i].dt, &o);
        const kg_tensor *ins[1] = {&ta};
        kg_layout L;
        kg_layout_build(&L, &to, ins, 1);
        const size_t es[4] = {kg_dtype_size(gs[i].dt), kg_dtype_size(gs[i].dt), 0, 0};
        const void *ptrs[4] = {to.data, ta.data, 0, 0};
        kg_tperm tp;
        kg_perm pm;
        cr_assert(kg_ew_plan_tperm(&L, es, &tp));
        const int permf_ok = kg_ew_plan_perm(&L, ptrs, es, (int)(16 / es[0]), &pm);
        const int got = kg_ew_tperm_preferred(&tp, &pm, permf_ok && !pm.fold_c && !pm.fold_j, 0, es[0], es[0]);
        cr_assert_eq(got, gs[i].want, "GPU test case %zu: tperm preferred %d, want %d", i, got, gs[i].want);
    }
}

/* ---- tpermc / tperms on chained c axes: output rows cut at sectors on tperm's plan ---- */

/* The cut kernels on tperm's square-tile plan tp of the copy layout L
   (<op>_tpermc, es 2, templates/elementwise_tpc.cuh; <op>_tperms with a c
   axis of several dims, es 4, elementwise_tph.cuh), walked as they walk
   it, the output's address `phase` elements past a 32-byte sector: tile t
   -> (c tile, j tile, b) in the plan's block order (kg_tp_where); the
   tile loads c rows c0 .. c0 + 63 + S (S = 32 / es positions a sector)
   that are inside the axis; output row j owns the 64 positions from its
   first sector boundary at or after c0 (the first c tile from 0, the last
   to the axis's end), each whole 16-byte chunk from that boundary (es 2)
   aligned. Asserts that the c axis is one run of the output, that every
   output element is written once (hits), from the input element the
   layout puts there, by a tile that loaded its c row. */
static void walk_cut_tiles(const kg_layout *L, const kg_tperm *tp, int es, uint32_t phase, unsigned char *hits,
                           int64_t n, const char *what)
{
    const int S = 32 / es, T = 64;
    const int64_t nc = tp->n[KG_TP_C], nj = tp->n[KG_TP_J];
    cr_assert_eq((int64_t)tp->tiles, (int64_t)tp->tiles_c * tp->tiles_j * tp->n[KG_TP_B], "%s: tiles", what);
    cr_assert_eq((int64_t)tp->tiles_c, (nc + T - 1) / T, "%s: c tiles", what);
    cr_assert_eq((int64_t)tp->tiles_j, (nj + T - 1) / T, "%s: j tiles", what);
    memset(hits, 0, (size_t)n);
    for (uint32_t t = 0; t < tp->tiles; t++) {
        uint32_t ct, jt, b;
        if (tp->jfirst) {
            jt = t % tp->tiles_j;
            ct = t / tp->tiles_j % tp->tiles_c;
            b = t / tp->tiles_j / tp->tiles_c;
        } else {
            ct = t % tp->tiles_c;
            jt = t / tp->tiles_c % tp->tiles_j;
            b = t / tp->tiles_c / tp->tiles_j;
        }
        int64_t bo[2] = {0, 0};
        tp_axis_offsets(tp, KG_TP_B, b, bo);
        const int64_t c0 = (int64_t)ct * T, j0 = (int64_t)jt * T, ncr = nc - c0;
        const int64_t jn = nj - j0 < T ? nj - j0 : T;
        for (int64_t c = 0; c < ncr && c < T + S; c++) { /* the loads: the c axis is one run of the output */
            int64_t co[2] = {0, 0};
            tp_axis_offsets(tp, KG_TP_C, c0 + c, co);
            cr_assert_eq(co[0], c0 + c, "%s: c position %lld is not output element %lld of its row", what,
                         (long long)(c0 + c), (long long)(c0 + c));
        }
        for (int64_t jj = 0; jj < jn; jj++) { /* the stores */
            int64_t jo[2] = {0, 0};
            tp_axis_offsets(tp, KG_TP_J, j0 + jj, jo);
            const int64_t ro = bo[0] + jo[0] + c0;
            const int h = (int)((uint64_t)(S - (int64_t)((phase + (uint64_t)ro) % (uint64_t)S)) % (uint64_t)S);
            cr_assert_eq((phase + (uint64_t)(ro + h)) % (uint64_t)S, 0u, "%s: row %lld cut off a sector", what,
                         (long long)(j0 + jj));
            for (int64_t cc = ct ? h : 0; cc < h + T && cc < ncr; cc++) {
                cr_assert(cc < T + S, "%s: position %lld of tile %u not loaded", what, (long long)cc, t);
                if (es == 2 && cc >= h && (cc - h) % 8 == 0 && cc + 8 <= ncr)
                    cr_assert_eq((phase + (uint64_t)(ro + cc)) % 8, 0u, "%s: a chunk off 16 bytes", what);
                const int64_t o = ro + cc;
                cr_assert(o >= 0 && o < n, "%s: output offset %lld", what, (long long)o);
                hits[o]++;
                int64_t r = o, want = 0; /* the input element the layout puts at o */
                for (int d = 0; d < L->ndim; d++) {
                    want += r % L->size[d] * L->stride[1][d];
                    r /= L->size[d];
                }
                int64_t co[2] = {0, 0};
                tp_axis_offsets(tp, KG_TP_C, c0 + cc, co);
                cr_assert_eq(bo[1] + co[1] + jo[1], want, "%s: input offset of output element %lld", what,
                             (long long)o);
            }
        }
    }
    for (int64_t e = 0; e < n; e++)
        cr_assert_eq(hits[e], 1, "%s phase %u: element %lld written %d times", what, phase, (long long)e, hits[e]);
}

/* Every permutation of 2 to 5 dims (odd and even sizes, short dims that
   fold, small versions of the perm bench's slow rows: [13,8,19,11] for
   [33,64,95,91], [43,49,11] for [429,487,105], [15,19,7,5] for
   [157,195,73,11]; whole tiles with a b dim; a long c axis whose j tiles
   go first for 4-byte elements) planned by kg_ew_plan_tperm
   for 2-byte elements
   (kg_ew_tpermc_ok plans) and 4-byte ones (kg_ew_tperms_ok under
   KG_EW_TUNE_TPERMS_CHAIN 1), walked as tpermc / tperms walk them at each
   phase of the output's address within a sector; the walks must include
   c axes of 2 and more dims, j axes of several dims, b dims and both
   block orders. */
Test(tperm_plan, cut_tiles_on_chained_c_axes_cover_each_element_once)
{
    static const struct {
        int nd;
        int64_t P[5];
    } cs[] = {{2, {130, 67}},      {3, {37, 66, 45}},    {4, {5, 34, 7, 67}},  {5, {3, 5, 7, 9, 11}},
              {3, {65, 129, 63}},  {4, {13, 8, 19, 11}}, {3, {43, 49, 11}},    {4, {15, 19, 7, 5}},
              {3, {7, 301, 5}},    {2, {25, 1155}},      {4, {3, 70, 5, 67}},  {3, {3, 64, 128}},
              {3, {5, 128, 192}},  {3, {16411, 3, 5}}};
    const int was = kg_test_ew_tune(KG_EW_TUNE_TPERMS_CHAIN, 1);
    for (int es = 2; es <= 4; es += 2) {
        int walked = 0, cfold = 0, c3 = 0, jfold = 0, bdims = 0, jfirst = 0;
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            const int nd = cs[i].nd;
            int p[5] = {0, 1, 2, 3, 4};
            int64_t n = 1;
            for (int d = 0; d < nd; d++)
                n *= cs[i].P[d];
            unsigned char *hits = calloc((size_t)n, 1);
            cr_assert_not_null(hits);
            do {
                const kg_layout L = copy_in_order_layout(nd, cs[i].P, p, es == 2 ? KG_BF16 : KG_F32);
                const size_t esz[KG_EW_MAX_OPERANDS] = {(size_t)es, (size_t)es, 0, 0};
                kg_tperm tp;
                if (L.ndim < 2 || !kg_ew_plan_tperm(&L, esz, &tp))
                    continue;
                if (!(es == 2 ? kg_ew_tpermc_ok(&tp) : kg_ew_tperms_ok(&tp)))
                    continue;
                cr_assert_eq(kg_ew_tpermc_ok(&tp), kg_ew_tperms_ok(&tp), "case %zu: tpermc / tperms disagree", i);
                walked++;
                cfold += tp.nd[KG_TP_C] > 1;
                c3 += tp.nd[KG_TP_C] > 2;
                jfold += tp.nd[KG_TP_J] > 1;
                bdims += tp.nd[KG_TP_B] > 0;
                jfirst += tp.jfirst != 0;
                char what[96];
                snprintf(what, sizeof what, "es %d case %zu perm %d%d%d%d%d", es, i, p[0], p[1], p[2], p[3], p[4]);
                for (uint32_t phase = 0; phase < (uint32_t)(32 / es); phase++)
                    walk_cut_tiles(&L, &tp, es, phase, hits, n, what);
            } while (next_perm(p, nd));
            free(hits);
        }
        cr_assert(walked >= 60 && cfold >= 10 && c3 >= 1 && jfold >= 10 && bdims >= 2 && (es == 2 || jfirst >= 1),
                  "es %d: %d plans walked, %d with c of several dims (%d of 3+), %d with j folded, %d with b dims, %d "
                  "j tiles first",
                  es, walked, cfold, c3, jfold, bdims, jfirst);
    }
    kg_test_ew_tune(KG_EW_TUNE_TPERMS_CHAIN, was);
}

/* kg_ew_tp_c_chained, kg_ew_tpermc_ok, kg_ew_tpermc_rows_off and
   kg_ew_tperms_ok (KG_EW_TUNE_TPERMS_CHAIN) on the perm bench's slow rows
   (input a = a dense buffer of physical shape P read in the order p, out
   dense and aligned; H100 s30f, % of copy): bf16 [33,64,95,91] p3.1.0.2
   (tperma, 54.9), p1.3.0.2 (58.3), [429,487,105] p2.1.0 (54.8),
   [157,195,73,11] p3.1.0.2 (54.9) have c axes that are one run of the
   output and rows off sectors; p2.1.3.0 (61.6) folds c over dims that do
   not chain (33 and 64 of output strides 1 and 3003), p2.1.0.3 (55.1)
   does not stage its input; p3.0.1.2 (67.7) has its rows on sectors.
   f32: p3.1.0.2 (68.9), p1.3.0.2 (73.5), sweep 203x189x569 p2.1.0 (72.2)
   are tperm's because their c axis has two dims: tperms takes them only
   under KG_EW_TUNE_TPERMS_CHAIN 1, then by its default rule. And the two
   tunings are on (1) by default since round s31r1. */
Test(tperm_plan, tpermc_and_chained_tperms_on_the_bench_rows)
{
    const int was_c = kg_test_ew_tune(KG_EW_TUNE_TPERMC, 0), was_s = kg_test_ew_tune(KG_EW_TUNE_TPERMS_CHAIN, 0);
    cr_assert_eq(was_c, 1, "KG_EW_TUNE_TPERMC is not 1 by default");
    cr_assert_eq(was_s, 1, "KG_EW_TUNE_TPERMS_CHAIN is not 1 by default");
    static const struct {
        int nd;
        int64_t P[4];
        int p[4];
        int es, ok, off, cd; /* kg_ew_tpermc_ok (es 2) / kg_ew_tperms_ok under the chain tuning (es 4), rows off
                                sectors, c dims */
    } cs[] = {
        {4, {33, 64, 95, 91}, {3, 1, 0, 2}, 2, 1, 1, 2}, {4, {33, 64, 95, 91}, {1, 3, 0, 2}, 2, 1, 1, 2},
        {3, {429, 487, 105}, {2, 1, 0}, 2, 1, 1, 1},     {4, {157, 195, 73, 11}, {3, 1, 0, 2}, 2, 1, 1, 2},
        {4, {33, 64, 95, 91}, {2, 1, 3, 0}, 2, 0, 1, 2}, {4, {33, 64, 95, 91}, {2, 1, 0, 3}, 2, 0, 1, 2},
        {4, {33, 64, 95, 91}, {3, 0, 1, 2}, 2, 1, 0, 1}, {4, {33, 64, 95, 91}, {3, 1, 0, 2}, 4, 1, 1, 2},
        {4, {33, 64, 95, 91}, {1, 3, 0, 2}, 4, 1, 1, 2}, {3, {203, 189, 569}, {2, 1, 0}, 4, 1, 1, 2},
        {4, {33, 64, 95, 91}, {2, 1, 3, 0}, 4, 0, 1, 2},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const kg_layout L = copy_in_order_layout(cs[i].nd, cs[i].P, cs[i].p, cs[i].es == 2 ? KG_BF16 : KG_F32);
        const size_t es[KG_EW_MAX_OPERANDS] = {(size_t)cs[i].es, (size_t)cs[i].es, 0, 0};
        kg_tperm tp;
        cr_assert(kg_ew_plan_tperm(&L, es, &tp), "case %zu: no tperm plan", i);
        cr_assert_eq(tp.nd[KG_TP_C], cs[i].cd, "case %zu: c dims", i);
        cr_assert_eq(kg_ew_tpermc_rows_off(&tp, KT_DEV(1 << 28)), cs[i].off, "case %zu: rows off sectors", i);
        cr_assert(kg_ew_tpermc_rows_off(&tp, KT_DEV((1 << 28) + 2)), "case %zu: output 2 bytes off", i);
        if (cs[i].es == 2) {
            cr_assert_eq(kg_ew_tpermc_ok(&tp), cs[i].ok, "case %zu: tpermc_ok", i);
            cr_assert(!cs[i].ok || kg_ew_tperma_by_default(&tp), "case %zu: main runs tperma", i);
        } else {
            cr_assert_eq(kg_ew_tperms_ok(&tp), cs[i].ok && cs[i].cd == 1, "case %zu: tperms_ok, chain off", i);
            cr_assert(!kg_ew_tperms_by_default(&tp, KT_DEV(1 << 28)) || cs[i].cd == 1, "case %zu: main's tperms", i);
            kg_test_ew_tune(KG_EW_TUNE_TPERMS_CHAIN, 1);
            cr_assert_eq(kg_ew_tperms_ok(&tp), cs[i].ok, "case %zu: tperms_ok, chain on", i);
            cr_assert_eq(kg_ew_tperms_by_default(&tp, KT_DEV(1 << 28)), cs[i].ok && cs[i].off, "case %zu: rule", i);
            kg_test_ew_tune(KG_EW_TUNE_TPERMS_CHAIN, 0);
        }
        cr_assert_eq(kg_ew_tp_c_chained(&tp, 1), tp.nd[KG_TP_C] == 1 && tp.stride[KG_TP_C][0][0] == 1,
                     "case %zu: one dim", i);
    }
    /* out-of-range values set the default (1) */
    kg_test_ew_tune(KG_EW_TUNE_TPERMC, 7);
    cr_assert_eq(kg_test_ew_tune(KG_EW_TUNE_TPERMC, 0), 1, "KG_EW_TUNE_TPERMC 7");
    kg_test_ew_tune(KG_EW_TUNE_TPERMS_CHAIN, -1);
    cr_assert_eq(kg_test_ew_tune(KG_EW_TUNE_TPERMS_CHAIN, 0), 1, "KG_EW_TUNE_TPERMS_CHAIN -1");
    kg_test_ew_tune(KG_EW_TUNE_TPERMC, was_c);
    kg_test_ew_tune(KG_EW_TUNE_TPERMS_CHAIN, was_s);
}

/* A copy into a dense output of the physical shape P read in the order p
   (read_in_order), the input ia and the output io elements off alignment;
   returns the variants that ran (run_case: every element's bits against
   its input's, its value against the reference, the output poisoned) */
static unsigned copy_in_order(kg_dtype dt, int nd, const int64_t *P, const int *p, int ia, int io, const char *what)
{
    unsigned ran = 0;
    int64_t shape[KG_MAX_DIMS];
    const view a = read_in_order(nd, P, p, shape), o = dense(nd, shape);
    ew_case c = {what, 1, {offset(a, ia), o, o}, offset(o, io), -1, FILL_MIXED, 0};
    run_case(KG_OP_COPY, dt, dt, &c, &ran);
    return ran;
}

/* Copies of 2-byte elements by <op>_tpermc (forced; word pairs and rect
   tiles off so that even shapes and short output dims take it too; where
   the plan's c axis is not one run of the output, or input 0 is not
   staged, tperm runs instead): every permutation of the tperm shapes (2 to
   5 dims, odd and short dims folded, a misaligned case each), rows of 255,
   387, 31, 4097, 2 and 1 elements, small versions of the perm bench's
   slow rows ([13,8,19,11] for [33,64,95,91], [43,49,11] for
   [429,487,105], [15,19,7,5] for [157,195,73,11]) and [300,7,261] (whole
   tiles along both axes); then at each of the output's 16 phases within a
   sector, the input off by another amount: a 2-d transpose, a 3-d
   reversal and [13,8,19,11] p3.1.0.2 (a c axis of two dims, whole tiles
   from a table: 247 x 88 positions), each asserting that tpermc ran; and
   a 6-d reversal and rotation. bf16 and f16; flat: offsets by
   multiplication where both axes are one dim (0: tables everywhere).
   Bits exact. */
static void check_tpermc(int flat)
{
    kg_test_ew_tune(KG_EW_TUNE_TPERM_FLAT, flat);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_WORDS, 0);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT, 0); /* rect plans (a short output dim 0) keep tperm */
    force_variant = KG_EW_TPERMC;
    want_tperm = 4;
    const kg_dtype dts[] = {KG_BF16, KG_F16};
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        ran_total = 0;
        check_tile_copy_shapes(dts[i]);
        check_perms(KG_OP_COPY, dts[i], dts[i], 4, S(13, 8, 19, 11));
        check_perms(KG_OP_COPY, dts[i], dts[i], 3, S(43, 49, 11));
        check_perms(KG_OP_COPY, dts[i], dts[i], 4, S(15, 19, 7, 5));
        check_perms(KG_OP_COPY, dts[i], dts[i], 3, S(300, 7, 261));
        cr_assert(ran_total & (1u << KG_EW_TPERMC), "%s: tpermc never ran (variants %#x)", kg_dtype_name(dts[i]),
                  ran_total);
    }
    for (int k = 0; k < 3 * 16; k++) {
        static const int64_t s2[2] = {257, 131}, s3[3] = {67, 5, 130}, s4[4] = {13, 8, 19, 11};
        static const int t2[2] = {1, 0}, r3[3] = {2, 1, 0}, p4[4] = {3, 1, 0, 2};
        const int sh = k % 3, oo = k / 3, io = (k * 5 + 3) % 16;
        const unsigned ran = copy_in_order(k % 2 ? KG_F16 : KG_BF16, sh + 2, sh == 0 ? s2 : sh == 1 ? s3 : s4,
                                           sh == 0 ? t2 : sh == 1 ? r3 : p4, io, oo, "tpermc output phase");
        cr_assert(ran & (1u << KG_EW_TPERMC), "phase case %d: tpermc did not run (variants %#x)", k, ran);
    }
    check_6d_copies(KG_F16, KG_BF16, (1u << KG_EW_TPERMC) | (1u << KG_EW_TPERM));
    force_variant = -1;
    want_tperm = 0;
    reset_tile_tunings();
}

Test(tpermc, copies_every_permutation, .init = setup, .fini = teardown, .timeout = 600) { check_tpermc(1); }

Test(tpermc, copies_every_permutation_tables, .init = setup, .fini = teardown, .timeout = 600) { check_tpermc(0); }

/* The tunings' default choice: KG_EW_TUNE_TPERMC 1 runs tpermc on the
   2-byte copies whose plan it serves and whose output rows start off
   sectors ([13,8,19,11] p3.1.0.2, rows of 247; [43,49,11] p2.1.0, rows of
   43; a 1031 x 96 transpose into an output one element off), not where
   they start on sectors (the same transpose into an aligned output, rows
   of 96: tperma as before) or where its c axis does not chain
   ([13,8,19,11] p2.1.3.0); 2 takes the aligned rows too; 0 none (1 is
   the default since round s31r1). KG_EW_TUNE_TPERMS_CHAIN 1 (the default
   since round s31r1) runs tperms on the f32 / i32 copy whose
   c axis folds two dims ([13,8,19,11] p3.1.0.2; 0: tperm) and still not
   on p2.1.3.0. Bits exact, inputs and outputs at several offsets. */
Test(tpermc, default_choice_by_the_tunings, .init = setup, .fini = teardown, .timeout = 600)
{
    static const struct {
        int nd;
        int64_t P[4];
        int p[4];
        int io;      /* the output's offset in elements */
        int want[3]; /* tpermc ran under KG_EW_TUNE_TPERMC 0, 1, 2 (2-byte); tperms ran under the chain 0, 1, - (4-byte) */
        int es;
    } cs[] = {
        {4, {13, 8, 19, 11}, {3, 1, 0, 2}, 0, {0, 1, 1}, 2}, {3, {43, 49, 11}, {2, 1, 0}, 0, {0, 1, 1}, 2},
        {2, {96, 1031}, {1, 0}, 1, {0, 1, 1}, 2},           {2, {96, 1031}, {1, 0}, 0, {0, 0, 1}, 2},
        {4, {13, 8, 19, 11}, {2, 1, 3, 0}, 0, {0, 0, 0}, 2}, {4, {13, 8, 19, 11}, {3, 1, 0, 2}, 0, {0, 1, 0}, 4},
        {4, {13, 8, 19, 11}, {3, 1, 0, 2}, 3, {0, 1, 0}, 4}, {4, {13, 8, 19, 11}, {2, 1, 3, 0}, 0, {0, 0, 0}, 4},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int m = 0; m < (cs[i].es == 2 ? 3 : 2); m++)
            for (int k = 0; k < 2; k++) {
                const kg_dtype dt = cs[i].es == 2 ? (k ? KG_F16 : KG_BF16) : (k ? KG_I32 : KG_F32);
                kg_test_ew_tune(cs[i].es == 2 ? KG_EW_TUNE_TPERMC : KG_EW_TUNE_TPERMS_CHAIN, m);
                const unsigned ran =
                    copy_in_order(dt, cs[i].nd, cs[i].P, cs[i].p, (int)(i + k) % 3, cs[i].io, "by the tunings");
                const unsigned v = 1u << (cs[i].es == 2 ? KG_EW_TPERMC : KG_EW_TPERMS);
                cr_assert_eq(!(ran & v), !cs[i].want[m], "case %zu, %s, tuning %d: variants %#x", i,
                             kg_dtype_name(dt), m, ran);
            }
    reset_tile_tunings();
}

/* Copies of 4-byte elements by <op>_tperms forced under
   KG_EW_TUNE_TPERMS_CHAIN 1, where it also takes c axes of several dims
   that chain in the output (their rows' input offsets from a table; tperm
   where the c axis does not chain or input 0 is not staged): every
   permutation of the tperm shapes and the rows of check_tile_copy_shapes,
   the small versions of the bench's slow rows, [300,7,261]; [13,8,19,11]
   p3.1.0.2 (c of two dims, 247 positions: whole tiles from the table) and
   [15,19,7,5] p3.1.0.2 at each of the output's 8 phases within a sector,
   the input off by another amount, asserting that tperms ran; a 6-d
   reversal and rotation. f32 and i32, bits exact. */
Test(tperms, copies_chained_c_axes, .init = setup, .fini = teardown, .timeout = 600)
{
    kg_test_ew_tune(KG_EW_TUNE_TPERMS_CHAIN, 1);
    kg_test_ew_tune(KG_EW_TUNE_TPERM_RECT, 0); /* rect plans (a short output dim 0) keep tperm */
    force_variant = KG_EW_TPERMS;
    want_tperm = 3;
    const kg_dtype dts[] = {KG_F32, KG_I32};
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        ran_total = 0;
        check_tile_copy_shapes(dts[i]);
        check_perms(KG_OP_COPY, dts[i], dts[i], 4, S(13, 8, 19, 11));
        check_perms(KG_OP_COPY, dts[i], dts[i], 3, S(43, 49, 11));
        check_perms(KG_OP_COPY, dts[i], dts[i], 4, S(15, 19, 7, 5));
        check_perms(KG_OP_COPY, dts[i], dts[i], 3, S(300, 7, 261));
        cr_assert(ran_total & (1u << KG_EW_TPERMS), "%s: tperms never ran (variants %#x)", kg_dtype_name(dts[i]),
                  ran_total);
    }
    for (int k = 0; k < 2 * 8; k++) {
        static const int64_t s4[4] = {13, 8, 19, 11}, s5[4] = {15, 19, 7, 5};
        static const int p4[4] = {3, 1, 0, 2};
        const unsigned ran = copy_in_order(k % 2 ? KG_I32 : KG_F32, 4, k % 2 ? s5 : s4, p4, (k * 3 + 1) % 8, k / 2,
                                           "chained c, output phase");
        cr_assert(ran & (1u << KG_EW_TPERMS), "phase case %d: tperms did not run (variants %#x)", k, ran);
    }
    check_6d_copies(KG_F32, KG_I32, (1u << KG_EW_TPERMS) | (1u << KG_EW_TPERM));
    force_variant = -1;
    want_tperm = 0;
    reset_tile_tunings();
}
