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
 *          f32: split TF32 on mma.sync, FFMA at D 256 and where that
 *          kernel's shared memory does not fit);
 *   dqsum  dq = scale * the partials added up in lane order (skipped where
 *          the Hopper kvq has one lane reaching every row: it writes dq);
 *   dkvsum with query splits (few (batch, kv head) pairs: grid x = lanes x
 *          splits, see kgi_attnb_split): dk, dv = the splits' f32 partials
 *          added up in split order;
 * the separate dq pass (KG_ATTNB_TUNE=sep; f16 / bf16 D 256's default):
 *   kv     dk and dv, grid (key blocks, Hkv, B) (on compute capability 9.0
 *          at f16 / bf16 D 256 the Hopper dK / dV kernel, table path 4);
 *   q      dq, grid (query blocks, Hq, B), recomputing the scores (on
 *          compute capability 9.0 at f16 / bf16 D 256 the Hopper dQ
 *          kernel attnb_q_wg, the entry's defq90; KG_ATTNB_TUNE=sep keeps
 *          the portable one).
 * No atomics; the lane count is a function of the shape: the same call
 * gives the same bits.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_bwd_params.h"
#include "attention_check.h"
#include "attention_bwd_plan.h"
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
    kg_status st;
    if ((st = kgi_attn_check_lse(ctx, "attention backward", t[T_LSE], q)) != KG_OK)
        return st;
    if (t[T_MASK] && (st = kgi_attn_check_mask(ctx, "attention backward", t[T_MASK], q, k)) != KG_OK)
        return st;
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
    if (!kgi_aligned(t->data, 16)) /* empty or not (kgi_check_aligned passes an empty one) */
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                        "invalid argument: attention backward: %s's data %p is not 16-byte aligned", name, t->data);
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
        for (int j = 0; j < T_COUNT; j++) {
            if (j == i || !t[j] || kg_numel(t[j]) == 0)
                continue;
            const kg_status st = kgi_check_disjoint(ctx, "attention backward", t[i], names[i], t[j], names[j]);
            if (st != KG_OK)
                return st;
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

/*
 * Query splits (every kvq kernel: f32, mma.sync and Hopper's wgmma):
 * with few (batch, kv head) pairs the kvq grid has few blocks (one per lane
 * and kv head), and under the causal rule the lane holding key block 0
 * walks every query tile of the group while the last walks one; that block
 * sets the time (run r3's sweep: f32 B1 Hq4 Hkv1 S6240 D64 causal, 49
 * blocks on 132 SMs, 0.25 of PyTorch). Splitting every key block's queries
 * into sh parts of the group's heads times st parts of the query tiles
 * gives lanes * sh * st blocks per kv head, each writing its own f32 dK / dV
 * partial (summed in split order by dkvsum: deterministic).
 *
 * The count: the (sh, st) of least modelled time. A block's time is the sum
 * over its lane's key blocks of its steps (one BM-query tile of one head:
 * 10 bn bm D FLOPs at ~0.24 (FFMA), ~0.31 (f32 in split TF32: 40-42
 * TFLOP/s on 132 SMs, run r1 of 2026-12-02), ~1.5 (mma.sync) or ~1.75
 * (wgmma) TFLOP/s an SM: the kvq launch's path, generated with it) plus 2 us a key block (K, V in, dK, dV out); blocks go to
 * the SMs in launch order, each to the one that frees first (one block an
 * SM); the splits add dkvsum (reading the partials at ~3 TB/s, plus 4 us).
 * Counts are tried from the fewest splits up, and more must win by 3%.
 * Splits are considered only where the kvq grid is under one wave (B Hkv
 * lanes < nsm), up to `waves` waves of blocks (8; wgmma 4), and within the split
 * budget below. H200, 2026-12-02 (run of 02:58 UTC), measured against the
 * model: f32 B1 Hq4 Hkv1 S6240 D64 causal 1x1 / 1x2 / 1x4 / 2x2 / 4x4 8381 /
 * 4277 / 2241 / 2198 / 1999 us, modelled 8565 / 4290 / 2197 / 2155 / 1940;
 * bf16 (wgmma) B1 Hq8 Hkv1 S8192 D64 causal 1x2 / 1x4 / 2x4 / 4x4 1397 /
 * 1005 / 894 / 873 us against 1176 / 780 / 678 / 653 at 2.3 TFLOP/s an SM
 * (hence 1.75); the earlier cap of 4 waves excluded 4x4, the best of both.
 * With 8 waves (run of 03:23 UTC, same run against 4): f32 B1 Hq4 Hkv1
 * S6240 D64 causal 25.3 against 22.3 TFLOP/s, f32 B2 Hq2 Hkv1 S6720 D64
 * causal 25.0 / 24.3, f32 B5 H1 S1952 D256 23.4 / 22.3, f32 B1 H1 S8192
 * D128 causal 26.4 / 25.5, f16 (mma.sync) B2 Hq4 Hkv1 S6000 D96 causal
 * 134.0 / 119.4, but wgmma's bf16 B1 Hq8 Hkv1 S8192 D64 causal 186.6 (1x16)
 * / 193.5 (2x4): wgmma keeps 4.
 */
#define SPLIT_ELIGIBLE 1024                   /* B Hkv ceil(Sk / 64) at most */
#define SPLIT_BUDGET ((uint64_t)256 << 20)    /* bytes of dK / dV partials at most */

int kgi_attnb_split_max(int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Sk, int64_t D)
{
    if (B <= 0 || Hq <= 0 || Hkv <= 0 || Sq <= 0 || Sk <= 0 || D <= 0 || B > 65535 || Hkv > 65535 ||
        Sk > INT32_MAX)
        return 0;
    const uint64_t heads = (uint64_t)B * (uint64_t)Hkv;
    if (heads * (uint64_t)((Sk + 63) / 64) > SPLIT_ELIGIBLE)
        return 0;
    const uint64_t one = 2 * heads * (uint64_t)Sk * (uint64_t)D * 4; /* < 2^46 */
    int s = KGI_ATTNB_SPLIT_MAX;
    while (s > 1 && (uint64_t)s * one > SPLIT_BUDGET)
        s--;
    return s >= 2 ? s : 0;
}

/* the work of block (c, s) in seconds (see above) */
static double split_block_time(int64_t Sq, int64_t Sk, int causal, int bn, int bm, int64_t lanes, int64_t nkb,
                               int64_t c, int64_t nh, int64_t tlo, int64_t thi, double step)
{
    double t = 0;
    for (int64_t j = 0;; j++) {
        const int64_t kb = j * lanes + ((j & 1) ? lanes - 1 - c : c); /* lane_block */
        if (kb >= nkb)
            break;
        int64_t t0 = 0;
        if (causal) {
            const int64_t n0 = kb * bn, off = n0 - (Sk - Sq);
            t0 = off > 0 ? off / bm : 0;
        }
        const int64_t lo = t0 > tlo ? t0 : tlo, tiles = thi > lo ? thi - lo : 0;
        t += (double)(nh * tiles) * step + 2e-6;
    }
    return t;
}

/* a binary min-heap of the SMs' finish times */
static void heap_down(double *h, int n, int i)
{
    for (;;) {
        int m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && h[l] < h[m])
            m = l;
        if (r < n && h[r] < h[m])
            m = r;
        if (m == i)
            return;
        const double x = h[i];
        h[i] = h[m], h[m] = x, i = m;
    }
}

#define SPLIT_SM_MAX 1024
void kgi_attnb_split_model(int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Sk, int64_t D, int causal, int bn,
                           int bm, int64_t lanes, int nsm, int path, int waves, int *sh, int *st)
{
    *sh = 1, *st = 1;
    const int smax = kgi_attnb_split_max(B, Hq, Hkv, Sq, Sk, D);
    if (smax < 2 || bn <= 0 || bm <= 0 || lanes <= 0 || nsm <= 0 || nsm > SPLIT_SM_MAX || waves < 1 || Hq % Hkv)
        return;
    const int64_t heads = B * Hkv, G = Hq / Hkv, nkb = (Sk + bn - 1) / bn, T = (Sq + bm - 1) / bm;
    if (heads * lanes >= nsm || lanes > nkb)
        return;
    const double step = 10.0 * bn * bm * (double)D /
                        (path == 1 ? 0.24e12 : path == 2 ? 1.75e12 : path == 3 ? 0.31e12 : 1.5e12);
    static const int counts[] = {1, 2, 3, 4, 6, 8, 12, 16};
    double best = 0, heap[SPLIT_SM_MAX], work[KGI_ATTNB_SPLIT_MAX * 128];
    /* fewer splits first: more must win by 3% */
    for (size_t a = 0; a < sizeof counts / sizeof counts[0]; a++)
        for (int h = 1; h <= counts[a]; h++) {
            const int S = counts[a], t = S / h;
            if (S % h || (S > 1 && (h > G || t > T || S > smax || heads * lanes * S > (int64_t)waves * nsm)))
                continue;
            if (lanes * S > (int64_t)(sizeof work / sizeof work[0]))
                continue;
            /* every block's time, in launch order (x = c + lanes s) */
            for (int s = 0; s < S; s++) {
                const int hs = s / t, ts = s % t;
                const int64_t nh = (hs + 1) * G / h - hs * G / h, tlo = ts * T / t, thi = (ts + 1) * T / t;
                for (int64_t c = 0; c < lanes; c++)
                    work[s * lanes + c] = split_block_time(Sq, Sk, causal, bn, bm, lanes, nkb, c, nh, tlo, thi, step);
            }
            /* list scheduling on nsm SMs */
            for (int i = 0; i < nsm; i++)
                heap[i] = 0;
            double span = 0;
            for (int64_t r = 0; r < heads; r++)
                for (int64_t x = 0; x < lanes * S; x++) {
                    heap[0] += work[x];
                    if (heap[0] > span)
                        span = heap[0];
                    heap_down(heap, nsm, 0);
                }
            if (S > 1)
                span += (double)(2 * S) * (double)(heads * Sk) * (double)D * 4 / 3e12 + 4e-6;
            if (S == 1 || span < best * 0.97)
                best = span, *sh = h, *st = t;
        }
}

/* kgi_attnb_split_model through a cache of its answers keyed by every
   argument (the model walks every block of every candidate: 70-144 us of
   host time a call measured on 2026-12-02, where a bare launch takes 3.3):
   SPLIT_CACHE slots, direct-mapped on a hash of the key, behind a mutex
   (the model itself runs outside it); a miss replaces the slot. The
   answers are the model's, whatever the order of the calls. */
#define SPLIT_CACHE 64
typedef struct {
    int64_t key[13];
    int sh, st, used;
} split_memo;
static split_memo split_cache[SPLIT_CACHE];
static pthread_mutex_t split_lock = PTHREAD_MUTEX_INITIALIZER;

void kgi_attnb_split(int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Sk, int64_t D, int causal, int bn, int bm,
                     int64_t lanes, int nsm, int path, int waves, int *sh, int *st)
{
    const int64_t key[13] = {B, Hq, Hkv, Sq, Sk, D, causal, bn, bm, lanes, nsm, path, waves};
    uint64_t hash = 1469598103934665603ull; /* FNV-1a over the key's words */
    for (int i = 0; i < 13; i++)
        hash = (hash ^ (uint64_t)key[i]) * 1099511628211ull;
    split_memo *m = &split_cache[(hash ^ (hash >> 32)) % SPLIT_CACHE];
    pthread_mutex_lock(&split_lock);
    if (m->used && memcmp(m->key, key, sizeof key) == 0) {
        *sh = m->sh, *st = m->st;
        pthread_mutex_unlock(&split_lock);
        return;
    }
    pthread_mutex_unlock(&split_lock);
    kgi_attnb_split_model(B, Hq, Hkv, Sq, Sk, D, causal, bn, bm, lanes, nsm, path, waves, sh, st);
    pthread_mutex_lock(&split_lock);
    memcpy(m->key, key, sizeof key);
    m->sh = *sh, m->st = *st, m->used = 1;
    pthread_mutex_unlock(&split_lock);
}

/* The benchmark and test hooks (KG_ATTNB_LANES, _SPLIT, _SPLIT_WAVES, _TUNE,
   _DIRECT): read from the environment once, at the first call, not on
   every call (getenv walks the environment); kgi_attnb_hooks_reload reads
   them again (the tests, after setenv). Copied under a lock. */
enum { HOOK_LANES, HOOK_SPLIT, HOOK_WAVES, HOOK_TUNE, HOOK_DIRECT, HOOK_COUNT };
typedef struct {
    char v[HOOK_COUNT][32]; /* "" where unset; longer values are cut (no hook takes one) */
    int set[HOOK_COUNT];
} attnb_hooks;
static const char *const hook_names[HOOK_COUNT] = {"KG_ATTNB_LANES", "KG_ATTNB_SPLIT", "KG_ATTNB_SPLIT_WAVES",
                                                   "KG_ATTNB_TUNE", "KG_ATTNB_DIRECT"};
static attnb_hooks hooks_now;
static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

void kgi_attnb_hooks_reload(void)
{
    attnb_hooks h;
    memset(&h, 0, sizeof h);
    for (int i = 0; i < HOOK_COUNT; i++) {
        const char *e = getenv(hook_names[i]);
        if (e) {
            h.set[i] = 1;
            snprintf(h.v[i], sizeof h.v[i], "%s", e);
        }
    }
    pthread_mutex_lock(&hooks_lock);
    hooks_now = h;
    pthread_mutex_unlock(&hooks_lock);
}

static void hooks_first(void) { kgi_attnb_hooks_reload(); }

static void read_hooks(attnb_hooks *h)
{
    pthread_once(&hooks_once, hooks_first);
    pthread_mutex_lock(&hooks_lock);
    *h = hooks_now;
    pthread_mutex_unlock(&hooks_lock);
}

static const char *hook(const attnb_hooks *h, int i) { return h->set[i] ? h->v[i] : NULL; }

/* delta and lse2 (8 bytes a row), then the partials 256-byte aligned */
static size_t rows_bytes(uint64_t rows) { return ((size_t)rows * 8 + 255) & ~(size_t)255; }

/* The scratch of a call with `lanes` dQ partials and `splits` dK / dV
   partials (kgi_attnb_split_max bounds them: at most 256 MiB); 0 where it
   overflows. */
static size_t scratch_for(int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Sk, int64_t D, int64_t nlanes,
                          int splits)
{
    const uint64_t rows = (uint64_t)B * (uint64_t)Hq * (uint64_t)Sq; /* < 2^63 */
    const uint64_t avail = SIZE_MAX - KG_SCRATCH_COUNTER_BYTES - 255 - SPLIT_BUDGET - 255;
    if (rows > avail / 8)
        return 0;
    const uint64_t lanes = (uint64_t)nlanes;
    const uint64_t fixed = rows_bytes(rows);
    /* lanes * rows * D * 4 <= 2^31 when lanes > 1; one lane can be any size */
    if (lanes && rows > (avail - fixed) / ((uint64_t)D * 4) / lanes)
        return 0;
    const size_t dkv = splits > 1 ? (size_t)(2 * (uint64_t)splits * (uint64_t)B * (uint64_t)Hkv * (uint64_t)Sk *
                                            (uint64_t)D * 4)
                                  : 0;
    /* the dK / dV partials follow the dQ ones (whose bytes are a multiple of 128) */
    return KG_SCRATCH_COUNTER_BYTES + fixed + (size_t)(lanes * rows * (uint64_t)D * 4) + dkv;
}

size_t kg_attention_backward_scratch_bytes(int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Sk, int64_t D)
{
    if (B < 0 || Hq < 0 || Hkv < 0 || Sq < 0 || Sk < 0 || D < 0 || B > 65535 || Hq > 65535 || Hkv > 65535 ||
        Sq > INT32_MAX || Sk > INT32_MAX || D > 256)
        return 0;
    /* shapes every call refuses (check_shapes, the head dims generated) */
    if (Hkv == 0 ? Hq != 0 : Hq % Hkv != 0)
        return 0;
    int generated = 0;
    for (int i = 0; i < KG_ATTNB_DIM_COUNT; i++)
        generated |= kg_attnb_dims[i] == D;
    if (!generated)
        return 0;
    return scratch_for(B, Hq, Hkv, Sq, Sk, D, dq_lanes(B, Hq, Hkv, Sq, Sk, D), kgi_attnb_split_max(B, Hq, Hkv, Sq, Sk, D));
}

/* The lanes of a call: the rule's; KG_ATTNB_LANES (a test and benchmark
   hook) "<n>": n lanes (1 to 128, partials within 2 GiB unless n is 1),
   "old": the earlier rule. The scratch is sized for the count used. */
static int64_t call_lanes(const attnb_hooks *hk, int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Sk, int64_t D)
{
    const int64_t rule = dq_lanes(B, Hq, Hkv, Sq, Sk, D);
    const char *env = hook(hk, HOOK_LANES);
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

/* The query splits of a call to a portable kvq kernel: the rule's
   (kgi_attnb_split, with the lanes the kernel gets); KG_ATTNB_SPLIT (a test
   and benchmark hook) "<h>x<t>": h parts of the group's heads times t of the
   query tiles, where h <= Hq / Hkv, t <= the query tiles and h t <=
   kgi_attnb_split_max (or 1x1); other values give the rule's. */
static void call_splits(const kg_context *ctx, const attnb_hooks *hk, int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq,
                        int64_t Sk, int64_t D, int causal, const kg_attnb_launch *kvq, int64_t lanes, int path, int *sh,
                        int *st)
{
    const int64_t nkb = (Sk + kvq->rows - 1) / kvq->rows, l = lanes < nkb ? lanes : nkb;
    /* the cap on the blocks, in waves: 8, 4 on the wgmma kernel (H200, run
       of 03:23 UTC, same run: bf16 B1 Hq8 Hkv1 S8192 D64 causal 193.5
       TFLOP/s at 4 waves (2x4) against 186.6 at 8 (1x16); f32 and mma.sync
       gained 3-13% from 8). KG_ATTNB_SPLIT_WAVES (a benchmark hook) sets it. */
    const char *wenv = hook(hk, HOOK_WAVES);
    const int waves = wenv && atoi(wenv) >= 1 && atoi(wenv) <= 64 ? atoi(wenv) : path == 2 ? 4 : 8;
    kgi_attnb_split(B, Hq, Hkv, Sq, Sk, D, causal, kvq->rows, kvq->tile, l, ctx->sm_count, path, waves, sh, st);
    const char *env = hook(hk, HOOK_SPLIT);
    int h = 0, t = 0;
    if (env && sscanf(env, "%dx%d", &h, &t) == 2 && h >= 1 && t >= 1 && Hkv > 0 && kvq->tile > 0) {
        const int64_t G = Hq / Hkv, T = (Sq + kvq->tile - 1) / kvq->tile;
        if (h * t == 1 || (h <= G && t <= T && h * t <= kgi_attnb_split_max(B, Hq, Hkv, Sq, Sk, D)))
            *sh = h, *st = t;
    }
}

int kgi_attnb_fit(int dtype, int slot, int kind, int want, int limit, int *need)
{
    const kg_attnb_entry *e = &kg_attnb_table[dtype][slot];
    int least = 0;
#define KGI_NEED(x) (least = least == 0 || (x) < least ? (x) : least)
    if (want >= 0 && want < e->ntunes && (limit <= 0 || e->kvq[want][kind].smem <= limit))
        return want;
    for (int i = 0; i < e->ntunes; i++) {
        if (limit <= 0 || e->kvq[i][kind].smem <= limit)
            return i;
        KGI_NEED(e->kvq[i][kind].smem);
    }
    const int sep = e->kv[kind].smem > e->q[kind].smem ? e->kv[kind].smem : e->q[kind].smem;
    if (limit <= 0 || sep <= limit)
        return -1;
    KGI_NEED(sep);
#undef KGI_NEED
    *need = least;
    return -2;
}

/* The shared memory a block may opt in to on the context's device (0:
   unknown, no check). */
static int smem_limit(const kg_context *ctx)
{
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx->device) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return v;
}

/* The kvq kernel of a call: the Hopper one (tuning 0) on compute capability
   9.0 where generated as the default (the entry's def90; at D 256 a dK / dV
   kernel, path 4, that the caller runs as the separate pass's kv kernel;
   head dims whose Hopper tunings are candidates run them only where
   KG_ATTNB_TUNE names one), else the portable one (the entry's kvq_default);
   NULL for the separate dq kernel. KG_ATTNB_TUNE, a tuning hook for benchmarks and
   tests, overrides it: "h<i>" Hopper tuning i (where it runs), "<i>"
   portable tuning i, "sep" the separate dq kernels (portable kv and q),
   "hq" the default kernels with the Hopper dQ kernel of the separate pass
   where generated (the caller picks it), and a trailing 'r' or 'f'
   sets *mrev (the Hopper kernel's query tiles walked from the last one
   down, or up; the portable kernels always walk up); values that do not
   apply give the default. */
static kg_status pick_kvq(kg_context *ctx, const attnb_hooks *hk, const kg_attnb_entry *e, kg_dtype dt, int slot,
                          kg_attn_kind kind, int *mrev, const kg_attnb_launch **out)
{
    *out = NULL;
    const int hopper = e->ntunes90 > 0 && ctx->cc_major == 9 && ctx->cc_minor == 0;
    const char *env = hook(hk, HOOK_TUNE);
    /* a trailing 'r' / 'f': the Hopper kernel's query walk reversed / forward */
    const size_t n = env ? strlen(env) : 0;
    if (n > 0 && (env[n - 1] == 'r' || env[n - 1] == 'f'))
        *mrev = env[n - 1] == 'r';
    int want = e->kvq_default, forced = 0; /* a portable tuning, or -1: the separate kernels */
    /* "h<i>" first: a head dim without portable kvq tunings (D 256: the
       separate kernels by default) may still have Hopper ones */
    if (env && env[0] == 'h' && env[1] >= '0' && env[1] <= '9' && hopper) {
        const int i = atoi(env + 1);
        if (i < e->ntunes90) {
            *out = &e->kvq90[i][kind];
            return KG_OK;
        }
    }
    if (e->ntunes == 0 || (env && strcmp(env, "sep") == 0))
        want = -1;
    else if (env && env[0] >= '0' && env[0] <= '9') {
        const int i = atoi(env);
        if (i < e->ntunes)
            want = i, forced = 1;
    }
    /* (not "want >= 0": D 256 has no portable kvq, its Hopper default is the
       separate pass's kv kernel, path 4; "sep" and a forced "<i>" keep their
       meaning) */
    if (hopper && e->def90 && !forced && !(env && strcmp(env, "sep") == 0)) {
        *out = &e->kvq90[0][kind];
        return KG_OK;
    }
    /* the portable kernels: the first that fits the device's shared memory
       (compute capability 8.0: 163 KiB a block, less than f32 D 64, 128 and
       256's default kvq kernels take) */
    const int limit = smem_limit(ctx);
    int need = 0;
    int pick = want >= 0 ? kgi_attnb_fit(dt, slot, kind, want, limit, &need) : -1;
    if (want < 0 && limit > 0 && (e->kv[kind].smem > limit || e->q[kind].smem > limit))
        pick = kgi_attnb_fit(dt, slot, kind, -1, limit, &need);
    if (pick == -2)
        return kgi_fail(ctx, KG_ERR_NO_KERNEL_IMAGE,
                        "no kernel image for this GPU's architecture: attention backward %s D=%d: the smallest kernel "
                        "needs %d bytes of shared memory a block, the device allows %d",
                        kg_dtype_name(dt), kg_attnb_dims[slot], need, limit);
    if (pick >= 0)
        *out = &e->kvq[pick][kind];
    return KG_OK;
}

/* kgi_attnb_last_kv_kernel's value (a test hook; atomic: calls from several
   threads leave one of their kernels) */
static int last_kv_kernel = -1;

int kgi_attnb_last_kv_kernel(void) { return __atomic_load_n(&last_kv_kernel, __ATOMIC_RELAXED); }

/* kgi_attnb_last_q_kernel's value (likewise) */
static int last_q_kernel = -1;

int kgi_attnb_last_q_kernel(void) { return __atomic_load_n(&last_q_kernel, __ATOMIC_RELAXED); }

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
    attnb_hooks hk;
    read_hooks(&hk);
    const int64_t lanes = call_lanes(&hk, B, Hq, Hkv, Sq, Sk, D);
    const kg_attn_kind kind = mask ? KG_ATTN_MASK : (opts && opts->causal) ? KG_ATTN_CAUSAL : KG_ATTN_NONE;
    const kg_attnb_entry *e = &kg_attnb_table[q->dtype][slot];
    int mrev = 0;
    const kg_attnb_launch *kvq = NULL;
    st = pick_kvq(ctx, &hk, e, q->dtype, slot, kind, &mrev, &kvq);
    if (st != KG_OK)
        return st;
    /* a Hopper tuning of dK / dV alone (path 4; forced only): the separate
       dq pass with it as the kv kernel */
    const kg_attnb_launch *kv90 = NULL;
    if (kvq && kvq->path == 4)
        kv90 = kvq, kvq = NULL;
    const kg_attnb_launch *k90 = &e->kvq90[0][0];
    const int hopper_kvq = kvq && kvq >= k90 && kvq < k90 + KG_ATTNB_MAX_TUNES90 * KG_ATTN_KIND_COUNT;
    const int causal = kind == KG_ATTN_CAUSAL || (kind == KG_ATTN_MASK && opts && opts->causal);
    int split_h = 1, split_t = 1;
    if (kvq && e->dkvsum.threads > 0)
        call_splits(ctx, &hk, B, Hq, Hkv, Sq, Sk, D, causal, kvq, lanes, kvq->path, &split_h, &split_t);
    const int splits = split_h * split_t;
    const size_t bytes = scratch_for(B, Hq, Hkv, Sq, Sk, D, lanes, splits);
    if (bytes == 0) /* unreachable for tensors that passed kgi_check_tensor; kept as a guard */
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                        "invalid argument: attention backward: the scratch for B=%lld Hq=%lld Sq=%lld D=%lld overflows",
                        (long long)B, (long long)Hq, (long long)Sq, (long long)D);
    void *base = NULL;
    st = kgi_scratch(ctx, bytes, &base);
    if (st != KG_OK)
        return st;

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
    p.splits = splits, p.split_h = split_h, p.split_t = split_t;
    p.hkv = (int32_t)Hkv;
    p.nkrows = B * Hkv * Sk;
    p.dkvp = p.dqp + lanes * p.nrows * D;

    if (p.nrows > 0) {
        int64_t blocks = (p.nrows + e->pre.rows - 1) / e->pre.rows;
        if (blocks > 65536)
            blocks = 65536; /* grid-stride over the rest */
        st = launch(ctx, &e->pre, (dim3){(unsigned)blocks, 1, 1}, &p);
        if (st != KG_OK)
            return st;
    }
    p.mrev = mrev;
    __atomic_store_n(&last_q_kernel, -1, __ATOMIC_RELAXED);
    if (kvq) {
        /* fused: kvq writes dk, dv and the dQ partials, dqsum adds them up */
        p.kv_bn = kvq->rows, p.kv_bm = kvq->tile;
        p.nkb = (int32_t)((Sk + kvq->rows - 1) / kvq->rows);
        p.lanes = (int32_t)(lanes < p.nkb ? lanes : p.nkb);
        /* Hopper kvq with one lane that reaches every query row (not: causal
           with Sq - Sk >= a query tile, whose first rows see no key): kvq
           writes dq itself at each row's last key block (the bits dqsum would
           write), no dqsum; KG_ATTNB_DIRECT=0 (a benchmark hook) turns it off */
        const char *denv = hook(&hk, HOOK_DIRECT);
        p.direct = hopper_kvq && p.lanes == 1 && splits == 1 && p.nkb > 0 && !(causal && Sq - Sk >= kvq->tile) &&
                   !(denv && strcmp(denv, "0") == 0);
        if (B * Hkv * Sk > 0) {
            /* a lane for every key block when there are no queries (dk = dv = 0) */
            if (p.lanes == 0)
                p.lanes = p.nkb;
            const unsigned gx = (unsigned)p.lanes * (unsigned)splits; /* <= 128 x 16 */
            /* the Hopper kernels have an instance for splits */
            const kg_attnb_launch *run = hopper_kvq && splits > 1 ? &e->kvq90s[0][0] + (kvq - k90) : kvq;
            __atomic_store_n(&last_kv_kernel, run->kernel, __ATOMIC_RELAXED);
            st = launch(ctx, run, (dim3){gx, (unsigned)Hkv, (unsigned)B}, &p);
            if (st != KG_OK)
                return st;
            if (splits > 1) {
                int64_t blocks = (2 * p.nkrows * (D / 4) + e->dkvsum.threads - 1) / e->dkvsum.threads;
                if (blocks > 65536)
                    blocks = 65536; /* grid-stride over the rest */
                st = launch(ctx, &e->dkvsum, (dim3){(unsigned)blocks, 1, 1}, &p);
                if (st != KG_OK)
                    return st;
            }
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
        const kg_attnb_launch *kv = kv90 ? kv90 : &e->kv[kind];
        __atomic_store_n(&last_kv_kernel, kv->kernel, __ATOMIC_RELAXED);
        st = launch(ctx, kv, (dim3){(unsigned)((Sk + kv->rows - 1) / kv->rows), (unsigned)Hkv, (unsigned)B}, &p);
        if (st != KG_OK)
            return st;
    }
    if (p.nrows > 0) {
        const kg_attnb_launch *ql = &e->q[kind];
        /* the Hopper dQ kernel (attnb_q_wg) on compute capability 9.0 where
           generated as the default (defq90; KG_ATTNB_TUNE=sep keeps the
           portable one) or forced (KG_ATTNB_TUNE=hq) */
        const char *env = hook(&hk, HOOK_TUNE);
        const int sep = env && strcmp(env, "sep") == 0, forced = env && (!strcmp(env, "hq") || !strcmp(env, "hq0"));
        if (e->nq90 > 0 && ctx->cc_major == 9 && ctx->cc_minor == 0 && (forced || (e->defq90 && !sep)))
            ql = &e->q90[0][kind];
        __atomic_store_n(&last_q_kernel, ql->kernel, __ATOMIC_RELAXED);
        st = launch(ctx, ql, (dim3){(unsigned)((Sq + ql->rows - 1) / ql->rows), (unsigned)Hq, (unsigned)B}, &p);
        if (st != KG_OK)
            return st;
    }
    return kgi_ok(ctx);
}
