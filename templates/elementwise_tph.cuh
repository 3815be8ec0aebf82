/*
 * elementwise_tph.cuh - <op>_tperma for copies of 4-byte elements:
 * tperm's 64 x 64 tiles whose output rows are cut at 32-byte sectors.
 * Included by the 4-byte tperm modules (the 2-byte ones include
 * elementwise_tpa.cuh, whose kg_ew_tperma is the 2-byte form; no module
 * includes both).
 *
 * Why: an odd permutation's output rows start off 32-byte sectors, so each
 * warp's 128-byte store along c touches 5 sectors (2 of them partial, the
 * other half written by the neighbouring tile). Here each output row j
 * of a tile owns the 64 positions from the first sector boundary at or
 * after c0 (h_j = 0..7 positions on): c0 + h_j .. c0 + 63 + h_j (the first
 * c tile from 0, the last to the axis's end), so every warp store is 4
 * whole sectors. The tile loads c0 .. c0 + 71 (8 positions of halo, read
 * again by the next tile) so that every row's owned positions are staged.
 * Forced (or KG_EW_TUNE_TPERMA 1) until measured: the c axis is one dim of
 * output stride 1 and input 0 is staged (the runtime's tph_ok).
 */
#ifndef KG_ELEMENTWISE_TPH_CUH
#define KG_ELEMENTWISE_TPH_CUH

#include "elementwise_tperm.cuh"

/* compiled for at least this many resident blocks per SM (tperm's f32
   copies run 4: 5 or 6 lost 3-25 points, kg_tperm.h) */
#define KG_TPH_MIN_BLOCKS 4

template <typename X> struct kg_tph {
    static constexpr int T = 64;                       /* j positions a tile; c positions a row owns */
    static constexpr int H = 32 / (int)sizeof(X);      /* positions a sector: the halo along c */
    static constexpr int CE = T + H;                   /* c positions loaded */
    static constexpr int EL = CE * T / KG_EW_THREADS;  /* loads a thread */
    static constexpr int E = T * T / KG_EW_THREADS;    /* output rows a thread */
    static constexpr int R = KG_EW_THREADS / T;        /* threads a c row (loads) / a j row (stores) */
    static constexpr int P = CE + 1;                   /* stage pitch: an odd number of words */
    static_assert(CE * T % KG_EW_THREADS == 0 && sizeof(X) == 4, "tph: 4-byte elements");
};

template <typename X> struct kg_tph_smem {
    __align__(16) int32_t tj[2][64]; /* the j positions' offsets: output, input 0 (j axis of several dims) */
    X s[64][kg_tph<X>::P];           /* s[j][c - c0] */
};

/* one tile (blockIdx.x). JFLAT (a flat plan): the j axis is one dim
   (offsets by multiplication), else its offsets from the table S.tj. */
template <typename F, bool JFLAT>
__device__ __forceinline__ void kg_tph_tile(const kg_ew_ptrs &p, const kg_tperm &L, kg_tph_smem<typename F::in0_t> &S)
{
    typedef typename F::in0_t X;
    typedef kg_tph<X> Q;
    constexpr int T = Q::T, H = Q::H, EL = Q::EL, E = Q::E;
    uint32_t ct, jt;
    const uint32_t b = kg_tp_where(L, blockIdx.x, ct, jt);
    const uint32_t c0 = ct * T, j0 = jt * T;
    const int ncr = (int)(L.n[KG_TP_C] - c0); /* c positions from c0 to the axis's end */
    const int jn = L.n[KG_TP_J] - j0 < (uint32_t)T ? (int)(L.n[KG_TP_J] - j0) : T;
    int32_t boff[2] = {0, 0};
    kg_tp_offsets<2>(L, KG_TP_B, b, boff);
    const int tx = threadIdx.x, lo = tx % T;
    if constexpr (!JFLAT) {
        if (tx < T) {
            int32_t off[2] = {0, 0};
            if (tx < jn)
                kg_tp_offsets<2>(L, KG_TP_J, j0 + tx, off);
            S.tj[0][tx] = off[0];
            S.tj[1][tx] = off[1];
        }
        __syncthreads();
    }
    /* loads: lanes along j (input 0's fast axis), a thread's EL c rows
       consecutive */
    const int32_t sci = L.stride[KG_TP_C][1][0];
    const int32_t tji = JFLAT ? (int32_t)(j0 + lo) * L.stride[KG_TP_J][1][0] : S.tj[1][lo];
    const int32_t fi = boff[1] + tji + (int32_t)c0 * sci;
    const X *in = (const X *)p.in[0];
    const int cl = (tx / T) * EL;
    X r[EL];
#pragma unroll
    for (int m = 0; m < EL; m++)
        r[m] = lo < jn && cl + m < ncr ? in[fi + (cl + m) * sci] : X{};
#pragma unroll
    for (int m = 0; m < EL; m++)
        S.s[lo][cl + m] = r[m];
    __syncthreads();
    /* stores: lanes along c, a thread's E j rows consecutive; row j's owned
       positions start h on from c0, h = the positions to its first sector
       boundary (the same in every c tile: c0 is a multiple of 64) */
    typedef typename F::out_t O;
    O *out = (O *)p.out;
    const uint32_t ob = (uint32_t)((uintptr_t)p.out / sizeof(O));
    const int jl = (tx / T) * E;
#pragma unroll
    for (int m = 0; m < E; m++) {
        const int j = jl + m;
        if (j < jn) {
            const int32_t ro =
                boff[0] + (JFLAT ? (int32_t)(j0 + j) * L.stride[KG_TP_J][0][0] : S.tj[0][j]) + (int32_t)c0;
            const int h = (int)((0u - (ob + (uint32_t)ro)) & (uint32_t)(H - 1));
            if (h + lo < ncr)
                out[ro + h + lo] = S.s[j][h + lo];
            if (c0 == 0 && lo < h && lo < ncr) /* the first c tile: the row's head too */
                out[ro + lo] = S.s[j][lo];
        }
    }
}

/* <op>_tperma of the 4-byte modules */
template <typename F, int N> __device__ __forceinline__ void kg_ew_tperma(const kg_ew_ptrs &p, const kg_tperm &L)
{
    static_assert(F::arity == 1 && F::bits && sizeof(typename F::in0_t) == 4 &&
                      sizeof(typename F::out_t) == 4,
                  "tph: copies of 4-byte elements");
    __shared__ kg_tph_smem<typename F::in0_t> S;
    if (blockIdx.x >= L.tiles)
        return;
    if (L.flat) /* c and j one dim each (the c axis always is, kg_ew_tph_ok) */
        kg_tph_tile<F, true>(p, L, S);
    else
        kg_tph_tile<F, false>(p, L, S);
}

#endif
