/*
 * elementwise_tperm.cuh - the tperm loop (kg_tperm.h): permuted layouts in
 * T x T tiles of the (c, j) plane with per-tile offset tables. Included only
 * by the ew_<dtype>_tperm modules, so changing it rebuilds only those.
 *
 * Per tile: the first T threads compute the offsets of the tile's c
 * positions (b's offset included), the next T those of its j positions,
 * into shared memory. Then every load of the tile is issued before the
 * first shared-memory store (see kg_ew_tile): staged inputs with
 * consecutive lanes along j (their fast axis), direct inputs with
 * consecutive lanes along c; the staged values go through shared memory
 * (padded so that the column writes hit distinct banks), and the output is
 * written along c. Positions outside the tensor (the last tile of an axis)
 * are predicated off; every other position is one table read, one add and
 * one access per operand.
 */
#ifndef KG_ELEMENTWISE_TPERM_CUH
#define KG_ELEMENTWISE_TPERM_CUH

#include "elementwise.cuh"
#include "kg_tperm.h"

template <typename F> struct kg_tp_shape {
    static constexpr int S0 = sizeof(typename F::out_t) > sizeof(typename F::in0_t) ? sizeof(typename F::out_t)
                                                                                      : sizeof(typename F::in0_t);
    static constexpr int S1 = F::arity > 1 && sizeof(typename F::in1_t) > S0 ? sizeof(typename F::in1_t) : S0;
    static constexpr int SZ = F::arity > 2 && sizeof(typename F::in2_t) > S1 ? sizeof(typename F::in2_t) : S1;
    static constexpr int T = SZ >= 8 ? 32 : 64;     /* tile edge, elements */
    static constexpr int E = T * T / KG_EW_THREADS; /* elements per thread and operand */
    static constexpr int R = KG_EW_THREADS / T;     /* tile rows per pass of the block */
};

/* Row pitch of a staged tile s[j][c] in elements: a column write (lanes
   along j) then hits 32 distinct banks (pitch an odd number of words, or
   of 8-byte pairs for 8-byte elements). */
template <typename X, int T> struct kg_tp_pitch {
    static constexpr int P = sizeof(X) >= 4 ? T + 1 : T + (int)(4 / sizeof(X));
};

/* Offsets of position x of axis a for the K operands (added to off). */
template <int K> __device__ __forceinline__ void kg_tp_offsets(const kg_tperm &L, int a, uint32_t x, int32_t (&off)[K])
{
#pragma unroll
    for (int d = 0; d < KG_LAYOUT_MAX_DIMS; d++) {
        if (d == L.nd[a])
            break;
        const uint32_t q = kgd_div_magic(x, L.magic[a][d], L.shift[a][d]);
        const int32_t m = (int32_t)(x - q * L.size[a][d]);
        x = q;
#pragma unroll
        for (int k = 0; k < K; k++)
            off[k] += m * L.stride[a][k][d];
    }
}

/* Loads the E elements of one operand: staged = lanes along j (thread's j
   fixed, its rows along c), else lanes along c. tf: the thread's table
   entry on its fixed axis; tv: the table of the varying axis; nf / nv: the
   tile's extents on those axes. */
template <typename X, int T, int E, int R>
__device__ __forceinline__ void kg_tp_load(const X *base, int32_t tf, const int32_t *tv, bool fin, int nv, X (&r)[E])
{
    const int v0 = threadIdx.x / T;
#pragma unroll
    for (int m = 0; m < E; m++) {
        const int v = v0 + R * m;
        r[m] = (fin && v < nv) ? base[tf + tv[v]] : X{};
    }
}

template <typename F, int N> __device__ __forceinline__ void kg_ew_tperm(const kg_ew_ptrs &p, const kg_tperm &L)
{
    typedef kg_tp_shape<F> PS;
    constexpr int T = PS::T, E = PS::E, R = PS::R, K = F::arity + 1;
    typedef typename F::in0_t A;
    typedef typename F::in1_t B;
    typedef typename F::in2_t C;
    typedef typename F::out_t O;
    constexpr int PA = kg_tp_pitch<A, T>::P, PB = kg_tp_pitch<B, T>::P, PC = kg_tp_pitch<C, T>::P;
    __shared__ int32_t tc[K][T], tj[K][T];
    __shared__ A s0[T][PA];
    __shared__ B s1[F::arity > 1 ? T : 1][PB];
    __shared__ C s2[F::arity > 2 ? T : 1][PC];
    const bool t0 = L.staged & 2u, t1 = L.staged & 4u, t2 = L.staged & 8u;
    const int tx = threadIdx.x, lo = tx % T; /* lo: the thread's fixed position (j if staged, c if direct) */
    for (uint32_t tile = blockIdx.x; tile < L.tiles; tile += gridDim.x) {
        const uint32_t q = kgd_div_magic(tile, L.magic_c, L.shift_c);
        const uint32_t b = kgd_div_magic(q, L.magic_j, L.shift_j);
        const uint32_t c0 = (tile - q * L.tiles_c) * T, j0 = (q - b * L.tiles_j) * T;
        const int cn = L.n[KG_TP_C] - c0 < (uint32_t)T ? (int)(L.n[KG_TP_C] - c0) : T;
        const int jn = L.n[KG_TP_J] - j0 < (uint32_t)T ? (int)(L.n[KG_TP_J] - j0) : T;
        /* 0. the offset tables (b's offset in the c table) */
        if (tx < 2 * T) {
            const int a = tx < T ? KG_TP_C : KG_TP_J, i = tx - a * T;
            int32_t off[K];
#pragma unroll
            for (int k = 0; k < K; k++)
                off[k] = 0;
            if (a == KG_TP_C)
                kg_tp_offsets<K>(L, KG_TP_B, b, off);
            if (i < (a == KG_TP_C ? cn : jn))
                kg_tp_offsets<K>(L, a, (a == KG_TP_C ? c0 : j0) + i, off);
#pragma unroll
            for (int k = 0; k < K; k++)
                (a == KG_TP_C ? tc : tj)[k][i] = off[k];
        }
        __syncthreads();
        /* 1. every load */
        A ra[E];
        B rb[E];
        C rc[E];
        if (t0)
            kg_tp_load<A, T, E, R>((const A *)p.in[0], tj[1][lo], tc[1], lo < jn, cn, ra);
        else
            kg_tp_load<A, T, E, R>((const A *)p.in[0], tc[1][lo], tj[1], lo < cn, jn, ra);
        if constexpr (F::arity > 1) {
            if (t1)
                kg_tp_load<B, T, E, R>((const B *)p.in[1], tj[2][lo], tc[2], lo < jn, cn, rb);
            else
                kg_tp_load<B, T, E, R>((const B *)p.in[1], tc[2][lo], tj[2], lo < cn, jn, rb);
        }
        if constexpr (F::arity > 2) {
            if (t2)
                kg_tp_load<C, T, E, R>((const C *)p.in[2], tj[3][lo], tc[3], lo < jn, cn, rc);
            else
                kg_tp_load<C, T, E, R>((const C *)p.in[2], tc[3][lo], tj[3], lo < cn, jn, rc);
        }
        /* 2. stage: s[j][c] */
#pragma unroll
        for (int m = 0; m < E; m++) {
            const int v = tx / T + R * m;
            if (t0)
                s0[lo][v] = ra[m];
            if constexpr (F::arity > 1)
                if (t1)
                    s1[lo][v] = rb[m];
            if constexpr (F::arity > 2)
                if (t2)
                    s2[lo][v] = rc[m];
        }
        __syncthreads();
        /* 3. compute and store along c: thread at c = lo, j = tx / T + R m */
        if (lo < cn) {
            O *out = (O *)p.out + tc[0][lo];
#pragma unroll
            for (int m = 0; m < E; m++) {
                const int v = tx / T + R * m;
                B y{};
                C z{};
                if constexpr (F::arity > 1)
                    y = t1 ? s1[v][lo] : rb[m];
                if constexpr (F::arity > 2)
                    z = t2 ? s2[v][lo] : rc[m];
                const O o = F::apply(t0 ? s0[v][lo] : ra[m], y, z);
                if (v < jn)
                    out[tj[0][v]] = o;
            }
        }
        __syncthreads(); /* the next tile reuses the tables and tiles */
    }
}

#endif
