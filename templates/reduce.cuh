/*
 * reduce.cuh - the loops every reduction kernel runs.
 *
 * A generated kernel is one of these loops instantiated with a functor Op
 * (templates/reduce.cu, from gen/catalogue.lua):
 *   Op::in_t, acc_t, out_t       storage in, accumulator, storage of values
 *   Op::identity() map(x) combine(a, b) finish(acc, n)   value reductions
 *   Op::better(a, b)             index reductions: a beats b; ties go to the
 *                                smaller index
 *   Op::vec, Op::cvec            elements per vector load in rows / columns
 *
 * Work is cut into units: one output (or, for COLS, one tile of columns of
 * one outer position) times one split of its reduced elements. A unit is
 * served by a group of `group` lanes (1..32, several units per warp for short
 * rows) or by the whole block (256 threads). When a unit's output is split
 * across blocks (splits > 1) each block writes its partial result to the
 * context's scratch and bumps the output's counter; the block that comes last
 * combines the partials in split order and writes the result, then sets the
 * counter back to zero. Every combination order is fixed by the launch shape,
 * so results are bitwise the same run to run (no floating-point atomics).
 */
#ifndef KG_REDUCE_CUH
#define KG_REDUCE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "kg_device.cuh"
#include "kg_reduce_params.h"

/* Split partials a thread of the last block loads at once when it combines
   them (kg_red_split, COLS). */
#define KG_RED_COMBINE 4

/* A partial result: the value and, for index reductions, its index. */
template <class Op> struct kg_racc {
    typename Op::acc_t v;
    int64_t i;
};

template <class Op> __device__ __forceinline__ kg_racc<Op> kg_red_identity()
{
    kg_racc<Op> a;
    a.v = Op::identity();
    a.i = INT64_MAX;
    return a;
}

/* a = a (+) b, where a holds earlier or lower-indexed elements than b, or
   any order for index reductions (ties resolve by index). Acc is a partial
   with a value v and an index i: kg_racc, or kg_rpk in the packed class. */
template <class Op, class Acc> __device__ __forceinline__ void kg_red_merge(Acc &a, const Acc &b)
{
    if constexpr (Op::indexed) {
        if (Op::better(b.v, a.v) || (!Op::better(a.v, b.v) && b.i < a.i))
            a = b;
    } else {
        a.v = Op::combine(a.v, b.v);
    }
}

/* Adds element x of reduced index i. A lane visits its elements in
   increasing index order, so an index reduction keeps the first of equals:
   it takes x only when x beats the current best, or nothing is held yet. */
template <class Op> __device__ __forceinline__ void kg_red_push(kg_racc<Op> &a, typename Op::in_t x, int64_t i)
{
    const typename Op::acc_t m = Op::map(x);
    if constexpr (Op::indexed) {
        if (Op::better(m, a.v) || a.i == INT64_MAX) {
            a.v = m;
            a.i = i;
        }
    } else {
        a.v = Op::combine(a.v, m);
    }
}

/* Adds the V elements of one vector, of reduced indices base .. base+V-1.
   An index reduction first finds the vector's best (first of equals), then
   merges it once: a 64-bit index per vector, not per element. */
template <class Op, typename VT>
__device__ __forceinline__ void kg_red_push_vec(kg_racc<Op> &a, const VT &x, int64_t base)
{
    constexpr int V = sizeof(VT) / sizeof(typename Op::in_t);
    if constexpr (Op::indexed) {
        typename Op::acc_t best = Op::map(x.v[0]);
        int be = 0;
#pragma unroll
        for (int e = 1; e < V; e++) {
            const typename Op::acc_t m = Op::map(x.v[e]);
            if (Op::better(m, best)) {
                best = m;
                be = e;
            }
        }
        if (Op::better(best, a.v) || a.i == INT64_MAX) {
            a.v = best;
            a.i = base + be;
        }
    } else {
#pragma unroll
        for (int e = 0; e < V; e++)
            a.v = Op::combine(a.v, Op::map(x.v[e]));
    }
}

/* Combines aligned groups of g lanes (g a power of two <= 32); every lane
   of the warp must call it. Lane 0 of each group ends with the group's
   result, lower lanes always on the left. */
template <class Op> __device__ __forceinline__ void kg_red_warp(kg_racc<Op> &a, int g)
{
    for (int m = g >> 1; m > 0; m >>= 1) {
        kg_racc<Op> b;
        b.v = kgd_shfl_xor(a.v, m);
        b.i = 0;
        if constexpr (Op::indexed)
            b.i = kgd_shfl_xor(a.i, m);
        if ((threadIdx.x & m) == 0)
            kg_red_merge<Op>(a, b);
        else {
            kg_racc<Op> t = b;
            kg_red_merge<Op>(t, a);
            a = t;
        }
    }
}

/* The whole block's result, valid in thread 0. Every thread must call it. */
template <class Op> __device__ __forceinline__ kg_racc<Op> kg_red_block(kg_racc<Op> a)
{
    constexpr int W = KG_RED_THREADS / 32;
    __shared__ typename Op::acc_t sv[W];
    __shared__ int64_t si[Op::indexed ? W : 1];
    kg_red_warp<Op>(a, 32);
    const int w = threadIdx.x >> 5, l = threadIdx.x & 31;
    __syncthreads(); /* a previous call's readers are done */
    if (l == 0) {
        sv[w] = a.v;
        if constexpr (Op::indexed)
            si[w] = a.i;
    }
    __syncthreads();
    if (w == 0) {
        a = kg_red_identity<Op>();
        if (l < W) {
            a.v = sv[l];
            if constexpr (Op::indexed)
                a.i = si[l];
        }
        kg_red_warp<Op>(a, W);
    }
    return a;
}

/* One digit of a mixed-radix index over D (sizes innermost first): returns
   digit d of r and leaves the rest in r (the last dim takes all of it);
   fast: 32-bit magic-number division (r below 2^31). */
__device__ __forceinline__ int64_t kg_red_digit(const kg_red_dims &D, int d, int32_t fast, int64_t &r)
{
    int64_t q, m;
    if (d == D.n - 1) {
        q = 0;
        m = r;
    } else if (fast) {
        const uint32_t r32 = (uint32_t)r;
        const uint32_t q32 = kgd_div_magic(r32, D.magic[d], D.shift[d]);
        q = q32;
        m = r32 - q32 * (uint32_t)D.size[d];
    } else {
        q = r / D.size[d];
        m = r - q * D.size[d];
    }
    r = q;
    return m;
}

/* Offsets of output o in the input, the values and the indices. */
__device__ __forceinline__ void kg_red_outer(const kg_red_args &A, int64_t o, int64_t &in_off, int64_t &out_off,
                                             int64_t &idx_off)
{
    const kg_red_dims &D = A.outer;
    in_off = out_off = idx_off = 0;
    int64_t r = o;
    /* rolled: once per unit, and the 64-bit division is large code */
#pragma unroll 1
    for (int d = 0; d < D.n; d++) {
        const int64_t m = kg_red_digit(D, d, A.fast, r);
        in_off += m * D.in[d];
        out_off += m * D.out[d];
        idx_off += m * D.idx[d];
    }
}

template <class Op>
__device__ __forceinline__ void kg_red_store(const kg_red_args &A, int64_t oo, int64_t xo, const kg_racc<Op> &a)
{
    if (A.out)
        ((typename Op::out_t *)A.out)[oo] = Op::finish(a.v, A.red);
    if constexpr (Op::indexed)
        if (A.idx)
            A.idx[xo] = a.i;
}

/* COLS over columns of several kept dims whose input strides chain from 1
   but whose results' do not (A.rdims, innermost first; tuning cols_chain):
   the values (idx false) or indices offset of column c < 2^31, its digits
   times their strides. Once per result, after its whole reduction. */
__device__ __forceinline__ int64_t kg_red_cols_chain_off(const kg_red_args &A, int64_t c, bool idx)
{
    int64_t off = 0;
    uint32_t r = (uint32_t)c;
#pragma unroll 1
    for (int d = 0; d < A.rdims.n; d++) {
        const uint32_t n = (uint32_t)A.rdims.size[d], q = r / n;
        off += (int64_t)(r - q * n) * (idx ? A.rdims.idx[d] : A.rdims.out[d]);
        r = q;
    }
    return off;
}

/* The V adjacent results of a lane at values offset oo, as one vector store
   (value reductions whose plan set args.vstore). */
template <class Op, int V>
__device__ __forceinline__ void kg_red_store_vec(const kg_red_args &A, int64_t oo, const kg_racc<Op> (&a)[V])
{
    typedef typename Op::out_t OT;
    kgd_vec<OT, V> y;
#pragma unroll
    for (int k = 0; k < V; k++)
        y.v[k] = Op::finish(a[k].v, A.red);
    *(kgd_vec<OT, V> *)((OT *)A.out + oo) = y;
}

/* A lane's place in a walk (kg_red_walk): the digits and the input offset,
   in I: int64_t, or int32_t where the planner found every digit and offset
   of the walk below 2^31 (A.deep: fewer instructions per load). */
template <typename I> struct kg_red_pos {
    I x[KG_RED_WALK_DIMS];
    I off;
};

/* The position of walk index r: divisions, once per unit and lane (32-bit
   where both operands fit). */
template <typename I> __device__ __forceinline__ void kg_walk_at(const kg_red_walk &W, int64_t r, kg_red_pos<I> &p)
{
    p.off = 0;
#pragma unroll
    for (int d = 0; d < KG_RED_WALK_DIMS; d++) {
        p.x[d] = 0;
        if (d < W.n) {
            int64_t q = 0, m = r;
            if (d < W.n - 1) {
                const int64_t s = W.size[d];
                if (((uint64_t)r | (uint64_t)s) >> 32 == 0) {
                    q = (int64_t)((uint32_t)r / (uint32_t)s);
                } else {
                    q = r / s;
                }
                m = r - q * s;
            }
            p.x[d] = (I)m;
            p.off += (I)m * (I)W.in[d];
            r = q;
        }
    }
}

/* Advances p by the walk's step: digit by digit, each carry at most one,
   no division. The last digit takes the rest and never wraps (a lane past
   the end never loads). */
template <typename I> __device__ __forceinline__ void kg_walk_step(const kg_red_walk &W, kg_red_pos<I> &p)
{
    bool c = false;
    p.x[0] += (I)W.step[0];
    p.off += (I)W.step[0] * (I)W.in[0];
    if (W.n > 1 && p.x[0] >= (I)W.size[0]) {
        p.x[0] -= (I)W.size[0];
        p.off -= (I)W.size[0] * (I)W.in[0];
        c = true;
    }
    if (!c && !W.hi)
        return;
#pragma unroll
    for (int d = 1; d < KG_RED_WALK_DIMS; d++) {
        if (d >= W.n)
            break;
        const I s = (I)W.step[d] + (c ? 1 : 0);
        p.x[d] += s;
        p.off += s * (I)W.in[d];
        c = d < W.n - 1 && p.x[d] >= (I)W.size[d];
        if (c) {
            p.x[d] -= (I)W.size[d];
            p.off -= (I)W.size[d] * (I)W.in[d];
        }
    }
}

/* Counts a split of output group grp as written (every thread that wrote
   one of its partials fenced after writing) and returns, in every thread,
   whether this block came last; the last block zeroes the counter again
   (the scratch's counters stay zeroed between launches) and fences before
   it reads the others' partials. */
__device__ __forceinline__ bool kg_red_arrive(const kg_red_args &A, int64_t grp)
{
    __shared__ int last;
    __syncthreads(); /* this split's partials are written; a previous call's readers are done */
    if (threadIdx.x == 0) {
        const unsigned prev = atomicAdd(&A.sema[grp], 1u);
        last = prev == (unsigned)A.splits - 1;
        if (last)
            A.sema[grp] = 0;
    }
    __syncthreads();
    if (last)
        __threadfence();
    return last;
}

/* Split bookkeeping for a block-wide unit: thread 0 holds this split's
   partial `a`. Returns true in the block that completes output `grp`, with
   the combined result in thread 0's `a`. */
template <class Op>
__device__ __forceinline__ bool kg_red_split(const kg_red_args &A, int64_t grp, int64_t split, kg_racc<Op> &a)
{
    typedef typename Op::acc_t AT;
    if (threadIdx.x == 0) {
        ((AT *)A.partial)[grp * A.splits + split] = a.v;
        if constexpr (Op::indexed)
            A.partial_idx[grp * A.splits + split] = a.i;
        __threadfence();
    }
    if (!kg_red_arrive(A, grp))
        return false;
    /* each thread merges partials s, s + 256, ... in that order, their
       loads issued KG_RED_COMBINE at a time (not one round trip each) */
    kg_racc<Op> t = kg_red_identity<Op>();
    for (int s0 = threadIdx.x; s0 < A.splits; s0 += KG_RED_COMBINE * KG_RED_THREADS) {
        kg_racc<Op> b[KG_RED_COMBINE];
#pragma unroll
        for (int j = 0; j < KG_RED_COMBINE; j++) {
            const int s = s0 + j * KG_RED_THREADS;
            b[j].v = Op::identity();
            b[j].i = INT64_MAX;
            if (s < A.splits) {
                b[j].v = ((volatile AT *)A.partial)[grp * A.splits + s];
                if constexpr (Op::indexed)
                    b[j].i = ((volatile int64_t *)A.partial_idx)[grp * A.splits + s];
            }
        }
#pragma unroll
        for (int j = 0; j < KG_RED_COMBINE; j++)
            if (s0 + j * KG_RED_THREADS < A.splits)
                kg_red_merge<Op>(t, b[j]);
    }
    a = kg_red_block<Op>(t);
    return true;
}

/* Runs `run(in_off, c0, c1, lane, lanes)` -> partial over every unit, in
   block mode (group == KG_RED_THREADS, with splits) or group mode. */
template <class Op, class Run> __device__ __forceinline__ void kg_red_units(const kg_red_args &A, Run run)
{
    const int g = A.group;
    if (g == KG_RED_THREADS) {
        for (int64_t u = blockIdx.x; u < A.units; u += gridDim.x) {
            const int64_t row = u / A.splits, split = u - row * A.splits;
            int64_t io, oo, xo;
            kg_red_outer(A, row, io, oo, xo);
            const int64_t c0 = split * A.chunk;
            const int64_t c1 = c0 + A.chunk < A.red ? c0 + A.chunk : A.red;
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
    for (int64_t base = warp * per_warp; base < A.units; base += nwarps * per_warp) {
        const int64_t row = base + lane / g;
        const bool active = row < A.units;
        kg_racc<Op> a = kg_red_identity<Op>();
        int64_t io = 0, oo = 0, xo = 0;
        if (active) {
            kg_red_outer(A, row, io, oo, xo);
            a = run(io, 0, A.red, lane & (g - 1), g);
        }
        kg_red_warp<Op>(a, g);
        if (active && (lane & (g - 1)) == 0)
            kg_red_store<Op>(A, oo, xo, a);
    }
}

/* Vector loads each lane keeps in flight in ROWS and COLS: eight 16-byte
   loads (128 bytes) per thread, so a few warps per scheduler cover the
   memory latency. */
#define KG_RED_UNROLL 8

/* Loads in flight per lane in the walking classes for loads of VT: eight
   (the configuration measured on the H200); Deep (A.deep, narrow loads):
   sixteen, with 32-bit walk arithmetic. */
template <typename VT, bool Deep> struct kg_red_walk_unroll {
    static constexpr int n = Deep && sizeof(VT) <= 4 ? 2 * KG_RED_UNROLL : KG_RED_UNROLL;
};

/* ROWS: lanes t of nt reduce elements [c0, c1) of a contiguous row: a scalar
   head up to 16-byte alignment, 16-byte vectors (eight in flight), a scalar
   tail. */
template <class Op>
__device__ __forceinline__ kg_racc<Op> kg_red_run_row(const typename Op::in_t *row, int64_t c0, int64_t c1, int t,
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

/* A packed partial: the value and its index within the row (32 bits). */
template <class Op> struct kg_rpk {
    typename Op::acc_t v;
    int i;
};

/* One butterfly step between lanes l and l ^ m over a lane's first C
   partials (C = 8, 4, 2): each lane sends the half it gives away and merges
   its partner's copy of the half it keeps, the lower lane keeping the first
   half (now a[0 .. C/2)), the upper lane the second (moved down to a[0 ..
   C/2)). C = 1: a plain step, both lanes end with the merged partial. The
   lower lane's partial is always on the left. */
template <class Op, int C> __device__ __forceinline__ void kg_rpk_halve(kg_rpk<Op> (&a)[KG_RED_PACK], int m)
{
    const bool upper = (threadIdx.x & m) != 0;
    constexpr int H = C > 1 ? C / 2 : 1, G = C > 1 ? C / 2 : 0;
#pragma unroll
    for (int k = 0; k < H; k++) {
        /* values, not references, in every select: a stays in registers */
        const kg_rpk<Op> lo = a[k], hi = a[k + G];
        kg_rpk<Op> s, r;
        s.v = upper ? lo.v : hi.v;
        s.i = upper ? lo.i : hi.i;
        r.v = kgd_shfl_xor(s.v, m);
        r.i = 0;
        if constexpr (Op::indexed)
            r.i = kgd_shfl_xor(s.i, m);
        kg_rpk<Op> left, right;
        left.v = upper ? r.v : lo.v;
        left.i = upper ? r.i : lo.i;
        right.v = upper ? hi.v : r.v;
        right.i = upper ? hi.i : r.i;
        kg_red_merge<Op>(left, right); /* left: lower lanes, lower indices */
        a[k] = left;
    }
}

/* PACKED: short dense rows of nv = A.group 16-byte
   vectors (8, 16 or 32). A warp's unit is KG_RED_PACK x 512 contiguous
   bytes, 32 / nv x KG_RED_PACK rows: load j of lane l is vector l % nv of
   row j x 32 / nv + l / nv, so each load of the warp is one contiguous 512
   bytes and every lane keeps KG_RED_PACK loads in flight. Each lane reduces
   its vectors (one per row), then the nv lanes of every row combine in a
   butterfly whose first three steps halve the rows a lane holds (8 -> 1):
   afterwards lane l holds row (l % nv) / (nv / 8) of its part of the unit,
   and the lanes of l % (nv / 8) == 0 store. The combination order is fixed,
   so results are the same run to run. */
/* PACKED's warp unit u (kg_red_rows_packed; also FLATW's packed rows,
   reduce_flatw.cuh): the U 16-byte loads of lane `lane`, load j the vector
   u U 32 + j 32 + lane of the nvec; past the end (the last unit) the last
   vector again, in rows never stored. */
template <typename VT, int U>
__device__ __forceinline__ void kg_red_packed_load(const VT *vin, int64_t u, int lane, int64_t nvec, VT (&x)[U])
{
    const int64_t v0 = u * (U * 32) + lane; /* this lane's vector of load 0 */
#pragma unroll
    for (int j = 0; j < U; j++)
        x[j] = vin[v0 + j * 32 < nvec ? v0 + j * 32 : nvec - 1];
}

template <class Op> __device__ __forceinline__ void kg_red_rows_packed(const kg_red_args &A)
{
    typedef typename Op::in_t T;
    constexpr int V = Op::vec, U = KG_RED_PACK;
    static_assert(U == 8, "three halving steps take 8 rows to 1");
    typedef kgd_vec<T, V> VT;
    const VT *vin = (const VT *)A.in;
    const int nv = A.group, rpl = 32 / nv; /* lanes per row, rows per load */
    const int lg = __ffs(nv) - 1;          /* log2(nv) */
    const int lane = threadIdx.x & 31, p = lane & (nv - 1);
    const int64_t nvec = A.n_out * nv;
    const int64_t warp = ((int64_t)blockIdx.x * KG_RED_THREADS + threadIdx.x) >> 5;
    const int64_t nwarps = (int64_t)gridDim.x * (KG_RED_THREADS / 32);
    for (int64_t u = warp; u < A.units; u += nwarps) {
        VT x[U];
        kg_red_packed_load(vin, u, lane, nvec, x);
        kg_rpk<Op> a[U];
#pragma unroll
        for (int j = 0; j < U; j++) {
            if constexpr (Op::indexed) {
                typename Op::acc_t best = Op::map(x[j].v[0]);
                int be = 0;
#pragma unroll
                for (int e = 1; e < V; e++) {
                    const typename Op::acc_t m = Op::map(x[j].v[e]);
                    if (Op::better(m, best)) {
                        best = m;
                        be = e;
                    }
                }
                a[j].v = best;
                a[j].i = p * V + be;
            } else {
                a[j].v = Op::identity();
                a[j].i = 0;
#pragma unroll
                for (int e = 0; e < V; e++)
                    a[j].v = Op::combine(a[j].v, Op::map(x[j].v[e]));
            }
        }
        kg_rpk_halve<Op, 8>(a, nv >> 1);
        kg_rpk_halve<Op, 4>(a, nv >> 2);
        kg_rpk_halve<Op, 2>(a, nv >> 3);
        for (int m = nv >> 4; m > 0; m >>= 1)
            kg_rpk_halve<Op, 1>(a, m);
        /* the nv / 8 lanes of p >> (lg - 3) == j hold the row of their load j */
        const int64_t row = u * (U * rpl) + (lane >> lg) + (int64_t)((p >> (lg - 3)) * rpl);
        if ((p & ((nv >> 3) - 1)) == 0 && row < A.n_out) {
            int64_t io, oo, xo;
            kg_red_outer(A, row, io, oo, xo);
            kg_racc<Op> r;
            r.v = a[0].v;
            r.i = a[0].i;
            kg_red_store<Op>(A, oo, xo, r);
        }
    }
}

template <class Op> __device__ __forceinline__ void kg_red_rows(const kg_red_args &A)
{
    const typename Op::in_t *in = (const typename Op::in_t *)A.in;
    kg_red_units<Op>(A, [&](int64_t io, int64_t c0, int64_t c1, int t, int nt) {
        return kg_red_run_row<Op>(in + io, c0, c1, t, nt);
    });
}

/* Offset of reduced element r (logical order, innermost dim first). */
template <typename I> __device__ __forceinline__ I kg_red_roff(const kg_red_dims &D, I r)
{
    I off = 0;
#pragma unroll 1
    for (int d = 0; d < D.n; d++) {
        I q, m;
        if (d == D.n - 1) {
            q = 0;
            m = r;
        } else if constexpr (sizeof(I) == 4) {
            q = kgd_div_magic(r, D.magic[d], D.shift[d]);
            m = r - q * (I)D.size[d];
        } else {
            q = r / D.size[d];
            m = r - q * D.size[d];
        }
        off += m * (I)D.in[d];
        r = q;
    }
    return off;
}

/* STRIDED: any reduced dims; I is the offset type (uint32_t where every
   reduced offset and index fits in 31 bits, else int64_t). */
template <class Op, typename I> __device__ __forceinline__ void kg_red_strided(const kg_red_args &A)
{
    typedef typename Op::in_t T;
    const T *in = (const T *)A.in;
    const kg_red_dims &R = A.rdims;
    kg_red_units<Op>(A, [&](int64_t io, int64_t c0, int64_t c1, int t, int nt) {
        kg_racc<Op> a = kg_red_identity<Op>();
        const T *p = in + io;
        int64_t r = c0 + t;
        /* four loads in flight; the 64-bit variant (huge tensors only) stays
           small, as its divisions are long code */
        constexpr int U = sizeof(I) == 4 ? 4 : 1;
        for (; r + (U - 1) * (int64_t)nt < c1; r += U * (int64_t)nt) {
            T x[U];
#pragma unroll
            for (int j = 0; j < U; j++)
                x[j] = p[kg_red_roff<I>(R, (I)(r + j * (int64_t)nt))];
#pragma unroll
            for (int j = 0; j < U; j++)
                kg_red_push<Op>(a, x[j], r + j * (int64_t)nt);
        }
        for (; U > 1 && r < c1; r += nt)
            kg_red_push<Op>(a, p[kg_red_roff<I>(R, (I)r)], r);
        return a;
    });
}

/* NEST: up to KG_RED_WALK_DIMS reduced dims, innermost first, walked
   without division. V > 1: the walk's positions are V-element vectors of a
   contiguous inner run (run % V == 0, every stride and the base aligned), so
   the lanes of a unit read consecutive 16-byte vectors. Eight loads in
   flight per lane, predicated at the end. In a unit of nt lanes, lane t
   takes positions t, t + nt, ... of [c0, c1) / V in increasing order. */
/* NEST with one lane per output (group 1) and M = 4 outputs per lane
   (A.cw == 4; 8 made the narrow kernels spill on sm_90): a lane takes outputs r, r + n, ..., r + (M-1) n (n: the
   grid's threads), and loads each walk position of all M together, so M
   loads are in flight even where an output has only a few elements (one
   lane per output keeps only its output's elements in flight: a memory
   latency per output). Every output's elements are still pushed in
   increasing position order, as with one output per lane: the same bits. */
template <class Op, int V, bool Deep, bool Words, int M, int UO = 0>
__device__ __forceinline__ void kg_red_nest_multi(const kg_red_args &A)
{
    typedef typename Op::in_t T;
    typedef kgd_vec<T, V> VT;
    typedef typename std::conditional<Words, kgd_vec<uint32_t, (sizeof(VT) + 3) / 4>, VT>::type LT;
    typedef typename std::conditional<Deep || (UO > 0), int32_t, int64_t>::type I;
    constexpr int U0 = (UO > 0 ? UO : kg_red_walk_unroll<VT, Deep>::n) / M;
    constexpr int U = U0 > 0 ? U0 : 1; /* walk positions per batch: U x M loads in flight */
    const T *in = (const T *)A.in;
    const int64_t n = (int64_t)gridDim.x * KG_RED_THREADS;
    const int64_t i1 = A.red / V;
    for (int64_t r0 = (int64_t)blockIdx.x * KG_RED_THREADS + threadIdx.x; r0 < A.units; r0 += n * M) {
        const T *base[M];
        kg_racc<Op> a[M];
#pragma unroll
        for (int m = 0; m < M; m++) {
            a[m] = kg_red_identity<Op>();
            base[m] = nullptr;
            const int64_t row = r0 + m * n;
            if (row < A.units) {
                int64_t io, oo, xo;
                kg_red_outer(A, row, io, oo, xo);
                base[m] = in + io;
            }
        }
        kg_red_pos<I> p;
        kg_walk_at(A.walk, 0, p);
        for (int64_t i = 0; i < i1; i += U) {
            LT x[U][M];
#pragma unroll
            for (int j = 0; j < U; j++)
                if (i + j < i1) {
#pragma unroll
                    for (int m = 0; m < M; m++)
                        if (base[m])
                            x[j][m] = *(const LT *)(base[m] + p.off);
                    kg_walk_step(A.walk, p);
                }
#pragma unroll
            for (int j = 0; j < U; j++)
                if (i + j < i1) {
#pragma unroll
                    for (int m = 0; m < M; m++)
                        if (base[m]) {
                            VT v;
                            if constexpr (Words) {
#pragma unroll
                                for (int k = 0; k < V; k++) {
                                    const uint16_t b = (uint16_t)(x[j][m].v[k / 2] >> (16 * (k & 1)));
                                    memcpy(&v.v[k], &b, 2);
                                }
                            } else {
                                v = x[j][m];
                            }
                            kg_red_push_vec<Op>(a[m], v, (i + j) * V);
                        }
                }
        }
#pragma unroll
        for (int m = 0; m < M; m++) {
            const int64_t row = r0 + m * n;
            if (row < A.units) {
                int64_t io, oo, xo;
                kg_red_outer(A, row, io, oo, xo);
                kg_red_store<Op>(A, oo, xo, a[m]);
            }
        }
    }
}

/* UO > 0 (kernel nesto): UO loads in flight per lane, 32-bit walk
   arithmetic (the planner takes it only where the walk fits). */
template <class Op, int V, bool Deep, bool Words = false, int UO = 0>
__device__ __forceinline__ void kg_red_nest_v(const kg_red_args &A)
{
    if (A.group == 1 && A.cw == 4) {
        kg_red_nest_multi<Op, V, Deep, Words, 4, UO>(A);
        return;
    }

    typedef typename Op::in_t T;
    typedef kgd_vec<T, V> VT;
    typedef typename std::conditional<Deep || (UO > 0), int32_t, int64_t>::type I;
    constexpr int U = UO > 0 ? UO : kg_red_walk_unroll<VT, Deep>::n;
    const T *in = (const T *)A.in;
    kg_red_units<Op>(A, [&](int64_t io, int64_t c0, int64_t c1, int t, int nt) {
        kg_racc<Op> a = kg_red_identity<Op>();
        const int64_t i1 = c1 / V;
        int64_t i = c0 / V + t;
        if (i >= i1)
            return a;
        kg_red_pos<I> p;
        kg_walk_at(A.walk, i, p);
        const T *base = in + io;
        if constexpr (Words) {
            /* 2-byte elements loaded as 32-bit words, split only when
               pushed: every load of the batch is issued first */
            static_assert(sizeof(T) == 2 && V % 2 == 0, "nest words: vectors of 2-byte elements");
            typedef kgd_vec<uint32_t, sizeof(VT) / 4> WT;
            for (; i < i1; i += U * (int64_t)nt) {
                WT x[U];
#pragma unroll
                for (int j = 0; j < U; j++)
                    if (i + j * (int64_t)nt < i1) {
                        x[j] = *(const WT *)(base + p.off);
                        kg_walk_step(A.walk, p);
                    }
#pragma unroll
                for (int j = 0; j < U; j++)
                    if (i + j * (int64_t)nt < i1) {
                        VT v;
#pragma unroll
                        for (int k = 0; k < V; k++) {
                            const uint16_t b = (uint16_t)(x[j].v[k / 2] >> (16 * (k & 1)));
                            memcpy(&v.v[k], &b, 2);
                        }
                        kg_red_push_vec<Op>(a, v, (i + j * (int64_t)nt) * V);
                    }
            }
        }
        for (; !Words && i < i1; i += U * (int64_t)nt) {
            VT x[U];
#pragma unroll
            for (int j = 0; j < U; j++)
                if (i + j * (int64_t)nt < i1) {
                    x[j] = *(const VT *)(base + p.off);
                    kg_walk_step(A.walk, p);
                }
#pragma unroll
            for (int j = 0; j < U; j++)
                if (i + j * (int64_t)nt < i1)
                    kg_red_push_vec<Op>(a, x[j], (i + j * (int64_t)nt) * V);
        }
        return a;
    });
}

template <class Op, int UO = 0> __device__ __forceinline__ void kg_red_nest(const kg_red_args &A)
{
    if (A.vec == 2) {
        if constexpr (sizeof(typename Op::in_t) == 2)
            kg_red_nest_v<Op, Op::vec, false, true, UO>(A);
    } else if (A.vec)
        kg_red_nest_v<Op, Op::vec, false, false, UO>(A);
    else
        kg_red_nest_v<Op, 1, false, false, UO>(A);
}

/* COLS with V columns per lane. Block = cw lanes across columns x ny =
   256/cw lanes down the reduced positions (cw a power of two up to 256); the
   reduced positions are a walk over up to KG_RED_WALK_DIMS dims (step ny), so
   any reduced dims under the contiguous kept run stream once, without
   division; the ny partials of a column are combined through shared memory
   (sv, si: KG_RED_THREADS * V entries) in a fixed tree. Strided: the V
   columns of a lane are cw apart (tile * cw * V + k * cw + tx), each loaded
   on its own, so a warp's load k is still one contiguous run and a lane
   keeps U x V loads in flight with one walk step per U; else V adjacent
   columns move as one vector. Words (2-byte elements): the vectors are
   loaded as 32-bit words and split into elements only when added, after
   the batch's U loads are issued (split at the load, ptxas makes each load
   wait for the one before). */
template <class Op, int V, bool Deep, bool Strided = false, bool Words = false, int UO = 0>
__device__ __forceinline__ void kg_red_cols_v(const kg_red_args &A, typename Op::acc_t *sv, int64_t *si)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    typedef kgd_vec<T, V> VT;
    typedef typename std::conditional<Deep || (UO > 0), int32_t, int64_t>::type I;
    const int cw = A.cw, ny = KG_RED_THREADS / cw;
    const int tx = threadIdx.x & (cw - 1), ty = threadIdx.x / cw;
    const int width = cw * V; /* columns per tile */

    /* Combines the ny partials of each column; ty == 0 ends with them. */
    auto tree = [&](kg_racc<Op>(&a)[V]) {
        if (ny == 1)
            return;      /* one lane down each column: nothing to combine */
        __syncthreads(); /* a previous tree's readers are done */
#pragma unroll
        for (int k = 0; k < V; k++) {
            sv[ty * width + tx * V + k] = a[k].v;
            if constexpr (Op::indexed)
                si[ty * width + tx * V + k] = a[k].i;
        }
        __syncthreads();
        for (int s = ny >> 1; s > 0; s >>= 1) {
            if (ty < s) {
#pragma unroll
                for (int k = 0; k < V; k++) {
                    kg_racc<Op> b;
                    b.v = sv[(ty + s) * width + tx * V + k];
                    b.i = 0;
                    if constexpr (Op::indexed)
                        b.i = si[(ty + s) * width + tx * V + k];
                    kg_red_merge<Op>(a[k], b);
                    sv[ty * width + tx * V + k] = a[k].v;
                    if constexpr (Op::indexed)
                        si[ty * width + tx * V + k] = a[k].i;
                }
            }
            __syncthreads();
        }
    };

    for (int64_t u = blockIdx.x; u < A.units; u += gridDim.x) {
        const int64_t grp = u / A.splits, split = u - grp * A.splits;
        const int64_t o = grp / A.tiles, tile = grp - o * A.tiles;
        int64_t io, oo, xo;
        kg_red_outer(A, o, io, oo, xo);
        /* the lane's first column; column k is col + k * cs */
        const int64_t col = Strided ? tile * width + tx : (tile * cw + tx) * V;
        const int64_t cs = Strided ? cw : 1;
        const bool active = col < A.inner;
        const int64_t r0 = split * A.chunk;
        const int64_t rows = V == 1 && A.run > 1 ? A.red / A.run : A.red;
        const int64_t r1 = r0 + A.chunk < rows ? r0 + A.chunk : rows;
        kg_racc<Op> a[V];
#pragma unroll
        for (int k = 0; k < V; k++)
            a[k] = kg_red_identity<Op>();
        int64_t r = r0 + ty;
        if constexpr (V == 1) {
            if (A.run > 1) {
                /* a short contiguous run per column and row: the lane reads
                   its column's run (neighbouring lanes' runs are adjacent),
                   row after row, U loads in flight across runs and rows */
                const int64_t run = A.run;
                if (active && r < r1) {
                    const T *p = (const T *)A.in + io + col * run;
                    kg_red_pos<I> w;
                    kg_walk_at(A.walk, r, w);
                    /* index reductions carry an index per load: fewer */
                    constexpr int U = UO > 0 ? UO : Op::indexed ? KG_RED_UNROLL : kg_red_walk_unroll<VT, Deep>::n;
                    int64_t e = 0;
                    while (r < r1) {
                        T x[U];
                        int64_t ix[U];
                        bool ok[U];
#pragma unroll
                        for (int j = 0; j < U; j++) {
                            ok[j] = r < r1;
                            if (ok[j]) {
                                x[j] = p[w.off + e];
                                ix[j] = r * run + e;
                                if (++e == run) {
                                    e = 0;
                                    r += ny;
                                    kg_walk_step(A.walk, w);
                                }
                            }
                        }
#pragma unroll
                        for (int j = 0; j < U; j++)
                            if (ok[j])
                                kg_red_push<Op>(a[0], x[j], ix[j]);
                    }
                }
                r = r1; /* done: the vector path below is skipped */
            }
        }
        if (active && r < r1) {
            const T *p = (const T *)A.in + io + col;
            /* strided: a lane's columns past the last one load the last
               column again (in bounds; never stored) */
            int dk[V];
#pragma unroll
            for (int k = 0; k < V; k++)
                dk[k] = Strided ? (int)((col + k * cs < A.inner ? col + k * cs : A.inner - 1) - col) : 0;
            kg_red_pos<I> w;
            kg_walk_at(A.walk, r, w);
            /* U loads in flight, predicated at the end: a short reduced walk
               (a few rows) still has all its loads in flight at once */
            constexpr int U = UO > 0 ? UO : kg_red_walk_unroll<VT, Deep>::n;
            if constexpr (Words) {
                /* 2-byte elements loaded as 32-bit words, split only when
                   pushed: every load of the batch is issued first */
                static_assert(sizeof(T) == 2 && V % 2 == 0 && !Strided, "WIDE32: vectors of 2-byte elements");
                typedef kgd_vec<uint32_t, V / 2> WT;
                for (; r < r1; r += U * (int64_t)ny) {
                    WT x[U];
#pragma unroll
                    for (int j = 0; j < U; j++)
                        if (r + j * (int64_t)ny < r1) {
                            x[j] = *(const WT *)(p + w.off);
                            kg_walk_step(A.walk, w);
                        }
#pragma unroll
                    for (int j = 0; j < U; j++)
                        if (r + j * (int64_t)ny < r1)
#pragma unroll
                            for (int k = 0; k < V; k++) {
                                const uint16_t b = (uint16_t)(x[j].v[k / 2] >> (16 * (k & 1)));
                                T e;
                                memcpy(&e, &b, 2);
                                kg_red_push<Op>(a[k], e, r + j * (int64_t)ny);
                            }
                }
            }
            for (; !Words && r < r1; r += U * (int64_t)ny) {
                VT x[U];
#pragma unroll
                for (int j = 0; j < U; j++)
                    if (r + j * (int64_t)ny < r1) {
                        if constexpr (Strided) {
#pragma unroll
                            for (int k = 0; k < V; k++)
                                x[j].v[k] = p[w.off + dk[k]];
                        } else {
                            x[j] = *(const VT *)(p + w.off);
                        }
                        kg_walk_step(A.walk, w);
                    }
#pragma unroll
                for (int j = 0; j < U; j++)
                    if (r + j * (int64_t)ny < r1)
#pragma unroll
                        for (int k = 0; k < V; k++)
                            kg_red_push<Op>(a[k], x[j].v[k], r + j * (int64_t)ny);
            }
        }
        tree(a);
        if (A.splits > 1) {
            const int64_t base = (grp * A.splits + split) * width + tx * V;
            if (ty == 0 && active) {
#pragma unroll
                for (int k = 0; k < V; k++) {
                    ((AT *)A.partial)[base + k] = a[k].v;
                    if constexpr (Op::indexed)
                        A.partial_idx[base + k] = a[k].i;
                }
                __threadfence();
            }
            if (!kg_red_arrive(A, grp))
                continue;
#pragma unroll
            for (int k = 0; k < V; k++)
                a[k] = kg_red_identity<Op>();
            /* partials s, s + ny, ... in that order, two splits' loads at once */
            if (active)
                for (int64_t s = ty; s < A.splits; s += 2 * ny) {
                    kg_racc<Op> b[2][V];
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const int64_t at = (grp * A.splits + s + h * ny) * width + tx * V;
#pragma unroll
                        for (int k = 0; k < V; k++) {
                            b[h][k].v = Op::identity();
                            b[h][k].i = INT64_MAX;
                            if (s + h * ny < A.splits) {
                                b[h][k].v = ((volatile AT *)A.partial)[at + k];
                                if constexpr (Op::indexed)
                                    b[h][k].i = ((volatile int64_t *)A.partial_idx)[at + k];
                            }
                        }
                    }
#pragma unroll
                    for (int h = 0; h < 2; h++)
                        if (s + h * ny < A.splits)
#pragma unroll
                            for (int k = 0; k < V; k++)
                                kg_red_merge<Op>(a[k], b[h][k]);
                }
            tree(a);
        }
        if (ty == 0 && active) {
            if constexpr (!Strided && V > 1 && !Op::indexed) {
                if (A.vstore) {
                    kg_red_store_vec<Op, V>(A, oo + col, a);
                    continue;
                }
            }
#pragma unroll
            for (int k = 0; k < V; k++) {
                const int64_t c = col + k * cs;
                if (c < A.inner) {
                    if (A.rdims.n > 0) /* columns over chained kept dims (cols_chain) */
                        kg_red_store<Op>(A, oo + kg_red_cols_chain_off(A, c, false),
                                         xo + kg_red_cols_chain_off(A, c, true), a[k]);
                    else
                        kg_red_store<Op>(A, oo + c * A.inner_out, xo + c * A.inner_idx, a[k]);
                }
            }
        }
    }
}

/* COLSQ: COLS over two column tiles per unit (args.group 2; value
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

/* Columns a COLS plan's lanes take (kg_red_args.vec): the widest of its
   modes sizes the shared memory of the tree. */
template <class Op> struct kg_red_cols_width {
    static constexpr int wide = sizeof(typename Op::in_t) == 2 ? 16 / sizeof(typename Op::in_t) : Op::cvec;
    static constexpr int n = wide > KG_RED_SCOLS ? wide : KG_RED_SCOLS;
};

/* The narrow walk of COLS (kernel colsn; UO > 0: colsno, UO loads in
   flight). */
template <class Op, int UO = 0> __device__ __forceinline__ void kg_red_cols_narrow(const kg_red_args &A)
{
    __shared__ typename Op::acc_t sv[KG_RED_THREADS];
    __shared__ int64_t si[Op::indexed ? KG_RED_THREADS : 1];
    kg_red_cols_v<Op, 1, true, false, false, UO>(A, sv, si);
}

/* TILE: short contiguous reduced runs of L = A.run elements (2 <= L) under a
   dense kept dim of A.inner rows (row stride L): the input holds [rows, L]
   blocks, further reduced dims are walked outside them (A.walk: one position
   per block) and further kept dims are outer positions. A unit is one tile of
   at most A.tile_rows rows of one outer position and one split of the walk.
   Per walk position the block loads the tile's rows x L contiguous elements
   in aligned 16-byte vectors (a first or last vector that reaches past them
   element by element), stages them in shared memory and reduces whole rows:
   groups of g = A.group lanes (a power of two up to 32; the planner's
   tile_banks picks one whose lanes read distinct banks) take rows g-lane
   strided and combine with shuffles. The loads of the next walk position are
   in flight while this one is reduced. Every combination order is fixed. */
template <class Op> __device__ __forceinline__ void kg_red_tile(const kg_red_args &A)
{
    typedef typename Op::in_t T;
    constexpr int V = Op::vec;
    typedef kgd_vec<T, V> VT;
    constexpr int E = KG_RED_TILE_ELEMS;
    constexpr int NV = E / (KG_RED_THREADS * V) + 1; /* vectors per thread: a tile and the phase */
    constexpr int MR = E / (2 * KG_RED_THREADS);     /* passes of rows per tile (the planner: rows <= MR x 256 / g) */
    __shared__ VT sm[E / V + 1];
    typedef typename Op::acc_t AT;
    const T *st = (const T *)sm;
    const int L = (int)A.run, g = A.group, gpp = KG_RED_THREADS / g; /* rows per pass */
    const int t = threadIdx.x, gi = t / g, gl = t & (g - 1);
    const int64_t npos = A.red / L;
    for (int64_t u = blockIdx.x; u < A.units; u += gridDim.x) {
        const int64_t grp = u / A.splits, split = u - grp * A.splits;
        const int64_t o = grp / A.tiles, tile = grp - o * A.tiles;
        int64_t io, oo, xo;
        kg_red_outer(A, o, io, oo, xo);
        const int64_t row0 = tile * A.tile_rows;
        const int rows = (int)(A.inner - row0 < A.tile_rows ? A.inner - row0 : A.tile_rows);
        const int n = rows * L;
        const T *base = (const T *)A.in + io + row0 * L;
        const int64_t w0 = split * A.chunk, w1 = w0 + A.chunk < npos ? w0 + A.chunk : npos;
        kg_racc<Op> acc[MR];
#pragma unroll
        for (int j = 0; j < MR; j++)
            acc[j] = kg_red_identity<Op>();
        kg_red_pos<int64_t> wp;
        kg_walk_at(A.walk, w0, wp);
        VT x[NV];
        int phase = 0, nv = 0;
        /* issues the loads of the tile at walk offset off: the aligned
           16-byte vectors that hold its n elements, the first and the last
           element by element where they reach past them (no byte outside
           the tensor is read; the vector's other elements are never used) */
        auto load = [&](int64_t off) {
            const T *p = base + off;
            phase = (int)(((uintptr_t)p & 15) / sizeof(T));
            const VT *pa = (const VT *)(p - phase);
            nv = (phase + n + V - 1) / V;
            const bool ragged = phase > 0 || (phase + n) % V != 0;
#pragma unroll
            for (int j = 0; j < NV; j++) {
                const int v = t + j * KG_RED_THREADS;
                if (v < nv) {
                    if (ragged && (v == 0 || v == nv - 1)) {
#pragma unroll
                        for (int e = 0; e < V; e++) {
                            const int k = v * V + e - phase;
                            if (k >= 0 && k < n)
                                x[j].v[e] = p[k];
                        }
                    } else {
                        x[j] = pa[v];
                    }
                }
            }
        };
        if (w0 < w1)
            load(wp.off);
        for (int64_t w = w0; w < w1; w++) {
            __syncthreads(); /* the previous position's readers are done */
#pragma unroll
            for (int j = 0; j < NV; j++)
                if (t + j * KG_RED_THREADS < nv)
                    sm[t + j * KG_RED_THREADS] = x[j];
            const int ph = phase;
            __syncthreads();
            if (w + 1 < w1) {
                kg_walk_step(A.walk, wp);
                load(wp.off);
            }
#pragma unroll
            for (int j = 0; j < MR; j++) {
                const int r = gi + j * gpp;
                if (j * gpp >= rows)
                    break; /* uniform across the block */
                kg_racc<Op> a = kg_red_identity<Op>();
                if (r < rows) {
                    const T *q = st + ph + r * L;
                    for (int e = gl; e < L; e += g)
                        kg_red_push<Op>(a, q[e], w * L + e);
                }
                kg_red_warp<Op>(a, g);
                kg_red_merge<Op>(acc[j], a); /* meaningful in lane 0 of each group */
            }
        }
        if (A.splits > 1) {
            const int64_t at = (grp * A.splits + split) * A.tile_rows;
#pragma unroll
            for (int j = 0; j < MR; j++) {
                const int r = gi + j * gpp;
                if (gl == 0 && r < rows) {
                    ((AT *)A.partial)[at + r] = acc[j].v;
                    if constexpr (Op::indexed)
                        A.partial_idx[at + r] = acc[j].i;
                }
            }
            __threadfence();
            if (!kg_red_arrive(A, grp))
                continue;
#pragma unroll
            for (int j = 0; j < MR; j++) {
                const int r = gi + j * gpp;
                acc[j] = kg_red_identity<Op>();
                if (gl == 0 && r < rows)
                    for (int64_t s = 0; s < A.splits; s++) {
                        const int64_t at2 = (grp * A.splits + s) * A.tile_rows + r;
                        kg_racc<Op> b;
                        b.v = ((volatile AT *)A.partial)[at2];
                        b.i = 0;
                        if constexpr (Op::indexed)
                            b.i = ((volatile int64_t *)A.partial_idx)[at2];
                        kg_red_merge<Op>(acc[j], b);
                    }
            }
        }
#pragma unroll
        for (int j = 0; j < MR; j++) {
            const int r = gi + j * gpp;
            if (gl == 0 && r < rows)
                kg_red_store<Op>(A, oo + (row0 + r) * A.inner_out, xo + (row0 + r) * A.inner_idx, acc[j]);
        }
    }
}

/* Combines ns slots of wd entries of sv (sv[s * wd + i]) into slot 0 in a
   fixed tree: the upper half of the slots into the lower, until one is
   left. Every thread calls it after a barrier that follows the writes to
   sv; it ends with a barrier (when it combines anything). */
template <class Op> __device__ __forceinline__ void kg_red_fold(typename Op::acc_t *sv, int ns, int wd)
{
    while (ns > 1) {
        const int h = ns >> 1, up = ns - h;
        for (int i = threadIdx.x; i < h * wd; i += KG_RED_THREADS)
            sv[i] = Op::combine(sv[i], sv[i + up * wd]);
        __syncthreads();
        ns = up;
    }
}

/* FLAT (value reductions): the reduced dim right outside K =
   A.inner contiguous columns, so a unit's rows [r0, r1) of one outer
   position are one contiguous run of (r1 - r0) x K elements. The block
   streams it as 16-byte vectors from the aligned address at or before its
   start (h elements before it): lane t of the NT = 256 / G x G lanes that
   take part (G = A.cw = K / gcd(K, V), so G x V elements are whole rows)
   takes vectors t, t + NT, ..., KG_RED_FLAT_UNROLL loads in flight, and
   element e of every one of them lies in column (t x V + e - h) mod K: each
   lane keeps V accumulators and does no index arithmetic per element. The
   first and last vectors, where they reach past the run, are read element
   by element (no byte outside it). Then the lanes' accumulators go to
   shared memory, the NT / G periods fold into one (kg_red_fold) and column
   c combines the period's positions (c + h) mod K + m x K, m in order. With
   splits, the partials of a unit's columns go to the scratch and the last
   block folds them, up to sv's capacity of them at a time, in split order.
   Every combination order is fixed by the plan. */
template <class Op, int CAP> __device__ __forceinline__ void kg_red_flat_v(const kg_red_args &A, typename Op::acc_t *sv)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    constexpr int V = Op::vec, U = sizeof(T) == 2 ? KG_RED_FLAT_UNROLL * 3 / 4 : KG_RED_FLAT_UNROLL;
    constexpr int NC = KG_RED_FLAT_COLS / KG_RED_THREADS;
    typedef kgd_vec<T, V> VT;
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
                        for (int e = 0; e < V; e++)
                            acc[e] = Op::combine(acc[e], Op::map(x[k].v[e]));
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

/* FLAT: the kernel (the planner takes it for value reductions of elements
   of 2 to 8 bytes; other ops and dtypes get an empty one). */
template <class Op> __device__ __forceinline__ void kg_red_flat(const kg_red_args &A)
{
    constexpr int N = Op::indexed || Op::vec > 8 ? 1 : KG_RED_THREADS * Op::vec;
    __shared__ typename Op::acc_t sv[N];
    if constexpr (N > 1)
        kg_red_flat_v<Op, N>(A, sv);
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

/* COLS by kg_red_args.vec (kg_red_cols_mode): one column per lane, Op::cvec
   adjacent columns as a vector, 16-byte vectors of 2-byte elements, or
   KG_RED_SCOLS columns cw apart, one load each. UO > 0 (kernels colso,
   colsp): UO loads in flight per lane, 32-bit walk arithmetic (the planner
   takes them only where the walk fits). */
template <class Op, int UO = 0> __device__ __forceinline__ void kg_red_cols(const kg_red_args &A)
{
    constexpr int W = kg_red_cols_width<Op>::n;
    __shared__ typename Op::acc_t sv[KG_RED_THREADS * W];
    __shared__ int64_t si[Op::indexed ? KG_RED_THREADS * W : 1];
    if (A.vec == KG_RED_CV_VEC) {
        kg_red_cols_v<Op, Op::cvec, false, false, false, UO>(A, sv, si);
    } else if (A.vec == KG_RED_CV_STRIDED) {
        kg_red_cols_v<Op, KG_RED_SCOLS, false, true, false, UO>(A, sv, si);
    } else if (A.vec == KG_RED_CV_WIDE) {
        if constexpr (sizeof(typename Op::in_t) == 2)
            kg_red_cols_v<Op, kg_red_cols_width<Op>::wide, false, false, false, UO>(A, sv, si);
    } else if (A.vec == KG_RED_CV_WIDE32) {
        if constexpr (sizeof(typename Op::in_t) == 2)
            kg_red_cols_v<Op, kg_red_cols_width<Op>::wide, false, false, true, UO>(A, sv, si);
    } else if (A.vec == KG_RED_CV_VEC32) {
        if constexpr (sizeof(typename Op::in_t) == 2 && Op::cvec % 2 == 0)
            kg_red_cols_v<Op, Op::cvec, false, false, true, UO>(A, sv, si);
    } else {
        kg_red_cols_v<Op, 1, false, false, false, UO>(A, sv, si);
    }
}

#endif
