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

#endif
