/*
 * test_attention_decode.c - the decode path's multicast kernels
 * (kg_attn_dec_mc, kg_test_attn_dec_mc: the two 16-row tiles of a split as
 * one cluster of 2 blocks sharing each K / V tile through multicast bulk
 * copies; forced-only). Each case runs the 16-row decode variant without
 * the hook and with it (each refill: waiting for both blocks' word, and
 * deferred, KG_DEC_MC_DEFER), and asks for the same bits (output and lse)
 * and, for the last multicast run, agreement with a float64 reference (the tolerance
 * policy of test_attention.c: twice the error of a low-precision emulation,
 * plus atol). On a device where the kernels cannot run (not compute
 * capability 9.0, no bulk tensor copies) the hook is not taken and the
 * cases still check the default path.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn_plan.h"
#include "internal.h"
#include "kg_attn_table.h"
#include "kg_attention.h"
#include "kg_test.h"

static kg_context *ctx;
static uint64_t rng;

static void setup(void)
{
    ctx = kt_open_gpu();
    rng = kt_seed();
}

static void teardown(void)
{
    kg_test_attn_dec_mc(0);
    if (!ctx)
        return;
    kg_test_force_attn_variant(ctx, -1);
    kg_test_force_attn_splits(ctx, 0);
    kg_test_force_attn_combine(ctx, 0);
    kg_close(ctx);
}

TestSuite(attention_decode_mc, .init = setup, .fini = teardown);

/* A case: q [B,Hq,Sq,D], k and v [B,Hkv,Sk,D] of dt; mask 0 none, 1 a
   [B,Hq,Sq,Sk] additive mask (20% -inf, the rest uniform(-2, 2); heads
   h % 5 == 1 entirely -inf); splits / merge: the forced split count and
   merge (0: the planner's). */
typedef struct {
    kg_dtype dt;
    int B, Hq, Hkv, Sq, Sk, D, causal, mask, splits, merge;
} mcase;

typedef struct {
    void *q, *k, *v, *m, *o;
    float *l;
    void *dq, *dk, *dv, *dm, *dout, *dl;
    int64_t nq, nk, nl, nm;
} mbufs;

/* The case's sizes and device buffers (the mask's: one float without a
   mask). */
static void mbufs_open(const mcase *c, mbufs *x)
{
    const size_t es = kg_dtype_size(c->dt);
    x->nq = (int64_t)c->B * c->Hq * c->Sq * c->D;
    x->nk = (int64_t)c->B * c->Hkv * c->Sk * c->D;
    x->nl = (int64_t)c->B * c->Hq * c->Sq;
    x->nm = c->mask ? x->nl * c->Sk : 1;
    x->dq = kt_alloc(ctx, x->nq * es);
    x->dk = kt_alloc(ctx, x->nk * es);
    x->dv = kt_alloc(ctx, x->nk * es);
    x->dm = kt_alloc(ctx, x->nm * 4);
    x->dout = kt_alloc(ctx, x->nq * es);
    x->dl = kt_alloc(ctx, x->nl * 4);
}

static void mbufs_close(mbufs *x)
{
    kg_free(ctx, x->dq);
    kg_free(ctx, x->dk);
    kg_free(ctx, x->dv);
    kg_free(ctx, x->dm);
    kg_free(ctx, x->dout);
    kg_free(ctx, x->dl);
}

/* One call of the 16-row variant with the multicast hook `on` (1 on, 2 on
   with the deferred refill, -1 off: kg_test_attn_dec_mc); out and lse
   (poisoned first) downloaded to o and l. Returns what the launch did with
   the hook (kg_test_last_attn_dec_mc). */
static int mc_call(const mcase *c, mbufs *x, int on, void *o, float *l)
{
    const size_t es = kg_dtype_size(c->dt);
    KT_OK(ctx, kg_memset(ctx, x->dout, 0xff, x->nq * es));
    KT_OK(ctx, kg_memset(ctx, x->dl, 0xff, x->nl * 4));
    kg_tensor tq = kg_tensor_contiguous(x->dq, c->dt, 4, KT_SHAPE(c->B, c->Hq, c->Sq, c->D));
    kg_tensor tk = kg_tensor_contiguous(x->dk, c->dt, 4, KT_SHAPE(c->B, c->Hkv, c->Sk, c->D));
    kg_tensor tv = kg_tensor_contiguous(x->dv, c->dt, 4, KT_SHAPE(c->B, c->Hkv, c->Sk, c->D));
    kg_tensor to = kg_tensor_contiguous(x->dout, c->dt, 4, KT_SHAPE(c->B, c->Hq, c->Sq, c->D));
    kg_tensor tl = kg_tensor_contiguous(x->dl, KG_F32, 3, KT_SHAPE(c->B, c->Hq, c->Sq));
    kg_tensor tm = kg_tensor_contiguous(x->dm, KG_F32, 4, KT_SHAPE(c->B, c->Hq, c->Sq, c->Sk));
    kg_attention_opts opts = {0.f, c->causal};
    kg_test_force_attn_variant(ctx, KG_ATTN_V_DECODE);
    kg_test_force_attn_splits(ctx, c->splits);
    kg_test_force_attn_combine(ctx, c->merge);
    kg_test_attn_dec_mc(on);
    KT_OK(ctx, kg_attention(ctx, &to, &tl, &tq, &tk, &tv, c->mask ? &tm : NULL, &opts));
    KT_OK(ctx, kg_sync(ctx));
    const int took = kg_test_last_attn_dec_mc(NULL);
    kg_test_attn_dec_mc(0);
    cr_assert_eq(kg_test_last_attn_variant(ctx), KG_ATTN_V_DECODE);
    cr_assert(c->splits == 0 || kg_test_last_attn_splits(ctx) == c->splits, "%d splits asked, %d taken", c->splits,
              kg_test_last_attn_splits(ctx));
    kt_download(ctx, o, x->dout, x->nq * es);
    kt_download(ctx, l, x->dl, x->nl * 4);
    return took;
}

/* Row (b, h, i) against float64 (and the low-precision emulation of
   test_attention.c's reference); raises *err (the output's largest error),
   *lp (the emulation's) and checks the lse. */
static void mc_row(const mcase *c, const mbufs *x, const double *xq, const double *xk, const double *xv, int b, int h,
                   int i, double *err, double *lp)
{
    const int D = c->D, Sk = c->Sk, hk = h / (c->Hq / c->Hkv);
    const double scale = (double)(float)(1.0 / sqrt((double)D));
    const double *q = xq + (((int64_t)b * c->Hq + h) * c->Sq + i) * D;
    const double *k = xk + ((int64_t)b * c->Hkv + hk) * Sk * D, *v = xv + ((int64_t)b * c->Hkv + hk) * Sk * D;
    const float *mrow = c->mask ? (const float *)x->m + (((int64_t)b * c->Hq + h) * c->Sq + i) * Sk : NULL;
    double *s = malloc(sizeof(double) * Sk), *ref = calloc(D, sizeof(double));
    float *sl = malloc(sizeof(float) * Sk), *acc = calloc(D, sizeof(float));
    double m = -INFINITY, l = 0;
    float ml = -INFINITY, ll = 0;
    for (int j = 0; j < Sk; j++) {
        double dot = 0;
        for (int d = 0; d < D; d++)
            dot += q[d] * k[(int64_t)j * D + d];
        const double mk = mrow ? mrow[j] : 0.0;
        const int hidden = c->causal && j > i + Sk - c->Sq;
        s[j] = hidden ? -INFINITY : dot * scale + mk;
        sl[j] = hidden ? -INFINITY : (float)kt_round(c->dt, dot) * (float)scale + (float)mk;
        m = s[j] > m ? s[j] : m;
        ml = sl[j] > ml ? sl[j] : ml;
    }
    for (int j = 0; j < Sk; j++) {
        s[j] = m == -INFINITY ? 0 : exp(s[j] - m);
        sl[j] = ml == -INFINITY ? 0 : expf(sl[j] - ml);
        l += s[j];
        ll += sl[j];
    }
    for (int j = 0; j < Sk; j++) {
        const float pl = ll > 0 ? (float)kt_round(c->dt, sl[j] / ll) : 0.f;
        for (int d = 0; d < D; d++) {
            ref[d] += s[j] * v[(int64_t)j * D + d];
            acc[d] += pl * (float)v[(int64_t)j * D + d];
        }
    }
    const int64_t ro = ((int64_t)b * c->Hq + h) * c->Sq + i;
    for (int d = 0; d < D; d++) {
        const double want = l > 0 ? ref[d] / l : 0.0, got = kt_get(x->o, c->dt, ro * D + d);
        cr_assert(!isnan(got), "[%d,%d,%d,%d]: NaN (seed %llu)", b, h, i, d, (unsigned long long)kt_seed());
        const double e = fabs(got - want), e2 = fabs(kt_round(c->dt, acc[d]) - want);
        *err = e > *err ? e : *err;
        *lp = e2 > *lp ? e2 : *lp;
    }
    const double lse_want = l > 0 ? m + log(l) : -INFINITY;
    cr_assert(kt_close(x->l[ro], lse_want, 1e-5, 1e-4), "lse [%d,%d,%d] = %.9g, want %.9g (seed %llu)", b, h, i,
              x->l[ro], lse_want, (unsigned long long)kt_seed());
    free(s);
    free(ref);
    free(sl);
    free(acc);
}

/* The case without and with the hook: the same bits; the multicast run
   taken where the device can (compute capability 9.0, bulk tensor
   copies; the cases are two row tiles of one wave) and within the float64
   reference's tolerance. */
static void mc_case(const mcase *c)
{
    mbufs x;
    const size_t es = kg_dtype_size(c->dt);
    mbufs_open(c, &x);
    x.q = malloc(x.nq * es);
    x.k = malloc(x.nk * es);
    x.v = malloc(x.nk * es);
    x.m = malloc(x.nm * 4);
    x.o = malloc(x.nq * es);
    x.l = malloc(x.nl * 4);
    void *o0 = malloc(x.nq * es);
    float *l0 = malloc(x.nl * 4);
    double *xq = malloc(sizeof(double) * x.nq), *xk = malloc(sizeof(double) * x.nk),
           *xv = malloc(sizeof(double) * x.nk);
    for (int64_t i = 0; i < x.nq; i++) {
        kt_set(x.q, c->dt, i, kt_uniform(&rng, -2, 2));
        xq[i] = kt_get(x.q, c->dt, i);
    }
    for (int64_t i = 0; i < x.nk; i++) {
        kt_set(x.k, c->dt, i, kt_uniform(&rng, -2, 2));
        kt_set(x.v, c->dt, i, kt_uniform(&rng, -1, 1));
        xk[i] = kt_get(x.k, c->dt, i);
        xv[i] = kt_get(x.v, c->dt, i);
    }
    for (int64_t i = 0; i < x.nm; i++) {
        const int h = (int)(i / ((int64_t)c->Sq * c->Sk) % c->Hq);
        ((float *)x.m)[i] = h % 5 == 1 || kt_uniform(&rng, 0, 1) < 0.2 ? -INFINITY : (float)kt_uniform(&rng, -2, 2);
    }
    kt_upload(ctx, x.dq, x.q, x.nq * es);
    kt_upload(ctx, x.dk, x.k, x.nk * es);
    kt_upload(ctx, x.dv, x.v, x.nk * es);
    kt_upload(ctx, x.dm, x.m, x.nm * 4);

    int major = 0, minor = 0, sms = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, &major, &minor, &sms));
    cr_assert_eq(mc_call(c, &x, -1, o0, l0), 0, "the hook off: not taken");
    const int tma = kg_test_last_attn_tma(), splits0 = kg_test_last_attn_splits(ctx);
    for (int rep = 0; rep < 2; rep++) { /* twice (the merge's counters are back to zero): each refill */
        const int mode = rep + 1, took = mc_call(c, &x, mode, x.o, x.l), splits = kg_test_last_attn_splits(ctx);
        int clusters = 0;
        kg_test_last_attn_dec_mc(&clusters);
        /* taken on compute capability 9.0 with bulk copies where the grid
           fits the clusters resident at once (the planner's splits are
           planned to; a forced count may not) */
        const int fits = clusters > 0 && (int64_t)c->B * c->Hkv * 2 * splits <= 2 * (int64_t)clusters;
        cr_assert_eq(took, major == 9 && minor == 0 && tma && (fits || c->splits == 0) ? mode : -1,
                     "%s B %d Hq %d Hkv %d Sq %d Sk %d D %d: multicast %d (%d clusters of 2 resident, bulk copies %d)",
                     kg_dtype_name(c->dt), c->B, c->Hq, c->Hkv, c->Sq, c->Sk, c->D, took, clusters, tma);
        if (rep == 0)
            cr_log_info("mc D %d: %d clusters of 2 resident, %d splits (default %d)", c->D, clusters, splits, splits0);
        /* the same plan, the same bits; the plans differ only where fewer
           than sms / 2 clusters of 2 can be resident (the multicast splits
           then plan for the blocks those hold) */
        if (splits != splits0) {
            cr_assert(c->splits == 0 && took == mode && 2 * clusters < sms,
                      "%d splits, the default's %d, %d clusters of 2 resident, %d multiprocessors", splits, splits0,
                      clusters, sms);
            continue;
        }
        cr_assert(memcmp(o0, x.o, x.nq * es) == 0 && memcmp(l0, x.l, x.nl * 4) == 0,
                  "%s B %d Hq %d Hkv %d Sq %d Sk %d D %d causal %d mask %d splits %d merge %d: the multicast bits "
                  "differ from the default's (mode %d)",
                  kg_dtype_name(c->dt), c->B, c->Hq, c->Hkv, c->Sq, c->Sk, c->D, c->causal, c->mask, splits,
                  kg_test_last_attn_combine(ctx), mode);
    }
    double err = 0, lp = 0;
    for (int b = 0; b < c->B; b++)
        for (int h = 0; h < c->Hq; h++)
            for (int i = 0; i < c->Sq; i++)
                mc_row(c, &x, xq, xk, xv, b, h, i, &err, &lp);
    double rtol, atol;
    kt_tolerance(c->dt, &rtol, &atol);
    cr_assert(err <= 2 * lp + atol,
              "%s B %d Hq %d Hkv %d Sq %d Sk %d D %d causal %d mask %d: max error %.3g > 2 x %.3g + %.0e (seed %llu)",
              kg_dtype_name(c->dt), c->B, c->Hq, c->Hkv, c->Sq, c->Sk, c->D, c->causal, c->mask, err, lp, atol,
              (unsigned long long)kt_seed());
    free(x.q);
    free(x.k);
    free(x.v);
    free(x.m);
    free(x.o);
    free(x.l);
    free(o0);
    free(l0);
    free(xq);
    free(xk);
    free(xv);
    mbufs_close(&x);
}

/* The rows the candidate is for: MQA and GQA groups of 17 to 32 rows, the
   planner's splits and merge, both dtypes, D 64 and 128. */
Test(attention_decode_mc, mqa_rows_match_default_bits_and_reference)
{
    const mcase cs[] = {
        {KG_BF16, 1, 32, 1, 1, 32768, 128, 0, 0, 0, 0}, {KG_F16, 2, 32, 1, 1, 8192, 128, 0, 0, 0, 0},
        {KG_BF16, 4, 32, 1, 1, 8192, 64, 0, 0, 0, 0},   {KG_F16, 1, 64, 2, 1, 20584, 128, 0, 0, 0, 0},
        {KG_BF16, 2, 24, 1, 1, 9000, 64, 0, 0, 0, 0},   {KG_F16, 1, 20, 1, 1, 15997, 64, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        if (kt_take(3)) /* (a sample under a sanitizer) */
            mc_case(&cs[i]);
}

/* Edges: Sk 1, Sk below one key tile and below one stage's worth, Sk not a
   multiple of the tile, one split (no partials), many splits, each merge
   (1 the fused one, 2 the combine kernel, 3 the tail), causal with several
   queries (and keys fewer than queries: fully hidden rows), the additive
   mask with fully masked rows. */
Test(attention_decode_mc, edges_match_default_bits_and_reference)
{
    const mcase cs[] = {
        {KG_BF16, 1, 32, 1, 1, 1, 128, 0, 0, 0, 0},    {KG_F16, 1, 32, 1, 1, 40, 128, 0, 0, 0, 0},
        {KG_BF16, 2, 32, 1, 1, 100, 64, 0, 0, 0, 0},   {KG_BF16, 1, 32, 1, 1, 3001, 128, 0, 0, 1, 0},
        {KG_F16, 1, 32, 1, 1, 5003, 64, 0, 0, 3, 1},   {KG_BF16, 1, 32, 1, 1, 5003, 128, 0, 0, 7, 2},
        {KG_BF16, 1, 32, 1, 1, 7777, 128, 0, 0, 5, 3}, {KG_F16, 1, 32, 1, 1, 40900, 64, 0, 0, 64, 0},
        {KG_BF16, 1, 16, 1, 2, 5001, 128, 1, 0, 0, 0}, {KG_F16, 2, 8, 1, 4, 3, 64, 1, 0, 0, 0},
        {KG_BF16, 1, 8, 1, 3, 2049, 128, 1, 0, 4, 0},  {KG_BF16, 2, 64, 2, 1, 3000, 64, 0, 1, 0, 0},
        {KG_F16, 1, 10, 1, 2, 4500, 128, 1, 1, 3, 0},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        if (kt_take(3)) /* (a sample under a sanitizer) */
            mc_case(&cs[i]);
}

/* Where the kernels do not apply the hook changes nothing: one row tile
   (GQA group 4), three row tiles (the 64-row variant's rows forced on the
   16-row one), head dims without multicast kernels (32, 96, 256). */
Test(attention_decode_mc, not_taken_where_it_does_not_apply)
{
    const mcase cs[] = {
        {KG_BF16, 1, 32, 8, 1, 4096, 128, 0, 0, 0, 0},
        {KG_BF16, 1, 48, 1, 1, 4096, 128, 0, 0, 0, 0},
        {KG_F16, 1, 32, 1, 1, 4096, 96, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const mcase *c = &cs[i];
        mbufs x;
        const size_t es = kg_dtype_size(c->dt);
        mbufs_open(c, &x);
        KT_OK(ctx, kg_memset(ctx, x.dq, 0x3c, x.nq * es));
        KT_OK(ctx, kg_memset(ctx, x.dk, 0x3b, x.nk * es));
        KT_OK(ctx, kg_memset(ctx, x.dv, 0x3a, x.nk * es));
        void *o0 = malloc(x.nq * es), *o1 = malloc(x.nq * es);
        float *l0 = malloc(x.nl * 4), *l1 = malloc(x.nl * 4);
        cr_assert_eq(mc_call(c, &x, -1, o0, l0), 0);
        cr_assert_eq(mc_call(c, &x, 1, o1, l1), -1, "case %zu: taken where it does not apply", i);
        cr_assert(memcmp(o0, o1, x.nq * es) == 0 && memcmp(l0, l1, x.nl * 4) == 0, "case %zu: bits differ", i);
        free(o0);
        free(o1);
        free(l0);
        free(l1);
        mbufs_close(&x);
    }
}

/* Without a device: the multicast table holds the 16-row variant's shapes
   (threads, rows, shared memory, keys a tile: the launch takes the
   multicast kernel only where they match) for f16 / bf16 at D 64 and 128
   and every kind, and nothing elsewhere. */
Test(attention_decode_mc_table, matches_the_16_row_variant)
{
    for (int dt = 0; dt < KG_DTYPE_COUNT; dt++)
        for (int s = 0; s < KG_ATTN_DIM_COUNT; s++)
            for (int k = 0; k < KG_ATTN_KIND_COUNT; k++) {
                const kg_attn_entry *m = &kg_attn_dec_mc[dt][s][k], *e = &kg_attn_table[KG_ATTN_V_DECODE][dt][s][k];
                const int want = (dt == KG_F16 || dt == KG_BF16) && (kg_attn_dims[s] == 64 || kg_attn_dims[s] == 128);
                cr_assert_eq(m->threads != 0, want, "dtype %d D %d kind %d: generated %d", dt, kg_attn_dims[s], k,
                             m->threads != 0);
                if (want)
                    cr_assert(m->threads == e->threads && m->bm == e->bm && m->smem == e->smem && m->bn == e->bn &&
                                  m->bm == 16 && m->kernel != e->kernel,
                              "dtype %d D %d kind %d: {%d, %d, %d, %d} against the 16-row variant's {%d, %d, %d, %d}",
                              dt, kg_attn_dims[s], k, m->threads, m->bm, m->smem, m->bn, e->threads, e->bm, e->smem,
                              e->bn);
            }
}
