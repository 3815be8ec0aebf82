/*
 * attention_bwd_x3.cuh - the FP32 products of the attention backward's
 * tensor-core kvq kernel (attnb_kvq_tc<float, ...> in attention_bwd.cuh)
 * as split TF32 ("3xTF32"): every f32 operand x is split into
 *
 *     hi = x rounded to TF32 (cvt.rna),  lo = (x - hi) rounded to TF32,
 *
 * and a * b is accumulated as lo_a hi_b + hi_a lo_b + hi_a hi_b by three
 * mma.sync m16n8k8 TF32 instructions with f32 accumulators (the small terms
 * first; lo_a lo_b, below 2^-22 |a b|, is dropped). Each operand carries
 * about 22 bits of its 24, so the products are FP32-accurate (not plain
 * TF32, whose 11 bits would fail the f32 tolerance); the same split, in the
 * same order, every call: bitwise reproducible.
 *
 * Operands come from f32 tiles in shared memory of row pitch = 4 (mod 32)
 * floats (D + 4, BM + 4) with 32-bit loads, free of bank conflicts:
 *   - "K-major" operands (S^T = K Q^T, dP^T = V dout^T: both A and B rows
 *     along the reduced dim): k slot j of an m16n8k8 is column k0 + j
 *     (thread (g, t) reads columns t and t + 4 of row g: banks 4 g + t);
 *   - where A comes from the accumulators (P^T, dS^T as A of dV, dK) or the
 *     reduced dim is the tile's rows (dQ = dS K from dS^T and K), k slot t
 *     is row k0 + 2 t and slot t + 4 row k0 + 2 t + 1 (an accumulator's
 *     adjacent column pair; banks 8 t + g). The permutation is the same on
 *     both operands of one product, so the sum is the same sum.
 */
#ifndef KG_ATTENTION_BWD_X3_CUH
#define KG_ATTENTION_BWD_X3_CUH

#include <stdint.h>

namespace kg_attnb
{

/* x as TF32 hi + lo (see above). */
__device__ __forceinline__ void x3_split(float x, uint32_t &hi, uint32_t &lo)
{
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(hi) : "f"(x));
    const float r = x - __uint_as_float(hi);
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(lo) : "f"(r));
}

/* c += a b, one mma.sync m16n8k8 TF32 (f32 accumulators). */
__device__ __forceinline__ void x3_mma(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* A split operand fragment: hi and lo. */
struct x3_a {
    uint32_t h[4], l[4];
};
struct x3_b {
    uint32_t h[2], l[2];
};

__device__ __forceinline__ void x3_make_a(x3_a &a, float a0, float a1, float a2, float a3)
{
    x3_split(a0, a.h[0], a.l[0]);
    x3_split(a1, a.h[1], a.l[1]);
    x3_split(a2, a.h[2], a.l[2]);
    x3_split(a3, a.h[3], a.l[3]);
}

__device__ __forceinline__ void x3_make_b(x3_b &b, float b0, float b1)
{
    x3_split(b0, b.h[0], b.l[0]);
    x3_split(b1, b.h[1], b.l[1]);
}

/* c[n] += a b[n] for N fragments, the three terms in rounds over n (each
   accumulator's three mma in order; N independent chains). */
template <int N>
__device__ __forceinline__ void x3_run(float (*c)[4], const x3_a &a, const x3_b (&b)[N])
{
#pragma unroll
    for (int n = 0; n < N; n++)
        x3_mma(c[n], a.l, b[n].h);
#pragma unroll
    for (int n = 0; n < N; n++)
        x3_mma(c[n], a.h, b[n].l);
#pragma unroll
    for (int n = 0; n < N; n++)
        x3_mma(c[n], a.h, b[n].h);
}

/* acc[n] (16 rows r0.. of A x BM / 8 n-tiles of B's rows) += A[r0.., :] .
   B[8 n.., :] over K columns: both tiles K-major, pitch P floats. */
template <int K, int NB, int P>
__device__ __forceinline__ void x3_rows_x_rows(float (&acc)[NB][4], const float *A, const float *B, int r0, int g, int t)
{
#pragma unroll 2
    for (int k0 = 0; k0 < K; k0 += 8) {
        const float *a = A + (r0 + g) * P + k0 + t;
        x3_a fa;
        x3_make_a(fa, a[0], a[8 * P], a[4], a[8 * P + 4]);
        x3_b fb[NB];
#pragma unroll
        for (int n = 0; n < NB; n++) {
            const float *b = B + (n * 8 + g) * P + k0 + t;
            x3_make_b(fb[n], b[0], b[4]);
        }
        x3_run<NB>(acc, fa, fb);
    }
}

/* Why the products that run over many steps (dV, dK over every query tile
   of the walk) are formed per step in fresh accumulators and added to the
   running sums by FADD: the tensor cores add into an f32 accumulator with
   truncation, not round-to-nearest, a bias of up to an ulp of the
   accumulator per mma; three mma per product over a whole walk (Hopper,
   run r1 of 2026-12-02: dK of MQA 8:1 at D 128 off by 1e-5 relative, over
   the f32 tolerance) where the per-step sum keeps the truncation to a few
   ulps of one step's part. dQ (a fresh fragment every step, added to the
   partial) and S^T, dP^T (D / 8 k-steps from zero) are formed that way
   already. */

/* The A fragment of k slots 8 kk.. from accumulator n-tile kk (rows g,
   g + 8; columns 2 t, 2 t + 1 -> slots t, t + 4). */
__device__ __forceinline__ void x3_a_of_acc(x3_a &a, const float (&c)[4]) { x3_make_a(a, c[0], c[2], c[1], c[3]); }

/* x3_a_of_acc of x where `first`, else of y (chosen value by value: a
   choice of the array would put both in local memory). */
__device__ __forceinline__ void x3_a_of_either(x3_a &a, const float (&x)[4], const float (&y)[4], bool first)
{
    x3_make_a(a, first ? x[0] : y[0], first ? x[2] : y[2], first ? x[1] : y[1], first ? x[3] : y[3]);
}

/* The n-tiles of one round of x3_acc_tile: 4, else the most that divides n. */
__host__ __device__ constexpr int x3_grp(int n) { return n % 4 == 0 ? 4 : n % 3 == 0 ? 3 : n % 2 == 0 ? 2 : 1; }

/* acc[dn] += A (16 x 8, one k8 of queries) . X[k0.., :] (N-major, pitch P)
   for the NN n-tiles from column c0 (rows k0 + 2 t, + 1). */
template <int NN, int P>
__device__ __forceinline__ void x3_acc_tile(float (*acc)[4], const x3_a &a, const float *X, int k0, int c0, int g,
                                            int t)
{
    constexpr int GRP = x3_grp(NN);
    const float *x = X + (k0 + 2 * t) * P + c0 + g;
#pragma unroll
    for (int d0 = 0; d0 < NN; d0 += GRP) {
        x3_b fb[GRP];
#pragma unroll
        for (int d = 0; d < GRP; d++)
            x3_make_b(fb[d], x[(d0 + d) * 8], x[P + (d0 + d) * 8]);
        x3_run<GRP>(acc + d0, a, fb);
    }
}

/* dq[n] (rows r0.. of dS, columns c0 + 8 n..) += dS K over BN keys, from
   dS^T (keys x queries, pitch PS) and K (keys x D, pitch P). */
template <int BN, int QN, int PS, int P>
__device__ __forceinline__ void x3_dq(float (&dq)[QN][4], const float *sS, const float *sK, int r0, int c0, int g, int t)
{
#pragma unroll 2
    for (int k0 = 0; k0 < BN; k0 += 8) {
        const float *s = sS + (k0 + 2 * t) * PS + r0 + g;
        x3_a fa;
        x3_make_a(fa, s[0], s[8], s[PS], s[PS + 8]);
        x3_acc_tile<QN, P>(dq, fa, sK, k0, c0, g, t);
    }
}

} // namespace kg_attnb

#endif
