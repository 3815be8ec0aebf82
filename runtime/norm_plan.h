/*
 * norm_plan.h - how a normalization call becomes one or two kernel launches
 * (norm.c). Pure host code, so validation, coalescing and the class choice
 * are tested on machines without a GPU.
 */
#ifndef KG_NORM_PLAN_H
#define KG_NORM_PLAN_H

#include "internal.h"
#include "kg_norm_table.h"
#include "norm_params.h"

/* One call of any normalization: the tensors it names (NULL where absent)
   and its scalars. */
typedef struct kg_norm_call {
    kg_norm_op op;
    const kg_tensor *out, *in, *res, *w, *b, *s0, *s1;
    int axis;        /* softmax, log_softmax */
    const int *axes; /* logsumexp */
    int n_axes, keepdim;
    int k; /* layer_norm: normalized dims (rms_norm: 1) */
    double eps;
} kg_norm_call;

typedef struct kg_norm_plan {
    kg_norm_class cls; /* the class (COLS_STATS: then COLS_APPLY) */
    int empty;         /* nothing to write: nothing to launch */
    kg_norm_args args; /* everything but the pointers */
    unsigned grid, block;
    size_t partial_bytes; /* COLS: scratch for the statistics */
    /* LEANU whose last row ends off a vector boundary: that row by STRIDED,
       a second launch (targs: its pointers from the row's offsets, toff) */
    int tail;
    kg_norm_args targs;
    int64_t toff[KG_NORM_NOPS];
    unsigned tgrid, tblock;
    /* COLS of softmax / log_softmax on sm_90: the CLUSTER configuration
       (kg_norm_ccfgs) that replaces the two launches, -1 none; its cluster
       size, column tiles, rows a block, grid and block */
    int ccfg, csize;
    int crg;   /* COLT's narrow configurations: row groups a tile (several tiles a block), else 0 */
    int cbfly; /* ... 1: the tile's partials merged by butterflies where it lies in a warp (A.opt bit 1), 2: by
                  butterflies a warp, then the warps' partials in shared memory (TL: A.opt bit 2), 0: shared memory */
    int64_t ctiles, cchunk;
    unsigned cgrid, cblock;
    /* the 2-byte norms on sm_90: the BULK configuration (kg_norm_bcfgs) that
       replaces the LEAN launch, -1 none; its stages, grid and block */
    int bcfg, bstages;
    unsigned bgrid, bblock;
} kg_norm_plan;

/* Tunings, for tests and the bench's sweeps (all 0: the planner's
   defaults). threads: the block of LEAN rows of <= 32 lanes (64..1024);
   bps: COLS blocks a multiprocessor (1..16); col_splits: COLS slices of the
   normalized dim per column tile. */
typedef struct kg_norm_tuning {
    int threads, bps;
    int lean;       /* LEAN rows: 0 the default, 4 or 8 that class, 16 LEAN16 (2-byte norms, <= 512 lanes), -1 none
                       (ROWS) */
    int group;      /* LEAN: at least this many lanes a row (a power of two <= 1024) */
    int col_splits; /* COLS: slices of the normalized dim per column tile */
    int loose;      /* 1: LEAN by the LEAN4L / LEAN8L classes (<= 512 lanes; no module has their kernels since
                       session 37: the table holds LEAN4's / LEAN8's, gen/norm.lua tuning_only) */
    int leanu;      /* contiguous rows vectors do not tile: 0 LEANU (the default), 4 or 8 its vectors a
                       lane, -1 none (STRIDED) */
    int variant;    /* LEAN8 of the norms, <= 512 lanes: 1 LEAN8C, 2 LEAN8S (elsewhere LEAN8), -1 plain LEAN
                       (0: the planner's choice); the 2-byte lse ops: -1 LEAN4 / LEAN8 instead of LEAN4F / LEAN8F */
    int usan;       /* LEANU: 0 whole-vector folds (LEANU4S, LEANU8S, LEANU4S_RES), -1 masked folds (LEANU4, ...) */
    int leanw;      /* rows 4-byte words tile (not 16-byte vectors): 0 LEANW (the default), 8 or 16 its words a
                       lane, -1 none (LEANU) */
    int cluster;    /* softmax along an outer axis: 0 the planner's rule, c + 1 CLUSTER configuration c wherever the
                       column fits, -1 none (COLS) */
    int csize;      /* CLUSTER: at least this many blocks a cluster (<= 16) */
    int cstag;      /* CLUSTER PH: 0 half 1 starts once half 0's first loads landed, -1 both at once */
    int colsv;      /* softmax along an outer axis where COLS stands: 0 COLSV where it applies, -1 COLS */
    int grid;       /* rows classes: at most this many blocks (tests: many rows a block; LEAN: also above the
                       planner's cap); CLUSTER PH: at most this many blocks (whole clusters, at least one) */
    int pf;         /* LEAN rows: 0 the planner's PF rule, 1 the PF form (LEAN4P, LEAN8P) wherever it applies
                       (<= 512 lanes, not the residual form), -1 never */
    int bulk;       /* the 2-byte norms' LEAN rows on sm_90: 0 the planner's rule, c + 1 BULK configuration c
                       wherever the row fits, -1 none */
    int bstages;    /* BULK: at most this many stages a block (2..KG_NORM_BULK_STAGES; BULKW with the row in
                       registers: from 1) */
    int g32;        /* LEAN4 / LEAN8 rows of more than a warp: 1 the fewest whole warps that hold the row (not a
                       power of two of lanes), 0 the planner's rule (the 2-byte layer_norm's LEAN8S), -1 never */
    int pair;       /* rows of 32 elements at 2 vectors a lane in blocks of 128 (LEAN): 0 the planner's rule
                       (softmax, log_softmax, rms_norm), 1 every op, -1 none (the plans before: LEAN4 of 2 lanes
                       at the cap for f32, PACKED for the 2-byte types) */
    int lean2;      /* the 2-byte rows of those pairs: 1 LEAN2 (2 vectors a lane, 32 registers) instead of LEAN4 /
                       LEAN4F (2: the 2-byte rows of 64 and 128 elements too, 4 / 8 lanes a row; 3, 4: the same
                       with LEAN2E for softmax; 5: the rows of 32 by LEAN2R, two rows a group at once; 6: LEAN2R
                       for the rows of 64 too, 4 lanes; 8: LEAN2R for the rows of 32, 64 and 128), 0 the
                       planner's rule, -1 never */
    int narrow;     /* softmax along an outer axis of few rows over columns of fewer than 16 vectors: 0 the planner's
                       rule (COLT's narrow configurations where one holds the column), -1 none (COLS) */
    int nmerge;     /* COLT's narrow configurations: 0 the planner's rule (butterflies where a tile lies in a warp,
                       else TL), 1 the block's merge in shared memory, 2 butterflies where a tile lies in a warp (else
                       shared memory: s23r2's default) */
    int sm90;       /* 1: plan as on compute capability 9.0 (CPU tests) */
} kg_norm_tuning;
extern kg_norm_tuning kgi_norm_tuning;
/* CLUSTER launches made (tests: that the class ran) */
extern _Atomic long kgi_norm_cluster_launches;
/* BULK launches made (tests: that the class ran) */
extern _Atomic long kgi_norm_bulk_launches;
/* BULK: most stages a block's ring holds (templates/normb.cuh's
   KG_NORMB_MAX_STAGES) */
#define KG_NORM_BULK_STAGES 16
/* BULKW: most stages of all its warps' rings (KG_NORMB_MAX_WBARS) */
#define KG_NORM_BULKW_BARS 64

/* Validates a call (every error but the device's) and plans it for a GPU
   of sm_count multiprocessors. */
kg_status kg_norm_plan_call(kg_context *ctx, const kg_norm_call *c, int sm_count, kg_norm_plan *plan);

/* Launches a plan of kg_norm_plan_call for the same call. */
kg_status kg_norm_launch(kg_context *ctx, const kg_norm_call *c, kg_norm_plan *plan);

#endif
