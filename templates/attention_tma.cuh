/*
 * attention_tma.cuh - shared-memory barriers (mbarrier) and bulk tensor
 * copies (TMA, cp.async.bulk.tensor) of the attention forward kernels: the
 * Hopper prefill (attention_sm90.cuh) and the short-query kernels
 * (attention_decode.cuh). The tensor maps (kg_attn_tmaps,
 * attention_params.h) are encoded by runtime/attention.c and passed as a
 * __grid_constant__ kernel argument, so their addresses here are in kernel
 * parameter space.
 *
 * Also the 128-byte-swizzled tile layout those copies write (sw128_at,
 * tile_at) and the P V product on it (pv_tile_at), and the global
 * nanosecond timer both kernels' trace test hooks read (globaltimer).
 *
 * Compute capability 9.0 instructions: below sm_90 (the portable modules
 * that include this for the decode kernels) the helpers compile to nothing;
 * the runtime takes those paths on compute capability 9.0 only.
 */
#ifndef KG_ATTENTION_TMA_CUH
#define KG_ATTENTION_TMA_CUH

#include "attention_common.cuh"
#include "attention_tmap.h"

/* 1 where the instructions below do not exist (device code below sm_90) */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define KG_TMA_OFF 1
#else
#define KG_TMA_OFF 0
#endif

namespace kg_attn
{

/* the global nanosecond timer (%globaltimer): the trace test hooks of the
   Hopper prefill (p.trace) and of the short-query kernels. Every compute
   capability has it, so it is not under KG_TMA_OFF. */
__device__ __forceinline__ uint64_t globaltimer()
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}

/* Byte offset of 16-byte chunk cc of row r in a ROWS-row tile of 64-element
   panels (each panel ROWS x 128 bytes, 1024-byte aligned). */
template <int ROWS> __device__ __forceinline__ uint32_t sw128_at(int r, int cc)
{
    return (uint32_t)((cc >> 3) * ROWS * 128 + r * 128 + (((cc & 7) ^ (r & 7)) << 4));
}

/* Byte offset of element column c (a multiple of 8) of row r in a tile of
   16-bit elements: P > 0, rows of P elements; P < 0, the 128-byte-swizzled
   panels of -P rows (sw128_at), the layout bulk tensor copies write. */
template <int P> __device__ __forceinline__ uint32_t tile_at(int r, int c)
{
    if constexpr (P > 0)
        return (uint32_t)((r * P + c) * 2);
    else
        return sw128_at<-P>(r, c >> 3);
}

/* attention_common.cuh's pv_tile on a tile laid out as tile_at<P> says (so
   also the swizzled one); for P > 0 the same code. (pv_tile stays as it is
   there for now: every attention module, the backward's too, includes that
   header, and all of them would be rebuilt; it should become this one.) */
template <typename T, int MT, int KN, int D, int P>
__device__ __forceinline__ void pv_tile_at(float (&o)[MT][D / 8][4], const uint32_t (&pa)[MT][KN / 16][4],
                                           uint32_t aV, int row0, int v_row, int v_col)
{
#pragma unroll
    for (int kk = 0; kk < KN / 16; kk++)
#pragma unroll
        for (int dn = 0; dn < D / 16; dn++) {
            uint32_t bf[4];
            kgd_ldmatrix_x4_trans(bf, aV + tile_at<P>(row0 + kk * 16 + v_row, dn * 16 + v_col));
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                mma<T>::run(o[mt][2 * dn], pa[mt][kk], bf[0], bf[1]);
                mma<T>::run(o[mt][2 * dn + 1], pa[mt][kk], bf[2], bf[3]);
            }
        }
}

/* ---- mbarriers (shared memory, CTA scope) ---- */
__device__ __forceinline__ void mbar_init(uint32_t bar, int count)
{
#if !KG_TMA_OFF
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
#endif
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
#if !KG_TMA_OFF
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
#endif
}
/* the barriers' initialization visible to the bulk copy engine (before the
   block barrier that follows it) */
__device__ __forceinline__ void mbar_init_fence()
{
#if !KG_TMA_OFF
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}
/* the barrier gets this thread's arrival once its cp.async copies so far
   have landed (counted in the barrier's expected arrivals) */
__device__ __forceinline__ void cp_async_arrive(uint32_t bar)
{
#if !KG_TMA_OFF
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
#endif
}
/* waits for the completion of the phase of parity `parity` */
__device__ __forceinline__ void mbar_wait(uint32_t bar, int parity)
{
#if !KG_TMA_OFF
    uint32_t done;
    do {
        asm volatile(
            "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
#endif
}

/* ---- bulk tensor copies (TMA; kg_attn_tmaps, attention_params.h) ---- */
/* this thread's arrival on bar, which also expects `bytes` more bytes of
   bulk copies before its phase completes */
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes)
{
#if !KG_TMA_OFF
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
#endif
}
/* the box at (c0, c1, c2, c3) of the tensor map tm (kernel parameter
   space) into shared memory at dst, its bytes counted on bar */
__device__ __forceinline__ void tma_load4(uint32_t dst, const kg_attn_tmap &tm, uint32_t bar, int c0, int c1, int c2,
                                          int c3)
{
#if !KG_TMA_OFF
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
                 "%3, %4, %5}], [%6];\n" ::"r"(dst),
                 "l"((uint64_t)&tm), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
                 : "memory");
#endif
}
__device__ __forceinline__ void tma_prefetch(const kg_attn_tmap &tm)
{
#if !KG_TMA_OFF
    asm volatile("prefetch.tensormap [%0];\n" ::"l"((uint64_t)&tm) : "memory");
#endif
}
/* Rows [r, r + ROWS) of head h of batch b into the swizzled tile at dst,
   as load_sw128_rows lays them out (one 64-element box per panel; rows and
   columns past the tensor's end arrive as zeros), completing on bar (one
   arrival, by the calling thread). */
template <int ROWS, int DP>
__device__ __forceinline__ void tma_tile(uint32_t dst, const kg_attn_tmap &tm, uint32_t bar, int r, int h, int b)
{
    mbar_expect_tx(bar, ROWS * DP * 2);
#pragma unroll
    for (int pn = 0; pn < DP / 64; pn++)
        tma_load4(dst + pn * ROWS * 128, tm, bar, pn * 64, r, h, b);
}

} // namespace kg_attn

#endif
