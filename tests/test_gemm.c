/*
 * test_gemm.c - matmul: every validation error and the layout mapping on the
 * CPU (runs everywhere, CI included), then parity with a float64 CPU
 * reference on the GPU (skipped with the reason where there is none).
 *
 * GPU cases follow TESTING.md's GEMM section: M, N, K sampled from
 * {1, 3, 17, 127, 128, 513} so every value appears in every position, one
 * large product, K = 0, batch 1 and > 1, broadcast batches (folded, strided
 * and host-looped), transposed, padded and column-major layouts, 1-d
 * operands, every dtype, both backends, bias and epilogues, TF32 on and off,
 * graph capture and replay. Integer-valued fills (within +-5) are compared
 * exactly with the correctly rounded sum; random fills within PyTorch's
 * tolerance plus Higham's bound K u sum|a b| for the f32 (f64) accumulation.
 * Outputs are poisoned with NaN (0xFF bytes) first, and padding between
 * rows must still hold the poison afterwards.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <cuda_runtime_api.h>

#include "blas.h"
#include "trust.h"
#include "kg_test.h"

/* ---- CPU: validation errors ------------------------------------------------ */

static kg_context *ctx;

static void open_without_device(void) { ctx = kt_open_without_device(); }

static void close_ctx(void) { kg_close(ctx); }

static kg_tensor T(void *data, kg_dtype dt, int ndim, const int64_t *shape)
{
    return kg_tensor_contiguous(data, dt, ndim, shape);
}

static kg_tensor with_strides(kg_tensor t, const int64_t *strides)
{
    memcpy(t.strides, strides, sizeof(int64_t) * (size_t)t.ndim);
    return t;
}

TestSuite(gemm_errors, .init = open_without_device, .fini = close_ctx);

Test(gemm_errors, null_arguments)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(2, 3)), b = T(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(3, 4));
    kg_tensor o = T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(2, 4));
    cr_assert_eq(kg_matmul(NULL, &o, &a, &b), KG_ERR_INVALID_ARGUMENT);
    KT_EXPECT(ctx, kg_matmul(ctx, NULL, &a, &b), KG_ERR_INVALID_ARGUMENT, "invalid argument: tensor out is NULL");
    KT_EXPECT(ctx, kg_matmul(ctx, &o, NULL, &b), KG_ERR_INVALID_ARGUMENT, "invalid argument: tensor a is NULL");
    KT_EXPECT(ctx, kg_matmul(ctx, &o, &a, NULL), KG_ERR_INVALID_ARGUMENT, "invalid argument: tensor b is NULL");
    kg_tensor nb = T(NULL, KG_F32, 2, KT_SHAPE(3, 4));
    KT_EXPECT(ctx, kg_matmul(ctx, &o, &a, &nb), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: b has 12 elements but a NULL data pointer");
}

Test(gemm_errors, scalar_operand)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 0, NULL), b = T(KT_DEV(0x1000), KG_F32, 1, KT_SHAPE(3));
    kg_tensor o = T(KT_DEV(0x2000), KG_F32, 0, NULL);
    KT_EXPECT(ctx, kg_matmul(ctx, &o, &a, &b), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: matmul: a is 0-d (a scalar); matmul needs at least 1 dim");
    KT_EXPECT(ctx, kg_matmul(ctx, &o, &b, &a), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: matmul: b is 0-d (a scalar); matmul needs at least 1 dim");
}

Test(gemm_errors, dtypes)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(2, 3)), b = T(KT_DEV(0x1000), KG_F16, 2, KT_SHAPE(3, 4));
    kg_tensor o = T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(2, 4));
    KT_EXPECT(ctx, kg_matmul(ctx, &o, &a, &b), KG_ERR_DTYPE,
              "dtype mismatch: matmul: a is f32, b is f16 (a, b and out share one dtype)");
    b.dtype = KG_F32, o.dtype = KG_BF16;
    KT_EXPECT(ctx, kg_matmul(ctx, &o, &a, &b), KG_ERR_DTYPE, "dtype mismatch: matmul: out is bf16 but a and b are f32");
    a.dtype = b.dtype = o.dtype = KG_I32;
    KT_EXPECT(ctx, kg_matmul(ctx, &o, &a, &b), KG_ERR_DTYPE,
              "matmul is not available for i32 (it accepts f32, f64, f16, bf16)");
    a.dtype = b.dtype = o.dtype = KG_BOOL;
    KT_EXPECT(ctx, kg_matmul(ctx, &o, &a, &b), KG_ERR_DTYPE,
              "matmul is not available for bool (it accepts f32, f64, f16, bf16)");
}

Test(gemm_errors, inner_dims_differ)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 3, KT_SHAPE(2, 3, 4)), b = T(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(5, 6));
    kg_tensor o = T(KT_DEV(0x2000), KG_F32, 3, KT_SHAPE(2, 3, 6));
    KT_EXPECT(ctx, kg_matmul(ctx, &o, &a, &b), KG_ERR_SHAPE,
              "shape mismatch: matmul: a is [2,3,4], b is [5,6]: inner dims 4 and 5 differ");
    kg_tensor v = T(KT_DEV(0x3000), KG_F32, 1, KT_SHAPE(3));
    KT_EXPECT(ctx, kg_matmul(ctx, &o, &a, &v), KG_ERR_SHAPE,
              "shape mismatch: matmul: a is [2,3,4], b is [3]: inner dims 4 and 3 differ");
}

Test(gemm_errors, batch_dims_do_not_broadcast)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 3, KT_SHAPE(2, 3, 4)), b = T(KT_DEV(0x1000), KG_F32, 3, KT_SHAPE(5, 4, 6));
    kg_tensor o = T(KT_DEV(0x2000), KG_F32, 3, KT_SHAPE(2, 3, 6));
    KT_EXPECT(ctx, kg_matmul(ctx, &o, &a, &b), KG_ERR_SHAPE,
              "shape mismatch: matmul: a is [2,3,4], b is [5,4,6]: batch dims [2] and [5] do not broadcast");
    kg_tensor a4 = T(KT_DEV(0), KG_F32, 4, KT_SHAPE(7, 2, 3, 4)),
              b4 = T(KT_DEV(0x1000), KG_F32, 4, KT_SHAPE(3, 1, 4, 6));
    KT_EXPECT(ctx, kg_matmul(ctx, &o, &a4, &b4), KG_ERR_SHAPE,
              "shape mismatch: matmul: a is [7,2,3,4], b is [3,1,4,6]: batch dims [7,2] and [3,1] do not broadcast");
}

Test(gemm_errors, out_shape)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 4, KT_SHAPE(2, 1, 3, 4)), b = T(KT_DEV(0x1000), KG_F32, 3, KT_SHAPE(5, 4, 6));
    kg_tensor o = T(KT_DEV(0x2000), KG_F32, 3, KT_SHAPE(5, 3, 6));
    KT_EXPECT(ctx, kg_matmul(ctx, &o, &a, &b), KG_ERR_SHAPE,
              "shape mismatch: matmul: out is [5,3,6] but a [2,1,3,4] @ b [5,4,6] is [2,5,3,6]");
    kg_tensor v = T(KT_DEV(0x3000), KG_F32, 1, KT_SHAPE(4));
    kg_tensor o2 = T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(3, 1));
    kg_tensor a2 = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(3, 4));
    KT_EXPECT(ctx, kg_matmul(ctx, &o2, &a2, &v), KG_ERR_SHAPE,
              "shape mismatch: matmul: out is [3,1] but a [3,4] @ b [4] is [3]");
}

Test(gemm_errors, options)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(2, 3)), b = T(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(3, 4));
    kg_tensor o = T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(2, 4));
    kg_matmul_opts opts = {NULL, (kg_epilogue)7, KG_GEMM_AUTO};
    KT_EXPECT(ctx, kg_matmul_ex(ctx, &o, &a, &b, &opts), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: matmul: epilogue 7 is not a kg_epilogue");
    opts.epilogue = KG_EPILOGUE_RELU, opts.backend = (kg_gemm_backend)-1;
    KT_EXPECT(ctx, kg_matmul_ex(ctx, &o, &a, &b, &opts), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: matmul: backend -1 is not a kg_gemm_backend");
    opts.backend = KG_GEMM_CUBLAS;
    KT_EXPECT(ctx, kg_matmul_ex(ctx, &o, &a, &b, &opts), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: matmul: a bias or epilogue needs cuBLASLt, not the KG_GEMM_CUBLAS backend");
}

Test(gemm_errors, bias)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(2, 3)), b = T(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(3, 4));
    kg_tensor o = T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(2, 4));
    kg_tensor bias = T(KT_DEV(0x3000), KG_F16, 1, KT_SHAPE(4));
    kg_matmul_opts opts = {&bias, KG_EPILOGUE_NONE, KG_GEMM_AUTO};
    KT_EXPECT(ctx, kg_matmul_ex(ctx, &o, &a, &b, &opts), KG_ERR_DTYPE,
              "dtype mismatch: matmul: bias is f16 but out is f32");
    bias = T(KT_DEV(0x3000), KG_F32, 1, KT_SHAPE(2));
    KT_EXPECT(ctx, kg_matmul_ex(ctx, &o, &a, &b, &opts), KG_ERR_SHAPE,
              "shape mismatch: matmul: bias is [2] but must be [4] (out's last dim)");
    bias = T(KT_DEV(0x3000), KG_F32, 2, KT_SHAPE(1, 4));
    KT_EXPECT(ctx, kg_matmul_ex(ctx, &o, &a, &b, &opts), KG_ERR_SHAPE,
              "shape mismatch: matmul: bias is [1,4] but must be [4] (out's last dim)");
    bias = with_strides(T(KT_DEV(0x3000), KG_F32, 1, KT_SHAPE(4)), KT_SHAPE(2));
    KT_EXPECT(ctx, kg_matmul_ex(ctx, &o, &a, &b, &opts), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: matmul: bias [4] has stride 2; it must be contiguous (stride 1)");
    /* a column-major out with a bias is computed densely and copied: valid */
    bias = T(KT_DEV(0x3000), KG_F32, 1, KT_SHAPE(4));
    kg_tensor oc = with_strides(T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(2, 4)), KT_SHAPE(1, 2));
    cr_assert_eq(kg_matmul_ex(ctx, &oc, &a, &b, &opts), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
}

Test(gemm_errors, any_layout_is_accepted)
{
    /* layouts cuBLAS cannot read or write as they are are packed, not
       refused: validation passes and the missing device is what remains */
    static const int64_t bad[][2] = {{10, 2}, {3, 1}, {1, 3}, {0, 1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kg_tensor a = with_strides(T(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 5)), bad[i]);
        kg_tensor b = T(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(5, 6)), o = T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(4, 6));
        cr_assert_eq(kg_matmul(ctx, &o, &a, &b), KG_ERR_NO_DEVICE, "a strides %zu: %s", i, kg_errmsg(ctx));
    }
    kg_tensor a = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 5));
    kg_tensor b = with_strides(T(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(5, 6)), KT_SHAPE(12, 2));
    kg_tensor o = with_strides(T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(4, 6)), KT_SHAPE(12, 2));
    cr_assert_eq(kg_matmul(ctx, &o, &a, &b), KG_ERR_NO_DEVICE, "%s", kg_errmsg(ctx));
}

/* The byte ranges are named, as in every other family (before session 27
   matmul's message gave none). */
Test(gemm_errors, overlap)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 5)), b = T(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(5, 6));
    kg_tensor o = T(KT_DEV(0x40), KG_F32, 2, KT_SHAPE(4, 6));
    KT_EXPECT(ctx, kg_matmul(ctx, &o, &a, &b), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: matmul: out overlaps a (bytes [0x10000040, 0x100000a0) and [0x10000000, "
              "0x10000050)); cuBLAS would read a while writing out");
    o = T(KT_DEV(0x1010), KG_F32, 2, KT_SHAPE(4, 6));
    KT_EXPECT(ctx, kg_matmul(ctx, &o, &a, &b), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: matmul: out overlaps b (bytes [0x10001010, 0x10001070) and [0x10001000, "
              "0x10001078)); cuBLAS would read b while writing out");
    o = T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(4, 6));
    kg_tensor bias = T(KT_DEV(0x2000 + 4 * 23), KG_F32, 1, KT_SHAPE(6));
    kg_matmul_opts opts = {&bias, KG_EPILOGUE_NONE, KG_GEMM_AUTO};
    KT_EXPECT(ctx, kg_matmul_ex(ctx, &o, &a, &b, &opts), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: matmul: out overlaps bias (bytes [0x10002000, 0x10002060) and [0x1000205c, "
              "0x10002074)); cuBLAS would read bias while writing out");
    kg_tensor self = with_strides(T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(4, 6)), KT_SHAPE(0, 1));
    kg_status st = kg_matmul(ctx, &self, &a, &b);
    cr_assert_eq(st, KG_ERR_INVALID_ARGUMENT, "%s: %s", kg_status_name(st), kg_errmsg(ctx));
    cr_assert(strstr(kg_errmsg(ctx), "out") != NULL, "%s", kg_errmsg(ctx));
}

Test(gemm_errors, valid_call_reports_no_device)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 5)), b = T(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(5, 6));
    kg_tensor o = T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(4, 6));
    kg_status st = kg_matmul(ctx, &o, &a, &b);
    cr_assert_eq(st, KG_ERR_NO_DEVICE, "%s: %s", kg_status_name(st), kg_errmsg(ctx));
    cr_assert(strncmp(kg_errmsg(ctx), "no CUDA driver or device", 24) == 0, "%s", kg_errmsg(ctx));
    cr_assert_eq(kg_set_tf32(ctx, 1), KG_ERR_NO_DEVICE);
    cr_assert_eq(kg_gemm_prepare(ctx), KG_ERR_NO_DEVICE);
    /* An empty product is still validated first, then reports the device. */
    kg_tensor e = T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(0, 6)), ea = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(0, 5));
    cr_assert_eq(kg_matmul(ctx, &e, &ea, &b), KG_ERR_NO_DEVICE);
}

/* ---- CPU: the layout mapping ----------------------------------------------- */

static kg_gemm_desc describe(const kg_tensor *o, const kg_tensor *a, const kg_tensor *b, const kg_tensor *bias)
{
    kg_gemm_desc g;
    kg_matmul_opts opts = {bias, KG_EPILOGUE_NONE, KG_GEMM_AUTO};
    kg_status st = kg_gemm_describe(ctx, o, a, b, &opts, &g);
    cr_assert_eq(st, KG_OK, "kg_gemm_describe: %s: %s", kg_status_name(st), kg_errmsg(ctx));
    return g;
}

#define EXPECT_DESC(g, sw, tx, ty, m_, n_, k_, lx, ly, ldd_)                                                           \
    do {                                                                                                               \
        cr_assert_eq((g).swapped, sw, "swapped");                                                                      \
        cr_assert_eq((g).trans_x, tx, "trans_x");                                                                      \
        cr_assert_eq((g).trans_y, ty, "trans_y");                                                                      \
        cr_assert_eq((g).m, m_, "m %lld", (long long)(g).m);                                                           \
        cr_assert_eq((g).n, n_, "n %lld", (long long)(g).n);                                                           \
        cr_assert_eq((g).k, k_, "k %lld", (long long)(g).k);                                                           \
        cr_assert_eq((g).ldx, lx, "ldx %lld", (long long)(g).ldx);                                                     \
        cr_assert_eq((g).ldy, ly, "ldy %lld", (long long)(g).ldy);                                                     \
        cr_assert_eq((g).ldd, ldd_, "ldd %lld", (long long)(g).ldd);                                                   \
    } while (0)

TestSuite(gemm_layout, .init = open_without_device, .fini = close_ctx);

Test(gemm_layout, row_major_is_computed_transposed)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 5)), b = T(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(5, 6));
    kg_tensor o = T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(4, 6));
    kg_gemm_desc g = describe(&o, &a, &b, NULL);
    /* out^T (6x4) = b^T (6x5) a^T (5x4), all read as stored */
    EXPECT_DESC(g, 1, 0, 0, 6, 4, 5, 6, 5, 6);
    cr_assert_eq(g.x, b.data);
    cr_assert_eq(g.y, a.data);
    cr_assert_eq(g.batch, 1);
    cr_assert_eq(g.nloop, 0);
}

Test(gemm_layout, transposed_and_padded_operands)
{
    /* a = t[5,4]^T and b with rows padded to 8 */
    kg_tensor a = with_strides(T(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 5)), KT_SHAPE(1, 4));
    kg_tensor b = with_strides(T(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(5, 6)), KT_SHAPE(8, 1));
    kg_tensor o = with_strides(T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(4, 6)), KT_SHAPE(7, 1));
    kg_gemm_desc g = describe(&o, &a, &b, NULL);
    EXPECT_DESC(g, 1, 0, 1, 6, 4, 5, 8, 4, 7);
}

Test(gemm_layout, column_major_out_is_computed_directly)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 5)), b = T(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(5, 6));
    kg_tensor o = with_strides(T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(4, 6)), KT_SHAPE(1, 4));
    kg_gemm_desc g = describe(&o, &a, &b, NULL);
    EXPECT_DESC(g, 0, 1, 1, 4, 6, 5, 5, 6, 4);
    cr_assert_eq(g.x, a.data);
}

Test(gemm_layout, broadcast_b_folds_batch_into_one_gemm)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 3, KT_SHAPE(8, 4, 5)), b = T(KT_DEV(0x10000), KG_F32, 2, KT_SHAPE(5, 6));
    kg_tensor o = T(KT_DEV(0x20000), KG_F32, 3, KT_SHAPE(8, 4, 6));
    kg_gemm_desc g = describe(&o, &a, &b, NULL);
    EXPECT_DESC(g, 1, 0, 0, 6, 32, 5, 6, 5, 6);
    cr_assert_eq(g.batch, 1);
    cr_assert_eq(g.nloop, 0);
}

Test(gemm_layout, batches_run_strided)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 3, KT_SHAPE(8, 4, 5)), b = T(KT_DEV(0x10000), KG_F32, 3, KT_SHAPE(8, 5, 6));
    kg_tensor o = T(KT_DEV(0x20000), KG_F32, 3, KT_SHAPE(8, 4, 6));
    kg_gemm_desc g = describe(&o, &a, &b, NULL);
    EXPECT_DESC(g, 1, 0, 0, 6, 4, 5, 6, 5, 6);
    cr_assert_eq(g.batch, 8);
    cr_assert_eq(g.sx, 30);
    cr_assert_eq(g.sy, 20);
    cr_assert_eq(g.sd, 24);
    /* a broadcast along the batch: stride 0 */
    kg_tensor a2 = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 5));
    g = describe(&o, &a2, &b, NULL);
    cr_assert_eq(g.batch, 8);
    cr_assert_eq(g.sy, 0);
    cr_assert_eq(g.sx, 30);
}

Test(gemm_layout, two_broadcast_batch_dims_loop_the_smaller)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 4, KT_SHAPE(2, 1, 4, 5)), b = T(KT_DEV(0x10000), KG_F32, 3, KT_SHAPE(3, 5, 6));
    kg_tensor o = T(KT_DEV(0x20000), KG_F32, 4, KT_SHAPE(2, 3, 4, 6));
    kg_gemm_desc g = describe(&o, &a, &b, NULL);
    cr_assert_eq(g.batch, 3);
    cr_assert_eq(g.sx, 30);
    cr_assert_eq(g.sy, 0);
    cr_assert_eq(g.sd, 24);
    cr_assert_eq(g.nloop, 1);
    cr_assert_eq(g.loop_size[0], 2);
    cr_assert_eq(g.loop_sx[0], 0);
    cr_assert_eq(g.loop_sy[0], 20);
    cr_assert_eq(g.loop_sd[0], 72);
}

Test(gemm_layout, chained_batch_dims_merge)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 4, KT_SHAPE(2, 3, 4, 5)),
              b = T(KT_DEV(0x10000), KG_F32, 4, KT_SHAPE(2, 3, 5, 6));
    kg_tensor o = T(KT_DEV(0x20000), KG_F32, 4, KT_SHAPE(2, 3, 4, 6));
    kg_gemm_desc g = describe(&o, &a, &b, NULL);
    cr_assert_eq(g.batch, 6);
    cr_assert_eq(g.nloop, 0);
}

Test(gemm_layout, vectors)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 5)),
              v = with_strides(T(KT_DEV(0x1000), KG_F32, 1, KT_SHAPE(5)), KT_SHAPE(3));
    kg_tensor o = T(KT_DEV(0x2000), KG_F32, 1, KT_SHAPE(4));
    kg_gemm_desc g = describe(&o, &a, &v, NULL);
    cr_assert_eq(g.m * g.n, 4);
    cr_assert_eq(g.k, 5);
    kg_tensor w = T(KT_DEV(0x3000), KG_F32, 1, KT_SHAPE(4)), s = T(KT_DEV(0x2000), KG_F32, 0, NULL);
    kg_tensor u = T(KT_DEV(0x4000), KG_F32, 1, KT_SHAPE(4));
    g = describe(&s, &w, &u, NULL);
    cr_assert_eq(g.m, 1);
    cr_assert_eq(g.n, 1);
    cr_assert_eq(g.k, 4);
}

Test(gemm_layout, empty_and_k0)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(0, 5)), b = T(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(5, 6));
    kg_tensor o = T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(0, 6));
    cr_assert_eq(describe(&o, &a, &b, NULL).empty, 1);
    kg_tensor a0 = with_strides(T(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 0)), KT_SHAPE(0, 0));
    kg_tensor b0 = T(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(0, 6)), o0 = T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(4, 6));
    kg_gemm_desc g = describe(&o0, &a0, &b0, NULL);
    cr_assert_eq(g.empty, 0);
    cr_assert_eq(g.k, 0);
    cr_assert_eq(g.fill, 1);
}

Test(gemm_layout, k0_with_unmergeable_batch_is_one_fill)
{
    /* issue 13: an out [1,4,178,178,178,6,3,3] with K = 0 made ~1.35e8
       memsets from a host loop; the empty operands' strides do not matter */
    const int64_t os[] = {1, 4, 178, 178, 178, 6, 3, 3};
    kg_tensor o = T(KT_DEV(0x100000), KG_F32, 8, os);
    kg_tensor a = with_strides(T(KT_DEV(0), KG_F32, 8, KT_SHAPE(1, 4, 178, 178, 178, 6, 3, 0)),
                               KT_SHAPE(7, 1, 3, 0, 5, 11, 2, 9));
    kg_tensor b = with_strides(T(KT_DEV(0), KG_F32, 2, KT_SHAPE(0, 3)), KT_SHAPE(1, 0));
    kg_gemm_desc g = describe(&o, &a, &b, NULL);
    cr_assert_eq(g.fill, 1);
    cr_assert_eq(g.nloop, 0);
    cr_assert_eq(g.empty, 0);
}

Test(gemm_layout, unreadable_operand_is_packed)
{
    /* issue 16: b [5,6] with strides [12,2] (a slice with step 2) */
    kg_tensor a = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 5)), o = T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(4, 6));
    kg_tensor b = with_strides(T(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(5, 6)), KT_SHAPE(12, 2));
    kg_gemm_desc g = describe(&o, &a, &b, NULL);
    cr_assert_eq(g.swapped, 1);
    cr_assert_eq(g.pack_x, 1);
    cr_assert_eq(g.pack_y, 0);
    cr_assert_eq(g.pack_d, 0);
    cr_assert_eq(g.src_x.ndim, 2);
    cr_assert_eq(g.src_x.data, b.data);
    cr_assert_eq(g.src_x.strides[0], 12);
    cr_assert_eq(g.src_x.strides[1], 2);
    EXPECT_DESC(g, 1, 0, 0, 6, 4, 5, 6, 5, 6);
    cr_assert_eq(g.pack_bytes, 256);
    cr_assert_eq(g.off_x, 0);
    cr_assert_eq(g.y, a.data);
}

Test(gemm_layout, unwritable_out_is_computed_densely)
{
    kg_tensor a = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 5)), b = T(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(5, 6));
    kg_tensor o = with_strides(T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(4, 6)), KT_SHAPE(12, 2));
    kg_gemm_desc g = describe(&o, &a, &b, NULL);
    cr_assert_eq(g.pack_d, 1);
    cr_assert_eq(g.pack_x + g.pack_y, 0);
    EXPECT_DESC(g, 1, 0, 0, 6, 4, 5, 6, 5, 6);
    cr_assert_eq(g.pack_bytes, 256);
    /* a bias with a column-major out: likewise */
    kg_tensor bias = T(KT_DEV(0x3000), KG_F32, 1, KT_SHAPE(6));
    kg_tensor oc = with_strides(T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(4, 6)), KT_SHAPE(1, 4));
    g = describe(&oc, &a, &b, &bias);
    cr_assert_eq(g.pack_d, 1);
    cr_assert_eq(g.swapped, 1);
    cr_assert_eq(g.bias, bias.data);
}

Test(gemm_layout, many_unmergeable_batches_pack_into_one_call)
{
    /* a's two batch dims are transposed in memory: no stride describes its
       batch, and 32 x 32 host-looped calls are too many */
    kg_tensor a = with_strides(T(KT_DEV(0), KG_F32, 4, KT_SHAPE(32, 32, 4, 5)), KT_SHAPE(20, 640, 5, 1));
    kg_tensor b = T(KT_DEV(0x100000), KG_F32, 4, KT_SHAPE(32, 32, 5, 6));
    kg_tensor o = T(KT_DEV(0x200000), KG_F32, 4, KT_SHAPE(32, 32, 4, 6));
    kg_gemm_desc g = describe(&o, &a, &b, NULL);
    cr_assert_eq(g.nloop, 0);
    cr_assert_eq(g.batch, 1024);
    cr_assert_eq(g.pack_y, 1);
    cr_assert_eq(g.pack_x, 0);
    cr_assert_eq(g.pack_d, 0);
    cr_assert_eq(g.sy, 20);
    cr_assert_eq(g.sx, 30);
    cr_assert_eq(g.sd, 24);
    cr_assert_eq(g.pack_bytes, 1024 * 20 * 4);
    /* a few (<= KG_GEMM_MAX_LOOP) still loop without a copy */
    a = with_strides(T(KT_DEV(0), KG_F32, 4, KT_SHAPE(4, 4, 4, 5)), KT_SHAPE(20, 80, 5, 1));
    b = T(KT_DEV(0x100000), KG_F32, 4, KT_SHAPE(4, 4, 5, 6));
    o = T(KT_DEV(0x200000), KG_F32, 4, KT_SHAPE(4, 4, 4, 6));
    g = describe(&o, &a, &b, NULL);
    cr_assert_eq(g.nloop, 1);
    cr_assert_eq(g.pack_x + g.pack_y + g.pack_d, 0);
}

Test(gemm_errors, byte_ranges_that_wrap_are_refused)
{
    /* issue 13: an operand whose bytes run past 2^64 wrapped to a range
       below out's and passed the overlap check */
    kg_tensor a = T((void *)(uintptr_t)(UINTPTR_MAX - 63), KG_F32, 2, KT_SHAPE(4, 5));
    kg_tensor b = T(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(5, 6)), o = T(KT_DEV(0x2000), KG_F32, 2, KT_SHAPE(4, 6));
    kg_status st = kg_matmul(ctx, &o, &a, &b);
    cr_assert_eq(st, KG_ERR_INVALID_ARGUMENT, "%s: %s", kg_status_name(st), kg_errmsg(ctx));
    cr_assert(strstr(kg_errmsg(ctx), "a") && strstr(kg_errmsg(ctx), "past the end of the address space"), "%s",
              kg_errmsg(ctx));
    /* strides whose span passes 2^63 bytes */
    a = with_strides(T(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 5)), KT_SHAPE(INT64_MAX / 2, 1));
    st = kg_matmul(ctx, &o, &a, &b);
    cr_assert_eq(st, KG_ERR_INVALID_ARGUMENT, "%s: %s", kg_status_name(st), kg_errmsg(ctx));
    cr_assert(strstr(kg_errmsg(ctx), "spans more than 2^63 bytes"), "%s", kg_errmsg(ctx));
    kg_tensor bias = with_strides(T(KT_DEV(0x3000), KG_F32, 1, KT_SHAPE(6)), KT_SHAPE(1));
    bias.data = (void *)(uintptr_t)(UINTPTR_MAX - 8);
    a = T(KT_DEV(0), KG_F32, 2, KT_SHAPE(4, 5));
    kg_matmul_opts opts = {&bias, KG_EPILOGUE_NONE, KG_GEMM_AUTO};
    st = kg_matmul_ex(ctx, &o, &a, &b, &opts);
    cr_assert_eq(st, KG_ERR_INVALID_ARGUMENT, "%s: %s", kg_status_name(st), kg_errmsg(ctx));
    cr_assert(strstr(kg_errmsg(ctx), "bias"), "%s", kg_errmsg(ctx));
}

Test(gemm_layout, fold_and_merge_arithmetic_never_overflows)
{
    /* batch strides near INT64_MAX / n: the fold and merge tests multiply
       them by extents; with checked products they simply do not fold */
    const int64_t big = INT64_MAX / 3;
    kg_tensor a = with_strides(T(KT_DEV(0), KG_F32, 4, KT_SHAPE(1, 2, 4, 5)), KT_SHAPE(0, big / 8, 5, 1));
    kg_tensor b = T((void *)(uintptr_t)0x1000, KG_F32, 2, KT_SHAPE(5, 6));
    kg_tensor o = T((void *)(uintptr_t)0x2000, KG_F32, 4, KT_SHAPE(1, 2, 4, 6));
    kg_gemm_desc g;
    kg_status st = kg_gemm_describe(ctx, &o, &a, &b, NULL, &g);
    /* the span of a is 4 bytes * (big/8 + 20) < 2^63: valid */
    cr_assert_eq(st, KG_OK, "%s", kg_errmsg(ctx));
    cr_assert_eq(g.batch * (g.nloop ? g.loop_size[0] : 1) * g.n * g.m, 48);
}

/* ---- GPU: parity with a float64 reference ------------------------------------ */

/* A host-side tensor and its device copy; `host` spans the whole storage,
   padding included (filled with NaN, which must never be read). */
typedef struct mat {
    kg_tensor t;
    void *host;
    int64_t span;
} mat;

/* Logical shape [batch..., R, C]; the last two dims stored row-major, or
   transposed (column-major), with `pad` extra elements per leading dim. */
static mat make(kg_context *c, kg_dtype dt, int ndim, const int64_t *shape, int trans, int64_t pad)
{
    mat m;
    memset(&m, 0, sizeof m);
    m.t = kg_tensor_contiguous(NULL, dt, ndim, shape);
    int64_t block;
    if (ndim == 0) {
        block = 1;
    } else if (ndim == 1) {
        m.t.strides[0] = 1 + pad;
        block = shape[0] * (1 + pad);
    } else {
        const int64_t R = shape[ndim - 2], C = shape[ndim - 1];
        if (trans)
            m.t.strides[ndim - 2] = 1, m.t.strides[ndim - 1] = R + pad, block = C * (R + pad);
        else
            m.t.strides[ndim - 1] = 1, m.t.strides[ndim - 2] = C + pad, block = R * (C + pad);
        for (int d = ndim - 3; d >= 0; d--) {
            m.t.strides[d] = block;
            block *= shape[d];
        }
    }
    m.span = block > 0 ? block : 1;
    const size_t bytes = (size_t)m.span * kg_dtype_size(dt);
    m.host = malloc(bytes);
    memset(m.host, 0xff, bytes);
    m.t.data = kt_alloc(c, bytes);
    return m;
}

static void drop(kg_context *c, mat *m)
{
    kg_free(c, m->t.data);
    free(m->host);
}

static int64_t offset_of(const kg_tensor *t, const int64_t *idx)
{
    int64_t o = 0;
    for (int d = 0; d < t->ndim; d++)
        o += idx[d] * t->strides[d];
    return o;
}

/* Fills every logical element: integers in [-5, 5] or uniform [-1, 1). */
static void fill(kg_context *c, mat *m, uint64_t *rng, int exact)
{
    const int64_t n = kg_numel(&m->t);
    int64_t idx[KG_MAX_DIMS] = {0};
    for (int64_t e = 0; e < n; e++) {
        int64_t r = e;
        for (int d = m->t.ndim - 1; d >= 0; d--)
            idx[d] = r % m->t.shape[d], r /= m->t.shape[d];
        const double v = exact ? floor(kt_uniform(rng, -5, 6)) : kt_uniform(rng, -1, 1);
        kt_set(m->host, m->t.dtype, offset_of(&m->t, idx), v);
    }
    kt_upload(c, m->t.data, m->host, (size_t)m->span * kg_dtype_size(m->t.dtype));
}

/* The output dtype's neighbours of x, below and above (x itself when it is
   representable); f16/bf16 normal range. */
static void neighbours(kg_dtype dt, double x, double *lo, double *hi)
{
    if (x == 0) {
        *lo = *hi = 0;
        return;
    }
    int e;
    frexp(fabs(x), &e);
    const double ulp = ldexp(1.0, e - (dt == KG_F16 ? 11 : 8));
    *lo = floor(x / ulp) * ulp;
    *hi = ceil(x / ulp) * ulp;
}

static double act(kg_epilogue epi, double x) { return epi == KG_EPILOGUE_RELU ? (x < 0 ? 0 : x) : x; }

static double gelu_tanh(double x) { return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

/* The tolerance of an epilogue's result ref computed from ab = a @ b over K
   products (mag: sum |a b| + |bias|): the dtype floor at ref plus slope (the
   epilogue's largest |derivative|: 1, or 1.13 for GELU) times the
   accumulation bound ((K + 1) u_acc + u_in) mag (u_in: the inputs' own
   rounding, TF32's) and, where the epilogue may see a @ b already rounded to
   the output dtype (f16/bf16, rounds_first; kg_gemm.h), one rounding of
   |ab|. */
static double epi_tol(kg_dtype dt, int64_t K, double u_in, double slope, int rounds_first, double mag, double ab,
                      double ref)
{
    double rtol, atol;
    kt_tolerance(dt, &rtol, &atol);
    const double u_acc = dt == KG_F64 ? 0x1p-53 : 0x1p-24;
    const double u_out = !rounds_first ? 0 : dt == KG_F16 ? 0x1p-11 : 0x1p-8;
    return atol + rtol * fabs(ref) + slope * (((double)(K + 1) * u_acc + u_in) * mag * 1.01 + u_out * fabs(ab));
}

typedef struct gcase {
    int nba, nbb;
    int64_t ba[3], bb[3]; /* batch dims of a and b */
    int64_t M, N, K;
    int a1, b1;  /* 1-d operands */
    int ta, tb;  /* stored transposed */
    int64_t pad; /* padding of every leading dim (out's too) */
    int out_cm;  /* out column-major */
    int exact;
    kg_epilogue epi;
    int bias;
    int tf32;
    kg_gemm_backend backend;
    int sample; /* check this many random outputs (0: all) */
} gcase;

/* [batch..., r, c], or [batch..., len] for a 1-d operand. */
static int ndims_of(int nb, const int64_t *bdims, int vec, int64_t len, int64_t r, int64_t c, int64_t *shape)
{
    int n = 0;
    for (int i = 0; i < nb; i++)
        shape[n++] = bdims[i];
    if (vec)
        shape[n++] = len;
    else
        shape[n++] = r, shape[n++] = c;
    return n;
}

static const char *case_str(char *buf, size_t len, kg_dtype dt, const gcase *g)
{
    snprintf(buf, len,
             "%s M=%lld N=%lld K=%lld batch a %d dims b %d dims, 1-d %d/%d, trans %d/%d, pad %lld, out col-major %d, "
             "%s, epilogue %d, bias %d, tf32 %d, backend %d (seed %llu)",
             kg_dtype_name(dt), (long long)g->M, (long long)g->N, (long long)g->K, g->nba, g->nbb, g->a1, g->b1, g->ta,
             g->tb, (long long)g->pad, g->out_cm, g->exact ? "integer fill" : "random fill", (int)g->epi, g->bias,
             g->tf32, (int)g->backend, (unsigned long long)kt_seed());
    return buf;
}

/* Runs one case on the GPU and checks it against the float64 reference. */
static void run_case(kg_context *c, kg_dtype dt, const gcase *g)
{
    if (!kt_take(4)) /* sanitizer mode (kg_test.h): a seeded sample of the cases */
        return;
    char what[512];
    case_str(what, sizeof what, dt, g);
    uint64_t rng = kt_seed() ^ (uint64_t)(g->M * 1000003 + g->N * 1009 + g->K) ^ ((uint64_t)dt << 40);
    int64_t sa[KG_MAX_DIMS], sb[KG_MAX_DIMS], so[KG_MAX_DIMS];
    const int na = ndims_of(g->nba, g->ba, g->a1, g->K, g->M, g->K, sa);
    const int nbd = ndims_of(g->nbb, g->bb, g->b1, g->K, g->K, g->N, sb);
    mat A = make(c, dt, na, sa, g->ta, g->pad), B = make(c, dt, nbd, sb, g->tb, g->pad);
    /* out's shape: broadcast batch, then M (unless a is 1-d), N (unless b is). */
    const int nb = g->nba > g->nbb ? g->nba : g->nbb;
    int no = 0;
    for (int i = 0; i < nb; i++) {
        const int ia = i - (nb - g->nba), ib = i - (nb - g->nbb);
        const int64_t da = ia >= 0 ? g->ba[ia] : 1, db = ib >= 0 ? g->bb[ib] : 1;
        so[no++] = da == 1 ? db : da;
    }
    if (!g->a1)
        so[no++] = g->M;
    if (!g->b1)
        so[no++] = g->N;
    mat O = make(c, dt, no, so, g->out_cm && no >= 2, g->pad);
    mat Bias = make(c, dt, 1, KT_SHAPE(g->N), 0, 0);
    fill(c, &A, &rng, g->exact);
    fill(c, &B, &rng, g->exact);
    fill(c, &Bias, &rng, g->exact);
    KT_OK(c, kg_memset(c, O.t.data, 0xff, (size_t)O.span * kg_dtype_size(dt))); /* NaN poison */
    KT_OK(c, kg_set_tf32(c, g->tf32));
    kg_matmul_opts opts = {g->bias ? &Bias.t : NULL, g->epi, g->backend};
    kg_status st = kg_matmul_ex(c, &O.t, &A.t, &B.t, &opts);
    cr_assert_eq(st, KG_OK, "kg_matmul_ex -> %s: %s; case %s", kg_status_name(st), kg_errmsg(c), what);
    KT_OK(c, kg_sync(c));
    void *got = malloc((size_t)O.span * kg_dtype_size(dt));
    kt_download(c, got, O.t.data, (size_t)O.span * kg_dtype_size(dt));

    /* TF32 keeps 10 mantissa bits of each input and may truncate: each
       product is off by at most about 2 * 2^-10 of its size. */
    const double u_in = (dt == KG_F32 && g->tf32) ? 2 * 0x1p-10 : 0;
    const int64_t total = kg_numel(&O.t);
    const int64_t checks = g->sample && g->sample < total ? g->sample : total;
    int64_t oidx[KG_MAX_DIMS], aidx[KG_MAX_DIMS], bidx[KG_MAX_DIMS];
    for (int64_t e = 0; e < checks; e++) {
        int64_t flat = checks == total ? e : (int64_t)(kt_next(&rng) % (uint64_t)total);
        if (checks != total && e < 2)
            flat = e == 0 ? 0 : total - 1;
        int64_t r = flat;
        for (int d = no - 1; d >= 0; d--)
            oidx[d] = r % so[d], r /= so[d];
        /* batch index of each operand (broadcast dims index 0) */
        for (int d = 0; d < g->nba; d++)
            aidx[d] = g->ba[d] == 1 ? 0 : oidx[nb - g->nba + d];
        for (int d = 0; d < g->nbb; d++)
            bidx[d] = g->bb[d] == 1 ? 0 : oidx[nb - g->nbb + d];
        const int64_t i = g->a1 ? 0 : oidx[nb], j = g->b1 ? 0 : oidx[no - 1];
        double ref = 0, mag = 0;
        for (int64_t k = 0; k < g->K; k++) {
            if (g->a1)
                aidx[g->nba] = k;
            else
                aidx[g->nba] = i, aidx[g->nba + 1] = k;
            if (g->b1)
                bidx[g->nbb] = k;
            else
                bidx[g->nbb] = k, bidx[g->nbb + 1] = j;
            const double p = kt_get(A.host, dt, offset_of(&A.t, aidx)) * kt_get(B.host, dt, offset_of(&B.t, bidx));
            ref += p;
            mag += fabs(p);
        }
        /* Some cuBLASLt kernels' epilogues in f16/bf16 see a @ b already
           rounded to the output dtype (seen on an H200, in either direction;
           documented in kg_gemm.h). The exact comparison accepts the result
           from a @ b or from either neighbour of it in the output dtype; the
           tolerance for random fills allows one such rounding of |a @ b|. */
        const int rounds_first = (dt == KG_F16 || dt == KG_BF16) && (g->bias || g->epi != KG_EPILOGUE_NONE);
        const double acc = ref, bv = g->bias ? kt_get(Bias.host, dt, j) : 0;
        double slope = 1;
        ref += bv;
        mag += fabs(bv);
        if (g->epi == KG_EPILOGUE_RELU)
            ref = ref < 0 ? 0 : ref;
        else if (g->epi == KG_EPILOGUE_GELU_TANH)
            ref = gelu_tanh(ref), slope = 1.13; /* max |gelu'| */
        const double v = kt_get(got, dt, offset_of(&O.t, oidx));
        if (g->exact && g->epi != KG_EPILOGUE_GELU_TANH) {
            const double want = kt_round(dt, ref);
            double lo = acc, hi = acc;
            if (rounds_first)
                neighbours(dt, acc, &lo, &hi);
            const double want_lo = kt_round(dt, act(g->epi, lo + bv)), want_hi = kt_round(dt, act(g->epi, hi + bv));
            cr_assert(v == want || v == want_lo || v == want_hi,
                      "out element %lld: got %.17g, want exactly %.17g (or %.17g / %.17g from a @ b rounded first); "
                      "case %s",
                      (long long)flat, v, want, want_lo, want_hi, what);
        } else {
            const double tol = epi_tol(dt, g->K, u_in, slope, rounds_first, mag, acc, ref);
            cr_assert(fabs(v - ref) <= tol, "out element %lld: got %.17g, want %.17g (tolerance %.3g); case %s",
                      (long long)flat, v, ref, tol, what);
        }
    }
    /* Padding was never written: it still holds the 0xFF poison. */
    const size_t es = kg_dtype_size(dt);
    if (g->pad && total > 0 && no >= 2) {
        for (int64_t e = 0; e < total; e += 1 + total / 512) {
            int64_t r = e;
            for (int d = no - 1; d >= 0; d--)
                oidx[d] = r % so[d], r /= so[d];
            const int last = (g->out_cm ? no - 2 : no - 1);
            if (oidx[last] != so[last] - 1)
                continue;
            const unsigned char *p = (const unsigned char *)got + (offset_of(&O.t, oidx) + 1) * (int64_t)es;
            for (size_t bb = 0; bb < es; bb++)
                cr_assert_eq(p[bb], 0xff, "padding after element %lld was written; case %s", (long long)e, what);
        }
    }
    free(got);
    drop(c, &A);
    drop(c, &B);
    drop(c, &O);
    drop(c, &Bias);
}

static const kg_dtype all_dtypes[] = {KG_F32, KG_F64, KG_F16, KG_BF16};

/* M, N, K sampled from {1, 3, 17, 127, 128, 513}: a Latin-square-like
   selection in which each value meets each position several times. */
static const int64_t mnk[][3] = {
    {1, 1, 1},      {3, 17, 127},  {17, 127, 128},  {127, 128, 513}, {128, 513, 1},
    {513, 1, 3},    {1, 3, 17},    {17, 1, 513},    {127, 3, 1},     {128, 17, 3},
    {513, 127, 17}, {3, 513, 128}, {128, 128, 128}, {1, 513, 127},   {513, 3, 128},
};
#define N_MNK (int)(sizeof mnk / sizeof mnk[0])

ParameterizedTestParameters(gemm_gpu, shapes) { return cr_make_param_array(kg_dtype, (void *)all_dtypes, 4); }

/* Every sampled size, exact and random fills, both backends. */
ParameterizedTest(const kg_dtype *dt, gemm_gpu, shapes)
{
    kg_context *c = kt_open_gpu();
    /* $KG_TEST_QUICK (compute-sanitizer runs): the first 5 sizes, which
       still hold every value of M, N and K but 513 */
    const int n_mnk = getenv("KG_TEST_QUICK") ? 5 : N_MNK;
    for (int s = 0; s < n_mnk; s++)
        for (int exact = 0; exact < 2; exact++) {
            gcase g = {0};
            g.M = mnk[s][0], g.N = mnk[s][1], g.K = mnk[s][2], g.exact = exact;
            g.backend = exact ? KG_GEMM_CUBLASLT : KG_GEMM_AUTO;
            run_case(c, *dt, &g);
        }
    kg_close(c);
}

ParameterizedTestParameters(gemm_gpu, layouts) { return cr_make_param_array(kg_dtype, (void *)all_dtypes, 4); }

/* Transposed, padded and column-major operands; 1-d operands; batches. */
ParameterizedTest(const kg_dtype *dt, gemm_gpu, layouts)
{
    kg_context *c = kt_open_gpu();
    for (int backend = 0; backend < 2; backend++) {
        const kg_gemm_backend be = backend ? KG_GEMM_CUBLASLT : KG_GEMM_AUTO;
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (int cm = 0; cm < 2; cm++) {
                    gcase g = {.M = 17,
                               .N = 33,
                               .K = 127,
                               .ta = ta,
                               .tb = tb,
                               .out_cm = cm,
                               .pad = 3,
                               .exact = 1,
                               .backend = be};
                    run_case(c, *dt, &g);
                    g.exact = 0, g.pad = 0;
                    run_case(c, *dt, &g);
                }
        const gcase cases[] = {
            /* batch 1 and > 1, both operands batched */
            {.nba = 1, .ba = {1}, .nbb = 1, .bb = {1}, .M = 17, .N = 3, .K = 128, .exact = 1},
            {.nba = 1, .ba = {5}, .nbb = 1, .bb = {5}, .M = 17, .N = 127, .K = 3, .exact = 1},
            {.nba = 1, .ba = {5}, .nbb = 1, .bb = {5}, .M = 127, .N = 17, .K = 128, .ta = 1, .pad = 2},
            /* broadcast b: folds into one GEMM; broadcast a: stride 0 */
            {.nba = 1, .ba = {6}, .M = 17, .N = 127, .K = 33, .exact = 1},
            {.nba = 2, .ba = {2, 3}, .M = 3, .N = 17, .K = 128},
            {.nbb = 1, .bb = {6}, .M = 17, .N = 127, .K = 33, .exact = 1},
            /* [2,1,M,K] @ [3,K,N]: strided over one dim, looped over the other */
            {.nba = 2, .ba = {2, 1}, .nbb = 1, .bb = {3}, .M = 17, .N = 19, .K = 127, .exact = 1},
            {.nba = 3, .ba = {2, 1, 4}, .nbb = 2, .bb = {3, 1}, .M = 5, .N = 7, .K = 17, .tb = 1, .pad = 1},
            /* batched with a transposed operand and a column-major out */
            {.nba = 1, .ba = {4}, .nbb = 1, .bb = {4}, .M = 33, .N = 17, .K = 65, .ta = 1, .tb = 1, .out_cm = 1},
            /* 1-d operands (strided with pad) */
            {.a1 = 1, .M = 1, .N = 127, .K = 513, .exact = 1, .pad = 1},
            {.b1 = 1, .M = 127, .N = 1, .K = 513, .pad = 2},
            {.a1 = 1, .b1 = 1, .M = 1, .N = 1, .K = 1000, .exact = 1},
            {.b1 = 1, .nba = 1, .ba = {3}, .M = 17, .N = 1, .K = 128},
            /* K = 0: zeros, batched too; empty M and N */
            {.M = 17, .N = 127, .K = 0},
            {.nba = 1, .ba = {3}, .nbb = 1, .bb = {3}, .M = 5, .N = 7, .K = 0, .pad = 2},
            {.M = 0, .N = 127, .K = 17},
            {.M = 17, .N = 0, .K = 17},
            {.nba = 1, .ba = {0}, .M = 17, .N = 5, .K = 17},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            gcase g = cases[i];
            g.backend = be;
            run_case(c, *dt, &g);
        }
    }
    kg_close(c);
}

ParameterizedTestParameters(gemm_gpu, epilogues) { return cr_make_param_array(kg_dtype, (void *)all_dtypes, 4); }

ParameterizedTest(const kg_dtype *dt, gemm_gpu, epilogues)
{
    kg_context *c = kt_open_gpu();
    for (int epi = 0; epi < KG_EPILOGUE_COUNT; epi++)
        for (int bias = 0; bias < 2; bias++)
            for (int exact = 0; exact < 2; exact++) {
                gcase g = {.M = 127, .N = 129, .K = 65, .epi = (kg_epilogue)epi, .bias = bias, .exact = exact};
                run_case(c, *dt, &g);
                gcase b = {.nba = 1,
                           .ba = {3},
                           .M = 17,
                           .N = 40,
                           .K = 128,
                           .epi = (kg_epilogue)epi,
                           .bias = bias,
                           .exact = exact};
                run_case(c, *dt, &b);
                gcase l = {.nba = 2,
                           .ba = {2, 1},
                           .nbb = 1,
                           .bb = {3},
                           .M = 5,
                           .N = 24,
                           .K = 9,
                           .epi = (kg_epilogue)epi,
                           .bias = bias,
                           .exact = exact};
                run_case(c, *dt, &l);
                gcase k0 = {.M = 7, .N = 9, .K = 0, .epi = (kg_epilogue)epi, .bias = bias, .exact = exact};
                run_case(c, *dt, &k0);
            }
    kg_close(c);
}

ParameterizedTestParameters(gemm_gpu, large) { return cr_make_param_array(kg_dtype, (void *)all_dtypes, 4); }

/* One large product per dtype; 3000 outputs checked, every one finite. */
ParameterizedTest(const kg_dtype *dt, gemm_gpu, large)
{
    kg_context *c = kt_open_gpu();
    /* sanitizer mode (kg_test.h): smaller */
    gcase g = {.M = kt_size(2048, 256), .N = kt_size(3000, 300), .K = kt_size(4096, 520), .sample = 3000};
    run_case(c, *dt, &g);
    gcase t = {.nba = 1,
               .ba = {4},
               .M = kt_size(1024, 256),
               .N = kt_size(1024, 256),
               .K = kt_size(1024, 256),
               .ta = 1,
               .sample = 3000,
               .exact = 1};
    run_case(c, *dt, &t);
    kg_close(c);
}

Test(gemm_gpu, tf32_is_opt_in)
{
    kg_context *c = kt_open_gpu();
    gcase g = {.M = 127, .N = 128, .K = 513, .tf32 = 1};
    run_case(c, KG_F32, &g);
    /* 1 + 2^-12 has no TF32 representation (10 mantissa bits): true FP32
       sums 64 (1 + 2^-11 + 2^-24), TF32 would give 64 (or 64.06). */
    const int64_t K = 64;
    float *h = malloc(sizeof(float) * (size_t)K);
    for (int64_t i = 0; i < K; i++)
        h[i] = 1.0f + 0x1p-12f;
    float *dv = kt_alloc(c, sizeof(float) * (size_t)K), *dout = kt_alloc(c, sizeof(float));
    kt_upload(c, dv, h, sizeof(float) * (size_t)K);
    kg_tensor a = kg_tensor_contiguous(dv, KG_F32, 2, KT_SHAPE(1, K)),
              b = kg_tensor_contiguous(dv, KG_F32, 2, KT_SHAPE(K, 1));
    kg_tensor o = kg_tensor_contiguous(dout, KG_F32, 2, KT_SHAPE(1, 1));
    KT_OK(c, kg_set_tf32(c, 0));
    for (int be = 0; be < 2; be++) {
        kg_matmul_opts opts = {NULL, KG_EPILOGUE_NONE, be ? KG_GEMM_CUBLASLT : KG_GEMM_CUBLAS};
        KT_OK(c, kg_matmul_ex(c, &o, &a, &b, &opts));
        float r = 0;
        kt_download(c, &r, dout, sizeof r);
        const double want = (double)K * (1.0 + 0x1p-12) * (1.0 + 0x1p-12);
        cr_assert(fabs(r - want) <= 1e-5 * want, "backend %d: got %.9g, want %.9g (TF32 would give %g)", be, r, want,
                  (double)K);
    }
    kg_free(c, dv);
    kg_free(c, dout);
    free(h);
    kg_close(c);
}

ParameterizedTestParameters(gemm_gpu, graph_capture_and_replay)
{
    static const kg_gemm_backend be[] = {KG_GEMM_AUTO, KG_GEMM_CUBLASLT};
    return cr_make_param_array(kg_gemm_backend, (void *)be, 2);
}

/* A captured GEMM (bias + relu through cuBLASLt, or plain) replays on new
   inputs written into the same buffers. */
ParameterizedTest(const kg_gemm_backend *be, gemm_gpu, graph_capture_and_replay)
{
    kg_context *c = kt_open_gpu();
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    KT_OK(c, kg_set_stream(c, (kg_stream)s));
    const int64_t M = 96, N = 80, K = 128;
    const kg_dtype dt = KG_F32;
    uint64_t rng = kt_seed();
    mat A = make(c, dt, 3, KT_SHAPE(2, M, K), 0, 0), B = make(c, dt, 2, KT_SHAPE(K, N), 0, 0);
    mat O = make(c, dt, 3, KT_SHAPE(2, M, N), 0, 0), Bias = make(c, dt, 1, KT_SHAPE(N), 0, 0);
    const int fused = *be == KG_GEMM_CUBLASLT;
    kg_matmul_opts opts = {fused ? &Bias.t : NULL, fused ? KG_EPILOGUE_RELU : KG_EPILOGUE_NONE, *be};
    KT_OK(c, kg_gemm_prepare(c));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    kg_status st = kg_matmul_ex(c, &O.t, &A.t, &B.t, &opts);
    cr_assert_eq(cudaStreamEndCapture(s, &graph), cudaSuccess);
    cr_assert_eq(st, KG_OK, "kg_matmul_ex during capture: %s", kg_errmsg(c));
    cr_assert_eq(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (int round = 0; round < 2; round++) {
        fill(c, &A, &rng, 1);
        fill(c, &B, &rng, 1);
        fill(c, &Bias, &rng, 1);
        KT_OK(c, kg_memset(c, O.t.data, 0xff, (size_t)O.span * 4));
        cr_assert_eq(cudaGraphLaunch(exec, s), cudaSuccess);
        cr_assert_eq(cudaStreamSynchronize(s), cudaSuccess);
        float *got = malloc((size_t)O.span * 4);
        kt_download(c, got, O.t.data, (size_t)O.span * 4);
        for (int64_t bi = 0; bi < 2; bi++)
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) {
                    double ref = fused ? kt_get(Bias.host, dt, j) : 0;
                    for (int64_t k = 0; k < K; k++)
                        ref += kt_get(A.host, dt, (bi * M + i) * K + k) * kt_get(B.host, dt, k * N + j);
                    if (fused && ref < 0)
                        ref = 0;
                    cr_assert_eq(got[(bi * M + i) * N + j], (float)ref, "replay %d, [%lld,%lld,%lld]: got %g want %g",
                                 round, (long long)bi, (long long)i, (long long)j, got[(bi * M + i) * N + j], ref);
                }
        free(got);
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    drop(c, &A);
    drop(c, &B);
    drop(c, &O);
    drop(c, &Bias);
    KT_OK(c, kg_set_stream(c, NULL));
    kg_close(c);
    cudaStreamDestroy(s);
}

/* The first GEMM of a context creates cuBLAS state, which capture forbids:
   a clear error, and the capture is left intact. */
Test(gemm_gpu, first_gemm_inside_capture_is_refused)
{
    kg_context *c = kt_open_gpu();
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    KT_OK(c, kg_set_stream(c, (kg_stream)s));
    float *d = kt_alloc(c, 3 * 4 * 4);
    KT_OK(c, kg_memset(c, d, 0, 3 * 4 * 4)); /* the inputs are read: initialized (initcheck) */
    kg_tensor a = kg_tensor_contiguous(d, KG_F32, 2, KT_SHAPE(2, 2)),
              b = kg_tensor_contiguous(d + 4, KG_F32, 2, KT_SHAPE(2, 2));
    kg_tensor o = kg_tensor_contiguous(d + 8, KG_F32, 2, KT_SHAPE(2, 2));
    cudaGraph_t graph;
    cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    kg_status st = kg_matmul(c, &o, &a, &b);
    cr_assert_eq(cudaStreamEndCapture(s, &graph), cudaSuccess);
    cr_assert_eq(st, KG_ERR_INVALID_ARGUMENT, "%s: %s", kg_status_name(st), kg_errmsg(c));
    cr_assert(strstr(kg_errmsg(c), "kg_gemm_prepare") != NULL, "%s", kg_errmsg(c));
    cudaGraphDestroy(graph);
    KT_OK(c, kg_matmul(c, &o, &a, &b));
    KT_OK(c, kg_sync(c));
    kg_free(c, d);
    KT_OK(c, kg_set_stream(c, NULL));
    kg_close(c);
    cudaStreamDestroy(s);
}

/* GEMMs queued on one stream, then the context moves to another: the
   shared workspace is ordered (no race), results are right on both. */
Test(gemm_gpu, stream_switch)
{
    kg_context *c = kt_open_gpu();
    cudaStream_t s1, s2;
    cr_assert_eq(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
    cr_assert_eq(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
    KT_OK(c, kg_set_stream(c, (kg_stream)s1));
    gcase g = {.nba = 1, .ba = {4}, .nbb = 1, .bb = {4}, .M = 256, .N = 256, .K = 512, .exact = 1};
    run_case(c, KG_BF16, &g);
    KT_OK(c, kg_set_stream(c, (kg_stream)s2));
    run_case(c, KG_BF16, &g);
    KT_OK(c, kg_set_stream(c, NULL));
    kg_close(c);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
}

/* ---- GPU: packed layouts, K = 0 fills, capture of a packed call ------------- */

/* A tensor of any strides over a poisoned (0xFF) device storage; logical
   elements hold small integers, so every product below is exact. */
typedef struct sten {
    kg_tensor t;
    void *host;
    size_t bytes;
} sten;

static sten sten_make(kg_context *c, kg_dtype dt, int nd, const int64_t *shape, const int64_t *strides, uint64_t *rng)
{
    sten s;
    memset(&s, 0, sizeof s);
    s.t = kg_tensor_contiguous(NULL, dt, nd, shape);
    int64_t span = 1, n = 1;
    for (int d = 0; d < nd; d++) {
        s.t.strides[d] = strides[d];
        span += (shape[d] - 1) * strides[d];
        n *= shape[d];
    }
    s.bytes = (size_t)span * kg_dtype_size(dt);
    s.host = malloc(s.bytes);
    memset(s.host, 0xff, s.bytes);
    int64_t idx[KG_MAX_DIMS] = {0};
    for (int64_t e = 0; e < n; e++) {
        int64_t r = e;
        for (int d = nd - 1; d >= 0; d--)
            idx[d] = r % shape[d], r /= shape[d];
        kt_set(s.host, dt, offset_of(&s.t, idx), floor(kt_uniform(rng, -3, 4)));
    }
    s.t.data = kt_alloc(c, s.bytes);
    kt_upload(c, s.t.data, s.host, s.bytes);
    return s;
}

static void sten_drop(kg_context *c, sten *s)
{
    kg_free(c, s->t.data);
    free(s->host);
}

/* Element of a [bs..., R, C] (batch dims right-aligned, broadcast where 1). */
static double elem(const sten *s, int nb, const int64_t *bidx, int64_t r, int64_t col)
{
    int64_t off = 0;
    const int mb = s->t.ndim - 2;
    for (int i = 0; i < mb; i++) {
        const int64_t j = bidx[nb - mb + i];
        off += (s->t.shape[i] == 1 ? 0 : j) * s->t.strides[i];
    }
    off += r * s->t.strides[mb] + col * s->t.strides[mb + 1];
    return kt_get(s->host, s->t.dtype, off);
}

/* The tolerance of a GELU epilogue's result on check_strided's integer
   fills: run_case's for its epilogues (epi_tol), with TF32's u_in 0
   (integers of |x| <= 3 are exact in TF32, and so are their products and
   sums of K <= 5 in f32): the dtype floor at ref, plus max |gelu'| (1.13)
   times the f32 (f64) accumulation bound (K + 1) u sum|a b| and, in f16/bf16,
   one rounding of a @ b to the output dtype before the epilogue (kg_gemm.h).
   Never looser than the 1e-2 (1 + |ref|) this check had before (bf16's rtol
   1.6e-2 is above it where |ref| > 1.7; a correct bf16 result is off by at
   most half a bf16 ulp, 2^-9 |ref|, plus f32's error). `ab` is a @ b, `mag`
   sum|a b| + |bias|. */
static double gelu_tol(kg_dtype dt, int64_t K, double mag, double ab, double ref)
{
    const double floor_ = epi_tol(dt, K, 0, 1.13, dt == KG_F16 || dt == KG_BF16, mag, ab, ref);
    return fmin(floor_, 1e-2 * (1 + fabs(ref)));
}

static double gelu_erf(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }

/* check_strided's GELU tolerance tells the tanh form (cuBLASLt's epilogue,
   kg_gemm.h) from the erf form in f32 and f64, at values its GELU calls
   produce: a @ b + bias of K = 0 (a bias in [-3, 3], mag |bias|) and of
   K = 5 (mag up to 5 x 9 + 3 = 48). In f16 and bf16 the difference (at most
   4.2e-4, at |x| = 3) is within the dtype's rounding and is not told apart. */
Test(gemm_layout, packed_gelu_tolerance_tells_tanh_from_erf)
{
    const kg_dtype dts[] = {KG_F32, KG_F64};
    const double xs[] = {-3, -2, -1, 1, 2, 3};
    for (size_t d = 0; d < 2; d++)
        for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
            const double x = xs[i], t = gelu_tanh(x), e = gelu_erf(x);
            const double k0 = gelu_tol(dts[d], 0, fabs(x), 0, t), k5 = gelu_tol(dts[d], 5, 48, x, t);
            cr_assert(fabs(e - t) > k0 && fabs(e - t) > k5,
                      "%s gelu(%g): erf %.9g and tanh %.9g differ by %.3g, within the tolerance (%.3g at K = 0, "
                      "%.3g at K = 5)",
                      kg_dtype_name(dts[d]), x, e, t, fabs(e - t), k0, k5);
        }
}

/* out = epi(a @ b + bias) on the GPU against a float64 reference; out's
   storage outside its elements must keep its poison. */
static void check_strided(kg_context *c, kg_dtype dt, int na, const int64_t *as, const int64_t *ast, int nb_,
                          const int64_t *bsh, const int64_t *bst, int no, const int64_t *os, const int64_t *ost,
                          int with_bias, kg_epilogue epi, const char *what)
{
    uint64_t rng = kt_seed() + 991;
    sten A = sten_make(c, dt, na, as, ast, &rng), B = sten_make(c, dt, nb_, bsh, bst, &rng);
    sten O = sten_make(c, dt, no, os, ost, &rng);
    const int64_t N = os[no - 1], M = os[no - 2], K = as[na - 1];
    sten Bias = sten_make(c, dt, 1, &N, KT_SHAPE(1), &rng);
    memset(O.host, 0xff, O.bytes);
    kt_upload(c, O.t.data, O.host, O.bytes);
    kg_matmul_opts opts = {with_bias ? &Bias.t : NULL, epi, KG_GEMM_AUTO};
    KT_OK(c, kg_matmul_ex(c, &O.t, &A.t, &B.t, &opts));
    KT_OK(c, kg_sync(c));
    unsigned char *got = malloc(O.bytes);
    kt_download(c, got, O.t.data, O.bytes);
    const int nbat = no - 2;
    int64_t nmat = 1;
    for (int i = 0; i < nbat; i++)
        nmat *= os[i];
    unsigned char *seen = calloc(O.bytes, 1);
    const size_t es = kg_dtype_size(dt);
    int64_t bidx[KG_MAX_DIMS] = {0}, oidx[KG_MAX_DIMS] = {0};
    for (int64_t mtx = 0; mtx < nmat; mtx++) {
        int64_t r = mtx;
        for (int i = nbat - 1; i >= 0; i--)
            bidx[i] = r % os[i], r /= os[i];
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double acc = 0, mag = 0;
                for (int64_t k = 0; k < K; k++) {
                    const double p = elem(&A, nbat, bidx, i, k) * elem(&B, nbat, bidx, k, j);
                    acc += p;
                    mag += fabs(p);
                }
                const double ab = acc;
                if (with_bias) {
                    acc += kt_get(Bias.host, dt, j);
                    mag += fabs(kt_get(Bias.host, dt, j));
                }
                if (epi == KG_EPILOGUE_RELU)
                    acc = acc < 0 ? 0 : acc;
                else if (epi == KG_EPILOGUE_GELU_TANH)
                    acc = gelu_tanh(acc);
                for (int d = 0; d < nbat; d++)
                    oidx[d] = bidx[d];
                oidx[nbat] = i, oidx[nbat + 1] = j;
                const int64_t off = offset_of(&O.t, oidx);
                const double v = kt_get(got, dt, off);
                /* integer fills: exact, but for GELU (gelu_tol) */
                const double want = epi == KG_EPILOGUE_GELU_TANH ? acc : kt_round(dt, acc);
                const double tol = epi == KG_EPILOGUE_GELU_TANH ? gelu_tol(dt, K, mag, ab, acc) : 0;
                cr_assert(fabs(v - want) <= tol, "%s %s: out[%lld][%lld,%lld] = %.9g, want %.9g (tolerance %.3g)", what,
                          kg_dtype_name(dt), (long long)mtx, (long long)i, (long long)j, v, acc, tol);
                memset(seen + (size_t)off * es, 1, es);
            }
    }
    for (size_t i = 0; i < O.bytes; i++)
        if (!seen[i])
            cr_assert_eq(got[i], 0xff, "%s %s: byte %zu outside out's elements was written", what, kg_dtype_name(dt),
                         i);
    free(seen);
    free(got);
    sten_drop(c, &A);
    sten_drop(c, &B);
    sten_drop(c, &O);
    sten_drop(c, &Bias);
}

ParameterizedTestParameters(gemm_gpu, packed_layouts) { return cr_make_param_array(kg_dtype, (void *)all_dtypes, 4); }

/* Operands cuBLAS cannot read, outs it cannot write, batches no stride
   describes, K = 0 with any strides: all exact against the reference. */
ParameterizedTest(const kg_dtype *dt, gemm_gpu, packed_layouts)
{
    kg_context *c = kt_open_gpu();
    const kg_dtype d = *dt;
    /* b = x[:, ::2] (issue 16) */
    check_strided(c, d, 2, KT_SHAPE(4, 5), KT_SHAPE(5, 1), 2, KT_SHAPE(5, 6), KT_SHAPE(12, 2), 2, KT_SHAPE(4, 6),
                  KT_SHAPE(6, 1), 0, KG_EPILOGUE_NONE, "b step 2");
    /* a with no unit stride, transposed with steps */
    check_strided(c, d, 2, KT_SHAPE(4, 5), KT_SHAPE(2, 10), 2, KT_SHAPE(5, 6), KT_SHAPE(6, 1), 2, KT_SHAPE(4, 6),
                  KT_SHAPE(6, 1), 1, KG_EPILOGUE_RELU, "a strides [2,10], bias, relu");
    /* out with no unit stride; out column-major with a bias */
    check_strided(c, d, 2, KT_SHAPE(4, 5), KT_SHAPE(5, 1), 2, KT_SHAPE(5, 6), KT_SHAPE(6, 1), 2, KT_SHAPE(4, 6),
                  KT_SHAPE(13, 2), 0, KG_EPILOGUE_NONE, "out strides [13,2]");
    check_strided(c, d, 2, KT_SHAPE(4, 5), KT_SHAPE(5, 1), 2, KT_SHAPE(5, 6), KT_SHAPE(6, 1), 2, KT_SHAPE(4, 6),
                  KT_SHAPE(1, 4), 1, KG_EPILOGUE_GELU_TANH, "out column-major, bias, gelu");
    /* 32 x 32 batches whose dims are transposed in memory (one call) */
    check_strided(c, d, 4, KT_SHAPE(32, 32, 4, 5), KT_SHAPE(20, 640, 5, 1), 4, KT_SHAPE(32, 32, 5, 6),
                  KT_SHAPE(960, 30, 6, 1), 4, KT_SHAPE(32, 32, 4, 6), KT_SHAPE(24, 768, 6, 1), 0, KG_EPILOGUE_NONE,
                  "transposed batch dims");
    /* a partly broadcast batch, b steps in both dims */
    check_strided(c, d, 4, KT_SHAPE(6, 1, 3, 5), KT_SHAPE(15, 0, 5, 1), 4, KT_SHAPE(6, 5, 5, 2),
                  KT_SHAPE(200, 40, 8, 3), 4, KT_SHAPE(6, 5, 3, 2), KT_SHAPE(30, 6, 2, 1), 1, KG_EPILOGUE_NONE,
                  "broadcast a, stepped b");
    /* K = 0, odd strides, with and without a bias (one fill) */
    check_strided(c, d, 4, KT_SHAPE(3, 4, 5, 0), KT_SHAPE(7, 0, 3, 9), 2, KT_SHAPE(0, 6), KT_SHAPE(1, 0), 4,
                  KT_SHAPE(3, 4, 5, 6), KT_SHAPE(300, 2, 60, 10), 0, KG_EPILOGUE_NONE, "K = 0");
    check_strided(c, d, 4, KT_SHAPE(3, 4, 5, 0), KT_SHAPE(7, 0, 3, 9), 2, KT_SHAPE(0, 6), KT_SHAPE(1, 0), 4,
                  KT_SHAPE(3, 4, 5, 6), KT_SHAPE(300, 2, 60, 10), 1, KG_EPILOGUE_RELU, "K = 0, bias, relu");
    check_strided(c, d, 4, KT_SHAPE(3, 4, 5, 0), KT_SHAPE(7, 0, 3, 9), 2, KT_SHAPE(0, 6), KT_SHAPE(1, 0), 4,
                  KT_SHAPE(3, 4, 5, 6), KT_SHAPE(120, 30, 6, 1), 1, KG_EPILOGUE_GELU_TANH, "K = 0, bias, gelu");
    kg_close(c);
}

/* A packed matmul captured into a graph after kg_gemm_prepare on the
   capturing stream; without a reserved area it is refused with the sizes. */
Test(gemm_gpu, packed_call_in_graph_capture)
{
    kg_context *c = kt_open_gpu();
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    KT_OK(c, kg_set_stream(c, (kg_stream)s));
    float h[64];
    for (int i = 0; i < 64; i++)
        h[i] = (float)(i % 7 - 3);
    float *d = kt_alloc(c, sizeof h), *o = kt_alloc(c, 16 * sizeof(float));
    kt_upload(c, d, h, sizeof h);
    kg_tensor a = kg_tensor_contiguous(d, KG_F32, 2, KT_SHAPE(4, 4));
    kg_tensor b = with_strides(kg_tensor_contiguous(d + 16, KG_F32, 2, KT_SHAPE(4, 4)), KT_SHAPE(8, 2));
    kg_tensor out = kg_tensor_contiguous(o, KG_F32, 2, KT_SHAPE(4, 4));
    KT_OK(c, kg_set_tf32(c, 0)); /* creates the cuBLAS state, not the pack area */
    cudaGraph_t graph;
    cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    kg_status st = kg_matmul(c, &out, &a, &b);
    cr_assert_eq(cudaStreamEndCapture(s, &graph), cudaSuccess);
    cudaGraphDestroy(graph);
    cr_assert_eq(st, KG_ERR_INVALID_ARGUMENT, "%s: %s", kg_status_name(st), kg_errmsg(c));
    cr_assert(strstr(kg_errmsg(c), "kg_gemm_prepare") != NULL, "%s", kg_errmsg(c));
    KT_OK(c, kg_gemm_prepare(c));
    cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    st = kg_matmul(c, &out, &a, &b);
    cr_assert_eq(cudaStreamEndCapture(s, &graph), cudaSuccess);
    cr_assert_eq(st, KG_OK, "%s", kg_errmsg(c));
    cudaGraphExec_t ge;
    cr_assert_eq(cudaGraphInstantiate(&ge, graph, 0), cudaSuccess);
    cr_assert_eq(cudaGraphLaunch(ge, s), cudaSuccess);
    KT_OK(c, kg_sync(c));
    float got[16];
    kt_download(c, got, o, sizeof got);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double want = 0;
            for (int k = 0; k < 4; k++)
                want += (double)h[i * 4 + k] * h[16 + k * 8 + j * 2];
            cr_assert_eq(got[i * 4 + j], (float)want, "out[%d,%d] = %g, want %g", i, j, got[i * 4 + j], want);
        }
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(graph);
    KT_OK(c, kg_set_stream(c, NULL));
    kg_free(c, d);
    kg_free(c, o);
    kg_close(c);
    cudaStreamDestroy(s);
}

/* ---- The packing helper (trust.h), also for attention's operands ------------ */

Test(gemm_layout, pack_helper_sizes_and_alignment)
{
    kg_tensor a = kg_tensor_contiguous(KT_DEV(0), KG_F16, 4, KT_SHAPE(2, 3, 5, 64));
    kg_tensor b = with_strides(kg_tensor_contiguous(KT_DEV(0x100000), KG_F32, 2, KT_SHAPE(3, 7)), KT_SHAPE(1, 3));
    const kg_tensor *src[] = {&a, &b};
    size_t bytes = 0;
    cr_assert_eq(kgi_pack_bytes(ctx, 2, src, &bytes), KG_OK);
    cr_assert_eq(bytes, 2 * 3 * 5 * 64 * 2 + 256, "%zu", bytes); /* each rounded up to 256 bytes */
    cr_assert(kgi_pack_is_aligned(&a, 16));
    cr_assert(!kgi_pack_is_aligned(&b, 16), "b's last dim is strided");
    kg_tensor odd = a;
    odd.data = (char *)a.data + 2;
    cr_assert(!kgi_pack_is_aligned(&odd, 16));
    kg_tensor s = with_strides(a, KT_SHAPE(960 * 3 + 8, 960 + 8, 72, 1)); /* 16-byte multiples */
    cr_assert(kgi_pack_is_aligned(&s, 16));
    s.strides[2] = 65; /* 130 bytes */
    cr_assert(!kgi_pack_is_aligned(&s, 16));
    /* a dense copy beyond 2^62 bytes is refused with the shape */
    kg_tensor huge = with_strides(
        kg_tensor_contiguous(KT_DEV(0), KG_F64, 2, KT_SHAPE((int64_t)1 << 31, (int64_t)1 << 30)), KT_SHAPE(0, 0));
    const kg_tensor *hs[] = {&huge};
    cr_assert_eq(kgi_pack_bytes(ctx, 1, hs, &bytes), KG_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(kg_errmsg(ctx), "[2147483648,1073741824]") != NULL, "%s", kg_errmsg(ctx));
}

/* kgi_pack copies any layout (transposed, broadcast, stepped) into dense
   row-major tensors in the pack area, in one call. */
Test(gemm_gpu, pack_helper_copies_any_layout)
{
    kg_context *c = kt_open_gpu();
    float h[64];
    for (int i = 0; i < 64; i++)
        h[i] = (float)i;
    float *d = kt_alloc(c, sizeof h);
    kt_upload(c, d, h, sizeof h);
    kg_tensor t = with_strides(kg_tensor_contiguous(d, KG_F32, 2, KT_SHAPE(4, 8)), KT_SHAPE(1, 8)); /* transposed */
    kg_tensor bc = with_strides(kg_tensor_contiguous(d + 3, KG_F32, 3, KT_SHAPE(2, 3, 4)), KT_SHAPE(0, 2, 5));
    const kg_tensor *src[] = {&t, &bc};
    kg_tensor dst[2];
    KT_OK(c, kgi_pack(c, 2, src, dst));
    KT_OK(c, kg_sync(c));
    for (int k = 0; k < 2; k++) {
        cr_assert_eq((uintptr_t)dst[k].data % 256, 0, "packed data is 256-byte aligned");
        cr_assert_eq(dst[k].strides[dst[k].ndim - 1], 1);
        const int64_t n = kg_numel(&dst[k]);
        float got[32];
        kt_download(c, got, dst[k].data, (size_t)n * sizeof(float));
        int64_t idx[3] = {0};
        for (int64_t e = 0; e < n; e++) {
            int64_t r = e, off = 0;
            for (int dd = src[k]->ndim - 1; dd >= 0; dd--)
                idx[dd] = r % src[k]->shape[dd], r /= src[k]->shape[dd];
            for (int dd = 0; dd < src[k]->ndim; dd++)
                off += idx[dd] * src[k]->strides[dd];
            const float want = h[((float *)src[k]->data - d) + off];
            cr_assert_eq(got[e], want, "tensor %d element %lld: %g, want %g", k, (long long)e, got[e], want);
        }
    }
    kg_free(c, d);
    kg_close(c);
}
