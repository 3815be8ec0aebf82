/*
 * attention_tc.cuh - the f16 / bf16 forward kernel on tensor cores (attn_tc:
 * mma.sync m16n8k16, ldmatrix, cp.async)
 * (attention.cuh describes the algorithm; attention_common.cuh holds the
 * helpers it uses).
 */
#ifndef KG_ATTENTION_TC_CUH
#define KG_ATTENTION_TC_CUH

#include "attention_common.cuh"

namespace kg_attn
{

/* ---- f16 / bf16: tensor cores --------------------------------------------- */

template <typename T, int D, int NW, int MT, int BN, bool QREG, int KIND>
__device__ __forceinline__ void attn_tc(const kg_attn_params &p)
{
    constexpr int NT = NW * 32, BM = NW * MT * 16, P = D + 8, E = 2;
    constexpr int NS = BN / 8, ND = D / 8, KD = D / 16;
    extern __shared__ __align__(16) unsigned char smem[];
    T *sQ = (T *)smem;
    T *sK = sQ + BM * P;
    T *sV = sK + BN * P;
    const uint32_t aQ = kgd_smem_addr(sQ), aK = kgd_smem_addr(sK), aV = kgd_smem_addr(sV);

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const int mb = gridDim.x - 1 - blockIdx.x; /* the longest causal blocks first */
    const int h = blockIdx.y, b = blockIdx.z, hk = h / p.group;
    const int m0 = mb * BM;
    const bool causal = KIND == KG_ATTN_CAUSAL || (KIND == KG_ATTN_MASK && p.causal);

    const char *q = (const char *)p.q + (b * p.q_sb + h * p.q_sh) * E;
    const char *k = (const char *)p.k + (b * p.k_sb + hk * p.k_sh) * E;
    const char *v = (const char *)p.v + (b * p.v_sb + hk * p.v_sh) * E;
    const int ntiles = key_tiles(p, causal, m0, BM, BN);

    load_tile<BM, D, P, E, NT>(aQ, q, p.q_ss, m0, p.sq, tid);
    kgd_cp_async_commit();
    if (ntiles > 0)
        load_tile<BN, D, P, E, NT>(aK, k, p.k_ss, 0, p.sk, tid);
    kgd_cp_async_commit();

    /* the warp's rows: m0 + warp*MT*16 + mt*16 + {g, g+8} */
    const int wr = warp * MT * 16;
    float o[MT][ND][4];
    float mx[MT][2], l[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
#pragma unroll
        for (int d = 0; d < ND; d++)
            o[mt][d][0] = o[mt][d][1] = o[mt][d][2] = o[mt][d][3] = 0.f;
        mx[mt][0] = mx[mt][1] = -CUDART_INF_F;
        l[mt][0] = l[mt][1] = 0.f;
    }
    const float *mrow[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const int r = min(m0 + wr + mt * 16 + g + 8 * i, p.sq - 1);
            mrow[mt][i] = KIND == KG_ATTN_MASK ? p.mask + b * p.m_sb + h * p.m_sh + (int64_t)r * p.m_sq : nullptr;
        }

    /* the ldmatrix address of this lane inside a 16 x 16 block */
    const int a_row = lane & 15, a_col = (lane >> 4) * 8;                             /* A (row-major) */
    const int b_row = (lane & 7) + ((lane >> 4) << 3), b_col = ((lane >> 3) & 1) * 8; /* B from K */
    const int v_row = (lane & 7) + (((lane >> 3) & 1) << 3), v_col = (lane >> 4) * 8; /* B from V (trans) */

    uint32_t qf[QREG ? MT : 1][QREG ? KD : 1][4];
    if (QREG) {
        kgd_cp_async_wait<1>();
        __syncthreads();
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int kk = 0; kk < KD; kk++)
                kgd_ldmatrix_x4(qf[QREG ? mt : 0][QREG ? kk : 0], aQ + ((wr + mt * 16 + a_row) * P + kk * 16 + a_col) * E);
    }

    for (int j = 0; j < ntiles; j++) {
        const int n0 = j * BN;
        __syncthreads(); /* every warp is done with the previous V tile */
        load_tile<BN, D, P, E, NT>(aV, v, p.v_ss, n0, p.sk, tid);
        kgd_cp_async_commit();
        kgd_cp_async_wait<1>(); /* this K tile (and Q) arrived */
        __syncthreads();

        float s[MT][NS][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int n = 0; n < NS; n++)
                s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < KD; kk++) {
            uint32_t a[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                if (QREG) {
#pragma unroll
                    for (int x = 0; x < 4; x++)
                        a[mt][x] = qf[QREG ? mt : 0][QREG ? kk : 0][x];
                } else {
                    kgd_ldmatrix_x4(a[mt], aQ + ((wr + mt * 16 + a_row) * P + kk * 16 + a_col) * E);
                }
            }
#pragma unroll
            for (int nn = 0; nn < BN / 16; nn++) {
                uint32_t bf[4];
                kgd_ldmatrix_x4(bf, aK + ((nn * 16 + b_row) * P + kk * 16 + b_col) * E);
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    mma<T>::run(s[mt][2 * nn], a[mt], bf[0], bf[1]);
                    mma<T>::run(s[mt][2 * nn + 1], a[mt], bf[2], bf[3]);
                }
            }
        }
        __syncthreads(); /* every warp is done with this K tile */
        if (j + 1 < ntiles)
            load_tile<BN, D, P, E, NT>(aK, k, p.k_ss, n0 + BN, p.sk, tid);
        kgd_cp_async_commit();

        /* masks only where this tile crosses the sequence end or the diagonal */
        const bool check = n0 + BN > p.sk || (causal && n0 + BN - 1 > m0 + wr + p.sk - p.sq);
        uint32_t pa[MT][BN / 16][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            const int r0 = m0 + wr + mt * 16 + g;
            float tmax[2] = {-CUDART_INF_F, -CUDART_INF_F};
#pragma unroll
            for (int n = 0; n < NS; n++)
#pragma unroll
                for (int x = 0; x < 4; x++) {
                    const int i = x >> 1, c = n0 + n * 8 + 2 * t + (x & 1);
                    if (KIND == KG_ATTN_MASK || check)
                        s[mt][n][x] = masked<KIND>(p, mrow[mt][i], s[mt][n][x], r0 + 8 * i, c, check, causal);
                    else
                        s[mt][n][x] *= p.scale_log2;
                    tmax[i] = fmaxf(tmax[i], s[mt][n][x]);
                }
            softmax_tile<T, NS, ND>(s[mt], tmax, mx[mt], l[mt], o[mt], pa[mt]);
        }

        kgd_cp_async_wait<1>(); /* this V tile arrived */
        __syncthreads();
        pv_tile<T, MT, BN, D, P>(o, pa, aV, 0, v_row, v_col);
    }
    kgd_cp_async_wait<0>();

    /* epilogue: normalize, stage the warp's own rows of sQ, store 16 bytes a lane */
    __syncthreads();
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const float sum = quad_sum(l[mt][i]);
            const float inv = sum > 0.f ? 1.f / sum : 0.f;
            const int rl = wr + mt * 16 + g + 8 * i, r = m0 + rl;
#pragma unroll
            for (int d = 0; d < ND; d++)
                *(uint32_t *)&sQ[rl * P + d * 8 + 2 * t] =
                    mma<T>::pack(o[mt][d][2 * i] * inv, o[mt][d][2 * i + 1] * inv);
            if (p.lse && t == 0 && r < p.sq)
                p.lse[b * p.l_sb + h * p.l_sh + (int64_t)r * p.l_ss] =
                    sum > 0.f ? (mx[mt][i] + log2f(sum)) * KG_LN2 : -CUDART_INF_F;
        }
    }
    __syncwarp();
    char *out = (char *)p.out + (b * p.o_sb + h * p.o_sh) * E;
    constexpr int CPR = D * E / 16;
#pragma unroll
    for (int i = lane; i < MT * 16 * CPR; i += 32) {
        const int rl = wr + i / CPR, c = i % CPR, r = m0 + rl;
        if (r < p.sq)
            *(uint4 *)(out + (int64_t)r * p.o_ss * E + c * 16) =
                *(const uint4 *)((const char *)sQ + (rl * P) * E + c * 16);
    }
}

} // namespace kg_attn

#endif
