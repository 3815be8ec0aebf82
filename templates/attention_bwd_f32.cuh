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
__device__ __forceinline__ void kvp_f32_issue(const kg_attnb_params &p, const f32_kv_smem<D, BN, BM, L> &sm, int b,
                                              int h, int c, bool first, int m0, int tid, float &lse2, float &dl)
{
    constexpr int NT = 256, P = D + 4, E = 4;
    const char *q = (const char *)p.q + (b * p.q_sb + h * p.q_sh) * E;
    const char *dout = (const char *)p.dout + (b * p.do_sb + h * p.do_sh) * E;
    const float *rows = p.rows + ((int64_t)b * p.hq + h) * p.sq;
    const float *part = p.dqp + ((int64_t)c * p.nrows + ((int64_t)b * p.hq + h) * p.sq) * D;
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

/* PQ: the next step's dQ partial rows are loaded with its Q and dout
   (cp.async into shared memory after the rows, BM x (D + 4) floats more)
   instead of read from global memory at the start of its dQ. */
template <int D, int BN, int BM, int KIND, bool SR, int L = 1, bool PQ = false, int UD = 2, int UA = 1, int UQ = 4>
__device__ __forceinline__ void attnb_kvq_f32p(const kg_attnb_params &p)
{
    constexpr int LL = SR ? 1 : L;
    typedef f32_kv_smem<D, BN, BM, LL> smem_t;
    /* not SR: the kv tiles */
    constexpr int TN = BN / 16, VW = f32_shape<D>::VW, NV = f32_shape<D>::NV;
    /* SR: the split-role shapes (kvs_f32_shape) */
    typedef kvs_f32_shape<D, BN, BM> S;
    constexpr int VWA = S::VWA, NVA = S::NVA, GXA = S::GXA, GYA = S::GYA, TRA = S::TRA;
    static_assert(!SR || D == 64 || D == 128, "attnb_kvq_f32p: split roles at head dims 64 and 128");
    static_assert(!SR || (BN % GYA == 0 && BN % 16 == 0 && BM % 16 == 0), "attnb_kvq_f32p: tile sizes");
    extern __shared__ __align__(16) unsigned char smem[];
    const smem_t sm(smem);

    const int tid = threadIdx.x, half = tid >> 7, t = tid & 127;
    const int qx = t & 7, ky = t >> 3;
    const int ax = t % GXA, ay = t / GXA;
    int tx, ty;
    f32_txy<LL>(tid, tx, ty);
    const auto [c, sp, hk, b, causal, nkb, h0, nh, mlo, mhi, k, v] = kvs_f32_place_of<BN, BM, KIND>(p);
    const float *dotA = half ? sm.sV : sm.sK, *dotB = half ? sm.sO : sm.sQ;
    const float *accW = half ? sm.sS : sm.sP, *accX = half ? sm.sQ : sm.sO;

    for (int j = 0, kb = c; kb < nkb; j++, kb = lane_block(p.lanes, c, j)) {
        const int n0 = kb * BN;
        const bool first = j == 0;
        __syncthreads(); /* the previous key block is done with K, V (and its last step with the rest) */
        const int mstart = kvs_f32_begin<D, BN, BM, LL>(p, sm, k, v, n0, mlo, causal, tid);
        const int nt = mhi > mstart ? (mhi - mstart + BM - 1) / BM : 0, nsteps = nh * nt;
        float dv[SR ? 1 : TN][NV][VW], dk[SR ? 1 : TN][NV][VW];
        float acc[SR ? TRA : 1][NVA][VWA]; /* SR: first half dV, second dK */
        if constexpr (SR) {
            f32_zero(acc);
        } else {
            f32_zero(dv);
            f32_zero(dk);
        }
        float lse2 = 0.f, dl = 0.f;
        if (nsteps > 0) {
            const int h = hk * p.group + h0;
            kvp_f32_issue<D, BN, BM, LL, PQ>(p, sm, b, h, c, first, mstart, tid, lse2, dl);
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
                float x[S::TND][S::TMD];
                kvs_f32_dots<D, BN, BM, UD>(x, dotA, dotB, ky, qx);
                kvs_f32_update<D, BN, BM, KIND, UA>(p, sm, mbase, n0, m0, check, causal, half, ky, qx, x, ay, ax, accW,
                                                    accX, acc);
            } else {
                kv_f32_compute<D, BN, BM, KIND, LL, UD, UA>(p, sm, mbase, n0, m0, check, causal, dv, dk, tid);
            }
            float dqr[BM / 16][NV][VW];
            if (PQ)
                kvq_f32_dq_in<D, BM, LL, true>(sm.sDl + BM, 0, 0, first, ty, tx, dqr);
            __syncthreads(); /* every warp is done with Q, dout and the rows (PQ: and the partial's) */
            const bool more = it + 1 < nsteps;
            if (more) {
                const int hn = hk * p.group + h0 + (it + 1) / nt, mn = mstart + ((it + 1) % nt) * BM;
                kvp_f32_issue<D, BN, BM, LL, PQ>(p, sm, b, hn, c, first, mn, tid, lse2, dl);
            }
            if (PQ)
                kvq_f32_dq_run<D, BN, BM, LL, UQ>(p, sm, part, m0, ty, tx, dqr);
            else
                kvq_f32_dq<D, BN, BM, LL, UQ>(p, sm, part, m0, first, ty, tx);
            if (more && tid < BM)
                sm.sL[tid] = lse2, sm.sDl[tid] = dl;
        }
        kgd_cp_async_wait<0>();
        if constexpr (SR)
            kvs_f32_store<D, BN, BM>(p, acc, sp, half, b, hk, n0, ay, ax);
        else
            kvq_f32_store<D, BN>(p, dv, dk, sp, b, hk, n0, ty, tx);
    }
}

} // namespace kg_attnb

#endif
