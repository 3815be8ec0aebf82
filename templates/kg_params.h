/*
 * kg_params.h - kernel arguments, shared by the runtime (C) and the kernel
 * templates (CUDA C++). Shapes and strides travel by value in these structs,
 * so a launch needs no allocation and no host-to-device copy.
 *
 * Element-wise operands are numbered 0 = output, 1.. = inputs. Dimension 0 of
 * a layout is the innermost (fastest-varying) one.
 */
#ifndef KG_PARAMS_H
#define KG_PARAMS_H

#include <stdint.h>

#define KG_EW_MAX_OPERANDS 4
#define KG_LAYOUT_MAX_DIMS 8

/* Element-wise layout variants, in the order of gen/elementwise.lua. */
typedef enum kg_ew_variant {
    KG_EW_DENSE, /* one contiguous range, 16-byte vector loads, scalar tail */
    KG_EW_ND32,  /* any strides, 32-bit offsets, one element per thread */
    KG_EW_ND32V, /* inner dim contiguous or broadcast: a vector per thread */
    KG_EW_ND64,  /* any strides, 64-bit offsets */
    KG_EW_TILE,  /* 2-d with transposed inputs: staged through shared memory */
    KG_EW_VARIANT_COUNT
} kg_ew_variant;

typedef struct kg_ew_ptrs {
    void *out;
    const void *in[KG_EW_MAX_OPERANDS - 1];
} kg_ew_ptrs;

/* Division by size[d] is q = (umulhi(r, magic[d]) + r) >> shift[d], valid
   for r < 2^31 (the 32-bit variants' bound). */
typedef struct kg_nd32 {
    uint32_t n; /* elements (vectors for ND32V) */
    int32_t ndim;
    uint32_t bcast; /* ND32V: bit k set when input k's inner stride is 0 */
    uint32_t size[KG_LAYOUT_MAX_DIMS];
    uint32_t magic[KG_LAYOUT_MAX_DIMS];
    uint32_t shift[KG_LAYOUT_MAX_DIMS];
    int32_t stride[KG_EW_MAX_OPERANDS][KG_LAYOUT_MAX_DIMS];
} kg_nd32;

typedef struct kg_nd64 {
    int64_t n;
    int32_t ndim;
    uint32_t transposed; /* TILE: bit k set when input k is read through shared memory */
    int64_t size[KG_LAYOUT_MAX_DIMS];
    int64_t stride[KG_EW_MAX_OPERANDS][KG_LAYOUT_MAX_DIMS];
} kg_nd64;

#endif
