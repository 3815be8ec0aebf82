/* The reductions' tests' force hooks for SLAB, TRANS, column runs in
   vectors, columns over chained kept dims and run tiles (RUNT): the default tuning
   with the class on and every bound that keeps it to its measured groups
   lifted, so that it plans every case it can serve (any count of units,
   element size, slab rows, tile side and reduction length). One place for
   test_reduce (GPU parity) and test_reduce_plan (the CPU plan checker). */
#ifndef KG_RED_FORCE_H
#define KG_RED_FORCE_H

#include "reduce_plan.h"

/* The default tuning without session 37's replacements of COLS plans
   (flatw_ragged's and trans_first's) and session 38's TRANS extensions and
   SLAB bounds (trans_run, trans_ko2, slab_max_walk; session 46's
   slab_min_tile), so that each hook below
   plans what it planned before them; the default path's tests cover those. */
static inline kg_red_tuning kg_red_force_base(void)
{
    kg_red_tuning t = kg_red_tuning_default;
    t.flatw_ragged = 0;
    t.trans_first = 0;
    t.trans_run = 0;
    t.trans_ko2 = 0;
    t.slab_max_walk = 0;
    t.slab_min_tile = 0;
    return t;
}

static inline kg_red_tuning kg_red_force_slab(void)
{
    kg_red_tuning t = kg_red_force_base();
    t.slab = 1;
    t.slab_min_units = 0;
    t.slab_es = 0;
    t.slab_max_rows = 1 << 30;
    return t;
}

/* TRANS's own kernel (one element a load): trans_vec 0, so that the
   tests of TRANS keep reaching it over bf16 and f16 (the default's
   trans_vec 128 and trans_vec_f16 128 send their sides of 128 outputs and
   more to TRANSV; trans_vec_f16 0 too) and TRANSV's test
   has TRANS's bits to compare with. */
static inline kg_red_tuning kg_red_force_trans(void)
{
    kg_red_tuning t = kg_red_force_base();
    t.trans = 1;
    t.trans_min_units = 0;
    t.trans_min_side = 1;
    t.trans_max_red = 1 << 30;
    t.trans_vec = 0;
    t.trans_vec_f16 = 0;
    return t;
}

/* TRANS wherever it applies (kg_red_force_trans) with session 38's two
   extensions (plan_trans): a reduced run of any length under the ki side
   (trans_run) and a ko side of two kept dims wherever a dim continues the
   output-contiguous one's values stride (trans_ko2). */
static inline kg_red_tuning kg_red_force_trans_ext(void)
{
    kg_red_tuning t = kg_red_force_trans();
    t.trans_run = 1 << 30;
    t.trans_ko2 = 1 << 30;
    t.trans_min_util = 0;
    return t;
}

/* TRANS wherever it applies (kg_red_force_trans) and, over bf16 and f16
   elements of at most KG_RED_TRANSV_POS walk positions, in 16-byte vectors
   (trans_vec 1 and trans_vec_f16 1: any input-contiguous side; the
   defaults are 128 for bf16 since session 35's round s35r2 and 128 for
   f16 since its round s35r4). */
static inline kg_red_tuning kg_red_force_transv(void)
{
    kg_red_tuning t = kg_red_force_trans();
    t.trans_vec = 1;
    t.trans_vec_f16 = 1;
    return t;
}

/* Short reduced runs under contiguous columns in vectors wherever they
   apply (cols_runs_vec, before TILE: tile_vec), and no scalar column runs
   where NEST moves the run in vectors (cols_runs_nest_vec). */
static inline kg_red_tuning kg_red_force_runs(void)
{
    kg_red_tuning t = kg_red_force_base();
    t.cols_runs_vec = 1;
    t.tile_vec = 1;
    t.cols_runs_nest_vec = 1;
    return t;
}

/* COLS columns over chained kept dims (cols_chain) wherever they apply,
   whatever the bytes of the innermost kept dim and of an output's
   reduction. */
static inline kg_red_tuning kg_red_force_chain(void)
{
    kg_red_tuning t = kg_red_force_base();
    t.cols_chain = 1 << 30;
    t.cols_chain_red = 0;
    return t;
}

/* RUNT (run_tiles 2: short reduced runs under contiguous columns, of any
   length, in tiles of whole vectors, ahead of the other classes wherever
   they apply, 2-byte elements) loading at most vb bytes (16, 8
   or 4), and every tile count split down the rows where the tiles alone
   give fewer than that many units per multiprocessor (exactly that target:
   no split cap, run_tiles_cap 0; the default's cap is tested on its own). */
static inline kg_red_tuning kg_red_force_runt(int vb, int units_per_sm)
{
    kg_red_tuning t = kg_red_force_base();
    t.run_tiles = 2;
    t.run_tiles_vb = vb;
    t.run_tiles_vb_min = 2;
    t.run_tiles_units = units_per_sm;
    t.run_tiles_cap = 0;
    return t;
}

/* The same as hooks of no argument (for lists of hooks, e.g. a fuzz
   target's forced tunings): RUNT wherever it applies in its widest loads
   and default split target, and SEGW (seg_rows) wherever it applies. */
static inline kg_red_tuning kg_red_force_runt_any(void) { return kg_red_force_runt(16, 6); }

/* RUNT's split cap (run_tiles_cap; default 8 with 3 units per
   multiprocessor since session 28's H100 round): the default tuning, and
   where its split target of run_tiles_units per multiprocessor would split
   the rows more than `cap` ways, `units` per multiprocessor instead; cap 0:
   the uncapped plan (the default before session 28). */
static inline kg_red_tuning kg_red_force_runt_cap(int cap, int units)
{
    kg_red_tuning t = kg_red_force_base();
    t.run_tiles_cap = cap;
    t.run_tiles_cap_units = units;
    return t;
}

static inline kg_red_tuning kg_red_force_segw(void)
{
    kg_red_tuning t = kg_red_force_base();
    t.seg_rows = 1;
    return t;
}

/* Strided columns of f16 / bf16 in colsp where its 3 blocks a
   multiprocessor add no wave (cols_strided_occ 4: session 33's sp3w, the
   default since session 34's H100 round s34r1; kept as a hook, as segw's,
   so the forced lists still name it should the default change). */
static inline kg_red_tuning kg_red_force_strided_occ(void)
{
    kg_red_tuning t = kg_red_force_base();
    t.cols_strided_occ = 4;
    return t;
}

/* FLATW's blocks off the vector grid in the flatwr kernel (flatw_ragged,
   a default since session 37 in place of COLS plans reading one column a
   lane): wherever it applies, `warps` the outer positions must
   give each multiprocessor (8 the candidate; 1 takes small test shapes). */
static inline kg_red_tuning kg_red_force_flatw_ragged(int warps)
{
    kg_red_tuning t = kg_red_force_base();
    t.flatw_ragged = warps;
    t.flatw_ragged_v = 0;    /* session 36's loop (mode 2); the tests set 1 for mode 3 */
    t.flatw_ragged_min = 0;  /* no slab bound, */
    t.flatw_ragged_late = 0; /* in place of every class after FLATW, */
    t.flatw_ragged_2 = 0;    /* 2-byte elements at `warps` too */
    return t;
}

#endif
