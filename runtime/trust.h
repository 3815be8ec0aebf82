/*
 * trust.h - per-stream device scratch, the pack area, operand packing and the
 * internal allocation hook with fault injection (scratch.c, pack.c). Not
 * part of the public API.
 */
#ifndef KG_TRUST_H
#define KG_TRUST_H

#include "internal.h"

/* ---- Internal allocations ---------------------------------------------------
 * Every allocation the library makes on its own (not kg_malloc) goes through
 * these, so a test can make the n-th one fail (kg_test_fail_alloc). */
cudaError_t kgi_device_alloc(void **p, size_t bytes);
void *kgi_host_alloc(size_t bytes); /* zero-filled, NULL on failure */

/* Testing aid: the n-th internal allocation from now (n >= 1), counted on
   the calling thread, fails as if out of memory; 0 switches it off. Returns
   how many allocations were counted since the last call. */
KG_API int kg_test_fail_alloc(int n);

/* 1 for the CUDA errors that mean the device faulted (illegal address and
   the like): the CUDA context is lost, every later call fails; reported as
   KG_ERR_CUDA ("a device fault (sticky ...)"). */
int kgi_cuda_sticky(cudaError_t err);

/* ---- Per-stream state (scratch.c) -------------------------------------------
 * The context keeps one slot per stream it has run on (up to
 * KG_STREAM_SLOTS; the least recently used one is freed when a new stream
 * needs one, which waits for the device). A slot holds the reductions'
 * scratch (see kg_scratch in internal.h) and the pack area, so work
 * enqueued on two streams never shares either. */
enum { KG_STREAM_SLOTS = 8 };

/* At least `bytes` of pack area for ctx->stream, in *base (256-byte aligned).
   Grows outside graph capture only; during capture a too-small area is
   KG_ERR_INVALID_ARGUMENT naming the sizes and the call that reserves it. */
kg_status kgi_pack_area(kg_context *ctx, size_t bytes, void **base);
/* Frees every slot (kg_close). */
void kgi_scratch_release(kg_context *ctx);

/* ---- Packing (pack.c) ---------------------------------------------------------
 * Copies tensors of any strides (0 for broadcast included) into dense,
 * row-major copies in the pack area of the context's stream, with the
 * generated same-dtype strided copy (kg_cast's kernels), in stream order.
 *
 * kgi_pack(ctx, n, src, dst): one call for up to KG_PACK_MAX tensors (already
 * validated by the caller); dst[i] gets src[i]'s dtype and shape, contiguous
 * strides and a 256-byte aligned address in the pack area. The copies stay
 * valid until the next call on this context and stream that packs. Sizes are
 * overflow-checked; an area that cannot grow (graph capture) or an
 * allocation failure is reported with the sizes. */
enum { KG_PACK_MAX = 4, KG_PACK_ALIGN = 256 };
/* v rounded up to a multiple of KG_PACK_ALIGN: where the next copy starts
   (v <= SIZE_MAX - KG_PACK_ALIGN). */
static inline size_t kgi_pack_round(size_t v) { return (v + KG_PACK_ALIGN - 1) / KG_PACK_ALIGN * KG_PACK_ALIGN; }
kg_status kgi_pack(kg_context *ctx, int n, const kg_tensor *const *src, kg_tensor *dst);
/* The bytes kgi_pack needs for these tensors (0 and KG_ERR_INVALID_ARGUMENT
   with a message on overflow). */
kg_status kgi_pack_bytes(kg_context *ctx, int n, const kg_tensor *const *src, size_t *bytes);
/* 1 when t's innermost dim is contiguous (or of size <= 1) and its address
   and every other stride are `align`-byte aligned: attention's test for
   whether an operand must be packed first. */
int kgi_pack_is_aligned(const kg_tensor *t, size_t align);
/* Copies dense `src` (as kgi_pack made it) back into `dst` of any layout. */
kg_status kgi_unpack(kg_context *ctx, const kg_tensor *dst, const kg_tensor *src);

#endif
