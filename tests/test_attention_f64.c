/*
 * test_attention_f64.c - kg_attention beyond the generated f16/bf16/f32
 * table (issue 16; TESTING.md "Attention"):
 *
 *   - f64 (the attention_f64 family's kernels): parity with a float64
 *     reference at f64 tolerance, any layout, any head dim up to 256;
 *   - packed operands (runtime/attention_pack.c): a head dim that is not
 *     contiguous, data or strides not 16-byte aligned, an out of any layout:
 *     bitwise the result of the same call on dense copies, and nothing of
 *     out's memory outside its elements written;
 *   - head dims that are not generated (1, 8, 40, 100, 200, ...): zero-padded
 *     to the next generated one, parity with the float64 reference (the
 *     tolerance of test_attention.c: 2 x the error of a low-precision
 *     reference + atol);
 *   - a packed call captured into a CUDA graph after kg_gemm_reserve, and
 *     refused with the sizes without;
 *   - validation on the CPU: what is now accepted reaches the device check,
 *     what is still refused is named.
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_ref.h"
#include "kg_attention.h"
#include "kg_attn_table.h"
#include "kg_gemm.h"
#include "kg_test.h"

/* testing aids of the runtime (internal.h) */
KG_API void kg_test_force_attn_variant(kg_context *ctx, int variant);
KG_API int kg_test_last_attn_variant(const kg_context *ctx);

static kg_context *ctx;

static void open_without_device(void) { ctx = kt_open_without_device(); }

static void close_ctx(void) { kg_close(ctx); }

/* ---- CPU: validation ---------------------------------------------------------- */

/* a valid call's tensors (attn_ref.h) */
typedef attn_call call_t;
#define valid_call attn_ref_valid_call

TestSuite(attention_more_validation, .init = open_without_device, .fini = close_ctx);

Test(attention_more_validation, f64_and_every_head_dim_up_to_256_reach_the_device_check)
{
    const kg_dtype dts[4] = {KG_F64, KG_F32, KG_F16, KG_BF16};
    const int64_t dims[] = {1, 8, 16, 32, 40, 64, 100, 128, 200, 255, 256};
    kg_tensor mask = kg_tensor_contiguous(KT_DEV(5 << 24), KG_F32, 2, KT_SHAPE(100, 120));
    for (int i = 0; i < 4; i++)
        for (size_t j = 0; j < sizeof dims / sizeof dims[0]; j++)
            for (int kind = 0; kind < 3; kind++) {
                call_t c = valid_call(dts[i], dims[j]);
                kg_attention_opts o = {0.f, kind == 1};
                kg_status st =
                    kg_attention(ctx, &c.out, kind ? &c.lse : NULL, &c.q, &c.k, &c.v, kind == 2 ? &mask : NULL, &o);
                cr_assert_eq(st, KG_ERR_NO_DEVICE, "%s D=%lld kind %d: %s", kg_dtype_name(dts[i]),
                             (long long)dims[j], kind, kg_errmsg(ctx));
            }
}

Test(attention_more_validation, head_dims_above_256_are_refused_with_the_limit)
{
    const kg_dtype dts[2] = {KG_F16, KG_F64};
    const int64_t bad[] = {257, 512, 100000};
    for (int i = 0; i < 2; i++)
        for (size_t j = 0; j < sizeof bad / sizeof bad[0]; j++) {
            call_t c = valid_call(dts[i], bad[j]);
            char want[200];
            snprintf(want, sizeof want,
                     "invalid argument: attention: head dim %lld is larger than 256 (generated: 32, 64, 96, 128, 256; "
                     "a smaller one is zero-padded to the next)",
                     (long long)bad[j]);
            KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_INVALID_ARGUMENT,
                      want);
        }
}

Test(attention_more_validation, layouts_the_kernels_cannot_load_are_accepted_for_packing)
{
    call_t c = valid_call(KG_BF16, 64);
    c.k.strides[3] = 2; /* head dim not contiguous */
    c.k.strides[2] *= 2, c.k.strides[1] *= 2, c.k.strides[0] *= 2;
    cr_assert_eq(kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_NO_DEVICE, "%s",
                 kg_errmsg(ctx));
    c = valid_call(KG_BF16, 64);
    c.v.data = KT_DEV((2 << 24) + 2); /* data 2 bytes past 16-byte alignment */
    cr_assert_eq(kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_NO_DEVICE, "%s",
                 kg_errmsg(ctx));
    c = valid_call(KG_F32, 64);
    c.q.strides[2] = 65; /* 260-byte rows */
    c.q.strides[1] = 65 * 100, c.q.strides[0] = 65 * 100 * 8;
    cr_assert_eq(kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_NO_DEVICE, "%s",
                 kg_errmsg(ctx));
    c = valid_call(KG_F16, 64); /* out [B,H,D,S]-major: head dim stride Sq */
    c.out.strides[3] = 100, c.out.strides[2] = 1;
    cr_assert_eq(kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_NO_DEVICE, "%s",
                 kg_errmsg(ctx));
}

/* Packing comes after every other check: an overlap, a self-overlapping
   out, a bad scale are still refused with their own messages. */
Test(attention_more_validation, packing_does_not_bypass_the_other_checks)
{
    call_t c = valid_call(KG_F16, 8);
    c.out.data = c.q.data;
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: attention: out overlaps q (bytes [0x10000000, 0x10006400) and [0x10000000, "
              "0x10006400))");
    c = valid_call(KG_F16, 8);
    c.out.strides[3] = 0;
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: out overlaps itself (shape [2,8,100,8], strides [6400,800,8,0]): an output needs "
              "one memory location per element");
    c = valid_call(KG_F64, 8);
    kg_attention_opts o = {INFINITY, 0};
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, &o), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: attention: scale inf is not finite");
    c = valid_call(KG_F64, 8);
    c.v.dtype = KG_F32;
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_DTYPE,
              "dtype mismatch: attention: q is f64 but v is f32");
    c = valid_call(KG_F64, 8);
    kg_tensor m = kg_tensor_contiguous(KT_DEV(5 << 24), KG_BF16, 2, KT_SHAPE(100, 120));
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, &m, NULL), KG_ERR_DTYPE,
              "dtype mismatch: attention: mask must be f32 or f64, got bf16");
    m.dtype = KG_F64;
    cr_assert_eq(kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, &m, NULL), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
    c = valid_call(KG_F16, 8);
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, &m, NULL), KG_ERR_DTYPE,
              "dtype mismatch: attention: mask must be f32, got f64");
    c = valid_call(KG_I32, 8);
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_DTYPE,
              "attention is not available for i32 (it accepts f32, f64, f16, bf16)");
}

/* ---- GPU ----------------------------------------------------------------------- */

typedef enum { L_DENSE, L_HEADSTRIDE, L_MISALIGNED, L_DMAJOR, L_COUNT } layout_kind;
static const char *const layout_names[L_COUNT] = {"dense", "head dim stride 2", "misaligned", "[B,H,D,S]"};

/* A case: attn_ref.h's (its mask [B,1,1,Sk] under MASK_PAD, else [Sq,Sk];
   bshd unused) with a layout per operand and the mask's dtype. */
typedef struct {
    acase a;
    layout_kind lq, lkv, lo; /* q; k and v; out */
    int mask64;              /* an f64 mask (f64 only) */
} lcase;

static lcase lc(kg_dtype dt, int B, int Hq, int Hkv, int Sq, int Sk, int D, int causal, mask_fill mask, layout_kind lq,
                layout_kind lkv, layout_kind lo, float scale, int mask64)
{
    const acase a = {dt, B, Hq, Hkv, Sq, Sk, D, causal, mask, mask == MASK_PAD ? 4 : 2, 0, scale};
    return (lcase){a, lq, lkv, lo, mask64};
}

/* A tensor [B,H,S,D] laid out by kind inside a host/device buffer of
   span elements, its first element at off. */
typedef struct {
    int64_t off, st[4], span;
} lay_t;

static lay_t make_layout(layout_kind kind, int64_t B, int64_t H, int64_t S, int64_t D)
{
    lay_t l = {0, {H * S * D, S * D, D, 1}, B * H * S * D};
    switch (kind) {
    case L_HEADSTRIDE:
        l = (lay_t){0, {H * S * 2 * D, S * 2 * D, 2 * D, 2}, B * H * S * 2 * D};
        break;
    case L_MISALIGNED: /* one element in, rows of D + 1 elements */
        l = (lay_t){1, {H * S * (D + 1), S * (D + 1), D + 1, 1}, 1 + B * H * S * (D + 1)};
        break;
    case L_DMAJOR:
        l = (lay_t){0, {H * S * D, S * D, 1, S}, B * H * S * D};
        break;
    default: break;
    }
    return l;
}

static int64_t at(const lay_t *l, int64_t b, int64_t h, int64_t s, int64_t d)
{
    return l->off + b * l->st[0] + h * l->st[1] + s * l->st[2] + d * l->st[3];
}

static kg_tensor view(kg_dtype dt, void *base, const lay_t *l, int64_t B, int64_t H, int64_t S, int64_t D)
{
    kg_tensor t = kg_tensor_contiguous((char *)base + l->off * (int64_t)kg_dtype_size(dt), dt, 4,
                                       (const int64_t[]){B, H, S, D});
    for (int d = 0; d < 4; d++)
        t.strides[d] = l->st[d];
    return t;
}

static uint64_t rng;

static void gpu_setup(void)
{
    ctx = kt_open_gpu();
    rng = kt_seed();
}

/* What one run produced: out (in its layout's buffer) and lse, on the host. */
typedef struct {
    void *out;
    float *lse;
    const char *variant;
} result_t;

/* The inputs of a case (host), made once per case so two runs (dense and
   packed) see the same values. */
typedef struct {
    lcase c;
    double *q, *k, *v; /* dense [B,H,S,D], values exactly representable in dt */
    double *mask;      /* [Sq, Sk] (MASK_RANDOM, MASK_EMPTY_ROWS) or [B, Sk] (MASK_PAD); f32 values unless mask64 */
} inputs_t;

static inputs_t make_inputs(const lcase *lcs)
{
    inputs_t in = {*lcs, NULL, NULL, NULL, NULL};
    const acase *c = &lcs->a;
    const int64_t nq = (int64_t)c->B * c->Hq * c->Sq * c->D, nk = (int64_t)c->B * c->Hkv * c->Sk * c->D;
    in.q = malloc(sizeof(double) * (nq + 1));
    in.k = malloc(sizeof(double) * (nk + 1));
    in.v = malloc(sizeof(double) * (nk + 1));
    for (int64_t i = 0; i < nq; i++)
        in.q[i] = kt_round(c->dt, kt_uniform(&rng, -2, 2));
    for (int64_t i = 0; i < nk; i++) {
        in.k[i] = kt_round(c->dt, kt_uniform(&rng, -2, 2));
        in.v[i] = kt_round(c->dt, kt_uniform(&rng, -1, 1));
    }
    const int64_t nm = attn_ref_mask_numel(c);
    in.mask = malloc(sizeof(double) * (nm + 1));
    for (int64_t i = 0; i < nm; i++) {
        const int64_t r = i / (c->Sk ? c->Sk : 1), j = i % (c->Sk ? c->Sk : 1);
        switch (c->mask) {
        case MASK_RANDOM: in.mask[i] = kt_uniform(&rng, 0, 1) < 0.2 ? -INFINITY : kt_uniform(&rng, -2, 2); break;
        case MASK_PAD: in.mask[i] = j >= c->Sk - (r % 3) * (c->Sk / 4) - 1 + (r % 3 == 0) ? -INFINITY : 0.f; break;
        case MASK_EMPTY_ROWS:
            in.mask[i] = (r % 3 == 0 || r == c->Sq - 1) ? -INFINITY : kt_uniform(&rng, -1, 1);
            break;
        default: in.mask[i] = 0.f; break;
        }
        if (!lcs->mask64)
            in.mask[i] = (float)in.mask[i];
    }
    return in;
}

static void free_inputs(inputs_t *in)
{
    free(in->q);
    free(in->k);
    free(in->v);
    free(in->mask);
}

static int64_t dense_at(int64_t H, int64_t S, int64_t D, int64_t b, int64_t h, int64_t s)
{
    return ((b * H + h) * S + s) * D;
}

/* Frees a run's host copies of q, k and v and its n device buffers. */
static void free_run(void *hq, void *hk, void *hv, void *const *dev, int n)
{
    free(hq);
    free(hk);
    free(hv);
    for (int i = 0; i < n; i++)
        kg_free(ctx, dev[i]);
}

/* Runs the case with the given layouts; out's buffer is poisoned with 0xFF
   bytes first and returned whole (gaps included). */
static result_t run(const inputs_t *in, layout_kind lq, layout_kind lkv, layout_kind lo)
{
    const acase *c = &in->c.a;
    const int mask64 = in->c.mask64;
    const kg_dtype dt = c->dt;
    const size_t es = kg_dtype_size(dt);
    const lay_t Lq = make_layout(lq, c->B, c->Hq, c->Sq, c->D), Lk = make_layout(lkv, c->B, c->Hkv, c->Sk, c->D),
                Lo = make_layout(lo, c->B, c->Hq, c->Sq, c->D);
    void *hq = malloc(Lq.span * es + 1), *hk = malloc(Lk.span * es + 1), *hv = malloc(Lk.span * es + 1);
    for (int64_t i = 0; i < Lq.span; i++)
        kt_set(hq, dt, i, 7.0); /* gaps: values that would show if read */
    for (int64_t i = 0; i < Lk.span; i++) {
        kt_set(hk, dt, i, 7.0);
        kt_set(hv, dt, i, 7.0);
    }
    for (int b = 0; b < c->B; b++) {
        for (int h = 0; h < c->Hq; h++)
            for (int s = 0; s < c->Sq; s++)
                for (int d = 0; d < c->D; d++)
                    kt_set(hq, dt, at(&Lq, b, h, s, d), in->q[dense_at(c->Hq, c->Sq, c->D, b, h, s) + d]);
        for (int h = 0; h < c->Hkv; h++)
            for (int s = 0; s < c->Sk; s++)
                for (int d = 0; d < c->D; d++) {
                    kt_set(hk, dt, at(&Lk, b, h, s, d), in->k[dense_at(c->Hkv, c->Sk, c->D, b, h, s) + d]);
                    kt_set(hv, dt, at(&Lk, b, h, s, d), in->v[dense_at(c->Hkv, c->Sk, c->D, b, h, s) + d]);
                }
    }
    const int64_t nl = (int64_t)c->B * c->Hq * c->Sq;
    const int64_t nm = c->mask == MASK_NONE ? 0 : attn_ref_mask_numel(c);
    void *dq = kt_alloc(ctx, Lq.span * es + 16), *dk = kt_alloc(ctx, Lk.span * es + 16);
    void *dv = kt_alloc(ctx, Lk.span * es + 16), *dout = kt_alloc(ctx, Lo.span * es + 16);
    const size_t mes = mask64 ? 8 : 4;
    void *dl = kt_alloc(ctx, nl * 4 + 16), *dm = kt_alloc(ctx, nm * mes + 16);
    kt_upload(ctx, dq, hq, Lq.span * es);
    kt_upload(ctx, dk, hk, Lk.span * es);
    kt_upload(ctx, dv, hv, Lk.span * es);
    if (nm) {
        void *hm = malloc(nm * mes);
        for (int64_t i = 0; i < nm; i++)
            kt_set(hm, mask64 ? KG_F64 : KG_F32, i, in->mask[i]);
        kt_upload(ctx, dm, hm, nm * mes);
        free(hm);
    }
    KT_OK(ctx, kg_memset(ctx, dout, 0xff, Lo.span * es + 16));
    KT_OK(ctx, kg_memset(ctx, dl, 0xff, nl * 4 + 16));
    kg_tensor tq = view(dt, dq, &Lq, c->B, c->Hq, c->Sq, c->D), tk = view(dt, dk, &Lk, c->B, c->Hkv, c->Sk, c->D),
              tv = view(dt, dv, &Lk, c->B, c->Hkv, c->Sk, c->D), to = view(dt, dout, &Lo, c->B, c->Hq, c->Sq, c->D);
    kg_tensor tl = kg_tensor_contiguous(dl, KG_F32, 3, (const int64_t[]){c->B, c->Hq, c->Sq});
    const kg_dtype mdt = mask64 ? KG_F64 : KG_F32;
    kg_tensor tm = c->mask == MASK_PAD ? kg_tensor_contiguous(dm, mdt, 4, (const int64_t[]){c->B, 1, 1, c->Sk})
                                    : kg_tensor_contiguous(dm, mdt, 2, (const int64_t[]){c->Sq, c->Sk});
    kg_attention_opts opts = {c->scale, c->causal};
    KT_OK(ctx, kg_attention(ctx, &to, &tl, &tq, &tk, &tv, c->mask ? &tm : NULL, &opts));
    KT_OK(ctx, kg_sync(ctx));
    result_t r = {malloc(Lo.span * es + 1), malloc(nl * 4 + 4), "f64"};
    if (dt != KG_F64)
        r.variant = kg_attn_variant_names[kg_test_last_attn_variant(ctx)];
    kt_download(ctx, r.out, dout, Lo.span * es);
    kt_download(ctx, r.lse, dl, nl * 4);
    /* out's gaps are untouched (0xFF bytes) */
    unsigned char *mark = calloc(Lo.span + 1, 1);
    for (int b = 0; b < c->B; b++)
        for (int h = 0; h < c->Hq; h++)
            for (int s = 0; s < c->Sq; s++)
                for (int d = 0; d < c->D; d++)
                    mark[at(&Lo, b, h, s, d)] = 1;
    for (int64_t i = 0; i < Lo.span; i++)
        if (!mark[i])
            for (size_t j = 0; j < es; j++)
                cr_assert_eq(((unsigned char *)r.out)[i * es + j], 0xff,
                             "%s %s out layout %s: element %lld outside out was written (seed %llu)", kg_dtype_name(dt),
                             r.variant, layout_names[lo], (long long)i, (unsigned long long)kt_seed());
    free(mark);
    free_run(hq, hk, hv, (void *[]){dq, dk, dv, dout, dl, dm}, 6);
    return r;
}

static void free_result(result_t *r)
{
    free(r->out);
    free(r->lse);
}

static double mask_at(const inputs_t *in, int b, int i, int j)
{
    const acase *c = &in->c.a;
    switch (c->mask) {
    case MASK_NONE: return 0.0;
    case MASK_PAD: return in->mask[(int64_t)b * c->Sk + j];
    default: return in->mask[(int64_t)i * c->Sk + j];
    }
}

/* lse of f64 inputs: the f64 kernel computes m and l in double and stores
   (float)(m + log(l)) (templates/attention_f64.cuh), one rounding of a value
   within eps64 (its double accumulation error) of the reference. So it is
   the reference rounded to f32 or, where eps64 crosses a rounding boundary,
   a neighbour: within 2 f32 ulps of |lse| (2, for a value at a power of two)
   plus eps64: 8 double ulps of the dot products' sum of |terms| (D fmas, the
   scale and the mask) and of (Sk + 8) (1 + |lse|) (the sum of Sk
   exponentials, its rescalings, exp and log). */
static double lse_tol_f64(double want, int D, int Sk, double amag)
{
    int e;
    frexp(want, &e);
    const double ulp32 = ldexp(1.0, (e - 1 < -126 ? -126 : e - 1) - 23);
    const double eps64 = 0x1p-50 * ((D + 2) * amag + (Sk + 8) * (1 + fabs(want)));
    return 2 * ulp32 + eps64;
}

/* Compares r (out in layout lo) with the float64 reference. f64: each
   element within f64's tolerance (TESTING.md); lower precisions: the
   largest error within 2 x that of a low-precision reference (scores
   rounded to dt, probabilities rounded to dt, f32 sums) + atol. lse: f32. */
static void check_reference(const inputs_t *in, const result_t *r, layout_kind lo, const char *what)
{
    const acase *c = &in->c.a;
    const kg_dtype dt = c->dt;
    const lay_t Lo = make_layout(lo, c->B, c->Hq, c->Sq, c->D);
    const double scale = c->scale != 0.f ? c->scale
                         : dt == KG_F64   ? 1.0 / sqrt((double)c->D)
                                          : (double)(float)(1.0 / sqrt((double)c->D));
    double *s = malloc(sizeof(double) * (c->Sk + 1)), *ref = malloc(sizeof(double) * (c->D + 1));
    float *sl = malloc(sizeof(float) * (c->Sk + 1)), *acc = malloc(sizeof(float) * (c->D + 1));
    float *sf = malloc(sizeof(float) * (c->Sk + 1)); /* f32 scores, for attn_ref_lse_tol */
    /* every row's lse (want, got) and the largest |score| terms (f64's eps64),
       checked after the loop against the case's largest f32-reference error */
    const int64_t nl = (int64_t)c->B * c->Hq * c->Sq;
    double *lse_w = malloc(sizeof(double) * (nl + 1)), *lse_g = malloc(sizeof(double) * (nl + 1)),
           *lse_mag = malloc(sizeof(double) * (nl + 1)), max_lse_lp = 0;
    double rtol, atol, max_err = 0, max_lp = 0, worst_got = 0, worst_want = 0;
    kt_tolerance(dt, &rtol, &atol);
    int wb = 0, wh = 0, wi = 0, wd = 0;
    for (int b = 0; b < c->B; b++)
        for (int h = 0; h < c->Hq; h++) {
            const int hk = h / (c->Hq / c->Hkv);
            for (int i = 0; i < c->Sq; i++) {
                const double *qr = in->q + dense_at(c->Hq, c->Sq, c->D, b, h, i);
                double m = -INFINITY, amag = 0;
                float ml = -INFINITY, mf = -INFINITY;
                for (int j = 0; j < c->Sk; j++) {
                    const double *kr = in->k + dense_at(c->Hkv, c->Sk, c->D, b, hk, j);
                    double dot = 0, adot = 0;
                    float dotf = 0;
                    for (int d = 0; d < c->D; d++) {
                        dot += qr[d] * kr[d];
                        adot += fabs(qr[d] * kr[d]);
                        dotf += (float)qr[d] * (float)kr[d];
                    }
                    const double mk = mask_at(in, b, i, j);
                    const int hidden = c->causal && j > i + c->Sk - c->Sq;
                    s[j] = hidden ? -INFINITY : dot * scale + mk;
                    sl[j] = hidden ? -INFINITY : (float)kt_round(dt, dot) * (float)scale + (float)mk;
                    sf[j] = hidden ? -INFINITY : dotf * (float)scale + (float)mk;
                    m = s[j] > m ? s[j] : m;
                    ml = sl[j] > ml ? sl[j] : ml;
                    mf = sf[j] > mf ? sf[j] : mf;
                    if (!hidden && isfinite(mk) && adot * fabs(scale) + fabs(mk) > amag)
                        amag = adot * fabs(scale) + fabs(mk);
                }
                double l = 0;
                float ll = 0, lf = 0;
                for (int j = 0; j < c->Sk; j++) {
                    s[j] = m == -INFINITY ? 0 : exp(s[j] - m);
                    sl[j] = ml == -INFINITY ? 0 : expf(sl[j] - ml);
                    l += s[j];
                    ll += sl[j];
                    lf += mf == -INFINITY ? 0.f : expf(sf[j] - mf);
                }
                for (int d = 0; d < c->D; d++)
                    ref[d] = 0, acc[d] = 0;
                for (int j = 0; j < c->Sk; j++) {
                    const double *vr = in->v + dense_at(c->Hkv, c->Sk, c->D, b, hk, j);
                    const float pl = ll > 0 ? (float)kt_round(dt, sl[j] / ll) : 0.f;
                    for (int d = 0; d < c->D; d++) {
                        ref[d] += s[j] * vr[d];
                        acc[d] += pl * (float)vr[d];
                    }
                }
                for (int d = 0; d < c->D; d++) {
                    const double want = l > 0 ? ref[d] / l : 0.0;
                    const double got = kt_get(r->out, dt, at(&Lo, b, h, i, d));
                    cr_assert(!isnan(got), "%s %s: out[%d,%d,%d,%d] is NaN (seed %llu)", what, r->variant, b, h, i, d,
                              (unsigned long long)kt_seed());
                    /* a row that sees no key: exactly 0 (kg_attention.h; the
                       kernels scale an accumulator of 0 x v terms by 0) */
                    if (l == 0)
                        cr_assert(got == 0.0,
                                  "%s %s: out[%d,%d,%d,%d] of a row with no visible key = %.17g, want 0 "
                                  "(seed %llu)",
                                  what, r->variant, b, h, i, d, got, (unsigned long long)kt_seed());
                    if (dt == KG_F64)
                        cr_assert(kt_close(got, want, rtol, atol),
                                  "%s: out[%d,%d,%d,%d] = %.17g, want %.17g (seed %llu)", what, b, h, i, d, got, want,
                                  (unsigned long long)kt_seed());
                    const double lp = kt_round(dt, acc[d]);
                    if (fabs(lp - want) > max_lp)
                        max_lp = fabs(lp - want);
                    if (fabs(got - want) > max_err) {
                        max_err = fabs(got - want);
                        wb = b, wh = h, wi = i, wd = d, worst_got = got, worst_want = want;
                    }
                }
                const double lse_want = l > 0 ? m + log(l) : -INFINITY;
                const int64_t li = ((int64_t)b * c->Hq + h) * c->Sq + i;
                if (l > 0 && lf > 0 && fabs((double)(mf + logf(lf)) - lse_want) > max_lse_lp)
                    max_lse_lp = fabs((double)(mf + logf(lf)) - lse_want);
                lse_w[li] = lse_want, lse_g[li] = r->lse[li], lse_mag[li] = amag;
            }
        }
    for (int64_t li = 0; li < nl; li++) {
        const int b = (int)(li / ((int64_t)c->Hq * c->Sq)), h = (int)(li / c->Sq % c->Hq), i = (int)(li % c->Sq);
        /* f64: against the reference rounded to f32 (lse_tol_f64); a row
           with no visible key: exactly -inf (kg_attention.h) */
        const double want = dt == KG_F64 ? (double)(float)lse_w[li] : lse_w[li];
        const double tol = lse_w[li] == -INFINITY ? 0
                           : dt == KG_F64         ? lse_tol_f64(lse_w[li], c->D, c->Sk, lse_mag[li])
                                                  : attn_ref_lse_tol(max_lse_lp, lse_w[li]);
        const int ok =
            lse_w[li] == -INFINITY ? lse_g[li] == -INFINITY : !isnan(lse_g[li]) && fabs(lse_g[li] - want) <= tol;
        cr_assert(ok, "%s %s: lse[%d,%d,%d] = %.9g, want %.9g (tolerance %.3g) (seed %llu)", what, r->variant, b, h, i,
                  lse_g[li], want, tol, (unsigned long long)kt_seed());
    }
    if (dt != KG_F64) {
        const double tol = 2 * max_lp + atol;
        cr_assert(max_err <= tol,
                  "%s %s: max error %.3g at [%d,%d,%d,%d] (got %.6g, want %.6g) > %.3g = 2 x %.3g (low-precision "
                  "reference) + %.0e (seed %llu)",
                  what, r->variant, max_err, wb, wh, wi, wd, worst_got, worst_want, tol, max_lp, atol,
                  (unsigned long long)kt_seed());
    }
    free(s);
    free(ref);
    free(sl);
    free(sf);
    free(lse_w);
    free(lse_g);
    free(lse_mag);
    free(acc);
}

static void describe(const lcase *lcs, char *buf, size_t n)
{
    const acase *c = &lcs->a;
    snprintf(buf, n, "%s B=%d Hq=%d Hkv=%d Sq=%d Sk=%d D=%d causal=%d mask=%d%s q:%s kv:%s out:%s scale=%g",
             kg_dtype_name(c->dt), c->B, c->Hq, c->Hkv, c->Sq, c->Sk, c->D, c->causal, (int)c->mask,
             lcs->mask64 ? " (f64)" : "", layout_names[lcs->lq], layout_names[lcs->lkv], layout_names[lcs->lo],
             (double)c->scale);
}

/* f64: every layout, head dims from 1 to 256, masks, causal both ways,
   grouped heads, no keys; and the same bits on a second run. */
Test(attention_more_gpu, f64_matches_the_float64_reference, .init = gpu_setup, .fini = close_ctx)
{
    const lcase cases[] = {
        lc(KG_F64, 2, 4, 2, 37, 45, 64, 0, MASK_NONE, L_DENSE, L_DENSE, L_DENSE, 0.f, 0),
        lc(KG_F64, 1, 2, 1, 1, 1, 1, 0, MASK_NONE, L_DENSE, L_DENSE, L_DENSE, 0.f, 0),
        lc(KG_F64, 4, 4, 4, 3, 6, 8, 0, MASK_RANDOM, L_DENSE, L_DENSE, L_DENSE, 0.f, 1), /* PyTorch's OpInfo shape */
        lc(KG_F64, 4, 4, 4, 3, 6, 8, 0, MASK_RANDOM, L_DENSE, L_DENSE, L_DENSE, 0.f, 0),
        lc(KG_F64, 1, 3, 3, 70, 33, 100, 1, MASK_NONE, L_HEADSTRIDE, L_DMAJOR, L_MISALIGNED, 0.f, 0),
        lc(KG_F64, 2, 2, 1, 20, 65, 32, 1, MASK_PAD, L_MISALIGNED, L_HEADSTRIDE, L_DMAJOR, 0.3f, 1),
        lc(KG_F64, 1, 2, 2, 17, 40, 256, 0, MASK_EMPTY_ROWS, L_DENSE, L_DENSE, L_HEADSTRIDE, 0.f, 0),
        lc(KG_F64, 1, 8, 2, 5, 100, 128, 1, MASK_RANDOM, L_DMAJOR, L_DENSE, L_DENSE, 0.f, 0),
        lc(KG_F64, 2, 2, 2, 9, 0, 48, 0, MASK_NONE, L_DENSE, L_DENSE, L_DENSE, 0.f, 0), /* Sk = 0: out 0, lse -inf */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[256];
        describe(&cases[i], what, sizeof what);
        inputs_t in = make_inputs(&cases[i]);
        result_t r = run(&in, cases[i].lq, cases[i].lkv, cases[i].lo);
        check_reference(&in, &r, cases[i].lo, what);
        result_t r2 = run(&in, cases[i].lq, cases[i].lkv, cases[i].lo);
        const lay_t Lo = make_layout(cases[i].lo, cases[i].a.B, cases[i].a.Hq, cases[i].a.Sq, cases[i].a.D);
        cr_assert(memcmp(r.out, r2.out, Lo.span * 8) == 0, "%s: two runs differ (seed %llu)", what,
                  (unsigned long long)kt_seed());
        free_result(&r);
        free_result(&r2);
        free_inputs(&in);
    }
}

/* Operands the kernels cannot load as they are: the packed call gives the
   bits of the same call on dense operands (same kernel, same values), for
   every dtype and a few head dims, masks and causal. */
Test(attention_more_gpu, packed_layouts_give_the_bits_of_the_dense_call, .init = gpu_setup, .fini = close_ctx)
{
    const kg_dtype dts[3] = {KG_F32, KG_F16, KG_BF16};
    const layout_kind lays[3][3] = {{L_HEADSTRIDE, L_DENSE, L_DENSE},
                                    {L_MISALIGNED, L_DMAJOR, L_HEADSTRIDE},
                                    {L_DENSE, L_MISALIGNED, L_DMAJOR}};
    const mask_fill fills[3] = {MASK_NONE, MASK_RANDOM, MASK_PAD};
    for (int di = 0; di < 3; di++)
        for (int li = 0; li < 3; li++) {
            const lcase cl = lc(dts[di], 2, 4, 2, 33 + 16 * li, 70, li == 2 ? 128 : 64, li == 1, fills[li],
                                lays[li][0], lays[li][1], lays[li][2], 0.f, 0);
            const acase c = cl.a;
            char what[256];
            describe(&cl, what, sizeof what);
            inputs_t in = make_inputs(&cl);
            result_t dense = run(&in, L_DENSE, L_DENSE, L_DENSE);
            result_t packed = run(&in, cl.lq, cl.lkv, cl.lo);
            cr_assert_str_eq(packed.variant, dense.variant, "%s", what);
            check_reference(&in, &packed, cl.lo, what);
            const lay_t Lo = make_layout(cl.lo, c.B, c.Hq, c.Sq, c.D);
            const size_t es = kg_dtype_size(c.dt);
            for (int b = 0; b < c.B; b++)
                for (int h = 0; h < c.Hq; h++)
                    for (int s = 0; s < c.Sq; s++) {
                        const int64_t i = dense_at(c.Hq, c.Sq, c.D, b, h, s);
                        cr_assert(memcmp(&((char *)packed.lse)[4 * (i / c.D)], &((char *)dense.lse)[4 * (i / c.D)],
                                         4) == 0,
                                  "%s: lse[%d,%d,%d] differs from the dense call's", what, b, h, s);
                        for (int d = 0; d < c.D; d++)
                            cr_assert(memcmp((char *)packed.out + at(&Lo, b, h, s, d) * es,
                                             (char *)dense.out + (i + d) * es, es) == 0,
                                      "%s: out[%d,%d,%d,%d] = %g differs from the dense call's %g (seed %llu)", what, b,
                                      h, s, d, kt_get(packed.out, c.dt, at(&Lo, b, h, s, d)),
                                      kt_get(dense.out, c.dt, i + d), (unsigned long long)kt_seed());
                    }
            free_result(&dense);
            free_result(&packed);
            free_inputs(&in);
        }
}

/* Head dims that are not generated run zero-padded to the next generated
   one (scale 1/sqrt(D) of the original), any layout. */
Test(attention_more_gpu, head_dims_not_generated_are_zero_padded, .init = gpu_setup, .fini = close_ctx)
{
    const lcase cases[] = {
        lc(KG_F32, 4, 4, 4, 3, 6, 8, 0, MASK_NONE, L_DENSE, L_DENSE, L_DENSE, 0.f, 0), /* PyTorch's OpInfo shape */
        lc(KG_F16, 4, 4, 4, 3, 6, 8, 0, MASK_RANDOM, L_DENSE, L_DENSE, L_DENSE, 0.f, 0),
        lc(KG_BF16, 4, 4, 4, 3, 6, 8, 0, MASK_NONE, L_HEADSTRIDE, L_HEADSTRIDE, L_HEADSTRIDE, 0.f, 0),
        lc(KG_F16, 1, 2, 2, 40, 40, 1, 1, MASK_NONE, L_DENSE, L_DENSE, L_DENSE, 0.f, 0),
        lc(KG_F32, 2, 4, 1, 50, 77, 40, 1, MASK_PAD, L_MISALIGNED, L_DENSE, L_DMAJOR, 0.f, 0),
        lc(KG_BF16, 1, 4, 2, 65, 130, 100, 0, MASK_EMPTY_ROWS, L_DENSE, L_DMAJOR, L_DENSE, 0.f, 0),
        lc(KG_F16, 1, 2, 2, 8, 300, 200, 0, MASK_NONE, L_DENSE, L_DENSE, L_MISALIGNED, 0.f, 0), /* decode path */
        lc(KG_F32, 1, 2, 1, 30, 30, 255, 1, MASK_RANDOM, L_HEADSTRIDE, L_DENSE, L_DENSE, 0.25f, 0),
        lc(KG_F16, 2, 2, 2, 20, 0, 16, 0, MASK_NONE, L_DENSE, L_DENSE, L_DENSE, 0.f, 0), /* Sk = 0 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[256];
        describe(&cases[i], what, sizeof what);
        inputs_t in = make_inputs(&cases[i]);
        result_t r = run(&in, cases[i].lq, cases[i].lkv, cases[i].lo);
        check_reference(&in, &r, cases[i].lo, what);
        free_result(&r);
        free_inputs(&in);
    }
}

/* A packed, padded call captured into a graph: refused with the sizes on a
   stream whose pack area is too small, then captured after kg_gemm_reserve
   and replayed with the result of the same call outside capture. */
Test(attention_more_gpu, packed_call_in_graph_capture, .init = gpu_setup, .fini = close_ctx)
{
    const lcase cl = lc(KG_F16, 1, 2, 2, 16, 24, 8, 0, MASK_NONE, L_HEADSTRIDE, L_DENSE, L_DENSE, 0.f, 0);
    const acase c = cl.a;
    inputs_t in = make_inputs(&cl);
    result_t want = run(&in, cl.lq, cl.lkv, cl.lo);
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    KT_OK(ctx, kg_set_stream(ctx, (kg_stream)s));
    const lay_t Lq = make_layout(cl.lq, c.B, c.Hq, c.Sq, c.D), Lk = make_layout(L_DENSE, c.B, c.Hkv, c.Sk, c.D);
    void *hq = malloc(Lq.span * 2), *hk = malloc(Lk.span * 2), *hv = malloc(Lk.span * 2);
    for (int64_t i = 0; i < Lq.span; i++)
        kt_set(hq, c.dt, i, i % 2 ? 7.0 : in.q[i / 2]);
    for (int64_t i = 0; i < Lk.span; i++) {
        kt_set(hk, c.dt, i, in.k[i]);
        kt_set(hv, c.dt, i, in.v[i]);
    }
    void *dq = kt_alloc(ctx, Lq.span * 2), *dk = kt_alloc(ctx, Lk.span * 2), *dv = kt_alloc(ctx, Lk.span * 2);
    void *dout = kt_alloc(ctx, (size_t)c.B * c.Hq * c.Sq * c.D * 2), *dl = kt_alloc(ctx, (size_t)c.Hq * c.Sq * 4);
    kt_upload(ctx, dq, hq, Lq.span * 2);
    kt_upload(ctx, dk, hk, Lk.span * 2);
    kt_upload(ctx, dv, hv, Lk.span * 2);
    kg_tensor tq = view(c.dt, dq, &Lq, c.B, c.Hq, c.Sq, c.D), tk = view(c.dt, dk, &Lk, c.B, c.Hkv, c.Sk, c.D),
              tv = view(c.dt, dv, &Lk, c.B, c.Hkv, c.Sk, c.D);
    kg_tensor to = kg_tensor_contiguous(dout, c.dt, 4, KT_SHAPE(c.B, c.Hq, c.Sq, c.D));
    kg_tensor tl = kg_tensor_contiguous(dl, KG_F32, 3, KT_SHAPE(c.B, c.Hq, c.Sq));
    cudaGraph_t graph;
    cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    kg_status st = kg_attention(ctx, &to, &tl, &tq, &tk, &tv, NULL, NULL);
    cr_assert_eq(cudaStreamEndCapture(s, &graph), cudaSuccess);
    cudaGraphDestroy(graph);
    cr_assert_eq(st, KG_ERR_INVALID_ARGUMENT, "%s: %s", kg_status_name(st), kg_errmsg(ctx));
    cr_assert(strstr(kg_errmsg(ctx), "kg_gemm_prepare") != NULL, "%s", kg_errmsg(ctx));
    KT_OK(ctx, kg_gemm_reserve(ctx, 1 << 20));
    KT_OK(ctx, kg_memset(ctx, dout, 0xff, (size_t)c.B * c.Hq * c.Sq * c.D * 2));
    KT_OK(ctx, kg_sync(ctx));
    cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    st = kg_attention(ctx, &to, &tl, &tq, &tk, &tv, NULL, NULL);
    cr_assert_eq(cudaStreamEndCapture(s, &graph), cudaSuccess);
    cr_assert_eq(st, KG_OK, "%s", kg_errmsg(ctx));
    cudaGraphExec_t ge;
    cr_assert_eq(cudaGraphInstantiate(&ge, graph, 0), cudaSuccess);
    cr_assert_eq(cudaGraphLaunch(ge, s), cudaSuccess);
    KT_OK(ctx, kg_sync(ctx));
    uint16_t *got = malloc((size_t)c.B * c.Hq * c.Sq * c.D * 2);
    kt_download(ctx, got, dout, (size_t)c.B * c.Hq * c.Sq * c.D * 2);
    cr_assert(memcmp(got, want.out, (size_t)c.B * c.Hq * c.Sq * c.D * 2) == 0,
              "the replayed graph's out differs from the same call outside capture");
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(graph);
    KT_OK(ctx, kg_set_stream(ctx, NULL));
    cudaStreamDestroy(s);
    free(got);
    free_run(hq, hk, hv, (void *[]){dq, dk, dv, dout, dl}, 5);
    free_result(&want);
    free_inputs(&in);
}
