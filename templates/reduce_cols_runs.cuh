/*
 * reduce_cols_runs.cuh - COLS over short reduced runs in 16-byte vectors
 * (tuning cols_runs_vec; the colsp kernel, 3 blocks per multiprocessor and
 * 80 registers, takes a plan of args.run > 1 and args.vec != 0, value
 * reductions). The input holds rows of A.inner = columns x run contiguous
 * elements (a reduced run of `run` elements under each kept column, the
 * columns right outside it), further reduced dims walked outside (the walk
 * counts rows). A lane takes V adjacent elements of a row in one vector (V a
 * multiple of the run, so V / run whole runs) and keeps an accumulator per
 * element down the rows, as COLS does per column (same tree, same splits);
 * at the end each run's V / run accumulators fold in element order into
 * its column's result. The scalar run path of kg_red_cols_v reads one
 * element per load, TILE stages every row through shared memory: H200
 * s20r1, same process, us, main's plan / this: #194 i32 [13,255,51,50,2]
 * axes (0,1,4) TILE 94.9 / 28.9 (17.1 -> 56.0% of copy), #223 f32 TILE 93.3
 * / 75.0, #120 f32 TILE 123.2 / 88.1, #25 i32 TILE 49.2 / 45.2, #214 bf16
 * the scalar run 104.7 / 45.3, #72 f32 NEST 36.6 / 30.5 (this fold in the
 * colso kernel). s20r2, same process, us, colso (4 blocks, 64 registers) /
 * colsp: #120 87.3 / 76.7, #194 30.1 / 27.2, #72 29.6 / 28.4, #214 45.6 /
 * 44.7, #25 45.5 / 45.3, #223 74.7 / 75.4: colsp, and the colso kernel
 * stays main's.
 * cols_runs_kept: rows of periods of kw kept x run reduced x ... (a short
 * kept dim under the run, A.tile_rows = kw; e.g. sweep #155 bf16
 * [9,4095,128,2,2,2] axes (0,1,4), memory K2 R2 K256 under R36855): the
 * same vectors and accumulators, each result folding the run's kw-apart
 * accumulators.
 * cols_runs_fold (A.rdims.n 2: the kept digits kw and m): a period of kw
 * kept x run reduced elements wider than a vector, m periods a tile (one
 * tile, the whole row): the same vectors and accumulators down the walk,
 * then the tile's column sums through shared memory, each result folding
 * its run's columns across lanes (e.g. sweep #159 bf16 [127,255,6,2,23,2]
 * axes (1,3,4), memory K2 R46 K6 under R255, and #86 i32 K2 R510 under R500
 * went to columns of 2 lanes across, one 2- or 4-byte element a load).
 */
#ifndef KG_REDUCE_COLS_RUNS_CUH
#define KG_REDUCE_COLS_RUNS_CUH

#include "reduce.cuh"

/* V elements a lane (Words: 2-byte elements loaded as 32-bit words, split
   when pushed, after the batch's loads are issued), U rows in flight, the
   walk in 32-bit arithmetic (the planner checks it fits). */
template <class Op, int V, bool Words, int U>
__device__ __forceinline__ void kg_red_cols_runv(const kg_red_args &A, typename Op::acc_t *sv)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    typedef kgd_vec<T, V> VT;
    typedef kgd_vec<uint32_t, (V * sizeof(T) + 3) / 4> WT;
    const int cw = A.cw, ny = KG_RED_THREADS / cw;
    const int tx = threadIdx.x & (cw - 1), ty = threadIdx.x / cw;
    const int width = cw * V;      /* elements per tile */
    const int rm = (int)A.run - 1; /* the run: a power of two dividing V (the planner checks) */
    /* cols_runs_kept: kw kept elements under each run element (a power of
       two, kw x run dividing V; 1: none) */
    const int kw = A.tile_rows > 1 ? (int)A.tile_rows : 1;

    /* Combines the ny partials of each element column; ty == 0 ends with them. */
    auto tree = [&](kg_racc<Op>(&a)[V]) {
        if (ny == 1)
            return;
        __syncthreads(); /* a previous tree's readers are done */
#pragma unroll
        for (int k = 0; k < V; k++)
            sv[ty * width + tx * V + k] = a[k].v;
        __syncthreads();
        for (int s = ny >> 1; s > 0; s >>= 1) {
            if (ty < s) {
#pragma unroll
                for (int k = 0; k < V; k++) {
                    kg_racc<Op> b;
                    b.v = sv[(ty + s) * width + tx * V + k];
                    b.i = 0;
                    kg_red_merge<Op>(a[k], b);
                    sv[ty * width + tx * V + k] = a[k].v;
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
        const int64_t col = (tile * cw + tx) * V; /* the lane's first element of a row */
        const bool active = col < A.inner;
        const int64_t rows = A.red / A.run;
        const int64_t r0 = split * A.chunk, r1 = r0 + A.chunk < rows ? r0 + A.chunk : rows;
        kg_racc<Op> a[V];
#pragma unroll
        for (int k = 0; k < V; k++)
            a[k] = kg_red_identity<Op>();
        int64_t r = r0 + ty;
        if (active && r < r1) {
            const T *p = (const T *)A.in + io + col;
            kg_red_pos<int32_t> w;
            kg_walk_at(A.walk, r, w);
            for (; r < r1; r += U * (int64_t)ny) {
                if constexpr (Words) {
                    static_assert(sizeof(T) == 2 && V % 2 == 0, "words: vectors of 2-byte elements");
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
                                kg_red_push<Op>(a[k], e, 0);
                            }
                } else {
                    VT x[U];
#pragma unroll
                    for (int j = 0; j < U; j++)
                        if (r + j * (int64_t)ny < r1) {
                            x[j] = *(const VT *)(p + w.off);
                            kg_walk_step(A.walk, w);
                        }
#pragma unroll
                    for (int j = 0; j < U; j++)
                        if (r + j * (int64_t)ny < r1)
#pragma unroll
                            for (int k = 0; k < V; k++)
                                kg_red_push<Op>(a[k], x[j].v[k], 0);
                }
            }
        }
        tree(a);
        if (A.splits > 1) {
            const int64_t base = (grp * A.splits + split) * width + tx * V;
            if (ty == 0 && active) {
#pragma unroll
                for (int k = 0; k < V; k++)
                    ((AT *)A.partial)[base + k] = a[k].v;
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
                            if (s + h * ny < A.splits)
                                b[h][k].v = ((volatile AT *)A.partial)[at + k];
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
        if (A.rdims.n > 0) {
            /* cols_runs_fold: the tile is the period of kw kept x run
               reduced elements, m (rdims.size[1]) times; result (k0, k1)
               folds columns k1 kw run + k0 + kw r, r = 0 .. run - 1: warp w
               takes results w, w + 8, ..., lane l the columns of r = l, l +
               32, ... in order, then a butterfly with the lower lane's
               partial on the left */
            __syncthreads(); /* the tree's readers of sv are done */
            if (ty == 0 && active)
#pragma unroll
                for (int k = 0; k < V; k++)
                    sv[tx * V + k] = a[k].v;
            __syncthreads();
            const int fw = (int)A.rdims.size[0], l = threadIdx.x & 31;
            const int64_t per = fw * A.run, nres = fw * A.rdims.size[1];
            for (int64_t j = threadIdx.x >> 5; j < nres; j += KG_RED_THREADS / 32) {
                const int64_t k0 = j % fw, k1 = j / fw;
                kg_racc<Op> c;
                c.v = Op::identity();
                c.i = 0;
                for (int64_t r = l; r < A.run; r += 32)
                    c.v = Op::combine(c.v, sv[k1 * per + k0 + fw * r]);
                for (int m = 16; m > 0; m >>= 1) {
                    const AT o = kgd_shfl_xor(c.v, m);
                    c.v = (l & m) ? Op::combine(o, c.v) : Op::combine(c.v, o);
                }
                if (l == 0)
                    kg_red_store<Op>(A, oo + k0 * A.rdims.out[0] + k1 * A.rdims.out[1], xo, c);
            }
            continue;
        }
        if (ty == 0 && active) {
            if (kw == 1) {
                /* each run's accumulators in element order, one result per run */
                kg_racc<Op> c = a[0];
#pragma unroll
                for (int k = 0; k < V; k++) {
                    if (k > 0) {
                        if ((k & rm) == 0)
                            c = a[k];
                        else
                            kg_red_merge<Op>(c, a[k]);
                    }
                    if ((k & rm) == rm)
                        kg_red_store<Op>(A, oo + ((col + k) / A.run) * A.inner_out, xo, c);
                }
            } else {
                /* cols_runs_kept: periods of kw kept x run elements, a
                   result per kept place, its run's accumulators (kw apart)
                   in element order */
                const int per = kw * (int)A.run;
#pragma unroll
                for (int j = 0; j < V; j++)
                    if ((j & (per - 1)) < kw) { /* the run's first element */
                        kg_racc<Op> c = a[j];
#pragma unroll
                        for (int k = j + 1; k < V; k++)
                            if (k - j < per && ((k - j) & (kw - 1)) == 0)
                                kg_red_merge<Op>(c, a[k]);
                        const int64_t e = col + j;
                        kg_red_store<Op>(A, oo + (e / per * kw + (e & (per - 1))) * A.inner_out, xo, c);
                    }
            }
        }
    }
}

/* The colsp kernel's plans of args.run > 1 by args.vec: KG_RED_CV_VEC
   (Op::cvec elements of 4 or 8 bytes) or KG_RED_CV_WIDE32 (8 elements of 2
   bytes), KG_RED_OCC_UNROLL rows in flight per lane (as s20r2 measured it
   in colsp). Value reductions (the planner takes no other). */
template <class Op> __device__ __forceinline__ void kg_red_cols_runs(const kg_red_args &A)
{
    constexpr int W = sizeof(typename Op::in_t) == 2 ? 8 : Op::cvec;
    constexpr bool on = !Op::indexed && sizeof(typename Op::in_t) >= 2;
    __shared__ typename Op::acc_t sv[on ? KG_RED_THREADS * W : 1];
    if constexpr (on) {
        if constexpr (sizeof(typename Op::in_t) == 2) {
            if (A.vec == KG_RED_CV_WIDE32)
                kg_red_cols_runv<Op, 8, true, KG_RED_OCC_UNROLL>(A, sv);
        } else {
            if (A.vec == KG_RED_CV_VEC)
                kg_red_cols_runv<Op, Op::cvec, false, KG_RED_OCC_UNROLL>(A, sv);
        }
    }
}

#endif
