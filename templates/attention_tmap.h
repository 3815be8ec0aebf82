/*
 * attention_tmap.h - the tensor maps the Hopper prefill and the decode
 * kernels of attention forward take as their second argument, shared by the
 * runtime (runtime/attention.c encodes them) and the kernels
 * (attention_tma.cuh reads them). Kept out of attention_params.h, which the
 * backward kernels include too.
 */
#ifndef KG_ATTENTION_TMAP_H
#define KG_ATTENTION_TMAP_H

#include <stdint.h>

/* One CUtensorMap (128 bytes, 64-byte aligned), opaque here. */
typedef struct kg_attn_tmap {
    __attribute__((aligned(64))) unsigned long long w[16];
} kg_attn_tmap;

/* Tensor maps of q, k and v as 4-d tensors {D, S, H, B} (the [B, H, S, D]
   operand's dims, innermost first), boxes of 64 elements x the kernel's
   tile rows in the 128-byte-swizzled layout of the kernels' tiles, zeros
   outside the tensor. on = 0: the maps are not set and the kernels copy
   with cp.async. Passed as a __grid_constant__ argument, so the maps stay
   in kernel parameter space. */
typedef struct kg_attn_tmaps {
    kg_attn_tmap q, k, v;
    int32_t on;
} kg_attn_tmaps;

#endif
