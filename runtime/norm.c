/*
 * norm.c - validation, coalescing, class choice and launch of every
 * normalization (softmax, log_softmax, logsumexp, layer_norm, rms_norm).
 *
 * Order: the call's tensors, axes, dtypes, shapes, eps and overlaps are
 * checked on the host (kg_norm_plan_call, also used by the CPU tests); only
 * then is the device touched. The input's dims are split into kept dims
 * (rows) and normalized dims; dims of size 1 are dropped, each list is
 * ordered by input stride and dims whose strides chain for every tensor are
 * merged. What remains picks the class (norm_params.h):
 *   ROWS / PACKED  one normalized run of stride 1 for every tensor, 16-byte
 *                  aligned: a lane group per row (PACKED: rows of 1..32
 *                  vectors, several per group)
 *   LEANU          one normalized run of stride 1 that 16-byte vectors do
 *                  not tile (its length, or its rows' starts), rows in one
 *                  outer dim: masked aligned vectors (the last row by
 *                  STRIDED where its vectors would pass the tensor's end)
 *   COLS           one normalized dim with a stride, and a contiguous kept
 *                  dim: column tiles, two launches (statistics, apply);
 *                  softmax / log_softmax on sm_90 where the column fits: a
 *                  thread-block cluster a strip, one launch (CLUSTER)
 *   STRIDED        anything else, element by element
 * and on sm_90, where LEAN serves the 2-byte layer_norm or rms_norm, BULK
 * under the tuning: rows staged in shared memory by the bulk copy engine.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kg_norm.h"
#include "layout.h"
#include "norm_plan.h"
#include "trust.h" /* kgi_cuda_sticky */

/* Scratch a COLS plan aims to stay within when it splits columns (what
   kg_reserve_scratch(ctx, 0) provides after the counters). */
#define PARTIAL_BUDGET ((size_t)4 << 20)

kg_norm_tuning kgi_norm_tuning;
_Atomic long kgi_norm_cluster_launches;
_Atomic long kgi_norm_bulk_launches;

typedef struct ndim_ {
    int64_t size;
    int64_t st[KG_NORM_NOPS];
} ndim_;

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t pow2_ceil(int64_t x)
{
    int64_t p = 1;
    while (p < x)
        p *= 2;
    return p;
}

static const char *const op_names[KG_NORM_NOPS] = {"in", "out", "residual", "weight", "bias", "mean", "rstd"};

static const char *tensor_name(const kg_norm_call *c, int k)
{
    if (c->op == KG_NORM_LOGSUMEXP && k == KG_NO_S0)
        return "out";
    return op_names[k];
}

/* kgi_check_disjoint's test with this family's message (which says what
   may alias). */
static kg_status check_disjoint(kg_context *ctx, const char *op, const kg_tensor *a, const char *an, const kg_tensor *b,
                                const char *bn)
{
    if (!a || !b)
        return KG_OK;
    const kgi_range ra = kgi_tensor_range(a), rb = kgi_tensor_range(b);
    if (!kgi_ranges_overlap(ra, rb))
        return KG_OK;
    return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                   "invalid argument: %s: %s overlaps %s (bytes [%p, %p) and [%p, %p)); only out may alias in, "
                   "and only exactly",
                   op, an, bn, (void *)ra.lo, (void *)ra.hi, (void *)rb.lo, (void *)rb.hi);
}

/* A result or operand tensor: present, valid, of dtype `want`, of shape
   (nd, shape), aligned. */
static kg_status check_shaped(kg_context *ctx, const char *op, const kg_tensor *t, const char *name, kg_dtype want,
                              const char *why, int nd, const int64_t *shape)
{
    kg_status st = kgi_check_tensor(ctx, t, name);
    if (st != KG_OK)
        return st;
    if (t->dtype != want)
        return kg_fail(ctx, KG_ERR_DTYPE, "%s: %s is %s but must be %s (%s)", op, name, kg_dtype_name(t->dtype),
                       kg_dtype_name(want), why);
    int same = t->ndim == nd;
    for (int d = 0; same && d < nd; d++)
        same = t->shape[d] == shape[d];
    if (!same) {
        char a[128], b[128];
        return kg_fail(ctx, KG_ERR_SHAPE, "shape mismatch: %s: %s is %s but must be %s", op, name,
                       kg_shape_str(a, sizeof a, t->ndim, t->shape), kg_shape_str(b, sizeof b, nd, shape));
    }
    if (kg_numel(t) > 0 && !kgi_aligned(t->data, kg_dtype_size(t->dtype)))
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: %s: %s's data %p is not aligned to its %zu-byte elements", op, name, t->data,
                       kg_dtype_size(t->dtype));
    return KG_OK;
}

/* weight / bias: dtype of in, at most k dims, broadcasting (right-aligned)
   to the normalized shape in.shape[ndim-k ..]. */
static kg_status check_param(kg_context *ctx, const char *op, const kg_tensor *t, const char *name, const kg_tensor *in,
                             int k)
{
    kg_status st = kgi_check_tensor(ctx, t, name);
    if (st != KG_OK)
        return st;
    if (t->dtype != in->dtype)
        return kg_fail(ctx, KG_ERR_DTYPE, "%s: %s is %s but in is %s (they must match)", op, name,
                       kg_dtype_name(t->dtype), kg_dtype_name(in->dtype));
    int ok = t->ndim <= k;
    for (int d = 0; ok && d < t->ndim; d++) {
        const int64_t want = in->shape[in->ndim - t->ndim + d];
        ok = t->shape[d] == want || t->shape[d] == 1;
    }
    if (!ok) {
        char a[128], b[128];
        return kg_fail(ctx, KG_ERR_SHAPE,
                       "shape mismatch: %s: %s is %s but the normalized shape is %s (%s must broadcast to it)", op,
                       name, kg_shape_str(a, sizeof a, t->ndim, t->shape),
                       kg_shape_str(b, sizeof b, k, in->shape + in->ndim - k), name);
    }
    if (kg_numel(t) > 0 && !kgi_aligned(t->data, kg_dtype_size(t->dtype)))
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: %s: %s's data %p is not aligned to its %zu-byte elements", op, name, t->data,
                       kg_dtype_size(t->dtype));
    return KG_OK;
}

/* Stable insertion sort of dims by input stride, then merging of neighbours
   whose strides chain for every operand. Returns the new count. */
static int coalesce(ndim_ *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j].st[KG_NO_IN] < v[j - 1].st[KG_NO_IN]; j--) {
            const ndim_ x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m > 0) {
            ndim_ *p = &v[m - 1];
            int chain = 1;
            for (int k = 0; k < KG_NORM_NOPS; k++)
                chain = chain && v[i].st[k] == p->st[k] * p->size;
            if (chain) {
                p->size *= v[i].size;
                continue;
            }
        }
        v[m++] = v[i];
    }
    return m;
}

static void fill_dims(kg_norm_dims *o, const ndim_ *v, int n, int fast)
{
    memset(o, 0, sizeof *o);
    o->n = n;
    for (int d = 0; d < n; d++) {
        o->size[d] = v[d].size;
        for (int k = 0; k < KG_NORM_NOPS; k++)
            o->st[d][k] = v[d].st[k];
        if (fast && d < n - 1)
            kgi_divmod_magic((uint32_t)v[d].size, &o->magic[d], &o->shift[d]);
    }
}

/* The normalized dims as a bit mask, after checking the call's axes. */
/* op: the name messages give (the entry point's) */
static kg_status check_axes(kg_context *ctx, const kg_norm_call *c, const kg_norm_info *info, const char *op,
                          unsigned *mask)
{
    const kg_tensor *in = c->in;
    const int nd = in->ndim > 0 ? in->ndim : 1;
    *mask = 0;
    switch (info->axes) {
    case KG_NORM_AXIS_ONE:
        if (c->axis < -nd || c->axis >= nd)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                           "invalid argument: %s: axis %d is out of range for a %d-dim input (valid: %d..%d)",
                           op, c->axis, in->ndim, -nd, nd - 1);
        *mask = in->ndim ? 1u << (c->axis < 0 ? c->axis + nd : c->axis) : 0;
        return KG_OK;
    case KG_NORM_AXIS_ANY: {
        if (c->n_axes < 0 || c->n_axes > KG_MAX_DIMS)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s: n_axes is %d (0..%d; 0 = every axis)",
                           op, c->n_axes, KG_MAX_DIMS);
        if (c->n_axes > 0 && !c->axes)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s: axes is NULL but n_axes is %d",
                           op, c->n_axes);
        if (c->n_axes == 0) {
            *mask = in->ndim ? (1u << in->ndim) - 1 : 0;
            return KG_OK;
        }
        unsigned m = 0;
        for (int i = 0; i < c->n_axes; i++) {
            const int a = c->axes[i];
            if (a < -nd || a >= nd)
                return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                               "invalid argument: %s: axis %d is out of range for a %d-dim input (valid: %d..%d)",
                               op, a, in->ndim, -nd, nd - 1);
            const int d = a < 0 ? a + nd : a;
            if (m & (1u << d))
                return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                               "invalid argument: %s: axis %d (dim %d) appears twice in axes", op, a, d);
            m |= 1u << d;
        }
        *mask = in->ndim ? m : 0;
        return KG_OK;
    }
    case KG_NORM_AXIS_LAST:
    case KG_NORM_AXIS_LAST1:
        if (in->ndim == 0)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                           "invalid argument: %s: in is 0-d (a scalar); %s normalizes over its last %s and needs at "
                           "least 1 dim",
                           op, op, c->op == KG_NORM_LAYER_NORM ? "k dims" : "dim");
        if (c->k < 1 || c->k > in->ndim)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                           "invalid argument: %s: cannot normalize the last %d dims of a %d-dim input (k must be "
                           "1..%d)",
                           op, c->k, in->ndim, in->ndim);
        *mask = ((1u << c->k) - 1) << (in->ndim - c->k);
        return KG_OK;
    }
    return KG_OK;
}

/* LEANU's layout: one normalized dim, contiguous in every operand; the
   input, output and residual 16-byte aligned with one row stride (one outer
   dim at most); 2- and 4-byte types. */
static int leanu_fits(const kg_tensor *const *T, const ndim_ *N, int nn, const ndim_ *K, int nk, int64_t L, size_t es)
{
    if (es == 8 || nn != 1 || nk > 1 || L < 1)
        return 0;
    for (int k = 0; k < KG_NORM_NOPS; k++) {
        if (!T[k] || k == KG_NO_S0 || k == KG_NO_S1)
            continue;
        if (N[0].st[k] != 1)
            return 0;
        if (k == KG_NO_IN || k == KG_NO_OUT || k == KG_NO_RES) {
            if (!kgi_aligned(T[k]->data, 16) || (nk == 1 && K[0].st[k] != K[0].st[KG_NO_IN]))
                return 0;
        }
    }
    return 1;
}

/* LEANW's layout: one normalized dim, contiguous in every operand, whose
   length 4-byte words tile (f32; the 2-byte types of even length); every
   operand 4-byte aligned with row strides of whole words; one outer dim at
   most. */
static int leanw_fits(const kg_tensor *const *T, const ndim_ *N, int nn, const ndim_ *K, int nk, int64_t L, size_t es)
{
    const int64_t w = es == 2 ? 2 : 1;
    if (es == 8 || nn != 1 || nk > 1 || L < 1 || L % w != 0)
        return 0;
    for (int k = 0; k < KG_NORM_NOPS; k++) {
        if (!T[k] || k == KG_NO_S0 || k == KG_NO_S1)
            continue;
        if (N[0].st[k] != 1 || !kgi_aligned(T[k]->data, 4))
            return 0;
        if (nk == 1 && K[0].st[k] % w != 0)
            return 0;
    }
    return 1;
}

/* LEANW: LEAN over 4-byte words of the 2-byte types, 16 a lane (the
   residual form: 8, warp groups only); at least 8 lanes a row (a warp's
   load covers a 32-byte sector of each row); warp groups in blocks of 512
   while two blocks a multiprocessor remain. 0 where LEANU serves the row:
   f32 (r2: LEANU ran rms_norm f32 of 126 at 72.4% of copy and layer_norm
   f32 of 317 at 70.4%, LEANW8 at 66.8% and 35.1%, LEANW16 at 47.0% and
   46.4%: 4 bytes a load, too few in flight), the residual form past 32
   lanes (bf16 of 2814: LEANW8_RES 40.7% against LEANU4S_RES 51.9%; of 380:
   47.4% against 44.7%), rows too long. r2, the 2-byte types, LEANW16 /
   LEANW8 / LEANU: log_softmax of 190 50.0 / 49.1 / 21.7%, softmax of 5630
   44.0 / 30.4 / 36.7%, logsumexp of 16378 38.9 / 21.8 / 30.2%, of 1150 28.8
   / 24.3 / 31.1%. */
/* rows of 32 elements (f32: 8 vectors, the 2-byte types: 4) that LEAN
   takes at 2 vectors a lane in blocks of 128, a block a unit (kg_norm_plan):
   every op but the f32 logsumexp (the residual form keeps its plan). H200,
   same process, best of 3 in turn, % of copy, the old plan / this one (the
   2-byte types: then LEAN2, lean2_rule): softmax, log_softmax (s18r1, in
   kg_norm_plan); rms_norm s18r2 f32 [4194304,32] 83.3 / 95.6 (LEAN4 of 2
   lanes at the cap), bf16 86.2 / 90.4 (PACKED); s20r2 rms_norm f32 83.3 /
   95.6, bf16 86.4 / 89.6 / 99.5; logsumexp bf16 42.6 / 64.0 / 74.6 (f32
   84.9 / 69.5: not taken); layer_norm f32 81.5 / 82.9, bf16 63.4 / 71.2 /
   84.7. The tuning's pair 1: every op, -1 none. */
static int pair32(const kg_norm_call *c, int64_t nvec, size_t es)
{
    if (!((es == 4 && nvec == 8) || (es == 2 && nvec == 4)) || c->res)
        return 0;
    if (kgi_norm_tuning.pair)
        return kgi_norm_tuning.pair > 0;
    return !(c->op == KG_NORM_LOGSUMEXP && es == 4);
}

/* The tuning lean2's value the planner takes by default for the 2-byte rows
   of nvec vectors (0: LEAN4 / LEAN4F): rows of 32 elements (pair32) by
   LEAN2, softmax's by LEAN2E; rows of 64 by LEAN2 / LEAN2E of 4 lanes but
   logsumexp; rows of 128 (8 lanes) softmax and rms_norm alone. H200 s20r2,
   same process, best of 3 in turn, bf16, % of copy, LEAN4F or LEAN4 /
   LEAN2 / LEAN2E: [4194304,32] softmax 82.4 / 97.0 / 100.0, log_softmax
   88.6 / 99.9, rms_norm 89.6 / 99.5, logsumexp 64.0 / 74.6, layer_norm
   71.2 / 84.7; [4194304,64] softmax 86.0 / 95.9 / 100.9, log_softmax 87.1 /
   100.1, rms_norm 85.4 / 100.9, layer_norm 78.9 / 84.4, logsumexp 89.7 /
   71.0 (not taken); [2097152,128] softmax 96.4 / 95.1 / 99.5, rms_norm 95.9
   / 99.4; not taken: log_softmax 97.1 / 96.6, logsumexp 91.6 / 66.6,
   layer_norm 90.6 / 82.3. LEAN2R (two rows a group, the group a constant;
   the tuning's lean2 5 / 6 / 8) for logsumexp and layer_norm: H200 s21r2,
   same process, best of 3 in turn, % of copy, LEAN2 / LEAN2R, bf16
   [4194304,32] logsumexp 73.4 / 95.3, layer_norm 83.1 / 95.6,
   [4194304,64] layer_norm 80.1 / 98.3; f16 73.4 / 96.4, 75.7 / 94.1, 74.1
   / 94.2 (LEAN2's logsumexp is issue-bound: s21r1 ncu, 88.7% SM
   throughput); log_softmax of 64 stays LEAN2 (bf16 99.6 / 98.8, f16 101.3
   / 99.2). s21r1, the group not a constant: lost on softmax, log_softmax,
   rms_norm of 32 (97.4-97.6 against 99.2-99.8), rms_norm and softmax of 64
   (97.1 / 99.0 against 100.3 / 100.8). s21r3, main's plan (LEAN4F / LEAN4)
   / LEAN2R: logsumexp bf16 [4194304,64] 88.8 / 97.1, [2097152,128] 88.1 /
   90.9, layer_norm [2097152,128] 90.1 / 97.5; f16 88.7 / 97.8, 89.3 / 93.6,
   88.4 / 92.1. */
static int lean2_rule(const kg_norm_call *c, int64_t nvec, size_t es)
{
    if (es != 2 || c->res)
        return 0;
    const int sm = c->op == KG_NORM_SOFTMAX, r2 = c->op == KG_NORM_LAYER_NORM || c->op == KG_NORM_LOGSUMEXP;
    if (nvec == 4)
        return sm ? 3 : r2 ? 5 : 1;
    if (nvec == 8)
        return sm ? 4 : r2 ? 6 : 2;
    if (nvec == 16)
        return sm ? 4 : r2 ? 8 : c->op == KG_NORM_RMS_NORM ? 2 : 0;
    return 0;
}

static int plan_leanw(kg_norm_plan *plan, const kg_tensor *const *T, const ndim_ *K, int nk, int64_t rows, int64_t L,
                      size_t es, int64_t sm)
{
    kg_norm_args *A = &plan->args;
    const int64_t words = L / (es == 2 ? 2 : 1);
    const int res = T[KG_NO_RES] != NULL;
    const int tw = kgi_norm_tuning.leanw;
    if (es != 2 && tw == 0)
        return 0; /* f32: LEANU unless the tuning asks */
    int64_t nv = tw == 8 || tw == 16 ? tw : 16;
    if (res)
        nv = 8;
    int64_t g = pow2_ceil(cdiv(words, nv));
    if (g < 8)
        g = 8;
    if (g > (res ? (tw ? KG_NORM_MAX_GROUP : 32) : KG_NORM_LEAN_MAX_T))
        return 0;
    plan->cls = res ? KG_NORM_LEANW8_RES : nv == 8 ? KG_NORM_LEANW8 : KG_NORM_LEANW16;
    A->group = (int32_t)g;
    A->nv = (int32_t)cdiv(words, g);
    A->rows = rows;
    A->fast = rows < ((int64_t)1 << 31);
    fill_dims(&A->outer, K, nk, A->fast);
    plan->block = g > 32 ? (unsigned)g : KG_NORM_MAX_GROUP;
    while (g <= 32 && plan->block > 64 && cdiv(rows, plan->block / g) < 2 * sm)
        plan->block /= 2;
    const int64_t units = cdiv(rows, g > 32 ? 1 : plan->block / g), cap = sm * 32;
    plan->grid = (unsigned)(units < cap ? units : cap);
    return 1;
}

/* CLUSTER (templates/normc.cuh): softmax and log_softmax of f32, f16, bf16
   along an outer axis, on compute capability 9.0 (or where the tuning's
   sm90 says so, for the CPU tests): a thread-block cluster of up to 16
   blocks holds a strip of 8 x 16 bytes of columns (half in registers, half
   in shared memory), so the input is read once. Where the columns, the
   normalized stride and every outer stride of in and out are whole 16-byte
   vectors (in and out 16-byte aligned, columns contiguous) and the column
   has 1000..16384 rows (since session 22 also 400..999 at one block, and
   fewer than 257 by COLT: colt_cfg below; the tuning: any that fits), plan->ccfg names the
   configuration, else -1 and the COLS plan stands. H200 (2026-12-02 r3,
   256 x (16 + 16) vectors, 1024 rows a block, 2 blocks a multiprocessor;
   % of copy, COLS in brackets): softmax f32 [16384,16384] dim 0 59.2
   (55.2), log_softmax 63.7 (55.7), bf16 41.2 (36.2), f32 [8192,32768] 64.9
   (56.1), [4096,65536] 70.1 (55.1), [1000,262144] 77.3 (53.4); r2: f32
   log_softmax [4369,15360] 60.2 (46.7), bf16 [14563,9216] 43.9 (30.8). Lost:
   log_softmax bf16 [12000,22360] 31.5 (33.5, kept: the one loss measured in
   range), [128,2097152] 23.7 (46.4: too few rows a block), columns past
   16384 rows at 512 x (16 + 16) 39.7-43.4 (45.5-54.7: one block a
   multiprocessor). */
/* kg_norm_ccfgs: configuration 4 is 0 with softmax's exps kept (the apply
   multiplies the stored exps; the f32 softmax default of session 16: H200
   session 16 r2, same process, % of copy against configuration 0:
   [16384,16384] 60.6 / 60.6, [8192,32768] 64.3 / 64.0, [4096,65536] 68.9 /
   66.9, [1000,262144] 75.3 / 72.7); configuration 6 is 4 with the cluster's partials merged by a
   tree (TR; f32 softmax and log_softmax: H200 s17r2, same process, best of
   3 in turn, % of copy against the old default: softmax [16384,16384] 62.6
   / 60.5, log_softmax 67.1 / 66.5, softmax [8192,32768] 65.6 / 64.7,
   [4096,65536] 70.0 / 69.0, [1000,262144] 77.4 / 76.9; bf16 lost, 27.9 /
   41.8 at [16384,16384], 31.3 / 31.5 at log_softmax [12000,22360]: the
   2-byte types stay on configuration 0) */
#define CCFG_TR 6
_Static_assert(CCFG_TR < KG_NORM_CCFG_COUNT, "the configuration merging by a tree");
/* The defaults of session 25 (H200 s25r1, 2026-12-05, same process, best of 3 interleaved, % of copy against the
   configuration they replace; the same bits where no output falls below 2^-126): P2VS (28: configuration 0 with
   packed maxima, flushed output exps and 16-byte stores) the 2-byte cluster form, bf16 softmax [16384,16384] dim 0
   50.7 / 42.0, log_softmax [12000,22360] 47.7 / 31.3 (P2 alone 52.6 / 29.8: not); EK1 (22: COLT's narrow 1 lane a
   row with the sum's exps kept, 4 vectors a lane) for the 2-byte softmax where COLT takes 16, bf16 [2097152,16,8]
   dim 1 47.8 / 32.3 (EK at 2-8 lanes a row lost: gen/norm.lua); VS8 (29: 13 with 16-byte stores) for f32 where
   COLT takes 13, [262144,32,32] dim 1 87.8 / 85.1. 28 and 29 gave 0's and 13's bits there
   (gpu/session_24_tunings_match_their_base_bits); 0 and the f32 13 have no kernels since (gen/norm.lua). */
#define CCFG_P2VS 28
#define CCFG_EK1 22
#define CCFG_VS8 29
_Static_assert(CCFG_VS8 < KG_NORM_CCFG_COUNT, "the session 25 defaults");
/* The default of session 28 (H100 s28r1, 2026-12-05, same process, best of 3 interleaved, us against 15's): K4 (31:
   COLT's narrow 15 at 4 vectors a lane instead of 8, 16-byte stores, 4 blocks a multiprocessor instead of 3, 56
   registers) for f32 where COLT takes 15 and the column has at most 8 rows: softmax [2097152,4,8] dim 1 189.8 / 549.0
   (94.1% / 32.5% of copy), log_softmax 194.2 / 559.1, softmax [1048576,8,8] 182.2 / 563.2 (98.0 / 31.7). It lost
   log_softmax [32768,200,8] (231.7 / 166.2): 15 keeps more rows. */
#define CCFG_K4 31
_Static_assert(CCFG_K4 < KG_NORM_CCFG_COUNT, "the session 28 default");

/* COLT (templates/normt.cuh; the CLUSTER configurations with one set): an
   outer axis of fewer than 1000 rows, a block a tile of the columns holding
   all its rows. The configuration whose rows (t / lpr x k) hold the column
   with the widest tile the columns fill (nvec: the columns' 16-byte vectors),
   the fewest vectors a lane among those; -1 where none holds it. Columns of
   fewer than 16 vectors (256 bytes) take the narrow configurations (lpr < 16,
   several tiles a block, session 23): a block of one tile of a few kilobytes
   left most lanes idle (H200 s22r2, softmax f32 [262144,32,32] dim 1, 8
   vectors, 256 lanes x 16: 6.4% of copy, 7.9 ms; COLS s22r3: 21.8% of copy,
   PyTorch 29.6; narrow s23r2: 87.2%, 2.91x PyTorch; gen/norm.lua has the
   rest). H200 s22r3, same
   process, % of copy, COLT / COLS (main's plan), and kgen / PyTorch:
   softmax f32 [16384,8,2048] dim 1 98.9 / 7.8 (2.62x), [2048,3,4096] dim
   1 81.5 / 3.5 (2.43x), bf16 62.4 / 1.8 (3.57x), f32 [4096,64,1024] dim 1
   78.4 / 28.6 (3.64x), log_softmax 95.2 / 28.8, bf16 softmax 53.7 / 15.2,
   f32 [512,200,1536] dim 1 53.1 / 35.3, log_softmax bf16 39.2 / 19.9,
   [64,4194304] dim 0 79.0 / 38.0 (3.74x), [128,2097152] dim 0 70.8 / 46.4
   (3.94x), bf16 46.0 / 27.2. */
static int colt_cfg(int64_t n, int64_t nvec)
{
    /* the narrow configurations (fewer than 16 lanes a row) serve columns of fewer than 16 vectors, the others the
       rest (the tuning's narrow -1: none, COLS) */
    const int nar = nvec < 16;
    if (nar && kgi_norm_tuning.narrow < 0)
        return -1;
    int best = -1;
    for (int k = 0; k < KG_NORM_CCFG_COUNT; k++) {
        const kg_norm_ccfg *f = &kg_norm_ccfgs[k];
        if (!f->one || f->alt || f->rows < n || (f->lpr < 16) != nar)
            continue;
        if (nar && f->lpr < (nvec < 8 ? nvec : 8))
            continue; /* narrow: lanes across the columns' vectors (up to 8), not more tiles of fewer lanes */
        if (best < 0) {
            best = k;
            continue;
        }
        const kg_norm_ccfg *b = &kg_norm_ccfgs[best];
        /* the tile the columns fill best (its lanes across at most the columns' vectors), then the narrower, then
           the smaller block, then fewer vectors a lane */
        const int64_t fw = f->lpr < nvec ? f->lpr : nvec, bw = b->lpr < nvec ? b->lpr : nvec;
        if (fw > bw ||
            (fw == bw && (f->lpr < b->lpr || (f->lpr == b->lpr && (f->threads < b->threads ||
                                                                   (f->threads == b->threads && f->k < b->k))))))
            best = k;
    }
    return best;
}

static void plan_cluster(kg_context *ctx, const kg_norm_call *c, kg_norm_plan *plan, const ndim_ *K, int nk, ndim_ Nd,
                         size_t es)
{
    plan->ccfg = -1;
    plan->crg = 0;
    plan->cbfly = 0;
    const kg_norm_tuning *tu = &kgi_norm_tuning;
    const kg_dtype dt = c->in->dtype;
    const int sm90 = (ctx->cc_major == 9 && ctx->cc_minor == 0) || tu->sm90 == 1;
    if (!sm90 || tu->cluster < 0 || (c->op != KG_NORM_SOFTMAX && c->op != KG_NORM_LOG_SOFTMAX) ||
        (dt != KG_F32 && dt != KG_F16 && dt != KG_BF16) || c->res || c->w || c->b)
        return;
    const int64_t V = 16 / (int64_t)es, n = Nd.size;
    if (!kgi_aligned(c->in->data, 16) || !kgi_aligned(c->out->data, 16) || K[0].st[KG_NO_IN] != 1 ||
        K[0].st[KG_NO_OUT] != 1 || K[0].size % V || Nd.st[KG_NO_IN] % V || Nd.st[KG_NO_OUT] % V)
        return;
    for (int d = 1; d < nk; d++)
        if (K[d].st[KG_NO_IN] % V || K[d].st[KG_NO_OUT] % V)
            return;
    const int forced = tu->cluster > 0 && tu->cluster <= KG_NORM_CCFG_COUNT;
    /* under 1000 rows: COLT where it holds the column, else from 257 rows one block of the default configuration
       (H200 s22r3, same process, % of copy, one block / COLS: softmax f32 [200,600,2048] dim 1 76.2 / 41.6,
       [256,400,2048] dim 1 61.6 / 39.3; [512,200,1536] dim 1 34.2 / 35.3, where COLT takes it, 53.1; s23r1,
       [256,300,2048] dim 1 49.1 / 37.4: from 257 rows since session 23, was 400), else COLS */
    int colt = forced || n >= 1000 ? -1 : colt_cfg(n, K[0].size / V);
    if (colt == 16 && dt != KG_F32 && c->op == KG_NORM_SOFTMAX)
        colt = CCFG_EK1; /* (the same rows: 1024 >= 999) */
    else if (colt == 13 && dt == KG_F32)
        colt = CCFG_VS8;
    else if (colt == 15 && dt == KG_F32 && n <= 8)
        colt = CCFG_K4; /* (512 rows >= 8) */
    const int cfg = forced ? tu->cluster - 1 : colt >= 0 ? colt : dt == KG_F32 ? CCFG_TR : CCFG_P2VS;
    if ((!forced && colt < 0 && n < 257) || (!forced && n > 16384))
        return;
    if (kg_norm_ctable[c->op][dt][cfg] < 0)
        return; /* a tuning's configuration with no kernel for this dtype or op (gen/norm.lua's dts, ops): COLS */
    const kg_norm_ccfg *f = &kg_norm_ccfgs[cfg];
    int64_t cs = cdiv(n, (int64_t)f->rows);
    if (cs > (f->one ? 1 : 16))
        return;
    if (!f->one && tu->csize > cs && tu->csize <= 16)
        cs = tu->csize; /* more blocks than the column needs (a tuning) */
    const int64_t outer = plan->args.rows;
    const int64_t ctiles = cdiv(K[0].size, (int64_t)f->lpr * V);
    if (outer > ((int64_t)1 << 31) / ctiles / cs)
        return;
    plan->ccfg = cfg;
    plan->csize = (int)cs;
    plan->ctiles = ctiles;
    plan->cchunk = cdiv(n, cs);
    /* COLT's narrow configurations (fewer than 16 lanes a row): the fewest row groups (a power of two) whose k
       vectors a lane hold the column, so several tiles a block (norm_plan.h's crg) */
    plan->crg = 0;
    plan->cbfly = 0;
    int64_t units = 1;
    if (f->one && f->lpr < 16) {
        plan->crg = (int)pow2_ceil(cdiv(n, f->k));
        units = f->threads / f->lpr / plan->crg;
        /* the tile's partials by butterflies where it lies in a warp (else the block's merge in shared memory,
           which one lane a column walks: s23r1, H200, log_softmax bf16 [131072,100,16] dim 1, 16 row groups of 2
           lanes, 23.5% of copy) */
        plan->cbfly = tu->nmerge != 1 && f->lpr * plan->crg <= 32 ? 1
                      : tu->nmerge != 1 && tu->nmerge != 2 ? 2 /* tiles of whole warps: butterflies a warp, then
                                                                  the warps' partials (TL, A.opt bit 2) */
                                                            : 0;
    }
    /* PH: a cluster a pair of strips at most (the launch caps it at the
       clusters resident at once; the tuning's grid at that many blocks) */
    int64_t ncl = f->ph ? cdiv(outer * ctiles, 2) : cdiv(outer * ctiles, units);
    if (f->ph && tu->grid > 0 && tu->grid / cs < ncl)
        ncl = tu->grid / cs > 0 ? tu->grid / cs : 1;
    plan->cgrid = (unsigned)(ncl * cs);
    plan->cblock = (unsigned)f->threads;
    plan->args.opt = f->ph && tu->cstag < 0; /* PH: the halves start together */
}

/* BULK (templates/normb.cuh): the 2-byte layer_norm and rms_norm (and its
   residual form) where a LEAN class serves the rows, on compute capability
   9.0 (or where the tuning's sm90 says so): persistent blocks of a row at a
   time, rows staged in shared memory by the bulk copy engine, a ring of
   stages as deep as the multiprocessor's shared memory allows (divided
   among the configuration's blocks a multiprocessor), at least 2. The
   tuning's bulk c + 1 takes configuration c wherever the row fits (at most
   threads x nv vectors). By default (the other tunings at 0) only the bf16
   residual rms_norm of 8193..16384 (cfg 2). The f16 layer_norm of
   2560..4096 ran BULKW (below) until session 16: LEAN a block a row beat it
   (r1, H200, same process, % of copy, LEAN / BULKW): 2560 89.5 / 79.8, 3072
   94.8 / 92.3 (the row in registers), 3584 96.6 / 83.5, 4096 96.8 / 87.1.
   Once LEAN ran a block a row (session 15 r2, same process, LEAN / BULK), it
   beat BULK on the bf16 rows BULK had served: layer_norm 2560 93.6 / 88.2,
   3072 97.2 / 91.4, 3584 98.0 / 91.7, 4096 97.6 / 88.3; residual rms_norm
   1024 96.0 / 95.6, 4096 95.8 / 92.6, 8192 96.8 / 93.2; not 16384: 79.9 /
   92.6. Before that, bf16 rows of (H200, session 11 and 12 r0, % of copy
   against LEAN in the same run):
   - the residual rms_norm of 4096..16384: the smallest block that holds the
     row, the deepest ring (4096 cfg 0: 92.0 / 91.5 against 88.1 / 88.2; 8192
     cfg 1: 91.9 against 85.6; 16384 cfg 2: 91.5 / 91.5 against 82.3 /
     82.4; at 1024 LEAN stays: 92.8 against 87.3);
   - (layer_norm of 8192..16384 took cfg 1 / 2 at 2 stages until session 14
     r2, where LEAN8S, its bf16 elements straight from the vectors' words
     in 72 registers, ran 91.0 / 92.0 against BULK's 86.7 / 86.9).
   rms_norm stays LEAN (93.4-97.1 against at most 90.2).
   BULKW (a warp a row; session 13 r1b, H200, same run, two passes):
   - the 2-byte layer_norm of 2560..4096: 12 warps, 2 stages (bf16 4096:
     89.0 / 88.4 against LEAN8S's 86.2 / 85.7; f16 90.3 against 87.9;
     session 14 r2: 2560 89.1 against 80.7, 3584 90.0 against 86.7; 2048
     stays LEAN: 79.8 against 91.1, r2 84.9 against 93.0; at 5120 / 6144 /
     8192 BULKW lost: 76.5, 78.4, 59.7 against 81.2, 85.0, 88.2);
   - the bf16 residual rms_norm of 1024 (the size measured): 8 warps, 2
     stages (95.0 against LEAN's 93.0).
   BULKW with the row in registers (session 14 r1, H200, same run): the
   2-byte layer_norm of 3072: 12 warps, 1 stage a warp (bf16 89.8 against
   LEAN8S's 79.4 and BULKW 12 warps' 86.5; f16 93.1 against 82.0; r2 91.4
   against 85.7 and 91.1); at 2560, 3584 and 4096 it lost to BULKW (r2
   84.3 / 88.5 against 89.1 / 90.0, r1 87.3 against 89.2), at 2048, 5120
   and 6144 every row-in-registers configuration lost to LEAN.
   f16 stays LEAN elsewhere (r1b: layer_norm 8192 91.1 against BULK's 89.7,
   16384 88.2 against 87.2). */
#define BULK_SMEM_SM 233472 /* shared memory of a 9.0 multiprocessor (228 KiB) */
static int bulk_budget(const kg_norm_bcfg *f) { return BULK_SMEM_SM / f->mb - 2048; }
/* BULKW: the shared memory of the weight and bias (those the call has) */
static int64_t bulk_wb_bytes(const kg_norm_call *c, const kg_norm_bcfg *f, int64_t n, size_t es)
{
    return f->warp ? n * (int64_t)es * ((c->w ? 1 : 0) + (c->b ? 1 : 0)) : 0;
}

static void plan_bulk(kg_context *ctx, const kg_norm_call *c, kg_norm_plan *plan, size_t es, int64_t sm)
{
    plan->bcfg = -1;
    const kg_norm_tuning *tu = &kgi_norm_tuning;
    const int sm90 = (ctx->cc_major == 9 && ctx->cc_minor == 0) || tu->sm90 == 1;
    if (!sm90 || tu->bulk < 0 || tu->bulk > KG_NORM_BCFG_COUNT || es != 2 ||
        (c->op != KG_NORM_LAYER_NORM && c->op != KG_NORM_RMS_NORM))
        return;
    const kg_norm_args *A = &plan->args;
    int cfg = tu->bulk - 1, most = tu->bstages;
    if (tu->bulk == 0) {
        const int dflt = tu->lean == 0 && tu->variant == 0 && tu->pf == 0 && !tu->loose && !tu->group &&
                         !tu->threads && !tu->g32;
        const int rres = c->op == KG_NORM_RMS_NORM && c->res;
        if (!dflt || !(c->in->dtype == KG_BF16 && rres && A->n > 8192 && A->n <= 16384))
            return;
        cfg = 2;
    }
    if (kg_norm_btable[c->op][c->in->dtype][cfg] < 0)
        return; /* a tuning's configuration with no kernel for this dtype or op (gen/norm.lua's dts, ops) */
    const kg_norm_bcfg *f = &kg_norm_bcfgs[cfg];
    const int64_t V = 16 / (int64_t)es;
    if (A->n / V > (int64_t)(f->warp ? 32 : f->threads) * f->nv)
        return;
    const int64_t sb = A->n * (int64_t)es * (c->res ? 2 : 1);
    /* BULKW: a ring a warp after the weight and bias */
    const int64_t nw = f->warp ? f->threads / 32 : 1;
    int64_t stages = (bulk_budget(f) - bulk_wb_bytes(c, f, A->n, es)) / (sb * nw);
    if (stages > KG_NORM_BULK_STAGES)
        stages = KG_NORM_BULK_STAGES;
    if (f->warp && stages > KG_NORM_BULKW_BARS / nw)
        stages = KG_NORM_BULKW_BARS / nw;
    if (most >= (f->regs ? 1 : 2) && stages > most)
        stages = most;
    if (stages < (f->regs ? 1 : 2))
        return;
    int64_t cap = sm * f->mb;
    if (tu->grid > 0 && tu->grid < cap)
        cap = tu->grid;
    const int64_t units = cdiv(A->rows, nw);
    plan->bcfg = cfg;
    plan->bstages = (int)stages;
    plan->bgrid = (unsigned)(units < cap ? units : cap);
    plan->bblock = (unsigned)f->threads;
}

/* COLSV (templates/norm.cuh): COLS of softmax and log_softmax (f32, f16,
   bf16) over 8-byte vectors of columns where 8 bytes are the widest vector
   that the pointers, the normalized stride and every outer stride of in and
   out allow (rows of 16-byte multiples keep COLS), columns contiguous: LX
   <= 32 lanes across a tile of LX x VE columns, 256 / LX down a slice;
   slices for about 4 units a multiprocessor, each of at least 16 chunks of
   a lane's loads. Replaces the COLS plan (the tuning's colsv -1: never).
   H200 (2026-12-02 r2, % of copy, COLS in brackets): log_softmax f32
   [25021,2682] dim 0 36.2 (31.0), softmax f32 [62022,1082] 35.4 (29.8),
   log_softmax bf16 [1242756,108] 16.3 (13.7); over 16-byte vectors (the
   same kernel, 2 blocks a multiprocessor) it lost: bf16 17.6-25.7 (25.6-
   29.8), f32 [16384,16384] 47.8 (54.7). */
static void plan_colsv(const kg_norm_call *c, kg_norm_plan *plan, const ndim_ *K, int nk, ndim_ Nd, size_t es,
                       int64_t sm)
{
    const kg_norm_tuning *tu = &kgi_norm_tuning;
    const kg_dtype dt = c->in->dtype;
    if (tu->colsv < 0 || (c->op != KG_NORM_SOFTMAX && c->op != KG_NORM_LOG_SOFTMAX) ||
        (dt != KG_F32 && dt != KG_F16 && dt != KG_BF16) || c->res || c->w || c->b)
        return;
    if (K[0].st[KG_NO_IN] != 1 || K[0].st[KG_NO_OUT] != 1)
        return;
    int vb = 16;
    for (; vb >= 4; vb /= 2) {
        const int64_t ve = vb / (int64_t)es;
        int ok = kgi_aligned(c->in->data, (size_t)vb) && kgi_aligned(c->out->data, (size_t)vb) &&
                 Nd.st[KG_NO_IN] % ve == 0 && Nd.st[KG_NO_OUT] % ve == 0;
        for (int d = 1; ok && d < nk; d++)
            ok = K[d].st[KG_NO_IN] % ve == 0 && K[d].st[KG_NO_OUT] % ve == 0;
        if (ok)
            break;
    }
    if (vb != 8)
        return;
    kg_norm_args *A = &plan->args;
    const int64_t ve = vb / (int64_t)es, L = A->n, u = vb == 16 ? 8 : 16;
    int64_t lx = pow2_ceil(cdiv(A->cols, ve));
    if (lx > 32)
        lx = 32;
    const int64_t ny = KG_NORM_THREADS / lx;
    const int64_t tiles = cdiv(A->cols, lx * ve), groups = A->rows * tiles;
    const size_t entry = (size_t)(lx * ve) * 3 * 4;
    int64_t splits = tu->col_splits >= 1 ? tu->col_splits : sm * 4 / groups;
    const int64_t most = L / (ny * u * 16) > 1 ? L / (ny * u * 16) : 1;
    if (splits > most)
        splits = most;
    if (splits < 1)
        splits = 1;
    while (splits > 1 && (size_t)(groups * splits) * entry > PARTIAL_BUDGET)
        splits = (splits + 1) / 2;
    if ((size_t)groups * entry > PARTIAL_BUDGET)
        return; /* COLS stands (its own budget) */
    A->group = (int32_t)lx;
    A->tiles = tiles;
    A->chunk = cdiv(L, splits);
    A->splits = cdiv(L, A->chunk);
    A->units = groups * A->splits;
    A->opt = 0;
    plan->partial_bytes = (size_t)(groups * A->splits) * entry;
    plan->cls = KG_NORM_COLSV_STATS8;
    plan->block = KG_NORM_THREADS;
    const int64_t cap = sm * 2;
    plan->grid = (unsigned)(A->units < cap ? A->units : cap);
}

kg_status kg_norm_plan_call(kg_context *ctx, const kg_norm_call *c, int sm_count, kg_norm_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->ccfg = -1;
    plan->bcfg = -1;
    if ((int)c->op <= KG_NORM_NONE || c->op >= KG_NORM_COUNT)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %d is not a normalization (kg_norm_op)",
                       (int)c->op);
    const kg_norm_info *info = &kg_norm_infos[c->op];
    /* messages name the entry point: the residual form is rms_norm_residual */
    char rname[32];
    const char *op = info->name;
    if (c->res && info->residual) {
        snprintf(rname, sizeof rname, "%s_residual", info->name);
        op = rname;
    }
    const kg_tensor *in = c->in;
    kg_status st = kgi_check_tensor(ctx, in, "in");
    if (st != KG_OK)
        return st;
    const kg_dtype dt = in->dtype;
    const unsigned floats = (1u << KG_F32) | (1u << KG_F64) | (1u << KG_F16) | (1u << KG_BF16);
    if (!(floats & (1u << dt)))
        return kg_fail_dtype(ctx, op, dt, floats);
    const size_t es = kg_dtype_size(dt);
    if (kg_numel(in) > 0 && !kgi_aligned(in->data, es))
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: %s: in's data %p is not aligned to its %zu-byte elements", op, in->data, es);
    unsigned mask;
    if ((st = check_axes(ctx, c, info, op, &mask)) != KG_OK)
        return st;
    const int norm_k = info->axes == KG_NORM_AXIS_LAST || info->axes == KG_NORM_AXIS_LAST1 ? c->k : 0;

    /* the per-row results' shape, and each input dim's place in it */
    int place[KG_MAX_DIMS];
    int rnd = 0;
    int64_t rshape[KG_MAX_DIMS];
    for (int d = 0; d < in->ndim; d++) {
        const int normed = (mask >> d) & 1u;
        place[d] = rnd;
        if (info->axes == KG_NORM_AXIS_ANY) {
            if (!normed || c->keepdim)
                rshape[rnd++] = normed ? 1 : in->shape[d];
        } else if (!normed) {
            rshape[rnd++] = in->shape[d];
        }
    }

    /* tensors by role */
    const kg_tensor *T[KG_NORM_NOPS] = {in, NULL, NULL, NULL, NULL, NULL, NULL};
    if (info->elementwise) {
        if (!c->out)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s: out is NULL", op);
        if ((st = check_shaped(ctx, op, c->out, "out", dt, "the input's dtype", in->ndim, in->shape)) != KG_OK)
            return st;
        T[KG_NO_OUT] = c->out;
    } else if (info->nres > 0 && !norm_k) {
        /* logsumexp: out is the reduction's result */
        if (!c->s0)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s: out is NULL", op);
        if ((st = check_shaped(ctx, op, c->s0, "out", dt, "the input's dtype", rnd, rshape)) != KG_OK)
            return st;
        T[KG_NO_S0] = c->s0;
    }
    if (c->res) {
        if (!info->residual)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s takes no residual", op);
        if ((st = check_shaped(ctx, op, c->res, "residual", dt, "the input's dtype", in->ndim, in->shape)) != KG_OK)
            return st;
        T[KG_NO_RES] = c->res;
    }
    if (c->w) {
        if (!norm_k)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s takes no weight", op);
        if ((st = check_param(ctx, op, c->w, "weight", in, norm_k)) != KG_OK)
            return st;
        T[KG_NO_W] = c->w;
    }
    if (c->b) {
        if (!norm_k || info->stats != KG_NORM_STATS_MOMENTS)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s takes no bias", op);
        if ((st = check_param(ctx, op, c->b, "bias", in, norm_k)) != KG_OK)
            return st;
        T[KG_NO_B] = c->b;
    }
    if (norm_k && (c->s0 || c->s1)) {
        if (info->nres < 2)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s returns no mean or rstd", op);
        const kg_dtype sd = dt == KG_F64 ? KG_F64 : KG_F32;
        const char *why = dt == KG_F64 ? "statistics of f64 are f64" : "statistics of f32, f16 and bf16 are f32";
        if (c->s0 && (st = check_shaped(ctx, op, c->s0, "mean", sd, why, rnd, rshape)) != KG_OK)
            return st;
        if (c->s1 && (st = check_shaped(ctx, op, c->s1, "rstd", sd, why, rnd, rshape)) != KG_OK)
            return st;
        T[KG_NO_S0] = c->s0;
        T[KG_NO_S1] = c->s1;
    }
    /* eps: any finite value the kernels' accumulator holds. A negative eps
       is accepted as PyTorch accepts it: rstd = 1 / sqrt(var + eps), NaN
       where var + eps < 0 (inf where it is 0). */
    if (norm_k && (st = kgi_check_finite(ctx, op, "eps", c->eps, dt == KG_F64 ? DBL_MAX : FLT_MAX)) != KG_OK)
        return st;

    /* overlaps: every written tensor is free of self-overlap and disjoint
       from every other tensor, except out aliasing in exactly */
    static const int written[] = {KG_NO_OUT, KG_NO_RES, KG_NO_S0, KG_NO_S1};
    for (int i = 0; i < 4; i++) {
        const int k = written[i];
        if (!T[k])
            continue;
        if ((st = kgi_check_no_self_overlap(ctx, T[k], tensor_name(c, k))) != KG_OK)
            return st;
        for (int j = 0; j < KG_NORM_NOPS; j++) {
            if (j == k || !T[j] || (j < k && (j == KG_NO_OUT || j == KG_NO_RES || j == KG_NO_S0)))
                continue; /* each written pair once */
            if (k == KG_NO_OUT && j == KG_NO_IN) {
                if ((st = kgi_check_alias(ctx, T[k], T[j], "in")) != KG_OK)
                    return st;
                continue;
            }
            if ((st = check_disjoint(ctx, op, T[k], tensor_name(c, k), T[j], tensor_name(c, j))) != KG_OK)
                return st;
        }
    }

    /* an empty set of rows: nothing to write (checked first: with a 0 dim
       elsewhere, the product of the other dims may pass 2^63) */
    int l_empty = 0;
    for (int d = 0; d < in->ndim; d++)
        if (in->shape[d] == 0) {
            if (!((mask >> d) & 1u)) {
                plan->empty = 1;
                return KG_OK;
            }
            l_empty = 1;
        }
    if (l_empty && !T[KG_NO_S0] && !T[KG_NO_S1]) {
        plan->empty = 1; /* no row has an element and no row result is asked for */
        return KG_OK;
    }

    /* dims: kept (rows) and normalized, innermost first; with no 0 dim
       both products are at most the input's element count */
    ndim_ K[KG_MAX_DIMS], N[KG_MAX_DIMS];
    int nk = 0, nn = 0;
    int64_t rows = 1, L = 1;
    for (int d = in->ndim - 1; d >= 0; d--) {
        const int normed = (mask >> d) & 1u;
        ndim_ v;
        v.size = in->shape[d];
        memset(v.st, 0, sizeof v.st);
        v.st[KG_NO_IN] = in->strides[d];
        if (T[KG_NO_OUT])
            v.st[KG_NO_OUT] = T[KG_NO_OUT]->strides[d];
        if (T[KG_NO_RES])
            v.st[KG_NO_RES] = T[KG_NO_RES]->strides[d];
        if (normed) {
            for (int k = KG_NO_W; k <= KG_NO_B; k++) {
                const kg_tensor *p = T[k];
                const int pd = p ? d - (in->ndim - p->ndim) : -1;
                if (pd >= 0 && p->shape[pd] != 1)
                    v.st[k] = p->strides[pd];
            }
            if (!l_empty)
                L *= v.size;
            if (v.size != 1)
                N[nn++] = v;
        } else {
            for (int k = KG_NO_S0; k <= KG_NO_S1; k++)
                if (T[k])
                    v.st[k] = T[k]->strides[place[d]];
            rows *= v.size;
            if (v.size != 1)
                K[nk++] = v;
        }
    }
    if (l_empty)
        L = 0;
    if (rows == 0 || (L == 0 && info->nres == 0) || (L == 0 && !T[KG_NO_S0] && !T[KG_NO_S1])) {
        plan->empty = 1;
        return KG_OK;
    }
    nk = coalesce(K, nk);
    nn = L == 0 ? 0 : coalesce(N, nn);

    kg_norm_args *A = &plan->args;
    A->n = L;
    A->eps = c->eps;
    const int64_t sm = sm_count > 0 ? sm_count : 1;
    const int64_t V = 16 / (int64_t)es;

    int rows_ok = nn == 1 && L % V == 0;
    for (int k = 0; rows_ok && k < KG_NORM_NOPS; k++) {
        if (!T[k] || k == KG_NO_S0 || k == KG_NO_S1)
            continue;
        rows_ok = N[0].st[k] == 1 && kgi_aligned(T[k]->data, 16);
        for (int d = 0; rows_ok && d < nk; d++)
            rows_ok = K[d].st[k] % V == 0;
    }
    if (rows_ok) {
        const int64_t nvec = L / V;
        A->fast = rows < ((int64_t)1 << 31);
        /* rows of 1..32 vectors: PACKED (unless a LEAN tuning asks for LEAN) */
        /* (rows of 8..32 vectors: LEAN4. Run r1 of 2026-12-02: softmax f32
           of 32 / 64 / 128 at 87.9 / 95.9 / 95.7% of copy against PACKED's
           81.7 / 78.6 / 73.9%, logsumexp f32 of 64 95.1% against 44.8%,
           softmax bf16 of 64 (LEAN4F) 84.7% against 60.2%; r2: rms_norm f32
           of 64 94.5% against 90.6%, layer_norm bf16 of 128 83.4% against
           49.7%, the residual form bf16 of 64 89.6% against 86.6%) */
        /* (softmax / log_softmax of 2-byte rows of 32 elements: LEAN4F of 2
           lanes, a pair (below): H200 s18r1, same process, % of copy
           against PACKED: bf16 [4194304,32] softmax 82.4 / 64.6,
           log_softmax 88.5 / 71.8) */
        const int short_lean = kgi_norm_tuning.lean == 0 && ((nvec >= 8 && es <= 4) || /* (f64: not measured) */
                                                             (pair32(c, nvec, es) && kgi_norm_tuning.variant >= 0));
        if (nk <= 1 && nvec <= 32 && (nvec & (nvec - 1)) == 0 && kgi_norm_tuning.lean <= 0 && !short_lean) {
            plan->cls = KG_NORM_PACKED;
            A->group = (int32_t)nvec;
            A->nv = 1;
            A->rows = rows;
            fill_dims(&A->outer, K, nk, A->fast);
            plan->block = KG_NORM_THREADS;
            const int64_t units = cdiv(rows, KG_NORM_THREADS / nvec * KG_NORM_PACK);
            const int64_t cap = sm * 32; /* measured: more blocks, each fewer rows, run faster */
            plan->grid = (unsigned)(units < cap ? units : cap);
            return KG_OK;
        }
        plan->cls = T[KG_NO_RES] ? KG_NORM_ROWS_RES : KG_NORM_ROWS;
    } else if (leanw_fits(T, N, nn, K, nk, L, es) && kgi_norm_tuning.leanw >= 0 &&
               plan_leanw(plan, T, K, nk, rows, L, es, sm)) {
        return KG_OK;
    } else if (leanu_fits(T, N, nn, K, nk, L, es) && kgi_norm_tuning.leanu >= 0) {
        /* LEANU: contiguous rows that vectors do not tile, one chunk, one
           outer dim at most: masked 16-byte vectors (the seeded sweep of
           run r2, 2026-12-02: such rows ran STRIDED at 10-23% of copy; r5:
           LEANU 19-73% where STRIDED ran 12-23%, see bench/RESULTS.md) */
        const int64_t nvr = (V - 1 + L + V - 1) / V; /* most vectors a row spans */
        /* vectors a lane: 8 for f32 (r5: rms_norm of 126 at 72.9% of copy
           against 79.1% with 4, layer_norm of 317 at 64.8% against 56.8%);
           4 for the 2-byte types unless that takes 1024 lanes (softmax of
           5630 bf16: 34.8% against 29.3%; logsumexp of 16378: 19.0% at
           1024 lanes against 30.4% with 8 at 512) */
        /* (the whole-vector folds: 4 for the 2-byte types up to a block of
           1024, 512 for layer_norm, whose LEANU4S is bound to 768 lanes) */
        /* (r1 of 2026-12-02: LEANU4S at 1024 lanes ran logsumexp bf16 of
           16378 at 20.8% of copy against LEANU8's 30.4% at 512) */
        const int64_t lnv = kgi_norm_tuning.leanu == 4 || kgi_norm_tuning.leanu == 8  ? kgi_norm_tuning.leanu
                            : es == 2 && pow2_ceil(cdiv(nvr, 4)) <= KG_NORM_MAX_GROUP ? 4
                                                                                      : 8;
        const int ures = T[KG_NO_RES] != NULL; /* the residual form: LEANU4_RES, 128 registers */
        const int64_t g = pow2_ceil(cdiv(nvr, ures ? 4 : lnv));
        /* the last row's vectors must not reach past the tensor's end: where
           they would, that row takes STRIDED (a second launch) */
        const int64_t srow = nk ? K[0].st[KG_NO_IN] : 0, end = (rows - 1) * srow + L;
        const int tail = end % V != 0;
        if (g <= (ures ? KG_NORM_MAX_GROUP : KG_NORM_LEAN_MAX_T) && !(tail && rows == 1)) {
            if (tail) {
                plan->tail = 1;
                kg_norm_args *B = &plan->targs;
                *B = *A;
                B->rows = 1;
                fill_dims(&B->outer, K, 0, 1);
                fill_dims(&B->inner, N, nn, 0);
                const int64_t tg = pow2_ceil(cdiv(L, KG_NORM_NV));
                B->group = (int32_t)(tg < KG_NORM_MAX_GROUP ? tg : KG_NORM_MAX_GROUP);
                B->nv = (int32_t)(cdiv(L, B->group) < KG_NORM_NV ? cdiv(L, B->group) : KG_NORM_NV);
                B->fast = 1;
                for (int k = 0; k < KG_NORM_NOPS; k++)
                    plan->toff[k] = nk ? (rows - 1) * K[0].st[k] : 0;
                plan->tblock = B->group > 32 ? (unsigned)B->group : KG_NORM_THREADS;
                plan->tgrid = 1;
                rows -= 1;
            }
            /* whole-vector folds (LEANU4S / LEANU8S / LEANU4S_RES) unless the
               tuning asks for the masked folds */
            /* the 2-byte types' LEANU8S and layer_norm's LEANU4S are bound to
               768 lanes (80 registers): longer rows take the masked folds;
               so does LEANU8 of the 2-byte types unless the tuning asks for
               8 (its LEANU8S spills in 80 registers) */
            const int b768 = es == 2 && !ures && (lnv == 8 || info->stats == KG_NORM_STATS_MOMENTS);
            if (kgi_norm_tuning.usan < 0 || (b768 && g > KG_NORM_MAX_GROUP) ||
                (es == 2 && !ures && lnv == 8 && kgi_norm_tuning.leanu != 8))
                plan->cls = ures ? KG_NORM_LEANU4_RES : lnv == 4 ? KG_NORM_LEANU4 : KG_NORM_LEANU8;
            else
                plan->cls = ures ? KG_NORM_LEANU4S_RES : lnv == 4 ? KG_NORM_LEANU4S : KG_NORM_LEANU8S;
            const int in768 = b768 && (plan->cls == KG_NORM_LEANU4S || plan->cls == KG_NORM_LEANU8S);
            A->group = (int32_t)g;
            A->nv = (int32_t)cdiv(nvr, g);
            A->rows = rows;
            A->fast = rows < ((int64_t)1 << 31);
            fill_dims(&A->outer, K, nk, A->fast);
            /* warp groups: blocks of 512 (256 in the 768-lane kernels: three
               a multiprocessor) */
            plan->block = g > 32 ? (unsigned)g : in768 ? 256u : KG_NORM_MAX_GROUP;
            while (g <= 32 && plan->block > 64 && cdiv(rows, plan->block / g) < 2 * sm)
                plan->block /= 2;
            const int64_t units = cdiv(rows, g > 32 ? 1 : plan->block / g), cap = sm * 32;
            plan->grid = (unsigned)(units < cap ? units : cap);
            return KG_OK;
        }
        plan->cls = KG_NORM_STRIDED;
        fill_dims(&A->inner, N, nn, 0);
    } else if (nn == 1 && N[0].st[KG_NO_IN] != 1 && nk >= 1 && K[0].st[KG_NO_IN] == 1) {
        /* columns: K[0] is the contiguous kept dim */
        plan->cls = KG_NORM_COLS_STATS;
        A->cols = K[0].size;
        for (int k = 0; k < KG_NORM_NOPS; k++)
            A->cst[k] = K[0].st[k];
        A->rows = rows / K[0].size;
        A->fast = A->rows < ((int64_t)1 << 31);
        fill_dims(&A->outer, K + 1, nk - 1, A->fast);
        fill_dims(&A->inner, N, 1, 0);
        A->tiles = cdiv(A->cols, KG_NORM_COL_LANES);
        const int64_t groups = A->rows * A->tiles;
        const size_t entry = (size_t)KG_NORM_COL_LANES * 3 * (dt == KG_F64 ? 8 : 4);
        /* splits of the normalized dim: at most a unit for each of 8
           blocks a multiprocessor (or the tuning's blocks, or splits) */
        const int64_t cbps = kgi_norm_tuning.bps >= 1 && kgi_norm_tuning.bps <= 16 ? kgi_norm_tuning.bps : 8;
        /* (rounded down: window 1 ran logsumexp [16384,16384] dim 0 with 2
           splits, one wave of 1024 blocks, at 91% of copy, with 3 at 80%) */
        int64_t splits = kgi_norm_tuning.col_splits >= 1 ? kgi_norm_tuning.col_splits : sm * cbps / groups;
        if (splits < 1)
            splits = 1;
        const int64_t most = L / 64 > 1 ? L / 64 : 1;
        if (splits > most)
            splits = most;
        while (splits > 1 && (size_t)(groups * splits) * entry > PARTIAL_BUDGET)
            splits = (splits + 1) / 2;
        A->chunk = cdiv(L, splits);
        A->splits = cdiv(L, A->chunk);
        A->units = groups * A->splits;
        plan->partial_bytes = (size_t)(groups * A->splits) * entry;
        plan->block = KG_NORM_THREADS;
        const int64_t cap = sm * cbps;
        plan->grid = (unsigned)(A->units < cap ? A->units : cap);
        plan_cluster(ctx, c, plan, K, nk, N[0], es);
        if (plan->ccfg < 0)
            plan_colsv(c, plan, K, nk, N[0], es, sm);
        return KG_OK;
    } else {
        plan->cls = KG_NORM_STRIDED;
        fill_dims(&A->inner, N, nn, 0);
    }
    /* ROWS, STRIDED: a lane group per row, each lane up to KG_NORM_NV
       vectors (elements) per chunk: 8 where the row allows (more bytes in
       flight per lane, fewer lanes per row, more rows resident) */
    const int rowcls = plan->cls == KG_NORM_ROWS || plan->cls == KG_NORM_ROWS_RES;
    const int64_t vl = rowcls ? V : 1;
    const int64_t nvec = L / vl, nvmax = rowcls ? KG_NORM_ROWS_NV((int64_t)es) : KG_NORM_NV;
    int64_t g = pow2_ceil(cdiv(nvec, nvmax));
    if (g > KG_NORM_MAX_GROUP)
        g = KG_NORM_MAX_GROUP;
    int64_t nv = cdiv(nvec, g);
    if (nv > nvmax)
        nv = nvmax;
    if (nv < 1)
        nv = 1;
    /* LEAN: a row of one chunk and one outer dim at most (2026-12-01 window
       1: 80-96% of copy where ROWS ran 44-90%). NV: the tuning's (4 or 8),
       else the ROWS default (8, 4 for the 2-byte types; 4 with a residual:
       LEAN8_RES ran 59%, LEAN4_RES 91%); lanes per row: the fewest that hold
       it (or the tuning's, when more), at most a block (512 for the
       residual and LOOSE classes). The 2-byte residual form takes LEAN4_RES
       (128 registers): 87.8% of copy against ROWS_RES's 83.2% (r3, bf16
       [65536,4096]).
       layer_norm of f32 (r6, kg_nmoments alone in the kernels): rows of
       <= 32 lanes of 8 vectors by LEAN8 (hidden 1024: 94.0% against
       LEAN8L's 74.3%, LEAN4's 91.3%), of 64..256 lanes by LEAN4 with twice
       the lanes (hidden 4096: 92.1% against LEAN8's 88.2%, LEAN8L's 75.1%,
       ROWS's 84.8%), of 512 lanes by LEAN8 (hidden 16384: 89.2% against
       LEAN4's 67.8%, LEAN8L's 56.0%, ROWS's 50.8%). f64 layer_norm of
       64..256 lanes stays ROWS (LEAN8 spilled there, 2026-12-01 windows 1
       and 4). */
    const kg_norm_tuning *tu = &kgi_norm_tuning;
    const int res = plan->cls == KG_NORM_ROWS_RES;
    A->opt = 0;
    int pair = 0; /* rows of 32 elements, 2 vectors a lane (pair32, below) */
    if (rowcls && nk <= 1 && tu->lean >= 0) {
        int64_t lnv = tu->lean == 4 || tu->lean == 8 ? tu->lean : res || nvmax == 4 ? 4 : 8;
        int loose = tu->loose, rows_instead = 0;
        const int64_t g8 = pow2_ceil(cdiv(nvec, 8));
        /* the lse ops' rows of <= 32 vectors: 4 vectors a lane (r1: LEAN8 ran
           softmax f32 of 64 with 2 lanes a row at 80.9% against 95.9%); the
           2-byte lse ops of >= 8 lanes of 8 vectors: LEAN8F (80 registers)
           in blocks of 128 (r1: softmax bf16 [190650,704] 89.0% against
           LEAN4F's 82.1%, [9362,14336] 88.6% against 71.7%, logsumexp bf16
           [174762,768] 90.5% against 66.2%, [49932,2688] 70.0% against 58.4%,
           log_softmax bf16 [93206,1440] 91.2% against 83.4%; [65536,4096]
           89.4% against 90.2%) */
        const int short4 = nvec <= 32 && es <= 4 && tu->lean == 0 && !tu->loose && !tu->group;
        /* rows of 32 elements (pair32): 2 vectors a lane (f32: 4 lanes, not 2; the 2-byte types: 2 lanes,
           LEAN2 / LEAN2E, not PACKED), blocks of 128, a block a unit (below); the 2-byte rows of 64 and 128
           elements likewise where lean2_rule (or the tuning's lean2 2 / 4) takes LEAN2 / LEAN2E, 4 / 8 lanes */
        const int l2 = tu->lean2 ? tu->lean2 : lean2_rule(c, nvec, es);
        const int wide2 = es == 2 && (nvec == 8 || nvec == 16) &&
                          (l2 == 2 || l2 == 4 || l2 == 8 || (l2 == 6 && nvec == 8)) && !c->res;
        pair = short4 && (pair32(c, nvec, es) || wide2) && !tu->threads && !tu->grid && tu->variant >= 0;
        if (short4)
            lnv = 4; /* every op's rows of <= 32 vectors (r2, above) */
        else if (info->stats == KG_NORM_STATS_LSE && tu->lean == 0 && !tu->loose && !tu->group && es == 2 &&
                 g8 >= 8 && g8 <= KG_NORM_MAX_GROUP && tu->variant >= 0)
            lnv = 8;
        if (short4) {
            /* (LEAN4 as is) */
        } else if (info->stats == KG_NORM_STATS_MOMENTS && !res && tu->lean == 0 && !tu->loose && es == 4) {
            if (g8 > 32 && g8 < 512)
                lnv = 4;
        } else if (info->stats == KG_NORM_STATS_MOMENTS && tu->lean == 0 && !tu->loose && es == 8) {
            rows_instead = g8 > 32 && g8 < 512;
        }
        /* LEAN8's variants (runs r2 and r5 of 2026-12-02, H200): LEAN8S for
           the 2-byte layer_norm (hidden 1024 / 4096 / 16384 bf16: 91.7 /
           85.8 / 83.6% of copy against LEAN4's 84.8 / 79.3 / 68.9%, r5);
           LEAN8C for the norms of 512 lanes in f32 (hidden 16384: layer_norm
           90.1% against 89.0% in both runs, rms_norm 95.5 / 96.6% against
           94.9 / 96.1%) and of 256..512 lanes in the 2-byte types (rms_norm
           bf16 16384: 94.3 / 95.2% against 92.7 / 92.9%) */
        int var = tu->variant == 1 || tu->variant == 2 ? tu->variant : 0;
        /* whole warps (g32) by default: the 2-byte layer_norm's LEAN8S (H200 session 12 r1a: bf16 [52428,5120]
           81.2% of copy in 96 lanes of 7 vectors against 75.1% in 128 of 5) */
        int g32 = tu->g32 == 1;
        if (tu->variant == 0 && tu->lean == 0 && !tu->loose && !tu->group && !res && !short4) {
            if (info->stats == KG_NORM_STATS_MOMENTS && es == 2 && g8 <= KG_NORM_MAX_GROUP) {
                var = 2;
                g32 = tu->g32 == 0 || g32;
            } else if (info->stats != KG_NORM_STATS_LSE && es == 4 && g8 == KG_NORM_MAX_GROUP)
                var = 1;
            else if (info->stats == KG_NORM_STATS_SUMSQ && es == 2 && g8 >= 128 && g8 <= KG_NORM_MAX_GROUP)
                var = 1; /* (r1: rms_norm bf16 [22075,6080] (128 lanes) 90.2% against LEAN4's 86.0%, [18724,7168]
                            91.2% against 89.9%; at 64 lanes [65536,4096] 86.5% against 87.9%) */
        }
        /* the residual form: LEAN4_RESC under the tuning's variant 1 */
        const int resc = res && tu->variant == 1;
        if (res)
            var = 0;
        if (var)
            lnv = 8;
        int64_t lg = pair ? nvec / 2 : pow2_ceil(cdiv(nvec, lnv));
        if (tu->group > lg && tu->group <= KG_NORM_LEAN_MAX_T)
            lg = pow2_ceil(tu->group);
        else if (g32 && lg > 32)
            lg = cdiv(cdiv(nvec, lnv), 32) * 32; /* a block of whole warps (kg_ngroup: g / 32 of them) */
        const int64_t gmax = res || loose || var ? KG_NORM_MAX_GROUP : KG_NORM_LEAN_MAX_T;
        if (lg <= gmax && !rows_instead) {
            plan->cls = res        ? (lnv == 4 ? (resc ? KG_NORM_LEAN4_RESC : KG_NORM_LEAN4_RES) : KG_NORM_LEAN8_RES)
                        : loose    ? (lnv == 4 ? KG_NORM_LEAN4L : KG_NORM_LEAN8L)
                        : var == 1 ? KG_NORM_LEAN8C
                        : var == 2 ? KG_NORM_LEAN8S
                                   : (lnv == 4 ? KG_NORM_LEAN4 : KG_NORM_LEAN8);
            /* the 2-byte lse ops: LEAN4F / LEAN8F (the sum's exps flushed
               below 2^-126) unless the tuning asks for the plain kernels */
            if (info->stats == KG_NORM_STATS_LSE && es == 2 && tu->variant >= 0) {
                if (plan->cls == KG_NORM_LEAN4)
                    plan->cls = KG_NORM_LEAN4F;
                else if (plan->cls == KG_NORM_LEAN8 && lg <= KG_NORM_MAX_GROUP)
                    plan->cls = KG_NORM_LEAN8F;
            }
            /* PF: the group's next row loaded before this row's statistics
               (LEAN4P: the f32 norms and the 2-byte rms_norm; LEAN8P: the f32
               norms; elsewhere the tables hold the base kernel), <= 512 lanes.
               Taken (H200 2026-12-02 r1, % of copy against the class it
               replaces): f32 layer_norm's LEAN8 / LEAN8C of 32 and 512
               lanes (hidden 1024 96.5 against 93.9, 16384 92.1 against
               90.1; r2: 96.8 / 94.1, 92.7 / 90.1), the 2-byte rms_norm's
               LEAN4 of 64..256 lanes (bf16 4096: 90.4 against 87.8; at 32
               lanes, blocks of 512, it lost: 70.2 against 97.1). Ties: f32
               rms_norm of 1024..16384 (within 0.2); lost: f32 layer_norm's
               LEAN4 (4096: 91.4 against 92.1), the 2-byte layer_norm (4096:
               56.0 against 77.6), the residual form (bf16 64.0 against 88.1).
               The f32 rms_norm's short rows took PF (64: 96.4 against 94.6)
               until LEAN4 ran a block a unit (s15r2: 99.3 against 96.8).
               The tuning's pf: 1 wherever it applies, -1 never. */
            int pf = tu->pf == 1;
            if (tu->pf == 0 && tu->lean == 0 && !tu->loose && !tu->group && tu->variant == 0 && !res &&
                info->stats != KG_NORM_STATS_LSE) {
                if (es == 4 && info->stats == KG_NORM_STATS_MOMENTS) /* (the sizes measured) */
                    pf = (plan->cls == KG_NORM_LEAN8 || plan->cls == KG_NORM_LEAN8C) && (lg == 32 || lg == 512);
                else if (es == 2 && info->stats == KG_NORM_STATS_SUMSQ)
                    pf = plan->cls == KG_NORM_LEAN4 && lg >= 64 && lg <= 256;
            }
            if (pf && !res && lg <= KG_NORM_MAX_GROUP && es != 8) {
                if (plan->cls == KG_NORM_LEAN4)
                    plan->cls = KG_NORM_LEAN4P;
                else if (plan->cls == KG_NORM_LEAN8 || plan->cls == KG_NORM_LEAN8C || plan->cls == KG_NORM_LEAN8S)
                    plan->cls = KG_NORM_LEAN8P;
            }
            /* LEAN2: the 2-byte pairs in 32 registers under the tuning's lean2 (3, 4: LEAN2E, the softmax's
               exps kept; elsewhere the table holds LEAN2; 5: LEAN2R for the rows of 32, two rows a group; 6:
               LEAN2R for the rows of 32 and of 64, 4 lanes; 8: LEAN2R for the rows of 32, 64 and 128) */
            if (pair && es == 2 && l2 > 0 && (plan->cls == KG_NORM_LEAN4 || plan->cls == KG_NORM_LEAN4F))
                plan->cls = (l2 == 5 && nvec == 4) || (l2 == 6 && nvec <= 8) || l2 == 8 ? KG_NORM_LEAN2R
                            : l2 == 3 || l2 == 4                                 ? KG_NORM_LEAN2E
                                                                                 : KG_NORM_LEAN2;
            g = lg;
            nv = cdiv(nvec, g);
        }
    }
    /* LEAN16: the 2-byte rms_norm, 16 vectors a lane, <= 512 lanes: the
       tuning's lean 16, and by default the 2-byte rms_norm of 257..512
       vectors (a warp a row; H200 2026-12-02 r2: bf16 [65536,4096] 93.4% of
       copy against LEAN4P's 90.4 and LEAN4's 87.5; lost at hidden 1024, 92.4
       against 97.3, and 16384, 91.2 against 94.4, and for layer_norm at
       every size, 79.4-79.9 against 84.5-86.2) */
    const int l16 = tu->lean == 16 || (tu->lean == 0 && tu->pf == 0 && !tu->loose && !tu->group && tu->variant == 0 &&
                                       nvec > 256 && nvec <= 512);
    /* (rms_norm alone: the 2-byte modules hold no LEAN16 of layer_norm, gen/norm.lua) */
    if (rowcls && nk <= 1 && l16 && !res && es == 2 && info->stats == KG_NORM_STATS_SUMSQ &&
        pow2_ceil(cdiv(nvec, 16)) <= KG_NORM_MAX_GROUP) {
        plan->cls = KG_NORM_LEAN16;
        g = pow2_ceil(cdiv(nvec, 16));
        if (tu->group > g && tu->group <= KG_NORM_MAX_GROUP)
            g = pow2_ceil(tu->group);
        nv = cdiv(nvec, g);
    }
    A->group = (int32_t)g;
    A->nv = (int32_t)nv;
    A->rows = rows;
    A->fast = rows < ((int64_t)1 << 31);
    fill_dims(&A->outer, K, nk, A->fast);
    const int lean =
        (plan->cls >= KG_NORM_LEAN4 && plan->cls <= KG_NORM_LEAN8S) || plan->cls == KG_NORM_LEAN4F ||
        plan->cls == KG_NORM_LEAN8F || plan->cls == KG_NORM_LEAN4_RESC ||
        (plan->cls >= KG_NORM_LEAN4P && plan->cls <= KG_NORM_LEAN2R);
    plan->block = g > 32 ? (unsigned)g : KG_NORM_THREADS;
    /* the 2-byte lse ops of 2 lanes a row: blocks of 128, a block a unit (below) */
    const int lean4f2 = plan->cls == KG_NORM_LEAN4F && g == 2 && !tu->threads && !tu->grid;
    if (lean && g <= 32) {
        /* warp groups: blocks of the tuning's lanes, else of 512 while
           there are two blocks a multiprocessor (window 1: 512 ran norms of
           1024 0.7-1.7 points above 256) */
        if (tu->threads >= 64 && tu->threads <= KG_NORM_LEAN_MAX_T) {
            plan->block = (unsigned)pow2_ceil(tu->threads);
        } else if ((info->stats == KG_NORM_STATS_MOMENTS && es == 2) || plan->cls == KG_NORM_LEAN8F ||
                   (plan->cls == KG_NORM_LEAN4_RES && es == 2) || lean4f2 || pair) {
            /* 2-byte layer_norm: blocks of 128 (r6, bf16 hidden 1024:
               84.3% of copy against 81.3% with 512); LEAN8F likewise (r1:
               softmax bf16 [190650,704] 89.0% against 67.7% with 512); the
               2-byte residual form too (r2: bf16 [4194304,64] 89.6% against
               85.9%, [466033,288] 71.7% against 68.7%, [199728,672] 72.7%
               against 72.1%, [266305,504] 81.1% against 80.6%; f32 mixed:
               [233016,288] 91.4% against 89.4%, [335544,200] 87.4% against
               91.4%, so it stays at 512); the 2-byte lse ops of 2 lanes a
               row (LEAN4F), a block a unit (below; H200, same process,
               best of 3 / 5 in turn, % of copy against 512 at the cap:
               bf16 [4194304,64] softmax s17r1 85.7 / 83.4, s17r2 86.0 /
               84.1; log_softmax 86.8 / 85.4, 87.0 / 85.9; logsumexp s17r2
               89.0 / 86.2); softmax and log_softmax of rows of 32
               elements, 2 vectors a lane (s18r1, against the old plans:
               f32 [4194304,32] at 4 lanes 93.2 / 88.2 and 92.4 / 85.0
               (LEAN4 of 2 lanes at 512, capped); bf16 at 2 lanes, above) */
            plan->block = 128;
        } else {
            plan->block = KG_NORM_MAX_GROUP;
            while (plan->block > 64 && cdiv(rows, plan->block / g) < 2 * sm)
                plan->block /= 2;
        }
    }
    /* (LEAN2R: two rows a group) */
    const int64_t per_block = g > 32 ? 1 : (int64_t)(plan->block / g) * (plan->cls == KG_NORM_LEAN2R ? 2 : 1);
    const int64_t units = cdiv(rows, per_block);
    /* a block a unit (one row, or a block of short rows): the hardware
       hands the last units to whichever multiprocessors are free, where 32
       blocks a multiprocessor, each walking units b, b + grid, ..., end
       unevenly (s15r2, H200, every bench case in one process, % of copy,
       a block a unit / the cap: bf16 layer_norm 2048 97.5 / 92.8, 5120
       98.2 / 89.2, 6144 98.1 / 90.0, 8192 97.0 / 90.5, 16384 97.1 / 93.4;
       f32 softmax [65536,4096] 97.9 / 91.7, [2097152,128] 99.7 / 96.5,
       [4194304,64] 100.6 / 95.9; rms_norm f32 [65536,4096] 98.4 / 92.3).
       The cap stays for PF's classes (their loop loads the next unit while
       it reduces this one) and for groups of 2 lanes (but the 2-byte lse
       ops in blocks of 128 and the pairs of pair32, above), and of 4 but for the
       4-byte ops that write rows, where it ran faster: softmax f32
       [4194304,32] 87.7 / 82.7, bf16 [4194304,64] 84.1 / 79.9, logsumexp
       f32 [4194304,64] 96.6 / 86.1, bf16 86.1 / 77.5, layer_norm bf16
       [2097152,128] 90.7 / 89.2 (the residual form bf16 [4194304,64] 89.1
       / 89.3, within the spread of two timings). */
    const int capped = !pair && (plan->cls == KG_NORM_LEAN4P || plan->cls == KG_NORM_LEAN8P || (g <= 2 && !lean4f2) ||
                                 (g == 4 && (es != 4 || c->op == KG_NORM_LOGSUMEXP)));
    int64_t cap = capped ? sm * 32 : INT32_MAX;
    if (tu->grid > 0)
        cap = tu->grid;
    plan->grid = (unsigned)(units < cap ? units : cap);
    if (lean && nk <= 1)
        plan_bulk(ctx, c, plan, es, sm);
    return KG_OK;
}

/* Whether a cluster of a configuration x size runs on this device (the
   non-portable sizes and the shared memory allowed first, for the device):
   0 unknown, 1 no, 2 yes; asked once per device
   (cudaOccupancyMaxActiveClusters). */
#define CLUSTER_DEVICES 8 /* devices with a cache (others ask at every launch) */
static _Atomic unsigned char cluster_fits[CLUSTER_DEVICES][KG_NORM_COUNT][KG_DTYPE_COUNT][KG_NORM_CCFG_COUNT][17];
/* PH: the clusters of a configuration x size resident at once (0 unknown) */
static _Atomic short cluster_active[CLUSTER_DEVICES][KG_NORM_COUNT][KG_DTYPE_COUNT][KG_NORM_CCFG_COUNT][17];

/* Launches a CLUSTER plan; *ok = 0 (and nothing launched) where the device
   cannot hold a cluster of that size. */
static kg_status launch_cluster(kg_context *ctx, const kg_norm_call *c, kg_norm_plan *plan, int *ok)
{
    *ok = 0;
    const int k = kg_norm_ctable[c->op][c->in->dtype][plan->ccfg];
    cudaKernel_t kern;
    kg_status st = kg_kernel(ctx, k, &kern);
    if (st != KG_OK)
        return st;
    kg_norm_args B = plan->args;
    B.tiles = plan->ctiles;
    B.chunk = plan->cchunk;
    B.splits = plan->csize;
    if (plan->crg > 0) {
        B.group = plan->crg;          /* COLT's narrow configurations: row groups a tile, */
        B.opt |= plan->cbfly == 1 ? 2 : plan->cbfly == 2 ? 4 : 0; /* their merge by butterflies (TL: then warps) */
    }
    cudaLaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = (unsigned)plan->csize;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = (dim3){plan->cgrid, 1, 1};
    cfg.blockDim = (dim3){plan->cblock, 1, 1};
    cfg.stream = ctx->stream;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    cfg.dynamicSmemBytes = (size_t)kg_norm_ccfgs[plan->ccfg].ks * (size_t)kg_norm_ccfgs[plan->ccfg].threads * 16;
    _Atomic unsigned char unknown = 0;
    _Atomic unsigned char *fits = ctx->device >= 0 && ctx->device < CLUSTER_DEVICES
                                      ? &cluster_fits[ctx->device][c->op][c->in->dtype][plan->ccfg][plan->csize]
                                      : &unknown;
    _Atomic short unknown_n = 0;
    _Atomic short *active = ctx->device >= 0 && ctx->device < CLUSTER_DEVICES
                                ? &cluster_active[ctx->device][c->op][c->in->dtype][plan->ccfg][plan->csize]
                                : &unknown_n;
    if (*fits == 0) {
        cudaError_t err = cudaSuccess;
        if (plan->csize > 8)
            err = cudaKernelSetAttributeForDevice(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1, ctx->device);
        if (err == cudaSuccess && cfg.dynamicSmemBytes > 0)
            err = cudaKernelSetAttributeForDevice(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  (int)cfg.dynamicSmemBytes, ctx->device);
        int n = 0;
        if (err == cudaSuccess)
            err = cudaOccupancyMaxActiveClusters(&n, (const void *)kern, &cfg);
        if (err != cudaSuccess) {
            cudaGetLastError(); /* not known: the launch will tell */
        } else {
            *active = (short)(n < SHRT_MAX ? n : SHRT_MAX);
            *fits = n > 0 ? 2 : 1;
        }
    }
    if (*fits == 1)
        return KG_OK;
    /* PH: at most the clusters resident at once (where known) */
    if (kg_norm_ccfgs[plan->ccfg].ph && *active > 0 && cfg.gridDim.x > (unsigned)*active * (unsigned)plan->csize)
        cfg.gridDim.x = (unsigned)*active * (unsigned)plan->csize;
    void *args[] = {&B};
    const cudaError_t err = cudaLaunchKernelExC(&cfg, (const void *)kern, args);
    if (err != cudaSuccess) {
        cudaGetLastError();
        if (kgi_cuda_sticky(err))
            return kg_cuda_fail(ctx, err, "launching a softmax cluster kernel");
        *fits = 1; /* refused (no such cluster here): COLS from now on */
        return KG_OK;
    }
    *fits = 2;
    *ok = 1;
    kgi_norm_cluster_launches++;
    return KG_OK;
}

/* Whether a BULK configuration's kernel may take its shared memory on a
   device: 0 unknown, 1 no, 2 yes (its limit raised once per device). */
static _Atomic unsigned char bulk_fits[CLUSTER_DEVICES][KG_NORM_COUNT][KG_DTYPE_COUNT][KG_NORM_BCFG_COUNT];

/* Launches a BULK plan; *ok = 0 (and nothing launched) where the device
   refuses the kernel its shared memory. */
static kg_status launch_bulk(kg_context *ctx, const kg_norm_call *c, kg_norm_plan *plan, int *ok)
{
    *ok = 0;
    const int k = kg_norm_btable[c->op][c->in->dtype][plan->bcfg];
    const kg_norm_bcfg *f = &kg_norm_bcfgs[plan->bcfg];
    kg_norm_args B = plan->args;
    B.chunk = plan->bstages;
    const size_t es = kg_dtype_size(c->in->dtype);
    const size_t smem = (size_t)B.chunk * (size_t)B.n * es * (c->res ? 2 : 1) * (f->warp ? (size_t)f->threads / 32 : 1) +
                        (size_t)bulk_wb_bytes(c, f, B.n, es);
    _Atomic unsigned char unknown = 0;
    _Atomic unsigned char *fits = ctx->device >= 0 && ctx->device < CLUSTER_DEVICES
                                      ? &bulk_fits[ctx->device][c->op][c->in->dtype][plan->bcfg]
                                      : &unknown;
    if (*fits == 0) {
        cudaKernel_t kern;
        kg_status st = kg_kernel(ctx, k, &kern);
        if (st != KG_OK)
            return st;
        const cudaError_t err = cudaKernelSetAttributeForDevice(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                                bulk_budget(f), ctx->device);
        if (err != cudaSuccess)
            cudaGetLastError();
        *fits = err == cudaSuccess ? 2 : 1;
    }
    if (*fits == 1)
        return KG_OK;
    void *args[] = {&B};
    kg_status st = kg_launch(ctx, k, (dim3){plan->bgrid, 1, 1}, (dim3){plan->bblock, 1, 1}, args, smem);
    if (st != KG_OK)
        return st;
    *ok = 1;
    kgi_norm_bulk_launches++;
    return KG_OK;
}

kg_status kg_norm_launch(kg_context *ctx, const kg_norm_call *c, kg_norm_plan *plan)
{
    kg_status st = kg_ready(ctx);
    if (st != KG_OK)
        return st;
    if (plan->empty)
        return kg_ok(ctx);
    kg_norm_args *A = &plan->args;
    const kg_tensor *T[KG_NORM_NOPS] = {c->in, c->out, c->res, c->w, c->b, c->s0, c->s1};
    for (int k = 0; k < KG_NORM_NOPS; k++)
        A->p[k] = T[k] ? T[k]->data : NULL;
    if (!kg_norm_infos[c->op].elementwise)
        A->p[KG_NO_OUT] = NULL;
    const int16_t *ks = kg_norm_table[c->op][c->in->dtype];
    void *args[] = {A};
    if (plan->bcfg >= 0) {
        int ok = 0;
        st = launch_bulk(ctx, c, plan, &ok);
        if (st != KG_OK || ok)
            return st == KG_OK ? kg_ok(ctx) : st;
        /* the device refused the shared memory: the LEAN plan */
    }
    if (plan->cls == KG_NORM_COLS_STATS && plan->ccfg >= 0) {
        int ok = 0;
        st = launch_cluster(ctx, c, plan, &ok);
        if (st != KG_OK || ok)
            return st == KG_OK ? kg_ok(ctx) : st;
        /* no cluster of that size fits this device now: COLS */
    }
    if (plan->cls == KG_NORM_COLS_STATS || plan->cls == KG_NORM_COLSV_STATS8) {
        void *base;
        st = kg_scratch(ctx, KG_SCRATCH_COUNTER_BYTES + plan->partial_bytes, &base);
        if (st != KG_OK)
            return st;
        A->partial = (char *)base + KG_SCRATCH_COUNTER_BYTES;
        /* COLS, COLSV: the stats kernel, then the apply kernel (the next class) */
        const int ksx = (int)plan->cls;
        st = kg_launch(ctx, ks[ksx], (dim3){plan->grid, 1, 1}, (dim3){plan->block, 1, 1}, args, 0);
        if (st != KG_OK)
            return st;
        st = kg_launch(ctx, ks[ksx + 1], (dim3){plan->grid, 1, 1}, (dim3){plan->block, 1, 1}, args, 0);
        return st == KG_OK ? kg_ok(ctx) : st;
    }
    st = kg_launch(ctx, ks[plan->cls], (dim3){plan->grid, 1, 1}, (dim3){plan->block, 1, 1}, args, 0);
    if (st == KG_OK && plan->tail) {
        /* LEANU's last row, by STRIDED */
        kg_norm_args *B = &plan->targs;
        for (int k = 0; k < KG_NORM_NOPS; k++)
            B->p[k] = A->p[k] ? (char *)A->p[k] + plan->toff[k] * (int64_t)kg_dtype_size(T[k]->dtype) : NULL;
        void *targs[] = {B};
        st = kg_launch(ctx, ks[KG_NORM_STRIDED], (dim3){plan->tgrid, 1, 1}, (dim3){plan->tblock, 1, 1}, targs, 0);
    }
    return st == KG_OK ? kg_ok(ctx) : st;
}

static kg_status run(kg_context *ctx, const kg_norm_call *c)
{
    if (!ctx)
        return KG_ERR_INVALID_ARGUMENT;
    kg_norm_plan plan;
    kg_status st = kg_norm_plan_call(ctx, c, ctx->sm_count, &plan);
    if (st != KG_OK)
        return st;
    return kg_norm_launch(ctx, c, &plan);
}

kg_status kg_softmax(kg_context *ctx, const kg_tensor *out, const kg_tensor *in, int axis)
{
    const kg_norm_call c = {.op = KG_NORM_SOFTMAX, .out = out, .in = in, .axis = axis};
    return run(ctx, &c);
}

kg_status kg_log_softmax(kg_context *ctx, const kg_tensor *out, const kg_tensor *in, int axis)
{
    const kg_norm_call c = {.op = KG_NORM_LOG_SOFTMAX, .out = out, .in = in, .axis = axis};
    return run(ctx, &c);
}

kg_status kg_logsumexp(kg_context *ctx, const kg_tensor *out, const kg_tensor *in, const int *axes, int n_axes,
                       int keepdim)
{
    const kg_norm_call c = {
        .op = KG_NORM_LOGSUMEXP, .s0 = out, .in = in, .axes = axes, .n_axes = n_axes, .keepdim = keepdim};
    return run(ctx, &c);
}

kg_status kg_layer_norm(kg_context *ctx, const kg_tensor *out, const kg_tensor *mean, const kg_tensor *rstd,
                        const kg_tensor *in, int k, const kg_tensor *weight, const kg_tensor *bias, double eps)
{
    const kg_norm_call c = {.op = KG_NORM_LAYER_NORM,
                            .out = out,
                            .s0 = mean,
                            .s1 = rstd,
                            .in = in,
                            .k = k,
                            .w = weight,
                            .b = bias,
                            .eps = eps};
    return run(ctx, &c);
}

kg_status kg_rms_norm(kg_context *ctx, const kg_tensor *out, const kg_tensor *in, const kg_tensor *weight, double eps)
{
    const kg_norm_call c = {.op = KG_NORM_RMS_NORM, .out = out, .in = in, .k = 1, .w = weight, .eps = eps};
    return run(ctx, &c);
}

kg_status kg_rms_norm_residual(kg_context *ctx, const kg_tensor *out, const kg_tensor *residual, const kg_tensor *in,
                               const kg_tensor *weight, double eps)
{
    if (ctx && !residual)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: rms_norm_residual: residual is NULL");
    const kg_norm_call c = {
        .op = KG_NORM_RMS_NORM, .out = out, .res = residual, .in = in, .k = 1, .w = weight, .eps = eps};
    return run(ctx, &c);
}
