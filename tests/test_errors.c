/*
 * test_errors.c - the error model: status names and texts, the no-device
 * error, and every validation error of the element-wise entry points.
 *
 * Validation runs on the host before any device call, so these tests run on
 * every machine: each hides the GPU (CUDA_VISIBLE_DEVICES="") and works on a
 * context that failed to open, which still validates calls.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kg_test.h"

static kg_context *ctx;

/* Fake device addresses: validation fails before anything is dereferenced. */

static void open_without_device(void) { ctx = kt_open_without_device(); }

static void close_ctx(void) { kg_close(ctx); }

static kg_tensor tensor(void *data, kg_dtype dt, int ndim, const int64_t *shape)
{
    return kg_tensor_contiguous(data, dt, ndim, shape);
}

#define EXPECT_PREFIX(call, code, prefix)                                                                              \
    do {                                                                                                               \
        kg_status st_ = (call);                                                                                        \
        cr_assert_eq(st_, code, "%s returned %s, want %s: %s", #call, kg_status_name(st_), kg_status_name(code),       \
                     kg_errmsg(ctx));                                                                                  \
        cr_assert(strncmp(kg_errmsg(ctx), prefix, strlen(prefix)) == 0, "message \"%s\" does not start \"%s\"",        \
                  kg_errmsg(ctx), prefix);                                                                             \
    } while (0)

Test(status, every_code_has_its_name_and_text)
{
    struct {
        kg_status code;
        const char *name, *text;
    } want[] = {
#define ROW(sym, val, text) {sym, #sym, text},
        KG_STATUS_LIST(ROW)
#undef ROW
    };
    cr_assert_eq(sizeof want / sizeof want[0], (size_t)KG_STATUS_COUNT);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        cr_assert_str_eq(kg_status_name(want[i].code), want[i].name);
        cr_assert_str_eq(kg_status_text(want[i].code), want[i].text);
    }
    cr_assert_str_eq(kg_status_name(KG_ERR_SHAPE), "KG_ERR_SHAPE");
    cr_assert_str_eq(kg_status_text(KG_ERR_SHAPE), "shape mismatch");
    cr_assert_str_eq(kg_status_name((kg_status)999), "KG_STATUS_UNKNOWN");
    cr_assert_str_eq(kg_status_text((kg_status)-1), "unknown status code");
    cr_assert_str_eq(kg_errmsg(NULL), "no context (kg_open could not allocate one: out of host memory)");
}

Test(no_device, open_reports_it_and_every_call_after_validation_too, .init = open_without_device, .fini = close_ctx)
{
    cr_assert_not_null(ctx);
    const char *prefix = "no CUDA driver or device: ";
    cr_assert(strncmp(kg_errmsg(ctx), prefix, strlen(prefix)) == 0, "%s", kg_errmsg(ctx));
    void *p = KT_DEV(0);
    EXPECT_PREFIX(kg_malloc(ctx, &p, 1024), KG_ERR_NO_DEVICE, prefix);
    cr_assert_null(p, "kg_malloc must clear *ptr on failure");
    EXPECT_PREFIX(kg_sync(ctx), KG_ERR_NO_DEVICE, prefix);
    char buf[8];
    EXPECT_PREFIX(kg_copy_out(ctx, buf, KT_DEV(0), sizeof buf), KG_ERR_NO_DEVICE, prefix);
    kg_tensor a = tensor(KT_DEV(0), KG_F32, 1, KT_SHAPE(4)), o = tensor(KT_DEV(64), KG_F32, 1, KT_SHAPE(4));
    EXPECT_PREFIX(kg_exp(ctx, &o, &a), KG_ERR_NO_DEVICE, prefix);
    /* empty work still reports that no device is there */
    kg_tensor e = tensor(NULL, KG_F32, 1, KT_SHAPE(0));
    EXPECT_PREFIX(kg_neg(ctx, &e, &e), KG_ERR_NO_DEVICE, prefix);
}

Test(no_device, null_context_and_null_out_pointer)
{
    cr_assert_eq(kg_open(NULL, 0), KG_ERR_INVALID_ARGUMENT);
    kg_tensor a = tensor(KT_DEV(0), KG_F32, 1, KT_SHAPE(4));
    cr_assert_eq(kg_exp(NULL, &a, &a), KG_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kg_sync(NULL), KG_ERR_INVALID_ARGUMENT);
    kg_close(NULL);
}

Test(bundle, knows_which_gpus_it_runs_on)
{
    cr_assert(kg_bundle_supports(9, 0), "sm_90 machine code");
    cr_assert(kg_bundle_supports(8, 0), "sm_80 machine code");
    cr_assert(kg_bundle_supports(8, 6), "sm_80 code runs on 8.6");
    cr_assert(kg_bundle_supports(8, 9), "sm_80 code runs on 8.9");
    cr_assert(kg_bundle_supports(10, 0), "PTX compute_90 is compiled for newer GPUs");
    cr_assert(kg_bundle_supports(12, 0), "PTX compute_90 is compiled for newer GPUs");
    cr_assert_not(kg_bundle_supports(7, 5), "no code for sm_75");
    cr_assert_not(kg_bundle_supports(6, 1), "no code for sm_61");
    cr_assert_str_eq(kg_bundle_archs(), "sm_80, sm_90 (+PTX compute_90)");
}

TestSuite(validation, .init = open_without_device, .fini = close_ctx);

Test(validation, shapes_that_do_not_broadcast)
{
    kg_tensor a = tensor(KT_DEV(0), KG_F32, 2, KT_SHAPE(2, 3)), b = tensor(KT_DEV(4096), KG_F32, 1, KT_SHAPE(4)),
              o = tensor(KT_DEV(8192), KG_F32, 2, KT_SHAPE(2, 3));
    KT_EXPECT(ctx, kg_add(ctx, &o, &a, &b), KG_ERR_SHAPE,
              "shape mismatch: a is [2,3], b is [4] (dim -1: 3 vs 4 do not broadcast)");
    kg_tensor c = tensor(KT_DEV(0), KG_BOOL, 2, KT_SHAPE(5, 1));
    b = tensor(KT_DEV(4096), KG_F32, 1, KT_SHAPE(3));
    KT_EXPECT(ctx, kg_where(ctx, &o, &c, &a, &b), KG_ERR_SHAPE,
              "shape mismatch: cond is [5,1], a is [2,3], b is [3] (dim -2: 5 vs 2 do not broadcast)");
}

Test(validation, output_shape_must_be_the_broadcast_shape)
{
    kg_tensor a = tensor(KT_DEV(0), KG_F32, 2, KT_SHAPE(2, 3)), b = tensor(KT_DEV(4096), KG_F32, 1, KT_SHAPE(3)),
              o = tensor(KT_DEV(8192), KG_F32, 2, KT_SHAPE(2, 2));
    KT_EXPECT(ctx, kg_add(ctx, &o, &a, &b), KG_ERR_SHAPE,
              "shape mismatch: add: out is [2,2] but the inputs broadcast to [2,3]");
    o = tensor(KT_DEV(8192), KG_F32, 3, KT_SHAPE(1, 2, 3));
    KT_EXPECT(ctx, kg_add(ctx, &o, &a, &b), KG_ERR_SHAPE,
              "shape mismatch: add: out is [1,2,3] but the inputs broadcast to [2,3]");
}

Test(validation, inputs_share_a_dtype)
{
    kg_tensor a = tensor(KT_DEV(0), KG_F32, 1, KT_SHAPE(3)), b = tensor(KT_DEV(4096), KG_F16, 1, KT_SHAPE(3)),
              o = tensor(KT_DEV(8192), KG_F32, 1, KT_SHAPE(3));
    KT_EXPECT(ctx, kg_mul(ctx, &o, &a, &b), KG_ERR_DTYPE,
              "dtype mismatch: mul: a is f32, b is f16 (inputs of one call share a dtype; convert with kg_cast)");
}

Test(validation, math_functions_refuse_integer_dtypes)
{
    kg_tensor a = tensor(KT_DEV(0), KG_I32, 1, KT_SHAPE(3)), o = tensor(KT_DEV(4096), KG_I32, 1, KT_SHAPE(3));
    KT_EXPECT(ctx, kg_exp(ctx, &o, &a), KG_ERR_DTYPE, "exp is not available for i32 (it accepts f32, f64, f16, bf16)");
    a.dtype = o.dtype = KG_BOOL;
    KT_EXPECT(ctx, kg_sub(ctx, &o, &a, &a), KG_ERR_DTYPE,
              "sub is not available for bool (it accepts f32, f64, f16, bf16, i32, i64, u8)");
}

Test(validation, output_dtype_follows_the_op)
{
    kg_tensor a = tensor(KT_DEV(0), KG_F32, 1, KT_SHAPE(3)), o = tensor(KT_DEV(4096), KG_F16, 1, KT_SHAPE(3));
    KT_EXPECT(ctx, kg_add(ctx, &o, &a, &a), KG_ERR_DTYPE, "add: out is f16 but the result is f32");
    o.dtype = KG_F32;
    KT_EXPECT(ctx, kg_lt(ctx, &o, &a, &a), KG_ERR_DTYPE, "lt: out is f32 but the result is bool");
}

Test(validation, where_needs_a_bool_condition)
{
    kg_tensor c = tensor(KT_DEV(0), KG_F32, 1, KT_SHAPE(3)), a = tensor(KT_DEV(256), KG_F32, 1, KT_SHAPE(3)),
              o = tensor(KT_DEV(4096), KG_F32, 1, KT_SHAPE(3));
    KT_EXPECT(ctx, kg_where(ctx, &o, &c, &a, &a), KG_ERR_DTYPE, "where: cond must be bool, got f32");
}

Test(validation, malformed_tensors)
{
    kg_tensor a = tensor(KT_DEV(0), KG_F32, 1, KT_SHAPE(3)), o = tensor(KT_DEV(4096), KG_F32, 1, KT_SHAPE(3));
    KT_EXPECT(ctx, kg_add(ctx, &o, &a, NULL), KG_ERR_INVALID_ARGUMENT, "invalid argument: tensor b is NULL");
    kg_tensor bad = a;
    bad.data = NULL;
    KT_EXPECT(ctx, kg_add(ctx, &o, &a, &bad), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: b has 3 elements but a NULL data pointer");
    bad = a;
    bad.strides[0] = -1;
    KT_EXPECT(ctx, kg_add(ctx, &o, &bad, &a), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: a has stride -1 in dim 0 (strides must be >= 0)");
    bad = a;
    bad.shape[0] = -2;
    KT_EXPECT(ctx, kg_neg(ctx, &o, &bad), KG_ERR_INVALID_ARGUMENT, "invalid argument: a has size -2 in dim 0");
    bad = a;
    bad.ndim = 9;
    KT_EXPECT(ctx, kg_neg(ctx, &bad, &a), KG_ERR_INVALID_ARGUMENT, "invalid argument: out has 9 dims (0..8 supported)");
    bad = a;
    bad.dtype = (kg_dtype)42;
    KT_EXPECT(ctx, kg_neg(ctx, &o, &bad), KG_ERR_INVALID_ARGUMENT, "invalid argument: a has dtype 42, not a kg_dtype");
}

Test(validation, output_must_not_overlap_itself)
{
    kg_tensor a = tensor(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 3)), o = tensor(KT_DEV(4096), KG_F32, 2, KT_SHAPE(4, 3));
    o.strides[0] = 0;
    KT_EXPECT(ctx, kg_neg(ctx, &o, &a), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: out overlaps itself (shape [4,3], strides [0,1]): an output needs one memory "
              "location per element");
    o.strides[0] = 2; /* rows of 3 elements two apart overlap too */
    cr_assert_eq(kg_neg(ctx, &o, &a), KG_ERR_INVALID_ARGUMENT);
}

Test(validation, partial_overlap_is_refused_and_exact_alias_allowed)
{
    kg_tensor a = tensor(KT_DEV(0), KG_F32, 1, KT_SHAPE(8)), o = tensor(KT_DEV(4), KG_F32, 1, KT_SHAPE(8));
    EXPECT_PREFIX(kg_neg(ctx, &o, &a), KG_ERR_INVALID_ARGUMENT, "invalid argument: out partially overlaps a (bytes [");
    /* a transposed view of the same memory is not the same elements */
    kg_tensor m = tensor(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 4)), t = m;
    t.strides[0] = 1;
    t.strides[1] = 4;
    cr_assert_eq(kg_neg(ctx, &m, &t), KG_ERR_INVALID_ARGUMENT);
    /* exact aliasing passes validation: what fails then is the missing device */
    cr_assert_eq(kg_neg(ctx, &a, &a), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
    kg_tensor row = tensor(KT_DEV(0), KG_F32, 1, KT_SHAPE(4));
    cr_assert_eq(kg_add(ctx, &m, &m, &row), KG_ERR_INVALID_ARGUMENT, "b overlaps out's first row: %s", kg_errmsg(ctx));
    /* disjoint memory passes */
    kg_tensor far = tensor(KT_DEV(1 << 20), KG_F32, 1, KT_SHAPE(8));
    cr_assert_eq(kg_neg(ctx, &far, &a), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
}

Test(validation, arity_and_op_are_checked)
{
    kg_tensor a = tensor(KT_DEV(0), KG_F32, 1, KT_SHAPE(3)), o = tensor(KT_DEV(4096), KG_F32, 1, KT_SHAPE(3));
    const kg_tensor *in[3] = {&a, &a, &a};
    KT_EXPECT(ctx, kg_elementwise(ctx, KG_OP_ADD, &o, in, 3), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: add takes 2 inputs, got 3");
    KT_EXPECT(ctx, kg_elementwise(ctx, KG_OP_NONE, &o, in, 1), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: 0 is not an element-wise op");
    char want[64];
    snprintf(want, sizeof want, "invalid argument: %d is not an element-wise op", (int)KG_OP_COUNT);
    KT_EXPECT(ctx, kg_elementwise(ctx, KG_OP_COUNT, &o, in, 1), KG_ERR_INVALID_ARGUMENT, want);
}

Test(validation, memory_helpers_check_pointers)
{
    KT_EXPECT(ctx, kg_malloc(ctx, NULL, 16), KG_ERR_INVALID_ARGUMENT, "invalid argument: kg_malloc: ptr is NULL");
    char buf[4];
    KT_EXPECT(ctx, kg_copy_in(ctx, NULL, buf, 4), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: kg_copy_in: destination pointer is NULL");
    KT_EXPECT(ctx, kg_copy_out(ctx, buf, NULL, 4), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: kg_copy_out: source pointer is NULL");
}

Test(validation, empty_inputs_pass_validation)
{
    kg_tensor e = tensor(NULL, KG_F32, 3, KT_SHAPE(1, 0, 3)), o = tensor(NULL, KG_F32, 3, KT_SHAPE(1, 0, 3));
    cr_assert_eq(kg_exp(ctx, &o, &e), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
    kg_tensor a = tensor(NULL, KG_F32, 3, KT_SHAPE(0, 1, 3)), b = tensor(NULL, KG_F32, 3, KT_SHAPE(0, 10, 3)),
              r = tensor(NULL, KG_F32, 3, KT_SHAPE(0, 10, 3));
    cr_assert_eq(kg_add(ctx, &r, &a, &b), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
}
