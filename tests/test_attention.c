/*
 * test_attention.c - kg_attention: every validation error on the CPU (no
 * device needed), then on the GPU every generated dtype x head dim x mask
 * kind and TESTING.md's attention cases against a float64 reference.
 *
 * Tolerance (TESTING.md): max|out - ref| <= 2 * max|lp - ref| + atol, where
 * ref is computed in float64 from the same (rounded) inputs and lp is a
 * reference computed in the dtype's own precision the way an unfused
 * PyTorch program would: scores rounded to the dtype, softmax in f32,
 * probabilities rounded to the dtype, P v accumulated in f32 and rounded
 * (for f32 everything in float). atol is PyTorch's default for the dtype.
 * lse (always f32) must be within f32's floor (1.3e-6 |ref| + 1e-5) plus
 * twice the largest error of an f32 reference of lse (attn_ref_lse_tol), at most
 * 1e-4 + 1e-5 |ref|, of the float64 value. A row with no visible key must
 * give exactly 0 and lse exactly -inf.
 */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_plan.h"
#include "attn_ref.h"
#include "internal.h"
#include "kg_attn_table.h"
#include "kg_table.h"
#include "kg_test.h"
#include "kg_attention.h"

/* ---- CPU: validation ------------------------------------------------------ */

static kg_context *ctx;

static void open_without_device(void) { ctx = kt_open_without_device(); }

static void close_ctx(void) { kg_close(ctx); }

/* A valid call's tensors (attn_ref.h): q/out/dout/dq [2,8,100,D], k/v/dk/dv [2,2,120,D], lse [2,8,100]. */
typedef attn_call call_t;
#define valid_call attn_ref_valid_call

TestSuite(attention_validation, .init = open_without_device, .fini = close_ctx);

Test(attention_validation, a_valid_call_reaches_the_device_check_for_every_dtype_and_head_dim)
{
    const kg_dtype dts[3] = {KG_F32, KG_F16, KG_BF16};
    const int64_t dims[5] = {32, 64, 96, 128, 256};
    kg_tensor mask = kg_tensor_contiguous(KT_DEV(5 << 24), KG_F32, 2, KT_SHAPE(100, 120));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++)
            for (int kind = 0; kind < 3; kind++) {
                call_t c = valid_call(dts[i], dims[j]);
                kg_attention_opts o = {0.f, kind == 1};
                kg_status st =
                    kg_attention(ctx, &c.out, kind ? &c.lse : NULL, &c.q, &c.k, &c.v, kind == 2 ? &mask : NULL, &o);
                cr_assert_eq(st, KG_ERR_NO_DEVICE, "%s D=%lld kind %d: %s", kg_dtype_name(dts[i]), (long long)dims[j],
                             kind, kg_errmsg(ctx));
            }
}

/* session 30's schedule hooks (the persistent causal kernels' tiles
   ordered across batches; the late claim): a call refused before its launch
   leaves the last launch's flags as they were (none launched here) */
Test(attention_validation, prefill_sched_hooks_launch_nothing)
{
    cr_assert_eq(kg_test_last_attn_xorder(), 0);
    cr_assert_eq(kg_test_last_attn_lclaim(), 0);
    for (int on = -1; on <= 1; on++) {
        kg_test_attn_xorder(on);
        kg_test_attn_lclaim(on);
        call_t c = valid_call(KG_BF16, 64);
        kg_attention_opts o = {0.f, 1};
        cr_assert_eq(kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, &o), KG_ERR_NO_DEVICE);
        cr_assert_eq(kg_test_last_attn_xorder(), 0);
        cr_assert_eq(kg_test_last_attn_lclaim(), 0);
    }
    kg_test_attn_xorder(0);
    kg_test_attn_lclaim(0);
}

Test(attention_validation, null_arguments)
{
    call_t c = valid_call(KG_BF16, 64);
    cr_assert_eq(kg_attention(NULL, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_INVALID_ARGUMENT);
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, NULL, &c.k, &c.v, NULL, NULL), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: tensor q is NULL");
    KT_EXPECT(ctx, kg_attention(ctx, NULL, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: tensor out is NULL");
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, NULL, NULL, NULL), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: tensor v is NULL");
}

Test(attention_validation, dtypes)
{
    call_t c = valid_call(KG_I32, 64); /* f64: test_attention_f64.c */
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_DTYPE,
              "attention is not available for i32 (it accepts f32, f64, f16, bf16)");
    c = valid_call(KG_BF16, 64);
    c.k.dtype = KG_F16;
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_DTYPE,
              "dtype mismatch: attention: q is bf16 but k is f16");
    c = valid_call(KG_BF16, 64);
    c.out.dtype = KG_F32;
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_DTYPE,
              "dtype mismatch: attention: q is bf16 but out is f32");
    c = valid_call(KG_BF16, 64);
    c.lse.dtype = KG_BF16;
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, &c.lse, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_DTYPE,
              "dtype mismatch: attention: lse must be f32, got bf16");
    c = valid_call(KG_BF16, 64);
    kg_tensor mask = kg_tensor_contiguous(KT_DEV(5 << 24), KG_BF16, 1, KT_SHAPE(120));
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, &mask, NULL), KG_ERR_DTYPE,
              "dtype mismatch: attention: mask must be f32, got bf16");
}

Test(attention_validation, shape_mismatches_name_every_shape)
{
    call_t c = valid_call(KG_BF16, 64);
    c.v.shape[2] = 121;
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention: k and v must have the same shape (q is [2,8,100,64], k is [2,2,120,64], v is "
              "[2,2,121,64], out is [2,8,100,64])");
    c = valid_call(KG_BF16, 64);
    c.k.shape[0] = c.v.shape[0] = 1;
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention: q and k must have the same batch size (q is [2,8,100,64], k is [1,2,120,64], "
              "v is [1,2,120,64], out is [2,8,100,64])");
    c = valid_call(KG_BF16, 64);
    c.k.shape[3] = c.v.shape[3] = 128;
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention: q and k must have the same head dim (q is [2,8,100,64], k is [2,2,120,128], "
              "v is [2,2,120,128], out is [2,8,100,64])");
    c = valid_call(KG_BF16, 64);
    c.out.shape[2] = 99;
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention: out must have q's shape (q is [2,8,100,64], k is [2,2,120,64], v is "
              "[2,2,120,64], out is [2,8,99,64])");
    c = valid_call(KG_BF16, 64);
    c.k.shape[1] = c.v.shape[1] = 3;
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention: q's heads must be a multiple of k's heads (q is [2,8,100,64], k is "
              "[2,3,120,64], v is [2,3,120,64], out is [2,8,100,64])");
    c = valid_call(KG_BF16, 64);
    c.q.ndim = 3;
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention: q, k, v and out must have 4 dims [B, H, S, D] (q is [2,8,100], k is "
              "[2,2,120,64], v is [2,2,120,64], out is [2,8,100,64])");
    c = valid_call(KG_BF16, 64);
    c.lse.shape[2] = 120;
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, &c.lse, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention: lse is [2,8,120] but must be [B, Hq, Sq] for q [2,8,100,64]");
}

Test(attention_validation, mask_must_broadcast)
{
    call_t c = valid_call(KG_F32, 64);
    const struct {
        int ndim;
        int64_t shape[5];
        int ok;
    } cases[] = {
        {1, {120}, 1},
        {1, {1}, 1},
        {2, {100, 120}, 1},
        {4, {2, 1, 1, 120}, 1},
        {4, {2, 8, 100, 120}, 1},
        {0, {0}, 1},
        {1, {100}, 0},
        {2, {120, 100}, 0},
        {4, {2, 2, 100, 120}, 0},
        {4, {3, 8, 100, 120}, 0},
        {5, {1, 2, 8, 100, 120}, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kg_tensor m = kg_tensor_contiguous(KT_DEV(5 << 24), KG_F32, cases[i].ndim, cases[i].shape);
        kg_status st = kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, &m, NULL);
        if (cases[i].ok) {
            cr_assert_eq(st, KG_ERR_NO_DEVICE, "case %zu: %s", i, kg_errmsg(ctx));
        } else {
            cr_assert_eq(st, KG_ERR_SHAPE, "case %zu: %s", i, kg_errmsg(ctx));
            cr_assert(strstr(kg_errmsg(ctx), "is not broadcastable to [B, Hq, Sq, Sk] = [2,8,100,120]"), "case %zu: %s",
                      i, kg_errmsg(ctx));
        }
    }
    kg_tensor m = kg_tensor_contiguous(KT_DEV(5 << 24), KG_F32, 2, KT_SHAPE(120, 100));
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, &m, NULL), KG_ERR_SHAPE,
              "shape mismatch: attention: mask [120,100] is not broadcastable to [B, Hq, Sq, Sk] = [2,8,100,120]");
}

Test(attention_validation, head_dims_that_are_not_generated_are_named)
{
    const int64_t bad[] = {257, 512}; /* smaller ones are zero-padded (test_attention_f64.c) */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        call_t c = valid_call(KG_F16, bad[i]);
        char want[160];
        snprintf(want, sizeof want,
                 "invalid argument: attention: head dim %lld is larger than 256 (generated: 32, 64, 96, 128, 256; a "
                 "smaller one is zero-padded to the next)",
                 (long long)bad[i]);
        KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_INVALID_ARGUMENT, want);
    }
}

/* Layouts the kernels cannot load are packed first (test_attention_f64.c). */
Test(attention_validation, layout_requirements)
{
    call_t c = valid_call(KG_BF16, 64);
    c.k.strides[3] = 2;
    cr_assert_eq(kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
    c = valid_call(KG_BF16, 64);
    c.v.data = KT_DEV((2 << 24) + 2);
    cr_assert_eq(kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
    c = valid_call(KG_BF16, 64);
    c.q.strides[2] = 68; /* 136 bytes */
    c.q.strides[1] = 68 * 100, c.q.strides[0] = 68 * 100 * 8;
    cr_assert_eq(kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
    c.q.strides[2] = 72; /* 144 bytes: padded rows are fine */
    c.q.strides[1] = 72 * 100, c.q.strides[0] = 72 * 100 * 8;
    cr_assert_eq(kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
}

Test(attention_validation, outputs_must_not_overlap_inputs)
{
    call_t c = valid_call(KG_BF16, 64);
    c.out.data = c.q.data;
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: attention: out overlaps q (bytes [0x10000000, 0x10032000) and [0x10000000, "
              "0x10032000))");
    c = valid_call(KG_BF16, 64);
    c.lse.data = KT_DEV((3 << 24) + 256);
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, &c.lse, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: attention: lse overlaps out (bytes [0x13000100, 0x13001a00) and [0x13000000, "
              "0x13032000))");
}

Test(attention_validation, scale_must_be_finite)
{
    call_t c = valid_call(KG_F32, 32);
    kg_attention_opts o = {NAN, 0};
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, &o), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: attention: scale nan is not finite");
    o.scale = 0.5f;
    cr_assert_eq(kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, &o), KG_ERR_NO_DEVICE);
}

/* Head dim 0 with the default scale 1/sqrt(D) names the head dim (before
   session 27 the message was "scale inf is not finite", a scale the caller
   never gave); an explicit scale still runs it. */
Test(attention_validation, head_dim_0_needs_an_explicit_scale)
{
    call_t c = valid_call(KG_F16, 0);
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: attention: head dim 0 makes the default scale 1/sqrt(D) infinite (pass a nonzero "
              "opts->scale)");
    kg_attention_opts o = {0.f, 1};
    KT_EXPECT(ctx, kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, &o), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: attention: head dim 0 makes the default scale 1/sqrt(D) infinite (pass a nonzero "
              "opts->scale)");
    o.scale = 0.5f;
    cr_assert_eq(kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, &o), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
}

Test(attention_validation, empty_problems_validate_then_report_the_device)
{
    call_t c = valid_call(KG_F16, 64);
    c.q.shape[2] = c.out.shape[2] = 0;
    c.q.data = c.out.data = NULL;
    cr_assert_eq(kg_attention(ctx, &c.out, NULL, &c.q, &c.k, &c.v, NULL, NULL), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
}

/* ---- CPU: the decode path's key split ------------------------------------ */

/* The planner against a brute-force reading of its contract. */
/* "Hopper persistent base" (forced only) has no kernels since session 37
   (gen/attention.lua: its modules made room in the bundle): every table
   entry of it empty, so that a force of it cannot take */
Test(attention_plan, persistent_base_has_no_kernels)
{
    for (int d = 0; d < KG_DTYPE_COUNT; d++)
        for (int s = 0; s < KG_ATTN_DIM_COUNT; s++)
            for (int k = 0; k < KG_ATTN_KIND_COUNT; k++)
                cr_assert_eq(kg_attn_table[KG_ATTN_V_HOPPER_PERSIST_BASE][d][s][k].threads, 0,
                             "dtype %d slot %d kind %d", d, s, k);
}

Test(attention_plan, split_fills_one_wave_and_covers_every_key)
{
    const int64_t blocks[] = {1, 7, 8, 64, 100, 131, 132, 263, 264, 265, 1000, 5000};
    const int64_t keys[] = {1, 63, 64, 65, 129, 1000, 4096, 8191, 8192, 32768, 100003, 1 << 20};
    const int bns[] = {64, 128};
    const int64_t slotss[] = {132, 264, 528};
    const int64_t mins[] = {0, 64, 512, 1000};
    int n = 0;
    for (size_t a = 0; a < sizeof blocks / sizeof blocks[0]; a++)
        for (size_t b = 0; b < sizeof keys / sizeof keys[0]; b++)
            for (size_t c = 0; c < 2; c++)
                for (size_t d = 0; d < 3 * 4; d++) {
                    const int bn = bns[c];
                    const int64_t sl = slotss[d % 3], mc = mins[d / 3];
                    kg_attn_split r = kg_attn_plan_split(blocks[a], keys[b], bn, sl, KG_ATTN_MAX_SPLITS, mc, 0, 0);
                    /* brute force: the best splits / waves over the allowed counts */
                    const int64_t tiles = (keys[b] + bn - 1) / bn;
                    int64_t most = tiles / KG_ATTN_MIN_SPLIT_TILES;
                    if (mc > 0 && most > keys[b] / mc)
                        most = keys[b] / mc;
                    most = most > KG_ATTN_MAX_SPLITS ? KG_ATTN_MAX_SPLITS : most < 1 ? 1 : most;
                    int64_t want = sl / blocks[a];
                    want = want > most ? most : want < 1 ? 1 : want;
                    const int64_t per = (keys[b] + want - 1) / want, chunk = (per + bn - 1) / bn * bn;
                    cr_assert_eq(r.chunk, chunk, "blocks %lld keys %lld bn %d slots %lld: chunk %d, want %lld",
                                 (long long)blocks[a], (long long)keys[b], bn, (long long)sl, r.chunk,
                                 (long long)chunk);
                    cr_assert_eq(r.splits, (keys[b] + chunk - 1) / chunk);
                    cr_assert(r.splits >= 1 && r.splits <= want);
                    cr_assert(r.chunk % bn == 0);
                    cr_assert((int64_t)(r.splits - 1) * r.chunk < keys[b] && (int64_t)r.splits * r.chunk >= keys[b]);
                    cr_assert(r.splits == 1 || mc == 0 || r.chunk >= mc, "chunk %d below the minimum %lld", r.chunk,
                              (long long)mc);
                    n++;
                }
    cr_assert_eq(n, 12 * 12 * 2 * 12);
}

Test(attention_plan, split_examples_edges_and_forced_counts)
{
    /* B 8 x Hkv 8 on 132 SMs x 2: four splits of 2048 keys fill one wave */
    kg_attn_split r = kg_attn_plan_split(64, 8192, 64, 264, KG_ATTN_MAX_SPLITS, 0, 0, 0);
    cr_assert(r.splits == 4 && r.chunk == 2048, "%d x %d", r.splits, r.chunk);
    /* B 1 x Hkv 8, 32k keys: 33 splits fit, 993 keys round to 1024: 32 */
    r = kg_attn_plan_split(8, 32768, 64, 264, KG_ATTN_MAX_SPLITS, 0, 0, 0);
    cr_assert(r.splits == 32 && r.chunk == 1024, "%d x %d", r.splits, r.chunk);
    /* MQA, B 8: 8 row tiles of 32 valid rows, 16 keys per row: chunks of at
       least 512 keys, 16 splits rather than 32 */
    r = kg_attn_plan_split(8, 8192, 64, 264, KG_ATTN_MAX_SPLITS, 16 * 32, 0, 0);
    cr_assert(r.splits == 16 && r.chunk == 512, "%d x %d", r.splits, r.chunk);
    /* B 1 x Hkv 8 (4 valid rows): the minimum (64 keys) does not bind */
    r = kg_attn_plan_split(8, 32768, 64, 264, KG_ATTN_MAX_SPLITS, 16 * 4, 0, 0);
    cr_assert(r.splits == 32 && r.chunk == 1024, "%d x %d", r.splits, r.chunk);
    /* the launch's minimum (4 keys a valid row) where 16 a row binds: B 4
       Hq 54 Hkv 2 Sk 5907, 8 tiles of 27 rows: 16 splits of 384, not 12 of 512 */
    r = kg_attn_plan_split(8, 5907, 64, 132, KG_ATTN_MAX_SPLITS, KG_ATTN_SPLIT_PER_ROW * 27, 0, 0);
    cr_assert(r.splits == 16 && r.chunk == 384, "%d x %d", r.splits, r.chunk);
    r = kg_attn_plan_split(8, 5907, 64, 132, KG_ATTN_MAX_SPLITS, 16 * 27, 0, 0);
    cr_assert(r.splits == 12 && r.chunk == 512, "%d x %d", r.splits, r.chunk);
    /* a forced count ignores the minimum */
    r = kg_attn_plan_split(8, 8192, 64, 264, KG_ATTN_MAX_SPLITS, 16 * 32, 0, 32);
    cr_assert(r.splits == 32 && r.chunk == 256, "%d x %d", r.splits, r.chunk);
    /* a full grid already: no split; nor with more than half of one */
    r = kg_attn_plan_split(264, 8192, 64, 264, KG_ATTN_MAX_SPLITS, 0, 0, 0);
    cr_assert(r.splits == 1 && r.chunk == 8192, "%d x %d", r.splits, r.chunk);
    r = kg_attn_plan_split(133, 8192, 64, 264, KG_ATTN_MAX_SPLITS, 0, 0, 0);
    cr_assert(r.splits == 1 && r.chunk == 8192, "%d x %d", r.splits, r.chunk);
    r = kg_attn_plan_split(100, 8192, 64, 264, KG_ATTN_MAX_SPLITS, 0, 0, 0);
    cr_assert(r.splits == 2 && r.chunk == 4096, "%d x %d", r.splits, r.chunk);
    /* no keys; fewer keys than two tiles */
    r = kg_attn_plan_split(8, 0, 64, 264, KG_ATTN_MAX_SPLITS, 0, 0, 0);
    cr_assert(r.splits == 1 && r.chunk == 64);
    r = kg_attn_plan_split(8, 127, 64, 264, KG_ATTN_MAX_SPLITS, 0, 0, 0);
    cr_assert(r.splits == 1 && r.chunk == 128);
    /* max_splits caps the count */
    r = kg_attn_plan_split(1, 1 << 20, 64, 264, 5, 0, 0, 0);
    cr_assert(r.splits == 5 && r.chunk == 209728, "%d x %d", r.splits, r.chunk);
    /* forced: 7 asked of 1000 keys -> chunks of 192 -> 6 splits, the last 40 keys */
    r = kg_attn_plan_split(8, 1000, 64, 264, KG_ATTN_MAX_SPLITS, 0, 0, 7);
    cr_assert(r.splits == 6 && r.chunk == 192, "%d x %d", r.splits, r.chunk);
    /* forced beyond one tile per split */
    r = kg_attn_plan_split(8, 100, 64, 264, KG_ATTN_MAX_SPLITS, 0, 0, 50);
    cr_assert(r.splits == 2 && r.chunk == 64, "%d x %d", r.splits, r.chunk);
    /* absurd block counts: one split over every key, no overflow */
    r = kg_attn_plan_split((int64_t)1 << 50, INT32_MAX, 64, 264, KG_ATTN_MAX_SPLITS, 0, 0, 0);
    cr_assert(r.splits == 1 && r.chunk == INT32_MAX);
    r = kg_attn_plan_split(1, INT32_MAX, 64, 264, KG_ATTN_MAX_SPLITS, 0, 0, 0);
    cr_assert((int64_t)(r.splits - 1) * r.chunk < INT32_MAX && (int64_t)r.splits * r.chunk >= INT32_MAX);
}

/* The fill of waves (the decode kernels that run several blocks per
   multiprocessor): more splits until the blocks fill their waves to the
   percent asked, within the same limits; never fewer splits than without. */
Test(attention_plan, split_fill_of_waves)
{
    /* D 32 on 132 x 3 slots: 256 row tiles fill 0.65 of a wave with 1 split
       and of two with 2; 3 fill 0.97 of two */
    kg_attn_split r = kg_attn_plan_split(256, 24858, 128, 396, KG_ATTN_MAX_SPLITS, 128, 90, 0);
    cr_assert(r.splits == 3 && r.chunk == 8320, "%d x %d", r.splits, r.chunk);
    r = kg_attn_plan_split(256, 24858, 128, 396, KG_ATTN_MAX_SPLITS, 128, 0, 0);
    cr_assert_eq(r.splits, 1);
    /* 128 row tiles: 3 splits already fill one wave to 0.97 */
    r = kg_attn_plan_split(128, 9366, 128, 396, KG_ATTN_MAX_SPLITS, 128, 90, 0);
    cr_assert_eq(r.splits, 3);
    /* 512: 1 split 0.65 of two waves, 2 0.86 of three, 3 0.97 of four */
    r = kg_attn_plan_split(512, 9000, 128, 396, KG_ATTN_MAX_SPLITS, 128, 90, 0);
    cr_assert_eq(r.splits, 3);
    /* the limits still hold: 3 tiles allow 1 split of 2 tiles; max_splits */
    r = kg_attn_plan_split(256, 300, 128, 396, KG_ATTN_MAX_SPLITS, 0, 90, 0);
    cr_assert_eq(r.splits, 1);
    r = kg_attn_plan_split(256, 24858, 128, 396, 2, 128, 90, 0);
    cr_assert_eq(r.splits, 2);
    /* a forced count is taken as it is */
    r = kg_attn_plan_split(256, 24858, 128, 396, KG_ATTN_MAX_SPLITS, 128, 90, 2);
    cr_assert_eq(r.splits, 2);
    const int64_t blocks[] = {1, 16, 100, 133, 200, 256, 397, 512, 1000, 5000};
    const int64_t keys[] = {129, 4096, 8191, 24858, 100003};
    for (int a = 0; a < 10; a++)
        for (int b = 0; b < 5; b++) {
            const kg_attn_split f = kg_attn_plan_split(blocks[a], keys[b], 128, 396, KG_ATTN_MAX_SPLITS, 256, 90, 0),
                                o = kg_attn_plan_split(blocks[a], keys[b], 128, 396, KG_ATTN_MAX_SPLITS, 256, 0, 0);
            cr_assert(f.splits >= o.splits, "blocks %lld keys %lld: %d splits with the fill, %d without",
                      (long long)blocks[a], (long long)keys[b], f.splits, o.splits);
            cr_assert(f.chunk % 128 == 0 && (int64_t)(f.splits - 1) * f.chunk < keys[b] &&
                      (int64_t)f.splits * f.chunk >= keys[b]);
            cr_assert(f.splits == 1 || f.chunk >= 256);
        }
}

/* The decode tile rule (kg_attn_dec_tile_rows): 16 / 64 rows by the rows
   outside 17-32; inside, two 16-row tiles only where the 32-row grid
   under-fills the GPU (an H200's 132 multiprocessors in the examples): never
   where the 32-row grid fills a wave, nor where two 16-row tiles a KV head
   would need more than one. */
Test(attention_plan, decode_tile_rule)
{
    for (int r = 1; r <= 16; r++)
        cr_assert_eq(kg_attn_dec_tile_rows(r, 1, 32768, 64, 132), 16);
    for (int r = 33; r <= 512; r += 31)
        cr_assert_eq(kg_attn_dec_tile_rows(r, 1, 32768, 64, 132), 64);
    /* MQA B 1 Sk 32768 D 128: 64 splits of 512 keys either way, the 32-row
       grid 64 blocks, the 16-row grid 128: 16 */
    cr_assert_eq(kg_attn_dec_tile_rows(32, 1, 32768, 64, 132), 16);
    /* MQA B 2 / B 4 Sk 8192 (16 splits of 8 key tiles: 32 / 64 blocks; 16
       rows: 4 / 8 key tiles a split in 128 blocks): 16 */
    cr_assert_eq(kg_attn_dec_tile_rows(32, 2, 8192, 64, 132), 16);
    cr_assert_eq(kg_attn_dec_tile_rows(32, 4, 8192, 64, 132), 16);
    /* B 4 Hq 64 Hkv 2 Sk 6000: 9 key tiles a split in 88 blocks; 16 rows: 12
       in 128 blocks: 32 (s20r1, µs, 32 / 16: 15.58 / 15.83) */
    cr_assert_eq(kg_attn_dec_tile_rows(32, 8, 6000, 64, 132), 32);
    /* MQA B 8 Sk 8192: 128 blocks of 8 key tiles; 16 rows: 16 each: 32 */
    cr_assert_eq(kg_attn_dec_tile_rows(32, 8, 8192, 64, 132), 32);
    /* B 8 Hq 32 Hkv 1 Sk 15997 D 64 (tiles of 128 keys): 8 / 16 key tiles: 32 */
    cr_assert_eq(kg_attn_dec_tile_rows(32, 8, 15997, 128, 132), 32);
    /* 24 rows (the second 16-row tile 8 valid rows), one KV head, 9000 keys */
    cr_assert_eq(kg_attn_dec_tile_rows(24, 1, 9000, 128, 132), 16);
    /* few keys: two key tiles, one split either way: two blocks of 16 rows
       side by side rather than one of 32 */
    cr_assert_eq(kg_attn_dec_tile_rows(32, 1, 128, 64, 132), 16);
    /* one KV head per multiprocessor and more: 32 */
    cr_assert_eq(kg_attn_dec_tile_rows(32, 132, 128, 64, 132), 32);
    cr_assert_eq(kg_attn_dec_tile_rows(17, 67, 65536, 64, 132), 32);
    /* degenerate input: the rows alone decide */
    cr_assert_eq(kg_attn_dec_tile_rows(20, 0, 8192, 64, 132), 32);
    cr_assert_eq(kg_attn_dec_tile_rows(20, 1, 0, 64, 132), 32);
    cr_assert_eq(kg_attn_dec_tile_rows(20, 1, 8192, 0, 132), 32);
    cr_assert_eq(kg_attn_dec_tile_rows(20, (int64_t)1 << 40, 8192, 64, 132), 32);
    cr_assert_eq(kg_attn_dec_tile_rows(32, 1, 32768, 64, 0), 32); /* one slot */
    const int64_t heads[] = {1, 2, 3, 4, 8, 16, 33, 66, 67, 100, 132, 133, 264, 1000};
    const int64_t keys[] = {1, 64, 129, 1000, 4097, 8192, 15997, 32768, 65536, 1 << 20};
    int n16 = 0;
    for (int r = 17; r <= 32; r += 5)
        for (size_t h = 0; h < sizeof heads / sizeof heads[0]; h++)
            for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
                for (int bn = 64; bn <= 128; bn += 64) {
                    const int t = kg_attn_dec_tile_rows(r, heads[h], keys[k], bn, 132);
                    cr_assert(t == 16 || t == 32, "rows %d heads %lld keys %lld: %d", r, (long long)heads[h],
                              (long long)keys[k], t);
                    /* two 16-row tiles a KV head past one wave: 32 */
                    cr_assert(t == 32 || 2 * heads[h] <= 132, "rows %d heads %lld keys %lld: 16", r,
                              (long long)heads[h], (long long)keys[k]);
                    /* where the 32-row grid fills its wave already: 32 */
                    const kg_attn_split s = kg_attn_plan_split(heads[h], keys[k], bn, 132, KG_ATTN_MAX_SPLITS,
                                                               KG_ATTN_CHUNK_PER_ROW * r, 0, 0);
                    cr_assert(t == 32 || heads[h] * s.splits < 132, "rows %d heads %lld keys %lld: 16 on a full grid",
                              r, (long long)heads[h], (long long)keys[k]);
                    n16 += t == 16;
                }
    cr_assert(n16 > 0);
}

/* The merge's lanes: the fewest powers of two up to 32 that take every
   split in one round of KG_ATTN_MERGE_LOADS loads each. */
/* The combine kernel's early trigger: where the decode grid leaves at
   least half the multiprocessors idle. */
Test(attention_plan, decode_combine_early_trigger_rule)
{
    cr_assert_eq(kg_attn_dec_comb_early(58, 132), 1);
    cr_assert_eq(kg_attn_dec_comb_early(66, 132), 1);
    cr_assert_eq(kg_attn_dec_comb_early(67, 132), 0);
    cr_assert_eq(kg_attn_dec_comb_early(96, 132), 0);
    cr_assert_eq(kg_attn_dec_comb_early(128, 132), 0);
    cr_assert_eq(kg_attn_dec_comb_early(1, 2), 1);
    cr_assert_eq(kg_attn_dec_comb_early(2, 3), 0);
    cr_assert_eq(kg_attn_dec_comb_early(0, 132), 0);
    cr_assert_eq(kg_attn_dec_comb_early(1, 0), 0);
    cr_assert_eq(kg_attn_dec_comb_early((int64_t)1 << 40, 132), 0);
}

Test(attention_plan, decode_tail_mergers_rule)
{
    /* MQA B 8 (32-row tiles, 16 splits, 2 lanes: 64 items a pass, 16
       passes), MQA B 1 (16-row tiles, 64 splits, 8 lanes: 32 passes), f16 B
       2 Hq 8 Hkv 1 (8 valid rows, 29 splits, 4 lanes: 8 passes) */
    cr_assert_eq(kg_attn_dec_tail_mergers(8, 16, 32 * 32, 2, 132), 16);
    cr_assert_eq(kg_attn_dec_tail_mergers(2, 64, 16 * 32, 8, 132), 32);
    cr_assert_eq(kg_attn_dec_tail_mergers(2, 29, 8 * 32, 4, 132), 8);
    /* the splits bind (2 splits, 8 passes), the waiting blocks bind (100
       tiles: 1 waits a tile), 255 at most */
    cr_assert_eq(kg_attn_dec_tail_mergers(4, 2, 1024, 1, 132), 2);
    cr_assert_eq(kg_attn_dec_tail_mergers(100, 4, 1024, 1, 132), 2);
    cr_assert_eq(kg_attn_dec_tail_mergers(200, 4, 1024, 1, 132), 1);
    cr_assert_eq(kg_attn_dec_tail_mergers(1, 256, 64 * 64, 32, 100000), 255);
    /* not applicable */
    cr_assert_eq(kg_attn_dec_tail_mergers(8, 1, 1024, 2, 132), 0);
    cr_assert_eq(kg_attn_dec_tail_mergers(0, 16, 1024, 2, 132), 0);
    cr_assert_eq(kg_attn_dec_tail_mergers(8, 16, 0, 2, 132), 0);
    cr_assert_eq(kg_attn_dec_tail_mergers(8, 16, 1024, 0, 132), 0);
    cr_assert_eq(kg_attn_dec_tail_mergers(8, 16, 1024, 2, 1), 0);
    /* every answer: 1 to min(splits, 255) mergers, fewer than sms blocks
       waiting at once (K - 1 a tile), no more than one pass a merger needs */
    for (int64_t tiles = 1; tiles <= 300; tiles += 7)
        for (int splits = 2; splits <= KG_ATTN_MAX_SPLITS; splits += 5)
            for (int64_t items = 4; items <= 64 * 64; items *= 3)
                for (int64_t sms = 2; sms <= 200; sms += 65) {
                    const int lanes = kg_attn_merge_lanes(splits);
                    const int k = kg_attn_dec_tail_mergers(tiles, splits, items, lanes, sms);
                    const int64_t passes = (items + 128 / lanes - 1) / (128 / lanes);
                    cr_assert(k >= 1 && k <= splits && k <= 255 && k <= passes && tiles * (k - 1) < sms,
                              "tiles %lld splits %d items %lld sms %lld: %d mergers", (long long)tiles, splits,
                              (long long)items, (long long)sms, k);
                }
}

Test(attention_plan, decode_tail_merge_rule)
{
    const int64_t mb = (int64_t)1 << 20;
    for (int64_t rows = 1; rows <= 64; rows *= 2) {
        const int64_t most = rows >= KG_ATTN_DEC_TAIL_ROWS ? KG_ATTN_DEC_TAIL_BYTES_ROWS : KG_ATTN_DEC_TAIL_BYTES;
        cr_assert_eq(kg_attn_dec_tail_rule(58, 132, 4 * mb, 29, rows), 1);
        cr_assert_eq(kg_attn_dec_tail_rule(132, 132, most, KG_ATTN_DEC_TAIL_SPLITS, rows), 1);
        cr_assert_eq(kg_attn_dec_tail_rule(106, 132, 10 * mb, 53, rows), 1);
        cr_assert_eq(kg_attn_dec_tail_rule(128, 132, 12 * mb, 16, rows), 1);
        cr_assert_eq(kg_attn_dec_tail_rule(128, 132, KG_ATTN_DEC_TAIL_BYTES, 16, rows), 1);
        /* above 16 MB only with 8 valid rows a tile or more: MQA B 8 Sk 8192
           D 128 (32 rows, 32 MB), B 4 Hq 2 Hkv 2 Sk 23304 D 64 (1 row, 45.5 MB) */
        cr_assert_eq(kg_attn_dec_tail_rule(128, 132, 32 * mb, 16, rows), rows >= 8);
        cr_assert_eq(kg_attn_dec_tail_rule(128, 132, KG_ATTN_DEC_TAIL_BYTES + 1, 16, rows), rows >= 8);
        cr_assert_eq(kg_attn_dec_tail_rule(132, 132, 117 * mb, 33, rows), rows >= 8);
        /* more than one wave, more bytes, more splits, no split */
        cr_assert_eq(kg_attn_dec_tail_rule(133, 132, 4 * mb, 16, rows), 0);
        cr_assert_eq(kg_attn_dec_tail_rule(128, 132, most + 1, 16, rows), 0);
        cr_assert_eq(kg_attn_dec_tail_rule(128, 132, 200 * mb, 16, rows), 0);
        cr_assert_eq(kg_attn_dec_tail_rule(120, 132, 15 * mb, 60, rows), 0);
        cr_assert_eq(kg_attn_dec_tail_rule(128, 132, 16 * mb, 64, rows), 0);
        cr_assert_eq(kg_attn_dec_tail_rule(101, 132, 10 * mb, 101, rows), 0);
        cr_assert_eq(kg_attn_dec_tail_rule(8, 132, 4 * mb, 1, rows), 0);
        cr_assert_eq(kg_attn_dec_tail_rule(128, 132, INT64_MAX, 16, rows), 0);
        /* not a grid */
        cr_assert_eq(kg_attn_dec_tail_rule(0, 132, 4 * mb, 16, rows), 0);
        cr_assert_eq(kg_attn_dec_tail_rule(10, 0, 4 * mb, 16, rows), 0);
        cr_assert_eq(kg_attn_dec_tail_rule(10, 132, -1, 16, rows), 0);
    }
    cr_assert(KG_ATTN_DEC_TAIL_BYTES <= KG_ATTN_DEC_TAIL_BYTES_ROWS);
}

Test(attention_plan, merge_lanes_take_every_split_in_one_round)
{
    for (int s = 1; s <= KG_ATTN_MAX_SPLITS; s++) {
        const int g = kg_attn_merge_lanes(s);
        cr_assert(g >= 1 && g <= 32 && (g & (g - 1)) == 0, "%d splits: %d lanes", s, g);
        cr_assert(g * KG_ATTN_MERGE_LOADS >= s, "%d splits: %d lanes take two rounds", s, g);
        cr_assert(g == 1 || (g / 2) * KG_ATTN_MERGE_LOADS < s, "%d splits: %d lanes, half would do", s, g);
    }
    const int ex[][2] = {{1, 1}, {8, 1}, {9, 2}, {16, 2}, {17, 4}, {33, 8}, {64, 8}, {65, 16}, {129, 32}, {256, 32}};
    for (int i = 0; i < 10; i++)
        cr_assert_eq(kg_attn_merge_lanes(ex[i][0]), ex[i][1], "%d splits", ex[i][0]);
}

/* "Hopper persistent ts" (session 31; since session 32 the D 128 causal
   default up to 2048 keys, choose_variant), the plain persistent kernel
   with bulk tensor stores of the output (attention_sm90.cuh TS): generated
   for f16 and bf16, D 128, causal only (not causal, on f2, it lost s31r1);
   two consumer warpgroups and a producer, 384 threads, 128x128 tiles, and
   the shape and shared memory of the plain persistent kernel (the output's
   staging tile is the one that has); sm_90a code, each entry the kernel its
   name says. The runtime counts it persistent. */
Test(attention_plan, bulk_store_variants_table)
{
    const int v = KG_ATTN_V_HOPPER_PERSIST_TS;
    const char *kinds[3] = {"none", "causal", "mask"};
    cr_assert_str_eq(kg_attn_variant_names[v], "Hopper persistent ts");
    cr_assert_eq(kg_attn_variant_sm90a[v], 1);
    for (int dt = 0; dt < KG_DTYPE_COUNT; dt++)
        for (int slot = 0; slot < KG_ATTN_DIM_COUNT; slot++)
            for (int kind = 0; kind < KG_ATTN_KIND_COUNT; kind++) {
                const kg_attn_entry *e = &kg_attn_table[v][dt][slot][kind];
                const int D = kg_attn_dims[slot];
                const int want = (dt == KG_F16 || dt == KG_BF16) && kind == KG_ATTN_CAUSAL && D == 128;
                cr_assert_eq(e->threads > 0, want, "ts %s D %d %s", kg_dtype_name((kg_dtype)dt), D, kinds[kind]);
                if (!want)
                    continue;
                const kg_attn_entry *twin = &kg_attn_table[KG_ATTN_V_HOPPER_PERSIST][dt][slot][kind];
                cr_assert(e->threads == 3 * 128 && e->bm == 128 && e->bn == 128, "ts: %d threads, %dx%d tiles",
                          e->threads, e->bm, e->bn);
                cr_assert(
                    twin->threads == e->threads && twin->bm == e->bm && twin->bn == e->bn && twin->smem == e->smem,
                    "ts %s: %d bytes of shared memory, its twin %d", kg_dtype_name((kg_dtype)dt), e->smem, twin->smem);
                cr_assert(e->smem > 0 && e->smem <= 227 * 1024, "ts: %d bytes of shared memory", e->smem);
                char want_name[64];
                snprintf(want_name, sizeof want_name, "kg_attn90x_%s_d%d_%s", kg_dtype_name((kg_dtype)dt), D,
                         kinds[kind]);
                cr_assert(e->kernel >= 0 && e->kernel < kg_kernel_count, "%s: kernel index %d", want_name, e->kernel);
                cr_assert_str_eq(kg_kernels[e->kernel].name, want_name);
            }
}

/* kg_attn_persist_sched: under the runtime's rule (hooks 0) the order
   across batches and the late claim on causal launches of the plain
   persistent variant and of ts (that kernel with bulk tensor stores, the
   D 128 causal default up to 2048 keys since session 32) only; -1 never, 1 every persistent launch (the order
   causal ones only) */
Test(attention_plan, persist_sched_rule)
{
    const int64_t pairs[3] = {1, 64, 65535 * 4};
    for (int v = 0; v < KG_ATTN_V_COUNT; v++)
        for (int causal = 0; causal < 2; causal++)
            for (int i = 0; i < 3; i++)
                for (int xo = -1; xo <= 1; xo++)
                    for (int lc = -1; lc <= 1; lc++) {
                        int32_t sp = -7, ch = -7;
                        kg_attn_persist_sched(v, causal, pairs[i], xo, lc, &sp, &ch);
                        const int plain_causal =
                            (v == KG_ATTN_V_HOPPER_PERSIST || v == KG_ATTN_V_HOPPER_PERSIST_TS) && causal;
                        const int want_x = causal && (xo == 1 || (xo == 0 && plain_causal)),
                                  want_l = lc == 1 || (lc == 0 && plain_causal);
                        cr_assert_eq(sp, want_x ? (int32_t)pairs[i] : 0,
                                     "%s causal %d pairs %lld hooks %d %d: splits %d", kg_attn_variant_names[v], causal,
                                     (long long)pairs[i], xo, lc, sp);
                        cr_assert_eq(ch, want_l, "%s causal %d hooks %d %d: chunk %d", kg_attn_variant_names[v], causal,
                                     xo, lc, ch);
                    }
    /* the rule's cases written out (hooks 0) */
    const struct {
        int v, causal, splits, chunk;
    } ex[] = {
        {KG_ATTN_V_HOPPER_PERSIST, 1, 64, 1},     {KG_ATTN_V_HOPPER_PERSIST, 0, 0, 0},
        {KG_ATTN_V_HOPPER_PERSIST_PP, 1, 0, 0},   {KG_ATTN_V_HOPPER_PERSIST_PP, 0, 0, 0},
        {KG_ATTN_V_HOPPER_PERSIST_F2, 1, 0, 0},   {KG_ATTN_V_HOPPER_PERSIST_F2, 0, 0, 0},
        {KG_ATTN_V_HOPPER_PERSIST_BASE, 1, 0, 0}, {KG_ATTN_V_HOPPER, 1, 0, 0},
        {KG_ATTN_V_HOPPER_PERSIST_TS, 1, 64, 1},  {KG_ATTN_V_HOPPER_PERSIST_TS, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        int32_t sp = -7, ch = -7;
        kg_attn_persist_sched(ex[i].v, ex[i].causal, 64, 0, 0, &sp, &ch);
        cr_assert(sp == ex[i].splits && ch == ex[i].chunk, "%s causal %d: splits %d chunk %d, want %d %d",
                  kg_attn_variant_names[ex[i].v], ex[i].causal, sp, ch, ex[i].splits, ex[i].chunk);
    }
}

/* The session 31 candidate's shared memory and stages (two 64-row decode
   blocks a multiprocessor, kg_test_attn_dec_pair): the size formula gives
   gen/attention.lua's size of every generated 64-row kernel at its own 3
   stages; two blocks of the stages it picks fit the 228 KB with the
   hardware's 1 KB a block and the kernels' static shared memory (80 bytes,
   ptxas); D 128 takes 2 stages, D 64 and 96 their 3, D 256 none; and the
   splits it plans for the issue's rows (slots 2 x 132) against the
   default's (132). */
Test(attention_plan, decode_pair_stages_and_shared_memory)
{
    int n = 0;
    for (int s = 0; s < KG_ATTN_DIM_COUNT; s++)
        for (int dt = 0; dt < KG_DTYPE_COUNT; dt++)
            for (int k = 0; k < 3; k++) {
                const kg_attn_entry *e = &kg_attn_table[KG_ATTN_V_DECODE4][dt][s][k];
                const int D = kg_attn_dims[s];
                if (e->threads == 0 || D < 64) /* (D 32 loads by cp.async into rows of D + 8: not a candidate) */
                    continue;
                cr_assert_eq(e->bm, 64);
                cr_assert_eq(kg_attn_dec4_smem(e->bm, D, kg_attn_dec_bn[s], 3), e->smem, "D %d: %lld, table %d", D,
                             (long long)kg_attn_dec4_smem(e->bm, D, kg_attn_dec_bn[s], 3), e->smem);
                const int st = kg_attn_dec_pair_stages(e->bm, D, kg_attn_dec_bn[s], KG_DEC_MAX_STAGES);
                cr_assert_eq(st, D == 128 ? 2 : 3, "D %d: %d stages", D, st);
                const int64_t b = kg_attn_dec4_smem(e->bm, D, kg_attn_dec_bn[s], st);
                cr_assert(b > 0 && b <= KG_ATTN_DEC_PAIR_SMEM && 2 * (b + 1024 + 80) <= (228 << 10), "D %d: %lld", D,
                          (long long)b);
                /* one more stage would not fit two blocks */
                cr_assert(st == KG_DEC_MAX_STAGES ||
                          kg_attn_dec4_smem(e->bm, D, kg_attn_dec_bn[s], st + 1) > KG_ATTN_DEC_PAIR_SMEM);
                n++;
            }
    cr_assert_eq(n, 2 * 3 * 3, "64-row kernels at D 64, 96, 128 for f16 and bf16, three kinds: %d", n);
    /* by hand: D 128, 64 rows, 64-key tiles: Q 17408 + 1024 + 2 x 32768 */
    cr_assert_eq(kg_attn_dec4_smem(64, 128, 64, 2), 17408 + 1024 + 65536);
    cr_assert_eq(kg_attn_dec4_smem(64, 128, 64, 3), 17408 + 1024 + 98304);
    cr_assert_eq(kg_attn_dec4_smem(64, 64, 128, 3), 9216 + 1024 + 98304);
    cr_assert_eq(kg_attn_dec_pair_stages(64, 256, 64, KG_DEC_MAX_STAGES), 0);
    cr_assert_eq(kg_attn_dec_pair_stages(64, 128, 64, 1), 0);
    /* arguments out of range */
    cr_assert_eq(kg_attn_dec4_smem(0, 128, 64, 2), -1);
    cr_assert_eq(kg_attn_dec4_smem(65, 128, 64, 2), -1);
    cr_assert_eq(kg_attn_dec4_smem(64, 32, 64, 2), -1);
    cr_assert_eq(kg_attn_dec4_smem(64, 257, 64, 2), -1);
    cr_assert_eq(kg_attn_dec4_smem(64, 128, 0, 2), -1);
    cr_assert_eq(kg_attn_dec4_smem(64, 128, 64, 1), -1);
    cr_assert_eq(kg_attn_dec4_smem(64, 128, 64, KG_DEC_MAX_STAGES + 1), -1);
    cr_assert_eq(kg_attn_dec4_smem(INT64_MAX, INT64_MAX, INT64_MAX, INT32_MAX), -1);
    /* the issue's rows (64-row tiles, 4 keys a valid row): candidate /
       default splits; B 8 Hq 32 Hkv 1 Sq 16 Sk 8192 D 128: 64 row tiles */
    const struct {
        int64_t blocks, keys, vr;
        int bn, pair, def;
    } ex[] = {
        {64, 8192, 64, 64, 4, 2},     /* B 8 Hq 32 Hkv 1 Sq 16 (and Hkv 8, group 4) */
        {128, 8192, 64, 64, 2, 1},    /* B 8 Hq 64 Hkv 8 Sq 16: two row tiles a KV head */
        {8, 32768, 64, 64, 32, 16},   /* B 1 Hq 32 Hkv 8 Sq 16 Sk 32768 */
        {512, 4096, 64, 64, 1, 1},    /* B 64 Hq 32 Hkv 8 Sq 16 Sk 4096: 512 blocks, two waves instead of four */
        {1, 32768, 64, 64, 128, 128}, /* MQA Hq 64 Sq 1: the 4 keys a row bind; 128 blocks: not taken */
    };
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        const kg_attn_split p = kg_attn_plan_split(ex[i].blocks, ex[i].keys, ex[i].bn, 264, KG_ATTN_MAX_SPLITS,
                                                   KG_ATTN_SPLIT_PER_ROW * ex[i].vr, 0, 0);
        const kg_attn_split d = kg_attn_plan_split(ex[i].blocks, ex[i].keys, ex[i].bn, 132, KG_ATTN_MAX_SPLITS,
                                                   KG_ATTN_SPLIT_PER_ROW * ex[i].vr, 0, 0);
        cr_assert(p.splits == ex[i].pair && d.splits == ex[i].def, "example %zu: %d / %d splits, want %d / %d", i,
                  p.splits, d.splits, ex[i].pair, ex[i].def);
        /* where the candidate's grid is one wave or less it plans the
           default's splits (the runtime then keeps the default launch) */
        if (ex[i].blocks * p.splits <= 132)
            cr_assert_eq(p.splits, d.splits);
    }
    /* that, for every grid of at most one wave: equal plans */
    for (int64_t blocks = 1; blocks <= 140; blocks++)
        for (int64_t keys = 1; keys <= 70000; keys = keys * 3 + 1)
            for (int64_t vr = 33; vr <= 64; vr += 31) {
                const kg_attn_split p = kg_attn_plan_split(blocks, keys, 64, 264, KG_ATTN_MAX_SPLITS, 4 * vr, 0, 0);
                const kg_attn_split d = kg_attn_plan_split(blocks, keys, 64, 132, KG_ATTN_MAX_SPLITS, 4 * vr, 0, 0);
                if (blocks * p.splits <= 132)
                    cr_assert(p.splits == d.splits && p.chunk == d.chunk, "blocks %lld keys %lld", (long long)blocks,
                              (long long)keys);
            }
}

/* Session 33's rule for the pair candidate (kg_attn_dec_pair_rule) on the
   rows s31r1 measured (H100, 132 multiprocessors; def/pair in the comment),
   planned as the runtime plans them (kg_attn_plan_split for 132 and 264
   slots, 4 keys a valid row): it takes the rows where each K / V tile has
   two or more row tiles and the pair grid gives every multiprocessor two
   blocks, and none of the rows pair lost. */
Test(attention_plan, decode_pair_rule)
{
    const struct {
        int B, Hq, Hkv, Sq, Sk, D, take;
    } rs[] = {
        {8, 32, 1, 16, 8192, 128, 1},   /* 1.308 */
        {8, 64, 8, 16, 8192, 128, 1},   /* 1.210 */
        {8, 32, 8, 16, 8192, 128, 0},   /* 0.991: one row tile a KV head */
        {1, 32, 8, 16, 32768, 128, 0},  /* 0.920: one row tile */
        {32, 32, 8, 11, 1198, 128, 0},  /* 1.061: one row tile (the waves' gain only) */
        {1, 16, 2, 16, 15951, 128, 0},  /* 0.882: 200 blocks, 64 multiprocessors with one */
        {16, 256, 8, 5, 1476, 128, 1},  /* 1.076 */
        {8, 16, 2, 10, 4600, 128, 1},   /* 1.193 */
        {64, 64, 2, 5, 6101, 64, 0},    /* 1.001: the default already two a multiprocessor */
        {4, 64, 8, 5, 4077, 128, 0},    /* 0.949: one row tile */
        {1, 32, 2, 14, 27210, 128, 1},  /* 1.081 */
        {4, 128, 4, 16, 15118, 128, 1}, /* 1.317 */
        {8, 32, 4, 12, 27104, 128, 1},  /* 1.357 */
        {4, 128, 4, 15, 60646, 64, 1},  /* 1.276 */
        {32, 64, 2, 14, 12625, 64, 0},  /* 1.003: the default already two a multiprocessor */
        {2, 256, 8, 7, 1047, 128, 1},   /* 1.127 */
        {8, 32, 2, 11, 10340, 64, 1},   /* 1.435 */
        {4, 16, 4, 12, 17930, 128, 0},  /* 0.964: one row tile */
        {2, 32, 8, 12, 2792, 128, 0},   /* 0.936: one row tile */
    };
    for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) {
        const int64_t rows = (int64_t)rs[i].Hq / rs[i].Hkv * rs[i].Sq, nrt = (rows + 63) / 64;
        const int64_t blocks = (int64_t)rs[i].B * rs[i].Hkv * nrt, vr = rows < 64 ? rows : 64;
        const int bn = rs[i].D == 128 ? 64 : 128;
        const kg_attn_split d =
            kg_attn_plan_split(blocks, rs[i].Sk, bn, 132, KG_ATTN_MAX_SPLITS, KG_ATTN_SPLIT_PER_ROW * vr, 0, 0);
        const kg_attn_split p =
            kg_attn_plan_split(blocks, rs[i].Sk, bn, 264, KG_ATTN_MAX_SPLITS, KG_ATTN_SPLIT_PER_ROW * vr, 0, 0);
        /* the default's residency: D 64's 3 stages (108544 bytes) fit two a
           multiprocessor where its grid is more than one wave (not padded) */
        const int dres = rs[i].D == 64 && blocks * d.splits > 132 ? 2 : 1;
        const int t = kg_attn_dec_pair_rule(nrt, blocks, d.splits, d.chunk, p.splits, p.chunk, bn, 132, dres);
        cr_assert_eq(t, rs[i].take, "row %zu (B %d Hq %d Hkv %d Sq %d Sk %d D %d): %d / %d splits, took %d", i,
                     rs[i].B, rs[i].Hq, rs[i].Hkv, rs[i].Sq, rs[i].Sk, rs[i].D, d.splits, p.splits, t);
    }
    /* by hand (132 multiprocessors, key tiles a block, x 5 for 1.25x):
       4 row tiles of 2 a head, 32 splits of 8 tiles (one wave: 40) against
       50 of 5 (200 blocks: 8 x 5 = 40): gain 1.00, not taken; 66 of 4
       (264 blocks, 32): 1.25, taken */
    cr_assert_eq(kg_attn_dec_pair_rule(2, 4, 32, 512, 50, 320, 64, 132, 1), 0);
    cr_assert_eq(kg_attn_dec_pair_rule(2, 4, 32, 512, 66, 256, 64, 132, 1), 1);
    /* 384 row tiles of one split, 24 key tiles: 3 waves (360) against a
       full pair wave and 120 blocks alone (8 x 24 + 5 x 24 = 312): 1.15 */
    cr_assert_eq(kg_attn_dec_pair_rule(3, 384, 1, 1476, 1, 1476, 64, 132, 1), 1);
    /* the 110% bound exactly: 11 x 8 key tiles (one wave: 5 x 88 = 440)
       against 8 x 50 = 400 takes, 8 x 51 = 408 does not */
    cr_assert_eq(kg_attn_dec_pair_rule(2, 132, 1, 88 * 64, 2, 50 * 64, 64, 132, 1), 1);
    cr_assert_eq(kg_attn_dec_pair_rule(2, 132, 1, 88 * 64, 2, 51 * 64, 64, 132, 1), 0);
    /* one row tile, the default two a multiprocessor, a pair grid of one
       wave: never */
    cr_assert_eq(kg_attn_dec_pair_rule(1, 64, 2, 4096, 4, 2048, 64, 132, 1), 0);
    cr_assert_eq(kg_attn_dec_pair_rule(8, 64, 2, 4096, 4, 2048, 64, 132, 2), 0);
    cr_assert_eq(kg_attn_dec_pair_rule(8, 64, 2, 4096, 4, 2048, 64, 132, 1), 1);
    cr_assert_eq(kg_attn_dec_pair_rule(8, 64, 2, 4096, 2, 4096, 64, 132, 1), 0);
    /* arguments out of range */
    cr_assert_eq(kg_attn_dec_pair_rule(0, 64, 2, 4096, 4, 2048, 64, 132, 1), 0);
    cr_assert_eq(kg_attn_dec_pair_rule(8, 4, 2, 4096, 4, 2048, 64, 132, 1), 0);
    cr_assert_eq(kg_attn_dec_pair_rule(8, 64, 0, 4096, 4, 2048, 64, 132, 1), 0);
    cr_assert_eq(kg_attn_dec_pair_rule(8, 64, 2, 0, 4, 2048, 64, 132, 1), 0);
    cr_assert_eq(kg_attn_dec_pair_rule(8, 64, 2, 4096, 4, 2048, 0, 132, 1), 0);
    cr_assert_eq(kg_attn_dec_pair_rule(8, 64, 2, 4096, 4, 2048, 64, 0, 1), 0);
    cr_assert_eq(kg_attn_dec_pair_rule(8, 64, 2, 4096, 4, 2048, 64, 132, 0), 0);
    cr_assert_eq(kg_attn_dec_pair_rule(INT64_MAX, INT64_MAX, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX,
                                       INT64_MAX, INT32_MAX),
                 0);
    cr_assert_eq(kg_attn_dec_pair_rule(2, (int64_t)1 << 40, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, 1, 1 << 20, 1),
                 0);
    /* the largest in range: no overflow (2^60 blocks, full waves of 2^20
       and 2^21: 5 / 4 of the critical path either way) */
    cr_assert_eq(kg_attn_dec_pair_rule(2, (int64_t)1 << 40, 1 << 20, INT32_MAX, 1 << 20, INT32_MAX, 1, 1 << 20, 1), 1);
    cr_assert_eq(kg_attn_dec_pair_rule(2, (int64_t)1 << 40, 1, INT32_MAX, 1, INT32_MAX, 1, 1 << 20, 1), 1);
}

/* The pair hook's modes: 0 (the runtime's choice) is the rule since round
   s34r1, 1 forced, 2 the rule, -1 and anything else off; KG_ATTN_DEC_PAIR
   (session 33's switch to the rule) is no longer read. */
Test(attention_plan, decode_pair_modes)
{
    const char *const vals[] = {NULL, "rule", "off", ""};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        if (vals[i])
            setenv("KG_ATTN_DEC_PAIR", vals[i], 1);
        else
            unsetenv("KG_ATTN_DEC_PAIR");
        const int want[6][2] = {{0, 2}, {1, 1}, {2, 2}, {-1, 0}, {3, 0}, {-2, 0}};
        for (int j = 0; j < 6; j++) {
            kg_test_attn_dec_pair(want[j][0]);
            cr_assert_eq(kgi_attn_dec_pair_mode(), want[j][1], "KG_ATTN_DEC_PAIR %s, hook %d: mode %d",
                         vals[i] ? vals[i] : "(unset)", want[j][0], kgi_attn_dec_pair_mode());
        }
    }
    unsetenv("KG_ATTN_DEC_PAIR");
    kg_test_attn_dec_pair(0);
    cr_assert_eq(kgi_attn_dec_pair_mode(), 2);
}

/* ---- GPU: numerics ----------------------------------------------------------- */

static uint64_t rng;

static void gpu_setup(void)
{
    ctx = kt_open_gpu();
    rng = kt_seed();
}

static float lowp(kg_dtype dt, double x) { return (float)kt_round(dt, x); }

/* The kernel variant the case runs on, for messages. */
static const char *path_name = "";

static void run_case_once(const acase *c)
{
    const kg_dtype dt = c->dt;
    const int D = c->D;
    const int64_t nq = (int64_t)c->B * c->Hq * c->Sq * D, nk = (int64_t)c->B * c->Hkv * c->Sk * D;
    const int64_t nl = (int64_t)c->B * c->Hq * c->Sq, nm = c->mask ? attn_ref_mask_numel(c) : 0;
    const size_t es = kg_dtype_size(dt);
    void *hq = malloc(nq * es), *hk = malloc(nk * es + 1), *hv = malloc(nk * es + 1), *ho = malloc(nq * es);
    float *hm = malloc(nm * 4 + 4), *hl = malloc(nl * 4);
    const double range = 2.0;
    for (int64_t i = 0; i < nq; i++)
        kt_set(hq, dt, i, kt_uniform(&rng, -range, range));
    for (int64_t i = 0; i < nk; i++) {
        kt_set(hk, dt, i, kt_uniform(&rng, -range, range));
        kt_set(hv, dt, i, kt_uniform(&rng, -1, 1));
    }
    for (int64_t i = 0; i < nm; i++) {
        switch (c->mask) {
        case MASK_PAD: hm[i] = (i % c->Sk) >= c->Sk - 1 - (i / c->Sk) % 7 * (c->Sk / 8) ? -INFINITY : 0.f; break;
        case MASK_RANDOM: hm[i] = kt_uniform(&rng, 0, 1) < 0.2 ? -INFINITY : (float)kt_uniform(&rng, -2, 2); break;
        default: hm[i] = 0.f; break;
        }
    }
    if (c->mask == MASK_EMPTY_ROWS) /* [Sq,Sk]: rows 0, 2, 5, ... entirely -inf, the rest random */
        for (int64_t i = 0; i < c->Sq; i++)
            for (int64_t j = 0; j < c->Sk; j++)
                hm[i * c->Sk + j] = (i % 3 == 0 || i == c->Sq - 1) ? -INFINITY : (float)kt_uniform(&rng, -1, 1);

    void *dq = kt_alloc(ctx, nq * es + 16), *dk = kt_alloc(ctx, nk * es + 16), *dv = kt_alloc(ctx, nk * es + 16);
    void *dout = kt_alloc(ctx, nq * es + 16), *dl = kt_alloc(ctx, nl * 8 + 16), *dm = kt_alloc(ctx, nm * 4 + 16);
    kt_upload(ctx, dq, hq, nq * es);
    kt_upload(ctx, dk, hk, nk * es);
    kt_upload(ctx, dv, hv, nk * es);
    if (nm)
        kt_upload(ctx, dm, hm, nm * 4);
    KT_OK(ctx, kg_memset(ctx, dout, 0xff, nq * es + 16)); /* NaN poison */
    KT_OK(ctx, kg_memset(ctx, dl, 0xff, nl * 8 + 16));

    kg_tensor tq = attn_ref_view4(c, dq, c->Hq, c->Sq), tk = attn_ref_view4(c, dk, c->Hkv, c->Sk),
              tv = attn_ref_view4(c, dv, c->Hkv, c->Sk), to = attn_ref_view4(c, dout, c->Hq, c->Sq);
    /* lse as a strided view: every other float */
    kg_tensor tl = kg_tensor_contiguous(dl, KG_F32, 3, (const int64_t[]){c->B, c->Hq, c->Sq});
    for (int d = 0; d < 3; d++)
        tl.strides[d] *= 2;
    kg_tensor tm;
    if (c->mask) {
        if (c->mask_ndim == 1)
            tm = kg_tensor_contiguous(dm, KG_F32, 1, (const int64_t[]){c->Sk});
        else if (c->mask_ndim == 2)
            tm = kg_tensor_contiguous(dm, KG_F32, 2, (const int64_t[]){c->Sq, c->Sk});
        else if (c->mask == MASK_PAD)
            tm = kg_tensor_contiguous(dm, KG_F32, 4, (const int64_t[]){c->B, 1, 1, c->Sk});
        else
            tm = kg_tensor_contiguous(dm, KG_F32, 4, (const int64_t[]){c->B, c->Hq, c->Sq, c->Sk});
    }
    kg_attention_opts opts = {c->scale, c->causal};
    KT_OK(ctx, kg_attention(ctx, &to, &tl, &tq, &tk, &tv, c->mask ? &tm : NULL, &opts));
    KT_OK(ctx, kg_sync(ctx));
    path_name = kg_attn_variant_names[kg_test_last_attn_variant(ctx)];
    kt_download(ctx, ho, dout, nq * es);
    float *hl2 = malloc(nl * 8);
    kt_download(ctx, hl2, dl, nl * 8);
    for (int64_t i = 0; i < nl; i++)
        hl[i] = hl2[2 * i];
    free(hl2);

    const double scale = c->scale != 0.f ? c->scale : (double)(float)(1.0 / sqrt((double)D));
    /* the rounded inputs as doubles, once (kt_get per product is slow) */
    double *xq = malloc(sizeof(double) * (nq + 1)), *xk = malloc(sizeof(double) * (nk + 1)),
           *xv = malloc(sizeof(double) * (nk + 1));
    for (int64_t i = 0; i < nq; i++)
        xq[i] = kt_get(hq, dt, i);
    for (int64_t i = 0; i < nk; i++) {
        xk[i] = kt_get(hk, dt, i);
        xv[i] = kt_get(hv, dt, i);
    }
    double *s = malloc(sizeof(double) * (c->Sk + 1)), *ref = malloc(sizeof(double) * D);
    float *sl = malloc(sizeof(float) * (c->Sk + 1)), *acc = malloc(sizeof(float) * D);
    float *sf = malloc(sizeof(float) * (c->Sk + 1)); /* f32 scores, for lse_lp */
    /* the checked rows' lse (want, got; row index), checked after the loop
       against attn_ref_lse_tol of the case's largest lse_lp error */
    double *lse_w = malloc(sizeof(double) * (nl + 1)), *lse_g = malloc(sizeof(double) * (nl + 1)), max_lse_lp = 0;
    int64_t *lse_at = malloc(sizeof(int64_t) * (nl + 1)), n_lse = 0;
    double max_err = 0, max_lp = 0;
    int worst_b = 0, worst_h = 0, worst_i = 0, worst_d = 0;
    double worst_got = 0, worst_want = 0;
    for (int b = 0; b < c->B; b++)
        for (int h = 0; h < c->Hq; h++) {
            const int hk_ = h / (c->Hq / c->Hkv);
            /* long cases: a sample of 1 row in 13 (plus the last), to keep the
               float64 reference short */
            const int step = (int64_t)c->Sq * c->Sk > 2000000 ? 13 : 1;
            for (int i = 0; i < c->Sq; i += (i + step < c->Sq || i == c->Sq - 1) ? step : c->Sq - 1 - i) {
                const int64_t qo = attn_ref_off(c, c->Hq, c->Sq, b, h, i);
                double m = -INFINITY;
                float ml = -INFINITY, mf = -INFINITY;
                for (int j = 0; j < c->Sk; j++) {
                    const int64_t ko = attn_ref_off(c, c->Hkv, c->Sk, b, hk_, j);
                    double dot = 0;
                    float dotf = 0;
                    for (int d = 0; d < D; d++) {
                        dot += xq[qo + d] * xk[ko + d];
                        dotf += (float)xq[qo + d] * (float)xk[ko + d];
                    }
                    const double mk = attn_ref_mask_at(c, hm, b, h, i, j);
                    const int hidden = c->causal && j > i + c->Sk - c->Sq;
                    s[j] = hidden ? -INFINITY : dot * scale + mk;
                    sl[j] = hidden ? -INFINITY : lowp(dt, dot) * (float)scale + (float)mk;
                    sf[j] = hidden ? -INFINITY : dotf * (float)scale + (float)mk;
                    if (s[j] > m)
                        m = s[j];
                    if (sl[j] > ml)
                        ml = sl[j];
                    if (sf[j] > mf)
                        mf = sf[j];
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
                for (int d = 0; d < D; d++) {
                    ref[d] = 0;
                    acc[d] = 0;
                }
                for (int j = 0; j < c->Sk; j++) {
                    const int64_t vo = attn_ref_off(c, c->Hkv, c->Sk, b, hk_, j);
                    const float pl = ll > 0 ? lowp(dt, sl[j] / ll) : 0.f;
                    for (int d = 0; d < D; d++) {
                        const double vv = xv[vo + d];
                        ref[d] += s[j] * vv;
                        acc[d] += pl * (float)vv;
                    }
                }
                for (int d = 0; d < D; d++) {
                    const double want = l > 0 ? ref[d] / l : 0.0;
                    const double lp = kt_round(dt, acc[d]);
                    const double got = kt_get(ho, dt, qo + d);
                    cr_assert(!isnan(got), "%s [%d,%d,%d,%d]: NaN (seed %llu)", kg_dtype_name(dt), b, h, i, d,
                              (unsigned long long)kt_seed());
                    /* a row that sees no key: exactly 0 (kg_attention.h; the
                       kernels' 1 / sum is 0 for sum 0, times an accumulator
                       of 0 x v terms) */
                    if (l == 0)
                        cr_assert(got == 0.0,
                                  "%s %s: out[%d,%d,%d,%d] of a row with no visible key = %.9g, want 0 (seed %llu)",
                                  path_name, kg_dtype_name(dt), b, h, i, d, got, (unsigned long long)kt_seed());
                    if (fabs(lp - want) > max_lp)
                        max_lp = fabs(lp - want);
                    if (fabs(got - want) > max_err) {
                        max_err = fabs(got - want);
                        worst_b = b, worst_h = h, worst_i = i, worst_d = d;
                        worst_got = got, worst_want = want;
                    }
                }
                const double lse_want = l > 0 ? m + log(l) : -INFINITY;
                const int64_t li = ((int64_t)b * c->Hq + h) * c->Sq + i;
                if (l > 0 && lf > 0 && fabs((double)(mf + logf(lf)) - lse_want) > max_lse_lp)
                    max_lse_lp = fabs((double)(mf + logf(lf)) - lse_want);
                lse_w[n_lse] = lse_want, lse_g[n_lse] = hl[li], lse_at[n_lse++] = li;
            }
        }
    for (int64_t e = 0; e < n_lse; e++) {
        const int64_t li = lse_at[e];
        const int b = (int)(li / ((int64_t)c->Hq * c->Sq)), h = (int)(li / c->Sq % c->Hq), i = (int)(li % c->Sq);
        /* a row with no visible key: exactly -inf (kg_attention.h) */
        const int ok = lse_w[e] == -INFINITY
                           ? lse_g[e] == -INFINITY
                           : !isnan(lse_g[e]) && fabs(lse_g[e] - lse_w[e]) <= attn_ref_lse_tol(max_lse_lp, lse_w[e]);
        cr_assert(ok,
                  "%s %s D=%d Sq=%d Sk=%d causal=%d mask=%d lse[%d,%d,%d] = %.9g, want %.9g (tolerance %.3g: 2 x %.3g "
                  "from the f32 reference + the f32 floor) (seed %llu)",
                  path_name, kg_dtype_name(dt), D, c->Sq, c->Sk, c->causal, c->mask, b, h, i, lse_g[e], lse_w[e],
                  lse_w[e] == -INFINITY ? 0.0 : attn_ref_lse_tol(max_lse_lp, lse_w[e]), max_lse_lp,
                  (unsigned long long)kt_seed());
    }
    double rtol, atol;
    kt_tolerance(dt, &rtol, &atol);
    const double tol = 2 * max_lp + atol;
    cr_assert(max_err <= tol,
              "%s %s B=%d Hq=%d Hkv=%d Sq=%d Sk=%d D=%d causal=%d mask=%d bshd=%d: max error %.3g at [%d,%d,%d,%d] "
              "(got %.6g, want %.6g) > %.3g = 2 x %.3g (low-precision reference) + %.0e (seed %llu)",
              path_name, kg_dtype_name(dt), c->B, c->Hq, c->Hkv, c->Sq, c->Sk, D, c->causal, c->mask, c->bshd, max_err,
              worst_b, worst_h, worst_i, worst_d, worst_got, worst_want, tol, max_lp, atol,
              (unsigned long long)kt_seed());
    free(xq);
    free(xk);
    free(xv);
    free(s);
    free(ref);
    free(sl);
    free(sf);
    free(lse_w);
    free(lse_g);
    free(lse_at);
    free(acc);
    free(hq);
    free(hk);
    free(hv);
    free(ho);
    free(hm);
    free(hl);
    kg_free(ctx, dq);
    kg_free(ctx, dk);
    kg_free(ctx, dv);
    kg_free(ctx, dout);
    kg_free(ctx, dl);
    kg_free(ctx, dm);
}

/* Every case on the variant the runtime picks, then on every other variant
   generated for its dtype, head dim and kind that this device can run
   (forced), so that all of them are checked whatever the shape. */
static void run_case(const acase *c)
{
    int slot = -1;
    for (int i = 0; i < KG_ATTN_DIM_COUNT; i++)
        if (kg_attn_dims[i] == c->D)
            slot = i;
    cr_assert_geq(slot, 0);
    const kg_attn_kind kind = c->mask ? KG_ATTN_MASK : c->causal ? KG_ATTN_CAUSAL : KG_ATTN_NONE;
    int major = 0, minor = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, &major, &minor, NULL));
    kg_test_force_attn_variant(ctx, -1);
    run_case_once(c);
    const int chosen = kg_test_last_attn_variant(ctx);
    for (int v = 0; v < KG_ATTN_V_COUNT; v++) {
        if (v == chosen || kg_attn_table[v][c->dt][slot][kind].threads == 0 ||
            (kg_attn_variant_sm90a[v] && !(major == 9 && minor == 0)))
            continue;
        kg_test_force_attn_variant(ctx, v);
        run_case_once(c);
        cr_assert_eq(kg_test_last_attn_variant(ctx), v, "forcing the %s variant did not take",
                     kg_attn_variant_names[v]);
    }
    kg_test_force_attn_variant(ctx, -1);
}

static const kg_dtype DTS[3] = {KG_F32, KG_F16, KG_BF16};
static const int DIMS[5] = {32, 64, 96, 128, 256};

/* Short queries (the decode variants, also forced on every case above):
   Sq 1..16 against Sk from 1 to beyond 2^15, GQA and MQA, causal, masks with
   empty rows, [B,S,H,D] layouts, forced split counts that do not divide the
   keys. */
static void run_split_case(const acase *c, int splits)
{
    kg_test_force_attn_splits(ctx, splits);
    run_case(c);
    kg_test_force_attn_splits(ctx, 0);
}

Test(attention, decode_short_queries_every_head_dim)
{
    for (int i = 1; i < 3; i++)
        for (int j = 0; j < 5; j++) {
            if (!kt_take(3)) /* sanitizer mode (kg_test.h): a seeded sample */
                continue;
            acase a = {DTS[i], 2, 8, 2, 1, 1000, DIMS[j], 0, MASK_NONE, 0, 0, 0.f};
            run_split_case(&a, 0);
            run_split_case(&a, 3);
            acase b = {DTS[i], 1, 8, 1, 4, 777, DIMS[j], 1, MASK_NONE, 0, 1, 0.f};
            run_split_case(&b, 5);
            acase m = {DTS[i], 2, 6, 2, 3, 300, DIMS[j], j % 2, MASK_RANDOM, 4, 0, 0.f};
            run_split_case(&m, 2);
        }
}

/* The decode launch's one-block-per-multiprocessor padding of its shared
   memory (kg_test_attn_dec_spread) forced off and on, on grids below and
   above one block per multiprocessor, every decode variant and head dim:
   keys ending inside a tile, causal Sq 4, masks, [B,S,H,D], forced splits. */
Test(attention, decode_spread_padding_off_and_on)
{
    const int vs[3] = {KG_ATTN_V_DECODE, KG_ATTN_V_DECODE2, KG_ATTN_V_DECODE4};
    int major = 0, minor = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, &major, &minor, NULL));
    const int sm90 = major == 9 && minor == 0; /* the padding's devices */
    for (int j = 0; j < 5; j++) {
        const kg_dtype dt = j % 2 ? KG_F16 : KG_BF16;
        acase few = {dt, 2, 8, 2, 1, 3000 + 17 * j, DIMS[j], 0, MASK_NONE, 0, 0, 0.f};
        acase sq4 = {dt, 1, 16, 2, 4, 1500 + 3 * j, DIMS[j], 1, MASK_NONE, 0, 0, 0.f};
        acase many = {dt, 40, 8, 4, 1, 300, DIMS[j], 0, MASK_NONE, 0, 0, 0.f};
        acase msk = {dt, 2, 6, 2, 3, 301, DIMS[j], j % 2, MASK_RANDOM, 4, 0, 0.f};
        acase bshd = {dt, 1, 8, 1, 4, 777, DIMS[j], 1, MASK_NONE, 0, 1, 0.f};
        cr_assert_eq(kg_attn_dims[j], DIMS[j]); /* DIMS is kg_attn_dims' order */
        for (int on = 0; on < 2; on++) {
            if (!kt_take(2)) /* sanitizer mode (kg_test.h): a seeded sample */
                continue;
            kg_test_attn_dec_spread(on ? 1 : -1);
            run_case_once(&few);
            cr_assert_eq(kg_test_last_attn_variant(ctx), KG_ATTN_V_DECODE);
            /* forced on, it pads where two blocks would fit in the 228 KB */
            const int two = (kg_attn_table[KG_ATTN_V_DECODE][dt][j][KG_ATTN_NONE].smem + 1024) * 2 <= (228 << 10);
            cr_assert_eq(kg_test_last_attn_dec_spread(), sm90 && on && two, "D %d spread %d", DIMS[j], on);
            run_case_once(&many);
            for (int v = 0; v < 3; v++) {
                if (kg_attn_table[vs[v]][dt][j][KG_ATTN_CAUSAL].threads == 0)
                    continue;
                kg_test_force_attn_variant(ctx, vs[v]);
                run_case_once(&sq4);
                kg_test_force_attn_splits(ctx, 3);
                run_case_once(&sq4);
                run_case_once(&msk);
                run_case_once(&bshd);
                kg_test_force_attn_splits(ctx, 0);
            }
            kg_test_force_attn_variant(ctx, -1);
        }
    }
    kg_test_attn_dec_spread(0);
}

/* Sq 1..16 against Sk 1..33000 (54 cases), in four tests (query lengths
   1-2, 3-5, 8, 16), so that a GPU run can take them in parallel processes */
static void decode_lengths(int a0, int count)
{
    const int sqs[] = {1, 2, 3, 5, 8, 16};
    const int sks[] = {1, 2, 17, 64, 65, 129, 1023, 4097, 33000};
    const int groups[][2] = {{4, 4}, {8, 2}, {8, 1}, {32, 4}};
    int n = 0;
    for (size_t a = (size_t)a0; a < (size_t)(a0 + count); a++)
        for (size_t b = 0; b < sizeof sks / sizeof sks[0]; b++) {
            const int g = sks[b] > 4097 ? 2 : (int)((a + b) % 4);
            const kg_dtype dt = (a + b) % 2 ? KG_F16 : KG_BF16;
            const int D = sks[b] > 4097 ? 64 : (a % 2 ? 128 : 64);
            const int B = sks[b] > 4097 ? 1 : 2;
            acase c = {dt,        B, groups[g][0], groups[g][1], sqs[a], sks[b], D, (int)(b % 2),
                       MASK_NONE, 0, (int)(a % 2), 0.f};
            if (kt_take(6)) /* sanitizer mode (kg_test.h): a seeded sample */
                run_split_case(&c, b % 3 == 0 ? 7 : 0);
            n++;
        }
    cr_assert_eq(n, 9 * count);
}
Test(attention, decode_query_and_key_lengths) { decode_lengths(0, 2); }
Test(attention, decode_query_and_key_lengths_sq3_5) { decode_lengths(2, 2); }
Test(attention, decode_query_and_key_lengths_sq8) { decode_lengths(4, 1); }
Test(attention, decode_query_and_key_lengths_sq16) { decode_lengths(5, 1); }

Test(attention, decode_fully_masked_rows_and_causal_overhang)
{
    for (int i = 1; i < 3; i++) {
        acase m = {DTS[i], 1, 4, 1, 7, 500, 128, 0, MASK_EMPTY_ROWS, 2, 0, 0.f};
        run_split_case(&m, 3);
        acase mc = {DTS[i], 1, 4, 2, 9, 300, 64, 1, MASK_EMPTY_ROWS, 2, 1, 0.f};
        run_split_case(&mc, 0);
        /* Sq > Sk causal: the first Sq - Sk queries see no key */
        acase c = {DTS[i], 2, 8, 2, 16, 5, 96, 1, MASK_NONE, 0, 0, 0.f};
        run_split_case(&c, 2);
        acase z = {DTS[i], 1, 8, 2, 3, 0, 256, 0, MASK_NONE, 0, 0, 0.f};
        run_split_case(&z, 0);
    }
}

/* Merges of many splits (the merge's rounds of 8 loads, partly filled,
   and its lanes' tree, also with every forced lane count) with tiles only
   partly filled by valid rows: 4 of 16 (group 4), MQA's 32 of 32, 40 of 64;
   and the trace hook's stamps of such a call. */
Test(attention, decode_merges_many_splits)
{
    /* each merge: fused in the last block (1), the combine kernel (2) */
    for (int mode = 1; mode <= 2; mode++) {
        kg_test_force_attn_combine(ctx, mode);
        acase g4 = {KG_BF16, 1, 8, 2, 1, 5000, 128, 0, MASK_NONE, 0, 0, 0.f};
        run_split_case(&g4, 37);
        cr_assert_eq(kg_test_last_attn_combine(ctx), mode);
        run_split_case(&g4, 0);
        acase mqa = {KG_F16, 2, 32, 1, 1, 3000, 64, 0, MASK_NONE, 0, 1, 0.f};
        if (kt_take(3)) { /* sanitizer mode (kg_test.h): a seeded sample */
            run_split_case(&mqa, 20);
            run_split_case(&mqa, 0);
        }
        acase g40 = {KG_BF16, 1, 40, 1, 1, 4100, 96, 1, MASK_NONE, 0, 0, 0.f};
        if (kt_take(3))
            run_split_case(&g40, 33);
        acase m = {KG_BF16, 1, 16, 4, 2, 2500, 32, 0, MASK_RANDOM, 4, 0, 0.f};
        if (kt_take(3))
            run_split_case(&m, 17);
        acase e = {KG_F16, 1, 4, 1, 7, 900, 256, 0, MASK_EMPTY_ROWS, 2, 0, 0.f};
        if (kt_take(3))
            run_split_case(&e, 6);
    }
    /* the combine kernel with each forced lane count (1 split a lane up to
       one round of 8: lanes without a split take part in the tree), on the
       decode variant the runtime picks */
    for (int lanes = 1; lanes <= 32; lanes *= 2) {
        kg_test_attn_dec_lanes(lanes);
        acase g4 = {KG_BF16, 1, 8, 2, 1, 5000, 128, 0, MASK_NONE, 0, 0, 0.f};
        kg_test_force_attn_splits(ctx, 37);
        run_case_once(&g4);
        cr_assert_eq(kg_test_last_attn_dec_lanes(), lanes);
        acase mqa = {KG_F16, 2, 32, 1, 1, 3000, 64, 0, MASK_NONE, 0, 1, 0.f};
        kg_test_force_attn_splits(ctx, 20);
        if (kt_take(3))
            run_case_once(&mqa);
        kg_test_force_attn_splits(ctx, 0);
    }
    kg_test_attn_dec_lanes(0);
    kg_test_force_attn_combine(ctx, 0);
    /* without programmatic dependent launch */
    kg_test_attn_pdl(ctx, 0);
    acase np = {KG_BF16, 2, 32, 1, 1, 3000, 128, 0, MASK_NONE, 0, 0, 0.f};
    if (kt_take(2))
        run_split_case(&np, 24);
    kg_test_attn_pdl(ctx, 1);

    /* trace: B 2 x Hkv 2 row tiles of 16 rows (group 4 x Sq 2), 8 splits of 512 keys, fused merge */
    const int B = 2, Hq = 8, Hkv = 2, Sq = 2, Sk = 4000, D = 64;
    const int64_t nq = (int64_t)B * Hq * Sq * D, nk = (int64_t)B * Hkv * Sk * D;
    void *dq = kt_alloc(ctx, nq * 2), *dk = kt_alloc(ctx, nk * 2), *dv = kt_alloc(ctx, nk * 2),
         *dout = kt_alloc(ctx, nq * 2), *dt = kt_alloc(ctx, 4 * 64 * 8);
    KT_OK(ctx, kg_memset(ctx, dq, 0, nq * 2));
    KT_OK(ctx, kg_memset(ctx, dk, 0, nk * 2));
    KT_OK(ctx, kg_memset(ctx, dv, 0, nk * 2));
    KT_OK(ctx, kg_memset(ctx, dt, 0, 4 * 64 * 8));
    kg_tensor tq = kg_tensor_contiguous(dq, KG_BF16, 4, KT_SHAPE(B, Hq, Sq, D)),
              tk = kg_tensor_contiguous(dk, KG_BF16, 4, KT_SHAPE(B, Hkv, Sk, D)),
              tv = kg_tensor_contiguous(dv, KG_BF16, 4, KT_SHAPE(B, Hkv, Sk, D)),
              to = kg_tensor_contiguous(dout, KG_BF16, 4, KT_SHAPE(B, Hq, Sq, D));
    kg_test_force_attn_splits(ctx, 8);
    kg_test_force_attn_combine(ctx, 1); /* the fused merge: one merging block per row tile */
    kg_test_attn_trace(ctx, dt);
    KT_OK(ctx, kg_attention(ctx, &to, NULL, &tq, &tk, &tv, NULL, NULL));
    kg_test_attn_trace(ctx, NULL);
    kg_test_force_attn_combine(ctx, 0);
    kg_test_force_attn_splits(ctx, 0);
    KT_OK(ctx, kg_sync(ctx));
    cr_assert_eq(kg_test_last_attn_splits(ctx), 8);
    unsigned long long h[4 * 64];
    kt_download(ctx, h, dt, sizeof h);
    int merged = 0;
    for (int i = 0; i < 64; i++) {
        if (i < B * Hkv * 8) {
            cr_assert(h[4 * i] > 0 && h[4 * i] <= h[4 * i + 1] && h[4 * i + 1] <= h[4 * i + 2] && h[4 * i + 3] <= 1,
                      "block %d: stamps %llu %llu %llu, merged %llu", i, h[4 * i], h[4 * i + 1], h[4 * i + 2],
                      h[4 * i + 3]);
            merged += (int)h[4 * i + 3];
        } else
            cr_assert(h[4 * i] == 0, "block %d past the grid wrote its stamps", i);
    }
    cr_assert_eq(merged, B * Hkv, "one merging block per row tile, got %d", merged);
    kg_free(ctx, dq);
    kg_free(ctx, dk);
    kg_free(ctx, dv);
    kg_free(ctx, dout);
    kg_free(ctx, dt);
}

/* The bf16 buffers of a decode test: q [B,Hq,Sq,D], k and v [B,Hkv,Sk,D]
   on the device (k uniform(-2, 2) with q the first nq of the same values, v
   uniform(-1, 1)), out, and host room for one input (h) and two outputs. */
typedef struct {
    int64_t nq, nk;
    uint16_t *h, *o1, *o2;
    void *dq, *dk, *dv, *dout;
    kg_tensor q, k, v, out;
} dec_io;

static void dec_io_open(dec_io *x, int B, int Hq, int Hkv, int Sq, int Sk, int D)
{
    x->nq = (int64_t)B * Hq * Sq * D;
    x->nk = (int64_t)B * Hkv * Sk * D;
    x->h = malloc(x->nk * 2);
    x->o1 = malloc(x->nq * 2);
    x->o2 = malloc(x->nq * 2);
    x->dq = kt_alloc(ctx, x->nq * 2);
    x->dk = kt_alloc(ctx, x->nk * 2);
    x->dv = kt_alloc(ctx, x->nk * 2);
    x->dout = kt_alloc(ctx, x->nq * 2);
    for (int64_t i = 0; i < x->nk; i++)
        x->h[i] = kt_to_bf16(kt_uniform(&rng, -2, 2));
    kt_upload(ctx, x->dq, x->h, x->nq * 2);
    kt_upload(ctx, x->dk, x->h, x->nk * 2);
    for (int64_t i = 0; i < x->nk; i++)
        x->h[i] = kt_to_bf16(kt_uniform(&rng, -1, 1));
    kt_upload(ctx, x->dv, x->h, x->nk * 2);
    x->q = kg_tensor_contiguous(x->dq, KG_BF16, 4, KT_SHAPE(B, Hq, Sq, D));
    x->k = kg_tensor_contiguous(x->dk, KG_BF16, 4, KT_SHAPE(B, Hkv, Sk, D));
    x->v = kg_tensor_contiguous(x->dv, KG_BF16, 4, KT_SHAPE(B, Hkv, Sk, D));
    x->out = kg_tensor_contiguous(x->dout, KG_BF16, 4, KT_SHAPE(B, Hq, Sq, D));
}

/* One call into x->out (poisoned first), synchronized, downloaded to o. */
static void dec_io_run(dec_io *x, const kg_attention_opts *opts, uint16_t *o)
{
    KT_OK(ctx, kg_memset(ctx, x->dout, 0xff, x->nq * 2));
    KT_OK(ctx, kg_attention(ctx, &x->out, NULL, &x->q, &x->k, &x->v, NULL, opts));
    KT_OK(ctx, kg_sync(ctx));
    kt_download(ctx, o, x->dout, x->nq * 2);
}

/* The decode launch without pair (kg_test_attn_dec_pair -1) at `splits`
   splits (forced) into x->o2: it must not take pair, must plan those
   splits, and its bits must equal x->o1's (what the pair launch wrote);
   the hooks are put back (pair to `restore`, splits to the planner's). */
static void dec_pair_bits_without_pair(dec_io *x, const kg_attention_opts *opts, int splits, int restore,
                                       const char *what, size_t i)
{
    kg_test_attn_dec_pair(-1);
    kg_test_force_attn_splits(ctx, splits);
    dec_io_run(x, opts, x->o2);
    cr_assert(kg_test_last_attn_dec_pair() == 0 && kg_test_last_attn_splits(ctx) == splits,
              "%s case %zu: pair %d, %d splits (want 0, %d)", what, i, kg_test_last_attn_dec_pair(),
              kg_test_last_attn_splits(ctx), splits);
    cr_assert(memcmp(x->o1, x->o2, x->nq * 2) == 0,
              "%s case %zu (%d splits): bits differ from the launch without pair's", what, i, splits);
    kg_test_force_attn_splits(ctx, 0);
    kg_test_attn_dec_pair(restore);
}

static void dec_io_close(dec_io *x)
{
    free(x->h);
    free(x->o1);
    free(x->o2);
    kg_free(ctx, x->dq);
    kg_free(ctx, x->dk);
    kg_free(ctx, x->dv);
    kg_free(ctx, x->dout);
}

/* One decode call's trace (kg_test_attn_trace: 4 stamps a block, of a
   buffer of 1024 blocks) on a grid of `blocks` blocks: every block of the
   grid stamped its start before its end and merged at most once, and no
   block past the grid wrote; returns how many blocks merged. */
static int dec_trace_merged(void *dt, int blocks)
{
    unsigned long long tr[4 * 1024];
    kt_download(ctx, tr, dt, sizeof tr);
    int merged = 0;
    for (int i = 0; i < 1024; i++) {
        if (i < blocks) {
            cr_assert(tr[4 * i] > 0 && tr[4 * i] <= tr[4 * i + 2] && tr[4 * i + 3] <= 1,
                      "block %d: stamps %llu %llu, merged %llu", i, tr[4 * i], tr[4 * i + 2], tr[4 * i + 3]);
            merged += (int)tr[4 * i + 3];
        } else
            cr_assert(tr[4 * i] == 0, "block %d past the grid wrote its stamps", i);
    }
    return merged;
}

/* The fused merge (the last block of each row tile to finish merges the
   splits and zeroes the row tile's counter) gives the same bits as the
   combine kernel (both fold the splits in the same order, with the same
   lanes), call after call (the counters are back to zero: the trace shows
   one merging block per row tile each time), with and without programmatic
   dependent launch, at split counts that take 1 to 16 lanes, and in a graph
   replayed twice. */
Test(attention, decode_fused_merge_bits_counters_and_graph)
{
    const int B = 2, Hq = 16, Hkv = 4, Sq = 1, Sk = 6000, D = 128;
    dec_io x;
    dec_io_open(&x, B, Hq, Hkv, Sq, Sk, D);
    const int64_t nq = x.nq;
    uint16_t *o1 = x.o1, *o2 = x.o2;
    void *dout = x.dout, *dt = kt_alloc(ctx, 4 * 1024 * 8);
    kg_tensor tq = x.q, tk = x.k, tv = x.v, to = x.out;
    /* 17 splits asked: chunks of 384 keys, 16 splits (the last 240 keys); 8
       row tiles (one per KV head and batch) x 16 = 128 blocks */
    kg_test_force_attn_splits(ctx, 17);
    kg_test_force_attn_combine(ctx, 2); /* the combine kernel's bits */
    KT_OK(ctx, kg_memset(ctx, dout, 0xff, nq * 2));
    KT_OK(ctx, kg_attention(ctx, &to, NULL, &tq, &tk, &tv, NULL, NULL));
    KT_OK(ctx, kg_sync(ctx));
    cr_assert_eq(kg_test_last_attn_splits(ctx), 16);
    cr_assert_eq(kg_test_last_attn_combine(ctx), 2);
    kt_download(ctx, o1, dout, nq * 2);
    kg_test_force_attn_combine(ctx, 1);
    for (int pdl = 1; pdl >= 0; pdl--) {
        kg_test_attn_pdl(ctx, pdl);
        for (int rep = 0; rep < 3; rep++) {
            KT_OK(ctx, kg_memset(ctx, dt, 0, 4 * 1024 * 8));
            KT_OK(ctx, kg_memset(ctx, dout, 0xff, nq * 2));
            kg_test_attn_trace(ctx, dt);
            KT_OK(ctx, kg_attention(ctx, &to, NULL, &tq, &tk, &tv, NULL, NULL));
            kg_test_attn_trace(ctx, NULL);
            KT_OK(ctx, kg_sync(ctx));
            cr_assert_eq(kg_test_last_attn_combine(ctx), 1);
            const int merged = dec_trace_merged(dt, B * Hkv * 16);
            cr_assert_eq(merged, B * Hkv, "pdl %d, call %d: one merging block per row tile, got %d", pdl, rep, merged);
            kt_download(ctx, o2, dout, nq * 2);
            cr_assert(memcmp(o1, o2, nq * 2) == 0, "pdl %d, call %d: fused merge bits differ from the combine kernel's",
                      pdl, rep);
        }
    }
    kg_test_attn_pdl(ctx, 1);
    /* the same bits at other split counts: 5, 32, 47 and 94 splits (lanes 1,
       4, 8, 16) */
    const int more[4][2] = {{5, 5}, {40, 32}, {80, 47}, {94, 94}};
    for (int f = 0; f < 4; f++) {
        kg_test_force_attn_splits(ctx, more[f][0]);
        for (int mode = 2; mode >= 1; mode--) {
            kg_test_force_attn_combine(ctx, mode);
            KT_OK(ctx, kg_memset(ctx, dout, 0xff, nq * 2));
            KT_OK(ctx, kg_attention(ctx, &to, NULL, &tq, &tk, &tv, NULL, NULL));
            KT_OK(ctx, kg_sync(ctx));
            cr_assert_eq(kg_test_last_attn_splits(ctx), more[f][1]);
            cr_assert_eq(kg_test_last_attn_combine(ctx), mode);
            cr_assert_eq(kg_test_last_attn_dec_lanes(), kg_attn_merge_lanes(more[f][1]));
            kt_download(ctx, mode == 2 ? o1 : o2, dout, nq * 2);
        }
        cr_assert(memcmp(o1, o2, nq * 2) == 0, "%d splits: fused merge bits differ from the combine kernel's",
                  more[f][1]);
    }
    kg_test_force_attn_splits(ctx, 17);
    kg_test_force_attn_combine(ctx, 2);
    KT_OK(ctx, kg_attention(ctx, &to, NULL, &tq, &tk, &tv, NULL, NULL));
    KT_OK(ctx, kg_sync(ctx));
    kt_download(ctx, o1, dout, nq * 2); /* the 16-split bits again, for the graph */
    kg_test_force_attn_combine(ctx, 1);
    /* a graph of two fused-merge calls, replayed twice */
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    KT_OK(ctx, kg_set_stream(ctx, (kg_stream)s));
    KT_OK(ctx, kg_attention(ctx, &to, NULL, &tq, &tk, &tv, NULL, NULL)); /* the stream's scratch, outside capture */
    KT_OK(ctx, kg_sync(ctx));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    KT_OK(ctx, kg_attention(ctx, &to, NULL, &tq, &tk, &tv, NULL, NULL));
    KT_OK(ctx, kg_attention(ctx, &to, NULL, &tq, &tk, &tv, NULL, NULL));
    cr_assert_eq(cudaStreamEndCapture(s, &g), cudaSuccess);
    cr_assert_eq(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
    for (int rep = 0; rep < 2; rep++) {
        KT_OK(ctx, kg_memset(ctx, dout, 0xff, nq * 2));
        cr_assert_eq(cudaGraphLaunch(ge, s), cudaSuccess);
        KT_OK(ctx, kg_sync(ctx));
        kt_download(ctx, o2, dout, nq * 2);
        cr_assert(memcmp(o1, o2, nq * 2) == 0, "graph replay %d: bits differ from a direct call", rep);
    }
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    KT_OK(ctx, kg_set_stream(ctx, NULL));
    cudaStreamDestroy(s);
    kg_test_force_attn_combine(ctx, 0);
    kg_test_force_attn_splits(ctx, 0);
    dec_io_close(&x);
    kg_free(ctx, dt);
}

/* The tail merge (kg_test_force_attn_combine 3: the last K blocks of each
   row tile to write their partials merge it, no combine grid) against the
   float64 reference on the merge cases of decode_merges_many_splits (GQA,
   MQA, causal D 96, masks at D 32, empty rows at D 256 with Sq 7, split
   counts not dividing the keys); the same bits as the combine kernel at
   5-94 splits (1-16 lanes) and on the planner's MQA B 8 split, call after
   call with and without programmatic dependent launch (the counters are
   back to zero: the trace shows K merging blocks a row tile each time), and
   in a graph replayed twice; the runtime's choice (kg_attn_dec_tail_rule)
   on a small call and on MQA B 8. */
Test(attention, decode_tail_merge_bits_reference_and_graph)
{
    kg_test_force_attn_combine(ctx, 3);
    acase g4 = {KG_BF16, 1, 8, 2, 1, 5000, 128, 0, MASK_NONE, 0, 0, 0.f};
    run_split_case(&g4, 37);
    cr_assert_eq(kg_test_last_attn_combine(ctx), 3);
    run_split_case(&g4, 0);
    acase mqa = {KG_F16, 2, 32, 1, 1, 3000, 64, 0, MASK_NONE, 0, 1, 0.f};
    run_split_case(&mqa, 20);
    acase g40 = {KG_BF16, 1, 40, 1, 1, 4100, 96, 1, MASK_NONE, 0, 0, 0.f};
    run_split_case(&g40, 33);
    acase m = {KG_BF16, 1, 16, 4, 2, 2500, 32, 0, MASK_RANDOM, 4, 0, 0.f};
    run_split_case(&m, 17);
    acase e = {KG_F16, 1, 4, 1, 7, 900, 256, 0, MASK_EMPTY_ROWS, 2, 0, 0.f};
    run_split_case(&e, 6);
    cr_assert_eq(kg_test_last_attn_combine(ctx), 3);

    int sms = 0;
    cr_assert_eq(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
    const int B = 2, Hq = 16, Hkv = 4, Sq = 1, Sk = 6000, D = 128;
    dec_io x;
    dec_io_open(&x, B, Hq, Hkv, Sq, Sk, D);
    const int64_t nq = x.nq;
    void *dt = kt_alloc(ctx, 4 * 1024 * 8);
    /* 16 splits of 384 keys; 8 row tiles of 4 valid rows (128 items, 2
       lanes: 2 passes, so 2 mergers a tile) */
    kg_test_force_attn_splits(ctx, 17);
    kg_test_force_attn_combine(ctx, 2);
    dec_io_run(&x, NULL, x.o1);
    cr_assert_eq(kg_test_last_attn_splits(ctx), 16);
    kg_test_force_attn_combine(ctx, 3);
    const int k = kg_attn_dec_tail_mergers(B * Hkv, 16, 4 * (D / 4), kg_attn_merge_lanes(16), sms);
    cr_assert_eq(k, 2);
    for (int pdl = 1; pdl >= 0; pdl--) {
        kg_test_attn_pdl(ctx, pdl);
        for (int rep = 0; rep < 3; rep++) {
            KT_OK(ctx, kg_memset(ctx, dt, 0, 4 * 1024 * 8));
            kg_test_attn_trace(ctx, dt);
            dec_io_run(&x, NULL, x.o2);
            kg_test_attn_trace(ctx, NULL);
            cr_assert_eq(kg_test_last_attn_combine(ctx), 3);
            const int merged = dec_trace_merged(dt, B * Hkv * 16);
            cr_assert_eq(merged, B * Hkv * k, "pdl %d, call %d: %d merging blocks a row tile, got %d in all", pdl,
                         rep, k, merged);
            cr_assert(memcmp(x.o1, x.o2, nq * 2) == 0, "pdl %d, call %d: tail merge bits differ from the combine's",
                      pdl, rep);
        }
    }
    kg_test_attn_pdl(ctx, 1);
    const int more[4][2] = {{5, 5}, {40, 32}, {80, 47}, {94, 94}};
    for (int f = 0; f < 4; f++) {
        kg_test_force_attn_splits(ctx, more[f][0]);
        for (int mode = 2; mode <= 3; mode++) {
            kg_test_force_attn_combine(ctx, mode);
            dec_io_run(&x, NULL, mode == 2 ? x.o1 : x.o2);
            cr_assert_eq(kg_test_last_attn_splits(ctx), more[f][1]);
            cr_assert_eq(kg_test_last_attn_combine(ctx), mode);
        }
        cr_assert(memcmp(x.o1, x.o2, nq * 2) == 0, "%d splits: tail merge bits differ from the combine's",
                  more[f][1]);
    }
    /* a graph of two tail-merge calls, replayed twice, against a direct call */
    kg_test_force_attn_splits(ctx, 17);
    dec_io_run(&x, NULL, x.o1);
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    KT_OK(ctx, kg_set_stream(ctx, (kg_stream)s));
    KT_OK(ctx, kg_attention(ctx, &x.out, NULL, &x.q, &x.k, &x.v, NULL, NULL)); /* the stream's scratch */
    KT_OK(ctx, kg_sync(ctx));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    KT_OK(ctx, kg_attention(ctx, &x.out, NULL, &x.q, &x.k, &x.v, NULL, NULL));
    KT_OK(ctx, kg_attention(ctx, &x.out, NULL, &x.q, &x.k, &x.v, NULL, NULL));
    cr_assert_eq(cudaStreamEndCapture(s, &g), cudaSuccess);
    cr_assert_eq(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
    for (int rep = 0; rep < 2; rep++) {
        KT_OK(ctx, kg_memset(ctx, x.dout, 0xff, nq * 2));
        cr_assert_eq(cudaGraphLaunch(ge, s), cudaSuccess);
        KT_OK(ctx, kg_sync(ctx));
        kt_download(ctx, x.o2, x.dout, nq * 2);
        cr_assert(memcmp(x.o1, x.o2, nq * 2) == 0, "graph replay %d: bits differ from a direct call", rep);
    }
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    KT_OK(ctx, kg_set_stream(ctx, NULL));
    cudaStreamDestroy(s);
    kg_test_force_attn_splits(ctx, 0);
    dec_io_close(&x);
    kg_free(ctx, dt);

    /* the runtime's choice: the tail merge on a one-wave grid of at most
       KG_ATTN_DEC_TAIL_BYTES of K and V and KG_ATTN_DEC_TAIL_SPLITS splits (f16 B 2 Hq 8 Hkv 1 Sk 3652 D 128,
       3.7 MB), with the combine's bits and against the float64 reference;
       the combine kernel past the bytes (MQA B 8 below) */
    kg_test_force_attn_combine(ctx, 0);
    acase sm = {KG_F16, 2, 8, 1, 1, 3652, 128, 0, MASK_NONE, 0, 0, 0.f};
    run_split_case(&sm, 0);
    cr_assert(kg_test_last_attn_splits(ctx) > 1);
    cr_assert_eq(kg_test_last_attn_combine(ctx), 3);
    dec_io z;
    dec_io_open(&z, 2, 8, 1, 1, 3652, 128);
    dec_io_run(&z, NULL, z.o2);
    cr_assert_eq(kg_test_last_attn_combine(ctx), 3);
    kg_test_force_attn_combine(ctx, 2);
    dec_io_run(&z, NULL, z.o1);
    cr_assert(memcmp(z.o1, z.o2, z.nq * 2) == 0, "runtime's tail merge: bits differ from the combine's");
    dec_io_close(&z);

    /* MQA B 8 Sk 8192 D 128 on the planner's split: the combine's bits */
    dec_io y;
    dec_io_open(&y, 8, 32, 1, 1, 8192, 128);
    kg_test_force_attn_combine(ctx, 2);
    dec_io_run(&y, NULL, y.o1);
    const int sp = kg_test_last_attn_splits(ctx);
    cr_assert(sp > 1, "MQA B 8: %d splits", sp);
    kg_test_force_attn_combine(ctx, 3);
    dec_io_run(&y, NULL, y.o2);
    cr_assert_eq(kg_test_last_attn_combine(ctx), 3);
    cr_assert_eq(kg_test_last_attn_splits(ctx), sp);
    cr_assert(memcmp(y.o1, y.o2, y.nq * 2) == 0, "MQA B 8, %d splits: tail merge bits differ from the combine's", sp);
    kg_test_force_attn_combine(ctx, 0);
    dec_io_run(&y, NULL, y.o2);
    const int tiles = kg_test_last_attn_variant(ctx) == KG_ATTN_V_DECODE ? 16 : 8; /* 16- or 32-row tiles */
    const int tail = kg_attn_dec_tail_rule((int64_t)tiles * sp, sms, (int64_t)8 * 8192 * 128 * 4, sp, 32 * 8 / tiles);
    cr_assert_eq(kg_test_last_attn_combine(ctx), tail ? 3 : 2, "MQA B 8 (33.5 MB of K and V, %d splits): merge %d", sp,
                 kg_test_last_attn_combine(ctx));
    cr_assert(memcmp(y.o1, y.o2, y.nq * 2) == 0, "MQA B 8, %d splits, the runtime's merge: bits differ", sp);
    dec_io_close(&y);
}

/* The pipeline's stages on bulk tensor copies (kg_test_attn_dec_stages,
   head dims from 64 on compute capability 9.0) and the PDL trigger at the
   start or after the wait change no bits: every head dim from 64, one split and three,
   plain and causal (Sq 3), stages 2 to 8 (taken where the shared memory
   fits: 6 at D 64-128, 3 at D 256), each against the kernel's own; one
   case per head dim against the float64 reference at the most stages; the
   runtime's 6 stages on a one-wave grid of 32-row tiles (MQA), the same
   bits as 3. */
Test(attention, decode_stages_and_late_trigger_keep_the_bits)
{
    int major = 0, minor = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, &major, &minor, NULL));
    const int sm90 = major == 9 && minor == 0;
    const int B = 2, Hq = 8, Hkv = 2, Sk = 5000;
    for (int j = 1; j < 5; j++) {
        const int D = DIMS[j], most = D == 256 ? 3 : 6;
        for (int causal = 0; causal < 2; causal++) {
            const int Sq = causal ? 3 : 1;
            dec_io x;
            dec_io_open(&x, B, Hq, Hkv, Sq, Sk, D);
            const int64_t nq = x.nq;
            uint16_t *o1 = x.o1, *o2 = x.o2;
            kg_attention_opts opts = {0.f, causal};
            for (int sp = 1; sp <= 3; sp += 2) {
                kg_test_force_attn_splits(ctx, sp);
                for (int st = 0; st <= 9; st++) { /* 0: the kernel's own; 9: the trigger at the start */
                    if (st == 1)
                        continue;
                    kg_test_attn_dec_stages(st == 0 ? -1 : st < 9 ? st : 0);
                    kg_test_attn_dec_late(st == 9 ? -1 : 0);
                    dec_io_run(&x, &opts, st ? o2 : o1);
                    cr_assert_eq(kg_test_last_attn_splits(ctx), sp);
                    const int want = sm90 && kg_test_last_attn_tma() && st < 9 && st <= most ? st : 0;
                    cr_assert_eq(kg_test_last_attn_dec_late(), st != 9);
                    cr_assert_eq(kg_test_last_attn_dec_stages(), want, "D %d, %d stages asked: %d taken", D, st,
                                 kg_test_last_attn_dec_stages());
                    if (st)
                        cr_assert(memcmp(o1, o2, nq * 2) == 0, "D %d causal %d, %d splits, %s %d: bits differ", D,
                                  causal, sp, st < 9 ? "stages" : "trigger at the start", st);
                }
            }
            kg_test_attn_dec_late(0);
            kg_test_attn_dec_stages(most);
            kg_test_force_attn_splits(ctx, 3);
            acase c = {KG_BF16, 2, 8, 2, Sq, 3001, D, causal, MASK_NONE, 0, causal, 0.f};
            run_case_once(&c);
            kg_test_attn_dec_stages(0);
            kg_test_force_attn_splits(ctx, 0);
            dec_io_close(&x);
        }
    }
    dec_io x; /* MQA: one 32-row tile per batch (B 8: the tile rule keeps 32 rows, 104 blocks) */
    dec_io_open(&x, 8, 32, 1, 1, 7000, 128);
    for (int i = 0; i < 2; i++) {
        kg_test_attn_dec_stages(i ? 0 : -1);
        dec_io_run(&x, NULL, i ? x.o2 : x.o1);
        cr_assert_eq(kg_test_last_attn_variant(ctx), KG_ATTN_V_DECODE2);
        cr_assert_eq(kg_test_last_attn_dec_stages(), i && sm90 && kg_test_last_attn_tma() ? 6 : 0);
    }
    cr_assert(memcmp(x.o1, x.o2, x.nq * 2) == 0, "MQA: the runtime's stages changed the bits");
    kg_test_attn_dec_stages(0);
    dec_io_close(&x);
}

/* The decode call's host path (kg_test_attn_dec_host): k and v's tensor
   maps only, and the kernel's shared memory limit raised only above the
   most raised before on the device. Calls alternate with the old path
   (q's map too, the limit set at every call, the runtime's launches),
   with the driver's launches (cuLaunchKernelEx, the runtime's default) and
   the runtime's every other time, and must give its bits, at
   every generated head dim, one split and three, while the launches ask
   for less and then more shared memory than before (2 stages, the
   kernel's own, the most: a limit left too low fails the launch), then
   with the one-block-per-multiprocessor padding off and on; the runtime's
   path against the float64 reference. */
Test(attention, decode_host_path_keeps_the_bits)
{
    for (int j = 0; j < KG_ATTN_DIM_COUNT; j++) {
        const int D = kg_attn_dims[j], most = D == 256 ? 3 : 6;
        dec_io x;
        dec_io_open(&x, 2, 8, 2, 1, 4000 + 33 * j, D);
        for (int sp = 1; sp <= 3; sp += 2) {
            kg_test_force_attn_splits(ctx, sp);
            const int stages[6] = {2, -1, most, 2, 0, most};
            for (int i = 0; i < 12; i++) {
                const int old = i % 2 == 0;
                kg_test_attn_dec_host(old ? -1 : i % 4 == 1 ? 0 : 1);
                kg_test_attn_dec_stages(stages[i / 2]);
                kg_test_attn_dec_spread(i >= 8 ? (i >= 10 ? 1 : -1) : 0);
                dec_io_run(&x, NULL, old ? x.o1 : x.o2);
                cr_assert_eq(kg_test_last_attn_splits(ctx), sp);
                if (!old)
                    cr_assert(memcmp(x.o1, x.o2, x.nq * 2) == 0, "D %d, %d splits, call %d: bits differ", D, sp, i);
            }
        }
        kg_test_attn_dec_host(0);
        kg_test_attn_dec_stages(0);
        kg_test_attn_dec_spread(0);
        kg_test_force_attn_splits(ctx, 0);
        dec_io_close(&x);
        acase c = {j % 2 ? KG_F16 : KG_BF16, 2, 12, 3, 2, 2900 + 7 * j, D, 1, MASK_NONE, 0, j % 2, 0.f};
        run_case_once(&c);
    }
}

/* The combine kernel's trigger before its wait (kg_test_attn_dec_kflags
   2; the runtime's where kg_attn_dec_comb_early says so): the bits of
   the trigger after it, at every generated head dim, causal Sq 3 and Sq 1,
   one split and five; then two calls of the same shape on other data
   queued back to back ten times without a sync (the second's decode grid
   writes the partials the first's combine reads: it must wait), each
   output the bits of its own call alone; then 5, 2 and 7 splits asked in
   turn, each the bits of the same split with the trigger after the wait;
   the runtime's choice where the rule takes it (20 blocks) and where not
   (MQA B 8: 128 blocks, on an H200); and the runtime's path against the
   float64 reference. */
Test(attention, decode_kernel_order_keeps_the_bits)
{
    kg_test_force_attn_combine(ctx, 2); /* the combine kernel's trigger (not the tail merge's rule) */
    for (int j = 0; j < KG_ATTN_DIM_COUNT; j++) {
        const int D = kg_attn_dims[j];
        for (int causal = 0; causal < 2; causal++) {
            dec_io x, y;
            dec_io_open(&x, 2, 8, 2, causal ? 3 : 1, 3000 + 61 * j, D);
            dec_io_open(&y, 2, 8, 2, causal ? 3 : 1, 3000 + 61 * j, D);
            kg_attention_opts opts = {0.f, causal};
            for (int sp = 1; sp <= 5; sp += 4) {
                kg_test_force_attn_splits(ctx, sp);
                kg_test_attn_dec_kflags(-1);
                dec_io_run(&x, &opts, x.o1);
                cr_assert_eq(kg_test_last_attn_dec_kflags(), 0);
                kg_test_attn_dec_kflags(2);
                dec_io_run(&x, &opts, x.o2);
                cr_assert_eq(kg_test_last_attn_splits(ctx), sp);
                cr_assert_eq(kg_test_last_attn_dec_kflags(), 2);
                cr_assert(memcmp(x.o1, x.o2, x.nq * 2) == 0, "D %d causal %d, %d splits: bits differ", D, causal, sp);
                /* the runtime's choice: 2 x 2 row tiles x 5 splits, 20 blocks */
                kg_test_attn_dec_kflags(0);
                dec_io_run(&x, &opts, x.o2);
                int sms = 0;
                KT_OK(ctx, kg_device_info(ctx, NULL, 0, NULL, NULL, &sms));
                cr_assert_eq(kg_test_last_attn_dec_kflags(), sp > 1 && kg_attn_dec_comb_early(4 * sp, sms) ? 2 : 0);
                cr_assert(memcmp(x.o1, x.o2, x.nq * 2) == 0, "D %d causal %d, %d splits, runtime's: bits differ", D,
                          causal, sp);
                kg_test_attn_dec_kflags(-1);
                dec_io_run(&y, &opts, y.o1);
                kg_test_attn_dec_kflags(2);
                KT_OK(ctx, kg_memset(ctx, x.dout, 0xff, x.nq * 2));
                KT_OK(ctx, kg_memset(ctx, y.dout, 0xff, y.nq * 2));
                for (int rep = 0; rep < 10; rep++) {
                    KT_OK(ctx, kg_attention(ctx, &x.out, NULL, &x.q, &x.k, &x.v, NULL, &opts));
                    KT_OK(ctx, kg_attention(ctx, &y.out, NULL, &y.q, &y.k, &y.v, NULL, &opts));
                }
                KT_OK(ctx, kg_sync(ctx));
                kt_download(ctx, x.o2, x.dout, x.nq * 2);
                kt_download(ctx, y.o2, y.dout, y.nq * 2);
                cr_assert(memcmp(x.o1, x.o2, x.nq * 2) == 0, "D %d causal %d, %d splits: queued calls, first differs", D,
                          causal, sp);
                cr_assert(memcmp(y.o1, y.o2, y.nq * 2) == 0, "D %d causal %d, %d splits: queued calls, second differs",
                          D, causal, sp);
            }
            const int sps[3] = {5, 2, 7};
            for (int i = 0; i < 3; i++) {
                kg_test_force_attn_splits(ctx, sps[i]);
                kg_test_attn_dec_kflags(-1);
                dec_io_run(&x, &opts, x.o1);
                const int got = kg_test_last_attn_splits(ctx); /* (whole key tiles a split: maybe fewer) */
                cr_assert(got > 1 && got <= sps[i], "%d splits asked, %d taken", sps[i], got);
                kg_test_attn_dec_kflags(2);
                dec_io_run(&x, &opts, x.o2);
                cr_assert_eq(kg_test_last_attn_splits(ctx), got);
                cr_assert(memcmp(x.o1, x.o2, x.nq * 2) == 0, "D %d causal %d, %d splits in turn: bits differ", D,
                          causal, got);
            }
            kg_test_attn_dec_kflags(0);
            kg_test_force_attn_splits(ctx, 0);
            dec_io_close(&x);
            dec_io_close(&y);
        }
        acase c = {j % 2 ? KG_F16 : KG_BF16, 2, 12, 3, 2, 2900 + 7 * j, D, 1, MASK_NONE, 0, j % 2, 0.f};
        run_case_once(&c);
    }
    /* MQA B 8 Sk 8192 D 128: one 32-row tile a sequence, 16 splits on an
       H200 (128 blocks): the trigger stays after the wait there */
    int sms = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, NULL, NULL, &sms));
    dec_io x;
    dec_io_open(&x, 8, 32, 1, 1, 8192, 128);
    kg_test_attn_dec_kflags(-1);
    dec_io_run(&x, NULL, x.o1);
    kg_test_attn_dec_kflags(0);
    dec_io_run(&x, NULL, x.o2);
    const int sp = kg_test_last_attn_splits(ctx), R = kg_test_last_attn_variant(ctx) == KG_ATTN_V_DECODE ? 16 : 32;
    const int want = sp > 1 && kg_attn_dec_comb_early(8 * (32 / R) * sp, sms) ? 2 : 0;
    cr_assert_eq(kg_test_last_attn_dec_kflags(), want, "MQA B 8: %d splits of %d-row tiles", sp, R);
    cr_assert(sms != 132 || want == 0, "MQA B 8 on an H200: the early trigger taken");
    cr_assert(memcmp(x.o1, x.o2, x.nq * 2) == 0, "MQA B 8: bits differ");
    dec_io_close(&x);
    kg_test_force_attn_combine(ctx, 0);
}

/* The decode tile rule (kg_attn_dec_tile_rows) on groups of 17-32 packed
   rows: the runtime takes the tile the rule names for this device; two
   16-row tiles give the same bits as one 32-row tile at the same split
   (each row's products, softmax and merge are the same sums in the same
   order), forced both ways and through the rule's hook (the rule before
   session 20), with 6 pipeline stages where one wave of blocks is spread
   one a multiprocessor; and the runtime's choice, at its own split, is within the
   tolerance of the float64 reference (bf16 and f16, causal Sq 2, 24 rows
   leaving the second 16-row tile 8 valid rows). */
Test(attention, decode_tile_rule_keeps_the_bits)
{
    int sms = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, NULL, NULL, &sms));
    /* B, Hq, Hkv, Sq, Sk, D */
    const int cs[4][6] = {{1, 32, 1, 1, 32768, 128}, {2, 24, 1, 1, 9000, 64}, {2, 16, 1, 2, 5001, 128},
                          {8, 32, 1, 1, 8192, 64}};
    int n16 = 0;
    for (int i = 0; i < 4; i++) {
        const int B = cs[i][0], Hq = cs[i][1], Hkv = cs[i][2], Sq = cs[i][3], Sk = cs[i][4], D = cs[i][5];
        int slot = -1;
        for (int j = 0; j < KG_ATTN_DIM_COUNT; j++)
            if (kg_attn_dims[j] == D)
                slot = j;
        cr_assert_geq(slot, 0);
        const int want = kg_attn_dec_tile_rows((int64_t)Hq / Hkv * Sq, (int64_t)B * Hkv, Sk, kg_attn_dec_bn[slot], sms);
        dec_io x;
        dec_io_open(&x, B, Hq, Hkv, Sq, Sk, D);
        kg_attention_opts opts = {0.f, Sq > 1};
        dec_io_run(&x, &opts, x.o1);
        cr_assert_eq(kg_test_last_attn_variant(ctx), want == 16 ? KG_ATTN_V_DECODE : KG_ATTN_V_DECODE2,
                     "case %d: the rule names %d rows, the runtime took %s", i, want,
                     kg_attn_variant_names[kg_test_last_attn_variant(ctx)]);
        n16 += want == 16;
        const int planned = kg_test_last_attn_splits(ctx);
        /* one wave of blocks spread one a multiprocessor: 6 stages on bulk
           tensor copies, 16-row tiles of these groups as 32-row ones */
        int major = 0, minor = 0;
        KT_OK(ctx, kg_device_info(ctx, NULL, 0, &major, &minor, NULL));
        const int six = major == 9 && minor == 0 && kg_test_last_attn_tma() && kg_test_last_attn_dec_spread();
        cr_assert_eq(kg_test_last_attn_dec_stages(), six ? 6 : 0, "case %d: %d stages", i,
                     kg_test_last_attn_dec_stages());
        /* forced 32-row tile, forced 16-row tiles, the old rule: the same
           split each time, the same bits */
        for (int f = 0; f < 3; f++) {
            kg_test_force_attn_splits(ctx, planned);
            kg_test_force_attn_variant(ctx, f == 0 ? KG_ATTN_V_DECODE2 : f == 1 ? KG_ATTN_V_DECODE : -1);
            kg_test_attn_dec_tile(f == 2 ? -1 : 0);
            dec_io_run(&x, &opts, x.o2);
            cr_assert_eq(kg_test_last_attn_variant(ctx), f == 1 ? KG_ATTN_V_DECODE : KG_ATTN_V_DECODE2);
            cr_assert_eq(kg_test_last_attn_splits(ctx), planned);
            cr_assert(memcmp(x.o1, x.o2, x.nq * 2) == 0, "case %d: %d splits, %s: the bits differ from the runtime's",
                      i, planned, f == 0 ? "32-row tile" : f == 1 ? "16-row tiles" : "the old rule");
        }
        kg_test_force_attn_splits(ctx, 0);
        kg_test_force_attn_variant(ctx, -1);
        kg_test_attn_dec_tile(0);
        dec_io_close(&x);
        /* the runtime's own choice and split against the reference */
        acase c = {i % 2 ? KG_F16 : KG_BF16, B, Hq, Hkv, Sq, Sk, D, Sq > 1, MASK_NONE, 0, 0, 0.f};
        run_case_once(&c);
        cr_assert_eq(kg_test_last_attn_variant(ctx), want == 16 ? KG_ATTN_V_DECODE : KG_ATTN_V_DECODE2);
    }
    /* on an H200 (132 multiprocessors) the rule takes 16-row tiles on the
       first three cases, the 32-row tile on the fourth (B 8: 128 blocks
       of 4 key tiles, against 8 on 16-row tiles) */
    cr_assert(sms != 132 || n16 == 3, "%d multiprocessors: %d cases on 16-row tiles", sms, n16);
}

/* The launch's fewest keys per valid row of a split (KG_ATTN_SPLIT_PER_ROW,
   4; kg_test_attn_dec_chunk) where it binds, few keys against many rows:
   the split count the planner gives for this device (on an H200 more
   splits than at 16 keys a row), and the results within the tolerance of
   the float64 reference, at the runtime's minimum and at the old one. */
Test(attention, decode_split_minimum_per_row)
{
    int sms = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, NULL, NULL, &sms));
    /* B, Hq, Hkv, Sk, D; the splits on 132 multiprocessors at 4 / 16 keys a row */
    const int cs[3][7] = {{4, 54, 2, 5907, 128, 16, 12}, {4, 48, 2, 1125, 128, 6, 4}, {2, 8, 1, 3652, 128, 29, 20}};
    for (int i = 0; i < 3; i++) {
        const int B = cs[i][0], Hq = cs[i][1], Hkv = cs[i][2], Sk = cs[i][3], D = cs[i][4], g = Hq / Hkv;
        int slot = -1;
        for (int j = 0; j < KG_ATTN_DIM_COUNT; j++)
            if (kg_attn_dims[j] == D)
                slot = j;
        cr_assert_geq(slot, 0);
        const int bn = kg_attn_dec_bn[slot];
        const int R = g <= 16 ? 16 : kg_attn_dec_tile_rows(g, (int64_t)B * Hkv, Sk, bn, sms);
        const int64_t blocks = (int64_t)B * Hkv * ((g + R - 1) / R), vr = g < R ? g : R;
        for (int old = 0; old < 2; old++) {
            kg_test_attn_dec_chunk(old ? 16 : 0);
            acase c = {i % 2 ? KG_F16 : KG_BF16, B, Hq, Hkv, 1, Sk, D, 0, MASK_NONE, 0, 0, 0.f};
            run_case_once(&c);
            const int per_row = old ? 16 : KG_ATTN_SPLIT_PER_ROW;
            const kg_attn_split sp = kg_attn_plan_split(blocks, Sk, bn, sms, KG_ATTN_MAX_SPLITS, per_row * vr, 0, 0);
            cr_assert_eq(kg_test_last_attn_splits(ctx), sp.splits, "case %d, %d keys a row: %d splits, planned %d", i,
                         per_row, kg_test_last_attn_splits(ctx), sp.splits);
            cr_assert(sms != 132 || sp.splits == cs[i][5 + old], "case %d, %d keys a row: %d splits on an H200", i,
                      per_row, sp.splits);
        }
        kg_test_attn_dec_chunk(0);
    }
}

/* Causal prefill on the Hopper variants may run its blocks heaviest first
   in sections of heads (grid (query blocks x Hq, 1, B); the runtime's choice
   at D >= 128), forced here at D 64 and 128: every block written once
   (poisoned output), the same bits as the plain (query blocks, Hq, B) grid,
   on each Hopper variant; and against the float64 reference. */
Test(attention, causal_block_order)
{
    int major = 0, minor = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, &major, &minor, NULL));
    if (!(major == 9 && minor == 0))
        cr_skip_test("the Hopper variants run on compute capability 9.0 only (every_dtype* covers the rest)");
    const int vs[3] = {KG_ATTN_V_HOPPER, KG_ATTN_V_HOPPER_PP, KG_ATTN_V_HOPPER_LONG};
    const int shapes[3][5] = {{3, 11, 300, 400, 64}, {2, 5, 600, 700, 128}, {1, 3, 700, 2500, 64}}; /* B H Sq Sk D */
    for (int x = 0; x < 3; x++) {
        const int B = shapes[x][0], H = shapes[x][1], Sq = shapes[x][2], Sk = shapes[x][3], D = shapes[x][4];
        acase c = {KG_BF16, B, H, H, Sq, Sk, D, 1, MASK_NONE, 0, 0, 0.f};
        kg_test_force_attn_variant(ctx, vs[x]);
        kg_test_attn_order(ctx, 1);
        run_case_once(&c); /* float64 reference */
        cr_assert_eq(kg_test_last_attn_order(ctx), 1, "the heaviest-first order did not take");
        const int64_t nq = (int64_t)B * H * Sq * D, nk = (int64_t)B * H * Sk * D;
        uint16_t *h = malloc(nk * 2), *o1 = malloc(nq * 2), *o2 = malloc(nq * 2);
        void *dq = kt_alloc(ctx, nq * 2), *dk = kt_alloc(ctx, nk * 2), *dv = kt_alloc(ctx, nk * 2),
             *dout = kt_alloc(ctx, nq * 2);
        for (int64_t i = 0; i < nk; i++)
            h[i] = kt_to_bf16(kt_uniform(&rng, -2, 2));
        kt_upload(ctx, dq, h, nq * 2);
        kt_upload(ctx, dk, h, nk * 2);
        kt_upload(ctx, dv, h, nk * 2);
        kg_tensor tq = kg_tensor_contiguous(dq, KG_BF16, 4, KT_SHAPE(B, H, Sq, D)),
                  tk = kg_tensor_contiguous(dk, KG_BF16, 4, KT_SHAPE(B, H, Sk, D)),
                  tv = kg_tensor_contiguous(dv, KG_BF16, 4, KT_SHAPE(B, H, Sk, D)),
                  to = kg_tensor_contiguous(dout, KG_BF16, 4, KT_SHAPE(B, H, Sq, D));
        kg_attention_opts o = {0.f, 1};
        for (int on = 1; on >= 0; on--) {
            kg_test_attn_order(ctx, on);
            KT_OK(ctx, kg_memset(ctx, dout, 0xff, nq * 2));
            KT_OK(ctx, kg_attention(ctx, &to, NULL, &tq, &tk, &tv, NULL, &o));
            KT_OK(ctx, kg_sync(ctx));
            cr_assert_eq(kg_test_last_attn_variant(ctx), vs[x]);
            cr_assert_eq(kg_test_last_attn_order(ctx), on);
            kt_download(ctx, on ? o1 : o2, dout, nq * 2);
        }
        kg_test_attn_order(ctx, -1);
        for (int64_t i = 0; i < nq; i++)
            cr_assert(!isnan(kt_from_bf16(o1[i])), "%s: element %lld never written", kg_attn_variant_names[vs[x]],
                      (long long)i);
        cr_assert(memcmp(o1, o2, nq * 2) == 0, "%s: the block order changed the bits", kg_attn_variant_names[vs[x]]);
        free(h);
        free(o1);
        free(o2);
        kg_free(ctx, dq);
        kg_free(ctx, dk);
        kg_free(ctx, dv);
        kg_free(ctx, dout);
    }
    kg_test_force_attn_variant(ctx, -1);
}

/* The persistent Hopper variants (a block per multiprocessor taking work
   tiles in turn, its K/V ring and Q barrier carried from tile to tile)
   against the float64 reference, and bit for bit against their grid-mode
   twins (Hopper, Hopper pp: the same arithmetic per tile; checked against
   the reference by every_dtype_head_dim_and_mask_kind), on shapes with
   several work tiles per block: causal with more queries than keys (leading
   tiles without keys), GQA, odd lengths, lse written. */
/* The host and device buffers of a two-run bits comparison freed. */
static void free_pair_buffers(void *h, void *o1, void *o2, void *l1, void *l2, void *dq, void *dk, void *dv,
                              void *dout, void *dl)
{
    void *host[5] = {h, o1, o2, l1, l2}, *dev[5] = {dq, dk, dv, dout, dl};
    for (int i = 0; i < 5; i++) {
        free(host[i]);
        kg_free(ctx, dev[i]);
    }
}

/* Case c (contiguous, fresh random q, k, v, no mask) on two setups, whose
   outputs and lse must match bit for bit: setup w forces variant vs[w] and
   sets the bulk-tensor-copy hook to tma[w] (kg_test_attn_tma); want_tma[w]
   >= 0: whether that launch must have taken bulk tensor copies. */
/* same_bits with the persistent kernels' work queue forced per run (queue:
   kg_test_attn_queue's argument; want_queue >= 0: whether it must be taken) */
static void same_bits_queue(const acase *c, const int vs[2], const int tma[2], const int want_tma[2],
                            const int queue[2], const int want_queue[2])
{
    const int64_t nq = (int64_t)c->B * c->Hq * c->Sq * c->D, nk = (int64_t)c->B * c->Hkv * c->Sk * c->D;
    const int64_t nl = (int64_t)c->B * c->Hq * c->Sq, es = c->dt == KG_F32 ? 4 : 2;
    uint16_t *h = malloc((nq > nk ? nq : nk) * es), *o1 = malloc(nq * es), *o2 = malloc(nq * es);
    float *l1 = malloc(nl * 4), *l2 = malloc(nl * 4);
    void *dq = kt_alloc(ctx, nq * es), *dk = kt_alloc(ctx, nk * es), *dv = kt_alloc(ctx, nk * es),
         *dout = kt_alloc(ctx, nq * es), *dl = kt_alloc(ctx, nl * 4);
    for (int t = 0; t < 3; t++) {
        const int64_t n = t == 0 ? nq : nk;
        for (int64_t i = 0; i < n; i++) {
            const double x = kt_uniform(&rng, -2, 2);
            if (c->dt == KG_F32)
                ((float *)h)[i] = (float)x;
            else
                h[i] = c->dt == KG_F16 ? kt_to_f16(x) : kt_to_bf16(x);
        }
        kt_upload(ctx, t == 0 ? dq : t == 1 ? dk : dv, h, n * es);
    }
    kg_tensor tq = kg_tensor_contiguous(dq, c->dt, 4, KT_SHAPE(c->B, c->Hq, c->Sq, c->D)),
              tk = kg_tensor_contiguous(dk, c->dt, 4, KT_SHAPE(c->B, c->Hkv, c->Sk, c->D)),
              tv = kg_tensor_contiguous(dv, c->dt, 4, KT_SHAPE(c->B, c->Hkv, c->Sk, c->D)),
              to = kg_tensor_contiguous(dout, c->dt, 4, KT_SHAPE(c->B, c->Hq, c->Sq, c->D)),
              tl = kg_tensor_contiguous(dl, KG_F32, 3, KT_SHAPE(c->B, c->Hq, c->Sq));
    kg_attention_opts o = {0.f, c->causal};
    for (int w = 0; w < 2; w++) {
        kg_test_force_attn_variant(ctx, vs[w]);
        kg_test_attn_tma(tma[w]);
        kg_test_attn_queue(queue[w]);
        KT_OK(ctx, kg_memset(ctx, dout, 0xff, nq * es));
        KT_OK(ctx, kg_memset(ctx, dl, 0xff, nl * 4));
        KT_OK(ctx, kg_attention(ctx, &to, &tl, &tq, &tk, &tv, NULL, &o));
        KT_OK(ctx, kg_sync(ctx));
        cr_assert_eq(kg_test_last_attn_variant(ctx), vs[w]);
        if (want_tma[w] >= 0)
            cr_assert_eq(kg_test_last_attn_tma(), want_tma[w], "%s: bulk tensor copies %s", kg_attn_variant_names[vs[w]],
                         want_tma[w] ? "not taken" : "taken though off");
        if (want_queue[w] >= 0)
            cr_assert_eq(kg_test_last_attn_queue(), want_queue[w], "%s: work queue %s", kg_attn_variant_names[vs[w]],
                         want_queue[w] ? "not taken" : "taken though off");
        kt_download(ctx, w ? o2 : o1, dout, nq * es);
        kt_download(ctx, w ? l2 : l1, dl, nl * 4);
    }
    kg_test_attn_tma(0);
    kg_test_attn_queue(0);
    cr_assert(memcmp(o1, o2, nq * es) == 0 && memcmp(l1, l2, nl * 4) == 0,
              "%s B=%d Hq=%d Hkv=%d Sq=%d Sk=%d D=%d causal=%d: %s (tma %d, queue %d) and %s (tma %d, queue %d) bits "
              "differ (seed %llu)",
              kg_dtype_name(c->dt), c->B, c->Hq, c->Hkv, c->Sq, c->Sk, c->D, c->causal, kg_attn_variant_names[vs[0]],
              tma[0], queue[0], kg_attn_variant_names[vs[1]], tma[1], queue[1], (unsigned long long)kt_seed());
    free_pair_buffers(h, o1, o2, l1, l2, dq, dk, dv, dout, dl);
}

/* Two runs of a case (variants vs, bulk tensor copies per tma) give the
   same bits. */
static void same_bits(const acase *c, const int vs[2], const int tma[2], const int want_tma[2])
{
    const int queue[2] = {0, 0}, want_queue[2] = {-1, -1};
    same_bits_queue(c, vs, tma, want_tma, queue, want_queue);
}

static int on_sm90(void)
{
    int major = 0, minor = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, &major, &minor, NULL));
    return major == 9 && minor == 0;
}

/* Whether variant v has c's kernel and, for the persistent pp variant, its
   grid twin ("Hopper pp") has it too (session 24 left both only at D 96 /
   128 causal, and the grid one at D 64). */
static int pp_pair_generated(int v, const acase *c)
{
    int slot = 0;
    while (slot < 4 && DIMS[slot] != c->D)
        slot++;
    const kg_attn_kind kind = c->causal ? KG_ATTN_CAUSAL : KG_ATTN_NONE;
    return kg_attn_table[v][c->dt][slot][kind].threads > 0 &&
           (v != KG_ATTN_V_HOPPER_PERSIST_PP || kg_attn_table[KG_ATTN_V_HOPPER_PP][c->dt][slot][kind].threads > 0);
}

Test(attention, persistent_matches_grid_bits)
{
    if (!on_sm90())
        cr_skip_test("the Hopper variants run on compute capability 9.0 only (every_dtype* covers the rest)");
    const int shapes[7][7] = {
        /* B Hq Hkv Sq Sk D causal */
        {4, 16, 16, 1000, 1000, 64, 1}, {3, 32, 8, 777, 1301, 128, 0}, {2, 12, 4, 1500, 600, 96, 1},
        {5, 8, 8, 2049, 2049, 128, 1},  {1, 40, 5, 3000, 257, 64, 0},  {2, 16, 2, 640, 4100, 128, 1},
        {3, 16, 4, 1100, 900, 32, 1},
    };
    /* against the float64 reference: small enough for it, still more work
       tiles than multiprocessors */
    const acase refs[2] = {{KG_BF16, 2, 16, 16, 520, 520, 64, 1, MASK_NONE, 0, 0, 0.f},
                           {KG_F16, 1, 24, 3, 700, 300, 96, 1, MASK_NONE, 0, 0, 0.f}};
    /* each persistent variant against its grid-mode twin (D 32: the plain
       one only; no shape below ends a non-causal D 32 / 64 head on a block
       of 64 or fewer rows, where the plain one deals its key tiles round
       its warpgroups: other bits, persistent_sk_matches_reference_and_bits) */
    const int pv[2] = {KG_ATTN_V_HOPPER_PERSIST, KG_ATTN_V_HOPPER_PERSIST_PP},
              gv[2] = {KG_ATTN_V_HOPPER, KG_ATTN_V_HOPPER_PP};
    for (int x = 0; x < 4; x++) {
        /* (since session 24 both pp kernels only at D 96 / 128 causal) */
        if (!pp_pair_generated(pv[x & 1], &refs[x >> 1]))
            continue;
        kg_test_force_attn_variant(ctx, pv[x & 1]);
        run_case_once(&refs[x >> 1]);
        cr_assert_eq(kg_test_last_attn_variant(ctx), pv[x & 1], "the variant did not take");
    }
    /* bits against grid mode on bigger ones */
    for (int x = 0; x < 14; x++) {
        const int *z = shapes[x / 2];
        if (x % 2 != 0 && z[5] == 32)
            continue;
        const acase c = {z[6] ? KG_F16 : KG_BF16, z[0], z[1], z[2], z[3], z[4], z[5], z[6], MASK_NONE, 0, 0, 0.f};
        if (!pp_pair_generated(pv[x % 2], &c))
            continue;
        if (!kt_take(3)) /* sanitizer mode (kg_test.h): a seeded sample (racecheck of all 12 ran > 259 s) */
            continue;
        const int vs[2] = {pv[x % 2], gv[x % 2]}, tma[2] = {0, 0}, want[2] = {-1, -1};
        same_bits(&c, vs, tma, want);
    }
    kg_test_force_attn_variant(ctx, -1);
}

/* The persistent kernels' work queue (each block takes the next tile as it
   starts one; the runtime's default) against the tiles taken in turn: the same
   tiles computed the same way, so the same bits, on every persistent
   variant, causal or not, fewer tiles than multiprocessors, GQA with more
   keys than queries; the queue is set back to zero by each launch, or the
   next one (the next case) would skip tiles. */
Test(attention, persistent_queue_matches_turns_bits)
{
    if (!on_sm90())
        cr_skip_test("the Hopper variants run on compute capability 9.0 only");
    const int pv[2] = {KG_ATTN_V_HOPPER_PERSIST, KG_ATTN_V_HOPPER_PERSIST_PP};
    const int shapes[5][7] = {
        /* B Hq Hkv Sq Sk D(slot) causal */
        {2, 16, 16, 1000, 1000, 1, 1},
        {1, 2, 2, 300, 300, 3, 1},
        {3, 8, 2, 700, 1100, 1, 1},
        {2, 12, 4, 500, 777, 2, 0},
        {2, 8, 2, 600, 900, 0, 0},
    };
    for (int v = 0; v < 2; v++)
        for (int i = 0; i < 5; i++)
            for (int d = 0; d < 2; d++) {
                const int *z = shapes[i], slot = d ? 3 : z[5], D = DIMS[slot];
                const kg_dtype dt = (v + i + d) % 2 ? KG_F16 : KG_BF16;
                if (kg_attn_table[pv[v]][dt][slot][z[6] ? KG_ATTN_CAUSAL : KG_ATTN_NONE].threads == 0)
                    continue;
                if (!kt_take(4))
                    continue;
                const acase c = {dt, z[0], z[1], z[2], z[3], z[4], D, z[6], MASK_NONE, 0, 0, 0.f};
                const int vs[2] = {pv[v], pv[v]}, tma[2] = {0, 0}, want[2] = {-1, -1}, queue[2] = {1, -1},
                          wq[2] = {1, 0};
                same_bits_queue(&c, vs, tma, want, queue, wq);
            }
    kg_test_force_attn_variant(ctx, -1);
}

/* The forced-variant tests share these steps. Each case of refs against
   the float64 reference on variant v, forced, or (alternate: the default
   persistent D 32 / 64 kernel's tests, ep and sk) by the runtime's choice
   for even i and forced for odd i: the variant v taken either way. */
static void persist_refs(const acase *refs, int n, int v, int alternate)
{
    for (int i = 0; i < n; i++) {
        if (!kt_take(2)) /* sanitizer mode (kg_test.h): a seeded sample */
            continue;
        kg_test_force_attn_variant(ctx, i % 2 || !alternate ? v : -1);
        run_case_once(&refs[i]);
        cr_assert_eq(kg_test_last_attn_variant(ctx), v, "case %d: %s taken", i,
                     kg_attn_variant_names[kg_test_last_attn_variant(ctx)]);
    }
}

/* c on variant v0 bit for bit against v1: both with the work queue and
   bulk tensor copies, except v0 by cp.async (cp) or in turn (turn) */
static void persist_bits(const acase *c, int v0, int v1, int cp, int turn)
{
    const int vs[2] = {v0, v1};
    const int tma[2] = {cp ? -1 : 0, 0}, want_tma[2] = {cp ? 0 : 1, 1};
    const int queue[2] = {turn ? -1 : 1, 1}, want_queue[2] = {turn ? 0 : 1, 1};
    same_bits_queue(c, vs, tma, want_tma, queue, want_queue);
}

/* The default persistent kernel at D 32 / 64, causal, since session 21
   (ep: each work tile's epilogue under the next tile's first Q K^T), taken
   by the runtime and forced: against the float64 reference on shapes of
   more work tiles than an H200 has multiprocessors (so that blocks cross
   from tile to tile), GQA, a [B,S,H,D] view, lengths not a multiple of the
   tiles, more keys than queries and more queries than keys (leading tiles
   without keys); bit for bit against its own default launch (the work
   queue, bulk tensor copies), output and lse, in turn and with cp.async;
   and bitwise the same from run to run. Until session 37 also bit for bit
   against the kernel as before ("Hopper persistent base": the same
   arithmetic in the same order), whose modules were removed then for the
   bundle's size (gen/attention.lua). */
Test(attention, persistent_ep_matches_reference_and_bits)
{
    if (!on_sm90())
        cr_skip_test("the Hopper variants run on compute capability 9.0 only");
    const int ep = KG_ATTN_V_HOPPER_PERSIST;
    const acase refs[4] = {{KG_BF16, 2, 16, 16, 1500, 1500, 64, 1, MASK_NONE, 0, 0, 0.f},
                           {KG_F16, 2, 16, 4, 1500, 1501, 64, 1, MASK_NONE, 0, 1, 0.f},
                           {KG_BF16, 3, 12, 4, 1100, 2300, 32, 1, MASK_NONE, 0, 0, 0.f},
                           {KG_F16, 1, 24, 24, 1800, 600, 64, 1, MASK_NONE, 0, 0, 0.f}};
    persist_refs(refs, 4, ep, 1);
    const int shapes[6][6] = {
        /* B Hq Hkv Sq Sk D */
        {4, 16, 16, 1024, 1024, 64}, {2, 32, 8, 1000, 1000, 64}, {3, 16, 4, 1100, 900, 32},
        {2, 24, 24, 2000, 700, 64},  {2, 16, 16, 777, 1301, 32}, {1, 16, 2, 4100, 4100, 64},
    };
    for (int i = 0; i < 6; i++) {
        if (!kt_take(3))
            continue;
        const int *z = shapes[i];
        const acase c = {i % 2 ? KG_F16 : KG_BF16, z[0], z[1], z[2], z[3], z[4], z[5], 1, MASK_NONE, 0, 0, 0.f};
        /* queue on both; in turn (queue off) against the queue; cp.async
           against bulk tensor copies */
        persist_bits(&c, ep, ep, i == 2 || i == 5, i % 3 == 1);
    }
    /* run to run */
    const acase c = {KG_BF16, 4, 16, 16, 1024, 1024, 64, 1, MASK_NONE, 0, 0, 0.f};
    const int vs[2] = {ep, ep}, tma[2] = {0, 0}, want[2] = {1, 1};
    same_bits(&c, vs, tma, want);
    /* the base variant has no kernels since session 37: its force does not
       take, the runtime's choice runs (against the reference) */
    const acase small = {KG_BF16, 2, 2, 2, 130, 130, 64, 1, MASK_NONE, 0, 0, 0.f};
    kg_test_force_attn_variant(ctx, KG_ATTN_V_HOPPER_PERSIST_BASE);
    run_case_once(&small);
    cr_assert_eq(kg_test_last_attn_variant(ctx), ep, "forced base: %s ran",
                 kg_attn_variant_names[kg_test_last_attn_variant(ctx)]);
    kg_test_force_attn_variant(ctx, -1);
}

/* Persistent variants of the plain persistent kernel's arithmetic in its
   order (session 22), forced: variant v against the
   float64 reference (GQA, a [B,S,H,D] view, lengths not a multiple of the
   tiles, more keys than queries, more queries than keys: causal, leading
   tiles without keys; work tiles of one key tile and of several), and bit
   for bit the default persistent kernel with the work queue and in turn,
   bulk tensor copies and cp.async. Head dims: d for the shapes of D 64,
   d32 for those of D 32 (from D 96 fewer heads in the one reference case
   checked on every row: s22r1 ran out of its 24 s with two such calls). */
static void persist_candidate(int v, int d, int d32, int causal)
{
    const int def = KG_ATTN_V_HOPPER_PERSIST;
    const acase refs[3] = {{KG_BF16, 2, 16, 4, 1500, 1501, d, causal, MASK_NONE, 0, 1, 0.f},
                           {KG_F16, 3, 12, 4, 1100, 2300, d32, causal, MASK_NONE, 0, 0, 0.f},
                           {KG_BF16, 1, d >= 96 ? 8 : 24, d >= 96 ? 8 : 24, 1800, 600, d, causal, MASK_NONE, 0, 0, 0.f}};
    persist_refs(refs, 3, v, 0);
    const int shapes[4][6] = {
        /* B Hq Hkv Sq Sk D */
        {4, 16, 16, 1024, 1024, 64}, {3, 16, 4, 1100, 900, 32}, {2, 24, 24, 2000, 700, 64}, {1, 16, 2, 4100, 4100, 64},
    };
    for (int i = 0; i < 4; i++) {
        if (!kt_take(3))
            continue;
        const int *z = shapes[i];
        const acase c = {i % 2 ? KG_F16 : KG_BF16, z[0], z[1], z[2], z[3], z[4], z[5] == 32 ? d32 : d, causal,
                         MASK_NONE, 0, 0, 0.f};
        persist_bits(&c, v, def, i == 1, i == 2);
    }
    kg_test_force_attn_variant(ctx, -1);
}

/* "Hopper persistent f2" (since session 22 the runtime's choice at D 128,
   not causal, and causal beyond 4096 keys): a tile's second Q K^T under its
   first softmax, forced, D 128 causal and not (one test each, so that they
   can run side by side) */
Test(attention, persistent_f2_matches_reference_and_plain_bits_causal)
{
    if (!on_sm90())
        cr_skip_test("the Hopper variants run on compute capability 9.0 only");
    persist_candidate(KG_ATTN_V_HOPPER_PERSIST_F2, 128, 128, 1);
}

Test(attention, persistent_f2_matches_reference_and_plain_bits)
{
    if (!on_sm90())
        cr_skip_test("the Hopper variants run on compute capability 9.0 only");
    persist_candidate(KG_ATTN_V_HOPPER_PERSIST_F2, 128, 128, 0);
}

/* "Hopper persistent ts" (session 31; since session 32 the runtime's
   choice at D 128 causal up to 2048 keys): the plain persistent kernel
   with each warpgroup's output rows stored by one thread's bulk tensor
   copies, taken by the runtime (even cases with up to 2048 keys) and
   forced (the others), against the float64 reference (output and lse) on
   lengths that put the last query block's second warpgroup wholly past Sq
   (Sq 1050, 1090, 64: no copy issued) and partly past it (1500, 1000),
   GQA and MQA, a [B,S,H,D] view (a strided output map), Sq != Sk both ways
   (leading tiles without keys, or the diagonal's offset Sk - Sq), a
   negative scale; the bulk stores taken (kg_test_last_attn_tmo) wherever
   the loads took bulk copies; bit for bit the plain persistent kernel with
   the work queue and in turn, bulk tensor copies and cp.async (then ts's
   ordinary stores); run to run. */
static void persist_store(int v, int D, int causal)
{
    const int def = KG_ATTN_V_HOPPER_PERSIST;
    /* (Sq x Sk above 2M but for the short ones: the reference then checks
       1 row in 13 and the last, which keeps each test within seconds) */
    const acase refs[7] = {{KG_BF16, 2, 16, 4, 1500, 1501, D, causal, MASK_NONE, 0, 1, 0.f},
                           {KG_F16, 2, 12, 4, 1100, 2300, D, causal, MASK_NONE, 0, 0, 0.f},
                           {KG_BF16, 1, 8, 8, 1800, 1200, D, causal, MASK_NONE, 0, 0, 0.f},
                           {KG_F16, 2, 8, 1, 1050, 2000, D, causal, MASK_NONE, 0, 0, 0.f},
                           {KG_BF16, 2, 8, 2, 1090, 1900, D, causal, MASK_NONE, 0, 1, 0.f},
                           {KG_F16, 3, 40, 40, 64, 300, D, causal, MASK_NONE, 0, 0, 0.f},
                           {KG_BF16, 1, 16, 4, 1000, 2100, D, causal, MASK_NONE, 0, 0, -0.3f}};
    for (int i = 0; i < 7; i++) {
        if (!kt_take(2)) /* sanitizer mode (kg_test.h): a seeded sample */
            continue;
        kg_test_force_attn_variant(ctx, causal && D == 128 && i % 2 == 0 && refs[i].Sk <= 2048 ? -1 : v);
        run_case_once(&refs[i]);
        cr_assert_eq(kg_test_last_attn_variant(ctx), v, "case %d: %s taken", i,
                     kg_attn_variant_names[kg_test_last_attn_variant(ctx)]);
        cr_assert(kg_test_last_attn_tma(), "case %d: the loads took no bulk tensor copies", i);
        cr_assert_eq(kg_test_last_attn_tmo(), 1, "case %d: %s: bulk tensor stores not taken", i,
                     kg_attn_variant_names[v]);
    }
    const int shapes[5][5] = {
        /* B Hq Hkv Sq Sk */
        {4, 16, 16, 1024, 1024}, {3, 16, 4, 1100, 900},  {2, 24, 24, 2000, 700},
        {1, 16, 2, 4100, 4100},  {5, 12, 3, 1050, 1200},
    };
    for (int i = 0; i < 5; i++) {
        if (!kt_take(3))
            continue;
        const int *z = shapes[i];
        const acase c = {i % 2 ? KG_F16 : KG_BF16, z[0], z[1], z[2], z[3], z[4], D, causal, MASK_NONE, 0, 0, 0.f};
        /* queue on both; in turn against the queue; cp.async against bulk
           tensor copies */
        persist_bits(&c, v, def, i == 1, i == 2);
    }
    /* run to run */
    const acase c = {KG_BF16, 4, 16, 16, 1024, 1024, D, causal, MASK_NONE, 0, 0, 0.f};
    const int vs[2] = {v, v}, tma[2] = {0, 0}, want[2] = {1, 1};
    same_bits(&c, vs, tma, want);
    kg_test_force_attn_variant(ctx, -1);
}

#define PERSIST_STORE_TEST(name, v, D, causal)                                                                         \
    Test(attention, name)                                                                                              \
    {                                                                                                                  \
        if (!on_sm90())                                                                                                \
            cr_skip_test("the Hopper variants run on compute capability 9.0 only");                                    \
        persist_store(v, D, causal);                                                                                   \
    }
PERSIST_STORE_TEST(persistent_ts_matches_reference_and_default_bits_causal, KG_ATTN_V_HOPPER_PERSIST_TS, 128, 1)
#undef PERSIST_STORE_TEST

/* Variant v (ts at D 128, causal) writes the output's elements and no
   other byte: the output a view [B, H, S, D] of a buffer whose rows are
   D + 64 elements apart (64 elements of gap after each row) and whose heads
   are S + 3 rows apart (whole gap rows after each head's last row, where
   a box's rows past Sq would land if the map did not clip them), every
   byte poisoned first (0xff) and a guard after the end: the gaps and the
   guard stay poisoned, and the elements are bit for bit the default
   kernel's on the same view (poisoned and checked the same way, every
   element written), causal (ts is generated causal only since session
   32), Sq 1050 (the last block's second warpgroup past Sq) and 1000. */
static void store_only_output(int v, int D)
{
    const int B = 2, H = 16, RS = D + 64;
    for (int x = 2; x < 4; x++) {
        const int S = x % 2 ? 1000 : 1050, causal = x >= 2;
        const kg_dtype dt = x % 2 ? KG_F16 : KG_BF16;
        const int64_t hs = (int64_t)(S + 3) * RS, n = (int64_t)B * H * S * D, nbuf = (int64_t)B * H * hs + 4096;
        uint16_t *h = malloc(n * 2), *o[2] = {malloc(nbuf * 2), malloc(nbuf * 2)};
        void *dq = kt_alloc(ctx, n * 2), *dk = kt_alloc(ctx, n * 2), *dv = kt_alloc(ctx, n * 2),
             *dout = kt_alloc(ctx, nbuf * 2);
        for (int t = 0; t < 3; t++) {
            for (int64_t i = 0; i < n; i++)
                h[i] = dt == KG_F16 ? kt_to_f16(kt_uniform(&rng, -2, 2)) : kt_to_bf16(kt_uniform(&rng, -2, 2));
            kt_upload(ctx, t == 0 ? dq : t == 1 ? dk : dv, h, n * 2);
        }
        kg_tensor tq = kg_tensor_contiguous(dq, dt, 4, KT_SHAPE(B, H, S, D)),
                  tk = kg_tensor_contiguous(dk, dt, 4, KT_SHAPE(B, H, S, D)),
                  tv = kg_tensor_contiguous(dv, dt, 4, KT_SHAPE(B, H, S, D));
        kg_tensor to = tq;
        to.data = dout;
        to.strides[3] = 1, to.strides[2] = RS, to.strides[1] = hs, to.strides[0] = hs * H;
        kg_attention_opts op = {0.f, causal};
        const int vs[2] = {v, KG_ATTN_V_HOPPER_PERSIST};
        for (int w = 0; w < 2; w++) {
            kg_test_force_attn_variant(ctx, vs[w]);
            KT_OK(ctx, kg_memset(ctx, dout, 0xff, nbuf * 2));
            KT_OK(ctx, kg_attention(ctx, &to, NULL, &tq, &tk, &tv, NULL, &op));
            KT_OK(ctx, kg_sync(ctx));
            cr_assert_eq(kg_test_last_attn_variant(ctx), vs[w]);
            if (w == 0)
                cr_assert_eq(kg_test_last_attn_tmo(), 1, "%s S %d causal %d: bulk tensor stores not taken",
                             kg_attn_variant_names[v], S, causal);
            kt_download(ctx, o[w], dout, nbuf * 2);
        }
        kg_test_force_attn_variant(ctx, -1);
        int64_t bad_gap = -1, bad_el = -1, poisoned = 0;
        for (int64_t i = 0; i < nbuf; i++) {
            const int64_t head = i / hs, r = (i % hs) / RS, c = i % RS;
            const int inside = head < (int64_t)B * H && r < S && c < D;
            if (!inside && o[0][i] != 0xffff && bad_gap < 0)
                bad_gap = i;
            if (inside && o[0][i] != o[1][i] && bad_el < 0)
                bad_el = i;
            if (inside && o[1][i] == 0xffff) /* (a NaN: no output element is one) */
                poisoned++;
        }
        cr_assert(bad_gap < 0, "%s %s S %d causal %d: wrote outside the output at element %lld (0x%04x)",
                  kg_attn_variant_names[v], kg_dtype_name(dt), S, causal, (long long)bad_gap,
                  bad_gap < 0 ? 0 : o[0][bad_gap]);
        cr_assert_eq(poisoned, 0, "%s S %d causal %d: the default left %lld elements unwritten", kg_dtype_name(dt), S,
                     causal, (long long)poisoned);
        cr_assert(bad_el < 0, "%s %s S %d causal %d: differs from the default at element %lld (0x%04x / 0x%04x)",
                  kg_attn_variant_names[v], kg_dtype_name(dt), S, causal, (long long)bad_el,
                  bad_el < 0 ? 0 : o[0][bad_el], bad_el < 0 ? 0 : o[1][bad_el]);
        free(h);
        free(o[0]);
        free(o[1]);
        kg_free(ctx, dq);
        kg_free(ctx, dk);
        kg_free(ctx, dv);
        kg_free(ctx, dout);
    }
}

Test(attention, persistent_ts_writes_only_the_output)
{
    if (!on_sm90())
        cr_skip_test("the Hopper variants run on compute capability 9.0 only");
    store_only_output(KG_ATTN_V_HOPPER_PERSIST_TS, 128);
}

/* "Hopper f2" (since session 22 the runtime's choice at D 256 not causal),
   f2 on the D 256 grid kernel, forced: against the float64 reference (GQA,
   a [B,S,H,D] view, lengths not a multiple of the tiles, more keys than
   queries and more queries than keys, one key tile) and bit for bit the
   grid kernel ("Hopper"), with bulk tensor copies and cp.async. */
Test(attention, grid_f2_matches_reference_and_grid_bits)
{
    if (!on_sm90())
        cr_skip_test("the Hopper variants run on compute capability 9.0 only");
    const int v = KG_ATTN_V_HOPPER_F2;
    const acase refs[4] = {{KG_BF16, 2, 8, 2, 700, 701, 256, 0, MASK_NONE, 0, 1, 0.f},
                           {KG_F16, 1, 8, 4, 500, 1100, 256, 0, MASK_NONE, 0, 0, 0.f},
                           {KG_F16, 2, 6, 6, 900, 300, 256, 0, MASK_NONE, 0, 0, 0.f},
                           {KG_BF16, 1, 4, 1, 64, 60, 256, 0, MASK_NONE, 0, 0, 0.f}};
    persist_refs(refs, 4, v, 0);
    const int shapes[4][7] = {
        /* B Hq Hkv Sq Sk causal cp.async */
        {2, 16, 4, 2140, 2140, 0, 0}, {1, 16, 16, 1632, 1632, 0, 1}, {2, 8, 2, 1000, 1900, 0, 1}, {3, 8, 8, 777, 129, 0, 0},
    };
    for (int i = 0; i < 4; i++) {
        if (!kt_take(3))
            continue;
        const int *z = shapes[i];
        const acase c = {i % 2 ? KG_F16 : KG_BF16, z[0], z[1], z[2], z[3], z[4], 256, z[5], MASK_NONE, 0, 0, 0.f};
        const int vs[2] = {v, KG_ATTN_V_HOPPER}, tma[2] = {z[6] ? -1 : 0, 0}, want[2] = {z[6] ? 0 : 1, 1};
        same_bits(&c, vs, tma, want);
    }
    kg_test_force_attn_variant(ctx, -1);
}

/* The f2 kernels taken by the runtime where they should be (against the
   reference), not where they should not (D 128 causal up to 4096 keys: up
   to 2048 ts since session 32, then pp; D 256 causal); D 128 not causal at
   any key count (since session 23 beyond 4096 keys too, the grid kernel
   before) */
Test(attention, f2_where_the_runtime_takes_it)
{
    if (!on_sm90())
        cr_skip_test("the Hopper variants run on compute capability 9.0 only");
    const int f2 = KG_ATTN_V_HOPPER_PERSIST_F2;
    const acase refs[7] = {{KG_BF16, 1, 2, 1, 700, 900, 128, 0, MASK_NONE, 0, 1, 0.f},
                           {KG_F16, 1, 2, 1, 4500, 4500, 128, 1, MASK_NONE, 0, 0, 0.f},
                           {KG_BF16, 1, 2, 2, 1024, 1024, 128, 1, MASK_NONE, 0, 0, 0.f},
                           {KG_F16, 1, 2, 1, 3000, 3000, 128, 1, MASK_NONE, 0, 0, 0.f},
                           {KG_F16, 1, 4, 1, 600, 700, 256, 0, MASK_NONE, 0, 0, 0.f},
                           {KG_BF16, 1, 2, 2, 600, 600, 256, 1, MASK_NONE, 0, 0, 0.f},
                           {KG_F16, 1, 2, 1, 300, 4500, 128, 0, MASK_NONE, 0, 1, 0.f}};
    const int want[7] = {f2, f2, KG_ATTN_V_HOPPER_PERSIST_TS, KG_ATTN_V_HOPPER_PERSIST_PP, KG_ATTN_V_HOPPER_F2,
                         KG_ATTN_V_HOPPER, f2};
    kg_test_force_attn_variant(ctx, -1);
    for (int i = 0; i < 7; i++) {
        if (!kt_take(2)) /* sanitizer mode (kg_test.h): a seeded sample */
            continue;
        run_case_once(&refs[i]);
        cr_assert_eq(kg_test_last_attn_variant(ctx), want[i], "case %d: %s taken", i,
                     kg_attn_variant_names[kg_test_last_attn_variant(ctx)]);
    }
}

/* The default persistent kernel at D 32 / 64, not causal, since session 21
   (sk: the key tiles of a work tile whose real rows all lie in the first
   warpgroup's 64 dealt round the three warpgroups, their softmax states
   merged), taken by the runtime and forced: against the
   float64 reference where the last query block has 64 or fewer real rows
   (S 1024: 64; 1000: 40), more work tiles than an H200 has
   multiprocessors, GQA, a [B,S,H,D] view, key counts that leave a
   warpgroup one tile or none (200, 100 keys) or end inside a tile; bitwise
   from run to run, with the work queue and in turn, with bulk tensor copies
   and cp.async; and where no block is that short (1100 rows), bitwise from
   run to run (until session 37 bit for bit the kernel as before, "Hopper
   persistent base", whose modules were removed then for the bundle's
   size). */
Test(attention, persistent_sk_matches_reference_and_bits)
{
    if (!on_sm90())
        cr_skip_test("the Hopper variants run on compute capability 9.0 only");
    const int sk = KG_ATTN_V_HOPPER_PERSIST;
    const acase refs[4] = {{KG_BF16, 2, 16, 16, 1024, 2100, 64, 0, MASK_NONE, 0, 0, 0.f},
                           {KG_F16, 2, 16, 4, 1000, 2500, 64, 0, MASK_NONE, 0, 1, 0.f},
                           {KG_BF16, 3, 12, 4, 1024, 200, 32, 0, MASK_NONE, 0, 0, 0.f},
                           {KG_F16, 2, 16, 16, 1000, 100, 64, 0, MASK_NONE, 0, 0, 0.f}};
    persist_refs(refs, 4, sk, 1);
    const int shapes[4][7] = {
        /* B Hq Hkv Sq Sk D */
        {4, 16, 16, 1024, 1024, 64}, {2, 16, 4, 1000, 777, 32}, {3, 16, 16, 1024, 300, 64}, {2, 24, 8, 4096, 1500, 64},
    };
    for (int i = 0; i < 4; i++) {
        if (!kt_take(3))
            continue;
        const int *z = shapes[i];
        const acase c = {i % 2 ? KG_F16 : KG_BF16, z[0], z[1], z[2], z[3], z[4], z[5], 0, MASK_NONE, 0, 0, 0.f};
        /* queue on both; in turn against the queue; cp.async against bulk
           tensor copies */
        persist_bits(&c, sk, sk, i == 2, i == 1);
    }
    /* no short block: the same bits from run to run */
    const acase c = {KG_BF16, 2, 16, 16, 1100, 900, 64, 0, MASK_NONE, 0, 0, 0.f};
    const int vs[2] = {sk, sk}, tma[2] = {0, 0}, want[2] = {1, 1};
    same_bits(&c, vs, tma, want);
    kg_test_force_attn_variant(ctx, -1);
}

/* The bulk tensor copies (TMA) of the Hopper prefill and the decode
   kernels against their cp.async copies: the same bytes in the same places,
   so the same bits, on every Hopper variant, head dim and unmasked kind
   (tile ends inside the keys and the queries, GQA) and every decode variant
   of head dims 64, 128, 256 (split and not); and against the float64
   reference with the copies on (every other GPU test runs with them on too,
   the runtime's default); a [B,S,H,D] view and an MQA one take them too. */
Test(attention, tma_matches_cp_async_bits)
{
    if (!on_sm90())
        cr_skip_test("the Hopper variants run on compute capability 9.0 only");
    const int hv[5] = {KG_ATTN_V_HOPPER, KG_ATTN_V_HOPPER_LONG, KG_ATTN_V_HOPPER_PP, KG_ATTN_V_HOPPER_PERSIST,
                       KG_ATTN_V_HOPPER_PERSIST_PP};
    for (int v = 0; v < 5; v++)
        for (int di = 0; di < 5; di++)
            for (int causal = 0; causal < 2; causal++) {
                const int D = DIMS[di];
                const kg_dtype dt = (v + di + causal) % 2 ? KG_F16 : KG_BF16;
                if (kg_attn_table[hv[v]][dt][di][causal ? KG_ATTN_CAUSAL : KG_ATTN_NONE].threads == 0)
                    continue;
                if (!kt_take(4))
                    continue;
                const acase c = {dt, 2, 12, 4, 333 + 50 * di, 517 + 100 * v, D, causal, MASK_NONE, 0, 0, 0.f};
                const int vs[2] = {hv[v], hv[v]}, tma[2] = {0, -1}, want[2] = {1, 0};
                same_bits(&c, vs, tma, want);
            }
    /* the decode kernels (head dims from 64; D 96 in two panels), the
       planner's split and 3 forced splits that do not divide the keys, GQA
       and MQA rows, causal or not */
    const int dv[3] = {KG_ATTN_V_DECODE, KG_ATTN_V_DECODE2, KG_ATTN_V_DECODE4};
    const int dh[3][3] = {{8, 2, 3}, {16, 2, 3}, {32, 1, 2}}; /* Hq, Hkv, Sq: 12, 24, 64 packed rows */
    for (int v = 0; v < 3; v++)
        for (int di = 1; di < 5; di++)
            for (int sp = 0; sp < 2; sp++) {
                const kg_dtype dt = (v + di + sp) % 2 ? KG_F16 : KG_BF16;
                if (DIMS[di] < 64 || kg_attn_table[dv[v]][dt][di][KG_ATTN_CAUSAL].threads == 0 || !kt_take(4))
                    continue;
                const acase c = {dt, 2, dh[v][0], dh[v][1], dh[v][2], 5000 + 333 * di, DIMS[di], sp, MASK_NONE, 0, 0, 0.f};
                const int vs[2] = {dv[v], dv[v]}, tma[2] = {0, -1}, want[2] = {1, 0};
                kg_test_force_attn_splits(ctx, sp ? 3 : 0);
                same_bits(&c, vs, tma, want);
                kg_test_force_attn_splits(ctx, 0);
            }
    /* the float64 reference with the copies on, a [B,S,H,D] layout and MQA */
    const acase refs[4] = {{KG_BF16, 2, 8, 1, 300, 700, 128, 1, MASK_NONE, 0, 1, 0.f},
                           {KG_F16, 1, 6, 2, 129, 1000, 64, 0, MASK_NONE, 0, 1, 0.f},
                           {KG_BF16, 1, 4, 4, 200, 333, 256, 0, MASK_NONE, 0, 0, 0.f},
                           {KG_BF16, 2, 8, 2, 3, 3001, 96, 1, MASK_NONE, 0, 1, 0.f}}; /* decode, D 96 */
    for (int i = 0; i < 4; i++) {
        kg_test_force_attn_variant(ctx, -1);
        run_case_once(&refs[i]);
        cr_assert(kg_test_last_attn_tma(), "case %d: the runtime did not take bulk tensor copies", i);
    }
    kg_test_force_attn_variant(ctx, -1);
}

/* The same call twice gives the same bits (split partials merged in a fixed
   order), on the planner's split and a forced one, also with the combine
   kernel's lanes forced; 8 query heads of a KV head x 2 queries = 16 packed
   rows. */
Test(attention, decode_is_bitwise_reproducible)
{
    const int B = 2, Hq = 16, Hkv = 2, Sq = 2, Sk = 9000, D = 128;
    const int64_t nl = (int64_t)B * Hq * Sq;
    dec_io x;
    dec_io_open(&x, B, Hq, Hkv, Sq, Sk, D);
    float *l1 = malloc(nl * 4), *l2 = malloc(nl * 4);
    void *dl = kt_alloc(ctx, nl * 4);
    kg_tensor tl = kg_tensor_contiguous(dl, KG_F32, 3, KT_SHAPE(B, Hq, Sq));
    const int forced[6] = {0, 11, 0, 11, 11, 11}, lanes[6] = {0, 0, 0, 0, 4, 32};
    for (int f = 0; f < 6; f++) {
        kg_test_force_attn_combine(ctx, f < 2 ? 1 : 2);
        kg_test_force_attn_splits(ctx, forced[f]);
        kg_test_attn_dec_lanes(lanes[f]);
        for (int rep = 0; rep < 2; rep++) {
            KT_OK(ctx, kg_memset(ctx, x.dout, 0xff, x.nq * 2));
            KT_OK(ctx, kg_attention(ctx, &x.out, &tl, &x.q, &x.k, &x.v, NULL, NULL));
            KT_OK(ctx, kg_sync(ctx));
            cr_assert(kg_test_last_attn_variant(ctx) == KG_ATTN_V_DECODE, "variant %s",
                      kg_attn_variant_names[kg_test_last_attn_variant(ctx)]);
            cr_assert_gt(kg_test_last_attn_splits(ctx), 1);
            kt_download(ctx, rep ? x.o2 : x.o1, x.dout, x.nq * 2);
            kt_download(ctx, rep ? l2 : l1, dl, nl * 4);
        }
        cr_assert(memcmp(x.o1, x.o2, x.nq * 2) == 0 && memcmp(l1, l2, nl * 4) == 0,
                  "forced splits %d, merge %d, lanes %d: runs differ", forced[f], f < 2 ? 1 : 2, lanes[f]);
    }
    kg_test_attn_dec_lanes(0);
    kg_test_force_attn_splits(ctx, 0);
    kg_test_force_attn_combine(ctx, 0);
    dec_io_close(&x);
    free(l1);
    free(l2);
    kg_free(ctx, dl);
}

/* The session 31 candidate (kg_test_attn_dec_pair: two 64-row decode
   blocks a multiprocessor, 2 stages at D 128, twice the splits) against
   the float64 reference, on rows whose planned grid exceeds the
   multiprocessors so that it is taken: MQA Sq 16 (512 rows, 8 row tiles),
   group 4 Sq 12 at D 64 (48 of 64 rows valid), group 40 Sq 3 in [B,S,H,D]
   (a row tile of 56 valid rows), fully masked rows with 21 forced splits
   that do not divide the keys (the last one 160 of 192 keys), and group 33
   Sq 1 over 33000 keys (129 splits); the strided lse of each. Then, with
   pair off (-1), the same rows do not take it. (The runtime's choice, the
   rule, declines all five: decode_pair_rule_matches_reference covers it.) */
Test(attention, decode_pair_matches_reference)
{
    int major = 0, minor = 0, sms = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, &major, &minor, &sms));
    /* (the grids and splits below are planned for 132 multiprocessors: an
       H100 SXM or H200; elsewhere the candidate is checked where it takes) */
    const int sm90 = major == 9 && minor == 0, at132 = sms == 132;
    const struct {
        acase c;
        int forced, splits;
    } cs[] = {
        {{KG_BF16, 2, 32, 1, 16, 3000, 128, 1, MASK_NONE, 0, 0, 0.f}, 0, 10},
        {{KG_F16, 8, 16, 4, 12, 2500, 64, 1, MASK_NONE, 0, 0, 0.f}, 0, 7},
        {{KG_BF16, 8, 40, 1, 3, 3001, 128, 0, MASK_NONE, 0, 1, 0.f}, 0, 10},
        {{KG_BF16, 8, 8, 1, 8, 4000, 128, 0, MASK_EMPTY_ROWS, 2, 0, 0.f}, 23, 21},
        {{KG_F16, 1, 66, 2, 1, 33000, 64, 0, MASK_NONE, 0, 0, 0.f}, 0, 129},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        if (!kt_take(2)) /* sanitizer mode (kg_test.h): a seeded sample */
            continue;
        for (int on = 1; on >= -1; on -= 2) {
            kg_test_attn_dec_pair(on);
            kg_test_force_attn_splits(ctx, cs[i].forced);
            run_case_once(&cs[i].c);
            cr_assert_eq(kg_test_last_attn_variant(ctx), KG_ATTN_V_DECODE4, "case %zu: %s", i, path_name);
            const int took = kg_test_last_attn_dec_pair();
            cr_assert(on > 0 ? !at132 || took == (sm90 && kg_test_last_attn_tma()) : !took,
                      "case %zu, pair %d: took %d", i, on, took);
            if (took && at132)
                cr_assert_eq(kg_test_last_attn_splits(ctx), cs[i].splits, "case %zu: %d splits", i,
                             kg_test_last_attn_splits(ctx));
            if (took) /* its stages, and no padding to one block a multiprocessor */
                cr_assert(kg_test_last_attn_dec_stages() == (cs[i].c.D == 128 ? 2 : 3) &&
                              kg_test_last_attn_dec_spread() == 0,
                          "case %zu: %d stages, spread %d", i, kg_test_last_attn_dec_stages(),
                          kg_test_last_attn_dec_spread());
        }
    }
    kg_test_attn_dec_pair(0);
    kg_test_force_attn_splits(ctx, 0);
}

/* Pair changes where blocks run and how many stages they keep, not what
   they compute: its bits (forced, hook 1) equal the launch without pair's
   (hook -1) at the same split count (forced), run to run too (the same
   call twice), also where
   one split already fills the GPU (B 64 Hq 32 Hkv 8 Sq 16: 512 blocks, no
   partials) and with the combine kernel's lanes at 1 and 32. */
Test(attention, decode_pair_keeps_the_bits)
{
    int major = 0, minor = 0, sms = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, &major, &minor, &sms));
    /* (on 132 multiprocessors every case's planned grid is larger than the
       multiprocessors, so the candidate must have taken wherever the loads
       took bulk tensor copies: else this compares the default with itself) */
    const int at132 = major == 9 && minor == 0 && sms == 132;
    const struct {
        int B, Hq, Hkv, Sq, Sk, D, causal, lanes;
    } cs[] = {
        {2, 32, 1, 16, 3000, 128, 1, 0}, {4, 32, 8, 16, 5000, 128, 1, 0}, {8, 16, 4, 12, 2500, 64, 0, 0},
        {64, 32, 8, 16, 1200, 128, 1, 0}, {2, 32, 1, 16, 3000, 128, 0, 1}, {2, 32, 1, 16, 3000, 128, 0, 32},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        if (!kt_take(2)) /* sanitizer mode (kg_test.h): a seeded sample */
            continue;
        dec_io x;
        dec_io_open(&x, cs[i].B, cs[i].Hq, cs[i].Hkv, cs[i].Sq, cs[i].Sk, cs[i].D);
        uint16_t *o3 = malloc(x.nq * 2);
        const kg_attention_opts opts = {0.f, cs[i].causal};
        kg_test_attn_dec_lanes(cs[i].lanes);
        kg_test_attn_dec_pair(1);
        dec_io_run(&x, &opts, x.o1);
        const int took = kg_test_last_attn_dec_pair(), splits = kg_test_last_attn_splits(ctx);
        cr_assert_eq(kg_test_last_attn_variant(ctx), KG_ATTN_V_DECODE4);
        cr_assert(!at132 || took == kg_test_last_attn_tma(), "case %zu: pair took %d, bulk copies %d", i, took,
                  kg_test_last_attn_tma());
        dec_io_run(&x, &opts, o3);
        cr_assert(memcmp(x.o1, o3, x.nq * 2) == 0, "case %zu: the candidate's runs differ", i);
        dec_pair_bits_without_pair(&x, &opts, splits, 1, took ? "forced pair (took)" : "forced pair (not taken)", i);
        kg_test_attn_dec_lanes(0);
        free(o3);
        dec_io_close(&x);
    }
    kg_test_attn_dec_pair(0);
}

/* Session 33's rule (kg_attn_dec_pair_rule), the runtime's choice since
   round s34r1: the default launch (hook 0) against the float64 reference
   (run_case_once, lse included), where it takes the pair launch and where
   not (on 132 multiprocessors: planned there, the decision and splits
   asserted), and its bits: the same decision, splits and bits with the
   rule asked for (hook 2); equal to the forced pair launch's where it took
   and to the launch without pair (hook -1) where it did not; and where it
   took, equal to the launch without pair at the same split count (forced).
   Cases: MQA Sq 16 causal with B 8 (256 pair blocks: taken, 4 splits) and
   B 2 (160 blocks, 5 key tiles each against the 6 without pair: not
   taken), group 4 Sq 16 (one row tile a KV head: not taken), group 8 Sq 12
   at D 64 (taken, 8 splits), fully masked rows with group 16 Sq 8 (B 16:
   taken, 8 splits; B 8: 208 blocks, not taken), and 140 row tiles of one
   split, group 16 Sq 5 causal: at D 128 two waves against one pair wave
   (taken), at D 64 not (without pair, 3 stages unpadded past one wave, it
   already runs two blocks a multiprocessor). */
Test(attention, decode_pair_rule_matches_reference)
{
    int major = 0, minor = 0, sms = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, &major, &minor, &sms));
    const int at132 = major == 9 && minor == 0 && sms == 132;
    const struct {
        acase c;
        int take, splits;
    } cs[] = {
        {{KG_BF16, 8, 32, 1, 16, 3000, 128, 1, MASK_NONE, 0, 0, 0.f}, 1, 4},
        {{KG_BF16, 2, 32, 1, 16, 3000, 128, 1, MASK_NONE, 0, 0, 0.f}, 0, 8},
        {{KG_F16, 4, 32, 8, 16, 5000, 128, 0, MASK_NONE, 0, 0, 0.f}, 0, 4},
        {{KG_F16, 8, 16, 2, 12, 4000, 64, 0, MASK_NONE, 0, 0, 0.f}, 1, 8},
        {{KG_BF16, 16, 16, 1, 8, 4000, 128, 0, MASK_EMPTY_ROWS, 2, 0, 0.f}, 1, 8},
        {{KG_BF16, 8, 16, 1, 8, 4000, 128, 0, MASK_EMPTY_ROWS, 2, 0, 0.f}, 0, 8},
        {{KG_BF16, 70, 16, 1, 5, 300, 128, 1, MASK_NONE, 0, 0, 0.f}, 1, 1},
        {{KG_F16, 70, 16, 1, 5, 300, 64, 1, MASK_NONE, 0, 0, 0.f}, 0, 1},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        if (!kt_take(2)) /* sanitizer mode (kg_test.h): a seeded sample */
            continue;
        kg_test_attn_dec_pair(0); /* the runtime's choice */
        run_case_once(&cs[i].c);
        cr_assert_eq(kg_test_last_attn_variant(ctx), KG_ATTN_V_DECODE4, "case %zu: %s", i, path_name);
        const int took = kg_test_last_attn_dec_pair(), splits = kg_test_last_attn_splits(ctx);
        if (at132 && kg_test_last_attn_tma())
            cr_assert(took == cs[i].take && splits == cs[i].splits, "case %zu: took %d, %d splits; want %d, %d", i,
                      took, splits, cs[i].take, cs[i].splits);
        if (took)
            cr_assert(kg_test_last_attn_dec_stages() == (cs[i].c.D == 128 ? 2 : 3) &&
                          kg_test_last_attn_dec_spread() == 0,
                      "case %zu: %d stages, spread %d", i, kg_test_last_attn_dec_stages(),
                      kg_test_last_attn_dec_spread());
        if (cs[i].c.mask != MASK_NONE || cs[i].c.bshd) /* (the bits below: [B,H,S,D], no mask) */
            continue;
        dec_io x;
        dec_io_open(&x, cs[i].c.B, cs[i].c.Hq, cs[i].c.Hkv, cs[i].c.Sq, cs[i].c.Sk, cs[i].c.D);
        const kg_attention_opts opts = {0.f, cs[i].c.causal};
        kg_test_attn_dec_pair(0);
        dec_io_run(&x, &opts, x.o1);
        cr_assert(kg_test_last_attn_dec_pair() == took && kg_test_last_attn_splits(ctx) == splits, "case %zu", i);
        const int other[2] = {2, took ? 1 : -1};
        for (int k = 0; k < 2; k++) {
            kg_test_attn_dec_pair(other[k]);
            dec_io_run(&x, &opts, x.o2);
            cr_assert(kg_test_last_attn_dec_pair() == took && kg_test_last_attn_splits(ctx) == splits,
                      "case %zu, hook %d: took %d, %d splits", i, other[k], kg_test_last_attn_dec_pair(),
                      kg_test_last_attn_splits(ctx));
            cr_assert(memcmp(x.o1, x.o2, x.nq * 2) == 0, "case %zu (took %d): bits differ from the %s launch's", i,
                      took, other[k] == 2 ? "rule's (hook 2)" : took ? "forced pair" : "without pair");
        }
        if (took) /* the launch without pair at the same split count */
            dec_pair_bits_without_pair(&x, &opts, splits, 0, "the default (took pair)", i);
        dec_io_close(&x);
    }
    kg_test_attn_dec_pair(0);
}

TestSuite(attention, .init = gpu_setup, .fini = close_ctx, .timeout = 600);

/* Every generated kernel: dtype x head dim x {none, causal, mask}; GQA, uneven
   lengths (partial tiles of both), a padding mask with causal on top. */
/* one dtype of every_dtype_head_dim_and_mask_kind (three tests, so that a
   GPU run can take them in parallel processes) */
static void every_head_dim_and_mask_kind(int i)
{
    for (int j = 0; j < 5; j++) {
        if (!kt_take(4)) /* sanitizer mode (kg_test.h): a seeded sample */
            continue;
        acase none = {DTS[i], 2, 4, 2, 113, 203, DIMS[j], 0, MASK_NONE, 0, 0, 0.f};
        run_case(&none);
        acase causal = {DTS[i], 2, 4, 2, 203, 113, DIMS[j], 1, MASK_NONE, 0, 0, 0.f};
        run_case(&causal);
        acase mask = {DTS[i], 2, 4, 1, 113, 203, DIMS[j], j % 2, MASK_PAD, 4, 1, 0.f};
        run_case(&mask);
    }
}
Test(attention, every_dtype_head_dim_and_mask_kind) { every_head_dim_and_mask_kind(0); }
Test(attention, every_dtype_head_dim_and_mask_kind_f16) { every_head_dim_and_mask_kind(1); }
Test(attention, every_dtype_head_dim_and_mask_kind_bf16) { every_head_dim_and_mask_kind(2); }

/* TESTING.md's (Sq, Sk) pairs, causal and not, every dtype at D = 64 (the
   largest pair once per dtype at D = 128, not causal, to keep the CPU
   reference short); one dtype (f16 and bf16: causal or not) per test, f32
   under the old name, so that a GPU run can take them in parallel
   processes. */
static void sequence_lengths_of(int i, int causal0, int causal1)
{
    const int pairs[][2] = {{1, 1}, {3, 3}, {64, 1}, {239, 1}, {799, 3}, {113, 203}, {1023, 1024}, {1024, 1023}};
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
        for (int causal = causal0; causal <= causal1; causal++) {
            if (!kt_take(4)) /* sanitizer mode (kg_test.h): a seeded sample */
                continue;
            const int small = pairs[p][0] * pairs[p][1] < 100000;
            acase c = {DTS[i],
                       small ? 2 : 1,
                       small ? 3 : 2,
                       small ? 3 : 1,
                       pairs[p][0],
                       pairs[p][1],
                       64,
                       causal,
                       MASK_NONE,
                       0,
                       0,
                       0.f};
            run_case(&c);
        }
}
Test(attention, sequence_lengths) { sequence_lengths_of(0, 0, 1); }
Test(attention, sequence_lengths_f16) { sequence_lengths_of(1, 0, 0); }
Test(attention, sequence_lengths_f16_causal) { sequence_lengths_of(1, 1, 1); }
Test(attention, sequence_lengths_bf16) { sequence_lengths_of(2, 0, 0); }
Test(attention, sequence_lengths_bf16_causal) { sequence_lengths_of(2, 1, 1); }

Test(attention, long_sequence_4224)
{
    const int S = (int)kt_size(4224, 1100); /* sanitizer mode (kg_test.h): still 9 tiles of 128 */
    acase c = {KG_BF16, 1, 1, 1, S, S, 128, 0, MASK_NONE, 0, 0, 0.f};
    run_case(&c);
    acase f = {KG_F32, 1, 1, 1, S, S, 64, 1, MASK_NONE, 0, 0, 0.f};
    run_case(&f);
}

/* f32 over many key tiles (the split-TF32 kernel adds each tile's P V to
   the output by FFMA; a tensor-core accumulator over every tile would
   gather its truncation): 20000 keys at D 128, causal 16500 at D 64 with
   GQA in [B,S,H,D] views. */
Test(attention, f32_long_keys)
{
    acase a = {KG_F32, 1, 2, 1, 70, (int)kt_size(20000, 3000), 128, 0, MASK_NONE, 0, 0, 0.f};
    run_case(&a);
    acase b = {KG_F32, 1, 4, 2, 64, (int)kt_size(16500, 2500), 64, 1, MASK_NONE, 0, 1, 0.f};
    run_case(&b);
    /* the same call twice: the same bits (fixed order, no atomics) */
    const int vs[2] = {KG_ATTN_V_X3, KG_ATTN_V_X3}, tma[2] = {0, 0}, want[2] = {-1, -1};
    for (int j = 0; j < 5; j++) {
        const acase c = {KG_F32, 2, 8, 2, 300 + 7 * j, 1100 - 9 * j, DIMS[j], j % 2, MASK_NONE, 0, 0, 0.f};
        same_bits(&c, vs, tma, want);
    }
    kg_test_force_attn_variant(ctx, -1);
}

/* Rows with no visible key give 0 and lse -inf: from the mask, and from the
   causal rule when Sq > Sk (the first Sq - Sk queries see nothing). */
Test(attention, fully_masked_rows_are_zero_not_nan)
{
    for (int i = 0; i < 3; i++) {
        acase m = {DTS[i], 1, 2, 2, 70, 90, 64, 0, MASK_EMPTY_ROWS, 2, 0, 0.f};
        run_case(&m);
        acase mc = {DTS[i], 1, 2, 2, 70, 90, 128, 1, MASK_EMPTY_ROWS, 2, 0, 0.f};
        run_case(&mc);
        acase c = {DTS[i], 2, 2, 1, 150, 40, 32, 1, MASK_NONE, 0, 0, 0.f};
        run_case(&c);
        acase r = {DTS[i], 2, 3, 3, 77, 130, 96, 0, MASK_RANDOM, 4, 0, 0.f};
        run_case(&r);
    }
}

Test(attention, no_keys_gives_zero_and_minus_inf)
{
    for (int i = 0; i < 3; i++) {
        acase c = {DTS[i], 1, 2, 2, 5, 0, 64, 0, MASK_NONE, 0, 0, 0.f};
        run_case(&c);
    }
}

Test(attention, strided_layouts_mqa_masks_and_scale)
{
    for (int i = 0; i < 3; i++) {
        if (!kt_take(2)) /* sanitizer mode (kg_test.h): a seeded sample */
            continue;
        acase a = {DTS[i], 2, 8, 1, 100, 150, 128, 0, MASK_NONE, 0, 1, 0.3f};
        run_case(&a);
        acase b = {DTS[i], 2, 4, 2, 64, 64, 256, 1, MASK_RANDOM, 1, 1, 0.f};
        run_case(&b);
        acase d = {DTS[i], 1, 2, 1, 90, 200, 64, 1, MASK_RANDOM, 2, 0, 0.f};
        run_case(&d);
        /* the head dims whose Hopper tiles are padded to whole panels */
        acase e = {DTS[i], 2, 4, 2, 130, 300, 32, 1, MASK_NONE, 0, 1, 0.f};
        run_case(&e);
        acase f = {DTS[i], 1, 6, 3, 200, 129, 96, 0, MASK_RANDOM, 4, 1, 0.f};
        run_case(&f);
    }
}

/* A negative scale (the Hopper kernels take the row maximum of the raw
   scores only for a positive one, folding the scale into the exponent's
   FFMA; a negative one keeps the scaled-maximum path), every head dim,
   causal and not, on every variant; key ranges of whole tiles and a
   partial one. */
Test(attention, negative_scale_every_head_dim)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++)
            for (int causal = 0; causal < 2; causal++) {
                if (!kt_take(4)) /* sanitizer mode (kg_test.h): a seeded sample */
                    continue;
                acase c = {DTS[i], 1, 2, 1, 150, causal ? 256 : 260, DIMS[j], causal, MASK_NONE, 0, 0, -0.11f};
                run_case(&c);
            }
}

Test(attention, captured_in_a_cuda_graph_and_replayed)
{
    const int B = 1, H = 2, S = 200, D = 64;
    const int64_t n = (int64_t)B * H * S * D;
    uint16_t *hq = malloc(n * 2), *ho = malloc(n * 2), *ho2 = malloc(n * 2);
    void *dq = kt_alloc(ctx, n * 2), *dk = kt_alloc(ctx, n * 2), *dv = kt_alloc(ctx, n * 2),
         *dout = kt_alloc(ctx, n * 2);
    kg_tensor tq = kg_tensor_contiguous(dq, KG_BF16, 4, KT_SHAPE(B, H, S, D)),
              tk = kg_tensor_contiguous(dk, KG_BF16, 4, KT_SHAPE(B, H, S, D)),
              tv = kg_tensor_contiguous(dv, KG_BF16, 4, KT_SHAPE(B, H, S, D)),
              to = kg_tensor_contiguous(dout, KG_BF16, 4, KT_SHAPE(B, H, S, D));
    kg_attention_opts o = {0.f, 1};
    for (int64_t i = 0; i < n; i++)
        hq[i] = kt_to_bf16(kt_uniform(&rng, -2, 2));
    kt_upload(ctx, dq, hq, n * 2);
    kt_upload(ctx, dk, hq, n * 2);
    kt_upload(ctx, dv, hq, n * 2);
    KT_OK(ctx, kg_attention(ctx, &to, NULL, &tq, &tk, &tv, NULL, &o)); /* loads the module outside capture */
    KT_OK(ctx, kg_sync(ctx));
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    KT_OK(ctx, kg_set_stream(ctx, (kg_stream)s));
    cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    KT_OK(ctx, kg_attention(ctx, &to, NULL, &tq, &tk, &tv, NULL, &o));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    cr_assert_eq(cudaStreamEndCapture(s, &g), cudaSuccess);
    cr_assert_eq(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
    for (int rep = 0; rep < 2; rep++) {
        for (int64_t i = 0; i < n; i++)
            hq[i] = kt_to_bf16(kt_uniform(&rng, -2, 2));
        kt_upload(ctx, dq, hq, n * 2);
        KT_OK(ctx, kg_memset(ctx, dout, 0xff, n * 2));
        cr_assert_eq(cudaGraphLaunch(ge, s), cudaSuccess);
        KT_OK(ctx, kg_sync(ctx));
        kt_download(ctx, ho, dout, n * 2);
        /* the same call outside the graph must give the same bits */
        KT_OK(ctx, kg_attention(ctx, &to, NULL, &tq, &tk, &tv, NULL, &o));
        KT_OK(ctx, kg_sync(ctx));
        kt_download(ctx, ho2, dout, n * 2);
        cr_assert(memcmp(ho, ho2, n * 2) == 0, "replay %d differs from a direct call (seed %llu)", rep,
                  (unsigned long long)kt_seed());
        for (int64_t i = 0; i < n; i++)
            cr_assert(!isnan(kt_from_bf16(ho[i])), "replay %d: NaN at %lld", rep, (long long)i);
    }
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    /* decode (Sq 1, 4 query heads per KV head, split keys): the decode kernel
       and the combine kernel back to back in one graph */
    for (int mode = 1; mode <= 2; mode++) {
        const int Hq = 8, Hkv = 2, Sk = 3000;
        void *dk2 = kt_alloc(ctx, (size_t)Hkv * Sk * D * 2), *dv2 = kt_alloc(ctx, (size_t)Hkv * Sk * D * 2);
        uint16_t *hk = malloc((size_t)Hkv * Sk * D * 2);
        for (int64_t i = 0; i < (int64_t)Hkv * Sk * D; i++)
            hk[i] = kt_to_bf16(kt_uniform(&rng, -2, 2));
        kt_upload(ctx, dk2, hk, (size_t)Hkv * Sk * D * 2);
        kt_upload(ctx, dv2, hk, (size_t)Hkv * Sk * D * 2);
        kg_tensor q1 = kg_tensor_contiguous(dq, KG_BF16, 4, KT_SHAPE(1, Hq, 1, D)),
                  k1 = kg_tensor_contiguous(dk2, KG_BF16, 4, KT_SHAPE(1, Hkv, Sk, D)),
                  v1 = kg_tensor_contiguous(dv2, KG_BF16, 4, KT_SHAPE(1, Hkv, Sk, D)),
                  o1 = kg_tensor_contiguous(dout, KG_BF16, 4, KT_SHAPE(1, Hq, 1, D));
        kg_test_force_attn_combine(ctx, mode);
        kg_test_force_attn_splits(ctx, 12);
        KT_OK(ctx, kg_attention(ctx, &o1, NULL, &q1, &k1, &v1, NULL, NULL));
        KT_OK(ctx, kg_sync(ctx));
        cr_assert_eq(kg_test_last_attn_combine(ctx), mode);
        kt_download(ctx, ho2, dout, (size_t)Hq * D * 2);
        KT_OK(ctx, kg_memset(ctx, dout, 0xff, (size_t)Hq * D * 2));
        cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
        KT_OK(ctx, kg_attention(ctx, &o1, NULL, &q1, &k1, &v1, NULL, NULL));
        KT_OK(ctx, kg_attention(ctx, &o1, NULL, &q1, &k1, &v1, NULL, NULL));
        cr_assert_eq(cudaStreamEndCapture(s, &g), cudaSuccess);
        cr_assert_eq(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
        cr_assert_eq(cudaGraphLaunch(ge, s), cudaSuccess);
        KT_OK(ctx, kg_sync(ctx));
        kt_download(ctx, ho, dout, (size_t)Hq * D * 2);
        cr_assert(memcmp(ho, ho2, (size_t)Hq * D * 2) == 0, "decode graph (merge %d) differs from a direct call", mode);
        cudaGraphExecDestroy(ge);
        cudaGraphDestroy(g);
        kg_test_force_attn_splits(ctx, 0);
        kg_test_force_attn_combine(ctx, 0);
        free(hk);
        kg_free(ctx, dk2);
        kg_free(ctx, dv2);
    }
    KT_OK(ctx, kg_set_stream(ctx, NULL));
    cudaStreamDestroy(s);
    free(hq);
    free(ho);
    free(ho2);
    kg_free(ctx, dq);
    kg_free(ctx, dk);
    kg_free(ctx, dv);
    kg_free(ctx, dout);
}

/* ---- Session 30: the persistent Hopper kernels' per-tile trace, the tile
   order across batches and the late claim (kg_attn_persist_sched: the plain
   persistent variant's causal launches; kg_test_attn_xorder / _lclaim) -- */

static int is_persist_variant(int v)
{
    return v == KG_ATTN_V_HOPPER_PERSIST || v == KG_ATTN_V_HOPPER_PERSIST_PP || v == KG_ATTN_V_HOPPER_PERSIST_BASE ||
           v == KG_ATTN_V_HOPPER_PERSIST_F2 || v == KG_ATTN_V_HOPPER_PERSIST_TS;
}

/* Session 30's schedule configurations: 0-3 forced, bit 0 the tile order
   across batches (causal launches only), bit 1 the late claim, each off
   (-1: the order and claim before session 30) where its bit is 0;
   XCFG_RULE the runtime's rule (hooks 0). */
#define XCFG_RULE 4
static void set_xcfg(int cfg)
{
    kg_test_attn_xorder(cfg == XCFG_RULE ? 0 : cfg & 1 ? 1 : -1);
    kg_test_attn_lclaim(cfg == XCFG_RULE ? 0 : cfg >> 1 & 1 ? 1 : -1);
}

/* the flags a launch of variant v takes in configuration cfg: bit 0 the
   order across batches, bit 1 the late claim (the rule: both on causal
   launches of the plain persistent variant and of ts, neither elsewhere) */
static int xcfg_flags(int cfg, int v, int causal)
{
    const int c =
        cfg == XCFG_RULE ? ((v == KG_ATTN_V_HOPPER_PERSIST || v == KG_ATTN_V_HOPPER_PERSIST_TS) && causal ? 3 : 0) : cfg;
    return (causal ? c & 1 : 0) | (c & 2);
}

/* Every persistent variant generated for each case, forced, in
   configuration cfg, against the float64 reference with lse
   (run_case_once). */
static void xorder_reference(const acase *cs, int n, int cfg)
{
    set_xcfg(cfg);
    for (int i = 0; i < n; i++) {
        const acase *c = &cs[i];
        int slot = 0;
        while (slot < 4 && DIMS[slot] != c->D)
            slot++;
        const kg_attn_kind kind = c->causal ? KG_ATTN_CAUSAL : KG_ATTN_NONE;
        int taken = 0;
        for (int v = 0; v < KG_ATTN_V_COUNT; v++) {
            if (!is_persist_variant(v) || kg_attn_table[v][c->dt][slot][kind].threads == 0)
                continue;
            kg_test_force_attn_variant(ctx, v);
            run_case_once(c);
            cr_assert_eq(kg_test_last_attn_variant(ctx), v, "forcing the %s variant did not take",
                         kg_attn_variant_names[v]);
            const int f = xcfg_flags(cfg, v, c->causal);
            cr_assert_eq(kg_test_last_attn_xorder(), f & 1, "%s cfg %d: the order across batches %s",
                         kg_attn_variant_names[v], cfg, f & 1 ? "not taken" : "taken though off");
            cr_assert_eq(kg_test_last_attn_lclaim(), f >> 1, "%s cfg %d: the late claim %s", kg_attn_variant_names[v],
                         cfg, f >> 1 ? "not taken" : "taken though off");
            taken++;
        }
        cr_assert_gt(taken, 0, "case %d: no persistent variant generated", i);
    }
    kg_test_force_attn_variant(ctx, -1);
    set_xcfg(XCFG_RULE);
    /* the hooks back to the runtime's rule: the plain persistent kernel's
       causal launch (the runtime's choice at D 64) takes both, its launch
       that is not causal neither */
    for (int causal = 1; causal >= 0; causal--) {
        const acase c = {KG_BF16, 2, 2, 2, 130, 130, 64, causal, MASK_NONE, 0, 0, 0.f};
        run_case_once(&c);
        cr_assert_eq(kg_test_last_attn_variant(ctx), KG_ATTN_V_HOPPER_PERSIST, "D 64: %s",
                     kg_attn_variant_names[kg_test_last_attn_variant(ctx)]);
        cr_assert_eq(kg_test_last_attn_xorder(), causal);
        cr_assert_eq(kg_test_last_attn_lclaim(), causal);
    }
}

/* D 32-128, B 2-5 (the order runs across batches), GQA and MQA, lengths off
   the tiles, Sq != Sk both ways (rows that see no key: 0 and lse -inf), a
   [B,S,H,D] view */
static const acase xorder_cases[6] = {
    {KG_BF16, 3, 4, 2, 333, 333, 64, 1, MASK_NONE, 0, 0, 0.f},
    {KG_F16, 2, 3, 3, 200, 517, 128, 1, MASK_NONE, 0, 1, 0.f},
    {KG_BF16, 2, 4, 1, 450, 260, 96, 1, MASK_NONE, 0, 0, 0.f},
    {KG_BF16, 5, 2, 1, 300, 301, 32, 1, MASK_NONE, 0, 0, 0.f},
    {KG_F16, 2, 6, 2, 700, 700, 64, 1, MASK_NONE, 0, 1, 0.f},
    {KG_BF16, 4, 3, 3, 640, 640, 128, 1, MASK_NONE, 0, 0, 0.f},
};

/* the same, not causal (D 32-128) */
static const acase xorder_nc_cases[4] = {
    {KG_BF16, 3, 4, 2, 333, 333, 64, 0, MASK_NONE, 0, 0, 0.f},
    {KG_F16, 2, 3, 3, 200, 517, 128, 0, MASK_NONE, 0, 1, 0.f},
    {KG_BF16, 2, 4, 1, 450, 260, 96, 0, MASK_NONE, 0, 0, 0.f},
    {KG_BF16, 5, 2, 1, 300, 301, 32, 0, MASK_NONE, 0, 0, 0.f},
};

/* The runtime's rule (hooks 0): every persistent variant forced on the
   causal cases above and on B 1 ones (odd lengths, GQA, Sq != Sk both ways,
   a [B,S,H,D] view), against the float64 reference with lse: the plain
   persistent kernel with the order across batches and the late claim
   (asserted taken), pp, base and f2 with neither (asserted); not causal,
   neither anywhere. */
Test(attention, prefill_default_sched_matches_reference)
{
    if (!on_sm90())
        cr_skip_test("the Hopper variants run on compute capability 9.0 only");
    xorder_reference(xorder_cases, 6, XCFG_RULE);
    const acase b1[3] = {
        {KG_BF16, 1, 6, 2, 777, 777, 64, 1, MASK_NONE, 0, 0, 0.f},
        {KG_F16, 1, 4, 4, 300, 611, 128, 1, MASK_NONE, 0, 1, 0.f},
        {KG_BF16, 1, 5, 1, 513, 200, 32, 1, MASK_NONE, 0, 0, 0.f},
    };
    xorder_reference(b1, 3, XCFG_RULE);
    xorder_reference(xorder_nc_cases, 4, XCFG_RULE);
}

Test(attention, prefill_xorder_matches_reference)
{
    if (!on_sm90())
        cr_skip_test("the Hopper variants run on compute capability 9.0 only");
    xorder_reference(xorder_cases, 6, 1);
}

/* both forced together on the same cases, and the late claim alone where
   nothing is causal (D 32-128, every persistent variant: plain, base, f2) */
Test(attention, prefill_lclaim_matches_reference)
{
    if (!on_sm90())
        cr_skip_test("the Hopper variants run on compute capability 9.0 only");
    xorder_reference(xorder_cases, 6, 3);
    xorder_reference(xorder_nc_cases, 4, 2);
}

/* A persistent launch (variant v forced; -1 the runtime's) in the
   configuration before session 30 (neither), each forced one (order across
   batches, late claim, both) and the runtime's rule (both on the plain
   persistent kernel's causal launches, neither elsewhere: asserted), each
   traced (kg_test_attn_trace: 4 words a block, then 4 a work tile) and once
   untraced: the ten outputs and lse bit for bit the first's (a tile's
   arithmetic does not depend on the order or the claim; the outputs
   poisoned first, so a tile not taken shows), and each trace says
   every work tile was taken exactly once: every tile's record written
   (taken, done, a block of the grid, inside the block's start and end), the
   blocks' tile counts summing to the tiles, every block's stamps in order,
   the tiles' key-tile counts those of the launch's query blocks (B x Hq of
   each), no word past the grid and the tiles. */
static void xorder_bits_and_tiles(kg_dtype dt, int B, int Hq, int Hkv, int S, int D, int causal, int v, int want)
{
    int sms = 0, slot = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, NULL, NULL, &sms));
    while (slot < 4 && DIMS[slot] != D)
        slot++;
    const kg_attn_kind kind = causal ? KG_ATTN_CAUSAL : KG_ATTN_NONE;
    const int64_t nq = (int64_t)B * Hq * S * D, nk = (int64_t)B * Hkv * S * D, nl = (int64_t)B * Hq * S;
    uint16_t *h = malloc((nq > nk ? nq : nk) * 2), *o[2] = {malloc(nq * 2), malloc(nq * 2)};
    float *l[2] = {malloc(nl * 4), malloc(nl * 4)};
    void *dq = kt_alloc(ctx, nq * 2), *dk = kt_alloc(ctx, nk * 2), *dv = kt_alloc(ctx, nk * 2),
         *dout = kt_alloc(ctx, nq * 2), *dl = kt_alloc(ctx, nl * 4);
    for (int t = 0; t < 3; t++) {
        const int64_t n = t == 0 ? nq : nk;
        for (int64_t i = 0; i < n; i++)
            h[i] = dt == KG_F16 ? kt_to_f16(kt_uniform(&rng, -2, 2)) : kt_to_bf16(kt_uniform(&rng, -2, 2));
        kt_upload(ctx, t == 0 ? dq : t == 1 ? dk : dv, h, n * 2);
    }
    kg_tensor tq = kg_tensor_contiguous(dq, dt, 4, KT_SHAPE(B, Hq, S, D)),
              tk = kg_tensor_contiguous(dk, dt, 4, KT_SHAPE(B, Hkv, S, D)),
              tv = kg_tensor_contiguous(dv, dt, 4, KT_SHAPE(B, Hkv, S, D)),
              to = kg_tensor_contiguous(dout, dt, 4, KT_SHAPE(B, Hq, S, D)),
              tl = kg_tensor_contiguous(dl, KG_F32, 3, KT_SHAPE(B, Hq, S));
    const kg_attention_opts opts = {0.f, causal};
    kg_test_force_attn_variant(ctx, v);
    for (int run = 0; run < 10; run++) {
        const int cfg = run % 5, traced = run < 5;
        set_xcfg(cfg);
        KT_OK(ctx, kg_attention(ctx, &to, &tl, &tq, &tk, &tv, NULL, &opts)); /* (the variant taken, its bm) */
        KT_OK(ctx, kg_sync(ctx));
        const int vv = kg_test_last_attn_variant(ctx);
        cr_assert(is_persist_variant(vv) && (v < 0 || vv == v) && (want < 0 || vv == want), "variant %s",
                  kg_attn_variant_names[vv]);
        const int f = xcfg_flags(cfg, vv, causal);
        cr_assert_eq(kg_test_last_attn_xorder(), f & 1, "%s cfg %d", kg_attn_variant_names[vv], cfg);
        cr_assert_eq(kg_test_last_attn_lclaim(), f >> 1, "%s cfg %d", kg_attn_variant_names[vv], cfg);
        const int bm = kg_attn_table[vv][dt][slot][kind].bm, nmb = (S + bm - 1) / bm, units = nmb * Hq * B,
                  grid = units < sms ? units : sms;
        const size_t words = 4 * ((size_t)grid + units) + 64; /* 64 past the end: must stay 0 */
        unsigned long long *dt_ = NULL, *tr = malloc(words * 8);
        if (traced) {
            dt_ = kt_alloc(ctx, words * 8);
            KT_OK(ctx, kg_memset(ctx, dt_, 0, words * 8));
            kg_test_attn_trace(ctx, dt_);
        }
        KT_OK(ctx, kg_memset(ctx, dout, 0xff, nq * 2));
        KT_OK(ctx, kg_memset(ctx, dl, 0xff, nl * 4));
        KT_OK(ctx, kg_attention(ctx, &to, &tl, &tq, &tk, &tv, NULL, &opts));
        kg_test_attn_trace(ctx, NULL);
        KT_OK(ctx, kg_sync(ctx));
        kt_download(ctx, o[run > 0], dout, nq * 2);
        kt_download(ctx, l[run > 0], dl, nl * 4);
        if (run > 0)
            cr_assert(memcmp(o[0], o[1], nq * 2) == 0 && memcmp(l[0], l[1], nl * 4) == 0,
                      "%s %s B%d Hq%d Hkv%d S%d D%d causal %d: %scfg %d (xorder %d, late claim %d): bits differ "
                      "from the traced configuration before session 30",
                      kg_attn_variant_names[vv], kg_dtype_name(dt), B, Hq, Hkv, S, D, causal, traced ? "traced, " : "",
                      cfg, f & 1, f >> 1);
        if (traced) {
            kt_download(ctx, tr, dt_, words * 8);
            /* blocks */
            unsigned long long tiles = 0;
            for (int i = 0; i < grid; i++) {
                const unsigned long long *x = tr + 4 * i;
                cr_assert(x[0] > 0 && x[0] <= x[1] && x[1] <= x[2] && x[3] >= 1,
                          "%s cfg %d block %d: stamps %llu %llu %llu, %llu tiles", kg_attn_variant_names[vv], cfg, i,
                          x[0], x[1], x[2], x[3]);
                tiles += x[3];
            }
            cr_assert_eq(tiles, (unsigned long long)units, "%s cfg %d: the blocks took %llu tiles, want %d",
                         kg_attn_variant_names[vv], cfg, tiles, units);
            /* tiles: each recorded (so each taken: with the counts above,
               exactly once), by a block of the grid, inside its span */
            int *per_keys = calloc(4096, sizeof(int)), *want_keys = calloc(4096, sizeof(int));
            const unsigned long long *w = tr + 4 * (size_t)grid;
            for (int t = 0; t < units; t++) {
                const unsigned long long *x = w + 4 * t;
                cr_assert(x[0] > 0 && x[1] >= x[0] && x[2] < (unsigned long long)grid && x[3] < 4096,
                          "%s cfg %d tile %d of %d: taken %llu, done %llu, block %llu, %llu key tiles",
                          kg_attn_variant_names[vv], cfg, t, units, x[0], x[1], x[2], x[3]);
                cr_assert(x[0] >= tr[4 * x[2]] && x[1] <= tr[4 * x[2] + 2],
                          "%s cfg %d tile %d: outside its block's start and end", kg_attn_variant_names[vv], cfg, t);
                per_keys[x[3]]++;
            }
            /* the query blocks' key tiles (Sq = Sk; causal: the D 32 / 64
               three-warpgroup kernels shift the blocks up by the padding) */
            const int bn = kg_attn_table[vv][dt][slot][kind].bn;
            const int shift =
                (vv == KG_ATTN_V_HOPPER_PERSIST || vv == KG_ATTN_V_HOPPER_PERSIST_BASE) && D <= 64 ? nmb * bm - S : 0;
            for (int mb = 0; mb < nmb; mb++) {
                int end = causal ? mb * bm - shift + bm : S;
                end = end < S ? end : S;
                want_keys[end > 0 ? (end + bn - 1) / bn : 0] += B * Hq;
            }
            for (int k = 0; k < 4096; k++)
                cr_assert_eq(per_keys[k], want_keys[k], "%s cfg %d: %d tiles of %d key tiles, want %d",
                             kg_attn_variant_names[vv], cfg, per_keys[k], k, want_keys[k]);
            for (size_t i = 4 * ((size_t)grid + units); i < words; i++)
                cr_assert_eq(tr[i], 0ull, "%s: a word past the tiles written", kg_attn_variant_names[vv]);
            free(per_keys);
            free(want_keys);
            kg_free(ctx, dt_);
        }
        free(tr);
    }
    kg_test_force_attn_variant(ctx, -1);
    set_xcfg(XCFG_RULE);
    free(h);
    free(o[0]);
    free(o[1]);
    free(l[0]);
    free(l[1]);
    void *dev[5] = {dq, dk, dv, dout, dl};
    for (int i = 0; i < 5; i++)
        kg_free(ctx, dev[i]);
}

/* The round's shape (B 4 H 16 S 1k D 64: one section of all 64 pairs), and
   shapes whose sections of pairs (16 MB of K + V at most) cut across
   batches: B 3 Hq 4 Hkv 2 S 8200 D 64 (G 7: two sections of 6 of the 12
   pairs; the shifted first block), f16 B 2 Hq 7 S 6000 D 128 (the f2
   kernel, the runtime's beyond 4096 keys; G 5: sections of 5, 5 and 4 of
   14); bf16 B 2 Hq 4 S 3000 D 128 (the pp kernel, the runtime's from 2049
   to 4096 keys): the runtime's variants, whose rule leaves f2 and pp as
   before; B 1 (fewer tiles than two a block: the late claim's case); every
   persistent variant at D 64-128 forced on a short shape (ping-pong at D
   96 / 128, base, f2), causal and not. */
Test(attention, prefill_xorder_bits_and_every_tile_once)
{
    if (!on_sm90())
        cr_skip_test("the Hopper variants run on compute capability 9.0 only");
    xorder_bits_and_tiles(KG_BF16, 4, 16, 16, 1024, 64, 1, -1, KG_ATTN_V_HOPPER_PERSIST);
    xorder_bits_and_tiles(KG_BF16, 3, 4, 2, 8200, 64, 1, -1, KG_ATTN_V_HOPPER_PERSIST);
    xorder_bits_and_tiles(KG_F16, 2, 7, 7, 6000, 128, 1, -1, KG_ATTN_V_HOPPER_PERSIST_F2);
    xorder_bits_and_tiles(KG_BF16, 2, 4, 4, 3000, 128, 1, -1, KG_ATTN_V_HOPPER_PERSIST_PP);
    xorder_bits_and_tiles(KG_BF16, 1, 16, 16, 2048, 64, 1, -1, KG_ATTN_V_HOPPER_PERSIST);
    const int ds[3] = {64, 96, 128};
    for (int i = 0; i < 3; i++) {
        int slot = 0;
        while (slot < 4 && DIMS[slot] != ds[i])
            slot++;
        for (int causal = 0; causal < 2; causal++)
            for (int v = 0; v < KG_ATTN_V_COUNT; v++)
                if (is_persist_variant(v) &&
                    kg_attn_table[v][KG_BF16][slot][causal ? KG_ATTN_CAUSAL : KG_ATTN_NONE].threads != 0)
                    xorder_bits_and_tiles(KG_BF16, 3, 4, 2, 1100, ds[i], causal, v, -1);
    }
}

/* The prefill trace hook on a grid kernel (one work tile a block; no tile
   words): every block's stamps in order, one tile each, no block past the
   grid traced, the bits those of the untraced call. */
Test(attention, prefill_trace_hook_grid_kernel)
{
    if (!on_sm90())
        cr_skip_test("the Hopper variants run on compute capability 9.0 only");
    const int B = 2, H = 16, S = 1024, D = 64;
    const int64_t n = (int64_t)B * H * S * D;
    uint16_t *h = malloc(n * 2), *o1 = malloc(n * 2), *o2 = malloc(n * 2);
    void *dq = kt_alloc(ctx, n * 2), *dk = kt_alloc(ctx, n * 2), *dv = kt_alloc(ctx, n * 2),
         *dout = kt_alloc(ctx, n * 2), *dt = kt_alloc(ctx, 4 * 8 * 4096);
    for (int t = 0; t < 3; t++) {
        for (int64_t i = 0; i < n; i++)
            h[i] = kt_to_bf16(kt_uniform(&rng, -2, 2));
        kt_upload(ctx, t == 0 ? dq : t == 1 ? dk : dv, h, n * 2);
    }
    kg_tensor tq = kg_tensor_contiguous(dq, KG_BF16, 4, KT_SHAPE(B, H, S, D)),
              tk = kg_tensor_contiguous(dk, KG_BF16, 4, KT_SHAPE(B, H, S, D)),
              tv = kg_tensor_contiguous(dv, KG_BF16, 4, KT_SHAPE(B, H, S, D)),
              to = kg_tensor_contiguous(dout, KG_BF16, 4, KT_SHAPE(B, H, S, D));
    const kg_attention_opts o = {0.f, 1};
    unsigned long long *tr = malloc(4 * 8 * 4096);
    kg_test_force_attn_variant(ctx, KG_ATTN_V_HOPPER);
    KT_OK(ctx, kg_attention(ctx, &to, NULL, &tq, &tk, &tv, NULL, &o));
    KT_OK(ctx, kg_sync(ctx));
    cr_assert_eq(kg_test_last_attn_variant(ctx), KG_ATTN_V_HOPPER);
    kt_download(ctx, o1, dout, n * 2);
    KT_OK(ctx, kg_memset(ctx, dt, 0, 4 * 8 * 4096));
    KT_OK(ctx, kg_memset(ctx, dout, 0xff, n * 2));
    kg_test_attn_trace(ctx, dt);
    KT_OK(ctx, kg_attention(ctx, &to, NULL, &tq, &tk, &tv, NULL, &o));
    kg_test_attn_trace(ctx, NULL);
    KT_OK(ctx, kg_sync(ctx));
    kt_download(ctx, o2, dout, n * 2);
    cr_assert(memcmp(o1, o2, n * 2) == 0, "the traced call's bits differ");
    kt_download(ctx, tr, dt, 4 * 8 * 4096);
    const int bm = kg_attn_table[KG_ATTN_V_HOPPER][KG_BF16][1][KG_ATTN_CAUSAL].bm, blocks = (S + bm - 1) / bm * H * B;
    for (int i = 0; i < 4096; i++) {
        const unsigned long long *x = tr + 4 * i;
        if (i >= blocks) {
            cr_assert(x[0] == 0 && x[1] == 0 && x[2] == 0 && x[3] == 0, "block %d of %d traced", i, blocks);
            continue;
        }
        cr_assert(x[0] > 0 && x[0] <= x[1] && x[1] <= x[2] && x[3] == 1, "block %d: stamps %llu %llu %llu, %llu tiles",
                  i, x[0], x[1], x[2], x[3]);
    }
    kg_test_force_attn_variant(ctx, -1);
    free(h);
    free(o1);
    free(o2);
    free(tr);
    void *dev[5] = {dq, dk, dv, dout, dt};
    for (int i = 0; i < 5; i++)
        kg_free(ctx, dev[i]);
}
