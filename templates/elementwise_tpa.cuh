/*
 * elementwise_tpa.cuh - <op>_tperma: tperm's square tiles (kg_tperm.h,
 * mapping 1's rows, staged packed in pairs as mapping 2) for copies of
 * 2-byte elements (f16, bf16) off the word path, compiled for 6 blocks
 * per SM (40 registers) where <op>_tperm2 takes 64 (4 blocks, two tiles a
 * block). Included by the f16 and bf16 tperm modules only.
 *
 * A block takes tiles blockIdx.x, + gridDim.x, ... and loads tile i + 1
 * (registers) before it stores tile i (two buffers); the runtime launches
 * one block per tile by default (KG_EW_TUNE_TPERMA_BPS 0), so the loop runs
 * once. H200, same process, % of copy, tperm2 -> tperma: s21r1 with 6
 * persistent blocks per SM lost everywhere (bf16 [255,387,259] p2.1.0 50.8
 * -> 46.4, 6007x5003^T 63.3 -> 46.7); one tile a block (s21r2, 33 bf16
 * rows): +2 to +6% on 16 rows (6007x5003^T 63.0 -> 64.5, [255,387,259]
 * p1.2.0 60.5 -> 63.4, [33,64,95,91] p3.2.0.1 61.4 -> 64.5), within 0.6%
 * on 7, lower where input 0 is not staged ([255,387,259] p1.0.2 55.0 ->
 * 53.6), where j has at most 5 tiles and c over 1000 (p2.0.1 52.7 -> 50.6)
 * and on p2.1.0 (tables, 4 c tiles: 51.1 -> 50.1); the runtime's rule
 * (tperma_by_default, runtime/elementwise.c) leaves those to tperm2. The
 * same pipeline by cp.async for 4- and 8-byte elements lost on every f32
 * row (s21r1, persistent: 6007x5003^T 74.4 -> 58.7; one tile a block:
 * 74.0 -> 70.8) and was removed.
 */
#ifndef KG_ELEMENTWISE_TPA_CUH
#define KG_ELEMENTWISE_TPA_CUH

#include "elementwise_tperm.cuh"
#include "elementwise_tpw.cuh"

/* <op>_tperma is compiled for at least this many resident blocks per SM:
   40 registers (bf16 copy, sm_90: no spill), two tile buffers of 9.6 KB */
#define KG_TPA_MIN_BLOCKS 6

/* one tile's coordinates (kg_tp_coords) */
template <int K> struct kg_tpa_at {
    uint32_t b[1], c0[1], j0[1];
    int cn[1], jn[1];
    int32_t boff[1][K];
};

/* Tile w's output from S.s0 (s[j][c]), lanes along c. */
template <typename F, bool FLAT>
__device__ __forceinline__ void kg_tpa_store(const kg_ew_ptrs &p, const kg_tperm &L, const kg_tp_smem<F> &S,
                                             const kg_tpa_at<F::arity + 1> &w)
{
    typedef kg_tp_shape<F> PS;
    constexpr int T = PS::T, E = PS::E, R = PS::R, K = F::arity + 1;
    typedef typename F::out_t O;
    const int lo = threadIdx.x % T;
    if (lo < w.cn[0]) {
        int32_t e[E];
        O *out = (O *)p.out + kg_tp_operand<FLAT, 1, T, E, R, K>(L, S.t, 0, false, lo, w.c0[0], w.j0[0], w.boff[0], e);
#pragma unroll
        for (int m = 0; m < E; m++) {
            const int v = kg_tp_v<1, T, E, R>(m);
            if (v < w.jn[0])
                out[e[m]] = S.s0[v][lo];
        }
    }
}

/* A block loads tile i + 1 into registers (its tables filled first)
   before it stores tile i from shared memory, then stages them into the
   other buffer: the loads are in flight during the stores, one barrier a
   tile besides the tables'. */
template <typename F, bool FLAT>
__device__ __forceinline__ void kg_tpb_load(const kg_ew_ptrs &p, const kg_tperm &L, kg_tp_smem<F> &S, uint32_t tile,
                                            kg_tpa_at<F::arity + 1> &w, typename F::in0_t (&r)[kg_tp_shape<F>::E])
{
    typedef kg_tp_shape<F> PS;
    constexpr int T = PS::T, E = PS::E, R = PS::R, K = F::arity + 1;
    typedef typename F::in0_t A;
    kg_tp_coords<FLAT, T, 1, K>(L, tile, w.b, w.c0, w.j0, w.cn, w.jn, w.boff);
    if constexpr (!FLAT)
        kg_tp_fill_tables<F, 1>(L, *(kg_tp_smem<F>(*)[1]) & S, w.b, w.c0, w.j0, w.cn, w.jn);
    const bool t0 = L.staged & 2u;
    const int lo = threadIdx.x % T;
    int32_t e[E];
    const int32_t tf = kg_tp_operand<FLAT, 1, T, E, R, K>(L, S.t, 1, t0, lo, w.c0[0], w.j0[0], w.boff[0], e);
    kg_tp_load<1, A, T, E, R>((const A *)p.in[0], tf, e, lo < (t0 ? w.jn[0] : w.cn[0]), t0 ? w.cn[0] : w.jn[0], r);
}

template <typename F, bool FLAT> __device__ __forceinline__ void kg_tpb_run(const kg_ew_ptrs &p, const kg_tperm &L,
                                                                            kg_tp_smem<F> (&S)[2])
{
    typedef kg_tp_shape<F> PS;
    constexpr int T = PS::T, E = PS::E, R = PS::R;
    typedef typename F::in0_t A;
    uint32_t tile = blockIdx.x;
    if (tile >= L.tiles)
        return;
    const bool t0 = L.staged & 2u;
    const int lo = threadIdx.x % T;
    kg_tpa_at<F::arity + 1> cur, nxt;
    A r[E];
    kg_tpb_load<F, FLAT>(p, L, S[0], tile, cur, r);
    for (int s = 0;; s ^= 1) {
        if (t0) /* s[j][c]: mapping 1's rows, packed in pairs (kg_tp_stage mapping 2) */
            kg_tp_stage<2, A, T, E, R>(S[s].s0, lo, r);
        else
#pragma unroll
            for (int m = 0; m < E; m++)
                S[s].s0[kg_tp_v<1, T, E, R>(m)][lo] = r[m];
        __syncthreads(); /* tile `tile` staged; S[s ^ 1] (stored last pass) is free */
        const uint32_t next = tile + gridDim.x;
        const bool more = next < L.tiles; /* the same for the whole block */
        if (more)
            kg_tpb_load<F, FLAT>(p, L, S[s ^ 1], next, nxt, r);
        kg_tpa_store<F, FLAT>(p, L, S[s], cur);
        if (!more)
            break;
        tile = next;
        cur = nxt;
    }
}

/* <op>_tperma: copies (F::bits, one input) of 2-byte elements; the runtime
   launches it with a square-tile plan (L.rect 0, L.words 0). */
template <typename F, int N> __device__ __forceinline__ void kg_ew_tperma(const kg_ew_ptrs &p, const kg_tperm &L)
{
    static_assert(F::arity == 1 && F::bits && sizeof(typename F::in0_t) == 2, "tperma: copies of 2-byte elements");
    __shared__ kg_tp_smem<F> S[2];
    if (L.flat)
        kg_tpb_run<F, true>(p, L, S);
    else
        kg_tpb_run<F, false>(p, L, S);
}

#endif
