/*
 * normg.cuh - the GROUP class of softmax and log_softmax along an outer axis
 * (sm_90 modules normc_<dtype>): CLUSTER's column strips (templates/normc.cuh)
 * served by a persistent grid whose blocks exchange the columns' statistics
 * through global memory, so that a strip may span more blocks than a cluster
 * holds: strips of 256 bytes and more (a dim-0 probe, H200 session 16 r1,
 * copying f32 [16384,16384] in column strips: 128-byte row segments 79.6% of
 * copy, 256 bytes 92.5; held on chip a strip at a time by 32 blocks a strip
 * exchanging through global memory 86.8, by clusters of 16 at 128 bytes 80.3).
 *
 * The grid is co-resident (a cooperative launch): gridDim.x / A.splits groups
 * of g = A.splits consecutive blocks (blocks past the last whole group return
 * at once). Group gi serves strips gi, gi + groups, ... of the outer positions
 * x column tiles (A.rows x A.tiles strips of W = LPR x V columns); block q of
 * a group holds rows [q A.chunk, (q + 1) A.chunk) of the strip as CLUSTER's
 * blocks do (K vectors a lane in registers, KS in shared memory). Per strip:
 *   1. the lane's rows are loaded;
 *   2. the block's (max, sum) per column, as CLUSTER's (kg_ncl_block), is
 *      written to the group's slot of the iteration's partials (two buffers,
 *      alternating: a block writes iteration i + 2's only after the group's
 *      barrier of i + 1, which every block passes after its reads of i);
 *   3. the group's barrier: a counter a group in the scratch's counters,
 *      bumped once a block a strip (release), waited for until it reaches
 *      g (i + 1) (acquire);
 *   4. the block's lanes merge the g partials, P = T / W lanes a column
 *      each over a fixed stride of blocks (their loads in flight at once),
 *      then the first W lanes the P results in order (the same merges in the
 *      same order in every block: the same bits run to run; r2, where a
 *      lane walked the g partials one load after another, GROUP ran f32
 *      softmax [16384,16384] dim 0 at 41.0% of copy against CLUSTER's 60.6);
 *   5. every lane applies to its values and stores.
 * At the end each block bumps the group's second counter; the last one sets
 * both back to zero (the scratch's counters are zero between calls).
 * The runtime (runtime/norm.c) plans it where CLUSTER's conditions hold.
 */
#ifndef KG_NORMG_CUH
#define KG_NORMG_CUH

#include "normc.cuh"

__device__ __forceinline__ unsigned kg_ng_acquire(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* the group's barrier of iteration it: every block's partials are visible
   to every block after it */
__device__ __forceinline__ void kg_ng_barrier(unsigned *ctr, unsigned target)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(ctr, 1u);
        while (kg_ng_acquire(ctr) < target)
            __nanosleep(32);
    }
    __syncthreads();
}

template <class Op, int V, int LPR, int T> struct kg_ngr_shared {
    static_assert(sizeof(typename Op::in_t) * V == 16, "16-byte vectors");
    typename Op::acc_t wm[T / 32][LPR * V], ws[T / 32][LPR * V];
    typename Op::acc_t cm[LPR * V], cs[LPR * V];
    kg_nrow<typename Op::acc_t> fin[LPR * V];
};

template <class Op, int V, int LPR, int T, int K, int KS, bool EX0 = false>
__device__ __forceinline__ void kg_norm_group(const kg_norm_args &A)
{
    typedef typename Op::in_t IT;
    typedef typename Op::acc_t AT;
    constexpr int RY = T / LPR, W = LPR * V;
    constexpr bool EX = EX0 && Op::expm && sizeof(IT) == sizeof(AT);
    __shared__ kg_ngr_shared<Op, V, LPR, T> sh;
    const int g = (int)A.splits, groups = (int)(gridDim.x / (unsigned)g);
    const int gi = (int)(blockIdx.x / (unsigned)g), q = (int)blockIdx.x - gi * g;
    if (gi >= groups)
        return;
    unsigned *ctr = (unsigned *)A.partial + 2 * gi;
    AT *part = (AT *)((char *)A.partial + KG_NORM_GROUP_COUNTER_BYTES);
    const int tid = threadIdx.x, tx = tid % LPR, ty = tid / LPR;
    const int64_t strips = A.rows * A.tiles;
    const int64_t ns = A.inner.st[0][KG_NO_IN], nso = A.inner.st[0][KG_NO_OUT];
    const int64_t r0 = (int64_t)q * A.chunk;
    const int64_t rend = r0 + A.chunk < A.n ? r0 + A.chunk : A.n;
    int jn = 0; /* this lane's rows: r0 + ty + j RY, j < jn */
    if (r0 + ty < rend) {
        const int64_t t = (rend - r0 - ty + RY - 1) / RY;
        jn = t < K + KS ? (int)t : K + KS;
    }
    int it = 0;
    for (int64_t s = gi; s < strips; s += groups, it++) {
        const int64_t o = s / A.tiles;
        int64_t off[KG_NORM_NOPS];
        kg_nouter(A, o, off);
        const int64_t col = (s - o * A.tiles) * W + tx * V;
        const int jc = col < A.cols ? jn : 0; /* rows of this strip the lane holds */
        /* 1. the lane's rows: K in registers, KS in shared memory (its own
           slots: the previous strip's stores from them are issued) */
        const IT *p = (const IT *)A.p[KG_NO_IN] + off[KG_NO_IN] + col + (r0 + ty) * ns;
        if constexpr (KS > 0) {
#pragma unroll
            for (int j = 0; j < KS; j++)
                if (K + j < jc)
                    kg_ncp16(&kg_ncbuf[j * T + tid], p + (int64_t)(K + j) * RY * ns);
            asm volatile("cp.async.commit_group;\n" ::: "memory");
        }
        uint4 xs[K];
#pragma unroll
        for (int j = 0; j < K; j++)
            if (j < jc)
                xs[j] = __ldg((const uint4 *)(p + (int64_t)j * RY * ns));
        /* 2. the block's statistics per column, to the group's partials */
        AT m[V], sm[V], ml[V];
        kg_ncl_lane<Op, V, T, K, KS, EX>(xs, jc, m, sm);
#pragma unroll
        for (int v = 0; v < V; v++)
            ml[v] = m[v];
        kg_ncl_block<Op, V, LPR, T>(m, sm, sh.wm, sh.ws, sh.cm, sh.cs);
        AT *pi = part + (int64_t)(it & 1) * gridDim.x * 2 * W;
        if (tid < W) {
            pi[(int64_t)blockIdx.x * 2 * W + tid] = sh.cm[tid];
            pi[(int64_t)blockIdx.x * 2 * W + W + tid] = sh.cs[tid];
        }
        /* 3. every block of the group has written its partials */
        kg_ng_barrier(ctr, (unsigned)g * (unsigned)(it + 1));
        /* 4. the group's merge: lane c + W p merges the partials of blocks p,
           p + P, ... of column c (P = T / W lanes a column; its loads 8 at a
           time, all in flight), then the first W lanes merge the P results
           in order (a fixed partition and order: the same bits run to run) */
        {
            constexpr int P = T / W;
            static_assert(P >= 1 && P <= T / 32, "GROUP: a column's lanes fit wm / ws");
            const int c = tid % W, pq = tid / W;
            const AT *pg = pi + (int64_t)gi * g * 2 * W + c;
            kg_nstat<AT> st = kg_nstat_init<AT>();
            for (int k0 = pq; k0 < g; k0 += 8 * P) {
                AT lm[8], ls[8];
#pragma unroll
                for (int u = 0; u < 8; u++)
                    if (k0 + u * P < g) {
                        lm[u] = __ldcg(pg + (int64_t)(k0 + u * P) * 2 * W);
                        ls[u] = __ldcg(pg + (int64_t)(k0 + u * P) * 2 * W + W);
                    }
#pragma unroll
                for (int u = 0; u < 8; u++)
                    if (k0 + u * P < g)
                        kg_nlse_merge(st.a, st.c, lm[u], ls[u]);
            }
            sh.wm[pq][c] = st.a;
            sh.ws[pq][c] = st.c;
            __syncthreads();
            if (tid < W) {
                kg_nstat<AT> t = kg_nstat_init<AT>();
                for (int k = 0; k < P; k++)
                    kg_nlse_merge(t.a, t.c, sh.wm[k][tid], sh.ws[k][tid]);
                sh.fin[tid] = kg_nfinish<Op>(t, A.n, A.eps);
            }
            __syncthreads();
        }
        /* 5. the apply (sh.fin is rewritten next strip only after the group's
           barrier, which every lane reaches after these reads) */
        if (jc > 0)
            kg_ncl_out<Op, V, T, K, KS, EX>(xs, jc, sh.fin + tx * V, ml,
                                            (IT *)A.p[KG_NO_OUT] + off[KG_NO_OUT] + col + (r0 + ty) * nso, RY * nso);
    }
    /* the counters back to zero once every block of the group is past its
       last wait */
    if (tid == 0 && gi < strips) {
        if (atomicAdd(ctr + 1, 1u) == (unsigned)g - 1) {
            ctr[0] = 0;
            ctr[1] = 0;
        }
    }
}

#endif
