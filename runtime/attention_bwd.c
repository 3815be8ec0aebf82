/*
 * attention_bwd.c - validation and dispatch of kg_attention_backward
 * (kg_attention_bwd.h).
 *
 * Everything is checked on the host first (a context without a device still
 * reports argument errors). Then launches on the context's stream, the
 * kernels from the generated table (kg_attnb_table.h) for q's dtype, the
 * head dim and the mask kind:
 *   pre    delta = rowsum(dout * out) and lse2 into the scratch, a warp a row;
 * the fused path (the default):
 *   kvq    dk, dv and the dq partials, grid (lanes, Hkv, B): lane c walks
 *          key blocks c, 2 lanes - 1 - c, 2 lanes + c, ... (snake order)
 *          and each block its group's query
 *          heads in order (f16 / bf16: the Hopper wgmma kernel on compute
 *          capability 9.0 where generated, else the portable mma.sync one;
 *          f32: FFMA);
 *   dqsum  dq = scale * the partials added up in lane order (skipped where
 *          the Hopper kvq has one lane reaching every row: it writes dq);
 * the separate dq pass (KG_ATTNB_TUNE=sep):
 *   kv     dk and dv, grid (key blocks, Hkv, B);
 *   q      dq, grid (query blocks, Hq, B), recomputing the scores.
 * No atomics; the lane count is a function of the shape: the same call
 * gives the same bits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_bwd_params.h"
#include "internal.h"
#include "kg_attention_bwd.h"
#include "kg_attnb_table.h"
#include "kg_table.h"

enum { T_DQ, T_DK, T_DV, T_DOUT, T_Q, T_K, T_V, T_OUT, T_LSE, T_MASK, T_COUNT };
static const char *const names[T_COUNT] = {"dq", "dk", "dv", "dout", "q", "k", "v", "out", "lse", "mask"};

static kg_status shape_error(kg_context *ctx, const kg_tensor *const *t, const char *why)
{
    char q[96], k[96];
    return kgi_fail(ctx, KG_ERR_SHAPE, "shape mismatch: attention backward: %s (q is %s, k is %s)", why,
                   kgi_shape_str(q, sizeof q, t[T_Q]->ndim, t[T_Q]->shape),
                   kgi_shape_str(k, sizeof k, t[T_K]->ndim, t[T_K]->shape));
}

static int same_shape(const kg_tensor *a, const kg_tensor *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

static kg_status check_shapes(kg_context *ctx, const kg_tensor *const *t)
{
    const kg_tensor *q = t[T_Q], *k = t[T_K];
    if (q->ndim != 4 || k->ndim != 4 || t[T_V]->ndim != 4)
        return shape_error(ctx, t, "q, k and v must have 4 dims [B, H, S, D]");
    if (!same_shape(k, t[T_V]))
        return shape_error(ctx, t, "k and v must have the same shape");
    if (q->shape[0] != k->shape[0])
        return shape_error(ctx, t, "q and k must have the same batch size");
    if (q->shape[3] != k->shape[3])
        return shape_error(ctx, t, "q and k must have the same head dim");
    if (k->shape[1] == 0 ? q->shape[1] != 0 : q->shape[1] % k->shape[1] != 0)
        return shape_error(ctx, t, "q's heads must be a multiple of k's heads");
    const int like_q[3] = {T_OUT, T_DOUT, T_DQ}, like_k[2] = {T_DK, T_DV};
    for (int i = 0; i < 3; i++)
        if (!same_shape(t[like_q[i]], q)) {
            char s[96], w[96];
            return kgi_fail(ctx, KG_ERR_SHAPE, "shape mismatch: attention backward: %s is %s but must be q's shape %s",
                           names[like_q[i]], kgi_shape_str(s, sizeof s, t[like_q[i]]->ndim, t[like_q[i]]->shape),
                           kgi_shape_str(w, sizeof w, 4, q->shape));
        }
    for (int i = 0; i < 2; i++)
        if (!same_shape(t[like_k[i]], k)) {
            char s[96], w[96];
            return kgi_fail(ctx, KG_ERR_SHAPE, "shape mismatch: attention backward: %s is %s but must be k's shape %s",
                           names[like_k[i]], kgi_shape_str(s, sizeof s, t[like_k[i]]->ndim, t[like_k[i]]->shape),
                           kgi_shape_str(w, sizeof w, 4, k->shape));
        }
    const kg_tensor *l = t[T_LSE];
    if (l->ndim != 3 || l->shape[0] != q->shape[0] || l->shape[1] != q->shape[1] || l->shape[2] != q->shape[2]) {
        char ls[96], qs[96];
        return kgi_fail(ctx, KG_ERR_SHAPE,
                       "shape mismatch: attention backward: lse is %s but must be [B, Hq, Sq] for q %s",
                       kgi_shape_str(ls, sizeof ls, l->ndim, l->shape), kgi_shape_str(qs, sizeof qs, 4, q->shape));
    }
    if (t[T_MASK]) {
        const kg_tensor *m = t[T_MASK];
        const int64_t want[4] = {q->shape[0], q->shape[1], q->shape[2], k->shape[2]};
        int ok = m->ndim <= 4;
        for (int d = 0; ok && d < m->ndim; d++) {
            const int64_t s = m->shape[m->ndim - 1 - d];
            ok = s == 1 || s == want[3 - d];
        }
        if (!ok) {
            char ms[96], ws[96];
            return kgi_fail(ctx, KG_ERR_SHAPE,
                           "shape mismatch: attention backward: mask %s is not broadcastable to [B, Hq, Sq, Sk] = %s",
                           kgi_shape_str(ms, sizeof ms, m->ndim, m->shape), kgi_shape_str(ws, sizeof ws, 4, want));
        }
    }
    return KG_OK;
}

static kg_status check_dtypes(kg_context *ctx, const kg_tensor *const *t)
{
    const kg_dtype dt = t[T_Q]->dtype;
    const unsigned accepted = 1u << KG_F32 | 1u << KG_F16 | 1u << KG_BF16;
    if (!(accepted & (1u << dt)))
        return kgi_fail_dtype(ctx, "attention backward", dt, accepted);
    for (int i = 0; i < T_LSE; i++)
        if (t[i]->dtype != dt)
            return kgi_fail(ctx, KG_ERR_DTYPE, "dtype mismatch: attention backward: q is %s but %s is %s",
                           kg_dtype_name(dt), names[i], kg_dtype_name(t[i]->dtype));
    for (int i = T_LSE; i < T_COUNT; i++)
        if (t[i] && t[i]->dtype != KG_F32)
            return kgi_fail(ctx, KG_ERR_DTYPE, "dtype mismatch: attention backward: %s must be f32, got %s", names[i],
                           kg_dtype_name(t[i]->dtype));
    return KG_OK;
}

/* The head dim contiguous, 16-byte aligned data and B/H/S strides. */
static kg_status check_layout(kg_context *ctx, const kg_tensor *t, const char *name)
{
    if (kg_numel(t) == 0)
        return KG_OK;
    const int64_t es = (int64_t)kg_dtype_size(t->dtype), D = t->shape[3];
    if (D > 1 && t->strides[3] != 1)
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: attention backward: %s's head dim must be contiguous (stride %lld)", name,
                       (long long)t->strides[3]);
    if (!kgi_aligned(t->data, 16))
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: attention backward: %s's data must be 16-byte aligned", name);
    for (int d = 0; d < 3; d++)
        if (t->shape[d] > 1 && (t->strides[d] * es) % 16)
            return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                           "invalid argument: attention backward: %s's stride in dim %d (%lld elements) must be a "
                           "multiple of 16 bytes",
                           name, d, (long long)t->strides[d]);
    return KG_OK;
}

/* dq, dk and dv against every input and each other. */
static kg_status check_overlap(kg_context *ctx, const kg_tensor *const *t)
{
    for (int i = T_DQ; i <= T_DV; i++) {
        if (kg_numel(t[i]) == 0)
            continue;
        const kgi_range o = kgi_tensor_range(t[i]);
        for (int j = 0; j < T_COUNT; j++) {
            if (j == i || !t[j] || kg_numel(t[j]) == 0)
                continue;
            if (kgi_ranges_overlap(o, kgi_tensor_range(t[j])))
                return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: attention backward: %s overlaps %s",
                               names[i], names[j]);
        }
    }
    return KG_OK;
}

static void strides3(const kg_tensor *t, int64_t *sb, int64_t *sh, int64_t *ss)
{
    *sb = t->strides[0], *sh = t->strides[1], *ss = t->strides[2];
}

/* The dQ partial lanes of the fused path for a shape, a function of the
   shape alone (a shape always sums in the same order): the count c that
   minimizes a cost model of the kvq kernel (one block an SM, 132 SMs on the
   H200) plus the dQ sum,
     T(c) = ceil(B Hkv c / 132) / c + 0.3 B Hkv c / Sk   (times 1.05 if c > 1)
   in units of one kv head's work on one SM: the first term the waves of
   B Hkv c blocks, each 1/c of a head; the second the dqsum pass reading c
   partials (bytes over bandwidth against 2.5 x 4 Sk D FLOPs a query row at
   ~300 TFLOP/s); the factor the partials' read and write in every step (one
   lane on Hopper writes dq directly: 4-10% faster, H200 2026-12-01). c is at
   most 128, one per 128 keys, and the partials at most 2 GiB (yet at least
   one lane); the smallest c of the least cost. The earlier rule, min(16,
   floor(264 / (B Hkv))), left SMs idle where B Hkv < 17 (16 lanes: 16 blocks
   for one kv head, 0.15 of PyTorch in run r1's sweep) and made two waves of
   144 blocks for 9 heads. 0 when there is nothing to sum. */
#define LANE_SMS 132
#define LANE_MAX 128
#define PARTIAL_BUDGET ((uint64_t)1 << 31)
static int64_t dq_lanes(int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Sk, int64_t D)
{
    const uint64_t heads = (uint64_t)B * (uint64_t)Hkv, rows = (uint64_t)B * (uint64_t)Hq * (uint64_t)Sq;
    if (heads == 0 || rows == 0 || Sk == 0 || D == 0)
        return 0;
    int64_t cmax = (Sk + 127) / 128;
    if (cmax > LANE_MAX)
        cmax = LANE_MAX;
    const uint64_t one = rows * (uint64_t)D * 4;
    while (cmax > 1 && (uint64_t)cmax > PARTIAL_BUDGET / one)
        cmax--;
    int64_t best = 1;
    double best_t = 0;
    for (int64_t c = 1; c <= cmax; c++) {
        const uint64_t waves = (heads * (uint64_t)c + LANE_SMS - 1) / LANE_SMS;
        double t = (double)waves / (double)c + 0.3 * (double)heads * (double)c / (double)Sk;
        if (c > 1)
            t *= 1.05;
        if (c == 1 || t < best_t)
            best = c, best_t = t;
    }
    return best;
}

/* The rule before 2026-12-02 (KG_ATTNB_LANES=old, a benchmark hook):
   min(16, max(1, floor(264 / (B Hkv))), ceil(Sk / 64)), partials <= 2 GiB. */
static int64_t dq_lanes_old(int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Sk, int64_t D)
{
    const uint64_t heads = (uint64_t)B * (uint64_t)Hkv, rows = (uint64_t)B * (uint64_t)Hq * (uint64_t)Sq;
    if (heads == 0 || rows == 0 || Sk == 0 || D == 0)
        return 0;
    int64_t c = heads < 264 ? (int64_t)(264 / heads) : 1;
    if (c > 16)
        c = 16;
    if (c > (Sk + 63) / 64)
        c = (Sk + 63) / 64;
    const uint64_t one = rows * (uint64_t)D * 4;
    while (c > 1 && (uint64_t)c * one > PARTIAL_BUDGET)
        c--;
    return c;
}

/* delta and lse2 (8 bytes a row), then the partials 256-byte aligned */
static size_t rows_bytes(uint64_t rows) { return ((size_t)rows * 8 + 255) & ~(size_t)255; }

/* The scratch of a call with `lanes` partials; 0 where it overflows. */
static size_t scratch_for(int64_t B, int64_t Hq, int64_t Sq, int64_t D, int64_t nlanes)
{
    const uint64_t rows = (uint64_t)B * (uint64_t)Hq * (uint64_t)Sq; /* < 2^63 */
    const uint64_t avail = SIZE_MAX - KG_SCRATCH_COUNTER_BYTES - 255;
    if (rows > avail / 8)
        return 0;
    const uint64_t lanes = (uint64_t)nlanes;
    const uint64_t fixed = rows_bytes(rows);
    /* lanes * rows * D * 4 <= 2^31 when lanes > 1; one lane can be any size */
    if (lanes && rows > (avail - fixed) / ((uint64_t)D * 4) / lanes)
        return 0;
    return KG_SCRATCH_COUNTER_BYTES + fixed + (size_t)(lanes * rows * (uint64_t)D * 4);
}

size_t kg_attention_backward_scratch_bytes(int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Sk, int64_t D)
{
    if (B < 0 || Hq < 0 || Hkv < 0 || Sq < 0 || Sk < 0 || D < 0 || B > 65535 || Hq > 65535 || Hkv > 65535 ||
        Sq > INT32_MAX || Sk > INT32_MAX || D > 256)
        return 0;
    return scratch_for(B, Hq, Sq, D, dq_lanes(B, Hq, Hkv, Sq, Sk, D));
}

/* The lanes of a call: the rule's; KG_ATTNB_LANES (a test and benchmark
   hook) "<n>": n lanes (1 to 128, partials within 2 GiB unless n is 1),
   "old": the earlier rule. The scratch is sized for the count used. */
static int64_t call_lanes(int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Sk, int64_t D)
{
    const int64_t rule = dq_lanes(B, Hq, Hkv, Sq, Sk, D);
    const char *env = getenv("KG_ATTNB_LANES");
    if (!env || rule == 0)
        return rule;
    if (strcmp(env, "old") == 0)
        return dq_lanes_old(B, Hq, Hkv, Sq, Sk, D);
    const int64_t n = atoi(env);
    const uint64_t one = (uint64_t)B * (uint64_t)Hq * (uint64_t)Sq * (uint64_t)D * 4;
    if (n >= 1 && n <= LANE_MAX && (n == 1 || (uint64_t)n <= PARTIAL_BUDGET / one))
        return n;
    return rule;
}

/* The kvq kernel of a call: the Hopper one (tuning 0) on compute capability
   9.0 where generated, else the portable one (tuning 0; f32's FFMA one);
   NULL for the separate dq kernel. KG_ATTNB_TUNE, a tuning hook for benchmarks and
   tests, overrides it: "h<i>" Hopper tuning i (where it runs), "<i>"
   portable tuning i, "sep" the separate dq kernel, and a trailing 'r' or 'f'
   sets *mrev (the Hopper kernel's query tiles walked from the last one
   down, or up; the portable kernels always walk up); values that do not
   apply give the default. */
static const kg_attnb_launch *pick_kvq(const kg_context *ctx, const kg_attnb_entry *e, kg_attn_kind kind, int *mrev)
{
    if (e->ntunes == 0)
        return NULL;
    const int hopper = e->ntunes90 > 0 && ctx->cc_major == 9 && ctx->cc_minor == 0;
    const char *env = getenv("KG_ATTNB_TUNE");
    if (env && strcmp(env, "sep") == 0)
        return NULL;
    /* a trailing 'r' / 'f': the Hopper kernel's query walk reversed / forward */
    const size_t n = env ? strlen(env) : 0;
    if (n > 0 && (env[n - 1] == 'r' || env[n - 1] == 'f'))
        *mrev = env[n - 1] == 'r';
    if (env && env[0] == 'h' && env[1] >= '0' && env[1] <= '9' && hopper) {
        const int i = atoi(env + 1);
        if (i < e->ntunes90)
            return &e->kvq90[i][kind];
    }
    if (env && env[0] >= '0' && env[0] <= '9') {
        const int i = atoi(env);
        if (i < e->ntunes)
            return &e->kvq[i][kind];
    }
    return hopper ? &e->kvq90[0][kind] : &e->kvq[0][kind];
}

static kg_status launch(kg_context *ctx, const kg_attnb_launch *e, dim3 grid, kg_attnb_params *p)
{
    cudaKernel_t kern;
    kg_status st = kgi_kernel(ctx, e->kernel, &kern);
    if (st != KG_OK)
        return st;
    if (e->smem > 48 * 1024) {
        cudaError_t err =
            cudaKernelSetAttributeForDevice(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, e->smem, ctx->device);
        if (err != cudaSuccess) {
            cudaGetLastError();
            return kgi_cuda_fail(ctx, err, "raising the attention backward kernel's shared memory limit");
        }
    }
    void *argv[1] = {p};
    return kgi_launch(ctx, e->kernel, grid, (dim3){(unsigned)e->threads, 1, 1}, argv, (size_t)e->smem);
}

kg_status kg_attention_backward(kg_context *ctx, const kg_tensor *dq, const kg_tensor *dk, const kg_tensor *dv,
                                const kg_tensor *dout, const kg_tensor *q, const kg_tensor *k, const kg_tensor *v,
                                const kg_tensor *out, const kg_tensor *lse, const kg_tensor *mask,
                                const kg_attention_opts *opts)
{
    if (!ctx)
        return KG_ERR_INVALID_ARGUMENT;
    const kg_tensor *t[T_COUNT] = {dq, dk, dv, dout, q, k, v, out, lse, mask};
    kg_status st = KG_OK;
    for (int i = 0; st == KG_OK && i < T_COUNT; i++)
        if (i != T_MASK || mask)
            st = kgi_check_tensor(ctx, t[i], names[i]);
    if (st == KG_OK)
        st = check_dtypes(ctx, t);
    if (st == KG_OK)
        st = check_shapes(ctx, t);
    if (st != KG_OK)
        return st;
    const int64_t B = q->shape[0], Hq = q->shape[1], Sq = q->shape[2], D = q->shape[3];
    const int64_t Hkv = k->shape[1], Sk = k->shape[2];
    int slot = -1;
    for (int i = 0; i < KG_ATTNB_DIM_COUNT; i++)
        if (kg_attnb_dims[i] == D)
            slot = i;
    if (slot < 0)
        return kgi_fail(
            ctx, KG_ERR_INVALID_ARGUMENT,
            "invalid argument: attention backward: head dim %lld is not generated (generated: " KG_ATTNB_DIMS_TEXT ")",
            (long long)D);
    const float scale = opts && opts->scale != 0.f ? opts->scale : (float)(1.0 / sqrt((double)D));
    if (!isfinite(scale))
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: attention backward: scale %g is not finite",
                       (double)scale);
    if (Sq > INT32_MAX || Sk > INT32_MAX || B > 65535 || Hq > 65535)
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: attention backward: sizes out of range (Sq, Sk < 2^31; B, Hq <= 65535), got "
                       "B=%lld Hq=%lld Sq=%lld Sk=%lld",
                       (long long)B, (long long)Hq, (long long)Sq, (long long)Sk);
    for (int i = 0; st == KG_OK && i < T_LSE; i++)
        st = check_layout(ctx, t[i], names[i]);
    if (st == KG_OK)
        st = check_overlap(ctx, t);
    if (st == KG_OK)
        st = kgi_ready(ctx);
    if (st != KG_OK)
        return st;
    if (B * Hq * Sq == 0 && B * Hkv * Sk == 0)
        return kgi_ok(ctx);
    /* with no queries the kv kernel still runs: it writes dk = dv = 0 */
    const int64_t lanes = call_lanes(B, Hq, Hkv, Sq, Sk, D);
    const size_t bytes = scratch_for(B, Hq, Sq, D, lanes);
    if (bytes == 0) /* unreachable for tensors that passed kgi_check_tensor; kept as a guard */
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                        "invalid argument: attention backward: the scratch for B=%lld Hq=%lld Sq=%lld D=%lld overflows",
                        (long long)B, (long long)Hq, (long long)Sq, (long long)D);
    void *base = NULL;
    st = kgi_scratch(ctx, bytes, &base);
    if (st != KG_OK)
        return st;

    const kg_attn_kind kind = mask ? KG_ATTN_MASK : (opts && opts->causal) ? KG_ATTN_CAUSAL : KG_ATTN_NONE;
    const kg_attnb_entry *e = &kg_attnb_table[q->dtype][slot];

    kg_attnb_params p;
    memset(&p, 0, sizeof p);
    p.q = q->data, p.k = k->data, p.v = v->data, p.out = out->data, p.dout = dout->data;
    p.dq = dq->data, p.dk = dk->data, p.dv = dv->data;
    p.lse = (const float *)lse->data;
    p.rows = (float *)((char *)base + KG_SCRATCH_COUNTER_BYTES);
    p.dqp = (float *)((char *)base + KG_SCRATCH_COUNTER_BYTES + rows_bytes((uint64_t)(B * Hq * Sq)));
    strides3(q, &p.q_sb, &p.q_sh, &p.q_ss);
    strides3(k, &p.k_sb, &p.k_sh, &p.k_ss);
    strides3(v, &p.v_sb, &p.v_sh, &p.v_ss);
    strides3(out, &p.o_sb, &p.o_sh, &p.o_ss);
    strides3(dout, &p.do_sb, &p.do_sh, &p.do_ss);
    strides3(dq, &p.dq_sb, &p.dq_sh, &p.dq_ss);
    strides3(dk, &p.dk_sb, &p.dk_sh, &p.dk_ss);
    strides3(dv, &p.dv_sb, &p.dv_sh, &p.dv_ss);
    p.l_sb = lse->strides[0], p.l_sh = lse->strides[1], p.l_ss = lse->strides[2];
    if (mask) {
        /* right-aligned broadcast to [B, Hq, Sq, Sk]: broadcast dims read stride 0 */
        const int64_t mshape[4] = {B, Hq, Sq, Sk};
        int64_t ms[4];
        kgi_broadcast_strides(mask, 4, mshape, ms);
        p.mask = (const float *)mask->data;
        p.m_sb = ms[0], p.m_sh = ms[1], p.m_sq = ms[2], p.m_sk = ms[3];
    }
    p.nrows = B * Hq * Sq;
    p.hq = (int32_t)Hq, p.sq = (int32_t)Sq, p.sk = (int32_t)Sk;
    p.group = Hkv ? (int32_t)(Hq / Hkv) : 1;
    p.causal = opts && opts->causal;
    p.kind = (int32_t)kind;
    p.scale = scale;
    p.scale_log2 = scale * 1.4426950408889634f;

    if (p.nrows > 0) {
        int64_t blocks = (p.nrows + e->pre.rows - 1) / e->pre.rows;
        if (blocks > 65536)
            blocks = 65536; /* grid-stride over the rest */
        st = launch(ctx, &e->pre, (dim3){(unsigned)blocks, 1, 1}, &p);
        if (st != KG_OK)
            return st;
    }
    p.mrev = 0;
    const kg_attnb_launch *kvq = pick_kvq(ctx, e, kind, &p.mrev);
    if (kvq) {
        /* fused: kvq writes dk, dv and the dQ partials, dqsum adds them up */
        p.kv_bn = kvq->rows, p.kv_bm = kvq->tile;
        p.nkb = (int32_t)((Sk + kvq->rows - 1) / kvq->rows);
        p.lanes = (int32_t)(lanes < p.nkb ? lanes : p.nkb);
        /* Hopper kvq with one lane that reaches every query row (not: causal
           with Sq - Sk >= a query tile, whose first rows see no key): kvq
           writes dq itself at each row's last key block (the bits dqsum would
           write), no dqsum; KG_ATTNB_DIRECT=0 (a benchmark hook) turns it off */
        const kg_attnb_launch *k90 = &e->kvq90[0][0];
        const int hopper_kvq = kvq >= k90 && kvq < k90 + KG_ATTNB_MAX_TUNES90 * KG_ATTN_KIND_COUNT;
        const char *denv = getenv("KG_ATTNB_DIRECT");
        const int causal = kind == KG_ATTN_CAUSAL || (kind == KG_ATTN_MASK && p.causal);
        p.direct = hopper_kvq && p.lanes == 1 && p.nkb > 0 && !(causal && Sq - Sk >= kvq->tile) &&
                   !(denv && strcmp(denv, "0") == 0);
        if (B * Hkv * Sk > 0) {
            /* a lane for every key block when there are no queries (dk = dv = 0) */
            const unsigned gx = (unsigned)(p.lanes > 0 ? p.lanes : p.nkb);
            if (p.lanes == 0)
                p.lanes = p.nkb;
            st = launch(ctx, kvq, (dim3){gx, (unsigned)Hkv, (unsigned)B}, &p);
            if (st != KG_OK)
                return st;
        }
        if (p.nrows > 0 && !p.direct) {
            int64_t blocks = (p.nrows * (D / 4) + e->dqsum.threads - 1) / e->dqsum.threads;
            if (blocks > 65536)
                blocks = 65536; /* grid-stride over the rest */
            st = launch(ctx, &e->dqsum, (dim3){(unsigned)blocks, 1, 1}, &p);
            if (st != KG_OK)
                return st;
        }
        return kgi_ok(ctx);
    }
    if (B * Hkv * Sk > 0) {
        const kg_attnb_launch *kv = &e->kv[kind];
        st = launch(ctx, kv, (dim3){(unsigned)((Sk + kv->rows - 1) / kv->rows), (unsigned)Hkv, (unsigned)B}, &p);
        if (st != KG_OK)
            return st;
    }
    if (p.nrows > 0) {
        const kg_attnb_launch *ql = &e->q[kind];
        st = launch(ctx, ql, (dim3){(unsigned)((Sq + ql->rows - 1) / ql->rows), (unsigned)Hq, (unsigned)B}, &p);
        if (st != KG_OK)
            return st;
    }
    return kgi_ok(ctx);
}
