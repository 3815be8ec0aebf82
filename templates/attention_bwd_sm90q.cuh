/*
 * attention_bwd_sm90q.cuh - the attention backward's Hopper (sm_90a) dQ
 * kernel of the separate dq pass: attnb_q_tc (attention_bwd.cuh, mma.sync)
 * on warpgroup MMA, for head dims whose dQ rows fill a warpgroup's
 * registers (D 256: 64 x 256 f32 = 128 registers a thread). Session 32's
 * hq0, the D 256 default on compute capability 9.0 since round s33r1
 * (gen/attention_bwd.lua's M.wg_q / wgq_default; runtime/attention_bwd.c;
 * KG_ATTNB_TUNE=sep keeps attnb_q_tc). Grid: query
 * blocks x Hq x B, the last block first (the longest causal ones lead), as
 * attnb_q_tc.
 *
 * A block is 2 warpgroups on BM = 128 query rows of one query head;
 * warpgroup w owns rows [m0 + 64 w, + 64) and keeps their dQ (64 x D f32) in
 * registers across every key tile (no partials, no atomics: one block
 * writes each dq row, in a fixed key order). Per key tile (BN = 32 keys):
 *
 *   S  = Q_w K^T, dP = dout_w V^T    wgmma, A = Q / dout (shared, K-major),
 *                                    B = K / V (K-major), m64n32, over D
 *   P  = exp2(S scale log2 e - lse2), dS = P (dP - delta)   in registers
 *   dQ += dS K                       A = dS from registers, B = K (N-major),
 *                                    m64nD, 2 k16 steps
 *
 * Q and dout (BM x D each) load once; K and V tiles stream through 3
 * stages (cp.async from every thread, issued after the step's barrier),
 * the next tile ahead; a step's dQ wgmma is left running past the next
 * step's barrier (the tensor cores are not idle at it): it is complete at
 * the next step's first wgmma wait (wgmma groups complete in order), and
 * the stage it reads is refilled only two steps later, after a barrier
 * every thread reaches past that wait. (Session 32's hq1, the tile after
 * next loaded ahead and dQ waited for before the barrier, measured geomean
 * x 1.423 over attnb_q_tc against this one's x 1.461 in round s33r1 and was
 * removed.) One block barrier a step.
 *
 * Shared memory (D 256): Q and dout 64 KiB each, 3 stages of (K, V) 16 KiB
 * each, 1 KiB alignment slack: 230400 bytes (the device allows 232448); the
 * rows' lse2 and delta live in registers (two rows a thread). Every tile in
 * the 128-byte swizzle (attention_sm90.cuh's sw128 layout, D whole 64-element
 * panels). The masking and the rows past Sq / Sk are attnb_q_tc's
 * (bwd_masked, lse2 = +inf past Sq).
 */
#ifndef KG_ATTENTION_BWD_SM90Q_CUH
#define KG_ATTENTION_BWD_SM90Q_CUH

#include "attention_bwd_sm90d.cuh"

namespace kg_attnb
{

using kg_attn::load_sw128_rows;

template <typename T, int D, int KIND> __device__ __forceinline__ void attnb_q_wg(const kg_attnb_params &p)
{
    constexpr int NT = 256, BM = 128, BN = 32, E = 2, NS = 3;
    static_assert(D % 64 == 0 && D <= 256, "whole 64-element panels, an m64nD dQ wgmma");
    constexpr int QB = BM * D * E, KB = BN * D * E;
    extern __shared__ __align__(16) unsigned char smem[];
    const uint32_t raw = kgd_smem_addr(smem), a0 = (raw + 1023) & ~1023u; /* swizzle atoms are 1024-byte aligned */
    const uint32_t aQ = a0, aO = aQ + QB, aK0 = aO + QB; /* then NS stages of (K, V) */

    const int tid = threadIdx.x, wgi = tid >> 7, wq = (tid >> 5) & 3, lane = tid & 31, g = lane >> 2, t = lane & 3;
    /* the block's coordinates, base pointers and key tiles: attnb_q_tc's (attention_bwd.cuh) */
    const auto [h, b, m0, wr, causal, q, dout, k, v, mbase, ntiles] = q_block_of<KIND, BM, BN, E>(p, wgi, wq);

    load_sw128_rows<BM, D, NT>(aQ, q, p.q_ss, m0, p.sq, tid);
    load_sw128_rows<BM, D, NT>(aO, dout, p.do_ss, m0, p.sq, tid);
    /* tile 0, a commit group with Q and dout */
    if (ntiles > 0) {
        load_sw128_rows<BN, D, NT>(aK0, k, p.k_ss, 0, p.sk, tid);
        load_sw128_rows<BN, D, NT>(aK0 + (uint32_t)KB, v, p.v_ss, 0, p.sk, tid);
    }
    kgd_cp_async_commit();

    /* the rows' lse2 and delta (rows past Sq: lse2 = +inf, P = 0) */
    const float *rows = p.rows + ((int64_t)b * p.hq + h) * p.sq;
    float lse2[2], dl[2];
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const int r = m0 + wr + g + 8 * i;
        lse2[i] = r < p.sq ? rows[p.nrows + r] : CUDART_INF_F;
        dl[i] = r < p.sq ? rows[r] : 0.f;
    }

    float dq[D / 2];
#pragma unroll
    for (int i = 0; i < D / 2; i++)
        dq[i] = 0.f;

    for (int j = 0; j < ntiles; j++) {
        const int n0 = j * BN, st = j % NS;
        /* tile j (and Q, dout) arrived. The stage refilled below, (j + 1) %
           NS, was last read by step j - 2's dQ, complete since every thread
           is past step j - 1's first wgmma wait */
        kgd_cp_async_wait<0>();
        fence_async_smem();
        __syncthreads();
        if (j + 1 < ntiles) {
            const uint32_t nK = aK0 + (uint32_t)(((j + 1) % NS) * 2 * KB);
            load_sw128_rows<BN, D, NT>(nK, k, p.k_ss, n0 + BN, p.sk, tid);
            load_sw128_rows<BN, D, NT>(nK + KB, v, p.v_ss, n0 + BN, p.sk, tid);
        }
        kgd_cp_async_commit();
        const uint32_t aK = aK0 + (uint32_t)(st * 2 * KB), aV = aK + KB;

        /* S and dP: this warpgroup's 64 rows x 32 keys over all of D */
        float s[BN / 2], dp[BN / 2];
        wg_fence();
        wg_rows_x_tile<T, D, BM, BN>(s, aQ, aK, wgi);
        wg_commit();
        wg_rows_x_tile<T, D, BM, BN>(dp, aO, aV, wgi);
        wg_commit();
        wg_wait<1>(); /* S (and the previous step's dQ) */

        /* P: key kj = n0 + 8 n + 2 t + (x & 1) of row qi = m0 + wr + g + 8 (x >> 1) */
        const bool check = n0 + BN > p.sk || (causal && n0 + BN - 1 > m0 + wr + p.sk - p.sq);
#pragma unroll
        for (int n = 0; n < BN / 8; n++) {
#pragma unroll
            for (int x = 0; x < 4; x++) {
                const int i = x >> 1, qi = m0 + wr + g + 8 * i, kj = n0 + n * 8 + 2 * t + (x & 1);
                float xs;
                if (KIND == KG_ATTN_MASK || check)
                    xs = bwd_masked<KIND>(p, mbase, s[4 * n + x], qi, kj, check, causal);
                else
                    xs = s[4 * n + x] * p.scale_log2;
                s[4 * n + x] = ex2(xs - lse2[i]);
            }
        }
        wg_wait<0>(); /* dP */
        /* dS, packed as the A operand of dQ's k16 steps (the accumulator's
           n8 tiles 2 kk and 2 kk + 1) */
        uint32_t da[BN / 16][4];
#pragma unroll
        for (int n = 0; n < BN / 8; n++)
#pragma unroll
            for (int x = 0; x < 4; x++)
                dp[4 * n + x] = s[4 * n + x] * (dp[4 * n + x] - dl[x >> 1]);
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++)
            mma<T>::pack_a16(dp + 8 * kk, da[kk]);
        /* dQ += dS K: B = K's rows kk 16.. (+ 16) across its D / 64 panels */
        wg_fence();
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++)
            wgb<T, D>::rs(dq, da[kk], sw128_desc(aK + kk * 16 * 128, BN * 128, 1024), 1);
        wg_commit();
    }
    wg_wait<0>();
    kgd_cp_async_wait<0>();
    T *dq_ = (T *)p.dq + b * p.dq_sb + h * p.dq_sh;
    store_wg<T, D>(dq, dq_, p.dq_ss, m0 + wr, p.sq, p.scale, g, t);
}

} // namespace kg_attnb

#endif
