/*
 * attention_f64.cuh - flash attention forward in f64 (FFMA in double, the
 * online softmax in double): correct and simple rather than fast. One warp
 * per query row, ROWS rows per block; per tile of 32 keys the block stages
 * K and V in shared memory, lane j scores key j against the warp's row, the
 * warp updates the running max and sum, then each lane accumulates the
 * output columns lane, lane + 32, ... (DMAX / 32 of them) over the tile's
 * keys. Any strides (the head dim's too); any head dim up to DMAX.
 *
 * Masking as kg_attention.h: an additive f32 or f64 mask (broadcast strides 0),
 * causal bottom-right aligned; a row with every key masked gives 0 and
 * lse -inf.
 */
#ifndef KG_ATTENTION_F64_CUH
#define KG_ATTENTION_F64_CUH

#include "attention_f64_params.h"
#include "kg_device.cuh"

namespace kg_attn64 {

constexpr int BN = 32; /* keys per tile: one per lane */

/* Shared memory bytes of a block (what the runtime's table records). */
constexpr int smem_bytes(int dmax, int rows) { return (BN * (dmax + 1) + BN * dmax + rows * dmax) * 8; }

template <int DMAX, int ROWS> __device__ __forceinline__ void forward(const kg_attn64_params &p)
{
    constexpr int NR = DMAX / 32;
    extern __shared__ double smem[];
    double *ks = smem;                 /* [BN][DMAX + 1]: odd row stride */
    double *vs = ks + BN * (DMAX + 1); /* [BN][DMAX] */
    double *qs = vs + BN * DMAX;       /* [ROWS][DMAX] */
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int D = p.d;
    const int64_t b = blockIdx.z, h = blockIdx.y, hk = h / p.group;
    const int64_t i0 = (int64_t)blockIdx.x * ROWS, i = i0 + warp;
    const bool row_ok = i < p.sq;
    const int64_t sq = p.sq, sk = p.sk;

    const double *q = p.q + b * p.q_s[0] + h * p.q_s[1] + (row_ok ? i : 0) * p.q_s[2];
    for (int d = lane; d < DMAX; d += 32)
        qs[warp * DMAX + d] = row_ok && d < D ? q[d * p.q_s[3]] : 0.0;
    const double *kb = p.k + b * p.k_s[0] + hk * p.k_s[1];
    const double *vb = p.v + b * p.v_s[0] + hk * p.v_s[1];
    const int64_t mrow = b * p.m_s[0] + h * p.m_s[1] + (row_ok ? i : 0) * p.m_s[2];

    /* keys past the block's last visible one are never loaded */
    int64_t kend = sk;
    if (p.causal) {
        const int64_t last = (i0 + ROWS - 1 < sq ? i0 + ROWS - 1 : sq - 1) + sk - sq; /* last visible key */
        kend = last + 1 < sk ? last + 1 : sk;
        if (kend < 0)
            kend = 0;
    }
    double acc[NR];
#pragma unroll
    for (int r = 0; r < NR; r++)
        acc[r] = 0.0;
    double m = -INFINITY, l = 0.0;
    for (int64_t j0 = 0; j0 < kend; j0 += BN) {
        __syncthreads(); /* the previous tile (and qs, the first time) */
        for (int r = warp; r < BN; r += ROWS) {
            const int64_t j = j0 + r;
            const bool in = j < sk;
            for (int d = lane; d < DMAX; d += 32) {
                ks[r * (DMAX + 1) + d] = in && d < D ? kb[j * p.k_s[2] + d * p.k_s[3]] : 0.0;
                vs[r * DMAX + d] = in && d < D ? vb[j * p.v_s[2] + d * p.v_s[3]] : 0.0;
            }
        }
        __syncthreads();
        const int64_t j = j0 + lane;
        double s = 0.0;
        for (int d = 0; d < D; d++)
            s = fma(qs[warp * DMAX + d], ks[lane * (DMAX + 1) + d], s);
        const bool vis = row_ok && j < sk && !(p.causal && j > i + sk - sq);
        s *= p.scale;
        if (vis && p.mask)
            s += p.mask_f64 ? ((const double *)p.mask)[mrow + j * p.m_s[3]]
                            : (double)((const float *)p.mask)[mrow + j * p.m_s[3]];
        if (!vis)
            s = -INFINITY;
        double tmax = s;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            tmax = fmax(tmax, kgd_shfl_xor(tmax, o));
        const double mnew = fmax(m, tmax);
        const double pj = mnew == -INFINITY ? 0.0 : exp(s - mnew);
        const double corr = m == -INFINITY ? 0.0 : exp(m - mnew);
        double psum = pj;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            psum += kgd_shfl_xor(psum, o);
        l = l * corr + psum;
#pragma unroll
        for (int r = 0; r < NR; r++)
            acc[r] *= corr;
        for (int jj = 0; jj < BN; jj++) {
            const double pjj = __shfl_sync(0xffffffffu, pj, jj);
#pragma unroll
            for (int r = 0; r < NR; r++)
                acc[r] = fma(pjj, vs[jj * DMAX + lane + 32 * r], acc[r]);
        }
        m = mnew;
    }
    if (!row_ok)
        return;
    double *o = p.out + b * p.o_s[0] + h * p.o_s[1] + i * p.o_s[2];
    const double inv = l > 0.0 ? 1.0 / l : 0.0;
#pragma unroll
    for (int r = 0; r < NR; r++) {
        const int d = lane + 32 * r;
        if (d < D)
            o[d * p.o_s[3]] = acc[r] * inv;
    }
    if (p.lse && lane == 0)
        p.lse[b * p.l_s[0] + h * p.l_s[1] + i * p.l_s[2]] = l > 0.0 ? (float)(m + log(l)) : -INFINITY;
}

} // namespace kg_attn64

#endif
