/*
 * elementwise_tpw.cuh - <op>_tperms for 2-byte elements (f16, bf16
 * copies): tiles whose global loads and stores are all 32-bit words, the
 * output rows cut at 32-byte sectors. Included by the 2-byte tperm modules
 * (through elementwise_tpa.cuh); the 4-byte form is elementwise_tph.cuh.
 *
 * Why: an odd 2-byte permutation pairs no elements (kg_ew_tperm_words_ok),
 * so tperm / tperma move one 2-byte element a lane: 64 bytes a warp access,
 * the rows off sectors on both sides (s22: bf16 [255,387,259] p2.1.0 at
 * 51% of copy where f32 tperms runs 78%). Here both sides move words
 * whatever the rows' alignment:
 *  - the plan (kg_ew_plan_tpw) is flat: c = the output's dim 0 (unit
 *    stride), j = the input's unit-stride dim, every other dim walked by
 *    block; a tile is KG_TPW_CW positions of c (KG_TPW_CE loaded: a
 *    sector of halo) by KG_TPW_TJ of j;
 *  - loads: input row c of the tile (j0 .. j0 + 63) is read as the 32
 *    aligned words from j0 - p (p: the parity of (c, j0)'s address), plus a
 *    33rd where p = 1, one warp a row; the words are staged as they are
 *    (row r of the stage holds j0 - p .. j0 - p + 65 at halfword jj + p);
 *  - stores: output row j owns the KG_TPW_CW positions from its first
 *    sector boundary at or after c0 (h positions on; the first c tile from
 *    0), so each warp stores 32 words = 4 whole sectors; each word's two
 *    halves are two halfword reads of stage rows c, c + 1.
 * The stage's rows are 33 words with a rotation by (r >> 5) & 1, so that
 * the 32 rows of one read (rows h, h + 2, ..., all of one parity, one
 * word column) sit in 32 distinct banks.
 * Forced, or KG_EW_TUNE_TPERMW 1, until measured (runtime/elementwise.c).
 */
#ifndef KG_ELEMENTWISE_TPW_CUH
#define KG_ELEMENTWISE_TPW_CUH

#include "elementwise_tperm.cuh"
#include "elementwise_tpx.cuh"

/* the tile: KG_TPW_CW c positions by KG_TPW_TJ j positions, KG_TPW_CE c
   positions loaded (a sector of halo: 16 elements); runtime/layout.h
   plans with the same numbers (kept out of kg_tperm.h, which every tperm
   module includes) */
#define KG_TPW_TJ 64
#define KG_TPW_CW 128
#define KG_TPW_CE (KG_TPW_CW + 16)

/* the 2-byte <op>_tperms kernels' resident blocks per SM (the launch
   bound; elementwise_tph.cuh's name, one header or the other is in a
   module): 6, the register budget of the second form (elementwise_tpx.cuh:
   40 registers unbounded, no spill); the first form then takes 40 (32
   bytes of spills, sm_90; it took 64 at 4 blocks, session 23's
   measurements). The runtime can hold the second form to 4 or 5 blocks by
   dynamic shared memory (KG_EW_TUNE_TPERMW_BPS). */
#ifndef KG_TPH_MIN_BLOCKS
#define KG_TPH_MIN_BLOCKS 6
#endif

struct kg_tpw {
    static constexpr int TJ = KG_TPW_TJ;          /* j positions a tile */
    static constexpr int CW = KG_TPW_CW;          /* c positions a row owns */
    static constexpr int CE = KG_TPW_CE;          /* c positions (stage rows) loaded */
    static constexpr int W = TJ / 2 + 1;          /* words a stage row: 32 + 1 */
    static constexpr int WARPS = KG_EW_THREADS / 32;
    static constexpr int LR = CE / WARPS;         /* stage rows a warp loads */
    static constexpr int SR = TJ / WARPS;         /* output rows a warp stores */
    static constexpr int SW = CW / 64;            /* warp stores a row (32 words each) */
    static_assert(CE % WARPS == 0 && TJ % WARPS == 0 && CW % 64 == 0 && LR <= 32, "tpw: tile shape");
};

/* the word slot of stage row r, word k (0 .. 32): rotated by (r >> 5) & 1
   within the row */
__device__ __forceinline__ int kg_tpw_slot(int r, int k)
{
    int q = k + ((r >> 5) & 1);
    q -= q >= kg_tpw::W ? kg_tpw::W : 0;
    return r * kg_tpw::W + q;
}

/* One tile: c0, j0 its first positions, ncr the c positions from c0 to the
   axis's end, nj the j axis's extent. FIRST: the first c tile (rows' heads
   too). FULL: every stage row inside (ncr >= CE), every loaded word's two
   halves inside the j axis (j0 >= 1, j0 + 64 < nj: jn = 64): no
   predicates. */
template <typename F, bool FIRST, bool FULL>
__device__ __forceinline__ void kg_tpw_tile(const kg_ew_ptrs &p, const kg_tperm &L, uint32_t *S, uint32_t b,
                                            uint32_t c0, uint32_t j0, int ncr, int nj)
{
    typedef kg_tpw Q;
    int32_t boff[2] = {0, 0};
    kg_tp_offsets<2>(L, KG_TP_B, b, boff);
    const int w = threadIdx.x / 32, l = threadIdx.x % 32;
    const int jn = nj - (int)j0 < Q::TJ ? nj - (int)j0 : Q::TJ;
    /* loads: warp w, rows w + WARPS i; lane l the word l */
    const uint16_t *in = (const uint16_t *)p.in[0];
    const uint32_t ib = (uint32_t)((uintptr_t)in / 2); /* the input's address in elements, mod 2^32 */
    const int32_t sci = L.stride[KG_TP_C][1][0];
    const int32_t a0 = boff[1] + (int32_t)c0 * sci + (int32_t)j0; /* (c0, j0) */
    uint32_t r[Q::LR];
#pragma unroll
    for (int i = 0; i < Q::LR; i++) {
        const int row = w + Q::WARPS * i;
        const int32_t a = a0 + row * sci;
        const int pr = (int)((ib + (uint32_t)a) & 1u);
        const int32_t s = a - pr + 2 * l; /* the word's first element */
        if (FULL) {
            r[i] = *(const uint32_t *)(in + s);
        } else {
            const int jl = (int)j0 - pr + 2 * l; /* its j position */
            uint32_t v = 0;
            if (row < ncr) {
                if (jl >= 0 && jl + 1 < nj)
                    v = *(const uint32_t *)(in + s);
                else if (jl >= 0 && jl < nj)
                    v = in[s];
                else if (jl + 1 >= 0 && jl + 1 < nj)
                    v = (uint32_t)in[s + 1] << 16;
            }
            r[i] = v;
        }
    }
    /* the 33rd words (rows whose word cover starts one early): lane i < LR
       takes row w + WARPS i's */
    uint32_t x = 0;
    int xrow = w + Q::WARPS * l;
    if (l < Q::LR) {
        const int32_t a = a0 + xrow * sci;
        const int pr = (int)((ib + (uint32_t)a) & 1u);
        if (pr && (FULL || xrow < ncr)) {
            const int32_t s = a - 1 + 64; /* elements j0 + 63, j0 + 64 */
            if (FULL || (int)j0 + 64 < nj)
                x = *(const uint32_t *)(in + s);
            else if ((int)j0 + 63 < nj)
                x = in[s];
        }
    }
#pragma unroll
    for (int i = 0; i < Q::LR; i++)
        S[kg_tpw_slot(w + Q::WARPS * i, l)] = r[i];
    if (l < Q::LR)
        S[kg_tpw_slot(xrow, Q::W - 1)] = x;
    __syncthreads();
    /* stores: warp w, output rows w * SR .. + SR - 1; lane l the words l,
       l + 32, ...: positions c0 + h + 2 m, + 1 */
    const uint16_t *S16 = (const uint16_t *)S;
    const uint32_t pb = (ib + (uint32_t)a0) & 1u; /* row 0's parity; row r's: pb ^ (r sci & 1) */
    const uint32_t sodd = (uint32_t)sci & 1u;
    uint16_t *out = (uint16_t *)p.out;
    const uint32_t ob = (uint32_t)((uintptr_t)out / 2);
    const int32_t sjo = L.stride[KG_TP_J][0][0];
#pragma unroll
    for (int e = 0; e < Q::SR; e++) {
        const int jj = w * Q::SR + e;
        if (!FULL && jj >= jn)
            break;
        const int32_t ro = boff[0] + (int32_t)(j0 + jj) * sjo + (int32_t)c0;
        const int h = (int)((0u - (ob + (uint32_t)ro)) & 15u);
#pragma unroll
        for (int u = 0; u < Q::SW; u++) {
            const int cc = h + 2 * (l + 32 * u); /* tile-local c of the word's first half */
            const int pa = (int)(pb ^ ((uint32_t)cc & sodd)), pc = (int)(pb ^ ((uint32_t)(cc + 1) & sodd));
            const int ha = jj + pa, hc = jj + pc; /* halfword in stage rows cc, cc + 1 */
            const uint32_t lo = S16[2 * kg_tpw_slot(cc, ha >> 1) + (ha & 1)];
            const uint32_t hi = S16[2 * kg_tpw_slot(cc + 1, hc >> 1) + (hc & 1)];
            if (FULL || cc + 1 < ncr)
                *(uint32_t *)(out + ro + cc) = lo | hi << 16;
            else if (cc < ncr)
                out[ro + cc] = (uint16_t)lo;
        }
        if (FIRST && l < h && l < ncr) { /* the first c tile: the row's head too */
            const int pa = (int)(pb ^ ((uint32_t)l & sodd)), ha = jj + pa;
            out[ro + l] = S16[2 * kg_tpw_slot(l, ha >> 1) + (ha & 1)];
        }
    }
}

/* <op>_tperms, 2-byte elements: copies (F::bits, one input), one block a
   tile of a kg_ew_plan_tpw plan (c tiles of KG_TPW_CW fastest, then j
   tiles of KG_TPW_TJ, then b) */
template <typename F, int N> __device__ __forceinline__ void kg_ew_tperms(const kg_ew_ptrs &p, const kg_tperm &L)
{
    static_assert(F::arity == 1 && F::bits && sizeof(typename F::in0_t) == 2 && sizeof(typename F::out_t) == 2,
                  "tperms (tpw): copies of 2-byte elements");
    __shared__ uint32_t S[kg_tpw::CE * kg_tpw::W];
    static_assert(kg_tpw::CE * kg_tpw::W >= KG_TPX_STAGE_WORDS, "tperms: one buffer for both forms");
    if (blockIdx.x >= L.tiles)
        return;
    if (L.words == 2) { /* the second form (elementwise_tpx.cuh, kg_ew_plan_tpx) */
        kg_tpx_tile<F>(p, L, S);
        return;
    }
    uint32_t ct, jt;
    const uint32_t b = kg_tp_where(L, blockIdx.x, ct, jt);
    const uint32_t c0 = ct * kg_tpw::CW, j0 = jt * kg_tpw::TJ;
    const int ncr = (int)(L.n[KG_TP_C] - c0), nj = (int)L.n[KG_TP_J];
    const bool full = ncr >= kg_tpw::CE && j0 >= 1 && (int)j0 + 64 < nj;
    if (ct == 0) {
        if (full)
            kg_tpw_tile<F, true, true>(p, L, S, b, c0, j0, ncr, nj);
        else
            kg_tpw_tile<F, true, false>(p, L, S, b, c0, j0, ncr, nj);
    } else if (full) {
        kg_tpw_tile<F, false, true>(p, L, S, b, c0, j0, ncr, nj);
    } else {
        kg_tpw_tile<F, false, false>(p, L, S, b, c0, j0, ncr, nj);
    }
}

#endif
