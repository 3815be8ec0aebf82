/*
 * attention_bwd_sm90d.cuh - the attention backward's Hopper (sm_90a) dK / dV
 * kernel for head dims too wide for attnb_kvq_wg (D 256: its dK and dV of
 * 64 keys x D would take 256 f32 registers a thread): the two warpgroups of
 * a block split the head dim instead of the keys. It is the separate dq
 * pass's kv kernel (table path 4; attnb_q_tc then writes dq), grid: key
 * blocks x Hkv x B, one key block a block. Session 31's candidate h1, the
 * D 256 default on compute capability 9.0 since session 32 (gen/
 * attention_bwd.lua; KG_ATTNB_TUNE=sep runs the portable kv kernel).
 *
 * A block is 2 warpgroups on BN = 64 keys; warpgroup w keeps dK and dV of
 * all 64 keys for head-dim columns [w D / 2, + D / 2) in registers for the
 * whole walk (64 x 128 f32 each at D 256: 64 + 64 registers a thread). Per
 * step (BM = 64 queries of one query head):
 *
 *   S^T  = K Q^T, dP^T = V dout^T   both warpgroups, all 64 keys over all of
 *                                   D (the same products in both), wgmma
 *                                   from shared memory
 *   P^T, dS^T                       from them in registers, as attnb_kvq_wg
 *   dV[:, w] += P^T dout[:, w]      A = P^T from registers, B = dout's
 *   dK[:, w] += dS^T Q[:, w]        panels of the warpgroup's half (N-major)
 *
 * dV / dK are waited for in their step (left running until the next step's
 * first barrier, ptxas serialized every wgmma, C7515).
 *
 * Shared memory: K, V (64 x D), two stages of (Q, dout) (64 x D each), a
 * 64 x 64 16-bit slot that this kernel does not use (the dS^T tile of the
 * fused form it was measured with, session 31: kept so that the kernel is
 * the measured one), two stages of the rows (lse2, delta): 206848 bytes at D
 * 256 with the 1 KiB alignment slack. Every tile in the 128-byte swizzle of
 * attnb_kvq_wg (SWB 128, D a whole number of 64-element panels: no padding),
 * every product through its wrappers (wg_rows_x_tile, wgb::rs) with the
 * descriptors it uses, offset to the warpgroup's panels. The masking, P^T
 * and dS^T are attnb_kvq_wg's (wg_pt, wg_dst).
 *
 * (Session 31's fused forms of this kernel, h0: dQ partials read from and
 * written to global memory every step, S^T / dP^T in both warpgroups; h2:
 * S^T / dP^T once, one warpgroup each, handed over through shared memory,
 * lost to this one in round s31r1 (bf16 B8 H16 S4096 D256: x 0.993 and
 * x 0.975 against main's separate pass, this kernel x 1.335) and were
 * removed in session 32.)
 */
#ifndef KG_ATTENTION_BWD_SM90D_CUH
#define KG_ATTENTION_BWD_SM90D_CUH

#include "attention_bwd_sm90.cuh"

namespace kg_attnb
{

template <typename T, int D, int BM, int KIND>
__device__ __forceinline__ void attnb_kvq_wgd(const kg_attnb_params &p)
{
    constexpr int NWG = 2, NT = 256, BN = 64, E = 2, DH = D / NWG;
    static_assert(DH % 64 == 0, "each warpgroup's half of the head dim is whole 64-element panels");
    static_assert(BM == 64, "64-query tiles");
    constexpr int QB = BM * D * E, KB = BN * D * E, SB = BN * BM * E;
    extern __shared__ __align__(16) unsigned char smem[];
    const uint32_t raw = kgd_smem_addr(smem), a0 = (raw + 1023) & ~1023u; /* swizzle atoms are 1024-byte aligned */
    const uint32_t aK = a0, aV = aK + KB, aQ0 = aV + KB; /* Q, dout: two stages of (Q, dout) */
    const uint32_t aS = aQ0 + 4 * QB;                     /* the unused 64 x 64 slot (see above) */
    unsigned char *base = smem + (a0 - raw);
    unsigned char *sSb = base + (aS - a0);
    float *sRows = (float *)(sSb + SB); /* two stages of lse2[BM], delta[BM] */

    const int tid = threadIdx.x, wgi = tid >> 7, wq = (tid >> 5) & 3, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const int hk = blockIdx.y, b = blockIdx.z;
    const bool causal = KIND == KG_ATTN_CAUSAL || (KIND == KG_ATTN_MASK && p.causal);
    const int nkb = (p.sk + BN - 1) / BN;
    const int kr = wq * 16; /* this warp's 16 keys in the block (both warpgroups) */
    const int dc = wgi * DH; /* this warpgroup's head-dim columns dc .. dc + DH */

    const char *k = (const char *)p.k + (b * p.k_sb + hk * p.k_sh) * E;
    const char *v = (const char *)p.v + (b * p.v_sb + hk * p.v_sh) * E;
    T *dk = (T *)p.dk + b * p.dk_sb + hk * p.dk_sh;
    T *dv = (T *)p.dv + b * p.dv_sb + hk * p.dv_sh;

    /* one key block a block (blockIdx.x) */
    for (int kb = blockIdx.x; kb < nkb; kb = nkb) {
        const int n0 = kb * BN;
        __syncthreads(); /* the previous key block is done with K, V */
        load_sw128<BN, D, NT>(aK, k, p.k_ss, n0, p.sk, tid);
        load_sw128<BN, D, NT>(aV, v, p.v_ss, n0, p.sk, tid);
        kgd_cp_async_commit();

        /* the query tiles this key block sees (causal: from the first row
           that reaches it) */
        const int mstart = causal ? max(0, n0 - (p.sk - p.sq)) / BM * BM : 0;
        const int mend = p.sq;
        const int nmt = mstart < mend ? (mend - mstart + BM - 1) / BM : 0, nsteps = p.group * nmt;
        auto m_at = [&](int it) {
            const int mt = it % nmt;
            return mstart + (p.mrev ? nmt - 1 - mt : mt) * BM;
        };

        float dva[DH / 2], dka[DH / 2];
#pragma unroll
        for (int i = 0; i < DH / 2; i++)
            dva[i] = dka[i] = 0.f;

        /* the loads of step `it` into stage `st`: Q, dout, the rows' lse2 and
           delta (rows past Sq read 0; their Q and dout rows are 0) */
        auto issue = [&](int it, int st) {
            const int h = hk * p.group + it / nmt, m0 = m_at(it);
            const char *q = (const char *)p.q + (b * p.q_sb + h * p.q_sh) * E;
            const char *dout = (const char *)p.dout + (b * p.do_sb + h * p.do_sh) * E;
            load_sw128<BM, D, NT>(aQ0 + 2 * st * QB, q, p.q_ss, m0, p.sq, tid);
            load_sw128<BM, D, NT>(aQ0 + 2 * st * QB + QB, dout, p.do_ss, m0, p.sq, tid);
            if (tid < BM) {
                const float *rows = p.rows + ((int64_t)b * p.hq + h) * p.sq + m0 + tid;
                const bool ok = m0 + tid < p.sq;
                cp_async4(kgd_smem_addr(sRows + st * 2 * BM + tid), ok ? rows + p.nrows : p.rows, ok);
                cp_async4(kgd_smem_addr(sRows + st * 2 * BM + BM + tid), ok ? rows : p.rows, ok);
            }
        };

        if (nsteps > 0)
            issue(0, 0);
        kgd_cp_async_commit();
        for (int it = 0; it < nsteps; it++) {
            const int st = it & 1;
            const int h = hk * p.group + it / nmt, m0 = m_at(it);
            const float *mbase = KIND == KG_ATTN_MASK ? p.mask + b * p.m_sb + h * p.m_sh : nullptr;
            /* this step's tiles (and K, V) arrived, and every warp is done
               with the previous step (its dV / dK waited for): its stage may
               be refilled */
            kgd_cp_async_wait<0>();
            fence_async_smem();
            __syncthreads();
            if (it + 1 < nsteps)
                issue(it + 1, st ^ 1);
            kgd_cp_async_commit();
            const uint32_t aQ = aQ0 + 2 * st * QB, aO = aQ + QB;
            const float *sL = sRows + st * 2 * BM, *sDl = sL + BM;

            /* S^T and dP^T: all 64 keys x BM queries over all of D, in each
               warpgroup (wg_rows_x_tile with warpgroup 0's rows) */
            float s[BM / 2], dp[BM / 2];
            wg_fence();
            wg_rows_x_tile<T, D, BN, BM>(s, aK, aQ, 0);
            wg_commit();
            wg_rows_x_tile<T, D, BN, BM>(dp, aV, aO, 0);
            wg_commit();
            wg_wait<1>();

            /* P^T, dS^T (attnb_kvq_wg's) */
            const bool check = n0 + BN > p.sk || (causal && n0 + BN - 1 > m0 + p.sk - p.sq);
            wg_pt<BM, KIND>(s, p, mbase, sL, m0, n0, kr, g, t, check, causal);
            wg_wait<0>();
            wg_dst<BM>(dp, s, sDl, t);

            /* dV[:, half] += P^T dout[:, half], dK[:, half] += dS^T Q[:, half]:
               B from the warpgroup's panels (dc / 64 on) of the N-major tile */
            {
                uint32_t pa[BM / 16][4], da[BM / 16][4];
#pragma unroll
                for (int kk = 0; kk < BM / 16; kk++) {
                    mma<T>::pack_a16(s + 8 * kk, pa[kk]);
                    mma<T>::pack_a16(dp + 8 * kk, da[kk]);
                }
                const uint32_t ph = (uint32_t)(dc / 64) * BM * 128; /* the half's first panel */
                wg_fence();
#pragma unroll
                for (int kk = 0; kk < BM / 16; kk++)
                    wgb<T, DH>::rs(dva, pa[kk], sw128_desc(aO + ph + kk * 16 * 128, BM * 128, 1024), 1);
#pragma unroll
                for (int kk = 0; kk < BM / 16; kk++)
                    wgb<T, DH>::rs(dka, da[kk], sw128_desc(aQ + ph + kk * 16 * 128, BM * 128, 1024), 1);
                wg_commit();
            }
            wg_wait<0>(); /* dV / dK (they read the stage the next step refills) */
        }
        kgd_cp_async_wait<0>();

        store_wg<T, DH>(dva, dv + dc, p.dv_ss, n0 + kr, p.sk, 1.f, g, t);
        store_wg<T, DH>(dka, dk + dc, p.dk_ss, n0 + kr, p.sk, p.scale, g, t);
    }
    kgd_cp_async_wait<0>();
}

} // namespace kg_attnb

#endif
