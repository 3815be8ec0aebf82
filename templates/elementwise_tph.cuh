/*
 * elementwise_tph.cuh - <op>_tperms: copies of 2- and 4-byte elements by
 * tperm's 64 x 64 tiles whose output rows are cut at 32-byte sectors.
 * Included by the 4-byte tperm modules and (through elementwise_tpa.cuh)
 * the 2-byte ones.
 *
 * Why: an odd permutation's output rows start off 32-byte sectors, so each
 * warp's store along c touches one sector more than it fills (4-byte: 5
 * for 4; 2-byte, 64 bytes a warp: 3 for 2), the partial ones written again
 * by the neighbouring warp or tile (H200 ncu, tperm on [255,387,259]
 * p2.1.0: L2 write sectors 1.16x the output's, bf16 tperm2 1.40x). Here
 * row j of a tile owns the 64 positions from its first sector boundary at
 * or after c0 (h_j positions on, 0 .. S - 1, S = 32 / element size): c0 +
 * h_j .. c0 + 63 + h_j (the first c tile from 0, the last to the axis's
 * end), so every warp store fills whole sectors: 4-byte, 32 positions a
 * warp (4 sectors); 2-byte, 64 positions as 32 words (4 sectors). The tile
 * loads c0 .. c0 + 63 + S (S positions of halo, loaded again by the next
 * tile) so that every row's owned positions are staged. Forced (or
 * KG_EW_TUNE_TPERMS 1) until measured; the runtime's kg_ew_tperms_ok: the
 * c axis is one dim of output stride 1, input 0 is staged.
 */
#ifndef KG_ELEMENTWISE_TPH_CUH
#define KG_ELEMENTWISE_TPH_CUH

#include "elementwise_tperm.cuh"

/* compiled for at least this many resident blocks per SM (tperm's f32
   copies run 4: 5 or 6 lost 3-25 points, kg_tperm.h) */
#define KG_TPH_MIN_BLOCKS 4

template <typename X> struct kg_tph {
    static constexpr int T = 64;                      /* j positions a tile; c positions a row owns */
    static constexpr int H = 32 / (int)sizeof(X);     /* positions a sector: the halo along c */
    static constexpr int CE = T + H;                  /* c positions loaded */
    static constexpr int EL = CE * T / KG_EW_THREADS; /* loads a thread */
    static constexpr int P = CE + 4 / (int)sizeof(X); /* stage pitch: an odd number of words */
    static_assert(CE * T % KG_EW_THREADS == 0 && (sizeof(X) == 4 || sizeof(X) == 2), "tph: 2- or 4-byte elements");
};

template <typename X> struct kg_tph_smem {
    __align__(16) int32_t tj[2][64]; /* the j positions' offsets: output, input 0 (j axis of several dims) */
    __align__(16) X s[64][kg_tph<X>::P]; /* s[j][c - c0] */
};

/* one tile (blockIdx.x). JFLAT (a flat plan): the j axis is one dim
   (offsets by multiplication), else its offsets from the table S.tj. */
template <typename F, bool JFLAT>
__device__ __forceinline__ void kg_tph_tile(const kg_ew_ptrs &p, const kg_tperm &L, kg_tph_smem<typename F::in0_t> &S)
{
    typedef typename F::in0_t X;
    typedef kg_tph<X> Q;
    constexpr int T = Q::T, H = Q::H, EL = Q::EL;
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
    /* stores: lanes along c; row j's owned positions start h on from c0,
       h = the positions to its first sector boundary (the same in every c
       tile: c0 is a multiple of 64) */
    typedef typename F::out_t O;
    O *out = (O *)p.out;
    const uint32_t ob = (uint32_t)((uintptr_t)p.out / sizeof(O));
    if constexpr (sizeof(X) == 4) { /* a thread's 16 rows consecutive, lanes at c = h + lo */
        constexpr int E = T * T / KG_EW_THREADS;
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
    } else { /* a warp's 8 rows consecutive, lane l at the word c = h + 2 l, h + 2 l + 1 */
        constexpr int E = T * T / (2 * KG_EW_THREADS);
        const int jl = (tx / 32) * E, l = tx % 32;
#pragma unroll
        for (int m = 0; m < E; m++) {
            const int j = jl + m;
            if (j < jn) {
                const int32_t ro =
                    boff[0] + (JFLAT ? (int32_t)(j0 + j) * L.stride[KG_TP_J][0][0] : S.tj[0][j]) + (int32_t)c0;
                const int h = (int)((0u - (ob + (uint32_t)ro)) & (uint32_t)(H - 1));
                const int q = h + 2 * l;
                if (q + 1 < ncr) /* on 4 bytes: ob + ro + h is a multiple of 16 */
                    *(uint32_t *)(out + ro + q) = kg_tp_bits(S.s[j][q]) | kg_tp_bits(S.s[j][q + 1]) << 16;
                else if (q < ncr)
                    out[ro + q] = S.s[j][q];
                if (c0 == 0 && l < h && l < ncr) /* the first c tile: the row's head too */
                    out[ro + l] = S.s[j][l];
            }
        }
    }
}

/* <op>_tperms: copies (F::bits, one input) of 2- or 4-byte elements, one
   block a tile */
template <typename F, int N> __device__ __forceinline__ void kg_ew_tperms(const kg_ew_ptrs &p, const kg_tperm &L)
{
    static_assert(F::arity == 1 && F::bits && sizeof(typename F::in0_t) == sizeof(typename F::out_t),
                  "tperms: copies");
    __shared__ kg_tph_smem<typename F::in0_t> S;
    if (blockIdx.x >= L.tiles)
        return;
    if (L.flat) /* c and j one dim each (the c axis always is, kg_ew_tperms_ok) */
        kg_tph_tile<F, true>(p, L, S);
    else
        kg_tph_tile<F, false>(p, L, S);
}

#endif
