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
    static constexpr int T = KG_TP_TILE(SZ);        /* tile edge, elements */
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

/* Position on the varying axis of a thread's m-th element (of E). MAP 0:
   rows tx / T, + R, + 2R, ...; MAP 1: E consecutive rows from (tx / T) * E,
   whose table entries are read 4 at a time. Either way the lanes of a warp
   share their varying position, so each table read is a broadcast. */
template <int MAP, int T, int E, int R> __device__ __forceinline__ int kg_tp_v(int m)
{
    return MAP ? (int)(threadIdx.x / T) * E + m : (int)(threadIdx.x / T) + R * m;
}

/* An element's bits (1- and 2-byte types), for packing into 32-bit words. */
template <typename X> __device__ __forceinline__ uint32_t kg_tp_bits(const X &x)
{
    if constexpr (sizeof(X) == 2) {
        uint16_t u;
        memcpy(&u, &x, 2);
        return u;
    } else {
        uint8_t u;
        memcpy(&u, &x, 1);
        return u;
    }
}

/* Stages a thread's E values at s[lo][v(m)]. MAP 2 (MAP 1's rows) packs the
   4 / sizeof(X) consecutive rows of a 1- or 2-byte type into one 32-bit
   store (rows start at multiples of 4 elements; the pitch keeps them
   aligned): fewer shared-memory stores, the same bytes. */
template <int MAP, typename X, int T, int E, int R, int P>
__device__ __forceinline__ void kg_tp_stage(X (*s)[P], int lo, const X (&r)[E])
{
    if constexpr (MAP == 2 && sizeof(X) < 4 && E % 4 == 0) {
        constexpr int G = 4 / sizeof(X);
#pragma unroll
        for (int m = 0; m < E; m += G) {
            uint32_t w = 0;
#pragma unroll
            for (int g = 0; g < G; g++)
                w |= kg_tp_bits(r[m + g]) << (8 * sizeof(X) * g);
            *(uint32_t *)&s[lo][kg_tp_v<MAP, T, E, R>(m)] = w;
        }
    } else {
#pragma unroll
        for (int m = 0; m < E; m++)
            s[lo][kg_tp_v<MAP, T, E, R>(m)] = r[m];
    }
}

/* The varying axis's table entries of a thread's E elements. */
template <int MAP, int T, int E, int R>
__device__ __forceinline__ void kg_tp_entries(const int32_t *tv, int32_t (&e)[E])
{
    if constexpr (MAP == 1 && E % 4 == 0) {
        const int4 *q = (const int4 *)(tv + kg_tp_v<MAP, T, E, R>(0));
#pragma unroll
        for (int i = 0; i < E / 4; i++) {
            const int4 w = q[i];
            e[4 * i] = w.x;
            e[4 * i + 1] = w.y;
            e[4 * i + 2] = w.z;
            e[4 * i + 3] = w.w;
        }
    } else {
#pragma unroll
        for (int m = 0; m < E; m++)
            e[m] = tv[kg_tp_v<MAP, T, E, R>(m)];
    }
}

/* The varying axis's offsets of a thread's E elements: from the table tv,
   or (FLAT: the axis is one dim) (a0 + v(m)) * stride. */
template <bool FLAT, int MAP, int T, int E, int R>
__device__ __forceinline__ void kg_tp_var(const int32_t *tv, uint32_t a0, int32_t stride, int32_t (&e)[E])
{
    if constexpr (FLAT) {
#pragma unroll
        for (int m = 0; m < E; m++)
            e[m] = (int32_t)(a0 + kg_tp_v<MAP, T, E, R>(m)) * stride;
    } else {
        kg_tp_entries<MAP, T, E, R>(tv, e);
    }
}

/* Loads the E elements of one operand: staged = lanes along j (thread's j
   fixed, its rows along c), else lanes along c. tf: the thread's offset on
   its fixed axis (b's included); e: the varying axis's offsets; fin: the
   fixed position is inside the tensor; nv: the tile's extent on the
   varying axis. */
template <int MAP, typename X, int T, int E, int R>
__device__ __forceinline__ void kg_tp_load(const X *base, int32_t tf, const int32_t (&e)[E], bool fin, int nv,
                                           X (&r)[E])
{
#pragma unroll
    for (int m = 0; m < E; m++)
        r[m] = (fin && kg_tp_v<MAP, T, E, R>(m) < nv) ? base[tf + e[m]] : X{};
}

template <int K, int T> struct kg_tp_tables {
    __align__(16) int32_t tc[K][T]; /* per operand: the tile's c positions' offsets (b's included) */
    __align__(16) int32_t tj[K][T]; /* per operand: its j positions' offsets */
};

template <typename F> struct kg_tp_smem {
    typedef kg_tp_shape<F> PS;
    static constexpr int T = PS::T, K = F::arity + 1;
    typedef typename F::in0_t A;
    typedef typename F::in1_t B;
    typedef typename F::in2_t C;
    kg_tp_tables<K, T> t;
    __align__(16) A s0[T][kg_tp_pitch<A, T>::P];
    __align__(16) B s1[F::arity > 1 ? T : 1][kg_tp_pitch<B, T>::P];
    __align__(16) C s2[F::arity > 2 ? T : 1][kg_tp_pitch<C, T>::P];
};

/* One operand's offsets in a tile: tf its fixed position's (staged: along
   j, else along c; b's offset included), e its varying positions'. */
template <bool FLAT, int MAP, int T, int E, int R, int K>
__device__ __forceinline__ int32_t kg_tp_operand(const kg_tperm &L, const kg_tp_tables<K, T> &S, int k, bool staged,
                                                 int lo, uint32_t c0, uint32_t j0, const int32_t (&boff)[K],
                                                 int32_t (&e)[E])
{
    const int fa = staged ? KG_TP_J : KG_TP_C, va = staged ? KG_TP_C : KG_TP_J;
    kg_tp_var<FLAT, MAP, T, E, R>(staged ? S.tc[k] : S.tj[k], staged ? c0 : j0, L.stride[va][k][0], e);
    if constexpr (FLAT)
        return boff[k] + (int32_t)((staged ? j0 : c0) + lo) * L.stride[fa][k][0];
    else
        return staged ? S.tj[k][lo] : S.tc[k][lo];
}

/* One tile: tables, loads, staging, compute and store. FLAT (c and j one
   dim each, L.flat): offsets by multiplication, no tables. */
template <typename F, int MAP, bool FLAT>
__device__ __forceinline__ void kg_tp_tile(const kg_ew_ptrs &p, const kg_tperm &L, kg_tp_smem<F> &S, uint32_t tile)
{
    typedef kg_tp_shape<F> PS;
    constexpr int T = PS::T, E = PS::E, R = PS::R, K = F::arity + 1;
    typedef typename F::in0_t A;
    typedef typename F::in1_t B;
    typedef typename F::in2_t C;
    typedef typename F::out_t O;
    const bool t0 = L.staged & 2u, t1 = L.staged & 4u, t2 = L.staged & 8u;
    const int tx = threadIdx.x, lo = tx % T; /* lo: the thread's fixed position (j if staged, c if direct) */
    /* tile -> (c tile, j tile, b): c fastest, or (L.jfirst) j fastest */
    uint32_t c0, j0, b;
    if (L.jfirst) {
        const uint32_t q = kgd_div_magic(tile, L.magic_j, L.shift_j);
        b = kgd_div_magic(q, L.magic_c, L.shift_c);
        j0 = (tile - q * L.tiles_j) * T;
        c0 = (q - b * L.tiles_c) * T;
    } else {
        const uint32_t q = kgd_div_magic(tile, L.magic_c, L.shift_c);
        b = kgd_div_magic(q, L.magic_j, L.shift_j);
        c0 = (tile - q * L.tiles_c) * T;
        j0 = (q - b * L.tiles_j) * T;
    }
    const int cn = L.n[KG_TP_C] - c0 < (uint32_t)T ? (int)(L.n[KG_TP_C] - c0) : T;
    const int jn = L.n[KG_TP_J] - j0 < (uint32_t)T ? (int)(L.n[KG_TP_J] - j0) : T;
    int32_t boff[K];
#pragma unroll
    for (int k = 0; k < K; k++)
        boff[k] = 0;
    if constexpr (FLAT) {
        kg_tp_offsets<K>(L, KG_TP_B, b, boff);
    } else {
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
                (a == KG_TP_C ? S.t.tc : S.t.tj)[k][i] = off[k];
        }
        __syncthreads();
    }
    /* 1. every load */
    A ra[E];
    B rb[E];
    C rc[E];
    {
        int32_t e[E];
        const int32_t tf = kg_tp_operand<FLAT, MAP, T, E, R, K>(L, S.t, 1, t0, lo, c0, j0, boff, e);
        kg_tp_load<MAP, A, T, E, R>((const A *)p.in[0], tf, e, lo < (t0 ? jn : cn), t0 ? cn : jn, ra);
    }
    if constexpr (F::arity > 1) {
        int32_t e[E];
        const int32_t tf = kg_tp_operand<FLAT, MAP, T, E, R, K>(L, S.t, 2, t1, lo, c0, j0, boff, e);
        kg_tp_load<MAP, B, T, E, R>((const B *)p.in[1], tf, e, lo < (t1 ? jn : cn), t1 ? cn : jn, rb);
    }
    if constexpr (F::arity > 2) {
        int32_t e[E];
        const int32_t tf = kg_tp_operand<FLAT, MAP, T, E, R, K>(L, S.t, 3, t2, lo, c0, j0, boff, e);
        kg_tp_load<MAP, C, T, E, R>((const C *)p.in[2], tf, e, lo < (t2 ? jn : cn), t2 ? cn : jn, rc);
    }
    /* 2. stage: s[j][c] */
    if (t0)
        kg_tp_stage<MAP, A, T, E, R>(S.s0, lo, ra);
    if constexpr (F::arity > 1)
        if (t1)
            kg_tp_stage<MAP, B, T, E, R>(S.s1, lo, rb);
    if constexpr (F::arity > 2)
        if (t2)
            kg_tp_stage<MAP, C, T, E, R>(S.s2, lo, rc);
    __syncthreads();
    /* 3. compute and store along c: thread at c = lo, j = v(m) */
    if (lo < cn) {
        int32_t e[E];
        O *out = (O *)p.out + kg_tp_operand<FLAT, MAP, T, E, R, K>(L, S.t, 0, false, lo, c0, j0, boff, e);
#pragma unroll
        for (int m = 0; m < E; m++) {
            const int v = kg_tp_v<MAP, T, E, R>(m);
            B y{};
            C z{};
            if constexpr (F::arity > 1)
                y = t1 ? S.s1[v][lo] : rb[m];
            if constexpr (F::arity > 2)
                z = t2 ? S.s2[v][lo] : rc[m];
            const O o = F::apply(t0 ? S.s0[v][lo] : ra[m], y, z);
            if (v < jn)
                out[e[m]] = o;
        }
    }
    __syncthreads(); /* the next tile reuses the tables and tiles */
}

/* Block b serves tiles b, b + grid, ...; L.map picks the element mapping
   (kg_tp_v, kg_tp_stage; a tuning choice, all exact), L.flat the table-free
   addressing where c and j are one dim each. */
template <typename F, int N> __device__ __forceinline__ void kg_ew_tperm(const kg_ew_ptrs &p, const kg_tperm &L)
{
    __shared__ kg_tp_smem<F> S;
    for (uint32_t tile = blockIdx.x; tile < L.tiles; tile += gridDim.x) {
        if (L.flat) {
            if (L.map == 2)
                kg_tp_tile<F, 2, true>(p, L, S, tile);
            else if (L.map == 1)
                kg_tp_tile<F, 1, true>(p, L, S, tile);
            else
                kg_tp_tile<F, 0, true>(p, L, S, tile);
        } else {
            if (L.map == 2)
                kg_tp_tile<F, 2, false>(p, L, S, tile);
            else if (L.map == 1)
                kg_tp_tile<F, 1, false>(p, L, S, tile);
            else
                kg_tp_tile<F, 0, false>(p, L, S, tile);
        }
    }
}

#endif
