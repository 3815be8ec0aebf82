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
 *   1. each lane: the maximum of its values per column (the 2-byte types by
 *      packed pairs), then the sum of exp(x - shift(max));
 *   2. RY = 1: the lane's (max, sum) are its columns'. Else every lane's
 *      (max, sum) into shared memory; a barrier; the first row group's
 *      lanes merge the RY partials of their columns in row-group order (the
 *      maximum, then the sum of the rescaled sums); a barrier; every lane
 *      reads its columns' (max, sum) (the same bits from run to run);
 *   3. every lane applies to its values and writes them (f32 softmax: its
 *      kept exps times a factor a column; the 2-byte softmax: exps flushed
 *      below 2^-126).
 * The runtime plans it (runtime/norm.c, a CLUSTER configuration with one
 * set) where the column fits one block, columns and strides in whole
 * vectors; the launch is the cluster one with clusters of one block.
 * The narrow configurations (LPR < 16: columns of fewer than 16 vectors,
 * session 23) hold several tiles a block, each of the RG row groups its
 * column needs (A.group, from the runtime): a tile of [262144,32,32] dim 1 is
 * 4 KiB, a block of one tile would leave most of its lanes idle.
 */
#ifndef KG_NORMT_CUH
#define KG_NORMT_CUH

#include "normc.cuh"

/* The 2-byte types: the lane's maxima by packed pairs (no unpacking; the sum's exps then turn a NaN the pairs'
   maximum passed over into a NaN sum), s = 0; elsewhere kg_ncl_regmax. H200 s22r2, same process, % of copy, packed
   maxima and flushed output exps (kg_nct_vstore_ftz) / neither: softmax bf16 [4096,64,1024] dim 1 54.3 / 44.7,
   [128,2097152] dim 0 47.2 / 39.8, [2048,3,4096] dim 1 34.5 / 33.1; log_softmax bf16 [512,200,1536] dim 1 39.2 /
   36.6. */
template <class Op, int V, int K>
__device__ __forceinline__ void kg_nct_regmax(const uint4 (&xs)[K], int jn, typename Op::acc_t (&m)[V],
                                              typename Op::acc_t (&s)[V])
{
    typedef typename Op::in_t IT;
    if constexpr (sizeof(IT) == 2) {
        {
            kg_ncl_t2<IT> m2[V / 2];
            kg_ncl_m2init<Op, V>(m2);
#pragma unroll
            for (int j = 0; j < K; j++)
                if (j < jn)
                    kg_ncl_vmax2<IT, V>(m2, xs[j]);
            kg_ncl_m2out<Op, V>(m2, m, s);
            return;
        }
    }
    kg_ncl_regmax<Op, V>(xs, jn, m, s);
}

/* EK: the 2-byte softmax's sum's exps (kg_nexp_sum(x - shift(lane max)), the terms kg_ncl_vsum adds, in its
   order: the same sums) kept in f32, ek[j][v] for row j, column v of the lane, for the apply. */
template <class Op, int V, int K>
__device__ __forceinline__ void kg_nct_regsumek(const uint4 (&xs)[K], int jn, const typename Op::acc_t (&m)[V],
                                                typename Op::acc_t (&s)[V], typename Op::acc_t (&ek)[K][V])
{
#pragma unroll
    for (int j = 0; j < K; j++)
        if (j < jn) {
            typename Op::in_t e[V];
            const uint4 u = kg_nopaque(xs[j]);
            memcpy(e, &u, 16);
#pragma unroll
            for (int v = 0; v < V; v++) {
                ek[j][v] = kg_nexp_sum(Op::ld(e[v]) - kg_nshift(m[v])); /* (shifts hoisted: 20 bytes spilled) */
                s[v] += ek[j][v];
            }
        }
}

/* EK's outputs of rows j < jn at y + j ys: apply_e(ek c), c[v] = kg_ncl_kfac(the lane's maximum, the column's m). */
template <class Op, int V, int K, bool VS = false>
__device__ __forceinline__ void kg_nct_regstoreek(const typename Op::acc_t (&ek)[K][V], int jn,
                                                  const kg_nrow<typename Op::acc_t> (&rv)[V],
                                                  const typename Op::acc_t (&ml)[V], typename Op::in_t *y, int64_t ys)
{
    typedef typename Op::acc_t AT;
    AT c[V];
#pragma unroll
    for (int v = 0; v < V; v++)
        c[v] = kg_ncl_kfac(ml[v], rv[v].m);
#pragma unroll
    for (int j = 0; j < K; j++)
        if (j < jn) {
            typename Op::in_t e[V];
#pragma unroll
            for (int v = 0; v < V; v++)
                e[v] = Op::st(Op::apply_e(ek[j][v] * c[v], rv[v]));
            uint4 u;
            memcpy(&u, e, 16);
            kg_ncl_st16<VS>(y + (int64_t)j * ys, u);
        }
}

/* EX0: f32 softmax keeps the sum's exps in place of the values (kg_ncl_vsumex) and the apply multiplies them by
   exp(shift(lane max) - the column's max) (kg_ncl_vstoreex), as CLUSTER's EX: one exp an element instead of two;
   elsewhere no effect. VS (tunings of session 24): 16-byte stores, the lane's shifts once a column (the same bits).
   EK0 (the 2-byte softmax, tuning configurations of session 24): the sum's exps kept in f32
   beside the packed values (kg_nct_regsumek), the apply multiplies them (kg_nct_regstoreek): one exp an element
   instead of two, as LEAN2E does for rows; elsewhere no effect. */
template <class Op, int V, int LPR, int T, int K, bool EX0 = false, bool EK0 = false, bool VS = false>
__device__ __forceinline__ void kg_norm_colt(const kg_norm_args &A)
{
    typedef typename Op::in_t IT;
    typedef typename Op::acc_t AT;
    constexpr int RY = T / LPR, W = LPR * V;
    constexpr bool EX = EX0 && Op::expm && sizeof(IT) == sizeof(AT);
    constexpr bool EK = EK0 && Op::expm && sizeof(IT) == 2;
    /* MU (the narrow configurations, fewer than 16 lanes a row): a block holds T / (LPR x RG) tiles (units), RG =
       A.group row groups each (a power of two dividing RY, from the runtime), unit u of the block lanes [u LPR RG,
       (u + 1) LPR RG); elsewhere a block one tile, RG = RY */
    constexpr bool MU = LPR < 16;
    static_assert(RY * LPR == T && RY >= 1, "COLT: LPR divides T");
    static_assert(sizeof(IT) * V == 16, "16-byte vectors");
    __shared__ AT pm[RY][W], ps[RY][W];
    const int tid = threadIdx.x, tx = tid % LPR, gy = tid / LPR;
    const int RG = MU ? (int)A.group : RY;
    const int ty = MU ? gy % RG : gy, g0 = gy - ty; /* g0: the unit's first row group in the block */
    const int64_t unit = MU ? (int64_t)blockIdx.x * (RY / RG) + gy / RG : (int64_t)blockIdx.x;
    const int64_t o = unit / A.tiles, tile = unit - o * A.tiles;
    int64_t off[KG_NORM_NOPS];
    kg_nouter(A, MU && o >= A.rows ? 0 : o, off); /* (MU: the grid's last block may hold units past the end) */
    const int64_t col = tile * W + tx * V;
    const bool cok = col < A.cols && (!MU || o < A.rows);
    /* this lane's rows: j < jn (rows ty + j RG below n) */
    int jn = 0;
    if (cok && ty < A.n) {
        const int64_t t = (A.n - ty + RG - 1) / RG;
        jn = t < K ? (int)t : K;
    }
    const int64_t ns = A.inner.st[0][KG_NO_IN], nso = A.inner.st[0][KG_NO_OUT];
    const IT *p = (const IT *)A.p[KG_NO_IN] + off[KG_NO_IN] + col + ty * ns;
    uint4 xs[K];
#pragma unroll
    for (int j = 0; j < K; j++)
        if (j < jn)
            xs[j] = __ldg((const uint4 *)(p + (int64_t)j * RG * ns));
    /* 1. the lane's statistics, per column */
    AT m[V], s[V];
    kg_nct_regmax<Op, V>(xs, jn, m, s);
    AT ek[EK ? K : 1][V];
    (void)ek;
    /* VS: the shifts once a column (kg_ncl_lane's HS) */
    AT hs[V];
#pragma unroll
    for (int v = 0; v < V; v++)
        hs[v] = VS ? kg_nshift(m[v]) : m[v];
    const AT(&ms)[V] = VS ? hs : m;
    if constexpr (EX) {
#pragma unroll
        for (int j = 0; j < K; j++)
            if (j < jn)
                kg_ncl_vsumex<Op, V, VS>(s, ms, xs[j]);
    } else if constexpr (EK) {
        kg_nct_regsumek<Op, V, K>(xs, jn, m, s, ek);
    } else {
        kg_ncl_regsum<Op, V, K, VS>(xs, jn, ms, s);
    }
    /* 2. the tile's (RY = 1: the lane's own) */
    kg_nrow<AT> rv[V];
    if constexpr (RY == 1) {
        if (jn == 0)
            return;
#pragma unroll
        for (int v = 0; v < V; v++) {
            kg_nstat<AT> st = kg_nstat_init<AT>();
            st.a = m[v];
            st.c = s[v];
            rv[v] = kg_nfinish<Op>(st, A.n, A.eps);
        }
    } else {
        /* BF (MU, A.opt bit 1, a tile within a warp): butterflies over the tile's row groups, the maximum M, then
           the sum of s exp(shift(m) - shift(M)) (the merge's terms, one exp a lane and column); both partners of
           each step compute the same value, so every lane ends with the same bits. Else shared memory, below. */
        /* TL (MU, A.opt bit 2, a tile of whole warps): the same butterflies over each warp's row groups, a partial a
           warp into shared memory, then every lane merges its tile's warps' partials in order (the maximum, then
           the sum of the rescaled sums) */
        bool bf = false, tl = false;
        if constexpr (MU) {
            bf = (A.opt & 2) && LPR * RG <= 32;
            tl = (A.opt & 4) && LPR * RG > 32;
        }
        if (bf || tl) {
            const int span = bf ? LPR * RG : 32; /* the lanes a butterfly spans */
            __syncwarp(); /* (the loads and folds above are guarded by each lane's row count) */
#pragma unroll
            for (int v = 0; v < V; v++) {
                AT M = m[v];
                for (int mk = LPR; mk < span; mk <<= 1)
                    M = kg_nmax(M, kgd_shfl_xor(M, mk));
                AT S = s[v] == (AT)0 ? (AT)0 : s[v] * exp(kg_nshift(m[v]) - kg_nshift(M));
                for (int mk = LPR; mk < span; mk <<= 1)
                    S += kgd_shfl_xor(S, mk);
                if (tl) {
                    if ((tid & 31) < LPR) {
                        pm[tid >> 5][tx * V + v] = M;
                        ps[tid >> 5][tx * V + v] = S;
                    }
                } else {
                    kg_nstat<AT> st = kg_nstat_init<AT>();
                    st.a = M;
                    st.c = S;
                    rv[v] = kg_nfinish<Op>(st, A.n, A.eps);
                }
            }
            if (tl) {
                __syncthreads();
                const int w0 = g0 * LPR / 32, nw = LPR * RG / 32; /* the tile's warps */
#pragma unroll
                for (int v = 0; v < V; v++) {
                    const int c = tx * V + v;
                    AT M = pm[w0][c];
                    for (int k = 1; k < nw; k++)
                        M = kg_nmax(M, pm[w0 + k][c]);
                    const AT sh = kg_nshift(M);
                    AT S = 0;
                    for (int k = 0; k < nw; k++) {
                        const AT sk = ps[w0 + k][c];
                        S += sk == (AT)0 ? (AT)0 : sk * exp(kg_nshift(pm[w0 + k][c]) - sh);
                    }
                    kg_nstat<AT> st = kg_nstat_init<AT>();
                    st.a = M;
                    st.c = S;
                    rv[v] = kg_nfinish<Op>(st, A.n, A.eps);
                }
            }
            if (jn == 0)
                return;
        } else {
#pragma unroll
            for (int v = 0; v < V; v++) {
                pm[gy][tx * V + v] = m[v];
                ps[gy][tx * V + v] = s[v];
            }
            __syncthreads();
            /* each unit's first row group's lanes: each column's maximum M over the RG partials, then S = sum of s_k
               exp(shift(m_k) - shift(M)) (kg_nlse_merge's terms, one exp a partial), into pm[g0] / ps[g0]. Every lane
               merging all RY partials by kg_nlse_merge (two exps a merge) ran softmax f32 [512,200,1536] dim 1 (16
               partials) at 38.4% of copy, [4096,64,1024] (4) at 74.2 (H200 s22r1) */
            if (ty == 0 && cok)
#pragma unroll
                for (int v = 0; v < V; v++) {
                    const int c = tx * V + v;
                    AT M = pm[g0][c];
                    for (int k = 1; k < RG; k++)
                        M = kg_nmax(M, pm[g0 + k][c]);
                    const AT sh = kg_nshift(M);
                    AT S = 0;
                    for (int k = 0; k < RG; k++) {
                        const AT sk = ps[g0 + k][c];
                        S += sk == (AT)0 ? (AT)0 : sk * exp(kg_nshift(pm[g0 + k][c]) - sh);
                    }
                    pm[g0][c] = M;
                    ps[g0][c] = S;
                }
            __syncthreads();
            if (jn == 0)
                return;
#pragma unroll
            for (int v = 0; v < V; v++) {
                kg_nstat<AT> st = kg_nstat_init<AT>();
                st.a = pm[g0][tx * V + v];
                st.c = ps[g0][tx * V + v];
                rv[v] = kg_nfinish<Op>(st, A.n, A.eps);
            }
        }
    }
    /* 3. the apply */
    IT *y = (IT *)A.p[KG_NO_OUT] + off[KG_NO_OUT] + col + ty * nso;
    if constexpr (EX) {
        AT c[V];
        kg_ncl_regstoreex<Op, V, K, VS>(xs, jn, rv, m, c, y, RG * nso);
    } else if constexpr (EK) {
        kg_nct_regstoreek<Op, V, K, VS>(ek, jn, rv, m, y, RG * nso);
    } else if constexpr (Op::expm && sizeof(IT) == 2) {
#pragma unroll
        for (int j = 0; j < K; j++)
            if (j < jn)
                kg_nct_vstore_ftz<Op, V, VS>(kg_nopaque(xs[j]), rv, y + (int64_t)j * RG * nso);
    } else {
        kg_ncl_regstore<Op, V, K, VS>(xs, jn, rv, y, RG * nso);
    }
}

#endif
