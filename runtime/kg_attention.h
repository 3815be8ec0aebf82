/*
 * kg_attention.h - fused attention forward (flash attention).
 *
 *     out = softmax(scale * q k^T + mask) v        lse = log sum_j exp(...)
 *
 * q is [B, Hq, Sq, D]; k and v are [B, Hkv, Sk, D] with Hq a multiple of Hkv
 * (multi-head, grouped-query and multi-query attention: query head h reads
 * key/value head h / (Hq / Hkv)); out is [B, Hq, Sq, D] of q's dtype. Any
 * strides (0 for broadcast inputs too). The kernels read q, k, v and write
 * out directly where the head dim is contiguous, the data 16-byte aligned
 * and the B/H/S strides multiples of 16 bytes; any other operand is first
 * copied densely into the context's pack area (one extra read and write of
 * it; out is written there and copied back), which graph capture needs
 * reserved ahead (kg_gemm_reserve on the captured stream).
 *
 * dtypes: f16 and bf16 run on tensor cores with f32 accumulation and an f32
 * softmax; f32 is computed in true FP32 (no TF32); f64 runs portable f64
 * kernels (FFMA and softmax in f64; mask f32 or f64; any D <= 256). Head
 * dims 32, 64, 96, 128 and 256 are generated; another D up to 256 is
 * zero-padded to the next generated one (exact: the added products are 0;
 * scale 1/sqrt(D) of the original D), a larger one is refused
 * (KG_ERR_INVALID_ARGUMENT).
 *
 * lse (optional, NULL to skip) is an f32 tensor [B, Hq, Sq] (any strides)
 * receiving the natural-log row log-sum-exp of the scaled, masked scores.
 *
 * mask (optional, NULL for none) is an additive f32 tensor broadcastable to
 * [B, Hq, Sq, Sk] (NumPy rules from the right, size-1 or stride-0 dims
 * broadcast); -inf removes a key (a padding mask is the common case).
 *
 * opts (NULL: defaults): scale 0 means 1/sqrt(D); causal masks key j for
 * query i when j > i + Sk - Sq (aligned to the bottom-right corner, so with
 * Sq < Sk the last query sees every key, and with Sq > Sk the first Sq - Sk
 * queries see none). A row whose keys are all masked gives output 0 and lse
 * -inf, never NaN. Sk = 0 is such a case for every row.
 *
 * Kernels: the call picks one generated variant by device and shape (see
 * runtime/attention.c): on compute capability 9.0, f16/bf16 at every head
 * dim run the Hopper kernels (wgmma; at D 64 with Sk >= 2048 and no mask, 192
 * keys per tile instead of 128); f32 calls with few query blocks run 16-row
 * blocks. f16/bf16 calls with Sq <= 16 (decode, speculative decode) on any
 * device run the short-query kernels: the query heads sharing a KV head are
 * packed into one tile (K and V read once per KV head) and the keys are split
 * across blocks, the partial results merged in a fixed order by a second
 * kernel (scratch memory of the context, kg_scratch); on compute capability
 * 9.0 these two are launched with programmatic dependent launch. A given
 * call on a given device is bitwise reproducible; different variants round
 * differently and agree within the tolerance of TESTING.md.
 */
#ifndef KG_ATTENTION_H
#define KG_ATTENTION_H

#include "kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kg_attention_opts {
    float scale; /* softmax scale; 0 selects 1/sqrt(D) */
    int causal;  /* nonzero: bottom-right aligned causal mask */
} kg_attention_opts;

KG_API kg_status kg_attention(kg_context *ctx, const kg_tensor *out, const kg_tensor *lse, const kg_tensor *q,
                              const kg_tensor *k, const kg_tensor *v, const kg_tensor *mask,
                              const kg_attention_opts *opts);

#ifdef __cplusplus
}
#endif

#endif
