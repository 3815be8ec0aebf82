/*
 * attn_ref.h - what the attention tests share (tests/test_attention.c, the
 * forward; tests/test_attention_bwd.c, the backward; tests/test_attention_f64.c):
 * the case description, the mask layouts a case draws, the [B,H,S,D] /
 * [B,S,H,D] storage of q, k, v and out that both float64 references index,
 * and a valid call's tensors for the validation tests.
 */
#ifndef ATTN_REF_H
#define ATTN_REF_H

#include <stdint.h>

#include "kg_core.h"

typedef enum { MASK_NONE, MASK_PAD, MASK_RANDOM, MASK_EMPTY_ROWS } mask_fill;

typedef struct {
    kg_dtype dt;
    int B, Hq, Hkv, Sq, Sk, D;
    int causal;
    mask_fill mask;
    int mask_ndim; /* 1: [Sk], 2: [Sq,Sk], 4: [B,1,1,Sk] (PAD) or [B,Hq,Sq,Sk] */
    int bshd;      /* q, k, v, out (and the backward's tensors) stored [B,S,H,D] (strided views) */
    float scale;
} acase;

/* The additive mask at [b,h,i,j] of the case's layout (0 without a mask). */
double attn_ref_mask_at(const acase *c, const float *m, int b, int h, int i, int j);
/* Elements of the case's mask tensor. */
int64_t attn_ref_mask_numel(const acase *c);
/* Element offset of logical [b,h,s,0] in the case's storage layout, for a
   tensor of H heads and S positions. */
int64_t attn_ref_off(const acase *c, int H, int S, int b, int h, int s);
/* The [B,H,S,D] view of data in the case's storage layout. */
kg_tensor attn_ref_view4(const acase *c, void *data, int H, int S);

/* A valid call's tensors at fake device addresses (KT_DEV, 16 MiB apart),
   for validation tests on a context without a device: q and out
   [2,8,100,D], k and v [2,2,120,D] of dt, lse f32 [2,8,100]; the backward's
   dout and dq [2,8,100,D], dk and dv [2,2,120,D]. */
typedef struct {
    kg_tensor q, k, v, out, lse, dout, dq, dk, dv;
} attn_call;
attn_call attn_ref_valid_call(kg_dtype dt, int64_t D);

/* The tolerance of a row's lse from the f32, f16 and bf16 kernels, an f32
   quantity computed from the case's inputs in f32 (scores accumulated in
   f32 from the dtype's values, the row's max, a sum of Sk exponentials, a
   log): TESTING.md's f32 floor (rtol 1.3e-6, atol 1e-5) plus, as the
   attention rule scales with the row's length, twice max_lp, the case's
   largest error of an f32 reference of lse (the same sums sequentially in
   float, scores not rounded to the dtype, as the fused kernels keep them in
   f32); never above the 1e-4 + 1e-5 |lse| the tests used before. */
double attn_ref_lse_tol(double max_lp, double want);

#endif
