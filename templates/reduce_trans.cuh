/*
 * reduce_trans.cuh - TRANS (kg_reduce_params.h): value reductions of
 * elements of at most 4 bytes whose outputs lie scattered in the input's
 * order (kernel trans: templates/reduce.cu includes this file in the slab
 * modules).
 *
 * The kept dims split three ways: the input-contiguous outputs `ki` (A.rdims:
 * kept dims whose input strides chain from 1, A.inner of them; an output's
 * input offset is its index, its values offset the sum of its digits times
 * rdims.out), the output-contiguous outputs `ko` (one kept dim: A.tile_rows
 * of them, input stride A.inner_idx, values stride A.inner_out) and the outer
 * positions (A.outer). Every output reduces the walk A.walk (A.red
 * positions, one element each). Session 38's extensions (runtime/reduce_plan.c
 * plan_trans; defaults trans_run 8, trans_ko2 16): A.cw > 1, a run of A.cw
 * contiguous elements under the ki side (the walk's dim 0; ki output k at
 * input offset k A.cw); A.vstore > 0, a ko side of two kept dims chained in
 * the values (ko output k at input offset (k % A.vstore) A.inner_idx +
 * (k / A.vstore) A.run, values offset k A.inner_out). A unit is a tile of KG_RED_TRANS_TILE ki x
 * KG_RED_TRANS_TILE ko outputs of one outer position (A.tiles ki tiles, ki
 * tiles fastest, then ko tiles, then outer positions); no splits. Thread
 * (x, y) of the block's TT x NY reduces outputs (ki x, ko y + m NY),
 * m < TT / NY, their loads interleaved, KG_RED_TRANS_UNROLL walk positions
 * at a time (a warp reads TT input-contiguous elements), positions in increasing
 * order; the results go through shared
 * memory and thread (x, y) writes outputs (ki y + m NY, ko x) (a warp writes
 * TT output-contiguous values). Every combination order is fixed: bitwise
 * the same run to run.
 */
#ifndef KG_REDUCE_TRANS_CUH
#define KG_REDUCE_TRANS_CUH

#include "reduce.cuh"

/* Values offset of ki output k: its digits over A.rdims (kg_red_digit)
   times their values strides. */
__device__ __forceinline__ int64_t kg_red_trans_kout(const kg_red_args &A, int64_t k)
{
    const kg_red_dims &D = A.rdims;
    int64_t off = 0, r = k;
#pragma unroll 1
    for (int d = 0; d < D.n; d++)
        off += kg_red_digit(D, d, A.fast, r) * D.out[d];
    return off;
}

template <class Op> __device__ __forceinline__ void kg_red_trans(const kg_red_args &A)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    constexpr int U = KG_RED_TRANS_UNROLL, TT = KG_RED_TRANS_TILE, NY = KG_RED_THREADS / TT, M = TT / NY;
    __shared__ AT sv[TT][TT + 1];
    const int x = threadIdx.x % TT, y = threadIdx.x / TT;
    const T *in = (const T *)A.in;
    const int64_t nko = A.tile_rows, tko = (nko + TT - 1) / TT, per_o = A.tiles * tko, npos = A.red;
    for (int64_t u = blockIdx.x; u < A.units; u += gridDim.x) {
        const int64_t o = u / per_o, rem = u - o * per_o, to = rem / A.tiles, ti = rem - to * A.tiles;
        int64_t io, oo, xo;
        kg_red_outer(A, o, io, oo, xo);
        const int64_t ki = ti * TT + x, kin = A.cw > 1 ? ki * A.cw : ki;
        kg_racc<Op> a[M];
        const T *b[M];
#pragma unroll
        for (int m = 0; m < M; m++) {
            a[m] = kg_red_identity<Op>();
            const int64_t ko = to * TT + y + m * NY;
            const int64_t kon =
                A.vstore > 0 ? (ko % A.vstore) * A.inner_idx + (ko / A.vstore) * A.run : ko * A.inner_idx;
            b[m] = ki < A.inner && ko < nko ? in + io + kin + kon : nullptr;
        }
        kg_red_pos<int64_t> p;
        kg_walk_at(A.walk, 0, p);
        for (int64_t i = 0; i < npos; i += U) {
            T v[U][M];
#pragma unroll
            for (int j = 0; j < U; j++)
                if (i + j < npos) {
#pragma unroll
                    for (int m = 0; m < M; m++)
                        if (b[m])
                            v[j][m] = b[m][p.off];
                    kg_walk_step(A.walk, p);
                }
#pragma unroll
            for (int j = 0; j < U; j++)
                if (i + j < npos) {
#pragma unroll
                    for (int m = 0; m < M; m++)
                        if (b[m])
                            kg_red_push<Op>(a[m], v[j][m], i + j);
                }
        }
        __syncthreads(); /* the previous unit's writers have read sv */
#pragma unroll
        for (int m = 0; m < M; m++)
            sv[y + m * NY][x] = a[m].v;
        __syncthreads();
        const int64_t kow = to * TT + x;
        if (kow < nko) {
#pragma unroll
            for (int m = 0; m < M; m++) {
                const int64_t kiw = ti * TT + y + m * NY;
                if (kiw < A.inner)
                    ((typename Op::out_t *)A.out)[oo + kg_red_trans_kout(A, kiw) + kow * A.inner_out] =
                        Op::finish(sv[x][y + m * NY], A.red);
            }
        }
    }
}

#endif
