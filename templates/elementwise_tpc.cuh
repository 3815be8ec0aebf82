/*
 * elementwise_tpc.cuh - <op>_tpermc: copies of 2-byte elements (f16, bf16)
 * by tperm's square-tile plan (kg_ew_plan_tperm, input 0 staged) whose
 * output rows are cut at 32-byte sectors and stored as aligned 16-byte
 * chunks. Included by the 2-byte tperm modules (it includes tperma's
 * header, which includes the other 2-byte forms).
 *
 * Why: round s30r1 (ncu, H100) found the bf16 rows that tperma runs at
 * 54.6-54.9% of copy ([33,64,95,91] p3.1.0.2, [429,487,105] p2.1.0,
 * [157,195,73,11] p3.1.0.2) writing 1.41-1.43 times the output's L2
 * sectors: their output rows start at 2-byte offsets, so each tile's
 * 64-position (128-byte) row segment touches 5 sectors and two tiles write
 * parts of the same sector. tpx (elementwise_tpx.cuh) already cuts rows at
 * sectors with 16-byte stores, but on its own plan, whose j axis is the
 * input's contiguous run only: a short run (91 or 11 positions) leaves its
 * 62-wide j tiles 73% or 18% full, and rule A takes only c tiles of 128.
 * Here the plan is tperma's (any c and j folds, offsets from tables), so
 * the tiles stay as full as tperma's:
 *  - the c axis must be one run of the output (its dims chain from unit
 *    stride: kg_ew_tp_c_chained), so c position x of a row is output
 *    element x of that row's run, whatever dims c folds;
 *  - row j of a tile owns the 64 positions from its first sector boundary
 *    at or after c0 (h = 0 .. 15 positions on; the same h in every c tile
 *    of the row, c0 being a multiple of 64; the first c tile also writes
 *    the row's head 0 .. h - 1, the last stops at the axis's end), so every
 *    sector of the row's inside is written whole, once, by one block;
 *  - the tile loads c0 .. c0 + 79 (16 positions of halo, loaded again by
 *    the next c tile), lanes along j (the input's fast axis), 20 rows a
 *    thread, each row's input offset by multiplication (c of one dim) or
 *    from a table (c of several dims, 80 entries);
 *  - the stage holds each j row's 80 positions as 40 words (c, c + 1)
 *    packed in registers (one byte permute a word), rows of 41 words (odd:
 *    the column stores hit 32 banks);
 *  - stores: 8 lanes a row, each an aligned 16-byte chunk of 8 positions
 *    built from 4 stage words (h even) or from 5 by byte permutes (h odd),
 *    as tpx builds its chunks; a chunk past the axis's end element by
 *    element.
 * Against tperma, per thread and tile: 20 loads (16), 10 shared stores (8
 * by pairs), 8-10 shared loads and 2 global stores of 16 bytes (16 loads
 * and 16 stores of 2 bytes): fewer instructions, 25% more L2 read sectors
 * (the halo), no partial write sectors inside a row.
 */
#ifndef KG_ELEMENTWISE_TPC_CUH
#define KG_ELEMENTWISE_TPC_CUH

#include "elementwise_tpa.cuh"

/* compiled for at least this many resident blocks per SM (tperma's 6: 40
   registers) */
#define KG_TPC_MIN_BLOCKS 6

struct kg_tpc {
    static constexpr int T = 64;                      /* j positions a tile; c positions a row owns */
    static constexpr int H = 16;                      /* 2-byte positions a sector: the halo along c */
    static constexpr int CE = T + H;                  /* c positions loaded: 80 */
    static constexpr int EL = CE * T / KG_EW_THREADS; /* loads a thread: 20 */
    static constexpr int PW = CE / 2 + 1;             /* stage row pitch in words: 41 (odd) */
    static_assert(CE * T % KG_EW_THREADS == 0 && EL % 4 == 0 && KG_EW_THREADS / T * EL == CE && (PW & 1) == 1 &&
                      KG_EW_THREADS == 256,
                  "tpc: tile shape");
};

struct kg_tpc_smem {
    __align__(16) int32_t tj[2][64];      /* the j positions' offsets: output, input 0 (a table plan) */
    __align__(16) int32_t tc[kg_tpc::CE]; /* the c positions' input offsets (c of several dims) */
    __align__(16) uint32_t s[64 * kg_tpc::PW]; /* row j, word k: positions c0 + 2k (low half), c0 + 2k + 1 */
};

/* one tile: c0, j0 its first positions, ncr the c positions from c0 to the
   axis's end, jn its j extent. JFLAT (a flat plan): the j axis is one dim
   (offsets by multiplication), else from the table S.tj; CTAB: the c axis
   folds several dims (the rows' input offsets from the table S.tc), else
   one dim (offsets by multiplication). FIRST: the first c tile (its rows'
   heads too); FULL: jn = 64 and c0 .. c0 + 79 all inside (no predicates). */
template <bool JFLAT, bool CTAB, bool FIRST, bool FULL>
__device__ __forceinline__ void kg_tpc_tile(const kg_ew_ptrs &p, const kg_tperm &L, kg_tpc_smem &S, uint32_t b,
                                            uint32_t c0, uint32_t j0, int ncr, int jn)
{
    typedef kg_tpc Q;
    constexpr int T = Q::T, EL = Q::EL, PW = Q::PW;
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
        if (CTAB && tx >= T && tx < T + Q::CE) {
            const int i = tx - T;
            int32_t off[2] = {0, 0};
            if (FULL || i < ncr)
                kg_tp_offsets<2>(L, KG_TP_C, c0 + i, off);
            S.tc[i] = off[1];
        }
        __syncthreads();
    }
    /* loads: lanes along j (input 0's fast axis), a thread's EL c rows
       consecutive from cl; wrapping arithmetic: a row past the axis's end
       is not read */
    const int32_t sci = L.stride[KG_TP_C][1][0];
    const int32_t tji = JFLAT ? (int32_t)((j0 + lo) * (uint32_t)L.stride[KG_TP_J][1][0]) : S.tj[1][lo];
    const int cl = (tx / T) * EL;
    const int32_t ib = (int32_t)((uint32_t)boff[1] + (uint32_t)tji +
                                 (CTAB ? 0u : (c0 + (uint32_t)cl) * (uint32_t)sci));
    const uint16_t *in = (const uint16_t *)p.in[0];
    uint32_t r[EL];
#pragma unroll
    for (int m = 0; m < EL; m++) {
        const int32_t a = CTAB ? ib + S.tc[cl + m] : (int32_t)((uint32_t)ib + (uint32_t)m * (uint32_t)sci);
        r[m] = FULL || (lo < jn && cl + m < ncr) ? (uint32_t)in[a] : 0u;
    }
    /* the stage: row lo, words cl / 2 .. cl / 2 + EL / 2 - 1, lanes at
       consecutive rows (41 words apart: 32 distinct banks) */
#pragma unroll
    for (int i = 0; i < EL / 2; i++)
        S.s[lo * PW + cl / 2 + i] = __byte_perm(r[2 * i], r[2 * i + 1], 0x5410);
    __syncthreads();
    /* stores: 8 lanes a row (chunk t), 4 rows a warp, 32 rows a step; row
       j owns c0 + h .. c0 + h + 63, h the positions to its first sector
       boundary (ob: the output's address in elements, mod 2^32, with b's
       and c0's offsets) */
    const int w = tx / 32, l = tx % 32, t = l % 8;
    const uint32_t ob = (uint32_t)((uintptr_t)p.out / 2) + (uint32_t)(boff[0] + (int32_t)c0);
    uint16_t *out = (uint16_t *)p.out + (boff[0] + (int32_t)c0);
    const int32_t sjo = L.stride[KG_TP_J][0][0];
#pragma unroll
    for (int it = 0; it < T / 32; it++) {
        const int j = 32 * it + 4 * w + l / 8;
        const bool jin = FULL || j < jn;
        const int32_t ro = !jin ? 0 : JFLAT ? (int32_t)(j0 + j) * sjo : S.tj[0][j];
        const int h = (int)((0u - (ob + (uint32_t)ro)) & 15u);
        const int cc = h + 8 * t; /* the chunk's first position in the tile: 0 .. 71 */
        const uint32_t *x = S.s + ((jin ? j : 0) * PW + (h >> 1) + 4 * t); /* row 0 stands in past jn */
        uint32_t v[4];
        if (__any_sync(0xffffffffu, jin && (h & 1))) { /* realign: positions (cc + 2m, cc + 2m + 1) */
            const uint32_t sel = h & 1 ? 0x5432u : 0x3210u;
            uint32_t y[5];
#pragma unroll
            for (int m = 0; m < 5; m++)
                y[m] = x[m];
#pragma unroll
            for (int m = 0; m < 4; m++)
                v[m] = __byte_perm(y[m], y[m + 1], sel);
        } else {
#pragma unroll
            for (int m = 0; m < 4; m++)
                v[m] = x[m];
        }
        if (jin && cc < ncr) {
            uint16_t *o = out + (ro + cc);
            if (FULL || cc + 8 <= ncr) {
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
        const uint16_t *S16 = (const uint16_t *)S.s;
#pragma unroll
        for (int it = 0; it < T / 16; it++) {
            const int j = tx / 16 + 16 * it, e = tx % 16;
            if (j < jn) {
                const int32_t ro = JFLAT ? (int32_t)(j0 + j) * sjo : S.tj[0][j];
                const int h = (int)((0u - (ob + (uint32_t)ro)) & 15u);
                if (e < h && e < ncr)
                    out[ro + e] = S16[2 * j * PW + e];
            }
        }
    }
}

/* <op>_tpermc: copies (F::bits, one input) of 2-byte elements, one block a
   tile of a square-tile tperm plan (L.rect 0, L.words 0, input 0 staged,
   the c axis one run of the output: the runtime's kg_ew_tpermc_ok) */
template <typename F, int N> __device__ __forceinline__ void kg_ew_tpermc(const kg_ew_ptrs &p, const kg_tperm &L)
{
    static_assert(F::arity == 1 && F::bits && sizeof(typename F::in0_t) == 2 && sizeof(typename F::out_t) == 2,
                  "tpermc: copies of 2-byte elements");
    typedef kg_tpc Q;
    __shared__ kg_tpc_smem S;
    if (blockIdx.x >= L.tiles)
        return;
    uint32_t ct, jt;
    const uint32_t b = kg_tp_where(L, blockIdx.x, ct, jt);
    const uint32_t c0 = ct * Q::T, j0 = jt * Q::T;
    const int ncr = (int)(L.n[KG_TP_C] - c0);
    const int jn = L.n[KG_TP_J] - j0 < (uint32_t)Q::T ? (int)(L.n[KG_TP_J] - j0) : Q::T;
    const bool full = jn == Q::T && ncr >= Q::CE;
#define KG_TPC_CASES(JF, CT)                                                                                           \
    if (ct == 0)                                                                                                       \
        kg_tpc_tile<JF, CT, true, false>(p, L, S, b, c0, j0, ncr, jn);                                                 \
    else if (full)                                                                                                     \
        kg_tpc_tile<JF, CT, false, true>(p, L, S, b, c0, j0, ncr, jn);                                                 \
    else                                                                                                               \
        kg_tpc_tile<JF, CT, false, false>(p, L, S, b, c0, j0, ncr, jn);
    if (L.flat) { /* c and j one dim each */
        KG_TPC_CASES(true, false)
    } else if (L.nd[KG_TP_C] > 1) {
        KG_TPC_CASES(false, true)
    } else {
        KG_TPC_CASES(false, false)
    }
#undef KG_TPC_CASES
}

#endif
