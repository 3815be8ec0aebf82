/*
 * reduce_flatw.cuh - FLATW: the FLAT class (reduce.cuh, kg_red_flat_v) with
 * one warp per unit instead of a block, for many short slabs: no block
 * barrier per unit, a fold in the warp's own slice of shared memory. It also
 * takes slabs of a more general shape than FLAT's rows x columns: a short
 * reduced run innermost under the columns, and blocks repeated at a stride
 * by one reduced dim outside them.
 */
#ifndef KG_REDUCE_FLATW_CUH
#define KG_REDUCE_FLATW_CUH

#include "reduce.cuh"

/* Warp w of the grid takes units (outer positions) w, w + warps, ...; unit
   u reads A.walk.size[0] blocks (A.walk.in[0] elements apart) of n =
   A.chunk x P contiguous elements, P = a x K: a = A.run reduced elements
   innermost, K = A.inner columns right outside them, A.chunk such periods
   (a reduced dim); the element at block position q belongs to column
   (q mod P) / a. A single block moves in 16-byte vectors from the aligned
   address at or before its start (h elements before it; ragged end vectors
   element by element), several blocks in whole aligned vectors (the
   planner's condition). Lane t of the NT = 32 / G x G that take part (G =
   A.cw = P / gcd(P, V) <= 32, so that NT x V is a multiple of P) takes
   vectors t, t + NT, ... of the unit, KG_RED_FLAT_UNROLL loads in flight:
   element e of each lies at position (t x V + e - h) mod P of a period, so
   each lane keeps V accumulators and does no index arithmetic per element.
   The lanes' accumulators go to the warp's 32 x V slots of sv, the NT / G
   periods of L = G x V slots fold in a fixed tree (upper half into the
   lower), and column c combines the slots (h + c x a + r) mod P + m x P,
   m outer, r inner, in order. Every combination order is fixed by the
   plan. U: the loads a lane keeps in flight. */
template <class Op, bool Blocks, int U>
__device__ __forceinline__ void kg_red_flatw_v(const kg_red_args &A, typename Op::acc_t *sv)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    constexpr int V = Op::vec;
    constexpr int WARPS = KG_RED_THREADS / 32;
    typedef kgd_vec<T, V> VT;
    const int K = (int)A.inner, a = (int)A.run, P = a * K, G = A.cw, NT = 32 / G * G, L = G * V;
    const int t = threadIdx.x & 31;
    AT *sw = sv + (threadIdx.x >> 5) * (32 * V);
    const int64_t n = A.chunk * P, nb = Blocks ? A.walk.size[0] : 1, SV = A.walk.in[0] / V;
    const int64_t step = (int64_t)gridDim.x * WARPS;
    for (int64_t u = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5); u < A.units; u += step) {
        int64_t io, oo, xo;
        kg_red_outer(A, u, io, oo, xo);
        const T *p = (const T *)A.in + io; /* the unit's first element */
        const int h = Blocks ? 0 : (int)(((uintptr_t)p & 15) / sizeof(T));
        /* each block's whole vectors: [jl, jh) from the aligned address at
           or before its start (several blocks: all of them, h = 0) */
        const int64_t nvec = (h + n + V - 1) / V, jl = h > 0 ? 1 : 0, jh = (h + n) / V;
        const uint32_t W = jh > jl ? (uint32_t)(jh - jl) : 0;
        AT acc[V];
#pragma unroll
        for (int e = 0; e < V; e++)
            acc[e] = Op::identity();
        auto push = [&](const VT &x) {
#pragma unroll
            for (int e = 0; e < V; e++)
                acc[e] = Op::combine(acc[e], Op::map(x.v[e]));
        };
        if constexpr (Blocks) {
            /* vector j of the unit (block r = j / W, vector i = j mod W of
               it, h = 0) goes to lane j mod NT; a lane steps NT vectors:
               qs blocks and rs vectors */
            if (t < NT) {
                const VT *vb = (const VT *)p;
                const uint32_t qs = (uint32_t)NT / W, rs = (uint32_t)NT % W;
                uint32_t i = (uint32_t)t % W;
                int64_t r = (uint32_t)t / W;
                for (int64_t left = nb * W - t; left > 0; left -= U * NT) {
                    VT x[U];
#pragma unroll
                    for (int k = 0; k < U; k++)
                        if (k * NT < left) {
                            x[k] = vb[r * SV + i];
                            i += rs;
                            r += qs;
                            if (i >= W) {
                                i -= W;
                                r++;
                            }
                        }
#pragma unroll
                    for (int k = 0; k < U; k++)
                        if (k * NT < left)
                            push(x[k]);
                }
            }
        } else if (t < NT) {
            /* the slab's whole vectors [jl, jh): vector j goes to lane j mod
               NT; then the ragged first and last ones, element by element */
            const int64_t j0 = t < jl ? t + NT : t;
            const VT *q = (const VT *)(p - h) + j0;
            for (int64_t left = jh - j0; left > 0; left -= U * NT, q += U * NT) {
                VT x[U];
#pragma unroll
                for (int k = 0; k < U; k++)
                    if (k * NT < left)
                        x[k] = q[k * NT];
#pragma unroll
                for (int k = 0; k < U; k++)
                    if (k * NT < left)
                        push(x[k]);
            }
            const int64_t ragged[2] = {t == 0 && h > 0 ? 0 : -1,
                                       jh < nvec && jh % NT == t && !(jh == 0 && h > 0) ? jh : -1};
#pragma unroll
            for (int k = 0; k < 2; k++)
                if (ragged[k] >= 0)
#pragma unroll
                    for (int e = 0; e < V; e++) {
                        const int64_t i = ragged[k] * V + e - h;
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
            for (int m = 0; m < L; m += P)
                for (int k = 0; k < a; k++)
                    r.v = Op::combine(r.v, sw[m + (h + c * a + k) % P]);
            kg_red_store<Op>(A, oo + c * A.inner_out, xo + c * A.inner_idx, r);
        }
    }
}

/* FLATW: the kernel (value reductions of elements of 2 to 8 bytes; other
   ops and dtypes get an empty one); UO > 0 (kernel flatwo): UO loads in
   flight per lane. */
template <class Op, int UO = 0> __device__ __forceinline__ void kg_red_flatw(const kg_red_args &A)
{
    constexpr int N = Op::indexed || Op::vec > 8 ? 1 : KG_RED_THREADS * Op::vec;
    constexpr int U = UO > 0 ? UO : sizeof(typename Op::in_t) == 2 ? KG_RED_FLAT_UNROLL * 3 / 4 : KG_RED_FLAT_UNROLL;
    __shared__ typename Op::acc_t sv[N];
    if constexpr (N > 1) {
        if (A.walk.size[0] > 1)
            kg_red_flatw_v<Op, true, U>(A, sv);
        else
            kg_red_flatw_v<Op, false, U>(A, sv);
    }
}

#endif
