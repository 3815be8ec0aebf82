/*
 * elementwise_tpx.cuh - the second form of the 2-byte <op>_tperms (f16,
 * bf16 copies; a kg_ew_plan_tpx plan, L.words 2): element pairs made in
 * registers on both sides, so that no shared-memory access moves less than
 * a 32-bit word and every output store is an aligned 16-byte chunk.
 * Included by elementwise_tpw.cuh (whose kg_ew_tperms runs it).
 *
 * Why: session 23's word form (elementwise_tpw.cuh) loads and stores words
 * but builds each output word from two halfword reads of the stage, with a
 * rotated slot computed for each (about 37 instructions a thread for 2
 * elements in and out); bf16 permutations that pair no elements run at
 * 51-65% of copy on tperm / tperma, while the f32 form (elementwise_tph.cuh,
 * the same tiles and traffic per byte) runs 78-89%: the 2-byte kernels issue
 * about twice the instructions per byte. Here, per tile of CW x TJ:
 *  - loads: a warp reads one input row (c) of the tile as 32 aligned words
 *    (j0 - p .. j0 - p + 63, p the row's parity: every word holds an element
 *    of the row); a row of odd parity is realigned to the pairs (j0 + 2l,
 *    j0 + 2l + 1) by one shuffle and one byte permute. A thread holds the
 *    same word of rows c and c + 1 (c even), and two byte permutes turn
 *    them into the words (c, c + 1) of stage rows j and j + 1: the stage
 *    holds, for each j of the tile, its c positions in pairs from c0;
 *  - the plan's j axis is the input's unit-stride dim and the dims that
 *    continue its run in the input (one contiguous run: the loads need no
 *    table), the output offsets of its positions computed once a tile into
 *    a table; c is the output's dim 0 (unit stride) and, where its tiles
 *    would be less than 90% full, the dims that continue its run in the
 *    output (the stores need no table; the rows' input offsets then come
 *    from a table, their parities row by row); b every other dim;
 *  - stores: output row j owns the CW positions from its first 32-byte
 *    sector at or after c0 (h = 0 .. 15 positions on; the first c tile
 *    from 0, the last to the axis's end), stored as aligned 16-byte chunks,
 *    CW / 8 lanes a row; a chunk is 4 stage words (h even) or the
 *    realignment of 5 (h odd, byte permutes).
 * CW is 128, or 64 where the plan finds that fills the c tiles better
 * (L.rc; CW + 16 rows loaded either way).
 * TJ is 62, not 64, so that a row of odd parity still fits in 32 words.
 * Stage rows are CW / 2 + 9 words (odd) with row r skewed by one word from
 * r = 32 on, so that the loads' stores (lanes at rows 2l, one column) hit
 * 32 distinct banks. Whole tiles along j (j0 + TJ < nj) read words without
 * predicates on j; the last j tile reads halfwords; rows past the c axis's
 * end are skipped warp by warp. Every global access touches only elements
 * of the tensors, or the other half of an aligned word that holds one.
 */
#ifndef KG_ELEMENTWISE_TPX_CUH
#define KG_ELEMENTWISE_TPX_CUH

#include "elementwise_tperm.cuh"

/* the tile (runtime/layout.h plans with the same numbers): TJ j positions,
   CW (the plan's rc: 128, or 64 where that fills the c axis's tiles
   better) c positions an output row owns, CW + 16 loaded (a 32-byte sector
   of halo) */
#define KG_TPX_TJ 62
/* the stage's words at CW 128 (the larger): TJ rows of 73, the skew of rows
   32 on, the j offsets table (64 words), the c rows' input offsets table
   (144 words; a c axis of several dims) */
#define KG_TPX_STAGE_WORDS (KG_TPX_TJ * 73 + 2 + 64 + 144)

template <int CW_> struct kg_tpx {
    static constexpr int TJ = KG_TPX_TJ, CW = CW_, CE = CW + 16;
    static constexpr int PW = CE / 2 + 1; /* stage row pitch in words: odd */
    static constexpr int WARPS = KG_EW_THREADS / 32;
    static constexpr int PAIRS = CE / 2 / WARPS;  /* row pairs a warp loads: 9 or 5 */
    static constexpr int LPR = CW / 8;            /* lanes a row stores (16-byte chunks) */
    static constexpr int RPI = 32 / LPR;          /* rows a warp stores at once: 2 or 4 */
    static constexpr int IT = 64 / (RPI * WARPS); /* store steps: 4 or 2 */
    static constexpr int TAB = TJ * PW + 2;       /* the j table's first word; the c table 64 on */
    static_assert(CE % (2 * WARPS) == 0 && (CW == 128 || CW == 64) && TJ <= 62 && (PW & 1) == 1 &&
                      TAB + 64 + CE <= KG_TPX_STAGE_WORDS,
                  "tpx: tile shape");
};

/* the word of stage row r (0 .. TJ - 1) at pair k, rows of PW words */
template <int PW> __device__ __forceinline__ int kg_tpx_at(int r, int k) { return r * PW + (r >> 5) + k; }

/* The loads and the stage. FULLJ: j0 + TJ < nj (every word of the row's
   cover holds an element of it). c one dim (CTAB false): row c's input
   offset a0 + c sci, PE, PO the parity (address in elements, mod 2) of the
   tile's even and odd rows (FULLJ only: rows c0 + 2q share PE, c0 + 2q + 1
   share PO). CTAB (c folds several dims): row c's input offset tabc[c]
   (b's and j0's included), its parity taken row by row. */
template <int CW, bool FULLJ, int PE, int PO, bool CTAB>
__device__ __forceinline__ void kg_tpx_load(const uint16_t *in, uint32_t ib, int32_t a0, int32_t sci,
                                            const int32_t *tabc, int ncr, int jn, uint32_t *S)
{
    typedef kg_tpx<CW> Q;
    const int w = threadIdx.x / 32, l = threadIdx.x % 32;
    uint32_t r[Q::PAIRS][2];
    int pr[Q::PAIRS][2];
#pragma unroll
    for (int i = 0; i < Q::PAIRS; i++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int c = 2 * (w + Q::WARPS * i) + h; /* the tile's row */
            /* (c0 + c, j0); wrapping arithmetic: a row past the axis's end is not read */
            const int32_t a = CTAB ? tabc[c] : (int32_t)((uint32_t)a0 + (uint32_t)c * (uint32_t)sci);
            const int p = CTAB ? (int)((ib + (uint32_t)a) & 1u) : h ? PO : PE;
            pr[i][h] = p;
            uint32_t v = 0;
            if (c < ncr) { /* the same for the whole warp */
                if (FULLJ) {
                    if (l < 31 || p)
                        v = *(const uint32_t *)(in + (a - p + 2 * l));
                } else {
                    const uint32_t lo = 2 * l < jn ? in[a + 2 * l] : 0u;
                    const uint32_t hi = 2 * l + 1 < jn ? in[a + 2 * l + 1] : 0u;
                    v = lo | hi << 16;
                }
            }
            r[i][h] = v;
        }
    }
#pragma unroll
    for (int i = 0; i < Q::PAIRS; i++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            /* realign a row of odd parity to (j0 + 2l, j0 + 2l + 1): the next lane's low half */
            if (FULLJ && CTAB) {
                const uint32_t nx = __shfl_down_sync(0xffffffffu, r[i][h], 1);
                r[i][h] = __byte_perm(r[i][h], nx, pr[i][h] ? 0x5432u : 0x3210u);
            } else if (FULLJ && (h ? PO : PE)) {
                const uint32_t nx = __shfl_down_sync(0xffffffffu, r[i][h], 1);
                r[i][h] = __byte_perm(r[i][h], nx, 0x5432);
            }
        }
        if (l < 31) {
            const int q = w + Q::WARPS * i; /* pair (2q, 2q + 1) of rows c */
            S[kg_tpx_at<Q::PW>(2 * l, q)] = __byte_perm(r[i][0], r[i][1], 0x5410);
            S[kg_tpx_at<Q::PW>(2 * l + 1, q)] = __byte_perm(r[i][0], r[i][1], 0x7632);
        }
    }
}

/* The stores of a tile staged by kg_tpx_load: output row j (table entry:
   its offset, b's and c0's included) from c0 + h, chunk t (CW / 8 lanes a
   row, 32 / (CW / 8) rows of one parity a warp step: rows 2 RPI g + o + 2
   k). FIRST: the first c tile, whose rows' heads (c0 .. c0 + h - 1) follow
   element by element. */
template <int CW, bool FIRST>
__device__ __forceinline__ void kg_tpx_store(uint16_t *out, const uint32_t *S, const int32_t *tab, int ncr, int jn)
{
    typedef kg_tpx<CW> Q;
    const int w = threadIdx.x / 32, l = threadIdx.x % 32, t = l % Q::LPR;
    const uint32_t ob = (uint32_t)((uintptr_t)out / 2); /* the output's address in elements, mod 2^32 */
#pragma unroll
    for (int it = 0; it < Q::IT; it++) {
        const int s = w + Q::WARPS * it; /* 0 .. 64 / RPI - 1 */
        const int j = 2 * Q::RPI * (s >> 1) + (s & 1) + 2 * (l / Q::LPR);
        const bool jin = j < jn;
        const int32_t ro = jin ? tab[j] : 0;
        const int h = (int)((0u - (ob + (uint32_t)ro)) & 15u);
        const int cc = h + 8 * t;                                       /* the chunk's first position in the tile */
        const int k0 = kg_tpx_at<Q::PW>(jin ? j : 0, (h >> 1) + 4 * t); /* row 0 stands in past jn (not stored) */
        uint32_t v[5];
        if (__any_sync(0xffffffffu, jin && (h & 1))) {
            const uint32_t sel = h & 1 ? 0x5432u : 0x3210u;
            uint32_t x[5];
#pragma unroll
            for (int m = 0; m < 5; m++)
                x[m] = S[k0 + m];
#pragma unroll
            for (int m = 0; m < 4; m++)
                v[m] = __byte_perm(x[m], x[m + 1], sel);
        } else {
#pragma unroll
            for (int m = 0; m < 4; m++)
                v[m] = S[k0 + m];
        }
        if (jin && cc < ncr) {
            uint16_t *o = out + (ro + cc);
            if (cc + 8 <= ncr) {
                *(uint4 *)o = make_uint4(v[0], v[1], v[2], v[3]);
            } else {
#pragma unroll
                for (int e = 0; e < 8; e++)
                    if (cc + e < ncr)
                        o[e] = (uint16_t)(v[e >> 1] >> (16 * (e & 1)));
            }
        }
    }
    if (FIRST) { /* the rows' heads: positions 0 .. h - 1, 16 lanes a row */
        const uint16_t *S16 = (const uint16_t *)S;
#pragma unroll
        for (int it = 0; it < 4; it++) {
            const int j = threadIdx.x / 16 + 16 * it, e = threadIdx.x % 16;
            if (j < jn) {
                const int32_t ro = tab[j];
                const int h = (int)((0u - (ob + (uint32_t)ro)) & 15u);
                if (e < h && e < ncr)
                    out[ro + e] = S16[2 * kg_tpx_at<Q::PW>(j, e >> 1) + (e & 1)];
            }
        }
    }
}

/* <op>_tperms, form 2 (L.words 2, kg_ew_plan_tpx): one block a tile, c
   tiles of CW (L.rc) fastest, then j tiles of TJ, then b. S: the kernel's
   shared buffer, at least KG_TPX_STAGE_WORDS words. */
template <typename F, int CW>
__device__ __forceinline__ void kg_tpx_run(const kg_ew_ptrs &p, const kg_tperm &L, uint32_t *S)
{
    typedef kg_tpx<CW> Q;
    uint32_t ct, jt;
    const uint32_t b = kg_tp_where(L, blockIdx.x, ct, jt);
    const uint32_t c0 = ct * Q::CW, j0 = jt * Q::TJ;
    const int ncr = (int)(L.n[KG_TP_C] - c0), nj = (int)L.n[KG_TP_J];
    const int jn = nj - (int)j0 < Q::TJ ? nj - (int)j0 : Q::TJ;
    int32_t boff[2] = {0, 0};
    kg_tp_offsets<2>(L, KG_TP_B, b, boff);
    int32_t *tab = (int32_t *)S + Q::TAB;
    if (threadIdx.x < (unsigned)Q::TJ) { /* the output offsets of the tile's j positions (read after the barrier) */
        int32_t off[1] = {0};
        if ((int)threadIdx.x < jn)
            kg_tp_offsets<1>(L, KG_TP_J, j0 + threadIdx.x, off);
        tab[threadIdx.x] = boff[0] + off[0] + (int32_t)c0;
    }
    const uint16_t *in = (const uint16_t *)p.in[0];
    const uint32_t ib = (uint32_t)((uintptr_t)in / 2); /* the input's address in elements, mod 2^32 */
    const int32_t sci = L.stride[KG_TP_C][1][0];
    /* (c0, j0): the j run has unit input stride (c of one dim; wrapping arithmetic, unused where c folds) */
    const int32_t a0 = (int32_t)((uint32_t)boff[1] + c0 * (uint32_t)sci + j0);
    const bool fullj = (int)j0 + Q::TJ < nj;
    if (L.nd[KG_TP_C] > 1) { /* c folds dims: its rows' input offsets, a table the loads read */
        int32_t *tabc = tab + 64;
        if (threadIdx.x < (unsigned)Q::CE) {
            int32_t off[2] = {0, 0};
            if ((int)threadIdx.x < ncr)
                kg_tp_offsets<2>(L, KG_TP_C, c0 + threadIdx.x, off);
            tabc[threadIdx.x] = boff[1] + off[1] + (int32_t)j0;
        }
        __syncthreads();
        if (fullj)
            kg_tpx_load<CW, true, 0, 0, true>(in, ib, a0, sci, tabc, ncr, jn, S);
        else
            kg_tpx_load<CW, false, 0, 0, true>(in, ib, a0, sci, tabc, ncr, jn, S);
    } else if (fullj) {
        const int pe = (int)((ib + (uint32_t)a0) & 1u), po = pe ^ (int)((uint32_t)sci & 1u);
        if (pe)
            if (po)
                kg_tpx_load<CW, true, 1, 1, false>(in, ib, a0, sci, tab, ncr, jn, S);
            else
                kg_tpx_load<CW, true, 1, 0, false>(in, ib, a0, sci, tab, ncr, jn, S);
        else if (po)
            kg_tpx_load<CW, true, 0, 1, false>(in, ib, a0, sci, tab, ncr, jn, S);
        else
            kg_tpx_load<CW, true, 0, 0, false>(in, ib, a0, sci, tab, ncr, jn, S);
    } else {
        kg_tpx_load<CW, false, 0, 0, false>(in, ib, a0, sci, tab, ncr, jn, S);
    }
    __syncthreads();
    uint16_t *out = (uint16_t *)p.out;
    if (ct == 0)
        kg_tpx_store<CW, true>(out, S, tab, ncr, jn);
    else
        kg_tpx_store<CW, false>(out, S, tab, ncr, jn);
}

template <typename F> __device__ __forceinline__ void kg_tpx_tile(const kg_ew_ptrs &p, const kg_tperm &L, uint32_t *S)
{
    if (L.rc == 64)
        kg_tpx_run<F, 64>(p, L, S);
    else
        kg_tpx_run<F, 128>(p, L, S);
}

#endif
