/*
 * reduce_flat_words.cuh - FLAT over 2-byte elements with each 16-byte vector
 * loaded as four 32-bit words and split into elements only when added,
 * after the batch's loads are issued (kg_red_args.vstore 1 on a FLAT plan;
 * templates/reduce.cu includes this file in the 2-byte column modules
 * alone). kg_red_flat_v but for the vectors' type: a vector of 2-byte
 * elements loaded as such is split into 16-bit registers at the load, and
 * ptxas makes the next load wait for it (as in kg_red_nest_v, COLS WIDE32).
 * The same elements in the same order: the same bits.
 */
#ifndef KG_REDUCE_FLAT_WORDS_CUH
#define KG_REDUCE_FLAT_WORDS_CUH

#include "reduce.cuh"

template <class Op, int CAP> __device__ __forceinline__ void kg_red_flat_vw(const kg_red_args &A, typename Op::acc_t *sv)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    constexpr int V = Op::vec, U = sizeof(T) == 2 ? KG_RED_FLAT_UNROLL * 3 / 4 : KG_RED_FLAT_UNROLL;
    constexpr int NC = KG_RED_FLAT_COLS / KG_RED_THREADS;
    typedef kgd_vec<uint32_t, 4> VT; /* the vectors as words */
    static_assert(sizeof(T) == 2 && V == 8, "words: 16-byte vectors of 2-byte elements");
    const int K = (int)A.inner, G = A.cw, NT = KG_RED_THREADS / G * G, L = G * V;
    const int t = threadIdx.x;
    for (int64_t u = blockIdx.x; u < A.units; u += gridDim.x) {
        const int64_t grp = u / A.splits, split = u - grp * A.splits;
        int64_t io, oo, xo;
        kg_red_outer(A, grp, io, oo, xo);
        const int64_t r0 = split * A.chunk, r1 = r0 + A.chunk < A.red ? r0 + A.chunk : A.red;
        const T *p = (const T *)A.in + io + r0 * K; /* the unit's first element */
        const int h = (int)(((uintptr_t)p & 15) / sizeof(T));
        const int64_t n = (r1 - r0) * K;
        const VT *vp = (const VT *)(p - h);
        const int64_t nvec = (h + n + V - 1) / V, jl = h > 0 ? 1 : 0, jh = (h + n) / V; /* whole: [jl, jh) */
        AT acc[V];
#pragma unroll
        for (int e = 0; e < V; e++)
            acc[e] = Op::identity();
        /* a ragged vector, element by element */
        auto part = [&](int64_t j) {
#pragma unroll
            for (int e = 0; e < V; e++) {
                const int64_t q = j * V + e - h;
                if (q >= 0 && q < n)
                    acc[e] = Op::combine(acc[e], Op::map(p[q]));
            }
        };
        if (t < NT) {
            const int64_t j0 = t < jl ? t + NT : t;
            const VT *q = vp + j0;
            for (int64_t left = jh - j0; left > 0; left -= U * NT, q += U * NT) {
                VT x[U];
#pragma unroll
                for (int k = 0; k < U; k++)
                    if (k * NT < left)
                        x[k] = q[k * NT];
#pragma unroll
                for (int k = 0; k < U; k++)
                    if (k * NT < left)
#pragma unroll
                        for (int e = 0; e < V; e++) {
                            const uint16_t b = (uint16_t)(x[k].v[e / 2] >> (16 * (e & 1)));
                            T y;
                            memcpy(&y, &b, 2);
                            acc[e] = Op::combine(acc[e], Op::map(y));
                        }
            }
            if (t == 0 && h > 0)
                part(0);
            if (jh < nvec && jh % NT == t && !(jh == 0 && h > 0))
                part(jh);
        }
        __syncthreads(); /* the previous unit's readers of sv are done */
        if (t < NT)
#pragma unroll
            for (int e = 0; e < V; e++)
                sv[t * V + e] = acc[e];
        __syncthreads();
        kg_red_fold<Op>(sv, NT / G, L);
        AT col[NC];
#pragma unroll
        for (int k = 0; k < NC; k++) {
            const int c = t + k * KG_RED_THREADS;
            col[k] = Op::identity();
            if (c < K)
                for (int q = (c + h) % K; q < L; q += K)
                    col[k] = Op::combine(col[k], sv[q]);
        }
        if (A.splits > 1) {
            const int64_t at = grp * A.splits * K;
#pragma unroll
            for (int k = 0; k < NC; k++) {
                const int c = t + k * KG_RED_THREADS;
                if (c < K)
                    ((AT *)A.partial)[at + split * K + c] = col[k];
            }
            __threadfence();
            if (!kg_red_arrive(A, grp))
                continue;
#pragma unroll
            for (int k = 0; k < NC; k++)
                col[k] = Op::identity();
            const int per = CAP / K; /* splits in sv at a time */
            for (int s0 = 0; s0 < A.splits; s0 += per) {
                const int m = A.splits - s0 < per ? A.splits - s0 : per;
                __syncthreads(); /* earlier readers of sv are done */
                for (int i = t; i < m * K; i += KG_RED_THREADS)
                    sv[i] = ((volatile AT *)A.partial)[at + (int64_t)s0 * K + i];
                __syncthreads();
                kg_red_fold<Op>(sv, m, K);
#pragma unroll
                for (int k = 0; k < NC; k++) {
                    const int c = t + k * KG_RED_THREADS;
                    if (c < K)
                        col[k] = Op::combine(col[k], sv[c]);
                }
            }
        }
#pragma unroll
        for (int k = 0; k < NC; k++) {
            const int c = t + k * KG_RED_THREADS;
            if (c < K) {
                kg_racc<Op> r;
                r.v = col[k];
                r.i = 0;
                kg_red_store<Op>(A, oo + c * A.inner_out, xo + c * A.inner_idx, r);
            }
        }
    }
}

/* FLAT of 2-byte elements: words where the plan says so (args.vstore). */
template <class Op> __device__ __forceinline__ void kg_red_flat_words(const kg_red_args &A)
{
    constexpr int N = Op::indexed ? 1 : KG_RED_THREADS * Op::vec;
    __shared__ typename Op::acc_t sv[N];
    if constexpr (N > 1) {
        if (A.vstore)
            kg_red_flat_vw<Op, N>(A, sv);
        else
            kg_red_flat_v<Op, N>(A, sv);
    }
}

#endif
