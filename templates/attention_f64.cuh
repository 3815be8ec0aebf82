/*
 * attention_f64.cuh - flash attention forward in f64 (FFMA in double, the
 * online softmax in double): correct and simple rather than fast. A block
 * of 8 warps, each warp RPW query rows; per tile of 32 keys the block
 * stages K and V in shared memory, lane j scores key j against the warp's
 * rows (each K value read feeds RPW FMAs), the warp updates each row's
 * running max and sum, then each lane accumulates the output columns lane,
 * lane + 32, ... (DMAX / 32 of them) of its rows over the tile's keys. Any
 * strides (the head dim's too); any head dim up to DMAX.
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

constexpr int BN = 32;    /* keys per tile: one per lane */
constexpr int WARPS = 8;  /* warps per block */

/* Shared memory bytes of a block (what the runtime's table records). */
__host__ __device__ constexpr int smem_bytes(int dmax, int rpw) { return (BN * (dmax + 1) + BN * dmax + WARPS * rpw * dmax) * 8; }

/* RPW query rows per warp (WARPS * RPW per block): each K or V value read
   from shared memory feeds RPW FMAs. */
template <int DMAX, int RPW> __device__ __forceinline__ void forward(const kg_attn64_params &p)
{
    constexpr int NR = DMAX / 32;
    extern __shared__ double smem[];
    double *ks = smem;                 /* [BN][DMAX + 1]: odd row stride */
    double *vs = ks + BN * (DMAX + 1); /* [BN][DMAX] */
    double *qs = vs + BN * DMAX;       /* [WARPS * RPW][DMAX] */
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int D = p.d;
    const int64_t b = blockIdx.z, h = blockIdx.y, hk = h / p.group;
    const int64_t i0 = (int64_t)blockIdx.x * (WARPS * RPW), iw = i0 + warp * RPW; /* the warp's first row */
    const int64_t sq = p.sq, sk = p.sk;

#pragma unroll
    for (int r = 0; r < RPW; r++) {
        const int64_t i = iw + r;
        const double *q = p.q + b * p.q_s[0] + h * p.q_s[1] + (i < sq ? i : 0) * p.q_s[2];
        for (int d = lane; d < DMAX; d += 32)
            qs[(warp * RPW + r) * DMAX + d] = i < sq && d < D ? q[d * p.q_s[3]] : 0.0;
    }
    const double *kb = p.k + b * p.k_s[0] + hk * p.k_s[1];
    const double *vb = p.v + b * p.v_s[0] + hk * p.v_s[1];
    const int64_t mb = b * p.m_s[0] + h * p.m_s[1];

    /* keys past the block's last visible one are never loaded */
    int64_t kend = sk;
    if (p.causal) {
        const int64_t il = i0 + WARPS * RPW - 1 < sq ? i0 + WARPS * RPW - 1 : sq - 1;
        const int64_t last = il + sk - sq; /* the last key the block's last row sees */
        kend = last + 1 < sk ? last + 1 : sk;
        if (kend < 0)
            kend = 0;
    }
    double acc[RPW][NR], m[RPW], l[RPW];
#pragma unroll
    for (int r = 0; r < RPW; r++) {
        m[r] = -INFINITY;
        l[r] = 0.0;
#pragma unroll
        for (int c = 0; c < NR; c++)
            acc[r][c] = 0.0;
    }
    for (int64_t j0 = 0; j0 < kend; j0 += BN) {
        __syncthreads(); /* the previous tile (and qs, the first time) */
        for (int r = warp; r < BN; r += WARPS) {
            const int64_t j = j0 + r;
            const bool in = j < sk;
            for (int d = lane; d < DMAX; d += 32) {
                ks[r * (DMAX + 1) + d] = in && d < D ? kb[j * p.k_s[2] + d * p.k_s[3]] : 0.0;
                vs[r * DMAX + d] = in && d < D ? vb[j * p.v_s[2] + d * p.v_s[3]] : 0.0;
            }
        }
        __syncthreads();
        /* lane j scores key j0 + j against each of the warp's rows */
        const int64_t j = j0 + lane;
        double s[RPW];
#pragma unroll
        for (int r = 0; r < RPW; r++)
            s[r] = 0.0;
        for (int d = 0; d < D; d++) {
            const double kv = ks[lane * (DMAX + 1) + d];
#pragma unroll
            for (int r = 0; r < RPW; r++)
                s[r] = fma(qs[(warp * RPW + r) * DMAX + d], kv, s[r]);
        }
        double pj[RPW];
#pragma unroll
        for (int r = 0; r < RPW; r++) {
            const int64_t i = iw + r;
            const bool vis = i < sq && j < sk && !(p.causal && j > i + sk - sq);
            double x = s[r] * p.scale;
            if (vis && p.mask) {
                const int64_t at = mb + i * p.m_s[2] + j * p.m_s[3];
                x += p.mask_f64 ? ((const double *)p.mask)[at] : (double)((const float *)p.mask)[at];
            }
            if (!vis)
                x = -INFINITY;
            double tmax = x;
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                tmax = fmax(tmax, kgd_shfl_xor(tmax, o));
            const double mnew = fmax(m[r], tmax);
            pj[r] = mnew == -INFINITY ? 0.0 : exp(x - mnew);
            const double corr = m[r] == -INFINITY ? 0.0 : exp(m[r] - mnew);
            double psum = pj[r];
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                psum += kgd_shfl_xor(psum, o);
            l[r] = l[r] * corr + psum;
            m[r] = mnew;
#pragma unroll
            for (int c = 0; c < NR; c++)
                acc[r][c] *= corr;
        }
        for (int jj = 0; jj < BN; jj++) {
            double pb[RPW];
#pragma unroll
            for (int r = 0; r < RPW; r++)
                pb[r] = __shfl_sync(0xffffffffu, pj[r], jj);
#pragma unroll
            for (int c = 0; c < NR; c++) {
                const double vv = vs[jj * DMAX + lane + 32 * c];
#pragma unroll
                for (int r = 0; r < RPW; r++)
                    acc[r][c] = fma(pb[r], vv, acc[r][c]);
            }
        }
    }
#pragma unroll
    for (int r = 0; r < RPW; r++) {
        const int64_t i = iw + r;
        if (i >= sq)
            break;
        double *o = p.out + b * p.o_s[0] + h * p.o_s[1] + i * p.o_s[2];
        const double inv = l[r] > 0.0 ? 1.0 / l[r] : 0.0;
#pragma unroll
        for (int c = 0; c < NR; c++) {
            const int d = lane + 32 * c;
            if (d < D)
                o[d * p.o_s[3]] = acc[r][c] * inv;
        }
        if (p.lse && lane == 0)
            p.lse[b * p.l_s[0] + h * p.l_s[1] + i * p.l_s[2]] = l[r] > 0.0 ? (float)(m[r] + log(l[r])) : -INFINITY;
    }
}

} // namespace kg_attn64

#endif
