/*
 * attention_bwd.cuh - flash attention backward (FlashAttention-2's
 * algorithm): given q, k, v, out, dout and the forward's lse, the gradients
 *
 *     P  = exp(scale q k^T + mask - lse)        (recomputed, never stored)
 *     dV = P^T dout        dP = dout v^T        dS = P * (dP - delta)
 *     dQ = scale dS k      dK = scale dS^T q    delta = rowsum(dout * out)
 *
 * Kernels, launched in this order on one stream: the fused path pre + kvq +
 * dqsum (described at attnb_kvq_tc; the default where gen/attention_bwd.lua
 * lists kvq tunings: every dtype and head dim but f16 / bf16 D = 256, with
 * the Hopper kvq of attention_bwd_sm90.cuh on sm_90 for D 64 and 128), or
 * the separate path pre + kv + q (the others, and KG_ATTNB_TUNE=sep):
 *   pre   one warp per query row: delta and lse2 = lse * log2 e (+inf for a
 *         row whose keys are all masked, so that every P of it is
 *         exp2(x - inf) = 0 and its gradients are 0) into the scratch rows.
 *   kv    one block per key block of one (batch, kv head): walks the query
 *         heads of its group in order and, for each, the query tiles; dK and
 *         dV stay in registers for the whole walk, so the GQA sum over the
 *         group happens in a fixed order without atomics. Written once.
 *   q     one block per query block of one (batch, head): walks the key
 *         tiles, recomputing S and dP, and accumulates dQ in registers.
 *         Separate from kv (S and dP are computed twice) so that dQ needs no
 *         atomics and no per-key-block partials: bitwise reproducible.
 *
 * Tensor-core kernels (f16, bf16): mma.sync m16n8k16 with f32 accumulation,
 * operands through ldmatrix from shared memory filled by cp.async, two stages
 * (the next Q/dout tile in kv, the next K/V tile in q, load while the
 * current one computes). kv takes
 * the keys as the M dimension (each warp owns 16 keys and computes S^T and
 * dP^T for them), so P^T and dS^T go from the accumulators straight into A
 * fragments of dV += P^T dout and dK += dS^T q. SPLIT (D = 256): two warps
 * per 16 keys, one accumulating dV and one dK (each computes S^T; only the
 * dK warp computes dP^T), which halves the accumulators per thread.
 * FP32 kernels: FFMA on 16 x 16 threads, P and dS through shared memory;
 * and attnb_kvq_tc for T = float, the products in split TF32 on the tensor
 * cores (attention_bwd_x3.cuh; the default at D 32, 64, 96 and 128).
 *
 * Rows and keys past the ends: tiles are zero-filled; a query row past Sq
 * has lse2 = +inf (P = 0), a key past Sk is masked in q and never written
 * in kv (a key's gradients depend on that key alone).
 */
#ifndef KG_ATTENTION_BWD_CUH
#define KG_ATTENTION_BWD_CUH

#include "attention.cuh" /* mma, load_tile, ex2, fvec (read-only) */
#include "kg_device.cuh"
#include "attention_bwd_params.h"
#include "attention_bwd_x3.cuh"

namespace kg_attnb
{

using kg_attn::ex2;
using kg_attn::load_tile;
using kg_attn::mma;

template <typename T> __device__ __forceinline__ float to_f(T x);
template <> __device__ __forceinline__ float to_f<float>(float x) { return x; }
template <> __device__ __forceinline__ float to_f<__half>(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ float to_f<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }

/* ---- pre: delta and lse2 -------------------------------------------------- */

template <typename T, int D> __device__ __forceinline__ void attnb_pre(const kg_attnb_params &p)
{
    const int lane = threadIdx.x & 31;
    const int64_t per_head = p.sq, per_batch = (int64_t)p.hq * p.sq;
    const int64_t stride = (int64_t)gridDim.x * (blockDim.x >> 5);
    for (int64_t r = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); r < p.nrows; r += stride) {
        const int64_t b = r / per_batch, h = (r / per_head) % p.hq, i = r % per_head;
        const T *o = (const T *)p.out + b * p.o_sb + h * p.o_sh + i * p.o_ss;
        const T *g = (const T *)p.dout + b * p.do_sb + h * p.do_sh + i * p.do_ss;
        float acc = 0.f;
#pragma unroll
        for (int d = lane; d < D; d += 32)
            acc = fmaf(to_f(o[d]), to_f(g[d]), acc);
#pragma unroll
        for (int w = 16; w > 0; w >>= 1)
            acc += kgd_shfl_xor(acc, w);
        if (lane == 0) {
            const float l = p.lse[b * p.l_sb + h * p.l_sh + i * p.l_ss];
            p.rows[r] = acc;
            p.rows[p.nrows + r] = l == -CUDART_INF_F ? CUDART_INF_F : l * KG_LOG2E;
        }
    }
}

/* The score of (query qi, key kj) in the log2 domain after scaling, the
   additive mask and the causal rule (when `check`); keys past Sk count as
   masked when `check`. */
template <int KIND>
__device__ __forceinline__ float bwd_masked(const kg_attnb_params &p, const float *mbase, float s, int qi, int kj,
                                            bool check, bool causal)
{
    float x = s * p.scale_log2;
    if (KIND == KG_ATTN_MASK && qi < p.sq && kj < p.sk)
        x += mbase[(int64_t)qi * p.m_sq + (int64_t)kj * p.m_sk] * KG_LOG2E;
    if (check && (kj >= p.sk || (causal && kj > qi + p.sk - p.sq)))
        x = -CUDART_INF_F;
    return x;
}

/* 4 bytes global -> shared; zero-filled when !pred. */
__device__ __forceinline__ void cp_async4(uint32_t dst, const void *src, bool pred)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(pred ? 4 : 0));
}

/* Two adjacent accumulator values as T, stored in one access: a packed
   pair for the 2-byte types, a float2 for f32 (a query split's partials). */
template <typename T> struct acc_pair {
    using type = uint32_t;
    static __device__ __forceinline__ type make(float a, float b) { return mma<T>::pack(a, b); }
};
template <> struct acc_pair<float> {
    using type = float2;
    static __device__ __forceinline__ type make(float a, float b) { return make_float2(a, b); }
};

/* Stores a warp's 16 x D accumulator (rows row0 + g, + 8) times `mul` as T. */
template <typename T, int ND>
__device__ __forceinline__ void store_acc(const float (&acc)[ND][4], T *base, int64_t ld, int row0, int nrows, int col0,
                                          float mul, int g, int t)
{
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const int r = row0 + g + 8 * i;
        if (r < nrows) {
#pragma unroll
            for (int d = 0; d < ND; d++)
                *(typename acc_pair<T>::type *)(base + (int64_t)r * ld + col0 + d * 8 + 2 * t) =
                    acc_pair<T>::make(acc[d][2 * i] * mul, acc[d][2 * i + 1] * mul);
        }
    }
}

/* ---- f16 / bf16: kv ----------------------------------------------------------- */

/* The row pitch pad (elements) of the tensor-core kernels' tiles: 8 for the
   2-byte types (ldmatrix), 4 for f32 (split TF32, attention_bwd_x3.cuh:
   32-bit loads free of bank conflicts at pitch = 4 mod 32). */
template <typename T> __host__ __device__ constexpr int tc_pad() { return sizeof(T) == 4 ? 4 : 8; }

/* The step of the kv walk that the kv and kvq kernels share: a warp owns 16
   keys (rows kr0.. of the K and V tiles, pitch D + 8) and the step a BM-query
   tile (Q, dout at aQ, aO). */

/* Issues the cp.async loads of a step's Q and dout tiles (query rows m0.. of
   head h) into aQ and aQ + the tile's bytes; the rows' lse2 and delta come
   back in registers (put into shared memory after the step's compute by
   kv_put_rows, not stalling it). E: the element size (4: f32, pitch D + 4). */
template <int D, int BM, int NT, int E = 2>
__device__ __forceinline__ void kv_issue(const kg_attnb_params &p, int b, int h, int m0, uint32_t aQ, int tid,
                                         float (&rl)[2], float (&rd)[2])
{
    constexpr int P = D + (E == 4 ? 4 : 8);
    const char *q = (const char *)p.q + (b * p.q_sb + h * p.q_sh) * E;
    const char *dout = (const char *)p.dout + (b * p.do_sb + h * p.do_sh) * E;
    load_tile<BM, D, P, E, NT>(aQ, q, p.q_ss, m0, p.sq, tid);
    load_tile<BM, D, P, E, NT>(aQ + BM * P * E, dout, p.do_ss, m0, p.sq, tid);
    const float *rows = p.rows + ((int64_t)b * p.hq + h) * p.sq;
    static_assert(BM <= 2 * NT, "rows per step");
#pragma unroll
    for (int x = 0; x < 2; x++) {
        const int i = tid + x * NT;
        const bool ok = i < BM && m0 + i < p.sq;
        rl[x] = ok ? rows[p.nrows + m0 + i] : CUDART_INF_F;
        rd[x] = ok ? rows[m0 + i] : 0.f;
    }
}

/* The rows kv_issue returned into stage st of sRows (lse2[BM], delta[BM]). */
template <int BM, int NT>
__device__ __forceinline__ void kv_put_rows(float *sRows, int st, const float (&rl)[2], const float (&rd)[2], int tid)
{
#pragma unroll
    for (int x = 0; x < 2; x++) {
        const int i = tid + x * NT;
        if (i < BM) {
            sRows[st * 2 * BM + i] = rl[x];
            sRows[st * 2 * BM + BM + i] = rd[x];
        }
    }
}

/* S^T = K Q^T and (do_dk) dP^T = V dout^T for the warp's 16 keys x BM queries. */
template <typename T, int D, int BM>
__device__ __forceinline__ void kv_scores(float (&s)[BM / 8][4], float (&dp)[BM / 8][4], uint32_t aK, uint32_t aV,
                                          uint32_t aQ, uint32_t aO, int kr0, int lane, bool do_dk)
{
    constexpr int P = D + 8, E = 2, KD = D / 16;
    const int a_row = lane & 15, a_col = (lane >> 4) * 8;
    const int b_row = (lane & 7) + ((lane >> 4) << 3), b_col = ((lane >> 3) & 1) * 8;
#pragma unroll
    for (int n = 0; n < BM / 8; n++)
        s[n][0] = s[n][1] = s[n][2] = s[n][3] = dp[n][0] = dp[n][1] = dp[n][2] = dp[n][3] = 0.f;
    /* acc += rows kr0.. of tile aA (16 keys) times the BM rows of tile aB, transposed */
    auto rows_x_tile = [&](float (&acc)[BM / 8][4], uint32_t aA, uint32_t aB) {
#pragma unroll
        for (int kk = 0; kk < KD; kk++) {
            uint32_t a[4];
            kgd_ldmatrix_x4(a, aA + ((kr0 + a_row) * P + kk * 16 + a_col) * E);
#pragma unroll
            for (int nn = 0; nn < BM / 16; nn++) {
                uint32_t bf[4];
                kgd_ldmatrix_x4(bf, aB + ((nn * 16 + b_row) * P + kk * 16 + b_col) * E);
                mma<T>::run(acc[2 * nn], a, bf[0], bf[1]);
                mma<T>::run(acc[2 * nn + 1], a, bf[2], bf[3]);
            }
        }
    };
    rows_x_tile(s, aK, aQ);
    if (do_dk)
        rows_x_tile(dp, aV, aO);
}

/* P^T into s and (do_dk) dS^T into dp for keys kb + g (+ 8) x queries m0..,
   with the mask and, where `check`, the causal rule and the end of the keys
   (bwd_masked). */
template <int KIND, int BM>
__device__ __forceinline__ void kv_probs(const kg_attnb_params &p, const float *mbase, float (&s)[BM / 8][4],
                                         float (&dp)[BM / 8][4], const float *sL, const float *sDl, int kb, int m0,
                                         bool check, bool causal, bool do_dk, int g, int t)
{
#pragma unroll
    for (int n = 0; n < BM / 8; n++) {
#pragma unroll
        for (int x = 0; x < 4; x++) {
            const int kj = kb + g + 8 * (x >> 1), ql = n * 8 + 2 * t + (x & 1);
            float xs;
            if (KIND == KG_ATTN_MASK || check)
                xs = bwd_masked<KIND>(p, mbase, s[n][x], m0 + ql, kj, check, causal);
            else
                xs = s[n][x] * p.scale_log2;
            const float pr = ex2(xs - sL[ql]);
            s[n][x] = pr;
            if (do_dk)
                dp[n][x] = pr * (dp[n][x] - sDl[ql]);
        }
    }
}

/* dV += P^T dout (acc[0]) and dK += dS^T Q (acc[NACC - 1]); with SPLIT the
   warp's one of them (role 0: dV, 1: dK, into acc[0]). */
template <typename T, int D, int BM, bool SPLIT, int NACC>
__device__ __forceinline__ void kv_accumulate(float (&acc)[NACC][D / 8][4], const float (&s)[BM / 8][4],
                                              const float (&dp)[BM / 8][4], uint32_t aQ, uint32_t aO, int role,
                                              int lane)
{
    constexpr int P = D + 8, E = 2, KD = D / 16;
    const int v_row = (lane & 7) + (((lane >> 3) & 1) << 3), v_col = (lane >> 4) * 8;
#pragma unroll
    for (int kk = 0; kk < BM / 16; kk++) {
        uint32_t pa[4];
        /* P^T for dV; with SPLIT, the dK warps take dS^T instead */
        const bool ps = !SPLIT || role == 0;
#define KG_SEL(n, x) (ps ? s[n][x] : dp[n][x])
        pa[0] = mma<T>::pack(KG_SEL(2 * kk, 0), KG_SEL(2 * kk, 1));
        pa[1] = mma<T>::pack(KG_SEL(2 * kk, 2), KG_SEL(2 * kk, 3));
        pa[2] = mma<T>::pack(KG_SEL(2 * kk + 1, 0), KG_SEL(2 * kk + 1, 1));
        pa[3] = mma<T>::pack(KG_SEL(2 * kk + 1, 2), KG_SEL(2 * kk + 1, 3));
#undef KG_SEL
        if (SPLIT) {
            const uint32_t base = role == 0 ? aO : aQ;
#pragma unroll
            for (int dn = 0; dn < KD; dn++) {
                uint32_t bf[4];
                kgd_ldmatrix_x4_trans(bf, base + ((kk * 16 + v_row) * P + dn * 16 + v_col) * E);
                mma<T>::run(acc[0][2 * dn], pa, bf[0], bf[1]);
                mma<T>::run(acc[0][2 * dn + 1], pa, bf[2], bf[3]);
            }
        } else {
            uint32_t da[4];
            da[0] = mma<T>::pack(dp[2 * kk][0], dp[2 * kk][1]);
            da[1] = mma<T>::pack(dp[2 * kk][2], dp[2 * kk][3]);
            da[2] = mma<T>::pack(dp[2 * kk + 1][0], dp[2 * kk + 1][1]);
            da[3] = mma<T>::pack(dp[2 * kk + 1][2], dp[2 * kk + 1][3]);
#pragma unroll
            for (int dn = 0; dn < KD; dn++) {
                uint32_t bf[4];
                kgd_ldmatrix_x4_trans(bf, aO + ((kk * 16 + v_row) * P + dn * 16 + v_col) * E);
                mma<T>::run(acc[0][2 * dn], pa, bf[0], bf[1]);
                mma<T>::run(acc[0][2 * dn + 1], pa, bf[2], bf[3]);
                kgd_ldmatrix_x4_trans(bf, aQ + ((kk * 16 + v_row) * P + dn * 16 + v_col) * E);
                mma<T>::run(acc[NACC - 1][2 * dn], da, bf[0], bf[1]);
                mma<T>::run(acc[NACC - 1][2 * dn + 1], da, bf[2], bf[3]);
            }
        }
    }
}

/* NKW key warps (16 keys each, BN = 16 NKW keys per block), BM queries per
   tile; SPLIT doubles the warps (dV warps, then dK warps). */
template <typename T, int D, int NKW, int BM, bool SPLIT, int KIND>
__device__ __forceinline__ void attnb_kv_tc(const kg_attnb_params &p)
{
    constexpr int NT = NKW * 32 * (SPLIT ? 2 : 1), BN = NKW * 16, P = D + 8, E = 2;
    constexpr int NQ = BM / 8, ND = D / 8, NACC = SPLIT ? 1 : 2;
    extern __shared__ __align__(16) unsigned char smem[];
    /* K, V; then two stages of (Q, dout) tiles and of their rows' lse2, delta */
    T *sK = (T *)smem;
    T *sV = sK + BN * P;
    T *sQ0 = sV + BN * P;
    float *sRows = (float *)(sQ0 + 4 * BM * P);
    const uint32_t aK = kgd_smem_addr(sK), aV = kgd_smem_addr(sV);

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const int kw = warp % NKW, role = SPLIT ? warp / NKW : 0;
    const bool do_dv = !SPLIT || role == 0, do_dk = !SPLIT || role == 1;
    const int hk = blockIdx.y, b = blockIdx.z;
    const int n0 = blockIdx.x * BN;
    const bool causal = KIND == KG_ATTN_CAUSAL || (KIND == KG_ATTN_MASK && p.causal);

    const char *k = (const char *)p.k + (b * p.k_sb + hk * p.k_sh) * E;
    const char *v = (const char *)p.v + (b * p.v_sb + hk * p.v_sh) * E;
    load_tile<BN, D, P, E, NT>(aK, k, p.k_ss, n0, p.sk, tid);
    load_tile<BN, D, P, E, NT>(aV, v, p.v_ss, n0, p.sk, tid);
    kgd_cp_async_commit();

    /* the first query that sees key n0 under the causal rule */
    int mstart = 0;
    if (causal)
        mstart = max(0, n0 - (p.sk - p.sq)) / BM * BM;
    const int kr0 = kw * 16; /* the warp's keys in the block */

    float acc[NACC][ND][4];
#pragma unroll
    for (int a = 0; a < NACC; a++)
#pragma unroll
        for (int d = 0; d < ND; d++)
            acc[a][d][0] = acc[a][d][1] = acc[a][d][2] = acc[a][d][3] = 0.f;

    /* the (query head, query tile) steps, flattened so that the next step's
       tiles load while this one computes */
    const int nmt = mstart < p.sq ? (p.sq - mstart + BM - 1) / BM : 0, nsteps = p.group * nmt;
    if (nsteps > 0) {
        float rl[2], rd[2];
        kv_issue<D, BM, NT>(p, b, hk * p.group, mstart, kgd_smem_addr(sQ0), tid, rl, rd);
        kv_put_rows<BM, NT>(sRows, 0, rl, rd, tid);
    }
    kgd_cp_async_commit();
    for (int it = 0; it < nsteps; it++) {
        const int st = it & 1;
        const int h = hk * p.group + it / nmt, m0 = mstart + (it % nmt) * BM;
        const float *mbase = KIND == KG_ATTN_MASK ? p.mask + b * p.m_sb + h * p.m_sh : nullptr;
        float nl[2], nd[2];
        if (it + 1 < nsteps)
            kv_issue<D, BM, NT>(p, b, hk * p.group + (it + 1) / nmt, mstart + ((it + 1) % nmt) * BM,
                                kgd_smem_addr(sQ0 + 2 * (st ^ 1) * BM * P), tid, nl, nd);
        kgd_cp_async_commit();
        {
            kgd_cp_async_wait<1>(); /* this step's tiles (and K, V) arrived */
            __syncthreads();
            const uint32_t aQ = kgd_smem_addr(sQ0 + 2 * st * BM * P), aO = aQ + BM * P * E;
            const float *sL = sRows + st * 2 * BM, *sDl = sL + BM;
            float s[NQ][4], dp[NQ][4];
            kv_scores<T, D, BM>(s, dp, aK, aV, aQ, aO, kr0, lane, do_dk);
            /* keys past Sk need no mask (never written) */
            const bool check = causal && n0 + BN - 1 > m0 + p.sk - p.sq;
            kv_probs<KIND, BM>(p, mbase, s, dp, sL, sDl, n0 + kr0, m0, check, causal, do_dk, g, t);
            kv_accumulate<T, D, BM, SPLIT, NACC>(acc, s, dp, aQ, aO, role, lane);
        }
        if (it + 1 < nsteps)
            kv_put_rows<BM, NT>(sRows, st ^ 1, nl, nd, tid);
        __syncthreads(); /* every warp is done with stage st before it is refilled */
    }
    kgd_cp_async_wait<0>();

    T *dk = (T *)p.dk + b * p.dk_sb + hk * p.dk_sh;
    T *dv = (T *)p.dv + b * p.dv_sb + hk * p.dv_sh;
    if (do_dv)
        store_acc<T, ND>(acc[0], dv, p.dv_ss, n0 + kr0, p.sk, 0, 1.f, g, t);
    if (do_dk)
        store_acc<T, ND>(acc[NACC - 1], dk, p.dk_ss, n0 + kr0, p.sk, 0, p.scale, g, t);
}

/* ---- f16 / bf16: kv with dQ partials (the fused path) --------------------- */

/*
 * The kv kernel's walk plus dQ: each step also forms dQ_tile = dS K for its
 * BM queries over the block's BN keys (dS^T goes from the registers into
 * shared memory, where every warp reads a 16-row x D/CG-column slice of
 * the product) and adds it to the block's own f32 partial of those rows.
 * Five matrix products per step (FlashAttention-2's count) instead of the
 * separate q kernel's three more.
 *
 * Determinism without atomics: the grid's x is the lane c of `lanes`; lane c
 * walks its key blocks (lane_block: c, 2 lanes - 1 - c, 2 lanes + c, ...)
 * one after the other, so
 * partial c (rows of every query head, f32, p.dqp + c * nrows * D) is only
 * ever touched by this one block, in program order: its first key block
 * writes, the later ones read (cp.async, with the step's Q / dout tiles)
 * and add. attnb_dqsum then sums the partials in lane order. Which rows a
 * lane touched is a function of the shape alone (lane_touches below).
 */
/* The j-th key block of lane c of `lanes`: the rows of `lanes` key blocks
   are dealt in snake order (c in even rows, lanes - 1 - c in odd ones), so
   that under the causal rule, where a key block's work falls with its
   index, every lane gets about the same. Increasing in j, and the lane's
   first block (c) is its smallest: every row a later block reaches, the
   first one reached (and wrote) before. */
__device__ __forceinline__ int lane_block(int lanes, int c, int j)
{
    return j * lanes + ((j & 1) ? lanes - 1 - c : c);
}

/*
 * Query splits (p.splits > 1, few (batch, kv head) pairs and long keys):
 * the grid's x is lane c + lanes s, and block (c, s) walks lane c's key
 * blocks over split s's part of the queries only: query heads h0 .. h0 + nh
 * of the group (split_h parts) times the query rows mlo .. mhi (split_t
 * parts of the BM-row tiles, whole tiles). The parts are the same for
 * every key block, so the splits of a lane touch disjoint rows of its dQ
 * partial (and its first key block still reaches, first, every row a later
 * one does); each split writes its own f32 partial of dK and dV (unscaled)
 * at p.dkvp, and attnb_dkvsum adds them up in split order.
 */
template <int BM>
__device__ __forceinline__ void split_of(const kg_attnb_params &p, int s, int &h0, int &nh, int &mlo, int &mhi)
{
    const int sh = s / p.split_t, st = s - sh * p.split_t;
    h0 = sh * p.group / p.split_h;
    nh = (sh + 1) * p.group / p.split_h - h0;
    const int64_t tiles = (p.sq + BM - 1) / BM;
    mlo = (int)(st * tiles / p.split_t) * BM;
    mhi = min(p.sq, (int)((st + 1) * tiles / p.split_t) * BM);
}

/* The f32 partial of split s: dK (which 0) or dV (1) of kv head (b, hk),
   rows of D floats. */
template <int D>
__device__ __forceinline__ float *split_dkv(const kg_attnb_params &p, int s, int which, int b, int hk)
{
    return p.dkvp + ((int64_t)(2 * s + which) * p.nkrows + ((int64_t)b * p.hkv + hk) * p.sk) * D;
}

/* dV += P^T dout (acc[0]) and dK += dS^T Q (acc[NACC - 1]) in split TF32
   (kv_accumulate's f32 twin; tQ, tO: the step's tiles, pitch D + 4): a
   group of n-tiles at a time, the step's product in fresh accumulators
   added to the sums by FADD (attention_bwd_x3.cuh says why); SP: the split
   policy. */
template <int D, int BM, bool SPLIT, int NACC, int X3G, typename SP>
__device__ __forceinline__ void kv_accumulate_x3(float (&acc)[NACC][D / 8][4], const float (&s)[BM / 8][4],
                                                 const float (&dp)[BM / 8][4], const float *tQ, const float *tO,
                                                 int role, int g, int t)
{
    constexpr int P = D + 4, GRP = X3G > 0 ? X3G : x3_grp(D / 8);
#pragma unroll
    for (int d0 = 0; d0 < D / 8; d0 += GRP) {
        float sv[GRP][4], sk[GRP][4];
#pragma unroll
        for (int d = 0; d < GRP; d++)
            sv[d][0] = sv[d][1] = sv[d][2] = sv[d][3] = sk[d][0] = sk[d][1] = sk[d][2] = sk[d][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < BM / 8; kk++) {
            if (SPLIT) {
                x3_a a;
                x3_a_of_either<SP>(a, s[kk], dp[kk], role == 0);
                x3_acc_tile<GRP, P, SP>(sv, a, role == 0 ? tO : tQ, kk * 8, d0 * 8, g, t);
            } else {
                x3_a pa, da;
                x3_a_of_acc<SP>(pa, s[kk]);
                x3_a_of_acc<SP>(da, dp[kk]);
                x3_acc_tile<GRP, P, SP>(sv, pa, tO, kk * 8, d0 * 8, g, t);
                x3_acc_tile<GRP, P, SP>(sk, da, tQ, kk * 8, d0 * 8, g, t);
            }
        }
#pragma unroll
        for (int d = 0; d < GRP; d++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                acc[0][d0 + d][e] += sv[d][e];
                if (!SPLIT)
                    acc[NACC - 1][d0 + d][e] += sk[d][e];
            }
    }
}

/* The fused kernel for T = f16 / bf16 (mma.sync m16n8k16, ldmatrix) and T =
   float (X3: every product in split TF32, attention_bwd_x3.cuh; f32 tiles of
   pitch D + 4, dS^T kept in f32; X3G: dV / dK's n-tiles a group, 0: up to
   4; CH: S^T and dP^T summed from parts of CH k8 steps, 0: one chain,
   attention_bwd_x3.cuh's x3_rows_x_rows; SP: the split policy): the same
   walk, lanes, splits and partials. */
template <typename T, int D, int NKW, int BM, bool SPLIT, int KIND, int X3G = 0, int CH = 0, typename SP = x3_int>
__device__ __forceinline__ void attnb_kvq_tc(const kg_attnb_params &p)
{
    constexpr bool X3 = sizeof(T) == 4;
    constexpr int NW = NKW * (SPLIT ? 2 : 1), NT = NW * 32, BN = NKW * 16, P = D + tc_pad<T>(), E = sizeof(T);
    constexpr int NQ = BM / 8, ND = D / 8, NACC = SPLIT ? 1 : 2;
    constexpr int PS = BM + tc_pad<T>(), PF = D + 8; /* pitches of dS^T (T) and of the partial tile (f32) */
    constexpr int RT = BM / 16, CG = NW / RT;     /* dQ: row tiles x column groups over the warps */
    constexpr int QC = D / CG, QN = QC / 8;       /* columns and n8 tiles per warp */
    static_assert(NW % RT == 0 && D % CG == 0 && QC % 8 == 0 && (X3 || QN % 2 == 0), "dQ warp partition");
    extern __shared__ __align__(16) unsigned char smem[];
    /* K, V; two stages of (Q, dout); dS^T; two stages of the partial tile;
       two stages of the rows' lse2, delta */
    T *sK = (T *)smem;
    T *sV = sK + BN * P;
    T *sQ0 = sV + BN * P;
    T *sS = sQ0 + 4 * BM * P;
    float *sF0 = (float *)(sS + BN * PS);
    float *sRows = sF0 + 2 * BM * PF;
    const uint32_t aK = kgd_smem_addr(sK), aV = kgd_smem_addr(sV), aS = kgd_smem_addr(sS);

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const int kw = warp % NKW, role = SPLIT ? warp / NKW : 0;
    const bool do_dv = !SPLIT || role == 0, do_dk = !SPLIT || role == 1;
    const int c = blockIdx.x % p.lanes, sp = blockIdx.x / p.lanes, hk = blockIdx.y, b = blockIdx.z;
    const bool causal = KIND == KG_ATTN_CAUSAL || (KIND == KG_ATTN_MASK && p.causal);
    const int nkb = (p.sk + BN - 1) / BN;
    int h0, nh, mlo, mhi;
    split_of<BM>(p, sp, h0, nh, mlo, mhi);

    const char *k = (const char *)p.k + (b * p.k_sb + hk * p.k_sh) * E;
    const char *v = (const char *)p.v + (b * p.v_sb + hk * p.v_sh) * E;
    T *dk = (T *)p.dk + b * p.dk_sb + hk * p.dk_sh;
    T *dv = (T *)p.dv + b * p.dv_sb + hk * p.dv_sh;

    const int b_row = (lane & 7) + ((lane >> 4) << 3), b_col = ((lane >> 3) & 1) * 8;
    const int v_row = (lane & 7) + (((lane >> 3) & 1) << 3), v_col = (lane >> 4) * 8;
    const int kr0 = kw * 16; /* the warp's keys in the block */
    const int qr = (warp % RT) * 16, qc0 = (warp / RT) * QC; /* the warp's dQ slice */

    for (int j = 0, kb = c; kb < nkb; j++, kb = lane_block(p.lanes, c, j)) {
        const int n0 = kb * BN;
        const bool first = j == 0;
        __syncthreads(); /* the previous key block is done with K, V */
        kgd_cp_async_wait<0>();
        load_tile<BN, D, P, E, NT>(aK, k, p.k_ss, n0, p.sk, tid);
        load_tile<BN, D, P, E, NT>(aV, v, p.v_ss, n0, p.sk, tid);
        kgd_cp_async_commit();

        int mstart = mlo; /* the first query tile (of the split's) that sees key n0 under the causal rule */
        if (causal)
            mstart = max(mlo, max(0, n0 - (p.sk - p.sq)) / BM * BM);

        float acc[NACC][ND][4];
#pragma unroll
        for (int a = 0; a < NACC; a++)
#pragma unroll
            for (int d = 0; d < ND; d++)
                acc[a][d][0] = acc[a][d][1] = acc[a][d][2] = acc[a][d][3] = 0.f;

        const int nmt = mstart < mhi ? (mhi - mstart + BM - 1) / BM : 0, nsteps = nh * nmt;
        /* step it's tiles into stage st: kv's, and the partial's rows so far
           (none yet in the lane's first key block) */
        auto issue = [&](int it, int st, float(&rl)[2], float(&rd)[2]) {
            const int h = hk * p.group + h0 + it / nmt, m0 = mstart + (it % nmt) * BM;
            kv_issue<D, BM, NT, E>(p, b, h, m0, kgd_smem_addr(sQ0 + 2 * st * BM * P), tid, rl, rd);
            const char *part = (const char *)(p.dqp + ((int64_t)c * p.nrows + ((int64_t)b * p.hq + h) * p.sq) * D);
            load_tile<BM, D, PF, 4, NT>(kgd_smem_addr(sF0 + st * BM * PF), part, D, m0, first ? 0 : p.sq, tid);
        };
        if (nsteps > 0) {
            float rl[2], rd[2];
            issue(0, 0, rl, rd);
            kv_put_rows<BM, NT>(sRows, 0, rl, rd, tid);
        }
        kgd_cp_async_commit();
        for (int it = 0; it < nsteps; it++) {
            const int st = it & 1;
            const int h = hk * p.group + h0 + it / nmt, m0 = mstart + (it % nmt) * BM;
            const float *mbase = KIND == KG_ATTN_MASK ? p.mask + b * p.m_sb + h * p.m_sh : nullptr;
            /* this step's tiles (and K, V) arrived, and every warp is done
               with the previous step: its stage and dS^T may be refilled */
            kgd_cp_async_wait<0>();
            __syncthreads();
            float nl[2], nd[2];
            if (it + 1 < nsteps)
                issue(it + 1, st ^ 1, nl, nd);
            kgd_cp_async_commit();
            const uint32_t aQ = kgd_smem_addr(sQ0 + 2 * st * BM * P), aO = aQ + BM * P * E;
            const float *sL = sRows + st * 2 * BM, *sDl = sL + BM;

            [[maybe_unused]] const T *tQ = sQ0 + 2 * st * BM * P, *tO = tQ + BM * P;

            float s[NQ][4], dp[NQ][4];
            if constexpr (X3) {
#pragma unroll
                for (int n = 0; n < NQ; n++)
                    s[n][0] = s[n][1] = s[n][2] = s[n][3] = dp[n][0] = dp[n][1] = dp[n][2] = dp[n][3] = 0.f;
                x3_rows_x_rows<D, NQ, P, SP, NQ, CH>(s, sK, tQ, kr0, g, t);
                if (do_dk)
                    x3_rows_x_rows<D, NQ, P, SP, NQ, CH>(dp, sV, tO, kr0, g, t);
            } else {
                kv_scores<T, D, BM>(s, dp, aK, aV, aQ, aO, kr0, lane, do_dk);
            }
            /* keys past Sk are masked here (their dS^T feeds dQ) */
            const bool check = n0 + BN > p.sk || (causal && n0 + BN - 1 > m0 + p.sk - p.sq);
            kv_probs<KIND, BM>(p, mbase, s, dp, sL, sDl, n0 + kr0, m0, check, causal, do_dk, g, t);
            /* dS^T (as T, the precision the products take it in) for dQ */
            if (do_dk) {
                typedef typename acc_pair<T>::type pair_t;
#pragma unroll
                for (int n = 0; n < NQ; n++) {
                    *(pair_t *)(sS + (kr0 + g) * PS + n * 8 + 2 * t) = acc_pair<T>::make(dp[n][0], dp[n][1]);
                    *(pair_t *)(sS + (kr0 + g + 8) * PS + n * 8 + 2 * t) = acc_pair<T>::make(dp[n][2], dp[n][3]);
                }
            }
            if constexpr (X3)
                kv_accumulate_x3<D, BM, SPLIT, NACC, X3G, SP>(acc, s, dp, tQ, tO, role, g, t);
            else
                kv_accumulate<T, D, BM, SPLIT, NACC>(acc, s, dp, aQ, aO, role, lane);
            __syncthreads(); /* dS^T complete */
            /* dQ slice (rows qr.., columns qc0..) = dS K over the block's keys,
               plus the partial so far; into the lane's partial */
            {
                float dq[QN][4];
#pragma unroll
                for (int n = 0; n < QN; n++)
                    dq[n][0] = dq[n][1] = dq[n][2] = dq[n][3] = 0.f;
                if constexpr (X3) {
                    x3_dq<BN, QN, PS, P, SP>(dq, sS, sK, qr, qc0, g, t);
                } else {
#pragma unroll
                    for (int kk = 0; kk < BN / 16; kk++) {
                        uint32_t a[4];
                        kgd_ldmatrix_x4_trans(a, aS + ((kk * 16 + b_row) * PS + qr + b_col) * E);
#pragma unroll
                        for (int dn = 0; dn < QN / 2; dn++) {
                            uint32_t bf[4];
                            kgd_ldmatrix_x4_trans(bf, aK + ((kk * 16 + v_row) * P + qc0 + dn * 16 + v_col) * E);
                            mma<T>::run(dq[2 * dn], a, bf[0], bf[1]);
                            mma<T>::run(dq[2 * dn + 1], a, bf[2], bf[3]);
                        }
                    }
                }
                const float *sF = sF0 + st * BM * PF;
                float *part = p.dqp + ((int64_t)c * p.nrows + ((int64_t)b * p.hq + h) * p.sq) * D;
#pragma unroll
                for (int i = 0; i < 2; i++) {
                    const int r = qr + g + 8 * i;
                    if (m0 + r < p.sq) {
#pragma unroll
                        for (int n = 0; n < QN; n++) {
                            const int col = qc0 + n * 8 + 2 * t;
                            const float2 old = *(const float2 *)&sF[r * PF + col];
                            *(float2 *)&part[(int64_t)(m0 + r) * D + col] =
                                make_float2(old.x + dq[n][2 * i], old.y + dq[n][2 * i + 1]);
                        }
                    }
                }
            }
            if (it + 1 < nsteps)
                kv_put_rows<BM, NT>(sRows, st ^ 1, nl, nd, tid); /* read after the next step's barrier */
        }

        if (p.splits > 1) {
            if (do_dv)
                store_acc<float, ND>(acc[0], split_dkv<D>(p, sp, 1, b, hk), D, n0 + kr0, p.sk, 0, 1.f, g, t);
            if (do_dk)
                store_acc<float, ND>(acc[NACC - 1], split_dkv<D>(p, sp, 0, b, hk), D, n0 + kr0, p.sk, 0, 1.f, g, t);
        } else {
            if (do_dv)
                store_acc<T, ND>(acc[0], dv, p.dv_ss, n0 + kr0, p.sk, 0, 1.f, g, t);
            if (do_dk)
                store_acc<T, ND>(acc[NACC - 1], dk, p.dk_ss, n0 + kr0, p.sk, 0, p.scale, g, t);
        }
    }
    kgd_cp_async_wait<0>();
}

/* Whether lane c wrote query row i's partial: c is a key block and, under the
   causal rule, row i is at or past the first query tile (BM rows) that key
   block c reaches (the kvq kernel's mstart). */
__device__ __forceinline__ bool lane_touches(const kg_attnb_params &p, int c, int i, bool causal)
{
    if (c >= p.nkb)
        return false;
    if (!causal)
        return true;
    const int mstart = max(0, c * p.kv_bn - (p.sk - p.sq)) / p.kv_bm * p.kv_bm;
    return i >= mstart;
}

/* dq = scale * (sum of the lanes' partials, lane 0 first), 4 columns a
   thread; rows no lane touched get 0. */
template <typename T, int D> __device__ __forceinline__ void attnb_dqsum(const kg_attnb_params &p)
{
    constexpr int CPR = D / 4;
    const bool causal = p.kind == KG_ATTN_CAUSAL || (p.kind == KG_ATTN_MASK && p.causal);
    const int64_t total = p.nrows * CPR, per_head = p.sq, per_batch = (int64_t)p.hq * p.sq;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; x < total; x += stride) {
        const int64_t r = x / CPR;
        const int col = (int)(x % CPR) * 4;
        const int64_t b = r / per_batch, h = (r / per_head) % p.hq;
        const int i = (int)(r % per_head);
        float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int c = 0; c < p.lanes; c++) {
            if (!lane_touches(p, c, i, causal))
                continue;
            const float4 v = *(const float4 *)&p.dqp[((int64_t)c * p.nrows + r) * D + col];
            s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
        }
        T *dq = (T *)p.dq + b * p.dq_sb + h * p.dq_sh + (int64_t)i * p.dq_ss + col;
        if constexpr (sizeof(T) == 2) {
            uint2 w;
            w.x = mma<T>::pack(s.x * p.scale, s.y * p.scale);
            w.y = mma<T>::pack(s.z * p.scale, s.w * p.scale);
            *(uint2 *)dq = w;
        } else {
            *(float4 *)dq = make_float4(s.x * p.scale, s.y * p.scale, s.z * p.scale, s.w * p.scale);
        }
    }
}

/* dk = scale * (sum of the splits' dK partials, split 0 first) and dv = the
   sum of their dV partials (kvq with p.splits > 1), 4 columns a thread. */
template <typename T, int D> __device__ __forceinline__ void attnb_dkvsum(const kg_attnb_params &p)
{
    constexpr int CPR = D / 4;
    const int64_t half = p.nkrows * CPR, total = 2 * half, per_head = p.sk, per_batch = (int64_t)p.hkv * p.sk;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; x < total; x += stride) {
        const int which = x >= half; /* 0: dk, 1: dv */
        const int64_t y = x - which * half, r = y / CPR;
        const int col = (int)(y % CPR) * 4;
        const int64_t b = r / per_batch, hk = (r / per_head) % p.hkv, j = r % per_head;
        float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int sp = 0; sp < p.splits; sp++) {
            const float4 v = *(const float4 *)&p.dkvp[((int64_t)(2 * sp + which) * p.nkrows + r) * D + col];
            s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
        }
        const float mul = which ? 1.f : p.scale;
        T *dst = which ? (T *)p.dv + b * p.dv_sb + hk * p.dv_sh + j * p.dv_ss + col
                       : (T *)p.dk + b * p.dk_sb + hk * p.dk_sh + j * p.dk_ss + col;
        if constexpr (sizeof(T) == 2) {
            uint2 w;
            w.x = mma<T>::pack(s.x * mul, s.y * mul);
            w.y = mma<T>::pack(s.z * mul, s.w * mul);
            *(uint2 *)dst = w;
        } else {
            *(float4 *)dst = make_float4(s.x * mul, s.y * mul, s.z * mul, s.w * mul);
        }
    }
}

/* ---- f16 / bf16: q ------------------------------------------------------------ */

/* A dq block's setup, the same in attnb_q_tc, attnb_q_wg
   (attention_bwd_sm90q.cuh) and attnb_q_f32: query block
   mb = gridDim.x - 1 - blockIdx.x of BM rows (the longest causal blocks
   first), rows m0 = mb BM on, of query head h = blockIdx.y (kv head
   h / group) of batch b = blockIdx.z; the calling warp's 16 rows in the
   block, wr = 64 wgi + 16 wq (warpgroup wgi, warp wq in it; attnb_q_tc
   passes 0 and its warp, attnb_q_f32 passes 0, 0 and leaves wr unused);
   the base pointers of its q and dout (E-byte elements), of its kv head's
   k and v, and of its mask (KIND mask only); the causal rule; and its
   BN-key tiles: up to the block's last row's diagonal when causal. The
   callers unpack it as a structured binding, in this order. wr is computed
   here, right after m0, where both tensor-core kernels computed it before
   this helper: computed in the callers it changed their PTX (instruction
   order); here their fatbins are byte-identical to before. */
struct q_block {
    int h, b, m0, wr;
    bool causal;
    const char *q, *dout, *k, *v;
    const float *mbase;
    int ntiles;
};

template <int KIND, int BM, int BN, int E>
__device__ __forceinline__ q_block q_block_of(const kg_attnb_params &p, int wgi, int wq)
{
    const int mb = gridDim.x - 1 - blockIdx.x; /* the longest causal blocks first */
    const int h = blockIdx.y, b = blockIdx.z, hk = h / p.group;
    const int m0 = mb * BM, wr = wgi * 64 + wq * 16;
    const bool causal = KIND == KG_ATTN_CAUSAL || (KIND == KG_ATTN_MASK && p.causal);

    const char *q = (const char *)p.q + (b * p.q_sb + h * p.q_sh) * E;
    const char *dout = (const char *)p.dout + (b * p.do_sb + h * p.do_sh) * E;
    const char *k = (const char *)p.k + (b * p.k_sb + hk * p.k_sh) * E;
    const char *v = (const char *)p.v + (b * p.v_sb + hk * p.v_sh) * E;
    const float *mbase = KIND == KG_ATTN_MASK ? p.mask + b * p.m_sb + h * p.m_sh : nullptr;
    int end = p.sk;
    if (causal)
        end = min(end, m0 + BM + p.sk - p.sq);
    const int ntiles = end > 0 ? (end + BN - 1) / BN : 0;
    return {h, b, m0, wr, causal, q, dout, k, v, mbase, ntiles};
}

/* The rows' base-2 lse (lse2) and delta (dl) that a dq kernel's thread
   holds: rows r0, r0 + step, ..., of (b, h); rows past Sq get lse2 = +inf
   (so P = 0) and delta 0: attnb_q_tc (step 8) and attnb_q_f32 (step 16).
   attnb_q_wg (attention_bwd_sm90q.cuh) reads them the same way inline:
   through this helper its PTX changed (instruction order), so it keeps its
   loop. */
template <int N>
__device__ __forceinline__ void q_rows_stats(const kg_attnb_params &p, int b, int h, int r0, int step, float (&lse2)[N],
                                             float (&dl)[N])
{
    const float *rows = p.rows + ((int64_t)b * p.hq + h) * p.sq;
#pragma unroll
    for (int i = 0; i < N; i++) {
        const int r = r0 + step * i;
        lse2[i] = r < p.sq ? rows[p.nrows + r] : CUDART_INF_F;
        dl[i] = r < p.sq ? rows[r] : 0.f;
    }
}

/* NW warps of 16 query rows (BM = 16 NW), BN keys per tile. */
template <typename T, int D, int NW, int BN, int KIND>
__device__ __forceinline__ void attnb_q_tc(const kg_attnb_params &p)
{
    constexpr int NT = NW * 32, BM = NW * 16, P = D + 8, E = 2;
    constexpr int NS = BN / 8, ND = D / 8, KD = D / 16;
    extern __shared__ __align__(16) unsigned char smem[];
    /* Q, dout; then two stages of (K, V) tiles */
    T *sQ = (T *)smem;
    T *sO = sQ + BM * P;
    T *sK0 = sO + BM * P;
    const uint32_t aQ = kgd_smem_addr(sQ), aO = kgd_smem_addr(sO);

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const auto [h, b, m0, wr, causal, q, dout, k, v, mbase, ntiles] = q_block_of<KIND, BM, BN, E>(p, 0, warp);

    load_tile<BM, D, P, E, NT>(aQ, q, p.q_ss, m0, p.sq, tid);
    load_tile<BM, D, P, E, NT>(aO, dout, p.do_ss, m0, p.sq, tid);
    kgd_cp_async_commit();

    float lse2[2], dl[2];
    q_rows_stats(p, b, h, m0 + wr + g, 8, lse2, dl);

    const int a_row = lane & 15, a_col = (lane >> 4) * 8;
    const int b_row = (lane & 7) + ((lane >> 4) << 3), b_col = ((lane >> 3) & 1) * 8;
    const int v_row = (lane & 7) + (((lane >> 3) & 1) << 3), v_col = (lane >> 4) * 8;

    float acc[ND][4];
#pragma unroll
    for (int d = 0; d < ND; d++)
        acc[d][0] = acc[d][1] = acc[d][2] = acc[d][3] = 0.f;

    if (ntiles > 0) {
        load_tile<BN, D, P, E, NT>(kgd_smem_addr(sK0), k, p.k_ss, 0, p.sk, tid);
        load_tile<BN, D, P, E, NT>(kgd_smem_addr(sK0 + BN * P), v, p.v_ss, 0, p.sk, tid);
    }
    kgd_cp_async_commit();
    for (int j = 0; j < ntiles; j++) {
        const int n0 = j * BN, st = j & 1;
        /* the next K and V tiles load while this one computes */
        if (j + 1 < ntiles) {
            const uint32_t nK = kgd_smem_addr(sK0 + 2 * (st ^ 1) * BN * P);
            load_tile<BN, D, P, E, NT>(nK, k, p.k_ss, n0 + BN, p.sk, tid);
            load_tile<BN, D, P, E, NT>(nK + BN * P * E, v, p.v_ss, n0 + BN, p.sk, tid);
        }
        kgd_cp_async_commit();
        kgd_cp_async_wait<1>(); /* this tile (and Q, dout) arrived */
        __syncthreads();
        const uint32_t aK = kgd_smem_addr(sK0 + 2 * st * BN * P), aV = aK + BN * P * E;

        float s[NS][4], dp[NS][4];
#pragma unroll
        for (int n = 0; n < NS; n++)
            s[n][0] = s[n][1] = s[n][2] = s[n][3] = dp[n][0] = dp[n][1] = dp[n][2] = dp[n][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < KD; kk++) {
            uint32_t a[4], c[4];
            kgd_ldmatrix_x4(a, aQ + ((wr + a_row) * P + kk * 16 + a_col) * E);
            kgd_ldmatrix_x4(c, aO + ((wr + a_row) * P + kk * 16 + a_col) * E);
#pragma unroll
            for (int nn = 0; nn < BN / 16; nn++) {
                uint32_t bf[4];
                kgd_ldmatrix_x4(bf, aK + ((nn * 16 + b_row) * P + kk * 16 + b_col) * E);
                mma<T>::run(s[2 * nn], a, bf[0], bf[1]);
                mma<T>::run(s[2 * nn + 1], a, bf[2], bf[3]);
                kgd_ldmatrix_x4(bf, aV + ((nn * 16 + b_row) * P + kk * 16 + b_col) * E);
                mma<T>::run(dp[2 * nn], c, bf[0], bf[1]);
                mma<T>::run(dp[2 * nn + 1], c, bf[2], bf[3]);
            }
        }
        const bool check = n0 + BN > p.sk || (causal && n0 + BN - 1 > m0 + wr + p.sk - p.sq);
#pragma unroll
        for (int n = 0; n < NS; n++) {
#pragma unroll
            for (int x = 0; x < 4; x++) {
                const int i = x >> 1, qi = m0 + wr + g + 8 * i, kj = n0 + n * 8 + 2 * t + (x & 1);
                float xs;
                if (KIND == KG_ATTN_MASK || check)
                    xs = bwd_masked<KIND>(p, mbase, s[n][x], qi, kj, check, causal);
                else
                    xs = s[n][x] * p.scale_log2;
                const float pr = ex2(xs - lse2[i]);
                dp[n][x] = pr * (dp[n][x] - dl[i]);
            }
        }
        /* dQ += dS K */
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) {
            uint32_t da[4];
            da[0] = mma<T>::pack(dp[2 * kk][0], dp[2 * kk][1]);
            da[1] = mma<T>::pack(dp[2 * kk][2], dp[2 * kk][3]);
            da[2] = mma<T>::pack(dp[2 * kk + 1][0], dp[2 * kk + 1][1]);
            da[3] = mma<T>::pack(dp[2 * kk + 1][2], dp[2 * kk + 1][3]);
#pragma unroll
            for (int dn = 0; dn < KD; dn++) {
                uint32_t bf[4];
                kgd_ldmatrix_x4_trans(bf, aK + ((kk * 16 + v_row) * P + dn * 16 + v_col) * E);
                mma<T>::run(acc[2 * dn], da, bf[0], bf[1]);
                mma<T>::run(acc[2 * dn + 1], da, bf[2], bf[3]);
            }
        }
        __syncthreads(); /* every warp is done with stage st before it is refilled */
    }
    kgd_cp_async_wait<0>();
    T *dq = (T *)p.dq + b * p.dq_sb + h * p.dq_sh;
    store_acc<T, ND>(acc, dq, p.dq_ss, m0 + wr, p.sq, 0, p.scale, g, t);
}

/* ---- f32: FFMA ------------------------------------------------------------ */

/* acc[i][c] += A[row ty + GY i] . B[row tx + GX c] over D (pitch P); GX x
   GY: the thread grid (16 x 16 unless given). */
template <int TR, int TC, int D, int P, int GY = 16, int GX = 16, int UD = 2>
__device__ __forceinline__ void f32_dots(float (&acc)[TR][TC], const float *A, const float *B, int ty, int tx)
{
    if constexpr (UD == 0) {
        /* software-pipelined: the next 4 columns' vectors are loaded while
           this step's FMAs run (two register stages); the same FMAs in the
           same order as below (the same bits) */
        float4 av[2][TR], bv[2][TC];
#pragma unroll
        for (int i = 0; i < TR; i++)
            av[0][i] = *(const float4 *)&A[(ty + GY * i) * P];
#pragma unroll
        for (int c = 0; c < TC; c++)
            bv[0][c] = *(const float4 *)&B[(tx + GX * c) * P];
#pragma unroll
        for (int d = 0; d < D; d += 4) {
            const int cur = (d / 4) & 1;
            if (d + 4 < D) {
#pragma unroll
                for (int i = 0; i < TR; i++)
                    av[cur ^ 1][i] = *(const float4 *)&A[(ty + GY * i) * P + d + 4];
#pragma unroll
                for (int c = 0; c < TC; c++)
                    bv[cur ^ 1][c] = *(const float4 *)&B[(tx + GX * c) * P + d + 4];
            }
#pragma unroll
            for (int i = 0; i < TR; i++)
#pragma unroll
                for (int c = 0; c < TC; c++) {
                    acc[i][c] = fmaf(av[cur][i].x, bv[cur][c].x, acc[i][c]);
                    acc[i][c] = fmaf(av[cur][i].y, bv[cur][c].y, acc[i][c]);
                    acc[i][c] = fmaf(av[cur][i].z, bv[cur][c].z, acc[i][c]);
                    acc[i][c] = fmaf(av[cur][i].w, bv[cur][c].w, acc[i][c]);
                }
        }
    } else {
#pragma unroll(UD > 0 ? UD : 1)
        for (int d = 0; d < D; d += 4) {
            float4 bv[TC];
#pragma unroll
            for (int c = 0; c < TC; c++)
                bv[c] = *(const float4 *)&B[(tx + GX * c) * P + d];
#pragma unroll
            for (int i = 0; i < TR; i++) {
                const float4 av = *(const float4 *)&A[(ty + GY * i) * P + d];
#pragma unroll
                for (int c = 0; c < TC; c++) {
                    acc[i][c] = fmaf(av.x, bv[c].x, acc[i][c]);
                    acc[i][c] = fmaf(av.y, bv[c].y, acc[i][c]);
                    acc[i][c] = fmaf(av.z, bv[c].z, acc[i][c]);
                    acc[i][c] = fmaf(av.w, bv[c].w, acc[i][c]);
                }
            }
        }
    }
}

/* acc[i][d][e] += sum_k W[row ty + GY i][k] X[k][VW (tx + GX d) + e] for
   k < K (W pitch PW, X pitch P). */
template <int TR, int K, int PW, int NV, int VW, int P, int GY = 16, int GX = 16, int UA = 1>
__device__ __forceinline__ void f32_acc(float (&acc)[TR][NV][VW], const float *W, const float *X, int ty, int tx)
{
    typedef typename kg_attn::fvec<VW>::t vec;
    if constexpr (UA == 0) {
        /* software-pipelined: W's next 4 columns and X's next row are loaded
           while this one's FMAs run (two register stages each); the same FMAs
           in the same order as below (the same bits) */
        float4 wv[2][TR];
        vec xv[2][NV];
#pragma unroll
        for (int i = 0; i < TR; i++)
            wv[0][i] = *(const float4 *)&W[(ty + GY * i) * PW];
#pragma unroll
        for (int d = 0; d < NV; d++)
            xv[0][d] = *(const vec *)&X[VW * (tx + GX * d)];
#pragma unroll
        for (int c = 0; c < K; c += 4) {
            const int cw = (c / 4) & 1;
            if (c + 4 < K)
#pragma unroll
                for (int i = 0; i < TR; i++)
                    wv[cw ^ 1][i] = *(const float4 *)&W[(ty + GY * i) * PW + c + 4];
#pragma unroll
            for (int cc = 0; cc < 4; cc++) {
                const int k = c + cc, cx = k & 1;
                if (k + 1 < K)
#pragma unroll
                    for (int d = 0; d < NV; d++)
                        xv[cx ^ 1][d] = *(const vec *)&X[(k + 1) * P + VW * (tx + GX * d)];
#pragma unroll
                for (int i = 0; i < TR; i++) {
                    const float w = kg_attn::fvec<4>::at(wv[cw][i], cc);
#pragma unroll
                    for (int d = 0; d < NV; d++)
#pragma unroll
                        for (int e = 0; e < VW; e++)
                            acc[i][d][e] = fmaf(w, kg_attn::fvec<VW>::at(xv[cx][d], e), acc[i][d][e]);
                }
            }
        }
    } else {
#pragma unroll(UA > 0 ? UA : 1)
        for (int c = 0; c < K; c += 4) {
            float4 wv[TR];
#pragma unroll
            for (int i = 0; i < TR; i++)
                wv[i] = *(const float4 *)&W[(ty + GY * i) * PW + c];
#pragma unroll
            for (int cc = 0; cc < 4; cc++) {
                vec xv[NV];
#pragma unroll
                for (int d = 0; d < NV; d++)
                    xv[d] = *(const vec *)&X[(c + cc) * P + VW * (tx + GX * d)];
#pragma unroll
                for (int i = 0; i < TR; i++) {
                    const float w = kg_attn::fvec<4>::at(wv[i], cc);
#pragma unroll
                    for (int d = 0; d < NV; d++)
#pragma unroll
                        for (int e = 0; e < VW; e++)
                            acc[i][d][e] = fmaf(w, kg_attn::fvec<VW>::at(xv[d], e), acc[i][d][e]);
                }
            }
        }
    }
}

/* Writes rows row0 + ty + GY i (CR: row0 + TR ty + i) (< n), columns
   VW (tx + GX d) + e of acc times mul. */
template <int TR, int NV, int VW, bool CR = false, int GY = 16, int GX = 16>
__device__ __forceinline__ void f32_store(const float (&acc)[TR][NV][VW], float *base, int64_t ld, int row0, int n,
                                          float mul, int ty, int tx)
{
    typedef typename kg_attn::fvec<VW>::t vec;
#pragma unroll
    for (int i = 0; i < TR; i++) {
        const int r = row0 + (CR ? TR * ty + i : ty + GY * i);
        if (r < n) {
#pragma unroll
            for (int d = 0; d < NV; d++) {
                vec w;
                float *wf = (float *)&w;
#pragma unroll
                for (int e = 0; e < VW; e++)
                    wf[e] = acc[i][d][e] * mul;
                *(vec *)&base[(int64_t)r * ld + VW * (tx + GX * d)] = w;
            }
        }
    }
}

template <int D> struct f32_shape {
    static constexpr int VW = D % 64 == 0 ? 4 : 2, NV = D / (16 * VW);
};

/* The f32 kv layout in shared memory (pitch P = D + 4 for the tiles, BM + 4
   for P^T and dS^T, BM + 8 under layout L = 1): K, V [BN], Q, dout [BM],
   P^T, dS^T [BN][BM], lse2, delta [BM]. */
template <int D, int BN, int BM, int L = 0> struct f32_kv_smem {
    static constexpr int P = D + 4, PP = BM + (L ? 8 : 4);
    float *sK, *sV, *sQ, *sO, *sP, *sS, *sL, *sDl;
    __device__ __forceinline__ explicit f32_kv_smem(unsigned char *smem)
    {
        sK = (float *)smem;
        sV = sK + BN * P;
        sQ = sV + BN * P;
        sO = sQ + BM * P;
        sP = sO + BM * P;
        sS = sP + BN * PP;
        sL = sS + BN * PP;
        sDl = sL + BM;
    }
};

/* A thread's place (tx, ty) in the 16 x 16 grid of 256 threads. L = 0: a
   warp is 16 x 2 of it (tx = tid % 16); L = 1: 8 x 4, so that a warp's loads
   of a tile's rows ty + 16 i touch 4 rows and those of rows tx + 16 c 8
   (one shared-memory wavefront per 128-bit load instead of 2). */
template <int L> __device__ __forceinline__ void f32_txy(int tid, int &tx, int &ty)
{
    if (L) {
        const int w = tid >> 5, l = tid & 31;
        tx = (l & 7) + 8 * (w & 1);
        ty = (l >> 3) + 4 * (w >> 1);
    } else {
        tx = tid & 15;
        ty = tid >> 4;
    }
}

/* The arithmetic of one step of the f32 kv walk (kv and kvq), with Q, dout
   and the rows' lse2, delta of query rows m0.. of one head in shared memory
   (mbase: that head's mask) and the block's keys n0.. (K, V): P^T and dS^T
   into shared memory (left there for kvq's dQ), a block barrier, then
   dv += P^T dout, dk += dS^T Q. */
template <int D, int BN, int BM, int KIND, int L = 0, int UD = 2, int UA = 1>
__device__ __forceinline__ void kv_f32_compute(const kg_attnb_params &p, const f32_kv_smem<D, BN, BM, L> &sm,
                                               const float *mbase, int n0, int m0, bool check, bool causal,
                                               float (&dv)[BN / 16][f32_shape<D>::NV][f32_shape<D>::VW],
                                               float (&dk)[BN / 16][f32_shape<D>::NV][f32_shape<D>::VW], int tid)
{
    constexpr int P = D + 4, PP = f32_kv_smem<D, BN, BM, L>::PP, TN = BN / 16, TM = BM / 16;
    constexpr int VW = f32_shape<D>::VW, NV = f32_shape<D>::NV;
    int tx, ty;
    f32_txy<L>(tid, tx, ty);
    float s[TN][TM], dp[TN][TM];
#pragma unroll
    for (int i = 0; i < TN; i++)
#pragma unroll
        for (int c = 0; c < TM; c++)
            s[i][c] = dp[i][c] = 0.f;
    f32_dots<TN, TM, D, P, 16, 16, UD>(s, sm.sK, sm.sQ, ty, tx);
    f32_dots<TN, TM, D, P, 16, 16, UD>(dp, sm.sV, sm.sO, ty, tx);
#pragma unroll
    for (int i = 0; i < TN; i++)
#pragma unroll
        for (int c = 0; c < TM; c++) {
            const int kl = ty + 16 * i, ql = tx + 16 * c;
            float xs;
            if (KIND == KG_ATTN_MASK || check)
                xs = bwd_masked<KIND>(p, mbase, s[i][c], m0 + ql, n0 + kl, check, causal);
            else
                xs = s[i][c] * p.scale_log2;
            const float pr = exp2f(xs - sm.sL[ql]);
            sm.sP[kl * PP + ql] = pr;
            sm.sS[kl * PP + ql] = pr * (dp[i][c] - sm.sDl[ql]);
        }
    __syncthreads();
    f32_acc<TN, BM, PP, NV, VW, P, 16, 16, UA>(dv, sm.sP, sm.sO, ty, tx);
    f32_acc<TN, BM, PP, NV, VW, P, 16, 16, UA>(dk, sm.sS, sm.sQ, ty, tx);
}

/* The loads of one step of the f32 kv walk: query rows m0.. of one head
   (q, dout, rows of that head) into shared memory, between two block
   barriers (the first ends every warp's use of the previous step's tiles). */
template <int D, int BN, int BM, int L>
__device__ __forceinline__ void kv_f32_load(const kg_attnb_params &p, const f32_kv_smem<D, BN, BM, L> &sm, const char *q,
                                            const char *dout, const float *rows, int m0, int tid)
{
    constexpr int NT = 256, P = D + 4, E = 4;
    __syncthreads();
    load_tile<BM, D, P, E, NT>(kgd_smem_addr(sm.sQ), q, p.q_ss, m0, p.sq, tid);
    load_tile<BM, D, P, E, NT>(kgd_smem_addr(sm.sO), dout, p.do_ss, m0, p.sq, tid);
    kgd_cp_async_commit();
    for (int i = tid; i < BM; i += NT) {
        const bool ok = m0 + i < p.sq;
        sm.sL[i] = ok ? rows[p.nrows + m0 + i] : CUDART_INF_F;
        sm.sDl[i] = ok ? rows[m0 + i] : 0.f;
    }
    kgd_cp_async_wait<0>();
    __syncthreads();
}

/* One step of the f32 kv walk, loads included: kv_f32_load, then
   kv_f32_compute (mbase: the head's mask). */
template <int D, int BN, int BM, int KIND, int L = 0>
__device__ __forceinline__ void kv_f32_step(const kg_attnb_params &p, const f32_kv_smem<D, BN, BM, L> &sm, const char *q,
                                            const char *dout, const float *rows, const float *mbase, int n0, int m0,
                                            bool check, bool causal,
                                            float (&dv)[BN / 16][f32_shape<D>::NV][f32_shape<D>::VW],
                                            float (&dk)[BN / 16][f32_shape<D>::NV][f32_shape<D>::VW], int tid)
{
    kv_f32_load<D, BN, BM, L>(p, sm, q, dout, rows, m0, tid);
    kv_f32_compute<D, BN, BM, KIND, L>(p, sm, mbase, n0, m0, check, causal, dv, dk, tid);
}

/* The start of a key block of the f32 kv walk (kv and kvq): K and V rows
   n0.. into shared memory (one cp.async group), dv = dk = 0; returns the
   first query tile that sees key n0 under the causal rule. */
template <int D, int BN, int BM, int L = 0>
__device__ __forceinline__ int kv_f32_begin(const kg_attnb_params &p, const f32_kv_smem<D, BN, BM, L> &sm, const char *k,
                                            const char *v, int n0, bool causal,
                                            float (&dv)[BN / 16][f32_shape<D>::NV][f32_shape<D>::VW],
                                            float (&dk)[BN / 16][f32_shape<D>::NV][f32_shape<D>::VW], int tid)
{
    constexpr int NT = 256, P = D + 4, E = 4;
    load_tile<BN, D, P, E, NT>(kgd_smem_addr(sm.sK), k, p.k_ss, n0, p.sk, tid);
    load_tile<BN, D, P, E, NT>(kgd_smem_addr(sm.sV), v, p.v_ss, n0, p.sk, tid);
    kgd_cp_async_commit();
    int mstart = 0;
    if (causal)
        mstart = max(0, n0 - (p.sk - p.sq)) / BM * BM;
#pragma unroll
    for (int i = 0; i < BN / 16; i++)
#pragma unroll
        for (int d = 0; d < f32_shape<D>::NV; d++)
#pragma unroll
            for (int e = 0; e < f32_shape<D>::VW; e++)
                dv[i][d][e] = dk[i][d][e] = 0.f;
    return mstart;
}

/* kv: 256 threads, BN keys per block, BM queries per tile. */
template <int D, int BN, int BM, int KIND> __device__ __forceinline__ void attnb_kv_f32(const kg_attnb_params &p)
{
    constexpr int E = 4, TN = BN / 16;
    constexpr int VW = f32_shape<D>::VW, NV = f32_shape<D>::NV;
    extern __shared__ __align__(16) unsigned char smem[];
    const f32_kv_smem<D, BN, BM> sm(smem);

    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int hk = blockIdx.y, b = blockIdx.z;
    const int n0 = blockIdx.x * BN;
    const bool causal = KIND == KG_ATTN_CAUSAL || (KIND == KG_ATTN_MASK && p.causal);

    const char *k = (const char *)p.k + (b * p.k_sb + hk * p.k_sh) * E;
    const char *v = (const char *)p.v + (b * p.v_sb + hk * p.v_sh) * E;
    float dv[TN][NV][VW], dk[TN][NV][VW];
    const int mstart = kv_f32_begin<D, BN, BM>(p, sm, k, v, n0, causal, dv, dk, tid);

    for (int hi = 0; hi < p.group; hi++) {
        const int h = hk * p.group + hi;
        const char *q = (const char *)p.q + (b * p.q_sb + h * p.q_sh) * E;
        const char *dout = (const char *)p.dout + (b * p.do_sb + h * p.do_sh) * E;
        const float *rows = p.rows + ((int64_t)b * p.hq + h) * p.sq;
        const float *mbase = KIND == KG_ATTN_MASK ? p.mask + b * p.m_sb + h * p.m_sh : nullptr;
        for (int m0 = mstart; m0 < p.sq; m0 += BM) {
            const bool check = causal && n0 + BN - 1 > m0 + p.sk - p.sq;
            kv_f32_step<D, BN, BM, KIND>(p, sm, q, dout, rows, mbase, n0, m0, check, causal, dv, dk, tid);
        }
    }
    kgd_cp_async_wait<0>();
    f32_store<TN, NV, VW>(dv, (float *)p.dv + b * p.dv_sb + hk * p.dv_sh, p.dv_ss, n0, p.sk, 1.f, ty, tx);
    f32_store<TN, NV, VW>(dk, (float *)p.dk + b * p.dk_sb + hk * p.dk_sh, p.dk_ss, n0, p.sk, p.scale, ty, tx);
}

/* acc[i][d][e] += sum_k W[k][ty + 16 i] X[k][VW (tx + 16 d) + e] for k < K:
   f32_acc with W read transposed (W pitch PW, X pitch P). */
template <int TR, int K, int PW, int NV, int VW, int P>
__device__ __forceinline__ void f32_acc_t(float (&acc)[TR][NV][VW], const float *W, const float *X, int ty, int tx)
{
    typedef typename kg_attn::fvec<VW>::t vec;
#pragma unroll 4
    for (int c = 0; c < K; c++) {
        float w[TR];
#pragma unroll
        for (int i = 0; i < TR; i++)
            w[i] = W[c * PW + ty + 16 * i];
        vec xv[NV];
#pragma unroll
        for (int d = 0; d < NV; d++)
            xv[d] = *(const vec *)&X[c * P + VW * (tx + 16 * d)];
#pragma unroll
        for (int i = 0; i < TR; i++)
#pragma unroll
            for (int d = 0; d < NV; d++)
#pragma unroll
                for (int e = 0; e < VW; e++)
                    acc[i][d][e] = fmaf(w[i], kg_attn::fvec<VW>::at(xv[d], e), acc[i][d][e]);
    }
}

/* f32_acc_t for rows TR ty + i of acc (TR = 2 or 4): a thread's W values of
   one k are adjacent, one vector load. */
template <int TR, int K, int PW, int NV, int VW, int P, int UQ = 4>
__device__ __forceinline__ void f32_acc_tc(float (&acc)[TR][NV][VW], const float *W, const float *X, int ty, int tx)
{
    typedef typename kg_attn::fvec<VW>::t vec;
    typedef typename kg_attn::fvec<TR>::t wvec;
    if constexpr (UQ == 0) {
        /* software-pipelined: the next k's vectors are loaded while this
           one's FMAs run; the same FMAs in the same order as below */
        wvec w[2];
        vec xv[2][NV];
        w[0] = *(const wvec *)&W[TR * ty];
#pragma unroll
        for (int d = 0; d < NV; d++)
            xv[0][d] = *(const vec *)&X[VW * (tx + 16 * d)];
#pragma unroll
        for (int c = 0; c < K; c++) {
            const int cur = c & 1;
            if (c + 1 < K) {
                w[cur ^ 1] = *(const wvec *)&W[(c + 1) * PW + TR * ty];
#pragma unroll
                for (int d = 0; d < NV; d++)
                    xv[cur ^ 1][d] = *(const vec *)&X[(c + 1) * P + VW * (tx + 16 * d)];
            }
#pragma unroll
            for (int i = 0; i < TR; i++)
#pragma unroll
                for (int d = 0; d < NV; d++)
#pragma unroll
                    for (int e = 0; e < VW; e++)
                        acc[i][d][e] = fmaf(kg_attn::fvec<TR>::at(w[cur], i), kg_attn::fvec<VW>::at(xv[cur][d], e),
                                            acc[i][d][e]);
        }
    } else {
#pragma unroll(UQ > 0 ? UQ : 1)
        for (int c = 0; c < K; c++) {
            const wvec w = *(const wvec *)&W[c * PW + TR * ty];
            vec xv[NV];
#pragma unroll
            for (int d = 0; d < NV; d++)
                xv[d] = *(const vec *)&X[c * P + VW * (tx + 16 * d)];
#pragma unroll
            for (int i = 0; i < TR; i++)
#pragma unroll
                for (int d = 0; d < NV; d++)
#pragma unroll
                    for (int e = 0; e < VW; e++)
                        acc[i][d][e] = fmaf(kg_attn::fvec<TR>::at(w, i), kg_attn::fvec<VW>::at(xv[d], e), acc[i][d][e]);
        }
    }
}

/* A thread's dQ rows of a step of the f32 kvq walk before dS K is added:
   rows m0 + ty + 16 i (layout L = 1: m0 + TM ty + i) of the lane's partial
   (0 in the lane's first key block, and past Sq). SH: read from shared
   memory (src: row m0, pitch D + 4, where attnb_kvq_f32p put them), else
   from the partial in global memory (src: its row 0, pitch D). */
template <int D, int BM, int L, bool SH>
__device__ __forceinline__ void kvq_f32_dq_in(const float *src, int m0, int sq, bool first, int ty, int tx,
                                              float (&dq)[BM / 16][f32_shape<D>::NV][f32_shape<D>::VW])
{
    constexpr int P = D + 4, TM = BM / 16;
    constexpr int VW = f32_shape<D>::VW, NV = f32_shape<D>::NV;
    constexpr bool CR = L != 0;
    typedef typename kg_attn::fvec<VW>::t vec;
#pragma unroll
    for (int i = 0; i < TM; i++) {
        const int rl = CR ? TM * ty + i : ty + 16 * i, r = m0 + rl;
#pragma unroll
        for (int d = 0; d < NV; d++) {
            vec o;
            float *of = (float *)&o;
            if (SH ? !first : !first && r < sq)
                o = *(const vec *)(SH ? &src[rl * P + VW * (tx + 16 * d)] : &src[(int64_t)r * D + VW * (tx + 16 * d)]);
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

/* The rest of a step's dQ: dq += dS K, from the dS^T and K tiles in shared
   memory, back to the partial (rows m0..). */
template <int D, int BN, int BM, int L, int UQ = 4>
__device__ __forceinline__ void kvq_f32_dq_run(const kg_attnb_params &p, const f32_kv_smem<D, BN, BM, L> &sm,
                                               float *part, int m0, int ty, int tx,
                                               float (&dq)[BM / 16][f32_shape<D>::NV][f32_shape<D>::VW])
{
    constexpr int P = D + 4, PP = f32_kv_smem<D, BN, BM, L>::PP, TM = BM / 16;
    constexpr int VW = f32_shape<D>::VW, NV = f32_shape<D>::NV;
    constexpr bool CR = L != 0;
    if (CR)
        f32_acc_tc<TM, BN, PP, NV, VW, P, UQ>(dq, sm.sS, sm.sK, ty, tx);
    else
        f32_acc_t<TM, BN, PP, NV, VW, P>(dq, sm.sS, sm.sK, ty, tx);
    f32_store<TM, NV, VW, CR>(dq, part, D, m0, p.sq, 1.f, ty, tx);
}

/* The dQ part of a step of the f32 kvq walk: dQ rows m0 + ty + 16 i (layout
   L = 1: m0 + TM ty + i) = the lane's partial so far (0 in the lane's first
   key block) + dS K, from the dS^T and K tiles in shared memory, back to the
   partial. */
template <int D, int BN, int BM, int L, int UQ = 4>
__device__ __forceinline__ void kvq_f32_dq(const kg_attnb_params &p, const f32_kv_smem<D, BN, BM, L> &sm, float *part,
                                           int m0, bool first, int ty, int tx)
{
    float dq[BM / 16][f32_shape<D>::NV][f32_shape<D>::VW];
    kvq_f32_dq_in<D, BM, L, false>(part, m0, p.sq, first, ty, tx, dq);
    kvq_f32_dq_run<D, BN, BM, L, UQ>(p, sm, part, m0, ty, tx, dq);
}

/* The end of a key block of the f32 kvq walk (attnb_kvq_f32, and
   attnb_kvq_f32p of attention_bwd_f32.cuh): dV and dK of keys n0.. to the
   split's partials (p.splits > 1) or to dV, dK (dK scaled). */
template <int D, int BN>
__device__ __forceinline__ void kvq_f32_store(const kg_attnb_params &p,
                                              const float (&dv)[BN / 16][f32_shape<D>::NV][f32_shape<D>::VW],
                                              const float (&dk)[BN / 16][f32_shape<D>::NV][f32_shape<D>::VW], int sp,
                                              int b, int hk, int n0, int ty, int tx)
{
    constexpr int TN = BN / 16, VW = f32_shape<D>::VW, NV = f32_shape<D>::NV;
    if (p.splits > 1) {
        f32_store<TN, NV, VW>(dv, split_dkv<D>(p, sp, 1, b, hk), D, n0, p.sk, 1.f, ty, tx);
        f32_store<TN, NV, VW>(dk, split_dkv<D>(p, sp, 0, b, hk), D, n0, p.sk, 1.f, ty, tx);
    } else {
        f32_store<TN, NV, VW>(dv, (float *)p.dv + b * p.dv_sb + hk * p.dv_sh, p.dv_ss, n0, p.sk, 1.f, ty, tx);
        f32_store<TN, NV, VW>(dk, (float *)p.dk + b * p.dk_sb + hk * p.dk_sh, p.dk_ss, n0, p.sk, p.scale, ty, tx);
    }
}

/* kv with dQ partials (the fused path) in FP32: attnb_kv_f32's walk for
   each key block of lane blockIdx.x (lane_block), plus per
   step dQ_tile = dS K from the dS^T and K tiles already in shared memory,
   added to the lane's partial (read straight from global memory: the lane's
   first key block starts from 0). See attnb_kvq_tc for the lanes. (A
   variant that loaded a step's tiles during the previous step's dQ and the
   partial through shared memory ran no faster: H200, 2026-12-01.) L: the
   threads' layout (f32_txy); under L = 1 a thread's dQ rows are TM ty + i
   (f32_acc_tc) instead of ty + 16 i (kvq_f32_dq). */
template <int D, int BN, int BM, int KIND, int L = 0>
__device__ __forceinline__ void attnb_kvq_f32(const kg_attnb_params &p)
{
    constexpr int E = 4, TN = BN / 16;
    constexpr int VW = f32_shape<D>::VW, NV = f32_shape<D>::NV;
    extern __shared__ __align__(16) unsigned char smem[];
    const f32_kv_smem<D, BN, BM, L> sm(smem);

    const int tid = threadIdx.x;
    int tx, ty;
    f32_txy<L>(tid, tx, ty);
    const int c = blockIdx.x % p.lanes, sp = blockIdx.x / p.lanes, hk = blockIdx.y, b = blockIdx.z;
    const bool causal = KIND == KG_ATTN_CAUSAL || (KIND == KG_ATTN_MASK && p.causal);
    const int nkb = (p.sk + BN - 1) / BN;
    int h0, nh, mlo, mhi;
    split_of<BM>(p, sp, h0, nh, mlo, mhi);
    const char *k = (const char *)p.k + (b * p.k_sb + hk * p.k_sh) * E;
    const char *v = (const char *)p.v + (b * p.v_sb + hk * p.v_sh) * E;

    for (int j = 0, kb = c; kb < nkb; j++, kb = lane_block(p.lanes, c, j)) {
        const int n0 = kb * BN;
        const bool first = j == 0;
        __syncthreads(); /* the previous key block is done with K, V */
        float dv[TN][NV][VW], dk[TN][NV][VW];
        const int mstart = max(mlo, kv_f32_begin<D, BN, BM, L>(p, sm, k, v, n0, causal, dv, dk, tid));

        for (int hi = h0; hi < h0 + nh; hi++) {
            const int h = hk * p.group + hi;
            const char *q = (const char *)p.q + (b * p.q_sb + h * p.q_sh) * E;
            const char *dout = (const char *)p.dout + (b * p.do_sb + h * p.do_sh) * E;
            const float *rows = p.rows + ((int64_t)b * p.hq + h) * p.sq;
            const float *mbase = KIND == KG_ATTN_MASK ? p.mask + b * p.m_sb + h * p.m_sh : nullptr;
            float *part = p.dqp + ((int64_t)c * p.nrows + ((int64_t)b * p.hq + h) * p.sq) * D;
            for (int m0 = mstart; m0 < mhi; m0 += BM) {
                /* keys past Sk are masked here (their dS^T feeds dQ) */
                const bool check = n0 + BN > p.sk || (causal && n0 + BN - 1 > m0 + p.sk - p.sq);
                kv_f32_step<D, BN, BM, KIND, L>(p, sm, q, dout, rows, mbase, n0, m0, check, causal, dv, dk, tid);
                kvq_f32_dq<D, BN, BM, L>(p, sm, part, m0, first, ty, tx);
            }
        }
        kgd_cp_async_wait<0>();
        kvq_f32_store<D, BN>(p, dv, dk, sp, b, hk, n0, ty, tx);
    }
}

/* The shapes of the split-role f32 kvq (attnb_kvq_f32s, and attnb_kvq_f32p
   of attention_bwd_f32.cuh under SR): scores, a half is a 8 (queries, qx) x
   16 (keys, ky) grid, TND x TMD a thread; dV / dK, a half is a GXA (columns
   of 4) x GYA (keys) grid, TRA rows of 8 columns a thread. */
template <int D, int BN, int BM> struct kvs_f32_shape {
    static constexpr int TND = BN / 16, TMD = BM / 8;
    static constexpr int VWA = 4, NVA = 2, GXA = D / (VWA * NVA), GYA = 128 / GXA, TRA = BN / GYA;
};

/* Where a block of the f32 kvq walks that load their own query tiles
   (attnb_kvq_f32s, attnb_kvq_f32p) stands: lane c, split sp (heads h0..
   h0 + nh, query rows mlo.. mhi: split_of), kv head hk, batch b; whether the
   causal rule holds; nkb key blocks; k, v: the kv head's K, V. */
struct kvs_f32_place {
    int c, sp, hk, b;
    bool causal;
    int nkb, h0, nh, mlo, mhi;
    const char *k, *v;
};

template <int BN, int BM, int KIND> __device__ __forceinline__ kvs_f32_place kvs_f32_place_of(const kg_attnb_params &p)
{
    constexpr int E = 4;
    kvs_f32_place w;
    w.c = blockIdx.x % p.lanes, w.sp = blockIdx.x / p.lanes, w.hk = blockIdx.y, w.b = blockIdx.z;
    w.causal = KIND == KG_ATTN_CAUSAL || (KIND == KG_ATTN_MASK && p.causal);
    w.nkb = (p.sk + BN - 1) / BN;
    split_of<BM>(p, w.sp, w.h0, w.nh, w.mlo, w.mhi);
    w.k = (const char *)p.k + (w.b * p.k_sb + w.hk * p.k_sh) * E;
    w.v = (const char *)p.v + (w.b * p.v_sb + w.hk * p.v_sh) * E;
    return w;
}

/* The start of a key block of the f32 kvq walks that load their own query
   tiles (attnb_kvq_f32s, attnb_kvq_f32p): K and V rows n0.. into shared
   memory (one cp.async group); returns the first query tile of the split
   (from mlo) that sees key n0 under the causal rule. */
template <int D, int BN, int BM, int L>
__device__ __forceinline__ int kvs_f32_begin(const kg_attnb_params &p, const f32_kv_smem<D, BN, BM, L> &sm, const char *k,
                                             const char *v, int n0, int mlo, bool causal, int tid)
{
    constexpr int NT = 256, P = D + 4, E = 4;
    load_tile<BN, D, P, E, NT>(kgd_smem_addr(sm.sK), k, p.k_ss, n0, p.sk, tid);
    load_tile<BN, D, P, E, NT>(kgd_smem_addr(sm.sV), v, p.v_ss, n0, p.sk, tid);
    kgd_cp_async_commit();
    int mstart = mlo;
    if (causal)
        mstart = max(mlo, max(0, n0 - (p.sk - p.sq)) / BM * BM);
    return mstart;
}

template <int TR, int NV, int VW> __device__ __forceinline__ void f32_zero(float (&acc)[TR][NV][VW])
{
#pragma unroll
    for (int i = 0; i < TR; i++)
#pragma unroll
        for (int d = 0; d < NV; d++)
#pragma unroll
            for (int e = 0; e < VW; e++)
                acc[i][d][e] = 0.f;
}

/* The first part of a split-role step, with this step's Q, dout in shared
   memory: x = S^T (first half: dotA K, dotB Q) or dP^T (second: V, dout),
   keys ky + 16 i x queries qx + 8 c. (A step in one function instead of
   this and kvs_f32_update changed attnb_kvq_f32p's mask kernels' code.) */
template <int D, int BN, int BM, int UD = 2>
__device__ __forceinline__ void kvs_f32_dots(float (&x)[kvs_f32_shape<D, BN, BM>::TND][kvs_f32_shape<D, BN, BM>::TMD],
                                             const float *dotA, const float *dotB, int ky, int qx)
{
    constexpr int TND = kvs_f32_shape<D, BN, BM>::TND, TMD = kvs_f32_shape<D, BN, BM>::TMD;
#pragma unroll
    for (int i = 0; i < TND; i++)
#pragma unroll
        for (int cc = 0; cc < TMD; cc++)
            x[i][cc] = 0.f;
    f32_dots<TND, TMD, D, D + 4, 16, 8, UD>(x, dotA, dotB, ky, qx);
}

/* The rest of a split-role step, with the rows' lse2, delta in shared
   memory (mbase: the head's mask): P^T from x = S^T into shared memory
   (first half); a barrier; dS^T = P^T (x - delta) (second half, x = dP^T);
   a barrier; acc += accW^T accX (dV += P^T dout, first half; dK += dS^T Q,
   second). */
template <int D, int BN, int BM, int KIND, int UA = 1>
__device__ __forceinline__ void kvs_f32_update(const kg_attnb_params &p, const f32_kv_smem<D, BN, BM, 1> &sm,
                                               const float *mbase, int n0, int m0, bool check, bool causal, int half,
                                               int ky, int qx,
                                               const float (&x)[kvs_f32_shape<D, BN, BM>::TND]
                                                               [kvs_f32_shape<D, BN, BM>::TMD],
                                               int ay, int ax, const float *accW, const float *accX,
                                               float (&acc)[kvs_f32_shape<D, BN, BM>::TRA]
                                                           [kvs_f32_shape<D, BN, BM>::NVA]
                                                           [kvs_f32_shape<D, BN, BM>::VWA])
{
    typedef kvs_f32_shape<D, BN, BM> S;
    constexpr int PP = f32_kv_smem<D, BN, BM, 1>::PP;
    constexpr int TND = S::TND, TMD = S::TMD;
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
    f32_acc<S::TRA, BM, PP, S::NVA, S::VWA, D + 4, S::GYA, S::GXA, UA>(acc, accW, accX, ay, ax);
}

/* The end of a key block of the split-role walk: the first half's dV, the
   second's dK (scaled), of keys n0.., to the split's partials or dV, dK. */
template <int D, int BN, int BM>
__device__ __forceinline__ void kvs_f32_store(const kg_attnb_params &p,
                                              const float (&acc)[kvs_f32_shape<D, BN, BM>::TRA]
                                                                [kvs_f32_shape<D, BN, BM>::NVA]
                                                                [kvs_f32_shape<D, BN, BM>::VWA],
                                              int sp, int half, int b, int hk, int n0, int ay, int ax)
{
    typedef kvs_f32_shape<D, BN, BM> S;
    constexpr int TRA = S::TRA, NVA = S::NVA, VWA = S::VWA, GYA = S::GYA, GXA = S::GXA;
    if (p.splits > 1)
        f32_store<TRA, NVA, VWA, false, GYA, GXA>(acc, split_dkv<D>(p, sp, 1 - half, b, hk), D, n0, p.sk, 1.f, ay,
                                                  ax);
    else if (half == 0)
        f32_store<TRA, NVA, VWA, false, GYA, GXA>(acc, (float *)p.dv + b * p.dv_sb + hk * p.dv_sh, p.dv_ss, n0,
                                                  p.sk, 1.f, ay, ax);
    else
        f32_store<TRA, NVA, VWA, false, GYA, GXA>(acc, (float *)p.dk + b * p.dk_sb + hk * p.dk_sh, p.dk_ss, n0,
                                                  p.sk, p.scale, ay, ax);
}

/* kvq in FP32 with split roles: attnb_kvq_f32's walk, lanes and dQ
   partials (layout 1), but the block's two halves of 128 threads share the
   work by product instead of by tile: the first computes S^T = K Q^T and
   keeps dV, the second dP^T = V dout^T and keeps dK. The kernel is bound by
   shared-memory bandwidth (32 floats a clock an SM against 128 FMAs): a
   thread's tiles of 4 x 4 (scores) and 4 x 8 (dK, dV, D 128) read one
   float per 2.35 FMAs; per product a half's tiles are twice as large, 4 x 8
   and 8 x 8 (D 128: 3.08 FMAs a float; D 64 with 128 keys: 8 x 8 and 8 x 8),
   with the same registers. Per step: both dot products at once; P^T from
   S^T into shared memory (first half); a barrier; dS^T = P^T (dP^T - delta)
   (second half, from its dP^T registers); a barrier; dV += P^T dout (first
   half) and dK += dS^T Q (second half) at once; then dQ by every thread as
   attnb_kvq_f32 does it. The same arithmetic in the same order as
   attnb_kvq_f32: the same bits. */
template <int D, int BN, int BM, int KIND>
__device__ __forceinline__ void attnb_kvq_f32s(const kg_attnb_params &p)
{
    constexpr int E = 4;
    typedef f32_kv_smem<D, BN, BM, 1> smem_t;
    /* scores and dV / dK: kvs_f32_shape; dQ: every thread, f32_txy<1> (kvq_f32_dq) */
    typedef kvs_f32_shape<D, BN, BM> S;
    constexpr int VWA = S::VWA, NVA = S::NVA, GXA = S::GXA, GYA = S::GYA, TRA = S::TRA;
    static_assert(D == 64 || D == 128, "attnb_kvq_f32s: head dims 64 and 128");
    static_assert(BN % GYA == 0 && BN % 16 == 0 && BM % 16 == 0, "attnb_kvq_f32s: tile sizes");
    extern __shared__ __align__(16) unsigned char smem[];
    const smem_t sm(smem);

    const int tid = threadIdx.x, half = tid >> 7, t = tid & 127;
    const int qx = t & 7, ky = t >> 3;       /* a warp: 8 queries x 4 keys */
    const int ax = t % GXA, ay = t / GXA;
    int tx, ty;
    f32_txy<1>(tid, tx, ty);
    const auto [c, sp, hk, b, causal, nkb, h0, nh, mlo, mhi, k, v] = kvs_f32_place_of<BN, BM, KIND>(p);
    /* the first half's products read S's operands and P^T, dout; the second's dP's, dS^T, Q */
    const float *dotA = half ? sm.sV : sm.sK, *dotB = half ? sm.sO : sm.sQ;
    const float *accW = half ? sm.sS : sm.sP, *accX = half ? sm.sQ : sm.sO;

    for (int j = 0, kb = c; kb < nkb; j++, kb = lane_block(p.lanes, c, j)) {
        const int n0 = kb * BN;
        const bool first = j == 0;
        __syncthreads(); /* the previous key block is done with K, V */
        const int mstart = kvs_f32_begin<D, BN, BM, 1>(p, sm, k, v, n0, mlo, causal, tid);
        float acc[TRA][NVA][VWA]; /* first half: dV, second: dK */
        f32_zero(acc);

        for (int hi = h0; hi < h0 + nh; hi++) {
            const int h = hk * p.group + hi;
            const char *q = (const char *)p.q + (b * p.q_sb + h * p.q_sh) * E;
            const char *dout = (const char *)p.dout + (b * p.do_sb + h * p.do_sh) * E;
            const float *rows = p.rows + ((int64_t)b * p.hq + h) * p.sq;
            const float *mbase = KIND == KG_ATTN_MASK ? p.mask + b * p.m_sb + h * p.m_sh : nullptr;
            float *part = p.dqp + ((int64_t)c * p.nrows + ((int64_t)b * p.hq + h) * p.sq) * D;
            for (int m0 = mstart; m0 < mhi; m0 += BM) {
                /* keys past Sk are masked here (their dS^T feeds dQ) */
                const bool check = n0 + BN > p.sk || (causal && n0 + BN - 1 > m0 + p.sk - p.sq);
                kv_f32_load<D, BN, BM, 1>(p, sm, q, dout, rows, m0, tid);
                float x[S::TND][S::TMD]; /* S^T (first half) or dP^T (second) */
                kvs_f32_dots<D, BN, BM>(x, dotA, dotB, ky, qx);
                kvs_f32_update<D, BN, BM, KIND>(p, sm, mbase, n0, m0, check, causal, half, ky, qx, x, ay, ax, accW, accX,
                                                acc);
                kvq_f32_dq<D, BN, BM, 1>(p, sm, part, m0, first, ty, tx);
            }
        }
        kgd_cp_async_wait<0>();
        kvs_f32_store<D, BN, BM>(p, acc, sp, half, b, hk, n0, ay, ax);
    }
}

/* q: 256 threads, BM queries per block, BN keys per tile. */
template <int D, int BM, int BN, int KIND> __device__ __forceinline__ void attnb_q_f32(const kg_attnb_params &p)
{
    constexpr int NT = 256, P = D + 4, PP = BN + 4, E = 4, TM = BM / 16, TN = BN / 16;
    constexpr int VW = f32_shape<D>::VW, NV = f32_shape<D>::NV;
    extern __shared__ __align__(16) unsigned char smem[];
    float *sQ = (float *)smem;
    float *sO = sQ + BM * P;
    float *sK = sO + BM * P;
    float *sV = sK + BN * P;
    float *sS = sV + BN * P;

    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    /* wr (warp rows) is unused here: 16 x 16 threads, not warps, tile the block */
    const auto [h, b, m0, wr, causal, q, dout, k, v, mbase, ntiles] = q_block_of<KIND, BM, BN, E>(p, 0, 0);

    load_tile<BM, D, P, E, NT>(kgd_smem_addr(sQ), q, p.q_ss, m0, p.sq, tid);
    load_tile<BM, D, P, E, NT>(kgd_smem_addr(sO), dout, p.do_ss, m0, p.sq, tid);
    kgd_cp_async_commit();
    float lse2[TM], dl[TM];
    q_rows_stats(p, b, h, m0 + ty, 16, lse2, dl);

    float acc[TM][NV][VW];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int d = 0; d < NV; d++)
#pragma unroll
            for (int e = 0; e < VW; e++)
                acc[i][d][e] = 0.f;

    for (int j = 0; j < ntiles; j++) {
        const int n0 = j * BN;
        __syncthreads();
        load_tile<BN, D, P, E, NT>(kgd_smem_addr(sK), k, p.k_ss, n0, p.sk, tid);
        load_tile<BN, D, P, E, NT>(kgd_smem_addr(sV), v, p.v_ss, n0, p.sk, tid);
        kgd_cp_async_commit();
        kgd_cp_async_wait<0>();
        __syncthreads();
        float s[TM][TN], dp[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int c = 0; c < TN; c++)
                s[i][c] = dp[i][c] = 0.f;
        f32_dots<TM, TN, D, P>(s, sQ, sK, ty, tx);
        f32_dots<TM, TN, D, P>(dp, sO, sV, ty, tx);
        const bool check = n0 + BN > p.sk || (causal && n0 + BN - 1 > m0 + p.sk - p.sq);
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int c = 0; c < TN; c++) {
                const int ql = ty + 16 * i, kl = tx + 16 * c;
                float xs;
                if (KIND == KG_ATTN_MASK || check)
                    xs = bwd_masked<KIND>(p, mbase, s[i][c], m0 + ql, n0 + kl, check, causal);
                else
                    xs = s[i][c] * p.scale_log2;
                const float pr = exp2f(xs - lse2[i]);
                sS[ql * PP + kl] = pr * (dp[i][c] - dl[i]);
            }
        __syncthreads();
        f32_acc<TM, BN, PP, NV, VW, P>(acc, sS, sK, ty, tx);
    }
    kgd_cp_async_wait<0>();
    f32_store<TM, NV, VW>(acc, (float *)p.dq + b * p.dq_sb + h * p.dq_sh, p.dq_ss, m0, p.sq, p.scale, ty, tx);
}

} // namespace kg_attnb

#endif
