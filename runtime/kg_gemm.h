/*
 * kg_gemm.h - matrix products through cuBLAS (kgen.h includes it).
 *
 * kg_matmul(ctx, out, a, b) computes out = a @ b with NumPy's matmul rules:
 *
 *   a [..., M, K] @ b [..., K, N] -> out [..., M, N]
 *
 * The batch dims (all but the last two) broadcast as in NumPy: [B,M,K] @
 * [K,N], [B,1,M,K] @ [H,K,N] -> [B,H,M,N]. A 1-d a is a row [1,K] and a 1-d
 * b a column [K,1]; the added dim is dropped from out, as in NumPy.
 *
 * dtypes: a, b and out share one of f32, f64, f16, bf16. f16 and bf16
 * multiply and accumulate in f32 (split-K partial sums included) and round
 * once into out. f32 is true FP32 unless kg_set_tf32(ctx, 1) opts the
 * context into TF32 tensor cores (about 7x faster, 10-bit mantissa inputs).
 *
 * Layouts: any strides (0 for broadcast). Without a copy, when each
 * operand's last two dims have stride 1 in one of them and, in the other, a
 * stride at least that dim's extent (row-major, column-major/transposed, or
 * padded rows), and out likewise: these become cuBLAS's transpose flags and
 * leading dimensions. Batches that one stride per operand describes run as
 * one strided-batched call; batches of a broadcast operand fold into the rows
 * of one larger GEMM where the strides allow ([B,M,K] @ [K,N] is one
 * [B*M,K] @ [K,N] GEMM); up to KG_GEMM_MAX_LOOP (16) other batch indices run
 * as one call each. Anything else is packed: an operand cuBLAS cannot read
 * (e.g. b[:, ::2]) or whose batch no single stride describes is first copied
 * densely into the context's pack area (one strided copy kernel), and an out
 * it cannot write is computed densely there and copied into out; the whole
 * call is then one strided-batched GEMM, at the cost of one extra read and
 * write of each packed tensor. out must not overlap a, b or the bias.
 *
 * Edge cases: K = 0 gives zeros (plus the bias and epilogue when given) in
 * one strided fill, whatever the strides of the empty operands; an empty M,
 * N or batch does nothing and succeeds.
 *
 * Epilogues (kg_matmul_ex): the bias add and relu/gelu run inside the GEMM
 * (cuBLASLt epilogues), so a linear layer is one call. In f16 and bf16,
 * some cuBLASLt kernels round a @ b to the output dtype before the epilogue
 * (seen on an H200): out = round(act(round(a @ b) + bias)), so with a bias
 * the error can be one rounding of |a @ b| rather than of the result.
 *
 * State: the first GEMM on a context (or kg_gemm_prepare) creates the
 * context's cuBLAS and cuBLASLt handles and one 32 MiB workspace; this must
 * happen outside CUDA graph capture. The pack area is per stream: made (or
 * grown) by the first packed call on a stream outside capture, or reserved
 * up front by kg_gemm_prepare (KG_GEMM_PACK_BYTES) or kg_gemm_reserve on the
 * stream that will be captured. After that, calls allocate nothing and do no
 * host synchronization, so they may be captured and replayed; a packed call
 * in capture whose area is too small fails with KG_ERR_INVALID_ARGUMENT
 * naming the bytes it needs. Problem descriptions and the algorithm
 * cuBLASLt chose are cached per context.
 */
#ifndef KG_GEMM_H
#define KG_GEMM_H

#include "kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What is applied to each element of a @ b (+ bias) before it is stored. */
typedef enum kg_epilogue {
    KG_EPILOGUE_NONE = 0,
    KG_EPILOGUE_RELU,      /* max(x, 0) */
    KG_EPILOGUE_GELU_TANH, /* x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as cuBLASLt and
                              PyTorch's gelu(approximate="tanh"); kg_gelu is the erf form */
    KG_EPILOGUE_COUNT
} kg_epilogue;

/* Which cuBLAS entry point runs a call. AUTO picks per call (see gemm.c);
   the others exist for benchmarks and tests. A bias or epilogue always runs
   through cuBLASLt. */
typedef enum kg_gemm_backend {
    KG_GEMM_AUTO = 0,
    KG_GEMM_CUBLAS,   /* cublasGemmEx / cublasGemmStridedBatchedEx */
    KG_GEMM_CUBLASLT, /* cublasLtMatmul with a cached heuristic choice */
    KG_GEMM_BACKEND_COUNT
} kg_gemm_backend;

typedef struct kg_matmul_opts {
    /* NULL, or a [N] vector of out's dtype with stride 1, added to every row
       of out (a linear layer's bias); needs out's last dim to have stride 1. */
    const kg_tensor *bias;
    kg_epilogue epilogue;
    kg_gemm_backend backend;
} kg_matmul_opts;

KG_API kg_status kg_matmul(kg_context *ctx, const kg_tensor *out, const kg_tensor *a, const kg_tensor *b);
/* opts may be NULL (the same as kg_matmul). */
KG_API kg_status kg_matmul_ex(kg_context *ctx, const kg_tensor *out, const kg_tensor *a, const kg_tensor *b,
                              const kg_matmul_opts *opts);

/* 1: f32 products may use TF32 tensor cores; 0 (the default): true FP32. */
KG_API kg_status kg_set_tf32(kg_context *ctx, int enable);
/* Creates the context's cuBLAS handles and workspace now (otherwise the
   first GEMM does) and a pack area of KG_GEMM_PACK_BYTES for the context's
   current stream; call it before capturing a graph that holds a GEMM. */
KG_API kg_status kg_gemm_prepare(kg_context *ctx);
#define KG_GEMM_PACK_BYTES ((size_t)16 << 20)
/* kg_gemm_prepare with a pack area of at least pack_bytes (for packed
   operands larger than the default, inside graph capture). */
KG_API kg_status kg_gemm_reserve(kg_context *ctx, size_t pack_bytes);

#ifdef __cplusplus
}
#endif

#endif
