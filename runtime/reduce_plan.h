/*
 * reduce_plan.h - how a reduction call becomes one kernel launch (reduce.c).
 * Pure host code, so the axis logic, the coalescing and the class choice are
 * tested on machines without a GPU.
 */
#ifndef KG_REDUCE_PLAN_H
#define KG_REDUCE_PLAN_H

#include "internal.h"
#include "kg_reduce.h"
#include "kg_reduce_params.h"
#include "kg_red_stripes.h"

/* Bytes of split partial results a plan may use after the counters. */
#define KG_RED_PARTIAL_BYTES ((size_t)4 << 20)
/* The most elements an output may reduce in a class whose thread sums all of
   them into one accumulator, in order (SLAB, TRANS: no tree, no splits),
   whatever the tuning. A sequential f32 sum of n terms of one sign has a
   relative error of about eps sqrt(n) / 6 (one standard deviation), so
   tests/TESTING.md's 16 eps of the float64 reference holds with room at 1024
   (5.3 eps; the default SLAB plans reach it: 8 rows x 128 walk positions),
   and not at 11,730 (18 eps: the forced SLAB plan of norm f32 (7,255,6,2,23,2)
   axes (1,3,4) was off by 2.5e-6 against a 1.9e-6 bound, session 42). */
#define KG_RED_CHAIN_MAX 1024

typedef struct kg_red_plan {
    kg_red_class cls;
    int empty;    /* the result has no elements: nothing to launch */
    int out_ndim; /* the result's shape */
    int64_t out_shape[KG_MAX_DIMS];
    kg_red_args args;      /* everything but the pointers */
    unsigned grid;         /* blocks of KG_RED_THREADS */
    size_t partial_bytes;  /* scratch after the counters (0: none) */
    size_t partial_idx_at; /* offset of the partial indices in that space */
    int occ;               /* COLS, NEST: 0, or the kernel at more blocks per multiprocessor (4: COLSO / NESTO,
                              or COLSNO / NESTNO where args.deep, 3: COLSP, also every COLS plan of runs in
                              vectors, cols_runs_vec; kg_reduce_params.h) */
} kg_red_plan;

/* The planner's tunable choices; kg_red_tuning_default is what kg_reduce
   uses. Other values are for the benchmark's sweeps and the tests. */
typedef struct kg_red_tuning {
    int cols_lanes;                  /* COLS: most lanes across columns (power of two, 32..KG_RED_THREADS) */
    int cols_split_lanes;            /* COLS: most lanes across columns when the reduced dim is split */
    int cols_split_units_per_sm;     /* COLS split: units per multiprocessor aimed at */
    int cols_split_units_per_sm_vec; /* the same where the columns move in vectors (0: as above) */
    int cols_split_pow2;             /* COLS split: the split count rounded down to a power of two */
    int pack_rows;                   /* the PACKED class for short dense rows where the shape allows */
    int packed_blocks_per_sm;        /* PACKED: blocks per multiprocessor in the grid */
    int rows_group;                  /* ROWS: lanes per row (0: by the row's length) */
    int blocks_per_sm;               /* every other class: most blocks per multiprocessor in the grid */
    int splits;                      /* split count (0: by the planner) */
    int cols_runs;                   /* COLS over short reduced runs innermost (the run path of reduce.cuh):
                                        off by default until it has been measured and tested on a GPU */
    int deep_walk;                   /* narrow walks (kg_red_args.deep: 16 loads in flight, 32-bit walk arithmetic
                                        where the walk fits): 1: NEST, and COLS of 1- and 2-byte elements; 2: also
                                        COLS of wider elements */
    int tile;                        /* TILE for short reduced runs under a dense kept dim (rows of at most
                                        tile_max_bytes), where the tile holds at least tile_min_elems elements:
                                        1: value reductions, 2: index reductions too */
    int tile_max_bytes;
    int tile_min_elems;
    int tile_min_es;   /* TILE only over elements of at least this many bytes (0: any) */
    int cols_wide;         /* COLS of 2-byte elements: 8 adjacent columns per 16-byte load where aligned */
    int cols_strided;      /* COLS without vectors: KG_RED_SCOLS columns per lane, cw apart */
    int split_waves;       /* ROWS, NEST, STRIDED split across blocks: at most this many waves of the kernel's
                              resident blocks (0: about 2 x BLOCKS_PER_SM units per multiprocessor, as before) */
    int tile_banks;        /* TILE: the fewest lanes per row that read shared memory without bank conflicts
                              (0: half the row, at most 32) */
    int cols_fit;          /* COLS: narrower column tiles where one tile would leave lanes idle */
    int flat;              /* COLS mode FLAT for value reductions of short rows (the reduced dim right outside
                              at most KG_RED_FLAT_COLS columns, elements of 2 bytes or more) */
    int flat_units_per_sm; /* FLAT: units (outer positions x splits) per multiprocessor aimed at */
    int flat_partials;     /* FLAT: most split partials per outer position (splits x columns) the last
                              block folds */
    int flat_min_elems;    /* FLAT: fewest elements per split */
    int flat_min_outer;    /* FLAT: fewest elements per outer position (rows x columns) */
    int flat_min_pct;      /* FLAT: fewest units, in percent of the multiprocessors (4- and 8-byte elements) */
    int flat_min_pct2;     /* the same for 2-byte elements */
    int flat_words;        /* FLAT of 2-byte elements: the 16-byte vectors loaded as 32-bit words (args.vstore 1,
                              templates/reduce_flat_words.cuh) */
    int flat_fill;         /* FLAT plans of fewer units than flat_fill percent of the multiprocessors (only
                              2-byte plans, flat_min_pct2 25, are taken under 100): more splits, up to
                              flat_fill_to percent of them in units, past flat_partials; the class and every
                              other field as planned; 0: off. Default 75 (with flat_fill_to 100) since session
                              35's H100 round s35r3: 4 rows geomean x1.131, #331 x1.20, #136 x1.03 */
    int flat_fill_to;      /* (with flat_fill) the units aimed at, percent of the multiprocessors; 0: flat_fill */
    int cols_words;        /* COLS of 2-byte elements in 16-byte vectors: mode KG_RED_CV_WIDE32 (the loads kept as
                              32-bit words until the batch is in flight) instead of KG_RED_CV_WIDE, and
                              KG_RED_CV_VEC32 instead of KG_RED_CV_VEC */
    int nest_words;        /* NEST of 2-byte elements in vectors: loaded as 32-bit words (args.vec 2) */
    int nest_multi;        /* NEST with one lane per output: 4 outputs per lane (args.cw), their loads
                              interleaved, where the outputs fill the GPU that way (other values: one) */
    int nest_multi_lanes;  /* nest_multi only where the outputs give each multiprocessor this many such lanes */
    int nest_g1_items;     /* NEST: one lane per output where an output has at most this many walk positions,
                              the outputs are contiguous in the input and nest_multi applies (0: by lanes_for
                              alone) */
    int cols_min_cols;     /* COLS that move in no vector only over at least this many columns (fewer: NEST's
                              lanes of several outputs where those apply; 0: any) */
    int rows_multi;        /* contiguous reduced rows of at most this many elements: NEST's lanes of several
                              outputs (one lane per row) where those apply (0: ROWS) */
    int cols_occ;          /* COLS (value reductions, no narrow walk, the walk in 32-bit arithmetic): the kernel
                              at 4 (COLSO) or 3 (COLSP) blocks per multiprocessor (0: KG_RED_WALK_MIN_BLOCKS) */
    int cols_occ_blocks;   /* cols_occ only where the grid holds more than this many blocks per multiprocessor */
    int cols_occ_wide;     /* cols_occ also for strided columns (KG_RED_CV_STRIDED) of 8-byte accumulators */
    int nest_occ;          /* NEST the same: 4 (NESTO) or 0 */
    int narrow_occ;        /* the narrow walks (COLS, NEST with args.deep; value reductions): 4 (COLSNO, NESTNO) or
                              0 (KG_RED_NARROW_MIN_BLOCKS) */
    int nest_cover;        /* NEST value reductions over contiguous runs that cannot move in whole vectors (a
                              length not a multiple of the vector, or misaligned starts): each run in the aligned
                              16-byte vectors that cover it (args.vec KG_RED_NEST_COVER, templates/reduce_cover.cuh),
                              where nest_occ is 4 and the covering walk fits 32-bit arithmetic; 0: one element per
                              load (the narrow walk) */
    int nest_cover_min;    /* nest_cover only over runs of at least this many elements (0: one vector's worth) */
    int nest_cover_rows;   /* nest_cover also over short contiguous rows that take NEST's lanes of several outputs
                              (rows_multi) */
    int nest_cover_whole;  /* nest_cover: vectors wholly inside their run pushed without a test per element (args.cw
                              1; the same bits), where a run holds at least nest_cover_whole_bytes bytes of
                              elements of at least nest_cover_whole_es bytes */
    int nest_cover_whole_bytes;
    int nest_cover_whole_es;
    int nest_cover_occ;  /* nest_cover in the kernel at 4 blocks per multiprocessor (NESTO, 4 loads in flight per
                            lane; needs nest_occ 4), 0: in the 2-block kernel (NEST, 8 loads) */
    int cols_split_fill; /* COLS split: splits so that the units fill this many waves of the kernel's resident
                            blocks (no power of two; at most 16 x lanes down a tile, so that the last block's
                            combine reads at most 8 rounds of partials; 0: cols_split_units_per_sm) */
    int cols_split_few;  /* with cols_split_fill: split tiles of this many lanes across where the fill would cut
                            more than 8 x lanes-down splits at the tile width chosen before (few tiles over a
                            long reduction: more lanes down, more splits; 0: off) */
    int cols_runs_fill_grid; /* 1: COLS plans over column runs (args.run > 1 over reduced rdims) split as with
                                cols_split_fill 0 where the fill's splits would give fewer blocks than
                                multiprocessors (a tile 256 lanes wide: 16 splits at most); 0: off. Session
                                46 (H100, one process, best of 2): its plans on the 112 draws of 100,000 it
                                changes x2.620 geomean over the default, but #50486 [2048,8,128,2,2,2] axes
                                (0,2,3,4) i32 x0.769 (grid 128 -> 512), so off */
    int flat_warp;       /* (with flat) FLAT with one warp per unit (kernel FLATW, args.group 32, no splits; 1: slabs of
                            rows x columns, 2: also of runs under the columns and blocks at a stride) where a period of
                            the columns fits a warp, an outer position holds flat_warp_min to flat_warp_max elements
                            and there are at least flat_warp_units outer positions per multiprocessor */
    int flat_warp_min;
    int flat_warp_max;
    int flat_warp_units;
    int flat_warp_run; /* flat_warp: most bytes of the reduced run under the columns (a run within a vector) */
    int flat_warp_occ; /* flat_warp: 4: the kernel at 4 blocks per multiprocessor (FLATWO, kg_reduce_params.h; 0:
                          FLATW at KG_RED_FLAT_MIN_BLOCKS) */
    int cols_runs_es;  /* cols_runs only over elements of at most this many bytes (0: any) */
    int slab;          /* SLAB (value reductions of a reduced dim right outside at most slab_max_cols contiguous
                          kept columns, the slabs dense along the next kept dim; the columns one kept dim or
                          several whose input strides chain, in args.rdims) where FLAT does not apply and the
                          tiles give each multiprocessor slab_min_units units */
    int slab_max_cols;
    int slab_min_units;
    int slab_es;       /* slab: only over elements of this many bytes (0: any up to 4) */
    int slab_max_rows; /* slab: most rows of a slab (its reduced dim) */
    int slab_bytes;    /* slab: most bytes of a tile (at most KG_RED_SLAB_BYTES) */
    int trans;         /* TRANS (value reductions whose outputs lie scattered in the input's order) where the plan
                          would be NEST's, both sides of the tiles hold trans_min_side outputs and the tiles give
                          each multiprocessor trans_min_units units; in its args: rdims the input-contiguous kept
                          dims, inner their outputs, tiles their tiles, tile_rows the output-contiguous dim's
                          size, inner_out / inner_idx its values / input stride */
    int trans_min_units;
    int trans_min_side;
    int trans_max_red; /* trans: most walk positions (reduced elements) an output takes */
    int cols_vstore;   /* COLS in vector modes, value reductions: each lane's adjacent results as one vector store
                          where the values are contiguous along the columns and every vector's place is aligned
                          (args.vstore); 1: elements of 2 bytes, 2: every size */
    int cols_pair;     /* COLS plans of the 4-block kernel (COLSO) in vectors (KG_RED_CV_VEC, or KG_RED_CV_WIDE32),
                          one lane down each column, unsplit, over at most cols_pair_rows reduced rows and at least
                          two column tiles: two tiles per unit (args.group 2, kernel COLSQ); 1: not where those
                          units would fill one wave of resident blocks and part of a second, 2: there too */
    int cols_pair_rows;
    int cols_runs_nest_vec; /* cols_runs not where NEST would move the reduced run in 16-byte vectors (a run of
                               whole vectors, every start aligned): NEST takes those */
    int cols_runs_vec;      /* COLS over short reduced runs in 16-byte vectors (value reductions, elements of 2
                               bytes (with cols_words) to 8, a run dividing the vector, rows of whole vectors):
                               the columns x run elements of a row as one contiguous run of vectors, each run's
                               accumulators folded at the end (templates/reduce_cols_runs.cuh, the colsp kernel:
                               plan occ 3) */
    int tile_vec;           /* TILE not where cols_runs_vec takes the plan */
    int cols_chain;         /* COLS columns over the contiguous kept dim K[0] and the kept dims whose input strides
                               chain with it though their results' do not (results scattered by each column's
                               digits, args.rdims), where K[0] holds fewer than this many bytes (0: off) */
    int cols_chain_red;     /* cols_chain only where an output reduces at least this many bytes */
    int nest_multi_plain;   /* NEST lanes of several outputs (nest_multi) of value reductions in the plain walk, in the
                               4-block kernel with nest_occ (elsewhere the narrow walk, args.deep, with deep_walk): 1:
                               every element size, 2: 2-byte elements only, 0: none */
    int cols_runs_plain;    /* COLS column runs (args.run > 1, one element per load) of value reductions in the plain
                               walk, cols_occ's kernels (0: the narrow walk with deep_walk) */
    int cols_runs_kept;     /* cols_runs_vec also where a short contiguous kept dim lies under the run (rows of
                               periods of kept x run elements, args.tile_rows the kept width; 2- and 4-byte
                               elements) */
    int flatw_kept;         /* (with flat) FLATW over packed rows of interleaved outputs (value reductions, 2- to
                               8-byte elements): rows of 8, 16 or 32 16-byte vectors, each a reduced run of L
                               elements with a contiguous kept dim of 2 or 4 (dividing the vector) innermost under
                               it, every row right after the one before (args.tile_rows the kept width,
                               templates/reduce_flatw.cuh, kg_red_flatw_kept; the flatw kernel) */
    int cols_runs_fold;     /* cols_runs_vec also where the period of a contiguous kept dim (kw >= 2) under the reduced
                               run is wider than a vector: the period (times the kept dim right outside at its stride)
                               as one tile of columns in vectors, each result folding its run's columns across the
                               tile's lanes at the end (args.rdims the kept digits; reduce_cols_runs.cuh) */
    int run_tiles;          /* RUNT (value reductions, templates/reduce_runt.cuh): 1: the COLS plans of a short reduced
                               run read one element per load (the scalar run path) take tiles of the rows' columns x
                               run elements in whole vectors instead (the widest whole aligned vectors the rows and
                               every start allow, down to one element a lane); 2: ahead of the other classes,
                               wherever a short run (at most 64 bytes) lies right under the columns; 2-byte elements
                               only (4- and 8-byte ones lost in session 25's round: not built); 0: off. Default 1 (with run_tiles_vb_min 4) since session 25's H200 round */
    int run_tiles_vb;       /* RUNT: most bytes per load (16, 8, 4 or 2; the widest the alignment allows) */
    int run_tiles_vb_min;   /* RUNT: fewest bytes per load it takes (4 by default: one 2-byte element a lane lost to
                               COLS's run path in session 25's round, #54 and #89 1.44-1.77x main's time) */
    int run_tiles_units;    /* RUNT: units (tiles x splits) per multiprocessor aimed at where the tiles are fewer */
    int seg_rows;           /* SEGW (value reductions, templates/reduce_runt.cuh): 1: short dense rows (one reduced
                               dim of stride 1 under one kept dim, the input dense and aligned, elements of 2 to 8
                               bytes) whose chunk of lcm(512, row bytes) fits KG_RED_SEGW_BYTES, ahead of the other
                               classes: a warp's chunk of rows staged in shared memory; 0: off. Default 1 since
                               session 25's H200 round */
    int run_tiles_cap;      /* RUNT: where the run_tiles_units target splits the rows more than this many ways, aim
                               at run_tiles_cap_units units per multiprocessor instead (fewer splits, each longer:
                               fewer partials to write and combine); 0: off. Default 8 (with 3 units) since session 28's
                               H100 round: sweep #2 #65 #180 at 0.868-0.976 x the uncapped time */
    int run_tiles_cap_units; /* RUNT: the units per multiprocessor aimed at past run_tiles_cap splits */
    int rows_stripes;       /* ROWS plans in block mode (a block per unit) split across blocks: 1: each split reads
                               interleaved lines of KG_RED_THREADS vectors of the row (split s lines s, s + splits,
                               ...; args.run KG_RED_ROWS_STRIPES, kg_red_run_stripes) instead of one contiguous
                               chunk; 0: off. Default 1 since session 30's H100 round s30r1 (the full reductions
                               of 2^28 elements 95-96% -> 100-102% of copy) */
    int cols_strided_occ;   /* COLS value reductions over 2-byte elements (f16, bf16) in the strided mode
                               (KG_RED_CV_STRIDED) that cols_occ's rule sends to the 4-block kernel (colso, 4 rows
                               of 4 columns in flight a lane): 3: the 3-block kernel (colsp, KG_RED_OCC3_UNROLL = 8
                               rows in flight a lane: 48 KB a multiprocessor instead of 32), the split fill at its
                               3 resident blocks; 4: that plan only where its grid needs no more waves of 3 blocks
                               a multiprocessor than the grid of 0 at 4, ceil(g3 / (3 SMs)) <= ceil(g4 / (4 SMs))
                               (kg_reduce_plan_tuned); 0: off. Default 4 since session 34's H100 round s34r1 (the 27
                               rows it changes geomean x1.047, #71 x1.087, worst #738 x0.985; 3 without the wave
                               rule: #92 x0.910, #42 x0.94) */
    int trans_vec;          /* TRANS plans of bf16 elements (f16: trans_vec_f16) whose input-contiguous side holds at least
                               trans_vec outputs (A.inner), over at most KG_RED_TRANSV_POS walk positions: that side
                               read in 16-byte vectors (each row aligned at its first walk position), tiles of
                               KG_RED_TRANSV_VECS x 8 by KG_RED_TRANSV_ROWS outputs (args.vec 1, kernel TRANSV,
                               templates/reduce_transv.cuh; args.chunk and args.run the input's lowest and highest
                               element offsets); the same bits as TRANS; 0: off (TRANS's one element a load). Default
                               128 since session 35's H100 round s35r2 (the 9 rows it changes geomean x1.367, min
                               x1.170; sweep #77 bf16 267.5 -> 174.0 us, 40.2% -> 61.8% of copy) */
    int trans_vec_f16;      /* trans_vec for TRANS plans of f16 elements (module red_f16_transv, the same kernel):
                               their input-contiguous side of at least trans_vec_f16 outputs read in 16-byte vectors;
                               0: off (TRANS's one element a load). Default 128 since session 35's H100 round s35r4
                               (the 7 rows it changes, f16 class cases t0-t6, geomean x1.292, min x1.171 (t4); t0
                               38.7% -> 53.4% of copy, as bf16's TRANSV) */
    int flatw_ragged;       /* (with flat, flat_warp 2) FLATW's blocks (one reduced dim outside the slab, R_out blocks
                               at a stride) whose starts are not whole vectors: where the period P = a x K divides the
                               vector and every block start is a multiple of P elements (the input 16-byte aligned,
                               its extent ending on 16 bytes), each block read in the aligned 16-byte vectors that
                               cover it, the elements outside it dropped (args.vec 1; templates/reduce_flatw.cuh),
                               where the outer positions give each multiprocessor at least flatw_ragged warps (in
                               place of flat_warp_units); 0: off (those plans keep their class). Default 8 since session 37 (with
                               flatw_ragged_v 1, flatw_ragged_min 1024, flatw_ragged_late 1, flatw_ragged_2 11) */
    int flatw_ragged_v;     /* (with flatw_ragged) the flatwr kernel's loop: 0 session 36's (mode 2, args.vec
                               1: U loads a lane, then their masked fold); 1: mode 3 (args.vec 2: the same vectors, lanes
                               and fold order, so the same bits, in a software pipeline of 2 x KG_RED_FLATWR_PIPE loads
                               a lane, the next batch loaded before this one folds, one 32-bit mask a batch; the
                               default since session 37, where the input's extent is under 2^31 elements) */
    int flatw_ragged_min;   /* (with flatw_ragged) the least bytes a unit's slab (its blocks together) must hold for
                               flatw_ragged (default 1024); 0: no bound beyond the blocks' 128 bytes (session 37: sweep
                               #10434's 3 blocks of 172 B, a 516-byte unit a warp, lost x0.68 in s36's round 2) */
    int flatw_ragged_late;  /* (with flatw_ragged) flags: where flatw_ragged's plans replace another class's (default 1). 0:
                               wherever they apply, ahead of the classes after FLATW; otherwise only a plan that
                               ends as COLS reading one column a lane (args.vec KG_RED_CV_SCALAR; flag 1) or as
                               NEST over 2-byte elements (flag 2) is planned again as flatw_ragged's. Session 37's
                               round s37r1 (H100, 71 rows of a 30000-case draw): every row whose default was COLS
                               scalar won (x1.02-4.83), the three that lost (x0.80-0.94) had other defaults */
    int flatw_ragged_2;     /* (with flatw_ragged) the warps a multiprocessor the outer positions must give a
                               flatw_ragged plan of 2-byte elements, if more than flatw_ragged (default 11: round
                               s37r2's one loss, x0.827, was bf16 at 8 warps a multiprocessor); 0: as others */
    int trans_first;        /* a COLS plan whose outputs each reduce at most this many elements is planned again as
                               TRANS where that applies (outputs scattered in the input's order, within
                               trans_max_red: COLS writes every output alone); 0: off. Default 6 since session 37 */
    int slab_max_walk;      /* SLAB only where its slabs' outer walk (the reduced positions outside the slab's R
                               rows, red / R) is at most this long; 0: no bound. Session 37's census: #2772
                               [28,33,1023,9,2,2] axes (2,4) bf16, slabs of 72 bytes walked over 1023 positions a
                               block, 1.1% of copy (0.04x PyTorch). Default 128 since session 38 (round s38r2) */
    int trans_run;          /* TRANS also over a reduced run of at most this many contiguous elements under the
                               ki side (plan_trans; ahead of TILE in the chain); 0: off. Default 8 since session
                               38 (round s38r2) */
    int trans_ko2;          /* TRANS's ko side of two kept dims (chained in the values) where the output-contiguous
                               one holds fewer than this many outputs (plan_trans); 0: off. Default 16 since
                               session 38 */
    int trans_min_util;     /* trans_run's and trans_ko2's plans only where their 32 x 32 tiles hold at least this
                               many percent outputs (ki / 32 ceil(ki / 32) x ko / 32 ceil(ko / 32)); 0: any.
                               Default 70 since session 38 */
    int rows_block_min;     /* ROWS: a block of KG_RED_THREADS lanes a row (splits where the row is long) only where
                               a row holds more than this many 16-byte vectors and its rows would not fill half the
                               resident lanes at lanes_for's group; else that group (at most a warp). 0: 256, the
                               rule before session 42 (32 lanes x 8 loads). Default 2048 since session 42 */
    int slab_min_tile;      /* SLAB only where a tile holds at least this many elements (slabs x columns x rows);
                               0: any, as before session 46. Default 1024 since session 46 */
    int slab_late_rows;     /* a NEST plan planned again as SLAB over slabs of up to this many rows (more than
                               slab_max_rows) where that applies, within slab_min_tile; 0: off (session 44) */
    int flat_max_cw;        /* FLAT (its block-wide form) only where the kept columns repeat in at most this many
                               16-byte vectors (args.cw); 0: up to KG_RED_THREADS, as before session 44 */
} kg_red_tuning;

/* kg_red_args.vec of a NEST plan over covering vectors (nest_cover;
   templates/reduce_cover.cuh defines the same): the walk's dim 0 counts
   (run + 2 V - 2) / V vectors of V elements per run of args.run elements,
   args.tiles the walk's positions per output (what args.chunk cuts),
   args.inner_out and args.inner_idx the input's lowest and highest element
   offsets (a vector reaching past them is loaded element by element). */
#define KG_RED_NEST_COVER 3

/* Columns a COLS lane takes in mode vec (kg_red_cols_mode) for elements of
   es bytes (for the plan checker). */
int kg_red_cols_per_lane(int vec, size_t es);

extern const kg_red_tuning kg_red_tuning_default;

/* Sets fields of *t from text "name=value,name=value" (the field names
   above, values decimal integers), for the benchmark's and the tests'
   KG_RED_TUNE variants. Returns 0, or -1 at an unknown name or a bad value
   (t then partly set). */
int kg_red_tuning_parse(const char *text, kg_red_tuning *t);

/* Validates a kg_reduce call (every error but the device's) and plans it for
   a GPU of sm_count multiprocessors. */
kg_status kg_reduce_plan(kg_context *ctx, kg_reduce_op op, const kg_tensor *out, const kg_tensor *indices,
                         const kg_tensor *in, const int *axes, int n_axes, int keepdim, int sm_count,
                         kg_red_plan *plan);

/* The same with other tuning (NULL: the default). */
kg_status kg_reduce_plan_tuned(kg_context *ctx, kg_reduce_op op, const kg_tensor *out, const kg_tensor *indices,
                               const kg_tensor *in, const int *axes, int n_axes, int keepdim, int sm_count,
                               const kg_red_tuning *tuning, kg_red_plan *plan);

/* Launches a plan of kg_reduce_plan(_tuned) for these tensors (the ones it
   was planned for). */
kg_status kg_reduce_launch(kg_context *ctx, kg_reduce_op op, kg_red_plan *plan, const kg_tensor *out,
                           const kg_tensor *indices, const kg_tensor *in);

#endif
