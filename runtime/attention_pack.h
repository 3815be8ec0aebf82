/*
 * attention_pack.h - kg_attention's calls the generated f16/bf16/f32 kernels
 * cannot take as they are (issue 16), and its f64 path. Not part of the
 * public API; runtime/attention.c validates every argument first (shapes,
 * dtypes, overlap, scale, sizes, a usable device), then hands over:
 *
 *   - an operand whose head dim is not contiguous, or whose data or B/H/S
 *     strides are not 16-byte aligned, or a head dim that is not generated
 *     (but at most the largest one): kgi_attention_packed copies q, k and v
 *     (those that need it) into the context's pack area, zero-padded to the
 *     next generated head dim, runs the generated kernel on the copies and
 *     copies the output back (attention_pack.c);
 *   - f64: kgi_attention_f64 runs the generated f64 kernels (any strides,
 *     any head dim up to 256; attention_f64.c).
 */
#ifndef KG_ATTENTION_PACK_H
#define KG_ATTENTION_PACK_H

#include "internal.h"

/* The smallest generated head dim >= D (D >= 0), or -1 when D is larger
   than every generated one. */
int64_t kgi_attn_padded_dim(int64_t D);

/* 1 when the generated kernels can read (or write) t as it is: empty, or
   its head dim contiguous and its data and B/H/S strides 16-byte aligned. */
int kgi_attn_direct(const kg_tensor *t);

/* The call through packed copies (see above). `scale` is the softmax scale
   of the original head dim (the caller's default 1/sqrt(D) already
   applied); Dp = kgi_attn_padded_dim(D). The copies take the pack area of
   the context's stream (trust.h: grown outside graph capture; during
   capture it must have been reserved, e.g. with kg_gemm_reserve). */
kg_status kgi_attention_packed(kg_context *ctx, const kg_tensor *out, const kg_tensor *lse, const kg_tensor *q,
                               const kg_tensor *k, const kg_tensor *v, const kg_tensor *mask, int causal, float scale,
                               int64_t Dp);

/* The f64 path: softmax in f64, `scale` applied in f64, lse (f32) as usual. */
kg_status kgi_attention_f64(kg_context *ctx, const kg_tensor *out, const kg_tensor *lse, const kg_tensor *q,
                            const kg_tensor *k, const kg_tensor *v, const kg_tensor *mask, int causal, double scale);

#endif
