/*
 * attention_x3.cuh - the FP32 forward kernel on tensor cores (attn_x3:
 * split TF32, "3xTF32", mma.sync m16n8k8)
 * (attention.cuh describes the algorithm; attention_common.cuh holds the
 * helpers it uses; attention_bwd_x3.cuh the split policies, fragments and
 * products, shared with the backward's FP32 kernel).
 *
 * Every f32 operand is split into TF32 hi + lo (attention_bwd_x3.cuh's
 * x3_int: integer rounding, not cvt) and each product is lo_a hi_b + hi_a
 * lo_b + hi_a hi_b on the tensor cores (f32 accumulators), about 21-22 of
 * the 24 significand bits of each operand: FP32-accurate, not TF32. The
 * same split in the same order every call: bitwise reproducible. NW warps
 * own 16 query rows each (BM = 16 NW);
 * tiles of BN keys. Q, K and V tiles are f32 in shared memory (row pitch
 * D + 4: conflict-free 32-bit fragment loads), filled by cp.async: the next
 * K tile loads during the P V product, the V tile during Q K^T (as in
 * attn_f32). Q K^T: D / 8 k-steps from zero. P V: P comes from the score
 * accumulators as A fragments (key slots t, t + 4 = accumulator columns
 * 2 t, 2 t + 1; V's rows read in the same order). Each tile's P V is formed
 * in fresh accumulators (64 output columns at a time; 32 at D 32, 96) and
 * added to the rescaled output by FFMA, o = o alpha + pv: the tensor cores' accumulation
 * truncates, and a running accumulator over every key tile would gather
 * that bias (attention_bwd_x3.cuh).
 */
#ifndef KG_ATTENTION_X3_CUH
#define KG_ATTENTION_X3_CUH

#include "attention_bwd_x3.cuh"
#include "attention_common.cuh"

namespace kg_attn
{

/* The block's work tile (grid (query blocks, Hq, B), the longest causal
   blocks first): its first query row, head, batch, key tiles and the q / k
   / v rows of its head. */
struct x3_tile {
    int m0, h, b, ntiles;
    bool causal;
    const char *q, *k, *v;
};
template <int KIND> __device__ __forceinline__ x3_tile x3_tile_of(const kg_attn_params &p, int BM, int BN)
{
    x3_tile w;
    w.h = blockIdx.y, w.b = blockIdx.z, w.m0 = (gridDim.x - 1 - blockIdx.x) * BM;
    w.causal = KIND == KG_ATTN_CAUSAL || (KIND == KG_ATTN_MASK && p.causal);
    const int64_t hk = w.h / p.group;
    w.q = (const char *)p.q + (w.b * p.q_sb + w.h * p.q_sh) * 4;
    w.k = (const char *)p.k + (w.b * p.k_sb + hk * p.k_sh) * 4;
    w.v = (const char *)p.v + (w.b * p.v_sb + hk * p.v_sh) * 4;
    w.ntiles = key_tiles(p, w.causal, w.m0, BM, BN);
    return w;
}

/* A warp's two rows per thread (m0 + wr + g, + 8): running max, sum and
   (KIND MASK) mask rows. */
template <int KIND>
__device__ __forceinline__ void x3_rows(const kg_attn_params &p, const x3_tile &w, int wr, int g, float (&mx)[2],
                                        float (&l)[2], const float *(&mrow)[2])
{
#pragma unroll
    for (int i = 0; i < 2; i++) {
        mx[i] = -CUDART_INF_F;
        l[i] = 0.f;
        const int r = min(w.m0 + wr + g + 8 * i, p.sq - 1);
        mrow[i] = KIND == KG_ATTN_MASK ? p.mask + w.b * p.m_sb + w.h * p.m_sh + (int64_t)r * p.m_sq : nullptr;
    }
}

/* Key tile n0.. of a warp's 16 rows (wr): S = Q K^T on the tensor cores
   (both operands K-major, attention_bwd_x3.cuh; B fragments in groups of
   x3_grp(NS) n-tiles, fewer live registers than all NS), scaled and masked
   (only where the tile crosses the end or the diagonal), then the online
   softmax step: s becomes the exponentials, rs their row sums, alpha the
   factor for what the rows held so far; mx is raised. */
template <int D, int BN, int P, int KIND>
__device__ __forceinline__ void x3_scores(const kg_attn_params &p, const x3_tile &w, const float *sQ, const float *sK,
                                          int n0, int wr, int g, int t, const float *const (&mrow)[2],
                                          float (&s)[BN / 8][4], float (&mx)[2], float (&alpha)[2], float (&rs)[2])
{
    constexpr int NS = BN / 8, GRP = kg_attnb::x3_grp(NS);
#pragma unroll
    for (int n = 0; n < NS; n++)
        s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
    kg_attnb::x3_rows_x_rows<D, NS, P, kg_attnb::x3_int, GRP>(s, sQ, sK, wr, g, t);
    const bool check = n0 + BN > p.sk || (w.causal && n0 + BN - 1 > w.m0 + wr + p.sk - p.sq);
    float tmax[2] = {-CUDART_INF_F, -CUDART_INF_F}, use[2];
#pragma unroll
    for (int n = 0; n < NS; n++)
#pragma unroll
        for (int x = 0; x < 4; x++) {
            const int c = n0 + n * 8 + 2 * t + (x & 1), r = w.m0 + wr + g + 8 * (x >> 1);
            s[n][x] = KIND == KG_ATTN_MASK || check ? masked<KIND>(p, mrow[x >> 1], s[n][x], r, c, check, w.causal)
                                                    : s[n][x] * p.scale_log2;
            tmax[x >> 1] = fmaxf(tmax[x >> 1], s[n][x]);
        }
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const float mnew = fmaxf(mx[i], quad_max(tmax[i]));
        use[i] = mnew == -CUDART_INF_F ? 0.f : mnew;
        alpha[i] = exp2f(mx[i] - use[i]);
        mx[i] = mnew;
        rs[i] = 0.f;
    }
#pragma unroll
    for (int n = 0; n < NS; n++)
#pragma unroll
        for (int x = 0; x < 4; x++) {
            s[n][x] = exp2f(s[n][x] - use[x >> 1]);
            rs[x >> 1] += s[n][x];
        }
}

/* The row's lse (log-sum-exp, natural log; -inf for a row with no visible
   key) from its max (log2 domain) and sum. */
__device__ __forceinline__ float x3_lse(float m, float sum) { return sum > 0.f ? (m + log2f(sum)) * KG_LN2 : -CUDART_INF_F; }

/* attn_x3: both products on the tensor cores (see the top of this file). */
template <int D, int NW, int BN, int KIND> __device__ __forceinline__ void attn_x3(const kg_attn_params &p)
{
    constexpr int NT = NW * 32, BM = NW * 16, P = D + 4, E = 4;
    constexpr int NS = BN / 8, DC = D % 64 == 0 ? 64 : 32, NC = D / DC;
    static_assert(D % DC == 0 && BN % 8 == 0, "tile shape");
    extern __shared__ __align__(16) unsigned char smem[];
    float *sQ = (float *)smem;
    float *sK = sQ + BM * P;
    float *sV = sK + BN * P;

    const int tid = threadIdx.x, wr = (tid >> 5) * 16, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const x3_tile w = x3_tile_of<KIND>(p, BM, BN);
    load_tile<BM, D, P, E, NT>(kgd_smem_addr(sQ), w.q, p.q_ss, w.m0, p.sq, tid);
    kgd_cp_async_commit();
    if (w.ntiles > 0)
        load_tile<BN, D, P, E, NT>(kgd_smem_addr(sK), w.k, p.k_ss, 0, p.sk, tid);
    kgd_cp_async_commit();

    float o[D / 8][4], mx[2], l[2];
    const float *mrow[2];
    x3_rows<KIND>(p, w, wr, g, mx, l, mrow);
#pragma unroll
    for (int d = 0; d < D / 8; d++)
        o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.f;

    for (int j = 0; j < w.ntiles; j++) {
        const int n0 = j * BN;
        __syncthreads(); /* every warp is done with the previous V tile */
        load_tile<BN, D, P, E, NT>(kgd_smem_addr(sV), w.v, p.v_ss, n0, p.sk, tid);
        kgd_cp_async_commit();
        kgd_cp_async_wait<1>(); /* this K tile (and Q) arrived */
        __syncthreads();

        float s[NS][4], alpha[2], rs[2];
        x3_scores<D, BN, P, KIND>(p, w, sQ, sK, n0, wr, g, t, mrow, s, mx, alpha, rs);
        __syncthreads(); /* every warp is done with this K tile */
        if (j + 1 < w.ntiles)
            load_tile<BN, D, P, E, NT>(kgd_smem_addr(sK), w.k, p.k_ss, n0 + BN, p.sk, tid);
        kgd_cp_async_commit();
        l[0] = l[0] * alpha[0] + rs[0];
        l[1] = l[1] * alpha[1] + rs[1];

        kgd_cp_async_wait<1>(); /* this V tile arrived */
        __syncthreads();
#pragma unroll
        for (int cc = 0; cc < NC; cc++) {
            float pv[DC / 8][4];
#pragma unroll
            for (int d = 0; d < DC / 8; d++)
                pv[d][0] = pv[d][1] = pv[d][2] = pv[d][3] = 0.f;
#pragma unroll
            for (int kk = 0; kk < NS; kk++) {
                kg_attnb::x3_a a; /* key slots t, t + 4: accumulator columns 2 t, 2 t + 1 */
                kg_attnb::x3_a_of_acc<kg_attnb::x3_int>(a, s[kk]);
                kg_attnb::x3_acc_tile<DC / 8, P, kg_attnb::x3_int>(pv, a, sV, 8 * kk, cc * DC, g, t);
            }
#pragma unroll
            for (int d = 0; d < DC / 8; d++)
#pragma unroll
                for (int x = 0; x < 4; x++)
                    o[cc * DC / 8 + d][x] = fmaf(o[cc * DC / 8 + d][x], alpha[x >> 1], pv[d][x]);
        }
    }
    kgd_cp_async_wait<0>();

    /* normalize and store: each quad writes 32 contiguous bytes of a row */
    float *out = (float *)p.out + w.b * p.o_sb + w.h * p.o_sh;
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const float sum = quad_sum(l[i]);
        const float inv = sum > 0.f ? 1.f / sum : 0.f;
        const int r = w.m0 + wr + g + 8 * i;
        if (r >= p.sq)
            continue;
#pragma unroll
        for (int d = 0; d < D / 8; d++)
            *(float2 *)&out[(int64_t)r * p.o_ss + d * 8 + 2 * t] = make_float2(o[d][2 * i] * inv, o[d][2 * i + 1] * inv);
        if (p.lse && t == 0)
            p.lse[w.b * p.l_sb + w.h * p.l_sh + (int64_t)r * p.l_ss] = x3_lse(mx[i], sum);
    }
}

} // namespace kg_attn

#endif
