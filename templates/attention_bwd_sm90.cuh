/*
 * attention_bwd_sm90.cuh - the attention backward's key/value pass on
 * Hopper (sm_90a): the kvq kernel of attention_bwd.cuh (dK, dV and the dQ
 * partials of one lane's key blocks) with its five matrix products on
 * warpgroup MMA (wgmma.mma_async) instead of mma.sync.
 *
 * A block is NWG warpgroups; warpgroup w owns keys [n0 + 64 w, + 64) of the
 * block's BN = 64 NWG keys and keeps their dK and dV (64 x D each) in
 * registers for the whole walk over the query tiles (BM queries each) of
 * every query head of its group. Per step:
 *
 *   S^T  = K_w Q^T        wgmma, A = K (shared, K-major), B = Q (K-major)
 *   dP^T = V_w dout^T     likewise
 *   P^T  = exp2(S^T scale log2 e - lse2),  dS^T = P^T (dP^T - delta)
 *   dV  += P^T dout       A = P^T from registers, B = dout (N-major)
 *   dK  += dS^T Q         A = dS^T from registers, B = Q (N-major)
 *   dQ   = dS K           A = dS^T stored [key][query] in shared memory
 *                         (M-major), B = K (N-major); the warpgroups split
 *                         it by query rows (BM = 64 NWG) or by head-dim
 *                         panels (BM = 64); its accumulators start from the
 *                         lane's partial so far, then go back to it.
 *
 * Q, dout, K, V and dS^T live in shared memory in the 128-byte-swizzled
 * layout wgmma reads (per 64-element panel, row r's 16-byte chunk c at
 * chunk c ^ (r % 8)), filled by cp.async from every thread, two stages of
 * Q / dout / partial / rows so that the next step's loads overlap this one
 * (issued right after the step's first barrier, which also ends every
 * warp's use of the other stage: two block barriers a step). With DQD (the
 * D128 default) a step's dQ wgmma is issued by the next step behind its S^T
 * and dP^T, so that the tensor cores run it while P^T is formed; the dQ
 * rows are stored before that step's dS^T is written, and the barrier that
 * completed dS^T before dQ is the next step's first (still two a step).
 * The lanes, the partial layout and the masking are those of
 * attention_bwd.cuh's attnb_kvq_tc (attnb_dqsum adds the partials up).
 *
 * Head dims 32 and 96 (the default since session 32, measured in round
 * s31r1) take tiles of 32-element panels in the 64-byte swizzle (SWB 64),
 * with no padding; D 96 splits dQ by head-dim panels 64 + 32 (QC, QL).
 *
 * The wgmma and swizzle helpers are the forward's (attention_sm90.cuh).
 */
#ifndef KG_ATTENTION_BWD_SM90_CUH
#define KG_ATTENTION_BWD_SM90_CUH

#include "attention_bwd.cuh"
#include "attention_sm90.cuh" /* the Hopper helpers */
#include "kg_wgmma_bwd.cuh"

namespace kg_attnb
{

/* the forward's Hopper helpers (attention_sm90.cuh): wgmma fence, commit
   and wait, the generic-to-async proxy fence, 128-byte-swizzle descriptors
   and offsets, the 128- or 64-byte swizzle's offsets (swz_at) and swizzled
   tile loads by cp.async (load_swz, load_sw128) */
using kg_attn::fence_async_smem;
using kg_attn::load_sw128;
using kg_attn::load_swz;
using kg_attn::sw128_at;
using kg_attn::sw128_desc;
using kg_attn::swz_at;
using kg_attn::wg_commit;
using kg_attn::wg_fence;
using kg_attn::wg_wait;

/* Stores the first D columns of a warpgroup's 64 x N accumulator (this
   thread's rows row0 + g and + 8, wgmma's fragment order; N = D, or D padded
   to whole panels) times mul as T. */
template <typename T, int D, int N = D>
__device__ __forceinline__ void store_wg(const float (&acc)[N / 2], T *base, int64_t ld, int row0, int nrows, float mul,
                                         int g, int t)
{
    static_assert(D <= N && D % 8 == 0, "the stored columns are whole n8 tiles of the accumulator");
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const int r = row0 + g + 8 * i;
        if (r < nrows) {
#pragma unroll
            for (int n = 0; n < D / 8; n++)
                *(typename acc_pair<T>::type *)(base + (int64_t)r * ld + n * 8 + 2 * t) =
                    acc_pair<T>::make(acc[4 * n + 2 * i] * mul, acc[4 * n + 2 * i + 1] * mul);
        }
    }
}

/* The tiles of Q, dout, K and V: panels of SWB / 2 elements a row (SWB
   bytes), each panel ROWS x SWB bytes, with the swizzle of that width
   (swz_at, attention_sm90.cuh): SWB 128 (the forward's layout, sw128_at /
   sw128_desc), or SWB 64 (32-element panels, head dims that are a multiple
   of 32 without padding); load_swz fills them (load_sw128 is its 128-byte
   instance). */

/* wgmma shared memory descriptor of the SWB-byte swizzle (sw128_desc's
   fields; layout type 1: 128 bytes, 2: 64 bytes) */
template <int SWB> __device__ __forceinline__ uint64_t swz_desc(uint32_t addr, uint32_t lbo, uint32_t sbo)
{
    if constexpr (SWB == 128)
        return sw128_desc(addr, lbo, sbo);
    else
        return (uint64_t)((addr & 0x3FFFFu) >> 4) | (uint64_t)(lbo >> 4) << 16 | (uint64_t)(sbo >> 4) << 32 |
               (uint64_t)2 << 62;
}

/* acc = warpgroup wgi's 64 rows of the swizzled tile at aA (BN rows) times
   the tile at aB (BM rows), transposed, over D: S^T = K Q^T, dP^T = V dout^T.
   A k16 step is 32 bytes of a row: SWB / 32 steps a panel. */
template <typename T, int D, int BN, int BM, int SWB = 128>
__device__ __forceinline__ void wg_rows_x_tile(float (&acc)[BM / 2], uint32_t aA, uint32_t aB, int wgi)
{
    constexpr int KP = SWB / 32;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        const uint32_t ko = (kk / KP) * BN * SWB + wgi * 64 * SWB + (kk % KP) * 32;
        const uint32_t qo = (kk / KP) * BM * SWB + (kk % KP) * 32;
        wgb<T, BM>::ss(acc, swz_desc<SWB>(aA + ko, 16, 8 * SWB), swz_desc<SWB>(aB + qo, 16, 8 * SWB), kk > 0);
    }
}

/* P^T in place of a warp's S^T (keys n0 + kr + g (+ 8) of the key block,
   the BM queries of the tile at m0; wgmma's fragment order): masked (past
   Sk, causal, or KIND's additive mask: bwd_masked), then exp2 of S scale
   log2 e against the row's lse2 (sL, the tile's rows); attnb_kvq_wg's and
   attnb_kvq_wgd's. check: the caller's test that the block may hold a
   masked key (past Sk, or causal kj > m0 + Sk - Sq; else no key is
   tested); worked out in here from the block's width, it changed the
   kernels' PTX, so the callers keep it. Without an additive mask, key kj =
   n0 + kr + g + 8 (x >> 1) of query qi = m0 + 8 n + 2 t + (x & 1) is masked
   when 8 (x >> 1) >= kthr (past Sk) or, causal, when 8 (x >> 1) - 8 n -
   (x & 1) > cthr (kj > qi + Sk - Sq): two registers and compile-time
   left-hand sides. */
template <int BM, int KIND>
__device__ __forceinline__ void wg_pt(float (&s)[BM / 2], const kg_attnb_params &p, const float *mbase, const float *sL,
                                      int m0, int n0, int kr, int g, int t, bool check, bool causal)
{
    const int kthr = p.sk - n0 - kr - g;
    const int cthr = causal ? p.sk - p.sq + m0 + 2 * t - n0 - kr - g : INT_MAX;
#pragma unroll
    for (int n = 0; n < BM / 8; n++) {
#pragma unroll
        for (int x = 0; x < 4; x++) {
            const int ql = n * 8 + 2 * t + (x & 1);
            float xs;
            if (KIND == KG_ATTN_MASK)
                xs = bwd_masked<KIND>(p, mbase, s[4 * n + x], m0 + ql, n0 + kr + g + 8 * (x >> 1), check, causal);
            else if (check)
                xs = 8 * (x >> 1) >= kthr || 8 * (x >> 1) - 8 * n - (x & 1) > cthr ? -CUDART_INF_F
                                                                                   : s[4 * n + x] * p.scale_log2;
            else
                xs = s[4 * n + x] * p.scale_log2;
            s[4 * n + x] = ex2(xs - sL[ql]);
        }
    }
}

/* dS^T in place of n8 tile n of a warp's dP^T: P^T (dP^T - delta), delta
   the row's (sDl, the tile's rows) */
template <int BM>
__device__ __forceinline__ void wg_dst_n(float (&dp)[BM / 2], const float (&s)[BM / 2], const float *sDl, int n, int t)
{
#pragma unroll
    for (int x = 0; x < 4; x++) {
        const int ql = n * 8 + 2 * t + (x & 1);
        dp[4 * n + x] = s[4 * n + x] * (dp[4 * n + x] - sDl[ql]);
    }
}

/* dS^T in place of all of a warp's dP^T (wg_dst_n of every n8 tile) */
template <int BM>
__device__ __forceinline__ void wg_dst(float (&dp)[BM / 2], const float (&s)[BM / 2], const float *sDl, int t)
{
#pragma unroll
    for (int n = 0; n < BM / 8; n++)
        wg_dst_n<BM>(dp, s, sDl, n, t);
}

template <typename T, int D, int NWG, int BM, int KIND, bool SPL = false, bool DQD = false, int SWB = 128>
__device__ __forceinline__ void attnb_kvq_wg(const kg_attnb_params &p)
{
    /* DP: the head dim as the tiles hold it, whole panels of PW = SWB / 2
       elements (SWB 128: 64-element panels, D 64 / 128; SWB 64: 32-element
       panels, D 32 / 96). (Session 31's tilings padded to whole 64-element
       panels, D 32 and 96 in the 128-byte swizzle, lost to the 64-byte ones
       in round s31r1 and were removed: DP is D.) */
    constexpr int PW = SWB / 2, DP = D;
    static_assert(D % PW == 0, "the head dim is whole panels of the swizzle (no padding)");
    constexpr int NT = NWG * 128, BN = NWG * 64, E = 2, PF = D + 8;
    /* dQ split: by query rows (each warpgroup 64 rows, all of DP) or by
       head-dim panels (each warpgroup QC columns of the 64 rows: DP / NWG
       rounded up to whole panels, the last warpgroup the QL left; DP 96 in
       32-element panels: 64 and 32; else QL = QC) */
    constexpr bool QROWS = BM == 64 * NWG;
    constexpr int QC = QROWS ? DP : (DP / NWG + PW - 1) / PW * PW, QL = QROWS ? DP : DP - (NWG - 1) * QC;
    static_assert(BM == 64 * NWG || (BM == 64 && QL > 0 && QL <= QC && QL % 16 == 0), "dQ warpgroup split");
    static_assert(D % 32 == 0, "head dims of 32-element halves of panels");
    static_assert(SWB == 128 || SWB == 64, "128- or 64-byte swizzle");
    constexpr int QB = BM * DP * E, KB = BN * DP * E, SB = BN * BM * E;
    extern __shared__ __align__(16) unsigned char smem[];
    const uint32_t raw = kgd_smem_addr(smem), a0 = (raw + 1023) & ~1023u; /* swizzle atoms are 1024-byte aligned */
    const uint32_t aK = a0, aV = aK + KB, aQ0 = aV + KB; /* Q, dout: two stages of (Q, dout) */
    const uint32_t aS = aQ0 + 4 * QB;                     /* dS^T [BN keys][BM queries] */
    unsigned char *base = smem + (a0 - raw);
    unsigned char *sSb = base + (aS - a0);
    float *sF0 = (float *)(sSb + SB); /* two stages of the partial tile, BM x PF f32 */
    float *sRows = sF0 + 2 * BM * PF; /* two stages of lse2[BM], delta[BM] */

    const int tid = threadIdx.x, wgi = tid >> 7, wq = (tid >> 5) & 3, lane = tid & 31, g = lane >> 2, t = lane & 3;
    /* SPL: the instance for query splits (attention_bwd.cuh's split_of; grid
       x = lanes x splits); the other one, for none, keeps the registers of
       the kernel before splits (at 255 registers, its D64 instances spill) */
    const int c = SPL ? blockIdx.x % p.lanes : blockIdx.x, hk = blockIdx.y, b = blockIdx.z;
    const bool causal = KIND == KG_ATTN_CAUSAL || (KIND == KG_ATTN_MASK && p.causal);
    const int nkb = (p.sk + BN - 1) / BN;
    const int kr = wgi * 64 + wq * 16; /* this warp's 16 keys in the block */

    const char *k = (const char *)p.k + (b * p.k_sb + hk * p.k_sh) * E;
    const char *v = (const char *)p.v + (b * p.v_sb + hk * p.v_sh) * E;
    T *dk = (T *)p.dk + b * p.dk_sb + hk * p.dk_sh;
    T *dv = (T *)p.dv + b * p.dv_sb + hk * p.dv_sh;

    for (int j = 0, kb = c; kb < nkb; j++, kb = lane_block(p.lanes, c, j)) {
        const int n0 = kb * BN;
        const bool first = j == 0;
        __syncthreads(); /* the previous key block is done with K, V */
        load_swz<BN, D, NT, SWB>(aK, k, p.k_ss, n0, p.sk, tid);
        load_swz<BN, D, NT, SWB>(aV, v, p.v_ss, n0, p.sk, tid);
        kgd_cp_async_commit();

        /* the block's query split (split_of; none: all of them), worked out
           again for each key block (fewer registers held over the walk) */
        int h0 = 0, nh = p.group, mlo = 0, mhi = p.sq;
        if (SPL)
            split_of<BM>(p, blockIdx.x / p.lanes, h0, nh, mlo, mhi);
        /* (!SPL: the expressions of the kernel before splits, term for term) */
        int mstart = SPL ? mlo : 0;
        if (causal)
            mstart = SPL ? max(mlo, max(0, n0 - (p.sk - p.sq)) / BM * BM) : max(0, n0 - (p.sk - p.sq)) / BM * BM;
        const int mend = SPL ? mhi : p.sq;
        const int nmt = mstart < mend ? (mend - mstart + BM - 1) / BM : 0, nsteps = (SPL ? nh : p.group) * nmt;
        /* p.direct (one lane): the first query tile that the next key block
           reaches; this block's steps below it are the rows' last */
        const int mnext = kb + 1 >= nkb ? INT_MAX : causal ? max(0, n0 + BN - (p.sk - p.sq)) / BM * BM : 0;
        /* the query tile of step `it`: upwards from mstart, or (p.mrev) from
           the last tile down, so that under the causal rule the lanes of a
           head, whose key blocks start at different tiles, read the same Q
           and dout tiles at about the same time */
        auto m_at = [&](int it) {
            const int mt = it % nmt;
            return mstart + (p.mrev ? nmt - 1 - mt : mt) * BM;
        };

        float dva[DP / 2], dka[DP / 2];
#pragma unroll
        for (int i = 0; i < DP / 2; i++)
            dva[i] = dka[i] = 0.f;

        /* the loads of step `it` into stage `st`: Q, dout, the partial so far
           (none in the lane's first key block) and the rows' lse2 and delta
           (4-byte cp.async; rows past Sq read 0: their Q and dout rows are
           0 too, so every product of theirs is 0 whatever P is) */
        auto issue = [&](int it, int st) {
            const int h = hk * p.group + (SPL ? h0 : 0) + it / nmt, m0 = m_at(it);
            const char *q = (const char *)p.q + (b * p.q_sb + h * p.q_sh) * E;
            const char *dout = (const char *)p.dout + (b * p.do_sb + h * p.do_sh) * E;
            load_swz<BM, D, NT, SWB>(aQ0 + 2 * st * QB, q, p.q_ss, m0, p.sq, tid);
            load_swz<BM, D, NT, SWB>(aQ0 + 2 * st * QB + QB, dout, p.do_ss, m0, p.sq, tid);
            const char *part = (const char *)(p.dqp + ((int64_t)c * p.nrows + ((int64_t)b * p.hq + h) * p.sq) * D);
            load_tile<BM, D, PF, 4, NT>(kgd_smem_addr(sF0 + st * BM * PF), part, D, m0, first ? 0 : p.sq, tid);
            static_assert(BM <= NT, "rows per step");
            if (tid < BM) {
                const float *rows = p.rows + ((int64_t)b * p.hq + h) * p.sq + m0 + tid;
                const bool ok = m0 + tid < p.sq;
                cp_async4(kgd_smem_addr(sRows + st * 2 * BM + tid), ok ? rows + p.nrows : p.rows, ok);
                cp_async4(kgd_smem_addr(sRows + st * 2 * BM + BM + tid), ok ? rows : p.rows, ok);
            }
        };
        /* dQ of a step: this warpgroup's rows qr.. (+ 64) x columns qc.. (+ QC)
           of the query tile, kept in registers from its wgmma to its store */
        const int qr = QROWS ? wgi * 64 : 0, qc = QROWS ? 0 : wgi * QC;
        /* every n8 tile of every warpgroup's dq is a real column (an even
           split); else (the last warpgroup's QL < QC: D 96 in 32-element
           panels) the tiles of qc + 8 n < D only */
        constexpr bool QALL = D == DP && QL == QC;
        float dq[QC / 2];
        /* the store of dq (rows m0.. of query head h) into the lane's partial,
           or (p.direct, one lane, no later key block reaching the rows) into
           dq itself, the bits dqsum would write: one walk over this thread's
           rows and n8 tiles, put(row, tile, x, y) storing a column pair; the
           tiles of columns qc + 8 n < D only (QALL: every tile) */
        auto walk_dq = [&](int m0, auto put) {
#pragma unroll
            for (int i = 0; i < 2; i++) {
                const int r = m0 + qr + wq * 16 + g + 8 * i;
                if (r < p.sq) {
#pragma unroll
                    for (int n = 0; n < QC / 8; n++)
                        if (QALL || qc + n * 8 < D)
                            put(r, n, dq[4 * n + 2 * i], dq[4 * n + 2 * i + 1]);
                }
            }
        };
        auto store_dq = [&](int h, int m0) {
            if (p.direct && m0 < mnext) {
                T *dq_ = (T *)p.dq + b * p.dq_sb + h * p.dq_sh;
                walk_dq(m0, [&](int r, int n, float x, float y) {
                    *(uint32_t *)(dq_ + (int64_t)r * p.dq_ss + qc + n * 8 + 2 * t) = mma<T>::pack(x * p.scale, y * p.scale);
                });
            } else {
                float *part = p.dqp + ((int64_t)c * p.nrows + ((int64_t)b * p.hq + h) * p.sq) * D;
                walk_dq(m0, [&](int r, int n, float x, float y) {
                    *(float2 *)&part[(int64_t)r * D + qc + n * 8 + 2 * t] = make_float2(x, y);
                });
            }
        };
        /* dq = the partial so far (stage st's tile; zeros in the lane's first
           key block); the columns past D (QL < QC: the last warpgroup's
           tiles n >= QL / 8) start from 0 */
        auto load_dq = [&](int st) {
            const float *sF = sF0 + st * BM * PF;
#pragma unroll
            for (int n = 0; n < QC / 8; n++)
#pragma unroll
                for (int i = 0; i < 2; i++) {
                    if (QALL || qc + n * 8 < D) {
                        const float2 o = *(const float2 *)&sF[(qr + wq * 16 + g + 8 * i) * PF + qc + n * 8 + 2 * t];
                        dq[4 * n + 2 * i] = o.x;
                        dq[4 * n + 2 * i + 1] = o.y;
                    } else {
                        dq[4 * n + 2 * i] = dq[4 * n + 2 * i + 1] = 0.f;
                    }
                }
        };
        /* dq += dS K (dS^T in shared memory), as wgmma (no fence, no commit),
           QC wide in every warpgroup: no wgmma in a warpgroup-dependent
           branch (ptxas serializes every wgmma of the kernel for one, C7520).
           QL < QC (D 96 in 32-element panels: QC 64, QL 32): the last
           warpgroup's product also runs 64 wide, from K's panel 2 into its
           "panel 3", the first panel of the V tile (aV = aK + KB, KB = 3
           panels of BN * SWB; the reads end at aK + 4 * BN * SWB = aV +
           BN * SWB <= aV + KB, inside the block's shared memory, and V is
           written only where K is); they feed dq's n8 tiles QL / 8 .. QC / 8
           - 1 only (column n of the product reads column n of B), which
           load_dq sets to 0 and walk_dq never stores (qc + 8 n >= D) */
        auto mma_dq = [&]() {
            static_assert(QL == QC || NWG * QC <= 2 * DP, "the last warpgroup's QC-wide B stays in K, V");
#pragma unroll
            for (int kk = 0; kk < BN / 16; kk++)
                wgt<T, QC>::sstt(dq, sw128_desc(aS + (qr / 64) * BN * 128 + kk * 16 * 128, BN * 128, 1024),
                                 swz_desc<SWB>(aK + (qc / PW) * BN * SWB + kk * 16 * SWB, BN * SWB, 8 * SWB), 1);
        };
        /* DQD (else dQ's wgmma issued after a barrier that completes dS^T,
           waited for and stored in its own step): a step's dQ wgmma is issued
           by the next step right after its S^T and dP^T (on the tensor cores
           while P^T is formed; pend, its query head ph and tile pm0) and
           stored before that step's dS^T is written (after a block barrier:
           every warpgroup's dQ reads all of dS^T); the next step's first
           barrier completes dS^T, one barrier a step fewer. */
        bool pend = false;
        int ph = 0, pm0 = 0;
        if (nsteps > 0)
            issue(0, 0);
        kgd_cp_async_commit();
        for (int it = 0; it < nsteps; it++) {
            const int st = it & 1;
            const int h = hk * p.group + (SPL ? h0 : 0) + it / nmt, m0 = m_at(it);
            const float *mbase = KIND == KG_ATTN_MASK ? p.mask + b * p.m_sb + h * p.m_sh : nullptr;
            /* this step's tiles (and K, V) arrived, and every warp is done
               with the previous step: its stage and dS^T may be refilled */
            kgd_cp_async_wait<0>();
            fence_async_smem();
            if (DQD)
                wg_wait<0>(); /* the previous step's dV / dK (they read the stage refilled below) */
            __syncthreads();
            if (it + 1 < nsteps)
                issue(it + 1, st ^ 1);
            kgd_cp_async_commit();
            const uint32_t aQ = aQ0 + 2 * st * QB, aO = aQ + QB;
            const float *sL = sRows + st * 2 * BM, *sDl = sL + BM;

            /* S^T and dP^T: 64 keys x BM queries, two groups: P^T is formed
               while dP^T is still on the tensor cores */
            float s[BM / 2], dp[BM / 2];
            wg_fence();
            wg_rows_x_tile<T, D, BN, BM, SWB>(s, aK, aQ, wgi);
            wg_commit();
            wg_rows_x_tile<T, D, BN, BM, SWB>(dp, aV, aO, wgi);
            wg_commit();
            if (DQD) {
                if (pend)
                    mma_dq(); /* the previous step's dQ */
                wg_commit();
            }
            if (DQD)
                wg_wait<2>();
            else
                wg_wait<1>();

            /* P^T */
            const bool check = n0 + BN > p.sk || (causal && n0 + BN - 1 > m0 + p.sk - p.sq);
            wg_pt<BM, KIND>(s, p, mbase, sL, m0, n0, kr, g, t, check, causal);
            wg_wait<0>();
            /* dS^T, also into shared memory for dQ */
            if (DQD) {
                wg_dst<BM>(dp, s, sDl, t);
                if (pend)
                    store_dq(ph, pm0);
                __syncthreads(); /* every warpgroup's dQ is done with the previous dS^T */
            }
#pragma unroll
            for (int n = 0; n < BM / 8; n++) {
                if (!DQD)
                    wg_dst_n<BM>(dp, s, sDl, n, t);
                *(uint32_t *)(sSb + sw128_at<BN>(kr + g, n) + 4 * t) = mma<T>::pack(dp[4 * n], dp[4 * n + 1]);
                *(uint32_t *)(sSb + sw128_at<BN>(kr + g + 8, n) + 4 * t) = mma<T>::pack(dp[4 * n + 2], dp[4 * n + 3]);
            }
            fence_async_smem();

            /* dV += P^T dout, dK += dS^T Q */
            {
                uint32_t pa[BM / 16][4], da[BM / 16][4];
#pragma unroll
                for (int kk = 0; kk < BM / 16; kk++) {
                    mma<T>::pack_a16(s + 8 * kk, pa[kk]);
                    mma<T>::pack_a16(dp + 8 * kk, da[kk]);
                }
                wg_fence();
#pragma unroll
                for (int kk = 0; kk < BM / 16; kk++)
                    wgb<T, DP>::rs(dva, pa[kk], swz_desc<SWB>(aO + kk * 16 * SWB, BM * SWB, 8 * SWB), 1);
#pragma unroll
                for (int kk = 0; kk < BM / 16; kk++)
                    wgb<T, DP>::rs(dka, da[kk], swz_desc<SWB>(aQ + kk * 16 * SWB, BM * SWB, 8 * SWB), 1);
                wg_commit();
            }
            if (DQD) {
                /* this step's dQ: the partial into registers (its stage is
                   refilled after the next barrier); issued by the next step */
                load_dq(st);
                pend = true, ph = h, pm0 = m0;
                continue;
            }
            __syncthreads(); /* dS^T complete */

            /* dQ: this warpgroup's 64 rows x QC columns, from the partial so far */
            load_dq(st);
            wg_fence();
            mma_dq();
            wg_commit();
            wg_wait<0>();
            store_dq(h, m0);
        }
        if (DQD) {
            /* the last step's dQ (every warpgroup's dS^T written) */
            __syncthreads();
            if (pend) {
                wg_fence();
                mma_dq();
            }
            wg_commit();
            wg_wait<0>();
            if (pend)
                store_dq(ph, pm0);
        }
        kgd_cp_async_wait<0>();

        if (SPL) {
            store_wg<float, D, DP>(dva, split_dkv<D>(p, blockIdx.x / p.lanes, 1, b, hk), D, n0 + kr, p.sk, 1.f, g, t);
            store_wg<float, D, DP>(dka, split_dkv<D>(p, blockIdx.x / p.lanes, 0, b, hk), D, n0 + kr, p.sk, 1.f, g, t);
        } else {
            store_wg<T, D, DP>(dva, dv, p.dv_ss, n0 + kr, p.sk, 1.f, g, t);
            store_wg<T, D, DP>(dka, dk, p.dk_ss, n0 + kr, p.sk, p.scale, g, t);
        }
    }
    kgd_cp_async_wait<0>();
}

} // namespace kg_attnb

#endif
