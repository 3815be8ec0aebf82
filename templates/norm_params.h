/*
 * norm_params.h - the argument of every normalization kernel, shared by the
 * runtime (runtime/norm.c, C) and the kernels (templates/norm.cuh).
 *
 * A call is coalesced on the host to rows x normalized elements. Every
 * tensor of the call is an operand with one stride per dim (0 where it does
 * not vary along that dim): the input, the output, the residual (read, then
 * written back), the weight, the bias and two per-row results (logsumexp's
 * result, or layer_norm's mean and rstd). Rows are walked through `outer`
 * (kept dims, innermost first); the normalized elements by class
 * (kg_norm_class). Everything travels by value: a launch copies nothing to
 * the device.
 */
#ifndef KG_NORM_PARAMS_H
#define KG_NORM_PARAMS_H

#include <stdint.h>

#define KG_NORM_MAX_DIMS 8
/* Threads of a block whose rows are served by lane groups of <= 32 lanes,
   and of the column kernels (32 columns x 8 lanes down). */
#define KG_NORM_THREADS 256
#define KG_NORM_COL_LANES 32
/* Vectors (16 bytes, or one element in the strided class) a lane holds per
   row per chunk: a row of up to group x KG_NORM_NV vectors stays in
   registers between the statistics and the apply; longer rows stream in
   chunks of that size and are read twice. */
#define KG_NORM_NV 8
/* ROWS: 4 for the 2-byte types (their 32 values a lane, unpacked to f32,
   fill the registers that 8 vectors of f32 do). */
#define KG_NORM_ROWS_NV(elem_bytes) ((elem_bytes) == 2 ? KG_NORM_NV / 2 : KG_NORM_NV)
/* PACKED: rows a lane group holds at once (one vector of each). 2: the
   2026-12-01 sweep ran 8 (more loads in flight, 124 registers) at 59-62% of
   copy and 2 (40-64 registers, more warps) at 79-85%. */
#define KG_NORM_PACK 2
/* Most lanes a row's group may have (one block). */
#define KG_NORM_MAX_GROUP 512
/* LEAN: most lanes of a block (a row's group, up to a block). */
#define KG_NORM_LEAN_MAX_T 1024

/* Operands, in the order of kg_norm_args.p. */
enum {
    KG_NO_IN,  /* input */
    KG_NO_OUT, /* output (element-wise ops) */
    KG_NO_RES, /* residual: read, then h = x + residual written back (fused rms_norm) */
    KG_NO_W,   /* weight (norms; 1 when absent) */
    KG_NO_B,   /* bias (layer_norm; 0 when absent) */
    KG_NO_S0,  /* first per-row result: logsumexp's value, layer_norm's mean */
    KG_NO_S1,  /* second per-row result: layer_norm's rstd */
    KG_NORM_NOPS
};

/* Kernel classes, in the order of gen/norm.lua's `classes`. */
typedef enum kg_norm_class {
    KG_NORM_ROWS,       /* one contiguous normalized run, 16-byte vectors; a lane group per row */
    KG_NORM_ROWS_RES,   /* ROWS with the fused residual (ops without one: the ROWS kernel) */
    KG_NORM_PACKED,     /* short contiguous rows of 1..32 vectors, KG_NORM_PACK rows per lane group */
    KG_NORM_STRIDED,    /* any normalized dims, element by element; a lane group per row */
    KG_NORM_COLS_STATS, /* one normalized dim across a contiguous kept dim: per-split statistics */
    KG_NORM_COLS_APPLY, /* ... then the merge of the splits' statistics and the apply */
    KG_NORM_LEAN4,      /* ROWS of one chunk, at most one outer dim: 4 vectors a lane, lean addressing */
    KG_NORM_LEAN8,      /* ... 8 vectors a lane */
    KG_NORM_LEAN4_RES,  /* LEAN4 with the fused residual, <= 512 lanes, 128 registers (ops without one:
                           LEAN4) */
    KG_NORM_LEAN8_RES,  /* LEAN8 with the fused residual, <= 512 lanes, 128 registers (ops without one:
                           LEAN8) */
    KG_NORM_LEAN4L,     /* LEAN4 for <= 512 lanes: 128 registers, no spills (the LOOSE tuning) */
    KG_NORM_LEAN8L,     /* LEAN8 for <= 512 lanes: 128 registers */
    /* variants of LEAN for the norms (tunings; gen/norm.lua's `variant`; elsewhere the base class) */
    KG_NORM_LEAN8C,     /* LEAN8 with streaming cache hints on the row; the 2-byte types in 80 registers
                           (<= 768 lanes), their layer_norm by kg_nmoments over fresh opaque copies */
    KG_NORM_LEAN8S,     /* 2-byte layer_norm: LEAN8C by two group sums */
    KG_NORM_LEANU4,     /* contiguous rows 16-byte vectors do not tile: masked vectors, 4 a lane (not f64) */
    KG_NORM_LEANU8,     /* ... 8 a lane */
    KG_NORM_LEANU4_RES, /* LEANU4 with the fused residual, <= 512 lanes, 128 registers (ops without one:
                           LEANU4) */
    KG_NORM_LEANU4S,     /* LEANU4 whose folds take whole vectors (the ends replaced once), sums' exps
                            flushed below 2^-126 */
    KG_NORM_LEANU8S,     /* ... 8 a lane */
    KG_NORM_LEANU4S_RES, /* LEANU4S with the fused residual (ops without one: LEANU4S) */
    KG_NORM_LEAN4F,      /* 2-byte lse ops: LEAN4 with the sum's exps flushed below 2^-126 (elsewhere LEAN4) */
    KG_NORM_LEAN8F,      /* ... LEAN8 in 80 registers (elsewhere LEAN8) */
    KG_NORM_LEAN4_RESC,  /* LEAN4_RES with streaming cache hints on the input and output (ops without the
                            residual form: LEAN4) */
    KG_NORM_LEANW8,      /* LEAN over 4-byte words (rows 16-byte vectors do not tile, but 4-byte words do:
                            f32, the 2-byte types of even length): 8 words a lane (not f64) */
    KG_NORM_LEANW16,     /* ... 16 words a lane */
    KG_NORM_LEANW8_RES,  /* LEANW8 with the fused residual, <= 512 lanes (ops without one: LEANW8) */
    KG_NORM_COLSV_STATS8, /* COLSV (softmax, log_softmax of f32, f16, bf16; templates/norm.cuh): COLS over 8-byte */
    KG_NORM_COLSV_APPLY8, /* vectors of columns; the plan's class is the stats kernel's */
    /* the group's next row loaded before this row's statistics (elsewhere the base class) */
    KG_NORM_LEAN4P,     /* LEAN4 with the next row prefetched, 80 registers: the f32 norms, the 2-byte rms_norm */
    KG_NORM_LEAN8P,     /* LEAN8 with the next row prefetched, <= 512 lanes, 128 registers: the f32 norms */
    KG_NORM_LEAN16,     /* the 2-byte norms: 16 vectors a lane, <= 512 lanes, 102 registers (elsewhere never
                           planned: LEAN8's kernel) */
    KG_NORM_LEAN2,      /* the 2-byte rows of 32 elements at 2 lanes a row: LEAN4 (the lse ops: LEAN4F) with 2
                           vectors a lane, 32 registers, blocks of 128 (elsewhere LEAN4F's kernel) */
    KG_NORM_LEAN2E,     /* LEAN2 of the 2-byte softmax with the sum's exps kept for the apply (elsewhere LEAN2) */
    KG_NORM_LEAN2R,     /* LEAN2 with two rows a lane group at once, 40 registers (the 2-byte types; elsewhere
                           LEAN2's kernel) */
    KG_NORM_CLASS_COUNT
} kg_norm_class;

/* Division of r < 2^31 by size: q = (umulhi(r, magic) + r) >> shift. */
typedef struct kg_norm_dims {
    int32_t n;
    uint32_t magic[KG_NORM_MAX_DIMS];
    uint32_t shift[KG_NORM_MAX_DIMS];
    int64_t size[KG_NORM_MAX_DIMS];
    int64_t st[KG_NORM_MAX_DIMS][KG_NORM_NOPS]; /* each operand's stride, in elements */
} kg_norm_dims;

typedef struct kg_norm_args {
    void *p[KG_NORM_NOPS]; /* operand pointers, NULL where absent */
    void *partial;         /* COLS: scratch for the splits' statistics */
    int64_t rows;          /* rows (COLS: positions of the outer dims) */
    int64_t n;             /* normalized elements per row */
    int32_t group;         /* lanes per row: 1..32 within a warp, or the block (64..1024) */
    int32_t nv;            /* vectors per lane per chunk (1..KG_NORM_NV) */
    int32_t fast;          /* 1: the outer divmods may use magic numbers */
    int32_t opt;           /* option bits for tunings (CLUSTER PH: bit 0, its halves start together) */
    double eps;
    kg_norm_dims outer; /* kept dims (COLS: without the column dim) */
    kg_norm_dims inner; /* normalized dims (STRIDED, COLS: one dim) */
    /* COLS */
    int64_t cols;              /* size of the contiguous kept dim */
    int64_t cst[KG_NORM_NOPS]; /* strides along it */
    int64_t tiles;             /* column tiles per outer position */
    int64_t splits;            /* slices of the normalized dim per tile */
    int64_t chunk;             /* normalized elements per slice */
    int64_t units;             /* outer positions x tiles x splits */
} kg_norm_args;

#endif
