/*
 * layout.h - a coalesced layout (geometry.h) as the element-wise kernels'
 * arguments (kg_params.h): 32-bit with magic numbers for fast division, or
 * 64-bit. The shared geometry itself (broadcasting, overlap, coalescing)
 * is in geometry.h.
 */
#ifndef KG_LAYOUT_H
#define KG_LAYOUT_H

#include "internal.h"
#include "kg_params.h"

/* Fills a 32-bit layout (kgi_layout_fits32) with magic numbers for fast
   division. */
void kgi_layout_to_nd32(const kgi_layout *L, kg_nd32 *out);
void kgi_layout_to_nd64(const kgi_layout *L, kg_nd64 *out);

/* Tuning hook (tests and benches), process-wide:
   KG_EW_TUNE_PERM_BLOCKS_PER_SM: perm/permf launch that many persistent
     blocks per SM instead of one block per tile (0, the default);
   KG_EW_TUNE_ROWS_MIN: the shortest inner dim rows serves (nd32 below);
   KG_EW_TUNE_ROWS_MAX_BYTES: rows for elements of at most that many bytes;
   KG_EW_TUNE_FOLD_MAX: perm folds dims of at most that many elements (0:
     half a tile, the default). */
enum { KG_EW_TUNE_PERM_BLOCKS_PER_SM, KG_EW_TUNE_ROWS_MIN, KG_EW_TUNE_ROWS_MAX_BYTES, KG_EW_TUNE_FOLD_MAX };
KG_API void kg_test_ew_tune(int what, int value);

#endif
