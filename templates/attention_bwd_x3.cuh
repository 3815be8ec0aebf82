/*
 * attention_bwd_x3.cuh - the FP32 products of split TF32 ("3xTF32") on
 * mma.sync m16n8k8, shared by the attention backward's tensor-core kvq
 * kernel (attnb_kvq_tc<float, ...> in attention_bwd.cuh) and the forward's
 * f32 kernel (attn_x3, attention_x3.cuh): every f32 operand x is split into
 * TF32 hi + lo by a split policy SP (x3_int below), and a * b is
 * accumulated as lo_a hi_b + hi_a lo_b + hi_a hi_b by three mma.sync
 * m16n8k8 TF32 instructions with f32 accumulators (the small terms first;
 * lo_a lo_b, below 2^-22 |a b|, is dropped). Each operand carries about
 * 21-22 bits of its 24, so the products are FP32-accurate (not plain TF32,
 * whose 11 bits would fail the f32 tolerance); the same split, in the same
 * order, every call: bitwise reproducible.
 *
 * Operands come from f32 tiles in shared memory of row pitch = 4 (mod 32)
 * floats (D + 4, BM + 4) with 32-bit loads, free of bank conflicts:
 *   - "K-major" operands (S^T = K Q^T, dP^T = V dout^T, the forward's
 *     S = Q K^T: both A and B rows along the reduced dim): k slot j of an
 *     m16n8k8 is column k0 + j (thread (g, t) reads columns t and t + 4 of
 *     row g: banks 4 g + t);
 *   - where A comes from the accumulators (P^T, dS^T as A of dV, dK; the
 *     forward's P of P V) or the reduced dim is the tile's rows (dQ = dS K
 *     from dS^T and K), k slot t is row k0 + 2 t and slot t + 4 row
 *     k0 + 2 t + 1 (an accumulator's adjacent column pair; banks 8 t + g).
 *     The permutation is the same on both operands of one product, so the
 *     sum is the same sum.
 */
#ifndef KG_ATTENTION_BWD_X3_CUH
#define KG_ATTENTION_BWD_X3_CUH

#include <stdint.h>

namespace kg_attnb
{

/* The split policy: x as TF32 hi + lo, static split(x, hi, lo).
   x3_int (CUTLASS's "fast F32" split): hi = x rounded to nearest, ties
   away (the value cvt.rna gives): half a TF32 ulp added to the bits and the
   13 low bits cleared; lo = x - hi truncated to TF32 (its 13 low bits
   cleared), which costs at most 2^-21 |x| (the dropped lo lo term is
   2^-22 |x|). Integer and FP32 instructions: the forward measured the cvt
   split 23-30% slower in its kernel, whose rate is bound by what it issues
   per mma (H200, session 10 r3, us, same process: [2,16,4096,128] 5171 /
   6699, causal 2860 / 3710, D 64 S 4k 5142 / 6751, D 256 S 4k causal
   6552 / 8132), and so did the backward's kvq (H200, TFLOP/s, same runs:
   D64 S4k 38.8 / 37.1 against 51.9 / 48.2 non-causal / causal, D32 S4k
   34.7 against 46.2), where that split was removed in session 12. */
struct x3_int {
    static __device__ __forceinline__ void split(float x, uint32_t &hi, uint32_t &lo)
    {
        hi = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
        lo = __float_as_uint(x - __uint_as_float(hi)) & 0xffffe000u;
    }
};
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

/* The A fragment of a0..a3 and the B fragment of b0, b1, split by SP. */
template <typename SP> __device__ __forceinline__ void x3_make_a(x3_a &a, float a0, float a1, float a2, float a3)
{
    const float v[4] = {a0, a1, a2, a3};
#pragma unroll
    for (int i = 0; i < 4; i++)
        SP::split(v[i], a.h[i], a.l[i]);
}

template <typename SP> __device__ __forceinline__ void x3_make_b(x3_b &b, float b0, float b1)
{
    SP::split(b0, b.h[0], b.l[0]);
    SP::split(b1, b.h[1], b.l[1]);
}

/* The B fragment of elements o0, o1 of an f32 tile, split by SP. */
template <typename SP> __device__ __forceinline__ void x3_b_at(x3_b &b, const float *x, int o0, int o1)
{
    x3_make_b<SP>(b, x[o0], x[o1]);
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

/* One k8 step of x3_rows_x_rows: acc[n] += A[r0.., k0..] . B[8 n.., k0..]. */
template <int NB, int P, typename SP, int GRP>
__device__ __forceinline__ void x3_rows_step(float (*acc)[4], const float *A, const float *B, int r0, int k0, int g,
                                             int t)
{
    const float *a = A + (r0 + g) * P + k0 + t;
    x3_a fa;
    x3_make_a<SP>(fa, a[0], a[8 * P], a[4], a[8 * P + 4]);
#pragma unroll
    for (int n0 = 0; n0 < NB; n0 += GRP) {
        x3_b fb[GRP];
#pragma unroll
        for (int n = 0; n < GRP; n++) {
            const int o = ((n0 + n) * 8 + g) * P + k0 + t;
            x3_b_at<SP>(fb[n], B, o, o + 4);
        }
        x3_run<GRP>(acc + n0, fa, fb);
    }
}

/* acc[n] (16 rows r0.. of A x NB n-tiles of B's rows 8 n..) += A[r0.., :]
   . B[8 n.., :] over K columns: both tiles K-major, pitch P floats; the B
   fragments made and run GRP n-tiles at a time (fewer live registers than
   all NB; each accumulator's sequence of mma is the same for any GRP).
   CH > 0: every CH k8 steps form their part in fresh accumulators, added
   to acc by FADD (the truncation below); CH = 0: one chain of 3 K / 8 mma
   into acc. */
template <int K, int NB, int P, typename SP, int GRP = NB, int CH = 0>
__device__ __forceinline__ void x3_rows_x_rows(float (*acc)[4], const float *A, const float *B, int r0, int g, int t)
{
    static_assert(NB % GRP == 0, "x3_rows_x_rows: groups of n-tiles");
    static_assert(CH >= 0 && K % (8 * (CH > 0 ? CH : 1)) == 0, "x3_rows_x_rows: whole chunks of k8 steps");
    if constexpr (CH == 0) {
#pragma unroll 2
        for (int k0 = 0; k0 < K; k0 += 8)
            x3_rows_step<NB, P, SP, GRP>(acc, A, B, r0, k0, g, t);
    } else {
#pragma unroll(CH == 1 ? 2 : 1)
        for (int c0 = 0; c0 < K; c0 += 8 * CH) {
            float part[NB][4];
#pragma unroll
            for (int n = 0; n < NB; n++)
                part[n][0] = part[n][1] = part[n][2] = part[n][3] = 0.f;
#pragma unroll
            for (int k0 = c0; k0 < c0 + 8 * CH; k0 += 8)
                x3_rows_step<NB, P, SP, GRP>(part, A, B, r0, k0, g, t);
#pragma unroll
            for (int n = 0; n < NB; n++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    acc[n][e] += part[n][e];
        }
    }
}

/* Why the products that run over many steps (dV, dK over every query tile
   of the walk) are formed per step in fresh accumulators and added to the
   running sums by FADD, and why S^T, dP^T are summed from parts of CH k8
   steps in the backward: the tensor cores add into an f32 accumulator with
   truncation, not round-to-nearest, a bias of up to an ulp of the
   accumulator per mma; three mma per product over a whole walk (Hopper,
   run r1 of 2026-12-02: dK of MQA 8:1 at D 128 off by 1e-5 relative, over
   the f32 tolerance) where the per-step sum keeps the truncation to a few
   ulps of one step's part. The same bias in the 3 D / 8 mma of one score
   (48 at D 128, onto |S| up to ~20 in the tests' cases) moved P by up to
   ~1e-5 relative (through exp(scale S - lse)) and dK with it: every D128
   split-TF32 tuning failed the f64-reference test on dK of MQA causal
   (session 11: 2.8e-5 - 3.5e-5 against bounds of 2.4e-5 - 2.9e-5); a host
   emulation of the kernel's split and mma order with a truncating
   accumulator gives the same (3.3e-5 - 5.4e-5 over three seeds; 5e-6 with
   round-to-nearest mma; with S alone in f32 FMA 1.5e-5 - 2.0e-5, dP alone
   2.5e-5 - 4.4e-5: S loses most, dP some, dK's per-step sums nothing
   measurable; the lo lo term added, one more truncating mma a k8 step,
   4.3e-5 - 7.0e-5), and 4.4e-6 - 6.2e-6 with S^T,
   dP^T summed by parts of 1 or 2 k8 steps (CH = 1, 2), under the f32
   reference's own 6.6e-6 - 8.8e-6; on the GPU every D96 and D128 x3 test
   passed with CH = 2 (H200, 2026-12-03). dQ (a fresh fragment every step,
   added to the partial) is formed that way already; D32 and D64 pass
   without (fewer mma, smaller scores; CH = 2 cost D64 2-8%). */

/* The A fragment of k slots 8 kk.. from accumulator n-tile kk (rows g,
   g + 8; columns 2 t, 2 t + 1 -> slots t, t + 4). */
template <typename SP> __device__ __forceinline__ void x3_a_of_acc(x3_a &a, const float (&c)[4])
{
    x3_make_a<SP>(a, c[0], c[2], c[1], c[3]);
}

/* x3_a_of_acc of x where `first`, else of y (chosen value by value: a
   choice of the array would put both in local memory). */
template <typename SP>
__device__ __forceinline__ void x3_a_of_either(x3_a &a, const float (&x)[4], const float (&y)[4], bool first)
{
    x3_make_a<SP>(a, first ? x[0] : y[0], first ? x[2] : y[2], first ? x[1] : y[1], first ? x[3] : y[3]);
}

/* The n-tiles of one round of x3_acc_tile: 4, else the most that divides n. */
__host__ __device__ constexpr int x3_grp(int n) { return n % 4 == 0 ? 4 : n % 3 == 0 ? 3 : n % 2 == 0 ? 2 : 1; }

/* acc[dn] += A (16 x 8, one k8 of queries; the forward's: of keys) .
   X[k0.., :] (N-major, pitch P) for the NN
   n-tiles from column c0 (rows k0 + 2 t, + 1). */
template <int NN, int P, typename SP>
__device__ __forceinline__ void x3_acc_tile(float (*acc)[4], const x3_a &a, const float *X, int k0, int c0, int g, int t)
{
    constexpr int GRP = x3_grp(NN);
    const int o = (k0 + 2 * t) * P + c0 + g;
#pragma unroll
    for (int d0 = 0; d0 < NN; d0 += GRP) {
        x3_b fb[GRP];
#pragma unroll
        for (int d = 0; d < GRP; d++)
            x3_b_at<SP>(fb[d], X, o + (d0 + d) * 8, o + P + (d0 + d) * 8);
        x3_run<GRP>(acc + d0, a, fb);
    }
}

/* dq[n] (rows r0.. of dS, columns c0 + 8 n..) += dS K over BN keys, from
   dS^T (keys x queries, pitch PS) and K (keys x D, pitch P). */
template <int BN, int QN, int PS, int P, typename SP>
__device__ __forceinline__ void x3_dq(float (&dq)[QN][4], const float *sS, const float *sK, int r0, int c0, int g, int t)
{
#pragma unroll 2
    for (int k0 = 0; k0 < BN; k0 += 8) {
        const float *s = sS + (k0 + 2 * t) * PS + r0 + g;
        x3_a fa;
        x3_make_a<SP>(fa, s[0], s[8], s[PS], s[PS + 8]);
        x3_acc_tile<QN, P, SP>(dq, fa, sK, k0, c0, g, t);
    }
}

} // namespace kg_attnb

#endif
