/*
 * attention.cuh - flash attention forward: out = softmax(scale q k^T + mask) v
 * and the row log-sum-exp, never materializing the Sq x Sk matrix.
 *
 * One block owns BM query rows of one (batch, head) and walks the key/value
 * sequence in tiles of BN keys with the online softmax (FlashAttention-2):
 * running row max m and sum l, the output accumulator rescaled by
 * exp2(m_old - m_new) whenever the max grows. Softmax runs in the log2
 * domain (scores pre-multiplied by scale * log2 e) so each exponential is one
 * ex2. A row whose keys are all masked keeps m = -inf; it is exponentiated
 * against 0 instead (every term is 0), so it ends with l = 0, output 0 and
 * lse -inf rather than NaN.
 *
 * Two kernels:
 *   attn_tc   f16 / bf16 on tensor cores: mma.sync m16n8k16 with f32
 *             accumulators, operands through ldmatrix from shared memory
 *             filled by cp.async (the load of the next K tile and of the
 *             current V tile overlap the two matrix products). Each warp owns
 *             MT x 16 query rows; the P tile goes from the S accumulators
 *             straight into A fragments, never through shared memory.
 *   attn_f32  true FP32 (FFMA): 256 threads as 16 x 16, each thread a
 *             BM/16-row by BN/16-column block of S and a BM/16-row by D/16
 *             block of out.
 *
 * Masks (KIND): NONE; CAUSAL (query i sees keys j <= i + Sk - Sq, the
 * bottom-right alignment); MASK (additive f32 mask read per score, plus the
 * causal rule when p.causal). Key-bound and causal checks run only on the
 * tiles that cross the sequence end or the diagonal.
 */
#ifndef KG_ATTENTION_CUH
#define KG_ATTENTION_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>
#include <stdint.h>
#include <type_traits>

#include "attention_params.h"
#include "kg_device.cuh"

namespace kg_attn
{

#define KG_LOG2E 1.4426950408889634f
#define KG_LN2 0.6931471805599453f

/* ---- PTX helpers -------------------------------------------------------- */

/* The shared helpers (templates/kg_device.cuh: kgd_smem_addr, kgd_cp_async16,
   kgd_cp_async_commit/wait, kgd_ldmatrix_x4(_trans)) under the names the
   backward kernels (attention_bwd.cuh) import from this namespace: forwards,
   no copies. */
__device__ __forceinline__ uint32_t smem_addr(const void *p) { return kgd_smem_addr(p); }
__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, bool pred) { kgd_cp_async16(dst, src, pred); }
__device__ __forceinline__ void cp_async_commit() { kgd_cp_async_commit(); }
template <int N> __device__ __forceinline__ void cp_async_wait() { kgd_cp_async_wait<N>(); }
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) { kgd_ldmatrix_x4(r, addr); }
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) { kgd_ldmatrix_x4_trans(r, addr); }

/* mma.sync m16n8k16 with f32 accumulators on f16 or bf16 fragments (the PTX
   instruction of T's type), and two floats rounded to T and packed in one
   register (an A fragment's pair). */
#define KG_MMA_16816(ty)                                                                                                \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." ty "." ty ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "     \
                 "{%0,%1,%2,%3};\n"                                                                                    \
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                                                     \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1))
template <typename T> struct mma {
    static_assert(std::is_same<T, __half>::value || std::is_same<T, __nv_bfloat16>::value, "f16 or bf16");
    static constexpr bool half = std::is_same<T, __half>::value;
    static __device__ __forceinline__ void run(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
    {
        if constexpr (half)
            KG_MMA_16816("f16");
        else
            KG_MMA_16816("bf16");
    }
    static __device__ __forceinline__ uint32_t pack(float lo, float hi)
    {
        uint32_t r;
        if constexpr (half) {
            const __half2 h = __floats2half2_rn(lo, hi);
            r = *(const uint32_t *)&h;
        } else {
            const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
            r = *(const uint32_t *)&h;
        }
        return r;
    }
};
#undef KG_MMA_16816

/* Copies rows [row0, row0 + ROWS) of a [n, D] matrix (row stride `ld`
   elements) into shared memory with row pitch P elements; rows past n are
   zero-filled. E is the element size; 16 bytes per cp.async. */
template <int ROWS, int D, int P, int E, int NT>
__device__ __forceinline__ void load_tile(uint32_t dst, const char *base, int64_t ld, int row0, int n, int tid)
{
    constexpr int CPR = D * E / 16;
#pragma unroll
    for (int i = tid; i < ROWS * CPR; i += NT) {
        const int r = i / CPR, c = i % CPR;
        const bool ok = row0 + r < n;
        const char *src = ok ? base + ((int64_t)(row0 + r) * ld) * E + c * 16 : base;
        kgd_cp_async16(dst + (r * P) * E + c * 16, src, ok);
    }
}

/* 2^x with one MUFU.EX2 (exp2f adds a denormal-range fixup); ex2(-inf) = 0. */
__device__ __forceinline__ float ex2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float quad_max(float x)
{
    x = fmaxf(x, kgd_shfl_xor(x, 1));
    return fmaxf(x, kgd_shfl_xor(x, 2));
}
__device__ __forceinline__ float quad_sum(float x)
{
    x += kgd_shfl_xor(x, 1);
    return x + kgd_shfl_xor(x, 2);
}

/* The online-softmax step of one tile for one m-tile (16 rows) of a warp:
   s holds the tile's scores of the thread's two rows (log2 domain, masked;
   NS blocks of 8 keys) and tmax their maxima over the thread's columns.
   Raises the running maxima mx (a row that has seen only -inf keeps -inf
   and is exponentiated against 0: every term 0), rescales the sums l and
   outputs o, turns s into probabilities, adds them to l and packs them as
   the A fragments pa of the P V product. */
template <typename T, int NS, int ND>
__device__ __forceinline__ void softmax_tile(float (&s)[NS][4], const float (&tmax)[2], float (&mx)[2], float (&l)[2],
                                             float (&o)[ND][4], uint32_t (&pa)[NS / 2][4])
{
    float use[2], rs[2] = {0.f, 0.f};
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const float mnew = fmaxf(mx[i], quad_max(tmax[i]));
        use[i] = mnew == -CUDART_INF_F ? 0.f : mnew;
        const float alpha = ex2(mx[i] - use[i]);
        mx[i] = mnew;
        l[i] *= alpha;
#pragma unroll
        for (int d = 0; d < ND; d++) {
            o[d][2 * i] *= alpha;
            o[d][2 * i + 1] *= alpha;
        }
    }
#pragma unroll
    for (int n = 0; n < NS; n++)
#pragma unroll
        for (int x = 0; x < 4; x++) {
            s[n][x] = ex2(s[n][x] - use[x >> 1]);
            rs[x >> 1] += s[n][x];
        }
    l[0] += rs[0];
    l[1] += rs[1];
#pragma unroll
    for (int kk = 0; kk < NS / 2; kk++) {
        pa[kk][0] = mma<T>::pack(s[2 * kk][0], s[2 * kk][1]);
        pa[kk][1] = mma<T>::pack(s[2 * kk][2], s[2 * kk][3]);
        pa[kk][2] = mma<T>::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]);
        pa[kk][3] = mma<T>::pack(s[2 * kk + 1][2], s[2 * kk + 1][3]);
    }
}

/* o += P V for a warp's MT m-tiles: P in A fragments pa (KN keys), V rows
   [row0, row0 + KN) of the tile at shared address aV (row pitch P
   elements) through ldmatrix.trans; (v_row, v_col): the lane's address in a
   16 x 16 block. */
template <typename T, int MT, int KN, int D, int P>
__device__ __forceinline__ void pv_tile(float (&o)[MT][D / 8][4], const uint32_t (&pa)[MT][KN / 16][4], uint32_t aV,
                                        int row0, int v_row, int v_col)
{
#pragma unroll
    for (int kk = 0; kk < KN / 16; kk++)
#pragma unroll
        for (int dn = 0; dn < D / 16; dn++) {
            uint32_t bf[4];
            kgd_ldmatrix_x4_trans(bf, aV + ((row0 + kk * 16 + v_row) * P + dn * 16 + v_col) * 2);
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                mma<T>::run(o[mt][2 * dn], pa[mt][kk], bf[0], bf[1]);
                mma<T>::run(o[mt][2 * dn + 1], pa[mt][kk], bf[2], bf[3]);
            }
        }
}

/* How many key tiles block rows [m0, m0 + BM) need: all of them, or up to the
   last key the block's last row sees under the causal rule. */
__device__ __forceinline__ int key_tiles(const kg_attn_params &p, bool causal, int m0, int BM, int BN)
{
    int end = p.sk;
    if (causal)
        end = min(end, m0 + BM + p.sk - p.sq);
    return end > 0 ? (end + BN - 1) / BN : 0;
}

/* The score in the log2 domain after scaling and masking. */
template <int KIND>
__device__ __forceinline__ float masked(const kg_attn_params &p, const float *mrow, float s, int r, int c, bool check,
                                        bool causal)
{
    float x = s * p.scale_log2;
    if (KIND == KG_ATTN_MASK && c < p.sk && r < p.sq)
        x += mrow[(int64_t)c * p.m_sk] * KG_LOG2E;
    if (check && (c >= p.sk || (causal && c > r + p.sk - p.sq)))
        x = -CUDART_INF_F;
    return x;
}

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
