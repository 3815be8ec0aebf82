/*
 * reduce_cover.cuh - NEST over short or misaligned contiguous runs in
 * covering 16-byte vectors (kg_red_args.vec == KG_RED_NEST_COVER; value
 * reductions, kernels nest (UO 8) and nesto (UO 4): templates/reduce.cu
 * includes this file in the nest modules alone).
 *
 * The reduced dims sit innermost: each output reduces runs of L = A.run
 * contiguous elements, further reduced dims walked outside them. Where the
 * runs cannot move in whole vectors (L not a multiple of the vector, or a
 * start that is not 16-byte aligned), the plain NEST walk loads one element
 * per lane and position. Here each run is covered instead by the aligned
 * 16-byte vectors that hold it: the walk's dim 0 counts NV = (L + 2V - 2) / V
 * vectors per run (the most a run of L elements can touch at any alignment),
 * of stride V elements, so the vector of digit x0 starts at the aligned
 * element at or before (run start + x0 V); its elements at run index
 * d = x0 V - s + k (s: the run start's misalignment in elements) are pushed
 * where 0 <= d < L, the others dropped. A vector that holds no element of the
 * run is not loaded. A vector that reaches outside the input's element
 * extent [A.inner_out, A.inner_idx] (offsets from A.in, the planner's) is
 * loaded element by element, only the run's elements: no byte outside the
 * tensor is read (A.cw 1: a vector wholly inside its run is pushed without
 * a test per element; the same elements in the same order, the same bits;
 * 2-byte elements: the vectors loaded as 32-bit words).
 * A.tiles is the walk's positions per output (NV x the
 * outer reduced sizes), what splits cut (A.chunk), A.red stays the element
 * count (mean's divisor).
 *
 * Lanes of a unit take positions t, t + nt, ... in increasing order, UO
 * vectors in flight per lane, the walk in 32-bit arithmetic (the planner
 * takes this mode only where the covering walk fits); every combination
 * order is fixed by the plan: bitwise the same run to run.
 */
#ifndef KG_REDUCE_COVER_CUH
#define KG_REDUCE_COVER_CUH

#include "reduce.cuh"

/* kg_red_args.vec of a NEST plan over covering vectors (runtime/reduce_plan.h
   defines the same). */
#define KG_RED_NEST_COVER 3

template <class Op, int UO> __device__ __forceinline__ void kg_red_nest_cover(const kg_red_args &A)
{
    static_assert(!Op::indexed, "covering vectors: value reductions only");
    typedef typename Op::in_t T;
    constexpr int V = Op::vec;
    typedef kgd_vec<T, V> VT;
    const T *in = (const T *)A.in;
    const int32_t L = (int32_t)A.run;
    const int64_t lo = A.inner_out, hi = A.inner_idx;
    const bool whole = A.cw == 1; /* vectors inside the run pushed without a test per element */
    /* 2-byte elements loaded as 32-bit words (W), split into elements only
       when pushed: vectors of 2-byte elements loaded as such made ptxas wait
       for each load before the next (as in kg_red_nest_v), and spill */
    constexpr bool W = sizeof(T) == 2;
    typedef typename std::conditional<W, kgd_vec<uint32_t, sizeof(VT) / 4>, VT>::type LT;
    auto run = [&](int64_t io, int64_t c0, int64_t c1, int t, int nt) {
        kg_racc<Op> a = kg_red_identity<Op>();
        int64_t i = c0 + t;
        if (i >= c1)
            return a;
        kg_red_pos<int32_t> p;
        kg_walk_at(A.walk, i, p);
        const T *base = in + io;
        for (; i < c1; i += UO * (int64_t)nt) {
            LT x[UO];
            int32_t d[UO];
#pragma unroll
            for (int j = 0; j < UO; j++) {
                d[j] = L; /* nothing pushed */
                if (i + j * (int64_t)nt < c1) {
                    const T *q = base + p.off;
                    const int32_t s = (int32_t)(((uintptr_t)q / sizeof(T)) & (V - 1));
                    const T *qa = q - s;
                    d[j] = p.x[0] * V - s;
                    if (d[j] < L) {
                        const int64_t e = qa - in;
                        if (e >= lo && e + (V - 1) <= hi) {
                            x[j] = *(const LT *)qa;
                        } else if constexpr (W) {
#pragma unroll
                            for (int k = 0; k < V / 2; k++)
                                x[j].v[k] = 0;
#pragma unroll
                            for (int k = 0; k < V; k++)
                                if ((uint32_t)(d[j] + k) < (uint32_t)L) {
                                    uint16_t b;
                                    memcpy(&b, qa + k, 2);
                                    x[j].v[k / 2] |= (uint32_t)b << (16 * (k & 1));
                                }
                        } else {
#pragma unroll
                            for (int k = 0; k < V; k++)
                                if ((uint32_t)(d[j] + k) < (uint32_t)L)
                                    x[j].v[k] = qa[k];
                        }
                    }
                    kg_walk_step(A.walk, p);
                }
            }
#pragma unroll
            for (int j = 0; j < UO; j++) {
                VT v;
                if constexpr (W) {
#pragma unroll
                    for (int k = 0; k < V; k++) {
                        const uint16_t b = (uint16_t)(x[j].v[k / 2] >> (16 * (k & 1)));
                        memcpy(&v.v[k], &b, 2);
                    }
                } else {
                    v = x[j];
                }
                if (whole && d[j] >= 0 && d[j] <= L - V) {
                    kg_red_push_vec<Op>(a, v, 0); /* every element in the run */
                } else {
#pragma unroll
                    for (int k = 0; k < V; k++)
                        if ((uint32_t)(d[j] + k) < (uint32_t)L)
                            a.v = Op::combine(a.v, Op::map(v.v[k]));
                }
            }
        }
        return a;
    };
    /* kg_red_units with the positions (A.tiles) as the span */
    const int g = A.group;
    const int64_t span = A.tiles;
    if (g == KG_RED_THREADS) {
        for (int64_t u = blockIdx.x; u < A.units; u += gridDim.x) {
            const int64_t row = u / A.splits, split = u - row * A.splits;
            int64_t io, oo, xo;
            kg_red_outer(A, row, io, oo, xo);
            const int64_t c0 = split * A.chunk;
            const int64_t c1 = c0 + A.chunk < span ? c0 + A.chunk : span;
            kg_racc<Op> a = run(io, c0, c1, (int)threadIdx.x, KG_RED_THREADS);
            a = kg_red_block<Op>(a);
            if (A.splits > 1 && !kg_red_split<Op>(A, row, split, a))
                continue;
            if (threadIdx.x == 0)
                kg_red_store<Op>(A, oo, xo, a);
        }
        return;
    }
    const int per_warp = 32 / g;
    const int lane = threadIdx.x & 31;
    const int64_t warp = ((int64_t)blockIdx.x * KG_RED_THREADS + threadIdx.x) >> 5;
    const int64_t nwarps = (int64_t)gridDim.x * (KG_RED_THREADS / 32);
    for (int64_t b = warp * per_warp; b < A.units; b += nwarps * per_warp) {
        const int64_t row = b + lane / g;
        const bool active = row < A.units;
        kg_racc<Op> a = kg_red_identity<Op>();
        int64_t io = 0, oo = 0, xo = 0;
        if (active) {
            kg_red_outer(A, row, io, oo, xo);
            a = run(io, 0, span, lane & (g - 1), g);
        }
        kg_red_warp<Op>(a, g);
        if (active && (lane & (g - 1)) == 0)
            kg_red_store<Op>(A, oo, xo, a);
    }
}

#endif
