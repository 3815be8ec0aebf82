/*
 * test_dlpack.c - kg_tensor <-> DLTensor: every dtype both ways, NULL strides
 * as row-major, byte_offset, and each refusal with its message (non-CUDA
 * device, lanes != 1, a dtype kgen lacks, misaligned byte_offset, too many
 * dims, negative sizes and strides), leaving the destination unchanged.
 * Conversion is host-only, so these run on every machine on a context that
 * failed to open; the device-mismatch check needs a GPU.
 */
#include <stdio.h>
#include <string.h>

#include "kg_dlpack.h"
#include "kg_test.h"

static kg_context *ctx;

static void open_without_device(void) { ctx = kt_open_without_device(); }
static void close_ctx(void) { kg_close(ctx); }

TestSuite(dlpack, .init = open_without_device, .fini = close_ctx);

static int64_t shape3[3] = {2, 3, 4};

static DLTensor dl(int device_type, uint8_t code, uint8_t bits, uint16_t lanes, int64_t *strides, uint64_t offset)
{
    DLTensor t;
    memset(&t, 0, sizeof t);
    t.data = KT_DEV(0);
    t.device.device_type = (DLDeviceType)device_type;
    t.device.device_id = 0;
    t.ndim = 3;
    t.dtype.code = code;
    t.dtype.bits = bits;
    t.dtype.lanes = lanes;
    t.shape = shape3;
    t.strides = strides;
    t.byte_offset = offset;
    return t;
}

/* The refusal leaves dst as it was. */
static void expect_refused(const DLTensor *src, kg_status want, const char *text)
{
    kg_tensor dst;
    memset(&dst, 0x5a, sizeof dst);
    kg_tensor before = dst;
    KT_EXPECT(ctx, kg_tensor_from_dlpack(ctx, src, &dst), want, text);
    cr_assert(memcmp(&dst, &before, sizeof dst) == 0, "a refused conversion wrote into dst");
}

Test(dlpack, every_kgen_dtype_converts_both_ways)
{
    static const struct {
        uint8_t code, bits;
        kg_dtype dt;
    } cases[] = {{kDLFloat, 32, KG_F32}, {kDLFloat, 64, KG_F64}, {kDLFloat, 16, KG_F16}, {kDLBfloat, 16, KG_BF16},
                 {kDLInt, 32, KG_I32},   {kDLInt, 64, KG_I64},   {kDLUInt, 8, KG_U8},    {6 /* kDLBool */, 8, KG_BOOL}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        DLTensor src = dl(kDLCUDA, cases[i].code, cases[i].bits, 1, NULL, 0);
        kg_tensor t;
        KT_OK(ctx, kg_tensor_from_dlpack(ctx, &src, &t));
        cr_assert_eq(t.dtype, cases[i].dt, "case %zu: dtype %s", i, kg_dtype_name(t.dtype));
        cr_assert_eq(t.data, KT_DEV(0));
        cr_assert_str_eq(kg_errmsg(ctx), "");
        DLTensor back;
        KT_OK(ctx, kg_tensor_to_dlpack(ctx, &t, &back));
        cr_assert_eq(back.dtype.code, cases[i].code, "case %zu", i);
        cr_assert_eq(back.dtype.bits, cases[i].bits, "case %zu", i);
        cr_assert_eq(back.dtype.lanes, 1);
        cr_assert_eq(back.device.device_type, kDLCUDA);
        cr_assert_eq(back.device.device_id, 0);
        cr_assert_eq(back.data, KT_DEV(0));
        cr_assert_eq(back.byte_offset, 0);
        cr_assert_eq(back.ndim, 3);
        cr_assert_eq(back.shape, t.shape, "the DLTensor's shape points into the kg_tensor");
        cr_assert_eq(back.strides, t.strides);
    }
}

Test(dlpack, null_strides_are_row_major_and_given_strides_are_kept)
{
    DLTensor src = dl(kDLCUDA, kDLFloat, 32, 1, NULL, 0);
    kg_tensor t;
    KT_OK(ctx, kg_tensor_from_dlpack(ctx, &src, &t));
    cr_assert_eq(t.ndim, 3);
    const int64_t row_major[3] = {12, 4, 1};
    for (int d = 0; d < 3; d++) {
        cr_assert_eq(t.shape[d], shape3[d]);
        cr_assert_eq(t.strides[d], row_major[d], "dim %d: stride %lld", d, (long long)t.strides[d]);
    }
    int64_t transposed[3] = {1, 2, 6}; /* a permuted view, an expanded dim */
    int64_t expanded[3] = {0, 4, 1};
    src.strides = transposed;
    KT_OK(ctx, kg_tensor_from_dlpack(ctx, &src, &t));
    for (int d = 0; d < 3; d++)
        cr_assert_eq(t.strides[d], transposed[d]);
    src.strides = expanded;
    KT_OK(ctx, kg_tensor_from_dlpack(ctx, &src, &t));
    cr_assert_eq(t.strides[0], 0);
}

Test(dlpack, byte_offset_moves_the_data_pointer)
{
    DLTensor src = dl(kDLCUDA, kDLFloat, 32, 1, NULL, 64);
    kg_tensor t;
    KT_OK(ctx, kg_tensor_from_dlpack(ctx, &src, &t));
    cr_assert_eq(t.data, KT_DEV(64));
    src = dl(kDLCUDAManaged, kDLInt, 64, 1, NULL, 8); /* managed memory is device memory too */
    KT_OK(ctx, kg_tensor_from_dlpack(ctx, &src, &t));
    cr_assert_eq(t.data, KT_DEV(8));
}

Test(dlpack, scalars_and_empty_tensors_convert)
{
    DLTensor src = dl(kDLCUDA, kDLFloat, 64, 1, NULL, 0);
    src.ndim = 0;
    src.shape = NULL;
    kg_tensor t;
    KT_OK(ctx, kg_tensor_from_dlpack(ctx, &src, &t));
    cr_assert_eq(t.ndim, 0);
    int64_t empty[2] = {0, 5};
    src = dl(kDLCUDA, kDLFloat, 32, 1, NULL, 0);
    src.ndim = 2;
    src.shape = empty;
    src.data = NULL;
    KT_OK(ctx, kg_tensor_from_dlpack(ctx, &src, &t));
    cr_assert_eq(t.shape[0], 0);
    cr_assert_eq(t.shape[1], 5);
}

Test(dlpack, a_non_cuda_device_is_refused)
{
    static const struct {
        int type;
        const char *what;
    } cases[] = {{kDLCPU, "a CPU device (device_type 1)"},
                 {kDLCUDAHost, "a CUDA host (pinned) device (device_type 3)"},
                 {kDLROCM, "a ROCm device (device_type 10)"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[200];
        snprintf(text, sizeof text,
                 "invalid argument: DLPack tensor is on %s; kgen needs CUDA device memory (kDLCUDA or "
                 "kDLCUDAManaged)",
                 cases[i].what);
        DLTensor src = dl(cases[i].type, kDLFloat, 32, 1, NULL, 0);
        expect_refused(&src, KG_ERR_INVALID_ARGUMENT, text);
    }
}

Test(dlpack, vector_lanes_are_refused)
{
    DLTensor src = dl(kDLCUDA, kDLFloat, 32, 4, NULL, 0);
    expect_refused(&src, KG_ERR_DTYPE,
                   "DLPack dtype float32 with 4 lanes is not supported (kgen tensors have one lane per element)");
}

Test(dlpack, dtypes_kgen_lacks_are_refused)
{
    static const struct {
        uint8_t code, bits;
        const char *text;
    } cases[] = {
        {kDLComplex, 64,
         "DLPack dtype complex64 (code 5) is not supported (kgen has float16/32/64, bfloat16, "
         "int32/64, uint8 and bool)"},
        {kDLInt, 8,
         "DLPack dtype int8 (code 0) is not supported (kgen has float16/32/64, bfloat16, int32/64, uint8 "
         "and bool)"},
        {kDLUInt, 16,
         "DLPack dtype uint16 (code 1) is not supported (kgen has float16/32/64, bfloat16, int32/64, "
         "uint8 and bool)"},
        {kDLFloat, 8,
         "DLPack dtype float8 (code 2) is not supported (kgen has float16/32/64, bfloat16, int32/64, "
         "uint8 and bool)"},
        {kDLBfloat, 32,
         "DLPack dtype bfloat32 (code 4) is not supported (kgen has float16/32/64, bfloat16, "
         "int32/64, uint8 and bool)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        DLTensor src = dl(kDLCUDA, cases[i].code, cases[i].bits, 1, NULL, 0);
        expect_refused(&src, KG_ERR_DTYPE, cases[i].text);
    }
}

/* A type code DLPack does not define is named by its number, once (it read
   "unknown type code32 (code 99)" before session 27). */
Test(dlpack, an_unknown_type_code_is_named_by_its_number)
{
    DLTensor src = dl(kDLCUDA, 99, 32, 1, NULL, 0);
    expect_refused(&src, KG_ERR_DTYPE,
                   "DLPack dtype of unknown type code 99 (32 bits) is not supported (kgen has float16/32/64, "
                   "bfloat16, int32/64, uint8 and bool)");
    src = dl(kDLCUDA, 99, 16, 2, NULL, 0);
    expect_refused(&src, KG_ERR_DTYPE,
                   "DLPack dtype of unknown type code 99 (16 bits) with 2 lanes is not supported (kgen tensors have "
                   "one lane per element)");
}

/* data + byte_offset past the end of the address space names both (it read
   "byte_offset 8 overflows the pointer" before session 27). */
Test(dlpack, a_byte_offset_that_wraps_names_data_and_offset)
{
    DLTensor src = dl(kDLCUDA, kDLFloat, 32, 1, NULL, 8);
    src.data = (void *)(uintptr_t)(UINTPTR_MAX - 3);
    expect_refused(&src, KG_ERR_INVALID_ARGUMENT,
                   "invalid argument: DLPack data 0xfffffffffffffffc + byte_offset 8 wraps past the end of the "
                   "address space");
}

Test(dlpack, a_byte_offset_that_breaks_alignment_is_refused)
{
    DLTensor src = dl(kDLCUDA, kDLFloat, 32, 1, NULL, 2);
    expect_refused(&src, KG_ERR_INVALID_ARGUMENT,
                   "invalid argument: DLPack data 0x10000000 + byte_offset 2 = 0x10000002 is not aligned to the 4 "
                   "bytes of a f32 element");
    src = dl(kDLCUDA, kDLInt, 64, 1, NULL, 12);
    expect_refused(&src, KG_ERR_INVALID_ARGUMENT,
                   "invalid argument: DLPack data 0x10000000 + byte_offset 12 = 0x1000000c is not aligned to the 8 "
                   "bytes of a i64 element");
    src = dl(kDLCUDA, kDLUInt, 8, 1, NULL, 3); /* any offset aligns a byte */
    kg_tensor t;
    KT_OK(ctx, kg_tensor_from_dlpack(ctx, &src, &t));
    cr_assert_eq(t.data, KT_DEV(3));
}

Test(dlpack, bad_shapes_and_strides_are_refused)
{
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    DLTensor src = dl(kDLCUDA, kDLFloat, 32, 1, NULL, 0);
    src.ndim = 9;
    src.shape = nine;
    expect_refused(&src, KG_ERR_INVALID_ARGUMENT, "invalid argument: DLPack tensor has 9 dims (0..8 supported)");
    src = dl(kDLCUDA, kDLFloat, 32, 1, NULL, 0);
    src.shape = NULL;
    expect_refused(&src, KG_ERR_INVALID_ARGUMENT, "invalid argument: DLPack tensor has 3 dims and a NULL shape");
    int64_t negative[3] = {12, -4, 1};
    src = dl(kDLCUDA, kDLFloat, 32, 1, negative, 0);
    expect_refused(&src, KG_ERR_INVALID_ARGUMENT,
                   "invalid argument: the DLPack tensor has stride -4 in dim 1 (strides must be >= 0)");
    int64_t bad_shape[3] = {2, -3, 4};
    src = dl(kDLCUDA, kDLFloat, 32, 1, NULL, 0);
    src.shape = bad_shape;
    expect_refused(&src, KG_ERR_INVALID_ARGUMENT, "invalid argument: the DLPack tensor has size -3 in dim 1");
}

Test(dlpack, a_null_context_still_returns_the_status)
{
    DLTensor src = dl(kDLCPU, kDLFloat, 32, 1, NULL, 0);
    kg_tensor t;
    cr_assert_eq(kg_tensor_from_dlpack(NULL, &src, &t), KG_ERR_INVALID_ARGUMENT);
    src = dl(kDLCUDA, kDLFloat, 32, 1, NULL, 0);
    cr_assert_eq(kg_tensor_from_dlpack(NULL, &src, &t), KG_OK);
    cr_assert_eq(kg_tensor_to_dlpack(NULL, &t, &src), KG_ERR_INVALID_ARGUMENT);
    KT_EXPECT(ctx, kg_tensor_from_dlpack(ctx, NULL, &t), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: kg_tensor_from_dlpack: the DLTensor is NULL");
}

Test(dlpack, to_dlpack_validates_the_tensor)
{
    kg_tensor t = kg_tensor_contiguous(KT_DEV(0), KG_F32, 2, KT_SHAPE(2, 3));
    t.dtype = (kg_dtype)42;
    DLTensor out;
    KT_EXPECT(ctx, kg_tensor_to_dlpack(ctx, &t, &out), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: the tensor has dtype 42, not a kg_dtype");
    /* a NULL source names the call (it read "tensor the tensor is NULL" before
       session 27) */
    KT_EXPECT(ctx, kg_tensor_to_dlpack(ctx, NULL, &out), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: kg_tensor_to_dlpack: the kg_tensor is NULL");
}

Test(dlpack_gpu, a_tensor_on_another_device_is_refused)
{
    kg_context *gpu = kt_open_gpu();
    DLTensor src = dl(kDLCUDA, kDLFloat, 32, 1, NULL, 0);
    src.device.device_id = 1;
    kg_tensor t;
    KT_EXPECT(gpu, kg_tensor_from_dlpack(gpu, &src, &t), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: DLPack tensor is on CUDA device 1, the context on device 0");
    kg_close(gpu);
}
