/*
 * layout.h - broadcasting, overlap checks and dimension coalescing, shared by
 * every op family. Pure host code: tested on machines without a GPU.
 */
#ifndef KG_LAYOUT_H
#define KG_LAYOUT_H

#include "internal.h"
#include "kg_params.h"

/* A problem after coalescing: operand 0 is the output. Dim 0 is innermost. */
typedef struct kg_layout {
    int nops;
    int ndim;
    int64_t size[KG_MAX_DIMS];
    int64_t stride[KG_EW_MAX_OPERANDS][KG_MAX_DIMS];
} kg_layout;

/* Broadcasts the inputs' shapes (NumPy rules) into shape/ndim; on failure a
   "shape mismatch: a is [2,3], b is [4]" message names every input. */
kg_status kg_broadcast_shapes(kg_context *ctx, const kg_tensor *const *in, const char *const *names, int n, int *ndim,
                              int64_t *shape);

/* KG_ERR_INVALID_ARGUMENT when two elements of t share memory (a stride-0 or
   otherwise self-overlapping output). */
kg_status kg_check_no_self_overlap(kg_context *ctx, const kg_tensor *t, const char *name);

/* Refuses `in` when its memory range meets out's, unless it is exactly the
   same elements in the same order (in place), given in's strides broadcast to
   out's shape. */
kg_status kg_check_alias(kg_context *ctx, const kg_tensor *out, const kg_tensor *in, const char *name);

/* Strides of `t` viewed with out's shape (stride 0 along broadcast dims). */
void kg_broadcast_strides(const kg_tensor *t, int ndim, const int64_t *shape, int64_t *strides);

/* Builds the coalesced layout of out and its inputs: drops size-1 dims,
   orders dims by the output's strides (innermost first) and merges adjacent
   dims whose strides chain for every operand. */
void kg_layout_build(kg_layout *L, const kg_tensor *out, const kg_tensor *const *in, int n_in);

/* 1 when every operand's largest offset (and the element count) is < 2^31. */
int kg_layout_fits32(const kg_layout *L);

/* Fills a 32-bit layout with magic numbers for fast division. */
void kg_layout_to_nd32(const kg_layout *L, kg_nd32 *out);
void kg_layout_to_nd64(const kg_layout *L, kg_nd64 *out);

/* The magic pair for dividing r < 2^31 by d > 0 (see kg_params.h). */
void kg_divmod_magic(uint32_t d, uint32_t *magic, uint32_t *shift);

#endif
