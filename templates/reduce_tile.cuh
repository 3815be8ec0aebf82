/*
 * reduce_tile.cuh - TILE: short contiguous reduced runs under a dense kept
 * dim, tiles of whole rows staged through shared memory (kernel tile;
 * templates/reduce.cu includes this file in the tile modules alone).
 *
 * The input holds [rows, L] blocks of L = A.run elements (2 <= L) under a
 * dense kept dim of A.inner rows (row stride L); further reduced dims are
 * walked outside them (A.walk: one position per block) and further kept dims
 * are outer positions. A unit is one tile of at most A.tile_rows rows of one
 * outer position and one split of the walk. Per walk position the block
 * loads the tile's rows x L contiguous elements in aligned 16-byte vectors
 * (a first or last vector that reaches past them element by element), stages
 * them in shared memory and reduces whole rows: groups of g = A.group lanes
 * (a power of two up to 32; the planner's tile_banks picks one whose lanes
 * read distinct banks) take rows g-lane strided and combine with shuffles.
 * The loads of the next walk position are in flight while this one is
 * reduced, and after a unit's last position those of the block's next
 * unit's first position (a unit of one position, the rows of a tensor with
 * no reduced dim outside them, otherwise waits a whole memory latency per
 * tile with nothing in flight). Every combination order is fixed.
 */
#ifndef KG_REDUCE_TILE_CUH
#define KG_REDUCE_TILE_CUH

#include "reduce.cuh"

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
    /* TEMPORARY (s17r2 same-process comparison): args.vstore 0 keeps the
       tile kernel of before, each unit's first loads issued at its start */
    const bool across = A.vstore != 0;
    /* a unit: its output group and split, the values' and indices' offsets
       of its outer position, its rows, their first element and walk range */
    struct unit {
        int64_t grp, split, oo, xo, row0, w0, w1;
        int rows, n;
        const T *base;
    };
    auto setup = [&](int64_t u, unit &U) {
        U.grp = u / A.splits;
        U.split = u - U.grp * A.splits;
        const int64_t o = U.grp / A.tiles, tile = U.grp - o * A.tiles;
        int64_t io;
        kg_red_outer(A, o, io, U.oo, U.xo);
        U.row0 = tile * A.tile_rows;
        U.rows = (int)(A.inner - U.row0 < A.tile_rows ? A.inner - U.row0 : A.tile_rows);
        U.n = U.rows * L;
        U.base = (const T *)A.in + io + U.row0 * L;
        U.w0 = U.split * A.chunk;
        U.w1 = U.w0 + A.chunk < npos ? U.w0 + A.chunk : npos;
    };
    VT x[NV];
    int phase = 0, nv = 0;
    /* issues the loads of n elements at p: the aligned 16-byte vectors that
       hold them, the first and the last element by element where they reach
       past them (no byte outside the tensor is read; the vector's other
       elements are never used) */
    auto load = [&](const T *p, int n) {
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
    unit cur, nxt;
    kg_red_pos<int64_t> wp, wn;
    bool loaded = false; /* cur's first position is in x */
    for (int64_t u = blockIdx.x; u < A.units; u += gridDim.x) {
        if (!loaded) {
            setup(u, cur);
            kg_walk_at(A.walk, cur.w0, wp);
            if (cur.w0 < cur.w1)
                load(cur.base + wp.off, cur.n);
        }
        loaded = false;
        const int rows = cur.rows;
        kg_racc<Op> acc[MR];
#pragma unroll
        for (int j = 0; j < MR; j++)
            acc[j] = kg_red_identity<Op>();
        for (int64_t w = cur.w0; w < cur.w1; w++) {
            __syncthreads(); /* the previous position's readers are done */
#pragma unroll
            for (int j = 0; j < NV; j++)
                if (t + j * KG_RED_THREADS < nv)
                    sm[t + j * KG_RED_THREADS] = x[j];
            const int ph = phase;
            __syncthreads();
            if (w + 1 < cur.w1) {
                kg_walk_step(A.walk, wp);
                load(cur.base + wp.off, cur.n);
            } else if (across && u + gridDim.x < A.units) {
                /* the block's next unit: its first position's loads */
                setup(u + gridDim.x, nxt);
                kg_walk_at(A.walk, nxt.w0, wn);
                if (nxt.w0 < nxt.w1)
                    load(nxt.base + wn.off, nxt.n);
                loaded = true;
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
        const unit me = cur;
        if (loaded) {
            cur = nxt;
            wp = wn;
        }
        if (A.splits > 1) {
            const int64_t at = (me.grp * A.splits + me.split) * A.tile_rows;
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
            if (!kg_red_arrive(A, me.grp))
                continue;
#pragma unroll
            for (int j = 0; j < MR; j++) {
                const int r = gi + j * gpp;
                acc[j] = kg_red_identity<Op>();
                if (gl == 0 && r < rows)
                    for (int64_t s = 0; s < A.splits; s++) {
                        const int64_t at2 = (me.grp * A.splits + s) * A.tile_rows + r;
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
                kg_red_store<Op>(A, me.oo + (me.row0 + r) * A.inner_out, me.xo + (me.row0 + r) * A.inner_idx, acc[j]);
        }
    }
}

#endif
