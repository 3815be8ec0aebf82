/*
 * reduce_tmp.cuh - TEMPORARY (session 17): the code of before of two
 * kernels changed this session, reached by tunings for same-process
 * comparisons (bench_reduce KG_RED_ALTS) and removed once measured:
 * cols_pair_old (args.deep on a COLSQ plan: the COLSQ code before its fold
 * into the COLS walk) and rows_tail_old (args.vec on a ROWS plan: a row's
 * last partial batch of vectors loaded one at a time).
 */
#ifndef KG_REDUCE_TMP_CUH
#define KG_REDUCE_TMP_CUH

#include "reduce.cuh"

/* TEMPORARY (s17r1 same-process comparison with the fold, tuning cols_pair_old: args.deep on a COLSQ plan):
   the COLSQ code of before. COLSQ: COLS over two column tiles per unit (args.group 2; value
   reductions): one lane down each column (cw = KG_RED_THREADS), unsplit, V
   adjacent columns per vector (Words: 2-byte elements loaded as 32-bit
   words, as kg_red_cols_v). Lane tx of unit (o, tile) takes the vectors at
   columns (2 tile KG_RED_THREADS + tx) V and KG_RED_THREADS V further, U
   rows of both in flight: a short reduced walk has all its loads in flight
   at once, and a unit's fixed work (the outer divisions, the walk's start)
   serves two tiles. The walk in 32-bit arithmetic (the planner checks). */
template <class Op, int V, bool Words, int U> __device__ __forceinline__ void kg_red_cols_pair(const kg_red_args &A)
{
    typedef typename Op::in_t T;
    typedef typename std::conditional<Words, kgd_vec<uint32_t, V / 2>, kgd_vec<T, V>>::type LT;
    constexpr int D1 = KG_RED_THREADS * V; /* the second vector, columns past the first */
    const int64_t rows = A.red;
    for (int64_t u = blockIdx.x; u < A.units; u += gridDim.x) {
        const int64_t o = u / A.tiles, tile = u - o * A.tiles;
        const int64_t col = (2 * tile * KG_RED_THREADS + threadIdx.x) * V;
        if (col >= A.inner)
            continue;
        const bool two = col + D1 < A.inner;
        int64_t io, oo, xo;
        kg_red_outer(A, o, io, oo, xo);
        const T *p = (const T *)A.in + io + col;
        kg_racc<Op> a[2][V];
#pragma unroll
        for (int m = 0; m < 2; m++)
#pragma unroll
            for (int k = 0; k < V; k++)
                a[m][k] = kg_red_identity<Op>();
        kg_red_pos<int32_t> w;
        kg_walk_at(A.walk, 0, w);
        for (int64_t r = 0; r < rows; r += U) {
            LT x[U][2];
#pragma unroll
            for (int j = 0; j < U; j++)
                if (r + j < rows) {
                    x[j][0] = *(const LT *)(p + w.off);
                    if (two)
                        x[j][1] = *(const LT *)(p + w.off + D1);
                    kg_walk_step(A.walk, w);
                }
#pragma unroll
            for (int j = 0; j < U; j++)
#pragma unroll
                for (int m = 0; m < 2; m++)
                    if (r + j < rows && (m == 0 || two))
#pragma unroll
                        for (int k = 0; k < V; k++) {
                            T e;
                            if constexpr (Words) {
                                const uint16_t b = (uint16_t)(x[j][m].v[k / 2] >> (16 * (k & 1)));
                                memcpy(&e, &b, 2);
                            } else {
                                e = x[j][m].v[k];
                            }
                            kg_red_push<Op>(a[m][k], e, r + j);
                        }
        }
#pragma unroll
        for (int m = 0; m < 2; m++)
            if (m == 0 || two) {
                if (A.vstore) {
                    kg_red_store_vec<Op, V>(A, oo + col + m * D1, a[m]);
                } else {
#pragma unroll
                    for (int k = 0; k < V; k++) {
                        const int64_t c = col + m * D1 + k;
                        kg_red_store<Op>(A, oo + c * A.inner_out, xo + c * A.inner_idx, a[m][k]);
                    }
                }
            }
    }
}

/* COLSQ by kg_red_args.vec: KG_RED_CV_VEC, or KG_RED_CV_WIDE32 for 2-byte
   elements (the planner takes no other mode). */
template <class Op> __device__ __forceinline__ void kg_red_cols_q(const kg_red_args &A)
{
    if (A.vec == KG_RED_CV_VEC) {
        kg_red_cols_pair<Op, Op::cvec, false, KG_RED_COLSQ_UNROLL>(A);
    } else if constexpr (sizeof(typename Op::in_t) == 2) {
        if (A.vec == KG_RED_CV_WIDE32)
            kg_red_cols_pair<Op, kg_red_cols_width<Op>::wide, true, KG_RED_COLSQ_UNROLL / 2>(A);
    }
}

/* ROWS: lanes t of nt reduce elements [c0, c1) of a contiguous row: a scalar
   head up to 16-byte alignment, 16-byte vectors (eight in flight), a scalar
   tail. */
template <class Op>
__device__ __forceinline__ kg_racc<Op> kg_red_run_row_old(const typename Op::in_t *row, int64_t c0, int64_t c1, int t,
                                                      int nt)
{
    typedef typename Op::in_t T;
    constexpr int V = Op::vec;
    typedef kgd_vec<T, V> VT;
    kg_racc<Op> a = kg_red_identity<Op>();
    const int64_t n = c1 - c0;
    if (n <= 0)
        return a;
    const T *p = row + c0;
    int64_t h = (int64_t)((16 - ((uintptr_t)p & 15)) & 15) / (int64_t)sizeof(T);
    if (h > n)
        h = n;
    for (int64_t k = t; k < h; k += nt)
        kg_red_push<Op>(a, p[k], c0 + k);
    const int64_t nv = (n - h) / V;
    const VT *vp = (const VT *)(p + h);
    const int64_t at = c0 + h;
    int64_t v = t;
    for (; v + (KG_RED_UNROLL - 1) * (int64_t)nt < nv; v += KG_RED_UNROLL * (int64_t)nt) {
        VT x[KG_RED_UNROLL];
#pragma unroll
        for (int j = 0; j < KG_RED_UNROLL; j++)
            x[j] = vp[v + j * (int64_t)nt];
#pragma unroll
        for (int j = 0; j < KG_RED_UNROLL; j++)
            kg_red_push_vec<Op>(a, x[j], at + (v + j * (int64_t)nt) * V);
    }
    for (; v < nv; v += nt)
        kg_red_push_vec<Op>(a, vp[v], at + v * V);
    const int64_t done = h + nv * V;
    for (int64_t k = t; k < n - done; k += nt)
        kg_red_push<Op>(a, p[done + k], c0 + done + k);
    return a;
}

template <class Op> __device__ __forceinline__ void kg_red_rows_old(const kg_red_args &A)
{
    const typename Op::in_t *in = (const typename Op::in_t *)A.in;
    kg_red_units<Op>(A, [&](int64_t io, int64_t c0, int64_t c1, int t, int nt) {
        return kg_red_run_row_old<Op>(in + io, c0, c1, t, nt);
    });
}

#endif
