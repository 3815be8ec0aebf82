/*
 * reduce_flatw.cuh - FLATW: the FLAT class (reduce.cuh, kg_red_flat_v) with
 * one warp per unit instead of a block, for many short slabs (an outer
 * position's rows x columns, unsplit): no block barrier per unit, a fold in
 * the warp's own slice of shared memory.
 */
#ifndef KG_REDUCE_FLATW_CUH
#define KG_REDUCE_FLATW_CUH

#include "reduce.cuh"

/* Warp w of the grid takes units (outer positions) w, w + warps, ...; unit
   u's rows are one contiguous run of A.red x K elements (K = A.inner
   columns). As in kg_red_flat_v, the run moves in 16-byte vectors from the
   aligned address at or before its start (h elements before it), lane t of
   the NT = 32 / G x G that take part (G = A.cw = K / gcd(K, V) <= 32) takes
   vectors t, t + NT, ..., KG_RED_FLAT_UNROLL loads in flight, element e of
   each in column (t x V + e - h) mod K; ragged end vectors element by
   element. The lanes' V accumulators go to the warp's 32 x V slots of sv,
   the NT / G periods of L = G x V slots fold in a fixed tree (upper half
   into the lower), and column c combines the period's positions (c + h) mod
   K + m x K, m in order. Every combination order is fixed by the plan. */
template <class Op> __device__ __forceinline__ void kg_red_flatw_v(const kg_red_args &A, typename Op::acc_t *sv)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    constexpr int V = Op::vec, U = sizeof(T) == 2 ? KG_RED_FLAT_UNROLL * 3 / 4 : KG_RED_FLAT_UNROLL;
    constexpr int WARPS = KG_RED_THREADS / 32;
    typedef kgd_vec<T, V> VT;
    const int K = (int)A.inner, G = A.cw, NT = 32 / G * G, L = G * V;
    const int t = threadIdx.x & 31;
    AT *sw = sv + (threadIdx.x >> 5) * (32 * V);
    const int64_t n = A.red * K, step = (int64_t)gridDim.x * WARPS;
    for (int64_t u = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5); u < A.units; u += step) {
        int64_t io, oo, xo;
        kg_red_outer(A, u, io, oo, xo);
        const T *p = (const T *)A.in + io; /* the unit's first element */
        const int h = (int)(((uintptr_t)p & 15) / sizeof(T));
        const VT *vp = (const VT *)(p - h);
        const int64_t nvec = (h + n + V - 1) / V, jl = h > 0 ? 1 : 0, jh = (h + n) / V; /* whole: [jl, jh) */
        AT acc[V];
#pragma unroll
        for (int e = 0; e < V; e++)
            acc[e] = Op::identity();
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
                        for (int e = 0; e < V; e++)
                            acc[e] = Op::combine(acc[e], Op::map(x[k].v[e]));
            }
            /* the ragged first and last vectors, element by element */
            const int64_t ragged[2] = {t == 0 && h > 0 ? 0 : -1,
                                       jh < nvec && jh % NT == t && !(jh == 0 && h > 0) ? jh : -1};
#pragma unroll
            for (int r = 0; r < 2; r++)
                if (ragged[r] >= 0)
#pragma unroll
                    for (int e = 0; e < V; e++) {
                        const int64_t i = ragged[r] * V + e - h;
                        if (i >= 0 && i < n)
                            acc[e] = Op::combine(acc[e], Op::map(p[i]));
                    }
        }
        __syncwarp(); /* the previous unit's readers of sw are done */
        if (t < NT)
#pragma unroll
            for (int e = 0; e < V; e++)
                sw[t * V + e] = acc[e];
        __syncwarp();
        for (int ns = NT / G; ns > 1;) {
            const int half = ns >> 1, up = ns - half;
            for (int i = t; i < half * L; i += 32)
                sw[i] = Op::combine(sw[i], sw[i + up * L]);
            __syncwarp();
            ns = up;
        }
        for (int c = t; c < K; c += 32) {
            kg_racc<Op> r;
            r.v = Op::identity();
            r.i = 0;
            for (int q = (c + h) % K; q < L; q += K)
                r.v = Op::combine(r.v, sw[q]);
            kg_red_store<Op>(A, oo + c * A.inner_out, xo + c * A.inner_idx, r);
        }
    }
}

/* FLATW: the kernel (value reductions of elements of 2 to 8 bytes; other
   ops and dtypes get an empty one). */
template <class Op> __device__ __forceinline__ void kg_red_flatw(const kg_red_args &A)
{
    constexpr int N = Op::indexed || Op::vec > 8 ? 1 : KG_RED_THREADS * Op::vec;
    __shared__ typename Op::acc_t sv[N];
    if constexpr (N > 1)
        kg_red_flatw_v<Op>(A, sv);
}

#endif
