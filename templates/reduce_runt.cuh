/*
 * reduce_runt.cuh - RUNT: COLS over short reduced runs of any length, the
 * rows streamed in tiles of whole vectors (tuning run_tiles; class
 * KG_RED_RUNT, a module group of its own, so no other kernel changes).
 *
 * The input holds rows of K = A.inner columns x L = A.run contiguous
 * elements (a reduced run under each kept column, the columns right outside
 * it), further reduced dims walked outside (A.walk counts rows), further
 * kept dims outer positions. The scalar run path of kg_red_cols_v reads one
 * element per load, L elements apart across a warp (a warp's load of 2-byte
 * elements touches ~L 128-byte lines for 64 useful bytes); the run kernel
 * of reduce_cols_runs.cuh needs a run dividing the vector. Here a tile is T
 * = A.tile_rows columns, T x L elements of a row in cw = A.cw vectors of N
 * elements (A.vec bytes: 2, 4, 8 or 16; T L a multiple of N, the planner
 * checks, and every row and start whole aligned vectors), one lane per
 * vector: cw lanes across (any count up to KG_RED_THREADS, not a power of
 * two), ny = KG_RED_THREADS / cw lanes down the rows (the block's last
 * KG_RED_THREADS - cw ny lanes idle). Each lane keeps an accumulator per
 * element of its vector down the rows (a warp's load: one contiguous run of
 * 32 vectors where cw >= 32); at the end the ny slots of the tile fold in a
 * fixed tree (kg_red_fold) and each column combines its L positions in
 * element order. With splits, each split's column partials go to the
 * scratch and the last block combines them in split order. Value
 * reductions of 2- to 8-byte elements; every order fixed by the plan.
 */
#ifndef KG_REDUCE_RUNT_CUH
#define KG_REDUCE_RUNT_CUH

#include "reduce.cuh"

/* VB bytes per load (N = VB / sizeof(T) elements, loaded as 32-bit words
   and split when added, after the batch's U loads are issued), U rows in
   flight, the walk in 32-bit arithmetic (the planner checks it fits). */
template <class Op, int VB, int U> __device__ __forceinline__ void kg_red_runt_v(const kg_red_args &A, typename Op::acc_t *sv)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    constexpr int N = VB / (int)sizeof(T);
    static_assert(N >= 1 && (VB % 4 == 0 || VB == 2) && N * sizeof(T) == VB, "whole words of whole elements");
    /* 32-bit words, or one 2-byte element (VB 2) */
    typedef typename std::conditional<(VB >= 4), kgd_vec<uint32_t, (VB >= 4 ? VB / 4 : 1)>, kgd_vec<uint16_t, 1>>::type
        WT;
    const int cw = A.cw, ny = KG_RED_THREADS / cw;
    const int t = threadIdx.x, tx = t % cw, ty = t / cw; /* ty == ny: an idle lane */
    const int W = cw * N;                                /* elements of a whole tile */
    const int L = (int)A.run, TC = (int)A.tile_rows;     /* TC x L == W (the planner's tiles) */
    const int64_t rowlen = A.inner * A.run, rows = A.red / A.run;
    for (int64_t u = blockIdx.x; u < A.units; u += gridDim.x) {
        const int64_t grp = u / A.splits, split = u - grp * A.splits;
        const int64_t o = grp / A.tiles, tile = grp - o * A.tiles;
        int64_t io, oo, xo;
        kg_red_outer(A, o, io, oo, xo);
        const int64_t e0 = tile * W + (int64_t)tx * N; /* the lane's first element of a row */
        /* rows of whole vectors: a vector starting inside the row ends inside it */
        const bool active = ty < ny && e0 < rowlen;
        const int64_t r0 = split * A.chunk, r1 = r0 + A.chunk < rows ? r0 + A.chunk : rows;
        AT acc[N];
#pragma unroll
        for (int k = 0; k < N; k++)
            acc[k] = Op::identity();
        int64_t r = r0 + ty;
        if (active && r < r1) {
            const T *p = (const T *)A.in + io + e0;
            kg_red_pos<int32_t> w;
            kg_walk_at(A.walk, r, w);
            for (; r < r1; r += U * (int64_t)ny) {
                /* the batch's rows: U, or what is left of the split */
                const int64_t left = r1 - r;
                const int m = left >= U * (int64_t)ny ? U : (int)((left + ny - 1) / ny);
                WT x[U];
#pragma unroll
                for (int j = 0; j < U; j++)
                    if (j < m) {
                        x[j] = *(const WT *)(p + w.off);
                        kg_walk_step(A.walk, w);
                    }
#pragma unroll
                for (int j = 0; j < U; j++)
                    if (j < m)
#pragma unroll
                        for (int k = 0; k < N; k++) {
                            T e;
                            memcpy(&e, (const char *)x[j].v + k * sizeof(T), sizeof(T));
                            acc[k] = Op::combine(acc[k], Op::map(e));
                        }
            }
        }
        __syncthreads(); /* the previous unit's readers of sv are done */
        if (ty < ny)
#pragma unroll
            for (int k = 0; k < N; k++)
                sv[ty * W + tx * N + k] = acc[k];
        __syncthreads();
        kg_red_fold<Op>(sv, ny, W); /* slot 0: the tile's element sums down this split's rows */
        /* the tile's columns: TC, or what is left of the row */
        const int64_t c0 = tile * TC;
        const int nc = (int)(A.inner - c0 < TC ? A.inner - c0 : TC);
        if (A.splits > 1) {
            const int64_t at = grp * A.splits * TC;
            for (int c = t; c < nc; c += KG_RED_THREADS) {
                AT v = Op::identity();
                for (int e = 0; e < L; e++)
                    v = Op::combine(v, sv[c * L + e]);
                ((AT *)A.partial)[at + split * TC + c] = v;
            }
            __threadfence();
            if (!kg_red_arrive(A, grp))
                continue;
            for (int c = t; c < nc; c += KG_RED_THREADS) {
                kg_racc<Op> a;
                a.v = Op::identity();
                a.i = 0;
                for (int64_t s = 0; s < A.splits; s++)
                    a.v = Op::combine(a.v, ((volatile AT *)A.partial)[at + s * TC + c]);
                kg_red_store<Op>(A, oo + (c0 + c) * A.inner_out, xo, a);
            }
            continue;
        }
        for (int c = t; c < nc; c += KG_RED_THREADS) {
            kg_racc<Op> a;
            a.v = Op::identity();
            a.i = 0;
            for (int e = 0; e < L; e++)
                a.v = Op::combine(a.v, sv[c * L + e]);
            kg_red_store<Op>(A, oo + (c0 + c) * A.inner_out, xo, a);
        }
    }
}

/* The kernel by A.vec (bytes per load): 16 and 8 bytes for elements of 2 to
   8 bytes, 4 for 2- and 4-byte elements, 2 (one element a lane: rows and
   starts at any 2-byte place, a warp's load still 64 contiguous bytes) for
   2-byte elements, KG_RED_RUNT_BYTES in flight per lane (of one element: as
   many loads as of words, half the bytes); value reductions of 2-byte
   elements only (the planner takes no other: since session 25's round, run
   tiles over 4- and 8-byte elements lost and are not built; index reductions
   and other element sizes get an empty one). */
template <class Op> __device__ __forceinline__ void kg_red_runt(const kg_red_args &A)
{
    typedef typename Op::in_t T;
    constexpr bool on = !Op::indexed && sizeof(T) == 2;
    __shared__ typename Op::acc_t sv[on ? KG_RED_THREADS * 16 / (sizeof(T) >= 2 ? sizeof(T) : 2) : 1];
    if constexpr (on) {
        if (A.vec == 16)
            kg_red_runt_v<Op, 16, KG_RED_RUNT_BYTES / 16>(A, sv);
        else if (A.vec == 8)
            kg_red_runt_v<Op, 8, KG_RED_RUNT_BYTES / 8>(A, sv);
        else if constexpr (sizeof(T) <= 4) {
            if (A.vec == 4)
                kg_red_runt_v<Op, 4, KG_RED_RUNT_BYTES / 4>(A, sv);
            else if constexpr (sizeof(T) == 2)
                if (A.vec == 2) /* (16 loads: 32 spilled registers' worth) */
                    kg_red_runt_v<Op, 2, KG_RED_RUNT_BYTES / 4>(A, sv);
        }
    }
}

/* SEGW (tuning seg_rows; the same module group): a value reduction of short
   contiguous rows of L = A.run elements (2 to 8 bytes each), A.inner rows
   one after the other (one kept dim, the input dense), as one stream staged
   through shared memory a warp at a time. A warp's unit is a chunk of R =
   A.tile_rows rows, R L elements = 32 A.cw whole 16-byte vectors (the
   chunk's bytes the least common multiple of 512 and a row's bytes, at most
   KG_RED_SEGW_BYTES, so every chunk starts aligned): each lane copies its
   A.cw vectors (lane + 32 k) straight to the warp's buffer (cp.async, no
   registers held; the stream's last partial vector element by element),
   then sums rows lane, lane + 32, ... from the buffer in element order and
   stores their results (adjacent lanes, adjacent rows). NEST's lanes of 4
   rows (the default for such rows) read one element a load, a row's
   elements a lane apart of nothing. */
template <class Op> __device__ __forceinline__ void kg_red_segw(const kg_red_args &A)
{
    typedef typename Op::in_t T;
    constexpr bool on = !Op::indexed && sizeof(T) >= 2 && sizeof(T) <= 8;
    constexpr int NW = KG_RED_THREADS / 32, N = 16 / (int)sizeof(T);
    __shared__ __align__(16) unsigned char sm[on ? NW * KG_RED_SEGW_BYTES : 16];
    if constexpr (on) {
        const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
        unsigned char *buf = sm + wid * KG_RED_SEGW_BYTES;
        const T *ts = (const T *)buf;
        const uint32_t sbase = kgd_smem_addr(buf);
        const int L = (int)A.run, R = (int)A.tile_rows, nvl = A.cw;
        const int64_t rows = A.inner, total = rows * A.run;
        const T *in = (const T *)A.in;
        const int64_t nw = (int64_t)gridDim.x * NW;
        for (int64_t c = (int64_t)blockIdx.x * NW + wid; c < A.units; c += nw) {
            const int64_t e0 = c * R * L; /* the chunk's first element */
            for (int k = 0; k < nvl; k++) {
                const int j = lane + 32 * k; /* the chunk's vector j */
                const int64_t e = e0 + (int64_t)j * N;
                if (e + N <= total) {
                    kgd_cp_async16(sbase + 16 * j, in + e, true);
                } else if (e < total) { /* the stream's last vector, partial */
                    for (int q = 0; q < N; q++)
                        if (e + q < total)
                            ((T *)buf)[j * N + q] = in[e + q];
                }
            }
            kgd_cp_async_commit();
            kgd_cp_async_wait<0>();
            __syncwarp(); /* every lane's copies landed */
            for (int r = lane; r < R; r += 32) {
                const int64_t row = c * R + r;
                if (row < rows) {
                    kg_racc<Op> a;
                    a.v = Op::identity();
                    a.i = 0;
                    for (int q = 0; q < L; q++)
                        a.v = Op::combine(a.v, Op::map(ts[r * L + q]));
                    kg_red_store<Op>(A, row * A.inner_out, 0, a);
                }
            }
            __syncwarp(); /* the buffer's readers are done before the next chunk's copies */
        }
    }
}

#endif
