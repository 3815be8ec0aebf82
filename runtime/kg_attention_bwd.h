/*
 * kg_attention_bwd.h - fused attention backward (flash attention 2).
 *
 * Given the forward's inputs q, k, v, mask and options, its output out and
 * its lse (kg_attention with a non-NULL lse), and dout, the gradient of a
 * loss with respect to out, computes the gradients
 *
 *     dq, dk, dv  of  out = softmax(scale * q k^T + mask) v
 *
 * without storing the Sq x Sk matrix: the probabilities are recomputed from
 * q, k and lse. Shapes and dtypes follow the forward (kg_attention.h): q,
 * out, dout and dq are [B, Hq, Sq, D], k, v, dk and dv [B, Hkv, Sk, D], all
 * of one dtype (f16 and bf16 on tensor cores with f32 accumulation; f32
 * FP32-accurate: at head dims 32 to 128 on tensor cores in split TF32, each
 * f32 operand as the sum of two TF32 values and each product as three TF32
 * products with f32 accumulation, about 22 of FP32's 24 bits an operand,
 * not plain TF32; at 256, and where the split kernel's shared memory does
 * not fit, in FP32 FMA); lse is f32 [B, Hq, Sq];
 * mask is f32, broadcastable to [B, Hq, Sq, Sk]. Any strides on B, H and S
 * (so [B, S, H, D] storage works as a view); the head dim contiguous, data
 * and B/H/S strides 16-byte aligned. Head dims 32, 64, 96, 128 and 256.
 *
 * Grouped-query and multi-query attention: dk and dv of a key/value head sum
 * the contributions of its Hq / Hkv query heads, in a fixed order. Rows
 * whose keys are all masked (lse -inf) get dq = 0 and add nothing to dk, dv.
 * Results are bitwise reproducible: no floating-point atomics anywhere; the
 * partial sums of dq are added up in a fixed order.
 *
 * Scratch: the call uses the context's device scratch for its stream: 8
 * bytes a query row (delta = rowsum(dout * out) and lse in base 2) and, for
 * every dtype, up to 128 f32 partial sums of dq (B Hq Sq D 4 bytes each, at
 * most one per 128 keys; their count depends on the shape only, and they
 * total at most 2 GiB unless one alone is larger), and where few (batch, kv
 * head) pairs meet long key ranges (B Hkv ceil(Sk / 64) <= 1024), up to 16
 * f32 partials of dk and dv (2 B Hkv Sk D 4 bytes each, at most 256 MiB in
 * all; their count depends on the shape and the device's multiprocessor
 * count, the reservation below covers any). It grows on first use; before capturing a call in a
 * CUDA graph, reserve it on the capturing stream (after kg_set_stream) with
 *     kg_reserve_scratch(ctx, kg_attention_backward_scratch_bytes(B, Hq, Hkv, Sq, Sk, D));
 * (a call too big for the scratch during capture fails with
 * KG_ERR_INVALID_ARGUMENT instead of allocating).
 *
 * opts must be the forward's (scale, causal). dq, dk and dv must not overlap
 * any input or each other.
 *
 * Devices with less shared memory a block than the H200 (compute capability
 * 8.0: 163 KiB) run the kernels that fit (f32 D 64, 128 and 256: smaller
 * tiles); where none fits (f32 at D 64 and up on devices of 99 KiB a block)
 * the call fails with
 * KG_ERR_NO_KERNEL_IMAGE naming the bytes needed and allowed, before any
 * launch.
 */
#ifndef KG_ATTENTION_BWD_H
#define KG_ATTENTION_BWD_H

#include "kg_attention.h" /* kg_attention_opts */
#include "kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

KG_API kg_status kg_attention_backward(kg_context *ctx, const kg_tensor *dq, const kg_tensor *dk, const kg_tensor *dv,
                                       const kg_tensor *dout, const kg_tensor *q, const kg_tensor *k,
                                       const kg_tensor *v, const kg_tensor *out, const kg_tensor *lse,
                                       const kg_tensor *mask, const kg_attention_opts *opts);

/* Bytes of device scratch kg_attention_backward needs for q [B, Hq, Sq, D]
   and k [B, Hkv, Sk, D] (any dtype; 0 for negative or out-of-range sizes, a
   size that overflows, or a shape every call refuses: Hq not a multiple of
   Hkv, a head dim that is not generated), for kg_reserve_scratch. */
KG_API size_t kg_attention_backward_scratch_bytes(int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Sk,
                                                  int64_t D);

#ifdef __cplusplus
}
#endif

#endif
