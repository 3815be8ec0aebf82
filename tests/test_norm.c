/*
 * test_norm.c - normalizations (softmax, log_softmax, logsumexp, layer_norm,
 * rms_norm and its fused residual form).
 *
 * CPU (every machine): the class each layout takes (kg_norm_plan_call), every
 * validation error with its message, the generated float64 reference against
 * hand-computed values.
 * GPU (skipped with the reason where there is none): every op x dtype over
 * rows of 1, 2, 31, 32, 33, 1000, 4097 and 65537 elements, every axis of 3-d
 * and 4-d inputs, permuted, strided and in-place layouts, broadcast weights,
 * -inf rows, NaN, huge magnitudes, constant rows; the classes reached are
 * checked (rows, packed, strided, columns with and without splits);
 * determinism and graph capture. Inputs are fresh random values (seed
 * printed on failure), outputs are poisoned (NaN bytes) first, the reference
 * is the generated float64 one.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "kg_norm_reference.h"
#include "kg_test.h"
#include <criterion/parameterized.h>
#include "norm_plan.h"

/* ---- CPU: planning and validation ----------------------------------------- */

static kg_context *cpu_ctx;

static void cpu_setup(void)
{
    kg_open(&cpu_ctx, 0);
    cr_assert_not_null(cpu_ctx);
}

static void cpu_teardown(void) { kg_close(cpu_ctx); }

#define IN_AT ((uintptr_t)1 << 40)
#define OUT_AT ((uintptr_t)1 << 41)
#define W_AT ((uintptr_t)1 << 42)
#define S_AT ((uintptr_t)1 << 43)

static kg_tensor fake(uintptr_t at, kg_dtype dt, int ndim, const int64_t *shape)
{
    return kg_tensor_contiguous((void *)at, dt, ndim, shape);
}

static kg_norm_class plan_class(const kg_norm_call *c, kg_norm_plan *p)
{
    kg_status st = kg_norm_plan_call(cpu_ctx, c, 132, p);
    cr_assert_eq(st, KG_OK, "%s", kg_errmsg(cpu_ctx));
    return p->cls;
}

/* The launch of the plan tests' [4194304,32] rows at 2 lanes (group 2) in
   blocks of 128, a block a unit: 65536 blocks. */
static void expect_pair_launch(const kg_norm_plan *p)
{
    cr_assert_eq(p->args.group, 2);
    cr_assert_eq(p->block, 128);
    cr_assert_eq(p->grid, 65536);
}

/* Re-points in and out at contiguous [rows, cols] tensors of their dtypes
   and plans c (which names them). */
static kg_norm_class plan_shape(const kg_norm_call *c, kg_tensor *in, kg_tensor *out, int64_t rows, int64_t cols,
                                kg_norm_plan *p)
{
    *in = fake(IN_AT, in->dtype, 2, KT_SHAPE(rows, cols));
    *out = fake(OUT_AT, out->dtype, 2, KT_SHAPE(rows, cols));
    return plan_class(c, p);
}

TestSuite(plan, .init = cpu_setup, .fini = cpu_teardown);

Test(plan, contiguous_rows_take_vectors_and_a_lane_group_per_row)
{
    kg_tensor in = fake(IN_AT, KG_F32, 2, KT_SHAPE(65536, 4096)), out = fake(OUT_AT, KG_F32, 2, KT_SHAPE(65536, 4096));
    kg_norm_call c = {.op = KG_NORM_SOFTMAX, .in = &in, .out = &out, .axis = -1};
    kg_norm_plan p;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN8); /* one chunk, one outer dim: LEAN */
    cr_assert_eq(p.args.group, 128);                 /* 1024 vectors, 8 a lane */
    cr_assert_eq(p.args.nv, 8);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(p.args.rows, 65536);
    /* 16384 f32: 512 lanes of 8 vectors, still on chip */
    cr_assert_eq(plan_shape(&c, &in, &out, 100, 16384, &p), KG_NORM_LEAN8);
    cr_assert_eq(p.args.group, 512);
    cr_assert_eq(p.args.nv, 8);
    /* longer rows stream in chunks (ROWS) */
    cr_assert_eq(plan_shape(&c, &in, &out, 3, 65536, &p), KG_NORM_ROWS);
    cr_assert_eq(p.args.group, 512);
    cr_assert_eq(p.args.nv, 8);
    /* 24 vectors (<= 32: 4 a lane for the lse ops): 8 lanes a row; blocks
       of 512 lanes while two a multiprocessor remain, else fewer */
    cr_assert_eq(plan_shape(&c, &in, &out, 1000, 96, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 8);
    cr_assert_eq(p.block, 64);
    cr_assert_eq(plan_shape(&c, &in, &out, 262144, 1024, &p), KG_NORM_LEAN8);
    cr_assert_eq(p.args.group, 32);
    cr_assert_eq(p.block, 512);
    /* the lse ops' short rows of 8..32 vectors: LEAN4 (not PACKED); a LEAN
       tuning takes any short rows from PACKED: 4 lanes of 8 vectors */
    cr_assert_eq(plan_shape(&c, &in, &out, 1000, 128, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 8);
    kgi_norm_tuning.lean = 8;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN8);
    cr_assert_eq(p.args.group, 4);
    kgi_norm_tuning.lean = 0;
    kgi_norm_tuning.lean = -1;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_PACKED);
    kgi_norm_tuning.lean = 0;
    in.dtype = out.dtype = KG_BF16; /* the 2-byte lse ops: LEAN4F (softmax of 128: LEAN2E of 8 lanes, lean2_rule) */
    cr_assert_eq(plan_shape(&c, &in, &out, 1000, 128, &p), KG_NORM_LEAN2E);
    cr_assert_eq(p.args.group, 8);
    kgi_norm_tuning.lean2 = -1;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN4F);
    kgi_norm_tuning.lean2 = 0;
    in.dtype = out.dtype = KG_F32;
    /* LOOSE: the 512-lane classes */
    kgi_norm_tuning.loose = 1;
    cr_assert_eq(plan_shape(&c, &in, &out, 65536, 4096, &p), KG_NORM_LEAN8L);
    cr_assert_eq(plan_shape(&c, &in, &out, 100, 32768, &p), KG_NORM_ROWS); /* 1024 lanes */
    kgi_norm_tuning.loose = 0;
    /* g32: rows of more than a warp in the fewest whole warps (bf16
       layer_norm of 5120: 640 vectors, LEAN8S in 96 lanes of 7, not 128 of
       5), by default for the 2-byte layer_norm (measured), under the
       tuning's 1 elsewhere (rms_norm bf16 of 5120: LEAN8C in 96 lanes), -1
       never; a warp or less, or a power of two already: as before */
    {
        kg_norm_call l2 = {.op = KG_NORM_LAYER_NORM, .in = &in, .out = &out, .k = 1, .eps = 1e-5};
        kg_norm_call r2 = {.op = KG_NORM_RMS_NORM, .in = &in, .out = &out, .k = 1, .eps = 1e-5};
        in.dtype = out.dtype = KG_BF16;
        cr_assert_eq(plan_shape(&l2, &in, &out, 1000, 5120, &p), KG_NORM_LEAN8S);
        cr_assert_eq(p.args.group, 96);
        cr_assert_eq(p.args.nv, 7);
        cr_assert_eq(p.block, 96);
        cr_assert_eq(plan_class(&r2, &p), KG_NORM_LEAN8C);
        cr_assert_eq(p.args.group, 128);
        kgi_norm_tuning.g32 = 1;
        cr_assert_eq(plan_class(&r2, &p), KG_NORM_LEAN8C);
        cr_assert_eq(p.args.group, 96);
        kgi_norm_tuning.g32 = -1;
        cr_assert_eq(plan_class(&l2, &p), KG_NORM_LEAN8S);
        cr_assert_eq(p.args.group, 128);
        kgi_norm_tuning.g32 = 0;
        cr_assert_eq(plan_shape(&l2, &in, &out, 1000, 6144, &p), KG_NORM_LEAN8S);
        cr_assert_eq(p.args.group, 96);
        cr_assert_eq(p.args.nv, 8);
        cr_assert_eq(plan_shape(&l2, &in, &out, 1000, 4096, &p), KG_NORM_LEAN8S);
        cr_assert_eq(p.args.group, 64);
        cr_assert_eq(plan_shape(&l2, &in, &out, 1000, 1024, &p), KG_NORM_LEAN8S);
        cr_assert_eq(p.args.group, 16);
        in.dtype = out.dtype = KG_F32;
    }
    /* layer_norm f32 (measured): rows of <= 32 lanes of 8 vectors by
       LEAN8 (its PF form, LEAN8P), of 64..256 by LEAN4 with twice the
       lanes, of 512 by LEAN8P; 1024 lanes LEAN8 */
    kg_norm_call ln = {.op = KG_NORM_LAYER_NORM, .in = &in, .out = &out, .k = 1, .eps = 1e-5};
    cr_assert_eq(plan_shape(&ln, &in, &out, 262144, 1024, &p), KG_NORM_LEAN8P);
    cr_assert_eq(p.args.group, 32);
    cr_assert_eq(p.block, 512);
    cr_assert_eq(plan_shape(&ln, &in, &out, 65536, 4096, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 256);
    cr_assert_eq(plan_shape(&ln, &in, &out, 1000, 2048, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 128);
    cr_assert_eq(p.args.opt, 0);
    cr_assert_eq(plan_shape(&ln, &in, &out, 1000, 16384, &p), KG_NORM_LEAN8P); /* measured, 2026-12-02 r1 */
    cr_assert_eq(p.args.group, 512);
    cr_assert_eq(plan_shape(&ln, &in, &out, 100, 32768, &p), KG_NORM_LEAN8);
    cr_assert_eq(plan_shape(&ln, &in, &out, 100, 65536, &p), KG_NORM_ROWS);
    kgi_norm_tuning.lean = 8;
    cr_assert_eq(plan_shape(&ln, &in, &out, 65536, 4096, &p), KG_NORM_LEAN8);
    kgi_norm_tuning.lean = 0;
    /* f64: 64..256 lanes of 8 vectors stay ROWS */
    in.dtype = out.dtype = KG_F64;
    cr_assert_eq(plan_shape(&ln, &in, &out, 1000, 512, &p), KG_NORM_LEAN8);
    cr_assert_eq(plan_shape(&ln, &in, &out, 1000, 2048, &p), KG_NORM_ROWS);
    cr_assert_eq(plan_shape(&ln, &in, &out, 100, 8192, &p), KG_NORM_LEAN8);
    in.dtype = out.dtype = KG_F32;
    /* the 2-byte types: 4 vectors a lane (softmax: LEAN4F, its exps
       flushed); layer_norm LEAN8S (8 in 80 registers, measured), rms_norm
       of 256..512 lanes LEAN8C */
    in.dtype = out.dtype = KG_BF16;
    cr_assert_eq(plan_shape(&c, &in, &out, 65536, 4096, &p), KG_NORM_LEAN8F);
    cr_assert_eq(p.args.group, 64); /* 512 vectors of 8, 8 a lane */
    kgi_norm_tuning.variant = -1;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 128);
    kgi_norm_tuning.variant = 0;
    cr_assert_eq(plan_shape(&c, &in, &out, 65536, 192, &p), KG_NORM_LEAN4F); /* 24 vectors: 4 a lane */
    cr_assert_eq(plan_shape(&c, &in, &out, 65536, 320, &p), KG_NORM_LEAN8F); /* 40: 8 lanes of 8 */
    cr_assert_eq(p.args.group, 8);
    cr_assert_eq(p.block, 128);
    kgi_norm_tuning.variant = 3;
    kgi_norm_tuning.lean = 8;
    cr_assert_eq(plan_shape(&c, &in, &out, 65536, 4096, &p), KG_NORM_LEAN8F);
    cr_assert_eq(p.args.group, 64);
    kgi_norm_tuning.variant = 0;
    kgi_norm_tuning.lean = 0;
    cr_assert_eq(plan_shape(&ln, &in, &out, 65536, 4096, &p), KG_NORM_LEAN8S);
    cr_assert_eq(p.args.group, 64);
    cr_assert_eq(p.grid, 65536); /* a block a row (no cap of 32 blocks a multiprocessor) */
    cr_assert_eq(plan_shape(&ln, &in, &out, 16384, 16384, &p), KG_NORM_LEAN8S);
    cr_assert_eq(p.args.group, 256);
    cr_assert_eq(plan_shape(&ln, &in, &out, 100, 32768, &p), KG_NORM_LEAN8S); /* 512 lanes */
    cr_assert_eq(plan_shape(&ln, &in, &out, 100, 65536, &p), KG_NORM_ROWS);   /* more than a block */
    kg_norm_call rn = {.op = KG_NORM_RMS_NORM, .in = &in, .out = &out, .k = 1, .eps = 1e-5};
    cr_assert_eq(plan_shape(&rn, &in, &out, 16384, 16384, &p), KG_NORM_LEAN8C);
    cr_assert_eq(plan_shape(&rn, &in, &out, 65536, 4096, &p), KG_NORM_LEAN16); /* a warp a row */
    cr_assert_eq(p.args.group, 32);
    cr_assert_eq(p.block, 512);
    cr_assert_eq(plan_shape(&rn, &in, &out, 65536, 2048, &p), KG_NORM_LEAN4P); /* 64 lanes: PF */
    cr_assert_eq(p.grid, 132 * 32); /* PF's loop: at most 32 blocks a multiprocessor */
    cr_assert_eq(plan_shape(&rn, &in, &out, 65536, 1024, &p), KG_NORM_LEAN4);  /* 32 lanes: neither */
    /* warp groups: blocks of 128 for the 2-byte layer_norm (measured), of
       512 for the other ops while two blocks a multiprocessor remain */
    cr_assert_eq(plan_shape(&ln, &in, &out, 262144, 1024, &p), KG_NORM_LEAN8S);
    cr_assert_eq(p.args.group, 16);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(plan_shape(&c, &in, &out, 262144, 1024, &p), KG_NORM_LEAN8F);
    cr_assert_eq(p.block, 128);
    /* the 2-byte lse ops of 2 lanes a row (LEAN4F): blocks of 128, a block
       a unit (measured); rows of 64: softmax LEAN2E, log_softmax LEAN2 of 4
       lanes, logsumexp LEAN2R of 4, two rows a group (lean2_rule) */
    kgi_norm_tuning.lean2 = -1;
    cr_assert_eq(plan_shape(&c, &in, &out, 4194304, 64, &p), KG_NORM_LEAN4F);
    expect_pair_launch(&p);
    kgi_norm_tuning.lean2 = 0;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN2E);
    cr_assert_eq(p.args.group, 4);
    cr_assert_eq(p.args.nv, 2);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(p.grid, 131072);
    kg_norm_call lsm2 = c;
    lsm2.op = KG_NORM_LOG_SOFTMAX;
    cr_assert_eq(plan_shape(&lsm2, &in, &out, 4194304, 64, &p), KG_NORM_LEAN2);
    cr_assert_eq(p.args.group, 4);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(p.grid, 131072);
    kgi_norm_tuning.threads = 512; /* the tuning's block: LEAN4F at the cap again */
    cr_assert_eq(plan_shape(&c, &in, &out, 4194304, 64, &p), KG_NORM_LEAN4F);
    cr_assert_eq(p.block, 512);
    cr_assert_eq(p.grid, 132 * 32);
    kgi_norm_tuning.threads = 0;
    const int ax1[] = {1};
    kg_tensor o1 = fake(OUT_AT, KG_BF16, 1, KT_SHAPE(4194304));
    kg_norm_call lse2 = {.op = KG_NORM_LOGSUMEXP, .in = &in, .s0 = &o1, .axes = ax1, .n_axes = 1};
    cr_assert_eq(plan_class(&lse2, &p), KG_NORM_LEAN2R); /* two rows a group of 4 lanes: 64 rows a block */
    cr_assert_eq(p.args.group, 4);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(p.grid, 65536);
    kgi_norm_tuning.lean2 = -1; /* LEAN4F of 2 lanes, blocks of 128, a block a unit */
    cr_assert_eq(plan_class(&lse2, &p), KG_NORM_LEAN4F);
    expect_pair_launch(&p);
    kgi_norm_tuning.lean2 = 0;
    /* rows of 32 elements: 2 vectors a lane, blocks of 128, a block a unit (measured): the 2-byte types
       LEAN2 (softmax LEAN2E) of 2 lanes, not PACKED (the tuning's lean -1 still takes PACKED; lean2 -1:
       LEAN4F / LEAN4) */
    cr_assert_eq(plan_shape(&c, &in, &out, 4194304, 32, &p), KG_NORM_LEAN2E);
    cr_assert_eq(p.args.group, 2);
    cr_assert_eq(p.args.nv, 2);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(p.grid, 65536);
    cr_assert_eq(plan_class(&lsm2, &p), KG_NORM_LEAN2);
    expect_pair_launch(&p);
    kgi_norm_tuning.lean = -1;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_PACKED);
    cr_assert_eq(p.args.group, 4);
    kgi_norm_tuning.lean = 0;
    cr_assert_eq(plan_class(&rn, &p), KG_NORM_LEAN2);
    cr_assert_eq(p.args.group, 2);
    cr_assert_eq(p.args.nv, 2);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(p.grid, 65536); /* not capped at 32 blocks a multiprocessor */
    kgi_norm_tuning.lean2 = -1;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN4F);
    cr_assert_eq(plan_class(&rn, &p), KG_NORM_LEAN4);
    expect_pair_launch(&p);
    kgi_norm_tuning.lean2 = 0;
    /* LEAN2 under the tuning's lean2 (the 2-byte pairs: LEAN4F's and LEAN4's rows) */
    kgi_norm_tuning.lean2 = 1;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN2);
    expect_pair_launch(&p);
    cr_assert_eq(plan_class(&lsm2, &p), KG_NORM_LEAN2);
    cr_assert_eq(plan_class(&rn, &p), KG_NORM_LEAN2);
    cr_assert_eq(p.args.group, 2);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(plan_shape(&c, &in, &out, 4194304, 64, &p), KG_NORM_LEAN4F); /* rows of 32 alone */
    cr_assert_eq(plan_shape(&c, &in, &out, 4194304, 32, &p), KG_NORM_LEAN2);
    kgi_norm_tuning.threads = 256; /* not with the tuning's block */
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN4F);
    cr_assert_eq(p.block, 256);
    kgi_norm_tuning.threads = 0;
    kgi_norm_tuning.lean2 = 3; /* LEAN2E (softmax's exps kept; the other ops' table holds LEAN2) */
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN2E);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(plan_class(&rn, &p), KG_NORM_LEAN2E);
    cr_assert_eq(plan_shape(&c, &in, &out, 4194304, 64, &p), KG_NORM_LEAN4F);
    kgi_norm_tuning.lean2 = 4;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN2E);
    cr_assert_eq(p.args.group, 4);
    cr_assert_eq(plan_shape(&c, &in, &out, 4194304, 32, &p), KG_NORM_LEAN2E);
    kgi_norm_tuning.lean2 = 5; /* LEAN2R: the rows of 32 alone, two rows a group, 128 rows a block */
    cr_assert_eq(plan_shape(&c, &in, &out, 4099, 32, &p), KG_NORM_LEAN2R);
    cr_assert_eq(p.grid, 33);
    cr_assert_eq(plan_shape(&c, &in, &out, 4194304, 32, &p), KG_NORM_LEAN2R);
    cr_assert_eq(p.args.group, 2);
    cr_assert_eq(p.args.nv, 2);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(p.grid, 32768);
    cr_assert_eq(plan_class(&lse2, &p), KG_NORM_LEAN2R);
    cr_assert_eq(p.grid, 32768);
    cr_assert_eq(plan_shape(&c, &in, &out, 4194304, 64, &p), KG_NORM_LEAN4F);
    kgi_norm_tuning.lean2 = 6; /* LEAN2R for the rows of 64 too: 4 lanes, 64 rows a block */
    cr_assert_eq(plan_shape(&c, &in, &out, 4194304, 64, &p), KG_NORM_LEAN2R);
    cr_assert_eq(p.args.group, 4);
    cr_assert_eq(p.args.nv, 2);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(p.grid, 65536);
    cr_assert_eq(plan_shape(&c, &in, &out, 4194304, 32, &p), KG_NORM_LEAN2R);
    cr_assert_eq(p.grid, 32768);
    cr_assert_eq(plan_shape(&c, &in, &out, 2097152, 128, &p), KG_NORM_LEAN4F); /* not 128 */
    kgi_norm_tuning.lean2 = 8; /* LEAN2R for the rows of 128 too: 8 lanes, 32 rows a block */
    cr_assert_eq(plan_shape(&c, &in, &out, 2097152, 128, &p), KG_NORM_LEAN2R);
    cr_assert_eq(p.args.group, 8);
    cr_assert_eq(p.args.nv, 2);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(p.grid, 65536);
    cr_assert_eq(plan_shape(&c, &in, &out, 4194304, 64, &p), KG_NORM_LEAN2R);
    cr_assert_eq(p.grid, 65536);
    cr_assert_eq(plan_shape(&c, &in, &out, 1000, 256, &p), KG_NORM_LEAN4F); /* not 256 */
    kgi_norm_tuning.lean2 = 2; /* rows of 64 and 128 too: 4 and 8 lanes */
    cr_assert_eq(plan_shape(&c, &in, &out, 4194304, 64, &p), KG_NORM_LEAN2);
    cr_assert_eq(p.args.group, 4);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(p.grid, 131072);
    cr_assert_eq(plan_shape(&rn, &in, &out, 2097152, 128, &p), KG_NORM_LEAN2);
    cr_assert_eq(p.args.group, 8);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(plan_shape(&c, &in, &out, 1000, 256, &p), KG_NORM_LEAN4F); /* not 256 */
    cr_assert_eq(plan_shape(&c, &in, &out, 4194304, 32, &p), KG_NORM_LEAN2);
    cr_assert_eq(p.args.group, 2);
    kgi_norm_tuning.lean2 = 0;
    kg_tensor o32 = fake(OUT_AT, KG_BF16, 1, KT_SHAPE(4194304));
    kg_norm_call lse32 = {.op = KG_NORM_LOGSUMEXP, .in = &in, .s0 = &o32, .axes = ax1, .n_axes = 1};
    kg_norm_call ln32 = {.op = KG_NORM_LAYER_NORM, .in = &in, .out = &out, .k = 1, .eps = 1e-5};
    /* the 2-byte logsumexp and layer_norm too, two rows a group (LEAN2R, lean2_rule): 128 rows a block */
    cr_assert_eq(plan_class(&lse32, &p), KG_NORM_LEAN2R);
    cr_assert_eq(p.args.group, 2);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(p.grid, 32768);
    cr_assert_eq(plan_class(&ln32, &p), KG_NORM_LEAN2R);
    cr_assert_eq(p.args.group, 2);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(p.grid, 32768);
    kgi_norm_tuning.pair = -1; /* the tuning's pair -1: PACKED */
    cr_assert_eq(plan_class(&lse32, &p), KG_NORM_PACKED);
    cr_assert_eq(plan_class(&ln32, &p), KG_NORM_PACKED);
    kgi_norm_tuning.pair = 1; /* every op */
    kgi_norm_tuning.lean2 = -1;
    cr_assert_eq(plan_class(&lse32, &p), KG_NORM_LEAN4F);
    expect_pair_launch(&p);
    cr_assert_eq(plan_class(&ln32, &p), KG_NORM_LEAN4);
    expect_pair_launch(&p);
    kgi_norm_tuning.lean2 = 1;
    cr_assert_eq(plan_class(&lse32, &p), KG_NORM_LEAN2);
    cr_assert_eq(plan_class(&ln32, &p), KG_NORM_LEAN2);
    kgi_norm_tuning.lean2 = 0;
    kgi_norm_tuning.pair = -1; /* none: the plans before */
    cr_assert_eq(plan_class(&c, &p), KG_NORM_PACKED);
    cr_assert_eq(plan_class(&rn, &p), KG_NORM_PACKED);
    kgi_norm_tuning.pair = 0;
    /* the residual form: not a pair (PACKED as before) */
    kg_tensor r32 = fake(W_AT, KG_BF16, 2, KT_SHAPE(4194304, 32));
    kg_norm_call rr32 = {.op = KG_NORM_RMS_NORM, .in = &in, .out = &out, .res = &r32, .k = 1};
    cr_assert_eq(plan_class(&rr32, &p), KG_NORM_PACKED);
    in.dtype = out.dtype = KG_F32;
    /* f32: LEAN4 of 4 lanes (the tuning's lean 4: 2 lanes in blocks of 512, at the cap, as before) */
    cr_assert_eq(plan_shape(&c, &in, &out, 4194304, 32, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 4);
    cr_assert_eq(p.args.nv, 2);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(p.grid, 131072);
    cr_assert_eq(plan_class(&lsm2, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 4);
    cr_assert_eq(p.block, 128);
    kgi_norm_tuning.lean = 4;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 2);
    cr_assert_eq(p.block, 512);
    cr_assert_eq(p.grid, 132 * 32);
    kgi_norm_tuning.lean = 0;
    cr_assert_eq(plan_class(&rn, &p), KG_NORM_LEAN4); /* rms_norm: the same pair */
    cr_assert_eq(p.args.group, 4);
    cr_assert_eq(p.args.nv, 2);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(p.grid, 131072);
    kgi_norm_tuning.pair = -1; /* the plan before: 2 lanes in blocks of 512, at the cap */
    cr_assert_eq(plan_class(&rn, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 2);
    cr_assert_eq(p.block, 512);
    cr_assert_eq(p.grid, 132 * 32);
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 2);
    cr_assert_eq(p.block, 512);
    kgi_norm_tuning.lean2 = 1; /* LEAN2: the 2-byte types alone */
    cr_assert_eq(plan_class(&rn, &p), KG_NORM_LEAN4);
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN4);
    kgi_norm_tuning.lean2 = 0;
    kgi_norm_tuning.pair = 0;
    /* layer_norm too (f32: 4 lanes), not logsumexp (f32: 2 lanes at the cap, measured) but under the
       tuning's pair 1 */
    cr_assert_eq(plan_class(&ln32, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 4);
    cr_assert_eq(p.block, 128);
    cr_assert_eq(p.grid, 131072);
    o32.dtype = KG_F32;
    cr_assert_eq(plan_class(&lse32, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 2);
    cr_assert_eq(p.block, 512);
    cr_assert_eq(p.grid, 132 * 32);
    kgi_norm_tuning.pair = 1;
    cr_assert_eq(plan_class(&lse32, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 4);
    cr_assert_eq(p.block, 128);
    kgi_norm_tuning.pair = -1;
    cr_assert_eq(plan_class(&ln32, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 2);
    kgi_norm_tuning.pair = 0;
    /* short rows: blocks of 64 rows, a block each */
    cr_assert_eq(plan_shape(&c, &in, &out, 2097152, 128, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 8);
    cr_assert_eq(p.block, 512);
    cr_assert_eq(p.grid, 32768);
    /* the tunings: ROWS, LEAN4, more lanes, a block for warp groups */
    kgi_norm_tuning.lean = -1;
    cr_assert_eq(plan_shape(&c, &in, &out, 65536, 4096, &p), KG_NORM_ROWS);
    kgi_norm_tuning.lean = 4;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 256);
    kgi_norm_tuning.group = 1024;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 1024);
    cr_assert_eq(p.args.nv, 1);
    cr_assert_eq(p.block, 1024);
    kgi_norm_tuning.group = 0;
    kgi_norm_tuning.threads = 512;
    cr_assert_eq(plan_shape(&c, &in, &out, 1000, 512, &p), KG_NORM_LEAN4);
    cr_assert_eq(p.args.group, 32);
    cr_assert_eq(p.block, 512);
    cr_assert_eq(p.grid, 63); /* 16 rows a block */
    kgi_norm_tuning.threads = 0;
    kgi_norm_tuning.lean = 0;
    /* the residual form: LEAN4_RES up to 512 lanes (every dtype), ROWS_RES
       for longer rows; rows in two outer dims take ROWS */
    kg_tensor res = fake(W_AT, KG_F32, 2, KT_SHAPE(100, 16384));
    kg_norm_call r = {.op = KG_NORM_RMS_NORM, .in = &in, .out = &out, .res = &res, .k = 1};
    cr_assert_eq(plan_shape(&r, &in, &out, 100, 16384, &p), KG_NORM_ROWS_RES);
    res = fake(W_AT, KG_F32, 2, KT_SHAPE(65536, 4096));
    cr_assert_eq(plan_shape(&r, &in, &out, 65536, 4096, &p), KG_NORM_LEAN4_RES);
    cr_assert_eq(p.args.group, 256);
    in.dtype = out.dtype = res.dtype = KG_BF16;
    cr_assert_eq(plan_shape(&r, &in, &out, 65536, 4096, &p), KG_NORM_LEAN4_RES);
    cr_assert_eq(p.args.group, 128);
    kgi_norm_tuning.lean = 8;
    cr_assert_eq(plan_class(&r, &p), KG_NORM_LEAN8_RES);
    kgi_norm_tuning.lean = 0;
    /* the variant tunings, <= 512 lanes (the residual form: LEAN4_RESC) */
    kgi_norm_tuning.variant = 1;
    cr_assert_eq(plan_class(&r, &p), KG_NORM_LEAN4_RESC);
    cr_assert_eq(plan_shape(&ln, &in, &out, 65536, 4096, &p), KG_NORM_LEAN8C);
    cr_assert_eq(p.args.group, 64);
    kgi_norm_tuning.variant = 2;
    cr_assert_eq(plan_class(&ln, &p), KG_NORM_LEAN8S);
    kgi_norm_tuning.lean = 4; /* the variants are LEAN8's */
    cr_assert_eq(plan_class(&ln, &p), KG_NORM_LEAN8S);
    cr_assert_eq(plan_shape(&ln, &in, &out, 100, 65536, &p), KG_NORM_ROWS); /* 1024 lanes */
    kgi_norm_tuning.lean = 0;
    kgi_norm_tuning.variant = -1; /* plain LEAN: the old 2-byte layer_norm */
    cr_assert_eq(plan_shape(&ln, &in, &out, 65536, 4096, &p), KG_NORM_LEAN4);
    kgi_norm_tuning.variant = 0;
    /* PF: the prefetching form of the LEAN class taken, <= 512 lanes */
    kgi_norm_tuning.pf = 1;
    cr_assert_eq(plan_shape(&ln, &in, &out, 65536, 4096, &p), KG_NORM_LEAN8P); /* LEAN8S's */
    cr_assert_eq(p.args.group, 64);
    cr_assert_eq(plan_class(&r, &p), KG_NORM_LEAN4_RES); /* not the residual form */
    kgi_norm_tuning.lean = 4;
    cr_assert_eq(plan_class(&ln, &p), KG_NORM_LEAN4P);
    cr_assert_eq(p.args.group, 128);
    cr_assert_eq(plan_shape(&ln, &in, &out, 100, 32768, &p), KG_NORM_LEAN4); /* 1024 lanes */
    kgi_norm_tuning.grid = 3;
    cr_assert_eq(plan_shape(&ln, &in, &out, 65536, 4096, &p), KG_NORM_LEAN4P);
    cr_assert_eq(p.grid, 3);
    kgi_norm_tuning = (kg_norm_tuning){.lean = 16}; /* LEAN16: the 2-byte rms_norm, <= 512 lanes */
    cr_assert_eq(plan_shape(&rn, &in, &out, 65536, 4096, &p), KG_NORM_LEAN16);
    cr_assert_eq(p.args.group, 32);
    cr_assert_eq(p.block, 512);
    cr_assert_eq(plan_shape(&rn, &in, &out, 16384, 16384, &p), KG_NORM_LEAN16);
    cr_assert_eq(p.args.group, 128);
    /* layer_norm: not LEAN16 (the 2-byte modules hold none of it) */
    cr_assert_neq(plan_shape(&ln, &in, &out, 65536, 4096, &p), KG_NORM_LEAN16);
    cr_assert_eq(plan_shape(&r, &in, &out, 65536, 4096, &p), KG_NORM_LEAN4_RES); /* not the residual form */
    kgi_norm_tuning = (kg_norm_tuning){0};
    kg_tensor pin = fake(IN_AT, KG_F32, 3, KT_SHAPE(9, 37, 64));
    pin.strides[0] = 64;
    pin.strides[1] = 9 * 64;
    kg_tensor pout = fake(OUT_AT, KG_F32, 3, KT_SHAPE(9, 37, 64));
    kg_norm_call pc = {.op = KG_NORM_SOFTMAX, .in = &pin, .out = &pout, .axis = -1};
    cr_assert_eq(plan_class(&pc, &p), KG_NORM_ROWS);
}

Test(plan, short_rows_of_1_to_32_vectors_are_packed)
{
    const int64_t lens[] = {4, 8, 32, 64, 128};
    for (int i = 0; i < 5; i++) {
        kg_tensor in = fake(IN_AT, KG_F32, 2, KT_SHAPE(1000, lens[i]));
        kg_tensor out = fake(OUT_AT, KG_F32, 2, KT_SHAPE(1000, lens[i]));
        kg_norm_call c = {.op = KG_NORM_RMS_NORM, .in = &in, .out = &out, .k = 1};
        kg_norm_plan p;
        /* PACKED below 8 vectors, LEAN4 (4 vectors a lane) from 8, a block a unit (f32 rms_norm's PF form
           LEAN4P until s15r2: [4194304,64] 96.8% of copy against LEAN4's 99.3) */
        cr_assert_eq(plan_class(&c, &p), lens[i] < 32 ? KG_NORM_PACKED : KG_NORM_LEAN4, "length %lld",
                     (long long)lens[i]);
        /* (32: 2 vectors a lane, pair32) */
        cr_assert_eq(p.args.group, lens[i] < 32 ? lens[i] / 4 : lens[i] == 32 ? 4 : lens[i] / 16);
        c.op = KG_NORM_LOG_SOFTMAX;
        c.axis = 1;
        cr_assert_eq(plan_class(&c, &p), lens[i] < 32 ? KG_NORM_PACKED : KG_NORM_LEAN4, "length %lld",
                     (long long)lens[i]);
        kgi_norm_tuning.lean = -1; /* the tuning without LEAN: PACKED */
        cr_assert_eq(plan_class(&c, &p), KG_NORM_PACKED, "length %lld", (long long)lens[i]);
        cr_assert_eq(p.args.group, lens[i] / 4);
        kgi_norm_tuning.lean = 0;
    }
    /* 96 elements: 24 vectors, not a power of two: rows (LEAN) */
    kg_tensor in = fake(IN_AT, KG_F32, 2, KT_SHAPE(1000, 96)), out = fake(OUT_AT, KG_F32, 2, KT_SHAPE(1000, 96));
    kg_norm_call c = {.op = KG_NORM_SOFTMAX, .in = &in, .out = &out, .axis = 1};
    kg_norm_plan p;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN4);
}

Test(plan, unaligned_or_odd_rows_are_strided)
{
    kg_tensor in = fake(IN_AT, KG_F32, 2, KT_SHAPE(10, 33)), out = fake(OUT_AT, KG_F32, 2, KT_SHAPE(10, 33));
    kg_norm_call c = {.op = KG_NORM_SOFTMAX, .in = &in, .out = &out, .axis = 1};
    kg_norm_plan p;
    /* contiguous rows 16-byte vectors do not tile but 4-byte words do (2-byte
       rows of even length): LEANW, 16 words a lane, at least 8 lanes; f32
       takes LEANU (LEANW only by the tuning) */
    in.dtype = out.dtype = KG_BF16;
    cr_assert_eq(plan_shape(&c, &in, &out, 10, 34, &p), KG_NORM_LEANW16);
    cr_assert_eq(p.args.group, 8);
    cr_assert_eq(p.args.nv, 3); /* 17 words, 8 lanes */
    cr_assert_eq(p.tail, 0);
    cr_assert_eq(plan_shape(&c, &in, &out, 100, 4098, &p), KG_NORM_LEANW16);
    cr_assert_eq(p.args.group, 256); /* 2049 words */
    cr_assert_eq(plan_shape(&c, &in, &out, 10, 33, &p), KG_NORM_LEANU4S); /* odd: no whole words */
    kgi_norm_tuning.leanw = 8;
    cr_assert_eq(plan_shape(&c, &in, &out, 100, 4098, &p), KG_NORM_LEANW8);
    cr_assert_eq(p.args.group, 512);
    in.dtype = out.dtype = KG_F32;
    cr_assert_eq(plan_shape(&c, &in, &out, 10, 33, &p), KG_NORM_LEANW8);
    cr_assert_eq(p.args.group, 8);
    cr_assert_eq(p.args.nv, 5);
    kgi_norm_tuning.leanw = 16;
    cr_assert_eq(plan_shape(&c, &in, &out, 100, 8193, &p), KG_NORM_LEANW16);
    cr_assert_eq(p.args.group, 1024);
    cr_assert_eq(plan_shape(&c, &in, &out, 100, 16384 + 33, &p), KG_NORM_LEANU8S); /* too long for LEANW */
    kgi_norm_tuning.leanw = 0;
    /* without LEANW (the tuning): LEANU (masked vectors; f32 8 a lane: 33
       elements span at most 10 vectors, 2 lanes); STRIDED without it (the
       tuning), for f64, and for rows too long for one block */
    kgi_norm_tuning.leanw = -1;
    cr_assert_eq(plan_shape(&c, &in, &out, 10, 33, &p), KG_NORM_LEANU8S);
    cr_assert_eq(p.args.group, 2);
    cr_assert_eq(p.args.nv, 5);
    /* 330 elements end off a vector boundary: the last row by STRIDED */
    cr_assert_eq(p.tail, 1);
    cr_assert_eq(p.args.rows, 9);
    cr_assert_eq(p.targs.rows, 1);
    cr_assert_eq(p.toff[KG_NO_IN], 9 * 33);
    kgi_norm_tuning.leanu = -1;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_STRIDED);
    kgi_norm_tuning.leanu = 4;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEANU4S);
    kgi_norm_tuning.usan = -1; /* the masked folds */
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEANU4);
    kgi_norm_tuning.leanu = 0;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEANU8);
    kgi_norm_tuning.usan = 0;
    cr_assert_eq(plan_shape(&c, &in, &out, 100, 4097, &p), KG_NORM_LEANU8S);
    cr_assert_eq(p.args.group, 256); /* 1026 vectors at most */
    cr_assert_eq(p.tail, 0);         /* 409700 elements: whole vectors */
    cr_assert_eq(p.args.rows, 100);
    cr_assert_eq(plan_shape(&c, &in, &out, 1, 33, &p), KG_NORM_STRIDED); /* one row, its end off a vector */
    cr_assert_eq(plan_shape(&c, &in, &out, 10, 65537, &p), KG_NORM_STRIDED);
    in.dtype = out.dtype = KG_BF16;
    cr_assert_eq(plan_shape(&c, &in, &out, 100, 4097, &p), KG_NORM_LEANU4S);
    cr_assert_eq(p.args.group, 256); /* 514 vectors at most, 4 a lane: 129 -> 256 lanes */
    in.dtype = out.dtype = KG_F64;
    cr_assert_eq(plan_shape(&c, &in, &out, 100, 4097, &p), KG_NORM_STRIDED);
    in.dtype = out.dtype = KG_F32;
    /* a residual of another row stride than the input's: STRIDED */
    kg_tensor res = fake(W_AT, KG_F32, 2, KT_SHAPE(10, 33)), w = fake(S_AT, KG_F32, 1, KT_SHAPE(33));
    kg_norm_call r = {.op = KG_NORM_RMS_NORM, .in = &in, .out = &out, .res = &res, .w = &w, .k = 1};
    in = fake(IN_AT, KG_F32, 2, KT_SHAPE(10, 33));
    out = fake(OUT_AT, KG_F32, 2, KT_SHAPE(10, 33));
    cr_assert_eq(plan_class(&r, &p), KG_NORM_LEANU4S_RES);
    kgi_norm_tuning.usan = -1;
    cr_assert_eq(plan_class(&r, &p), KG_NORM_LEANU4_RES);
    kgi_norm_tuning.usan = 0;
    res.strides[0] = 40;
    cr_assert_eq(plan_class(&r, &p), KG_NORM_STRIDED);
    kgi_norm_tuning.leanw = 8; /* LEANW (f32 by the tuning): each operand its own row stride */
    cr_assert_eq(plan_class(&r, &p), KG_NORM_LEANW8_RES);
    kgi_norm_tuning.leanw = -1;
    in = fake(IN_AT + 4, KG_F32, 2, KT_SHAPE(10, 64)); /* misaligned start */
    out = fake(OUT_AT, KG_F32, 2, KT_SHAPE(10, 64));
    cr_assert_eq(plan_class(&c, &p), KG_NORM_STRIDED);
    kgi_norm_tuning.leanw = 0; /* 4-byte aligned 2-byte rows: LEANW */
    in = fake(IN_AT + 4, KG_BF16, 2, KT_SHAPE(10, 64));
    out = fake(OUT_AT, KG_BF16, 2, KT_SHAPE(10, 64));
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEANW16);
    in = fake(IN_AT + 2, KG_BF16, 2, KT_SHAPE(10, 64)); /* 2-byte aligned only: STRIDED */
    out = fake(OUT_AT, KG_BF16, 2, KT_SHAPE(10, 64));
    cr_assert_eq(plan_class(&c, &p), KG_NORM_STRIDED);
    /* every other element, nothing contiguous */
    in = fake(IN_AT, KG_F32, 2, KT_SHAPE(64, 64));
    in.strides[0] = 256;
    in.strides[1] = 2;
    out = fake(OUT_AT, KG_F32, 2, KT_SHAPE(64, 64));
    cr_assert_eq(plan_class(&c, &p), KG_NORM_STRIDED);
}

Test(plan, an_outer_axis_takes_columns_split_when_too_few)
{
    kg_tensor in = fake(IN_AT, KG_F32, 2, KT_SHAPE(16384, 16384)),
              out = fake(OUT_AT, KG_F32, 2, KT_SHAPE(16384, 16384));
    kg_norm_call c = {.op = KG_NORM_SOFTMAX, .in = &in, .out = &out, .axis = 0};
    kg_norm_plan p;
    /* softmax where CLUSTER does not serve: COLS for rows of 16-byte multiples, COLSV for those of
       8-byte ones */
    kgi_norm_tuning.cluster = -1;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_COLS_STATS);
    /* 216-byte rows of bf16 (8-byte vectors): one tile of 32 lanes x 4 */
    in.dtype = out.dtype = KG_BF16;
    cr_assert_eq(plan_shape(&c, &in, &out, 1242756, 108, &p), KG_NORM_COLSV_STATS8);
    cr_assert_eq(p.args.group, 32);
    cr_assert_eq(p.args.tiles, 1);
    cr_assert_gt(p.args.splits, 100);
    cr_assert_leq(p.partial_bytes, (size_t)4 << 20);
    /* 24 bf16 columns: 16-byte rows, COLS; 20: 8-byte vectors, 8 lanes (5 used) */
    cr_assert_eq(plan_shape(&c, &in, &out, 100000, 24, &p), KG_NORM_COLS_STATS);
    cr_assert_eq(plan_shape(&c, &in, &out, 100000, 20, &p), KG_NORM_COLSV_STATS8);
    cr_assert_eq(p.args.group, 8);
    /* odd rows of bf16 (2-byte alignment), even rows of 4-byte multiples: COLS */
    cr_assert_eq(plan_shape(&c, &in, &out, 100000, 2013, &p), KG_NORM_COLS_STATS);
    cr_assert_eq(plan_shape(&c, &in, &out, 100000, 2014, &p), KG_NORM_COLS_STATS);
    /* f32 rows of 2682 (8-byte vectors, 1341 of them): 32 lanes x 2 columns, 42 tiles */
    in.dtype = out.dtype = KG_F32;
    cr_assert_eq(plan_shape(&c, &in, &out, 25021, 2682, &p), KG_NORM_COLSV_STATS8);
    cr_assert_eq(p.args.tiles, 42);
    /* the tuning's -1: COLS */
    kgi_norm_tuning.colsv = -1;
    cr_assert_eq(plan_shape(&c, &in, &out, 16384, 16384, &p), KG_NORM_COLS_STATS);
    cr_assert_eq(p.args.cols, 16384);
    cr_assert_eq(p.args.tiles, 512);
    cr_assert_eq(p.args.n, 16384);
    cr_assert_eq(plan_shape(&c, &in, &out, 4194304, 64, &p), KG_NORM_COLS_STATS);
    cr_assert_gt(p.args.splits, 100);
    cr_assert_leq(p.partial_bytes, (size_t)4 << 20);
    kgi_norm_tuning = (kg_norm_tuning){0};
    /* logsumexp over the two outer dims of [8,128,256]: they merge into one */
    kg_tensor x = fake(IN_AT, KG_F32, 3, KT_SHAPE(8, 128, 256)), o = fake(OUT_AT, KG_F32, 1, KT_SHAPE(256));
    const int axes[] = {0, 1};
    kg_norm_call l = {.op = KG_NORM_LOGSUMEXP, .in = &x, .s0 = &o, .axes = axes, .n_axes = 2};
    cr_assert_eq(plan_class(&l, &p), KG_NORM_COLS_STATS);
    cr_assert_eq(p.args.n, 1024);
}

/* The call plans the column class with CLUSTER configuration ccfg (clusters
   of csize blocks, ctiles column tiles an outer position, a grid of cgrid
   blocks of cblock). */
static void assert_cluster_plan(const kg_norm_call *c, kg_norm_plan *p, int ccfg, int csize, int64_t ctiles,
                                unsigned cgrid, unsigned cblock)
{
    cr_assert_eq(plan_class(c, p), KG_NORM_COLS_STATS);
    cr_assert_eq(p->ccfg, ccfg);
    cr_assert_eq(p->csize, csize);
    cr_assert_eq(p->ctiles, ctiles);
    cr_assert_eq(p->cgrid, cgrid);
    cr_assert_eq(p->cblock, cblock);
}

Test(plan, an_outer_softmax_takes_clusters_on_sm90)
{
    kg_tensor in = fake(IN_AT, KG_F32, 2, KT_SHAPE(16384, 16384)),
              out = fake(OUT_AT, KG_F32, 2, KT_SHAPE(16384, 16384));
    kg_norm_call c = {.op = KG_NORM_SOFTMAX, .in = &in, .out = &out, .axis = 0};
    kg_norm_plan p;
    /* 16 blocks of 1024 rows, 32 columns a strip (f32: configuration 6,
       the tree merge, softmax keeping its exps; bf16: configuration 28, 0
       with packed maxima and 16-byte stores, since session 25) */
    kgi_norm_tuning.sm90 = 1;
    assert_cluster_plan(&c, &p, 6, 16, 512, 512u * 16u, 256u);
    cr_assert_eq(p.cchunk, 1024);
    cr_assert_eq(p.args.tiles, 512); /* the COLS plan stands beside it */
    /* 1000 rows: one block; bf16: 64 columns a strip */
    plan_shape(&c, &in, &out, 1000, 4096, &p);
    cr_assert_eq(p.ccfg, 6);
    cr_assert_eq(p.csize, 1);
    cr_assert_eq(p.cgrid, 128u);
    kg_norm_call lsm = c;
    lsm.op = KG_NORM_LOG_SOFTMAX;
    plan_shape(&lsm, &in, &out, 1000, 4096, &p);
    cr_assert_eq(p.ccfg, 6);
    in.dtype = out.dtype = KG_BF16;
    plan_shape(&c, &in, &out, 8192, 4096, &p);
    cr_assert_eq(p.ccfg, 28);
    cr_assert_eq(p.ctiles, 64);
    cr_assert_eq(p.csize, 8);
    /* 257..999 rows: one block (COLT below 257, tested apart; 257..399 since session 23); past 16384: COLS */
    plan_shape(&c, &in, &out, 999, 4096, &p);
    cr_assert_eq(p.ccfg, 28);
    cr_assert_eq(p.csize, 1);
    plan_shape(&c, &in, &out, 257, 4096, &p);
    cr_assert_eq(p.ccfg, 28);
    cr_assert_eq(p.csize, 1);
    plan_shape(&c, &in, &out, 16385, 4096, &p);
    cr_assert_eq(p.ccfg, -1);
    /* a configuration of the tuning: any column that fits 16 of its blocks
       (configuration 3, 2048 rows a block, until session 24, then 4 until
       session 34: they have no kernels since, gen/norm.lua) */
    kgi_norm_tuning.cluster = 29; /* 28: 256 x (16 + 16): 1024 rows a block */
    plan_shape(&c, &in, &out, 16384, 4096, &p);
    cr_assert_eq(p.ccfg, 28);
    cr_assert_eq(p.csize, 16);
    plan_shape(&c, &in, &out, 16385, 4096, &p);
    cr_assert_eq(p.ccfg, -1);
    plan_shape(&c, &in, &out, 10, 4096, &p);
    cr_assert_eq(p.ccfg, 28);
    cr_assert_eq(p.csize, 1);
    kgi_norm_tuning.csize = 4;
    plan_shape(&c, &in, &out, 1000, 4096, &p);
    cr_assert_eq(p.csize, 4);
    cr_assert_eq(p.cchunk, 250);
    /* configurations without kernels for the dtype since session 24 (gen/norm.lua's dts): COLS; bf16: 1-3 and
       6 (the tunings 2-4 and 7), f32: 0-3; since session 34 4 and 5 (PH) of both (the tunings 5, 6) */
    static const int none[2][6] = {{2, 3, 4, 7, 5, 6}, {1, 2, 3, 4, 5, 6}};
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 6; i++) {
            in.dtype = out.dtype = d ? KG_F32 : KG_BF16;
            kgi_norm_tuning.cluster = none[d][i];
            plan_shape(&c, &in, &out, 1000, 4096, &p);
            cr_assert_eq(p.ccfg, -1, "%s tuning %d", d ? "f32" : "bf16", none[d][i]);
            cr_assert_eq(kg_norm_ctable[KG_NORM_SOFTMAX][in.dtype][none[d][i] - 1], -1);
        }
    in.dtype = out.dtype = KG_BF16;
    kgi_norm_tuning.cluster = 0;
    kgi_norm_tuning.csize = 0;
    /* columns not whole vectors, f64, the tuning's -1: COLS */
    in.dtype = out.dtype = KG_F32;
    plan_shape(&c, &in, &out, 1000, 4098, &p);
    cr_assert_eq(p.ccfg, -1);
    in.dtype = out.dtype = KG_F64;
    plan_shape(&c, &in, &out, 1000, 4096, &p);
    cr_assert_eq(p.ccfg, -1);
    in.dtype = out.dtype = KG_F32;
    kgi_norm_tuning.cluster = -1;
    plan_shape(&c, &in, &out, 1000, 4096, &p);
    cr_assert_eq(p.ccfg, -1);
    /* logsumexp: COLS (one read already) */
    kgi_norm_tuning.cluster = 0;
    const int axes[] = {0};
    kg_tensor o = fake(OUT_AT, KG_F32, 1, KT_SHAPE(4096));
    kg_norm_call l = {.op = KG_NORM_LOGSUMEXP, .in = &in, .s0 = &o, .axes = axes, .n_axes = 1};
    cr_assert_eq(plan_class(&l, &p), KG_NORM_COLS_STATS);
    cr_assert_eq(p.ccfg, -1);
    /* the device's own default: f32 on sm_90 by configuration 6, COLS elsewhere */
    kgi_norm_tuning = (kg_norm_tuning){0};
    int ma = 0, mi = 0;
    kg_device_info(cpu_ctx, NULL, 0, &ma, &mi, NULL);
    plan_shape(&c, &in, &out, 1000, 4096, &p);
    cr_assert_eq(p.ccfg, ma == 9 && mi == 0 ? 6 : -1);
}

/* COLT (CLUSTER configurations 7-12, one block a tile): an outer axis of fewer
   than 1000 rows on sm_90 by the configuration whose rows hold the column
   with the widest tile the columns fill (the fewest vectors a lane among
   those); 257..999 rows: one block of the default cluster configuration; a column longer than
   a forced configuration's rows: COLS (no clusters of COLT); the cluster-size
   tuning leaves COLT at one block. */
Test(plan, an_outer_softmax_of_few_rows_takes_one_block_a_tile)
{
    kg_tensor in = fake(IN_AT, KG_F32, 2, KT_SHAPE(64, 4096)), out = fake(OUT_AT, KG_F32, 2, KT_SHAPE(64, 4096));
    kg_norm_call c = {.op = KG_NORM_SOFTMAX, .in = &in, .out = &out, .axis = 0};
    kg_norm_plan p;
    for (int k = 7; k <= 12; k++)
        cr_assert(kg_norm_ccfgs[k].one, "configuration %d", k);
    cr_assert_eq(KG_NORM_CCFG_COUNT, 33);
    cr_assert(!kg_norm_ccfgs[6].one);
    cr_assert_eq(kg_norm_ccfgs[9].rows, 64);
    kgi_norm_tuning.sm90 = 1;
    /* 64 rows: 64 lanes x 16 vectors (1 KiB of columns), 16 tiles */
    assert_cluster_plan(&c, &p, 9, 1, 16, 16u, 256u);
    /* f32 [rows, cols] along dim 0: the configuration, and where given (not
       -1) the cluster size and the tiles a row. 3 rows: 256 lanes x 4
       vectors (4 KiB); 8: 256 x 8; 10: 64 x 4; 17 rows of 32 vectors: 32
       lanes (the widest tile they fill) x 16; 65: 32 x 16 (128 rows); 200:
       16 x 16 (256 rows); 10 or 15 vectors of columns: the narrow
       configuration of 8 lanes a row (f32: 29, 13 with 16-byte stores, since
       session 25), 16: 16 lanes; 257..999 rows: one
       block of configuration 6 (257..399 since session 23) */
    static const struct {
        int rows, cols, ccfg, csize, ctiles;
    } few[] = {
        {3, 4096, 11, -1, 4},    {8, 4096, 12, -1, -1},   {10, 4096, 10, -1, -1}, {17, 128, 8, -1, -1},
        {65, 4096, 8, -1, -1},   {200, 4096, 7, -1, -1},  {100, 40, 29, -1, 2},   {100, 60, 29, -1, 2},
        {100, 64, 7, -1, 1},     {257, 4096, 6, 1, -1},   {399, 4096, 6, 1, -1},   {400, 4096, 6, 1, -1},
        {999, 40, 6, 1, -1},
    };
    for (size_t i = 0; i < sizeof few / sizeof few[0]; i++) {
        plan_shape(&c, &in, &out, few[i].rows, few[i].cols, &p);
        cr_assert_eq(p.ccfg, few[i].ccfg, "[%d,%d]: configuration %d", few[i].rows, few[i].cols, p.ccfg);
        if (few[i].csize >= 0)
            cr_assert_eq(p.csize, few[i].csize, "[%d,%d]: cluster size %d", few[i].rows, few[i].cols, p.csize);
        if (few[i].ctiles >= 0)
            cr_assert_eq(p.ctiles, few[i].ctiles, "[%d,%d]: %d tiles", few[i].rows, few[i].cols, p.ctiles);
    }
    /* bf16: 8 columns a vector */
    in.dtype = out.dtype = KG_BF16;
    plan_shape(&c, &in, &out, 64, 4096, &p);
    cr_assert_eq(p.ccfg, 9);
    cr_assert_eq(p.ctiles, 8);
    /* dim 1 of [4096,64,1024]: 4 tiles an outer position */
    in.dtype = out.dtype = KG_F32;
    in = fake(IN_AT, KG_F32, 3, KT_SHAPE(4096, 64, 1024));
    out = fake(OUT_AT, KG_F32, 3, KT_SHAPE(4096, 64, 1024));
    c.axis = 1;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_COLS_STATS);
    cr_assert_eq(p.ccfg, 9);
    cr_assert_eq(p.ctiles, 4);
    cr_assert_eq(p.cgrid, 4096u * 4u);
    /* forced: a column the configuration's block does not hold takes COLS; csize leaves one block */
    kgi_norm_tuning.cluster = 11; /* configuration 10: 16 rows */
    kgi_norm_tuning.csize = 4;
    c.axis = 0;
    plan_shape(&c, &in, &out, 16, 4096, &p);
    cr_assert_eq(p.ccfg, 10);
    cr_assert_eq(p.csize, 1);
    plan_shape(&c, &in, &out, 17, 4096, &p);
    cr_assert_eq(p.ccfg, -1);
    /* logsumexp: COLS */
    kgi_norm_tuning = (kg_norm_tuning){.sm90 = 1};
    const int axes[] = {0};
    kg_tensor o = fake(OUT_AT, KG_F32, 1, KT_SHAPE(4096));
    plan_shape(&c, &in, &out, 64, 4096, &p);
    kg_norm_call l = {.op = KG_NORM_LOGSUMEXP, .in = &in, .s0 = &o, .axes = axes, .n_axes = 1};
    cr_assert_eq(plan_class(&l, &p), KG_NORM_COLS_STATS);
    cr_assert_eq(p.ccfg, -1);
    kgi_norm_tuning = (kg_norm_tuning){0};
}

/* COLT's narrow configurations (13-16: 8, 4, 2, 1 lanes a row, 256 threads, 8
   vectors a lane; 17-19 tunings alone: 128 threads x 8, 256 x 4, 256 x 16,
   8 lanes a row): columns of fewer than 16 vectors
   along an outer axis of up to 256 rows (lpr 8) take the configuration whose
   lanes the columns fill best, the row groups a tile the fewest (a power of
   two) that hold the column, several tiles a block; the tuning's narrow -1:
   COLS. */
Test(plan, an_outer_softmax_of_narrow_columns_takes_several_tiles_a_block)
{
    kg_tensor in = fake(IN_AT, KG_F32, 3, KT_SHAPE(262144, 32, 32)),
              out = fake(OUT_AT, KG_F32, 3, KT_SHAPE(262144, 32, 32));
    kg_norm_call c = {.op = KG_NORM_SOFTMAX, .in = &in, .out = &out, .axis = 1};
    kg_norm_plan p;
    static const int lprs[] = {8, 4, 2, 1, 8};
    for (int k = 13; k < 18; k++) {
        cr_assert(kg_norm_ccfgs[k].one, "configuration %d", k);
        cr_assert_eq(kg_norm_ccfgs[k].lpr, lprs[k - 13], "configuration %d", k);
        cr_assert_eq(kg_norm_ccfgs[k].alt, k >= 17, "configuration %d", k);
    }
    for (int k = 0; k < 13; k++)
        cr_assert(!kg_norm_ccfgs[k].alt, "configuration %d", k);
    kgi_norm_tuning.sm90 = 1;
    /* [262144,32,32] dim 1: 8 vectors of columns, 32 rows: 8 lanes x 4 row groups, 8 tiles a block (f32: 29, 13 with
       16-byte stores, since session 25) */
    assert_cluster_plan(&c, &p, 29, 1, 1, 262144u / 8u, 256u);
    cr_assert_eq(p.crg, 4);
    cr_assert_eq(p.cbfly, 1); /* 8 x 4 lanes: a warp, butterflies */
    kgi_norm_tuning.nmerge = 1;
    plan_class(&c, &p);
    cr_assert_eq(p.cbfly, 0); /* the tuning: shared memory */
    kgi_norm_tuning.nmerge = 0;
    /* the tuning's narrow -1: COLS (main's plan before session 23) */
    kgi_norm_tuning.narrow = -1;
    plan_class(&c, &p);
    cr_assert_eq(p.ccfg, -1);
    cr_assert_eq(p.crg, 0);
    kgi_norm_tuning.narrow = 0;
    /* dim 1 of [outer, n, cols]: the configuration, row groups, tiles an outer position, grid */
    static const struct {
        kg_dtype dt;
        int64_t outer, n, cols;
        int ccfg, crg, ctiles;
        unsigned grid;
    } narrow[] = {
        {KG_F32, 1000, 2, 32, 29, 1, 1, 1000 / 32 + 1},   /* 32 tiles a block, the last block partial */
        {KG_F32, 1000, 33, 32, 29, 8, 1, 1000 / 4},       /* 5 vectors a lane, 4 tiles a block */
        {KG_F32, 999, 256, 32, 29, 32, 1, 999},           /* a tile a block */
        {KG_F32, 100, 257, 32, 6, 0, 1, 100},             /* one block of configuration 6 */
        {KG_F32, 300, 100, 40, 29, 16, 2, 300},           /* 10 vectors: 2 tiles of 8 lanes */
        {KG_F32, 3000, 17, 12, 14, 4, 1, 3000 / 16 + 1},  /* 3 vectors: 4 lanes */
        {KG_BF16, 131072, 100, 16, 15, 16, 1, 131072 / 8}, /* 2 vectors: 2 lanes */
        {KG_F32, 5000, 500, 4, 16, 64, 1, 5000 / 4},      /* 1 vector: a lane, 512 rows */
        {KG_F32, 100, 999, 4, 16, 128, 1, 100 / 2},       /* (999: 1024 rows) */
        {KG_F32, 100, 64, 64, 7, 0, 1, 100},              /* 16 vectors: not narrow (configuration 7, 16 lanes) */
    };
    for (size_t i = 0; i < sizeof narrow / sizeof narrow[0]; i++) {
        in = fake(IN_AT, narrow[i].dt, 3, KT_SHAPE(narrow[i].outer, narrow[i].n, narrow[i].cols));
        out = fake(OUT_AT, narrow[i].dt, 3, KT_SHAPE(narrow[i].outer, narrow[i].n, narrow[i].cols));
        plan_class(&c, &p);
        cr_assert_eq(p.ccfg, narrow[i].ccfg, "case %zu: configuration %d", i, p.ccfg);
        if (narrow[i].ccfg < 0)
            continue;
        cr_assert_eq(p.crg, narrow[i].crg, "case %zu: %d row groups", i, p.crg);
        cr_assert_eq(p.ctiles, narrow[i].ctiles, "case %zu: %lld tiles", i, (long long)p.ctiles);
        cr_assert_eq(p.cgrid, narrow[i].grid, "case %zu: grid %u", i, p.cgrid);
        cr_assert_eq(p.cbfly, narrow[i].crg == 0 ? 0 : kg_norm_ccfgs[p.ccfg].lpr * narrow[i].crg <= 32 ? 1 : 2,
                     "case %zu", i);
    }
    /* forced (a tuning): configuration 17 (128 threads, a tuning alone, never the planner's) has no kernels
       since session 34 (the bundle's size; gen/norm.lua): COLS, every dtype and op */
    in = fake(IN_AT, KG_F32, 3, KT_SHAPE(262144, 32, 32));
    out = fake(OUT_AT, KG_F32, 3, KT_SHAPE(262144, 32, 32));
    kgi_norm_tuning.cluster = 18;
    plan_class(&c, &p);
    cr_assert_eq(p.ccfg, -1);
    static const kg_dtype cdts[] = {KG_F32, KG_F16, KG_BF16};
    for (int d = 0; d < 3; d++)
        for (int o = 0; o < 2; o++)
            cr_assert(kg_norm_ctable[o ? KG_NORM_LOG_SOFTMAX : KG_NORM_SOFTMAX][cdts[d]][17] < 0,
                      "configuration 17, op %d, dtype %d", o, d);
    kgi_norm_tuning = (kg_norm_tuning){0};
}

/* softmax (c) and log_softmax (lsm) of bf16 [16384,16384] along dim 0, planned as on sm_90 */
static void bf16_dim0_calls(kg_tensor *in, kg_tensor *out, kg_norm_call *c, kg_norm_call *lsm)
{
    *in = fake(IN_AT, KG_BF16, 2, KT_SHAPE(16384, 16384));
    *out = fake(OUT_AT, KG_BF16, 2, KT_SHAPE(16384, 16384));
    *c = (kg_norm_call){.op = KG_NORM_SOFTMAX, .in = in, .out = out, .axis = 0};
    *lsm = *c;
    lsm->op = KG_NORM_LOG_SOFTMAX;
    kgi_norm_tuning.sm90 = 1;
}

/* Session 24's tuning configurations 18-29 after H200 s25r1 (2026-12-05): kernels only where a default takes them
   (runtime/norm.c's CCFG_EK1, CCFG_P2VS, CCFG_VS8): EK's 22 (the 2-byte softmax where COLT takes 16: a lane a row,
   4 vectors a lane, the sum's exps kept), P2 + VS's 28 (the 2-byte cluster default, was 0: packed maxima, flushed
   output exps, 16-byte stores) and VS's 29 (COLT's f32 default where it takes 13: 16-byte stores); L4 (18), EK 19-21,
   23, 24, ST (26) and VS's 27 lost and have none (forced: COLS); nor have 0 and the f32 13 (28's and 29's
   bits twins, GPU-checked in s25r1). Of session 26's candidates (P2 25, K4 30 and 31, K2 32; H100 s28r1) only K4's
   31 has kernels (f32), the default where COLT takes 15 at n <= 8: plan/the_session_26_candidates. */
Test(plan, the_session_24_tuning_configurations)
{
    for (int k = 18; k < KG_NORM_CCFG_COUNT; k++) {
        cr_assert_eq(kg_norm_ccfgs[k].one, (k >= 19 && k <= 24) || k >= 29, "configuration %d", k);
        cr_assert_eq(kg_norm_ccfgs[k].alt, (k >= 19 && k <= 24) || k >= 29, "configuration %d", k);
    }
    cr_assert_eq(kg_norm_ccfgs[22].lpr, 1);
    cr_assert_eq(kg_norm_ccfgs[22].k, 4);
    cr_assert_eq(kg_norm_ccfgs[22].rows, 1024); /* holds COLT's 999 rows, as 16 does */
    cr_assert_eq(kg_norm_ccfgs[28].rows, kg_norm_ccfgs[0].rows);
    cr_assert_eq(kg_norm_ccfgs[29].rows, kg_norm_ccfgs[13].rows);
    cr_assert_eq(kg_norm_ccfgs[29].lpr, kg_norm_ccfgs[13].lpr);
    /* the kernels, by configuration, op and dtype (0-3 none: 0 the 2-byte default until session 25; 6 f32; 13 the
       2-byte types, f32 until session 25; since session 34 none of 4, 5 (PH) and 17, nor 16 of the 2-byte softmax,
       which takes 22 there) */
    const kg_dtype dts[] = {KG_F32, KG_F16, KG_BF16};
    for (int d = 0; d < 3; d++)
        for (int op = 0; op < 2; op++) {
            const kg_norm_op o = op ? KG_NORM_LOG_SOFTMAX : KG_NORM_SOFTMAX;
            const int two = dts[d] != KG_F32;
            for (int k = 0; k < KG_NORM_CCFG_COUNT; k++) {
                const int want = k == 22                  ? two && !op
                                 : k == 28 || k == 13     ? two
                                 : k == 6 || k == 29 || k == 31 ? !two
                                 : k == 16                ? !two || op
                                 : k >= 17 || k <= 5      ? 0
                                                          : 1;
                cr_assert_eq(kg_norm_ctable[o][dts[d]][k] >= 0, want, "configuration %d, op %d, dtype %d", k, op, d);
            }
        }
    kg_tensor in, out;
    kg_norm_call c, lsm;
    kg_norm_plan p;
    bf16_dim0_calls(&in, &out, &c, &lsm);
    /* the 2-byte default: 28 (16 blocks of 1024 rows, 64 columns a strip), both ops, f16 too; f32: 6 */
    assert_cluster_plan(&c, &p, 28, 16, 256, 256u * 16u, 256u);
    assert_cluster_plan(&lsm, &p, 28, 16, 256, 256u * 16u, 256u);
    in.dtype = out.dtype = KG_F16;
    assert_cluster_plan(&c, &p, 28, 16, 256, 256u * 16u, 256u);
    in.dtype = out.dtype = KG_F32;
    assert_cluster_plan(&c, &p, 6, 16, 512, 512u * 16u, 256u);
    /* forced: 28; 0, L4, P2, ST, VS's 27: no kernels, COLS */
    in.dtype = out.dtype = KG_BF16;
    kgi_norm_tuning.cluster = 29;
    assert_cluster_plan(&lsm, &p, 28, 16, 256, 256u * 16u, 256u);
    static const int gone[] = {1, 19, 26, 27, 28};
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 5; i++) {
            in.dtype = out.dtype = d ? KG_F32 : KG_BF16;
            kgi_norm_tuning.cluster = gone[i];
            plan_class(&c, &p);
            cr_assert_eq(p.ccfg, -1, "tuning %d, dtype %d", gone[i], d);
            plan_class(&lsm, &p);
            cr_assert_eq(p.ccfg, -1, "tuning %d, dtype %d", gone[i], d);
        }
    /* COLT, dim 1 of [outer, n, cols], the planner's: bf16 / f16 softmax of 1 vector of columns ([32768,200,8]) by
       22 (a lane a row, 4 vectors: 64 row groups, 4 tiles a block, TL), their log_softmax by 16 (8 vectors: 32 row
       groups, 8 tiles a block, butterflies); f32 [262144,32,32] (8 vectors) by 29 (as 13: 4 row groups, 8 tiles a
       block), bf16 by 14 (4 vectors: 4 row groups, 16 tiles a block), [131072,32,64] by 13; f32 [32768,200,4] (1 vector) by 16. Forced EK 19-21, 23, 24: COLS. */
    kgi_norm_tuning.cluster = 0;
    c.axis = lsm.axis = 1;
    static const struct {
        kg_dtype dt;
        int log;
        int64_t outer, n, cols;
        int ccfg, crg, cbfly;
        unsigned grid;
    } colt[] = {{KG_BF16, 0, 32768, 200, 8, 22, 64, 2, 32768u / 4u},  {KG_F16, 0, 32768, 200, 8, 22, 64, 2, 32768u / 4u},
                {KG_BF16, 1, 32768, 200, 8, 16, 32, 1, 32768u / 8u},  {KG_F16, 1, 32768, 200, 8, 16, 32, 1, 32768u / 8u},
                {KG_F32, 0, 32768, 200, 4, 16, 32, 1, 32768u / 8u},   {KG_F32, 0, 262144, 32, 32, 29, 4, 1, 262144u / 8u},
                {KG_F32, 1, 262144, 32, 32, 29, 4, 1, 262144u / 8u},  {KG_BF16, 0, 262144, 32, 32, 14, 4, 1, 262144u / 16u},
                {KG_BF16, 0, 131072, 32, 64, 13, 4, 1, 131072u / 8u}};
    for (size_t i = 0; i < sizeof colt / sizeof colt[0]; i++) {
        in = fake(IN_AT, colt[i].dt, 3, KT_SHAPE(colt[i].outer, colt[i].n, colt[i].cols));
        out = fake(OUT_AT, colt[i].dt, 3, KT_SHAPE(colt[i].outer, colt[i].n, colt[i].cols));
        assert_cluster_plan(colt[i].log ? &lsm : &c, &p, colt[i].ccfg, 1, 1, colt[i].grid, 256u);
        cr_assert_eq(p.crg, colt[i].crg, "case %zu: %d row groups", i, p.crg);
        cr_assert_eq(p.cbfly, colt[i].cbfly, "case %zu", i);
    }
    in = fake(IN_AT, KG_BF16, 3, KT_SHAPE(262144, 32, 32));
    out = fake(OUT_AT, KG_BF16, 3, KT_SHAPE(262144, 32, 32));
    for (int t = 20; t <= 25; t++) {
        kgi_norm_tuning.cluster = t;
        plan_class(&c, &p);
        cr_assert_eq(p.ccfg, t == 23 ? 22 : -1, "tuning %d", t);
    }
    /* forced 13 (tuning 14): the 2-byte types' (bf16 [262144,32,32]); f32 none since session 25, COLS */
    kgi_norm_tuning.cluster = 14;
    plan_class(&c, &p);
    cr_assert_eq(p.ccfg, 13);
    in.dtype = out.dtype = KG_F32;
    plan_class(&c, &p);
    cr_assert_eq(p.ccfg, -1);
    kgi_norm_tuning = (kg_norm_tuning){0};
}

/* Session 26's candidates after H100 s28r1 (2026-12-05): K4's 31 (COLT's narrow 15 at 4 vectors a lane, 16-byte
   stores, 4 blocks a multiprocessor, 512 rows) is the f32 default where COLT takes 15 (2 vectors of columns) and the
   column has at most 8 rows, both ops: [2097152,4,8] dim 1 1 row group, 128 tiles a block, butterflies (none to do),
   [1048576,8,8] 2 row groups, 64 tiles a block; 15 keeps [32768,200,8] (32 row groups) and n 9; the 2-byte types keep
   15. Forced 31 (tuning 32): [32768,200,8] 64 row groups (TL), 2 tiles a block, 999 rows COLS. P2 (25), K4's 30 and
   K2's 32 lost and have no kernels (forced: COLS); the 2-byte dim-0 softmax keeps 28. ST's 26: no kernels. */
Test(plan, the_session_26_candidates)
{
    cr_assert_eq(kg_norm_ccfgs[25].rows, kg_norm_ccfgs[28].rows);
    cr_assert(!kg_norm_ccfgs[25].one && !kg_norm_ccfgs[25].alt);
    for (int k = 30; k <= 32; k++) {
        cr_assert(kg_norm_ccfgs[k].one && kg_norm_ccfgs[k].alt, "configuration %d", k);
        cr_assert_eq(kg_norm_ccfgs[k].lpr, 2, "configuration %d", k);
        cr_assert_eq(kg_norm_ccfgs[k].k, k == 32 ? 2 : 4, "configuration %d", k);
        cr_assert_eq(kg_norm_ccfgs[k].rows, k == 32 ? 256 : 512, "configuration %d", k);
        cr_assert_eq(kg_norm_ccfgs[k].lpr, kg_norm_ccfgs[15].lpr);
    }
    const kg_dtype dts[] = {KG_F32, KG_F16, KG_BF16};
    for (int d = 0; d < 3; d++)
        for (int op = 0; op < 2; op++) {
            const kg_norm_op o = op ? KG_NORM_LOG_SOFTMAX : KG_NORM_SOFTMAX;
            cr_assert_eq(kg_norm_ctable[o][dts[d]][25] >= 0, 0, "P2, op %d, dtype %d", op, d);
            cr_assert_eq(kg_norm_ctable[o][dts[d]][26] >= 0, 0, "ST, op %d, dtype %d", op, d);
            for (int k = 30; k <= 32; k++)
                cr_assert_eq(kg_norm_ctable[o][dts[d]][k] >= 0, k == 31 && dts[d] == KG_F32,
                             "K4 / K2 %d, op %d, dtype %d", k, op, d);
        }
    kg_tensor in, out;
    kg_norm_call c, lsm;
    kg_norm_plan p;
    bf16_dim0_calls(&in, &out, &c, &lsm);
    assert_cluster_plan(&c, &p, 28, 16, 256, 256u * 16u, 256u); /* the planner's */
    in.dtype = out.dtype = KG_F16;
    assert_cluster_plan(&c, &p, 28, 16, 256, 256u * 16u, 256u);
    kgi_norm_tuning.cluster = 26; /* P2: no kernels */
    for (int d = 0; d < 3; d++) {
        in.dtype = out.dtype = dts[d];
        plan_class(&c, &p);
        cr_assert_eq(p.ccfg, -1, "dtype %d", d);
        plan_class(&lsm, &p);
        cr_assert_eq(p.ccfg, -1, "dtype %d", d);
    }
    kgi_norm_tuning.cluster = 27; /* ST */
    plan_class(&c, &p);
    cr_assert_eq(p.ccfg, -1);
    /* K4 */
    c.axis = lsm.axis = 1;
    static const struct {
        int64_t outer, n;
        int tuning, ccfg, crg, cbfly;
        unsigned grid;
    } k4[] = {{2097152, 4, 0, 31, 1, 1, 2097152u / 128u}, {2097152, 4, 32, 31, 1, 1, 2097152u / 128u},
              {1048576, 8, 0, 31, 2, 1, 1048576u / 64u},  {1048576, 8, 32, 31, 2, 1, 1048576u / 64u},
              {1001, 3, 0, 31, 1, 1, 1001u / 128u + 1u},
              {999, 8, 0, 31, 2, 1, 999u / 64u + 1u},     {32768, 9, 0, 15, 2, 1, 32768u / 64u},
              {32768, 200, 0, 15, 32, 2, 32768u / 4u},    {32768, 200, 32, 31, 64, 2, 32768u / 2u},
              {1001, 3, 32, 31, 1, 1, 1001u / 128u + 1u}};
    for (size_t i = 0; i < sizeof k4 / sizeof k4[0]; i++)
        for (int op = 0; op < 2; op++) {
            in = fake(IN_AT, KG_F32, 3, KT_SHAPE(k4[i].outer, k4[i].n, 8));
            out = fake(OUT_AT, KG_F32, 3, KT_SHAPE(k4[i].outer, k4[i].n, 8));
            kgi_norm_tuning.cluster = k4[i].tuning;
            assert_cluster_plan(op ? &lsm : &c, &p, k4[i].ccfg, 1, 1, k4[i].grid, 256u);
            cr_assert_eq(p.crg, k4[i].crg, "case %zu: %d row groups", i, p.crg);
            cr_assert_eq(p.cbfly, k4[i].cbfly, "case %zu", i);
        }
    kgi_norm_tuning.cluster = 32;
    in = fake(IN_AT, KG_F32, 3, KT_SHAPE(100, 999, 8));
    out = fake(OUT_AT, KG_F32, 3, KT_SHAPE(100, 999, 8));
    plan_class(&c, &p);
    cr_assert_eq(p.ccfg, -1); /* 999 rows: more than K4's 512 */
    in = fake(IN_AT, KG_F32, 3, KT_SHAPE(2097152, 4, 8));
    out = fake(OUT_AT, KG_F32, 3, KT_SHAPE(2097152, 4, 8));
    for (int t = 31; t <= 33; t += 2) { /* K4's 30 and K2's 32: no kernels */
        kgi_norm_tuning.cluster = t;
        plan_class(&c, &p);
        cr_assert_eq(p.ccfg, -1, "tuning %d", t);
        plan_class(&lsm, &p);
        cr_assert_eq(p.ccfg, -1, "tuning %d", t);
    }
    kgi_norm_tuning.cluster = 0; /* the 2-byte types keep 15 (f32 alone) */
    in = fake(IN_AT, KG_BF16, 3, KT_SHAPE(2097152, 4, 16));
    out = fake(OUT_AT, KG_BF16, 3, KT_SHAPE(2097152, 4, 16));
    assert_cluster_plan(&c, &p, 15, 1, 1, 2097152u / 128u, 256u);
    kgi_norm_tuning.cluster = 32;
    plan_class(&c, &p);
    cr_assert_eq(p.ccfg, -1); /* forced K4: f32 alone */
    kgi_norm_tuning = (kg_norm_tuning){0};
}

/* CLUSTER PH (the persistent form of two halves, configuration 5 under the
   tuning 6) and configuration 4 (its bits twin, the tuning 5): forced only (the
   planner takes 6, 28 or COLT's), they have no kernels since session 34 (the
   bundle's size, gen/norm.lua): under either tuning the column plans COLS, every
   dtype and op. Their rows stay in kg_norm_ccfgs (a half of 5 holds what a block
   of 4 holds), so that the numbers after them keep their force hooks. */
Test(plan, the_persistent_halves_and_their_twin_have_no_kernels)
{
    kg_tensor in = fake(IN_AT, KG_F32, 2, KT_SHAPE(16384, 16384)),
              out = fake(OUT_AT, KG_F32, 2, KT_SHAPE(16384, 16384));
    kg_norm_call c = {.op = KG_NORM_SOFTMAX, .in = &in, .out = &out, .axis = 0};
    kg_norm_plan p;
    cr_assert(kg_norm_ccfgs[5].ph && !kg_norm_ccfgs[4].ph);
    cr_assert_eq(kg_norm_ccfgs[5].rows, kg_norm_ccfgs[4].rows);
    cr_assert_eq(kg_norm_ccfgs[5].threads, 2 * kg_norm_ccfgs[4].threads);
    const kg_dtype dts[] = {KG_F32, KG_F16, KG_BF16};
    for (int d = 0; d < 3; d++)
        for (int o = 0; o < 2; o++) {
            const kg_norm_op op = o ? KG_NORM_LOG_SOFTMAX : KG_NORM_SOFTMAX;
            cr_assert(kg_norm_ctable[op][dts[d]][4] < 0 && kg_norm_ctable[op][dts[d]][5] < 0, "op %d, dtype %d", o, d);
        }
    kgi_norm_tuning.sm90 = 1;
    for (int d = 0; d < 3; d++)
        for (int t = 5; t <= 6; t++) {
            in.dtype = out.dtype = dts[d];
            kgi_norm_tuning.cluster = t;
            plan_shape(&c, &in, &out, 3000, 1376, &p);
            cr_assert_eq(p.ccfg, -1, "tuning %d, %s", t, kg_dtype_name(dts[d]));
            plan_shape(&c, &in, &out, 16384, 16384, &p);
            cr_assert_eq(p.ccfg, -1, "tuning %d, %s", t, kg_dtype_name(dts[d]));
        }
    kgi_norm_tuning = (kg_norm_tuning){0};
}

/* BULK: the 2-byte layer_norm and rms_norm on sm_90 under the tuning's
   configuration, wherever the row fits; its ring as deep as the
   configuration's share of the multiprocessor's shared memory allows. Since
   session 24 only configurations 1 and 2 of the bf16 rms_norm have kernels
   (gen/norm.lua): under the tuning every other configuration, op and dtype
   plans no BULK (until then this test also checked the plans of the BULK
   and BULKW tunings: stages, grids, a warp a row, the row in registers) */
Test(plan, two_byte_norms_take_bulk_rows_on_sm90)
{
    kg_tensor in = fake(IN_AT, KG_BF16, 2, KT_SHAPE(64, 16384)), out = fake(OUT_AT, KG_BF16, 2, KT_SHAPE(64, 16384));
    kg_tensor r = fake(S_AT, KG_BF16, 2, KT_SHAPE(64, 16384));
    kg_norm_call rc = {.op = KG_NORM_RMS_NORM, .in = &in, .out = &out, .res = &r, .k = 1, .eps = 1e-6};
    kg_norm_plan p;
    kgi_norm_tuning = (kg_norm_tuning){.sm90 = 1, .bulk = 3}; /* 512 threads x 4 vectors, one block an SM */
    plan_class(&rc, &p);
    cr_assert_eq(p.bcfg, 2);
    cr_assert_eq(p.bstages, 3); /* (233472 - 2048) / (2 x 32768) */
    cr_assert_eq(p.bgrid, 64u);
    cr_assert_eq(p.bblock, 512u);
    kgi_norm_tuning.bstages = 2;
    plan_class(&rc, &p);
    cr_assert_eq(p.bstages, 2);
    kgi_norm_tuning.bstages = 0;
    r = fake(S_AT, KG_BF16, 2, KT_SHAPE(100000, 16384));
    plan_shape(&rc, &in, &out, 100000, 16384, &p);
    cr_assert_eq(p.bgrid, 132u);
    kgi_norm_tuning.grid = 3;
    plan_class(&rc, &p);
    cr_assert_eq(p.bgrid, 3u);
    kgi_norm_tuning.grid = 0;
    /* under the tuning, rows the default leaves to LEAN: 4096, 7 stages */
    r = fake(S_AT, KG_BF16, 2, KT_SHAPE(64, 4096));
    plan_shape(&rc, &in, &out, 64, 4096, &p);
    cr_assert_eq(p.bcfg, 2);
    cr_assert_eq(p.bstages, 14); /* (233472 - 2048) / (2 x 8192), at most KG_NORM_BULK_STAGES */
    /* a row longer than the configuration holds: none */
    r = fake(S_AT, KG_BF16, 2, KT_SHAPE(64, 16392));
    plan_shape(&rc, &in, &out, 64, 16392, &p);
    cr_assert_eq(p.bcfg, -1);
    /* no kernels: the other configurations, layer_norm, f16, f32, softmax */
    kg_tensor w = fake(W_AT, KG_BF16, 1, KT_SHAPE(4096)), b = fake(W_AT + 65536, KG_BF16, 1, KT_SHAPE(4096));
    r = fake(S_AT, KG_BF16, 2, KT_SHAPE(64, 4096));
    kg_norm_call ln = {.op = KG_NORM_LAYER_NORM, .in = &in, .out = &out, .w = &w, .b = &b, .k = 1, .eps = 1e-5};
    kg_norm_call rn = {.op = KG_NORM_RMS_NORM, .in = &in, .out = &out, .k = 1, .eps = 1e-6};
    kg_norm_call sc = {.op = KG_NORM_SOFTMAX, .in = &in, .out = &out, .axis = -1};
    for (int cfg = 0; cfg < KG_NORM_BCFG_COUNT; cfg++)
        for (int d = 0; d < 3; d++) {
            kgi_norm_tuning.bulk = cfg + 1;
            in.dtype = out.dtype = d == 0 ? KG_BF16 : d == 1 ? KG_F16 : KG_F32;
            r = fake(S_AT, in.dtype, 2, KT_SHAPE(64, 4096));
            w = fake(W_AT, in.dtype, 1, KT_SHAPE(4096));
            b = fake(W_AT + 65536, in.dtype, 1, KT_SHAPE(4096));
            plan_shape(&ln, &in, &out, 64, 4096, &p);
            cr_assert_eq(p.bcfg, -1, "configuration %d dtype %d layer_norm", cfg, d);
            /* bf16 rms_norm: configurations 1 and 2 (the residual form's kernels serve it too) */
            const int rms = (cfg == 1 || cfg == 2) && d == 0 ? cfg : -1;
            plan_shape(&rn, &in, &out, 64, 4096, &p);
            cr_assert_eq(p.bcfg, rms, "configuration %d dtype %d rms_norm", cfg, d);
            plan_shape(&sc, &in, &out, 64, 4096, &p);
            cr_assert_eq(p.bcfg, -1, "configuration %d dtype %d softmax", cfg, d);
            plan_shape(&rc, &in, &out, 64, 4096, &p);
            cr_assert_eq(p.bcfg, rms, "configuration %d dtype %d residual", cfg, d);
        }
    in.dtype = out.dtype = KG_BF16;
    r = fake(S_AT, KG_BF16, 2, KT_SHAPE(64, 4096));
    kgi_norm_tuning.bulk = -1;
    plan_shape(&rc, &in, &out, 64, 4096, &p);
    cr_assert_eq(p.bcfg, -1);
    /* the default (H200 figures, runtime/norm.c): bf16 residual rms_norm of
       8193..16384 by configuration 2, the deepest ring; nothing else in bf16
       (LEAN, a block a row); f16 layer_norm below */
    kgi_norm_tuning = (kg_norm_tuning){.sm90 = 1};
    static const struct {
        int op, res;
        int64_t n;
        int cfg, stages;
    } want[] = {
        {KG_NORM_RMS_NORM, 1, 512, -1, 0},     {KG_NORM_RMS_NORM, 1, 1024, -1, 0},
        {KG_NORM_RMS_NORM, 1, 2048, -1, 0},    {KG_NORM_RMS_NORM, 1, 3072, -1, 0},
        {KG_NORM_RMS_NORM, 1, 4096, -1, 0},    {KG_NORM_RMS_NORM, 1, 6144, -1, 0},
        {KG_NORM_RMS_NORM, 1, 8192, -1, 0},    {KG_NORM_RMS_NORM, 1, 12288, 2, 4}, /* (233472 - 2048) / 49152 */
        {KG_NORM_RMS_NORM, 1, 16384, 2, 3},    {KG_NORM_RMS_NORM, 0, 4096, -1, 0},
        {KG_NORM_RMS_NORM, 0, 16384, -1, 0},   {KG_NORM_LAYER_NORM, 0, 2048, -1, 0},
        {KG_NORM_LAYER_NORM, 0, 2552, -1, 0},  {KG_NORM_LAYER_NORM, 0, 2560, -1, 0},
        {KG_NORM_LAYER_NORM, 0, 3072, -1, 0},  {KG_NORM_LAYER_NORM, 0, 3584, -1, 0},
        {KG_NORM_LAYER_NORM, 0, 4096, -1, 0},
        {KG_NORM_LAYER_NORM, 0, 5120, -1, 0},  {KG_NORM_LAYER_NORM, 0, 8192, -1, 0},
        {KG_NORM_LAYER_NORM, 0, 12288, -1, 0}, {KG_NORM_LAYER_NORM, 0, 16384, -1, 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        kg_norm_call dc = {.op = want[i].op, .in = &in, .out = &out, .res = want[i].res ? &r : NULL, .k = 1,
                           .eps = 1e-5};
        r = fake(S_AT, KG_BF16, 2, KT_SHAPE(1000, want[i].n));
        plan_shape(&dc, &in, &out, 1000, want[i].n, &p);
        cr_assert_eq(p.bcfg, want[i].cfg, "op %d res %d n %lld", want[i].op, want[i].res, (long long)want[i].n);
        if (want[i].cfg >= 0) {
            cr_assert_eq(p.bstages, want[i].stages, "op %d res %d n %lld", want[i].op, want[i].res,
                         (long long)want[i].n);
            const kg_norm_bcfg *f = &kg_norm_bcfgs[want[i].cfg];
            /* BULKW: a block per warps' rows, up to one a multiprocessor */
            cr_assert_eq(p.bgrid, f->warp ? (unsigned)((1000 + f->threads / 32 - 1) / (f->threads / 32))
                                          : 132u * (unsigned)f->mb);
        }
    }
    /* f16: none (its layer_norm of 2560..4096 ran BULKW until session 16), not the residual form */
    in.dtype = out.dtype = KG_F16;
    kg_norm_call hc = {.op = KG_NORM_LAYER_NORM, .in = &in, .out = &out, .k = 1, .eps = 1e-5};
    const int64_t hn[] = {2560, 3072, 3584, 4096};
    for (int i = 0; i < 4; i++) {
        plan_shape(&hc, &in, &out, 1000, hn[i], &p);
        cr_assert_eq(p.bcfg, -1, "f16 layer_norm of %lld", (long long)hn[i]);
    }
    r = fake(S_AT, KG_F16, 2, KT_SHAPE(1000, 1024));
    hc = (kg_norm_call){.op = KG_NORM_RMS_NORM, .in = &in, .out = &out, .res = &r, .k = 1, .eps = 1e-6};
    plan_shape(&hc, &in, &out, 1000, 1024, &p);
    cr_assert_eq(p.bcfg, -1);
    in.dtype = out.dtype = KG_BF16;
    /* f16, another tuning, or the tuning's -1: LEAN */
    kg_norm_call lc = {.op = KG_NORM_LAYER_NORM, .in = &in, .out = &out, .k = 1, .eps = 1e-5};
    in.dtype = out.dtype = KG_F16;
    plan_shape(&lc, &in, &out, 1000, 16384, &p);
    cr_assert_eq(p.bcfg, -1);
    in.dtype = out.dtype = KG_BF16;
    kgi_norm_tuning.lean = 8;
    plan_shape(&lc, &in, &out, 1000, 16384, &p);
    cr_assert_eq(p.bcfg, -1);
    kgi_norm_tuning.lean = 0;
    kgi_norm_tuning.bulk = -1;
    plan_shape(&lc, &in, &out, 1000, 16384, &p);
    cr_assert_eq(p.bcfg, -1);
    /* off sm_90: none */
    kgi_norm_tuning = (kg_norm_tuning){.bulk = 3};
    int ma = 0, mi = 0;
    kg_device_info(cpu_ctx, NULL, 0, &ma, &mi, NULL);
    r = fake(S_AT, KG_BF16, 2, KT_SHAPE(64, 4096));
    plan_shape(&rc, &in, &out, 64, 4096, &p);
    cr_assert_eq(p.bcfg, ma == 9 && mi == 0 ? 2 : -1);
    kgi_norm_tuning = (kg_norm_tuning){0};
}

Test(plan, layer_norm_dims_merge_and_weights_broadcast)
{
    kg_tensor in = fake(IN_AT, KG_BF16, 3, KT_SHAPE(4, 32, 64)), out = fake(OUT_AT, KG_BF16, 3, KT_SHAPE(4, 32, 64));
    kg_tensor w = fake(W_AT, KG_BF16, 2, KT_SHAPE(32, 64)), m = fake(S_AT, KG_F32, 1, KT_SHAPE(4));
    kg_norm_call c = {.op = KG_NORM_LAYER_NORM, .in = &in, .out = &out, .w = &w, .s0 = &m, .k = 2, .eps = 1e-5};
    kg_norm_plan p;
    cr_assert_eq(plan_class(&c, &p), KG_NORM_LEAN8S); /* the 2-byte layer_norm's */
    cr_assert_eq(p.args.n, 2048);
    /* a weight broadcast along the first normalized dim: stride 0 -> strided */
    w = fake(W_AT, KG_BF16, 1, KT_SHAPE(64));
    cr_assert_eq(plan_class(&c, &p), KG_NORM_STRIDED);
    cr_assert_eq(p.args.inner.n, 2);
}

Test(plan, empty_inputs_plan_nothing_or_the_results)
{
    kg_tensor in = fake(IN_AT, KG_F32, 2, KT_SHAPE(0, 5)), out = fake(OUT_AT, KG_F32, 2, KT_SHAPE(0, 5));
    kg_norm_call c = {.op = KG_NORM_SOFTMAX, .in = &in, .out = &out, .axis = 1};
    kg_norm_plan p;
    cr_assert_eq(kg_norm_plan_call(cpu_ctx, &c, 132, &p), KG_OK);
    cr_assert(p.empty);
    in = fake(IN_AT, KG_F32, 2, KT_SHAPE(5, 0));
    out = fake(OUT_AT, KG_F32, 2, KT_SHAPE(5, 0));
    cr_assert_eq(kg_norm_plan_call(cpu_ctx, &c, 132, &p), KG_OK);
    cr_assert(p.empty);
    /* logsumexp of an empty slice is -inf: it launches */
    kg_tensor o = fake(S_AT, KG_F32, 1, KT_SHAPE(5));
    const int ax[] = {1};
    kg_norm_call l = {.op = KG_NORM_LOGSUMEXP, .in = &in, .s0 = &o, .axes = ax, .n_axes = 1};
    cr_assert_eq(kg_norm_plan_call(cpu_ctx, &l, 132, &p), KG_OK);
    cr_assert(!p.empty);
    cr_assert_eq(p.cls, KG_NORM_STRIDED);
    cr_assert_eq(p.args.n, 0);
}

Test(plan, huge_dims_beside_a_zero_dim_do_not_overflow)
{
    /* found by fuzz_norm (branch trust): with a 0 dim, the product of the
       other dims could pass 2^63; the core now refuses such a tensor, and
       the planner stops at the 0 dim before any product */
    const int64_t big = 4803324847834923012;
    kg_tensor in = fake(IN_AT, KG_F32, 3, KT_SHAPE(0, 16, big)), o = fake(OUT_AT, KG_F32, 1, KT_SHAPE(0));
    const int axes[] = {1, 2};
    kg_norm_call l = {.op = KG_NORM_LOGSUMEXP, .in = &in, .s0 = &o, .axes = axes, .n_axes = 2};
    kg_norm_plan p;
    KT_EXPECT(cpu_ctx, kg_norm_plan_call(cpu_ctx, &l, 132, &p), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: in: shape [0,16,4803324847834923012]: the product of its nonzero sizes exceeds 2^63 - "
              "1");
    const int64_t half = (int64_t)1 << 50;
    kg_tensor in2 = fake(IN_AT, KG_F32, 3, KT_SHAPE(half, 16, 0)),
              out2 = fake(OUT_AT, KG_F32, 3, KT_SHAPE(half, 16, 0));
    kg_norm_call c = {.op = KG_NORM_SOFTMAX, .in = &in2, .out = &out2, .axis = 2};
    cr_assert_eq(kg_norm_plan_call(cpu_ctx, &c, 132, &p), KG_OK, "%s", kg_errmsg(cpu_ctx));
    cr_assert(p.empty);
    kg_tensor in3 = fake(IN_AT, KG_F32, 3, KT_SHAPE(0, 16, half)), o3 = fake(OUT_AT, KG_F32, 1, KT_SHAPE(0));
    l.in = &in3;
    l.s0 = &o3;
    cr_assert_eq(kg_norm_plan_call(cpu_ctx, &l, 132, &p), KG_OK, "%s", kg_errmsg(cpu_ctx));
    cr_assert(p.empty);
}

/* ---- CPU: every validation error ------------------------------------------ */

TestSuite(errors);

Test(errors, every_argument_error_is_reported_before_the_device)
{
    kg_context *ctx = kt_open_without_device();
    const int64_t s23[] = {2, 3};
    kg_tensor in = kg_tensor_contiguous(KT_DEV(0), KG_F32, 2, s23);
    kg_tensor out = kg_tensor_contiguous(KT_DEV(0x1000), KG_F32, 2, s23);
    kg_tensor i32 = kg_tensor_contiguous(KT_DEV(0), KG_I32, 2, s23);
    kg_tensor o16 = kg_tensor_contiguous(KT_DEV(0x1000), KG_F16, 2, s23);
    kg_tensor o32 = kg_tensor_contiguous(KT_DEV(0x1000), KG_F32, 2, KT_SHAPE(3, 2));
    kg_tensor mis = kg_tensor_contiguous(KT_DEV(2), KG_F32, 2, s23);
    kg_tensor part = kg_tensor_contiguous(KT_DEV(4), KG_F32, 2, s23);
    kg_tensor bad = in;
    bad.strides[1] = -1;
    cr_assert_eq(kg_softmax(NULL, &out, &in, 0), KG_ERR_INVALID_ARGUMENT);
    KT_EXPECT(ctx, kg_softmax(ctx, &out, NULL, 0), KG_ERR_INVALID_ARGUMENT, "invalid argument: tensor in is NULL");
    KT_EXPECT(ctx, kg_softmax(ctx, NULL, &in, 0), KG_ERR_INVALID_ARGUMENT, "invalid argument: softmax: out is NULL");
    KT_EXPECT(ctx, kg_softmax(ctx, &out, &bad, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: in has stride -1 in dim 1 (strides must be >= 0)");
    KT_EXPECT(ctx, kg_softmax(ctx, &out, &i32, 0), KG_ERR_DTYPE,
              "softmax is not available for i32 (it accepts f32, f64, f16, bf16)");
    KT_EXPECT(ctx, kg_softmax(ctx, &out, &in, 2), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: softmax: axis 2 is out of range for a 2-dim input (valid: -2..1)");
    KT_EXPECT(ctx, kg_log_softmax(ctx, &out, &in, -3), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: log_softmax: axis -3 is out of range for a 2-dim input (valid: -2..1)");
    KT_EXPECT(ctx, kg_softmax(ctx, &o16, &in, 0), KG_ERR_DTYPE,
              "softmax: out is f16 but must be f32 (the input's dtype)");
    KT_EXPECT(ctx, kg_softmax(ctx, &o32, &in, 0), KG_ERR_SHAPE,
              "shape mismatch: softmax: out is [3,2] but must be [2,3]");
    KT_EXPECT(ctx, kg_softmax(ctx, &out, &mis, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: in's data 0x10000002 is not aligned to its 4-byte f32 elements");
    KT_EXPECT(ctx, kg_softmax(ctx, &part, &in, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: out partially overlaps in (bytes [0x10000004, 0x1000001c) and [0x10000000, "
              "0x10000018)); an output may only alias an input exactly (in place)");
    kg_tensor self = out;
    self.strides[0] = 0;
    KT_EXPECT(
        ctx, kg_softmax(ctx, &self, &in, 0), KG_ERR_INVALID_ARGUMENT,
        "invalid argument: out overlaps itself (shape [2,3], strides [0,1]): an output needs one memory location per "
        "element");

    /* logsumexp */
    kg_tensor r2 = kg_tensor_contiguous(KT_DEV(0x1000), KG_F32, 1, KT_SHAPE(2));
    const int ax1[] = {1}, dup[] = {1, -1}, oor[] = {5};
    KT_EXPECT(ctx, kg_logsumexp(ctx, NULL, &in, ax1, 1, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: logsumexp: out is NULL");
    KT_EXPECT(ctx, kg_logsumexp(ctx, &r2, &in, dup, 2, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: logsumexp: axis -1 (dim 1) appears twice in axes");
    KT_EXPECT(ctx, kg_logsumexp(ctx, &r2, &in, oor, 1, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: logsumexp: axis 5 is out of range for a 2-dim input (valid: -2..1)");
    KT_EXPECT(ctx, kg_logsumexp(ctx, &r2, &in, NULL, 1, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: logsumexp: axes is NULL but n_axes is 1");
    KT_EXPECT(ctx, kg_logsumexp(ctx, &r2, &in, ax1, 9, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: logsumexp: n_axes is 9 (0..8; 0 = every axis)");
    KT_EXPECT(ctx, kg_logsumexp(ctx, &r2, &in, ax1, 1, 1), KG_ERR_SHAPE,
              "shape mismatch: logsumexp: out is [2] but must be [2,1]");
    kg_tensor r2in = kg_tensor_contiguous(KT_DEV(4), KG_F32, 1, KT_SHAPE(2));
    KT_EXPECT(ctx, kg_logsumexp(ctx, &r2in, &in, ax1, 1, 0), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: logsumexp: out overlaps in (bytes [0x10000004, 0x1000000c) and [0x10000000, "
              "0x10000018)); only out may alias in, and only exactly");

    /* layer_norm */
    kg_tensor w3 = kg_tensor_contiguous(KT_DEV(0x2000), KG_F32, 1, KT_SHAPE(3));
    kg_tensor w4 = kg_tensor_contiguous(KT_DEV(0x2000), KG_F32, 1, KT_SHAPE(4));
    kg_tensor w23 = kg_tensor_contiguous(KT_DEV(0x2000), KG_F32, 2, s23);
    kg_tensor wf16 = kg_tensor_contiguous(KT_DEV(0x2000), KG_F16, 1, KT_SHAPE(3));
    kg_tensor m2 = kg_tensor_contiguous(KT_DEV(0x3000), KG_F32, 1, KT_SHAPE(2));
    kg_tensor m3 = kg_tensor_contiguous(KT_DEV(0x3000), KG_F32, 1, KT_SHAPE(3));
    kg_tensor m16 = kg_tensor_contiguous(KT_DEV(0x3000), KG_F16, 1, KT_SHAPE(2));
    kg_tensor r_at_m = kg_tensor_contiguous(KT_DEV(0x3004), KG_F32, 1, KT_SHAPE(2));
    kg_tensor m_at_out = kg_tensor_contiguous(KT_DEV(0x1000), KG_F32, 1, KT_SHAPE(2));
    KT_EXPECT(ctx, kg_layer_norm(ctx, &out, NULL, NULL, &in, 0, NULL, NULL, 1e-5), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: layer_norm: cannot normalize the last 0 dims of a 2-dim input (k must be 1..2)");
    KT_EXPECT(ctx, kg_layer_norm(ctx, &out, NULL, NULL, &in, 3, NULL, NULL, 1e-5), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: layer_norm: cannot normalize the last 3 dims of a 2-dim input (k must be 1..2)");
    KT_EXPECT(ctx, kg_layer_norm(ctx, &out, NULL, NULL, &in, 1, &w4, NULL, 1e-5), KG_ERR_SHAPE,
              "shape mismatch: layer_norm: weight is [4] but the normalized shape is [3] (weight must broadcast to "
              "it)");
    KT_EXPECT(ctx, kg_layer_norm(ctx, &out, NULL, NULL, &in, 1, &w23, NULL, 1e-5), KG_ERR_SHAPE,
              "shape mismatch: layer_norm: weight is [2,3] but the normalized shape is [3] (weight must broadcast "
              "to it)");
    KT_EXPECT(ctx, kg_layer_norm(ctx, &out, NULL, NULL, &in, 1, NULL, &w4, 1e-5), KG_ERR_SHAPE,
              "shape mismatch: layer_norm: bias is [4] but the normalized shape is [3] (bias must broadcast to it)");
    KT_EXPECT(ctx, kg_layer_norm(ctx, &out, NULL, NULL, &in, 1, &wf16, NULL, 1e-5), KG_ERR_DTYPE,
              "layer_norm: weight is f16 but in is f32 (they must match)");
    KT_EXPECT(ctx, kg_layer_norm(ctx, &out, &m3, NULL, &in, 1, &w3, NULL, 1e-5), KG_ERR_SHAPE,
              "shape mismatch: layer_norm: mean is [3] but must be [2]");
    KT_EXPECT(ctx, kg_layer_norm(ctx, &out, &m16, NULL, &in, 1, &w3, NULL, 1e-5), KG_ERR_DTYPE,
              "layer_norm: mean is f16 but must be f32 (statistics of f32, f16 and bf16 are f32)");
    KT_EXPECT(ctx, kg_layer_norm(ctx, &out, NULL, &m3, &in, 1, &w3, NULL, 1e-5), KG_ERR_SHAPE,
              "shape mismatch: layer_norm: rstd is [3] but must be [2]");
    KT_EXPECT(ctx, kg_layer_norm(ctx, &out, &m2, &r_at_m, &in, 1, &w3, NULL, 1e-5), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: layer_norm: mean overlaps rstd (bytes [0x10003000, 0x10003008) and [0x10003004, "
              "0x1000300c)); only out may alias in, and only exactly");
    KT_EXPECT(ctx, kg_layer_norm(ctx, &out, &m_at_out, NULL, &in, 1, &w3, NULL, 1e-5), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: layer_norm: out overlaps mean (bytes [0x10001000, 0x10001018) and [0x10001000, "
              "0x10001008)); only out may alias in, and only exactly");
    kg_tensor w_at_out = kg_tensor_contiguous(KT_DEV(0x1000), KG_F32, 1, KT_SHAPE(3));
    KT_EXPECT(ctx, kg_layer_norm(ctx, &out, NULL, NULL, &in, 1, &w_at_out, NULL, 1e-5), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: layer_norm: out overlaps weight (bytes [0x10001000, 0x10001018) and [0x10001000, "
              "0x1000100c)); only out may alias in, and only exactly");
    KT_EXPECT(ctx, kg_layer_norm(ctx, &out, NULL, NULL, &in, 1, NULL, NULL, NAN), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: layer_norm: eps is nan (it must be finite and at most 3.40282e+38 in magnitude, the "
              "largest float)");
    KT_EXPECT(ctx, kg_layer_norm(ctx, &out, NULL, NULL, &in, 1, NULL, NULL, -1e39), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: layer_norm: eps is -1e+39 (it must be finite and at most 3.40282e+38 in magnitude, "
              "the largest float)");
    KT_EXPECT(ctx, kg_rms_norm(ctx, &out, &in, NULL, INFINITY), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: rms_norm: eps is inf (it must be finite and at most 3.40282e+38 in magnitude, the "
              "largest float)");
    /* a negative eps is taken (as PyTorch takes it); f64 holds any finite one */
    kg_norm_plan ep;
    kg_norm_call neg = {.op = KG_NORM_LAYER_NORM, .in = &in, .out = &out, .k = 1, .eps = -1};
    KT_OK(ctx, kg_norm_plan_call(ctx, &neg, 132, &ep));
    kg_tensor d64in = kg_tensor_contiguous(KT_DEV(0), KG_F64, 2, s23);
    kg_tensor d64out = kg_tensor_contiguous(KT_DEV(0x1000), KG_F64, 2, s23);
    kg_norm_call big = {.op = KG_NORM_RMS_NORM, .in = &d64in, .out = &d64out, .k = 1, .eps = -1e300};
    KT_OK(ctx, kg_norm_plan_call(ctx, &big, 132, &ep));

    /* rms_norm and its residual form */
    kg_tensor s0 = kg_tensor_contiguous(KT_DEV(0), KG_F32, 0, NULL);
    /* a 0-d input is named as such (before session 27: "cannot normalize the
       last 1 dims of a 0-dim input (1..0)", rms_norm having no k) */
    KT_EXPECT(ctx, kg_rms_norm(ctx, &s0, &s0, NULL, 1e-6), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: rms_norm: in is 0-d (a scalar); rms_norm normalizes over its last dim and needs at "
              "least 1 dim");
    KT_EXPECT(ctx, kg_layer_norm(ctx, &s0, NULL, NULL, &s0, 1, NULL, NULL, 1e-5), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: layer_norm: in is 0-d (a scalar); layer_norm normalizes over its last k dims and "
              "needs at least 1 dim");
    KT_EXPECT(ctx, kg_rms_norm(ctx, &out, &in, &w4, 1e-6), KG_ERR_SHAPE,
              "shape mismatch: rms_norm: weight is [4] but the normalized shape is [3] (weight must broadcast to it)");
    kg_tensor res = kg_tensor_contiguous(KT_DEV(0x4000), KG_F32, 2, s23);
    kg_tensor res16 = kg_tensor_contiguous(KT_DEV(0x4000), KG_F16, 2, s23);
    kg_tensor res_at_in = kg_tensor_contiguous(KT_DEV(0), KG_F32, 2, s23);
    /* the residual form is named as called (before session 27: "rms_norm:") */
    KT_EXPECT(ctx, kg_rms_norm_residual(ctx, &out, NULL, &in, NULL, 1e-6), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: rms_norm_residual: residual is NULL");
    KT_EXPECT(ctx, kg_rms_norm_residual(ctx, &out, &res16, &in, NULL, 1e-6), KG_ERR_DTYPE,
              "rms_norm_residual: residual is f16 but must be f32 (the input's dtype)");
    KT_EXPECT(ctx, kg_rms_norm_residual(ctx, &out, &o32, &in, NULL, 1e-6), KG_ERR_SHAPE,
              "shape mismatch: rms_norm_residual: residual is [3,2] but must be [2,3]");
    KT_EXPECT(ctx, kg_rms_norm_residual(ctx, &out, &res_at_in, &in, NULL, 1e-6), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: rms_norm_residual: residual overlaps in (bytes [0x10000000, 0x10000018) and "
              "[0x10000000, 0x10000018)); only out may alias in, and only exactly");
    kg_tensor out_at_res = kg_tensor_contiguous(KT_DEV(0x4000), KG_F32, 2, s23);
    KT_EXPECT(ctx, kg_rms_norm_residual(ctx, &out_at_res, &res, &in, NULL, 1e-6), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: rms_norm_residual: out overlaps residual (bytes [0x10004000, 0x10004018) and "
              "[0x10004000, 0x10004018)); only out may alias in, and only exactly");
    KT_EXPECT(ctx, kg_rms_norm_residual(ctx, &s0, &s0, &s0, NULL, 1e-6), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: rms_norm_residual: in is 0-d (a scalar); rms_norm_residual normalizes over its last "
              "dim and needs at least 1 dim");

    /* tensors an op does not take (through the planner, as the entry points
       never pass them) */
    kg_norm_call sw = {.op = KG_NORM_SOFTMAX, .in = &in, .out = &out, .w = &w3};
    kg_norm_plan pl;
    KT_EXPECT(ctx, kg_norm_plan_call(ctx, &sw, 132, &pl), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: softmax takes no weight");
    kg_norm_call sr = {.op = KG_NORM_SOFTMAX, .in = &in, .out = &out, .res = &res};
    KT_EXPECT(ctx, kg_norm_plan_call(ctx, &sr, 132, &pl), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: softmax takes no residual");
    kg_norm_call rb = {.op = KG_NORM_RMS_NORM, .in = &in, .out = &out, .k = 1, .b = &w3, .eps = 1e-6};
    KT_EXPECT(ctx, kg_norm_plan_call(ctx, &rb, 132, &pl), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: rms_norm takes no bias");
    kg_norm_call rm = {.op = KG_NORM_RMS_NORM, .in = &in, .out = &out, .k = 1, .s0 = &m2, .eps = 1e-6};
    KT_EXPECT(ctx, kg_norm_plan_call(ctx, &rm, 132, &pl), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: rms_norm returns no mean or rstd");
    kg_tensor in64 = kg_tensor_contiguous(KT_DEV(0), KG_F64, 2, s23);
    kg_tensor out64 = kg_tensor_contiguous(KT_DEV(0x1000), KG_F64, 2, s23);
    KT_EXPECT(ctx, kg_layer_norm(ctx, &out64, &m2, NULL, &in64, 1, NULL, NULL, 1e-5), KG_ERR_DTYPE,
              "layer_norm: mean is f32 but must be f64 (statistics of f64 are f64)");
    KT_EXPECT(ctx, kg_logsumexp(ctx, &m2, &in64, ax1, 1, 0), KG_ERR_DTYPE,
              "logsumexp: out is f32 but must be f64 (the input's dtype)");

    /* an invalid op through the planner */
    kg_norm_call c = {.op = (kg_norm_op)99, .in = &in, .out = &out};
    kg_norm_plan p;
    KT_EXPECT(ctx, kg_norm_plan_call(ctx, &c, 132, &p), KG_ERR_INVALID_ARGUMENT,
              "invalid argument: 99 is not a normalization (kg_norm_op)");
    /* a valid call reaches the device check */
    cr_assert_eq(kg_softmax(ctx, &out, &in, 1), KG_ERR_NO_DEVICE);
    cr_assert_eq(kg_softmax(ctx, &in, &in, 1), KG_ERR_NO_DEVICE); /* in place */
    cr_assert_eq(kg_layer_norm(ctx, &out, &m2, NULL, &in, 1, &w3, &w3, 1e-5), KG_ERR_NO_DEVICE);
    cr_assert_eq(kg_rms_norm_residual(ctx, &in, &res, &in, &w3, 1e-6), KG_ERR_NO_DEVICE);
    kg_close(ctx);
}

/* ---- CPU: the reference -------------------------------------------------- */

Test(reference, matches_hand_computed_values)
{
    const double x[] = {1, 2, 3};
    double y[3], r0, r1;
    kg_norm_refs[KG_NORM_SOFTMAX](x, 3, NULL, NULL, 0, y, NULL, NULL);
    const double z = exp(1) + exp(2) + exp(3);
    for (int i = 0; i < 3; i++)
        cr_assert_float_eq(y[i], exp(x[i]) / z, 1e-15);
    kg_norm_refs[KG_NORM_LOG_SOFTMAX](x, 3, NULL, NULL, 0, y, NULL, NULL);
    cr_assert_float_eq(y[0], 1 - log(z), 1e-14);
    kg_norm_refs[KG_NORM_LOGSUMEXP](x, 3, NULL, NULL, 0, NULL, &r0, NULL);
    cr_assert_float_eq(r0, log(z), 1e-14);
    const double ninf[] = {-INFINITY, -INFINITY};
    kg_norm_refs[KG_NORM_LOGSUMEXP](ninf, 2, NULL, NULL, 0, NULL, &r0, NULL);
    cr_assert(isinf(r0) && r0 < 0);
    kg_norm_refs[KG_NORM_SOFTMAX](ninf, 2, NULL, NULL, 0, y, NULL, NULL);
    cr_assert(isnan(y[0]) && isnan(y[1]));
    const double big[] = {1e4, -1e4};
    kg_norm_refs[KG_NORM_SOFTMAX](big, 2, NULL, NULL, 0, y, NULL, NULL);
    cr_assert(y[0] == 1 && y[1] == 0);
    const double v[] = {1, 2, 3, 4}, w[] = {2, 2, 2, 2}, b[] = {1, 1, 1, 1};
    double y4[4];
    kg_norm_refs[KG_NORM_LAYER_NORM](v, 4, w, b, 0, y4, &r0, &r1);
    cr_assert_float_eq(r0, 2.5, 1e-15);
    cr_assert_float_eq(r1, 1 / sqrt(1.25), 1e-15);
    cr_assert_float_eq(y4[0], (1 - 2.5) / sqrt(1.25) * 2 + 1, 1e-14);
    kg_norm_refs[KG_NORM_RMS_NORM](v, 4, NULL, NULL, 0, y4, NULL, NULL);
    cr_assert_float_eq(y4[3], 4 / sqrt(7.5), 1e-14);

    /* eps inside the square root, on the (biased) variance / mean square:
       every GPU case runs with eps 1e-5 or 1e-6, so its place is pinned here
       by hand, not by the generated reference the kernels share a catalogue
       expression with */
    kg_norm_refs[KG_NORM_LAYER_NORM](v, 4, w, b, 0.25, y4, &r0, &r1);
    cr_assert_float_eq(r0, 2.5, 1e-15);
    cr_assert_float_eq(r1, 1 / sqrt(1.25 + 0.25), 1e-15);
    for (int i = 0; i < 4; i++)
        cr_assert_float_eq(y4[i], (v[i] - 2.5) / sqrt(1.5) * 2 + 1, 1e-14, "layer_norm eps 0.25, element %d", i);
    const double rw[] = {2, -1};
    kg_norm_refs[KG_NORM_RMS_NORM]((double[]){3, 4}, 2, rw, NULL, 0.5, y, NULL, NULL);
    cr_assert_float_eq(y[0], 3 / sqrt(12.5 + 0.5) * 2, 1e-15);
    cr_assert_float_eq(y[1], 4 / sqrt(12.5 + 0.5) * -1, 1e-15);
    /* a constant row: variance 0, eps keeps rstd finite and the output is
       the bias; a zero row under rms_norm is zero */
    kg_norm_refs[KG_NORM_LAYER_NORM]((double[]){5, 5, 5, 5}, 4, w, b, 1e-5, y4, &r0, &r1);
    cr_assert_float_eq(r1, 1 / sqrt(1e-5), 1e-10);
    for (int i = 0; i < 4; i++)
        cr_assert(y4[i] == 1, "layer_norm of a constant row, element %d: %.17g, want the bias 1", i, y4[i]);
    kg_norm_refs[KG_NORM_RMS_NORM]((double[]){0, 0, 0}, 3, NULL, NULL, 1e-5, y, NULL, NULL);
    cr_assert(y[0] == 0 && y[1] == 0 && y[2] == 0);
    /* rows of one element */
    kg_norm_refs[KG_NORM_SOFTMAX]((double[]){-7.5}, 1, NULL, NULL, 0, y, NULL, NULL);
    cr_assert(y[0] == 1);
    kg_norm_refs[KG_NORM_LOG_SOFTMAX]((double[]){-7.5}, 1, NULL, NULL, 0, y, NULL, NULL);
    cr_assert(y[0] == 0);
    kg_norm_refs[KG_NORM_LOGSUMEXP]((double[]){-7.5}, 1, NULL, NULL, 0, NULL, &r0, NULL);
    cr_assert(r0 == -7.5);
    kg_norm_refs[KG_NORM_LAYER_NORM]((double[]){3}, 1, NULL, NULL, 1e-5, y, &r0, &r1);
    cr_assert(y[0] == 0 && r0 == 3);
    /* a NaN anywhere in a row makes the whole row NaN (PyTorch); a row of
       all -inf is NaN for softmax and log_softmax, -inf for logsumexp */
    const double nanrow[] = {1, NAN, 2};
    for (int op = KG_NORM_NONE + 1; op < KG_NORM_COUNT; op++) {
        double yy[3] = {0, 0, 0}, q0 = 0, q1 = 0;
        kg_norm_refs[op](nanrow, 3, NULL, NULL, 1e-5, yy, &q0, &q1);
        if (op == KG_NORM_LOGSUMEXP)
            cr_assert(isnan(q0), "logsumexp of a row with a NaN: %g", q0);
        else
            cr_assert(isnan(yy[0]) && isnan(yy[1]) && isnan(yy[2]), "op %d: a NaN does not spread over the row", op);
    }
    kg_norm_refs[KG_NORM_LOG_SOFTMAX](ninf, 2, NULL, NULL, 0, y, NULL, NULL);
    cr_assert(isnan(y[0]) && isnan(y[1]));
    /* huge magnitudes: no overflow */
    kg_norm_refs[KG_NORM_LOGSUMEXP](big, 2, NULL, NULL, 0, NULL, &r0, NULL);
    cr_assert(r0 == 1e4, "logsumexp of [1e4, -1e4]: %.17g", r0);
    kg_norm_refs[KG_NORM_LOG_SOFTMAX](big, 2, NULL, NULL, 0, y, NULL, NULL);
    cr_assert(y[0] == 0 && y[1] == -2e4);
}

/* ---- GPU: parity with the reference --------------------------------------- */

/* One GPU call: an op over a tensor of `shape`, stored with its dims in the
   order perm (outermost first; NULL: row-major), every `step`-th element
   along the storage's innermost dim. */
typedef struct ncase {
    kg_norm_op op;
    kg_dtype dt;
    int ndim;
    int64_t shape[KG_MAX_DIMS];
    const int *perm;
    int step;
    int axis; /* softmax, log_softmax */
    int axes[8], n_axes, keepdim;
    int k;           /* layer_norm */
    int w, b, stats; /* layer_norm/rms_norm: weight, bias (1: full; 2: broadcast over the first k-1 dims), mean/rstd */
    int res;         /* rms_norm: the residual form */
    int out_like_in; /* out has the input's strides (else contiguous) */
    int inplace;     /* out is in */
    int fill;        /* 0 random; 1 huge magnitudes; 2 constant rows; 3 specials (-inf rows, NaN, +inf) */
} ncase;

static int classes_seen[KG_NORM_CLASS_COUNT];

/* Strides of a dense storage of `shape` with dims in order perm, the
   innermost spaced by step; returns the storage's extent in elements. */
static int64_t layout(int nd, const int64_t *shape, const int *perm, int step, int64_t *strides)
{
    int64_t s = step;
    for (int i = nd - 1; i >= 0; i--) {
        const int d = perm ? perm[i] : i;
        strides[d] = s;
        s *= shape[d] > 0 ? shape[d] : 1;
    }
    int64_t ext = 1;
    for (int d = 0; d < nd; d++) {
        if (shape[d] == 0)
            return 1;
        ext += (shape[d] - 1) * strides[d];
    }
    return ext;
}

typedef struct dten {
    kg_tensor t;
    void *host;
    int64_t ext;
} dten;

static dten dalloc(kg_context *ctx, kg_dtype dt, int nd, const int64_t *shape, const int *perm, int step)
{
    dten d;
    memset(&d, 0, sizeof d);
    d.t.dtype = dt;
    d.t.ndim = nd;
    for (int i = 0; i < nd; i++)
        d.t.shape[i] = shape[i];
    d.ext = layout(nd, shape, perm, step, d.t.strides);
    const size_t bytes = (size_t)d.ext * kg_dtype_size(dt);
    d.t.data = kt_alloc(ctx, bytes);
    d.host = malloc(bytes);
    memset(d.host, 0xff, bytes); /* NaN for every float dtype */
    return d;
}

static void dfree(kg_context *ctx, dten *d)
{
    if (d->t.data)
        kg_free(ctx, d->t.data);
    free(d->host);
}

static void dput(kg_context *ctx, dten *d)
{
    kt_upload(ctx, d->t.data, d->host, (size_t)d->ext * kg_dtype_size(d->t.dtype));
}
static void dget(kg_context *ctx, dten *d)
{
    kt_download(ctx, d->host, d->t.data, (size_t)d->ext * kg_dtype_size(d->t.dtype));
}

/* Offset of the logical index idx (row-major number) of t. */
static int64_t off_of(const kg_tensor *t, int64_t idx)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (idx % t->shape[d]) * t->strides[d];
        idx /= t->shape[d];
    }
    return off;
}

static void check_case(kg_context *ctx, const ncase *c)
{
    const kg_norm_info *info = &kg_norm_infos[c->op];
    const kg_dtype dt = c->dt, sdt = dt == KG_F64 ? KG_F64 : KG_F32;
    const int nd = c->ndim;
    uint64_t rng = kt_seed() ^ (uint64_t)(c->op * 7919 + dt * 104729 + nd * 31 + c->shape[nd ? nd - 1 : 0]);
    /* the normalized dims */
    unsigned mask = 0;
    if (info->axes == KG_NORM_AXIS_ONE)
        mask = nd ? 1u << (c->axis < 0 ? c->axis + nd : c->axis) : 0;
    else if (info->axes == KG_NORM_AXIS_ANY) {
        for (int i = 0; i < c->n_axes; i++)
            mask |= 1u << (c->axes[i] < 0 ? c->axes[i] + nd : c->axes[i]);
        if (c->n_axes == 0)
            mask = (1u << nd) - 1;
    } else
        mask = ((1u << c->k) - 1) << (nd - c->k);
    int64_t rows = 1, L = 1, kshape[KG_MAX_DIMS], nshape[KG_MAX_DIMS];
    int nk = 0, nn = 0;
    int64_t rshape[KG_MAX_DIMS];
    int rnd = 0;
    for (int d = 0; d < nd; d++) {
        if ((mask >> d) & 1u) {
            L *= c->shape[d];
            nshape[nn++] = c->shape[d];
            if (info->axes == KG_NORM_AXIS_ANY && c->keepdim)
                rshape[rnd++] = 1;
        } else {
            rows *= c->shape[d];
            kshape[nk++] = c->shape[d];
            rshape[rnd++] = c->shape[d];
        }
    }

    dten in = dalloc(ctx, dt, nd, c->shape, c->perm, c->step ? c->step : 1);
    const double lo = -3, hi = 3;
    for (int64_t i = 0; i < in.ext; i++)
        kt_set(in.host, dt, i, kt_uniform(&rng, lo, hi));
    const int64_t total = rows * L;
    for (int64_t i = 0; i < total; i++) {
        const int64_t o = off_of(&in.t, i);
        const int64_t r = i / (c->shape[nd - 1] ? c->shape[nd - 1] : 1);
        if (c->fill == 1)
            kt_set(in.host, dt, o, (i & 1 ? -1 : 1) * (dt == KG_F16 ? 6e4 : 1e4) * kt_uniform(&rng, 0.5, 1));
        else if (c->fill == 2)
            kt_set(in.host, dt, o, (double)(r % 5) - 2.5);
        else if (c->fill == 3) {
            const int kind = (int)(r % 5);
            if (kind == 0)
                kt_set(in.host, dt, o, -INFINITY);
            else if (kind == 1 && i % 7 == 3)
                kt_set(in.host, dt, o, NAN);
            else if (kind == 2 && i % 5 == 1)
                kt_set(in.host, dt, o, INFINITY);
            else if (kind == 3 && i % 3 == 0)
                kt_set(in.host, dt, o, -INFINITY);
        } else if (c->fill == 4) {
            /* -inf but for two values near -100 in each run of L along the rows (the column of an outer-axis
               softmax whose normalized dim is the one before the last): a column maximum below -88.7, most lanes'
               rows all -inf */
            const int64_t j = i % (c->shape[nd - 1] ? c->shape[nd - 1] : 1), q = L ? r % L : 0;
            const int fin = L && (q == (7 * j + 3) % L || q == (11 * j + 5) % L);
            kt_set(in.host, dt, o, fin ? -100 - 10 * kt_uniform(&rng, 0, 1) : -INFINITY);
        }
    }
    dput(ctx, &in);

    dten out = {0}, res = {0}, w = {0}, b = {0}, s0 = {0}, s1 = {0};
    const kg_tensor *outp = NULL;
    if (info->elementwise) {
        if (c->inplace) {
            outp = &in.t;
        } else {
            out =
                dalloc(ctx, dt, nd, c->shape, c->out_like_in ? c->perm : NULL, c->out_like_in && c->step ? c->step : 1);
            dput(ctx, &out);
            outp = &out.t;
        }
    }
    double *resh = NULL;
    if (c->res) {
        res = dalloc(ctx, dt, nd, c->shape, NULL, 1);
        for (int64_t i = 0; i < res.ext; i++)
            kt_set(res.host, dt, i, kt_uniform(&rng, lo, hi));
        dput(ctx, &res);
        resh = malloc(sizeof(double) * (size_t)(total > 0 ? total : 1));
        for (int64_t i = 0; i < total; i++)
            resh[i] = kt_get(res.host, dt, off_of(&res.t, i));
    }
    const int kparam = info->axes == KG_NORM_AXIS_LAST || info->axes == KG_NORM_AXIS_LAST1 ? c->k : 0;
    if (c->w) {
        const int wn = c->w == 2 ? 1 : kparam;
        w = dalloc(ctx, dt, wn, c->shape + nd - wn, NULL, 1);
        for (int64_t i = 0; i < w.ext; i++)
            kt_set(w.host, dt, i, kt_uniform(&rng, 0.5, 1.5));
        dput(ctx, &w);
    }
    if (c->b) {
        const int bn = c->b == 2 ? 1 : kparam;
        b = dalloc(ctx, dt, bn, c->shape + nd - bn, NULL, 1);
        for (int64_t i = 0; i < b.ext; i++)
            kt_set(b.host, dt, i, kt_uniform(&rng, -1, 1));
        dput(ctx, &b);
    }
    if (info->nres && !kparam) {
        s0 = dalloc(ctx, dt, rnd, rshape, NULL, 1);
        dput(ctx, &s0);
    }
    if (c->stats) {
        s0 = dalloc(ctx, sdt, rnd, rshape, NULL, 1);
        s1 = dalloc(ctx, sdt, rnd, rshape, NULL, 1);
        dput(ctx, &s0);
        dput(ctx, &s1);
    }
    kg_norm_call call = {.op = c->op,
                         .out = outp,
                         .in = &in.t,
                         .res = c->res ? &res.t : NULL,
                         .w = c->w ? &w.t : NULL,
                         .b = c->b ? &b.t : NULL,
                         .s0 = s0.host ? &s0.t : NULL,
                         .s1 = s1.host ? &s1.t : NULL,
                         .axis = c->axis,
                         .axes = c->axes,
                         .n_axes = c->n_axes,
                         .keepdim = c->keepdim,
                         .k = c->k,
                         .eps = 1e-5};
    kg_norm_plan plan;
    kg_status st = kg_norm_plan_call(ctx, &call, 132, &plan);
    cr_assert_eq(st, KG_OK, "%s", kg_errmsg(ctx));
    if (!plan.empty)
        classes_seen[plan.cls]++;

    switch (c->op) {
    case KG_NORM_SOFTMAX: KT_OK(ctx, kg_softmax(ctx, outp, &in.t, c->axis)); break;
    case KG_NORM_LOG_SOFTMAX: KT_OK(ctx, kg_log_softmax(ctx, outp, &in.t, c->axis)); break;
    case KG_NORM_LOGSUMEXP: KT_OK(ctx, kg_logsumexp(ctx, call.s0, &in.t, c->axes, c->n_axes, c->keepdim)); break;
    case KG_NORM_LAYER_NORM:
        KT_OK(ctx, kg_layer_norm(ctx, outp, call.s0, call.s1, &in.t, c->k, call.w, call.b, 1e-5));
        break;
    default:
        if (c->res)
            KT_OK(ctx, kg_rms_norm_residual(ctx, outp, &res.t, &in.t, call.w, 1e-5));
        else
            KT_OK(ctx, kg_rms_norm(ctx, outp, &in.t, call.w, 1e-5));
    }
    KT_OK(ctx, kg_sync(ctx));

    /* the input as uploaded (in place overwrites the device copy only) */
    double *xin = malloc(sizeof(double) * (size_t)(total > 0 ? total : 1));
    for (int64_t i = 0; i < total; i++)
        xin[i] = kt_get(in.host, dt, off_of(&in.t, i));
    dten *od = c->inplace ? &in : &out;
    if (info->elementwise)
        dget(ctx, od);
    if (c->res)
        dget(ctx, &res);
    if (s0.host)
        dget(ctx, &s0);
    if (s1.host)
        dget(ctx, &s1);

    double rtol, atol, srtol, satol;
    kt_tolerance(dt, &rtol, &atol);
    kt_tolerance(sdt, &srtol, &satol);
    double *x = malloc(sizeof(double) * (size_t)(L > 0 ? L : 1)), *y = malloc(sizeof(double) * (size_t)(L > 0 ? L : 1));
    double *wr = malloc(sizeof(double) * (size_t)(L > 0 ? L : 1)),
           *br = malloc(sizeof(double) * (size_t)(L > 0 ? L : 1));
    int64_t *at = malloc(sizeof(int64_t) * (size_t)(L > 0 ? L : 1));
    int bad = 0;
    for (int64_t r = 0; r < rows && bad < 5; r++) {
        /* logical index of (row r, element e): interleave the kept and normalized digits */
        for (int64_t e = 0; e < L; e++) {
            int64_t rr = r, ee = e, idx = 0, mul = 1;
            int ik = nk - 1, in_ = nn - 1;
            for (int d = nd - 1; d >= 0; d--) {
                int64_t digit;
                if ((mask >> d) & 1u) {
                    digit = ee % nshape[in_];
                    ee /= nshape[in_--];
                } else {
                    digit = rr % kshape[ik];
                    rr /= kshape[ik--];
                }
                idx += digit * mul;
                mul *= c->shape[d];
            }
            at[e] = idx;
            if (c->res) {
                /* h as the device wrote it, checked against x + r rounded */
                const double h = kt_get(res.host, dt, off_of(&res.t, idx));
                const double want = kt_round(dt, xin[idx] + resh[idx]);
                if (!kt_close(h, want, rtol, atol) && bad++ < 5)
                    cr_log_error("residual at %lld: got %.9g want %.9g (seed %llu)", (long long)idx, h, want,
                                 (unsigned long long)kt_seed());
                x[e] = h;
            } else {
                x[e] = xin[idx];
            }
            const int64_t ne = e; /* position within the normalized shape (row-major) */
            wr[e] = 1;
            br[e] = 0;
            if (c->w)
                wr[e] = kt_get(w.host, dt, off_of(&w.t, ne % kg_numel(&w.t)));
            if (c->b)
                br[e] = kt_get(b.host, dt, off_of(&b.t, ne % kg_numel(&b.t)));
        }
        double r0 = 0, r1 = 0;
        kg_norm_refs[c->op](x, L, c->w ? wr : NULL, c->b ? br : NULL, 1e-5, y, &r0, &r1);
        /* layer_norm's conditioning: the mean carries the rounding of a sum
           in the accumulator, up to (32 + log2 n) u max|x| (each lane adds
           up to 32 values in turn, lanes combine in a tree); x - mean carries
           that plus u |x|, which rstd scales up when the deviations are small
           next to the values; rstd carries the same relative error. That
           bound is added to the dtype's tolerance (a constant or nearly
           constant row with a large mean needs it). */
        const double u = dt == KG_F64 ? 0x1p-53 : 0x1p-24;
        double cond = 0, emean = 0;
        if (info->stats == KG_NORM_STATS_MOMENTS) {
            double xmax = 0;
            for (int64_t e = 0; e < L; e++)
                xmax = fabs(x[e]) > xmax ? fabs(x[e]) : xmax;
            emean = (32 + log2((double)L + 1)) * u * xmax;
            cond = (emean + 4 * u * xmax) * (isfinite(r1) ? r1 : 0);
        }
        if (info->elementwise)
            for (int64_t e = 0; e < L && bad < 5; e++) {
                const double got = kt_get(od->host, dt, off_of(&od->t, at[e]));
                const double want = kt_round(dt, y[e]);
                if (!kt_close(got, want, rtol, atol + cond * fabs(wr[e]))) {
                    bad++;
                    cr_log_error("%s %s row %lld elem %lld: got %.9g want %.9g (x %.9g) (seed %llu)", info->name,
                                 kg_dtype_name(dt), (long long)r, (long long)e, got, want, x[e],
                                 (unsigned long long)kt_seed());
                }
            }
        if (s0.host) {
            const double got = kt_get(s0.host, s0.t.dtype, off_of(&s0.t, r));
            const double want = kt_round(s0.t.dtype, r0);
            const double tr = s0.t.dtype == dt ? rtol : srtol, ta = (s0.t.dtype == dt ? atol : satol) + emean;
            if (!kt_close(got, want, tr, ta)) {
                bad++;
                cr_log_error("%s %s row %lld result: got %.9g want %.9g (seed %llu)", info->name, kg_dtype_name(dt),
                             (long long)r, got, want, (unsigned long long)kt_seed());
            }
        }
        if (s1.host) {
            const double got = kt_get(s1.host, sdt, off_of(&s1.t, r));
            if (!kt_close(got, kt_round(sdt, r1), srtol * 4 + cond, satol)) {
                bad++;
                cr_log_error("%s %s row %lld rstd: got %.9g want %.9g (seed %llu)", info->name, kg_dtype_name(dt),
                             (long long)r, got, r1, (unsigned long long)kt_seed());
            }
        }
    }
    char sh[128];
    cr_assert_eq(bad, 0, "%s %s %s: %d mismatches (plan class %d, seed %llu)", info->name, kg_dtype_name(dt),
                 kg_shape_str(sh, sizeof sh, nd, c->shape), bad, plan.cls, (unsigned long long)kt_seed());
    free(x);
    free(y);
    free(wr);
    free(br);
    free(at);
    free(xin);
    free(resh);
    dfree(ctx, &in);
    dfree(ctx, &out);
    dfree(ctx, &res);
    dfree(ctx, &w);
    dfree(ctx, &b);
    dfree(ctx, &s0);
    dfree(ctx, &s1);
}

static const kg_dtype floats[] = {KG_F32, KG_F64, KG_F16, KG_BF16};

/* The five ops and the residual form over one shape along its last dim. */
static void every_op(kg_context *ctx, kg_dtype dt, int nd, const int64_t *shape, const int *perm, int step, int fill)
{
    ncase c = {.dt = dt, .ndim = nd, .perm = perm, .step = step, .fill = fill, .axis = -1, .k = 1};
    memcpy(c.shape, shape, sizeof(int64_t) * (size_t)nd);
    c.op = KG_NORM_SOFTMAX;
    check_case(ctx, &c);
    c.op = KG_NORM_LOG_SOFTMAX;
    check_case(ctx, &c);
    c.op = KG_NORM_LOGSUMEXP;
    c.axes[0] = nd - 1;
    c.n_axes = 1;
    check_case(ctx, &c);
    c.op = KG_NORM_LAYER_NORM;
    c.w = c.b = c.stats = 1;
    check_case(ctx, &c);
    c.op = KG_NORM_RMS_NORM;
    c.b = c.stats = 0;
    check_case(ctx, &c);
    c.res = 1;
    check_case(ctx, &c);
}

TestSuite(gpu, .timeout = 300);

/* Rows of every length (PACKED, LEAN, ROWS, STRIDED by default). */
Test(gpu, rows_of_every_length_every_op_and_dtype)
{
    kg_context *ctx = kt_open_gpu();
    const int64_t lens[] = {1, 2, 31, 32, 33, 64, 1000, 2048, 4096, 4097, 16384, 32768, 65537};
    for (int d = 0; d < 4; d++)
        for (int i = 0; i < 13; i++) {
            if (!kt_take(3)) /* sanitizer mode (kg_test.h): a seeded sample */
                continue;
            int64_t rows = (int64_t)(1 << 17) / lens[i];
            rows = rows < 3 ? 3 : rows > 1003 ? 1003 : rows;
            every_op(ctx, floats[d], 2, KT_SHAPE(rows, lens[i]), NULL, 1, 0);
        }
    kg_close(ctx);
}

/* LEANU: contiguous rows that 16-byte vectors do not tile (lengths not a
   multiple of the vector, so rows start inside a vector; a neighbour's
   elements share the first and last vectors), every op and dtype, the
   residual form, in place, special values and constant rows: LEANU (the
   whole-vector folds, the masked folds) without LEANW, then LEANW (rows
   4-byte words tile: even 2-byte lengths by default, f32 too under the
   tuning of 8 words a lane) beside LEANU for the rest; f64 takes
   STRIDED. */
Test(gpu, rows_vectors_do_not_tile)
{
    kg_context *ctx = kt_open_gpu();
    static const int tus[] = {0, 0, 0, 0}, san[] = {0, -1, 0, 0}, tw[] = {-1, -1, 8, 0};
    const int64_t lens[] = {3, 5, 7, 9, 31, 33, 100, 126, 317, 1001, 2814, 4097, 5630, 16378};
    for (int t = 0; t < 4; t++) {
        if (!kt_take(2)) /* sanitizer mode (kg_test.h): a seeded sample of the tunings */
            continue;
        kgi_norm_tuning.leanu = tus[t];
        kgi_norm_tuning.usan = san[t];
        kgi_norm_tuning.leanw = tw[t];
        memset(classes_seen, 0, sizeof classes_seen);
        for (int d = 0; d < 4; d++)
            for (int i = 0; i < 14; i++) {
                int64_t rows = (int64_t)(1 << 16) / lens[i];
                rows = rows < 3 ? 3 : rows > 403 ? 403 : rows;
                every_op(ctx, floats[d], 2, KT_SHAPE(kt_size(rows, 8), lens[i]), NULL, 1, 0);
                ncase c = {.op = KG_NORM_LAYER_NORM,
                           .dt = floats[d],
                           .ndim = 2,
                           .step = 1,
                           .axis = -1,
                           .k = 1,
                           .w = 1,
                           .b = 1,
                           .stats = 1,
                           .inplace = 1};
                c.shape[0] = kt_size(rows, 8);
                c.shape[1] = lens[i];
                check_case(ctx, &c); /* in place */
                c.op = KG_NORM_SOFTMAX;
                c.w = c.b = c.stats = 0;
                check_case(ctx, &c);
            }
        every_op(ctx, KG_F32, 2, KT_SHAPE(20, 2001), NULL, 1, 3);  /* -inf rows, NaN, +inf */
        every_op(ctx, KG_BF16, 2, KT_SHAPE(20, 2001), NULL, 1, 2); /* constant rows */
        every_op(ctx, KG_F16, 2, KT_SHAPE(6, 4095), NULL, 1, 1);   /* huge magnitudes */
        const int m = san[t] < 0;
        if (tw[t] <= 0) /* f32's LEANU: 8 vectors a lane */
            cr_assert_gt(classes_seen[m ? KG_NORM_LEANU8 : KG_NORM_LEANU8S], 0, "tuning %d", t);
        if (tw[t] >= 0) /* LEANW: 16 words a lane by default, 8 under the tuning; the residual form 8 */
            cr_assert_gt(classes_seen[tw[t] == 8 ? KG_NORM_LEANW8 : KG_NORM_LEANW16], 0, "tuning %d", t);
        if (tw[t] >= 0)
            cr_assert_gt(classes_seen[KG_NORM_LEANW8_RES], 0, "tuning %d", t);
        cr_assert_gt(classes_seen[m ? KG_NORM_LEANU4_RES : KG_NORM_LEANU4S_RES], 0, "tuning %d", t);
        /* the 2-byte types' default (odd lengths with LEANW) */
        cr_assert_gt(classes_seen[m ? KG_NORM_LEANU4 : KG_NORM_LEANU4S], 0, "tuning %d", t);
    }
    kgi_norm_tuning = (kg_norm_tuning){0};
    kg_close(ctx);
}

/* LEAN under its tunings (4 or 8 vectors a lane, more lanes a row than it
   needs, blocks of 512 for warp groups, LOOSE), and ROWS without it: rows of 3 to 16384 vectors, every op
   and dtype, special values and huge magnitudes. */
static void lean_rows_under(const kg_norm_tuning *tunings, size_t ntunings)
{
    kg_context *ctx = kt_open_gpu();
    const int64_t lens[] = {32, 128, 1000, 4096, 16384, 32768};
    for (size_t t = 0; t < ntunings; t++) {
        /* sanitizer mode (kg_test.h): a seeded sample of the tunings (each
           run whole: its class must be reached), rows cut to 8 */
        if (!kt_take(2))
            continue;
        kgi_norm_tuning = tunings[t];
        memset(classes_seen, 0, sizeof classes_seen);
        for (int d = 0; d < 4; d++)
            for (int i = 0; i < 6; i++) {
                int64_t rows = (int64_t)(1 << 16) / lens[i];
                rows = rows < 3 ? 3 : rows > 403 ? 403 : rows;
                every_op(ctx, floats[d], 2, KT_SHAPE(kt_size(rows, 8), lens[i]), NULL, 1, 0);
            }
        every_op(ctx, KG_F32, 2, KT_SHAPE(kt_size(20, 8), 2000), NULL, 1, 3);  /* -inf rows, NaN, +inf */
        every_op(ctx, KG_BF16, 2, KT_SHAPE(kt_size(20, 8), 2000), NULL, 1, 2); /* constant rows */
        every_op(ctx, KG_BF16, 2, KT_SHAPE(6, 32768), NULL, 1, 1);             /* huge magnitudes */
        every_op(ctx, KG_F32, 2, KT_SHAPE(6, 32768), NULL, 1, 3);
        const kg_norm_tuning *tu = &tunings[t];
        if (tu->lean == 0)
            continue; /* the default classes */
        const kg_norm_class want = tu->lean < 0       ? KG_NORM_ROWS
                                   : tu->lean == 16   ? KG_NORM_LEAN16
                                   : tu->pf           ? (tu->lean == 4 ? KG_NORM_LEAN4P : KG_NORM_LEAN8P)
                                   : tu->loose        ? (tu->lean == 4 ? KG_NORM_LEAN4L : KG_NORM_LEAN8L)
                                   : tu->variant == 1 ? KG_NORM_LEAN8C
                                   : tu->variant == 2 ? KG_NORM_LEAN8S
                                   : tu->variant == 3 ? KG_NORM_LEAN8F
                                                      : (tu->lean == 4 ? KG_NORM_LEAN4 : KG_NORM_LEAN8);
        cr_assert_gt(classes_seen[want], 0, "tuning %zu", t);
        if (tu->lean == 4 && tu->variant == 1) /* the residual form's LEAN4_RESC */
            cr_assert_gt(classes_seen[KG_NORM_LEAN4_RESC], 0, "tuning %zu", t);
    }
    kgi_norm_tuning = (kg_norm_tuning){0};
    kg_close(ctx);
}

Test(gpu, lean_rows_under_every_tuning)
{
    static const kg_norm_tuning tunings[] = {
        {.lean = 4},
        {.lean = 8},
        {.lean = 4, .group = 512},
        {.lean = 8, .threads = 512},
        {.lean = -1},
        {.lean = 4, .loose = 1},
        {.lean = 8, .loose = 1},
    };
    lean_rows_under(tunings, sizeof tunings / sizeof tunings[0]);
}

/* The norms' LEAN8 variants (LEAN8C, LEAN8S; every other op, and f64, runs
   LEAN8 under them), the 2-byte lse ops' LEAN8F (LEAN4F is their default)
   and the residual form's LEAN4_RESC. Plain LEAN4 / LEAN8 (where the planner now takes a variant) run
   under lean_rows_under_every_tuning's {.lean = 4 / 8}. */
Test(gpu, lean_rows_under_variant_tunings)
{
    static const kg_norm_tuning tunings[] = {
        {.lean = 8, .variant = 1},
        {.lean = 8, .variant = 2},
        {.lean = 8, .variant = 3},
        {.lean = 4, .variant = 1},
    };
    lean_rows_under(tunings, sizeof tunings / sizeof tunings[0]);
}

/* The PF forms (LEAN4P, LEAN8P: the next row loaded before this one's
   statistics, where generated; elsewhere the base class), also with 3
   blocks in all, so that each block walks many rows
   (the last walk past the end) and its prefetches cross rows; and LEAN16
   (the 2-byte norms, 16 vectors a lane; elsewhere the planner's LEAN4). */
Test(gpu, lean_rows_under_prefetch_tunings)
{
    static const kg_norm_tuning tunings[] = {
        {.lean = 4, .pf = 1},
        {.lean = 8, .pf = 1},
        {.lean = 4, .pf = 1, .grid = 3},
        {.lean = 8, .pf = 1, .grid = 3, .threads = 128},
        {.pf = 1, .grid = 5},
        {.lean = 16},
        {.lean = 16, .grid = 3, .threads = 128},
    };
    lean_rows_under(tunings, sizeof tunings / sizeof tunings[0]);
}

/* LEAN rows of more than a warp in the fewest whole warps that hold them
   (the tuning's g32: 96, 160, 224 ... lanes, not a power of two), with
   LEAN4 / LEAN8 and the planner's classes: every op and dtype, rows whose
   vectors fill the last warp in part, special values, huge magnitudes.
   Asserts that such a group was planned (bf16 layer_norm of 5120: 96). */
Test(gpu, lean_rows_in_whole_warps)
{
    kg_context *ctx = kt_open_gpu();
    static const kg_norm_tuning tunings[] = {{.g32 = 1}, {.g32 = 1, .lean = 4}, {.g32 = 1, .lean = 8}};
    const int64_t lens[] = {5120, 3000, 12288, 20480};
    for (size_t t = 0; t < sizeof tunings / sizeof tunings[0]; t++) {
        if (!kt_take(2))
            continue;
        kgi_norm_tuning = tunings[t];
        for (int d = 0; d < 4; d++)
            for (int i = 0; i < 4; i++) {
                const int64_t rows = (int64_t)(1 << 16) / lens[i] < 3 ? 3 : (int64_t)(1 << 16) / lens[i];
                every_op(ctx, floats[d], 2, KT_SHAPE(kt_size(rows, 8), lens[i]), NULL, 1, 0);
            }
        every_op(ctx, KG_F32, 2, KT_SHAPE(kt_size(20, 8), 5120), NULL, 1, 3);  /* -inf rows, NaN, +inf */
        every_op(ctx, KG_BF16, 2, KT_SHAPE(kt_size(20, 8), 5120), NULL, 1, 2); /* constant rows */
        every_op(ctx, KG_BF16, 2, KT_SHAPE(6, 12288), NULL, 1, 1);             /* huge magnitudes */
    }
    kgi_norm_tuning = (kg_norm_tuning){.g32 = 1};
    const int64_t shape[2] = {131, 5120};
    kg_tensor x = kg_tensor_contiguous((void *)(uintptr_t)4096, KG_BF16, 2, shape);
    kg_norm_call c = {.op = KG_NORM_LAYER_NORM, .in = &x, .out = &x, .k = 1, .eps = 1e-5};
    kg_norm_plan p;
    KT_OK(ctx, kg_norm_plan_call(ctx, &c, 132, &p));
    cr_assert_eq(p.args.group, 96);
    cr_assert_eq(p.args.nv, 7);
    cr_assert_eq(p.block, 96u);
    kgi_norm_tuning = (kg_norm_tuning){0};
    kg_close(ctx);
}

/* Rows of 32 elements at 2 vectors a lane in blocks of 128 (pair32), the
   2-byte ones by LEAN2 / LEAN2E / LEAN2R (lean2_rule): the default (rows of 32, 64
   and 128), the tuning's pair 1 with LEAN4 / LEAN4F (lean2 -1: every op,
   the f32 logsumexp too), with LEAN2 (lean2 1), the plans before (pair -1,
   lean2 -1), and LEAN2 of the 2-byte rows of 32, 64 and 128 elements of
   every op (lean2 2), LEAN2R of the 2-byte rows of 32 (lean2 5: two rows
   a group, 128 rows a block), of 32 and 64 (lean2 6) and of 32, 64 and 128
   (lean2 8); every op and dtype, row counts that leave a block's
   last rows empty (64 rows a block of 2 lanes, 32 of 4, 16 of 8), -inf /
   NaN / +inf, constant rows, huge magnitudes. Asserts the classes
   reached. */
Test(gpu, rows_of_32_in_pairs)
{
    kg_context *ctx = kt_open_gpu();
    static const kg_norm_tuning tunings[] = {
        {0}, {.pair = 1, .lean2 = -1}, {.pair = 1, .lean2 = 1}, {.pair = -1, .lean2 = -1}, {.lean2 = 2},
        {.pair = 1, .lean2 = 5}, {.lean2 = 6}, {.lean2 = 8}};
    const int64_t rows[] = {1, 31, 63, 64, 65, 1000, 4099};
    for (size_t t = 0; t < sizeof tunings / sizeof tunings[0]; t++) {
        kgi_norm_tuning = tunings[t];
        memset(classes_seen, 0, sizeof classes_seen);
        for (int64_t len = 32; len <= (t == 0 || t == 4 || t == 7 ? 128 : t == 6 ? 64 : 32); len *= 2) {
            for (int d = 0; d < 4; d++)
                for (int i = 0; i < 7; i++)
                    every_op(ctx, floats[d], 2, KT_SHAPE(kt_size(rows[i], 65), len), NULL, 1, 0);
            for (int d = 0; d < 4; d++) {
                every_op(ctx, floats[d], 2, KT_SHAPE(kt_size(200, 65), len), NULL, 1, 3); /* -inf rows, NaN, +inf */
                every_op(ctx, floats[d], 2, KT_SHAPE(kt_size(200, 65), len), NULL, 1, 2); /* constant rows */
                every_op(ctx, floats[d], 2, KT_SHAPE(kt_size(200, 65), len), NULL, 1, 1); /* huge magnitudes */
            }
        }
        if (t == 0) {
            cr_assert_gt(classes_seen[KG_NORM_LEAN2E], 0);
            cr_assert_gt(classes_seen[KG_NORM_LEAN2R], 0);
        }
        if (t == 3)
            cr_assert_gt(classes_seen[KG_NORM_PACKED], 0);
        else /* the 2-byte rows of 2 lanes */
            cr_assert_gt(classes_seen[t == 1 ? KG_NORM_LEAN4F : t >= 5 ? KG_NORM_LEAN2R : KG_NORM_LEAN2], 0,
                         "tuning %zu", t);
    }
    kgi_norm_tuning = (kg_norm_tuning){0};
    kg_close(ctx);
}

/* COLS under the split tunings: one slice per column tile, 3, 16; 4 and 16
   blocks a multiprocessor; softmax by COLS where COLSV would serve. */
Test(gpu, columns_under_split_tunings)
{
    kg_context *ctx = kt_open_gpu();
    static const kg_norm_tuning tunings[] = {{.col_splits = 1},
                                             {.col_splits = 3},
                                             {.col_splits = 16},
                                             {.bps = 4},
                                             {.bps = 16},
                                             {.colsv = -1, .cluster = -1},
                                             {.colsv = -1, .col_splits = 3, .cluster = -1}};
    const int p10[] = {1, 0};
    for (size_t t = 0; t < sizeof tunings / sizeof tunings[0]; t++) {
        if (!kt_take(2)) /* sanitizer mode (kg_test.h): a seeded sample of the tunings */
            continue;
        kgi_norm_tuning = tunings[t];
        memset(classes_seen, 0, sizeof classes_seen);
        for (int d = 0; d < 4; d++) {
            every_op(ctx, floats[d], 2, KT_SHAPE(kt_size(3000, 600), 40), p10, 1, 0);
            every_op(ctx, floats[d], 2, KT_SHAPE(40, 50), p10, 1, 3);
        }
        every_op(ctx, KG_F32, 2, KT_SHAPE(1000, 300), p10, 1, 1);
        cr_assert_gt(classes_seen[KG_NORM_COLS_STATS], 0, "tuning %zu", t);
    }
    kgi_norm_tuning = (kg_norm_tuning){0};
    kg_close(ctx);
}

/* softmax and log_softmax along an outer axis under one tuning (CLUSTER on
   compute capability 9.0 where the column fits; elsewhere COLS):
   columns one strip or several (partial), rows of one block to 16 (partial
   blocks, blocks past the end), an outer dim, in place, -inf / NaN / +inf
   columns, huge magnitudes, many strips a cluster; asserts that clusters
   launched on sm_90. cap: rows a block of the configuration; most: the
   longest column to try. */
static void outer_softmax_cases(kg_context *ctx, int64_t cap, int64_t most, const char *what)
{
    int ma = 0, mi = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, &ma, &mi, NULL));
    const kg_dtype dts[] = {KG_F32, KG_F16, KG_BF16};
    const long before = kgi_norm_cluster_launches;
    for (int d = 0; d < 3; d++) {
        const int64_t ns[] = {1, 33, cap - 1, cap + 7, 16 * cap - 5};
        for (int k = 0; k < 5; k++) {
            const int64_t n = ns[k] > most ? most : ns[k];
            const int64_t cols = k == 4 ? 8 : k == 2 ? 136 : 40;
            ncase c = {
                .op = KG_NORM_SOFTMAX, .dt = dts[d], .ndim = 2, .shape = {n, cols}, .axis = 0, .fill = k == 1 ? 3 : 0};
            check_case(ctx, &c);
            c.op = KG_NORM_LOG_SOFTMAX;
            c.inplace = k == 2 || k == 3; /* (k 2: a column one block holds, COLT's too) */
            check_case(ctx, &c);
        }
        /* an outer dim, huge magnitudes, along dim 1 of [3, n, 24] */
        ncase c = {.op = KG_NORM_SOFTMAX, .dt = dts[d], .ndim = 3, .shape = {3, cap + 100, 24}, .axis = 1, .fill = 1};
        check_case(ctx, &c);
        c.op = KG_NORM_LOG_SOFTMAX;
        c.fill = 2;
        check_case(ctx, &c);
        /* an outer dim, dim 1 of [5, n, 72] with n <= 200 (COLT's rows by default) */
        ncase f = {.op = KG_NORM_LOG_SOFTMAX, .dt = dts[d], .ndim = 3, .shape = {5, cap < 200 ? cap : 200, 72},
                   .axis = 1, .fill = 1};
        check_case(ctx, &f);
        /* many strips: [300, 4096] */
        ncase m = {.op = KG_NORM_SOFTMAX, .dt = dts[d], .ndim = 2, .shape = {300, 4096}, .axis = 0};
        check_case(ctx, &m);
    }
    /* many strips of two blocks, the last strip partial */
    const int64_t n2 = cap + 7 > most ? most : cap + 7;
    ncase m = {.op = KG_NORM_LOG_SOFTMAX, .dt = KG_F32, .ndim = 2, .shape = {n2, 4100}, .axis = 0};
    check_case(ctx, &m);
    if (ma == 9 && mi == 0)
        cr_assert_gt(kgi_norm_cluster_launches, before, "%s: no cluster launch on sm_90", what);
}

/* COLSV: softmax and log_softmax along an outer axis by 8-byte vectors of
   columns (rows of 8-byte but not 16-byte multiples), under the planner's
   slices and 7 (a partition of the slices' merge that is not a multiple of
   the lanes down a column): narrow and wide column counts, many slices, an
   outer dim, in place, -inf / NaN / +inf, huge magnitudes, constant
   columns; and a view of 10 of 12 bf16 columns (the last vector of a row
   partial, the 2 others untouched). CLUSTER off (it would take
   1000..16384 rows on sm_90). */
Test(gpu, outer_axis_softmax_by_vectors_of_columns)
{
    kg_context *ctx = kt_open_gpu();
    static const kg_norm_tuning tunings[] = {{.cluster = -1}, {.cluster = -1, .col_splits = 7}};
    const kg_dtype dts[] = {KG_F32, KG_F16, KG_BF16};
    for (size_t t = 0; t < sizeof tunings / sizeof tunings[0]; t++) {
        kgi_norm_tuning = tunings[t];
        memset(classes_seen, 0, sizeof classes_seen);
        for (int d = 0; d < 3; d++) {
            if (!kt_take(2)) /* sanitizer mode (kg_test.h): a seeded sample */
                continue;
            /* columns: rows of 8-byte multiples (f32: even, 2-byte types: 4 x odd) */
            const int two = dts[d] != KG_F32;
            const int64_t shapes[][2] = {{kt_size(20000, 3000), two ? 108 : 54}, {3001, two ? 20 : 10},
                                         {kt_size(9000, 2000), two ? 12 : 6},   {300, two ? 1084 : 1082},
                                         {40, two ? 36 : 18},                   {3, two ? 4 : 2},
                                         {1, two ? 44 : 22}};
            for (int k = 0; k < 7; k++) {
                ncase c = {.op = KG_NORM_SOFTMAX, .dt = dts[d], .ndim = 2, .shape = {shapes[k][0], shapes[k][1]},
                           .axis = 0, .fill = k == 4 ? 3 : k == 1 ? 1 : 0};
                check_case(ctx, &c);
                c.op = KG_NORM_LOG_SOFTMAX;
                c.inplace = k == 2;
                c.fill = k == 3 ? 2 : c.fill;
                check_case(ctx, &c);
            }
            /* an outer dim: dim 1 of [3, 700, 20 (10)] */
            ncase c = {.op = KG_NORM_SOFTMAX, .dt = dts[d], .ndim = 3, .shape = {3, 700, two ? 20 : 10}, .axis = 1};
            check_case(ctx, &c);
        }
        /* the class must be reached by the whole test; sanitizer mode (kg_test.h)
           runs a seeded sample of the dtypes, which may leave a tuning out */
        if (!kt_sanitizer())
            cr_assert_gt(classes_seen[KG_NORM_COLSV_STATS8], 0, "tuning %zu", t);
    }
    kgi_norm_tuning = (kg_norm_tuning){.cluster = -1};
    /* 10 of 12 columns of bf16 (8-byte vectors: the last of a row holds 2 of them) */
    const int64_t n = 3000, w = 12, cols = 10;
    const size_t bytes = (size_t)(n * w) * 2;
    uint16_t *hin = malloc(bytes), *hout = malloc(bytes);
    uint64_t rng = kt_seed() + 77;
    for (int64_t i = 0; i < n * w; i++)
        kt_set(hin, KG_BF16, i, kt_uniform(&rng, -3, 3));
    memset(hout, 0x7f, bytes);
    void *din = kt_alloc(ctx, bytes), *dout = kt_alloc(ctx, bytes);
    kt_upload(ctx, din, hin, bytes);
    kt_upload(ctx, dout, hout, bytes);
    kg_tensor in = kg_tensor_contiguous(din, KG_BF16, 2, KT_SHAPE(n, cols)),
              out = kg_tensor_contiguous(dout, KG_BF16, 2, KT_SHAPE(n, cols));
    in.strides[0] = out.strides[0] = w;
    kg_norm_plan p;
    kg_norm_call pc = {.op = KG_NORM_SOFTMAX, .in = &in, .out = &out, .axis = 0};
    KT_OK(ctx, kg_norm_plan_call(ctx, &pc, 132, &p));
    cr_assert_eq(p.cls, KG_NORM_COLSV_STATS8);
    KT_OK(ctx, kg_softmax(ctx, &out, &in, 0));
    KT_OK(ctx, kg_sync(ctx));
    kt_download(ctx, hout, dout, bytes);
    double rtol, atol;
    kt_tolerance(KG_BF16, &rtol, &atol);
    double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n);
    int bad = 0;
    for (int64_t j = 0; j < w; j++) {
        for (int64_t i = 0; i < n; i++)
            x[i] = kt_get(hin, KG_BF16, i * w + j);
        if (j < cols)
            kg_norm_refs[KG_NORM_SOFTMAX](x, n, NULL, NULL, 0, y, NULL, NULL);
        for (int64_t i = 0; i < n && bad < 5; i++) {
            const uint16_t got = hout[i * w + j];
            if (j >= cols ? got != 0x7f7f
                          : !kt_close(kt_get(hout, KG_BF16, i * w + j), kt_round(KG_BF16, y[i]), rtol, atol)) {
                bad++;
                cr_log_error("softmax bf16 [3000,10 of 12] dim 0: row %lld col %lld: got %#x (seed %llu)",
                             (long long)i, (long long)j, got, (unsigned long long)kt_seed());
            }
        }
    }
    cr_assert_eq(bad, 0);
    free(x);
    free(y);
    free(hin);
    free(hout);
    kg_free(ctx, din);
    kg_free(ctx, dout);
    kgi_norm_tuning = (kg_norm_tuning){0};
    kg_close(ctx);
}

/* KG_NORM_TEST_TUNINGS=a-b (a GPU round's window): *from = a, *to = b; unset, the defaults as given */
static void tuning_window(int *from, int *to)
{
    const char *tt = getenv("KG_NORM_TEST_TUNINGS");
    if (tt && sscanf(tt, "%d-%d", from, to) != 2)
        cr_assert_fail("KG_NORM_TEST_TUNINGS=%s: want a-b", tt);
}

/* CLUSTER: the column strip held on chip, the planner's rule and each
   configuration (with 16 blocks a cluster as well) */
Test(gpu, outer_axis_softmax_by_clusters)
{
    kg_context *ctx = kt_open_gpu();
    char what[64];
    /* KG_NORM_TEST_SHARD=i/n: the tunings t with t % n == i (a GPU run
       spreads them over processes); unset: all */
    int shard = 0, nshard = 1;
    const char *sh = getenv("KG_NORM_TEST_SHARD");
    if (sh && (sscanf(sh, "%d/%d", &shard, &nshard) != 2 || nshard < 1 || shard < 0 || shard >= nshard))
        cr_assert_fail("KG_NORM_TEST_SHARD=%s: want i/n with 0 <= i < n", sh);
    /* KG_NORM_TEST_TUNINGS=a-b: the planner's rule and tunings a..b alone (a GPU round's window) */
    int from = 1, to = 2 * KG_NORM_CCFG_COUNT;
    tuning_window(&from, &to);
    for (int t = 0; t <= 2 * KG_NORM_CCFG_COUNT; t++) {
        if (t % nshard != shard || (t > 0 && (t < from || t > to)))
            continue;
        if (!kt_take(3)) /* sanitizer mode (kg_test.h): a seeded sample */
            continue;
        /* 0: the planner's rule; 1..: each configuration, then each with 16 blocks a cluster */
        const int cfg = t == 0 ? 0 : (t - 1) % KG_NORM_CCFG_COUNT;
        if (t > KG_NORM_CCFG_COUNT && kg_norm_ccfgs[cfg].one)
            continue; /* COLT: one block a tile whatever the cluster-size tuning (its tunings above) */
        int kernels = 0; /* (configurations 1-3 have none since session 24, gen/norm.lua) */
        for (int d = 0; d < KG_DTYPE_COUNT; d++)
            kernels |= kg_norm_ctable[KG_NORM_SOFTMAX][d][cfg] > 0;
        if (t > 0 && !kernels)
            continue;
        kgi_norm_tuning = (kg_norm_tuning){.cluster = t == 0 ? 0 : cfg + 1, .csize = t > KG_NORM_CCFG_COUNT ? 16 : 0};
        const int64_t cap = kg_norm_ccfgs[cfg].rows;
        snprintf(what, sizeof what, "CLUSTER tuning %d", t);
        outer_softmax_cases(ctx, cap, t == 0 ? 16384 : 16 * cap, what);
    }
    kgi_norm_tuning = (kg_norm_tuning){0};
    kg_close(ctx);
}

Test(gpu, every_axis_of_3d_and_4d_inputs)
{
    kg_context *ctx = kt_open_gpu();
    const int64_t s3[] = {5, 33, 7}, s4[] = {3, 4, 5, 8};
    for (int d = 0; d < 4; d++)
        for (int which = 0; which < 2; which++) {
            const int nd = which ? 4 : 3;
            const int64_t *s = which ? s4 : s3;
            ncase c = {.dt = floats[d], .ndim = nd};
            memcpy(c.shape, s, sizeof(int64_t) * (size_t)nd);
            for (int a = -nd; a < nd; a++) {
                c.axis = a;
                c.op = KG_NORM_SOFTMAX;
                check_case(ctx, &c);
                c.op = KG_NORM_LOG_SOFTMAX;
                check_case(ctx, &c);
                c.op = KG_NORM_LOGSUMEXP;
                c.axes[0] = a;
                c.n_axes = 1;
                c.keepdim = a & 1;
                check_case(ctx, &c);
            }
            /* axis sets: pairs, all, unsorted */
            c.op = KG_NORM_LOGSUMEXP;
            for (int a0 = 0; a0 < nd; a0++)
                for (int a1 = a0 + 1; a1 < nd; a1++) {
                    c.axes[0] = a1;
                    c.axes[1] = a0;
                    c.n_axes = 2;
                    c.keepdim = (a0 + a1) & 1;
                    check_case(ctx, &c);
                }
            c.n_axes = 0;
            check_case(ctx, &c);
            c.axes[0] = nd - 1;
            c.axes[1] = 0;
            c.axes[2] = 1;
            c.n_axes = 3;
            check_case(ctx, &c);
            c.n_axes = 0;
            for (int k = 1; k <= nd; k++) {
                c.op = KG_NORM_LAYER_NORM;
                c.k = k;
                c.w = c.b = 1;
                c.stats = 1;
                check_case(ctx, &c);
                c.w = c.b = 2; /* broadcast along all but the last dim */
                c.stats = 0;
                check_case(ctx, &c);
                c.w = c.b = 0;
            }
            c.op = KG_NORM_RMS_NORM;
            c.k = 1;
            c.w = 1;
            check_case(ctx, &c);
            c.w = 0;
        }
    kg_close(ctx);
}

Test(gpu, permuted_strided_and_in_place_layouts)
{
    kg_context *ctx = kt_open_gpu();
    const int p10[] = {1, 0}, p021[] = {0, 2, 1}, p210[] = {2, 1, 0}, p3012[] = {3, 0, 1, 2};
    for (int d = 0; d < 4; d++) {
        const kg_dtype dt = floats[d];
        every_op(ctx, dt, 2, KT_SHAPE(300, 64), p10, 1, 0);    /* transposed: columns */
        every_op(ctx, dt, 2, KT_SHAPE(3000, 40), p10, 1, 0);   /* long columns: split */
        every_op(ctx, dt, 2, KT_SHAPE(100, 64), NULL, 2, 0);   /* every other element */
        every_op(ctx, dt, 3, KT_SHAPE(6, 10, 36), p021, 1, 0); /* last dim strided, middle contiguous */
        every_op(ctx, dt, 3, KT_SHAPE(4, 6, 40), p210, 3, 0);
        every_op(ctx, dt, 4, KT_SHAPE(2, 3, 4, 50), p3012, 1, 0);
        /* out with the input's strides, and in place */
        ncase c = {.op = KG_NORM_SOFTMAX, .dt = dt, .ndim = 2, .shape = {300, 64}, .perm = p10, .axis = 0};
        c.out_like_in = 1;
        check_case(ctx, &c);
        c.out_like_in = 0;
        c.inplace = 1;
        check_case(ctx, &c);
        c.axis = 1;
        check_case(ctx, &c);
        c.perm = NULL;
        check_case(ctx, &c);
        c.op = KG_NORM_LAYER_NORM;
        c.k = 1;
        c.w = c.b = 1;
        check_case(ctx, &c);
        c.op = KG_NORM_RMS_NORM;
        c.b = 0;
        c.res = 1;
        check_case(ctx, &c);
    }
    kg_close(ctx);
}

Test(gpu, huge_magnitudes_constant_rows_and_special_values)
{
    kg_context *ctx = kt_open_gpu();
    for (int d = 0; d < 4; d++)
        for (int fill = 1; fill <= 3; fill++) {
            if (!kt_take(4)) /* sanitizer mode (kg_test.h): a seeded sample */
                continue;
            every_op(ctx, floats[d], 2, KT_SHAPE(50, 64), NULL, 1, fill);                /* packed */
            every_op(ctx, floats[d], 2, KT_SHAPE(50, 1024), NULL, 1, fill);              /* LEAN, warp groups */
            every_op(ctx, floats[d], 2, KT_SHAPE(50, 2000), NULL, 1, fill);              /* LEAN */
            every_op(ctx, floats[d], 2, KT_SHAPE(8, 16384), NULL, 1, fill);              /* LEAN, a block a row */
            every_op(ctx, floats[d], 2, KT_SHAPE(8, 65536), NULL, 1, fill);              /* streamed rows */
            every_op(ctx, floats[d], 2, KT_SHAPE(50, 33), NULL, 1, fill);                /* strided */
            every_op(ctx, floats[d], 2, KT_SHAPE(40, 50), (const int[]){1, 0}, 1, fill); /* columns */
        }
    /* softmax of [1e4, -1e4] is exactly [1, 0] */
    float h[2] = {1e4f, -1e4f}, o[2];
    void *dx = kt_alloc(ctx, 8), *dy = kt_alloc(ctx, 8);
    kt_upload(ctx, dx, h, 8);
    kg_tensor x = kg_tensor_contiguous(dx, KG_F32, 1, KT_SHAPE(2)),
              y = kg_tensor_contiguous(dy, KG_F32, 1, KT_SHAPE(2));
    KT_OK(ctx, kg_softmax(ctx, &y, &x, 0));
    kt_download(ctx, o, dy, 8);
    cr_assert(o[0] == 1.0f && o[1] == 0.0f, "softmax [1e4,-1e4] = [%g, %g]", o[0], o[1]);
    kg_free(ctx, dx);
    kg_free(ctx, dy);
    kg_close(ctx);
}

/* A negative eps, as PyTorch takes it: rstd = 1 / sqrt(var + eps), NaN
   where var + eps < 0. Rows of 4 (the PACKED class) and of 33
   (STRIDED). */
Test(gpu, negative_eps_follows_pytorch)
{
    kg_context *ctx = kt_open_gpu();
    for (int len = 4; len <= 33; len += 29) {
        float h[2 * 33], y[2 * 33], r[2];
        for (int i = 0; i < len; i++) {
            h[i] = i < 4 ? (float)(i + 1) : 2.5f; /* var = 1.25 * 4 / len */
            h[len + i] = 5.0f;                    /* var = 0 */
        }
        const double var = 1.25 * 4 / len, eps = -0.5 * var;
        void *dx = kt_alloc(ctx, sizeof h), *dy = kt_alloc(ctx, sizeof h), *dr = kt_alloc(ctx, sizeof r);
        kt_upload(ctx, dx, h, sizeof(float) * 2 * (size_t)len);
        kg_tensor x = kg_tensor_contiguous(dx, KG_F32, 2, KT_SHAPE(2, len)),
                  o = kg_tensor_contiguous(dy, KG_F32, 2, KT_SHAPE(2, len)),
                  rs = kg_tensor_contiguous(dr, KG_F32, 1, KT_SHAPE(2));
        KT_OK(ctx, kg_layer_norm(ctx, &o, NULL, &rs, &x, 1, NULL, NULL, eps));
        kt_download(ctx, r, dr, sizeof r);
        kt_download(ctx, y, dy, sizeof(float) * 2 * (size_t)len);
        const double want = 1 / sqrt(var + eps);
        cr_assert(fabs(r[0] - want) <= 1e-5 * want, "len %d: rstd %g, want %g", len, r[0], want);
        cr_assert(isnan(r[1]), "len %d: rstd of a constant row with eps < 0 is %g, want NaN", len, r[1]);
        cr_assert(fabs(y[0] - (1 - 2.5) * want) <= 1e-5 * want, "len %d: y[0] = %g", len, y[0]);
        cr_assert(isnan(y[len]), "len %d: y of a constant row with eps < 0 is %g, want NaN", len, y[len]);
        kg_free(ctx, dx);
        kg_free(ctx, dy);
        kg_free(ctx, dr);
    }
    kg_close(ctx);
}

Test(gpu, every_class_is_reached)
{
    kg_context *ctx = kt_open_gpu();
    memset(classes_seen, 0, sizeof classes_seen);
    every_op(ctx, KG_F32, 2, KT_SHAPE(100, 4096), NULL, 1, 0);
    every_op(ctx, KG_F32, 2, KT_SHAPE(1000, 32), NULL, 1, 0); /* 8 vectors: LEAN4 */
    every_op(ctx, KG_F32, 2, KT_SHAPE(1000, 16), NULL, 1, 0); /* 4 vectors: PACKED */
    every_op(ctx, KG_F32, 2, KT_SHAPE(100, 33), NULL, 1, 0);  /* LEANU (its last row STRIDED) */
    every_op(ctx, KG_BF16, 2, KT_SHAPE(100, 34), NULL, 1, 0); /* LEANW */
    every_op(ctx, KG_BF16, 2, KT_SHAPE(100, 33), NULL, 1, 0); /* LEANU */
    every_op(ctx, KG_BF16, 2, KT_SHAPE(1, 33), NULL, 1, 0);   /* one row ending off a vector: STRIDED */
    every_op(ctx, KG_F32, 2, KT_SHAPE(5000, 64), (const int[]){1, 0}, 1, 0);
    every_op(ctx, KG_F32, 2, KT_SHAPE(4, 65536), NULL, 1, 0); /* streamed rows: ROWS on every device */
    every_op(ctx, KG_F32, 2, KT_SHAPE(1000, 1024), NULL, 1, 0);
    cr_assert_gt(classes_seen[KG_NORM_ROWS], 0);
    cr_assert_gt(classes_seen[KG_NORM_LEAN8], 0);
    cr_assert_gt(classes_seen[KG_NORM_LEAN4], 0); /* layer_norm of 4096 f32 */
    /* LEAN8L / LEAN4L (the LOOSE classes) are tunings only since run r6
       (8dcddfe: f32 layer_norm of <= 32 lanes takes LEAN8); the default
       planner reaches neither, lean_rows_under_every_tuning runs both. */
    cr_assert_gt(classes_seen[KG_NORM_LEAN4_RES], 0);
    cr_assert_gt(classes_seen[KG_NORM_STRIDED], 0);
    cr_assert_gt(classes_seen[KG_NORM_LEANW16], 0);
    cr_assert_gt(classes_seen[KG_NORM_LEANW8_RES], 0);
    cr_assert_gt(classes_seen[KG_NORM_LEANU8S], 0);
    cr_assert_gt(classes_seen[KG_NORM_LEANU4S], 0);
    cr_assert_gt(classes_seen[KG_NORM_LEANU4S_RES], 0);
    cr_assert_gt(classes_seen[KG_NORM_COLS_STATS], 0);
    cr_assert_gt(classes_seen[KG_NORM_PACKED], 0);
    cr_assert_gt(classes_seen[KG_NORM_ROWS_RES], 0);
    kg_close(ctx);
}

Test(gpu, empty_axes)
{
    kg_context *ctx = kt_open_gpu();
    /* logsumexp over an empty dim is -inf; softmax of it writes nothing */
    void *d = kt_alloc(ctx, 64);
    kg_tensor in = kg_tensor_contiguous(d, KG_F32, 2, KT_SHAPE(4, 0));
    kg_tensor o = kg_tensor_contiguous((char *)d + 32, KG_F32, 1, KT_SHAPE(4));
    KT_OK(ctx, kg_memset(ctx, d, 0xff, 64));
    const int ax[] = {1};
    KT_OK(ctx, kg_logsumexp(ctx, &o, &in, ax, 1, 0));
    float h[4];
    kt_download(ctx, h, (char *)d + 32, 16);
    for (int i = 0; i < 4; i++)
        cr_assert(isinf(h[i]) && h[i] < 0, "logsumexp of nothing = %g", h[i]);
    KT_OK(ctx, kg_softmax(ctx, &in, &in, 1));
    /* layer_norm over an empty last dim: NaN mean and rstd */
    kg_tensor m = kg_tensor_contiguous((char *)d + 32, KG_F32, 1, KT_SHAPE(4));
    KT_OK(ctx, kg_memset(ctx, (char *)d + 32, 0, 16));
    KT_OK(ctx, kg_layer_norm(ctx, &in, &m, NULL, &in, 1, NULL, NULL, 1e-5));
    kt_download(ctx, h, (char *)d + 32, 16);
    for (int i = 0; i < 4; i++)
        cr_assert(isnan(h[i]), "mean of nothing = %g", h[i]);
    kg_free(ctx, d);
    kg_close(ctx);
}

/* The calls that the bitwise tests run twice over one input. */
typedef enum { TWICE_SOFTMAX, TWICE_LOG_SOFTMAX, TWICE_LAYER_NORM, TWICE_RESIDUAL } twice_call;

/* Runs `call` (softmax / log_softmax along axis, layer_norm without weight
   and bias, the residual rms_norm without weight into r) twice over x, y
   (and r) zeroed before each run, and asserts the same bits: a and b hold
   y's bytes. what names the case in the message. */
static void assert_same_bits_twice(kg_context *ctx, twice_call call, int axis, const kg_tensor *x, const kg_tensor *y,
                                   const kg_tensor *r, size_t bytes, void *a, void *b, const char *what)
{
    for (int k = 0; k < 2; k++) {
        KT_OK(ctx, kg_memset(ctx, y->data, 0, bytes));
        if (call == TWICE_SOFTMAX)
            KT_OK(ctx, kg_softmax(ctx, y, x, axis));
        else if (call == TWICE_LOG_SOFTMAX)
            KT_OK(ctx, kg_log_softmax(ctx, y, x, axis));
        else if (call == TWICE_LAYER_NORM)
            KT_OK(ctx, kg_layer_norm(ctx, y, NULL, NULL, x, 1, NULL, NULL, 1e-5));
        else {
            KT_OK(ctx, kg_memset(ctx, r->data, 0, bytes)); /* residual = x after the add */
            KT_OK(ctx, kg_rms_norm_residual(ctx, y, r, x, NULL, 1e-6));
        }
        kt_download(ctx, k ? b : a, y->data, bytes);
    }
    cr_assert(memcmp(a, b, bytes) == 0, "%s: two runs differ", what);
}

/* The bits tests of the cluster forms: softmax (op 0) or log_softmax (1) of x into y under the tuning, y first
   filled with the byte fill, downloaded into host. */
static void cluster_call(kg_context *ctx, kg_norm_tuning tu, int op, const kg_tensor *y, const kg_tensor *x,
                         size_t bytes, int fill, void *host)
{
    kgi_norm_tuning = tu;
    KT_OK(ctx, kg_memset(ctx, y->data, fill, bytes));
    KT_OK(ctx, op ? kg_log_softmax(ctx, y, x, 0) : kg_softmax(ctx, y, x, 0));
    kt_download(ctx, host, y->data, bytes);
}

/* ... each of f32 (d 0) and bf16 (d 1) softmax and log_softmax of [3001,4096] (uniform -5..5) along dim 0 at 3 and 16
   blocks a cluster (cs 0, 16): check(ctx, d, op, cs, x, y, bytes, a, b) with host buffers a, b of the output's bytes;
   at least one cluster launch on sm_90. */
typedef void (*cluster_bits_check)(kg_context *ctx, int d, int op, int cs, const kg_tensor *x, const kg_tensor *y,
                                   size_t bytes, unsigned char *a, unsigned char *b);
static void cluster_bits_3001(cluster_bits_check check)
{
    kg_context *ctx = kt_open_gpu();
    const int64_t shape[2] = {3001, 4096}, n = shape[0] * shape[1];
    const kg_dtype dts[] = {KG_F32, KG_BF16};
    unsigned char *h = malloc(4 * (size_t)n), *a = malloc(4 * (size_t)n), *b = malloc(4 * (size_t)n);
    void *dx = kt_alloc(ctx, 4 * (size_t)n), *dy = kt_alloc(ctx, 4 * (size_t)n);
    uint64_t rng = kt_seed();
    const long before = kgi_norm_cluster_launches;
    for (int d = 0; d < 2; d++) {
        const size_t bytes = kg_dtype_size(dts[d]) * (size_t)n;
        for (int64_t i = 0; i < n; i++)
            kt_set(h, dts[d], i, kt_uniform(&rng, -5, 5));
        kt_upload(ctx, dx, h, bytes);
        kg_tensor x = kg_tensor_contiguous(dx, dts[d], 2, shape), y = kg_tensor_contiguous(dy, dts[d], 2, shape);
        for (int op = 0; op < 2; op++)
            for (int cs = 0; cs <= 16; cs += 16)
                check(ctx, d, op, cs, &x, &y, bytes, a, b);
    }
    int ma = 0, mi = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, &ma, &mi, NULL));
    if (ma == 9 && mi == 0)
        cr_assert_gt(kgi_norm_cluster_launches, before, "no cluster launch on sm_90");
    kgi_norm_tuning = (kg_norm_tuning){0};
    kg_free(ctx, dx);
    kg_free(ctx, dy);
    free(h);
    free(a);
    free(b);
    kg_close(ctx);
}

/* (CLUSTER PH against configuration 4's bits: both have no kernels since session 34, gen/norm.lua.) */

/* Session 25's defaults from session 24's configurations (H200 s25r1, where they gave the bits of their base: 28
   configuration 0's on inputs of -5..5, 29 13's; those have no kernels since): P2 + VS's 28 (the 2-byte cluster
   default), the planner's and forced, the same bits, and twice: bf16 softmax and log_softmax of [3001,4096] along
   dim 0 at 3 and 16 blocks a cluster; EK's 22 (the 2-byte softmax where COLT takes 16: bf16) and VS's 29 (COLT's f32
   default where 13 was), forced, the same bits twice: dim 1 of [333,33,32], [100,100,16], [50,200,8]. K4's 31 (f32,
   the default of session 28 where COLT takes 15 at n <= 8) the same bits twice, softmax and log_softmax, those
   shapes and [1001,4,8] (P2's 25, K4's 30 and K2's 32, session 26's other candidates, lost in s28r1: no kernels). */
static void s25_bits(kg_context *ctx, int d, int op, int cs, const kg_tensor *x, const kg_tensor *y, size_t bytes,
                     unsigned char *a, unsigned char *b)
{
    if (d == 1) { /* bf16: the planner's (28) and 28 forced */
        cluster_call(ctx, (kg_norm_tuning){.csize = cs}, op, y, x, bytes, 0, a);
        cluster_call(ctx, (kg_norm_tuning){.cluster = 29, .csize = cs}, op, y, x, bytes, 0xff, b);
        cr_assert(memcmp(a, b, bytes) == 0, "%s bf16, %d blocks a cluster: configuration 28 forced, not the planner's bits",
                  op ? "log_softmax" : "softmax", cs ? cs : 3);
        kgi_norm_tuning = (kg_norm_tuning){.cluster = 29, .csize = cs};
        assert_same_bits_twice(ctx, op ? TWICE_LOG_SOFTMAX : TWICE_SOFTMAX, 0, x, y, NULL, bytes, a, b,
                               "P2 + VS 28 bf16 [3001,4096]");
    }
    if (d == 1 && op == 1 && cs == 16) { /* (once, last: x's data is the narrow shapes' from here) EK 22, VS 29,
                                            K4 31 */
        static const int64_t shapes[][3] = {{333, 33, 32}, {100, 100, 16}, {50, 200, 8}, {1001, 4, 8}};
        static const int cfgs[] = {22, 29, 31};
        uint64_t rng = kt_seed() + 24;
        for (int ci = 0; ci < 3; ci++)
            for (int k = 0; k < 4; k++) {
                const int cfg = cfgs[ci];
                const kg_dtype dt = cfg >= 29 ? KG_F32 : KG_BF16;
                const int64_t m = shapes[k][0] * shapes[k][1] * shapes[k][2];
                const size_t eb = kg_dtype_size(dt) * (size_t)m;
                for (int64_t i = 0; i < m; i++)
                    kt_set(a, dt, i, kt_uniform(&rng, -8, 8));
                kt_upload(ctx, x->data, a, eb);
                kg_tensor ex = kg_tensor_contiguous(x->data, dt, 3, shapes[k]),
                          ey = kg_tensor_contiguous(y->data, dt, 3, shapes[k]);
                char what[64];
                snprintf(what, sizeof what, "%s configuration %d, shape %d",
                         cfg == 31 ? "K4" : cfg == 29 ? "VS" : "EK", cfg, k);
                kgi_norm_tuning = (kg_norm_tuning){.cluster = cfg + 1};
                assert_same_bits_twice(ctx, TWICE_SOFTMAX, 1, &ex, &ey, NULL, eb, a, b, what);
                if (cfg == 31)
                    assert_same_bits_twice(ctx, TWICE_LOG_SOFTMAX, 1, &ex, &ey, NULL, eb, a, b, what);
            }
    }
}
Test(gpu, session_25_defaults_give_the_same_bits_twice) { cluster_bits_3001(s25_bits); }

/* LEAN2, LEAN2E and LEAN2R (two rows a group) give the bits of LEAN4F /
   LEAN4 (the same lanes, the same order of the statistics, the same exps),
   twice (LEAN2R: 128 rows a block, 4099 leaves the last one short): bf16 and f16 rows
   of 32 of every op (the tuning's pair 1: logsumexp and layer_norm too, no
   weight), [40000,32] and [4099,32]; and rows of 64 and 128: LEAN2R of 4
   and 8 lanes (lean2 8) gives LEAN2's bits (lean2 2, the same lanes). */
static void run_op(kg_context *ctx, kg_norm_op op, const kg_tensor *y, const kg_tensor *s0, const kg_tensor *x)
{
    const int ax[] = {1};
    switch (op) {
    case KG_NORM_SOFTMAX: KT_OK(ctx, kg_softmax(ctx, y, x, 1)); break;
    case KG_NORM_LOG_SOFTMAX: KT_OK(ctx, kg_log_softmax(ctx, y, x, 1)); break;
    case KG_NORM_LOGSUMEXP: KT_OK(ctx, kg_logsumexp(ctx, s0, x, ax, 1, 0)); break;
    case KG_NORM_LAYER_NORM: KT_OK(ctx, kg_layer_norm(ctx, y, NULL, NULL, x, 1, NULL, NULL, 1e-5)); break;
    default: KT_OK(ctx, kg_rms_norm(ctx, y, x, NULL, 1e-6));
    }
}

Test(gpu, lean2_matches_lean4_bits)
{
    kg_context *ctx = kt_open_gpu();
    const int64_t nrows[] = {40000, 4099};
    const kg_dtype dts[] = {KG_BF16, KG_F16};
    const size_t most = 2 * (size_t)40000 * 128;
    unsigned char *h = malloc(most), *a = malloc(most), *b = malloc(most);
    void *dx = kt_alloc(ctx, most), *dy = kt_alloc(ctx, most);
    uint64_t rng = kt_seed();
    for (int ld = 0; ld < 6; ld++) /* rows of 32, 64, 128 x bf16, f16 */
        for (int s = 0; s < 2; s++) {
            const int len = 32 << (ld >> 1), d = ld & 1;
            const int64_t shape[2] = {nrows[s], len}, n = shape[0] * shape[1];
            for (int64_t i = 0; i < n; i++)
                kt_set(h, dts[d], i, kt_uniform(&rng, -8, 8));
            kt_upload(ctx, dx, h, 2 * (size_t)n);
            kg_tensor x = kg_tensor_contiguous(dx, dts[d], 2, shape), y = kg_tensor_contiguous(dy, dts[d], 2, shape);
            kg_tensor s0 = kg_tensor_contiguous(dy, dts[d], 1, shape);
            for (int op = KG_NORM_SOFTMAX; op < KG_NORM_COUNT; op++) {
                const size_t bytes = 2 * (size_t)(op == KG_NORM_LOGSUMEXP ? nrows[s] : n);
                char what[80];
                snprintf(what, sizeof what, "%s %s of [%lld,%d]", kg_norm_infos[op].name, kg_dtype_name(dts[d]),
                         (long long)nrows[s], len);
                for (int k = 0; k < 5; k++) {
                    if (len > 32 && k > 0 && k < 4)
                        continue;
                    kgi_norm_tuning =
                        len > 32 ? (kg_norm_tuning){.lean2 = k == 0 ? 2 : 8}
                                  : (kg_norm_tuning){.pair = 1, .lean2 = k == 0 ? -1 : k == 1 ? 1 : k == 4 ? 5 : 3};
                    kg_norm_plan p;
                    kg_norm_call call = {.op = (kg_norm_op)op,
                                         .in = &x,
                                         .out = op == KG_NORM_LOGSUMEXP ? NULL : &y,
                                         .s0 = op == KG_NORM_LOGSUMEXP ? &s0 : NULL,
                                         .axis = 1,
                                         .axes = (const int[]){1},
                                         .n_axes = 1,
                                         .k = 1,
                                         .eps = 1e-5};
                    KT_OK(ctx, kg_norm_plan_call(ctx, &call, 132, &p));
                    const kg_norm_class want = k == 4                                         ? KG_NORM_LEAN2R
                                               : len > 32                                     ? KG_NORM_LEAN2
                                               : k >= 2                                       ? KG_NORM_LEAN2E
                                               : k == 1                                       ? KG_NORM_LEAN2
                                               : kg_norm_infos[op].stats == KG_NORM_STATS_LSE ? KG_NORM_LEAN4F
                                                                                              : KG_NORM_LEAN4;
                    cr_assert_eq(p.cls, want, "%s: class %d", what, p.cls);
                    KT_OK(ctx, kg_memset(ctx, dy, 0, bytes));
                    run_op(ctx, (kg_norm_op)op, &y, &s0, &x);
                    kt_download(ctx, k ? b : a, dy, bytes);
                    if (k)
                        cr_assert(memcmp(a, b, bytes) == 0, "%s: %s differs from LEAN4 / LEAN4F (64, 128: LEAN2)", what,
                                  k == 1 ? "LEAN2" : k == 4 ? "LEAN2R" : "LEAN2E");
                    if (k == 4) { /* LEAN2R again: the same bits */
                        KT_OK(ctx, kg_memset(ctx, dy, 0, bytes));
                        run_op(ctx, (kg_norm_op)op, &y, &s0, &x);
                        kt_download(ctx, b, dy, bytes);
                        cr_assert(memcmp(a, b, bytes) == 0, "%s: LEAN2R's second run differs", what);
                    }
                }
            }
        }
    kgi_norm_tuning = (kg_norm_tuning){0};
    kg_free(ctx, dx);
    kg_free(ctx, dy);
    free(h);
    free(a);
    free(b);
    kg_close(ctx);
}

/* Runs `call` twice over the same input and compares the bits. */
Test(gpu, results_are_bitwise_deterministic)
{
    kg_context *ctx = kt_open_gpu();
    /* (dim 0 of [2000, 3000]: CLUSTER on sm_90) */
    const int64_t shapes[][2] = {{40000, 64}, {64, 40000}, {7, 300000}, {2000, 3000}};
    for (int s = 0; s < 4; s++) {
        const int64_t n = shapes[s][0] * shapes[s][1];
        float *h = malloc(sizeof(float) * (size_t)n), *a = malloc(sizeof(float) * (size_t)n),
              *b = malloc(sizeof(float) * (size_t)n);
        uint64_t rng = kt_seed() + (uint64_t)s;
        for (int64_t i = 0; i < n; i++)
            h[i] = (float)kt_uniform(&rng, -5, 5);
        void *dx = kt_alloc(ctx, sizeof(float) * (size_t)n), *dy = kt_alloc(ctx, sizeof(float) * (size_t)n);
        kt_upload(ctx, dx, h, sizeof(float) * (size_t)n);
        kg_tensor x = kg_tensor_contiguous(dx, KG_F32, 2, shapes[s]),
                  y = kg_tensor_contiguous(dy, KG_F32, 2, shapes[s]);
        for (int axis = 0; axis < 2; axis++) {
            char what[64];
            snprintf(what, sizeof what, "softmax of [%lld,%lld] along %d", (long long)shapes[s][0],
                     (long long)shapes[s][1], axis);
            assert_same_bits_twice(ctx, TWICE_SOFTMAX, axis, &x, &y, NULL, sizeof(float) * (size_t)n, a, b, what);
        }
        kg_free(ctx, dx);
        kg_free(ctx, dy);
        free(h);
        free(a);
        free(b);
    }
    kg_close(ctx);
}

/* BULK (the 2-byte layer_norm, rms_norm and its residual form on sm_90,
   rows staged by the bulk copy engine) under one configuration (a test a
   configuration, so that they run in parallel): its deepest ring, 2
   stages, and 3 blocks in all (each block's ring wraps many times); f16 and
   bf16 rows of 8 to 16384 elements (those the configuration holds), weight
   and bias, mean and rstd, in place, -inf / NaN / +inf, constant rows, huge
   magnitudes; then bf16 [3001,4096] twice over the same input, the same
   bits, 7 blocks. Asserts that BULK launched on sm_90. */
ParameterizedTestParameters(gpu, bulk_rows_under_each_configuration)
{
    /* the configurations with kernels (since session 24 1 and 2, bf16 rms_norm: gen/norm.lua) */
    static int cfgs[KG_NORM_BCFG_COUNT];
    int n = 0;
    for (int i = 0; i < KG_NORM_BCFG_COUNT; i++)
        if (kg_norm_btable[KG_NORM_LAYER_NORM][KG_BF16][i] > 0 || kg_norm_btable[KG_NORM_LAYER_NORM][KG_F16][i] > 0 ||
            kg_norm_btable[KG_NORM_RMS_NORM][KG_BF16][i] > 0 || kg_norm_btable[KG_NORM_RMS_NORM][KG_F16][i] > 0)
            cfgs[n++] = i;
    return cr_make_param_array(int, cfgs, n);
}
ParameterizedTest(int *pcfg, gpu, bulk_rows_under_each_configuration)
{
    kg_context *ctx = kt_open_gpu();
    int ma = 0, mi = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, &ma, &mi, NULL));
    const kg_dtype dts[] = {KG_F16, KG_BF16};
    const int64_t lens[] = {8, 40, 1000, 2056, 4096, 8192, 16384};
    const int cfg = *pcfg;
    const int64_t most = (int64_t)(kg_norm_bcfgs[cfg].warp ? 32 : kg_norm_bcfgs[cfg].threads) *
                         kg_norm_bcfgs[cfg].nv * 8;
    for (int v = 0; v < 3; v++) {
        if (!kt_take(3)) /* sanitizer mode (kg_test.h): a seeded sample */
            continue;
        /* v 1: the shallowest ring (1 stage a warp with the row in registers) */
        kgi_norm_tuning = (kg_norm_tuning){
            .bulk = cfg + 1, .bstages = v == 1 ? (kg_norm_bcfgs[cfg].regs ? 1 : 2) : 0, .grid = v == 2 ? 3 : 0};
        const long before = kgi_norm_bulk_launches;
        for (int d = 0; d < 2; d++)
            for (int i = 0; i < 7 && lens[i] <= most; i++) {
                int64_t rows = ((int64_t)1 << 16) / lens[i];
                rows = rows < 3 ? 3 : rows > 403 ? 403 : rows;
                ncase c = {.op = KG_NORM_LAYER_NORM,
                           .dt = dts[d],
                           .ndim = 2,
                           .shape = {kt_size(rows, 8), lens[i]},
                           .step = 1,
                           .axis = -1,
                           .k = 1,
                           .w = 1,
                           .b = 1,
                           .stats = 1};
                check_case(ctx, &c);
                c.inplace = 1;
                c.b = c.stats = 0;
                check_case(ctx, &c); /* in place, no bias */
                c.inplace = 0;
                c.op = KG_NORM_RMS_NORM;
                check_case(ctx, &c);
                c.res = 1;
                check_case(ctx, &c);
                c.w = 0;
                check_case(ctx, &c); /* no weight */
            }
        for (int f = 1; f <= 3; f++) {
            const int64_t len = f == 1 ? (most < 4096 ? most : 4096) : 1000;
            ncase c = {.op = KG_NORM_LAYER_NORM,
                       .dt = f == 1 ? KG_F16 : KG_BF16,
                       .ndim = 2,
                       .shape = {20, len},
                       .step = 1,
                       .axis = -1,
                       .k = 1,
                       .w = 1,
                       .b = 1,
                       .stats = 1,
                       .fill = f};
            check_case(ctx, &c);
            c.op = KG_NORM_RMS_NORM;
            c.b = c.stats = 0;
            c.res = 1;
            check_case(ctx, &c);
        }
        if (ma == 9 && mi == 0)
            cr_assert_gt(kgi_norm_bulk_launches, before, "configuration %d: no BULK launch on sm_90", cfg);
    }
    /* the same bits twice: layer_norm and the residual form, 7 blocks (in
       sanitizer mode 61 rows: each ring still wraps) */
    const int64_t shape[2] = {kt_size(3001, 61), 4096}, n = shape[0] * shape[1];
    const size_t bytes = 2 * (size_t)n;
    unsigned char *h = malloc(bytes), *a = malloc(bytes), *b = malloc(bytes);
    void *dx = kt_alloc(ctx, bytes), *dy = kt_alloc(ctx, bytes), *dr = kt_alloc(ctx, bytes);
    uint64_t rng = kt_seed();
    for (int64_t i = 0; i < n; i++)
        kt_set(h, KG_BF16, i, kt_uniform(&rng, -5, 5));
    kt_upload(ctx, dx, h, bytes);
    kg_tensor x = kg_tensor_contiguous(dx, KG_BF16, 2, shape), y = kg_tensor_contiguous(dy, KG_BF16, 2, shape),
              r = kg_tensor_contiguous(dr, KG_BF16, 2, shape);
    for (int op = 0; op < 2; op++) {
        kgi_norm_tuning = (kg_norm_tuning){.bulk = cfg + 1, .grid = 7};
        char what[64];
        snprintf(what, sizeof what, "configuration %d op %d", cfg, op);
        assert_same_bits_twice(ctx, op == 0 ? TWICE_LAYER_NORM : TWICE_RESIDUAL, 0, &x, &y, &r, bytes, a, b, what);
    }
    kgi_norm_tuning = (kg_norm_tuning){0};
    kg_free(ctx, dx);
    kg_free(ctx, dy);
    kg_free(ctx, dr);
    free(h);
    free(a);
    free(b);
    kg_close(ctx);
}

/* The planner's default BULK rows (the bf16 residual rms_norm above 8192)
   against the reference, and rows beside them that LEAN serves (bf16 and
   f16 layer_norm, the residual form up to 8192): BULK launches on sm_90
   where it is the default, none elsewhere. */
Test(gpu, bulk_default_rows)
{
    kg_context *ctx = kt_open_gpu();
    int ma = 0, mi = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, &ma, &mi, NULL));
    kgi_norm_tuning = (kg_norm_tuning){0};
    const int sm90 = ma == 9 && mi == 0;
    const int64_t dlens[] = {1024, 2048, 2560, 3072, 4096, 6144, 8192, 12288, 16384};
    for (int i = 0; i < (int)(sizeof dlens / sizeof dlens[0]); i++) {
        long before = kgi_norm_bulk_launches;
        ncase c = {.op = KG_NORM_LAYER_NORM,
                   .dt = KG_BF16,
                   .ndim = 2,
                   .shape = {kt_size(301, 8), dlens[i]},
                   .step = 1,
                   .axis = -1,
                   .k = 1,
                   .w = 1,
                   .b = 1,
                   .stats = 1};
        check_case(ctx, &c);
        if (sm90) /* bf16 layer_norm: LEAN */
            cr_assert_eq(kgi_norm_bulk_launches, before, "layer_norm of %lld: a BULK launch", (long long)dlens[i]);
        if (dlens[i] >= 2560 && dlens[i] <= 4096) { /* f16: LEAN (BULKW until session 16) */
            c.dt = KG_F16;
            before = kgi_norm_bulk_launches;
            check_case(ctx, &c);
            if (sm90)
                cr_assert_eq(kgi_norm_bulk_launches, before, "f16 layer_norm of %lld: a BULK launch",
                             (long long)dlens[i]);
            c.dt = KG_BF16;
        }
        c.op = KG_NORM_RMS_NORM;
        c.b = c.stats = 0;
        c.res = 1;
        for (int w = 1; w >= 0; w--) { /* with and without weight; BULK above 8192 (LEAN below) */
            c.w = w;
            before = kgi_norm_bulk_launches;
            check_case(ctx, &c);
            if (sm90 && dlens[i] > 8192)
                cr_assert_gt(kgi_norm_bulk_launches, before, "residual of %lld: no BULK launch", (long long)dlens[i]);
            if (sm90 && dlens[i] <= 8192)
                cr_assert_eq(kgi_norm_bulk_launches, before, "residual of %lld: a BULK launch", (long long)dlens[i]);
        }
    }
    kgi_norm_tuning = (kg_norm_tuning){0};
    kg_close(ctx);
}

/* CLUSTER (along dim 0: 3 and 16 blocks a cluster; TR, configuration 6,
   softmax at 3 and log_softmax at 16) and the PF
   forms (layer_norm, the residual rms_norm; 7 blocks, many rows each), f32
   and bf16: twice over the same input, the same bits. */
Test(gpu, cluster_and_prefetching_forms_are_bitwise_deterministic)
{
    kg_context *ctx = kt_open_gpu();
    const int64_t shape[2] = {3001, 4096}, n = shape[0] * shape[1];
    const kg_dtype dts[] = {KG_F32, KG_BF16};
    unsigned char *h = malloc(4 * (size_t)n), *a = malloc(4 * (size_t)n), *b = malloc(4 * (size_t)n);
    void *dx = kt_alloc(ctx, 4 * (size_t)n), *dy = kt_alloc(ctx, 4 * (size_t)n), *dr = kt_alloc(ctx, 4 * (size_t)n);
    uint64_t rng = kt_seed();
    for (int d = 0; d < 2; d++) {
        const size_t bytes = kg_dtype_size(dts[d]) * (size_t)n;
        for (int64_t i = 0; i < n; i++)
            kt_set(h, dts[d], i, kt_uniform(&rng, -5, 5));
        kt_upload(ctx, dx, h, bytes);
        kg_tensor x = kg_tensor_contiguous(dx, dts[d], 2, shape), y = kg_tensor_contiguous(dy, dts[d], 2, shape),
                  r = kg_tensor_contiguous(dr, dts[d], 2, shape);
        /* log_softmax by CLUSTER, at 16 blocks a cluster; softmax by the
           CLUSTER form that keeps the exps (configuration 6 forced: f32;
           until session 34 4, which has no kernels since; bf16: COLS); PF;
           the dtype's default configuration (f32 6, bf16 0; each has no
           kernel of the other's since session 24: until then the tunings 1
           and 7) */
        static const kg_norm_tuning tus[] = {{.cluster = 0},
                                             {.cluster = 0, .csize = 16},
                                             {.cluster = 7},
                                             {.lean = 4, .pf = 1, .grid = 7},
                                             {.lean = 8, .pf = 1, .grid = 7},
                                             {.cluster = 0},
                                             {.cluster = 0, .csize = 16}};
        for (int t = 0; t < 7; t++)
            for (int op = 0; op < (t < 3 || t > 4 ? 1 : 2); op++) {
                kgi_norm_tuning = tus[t];
                char what[64];
                snprintf(what, sizeof what, "tuning %d op %d, %s", t, op, kg_dtype_name(dts[d]));
                assert_same_bits_twice(ctx,
                                       t < 2 || t == 6 ? TWICE_LOG_SOFTMAX
                                       : t < 3 || t == 5 ? TWICE_SOFTMAX
                                       : op == 0         ? TWICE_LAYER_NORM
                                                         : TWICE_RESIDUAL,
                                       0, &x, &y, &r, bytes, a, b, what);
            }
    }
    kgi_norm_tuning = (kg_norm_tuning){0};
    kg_free(ctx, dx);
    kg_free(ctx, dy);
    kg_free(ctx, dr);
    free(h);
    free(a);
    free(b);
    kg_close(ctx);
}

/* COLT's narrow configurations (columns of fewer than 16 vectors, several
   tiles a block): the planner's rule over dim 1 of [outer, n, cols], f32,
   f16, bf16, softmax and log_softmax, against the float64 reference: 8, 4,
   2 and 1 lanes a row, 1 to 32 row groups (n of 2, 7, 33, 100, 256), the
   last block's tiles past the end (outer not a multiple of the tiles a
   block), columns over 2 tiles, in place, -inf / NaN / +inf and huge
   magnitudes, the tiles' partials merged by butterflies and TL (the
   planner's), in shared memory (the tuning's nmerge 1) and by butterflies or
   shared memory (nmerge 2); asserts that COLT ran on sm_90
   (the same bits twice:
   outer_axis_of_few_rows_is_bitwise_deterministic). */
Test(gpu, outer_axis_of_narrow_columns)
{
    kg_context *ctx = kt_open_gpu();
    int ma = 0, mi = 0;
    KT_OK(ctx, kg_device_info(ctx, NULL, 0, &ma, &mi, NULL));
    const kg_dtype dts[] = {KG_F32, KG_F16, KG_BF16};
    /* (session 26: [1001,4,8] and [999,8,8], 2 vectors of few rows, 128 tiles a block at one row group, the grid's
       last block partial; f32: the planner's K4 31 since session 28) */
    static const int64_t shapes[][3] = {{37, 2, 32}, {45, 7, 64},  {29, 33, 32},  {13, 100, 16}, {7, 256, 32}, {11, 33, 40},
                                        {9, 100, 24}, {21, 17, 12}, {5, 200, 8}, {1001, 4, 8},  {999, 8, 8}};
    const long before = kgi_norm_cluster_launches;
    long before_ek = before;
    /* t 0-2: the planner's merge (butterflies a warp, TL past a warp; since session 25 EK's 22 for the 2-byte
       softmax of 1 vector, VS's 29 for f32 of 5-15, since session 28 K4's 31 for f32 of 2 vectors at n <= 8), shared
       memory, s23r2's; then forced under each of those merges: EK's 22 (the 2-byte softmax with kept exps): softmax
       of the 2-byte types, in place or not (shapes whose column it does not hold: COLS); VS's 29 (f32 softmax); K4's
       31 (f32, softmax and log_softmax) */
    static const int forced[] = {22, 29, 31};
    for (int t = 0; t < 3 + 3 * 3; t++) {
        const int ek = t >= 3, cfg = ek ? forced[(t - 3) / 3] : 0, f32 = ek && cfg != 22, k4 = cfg == 31;
        if (t == 3)
            before_ek = kgi_norm_cluster_launches;
        for (int d = ek && !f32; d < (f32 ? 1 : 3); d++)
            for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
                kgi_norm_tuning = (kg_norm_tuning){.cluster = ek ? cfg + 1 : 0, .nmerge = ek ? (t - 3) % 3 : t};
                if (!kt_take(ek ? 4 : 2)) /* sanitizer mode (kg_test.h): a seeded sample */
                    continue;
                ncase c = {.op = KG_NORM_SOFTMAX,
                           .dt = dts[d],
                           .ndim = 3,
                           .shape = {shapes[k][0], shapes[k][1], shapes[k][2]},
                           .axis = 1,
                           .fill = k % 3 == 1 ? 3 : k % 3 == 2 ? 1 : 0,
                           .inplace = ek ? (int)((k + (size_t)cfg) % 2) : 0};
                check_case(ctx, &c);
                if (ek && !k4)
                    continue;
                c.op = KG_NORM_LOG_SOFTMAX;
                c.inplace = k % 2;
                check_case(ctx, &c);
            }
    }
    kgi_norm_tuning = (kg_norm_tuning){0};
    if (ma == 9 && mi == 0 && !kt_sanitizer()) {
        cr_assert_gt(before_ek, before, "no COLT launch on sm_90");
        cr_assert_gt(kgi_norm_cluster_launches, before_ek, "no EK launch on sm_90");
    }
    kg_close(ctx);
}

/* The kept exps (f32 softmax: CLUSTER's and COLT's EX, configurations 4-18, 29, 31; EK: the 2-byte 19-24) take each
   lane's exps at its own maximum and scale them by exp(shift(lane max) - the column's max) at the apply; a lane whose
   rows are all -inf has the factor exp(0 - m), inf once m < -88.7, and its zeros times inf were NaN (main before
   session 24). Columns of -inf with two values near -100 (fill 4), softmax and log_softmax, every dtype, under the
   planner and every configuration forced (those that do not hold a shape, or have no kernel for it: COLS): dim 0 of
   [3000,64] (CLUSTER), [200,64] (COLT), dim 1 of [5,100,32] and [7,256,8] (COLT's narrow configurations). */
Test(gpu, a_lane_of_minus_infinity_under_a_column_maximum_below_minus_88)
{
    kg_context *ctx = kt_open_gpu();
    const kg_dtype dts[] = {KG_F32, KG_F16, KG_BF16};
    static const int64_t shapes[][3] = {{1, 3000, 64}, {1, 200, 64}, {5, 100, 32}, {7, 256, 8}};
    /* KG_NORM_TEST_TUNINGS=a-b: the planner (t 0) and configurations a - 1 .. b - 1 alone (a GPU round's window) */
    int from = 1, to = KG_NORM_CCFG_COUNT;
    tuning_window(&from, &to);
    for (int t = 0; t <= KG_NORM_CCFG_COUNT; t++)
        for (int d = 0; d < 3; d++)
            for (int k = 0; k < 4; k++) {
                if (t > 0 && (t < from || t > to))
                    continue;
                kgi_norm_tuning = (kg_norm_tuning){.cluster = t};
                if (!kt_take(8)) /* sanitizer mode (kg_test.h): a seeded sample */
                    continue;
                const int nd = shapes[k][0] > 1 ? 3 : 2;
                ncase c = {.op = KG_NORM_SOFTMAX, .dt = dts[d], .ndim = nd, .axis = nd - 2, .fill = 4};
                memcpy(c.shape, nd == 3 ? shapes[k] : shapes[k] + 1, sizeof(int64_t) * (size_t)nd);
                check_case(ctx, &c);
                c.op = KG_NORM_LOG_SOFTMAX;
                check_case(ctx, &c);
            }
    kgi_norm_tuning = (kg_norm_tuning){0};
    kg_close(ctx);
}

/* COLT (an outer axis of few rows, one block a tile): the planner's default on
   [3, 8192], [64, 4096], [200, 1000] (configurations 11, 9, 7 on sm_90) and
   dim 1 of [7, 100, 520], and of [333, 33, 32] and [100, 100, 16] (narrow
   columns: f32 configurations 13 and 14, bf16 14 and 15), softmax and
   log_softmax, f32 and bf16: the same bits twice. */
Test(gpu, outer_axis_of_few_rows_is_bitwise_deterministic)
{
    kg_context *ctx = kt_open_gpu();
    static const int64_t shapes[][3] = {{1, 3, 8192}, {1, 64, 4096}, {1, 200, 1000}, {7, 100, 520}, {333, 33, 32},
                                        {100, 100, 16}};
    const size_t most = 4 * 7 * 100 * 520; /* the largest shape's f32 bytes */
    const kg_dtype dts[] = {KG_F32, KG_BF16};
    unsigned char *h = malloc(most), *a = malloc(most), *b = malloc(most);
    void *dx = kt_alloc(ctx, most), *dy = kt_alloc(ctx, most);
    uint64_t rng = kt_seed() + 5;
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < 6; k++) {
            const int nd = shapes[k][0] > 1 ? 3 : 2;
            const int64_t *sh = nd == 3 ? shapes[k] : shapes[k] + 1;
            const int64_t n = shapes[k][0] * shapes[k][1] * shapes[k][2];
            const size_t bytes = kg_dtype_size(dts[d]) * (size_t)n;
            for (int64_t i = 0; i < n; i++)
                kt_set(h, dts[d], i, kt_uniform(&rng, -8, 8));
            kt_upload(ctx, dx, h, bytes);
            kg_tensor x = kg_tensor_contiguous(dx, dts[d], nd, sh), y = kg_tensor_contiguous(dy, dts[d], nd, sh);
            char what[64];
            snprintf(what, sizeof what, "COLT shape %d, %s", k, kg_dtype_name(dts[d]));
            assert_same_bits_twice(ctx, TWICE_SOFTMAX, nd - 2, &x, &y, NULL, bytes, a, b, what);
            assert_same_bits_twice(ctx, TWICE_LOG_SOFTMAX, nd - 2, &x, &y, NULL, bytes, a, b, what);
        }
    kg_free(ctx, dx);
    kg_free(ctx, dy);
    free(h);
    free(a);
    free(b);
    kg_close(ctx);
}

Test(gpu, normalizations_are_captured_in_a_cuda_graph)
{
    kg_context *ctx = kt_open_gpu();
    const int64_t n = 3000 * 40;
    float *h = malloc(sizeof(float) * n), *a = malloc(sizeof(float) * n), *g = malloc(sizeof(float) * n);
    uint64_t rng = kt_seed();
    for (int64_t i = 0; i < n; i++)
        h[i] = (float)kt_uniform(&rng, -3, 3);
    void *dx = kt_alloc(ctx, sizeof(float) * n), *dy = kt_alloc(ctx, sizeof(float) * n);
    /* the columns by CLUSTER (sm_90; elsewhere COLS), then by COLS (split, through the scratch) */
    for (int pass = 0; pass < 2; pass++) {
        kgi_norm_tuning.cluster = pass ? -1 : 0;
        kt_upload(ctx, dx, h, sizeof(float) * n);
        kg_tensor x = kg_tensor_contiguous(dx, KG_F32, 2, KT_SHAPE(3000, 40)),
                  y = kg_tensor_contiguous(dy, KG_F32, 2, KT_SHAPE(3000, 40));
        KT_OK(ctx, kg_reserve_scratch(ctx, 0));
        KT_OK(ctx, kg_softmax(ctx, &y, &x, 0)); /* columns */
        kt_download(ctx, a, dy, sizeof(float) * n);
        cudaStream_t s;
        cr_assert_eq(cudaStreamCreate(&s), cudaSuccess);
        KT_OK(ctx, kg_set_stream(ctx, (kg_stream)s));
        /* scratch is per stream: reserve it on the stream that is captured */
        KT_OK(ctx, kg_reserve_scratch(ctx, 0));
        KT_OK(ctx, kg_memset(ctx, dy, 0, sizeof(float) * n));
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
        KT_OK(ctx, kg_softmax(ctx, &y, &x, 0));
        KT_OK(ctx, kg_layer_norm(ctx, &x, NULL, NULL, &x, 1, NULL, NULL, 1e-5));
        cr_assert_eq(cudaStreamEndCapture(s, &graph), cudaSuccess);
        cr_assert_eq(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
        cr_assert_eq(cudaGraphLaunch(exec, s), cudaSuccess);
        cr_assert_eq(cudaStreamSynchronize(s), cudaSuccess);
        kt_download(ctx, g, dy, sizeof(float) * n);
        cr_assert(memcmp(a, g, sizeof(float) * n) == 0, "the captured softmax differs from the direct one");
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        KT_OK(ctx, kg_set_stream(ctx, NULL));
        cudaStreamDestroy(s);
    }
    kgi_norm_tuning = (kg_norm_tuning){0};
    kg_free(ctx, dx);
    kg_free(ctx, dy);
    free(h);
    free(a);
    free(g);
    kg_close(ctx);
}

/* A seeded random sweep: ranks 1-4, odd sizes, every op (and the residual
   form), random axes, axis sets, k, weights, permutations, steps, in-place
   outputs and dtypes. A failure prints the op, dtype, shape and seed. */
Test(gpu, seeded_random_sweep)
{
    kg_context *ctx = kt_open_gpu();
    uint64_t rng = kt_seed() * 2654435761u + 17;
    static const int64_t sizes[] = {1, 2, 3, 5, 7, 16, 33, 64, 100, 257};
    for (int t = 0; t < 60; t++) {
        ncase c;
        memset(&c, 0, sizeof c);
        c.dt = floats[kt_next(&rng) % 4];
        c.ndim = 1 + (int)(kt_next(&rng) % 4);
        int64_t n = 1;
        for (int d = 0; d < c.ndim; d++) {
            c.shape[d] = sizes[kt_next(&rng) % 10];
            if (n * c.shape[d] > ((int64_t)1 << 17))
                c.shape[d] = 1;
            n *= c.shape[d];
        }
        static int perms[60][KG_MAX_DIMS];
        if (kt_next(&rng) % 2) {
            for (int d = 0; d < c.ndim; d++)
                perms[t][d] = d;
            for (int d = c.ndim - 1; d > 0; d--) {
                const int j = (int)(kt_next(&rng) % (uint64_t)(d + 1)), x = perms[t][d];
                perms[t][d] = perms[t][j];
                perms[t][j] = x;
            }
            c.perm = perms[t];
        }
        c.step = kt_next(&rng) % 4 == 0 ? 2 : 1;
        const int op = (int)(kt_next(&rng) % 6);
        c.op = op == 5 ? KG_NORM_RMS_NORM : (kg_norm_op)(KG_NORM_SOFTMAX + op);
        c.axis = (int)(kt_next(&rng) % (uint64_t)(2 * c.ndim)) - c.ndim;
        c.k = 1;
        if (c.op == KG_NORM_LOGSUMEXP) {
            const unsigned m = (unsigned)(kt_next(&rng) % (1u << c.ndim));
            for (int d = 0; d < c.ndim; d++)
                if ((m >> d) & 1u)
                    c.axes[c.n_axes++] = kt_next(&rng) % 2 ? d : d - c.ndim;
            c.keepdim = (int)(kt_next(&rng) % 2);
        } else if (c.op == KG_NORM_LAYER_NORM) {
            c.k = 1 + (int)(kt_next(&rng) % (uint64_t)c.ndim);
            c.w = (int)(kt_next(&rng) % 3);
            c.b = (int)(kt_next(&rng) % 3);
            c.stats = (int)(kt_next(&rng) % 2);
        } else if (c.op == KG_NORM_RMS_NORM) {
            c.w = (int)(kt_next(&rng) % 2);
            c.res = op == 5;
        }
        if (c.op != KG_NORM_LOGSUMEXP) {
            const int o = (int)(kt_next(&rng) % 3);
            c.inplace = o == 1;
            c.out_like_in = o == 2;
        }
        check_case(ctx, &c);
    }
    kg_close(ctx);
}
