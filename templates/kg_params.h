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

/* Threads per block of every element-wise kernel (the kernels'
   __launch_bounds__ and the runtime's launches). */
#define KG_EW_THREADS 256

/* Elements per thread and grid-stride step of ND32 (ND32V: half as many
   vectors): every load is issued before the first store, so a thread keeps
   several in flight. The runtime sizes those grids by it. */
#define KG_ND32_ILP 4

/* ROWS: rows each lane has a load in flight for (of the 32 rows a warp
   takes per step; one warp per 32 rows of the grid). */
#define KG_ROWS_ILP 4

/* Element-wise layout variants, in the order of gen/elementwise.lua. */
typedef enum kg_ew_variant {
    KG_EW_DENSE, /* one contiguous range, 16-byte vector loads, scalar tail */
    KG_EW_ND32,  /* any strides, 32-bit offsets, one element per thread */
    KG_EW_ND32V, /* inner dim contiguous or broadcast: a vector per thread */
    KG_EW_ND64,  /* any strides, 64-bit offsets */
    KG_EW_TILE,  /* 2-d with transposed inputs: staged through shared memory */
    KG_EW_PERM,  /* any rank, inputs whose fast dim is not the output's: tiles of that plane */
    KG_EW_PERMF, /* PERM with a short dim folded into a tile axis */
    KG_EW_ROWS,  /* any strides, 32-bit offsets: lanes along dim 0, offsets once per row */
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
    uint32_t bcast; /* ND32V: bit k set when input k's inner stride is 0;
                       ROWS: log2 of the lanes per row (2 to 5) */
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

/* PERM: tiles of T x T elements over two axes, c (the output's fast dim,
   dim 0) and j (dim J, the staged inputs' fast dim); every other dim
   ("batch") is walked by block. An axis whose dim is shorter than a tile is
   folded with one more dim: c = (dim 0, the batch dim of the next smallest
   output stride), j = (dim J, the batch dim of the next smallest stride of
   the first staged input), so short dims still fill tiles. stride[k][0] is
   operand k's stride along dim 0, stride[k][1] along J, stride[k][2 + d]
   along batch dim d (innermost first); fstride[0][k] / fstride[1][k] along
   the dim folded into c / j. Block b serves tile b % tiles_c along c,
   (b / tiles_c) % tiles_j along j, and batch index b / (tiles_c * tiles_j);
   the divisions use kg_nd32's magic numbers (tiles, n0 and nj < 2^31). */
typedef struct kg_perm {
    int64_t n0, nj; /* extents of the c and j axes (folds included) */
    uint32_t tiles, tiles_c, tiles_j;
    uint32_t magic_c, shift_c, magic_j, shift_j;
    int32_t nbatch;
    uint32_t staged; /* bit k: input k is read along J into shared memory */
    uint32_t vec_j;  /* staged inputs move N elements at a time along J */
    uint32_t vec_c;  /* the output and the direct inputs move N at a time along dim 0 */
    uint32_t fold_c, fold_j; /* 0, or the size of dim 0 / dim J within a folded axis */
    uint32_t fmagic_c, fshift_c, fmagic_j, fshift_j;
    uint32_t bsize[KG_LAYOUT_MAX_DIMS - 2];
    uint32_t bmagic[KG_LAYOUT_MAX_DIMS - 2];
    uint32_t bshift[KG_LAYOUT_MAX_DIMS - 2];
    int64_t stride[KG_EW_MAX_OPERANDS][KG_LAYOUT_MAX_DIMS];
    int64_t fstride[2][KG_EW_MAX_OPERANDS];
} kg_perm;

#endif
