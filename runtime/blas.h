/*
 * blas.h - what blas.c (the context's cuBLAS state) and gemm.c (matmul's
 * validation and layout mapping) share. Not part of the public API; tests
 * use kg_gemm_describe to check the layout mapping on machines without a GPU.
 */
#ifndef KG_BLAS_H
#define KG_BLAS_H

#include <cublasLt.h>
#include <cublas_v2.h>

#include "internal.h"
#include "kg_gemm.h"

/* ---- One product in cuBLAS's column-major terms -------------------------
 *
 * D (m x n, column-major, ld ldd) = op(X) (m x k) * op(Y) (k x n), for
 * `batch` matrices at batch strides sx, sy, sd (elements), repeated for every
 * index of up to KG_MAX_DIMS host-looped outer dims. When out is row-major
 * (the usual case) the product is computed transposed, out^T = b^T a^T, so X
 * is b and Y is a (`swapped`).
 */
typedef struct kg_gemm_desc {
    kg_dtype dtype;
    int swapped;          /* 1: X = b, Y = a, D = out^T */
    int trans_x, trans_y; /* 1: the operand is stored transposed (CUBLAS_OP_T) */
    int64_t m, n, k;
    int64_t ldx, ldy, ldd;
    int64_t batch;      /* >= 1 */
    int64_t sx, sy, sd; /* batch strides, 0 = broadcast */
    int nloop;          /* outer dims run one call per index */
    int64_t loop_size[KG_MAX_DIMS];
    int64_t loop_sx[KG_MAX_DIMS], loop_sy[KG_MAX_DIMS], loop_sd[KG_MAX_DIMS];
    const void *x, *y; /* base pointers */
    void *d;
    const void *bias; /* NULL or m elements, added to every column of D */
    kg_epilogue epilogue;
    int empty; /* 1: nothing to compute (M, N or the batch is 0) */
    int fill;  /* 1: K = 0: out = epilogue(bias, or 0), one strided copy */
    /* Packing: an operand cuBLAS cannot read (pack_x, pack_y) is first
       copied densely (row-major, batch dims outermost) into the pack area
       from src_x / src_y; an out it cannot write, or a batch no single
       stride describes, is computed densely there and copied into out
       (pack_d). x, y, d are then offsets off_x, off_y, off_d into the area,
       filled in at run time. */
    int pack_x, pack_y, pack_d;
    kg_tensor src_x, src_y;
    size_t off_x, off_y, off_d, pack_bytes;
} kg_gemm_desc;

/* Batch dims that run as host-looped calls at most (their product); beyond
   it the call is packed into one strided-batched GEMM. */
enum { KG_GEMM_MAX_LOOP = 16 };

/* Validates a matmul call (host only) and maps it onto a kg_gemm_desc. */
kg_status kg_gemm_describe(kg_context *ctx, const kg_tensor *out, const kg_tensor *a, const kg_tensor *b,
                           const kg_matmul_opts *opts, kg_gemm_desc *g);

/* ---- The context's cuBLAS state (blas.c) -------------------------------- */

enum { KG_GEMM_PLANS = 64 };

/* Everything that selects a cuBLASLt algorithm; compared with memcmp, so
   always memset before filling. */
typedef struct kg_plan_key {
    int32_t dtype, tf32, epilogue, has_bias, trans_x, trans_y;
    int64_t m, n, k, ldx, ldy, ldd, batch, sx, sy, sd;
    uint32_t align_x, align_y, align_d, align_bias;
} kg_plan_key;

typedef struct kg_plan {
    int used;
    kg_plan_key key;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t lx, ly, ld;
    cublasLtMatmulAlgo_t algo;
} kg_plan;

typedef struct kg_blas {
    int tf32;  /* kg_set_tf32 */
    int ready; /* handles and workspace exist */
    cublasHandle_t handle;
    cublasLtHandle_t lt;
    void *workspace; /* one allocation: workspace, then `zeros` */
    size_t workspace_bytes;
    void *zeros; /* zero-filled, read as operands when K = 0 */
    size_t zeros_bytes;
    cudaStream_t bound;       /* the stream the handle is bound to */
    cudaEvent_t switch_event; /* orders GEMMs across a stream switch */
    int issued;               /* GEMMs were enqueued on `bound` since the last switch */
    unsigned next_plan;
    kg_plan plans[KG_GEMM_PLANS];
} kg_blas;

/* The context's hooks (registered with its state): release frees the state,
   set_stream binds the handle to the context's new stream. */
void kg_blas_release(kg_context *ctx);
kg_status kg_blas_set_stream(kg_context *ctx);

/* The context's host-side state, created on first use (ctx must be ready). */
kg_status kg_blas_state(kg_context *ctx, kg_blas **out);
/* The state with handles and workspace, created on first use; refuses to
   create them while the context's stream is capturing a graph. */
kg_status kg_blas_ready(kg_context *ctx, kg_blas **out);
/* The cached plan for key (created with its heuristic choice on a miss). */
kg_status kg_blas_plan(kg_context *ctx, kg_blas *bl, const kg_plan_key *key, kg_plan **out);
/* Stores "cuBLAS error: what: <status text> (<status name>)". */
kg_status kg_cublas_fail(kg_context *ctx, cublasStatus_t status, const char *what);

#endif
