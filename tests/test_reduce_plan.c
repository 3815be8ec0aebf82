/*
 * test_reduce_plan.c - the reduction planner (runtime/reduce_plan.c), on the
 * CPU (no GPU needed).
 *
 * Axis normalization, the result's shape, coalescing and the class chosen;
 * every validation error, including the geometry that would overflow (the
 * regression cases of issue 13); the plan checker: for every (rank, axis
 * set, stride order) of a generated list, and for larger shapes that split,
 * a host walk that follows each class's kernel loop (units, splits, tiles,
 * lanes, the division-free reduced walk) must visit every (output, reduced
 * element) exactly once at the input offset the tensor's strides give, at
 * the logical index for index reductions; the generated float64 / int64
 * reference against hand-computed values.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kg_red_force.h"
#include "kg_red_reference.h"
#include "kg_red_table.h"
#include "kg_test.h"
#include "reduce_plan.h"

/* ---- CPU: planning and validation ----------------------------------------- */

static kg_context *cpu_ctx;

static void cpu_setup(void)
{
    kg_open(&cpu_ctx, 0); /* fails without a GPU; the context still validates */
    cr_assert_not_null(cpu_ctx);
}

static void cpu_teardown(void) { kg_close(cpu_ctx); }

/* A tensor at a fake, well-aligned address (planning never dereferences). */
static kg_tensor fake(uintptr_t at, kg_dtype dt, int ndim, const int64_t *shape)
{
    return kg_tensor_contiguous((void *)at, dt, ndim, shape);
}

#define IN_AT ((uintptr_t)1 << 40)
#define OUT_AT ((uintptr_t)1 << 41)
#define IDX_AT ((uintptr_t)1 << 42)

static kg_status plan_tuned(kg_reduce_op op, const kg_tensor *in, const int *axes, int n_axes, int keepdim,
                            const kg_red_tuning *t, kg_red_plan *p)
{
    /* the result's shape from a first planning pass with a matching out */
    kg_red_plan probe;
    const kg_red_info *info = &kg_red_infos[op];
    kg_tensor o = fake(OUT_AT, info->out[in->dtype], 0, NULL), x = fake(IDX_AT, KG_I64, 0, NULL);
    kg_status st = kg_reduce_plan_tuned(cpu_ctx, op, info->indexed ? NULL : &o, info->indexed ? &x : NULL, in, axes,
                                        n_axes, keepdim, 132, t, &probe);
    if (st != KG_ERR_SHAPE && st != KG_OK)
        return st;
    o = fake(OUT_AT, info->out[in->dtype], probe.out_ndim, probe.out_shape);
    x = fake(IDX_AT, KG_I64, probe.out_ndim, probe.out_shape);
    if (!t) /* the default tuning, through the entry point kg_reduce uses */
        return kg_reduce_plan(cpu_ctx, op, info->indexed ? NULL : &o, info->indexed ? &x : NULL, in, axes, n_axes,
                              keepdim, 132, p);
    return kg_reduce_plan_tuned(cpu_ctx, op, info->indexed ? NULL : &o, info->indexed ? &x : NULL, in, axes, n_axes,
                                keepdim, 132, t, p);
}

static kg_status plan_of(kg_reduce_op op, const kg_tensor *in, const int *axes, int n_axes, int keepdim, kg_red_plan *p)
{
    return plan_tuned(op, in, axes, n_axes, keepdim, NULL, p);
}

/* The default tuning without the flat class (the column modes it takes
   over where it applies). */
static kg_status plan_nf(kg_reduce_op op, const kg_tensor *in, const int *axes, int n_axes, int keepdim, kg_red_plan *p)
{
    kg_red_tuning t = kg_red_tuning_default;
    t.flat = 0;
    return plan_tuned(op, in, axes, n_axes, keepdim, &t, p);
}

/* The default chain of before session 25: RUNT and SEGW off (defaults
   since session 25's H200 round, pinned by run_tiles_cover_each_element_once
   and warp_staged_rows_cover_each_element_once): the older classes' rules,
   which the tests below pin on shapes those now take first. */
static kg_status plan_s24(kg_reduce_op op, const kg_tensor *in, const int *axes, int n_axes, int keepdim,
                          kg_red_plan *p)
{
    kg_red_tuning t = kg_red_tuning_default;
    t.run_tiles = t.seg_rows = 0;
    return plan_tuned(op, in, axes, n_axes, keepdim, &t, p);
}

/* The tuning that gives the plans of before the sweep (bench_reduce.c). */
static const kg_red_tuning old_tuning = {
    .cols_lanes = 32, .cols_split_lanes = 32, .cols_split_units_per_sm = 16, .blocks_per_sm = 16};

/* The defaults of the afternoon of 2026-12-01 (before the column modes
   and the one-wave splits) with one path on each. */
#define AFTERNOON_TUNING                                                                                               \
    .cols_lanes = KG_RED_THREADS, .cols_split_lanes = 64, .cols_split_units_per_sm = 8, .cols_split_pow2 = 1,          \
    .pack_rows = 1, .packed_blocks_per_sm = KG_RED_MIN_BLOCKS, .blocks_per_sm = 16
/* the column run path on */
static const kg_red_tuning runs_tuning = {AFTERNOON_TUNING, .cols_runs = 1};
/* the tile class on, index reductions too */
static const kg_red_tuning tile_tuning = {AFTERNOON_TUNING, .tile = 2, .tile_max_bytes = 256, .tile_min_elems = 1024};
/* the column runs and the narrow walks */
static const kg_red_tuning deep_tuning = {AFTERNOON_TUNING, .cols_runs = 1, .deep_walk = 1};

TestSuite(plan, .init = cpu_setup, .fini = cpu_teardown);

Test(plan, negative_and_unsorted_axes_give_the_same_result_shape)
{
    const int64_t s[] = {2, 3, 4, 5};
    kg_tensor in = fake(IN_AT, KG_F32, 4, s);
    kg_red_plan a, b, c;
    cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){3, 0, 2}, 3, 0, &a), KG_OK, "%s", kg_errmsg(cpu_ctx));
    cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){-2, -4, -1}, 3, 0, &b), KG_OK, "%s", kg_errmsg(cpu_ctx));
    cr_assert_eq(a.out_ndim, 1);
    cr_assert_eq(a.out_shape[0], 3);
    cr_assert_eq(memcmp(&a, &b, sizeof a), 0, "the same axes in another order/sign plan differently");
    cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){3, 0, 2}, 3, 1, &c), KG_OK);
    cr_assert_eq(c.out_ndim, 4);
    cr_assert(c.out_shape[0] == 1 && c.out_shape[1] == 3 && c.out_shape[2] == 1 && c.out_shape[3] == 1);
    cr_assert_eq(c.cls, KG_RED_NEST, "reduced dims 2, 3 (one run) innermost, dim 0 outside the kept dim 1");
    cr_assert_eq(c.args.walk.n, 2);
    cr_assert_eq(c.args.walk.size[0], 5, "the run of 20 elements in vectors of 4");
    cr_assert_eq(c.args.walk.in[0], 4);
    cr_assert_eq(c.args.walk.size[1], 2);
    cr_assert_eq(c.args.walk.in[1], 60);
    cr_assert_eq(c.args.vec, 1);
}

Test(plan, no_axes_means_every_axis)
{
    const int64_t s[] = {2, 3, 4};
    kg_tensor in = fake(IN_AT, KG_F32, 3, s);
    kg_red_plan p;
    cr_assert_eq(plan_of(KG_RED_SUM, &in, NULL, 0, 0, &p), KG_OK);
    cr_assert_eq(p.out_ndim, 0);
    cr_assert_eq(p.cls, KG_RED_ROWS);
    cr_assert_eq(p.args.n_out, 1);
    cr_assert_eq(p.args.red, 24);
    cr_assert_eq(plan_of(KG_RED_SUM, &in, NULL, 0, 1, &p), KG_OK);
    cr_assert(p.out_ndim == 3 && p.out_shape[0] == 1 && p.out_shape[1] == 1 && p.out_shape[2] == 1);
}

Test(plan, a_zero_dim_tensor_takes_axis_0_or_minus_1)
{
    kg_tensor in = fake(IN_AT, KG_F32, 0, NULL);
    kg_red_plan p;
    cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.out_ndim, 0);
    cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){-1}, 1, 1, &p), KG_OK);
    cr_assert_eq(p.out_ndim, 0);
    cr_assert_eq(p.args.red, 1);
    cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){1}, 1, 0, &p), KG_ERR_INVALID_ARGUMENT);
}

Test(plan, short_rows_take_narrow_lane_groups)
{
    const int64_t s[] = {4194304, 63};
    kg_tensor in = fake(IN_AT, KG_F32, 2, s);
    kg_red_plan p;
    cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS, "63 is not a whole number of vectors: not packed");
    cr_assert_eq(p.args.n_out, 4194304);
    cr_assert_eq(p.args.red, 63);
    cr_assert_eq(p.args.group, 1, "15 vectors per row: one lane");
    cr_assert_eq(p.args.splits, 1);
    cr_assert_eq(p.partial_bytes, 0);
    const int64_t s64[] = {4194304, 64};
    in = fake(IN_AT, KG_F32, 2, s64);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){1}, 1, 0, &old_tuning, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS, "packing off");
    cr_assert_eq(p.args.group, 2, "16 vectors per row: 2 lanes of 8 vectors");
    const int64_t t[] = {1000, 8};
    in = fake(IN_AT, KG_F32, 2, t);
    cr_assert_eq(plan_of(KG_RED_ARGMAX, &in, (int[]){-1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.args.group, 1);
    const int64_t u[] = {16384, 16384};
    in = fake(IN_AT, KG_F32, 2, u);
    cr_assert_eq(plan_of(KG_RED_MAX, &in, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.args.group, 32);
    cr_assert_eq(p.args.splits, 1);
}

Test(plan, short_dense_rows_of_8_16_or_32_vectors_are_packed)
{
    kg_red_plan p;
    static const struct {
        kg_dtype dt;
        int64_t cols, lanes; /* lanes per row: the row's 16-byte vectors, 0: not packed */
    } rows[] = {
        {KG_F32, 64, 16},   {KG_F32, 32, 8},  {KG_F32, 128, 32}, {KG_F32, 256, 0}, {KG_F32, 16, 0},  {KG_BF16, 64, 8},
        {KG_BF16, 256, 32}, {KG_F64, 64, 32}, {KG_U8, 128, 8},   {KG_U8, 64, 0},   {KG_I64, 32, 16}, {KG_F32, 96, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        kg_tensor in = fake(IN_AT, rows[i].dt, 2, (int64_t[]){4194304, rows[i].cols});
        const kg_reduce_op op = rows[i].dt == KG_U8 ? KG_RED_SUM : KG_RED_ARGMAX;
        cr_assert_eq(plan_of(op, &in, (int[]){1}, 1, 0, &p), KG_OK, "%s", kg_errmsg(cpu_ctx));
        if (!rows[i].lanes) {
            /* rows of at most rows_multi elements: NEST lanes of 4 rows each */
            const int lanes4 = rows[i].cols <= kg_red_tuning_default.rows_multi;
            cr_expect_eq(p.cls, lanes4 ? KG_RED_NEST : KG_RED_ROWS, "%s rows of %lld", kg_dtype_name(rows[i].dt),
                         (long long)rows[i].cols);
            if (lanes4)
                cr_expect_eq(p.args.cw, 4, "%s rows of %lld", kg_dtype_name(rows[i].dt), (long long)rows[i].cols);
            continue;
        }
        cr_expect_eq(p.cls, KG_RED_PACKED, "%s rows of %lld", kg_dtype_name(rows[i].dt), (long long)rows[i].cols);
        cr_expect_eq(p.args.group, rows[i].lanes, "%s rows of %lld", kg_dtype_name(rows[i].dt),
                     (long long)rows[i].cols);
        const int64_t per_unit = 32 / rows[i].lanes * KG_RED_PACK; /* rows of a warp's unit */
        cr_expect_eq(p.args.units, (4194304 + per_unit - 1) / per_unit);
        cr_expect_eq(p.args.splits, 1);
        cr_expect_eq(p.partial_bytes, 0);
        cr_expect_eq(p.grid, 132u * KG_RED_MIN_BLOCKS, "one block per resident slot");
    }
    /* a short last unit */
    kg_tensor in = fake(IN_AT, KG_F32, 2, (int64_t[]){1001, 64});
    cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_PACKED);
    cr_assert_eq(p.args.units, 63, "1001 rows in units of 16");
    cr_assert_eq(p.grid, 8u, "8 warps a block");
    /* not dense, not aligned, or rows not adjacent: not packed */
    kg_tensor v = fake(IN_AT, KG_F32, 2, (int64_t[]){1000, 64});
    v.strides[0] = 128; /* t[:, :64] of a (1000, 128) tensor */
    cr_assert_eq(plan_of(KG_RED_SUM, &v, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS);
    kg_tensor m = fake(IN_AT + 4, KG_F32, 2, (int64_t[]){1000, 64});
    cr_assert_eq(plan_of(KG_RED_SUM, &m, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS);
    kg_tensor b = fake(IN_AT, KG_F32, 3, (int64_t[]){10, 100, 64});
    cr_assert_eq(plan_of(KG_RED_SUM, &b, (int[]){2}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_PACKED, "dense outer dims merge into one");
    cr_assert_eq(plan_of(KG_RED_SUM, &b, (int[]){0, 2}, 2, 0, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_PACKED);
}

Test(plan, few_long_rows_split_across_blocks)
{
    const int64_t s[] = {(int64_t)1 << 28};
    kg_tensor in = fake(IN_AT, KG_F32, 1, s);
    kg_red_plan p;
    cr_assert_eq(plan_of(KG_RED_SUM, &in, NULL, 0, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS, "a full reduction of a dense tensor is one row");
    cr_assert_eq(p.args.group, KG_RED_THREADS);
    cr_assert_eq(p.args.splits, 132 * KG_RED_MIN_BLOCKS, "one wave of resident blocks, each a long chunk");
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, NULL, 0, 0, &runs_tuning, &p), KG_OK);
    cr_assert_gt(p.args.splits, 1000, "before: about 16 units per multiprocessor");
    cr_assert_eq(plan_of(KG_RED_SUM, &in, NULL, 0, 0, &p), KG_OK);
    cr_assert_geq(p.args.splits * p.args.chunk, p.args.red);
    cr_assert_lt((p.args.splits - 1) * p.args.chunk, p.args.red, "no split may be empty");
    cr_assert_eq(p.args.chunk % 4, 0, "splits start on vector boundaries");
    cr_assert_gt(p.partial_bytes, 0);
    cr_assert_leq(p.partial_bytes, KG_RED_PARTIAL_BYTES);
    const int64_t t[] = {32, 65536};
    in = fake(IN_AT, KG_BF16, 2, t);
    cr_assert_eq(plan_of(KG_RED_ARGMIN, &in, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS);
    cr_assert_eq(p.args.group, KG_RED_THREADS);
    cr_assert_gt(p.args.splits, 1);
    cr_assert_geq(p.partial_idx_at, (size_t)(32 * p.args.splits * 4));
}

Test(plan, columns_when_the_kept_inner_dim_is_contiguous)
{
    const int64_t s[] = {64, 4194304};
    kg_tensor in = fake(IN_AT, KG_F32, 2, s);
    kg_red_plan p;
    cr_assert_eq(plan_nf(KG_RED_SUM, &in, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.inner, 4194304);
    cr_assert_eq(p.args.n_out, 1);
    cr_assert_eq(p.args.red, 64);
    cr_assert_eq(p.args.walk.n, 1);
    cr_assert_eq(p.args.walk.in[0], 4194304);
    cr_assert_eq(p.args.walk.step[0], 1, "one lane down each column: a step of one row");
    cr_assert_eq(p.args.cw, 256, "one lane down each column");
    cr_assert_eq(p.args.vec, 1);
    cr_assert_eq(p.args.tiles, 4096);
    cr_assert_eq(p.args.splits, 1, "4096 column tiles fill the GPU");
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){0}, 1, 0, &old_tuning, &p), KG_OK);
    cr_assert_eq(p.args.cw, 32);
    cr_assert_eq(p.args.tiles, 32768);
    const int64_t t[] = {16384, 16384};
    in = fake(IN_AT, KG_F32, 2, t);
    cr_assert_eq(plan_nf(KG_RED_SUM, &in, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.cw, 64, "too few tiles of 256 lanes: the split takes tiles of 64");
    cr_assert_eq(p.args.tiles, 64);
    cr_assert_eq(p.args.splits, 8, "9 splits for 4 units per SM, rounded down to a power of two");
    cr_assert_eq(p.args.chunk, 2048);
    cr_assert_eq(p.args.units, 512);
    cr_assert_eq(p.grid, 512u);
    cr_assert_leq(p.partial_bytes, KG_RED_PARTIAL_BYTES);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){0}, 1, 0, &old_tuning, &p), KG_OK);
    cr_assert_eq(p.args.cw, 32);
    cr_assert_eq(p.args.splits, 17, "2112 units aimed at, not rounded");
    cr_assert_eq(p.args.chunk, 964);
    const kg_red_tuning forced = {
        .cols_lanes = 256, .cols_split_lanes = 256, .cols_split_units_per_sm = 8, .blocks_per_sm = 16, .splits = 64};
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){0}, 1, 0, &forced, &p), KG_OK);
    cr_assert_eq(p.args.cw, 256);
    cr_assert_eq(p.args.splits, 64);
    cr_assert_eq(p.partial_bytes, (size_t)16384 * 64 * 4, "every column's partial per split");
    cr_assert_leq(p.partial_bytes, KG_RED_PARTIAL_BYTES);
    const int64_t u[] = {32, 64, 128};
    in = fake(IN_AT, KG_F32, 3, u);
    cr_assert_eq(plan_nf(KG_RED_MEAN, &in, (int[]){1}, 1, 1, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.n_out, 32);
    cr_assert_eq(p.args.inner, 128);
    cr_assert_eq(p.args.splits, 1, "a small problem runs in one launch without scratch");
    cr_assert_eq(p.partial_bytes, 0);
    const int64_t v[] = {7, 300, 33};
    in = fake(IN_AT, KG_F32, 3, v);
    cr_assert_eq(plan_nf(KG_RED_SUM, &in, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.vec, KG_RED_CV_STRIDED, "33 columns are not a whole number of vectors");
    cr_assert_eq(p.args.tiles * p.args.cw * KG_RED_SCOLS, 64, "lanes of 4 columns, 16 apart");
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){1}, 1, 0, &runs_tuning, &p), KG_OK);
    cr_assert_eq(p.args.vec, KG_RED_CV_SCALAR, "one column per lane without cols_strided");
    /* 2-byte columns: 16-byte vectors of 8 (4 without cols_wide), loaded
       as 32-bit words (WIDE32, VEC32; WIDE, VEC without cols_words) */
    const int64_t b[] = {1000, 256};
    in = fake(IN_AT, KG_BF16, 2, b);
    cr_assert_eq(plan_nf(KG_RED_SUM, &in, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.args.vec, KG_RED_CV_WIDE32);
    cr_assert_eq(p.args.tiles * p.args.cw * 8, 256);
    kg_red_tuning nw = kg_red_tuning_default;
    nw.cols_words = 0;
    nw.flat = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){0}, 1, 0, &nw, &p), KG_OK);
    cr_assert_eq(p.args.vec, KG_RED_CV_WIDE);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){0}, 1, 0, &runs_tuning, &p), KG_OK);
    cr_assert_eq(p.args.vec, KG_RED_CV_VEC);
    const int64_t b4[] = {1000, 260};
    in = fake(IN_AT, KG_BF16, 2, b4);
    cr_assert_eq(plan_nf(KG_RED_SUM, &in, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.args.vec, KG_RED_CV_VEC32, "260 columns: vectors of 4, not 8");
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){0}, 1, 0, &nw, &p), KG_OK);
    cr_assert_eq(p.args.vec, KG_RED_CV_VEC);
    /* 48 vectors of columns: one tile of 64 lanes (without the split fill,
       whose split tiles take 16); with cols_fit (off: it lost where it took
       8 lanes) 3 tiles of 16 */
    const int64_t b3[] = {1000, 384};
    in = fake(IN_AT, KG_BF16, 2, b3);
    kg_red_tuning nofill = kg_red_tuning_default;
    nofill.flat = 0;
    nofill.cols_split_fill = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){0}, 1, 0, &nofill, &p), KG_OK);
    cr_assert_eq(p.args.vec, KG_RED_CV_WIDE32);
    cr_assert_eq(p.args.cw, 64);
    kg_red_tuning fit = kg_red_tuning_default;
    fit.cols_fit = 1;
    fit.flat = 0;
    fit.cols_split_fill = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){0}, 1, 0, &fit, &p), KG_OK);
    cr_assert_eq(p.args.cw, 16);
    cr_assert_eq(p.args.tiles, 3);
    /* two columns: one per lane, not four with two repeated */
    const int64_t two[] = {100000, 2};
    in = fake(IN_AT, KG_F32, 2, two);
    cr_assert_eq(plan_nf(KG_RED_SUM, &in, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.vec, KG_RED_CV_SCALAR);
    /* by default value reductions of such short rows are flat where the
       units fill the GPU: 2 columns, a period of 4 f32 (2 rows) per lane */
    cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS, "12 splits of 16384 elements: too few units");
    const int64_t two_long[] = {4194304, 2};
    in = fake(IN_AT, KG_F32, 2, two_long);
    cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_FLAT);
    cr_assert_eq(p.args.cw, 1);
    cr_assert_eq(p.args.inner, 2);
    cr_assert_eq(p.args.red, 4194304);
    cr_assert_eq(p.args.splits, 256, "264 units aimed at, 32768 elements each at least");
    cr_assert_eq(p.args.units, 256);
    /* index reductions keep the column modes */
    cr_assert_eq(plan_of(KG_RED_ARGMAX, &in, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    /* short rows under many outer positions: flat where an outer position
       holds at least 2048 elements (a fold per unit), else the columns
       (here, rows of 32 vectors: FLATW's packed rows, flatw_kept) */
    kg_tensor o = fake(IN_AT, KG_F32, 3, (int64_t[]){100000, 64, 2});
    cr_assert_eq(plan_of(KG_RED_SUM, &o, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert(p.cls != KG_RED_FLAT || (p.args.group == 32 && p.args.tile_rows == 2), "128 elements per outer position");
    cr_assert_eq(plan_nf(KG_RED_SUM, &o, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_FLAT, "128 elements per outer position, no flat class");
    o = fake(IN_AT, KG_F32, 3, (int64_t[]){1000, 1024, 2});
    cr_assert_eq(plan_of(KG_RED_SUM, &o, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_FLAT);
    cr_assert_eq(p.args.n_out, 1000);
    cr_assert_eq(p.args.splits, 1);
    /* few units: 4-byte elements need a unit per multiprocessor, 2-byte ones
       a quarter of that (their column modes are slower) */
    kg_tensor f = fake(IN_AT, KG_F32, 2, (int64_t[]){16779, 1000});
    cr_assert_eq(plan_of(KG_RED_SUM, &f, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS, "8 units of 1000 columns");
    kg_tensor hb = fake(IN_AT, KG_BF16, 2, (int64_t[]){131400, 128});
    cr_assert_eq(plan_of(KG_RED_SUM, &hb, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_FLAT);
    cr_assert_eq(p.args.units, 132, "64 splits (flat_partials / 128 columns) filled to one unit a multiprocessor");
    kg_red_tuning no_ff = kg_red_tuning_default;
    no_ff.flat_fill = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &hb, (int[]){0}, 1, 0, &no_ff, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_FLAT);
    cr_assert_eq(p.args.units, 64, "flat_fill 0: flat_partials / 128 columns");
    hb.dtype = KG_F32;
    cr_assert_eq(plan_of(KG_RED_SUM, &hb, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS, "64 units of f32");
    /* 33 bf16 columns: a period of 33 lanes (33 rows of 8) */
    const int64_t f33[] = {70001, 33};
    in = fake(IN_AT, KG_BF16, 2, f33);
    cr_assert_eq(plan_of(KG_RED_MAX, &in, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_FLAT);
    cr_assert_eq(p.args.cw, 33);
    cr_assert_gt(p.args.splits, 1, "one outer position: split");
    cr_assert_leq(p.args.splits * 33, kg_red_tuning_default.flat_partials);
    cr_assert_geq(p.args.chunk * 33, kg_red_tuning_default.flat_min_elems);
}

/* FLAT with a warp per outer position (flat_warp, the default): rows x columns slabs,
   runs under the columns, blocks at a stride; not where a period exceeds a
   warp, blocks would start off a vector, or the slabs are too few */
Test(plan, flat_with_a_warp_per_unit_takes_short_slabs)
{
    kg_red_tuning t = kg_red_tuning_default;
    kg_red_plan p;
    /* K2 R512 under 69300 outer positions (sweep #111) */
    kg_tensor in = fake(IN_AT, KG_F32, 6, (int64_t[]){100, 21, 33, 256, 2, 2});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){3, 4}, 2, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_FLAT);
    cr_assert_eq(p.args.group, 32);
    cr_assert_eq(p.args.cw, 1);
    cr_assert_eq(p.args.inner, 2);
    cr_assert_eq(p.args.run, 1);
    cr_assert_eq(p.args.chunk, 512);
    cr_assert_eq(p.args.walk.size[0], 1);
    cr_assert_eq(p.args.units, 69300);
    cr_assert_eq(p.args.splits, 1);
    cr_assert_eq(p.grid, 132 * 16, "8663 blocks of 8 warps, capped");
    cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){3, 4}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.args.group, 32, "the default");
    cr_assert_eq(p.occ, 4, "FLATWO, the default");
    kg_red_tuning o3 = t;
    o3.flat_warp_occ = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){3, 4}, 2, 0, &o3, &p), KG_OK);
    cr_assert_eq(p.occ, 0, "FLATW at 3 blocks per SM");
    kg_red_tuning off = t;
    off.flat_warp = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){3, 4}, 2, 0, &off, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST, "the nest's lanes of 4 outputs before");
    /* index reductions keep their plans */
    cr_assert_eq(plan_tuned(KG_RED_ARGMAX, &in, (int[]){3, 4}, 2, 0, &t, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_FLAT);
    /* R2 K2 R16, 29 blocks 576 elements apart under 9207 outer positions (#152) */
    kg_tensor b = fake(IN_AT, KG_BF16, 6, (int64_t[]){1023, 29, 9, 16, 2, 2});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &b, (int[]){1, 3, 5}, 3, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_FLAT);
    cr_assert_eq(p.args.group, 32);
    cr_assert_eq(p.args.run, 2);
    cr_assert_eq(p.args.inner, 2);
    cr_assert_eq(p.args.chunk, 16);
    cr_assert_eq(p.args.walk.size[0], 29);
    cr_assert_eq(p.args.walk.in[0], 576);
    cr_assert_eq(p.args.cw, 1, "a period of 4 bf16 in one lane");
    cr_assert_eq(p.args.units, 9207);
    /* blocks that would start off a vector: not taken */
    kg_tensor m = b;
    m.data = (void *)(IN_AT + 2);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &m, (int[]){1, 3, 5}, 3, 0, &t, &p), KG_OK);
    cr_assert(!(p.cls == KG_RED_FLAT && p.args.group == 32));
    /* 63 bf16 columns: a period of 63 lanes, more than a warp */
    kg_tensor w = fake(IN_AT, KG_BF16, 5, (int64_t[]){89, 3, 255, 8, 63});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &w, (int[]){3}, 1, 0, &t, &p), KG_OK);
    cr_assert(!(p.cls == KG_RED_FLAT && p.args.group == 32));
    /* too few outer positions for a wave of warps */
    kg_tensor f = fake(IN_AT, KG_F32, 3, (int64_t[]){1000, 512, 2});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &f, (int[]){1}, 1, 0, &t, &p), KG_OK);
    cr_assert(!(p.cls == KG_RED_FLAT && p.args.group == 32));
}

Test(plan, adjacent_reduced_dims_merge)
{
    /* the older classes' rules: RUNT and SEGW (defaults since session 25) off (plan_s24) */
    const int64_t s[] = {2, 3, 4};
    kg_tensor in = fake(IN_AT, KG_F32, 3, s);
    kg_red_plan p;
    cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){1, 2}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_SEGW, "rows of 12 f32: warp-staged by default");
    cr_assert_eq(p.args.run, 12);
    cr_assert_eq(plan_s24(KG_RED_SUM, &in, (int[]){1, 2}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS);
    cr_assert_eq(p.args.red, 12);
    cr_assert_eq(p.args.n_out, 2);
    cr_assert_eq(plan_nf(KG_RED_SUM, &in, (int[]){0, 1}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST, "4 columns, 6 rows: too few for a block of columns");
    cr_assert_eq(p.args.walk.n, 1, "dims 0 and 1 merge into one walk dim");
    cr_assert_eq(p.args.walk.in[0], 4);
    cr_assert_eq(p.args.walk.size[0], 6);
    cr_assert_eq(p.args.red, 6);
    kg_tensor w = fake(IN_AT, KG_F32, 3, (int64_t[]){200, 3, 64});
    cr_assert_eq(plan_nf(KG_RED_SUM, &w, (int[]){0, 1}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.inner, 64);
    cr_assert_eq(p.args.walk.n, 1, "dims 0 and 1 merge into one walk dim");
    cr_assert_eq(p.args.walk.in[0], 64);
    cr_assert_eq(p.args.walk.size[0], 600);
    cr_assert_eq(plan_s24(KG_RED_SUM, &in, (int[]){0, 2}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.walk.n, 2);
    cr_assert_eq(p.args.vec, 1, "runs of 4 f32: one vector each");
    const int64_t t[] = {3, 2, 1, 2};
    in = fake(IN_AT, KG_F32, 4, t);
    cr_assert_eq(plan_s24(KG_RED_SUM, &in, (int[]){1, 2, 3}, 3, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS, "a size-1 dim between reduced dims does not separate them");
    cr_assert_eq(p.args.red, 4);
}

Test(plan, views_transposed_sliced_and_expanded)
{
    /* the older classes' rules: RUNT and SEGW (defaults since session 25) off (plan_s24) */
    kg_red_plan p;
    /* a transposed [5,7] (strides 1,5): summing every axis is one dense run,
       but argmax keeps the logical order (its index is the logical one) */
    kg_tensor t = fake(IN_AT, KG_F32, 2, (int64_t[]){5, 7});
    t.strides[0] = 1;
    t.strides[1] = 5;
    cr_assert_eq(plan_s24(KG_RED_SUM, &t, NULL, 0, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS);
    cr_assert_eq(p.args.red, 35);
    cr_assert_eq(plan_s24(KG_RED_ARGMAX, &t, NULL, 0, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.walk.size[0], 7, "innermost logical dim first");
    cr_assert_eq(p.args.walk.in[0], 5);
    cr_assert_eq(p.args.vec, 0);
    cr_assert_eq(plan_s24(KG_RED_SUM, &t, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS, "dim 0 of the transpose is contiguous");
    cr_assert_eq(p.args.n_out, 7);
    /* t[:, ::2] along dim 1 and t[::2, :] along dim 0 */
    kg_tensor s = fake(IN_AT, KG_F32, 2, (int64_t[]){64, 1500});
    s.strides[0] = 3000;
    s.strides[1] = 2;
    cr_assert_eq(plan_s24(KG_RED_SUM, &s, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.vec, 0, "every other element: no vectors");
    s = fake(IN_AT, KG_F32, 2, (int64_t[]){64, 3000});
    s.strides[0] = 6000;
    cr_assert_eq(plan_s24(KG_RED_SUM, &s, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.walk.in[0], 6000);
    /* an expanded input: stride 0 along the reduced dim */
    kg_tensor e = fake(IN_AT, KG_F32, 2, (int64_t[]){64, 100});
    e.strides[0] = 0;
    cr_assert_eq(plan_s24(KG_RED_SUM, &e, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.walk.in[0], 0);
    /* a misaligned start: columns fall back to one element per lane */
    kg_tensor m = fake(IN_AT + 4, KG_F32, 2, (int64_t[]){64, 100});
    cr_assert_eq(plan_nf(KG_RED_SUM, &m, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.args.vec, KG_RED_CV_STRIDED);
}

Test(plan, more_reduced_groups_than_a_walk_holds_take_the_strided_class)
{
    /* five reduced dims whose strides do not chain: no walk of 4 holds them */
    kg_tensor in = fake(IN_AT, KG_U8, 5, (int64_t[]){3, 3, 3, 3, 3});
    const int64_t st[] = {2000, 300, 40, 7, 2};
    memcpy(in.strides, st, sizeof st);
    kg_red_plan p;
    cr_assert_eq(plan_of(KG_RED_SUM, &in, NULL, 0, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_STRIDED32);
    in.strides[0] = (int64_t)1 << 33;
    cr_assert_eq(plan_of(KG_RED_SUM, &in, NULL, 0, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_STRIDED64, "offsets past 2^31");
    /* the same dims, four of them reduced: a walk */
    cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){0, 1, 2, 3}, 4, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.walk.n, 4);
}

Test(plan, the_issue_10_shapes_take_the_walking_classes)
{
    kg_red_plan p;
    /* [64,256,32,256] (0,2): columns of 256 under two reduced dims */
    kg_tensor a = fake(IN_AT, KG_F32, 4, (int64_t[]){64, 256, 32, 256});
    cr_assert_eq(plan_of(KG_RED_SUM, &a, (int[]){0, 2}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.inner, 256);
    cr_assert_eq(p.args.walk.n, 2);
    cr_assert_eq(p.args.vec, 1);
    /* (1,3): runs of 256 innermost, in vectors */
    cr_assert_eq(plan_of(KG_RED_SUM, &a, (int[]){1, 3}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.vec, 1);
    cr_assert_eq(p.args.walk.size[0], 64);
    cr_assert_eq(p.args.walk.in[1], 8192);
    /* [4096,64,1024] (0,2): 64 outputs of 4M elements, split across blocks */
    kg_tensor b = fake(IN_AT, KG_F32, 3, (int64_t[]){4096, 64, 1024});
    cr_assert_eq(plan_of(KG_RED_SUM, &b, (int[]){0, 2}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.group, KG_RED_THREADS);
    cr_assert_gt(p.args.splits, 1);
    cr_assert_eq(p.args.chunk % 4, 0);
    /* [2048,3,4096] axis 1, [7,1048576] axis 0: a few rows under wide columns */
    kg_tensor c = fake(IN_AT, KG_F32, 3, (int64_t[]){2048, 3, 4096});
    cr_assert_eq(plan_of(KG_RED_SUM, &c, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.cw, 256);
    /* two column tiles per unit (COLSQ) by default: 2048 x 2 units */
    cr_assert_eq(p.occ, 4);
    cr_assert_eq(p.args.group, 2);
    cr_assert_eq(p.args.tiles, 2);
    cr_assert_eq(p.args.units, 4096);
    cr_assert_eq(p.args.vstore, 0, "4-byte results one by one by default");
    kg_tensor d = fake(IN_AT, KG_F32, 2, (int64_t[]){7, 1048576});
    cr_assert_eq(plan_of(KG_RED_SUM, &d, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.args.group, 2);
    cr_assert_eq(p.args.units, 512);
    /* bf16 [15,2237,1000] axis 0: 547 units of two tiles, one wave of 528 blocks and 19 more: one tile per unit */
    kg_tensor e = fake(IN_AT, KG_BF16, 3, (int64_t[]){15, 2237, 1000});
    cr_assert_eq(plan_of(KG_RED_SUM, &e, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.group, 0);
    cr_assert_eq(p.args.units, 1093);
    cr_assert_eq(p.args.vstore, 1, "2-byte results in vector stores by default");
    kg_red_tuning t = kg_red_tuning_default;
    t.cols_pair = 2;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &e, (int[]){0}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.args.group, 2);
    cr_assert_eq(p.args.units, 547);
}

Test(plan, is_deterministic_and_bounded_over_many_shapes)
{
    static const int64_t sizes[] = {1, 2, 3, 7, 64, 100, 1000, 4096, 65536, 1 << 20};
    const int ns = (int)(sizeof sizes / sizeof sizes[0]);
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < ns; j++)
            for (int ax = 0; ax < 2; ax++)
                for (int dt = 0; dt < KG_DTYPE_COUNT; dt++) {
                    if (sizes[i] * sizes[j] > ((int64_t)1 << 31))
                        continue;
                    kg_tensor in = fake(IN_AT, (kg_dtype)dt, 2, (int64_t[]){sizes[i], sizes[j]});
                    kg_red_plan a, b;
                    const kg_reduce_op op = dt == KG_BOOL ? KG_RED_MAX : KG_RED_ARGMAX;
                    cr_assert_eq(plan_of(op, &in, &ax, 1, 0, &a), KG_OK, "%s", kg_errmsg(cpu_ctx));
                    cr_assert_eq(plan_of(op, &in, &ax, 1, 0, &b), KG_OK);
                    cr_assert_eq(memcmp(&a, &b, sizeof a), 0);
                    cr_assert_leq(a.partial_bytes, KG_RED_PARTIAL_BYTES);
                    cr_assert_geq(a.grid, 1u);
                    if (a.cls == KG_RED_PACKED)
                        cr_assert_geq(a.args.units * (32 / a.args.group) * KG_RED_PACK, a.args.n_out);
                    if (a.cls == KG_RED_COLS)
                        cr_assert(a.args.cw >= 1 && a.args.cw <= KG_RED_THREADS && (a.args.cw & (a.args.cw - 1)) == 0);
                    if (a.args.splits > 1) {
                        cr_assert_lt((a.args.splits - 1) * a.args.chunk, a.args.red);
                        cr_assert_leq(a.args.units / a.args.splits, KG_RED_MAX_SEMAPHORES);
                    }
                }
}

/* ---- CPU: the plan checker -------------------------------------------------- */

/* The host image of kg_walk_at / kg_walk_step (templates/reduce.cuh). */
typedef struct wpos {
    int64_t x[KG_RED_WALK_DIMS], off;
} wpos;

static void walk_at(const kg_red_walk *W, int64_t r, wpos *p)
{
    memset(p, 0, sizeof *p);
    for (int d = 0; d < W->n; d++) {
        int64_t q = 0, m = r;
        if (d < W->n - 1) {
            q = r / W->size[d];
            m = r - q * W->size[d];
        }
        p->x[d] = m;
        p->off += m * W->in[d];
        r = q;
    }
}

static void walk_step(const kg_red_walk *W, wpos *p)
{
    int c = 0;
    p->x[0] += W->step[0];
    p->off += W->step[0] * W->in[0];
    if (W->n > 1 && p->x[0] >= W->size[0]) {
        p->x[0] -= W->size[0];
        p->off -= W->size[0] * W->in[0];
        c = 1;
    }
    if (!c && !W->hi)
        return;
    for (int d = 1; d < W->n; d++) {
        const int64_t s = W->step[d] + c;
        p->x[d] += s;
        p->off += s * W->in[d];
        c = d < W->n - 1 && p->x[d] >= W->size[d];
        if (c) {
            p->x[d] -= W->size[d];
            p->off -= W->size[d] * W->in[d];
        }
    }
}

/* Input offset and result offset (the values', or the indices' for index
   reductions) of outer position o. */
static void outer_of(const kg_red_dims *D, int indexed, int64_t o, int64_t *io, int64_t *oo)
{
    *io = *oo = 0;
    for (int d = 0; d < D->n; d++) {
        const int64_t m = d == D->n - 1 ? o : o % D->size[d];
        *io += m * D->in[d];
        *oo += m * (indexed ? D->idx[d] : D->out[d]);
        o = d == D->n - 1 ? 0 : o / D->size[d];
    }
}

/* A COLS plan's result offset of column c (the values', or the indices'):
   c times the columns' stride, or over chained kept dims (A->rdims,
   cols_chain) its digits times their strides. */
static int64_t col_out(const kg_red_args *A, int64_t c, int indexed)
{
    if (A->rdims.n == 0)
        return c * (indexed ? A->inner_idx : A->inner_out);
    int64_t off = 0;
    for (int d = 0; d < A->rdims.n; d++) {
        off += c % A->rdims.size[d] * (indexed ? A->rdims.idx[d] : A->rdims.out[d]);
        c /= A->rdims.size[d];
    }
    return off;
}

static uint64_t mix(int64_t x)
{
    uint64_t z = (uint64_t)x + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* What the checker compares: per output, the visits and a hash of the
   multiset of input offsets; for index reductions every visit's index must
   be the logical one of its input offset. */
typedef struct pcheck {
    const kg_tensor *in;
    unsigned mask;
    int64_t n_out, red, *count;
    uint64_t *hash;
    int indexed, bad;
    char why[200];
} pcheck;

/* The input offset of output o (row-major over kept dims) and reduced
   element r (row-major over reduced dims). */
static int64_t logical_off(const pcheck *c, int64_t o, int64_t r)
{
    int64_t off = 0;
    for (int d = c->in->ndim - 1; d >= 0; d--) {
        if ((c->mask >> d) & 1u) {
            off += (r % c->in->shape[d]) * c->in->strides[d];
            r /= c->in->shape[d];
        } else {
            off += (o % c->in->shape[d]) * c->in->strides[d];
            o /= c->in->shape[d];
        }
    }
    return off;
}

static void visit(pcheck *c, int64_t oo, int64_t r, int64_t in_off)
{
    if (oo < 0 || oo >= c->n_out || r < 0 || r >= c->red) {
        if (!c->bad++)
            snprintf(c->why, sizeof c->why, "visit of output %lld, element %lld out of range", (long long)oo,
                     (long long)r);
        return;
    }
    c->count[oo]++;
    c->hash[oo] += mix(in_off);
    if (c->indexed && logical_off(c, oo, r) != in_off && !c->bad++)
        snprintf(c->why, sizeof c->why, "output %lld: index %lld read at %lld, not %lld", (long long)oo, (long long)r,
                 (long long)in_off, (long long)logical_off(c, oo, r));
}

static void fail(pcheck *c, const char *what)
{
    if (!c->bad++)
        snprintf(c->why, sizeof c->why, "%s", what);
}

/* The input's lowest and highest element offsets from its data pointer. */
static void extent_of(const kg_tensor *in, int64_t *lo, int64_t *hi)
{
    *lo = *hi = 0;
    for (int d = 0; d < in->ndim; d++)
        if (in->shape[d] > 1)
            *(in->strides[d] < 0 ? lo : hi) += (in->shape[d] - 1) * in->strides[d];
}

/* kg_red_run_stripes (rows_stripes): split s of A->splits of the row at
   element offset io, every lane t of the block: the scalar head before the
   first aligned 16-byte vector (split 0), lines s, s + S, ... of
   KG_RED_THREADS vectors, then (split S - 1) the vectors past the last
   whole line and the scalar tail; each lane's elements must come in
   increasing index order (an index reduction keeps the first of equals). */
static void simulate_stripes(pcheck *c, const kg_red_args *A, int64_t io, int64_t oo, int64_t s, size_t es)
{
    const int64_t V = 16 / (int64_t)es, NT = KG_RED_THREADS, n = A->red, S = A->splits;
    const uintptr_t at = (uintptr_t)c->in->data + (uintptr_t)(io * (int64_t)es);
    int64_t h = (int64_t)((16 - (at & 15)) & 15) / (int64_t)es;
    if (h > n)
        h = n;
    const int64_t nv = (n - h) / V, lines = nv / NT, done = h + nv * V;
    for (int64_t t = 0; t < NT; t++) {
        int64_t last = -1;
#define PUSH_(k)                                                                                                       \
    do {                                                                                                               \
        if ((k) <= last)                                                                                               \
            fail(c, "stripes: a lane's elements out of index order");                                                  \
        last = (k);                                                                                                    \
        visit(c, oo, (k), io + (k));                                                                                   \
    } while (0)
        if (s == 0)
            for (int64_t k = t; k < h; k += NT)
                PUSH_(k);
        for (int64_t r = s; r < lines; r += S)
            for (int64_t e = 0; e < V; e++)
                PUSH_(h + (r * NT + t) * V + e);
        if (s == S - 1) {
            for (int64_t v = lines * NT + t; v < nv; v += NT)
                for (int64_t e = 0; e < V; e++)
                    PUSH_(h + v * V + e);
            for (int64_t k = t; k < n - done; k += NT)
                PUSH_(done + k);
        }
#undef PUSH_
    }
}

/* reduce_transv.cuh's loads, replayed on the host: the width the kernel
   loads a lane's 8 elements at (q, a byte address) -- 16, 8 or 4 bytes
   as q's offset from 16 bytes allows, inside the input's extent [lo, hi];
   2 (element by element, kg_red_transv_edge) past it or at 2 bytes off 4. */
static int transv_load_width(int64_t q, int64_t lo, int64_t hi)
{
    const int64_t mis = q & 15;
    if (q >= lo && q + 14 <= hi && !(mis & 3))
        return mis == 0 ? 16 : mis == 8 ? 8 : 4;
    return 2;
}

/* TRANS / TRANSV: the ki dims' input strides chain from 1, or from the
   reduced run's length L (args.cw > 1, trans_run: the input offset of ki
   is ki L), and their sizes multiply to the plan's inner. */
static int trans_chained(const kg_red_args *A)
{
    int chained = A->rdims.n >= 1 && A->rdims.in[0] == (A->cw > 1 ? A->cw : 1);
    int64_t ki = 1;
    for (int d = 0; d < A->rdims.n; d++) {
        chained = chained && (d == 0 || A->rdims.in[d] == A->rdims.in[d - 1] * A->rdims.size[d - 1]);
        ki *= A->rdims.size[d];
    }
    return chained && ki == A->inner;
}

/* TRANS / TRANSV: visits the elements of every unit, tiles of tki ki x tko
   ko outputs (nko of them, in ntko tiles) of an outer position, ki tiles
   fastest, every walk position in order; with check_extent each element's
   offset must lie within [args.chunk, args.run] (TRANSV's input extent). */
static void trans_tiles_visit(pcheck *c, const kg_red_args *A, int64_t tki, int64_t tko, int64_t nko, int64_t ntko,
                              int check_extent)
{
    for (int64_t u = 0; u < A->units && !c->bad; u++) {
        const int64_t o = u / (A->tiles * ntko), rem = u % (A->tiles * ntko), to = rem / A->tiles, ti = rem % A->tiles;
        int64_t io, oo;
        outer_of(&A->outer, c->indexed, o, &io, &oo);
        for (int64_t x = 0; x < tki; x++)
            for (int64_t yo = 0; yo < tko; yo++) {
                const int64_t k = ti * tki + x, ko = to * tko + yo;
                if (k >= A->inner || ko >= nko)
                    continue;
                int64_t kout = 0, r = k;
                for (int d = 0; d < A->rdims.n; d++) {
                    kout += (r % A->rdims.size[d]) * A->rdims.out[d];
                    r /= A->rdims.size[d];
                }
                wpos w;
                walk_at(&A->walk, 0, &w);
                for (int64_t e = 0; e < A->red; e++, walk_step(&A->walk, &w)) {
                    /* trans_run: ki at k L; trans_ko2: ko over two dims */
                    const int64_t kin = A->cw > 1 ? k * A->cw : k;
                    const int64_t kon = A->vstore > 0 ? (ko % A->vstore) * A->inner_idx + (ko / A->vstore) * A->run
                                                      : ko * A->inner_idx;
                    const int64_t at = io + kin + kon + w.off;
                    if (check_extent && (at < A->chunk || at > A->run))
                        fail(c, "transv element outside the input's extent");
                    visit(c, oo + kout + ko * A->inner_out, e, at);
                }
            }
    }
}

/* s35r1 (misaligned address on the GPU, bench t2 [17,1973,500,8]: walk
   stride 16,770,500 elements, 8 bytes off 16): every address the kernel's
   index math produces -- the row's aligned base at the walk's first
   position, lane l's vector 16 l bytes on, each walk position's offset --
   for the input at every 2-byte offset from 16 bytes, loaded at a width
   that divides it; each position's rows (every lane, every row) at one
   width (warp-uniform branch). Counts per width in transv_widths. */
static int64_t transv_widths[17];
static void transv_replay_alignment(pcheck *c, const kg_red_args *A)
{
    const int64_t TKI = KG_RED_TRANSV_VECS * 8, TKO = KG_RED_TRANSV_ROWS, NW = KG_RED_THREADS / 32,
                  M = TKO / NW, nko = A->tile_rows, tko = (nko + TKO - 1) / TKO, per_o = A->tiles * tko;
    int64_t poff[KG_RED_TRANSV_POS];
    const int npos = (int)A->red;
    if (npos > KG_RED_TRANSV_POS)
        return;
    wpos w;
    walk_at(&A->walk, 0, &w);
    for (int i = 0; i < npos; i++, walk_step(&A->walk, &w))
        poff[i] = w.off;
    /* units: all of them up to 1024, else a spread of 1024 (first and last included) */
    const int64_t nu = A->units <= 1024 ? A->units : 1024;
    for (int64_t b = 0; b < 16 && !c->bad; b += 2)
        for (int64_t ui = 0; ui < nu && !c->bad; ui++) {
            const int64_t u = nu == A->units ? ui : ui * (A->units - 1) / (nu - 1);
            const int64_t o = u / per_o, rem = u - o * per_o, to = rem / A->tiles, ti = rem - to * A->tiles;
            int64_t io, oo;
            outer_of(&A->outer, 0, o, &io, &oo);
            const int64_t k0 = ti * TKI, nki = A->inner - k0 < TKI ? A->inner - k0 : TKI;
            const int64_t lo = b + 2 * A->chunk, hi = b + 2 * A->run;
            for (int i = 0; i < npos; i++) {
                int wd = 0;
                for (int64_t wi = 0; wi < NW; wi++)
                    for (int64_t m = 0; m < M; m++) {
                        const int64_t ko = to * TKO + wi + m * NW;
                        const int64_t row = b + 2 * (io + k0 + (ko < nko ? ko : 0) * A->inner_idx),
                                      a = row & ~(int64_t)15, sh = (row - a) / 2;
                        for (int64_t l = 0; l < 32; l++) {
                            if (!(ko < nko && l * 8 - sh < nki))
                                continue;
                            const int64_t q = a + 16 * l + 2 * poff[i];
                            const int width = transv_load_width(q, lo, hi);
                            transv_widths[width]++;
                            if (q % width != 0) {
                                fail(c, "transv load at an address not aligned to its width");
                                return;
                            }
                            if (width > 2 && wd && width != wd) {
                                fail(c, "transv position's rows at different widths");
                                return;
                            }
                            if (width > 2)
                                wd = width;
                        }
                    }
            }
        }
}

/* Follows the kernel loops of plan p (reduce.cuh) on the host. */
static void simulate(const kg_red_plan *p, pcheck *c, size_t es)
{
    const kg_red_args *A = &p->args;
    const int64_t V = 16 / (int64_t)es;
    const int64_t cut = (p->cls == KG_RED_COLS && A->run > 1) || p->cls == KG_RED_TILE || p->cls == KG_RED_RUNT
                            ? A->red / A->run
                        : p->cls == KG_RED_NEST && A->vec == KG_RED_NEST_COVER         ? A->tiles
                                                                                       : A->red; /* what splits cut */
    if (A->splits > 1 && ((A->splits - 1) * A->chunk >= cut || A->splits * A->chunk < cut))
        fail(c, "splits do not cut the reduced elements into non-empty chunks");
    if (p->cls == KG_RED_PACKED) {
        if (A->units * (32 / A->group) * KG_RED_PACK < A->n_out)
            fail(c, "packed units do not cover the rows");
        for (int64_t o = 0; o < A->n_out; o++) {
            int64_t io, oo;
            outer_of(&A->outer, c->indexed, o, &io, &oo);
            if (io != o * A->red)
                fail(c, "packed rows are not dense");
            for (int64_t r = 0; r < A->red; r++)
                visit(c, oo, r, o * A->red + r);
        }
        return;
    }
    /* SLAB, TRANS (and TRANSV): a thread sums an output's elements in one chain */
    if ((p->cls == KG_RED_TRANS || p->cls == KG_RED_SLAB) && A->red > KG_RED_CHAIN_MAX)
        fail(c, "slab / trans chain longer than KG_RED_CHAIN_MAX");
    if (p->cls == KG_RED_TRANS && A->vec == 1) {
        /* reduce_transv.cuh (trans_vec): tiles of TKI ki (31 vectors of 8
           2-byte elements, each row's read as the at most 32 aligned vectors
           that cover it) x TKO ko outputs of an outer position (ki tiles
           fastest), every walk position (at most KG_RED_TRANSV_POS) in
           order; args.chunk / args.run the input's extent */
        const int64_t TKI = KG_RED_TRANSV_VECS * 8, TKO = KG_RED_TRANSV_ROWS, nko = A->tile_rows,
                      tko = nko > 0 ? (nko + TKO - 1) / TKO : 0;
        if (c->indexed || es != 2 || (c->in->dtype != KG_BF16 && c->in->dtype != KG_F16) || !trans_chained(A) ||
            nko < 1 || A->tiles * TKI < A->inner || (A->tiles - 1) * TKI >= A->inner || A->splits != 1 ||
            p->partial_bytes || A->group != 0 || A->red > KG_RED_TRANSV_POS || A->chunk != 0 || A->run < 0 ||
            A->units != A->n_out * A->tiles * tko || (TKI + 7 + 7) / 8 > 32)
            fail(c, "transv geometry out of bounds");
        transv_replay_alignment(c, A);
        trans_tiles_visit(c, A, TKI, TKO, nko, tko, 1);
        return;
    }
    if (p->cls == KG_RED_TRANS) {
        /* reduce_trans.cuh: tiles of TT ki x TT ko outputs of an outer
           position (ki tiles fastest), ki digits over rdims (input strides
           chained from 1: the input offset is ki), every walk position */
        const int64_t TT = KG_RED_TRANS_TILE, nko = A->tile_rows, tko = nko > 0 ? (nko + TT - 1) / TT : 0;
        if (c->indexed || es > 4 || !trans_chained(A) || nko < 1 || A->tiles * TT < A->inner ||
            (A->tiles - 1) * TT >= A->inner || A->splits != 1 || p->partial_bytes || A->group != 0 ||
            A->units != A->n_out * A->tiles * tko || A->cw < 0 || A->vstore < 0 ||
            (A->vstore > 0 && nko % A->vstore) || (A->cw > 1 && A->red % A->cw))
            fail(c, "trans geometry out of bounds");
        trans_tiles_visit(c, A, TT, TT, nko, tko, 0);
        return;
    }
    if (p->cls == KG_RED_SLAB) {
        /* reduce_slab.cuh: tiles of tile_rows slabs [run, cw] along outer
           dim 0, thread t reducing column t mod cw of slabs t / cw + m P */
        const int64_t R = A->run, C = A->cw, npos = A->red / (R > 0 ? R : 1), S = A->tile_rows;
        const int64_t P = C > 0 ? KG_RED_THREADS / C : 0;
        if (c->indexed || es > 4 || R < 2 || A->red % R || C < 1 || C > KG_RED_THREADS || S < 1 ||
            S * R * C * (int64_t)es > KG_RED_SLAB_BYTES || P < 1 || (S + P - 1) / P > KG_RED_SLAB_OUTS ||
            A->splits != 1 || p->partial_bytes || A->outer.n < 1 || A->outer.size[0] != A->inner ||
            A->outer.in[0] != R * C || A->rdims.n < 1 || A->rdims.in[0] != 1 || A->tiles * S < A->inner ||
            A->n_out % A->inner || A->units != A->n_out / A->inner * A->tiles)
            fail(c, "slab geometry out of bounds");
        int64_t cols = 1; /* the column dims: input strides chained from 1 */
        for (int d = 0; d < A->rdims.n; d++) {
            if (A->rdims.in[d] != cols)
                fail(c, "slab columns not contiguous");
            cols *= A->rdims.size[d];
        }
        if (cols != C)
            fail(c, "slab columns do not multiply to cw");
        for (int64_t u = 0; u < A->units; u++) {
            const int64_t o = u / A->tiles, tile = u % A->tiles, s0 = tile * S;
            const int64_t slabs = A->inner - s0 < S ? A->inner - s0 : S;
            int64_t io, oo;
            outer_of(&A->outer, c->indexed, o * A->inner + s0, &io, &oo);
            wpos w;
            walk_at(&A->walk, 0, &w);
            for (int64_t k = 0; k < npos; k++, walk_step(&A->walk, &w))
                for (int64_t s = 0; s < slabs; s++)
                    for (int64_t col = 0; col < C; col++) {
                        int64_t cof = 0, q = col;
                        for (int d = 0; d < A->rdims.n; d++) {
                            cof += (q % A->rdims.size[d]) * A->rdims.out[d];
                            q /= A->rdims.size[d];
                        }
                        for (int64_t r = 0; r < R; r++)
                            visit(c, oo + s * A->outer.out[0] + cof, k * R + r, io + w.off + s * R * C + r * C + col);
                    }
        }
        return;
    }
    if (p->cls == KG_RED_TILE) {
        const int64_t L = A->run, g = A->group, npos = A->red / L;
        if (L < 2 || A->red % L || g < 1 || g > 32 || (g & (g - 1)) || g > L || A->tile_rows * L > KG_RED_TILE_ELEMS ||
            A->tile_rows > KG_RED_TILE_ELEMS / (2 * KG_RED_THREADS) * (KG_RED_THREADS / g) ||
            A->tiles * A->tile_rows < A->inner || A->units != A->n_out * A->tiles * A->splits)
            fail(c, "tile geometry out of bounds");
        for (int64_t u = 0; u < A->units; u++) {
            const int64_t grp = u / A->splits, split = u % A->splits, o = grp / A->tiles, tile = grp % A->tiles;
            int64_t io, oo;
            outer_of(&A->outer, c->indexed, o, &io, &oo);
            const int64_t row0 = tile * A->tile_rows;
            const int64_t rows = A->inner - row0 < A->tile_rows ? A->inner - row0 : A->tile_rows;
            const int64_t w0 = split * A->chunk, w1 = w0 + A->chunk < npos ? w0 + A->chunk : npos;
            if (w0 >= w1)
                continue;
            wpos w;
            walk_at(&A->walk, w0, &w);
            for (int64_t k = w0; k < w1; k++, walk_step(&A->walk, &w))
                for (int64_t r = 0; r < rows; r++)
                    for (int64_t e = 0; e < L; e++)
                        visit(c, oo + (row0 + r) * (c->indexed ? A->inner_idx : A->inner_out), k * L + e,
                              io + (row0 + r) * L + w.off + e);
        }
        return;
    }
    const int block = A->group == KG_RED_THREADS || p->cls == KG_RED_COLS;
    if (p->cls == KG_RED_FLAT && A->group == 32 && A->tile_rows > 1) {
        /* kg_red_flatw_kept: n_out dense rows of nv = cw vectors, row
           element q in column q mod KW; unit u's load j of lane l is vector
           u U 32 + j 32 + l of the input, of row (that) / nv, and folds into
           partial e mod KW of its row (U = KG_RED_PACK) */
        const int64_t KW = A->tile_rows, nv = A->cw, U = KG_RED_PACK;
        if (c->indexed || es < 2 || (KW != 2 && KW != 4) || V % KW || (nv != 8 && nv != 16 && nv != 32) ||
            nv * V != KW * A->chunk || A->chunk != A->red || A->inner != KW || A->splits != 1 || p->partial_bytes ||
            A->units * U * (32 / nv) < A->n_out || (A->units - 1) * U * (32 / nv) >= A->n_out || p->occ != 0)
            fail(c, "flatw kept geometry out of bounds");
        if (c->bad)
            return;
        for (int64_t u = 0; u < A->units; u++)
            for (int64_t j = 0; j < U; j++)
                for (int64_t l = 0; l < 32; l++) {
                    const int64_t v = u * U * 32 + j * 32 + l, row = v / nv;
                    if (row >= A->n_out)
                        continue;
                    int64_t io, oo;
                    outer_of(&A->outer, 0, row, &io, &oo);
                    if (io != row * nv * V)
                        fail(c, "flatw kept rows are not dense");
                    for (int64_t e = 0; e < V; e++) {
                        const int64_t q = (v % nv) * V + e;
                        visit(c, oo + (e % KW) * A->inner_out, q / KW, io + q);
                    }
                }
        return;
    }
    if (p->cls == KG_RED_FLAT && A->group == 32) {
        /* kg_red_flatw: a warp per outer position; its nb blocks (stride S)
           of n = chunk x P elements, P = run x inner; lane t of NT takes
           vectors t, t + NT, ... of them and folds element e into period
           position (t V + e - h) mod P, column position / run: that must be
           the element's column */
        const int64_t K = A->inner, a = A->run, P = a * K, G = A->cw, NT = 32 / (G > 0 ? G : 1) * G;
        const int64_t nb = A->walk.size[0] > 1 ? A->walk.size[0] : 1, S = A->walk.in[0], n = A->chunk * P;
        const int ragged = A->vec == 1 || A->vec == 2; /* mode 2, or mode 3 (flatw_ragged_v 1: the same vectors) */
        if (c->indexed || es < 2 || K < 1 || K > KG_RED_FLAT_COLS || a < 1 || G < 1 || G > 32 || (G * V) % P ||
            A->splits != 1 || p->partial_bytes || A->units != A->n_out || A->walk.n != 1 || n * nb != A->red * K ||
            (A->vec != 0 && A->vec != 1 && A->vec != 2) || (A->vec == 2 && A->tiles >= ((int64_t)1 << 31)) || (!ragged && (A->tiles != 1 || (nb > 1 && (n % V || S % V)))) ||
            (ragged && (nb < 2 || G != 1 || V % P || S % P || n * (int64_t)es < 128)))
            fail(c, "flatw geometry out of bounds");
        if (c->bad)
            return;
        if (ragged) {
            /* flatw_ragged (kg_red_flatw_v mode 2): block r of unit u starts
               at s = io + r S, h = s mod V; its W = (n + 2 V - P - 1) / V
               covering vectors from s - h, element e of vector i at block
               position i V + e - h, folded into period position e mod P (the
               input 16-byte aligned); a vector past the extent (args.tiles)
               read element by element, none before the input */
            const int64_t W = (n + 2 * V - P - 1) / V;
            for (int64_t u = 0; u < A->units; u++) {
                int64_t io, oo;
                outer_of(&A->outer, 0, u, &io, &oo);
                for (int64_t r = 0; r < nb; r++) {
                    const int64_t s0 = io + r * S, h = s0 % V;
                    if (h + n > W * V)
                        fail(c, "flatw ragged block not covered");
                    for (int64_t i = 0; i < W; i++)
                        for (int64_t e = 0; e < V; e++) {
                            const int64_t q = i * V + e - h;
                            if (q < 0 || q >= n)
                                continue;
                            if (s0 - h + i * V < 0)
                                fail(c, "flatw ragged vector before the input");
                            if (e % P != q % P)
                                fail(c, "a flatw ragged lane folds an element into another column");
                            visit(c, oo + (e % P) / a * A->inner_out, r * (n / K) + q / P * a + q % a, s0 + q);
                        }
                }
            }
            return;
        }
        for (int64_t u = 0; u < A->units; u++) {
            int64_t io, oo;
            outer_of(&A->outer, c->indexed, u, &io, &oo);
            if (nb > 1 && io % V)
                fail(c, "flatw blocks that do not start on a vector");
            const int64_t h = nb > 1 ? 0 : io % V, bv = (h + n + V - 1) / V;
            for (int64_t j = 0; j < nb * bv; j++) {
                const int64_t t = j % NT, r = j / bv, i = j % bv;
                for (int64_t e = 0; e < V; e++) {
                    const int64_t q = i * V + e - h; /* position in block r */
                    if (q < 0 || q >= n)
                        continue;
                    const int64_t pos = (((t % G) * V + e - h) % P + P) % P;
                    if (pos != q % P)
                        fail(c, "a flatw lane folds an element into another column");
                    visit(c, oo + pos / a * A->inner_out, r * (n / K) + q / P * a + q % a, io + r * S + q);
                }
            }
        }
        return;
    }
    if (p->cls == KG_RED_FLAT) {
        /* kg_red_flat: lane t of NT takes vectors t, t + NT, ... of the
           unit's run from the aligned element at or before its start (data
           256-byte aligned: the phase is the offset mod V) and folds element
           e into column (t V + e - h) mod K: that must be the element's
           column */
        const int64_t K = A->inner, G = A->cw, NT = KG_RED_THREADS / (G > 0 ? G : 1) * G;
        if (A->vstore && es != 2)
            fail(c, "flat in 32-bit words over elements not of 2 bytes");
        if (c->indexed || es < 2 || K < 1 || K > KG_RED_FLAT_COLS || G < 1 || G > KG_RED_THREADS || (G * V) % K ||
            A->tiles != 1 || A->run != 1 || A->vec || A->units != A->n_out * A->splits ||
            (A->splits > 1 && A->splits * K > 1 << 20) || A->group != 0)
            fail(c, "flat geometry out of bounds");
        if (c->bad)
            return;
        for (int64_t u = 0; u < A->units; u++) {
            const int64_t grp = u / A->splits, split = u % A->splits;
            int64_t io, oo;
            outer_of(&A->outer, c->indexed, grp, &io, &oo);
            const int64_t r0 = split * A->chunk, r1 = r0 + A->chunk < A->red ? r0 + A->chunk : A->red;
            const int64_t start = io + r0 * K, h = start % V, n = (r1 - r0) * K;
            const int64_t nvec = (h + n + V - 1) / V;
            for (int64_t j = 0; j < nvec; j++) {
                const int64_t t = j % NT;
                for (int64_t e = 0; e < V; e++) {
                    const int64_t q = j * V + e - h;
                    if (q < 0 || q >= n)
                        continue;
                    const int64_t col = (((t % G) * V + e - h) % K + K) % K;
                    if (col != q % K)
                        fail(c, "a flat lane folds an element into another column");
                    visit(c, oo + col * A->inner_out, r0 + q / K, start + q);
                }
            }
        }
        return;
    }
    if (p->cls == KG_RED_SEGW) {
        /* kg_red_segw (reduce_runt.cuh): warp unit c copies the chunk's 32
           args.cw 16-byte vectors of the stream (rows x run elements from
           the input's start) and sums rows c R + r, r < R, each from the
           chunk's elements r L .. r L + L - 1 */
        const int64_t L = A->run, R = A->tile_rows, n = 16 / (int64_t)es, rows = A->inner;
        if (c->indexed || es < 2 || es > 8 || L < 2 || R < 1 || R * L * (int64_t)es != 512 * (int64_t)A->cw ||
            R * L * (int64_t)es > KG_RED_SEGW_BYTES || A->units != (rows + R - 1) / R || A->n_out != 1 ||
            A->outer.n || A->splits != 1 || p->occ || A->red != L || rows * L != c->n_out * c->red ||
            (uintptr_t)c->in->data % 16)
            fail(c, "a warp-staged row plan the SEGW kernel does not take");
        for (int64_t u = 0; u < A->units; u++) {
            const int64_t e0 = u * R * L;
            if ((e0 * (int64_t)es) % 16)
                fail(c, "a warp chunk starts off 16 bytes");
            for (int64_t r = 0; r < R; r++) {
                const int64_t row = u * R + r;
                if (row >= rows)
                    continue;
                for (int64_t q = 0; q < L; q++) {
                    const int64_t e = e0 + r * L + q; /* loaded by the chunk's vector (e - e0) / n */
                    if ((e - e0) / n >= 32 * A->cw)
                        fail(c, "a row element past the warp's chunk");
                    visit(c, row * A->inner_out, q, e);
                }
            }
        }
        return;
    }
    if (p->cls == KG_RED_RUNT) {
        /* kg_red_runt_v (reduce_runt.cuh): unit (o, tile, split); lane tx
           of cw across takes the vector of n elements at tile x cw n + tx
           n of each row, lanes ty of ny down take rows r0 + ty, + ny, ...
           (the walk); each element's column is its row offset / run; the
           tile's columns TC (args.tile_rows), the last tile what is left */
        const int64_t cw = A->cw, ny = cw >= 1 ? KG_RED_THREADS / cw : 1, vb = A->vec, n = vb / (int64_t)es;
        const int64_t L = A->run, TC = A->tile_rows, W = cw * n, rowlen = A->inner * A->run;
        int64_t spans = 0;
        for (int d = 0; d < A->walk.n; d++)
            spans += (A->walk.size[d] + (d == A->walk.n - 1 ? A->walk.step[d] + 1 : 0)) * A->walk.in[d];
        if (c->indexed || (vb != 2 && vb != 4 && vb != 8 && vb != 16) || n < 1 || n * (int64_t)es != vb || es < 2 ||
            es > 8 || cw < 1 || cw > KG_RED_THREADS || L < 2 || W != TC * L || rowlen % n ||
            A->tiles != (A->inner + TC - 1) / TC || A->units != A->n_out * A->tiles * A->splits || A->red % L ||
            p->occ || A->deep || A->vstore || A->group || A->rdims.n || spans >= ((int64_t)1 << 30) ||
            (A->splits > 1 && A->n_out * A->tiles > KG_RED_MAX_SEMAPHORES))
            fail(c, "a run tile plan the RUNT kernel does not take");
        if (A->walk.step[0] != (A->walk.n == 1 ? ny : ny % A->walk.size[0]))
            fail(c, "a run tile walk that does not step by the lanes down");
        const int64_t rows = A->red / L;
        for (int64_t u = 0; u < A->units; u++) {
            const int64_t grp = u / A->splits, split = u % A->splits, o = grp / A->tiles, tile = grp % A->tiles;
            int64_t io, oo;
            outer_of(&A->outer, 0, o, &io, &oo);
            const int64_t r0 = split * A->chunk, r1 = r0 + A->chunk < rows ? r0 + A->chunk : rows;
            for (int64_t tx = 0; tx < cw; tx++) {
                const int64_t e0 = tile * W + tx * n;
                if (e0 >= rowlen)
                    continue;
                if (e0 + n > rowlen)
                    fail(c, "a run tile vector reaches past its row");
                for (int64_t ty = 0; ty < ny; ty++) {
                    int64_t r = r0 + ty;
                    if (r >= r1)
                        continue;
                    wpos w;
                    walk_at(&A->walk, r, &w);
                    for (; r < r1; r += ny, walk_step(&A->walk, &w)) {
                        if ((io + e0 + w.off) % n)
                            fail(c, "a run tile vector load is misaligned");
                        for (int64_t k = 0; k < n; k++) {
                            const int64_t e = e0 + k, col = e / L;
                            if (col < tile * TC || col >= (tile + 1) * TC)
                                fail(c, "a run tile lane folds an element into another tile's column");
                            visit(c, oo + col * A->inner_out, r * L + e % L, io + e + w.off);
                        }
                    }
                }
            }
        }
        return;
    }
    if (p->cls == KG_RED_COLS) {
        const int64_t cw = A->cw, ny = KG_RED_THREADS / cw, vu = kg_red_cols_per_lane(A->vec, es);
        const int strided = A->vec == KG_RED_CV_STRIDED, vector = A->vec == KG_RED_CV_VEC || A->vec == KG_RED_CV_WIDE ||
                                                                  A->vec == KG_RED_CV_WIDE32 ||
                                                                  A->vec == KG_RED_CV_VEC32;
        if (A->vec < KG_RED_CV_SCALAR || A->vec > KG_RED_CV_VEC32 ||
            ((A->vec == KG_RED_CV_WIDE || A->vec == KG_RED_CV_WIDE32 || A->vec == KG_RED_CV_VEC32) && es != 2))
            fail(c, "a column mode the kernels do not have");
        /* COLSQ (group 2): two tiles per unit, one lane down each column, unsplit, vectors */
        const int64_t M = A->group == 2 ? 2 : 1;
        if (A->group != 0 && (A->group != 2 || p->occ != 4 || cw != KG_RED_THREADS || A->splits != 1 || A->run != 1 ||
                              A->deep || (A->vec != KG_RED_CV_VEC && A->vec != KG_RED_CV_WIDE32) || c->indexed))
            fail(c, "two column tiles per unit where the COLSQ kernel does not take them");
        if (A->units != A->n_out * A->tiles * A->splits || A->tiles * M * cw * vu < A->inner)
            fail(c, "column units do not cover the columns");
        if (A->vstore && (c->indexed || !vector || A->inner_out != 1 || A->run != 1 || A->inner % vu))
            fail(c, "vector stores where the results do not lie in whole vectors");
        const int runv = A->run > 1 && A->vec != KG_RED_CV_SCALAR;
        /* cols_runs_fold: runs in vectors over one tile of m periods of kw
           kept x run elements (A->rdims: the digits kw, m; a period wider
           than a vector), each result folded across the tile at the end */
        const int fold = runv && A->rdims.n > 0;
        if (fold && (A->rdims.n != 2 || A->rdims.size[0] != A->tile_rows || A->tile_rows < 2 || A->rdims.in[0] != 1 ||
                     A->rdims.in[1] != A->tile_rows * A->run || A->inner != A->rdims.in[1] * A->rdims.size[1] ||
                     A->rdims.in[1] <= vu || A->tiles != 1 || cw * vu < A->inner))
            fail(c, "a folded column period where the run kernel does not take it");
        /* columns over chained kept dims (cols_chain): A->rdims, input
           strides chained from 1, their sizes' product the columns; each
           result at its column's digits (the kernels' 32-bit digits) */
        if (A->rdims.n > 0 && !fold) {
            int64_t cols = 1;
            for (int d = 0; d < A->rdims.n; d++) {
                if (A->rdims.in[d] != cols)
                    fail(c, "chained columns whose input strides do not chain");
                cols *= A->rdims.size[d];
            }
            if (A->rdims.n < 2 || cols != A->inner || A->inner >= ((int64_t)1 << 31) || A->run != 1 || M != 1 ||
                A->vstore)
                fail(c, "chained columns where the column kernels do not take them");
        }
        for (int64_t u = 0; u < A->units * M; u++) {
            /* unit u / M, its tile u % M (M = 1: the unit's one tile) */
            const int64_t grp = u / M / A->splits, split = u / M % A->splits, o = grp / A->tiles,
                          tile = grp % A->tiles * M + u % M;
            int64_t io, oo;
            outer_of(&A->outer, c->indexed, o, &io, &oo);
            if (A->vstore && oo % vu)
                fail(c, "a vector store of results misaligned");
            const int64_t rows = A->run > 1 ? A->red / A->run : A->red;
            const int64_t r0 = split * A->chunk, r1 = r0 + A->chunk < rows ? r0 + A->chunk : rows;
            /* runs in vectors (cols_runs_vec, reduce_cols_runs.cuh): the colso kernel's run fold, whole runs
               in a vector, rows of whole vectors, value reductions */
            const int64_t L = runv ? A->run : 1;
            /* cols_runs_kept: kw kept elements under each run element
               (periods of kw x run; the result of element e at e / (kw run)
               kw + e % kw, its reduced place (e / kw) % run) */
            const int64_t kw = runv && A->tile_rows > 1 ? A->tile_rows : 1;
            if (A->red % A->run)
                fail(c, "rows that are not whole runs");
            if (runv && (c->indexed || p->occ != 3 || A->deep || M != 1 || A->vstore || A->inner % vu ||
                         (!fold && (vu % (A->run * kw) || (A->run & (A->run - 1)) || (kw & (kw - 1)) ||
                                    (kw > 1 && es != 2 && es != 4))) ||
                         !((A->vec == KG_RED_CV_VEC && es >= 4) || (A->vec == KG_RED_CV_WIDE32 && es == 2))))
                fail(c, "a column run in vectors where the run kernel does not take it");
            for (int64_t tx = 0; tx < cw; tx++) {
                /* the lane's first column; column k is col + k * cs */
                const int64_t col = strided ? tile * cw * vu + tx : (tile * cw + tx) * vu, cs = strided ? cw : 1;
                if (col >= A->inner)
                    continue;
                for (int64_t ty = 0; ty < ny; ty++) {
                    int64_t r = r0 + ty;
                    if (r >= r1)
                        continue;
                    wpos w;
                    walk_at(&A->walk, r, &w);
                    for (; A->run > 1 && !runv && r < r1; r += ny, walk_step(&A->walk, &w))
                        for (int64_t e = 0; e < A->run; e++)
                            visit(c, oo + col_out(A, col, c->indexed), r * A->run + e,
                                  io + col * A->run + w.off + e);
                    for (; r < r1; r += ny, walk_step(&A->walk, &w)) {
                        if (vector && (io + col + w.off) % vu)
                            fail(c, "a column vector load is misaligned");
                        for (int64_t k = 0; k < vu; k++)
                            if (col + k * cs < A->inner)
                                visit(c, oo + col_out(A, (col + k * cs) / (L * kw) * kw + (col + k * cs) % kw, c->indexed),
                                      r * L + (col + k * cs) / kw % L, io + col + k * cs + w.off);
                    }
                }
            }
        }
        return;
    }
    if (p->cls == KG_RED_NEST && A->cw > 1) {
        /* kg_red_nest_multi: lane r0 of the grid's n takes outputs r0 + m n
           (m < cw) for r0 = lane, lane + n cw, ...: every output once, one
           lane per output, unsplit; the elements as with one lane */
        const int64_t M = A->cw, n = (int64_t)p->grid * KG_RED_THREADS;
        if (M != 4 || A->group != 1 || A->splits != 1 || A->units != A->n_out)
            fail(c, "outputs per lane where the NEST kernels take none");
        else if (A->units > 0) {
            unsigned char *seen = calloc((size_t)A->units, 1);
            for (int64_t lane = 0; lane < n; lane++)
                for (int64_t r0 = lane; r0 < A->units; r0 += n * M)
                    for (int64_t m = 0; m < M; m++)
                        if (r0 + m * n < A->units)
                            seen[r0 + m * n]++;
            for (int64_t o = 0; o < A->units; o++)
                if (seen[o] != 1) {
                    fail(c, "outputs per lane: an output taken other than once");
                    break;
                }
            free(seen);
        }
    }
    const int64_t g = A->group;
    const int64_t units = block ? A->units : A->n_out;
    for (int64_t u = 0; u < units; u++) {
        const int64_t row = block ? u / A->splits : u, split = block ? u % A->splits : 0;
        int64_t io, oo;
        outer_of(&A->outer, c->indexed, row, &io, &oo);
        const int64_t c0 = split * A->chunk, c1 = block && c0 + A->chunk < A->red ? c0 + A->chunk : A->red;
        if (p->cls == KG_RED_ROWS && A->run == KG_RED_ROWS_STRIPES) {
            if (!block || A->splits < 2 || A->units != A->n_out * A->splits)
                fail(c, "stripes where the rows kernel takes none (a block per unit, splits)");
            else
                simulate_stripes(c, A, io, oo, split, es);
        } else if (p->cls == KG_RED_ROWS) {
            if (A->run != 0)
                fail(c, "a ROWS plan of an unknown run mode");
            for (int64_t r = c0; r < c1; r++)
                visit(c, oo, r, io + r);
        } else if (p->cls == KG_RED_NEST && A->vec == KG_RED_NEST_COVER) {
            /* kg_red_nest_cover: positions [c0, c1) of A->tiles, digit 0 a
               covering vector of V elements of a run of L; the vector of digit
               x0 starts at the aligned element at or before run start + x0 V,
               its elements of run index d in [0, L) are pushed */
            const int64_t L = A->run, nv = (L + 2 * V - 2) / V;
            const int64_t c1c = block && c0 + A->chunk < A->tiles ? c0 + A->chunk : A->tiles;
            int64_t lo, hi;
            extent_of(c->in, &lo, &hi);
            if (c->indexed || (p->occ != 0 && p->occ != 4) || A->deep || A->cw < 0 || A->cw > 1 || L < 1 ||
                A->walk.size[0] != (A->walk.n > 1 ? nv : A->walk.size[0]) || A->walk.in[0] != V ||
                A->tiles != nv * (A->red / L) || A->red % L || A->inner_out != lo || A->inner_idx != hi ||
                (uintptr_t)c->in->data % es)
                fail(c, "covering vectors: a plan the kernel does not take");
            for (int64_t t = 0; t < g; t++) {
                int64_t i = c0 + t;
                if (i >= c1c)
                    continue;
                wpos w;
                walk_at(&A->walk, i, &w);
                for (; i < c1c; i += g, walk_step(&A->walk, &w)) {
                    const int64_t q = io + w.off;
                    const int64_t s = (int64_t)((((uintptr_t)c->in->data / es) + (uint64_t)q) & (uint64_t)(V - 1));
                    const int64_t d = w.x[0] * V - s, run = i / nv;
                    if (d <= -V)
                        fail(c, "a covering vector before its run");
                    for (int64_t k = 0; k < V; k++)
                        if (d + k >= 0 && d + k < L)
                            visit(c, oo, run * L + d + k, q - s + k);
                }
            }
        } else if (p->cls == KG_RED_NEST) {
            const int64_t vu = A->vec ? V : 1;
            if (A->vec < 0 || A->vec > 2 || (A->vec == 2 && V != 8))
                fail(c, "a walk vector mode the kernels do not have");
            if (c0 % vu || (c1 % vu && c1 != A->red) || A->red % vu)
                fail(c, "a walk chunk is not whole vectors");
            for (int64_t t = 0; t < g; t++) {
                int64_t i = c0 / vu + t;
                if (i >= c1 / vu)
                    continue;
                wpos w;
                walk_at(&A->walk, i, &w);
                for (; i < c1 / vu; i += g, walk_step(&A->walk, &w)) {
                    if ((io + w.off) % vu)
                        fail(c, "a walk vector load is misaligned");
                    for (int64_t e = 0; e < vu; e++)
                        visit(c, oo, i * vu + e, io + w.off + e);
                }
            }
        } else { /* STRIDED32/64: the division per element of the kernel */
            for (int64_t r = c0; r < c1; r++) {
                int64_t off = 0, q = r;
                for (int d = 0; d < A->rdims.n; d++) {
                    const int64_t m = d == A->rdims.n - 1 ? q : q % A->rdims.size[d];
                    off += m * A->rdims.in[d];
                    q = d == A->rdims.n - 1 ? 0 : q / A->rdims.size[d];
                }
                visit(c, oo, r, io + off);
            }
        }
    }
}

/* Plans op over in (axes by mask) with a contiguous result into *plan and
   checks the plan covers each (output, reduced element) exactly once.
   Returns 1 when it does; why says what is wrong otherwise. Where planning
   fails, *plan is all zeros (class 0). */
static int check_plan_p(kg_reduce_op op, const kg_tensor *in, unsigned mask, const kg_red_tuning *t, char *why,
                        size_t wl, kg_red_plan *plan)
{
    int axes[KG_MAX_DIMS] = {0}, n = 0;
    for (int d = 0; d < in->ndim; d++)
        if ((mask >> d) & 1u)
            axes[n++] = d;
    if (plan_tuned(op, in, axes, n, 0, t, plan) != KG_OK) {
        snprintf(why, wl, "planning failed: %s", kg_errmsg(cpu_ctx));
        memset(plan, 0, sizeof *plan);
        return 0;
    }
    const kg_red_plan p = *plan;
    if (p.occ && p.cls == KG_RED_FLAT && p.args.group == 32) {
        /* FLATW at 4 blocks per multiprocessor (FLATWO): value reductions */
        if (kg_red_infos[op].indexed || p.occ != 4) {
            snprintf(why, wl, "flatw at occ %d", p.occ);
            return 0;
        }
    } else if (p.occ) {
        /* the kernels at more blocks per multiprocessor: value reductions'
           COLS (occ 3 or 4) and NEST (4) plans, narrow walks of either (4),
           the walk in 32-bit arithmetic (every span below 2^30 in all) */
        int64_t sum = 0;
        const kg_red_walk *w = &p.args.walk;
        for (int d = 0; d < w->n; d++)
            sum += (w->size[d] + (d == w->n - 1 ? w->step[d] + 1 : 0)) * w->in[d];
        const int walks = p.cls == KG_RED_COLS || p.cls == KG_RED_NEST;
        const int ok =
            !kg_red_infos[op].indexed && walks && (p.occ == 4 || (p.occ == 3 && p.cls == KG_RED_COLS && !p.args.deep));
        if (!ok || sum >= ((int64_t)1 << 30)) {
            snprintf(why, wl, "occ %d where it does not apply: class %d deep %d spans %lld", p.occ, p.cls, p.args.deep,
                     (long long)sum);
            return 0;
        }
    }
    if (p.cls == KG_RED_TRANS && (kg_red_infos[op].indexed || (p.args.vec == 1 && (kg_dtype_size(in->dtype) != 2 ||
                                                                            kg_red_table[op][in->dtype][KG_RED_TRANSV] < 0)))) {
        /* TRANS and TRANSV take value reductions only (the transv modules
           have no index kernels: gen/reduce.lua's `values`), TRANSV 2-byte
           elements of a dtype its modules are built for (bf16, f16) */
        snprintf(why, wl, "trans where it does not apply: %s(%s) vec %d", kg_red_infos[op].name,
                 kg_dtype_name(in->dtype), p.args.vec);
        return 0;
    }
    if (p.args.deep) {
        /* narrow walks: 32-bit arithmetic, every span below 2^30 in all */
        int64_t sum = 0;
        const kg_red_walk *w = &p.args.walk;
        for (int d = 0; d < w->n; d++)
            sum += (w->size[d] + (d == w->n - 1 ? w->step[d] + 1 : 0)) * w->in[d];
        if (p.args.vec || (p.cls != KG_RED_COLS && p.cls != KG_RED_NEST) || sum >= ((int64_t)1 << 30)) {
            snprintf(why, wl, "a narrow walk (deep) where it does not apply: class %d vec %d spans %lld", p.cls,
                     p.args.vec, (long long)sum);
            return 0;
        }
    }
    pcheck c;
    memset(&c, 0, sizeof c);
    c.in = in;
    c.mask = n ? mask : (1u << in->ndim) - 1;
    c.indexed = kg_red_infos[op].indexed;
    c.n_out = 1;
    c.red = 1;
    for (int d = 0; d < in->ndim; d++) {
        if ((c.mask >> d) & 1u)
            c.red *= in->shape[d];
        else
            c.n_out *= in->shape[d];
    }
    if (p.empty)
        return c.n_out == 0;
    c.count = calloc((size_t)c.n_out, sizeof *c.count);
    c.hash = calloc((size_t)c.n_out, sizeof *c.hash);
    simulate(&p, &c, kg_dtype_size(in->dtype));
    for (int64_t o = 0; o < c.n_out && !c.bad; o++) {
        uint64_t h = 0;
        for (int64_t r = 0; r < c.red; r++)
            h += mix(logical_off(&c, o, r));
        if (c.count[o] != c.red || c.hash[o] != h) {
            c.bad++;
            snprintf(c.why, sizeof c.why, "output %lld: %lld visits of %lld, %s", (long long)o, (long long)c.count[o],
                     (long long)c.red, c.hash[o] == h ? "the right offsets" : "wrong offsets");
        }
    }
    free(c.count);
    free(c.hash);
    snprintf(why, wl, "%s", c.why);
    return !c.bad;
}

/* check_plan_p, giving the plan's class (0 where planning failed). */
static int check_plan(kg_reduce_op op, const kg_tensor *in, unsigned mask, const kg_red_tuning *t, char *why, size_t wl,
                      kg_red_class *cls)
{
    kg_red_plan p;
    const int ok = check_plan_p(op, in, mask, t, why, wl, &p);
    *cls = p.cls;
    return ok;
}

/* rows_stripes (session 30; the default since round s30r1): a split ROWS
   row read in interleaved lines per split. The default plans of the
   block-mode split ROWS rows take the stripes; rows_stripes 0 gives back
   contiguous chunks with the same class, splits, chunk and grid (run 0).
   The plan checker follows the kernel's lanes: every element once per
   output, each lane's elements in increasing index order, for every op over
   odd lengths, starts 1 to 15 bytes off a 16-byte boundary, several outputs
   and every element size. */
Test(plan, rows_stripes_cover_each_element_once_and_are_the_default)
{
    kg_red_tuning st = kg_red_tuning_default, ch = kg_red_tuning_default;
    cr_assert_eq(st.rows_stripes, 1, "the stripes are the default");
    ch.rows_stripes = 0;
    const int64_t s28[] = {(int64_t)1 << 28};
    kg_tensor in = fake(IN_AT, KG_F32, 1, s28);
    kg_red_plan p, q;
    cr_assert_eq(plan_of(KG_RED_SUM, &in, NULL, 0, 0, &q), KG_OK);
    cr_assert_eq(q.cls, KG_RED_ROWS);
    cr_assert_eq(q.args.run, KG_RED_ROWS_STRIPES, "the default reads interleaved lines");
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, NULL, 0, 0, &ch, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS);
    cr_assert_eq(p.args.run, 0, "rows_stripes 0 reads contiguous chunks");
    cr_assert_eq(q.args.splits, p.args.splits);
    cr_assert_eq(q.args.splits, 528);
    cr_assert_eq(q.args.chunk, p.args.chunk);
    cr_assert_eq(q.grid, p.grid);
    cr_assert_eq(q.grid, 528u);
    cr_assert_eq(q.partial_bytes, p.partial_bytes);
    /* not where rows are not split, or are read a warp per row */
    const int64_t sq[] = {16384, 16384};
    in = fake(IN_AT, KG_F32, 2, sq);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){1}, 1, 0, &st, &q), KG_OK);
    cr_assert_eq(q.cls, KG_RED_ROWS);
    cr_assert_eq(q.args.run, 0, "a warp per row: no splits, no stripes");
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){0}, 1, 0, &st, &q), KG_OK);
    cr_assert_eq(q.cls, KG_RED_COLS, "columns keep their plan");
    /* the plan checker over every op: lengths, offsets, outputs, dtypes */
    static const struct {
        kg_dtype dt;
        int nd;
        int64_t shape[3];
        unsigned mask;
        int off; /* elements after a 16-byte boundary */
    } cs[] = {
        {KG_F32, 1, {1000003}, 0x1, 0},    {KG_F32, 1, {1000003}, 0x1, 3},     {KG_BF16, 1, {2000029}, 0x1, 5},
        {KG_F16, 1, {524288}, 0x1, 7},     {KG_I32, 2, {3, 400009}, 0x2, 1},   {KG_F64, 1, {300007}, 0x1, 1},
        {KG_U8, 1, {1500001}, 0x1, 11},    {KG_BOOL, 1, {1048576}, 0x1, 15},  {KG_BF16, 3, {5, 7, 65537}, 0x6, 0},
        {KG_I64, 2, {2, 262147}, 0x3, 1}, {KG_F32, 2, {2, 2097152}, 0x2, 0},
    };
    int stripes = 0, checked = 0;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const size_t es = kg_dtype_size(cs[i].dt);
        in = fake(IN_AT + (uintptr_t)cs[i].off * es, cs[i].dt, cs[i].nd, cs[i].shape);
        for (int op = 0; op < KG_RED_COUNT; op++) {
            if (!((kg_red_infos[op].dtype_mask >> cs[i].dt) & 1u))
                continue;
            int axes[3], n = 0;
            for (int d = 0; d < cs[i].nd; d++)
                if ((cs[i].mask >> d) & 1u)
                    axes[n++] = d;
            cr_assert_eq(plan_tuned((kg_reduce_op)op, &in, axes, n, 0, &st, &q), KG_OK);
            stripes += q.cls == KG_RED_ROWS && q.args.run == KG_RED_ROWS_STRIPES;
            char why[256];
            kg_red_class cls;
            cr_expect(check_plan((kg_reduce_op)op, &in, cs[i].mask, &st, why, sizeof why, &cls), "case %zu %s: %s", i,
                      kg_red_infos[op].name, why);
            /* and in contiguous chunks (rows_stripes 0) */
            cr_assert_eq(plan_tuned((kg_reduce_op)op, &in, axes, n, 0, &ch, &p), KG_OK);
            cr_expect_eq(p.args.run, q.args.run == KG_RED_ROWS_STRIPES ? 0 : q.args.run, "case %zu %s", i,
                         kg_red_infos[op].name);
            cr_expect(check_plan((kg_reduce_op)op, &in, cs[i].mask, &ch, why, sizeof why, &cls),
                      "case %zu %s, rows_stripes 0: %s", i, kg_red_infos[op].name, why);
            checked++;
        }
    }
    cr_log_info("%d plans checked (each also under rows_stripes 0), %d in stripes", checked, stripes);
    cr_assert_geq(stripes, checked * 3 / 4, "most of these cases take the stripes");
}

/* A shape, its axes and what a rule makes of it (kw and a second field). */
typedef struct rule_case {
    kg_dtype dt;
    int nd;
    int64_t shape[6];
    unsigned mask;
    int64_t kw, b; /* 0: not taken */
} rule_case;

/* c's input (at IN_AT), its axes, and its sum's plan under the default
   tuning; returns the axes' count. */
static int plan_rule_case(const rule_case *c, kg_tensor *in, int *axes, kg_red_plan *p)
{
    *in = fake(IN_AT, c->dt, c->nd, c->shape);
    int n = 0;
    for (int d = 0; d < c->nd; d++)
        if ((c->mask >> d) & 1u)
            axes[n++] = d;
    cr_assert_eq(plan_of(KG_RED_SUM, in, axes, n, 0, p), KG_OK, "%s", kg_errmsg(cpu_ctx));
    return n;
}

/* check_plan of every op that takes in's dtype under tuning t (NULL: the
   default); `at` names the case (or the tuning) in a failure. */
static void check_every_op_tuned(const kg_tensor *in, unsigned mask, const kg_red_tuning *t, size_t at)
{
    char why[256];
    kg_red_class cls;
    for (int op = 0; op < KG_RED_COUNT; op++)
        if ((kg_red_infos[op].dtype_mask >> in->dtype) & 1u)
            cr_expect(check_plan((kg_reduce_op)op, in, mask, t, why, sizeof why, &cls), "case %zu %s: %s", at,
                      kg_red_infos[op].name, why);
}

static void check_every_op(const kg_tensor *in, unsigned mask, size_t at) { check_every_op_tuned(in, mask, NULL, at); }

/* flatw_kept: dense rows of 8, 16 or 32 vectors whose kept dim of 2 or 4
   lies innermost under the reduced run go to FLATW's packed rows
   (args.tile_rows the kept width, the flatw kernel), and the plan checker
   walks each such plan; shapes off those bounds keep their plans. */
Test(plan, packed_rows_of_interleaved_outputs)
{
    /* kw, the lanes per row (0: not taken) */
    static const rule_case cases[] = {
        {KG_F32, 6, {100, 21, 2048, 8, 2, 2}, 0x18, 2, 8}, /* sweep #175: K2 R16 under 4300800 rows */
        {KG_F32, 3, {300, 16, 2}, 0x2, 2, 8},
        {KG_F32, 3, {77, 64, 2}, 0x2, 2, 32},
        {KG_BF16, 3, {77, 64, 2}, 0x2, 2, 16},
        {KG_F32, 3, {150, 8, 4}, 0x2, 4, 8},
        {KG_BF16, 4, {5, 41, 64, 4}, 0x4, 4, 32},
        {KG_F64, 3, {300, 16, 2}, 0x2, 2, 16},
        {KG_I32, 3, {300, 16, 2}, 0x2, 2, 8},
        {KG_BF16, 3, {300, 16, 2}, 0x2, 0, 0}, /* 4 vectors a row */
        {KG_F32, 3, {300, 128, 2}, 0x2, 0, 0}, /* 64 vectors a row */
        {KG_F32, 3, {300, 16, 3}, 0x2, 0, 0},  /* a kept width of 3 */
        {KG_F64, 3, {300, 16, 4}, 0x2, 0, 0},  /* 4 kept 8-byte elements: wider than a vector */
        {KG_U8, 3, {300, 64, 2}, 0x2, 0, 0},   /* 1-byte elements */
        {KG_F32, 4, {2, 150, 16, 2}, 0x5, 0, 0}, /* a second reduced dim */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kg_tensor in;
        int axes[KG_MAX_DIMS];
        kg_red_plan p;
        const int n = plan_rule_case(&cases[i], &in, axes, &p);
        const int kept = p.cls == KG_RED_FLAT && p.args.group == 32 && p.args.tile_rows > 1;
        cr_expect_eq(kept, cases[i].kw > 0, "case %zu: class %d tile_rows %lld", i, p.cls, (long long)p.args.tile_rows);
        if (kept) {
            cr_expect_eq(p.args.tile_rows, cases[i].kw, "case %zu", i);
            cr_expect_eq(p.args.cw, cases[i].b, "case %zu", i);
            cr_expect_eq(p.occ, 0, "case %zu: the flatw kernel", i);
        }
        check_every_op(&in, cases[i].mask, i);
        /* index reductions keep theirs; off a 16-byte boundary no packed rows */
        cr_assert_eq(plan_of(KG_RED_ARGMAX, &in, axes, n, 0, &p), KG_OK);
        cr_expect(!(p.cls == KG_RED_FLAT && p.args.group == 32), "case %zu: argmax", i);
        kg_tensor m = in;
        m.data = (void *)(IN_AT + 8);
        cr_assert_eq(plan_of(KG_RED_SUM, &m, axes, n, 0, &p), KG_OK);
        cr_expect(!(p.cls == KG_RED_FLAT && p.args.group == 32 && p.args.tile_rows > 1), "case %zu: misaligned", i);
        /* flatw_kept 0: the plan of before */
        kg_red_tuning t = kg_red_tuning_default;
        t.flatw_kept = 0;
        cr_assert_eq(plan_tuned(KG_RED_SUM, &in, axes, n, 0, &t, &p), KG_OK);
        cr_expect_eq(p.args.tile_rows == 0 || p.cls != KG_RED_FLAT, 1, "case %zu: flatw_kept 0", i);
    }
}

/* cols_runs_fold: a contiguous kept dim of kw >= 2 under a reduced run,
   the period kw x L wider than a vector (times the kept dim of stride P
   right outside where one tile holds them), a walk of further reduced dims
   outside: column runs in vectors over one tile, A->rdims the kept digits;
   the plan checker walks each plan (every op of the dtype). Shapes off the
   bounds keep their plans. */
Test(plan, folded_column_periods)
{
    /* kw, m (0: not taken) */
    static const rule_case cases[] = {
        {KG_BF16, 6, {127, 255, 6, 2, 23, 2}, 0x1a, 2, 6}, /* sweep #159: K2 R46 K6 under R255 */
        {KG_F32, 4, {20, 300, 40, 2}, 0x5, 2, 1},           /* K2 R40 under K300 (too many for a tile), R20 */
        {KG_I32, 4, {50, 4, 100, 2}, 0x5, 2, 4},            /* K2 R100 K4 under R50 */
        {KG_BF16, 4, {50, 2, 100, 4}, 0x5, 4, 2},           /* K4 R100 K2 under R50 */
        {KG_I32, 4, {50, 2, 100, 4}, 0x5, 0, 0},            /* 4-byte kept fours fill a vector: columns */
        {KG_F64, 4, {70, 3, 9, 2}, 0x5, 0, 0},              /* 8-byte kept pairs fill a vector */
        {KG_F32, 4, {70, 4, 5, 3}, 0x5, 3, 4},              /* a kept width of 3: K3 R5 K4, 15 vectors */
        {KG_F32, 4, {70, 3, 2, 2}, 0x5, 0, 0},              /* a period of one vector: cols_runs_kept */
        {KG_F32, 4, {70, 3, 5, 3}, 0x5, 0, 0},              /* K3 R5 K3: 45 elements, not whole vectors */
        {KG_F32, 3, {70, 1000, 2}, 0x3, 0, 0},              /* the runs merge: a period of 140000 */
        {KG_F32, 2, {9, 2}, 0x1, 0, 0},                     /* no walk outside the run */
        {KG_I32, 6, {5, 113, 9, 64, 13, 16}, 0x7, 0, 0},    /* sweep #132: K64 (256 bytes) R5, columns in vectors */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kg_tensor in;
        int axes[KG_MAX_DIMS];
        kg_red_plan p;
        const int n = plan_rule_case(&cases[i], &in, axes, &p);
        const int fold = p.cls == KG_RED_COLS && p.args.run > 1 && p.args.rdims.n > 0;
        cr_expect_eq(fold, cases[i].kw > 0, "case %zu: class %d run %lld rdims %d", i, p.cls, (long long)p.args.run,
                     p.args.rdims.n);
        if (fold) {
            cr_expect_eq(p.args.tile_rows, cases[i].kw, "case %zu", i);
            cr_expect_eq(p.args.rdims.size[1], cases[i].b, "case %zu", i);
            cr_expect_eq(p.args.tiles, 1, "case %zu", i);
            cr_expect_eq(p.occ, 3, "case %zu: the colsp kernel", i);
        }
        check_every_op(&in, cases[i].mask, i);
        /* index reductions, and cols_runs_fold 0, keep the plans of before */
        cr_assert_eq(plan_of(KG_RED_ARGMAX, &in, axes, n, 0, &p), KG_OK);
        cr_expect(!(p.cls == KG_RED_COLS && p.args.run > 1 && p.args.rdims.n > 0), "case %zu: argmax", i);
        kg_red_tuning t = kg_red_tuning_default;
        t.cols_runs_fold = 0;
        cr_assert_eq(plan_tuned(KG_RED_SUM, &in, axes, n, 0, &t, &p), KG_OK);
        cr_expect(!(p.cls == KG_RED_COLS && p.args.run > 1 && p.args.rdims.n > 0), "case %zu: cols_runs_fold 0", i);
        /* narrower tiles (cols_fit, 32 lanes) keep the fold's one tile, or no fold */
        char why[256];
        kg_red_class cls;
        kg_red_tuning fit = kg_red_tuning_default, narrow = kg_red_tuning_default;
        fit.cols_fit = 1;
        narrow.cols_lanes = 32;
        cr_expect(check_plan(KG_RED_SUM, &in, cases[i].mask, &fit, why, sizeof why, &cls), "case %zu fit: %s", i, why);
        cr_expect(check_plan(KG_RED_MAX, &in, cases[i].mask, &narrow, why, sizeof why, &cls), "case %zu 32 lanes: %s", i,
                  why);
    }
}

static int next_perm(int *a, int n)
{
    int i = n - 2;
    while (i >= 0 && a[i] >= a[i + 1])
        i--;
    if (i < 0)
        return 0;
    int j = n - 1;
    while (a[j] <= a[i])
        j--;
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
    for (int l = i + 1, r = n - 1; l < r; l++, r--) {
        t = a[l];
        a[l] = a[r];
        a[r] = t;
    }
    return 1;
}

/* A tensor of `shape` whose dims are laid out in memory in order perm
   (perm[0] outermost), dense or with every dim's stride doubled (`gap`). */
static kg_tensor permuted(kg_dtype dt, int nd, const int64_t *shape, const int *perm, int gap, int64_t at)
{
    kg_tensor t = fake((uintptr_t)at, dt, nd, shape);
    int64_t st = gap ? 2 : 1;
    for (int i = nd - 1; i >= 0; i--) {
        t.strides[perm[i]] = st;
        st *= shape[perm[i]] * (gap ? 2 : 1);
    }
    return t;
}

Test(plan, every_rank_axis_set_and_stride_order_covers_each_element_once)
{
    static const int64_t sizes[] = {3, 4, 2, 5, 8, 1, 6};
    int plans = 0, by_class[KG_RED_CLASS_COUNT] = {0};
    for (int nd = 1; nd <= 5; nd++) {
        int64_t shape[KG_MAX_DIMS];
        for (int d = 0; d < nd; d++)
            shape[d] = sizes[(d + nd) % 7];
        for (unsigned mask = 0; mask < (1u << nd); mask++) {
            int perm[KG_MAX_DIMS];
            for (int d = 0; d < nd; d++)
                perm[d] = d;
            do {
                for (int v = 0; v < 4; v++) { /* f32 dense, bf16 dense, f32 gapped, f32 misaligned */
                    const kg_dtype dt = v == 1 ? KG_BF16 : KG_F32;
                    kg_tensor in = permuted(dt, nd, shape, perm, v == 2, (int64_t)IN_AT + (v == 3 ? 4 : 0));
                    for (int k = 0; k < 2; k++) {
                        const kg_reduce_op op = k ? KG_RED_ARGMAX : KG_RED_SUM;
                        char why[256];
                        kg_red_class cls;
                        const int ok = check_plan(op, &in, mask, NULL, why, sizeof why, &cls);
                        char sh[128], st[128];
                        cr_assert(ok, "%s of %s strides %s over mask 0x%x: %s", kg_red_infos[op].name,
                                  kg_shape_str(sh, sizeof sh, nd, in.shape),
                                  kg_shape_str(st, sizeof st, nd, in.strides), mask, why);
                        by_class[cls]++;
                        plans++;
                    }
                }
            } while (next_perm(perm, nd));
        }
    }
    cr_log_info("%d plans checked; rows %d cols %d strided32 %d nest %d packed %d", plans, by_class[KG_RED_ROWS],
                by_class[KG_RED_COLS], by_class[KG_RED_STRIDED32], by_class[KG_RED_NEST], by_class[KG_RED_PACKED]);
    cr_assert_gt(plans, 10000);
    cr_assert_gt(by_class[KG_RED_ROWS], 0);
    cr_assert_gt(by_class[KG_RED_NEST], 0); /* columns need wider shapes: the next tests */
}

/* check_plan over the random sweep's case n (mask 0: every axis) under t
   (NULL: the default), asserting with the case, the tuning's label, the op,
   dtype, shape and strides; returns the plan. */
static kg_red_plan sweep_check(int n, const char *label, kg_reduce_op op, const kg_tensor *in, unsigned mask,
                               const kg_red_tuning *t)
{
    char why[256], sh[128], st[128];
    kg_red_plan p;
    const int nd = in->ndim;
    const int ok = check_plan_p(op, in, mask ? mask : (1u << nd) - 1, t, why, sizeof why, &p);
    cr_assert(ok, "case %d%s%s%s: %s(%s) of %s strides %s over mask 0x%x: %s (seed %llu)", n, label ? " (" : "",
              label ? label : "", label ? ")" : "", kg_red_infos[op].name, kg_dtype_name(in->dtype),
              kg_shape_str(sh, sizeof sh, nd, in->shape), kg_shape_str(st, sizeof st, nd, in->strides), mask, why,
              (unsigned long long)kt_seed());
    return p;
}

/* The GPU random sweep's kind of case (test_reduce.c): ranks 1 to 6, sizes
   with odd factors up to 2^17 elements, random axis sets, dense, permuted
   and permuted-and-sliced inputs, every op over a dtype it takes: each plan
   covers every element once, and its work units stay within a few per
   element (a grid-stride loop over them must end soon). */
Test(plan, the_gpu_random_sweep_kind_of_case_covers_each_element_once)
{
    static const int64_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 64, 65, 100, 128, 257, 1000};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    uint64_t rng = kt_seed() ^ 0x5eedull;
    int by_class[KG_RED_CLASS_COUNT] = {0}, flat_split = 0;
    kg_red_tuning flat_split_tuning = kg_red_tuning_default;
    flat_split_tuning.flat_units_per_sm = 64;
    flat_split_tuning.flat_min_elems = 1;
    flat_split_tuning.flat_partials = 4096;
    kg_red_tuning multi_tuning = kg_red_tuning_default;
    multi_tuning.nest_multi_lanes = 0;
    multi_tuning.nest_g1_items = 1 << 30;
    multi_tuning.cols_min_cols = 64;
    multi_tuning.rows_multi = 64;
    int multi = 0, slabs = 0, trans = 0, runv = 0, chains = 0, trans_run = 0, trans_ko2 = 0;
    for (int n = 0; n < 600; n++) {
        int nd = 1 + (int)(kt_next(&rng) % 6);
        int64_t shape[KG_MAX_DIMS], numel = 1;
        for (int d = 0; d < nd; d++) {
            int64_t sz = sizes[kt_next(&rng) % (uint64_t)nsizes];
            while (sz > 1 && numel * sz > (1 << 17))
                sz /= 3;
            shape[d] = sz;
            numel *= sz;
        }
        const unsigned mask = (unsigned)(kt_next(&rng) % (1u << nd));
        const int kind = (int)(kt_next(&rng) % 3);
        int perm[KG_MAX_DIMS];
        for (int d = 0; d < nd; d++)
            perm[d] = d;
        if (kind)
            for (int d = nd - 1; d > 0; d--) {
                const int j = (int)(kt_next(&rng) % (uint64_t)(d + 1));
                const int x = perm[d];
                perm[d] = perm[j];
                perm[j] = x;
            }
        const kg_reduce_op op = (kg_reduce_op)(1 + n % (KG_RED_COUNT - 1));
        kg_dtype dt;
        do
            dt = (kg_dtype)(kt_next(&rng) % KG_DTYPE_COUNT);
        while (!(kg_red_infos[op].dtype_mask & (1u << dt)));
        int64_t elems = 1;
        for (int d = 0; d < nd; d++)
            elems *= shape[d];
        if (elems == 0)
            continue; /* an empty slice: an error for some ops (test_reduce checks those) */
        kg_tensor in = permuted(dt, nd, shape, perm, kind == 2, (int64_t)IN_AT);
        const kg_red_plan p = sweep_check(n, NULL, op, &in, mask, NULL);
        /* flat plans split into many short units (a phase of their own each) */
        flat_split += sweep_check(n, "flat splits", op, &in, mask, &flat_split_tuning).cls == KG_RED_FLAT;
        /* one lane per output with 4 outputs per lane on every NEST plan,
           narrow column tiles and short rows sent to NEST too */
        multi_tuning.nest_multi = n % 2 ? 4 : 8; /* 8: not a choice, one output per lane */
        multi_tuning.nest_multi_plain = n / 2 % 2; /* the plain walk for value reductions, or the narrow one */
        multi += sweep_check(n, "outputs per lane", op, &in, mask, &multi_tuning).cls == KG_RED_NEST;
        /* tiles over slabs wherever they apply (every dtype and op) */
        kg_red_tuning slab_tuning = kg_red_force_slab();
        slabs += sweep_check(n, "slabs", op, &in, mask, &slab_tuning).cls == KG_RED_SLAB;
        /* scattered outputs in tiles (trans) wherever they apply */
        kg_red_tuning trans_tuning = kg_red_force_trans();
        trans += sweep_check(n, "trans", op, &in, mask, &trans_tuning).cls == KG_RED_TRANS;
        /* ... with reduced runs under the ki side and ko sides of two dims */
        kg_red_tuning tx_tuning = kg_red_force_trans_ext();
        const kg_red_plan xp = sweep_check(n, "trans_run, trans_ko2", op, &in, mask, &tx_tuning);
        trans_run += xp.cls == KG_RED_TRANS && xp.args.cw > 1;
        trans_ko2 += xp.cls == KG_RED_TRANS && xp.args.vstore > 0;
        /* ... and of 2-byte elements in 16-byte vectors (trans_vec) */
        kg_red_tuning tv_tuning = kg_red_force_transv();
        sweep_check(n, "trans_vec", op, &in, mask, &tv_tuning);
        /* column runs in vectors wherever they apply */
        kg_red_tuning rv_tuning = kg_red_force_runs();
        kg_red_plan rp = sweep_check(n, "runs in vectors", op, &in, mask, &rv_tuning);
        runv += rp.cls == KG_RED_COLS && rp.args.run > 1 && rp.args.vec != KG_RED_CV_SCALAR;
        /* columns over chained kept dims wherever they apply */
        kg_red_tuning ch_tuning = kg_red_force_chain();
        rp = sweep_check(n, "chained columns", op, &in, mask, &ch_tuning);
        chains += rp.cls == KG_RED_COLS && rp.args.rdims.n > 0;
        /* column runs in vectors over a kept width wherever they apply */
        kg_red_tuning kw_tuning = kg_red_force_runs();
        kw_tuning.cols_runs_kept = 1;
        sweep_check(n, "runs over a kept width", op, &in, mask, &kw_tuning);
        cr_assert(p.empty || (p.args.units >= 1 && p.args.units <= 4 * numel + 4096 && p.grid >= 1),
                  "case %d: %lld units for %lld elements, grid %u", n, (long long)p.args.units, (long long)numel,
                  p.grid);
        by_class[p.cls]++;
    }
    /* a random draw may miss the rarer plans (s20's column runs in vectors
       in about one seed in three): one shape that takes each, checked the
       same way */
    {
        char why[256];
        kg_red_class fcls;
        kg_red_plan rp;
        const kg_red_tuning rv_tuning = kg_red_force_runs(), ch_tuning = kg_red_force_chain();
        kg_tensor r = fake(IN_AT, KG_F32, 3, (int64_t[]){64, 40, 2}); /* runs of 2 under 40 columns */
        cr_assert(check_plan(KG_RED_SUM, &r, 0x5, &rv_tuning, why, sizeof why, &fcls), "%s", why);
        cr_assert_eq(plan_tuned(KG_RED_SUM, &r, (int[]){0, 2}, 2, 0, &rv_tuning, &rp), KG_OK);
        runv += rp.cls == KG_RED_COLS && rp.args.run > 1 && rp.args.vec != KG_RED_CV_SCALAR;
        const int64_t sc[] = {50, 300, 7, 9};
        kg_tensor q = permuted(KG_BF16, 4, sc, (int[]){0, 1, 3, 2}, 0, (int64_t)IN_AT); /* kept 7 x 9 chained */
        cr_assert(check_plan(KG_RED_MAX, &q, 0x2, &ch_tuning, why, sizeof why, &fcls), "%s", why);
        cr_assert_eq(plan_tuned(KG_RED_MAX, &q, (int[]){1}, 1, 0, &ch_tuning, &rp), KG_OK);
        chains += rp.cls == KG_RED_COLS && rp.args.rdims.n > 0;
    }
    cr_log_info("random sweep kind: rows %d cols %d strided32 %d nest %d packed %d tile %d flat %d (%d under a "
                "split-heavy tuning)",
                by_class[KG_RED_ROWS], by_class[KG_RED_COLS], by_class[KG_RED_STRIDED32], by_class[KG_RED_NEST],
                by_class[KG_RED_PACKED], by_class[KG_RED_TILE], by_class[KG_RED_FLAT], flat_split);
    /* (the default takes flat only where its units fill the GPU, inputs
       far above these) */
    cr_assert_gt(flat_split, 0);
    cr_log_info("random sweep kind: %d NEST plans with outputs per lane", multi);
    cr_assert_gt(multi, 0);
    cr_log_info("random sweep kind: %d slab plans, %d trans plans (the larger shapes' test requires trans plans)",
                slabs, trans);
    cr_assert_gt(slabs, 0);
    cr_log_info("random sweep kind: %d trans plans over reduced runs, %d with ko sides of two dims", trans_run,
                trans_ko2);
    cr_assert_gt(trans_run, 0); /* (ko sides of two dims: trans_run_and_ko2_reach_the_census_shapes) */
    cr_log_info("random sweep kind: %d column plans of runs in vectors", runv);
    cr_assert_gt(runv, 0);
    cr_log_info("random sweep kind: %d column plans over chained kept dims", chains);
    cr_assert_gt(chains, 0);
}

/* cols_runs_kept (on by default): sweep #155, bf16 [9,4095,128,2,2,2] axes
   (0,1,4), in memory K2 R2 K256 (dims 5, 4 and 3-2 merged) under R36855:
   column runs in vectors of periods of 2 kept x 2 reduced elements (1024
   elements a row), each result folding its run; the checker follows every
   element. */
Test(plan, column_runs_over_a_kept_width_fold_per_kept_place)
{
    kg_red_tuning t = kg_red_tuning_default;
    t.cols_runs_kept = 1;
    kg_red_plan p;
    char why[256];
    kg_red_class cls;
    kg_tensor a = fake(IN_AT, KG_BF16, 6, (int64_t[]){9, 4095, 128, 2, 2, 2});
    const int ax[] = {0, 1, 4};
    kg_red_tuning off = kg_red_tuning_default;
    off.cols_runs_kept = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, ax, 3, 0, &off, &p), KG_OK);
    cr_assert_eq(p.args.inner, 2, "without the rule: 2 columns");
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, ax, 3, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.run, 2);
    cr_assert_eq(p.args.tile_rows, 2);
    cr_assert_eq(p.args.inner, 1024);
    cr_assert_eq(p.args.vec, KG_RED_CV_WIDE32);
    cr_assert_eq(p.args.inner_out, 1);
    cr_assert_eq(p.occ, 3);
    cr_assert(check_plan(KG_RED_SUM, &a, 0x13, &t, why, sizeof why, &cls), "%s", why);
    cr_assert(check_plan(KG_RED_MAX, &a, 0x13, &t, why, sizeof why, &cls), "%s", why);
    /* f32: 2 x 2 in a 4-element vector; 4 x 2 does not fit one (8 elements) */
    kg_tensor b = fake(IN_AT, KG_F32, 4, (int64_t[]){30, 20, 2, 2});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &b, (int[]){0, 2}, 2, 0, &t, &p), KG_OK);
    cr_assert_eq(p.args.tile_rows, 2);
    cr_assert(check_plan(KG_RED_SUM, &b, 0x5, &t, why, sizeof why, &cls), "%s", why);
    kg_tensor c = fake(IN_AT, KG_F32, 4, (int64_t[]){30, 20, 2, 4});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &c, (int[]){0, 2}, 2, 0, &t, &p), KG_OK);
    cr_assert(!(p.cls == KG_RED_COLS && p.args.run > 1 && p.args.tile_rows > 1));
    kg_tensor d = fake(IN_AT, KG_BF16, 4, (int64_t[]){30, 20, 2, 4});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &d, (int[]){0, 2}, 2, 0, &t, &p), KG_OK);
    cr_assert_eq(p.args.tile_rows, 4);
    cr_assert(check_plan(KG_RED_SUM, &d, 0x5, &t, why, sizeof why, &cls), "%s", why);
    /* index reductions keep their plans */
    cr_assert_eq(plan_tuned(KG_RED_ARGMAX, &a, ax, 3, 0, &t, &p), KG_OK);
    cr_assert(!(p.cls == KG_RED_COLS && p.args.tile_rows > 1));
}


Test(plan, short_reduced_runs_under_contiguous_columns_take_columns_with_a_run)
{
    kg_red_plan p;
    /* [500,1974,17] (0,2): runs of 17 innermost, 1974 columns of stride 17 */
    kg_tensor a = fake(IN_AT, KG_BF16, 3, (int64_t[]){500, 1974, 17});
    cr_assert_eq(plan_of(KG_RED_SUM, &a, (int[]){0, 2}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_RUNT, "by default since session 25 (sweep #2: 24.7 -> 22.1 us on the H200)");
    cr_assert_eq(p.args.vec, 4);
    cr_assert_eq(p.args.cw, 255);
    cr_assert_eq(plan_s24(KG_RED_SUM, &a, (int[]){0, 2}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS, "on in the chain under RUNT");
    cr_assert_eq(p.args.run, 17);
    cr_assert_eq(p.args.deep, 0, "cols_runs_plain by default: the plain walk");
    kg_red_tuning narrow = kg_red_tuning_default, plain = kg_red_tuning_default;
    narrow.run_tiles = plain.run_tiles = 0;
    narrow.cols_runs_plain = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, (int[]){0, 2}, 2, 0, &narrow, &p), KG_OK);
    cr_assert_eq(p.args.deep, 1, "without it, 2-byte elements: a narrow walk");
    plain.cols_runs_plain = 1;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, (int[]){0, 2}, 2, 0, &plain, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.run, 17);
    cr_assert_eq(p.args.deep, 0, "cols_runs_plain: the plain walk");
    cr_assert_eq(p.occ, 4, "in the 4-block kernel");
    cr_assert_eq(plan_tuned(KG_RED_ARGMAX, &a, (int[]){0, 2}, 2, 0, &plain, &p), KG_OK);
    cr_assert_eq(p.args.deep, 1, "index reductions keep the narrow walk");
    char why[256];
    kg_red_class cls;
    cr_assert(check_plan(KG_RED_SUM, &a, 0x5, &plain, why, sizeof why, &cls), "%s", why);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, (int[]){0, 2}, 2, 0, &old_tuning, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST, "off in the old tuning");
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, (int[]){0, 2}, 2, 0, &runs_tuning, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.run, 17);
    cr_assert_eq(p.args.inner, 1974);
    cr_assert_eq(p.args.vec, 0);
    cr_assert_eq(p.args.walk.n, 1);
    cr_assert_eq(p.args.walk.size[0], 500);
    cr_assert_eq(p.args.walk.in[0], 1974 * 17);
    cr_assert_eq(plan_tuned(KG_RED_ARGMAX, &a, (int[]){0, 2}, 2, 0, &runs_tuning, &p), KG_OK);
    cr_assert_eq(p.args.run, 17, "the run is the logically innermost reduced dim");
    /* by default only over elements of at most 2 bytes (cols_runs_es) */
    kg_tensor c = fake(IN_AT, KG_F32, 3, (int64_t[]){500, 1974, 5});
    cr_assert_eq(plan_of(KG_RED_SUM, &c, (int[]){0, 2}, 2, 0, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_COLS, "4-byte elements: no column run by default");
    cr_assert_eq(plan_tuned(KG_RED_SUM, &c, (int[]){0, 2}, 2, 0, &runs_tuning, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.run, 5, "any element size where cols_runs_es is 0");
    /* runs longer than 64 bytes: the walk over vectors instead */
    kg_tensor b = fake(IN_AT, KG_F32, 3, (int64_t[]){500, 1974, 64});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &b, (int[]){0, 2}, 2, 0, &runs_tuning, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
}

/* RUNT (run_tiles): short reduced runs of any length under contiguous
   columns in tiles of whole vectors. The plans of the GPU tests' run tile
   cases (test_reduce.c) and of the bench sweep's scalar column runs, and
   the plan checker's walk of every value op's plan over each shape under
   each forced load width (down to one 2-byte element a lane, which takes
   rows of odd counts and misaligned inputs); index reductions, 1-byte
   elements and runs past 64 bytes keep their plans; by default (since session 25) only
   in loads of 4 bytes or more over the scalar column runs of 2-byte elements. */
typedef struct runt_case {
    kg_dtype dt;
    int nd;
    int64_t shape[6];
    unsigned mask;
    int vb, cw, tc, tiles; /* under run_tiles 1 (and 2): bytes per load, lanes across, columns a tile, tiles (vb 0:
                              not taken) */
    int split;             /* 1: split down the rows */
} runt_case;

Test(plan, run_tiles_cover_each_element_once)
{
    static const runt_case cases[] = {
        /* the GPU tests' cases (bf16) */
        {KG_BF16, 3, {40, 610, 17}, 0x5, 4, 255, 30, 21, 1},
        {KG_BF16, 3, {3000, 12, 6}, 0x5, 16, 9, 12, 1, 1},
        {KG_BF16, 5, {7, 5, 9, 40, 3}, 0x15, 16, 15, 40, 1, 0},
        /* sweep #2 [500,1974,17] (0,2): rows of 33558 elements, words */
        {KG_BF16, 3, {50, 1974, 17}, 0x5, 4, 255, 30, 66, 1},
        /* sweep #10's order scaled: K3 R4 rows of 12 elements in 8-byte loads */
        {KG_BF16, 6, {33, 25, 22, 3, 2, 2}, 0x35, 8, 3, 3, 1, 1},
        /* f16 runs of 9 under 100 columns (rows of 900: 8-byte loads), two walk dims */
        {KG_F16, 5, {6, 4, 11, 100, 9}, 0x15, 8, 225, 100, 1, 1},
    };
    char why[256];
    kg_red_class cls;
    int defaults = 0; /* cases run tiles take by default */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const runt_case *c = &cases[i];
        kg_tensor in = fake(IN_AT, c->dt, c->nd, c->shape);
        int axes[6], n = 0;
        for (int d = 0; d < c->nd; d++)
            if ((c->mask >> d) & 1u)
                axes[n++] = d;
        kg_red_plan p;
        cr_assert_eq(plan_of(KG_RED_SUM, &in, axes, n, 0, &p), KG_OK);
        cr_assert(p.cls != KG_RED_RUNT || (c->dt != KG_F32 && c->dt != KG_I32 && c->dt != KG_F64 && p.args.vec >= 4),
                  "case %zu: by default run tiles only in loads of 4 bytes or more over 2-byte elements", i);
        defaults += p.cls == KG_RED_RUNT;
        for (int mode = 1; mode <= 2; mode++) {
            kg_red_tuning t = kg_red_force_runt(16, 6);
            t.run_tiles = mode;
            cr_assert_eq(plan_tuned(KG_RED_SUM, &in, axes, n, 0, &t, &p), KG_OK);
            cr_assert_eq(p.cls, KG_RED_RUNT, "case %zu run_tiles %d: class %d", i, mode, p.cls);
            cr_assert_eq(p.args.vec, c->vb, "case %zu: %d bytes a load", i, p.args.vec);
            cr_assert_eq(p.args.cw, c->cw, "case %zu: %d lanes across", i, p.args.cw);
            cr_assert_eq(p.args.tile_rows, c->tc, "case %zu: %lld columns a tile", i, (long long)p.args.tile_rows);
            cr_assert_eq(p.args.tiles, c->tiles, "case %zu: %lld tiles", i, (long long)p.args.tiles);
            cr_assert_eq(p.args.splits > 1, c->split, "case %zu: %d splits", i, p.args.splits);
            cr_assert_eq(p.grid, p.args.units < 132 * t.blocks_per_sm ? p.args.units : 132 * t.blocks_per_sm);
            cr_assert(p.args.splits == 1 || p.partial_bytes >= (size_t)(p.args.units * p.args.tile_rows * 4));
            cr_assert_leq(p.partial_bytes, KG_RED_PARTIAL_BYTES);
            cr_assert_eq(plan_tuned(KG_RED_ARGMAX, &in, axes, n, 0, &t, &p), KG_OK);
            cr_assert_neq(p.cls, KG_RED_RUNT, "case %zu: an index reduction took run tiles", i);
        }
        /* every op, under every forced load width and split target */
        for (int vb = 16; vb >= 2; vb /= 2)
            for (int units = 6; units <= 64; units += 58) {
                const kg_red_tuning t = kg_red_force_runt(vb, units);
                for (int op = 0; op < KG_RED_COUNT; op++)
                    if ((kg_red_infos[op].dtype_mask >> c->dt) & 1u)
                        cr_expect(check_plan((kg_reduce_op)op, &in, c->mask, &t, why, sizeof why, &cls),
                                  "case %zu vb %d units %d %s: %s", i, vb, units, kg_red_infos[op].name, why);
            }
    }
    cr_assert_gt(defaults, 0, "no case takes run tiles by default");
    /* 4- and 8-byte elements: no run tiles (they lost in session 25's
       round, s25r1 run_tiles 2; their kernels are empty), under any tuning */
    static const runt_case wide[] = {
        {KG_F32, 3, {64, 300, 5}, 0x5, 16, 255, 204, 2, 1},
        {KG_I32, 5, {7, 5, 9, 40, 3}, 0x15, 16, 30, 40, 1, 1},
        {KG_F64, 3, {30, 100, 4}, 0x5, 16, 200, 100, 1, 1},
    };
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++) {
        const runt_case *c = &wide[i];
        kg_tensor in = fake(IN_AT, c->dt, c->nd, c->shape);
        int axes[6], n = 0;
        for (int d = 0; d < c->nd; d++)
            if ((c->mask >> d) & 1u)
                axes[n++] = d;
        kg_red_plan p;
        for (int mode = 1; mode <= 2; mode++)
            for (int vb = 16; vb >= 4; vb /= 2) {
                kg_red_tuning t = kg_red_force_runt(vb, 6);
                t.run_tiles = mode;
                for (int op = 0; op < KG_RED_COUNT; op++)
                    if ((kg_red_infos[op].dtype_mask >> c->dt) & 1u) {
                        cr_assert_eq(plan_tuned((kg_reduce_op)op, &in, axes, n, 0, &t, &p), KG_OK);
                        cr_assert_neq(p.cls, KG_RED_RUNT, "wide case %zu: run tiles over %d-byte elements", i,
                                      (int)kg_dtype_size(c->dt));
                        cr_expect(check_plan((kg_reduce_op)op, &in, c->mask, &t, why, sizeof why, &cls),
                                  "wide case %zu vb %d %s: %s", i, vb, kg_red_infos[op].name, why);
                    }
            }
    }
    const kg_red_tuning t = kg_red_force_runt(16, 6);
    kg_red_plan p;
    /* rows of 441 elements (odd): one 2-byte element a lane */
    kg_tensor odd = fake(IN_AT, KG_BF16, 3, (int64_t[]){50, 63, 7});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &odd, (int[]){0, 2}, 2, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_RUNT, "rows of an odd count of 2-byte elements");
    cr_assert_eq(p.args.vec, 2);
    cr_assert_eq(p.args.cw, 252, "36 columns of 7 a tile");
    cr_assert_eq(p.args.tiles, 2);
    cr_assert_eq(plan_of(KG_RED_SUM, &odd, (int[]){0, 2}, 2, 0, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_RUNT, "by default not in one 2-byte element a lane (s25r1 #54, #89: 1.44-1.77x)");
    /* a misaligned input (2 bytes past 16): one element a lane */
    kg_tensor mis = fake(IN_AT + 2, KG_BF16, 3, (int64_t[]){50, 600, 4});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &mis, (int[]){0, 2}, 2, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_RUNT);
    cr_assert_eq(p.args.vec, 2, "an input 2 bytes off its 4-byte words");
    for (int vb = 16; vb >= 2; vb /= 2) {
        const kg_red_tuning tv = kg_red_force_runt(vb, 64);
        cr_assert(check_plan(KG_RED_SUM, &mis, 0x5, &tv, why, sizeof why, &cls), "%s", why);
        cr_assert(check_plan(KG_RED_MAX, &odd, 0x5, &tv, why, sizeof why, &cls), "%s", why);
    }
    mis = fake(IN_AT + 4, KG_BF16, 3, (int64_t[]){50, 600, 5});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &mis, (int[]){0, 2}, 2, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_RUNT);
    cr_assert_eq(p.args.vec, 4, "4 bytes off 16: words");
    cr_assert(check_plan(KG_RED_SUM, &mis, 0x5, &t, why, sizeof why, &cls), "%s", why);
    /* 1-byte elements and runs past 64 bytes: never */
    kg_tensor u8 = fake(IN_AT, KG_U8, 3, (int64_t[]){50, 600, 8});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &u8, (int[]){0, 2}, 2, 0, &t, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_RUNT, "1-byte elements");
    kg_tensor longr = fake(IN_AT, KG_BF16, 3, (int64_t[]){50, 600, 33});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &longr, (int[]){0, 2}, 2, 0, &t, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_RUNT, "runs of 66 bytes");
}

/* RUNT's split cap (run_tiles_cap 8, the default since session 28's H100
   round): where the split target (6 units per multiprocessor) splits the
   rows more than 8 ways, 3 units per multiprocessor instead. The sweep's
   run tile plans, on 132 multiprocessors: #2 (12 splits -> 6), #65 (396 ->
   198), #180 (156 -> 80) take it; #10 (4 splits) keeps its plan (s25r1: 3
   units per multiprocessor lost there). Against the uncapped plan (cap 0,
   the default before), everything but the split count and chunk stays;
   the default plan is the capped one; the plan checker walks every value
   op's capped plan. */
Test(plan, run_tiles_split_cap_takes_the_many_split_plans)
{
    static const struct {
        int nd;
        int64_t shape[6];
        unsigned mask;
        int splits, capped; /* the uncapped plan's splits, the capped (default) plan's */
    } cases[] = {
        {4, {66, 200, 30, 17}, 0xa, 12, 6},               /* 66 outer kept positions, the checker's case */
        {3, {500, 1974, 17}, 0x5, 12, 6},                 /* #2 */
        {6, {19, 2, 64, 1000, 15, 2}, 0x2d, 396, 198},    /* #65's nest R2 K15 R1000 R64 K2 R19 */
        {4, {746, 5, 500, 9}, 0xb, 156, 80},              /* #180's nest R9 K500 R5 R746 */
        {6, {1023, 255, 22, 3, 2, 2}, 0x35, 4, 4},        /* #10 */
    };
    const kg_red_tuning cap = kg_red_force_runt_cap(8, 3), uncapped = kg_red_force_runt_cap(0, 3);
    char why[256];
    kg_red_class cls;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kg_tensor in = fake(IN_AT, KG_BF16, cases[i].nd, cases[i].shape);
        int axes[6], n = 0;
        for (int d = 0; d < cases[i].nd; d++)
            if ((cases[i].mask >> d) & 1u)
                axes[n++] = d;
        kg_red_plan p0, p, pd;
        cr_assert_eq(plan_tuned(KG_RED_SUM, &in, axes, n, 0, &uncapped, &p0), KG_OK);
        cr_assert_eq(p0.cls, KG_RED_RUNT, "case %zu: run tiles uncapped", i);
        cr_assert_eq(p0.args.splits, cases[i].splits, "case %zu: %d splits uncapped", i, p0.args.splits);
        cr_assert_eq(plan_tuned(KG_RED_SUM, &in, axes, n, 0, &cap, &p), KG_OK);
        cr_assert_eq(p.cls, KG_RED_RUNT);
        cr_assert_eq(p.args.splits, cases[i].capped, "case %zu: %d splits capped", i, p.args.splits);
        cr_assert_eq(plan_of(KG_RED_SUM, &in, axes, n, 0, &pd), KG_OK);
        cr_assert_eq(pd.cls, KG_RED_RUNT, "case %zu: run tiles by default", i);
        cr_assert_eq(pd.args.splits, p.args.splits, "case %zu: %d splits by default", i, pd.args.splits);
        cr_assert_eq(pd.args.chunk, p.args.chunk, "case %zu: the default plan is the capped one", i);
        cr_assert_eq(p.args.vec, p0.args.vec);
        cr_assert_eq(p.args.cw, p0.args.cw);
        cr_assert_eq(p.args.tiles, p0.args.tiles);
        cr_assert_eq(p.args.tile_rows, p0.args.tile_rows);
        cr_assert_eq(p.args.units, p.args.splits * (p0.args.units / p0.args.splits));
        cr_assert_geq(p.args.chunk * p.args.splits, p0.args.red / p0.args.run, "case %zu: the splits cover the rows", i);
        cr_assert_lt(p.args.chunk * (p.args.splits - 1), p0.args.red / p0.args.run, "case %zu: no empty split", i);
        cr_assert_leq(p.partial_bytes, KG_RED_PARTIAL_BYTES);
        /* the walk of every element (the smallest case: 6.7M elements) */
        for (int op = 0; op < KG_RED_COUNT && i == 0; op++)
            if ((kg_red_infos[op].dtype_mask >> KG_BF16) & 1u && !kg_red_infos[op].indexed)
                cr_expect(check_plan((kg_reduce_op)op, &in, cases[i].mask, &cap, why, sizeof why, &cls), "case %zu %s: %s",
                          i, kg_red_infos[op].name, why);
    }
    /* the GPU tests' split case (3000,12,6) (0,2): 27 splits, the most its
       rows allow at a batch of loads per lane a split, under either target */
    kg_tensor in = fake(IN_AT, KG_BF16, 3, (int64_t[]){3000, 12, 6});
    kg_red_plan p0, p;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){0, 2}, 2, 0, &uncapped, &p0), KG_OK);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){0, 2}, 2, 0, &cap, &p), KG_OK);
    cr_assert_eq(p0.cls, KG_RED_RUNT);
    cr_assert_eq(p.args.splits, p0.args.splits);
    /* on by default: 8 splits, 3 units per multiprocessor past them */
    cr_assert_eq(kg_red_tuning_default.run_tiles_cap, 8);
    cr_assert_eq(kg_red_tuning_default.run_tiles_cap_units, 3);
}

/* SEGW (seg_rows): short dense rows staged a warp at a time. The sweep's
   rows of 3 and 11 (bf16, #8 and #70 scaled), 5 and 9 (f32, #67, #87), a
   stream whose last vector is partial, keepdim; the plan checker walks
   every op's plan; index reductions, rows under a further kept dim, rows
   of chunks past KG_RED_SEGW_BYTES or of fewer than 32 rows (f16 rows of
   16: 32 bytes) and misaligned inputs keep their plans; the default (since session 25). */
Test(plan, warp_staged_rows_cover_each_element_once)
{
    static const struct {
        kg_dtype dt;
        int64_t rows, L;
        int R, cw; /* rows a chunk, vectors a lane (0: not taken) */
    } cases[] = {
        {KG_BF16, 50001, 3, 256, 3},  {KG_BF16, 30001, 11, 256, 11}, {KG_F32, 20001, 5, 128, 5},
        {KG_F32, 10001, 9, 128, 9},   {KG_I32, 7777, 2, 64, 1},      {KG_F64, 999, 3, 64, 3},
        {KG_F16, 4097, 16, 0, 0},     {KG_BF16, 100, 7, 256, 7},     {KG_I32, 5000, 17, 0, 0},
        {KG_F32, 3000, 12, 32, 3},
    };
    kg_red_tuning t = kg_red_force_segw();
    char why[256];
    kg_red_class cls;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int64_t shape[2] = {cases[i].rows, cases[i].L};
        kg_tensor in = fake(IN_AT, cases[i].dt, 2, shape);
        kg_red_plan p;
        cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){1}, 1, 0, &p), KG_OK);
        cr_assert_eq(p.cls == KG_RED_SEGW, cases[i].R != 0, "case %zu: warp-staged rows by default where they apply",
                     i);
        cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){1}, 1, 0, &t, &p), KG_OK);
        if (!cases[i].R) {
            cr_assert_neq(p.cls, KG_RED_SEGW, "case %zu: a chunk past KG_RED_SEGW_BYTES or under 32 rows", i);
            continue;
        }
        cr_assert_eq(p.cls, KG_RED_SEGW, "case %zu: class %d", i, p.cls);
        cr_assert_eq(p.args.tile_rows, cases[i].R, "case %zu: %lld rows a chunk", i, (long long)p.args.tile_rows);
        cr_assert_eq(p.args.cw, cases[i].cw, "case %zu: %d vectors a lane", i, p.args.cw);
        cr_assert_eq(p.grid, (unsigned)((p.args.units + 7) / 8 < 132 * t.blocks_per_sm ? (p.args.units + 7) / 8
                                                                                         : 132 * t.blocks_per_sm));
        cr_assert_eq(plan_tuned(KG_RED_ARGMIN, &in, (int[]){1}, 1, 0, &t, &p), KG_OK);
        cr_assert_neq(p.cls, KG_RED_SEGW, "case %zu: an index reduction took warp-staged rows", i);
        for (int op = 0; op < KG_RED_COUNT; op++)
            if ((kg_red_infos[op].dtype_mask >> cases[i].dt) & 1u)
                cr_expect(check_plan((kg_reduce_op)op, &in, 0x2, &t, why, sizeof why, &cls), "case %zu %s: %s", i,
                          kg_red_infos[op].name, why);
    }
    kg_red_plan p;
    /* rows under two kept dims whose strides do not merge (a permuted layout): not taken */
    kg_tensor two = fake(IN_AT, KG_BF16, 3, (int64_t[]){30, 40, 3});
    two.strides[0] = 3;
    two.strides[1] = 90;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &two, (int[]){2}, 1, 0, &t, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_SEGW, "rows under two kept dims");
    /* misaligned: not taken */
    kg_tensor mis = fake(IN_AT + 2, KG_BF16, 2, (int64_t[]){5000, 3});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &mis, (int[]){1}, 1, 0, &t, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_SEGW, "an input off 16 bytes");
    /* keepdim: the same plan */
    kg_tensor kd = fake(IN_AT, KG_BF16, 2, (int64_t[]){5000, 3});
    cr_assert_eq(plan_tuned(KG_RED_MEAN, &kd, (int[]){1}, 1, 1, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_SEGW);
}

/* kg_red_force_runs: short reduced runs under contiguous columns in
   vectors (cols_runs_vec, before TILE with tile_vec) and no scalar column
   run where NEST moves the run in vectors (cols_runs_nest_vec), on the
   bench sweep's cases #194 and #56; each plan covers every element once;
   the runs in vectors in the colsp kernel (occ 3). */
Test(plan, short_runs_in_vectors_and_no_scalar_runs_where_nest_takes_vectors)
{
    /* the older classes' rules: RUNT and SEGW (defaults since session 25) off (plan_s24) */
    const kg_red_tuning t = kg_red_force_runs();
    kg_red_tuning off = kg_red_tuning_default; /* session 18's rules */
    off.run_tiles = off.seg_rows = 0; /* the chain of before session 25 */
    off.cols_runs_vec = 0;
    off.tile_vec = 0;
    off.cols_runs_nest_vec = 0;
    kg_red_plan p;
    char why[256];
    kg_red_class cls;
    /* #194: i32 [13,255,51,50,2] axes (0,1,4): runs of 2 under 2550 columns,
       rows of 5100 elements, 3315 of them */
    const int64_t s194[] = {13, 255, 51, 50, 2};
    kg_tensor a = fake(IN_AT, KG_I32, 5, s194);
    const int ax194[] = {0, 1, 4};
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, ax194, 3, 0, &off, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_TILE, "without the rules: TILE");
    cr_assert_eq(plan_s24(KG_RED_SUM, &a, ax194, 3, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS, "the default: runs in vectors");
    cr_assert_eq(p.args.run, 2);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, ax194, 3, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.run, 2);
    cr_assert_eq(p.args.vec, KG_RED_CV_VEC);
    cr_assert_eq(p.args.inner, 5100, "the columns' runs as columns of elements");
    cr_assert_eq(p.occ, 3, "the run kernel is colsp's");
    cr_assert_eq(p.args.vstore, 0);
    cr_assert_eq(p.args.walk.n, 1);
    cr_assert_eq(p.args.walk.size[0], 3315);
    cr_assert_eq(p.args.walk.in[0], 5100);
    cr_assert(check_plan(KG_RED_SUM, &a, 0x13, &t, why, sizeof why, &cls), "%s", why);
    cr_assert(check_plan(KG_RED_MAX, &a, 0x13, &t, why, sizeof why, &cls), "%s", why);
    /* index reductions keep their plans (the run kernel is for values) */
    cr_assert_eq(plan_tuned(KG_RED_ARGMAX, &a, ax194, 3, 0, &t, &p), KG_OK);
    cr_assert(!(p.cls == KG_RED_COLS && p.args.run > 1 && p.args.vec != KG_RED_CV_SCALAR));
    /* bf16: 8 elements a vector in 32-bit words, runs of 2, 4, 8 */
    for (int64_t L = 2; L <= 16; L *= 2) {
        const int64_t sh[] = {300, 96, L};
        kg_tensor b = fake(IN_AT, KG_BF16, 3, sh);
        cr_assert_eq(plan_tuned(KG_RED_SUM, &b, (int[]){0, 2}, 2, 0, &t, &p), KG_OK);
        const int runv = p.cls == KG_RED_COLS && p.args.run == L && p.args.vec == KG_RED_CV_WIDE32;
        cr_assert_eq(runv, L <= 8, "runs of %lld bf16", (long long)L);
        cr_assert(check_plan(KG_RED_SUM, &b, 0x5, &t, why, sizeof why, &cls), "%s", why);
    }
    /* runs of 3 do not divide a vector; a misaligned input moves no vector */
    kg_tensor c = fake(IN_AT, KG_F32, 3, (int64_t[]){300, 96, 3});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &c, (int[]){0, 2}, 2, 0, &t, &p), KG_OK);
    cr_assert(!(p.cls == KG_RED_COLS && p.args.vec != KG_RED_CV_SCALAR && p.args.run > 1));
    kg_tensor d = fake(IN_AT + 4, KG_F32, 3, (int64_t[]){300, 96, 2});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &d, (int[]){0, 2}, 2, 0, &t, &p), KG_OK);
    cr_assert(!(p.cls == KG_RED_COLS && p.args.vec != KG_RED_CV_SCALAR && p.args.run > 1));
    cr_assert(check_plan(KG_RED_SUM, &d, 0x5, &t, why, sizeof why, &cls), "%s", why);
    /* #56: bf16 [33,384,12,2,2,29] permuted (4,5,0,1,3,2), axes (0,2,3):
       runs of 24 (dims 2 and 3) under 384 columns; NEST moves them in
       vectors */
    const int64_t s56[] = {33, 384, 12, 2, 2, 29};
    const int perm56[] = {4, 5, 0, 1, 3, 2};
    kg_tensor e = permuted(KG_BF16, 6, s56, perm56, 0, (int64_t)IN_AT);
    const int ax56[] = {0, 2, 3};
    cr_assert_eq(plan_tuned(KG_RED_SUM, &e, ax56, 3, 0, &off, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS, "without the rules: a column run");
    cr_assert_eq(p.args.run, 24);
    cr_assert_eq(plan_s24(KG_RED_SUM, &e, ax56, 3, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST, "the default: NEST in vectors");
    cr_assert_eq(plan_tuned(KG_RED_SUM, &e, ax56, 3, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.vec, 2, "vectors of 2-byte elements as words");
    cr_assert(check_plan(KG_RED_SUM, &e, 0xd, &t, why, sizeof why, &cls), "%s", why);
    /* runs of 24 that misalign the vectors keep the column run */
    kg_tensor f = permuted(KG_BF16, 6, s56, perm56, 0, (int64_t)IN_AT + 2);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &f, ax56, 3, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.run, 24);
}

/* kg_red_force_chain: COLS columns over the contiguous kept dim and the
   kept dims whose input strides chain with it though their results' do
   not (cols_chain), on the bench sweep's cases #19 and #34; each plan
   covers every element once, every result at its column's digits. */
Test(plan, columns_over_chained_kept_dims_scatter_their_results)
{
    const kg_red_tuning t = kg_red_force_chain();
    kg_red_tuning off = kg_red_tuning_default;
    off.cols_chain = 0;
    kg_red_plan p;
    char why[256];
    kg_red_class cls;
    /* #19: i32 [255,63,128,33,2] in memory order (1,2,3,0,4), axes (1,2):
       kept dims 4 (2), 0 (255), 3 (33) chained in the input (16830
       columns), results [255,33,2] */
    const int64_t s19[] = {255, 63, 128, 33, 2};
    const int perm19[] = {1, 2, 3, 0, 4};
    kg_tensor a = permuted(KG_I32, 5, s19, perm19, 0, (int64_t)IN_AT);
    const int ax19[] = {1, 2};
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, ax19, 2, 0, &off, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.inner, 2, "without the rule: the 2 columns of the innermost kept dim");
    cr_assert_eq(p.args.rdims.n, 0);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, ax19, 2, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.inner, 16830);
    cr_assert_eq(p.args.rdims.n, 3);
    const int64_t sz[] = {2, 255, 33}, in[] = {1, 2, 510}, out[] = {1, 66, 2};
    for (int d = 0; d < 3; d++) {
        cr_assert_eq(p.args.rdims.size[d], sz[d]);
        cr_assert_eq(p.args.rdims.in[d], in[d]);
        cr_assert_eq(p.args.rdims.out[d], out[d]);
    }
    cr_assert_eq(p.args.n_out, 1, "every kept dim in the columns: one outer position");
    cr_assert_eq(p.args.vstore, 0);
    cr_assert_eq(p.args.group, 0);
    cr_assert(check_plan(KG_RED_SUM, &a, 0x6, &t, why, sizeof why, &cls), "%s", why);
    cr_assert(check_plan(KG_RED_ARGMAX, &a, 0x6, &t, why, sizeof why, &cls), "%s", why);
    /* on by default (bound 1024 bytes, outputs of at least 128 bytes) */
    cr_assert_eq(plan_of(KG_RED_SUM, &a, ax19, 2, 0, &p), KG_OK);
    cr_assert_eq(p.args.inner, 16830);
    /* #77 bf16 [33,1695,5,96,5] in memory order (4,2,3,1,0), axis 4: kept
       dims chained, 5 elements (10 bytes) an output: TRANS by default */
    kg_tensor s77 = permuted(KG_BF16, 5, (int64_t[]){33, 1695, 5, 96, 5}, (int[]){4, 2, 3, 1, 0}, 0, IN_AT);
    cr_assert_eq(plan_of(KG_RED_SUM, &s77, (int[]){4}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_TRANS);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &s77, (int[]){4}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS, "forced: every output size");
    cr_assert_eq(p.args.rdims.n, 3);
    /* the bound: K[0] of 2 i32 is 8 bytes */
    kg_red_tuning b8 = off, b9 = off;
    b8.cols_chain = 8;
    b9.cols_chain = 9;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, ax19, 2, 0, &b8, &p), KG_OK);
    cr_assert_eq(p.args.inner, 2);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, ax19, 2, 0, &b9, &p), KG_OK);
    cr_assert_eq(p.args.inner, 16830);
    /* #34: i32 [256,7,90,15,7] in memory order (3,4,0,2,1), axes (0,3,4):
       kept dims 1 (7) and 2 (90) chained, the chain ends at reduced dim 0;
       results [7,90] transposed; split down the rows */
    const int64_t s34[] = {256, 7, 90, 15, 7};
    const int perm34[] = {3, 4, 0, 2, 1};
    kg_tensor c = permuted(KG_I32, 5, s34, perm34, 0, (int64_t)IN_AT);
    const int ax34[] = {0, 3, 4};
    cr_assert_eq(plan_tuned(KG_RED_SUM, &c, ax34, 3, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.inner, 630);
    cr_assert_eq(p.args.rdims.n, 2);
    cr_assert_eq(p.args.rdims.out[0], 90);
    cr_assert_eq(p.args.rdims.out[1], 1);
    cr_assert(check_plan(KG_RED_SUM, &c, 0x19, &t, why, sizeof why, &cls), "%s", why);
    cr_assert(check_plan(KG_RED_ARGMIN, &c, 0x19, &t, why, sizeof why, &cls), "%s", why);
    /* kept dims chained in the results too are one dim already: no rdims */
    kg_tensor d = fake(IN_AT, KG_F32, 3, (int64_t[]){3000, 7, 9});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &d, (int[]){0}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.inner, 63);
    cr_assert_eq(p.args.rdims.n, 0);
}

Test(plan, larger_shapes_with_splits_tiles_and_lane_groups_cover_each_element_once)
{
    /* sizes that reach block-wide units, splits, several tiles, lane groups,
       packed rows and more reduced groups than a walk holds */
    static const struct {
        int nd;
        int64_t shape[6];
    } S[] = {
        {2, {7, 40000}},   {2, {40000, 7}}, {3, {300, 3, 700}},    {3, {64, 1000, 9}},       {4, {5, 64, 6, 300}},
        {3, {2, 9000, 3}}, {2, {1001, 64}}, {4, {3, 1000, 3, 17}}, {6, {3, 5, 2, 7, 3, 11}}, {2, {1, 300000}},
    };
    int plans = 0, by_class[KG_RED_CLASS_COUNT] = {0}, split = 0, runs = 0, deep = 0, tiles = 0, words = 0, occ = 0,
        cover = 0, fill = 0, flatw = 0, flatwo = 0, slab = 0, trans = 0, transv = 0, pairs = 0, vstores = 0;
    uint64_t rng = 99;
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++) {
        const int nd = S[i].nd;
        for (unsigned mask = 1; mask < (1u << nd); mask++) {
            for (int v = 0; v < 3; v++) {
                int perm[KG_MAX_DIMS];
                for (int d = 0; d < nd; d++)
                    perm[d] = d;
                if (v == 2) /* a random stride order */
                    for (int d = nd - 1; d > 0; d--) {
                        const int j =
                            (int)((rng = rng * 6364136223846793005ull + 1442695040888963407ull) >> 33) % (d + 1);
                        const int x = perm[d];
                        perm[d] = perm[j];
                        perm[j] = x;
                    }
                kg_tensor in = permuted(v == 1 ? KG_BF16 : KG_F32, nd, S[i].shape, perm, 0, (int64_t)IN_AT);
                for (int k = 0; k < 2; k++) {
                    const kg_reduce_op op = k ? KG_RED_ARGMIN : KG_RED_SUM;
                    char why[256];
                    kg_red_class cls;
                    kg_red_plan p;
                    int axes[KG_MAX_DIMS] = {0}, n = 0;
                    for (int d = 0; d < nd; d++)
                        if ((mask >> d) & 1u)
                            axes[n++] = d;
                    cr_assert_eq(plan_of(op, &in, axes, n, 0, &p), KG_OK);
                    split += p.args.splits > 1;
                    char sh[128], st[128];
                    cr_assert(check_plan(op, &in, mask, NULL, why, sizeof why, &cls),
                              "%s of %s strides %s mask 0x%x: %s", kg_red_infos[op].name,
                              kg_shape_str(sh, sizeof sh, nd, in.shape), kg_shape_str(st, sizeof st, nd, in.strides),
                              mask, why);
                    by_class[cls]++;
                    cr_assert(check_plan(op, &in, mask, &old_tuning, why, sizeof why, &cls), "old tuning: %s", why);
                    cr_assert(check_plan(op, &in, mask, &runs_tuning, why, sizeof why, &cls), "column runs: %s", why);
                    runs += cls == KG_RED_COLS;
                    kg_red_plan dp;
                    cr_assert_eq(plan_tuned(op, &in, axes, n, 0, &deep_tuning, &dp), KG_OK);
                    deep += dp.args.deep;
                    cr_assert(check_plan(op, &in, mask, &deep_tuning, why, sizeof why, &cls), "narrow walks: %s", why);
                    kg_red_tuning rw = kg_red_tuning_default;
                    rw.flat_words = 0;
                    cr_assert(check_plan(op, &in, mask, &rw, why, sizeof why, &cls), "flat without words: %s", why);
                    cr_assert(check_plan(op, &in, mask, &tile_tuning, why, sizeof why, &cls), "tiles: %s", why);
                    tiles += cls == KG_RED_TILE;
                    /* 2-byte vectors loaded as 32-bit words (cols_words, nest_words) */
                    kg_red_tuning wt = kg_red_tuning_default;
                    wt.cols_words = wt.nest_words = 1;
                    wt.flat = 0;
                    kg_red_plan wp;
                    cr_assert_eq(plan_tuned(op, &in, axes, n, 0, &wt, &wp), KG_OK);
                    words += (wp.cls == KG_RED_COLS &&
                              (wp.args.vec == KG_RED_CV_WIDE32 || wp.args.vec == KG_RED_CV_VEC32)) ||
                             (wp.cls == KG_RED_NEST && wp.args.vec == 2);
                    cr_assert(check_plan(op, &in, mask, &wt, why, sizeof why, &cls), "words: %s", why);
                    /* the walks at more blocks per multiprocessor (cols_occ, nest_occ) */
                    for (int o = 3; o <= 4; o++) {
                        kg_red_tuning ot = kg_red_tuning_default;
                        ot.cols_occ = o;
                        ot.cols_occ_blocks = 0;
                        ot.cols_occ_wide = 1;
                        ot.nest_occ = 4;
                        ot.narrow_occ = 4;
                        kg_red_plan op_;
                        cr_assert_eq(plan_tuned(op, &in, axes, n, 0, &ot, &op_), KG_OK);
                        occ += op_.occ != 0;
                        cr_assert(check_plan(op, &in, mask, &ot, why, sizeof why, &cls), "occ %d: %s", o, why);
                    }
                    /* column splits that fill 1 or 4 waves (cols_split_fill), 16- or 8-lane split
                       tiles where they cut many splits (cols_split_few); before them (0) */
                    for (int o = 0; o <= 4; o += 2) {
                        kg_red_tuning ot = kg_red_tuning_default;
                        ot.cols_split_fill = o;
                        ot.cols_split_few = o == 4 ? 8 : 16;
                        kg_red_plan op_;
                        cr_assert_eq(plan_tuned(op, &in, axes, n, 0, &ot, &op_), KG_OK);
                        fill += op_.cls == KG_RED_COLS && op_.args.splits > 1;
                        cr_assert(check_plan(op, &in, mask, &ot, why, sizeof why, &cls), "cols_split_fill %d: %s", o,
                                  why);
                    }
                    /* flat with a warp per unit wherever it applies, its kernel at 3 and at 4 blocks per SM */
                    for (int o = 0; o <= 4; o += 4) {
                        kg_red_tuning ft = kg_red_tuning_default;
                        ft.flat_warp = 2;
                        ft.flat_warp_min = 0;
                        ft.flat_warp_units = 0;
                        ft.flat_warp_occ = o;
                        kg_red_plan fp;
                        cr_assert_eq(plan_tuned(op, &in, axes, n, 0, &ft, &fp), KG_OK);
                        flatw += fp.cls == KG_RED_FLAT && fp.args.group == 32;
                        flatwo += fp.cls == KG_RED_FLAT && fp.args.group == 32 && fp.occ == 4;
                        cr_assert(check_plan(op, &in, mask, &ft, why, sizeof why, &cls), "flat_warp (occ %d): %s", o,
                                  why);
                    }
                    /* two column tiles per unit (cols_pair, COLSQ) and vector stores of the results
                       (cols_vstore) wherever they apply, the 4-block kernel on every COLS grid */
                    {
                        kg_red_tuning qt = kg_red_tuning_default;
                        qt.cols_occ_blocks = 0;
                        qt.cols_pair = 2;
                        qt.cols_pair_rows = 1 << 30;
                        qt.cols_vstore = 2;
                        kg_red_plan qp;
                        cr_assert_eq(plan_tuned(op, &in, axes, n, 0, &qt, &qp), KG_OK);
                        pairs += qp.cls == KG_RED_COLS && qp.args.group == 2;
                        vstores += qp.args.vstore;
                        cr_assert(check_plan(op, &in, mask, &qt, why, sizeof why, &cls), "cols_pair: %s", why);
                    }
                    /* outputs scattered in the input's order in tiles (trans) wherever they apply */
                    {
                        kg_red_tuning tt = kg_red_force_trans();
                        kg_red_plan tp;
                        cr_assert_eq(plan_tuned(op, &in, axes, n, 0, &tt, &tp), KG_OK);
                        trans += tp.cls == KG_RED_TRANS;
                        cr_assert(check_plan(op, &in, mask, &tt, why, sizeof why, &cls), "trans: %s", why);
                        /* ... and of 2-byte elements in 16-byte vectors (trans_vec) */
                        kg_red_tuning tv = kg_red_force_transv();
                        cr_assert_eq(plan_tuned(op, &in, axes, n, 0, &tv, &tp), KG_OK);
                        transv += tp.cls == KG_RED_TRANS && tp.args.vec == 1;
                        cr_assert(tp.cls != KG_RED_TRANS || tp.args.vec != 1 || in.dtype == KG_BF16 ||
                                      in.dtype == KG_F16,
                                  "trans_vec off bf16 / f16 elements");
                        cr_assert(check_plan(op, &in, mask, &tv, why, sizeof why, &cls), "trans_vec: %s", why);
                    }
                    /* tiles over slabs wherever they apply */
                    {
                        kg_red_tuning sl = kg_red_force_slab();
                        kg_red_plan sp;
                        cr_assert_eq(plan_tuned(op, &in, axes, n, 0, &sl, &sp), KG_OK);
                        slab += sp.cls == KG_RED_SLAB;
                        cr_assert(check_plan(op, &in, mask, &sl, why, sizeof why, &cls), "slab: %s", why);
                    }
                    /* covering vectors (nest_cover) down to runs of 2, short rows too, in both kernels */
                    for (int o = 0; o <= 1; o++) {
                        kg_red_tuning ct = kg_red_tuning_default;
                        ct.nest_cover_min = 2;
                        ct.nest_cover_rows = 1;
                        ct.nest_cover_occ = o;
                        ct.nest_cover_whole = o;
                        ct.nest_cover_whole_bytes = 0;
                        kg_red_plan cp;
                        cr_assert_eq(plan_tuned(op, &in, axes, n, 0, &ct, &cp), KG_OK);
                        cover += cp.cls == KG_RED_NEST && cp.args.vec == KG_RED_NEST_COVER;
                        cr_assert(check_plan(op, &in, mask, &ct, why, sizeof why, &cls), "cover (occ %d): %s", o, why);
                    }
                    plans++;
                }
            }
        }
    }
    cr_log_info("%d larger plans checked, %d split, %d columns with the run path on, %d narrow walks", plans, split,
                runs, deep);
    cr_assert_gt(split, 0);
    cr_assert_gt(deep, 0);
    cr_assert_gt(tiles, 0);
    cr_assert_gt(words, 0);
    cr_assert_gt(occ, 0);
    cr_assert_gt(cover, 0);
    cr_assert_gt(fill, 0);
    cr_assert_gt(flatw, 0);
    cr_assert_eq(flatwo * 2, flatw, "every flat plan of a warp per unit at 4 blocks per SM under flat_warp_occ");
    cr_assert_gt(slab, 0);
    cr_assert_gt(trans, 0); /* (transv: the bf16 inputs here are row-major: none; the trans_vec test plans them) */
    cr_assert_gt(pairs, 0);
    cr_assert_gt(vstores, 0);
    cr_log_info("%d slab plans, %d trans plans (%d in vectors), %d plans of two column tiles per unit, %d with vector "
                "stores", slab, trans, transv, pairs, vstores);
    cr_log_info("%d plans over covering vectors, %d split column plans under the split fill, %d flat plans of a warp "
                "per unit",
                cover, fill, flatw);
    cr_log_info("%d tile plans, %d 2-byte vector plans in 32-bit words, %d plans at more blocks per SM", tiles, words,
                occ);
    for (int k = 0; k < KG_RED_COLSN; k++) /* COLSN and NESTN: kernels only, never a plan's class; TILE: not
                                              by default (above) */
        if (k != KG_RED_STRIDED64)
            cr_expect_gt(by_class[k], 0, "class %d never planned", k);
}

/* ---- CPU: geometry that would overflow (issue 13) ------------------------------ */

Test(plan, the_measured_defaults_pick_tiles_narrow_walks_and_fewer_vector_splits)
{
    /* the older classes' rules: RUNT and SEGW (defaults since session 25) off (plan_s24) */
    kg_red_plan p;
    /* rows of 3 bf16 (6 bytes): NEST lanes of 4 rows (tiles only over 4-byte elements and wider: s17r1, sweep
       #8, 157.5 us in tiles, 133.5 so), for index reductions too; rows of 3 f32 (12 bytes): tiles for value
       reductions */
    kg_tensor r3 = fake(IN_AT, KG_BF16, 2, (int64_t[]){22369622, 3});
    cr_assert_eq(plan_of(KG_RED_SUM, &r3, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_SEGW, "sweep #8 by default since session 25 (H200: 116.9 -> 64.9 us)");
    cr_assert_eq(plan_s24(KG_RED_SUM, &r3, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST, "2-byte rows of 3: no tiles by default");
    cr_assert_eq(p.args.group, 1);
    cr_assert_eq(p.args.cw, 4);
    kg_red_tuning any_es = kg_red_tuning_default;
    any_es.run_tiles = any_es.seg_rows = 0; /* the chain of before session 25 */
    any_es.tile_min_es = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &r3, (int[]){1}, 1, 0, &any_es, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_TILE);
    cr_assert_eq(p.args.run, 3);
    cr_assert_eq(p.args.group, 1);
    cr_assert_eq(p.args.tile_rows, KG_RED_TILE_ELEMS / 3);
    kg_tensor f3 = fake(IN_AT, KG_F32, 2, (int64_t[]){22369622, 3});
    cr_assert_eq(plan_s24(KG_RED_SUM, &f3, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_TILE);
    cr_assert_eq(p.args.run, 3);
    cr_assert_eq(plan_s24(KG_RED_ARGMAX, &r3, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST, "tiles take index reductions only with tile = 2: NEST lanes of 4 rows");
    cr_assert_eq(p.args.group, 1);
    cr_assert_eq(p.args.cw, 4);
    cr_assert_eq(plan_tuned(KG_RED_ARGMAX, &r3, (int[]){1}, 1, 0, &old_tuning, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS, "rows in the old tuning");
    /* rows of 11 f32 (44 bytes): NEST lanes of 4 rows each (rows_multi, r4), rows before */
    kg_tensor r11 = fake(IN_AT, KG_F32, 2, (int64_t[]){3050403, 11});
    cr_assert_eq(plan_s24(KG_RED_SUM, &r11, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.cw, 4);
    kg_red_tuning no_multi = kg_red_tuning_default;
    no_multi.run_tiles = no_multi.seg_rows = 0; /* the chain of before session 25 */
    no_multi.nest_multi = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &r11, (int[]){1}, 1, 0, &no_multi, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS);
    /* a misaligned reduced run innermost: covering vectors for value
       reductions (nest_cover), a narrow nest walk for index reductions and
       without nest_cover, in any dtype */
    kg_tensor n = fake(IN_AT, KG_F32, 3, (int64_t[]){15, 17754, 63});
    cr_assert_eq(plan_s24(KG_RED_SUM, &n, (int[]){0, 2}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.vec, KG_RED_NEST_COVER);
    cr_assert_eq(p.args.deep, 0);
    cr_assert_eq(p.occ, 4);
    cr_assert_eq(p.args.run, 63);
    cr_assert_eq(p.args.tiles, 17 * 15, "63 f32 touch at most 17 aligned vectors");
    cr_assert_eq(p.args.walk.size[0], 17);
    cr_assert_eq(p.args.walk.in[0], 4);
    cr_assert_eq(p.args.cw, 0, "runs of 252 bytes: a test per element (nest_cover_whole: 1 KiB)");
    kg_tensor cl = fake(IN_AT, KG_F32, 3, (int64_t[]){15, 1777, 511});
    cr_assert_eq(plan_s24(KG_RED_SUM, &cl, (int[]){0, 2}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.args.vec, KG_RED_NEST_COVER);
    cr_assert_eq(p.args.cw, 1, "runs of 2044 bytes: whole vectors pushed without a test");
    kg_tensor cb16 = fake(IN_AT, KG_BF16, 3, (int64_t[]){15, 1777, 1023});
    cr_assert_eq(plan_s24(KG_RED_SUM, &cb16, (int[]){0, 2}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.args.vec, KG_RED_NEST_COVER);
    cr_assert_eq(p.args.cw, 0, "2-byte elements: a test per element");
    cr_assert_eq(plan_s24(KG_RED_ARGMAX, &n, (int[]){0, 2}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.vec, 0);
    cr_assert_eq(p.args.deep, 1);
    kg_red_tuning no_cover = kg_red_tuning_default;
    no_cover.run_tiles = no_cover.seg_rows = 0; /* the chain of before session 25 */
    no_cover.nest_cover = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &n, (int[]){0, 2}, 2, 0, &no_cover, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.vec, 0);
    cr_assert_eq(p.args.deep, 1);
    /* columns of no vector: several per lane (one per lane: narrow walks
       for 2-byte elements only) */
    kg_tensor cb = fake(IN_AT, KG_BF16, 2, (int64_t[]){100, 167773});
    cr_assert_eq(plan_s24(KG_RED_SUM, &cb, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.vec, KG_RED_CV_STRIDED);
    cr_assert_eq(p.args.deep, 0);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &cb, (int[]){0}, 1, 0, &deep_tuning, &p), KG_OK);
    cr_assert_eq(p.args.vec, KG_RED_CV_SCALAR);
    cr_assert_eq(p.args.deep, 1);
    kg_tensor cf = fake(IN_AT, KG_I32, 2, (int64_t[]){500, 33555});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &cf, (int[]){0}, 1, 0, &deep_tuning, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.vec, KG_RED_CV_SCALAR);
    cr_assert_eq(p.args.deep, 0);
    /* vector columns that 8 units per SM would split 512 ways: 2 units per
       SM with the column splits of before; the default's split fill: 16-lane
       tiles, one wave of the 4-block kernel */
    kg_tensor cv = fake(IN_AT, KG_BF16, 2, (int64_t[]){349526, 384});
    kg_red_tuning nofill = kg_red_tuning_default;
    nofill.run_tiles = nofill.seg_rows = 0; /* the chain of before session 25 */
    nofill.flat = 0;
    nofill.cols_split_fill = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &cv, (int[]){0}, 1, 0, &nofill, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.vec, KG_RED_CV_WIDE32, "16-byte vectors kept as 32-bit words");
    cr_assert_leq(p.args.units, 132 * 2, "2 units per multiprocessor");
    cr_assert_eq(plan_nf(KG_RED_SUM, &cv, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.args.cw, 16);
    cr_assert_eq(p.args.units, 132 * 4);
    cr_assert_eq(p.occ, 4);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &cv, (int[]){0}, 1, 0, &runs_tuning, &p), KG_OK);
    cr_assert_eq(p.args.splits, 512, "without the vector rule");
}

Test(plan, tiles_take_the_fewest_lanes_per_row_that_fill_the_block_and_spare_the_banks)
{
    /* the older classes' rules: RUNT and SEGW (defaults since session 25) off (plan_s24) */
    kg_red_tuning t = kg_red_tuning_default;
    t.run_tiles = t.seg_rows = 0; /* the chain of before session 25 */
    t.tile_max_bytes = 1024;
    t.tile_banks = 1;
    t.tile_min_es = 0; /* 2-byte rows too */
    kg_red_plan p;
    static const struct {
        kg_dtype dt;
        int64_t L, g;
    } want[] = {
        {KG_F32, 11, 1},  /* odd rows: lane l reads bank 11 l % 32, all distinct */
        {KG_F32, 48, 8},  /* 85 rows of 48: 4 lanes fill the block, 8 keep 2 rows a bank (48 = 3 x 16) */
        {KG_F32, 96, 16}, /* 42 rows: 8 lanes fill the block, 16 keep 2 rows a bank (96 = 3 x 32) */
        {KG_BF16, 3, 1},  /* 6-byte rows: at most two words a bank */
        {KG_F32, 4, 2},   /* 16-byte rows: one lane a row would put 4 rows in a bank */
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        kg_tensor in = fake(IN_AT, want[i].dt, 2, (int64_t[]){100003, want[i].L});
        cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){1}, 1, 0, &t, &p), KG_OK);
        cr_assert_eq(p.cls, KG_RED_TILE, "rows of %lld", (long long)want[i].L);
        cr_assert_eq(p.args.group, want[i].g, "rows of %lld: %d lanes, want %lld", (long long)want[i].L, p.args.group,
                     (long long)want[i].g);
        cr_assert_geq(p.args.tile_rows * p.args.group, KG_RED_THREADS > KG_RED_TILE_ELEMS / want[i].L * want[i].g
                                                           ? KG_RED_TILE_ELEMS / want[i].L * want[i].g
                                                           : KG_RED_THREADS);
    }
}

Test(plan, short_reductions_over_many_outputs_take_several_outputs_per_lane)
{
    /* the older classes' rules: RUNT and SEGW (defaults since session 25) off (plan_s24) */
    kg_red_tuning t = kg_red_tuning_default;
    t.run_tiles = t.seg_rows = 0; /* the chain of before session 25 */
    t.nest_multi = 4;
    t.nest_multi_lanes = 2048;
    t.nest_g1_items = 0;
    t.cols_min_cols = 0;
    t.rows_multi = 0;
    t.slab = 0; /* (SLAB takes the first shape by default) */
    kg_red_plan p;
    /* [9,15,1023,2,61] dim 3 bf16: 8.4M outputs of 2 elements 61 apart */
    kg_tensor a = fake(IN_AT, KG_BF16, 5, (int64_t[]){9, 15, 1023, 2, 61});
    t.nest_multi_plain = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, (int[]){3}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.group, 1);
    cr_assert_eq(p.args.cw, 4, "4 outputs per lane");
    cr_assert_eq(p.grid, 132 * 16, "lanes for a quarter of the outputs fill the grid's cap");
    cr_assert_eq(p.args.deep, 1, "nest_multi_plain 0: the narrow walk");
    cr_assert_eq(p.occ, 0, "narrow lanes of several outputs at 3 blocks");
    /* nest_multi_plain (the default 2: 2-byte elements): value reductions
       walk plainly in the 4-block kernel; index reductions keep the narrow
       walk, and so do 4-byte elements under 2 */
    t.nest_multi_plain = kg_red_tuning_default.nest_multi_plain;
    cr_assert_eq(t.nest_multi_plain, 2);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, (int[]){3}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.cw, 4);
    cr_assert_eq(p.args.deep, 0);
    cr_assert_eq(p.occ, 4);
    cr_assert_eq(plan_tuned(KG_RED_ARGMAX, &a, (int[]){3}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.args.cw, 4);
    cr_assert_eq(p.args.deep, 1);
    kg_tensor a4 = fake(IN_AT, KG_F32, 5, (int64_t[]){9, 15, 1023, 2, 61});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a4, (int[]){3}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.cw, 4);
    cr_assert_eq(p.args.deep, 1, "4-byte elements: the narrow walk");
    t.nest_multi_plain = 1; /* every element size */
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a4, (int[]){3}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.args.deep, 0);
    t.nest_multi_plain = kg_red_tuning_default.nest_multi_plain;
    kg_red_tuning nos = kg_red_tuning_default;
    nos.run_tiles = nos.seg_rows = 0; /* the chain of before session 25 */
    nos.slab = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, (int[]){3}, 1, 0, &nos, &p), KG_OK);
    cr_assert_eq(p.args.cw, kg_red_tuning_default.nest_multi == 4 ? 4 : 0);
    /* too few outputs to give every multiprocessor 2048 lanes of 4: one each */
    kg_tensor b = fake(IN_AT, KG_BF16, 3, (int64_t[]){1000, 2, 61});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &b, (int[]){1}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.group, 1);
    cr_assert_eq(p.args.cw, 0);
    /* longer reductions take one lane per output with nest_g1_items */
    kg_tensor c = fake(IN_AT, KG_F32, 3, (int64_t[]){20000, 20, 61});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &c, (int[]){1}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_gt(p.args.group, 1, "20 positions: lanes_for's lanes");
    t.nest_g1_items = 64;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &c, (int[]){1}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.args.group, 1);
    cr_assert_eq(p.args.cw, 4);
    /* every element once, outputs per lane on small shapes (no fill rule) */
    t.nest_multi_lanes = 0;
    for (int m = 4; m <= 8; m += 4) {
        t.nest_multi = m; /* 8: not a choice, one output per lane */
        kg_tensor d = fake(IN_AT, KG_F32, 3, (int64_t[]){300, 7, 61});
        char why[256];
        kg_red_class cls;
        for (unsigned mask = 1; mask < 8; mask++) {
            cr_assert(check_plan(KG_RED_SUM, &d, mask, &t, why, sizeof why, &cls), "mask 0x%x: %s", mask, why);
            cr_assert(check_plan(KG_RED_ARGMAX, &d, mask, &t, why, sizeof why, &cls), "mask 0x%x: %s", mask, why);
        }
    }
    /* narrow column tiles to NEST's lanes of several outputs with
       cols_min_cols, where those fill the GPU */
    kg_tensor e = fake(IN_AT, KG_F32, 3, (int64_t[]){5000, 600, 3});
    t.nest_multi = 4;
    t.nest_multi_lanes = 2048;
    t.nest_g1_items = 600;
    t.cols_min_cols = 0;
    t.flat = 0; /* (the flat class would take these short rows first) */
    cr_assert_eq(plan_tuned(KG_RED_SUM, &e, (int[]){1}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    t.cols_min_cols = 16;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &e, (int[]){1}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS, "20000 outputs: too few for lanes of 4");
    kg_tensor f = fake(IN_AT, KG_F32, 3, (int64_t[]){400000, 600, 3});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &f, (int[]){1}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST, "1.2M outputs of 3 columns");
    cr_assert_eq(p.args.group, 1);
    cr_assert_eq(p.args.cw, 4);
    /* columns that move in vectors stay columns (r4: 68.9 -> 35.5% for a
       2-byte vector tile sent to NEST) */
    kg_tensor f4 = fake(IN_AT, KG_F32, 3, (int64_t[]){400000, 600, 4});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &f4, (int[]){1}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.vec, KG_RED_CV_VEC);
    t.nest_g1_items = 599;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &f, (int[]){1}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS, "600 rows: more than nest_g1_items");
    /* short contiguous rows to NEST's lanes of several rows with rows_multi */
    kg_tensor r = fake(IN_AT, KG_BF16, 2, (int64_t[]){3050403, 11});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &r, (int[]){1}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS);
    t.rows_multi = 16;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &r, (int[]){1}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.group, 1);
    cr_assert_eq(p.args.cw, 4);
    kg_tensor r2 = fake(IN_AT, KG_BF16, 2, (int64_t[]){3050403, 17});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &r2, (int[]){1}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS, "rows longer than rows_multi");
    /* the headline shapes keep their plans: packed rows stay packed, long
       and wide columns stay columns */
    t.flat = kg_red_tuning_default.flat;
    t.nest_multi_lanes = 256;
    t.nest_g1_items = 1024;
    t.cols_min_cols = 256;
    t.rows_multi = 64;
    const struct {
        kg_dtype dt;
        int64_t r, c;
        int axis;
        kg_red_class cls;
    } keep[] = {{KG_F32, 4194304, 64, 1, KG_RED_PACKED},
                {KG_BF16, 4194304, 64, 1, KG_RED_PACKED},
                {KG_F32, 64, 4194304, 0, KG_RED_COLS},
                {KG_BF16, 16384, 16384, 0, KG_RED_COLS},
                {KG_I32, 16384, 16384, 0, KG_RED_COLS}};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        kg_tensor k = fake(IN_AT, keep[i].dt, 2, (int64_t[]){keep[i].r, keep[i].c});
        for (int op = 0; op < 2; op++) {
            kg_red_plan q, d;
            const kg_reduce_op o = op ? KG_RED_ARGMAX : KG_RED_SUM;
            cr_assert_eq(plan_tuned(o, &k, &keep[i].axis, 1, 0, &t, &q), KG_OK);
            cr_assert_eq(plan_s24(o, &k, &keep[i].axis, 1, 0, &d), KG_OK);
            cr_assert_eq(q.cls, keep[i].cls, "case %zu", i);
            cr_assert_eq(q.cls, d.cls, "case %zu", i);
            cr_assert_eq(q.grid, d.grid, "case %zu", i);
        }
    }
}

/* cols_occ / nest_occ / narrow_occ: value reductions' COLS and NEST plans
   whose walk fits 32-bit arithmetic take the kernels at more blocks per
   multiprocessor (COLS only where the grid holds more than cols_occ_blocks
   blocks per multiprocessor; narrow walks only with narrow_occ); index
   reductions and walks past 2^30 elements keep the others. */
Test(plan, walks_at_more_blocks_per_multiprocessor_where_they_apply)
{
    /* the older classes' rules: RUNT and SEGW (defaults since session 25) off (plan_s24) */
    kg_red_tuning t = kg_red_tuning_default;
    t.run_tiles = t.seg_rows = 0; /* the chain of before session 25 */
    t.cols_occ = 4;
    t.nest_occ = 4;
    kg_red_plan p;
    const kg_tensor cols = fake(IN_AT, KG_F32, 2, (int64_t[]){64, 4194304});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &cols, (int[]){0}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.occ, 4);
    cr_assert_eq(plan_s24(KG_RED_SUM, &cols, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.occ, 4, "the default");
    /* a grid of at most 2 blocks per multiprocessor: the 2-block kernel
       ([500,2048,133] axes (0,1) with the column splits of before: 256
       blocks on 132 multiprocessors; the default's split fill makes 528) */
    const kg_tensor few = fake(IN_AT, KG_F32, 3, (int64_t[]){500, 2048, 133});
    t.cols_split_fill = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &few, (int[]){0, 1}, 2, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_leq(p.grid, 2 * 132);
    cr_assert_eq(p.occ, 0, "grid %u", p.grid);
    t.cols_split_fill = kg_red_tuning_default.cols_split_fill;
    cr_assert_eq(plan_s24(KG_RED_SUM, &few, (int[]){0, 1}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.grid, 4 * 132);
    cr_assert_eq(p.occ, 4, "the default");
    t.cols_split_fill = 0;
    t.cols_occ_blocks = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &few, (int[]){0, 1}, 2, 0, &t, &p), KG_OK);
    cr_assert_eq(p.occ, 4);
    t.cols_occ_blocks = kg_red_tuning_default.cols_occ_blocks;
    t.cols_split_fill = kg_red_tuning_default.cols_split_fill;
    /* 4 strided columns per lane: f32 yes, i32 (8-byte accumulators) only
       with cols_occ_wide ([24,255,10966] axis 0: 2796330 columns) */
    const int64_t sh3[] = {24, 255, 10966};
    const kg_tensor sf = fake(IN_AT, KG_F32, 3, sh3), si = fake(IN_AT, KG_I32, 3, sh3);
    cr_assert_eq(plan_s24(KG_RED_SUM, &sf, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.vec, KG_RED_CV_STRIDED);
    cr_assert_eq(p.occ, 4);
    cr_assert_eq(plan_s24(KG_RED_SUM, &si, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.args.vec, KG_RED_CV_STRIDED);
    cr_assert_eq(p.occ, 0, "i32: 8-byte accumulators");
    t.cols_occ_wide = 1;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &si, (int[]){0}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.occ, 4);
    t.cols_occ_wide = 0;
    /* narrow walks: with narrow_occ ([9,4095,128,2,2,2] bf16 axes (0,1,4):
       narrow columns of 2-byte elements, without cols_runs_kept, which
       takes that shape by default), but not NEST lanes of several outputs
       ([3728271,9] f32 axis 1: rows of 9, 4 to a lane) */
    const kg_tensor narrow = fake(IN_AT, KG_BF16, 6, (int64_t[]){9, 4095, 128, 2, 2, 2});
    kg_red_tuning nt = kg_red_tuning_default;
    nt.run_tiles = nt.seg_rows = 0; /* the chain of before session 25 */
    nt.cols_runs_kept = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &narrow, (int[]){0, 1, 4}, 3, 0, &nt, &p), KG_OK);
    cr_assert_eq(p.args.deep, 1);
    cr_assert_eq(p.occ, 4, "the default");
    nt.narrow_occ = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &narrow, (int[]){0, 1, 4}, 3, 0, &nt, &p), KG_OK);
    cr_assert_eq(p.args.deep, 1);
    cr_assert_eq(p.occ, 0);
    const kg_tensor multi = fake(IN_AT, KG_F32, 2, (int64_t[]){3728271, 9});
    cr_assert_eq(plan_s24(KG_RED_SUM, &multi, (int[]){1}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.args.group, 1);
    cr_assert_eq(p.args.cw, 4);
    cr_assert_eq(p.args.deep, 1);
    cr_assert_eq(p.occ, 0, "lanes of 4 outputs keep the 3-block narrow kernel");
    cr_assert_eq(plan_tuned(KG_RED_ARGMAX, &cols, (int[]){0}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.occ, 0, "index reductions keep the 2-block kernel");
    t.cols_occ = 3;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &cols, (int[]){0}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.occ, 3);
    t.cols_occ = 5;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &cols, (int[]){0}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.occ, 0, "no kernel at 5 blocks");
    t.cols_occ = 4;
    /* rows 2^31 elements apart: the walk does not fit 32 bits */
    const kg_tensor far = fake(IN_AT, KG_F32, 2, (int64_t[]){3, (int64_t)1 << 31});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &far, (int[]){0}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.occ, 0, "a walk past 2^30 elements");
    /* a nest: [64,256,32,256] axes (1,3) */
    const kg_tensor nest = fake(IN_AT, KG_F32, 4, (int64_t[]){64, 256, 32, 256});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &nest, (int[]){1, 3}, 2, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(p.occ, 4);
    cr_assert_eq(plan_tuned(KG_RED_MIN, &nest, (int[]){1, 3}, 2, 0, &t, &p), KG_OK);
    cr_assert_eq(p.occ, 4);
    cr_assert_eq(plan_tuned(KG_RED_ARGMIN, &nest, (int[]){1, 3}, 2, 0, &t, &p), KG_OK);
    cr_assert_eq(p.occ, 0);
    cr_assert_eq(kg_red_tuning_parse("cols_occ=3,nest_occ=4", &t), 0);
    cr_assert_eq(t.cols_occ, 3);
    cr_assert_eq(t.nest_occ, 4);
}

/* Column splits (H200 run of 2026-12-02 13:11, bench_reduce's 240-case sweep
   with cols_split_fill and cols_split_few as alternatives): units that fill
   one wave of the kernel's resident blocks, and few tiles over a long
   reduction in 16-lane tiles with more splits. */
Test(plan, column_splits_fill_a_wave_of_resident_blocks)
{
    kg_red_plan p;
    char why[256];
    kg_red_class cls;
    /* one tile of 133 columns over 1024000 rows: 16-lane tiles (3), 176
       splits each, 528 units = 132 x 4 blocks of the 4-block kernel (was
       64-lane tiles, 256 splits in the 2-block kernel) */
    const kg_tensor few = fake(IN_AT, KG_F32, 3, (int64_t[]){500, 2048, 133});
    cr_assert_eq(plan_of(KG_RED_SUM, &few, (int[]){0, 1}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.cw, 16);
    cr_assert_eq(p.args.tiles, 3);
    cr_assert_eq(p.args.splits, 176);
    cr_assert_eq(p.args.units, 528);
    cr_assert_eq(p.occ, 4);
    cr_assert(check_plan(KG_RED_SUM, &few, 0x3, NULL, why, sizeof why, &cls), "%s", why);
    /* index reductions: the 2-block kernel, half the units */
    cr_assert_eq(plan_of(KG_RED_ARGMAX, &few, (int[]){0, 1}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.occ, 0);
    cr_assert_leq(p.args.units, 264);
    cr_assert_geq(p.args.units, 200, "units %lld", (long long)p.args.units);
    cr_assert(check_plan(KG_RED_ARGMAX, &few, 0x3, NULL, why, sizeof why, &cls), "%s", why);
    /* 128 tiles of [256,65536] bf16 axis 0: 4 splits (528 / 128), the tile
       width of before (rows too few for 16 lanes down) */
    const kg_tensor c2 = fake(IN_AT, KG_BF16, 2, (int64_t[]){256, 65536});
    cr_assert_eq(plan_of(KG_RED_SUM, &c2, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.args.cw, 64);
    cr_assert_eq(p.args.splits, 4);
    /* 525 tiles of [500,134218] axis 0: one wave without a split (was 2) */
    const kg_tensor w1 = fake(IN_AT, KG_F32, 2, (int64_t[]){500, 134218});
    cr_assert_eq(plan_of(KG_RED_SUM, &w1, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.args.cw, 64);
    cr_assert_eq(p.args.splits, 1);
    /* off: the plans of before */
    kg_red_tuning t = kg_red_tuning_default;
    t.cols_split_fill = 0;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &few, (int[]){0, 1}, 2, 0, &t, &p), KG_OK);
    cr_assert_eq(p.args.cw, 64);
    cr_assert_eq(p.args.splits, 256);
    cr_assert_eq(p.occ, 0);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &w1, (int[]){0}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.args.splits, 2);
    cr_assert_eq(kg_red_tuning_parse("cols_split_fill=2,cols_split_few=8", &t), 0);
    cr_assert_eq(t.cols_split_fill, 2);
    cr_assert_eq(t.cols_split_few, 8);
}

/* SLAB and TRANS sum an output's elements in one chain: neither plans more
   than KG_RED_CHAIN_MAX of them, even under the force hooks that lift their
   other bounds (session 42: the forced SLAB plan of norm f32 (7,255,6,2,23,2)
   axes (1,3,4), 11,730 elements in one chain, missed TESTING.md's 16 eps by
   its data); at the bound they still plan. */
Test(plan, slab_and_trans_chains_stay_within_the_accuracy_bound)
{
    kg_red_plan p;
    kg_red_tuning slab = kg_red_force_slab(), trans = kg_red_force_trans();
    /* session 42's case: 255 x 2 x 23 = 11,730 elements an output */
    kg_tensor a = fake(IN_AT, KG_F32, 6, (int64_t[]){7, 255, 6, 2, 23, 2});
    /* 255 x 2 x 2 = 1020: SLAB */
    kg_tensor b = fake(IN_AT, KG_F32, 6, (int64_t[]){7, 255, 6, 2, 2, 2});
    for (int op = 0; op < 2; op++) {
        const kg_reduce_op o = op ? KG_RED_NORM : KG_RED_SUM;
        cr_assert_eq(plan_tuned(o, &a, (int[]){1, 3, 4}, 3, 0, &slab, &p), KG_OK);
        cr_assert_neq(p.cls, KG_RED_SLAB);
        cr_assert_eq(plan_tuned(o, &b, (int[]){1, 3, 4}, 3, 0, &slab, &p), KG_OK);
        cr_assert_eq(p.cls, KG_RED_SLAB);
        cr_assert_eq(p.args.red, 1020);
    }
    /* slabs of 8 rows: 8 x 128 walk positions at the bound (SLAB), x 129 past it */
    kg_tensor c = fake(IN_AT, KG_F32, 4, (int64_t[]){128, 512, 8, 40});
    cr_assert_eq(plan_tuned(KG_RED_SUM, &c, (int[]){0, 2}, 2, 0, &slab, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_SLAB);
    cr_assert_eq(p.args.red, KG_RED_CHAIN_MAX);
    c.shape[0] = 129;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &c, (int[]){0, 2}, 2, 0, &slab, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_SLAB);
    /* TRANS: #77's layout (bf16 [33,1695,5,96,5] in memory order (4,2,3,1,0), axis 4: outputs scattered in the
       input's order) within the bound; the plan checker asserts the bound on every TRANS plan of the sweeps */
    kg_tensor s = permuted(KG_BF16, 5, (int64_t[]){33, 1695, 5, 96, 5}, (int[]){4, 2, 3, 1, 0}, 0, IN_AT);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &s, (int[]){4}, 1, 0, &trans, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_TRANS);
}

/* SLAB and TRANS by default where they measured faster than the plans they
   replace (H200 s14r1, same process): SLAB over 2-byte elements in slabs of
   at most slab_max_rows (8) rows (sweep #127, #190, #11; 4-byte elements and
   #174's 32 rows lost), TRANS over outputs scattered in the input's order
   that reduce at most trans_max_red (16) elements each (#77, #144; #48's 96
   and #100's 104 lost). */
Test(plan, slabs_of_2_byte_columns_and_short_scattered_reductions_by_default)
{
    kg_red_plan p;
    /* #127 [89,3,255,63,8]p (4) bf16: slabs of 8 rows x 63 columns */
    const int64_t s127[] = {89, 3, 255, 63, 8};
    const int p127[] = {2, 0, 1, 4, 3};
    kg_tensor a = permuted(KG_BF16, 5, s127, p127, 0, IN_AT);
    cr_assert_eq(plan_of(KG_RED_SUM, &a, (int[]){4}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_SLAB);
    cr_assert_eq(p.args.run, 8);
    cr_assert_eq(p.args.cw, 63);
    /* the same over f32 and i32, and index reductions: not SLAB */
    a = permuted(KG_F32, 5, s127, p127, 0, IN_AT);
    cr_assert_eq(plan_of(KG_RED_SUM, &a, (int[]){4}, 1, 0, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_SLAB);
    a = permuted(KG_I32, 5, s127, p127, 0, IN_AT);
    cr_assert_eq(plan_of(KG_RED_SUM, &a, (int[]){4}, 1, 0, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_SLAB);
    a = permuted(KG_BF16, 5, s127, p127, 0, IN_AT);
    cr_assert_eq(plan_of(KG_RED_ARGMAX, &a, (int[]){4}, 1, 0, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_SLAB);
    /* #190 [9,15,1023,2,61] (3) bf16: slabs of 2 x 61 */
    kg_tensor b = fake(IN_AT, KG_BF16, 5, (int64_t[]){9, 15, 1023, 2, 61});
    cr_assert_eq(plan_of(KG_RED_SUM, &b, (int[]){3}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_SLAB);
    cr_assert_eq(p.args.run, 2);
    /* #11 [2048,8,128,2,2,2]p (1,4) bf16: 256 columns over two kept dims, 8 rows */
    kg_tensor c = permuted(KG_BF16, 6, (int64_t[]){2048, 8, 128, 2, 2, 2}, (int[]){3, 4, 0, 1, 5, 2}, 0, IN_AT);
    cr_assert_eq(plan_of(KG_RED_SUM, &c, (int[]){1, 4}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_SLAB);
    cr_assert_eq(p.args.cw, 256);
    /* #174 [511,11,24,32,2,2]p (3) bf16: slabs of 32 rows, not SLAB */
    kg_tensor d = permuted(KG_BF16, 6, (int64_t[]){511, 11, 24, 32, 2, 2}, (int[]){5, 0, 1, 3, 4, 2}, 0, IN_AT);
    cr_assert_eq(plan_of(KG_RED_SUM, &d, (int[]){3}, 1, 0, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_SLAB);
    /* #77 [33,1695,5,96,5]p (4) bf16 and #144 [5,63,512,105]p (0) i32: 5
       elements an output, TRANS */
    kg_tensor e = permuted(KG_BF16, 5, (int64_t[]){33, 1695, 5, 96, 5}, (int[]){4, 2, 3, 1, 0}, 0, IN_AT);
    cr_assert_eq(plan_of(KG_RED_SUM, &e, (int[]){4}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_TRANS);
    cr_assert_eq(p.args.red, 5);
    cr_assert_eq(p.args.vec, 1, "#77: in 16-byte vectors (trans_vec 128, default since s35r2)");
    kg_tensor f = permuted(KG_I32, 4, (int64_t[]){5, 63, 512, 105}, (int[]){2, 3, 0, 1}, 0, IN_AT);
    cr_assert_eq(plan_of(KG_RED_SUM, &f, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_TRANS);
    cr_assert_eq(p.args.vec, 0, "#144 i32: TRANS's own kernel (TRANSV is bf16 only)");
    /* #48 [96,500,9,2,78]p (0) i32: 96 elements an output, not TRANS */
    kg_tensor g = permuted(KG_I32, 5, (int64_t[]){96, 500, 9, 2, 78}, (int[]){4, 0, 2, 1, 3}, 0, IN_AT);
    cr_assert_eq(plan_of(KG_RED_SUM, &g, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_TRANS);
}

/* trans_vec (default 128 since session 35's H100 round s35r2: the 9 rows
   it changed geomean x1.367, min x1.170, sweep #77 x1.537; 0: TRANS's own
   kernel back): TRANS plans of 2-byte elements whose input-contiguous side
   holds at least trans_vec outputs, over at most KG_RED_TRANSV_POS walk
   positions, read that side in 16-byte vectors (args.vec 1, kernel
   TRANSV): sweep #77 bf16 [33,1695,5,96,5]p axis 4 (ki 33 x 1695 = 55935
   chained, ko 96 x 5 = 480, 5 positions) takes 226 ki tiles of 248 x 15 ko
   tiles of 32, by default; under trans_vec 0 TRANS's plan as before; the
   same shape in f16 / f32 / i32, index reductions, a side under trans_vec
   and a walk past 16 positions keep TRANS (or their class). */
Test(plan, scattered_2_byte_outputs_in_vectors_only_under_trans_vec)
{
    const int64_t s77[] = {33, 1695, 5, 96, 5};
    const int p77[] = {4, 2, 3, 1, 0};
    kg_red_tuning t = kg_red_tuning_default, t0 = kg_red_tuning_default;
    cr_assert_eq(t.trans_vec, 128, "on by default since s35r2");
    cr_assert_eq(kg_red_tuning_parse("trans_vec=0", &t0), 0, "TRANS's own kernel: a tuning away");
    cr_assert_eq(t0.trans_vec, 0);
    kg_red_plan d, p;
    char why[256];
    kg_red_class cls;
    kg_tensor e = permuted(KG_BF16, 5, s77, p77, 0, IN_AT);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &e, (int[]){4}, 1, 0, &t0, &d), KG_OK);
    cr_assert_eq(d.cls, KG_RED_TRANS);
    cr_assert_eq(d.args.vec, 0, "trans_vec 0: TRANS's 32 x 32 tiles");
    cr_assert_eq(d.args.tiles, 1748);
    cr_assert_eq(d.grid, 16 * 132);
    cr_assert_eq(plan_of(KG_RED_SUM, &e, (int[]){4}, 1, 0, &p), KG_OK);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &e, (int[]){4}, 1, 0, &t, &d), KG_OK);
    cr_assert(memcmp(&p, &d, sizeof p) == 0, "the default plan is trans_vec 128's");
    cr_assert_eq(p.cls, KG_RED_TRANS);
    cr_assert_eq(p.args.vec, 1);
    cr_assert_eq(p.args.inner, 55935);
    cr_assert_eq(p.args.tile_rows, 480);
    cr_assert_eq(p.args.inner_idx, 55935);
    cr_assert_eq(p.args.inner_out, 1);
    cr_assert_eq(p.args.red, 5);
    cr_assert_eq(p.args.tiles, 226);
    cr_assert_eq(p.args.units, 226 * 15);
    cr_assert_eq(p.args.chunk, 0);
    cr_assert_eq(p.args.run, (int64_t)33 * 1695 * 5 * 96 * 5 - 1, "the input's highest element");
    cr_assert_eq(p.grid, 16 * 132, "16 blocks a multiprocessor at most, as TRANS");
    cr_assert(check_plan(KG_RED_SUM, &e, 0x10, &t, why, sizeof why, &cls), "%s", why);
    /* mean over a misaligned input: the same plan */
    kg_tensor h = permuted(KG_BF16, 5, s77, p77, 0, IN_AT + 2);
    cr_assert_eq(plan_tuned(KG_RED_MEAN, &h, (int[]){4}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.args.vec, 1);
    cr_assert(check_plan(KG_RED_MEAN, &h, 0x10, &t, why, sizeof why, &cls), "%s", why);
    /* f16: in vectors by default too (trans_vec_f16 128 since s35r4; see
       the test below); 4-byte elements, index reductions: not in vectors */
    h = permuted(KG_F16, 5, s77, p77, 0, IN_AT);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &h, (int[]){4}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_TRANS);
    cr_assert_eq(p.args.vec, 1, "f16: trans_vec_f16 128 by default since s35r4");
    kg_tensor f = permuted(KG_F32, 5, s77, p77, 0, IN_AT);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &f, (int[]){4}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_TRANS);
    cr_assert_eq(p.args.vec, 0);
    cr_assert_eq(plan_tuned(KG_RED_ARGMAX, &e, (int[]){4}, 1, 0, &t, &p), KG_OK);
    cr_assert_neq(p.args.vec == 1 && p.cls == KG_RED_TRANS, 1);
    /* the side under trans_vec: TRANS as before */
    t.trans_vec = 55936;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &e, (int[]){4}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.args.vec, 0);
    cr_assert_eq(p.args.tiles, 1748);
    /* #3208 [7,24,98,511,16]p axis 0 bf16 (ki 98 x 511 chained, ko 16, 7
       positions) takes it; #2604 [63,40971,13]p axis 2 (ki 63) does not at 128 */
    t.trans_vec = 128;
    kg_tensor g = permuted(KG_BF16, 5, (int64_t[]){7, 24, 98, 511, 16}, (int[]){1, 0, 4, 3, 2}, 0, IN_AT);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &g, (int[]){0}, 1, 0, &t0, &d), KG_OK);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &g, (int[]){0}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(d.cls, KG_RED_TRANS);
    cr_assert_eq(d.args.vec, 0);
    cr_assert_eq(p.cls, KG_RED_TRANS);
    cr_assert_eq(p.args.vec, 1);
    cr_assert_eq(p.args.inner, 98 * 511);
    cr_assert_eq(p.args.tile_rows, 16);
    cr_assert(check_plan(KG_RED_SUM, &g, 0x1, &t, why, sizeof why, &cls), "%s", why);
    cr_assert_eq(plan_of(KG_RED_SUM, &g, (int[]){0}, 1, 0, &d), KG_OK);
    cr_assert_eq(d.args.vec, 1, "#3208: in vectors by default");
    kg_tensor k = permuted(KG_BF16, 3, (int64_t[]){63, 40971, 13}, (int[]){2, 1, 0}, 0, IN_AT);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &k, (int[]){2}, 1, 0, &t, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_TRANS);
    cr_assert_eq(p.args.vec, 0);
    cr_assert_eq(plan_of(KG_RED_SUM, &k, (int[]){2}, 1, 0, &d), KG_OK);
    cr_assert_eq(d.cls, KG_RED_TRANS);
    cr_assert_eq(d.args.vec, 0, "#2604 (ki 63): TRANS by default (tv1 lost x0.29 on it in s35r2)");
    /* more than KG_RED_TRANSV_POS walk positions (forced TRANS): not in vectors */
    kg_red_tuning tv = kg_red_force_transv();
    /* (column-major (20,15,40,R) axis 3: ki 20 x 15 chained, ko 40) */
    kg_tensor m = permuted(KG_BF16, 4, (int64_t[]){20, 15, 40, 17}, (int[]){3, 2, 1, 0}, 0, IN_AT);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &m, (int[]){3}, 1, 0, &tv, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_TRANS);
    cr_assert_eq(p.args.vec, 0);
    m.shape[3] = 16;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &m, (int[]){3}, 1, 0, &tv, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_TRANS);
    cr_assert_eq(p.args.vec, 1);
    cr_assert_eq(p.args.inner, 300);
    cr_assert_eq(p.args.tiles, 2);
    cr_assert(check_plan(KG_RED_SUM, &m, 0x8, &tv, why, sizeof why, &cls), "%s", why);
    /* s35r1 (misaligned address on the GPU): the bench's class cases
       (KG_RED_TRANS_CASES t0-t6, column-major [a, b, ko, R] axis 3) and #77
       at tv128, their loads replayed on the host at every 2-byte offset of
       the input from 16 bytes (transv_replay_alignment; check_plan runs it
       on every TRANSV plan it checks): walk
       strides of 0 (t0, t1, t3, #77), 4 (t2, t4, t5: 8-byte loads) and 2
       (t6: 4-byte loads) elements off 8 */
    const int64_t tc[7][4] = {{63, 1041, 512, 4}, {31, 2165, 1000, 2}, {17, 1973, 500, 8}, {9, 1821, 512, 16},
                              {100, 2015, 333, 2}, {255, 500, 105, 10}, {131, 204918, 5, 1}};
    for (int i = 0; i < 7; i++) {
        const int nd = i == 6 ? 3 : 4;
        kg_tensor x = permuted(KG_BF16, nd, tc[i], nd == 4 ? (int[]){3, 2, 1, 0} : (int[]){2, 1, 0}, 0, IN_AT);
        const int ax = nd - 1;
        const int64_t walk_stride = tc[i][0] * tc[i][1] * (nd == 4 ? tc[i][2] : 1);
        memset(transv_widths, 0, sizeof transv_widths);
        cr_assert_eq(plan_tuned(KG_RED_SUM, &x, &ax, 1, 0, &t, &p), KG_OK);
        cr_assert_eq(p.cls, KG_RED_TRANS, "t%d", i);
        cr_assert_eq(p.args.vec, 1, "t%d", i);
        pcheck c = {.in = &x};
        transv_replay_alignment(&c, &p.args);
        cr_assert_eq(c.bad, 0, "t%d: %s", i, c.why);
        const int wide = walk_stride % 8 == 0 ? 16 : walk_stride % 4 == 0 ? 8 : walk_stride % 2 == 0 ? 4 : 2;
        cr_assert_gt(transv_widths[wide], 0, "t%d: walk stride %lld, loads of %d bytes", i, (long long)walk_stride,
                     wide);
        if (wide == 8)
            cr_assert_eq(transv_widths[4], 0, "t%d: positions 0 or 8 bytes off 16", i);
    }
    memset(transv_widths, 0, sizeof transv_widths);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &e, (int[]){4}, 1, 0, &t, &p), KG_OK);
    pcheck c = {.in = &e};
    transv_replay_alignment(&c, &p.args);
    cr_assert_eq(c.bad, 0, "#77: %s", c.why);
    cr_assert_gt(transv_widths[16], 0);
    cr_assert_eq(transv_widths[8] + transv_widths[4], 0, "#77: walk stride 26,848,800, a multiple of 8");
    /* the GPU test's default-path cases (test_reduce, transv_default_path):
       column-major [a, b, ko, R] axis 3, in vectors by default (the plan
       kg_reduce launches), walk strides 0, 4 and 6 elements off 8 and an
       odd one (16-, 8-, 4-byte loads; element by element) */
    const int64_t dc[4][4] = {{33, 31, 544, 5}, {33, 31, 548, 5}, {9, 115, 530, 16}, {33, 31, 547, 3}};
    for (int i = 0; i < 4; i++) {
        kg_tensor x = permuted(KG_BF16, 4, dc[i], (int[]){3, 2, 1, 0}, 0, IN_AT);
        const int64_t walk_stride = dc[i][0] * dc[i][1] * dc[i][2];
        memset(transv_widths, 0, sizeof transv_widths);
        cr_assert_eq(plan_of(KG_RED_SUM, &x, (int[]){3}, 1, 0, &p), KG_OK);
        cr_assert_eq(p.cls, KG_RED_TRANS, "case %d", i);
        cr_assert_eq(p.args.vec, 1, "case %d: in vectors by default", i);
        cr_assert_eq(p.args.tiles, 5, "case %d", i);
        cr_assert(check_plan(KG_RED_SUM, &x, 0x8, NULL, why, sizeof why, &cls), "case %d: %s", i, why);
        cr_assert_eq(plan_tuned(KG_RED_SUM, &x, (int[]){3}, 1, 0, &t0, &d), KG_OK);
        cr_assert_eq(d.cls, KG_RED_TRANS, "case %d", i);
        cr_assert_eq(d.args.vec, 0, "case %d: trans_vec 0: TRANS's own kernel", i);
        pcheck pc = {.in = &x};
        transv_replay_alignment(&pc, &p.args);
        cr_assert_eq(pc.bad, 0, "case %d: %s", i, pc.why);
        const int wide = walk_stride % 8 == 0 ? 16 : walk_stride % 4 == 0 ? 8 : walk_stride % 2 == 0 ? 4 : 2;
        cr_assert_gt(transv_widths[wide], 0, "case %d: walk stride %lld, loads of %d bytes", i, (long long)walk_stride,
                     wide);
    }
}

/* trans_vec_f16 (session 35; default 128 since its H100 round s35r4, 0
   the way back to TRANS's own kernel): f16 TRANS plans read their
   input-contiguous side in 16-byte vectors (module red_f16_transv, the
   kernel bf16 takes) under it alone: #77's shape in f16 takes bf16's
   default plan's geometry by default and TRANS's own kernel under
   trans_vec_f16 0; bf16 plans are the same under either, f16's under
   trans_vec 0; the bench's class cases t0-t6 in f16 (KG_RED_TRANS_CASES
   =f16) plan TRANSV, t7 (ki 100) keeps TRANS; the GPU test's default-path
   cases in f16 take TRANSV by default. The transv modules hold value ops
   only (gen/reduce.lua's `values`): no index reduction of any dtype has a
   TRANSV kernel, and none is planned TRANS, forced or not. */
Test(plan, f16_scattered_outputs_in_vectors_only_under_trans_vec_f16)
{
    const int64_t s77[] = {33, 1695, 5, 96, 5};
    const int p77[] = {4, 2, 3, 1, 0};
    kg_red_tuning cand = kg_red_tuning_default, both0 = kg_red_tuning_default, off = kg_red_tuning_default;
    cr_assert_eq(kg_red_tuning_default.trans_vec_f16, 128, "on by default since s35r4");
    cr_assert_eq(kg_red_tuning_parse("trans_vec_f16=128", &cand), 0);
    cr_assert_eq(cand.trans_vec_f16, 128);
    cr_assert_eq(cand.trans_vec, 128, "the bf16 default unchanged");
    cr_assert_eq(kg_red_tuning_parse("trans_vec_f16=0", &off), 0, "TRANS's own kernel: a tuning away");
    cr_assert_eq(off.trans_vec_f16, 0);
    cr_assert_eq(off.trans_vec, 128);
    cr_assert_eq(kg_red_tuning_parse("trans_vec=0,trans_vec_f16=128", &both0), 0);
    kg_red_plan d, p, b;
    char why[256];
    kg_red_class cls;
    kg_tensor h = permuted(KG_F16, 5, s77, p77, 0, IN_AT), e = permuted(KG_BF16, 5, s77, p77, 0, IN_AT);
    /* trans_vec_f16 0: TRANS's own kernel (the default before s35r4) */
    cr_assert_eq(plan_tuned(KG_RED_SUM, &h, (int[]){4}, 1, 0, &off, &d), KG_OK);
    cr_assert_eq(d.cls, KG_RED_TRANS);
    cr_assert_eq(d.args.vec, 0);
    cr_assert_eq(d.args.tiles, 1748);
    /* the default (trans_vec_f16 128): bf16's default geometry (226 ki tiles of 248, 15 ko tiles) */
    cr_assert_eq(plan_tuned(KG_RED_SUM, &h, (int[]){4}, 1, 0, &cand, &p), KG_OK);
    cr_assert_eq(plan_of(KG_RED_SUM, &h, (int[]){4}, 1, 0, &d), KG_OK);
    cr_assert(memcmp(&p, &d, sizeof p) == 0, "f16: the default plan is trans_vec_f16 128's");
    cr_assert_eq(plan_of(KG_RED_SUM, &e, (int[]){4}, 1, 0, &b), KG_OK);
    cr_assert_eq(p.cls, KG_RED_TRANS);
    cr_assert_eq(p.args.vec, 1);
    cr_assert_eq(p.args.tiles, 226);
    cr_assert_eq(p.args.units, 226 * 15);
    cr_assert_eq(p.grid, 16 * 132);
    cr_assert_eq(p.args.run, (int64_t)33 * 1695 * 5 * 96 * 5 - 1);
    cr_assert(memcmp(&p.args, &b.args, sizeof p.args) == 0, "f16 by default: bf16's default plan");
    cr_assert(check_plan(KG_RED_SUM, &h, 0x10, &cand, why, sizeof why, &cls), "%s", why);
    cr_assert(check_plan(KG_RED_MEAN, &h, 0x10, &cand, why, sizeof why, &cls), "%s", why);
    /* trans_vec_f16 alone decides f16 (trans_vec 0 beside it) */
    cr_assert_eq(plan_tuned(KG_RED_SUM, &h, (int[]){4}, 1, 0, &both0, &d), KG_OK);
    cr_assert(memcmp(&p, &d, sizeof p) == 0, "f16: trans_vec_f16's plan whatever trans_vec");
    /* bf16, f32, i32 plans: the same under trans_vec_f16 0 as by default */
    const kg_dtype others[] = {KG_BF16, KG_F32, KG_I32};
    for (int k = 0; k < 3; k++) {
        kg_tensor x = permuted(others[k], 5, s77, p77, 0, IN_AT);
        cr_assert_eq(plan_of(KG_RED_SUM, &x, (int[]){4}, 1, 0, &d), KG_OK);
        cr_assert_eq(plan_tuned(KG_RED_SUM, &x, (int[]){4}, 1, 0, &off, &p), KG_OK);
        cr_assert(memcmp(&p, &d, sizeof p) == 0, "%s: trans_vec_f16 changes only f16", kg_dtype_name(others[k]));
    }
    /* the bench's class cases in f16: t0-t6 TRANSV by default, t7 (ki 100 < 128) TRANS */
    const int64_t tc[8][4] = {{63, 1041, 512, 4},  {31, 2165, 1000, 2}, {17, 1973, 500, 8}, {9, 1821, 512, 16},
                              {100, 2015, 333, 2}, {255, 500, 105, 10}, {131, 204918, 5, 1}, {100, 268435, 5, 1}};
    for (int i = 0; i < 8; i++) {
        const int nd = i >= 6 ? 3 : 4, ax = nd - 1;
        kg_tensor x = permuted(KG_F16, nd, tc[i], nd == 4 ? (int[]){3, 2, 1, 0} : (int[]){2, 1, 0}, 0, IN_AT);
        kg_tensor y = permuted(KG_BF16, nd, tc[i], nd == 4 ? (int[]){3, 2, 1, 0} : (int[]){2, 1, 0}, 0, IN_AT);
        cr_assert_eq(plan_tuned(KG_RED_SUM, &x, &ax, 1, 0, &off, &d), KG_OK);
        cr_assert_eq(d.cls, KG_RED_TRANS, "t%d f16", i);
        cr_assert_eq(d.args.vec, 0, "t%d f16: TRANS's own kernel under trans_vec_f16 0", i);
        cr_assert_eq(plan_of(KG_RED_SUM, &x, &ax, 1, 0, &p), KG_OK);
        cr_assert_eq(plan_of(KG_RED_SUM, &y, &ax, 1, 0, &b), KG_OK);
        cr_assert_eq(p.cls, KG_RED_TRANS, "t%d f16", i);
        cr_assert_eq(p.args.vec, i < 7, "t%d f16 by default", i);
        cr_assert(memcmp(&p.args, &b.args, sizeof p.args) == 0, "t%d: f16's default plan is bf16's", i);
        cr_assert(check_plan(KG_RED_SUM, &x, 1u << ax, NULL, why, sizeof why, &cls), "t%d: %s", i, why);
    }
    /* the GPU test's default-path cases (transv_default_path) in f16 */
    const int64_t dc[4][4] = {{33, 31, 544, 5}, {33, 31, 548, 5}, {9, 115, 530, 16}, {33, 31, 547, 3}};
    for (int i = 0; i < 4; i++) {
        kg_tensor x = permuted(KG_F16, 4, dc[i], (int[]){3, 2, 1, 0}, 0, IN_AT);
        cr_assert_eq(plan_tuned(KG_RED_SUM, &x, (int[]){3}, 1, 0, &off, &d), KG_OK);
        cr_assert_eq(d.cls, KG_RED_TRANS, "case %d", i);
        cr_assert_eq(d.args.vec, 0, "case %d: TRANS under trans_vec_f16 0", i);
        for (int op = 0; op < KG_RED_COUNT; op++) {
            if (kg_red_infos[op].indexed || !(kg_red_infos[op].dtype_mask & (1u << KG_F16)))
                continue;
            cr_assert_eq(plan_of((kg_reduce_op)op, &x, (int[]){3}, 1, 0, &p), KG_OK);
            cr_assert_eq(p.cls, KG_RED_TRANS, "case %d %s", i, kg_red_infos[op].name);
            cr_assert_eq(p.args.vec, 1, "case %d %s: in vectors by default", i, kg_red_infos[op].name);
            cr_assert(check_plan((kg_reduce_op)op, &x, 0x8, NULL, why, sizeof why, &cls), "case %d: %s", i, why);
        }
    }
    /* value ops only: the table's TRANSV entries, and no index reduction
       planned TRANS (forced, in vectors, or by default) */
    kg_red_tuning tv = kg_red_force_transv();
    for (int op = 0; op < KG_RED_COUNT; op++)
        for (int dt = 0; dt < KG_DTYPE_COUNT; dt++) {
            if (!(kg_red_infos[op].dtype_mask & (1u << dt)))
                continue;
            const int want = !kg_red_infos[op].indexed && (dt == KG_BF16 || dt == KG_F16);
            cr_assert_eq(kg_red_table[op][dt][KG_RED_TRANSV] >= 0, want, "%s(%s): a TRANSV kernel %s",
                         kg_red_infos[op].name, kg_dtype_name((kg_dtype)dt), want ? "missing" : "where none belongs");
            if (!kg_red_infos[op].indexed)
                continue;
            kg_tensor x = permuted((kg_dtype)dt, 5, s77, p77, 0, IN_AT);
            const kg_red_tuning *ts[] = {NULL, &cand, &tv};
            for (int k = 0; k < 3; k++) {
                cr_assert_eq(ts[k] ? plan_tuned((kg_reduce_op)op, &x, (int[]){4}, 1, 0, ts[k], &p)
                                   : plan_of((kg_reduce_op)op, &x, (int[]){4}, 1, 0, &p),
                             KG_OK);
                cr_assert_neq(p.cls, KG_RED_TRANS, "%s(%s): an index reduction planned TRANS (tuning %d)",
                              kg_red_infos[op].name, kg_dtype_name((kg_dtype)dt), k);
            }
        }
}

Test(plan, tuning_text_sets_named_fields_and_refuses_the_rest)
{
    kg_red_tuning t = kg_red_tuning_default;
    cr_assert_eq(kg_red_tuning_parse("deep_walk=1,cols_runs=1,blocks_per_sm=12", &t), 0);
    cr_assert_eq(t.deep_walk, 1);
    cr_assert_eq(t.cols_runs, 1);
    cr_assert_eq(t.blocks_per_sm, 12);
    cr_assert_eq(t.cols_lanes, kg_red_tuning_default.cols_lanes, "untouched fields keep their value");
    cr_assert_eq(kg_red_tuning_parse("", &t), 0);
    cr_assert_eq(kg_red_tuning_parse("nope=1", &t), -1);
    cr_assert_eq(kg_red_tuning_parse("deep_walk", &t), -1);
    cr_assert_eq(kg_red_tuning_parse("deep_walk=x", &t), -1);
    cr_assert_eq(kg_red_tuning_parse("deep_walk=1;", &t), -1);
    cr_assert_eq(kg_red_tuning_parse("deep=1", &t), -1, "a prefix of a name is not the name");
}

Test(errors, shapes_and_strides_past_2_pow_63_bytes_are_refused_not_crashed)
{
    kg_red_plan p;
    /* the fuzzer's crash: f32 [INT64_MAX] stride 1 (4 * INT64_MAX bytes) */
    kg_tensor in = fake(IN_AT, KG_F32, 1, (int64_t[]){INT64_MAX});
    kg_tensor out = fake(OUT_AT, KG_F32, 0, NULL);
    KT_EXPECT(cpu_ctx, kg_sum(cpu_ctx, &out, &in, NULL, 0, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: in: shape [9223372036854775807] spans more than 2^63 bytes (strides [1], 4-byte f32 "
              "elements)");
    KT_EXPECT(cpu_ctx, kg_reduce_plan(cpu_ctx, KG_RED_SUM, &out, NULL, &in, NULL, 0, 0, 132, &p),
              KG_ERR_INVALID_ARGUMENT,
              "invalid argument: in: shape [9223372036854775807] spans more than 2^63 bytes (strides [1], 4-byte f32 "
              "elements)");
    /* 2^61 f32 elements: 2^63 bytes, one past */
    in = fake(IN_AT, KG_F32, 1, (int64_t[]){(int64_t)1 << 61});
    KT_EXPECT(cpu_ctx, kg_sum(cpu_ctx, &out, &in, NULL, 0, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: in: shape [2305843009213693952] spans more than 2^63 bytes (strides [1], 4-byte f32 "
              "elements)");
    /* strides whose span overflows though the element count does not */
    in = fake(IN_AT, KG_F32, 2, (int64_t[]){4, 8});
    in.strides[0] = INT64_MAX;
    in.strides[1] = INT64_MAX;
    kg_tensor o4 = fake(OUT_AT, KG_F32, 1, (int64_t[]){4});
    KT_EXPECT(cpu_ctx, kg_sum(cpu_ctx, &o4, &in, (int[]){1}, 1, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: in: shape [4,8] spans more than 2^63 bytes (strides "
              "[9223372036854775807,9223372036854775807], 4-byte f32 elements)");
    in.strides[0] = (int64_t)1 << 60;
    in.strides[1] = 1;
    KT_EXPECT(cpu_ctx, kg_sum(cpu_ctx, &o4, &in, (int[]){1}, 1, 0), KG_ERR_INVALID_ARGUMENT, /* 3 * 2^60 * 4 bytes */
              "invalid argument: in: shape [4,8] spans more than 2^63 bytes (strides [1152921504606846976,1], 4-byte "
              "f32 elements)");
    /* an out whose strides overflow: refused before the overlap check */
    kg_tensor in2 = fake(IN_AT, KG_F32, 2, (int64_t[]){4, 8});
    kg_tensor ob = fake(OUT_AT, KG_F32, 2, (int64_t[]){4, 1});
    ob.strides[0] = INT64_MAX;
    KT_EXPECT(cpu_ctx, kg_sum(cpu_ctx, &ob, &in2, (int[]){1}, 1, 1), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: out: shape [4,1] spans more than 2^63 bytes (strides [9223372036854775807,1], 4-byte "
              "f32 elements)");
    /* an address range that wraps past 2^64 */
    kg_tensor w = fake(UINTPTR_MAX - 63, KG_F32, 1, (int64_t[]){64});
    KT_EXPECT(cpu_ctx, kg_sum(cpu_ctx, &out, &w, NULL, 0, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: in: its 256 bytes from data 0xffffffffffffffc0 wrap past the end of the address "
              "space");
}

Test(plan, huge_but_valid_geometry_plans_without_overflow)
{
    kg_red_plan p;
    /* an expanded input of 2^60 elements (stride 0: 4 bytes; the boundary
       check bounds the dense size, 2^62 bytes here, below 2^63): the
       planner's products (elements x bytes, outputs x lanes) saturate, never
       wrap */
    kg_tensor e = fake(IN_AT, KG_F32, 2, (int64_t[]){(int64_t)1 << 31, (int64_t)1 << 29});
    e.strides[0] = e.strides[1] = 0;
    cr_assert_eq(plan_of(KG_RED_SUM, &e, (int[]){0}, 1, 0, &p), KG_OK, "%s", kg_errmsg(cpu_ctx));
    cr_assert_geq(p.grid, 1u);
    cr_assert_eq(plan_of(KG_RED_SUM, &e, NULL, 0, 0, &p), KG_OK, "%s", kg_errmsg(cpu_ctx));
    cr_assert_eq(p.args.red, (int64_t)1 << 60);
    cr_assert_leq(p.partial_bytes, KG_RED_PARTIAL_BYTES);
    cr_assert_lt((p.args.splits - 1) * p.args.chunk, p.args.red);
    cr_assert_eq(plan_of(KG_RED_ARGMAX, &e, (int[]){1}, 1, 0, &p), KG_OK, "%s", kg_errmsg(cpu_ctx));
    /* the largest dense u8 tensor under 2^63 bytes, reduced every way */
    kg_tensor u = fake((uintptr_t)1 << 62, KG_U8, 3, (int64_t[]){(int64_t)1 << 20, (int64_t)1 << 20, (int64_t)1 << 22});
    for (unsigned mask = 1; mask < 8; mask++) {
        int axes[3], n = 0;
        for (int d = 0; d < 3; d++)
            if ((mask >> d) & 1u)
                axes[n++] = d;
        cr_assert_eq(plan_of(KG_RED_SUM, &u, axes, n, 0, &p), KG_OK, "mask %u: %s", mask, kg_errmsg(cpu_ctx));
        cr_assert_leq(p.partial_bytes, KG_RED_PARTIAL_BYTES);
        cr_assert_geq(p.grid, 1u);
        if (p.args.splits > 1)
            cr_assert_lt((p.args.splits - 1) * p.args.chunk, p.args.red);
    }
}

/* ---- CPU: every validation error ------------------------------------------ */

/* `call` returns `code` with exactly the message `text` (TESTING.md, "Errors
   are exact"); `what` names the case in a failure. */
#define EXPECT_ERR(code, what, call, text)                                                                             \
    do {                                                                                                               \
        kg_status st_ = (call);                                                                                        \
        cr_expect_eq(st_, code, "%s: %s -> %s (%s), expected %s", what, #call, kg_status_name(st_),                    \
                     kg_errmsg(cpu_ctx), kg_status_name(code));                                                        \
        cr_expect_str_eq(kg_errmsg(cpu_ctx), text, "%s: %s", what, #call);                                            \
    } while (0)

TestSuite(errors, .init = cpu_setup, .fini = cpu_teardown);

Test(errors, every_argument_error_is_reported_before_the_device)
{
    const int64_t s[] = {3, 4}, r[] = {3};
    kg_tensor in = fake(IN_AT, KG_F32, 2, s), out = fake(OUT_AT, KG_F32, 1, r);
    kg_tensor idx = fake(IDX_AT, KG_I64, 1, r);
    const int ax1[] = {1};
    cr_assert_eq(kg_reduce(NULL, KG_RED_SUM, &out, NULL, &in, ax1, 1, 0), KG_ERR_INVALID_ARGUMENT);
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "op 0", kg_reduce(cpu_ctx, KG_RED_NONE, &out, NULL, &in, ax1, 1, 0),
               "invalid argument: 0 is not a reduction (kg_reduce_op)");
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "op past the end",
               kg_reduce(cpu_ctx, KG_RED_COUNT, &out, NULL, &in, ax1, 1, 0),
               "invalid argument: 9 is not a reduction (kg_reduce_op)");
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "NULL in", kg_sum(cpu_ctx, &out, NULL, ax1, 1, 0),
               "invalid argument: tensor in is NULL");
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "NULL out", kg_sum(cpu_ctx, NULL, &in, ax1, 1, 0),
               "invalid argument: sum: out is NULL");
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "NULL indices", kg_argmax(cpu_ctx, NULL, &in, ax1, 1, 0),
               "invalid argument: argmax: indices is NULL (it returns indices; values are optional)");
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "indices for sum", kg_reduce(cpu_ctx, KG_RED_SUM, &out, &idx, &in, ax1, 1, 0),
               "invalid argument: sum returns no indices (pass NULL; for the indices of the maximum or minimum "
               "use kg_max_with_indices or kg_min_with_indices)");
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "axis 2", kg_sum(cpu_ctx, &out, &in, (int[]){2}, 1, 0),
               "invalid argument: sum: axis 2 is out of range for a 2-dim input (valid: -2..1)");
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "axis -3", kg_sum(cpu_ctx, &out, &in, (int[]){-3}, 1, 0),
               "invalid argument: sum: axis -3 is out of range for a 2-dim input (valid: -2..1)");
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "duplicate", kg_sum(cpu_ctx, &out, &in, (int[]){1, -1}, 2, 0),
               "invalid argument: sum: axis -1 (dim 1) appears twice in axes");
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "n_axes < 0", kg_sum(cpu_ctx, &out, &in, ax1, -1, 0),
               "invalid argument: sum: n_axes is -1 (0..8; 0 = every axis)");
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "n_axes > 8", kg_sum(cpu_ctx, &out, &in, ax1, 9, 0),
               "invalid argument: sum: n_axes is 9 (0..8; 0 = every axis)");
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "axes NULL", kg_sum(cpu_ctx, &out, &in, NULL, 1, 0),
               "invalid argument: sum: axes is NULL but n_axes is 1");
    /* dtypes */
    kg_tensor ii = fake(IN_AT, KG_I32, 2, s), bb = fake(IN_AT, KG_BOOL, 2, s);
    kg_tensor oi32 = fake(OUT_AT, KG_I32, 1, r), oi64 = fake(OUT_AT, KG_I64, 1, r);
    EXPECT_ERR(KG_ERR_DTYPE, "mean of i32", kg_mean(cpu_ctx, &oi32, &ii, ax1, 1, 0),
               "mean is not available for i32 (it accepts f32, f64, f16, bf16)");
    EXPECT_ERR(KG_ERR_DTYPE, "norm of i32", kg_norm(cpu_ctx, &oi32, &ii, ax1, 1, 0),
               "norm is not available for i32 (it accepts f32, f64, f16, bf16)");
    EXPECT_ERR(KG_ERR_DTYPE, "argmax of bool", kg_argmax(cpu_ctx, &idx, &bb, ax1, 1, 0),
               "argmax is not available for bool (it accepts f32, f64, f16, bf16, i32, i64, u8)");
    EXPECT_ERR(KG_ERR_DTYPE, "sum of i32 into i32", kg_sum(cpu_ctx, &oi32, &ii, ax1, 1, 0),
               "sum: out is i32 but the result over i32 is i64");
    EXPECT_ERR(KG_ERR_DTYPE, "max of i32 into i64", kg_max(cpu_ctx, &oi64, &ii, ax1, 1, 0),
               "max: out is i64 but the result over i32 is i32");
    EXPECT_ERR(KG_ERR_DTYPE, "f32 indices", kg_argmax(cpu_ctx, &out, &in, ax1, 1, 0),
               "argmax: indices is f32 but the result over f32 is i64");
    kg_tensor bad = in;
    bad.dtype = (kg_dtype)42;
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "bad dtype", kg_sum(cpu_ctx, &out, &bad, ax1, 1, 0),
               "invalid argument: in has dtype 42, not a kg_dtype");
    /* shapes */
    kg_tensor o4 = fake(OUT_AT, KG_F32, 1, (int64_t[]){4});
    EXPECT_ERR(KG_ERR_SHAPE, "out [4] for [3,4] over dim 1", kg_sum(cpu_ctx, &o4, &in, ax1, 1, 0),
               "shape mismatch: sum: out is [4] but reducing in [3,4] gives [3]");
    EXPECT_ERR(KG_ERR_SHAPE, "keepdim needs [3,1]", kg_sum(cpu_ctx, &out, &in, ax1, 1, 1),
               "shape mismatch: sum: out is [3] but reducing in [3,4] gives [3,1]");
    kg_tensor i4 = fake(IDX_AT, KG_I64, 1, (int64_t[]){4});
    EXPECT_ERR(KG_ERR_SHAPE, "indices shape", kg_max_with_indices(cpu_ctx, &out, &i4, &in, ax1, 1, 0),
               "shape mismatch: max_with_indices: indices is [4] but reducing in [3,4] gives [3]");
    /* empty reduced slices */
    kg_tensor e = fake(IN_AT, KG_F32, 2, (int64_t[]){3, 0});
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "max of nothing", kg_max(cpu_ctx, &out, &e, ax1, 1, 0),
               "invalid argument: max of an empty slice: reducing in [3,0] over dims of total size 0 has no "
               "result (only sum, mean, prod and norm have one)");
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "argmin of nothing", kg_argmin(cpu_ctx, &idx, &e, ax1, 1, 0),
               "invalid argument: argmin of an empty slice: reducing in [3,0] over dims of total size 0 has no "
               "result (only sum, mean, prod and norm have one)");
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "min of nothing", kg_min(cpu_ctx, &out, &e, ax1, 1, 0),
               "invalid argument: min of an empty slice: reducing in [3,0] over dims of total size 0 has no "
               "result (only sum, mean, prod and norm have one)");
    kg_tensor ez = fake(IN_AT, KG_F32, 2, (int64_t[]){0, 0}), o0 = fake(OUT_AT, KG_F32, 1, (int64_t[]){0});
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "max over an empty dim of an empty tensor",
               kg_max(cpu_ctx, &o0, &ez, ax1, 1, 0),
               "invalid argument: max of an empty slice: reducing in [0,0] over dims of total size 0 has no "
               "result (only sum, mean, prod and norm have one)");
    /* overlap and alignment */
    kg_tensor ov = fake(IN_AT + 8, KG_F32, 1, r);
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "out inside in", kg_sum(cpu_ctx, &ov, &in, ax1, 1, 0),
               "invalid argument: out overlaps in (bytes [0x10000000008, 0x10000000014) and [0x10000000000, "
               "0x10000000030)); a reduction's results may not share memory with its input or each other");
    kg_tensor ovi = fake(OUT_AT + 8, KG_I64, 1, r);
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "values overlap indices",
               kg_max_with_indices(cpu_ctx, &out, &ovi, &in, ax1, 1, 0),
               "invalid argument: values overlaps indices (bytes [0x20000000000, 0x2000000000c) and "
               "[0x20000000008, 0x20000000020)); a reduction's results may not share memory with its input or "
               "each other");
    kg_tensor st0 = out;
    st0.strides[0] = 0;
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "out overlaps itself", kg_sum(cpu_ctx, &st0, &in, ax1, 1, 0),
               "invalid argument: out overlaps itself (shape [3], strides [0]): an output needs one memory "
               "location per element");
    kg_tensor mis = fake(IN_AT + 2, KG_F32, 2, s);
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "misaligned in", kg_sum(cpu_ctx, &out, &mis, ax1, 1, 0),
               "invalid argument: in's data 0x10000000002 is not aligned to its 4-byte f32 elements");
    kg_tensor miso = fake(OUT_AT + 1, KG_F32, 1, r);
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "misaligned out", kg_sum(cpu_ctx, &miso, &in, ax1, 1, 0),
               "invalid argument: out's data 0x20000000001 is not aligned to its 4-byte f32 elements");
    kg_tensor neg = in;
    neg.strides[1] = -1;
    EXPECT_ERR(KG_ERR_INVALID_ARGUMENT, "negative stride", kg_sum(cpu_ctx, &out, &neg, ax1, 1, 0),
               "invalid argument: in has stride -1 in dim 1 (strides must be >= 0)");
}

/* kg_max_with_indices and kg_min_with_indices (argmax/argmin with values)
   are named as called (before session 27 their messages said "argmax:" and
   "argmin:"); kg_argmax keeps its name. */
Test(errors, with_indices_calls_are_named_as_called)
{
    const int64_t s[] = {3, 4}, r[] = {3};
    kg_tensor in = fake(IN_AT, KG_F32, 2, s), out = fake(OUT_AT, KG_F32, 1, r), idx = fake(IDX_AT, KG_I64, 1, r);
    kg_tensor i4 = fake(IDX_AT, KG_I64, 1, (int64_t[]){4}), o16 = fake(OUT_AT, KG_F16, 1, r);
    const int ax1[] = {1};
    KT_EXPECT(cpu_ctx, kg_max_with_indices(cpu_ctx, &out, &i4, &in, ax1, 1, 0), KG_ERR_SHAPE,
              "shape mismatch: max_with_indices: indices is [4] but reducing in [3,4] gives [3]");
    KT_EXPECT(cpu_ctx, kg_min_with_indices(cpu_ctx, &out, NULL, &in, ax1, 1, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: min_with_indices: indices is NULL (it returns indices; values are optional)");
    KT_EXPECT(cpu_ctx, kg_max_with_indices(cpu_ctx, &o16, &idx, &in, ax1, 1, 0), KG_ERR_DTYPE,
              "max_with_indices: values is f16 but the result over f32 is f32");
    KT_EXPECT(cpu_ctx, kg_min_with_indices(cpu_ctx, &out, &idx, &in, (int[]){2}, 1, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: min_with_indices: axis 2 is out of range for a 2-dim input (valid: -2..1)");
    kg_tensor bb = fake(IN_AT, KG_BOOL, 2, s);
    KT_EXPECT(cpu_ctx, kg_max_with_indices(cpu_ctx, &out, &idx, &bb, ax1, 1, 0), KG_ERR_DTYPE,
              "max_with_indices is not available for bool (it accepts f32, f64, f16, bf16, i32, i64, u8)");
    KT_EXPECT(cpu_ctx, kg_argmax(cpu_ctx, &i4, &in, ax1, 1, 0), KG_ERR_SHAPE,
              "shape mismatch: argmax: indices is [4] but reducing in [3,4] gives [3]");
}

Test(errors, a_valid_call_reaches_the_device_check)
{
    /* on a machine without a GPU, a valid call fails only at the device */
    const int64_t s[] = {3, 4}, r[] = {3};
    kg_tensor in = fake(IN_AT, KG_F32, 2, s), out = fake(OUT_AT, KG_F32, 1, r);
    kg_red_plan p;
    cr_assert_eq(kg_reduce_plan(cpu_ctx, KG_RED_SUM, &out, NULL, &in, (int[]){1}, 1, 0, 132, &p), KG_OK);
    kg_context *c = NULL;
    if (kg_open(&c, 0) != KG_OK) {
        cr_expect_eq(kg_sum(c, &out, &in, (int[]){1}, 1, 0), KG_ERR_NO_DEVICE, "%s", kg_errmsg(c));
        cr_expect_eq(kg_reserve_scratch(c, 0), KG_ERR_NO_DEVICE);
    } else {
        cr_expect_eq(kg_reserve_scratch(c, 0), KG_OK, "%s", kg_errmsg(c));
    }
    kg_close(c);
}

Test(errors, empty_results_and_empty_slices_plan_correctly)
{
    kg_red_plan p;
    kg_tensor e = fake(IN_AT, KG_F32, 2, (int64_t[]){0, 4});
    cr_assert_eq(plan_of(KG_RED_MAX, &e, (int[]){1}, 1, 0, &p), KG_OK, "a non-empty dim of an empty tensor");
    cr_assert_eq(p.empty, 1);
    cr_assert_eq(p.out_shape[0], 0);
    cr_assert_eq(plan_of(KG_RED_SUM, &e, (int[]){0}, 1, 0, &p), KG_OK);
    cr_assert_eq(p.empty, 0);
    cr_assert_eq(p.args.red, 0);
    cr_assert_eq(p.args.n_out, 4);
}

/* ---- CPU: the generated reference ----------------------------------------- */

Test(reference, matches_hand_computed_values)
{
    const double x[] = {3, -1, 7, 7, 2};
    int64_t at;
    cr_assert_eq(kg_red_refs[KG_RED_SUM].f(x, 5, NULL), 18);
    cr_assert_eq(kg_red_refs[KG_RED_MEAN].f(x, 5, NULL), 3.6);
    cr_assert_eq(kg_red_refs[KG_RED_PROD].f(x, 5, NULL), -294);
    cr_assert_eq(kg_red_refs[KG_RED_NORM].f((double[]){3, 4}, 2, NULL), 5);
    cr_assert_eq(kg_red_refs[KG_RED_MAX].f(x, 5, NULL), 7);
    cr_assert_eq(kg_red_refs[KG_RED_MIN].f(x, 5, NULL), -1);
    cr_assert_eq(kg_red_refs[KG_RED_ARGMAX].f(x, 5, &at), 7);
    cr_assert_eq(at, 2, "ties go to the first index");
    cr_assert_eq(kg_red_refs[KG_RED_ARGMIN].f(x, 5, &at), -1);
    cr_assert_eq(at, 1);
    const double y[] = {1, NAN, 5, NAN};
    cr_assert(isnan(kg_red_refs[KG_RED_MAX].f(y, 4, NULL)));
    cr_assert(isnan(kg_red_refs[KG_RED_MIN].f(y, 4, NULL)));
    kg_red_refs[KG_RED_ARGMAX].f(y, 4, &at);
    cr_assert_eq(at, 1, "the first NaN wins");
    kg_red_refs[KG_RED_ARGMIN].f(y, 4, &at);
    cr_assert_eq(at, 1);
    cr_assert_eq(kg_red_refs[KG_RED_ARGMAX].f((double[]){-INFINITY, -INFINITY}, 2, &at), -INFINITY);
    cr_assert_eq(at, 0);
    cr_assert_eq(kg_red_refs[KG_RED_SUM].f(x, 0, NULL), 0);
    cr_assert_eq(kg_red_refs[KG_RED_PROD].f(x, 0, NULL), 1);
    cr_assert(isnan(kg_red_refs[KG_RED_MEAN].f(x, 0, NULL)));
    const int64_t v[] = {INT64_MAX, 1, -5, 1};
    cr_assert_eq(kg_red_refs[KG_RED_SUM].i(v, 2, NULL), INT64_MIN, "i64 sums wrap");
    cr_assert_eq(kg_red_refs[KG_RED_ARGMAX].i(v + 1, 3, &at), 1);
    cr_assert_eq(at, 0);
    cr_assert_null(kg_red_refs[KG_RED_MEAN].i);
}

/* cols_strided_occ (session 33's sp3w; 4 the default since session 34's H100
   round s34r1): f16 / bf16 COLS plans in the strided mode that
   cols_strided_occ 0 ("main") runs in colso take colsp, the split fill at
   its 3 resident blocks (3: always; 4: only where ceil(grid / 3 SMs) <=
   ceil(main's grid / 4 SMs)). Every other plan is main's byte for byte
   (other dtypes, index reductions, other modes and kernels). Part 1, the
   sweep's shapes (132 SMs): #71 #40 #156 #162 #198 #215 take colsp under 4;
   #42 (512 blocks, unsplit) #52 (1027) #202 (2112) keep main's plan (3
   blocks would add a wave); plans only. Part 2, the GPU test's shapes,
   each sum / max plan followed element by element by the plan checker. */
typedef struct socc_case {
    int nd;
    int64_t shape[6];
    int perm[6]; /* memory order, outermost first */
    unsigned mask;
    int off;    /* elements after the 256-byte boundary */
    int want;   /* under 4, f16 / bf16 value reductions: 1 colsp, 0 main's plan, -1 either */
    int follow; /* part 2: followed element by element */
} socc_case;

static const socc_case socc_sweep[] = {
    {2, {167773, 100}, {1, 0}, 0x2, 0, 1, 0},                        /* #71 */
    {4, {15, 69, 1023, 32}, {0, 3, 1, 2}, 0x6, 0, -1, 0},            /* #40's kind (its permutation not replayed) */
    {3, {13, 384, 13445}, {0, 1, 2}, 0x3, 0, 1, 0},                  /* #156 */
    {3, {31, 1023, 1059}, {0, 1, 2}, 0x3, 0, 1, 0},                  /* #162 */
    {3, {96, 63, 11097}, {0, 1, 2}, 0x3, 0, 1, 0},                   /* #198 */
    {6, {500, 96, 13, 2, 2, 27}, {0, 1, 2, 3, 4, 5}, 0x13, 0, 1, 0}, /* #215 */
    {5, {5, 256, 7, 17, 441}, {0, 1, 2, 3, 4}, 0xd, 0, 0, 0},        /* #42: 512 blocks, one wave of 4 */
    {4, {511, 5, 9, 5837}, {0, 1, 2, 3}, 0x1, 0, 0, 0},              /* #52: 1027 blocks */
    {2, {10324441, 13}, {1, 0}, 0x2, 0, 0, 0},                       /* #202: 2112 blocks */
};

static const socc_case socc_gpu[] = {
    {3, {3, 255, 1101}, {0, 1, 2}, 0x1, 0, 1, 1},       /* 255 outer positions x 5 tiles, unsplit */
    {3, {3, 255, 1101}, {0, 1, 2}, 0x1, 1, 1, 1},       /* the same one element off */
    {2, {20001, 100}, {1, 0}, 0x2, 0, 1, 1},            /* #71's kind, transposed */
    {3, {9, 50, 6001}, {0, 1, 2}, 0x2, 0, 1, 1},        /* 9 outer positions, split */
    {4, {17, 3, 29, 3001}, {0, 1, 2, 3}, 0x5, 0, 1, 1}, /* two reduced dims walked, split */
    {3, {31, 101, 1059}, {0, 1, 2}, 0x3, 0, 1, 1},      /* #162's kind */
    {2, {64, 20011}, {0, 1}, 0x1, 0, 1, 1},             /* split */
    {4, {256, 7, 5, 441}, {0, 1, 2, 3}, 0x6, 0, 0, 1},  /* #42's kind: 512 blocks, unsplit: main's */
    {2, {2000, 129}, {0, 1}, 0x1, 0, 0, 1},             /* 48 blocks: the 2-block kernel, main's */
};

/* c's plans for op over dt under main (p0), cols_strided_occ 3 (p3) and 4
   (p4); checks what the tuning says. Returns 1 where p4 is colsp. */
static int socc_plans(const socc_case *c, kg_dtype dt, kg_reduce_op op, kg_red_plan *p4, int *strided_colso)
{
    kg_red_tuning t0 = kg_red_tuning_default, t3 = kg_red_tuning_default, t4 = kg_red_tuning_default;
    t0.cols_strided_occ = 0; /* main's plan (whatever the default becomes) */
    t3.cols_strided_occ = 3;
    t4.cols_strided_occ = 4;
    const size_t es = kg_dtype_size(dt);
    kg_tensor in = permuted(dt, c->nd, c->shape, c->perm, 0, (int64_t)(IN_AT + (uintptr_t)c->off * es));
    int axes[KG_MAX_DIMS], na = 0;
    for (int d = 0; d < c->nd; d++)
        if ((c->mask >> d) & 1u)
            axes[na++] = d;
    kg_red_plan p0, p3;
    cr_assert_eq(plan_tuned(op, &in, axes, na, 0, &t0, &p0), KG_OK);
    cr_assert_eq(plan_tuned(op, &in, axes, na, 0, &t3, &p3), KG_OK);
    cr_assert_eq(plan_tuned(op, &in, axes, na, 0, &t4, p4), KG_OK);
    const kg_red_info *info = &kg_red_infos[op];
    kg_red_plan pd; /* the default tuning (NULL): cols_strided_occ 4's plan byte for byte */
    cr_assert_eq(plan_tuned(op, &in, axes, na, 0, NULL, &pd), KG_OK);
    cr_assert(memcmp(&pd, p4, sizeof pd) == 0, "%s(%s) shape %lld x ..: the default's plan is not cols_strided_occ 4's",
              info->name, kg_dtype_name(dt), (long long)c->shape[0]);
    *strided_colso = p0.cls == KG_RED_COLS && p0.occ == 4 && p0.args.vec == KG_RED_CV_STRIDED;
    if (!*strided_colso || (dt != KG_F16 && dt != KG_BF16)) {
        /* (under 3 the split fill of a 2-byte strided plan counts colsp's 3
           blocks even where its grid then stays with the 2-block kernel) */
        const int strided2 = p0.cls == KG_RED_COLS && p0.args.vec == KG_RED_CV_STRIDED && kg_dtype_size(dt) == 2;
        cr_assert((strided2 || memcmp(&p0, &p3, sizeof p0) == 0) && memcmp(&p0, p4, sizeof p0) == 0,
                  "%s(%s) shape %lld x ..: not main's plan (class %d occ %d vec %d)", info->name, kg_dtype_name(dt),
                  (long long)c->shape[0], p0.cls, p0.occ, p0.args.vec);
        return 0;
    }
    cr_assert(!info->indexed, "index reductions never take colso");
    /* under 3: colsp, or the 2-block kernel where the split refilled at 3
       blocks leaves a grid of at most 2 blocks a multiprocessor */
    cr_assert(p3.cls == KG_RED_COLS && (p3.occ == 3 || (p3.occ == 0 && p3.grid <= 2 * 132)) &&
                  p3.args.vec == KG_RED_CV_STRIDED && p3.args.red == p0.args.red && p3.args.walk.n == p0.args.walk.n,
              "%s(%s) shape %lld x ..: under 3 class %d occ %d vec %d cw %d (main cw %d)", info->name,
              kg_dtype_name(dt), (long long)c->shape[0], p3.cls, p3.occ, p3.args.vec, p3.args.cw, p0.args.cw);
    /* the rule, from the grids: colsp's waves of 3 blocks against main's of 4 */
    const int64_t w3 = ((int64_t)p3.grid + 3 * 132 - 1) / (3 * 132), w4 = ((int64_t)p0.grid + 4 * 132 - 1) / (4 * 132);
    const int take = p3.occ == 3 && w3 <= w4;
    cr_assert(memcmp(take ? &p3 : &p0, p4, sizeof p0) == 0,
              "%s(%s) shape %lld x ..: under 4 not the plan the rule picks (grids %u / %u, waves %lld / %lld)",
              info->name, kg_dtype_name(dt), (long long)c->shape[0], p0.grid, p3.grid, (long long)w4, (long long)w3);
    return take;
}

Test(plan, strided_2_byte_columns_take_colsp_where_waves_allow_under_cols_strided_occ_4)
{
    cr_assert_eq(kg_red_tuning_default.cols_strided_occ, 4, "the default since s34r1 (H100)");
    kg_red_tuning t = kg_red_tuning_default, t4 = kg_red_tuning_default;
    cr_assert_eq(kg_red_tuning_parse("cols_strided_occ=4", &t), 0);
    cr_assert_eq(t.cols_strided_occ, 4);
    t4.cols_strided_occ = 4;
    const kg_dtype dts[] = {KG_BF16, KG_F16, KG_F32, KG_I32, KG_F64, KG_I64, KG_U8};
    int taken = 0, kept = 0, same = 0, followed = 0;
    for (int part = 0; part < 2; part++) {
        const socc_case *cs = part ? socc_gpu : socc_sweep;
        const size_t n = part ? sizeof socc_gpu / sizeof socc_gpu[0] : sizeof socc_sweep / sizeof socc_sweep[0];
        for (size_t i = 0; i < n; i++)
            for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
                for (int op = 0; op < KG_RED_COUNT; op++) {
                    if (!((kg_red_infos[op].dtype_mask >> dts[d]) & 1u))
                        continue;
                    kg_red_plan p4;
                    int sc = 0;
                    const int take = socc_plans(&cs[i], dts[d], (kg_reduce_op)op, &p4, &sc);
                    const int two = dts[d] == KG_F16 || dts[d] == KG_BF16;
                    if (sc && two) {
                        taken += take;
                        kept += !take;
                        if (cs[i].want >= 0)
                            cr_expect_eq(take, cs[i].want, "part %d case %zu %s(%s): colsp %d", part, i,
                                         kg_red_infos[op].name, kg_dtype_name(dts[d]), take);
                    } else
                        same++;
                    if (part == 1 && cs[i].follow && (op == KG_RED_SUM || op == KG_RED_MAX || op == KG_RED_ARGMAX)) {
                        const size_t es = kg_dtype_size(dts[d]);
                        kg_tensor in = permuted(dts[d], cs[i].nd, cs[i].shape, cs[i].perm, 0,
                                                (int64_t)(IN_AT + (uintptr_t)cs[i].off * es));
                        char why[256];
                        kg_red_class cls;
                        cr_assert(check_plan((kg_reduce_op)op, &in, cs[i].mask, &t4, why, sizeof why, &cls),
                                  "case %zu %s(%s): %s", i, kg_red_infos[op].name, kg_dtype_name(dts[d]), why);
                        followed++;
                    }
                    if (part == 1 && two && op == KG_RED_SUM)
                        cr_log_info("gpu case %zu %s: strided colso %d, colsp under 4 %d (grid %u)", i,
                                    kg_dtype_name(dts[d]), sc, take, p4.grid);
                }
    }
    cr_log_info("cols_strided_occ 4: %d 2-byte strided colso plans in colsp, %d kept (waves), %d others as main's; "
                "%d followed element by element",
                taken, kept, same, followed);
    cr_assert_gt(taken, 0);
    cr_assert_gt(kept, 0);
}

/* flat_fill (default 75 with flat_fill_to 100 since session 35's H100
   round s35r3; 0 gives the plans of before): FLAT plans (a block per unit)
   of fewer units than flat_fill percent of the 132 multiprocessors take
   more splits, up to flat_fill_to percent of them in units, within
   flat_min_elems a split; the class and every other choice as planned, and
   every other plan byte for byte flat_fill 0's, and the default plan (no
   tuning) byte for byte flat_fill 75's. The sweep's four rows it
   changes (KG_RED_LIST over the 1200 seeded cases: #136 #331 64 -> 132,
   #115 97 -> 132, #575 90 -> 132) replayed, plans that already fill the
   GPU kept (3 and 2 outer positions of 128 bf16 columns at 64 splits: 192
   and 128 units; 4-byte FLAT takes at least 132 units), the split count
   capped by flat_min_elems (20000 rows of 128: 78), and the changed plans
   followed element by element where they are small enough. */
typedef struct {
    int nd;
    int64_t shape[6];
    unsigned mask;
    int want0, want; /* bf16 sum: flat_fill 0's splits and 75's (0: not FLAT or not checked) */
} ffill_case;

static const ffill_case ffill_cases[] = {
    {4, {24, 365, 15, 128}, 0x7, 64, 132},   /* #136 */
    {2, {262144, 128}, 0x1, 64, 132},        /* #331 */
    {5, {500, 100, 32, 2, 42}, 0x7, 97, 132}, /* #115 */
    {3, {737461, 13, 7}, 0x1, 90, 132},      /* #575 */
    {3, {3, 200000, 128}, 0x2, 64, 64},      /* 192 units: fills, kept */
    {3, {2, 100000, 128}, 0x2, 64, 64},      /* 128 units (97%): kept */
    {3, {1, 20000, 128}, 0x2, 64, 78},       /* flat_min_elems: at most 78 splits of 256 rows */
    {2, {34000, 128}, 0x1, 64, 132},         /* test_reduce's default-path cases */
    {3, {3, 12000, 128}, 0x3, 64, 132},
    {3, {48000, 13, 7}, 0x1, 90, 132},
    {2, {5162221, 13}, 0x1, 0, 0},           /* #113's shape */
    {3, {9, 4097, 33}, 0x2, 0, 0},
    {2, {4096, 96}, 0x1, 0, 0},
};

Test(plan, flat_fill_adds_splits_only_to_flat_plans_that_leave_multiprocessors_idle)
{
    cr_assert_eq(kg_red_tuning_default.flat_fill, 75, "the default since s35r3");
    cr_assert_eq(kg_red_tuning_default.flat_fill_to, 100, "the default since s35r3");
    kg_red_tuning t0 = kg_red_tuning_default;
    t0.flat_fill = 0;
    kg_red_tuning t = kg_red_tuning_default;
    cr_assert_eq(kg_red_tuning_parse("flat_fill=75,flat_fill_to=100", &t), 0);
    cr_assert_eq(t.flat_fill, 75);
    cr_assert_eq(t.flat_fill_to, 100);
    const kg_dtype dts[] = {KG_BF16, KG_F16, KG_F32, KG_I32, KG_F64, KG_I64, KG_U8};
    int changed = 0, same = 0, followed = 0;
    for (size_t i = 0; i < sizeof ffill_cases / sizeof ffill_cases[0]; i++) {
        const ffill_case *c = &ffill_cases[i];
        int axes[KG_MAX_DIMS], na = 0;
        int64_t elems = 1;
        for (int d = 0; d < c->nd; d++) {
            elems *= c->shape[d];
            if ((c->mask >> d) & 1u)
                axes[na++] = d;
        }
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
            for (int op = 0; op < KG_RED_COUNT; op++) {
                if (!((kg_red_infos[op].dtype_mask >> dts[d]) & 1u))
                    continue;
                kg_tensor in = fake(IN_AT, dts[d], c->nd, c->shape);
                kg_red_plan p0, p1, pd;
                cr_assert_eq(plan_tuned((kg_reduce_op)op, &in, axes, na, 0, &t0, &p0), KG_OK);
                cr_assert_eq(plan_tuned((kg_reduce_op)op, &in, axes, na, 0, &t, &p1), KG_OK);
                cr_assert_eq(plan_tuned((kg_reduce_op)op, &in, axes, na, 0, NULL, &pd), KG_OK);
                const char *name = kg_red_infos[op].name, *dn = kg_dtype_name(dts[d]);
                cr_assert(memcmp(&pd, &p1, sizeof pd) == 0, "case %zu %s(%s): the default plan is not flat_fill 75's",
                          i, name, dn);
                const int flat = p0.cls == KG_RED_FLAT && p0.args.group != 32;
                const int64_t outer = flat ? p0.args.units / p0.args.splits : 0;
                if (op == KG_RED_SUM && dts[d] == KG_BF16 && c->want0)
                    cr_assert(flat && p0.args.splits == c->want0 && p1.args.splits == c->want,
                              "case %zu: class %d splits %d / %d, want %d / %d", i, p0.cls, p0.args.splits,
                              p1.args.splits, c->want0, c->want);
                if (!flat || outer * p0.args.splits * 100 >= 132 * 75 || p1.args.splits == p0.args.splits) {
                    cr_assert(memcmp(&p0, &p1, sizeof p0) == 0, "case %zu %s(%s): plan changed (class %d units %lld)",
                              i, name, dn, p0.cls, (long long)p0.args.units);
                    same++;
                    continue;
                }
                /* the changed plan: FLAT, the same outer positions, more
                   splits (at most cdiv(132, outer)), chunk and partials to
                   match, a block per unit; nothing else */
                changed++;
                cr_assert_eq(kg_dtype_size(dts[d]), 2, "case %zu %s(%s): only 2-byte FLAT plans are taken this small", i,
                             name, dn);
                const int64_t s = p1.args.splits, red = p0.args.red;
                cr_assert(p1.cls == KG_RED_FLAT && s > p0.args.splits && s <= (132 + outer - 1) / outer &&
                              p1.args.units == outer * s && p1.grid == (unsigned)(outer * s) &&
                              p1.args.chunk * (s - 1) < red && p1.args.chunk * s >= red &&
                              p1.args.chunk * p0.args.inner >= kg_red_tuning_default.flat_min_elems &&
                              p1.partial_bytes == (size_t)(outer * s * p0.args.inner) * 4,
                          "case %zu %s(%s): splits %lld chunk %lld units %lld grid %u", i, name, dn, (long long)s,
                          (long long)p1.args.chunk, (long long)p1.args.units, p1.grid);
                kg_red_plan q = p1;
                q.args.splits = p0.args.splits;
                q.args.chunk = p0.args.chunk;
                q.args.units = p0.args.units;
                q.grid = p0.grid;
                q.partial_bytes = p0.partial_bytes;
                q.partial_idx_at = p0.partial_idx_at;
                cr_assert(memcmp(&p0, &q, sizeof p0) == 0, "case %zu %s(%s): a field other than the splits changed", i,
                          name, dn);
                if (elems <= 20000000 && (op == KG_RED_SUM || op == KG_RED_MAX)) {
                    char why[256];
                    kg_red_class cls;
                    cr_assert(check_plan((kg_reduce_op)op, &in, c->mask, &t, why, sizeof why, &cls), "case %zu %s(%s): %s",
                              i, name, dn, why);
                    followed++;
                }
            }
    }
    cr_log_info("flat_fill 75 to 100: %d plans changed, %d flat_fill 0's, %d followed element by element", changed,
                same, followed);
    cr_assert_gt(changed, 0);
    cr_assert_gt(followed, 0);
}

/* flatw_ragged (forced by kg_red_force_flatw_ragged; a default since session 37 where
   flatw_ragged_late allows): FLATW's blocks
   (one reduced dim outside the slab) whose starts are whole periods P = a K
   dividing the vector but not whole vectors take the flatwo kernel's mode 2
   (args.vec 1, args.tiles the input's extent): the plan checker walks each
   such plan (every op of the dtype, each covering vector's elements folded
   by e mod P); the default keeps the plans of before; a misaligned input,
   blocks under 128 bytes and index reductions never take it. */
typedef struct ragged_case {
    kg_dtype dt;
    int nd;
    int64_t shape[6];
    int perm[6]; /* memory order, outermost first */
    unsigned mask;
    int gap, taken;
} ragged_case;

static const ragged_case ragged_cases[] = {
    {KG_BF16, 5, {511, 17, 5, 4, 97}, {2, 1, 0, 4, 3}, 0x12, 0, 1}, /* sweep #196: K4 R97 K511 R17 K5 */
    {KG_BF16, 5, {300, 3, 2, 4, 97}, {2, 1, 0, 4, 3}, 0x12, 0, 1},  /* its family, odd sizes */
    {KG_BF16, 5, {300, 3, 2, 4, 97}, {2, 1, 0, 4, 3}, 0x12, 1, 0},  /* strides doubled: no stride-1 dim */
    {KG_F32, 4, {5, 200, 33, 2}, {0, 1, 2, 3}, 0x5, 0, 1},          /* K2 R33 K200 R5 */
    {KG_I32, 4, {7, 151, 33, 2}, {0, 1, 2, 3}, 0x5, 0, 1},
    {KG_BF16, 4, {3, 150, 61, 2}, {0, 1, 2, 3}, 0x5, 0, 1},         /* P 2 of 8 */
    {KG_BF16, 5, {3, 150, 31, 2, 2}, {0, 1, 2, 3, 4}, 0x15, 0, 1},  /* a 2 x K 2 under R31 */
    {KG_F16, 5, {13, 3, 200, 41, 4}, {1, 0, 2, 3, 4}, 0x9, 0, 1},   /* R13 blocks outside K3 K200 */
    {KG_BF16, 4, {3, 150, 60, 2}, {0, 1, 2, 3}, 0x5, 0, 0},         /* whole vectors: FLATW's blocks already */
    {KG_BF16, 4, {3, 2000, 31, 2}, {0, 1, 2, 3}, 0x5, 0, 0},        /* blocks of 124 bytes */
    {KG_BF16, 4, {3, 150, 61, 3}, {0, 1, 2, 3}, 0x5, 0, 0},         /* P 3 does not divide 8 */
};

/* Case c's input (at IN_AT, c->gap doubling the strides) and its axes
   (the mask's set bits, ascending) into axes; returns their count. */
static int ragged_input(const ragged_case *c, kg_tensor *in, int *axes)
{
    *in = permuted(c->dt, c->nd, c->shape, c->perm, c->gap, (int64_t)IN_AT);
    int n = 0;
    for (int d = 0; d < c->nd; d++)
        if ((c->mask >> d) & 1u)
            axes[n++] = d;
    return n;
}

Test(plan, flatw_ragged_blocks_cover_each_element_once_off_by_default)
{
    kg_red_tuning t = kg_red_force_flatw_ragged(1); /* small shapes: 132 warps */
    int taken = 0;
    for (size_t i = 0; i < sizeof ragged_cases / sizeof ragged_cases[0]; i++) {
        const ragged_case *c = &ragged_cases[i];
        kg_tensor in;
        int axes[KG_MAX_DIMS];
        const int n = ragged_input(c, &in, axes);
        kg_red_plan p, p0;
        cr_assert_eq(plan_tuned(KG_RED_SUM, &in, axes, n, 0, &t, &p), KG_OK, "%s", kg_errmsg(cpu_ctx));
        const int ragged = p.cls == KG_RED_FLAT && p.args.group == 32 && p.args.vec == 1;
        cr_expect_eq(ragged, c->taken, "case %zu: class %d group %d vec %d", i, p.cls, p.args.group, p.args.vec);
        if (ragged) {
            taken++;
            int64_t lo, hi;
            extent_of(&in, &lo, &hi);
            cr_expect_eq(p.args.tiles, hi + 1, "case %zu: the extent", i);
        }
        char why[256];
        kg_red_class cls;
        for (int op = 0; op < KG_RED_COUNT; op++)
            if ((kg_red_infos[op].dtype_mask >> in.dtype) & 1u) {
                cr_expect(check_plan((kg_reduce_op)op, &in, c->mask, &t, why, sizeof why, &cls), "case %zu %s: %s",
                          i, kg_red_infos[op].name, why);
                kg_red_plan q;
                cr_assert_eq(plan_tuned((kg_reduce_op)op, &in, axes, n, 0, &t, &q), KG_OK);
                if (kg_red_infos[op].indexed)
                    cr_expect(!(q.cls == KG_RED_FLAT && q.args.group == 32), "case %zu %s", i,
                              kg_red_infos[op].name);
            }
        /* the default: never mode 2 */
        cr_assert_eq(plan_of(KG_RED_SUM, &in, axes, n, 0, &p0), KG_OK);
        cr_expect(!(p0.cls == KG_RED_FLAT && p0.args.group == 32 && p0.args.vec == 1), "case %zu: default", i);
        /* a misaligned input: not mode 2 */
        kg_tensor m = in;
        m.data = (void *)(IN_AT + 8);
        cr_assert_eq(plan_tuned(KG_RED_SUM, &m, axes, n, 0, &t, &p), KG_OK);
        cr_expect(!(p.cls == KG_RED_FLAT && p.args.group == 32 && p.args.vec == 1), "case %zu: misaligned", i);
    }
    cr_assert_eq(taken, 7);
    /* at flatw_ragged 8 (1056 warps) #196 (2555 outer positions) still takes it, its family of 600 does not */
    t.flatw_ragged = 8;
    {
        const ragged_case *c = &ragged_cases[0];
        kg_tensor in = permuted(c->dt, c->nd, c->shape, c->perm, 0, (int64_t)IN_AT);
        int axes[2] = {1, 4};
        kg_red_plan p;
        cr_assert_eq(plan_tuned(KG_RED_SUM, &in, axes, 2, 0, &t, &p), KG_OK);
        cr_expect(p.cls == KG_RED_FLAT && p.args.group == 32 && p.args.vec == 1 && p.args.units == 2555 &&
                      p.grid == 320,
                  "#196 at flatw_ragged 8: class %d units %lld grid %u", p.cls, (long long)p.args.units, p.grid);
        c = &ragged_cases[1];
        in = permuted(c->dt, c->nd, c->shape, c->perm, 0, (int64_t)IN_AT);
        cr_assert_eq(plan_tuned(KG_RED_SUM, &in, axes, 2, 0, &t, &p), KG_OK);
        cr_expect(!(p.cls == KG_RED_FLAT && p.args.group == 32 && p.args.vec == 1), "600 warps at flatw_ragged 8");
    }
}

/* flatw_ragged_v 1 (the default since session 37): the same plans
   as flatw_ragged's, args.vec 2 (mode 3: mode 2's vectors, lanes and fold
   order in a software pipeline) in place of 1, every other field equal; the
   plan checker walks them (every op); flatw_ragged_v alone (flatw_ragged 0)
   and the default change nothing. flatw_ragged_min: a slab (its blocks
   together) of fewer bytes keeps the plan of before (#196's 17 blocks of
   776 bytes: 13192). */
Test(plan, flatw_ragged_pipe_same_plans_vec_2_and_min_slab_bytes)
{
    kg_red_tuning t1 = kg_red_force_flatw_ragged(1), t3 = t1, toff = kg_red_tuning_default, tz = toff;
    t3.flatw_ragged_v = 1;
    tz.flatw_ragged = 0; /* flatw_ragged off: flatw_ragged_v 0 or 1 plans the same */
    tz.flatw_ragged_v = 0;
    toff.flatw_ragged = 0;
    toff.flatw_ragged_v = 1;
    int taken = 0;
    for (size_t i = 0; i < sizeof ragged_cases / sizeof ragged_cases[0]; i++) {
        const ragged_case *c = &ragged_cases[i];
        kg_tensor in;
        int axes[KG_MAX_DIMS];
        const int n = ragged_input(c, &in, axes);
        for (int op = 0; op < KG_RED_COUNT; op++) {
            if (!((kg_red_infos[op].dtype_mask >> in.dtype) & 1u))
                continue;
            kg_red_plan p2, p3, pd, po;
            cr_assert_eq(plan_tuned((kg_reduce_op)op, &in, axes, n, 0, &t1, &p2), KG_OK);
            cr_assert_eq(plan_tuned((kg_reduce_op)op, &in, axes, n, 0, &t3, &p3), KG_OK);
            cr_assert_eq(plan_tuned((kg_reduce_op)op, &in, axes, n, 0, &tz, &pd), KG_OK);
            cr_assert_eq(plan_tuned((kg_reduce_op)op, &in, axes, n, 0, &toff, &po), KG_OK);
            const int r2 = p2.cls == KG_RED_FLAT && p2.args.group == 32 && p2.args.vec == 1;
            const int r3 = p3.cls == KG_RED_FLAT && p3.args.group == 32 && p3.args.vec == 2;
            cr_expect_eq(r2, r3, "case %zu %s: mode 2 %d, mode 3 %d", i, kg_red_infos[op].name, r2, r3);
            if (r3) {
                taken += op == KG_RED_SUM;
                p3.args.vec = 1;
            }
            cr_expect(!memcmp(&p2, &p3, sizeof p2), "case %zu %s: mode 3's plan differs beyond args.vec", i,
                      kg_red_infos[op].name);
            cr_expect(!memcmp(&pd, &po, sizeof pd), "case %zu %s: flatw_ragged_v alone (flatw_ragged 0) changed the plan", i,
                      kg_red_infos[op].name);
            char why[256];
            kg_red_class cls;
            cr_expect(check_plan((kg_reduce_op)op, &in, c->mask, &t3, why, sizeof why, &cls), "case %zu %s: %s", i,
                      kg_red_infos[op].name, why);
        }
    }
    cr_assert_eq(taken, 7);
    /* flatw_ragged_min against #196's 13192-byte slab (flatw_ragged 8, flatw_ragged_v 1) */
    const ragged_case *c = &ragged_cases[0];
    kg_tensor in = permuted(c->dt, c->nd, c->shape, c->perm, 0, (int64_t)IN_AT);
    int axes[2] = {1, 4};
    kg_red_tuning t = t3;
    t.flatw_ragged = 8;
    const int64_t mins[3] = {0, 13192, 13193};
    for (int k = 0; k < 3; k++) {
        t.flatw_ragged_min = (int)mins[k];
        kg_red_plan p;
        cr_assert_eq(plan_tuned(KG_RED_SUM, &in, axes, 2, 0, &t, &p), KG_OK);
        const int r = p.cls == KG_RED_FLAT && p.args.group == 32 && p.args.vec == 2;
        cr_expect_eq(r, k < 2, "#196 at flatw_ragged_min %lld: class %d group %d vec %d", (long long)mins[k], p.cls,
                     p.args.group, p.args.vec);
        if (k < 2)
            cr_expect(p.args.units == 2555 && p.grid == 320, "#196: units %lld grid %u", (long long)p.args.units,
                      p.grid);
    }
}

/* flatw_ragged_late (flags): flatw_ragged's plans replace only a plan that
   ends as COLS reading one column a lane (1) or as NEST over 2-byte elements
   (2); elsewhere the plan without flatw_ragged. Every op of each ragged case,
   the plan checker walking the late plans. */
static const ragged_case late_cases[] = {
    {KG_F32, 5, {100, 33, 63, 81, 2}, {0, 1, 2, 3, 4}, 0xa, 0, 1},         /* sweep #1980: COLS scalar, K2 R81 */
    {KG_I32, 6, {61, 24, 31, 3, 63, 2}, {0, 1, 2, 3, 4, 5}, 0x11, 0, 1},  /* #2763: COLS scalar, K2 R63 */
    {KG_BF16, 5, {7, 50, 384, 250, 2}, {0, 1, 2, 3, 4}, 0x9, 0, 1},       /* #15109: COLS scalar (deep), K2 R250 */
    {KG_BF16, 6, {128, 63, 34, 63, 2, 2}, {0, 1, 2, 3, 4, 5}, 0x9, 0, 0}, /* #1855: COLS in 8-byte vectors */
};

Test(plan, flatw_ragged_late_replaces_only_the_flagged_plans)
{
    kg_red_tuning tr = kg_red_force_flatw_ragged(1);
    tr.flatw_ragged_v = 1;
    kg_red_tuning tn = tr;
    tn.flatw_ragged = 0;
    int replaced[4] = {0, 0, 0, 0};
    for (int f = 1; f <= 3; f++) {
        kg_red_tuning tl = tr;
        tl.flatw_ragged_late = f;
        const size_t nr = sizeof ragged_cases / sizeof ragged_cases[0];
        for (size_t i = 0; i < nr + sizeof late_cases / sizeof late_cases[0]; i++) {
            const ragged_case *c = i < nr ? &ragged_cases[i] : &late_cases[i - nr];
            kg_tensor in;
            int axes[KG_MAX_DIMS];
            const int n = ragged_input(c, &in, axes);
            for (int op = 0; op < KG_RED_COUNT; op++) {
                if (!((kg_red_infos[op].dtype_mask >> in.dtype) & 1u))
                    continue;
                kg_red_plan pr, pn, pl;
                cr_assert_eq(plan_tuned((kg_reduce_op)op, &in, axes, n, 0, &tr, &pr), KG_OK);
                cr_assert_eq(plan_tuned((kg_reduce_op)op, &in, axes, n, 0, &tn, &pn), KG_OK);
                cr_assert_eq(plan_tuned((kg_reduce_op)op, &in, axes, n, 0, &tl, &pl), KG_OK);
                const int ragged = pr.cls == KG_RED_FLAT && pr.args.group == 32 && pr.args.vec == 2;
                const int flagged = ((f & 1) && pn.cls == KG_RED_COLS && pn.args.vec == KG_RED_CV_SCALAR) ||
                                    ((f & 2) && pn.cls == KG_RED_NEST && kg_dtype_size(in.dtype) == 2);
                const kg_red_plan *want = ragged && flagged ? &pr : &pn;
                cr_expect(!memcmp(&pl, want, sizeof pl), "case %zu %s flags %d: class %d vec %d, want class %d vec %d",
                          i, kg_red_infos[op].name, f, pl.cls, pl.args.vec, want->cls, want->args.vec);
                replaced[f] += ragged && flagged && op == KG_RED_SUM;
                if (i >= nr && op == KG_RED_SUM && (f & 1))
                    cr_expect_eq(ragged && flagged, c->taken, "late case %zu flags %d: class %d vec %d", i - nr, f,
                                 pl.cls, pl.args.vec);
                char why[256];
                kg_red_class cls;
                if (i < nr || (op == KG_RED_SUM && f == 1)) /* the sweep cases' walks are long: their sums once */
                    cr_expect(check_plan((kg_reduce_op)op, &in, c->mask, &tl, why, sizeof why, &cls),
                              "case %zu %s: %s", i, kg_red_infos[op].name, why);
            }
        }
    }
    cr_log_info("flatw_ragged_late: sums replaced, flags 1 / 2 / 3: %d / %d / %d", replaced[1], replaced[2],
                replaced[3]);
    cr_expect(replaced[1] > 0 && replaced[2] > 0 && replaced[3] == replaced[1] + replaced[2],
              "replaced %d / %d / %d", replaced[1], replaced[2], replaced[3]);
    cr_expect(replaced[1] == 3, "flags 1: the three COLS scalar sweep cases, not #1855");
}

/* trans_first (6 by default since session 37): a COLS plan whose outputs
   each reduce at most trans_first elements is planned as TRANS where TRANS
   applies (outputs scattered in the input's order); more reduced elements,
   or trans_first 0, keep COLS. The plan checker walks every op's plan. */
Test(plan, trans_first_replaces_cols_of_few_reduced_elements)
{
    static const struct {
        kg_dtype dt;
        int64_t shape[3];
        int trans; /* TRANS under the default */
    } cs[] = {
        {KG_I32, {3, 8000, 128}, 1}, /* K8000 K128 R3 */
        {KG_BF16, {5, 4000, 200}, 1},
        {KG_F32, {6, 6000, 96}, 1},
        {KG_BF16, {7, 4000, 200}, 0}, /* 7 reduced elements: COLS */
        {KG_F32, {13, 3000, 96}, 0},
    };
    kg_red_tuning off = kg_red_tuning_default;
    off.trans_first = 0;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const int perm[3] = {0, 2, 1}; /* dims 1 and 2 swapped in memory: dim 1 innermost */
        kg_tensor in = permuted(cs[i].dt, 3, cs[i].shape, perm, 0, (int64_t)IN_AT);
        const int axes[1] = {0};
        kg_red_plan p, q;
        cr_assert_eq(plan_of(KG_RED_SUM, &in, axes, 1, 0, &p), KG_OK, "%s", kg_errmsg(cpu_ctx));
        cr_assert_eq(plan_tuned(KG_RED_SUM, &in, axes, 1, 0, &off, &q), KG_OK, "%s", kg_errmsg(cpu_ctx));
        cr_expect_eq(p.cls == KG_RED_TRANS, cs[i].trans, "case %zu: default class %d", i, p.cls);
        cr_expect_eq(q.cls, KG_RED_COLS, "case %zu: trans_first 0: class %d", i, q.cls);
        char why[256];
        kg_red_class cls;
        for (int op = 0; op < KG_RED_COUNT; op++)
            if ((kg_red_infos[op].dtype_mask >> in.dtype) & 1u)
                cr_expect(check_plan((kg_reduce_op)op, &in, 1u, NULL, why, sizeof why, &cls), "case %zu %s: %s", i,
                          kg_red_infos[op].name, why);
    }
}

/* trans_run and trans_ko2 (defaults since session 38's round s38r2):
   scaled-down shapes of session 37's census, in its memory orders
   (outermost first), the plans they take by default and with both keys
   off, and the plan checker over every value op:
   - #2744 [2048,33,256,2]p axis 3 bf16 (R2 K33 K2048 K256): NEST by
     default; trans_run: TRANS over a run of 2, ki 33 x 64, ko 256;
   - #18047 [73,13,63,63,9,2]p axis 5 i32 (R2 K13 K73 K63 K63 K9): TILE;
     both keys: TRANS, run 2, ko 9 x 63 (the K63 whose values stride is 9);
   - #26539 [64,96,125,23,2,2]p axis 5 f32 (K125 K96 K2 R2 K64 K23): COLS;
     trans_ko2: TRANS (trans_first), ko 2 x 23;
   - #1885 [384,43,256,2,2]p axis 4 bf16 (K384 R2 K256 K43 K2): NEST;
     trans_ko2: TRANS, ko 2 x (256 x 43: chained in the input and the
     values, one dim). */
Test(plan, trans_run_and_ko2_reach_the_census_shapes)
{
    static const struct {
        kg_dtype dt;
        int nd;
        int64_t shape[6];
        int perm[6]; /* memory order, outermost first */
        int axis;
        int run, ko2; /* args.cw, args.vstore under both keys */
        int64_t nko;
    } cs[] = {
        {KG_BF16, 4, {64, 33, 256, 2}, {2, 0, 1, 3}, 3, 2, 0, 256},
        {KG_I32, 6, {19, 13, 17, 63, 9, 2}, {4, 3, 2, 0, 1, 5}, 5, 2, 9, 9 * 63},
        {KG_F32, 6, {16, 96, 125, 23, 2, 2}, {3, 0, 4, 5, 1, 2}, 5, 0, 2, 2 * 23},
        {KG_BF16, 5, {384, 43, 64, 2, 2}, {3, 1, 2, 4, 0}, 4, 0, 2, 2 * 64 * 43},
    };
    kg_red_tuning both = kg_red_tuning_default, none = kg_red_tuning_default;
    none.trans_run = 0; /* (both: the defaults since session 38, trans_run 8, trans_ko2 16, trans_min_util 70) */
    none.trans_ko2 = 0;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        kg_tensor in = permuted(cs[i].dt, cs[i].nd, cs[i].shape, cs[i].perm, 0, (int64_t)IN_AT);
        const int axes[1] = {cs[i].axis};
        kg_red_plan p, q, d;
        cr_assert_eq(plan_tuned(KG_RED_SUM, &in, axes, 1, 0, &both, &p), KG_OK, "%s", kg_errmsg(cpu_ctx));
        cr_assert_eq(plan_tuned(KG_RED_SUM, &in, axes, 1, 0, &none, &q), KG_OK, "%s", kg_errmsg(cpu_ctx));
        cr_assert_eq(plan_of(KG_RED_SUM, &in, axes, 1, 0, &d), KG_OK, "%s", kg_errmsg(cpu_ctx));
        cr_expect_eq(p.cls, KG_RED_TRANS, "case %zu: class %d under trans_run / trans_ko2", i, p.cls);
        cr_expect_eq(p.args.cw > 1 ? p.args.cw : 0, cs[i].run, "case %zu: run %d", i, p.args.cw);
        cr_expect_eq(p.args.vstore, cs[i].ko2, "case %zu: ko's first dim %d", i, p.args.vstore);
        cr_expect_eq(p.args.tile_rows, cs[i].nko, "case %zu: ko %lld", i, (long long)p.args.tile_rows);
        cr_expect(q.cls != KG_RED_TRANS || (q.args.cw == 0 && q.args.vstore == 0), "case %zu: keys off", i);
        cr_expect(memcmp(&p, &d, sizeof p) == 0, "case %zu: the default plan", i);
        char why[256];
        kg_red_class cls;
        for (int op = 0; op < KG_RED_COUNT; op++)
            if (!kg_red_infos[op].indexed && ((kg_red_infos[op].dtype_mask >> in.dtype) & 1u))
                cr_expect(check_plan((kg_reduce_op)op, &in, 1u << cs[i].axis, &both, why, sizeof why, &cls),
                          "case %zu %s: %s", i, kg_red_infos[op].name, why);
    }
}

/* The GPU default-path cases of session 38's defaults (test_reduce.c
   trans_run_default_path / trans_ko2_default_path) plan as they claim on
   132 multiprocessors: column-major [3,256,2112] axis 0 TRANS over a run
   of 3 (NEST with trans_run 0), column-major [256,3,300,8] axis 1 TRANS
   with ko 8 x 300 (COLS with trans_ko2 0); every value op's plan checked. */
Test(plan, trans_run_and_ko2_default_path_cases)
{
    static const struct {
        int nd;
        int64_t shape[4];
        int axis, run, ko2;
    } cs[] = {{3, {3, 256, 2112}, 0, 3, 0}, {4, {256, 3, 300, 8}, 1, 0, 8}};
    const kg_dtype dts[] = {KG_BF16, KG_F16, KG_F32, KG_I32, KG_U8};
    kg_red_tuning off = kg_red_tuning_default;
    off.trans_run = off.trans_ko2 = 0;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
            const int perm[4] = {cs[i].nd - 1, cs[i].nd - 2, cs[i].nd - 3, 0}; /* column-major */
            kg_tensor in = permuted(dts[d], cs[i].nd, cs[i].shape, perm, 0, (int64_t)IN_AT);
            const int axes[1] = {cs[i].axis};
            kg_red_plan p, q;
            cr_assert_eq(plan_of(KG_RED_SUM, &in, axes, 1, 0, &p), KG_OK, "%s", kg_errmsg(cpu_ctx));
            cr_assert_eq(plan_tuned(KG_RED_SUM, &in, axes, 1, 0, &off, &q), KG_OK, "%s", kg_errmsg(cpu_ctx));
            cr_expect_eq(p.cls, KG_RED_TRANS, "case %zu %s: class %d", i, kg_dtype_name(dts[d]), p.cls);
            cr_expect_eq(p.args.cw > 1 ? p.args.cw : 0, cs[i].run, "case %zu %s: run %d", i, kg_dtype_name(dts[d]),
                         p.args.cw);
            cr_expect_eq(p.args.vstore, cs[i].ko2, "case %zu %s: ko2 %d", i, kg_dtype_name(dts[d]), p.args.vstore);
            cr_expect(q.cls != KG_RED_TRANS, "case %zu %s: keys off: class %d", i, kg_dtype_name(dts[d]), q.cls);
            char why[256];
            kg_red_class cls;
            for (int op = 0; op < KG_RED_COUNT; op++)
                if ((kg_red_infos[op].dtype_mask >> in.dtype) & 1u)
                    cr_expect(check_plan((kg_reduce_op)op, &in, 1u << cs[i].axis, NULL, why, sizeof why, &cls),
                              "case %zu %s %s: %s", i, kg_dtype_name(dts[d]), kg_red_infos[op].name, why);
        }
}

/* rows_block_min (session 42): ROWS takes a block of KG_RED_THREADS lanes a
   row only where a row holds more than rows_block_min 16-byte vectors (and
   its rows would not fill half the resident lanes a warp each); at or below
   it, a warp a row. Census #19450 [213,11,7,1023] axes (2,3) bf16 (2343
   rows of 7161 elements, 895 vectors) went to a block a row of 3.5 vectors a
   lane (54.8% of copy; a warp a row x1.84 in round s42r3; the default
   2048 since round s42r4). The plan checker walks both plans over every
   element once. */
Test(plan, rows_block_min_sets_where_rows_take_a_block)
{
    kg_red_tuning lo = kg_red_tuning_default, hi = kg_red_tuning_default;
    cr_assert_eq(kg_red_tuning_default.rows_block_min, 2048, "the default since round s42r4");
    const int64_t s[] = {213, 11, 7, 1023};
    kg_tensor in = fake(IN_AT, KG_BF16, 4, s);
    kg_red_plan p;
    cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){2, 3}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.args.group, 32, "the default: #19450 a warp a row");
    lo.rows_block_min = 256;
    hi.rows_block_min = 1024;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){2, 3}, 2, 0, &lo, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS);
    cr_assert_eq(p.args.group, KG_RED_THREADS, "895 vectors > 256: a block a row");
    cr_assert_eq(p.args.splits, 1, "7161 elements: under two chunks of 2048 vectors");
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){2, 3}, 2, 0, &hi, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_ROWS);
    cr_assert_eq(p.args.group, 32, "895 vectors <= 1024: a warp a row");
    cr_assert_eq(p.args.splits, 1);
    cr_assert_eq(p.grid, (2343u + 7) / 8, "8 warps a block, a warp a row");
    /* the bound is in vectors: f32 rows of 4096 vectors (16384 elements) */
    const int64_t f[] = {1000, 16384};
    kg_tensor g = fake(IN_AT, KG_F32, 2, f);
    hi.rows_block_min = 4096;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &g, (int[]){1}, 1, 0, &hi, &p), KG_OK);
    cr_assert_eq(p.args.group, 32, "4096 vectors, not more than 4096");
    hi.rows_block_min = 4095;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &g, (int[]){1}, 1, 0, &hi, &p), KG_OK);
    cr_assert_eq(p.args.group, KG_RED_THREADS, "4096 vectors, more than 4095");
    /* many rows (half the resident lanes a warp each) keep warps at any bound */
    const int64_t m[] = {8192, 4096};
    kg_tensor r = fake(IN_AT, KG_F32, 2, m);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &r, (int[]){1}, 1, 0, &lo, &p), KG_OK);
    cr_assert_eq(p.args.group, 32, "8192 rows fill the lanes a warp each");
    /* each element once, each output once, for both plans and every op */
    char why[256];
    kg_red_class cls;
    const kg_red_tuning *ts[] = {&lo, &hi};
    for (int k = 0; k < 2; k++)
        for (int op = 0; op < KG_RED_COUNT; op++) {
            if (!((kg_red_infos[op].dtype_mask >> KG_BF16) & 1u) || !((kg_red_infos[op].dtype_mask >> KG_F32) & 1u))
                continue;
            cr_expect(check_plan((kg_reduce_op)op, &in, 0xc, ts[k], why, sizeof why, &cls), "op %d tuning %d: %s", op, k,
                      why);
            cr_expect(check_plan((kg_reduce_op)op, &g, 0x2, ts[k], why, sizeof why, &cls), "op %d tuning %d: %s", op, k,
                      why);
        }
}

/* flat_max_cw (session 44): FLAT's block-wide form only where the kept
   columns repeat within at most flat_max_cw 16-byte vectors (args.cw, cols /
   gcd(cols, V)); FLATW already stops at 32. Census #1925
   [128,128,7,4,37,2] axis 2 bf16: 296 kept columns, a period of 37 vectors,
   FLAT at 113.2 us against NEST's 73.3 (H100, round s43r1, flat 0). */
Test(plan, flat_max_cw_bounds_flat_periods)
{
    kg_red_tuning lo = kg_red_tuning_default, at = kg_red_tuning_default;
    const int64_t s[] = {128, 128, 7, 4, 37, 2};
    kg_tensor in = fake(IN_AT, KG_BF16, 6, s);
    kg_red_plan p;
    lo.flat_max_cw = 36;
    at.flat_max_cw = 37;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){2}, 1, 0, &at, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_FLAT, "a period of 37 vectors, within 37");
    cr_assert_eq(p.args.cw, 37);
    cr_assert_eq(p.args.group, 0, "the block-wide form, not FLATW");
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){2}, 1, 0, &lo, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_FLAT, "a period of 37 vectors, past 36");
    check_every_op_tuned(&in, 1u << 2, &lo, 0);
    check_every_op_tuned(&in, 1u << 2, &at, 1);
}

/* slab_min_tile (session 44; 1024 by default since session 46): SLAB only
   where a tile holds at least slab_min_tile elements (its slabs x columns x
   rows). Draw #1422 [100,2048,11,2,2,2] axes (2,4) bf16 is SLAB without the
   bound over tiles of 2 slabs of 2 columns x 2 rows: 8 elements a block's
   unit. */
Test(plan, slab_min_tile_bounds_slab_tiles)
{
    kg_red_tuning any = kg_red_tuning_default, at = kg_red_tuning_default, past = kg_red_tuning_default;
    cr_assert_eq(kg_red_tuning_default.slab_min_tile, 1024, "1024 by default");
    any.slab_min_tile = 0;
    const int64_t s[] = {100, 2048, 11, 2, 2, 2};
    kg_tensor in = fake(IN_AT, KG_BF16, 6, s);
    kg_red_plan p;
    cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){2, 4}, 2, 0, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_SLAB, "8 elements a tile, under the default 1024");
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){2, 4}, 2, 0, &any, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_SLAB);
    cr_assert_eq(p.args.cw * p.args.run * p.args.tile_rows, 8, "2 columns x 2 rows x 2 slabs");
    at.slab_min_tile = 8;
    past.slab_min_tile = 9;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){2, 4}, 2, 0, &at, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_SLAB, "8 elements a tile, at least 8");
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){2, 4}, 2, 0, &past, &p), KG_OK);
    cr_assert_neq(p.cls, KG_RED_SLAB, "8 elements a tile, under 9");
    check_every_op_tuned(&in, (1u << 2) | (1u << 4), &at, 0);
    check_every_op_tuned(&in, (1u << 2) | (1u << 4), &past, 1);
}

/* cols_runs_fill_grid (session 46, off by default): COLS plans over column
   runs split as with cols_split_fill 0 where the fill's splits would give
   fewer blocks than multiprocessors. Draw #42800 [24,384,57,16,2] axes
   (0,1,3) bf16 is COLS over runs of 16 in tiles 256 lanes wide: the fill
   caps it at 16 splits, a grid of 16 blocks on 132 multiprocessors. #159
   [127,255,6,2,23,2] axes (1,3,4) bf16 (runs of 46, a grid of 381) and
   #39 [349526,384] axis 0 bf16 (no runs) keep their plans, where
   cols_split_fill 0 changes both. */
Test(plan, cols_runs_fill_grid_fills_only_small_run_grids)
{
    kg_red_tuning on = kg_red_tuning_default, nofill = kg_red_tuning_default;
    cr_assert_eq(kg_red_tuning_default.cols_runs_fill_grid, 0, "off by default");
    on.cols_runs_fill_grid = 1;
    nofill.cols_split_fill = 0;
    kg_red_plan p, q;
    kg_tensor a = fake(IN_AT, KG_BF16, 5, (int64_t[]){24, 384, 57, 16, 2});
    const int aa[] = {0, 1, 3};
    cr_assert_eq(plan_of(KG_RED_SUM, &a, aa, 3, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.run, 16);
    cr_assert_eq(p.args.splits, 16);
    cr_assert_eq(p.grid, 16u);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, aa, 3, 0, &on, &p), KG_OK);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &a, aa, 3, 0, &nofill, &q), KG_OK);
    cr_assert_eq(p.cls, KG_RED_COLS);
    cr_assert_eq(p.args.run, 16);
    cr_assert_geq(p.grid, 132u, "a grid of %u blocks", p.grid);
    cr_assert_eq(p.args.splits, q.args.splits, "the split of cols_split_fill 0");
    cr_assert_eq(p.grid, q.grid);
    check_every_op_tuned(&a, 1u | (1u << 1) | (1u << 3), &on, 0);
    /* #159: runs, a full grid; #39: no runs */
    kg_tensor b = fake(IN_AT, KG_BF16, 6, (int64_t[]){127, 255, 6, 2, 23, 2});
    kg_tensor c = fake(IN_AT, KG_BF16, 2, (int64_t[]){349526, 384});
    const int ba[] = {1, 3, 4}, ca[] = {0};
    for (int k = 0; k < 2; k++) {
        const kg_tensor *t = k ? &c : &b;
        const int *ax = k ? ca : ba, na = k ? 1 : 3;
        kg_red_plan d;
        cr_assert_eq(plan_of(KG_RED_SUM, t, ax, na, 0, &d), KG_OK);
        cr_assert_eq(d.cls, KG_RED_COLS);
        cr_assert_eq(d.args.run, k ? 1 : 46, "case %d", k);
        cr_assert_eq(plan_tuned(KG_RED_SUM, t, ax, na, 0, &on, &p), KG_OK);
        cr_assert_eq(plan_tuned(KG_RED_SUM, t, ax, na, 0, &nofill, &q), KG_OK);
        cr_assert_eq(p.args.splits, d.args.splits, "case %d: the default's split", k);
        cr_assert_eq(p.grid, d.grid, "case %d", k);
        cr_assert_neq(q.args.splits, d.args.splits, "case %d: cols_split_fill 0 changes it", k);
    }
}

/* slab_late_rows (session 44, off by default): a NEST plan planned again as
   SLAB over slabs of up to slab_late_rows rows; other classes keep their
   plans. Draw #8304 [13,31,255,16,83] axes (0,3) bf16 is NEST (slabs of 16
   rows, past slab_max_rows 8); #5797 [11,13,63,7450]p axis 1 is TRANS and
   stays TRANS, where slab_max_rows 20 makes it SLAB. */
Test(plan, slab_late_rows_replaces_only_nest)
{
    kg_red_tuning late = kg_red_tuning_default, wide = kg_red_tuning_default, lo = kg_red_tuning_default;
    cr_assert_eq(kg_red_tuning_default.slab_late_rows, 0, "off by default");
    late.slab_late_rows = 20;
    lo.slab_late_rows = 15;
    wide.slab_max_rows = 20;
    const int64_t s[] = {13, 31, 255, 16, 83};
    kg_tensor in = fake(IN_AT, KG_BF16, 5, s);
    kg_red_plan p;
    cr_assert_eq(plan_of(KG_RED_SUM, &in, (int[]){0, 3}, 2, 0, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){0, 3}, 2, 0, &late, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_SLAB, "NEST, slabs of 16 rows within 20");
    cr_assert_eq(p.args.run, 16);
    cr_assert_eq(p.args.cw, 83);
    cr_assert_eq(plan_tuned(KG_RED_SUM, &in, (int[]){0, 3}, 2, 0, &lo, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_NEST, "slabs of 16 rows, past 15");
    /* #5797: the input [11,13,63,7450] permuted so that 63 is innermost,
       then 13 (reduced), then 7450, then 11 */
    const int64_t t[] = {11, 13, 63, 7450};
    kg_tensor tr = fake(IN_AT, KG_BF16, 4, t);
    tr.strides[2] = 1;
    tr.strides[1] = 63;
    tr.strides[3] = 63 * 13;
    tr.strides[0] = 63 * 13 * 7450;
    cr_assert_eq(plan_tuned(KG_RED_SUM, &tr, (int[]){1}, 1, 0, &late, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_TRANS, "TRANS keeps its plan");
    cr_assert_eq(plan_tuned(KG_RED_SUM, &tr, (int[]){1}, 1, 0, &wide, &p), KG_OK);
    cr_assert_eq(p.cls, KG_RED_SLAB, "slab_max_rows 20 in the chain takes it ahead of TRANS");
    check_every_op_tuned(&in, 0x9, &late, 0);
    check_every_op_tuned(&tr, 0x2, &late, 1);
}
