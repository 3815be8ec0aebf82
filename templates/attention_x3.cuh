/*
 * attention_x3.cuh - the FP32 forward kernel on tensor cores (attn_x3:
 * split TF32, "3xTF32", mma.sync m16n8k8)
 * (attention.cuh describes the algorithm; attention_common.cuh holds the
 * helpers it uses; attention_bwd_x3.cuh the split products, shared with the
 * backward's FP32 kernel).
 *
 * Every f32 operand is split into TF32 hi + lo and each product is
 * lo_a hi_b + hi_a lo_b + hi_a hi_b on the tensor cores (f32 accumulators),
 * about 22 of the 24 significand bits of each operand: FP32-accurate, not
 * TF32 (attention_bwd_x3.cuh). NW warps own 16 query rows each (BM = 16 NW);
 * tiles of BN keys. Q, K and V tiles are f32 in shared memory (row pitch
 * D + 4: conflict-free 32-bit fragment loads), filled by cp.async: the next
 * K tile loads during the P V product, the V tile during Q K^T (as in
 * attn_f32). Q K^T: D / 8 k-steps from zero. P V: P comes from the score
 * accumulators as A fragments (key slots t, t + 4 = accumulator columns
 * 2 t, 2 t + 1; V's rows read in the same order). Each tile's P V is formed
 * in fresh accumulators (64 output columns at a time; 32 at D 32, 96) and added to the
 * rescaled output by FFMA, o = o alpha + pv: the tensor cores' accumulation
 * truncates, and a running accumulator over every key tile would gather
 * that bias (attention_bwd_x3.cuh).
 */
#ifndef KG_ATTENTION_X3_CUH
#define KG_ATTENTION_X3_CUH

#include "attention_bwd_x3.cuh"
#include "attention_common.cuh"

namespace kg_attn
{

template <int D, int NW, int BN, int KIND> __device__ __forceinline__ void attn_x3(const kg_attn_params &p)
{
    constexpr int NT = NW * 32, BM = NW * 16, P = D + 4, E = 4;
    constexpr int NS = BN / 8, DC = D % 64 == 0 ? 64 : 32, NC = D / DC;
    static_assert(D % DC == 0 && BN % 8 == 0, "tile shape");
    extern __shared__ __align__(16) unsigned char smem[];
    float *sQ = (float *)smem;
    float *sK = sQ + BM * P;
    float *sV = sK + BN * P;

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const int mb = gridDim.x - 1 - blockIdx.x; /* the longest causal blocks first */
    const int h = blockIdx.y, b = blockIdx.z, hk = h / p.group;
    const int m0 = mb * BM, wr = warp * 16;
    const bool causal = KIND == KG_ATTN_CAUSAL || (KIND == KG_ATTN_MASK && p.causal);

    const char *q = (const char *)p.q + (b * p.q_sb + h * p.q_sh) * E;
    const char *k = (const char *)p.k + (b * p.k_sb + hk * p.k_sh) * E;
    const char *v = (const char *)p.v + (b * p.v_sb + hk * p.v_sh) * E;
    const int ntiles = key_tiles(p, causal, m0, BM, BN);

    load_tile<BM, D, P, E, NT>(kgd_smem_addr(sQ), q, p.q_ss, m0, p.sq, tid);
    kgd_cp_async_commit();
    if (ntiles > 0)
        load_tile<BN, D, P, E, NT>(kgd_smem_addr(sK), k, p.k_ss, 0, p.sk, tid);
    kgd_cp_async_commit();

    /* the thread's rows: m0 + wr + g and + 8 */
    float o[D / 8][4], mx[2], l[2];
    const float *mrow[2];
#pragma unroll
    for (int d = 0; d < D / 8; d++)
        o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.f;
#pragma unroll
    for (int i = 0; i < 2; i++) {
        mx[i] = -CUDART_INF_F;
        l[i] = 0.f;
        const int r = min(m0 + wr + g + 8 * i, p.sq - 1);
        mrow[i] = KIND == KG_ATTN_MASK ? p.mask + b * p.m_sb + h * p.m_sh + (int64_t)r * p.m_sq : nullptr;
    }

    for (int j = 0; j < ntiles; j++) {
        const int n0 = j * BN;
        __syncthreads(); /* every warp is done with the previous V tile */
        load_tile<BN, D, P, E, NT>(kgd_smem_addr(sV), v, p.v_ss, n0, p.sk, tid);
        kgd_cp_async_commit();
        kgd_cp_async_wait<1>(); /* this K tile (and Q) arrived */
        __syncthreads();

        float s[NS][4];
#pragma unroll
        for (int n = 0; n < NS; n++)
            s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
        /* S = Q K^T: both K-major (attention_bwd_x3.cuh); B fragments in
           groups of x3_grp(NS) n-tiles (fewer live registers than all NS) */
#pragma unroll 2
        for (int k0 = 0; k0 < D; k0 += 8) {
            const float *qa = sQ + (wr + g) * P + k0 + t;
            kg_attnb::x3_a a;
            kg_attnb::x3_make_a(a, qa[0], qa[8 * P], qa[4], qa[8 * P + 4]);
            constexpr int GRP = kg_attnb::x3_grp(NS);
#pragma unroll
            for (int n0g = 0; n0g < NS; n0g += GRP) {
                kg_attnb::x3_b fb[GRP];
#pragma unroll
                for (int n = 0; n < GRP; n++) {
                    const float *kb = sK + ((n0g + n) * 8 + g) * P + k0 + t;
                    kg_attnb::x3_make_b(fb[n], kb[0], kb[4]);
                }
                kg_attnb::x3_run<GRP>(s + n0g, a, fb);
            }
        }
        __syncthreads(); /* every warp is done with this K tile */
        if (j + 1 < ntiles)
            load_tile<BN, D, P, E, NT>(kgd_smem_addr(sK), k, p.k_ss, n0 + BN, p.sk, tid);
        kgd_cp_async_commit();

        /* scale, mask (only where the tile crosses the end or the diagonal),
           the online softmax of the thread's two rows */
        const bool check = n0 + BN > p.sk || (causal && n0 + BN - 1 > m0 + wr + p.sk - p.sq);
        float tmax[2] = {-CUDART_INF_F, -CUDART_INF_F}, alpha[2], use[2], rs[2] = {0.f, 0.f};
#pragma unroll
        for (int n = 0; n < NS; n++)
#pragma unroll
            for (int x = 0; x < 4; x++) {
                const int c = n0 + n * 8 + 2 * t + (x & 1), r = m0 + wr + g + 8 * (x >> 1);
                s[n][x] = KIND == KG_ATTN_MASK || check ? masked<KIND>(p, mrow[x >> 1], s[n][x], r, c, check, causal)
                                                        : s[n][x] * p.scale_log2;
                tmax[x >> 1] = fmaxf(tmax[x >> 1], s[n][x]);
            }
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const float mnew = fmaxf(mx[i], quad_max(tmax[i]));
            use[i] = mnew == -CUDART_INF_F ? 0.f : mnew;
            alpha[i] = exp2f(mx[i] - use[i]);
            mx[i] = mnew;
        }
#pragma unroll
        for (int n = 0; n < NS; n++)
#pragma unroll
            for (int x = 0; x < 4; x++) {
                s[n][x] = exp2f(s[n][x] - use[x >> 1]);
                rs[x >> 1] += s[n][x];
            }
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
                kg_attnb::x3_a a;
                kg_attnb::x3_a_of_acc(a, s[kk]);
                kg_attnb::x3_acc_tile<DC / 8, P>(pv, a, sV, 8 * kk, cc * DC, g, t);
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
    float *out = (float *)p.out + b * p.o_sb + h * p.o_sh;
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const float sum = quad_sum(l[i]);
        const float inv = sum > 0.f ? 1.f / sum : 0.f;
        const int r = m0 + wr + g + 8 * i;
        if (r >= p.sq)
            continue;
#pragma unroll
        for (int d = 0; d < D / 8; d++)
            *(float2 *)&out[(int64_t)r * p.o_ss + d * 8 + 2 * t] = make_float2(o[d][2 * i] * inv, o[d][2 * i + 1] * inv);
        if (p.lse && t == 0)
            p.lse[b * p.l_sb + h * p.l_sh + (int64_t)r * p.l_ss] =
                sum > 0.f ? (mx[i] + log2f(sum)) * KG_LN2 : -CUDART_INF_F;
    }
}

} // namespace kg_attn

#endif
