/*
 * kg_reduce_params.h - the argument of every reduction kernel, shared by the
 * runtime (runtime/reduce.c, C) and the kernels (templates/reduce.cuh).
 *
 * A call is coalesced on the host to outputs x reduced elements. The
 * outputs are walked through `outer` (kept dims, innermost first, with the
 * input's, the values' and the indices' strides); the reduced elements by
 * class (kg_red_class): one contiguous run (ROWS, PACKED), up to
 * KG_RED_WALK_DIMS reduced dims under a contiguous kept run of columns
 * (COLS), up to KG_RED_WALK_DIMS reduced dims innermost (NEST), or any set of
 * dims (STRIDED). Reduced dims of index reductions stay in logical order, so
 * that an element's index is its position in the walk. Everything travels by
 * value: a launch copies nothing to the device.
 */
#ifndef KG_REDUCE_PARAMS_H
#define KG_REDUCE_PARAMS_H

#include <stdint.h>

#define KG_RED_MAX_DIMS 8
#define KG_RED_THREADS 256
/* Blocks of KG_RED_THREADS every reduction kernel fits on a multiprocessor
   at once (its launch bound: at most 64 registers a thread); the planner
   sizes its waves by it. */
#define KG_RED_MIN_BLOCKS 4
/* The same for the walking classes (COLS, NEST): their eight loads in flight
   and the walk's digits take up to 128 registers a thread. */
#define KG_RED_WALK_MIN_BLOCKS 2
/* The same for the narrow walks (COLSN, NESTN): at most 80 registers (64
   spilled on sm_90). */
#define KG_RED_NARROW_MIN_BLOCKS 3
/* The walking classes at more blocks per multiprocessor (COLSO, NESTO:
   at most 64 registers a thread, 4 loads in flight per lane and 32-bit walk
   arithmetic; COLSP: at most 80 registers, 8 loads): more warps to cover
   the latency of the per-unit work (outer divisions, the tree, the split
   combine) beside the loads. */
#define KG_RED_OCC_MIN_BLOCKS 4
#define KG_RED_OCC_UNROLL 4
#define KG_RED_OCC3_MIN_BLOCKS 3
#define KG_RED_OCC3_UNROLL 8
#define KG_RED_OCCN_UNROLL 8
/* TILE: elements of one tile in shared memory (whole rows of the run), and
   the kernel's blocks per multiprocessor. */
#define KG_RED_TILE_ELEMS 4096
#define KG_RED_TILE_MIN_BLOCKS 3
/* Counters at the start of the context's scratch: one per output group
   whose reduction is split across blocks (see templates/reduce.cuh). */
#define KG_RED_MAX_SEMAPHORES 16384
/* PACKED: rows each lane takes a vector of per warp unit (the loads it
   keeps in flight). */
#define KG_RED_PACK 8
/* COLS: how a lane's columns move (kg_red_args.vec). */
typedef enum kg_red_cols_mode {
    KG_RED_CV_SCALAR,  /* one column per lane */
    KG_RED_CV_VEC,     /* Op::cvec adjacent columns, one vector load (16 bytes, 8 for 2-byte elements) */
    KG_RED_CV_WIDE,    /* 2-byte elements: 8 adjacent columns, one 16-byte load */
    KG_RED_CV_STRIDED, /* KG_RED_SCOLS columns cw apart, one load each (columns of any alignment) */
    KG_RED_CV_WIDE32,  /* as KG_RED_CV_WIDE, the loads kept as 32-bit words until every load of a batch is in
                          flight (WIDE's elements are split into 16-bit registers right at each load, which
                          makes each load wait for the one before) */
    KG_RED_CV_VEC32,   /* as KG_RED_CV_VEC for 2-byte elements (4 columns, 8 bytes), as 32-bit words */
} kg_red_cols_mode;
#define KG_RED_SCOLS 4
/* FLAT: most columns (a lane combines up to KG_RED_FLAT_COLS / 256 of them
   at the end) and the 16-byte loads a lane keeps in flight. */
#define KG_RED_FLAT_COLS 1024
#define KG_RED_FLAT_UNROLL 8
/* FLAT: blocks per multiprocessor (the kernel's launch bound: at most 80
   registers, eight 16-byte loads in flight without spilling) */
#define KG_RED_FLAT_MIN_BLOCKS 3
/* FLATWO: FLATW at KG_RED_OCC_MIN_BLOCKS (at most 64 registers), this many
   16-byte loads in flight per lane (2-byte elements: two thirds of it) */
#define KG_RED_FLATWO_UNROLL 6
/* COLSQ: rows of the two tiles' vectors a lane keeps in flight (2-byte elements, in 16-byte vectors: half
   of it) */
#define KG_RED_COLSQ_UNROLL 4
/* RUNT (templates/reduce_runt.cuh): blocks per multiprocessor (at most 80
   registers) and the bytes of loads a lane keeps in flight (4 vectors of
   16 bytes, 8 of 8, 16 words of 4: 48 KB a multiprocessor) */
#define KG_RED_RUNT_MIN_BLOCKS 3
#define KG_RED_RUNT_BYTES 64
/* SEGW: bytes of a warp's chunk buffer in shared memory (8 warps: 48 KB) */
#define KG_RED_SEGW_BYTES 6144

/* SLAB: most bytes of a tile, most outputs a thread holds, the stages of
   the cp.async ring, and the kernel's blocks per multiprocessor. */
#define KG_RED_SLAB_BYTES 8192
#define KG_RED_SLAB_OUTS 8
#define KG_RED_SLAB_STAGES 3
#define KG_RED_SLAB_MIN_BLOCKS 4
/* TRANS: outputs a tile has along each side, and the walk positions whose
   loads a thread issues together */
#define KG_RED_TRANS_TILE 32
#define KG_RED_TRANS_UNROLL 4
/* TRANSV (tuning trans_vec, templates/reduce_transv.cuh): 16-byte vectors a
   row of a tile covers (a tile's ki side: that many vectors of 2-byte
   elements, 248), its ko rows, the walk positions of two rows whose loads a
   lane issues together (3: 6 vectors, 96 bytes a lane; a walk of 5 in two
   batches, 6 and 4), the most walk positions an output takes (their
   offsets in shared memory), and the kernel's blocks per multiprocessor (at
   most 80 registers) */
#define KG_RED_TRANSV_VECS 31
#define KG_RED_TRANSV_ROWS 32
#define KG_RED_TRANSV_UNROLL 3
#define KG_RED_TRANSV_POS 16
#define KG_RED_TRANSV_MIN_BLOCKS 3

/* Reduced dims a walk (COLS, NEST) steps through without division. */
#define KG_RED_WALK_DIMS 4

/* Kernel classes, in the order of gen/reduce.lua's `classes`. */
typedef enum kg_red_class {
    KG_RED_ROWS,      /* reduced elements contiguous (inner == 1); also the full reduction */
    KG_RED_COLS,      /* one reduced dim across rows; lanes own contiguous output columns */
    KG_RED_STRIDED32, /* any reduced dims, 32-bit offsets and fast divmod */
    KG_RED_STRIDED64, /* any reduced dims, 64-bit offsets */
    KG_RED_PACKED,    /* short dense rows of 8, 16 or 32 vectors, several rows per warp load */
    KG_RED_NEST,      /* reduced dims innermost (a walk, in vectors where the inner run allows) */
    KG_RED_COLSN,     /* kernels only: COLS and NEST plans with args.deep (narrow walks, 16 loads in */
    KG_RED_NESTN,     /* flight, 32-bit walk arithmetic, KG_RED_NARROW_MIN_BLOCKS); no plan has these classes */
    KG_RED_TILE,      /* short reduced runs (run) innermost under a dense kept dim: tiles of whole rows staged
                         through shared memory, further reduced dims walked outside */
    KG_RED_FLAT,      /* value reductions of short contiguous rows (the one reduced dim right outside at most
                         KG_RED_FLAT_COLS contiguous columns): a unit streams its rows as one flat run of
                         16-byte vectors, each lane's elements always in the same columns (cw: lanes per
                         period, inner / gcd(inner, Op::vec)); KG_RED_FLAT_MIN_BLOCKS */
    KG_RED_COLSO,     /* kernels only (kg_red_plan.occ): COLS at KG_RED_OCC_MIN_BLOCKS, KG_RED_OCC_UNROLL loads */
    KG_RED_COLSP,     /* COLS at KG_RED_OCC3_MIN_BLOCKS, KG_RED_OCC3_UNROLL loads in flight per lane */
    KG_RED_NESTO,     /* NEST at KG_RED_OCC_MIN_BLOCKS, KG_RED_OCC_UNROLL loads */
    KG_RED_COLSNO,    /* COLSN (narrow walks) at KG_RED_OCC_MIN_BLOCKS, KG_RED_OCCN_UNROLL loads */
    KG_RED_NESTNO,    /* NESTN the same. All five: value reductions whose walk fits 32-bit arithmetic (the index
                         reductions' kernels are empty) */
    KG_RED_FLATW,     /* kernels only: FLAT plans with args.group 32 (one warp per unit: many short slabs, no
                         splits; templates/reduce_flatw.cuh) */
    KG_RED_SLAB,      /* value reductions of elements of at most 4 bytes whose one reduced dim of args.run rows
                         lies right outside args.cw <= KG_RED_THREADS contiguous kept columns, the [run, cw] slabs
                         dense along outer dim 0: tiles of whole slabs staged in shared memory by cp.async
                         (templates/reduce_slab.cuh) */
    KG_RED_TRANS,     /* value reductions of elements of at most 4 bytes whose outputs are scattered in the input's
                         order: tiles of KG_RED_TRANS_TILE input-contiguous outputs x KG_RED_TRANS_TILE
                         output-contiguous ones, reduced one lane per output and written through shared
                         memory (templates/reduce_trans.cuh) */
    KG_RED_FLATWO,    /* kernels only (kg_red_plan.occ 4 on a FLATW plan): FLATW at KG_RED_OCC_MIN_BLOCKS, every warp
                         of a grid of one wave resident at once */
    KG_RED_COLSQ,     /* kernels only: COLS plans with args.group 2 (two column tiles per unit, one lane down each
                         column, unsplit, KG_RED_COLSQ_UNROLL rows of both tiles' vectors in flight) at
                         KG_RED_OCC_MIN_BLOCKS; value reductions whose walk fits 32-bit arithmetic */
    KG_RED_RUNT,      /* value reductions of elements of 2 to 8 bytes: COLS over a short reduced run of any length
                         A.run under A.inner columns, tiles of A.tile_rows columns (whole vectors of A.vec bytes,
                         A.cw lanes across, any count) streamed row after row, each lane's elements folded into
                         their columns at the end (templates/reduce_runt.cuh; tuning run_tiles) */
    KG_RED_SEGW,      /* value reductions of elements of 2 to 8 bytes: short dense rows of A.run elements (one kept
                         dim) as one stream, a chunk of A.tile_rows rows a warp staged in shared memory by cp.async,
                         each lane summing rows (templates/reduce_runt.cuh; tuning seg_rows) */
    KG_RED_TRANSV,    /* kernels only: TRANS plans of bf16 and f16 elements with args.vec 1 (trans_vec, trans_vec_f16):
                         the input-contiguous side of a tile read in KG_RED_TRANSV_VECS aligned 16-byte vectors a row,
                         each at 16, 8 or 4 bytes as its address allows (modules red_bf16_transv and red_f16_transv) */
    KG_RED_FLATWR,    /* kernels only: FLATW plans with args.vec 1 (tuning flatw_ragged): blocks whose starts are
                         whole periods but not whole vectors, read in the aligned vectors that cover them
                         (templates/reduce_flatw.cuh, mode 2) at KG_RED_FLAT_MIN_BLOCKS (no spills), flatwo's
                         loads in flight; modules red_<dt>_flatwr of bf16, f16, f32 and i32 only, value ops only */
    KG_RED_CLASS_COUNT
} kg_red_class;

/* Division of r < 2^31 by size: q = (umulhi(r, magic) + r) >> shift. */
typedef struct kg_red_dims {
    int32_t n;
    uint32_t magic[KG_RED_MAX_DIMS];
    uint32_t shift[KG_RED_MAX_DIMS];
    int64_t size[KG_RED_MAX_DIMS];
    int64_t in[KG_RED_MAX_DIMS];  /* input strides */
    int64_t out[KG_RED_MAX_DIMS]; /* values' strides (outer dims only) */
    int64_t idx[KG_RED_MAX_DIMS]; /* indices' strides (outer dims only) */
} kg_red_dims;

/* A walk over the positions of up to KG_RED_WALK_DIMS reduced dims,
   innermost first: position r has digits r = x0 + size0 * (x1 + size1 * ...)
   and input offset sum x_d * in_d. A lane starts at one position (divisions,
   once) and then advances by a fixed step, added digit by digit with
   carries (no division); the last digit never wraps. NEST walks vectors:
   dim 0's size and stride count vectors of the inner run. */
typedef struct kg_red_walk {
    int32_t n;                      /* dims (>= 1) */
    int32_t hi;                     /* 1: the step has digits past the first */
    int64_t size[KG_RED_WALK_DIMS]; /* positions per dim */
    int64_t in[KG_RED_WALK_DIMS];   /* input stride per position, elements */
    int64_t step[KG_RED_WALK_DIMS]; /* the step's digits (the last one: the rest) */
} kg_red_walk;

typedef struct kg_red_args {
    void *out;    /* values, or NULL (argmax without values) */
    int64_t *idx; /* indices, or NULL */
    const void *in;
    void *partial;        /* scratch: split partial results (accumulators) */
    int64_t *partial_idx; /* scratch: their indices (index reductions) */
    unsigned *sema;       /* scratch: zeroed counters, left zeroed */
    int64_t n_out;        /* outputs (ROWS, STRIDED) or outer positions (COLS) */
    int64_t red;          /* reduced elements per output */
    int64_t chunk;        /* reduced elements per split */
    int64_t units;        /* work units: groups x splits */
    int32_t splits;       /* blocks sharing one output group (1: no scratch) */
    int32_t group;        /* lanes per unit: 1..32, or KG_RED_THREADS (a block); PACKED: lanes
                             per row (8, 16, 32), a unit is a warp's 32 / group * KG_RED_PACK rows;
                             COLS: 0, or 2: two column tiles per unit (kernel COLSQ) */
    int32_t fast;         /* 1: the outer (and reduced) divmods may use magic numbers */
    /* COLS */
    int32_t cw;        /* lanes across columns (power of two <= KG_RED_THREADS); FLAT: lanes per period; NEST
                          with group 1: outputs per lane (4: their loads interleaved; else one) */
    int32_t vec;       /* NEST: 1: the inner run moves in vectors (2: vectors of 2-byte elements loaded as
                          32-bit words, as KG_RED_CV_WIDE32); COLS: a kg_red_cols_mode */
    int32_t deep;      /* COLS, NEST without vectors: 16 loads in flight, 32-bit walk arithmetic (every
                          digit and offset of the walk, past the end by a step too, below 2^31) */
    int64_t inner;     /* columns (the contiguous kept dim) */
    int64_t run;       /* COLS: contiguous reduced elements per column and row (> 1: a short reduced run
                          innermost, the columns right outside it; the walk counts runs) */
    int64_t tiles;     /* column tiles (COLS) or row tiles (TILE) per outer position */
    int64_t tile_rows; /* TILE: rows (of `run` elements) per tile; COLS runs in vectors (run > 1, vec not
                          KG_RED_CV_SCALAR): 0 or 1, or the kept width under the run (cols_runs_kept) */
    int64_t inner_out; /* values' stride along the columns */
    int64_t inner_idx; /* indices' stride along the columns */
    kg_red_dims outer; /* kept dims (COLS: without the columns) */
    kg_red_dims rdims; /* STRIDED: reduced dims, innermost first */
    kg_red_walk walk;  /* COLS, NEST: the reduced dims' walk */
    int32_t vstore;    /* COLS in vector modes (KG_RED_CV_VEC, _WIDE, _WIDE32, _VEC32), value reductions: 1: a
                          lane's adjacent results stored as one vector (the values contiguous along the columns,
                          every vector's place aligned to its size) */
    /* TRANS (templates/reduce_trans.cuh; runtime/reduce_plan.c plan_trans) reads: inner = the
       input-contiguous (ki) outputs, rdims their dims (values strides in rdims.out), tiles = ki tiles,
       tile_rows = the output-contiguous (ko) outputs, inner_out / inner_idx = the ko dim's values / input
       stride; with trans_run, cw = the reduced run under the ki side; with trans_ko2, vstore = the ko
       side's first dim size and run = its second dim's input stride. */
} kg_red_args;

#endif
