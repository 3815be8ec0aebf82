/*
 * kg_norm.h - normalizations: softmax, log_softmax, logsumexp, layer_norm,
 * rms_norm (and rms_norm fused with a residual add).
 *
 *     kg_softmax(ctx, &out, &in, -1);                 out = in.softmax(-1)
 *     int axes[] = {0, 2};
 *     kg_logsumexp(ctx, &out, &in, axes, 2, 0);       out = in.logsumexp((0, 2))
 *     kg_layer_norm(ctx, &y, &mean, &rstd, &x, 1, &w, &b, 1e-5);
 *     kg_rms_norm_residual(ctx, &y, &res, &x, &w, 1e-6);   res += x; y = rms_norm(res) * w
 *
 * dtypes: f32, f64, f16, bf16; out (and residual, weight, bias) have the
 * input's dtype. f16/bf16 compute and accumulate in f32; per-row statistics
 * (layer_norm's mean and rstd) are f32 for f32/f16/bf16 inputs and f64 for
 * f64. logsumexp's result has the input's dtype.
 *
 * Axes: softmax and log_softmax normalize along one axis (negative counts
 * from the end; a 0-d input takes 0 or -1); logsumexp reduces any set of
 * axes exactly as kg_reduce does (n_axes == 0: every axis; keepdim keeps them
 * with size 1). layer_norm normalizes over the last k dims (1 <= k <= ndim);
 * its weight and bias, each optional (NULL), broadcast to those k dims
 * (right-aligned, NumPy rules, at most k dims); mean and rstd, each optional,
 * have the input's shape without its last k dims. rms_norm normalizes over
 * the last dim, with an optional weight broadcasting to it. eps may be any
 * finite value the accumulator holds (f32, f16, bf16: at most FLT_MAX in
 * magnitude; f64: any finite); a negative eps is accepted as PyTorch accepts
 * it (rstd = 1/sqrt(var + eps), NaN where var + eps < 0). NaN, inf or a
 * larger eps is KG_ERR_INVALID_ARGUMENT.
 *
 * Fused residual form: kg_rms_norm_residual reads in and residual, writes
 * h = in + residual (computed in the accumulator type, rounded to the dtype)
 * back into residual, and writes out = rms_norm(h) * weight: out is exactly
 * what kg_rms_norm would give on the new residual.
 *
 * Semantics (m = the row's maximum):
 *   softmax(x) = exp(x - m) / sum(exp(x - m)), log_softmax(x) = x - lse,
 *   lse = m + log(sum(exp(x - m))), with m replaced by 0 where it is +-inf
 *   (so a row of all -inf has logsumexp -inf and softmax/log_softmax NaN,
 *   as in PyTorch; a +inf gives logsumexp +inf). NaN anywhere in a row
 *   makes the whole row's results NaN. layer_norm uses the biased variance:
 *   (x - mean) / sqrt(var + eps) * w + b; a constant row gives b (rstd =
 *   1/sqrt(eps)). rms_norm: x / sqrt(mean(x^2) + eps) * w.
 *   Empty: softmax of an empty axis writes nothing; logsumexp of an empty
 *   set of elements is -inf; layer_norm over an empty normalized shape gives
 *   NaN mean and rstd. No input large or small overflows: the max shift
 *   keeps softmax of [1e4, -1e4] at [1, 0].
 *
 * Layouts: any strides; out may alias in exactly (in place); any other
 * overlap between a result and another tensor is KG_ERR_INVALID_ARGUMENT.
 * Rows whose normalized elements are contiguous use 16-byte vectors, rows up
 * to 4096 vectors per block (16384 f32) stay on chip (one read, one write);
 * longer rows stream and are read twice. A normalized axis with a stride
 * whose neighbouring kept dim is contiguous runs in column tiles (coalesced;
 * read twice, the statistics of long columns split across blocks through
 * the context's scratch, see kg_reserve_scratch in kg_reduce.h; call it
 * before capturing such a call in a CUDA graph). Results are bitwise the
 * same run to run (no floating-point atomics). All validation happens
 * before any device call.
 */
#ifndef KG_NORM_H
#define KG_NORM_H

#include "kg_core.h"

#include "kg_norm_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = softmax(in) along axis. */
KG_API kg_status kg_softmax(kg_context *ctx, const kg_tensor *out, const kg_tensor *in, int axis);
/* out = log_softmax(in) along axis. */
KG_API kg_status kg_log_softmax(kg_context *ctx, const kg_tensor *out, const kg_tensor *in, int axis);
/* out = log(sum(exp(in))) over axes (n_axes of them; 0: every axis). */
KG_API kg_status kg_logsumexp(kg_context *ctx, const kg_tensor *out, const kg_tensor *in, const int *axes, int n_axes,
                              int keepdim);
/* out = layer_norm(in) over the last k dims; weight, bias, mean, rstd may be
   NULL. */
KG_API kg_status kg_layer_norm(kg_context *ctx, const kg_tensor *out, const kg_tensor *mean, const kg_tensor *rstd,
                               const kg_tensor *in, int k, const kg_tensor *weight, const kg_tensor *bias, double eps);
/* out = rms_norm(in) over the last dim; weight may be NULL. */
KG_API kg_status kg_rms_norm(kg_context *ctx, const kg_tensor *out, const kg_tensor *in, const kg_tensor *weight,
                             double eps);
/* residual = in + residual; out = rms_norm(residual) over the last dim. */
KG_API kg_status kg_rms_norm_residual(kg_context *ctx, const kg_tensor *out, const kg_tensor *residual,
                                      const kg_tensor *in, const kg_tensor *weight, double eps);

#ifdef __cplusplus
}
#endif

#endif
