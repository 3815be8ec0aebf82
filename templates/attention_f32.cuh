/*
 * attention_f32.cuh - the true-FP32 forward kernel (attn_f32: FFMA, 256 threads
 * as 16 x 16)
 * (attention.cuh describes the algorithm; attention_common.cuh holds the
 * helpers it uses).
 */
#ifndef KG_ATTENTION_F32_CUH
#define KG_ATTENTION_F32_CUH

#include "attention_common.cuh"

namespace kg_attn
{

/* ---- f32: FFMA ------------------------------------------------------------ */

/* 256 threads as 16 x 16 (ty, tx). Each thread owns TM = BM / 16 rows
   (ty + 16 i) of the block: TN = BN / 16 score columns (tx + 16 c) of each,
   and NV vectors of VW output columns (VW (tx + 16 q) + 0..VW-1). Scores are
   inner products of float4 chunks of Q and K rows (shared memory, row pitch
   D + 4: conflict-free); P goes through shared memory to the P V product,
   which reads float4 chunks of P rows and VW-wide chunks of V rows. */
template <int VW> struct fvec;
template <> struct fvec<2> {
    typedef float2 t;
    static __device__ __forceinline__ float at(const float2 &v, int i) { return i == 0 ? v.x : v.y; }
};
template <> struct fvec<4> {
    typedef float4 t;
    static __device__ __forceinline__ float at(const float4 &v, int i)
    {
        return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
    }
};

/* PK: P is written over the K tile once the scores are done (no P buffer,
   so the shared memory allows BN = BM = 128 at D = 128); the next K and V
   tiles are then loaded after the P V product instead of during it. */
template <int D, int BM, int BN, bool PK, int KIND> __device__ __forceinline__ void attn_f32(const kg_attn_params &p)
{
    constexpr int NT = 256, P = D + 4, PP = BN + 4, E = 4;
    constexpr int TM = BM / 16, TN = BN / 16;
    constexpr int VW = D % 64 == 0 ? 4 : 2, NV = D / (16 * VW);
    typedef typename fvec<VW>::t vec;
    static_assert(D % (16 * VW) == 0 && BN % 16 == 0 && BM % 16 == 0, "tile shape");
    static_assert(!PK || BM * PP <= BN * P, "P fits in the K tile");
    extern __shared__ __align__(16) unsigned char smem[];
    float *sQ = (float *)smem;
    float *sK = sQ + BM * P;
    float *sV = sK + BN * P;
    float *sP = PK ? sK : sV + BN * P;

    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int mb = gridDim.x - 1 - blockIdx.x;
    const int h = blockIdx.y, b = blockIdx.z, hk = h / p.group;
    const int m0 = mb * BM;
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
    if (PK && ntiles > 0) {
        load_tile<BN, D, P, E, NT>(kgd_smem_addr(sV), v, p.v_ss, 0, p.sk, tid);
        kgd_cp_async_commit();
    }

    float o[TM][NV][VW], mx[TM], l[TM];
    const float *mrow[TM];
#pragma unroll
    for (int i = 0; i < TM; i++) {
#pragma unroll
        for (int d = 0; d < NV; d++)
#pragma unroll
            for (int e = 0; e < VW; e++)
                o[i][d][e] = 0.f;
        mx[i] = -CUDART_INF_F;
        l[i] = 0.f;
        const int r = min(m0 + ty + 16 * i, p.sq - 1);
        mrow[i] = KIND == KG_ATTN_MASK ? p.mask + b * p.m_sb + h * p.m_sh + (int64_t)r * p.m_sq : nullptr;
    }

    for (int j = 0; j < ntiles; j++) {
        const int n0 = j * BN;
        if (!PK) {
            __syncthreads(); /* every thread is done with the previous V and P */
            load_tile<BN, D, P, E, NT>(kgd_smem_addr(sV), v, p.v_ss, n0, p.sk, tid);
            kgd_cp_async_commit();
        }
        kgd_cp_async_wait<1>(); /* this K tile (and Q) arrived */
        __syncthreads();

        float s[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int c = 0; c < TN; c++)
                s[i][c] = 0.f;
#pragma unroll 2
        for (int d = 0; d < D; d += 4) {
            float4 kv[TN];
#pragma unroll
            for (int c = 0; c < TN; c++)
                kv[c] = *(const float4 *)&sK[(tx + 16 * c) * P + d];
#pragma unroll
            for (int i = 0; i < TM; i++) {
                const float4 qv = *(const float4 *)&sQ[(ty + 16 * i) * P + d];
#pragma unroll
                for (int c = 0; c < TN; c++) {
                    s[i][c] = fmaf(qv.x, kv[c].x, s[i][c]);
                    s[i][c] = fmaf(qv.y, kv[c].y, s[i][c]);
                    s[i][c] = fmaf(qv.z, kv[c].z, s[i][c]);
                    s[i][c] = fmaf(qv.w, kv[c].w, s[i][c]);
                }
            }
        }
        __syncthreads(); /* every thread is done with this K tile */
        if (!PK) {
            if (j + 1 < ntiles)
                load_tile<BN, D, P, E, NT>(kgd_smem_addr(sK), k, p.k_ss, n0 + BN, p.sk, tid);
            kgd_cp_async_commit();
        }

        const bool check = n0 + BN > p.sk || (causal && n0 + BN - 1 > m0 + p.sk - p.sq);
#pragma unroll
        for (int i = 0; i < TM; i++) {
            const int r = m0 + ty + 16 * i;
            float tmax = -CUDART_INF_F;
#pragma unroll
            for (int c = 0; c < TN; c++) {
                if (KIND == KG_ATTN_MASK || check)
                    s[i][c] = masked<KIND>(p, mrow[i], s[i][c], r, n0 + tx + 16 * c, check, causal);
                else
                    s[i][c] *= p.scale_log2;
                tmax = fmaxf(tmax, s[i][c]);
            }
#pragma unroll
            for (int w = 1; w < 16; w <<= 1)
                tmax = fmaxf(tmax, kgd_shfl_xor(tmax, w));
            const float mnew = fmaxf(mx[i], tmax);
            const float use = mnew == -CUDART_INF_F ? 0.f : mnew;
            const float alpha = exp2f(mx[i] - use);
            mx[i] = mnew;
            float rs = 0.f;
#pragma unroll
            for (int c = 0; c < TN; c++) {
                const float e = exp2f(s[i][c] - use);
                rs += e;
                sP[(ty + 16 * i) * PP + tx + 16 * c] = e;
            }
            l[i] = l[i] * alpha + rs;
#pragma unroll
            for (int d = 0; d < NV; d++)
#pragma unroll
                for (int e = 0; e < VW; e++)
                    o[i][d][e] *= alpha;
        }

        if (PK)
            kgd_cp_async_wait<0>(); /* this V tile arrived */
        else
            kgd_cp_async_wait<1>();
        __syncthreads();
#pragma unroll 1
        for (int c = 0; c < BN; c += 4) {
            float4 pv[TM];
#pragma unroll
            for (int i = 0; i < TM; i++)
                pv[i] = *(const float4 *)&sP[(ty + 16 * i) * PP + c];
#pragma unroll
            for (int cc = 0; cc < 4; cc++) {
                vec vv[NV];
#pragma unroll
                for (int d = 0; d < NV; d++)
                    vv[d] = *(const vec *)&sV[(c + cc) * P + VW * (tx + 16 * d)];
#pragma unroll
                for (int i = 0; i < TM; i++) {
                    const float pw = fvec<4>::at(pv[i], cc);
#pragma unroll
                    for (int d = 0; d < NV; d++)
#pragma unroll
                        for (int e = 0; e < VW; e++)
                            o[i][d][e] = fmaf(pw, fvec<VW>::at(vv[d], e), o[i][d][e]);
                }
            }
        }
        if (PK) {
            __syncthreads(); /* every thread is done with P (the K tile) and V */
            if (j + 1 < ntiles) {
                load_tile<BN, D, P, E, NT>(kgd_smem_addr(sK), k, p.k_ss, n0 + BN, p.sk, tid);
                kgd_cp_async_commit();
                load_tile<BN, D, P, E, NT>(kgd_smem_addr(sV), v, p.v_ss, n0 + BN, p.sk, tid);
                kgd_cp_async_commit();
            }
        }
    }
    kgd_cp_async_wait<0>();

    float *out = (float *)p.out + b * p.o_sb + h * p.o_sh;
#pragma unroll
    for (int i = 0; i < TM; i++) {
        float sum = l[i];
#pragma unroll
        for (int w = 1; w < 16; w <<= 1)
            sum += kgd_shfl_xor(sum, w);
        const float inv = sum > 0.f ? 1.f / sum : 0.f;
        const int r = m0 + ty + 16 * i;
        if (r < p.sq) {
#pragma unroll
            for (int d = 0; d < NV; d++) {
                vec w;
                float *wf = (float *)&w;
#pragma unroll
                for (int e = 0; e < VW; e++)
                    wf[e] = o[i][d][e] * inv;
                *(vec *)&out[(int64_t)r * p.o_ss + VW * (tx + 16 * d)] = w;
            }
            if (p.lse && tx == 0)
                p.lse[b * p.l_sb + h * p.l_sh + (int64_t)r * p.l_ss] =
                    sum > 0.f ? (mx[i] + log2f(sum)) * KG_LN2 : -CUDART_INF_F;
        }
    }
}

} // namespace kg_attn

#endif
