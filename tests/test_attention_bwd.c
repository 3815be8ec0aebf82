/*
 * test_attention_bwd.c - kg_attention_backward: every validation error on
 * the CPU (no device needed); a finite-difference check of the float64
 * reference; a host model of the split-TF32 kernels' dK against the test
 * bound (CPU); then on the GPU every generated dtype x head dim x mask kind and
 * TESTING.md's backward cases against that reference.
 *
 * The reference (float64, from the same rounded inputs): P = softmax(scale
 * q k^T + mask) exactly, out = P v, delta = rowsum(dout * out), dS = P (dout
 * v^T - delta), dq = scale dS k, dk = scale dS^T q (summed over the query
 * heads of a group), dv = P^T dout (likewise). The inputs out and lse the
 * kernels get are the float64 forward rounded to the dtype and to f32.
 *
 * Tolerance (TESTING.md, as the forward's): per gradient, max|got - ref| <=
 * 2 max|lp - ref| + atol, where lp is the same math the way an unfused
 * program in the dtype would compute it: scores from rounded dot products,
 * P = exp(s - lse) in f32 rounded to the dtype, dP rounded to the dtype,
 * delta from the given out in f32, dS rounded to the dtype, products
 * accumulated in f32 and rounded once (f32: everything in float). Rows whose
 * keys are all masked must give dq exactly 0, and keys that no query sees dk
 * and dv exactly 0.
 */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_bwd_plan.h"
#include "internal.h"
#include "kg_attnb_table.h"
#include "attn_ref.h"
#include "kg_test.h"
#include "kg_attention_bwd.h"

/* ---- CPU: validation ------------------------------------------------------ */

static kg_context *ctx;

/* Sets (value) or clears (NULL) a KG_ATTNB_* hook for the calls that follow
   (the runtime reads the hooks once; kgi_attnb_hooks_reload reads them
   again). */
static void set_hook(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
    kgi_attnb_hooks_reload();
}

static void open_without_device(void) { ctx = kt_open_without_device(); }

static void close_ctx(void) { kg_close(ctx); }

/* A valid call's tensors (attn_ref.h): q/out/dout/dq [2,8,100,D], k/v/dk/dv [2,2,120,D], lse [2,8,100]. */
typedef attn_call call_t;
#define valid_call attn_ref_valid_call

#define CALL(c, mask, opts)                                                                                            \
    kg_attention_backward(ctx, &(c).dq, &(c).dk, &(c).dv, &(c).dout, &(c).q, &(c).k, &(c).v, &(c).out, &(c).lse, mask, \
                          opts)

TestSuite(attention_bwd_validation, .init = open_without_device, .fini = close_ctx);

Test(attention_bwd_validation, a_valid_call_reaches_the_device_check_for_every_dtype_head_dim_and_kind)
{
    const kg_dtype dts[3] = {KG_F32, KG_F16, KG_BF16};
    const int64_t dims[5] = {32, 64, 96, 128, 256};
    kg_tensor mask = kg_tensor_contiguous(KT_DEV(9 << 24), KG_F32, 2, KT_SHAPE(100, 120));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++)
            for (int kind = 0; kind < 3; kind++) {
                call_t c = valid_call(dts[i], dims[j]);
                kg_attention_opts o = {0.f, kind == 1};
                kg_status st = CALL(c, kind == 2 ? &mask : NULL, &o);
                cr_assert_eq(st, KG_ERR_NO_DEVICE, "%s D=%lld kind %d: %s", kg_dtype_name(dts[i]), (long long)dims[j],
                             kind, kg_errmsg(ctx));
            }
}

Test(attention_bwd_validation, every_tensor_but_the_mask_is_required)
{
    call_t c = valid_call(KG_BF16, 64);
    cr_assert_eq(
        kg_attention_backward(NULL, &c.dq, &c.dk, &c.dv, &c.dout, &c.q, &c.k, &c.v, &c.out, &c.lse, NULL, NULL),
        KG_ERR_INVALID_ARGUMENT);
    const char *names[9] = {"dq", "dk", "dv", "dout", "q", "k", "v", "out", "lse"};
    for (int i = 0; i < 9; i++) {
        const kg_tensor *t[9] = {&c.dq, &c.dk, &c.dv, &c.dout, &c.q, &c.k, &c.v, &c.out, &c.lse};
        t[i] = NULL;
        char want[64];
        snprintf(want, sizeof want, "invalid argument: tensor %s is NULL", names[i]);
        KT_EXPECT(ctx, kg_attention_backward(ctx, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], NULL, NULL),
                  KG_ERR_INVALID_ARGUMENT, want);
    }
}

Test(attention_bwd_validation, dtypes)
{
    call_t c = valid_call(KG_F64, 64);
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_DTYPE,
              "attention backward is not available for f64 (it accepts f32, f16, bf16)");
    const char *names[8] = {"dq", "dk", "dv", "dout", "q", "k", "v", "out"};
    for (int i = 0; i < 8; i++) {
        if (i == 4)
            continue;
        c = valid_call(KG_BF16, 64);
        kg_tensor *t[8] = {&c.dq, &c.dk, &c.dv, &c.dout, &c.q, &c.k, &c.v, &c.out};
        t[i]->dtype = KG_F16;
        char want[96];
        snprintf(want, sizeof want, "dtype mismatch: attention backward: q is bf16 but %s is f16", names[i]);
        KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_DTYPE, want);
    }
    c = valid_call(KG_BF16, 64);
    c.lse.dtype = KG_BF16;
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_DTYPE, "dtype mismatch: attention backward: lse must be f32, got bf16");
    c = valid_call(KG_BF16, 64);
    kg_tensor mask = kg_tensor_contiguous(KT_DEV(9 << 24), KG_F16, 1, KT_SHAPE(120));
    KT_EXPECT(ctx, CALL(c, &mask, NULL), KG_ERR_DTYPE, "dtype mismatch: attention backward: mask must be f32, got f16");
}

Test(attention_bwd_validation, gradient_and_input_shapes)
{
    call_t c = valid_call(KG_BF16, 64);
    c.dq.shape[2] = 99;
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention backward: dq is [2,8,99,64] but must be q's shape [2,8,100,64]");
    c = valid_call(KG_BF16, 64);
    c.dk.shape[1] = 8;
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention backward: dk is [2,8,120,64] but must be k's shape [2,2,120,64]");
    c = valid_call(KG_BF16, 64);
    c.dv.ndim = 3;
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention backward: dv is [2,2,120] but must be k's shape [2,2,120,64]");
    c = valid_call(KG_BF16, 64);
    c.out.shape[0] = 1;
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention backward: out is [1,8,100,64] but must be q's shape [2,8,100,64]");
    c = valid_call(KG_BF16, 64);
    c.dout.shape[3] = 32;
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention backward: dout is [2,8,100,32] but must be q's shape [2,8,100,64]");
    c = valid_call(KG_BF16, 64);
    c.lse.shape[2] = 120;
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention backward: lse is [2,8,120] but must be [B, Hq, Sq] for q [2,8,100,64]");
    c = valid_call(KG_BF16, 64);
    c.lse.ndim = 4;
    c.lse.shape[3] = 1;
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention backward: lse is [2,8,100,1] but must be [B, Hq, Sq] for q [2,8,100,64]");
    c = valid_call(KG_BF16, 64);
    c.v.shape[2] = 121;
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention backward: k and v must have the same shape (q is [2,8,100,64], k is "
              "[2,2,120,64])");
    c = valid_call(KG_BF16, 64);
    c.k.shape[1] = c.v.shape[1] = c.dk.shape[1] = c.dv.shape[1] = 3;
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention backward: q's heads must be a multiple of k's heads (q is [2,8,100,64], k "
              "is [2,3,120,64])");
    c = valid_call(KG_BF16, 64);
    c.k.shape[3] = c.v.shape[3] = 128;
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention backward: q and k must have the same head dim (q is [2,8,100,64], k is "
              "[2,2,120,128])");
    c = valid_call(KG_BF16, 64);
    c.q.ndim = 3;
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention backward: q, k and v must have 4 dims [B, H, S, D] (q is [2,8,100], k is "
              "[2,2,120,64])");
    c = valid_call(KG_BF16, 64);
    kg_tensor m = kg_tensor_contiguous(KT_DEV(9 << 24), KG_F32, 2, KT_SHAPE(120, 100));
    KT_EXPECT(ctx, CALL(c, &m, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention backward: mask [120,100] is not broadcastable to [B, Hq, Sq, Sk] = "
              "[2,8,100,120]");
    m = kg_tensor_contiguous(KT_DEV(9 << 24), KG_F32, 4, KT_SHAPE(2, 1, 1, 120));
    cr_assert_eq(CALL(c, &m, NULL), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
}

Test(attention_bwd_validation, head_dims_that_are_not_generated_are_named)
{
    const int64_t bad[] = {1, 16, 48, 80, 100, 160, 512};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        call_t c = valid_call(KG_F16, bad[i]);
        char want[160];
        snprintf(want, sizeof want,
                 "invalid argument: attention backward: head dim %lld is not generated (generated: 32, 64, 96, 128, "
                 "256)",
                 (long long)bad[i]);
        KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_INVALID_ARGUMENT, want);
    }
}

/* A misaligned pointer is named (before session 27: "dout's data must be
   16-byte aligned", without it). */
Test(attention_bwd_validation, layout_requirements)
{
    call_t c = valid_call(KG_BF16, 64);
    c.dk.strides[3] = 2;
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: attention backward: dk's head dim must be contiguous (stride 2)");
    c = valid_call(KG_BF16, 64);
    c.dout.data = KT_DEV((5 << 24) + 2);
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: attention backward: dout's data 0x15000002 is not 16-byte aligned");
    c = valid_call(KG_BF16, 64);
    c.dq.strides[2] = 68;
    c.dq.strides[1] = 68 * 100, c.dq.strides[0] = 68 * 100 * 8;
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: attention backward: dq's stride in dim 2 (68 elements) must be a multiple of 16 "
              "bytes");
    /* [B, S, H, D] storage as a strided view is fine */
    c = valid_call(KG_BF16, 64);
    c.q.strides[1] = 64, c.q.strides[2] = 8 * 64, c.q.strides[0] = 100 * 8 * 64;
    cr_assert_eq(CALL(c, NULL, NULL), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
}

/* The byte ranges are named, as in the forward (before session 27 the
   backward's message gave none). */
Test(attention_bwd_validation, gradients_must_not_overlap_inputs_or_each_other)
{
    call_t c = valid_call(KG_BF16, 64);
    c.dq.data = c.dout.data;
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: attention backward: dq overlaps dout (bytes [0x15000000, 0x15032000) and "
              "[0x15000000, 0x15032000))");
    c = valid_call(KG_BF16, 64);
    c.dv.data = KT_DEV((7 << 24) + 4096);
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: attention backward: dk overlaps dv (bytes [0x17000000, 0x1700f000) and "
              "[0x17001000, 0x17010000))");
    c = valid_call(KG_BF16, 64);
    c.dk.data = KT_DEV((4 << 24) + 512);
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: attention backward: dk overlaps lse (bytes [0x14000200, 0x1400f200) and "
              "[0x14000000, 0x14001900))");
}

Test(attention_bwd_validation, scale_must_be_finite)
{
    call_t c = valid_call(KG_F32, 32);
    kg_attention_opts o = {INFINITY, 0};
    KT_EXPECT(ctx, CALL(c, NULL, &o), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: attention backward: scale inf is not finite");
}

Test(attention_bwd_validation, sizes_out_of_range)
{
    call_t c = valid_call(KG_BF16, 64);
    c.q.shape[0] = c.out.shape[0] = c.dout.shape[0] = c.dq.shape[0] = c.lse.shape[0] = 70000;
    c.k.shape[0] = c.v.shape[0] = c.dk.shape[0] = c.dv.shape[0] = 70000;
    KT_EXPECT(ctx, CALL(c, NULL, NULL), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: attention backward: sizes out of range (Sq, Sk < 2^31; B, Hq <= 65535), got "
              "B=70000 Hq=8 Sq=100 Sk=120");
}

Test(attention_bwd_validation, scratch_size)
{
    /* counters, then 8 bytes a query row rounded up to 256, then the dq
       partials, f32 [B Hq Sq D] each: lanes c of least
       T(c) = ceil(B Hkv c / 132) / c + 0.3 B Hkv c / Sk (times 1.05 if c > 1),
       c <= min(128, ceil(Sk / 128)), partials <= 2 GiB (runtime/attention_bwd.c;
       the values below worked out by hand); then, where B Hkv ceil(Sk / 64)
       <= 1024 (a shape that may split its queries), the dK / dV partials of
       the most splits s <= 16 with 2 s B Hkv Sk D 4 <= 256 MiB */
    const size_t rows = 2 * 8 * 100, part = rows * 64 * 4;
#define DKV(s, B, Hkv, Sk, D) ((size_t)2 * (s) * (B) * (Hkv) * (Sk) * (D) * 4)
    /* Sk 120: one block of 128 keys, one lane; 16 splits */
    cr_assert_eq(kg_attention_backward_scratch_bytes(2, 8, 2, 100, 120, 64),
                 (size_t)(64 << 10) + rows * 8 + 1 * part + DKV(16, 2, 2, 120, 64));
    /* 4 kv heads, 16 key blocks: T(16) = (1/16 + 0.3 * 64 / 2000) * 1.05 = 0.0757 < T(15) = 0.0795 */
    cr_assert_eq(kg_attention_backward_scratch_bytes(2, 8, 2, 100, 2000, 64),
                 (size_t)(64 << 10) + rows * 8 + 16 * part + DKV(16, 2, 2, 2000, 64));
    /* 32 kv heads: 4 lanes (128 blocks, one wave): T(4) = 0.283 < T(8) = 0.303;
       32 x 32 = 1024 blocks of 64 keys, 32.8 MB a split: 8 splits */
    cr_assert_eq(kg_attention_backward_scratch_bytes(2, 16, 16, 100, 2000, 64),
                 (size_t)(64 << 10) + 2 * rows * 8 + 4 * 2 * part + DKV(8, 2, 16, 2000, 64));
    /* 400 kv heads: 4 lanes (13 waves of 1600 blocks, T = 3.66) rather than
       one (4 waves of 400, T = 4.06); no splits (12800 blocks of 64 keys) */
    cr_assert_eq(kg_attention_backward_scratch_bytes(200, 8, 2, 100, 2000, 64),
                 (size_t)(64 << 10) + 100 * rows * 8 + 4 * 100 * part);
    /* one kv head, 6240 keys: 49 lanes (one per 128 keys), not 16; 16 splits */
    cr_assert_eq(kg_attention_backward_scratch_bytes(1, 4, 1, 6240, 6240, 64),
                 (size_t)(64 << 10) + ((4 * 6240 * 8 + 255) & ~(size_t)255) + 49 * (size_t)4 * 6240 * 64 * 4 +
                     DKV(16, 1, 1, 6240, 64));
    /* no keys: no partials; no query rows: nothing but the counters */
    cr_assert_eq(kg_attention_backward_scratch_bytes(2, 8, 2, 100, 0, 64), (size_t)(64 << 10) + rows * 8);
    cr_assert_eq(kg_attention_backward_scratch_bytes(0, 8, 2, 100, 120, 64), (size_t)(64 << 10));
    cr_assert_eq(kg_attention_backward_scratch_bytes(2, 8, 2, 0, 120, 64), (size_t)(64 << 10));
    /* the partials stay within 2 GiB while there is more than one: 1M rows
       of D = 128 are 512 MiB a lane, so 4 lanes instead of 16 */
    cr_assert_eq(kg_attention_backward_scratch_bytes(1, 16, 16, 65536, 65536, 128),
                 (size_t)(64 << 10) + ((size_t)1 << 23) + ((size_t)1 << 31));
    /* one lane may exceed it; 64 kv heads of 64 keys at D 256: 8 MiB a split, 16 */
    cr_assert_eq(kg_attention_backward_scratch_bytes(1, 64, 64, 1 << 20, 64, 256),
                 (size_t)(64 << 10) + ((size_t)1 << 29) + ((size_t)1 << 36) + DKV(16, 1, 64, 64, 256));
    /* 256 MiB bounds the splits: 16384 keys of D 256 are 32 MiB a split, 8 */
    cr_assert_eq(kgi_attnb_split_max(1, 4, 1, 100, 16384, 256), 8);
    cr_assert_eq(kgi_attnb_split_max(1, 4, 1, 100, 16384, 128), 16);
    /* 1024 blocks of 64 keys at most */
    cr_assert_eq(kgi_attnb_split_max(1, 16, 16, 100, 4096, 64), 8); /* 33.5 MB a split */
    cr_assert_eq(kgi_attnb_split_max(1, 16, 16, 100, 4097, 64), 0);
#undef DKV
    cr_assert_eq(kg_attention_backward_scratch_bytes(-1, 8, 2, 100, 120, 64), 0u);
    cr_assert_eq(kg_attention_backward_scratch_bytes(65536, 8, 2, 100, 120, 64), 0u);
    cr_assert_eq(kg_attention_backward_scratch_bytes(2, 8, 2, 100, 120, 512), 0u);
    cr_assert_eq(kg_attention_backward_scratch_bytes(2, 8, 2, 100, -5, 64), 0u);
    /* shapes every call refuses: no kv heads under query heads, Hq not a
       multiple of Hkv, head dims that are not generated (0, 48) */
    cr_assert_eq(kg_attention_backward_scratch_bytes(2, 8, 0, 100, 120, 64), 0u);
    cr_assert_eq(kg_attention_backward_scratch_bytes(2, 8, 3, 100, 120, 64), 0u);
    cr_assert_eq(kg_attention_backward_scratch_bytes(2, 8, 2, 100, 120, 0), 0u);
    cr_assert_eq(kg_attention_backward_scratch_bytes(2, 8, 2, 100, 120, 48), 0u);
    /* no heads at all is an empty call the library accepts: the counters */
    cr_assert_eq(kg_attention_backward_scratch_bytes(2, 0, 0, 100, 120, 64), (size_t)(64 << 10));
}

/* The kernels that fit a device's shared memory (kgi_attnb_fit): compute
   capability 8.0 allows 166912 bytes a block, 9.0 232448, 8.6 / 8.9 101376.
   f32 D 64, 128 and 256's default kvq kernels exceed 8.0's: they run a
   smaller kvq tuning; f16 / bf16 D256 (no kvq kernel) the separate ones;
   where nothing fits the call fails naming the bytes. */
static int slot_of(int D)
{
    for (int i = 0; i < KG_ATTNB_DIM_COUNT; i++)
        if (kg_attnb_dims[i] == D)
            return i;
    return -1;
}

Test(attention_bwd_validation, kernels_that_fit_the_shared_memory)
{
    const int sm80 = 166912, sm90 = 232448, sm86 = 101376;
    int need = 0;
    for (int k = 0; k < KG_ATTN_KIND_COUNT; k++) {
        const kg_attnb_entry *f64e = &kg_attnb_table[KG_F32][slot_of(64)], *f128 = &kg_attnb_table[KG_F32][slot_of(128)],
                             *f256 = &kg_attnb_table[KG_F32][slot_of(256)];
        /* sm_90: the tuning asked for */
        cr_assert_eq(kgi_attnb_fit(KG_F32, slot_of(128), k, 0, sm90, &need), 0);
        cr_assert_eq(kgi_attnb_fit(KG_F32, slot_of(128), k, 1, sm90, &need), 1);
        cr_assert_eq(kgi_attnb_fit(KG_F32, slot_of(256), k, 0, sm90, &need), 0);
        /* sm_80 */
        cr_assert_gt(f64e->kvq[0][k].smem, sm80);
        cr_assert_leq(f64e->kvq[1][k].smem, sm80);
        cr_assert_eq(kgi_attnb_fit(KG_F32, slot_of(64), k, 0, sm80, &need), 1);
        /* the separate kernels (KG_ATTNB_TUNE=sep) fit too */
        cr_assert_leq(f64e->kv[k].smem, sm80);
        cr_assert_leq(f64e->q[k].smem, sm80);
        cr_assert_eq(kgi_attnb_fit(KG_BF16, slot_of(256), k, 0, sm80, &need), -1);
        cr_assert_gt(f128->kvq[0][k].smem, sm80);
        cr_assert_leq(f128->kvq[1][k].smem, sm80);
        cr_assert_eq(kgi_attnb_fit(KG_F32, slot_of(128), k, 0, sm80, &need), 1);
        cr_assert_gt(f256->kvq[0][k].smem, sm80);
        cr_assert_eq(kgi_attnb_fit(KG_F32, slot_of(256), k, 0, sm80, &need), 1);
        for (int d = 0; d < KG_ATTNB_DIM_COUNT; d++) {
            cr_assert_geq(kgi_attnb_fit(KG_F32, d, k, 0, sm80, &need), -1, "f32 D%d", kg_attnb_dims[d]);
            cr_assert_geq(kgi_attnb_fit(KG_BF16, d, k, 0, sm80, &need), -1, "bf16 D%d", kg_attnb_dims[d]);
            cr_assert_geq(kgi_attnb_fit(KG_F16, d, k, 0, sm80, &need), -1, "f16 D%d", kg_attnb_dims[d]);
        }
        /* 101376 bytes: f32 D128 has nothing that fits (its smallest kvq takes 122112) */
        need = 0;
        cr_assert_eq(kgi_attnb_fit(KG_F32, slot_of(128), k, 0, sm86, &need), -2);
        cr_assert_eq(need, f128->kvq[1][k].smem);
        /* no limit known: the tuning asked for */
        cr_assert_eq(kgi_attnb_fit(KG_F32, slot_of(128), k, 1, 0, &need), 1);
    }
}

/* The query splits' plan (kgi_attnb_split): none where the kvq grid fills
   the SMs already, splits where few (batch, kv head) pairs walk long key
   ranges, always within the bounds the kernels and the scratch assume. */
/* The Hopper kvq tunings in the table: one at every head dim, the default
   on compute capability 9.0 (def90; D 256's since session 32, session 31's
   candidate h1); each a kernel of 2 warpgroups on 128-key
   blocks whose shared memory is the template's layout (attnb_kvq_wg: 1 KiB
   of alignment slack, K and V, two stages of Q and dout, in tiles of whole
   panels (64 elements; D 32 and 96: 32, the 64-byte swizzle), dS^T, two
   stages of the f32 partial tile of pitch D + 8 and of the rows), or at D
   256 on 64-key blocks (attnb_kvq_wgd: the same without the partial tile,
   its dS^T slot unused), and fits the 227 KiB a block of compute capability
   9.0; the instance for splits the same launch (D 256's tuning, dK / dV
   alone as the separate pass's kv kernel, path 4: no split instance, the
   same kernel in its place). */
Test(attention_bwd_validation, hopper_tunings_and_their_defaults)
{
    const kg_dtype dts[2] = {KG_F16, KG_BF16};
    for (int i = 0; i < 2; i++)
        for (int s = 0; s < KG_ATTNB_DIM_COUNT; s++) {
            const int D = kg_attnb_dims[s];
            const kg_attnb_entry *e = &kg_attnb_table[dts[i]][s];
            cr_assert_eq(e->ntunes90, 1, "D%d: %d Hopper tunings", D, e->ntunes90);
            cr_assert_eq(e->def90, 1, "D%d: def90 %d", D, e->def90);
            for (int t = 0; t < e->ntunes90; t++)
                for (int k = 0; k < KG_ATTN_KIND_COUNT; k++) {
                    const kg_attnb_launch *l = &e->kvq90[t][k], *ls = &e->kvq90s[t][k];
                    const int BN = l->rows, BM = l->tile;
                    /* panels of 64 elements; D 32's and D 96's of 32 (the 64-byte swizzle), no padding */
                    const int PW = D == 32 || D == 96 ? 32 : 64, DP = D;
                    cr_assert_eq(D % PW, 0, "D%d: whole panels", D);
                    const int kvo = D == 256; /* dK / dV alone */
                    cr_assert(l->threads == 256 && BN == (D == 256 ? 64 : 128) && l->path == (kvo ? 4 : 2),
                              "D%d tuning %d: %d threads, %d keys, path %d", D, t, l->threads, BN, l->path);
                    cr_assert(BM == 64 || (BM == 128 && D < 256), "D%d tuning %d: %d-query tiles", D, t, BM);
                    /* (D 256: no partial tile, 206848 bytes) */
                    const int need = 1024 + 2 * BN * DP * 2 + 4 * BM * DP * 2 + BN * BM * 2 +
                                     (D == 256 ? 0 : 2 * BM * (D + 8) * 4) + 4 * BM * 4;
                    if (D == 256)
                        cr_assert_eq(need, 206848, "D256 tuning %d: the layout is %d bytes", t, need);
                    cr_assert_eq(l->smem, need, "D%d tuning %d: %d bytes of shared memory, the layout %d", D, t,
                                 l->smem, need);
                    cr_assert_leq(l->smem, 232448, "D%d tuning %d: %d bytes", D, t, l->smem);
                    cr_assert((kvo ? ls->kernel == l->kernel : ls->kernel != l->kernel) && ls->threads == l->threads &&
                                  ls->rows == BN && ls->tile == BM && ls->smem == l->smem && ls->path == l->path,
                              "D%d tuning %d: the split instance differs", D, t);
                }
        }
}

/* A host model of attnb_kvq_wg's shared-memory tiles against the wgmma
   operand addresses of its descriptors. The tiles: 16-byte chunk cc of row
   r of a ROWS-row tile at swz_at (templates/attention_sm90.cuh, copied
   here); the hardware (the model): an operand element's address from the
   descriptor's start, its canonical offsets (K-major: row m at (m / 8) SBO +
   (m % 8) SWB, element k at 2 k; N-major: element n at (n / PW) LBO + 2 (n %
   PW), reduction row k at (k / 8) SBO + (k % 8) SWB) and then the swizzle
   of the absolute address (128 bytes: bits 4-6 ^= bits 7-9; 64 bytes: bits
   4-5 ^= bits 7-8). The model reproduces the 128-byte layout of the D 64 /
   128 kernels, which run on the GPU; the same model with the 64-byte
   parameters checks D 32's and D 96's tiles. Also: the
   tiles' starts are whole swizzle atoms apart, and swz_at is one to one. */
static uint32_t model_swz_at(int rows, int swb, int r, int cc)
{
    if (swb == 128)
        return (uint32_t)((cc >> 3) * rows * 128 + r * 128 + (((cc & 7) ^ (r & 7)) << 4));
    return (uint32_t)((cc >> 2) * rows * 64 + r * 64 + (((cc & 3) ^ ((r >> 1) & 3)) << 4));
}

static uint32_t model_swizzle(int swb, uint32_t a)
{
    return swb == 128 ? a ^ (((a >> 7) & 7u) << 4) : a ^ (((a >> 7) & 3u) << 4);
}

/* S^T = K Q^T (K-major, both operands): warpgroup wgi's 64 rows of the
   ROWS-row tile at base, k16 step kk, as wg_rows_x_tile addresses them */
static void model_kmajor(uint32_t base, int rows, int swb, int wgi, int kk, int D)
{
    const int KP = swb / 32;
    const uint32_t start = base + (uint32_t)((kk / KP) * rows * swb + (wgi < 0 ? 0 : wgi) * 64 * swb + (kk % KP) * 32);
    for (int m = 0; m < (wgi < 0 ? rows : 64); m++)
        for (int k = 0; k < 16; k++) {
            const int row = (wgi < 0 ? 0 : wgi * 64) + m, col = kk * 16 + k;
            const uint32_t hw = model_swizzle(swb, start + (uint32_t)((m / 8) * 8 * swb + (m % 8) * swb + 2 * k));
            const uint32_t want = base + model_swz_at(rows, swb, row, col / 8) + (uint32_t)(col % 8) * 2;
            cr_assert_eq(hw, want, "K-major swb %d rows %d row %d col %d (D%d): read at %u, stored at %u", swb, rows,
                         row, col, D, hw, want);
        }
}

/* dV += P^T dout, dK += dS^T Q, dQ += dS K (N-major B): the k16 step kk of
   the ROWS-row tile at base, N columns from column c0 (< D only) */
static void model_nmajor(uint32_t base, int rows, int swb, int kk, int c0, int N, int D)
{
    const int PW = swb / 2;
    const uint32_t start = base + (uint32_t)((c0 / PW) * rows * swb + kk * 16 * swb);
    for (int k = 0; k < 16; k++)
        for (int n = 0; n < N && c0 + n < D; n++) {
            const int row = kk * 16 + k, col = c0 + n;
            const uint32_t hw = model_swizzle(
                swb, start + (uint32_t)((n / PW) * rows * swb + (k / 8) * 8 * swb + (k % 8) * swb + 2 * (n % PW)));
            const uint32_t want = base + model_swz_at(rows, swb, row, col / 8) + (uint32_t)(col % 8) * 2;
            cr_assert_eq(hw, want, "N-major swb %d rows %d row %d col %d (D%d): read at %u, stored at %u", swb, rows,
                         row, col, D, hw, want);
        }
}

/* One warpgroup's m64 accumulator as the Hopper kernels' stores walk it
   (warp wq, lane (g, t), fragment half i, n8 tile n < ncols / 8: row r0 +
   16 wq + g + 8 i, columns c0 + 8 n + 2 t and + 1), each (row, column)
   counted in hit (rows of 256 columns). The warpgroups of a block split
   the rows (r0 = 64 w: attnb_q_wg's dQ) or the columns (c0: attnb_kvq_wgd's
   dK / dV); the callers check every element of the tile counted once. */
static void wg_acc_walk(unsigned char (*hit)[256], int r0, int c0, int ncols)
{
    for (int wq = 0; wq < 4; wq++)
        for (int g = 0; g < 8; g++)
            for (int t = 0; t < 4; t++)
                for (int i = 0; i < 2; i++)
                    for (int n = 0; n < ncols / 8; n++)
                        for (int e = 0; e < 2; e++)
                            hit[r0 + wq * 16 + g + 8 * i][c0 + n * 8 + 2 * t + e]++;
}

Test(attention_bwd_validation, hopper_tile_layouts_against_a_model_of_the_operand_reads)
{
    /* D, BM (BN 128, 2 warpgroups), swizzle bytes: D 64 / 128, and D 32 and
       96 in the 64-byte swizzle */
    const int cfg[][3] = {{64, 128, 128}, {128, 64, 128}, {32, 128, 64}, {96, 64, 64}};
    for (size_t ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++) {
        const int D = cfg[ci][0], BM = cfg[ci][1], swb = cfg[ci][2], BN = 128, NWG = 2, PW = swb / 2;
        /* attnb_kvq_wg's dQ widths: QC a warpgroup, QL the last one's */
        const int DP = (D + PW - 1) / PW * PW, QROWS = BM == 64 * NWG;
        const int QC = QROWS ? DP : (DP / NWG + PW - 1) / PW * PW, QL = QROWS ? DP : DP - (NWG - 1) * QC;
        cr_assert(QROWS || (QL > 0 && QL <= QC && QL % 16 == 0 && QC % PW == 0));
        /* the template's tile starts from a0 (1024-aligned): K, V, 2 x (Q, dout), dS^T */
        const uint32_t a0 = 1024 * 7, KB = (uint32_t)(BN * DP * 2), QB = (uint32_t)(BM * DP * 2);
        const uint32_t aK = a0, aV = aK + KB, aQ0 = aV + KB, aS = aQ0 + 4 * QB;
        const uint32_t starts[6] = {aK, aV, aQ0, aQ0 + QB, aQ0 + 2 * QB, aQ0 + 3 * QB};
        for (int i = 0; i < 6; i++)
            cr_assert_eq(starts[i] % (uint32_t)(8 * swb), 0u, "D%d swb %d: tile %d starts mid-atom", D, swb, i);
        cr_assert_eq(aS % 1024u, 0u, "D%d: dS^T starts mid-atom", D);
        /* swz_at one to one onto the tile's bytes (K: BN rows; Q: BM rows) */
        const int rws[2] = {BN, BM};
        for (int t = 0; t < 2; t++) {
            const int R = rws[t], n = R * DP / 8;
            unsigned char *seen = calloc((size_t)n, 1);
            for (int r = 0; r < R; r++)
                for (int cc = 0; cc < DP / 8; cc++) {
                    const uint32_t o = model_swz_at(R, swb, r, cc);
                    cr_assert(o % 16 == 0 && o / 16 < (uint32_t)n && !seen[o / 16], "D%d swb %d: chunk (%d, %d)", D,
                              swb, r, cc);
                    seen[o / 16] = 1;
                }
            free(seen);
        }
        for (int kk = 0; kk < D / 16; kk++)
            for (int w = 0; w < NWG; w++) {
                model_kmajor(aK, BN, swb, w, kk, D); /* A = K (and V) */
                model_kmajor(aQ0, BM, swb, -1, kk, D); /* B = Q (and dout), all BM rows */
            }
        for (int kk = 0; kk < BM / 16; kk++)
            model_nmajor(aQ0, BM, swb, kk, 0, DP, D); /* B = dout / Q, N = DP */
        /* B = K for dQ: every warpgroup's product QC wide (the last one's
           too where QL < QC: its columns past D read the next panels, the V
           tile's first, and are never stored); the reads, whole panels of
           BN rows from panel qc / PW, end inside K and V (aV + KB) */
        for (int w = 0; w < NWG; w++) {
            const int qc = QROWS ? 0 : w * QC;
            const uint32_t end = aK + (uint32_t)((qc + QC) / PW * BN * swb);
            cr_assert(end <= aV + KB, "D%d swb %d: warpgroup %d's dQ B ends at %u, past K, V (%u)", D, swb, w, end,
                      aV + KB);
            cr_assert(QL == QC || w < NWG - 1 || qc + QL == D, "D%d swb %d: the last warpgroup's QL", D, swb);
            for (int kk = 0; kk < BN / 16; kk++)
                model_nmajor(aK, BN, swb, kk, qc, QC, D);
        }
        /* dQ's rows and columns as attnb_kvq_wg's walk_dq stores them
           (warpgroup w at rows qr, columns qc; the n8 tiles n < QC / 8 where
           QALL || qc + 8 n < D, its guard): every (row, column) of the BM x
           D query tile exactly once, none past D (D 96 in 32-element panels:
           the last warpgroup's QL = 32 columns, not QC = 64) */
        {
            const int QALL = D == DP && QL == QC;
            unsigned char *hit = calloc((size_t)BM * 256, 1);
            for (int w = 0; w < NWG; w++) {
                const int qr = QROWS ? w * 64 : 0, qc = QROWS ? 0 : w * QC;
                for (int wq = 0; wq < 4; wq++)
                    for (int g = 0; g < 8; g++)
                        for (int t = 0; t < 4; t++)
                            for (int i = 0; i < 2; i++)
                                for (int n = 0; n < QC / 8; n++)
                                    for (int e = 0; (QALL || qc + n * 8 < D) && e < 2; e++) {
                                        const int col = qc + n * 8 + 2 * t + e;
                                        cr_assert(col < D, "D%d swb %d: dQ column %d stored (w %d)", D, swb, col, w);
                                        hit[(qr + wq * 16 + g + 8 * i) * 256 + col]++;
                                    }
            }
            for (int r = 0; r < BM; r++)
                for (int col = 0; col < D; col++)
                    cr_assert_eq(hit[r * 256 + col], 1, "D%d swb %d: dQ (%d, %d) stored %d times", D, swb, r, col,
                                 hit[r * 256 + col]);
            free(hit);
        }
    }
    /* D 256 (attnb_kvq_wgd): 64-key blocks, 64-query tiles, 128-byte
       swizzle; S^T / dP^T from all 64 rows of K / V in both warpgroups (the
       descriptors of warpgroup 0), dV / dK from warpgroup w's half of the
       head dim (panels 2 w, 2 w + 1: N 128 from column 128 w) */
    {
        const int D = 256, BM = 64, BN = 64, swb = 128;
        const uint32_t a0 = 1024 * 5, KB = (uint32_t)(BN * D * 2), QB = (uint32_t)(BM * D * 2);
        const uint32_t aK = a0, aV = aK + KB, aQ0 = aV + KB, aS = aQ0 + 4 * QB;
        cr_assert_eq(aS - a0 + (uint32_t)(BN * BM * 2) + 4 * BM * 4 + 1024, 206848u, "D256: the layout's bytes");
        const uint32_t starts[7] = {aK, aV, aQ0, aQ0 + QB, aQ0 + 2 * QB, aQ0 + 3 * QB, aS};
        for (int i = 0; i < 7; i++)
            cr_assert_eq(starts[i] % 1024u, 0u, "D256: tile %d starts mid-atom", i);
        for (int kk = 0; kk < D / 16; kk++) {
            model_kmajor(aK, BN, swb, 0, kk, D);
            model_kmajor(aQ0 + 2 * QB, BM, swb, -1, kk, D);
        }
        for (int w = 0; w < 2; w++)
            for (int kk = 0; kk < BM / 16; kk++)
                model_nmajor(aQ0 + QB, BM, swb, kk, 128 * w, 128, D); /* dout / Q's half */
        /* the accumulators' rows and columns as attnb_kvq_wgd's dK / dV
           stores walk them (wg_acc_walk: warpgroup w all 64 rows, columns
           128 w.. + 128): every (row, column) of a 64 x 256 tile exactly
           once */
        static unsigned char hit[64][256];
        memset(hit, 0, sizeof hit);
        for (int w = 0; w < 2; w++)
            wg_acc_walk(hit, 0, 128 * w, 128);
        for (int r = 0; r < 64; r++)
            for (int col = 0; col < 256; col++)
                cr_assert_eq(hit[r][col], 1, "D256: (%d, %d) written %d times", r, col, hit[r][col]);
    }
}

/* The Hopper dQ kernel of the separate dq pass (attnb_q_wg, templates/
   attention_bwd_sm90q.cuh; session 32's hq0, the default on compute
   capability 9.0 since round s33r1; hq1 removed): in the table at f16 /
   bf16 D 256 only, one tuning, the default (defq90), every mask kind a
   kernel of its own, 256 threads on 128 query
   rows, the shared memory of its layout (1 KiB alignment slack, Q and dout
   128 x 256, 3 stages of K and V 32 x 256: 230400 bytes) within the 227 KiB
   a block of compute capability 9.0; its tiles (load_sw128_rows' stores,
   copied from attention_sm90.cuh) against the model of the wgmma operand
   reads above: S = Q_w K^T and dP = dout_w V^T K-major (A: warpgroup w's 64
   of Q's 128 rows, B: all 32 rows of the K tile), dQ += dS K N-major (B: the
   K tile's 32 rows, N = 256 from column 0), and dQ's stores (store_wg:
   warpgroup w's rows 64 w..) every (row, column) of the 128 x 256 query
   tile exactly once. */
static uint32_t model_rows_store(int rows, int D, int NT, int tid, int it)
{
    const int CPR = D / 8, RS = NT / CPR, r0 = tid / CPR, cc = tid % CPR;
    const uint32_t d0 = (uint32_t)((cc >> 3) * rows * 128 + r0 * 128);
    const uint32_t x0 = (uint32_t)((cc & 7) ^ (r0 & 7));
    const uint32_t x = RS % 8 == 0 ? x0 : x0 ^ (uint32_t)((it * RS) & 7);
    return d0 + (uint32_t)(it * RS * 128) + (x << 4);
}

Test(attention_bwd_validation, hopper_dq_kernel_table_and_tiles)
{
    for (int dt = 0; dt < KG_DTYPE_COUNT; dt++)
        for (int s = 0; s < KG_ATTNB_DIM_COUNT; s++) {
            const kg_attnb_entry *e = &kg_attnb_table[dt][s];
            const int D = kg_attnb_dims[s], want = (dt == KG_F16 || dt == KG_BF16) && D == 256;
            if (e->pre.threads == 0)
                continue;
            cr_assert_eq(e->nq90, want ? 1 : 0, "%s D%d: %d Hopper dQ tunings", kg_dtype_name((kg_dtype)dt), D, e->nq90);
            cr_assert_eq(e->defq90, want, "%s D%d: the Hopper dQ kernel %s the default", kg_dtype_name((kg_dtype)dt), D,
                         e->defq90 ? "is" : "is not");
            for (int ti = 0; ti < KG_ATTNB_MAX_Q90; ti++)
            for (int k = 0; k < KG_ATTN_KIND_COUNT; k++) {
                const kg_attnb_launch *l = &e->q90[ti][k];
                if (ti >= e->nq90) {
                    cr_assert_eq(l->threads, 0, "%s D%d tuning %d kind %d: a Hopper dQ kernel",
                                 kg_dtype_name((kg_dtype)dt), D, ti, k);
                    continue;
                }
                cr_assert(l->threads == 256 && l->rows == 128 && l->smem == 230400 && l->smem <= 232448,
                          "%s D256 kind %d: %d threads, %d rows, %d bytes", kg_dtype_name((kg_dtype)dt), k, l->threads,
                          l->rows, l->smem);
                cr_assert_eq(l->smem, 1024 + 2 * 128 * 256 * 2 + 3 * 2 * 32 * 256 * 2);
                cr_assert_neq(l->kernel, e->q[k].kernel, "the portable q kernel in the Hopper slot");
                for (int t2 = 0; t2 <= ti; t2++)
                    for (int k2 = 0; k2 < (t2 < ti ? KG_ATTN_KIND_COUNT : k); k2++)
                        cr_assert_neq(l->kernel, e->q90[t2][k2].kernel, "tuning %d kind %d and tuning %d kind %d share "
                                      "a kernel", ti, k, t2, k2);
            }
        }
    const int D = 256, BM = 128, BN = 32, NT = 256, NS = 3, swb = 128;
    const uint32_t a0 = 1024 * 3, QB = (uint32_t)(BM * D * 2), KB = (uint32_t)(BN * D * 2);
    const uint32_t aQ = a0, aO = aQ + QB, aK0 = aO + QB;
    cr_assert_eq(aK0 + NS * 2 * KB - a0 + 1024, 230400u, "the layout's bytes");
    for (int st = 0; st < NS; st++)
        cr_assert(((aK0 + st * 2 * KB) % 1024u) == 0 && ((aK0 + st * 2 * KB + KB) % 1024u) == 0,
                  "stage %d starts mid-atom", st);
    cr_assert(aO % 1024u == 0 && aK0 % 1024u == 0);
    /* load_sw128_rows stores chunk (r0 + it RS, cc) where sw128_at puts it */
    const int rws[2] = {BM, BN};
    for (int t = 0; t < 2; t++)
        for (int tid = 0; tid < NT; tid++)
            for (int it = 0; it < rws[t] / (NT / (D / 8)); it++) {
                const int r = tid / (D / 8) + it * (NT / (D / 8)), cc = tid % (D / 8);
                cr_assert_eq(model_rows_store(rws[t], D, NT, tid, it), model_swz_at(rws[t], swb, r, cc),
                             "rows %d: thread %d pass %d", rws[t], tid, it);
            }
    for (int kk = 0; kk < D / 16; kk++) {
        for (int w = 0; w < 2; w++)
            model_kmajor(aQ, BM, swb, w, kk, D);   /* A = Q_w (and dout_w) */
        model_kmajor(aK0 + 2 * KB, BN, swb, -1, kk, D); /* B = K (and V), stage 1 */
    }
    for (int kk = 0; kk < BN / 16; kk++)
        model_nmajor(aK0 + 4 * KB, BN, swb, kk, 0, D, D); /* dQ's B = K, stage 2 */
    /* dQ's stores (store_wg, wg_acc_walk: warpgroup w rows 64 w.. + 64, all D columns) */
    static unsigned char hit[128][256];
    memset(hit, 0, sizeof hit);
    for (int w = 0; w < 2; w++)
        wg_acc_walk(hit, 64 * w, 0, D);
    for (int r = 0; r < BM; r++)
        for (int col = 0; col < D; col++)
            cr_assert_eq(hit[r][col], 1, "dQ (%d, %d) stored %d times", r, col, hit[r][col]);
}

Test(attention_bwd_validation, query_split_plan)
{
    int sh, st;
    /* run r3's worst case: f32 B1 Hq4 Hkv1 S6240 D64 causal, 128-key blocks
       of 64-query tiles, 49 lanes on 132 SMs: 49 blocks, the longest 4 x 98
       steps; split, into at least 2 blocks a lane */
    kgi_attnb_split(1, 4, 1, 6240, 6240, 64, 1, 128, 64, 49, 132, 1, 8, &sh, &st);
    cr_assert_geq(sh * st, 2, "%d x %d", sh, st);
    cr_assert_leq(sh, 4);
    cr_assert_leq(49 * sh * st, 8 * 132);
    /* at most 4 waves: fewer splits */
    int sh4, st4;
    kgi_attnb_split(1, 4, 1, 6240, 6240, 64, 1, 128, 64, 49, 132, 1, 4, &sh4, &st4);
    cr_assert_geq(sh4 * st4, 2, "%d x %d", sh4, st4);
    cr_assert_leq(49 * sh4 * st4, 4 * 132);
    /* the same with 264 SMs: split too */
    int sh2, st2;
    kgi_attnb_split(1, 4, 1, 6240, 6240, 64, 1, 128, 64, 49, 264, 1, 8, &sh2, &st2);
    cr_assert_geq(sh2 * st2, 2, "%d x %d on 264 SMs", sh2, st2);
    /* non-causal MQA 8:1 of 4096 keys, bf16 D96 (portable): 32 lanes, split */
    kgi_attnb_split(1, 8, 1, 4096, 4096, 96, 0, 128, 64, 32, 132, 0, 8, &sh, &st);
    cr_assert_geq(sh * st, 2, "%d x %d", sh, st);
    /* B Hkv lanes >= the SMs: never */
    kgi_attnb_split(2, 32, 32, 4096, 4096, 64, 1, 128, 64, 4, 132, 1, 8, &sh, &st);
    cr_assert(sh == 1 && st == 1, "%d x %d", sh, st);
    kgi_attnb_split(1, 4, 1, 6240, 6240, 64, 1, 128, 64, 132, 132, 1, 8, &sh, &st);
    cr_assert(sh == 1 && st == 1, "%d x %d", sh, st);
    /* too many key blocks for the scratch bound (kgi_attnb_split_max 0): never */
    kgi_attnb_split(64, 4, 1, 4096, 4096, 64, 1, 128, 64, 1, 132, 1, 8, &sh, &st);
    cr_assert(sh == 1 && st == 1, "%d x %d", sh, st);
    /* one query tile of one head: nothing to split */
    kgi_attnb_split(1, 1, 1, 40, 8192, 64, 0, 128, 64, 64, 132, 1, 8, &sh, &st);
    cr_assert(sh == 1 && st == 1, "%d x %d", sh, st);
    /* seeded shapes: within the bounds (heads of the group, query tiles,
       kgi_attnb_split_max, 8 waves of blocks) and the same answer twice */
    uint64_t r = 2026;
    for (int i = 0; i < 400; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        const int64_t B = 1 + (int64_t)(r >> 60) % 3, Hkv = 1 + (int64_t)(r >> 56) % 3,
                      G = 1 + (int64_t)(r >> 50) % 8, Sq = 1 + (int64_t)(r >> 30) % 9000,
                      Sk = 1 + (int64_t)(r >> 10) % 9000, D = 32 << ((r >> 5) % 4);
        const int causal = (int)(r & 1), bm = (r >> 1) & 1 ? 64 : 32, bn = (r >> 2) & 1 ? 128 : 64;
        const int nsm = (r >> 3) & 1 ? 132 : 78;
        const int64_t nkb = (Sk + bn - 1) / bn, lanes = 1 + (int64_t)(r >> 20) % (nkb < 128 ? nkb : 128);
        kgi_attnb_split(B, G * Hkv, Hkv, Sq, Sk, D, causal, bn, bm, lanes, nsm, (int)((r >> 4) & 1), 8, &sh, &st);
        int a, b;
        kgi_attnb_split(B, G * Hkv, Hkv, Sq, Sk, D, causal, bn, bm, lanes, nsm, (int)((r >> 4) & 1), 8, &a, &b);
        cr_assert(a == sh && b == st);
        cr_assert(sh >= 1 && st >= 1);
        if (sh * st == 1)
            continue;
        cr_assert_leq(sh, G);
        cr_assert_leq(st, (Sq + bm - 1) / bm);
        cr_assert_leq(sh * st, kgi_attnb_split_max(B, G * Hkv, Hkv, Sq, Sk, D));
        cr_assert_leq(B * Hkv * lanes * sh * st, 8 * nsm);
        cr_assert_lt(B * Hkv * lanes, nsm);
    }
}

/* kgi_attnb_split answers from a cache of kgi_attnb_split_model's answers:
   the same plans as the model over a seeded sweep of shapes (few kv heads,
   odd lengths, every path, tile and wave cap), each asked three times in
   interleaved orders so that slots are replaced and hit, and from 4 threads
   at once. */
#include <pthread.h>
#define PLAN_SHAPES 300
static int64_t plan_arg[PLAN_SHAPES][13];
static int plan_want[PLAN_SHAPES][2];
static void plan_ask(int i, int *sh, int *st)
{
    const int64_t *a = plan_arg[i];
    kgi_attnb_split(a[0], a[1], a[2], a[3], a[4], a[5], (int)a[6], (int)a[7], (int)a[8], a[9], (int)a[10],
                    (int)a[11], (int)a[12], sh, st);
}
static void *plan_thread(void *arg)
{
    const int off = (int)(intptr_t)arg;
    for (int r = 0; r < 3; r++)
        for (int n = 0; n < PLAN_SHAPES; n++) {
            const int i = (n * 7 + off * 31 + r * 13) % PLAN_SHAPES;
            int sh, st;
            plan_ask(i, &sh, &st);
            if (sh != plan_want[i][0] || st != plan_want[i][1])
                return (void *)(intptr_t)(i + 1);
        }
    return NULL;
}
Test(attention_bwd_validation, query_split_plan_cache_equals_the_model)
{
    uint64_t r = 2026;
    int split = 0;
    for (int i = 0; i < PLAN_SHAPES; i++) {
        const int64_t hkv = 1 + (int64_t)kt_uniform(&r, 0, 3), g = 1 + (int64_t)kt_uniform(&r, 0, 8);
        const int64_t sq = 1 + (int64_t)kt_uniform(&r, 0, 9000), sk = 1 + (int64_t)kt_uniform(&r, 0, 9000);
        const int64_t dims[5] = {32, 64, 96, 128, 256}, d = dims[(int)kt_uniform(&r, 0, 5)];
        const int path = (int)kt_uniform(&r, 0, 3), bn = kt_uniform(&r, 0, 1) < 0.5 ? 64 : 128;
        const int bm = kt_uniform(&r, 0, 1) < 0.5 ? 32 : 64;
        const int64_t nkb = (sk + bn - 1) / bn, lanes = 1 + (int64_t)kt_uniform(&r, 0, (double)(nkb < 64 ? nkb : 64));
        const int64_t a[13] = {1 + (int64_t)kt_uniform(&r, 0, 2), hkv * g, hkv, sq, sk, d,
                               kt_uniform(&r, 0, 1) < 0.5, bn, bm, lanes, 132, path,
                               path == 2 ? 4 : 8};
        memcpy(plan_arg[i], a, sizeof a);
        kgi_attnb_split_model(a[0], a[1], a[2], a[3], a[4], a[5], (int)a[6], bn, bm, lanes, 132, path, (int)a[12],
                              &plan_want[i][0], &plan_want[i][1]);
        split += plan_want[i][0] * plan_want[i][1] > 1;
    }
    cr_assert_geq(split, PLAN_SHAPES / 10, "the sweep should hold shapes that split (%d of %d)", split, PLAN_SHAPES);
    cr_assert_null(plan_thread((void *)(intptr_t)0), "one thread: a plan differs from the model's");
    pthread_t th[4];
    for (int t = 0; t < 4; t++)
        cr_assert_eq(pthread_create(&th[t], NULL, plan_thread, (void *)(intptr_t)(t + 1)), 0);
    for (int t = 0; t < 4; t++) {
        void *bad = NULL;
        pthread_join(th[t], &bad);
        cr_assert_null(bad, "thread %d: the plan of shape %d differs from the model's", t, (int)(intptr_t)bad - 1);
    }
}

Test(attention_bwd_validation, empty_problems_validate_then_report_the_device)
{
    call_t c = valid_call(KG_F16, 64);
    c.q.shape[2] = c.out.shape[2] = c.dout.shape[2] = c.dq.shape[2] = c.lse.shape[2] = 0;
    cr_assert_eq(CALL(c, NULL, NULL), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
}

/* ---- the float64 reference ----------------------------------------------- */

/* Logical [B,H,S,D] arrays of doubles (inputs already rounded to the dtype). */
typedef struct {
    const acase *c;
    const double *q, *k, *v, *dout, *out; /* out: as given to the kernels */
    const float *lse;                     /* as given to the kernels */
    const float *mask;
    double scale;
} ref_in;

static int64_t lidx(int H, int S, int D, int b, int h, int s) { return (((int64_t)b * H + h) * S + s) * D; }

static double dot(const double *a, const double *b, int D)
{
    double s = 0;
    for (int d = 0; d < D; d++)
        s += a[d] * b[d];
    return s;
}

/* The forward in float64: out and lse (for the kernels' inputs). */
static void forward64(const ref_in *r, double *out, double *lse)
{
    const acase *c = r->c;
    const int D = c->D, g = c->Hq / c->Hkv;
    double *p = malloc(sizeof(double) * (c->Sk + 1));
    for (int b = 0; b < c->B; b++)
        for (int h = 0; h < c->Hq; h++)
            for (int i = 0; i < c->Sq; i++) {
                const double *qi = r->q + lidx(c->Hq, c->Sq, D, b, h, i);
                double m = -INFINITY, l = 0;
                for (int j = 0; j < c->Sk; j++) {
                    const int hidden = c->causal && j > i + c->Sk - c->Sq;
                    p[j] = hidden ? -INFINITY
                                  : dot(qi, r->k + lidx(c->Hkv, c->Sk, D, b, h / g, j), D) * r->scale +
                                        attn_ref_mask_at(c, r->mask, b, h, i, j);
                    m = p[j] > m ? p[j] : m;
                }
                for (int j = 0; j < c->Sk; j++)
                    l += (p[j] = m == -INFINITY ? 0 : exp(p[j] - m));
                double *o = out + lidx(c->Hq, c->Sq, D, b, h, i);
                for (int d = 0; d < D; d++)
                    o[d] = 0;
                for (int j = 0; j < c->Sk; j++)
                    for (int d = 0; d < D; d++)
                        o[d] += l > 0 ? p[j] / l * r->v[lidx(c->Hkv, c->Sk, D, b, h / g, j) + d] : 0;
                lse[((int64_t)b * c->Hq + h) * c->Sq + i] = l > 0 ? m + log(l) : -INFINITY;
            }
    free(p);
}

static double rnd(kg_dtype dt, double x) { return kt_round(dt, x); }

/* The gradients, logical layout. lp = 0: exact float64 math (P from the
   float64 scores, delta from the exact out); lp = 1: the dtype's own
   precision as described at the top. */
static void backward_ref(const ref_in *r, int lp, double *gq, double *gk, double *gv)
{
    const acase *c = r->c;
    const kg_dtype dt = c->dt;
    const int D = c->D, g = c->Hq / c->Hkv;
    const int64_t nq = (int64_t)c->B * c->Hq * c->Sq * D, nk = (int64_t)c->B * c->Hkv * c->Sk * D;
    for (int64_t i = 0; i < nq; i++)
        gq[i] = 0;
    for (int64_t i = 0; i < nk; i++)
        gk[i] = gv[i] = 0;
    double *p = malloc(sizeof(double) * (c->Sk + 1)), *o = malloc(sizeof(double) * D);
    for (int b = 0; b < c->B; b++)
        for (int h = 0; h < c->Hq; h++)
            for (int i = 0; i < c->Sq; i++) {
                const int64_t qo = lidx(c->Hq, c->Sq, D, b, h, i);
                const double *qi = r->q + qo, *gi = r->dout + qo;
                const float lse = r->lse[((int64_t)b * c->Hq + h) * c->Sq + i];
                double m = -INFINITY, l = 0;
                for (int j = 0; j < c->Sk; j++) {
                    const int hidden = c->causal && j > i + c->Sk - c->Sq;
                    const double *kj = r->k + lidx(c->Hkv, c->Sk, D, b, h / g, j);
                    if (hidden) {
                        p[j] = -INFINITY;
                    } else if (lp) {
                        float dd = 0;
                        for (int d = 0; d < D; d++)
                            dd += (float)qi[d] * (float)kj[d];
                        p[j] = (float)rnd(dt, dd) * (float)r->scale + (float)attn_ref_mask_at(c, r->mask, b, h, i, j);
                    } else {
                        p[j] = dot(qi, kj, D) * r->scale + attn_ref_mask_at(c, r->mask, b, h, i, j);
                    }
                    m = p[j] > m ? p[j] : m;
                }
                if (lp) {
                    for (int j = 0; j < c->Sk; j++)
                        p[j] = lse == -INFINITY ? 0.0 : (double)expf((float)p[j] - lse);
                } else {
                    for (int j = 0; j < c->Sk; j++)
                        l += (p[j] = m == -INFINITY ? 0 : exp(p[j] - m));
                    for (int j = 0; j < c->Sk; j++)
                        p[j] = l > 0 ? p[j] / l : 0;
                }
                double delta = 0;
                if (lp) {
                    float dl = 0;
                    for (int d = 0; d < D; d++)
                        dl += (float)gi[d] * (float)r->out[qo + d];
                    delta = dl;
                } else {
                    for (int d = 0; d < D; d++)
                        o[d] = 0;
                    for (int j = 0; j < c->Sk; j++)
                        for (int d = 0; d < D; d++)
                            o[d] += p[j] * r->v[lidx(c->Hkv, c->Sk, D, b, h / g, j) + d];
                    delta = dot(gi, o, D);
                }
                for (int j = 0; j < c->Sk; j++) {
                    if (p[j] == 0)
                        continue;
                    const int64_t ko = lidx(c->Hkv, c->Sk, D, b, h / g, j);
                    double dp, ds, pv;
                    if (lp) {
                        float f = 0;
                        for (int d = 0; d < D; d++)
                            f += (float)gi[d] * (float)r->v[ko + d];
                        dp = rnd(dt, f);
                        ds = rnd(dt, (float)p[j] * ((float)dp - (float)delta));
                        pv = rnd(dt, p[j]);
                        for (int d = 0; d < D; d++) {
                            gq[qo + d] = (float)gq[qo + d] + (float)ds * (float)r->k[ko + d];
                            gk[ko + d] = (float)gk[ko + d] + (float)ds * (float)qi[d];
                            gv[ko + d] = (float)gv[ko + d] + (float)pv * (float)gi[d];
                        }
                    } else {
                        dp = dot(gi, r->v + ko, D);
                        ds = p[j] * (dp - delta);
                        pv = p[j];
                        for (int d = 0; d < D; d++) {
                            gq[qo + d] += ds * r->k[ko + d];
                            gk[ko + d] += ds * qi[d];
                            gv[ko + d] += pv * gi[d];
                        }
                    }
                }
            }
    for (int64_t i = 0; i < nq; i++)
        gq[i] = lp ? rnd(dt, (float)(gq[i] * (float)r->scale)) : gq[i] * r->scale;
    for (int64_t i = 0; i < nk; i++) {
        gk[i] = lp ? rnd(dt, (float)(gk[i] * (float)r->scale)) : gk[i] * r->scale;
        gv[i] = lp ? rnd(dt, gv[i]) : gv[i];
    }
    free(p);
    free(o);
}

/* The reference's own gradients against central differences of
   L = sum(dout * out(q, k, v)) in float64, on a tiny causal GQA case with a
   mask (every path of the math). */
Test(attention_bwd_reference, matches_finite_differences)
{
    acase c = {KG_F32, 1, 2, 1, 3, 4, 3, 1, MASK_RANDOM, 2, 0, 0.7f};
    uint64_t rng = kt_seed();
    const int nq = 2 * 3 * 3, nk = 4 * 3;
    double q[18], k[12], v[12], dout[18], out[18], lse64[6];
    float lse[6], mask[12];
    for (int i = 0; i < nq; i++) {
        q[i] = kt_uniform(&rng, -1, 1);
        dout[i] = kt_uniform(&rng, -1, 1);
    }
    for (int i = 0; i < nk; i++) {
        k[i] = kt_uniform(&rng, -1, 1);
        v[i] = kt_uniform(&rng, -1, 1);
    }
    for (int i = 0; i < 12; i++)
        mask[i] = (float)kt_uniform(&rng, -1, 1);
    mask[0] = -INFINITY; /* row 0 then sees no key at all (causal hides keys 2, 3; mask key 0) */
    mask[1] = -INFINITY;
    ref_in r = {&c, q, k, v, dout, out, lse, mask, 0.7};
    forward64(&r, out, lse64);
    for (int i = 0; i < 6; i++)
        lse[i] = (float)lse64[i];
    double gq[18], gk[12], gv[12];
    backward_ref(&r, 0, gq, gk, gv);
    double *x[3] = {q, k, v}, *gx[3] = {gq, gk, gv};
    const int n[3] = {nq, nk, nk};
    const char *nm[3] = {"dq", "dk", "dv"};
    for (int t = 0; t < 3; t++)
        for (int i = 0; i < n[t]; i++) {
            const double h = 1e-6, keep = x[t][i];
            double lo = 0, hi = 0, o2[18], l2[6];
            x[t][i] = keep + h;
            forward64(&r, o2, l2);
            for (int e = 0; e < nq; e++)
                hi += dout[e] * o2[e];
            x[t][i] = keep - h;
            forward64(&r, o2, l2);
            for (int e = 0; e < nq; e++)
                lo += dout[e] * o2[e];
            x[t][i] = keep;
            const double fd = (hi - lo) / (2 * h);
            cr_assert(fabs(fd - gx[t][i]) <= 1e-7 + 1e-6 * fabs(fd), "%s[%d]: reference %.12g, finite difference %.12g",
                      nm[t], i, gx[t][i], fd);
        }
    for (int d = 0; d < 3; d++)
        cr_assert_eq(gq[d], 0.0, "row 0 has no visible key: dq must be 0");
}

/* ---- CPU: the split-TF32 kernels' error budget -------------------------------- */

/* x as TF32 hi + lo, the kernels' integer split (x3_int in
   templates/attention_bwd_x3.cuh) */
static void x3m_split(float x, float *hi, float *lo)
{
    uint32_t u, h;
    memcpy(&u, &x, 4);
    h = (u + 0x1000u) & 0xffffe000u;
    memcpy(hi, &h, 4);
    const float r = x - *hi;
    memcpy(&u, &r, 4);
    u &= 0xffffe000u;
    memcpy(lo, &u, 4);
}

/* One mma k8 step into one f32 accumulator as the tensor cores do it: the
   sum of c and the n products, truncated toward zero to f32. */
static float x3m_mma(float c, const float *a, const float *b, int n)
{
    double s = c;
    for (int k = 0; k < n; k++)
        s += (double)a[k] * b[k];
    float f = (float)s;
    if (fabs((double)f) > fabs(s))
        f = nextafterf(f, 0.f);
    return f;
}

/* a . b over n elements in split TF32: per k8 step lo hi, hi lo, hi hi
   (the kernels' order); parts > 0: every `parts` k8 steps in a fresh
   accumulator, added to the sum by FADD; 0: one chain. */
static float x3m_dot(const float *a, const float *b, int n, int parts)
{
    float acc = 0, part = 0;
    int cnt = 0;
    for (int k0 = 0; k0 < n; k0 += 8) {
        const int m = n - k0 < 8 ? n - k0 : 8;
        float ah[8], al[8], bh[8], bl[8];
        for (int k = 0; k < m; k++) {
            x3m_split(a[k0 + k], &ah[k], &al[k]);
            x3m_split(b[k0 + k], &bh[k], &bl[k]);
        }
        float *c = parts ? &part : &acc;
        *c = x3m_mma(*c, al, bh, m);
        *c = x3m_mma(*c, ah, bl, m);
        *c = x3m_mma(*c, ah, bh, m);
        if (parts && ++cnt == parts)
            acc += part, part = 0, cnt = 0;
    }
    return parts && cnt ? acc + part : acc;
}

/* A host model of the f32 split-TF32 kvq kernels' dK (attnb_kvq_tc with
   attention_bwd_x3.cuh) on the case that failed on the GPU in session 11
   (MQA 8:1 causal, 150 queries, 100 keys, scale 0.3, inputs drawn as
   run_case draws them): S^T = K Q^T and dP^T = V dout^T in split TF32 from
   parts of the tuning's `parts` k8 steps (one chain where 0), P = 2^(S scale
   log2 e - lse log2 e), dS = P (dP - delta), each step's dS^T Q over the
   tuning's query tile in fresh accumulators, added to dK by FADD; dK scaled.
   Its dK must meet the GPU tests' bound, 2 max|lp - ref| + atol. The model
   is of the arithmetic only (the order within a k8 step's sum is not the
   hardware's); what it checks is the budget the truncating accumulation
   leaves: at D128 one chain of 48 products (parts 0) fails this bound
   (session 12: 3.3e-5 to 5.4e-5 against 2.3e-5 to 2.8e-5 on three seeds),
   parts of 2 pass it (4.4e-6 to 6.2e-6), so a generator without the parts
   fails this test. Every split-TF32 tuning (path 3) of every head dim. */
static void x3_budget(int D, int parts, int bm, uint64_t seed)
{
    const acase c = {KG_F32, 1, 8, 1, 150, 100, D, 1, MASK_NONE, 0, 0, 0.3f};
    const int64_t nq = (int64_t)c.Hq * c.Sq * D, nk = (int64_t)c.Sk * D, nl = (int64_t)c.Hq * c.Sq;
    double *q = malloc(sizeof(double) * nq), *dout = malloc(sizeof(double) * nq), *out = malloc(sizeof(double) * nq);
    double *k = malloc(sizeof(double) * nk), *v = malloc(sizeof(double) * nk), *lse64 = malloc(sizeof(double) * nl);
    float *lse = malloc(sizeof(float) * nl);
    uint64_t r = seed;
    for (int64_t i = 0; i < nq; i++) {
        q[i] = rnd(KG_F32, kt_uniform(&r, -1.5, 1.5));
        dout[i] = rnd(KG_F32, kt_uniform(&r, -1, 1));
    }
    for (int64_t i = 0; i < nk; i++) {
        k[i] = rnd(KG_F32, kt_uniform(&r, -1.5, 1.5));
        v[i] = rnd(KG_F32, kt_uniform(&r, -1, 1));
    }
    const double scale = c.scale;
    ref_in ri = {&c, q, k, v, dout, out, lse, NULL, scale};
    forward64(&ri, out, lse64);
    for (int64_t i = 0; i < nq; i++)
        out[i] = rnd(KG_F32, out[i]);
    for (int64_t i = 0; i < nl; i++)
        lse[i] = (float)lse64[i];
    double *gq = malloc(sizeof(double) * nq), *gk = malloc(sizeof(double) * nk), *gv = malloc(sizeof(double) * nk);
    double *lq = malloc(sizeof(double) * nq), *lk = malloc(sizeof(double) * nk), *lv = malloc(sizeof(double) * nk);
    backward_ref(&ri, 0, gq, gk, gv);
    backward_ref(&ri, 1, lq, lk, lv);

    /* the model, f32 operands as the kernel holds them */
    float *fq = malloc(sizeof(float) * nq), *fd = malloc(sizeof(float) * nq), *fk = malloc(sizeof(float) * nk),
          *fv = malloc(sizeof(float) * nk), *delta = malloc(sizeof(float) * nl), *l2 = malloc(sizeof(float) * nl);
    for (int64_t i = 0; i < nq; i++)
        fq[i] = (float)q[i], fd[i] = (float)dout[i];
    for (int64_t i = 0; i < nk; i++)
        fk[i] = (float)k[i], fv[i] = (float)v[i];
    for (int64_t x = 0; x < nl; x++) {
        float s = 0;
        for (int d = 0; d < D; d++)
            s += fd[x * D + d] * (float)out[x * D + d];
        delta[x] = s;
        l2[x] = lse[x] * 1.4426950408889634f;
    }
    const float sl2 = (float)(scale * 1.4426950408889634);
    float *acc = malloc(sizeof(float) * D), *ds = malloc(sizeof(float) * bm), *col = malloc(sizeof(float) * bm);
    double worst = 0, worst_lp = 0;
    for (int j = 0; j < c.Sk; j++) {
        for (int d = 0; d < D; d++)
            acc[d] = 0;
        for (int h = 0; h < c.Hq; h++)
            for (int m0 = 0; m0 < c.Sq; m0 += bm) {
                for (int ii = 0; ii < bm; ii++) {
                    const int i = m0 + ii;
                    const int64_t x = (int64_t)h * c.Sq + i;
                    ds[ii] = 0;
                    if (i < c.Sq && j <= i + c.Sk - c.Sq) {
                        const float s = x3m_dot(fk + (int64_t)j * D, fq + x * D, D, parts);
                        const float dp = x3m_dot(fv + (int64_t)j * D, fd + x * D, D, parts);
                        ds[ii] = exp2f(s * sl2 - l2[x]) * (dp - delta[x]);
                    }
                }
                for (int d = 0; d < D; d++) {
                    for (int ii = 0; ii < bm; ii++)
                        col[ii] = m0 + ii < c.Sq ? fq[((int64_t)h * c.Sq + m0 + ii) * D + d] : 0.f;
                    acc[d] += x3m_dot(ds, col, bm, 0);
                }
            }
        for (int d = 0; d < D; d++) {
            const int64_t x = (int64_t)j * D + d;
            const double e = fabs((double)(acc[d] * (float)scale) - gk[x]), el = fabs(lk[x] - gk[x]);
            worst = e > worst ? e : worst;
            worst_lp = el > worst_lp ? el : worst_lp;
        }
    }
    double rtol, atol;
    kt_tolerance(KG_F32, &rtol, &atol);
    const double tol = 2 * worst_lp + atol;
    cr_assert(worst <= tol,
              "f32 D%d split TF32, S^T / dP^T in parts of %d k8 steps (0: one chain), %d-query steps: the model's dK "
              "max error %.3g > %.3g (2 x %.3g + %.3g), seed %llu",
              D, parts, bm, worst, tol, worst_lp, atol, (unsigned long long)seed);
    free(q), free(dout), free(out), free(k), free(v), free(lse64), free(lse);
    free(gq), free(gk), free(gv), free(lq), free(lk), free(lv);
    free(fq), free(fd), free(fk), free(fv), free(delta), free(l2), free(acc), free(ds), free(col);
}

Test(attention_bwd_reference, split_tf32_tunings_meet_the_error_budget_in_a_host_model)
{
    int seen = 0;
    for (int s = 0; s < KG_ATTNB_DIM_COUNT; s++) {
        const kg_attnb_entry *e = &kg_attnb_table[KG_F32][s];
        for (int t = 0; t < e->ntunes; t++) {
            const kg_attnb_launch *l = &e->kvq[t][KG_ATTN_CAUSAL];
            if (l->path != 3)
                continue;
            /* tunings of the same parts and query tile model alike: once */
            int dup = 0;
            for (int u = 0; u < t; u++)
                dup |= e->kvq[u][KG_ATTN_CAUSAL].path == 3 && e->kvq[u][KG_ATTN_CAUSAL].parts == l->parts &&
                       e->kvq[u][KG_ATTN_CAUSAL].tile == l->tile;
            if (dup)
                continue;
            for (int i = 0; i < 3; i++)
                x3_budget(kg_attnb_dims[s], l->parts, l->tile, kt_seed() + (uint64_t)i);
            seen++;
        }
    }
    cr_assert(seen > 0, "no split-TF32 tuning generated");
}

/* ---- GPU: numerics ----------------------------------------------------------- */

static uint64_t rng;

static void gpu_setup(void)
{
    ctx = kt_open_gpu();
    rng = kt_seed();
}

/* Logical doubles -> a host buffer in the storage layout, rounded to dt. */
static void *store(const acase *c, const double *x, int H, int S)
{
    const size_t es = kg_dtype_size(c->dt);
    const int64_t n = (int64_t)c->B * H * S * c->D;
    void *buf = malloc(n * es + 16);
    for (int b = 0; b < c->B; b++)
        for (int h = 0; h < H; h++)
            for (int s = 0; s < S; s++)
                for (int d = 0; d < c->D; d++)
                    kt_set(buf, c->dt, attn_ref_off(c, H, S, b, h, s) + d, x[lidx(H, S, c->D, b, h, s) + d]);
    return buf;
}

static void *to_device(const void *host, size_t bytes)
{
    void *d = kt_alloc(ctx, bytes + 16);
    if (bytes)
        kt_upload(ctx, d, host, bytes);
    return d;
}

typedef struct {
    void *dq, *dk, *dv; /* host, storage layout */
} grads;

/* The device inputs of the bitwise tests: q and k uniform in [-1, 1], lse
   (two floats a row, as the kernels read it) uniform in [2, 4]; the tests
   pass q as out and dout too and k as v, valid inputs for the arithmetic. */
static void random_bitwise_inputs(const acase *c, void **q, void **k, void **l)
{
    const size_t es = kg_dtype_size(c->dt);
    const int64_t nq = (int64_t)c->B * c->Hq * c->Sq * c->D, nk = (int64_t)c->B * c->Hkv * c->Sk * c->D;
    const int64_t nl = (int64_t)c->B * c->Hq * c->Sq;
    void *hq = malloc(nq * es), *hk = malloc(nk * es);
    float *hl = malloc(nl * 8);
    for (int64_t e = 0; e < nq; e++)
        kt_set(hq, c->dt, e, kt_uniform(&rng, -1, 1));
    for (int64_t e = 0; e < nk; e++)
        kt_set(hk, c->dt, e, kt_uniform(&rng, -1, 1));
    for (int64_t e = 0; e < 2 * nl; e++)
        hl[e] = (float)kt_uniform(&rng, 2, 4);
    *q = to_device(hq, nq * es), *k = to_device(hk, nk * es), *l = to_device(hl, nl * 8);
    free(hq), free(hk), free(hl);
}

/* Runs the backward once on device buffers; returns the gradients. */
static grads run_gpu(const acase *c, void *q, void *k, void *v, void *out, void *dout, void *lse, void *mask)
{
    const size_t es = kg_dtype_size(c->dt);
    const int64_t nq = (int64_t)c->B * c->Hq * c->Sq * c->D, nk = (int64_t)c->B * c->Hkv * c->Sk * c->D;
    void *dq = kt_alloc(ctx, nq * es + 16), *dk = kt_alloc(ctx, nk * es + 16), *dv = kt_alloc(ctx, nk * es + 16);
    KT_OK(ctx, kg_memset(ctx, dq, 0xff, nq * es + 16)); /* NaN poison */
    KT_OK(ctx, kg_memset(ctx, dk, 0xff, nk * es + 16));
    KT_OK(ctx, kg_memset(ctx, dv, 0xff, nk * es + 16));
    kg_tensor tq = attn_ref_view4(c, q, c->Hq, c->Sq), tk = attn_ref_view4(c, k, c->Hkv, c->Sk),
              tv = attn_ref_view4(c, v, c->Hkv, c->Sk), to = attn_ref_view4(c, out, c->Hq, c->Sq),
              tdo = attn_ref_view4(c, dout, c->Hq, c->Sq), tdq = attn_ref_view4(c, dq, c->Hq, c->Sq),
              tdk = attn_ref_view4(c, dk, c->Hkv, c->Sk), tdv = attn_ref_view4(c, dv, c->Hkv, c->Sk);
    /* lse as a strided view: every other float */
    kg_tensor tl = kg_tensor_contiguous(lse, KG_F32, 3, (const int64_t[]){c->B, c->Hq, c->Sq});
    for (int d = 0; d < 3; d++)
        tl.strides[d] *= 2;
    kg_tensor tm;
    if (c->mask) {
        if (c->mask_ndim == 1)
            tm = kg_tensor_contiguous(mask, KG_F32, 1, (const int64_t[]){c->Sk});
        else if (c->mask_ndim == 2)
            tm = kg_tensor_contiguous(mask, KG_F32, 2, (const int64_t[]){c->Sq, c->Sk});
        else if (c->mask == MASK_PAD)
            tm = kg_tensor_contiguous(mask, KG_F32, 4, (const int64_t[]){c->B, 1, 1, c->Sk});
        else
            tm = kg_tensor_contiguous(mask, KG_F32, 4, (const int64_t[]){c->B, c->Hq, c->Sq, c->Sk});
    }
    kg_attention_opts opts = {c->scale, c->causal};
    KT_OK(ctx,
          kg_attention_backward(ctx, &tdq, &tdk, &tdv, &tdo, &tq, &tk, &tv, &to, &tl, c->mask ? &tm : NULL, &opts));
    KT_OK(ctx, kg_sync(ctx));
    grads g = {malloc(nq * es + 1), malloc(nk * es + 1), malloc(nk * es + 1)};
    kt_download(ctx, g.dq, dq, nq * es);
    kt_download(ctx, g.dk, dk, nk * es);
    kt_download(ctx, g.dv, dv, nk * es);
    kg_free(ctx, dq);
    kg_free(ctx, dk);
    kg_free(ctx, dv);
    return g;
}

static void check_grad(const acase *c, const char *name, const void *got, const double *ref, const double *lp, int H,
                       int S)
{
    double max_err = 0, max_lp = 0, wgot = 0, wwant = 0;
    int wb = 0, wh = 0, ws = 0, wd = 0;
    for (int b = 0; b < c->B; b++)
        for (int h = 0; h < H; h++)
            for (int s = 0; s < S; s++)
                for (int d = 0; d < c->D; d++) {
                    const int64_t li = lidx(H, S, c->D, b, h, s) + d;
                    const double x = kt_get(got, c->dt, attn_ref_off(c, H, S, b, h, s) + d), want = ref[li];
                    cr_assert(!isnan(x), "%s %s [%d,%d,%d,%d] D=%d tune=%s: NaN (unwritten or invalid) (seed %llu)",
                              kg_dtype_name(c->dt), name, b, h, s, d, c->D,
                              getenv("KG_ATTNB_TUNE") ? getenv("KG_ATTNB_TUNE") : "default",
                              (unsigned long long)kt_seed());
                    if (fabs(lp[li] - want) > max_lp)
                        max_lp = fabs(lp[li] - want);
                    if (fabs(x - want) > max_err) {
                        max_err = fabs(x - want);
                        wb = b, wh = h, ws = s, wd = d, wgot = x, wwant = want;
                    }
                }
    double rtol, atol;
    kt_tolerance(c->dt, &rtol, &atol);
    const double tol = 2 * max_lp + atol;
    cr_assert(max_err <= tol,
              "%s %s B=%d Hq=%d Hkv=%d Sq=%d Sk=%d D=%d causal=%d mask=%d/%d bshd=%d tune=%s: max error %.3g at "
              "[%d,%d,%d,%d] (got %.6g, want %.6g) > %.3g = 2 x %.3g (low-precision reference) + %.0e (seed %llu)",
              kg_dtype_name(c->dt), name, c->B, c->Hq, c->Hkv, c->Sq, c->Sk, c->D, c->causal, c->mask, c->mask_ndim,
              c->bshd, getenv("KG_ATTNB_TUNE") ? getenv("KG_ATTNB_TUNE") : "default", max_err, wb, wh, ws, wd, wgot,
              wwant, tol, max_lp, atol, (unsigned long long)kt_seed());
}

static void run_case(const acase *c)
{
    const kg_dtype dt = c->dt;
    const int D = c->D;
    const int64_t nq = (int64_t)c->B * c->Hq * c->Sq * D, nk = (int64_t)c->B * c->Hkv * c->Sk * D;
    const int64_t nl = (int64_t)c->B * c->Hq * c->Sq, nm = c->mask ? attn_ref_mask_numel(c) : 0;
    const size_t es = kg_dtype_size(dt);
    double *q = malloc(sizeof(double) * (nq + 1)), *k = malloc(sizeof(double) * (nk + 1)),
           *v = malloc(sizeof(double) * (nk + 1)), *dout = malloc(sizeof(double) * (nq + 1)),
           *out = malloc(sizeof(double) * (nq + 1)), *lse64 = malloc(sizeof(double) * (nl + 1));
    float *lse = malloc(sizeof(float) * (2 * nl + 1)), *hm = malloc(sizeof(float) * (nm + 1));
    for (int64_t i = 0; i < nq; i++) {
        q[i] = rnd(dt, kt_uniform(&rng, -1.5, 1.5));
        dout[i] = rnd(dt, kt_uniform(&rng, -1, 1));
    }
    for (int64_t i = 0; i < nk; i++) {
        k[i] = rnd(dt, kt_uniform(&rng, -1.5, 1.5));
        v[i] = rnd(dt, kt_uniform(&rng, -1, 1));
    }
    for (int64_t i = 0; i < nm; i++) {
        switch (c->mask) {
        case MASK_PAD: hm[i] = (i % c->Sk) >= c->Sk - 1 - (i / c->Sk) % 7 * (c->Sk / 8) ? -INFINITY : 0.f; break;
        case MASK_RANDOM: hm[i] = kt_uniform(&rng, 0, 1) < 0.2 ? -INFINITY : (float)kt_uniform(&rng, -2, 2); break;
        default: hm[i] = 0.f; break;
        }
    }
    if (c->mask == MASK_EMPTY_ROWS) /* [Sq,Sk]: rows 0, 3, 6, ... and the last entirely -inf */
        for (int64_t i = 0; i < c->Sq; i++)
            for (int64_t j = 0; j < c->Sk; j++)
                hm[i * c->Sk + j] = (i % 3 == 0 || i == c->Sq - 1) ? -INFINITY : (float)kt_uniform(&rng, -1, 1);
    const double scale = c->scale != 0.f ? c->scale : (double)(float)(1.0 / sqrt((double)D));
    ref_in r = {c, q, k, v, dout, out, lse, hm, scale};
    forward64(&r, out, lse64);
    for (int64_t i = 0; i < nq; i++)
        out[i] = rnd(dt, out[i]); /* the out the kernels get */
    float *lse2 = malloc(sizeof(float) * (2 * nl + 1));
    for (int64_t i = 0; i < nl; i++) {
        lse[i] = (float)lse64[i];
        lse2[2 * i] = lse[i];
        lse2[2 * i + 1] = NAN;
    }

    void *hq = store(c, q, c->Hq, c->Sq), *hk = store(c, k, c->Hkv, c->Sk), *hv = store(c, v, c->Hkv, c->Sk),
         *ho = store(c, out, c->Hq, c->Sq), *hdo = store(c, dout, c->Hq, c->Sq);
    void *dq_ = to_device(hq, nq * es), *dk_ = to_device(hk, nk * es), *dv_ = to_device(hv, nk * es),
         *do_ = to_device(ho, nq * es), *ddo = to_device(hdo, nq * es), *dl = to_device(lse2, nl * 8),
         *dm = to_device(hm, nm * 4);
    grads g = run_gpu(c, dq_, dk_, dv_, do_, ddo, dl, dm);

    double *rq = malloc(sizeof(double) * (nq + 1)), *rk = malloc(sizeof(double) * (nk + 1)),
           *rv = malloc(sizeof(double) * (nk + 1)), *lq = malloc(sizeof(double) * (nq + 1)),
           *lk = malloc(sizeof(double) * (nk + 1)), *lv = malloc(sizeof(double) * (nk + 1));
    backward_ref(&r, 0, rq, rk, rv);
    backward_ref(&r, 1, lq, lk, lv);
    check_grad(c, "dq", g.dq, rq, lq, c->Hq, c->Sq);
    check_grad(c, "dk", g.dk, rk, lk, c->Hkv, c->Sk);
    check_grad(c, "dv", g.dv, rv, lv, c->Hkv, c->Sk);
    /* rows with no visible key: dq exactly 0 */
    for (int b = 0; b < c->B; b++)
        for (int h = 0; h < c->Hq; h++)
            for (int i = 0; i < c->Sq; i++)
                if (lse[((int64_t)b * c->Hq + h) * c->Sq + i] == -INFINITY)
                    for (int d = 0; d < D; d++)
                        cr_assert(kt_get(g.dq, dt, attn_ref_off(c, c->Hq, c->Sq, b, h, i) + d) == 0.0,
                                  "%s dq[%d,%d,%d,%d] of a fully masked row is not 0 (seed %llu)", kg_dtype_name(dt), b,
                                  h, i, d, (unsigned long long)kt_seed());
    /* keys no query of their group sees (a -inf mask or the causal rule for
       every query row of every query head sharing the KV head; every key
       when Sq = 0): dk and dv exactly 0. The kernels' P of such a key is
       ex2(-inf - lse2) = 0 for every row (attention_bwd.cuh bwd_masked; a
       row with lse -inf has lse2 +inf), so dS = P (dP - delta) and both
       products dS^T q, P^T dout sum only zeros. */
    const int grp = c->Hq / c->Hkv;
    for (int b = 0; b < c->B; b++)
        for (int hk = 0; hk < c->Hkv; hk++)
            for (int j = 0; j < c->Sk; j++) {
                int seen = 0;
                for (int h = hk * grp; h < (hk + 1) * grp && !seen; h++)
                    for (int i = 0; i < c->Sq && !seen; i++)
                        seen =
                            !(c->causal && j > i + c->Sk - c->Sq) && attn_ref_mask_at(c, hm, b, h, i, j) != -INFINITY;
                if (seen)
                    continue;
                for (int d = 0; d < D; d++) {
                    const int64_t o = attn_ref_off(c, c->Hkv, c->Sk, b, hk, j) + d;
                    const double gk = kt_get(g.dk, dt, o), gv = kt_get(g.dv, dt, o);
                    cr_assert(gk == 0.0 && gv == 0.0,
                              "%s dk, dv [%d,%d,%d,%d] of a key no query sees = %.9g, %.9g, want 0 (seed %llu)",
                              kg_dtype_name(dt), b, hk, j, d, gk, gv, (unsigned long long)kt_seed());
                }
            }

    free(g.dq);
    free(g.dk);
    free(g.dv);
    void *bufs[] = {q, k, v, dout, out, lse64, lse, lse2, hm, hq, hk, hv, ho, hdo, rq, rk, rv, lq, lk, lv};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
    void *dev[] = {dq_, dk_, dv_, do_, ddo, dl, dm};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        kg_free(ctx, dev[i]);
}

static const kg_dtype DTS[3] = {KG_F32, KG_F16, KG_BF16};
static const int DIMS[5] = {32, 64, 96, 128, 256};

TestSuite(attention_bwd, .init = gpu_setup, .fini = close_ctx, .timeout = 600);

/* Every generated kernel: dtype x head dim x {none, causal, mask}; GQA 2:1 and
   MQA, lengths that are no multiple of any tile, Sq > Sk causal (rows that
   see no key), a padding mask with causal on top, [B,S,H,D] views. */
Test(attention_bwd, every_dtype_head_dim_and_mask_kind)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++) {
            if (!kt_take(4)) /* sanitizer mode (kg_test.h): a seeded sample */
                continue;
            acase none = {DTS[i], 1, 4, 2, 77, 130, DIMS[j], 0, MASK_NONE, 0, 0, 0.f};
            run_case(&none);
            acase causal = {DTS[i], 1, 4, 2, 130, 77, DIMS[j], 1, MASK_NONE, 0, 0, 0.f};
            run_case(&causal);
            acase mask = {DTS[i], 2, 2, 1, 77, 130, DIMS[j], j % 2, MASK_PAD, 4, 1, 0.f};
            run_case(&mask);
        }
}

/* GQA 4:1 and MQA (dk, dv summed over 4 and 8 query heads), causal with
   Sq < Sk and Sq > Sk, [B,S,H,D] views, a custom scale. */
Test(attention_bwd, gqa_mqa_and_causal_alignment)
{
    for (int i = 0; i < 3; i++) {
        if (!kt_take(2)) /* sanitizer mode (kg_test.h): a seeded sample */
            continue;
        acase gqa = {DTS[i], 2, 8, 2, 100, 150, 64, 1, MASK_NONE, 0, 1, 0.f};
        run_case(&gqa);
        acase mqa = {DTS[i], 1, 8, 1, 150, 100, 128, 1, MASK_NONE, 0, 0, 0.3f};
        run_case(&mqa);
        acase lo = {DTS[i], 1, 2, 2, 33, 200, 64, 1, MASK_NONE, 0, 0, 0.f};
        run_case(&lo);
        acase hi = {DTS[i], 1, 2, 1, 200, 33, 128, 1, MASK_NONE, 0, 1, 0.f};
        run_case(&hi);
    }
}

/* TESTING.md's (Sq, Sk) pairs at D = 64 (the two 1k pairs in bf16 only, to
   keep the float64 reference short). */
Test(attention_bwd, sequence_lengths)
{
    const int pairs[][2] = {{1, 1}, {3, 3}, {64, 1}, {239, 1}, {799, 3}, {113, 203}};
    for (int i = 0; i < 3; i++)
        for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
            for (int causal = 0; causal < 2; causal++) {
                if (!kt_take(3)) /* sanitizer mode (kg_test.h): a seeded sample */
                    continue;
                acase c = {DTS[i], 1, 2, 1, pairs[p][0], pairs[p][1], 64, causal, MASK_NONE, 0, 0, 0.f};
                run_case(&c);
            }
    acase a = {KG_BF16, 1, 1, 1, 1023, 1024, 128, 1, MASK_NONE, 0, 0, 0.f};
    run_case(&a);
    acase b = {KG_BF16, 1, 1, 1, 1024, 1023, 64, 0, MASK_NONE, 0, 0, 0.f};
    run_case(&b);
}

/* Fully masked rows (by the mask, by the causal rule) give zero gradients;
   random masks with -inf holes in every mask rank. */
Test(attention_bwd, fully_masked_rows_and_masks)
{
    for (int i = 0; i < 3; i++) {
        if (!kt_take(2)) /* sanitizer mode (kg_test.h): a seeded sample */
            continue;
        acase m = {DTS[i], 1, 2, 2, 70, 90, 64, 0, MASK_EMPTY_ROWS, 2, 0, 0.f};
        run_case(&m);
        acase mc = {DTS[i], 1, 2, 1, 70, 90, 128, 1, MASK_EMPTY_ROWS, 2, 0, 0.f};
        run_case(&mc);
        acase r4 = {DTS[i], 2, 3, 3, 77, 130, 96, 0, MASK_RANDOM, 4, 0, 0.f};
        run_case(&r4);
        acase r1 = {DTS[i], 1, 4, 2, 50, 70, 256, 1, MASK_RANDOM, 1, 1, 0.f};
        run_case(&r1);
        acase r2 = {DTS[i], 1, 2, 1, 90, 200, 32, 1, MASK_RANDOM, 2, 0, 0.f};
        run_case(&r2);
    }
}

/* No keys: dq = 0 (and nothing else to write); no queries: dk = dv = 0. */
Test(attention_bwd, empty_sequences)
{
    for (int i = 0; i < 3; i++) {
        acase nok = {DTS[i], 1, 2, 2, 5, 0, 64, 0, MASK_NONE, 0, 0, 0.f};
        run_case(&nok);
        acase noq = {DTS[i], 1, 2, 1, 0, 40, 128, 1, MASK_NONE, 0, 0, 0.f};
        run_case(&noq);
    }
}

/* The fused path's dq partials under one KG_ATTNB_TUNE value (f16 / bf16
   portable "0", Hopper "h0" where the device is one (tunings "1" and "h1"
   until session 24), a trailing
   "r" / "f" the Hopper kernel's query walk reversed / forward, "sep" the
   separate dq kernel; a tuning a head dim lacks runs the default), D 64 and
   128: lanes that walk several key blocks (B Hkv = 66 kv heads: 2 lanes for
   10 or 5 key blocks), GQA 2:1 over them, causal with Sq < Sk and with
   Sq > Sk under a padding mask, causal GQA 2:1 of several query tiles. One test per tuning, so that they run in
   parallel. */
static void tuning_cases(const char *tune, kg_dtype dt)
{
    set_hook("KG_ATTNB_TUNE", tune);
    const int dims[2] = {64, 128};
    for (int j = 0; j < 2; j++) {
        if (!kt_take(2)) /* sanitizer mode (kg_test.h): a seeded sample */
            continue;
        acase wide = {dt, 2, 66, 33, 3, 600, dims[j], 0, MASK_NONE, 0, 0, 0.f};
        run_case(&wide);
        acase lo = {dt, 1, 66, 66, 3, 600, dims[j], 1, MASK_NONE, 0, 1, 0.f};
        run_case(&lo);
        acase hi = {dt, 1, 2, 2, 300, 90, dims[j], 1, MASK_PAD, 4, 0, 0.f};
        run_case(&hi);
        acase gqa = {dt, 1, 6, 3, 300, 300, dims[j], 1, MASK_NONE, 0, 0, 0.f};
        run_case(&gqa);
    }
    set_hook("KG_ATTNB_TUNE", NULL);
}

Test(attention_bwd, tuning_h0_lanes_of_several_key_blocks) { tuning_cases("h0", KG_BF16); }
Test(attention_bwd, tuning_h0r_lanes_of_several_key_blocks) { tuning_cases("h0r", KG_BF16); }
Test(attention_bwd, tuning_h0f_lanes_of_several_key_blocks) { tuning_cases("h0f", KG_BF16); }
Test(attention_bwd, tuning_0_lanes_of_several_key_blocks) { tuning_cases("0", KG_BF16); }
Test(attention_bwd, tuning_sep_lanes_of_several_key_blocks) { tuning_cases("sep", KG_BF16); }
/* One lane (KG_ATTNB_LANES=1, as for B Hkv >= 264): on the Hopper kernel dq
   is written at each row's last key block, without dqsum. */
Test(attention_bwd, tuning_h0_one_lane)
{
    set_hook("KG_ATTNB_LANES", "1");
    tuning_cases("h0", KG_BF16);
}
Test(attention_bwd, tuning_h0r_one_lane_f16)
{
    set_hook("KG_ATTNB_LANES", "1");
    tuning_cases("h0r", KG_F16);
}
Test(attention_bwd, f16_default_lanes_of_several_key_blocks) { tuning_cases("default", KG_F16); }
Test(attention_bwd, f32_fused_and_separate_lanes_of_several_key_blocks)
{
    tuning_cases("default", KG_F32);
    tuning_cases("sep", KG_F32);
}
/* f32 kvq tuning 1 (the FFMA tiles that fit compute capability 8.0: D64
   64 keys x 64-query tiles, D128 64 x 32) */
Test(attention_bwd, f32_tuning_1_lanes_of_several_key_blocks) { tuning_cases("1", KG_F32); }
/* The earlier lane rule (KG_ATTNB_LANES=old, a benchmark hook: 4 lanes for
   the 66 kv heads of tuning_cases) and many lanes of one key block each
   (KG_ATTNB_LANES=10) on the default kernels */
Test(attention_bwd, lanes_of_the_old_rule_and_ten_lanes)
{
    set_hook("KG_ATTNB_LANES", "old");
    tuning_cases("default", KG_BF16);
    set_hook("KG_ATTNB_LANES", "10");
    tuning_cases("default", KG_F32);
    set_hook("KG_ATTNB_LANES", NULL);
}

/* Query splits (KG_ATTNB_SPLIT=<h>x<t>: h parts of the group's query heads
   times t parts of the query tiles, each block its own dK / dV partial,
   summed by dkvsum) on the kvq kernels (f16 / bf16: `tune`, "0" the
   portable one, NULL the default; f32: the default, D128 the split-role
   kernel), D 64 and 128 (and 96 on the portable kernels): GQA 4:1 causal, Sq < Sk causal in [B,S,H,D] views with lanes of
   several key blocks (KG_ATTNB_LANES=2), Sq > Sk causal under a padding
   mask (rows that see no key), MQA 6:1 non-causal. A split a case cannot
   take (more parts than heads or tiles) runs the rule's. */
static void split_cases(const char *split, kg_dtype dt, const char *tune)
{
    set_hook("KG_ATTNB_SPLIT", split);
    if (tune)
        set_hook("KG_ATTNB_TUNE", tune);
    const int dims[3] = {64, 128, 96};
    for (int j = 0; j < (dt == KG_F32 || (tune && tune[0] != 'h') ? 3 : 2); j++) {
        if (!kt_take(2)) /* sanitizer mode (kg_test.h): a seeded sample */
            continue;
        acase gqa = {dt, 1, 8, 2, 150, 150, dims[j], 1, MASK_NONE, 0, 0, 0.f};
        run_case(&gqa);
        set_hook("KG_ATTNB_LANES", "2");
        acase lo = {dt, 2, 4, 1, 70, 260, dims[j], 1, MASK_NONE, 0, 1, 0.f};
        run_case(&lo);
        set_hook("KG_ATTNB_LANES", NULL);
        acase hi = {dt, 1, 4, 2, 200, 100, dims[j], 1, MASK_PAD, 4, 0, 0.f};
        run_case(&hi);
        acase mqa = {dt, 1, 6, 1, 130, 200, dims[j], 0, MASK_NONE, 0, 0, 0.f};
        run_case(&mqa);
    }
    set_hook("KG_ATTNB_SPLIT", NULL);
    set_hook("KG_ATTNB_TUNE", NULL);
}

/* one test per kernel and split, so that they run in parallel */
Test(attention_bwd, query_splits_f32_2x3) { split_cases("2x3", KG_F32, NULL); }
Test(attention_bwd, query_splits_f32_1x3) { split_cases("1x3", KG_F32, NULL); }
Test(attention_bwd, query_splits_f32_3x1) { split_cases("3x1", KG_F32, NULL); }
Test(attention_bwd, query_splits_bf16_portable_2x3) { split_cases("2x3", KG_BF16, "0"); }
Test(attention_bwd, query_splits_bf16_portable_1x3) { split_cases("1x3", KG_BF16, "0"); }
Test(attention_bwd, query_splits_f16_portable_3x1) { split_cases("3x1", KG_F16, "0"); }
Test(attention_bwd, query_splits_f16_portable_4x2) { split_cases("4x2", KG_F16, "0"); }
/* the default (Hopper's wgmma kernel where the device is one, D 64 and 128:
   its instance for splits) and with its query walk reversed (Hopper tuning
   1's until session 24) */
Test(attention_bwd, query_splits_bf16_default_2x3) { split_cases("2x3", KG_BF16, NULL); }
Test(attention_bwd, query_splits_bf16_default_1x2) { split_cases("1x2", KG_BF16, NULL); }
Test(attention_bwd, query_splits_f16_h0r_3x1) { split_cases("3x1", KG_F16, "h0r"); }
Test(attention_bwd, query_splits_f16_h0r_2x2) { split_cases("2x2", KG_F16, "h0r"); }

/* The rule's own splits (one kv head of 4 query heads, 600 keys: 5 lanes,
   4 x 4 splits on 132 SMs), and their bits the same twice: f32 D64 causal,
   bf16 D96 (mma.sync), bf16 D128 causal (Hopper's where the device is one). */
static void rule_case(kg_dtype dt, int D, int causal)
{
    const acase c = {dt, 1, 4, 1, 600, 600, D, causal, MASK_NONE, 0, 0, 0.f};
    run_case(&c);
    const size_t es = kg_dtype_size(c.dt);
    const int64_t nq = (int64_t)c.B * c.Hq * c.Sq * c.D, nk = (int64_t)c.B * c.Hkv * c.Sk * c.D;
    void *q, *k, *l;
    random_bitwise_inputs(&c, &q, &k, &l);
    grads a = run_gpu(&c, q, k, k, q, q, l, NULL), b = run_gpu(&c, q, k, k, q, q, l, NULL);
    cr_assert(memcmp(a.dq, b.dq, nq * es) == 0, "dq differs between two runs");
    cr_assert(memcmp(a.dk, b.dk, nk * es) == 0, "dk differs between two runs");
    cr_assert(memcmp(a.dv, b.dv, nk * es) == 0, "dv differs between two runs");
    free(a.dq), free(a.dk), free(a.dv), free(b.dq), free(b.dk), free(b.dv);
    kg_free(ctx, q), kg_free(ctx, k), kg_free(ctx, l);
}
Test(attention_bwd, query_splits_of_the_rule_f32) { rule_case(KG_F32, 64, 1); }
Test(attention_bwd, query_splits_of_the_rule_bf16_d96) { rule_case(KG_BF16, 96, 0); }
Test(attention_bwd, query_splits_of_the_rule_bf16_d128) { rule_case(KG_BF16, 128, 1); }

/* The f32 kvq tunings that fit compute capability 8.0's 163 KiB a block
   (kgi_attnb_fit: D128 tuning 1, 64 keys x 32-query tiles; D256 tuning 1,
   32 x 32; D64 tuning 1, 64 x 64), forced on this device: every mask
   kind, GQA causal of several query tiles, Sq > Sk causal, lanes of several
   key blocks, a split. */
static void fit_cases(const char *tune, int D)
{
    set_hook("KG_ATTNB_TUNE", tune);
    acase none = {KG_F32, 1, 4, 2, 77, 130, D, 0, MASK_NONE, 0, 0, 0.f};
    run_case(&none);
    acase causal = {KG_F32, 1, 4, 2, 130, 77, D, 1, MASK_NONE, 0, 0, 0.f};
    run_case(&causal);
    acase mask = {KG_F32, 2, 2, 1, 77, 130, D, 1, MASK_PAD, 4, 1, 0.f};
    run_case(&mask);
    acase gqa = {KG_F32, 1, 6, 3, 200, 200, D, 1, MASK_NONE, 0, 0, 0.f};
    run_case(&gqa);
    set_hook("KG_ATTNB_LANES", "2");
    acase lo = {KG_F32, 1, 2, 2, 40, 300, D, 1, MASK_NONE, 0, 1, 0.f};
    run_case(&lo);
    set_hook("KG_ATTNB_LANES", NULL);
    set_hook("KG_ATTNB_SPLIT", "2x2");
    run_case(&gqa);
    set_hook("KG_ATTNB_SPLIT", NULL);
    set_hook("KG_ATTNB_TUNE", NULL);
}
Test(attention_bwd, f32_kernel_that_fits_compute_capability_8_0_d128) { fit_cases("1", 128); }
Test(attention_bwd, f32_kernel_that_fits_compute_capability_8_0_d256) { fit_cases("1", 256); }
Test(attention_bwd, f32_kernel_that_fits_compute_capability_8_0_d64) { fit_cases("1", 64); }

/* (Until session 24 the tests here also forced the f32 FFMA kvq kernels
   that load a step's Q and dout tiles during the previous step's dQ
   (attnb_kvq_f32p) and compared their bits with the plain kernels and the
   unroll tunings of the same arithmetic; none of those tunings could be
   any device's plan, and they left the bundle then: gen/attention_bwd.lua.) */

/* The f32 kvq kernels in split TF32 (3xTF32 mma.sync, attnb_kvq_tc<float>:
   gen/attention_bwd.lua's x3 tunings, asserted to be such), each forced
   against the float64 reference with the unchanged tolerance rule: the
   cases of fit_cases (every mask kind, GQA causal of several query tiles,
   Sq > Sk causal, lanes of several key blocks, a split), GQA 4:1 and MQA
   causal, causal Sq < Sk, fully masked rows, a random mask, tiny and odd
   lengths; then the same bits twice. */
static void x3_cases(int tune, int D)
{
    int slot = -1;
    for (int i = 0; i < KG_ATTNB_DIM_COUNT; i++)
        if (kg_attnb_dims[i] == D)
            slot = i;
    cr_assert(slot >= 0, "D%d is not generated", D);
    const kg_attnb_entry *e = &kg_attnb_table[KG_F32][slot];
    cr_assert(tune < e->ntunes && e->kvq[tune][KG_ATTN_NONE].path == 3,
              "f32 D%d kvq tuning %d is not a split-TF32 kernel (path %d)", D, tune,
              tune < e->ntunes ? e->kvq[tune][KG_ATTN_NONE].path : -1);
    char name[8];
    snprintf(name, sizeof name, "%d", tune);
    fit_cases(name, D);
    set_hook("KG_ATTNB_TUNE", name);
    const acase cases[] = {
        {KG_F32, 2, 8, 2, 100, 150, D, 1, MASK_NONE, 0, 1, 0.f},
        {KG_F32, 1, 8, 1, 150, 100, D, 1, MASK_NONE, 0, 0, 0.3f},
        {KG_F32, 1, 2, 2, 33, 200, D, 1, MASK_NONE, 0, 0, 0.f},
        {KG_F32, 1, 2, 1, 70, 90, D, 1, MASK_EMPTY_ROWS, 2, 0, 0.f},
        {KG_F32, 2, 3, 3, 77, 130, D, 0, MASK_RANDOM, 4, 0, 0.f},
        {KG_F32, 1, 2, 1, 1, 1, D, 0, MASK_NONE, 0, 0, 0.f},
        {KG_F32, 1, 2, 1, 3, 3, D, 1, MASK_NONE, 0, 0, 0.f},
        {KG_F32, 1, 2, 1, 239, 1, D, 1, MASK_NONE, 0, 0, 0.f},
        {KG_F32, 1, 2, 1, 113, 203, D, 0, MASK_NONE, 0, 0, 0.f},
        {KG_F32, 1, 2, 1, 799, 3, D, 0, MASK_NONE, 0, 0, 0.f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
    const acase c = {KG_F32, 2, 8, 2, 300, 333, D, 1, MASK_NONE, 0, 0, 0.f};
    const int64_t nq = (int64_t)c.B * c.Hq * c.Sq * c.D, nk = (int64_t)c.B * c.Hkv * c.Sk * c.D;
    void *q, *k, *l;
    random_bitwise_inputs(&c, &q, &k, &l);
    grads a = run_gpu(&c, q, k, k, q, q, l, NULL), b = run_gpu(&c, q, k, k, q, q, l, NULL);
    cr_assert(memcmp(a.dq, b.dq, nq * 4) == 0, "D%d tuning %d: dq differs between two runs", D, tune);
    cr_assert(memcmp(a.dk, b.dk, nk * 4) == 0, "D%d tuning %d: dk differs between two runs", D, tune);
    cr_assert(memcmp(a.dv, b.dv, nk * 4) == 0, "D%d tuning %d: dv differs between two runs", D, tune);
    free(a.dq), free(a.dk), free(a.dv), free(b.dq), free(b.dk), free(b.dv);
    kg_free(ctx, q), kg_free(ctx, k), kg_free(ctx, l);
    set_hook("KG_ATTNB_TUNE", NULL);
}
/* The defaults (kvq_default) of D32, D64, D96 and D128 (tunings 1, 0, 0,
   0 since session 24; D64, D96 and D128 with S^T, dP^T summed in parts of
   2 k8 steps). */
Test(attention_bwd, f32_split_tf32_tuning_1_d32) { x3_cases(1, 32); }
Test(attention_bwd, f32_split_tf32_tuning_0_d64) { x3_cases(0, 64); }
Test(attention_bwd, f32_split_tf32_tuning_0_d96) { x3_cases(0, 96); }
Test(attention_bwd, f32_split_tf32_tuning_0_d128) { x3_cases(0, 128); }

/* Session 31's Hopper kernels (gen/attention_bwd.lua's wg_kvq: D 32 and 96
   on tiles of 32-element panels, the default since session 32; D 256's
   forced-only candidates), each forced with KG_ATTNB_TUNE=h<i> against the float64 reference with the unchanged
   tolerance rule. On a device that is not compute capability 9.0 h<i> runs
   the default, which these tests do not need to cover again: they skip.
   Every case asserts that the kernel launched was the forced one
   (kgi_attnb_last_kv_kernel: its instance without splits or the one for
   query splits), so that a default cannot pass for it. */
static int hopper_device(void) { return ctx && ctx->cc_major == 9 && ctx->cc_minor == 0; }

/* The kind a case's call takes (kg_attention_backward's rule). */
static kg_attn_kind case_kind(const acase *c)
{
    return c->mask != MASK_NONE ? KG_ATTN_MASK : c->causal ? KG_ATTN_CAUSAL : KG_ATTN_NONE;
}

/* Hopper tuning `ti` of the case's dtype and head dim: the kernel without
   splits (split 0), with splits (1), or either (-1) was the last launched. */
static void assert_forced_kernel(const acase *c, int ti, int split)
{
    const kg_attnb_entry *e = &kg_attnb_table[c->dt][slot_of(c->D)];
    const kg_attn_kind kind = case_kind(c);
    cr_assert(ti < e->ntunes90, "%s D%d has no Hopper tuning %d", kg_dtype_name(c->dt), c->D, ti);
    const int plain = e->kvq90[ti][kind].kernel, spl = e->kvq90s[ti][kind].kernel, got = kgi_attnb_last_kv_kernel();
    cr_assert(split == 0 ? got == plain : split == 1 ? got == spl : (got == plain || got == spl),
              "%s D%d B=%d Hq=%d Hkv=%d Sq=%d Sk=%d causal=%d mask=%d: the last dK/dV kernel was %d, not Hopper "
              "tuning %d's %d (splits: %d)",
              kg_dtype_name(c->dt), c->D, c->B, c->Hq, c->Hkv, c->Sq, c->Sk, c->causal, c->mask, got, ti,
              split == 1 ? spl : plain, spl);
}

/* Set to 0 while a test runs a head dim whose separate pass takes the Hopper
   dQ kernel (attnb_q_wg; D 256 with its default dK / dV kernel, Hopper
   tuning 0; -1 otherwise): each case also asserts that the q kernel
   launched was the Hopper dQ kernel of its kind (none where there are no
   query rows). */
static int forced_q90 = -1;

static void assert_forced_q(const acase *c)
{
    if (forced_q90 < 0)
        return;
    const kg_attnb_entry *e = &kg_attnb_table[c->dt][slot_of(c->D)];
    cr_assert(forced_q90 < e->nq90, "%s D%d: no Hopper dQ tuning %d", kg_dtype_name(c->dt), c->D, forced_q90);
    const int want = (int64_t)c->B * c->Hq * c->Sq > 0 ? e->q90[forced_q90][case_kind(c)].kernel : -1,
              got = kgi_attnb_last_q_kernel();
    cr_assert(e->q90[forced_q90][case_kind(c)].threads > 0, "%s D%d: no Hopper dQ kernel", kg_dtype_name(c->dt),
              c->D);
    cr_assert_eq(got, want, "%s D%d B=%d Hq=%d Hkv=%d Sq=%d Sk=%d causal=%d mask=%d: the last dQ kernel was %d, not %d",
                 kg_dtype_name(c->dt), c->D, c->B, c->Hq, c->Hkv, c->Sq, c->Sk, c->causal, c->mask, got, want);
}

static void forced_case(const acase *c, int ti)
{
    run_case(c);
    assert_forced_kernel(c, ti, -1);
    assert_forced_q(c);
}

/* Two calls on the same inputs give the same bits. */
static void bitwise_twice(const acase *c, int ti)
{
    const size_t es = kg_dtype_size(c->dt);
    const int64_t nq = (int64_t)c->B * c->Hq * c->Sq * c->D, nk = (int64_t)c->B * c->Hkv * c->Sk * c->D;
    void *q, *k, *l;
    random_bitwise_inputs(c, &q, &k, &l);
    grads a = run_gpu(c, q, k, k, q, q, l, NULL);
    assert_forced_kernel(c, ti, -1);
    assert_forced_q(c);
    grads b = run_gpu(c, q, k, k, q, q, l, NULL);
    cr_assert(memcmp(a.dq, b.dq, nq * es) == 0, "D%d h%d: dq differs between two runs", c->D, ti);
    cr_assert(memcmp(a.dk, b.dk, nk * es) == 0, "D%d h%d: dk differs between two runs", c->D, ti);
    cr_assert(memcmp(a.dv, b.dv, nk * es) == 0, "D%d h%d: dv differs between two runs", c->D, ti);
    free(a.dq), free(a.dk), free(a.dv), free(b.dq), free(b.dk), free(b.dv);
    kg_free(ctx, q), kg_free(ctx, k), kg_free(ctx, l);
}

/* The reference cases: every mask kind (odd lengths, GQA 2:1, Sq > Sk
   causal: rows that see no key, a padding mask with causal on top in
   [B,S,H,D] views), GQA 4:1 and MQA causal (a custom scale), causal Sq < Sk
   and Sq > Sk, TESTING.md's short and odd (Sq, Sk) pairs, fully masked rows
   (by the mask, with causal), random masks of every rank, lanes of several
   key blocks (B Hkv = 66 kv heads), causal GQA of several query tiles, no
   queries; then the same bits twice. At D 256 (tuning h0: the default) the
   Hopper dQ kernel is asserted too (forced_q90). */
static void candidate_cases(const char *tune, kg_dtype dt, int D)
{
    if (!hopper_device())
        cr_skip_test("not compute capability 9.0: KG_ATTNB_TUNE=%s runs the default", tune);
    forced_q90 = tune[1] == 'q' || kg_attnb_table[dt][slot_of(D)].defq90 ? 0 : -1;
    const int ti = tune[1] == 'q' ? 0 : tune[1] - '0';
    set_hook("KG_ATTNB_TUNE", tune);
    const acase cases[] = {
        {dt, 1, 4, 2, 77, 130, D, 0, MASK_NONE, 0, 0, 0.f},
        {dt, 1, 4, 2, 130, 77, D, 1, MASK_NONE, 0, 0, 0.f},
        {dt, 2, 2, 1, 77, 130, D, 1, MASK_PAD, 4, 1, 0.f},
        {dt, 2, 2, 1, 77, 130, D, 0, MASK_PAD, 4, 0, 0.f},
        {dt, 2, 8, 2, 100, 150, D, 1, MASK_NONE, 0, 1, 0.f},
        {dt, 1, 8, 1, 150, 100, D, 1, MASK_NONE, 0, 0, 0.3f},
        {dt, 1, 2, 2, 33, 200, D, 1, MASK_NONE, 0, 0, 0.f},
        {dt, 1, 2, 1, 200, 33, D, 1, MASK_NONE, 0, 1, 0.f},
        {dt, 1, 2, 1, 1, 1, D, 1, MASK_NONE, 0, 0, 0.f},
        {dt, 1, 2, 1, 3, 3, D, 0, MASK_NONE, 0, 0, 0.f},
        {dt, 1, 2, 1, 64, 1, D, 1, MASK_NONE, 0, 0, 0.f},
        {dt, 1, 2, 1, 239, 1, D, 0, MASK_NONE, 0, 0, 0.f},
        {dt, 1, 2, 1, 799, 3, D, 1, MASK_NONE, 0, 0, 0.f},
        {dt, 1, 2, 1, 113, 203, D, 1, MASK_NONE, 0, 1, 0.f},
        {dt, 1, 2, 2, 70, 90, D, 0, MASK_EMPTY_ROWS, 2, 0, 0.f},
        {dt, 1, 2, 1, 70, 90, D, 1, MASK_EMPTY_ROWS, 2, 0, 0.f},
        {dt, 2, 3, 3, 77, 130, D, 0, MASK_RANDOM, 4, 0, 0.f},
        {dt, 1, 4, 2, 50, 70, D, 1, MASK_RANDOM, 1, 1, 0.f},
        {dt, 1, 2, 1, 90, 200, D, 1, MASK_RANDOM, 2, 0, 0.f},
        {dt, 2, 66, 33, 3, 600, D, 0, MASK_NONE, 0, 0, 0.f},
        {dt, 1, 66, 66, 3, 600, D, 1, MASK_NONE, 0, 1, 0.f},
        {dt, 1, 2, 2, 300, 90, D, 1, MASK_PAD, 4, 0, 0.f},
        {dt, 1, 6, 3, 300, 300, D, 1, MASK_NONE, 0, 0, 0.f},
        {dt, 1, 2, 1, 0, 40, D, 1, MASK_NONE, 0, 0, 0.f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!kt_take(3)) /* sanitizer mode (kg_test.h): a seeded sample */
            continue;
        forced_case(&cases[i], ti);
    }
    /* no keys: no dK / dV kernel runs; dq = 0 */
    const acase nok = {dt, 1, 2, 2, 5, 0, D, 0, MASK_NONE, 0, 0, 0.f};
    run_case(&nok);
    assert_forced_q(&nok);
    const acase bits = {dt, 2, 8, 2, (int)kt_size(300, 96), (int)kt_size(333, 101), D, 1, MASK_NONE, 0, 0, 0.f};
    bitwise_twice(&bits, ti);
    const acase bits2 = {dt, 1, 4, 4, (int)kt_size(260, 96), (int)kt_size(390, 101), D, 0, MASK_NONE, 0, 0, 0.f};
    bitwise_twice(&bits2, ti);
    set_hook("KG_ATTNB_TUNE", NULL);
    forced_q90 = -1;
}

/* One lane (KG_ATTNB_LANES=1) and no query splits (KG_ATTNB_SPLIT=1x1): the
   kernel writes dq itself at each row's last key block (p.direct): against
   the reference, and the same bits as the partial + dqsum path
   (KG_ATTNB_DIRECT=0); rows that see no key (Sq - Sk >= a query tile,
   causal) take the partial path. */
static void candidate_one_lane(const char *tune, kg_dtype dt, int D)
{
    if (!hopper_device())
        cr_skip_test("not compute capability 9.0: KG_ATTNB_TUNE=%s runs the default", tune);
    const int ti = tune[1] - '0';
    set_hook("KG_ATTNB_TUNE", tune);
    set_hook("KG_ATTNB_LANES", "1");
    set_hook("KG_ATTNB_SPLIT", "1x1");
    const acase cases[] = {
        {dt, 2, 4, 2, 300, 333, D, 1, MASK_NONE, 0, 0, 0.f},
        {dt, 1, 4, 4, 260, 390, D, 0, MASK_NONE, 0, 1, 0.f},
        {dt, 1, 2, 1, 333, 300, D, 1, MASK_NONE, 0, 0, 0.f},
        {dt, 1, 2, 2, 500, 200, D, 1, MASK_NONE, 0, 0, 0.f},
        {dt, 1, 2, 2, 200, 260, D, 0, MASK_PAD, 4, 0, 0.f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const acase c = cases[i];
        run_case(&c);
        assert_forced_kernel(&c, ti, 0);
        if (c.mask != MASK_NONE)
            continue;
        const size_t es = kg_dtype_size(c.dt);
        const int64_t nq = (int64_t)c.B * c.Hq * c.Sq * c.D, nk = (int64_t)c.B * c.Hkv * c.Sk * c.D;
        void *q, *k, *l;
        random_bitwise_inputs(&c, &q, &k, &l);
        set_hook("KG_ATTNB_DIRECT", NULL);
        grads a = run_gpu(&c, q, k, k, q, q, l, NULL);
        assert_forced_kernel(&c, ti, 0);
        set_hook("KG_ATTNB_DIRECT", "0");
        grads b = run_gpu(&c, q, k, k, q, q, l, NULL);
        set_hook("KG_ATTNB_DIRECT", NULL);
        cr_assert(memcmp(a.dq, b.dq, nq * es) == 0, "D%d %s case %zu: dq differs between direct and dqsum", D, tune,
                  i);
        cr_assert(memcmp(a.dk, b.dk, nk * es) == 0, "D%d %s case %zu: dk differs", D, tune, i);
        cr_assert(memcmp(a.dv, b.dv, nk * es) == 0, "D%d %s case %zu: dv differs", D, tune, i);
        for (int64_t e = 0; e < nq; e++)
            cr_assert(!isnan(kt_get(a.dq, c.dt, e)), "D%d %s case %zu: dq[%lld] is NaN (unwritten)", D, tune, i,
                      (long long)e);
        free(a.dq), free(a.dk), free(a.dv), free(b.dq), free(b.dk), free(b.dv);
        kg_free(ctx, q), kg_free(ctx, k), kg_free(ctx, l);
    }
    set_hook("KG_ATTNB_LANES", NULL);
    set_hook("KG_ATTNB_SPLIT", NULL);
    set_hook("KG_ATTNB_TUNE", NULL);
}

/* Query splits (KG_ATTNB_SPLIT, the kernels' instance for splits, dK / dV
   partials summed by dkvsum): split_cases' shapes; the first (GQA 4:1 of
   150 x 150, 2x2 or 3x1 parts possible) asserted to run the split
   instance. */
static void candidate_splits(const char *tune, kg_dtype dt, int D, const char *split)
{
    if (!hopper_device())
        cr_skip_test("not compute capability 9.0: KG_ATTNB_TUNE=%s runs the default", tune);
    const int ti = tune[1] - '0';
    set_hook("KG_ATTNB_TUNE", tune);
    set_hook("KG_ATTNB_SPLIT", split);
    const acase gqa = {dt, 1, 8, 2, 150, 150, D, 1, MASK_NONE, 0, 0, 0.f};
    run_case(&gqa);
    assert_forced_kernel(&gqa, ti, 1);
    set_hook("KG_ATTNB_LANES", "2");
    const acase lo = {dt, 2, 4, 1, 70, 260, D, 1, MASK_NONE, 0, 1, 0.f};
    forced_case(&lo, ti);
    set_hook("KG_ATTNB_LANES", NULL);
    const acase hi = {dt, 1, 4, 2, 200, 100, D, 1, MASK_PAD, 4, 0, 0.f};
    forced_case(&hi, ti);
    const acase mqa = {dt, 1, 6, 1, 130, 200, D, 0, MASK_NONE, 0, 0, 0.f};
    forced_case(&mqa, ti);
    const acase rnd = {dt, 2, 3, 1, 77, 130, D, 0, MASK_RANDOM, 4, 0, 0.f};
    forced_case(&rnd, ti);
    bitwise_twice(&gqa, ti);
    set_hook("KG_ATTNB_SPLIT", NULL);
    set_hook("KG_ATTNB_TUNE", NULL);
}

/* one test per kernel, so that they run in parallel: D 32 and 96's Hopper
   kernels (tuning h0, their default on compute capability 9.0 since session
   32), forced so that each case asserts the kernel ran */
Test(attention_bwd, hopper_d96_bf16) { candidate_cases("h0", KG_BF16, 96); }
Test(attention_bwd, hopper_d96_f16) { candidate_cases("h0", KG_F16, 96); }
Test(attention_bwd, hopper_d32_bf16) { candidate_cases("h0", KG_BF16, 32); }
Test(attention_bwd, hopper_d32_f16) { candidate_cases("h0", KG_F16, 32); }
Test(attention_bwd, hopper_d96_one_lane) { candidate_one_lane("h0", KG_BF16, 96); }
Test(attention_bwd, hopper_d32_one_lane) { candidate_one_lane("h0", KG_BF16, 32); }
Test(attention_bwd, hopper_d96_splits_2x2) { candidate_splits("h0", KG_F16, 96, "2x2"); }
Test(attention_bwd, hopper_d32_splits_2x2) { candidate_splits("h0", KG_F16, 32, "2x2"); }
/* D 256's default: the dK / dV kernel (attnb_kvq_wgd, tuning h0, the
   default since session 32, session 31's h1: the separate pass's kv
   kernel, no query splits) and the Hopper dQ kernel (attnb_q_wg, session
   32's hq0, the default since round s33r1), each case asserting both ran */
Test(attention_bwd, hopper_d256_bf16) { candidate_cases("h0", KG_BF16, 256); }
Test(attention_bwd, hopper_d256_f16) { candidate_cases("h0", KG_F16, 256); }
Test(attention_bwd, hopper_d256_one_lane) { candidate_one_lane("h0", KG_F16, 256); }
/* KG_ATTNB_TUNE=sep at D 256 on compute capability 9.0: the portable kv and
   q kernels (attnb_q_tc, D 256's dq kernel before round s33r1, still the
   one other devices run), against the float64 reference, each case
   asserting the portable q kernel ran. */
Test(attention_bwd, d256_sep_portable_dq)
{
    if (!hopper_device())
        cr_skip_test("not compute capability 9.0: the portable kernels are the default");
    set_hook("KG_ATTNB_TUNE", "sep");
    const acase cases[] = {
        {KG_BF16, 1, 4, 2, 77, 130, 256, 1, MASK_NONE, 0, 0, 0.f},
        {KG_F16, 2, 2, 1, 130, 77, 256, 0, MASK_PAD, 4, 1, 0.f},
        {KG_BF16, 1, 2, 1, 90, 200, 256, 1, MASK_RANDOM, 2, 0, 0.f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const acase *c = &cases[i];
        run_case(c);
        const int want = kg_attnb_table[c->dt][slot_of(c->D)].q[case_kind(c)].kernel, got = kgi_attnb_last_q_kernel();
        cr_assert_eq(got, want, "case %zu: the last dQ kernel was %d, not the portable %d", i, got, want);
    }
    set_hook("KG_ATTNB_TUNE", NULL);
}

/* Long key walks of the Hopper dQ kernel, D 256's default (no hook):
   1000-1100 keys (32-35 tiles through the 3-stage ring) and 8-9 query
   blocks, causal Sq < Sk (GQA 2:1) and Sq > Sk in [B,S,H,D] views, against
   the float64 reference, each asserting the Hopper dK / dV and dQ kernels
   ran. */
Test(attention_bwd, hopper_d256_long_walks)
{
    if (!hopper_device())
        cr_skip_test("not compute capability 9.0: D 256 runs the portable kernels");
    forced_q90 = 0;
    const acase cases[] = {
        {KG_BF16, 1, 2, 1, (int)kt_size(1000, 200), (int)kt_size(1100, 230), 256, 1, MASK_NONE, 0, 0, 0.f},
        {KG_F16, 1, 2, 2, (int)kt_size(1100, 230), (int)kt_size(1000, 200), 256, 0, MASK_NONE, 0, 1, 0.f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        forced_case(&cases[i], 0);
    forced_q90 = -1;
}

/* The same call twice gives the same bits (GQA sums, dq, every dtype). */
Test(attention_bwd, bitwise_reproducible)
{
    for (int i = 0; i < 3; i++) {
        if (!kt_take(3)) /* sanitizer mode (kg_test.h): one dtype, seeded */
            continue;
        /* sanitizer mode (kg_test.h): shorter sequences */
        acase c = {DTS[i], 2, 8, 2, (int)kt_size(300, 96), (int)kt_size(333, 101), 128, 1, MASK_NONE, 0, 0, 0.f};
        const size_t es = kg_dtype_size(c.dt);
        const int64_t nq = (int64_t)c.B * c.Hq * c.Sq * c.D, nk = (int64_t)c.B * c.Hkv * c.Sk * c.D;
        void *q, *k, *l;
        random_bitwise_inputs(&c, &q, &k, &l);
        /* q doubles as out and dout, k as v: valid inputs for the arithmetic */
        grads a = run_gpu(&c, q, k, k, q, q, l, NULL), b = run_gpu(&c, q, k, k, q, q, l, NULL);
        cr_assert(memcmp(a.dq, b.dq, nq * es) == 0, "%s: dq differs between two runs", kg_dtype_name(c.dt));
        cr_assert(memcmp(a.dk, b.dk, nk * es) == 0, "%s: dk differs between two runs", kg_dtype_name(c.dt));
        cr_assert(memcmp(a.dv, b.dv, nk * es) == 0, "%s: dv differs between two runs", kg_dtype_name(c.dt));
        free(a.dq), free(a.dk), free(a.dv), free(b.dq), free(b.dk), free(b.dv);
        kg_free(ctx, q), kg_free(ctx, k), kg_free(ctx, l);
    }
}

/* One lane: dq written by the kvq kernel (the default on the Hopper kernel)
   has the bits of the partial + dqsum path (KG_ATTNB_DIRECT=0), with and
   without the causal rule, GQA, rows that see no key (Sq > Sk causal: the
   partial path), D 64 and 128. */
Test(attention_bwd, one_lane_direct_dq_equals_the_partials_bitwise)
{
    set_hook("KG_ATTNB_LANES", "1");
    const acase cases[] = {
        {KG_BF16, 2, 4, 2, 300, 333, 64, 1, MASK_NONE, 0, 0, 0.f},
        {KG_F16, 1, 4, 4, 260, 390, 128, 0, MASK_NONE, 0, 0, 0.f},
        {KG_BF16, 1, 2, 1, 333, 300, 128, 1, MASK_NONE, 0, 0, 0.f},
        {KG_BF16, 1, 2, 2, 500, 200, 64, 1, MASK_NONE, 0, 0, 0.f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const acase c = cases[i];
        const size_t es = kg_dtype_size(c.dt);
        const int64_t nq = (int64_t)c.B * c.Hq * c.Sq * c.D, nk = (int64_t)c.B * c.Hkv * c.Sk * c.D;
        void *q, *k, *l;
        random_bitwise_inputs(&c, &q, &k, &l);
        set_hook("KG_ATTNB_DIRECT", NULL);
        grads a = run_gpu(&c, q, k, k, q, q, l, NULL);
        set_hook("KG_ATTNB_DIRECT", "0");
        grads b = run_gpu(&c, q, k, k, q, q, l, NULL);
        set_hook("KG_ATTNB_DIRECT", NULL);
        cr_assert(memcmp(a.dq, b.dq, nq * es) == 0, "case %zu: dq differs between direct and dqsum", i);
        cr_assert(memcmp(a.dk, b.dk, nk * es) == 0, "case %zu: dk differs", i);
        cr_assert(memcmp(a.dv, b.dv, nk * es) == 0, "case %zu: dv differs", i);
        for (int64_t e = 0; e < nq; e++)
            cr_assert(!isnan(kt_get(a.dq, c.dt, e)), "case %zu: dq[%lld] is NaN (unwritten)", i, (long long)e);
        free(a.dq), free(a.dk), free(a.dv), free(b.dq), free(b.dk), free(b.dv);
        kg_free(ctx, q), kg_free(ctx, k), kg_free(ctx, l);
    }
    set_hook("KG_ATTNB_LANES", NULL);
}

/* A call whose rows need more scratch than the default reservation: it can
   be captured in a CUDA graph once kg_reserve_scratch sized the scratch with
   kg_attention_backward_scratch_bytes, and the replay gives the direct
   call's bits. (1M query rows of 16 keys: little arithmetic.) */
Test(attention_bwd, captured_in_a_cuda_graph_after_reserving_scratch)
{
    kg_context *fresh = NULL;
    KT_OK(fresh, kg_open(&fresh, 0));
    const int B = 1, H = 16, S = (int)kt_size(65536, 2304), SK = 16, D = 32; /* sanitizer mode: still > 4 MiB */
    const int64_t n = (int64_t)B * H * S * D, nk = (int64_t)B * SK * D, nl = (int64_t)B * H * S;
    uint16_t *hx = malloc(n * 2), *r1 = malloc(n * 2), *r2 = malloc(n * 2);
    for (int64_t i = 0; i < n; i++)
        hx[i] = kt_to_bf16(kt_uniform(&rng, -1, 1));
    float *hl = malloc(nl * 4);
    for (int64_t i = 0; i < nl; i++)
        hl[i] = (float)kt_uniform(&rng, 2, 3);
    void *q = to_device(hx, n * 2), *dq = kt_alloc(ctx, n * 2), *k = to_device(hx, nk * 2), *dk = kt_alloc(ctx, nk * 2),
         *dv = kt_alloc(ctx, nk * 2), *l = to_device(hl, nl * 4);
    kg_tensor tq = kg_tensor_contiguous(q, KG_BF16, 4, KT_SHAPE(B, H, S, D)),
              tdq = kg_tensor_contiguous(dq, KG_BF16, 4, KT_SHAPE(B, H, S, D)),
              tk = kg_tensor_contiguous(k, KG_BF16, 4, KT_SHAPE(B, 1, SK, D)),
              tdk = kg_tensor_contiguous(dk, KG_BF16, 4, KT_SHAPE(B, 1, SK, D)),
              tdv = kg_tensor_contiguous(dv, KG_BF16, 4, KT_SHAPE(B, 1, SK, D)),
              tl = kg_tensor_contiguous(l, KG_F32, 3, KT_SHAPE(B, H, S));
    cr_assert_gt(kg_attention_backward_scratch_bytes(B, H, 1, S, SK, D), (size_t)(64 << 10) + (4 << 20));
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    KT_OK(fresh, kg_set_stream(fresh, (kg_stream)s));
    /* the scratch is per stream: reserve it on the stream that captures */
    KT_OK(fresh, kg_reserve_scratch(fresh, kg_attention_backward_scratch_bytes(B, H, 1, S, SK, D)));
    /* a small call loads the module outside capture */
    kg_tensor sq = tq, sdq = tdq, sl = tl;
    sq.shape[2] = sdq.shape[2] = sl.shape[2] = 64;
    KT_OK(fresh, kg_attention_backward(fresh, &sdq, &tdk, &tdv, &sq, &sq, &tk, &tk, &sq, &sl, NULL, NULL));
    cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    KT_OK(fresh, kg_attention_backward(fresh, &tdq, &tdk, &tdv, &tq, &tq, &tk, &tk, &tq, &tl, NULL, NULL));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    cr_assert_eq(cudaStreamEndCapture(s, &g), cudaSuccess);
    cr_assert_eq(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
    KT_OK(fresh, kg_memset(fresh, dq, 0xff, n * 2));
    cr_assert_eq(cudaGraphLaunch(ge, s), cudaSuccess);
    KT_OK(fresh, kg_sync(fresh));
    kt_download(fresh, r1, dq, n * 2);
    KT_OK(fresh, kg_memset(fresh, dq, 0xff, n * 2));
    KT_OK(fresh, kg_attention_backward(fresh, &tdq, &tdk, &tdv, &tq, &tq, &tk, &tk, &tq, &tl, NULL, NULL));
    KT_OK(fresh, kg_sync(fresh));
    kt_download(fresh, r2, dq, n * 2);
    cr_assert(memcmp(r1, r2, n * 2) == 0, "the graph replay differs from a direct call");
    for (int64_t i = 0; i < n; i += 997)
        cr_assert(!isnan(kt_from_bf16(r1[i])), "NaN at %lld", (long long)i);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    KT_OK(fresh, kg_set_stream(fresh, NULL));
    cudaStreamDestroy(s);
    kg_close(fresh);
    void *dev[] = {q, dq, k, dk, dv, l};
    for (size_t i = 0; i < 6; i++)
        kg_free(ctx, dev[i]);
    free(hx), free(r1), free(r2), free(hl);
}
