/*
 * attention_bwd_sm90d.cuh - the attention backward's Hopper (sm_90a) kvq
 * kernel for head dims too wide for attnb_kvq_wg (D 256: its dK and dV of
 * 64 keys x D would take 256 f32 registers a thread): the two warpgroups of
 * a block split the head dim instead of the keys. Session 31 candidate,
 * forced only (KG_ATTNB_TUNE=h0 at D 256; gen/attention_bwd.lua).
 *
 * A block is 2 warpgroups on BN = 64 keys; warpgroup w keeps dK and dV of
 * all 64 keys for head-dim columns [w D / 2, + D / 2) in registers for the
 * whole walk (64 x 128 f32 each at D 256: 64 + 64 registers a thread). Per
 * step (BM = 64 queries of one query head):
 *
 *   S^T  = K Q^T, dP^T = V dout^T   both warpgroups, all 64 keys over all of
 *                                   D (the same products: redundant; see
 *                                   below), wgmma from shared memory
 *   P^T, dS^T                       from them in registers, as attnb_kvq_wg
 *   dS^T -> shared memory           warpgroup 0 only (warpgroup 1's values
 *                                   are the same bits: the same wgmma on
 *                                   the same tiles)
 *   dV[:, w] += P^T dout[:, w]      A = P^T from registers, B = dout's
 *   dK[:, w] += dS^T Q[:, w]        panels of the warpgroup's half (N-major)
 *   dQ[:, w]  = partial + dS K[:, w]  A = dS^T (M-major), B = K's panels
 *                                   of the half; the partial so far read
 *                                   from global memory into the accumulators
 *                                   (no shared-memory stage for it: 64 KiB)
 *
 * Why S^T and dP^T twice: computed once they would be split by head-dim
 * halves (each warpgroup a k-partial over its half) and summed through
 * shared memory, 2 x 64 x 64 f32 = 32 KiB more, over the 227 KiB a block
 * may take with two Q / dout stages (206848 + 32768 bytes), plus two more
 * block barriers a step. Twice costs tensor work (14.7 MFLOP a step for
 * 10.5 useful) but keeps the step of attnb_kvq_wg (its non-DQD form) with
 * one warpgroup's stores of dS^T.
 *
 * Shared memory: K, V (64 x D), two stages of (Q, dout) (64 x D each),
 * dS^T (64 x 64), two stages of the rows (lse2, delta): 206848 bytes at D
 * 256 with the 1 KiB alignment slack. Every tile in the 128-byte swizzle of
 * attnb_kvq_wg (SWB 128, D a whole number of 64-element panels: no padding),
 * every product through its wrappers (wg_rows_x_tile, wgb::rs, wgt::sstt)
 * with the descriptors it uses, offset to the warpgroup's panels.
 * The lanes, splits, direct dq, partial layout and masking are
 * attnb_kvq_wg's.
 *
 * PS (D 256's third candidate): S^T and dP^T computed once, split by
 * product: warpgroup 0 S^T (and P^T, dS^T), warpgroup 1 dP^T, which it
 * hands over as f32 through a 16 KiB exchange buffer (one register's worth
 * a thread: thread i of warpgroup 0 holds S^T where thread i of warpgroup 1
 * holds dP^T, the same accumulator shape); warpgroup 0 hands back P^T and
 * dS^T, packed as the dV / dK A fragments, through the same buffer (each
 * thread's column of it read, then written, by that thread alone). 10.49
 * MFLOP of wgmma a step instead of 14.68, three block barriers a step
 * instead of two; 223232 bytes of shared memory at D 256.
 *
 * KVO (D 256's second candidate): dK and dV alone, as the separate dq
 * pass's kv kernel (grid: key blocks x Hkv x B; attnb_q_tc then writes dq):
 * no dS^T tile, no dQ product or partial, no second barrier a step.
 * (dV / dK left running until the next step's first barrier made ptxas
 * serialize every wgmma, C7515: waited for in their step.)
 */
#ifndef KG_ATTENTION_BWD_SM90D_CUH
#define KG_ATTENTION_BWD_SM90D_CUH

#include "attention_bwd_sm90.cuh"

namespace kg_attnb
{

template <typename T, int D, int BM, int KIND, bool SPL = false, bool KVO = false, bool PS = false>
__device__ __forceinline__ void attnb_kvq_wgd(const kg_attnb_params &p)
{
    constexpr int NWG = 2, NT = 256, BN = 64, E = 2, DH = D / NWG;
    static_assert(!(KVO && SPL), "the dK / dV-only kernel runs without query splits");
    static_assert(!(KVO && PS), "the product split is a form of the fused kernel");
    static_assert(DH % 64 == 0, "each warpgroup's half of the head dim is whole 64-element panels");
    static_assert(BM == 64, "64-query tiles (the wgmma M of dQ, one dS^T panel)");
    constexpr int QB = BM * D * E, KB = BN * D * E, SB = BN * BM * E;
    extern __shared__ __align__(16) unsigned char smem[];
    const uint32_t raw = kgd_smem_addr(smem), a0 = (raw + 1023) & ~1023u; /* swizzle atoms are 1024-byte aligned */
    const uint32_t aK = a0, aV = aK + KB, aQ0 = aV + KB; /* Q, dout: two stages of (Q, dout) */
    const uint32_t aS = aQ0 + 4 * QB;                     /* dS^T [BN keys][BM queries] */
    unsigned char *base = smem + (a0 - raw);
    unsigned char *sSb = base + (aS - a0);
    float *sRows = (float *)(sSb + SB); /* two stages of lse2[BM], delta[BM] */
    /* PS: the exchange buffer, [BM / 2 registers][128 threads] f32 (dP^T),
       then the same bytes as [BM / 16][8][128] packed A fragments (P^T, dS^T) */
    float *sX = sRows + 4 * BM;

    const int tid = threadIdx.x, wgi = tid >> 7, wq = (tid >> 5) & 3, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const int c = SPL ? blockIdx.x % p.lanes : blockIdx.x, hk = blockIdx.y, b = blockIdx.z;
    const bool causal = KIND == KG_ATTN_CAUSAL || (KIND == KG_ATTN_MASK && p.causal);
    const int nkb = (p.sk + BN - 1) / BN;
    const int kr = wq * 16; /* this warp's 16 keys in the block (both warpgroups) */
    const int dc = wgi * DH; /* this warpgroup's head-dim columns dc .. dc + DH */

    const char *k = (const char *)p.k + (b * p.k_sb + hk * p.k_sh) * E;
    const char *v = (const char *)p.v + (b * p.v_sb + hk * p.v_sh) * E;
    T *dk = (T *)p.dk + b * p.dk_sb + hk * p.dk_sh;
    T *dv = (T *)p.dv + b * p.dv_sb + hk * p.dv_sh;

    /* KVO: one key block a block (blockIdx.x) */
    for (int j = 0, kb = c; kb < nkb; j++, kb = KVO ? nkb : lane_block(p.lanes, c, j)) {
        const int n0 = kb * BN;
        const bool first = j == 0;
        __syncthreads(); /* the previous key block is done with K, V */
        load_sw128<BN, D, NT>(aK, k, p.k_ss, n0, p.sk, tid);
        load_sw128<BN, D, NT>(aV, v, p.v_ss, n0, p.sk, tid);
        kgd_cp_async_commit();

        /* the block's query split (attnb_kvq_wg's expressions) */
        int h0 = 0, nh = p.group, mlo = 0, mhi = p.sq;
        if (SPL)
            split_of<BM>(p, blockIdx.x / p.lanes, h0, nh, mlo, mhi);
        int mstart = SPL ? mlo : 0;
        if (causal)
            mstart = SPL ? max(mlo, max(0, n0 - (p.sk - p.sq)) / BM * BM) : max(0, n0 - (p.sk - p.sq)) / BM * BM;
        const int mend = SPL ? mhi : p.sq;
        const int nmt = mstart < mend ? (mend - mstart + BM - 1) / BM : 0, nsteps = (SPL ? nh : p.group) * nmt;
        const int mnext = kb + 1 >= nkb ? INT_MAX : causal ? max(0, n0 + BN - (p.sk - p.sq)) / BM * BM : 0;
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
            const int h = hk * p.group + (SPL ? h0 : 0) + it / nmt, m0 = m_at(it);
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
        /* dQ of a step: rows 0 .. 63 of the query tile x this warpgroup's
           columns dc .. dc + DH */
        float dq[DH / 2];
        /* attnb_kvq_wg's walk over this thread's rows and n8 tiles */
        auto walk_dq = [&](int m0, auto put) {
#pragma unroll
            for (int i = 0; i < 2; i++) {
                const int r = m0 + wq * 16 + g + 8 * i;
                if (r < p.sq) {
#pragma unroll
                    for (int n = 0; n < DH / 8; n++)
                        put(r, n, dq[4 * n + 2 * i], dq[4 * n + 2 * i + 1]);
                }
            }
        };
        auto store_dq = [&](int h, int m0) {
            if (p.direct && m0 < mnext) {
                T *dq_ = (T *)p.dq + b * p.dq_sb + h * p.dq_sh;
                walk_dq(m0, [&](int r, int n, float x, float y) {
                    *(uint32_t *)(dq_ + (int64_t)r * p.dq_ss + dc + n * 8 + 2 * t) = mma<T>::pack(x * p.scale, y * p.scale);
                });
            } else {
                float *part = p.dqp + ((int64_t)c * p.nrows + ((int64_t)b * p.hq + h) * p.sq) * D;
                walk_dq(m0, [&](int r, int n, float x, float y) {
                    *(float2 *)&part[(int64_t)r * D + dc + n * 8 + 2 * t] = make_float2(x, y);
                });
            }
        };
        /* dq = the lane's partial so far of rows m0.. of head h, read from
           global memory (attnb_kvq_wg stages it through shared memory): 0 in
           the lane's first key block and for rows past Sq, as there */
        auto load_dq = [&](int h, int m0) {
            const float *part = p.dqp + ((int64_t)c * p.nrows + ((int64_t)b * p.hq + h) * p.sq) * D;
#pragma unroll
            for (int i = 0; i < 2; i++) {
                const int r = m0 + wq * 16 + g + 8 * i;
                const bool ok = !first && r < p.sq;
#pragma unroll
                for (int n = 0; n < DH / 8; n++) {
                    const float2 o = ok ? *(const float2 *)&part[(int64_t)r * D + dc + n * 8 + 2 * t]
                                        : make_float2(0.f, 0.f);
                    dq[4 * n + 2 * i] = o.x;
                    dq[4 * n + 2 * i + 1] = o.y;
                }
            }
        };

        if (nsteps > 0)
            issue(0, 0);
        kgd_cp_async_commit();
        for (int it = 0; it < nsteps; it++) {
            const int st = it & 1;
            const int h = hk * p.group + (SPL ? h0 : 0) + it / nmt, m0 = m_at(it);
            const float *mbase = KIND == KG_ATTN_MASK ? p.mask + b * p.m_sb + h * p.m_sh : nullptr;
            /* this step's tiles (and K, V) arrived, and every warp is done
               with the previous step (its dV / dK / dQ waited for): its stage
               and dS^T may be refilled */
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
            const int tw = tid & 127; /* PS: this thread's column of sX */
            if constexpr (PS) {
                /* warpgroup 0 S^T, warpgroup 1 dP^T: the same instructions on
                   the warpgroup's tiles, into s (wgmma in a branch by
                   warpgroup made ptxas serialize them all, C7520) */
                wg_fence();
                wg_rows_x_tile<T, D, BN, BM>(s, wgi ? aV : aK, wgi ? aO : aQ, 0);
                wg_commit();
                wg_wait<0>();
                if (wgi == 1) {
#pragma unroll
                    for (int r = 0; r < BM / 2; r++)
                        sX[r * 128 + tw] = s[r];
                }
            } else {
                wg_fence();
                wg_rows_x_tile<T, D, BN, BM>(s, aK, aQ, 0);
                wg_commit();
                wg_rows_x_tile<T, D, BN, BM>(dp, aV, aO, 0);
                wg_commit();
                wg_wait<1>();
            }

            /* P^T (attnb_kvq_wg's) */
            const bool check = n0 + BN > p.sk || (causal && n0 + BN - 1 > m0 + p.sk - p.sq);
            const int kthr = p.sk - n0 - kr - g;
            const int cthr = causal ? p.sk - p.sq + m0 + 2 * t - n0 - kr - g : INT_MAX;
            if (!PS || wgi == 0) { /* (PS: warpgroup 0 only) */
#pragma unroll
                for (int n = 0; n < BM / 8; n++) {
#pragma unroll
                    for (int x = 0; x < 4; x++) {
                        const int ql = n * 8 + 2 * t + (x & 1);
                        float xs;
                        if (KIND == KG_ATTN_MASK)
                            xs = bwd_masked<KIND>(p, mbase, s[4 * n + x], m0 + ql, n0 + kr + g + 8 * (x >> 1), check,
                                                  causal);
                        else if (check)
                            xs = 8 * (x >> 1) >= kthr || 8 * (x >> 1) - 8 * n - (x & 1) > cthr
                                     ? -CUDART_INF_F
                                     : s[4 * n + x] * p.scale_log2;
                        else
                            xs = s[4 * n + x] * p.scale_log2;
                        s[4 * n + x] = ex2(xs - sL[ql]);
                    }
                }
            }
            if constexpr (PS) {
                __syncthreads(); /* dP^T in sX */
                if (wgi == 0) {
#pragma unroll
                    for (int r = 0; r < BM / 2; r++)
                        dp[r] = sX[r * 128 + tw];
                }
            } else {
                wg_wait<0>();
            }
            /* dS^T; warpgroup 0 also into shared memory for dQ (PS: warpgroup
               0 only) */
            if (!PS || wgi == 0) {
#pragma unroll
                for (int n = 0; n < BM / 8; n++) {
#pragma unroll
                    for (int x = 0; x < 4; x++) {
                        const int ql = n * 8 + 2 * t + (x & 1);
                        dp[4 * n + x] = s[4 * n + x] * (dp[4 * n + x] - sDl[ql]);
                    }
                    if (!KVO && wgi == 0) {
                        *(uint32_t *)(sSb + sw128_at<BN>(kr + g, n) + 4 * t) = mma<T>::pack(dp[4 * n], dp[4 * n + 1]);
                        *(uint32_t *)(sSb + sw128_at<BN>(kr + g + 8, n) + 4 * t) =
                            mma<T>::pack(dp[4 * n + 2], dp[4 * n + 3]);
                    }
                }
            }
            if (!KVO)
                fence_async_smem();

            /* dV[:, half] += P^T dout[:, half], dK[:, half] += dS^T Q[:, half]:
               B from the warpgroup's panels (dc / 64 on) of the N-major tile */
            {
                uint32_t pa[BM / 16][4], da[BM / 16][4];
                if constexpr (PS) {
                    /* warpgroup 0 hands P^T and dS^T, packed as the A
                       fragments, to both warpgroups (itself too: nothing
                       held across the barrier); the barrier also completes
                       the dS^T tile for dQ. (Through the float view only:
                       the buffer is one type.) */
                    if (wgi == 0) {
#pragma unroll
                        for (int kk = 0; kk < BM / 16; kk++)
#pragma unroll
                            for (int e = 0; e < 4; e++) {
                                sX[(kk * 8 + e) * 128 + tw] =
                                    __uint_as_float(mma<T>::pack(s[8 * kk + 2 * e], s[8 * kk + 2 * e + 1]));
                                sX[(kk * 8 + 4 + e) * 128 + tw] =
                                    __uint_as_float(mma<T>::pack(dp[8 * kk + 2 * e], dp[8 * kk + 2 * e + 1]));
                            }
                    }
                    __syncthreads();
#pragma unroll
                    for (int kk = 0; kk < BM / 16; kk++)
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            pa[kk][e] = __float_as_uint(sX[(kk * 8 + e) * 128 + tw]);
                            da[kk][e] = __float_as_uint(sX[(kk * 8 + 4 + e) * 128 + tw]);
                        }
                } else {
#pragma unroll
                    for (int kk = 0; kk < BM / 16; kk++) {
                        pa[kk][0] = mma<T>::pack(s[8 * kk], s[8 * kk + 1]);
                        pa[kk][1] = mma<T>::pack(s[8 * kk + 2], s[8 * kk + 3]);
                        pa[kk][2] = mma<T>::pack(s[8 * kk + 4], s[8 * kk + 5]);
                        pa[kk][3] = mma<T>::pack(s[8 * kk + 6], s[8 * kk + 7]);
                        da[kk][0] = mma<T>::pack(dp[8 * kk], dp[8 * kk + 1]);
                        da[kk][1] = mma<T>::pack(dp[8 * kk + 2], dp[8 * kk + 3]);
                        da[kk][2] = mma<T>::pack(dp[8 * kk + 4], dp[8 * kk + 5]);
                        da[kk][3] = mma<T>::pack(dp[8 * kk + 6], dp[8 * kk + 7]);
                    }
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
            if constexpr (KVO) {
                wg_wait<0>(); /* dV / dK (they read the stage the next step refills) */
            } else {
                if (!PS)
                    __syncthreads(); /* dS^T complete (PS: the hand-over's barrier) */
                else
                    wg_wait<0>(); /* (PS) dV / dK: their A fragments free before dQ's registers fill */

                /* dQ[:, half] = the partial so far + dS K[:, half] */
                load_dq(h, m0);
                wg_fence();
#pragma unroll
                for (int kk = 0; kk < BN / 16; kk++)
                    wgt<T, DH>::sstt(dq, sw128_desc(aS + kk * 16 * 128, BN * 128, 1024),
                                     sw128_desc(aK + (dc / 64) * BN * 128 + kk * 16 * 128, BN * 128, 1024), 1);
                wg_commit();
                wg_wait<0>();
                store_dq(h, m0);
            }
        }
        kgd_cp_async_wait<0>();

        if (SPL) {
            store_wg<float, DH>(dva, split_dkv<D>(p, blockIdx.x / p.lanes, 1, b, hk) + dc, D, n0 + kr, p.sk, 1.f, g,
                                t);
            store_wg<float, DH>(dka, split_dkv<D>(p, blockIdx.x / p.lanes, 0, b, hk) + dc, D, n0 + kr, p.sk, 1.f, g,
                                t);
        } else {
            store_wg<T, DH>(dva, dv + dc, p.dv_ss, n0 + kr, p.sk, 1.f, g, t);
            store_wg<T, DH>(dka, dk + dc, p.dk_ss, n0 + kr, p.sk, p.scale, g, t);
        }
    }
    kgd_cp_async_wait<0>();
}

} // namespace kg_attnb

#endif
