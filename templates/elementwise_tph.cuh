/*
 * elementwise_tph.cuh - <op>_tperms: copies of 4-byte elements by tperm's
 * 64 x 64 tiles whose output rows are cut at 32-byte sectors. Included by
 * the 4-byte tperm modules.
 *
 * Why: an odd permutation's output rows start off 32-byte sectors, so each
 * warp's 128-byte store along c touches 5 sectors for 4, the 2 partial
 * ones written again by the neighbouring warp or tile. Here row j of a
 * tile owns the 64 positions from its first sector boundary at or after
 * c0 (h_j = 0 .. 7 positions on): c0 + h_j .. c0 + 63 + h_j (the first c
 * tile from 0, the last to the axis's end), so every warp store is 4 whole
 * sectors. The tile loads c0 .. c0 + 71 (8 positions of halo, loaded
 * again by the next tile) so that every row's owned positions are staged.
 * The runtime's kg_ew_tperms_ok: the c axis is one dim of output stride 1
 * (or, under KG_EW_TUNE_TPERMS_CHAIN 1, several dims that chain from unit
 * output stride: one run of the output, the rows' input offsets from a
 * table), input 0 is staged.
 * H200, same process, % of copy, main's tperm -> tperms: s22r1 (first
 * form) f32 6007x5003^T 73.6 -> 82.1, 6007x5024^T (only the output's rows
 * off sectors; only the input's off, 6016x5023^T, runs at 88.0 against
 * 90.0 aligned: the loss is the partial output sectors) 75.7 -> 86.3; ncu
 * p2.1.0: L2 write sectors 3.72 M -> 3.28 M (the output's 3.19 M), reads
 * 3.54 M -> 3.87 M (the halo), instructions 22.2 M -> 33.1 M. s22r2 (whole
 * tiles without predicates): 6007x5003^T 73.8 -> 88.7, [255,387,259] p2.1.0
 * 64.9 -> 78.1, p2.0.1 68.8 -> 84.2, p0.2.1 80.1 -> 85.2 (the runtime's
 * kg_ew_tperms_by_default says where). The same cut for bf16 (16
 * positions of halo, 32-bit word stores, 64 positions a warp) lost to
 * tperma / tperm2 on every row (s22r1, x0.76 to x0.97: p0.2.1 63.5 -> 48.3,
 * p2.1.0 51.0 -> 49.2) and was dropped.
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
    static constexpr int P = CE + 1;                  /* stage pitch: an odd number of words */
    static_assert(CE * T % KG_EW_THREADS == 0 && sizeof(X) == 4, "tph: 4-byte elements");
};

template <typename X> struct kg_tph_smem {
    __align__(16) int32_t tj[2][64]; /* the j positions' offsets: output, input 0 (j axis of several dims) */
    __align__(16) int32_t tc[kg_tph<X>::CE]; /* the c positions' input offsets (c axis of several dims) */
    __align__(16) X s[64][kg_tph<X>::P]; /* s[j][c - c0] */
};

/* one tile: c0, j0 its first positions, ncr the c positions from c0 to
   the axis's end, jn its j extent; JFLAT (a flat plan): the j axis is one
   dim (offsets by multiplication), else its offsets from the table S.tj.
   CTAB: the c axis folds several dims that chain in the output (one run
   of it, kg_ew_tp_c_chained; KG_EW_TUNE_TPERMS_CHAIN 1 only): the rows'
   input offsets from the table S.tc (72 entries), else c is one dim
   (offsets by multiplication). FIRST: the first c tile (its rows' heads
   too); FULL: jn = 64 and the loads' c0 .. c0 + 71 are all inside (no
   predicates; most tiles). */
template <typename F, bool JFLAT, bool FIRST, bool FULL, bool CTAB = false>
__device__ __forceinline__ void kg_tph_tile(const kg_ew_ptrs &p, const kg_tperm &L, kg_tph_smem<typename F::in0_t> &S,
                                            uint32_t b, uint32_t c0, uint32_t j0, int ncr, int jn)
{
    typedef typename F::in0_t X;
    typedef kg_tph<X> Q;
    constexpr int T = Q::T, H = Q::H, EL = Q::EL, E = T * T / KG_EW_THREADS;
    int32_t boff[2] = {0, 0};
    kg_tp_offsets<2>(L, KG_TP_B, b, boff);
    const int tx = threadIdx.x, lo = tx % T;
    if constexpr (!JFLAT || CTAB) {
        if (!JFLAT && tx < T) {
            int32_t off[2] = {0, 0};
            if (FULL || tx < jn)
                kg_tp_offsets<2>(L, KG_TP_J, j0 + tx, off);
            S.tj[0][tx] = off[0];
            S.tj[1][tx] = off[1];
        }
        if (CTAB && tx >= T && tx < T + Q::CE) { /* threads 64 .. 135 */
            const int i = tx - T;
            int32_t off[2] = {0, 0};
            if (FULL || i < ncr)
                kg_tp_offsets<2>(L, KG_TP_C, c0 + i, off);
            S.tc[i] = off[1];
        }
        __syncthreads();
    }
    /* loads: lanes along j (input 0's fast axis), a thread's EL c rows
       consecutive */
    const int32_t sci = L.stride[KG_TP_C][1][0];
    const int32_t tji = JFLAT ? (int32_t)(j0 + lo) * L.stride[KG_TP_J][1][0] : S.tj[1][lo];
    const int cl = (tx / T) * EL;
    X r[EL];
    if constexpr (CTAB) { /* wrapping arithmetic: a row past the axis's end is not read */
        const X *in = (const X *)p.in[0];
        const int32_t ib = (int32_t)((uint32_t)boff[1] + (uint32_t)tji);
#pragma unroll
        for (int m = 0; m < EL; m++)
            r[m] = FULL || (lo < jn && cl + m < ncr) ? in[ib + S.tc[cl + m]] : X{};
    } else {
        const X *in = (const X *)p.in[0] + (boff[1] + tji + ((int32_t)c0 + cl) * sci);
#pragma unroll
        for (int m = 0; m < EL; m++)
            r[m] = FULL || (lo < jn && cl + m < ncr) ? in[m * sci] : X{};
    }
#pragma unroll
    for (int m = 0; m < EL; m++)
        S.s[lo][cl + m] = r[m];
    __syncthreads();
    /* stores: lanes along c, a thread's E j rows consecutive; row j's owned
       positions start h on from c0, h = the positions to its first sector
       boundary (the same in every c tile: c0 is a multiple of 64) */
    typedef typename F::out_t O;
    const int jl = (tx / T) * E;
    const uint32_t ob = (uint32_t)((uintptr_t)p.out / sizeof(O)) + (uint32_t)(boff[0] + (int32_t)c0); /* mod 2^32 */
    O *out = (O *)p.out + (boff[0] + (int32_t)c0);
    const int32_t sjo = L.stride[KG_TP_J][0][0];
#pragma unroll
    for (int m = 0; m < E; m++) {
        const int j = jl + m;
        if (FULL || j < jn) {
            const int32_t ro = JFLAT ? (int32_t)(j0 + j) * sjo : S.tj[0][j];
            const int h = (int)((0u - (ob + (uint32_t)ro)) & (uint32_t)(H - 1));
            if (FULL || h + lo < ncr)
                out[ro + h + lo] = S.s[j][h + lo];
            if (FIRST && lo < h && lo < ncr) /* the first c tile: the row's head too */
                out[ro + lo] = S.s[j][lo];
        }
    }
}

/* <op>_tperms: copies (F::bits, one input) of 4-byte elements, one block a
   tile */
template <typename F, int N> __device__ __forceinline__ void kg_ew_tperms(const kg_ew_ptrs &p, const kg_tperm &L)
{
    static_assert(F::arity == 1 && F::bits && sizeof(typename F::in0_t) == 4 && sizeof(typename F::out_t) == 4,
                  "tperms: copies of 4-byte elements");
    typedef kg_tph<typename F::in0_t> Q;
    __shared__ kg_tph_smem<typename F::in0_t> S;
    if (blockIdx.x >= L.tiles)
        return;
    uint32_t ct, jt;
    const uint32_t b = kg_tp_where(L, blockIdx.x, ct, jt);
    const uint32_t c0 = ct * Q::T, j0 = jt * Q::T;
    const int ncr = (int)(L.n[KG_TP_C] - c0);
    const int jn = L.n[KG_TP_J] - j0 < (uint32_t)Q::T ? (int)(L.n[KG_TP_J] - j0) : Q::T;
    const bool full = jn == Q::T && ncr >= Q::CE;
#define KG_TPH_CASES(JF, CT)                                                                                           \
    if (ct == 0)                                                                                                       \
        kg_tph_tile<F, JF, true, false, CT>(p, L, S, b, c0, j0, ncr, jn);                                              \
    else if (full)                                                                                                     \
        kg_tph_tile<F, JF, false, true, CT>(p, L, S, b, c0, j0, ncr, jn);                                              \
    else                                                                                                               \
        kg_tph_tile<F, JF, false, false, CT>(p, L, S, b, c0, j0, ncr, jn);
    if (L.flat) { /* c and j one dim each */
        KG_TPH_CASES(true, false)
    } else if (L.nd[KG_TP_C] > 1) { /* c chained over several dims (kg_ew_tperms_ok under KG_EW_TUNE_TPERMS_CHAIN 1) */
        KG_TPH_CASES(false, true)
    } else {
        KG_TPH_CASES(false, false)
    }
#undef KG_TPH_CASES
}

#endif
