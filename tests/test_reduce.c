/*
 * test_reduce.c - reductions on the GPU (each test skips with the reason
 * where there is none; the planner's CPU tests are test_reduce_plan.c).
 *
 * Every op x dtype over the reduction shapes, axes, views and empty cases
 * below, which between them reach every class (rows, short rows, packed
 * short rows, split rows, columns over one or several reduced dims, split
 * columns, the reduced-innermost walk in vectors and in elements, split
 * walks, strided 32/64-bit), also under other tunings of the planner; a
 * seeded random sweep (ranks 1..6, random sizes, axis sets, permuted and
 * sliced inputs, every op and dtype) where every case runs twice and must be
 * bitwise equal; NaN, ties and infinities; integer overflow; the f32 accuracy
 * bound at 2^28; determinism; graph capture; > 2^31 elements. Inputs are
 * fresh random values (seed printed on failure), results are poisoned
 * first, the reference is the generated float64 / int64 one.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "kg_red_reference.h"
#include "kg_red_table.h"
#include "kg_red_force.h"
#include "kg_test.h"
#include "reduce_plan.h"

/* ---- GPU ------------------------------------------------------------------- */

static kg_context *gpu;

static const kg_red_tuning *gpu_tuning, *env_tuning;
static kg_red_tuning env_tuning_value;

/* KG_RED_TUNE="name=value,..." (reduce_plan.h): every GPU test plans with
   the default tuning changed so (a variant under test), instead of
   kg_reduce's default. */
static void gpu_setup(void)
{
    gpu = kt_open_gpu();
    const char *t = getenv("KG_RED_TUNE");
    if (t && *t) {
        env_tuning_value = kg_red_tuning_default;
        cr_assert_eq(kg_red_tuning_parse(t, &env_tuning_value), 0, "KG_RED_TUNE=%s: unknown field or bad value", t);
        env_tuning = &env_tuning_value;
    }
    gpu_tuning = env_tuning;
}
static void gpu_teardown(void) { kg_close(gpu); }

/* How a case lays out its input over the allocation. */
enum view { DENSE, EVERY_OTHER_INNER, EVERY_OTHER_OUTER, TRANSPOSED, EXPANDED, MISALIGNED, COLMAJOR, SWAP_LAST2 };

typedef struct rcase {
    const char *name;
    int ndim;
    int64_t shape[KG_MAX_DIMS];
    int n_axes;
    int axes[KG_MAX_DIMS];
    int keepdim;
    enum view view;
} rcase;

/* TESTING.md's reduction cases, and shapes that reach each class and plan. */
static const rcase cases[] = {
    {"() all", 0, {0}, 0, {0}, 0, DENSE},
    {"(2,) all", 1, {2}, 0, {0}, 0, DENSE},
    {"(3,5) all", 2, {3, 5}, 0, {0}, 0, DENSE},
    {"(3,5) 0 keepdim", 2, {3, 5}, 1, {0}, 1, DENSE},
    {"(3,5) -1", 2, {3, 5}, 1, {-1}, 0, DENSE},
    {"(3,2,1,2) all listed", 4, {3, 2, 1, 2}, 4, {0, 1, 2, 3}, 0, DENSE},
    {"(3,2,1,2) (0,-1)", 4, {3, 2, 1, 2}, 2, {0, -1}, 0, DENSE},
    {"(3,2,1,2) ndim/2 keepdim", 4, {3, 2, 1, 2}, 1, {2}, 1, DENSE},
    {"(4,3,5,6) [3,0,2]", 4, {4, 3, 5, 6}, 3, {3, 0, 2}, 0, DENSE},
    {"(4,3,5,6) 1", 4, {4, 3, 5, 6}, 1, {1}, 1, DENSE},
    {"(2^20,) all", 1, {1 << 20}, 0, {0}, 0, DENSE},
    {"(32,2^16) 1", 2, {32, 1 << 16}, 1, {1}, 0, DENSE},
    {"(1000,63) 1", 2, {1000, 63}, 1, {1}, 0, DENSE},
    {"(1000,63) 0", 2, {1000, 63}, 1, {0}, 0, DENSE},
    {"(5000,33) 1", 2, {5000, 33}, 1, {1}, 0, DENSE},
    {"(4096,256) 0 (split columns)", 2, {4096, 256}, 1, {0}, 0, DENSE},
    {"(7,300,33) 1", 3, {7, 300, 33}, 1, {1}, 0, DENSE},
    {"(1001,64) 1 (packed rows, short last unit)", 2, {1001, 64}, 1, {1}, 0, DENSE},
    {"(515,128) 1", 2, {515, 128}, 1, {1}, 0, DENSE},
    {"(77,32) 1", 2, {77, 32}, 1, {1}, 0, DENSE},
    {"(3,5,256) 2", 3, {3, 5, 256}, 1, {2}, 0, DENSE},
    {"(40,3000) 0 (column tiles of 64 and 256 lanes)", 2, {40, 3000}, 1, {0}, 0, DENSE},
    {"(9,4100) 0", 2, {9, 4100}, 1, {0}, 0, DENSE},
    {"(30000,2,3) 0 (split columns, narrow)", 3, {30000, 2, 3}, 1, {0}, 0, DENSE},
    {"(64,700,5) (0,2) strided", 3, {64, 700, 5}, 2, {0, 2}, 0, DENSE},
    {"(2,9000,3) (0,2) strided split", 3, {2, 9000, 3}, 2, {0, 2}, 0, DENSE},
    {"(64,40,32,20) (0,2) columns under two reduced dims", 4, {64, 40, 32, 20}, 2, {0, 2}, 0, DENSE},
    {"(3,40,5,20) (0,2) columns of 20, few rows", 4, {3, 40, 5, 20}, 2, {0, 2}, 0, DENSE},
    {"(6,50,7,64) (1,3) reduced innermost in vectors", 4, {6, 50, 7, 64}, 2, {1, 3}, 0, DENSE},
    {"(64,8,4096) (0,2) reduced innermost, split", 3, {64, 8, 4096}, 2, {0, 2}, 0, DENSE},
    {"(30,100,3) (0,2) short runs innermost", 3, {30, 100, 3}, 2, {0, 2}, 0, DENSE},
    {"(5,7,9,11,13) (0,2,4)", 5, {5, 7, 9, 11, 13}, 3, {0, 2, 4}, 0, DENSE},
    {"t[:, ::2] (64,1500) 1", 2, {64, 1500}, 1, {1}, 0, EVERY_OTHER_INNER},
    {"t[::2, :] (128,500) 0", 2, {128, 500}, 1, {0}, 0, EVERY_OTHER_OUTER},
    {"transpose (789,357) 0", 2, {789, 357}, 1, {0}, 0, TRANSPOSED},
    {"transpose (789,357) 1", 2, {789, 357}, 1, {1}, 0, TRANSPOSED},
    {"transpose (789,357) all", 2, {789, 357}, 0, {0}, 0, TRANSPOSED},
    {"expanded (64,100) 0", 2, {64, 100}, 1, {0}, 0, EXPANDED},
    {"expanded (64,100) all", 2, {64, 100}, 0, {0}, 0, EXPANDED},
    {"misaligned (1001,) all", 1, {1001}, 0, {0}, 0, MISALIGNED},
    {"misaligned (40,24) 0", 2, {40, 24}, 1, {0}, 0, MISALIGNED},
    /* ROWS rows of 7161 elements, each start off the 16-byte grid: a warp a
       row by default (rows_block_min), a block a row of 3.5 vectors a lane
       under KG_RED_TUNE=rows_block_min=256 */
    {"(21,7,1023) (1,2) block rows of few vectors a lane", 3, {21, 7, 1023}, 2, {1, 2}, 0, DENSE},
    /* tiles whose first or last 16 bytes reach past the input (its ends off a
       16-byte boundary): loaded element by element there (memcheck, W0) */
    {"(1023,3) 1 tiles, the end off 16 bytes", 2, {1023, 3}, 1, {1}, 0, DENSE},
    {"misaligned (1023,5) 1 tiles, both ends off 16 bytes", 2, {1023, 5}, 1, {1}, 0, MISALIGNED},
    {"(700,7,3) (0,2) tiles under a walk", 3, {700, 7, 3}, 2, {0, 2}, 0, DENSE},
    /* reduced runs innermost that do not move in whole vectors: covering
       16-byte vectors (nest_cover) for value reductions; misaligned: the
       first run's first and the last run's last vector reach past the input */
    {"(9,33,65) (0,2) runs of 65 (covering vectors)", 3, {9, 33, 65}, 2, {0, 2}, 0, DENSE},
    {"misaligned (40,50,7) (0,2) covering vectors at both ends", 3, {40, 50, 7}, 2, {0, 2}, 0, MISALIGNED},
    {"(20,30,500) (0,2) runs of 500", 3, {20, 30, 500}, 2, {0, 2}, 0, DENSE},
    {"(300,3,700) (0,2) runs of 700, split", 3, {300, 3, 700}, 2, {0, 2}, 0, DENSE},
    /* short reduced runs under contiguous columns, the runs dividing a
       16-byte vector (cols_runs_vec: each row's columns x run elements in
       vectors, each run folded at the end); misaligned: no vectors */
    {"(64,40,2) (0,2) runs of 2 under 40 columns", 3, {64, 40, 2}, 2, {0, 2}, 0, DENSE},
    {"(40,600,4) (0,2) runs of 4 under 600 columns, several tiles", 3, {40, 600, 4}, 2, {0, 2}, 0, DENSE},
    {"(2000,24,8) (0,2) runs of 8, split", 3, {2000, 24, 8}, 2, {0, 2}, 0, DENSE},
    {"(3,50,24,2) (1,3) runs of 2 under columns, outer positions", 4, {3, 50, 24, 2}, 2, {1, 3}, 0, DENSE},
    {"(64,40,16) (0,2) runs of 16 under 40 columns", 3, {64, 40, 16}, 2, {0, 2}, 0, DENSE},
    {"misaligned (64,40,2) (0,2) runs of 2", 3, {64, 40, 2}, 2, {0, 2}, 0, MISALIGNED},
    {"(17,4,9,2,13) (0,2,4) runs of 13 under two walks", 5, {17, 4, 9, 2, 13}, 3, {0, 2, 4}, 0, DENSE},
    /* short slabs (an outer position's rows x columns contiguous) under
       several outer positions: FLAT, and its warp per unit (flat_warp); a
       period of 1 lane, and of 10 or 5 lanes folded 3 or 6 times */
    {"(50,3,64,2) (1,2) slabs of 2 columns", 4, {50, 3, 64, 2}, 2, {1, 2}, 0, DENSE},
    {"(33,17,5,40) (1,2) slabs of 40 columns", 4, {33, 17, 5, 40}, 2, {1, 2}, 0, DENSE},
    /* slabs of a reduced run under the columns: 5 blocks of run 2 x 2
       columns x 16 at a stride (whole vectors), and single ragged slabs of
       run 10 x 5 columns x 3 */
    {"(6,5,3,16,2,2) (1,3,5) blocks of runs under columns", 6, {6, 5, 3, 16, 2, 2}, 3, {1, 3, 5}, 0, DENSE},
    {"(7,3,5,10) (1,3) slabs of runs under columns", 4, {7, 3, 5, 10}, 2, {1, 3}, 0, DENSE},
    /* slabs of rows x narrow columns along a kept dim (SLAB, tuning slab):
       a ragged last tile, slabs off 16-byte boundaries at both
       ends, two columns, and slabs under a walk of a further reduced dim */
    {"(301,5,33) 1 slabs of 5 x 33", 3, {301, 5, 33}, 1, {1}, 0, DENSE},
    {"misaligned (257,2,61) 1 slabs of 2 x 61", 3, {257, 2, 61}, 1, {1}, 0, MISALIGNED},
    {"(3,1000,16,2) 2 slabs of 16 x 2", 4, {3, 1000, 16, 2}, 1, {2}, 0, DENSE},
    {"(9,17,8,2) (0,2) slabs under a walk", 4, {9, 17, 8, 2}, 2, {0, 2}, 0, DENSE},
    /* outputs scattered in the input's order (TRANS, tuning trans): ragged
       tiles on both sides; the input-contiguous outputs over two dims */
    {"column-major (67,9,45) 1 scattered outputs", 3, {67, 9, 45}, 1, {1}, 0, COLMAJOR},
    {"column-major (5,6,40,7) 3 scattered outputs", 4, {5, 6, 40, 7}, 1, {3}, 0, COLMAJOR},
    /* ... a side of 601 (3 tiles of 248 in vectors, trans_vec: rows off the
       16-byte grid, the last row's last vector past the input) x 40 (a
       ragged ko tile), 7 positions */
    {"column-major (601,7,40) 1 scattered outputs, long rows", 3, {601, 7, 40}, 1, {1}, 0, COLMAJOR},
    /* ... (trans_run, trans_ko2): a reduced run of 3 under ki 40 x ko 50; a
       run of 2 and a further reduced dim (walk 2 x 5); ko over two dims (2
       x 9, values chained) under ki 41; both (run 2, ko 3 x 5) */
    {"column-major (3,40,50) 0 scattered outputs over a reduced run", 3, {3, 40, 50}, 1, {0}, 0, COLMAJOR},
    {"column-major (2,37,5,45) (0,2) scattered outputs over a run and a walk", 4, {2, 37, 5, 45}, 2, {0, 2}, 0,
     COLMAJOR},
    {"column-major (41,5,9,2) 1 scattered outputs, ko over two dims", 4, {41, 5, 9, 2}, 1, {1}, 0, COLMAJOR},
    {"column-major (2,33,5,3) 0 scattered outputs over a run, ko over two dims", 4, {2, 33, 5, 3}, 1, {0}, 0,
     COLMAJOR},
    /* SLAB columns over two kept dims whose values strides do not chain */
    {"last two swapped (9,7,5,6) 1 slab columns over two dims", 4, {9, 7, 5, 6}, 1, {1}, 0, SWAP_LAST2},
    /* columns over kept dims whose input strides chain but whose results'
       do not (cols_chain): two dims (63 columns, scalar or strided), two
       dims of 24 columns in vectors split down the rows, three dims */
    {"last two swapped (50,300,7,9) 1 columns over two kept dims", 4, {50, 300, 7, 9}, 1, {1}, 0, SWAP_LAST2},
    {"last two swapped (4000,3,8) 0 columns over two kept dims, split", 3, {4000, 3, 8}, 1, {0}, 0, SWAP_LAST2},
    {"column-major (3,4,50,300) 3 columns over three kept dims", 4, {3, 4, 50, 300}, 1, {3}, 0, COLMAJOR},
    /* a short kept dim under a reduced run under columns (cols_runs_kept:
       periods of kept x run in vectors, folded per kept place): 2 x 2 under
       16 columns and outer positions, 2 x 2 under 32 merged columns under a
       walk (sweep #155's order), 4 x 2 (2-byte elements only) */
    {"(5,40,16,2,2) (1,3) kept pairs under runs of 2", 5, {5, 40, 16, 2, 2}, 2, {1, 3}, 0, DENSE},
    {"(3,50,16,2,2,2) (0,1,4) kept pairs under runs, merged columns", 6, {3, 50, 16, 2, 2, 2}, 3, {0, 1, 4}, 0, DENSE},
    {"(30,20,2,4) (0,2) kept fours under runs of 2", 4, {30, 20, 2, 4}, 2, {0, 2}, 0, DENSE},
    /* dense rows of 8, 16 or 32 vectors, a kept dim of 2 or 4 innermost
       under the reduced run (FLATW's packed rows, flatw_kept): rows of 8
       vectors of f32 with a partial last warp unit, of 32 (f32) or 16
       (bf16), kept fours (keepdim), rows under two kept dims */
    {"(300,16,2) 1 packed rows of kept pairs", 3, {300, 16, 2}, 1, {1}, 0, DENSE},
    {"(77,64,2) 1 packed rows of kept pairs, long rows", 3, {77, 64, 2}, 1, {1}, 0, DENSE},
    {"(150,8,4) 1 keepdim packed rows of kept fours", 3, {150, 8, 4}, 1, {1}, 1, DENSE},
    {"(5,41,64,4) 2 packed rows under two kept dims", 4, {5, 41, 64, 4}, 1, {2}, 0, DENSE},
    /* a kept dim under a reduced run, the period wider than a vector
       (cols_runs_fold: one tile of column runs in vectors down a walk, each
       result folded across the tile): pairs under runs of 40 under a walk,
       fours under runs of 100 twice a tile, sweep #159's order (pairs under
       runs of 46, six a tile, under a walk, kept dims outside), threes */
    {"(20,100,40,2) (0,2) kept pairs under runs of 40, folded", 4, {20, 100, 40, 2}, 2, {0, 2}, 0, DENSE},
    {"(50,2,100,4) (0,2) kept fours under runs of 100, folded", 4, {50, 2, 100, 4}, 2, {0, 2}, 0, DENSE},
    {"(7,255,6,2,23,2) (1,3,4) kept pairs under runs of 46, folded", 6, {7, 255, 6, 2, 23, 2}, 3, {1, 3, 4}, 0, DENSE},
    {"(70,4,5,3) (0,2) kept threes under runs of 5, folded", 4, {70, 4, 5, 3}, 2, {0, 2}, 0, DENSE},
    /* short reduced runs of any length under contiguous columns in tiles
       of whole vectors (RUNT, tuning run_tiles): runs of 17 under 610
       columns (rows of 10370 elements: 4-byte words of 2-byte elements,
       21 tiles of 30 columns, the last of 10), runs of 6 under 12 columns
       split down 3000 rows, runs of 3 under 40 columns under a walk of two
       reduced dims with kept positions between (keepdim), runs of 7 in rows
       of 539 elements off their vectors (one element a lane) */
    {"(40,610,17) (0,2) runs of 17 in tiles of columns", 3, {40, 610, 17}, 2, {0, 2}, 0, DENSE},
    {"(3000,12,6) (0,2) runs of 6 split down the rows", 3, {3000, 12, 6}, 2, {0, 2}, 0, DENSE},
    {"(7,5,9,40,3) (0,2,4) keepdim runs of 3 under a two-dim walk", 5, {7, 5, 9, 40, 3}, 3, {0, 2, 4}, 1, DENSE},
    {"misaligned (30,77,7) (0,2) runs of 7, rows of an odd count", 3, {30, 77, 7}, 2, {0, 2}, 0, MISALIGNED},
    /* short dense rows staged a warp at a time (SEGW, tuning seg_rows): rows
       of 11 (bf16: chunks of 256 rows, the stream's last vector partial) */
    {"(20001,11) 1 short rows, chunks of rows a warp", 2, {20001, 11}, 1, {1}, 0, DENSE},
    {"empty slice (3,0) 1", 2, {3, 0}, 1, {1}, 0, DENSE},
    {"empty tensor (0,4) 1", 2, {0, 4}, 1, {1}, 0, DENSE},
    {"empty slice (0,4) 0", 2, {0, 4}, 1, {0}, 1, DENSE},
};

typedef struct layout {
    int64_t strides[KG_MAX_DIMS];
    int64_t offset, alloc; /* elements before the first, elements allocated */
} layout;

static layout layout_of(const rcase *c)
{
    layout L;
    memset(&L, 0, sizeof L);
    int64_t st = 1;
    for (int d = c->ndim - 1; d >= 0; d--) {
        L.strides[d] = st;
        st *= c->shape[d] > 0 ? c->shape[d] : 1;
    }
    int64_t n = st;
    switch (c->view) {
    case EVERY_OTHER_INNER: /* t[:, ::2] of a (rows, 2*cols) tensor */
        L.strides[1] = 2;
        L.strides[0] = 2 * c->shape[1];
        n = 2 * c->shape[0] * c->shape[1];
        break;
    case EVERY_OTHER_OUTER: /* t[::2, :] of a (2*rows, cols) tensor */
        L.strides[0] = 2 * c->shape[1];
        n = 2 * c->shape[0] * c->shape[1];
        break;
    case TRANSPOSED: /* the transpose of a dense (cols, rows) tensor */
        L.strides[0] = 1;
        L.strides[1] = c->shape[0];
        break;
    case EXPANDED:
        L.strides[0] = 0;
        n = c->shape[1];
        break;
    case MISALIGNED:
        L.offset = 1;
        n += 1;
        break;
    case COLMAJOR: /* every dim reversed in memory (Fortran order) */
        st = 1;
        for (int d = 0; d < c->ndim; d++) {
            L.strides[d] = st;
            st *= c->shape[d] > 0 ? c->shape[d] : 1;
        }
        break;
    case SWAP_LAST2: /* the last two dims swapped in memory */
        L.strides[c->ndim - 1] = c->shape[c->ndim - 2];
        L.strides[c->ndim - 2] = 1;
        break;

    default: break;
    }
    L.alloc = n > 0 ? n : 1;
    return L;
}

/* c's dims laid out in memory in the order perm (outermost first); with
   gap, every other element of the innermost one and every other block of
   the second innermost (a sliced view, t[..., ::2, ::2] of the permuted
   tensor). */
static layout layout_permuted(const rcase *c, const int *perm, int gap)
{
    layout L;
    memset(&L, 0, sizeof L);
    int64_t s = 1;
    for (int i = c->ndim - 1; i >= 0; i--) {
        const int g = gap && i >= c->ndim - 2 ? 2 : 1;
        s *= g;
        L.strides[perm[i]] = s;
        s *= c->shape[perm[i]] > 0 ? c->shape[perm[i]] : 1;
    }
    L.alloc = s > 0 ? s : 1;
    return L;
}

typedef enum fill { RANDOM, TIES, NEAR_ONE } fill;

static void fill_input(void *h, kg_dtype dt, int64_t n, fill how, uint64_t *rng)
{
    for (int64_t i = 0; i < n; i++) {
        switch (dt) {
        case KG_F32:
        case KG_F64:
        case KG_F16:
        case KG_BF16:
            if (how == TIES)
                kt_set(h, dt, i, (double)(int)kt_uniform(rng, -3, 3));
            else if (how == NEAR_ONE)
                kt_set(h, dt, i, kt_uniform(rng, 0.98, 1.02));
            else
                kt_set(h, dt, i, kt_uniform(rng, -1, 1));
            break;
        case KG_BOOL: kt_set_i(h, dt, i, (int64_t)(kt_next(rng) & 1)); break;
        case KG_U8: kt_set_i(h, dt, i, (int64_t)(kt_next(rng) % (how == TIES ? 4 : 256))); break;
        default:
            kt_set_i(h, dt, i, how == TIES ? (int64_t)(kt_next(rng) % 4) : (int64_t)(kt_next(rng) % 2001) - 1000);
            break;
        }
    }
}

static double eps_of_acc(kg_dtype dt) { return dt == KG_F64 ? 0x1p-53 : 0x1p-24; }

/* gpu_tuning: NULL: check_case calls kg_reduce; else it plans with this
   tuning (kg_reduce_plan_tuned) and launches that plan. */

/* Not NULL: check_case also runs every call that launched TRANSV planned
   with this tuning and requires the same values bit for bit (TRANSV must
   reproduce TRANS's bits). */
static const kg_red_tuning *bits_tuning;

/* 1: check_case runs every call twice and requires bitwise equal results. */
static int run_twice;

/* Launches of plans at more blocks per multiprocessor (kg_red_plan.occ). */
static int occ_launches;
/* Launches of NEST plans over covering vectors (KG_RED_NEST_COVER). */
static int cover_launches;
/* ... and the launches of split COLS plans */
static int fill_launches;
/* ... and the launches of FLAT plans with a warp per unit (FLATW), and of
   those at 4 blocks per multiprocessor (FLATWO) */
static int flatw_launches, flatwo_launches;
/* ... and the launches of SLAB plans, and of TRANS plans */
static int slab_launches, trans_launches;
/* ... and of TRANS plans over a reduced run (trans_run: args.cw > 1) and
   with a ko side of two dims (trans_ko2: args.vstore > 0) */
static int trans_run_launches, trans_ko2_launches;
/* ... and of TRANS plans in 16-byte vectors (trans_vec, kernel TRANSV);
   last_transv: 1 where reduce_tuned's last call launched one */
static int transv_launches, last_transv, transv_f16_launches;
/* 1 where reduce_tuned's last call launched a flatw_ragged (flatwr) plan
   (bits_tuning compares those too: flatwr's two loops give the same bits) */
static int last_ragged;
/* ... and of COLS plans over two column tiles per unit (COLSQ), and of COLS
   plans with vector stores of the results */
static int pair_launches, vstore_launches;
/* ... and of FLAT plans over 2-byte elements loaded as 32-bit words */
static int flat_words_launches;
static int runv_launches, runs_nest_launches;
/* ... and of COLS plans over chained kept dims (cols_chain), and of those
   whose columns move in vectors */
static int chain_launches, chain_vec_launches;
/* ... and of NEST plans of several outputs per lane in the plain walk at
   4 blocks (nest_multi_plain) */
static int multi_plain_launches;
/* ... and of COLS column runs in the plain walk (cols_runs_plain) */
static int runs_plain_launches;
/* ... and of COLS runs in vectors with a kept width under the run
   (cols_runs_kept) */
static int kept_launches;
/* ... and of FLATW's packed rows of interleaved outputs (flatw_kept) */
static int flatw_kept_launches;
/* ... and of COLS runs in vectors folded across the tile (cols_runs_fold) */
static int fold_launches;
/* ... and of RUNT (run_tiles): all, split, several tiles a row, and by
   bytes per load ([0] 2, [1] 4, [2] 8, [3] 16; [4]: other plans) */
static int runt_launches, runt_split_launches, runt_tiled_launches;
static int runt_vb[5];
static int runt_vb_at(int vb) { return vb == 2 ? 0 : vb == 4 ? 1 : vb == 8 ? 2 : 3; }
/* ... and of SEGW (seg_rows) */
static int segw_launches;
/* ... and of ROWS plans in interleaved lines per split (rows_stripes) */
static int stripes_launches;
/* ... and of f16 / bf16 COLS plans in the strided mode in colsp (cols_strided_occ) */
static int strided_p_launches;
/* ... and of FLAT plans that flat_fill gave more splits than the same call
   planned without it */
static int flat_fill_launches;
/* ... and of FLATW plans of blocks off the vector grid (flatw_ragged, the
   flatwr kernel; args.vec 1 mode 2, args.vec 2 mode 3, flatw_ragged_v 1) */
static int ragged_launches, ragged_pipe_launches;

/* KG_TEST_QUICK (a time-capped GPU run: the whole program in about 120 s):
   the tests under other tunings run one op in three of each list they walk
   (the k-th op they would run, k + rot a multiple of 3; rot varies by test),
   the same classes and plans with fewer repetitions; the tests of the
   default tuning keep every op. */
static int quick(void) { return getenv("KG_TEST_QUICK") != NULL; }
static int quick_skips(int k, int rot) { return quick() && (k + rot) % 3 != 0; }

/* KG_RED_TEST_DTYPES="f32,bf16,...": check_op runs only these input dtypes
   (a GPU run whose staged bundle holds only their modules; unset: every
   dtype). */
static int dtype_wanted(kg_dtype dt)
{
    const char *list = getenv("KG_RED_TEST_DTYPES");
    if (!list || !*list)
        return 1;
    const char *name = kg_dtype_name(dt);
    const size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return 1;
        p += len + (end != NULL);
    }
    return 0;
}

static kg_status reduce_tuned(kg_reduce_op op, const kg_tensor *out, const kg_tensor *idx, const kg_tensor *in,
                              const int *axes, int n_axes, int keepdim)
{
    last_ragged = 0;
    if (!gpu_tuning)
        return kg_reduce(gpu, op, out, idx, in, axes, n_axes, keepdim);
    int sms = 0;
    kg_status st = kg_device_info(gpu, NULL, 0, NULL, NULL, &sms);
    kg_red_plan plan;
    if (st == KG_OK)
        st = kg_reduce_plan_tuned(gpu, op, out, idx, in, axes, n_axes, keepdim, sms, gpu_tuning, &plan);
    occ_launches += st == KG_OK && plan.occ != 0;
    cover_launches += st == KG_OK && plan.cls == KG_RED_NEST && plan.args.vec == KG_RED_NEST_COVER;
    fill_launches += st == KG_OK && plan.cls == KG_RED_COLS && plan.args.splits > 1;
    flatw_launches += st == KG_OK && plan.cls == KG_RED_FLAT && plan.args.group == 32;
    flatwo_launches += st == KG_OK && plan.cls == KG_RED_FLAT && plan.args.group == 32 && plan.occ == 4;
    slab_launches += st == KG_OK && plan.cls == KG_RED_SLAB;
    trans_launches += st == KG_OK && plan.cls == KG_RED_TRANS;
    trans_run_launches += st == KG_OK && plan.cls == KG_RED_TRANS && plan.args.cw > 1;
    trans_ko2_launches += st == KG_OK && plan.cls == KG_RED_TRANS && plan.args.vstore > 0;
    last_transv = st == KG_OK && plan.cls == KG_RED_TRANS && plan.args.vec == 1;
    transv_launches += last_transv;
    transv_f16_launches += last_transv && in->dtype == KG_F16;
    pair_launches += st == KG_OK && plan.cls == KG_RED_COLS && plan.args.group == 2;
    vstore_launches += st == KG_OK && plan.cls == KG_RED_COLS && plan.args.vstore;
    flat_words_launches += st == KG_OK && plan.cls == KG_RED_FLAT && plan.args.vstore;
    runv_launches += st == KG_OK && plan.cls == KG_RED_COLS && plan.args.run > 1 && plan.args.vec != KG_RED_CV_SCALAR;
    runs_nest_launches += st == KG_OK && plan.cls == KG_RED_NEST && plan.args.vec != 0;
    chain_launches += st == KG_OK && plan.cls == KG_RED_COLS && plan.args.rdims.n > 0;
    runs_plain_launches += st == KG_OK && plan.cls == KG_RED_COLS && plan.args.run > 1 &&
                           plan.args.vec == KG_RED_CV_SCALAR && !plan.args.deep;
    multi_plain_launches += st == KG_OK && plan.cls == KG_RED_NEST && plan.args.group == 1 && plan.args.cw == 4 &&
                            !plan.args.deep && plan.occ == 4;
    chain_vec_launches += st == KG_OK && plan.cls == KG_RED_COLS && plan.args.rdims.n > 0 &&
                          plan.args.vec != KG_RED_CV_SCALAR && plan.args.vec != KG_RED_CV_STRIDED;
    kept_launches += st == KG_OK && plan.cls == KG_RED_COLS && plan.args.run > 1 &&
                     plan.args.vec != KG_RED_CV_SCALAR && plan.args.tile_rows > 1;
    flatw_kept_launches += st == KG_OK && plan.cls == KG_RED_FLAT && plan.args.group == 32 && plan.args.tile_rows > 1;
    fold_launches += st == KG_OK && plan.cls == KG_RED_COLS && plan.args.run > 1 && plan.args.rdims.n > 0;
    runt_launches += st == KG_OK && plan.cls == KG_RED_RUNT;
    segw_launches += st == KG_OK && plan.cls == KG_RED_SEGW;
    stripes_launches += st == KG_OK && plan.cls == KG_RED_ROWS && plan.args.run == KG_RED_ROWS_STRIPES;
    ragged_launches += st == KG_OK && plan.cls == KG_RED_FLAT && plan.args.group == 32 &&
                       (plan.args.vec == 1 || plan.args.vec == 2);
    last_ragged = st == KG_OK && plan.cls == KG_RED_FLAT && plan.args.group == 32 &&
                  (plan.args.vec == 1 || plan.args.vec == 2);
    ragged_pipe_launches += st == KG_OK && plan.cls == KG_RED_FLAT && plan.args.group == 32 && plan.args.vec == 2;
    strided_p_launches += st == KG_OK && plan.cls == KG_RED_COLS && plan.args.vec == KG_RED_CV_STRIDED &&
                          plan.occ == 3 && kg_dtype_size(in->dtype) == 2;
    if (st == KG_OK && plan.cls == KG_RED_FLAT && plan.args.group != 32 && gpu_tuning->flat_fill > 0) {
        kg_red_tuning off = *gpu_tuning;
        off.flat_fill = 0;
        kg_red_plan p0;
        if (kg_reduce_plan_tuned(gpu, op, out, idx, in, axes, n_axes, keepdim, sms, &off, &p0) == KG_OK &&
            p0.cls == KG_RED_FLAT && p0.args.splits < plan.args.splits)
            flat_fill_launches++;
    }
    runt_split_launches += st == KG_OK && plan.cls == KG_RED_RUNT && plan.args.splits > 1;
    runt_tiled_launches += st == KG_OK && plan.cls == KG_RED_RUNT && plan.args.tiles > 1;
    runt_vb[st == KG_OK && plan.cls == KG_RED_RUNT ? runt_vb_at(plan.args.vec) : 4]++;
    return st == KG_OK ? kg_reduce_launch(gpu, op, &plan, out, idx, in) : st;
}

/* The output shape of case c into os (a 1 for each reduced dim under
   keepdim; no axes: every dim reduced); returns its rank. */
static int case_out_shape(const rcase *c, int64_t *os)
{
    unsigned mask = c->n_axes == 0 ? (1u << c->ndim) - 1 : 0;
    for (int i = 0; i < c->n_axes; i++)
        mask |= 1u << (c->axes[i] < 0 ? c->axes[i] + c->ndim : c->axes[i]);
    int k = 0;
    for (int d = 0; d < c->ndim; d++) {
        if (!((mask >> d) & 1u))
            os[k++] = c->shape[d];
        else if (c->keepdim)
            os[k++] = 1;
    }
    return k;
}

/* Runs op on `h` (the host copy of the allocation, already uploaded to
   `dev`) laid out as c/L, and compares every result with the reference.
   Returns the number of mismatches (the first few are printed). */
static int check_case(kg_reduce_op op, kg_dtype dt, const rcase *c, const layout *L, const void *h, void *dev,
                      int with_values)
{
    const kg_red_info *info = &kg_red_infos[op];
    const size_t es = kg_dtype_size(dt);
    kg_tensor in;
    memset(&in, 0, sizeof in);
    in.data = (char *)dev + L->offset * (int64_t)es;
    in.dtype = dt;
    in.ndim = c->ndim;
    memcpy(in.shape, c->shape, sizeof in.shape);
    memcpy(in.strides, L->strides, sizeof in.strides);

    unsigned mask = 0;
    for (int i = 0; i < c->n_axes; i++)
        mask |= 1u << (c->axes[i] < 0 ? c->axes[i] + c->ndim : c->axes[i]);
    if (c->n_axes == 0)
        mask = (1u << c->ndim) - 1;
    int64_t oshape[KG_MAX_DIMS], n_out = 1, red = 1;
    int ond = 0;
    for (int d = 0; d < c->ndim; d++) {
        if ((mask >> d) & 1u) {
            red *= c->shape[d];
            if (c->keepdim)
                oshape[ond++] = 1;
        } else {
            oshape[ond++] = c->shape[d];
            n_out *= c->shape[d];
        }
    }
    const kg_dtype odt = info->out[dt];
    const size_t oes = kg_dtype_size(odt);
    const int want_values = !info->indexed || with_values;
    void *dout = want_values ? kt_alloc(gpu, (size_t)(n_out > 0 ? n_out : 1) * oes) : NULL;
    void *didx = info->indexed ? kt_alloc(gpu, (size_t)(n_out > 0 ? n_out : 1) * 8) : NULL;
    if (dout)
        KT_OK(gpu, kg_memset(gpu, dout, 0xff, (size_t)n_out * oes));
    if (didx)
        KT_OK(gpu, kg_memset(gpu, didx, 0xff, (size_t)n_out * 8));
    kg_tensor out = kg_tensor_contiguous(dout, odt, ond, oshape);
    kg_tensor idx = kg_tensor_contiguous(didx, KG_I64, ond, oshape);
    kg_status st =
        reduce_tuned(op, want_values ? &out : NULL, info->indexed ? &idx : NULL, &in, c->axes, c->n_axes, c->keepdim);
    if (red == 0 && info->nonempty) {
        /* the whole refusal (runtime/reduce_plan.c plan_validate), as the
           CPU test test_reduce_plan pins it: the call's name (argmax with
           values is max_with_indices) and in's shape as [d0,d1,...] */
        char want[512], sh[96];
        int at = snprintf(sh, sizeof sh, "[");
        for (int d = 0; d < c->ndim; d++)
            at += snprintf(sh + at, sizeof sh - (size_t)at, d ? ",%lld" : "%lld", (long long)c->shape[d]);
        snprintf(sh + at, sizeof sh - (size_t)at, "]");
        char call[32];
        if (info->indexed && want_values)
            snprintf(call, sizeof call, "%s_with_indices", info->name + 3);
        else
            snprintf(call, sizeof call, "%s", info->name);
        snprintf(want, sizeof want,
                 "invalid argument: %s of an empty slice: reducing in %s over dims of total size 0 has no result "
                 "(only sum, mean, prod and norm have one)",
                 call, sh);
        cr_expect_eq(st, KG_ERR_INVALID_ARGUMENT, "%s(%s) %s: an empty slice must fail, got %s: %s", info->name,
                     kg_dtype_name(dt), c->name, kg_status_name(st), kg_errmsg(gpu));
        const int same = strcmp(kg_errmsg(gpu), want) == 0;
        cr_expect(same, "%s(%s) %s: message\n  got  '%s'\n  want '%s'", info->name, kg_dtype_name(dt), c->name,
                  kg_errmsg(gpu), want);
        kg_free(gpu, dout);
        kg_free(gpu, didx);
        return st == KG_ERR_INVALID_ARGUMENT && same ? 0 : 1;
    }
    cr_assert_eq(st, KG_OK, "%s(%s) %s: %s (seed %llu)", info->name, kg_dtype_name(dt), c->name, kg_errmsg(gpu),
                 (unsigned long long)kt_seed());
    KT_OK(gpu, kg_sync(gpu));
    void *got = malloc((size_t)(n_out > 0 ? n_out : 1) * oes);
    int64_t *gidx = malloc((size_t)(n_out > 0 ? n_out : 1) * 8);
    if (dout)
        kt_download(gpu, got, dout, (size_t)n_out * oes);
    if (didx)
        kt_download(gpu, gidx, didx, (size_t)n_out * 8);
    int bad = 0;
    if (run_twice && n_out > 0) {
        void *got2 = malloc((size_t)n_out * oes);
        int64_t *gidx2 = malloc((size_t)n_out * 8);
        if (dout)
            KT_OK(gpu, kg_memset(gpu, dout, 0xff, (size_t)n_out * oes));
        if (didx)
            KT_OK(gpu, kg_memset(gpu, didx, 0xff, (size_t)n_out * 8));
        KT_OK(gpu, reduce_tuned(op, want_values ? &out : NULL, info->indexed ? &idx : NULL, &in, c->axes, c->n_axes,
                                c->keepdim));
        KT_OK(gpu, kg_sync(gpu));
        if (dout) {
            kt_download(gpu, got2, dout, (size_t)n_out * oes);
            if (memcmp(got, got2, (size_t)n_out * oes)) {
                bad++;
                cr_log_error("%s(%s) %s: a second run differs in its values", info->name, kg_dtype_name(dt), c->name);
            }
        }
        if (didx) {
            kt_download(gpu, gidx2, didx, (size_t)n_out * 8);
            if (memcmp(gidx, gidx2, (size_t)n_out * 8)) {
                bad++;
                cr_log_error("%s(%s) %s: a second run differs in its indices", info->name, kg_dtype_name(dt), c->name);
            }
        }
        free(got2);
        free(gidx2);
    }
    if (bits_tuning && (last_transv || last_ragged) && dout && n_out > 0) {
        void *got3 = malloc((size_t)n_out * oes);
        const kg_red_tuning *keep = gpu_tuning;
        gpu_tuning = bits_tuning;
        KT_OK(gpu, kg_memset(gpu, dout, 0xff, (size_t)n_out * oes));
        KT_OK(gpu, reduce_tuned(op, &out, info->indexed ? &idx : NULL, &in, c->axes, c->n_axes, c->keepdim));
        KT_OK(gpu, kg_sync(gpu));
        gpu_tuning = keep;
        kt_download(gpu, got3, dout, (size_t)n_out * oes);
        if (memcmp(got, got3, (size_t)n_out * oes)) {
            bad++;
            cr_log_error("%s(%s) %s: the values differ from the bits tuning's plan's", info->name, kg_dtype_name(dt),
                         c->name);
        }
        free(got3);
    }

    /* the reference, output by output, reduced elements in logical order */
    int kd[KG_MAX_DIMS], rd[KG_MAX_DIMS], nk = 0, nr = 0;
    for (int d = 0; d < c->ndim; d++) {
        if ((mask >> d) & 1u)
            rd[nr++] = d;
        else
            kd[nk++] = d;
    }
    const int isf = kt_is_float(dt);
    double *xf = malloc(sizeof(double) * (size_t)(red > 0 ? red : 1));
    double *xa = malloc(sizeof(double) * (size_t)(red > 0 ? red : 1));
    int64_t *xi = malloc(sizeof(int64_t) * (size_t)(red > 0 ? red : 1));
    double rtol, atol;
    kt_tolerance(odt, &rtol, &atol);
    const int mult = strchr(info->combine, '*') != NULL;
    /* A product's bound, (4 sqrt(n) + 16) eps, is one for independent rounding
       errors. Reduced dims of stride 0 (an expanded input) repeat the same
       P = n / R values R times, and a pairwise order then repeats its
       rounding errors coherently in every repeat: R (4 sqrt(P) + 16) eps,
       still under the worst case n eps (TESTING.md, Reductions). */
    double repeats = 1;
    for (int j = 0; j < nr; j++)
        if (L->strides[rd[j]] == 0 && c->shape[rd[j]] > 1)
            repeats *= (double)c->shape[rd[j]];
    /* KG_TEST_QUICK: where the reference reads more than 2^22 elements, a
       seeded sixteenth of the results (and the first and the last) against
       it; the second run is still compared in full above */
    const uint64_t pick = kt_seed() * 0x9e3779b97f4a7c15ull;
    const int sampled = quick() && n_out > 2 && red > 0 && n_out > ((int64_t)1 << 22) / red;
    for (int64_t o = 0; o < n_out; o++) {
        if (sampled && o != 0 && o != n_out - 1 && ((uint64_t)o * 0xbf58476d1ce4e5b9ull + pick) >> 60 != 0)
            continue;
        int64_t base = L->offset, r = o;
        for (int j = nk - 1; j >= 0; j--) {
            base += (r % c->shape[kd[j]]) * L->strides[kd[j]];
            r /= c->shape[kd[j]];
        }
        int64_t ctr[KG_MAX_DIMS] = {0}, off = base;
        for (int64_t e = 0; e < red; e++) {
            if (e > 0) /* step the reduced dims' counter, innermost first */
                for (int j = nr - 1; j >= 0; j--) {
                    off += L->strides[rd[j]];
                    if (++ctr[j] < c->shape[rd[j]])
                        break;
                    off -= ctr[j] * L->strides[rd[j]];
                    ctr[j] = 0;
                }
            if (isf) {
                xf[e] = kt_get(h, dt, off);
                xa[e] = fabs(xf[e]);
            } else {
                xi[e] = kt_get_i(h, dt, off);
            }
        }
        int64_t want_i = -1;
        char msg[160] = "";
        int ok = 1;
        if (isf) {
            const double want = kg_red_refs[op].f(xf, red, &want_i);
            if (want_values) {
                const double g = kt_get(got, odt, o);
                if (info->nonempty) {
                    ok = (isnan(want) && isnan(g)) || g == kt_round(odt, want);
                } else {
                    const double mag = fabs(kg_red_refs[op].f(xa, red, NULL));
                    const double k = mult ? repeats * (4.0 * sqrt((double)red / repeats) + 16.0) : 16.0;
                    ok = kt_close(g, kt_round(odt, want), rtol, atol + k * eps_of_acc(dt) * (isnan(mag) ? 0 : mag));
                }
                if (!ok)
                    snprintf(msg, sizeof msg, "got %.9g want %.9g", g, want);
            }
        } else {
            const int64_t want = kg_red_refs[op].i(xi, red, &want_i);
            if (want_values) {
                /* a bool result is its raw byte, exactly 0 or 1 (kt_get_i
                   reads the 0xFF poison of an unwritten result as true) */
                const int64_t g = odt == KG_BOOL ? (int64_t)((const uint8_t *)got)[o] : kt_get_i(got, odt, o);
                /* the reference wraps in i64; a narrower result wraps too */
                int64_t w = want;
                if (odt != KG_I64) {
                    unsigned char tmp[8];
                    kt_set_i(tmp, odt, 0, want);
                    w = kt_get_i(tmp, odt, 0);
                }
                ok = g == w;
                if (!ok)
                    snprintf(msg, sizeof msg, "got %lld want %lld", (long long)g, (long long)w);
            }
        }
        if (ok && info->indexed && gidx[o] != want_i) {
            ok = 0;
            snprintf(msg, sizeof msg, "index %lld want %lld", (long long)gidx[o], (long long)want_i);
        }
        if (!ok && bad++ < 4)
            cr_log_error("%s(%s) %s: output %lld: %s (seed %llu)", info->name, kg_dtype_name(dt), c->name, (long long)o,
                         msg, (unsigned long long)kt_seed());
    }
    free(xf);
    free(xa);
    free(xi);
    free(got);
    free(gidx);
    kg_free(gpu, dout);
    kg_free(gpu, didx);
    return bad;
}

/* Every case of `cases` for op over every dtype it takes. */
static void check_op(kg_reduce_op op, fill how)
{
    const kg_red_info *info = &kg_red_infos[op];
    uint64_t rng = kt_seed() ^ (uint64_t)op * 0x9e3779b97f4a7c15ull;
    int total = 0;
    for (int dt = 0; dt < KG_DTYPE_COUNT; dt++) {
        if (!(info->dtype_mask & (1u << dt)) || !dtype_wanted((kg_dtype)dt))
            continue;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            if (!kt_take(4)) /* sanitizer mode (kg_test.h): a seeded quarter */
                continue;
            const rcase *c = &cases[i];
            const layout L = layout_of(c);
            const size_t es = kg_dtype_size((kg_dtype)dt);
            void *h = malloc((size_t)L.alloc * es);
            fill_input(h, (kg_dtype)dt, L.alloc, op == KG_RED_PROD ? NEAR_ONE : how, &rng);
            void *dev = kt_alloc(gpu, (size_t)L.alloc * es);
            kt_upload(gpu, dev, h, (size_t)L.alloc * es);
            const int bad = check_case(op, (kg_dtype)dt, c, &L, h, dev, 1);
            cr_expect_eq(bad, 0, "%s(%s) %s: %d wrong results (seed %llu)", info->name, kg_dtype_name(dt), c->name, bad,
                         (unsigned long long)kt_seed());
            total += bad;
            if (info->indexed && i % 4 == 0)
                total += check_case(op, (kg_dtype)dt, c, &L, h, dev, 0); /* indices alone */
            kg_free(gpu, dev);
            free(h);
        }
    }
    cr_assert_eq(total, 0);
}

TestSuite(gpu, .init = gpu_setup, .fini = gpu_teardown, .timeout = 600);

Test(gpu, sum_every_dtype_and_case) { check_op(KG_RED_SUM, RANDOM); }
Test(gpu, mean_every_dtype_and_case) { check_op(KG_RED_MEAN, RANDOM); }
Test(gpu, prod_every_dtype_and_case) { check_op(KG_RED_PROD, RANDOM); }
Test(gpu, norm_every_dtype_and_case) { check_op(KG_RED_NORM, RANDOM); }
Test(gpu, max_every_dtype_and_case) { check_op(KG_RED_MAX, RANDOM); }
Test(gpu, min_every_dtype_and_case) { check_op(KG_RED_MIN, RANDOM); }
Test(gpu, argmax_and_max_with_indices_every_dtype_and_case) { check_op(KG_RED_ARGMAX, RANDOM); }
Test(gpu, argmin_and_min_with_indices_every_dtype_and_case) { check_op(KG_RED_ARGMIN, RANDOM); }
Test(gpu, ties_give_the_first_index)
{
    check_op(KG_RED_ARGMAX, TIES);
    check_op(KG_RED_ARGMIN, TIES);
}
Test(gpu, max_min_of_small_integers_with_many_ties)
{
    check_op(KG_RED_MAX, TIES);
    check_op(KG_RED_MIN, TIES);
}

/* check_case with values under tuning t (NULL: kg_reduce's default path),
   the call run twice and required bitwise equal; gpu_tuning is restore
   afterwards. Expects no wrong result, naming `what` (e.g. "default path")
   and the seed; returns the count. */
static int check_twice_under(const kg_red_tuning *t, const kg_red_tuning *restore, kg_reduce_op op, kg_dtype dt,
                             const rcase *c, const layout *L, const void *h, void *dev, const char *what)
{
    gpu_tuning = t;
    run_twice = 1;
    const int bad = check_case(op, dt, c, L, h, dev, 1);
    run_twice = 0;
    gpu_tuning = restore;
    cr_expect_eq(bad, 0, "%s(%s) %s: %s: %d wrong results (seed %llu)", kg_red_infos[op].name, kg_dtype_name(dt),
                 c->name, what, bad, (unsigned long long)kt_seed());
    return bad;
}

/* A case's input for op over dt in layout L: the host copy h (RANDOM, or
   NEAR_ONE for prod; 5 NaNs planted where the op keeps them: max, min,
   argmax, argmin), its device copy dev, the strided view `in` of it and a
   placeholder out (address 256: for planning and strided_p_result) of n_out
   elements. unstage_input frees both copies. */
typedef struct staged_input {
    void *h, *dev;
    kg_tensor in, out;
    int64_t n_out;
} staged_input;

static staged_input stage_input(kg_reduce_op op, kg_dtype dt, const rcase *c, const layout *L, uint64_t *rng)
{
    const kg_red_info *info = &kg_red_infos[op];
    const size_t es = kg_dtype_size(dt);
    staged_input s;
    s.h = malloc((size_t)L->alloc * es);
    fill_input(s.h, dt, L->alloc, op == KG_RED_PROD ? NEAR_ONE : RANDOM, rng);
    if (info->nonempty) /* NaNs in a few outputs (they propagate) */
        for (int k = 0; k < 5; k++)
            kt_set(s.h, dt, (int64_t)(kt_next(rng) % (uint64_t)L->alloc), NAN);
    s.dev = kt_alloc(gpu, (size_t)L->alloc * es);
    kt_upload(gpu, s.dev, s.h, (size_t)L->alloc * es);
    s.in = kg_tensor_contiguous((char *)s.dev + L->offset * (int64_t)es, dt, c->ndim, c->shape);
    memcpy(s.in.strides, L->strides, sizeof s.in.strides);
    int64_t os[KG_MAX_DIMS];
    const int ond = case_out_shape(c, os);
    s.n_out = 1;
    for (int k = 0; k < ond; k++)
        s.n_out *= os[k];
    s.out = kg_tensor_contiguous((void *)(uintptr_t)256, info->out[dt], ond, os);
    return s;
}

static void unstage_input(staged_input *s)
{
    kg_free(gpu, s->dev);
    free(s->h);
}

/* The seeded random sweep: ranks 1..6, random sizes (odd and even, ones),
   random axis sets (sometimes every axis, sometimes keepdim), contiguous,
   permuted and permuted-and-sliced inputs, every op over a random dtype it
   takes, ties and NaNs planted; every case twice, bitwise equal. Counts the
   classes the planner chose and requires each walking class among them.
   The sweep runs in `parts` tests (Criterion runs them side by side): part
   p runs cases n % parts == p and draws (and plans) all of them, so under
   one KG_TEST_SEED the parts are one sweep (a time-based seed is drawn per
   test process: then each part runs a third of a sweep of its own). */
static void random_sweep(int part, int parts)
{
    static const int64_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 64, 65, 100, 128, 257, 1000};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    uint64_t rng = kt_seed() ^ 0x5eedull;
    int by_class[KG_RED_CLASS_COUNT] = {0}, total = 0, cases_run = 0;
    run_twice = 1;
    const int count = getenv("KG_TEST_QUICK") ? 60 : 400; /* fewer under the sanitizers */
    for (int n = 0; n < count; n++) {
        rcase c;
        memset(&c, 0, sizeof c);
        c.name = "random";
        c.ndim = 1 + (int)(kt_next(&rng) % 6);
        /* bound: the product of the sizes with a 0 counted as 1, which is
           what the allocation (layout_permuted) spans. Bounding the element
           count instead let a 0 (2 / 3) free every later dim: [.., 0, 1000,
           1000] spanned ~10^11 elements, filled on the host for minutes (part
           3 of this sweep never finished in session 20's final run; traced
           at 100% host CPU, 0% GPU) */
        int64_t bound = 1;
        for (int d = 0; d < c.ndim; d++) {
            int64_t s = sizes[kt_next(&rng) % (uint64_t)nsizes];
            while (s > 1 && bound * s > (1 << 17))
                s /= 3;
            c.shape[d] = s;
            bound *= s > 0 ? s : 1;
        }
        const unsigned mask = (unsigned)(kt_next(&rng) % (1u << c.ndim));
        for (int d = 0; d < c.ndim; d++)
            if ((mask >> d) & 1u)
                c.axes[c.n_axes++] = kt_next(&rng) & 1 ? d : d - c.ndim; /* negative axes too */
        c.keepdim = (int)(kt_next(&rng) % 4 == 0);
        const int layout_kind = (int)(kt_next(&rng) % 3); /* dense, permuted, permuted and sliced */
        int perm[KG_MAX_DIMS];
        for (int d = 0; d < c.ndim; d++)
            perm[d] = d;
        if (layout_kind)
            for (int d = c.ndim - 1; d > 0; d--) {
                const int j = (int)(kt_next(&rng) % (uint64_t)(d + 1));
                const int x = perm[d];
                perm[d] = perm[j];
                perm[j] = x;
            }
        const kg_reduce_op op = (kg_reduce_op)(1 + n % (KG_RED_COUNT - 1));
        const kg_red_info *info = &kg_red_infos[op];
        kg_dtype dt;
        do
            dt = (kg_dtype)(kt_next(&rng) % KG_DTYPE_COUNT);
        while (!(info->dtype_mask & (1u << dt)));
        const layout L = layout_permuted(&c, perm, layout_kind == 2);
        const size_t es = kg_dtype_size(dt);
        void *h = malloc((size_t)L.alloc * es);
        const fill how = op == KG_RED_PROD ? NEAR_ONE : n % 3 == 1 ? TIES : RANDOM;
        fill_input(h, dt, L.alloc, how, &rng);
        if (kt_is_float(dt) && info->nonempty && n % 5 == 0) /* NaNs for max, min, argmax, argmin */
            for (int k = 0; k < 3; k++)
                kt_set(h, dt, (int64_t)(kt_next(&rng) % (uint64_t)L.alloc), NAN);
        const int mine = n % parts == part;
        void *dev = NULL;
        if (mine) {
            dev = kt_alloc(gpu, (size_t)L.alloc * es);
            kt_upload(gpu, dev, h, (size_t)L.alloc * es);
        }
        char name[200];
        int at = snprintf(name, sizeof name, "random #%d [", n);
        for (int d = 0; d < c.ndim; d++)
            at += snprintf(name + at, sizeof name - (size_t)at, d ? ",%lld" : "%lld", (long long)c.shape[d]);
        at += snprintf(name + at, sizeof name - (size_t)at, "] mask 0x%x layout %d perm", mask, layout_kind);
        for (int d = 0; d < c.ndim; d++)
            at += snprintf(name + at, sizeof name - (size_t)at, " %d", perm[d]);
        c.name = name;
        /* the class it takes */
        {
            kg_tensor in;
            memset(&in, 0, sizeof in);
            in.data = dev ? dev : (void *)((uintptr_t)1 << 45); /* aligned as kt_alloc's */
            in.dtype = dt;
            in.ndim = c.ndim;
            memcpy(in.shape, c.shape, sizeof in.shape);
            memcpy(in.strides, L.strides, sizeof in.strides);
            int64_t os[KG_MAX_DIMS];
            const int k = case_out_shape(&c, os);
            kg_tensor o = kg_tensor_contiguous((void *)((uintptr_t)1 << 46), info->out[dt], k, os);
            kg_tensor x = kg_tensor_contiguous((void *)((uintptr_t)1 << 47), KG_I64, k, os);
            kg_red_plan p;
            if (kg_reduce_plan_tuned(gpu, op, info->indexed ? NULL : &o, info->indexed ? &x : NULL, &in, c.axes,
                                     c.n_axes, c.keepdim, 132, gpu_tuning, &p) == KG_OK &&
                !p.empty)
                by_class[p.args.deep ? (p.cls == KG_RED_COLS ? KG_RED_COLSN : KG_RED_NESTN) : p.cls]++;
        }
        if (!mine) {
            free(h);
            continue;
        }
        const int bad = check_case(op, dt, &c, &L, h, dev, n % 2);
        cr_expect_eq(bad, 0, "%s(%s) %s: %d wrong results (seed %llu)", info->name, kg_dtype_name(dt), c.name, bad,
                     (unsigned long long)kt_seed());
        total += bad;
        cases_run++;
        kg_free(gpu, dev);
        free(h);
    }
    run_twice = 0;
    cr_log_info("random sweep part %d of %d: %d cases run; of all %d: rows %d cols %d strided32 %d strided64 %d packed "
                "%d nest %d tile %d flat %d; "
                "narrow walks: cols %d nest %d",
                part + 1, parts, cases_run, count, by_class[KG_RED_ROWS], by_class[KG_RED_COLS],
                by_class[KG_RED_STRIDED32], by_class[KG_RED_STRIDED64], by_class[KG_RED_PACKED], by_class[KG_RED_NEST],
                by_class[KG_RED_TILE], by_class[KG_RED_FLAT], by_class[KG_RED_COLSN], by_class[KG_RED_NESTN]);
    cr_assert_eq(total, 0);
    cr_assert_gt(by_class[KG_RED_ROWS], 0);
    cr_assert_gt(by_class[KG_RED_COLS] + by_class[KG_RED_COLSN], 0);
    cr_assert_gt(by_class[KG_RED_NEST] + by_class[KG_RED_NESTN], 0);
    /* the strided class takes only sliced nests of five reduced groups and
       more, about one case in 300 of this kind: a sweep need not draw one
       (the full sweep of 400 on the H200 at 20:53 on 2026-12-01, a
       time-based seed, drew none), so it is not required here; the plan
       checker (test_reduce_plan) covers its plans */
    if (by_class[KG_RED_STRIDED32] + by_class[KG_RED_STRIDED64] == 0)
        cr_log_info("random sweep: this seed drew no case of the strided class");
}

Test(gpu, random_sweep_of_ranks_axes_layouts_ops_and_dtypes_twice_bitwise, .timeout = 900) { random_sweep(0, 3); }
Test(gpu, random_sweep_of_ranks_axes_layouts_ops_and_dtypes_twice_bitwise_part_2, .timeout = 900)
{
    random_sweep(1, 3);
}
Test(gpu, random_sweep_of_ranks_axes_layouts_ops_and_dtypes_twice_bitwise_part_3, .timeout = 900)
{
    random_sweep(2, 3);
}

/* The defaults of the afternoon of 2026-12-01 (before the column modes and
   the one-wave splits) with one path on each */
#define AFTERNOON_TUNING                                                                                               \
    .cols_lanes = KG_RED_THREADS, .cols_split_lanes = 64, .cols_split_units_per_sm = 8, .cols_split_pow2 = 1,          \
    .pack_rows = 1, .packed_blocks_per_sm = KG_RED_MIN_BLOCKS, .blocks_per_sm = 16

/* The kernels under other plans than the default picks: columns with 128
   and 256 lanes across (one lane down each column, with and without splits),
   forced split counts, packed rows in a grid of 16 blocks per SM, the
   plans of before the sweep, columns over short reduced runs, narrow walks,
   tiles, column modes in narrow tiles, flat plans with many splits. */
static void other_tunings(int part, int parts)
{
    static const kg_red_tuning tunings[] = {
        {.cols_lanes = 256,
         .cols_split_lanes = 256,
         .cols_split_units_per_sm = 8,
         .pack_rows = 1,
         .packed_blocks_per_sm = 16,
         .blocks_per_sm = 16},
        {.cols_lanes = 128,
         .cols_split_lanes = 128,
         .cols_split_units_per_sm = 16,
         .cols_split_pow2 = 1,
         .blocks_per_sm = 2},
        {.cols_lanes = 256, .cols_split_lanes = 256, .cols_split_units_per_sm = 8, .blocks_per_sm = 16, .splits = 3},
        {.cols_lanes = 32, .cols_split_lanes = 32, .cols_split_units_per_sm = 16, .blocks_per_sm = 16},
        /* the column run path */
        {AFTERNOON_TUNING, .cols_runs = 1},
        /* the narrow walks (16 loads in flight, 32-bit walk arithmetic) */
        {AFTERNOON_TUNING, .cols_runs = 1, .deep_walk = 1},
        /* tiles of short reduced runs, also small ones */
        {AFTERNOON_TUNING, .tile = 2, .tile_max_bytes = 512, .tile_min_elems = 1},
        /* the column modes (several columns per lane, 16-byte 2-byte vectors)
           in narrow tiles, two waves of split blocks, tiles of rows up to
           1 KB with bank-friendly lane groups, index reductions too */
        {.cols_lanes = 32,
         .cols_split_lanes = 32,
         .cols_split_units_per_sm = 16,
         .blocks_per_sm = 16,
         .cols_wide = 1,
         .cols_strided = 1,
         .split_waves = 2,
         .tile = 2,
         .tile_max_bytes = 1024,
         .tile_min_elems = 1,
         .tile_banks = 1},
        /* the flat class split into many short units (each its own phase in
           the 16-byte vectors), its last block folding the partials in
           several rounds */
        {.cols_lanes = KG_RED_THREADS,
         .cols_split_lanes = 64,
         .cols_split_units_per_sm = 4,
         .cols_split_units_per_sm_vec = 2,
         .cols_split_pow2 = 1,
         .pack_rows = 1,
         .packed_blocks_per_sm = KG_RED_MIN_BLOCKS,
         .blocks_per_sm = 16,
         .cols_runs = 1,
         .deep_walk = 1,
         .cols_wide = 1,
         .cols_strided = 1,
         .split_waves = 1,
         .flat = 1,
         .flat_units_per_sm = 64,
         .flat_partials = 4096,
         .flat_min_elems = 1},
    };
    const kg_reduce_op ops[] = {KG_RED_SUM, KG_RED_ARGMAX, KG_RED_MIN};
    /* KG_TEST_QUICK (a time-capped run): the last two tunings, the paths
       most recently added (column modes and tiles, the flat class), one op
       of the three each */
    const size_t nt = sizeof tunings / sizeof tunings[0];
    for (size_t t = getenv("KG_TEST_QUICK") ? nt - 2 : 0; t < nt; t++) {
        if ((int)(t % (size_t)parts) != part)
            continue;
        gpu_tuning = &tunings[t];
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
            if (!quick_skips((int)o, (int)t))
                check_op(ops[o], t % 2 ? TIES : RANDOM);
    }
    gpu_tuning = env_tuning;
}

/* Every value reduction over every dtype and case of the list with the
   flat class wherever it applies (the default takes it only where its
   units fill the GPU, inputs far above the list's), split into many short
   units: as the 20:53 H200 run tested it (its default then took flat
   wherever it applied). */
Test(gpu, value_reductions_under_the_flat_class_every_dtype_and_case)
{
    kg_red_tuning t = kg_red_tuning_default;
    t.flat_min_outer = 0;
    t.flat_min_pct = 0;
    t.flat_min_pct2 = 0;
    t.flat_units_per_sm = 16;
    t.flat_min_elems = 64;
    gpu_tuning = &t;
    const kg_reduce_op ops[] = {KG_RED_SUM, KG_RED_MEAN, KG_RED_PROD, KG_RED_NORM, KG_RED_MAX, KG_RED_MIN};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        if (!quick_skips((int)o, 0))
            check_op(ops[o], o % 2 ? TIES : RANDOM);
    gpu_tuning = env_tuning;
}

/* Every reduction over every dtype and case of the list with 2-byte
   vectors loaded as 32-bit words (cols_words: column modes WIDE32 and
   VEC32; nest_words: NEST vectors), the flat class off so that more short
   rows take columns; the split-heavy half with narrow column tiles. */
static void words_tunings(int part)
{
    kg_red_tuning t = kg_red_tuning_default;
    t.cols_words = 1;
    t.nest_words = 1;
    t.flat = 0;
    if (part) {
        t.cols_lanes = 32;
        t.cols_split_lanes = 32;
        t.cols_split_units_per_sm = 16;
        t.blocks_per_sm = 16;
    }
    gpu_tuning = &t;
    const kg_reduce_op ops[] = {KG_RED_SUM, KG_RED_MEAN, KG_RED_PROD,   KG_RED_NORM,
                                KG_RED_MAX, KG_RED_MIN,  KG_RED_ARGMAX, KG_RED_ARGMIN};
    for (size_t o = 0, k = 0; o < sizeof ops / sizeof ops[0]; o++)
        if (((int)(o % 2) == part || part > 1) && !quick_skips((int)k++, part))
            check_op(ops[o], o % 3 == 2 ? TIES : RANDOM);
    gpu_tuning = env_tuning;
}
Test(gpu, two_byte_vectors_as_32_bit_words_every_op_dtype_and_case) { words_tunings(0); }
Test(gpu, two_byte_vectors_as_32_bit_words_split_in_narrow_tiles) { words_tunings(1); }

/* Each op of ops[0..n) (those of index parity `half`; -1: every one) over
   every dtype and case under tuning t, every call run twice, bitwise equal
   (KG_TEST_QUICK: one in three of them, quick_skips with rotation rot). */
static void ops_twice_under(const kg_red_tuning *t, const kg_reduce_op *ops, size_t n, int half, int rot)
{
    gpu_tuning = t;
    run_twice = 1;
    for (size_t o = 0, k = 0; o < n; o++)
        if ((half < 0 || (int)(o % 2) == half) && !quick_skips((int)k++, rot))
            check_op(ops[o], o % 3 == 2 ? TIES : RANDOM);
    run_twice = 0;
    gpu_tuning = env_tuning;
}
static const kg_reduce_op value_ops[] = {KG_RED_SUM, KG_RED_MEAN, KG_RED_PROD, KG_RED_NORM, KG_RED_MAX, KG_RED_MIN};

/* ops_twice_under, then requires that some call took the plans under test
   (*launches, counted by reduce_tuned; sanitizer mode (kg_test.h) samples
   the cases, so there only the whole test must reach them). */
static void ops_twice_reaching(const kg_red_tuning *t, const kg_reduce_op *ops, size_t n, int half, int rot,
                               int *launches, const char *what)
{
    /* the tests of the older classes keep the cases they reach: RUNT and
       SEGW (default since session 25) stay off there, as in the chain they
       were written for; the default path's tests run with them */
    kg_red_tuning own = *t;
    if (launches != &runt_launches && launches != &segw_launches)
        own.run_tiles = own.seg_rows = 0;
    *launches = 0;
    ops_twice_under(&own, ops, n, half, rot);
    cr_log_info("%d launches of %s", *launches, what);
    if (!kt_sanitizer())
        cr_assert_gt(*launches, 0, "no case took %s", what);
}

/* Every reduction over every dtype and case with one lane per NEST output
   and 4 outputs per lane (kg_red_nest_multi), on
   every NEST plan whatever its size (no fill rule, every length), narrow
   column tiles and short (part 1: up to 4096 elements) contiguous rows
   sent to NEST too (one lane for at most 4096 positions);
   every call run twice, bitwise equal; half the ops each (half 0, 1). */
static void multi_tunings(int part, int half)
{
    kg_red_tuning t = kg_red_tuning_default;
    t.nest_multi = 4;
    t.nest_multi_lanes = 0;
    t.nest_g1_items = 4096; /* (one lane walking 2^20 elements takes long) */
    t.cols_min_cols = part ? 64 : 16;
    t.rows_multi = part ? 4096 : 40;
    const kg_reduce_op ops[] = {KG_RED_SUM, KG_RED_MEAN, KG_RED_PROD,   KG_RED_NORM,
                                KG_RED_MAX, KG_RED_MIN,  KG_RED_ARGMAX, KG_RED_ARGMIN};
    ops_twice_under(&t, ops, sizeof ops / sizeof ops[0], half, part);
}
/* ... and with nest_multi_plain: value reductions' lanes of several
   outputs in the plain walk of the 4-block kernel (NESTO), every call
   twice, bitwise equal (index reductions keep the narrow walk). */
static void multi_plain_tunings(int part)
{
    kg_red_tuning t = kg_red_tuning_default;
    t.nest_multi = 4;
    t.nest_multi_lanes = 0;
    t.nest_g1_items = 4096;
    t.cols_min_cols = part ? 64 : 16;
    t.rows_multi = part ? 4096 : 40;
    t.nest_multi_plain = 1;
    ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], -1, part, &multi_plain_launches,
                       "plain-walk NEST plans of several outputs per lane");
}
Test(gpu, four_outputs_per_lane_in_the_plain_walk_every_value_op_dtype_and_case) { multi_plain_tunings(0); }
Test(gpu, four_outputs_per_lane_in_the_plain_walk_all_rows_and_narrow_columns) { multi_plain_tunings(1); }
Test(gpu, four_outputs_per_lane_every_op_dtype_and_case) { multi_tunings(0, 0); }

/* Every value reduction over every dtype and case with column runs (one
   element per load) in the plain walk (cols_runs_plain; the COLS kernels
   of cols_occ where the grid holds them), every call twice, bitwise equal. */
Test(gpu, column_runs_in_the_plain_walk_every_value_op_dtype_and_case)
{
    kg_red_tuning t = kg_red_tuning_default;
    t.cols_runs_plain = 1;
    t.cols_occ_blocks = 0; /* the 4-block kernel on every grid */
    ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], -1, 0, &runs_plain_launches,
                       "column runs in the plain walk");
}
Test(gpu, four_outputs_per_lane_every_op_dtype_and_case_part_2) { multi_tunings(0, 1); }
Test(gpu, four_outputs_per_lane_all_rows_and_narrow_columns_every_op_dtype_and_case) { multi_tunings(1, 0); }
Test(gpu, four_outputs_per_lane_all_rows_and_narrow_columns_every_op_dtype_and_case_part_2) { multi_tunings(1, 1); }

/* Every value reduction over every dtype and case with the walking
   classes' kernels at more blocks per multiprocessor (cols_occ: COLSO at 4
   or COLSP at 3, on every COLS plan whatever its grid; nest_occ: NESTO;
   narrow_occ: COLSNO, NESTNO) wherever they apply (their walk in 32-bit
   arithmetic), every call twice, bitwise equal; parts 2 and 3 in narrow
   split column tiles with two waves of split blocks; index reductions
   keep their kernels (the planner never takes these for them). */
static void occ_tunings(int part)
{
    kg_red_tuning t = kg_red_tuning_default;
    t.cols_occ = part < 2 ? 4 : 3;
    t.cols_occ_blocks = 0; /* every COLS plan, whatever its grid and accumulator */
    t.cols_occ_wide = 1;
    t.nest_occ = 4;
    t.narrow_occ = 4;
    if (part >= 2) {
        t.cols_lanes = 32;
        t.cols_split_lanes = 32;
        t.cols_split_units_per_sm = 16;
        t.split_waves = 2;
    }
    ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], part % 2, part / 2, &occ_launches,
                       "plans at more blocks per multiprocessor");
}
Test(gpu, walks_at_4_blocks_per_sm_every_value_op_dtype_and_case) { occ_tunings(0); }
Test(gpu, walks_at_4_blocks_per_sm_every_value_op_dtype_and_case_part_2) { occ_tunings(1); }
Test(gpu, walks_at_3_and_4_blocks_per_sm_in_narrow_split_tiles) { occ_tunings(2); }
Test(gpu, walks_at_3_and_4_blocks_per_sm_in_narrow_split_tiles_part_2) { occ_tunings(3); }

/* Every value reduction over every dtype and case with NEST's reduced runs
   in covering 16-byte vectors (nest_cover, templates/reduce_cover.cuh)
   wherever they apply, down to runs of 2 elements and over short rows
   (part 0: nest_cover_rows; parts 0 and 2 with nest_cover_whole on every
   run) or at the
   default's least run (part 1, the default's plans; part 2 in the 2-block
   kernel, nest_cover_occ 0), every call twice,
   bitwise equal; index reductions keep their plans. */
static void cover_tunings(int part)
{
    kg_red_tuning t = kg_red_tuning_default;
    t.nest_cover = 1;
    t.nest_cover_min = part == 0 ? 2 : 0;
    t.nest_cover_occ = part != 2;
    t.nest_cover_rows = part == 0; /* short contiguous rows too */
    if (part != 1) {               /* whole vectors pushed without a test per element, every run */
        t.nest_cover_whole = 1;
        t.nest_cover_whole_bytes = 0;
        t.nest_cover_whole_es = 0;
    }
    ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], -1, part, &cover_launches,
                       "NEST plans over covering vectors");
}
Test(gpu, nest_runs_in_covering_vectors_every_value_op_dtype_and_case) { cover_tunings(0); }
Test(gpu, nest_runs_in_covering_vectors_at_the_default_least_run) { cover_tunings(1); }
Test(gpu, nest_runs_in_covering_vectors_in_the_2_block_kernel) { cover_tunings(2); }

/* Every reduction over every dtype and case with column splits that fill
   whole waves of the kernel's resident blocks (cols_split_fill: part 0 one
   wave, 16-lane split tiles where the fill cuts many splits; part 1 four
   waves in 8-lane split tiles, so that the small cases split too), every
   call twice, bitwise equal. */
static void fill_tunings(int part)
{
    kg_red_tuning t = kg_red_tuning_default;
    t.cols_split_fill = part ? 4 : 1;
    t.cols_split_few = part ? 8 : 16;
    const kg_reduce_op ops[] = {KG_RED_SUM, KG_RED_MEAN, KG_RED_PROD,   KG_RED_NORM,
                                KG_RED_MAX, KG_RED_MIN,  KG_RED_ARGMAX, KG_RED_ARGMIN};
    ops_twice_reaching(&t, ops, sizeof ops / sizeof ops[0], -1, part, &fill_launches, "split column plans");
}
Test(gpu, column_splits_that_fill_a_wave_every_op_dtype_and_case) { fill_tunings(0); }
Test(gpu, column_splits_that_fill_four_waves_in_narrow_tiles_every_op_dtype_and_case) { fill_tunings(1); }

/* Every value reduction over every dtype and case with FLAT's warp per unit
   (flat_warp, kernel FLATW) wherever it applies (a period of at most 32
   lanes; any slab, any count of outer positions; level 1: slabs of rows x
   columns, 2: also runs under the columns and blocks at a stride; occ 4:
   the kernel at 4 blocks per multiprocessor, FLATWO),
   every call twice, bitwise equal; index reductions keep their plans. */
static void flatw_tunings(int level, int occ)
{
    kg_red_tuning t = kg_red_tuning_default;
    t.flat_warp = level;
    t.flat_warp_min = 0;
    t.flat_warp_max = INT32_MAX / 2;
    t.flat_warp_units = 0;
    t.flat_warp_occ = occ;
    ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], -1, level,
                       occ ? &flatwo_launches : &flatw_launches,
                       occ ? "flat plans with a warp per unit at 4 blocks per SM" : "flat plans with a warp per unit");
}
Test(gpu, flat_with_a_warp_per_unit_every_value_op_dtype_and_case) { flatw_tunings(1, 0); }
Test(gpu, flat_with_a_warp_per_unit_over_runs_and_strided_blocks_every_value_op_dtype_and_case) { flatw_tunings(2, 0); }
Test(gpu, flat_with_a_warp_per_unit_at_4_blocks_per_sm_every_value_op_dtype_and_case) { flatw_tunings(2, 4); }

/* Every value reduction over every dtype and case with SLAB (tuning slab,
   templates/reduce_slab.cuh) wherever it applies (any count of units, any
   element size and rows), every call twice, bitwise equal; index reductions
   and 8-byte elements keep their plans. */
Test(gpu, slabs_of_narrow_columns_in_tiles_every_value_op_dtype_and_case)
{
    kg_red_tuning t = kg_red_force_slab();
    ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], -1, 1, &slab_launches, "slab plans");
}

/* Every value reduction over every dtype and case with TRANS (tuning trans,
   templates/reduce_trans.cuh) wherever it applies (any count of units, any
   side), every call twice, bitwise equal; index reductions and 8-byte
   elements keep their plans. */
Test(gpu, scattered_outputs_in_tiles_every_value_op_dtype_and_case)
{
    kg_red_tuning t = kg_red_force_trans();
    ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], -1, 1, &trans_launches, "trans plans");
}

/* ... with session 38's extensions (kg_red_force_trans_ext: reduced runs
   under the ki side, ko sides of two dims) wherever they apply, every call
   twice, bitwise equal; both extensions launched. */
Test(gpu, scattered_outputs_over_reduced_runs_and_two_dim_sides_every_value_op_dtype_and_case)
{
    kg_red_tuning t = kg_red_force_trans_ext();
    trans_run_launches = trans_ko2_launches = 0;
    ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], -1, 1, &trans_launches, "trans plans");
    cr_log_info("%d trans_run launches, %d trans_ko2 launches", trans_run_launches, trans_ko2_launches);
    if (!kt_sanitizer()) {
        cr_assert_gt(trans_run_launches, 0, "no case took TRANS over a reduced run");
        cr_assert_gt(trans_ko2_launches, 0, "no case took TRANS with a ko side of two dims");
    }
}

static void *strided_p_result(kg_reduce_op op, const kg_tensor *in, const rcase *c, const kg_red_tuning *t,
                              int64_t n_out, const kg_tensor *shape_of_out);

/* TRANSV on the default path (trans_vec 128 since session 35's H100 round
   s35r2): bf16 cases kg_reduce plans in vectors, a chained input-contiguous
   side of 1023 or 1035 outputs (5 tiles of 248, rows off the 16-byte grid)
   under walk strides 0, 4 and 6 elements off 8 and an odd one (each
   position's vectors in 16-, 8- or 4-byte loads, or element by element),
   up to KG_RED_TRANSV_POS (16) positions. */
static const rcase transv_default_cases[] = {
    {"column-major (33,31,544,5) 3 default trans_vec, walk stride 0 mod 8", 4, {33, 31, 544, 5}, 1, {3}, 0, COLMAJOR},
    {"column-major (33,31,548,5) 3 default trans_vec, walk stride 4 mod 8", 4, {33, 31, 548, 5}, 1, {3}, 0, COLMAJOR},
    {"column-major (9,115,530,16) 3 default trans_vec, walk stride 6 mod 8", 4, {9, 115, 530, 16}, 1, {3}, 0, COLMAJOR},
    {"column-major (33,31,547,3) 3 default trans_vec, odd walk stride", 4, {33, 31, 547, 3}, 1, {3}, 0, COLMAJOR},
};

/* Every value op over transv_default_cases through kg_reduce (no tuning):
   the default plan is TRANSV (kg_reduce_plan: TRANS, args.vec 1) and
   trans_vec 0's (trans_vec_f16 0 for f16) is TRANS's own kernel; the default path's values equal
   trans_vec 0's bit for bit and the reference, each call twice, bitwise
   equal (NaNs planted for max and min). */
static void transv_default_path(kg_dtype dt)
{
    kg_red_tuning t0 = kg_red_tuning_default;
    t0.trans_vec = 0; /* TRANS's own kernel, as before s35r2 */
    t0.trans_vec_f16 = 0;
    const size_t ncases = sizeof transv_default_cases / sizeof transv_default_cases[0];
    uint64_t rng = kt_seed() ^ 0x7472616e7376ull;
    int sms = 0, total = 0, calls = 0, in_vectors = 0;
    kg_device_info(gpu, NULL, 0, NULL, NULL, &sms);
    const kg_red_tuning *keep = gpu_tuning;
    for (size_t o = 0; o < sizeof value_ops / sizeof value_ops[0]; o++) {
        const kg_reduce_op op = value_ops[o];
        const kg_red_info *info = &kg_red_infos[op];
        if (!(info->dtype_mask & (1u << dt)) || !dtype_wanted(dt))
            continue;
        for (size_t i = 0; i < ncases; i++) {
            if (!kt_take(4)) /* sanitizer mode: a seeded quarter */
                continue;
            const rcase *c = &transv_default_cases[i];
            const layout L = layout_of(c);
            const size_t oes = kg_dtype_size(info->out[dt]);
            staged_input s = stage_input(op, dt, c, &L, &rng);
            /* the plans: kg_reduce's (the default tuning) and trans_vec 0's */
            kg_red_plan pd, p0;
            cr_assert_eq(kg_reduce_plan(gpu, op, &s.out, NULL, &s.in, c->axes, c->n_axes, c->keepdim, sms, &pd), KG_OK,
                         "%s", kg_errmsg(gpu));
            cr_assert_eq(
                kg_reduce_plan_tuned(gpu, op, &s.out, NULL, &s.in, c->axes, c->n_axes, c->keepdim, sms, &t0, &p0),
                KG_OK, "%s", kg_errmsg(gpu));
            const int vec = pd.cls == KG_RED_TRANS && pd.args.vec == 1;
            cr_expect(vec, "%s(%s) %s: the default plan is not TRANSV (class %d vec %d, %d SMs)", info->name,
                      kg_dtype_name(dt), c->name, (int)pd.cls, (int)pd.args.vec, sms);
            cr_expect(p0.cls == KG_RED_TRANS && p0.args.vec == 0,
                      "%s(%s) %s: trans_vec 0 is not TRANS (class %d vec %d)", info->name, kg_dtype_name(dt), c->name,
                      (int)p0.cls, (int)p0.args.vec);
            total += !vec || p0.cls != KG_RED_TRANS || p0.args.vec != 0;
            in_vectors += vec;
            /* TRANS's bits, value for value */
            void *rd = strided_p_result(op, &s.in, c, NULL, s.n_out, &s.out); /* the default path */
            void *r0 = strided_p_result(op, &s.in, c, &t0, s.n_out, &s.out);
            const int eq = memcmp(rd, r0, (size_t)s.n_out * oes) == 0;
            cr_expect(eq, "%s(%s) %s: the default path's values differ from trans_vec 0's (TRANS's) bits", info->name,
                      kg_dtype_name(dt), c->name);
            total += !eq;
            free(rd);
            free(r0);
            /* the float64 reference on the default path, each call twice and bitwise equal */
            const int bad = check_twice_under(NULL, keep, op, dt, c, &L, s.h, s.dev, "default path");
            total += bad;
            calls++;
            unstage_input(&s);
        }
    }
    cr_log_info("%s default path (trans_vec %d, trans_vec_f16 %d, %d SMs): %d calls, %d planned in vectors",
                kg_dtype_name(dt), kg_red_tuning_default.trans_vec, kg_red_tuning_default.trans_vec_f16, sms, calls,
                in_vectors);
    cr_assert_eq(total, 0);
    cr_assert(kt_sanitizer() || !dtype_wanted(dt) || in_vectors > 0, "no %s call planned TRANSV", kg_dtype_name(dt));
}

/* Every value reduction over every dtype and case with TRANS wherever it
   applies and, over bf16 and f16, in 16-byte vectors (trans_vec 1 and
   trans_vec_f16 1, kernel TRANSV, templates/reduce_transv.cuh: any
   input-contiguous side; the default's trans_vec is 128 since session 35's
   round s35r2, trans_vec_f16 128 since its round s35r4), every call twice,
   bitwise equal, against the reference, and bit for bit the values of
   TRANS's plan (trans_vec 0: the same accumulation order); index
   reductions and 8-byte elements keep their plans. Then the default path
   (transv_default_path) over bf16 and over f16 (trans_vec_f16 128 by
   default since round s35r4). */
Test(gpu, scattered_bf16_outputs_in_vectors_every_value_op_dtype_and_case)
{
    kg_red_tuning t = kg_red_force_transv(), tt = kg_red_force_trans();
    tt.run_tiles = tt.seg_rows = 0; /* as ops_twice_reaching plans t */
    bits_tuning = &tt;              /* and TRANS's bits, value for value (kg_red_force_trans: trans_vec 0) */
    transv_f16_launches = 0;
    ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], -1, 1, &transv_launches,
                       "trans plans in vectors");
    cr_log_info("%d launches of f16 trans plans in vectors", transv_f16_launches);
    cr_assert(kt_sanitizer() || !dtype_wanted(KG_F16) || transv_f16_launches > 0, "no f16 case took TRANSV");
    bits_tuning = NULL;
    transv_default_path(KG_BF16);
    /* f16's default path (trans_vec_f16 128 since round s35r4) */
    transv_default_path(KG_F16);
}

/* Every value reduction over every dtype and case with two column tiles
   per unit (cols_pair, kernel COLSQ) wherever it applies (any count of
   rows, the 4-block kernel on every COLS grid) and vector stores of the
   results (cols_vstore; part 1: vector stores alone, in every COLS kernel
   they reach), every call twice, bitwise equal; index reductions keep
   their plans. */
static void pair_tunings(int part)
{
    kg_red_tuning t = kg_red_tuning_default;
    t.cols_occ_blocks = 0;
    t.cols_pair = part == 0 ? 2 : 0;
    t.cols_pair_rows = 1 << 30;
    t.cols_vstore = 2;
    ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], -1, part,
                       part ? &vstore_launches : &pair_launches,
                       part ? "column plans with vector stores" : "column plans of two tiles per unit");
}
Test(gpu, columns_two_tiles_per_unit_every_value_op_dtype_and_case) { pair_tunings(0); }
Test(gpu, columns_with_vector_stores_every_value_op_dtype_and_case) { pair_tunings(1); }

/* Every value reduction over every dtype and case with FLAT wherever it
   applies (many short split units, as value_reductions_under_the_flat_class)
   and its 2-byte elements loaded as 32-bit words (flat_words,
   templates/reduce_flat_words.cuh), every call twice, bitwise equal. */
Test(gpu, flat_of_2_byte_elements_as_32_bit_words_every_value_op_dtype_and_case)
{
    kg_red_tuning t = kg_red_tuning_default;
    t.flat_words = 1;
    t.flat_warp = 0;
    t.flat_units_per_sm = 64;
    t.flat_partials = 4096;
    t.flat_min_elems = 1;
    t.flat_min_outer = 0;
    t.flat_min_pct = 0;
    t.flat_min_pct2 = 0;
    ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], -1, 2, &flat_words_launches,
                       "flat plans in words");
}

/* Every value reduction over every dtype and case with FLAT wherever it
   applies at about one unit a multiprocessor and few partials (units per
   SM 1, flat_partials 256: the planner's own cap is what flat_fill lifts),
   then flat_fill (the default's 75 since s35r3): plans of fewer units than 75% of the
   multiprocessors take splits up to flat_fill_to percent of them (part 0:
   100, the candidate; part 1: 800, several passes of the last block's fold
   of partials), every call twice, bitwise equal, against the reference;
   some call must have taken more splits than the same call without
   flat_fill. Part 0 then takes the default path (flat_fill_default_path). */
static void flat_fill_tunings(int part)
{
    kg_red_tuning t = kg_red_tuning_default;
    t.flat_warp = 0;
    t.flatw_kept = 0;
    t.flat_units_per_sm = 1;
    t.flat_partials = 256;
    t.flat_min_elems = 64;
    t.flat_min_outer = 0;
    t.flat_min_pct = 0;
    t.flat_min_pct2 = 0;
    t.flat_fill = 75;
    t.flat_fill_to = part ? 800 : 100;
    ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], -1, part, &flat_fill_launches,
                       "flat plans with splits added by flat_fill");
}
/* flat_fill on the default path (75 with flat_fill_to 100 since session
   35's H100 round s35r3): f16 / bf16 cases whose FLAT plan is capped by
   flat_partials / columns below 75% of the multiprocessors (64 splits of
   128 columns, 90 of 91) and that kg_reduce plans with the splits filled
   (132 on an H100; test_reduce_plan replays them). */
static const rcase flat_fill_default_cases[] = {
    {"(34000,128) 0 default flat_fill, 128 columns", 2, {34000, 128}, 1, {0}, 0, DENSE},
    {"(3,12000,128) 0,1 default flat_fill, coalesced rows", 3, {3, 12000, 128}, 2, {0, 1}, 0, DENSE},
    {"(48000,13,7) 0 default flat_fill, 91 columns", 3, {48000, 13, 7}, 1, {0}, 0, DENSE},
};

/* Every value op over flat_fill_default_cases in f16 and bf16 through
   kg_reduce (no tuning): the default plan is FLAT with more splits than
   flat_fill 0's, and its values match the reference, each call twice,
   bitwise equal (NaNs planted for max and min). */
static void flat_fill_default_path(void)
{
    kg_red_tuning t0 = kg_red_tuning_default;
    t0.flat_fill = 0; /* the plans of before s35r3 */
    const kg_dtype dts[] = {KG_BF16, KG_F16};
    const size_t ncases = sizeof flat_fill_default_cases / sizeof flat_fill_default_cases[0];
    uint64_t rng = kt_seed() ^ 0x666c617466696c6cull;
    int sms = 0, total = 0, calls = 0, filled = 0;
    kg_device_info(gpu, NULL, 0, NULL, NULL, &sms);
    const kg_red_tuning *keep = gpu_tuning;
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t o = 0; o < sizeof value_ops / sizeof value_ops[0]; o++) {
            const kg_dtype dt = dts[d];
            const kg_reduce_op op = value_ops[o];
            const kg_red_info *info = &kg_red_infos[op];
            if (!(info->dtype_mask & (1u << dt)) || !dtype_wanted(dt))
                continue;
            for (size_t i = 0; i < ncases; i++) {
                if (!kt_take(4)) /* sanitizer mode: a seeded quarter */
                    continue;
                const rcase *c = &flat_fill_default_cases[i];
                const layout L = layout_of(c);
                staged_input s = stage_input(op, dt, c, &L, &rng);
                /* the plans: kg_reduce's (the default tuning) and flat_fill 0's */
                kg_red_plan pd, p0;
                cr_assert_eq(kg_reduce_plan(gpu, op, &s.out, NULL, &s.in, c->axes, c->n_axes, c->keepdim, sms, &pd),
                             KG_OK, "%s", kg_errmsg(gpu));
                cr_assert_eq(
                    kg_reduce_plan_tuned(gpu, op, &s.out, NULL, &s.in, c->axes, c->n_axes, c->keepdim, sms, &t0, &p0),
                    KG_OK, "%s", kg_errmsg(gpu));
                const int more = pd.cls == KG_RED_FLAT && pd.args.group != 32 && p0.cls == KG_RED_FLAT &&
                                 pd.args.splits > p0.args.splits;
                cr_expect(more, "%s(%s) %s: the default plan did not fill (class %d / %d, splits %d / %d, %d SMs)",
                          info->name, kg_dtype_name(dt), c->name, (int)pd.cls, (int)p0.cls, (int)pd.args.splits,
                          (int)p0.args.splits, sms);
                filled += more;
                /* the float64 reference on the default path, each call twice and bitwise equal */
                const int bad = check_twice_under(NULL, keep, op, dt, c, &L, s.h, s.dev, "default path");
                total += bad;
                calls++;
                unstage_input(&s);
            }
        }
    cr_log_info("default path (flat_fill %d to %d, %d SMs): %d calls, %d with filled splits",
                kg_red_tuning_default.flat_fill, kg_red_tuning_default.flat_fill_to, sms, calls, filled);
    cr_assert_eq(total, 0);
    cr_assert(kt_sanitizer() || sms < 100 || filled > 0, "no default call planned filled splits");
}

Test(gpu, flat_filled_to_one_unit_a_multiprocessor_every_value_op_dtype_and_case)
{
    flat_fill_tunings(0);
    flat_fill_default_path();
}
Test(gpu, flat_filled_to_eight_units_a_multiprocessor_every_value_op_dtype_and_case) { flat_fill_tunings(1); }

/* Every reduction over every dtype and case with short reduced runs under
   contiguous columns in 16-byte vectors (cols_runs_vec, templates/
   reduce_cols_runs.cuh) wherever they apply, before TILE (tile_vec), and no
   scalar column run where NEST moves the run in vectors
   (cols_runs_nest_vec; kg_red_force_runs), every call twice, bitwise
   equal; index reductions keep their plans (part 1: argmax, argmin and
   the index-returning max / min). The runs in vectors take the colsp
   kernel. */
static void runs_tunings(int part)
{
    kg_red_tuning t = kg_red_force_runs();
    if (part == 0) {
        ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], -1, 0, &runv_launches,
                           "column plans of runs in vectors");
        cr_assert_gt(runs_nest_launches, 0, "no NEST plan in vectors");
    } else {
        const kg_reduce_op ops[] = {KG_RED_ARGMAX, KG_RED_ARGMIN};
        ops_twice_under(&t, ops, sizeof ops / sizeof ops[0], -1, 1);
    }
}
Test(gpu, column_runs_in_vectors_every_value_op_dtype_and_case) { runs_tunings(0); }
Test(gpu, column_runs_in_vectors_index_reductions_keep_their_plans) { runs_tunings(1); }

/* Every reduction (value and index) over every dtype and case with COLS
   columns over chained kept dims wherever they apply (cols_chain,
   kg_red_force_chain: results scattered by each column's digits), every
   call twice, bitwise equal; half the ops each, part 2 without strided
   columns (one column per lane, the narrow walks of 1- and 2-byte
   elements). Some of those plans must move their columns in vectors. */
static void chain_tunings(int half)
{
    kg_red_tuning t = kg_red_force_chain();
    t.cols_strided = !half;
    const kg_reduce_op ops[] = {KG_RED_SUM, KG_RED_MEAN, KG_RED_PROD,   KG_RED_NORM,
                                KG_RED_MAX, KG_RED_MIN,  KG_RED_ARGMAX, KG_RED_ARGMIN};
    chain_vec_launches = 0;
    ops_twice_reaching(&t, ops, sizeof ops / sizeof ops[0], half, half, &chain_launches,
                       "column plans over chained kept dims");
    cr_log_info("%d of them in vectors", chain_vec_launches);
    if (!kt_sanitizer())
        cr_assert_gt(chain_vec_launches, 0, "no column plan over chained kept dims in vectors");
}
Test(gpu, columns_over_chained_kept_dims_every_op_dtype_and_case) { chain_tunings(0); }
Test(gpu, columns_over_chained_kept_dims_every_op_dtype_and_case_part_2) { chain_tunings(1); }

/* Every value reduction over every dtype and case with column runs in
   vectors also under a short kept dim (cols_runs_kept: periods of kept x
   run elements, each result folding its run's accumulators) wherever they
   apply, every call twice, bitwise equal. */
Test(gpu, column_runs_over_a_kept_width_every_value_op_dtype_and_case)
{
    kg_red_tuning t = kg_red_force_runs();
    t.cols_runs_kept = 1;
    ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], -1, 0, &kept_launches,
                       "column runs in vectors over a kept width");
}

/* Every value reduction over every dtype and case under one new plan rule
   wherever it applies, every call twice, bitwise equal; half the ops each:
   FLATW's packed rows of interleaved outputs (flatw_kept: each lane's vector
   folded into the kept columns, then a butterfly per row), and column runs
   in vectors over a period wider than a vector, folded across the tile
   (cols_runs_fold). */
enum { RULE_FLATW_KEPT, RULE_COLS_RUNS_FOLD };
static void rule_tunings(int rule, int half)
{
    kg_red_tuning t = kg_red_tuning_default;
    if (rule == RULE_FLATW_KEPT)
        t.flatw_kept = 1;
    else
        t.cols_runs_fold = 1;
    ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], half, half,
                       rule == RULE_FLATW_KEPT ? &flatw_kept_launches : &fold_launches,
                       rule == RULE_FLATW_KEPT ? "packed rows of interleaved outputs"
                                               : "column periods folded across the tile");
}
Test(gpu, packed_rows_of_interleaved_outputs_every_value_op_dtype_and_case) { rule_tunings(RULE_FLATW_KEPT, 0); }
Test(gpu, packed_rows_of_interleaved_outputs_every_value_op_dtype_and_case_part_2) { rule_tunings(RULE_FLATW_KEPT, 1); }
Test(gpu, column_periods_folded_across_the_tile_every_value_op_dtype_and_case) { rule_tunings(RULE_COLS_RUNS_FOLD, 0); }
Test(gpu, column_periods_folded_across_the_tile_every_value_op_dtype_and_case_part_2)
{
    rule_tunings(RULE_COLS_RUNS_FOLD, 1);
}

/* Every value reduction over every dtype and case under RUNT (short
   reduced runs of any length under contiguous columns, tiles of whole
   vectors, templates/reduce_runt.cuh) wherever it applies (run_tiles 2,
   kg_red_force_runt), every call twice, bitwise equal, against the float64
   / int64 reference: part 0 in loads of up to 16 bytes (half the ops), part
   1 of up to 8 (the other half), part 2 in 4-byte words (every value op),
   part 4 of one 2-byte element a lane (half the ops: 4-byte elements in
   words); the tile counts split down the rows where they give fewer than 6
   (parts 0, 2, 4) or 64 (part 1) units per multiprocessor. Some plans must
   take several tiles a row, some splits, and some the part's load width.
   Part 3: run_tiles 1 (the default chain's scalar column runs of 2-byte
   elements only), every value op. */
static void runt_tunings(int part)
{
    static const int vb[] = {16, 8, 4, 16, 2}, units[] = {6, 64, 6, 6, 6};
    kg_red_tuning t = kg_red_force_runt(vb[part], units[part]);
    if (part == 3)
        t.run_tiles = 1;
    runt_split_launches = runt_tiled_launches = 0;
    memset(runt_vb, 0, sizeof runt_vb);
    ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], part < 2 ? part : part == 4 ? 0 : -1,
                       part, &runt_launches, "run tiles");
    cr_log_info("run tiles: %d split, %d of several tiles a row; loads of 2 / 4 / 8 / 16 bytes: %d / %d / %d / %d",
                runt_split_launches, runt_tiled_launches, runt_vb[0], runt_vb[1], runt_vb[2], runt_vb[3]);
    if (!kt_sanitizer() && part != 3) {
        cr_assert_gt(runt_split_launches, 0, "no run tile plan split down the rows");
        cr_assert_gt(runt_tiled_launches, 0, "no run tile plan of several tiles a row");
        cr_assert_gt(runt_vb[runt_vb_at(vb[part])], 0, "no run tile plan loads %d bytes", vb[part]);
    }
}
Test(gpu, run_tiles_in_16_byte_loads_every_value_op_dtype_and_case) { runt_tunings(0); }
Test(gpu, run_tiles_in_8_byte_loads_split_more_every_value_op_dtype_and_case) { runt_tunings(1); }
Test(gpu, run_tiles_in_4_byte_words_every_value_op_dtype_and_case) { runt_tunings(2); }
Test(gpu, run_tiles_over_the_scalar_column_runs_every_value_op_dtype_and_case) { runt_tunings(3); }
Test(gpu, run_tiles_of_one_2_byte_element_a_lane_half_the_value_ops_every_dtype_and_case) { runt_tunings(4); }

/* RUNT's split cap (run_tiles_cap 8, 3 units per multiprocessor past it;
   the default since session 28's H100 round, named explicitly here through
   kg_red_force_runt_cap): the run tile shapes whose
   default split count exceeds 8 on this GPU (132 multiprocessors: 66 outer
   positions of rows of 30 x 17, 12 splits -> 6; sweep #180's nest R9 K500
   R5 R746, 156 -> 80; sweep #2 [500,1974,17] (0,2), 12 -> 6), every value
   op (bf16 and f16, half each), every call twice, bitwise equal, against
   the float64 reference; each capped plan must split, and fewer ways than
   the uncapped plan's (cap 0, the default before session 28). Part 0: the first two shapes (bf16, then f16: the
   reference's strided reads of 16.8M elements take about a second a call);
   part 1: #2. */
static void runt_cap_shapes(int part)
{
    static const rcase shapes[] = {
        {"(66,200,30,17) (1,3) 66 outer positions, capped splits", 4, {66, 200, 30, 17}, 2, {1, 3}, 0, DENSE},
        {"(746,5,500,9) (0,1,3) sweep #180's nest, capped splits", 4, {746, 5, 500, 9}, 3, {0, 1, 3}, 0, DENSE},
        {"(500,1974,17) (0,2) sweep #2, capped splits", 3, {500, 1974, 17}, 2, {0, 2}, 0, DENSE},
    };
    const kg_red_tuning cap = kg_red_force_runt_cap(8, 3), uncapped = kg_red_force_runt_cap(0, 3);
    uint64_t rng = kt_seed() + 2601 + (uint64_t)part;
    int sms = 0, capped = 0;
    KT_OK(gpu, kg_device_info(gpu, NULL, 0, NULL, NULL, &sms));
    for (size_t i = part ? 2 : 0; i < (part ? 3u : 2u); i++) {
        const layout L = layout_of(&shapes[i]);
        /* part 0: bf16 over the first shape, f16 over the second, half the
           ops each; part 1: both dtypes, half the ops each */
        for (int d = part ? 0 : (int)i; d < (part ? 2 : (int)i + 1); d++) {
            const kg_dtype dt = d ? KG_F16 : KG_BF16;
            if (!dtype_wanted(dt))
                continue;
            const size_t es = kg_dtype_size(dt);
            void *h = malloc((size_t)L.alloc * es);
            fill_input(h, dt, L.alloc, RANDOM, &rng);
            void *dev = kt_alloc(gpu, (size_t)L.alloc * es);
            kt_upload(gpu, dev, h, (size_t)L.alloc * es);
            for (size_t o = 0; o < sizeof value_ops / sizeof value_ops[0]; o++) {
                if ((int)(o % 2) != d || !kt_take(3))
                    continue;
                /* the capped plan splits, fewer ways than the uncapped plan */
                kg_tensor in = kg_tensor_contiguous(dev, dt, shapes[i].ndim, shapes[i].shape);
                kg_red_plan p0, p1;
                const kg_red_info *info = &kg_red_infos[value_ops[o]];
                int64_t osh[KG_MAX_DIMS];
                const int ond = case_out_shape(&shapes[i], osh);
                kg_tensor out = kg_tensor_contiguous((void *)((uintptr_t)1 << 41), info->out[dt], ond, osh);
                KT_OK(gpu, kg_reduce_plan_tuned(gpu, value_ops[o], &out, NULL, &in, shapes[i].axes, shapes[i].n_axes,
                                                0, sms, &uncapped, &p0));
                KT_OK(gpu, kg_reduce_plan_tuned(gpu, value_ops[o], &out, NULL, &in, shapes[i].axes, shapes[i].n_axes,
                                                0, sms, &cap, &p1));
                cr_assert_eq(p1.cls, KG_RED_RUNT, "%s: class %d", shapes[i].name, p1.cls);
                /* the default plan is the capped one */
                kg_red_plan pd;
                KT_OK(gpu, kg_reduce_plan_tuned(gpu, value_ops[o], &out, NULL, &in, shapes[i].axes, shapes[i].n_axes,
                                                0, sms, NULL, &pd));
                cr_assert_eq(pd.args.splits, p1.args.splits, "%s: default %d splits, capped %d", shapes[i].name,
                             pd.args.splits, p1.args.splits);
                if (sms == 132) {
                    cr_assert(p1.args.splits > 1 && p1.args.splits < p0.args.splits, "%s: %d splits capped, %d",
                              shapes[i].name, p1.args.splits, p0.args.splits);
                }
                capped += p1.args.splits < p0.args.splits;
                check_twice_under(&cap, env_tuning, value_ops[o], dt, &shapes[i], &L, h, dev, "capped");
            }
            kg_free(gpu, dev);
            free(h);
        }
    }
    cr_log_info("%d capped run tile plans (%d multiprocessors)", capped, sms);
    if (!kt_sanitizer() && sms == 132)
        cr_assert_gt(capped, 0, "no capped run tile plan");
}
Test(gpu, run_tiles_split_cap_every_value_op_on_capped_shapes, .timeout = 300) { runt_cap_shapes(0); }
Test(gpu, run_tiles_split_cap_every_value_op_on_sweep_2, .timeout = 300) { runt_cap_shapes(1); }

/* Every value reduction over every dtype and case under SEGW (short dense
   rows, a warp's chunk of rows staged in shared memory by cp.async; tuning
   seg_rows) wherever it applies, every call twice, bitwise equal, against
   the float64 / int64 reference; half the ops each. Index reductions keep
   their plans (the CPU test checks). */
static void segw_tunings(int half)
{
    kg_red_tuning t = kg_red_force_segw();
    ops_twice_reaching(&t, value_ops, sizeof value_ops / sizeof value_ops[0], half, half, &segw_launches,
                       "warp-staged rows");
}
Test(gpu, warp_staged_rows_every_value_op_dtype_and_case) { segw_tunings(0); }
Test(gpu, warp_staged_rows_every_value_op_dtype_and_case_part_2) { segw_tunings(1); }

/* Index reductions never take RUNT (its kernel is empty for them): under
   run_tiles 2 they keep their plans and their exact-index results. */
Test(gpu, run_tiles_index_reductions_keep_their_plans)
{
    kg_red_tuning t = kg_red_force_runt_any();
    const kg_reduce_op ops[] = {KG_RED_ARGMAX, KG_RED_ARGMIN};
    runt_launches = 0;
    ops_twice_under(&t, ops, sizeof ops / sizeof ops[0], -1, 1);
    cr_assert_eq(runt_launches, 0, "an index reduction took a run tile plan");
}

/* The tunings above in three tests (Criterion runs them side by side). */
Test(gpu, every_case_under_other_tunings) { other_tunings(0, 3); }
Test(gpu, every_case_under_other_tunings_part_2) { other_tunings(1, 3); }
Test(gpu, every_case_under_other_tunings_part_3) { other_tunings(2, 3); }

/* One op over one dense 2-d input with special values planted. */
static void check_planted(kg_reduce_op op, kg_dtype dt, int64_t rows, int64_t cols, int axis, const double *vals,
                          int nvals, uint64_t *rng)
{
    rcase c = {"planted", 2, {rows, cols}, 1, {axis}, 0, DENSE};
    const layout L = layout_of(&c);
    const size_t es = kg_dtype_size(dt);
    void *h = malloc((size_t)L.alloc * es);
    fill_input(h, dt, L.alloc, RANDOM, rng);
    /* in each reduced slice: at the first, the middle and the last place, or
       a random one, a value from vals */
    const int64_t len = axis == 1 ? cols : rows, slices = axis == 1 ? rows : cols;
    for (int64_t s = 0; s < slices; s++) {
        const int64_t where[] = {0, len / 2, len - 1, (int64_t)(kt_next(rng) % (uint64_t)len)};
        const int k = (int)(s % 5);
        for (int j = 0; j < 4; j++) {
            if (k < 4 && j != k)
                continue; /* k == 4: all four places */
            const int64_t e = where[j];
            const int64_t off = axis == 1 ? s * cols + e : e * cols + s;
            kt_set(h, dt, off, vals[(s + j) % nvals]);
        }
    }
    void *dev = kt_alloc(gpu, (size_t)L.alloc * es);
    kt_upload(gpu, dev, h, (size_t)L.alloc * es);
    const int bad = check_case(op, dt, &c, &L, h, dev, 1);
    cr_expect_eq(bad, 0, "%s(%s) [%lld,%lld] dim %d with planted values: %d wrong (seed %llu)", kg_red_infos[op].name,
                 kg_dtype_name(dt), (long long)rows, (long long)cols, axis, bad, (unsigned long long)kt_seed());
    kg_free(gpu, dev);
    free(h);
}

Test(gpu, nan_first_last_middle_and_infinities_propagate)
{
    uint64_t rng = kt_seed() + 7;
    const double nan[] = {NAN}, inf[] = {INFINITY, -INFINITY}, mixed[] = {NAN, INFINITY, -INFINITY};
    const kg_reduce_op ops[] = {KG_RED_MAX, KG_RED_MIN, KG_RED_ARGMAX, KG_RED_ARGMIN, KG_RED_SUM};
    const kg_dtype dts[] = {KG_F32, KG_F64, KG_F16, KG_BF16};
    /* rows (short and long), split rows, columns, split columns */
    const int64_t shapes[][3] = {{300, 37, 1}, {20, 5000, 1}, {4, 70000, 1}, {300, 37, 0}, {40000, 8, 0}, {300, 64, 1}};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                if (!kt_take(4)) /* sanitizer mode (kg_test.h): a seeded sample */
                    continue;
                check_planted(ops[o], dts[d], shapes[s][0], shapes[s][1], (int)shapes[s][2], nan, 1, &rng);
                check_planted(ops[o], dts[d], shapes[s][0], shapes[s][1], (int)shapes[s][2], inf, 2, &rng);
                check_planted(ops[o], dts[d], shapes[s][0], shapes[s][1], (int)shapes[s][2], mixed, 3, &rng);
            }
}

Test(gpu, integer_sums_accumulate_in_i64)
{
    uint64_t rng = kt_seed() + 11;
    const double big[] = {2147483647.0, 2147483600.0, -2147483648.0 + 5};
    check_planted(KG_RED_SUM, KG_I32, 64, 5000, 1, big, 2, &rng);
    const int64_t n = 100000;
    int32_t *h = malloc(sizeof(int32_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        h[i] = INT32_MAX - (int32_t)(kt_next(&rng) % 3);
    void *d = kt_alloc(gpu, sizeof(int32_t) * (size_t)n), *o = kt_alloc(gpu, 8);
    kt_upload(gpu, d, h, sizeof(int32_t) * (size_t)n);
    int64_t want = 0, got = 0;
    for (int64_t i = 0; i < n; i++)
        want += h[i];
    kg_tensor in = kg_tensor_contiguous(d, KG_I32, 1, &n), out = kg_tensor_contiguous(o, KG_I64, 0, NULL);
    KT_OK(gpu, kg_sum(gpu, &out, &in, NULL, 0, 0));
    kt_download(gpu, &got, o, 8);
    cr_assert_eq(got, want, "sum of %lld values near INT32_MAX: got %lld want %lld", (long long)n, (long long)got,
                 (long long)want);
    kg_free(gpu, d);
    kg_free(gpu, o);
    free(h);
}

/* The big shapes of TESTING.md for the ops the benchmarks time, shape
   `which` (0..2; one test each: Criterion runs them side by side). */
static void large_shapes(size_t which)
{
    uint64_t rng = kt_seed() + 13 + which;
    const rcase big[] = {
        {"(4194304,64) 1", 2, {4194304, 64}, 1, {1}, 0, DENSE},
        {"(64,4194304) 0", 2, {64, 4194304}, 1, {0}, 0, DENSE},
        {"(16384,16384) 0", 2, {16384, 16384}, 1, {0}, 0, DENSE},
    };
    const struct {
        kg_reduce_op op;
        kg_dtype dt;
    } runs[] = {{KG_RED_SUM, KG_F32}, {KG_RED_ARGMAX, KG_F32}, {KG_RED_SUM, KG_BF16}, {KG_RED_MAX, KG_I32}};
    const size_t i = which;
    const layout L = layout_of(&big[i]);
    for (size_t r = i == 2 ? 2 : 0; r < (i == 2 ? 4u : 2u); r++) {
        if (!kt_take(3)) /* sanitizer mode (kg_test.h): a seeded sample */
            continue;
        /* KG_TEST_QUICK: sum over the rows, argmax over the columns */
        if (quick() && !kt_sanitizer() && i < 2 && r != i)
            continue;
        const size_t es = kg_dtype_size(runs[r].dt);
        void *h = malloc((size_t)L.alloc * es);
        fill_input(h, runs[r].dt, L.alloc, RANDOM, &rng);
        void *dev = kt_alloc(gpu, (size_t)L.alloc * es);
        kt_upload(gpu, dev, h, (size_t)L.alloc * es);
        const int bad = check_case(runs[r].op, runs[r].dt, &big[i], &L, h, dev, 1);
        cr_expect_eq(bad, 0, "%s(%s) %s: %d wrong (seed %llu)", kg_red_infos[runs[r].op].name,
                     kg_dtype_name(runs[r].dt), big[i].name, bad, (unsigned long long)kt_seed());
        kg_free(gpu, dev);
        free(h);
    }
}

Test(gpu, large_short_rows, .timeout = 600) { large_shapes(0); }
Test(gpu, large_long_columns, .timeout = 600) { large_shapes(1); }
Test(gpu, large_split_columns, .timeout = 600) { large_shapes(2); }

Test(gpu, f32_sum_of_2_pow_28_is_within_1e6_of_the_sum_of_magnitudes, .timeout = 600)
{
    const int64_t n = (int64_t)1 << 28;
    uint64_t rng = kt_seed() + 17;
    float *h = malloc(sizeof(float) * (size_t)n);
    double want = 0, mag = 0;
    for (int64_t i = 0; i < n; i++) {
        h[i] = (float)kt_uniform(&rng, -0.5, 0.5);
        want += h[i];
        mag += fabs((double)h[i]);
    }
    void *d = kt_alloc(gpu, sizeof(float) * (size_t)n), *o = kt_alloc(gpu, 8);
    kt_upload(gpu, d, h, sizeof(float) * (size_t)n);
    kg_tensor in = kg_tensor_contiguous(d, KG_F32, 1, &n), out = kg_tensor_contiguous(o, KG_F32, 0, NULL);
    float got = 0, again = 0;
    KT_OK(gpu, kg_sum(gpu, &out, &in, NULL, 0, 0));
    kt_download(gpu, &got, o, 4);
    const double err = fabs((double)got - want);
    cr_log_info("sum of 2^28 f32: error %.3g = %.3g of sum|x| (bound 1e-6)", err, err / mag);
    cr_expect_leq(err, 1e-6 * mag, "error %.6g > 1e-6 * %.6g (seed %llu)", err, mag, (unsigned long long)kt_seed());
    /* bitwise the same on a second and a third run */
    for (int k = 0; k < 2; k++) {
        KT_OK(gpu, kg_memset(gpu, o, 0xff, 4));
        KT_OK(gpu, kg_sum(gpu, &out, &in, NULL, 0, 0));
        kt_download(gpu, &again, o, 4);
        cr_expect_eq(memcmp(&got, &again, 4), 0, "run %d gave %.9g, the first %.9g", k + 2, again, got);
    }
    kg_free(gpu, d);
    kg_free(gpu, o);
    free(h);
}

Test(gpu, split_results_are_bitwise_deterministic)
{
    const int64_t shape[] = {4096, 4096};
    const int64_t n = shape[0] * shape[1];
    uint64_t rng = kt_seed() + 19;
    float *h = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        h[i] = (float)kt_uniform(&rng, -1, 1);
    void *d = kt_alloc(gpu, sizeof(float) * (size_t)n), *o = kt_alloc(gpu, 4 * 4096);
    kt_upload(gpu, d, h, sizeof(float) * (size_t)n);
    kg_tensor in = kg_tensor_contiguous(d, KG_F32, 2, shape);
    float *a = malloc(4 * 4096), *b = malloc(4 * 4096);
    const int axes[][2] = {{0, 0}, {1, 0}};
    for (int k = 0; k < 2; k++) {
        kg_tensor out = kg_tensor_contiguous(o, KG_F32, 1, &shape[1 - axes[k][0]]);
        KT_OK(gpu, kg_sum(gpu, &out, &in, axes[k], 1, 0));
        kt_download(gpu, a, o, 4 * 4096);
        for (int rep = 0; rep < 5; rep++) {
            KT_OK(gpu, kg_memset(gpu, o, 0xff, 4 * 4096));
            KT_OK(gpu, kg_sum(gpu, &out, &in, axes[k], 1, 0));
            kt_download(gpu, b, o, 4 * 4096);
            cr_assert_eq(memcmp(a, b, 4 * 4096), 0, "dim %d: run %d differs", axes[k][0], rep + 2);
        }
    }
    kg_free(gpu, d);
    kg_free(gpu, o);
    free(h);
    free(a);
    free(b);
}

Test(gpu, reductions_are_captured_in_a_cuda_graph)
{
    const int64_t n = (int64_t)1 << 22;
    uint64_t rng = kt_seed() + 23;
    float *h = malloc(sizeof(float) * (size_t)n);
    double want = 0;
    for (int64_t i = 0; i < n; i++) {
        h[i] = (float)kt_uniform(&rng, -1, 1);
        want += h[i];
    }
    void *d = kt_alloc(gpu, sizeof(float) * (size_t)n), *o = kt_alloc(gpu, 4);
    kt_upload(gpu, d, h, sizeof(float) * (size_t)n);
    kg_tensor in = kg_tensor_contiguous(d, KG_F32, 1, &n), out = kg_tensor_contiguous(o, KG_F32, 0, NULL);
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    KT_OK(gpu, kg_set_stream(gpu, (kg_stream)s));
    /* a fresh context has no scratch: the split reduction refuses to capture */
    cudaGraph_t g;
    cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    const kg_status st = kg_sum(gpu, &out, &in, NULL, 0, 0);
    cr_assert_eq(cudaStreamEndCapture(s, &g), cudaSuccess);
    cudaGraphDestroy(g);
    cr_expect_eq(st, KG_ERR_INVALID_ARGUMENT, "%s", kg_errmsg(gpu));
    cr_expect(strstr(kg_errmsg(gpu), "kg_reserve_scratch") != NULL, "%s", kg_errmsg(gpu));
    KT_OK(gpu, kg_reserve_scratch(gpu, 0));
    cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    KT_OK(gpu, kg_sum(gpu, &out, &in, NULL, 0, 0));
    cr_assert_eq(cudaStreamEndCapture(s, &g), cudaSuccess);
    cudaGraphExec_t ge;
    cr_assert_eq(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
    float first = 0, got = 0;
    for (int rep = 0; rep < 3; rep++) {
        KT_OK(gpu, kg_memset(gpu, o, 0xff, 4));
        cr_assert_eq(cudaGraphLaunch(ge, s), cudaSuccess);
        KT_OK(gpu, kg_sync(gpu));
        kt_download(gpu, &got, o, 4);
        if (rep == 0)
            first = got;
        cr_expect(fabs(got - want) <= 16 * 0x1p-24 * (double)n, "replay %d: got %.9g want %.9g", rep, got, want);
        cr_expect_eq(memcmp(&got, &first, 4), 0, "replay %d differs", rep);
    }
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    KT_OK(gpu, kg_set_stream(gpu, NULL));
    cudaStreamDestroy(s);
    kg_free(gpu, d);
    kg_free(gpu, o);
    free(h);
}

/* u8, so the input is 2 GiB: rows (full), columns and strided 64-bit,
   shape `which` (0..2; one test each). */
static void more_than_2_pow_31(size_t which)
{
    uint64_t rng = kt_seed() + 29 + which;
    const rcase big[] = {
        {"(2^31+64,) all", 1, {((int64_t)1 << 31) + 64}, 0, {0}, 0, DENSE},
        {"(2,2^30+8) 0", 2, {2, ((int64_t)1 << 30) + 8}, 1, {0}, 0, DENSE},
        {"(2^20+1,2,2^10) (0,2)", 3, {((int64_t)1 << 20) + 1, 2, 1024}, 2, {0, 2}, 0, DENSE},
    };
    const size_t i = which;
    /* sanitizer mode (kg_test.h): the columns case alone (its reference
       keeps no 2^31-element slice in host memory), one op by the seed */
    if (kt_sanitizer() && i != 1)
        return;
    const layout L = layout_of(&big[i]);
    uint8_t *h = malloc((size_t)L.alloc);
    for (int64_t k = 0; k < L.alloc; k += 8) {
        const uint64_t v = kt_next(&rng);
        memcpy(h + k, &v, (size_t)(L.alloc - k < 8 ? L.alloc - k : 8));
    }
    void *dev = kt_alloc(gpu, (size_t)L.alloc);
    kt_upload(gpu, dev, h, (size_t)L.alloc);
    const kg_reduce_op ops[] = {KG_RED_SUM, KG_RED_ARGMAX};
    for (int k = 0; k < 2; k++) {
        if (kt_sanitizer() && (uint64_t)k != kt_seed() % 2)
            continue;
        /* KG_TEST_QUICK: sum, argmax, sum over the three shapes */
        if (quick() && !kt_sanitizer() && (size_t)k != i % 2)
            continue;
        const int bad = check_case(ops[k], KG_U8, &big[i], &L, h, dev, 1);
        cr_expect_eq(bad, 0, "%s(u8) %s: %d wrong (seed %llu)", kg_red_infos[ops[k]].name, big[i].name, bad,
                     (unsigned long long)kt_seed());
    }
    kg_free(gpu, dev);
    free(h);
}

Test(gpu, more_than_2_pow_31_elements_in_one_row, .timeout = 600) { more_than_2_pow_31(0); }
Test(gpu, more_than_2_pow_31_elements_in_columns, .timeout = 600) { more_than_2_pow_31(1); }
Test(gpu, more_than_2_pow_31_elements_strided, .timeout = 600) { more_than_2_pow_31(2); }

/* rows_stripes (session 30): split ROWS rows read in interleaved lines of
   KG_RED_THREADS vectors per split (kg_red_run_stripes; the default since
   round s30r1), and with rows_stripes 0 in one contiguous chunk per split:
   full reductions of odd lengths (a scalar tail, vectors past the last whole
   line), one element off the 16-byte grid (a scalar head in split 0), three
   split rows, rows under keepdim, and a row of 9000011 elements (more than
   KG_RED_UNROLL lines per split: the unrolled loop); every op of the list
   over every dtype it takes (value ops random, products near one, max, min
   and the index reductions over few distinct values: ties across the
   splits, the first index must win), every call twice, bitwise equal,
   against the float64 / int64 reference; each case must take the plan under
   test. */
/* the lines a lane loads at a time in kg_red_run_stripes (KG_RED_UNROLL,
   templates/reduce.cuh: device code only) */
#define STRIPES_UNROLL 8

static void stripes_tunings(int indexed, int stripes)
{
    static const rcase sc[] = {
        {"(1000003,) all", 1, {1000003}, 0, {0}, 0, DENSE},
        {"misaligned (2000029,) all", 1, {2000029}, 0, {0}, 0, MISALIGNED},
        {"(3,400009) 1", 2, {3, 400009}, 1, {1}, 0, DENSE},
        {"misaligned (5,7,65537) (1,2) keepdim", 3, {5, 7, 65537}, 2, {1, 2}, 1, MISALIGNED},
        {"misaligned (9000011,) all", 1, {9000011}, 0, {0}, 0, MISALIGNED},
    };
    const kg_reduce_op ops[] = {KG_RED_SUM, KG_RED_MEAN, KG_RED_PROD, KG_RED_NORM, KG_RED_MAX, KG_RED_MIN};
    const kg_reduce_op iops[] = {KG_RED_ARGMAX, KG_RED_ARGMIN};
    const kg_reduce_op *list = indexed ? iops : ops;
    const size_t nl = indexed ? 2 : 6, ncases = sizeof sc / sizeof sc[0];
    kg_red_tuning t = kg_red_tuning_default;
    t.rows_stripes = stripes;
    gpu_tuning = &t;
    run_twice = 1;
    stripes_launches = 0;
    uint64_t rng = kt_seed() ^ 0x5354524950455321ull;
    int total = 0, calls = 0, unrolled = 0;
    int sms = 0;
    kg_device_info(gpu, NULL, 0, NULL, NULL, &sms);
    for (size_t o = 0; o < nl; o++) {
        const kg_reduce_op op = list[o];
        const kg_red_info *info = &kg_red_infos[op];
        if (nl > 2 && quick_skips((int)o, stripes)) /* KG_TEST_QUICK: one value op in three */
            continue;
        for (int dt = 0; dt < KG_DTYPE_COUNT; dt++) {
            if (!(info->dtype_mask & (1u << dt)) || !dtype_wanted((kg_dtype)dt))
                continue;
            for (size_t i = 0; i < ncases; i++) {
                if (!kt_take(4))
                    continue;
                const rcase *c = &sc[i];
                const layout L = layout_of(c);
                const size_t es = kg_dtype_size((kg_dtype)dt);
                void *h = malloc((size_t)L.alloc * es);
                const fill how = op == KG_RED_PROD                                 ? NEAR_ONE
                                 : indexed || op == KG_RED_MAX || op == KG_RED_MIN ? TIES
                                                                                   : RANDOM;
                fill_input(h, (kg_dtype)dt, L.alloc, how, &rng);
                void *dev = kt_alloc(gpu, (size_t)L.alloc * es);
                kt_upload(gpu, dev, h, (size_t)L.alloc * es);
                /* the plan under test (what reduce_tuned will launch) */
                kg_red_plan plan;
                kg_tensor in = kg_tensor_contiguous((char *)dev + L.offset * (int64_t)es, (kg_dtype)dt, c->ndim,
                                                    c->shape);
                memcpy(in.strides, L.strides, sizeof in.strides);
                int64_t os[KG_MAX_DIMS];
                const int ond = case_out_shape(c, os);
                kg_tensor out = kg_tensor_contiguous((void *)(uintptr_t)256, info->out[dt], ond, os);
                kg_tensor ix = kg_tensor_contiguous((void *)(uintptr_t)256, KG_I64, ond, os);
                const int all = c->n_axes == 0;
                int axes[KG_MAX_DIMS];
                for (int k = 0; k < (all ? c->ndim : c->n_axes); k++)
                    axes[k] = all ? k : c->axes[k];
                const int n_axes = all ? c->ndim : c->n_axes;
                cr_assert_eq(kg_reduce_plan_tuned(gpu, op, indexed ? NULL : &out, indexed ? &ix : NULL, &in, axes,
                                                  n_axes, c->keepdim, sms, &t, &plan),
                             KG_OK, "%s", kg_errmsg(gpu));
                cr_expect(plan.cls == KG_RED_ROWS && plan.args.group == KG_RED_THREADS && plan.args.splits > 1 &&
                              plan.args.run == (stripes ? KG_RED_ROWS_STRIPES : 0),
                          "%s(%s) %s: not the plan under test (class %d group %d splits %d run %lld grid %u)",
                          info->name, kg_dtype_name(dt), c->name, plan.cls, plan.args.group, plan.args.splits,
                          (long long)plan.args.run, plan.grid);
                /* every split runs the unrolled loop: more than STRIPES_UNROLL + 1 lines a split */
                unrolled += (plan.args.red / (16 / (int64_t)es) - 1) / KG_RED_THREADS >=
                            (int64_t)(STRIPES_UNROLL + 1) * plan.args.splits;
                const int bad = check_case(op, (kg_dtype)dt, c, &L, h, dev, 1);
                cr_expect_eq(bad, 0, "%s(%s) %s: %d wrong results (seed %llu)", info->name, kg_dtype_name(dt),
                             c->name, bad, (unsigned long long)kt_seed());
                total += bad;
                calls++;
                if (indexed)
                    total += check_case(op, (kg_dtype)dt, c, &L, h, dev, 0); /* indices alone */
                kg_free(gpu, dev);
                free(h);
            }
        }
    }
    run_twice = 0;
    gpu_tuning = env_tuning;
    cr_log_info("%d cases, %d launches in stripes, %d of more than %d lines a split", calls, stripes_launches,
                unrolled, STRIPES_UNROLL);
    cr_assert_eq(total, 0);
    if (stripes)
        cr_assert(kt_sanitizer() || stripes_launches > 0, "no case took the stripes");
    else
        cr_assert_eq(stripes_launches, 0, "rows_stripes 0 took the stripes");
    if (!kt_sanitizer() && dtype_wanted(KG_F32))
        cr_assert_gt(unrolled, 0, "no case of more than STRIPES_UNROLL + 1 lines a split");
}

Test(gpu, rows_in_interleaved_stripes_every_value_op_and_dtype_twice_bitwise) { stripes_tunings(0, 1); }
Test(gpu, rows_in_interleaved_stripes_index_reductions_with_ties_every_dtype_twice_bitwise) { stripes_tunings(1, 1); }
Test(gpu, rows_in_contiguous_chunks_under_rows_stripes_0_every_op_and_dtype_twice_bitwise)
{
    stripes_tunings(0, 0);
    stripes_tunings(1, 0);
}

/* cols_strided_occ 4 (session 33's sp3w; the default since session 34's
   H100 round s34r1): f16 / bf16 COLS plans in the strided mode that
   cols_strided_occ 0 ("main") runs in colso (4 blocks, 4 rows of 4
   columns in flight a lane) run in colsp (3 blocks, 8 rows), the split
   refilled at 3 blocks, where colsp's grid needs no more waves of 3 blocks
   a multiprocessor than main's of 4. Shapes of the strided mode (odd
   column counts and strides): 255 outer positions unsplit (and one element
   off), #71's kind transposed, split ones (outer positions, two reduced
   dims walked), and two the rule leaves to main (#42's kind: 512 blocks
   unsplit; 48 blocks in the 2-block kernel); sum, mean, prod, norm, max,
   min, argmax over bf16 and f16 (random inputs, products near one, NaNs
   planted for max / min / argmax), results poisoned, each call twice and
   bitwise equal, against the float64 reference; each case must plan what
   the rule says on this device (colsp or main's plan), results bitwise
   main's (the same rows pushed in the same order, the same tree and
   combine where the splits are the same; where they differ the float64
   reference decides), and colsp must run. The default path (kg_reduce, no
   tuning) too: its plan (kg_reduce_plan on this device) must be the one
   under 4, its results bitwise those under 4, each call twice and bitwise
   equal, against the float64 reference, and colsp must be its plan for
   some case. */
static const rcase strided_p_cases[] = {
    {"(3,255,1101) 0", 3, {3, 255, 1101}, 1, {0}, 0, DENSE},
    {"misaligned (3,255,1101) 0", 3, {3, 255, 1101}, 1, {0}, 0, MISALIGNED},
    {"transposed (20001,100) 1", 2, {20001, 100}, 1, {1}, 0, TRANSPOSED},
    {"(9,50,6001) 1", 3, {9, 50, 6001}, 1, {1}, 0, DENSE},
    {"(17,3,29,3001) (0,2)", 4, {17, 3, 29, 3001}, 2, {0, 2}, 0, DENSE},
    {"(31,101,1059) (0,1)", 3, {31, 101, 1059}, 2, {0, 1}, 0, DENSE},
    {"(64,20011) 0", 2, {64, 20011}, 1, {0}, 0, DENSE},
    {"(256,7,5,441) (1,2): main's 512 blocks", 4, {256, 7, 5, 441}, 2, {1, 2}, 0, DENSE},
    {"(2000,129) 0: main's 2-block kernel", 2, {2000, 129}, 1, {0}, 0, DENSE},
};

/* op over in under tuning t (NULL: the default path, kg_reduce) into a
   fresh poisoned buffer; its bytes (malloc'd, n_out x the values' size). */
static void *strided_p_result(kg_reduce_op op, const kg_tensor *in, const rcase *c, const kg_red_tuning *t,
                              int64_t n_out, const kg_tensor *shape_of_out)
{
    const kg_red_info *info = &kg_red_infos[op];
    const size_t oes = kg_dtype_size(info->out[in->dtype]);
    void *dout = kt_alloc(gpu, (size_t)n_out * oes);
    KT_OK(gpu, kg_memset(gpu, dout, 0xff, (size_t)n_out * oes));
    kg_tensor out = *shape_of_out;
    out.data = dout;
    const kg_red_tuning *keep = gpu_tuning;
    gpu_tuning = t;
    KT_OK(gpu, reduce_tuned(op, &out, NULL, in, c->axes, c->n_axes, c->keepdim));
    gpu_tuning = keep;
    KT_OK(gpu, kg_sync(gpu));
    void *h = malloc((size_t)n_out * oes);
    kt_download(gpu, h, dout, (size_t)n_out * oes);
    kg_free(gpu, dout);
    return h;
}

Test(gpu, strided_2_byte_columns_in_colsp_where_waves_allow_every_value_op_twice_bitwise)
{
    const kg_reduce_op ops[] = {KG_RED_SUM, KG_RED_MEAN, KG_RED_PROD,  KG_RED_NORM,
                                KG_RED_MAX, KG_RED_MIN,  KG_RED_ARGMAX};
    const kg_dtype dts[] = {KG_BF16, KG_F16};
    const size_t ncases = sizeof strided_p_cases / sizeof strided_p_cases[0];
    kg_red_tuning t = kg_red_tuning_default, t0 = kg_red_tuning_default;
    t.cols_strided_occ = 4;
    t0.cols_strided_occ = 0; /* main's plan (whatever the default becomes) */
    strided_p_launches = 0;
    uint64_t rng = kt_seed() ^ 0x5350335721ull;
    int total = 0, calls = 0, same_bits = 0, in_colsp = 0, as_main = 0, default_colsp = 0;
    int sms = 0;
    kg_device_info(gpu, NULL, 0, NULL, NULL, &sms);
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        const kg_reduce_op op = ops[o];
        const kg_red_info *info = &kg_red_infos[op];
        if (quick_skips((int)o, 2)) /* KG_TEST_QUICK: one op in three */
            continue;
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
            const kg_dtype dt = dts[d];
            if (!(info->dtype_mask & (1u << dt)) || !dtype_wanted(dt))
                continue;
            for (size_t i = 0; i < ncases; i++) {
                if (!kt_take(4))
                    continue;
                const rcase *c = &strided_p_cases[i];
                const layout L = layout_of(c);
                staged_input s = stage_input(op, dt, c, &L, &rng);
                kg_tensor idx = kg_tensor_contiguous((void *)(uintptr_t)512, KG_I64, s.out.ndim, s.out.shape);
                /* the plans: main's, cols_strided_occ 3's, and the rule's pick under 4 on this device */
                kg_red_tuning t3 = t0;
                t3.cols_strided_occ = 3;
                kg_red_plan p0, p3, p4;
                const kg_tensor *o_ = info->indexed ? NULL : &s.out, *x_ = info->indexed ? &idx : NULL;
                cr_assert_eq(
                    kg_reduce_plan_tuned(gpu, op, o_, x_, &s.in, c->axes, c->n_axes, c->keepdim, sms, &t0, &p0), KG_OK,
                    "%s", kg_errmsg(gpu));
                cr_assert_eq(
                    kg_reduce_plan_tuned(gpu, op, o_, x_, &s.in, c->axes, c->n_axes, c->keepdim, sms, &t3, &p3), KG_OK,
                    "%s", kg_errmsg(gpu));
                cr_assert_eq(kg_reduce_plan_tuned(gpu, op, o_, x_, &s.in, c->axes, c->n_axes, c->keepdim, sms, &t, &p4),
                             KG_OK, "%s", kg_errmsg(gpu));
                /* the default path's plan (what kg_reduce launches): the one under 4 */
                kg_red_plan pd;
                cr_assert_eq(kg_reduce_plan(gpu, op, o_, x_, &s.in, c->axes, c->n_axes, c->keepdim, sms, &pd), KG_OK,
                             "%s", kg_errmsg(gpu));
                cr_expect(memcmp(&pd, &p4, sizeof pd) == 0,
                          "%s(%s) %s: the default's plan is not cols_strided_occ 4's (occ %d grid %u; under 4 occ %d "
                          "grid %u)",
                          info->name, kg_dtype_name(dt), c->name, pd.occ, pd.grid, p4.occ, p4.grid);
                default_colsp += pd.cls == KG_RED_COLS && pd.args.vec == KG_RED_CV_STRIDED && pd.occ == 3;
                const int cand = !info->indexed && p0.cls == KG_RED_COLS && p0.occ == 4 &&
                                 p0.args.vec == KG_RED_CV_STRIDED && p3.occ == 3 &&
                                 (p3.grid + 3 * sms - 1) / (3 * sms) <= (p0.grid + 4 * sms - 1) / (4 * sms);
                cr_expect(memcmp(&p4, cand ? &p3 : &p0, sizeof p4) == 0,
                          "%s(%s) %s: not the plan the rule picks (main occ %d grid %u, colsp grid %u; got occ %d)",
                          info->name, kg_dtype_name(dt), c->name, p0.occ, p0.grid, p3.grid, p4.occ);
                if (sms == 132 && !info->indexed) /* the CPU test's expectations on a 132-SM device */
                    cr_expect_eq(cand, i < 7, "%s(%s) %s: colsp %d", info->name, kg_dtype_name(dt), c->name, cand);
                in_colsp += cand;
                as_main += !cand;
                if (!info->indexed) {
                    /* main's bits, where the plans differ only by the kernel */
                    const size_t oes = kg_dtype_size(info->out[dt]);
                    void *r0 = strided_p_result(op, &s.in, c, &t0, s.n_out, &s.out);
                    void *r1 = strided_p_result(op, &s.in, c, &t, s.n_out, &s.out);
                    void *rd = strided_p_result(op, &s.in, c, NULL, s.n_out, &s.out); /* the default path */
                    const int eq = memcmp(r0, r1, (size_t)s.n_out * oes) == 0;
                    cr_expect(memcmp(rd, r1, (size_t)s.n_out * oes) == 0,
                              "%s(%s) %s: the default path's results differ from cols_strided_occ 4's bits", info->name,
                              kg_dtype_name(dt), c->name);
                    total += memcmp(rd, r1, (size_t)s.n_out * oes) != 0;
                    const int must = !cand || (p0.args.splits == p4.args.splits && p0.args.cw == p4.args.cw &&
                                               p0.args.tiles == p4.args.tiles && p0.args.chunk == p4.args.chunk);
                    if (must)
                        cr_expect(eq, "%s(%s) %s: results differ from main's bits (same plan but the kernel)",
                                  info->name, kg_dtype_name(dt), c->name);
                    same_bits += eq;
                    total += must && !eq;
                    free(r0);
                    free(r1);
                    free(rd);
                }
                /* the float64 reference, each call twice and bitwise equal */
                const int bad = check_twice_under(&t, env_tuning, op, dt, c, &L, s.h, s.dev, "tuned");
                total += bad;
                /* the same on the default path (kg_reduce, no tuning) */
                const int bad_d = check_twice_under(NULL, env_tuning, op, dt, c, &L, s.h, s.dev, "default path");
                total += bad_d;
                calls++;
                unstage_input(&s);
            }
        }
    }
    cr_log_info("cols_strided_occ 4 (%d SMs): %d cases, %d planned in colsp, %d as main's, %d launches in colsp, %d "
                "bitwise main's; the default path's plan in colsp in %d",
                sms, calls, in_colsp, as_main, strided_p_launches, same_bits, default_colsp);
    cr_assert_eq(total, 0);
    cr_assert(kt_sanitizer() || strided_p_launches > 0, "no strided 2-byte plan took colsp");
    cr_assert(kt_sanitizer() || default_colsp > 0, "the default path planned no strided 2-byte plan in colsp");
}

/* flatw_ragged (forced wherever it applies; the flatwr kernel,
   templates/reduce_flatw.cuh mode 2): FLATW plans whose blocks (one reduced
   dim outside a period of kept x run elements) start on whole periods but
   off the vector grid, read in the aligned vectors that cover each block,
   the elements outside it dropped (sweep #196's nest K4 R97 K511 R17 K5,
   odd sizes, a run under the columns, the input's last vector past its
   extent read element by element). Every value op over bf16, f16, f32 and
   i32 and ragged_cases under flatw_ragged 1 (132 warps suffice: small
   shapes) against the float64 / int64 reference, each call twice, bitwise
   equal; the misaligned input keeps another plan; the default path (no
   tuning; flatw_ragged 8 since session 37) matches the reference too and
   plans none here (too few outer positions for 8 warps a multiprocessor). FLATW is unsplit
   (one warp an output period): no split form. */
static const rcase ragged_cases[] = {
    {"(3,5,211,97,4) 1,3 ragged, #196's nest K4 R97 K211 R5 K3", 5, {3, 5, 211, 97, 4}, 2, {1, 3}, 0, DENSE},
    {"(3,5,211,97,4) 1,3 keepdim ragged", 5, {3, 5, 211, 97, 4}, 2, {1, 3}, 1, DENSE},
    {"(5,200,33,2) 0,2 ragged, K2 R33 K200 R5", 4, {5, 200, 33, 2}, 2, {0, 2}, 0, DENSE},
    {"(7,301,61,2) 0,2 ragged, K2 R61 K301 R7", 4, {7, 301, 61, 2}, 2, {0, 2}, 0, DENSE},
    {"(3,150,31,2,2) 0,2,4 ragged, a run of 2 under K2", 5, {3, 150, 31, 2, 2}, 3, {0, 2, 4}, 0, DENSE},
    {"(13,3,200,41,4) 0,3 ragged, R13 outside K600", 5, {13, 3, 200, 41, 4}, 2, {0, 3}, 0, DENSE},
    {"(5,200,33,2) 0,2 misaligned: another plan", 4, {5, 200, 33, 2}, 2, {0, 2}, 0, MISALIGNED},
    {"(41,50,63,2) 0,2 ragged, K2 R63 K50 R41: 41 blocks, many pipeline batches", 4, {41, 50, 63, 2}, 2, {0, 2}, 0,
     DENSE},
    {"(67,3,45,2,4) 0,2,3 ragged, K4 R2 R45 K3 R67: a run of 2, 67 blocks", 5, {67, 3, 45, 2, 4}, 3, {0, 2, 3}, 0,
     DENSE},
    {"(37,140,129,2) 0,2 ragged, K2 R129 K140 R37: blocks of 258 elements", 4, {37, 140, 129, 2}, 2, {0, 2}, 0,
     DENSE},
};

/* pipe 0: session 36's loop (mode 2); pipe 1: flatw_ragged_v 1 (mode 3, the
   software pipeline; the same fold order: bitwise equal to mode 2 too) */
static void flatw_ragged_every_case(int pipe)
{
    kg_red_tuning t = kg_red_force_flatw_ragged(1); /* 132 warps suffice: small shapes */
    t.flatw_ragged_v = pipe;
    kg_red_tuning t2 = t;
    t2.flatw_ragged_v = !pipe;
    const kg_dtype dts[] = {KG_BF16, KG_F16, KG_F32, KG_I32};
    const size_t ncases = sizeof ragged_cases / sizeof ragged_cases[0];
    uint64_t rng = kt_seed() ^ 0x7261676765646677ull;
    int sms = 0, total = 0, calls = 0, planned = 0, default_ragged = 0;
    kg_device_info(gpu, NULL, 0, NULL, NULL, &sms);
    ragged_launches = 0;
    ragged_pipe_launches = 0;
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t o = 0; o < sizeof value_ops / sizeof value_ops[0]; o++) {
            const kg_dtype dt = dts[d];
            const kg_reduce_op op = value_ops[o];
            const kg_red_info *info = &kg_red_infos[op];
            if (!(info->dtype_mask & (1u << dt)) || !dtype_wanted(dt))
                continue;
            for (size_t i = 0; i < ncases; i++) {
                if (!kt_take(4)) /* sanitizer mode: a seeded quarter */
                    continue;
                const rcase *c = &ragged_cases[i];
                const layout L = layout_of(c);
                staged_input s = stage_input(op, dt, c, &L, &rng);
                kg_red_plan pt, pd;
                cr_assert_eq(kg_reduce_plan_tuned(gpu, op, &s.out, NULL, &s.in, c->axes, c->n_axes, c->keepdim, sms,
                                                  &t, &pt),
                             KG_OK, "%s", kg_errmsg(gpu));
                cr_assert_eq(kg_reduce_plan(gpu, op, &s.out, NULL, &s.in, c->axes, c->n_axes, c->keepdim, sms, &pd),
                             KG_OK, "%s", kg_errmsg(gpu));
                const int ragged = pt.cls == KG_RED_FLAT && pt.args.group == 32 && pt.args.vec == 1 + pipe;
                planned += ragged;
                default_ragged += pd.cls == KG_RED_FLAT && pd.args.group == 32 && pd.args.vec != 0;
                if (c->view == MISALIGNED)
                    cr_expect(!ragged, "%s(%s) %s: a misaligned input planned flatw_ragged", info->name,
                              kg_dtype_name(dt), c->name);
                bits_tuning = &t2; /* the other loop (mode 2 / mode 3): the same vectors and fold order, same bits */
                total += check_twice_under(&t, env_tuning, op, dt, c, &L, s.h, s.dev,
                                           pipe ? "flatw_ragged, pipelined" : "flatw_ragged");
                bits_tuning = NULL;
                /* the same on the default path (kg_reduce, no tuning) */
                total += check_twice_under(NULL, env_tuning, op, dt, c, &L, s.h, s.dev, "default path");
                calls++;
                unstage_input(&s);
            }
        }
    cr_log_info("flatw_ragged 1, flatw_ragged_v %d (%d SMs): %d calls, %d planned ragged, %d ragged launches (%d "
                "pipelined); default path ragged %d",
                pipe, sms, calls, planned, ragged_launches, ragged_pipe_launches, default_ragged);
    cr_assert_eq(total, 0);
    cr_assert_eq(default_ragged, 0, "the default path planned flatw_ragged on shapes of under 1056 outer positions");
    cr_assert(kt_sanitizer() || ragged_launches > 0, "no call ran a flatw_ragged plan");
    cr_assert(kt_sanitizer() || !pipe || ragged_pipe_launches > 0, "no call ran a pipelined flatw_ragged plan");
}

Test(gpu, flatw_ragged_blocks_every_value_op_2_and_4_byte_dtype_and_case) { flatw_ragged_every_case(0); }

/* flatw_ragged_v 1 (mode 3, the default's loop): the software pipeline on
   the same cases (odd sizes, runs, the extent's last vector, many batches),
   against the reference, twice bitwise equal, and bitwise equal to mode 2 */
Test(gpu, flatw_ragged_pipe_every_value_op_2_and_4_byte_dtype_and_case) { flatw_ragged_every_case(1); }

/* Shapes whose default plan is a given class (session 37's defaults), on the
   default path (kg_reduce, no tuning): every value op over `dts`, each call
   twice, bitwise equal, against the float64 / int64 reference; `want` must
   hold for the default plan of every sum. */
static void default_path_cases(const rcase *cases, size_t ncases, const kg_dtype *dts, size_t ndts,
                               int (*want)(const kg_red_plan *), const char *what)
{
    uint64_t rng = kt_seed() ^ 0x64656661756c7470ull;
    int sms = 0, calls = 0, sums = 0, planned = 0, total = 0;
    kg_device_info(gpu, NULL, 0, NULL, NULL, &sms);
    for (size_t d = 0; d < ndts; d++)
        for (size_t o = 0; o < sizeof value_ops / sizeof value_ops[0]; o++) {
            const kg_dtype dt = dts[d];
            const kg_reduce_op op = value_ops[o];
            const kg_red_info *info = &kg_red_infos[op];
            if (!(info->dtype_mask & (1u << dt)) || !dtype_wanted(dt))
                continue;
            for (size_t i = 0; i < ncases; i++) {
                if (!kt_take(4)) /* sanitizer mode: a seeded quarter */
                    continue;
                const rcase *c = &cases[i];
                const layout L = layout_of(c);
                staged_input s = stage_input(op, dt, c, &L, &rng);
                if (op == KG_RED_SUM) {
                    kg_red_plan pd;
                    cr_assert_eq(
                        kg_reduce_plan(gpu, op, &s.out, NULL, &s.in, c->axes, c->n_axes, c->keepdim, sms, &pd), KG_OK,
                        "%s", kg_errmsg(gpu));
                    sums++;
                    planned += want(&pd);
                    cr_expect(want(&pd), "%s(%s) %s: the default plan is class %d vec %d, not %s", info->name,
                              kg_dtype_name(dt), c->name, pd.cls, pd.args.vec, what);
                }
                total += check_twice_under(NULL, env_tuning, op, dt, c, &L, s.h, s.dev, "default path");
                calls++;
                unstage_input(&s);
            }
        }
    cr_log_info("default path, %s (%d SMs): %d calls, %d of %d sums planned so", what, sms, calls, planned, sums);
    cr_assert_eq(total, 0);
    cr_assert(kt_sanitizer() || sums > 0, "no case ran");
}

static int plan_is_ragged(const kg_red_plan *p)
{
    return p->cls == KG_RED_FLAT && p->args.group == 32 && (p->args.vec == 1 || p->args.vec == 2);
}

/* flatw_ragged on the default path (session 37: flatw_ragged 8, 11 warps a
   multiprocessor for 2-byte elements, mode 3, slabs of at least 1024 bytes,
   only in place of COLS plans reading one column a lane): K2 R61 under
   K3000 R7 and K2 R125 under K5000 R9 (COLS scalar before) */
static const rcase ragged_default_cases[] = {
    {"(7,3000,61,2) 0,2: K2 R61 K3000 R7", 4, {7, 3000, 61, 2}, 2, {0, 2}, 0, DENSE},
    {"(9,2000,125,2) 0,2 keepdim: K2 R125 K2000 R9", 4, {9, 2000, 125, 2}, 2, {0, 2}, 1, DENSE},
};

Test(gpu, flatw_ragged_default_path_every_value_op)
{
    const kg_dtype dts[] = {KG_BF16, KG_F16, KG_F32, KG_I32};
    default_path_cases(ragged_default_cases, sizeof ragged_default_cases / sizeof ragged_default_cases[0], dts,
                       sizeof dts / sizeof dts[0], plan_is_ragged, "flatw_ragged (FLAT, 32 lanes a unit, vec 2)");
}

static int plan_is_trans(const kg_red_plan *p) { return p->cls == KG_RED_TRANS; }

/* trans_first on the default path (session 37): outputs scattered in the
   input's order under at most 6 reduced elements (COLS before, writing
   each output alone): [3,8000,128] axis 0 and [5,4000,200] axis 0 with the
   last two dims swapped in memory (K8000 K128 R3, K4000 K200 R5) */
static const rcase trans_default_cases[] = {
    {"(3,8000,128) 0 swapped: K8000 K128 R3", 3, {3, 8000, 128}, 1, {0}, 0, SWAP_LAST2},
    {"(5,4000,200) 0 swapped keepdim: K4000 K200 R5", 3, {5, 4000, 200}, 1, {0}, 1, SWAP_LAST2},
};

Test(gpu, trans_first_default_path_every_value_op)
{
    const kg_dtype dts[] = {KG_BF16, KG_F16, KG_F32, KG_I32};
    default_path_cases(trans_default_cases, sizeof trans_default_cases / sizeof trans_default_cases[0], dts,
                       sizeof dts / sizeof dts[0], plan_is_trans, "TRANS");
}

static int plan_is_trans_run(const kg_red_plan *p) { return p->cls == KG_RED_TRANS && p->args.cw > 1; }
static int plan_is_trans_ko2(const kg_red_plan *p) { return p->cls == KG_RED_TRANS && p->args.vstore > 0; }

/* trans_run on the default path (session 38: trans_run 8, trans_min_util
   70): a reduced run of 3 contiguous elements under ki 256 x ko 2112
   (column-major [3,256,2112] axis 0: R3 K256 K2112), NEST before */
static const rcase trans_run_default_cases[] = {
    {"column-major (3,256,2112) 0: R3 K256 K2112", 3, {3, 256, 2112}, 1, {0}, 0, COLMAJOR},
};

/* trans_ko2 on the default path (session 38: trans_ko2 16, trans_min_util
   70): ko over the values' K8 and K300 (column-major [256,3,300,8] axis
   1: K256 R3 K300 K8; COLS before, TRANS of ko 8 under its 16-output
   side) */
static const rcase trans_ko2_default_cases[] = {
    {"column-major (256,3,300,8) 1: K256 R3 K300 K8", 4, {256, 3, 300, 8}, 1, {1}, 0, COLMAJOR},
    {"column-major (256,3,300,8) 1 keepdim", 4, {256, 3, 300, 8}, 1, {1}, 1, COLMAJOR},
};

Test(gpu, trans_run_default_path_every_value_op)
{
    const kg_dtype dts[] = {KG_BF16, KG_F16, KG_F32, KG_I32, KG_U8};
    default_path_cases(trans_run_default_cases, sizeof trans_run_default_cases / sizeof trans_run_default_cases[0],
                       dts, sizeof dts / sizeof dts[0], plan_is_trans_run, "TRANS over a reduced run");
}

Test(gpu, trans_ko2_default_path_every_value_op)
{
    const kg_dtype dts[] = {KG_BF16, KG_F16, KG_F32, KG_I32, KG_U8};
    default_path_cases(trans_ko2_default_cases, sizeof trans_ko2_default_cases / sizeof trans_ko2_default_cases[0],
                       dts, sizeof dts / sizeof dts[0], plan_is_trans_ko2, "TRANS with a ko side of two dims");
}
