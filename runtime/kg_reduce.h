/*
 * kg_reduce.h - reductions along any axes: sum, mean, prod, norm, max, min,
 * argmax, argmin, and max/min with their indices.
 *
 *     int axes[] = {1};
 *     kg_sum(ctx, &out, &in, axes, 1, 0);          out = in.sum(dim=1)
 *     kg_max_with_indices(ctx, &v, &i, &in, NULL, 0, 1)   over every axis, keepdim
 *
 * Axes: any set, in any order, negative ones counting from the end;
 * n_axes == 0 reduces every axis. A duplicate or out-of-range axis is
 * KG_ERR_INVALID_ARGUMENT. With keepdim the reduced dims stay with size 1,
 * else they are removed; out (and indices) must have that shape, any
 * strides, and must not overlap the input or each other.
 *
 * dtypes: the catalogue (gen/catalogue.lua, M.reduce) says which dtypes each
 * op takes: sum, prod, max and min every dtype; mean and norm only floats;
 * argmax and argmin every dtype but bool. Another dtype is KG_ERR_DTYPE (so
 * is an out of the wrong dtype). f16/bf16 accumulate in f32. Integer and bool sums and products
 * accumulate and return i64 (wrapping on overflow); every other op returns
 * the input's dtype. Indices are i64: the flattened index over the reduced
 * dims in their logical (row-major) order.
 *
 * Semantics: NaN propagates through max/min; argmax/argmin return the first
 * index of the extreme value, and a NaN counts as the extreme. A reduction of
 * nothing (a reduced dim of size 0) gives 0 for sum, 1 for prod, NaN for
 * mean, 0 for norm, and is KG_ERR_INVALID_ARGUMENT for max, min, argmax and
 * argmin. Reducing a non-empty dim of an empty tensor gives an empty result.
 * Results are bitwise the same run to run on one GPU (no floating-point
 * atomics).
 *
 * Scratch and graph capture: large reductions with few outputs split each
 * output across blocks and combine the partials in the block that finishes
 * last; that uses the context's device scratch (a few MiB, zeroed counters
 * and partial results). The first such reduction allocates it, which cannot
 * happen while the context's stream is being captured: call
 * kg_reserve_scratch(ctx, 0) (or run one reduction) before capturing. A call
 * that needs scratch during capture without it fails with
 * KG_ERR_INVALID_ARGUMENT. Reductions that use scratch are ordered by the
 * context's stream: do not switch streams (kg_set_stream) while one is in
 * flight on the old stream.
 */
#ifndef KG_REDUCE_H
#define KG_REDUCE_H

#include "kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Makes sure the context's device scratch holds at least `bytes` bytes (0:
   what any reduction may need), allocating (and zeroing) it now. Call it
   outside graph capture; it synchronizes the device when it allocates. */
KG_API kg_status kg_reserve_scratch(kg_context *ctx, size_t bytes);

#ifdef __cplusplus
}
#endif

/* The generated op enum, kg_reduce and one entry point per op (kg_sum,
   kg_argmax, kg_max_with_indices, ...). */
#include "kg_red_ops.h"

#endif
