/*
 * test_errors.c - the error model: status names and texts, the no-device
 * error, and every validation error of the element-wise entry points.
 *
 * Validation runs on the host before any device call, so these tests run on
 * every machine: each hides the GPU (CUDA_VISIBLE_DEVICES="") and works on a
 * context that failed to open, which still validates calls. What they hold
 * to: tests/TESTING.md, "Errors are exact" and "Hostile input".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kg_test.h"
#include "kgen.h"

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

/* The codes, their values (the ABI), names and texts, written out by hand:
   the library builds its tables from KG_STATUS_LIST, so a table built here
   from the same list could not see a changed value, name or text. */
Test(status, every_code_has_its_name_and_text)
{
    static const struct {
        kg_status code;
        int value;
        const char *name, *text;
    } want[] = {
        {KG_OK, 0, "KG_OK", "success"},
        {KG_ERR_NO_DEVICE, 1, "KG_ERR_NO_DEVICE", "no CUDA driver or device"},
        {KG_ERR_DEVICE_RANGE, 2, "KG_ERR_DEVICE_RANGE", "device index out of range"},
        {KG_ERR_OUT_OF_MEMORY, 3, "KG_ERR_OUT_OF_MEMORY", "out of device memory"},
        {KG_ERR_NO_KERNEL_IMAGE, 4, "KG_ERR_NO_KERNEL_IMAGE", "no kernel image for this GPU's architecture"},
        {KG_ERR_LAUNCH, 5, "KG_ERR_LAUNCH", "kernel launch failed"},
        {KG_ERR_SYNC, 6, "KG_ERR_SYNC", "synchronization failed"},
        {KG_ERR_SHAPE, 7, "KG_ERR_SHAPE", "shape mismatch"},
        {KG_ERR_INVALID_ARGUMENT, 8, "KG_ERR_INVALID_ARGUMENT", "invalid argument"},
        {KG_ERR_DTYPE, 9, "KG_ERR_DTYPE", "op not available for this dtype"},
        {KG_ERR_CUDA, 10, "KG_ERR_CUDA", "CUDA error"},
        {KG_ERR_CUBLAS, 11, "KG_ERR_CUBLAS", "cuBLAS error"},
        {KG_ERR_HOST_MEMORY, 12, "KG_ERR_HOST_MEMORY", "out of host memory"},
    };
    cr_assert_eq(sizeof want / sizeof want[0], (size_t)KG_STATUS_COUNT);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        cr_assert_eq((int)want[i].code, want[i].value, "%s is %d, want %d", want[i].name, (int)want[i].code,
                     want[i].value);
        cr_assert_str_eq(kg_status_name((kg_status)want[i].value), want[i].name);
        cr_assert_str_eq(kg_status_text((kg_status)want[i].value), want[i].text);
    }
    cr_assert_str_eq(kg_status_name(KG_ERR_SHAPE), "KG_ERR_SHAPE");
    cr_assert_str_eq(kg_status_text(KG_ERR_SHAPE), "shape mismatch");
    cr_assert_str_eq(kg_status_name((kg_status)999), "KG_STATUS_UNKNOWN");
    cr_assert_str_eq(kg_status_text((kg_status)-1), "unknown status code");
    cr_assert_str_eq(kg_errmsg(NULL), "no context: the kg_context pointer is NULL (kg_open sets it to NULL only "
                                      "when host memory runs out; otherwise a context was never opened)");
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

/* A negative device index is refused before any CUDA call, so the same on
   every machine (before session 27, a machine without a driver said "no
   CUDA driver or device" instead). */
Test(no_device, a_negative_device_index_is_out_of_range)
{
    kg_context *c = NULL;
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    KT_EXPECT(c, kg_open(&c, -1), KG_ERR_DEVICE_RANGE,
              "device index out of range: -1 (device indices count from 0)");
    cr_assert_not_null(c);
    kg_tensor a = tensor(KT_DEV(0), KG_F32, 1, KT_SHAPE(4)), o = tensor(KT_DEV(64), KG_F32, 1, KT_SHAPE(4));
    KT_EXPECT(c, kg_exp(c, &o, &a), KG_ERR_DEVICE_RANGE, "device index out of range: -1 (device indices count from 0)");
    kg_close(c);
    c = NULL;
    KT_EXPECT(c, kg_open(&c, INT32_MIN), KG_ERR_DEVICE_RANGE,
              "device index out of range: -2147483648 (device indices count from 0)");
    kg_close(c);
}

Test(bundle, knows_which_gpus_it_runs_on)
{
    cr_assert(kg_bundle_supports(9, 0), "sm_90 machine code");
    cr_assert(kg_bundle_supports(8, 0), "sm_80 machine code");
    cr_assert(kg_bundle_supports(8, 6), "sm_80 code runs on 8.6");
    cr_assert(kg_bundle_supports(8, 9), "sm_80 code runs on 8.9");
    cr_assert_not(kg_bundle_supports(7, 5), "no code for sm_75");
    cr_assert_not(kg_bundle_supports(6, 1), "no code for sm_61");
    /* GPUs newer than every listed arch: only through embedded PTX
       (build.ninja's ptx_arch, empty by default) */
    const char *archs = kg_bundle_archs();
    const int ptx = strcmp(archs, "sm_80, sm_90 (+PTX compute_90)") == 0;
    cr_assert(ptx || strcmp(archs, "sm_80, sm_90") == 0, "archs \"%s\"", archs);
    cr_assert_eq(kg_bundle_supports(10, 0), ptx, "sm_100 with%s PTX", ptx ? "" : "out");
    cr_assert_eq(kg_bundle_supports(12, 0), ptx, "sm_120 with%s PTX", ptx ? "" : "out");
    cr_assert_eq(kg_bundle_supports(9, 9), 1, "sm_90 machine code runs on 9.9");
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
    KT_EXPECT(ctx, kg_neg(ctx, &o, &a), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: out overlaps itself (shape [4,3], strides [2,1]): an output needs one memory "
              "location per element");
}

Test(validation, partial_overlap_is_refused_and_exact_alias_allowed)
{
    kg_tensor a = tensor(KT_DEV(0), KG_F32, 1, KT_SHAPE(8)), o = tensor(KT_DEV(4), KG_F32, 1, KT_SHAPE(8));
    KT_EXPECT(ctx, kg_neg(ctx, &o, &a), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: out partially overlaps a (bytes [0x10000004, 0x10000024) and [0x10000000, "
              "0x10000020)); an output may only alias an input exactly (in place)");
    /* a transposed view of the same memory is not the same elements */
    kg_tensor m = tensor(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 4)), t = m;
    t.strides[0] = 1;
    t.strides[1] = 4;
    KT_EXPECT(ctx, kg_neg(ctx, &m, &t), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: out [4,4] strides [4,1] and a [4,4] strides [1,4] cover the same bytes [0x10000000, "
              "0x10000040) in different layouts; an output may only alias an input exactly (in place)");
    /* exact aliasing passes validation: what fails then is the missing device */
    cr_assert_eq(kg_neg(ctx, &a, &a), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
    kg_tensor row = tensor(KT_DEV(0), KG_F32, 1, KT_SHAPE(4));
    KT_EXPECT(ctx, kg_add(ctx, &m, &m, &row), KG_ERR_INVALID_ARGUMENT, /* b overlaps out's first row */
              "invalid argument: out partially overlaps b (bytes [0x10000000, 0x10000040) and [0x10000000, "
              "0x10000010)); an output may only alias an input exactly (in place)");
    /* disjoint memory passes */
    kg_tensor far = tensor(KT_DEV(1 << 20), KG_F32, 1, KT_SHAPE(8));
    cr_assert_eq(kg_neg(ctx, &far, &a), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
}

/* An output over exactly an input's bytes but in another layout (a
   transposed view of it) says so with both layouts (before session 27 it
   said "partially overlaps" with two identical byte ranges). */
Test(validation, same_bytes_in_another_layout_names_both_layouts)
{
    kg_tensor a = tensor(KT_DEV(0), KG_F32, 2, KT_SHAPE(2, 3)), o = tensor(KT_DEV(0), KG_F32, 2, KT_SHAPE(2, 3));
    o.strides[0] = 1, o.strides[1] = 2;
    KT_EXPECT(ctx, kg_exp(ctx, &o, &a), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: out [2,3] strides [1,2] and a [2,3] strides [3,1] cover the same bytes [0x10000000, "
              "0x10000018) in different layouts; an output may only alias an input exactly (in place)");
    kg_tensor b = tensor(KT_DEV(4096), KG_F32, 2, KT_SHAPE(2, 3));
    KT_EXPECT(ctx, kg_add(ctx, &o, &b, &a), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: out [2,3] strides [1,2] and b [2,3] strides [3,1] cover the same bytes [0x10000000, "
              "0x10000018) in different layouts; an output may only alias an input exactly (in place)");
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

/* A NULL inputs array with the right count is its own error (it read "add
   takes 2 inputs, got 2" before session 27). */
Test(validation, null_inputs_array_is_named)
{
    kg_tensor o = tensor(KT_DEV(4096), KG_F32, 1, KT_SHAPE(3));
    KT_EXPECT(ctx, kg_elementwise(ctx, KG_OP_ADD, &o, NULL, 2), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: add: inputs is NULL but n_inputs is 2");
    KT_EXPECT(ctx, kg_elementwise(ctx, KG_OP_EXP, &o, NULL, 1), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: exp: inputs is NULL but n_inputs is 1");
    /* a wrong count is still reported as such, NULL array or not */
    KT_EXPECT(ctx, kg_elementwise(ctx, KG_OP_ADD, &o, NULL, 3), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: add takes 2 inputs, got 3");
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

/* ---- The boundary check (runtime/geometry.c): every family, every tensor
   argument, before any other arithmetic. Regression cases of issue 13's
   fuzzing findings. */

Test(validation, extent_beyond_2_63_bytes_is_refused_in_every_family)
{
    kg_tensor huge = tensor(KT_DEV(0), KG_F32, 1, KT_SHAPE(INT64_MAX)), o = tensor(KT_DEV(4096), KG_F32, 0, NULL);
    /* kg_sum of f32 [INT64_MAX] used to divide by zero in the split planner */
    KT_EXPECT(ctx, kg_sum(ctx, &o, &huge, NULL, 0, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: in: shape [9223372036854775807] spans more than 2^63 bytes (strides [1], 4-byte "
              "f32 elements)");
    KT_EXPECT(ctx, kg_neg(ctx, &huge, &huge), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: out: shape [9223372036854775807] spans more than 2^63 bytes (strides [1], 4-byte "
              "f32 elements)");
    kg_tensor m = tensor(KT_DEV(0), KG_F32, 2, KT_SHAPE(2, 2)), big = m;
    big.shape[0] = (int64_t)1 << 61; /* (2^61 - 1) * 2 + 2 elements: 2^64 bytes */
    KT_EXPECT(ctx, kg_matmul(ctx, &m, &big, &m), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: a: shape [2305843009213693952,2] spans more than 2^63 bytes (strides [2,1], 4-byte "
              "f32 elements)");
    /* strides whose sum overflows: [4,8] with strides [INT64_MAX, INT64_MAX]
       (two indices at one address) used to be accepted as an output */
    kg_tensor wrap = tensor(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 8)),
              a = tensor(KT_DEV(1 << 20), KG_F32, 2, KT_SHAPE(4, 8));
    wrap.strides[0] = wrap.strides[1] = INT64_MAX;
    KT_EXPECT(ctx, kg_neg(ctx, &wrap, &a), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: out: shape [4,8] spans more than 2^63 bytes (strides "
              "[9223372036854775807,9223372036854775807], 4-byte f32 elements)");
    /* just below the limit is a valid descriptor (the device is what fails) */
    kg_tensor edge = tensor(KT_DEV(0), KG_U8, 1, KT_SHAPE(2)), e2 = tensor((void *)0x1000, KG_U8, 1, KT_SHAPE(2));
    edge.strides[0] = INT64_MAX - 1; /* 1 + (INT64_MAX - 1) = 2^63 - 1 bytes */
    cr_assert_eq(kg_relu(ctx, &e2, &edge), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
    edge.strides[0] = INT64_MAX; /* one byte more */
    KT_EXPECT(ctx, kg_relu(ctx, &e2, &edge), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: a: shape [2] spans more than 2^63 bytes (strides [9223372036854775807], 1-byte u8 "
              "elements)");
}

Test(validation, address_ranges_that_wrap_are_refused)
{
    /* 32 bytes from 16 bytes below the end of the address space */
    kg_tensor w = tensor((void *)(UINTPTR_MAX - 15), KG_U8, 1, KT_SHAPE(32)),
              o = tensor(KT_DEV(0), KG_U8, 1, KT_SHAPE(32));
    KT_EXPECT(ctx, kg_neg(ctx, &o, &w), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: a: its 32 bytes from data 0xfffffffffffffff0 wrap past the end of the address space");
    /* ending exactly at 2^64 wraps too: the end address must exist */
    w.shape[0] = 16;
    o.shape[0] = 16;
    KT_EXPECT(ctx, kg_neg(ctx, &o, &w), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: a: its 16 bytes from data 0xfffffffffffffff0 wrap past the end of the address space");
    w.shape[0] = 15;
    o.shape[0] = 15;
    cr_assert_eq(kg_neg(ctx, &o, &w), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
}

Test(validation, data_must_be_aligned_to_the_element_size)
{
    kg_tensor a = tensor(KT_DEV(1), KG_F32, 1, KT_SHAPE(8)), o = tensor(KT_DEV(4096), KG_F32, 1, KT_SHAPE(8));
    char want[160];
    snprintf(want, sizeof want, "invalid argument: a's data %p is not aligned to its 4-byte f32 elements", a.data);
    KT_EXPECT(ctx, kg_neg(ctx, &o, &a), KG_ERR_INVALID_ARGUMENT, want);
    /* an empty tensor reads nothing, and one-byte elements are always aligned */
    a.shape[0] = 0;
    o.shape[0] = 0;
    cr_assert_eq(kg_neg(ctx, &o, &a), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
    kg_tensor b = tensor(KT_DEV(1), KG_U8, 1, KT_SHAPE(8)), ob = tensor(KT_DEV(4096), KG_U8, 1, KT_SHAPE(8));
    cr_assert_eq(kg_neg(ctx, &ob, &b), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
}

Test(validation, element_count_beyond_2_63_is_refused)
{
    /* stride 0 everywhere: a tiny extent, but 2^64 elements */
    kg_tensor a = tensor(KT_DEV(0), KG_F32, 2, KT_SHAPE((int64_t)1 << 32, (int64_t)1 << 32));
    a.strides[0] = a.strides[1] = 0;
    kg_tensor o = tensor(KT_DEV(4096), KG_F32, 0, NULL);
    /* the shape is named (before session 27: "in has more than 2^63
       elements", without it) */
    KT_EXPECT(ctx, kg_sum(ctx, &o, &a, NULL, 0, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: in: shape [4294967296,4294967296] has more than 2^63 - 1 elements");
    /* an empty tensor's other sizes and strides are bounded too, so that no
       family's product of some of its sizes overflows (a reduction of
       [2^61, 2^31, 0] over dim 2 multiplies the first two) */
    kg_tensor e = tensor(NULL, KG_F32, 3, KT_SHAPE((int64_t)1 << 61, (int64_t)1 << 31, 0));
    kg_tensor eo = tensor(NULL, KG_F32, 2, KT_SHAPE((int64_t)1 << 61, (int64_t)1 << 31));
    int ax2[] = {2};
    KT_EXPECT(ctx, kg_sum(ctx, &eo, &e, ax2, 1, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: in: shape [2305843009213693952,2147483648,0]: the product of its nonzero sizes "
              "exceeds 2^63 - 1");
    e = tensor(NULL, KG_F32, 2, KT_SHAPE(3, 0));
    e.strides[0] = INT64_MAX;
    KT_EXPECT(ctx, kg_neg(ctx, &e, &e), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: out: shape [3,0] spans more than 2^63 bytes (strides [9223372036854775807,1], 4-byte "
              "f32 elements)");
    /* within those bounds an empty tensor needs no data and passes */
    e = tensor(NULL, KG_F32, 3, KT_SHAPE((int64_t)1 << 40, 0, (int64_t)1 << 20));
    kg_tensor eo2 = e;
    cr_assert_eq(kg_neg(ctx, &eo2, &e), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
}

Test(validation, numel_is_defined_for_every_input)
{
    cr_assert_eq(kg_numel(NULL), -1);
    kg_tensor t = tensor(KT_DEV(0), KG_F32, 2, KT_SHAPE(3, 4));
    cr_assert_eq(kg_numel(&t), 12);
    t.ndim = 0;
    cr_assert_eq(kg_numel(&t), 1);
    t.ndim = 9; /* would read past shape[8] */
    cr_assert_eq(kg_numel(&t), -1);
    t.ndim = -1;
    cr_assert_eq(kg_numel(&t), -1);
    t = tensor(KT_DEV(0), KG_F32, 3, KT_SHAPE(INT64_MAX, 2, 1));
    cr_assert_eq(kg_numel(&t), -1, "overflow");
    t.shape[1] = 0;
    cr_assert_eq(kg_numel(&t), 0, "empty, whatever the other sizes");
    t.shape[1] = -1;
    cr_assert_eq(kg_numel(&t), -1, "negative size");
}

Test(validation, contiguous_is_defined_for_every_input)
{
    kg_tensor t = kg_tensor_contiguous(KT_DEV(0), KG_F32, 3, KT_SHAPE(2, 3, 4));
    cr_assert(t.strides[0] == 12 && t.strides[1] == 4 && t.strides[2] == 1);
    /* strides past an overflow saturate: the tensor is then refused for its extent */
    t = kg_tensor_contiguous(KT_DEV(0), KG_F32, 3, KT_SHAPE((int64_t)1 << 40, (int64_t)1 << 40, (int64_t)1 << 40));
    cr_assert(t.strides[2] == 1 && t.strides[1] == (int64_t)1 << 40 && t.strides[0] == INT64_MAX, "%lld %lld %lld",
              (long long)t.strides[0], (long long)t.strides[1], (long long)t.strides[2]);
    kg_tensor o = tensor(KT_DEV(0), KG_F32, 0, NULL);
    KT_EXPECT(ctx, kg_sum(ctx, &o, &t, NULL, 0, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: in: shape [1099511627776,1099511627776,1099511627776] has more than 2^63 - 1 "
              "elements");
    t = kg_tensor_contiguous(KT_DEV(0), KG_F32, 2, KT_SHAPE((int64_t)1 << 60, 4));
    KT_EXPECT(ctx, kg_sum(ctx, &o, &t, NULL, 0, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: in: shape [1152921504606846976,4] spans more than 2^63 bytes (strides [4,1], 4-byte "
              "f32 elements)");
    /* ndim out of range or no shape: zero shape and strides, refused by ops */
    t = kg_tensor_contiguous(KT_DEV(0), KG_F32, 9, KT_SHAPE(1, 2, 3, 4, 5, 6, 7, 8, 9));
    cr_assert(t.ndim == 9 && t.shape[0] == 0 && t.strides[7] == 0);
    t = kg_tensor_contiguous(KT_DEV(0), KG_F32, 2, NULL);
    cr_assert(t.ndim == 2 && t.shape[0] == 0 && t.shape[1] == 0);
}

/* ---- Family hooks (internal.h): the core calls no family; a family that
   keeps per-context state registers what kg_set_stream and kg_close call. */

static int hook_streams, hook_releases;
static kg_status count_stream(kg_context *c)
{
    (void)c;
    hook_streams++;
    return KG_OK;
}
static void count_release(kg_context *c)
{
    (void)c;
    hook_releases++;
}
static kg_status refuse_stream(kg_context *c)
{
    return kgi_fail(c, KG_ERR_CUBLAS, "cuBLAS error: refused by the test hook");
}

Test(hooks, set_stream_and_close_call_every_registered_family)
{
    static const kgi_hooks counting = {"counting", count_stream, count_release};
    static const kgi_hooks refusing = {"refusing", refuse_stream, NULL};
    kg_context *c = kt_open_without_device();
    hook_streams = hook_releases = 0;
    cr_assert_eq(kgi_register_hooks(c, &counting), KG_OK);
    cr_assert_eq(kgi_register_hooks(c, &counting), KG_OK, "registering twice is one registration");
    cr_assert_eq(kg_set_stream(c, NULL), KG_OK, "%s", kg_errmsg(c));
    cr_assert_eq(hook_streams, 1);
    /* a failing hook's status and message are kg_set_stream's */
    cr_assert_eq(kgi_register_hooks(c, &refusing), KG_OK);
    KT_EXPECT(c, kg_set_stream(c, NULL), KG_ERR_CUBLAS, "cuBLAS error: refused by the test hook");
    cr_assert_eq(hook_streams, 2);
    kg_close(c);
    cr_assert_eq(hook_releases, 1, "kg_close releases every family's state once");
}

Test(hooks, the_table_is_bounded)
{
    static kgi_hooks many[KGI_MAX_HOOKS + 1];
    kg_context *c = kt_open_without_device();
    for (int i = 0; i < KGI_MAX_HOOKS; i++) {
        many[i].name = "family";
        cr_assert_eq(kgi_register_hooks(c, &many[i]), KG_OK);
    }
    many[KGI_MAX_HOOKS].name = "one too many";
    KT_EXPECT(c, kgi_register_hooks(c, &many[KGI_MAX_HOOKS]), KG_ERR_HOST_MEMORY,
              "out of host memory: no room for the one too many hooks (8 registered)");
    kg_close(c);
}

/* A family keeps its per-context state with its hooks: one pointer per
   registration, NULL until stored, found again by the same hooks, and still
   there when its release hook runs. */
static int released_with_state;
static kgi_hooks stateful;
static void release_state(kg_context *c)
{
    void **state = kgi_hooks_state(c, &stateful);
    released_with_state = state && *state == (void *)&released_with_state;
}

Test(hooks, each_family_keeps_its_state_pointer)
{
    static const kgi_hooks other = {"other", NULL, NULL};
    stateful = (kgi_hooks){"stateful", NULL, release_state};
    kg_context *c = kt_open_without_device();
    cr_assert_null(kgi_hooks_state(c, &stateful), "no state slot before the hooks are registered");
    cr_assert_eq(kgi_register_hooks(c, &other), KG_OK);
    cr_assert_eq(kgi_register_hooks(c, &stateful), KG_OK);
    void **mine = kgi_hooks_state(c, &stateful), **theirs = kgi_hooks_state(c, &other);
    cr_assert(mine && theirs && mine != theirs);
    cr_assert(*mine == NULL && *theirs == NULL, "a new slot is empty");
    *mine = &released_with_state;
    cr_assert_eq(kgi_register_hooks(c, &stateful), KG_OK);
    cr_assert_eq(*kgi_hooks_state(c, &stateful), (void *)&released_with_state, "registering again keeps the state");
    cr_assert_null(*kgi_hooks_state(c, &other));
    released_with_state = 0;
    kg_close(c);
    cr_assert_eq(released_with_state, 1, "the release hook sees its state");
}

/* The families' test slots start at -1 (the planner chooses; no launch
   yet) on every context, also one without a device. */
Test(hooks, test_slots_start_unset)
{
    kg_context *c = kt_open_without_device();
    for (int i = 0; i < KGI_TEST_SLOT_COUNT; i++)
        cr_assert(c->test_force[i] == -1 && c->test_last[i] == -1, "slot %d", i);
    cr_assert_eq(kg_test_last_ew_variant(c), -1);
    cr_assert_eq(kg_test_last_attn_variant(c), -1);
    cr_assert_eq(kg_test_last_attn_splits(c), 0, "no decode launch yet: 0 splits");
    kg_close(c);
}

Test(validation, element_count_beyond_an_allocation_is_refused)
{
    /* stride 0: one element of memory, but 2^62 f32 elements are 2^64 bytes
       of values, more than any allocation (and any output) holds; counts
       stay below 2^63 / element size, which keeps every family's count
       arithmetic away from int64's end */
    kg_tensor a = tensor(KT_DEV(0), KG_F32, 1, KT_SHAPE((int64_t)1 << 62));
    a.strides[0] = 0;
    kg_tensor o = tensor(KT_DEV(4096), KG_F32, 0, NULL);
    KT_EXPECT(ctx, kg_sum(ctx, &o, &a, NULL, 0, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: in: shape [4611686018427387904]: 4611686018427387904 elements of 4-byte f32 exceed "
              "2^63 - 1 bytes (more than any allocation holds)");
    /* the same count of one-byte elements fits */
    a.dtype = KG_U8;
    kg_tensor oi = tensor(KT_DEV(4096), KG_I64, 0, NULL);
    cr_assert_eq(kg_sum(ctx, &oi, &a, NULL, 0, 0), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
}
