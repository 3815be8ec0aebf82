/*
 * normc.cuh - the CLUSTER class of softmax and log_softmax along an outer
 * axis (sm_90: thread-block clusters and distributed shared memory).
 *
 * The normalized dim has a stride; a kept dim (the columns) is contiguous.
 * One cluster of CS blocks serves one strip of W = LPR x V columns (LPR lanes
 * of a row, one 16-byte vector each) of one outer position: block q of the
 * cluster holds rows [q chunk, (q + 1) chunk) of the strip in registers (K
 * vectors a lane, rows ty, ty + T / LPR, ...; then KS more in shared
 * memory), so every element is read
 * once and written once (the two-launch COLS class reads it twice):
 *   1. each lane: the maximum of its K values per column, then the sum of
 *      exp(x - shift(max)); lanes of a column merge (online softmax) by
 *      butterflies in the warp, then over the warps in order (shared
 *      memory), giving the block's (max, sum) per column;
 *   2. cluster barrier; the first W lanes of every block merge the CS
 *      blocks' partials in rank order through distributed shared memory
 *      (every block the same result: the same merges in the same order);
 *   3. every lane applies to its values and writes them; a second cluster
 *      barrier keeps each block's shared memory alive until the cluster's
 *      reads of it are done.
 * The runtime picks it where the column fits: n <= CS x (T / LPR) x (K + KS) with
 * CS <= 16 (runtime/norm.c), columns and strides in whole vectors.
 */
#ifndef KG_NORMC_CUH
#define KG_NORMC_CUH

#include <cooperative_groups.h>

#include "norm.cuh"

/* KS: vectors a lane keeps in (dynamic) shared memory beyond its K in
   registers (rows j = K .. K + KS - 1 of the same walk), loaded by cp.async
   (no registers on the way); each lane reads back only its own slots. */
extern __shared__ uint4 kg_ncbuf[]; /* [KS][T] */

__device__ __forceinline__ void kg_ncp16(uint4 *dst, const void *src)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
}

template <class Op, int V, int LPR, int T, int K, int KS = 0>
__device__ __forceinline__ void kg_norm_cluster(const kg_norm_args &A)
{
    namespace cg = cooperative_groups;
    typedef typename Op::in_t IT;
    typedef typename Op::acc_t AT;
    static_assert(sizeof(IT) * V == 16, "16-byte vectors");
    constexpr int RY = T / LPR, W = LPR * V, NW = T / 32;
    __shared__ AT wm[NW][W], ws[NW][W]; /* each warp's partials */
    __shared__ AT cm[W], cs[W];         /* the block's partials (the cluster reads them) */
    __shared__ kg_nrow<AT> fin[W];      /* the columns' values */
    cg::cluster_group cl = cg::this_cluster();
    const int CS = (int)cl.num_blocks();
    const int q = (int)cl.block_rank();
    const int64_t cid = blockIdx.x / CS; /* 1-d clusters: consecutive blocks */
    const int64_t o = cid / A.tiles, tile = cid - o * A.tiles;
    int64_t off[KG_NORM_NOPS];
    kg_nouter(A, o, off);
    const int tid = threadIdx.x, tx = tid % LPR, ty = tid / LPR, lane = tid & 31;
    const int64_t col = tile * W + tx * V;
    const int64_t r0 = (int64_t)q * A.chunk;
    const int64_t rend = r0 + A.chunk < A.n ? r0 + A.chunk : A.n;
    /* this lane's rows: j < jn (rows r0 + ty + j RY below rend) */
    int jn = 0;
    if (col < A.cols && r0 + ty < rend) {
        const int64_t t = (rend - r0 - ty + RY - 1) / RY;
        jn = t < K + KS ? (int)t : K + KS;
    }
    const int64_t ns = A.inner.st[0][KG_NO_IN], nso = A.inner.st[0][KG_NO_OUT];
    const IT *p = (const IT *)A.p[KG_NO_IN] + off[KG_NO_IN] + col + (r0 + ty) * ns;
    if constexpr (KS > 0) {
#pragma unroll
        for (int j = 0; j < KS; j++)
            if (K + j < jn)
                kg_ncp16(&kg_ncbuf[j * T + tid], p + (int64_t)(K + j) * RY * ns);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    uint4 xs[K];
#pragma unroll
    for (int j = 0; j < K; j++)
        if (j < jn)
            xs[j] = __ldg((const uint4 *)(p + (int64_t)j * RY * ns));
    /* 1. the lane's statistics, per column */
    AT m[V], s[V];
#pragma unroll
    for (int v = 0; v < V; v++) {
        m[v] = -(AT)INFINITY;
        s[v] = (AT)0;
    }
#pragma unroll
    for (int j = 0; j < K; j++)
        if (j < jn) {
            IT e[V];
            const uint4 u = kg_nopaque(xs[j]); /* unpacked values die with each pass */
            memcpy(e, &u, 16);
#pragma unroll
            for (int v = 0; v < V; v++)
                m[v] = kg_nmax(m[v], Op::ld(e[v]));
        }
    if constexpr (KS > 0) {
        asm volatile("cp.async.wait_all;\n" ::: "memory");
#pragma unroll
        for (int j = 0; j < KS; j++)
            if (K + j < jn) {
                IT e[V];
                const uint4 u = kg_ncbuf[j * T + tid];
                memcpy(e, &u, 16);
#pragma unroll
                for (int v = 0; v < V; v++)
                    m[v] = kg_nmax(m[v], Op::ld(e[v]));
            }
    }
#pragma unroll
    for (int j = 0; j < K; j++)
        if (j < jn) {
            IT e[V];
            const uint4 u = kg_nopaque(xs[j]);
            memcpy(e, &u, 16);
#pragma unroll
            for (int v = 0; v < V; v++)
                s[v] += kg_nexp_sum(Op::ld(e[v]) - kg_nshift(m[v]));
        }
#pragma unroll
    for (int j = 0; j < KS; j++)
        if (K + j < jn) {
            IT e[V];
            const uint4 u = kg_ncbuf[j * T + tid];
            memcpy(e, &u, 16);
#pragma unroll
            for (int v = 0; v < V; v++)
                s[v] += kg_nexp_sum(Op::ld(e[v]) - kg_nshift(m[v]));
        }
        /* lanes of a column within the warp (the merge is symmetric: both
           partners end with the same values) */
#pragma unroll
    for (int mk = LPR; mk < 32; mk <<= 1)
#pragma unroll
        for (int v = 0; v < V; v++) {
            const AT om = kgd_shfl_xor(m[v], mk), os = kgd_shfl_xor(s[v], mk);
            kg_nlse_merge(m[v], s[v], om, os);
        }
    if (lane < LPR)
#pragma unroll
        for (int v = 0; v < V; v++) {
            wm[tid >> 5][tx * V + v] = m[v];
            ws[tid >> 5][tx * V + v] = s[v];
        }
    __syncthreads();
    if (tid < W) {
        AT a = wm[0][tid], c = ws[0][tid];
        for (int k = 1; k < NW; k++)
            kg_nlse_merge(a, c, wm[k][tid], ws[k][tid]);
        cm[tid] = a;
        cs[tid] = c;
    }
    /* 2. the cluster's partials, in rank order */
    cl.sync();
    if (tid < W) {
        kg_nstat<AT> st = kg_nstat_init<AT>();
        for (int k = 0; k < CS; k++) {
            const AT *rm = cl.map_shared_rank(cm, k), *rs = cl.map_shared_rank(cs, k);
            kg_nlse_merge(st.a, st.c, rm[tid], rs[tid]);
        }
        fin[tid] = kg_nfinish<Op>(st, A.n, A.eps);
    }
    __syncthreads();
    /* this block's reads of the others' shared memory are done */
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
    /* 3. the apply */
    IT *y = (IT *)A.p[KG_NO_OUT] + off[KG_NO_OUT] + col + (r0 + ty) * nso;
    if (jn > 0) {
        kg_nrow<AT> rv[V];
#pragma unroll
        for (int v = 0; v < V; v++)
            rv[v] = fin[tx * V + v];
#pragma unroll
        for (int j = 0; j < K; j++)
            if (j < jn) {
                IT e[V];
                const uint4 x = kg_nopaque(xs[j]);
                memcpy(e, &x, 16);
#pragma unroll
                for (int v = 0; v < V; v++)
                    e[v] = Op::st(Op::apply(Op::ld(e[v]), rv[v], (AT)1, (AT)0));
                uint4 u;
                memcpy(&u, e, 16);
                *(uint4 *)(y + (int64_t)j * RY * nso) = u;
            }
#pragma unroll
        for (int j = 0; j < KS; j++)
            if (K + j < jn) {
                IT e[V];
                const uint4 x = kg_ncbuf[j * T + tid];
                memcpy(e, &x, 16);
#pragma unroll
                for (int v = 0; v < V; v++)
                    e[v] = Op::st(Op::apply(Op::ld(e[v]), rv[v], (AT)1, (AT)0));
                uint4 u;
                memcpy(&u, e, 16);
                *(uint4 *)(y + (int64_t)(K + j) * RY * nso) = u;
            }
    }
    /* every block's shared memory stays until the cluster's reads are done */
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

#endif
