/*
 * test_findings.c - one CPU regression test per finding of the 2026-12-01
 * fuzzing campaign (issue 13), each reproduced on a context without a
 * device: a crash, undefined behaviour or a wrong acceptance before the
 * checked geometry layer; now a specific KG_ERR_INVALID_ARGUMENT (or a
 * documented result for the helpers) with nothing launched. The fuzz
 * corpus keeps the raw inputs (tests/fuzz/corpus/<target>/finding-*).
 */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "kg_test.h"
#include "kg_attention.h"
#include "kg_core.h"
#include "kg_ops_core.h"  /* kg_add */
#include "kg_ops_unary.h" /* kg_neg */
#include "kg_reduce.h"

static kg_context *ctx;
static void open_without_device(void) { ctx = kt_open_without_device(); }
static void close_ctx(void) { kg_close(ctx); }

TestSuite(findings, .init = open_without_device, .fini = close_ctx);

static kg_tensor strided(void *data, kg_dtype dt, int nd, const int64_t *shape, const int64_t *strides)
{
    kg_tensor t = kg_tensor_contiguous(data, dt, nd, shape);
    for (int d = 0; d < nd; d++)
        t.strides[d] = strides[d];
    return t;
}

/* Refused with KG_ERR_INVALID_ARGUMENT and exactly the message `text`
   (TESTING.md, "Errors are exact"): a refusal for another reason (another
   check that happens to fire first) fails. */
#define REFUSED(call, text) KT_EXPECT(ctx, call, KG_ERR_INVALID_ARGUMENT, text)

/* The crash: SIGFPE in the split planner (cdiv overflow, then a division
   by zero in fit_partials). */
Test(findings, sum_of_int64_max_elements_is_refused_not_a_crash)
{
    kg_tensor in = kg_tensor_contiguous(KT_DEV(0), KG_F32, 1, KT_SHAPE(INT64_MAX));
    kg_tensor out = kg_tensor_contiguous(KT_DEV(0), KG_F32, 0, NULL);
    out.data = (void *)(uintptr_t)0x1000; /* apart from in */
    REFUSED(kg_sum(ctx, &out, &in, NULL, 0, 0),
            "invalid argument: in: shape [9223372036854775807] spans more than 2^63 bytes (strides [1], 4-byte f32 "
            "elements)");
}

/* Two indices at one address after the extent wrapped: accepted before. */
Test(findings, wrapping_strides_do_not_hide_self_overlap)
{
    kg_tensor out = strided(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 8), KT_SHAPE(INT64_MAX, INT64_MAX));
    kg_tensor a = kg_tensor_contiguous(KT_DEV(0x100000), KG_F32, 2, KT_SHAPE(4, 8));
    REFUSED(kg_add(ctx, &out, &a, &a),
            "invalid argument: out: shape [4,8] spans more than 2^63 bytes (strides "
            "[9223372036854775807,9223372036854775807], 4-byte f32 elements)");
}

/* An out and an input at one address, not in place: the extent wrapped and
   the alias check passed. */
Test(findings, wrapping_extent_does_not_hide_an_alias)
{
    kg_tensor out = strided(KT_DEV(0), KG_F32, 2, KT_SHAPE(2, 3), KT_SHAPE(INT64_MAX / 2, 1));
    kg_tensor a = strided(KT_DEV(0), KG_F32, 2, KT_SHAPE(2, 3), KT_SHAPE(1, 2));
    REFUSED(kg_add(ctx, &out, &a, &a), "invalid argument: out: shape [2,3] spans more than 2^63 bytes (strides "
                                       "[4611686018427387903,1], 4-byte f32 elements)");
}

/* Attention's stride-in-bytes product overflowed. */
Test(findings, attention_strides_in_bytes_do_not_overflow)
{
    const int64_t s[] = {2, 2, 4, 64};
    kg_tensor q = strided(KT_DEV(0), KG_F32, 4, s, KT_SHAPE(INT64_MAX / 3, 512, 64, 1));
    kg_tensor k = kg_tensor_contiguous(KT_DEV(0x100000), KG_F32, 4, s);
    kg_tensor v = kg_tensor_contiguous(KT_DEV(0x200000), KG_F32, 4, s);
    kg_tensor o = kg_tensor_contiguous(KT_DEV(0x300000), KG_F32, 4, s);
    REFUSED(kg_attention(ctx, &o, NULL, &q, &k, &v, NULL, NULL),
            "invalid argument: q: shape [2,2,4,64] spans more than 2^63 bytes (strides "
            "[3074457345618258602,512,64,1], 4-byte f32 elements)");
}

/* kg_attention of q, k, v f16 [1, 2, 4, 64] at separate fake addresses (0,
   1 MiB, 2 MiB) into o, with opts: refused (KG_ERR_INVALID_ARGUMENT) with
   exactly the message `text`. */
static const int64_t attn_shape[] = {1, 2, 4, 64};
static void attn_refused(const kg_tensor *o, const kg_attention_opts *opts, const char *text)
{
    kg_tensor q = kg_tensor_contiguous(KT_DEV(0), KG_F16, 4, attn_shape);
    kg_tensor k = kg_tensor_contiguous(KT_DEV(0x100000), KG_F16, 4, attn_shape);
    kg_tensor v = kg_tensor_contiguous(KT_DEV(0x200000), KG_F16, 4, attn_shape);
    REFUSED(kg_attention(ctx, o, NULL, &q, &k, &v, NULL, opts), text);
}

/* Attention's overlap check was fooled by a byte range that wraps past
   2^64 (out near the top of the address space, q at address 0x...). */
Test(findings, attention_ranges_that_wrap_are_refused)
{
    kg_tensor o = kg_tensor_contiguous((void *)(uintptr_t)(UINTPTR_MAX - 511), KG_F16, 4, attn_shape);
    attn_refused(&o, NULL,
                 "invalid argument: out: its 1024 bytes from data 0xfffffffffffffe00 wrap past the end of the address "
                 "space");
}

/* Attention never checked out for self-overlap (every other family does). */
Test(findings, attention_out_must_not_overlap_itself)
{
    kg_tensor o = strided(KT_DEV(0x300000), KG_F16, 4, attn_shape, KT_SHAPE(0, 0, 0, 1));
    attn_refused(&o, NULL,
                 "invalid argument: out overlaps itself (shape [1,2,4,64], strides [0,0,0,1]): an output needs one "
                 "memory location per element");
}

/* Attention never checked lse and mask for alignment: an f32 lse or mask at
   an address that is not 4-byte aligned is refused, naming it. */
Test(findings, attention_lse_and_mask_must_be_aligned)
{
    kg_tensor q = kg_tensor_contiguous(KT_DEV(0), KG_F16, 4, attn_shape);
    kg_tensor k = kg_tensor_contiguous(KT_DEV(0x100000), KG_F16, 4, attn_shape);
    kg_tensor v = kg_tensor_contiguous(KT_DEV(0x200000), KG_F16, 4, attn_shape);
    kg_tensor o = kg_tensor_contiguous(KT_DEV(0x300000), KG_F16, 4, attn_shape);
    kg_tensor lse = kg_tensor_contiguous((void *)((uintptr_t)KT_DEV(0x400000) + 2), KG_F32, 3, KT_SHAPE(1, 2, 4));
    REFUSED(kg_attention(ctx, &o, &lse, &q, &k, &v, NULL, NULL),
            "invalid argument: lse's data 0x10400002 is not aligned to its 4-byte f32 elements");
    lse.data = KT_DEV(0x400000); /* aligned: the same call reaches the device check */
    cr_assert_eq(kg_attention(ctx, &o, &lse, &q, &k, &v, NULL, NULL), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
    kg_tensor mask = kg_tensor_contiguous((void *)((uintptr_t)KT_DEV(0x500000) + 1), KG_F32, 2, KT_SHAPE(4, 4));
    REFUSED(kg_attention(ctx, &o, &lse, &q, &k, &v, &mask, NULL),
            "invalid argument: mask's data 0x10500001 is not aligned to its 4-byte f32 elements");
}

/* A finite scale >= 2.4e38 became inf inside the kernel. */
Test(findings, attention_scale_that_overflows_is_refused)
{
    kg_tensor o = kg_tensor_contiguous(KT_DEV(0x300000), KG_F16, 4, attn_shape);
    kg_attention_opts opts = {2.4e38f, 0};
    attn_refused(&o, &opts, "invalid argument: attention: scale 2.4e+38 overflows float once multiplied by log2(e)");
}

/* Element-wise ops accepted an f32 tensor at an odd address (kg_sum
   refused the same). */
Test(findings, elementwise_refuses_a_misaligned_tensor)
{
    kg_tensor a = kg_tensor_contiguous((void *)(uintptr_t)0x10000001u, KG_F32, 1, KT_SHAPE(4));
    kg_tensor o = kg_tensor_contiguous(KT_DEV(0x1000), KG_F32, 1, KT_SHAPE(4));
    REFUSED(kg_neg(ctx, &o, &a), "invalid argument: a's data 0x10000001 is not aligned to its 4-byte f32 elements");
}

/* kg_numel read past shape[8] for ndim > 8 and crashed on NULL; both now
   have a documented result, and products that overflow are not UB. */
Test(findings, numel_is_defined_for_every_input)
{
    kg_tensor t = kg_tensor_contiguous(KT_DEV(0), KG_F32, 2, KT_SHAPE(3, 5));
    cr_assert_eq(kg_numel(&t), 15);
    const int64_t nul = kg_numel(NULL);
    t.ndim = 9;
    const int64_t nine = kg_numel(&t);
    t.ndim = 2;
    t.shape[0] = INT64_MAX, t.shape[1] = 3;
    const int64_t over = kg_numel(&t);
    cr_assert(nul < 0 && nine < 0 && over < 0, "kg_numel: NULL -> %lld, ndim 9 -> %lld, overflow -> %lld",
              (long long)nul, (long long)nine, (long long)over);
}

/* Fuzz finding of 2026-12-02 (CI of main ae0d3dc): min over a bool input
   of 2^63 - 2 elements at stride 0 (one byte of memory, so its geometry is
   valid) reached the planner's 32-bit walk check, which added the walk's
   size and step before comparing them with 2^31 (signed overflow). Now it
   plans, and without a device the call ends in KG_ERR_NO_DEVICE. */
Test(findings, reduce_of_a_stride_0_input_of_2_pow_63_elements_plans_without_overflow)
{
    kg_tensor in = strided(KT_DEV(0), KG_BOOL, 1, KT_SHAPE(INT64_MAX - 1), KT_SHAPE(0));
    kg_tensor out = kg_tensor_contiguous(KT_DEV(0x1000), KG_BOOL, 0, NULL);
    const int axes[1] = {0};
    cr_assert_eq(kg_reduce(ctx, KG_RED_MIN, &out, NULL, &in, axes, 0, 0), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
}
