/*
 * normt.cuh - COLT: softmax and log_softmax along an outer axis of few rows
 * (n <= RY x K), one block a tile of the columns, no cluster.
 *
 * CLUSTER (normc.cuh) holds a 128-byte strip of a column in a cluster of up
 * to 16 blocks; a short column (the normalized dim of [4096,64,1024] dim 1,
 * [2048,3,4096] dim 1, [128,2097152] dim 0) fills a fraction of one of its
 * blocks (1024 rows) and its 128-byte row segments stream at about 80% of
 * copy at best (session 16's probe: 256 bytes and wider 92%). COLT's block of
 * T lanes holds a tile of W = LPR x V columns (LPR lanes a row, a 16-byte
 * vector each: LPR x 16 bytes wide, up to 4 KiB) and all n of its rows, RY = T
 * / LPR rows at a time, K vectors a lane in registers (rows ty, ty + RY, ...),
 * so each element is read once and written once:
 *   1. each lane: the maximum of its values per column, then the sum of
 *      exp(x - shift(max)) (kg_ncl_regmax / kg_ncl_regsum);
 *   2. every lane's (max, sum) into shared memory; one barrier; every lane
 *      merges the RY partials of its columns in row-group order (the lanes
 *      of a column the same merges in the same order: the same values, and
 *      the same bits from run to run);
 *   3. every lane applies to its values and writes them.
 * The runtime plans it (runtime/norm.c, a CLUSTER configuration with one
 * set) where the column fits one block, columns and strides in whole
 * vectors; the launch is the cluster one with clusters of one block.
 */
#ifndef KG_NORMT_CUH
#define KG_NORMT_CUH

#include "normc.cuh"

template <class Op, int V, int LPR, int T, int K>
__device__ __forceinline__ void kg_norm_colt(const kg_norm_args &A)
{
    typedef typename Op::in_t IT;
    typedef typename Op::acc_t AT;
    constexpr int RY = T / LPR, W = LPR * V;
    static_assert(RY * LPR == T && RY >= 1, "COLT: LPR divides T");
    static_assert(sizeof(IT) * V == 16, "16-byte vectors");
    __shared__ AT pm[RY][W], ps[RY][W];
    const int64_t o = blockIdx.x / A.tiles, tile = blockIdx.x - o * A.tiles;
    int64_t off[KG_NORM_NOPS];
    kg_nouter(A, o, off);
    const int tid = threadIdx.x, tx = tid % LPR, ty = tid / LPR;
    const int64_t col = tile * W + tx * V;
    const bool cok = col < A.cols;
    /* this lane's rows: j < jn (rows ty + j RY below n) */
    int jn = 0;
    if (cok && ty < A.n) {
        const int64_t t = (A.n - ty + RY - 1) / RY;
        jn = t < K ? (int)t : K;
    }
    const int64_t ns = A.inner.st[0][KG_NO_IN], nso = A.inner.st[0][KG_NO_OUT];
    const IT *p = (const IT *)A.p[KG_NO_IN] + off[KG_NO_IN] + col + ty * ns;
    uint4 xs[K];
#pragma unroll
    for (int j = 0; j < K; j++)
        if (j < jn)
            xs[j] = __ldg((const uint4 *)(p + (int64_t)j * RY * ns));
    /* 1. the lane's statistics, per column */
    AT m[V], s[V];
    kg_ncl_regmax<Op, V>(xs, jn, m, s);
    kg_ncl_regsum<Op, V>(xs, jn, m, s);
    /* 2. the tile's, merged in row-group order by every lane */
#pragma unroll
    for (int v = 0; v < V; v++) {
        pm[ty][tx * V + v] = m[v];
        ps[ty][tx * V + v] = s[v];
    }
    __syncthreads();
    if (jn == 0)
        return;
    kg_nrow<AT> rv[V];
#pragma unroll
    for (int v = 0; v < V; v++) {
        kg_nstat<AT> st = kg_nstat_init<AT>();
        for (int k = 0; k < RY; k++)
            kg_nlse_merge(st.a, st.c, pm[k][tx * V + v], ps[k][tx * V + v]);
        rv[v] = kg_nfinish<Op>(st, A.n, A.eps);
    }
    /* 3. the apply */
    IT *y = (IT *)A.p[KG_NO_OUT] + off[KG_NO_OUT] + col + ty * nso;
    kg_ncl_regstore<Op, V>(xs, jn, rv, y, RY * nso);
}

#endif
