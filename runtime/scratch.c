/*
 * scratch.c - the context's device scratch (see internal.h for the contract
 * every user keeps: zeroed counters first, then free space for one call).
 *
 * Why grow and never shrink: a launch may not allocate (graph capture, no
 * host synchronization), so the buffer is made once, at the first call that
 * needs it outside capture or through kg_reserve_scratch, and kept until
 * kg_close frees it.
 */
#include "internal.h"
#include "kg_reduce_params.h"
#include "reduce_plan.h"

/* Partial results of split reductions: 4 MiB after the counters. */
enum { RESERVE_BYTES = (int)KG_SCRATCH_COUNTER_BYTES + (4 << 20) };

/* host and device agree: the reduction kernels' semaphores (one unsigned
   each) fit the counters, the planner's partials the reserve, and its dims
   the tensors' */
_Static_assert(KG_RED_MAX_SEMAPHORES * sizeof(unsigned) <= KG_SCRATCH_COUNTER_BYTES, "semaphores exceed the counters");
_Static_assert(KG_RED_PARTIAL_BYTES == RESERVE_BYTES - KG_SCRATCH_COUNTER_BYTES, "reduce_plan.h's partials != reserve");
_Static_assert(KG_RED_MAX_DIMS == KG_MAX_DIMS, "kg_reduce_params.h KG_RED_MAX_DIMS != kgen.h KG_MAX_DIMS");

kg_status kg_scratch(kg_context *ctx, size_t bytes, void **base)
{
    if (bytes < KG_SCRATCH_COUNTER_BYTES)
        bytes = KG_SCRATCH_COUNTER_BYTES;
    if (ctx->scratch && ctx->scratch_bytes >= bytes) {
        *base = ctx->scratch;
        return KG_OK;
    }
    if (kg_stream_capturing(ctx->stream))
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: this call needs %zu bytes of device scratch but the context has %zu, and "
                       "it cannot grow during CUDA graph capture; call kg_reserve_scratch(ctx, 0) (or run the "
                       "call once) before capturing",
                       bytes, ctx->scratch_bytes);
    if (bytes < RESERVE_BYTES)
        bytes = RESERVE_BYTES;
    cudaError_t err;
    if (ctx->scratch) {
        /* cudaFree waits for the device, so no queued kernel still uses it */
        if ((err = cudaFree(ctx->scratch)) != cudaSuccess)
            return kg_cuda_fail(ctx, err, "freeing the old device scratch");
        ctx->scratch = NULL;
        ctx->scratch_bytes = 0;
    }
    void *p = NULL;
    err = cudaMalloc(&p, bytes);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        return kg_fail(ctx, KG_ERR_OUT_OF_MEMORY, "out of memory: the device scratch (%zu bytes)", bytes);
    }
    if (err != cudaSuccess)
        return kg_cuda_fail(ctx, err, "cudaMalloc of the device scratch");
    /* synchronous on purpose: the counters must be zero before any stream
       uses them */
    if ((err = cudaMemset(p, 0, bytes)) != cudaSuccess || (err = cudaDeviceSynchronize()) != cudaSuccess) {
        cudaFree(p);
        return kg_cuda_fail(ctx, err, "clearing the device scratch");
    }
    ctx->scratch = p;
    ctx->scratch_bytes = bytes;
    *base = p;
    return KG_OK;
}

kg_status kg_reserve_scratch(kg_context *ctx, size_t bytes)
{
    kg_status st = kg_ready(ctx);
    if (st != KG_OK)
        return st;
    void *base;
    st = kg_scratch(ctx, bytes ? bytes : (size_t)RESERVE_BYTES, &base);
    return st == KG_OK ? kg_ok(ctx) : st;
}
