/*
 * geometry.h - the host-side shape arithmetic every op family shares: the
 * boundary check of a tensor argument, its byte extent and address range,
 * overlap, self-overlap, alignment, finite parameters, broadcasting and the
 * coalescing of dims. Pure host code, tested on machines without a GPU
 * (tests/test_layout.c).
 *
 * The boundary check. Every entry point passes each tensor argument through
 * kgi_check_tensor once, before any other arithmetic on it. A tensor it
 * accepts satisfies:
 *   - 0 <= ndim <= KG_MAX_DIMS, a valid dtype;
 *   - shape[d] >= 0 and strides[d] >= 0 for every d < ndim;
 *   - with s_d = max(shape[d], 1) (so empty tensors too): the count
 *     prod_d s_d times elsize <= INT64_MAX (what the elements would occupy
 *     stored densely), and E = (1 + sum_d (s_d - 1) * strides[d]) * elsize
 *     <= INT64_MAX;
 *   - when numel > 0: a non-NULL data pointer aligned to the element size,
 *     and data + E <= 2^64 - 1 (the range [data, data + E) does not wrap).
 * So after it, any product of any subset of the sizes, and any sum of
 * i_d * strides[d] with 0 <= i_d < s_d (any single term, any partial sum),
 * fits int64 in elements and in bytes, for empty tensors as well: callers
 * need no further overflow checks on one tensor's sizes and offsets.
 * (Products across tensors, e.g. a matmul's M * N * batch, or a reduction's
 * rounding up of a count, are the family's to check.)
 *
 * Names: kgi_ is the internal prefix (users see kg_). The older kg_ names of
 * these helpers remain as macros at the end of this file until every family
 * has switched.
 */
#ifndef KGI_GEOMETRY_H
#define KGI_GEOMETRY_H

#include <stddef.h>
#include <stdint.h>

#include "kg_core.h"

/* Operands of a coalesced problem (the output plus up to 3 inputs); the
   element-wise kernel arguments hold as many (kg_params.h,
   KG_EW_MAX_OPERANDS: layout.c asserts they agree). */
#define KGI_MAX_OPERANDS 4

/* ---- The boundary check ------------------------------------------------- */

/* Checks one tensor argument named `name` as described above; on failure a
   specific message, e.g.
     "invalid argument: a: shape [9223372036854775807] spans more than 2^63
      bytes (strides [1], 4-byte f32 elements)". */
kg_status kgi_check_tensor(kg_context *ctx, const kg_tensor *t, const char *name);

/* The element count and byte extent of t without any check beyond overflow:
   returns 1 and stores them (either pointer may be NULL) when ndim is in
   range, shapes and strides are non-negative and both fit int64 (with sizes
   0 counted as 1, as the boundary check bounds them); else 0. An empty
   tensor has count 0 and extent 0. */
int kgi_tensor_size(const kg_tensor *t, int64_t *numel, int64_t *bytes);

/* ---- Address ranges -------------------------------------------------- */

/* [lo, hi) bytes of a checked tensor; lo == hi when it is empty. */
typedef struct kgi_range {
    uintptr_t lo, hi;
} kgi_range;

kgi_range kgi_tensor_range(const kg_tensor *t);
/* 1 when two ranges share a byte (an empty range meets nothing). */
int kgi_ranges_overlap(kgi_range a, kgi_range b);

/* KG_ERR_INVALID_ARGUMENT when two elements of t share memory (a stride-0 or
   otherwise self-overlapping output): outputs need one location each. */
kg_status kgi_check_no_self_overlap(kg_context *ctx, const kg_tensor *t, const char *name);

/* Refuses `in` when its memory range meets out's, unless it is exactly the
   same elements in the same order (in place), given in's strides broadcast to
   out's shape. */
kg_status kgi_check_alias(kg_context *ctx, const kg_tensor *out, const kg_tensor *in, const char *name);

/* Refuses a and b sharing any byte: "invalid argument: <op>: <an> overlaps
   <bn> (bytes [..) and [..))". For outputs that may not alias anything. */
kg_status kgi_check_disjoint(kg_context *ctx, const char *op, const kg_tensor *a, const char *an, const kg_tensor *b,
                             const char *bn);

/* ---- Alignment and parameters -------------------------------------------- */

/* 1 when p is a multiple of `bytes` (a power of two). */
static inline int kgi_aligned(const void *p, size_t bytes) { return ((uintptr_t)p & (bytes - 1)) == 0; }

/* Refuses a non-empty t whose data is not a multiple of `bytes`:
   "invalid argument: <op>: <name>'s data %p is not <bytes>-byte aligned". */
kg_status kgi_check_aligned(kg_context *ctx, const char *op, const kg_tensor *t, const char *name, size_t bytes);

/* Refuses a parameter that is NaN, infinite or larger in magnitude than
   `limit` (FLT_MAX for one the kernels read as a float, where a larger
   double would become inf):
   "invalid argument: <op>: <name> is <v> (it must be finite...)". */
kg_status kgi_check_finite(kg_context *ctx, const char *op, const char *name, double v, double limit);

/* ---- Broadcasting --------------------------------------------------------- */

/* Broadcasts the inputs' shapes (NumPy rules) into shape/ndim; on failure a
   "shape mismatch: a is [2,3], b is [4]" message names every input.
   The inputs must be checked tensors. */
kg_status kgi_broadcast_shapes(kg_context *ctx, const kg_tensor *const *in, const char *const *names, int n, int *ndim,
                               int64_t *shape);

/* Strides of `t` viewed with out's shape (stride 0 along broadcast dims). */
void kgi_broadcast_strides(const kg_tensor *t, int ndim, const int64_t *shape, int64_t *strides);

/* ---- Coalescing ------------------------------------------------------------ */

/* A problem after coalescing: operand 0 is the output. Dim 0 is innermost. */
typedef struct kgi_layout {
    int nops;
    int ndim;
    int64_t size[KG_MAX_DIMS];
    int64_t stride[KGI_MAX_OPERANDS][KG_MAX_DIMS];
} kgi_layout;

/* Builds the coalesced layout of out and its inputs (checked tensors, the
   inputs broadcastable to out, n_in < KGI_MAX_OPERANDS): drops size-1 dims,
   orders dims by the output's strides (innermost first) and merges adjacent
   dims whose strides chain for every operand. */
void kgi_layout_build(kgi_layout *L, const kg_tensor *out, const kg_tensor *const *in, int n_in);

/* 1 when every operand's largest offset (and the element count) is < 2^31. */
int kgi_layout_fits32(const kgi_layout *L);

/* The magic pair for dividing r < 2^31 by d > 0: q = (umulhi(r, magic) + r)
   >> shift (the kernels' fast divmod). */
void kgi_divmod_magic(uint32_t d, uint32_t *magic, uint32_t *shift);

/* ---- Older names (to be removed once every family uses the kgi_ ones) ---- */
#define kg_check_tensor kgi_check_tensor
#define kg_check_no_self_overlap kgi_check_no_self_overlap
#define kg_check_alias kgi_check_alias
#define kg_broadcast_shapes kgi_broadcast_shapes
#define kg_broadcast_strides kgi_broadcast_strides
#define kg_layout kgi_layout
#define kg_layout_build kgi_layout_build
#define kg_layout_fits32 kgi_layout_fits32
#define kg_divmod_magic kgi_divmod_magic

#endif
