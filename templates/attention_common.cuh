/*
 * attention_common.cuh - what the flash attention forward kernels share (see
 * attention.cuh for the algorithm): includes, the PTX helpers, the online
 * softmax step, tile loads and the masked score. The tensor-core kernel is
 * attention_tc.cuh, the FP32 one attention_f32.cuh.
 */
#ifndef KG_ATTENTION_COMMON_CUH
#define KG_ATTENTION_COMMON_CUH

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
    /* Eight floats from c, two n8 accumulator tiles (c[0..3] then c[4..7]),
       packed as one k16 step of an A operand from registers: an mma.sync A
       fragment, or a wgmma one (wgb<T, N>::rs) with c = acc + 8 kk for the
       m64 accumulator's tiles 2 kk and 2 kk + 1 */
    static __device__ __forceinline__ void pack_a16(const float *c, uint32_t (&a)[4])
    {
        a[0] = pack(c[0], c[1]);
        a[1] = pack(c[2], c[3]);
        a[2] = pack(c[4], c[5]);
        a[3] = pack(c[6], c[7]);
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

} // namespace kg_attn

#endif
