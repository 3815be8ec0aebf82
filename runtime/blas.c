/*
 * blas.c - the context's cuBLAS state. GEMM itself lives in gemm.c; this file
 * owns the handles' lifetime, keeps them on the context's stream, and caches
 * cuBLASLt plans (descriptors plus the heuristic's algorithm choice).
 *
 * Why lazily, at the first GEMM, and not in kg_open: a context that never
 * multiplies matrices should not pay for cuBLAS's start (tens of ms) nor
 * hold a 32 MiB workspace. The price is that the first GEMM must not be
 * inside graph capture (cudaMalloc cannot be captured); kg_gemm_prepare()
 * exists to do it up front, and a capturing first call gets a clear error.
 *
 * Why one explicit workspace: with cublasSetWorkspace (classic) and the
 * workspace argument of cublasLtMatmul, cuBLAS never allocates during a
 * call, which is what makes GEMM safe in graph capture. Both handles run on
 * the one context stream, in order, so they share the buffer. When the
 * stream changes, the new stream waits (an event, no host sync) for GEMMs
 * still queued on the old one, which would otherwise race on the workspace.
 */
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "trust.h"

/* cuBLAS's recommendation for Hopper (cublasSetWorkspace docs), also
   PyTorch's cuBLASLt default there. */
enum { WORKSPACE_BYTES = 32 << 20, ZEROS_BYTES = 256 << 10 };

kg_status kg_cublas_fail(kg_context *ctx, cublasStatus_t status, const char *what)
{
    return kgi_fail(ctx, KG_ERR_CUBLAS, "cuBLAS error: %s: %s (%s)", what, cublasGetStatusString(status),
                    cublasGetStatusName(status));
}

static const kgi_hooks blas_hooks = {"cuBLAS", kg_blas_set_stream, kg_blas_release};

/* The context's cuBLAS state, kept with the hooks (NULL before the first GEMM). */
static kg_blas *blas_of(kg_context *ctx)
{
    void **state = kgi_hooks_state(ctx, &blas_hooks);
    return state ? *state : NULL;
}

kg_status kg_blas_state(kg_context *ctx, kg_blas **out)
{
    void **state = kgi_hooks_state(ctx, &blas_hooks);
    if (!state) {
        kg_status st = kgi_register_hooks(ctx, &blas_hooks);
        if (st != KG_OK)
            return st;
        state = kgi_hooks_state(ctx, &blas_hooks);
    }
    if (!*state) {
        *state = kgi_host_alloc(sizeof(kg_blas));
        if (!*state)
            return kgi_fail(ctx, KG_ERR_HOST_MEMORY, "out of host memory: the cuBLAS state (%zu bytes)",
                            sizeof(kg_blas));
    }
    *out = *state;
    return KG_OK;
}

static void drop_plan(kg_plan *p)
{
    if (!p->used)
        return;
    if (p->op)
        cublasLtMatmulDescDestroy(p->op);
    if (p->lx)
        cublasLtMatrixLayoutDestroy(p->lx);
    if (p->ly)
        cublasLtMatrixLayoutDestroy(p->ly);
    if (p->ld)
        cublasLtMatrixLayoutDestroy(p->ld);
    memset(p, 0, sizeof *p);
}

void kg_blas_release(kg_context *ctx)
{
    kg_blas *bl = blas_of(ctx);
    if (!bl)
        return;
    for (int i = 0; i < KG_GEMM_PLANS; i++)
        drop_plan(&bl->plans[i]);
    if (bl->handle)
        cublasDestroy(bl->handle);
    if (bl->lt)
        cublasLtDestroy(bl->lt);
    if (bl->switch_event)
        cudaEventDestroy(bl->switch_event);
    if (bl->workspace)
        cudaFree(bl->workspace);
    free(bl);
    *kgi_hooks_state(ctx, &blas_hooks) = NULL;
}

/* Binds the classic handle to ctx->stream; cublasSetStream resets the
   workspace to cuBLAS's own pool, so it is set again right after. */
static kg_status bind(kg_context *ctx, kg_blas *bl)
{
    cublasStatus_t s = cublasSetStream(bl->handle, ctx->stream);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasSetWorkspace(bl->handle, bl->workspace, bl->workspace_bytes);
    if (s != CUBLAS_STATUS_SUCCESS)
        return kg_cublas_fail(ctx, s, "binding the handle to the context's stream");
    bl->bound = ctx->stream;
    return KG_OK;
}

kg_status kg_blas_set_stream(kg_context *ctx)
{
    kg_blas *bl = blas_of(ctx);
    if (!bl || !bl->ready || bl->bound == ctx->stream)
        return KG_OK;
    /* The workspace is shared: work still queued on the old stream must
       finish before the new stream's GEMMs use it. Inside a capture the
       graph's own edges order the work, and an event joining a capturing
       stream to a plain one would be an error, so nothing is added there. */
    if (bl->issued && !kgi_stream_capturing(bl->bound) && !kgi_stream_capturing(ctx->stream)) {
        cudaError_t err = cudaEventRecord(bl->switch_event, bl->bound);
        if (err == cudaSuccess)
            err = cudaStreamWaitEvent(ctx->stream, bl->switch_event, 0);
        if (err != cudaSuccess)
            return kgi_cuda_fail(ctx, err, "ordering GEMMs across the stream switch");
    }
    bl->issued = 0;
    return bind(ctx, bl);
}

kg_status kg_blas_ready(kg_context *ctx, kg_blas **out)
{
    kg_blas *bl = NULL; /* gcc cannot see that kg_blas_state sets it when it returns KG_OK */
    kg_status st = kg_blas_state(ctx, &bl);
    if (st != KG_OK)
        return st;
    *out = bl;
    if (bl->ready)
        return KG_OK;
    if (kgi_stream_capturing(ctx->stream))
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                        "invalid argument: matmul: the context's first GEMM creates its cuBLAS handles and "
                        "workspace, which cannot happen during CUDA graph capture; call kg_gemm_prepare() "
                        "(or run one GEMM) before capturing");
    /* Each piece is kept as soon as it exists, so a failed start resumes
       where it stopped and kg_blas_release frees whatever was made. */
    cublasStatus_t s;
    if (!bl->handle && (s = cublasCreate(&bl->handle)) != CUBLAS_STATUS_SUCCESS) {
        bl->handle = NULL;
        return kg_cublas_fail(ctx, s, "cublasCreate");
    }
    if (!bl->lt && (s = cublasLtCreate(&bl->lt)) != CUBLAS_STATUS_SUCCESS) {
        bl->lt = NULL;
        return kg_cublas_fail(ctx, s, "cublasLtCreate");
    }
    /* f16 inputs accumulate in f32 also across split-K partial sums. */
    s = cublasSetMathMode(bl->handle, CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
    if (s != CUBLAS_STATUS_SUCCESS)
        return kg_cublas_fail(ctx, s, "cublasSetMathMode");
    cudaError_t err = cudaSuccess;
    if (!bl->switch_event &&
        (err = cudaEventCreateWithFlags(&bl->switch_event, cudaEventDisableTiming)) != cudaSuccess) {
        bl->switch_event = NULL;
        return kgi_cuda_fail(ctx, err, "cudaEventCreate for the cuBLAS state");
    }
    void *mem = bl->workspace;
    if (!mem && (err = cudaMalloc(&mem, (size_t)WORKSPACE_BYTES + ZEROS_BYTES)) != cudaSuccess) {
        cudaGetLastError();
        return kgi_fail(ctx, err == cudaErrorMemoryAllocation ? KG_ERR_OUT_OF_MEMORY : KG_ERR_CUDA,
                        "%s: the cuBLAS workspace (%d bytes): %s",
                        err == cudaErrorMemoryAllocation ? "out of memory" : "CUDA error",
                        WORKSPACE_BYTES + ZEROS_BYTES, cudaGetErrorString(err));
    }
    bl->workspace = mem;
    bl->workspace_bytes = WORKSPACE_BYTES;
    bl->zeros = (char *)mem + WORKSPACE_BYTES;
    bl->zeros_bytes = ZEROS_BYTES;
    /* Synchronous on purpose: this runs once, outside capture, and the
       zeros must be in place before any stream reads them. */
    if ((err = cudaMemset(bl->zeros, 0, ZEROS_BYTES)) != cudaSuccess || (err = cudaDeviceSynchronize()) != cudaSuccess)
        return kgi_cuda_fail(ctx, err, "clearing the cuBLAS state's zero operand");
    if ((st = bind(ctx, bl)) != KG_OK)
        return st;
    bl->ready = 1;
    return KG_OK;
}

static cudaDataType_t cuda_type(kg_dtype dt)
{
    switch (dt) {
    case KG_F64: return CUDA_R_64F;
    case KG_F16: return CUDA_R_16F;
    case KG_BF16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
    }
}

static cublasLtEpilogue_t lt_epilogue(const kg_plan_key *k)
{
    switch (k->epilogue) {
    case KG_EPILOGUE_RELU: return k->has_bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case KG_EPILOGUE_GELU_TANH: return k->has_bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    default: return k->has_bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    }
}

static const char *epilogue_name(const kg_plan_key *k)
{
    static const char *const names[] = {"no", "relu", "gelu (tanh)"};
    return k->epilogue >= 0 && k->epilogue < KG_EPILOGUE_COUNT ? names[k->epilogue] : "?";
}

static cublasStatus_t layout(cublasLtMatrixLayout_t *l, cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld,
                             int64_t batch, int64_t stride)
{
    cublasStatus_t s = cublasLtMatrixLayoutCreate(l, t, (uint64_t)rows, (uint64_t)cols, ld);
    if (s != CUBLAS_STATUS_SUCCESS) {
        *l = NULL;
        return s;
    }
    if (batch > 1) {
        int32_t count = (int32_t)batch;
        s = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
        if (s == CUBLAS_STATUS_SUCCESS)
            s = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                 sizeof stride);
    }
    return s;
}

/* Creates the descriptors of p->key and asks the heuristic for one
   algorithm. On failure the plan is dropped and the message names why. */
static kg_status build_plan(kg_context *ctx, kg_blas *bl, kg_plan *p)
{
    const kg_plan_key *k = &p->key;
    const cudaDataType_t t = cuda_type((kg_dtype)k->dtype);
    const cublasComputeType_t ct = k->dtype == KG_F64                ? CUBLAS_COMPUTE_64F
                                   : (k->dtype == KG_F32 && k->tf32) ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                     : CUBLAS_COMPUTE_32F;
    const cudaDataType_t scale = k->dtype == KG_F64 ? CUDA_R_64F : CUDA_R_32F;
    const cublasOperation_t tx = k->trans_x ? CUBLAS_OP_T : CUBLAS_OP_N, ty = k->trans_y ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasLtEpilogue_t epi = lt_epilogue(k);
    const char *what = "creating cuBLASLt descriptors";
    p->used = 1;
    cublasStatus_t s = cublasLtMatmulDescCreate(&p->op, ct, scale);
    if (s != CUBLAS_STATUS_SUCCESS)
        p->op = NULL;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &tx, sizeof tx);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &ty, sizeof ty);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = layout(&p->lx, t, k->trans_x ? k->k : k->m, k->trans_x ? k->m : k->k, k->ldx, k->batch, k->sx);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = layout(&p->ly, t, k->trans_y ? k->n : k->k, k->trans_y ? k->k : k->n, k->ldy, k->batch, k->sy);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = layout(&p->ld, t, k->m, k->n, k->ldd, k->batch, k->sd);

    cublasLtMatmulPreference_t pref = NULL;
    if (s == CUBLAS_STATUS_SUCCESS) {
        what = "creating the cuBLASLt preference";
        s = cublasLtMatmulPreferenceCreate(&pref);
    }
    const uint64_t ws = bl->workspace_bytes;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    /* Alignments the pointers really have, so no algorithm that needs more
       is chosen (the default assumes 256-byte alignment). */
    const struct {
        cublasLtMatmulPreferenceAttributes_t attr;
        uint32_t v;
    } al[] = {{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, k->align_x},
              {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, k->align_y},
              {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, k->align_d},
              {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, k->align_d}};
    for (size_t i = 0; s == CUBLAS_STATUS_SUCCESS && i < sizeof al / sizeof al[0]; i++)
        s = cublasLtMatmulPreferenceSetAttribute(pref, al[i].attr, &al[i].v, sizeof al[i].v);
    if (s == CUBLAS_STATUS_SUCCESS && (k->dtype == KG_F16 || k->dtype == KG_BF16)) {
        /* Split-K partial sums in f32, never in the 16-bit output type. */
        const uint32_t mask = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
        s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof mask);
    }
    if (s == CUBLAS_STATUS_SUCCESS && k->has_bias) {
        /* The heuristic reads the bias pointer's alignment from the
           descriptor; any pointer of that alignment stands for it here. */
        const void *fake = (const void *)(uintptr_t)k->align_bias;
        s = cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &fake, sizeof fake);
    }
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    if (s == CUBLAS_STATUS_SUCCESS) {
        what = "cublasLtMatmulAlgoGetHeuristic";
        s = cublasLtMatmulAlgoGetHeuristic(bl->lt, p->op, p->lx, p->ly, p->ld, p->ld, pref, 1, &res, &found);
    }
    if (pref)
        cublasLtMatmulPreferenceDestroy(pref);
    if (s == CUBLAS_STATUS_SUCCESS && found < 1)
        s = CUBLAS_STATUS_NOT_SUPPORTED;
    if (s != CUBLAS_STATUS_SUCCESS) {
        drop_plan(p);
        return kgi_fail(
            ctx, KG_ERR_CUBLAS, "cuBLAS error: %s for %s %lldx%lldx%lld (batch %lld) with %s epilogue%s: %s (%s)", what,
            kg_dtype_name((kg_dtype)k->dtype), (long long)k->m, (long long)k->n, (long long)k->k, (long long)k->batch,
            epilogue_name(k), k->has_bias ? " and a bias" : "", cublasGetStatusString(s), cublasGetStatusName(s));
    }
    p->algo = res.algo;
    return KG_OK;
}

kg_status kg_blas_plan(kg_context *ctx, kg_blas *bl, const kg_plan_key *key, kg_plan **out)
{
    for (int i = 0; i < KG_GEMM_PLANS; i++) {
        kg_plan *p = &bl->plans[i];
        if (p->used && memcmp(&p->key, key, sizeof *key) == 0) {
            *out = p;
            return KG_OK;
        }
    }
    /* Round-robin replacement: cheap, and a working set larger than the
       cache only costs heuristic calls, never correctness. */
    kg_plan *p = &bl->plans[bl->next_plan++ % KG_GEMM_PLANS];
    drop_plan(p);
    p->key = *key;
    kg_status st = build_plan(ctx, bl, p);
    *out = st == KG_OK ? p : NULL;
    return st;
}
