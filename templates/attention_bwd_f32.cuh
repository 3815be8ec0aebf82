/*
 * Attention backward, FP32 kvq kernels whose next step's loads overlap this
 * step's dQ (attnb_kvq_f32p). Kept apart from attention_bwd.cuh so that only
 * the modules that instantiate it include it (gen/attention_bwd.lua).
 */
#ifndef KG_ATTENTION_BWD_F32_CUH
#define KG_ATTENTION_BWD_F32_CUH

#include "attention_bwd.cuh"

namespace kg_attnb {

/* kvq in FP32 with the next step's loads overlapped with this step's dQ:
   attnb_kvq_f32 (SR false; layout L) or attnb_kvq_f32s (SR true) walking
   the same steps (one BM-query tile of one head) in the same order with the
   same arithmetic (the same bits), but a step's Q and dout tiles are no
   longer read after its dV / dK products, and dQ = dS K reads only dS^T and
   K: so after those products (a block barrier) the next step's Q, dout
   (cp.async) and rows (registers, then shared memory) are issued and land
   while dQ runs, instead of the whole block waiting for them at the next
   step's start. No more shared memory, no more barriers a step. */
template <int D, int BN, int BM, int L, bool PQ>
__device__ __forceinline__ void kvp_f32_issue(const kg_attnb_params &p, const f32_kv_smem<D, BN, BM, L> &sm,
                                              const char *q, const char *dout, const float *rows, const float *part,
                                              bool first, int m0, int tid, float &lse2, float &dl)
{
    constexpr int NT = 256, P = D + 4, E = 4;
    load_tile<BM, D, P, E, NT>(kgd_smem_addr(sm.sQ), q, p.q_ss, m0, p.sq, tid);
    load_tile<BM, D, P, E, NT>(kgd_smem_addr(sm.sO), dout, p.do_ss, m0, p.sq, tid);
    if (PQ && !first) /* the dQ partial's rows (PQ: after sDl, pitch P) */
        load_tile<BM, D, P, E, NT>(kgd_smem_addr(sm.sDl + BM), (const char *)part, D, m0, p.sq, tid);
    kgd_cp_async_commit();
    static_assert(BM <= NT, "kvp_f32_issue: one row a thread");
    if (tid < BM) {
        const bool ok = m0 + tid < p.sq;
        lse2 = ok ? rows[p.nrows + m0 + tid] : CUDART_INF_F;
        dl = ok ? rows[m0 + tid] : 0.f;
    }
}

/* kvq_f32_dq in two parts, with the partial's rows read from shared
   memory (pitch D + 4, at sDl + BM, where kvp_f32_issue put them): the
   thread's rows into registers (before the barrier after which the next
   step's rows overwrite them), then dS K added and the rows stored. The
   same values, the same bits. */
template <int D, int BM, int L>
__device__ __forceinline__ void kvq_f32_dq_in(const float *sPq, bool first, int ty, int tx,
                                              float (&dq)[BM / 16][f32_shape<D>::NV][f32_shape<D>::VW])
{
    constexpr int P = D + 4, TM = BM / 16;
    constexpr int VW = f32_shape<D>::VW, NV = f32_shape<D>::NV;
    constexpr bool CR = L != 0;
    typedef typename kg_attn::fvec<VW>::t vec;
#pragma unroll
    for (int i = 0; i < TM; i++) {
        const int rl = CR ? TM * ty + i : ty + 16 * i;
#pragma unroll
        for (int d = 0; d < NV; d++) {
            vec o;
            float *of = (float *)&o;
            if (!first)
                o = *(const vec *)&sPq[rl * P + VW * (tx + 16 * d)];
            else
#pragma unroll
                for (int e = 0; e < VW; e++)
                    of[e] = 0.f;
#pragma unroll
            for (int e = 0; e < VW; e++)
                dq[i][d][e] = of[e];
        }
    }
}

template <int D, int BN, int BM, int L>
__device__ __forceinline__ void kvq_f32_dq_run(const kg_attnb_params &p, const f32_kv_smem<D, BN, BM, L> &sm,
                                               float *part, int m0, int ty, int tx,
                                               float (&dq)[BM / 16][f32_shape<D>::NV][f32_shape<D>::VW])
{
    constexpr int P = D + 4, PP = f32_kv_smem<D, BN, BM, L>::PP, TM = BM / 16;
    constexpr int VW = f32_shape<D>::VW, NV = f32_shape<D>::NV;
    constexpr bool CR = L != 0;
    if (CR)
        f32_acc_tc<TM, BN, PP, NV, VW, P>(dq, sm.sS, sm.sK, ty, tx);
    else
        f32_acc_t<TM, BN, PP, NV, VW, P>(dq, sm.sS, sm.sK, ty, tx);
    f32_store<TM, NV, VW, CR>(dq, part, D, m0, p.sq, 1.f, ty, tx);
}

/* PQ: the next step's dQ partial rows are loaded with its Q and dout
   (cp.async into shared memory after the rows, BM x (D + 4) floats more)
   instead of read from global memory at the start of its dQ. */
template <int D, int BN, int BM, int KIND, bool SR, int L = 1, bool PQ = false>
__device__ __forceinline__ void attnb_kvq_f32p(const kg_attnb_params &p)
{
    constexpr int NT = 256, P = D + 4, E = 4;
    constexpr int LL = SR ? 1 : L;
    typedef f32_kv_smem<D, BN, BM, LL> smem_t;
    constexpr int PP = smem_t::PP;
    /* not SR: the kv tiles */
    constexpr int TN = BN / 16, VW = f32_shape<D>::VW, NV = f32_shape<D>::NV;
    /* SR: scores, a half is a 8 (queries, qx) x 16 (keys, ky) grid; dV / dK:
       a half is a GXA (columns of 4) x GYA (keys) grid, 8 columns a thread */
    constexpr int TND = BN / 16, TMD = BM / 8;
    constexpr int VWA = 4, NVA = 2, GXA = SR ? D / (VWA * NVA) : 16, GYA = 128 / GXA, TRA = BN / GYA;
    static_assert(!SR || D == 64 || D == 128, "attnb_kvq_f32p: split roles at head dims 64 and 128");
    static_assert(!SR || (BN % GYA == 0 && BN % 16 == 0 && BM % 16 == 0), "attnb_kvq_f32p: tile sizes");
    extern __shared__ __align__(16) unsigned char smem[];
    const smem_t sm(smem);

    const int tid = threadIdx.x, half = tid >> 7, t = tid & 127;
    const int qx = t & 7, ky = t >> 3;
    const int ax = t % GXA, ay = t / GXA;
    int tx, ty;
    f32_txy<LL>(tid, tx, ty);
    const int c = blockIdx.x % p.lanes, sp = blockIdx.x / p.lanes, hk = blockIdx.y, b = blockIdx.z;
    const bool causal = KIND == KG_ATTN_CAUSAL || (KIND == KG_ATTN_MASK && p.causal);
    const int nkb = (p.sk + BN - 1) / BN;
    int h0, nh, mlo, mhi;
    split_of<BM>(p, sp, h0, nh, mlo, mhi);
    const char *k = (const char *)p.k + (b * p.k_sb + hk * p.k_sh) * E;
    const char *v = (const char *)p.v + (b * p.v_sb + hk * p.v_sh) * E;
    const float *dotA = half ? sm.sV : sm.sK, *dotB = half ? sm.sO : sm.sQ;
    const float *accW = half ? sm.sS : sm.sP, *accX = half ? sm.sQ : sm.sO;

    for (int j = 0, kb = c; kb < nkb; j++, kb = lane_block(p.lanes, c, j)) {
        const int n0 = kb * BN;
        const bool first = j == 0;
        __syncthreads(); /* the previous key block is done with K, V (and its last step with the rest) */
        load_tile<BN, D, P, E, NT>(kgd_smem_addr(sm.sK), k, p.k_ss, n0, p.sk, tid);
        load_tile<BN, D, P, E, NT>(kgd_smem_addr(sm.sV), v, p.v_ss, n0, p.sk, tid);
        kgd_cp_async_commit();
        int mstart = mlo;
        if (causal)
            mstart = max(mlo, max(0, n0 - (p.sk - p.sq)) / BM * BM);
        const int nt = mhi > mstart ? (mhi - mstart + BM - 1) / BM : 0, nsteps = nh * nt;
        float dv[SR ? 1 : TN][NV][VW], dk[SR ? 1 : TN][NV][VW];
        float acc[SR ? TRA : 1][NVA][VWA]; /* SR: first half dV, second dK */
        if constexpr (SR) {
#pragma unroll
            for (int i = 0; i < TRA; i++)
#pragma unroll
                for (int d = 0; d < NVA; d++)
#pragma unroll
                    for (int e = 0; e < VWA; e++)
                        acc[i][d][e] = 0.f;
        } else {
#pragma unroll
            for (int i = 0; i < TN; i++)
#pragma unroll
                for (int d = 0; d < NV; d++)
#pragma unroll
                    for (int e = 0; e < VW; e++)
                        dv[i][d][e] = dk[i][d][e] = 0.f;
        }
        float lse2 = 0.f, dl = 0.f;
        if (nsteps > 0) {
            const int h = hk * p.group + h0;
            kvp_f32_issue<D, BN, BM, LL, PQ>(p, sm, (const char *)p.q + (b * p.q_sb + h * p.q_sh) * E,
                                             (const char *)p.dout + (b * p.do_sb + h * p.do_sh) * E,
                                             p.rows + ((int64_t)b * p.hq + h) * p.sq,
                                             p.dqp + ((int64_t)c * p.nrows + ((int64_t)b * p.hq + h) * p.sq) * D,
                                             first, mstart, tid, lse2, dl);
            if (tid < BM)
                sm.sL[tid] = lse2, sm.sDl[tid] = dl;
        }
        for (int it = 0; it < nsteps; it++) {
            const int hi = h0 + it / nt, m0 = mstart + (it % nt) * BM;
            const int h = hk * p.group + hi;
            const float *mbase = KIND == KG_ATTN_MASK ? p.mask + b * p.m_sb + h * p.m_sh : nullptr;
            float *part = p.dqp + ((int64_t)c * p.nrows + ((int64_t)b * p.hq + h) * p.sq) * D;
            /* keys past Sk are masked here (their dS^T feeds dQ) */
            const bool check = n0 + BN > p.sk || (causal && n0 + BN - 1 > m0 + p.sk - p.sq);
            kgd_cp_async_wait<0>();
            __syncthreads(); /* this step's tiles and rows are in */
            if constexpr (SR) {
                float x[TND][TMD];
#pragma unroll
                for (int i = 0; i < TND; i++)
#pragma unroll
                    for (int cc = 0; cc < TMD; cc++)
                        x[i][cc] = 0.f;
                f32_dots<TND, TMD, D, P, 16, 8>(x, dotA, dotB, ky, qx);
                if (half == 0) {
#pragma unroll
                    for (int i = 0; i < TND; i++)
#pragma unroll
                        for (int cc = 0; cc < TMD; cc++) {
                            const int kl = ky + 16 * i, ql = qx + 8 * cc;
                            float xs;
                            if (KIND == KG_ATTN_MASK || check)
                                xs = bwd_masked<KIND>(p, mbase, x[i][cc], m0 + ql, n0 + kl, check, causal);
                            else
                                xs = x[i][cc] * p.scale_log2;
                            sm.sP[kl * PP + ql] = exp2f(xs - sm.sL[ql]);
                        }
                }
                __syncthreads();
                if (half == 1) {
#pragma unroll
                    for (int i = 0; i < TND; i++)
#pragma unroll
                        for (int cc = 0; cc < TMD; cc++) {
                            const int kl = ky + 16 * i, ql = qx + 8 * cc;
                            sm.sS[kl * PP + ql] = sm.sP[kl * PP + ql] * (x[i][cc] - sm.sDl[ql]);
                        }
                }
                __syncthreads();
                f32_acc<TRA, BM, PP, NVA, VWA, P, GYA, GXA>(acc, accW, accX, ay, ax);
            } else {
                kv_f32_compute<D, BN, BM, KIND, LL>(p, sm, mbase, n0, m0, check, causal, dv, dk, tid);
            }
            float dqr[BM / 16][NV][VW];
            if (PQ)
                kvq_f32_dq_in<D, BM, LL>(sm.sDl + BM, first, ty, tx, dqr);
            __syncthreads(); /* every warp is done with Q, dout and the rows (PQ: and the partial's) */
            const bool more = it + 1 < nsteps;
            if (more) {
                const int hn = hk * p.group + h0 + (it + 1) / nt, mn = mstart + ((it + 1) % nt) * BM;
                kvp_f32_issue<D, BN, BM, LL, PQ>(p, sm, (const char *)p.q + (b * p.q_sb + hn * p.q_sh) * E,
                                                 (const char *)p.dout + (b * p.do_sb + hn * p.do_sh) * E,
                                                 p.rows + ((int64_t)b * p.hq + hn) * p.sq,
                                                 p.dqp + ((int64_t)c * p.nrows + ((int64_t)b * p.hq + hn) * p.sq) * D,
                                                 first, mn, tid, lse2, dl);
            }
            if (PQ)
                kvq_f32_dq_run<D, BN, BM, LL>(p, sm, part, m0, ty, tx, dqr);
            else
                kvq_f32_dq<D, BN, BM, LL>(p, sm, part, m0, first, ty, tx);
            if (more && tid < BM)
                sm.sL[tid] = lse2, sm.sDl[tid] = dl;
        }
        kgd_cp_async_wait<0>();
        if constexpr (SR) {
            if (p.splits > 1)
                f32_store<TRA, NVA, VWA, false, GYA, GXA>(acc, split_dkv<D>(p, sp, 1 - half, b, hk), D, n0, p.sk, 1.f,
                                                          ay, ax);
            else if (half == 0)
                f32_store<TRA, NVA, VWA, false, GYA, GXA>(acc, (float *)p.dv + b * p.dv_sb + hk * p.dv_sh, p.dv_ss,
                                                          n0, p.sk, 1.f, ay, ax);
            else
                f32_store<TRA, NVA, VWA, false, GYA, GXA>(acc, (float *)p.dk + b * p.dk_sb + hk * p.dk_sh, p.dk_ss,
                                                          n0, p.sk, p.scale, ay, ax);
        } else if (p.splits > 1) {
            f32_store<TN, NV, VW>(dv, split_dkv<D>(p, sp, 1, b, hk), D, n0, p.sk, 1.f, ty, tx);
            f32_store<TN, NV, VW>(dk, split_dkv<D>(p, sp, 0, b, hk), D, n0, p.sk, 1.f, ty, tx);
        } else {
            f32_store<TN, NV, VW>(dv, (float *)p.dv + b * p.dv_sb + hk * p.dv_sh, p.dv_ss, n0, p.sk, 1.f, ty, tx);
            f32_store<TN, NV, VW>(dk, (float *)p.dk + b * p.dk_sb + hk * p.dk_sh, p.dk_ss, n0, p.sk, p.scale, ty, tx);
        }
    }
}

} // namespace kg_attnb

#endif
