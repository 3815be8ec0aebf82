/*
 * elementwise_tpa.cuh - <op>_tperma: tperm's tiles (kg_tperm.h, mapping 1,
 * square tiles) for copies of 4- and 8-byte elements, loaded by cp.async
 * straight into the tile buffer and pipelined over two buffers: a block
 * takes tiles blockIdx.x, + gridDim.x, ... and issues tile i + 1's loads
 * (its offset tables filled first) before it stores tile i, so one tile's
 * loads are in flight while the other is stored, and no register holds a
 * loaded element. 2-byte elements (which cp.async cannot move alone) take
 * the same pipeline through registers (kg_tpb_run). Included by the tperm
 * modules of 2-, 4- and 8-byte dtypes only (u8 and bool have no tperma).
 *
 * Why: tperm on the worst f32 row ([255,387,259] p2.1.0, ncu s20r3) ran at
 * 34% issue active, 48% warps active and L2 sectors at 36% of peak: each
 * block loads one tile, waits, stores it and exits, so its loads are in
 * flight only part of its life.
 */
#ifndef KG_ELEMENTWISE_TPA_CUH
#define KG_ELEMENTWISE_TPA_CUH

#include "elementwise_tperm.cuh"

/* <op>_tperma is compiled for at least this many resident blocks per SM:
   two tile buffers a block (35.6 KB of shared memory for 4-byte elements,
   6 blocks 220 KB with the per-block reserve), 40 registers (f32 copy,
   sm_90: no spill) */
#define KG_TPA_MIN_BLOCKS 6

/* one element of S (4 or 8) bytes, global -> shared, asynchronously */
template <int S> __device__ __forceinline__ void kg_tpa_cp(void *dst, const void *src)
{
    static_assert(S == 4 || S == 8, "cp.async.ca moves 4, 8 or 16 bytes");
    const uint32_t d = (uint32_t)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(d), "l"(src), "n"(S) : "memory");
}

__device__ __forceinline__ void kg_tpa_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N> __device__ __forceinline__ void kg_tpa_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

/* one tile's coordinates (kg_tp_coords) */
template <int K> struct kg_tpa_at {
    uint32_t b[1], c0[1], j0[1];
    int cn[1], jn[1];
    int32_t boff[1][K];
};

/* Tile at's coordinates and (tables) offset tables in S, then every one of
   its loads issued into S.s0 at [j][c] and committed as one group. */
template <typename F, bool FLAT>
__device__ __forceinline__ void kg_tpa_issue(const kg_ew_ptrs &p, const kg_tperm &L, kg_tp_smem<F> &S, uint32_t tile,
                                             kg_tpa_at<F::arity + 1> &w)
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
    const bool fin = lo < (t0 ? w.jn[0] : w.cn[0]);
    const int nv = t0 ? w.cn[0] : w.jn[0];
    const A *base = (const A *)p.in[0] + tf;
#pragma unroll
    for (int m = 0; m < E; m++) {
        const int v = kg_tp_v<1, T, E, R>(m);
        if (fin && v < nv) /* staged: the thread's j is lo, its c is v; direct: the reverse */
            kg_tpa_cp<sizeof(A)>(t0 ? &S.s0[lo][v] : &S.s0[v][lo], base + e[m]);
    }
    kg_tpa_commit();
}

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

template <typename F, bool FLAT> __device__ __forceinline__ void kg_tpa_run(const kg_ew_ptrs &p, const kg_tperm &L,
                                                                            kg_tp_smem<F> (&S)[2])
{
    uint32_t tile = blockIdx.x;
    if (tile >= L.tiles)
        return;
    kg_tpa_at<F::arity + 1> cur, nxt;
    kg_tpa_issue<F, FLAT>(p, L, S[0], tile, cur);
    for (int s = 0;; s ^= 1) {
        const uint32_t next = tile + gridDim.x;
        const bool more = next < L.tiles; /* the same for the whole block */
        if (more) {
            kg_tpa_issue<F, FLAT>(p, L, S[s ^ 1], next, nxt);
            kg_tpa_wait<1>(); /* this thread's copies of tile `tile` landed */
        } else {
            kg_tpa_wait<0>();
        }
        __syncthreads(); /* everyone's copies landed */
        kg_tpa_store<F, FLAT>(p, L, S[s], cur);
        __syncthreads(); /* S[s] is free for tile next + gridDim.x */
        if (!more)
            break;
        tile = next;
        cur = nxt;
    }
}

/* 2-byte elements (cp.async moves 4 bytes at least): the same pipeline
   through registers. A block loads tile i + 1 into registers (its tables
   filled first) before it stores tile i from shared memory, then stages
   them into the other buffer: the loads are in flight during the stores,
   one barrier a tile besides the tables'. */
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

/* <op>_tperma: copies (F::bits, one input) of 2-, 4- or 8-byte elements;
   the runtime launches it with a square-tile plan (L.rect 0, L.words 0)
   and at most L.tiles blocks. */
template <typename F, int N> __device__ __forceinline__ void kg_ew_tperma(const kg_ew_ptrs &p, const kg_tperm &L)
{
    static_assert(F::arity == 1 && F::bits, "tperma: copies");
    __shared__ kg_tp_smem<F> S[2];
    if constexpr (sizeof(typename F::in0_t) == 2) {
        if (L.flat)
            kg_tpb_run<F, true>(p, L, S);
        else
            kg_tpb_run<F, false>(p, L, S);
    } else {
        if (L.flat)
            kg_tpa_run<F, true>(p, L, S);
        else
            kg_tpa_run<F, false>(p, L, S);
    }
}

#endif
