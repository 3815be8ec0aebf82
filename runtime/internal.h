/*
 * internal.h - what the runtime's files share and users do not see.
 *
 * Conventions: every function that can fail returns kg_status and, on
 * failure, has already stored the specific message on the context with
 * kg_fail(). Validation (host only) comes before any CUDA call, so a context
 * without a device still answers argument errors precisely.
 */
#ifndef KG_INTERNAL_H
#define KG_INTERNAL_H

#include <cuda_runtime_api.h>

#include "kgen.h"

#define KG_MSG_LEN 512

struct kg_context {
    int device;            /* CUDA ordinal asked for */
    int usable;            /* 1 when the device opened and the bundle fits it */
    kg_status open_status; /* why it is unusable, reported by ops */
    char open_msg[KG_MSG_LEN];
    cudaStream_t stream;
    int sm_count;
    int cc_major, cc_minor;
    char msg[KG_MSG_LEN]; /* message of the last failure */
    /* Extensions of other op families hang their per-context state here. */
    void *blas;    /* see blas.c */
    void *scratch; /* device scratch, see kg_scratch() */
    size_t scratch_bytes;
    /* Testing aids: force an element-wise variant (-1: choose), and the
       variant the last element-wise launch used. */
    int ew_force_variant;
    int ew_last_variant;
    /* Attention: a forced kernel variant (kg_attn_variant; -1: choose), and
       the variant of the last launch (-1: none yet). */
    int attn_force_variant;
    int attn_last_variant;
    /* Attention decode variants: a forced key split count (0: the planner's)
       and the split count of the last decode launch. */
    int attn_force_splits;
    int attn_last_splits;
};

/* Tests use these to run every eligible layout variant over the same cases:
   a forced variant is used only when it can serve the call. */
KG_API void kg_test_force_ew_variant(kg_context *ctx, int variant);
KG_API int kg_test_last_ew_variant(const kg_context *ctx);
/* Likewise for attention's kernel variants (kg_attn_variant in
   kg_attn_table.h). */
KG_API void kg_test_force_attn_variant(kg_context *ctx, int variant);
KG_API int kg_test_last_attn_variant(const kg_context *ctx);
KG_API void kg_test_force_attn_splits(kg_context *ctx, int splits);
KG_API int kg_test_last_attn_splits(const kg_context *ctx);

/* Stores a formatted message and returns `status`. */
kg_status kg_fail(kg_context *ctx, kg_status status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Clears the message (successful call) and returns KG_OK. */
kg_status kg_ok(kg_context *ctx);
/* Maps a CUDA error to a status and message, prefixed by what was done. */
kg_status kg_cuda_fail(kg_context *ctx, cudaError_t err, const char *what);
/* Returns KG_OK when ctx can run device work, else its open failure. */
kg_status kg_ready(kg_context *ctx);
/* 1 when stream s is being captured into a CUDA graph (0 when the query
   fails: the error is cleared). */
int kg_stream_capturing(cudaStream_t s);

/* Formats a shape as "[2,3]" into buf (always terminated). */
const char *kg_shape_str(char *buf, size_t len, int ndim, const int64_t *shape);
/* KG_ERR_DTYPE: "<op> is not available for <dt> (it accepts f32, f64, ...)",
   listing the dtypes whose bit (1 << dtype) is set in accepted. */
kg_status kg_fail_dtype(kg_context *ctx, const char *op, kg_dtype dt, unsigned accepted);
/* Checks one tensor argument: dtype, ndim, sizes and strides, data pointer. */
kg_status kg_check_tensor(kg_context *ctx, const kg_tensor *t, const char *name);

/* ---- cuBLAS state (blas.c): created lazily, bound to the context's stream. */
void kg_blas_release(kg_context *ctx);
kg_status kg_blas_set_stream(kg_context *ctx);

/* ---- Device scratch (scratch.c) ------------------------------------------ */

/* Makes ctx->scratch hold at least `bytes` bytes and stores it in *base. It
   grows (cudaFree + cudaMalloc, zero-filled, synchronizing) only outside graph
   capture; during capture a scratch too small is KG_ERR_INVALID_ARGUMENT.
   Contract for every user: the first KG_SCRATCH_COUNTER_BYTES bytes are
   counters that are zero between calls (a kernel that bumps one sets it back
   to zero before it ends); the rest holds any op's partial results for the
   duration of one call, ordered by the context's stream. */
#define KG_SCRATCH_COUNTER_BYTES ((size_t)64 << 10)
kg_status kg_scratch(kg_context *ctx, size_t bytes, void **base);

/* ---- Bundle (bundle.c) ---------------------------------------------------- */

/* The kernel of table index `k`, loading the bundle on first use. */
kg_status kg_kernel(kg_context *ctx, int k, cudaKernel_t *out);
/* Launch with the launch error mapped to a status. */
kg_status kg_launch(kg_context *ctx, int k, dim3 grid, dim3 block, void **args, size_t smem);
/* 1 when the bundle has code that runs on compute capability major.minor. */
int kg_bundle_supports(int major, int minor);
/* "sm_80, sm_90 (+PTX compute_90)" */
const char *kg_bundle_archs(void);

#endif
