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
template <int MAP, typename X, int T, int E, int R, bool FULL = false>
__device__ __forceinline__ void kg_tp_load(const X *base, int32_t tf, const int32_t (&e)[E], bool fin, int nv,
                                           X (&r)[E])
{
#pragma unroll
    for (int m = 0; m < E; m++)
        r[m] = (FULL || (fin && kg_tp_v<MAP, T, E, R>(m) < nv)) ? base[tf + e[m]] : X{};
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

/* tile -> (c tile, j tile, b): c tiles fastest, or (L.jfirst) j tiles
   fastest; returns b, sets the tile indices ct and jt */
__device__ __forceinline__ uint32_t kg_tp_where(const kg_tperm &L, uint32_t tile, uint32_t &ct, uint32_t &jt)
{
    uint32_t b;
    if (L.jfirst) {
        const uint32_t q = kgd_div_magic(tile, L.magic_j, L.shift_j);
        b = kgd_div_magic(q, L.magic_c, L.shift_c);
        jt = tile - q * L.tiles_j;
        ct = q - b * L.tiles_c;
    } else {
        const uint32_t q = kgd_div_magic(tile, L.magic_c, L.shift_c);
        b = kgd_div_magic(q, L.magic_j, L.shift_j);
        ct = tile - q * L.tiles_c;
        jt = q - b * L.tiles_j;
    }
    return b;
}

/* The coordinates of NT tiles (tile0, tile0 + 1, ...) of edge T: b, the
   first c and j positions, the extents on both axes (0 for a tile past the
   last one) and (FLAT) each operand's offset of b. */
template <bool FLAT, int T, int NT, int K>
__device__ __forceinline__ void kg_tp_coords(const kg_tperm &L, uint32_t tile0, uint32_t (&b)[NT], uint32_t (&c0)[NT],
                                             uint32_t (&j0)[NT], int (&cn)[NT], int (&jn)[NT], int32_t (&boff)[NT][K])
{
#pragma unroll
    for (int u = 0; u < NT; u++) {
        const uint32_t tile = tile0 + u;
        b[u] = kg_tp_where(L, tile, c0[u], j0[u]);
        c0[u] *= T;
        j0[u] *= T;
        const bool in = NT == 1 || tile < L.tiles;
        cn[u] = !in ? 0 : L.n[KG_TP_C] - c0[u] < (uint32_t)T ? (int)(L.n[KG_TP_C] - c0[u]) : T;
        jn[u] = !in ? 0 : L.n[KG_TP_J] - j0[u] < (uint32_t)T ? (int)(L.n[KG_TP_J] - j0[u]) : T;
#pragma unroll
        for (int k = 0; k < K; k++)
            boff[u][k] = 0;
        if constexpr (FLAT)
            kg_tp_offsets<K>(L, KG_TP_B, b[u], boff[u]);
    }
}

/* The offset tables of NT tiles (b's offset in the c table; positions
   past an axis's end get b's offset or 0): 2T threads per tile, one entry
   each; then the block synchronizes. */
template <typename F, int NT>
__device__ __forceinline__ void kg_tp_fill_tables(const kg_tperm &L, kg_tp_smem<F> (&S)[NT], const uint32_t (&b)[NT],
                                                  const uint32_t (&c0)[NT], const uint32_t (&j0)[NT],
                                                  const int (&cn)[NT], const int (&jn)[NT])
{
    constexpr int T = kg_tp_shape<F>::T, K = F::arity + 1;
    const int tx = threadIdx.x;
#pragma unroll
    for (int u = 0; u < NT; u++) {
        if (tx / (2 * T) == u) {
            const int a = tx % (2 * T) < T ? KG_TP_C : KG_TP_J, i = tx % (2 * T) - a * T;
            int32_t off[K];
#pragma unroll
            for (int k = 0; k < K; k++)
                off[k] = 0;
            if (a == KG_TP_C)
                kg_tp_offsets<K>(L, KG_TP_B, b[u], off);
            if (i < (a == KG_TP_C ? cn[u] : jn[u]))
                kg_tp_offsets<K>(L, a, (a == KG_TP_C ? c0[u] : j0[u]) + i, off);
#pragma unroll
            for (int k = 0; k < K; k++)
                (a == KG_TP_C ? S[u].t.tc : S[u].t.tj)[k][i] = off[k];
        }
    }
    __syncthreads();
}

/* NT tiles (tile0, tile0 + 1, ...): tables, loads, staging, compute and
   store, each phase for every tile before the next phase, so the loads of
   all NT tiles are in flight together (NT > 1: more bytes in flight per
   block at the cost of registers; a tile past the last one does nothing).
   FLAT (c and j one dim each, L.flat): offsets by multiplication, no tables. */
template <typename F, int MAP, bool FLAT, int NT, bool FULL = false>
__device__ __forceinline__ void kg_tp_tile(const kg_ew_ptrs &p, const kg_tperm &L, kg_tp_smem<F> (&S)[NT],
                                           uint32_t tile0)
{
    typedef kg_tp_shape<F> PS;
    constexpr int T = PS::T, E = PS::E, R = PS::R, K = F::arity + 1;
    static_assert(2 * T * NT <= KG_EW_THREADS, "one thread per table entry");
    typedef typename F::in0_t A;
    typedef typename F::in1_t B;
    typedef typename F::in2_t C;
    typedef typename F::out_t O;
    const bool t0 = L.staged & 2u, t1 = L.staged & 4u, t2 = L.staged & 8u;
    const int tx = threadIdx.x, lo = tx % T; /* lo: the thread's fixed position (j if staged, c if direct) */
    uint32_t c0[NT], j0[NT], b[NT];
    int cn[NT], jn[NT];
    int32_t boff[NT][K];
    kg_tp_coords<FLAT, T, NT, K>(L, tile0, b, c0, j0, cn, jn, boff);
    if constexpr (FULL) { /* the caller found every tile of the pass whole: constant extents, no predicates */
#pragma unroll
        for (int u = 0; u < NT; u++)
            cn[u] = jn[u] = T;
    }
    /* L.full (elements of at most 2 bytes, mapping 1: issue-bound): a pass
       of whole tiles takes this function's FULL copy, whose loads and stores
       carry no predicates (its coordinates recomputed, a few instructions) */
    if constexpr (!FULL && MAP == 1 && PS::SZ <= 2) {
        bool full = L.full != 0;
#pragma unroll
        for (int u = 0; u < NT; u++)
            full = full && cn[u] == T && jn[u] == T;
        if (full) {
            kg_tp_tile<F, MAP, FLAT, NT, true>(p, L, S, tile0);
            return;
        }
    }
    if constexpr (!FLAT) /* 0. the offset tables */
        kg_tp_fill_tables<F, NT>(L, S, b, c0, j0, cn, jn);
    /* 1. every load of every tile */
    A ra[NT][E];
    B rb[NT][E];
    C rc[NT][E];
#pragma unroll
    for (int u = 0; u < NT; u++) {
        {
            int32_t e[E];
            const int32_t tf = kg_tp_operand<FLAT, MAP, T, E, R, K>(L, S[u].t, 1, t0, lo, c0[u], j0[u], boff[u], e);
            kg_tp_load<MAP, A, T, E, R, FULL>((const A *)p.in[0], tf, e, lo < (t0 ? jn[u] : cn[u]), t0 ? cn[u] : jn[u],
                                        ra[u]);
        }
        if constexpr (F::arity > 1) {
            int32_t e[E];
            const int32_t tf = kg_tp_operand<FLAT, MAP, T, E, R, K>(L, S[u].t, 2, t1, lo, c0[u], j0[u], boff[u], e);
            kg_tp_load<MAP, B, T, E, R, FULL>((const B *)p.in[1], tf, e, lo < (t1 ? jn[u] : cn[u]), t1 ? cn[u] : jn[u],
                                        rb[u]);
        }
        if constexpr (F::arity > 2) {
            int32_t e[E];
            const int32_t tf = kg_tp_operand<FLAT, MAP, T, E, R, K>(L, S[u].t, 3, t2, lo, c0[u], j0[u], boff[u], e);
            kg_tp_load<MAP, C, T, E, R, FULL>((const C *)p.in[2], tf, e, lo < (t2 ? jn[u] : cn[u]), t2 ? cn[u] : jn[u],
                                        rc[u]);
        }
    }
    /* 2. stage: s[j][c] */
#pragma unroll
    for (int u = 0; u < NT; u++) {
        if (t0)
            kg_tp_stage<MAP, A, T, E, R>(S[u].s0, lo, ra[u]);
        if constexpr (F::arity > 1)
            if (t1)
                kg_tp_stage<MAP, B, T, E, R>(S[u].s1, lo, rb[u]);
        if constexpr (F::arity > 2)
            if (t2)
                kg_tp_stage<MAP, C, T, E, R>(S[u].s2, lo, rc[u]);
    }
    __syncthreads();
    /* 3. compute and store along c: thread at c = lo, j = v(m) */
#pragma unroll
    for (int u = 0; u < NT; u++) {
        if (FULL || lo < cn[u]) {
            int32_t e[E];
            O *out = (O *)p.out + kg_tp_operand<FLAT, MAP, T, E, R, K>(L, S[u].t, 0, false, lo, c0[u], j0[u], boff[u], e);
#pragma unroll
            for (int m = 0; m < E; m++) {
                const int v = kg_tp_v<MAP, T, E, R>(m);
                B y{};
                C z{};
                if constexpr (F::arity > 1)
                    y = t1 ? S[u].s1[v][lo] : rb[u][m];
                if constexpr (F::arity > 2)
                    z = t2 ? S[u].s2[v][lo] : rc[u][m];
                O o;
                if constexpr (F::bits) /* a copy: the bits as they are */
                    o = t0 ? S[u].s0[v][lo] : ra[u][m];
                else
                    o = F::apply(t0 ? S[u].s0[v][lo] : ra[u][m], y, z);
                if (FULL || v < jn[u])
                    out[e[m]] = o;
            }
        }
    }
    __syncthreads(); /* the next tiles reuse the tables and tiles */
}

/* rect (kg_tperm.h): one tile of rc x rj positions, c and j one dim each,
   the tile's output one run (rc = the output's whole dim 0). Position e of
   the tile (thread x, element m: e = x + 256 m) is, for the loads of staged
   inputs, (c, j) = (e / rj, e % rj): lanes along j, the input's fast dim;
   for direct inputs and the output, (e % rc, e / rc): lanes along c, the
   output's fast dim. Staged values go through shared memory in the
   output's order (kg_tpr_lin), so the store phase reads and writes
   position e of the run. */
template <typename X, int E>
__device__ __forceinline__ void kg_tpr_load(const kg_tperm &L, const X *base, int32_t bo, int32_t sc, int32_t sj,
                                            bool staged, uint32_t cn, uint32_t jn, X (&r)[E])
{
#pragma unroll
    for (int m = 0; m < E; m++) {
        const uint32_t e = threadIdx.x + KG_EW_THREADS * m;
        uint32_t c, j;
        if (staged) {
            c = kgd_div_magic(e, L.magic_rj, L.shift_rj);
            j = e - c * L.rj;
        } else {
            j = kgd_div_magic(e, L.magic_rc, L.shift_rc);
            c = e - j * L.rc;
        }
        r[m] = c < cn && j < jn ? base[bo + (int32_t)c * sc + (int32_t)j * sj] : X{};
    }
}

/* A staged value's slot in the output's order (position (c, j) at
   c + rc j), skewed by one every 64 (4-byte) or 32
   positions so that column writes spread over the banks; within the buffer
   (kg_tp_pitch's padding) for every element size and tile edge. */
template <typename X> __device__ __forceinline__ uint32_t kg_tpr_lin(uint32_t q)
{
    return q + (q >> (sizeof(X) == 4 ? 6 : 5));
}

template <typename X, int E>
__device__ __forceinline__ void kg_tpr_stage(const kg_tperm &L, X *s, uint32_t cn, const X (&r)[E])
{
#pragma unroll
    for (int m = 0; m < E; m++) {
        const uint32_t e = threadIdx.x + KG_EW_THREADS * m;
        const uint32_t c = kgd_div_magic(e, L.magic_rj, L.shift_rj), j = e - c * L.rj;
        if (c < cn)
            s[kg_tpr_lin<X>(c + L.rc * j)] = r[m];
    }
}

/* The op on one position (a copy: the bits as they are). */
template <typename F>
__device__ __forceinline__ typename F::out_t kg_tpr_apply(const typename F::in0_t &x, const typename F::in1_t &y,
                                                          const typename F::in2_t &z)
{
    if constexpr (F::bits)
        return x;
    else
        return F::apply(x, y, z);
}

/* NT tiles (tile0, tile0 + 1, ...; NT > 1: every load of the NT tiles in
   flight before the first store; a tile past the last one does nothing).
   Only <op>_tperm runs it (NT = 1): the runtime sends rect plans there,
   since in <op>_tperm2 (64 registers) its code spilled 148 bytes a thread
   (bf16 copy, sm_90) and slowed that kernel's other paths. */
template <typename F, int NT>
__device__ __forceinline__ void kg_tpr_tile(const kg_ew_ptrs &p, const kg_tperm &L, kg_tp_smem<F> (&S)[NT],
                                            uint32_t tile0)
{
    typedef kg_tp_shape<F> PS;
    constexpr int E = PS::E, K = F::arity + 1;
    typedef typename F::in0_t A;
    typedef typename F::in1_t B;
    typedef typename F::in2_t C;
    typedef typename F::out_t O;
    const bool t0 = L.staged & 2u, t1 = L.staged & 4u, t2 = L.staged & 8u;
    uint32_t cn[NT], jn[NT];
    int32_t bo[NT][K], sc[K], sj[K];
#pragma unroll
    for (int k = 0; k < K; k++) {
        sc[k] = L.stride[KG_TP_C][k][0];
        sj[k] = L.stride[KG_TP_J][k][0];
    }
    A ra[NT][E];
    B rb[NT][E];
    C rc[NT][E];
#pragma unroll
    for (int u = 0; u < NT; u++) {
        uint32_t ct, jt;
        const uint32_t b = kg_tp_where(L, tile0 + u, ct, jt), c0 = ct * L.rc, j0 = jt * L.rj;
        const bool in = NT == 1 || tile0 + u < L.tiles;
        cn[u] = in ? min(L.rc, L.n[KG_TP_C] - c0) : 0;
        jn[u] = in ? min(L.rj, L.n[KG_TP_J] - j0) : 0;
#pragma unroll
        for (int k = 0; k < K; k++)
            bo[u][k] = 0;
        kg_tp_offsets<K>(L, KG_TP_B, b, bo[u]);
#pragma unroll
        for (int k = 0; k < K; k++)
            bo[u][k] += (int32_t)c0 * sc[k] + (int32_t)j0 * sj[k];
        kg_tpr_load<A, E>(L, (const A *)p.in[0], bo[u][1], sc[1], sj[1], t0, cn[u], jn[u], ra[u]);
        if constexpr (F::arity > 1)
            kg_tpr_load<B, E>(L, (const B *)p.in[1], bo[u][2], sc[2], sj[2], t1, cn[u], jn[u], rb[u]);
        if constexpr (F::arity > 2)
            kg_tpr_load<C, E>(L, (const C *)p.in[2], bo[u][3], sc[3], sj[3], t2, cn[u], jn[u], rc[u]);
    }
#pragma unroll
    for (int u = 0; u < NT; u++) {
        if (t0)
            kg_tpr_stage<A, E>(L, &S[u].s0[0][0], cn[u], ra[u]);
        if constexpr (F::arity > 1)
            if (t1)
                kg_tpr_stage<B, E>(L, &S[u].s1[0][0], cn[u], rb[u]);
        if constexpr (F::arity > 2)
            if (t2)
                kg_tpr_stage<C, E>(L, &S[u].s2[0][0], cn[u], rc[u]);
    }
    __syncthreads();
#pragma unroll
    for (int u = 0; u < NT; u++) {
        const A *s0 = &S[u].s0[0][0];
        const B *s1 = &S[u].s1[0][0];
        const C *s2 = &S[u].s2[0][0];
        O *out = (O *)p.out + bo[u][0];
#pragma unroll
        for (int m = 0; m < E; m++) {
            const uint32_t e = threadIdx.x + KG_EW_THREADS * m;
            if (e < cn[u] * jn[u]) { /* position e of the run; direct inputs were loaded at e */
                const A x = t0 ? s0[kg_tpr_lin<A>(e)] : ra[u][m];
                B y{};
                C z{};
                if constexpr (F::arity > 1)
                    y = t1 ? s1[kg_tpr_lin<B>(e)] : rb[u][m];
                if constexpr (F::arity > 2)
                    z = t2 ? s2[kg_tpr_lin<C>(e)] : rc[u][m];
                out[e] = kg_tpr_apply<F>(x, y, z);
            }
        }
    }
    __syncthreads(); /* the next tiles reuse the buffers */
}

/* The word path (L.words; 2-byte elements in and out; ops of one input in
   <op>_tperm2, of two in <op>_tperm: see the end of this comment): input 0
   staged, its j axis's first dim of unit stride and even size, the
   output's c axis's likewise, every other stride even, the pointers on 4
   bytes (kg_ew_tperm_words_ok). Then element pairs (j, j + 1) of the input
   and (c, c + 1) of the output are 32-bit words: a warp loads 32 words (128
   bytes) along j of rows c and c + 1 (thread: word l, row pairs w, w + 8,
   w + 16, w + 24 of the tile), two byte permutes turn each pair of words
   into the words (c, c + 1) of rows j and j + 1, staged at row j, word
   c / 2 + j / 32 of a 33-word pitch (distinct banks for both stores), and
   a warp stores 32 words along c per row (rows w, w + 8, ...). Per thread
   and tile: 8 loads, 8 permutes, 8 + 8 shared accesses, 8 stores for 16
   elements; no table read per element (the thread's j entry once, the row
   entries broadcast). FULL: every tile of the pass is whole, no predicates;
   cn and jn are even (the first dims even), so a word is in or out whole.
   Ops of two inputs (in <op>_tperm, one tile a pass): input 1 is direct,
   its c axis's first dim of unit stride and every other stride even, so it
   is loaded as words along c at the positions of the output's words (in
   the load phase, with input 0's loads) and the op applies to each half. */
template <typename F> __device__ __forceinline__ uint32_t kg_tpw_apply(uint32_t x, uint32_t y)
{
    if constexpr (F::bits) {
        return x;
    } else {
        typedef typename F::in0_t A;
        typedef typename F::in1_t B;
        typedef typename F::out_t O;
        static_assert(sizeof(A) == 2 && sizeof(O) == 2 && (F::arity == 1 || sizeof(B) == 2), "tpw: 2-byte elements");
        uint16_t r[2];
#pragma unroll
        for (int g = 0; g < 2; g++) {
            const uint16_t hx = (uint16_t)(x >> (16 * g)), hy = (uint16_t)(y >> (16 * g));
            A a;
            memcpy(&a, &hx, 2);
            O o;
            if constexpr (F::arity > 1) {
                B b;
                memcpy(&b, &hy, 2);
                o = F::apply(a, b, kg_unused{});
            } else {
                o = F::apply(a, kg_unused{}, kg_unused{});
            }
            memcpy(&r[g], &o, 2);
        }
        return (uint32_t)r[0] | ((uint32_t)r[1] << 16);
    }
}

/* The offset of word l along c at row ji (operand k, unit stride along c's
   first dim): from the tables, or (FLAT) by multiplication. */
template <bool FLAT, typename F>
__device__ __forceinline__ int32_t kg_tpw_cword(const kg_tperm &L, const kg_tp_smem<F> &S, int k, uint32_t c0,
                                                uint32_t j0, int32_t boff, int l, int ji)
{
    if constexpr (FLAT)
        return boff + (int32_t)(c0 + 2 * l) + (int32_t)(j0 + ji) * L.stride[KG_TP_J][k][0];
    else
        return S.t.tc[k][2 * l] + S.t.tj[k][ji];
}

template <typename F, bool FLAT, bool FULL, int NT>
__device__ __forceinline__ void kg_tpw_move(const kg_ew_ptrs &p, const kg_tperm &L, kg_tp_smem<F> (&S)[NT],
                                            const uint32_t (&c0)[NT], const uint32_t (&j0)[NT], const int (&cn)[NT],
                                            const int (&jn)[NT], const int32_t (&boff)[NT][F::arity + 1])
{
    constexpr int T = 64, WP = T / 2 + 1; /* words per staged row */
    const int w = threadIdx.x / 32, l = threadIdx.x % 32;
    typedef typename F::in0_t A;
    typedef typename F::out_t O;
    const A *in = (const A *)p.in[0];
    O *out = (O *)p.out;
    /* 1. loads: rows c = 2 (w + 8 i) and c + 1, word l along j */
    uint32_t r[NT][8];
#pragma unroll
    for (int u = 0; u < NT; u++) {
        const bool jin = FULL || 2 * l < jn[u];
        int32_t tj;
        if constexpr (FLAT)
            tj = boff[u][1] + (int32_t)(j0[u] + 2 * l); /* j's input stride is 1 */
        else
            tj = S[u].t.tj[1][2 * l];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int ci = 2 * (w + 8 * i);
#pragma unroll
            for (int h = 0; h < 2; h++) {
                int32_t tc;
                if constexpr (FLAT)
                    tc = (int32_t)(c0[u] + ci + h) * L.stride[KG_TP_C][1][0];
                else
                    tc = S[u].t.tc[1][ci + h];
                r[u][2 * i + h] = (FULL || (jin && ci < cn[u])) ? *(const uint32_t *)(in + tj + tc) : 0u;
            }
        }
    }
    /* input 1 (two inputs): words along c at the output's positions */
    uint32_t rb[NT][8];
#pragma unroll
    for (int u = 0; u < NT; u++) {
#pragma unroll
        for (int i = 0; i < 8; i++) {
            rb[u][i] = 0u;
            if constexpr (F::arity > 1) {
                const int ji = w + 8 * i;
                if (FULL || (2 * l < cn[u] && ji < jn[u]))
                    rb[u][i] = *(const uint32_t *)((const typename F::in1_t *)p.in[1] +
                                                   kg_tpw_cword<FLAT, F>(L, S[u], 2, c0[u], j0[u], boff[u][2], l, ji));
            }
        }
    }
    /* 2. stage: rows j = 2 l and 2 l + 1 of word column c / 2 (+ j / 32) */
#pragma unroll
    for (int u = 0; u < NT; u++) {
        uint32_t *s = (uint32_t *)&S[u].s0[0][0];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int col = w + 8 * i + (l >> 4);
            s[(2 * l) * WP + col] = __byte_perm(r[u][2 * i], r[u][2 * i + 1], 0x5410);
            s[(2 * l + 1) * WP + col] = __byte_perm(r[u][2 * i], r[u][2 * i + 1], 0x7632);
        }
    }
    __syncthreads();
    /* 3. stores: row j = w + 8 i, word l along c */
#pragma unroll
    for (int u = 0; u < NT; u++) {
        const uint32_t *s = (const uint32_t *)&S[u].s0[0][0];
        const bool cin = FULL || 2 * l < cn[u];
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int ji = w + 8 * i;
            if (FULL || (cin && ji < jn[u]))
                *(uint32_t *)(out + kg_tpw_cword<FLAT, F>(L, S[u], 0, c0[u], j0[u], boff[u][0], l, ji)) =
                    kg_tpw_apply<F>(s[ji * WP + l + (ji >> 5)], rb[u][i]);
        }
    }
    __syncthreads(); /* the next tiles reuse the tables and tiles */
}

template <typename F, bool FLAT, int NT>
__device__ __forceinline__ void kg_tpw_tile(const kg_ew_ptrs &p, const kg_tperm &L, kg_tp_smem<F> (&S)[NT],
                                            uint32_t tile0)
{
    constexpr int T = 64, K = F::arity + 1;
    static_assert(kg_tp_shape<F>::T == T && kg_tp_pitch<typename F::in0_t, T>::P * 2 == 4 * (T / 2 + 1),
                  "tpw: 64-element tiles staged in 33-word rows");
    uint32_t c0[NT], j0[NT], b[NT];
    int cn[NT], jn[NT];
    int32_t boff[NT][K];
    kg_tp_coords<FLAT, T, NT, K>(L, tile0, b, c0, j0, cn, jn, boff);
    bool full = true;
#pragma unroll
    for (int u = 0; u < NT; u++)
        full = full && cn[u] == T && jn[u] == T;
    if constexpr (!FLAT)
        kg_tp_fill_tables<F, NT>(L, S, b, c0, j0, cn, jn);
    if (full)
        kg_tpw_move<F, FLAT, true, NT>(p, L, S, c0, j0, cn, jn, boff);
    else
        kg_tpw_move<F, FLAT, false, NT>(p, L, S, c0, j0, cn, jn, boff);
}

/* Block b serves tiles NT b .. NT b + NT - 1, then NT (b + grid) ..., so
   the launch takes ceil(tiles / NT) blocks (at most); L.map picks the
   element mapping (kg_tp_v, kg_tp_stage; a tuning choice, all exact), L.flat
   the table-free addressing where c and j are one dim each. NT > 1 (the
   kernels <op>_tperm2: ops of one input, elements of at most 2 bytes) runs
   mapping 1 whatever L.map says: one mapping keeps its compile time and
   code size at tperm's. */
template <typename F, int N, int NT> __device__ __forceinline__ void kg_ew_tperm_nt(const kg_ew_ptrs &p, const kg_tperm &L)
{
    __shared__ kg_tp_smem<F> S[NT];
    /* the word path: ops of one input in <op>_tperm2, of two in <op>_tperm */
    constexpr bool W = sizeof(typename F::in0_t) == 2 && sizeof(typename F::out_t) == 2 &&
                       ((NT > 1 && F::arity == 1) || (NT == 1 && F::arity == 2 && sizeof(typename F::in1_t) == 2));
    for (uint32_t tile = blockIdx.x * NT; tile < L.tiles; tile += gridDim.x * NT) {
        if (NT == 1 && L.rect) {
            if constexpr (NT == 1) /* rect: one tile a pass (its code in tperm2 spilled) */
                kg_tpr_tile<F, 1>(p, L, S, tile);
        } else if (W && L.words) {
            if constexpr (W) {
                if (L.flat)
                    kg_tpw_tile<F, true, NT>(p, L, S, tile);
                else
                    kg_tpw_tile<F, false, NT>(p, L, S, tile);
            }
        } else if (L.flat) {
            if (NT == 1 && L.map == 2)
                kg_tp_tile<F, 2, true, NT>(p, L, S, tile);
            else if (NT > 1 || L.map == 1)
                kg_tp_tile<F, 1, true, NT>(p, L, S, tile);
            else
                kg_tp_tile<F, 0, true, NT>(p, L, S, tile);
        } else {
            if (NT == 1 && L.map == 2)
                kg_tp_tile<F, 2, false, NT>(p, L, S, tile);
            else if (NT > 1 || L.map == 1)
                kg_tp_tile<F, 1, false, NT>(p, L, S, tile);
            else
                kg_tp_tile<F, 0, false, NT>(p, L, S, tile);
        }
    }
}

template <typename F, int N> __device__ __forceinline__ void kg_ew_tperm(const kg_ew_ptrs &p, const kg_tperm &L)
{
    kg_ew_tperm_nt<F, N, 1>(p, L);
}

/* Element i of a 16-byte chunk held as four 32-bit words (little endian):
   get / put its ES bytes (i constant after unrolling). */
template <int ES> __device__ __forceinline__ void kg_rv_put(uint4 &v, int i, uint64_t x)
{
    uint32_t *w[4] = {&v.x, &v.y, &v.z, &v.w};
    if constexpr (ES == 8) {
        *w[2 * i] = (uint32_t)x;
        *w[2 * i + 1] = (uint32_t)(x >> 32);
    } else if constexpr (ES == 4) {
        *w[i] = (uint32_t)x;
    } else {
        const int b = (i * ES) % 4 * 8;
        const uint32_t m = ((1u << (8 * ES)) - 1u) << b;
        *w[i * ES / 4] = (*w[i * ES / 4] & ~m) | (((uint32_t)x << b) & m);
    }
}

template <int ES> __device__ __forceinline__ uint64_t kg_rv_get(const uint4 &v, int i)
{
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
    if constexpr (ES == 8)
        return (uint64_t)w[2 * i] | ((uint64_t)w[2 * i + 1] << 32);
    else if constexpr (ES == 4)
        return w[i];
    else
        return (w[i * ES / 4] >> ((i * ES) % 4 * 8)) & ((1u << (8 * ES)) - 1u);
}

template <int ES> __device__ __forceinline__ uint64_t kg_rv_load(const char *x)
{
    if constexpr (ES == 8)
        return *(const uint64_t *)x;
    else if constexpr (ES == 4)
        return *(const uint32_t *)x;
    else if constexpr (ES == 2)
        return *(const uint16_t *)x;
    else
        return *(const uint8_t *)x;
}

template <int ES> __device__ __forceinline__ void kg_rv_store(char *x, uint64_t v)
{
    if constexpr (ES == 8)
        *(uint64_t *)x = v;
    else if constexpr (ES == 4)
        *(uint32_t *)x = (uint32_t)v;
    else if constexpr (ES == 2)
        *(uint16_t *)x = (uint16_t)v;
    else
        *(uint8_t *)x = (uint8_t)v;
}

/* The 16 bytes at byte sh (1..15) of the 32 bytes a, b (little endian):
   a chunk realigned from two aligned loads. */
__device__ __forceinline__ uint4 kg_rv_shift(const uint4 &a, const uint4 &b, uint32_t sh)
{
    const uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
    const uint32_t q = sh >> 2, r = (sh & 3) * 8;
    uint32_t x[5];
#pragma unroll
    for (int j = 0; j < 5; j++)
        x[j] = q == 0 ? w[j] : q == 1 ? w[j + 1] : q == 2 ? w[j + 2] : w[j + 3];
    return make_uint4(__funnelshift_r(x[0], x[1], r), __funnelshift_r(x[1], x[2], r), __funnelshift_r(x[2], x[3], r),
                      __funnelshift_r(x[3], x[4], r));
}

/* rowsv (kg_tperm.h): copies whose dim 0 is contiguous in the output and
   the input. Each thread writes 16-byte aligned chunks of output rows: two
   aligned 16-byte loads of the input row, funnel-shifted by the row's
   relative misalignment (one load where there is none), one 16-byte store.
   A chunk the row covers only in part, or whose loads would leave the input
   row, moves element by element (its elements' loads issued together). U
   chunks' loads are in flight before their stores. A copy moves bits: no
   functor is applied (every type's copy is the identity on its storage). */
template <typename F, int N> __device__ __forceinline__ void kg_ew_rowsv(const kg_ew_ptrs &p, const kg_rowsv &R)
{
    typedef typename F::out_t O;
    static_assert(F::arity == 1 && sizeof(typename F::in0_t) == sizeof(O), "rowsv: copies");
    constexpr int ES = sizeof(O), U = 4, M = 16 / ES;
    const uint32_t n0 = R.L.size[0], nb = n0 * ES; /* row bytes (< 2^31) */
    const uint32_t step = gridDim.x * blockDim.x;
    for (uint32_t t0 = blockIdx.x * blockDim.x + threadIdx.x; t0 < R.chunks; t0 += U * step) {
        uint4 v0[U], v1[U];
        char *dst[U];
        uint32_t sh[U], mask[U]; /* mask: the elements of a partial chunk (0: a whole one) */
#pragma unroll
        for (int u = 0; u < U; u++) {
            dst[u] = nullptr;
            sh[u] = 0;
            mask[u] = 0;
            const uint32_t t = t0 + u * step;
            if (t >= R.chunks)
                continue;
            const uint32_t row = kgd_div_magic(t, R.magic, R.shift), k = t - row * R.cpr;
            int32_t off[KG_EW_MAX_OPERANDS];
            kg_offsets32(R.L, row * n0, off);
            const char *ib = (const char *)p.in[0] + (int64_t)off[1] * ES;
            char *ob = (char *)p.out + (int64_t)off[0] * ES;
            /* the chunk [o0, o0 + 16) and its part [lo, hi) inside the row */
            char *o0 = (char *)(((uintptr_t)ob & ~(uintptr_t)15) + 16u * k);
            char *lo = o0 > ob ? o0 : ob, *hi = o0 + 16 < ob + nb ? o0 + 16 : ob + nb;
            if (lo >= hi)
                continue;
            const intptr_t d = ib - ob; /* output byte x holds input byte x + d */
            const uint32_t s = (uint32_t)((uintptr_t)(o0 + d) & 15);
            const char *a = o0 + d - s;
            dst[u] = o0;
            if (lo == o0 && hi == o0 + 16 && a >= ib && a + (s ? 32 : 16) <= ib + nb) {
                v0[u] = *(const uint4 *)a;
                if (s)
                    v1[u] = *(const uint4 *)(a + 16);
                sh[u] = s;
            } else {
                v0[u] = make_uint4(0, 0, 0, 0);
#pragma unroll
                for (int i = 0; i < M; i++) {
                    char *x = o0 + i * ES;
                    if (x >= lo && x < hi) {
                        mask[u] |= 1u << i;
                        kg_rv_put<ES>(v0[u], i, kg_rv_load<ES>(x + d));
                    }
                }
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (!dst[u])
                continue;
            if (mask[u]) {
#pragma unroll
                for (int i = 0; i < M; i++)
                    if (mask[u] >> i & 1u)
                        kg_rv_store<ES>(dst[u] + i * ES, kg_rv_get<ES>(v0[u], i));
                continue;
            }
            *(uint4 *)dst[u] = sh[u] ? kg_rv_shift(v0[u], v1[u], sh[u]) : v0[u];
        }
    }
}

/* The 128 bits of v rotated left by bits (0..127): element i of a chunk
   moves to i + bits / (8 es). */
__device__ __forceinline__ uint4 kg_tq_rotl(const uint4 &v, uint32_t bits)
{
    const uint32_t t[4] = {v.x, v.y, v.z, v.w}, W = bits >> 5, b = bits & 31u;
    uint32_t y[4], x[4];
#pragma unroll
    for (int i = 0; i < 4; i++)
        y[i] = W & 2u ? t[(i + 2) & 3] : t[i];
#pragma unroll
    for (int i = 0; i < 4; i++)
        x[i] = W & 1u ? y[(i + 3) & 3] : y[i];
    return make_uint4(__funnelshift_l(x[3], x[0], b), __funnelshift_l(x[0], x[1], b), __funnelshift_l(x[1], x[2], b),
                      __funnelshift_l(x[2], x[3], b));
}

/* One aligned 16-byte output chunk of a run whose position q is c = q % nc,
   j = q / nc, from a shared-memory buffer holding (c, j) at s + c * rp + j
   * ES. q0: the chunk's first position (negative, or past n - M: a partial
   chunk, WHOLE false). Positions step c by one (rp bytes), at c = nc to the
   next j. ROT (whole chunks, nc >= M): lane l reads its elements starting
   at element (l / (32 / M)) % M of the chunk, then rotates the chunk into
   place, so that lanes whose chunks start 32 / M * 8 rows apart (the same
   bank under a row pitch of an odd number of words) read distinct banks.
   PLANES (tplanem): the run and the buffer hold planes of nc x nj positions
   one after the other (rp = nj * ES): position q is plane J / nj, j = J %
   nj (J = q / nc; division by nj by magic_nj, shift_nj), at s + plane * nc
   * rp + c * rp + j * ES; at j = nj the next position is the next plane's
   j = 0. */
template <int ES, bool WHOLE, bool ROT, bool PLANES = false>
__device__ __forceinline__ uint4 kg_tq_gather(const unsigned char *s, uint32_t rp, uint32_t nc, uint32_t magic_nc,
                                              uint32_t shift_nc, int32_t q0, uint32_t n, uint32_t nj = 0,
                                              uint32_t magic_nj = 0, uint32_t shift_nj = 0)
{
    constexpr int M = 16 / ES;
    const uint32_t qs = q0 < 0 ? 0u : (uint32_t)q0;
    uint32_t j = kgd_div_magic(qs, magic_nc, shift_nc), c = qs - j * nc, pb = 0;
    if constexpr (PLANES) {
        const uint32_t pl = kgd_div_magic(j, magic_nj, shift_nj);
        j -= pl * nj;
        pb = pl * nc * rp; /* the plane's first byte in the buffer */
    }
    uint32_t off = pb + c * rp + j * ES;
    uint4 w = make_uint4(0, 0, 0, 0);
    if constexpr (ROT) {
        const uint32_t rot = (threadIdx.x / (32 / M)) % M;
        /* past c = nc: the next j, or (PLANES, j = nj - 1) the next plane's j = 0 */
        const uint32_t wrap = PLANES && j + 1 == nj ? j * ES : nc * rp - ES;
#pragma unroll
        for (int m = 0; m < M; m++) {
            const uint32_t i = (m + rot) % M;
            const uint32_t o = off + i * rp - (c + i >= nc ? wrap : 0u);
            kg_rv_put<ES>(w, m, kg_rv_load<ES>((const char *)s + o));
        }
        return kg_tq_rotl(w, rot * ES * 8);
    } else {
#pragma unroll
        for (int i = 0; i < M; i++) {
            if (WHOLE || (q0 + i >= 0 && (uint32_t)(q0 + i) < n)) {
                kg_rv_put<ES>(w, i, kg_rv_load<ES>((const char *)s + off));
                off += rp;
                if (++c == nc) {
                    c = 0;
                    if constexpr (PLANES) {
                        if (++j == nj) {
                            j = 0;
                            pb += nc * rp;
                        }
                        off = pb + j * ES;
                    } else {
                        off = ++j * ES;
                    }
                }
            }
        }
        return w;
    }
}

/* Fills the aligned 16-byte chunks of an output run of n elements at ob
   (ES-byte elements, position q at ob + q * ES) from the buffer s (see
   kg_tq_gather; PLANES: planes of nc x nj positions, nj's division by
   magic_nj, shift_nj): one 16-byte store a whole chunk, element stores at
   the run's ends; U chunks a thread in flight. */
template <int ES, bool PLANES = false>
__device__ __forceinline__ void kg_tq_fill(char *ob, uint32_t n, const unsigned char *s, uint32_t rp, uint32_t nc,
                                           uint32_t magic_nc, uint32_t shift_nc, bool rot, uint32_t nj = 0,
                                           uint32_t magic_nj = 0, uint32_t shift_nj = 0)
{
    constexpr int M = 16 / ES, U = 4;
    const uint32_t so = (uint32_t)((uintptr_t)ob & 15u), co = (so + n * ES + 15u) / 16u; /* the run's chunks */
    char *oa = ob - so;
    rot = rot && nc >= (uint32_t)M;
    for (uint32_t k0 = threadIdx.x; k0 < co; k0 += U * KG_EW_THREADS) {
        uint4 w[U];
        int32_t q0[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint32_t k = k0 + u * KG_EW_THREADS;
            q0[u] = ((int32_t)(16u * k) - (int32_t)so) / ES; /* the chunk's first position in the run */
            if (k < co)
                w[u] = !(q0[u] >= 0 && (uint32_t)q0[u] + M <= n)
                           ? kg_tq_gather<ES, false, false, PLANES>(s, rp, nc, magic_nc, shift_nc, q0[u], n, nj,
                                                                    magic_nj, shift_nj)
                       : rot ? kg_tq_gather<ES, true, true, PLANES>(s, rp, nc, magic_nc, shift_nc, q0[u], n, nj,
                                                                    magic_nj, shift_nj)
                             : kg_tq_gather<ES, true, false, PLANES>(s, rp, nc, magic_nc, shift_nc, q0[u], n, nj,
                                                                     magic_nj, shift_nj);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint32_t k = k0 + u * KG_EW_THREADS;
            if (k >= co)
                continue;
            if (q0[u] >= 0 && (uint32_t)q0[u] + M <= n) {
                *(uint4 *)(oa + 16u * k) = w[u];
            } else {
#pragma unroll
                for (int i = 0; i < M; i++)
                    if (q0[u] + i >= 0 && (uint32_t)(q0[u] + i) < n)
                        kg_rv_store<ES>(oa + 16u * k + i * ES, kg_rv_get<ES>(w[u], i));
            }
        }
    }
}

/* Loads the run of nb bytes at ib (ES-byte elements) into the buffer s as
   the aligned 16-byte chunks that cover it (a chunk the run covers only in
   part: its elements one by one), stored as they are: byte x of the run at
   s + si + x (si: the run's offset in its first chunk); U chunks a thread
   in flight. tplanem's load; tplanev's loop is the same, written out in
   it (so written, its code is as measured). */
template <int ES>
__device__ __forceinline__ void kg_tq_load(const char *ib, uint32_t nb, unsigned char *s)
{
    constexpr int M = 16 / ES, U = 4;
    const uint32_t si = (uint32_t)((uintptr_t)ib & 15u);
    const char *ia = ib - si;
    const uint32_t ci = (si + nb + 15u) / 16u; /* chunks of the input run */
    for (uint32_t k0 = threadIdx.x; k0 < ci; k0 += U * KG_EW_THREADS) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint32_t k = k0 + u * KG_EW_THREADS;
            const char *a = ia + 16u * k;
            if (k < ci && a >= ib && a + 16 <= ib + nb) {
                v[u] = *(const uint4 *)a;
            } else {
                v[u] = make_uint4(0, 0, 0, 0);
#pragma unroll
                for (int i = 0; i < M; i++) {
                    const char *x = a + i * ES;
                    if (k < ci && x >= ib && x < ib + nb)
                        kg_rv_put<ES>(v[u], i, kg_rv_load<ES>(x));
                }
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint32_t k = k0 + u * KG_EW_THREADS;
            if (k < ci)
                *(uint4 *)(s + 16u * k) = v[u];
        }
    }
}

/* tplanev (kg_tperm.h): copies of planes contiguous in both operands and
   transposed, by 16-byte chunks. A block takes planes b = blockIdx.x, +
   gridDim.x, ...: the plane's input run is loaded as the aligned 16-byte
   chunks that cover it (a chunk the run covers only in part: its elements
   one by one) and stored as they are, so element e (input order, e = c *
   nj + j) sits at byte si + e * ES of the buffer (si: the run's offset in
   its first chunk); after a barrier the output's run is filled from it
   (kg_tq_fill). The buffer is the launch's dynamic shared memory (the
   plane + 32 bytes). A copy moves bits. */
template <typename F, int N> __device__ __forceinline__ void kg_ew_tplanev(const kg_ew_ptrs &p, const kg_tplane &Q)
{
    typedef typename F::out_t X;
    static_assert(F::arity == 1 && sizeof(typename F::in0_t) == sizeof(X), "tplanev: copies");
    constexpr int ES = sizeof(X), M = 16 / ES, U = 4;
    extern __shared__ __align__(16) unsigned char kg_tq_smem[];
    const uint32_t n = Q.nc * Q.nj, nb = n * ES;
    for (uint32_t b = blockIdx.x; b < Q.planes; b += gridDim.x) {
        int32_t off[KG_EW_MAX_OPERANDS];
        kg_offsets32(Q.B, b, off);
        const char *ib = (const char *)p.in[0] + (int64_t)off[1] * ES;
        char *ob = (char *)p.out + (int64_t)off[0] * ES;
        const uint32_t si = (uint32_t)((uintptr_t)ib & 15u);
        const char *ia = ib - si;
        const uint32_t ci = (si + nb + 15u) / 16u; /* chunks of the input run */
        for (uint32_t k0 = threadIdx.x; k0 < ci; k0 += U * KG_EW_THREADS) {
            uint4 v[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const uint32_t k = k0 + u * KG_EW_THREADS;
                const char *a = ia + 16u * k;
                if (k < ci && a >= ib && a + 16 <= ib + nb) {
                    v[u] = *(const uint4 *)a;
                } else {
                    v[u] = make_uint4(0, 0, 0, 0);
#pragma unroll
                    for (int i = 0; i < M; i++) {
                        const char *x = a + i * ES;
                        if (k < ci && x >= ib && x < ib + nb)
                            kg_rv_put<ES>(v[u], i, kg_rv_load<ES>(x));
                    }
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const uint32_t k = k0 + u * KG_EW_THREADS;
                if (k < ci)
                    *(uint4 *)(kg_tq_smem + 16u * k) = v[u];
            }
        }
        __syncthreads();
        kg_tq_fill<ES>(ob, n, kg_tq_smem + si, Q.nj * ES, Q.nc, Q.magic_nc, Q.shift_nc, Q.rot != 0);
        __syncthreads(); /* the next plane reuses the buffer */
    }
}

/* tplanem (kg_tperm.h kg_tplanem): tplanev's copies where several planes
   make one block's run (planes of fewer than KG_EW_TUNE_TPLANE_MIN_BYTES:
   a plane a block would leave most lanes idle, its run a few chunks). A
   block takes groups g = blockIdx.x, + gridDim.x, ...: the cnt planes of
   group g are one run in both operands, loaded whole (kg_tq_load), then
   the output's run filled from the buffer plane by plane (kg_tq_fill with
   PLANES). The buffer is the launch's dynamic shared memory (ppb planes +
   32 bytes). A copy moves bits. */
template <typename F, int N> __device__ __forceinline__ void kg_ew_tplanem(const kg_ew_ptrs &p, const kg_tplanem &Q)
{
    typedef typename F::out_t X;
    static_assert(F::arity == 1 && sizeof(typename F::in0_t) == sizeof(X), "tplanem: copies");
    constexpr int ES = sizeof(X);
    extern __shared__ __align__(16) unsigned char kg_tq_smem[];
    const uint32_t n = Q.q.nc * Q.q.nj;
    for (uint32_t g = blockIdx.x; g < Q.groups; g += gridDim.x) {
        const uint32_t r = kgd_div_magic(g, Q.magic_gpr, Q.shift_gpr), first = (g - r * Q.gpr) * Q.ppb;
        const uint32_t cnt = Q.s0 - first < Q.ppb ? Q.s0 - first : Q.ppb, nr = cnt * n;
        int32_t off[KG_EW_MAX_OPERANDS];
        kg_offsets32(Q.q.B, r * Q.s0 + first, off);
        const char *ib = (const char *)p.in[0] + (int64_t)off[1] * ES;
        char *ob = (char *)p.out + (int64_t)off[0] * ES;
        const uint32_t si = (uint32_t)((uintptr_t)ib & 15u);
        kg_tq_load<ES>(ib, nr * ES, kg_tq_smem);
        __syncthreads();
        kg_tq_fill<ES, true>(ob, nr, kg_tq_smem + si, Q.q.nj * ES, Q.q.nc, Q.q.magic_nc, Q.q.shift_nc, Q.q.rot != 0,
                             Q.q.nj, Q.magic_nj, Q.shift_nj);
        __syncthreads(); /* the next group reuses the buffer */
    }
}

/* tslab (kg_tperm.h): copies by slabs of whole output rows. A block takes
   slabs s = blockIdx.x, + gridDim.x, ...: the slab's nc input rows (jn
   elements each) are loaded realigned into the buffer (row c at byte c *
   pitch, element jj at + jj * ES) by 16-byte chunks, chunk t of the slab at
   row t % nc (lanes at consecutive rows: the pitch's odd word count puts
   their 32-bit stores on distinct banks), each from two aligned 16-byte
   loads funnel-shifted (one where the row is aligned; element by element
   where those would leave the input row or the slab's end cuts the chunk);
   after a barrier the output's run of nc * jn elements is filled from it
   (kg_tq_fill). The buffer is the launch's dynamic shared memory (nc *
   pitch bytes). A copy moves bits. */
template <typename F, int N> __device__ __forceinline__ void kg_ew_tslab(const kg_ew_ptrs &p, const kg_tslab &Q)
{
    typedef typename F::out_t X;
    static_assert(F::arity == 1 && sizeof(typename F::in0_t) == sizeof(X), "tslab: copies");
    constexpr int ES = sizeof(X), M = 16 / ES, U = 4;
    extern __shared__ __align__(16) unsigned char kg_tq_smem[];
    for (uint32_t sl = blockIdx.x; sl < Q.slabs; sl += gridDim.x) {
        const uint32_t b = kgd_div_magic(sl, Q.magic_sj, Q.shift_sj), j0 = (sl - b * Q.sj) * Q.J;
        const uint32_t jn = Q.nj - j0 < Q.J ? Q.nj - j0 : Q.J, cpr = (jn * ES + 15u) / 16u, chunks = Q.nc * cpr;
        int32_t off[KG_EW_MAX_OPERANDS];
        kg_offsets32(Q.B, b, off);
        const char *ib = (const char *)p.in[0] + (int64_t)off[1] * ES;
        char *ob = (char *)p.out + ((int64_t)off[0] + (int64_t)j0 * Q.nc) * ES;
        for (uint32_t t0 = threadIdx.x; t0 < chunks; t0 += U * KG_EW_THREADS) {
            uint4 v[U];
            uint32_t at[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const uint32_t t = t0 + u * KG_EW_THREADS, k = kgd_div_magic(t, Q.magic_nc, Q.shift_nc),
                               r = t - k * Q.nc;
                at[u] = r * Q.pitch + 16u * k;
                if (t >= chunks)
                    continue;
                const char *row = ib + (int64_t)r * Q.sci * ES; /* the input row's element j = 0 */
                const char *src = row + (int64_t)(j0 + k * M) * ES, *end = row + (int64_t)(j0 + jn) * ES,
                           *rend = row + (int64_t)Q.nj * ES;
                const uint32_t sh = (uint32_t)((uintptr_t)src & 15u);
                const char *a = src - sh;
                if (src + 16 <= end && a >= row && a + (sh ? 32 : 16) <= rend) {
                    v[u] = *(const uint4 *)a;
                    if (sh)
                        v[u] = kg_rv_shift(v[u], *(const uint4 *)(a + 16), sh);
                } else {
                    v[u] = make_uint4(0, 0, 0, 0);
#pragma unroll
                    for (int i = 0; i < M; i++)
                        if (src + i * ES < end)
                            kg_rv_put<ES>(v[u], i, kg_rv_load<ES>(src + i * ES));
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                if (t0 + u * KG_EW_THREADS >= chunks)
                    continue;
                uint32_t *d = (uint32_t *)(kg_tq_smem + at[u]);
                d[0] = v[u].x;
                d[1] = v[u].y;
                d[2] = v[u].z;
                d[3] = v[u].w;
            }
        }
        __syncthreads();
        kg_tq_fill<ES>(ob, Q.nc * jn, kg_tq_smem, Q.pitch, Q.nc, Q.magic_nc, Q.shift_nc, Q.rot != 0);
        __syncthreads(); /* the next slab reuses the buffer */
    }
}

/* tchunk (kg_tperm.h): tile (ct, jt, b), c tiles fastest: its c range c0 =
   ct * TC .. + cn - 1 (TC = cq * M), its j range j0 = jt * jn .. + jnn - 1,
   both operands' offsets of b. */
struct kg_tc_where {
    uint32_t c0, cn, j0, jn;
    int32_t off[KG_EW_MAX_OPERANDS];
};

template <int ES> __device__ __forceinline__ kg_tc_where kg_tc_tile(const kg_tchunk &Q, uint32_t tile)
{
    constexpr uint32_t M = 16 / ES;
    kg_tc_where w;
    const uint32_t r = kgd_div_magic(tile, Q.magic_c, Q.shift_c), b = kgd_div_magic(r, Q.magic_j, Q.shift_j);
    w.c0 = (tile - r * Q.tiles_c) * Q.cq * M;
    w.cn = Q.nc - w.c0 < Q.cq * M ? Q.nc - w.c0 : Q.cq * M;
    w.j0 = (r - b * Q.tiles_j) * Q.jn;
    w.jn = Q.nj - w.j0 < Q.jn ? Q.nj - w.j0 : Q.jn;
    kg_offsets32(Q.B, b, w.off);
    return w;
}

/* A tile's input rows, realigned into the stage: row r (c = c0 + r) holds
   its elements j0 .. j0 + jnn - 1 from byte r * KG_TC_PITCH(ES). LR = 4 ES
   lanes a row (KG_TC_JN elements: LR chunks), RW = 32 / LR rows a warp
   instruction, KG_TC_U of those a warp (every row of a tile: cn <= 256 /
   ES). kg_tc_fetch issues the loads: lane k loads the aligned 16-byte
   chunk k of its row's span (the chunks covering the row's elements from
   the one holding j0, which sits at byte s = 4 q + b of it; the last lane
   also chunk LR); kg_tc_put, once they have arrived, takes the next chunk's
   first word from the next lane, shifts its four words by b bytes (funnel
   shifts) and stores them at the row's words 4 k - q .. 4 k + 3 - q (those
   from 0 on; the last lane also the words of chunk LR that the row
   reaches). Where the aligned loads would leave the input's extent the
   words come element by element. */
#define KG_TC_U 4
template <int ES> struct kg_tc_rows {
    static constexpr int LR = 4 * ES, RW = 32 / LR;
    uint4 c[KG_TC_U], e[KG_TC_U];
};

/* The input address of row r's element j0 (r inside the tile, else row 0's). */
template <int ES>
__device__ __forceinline__ const char *kg_tc_src(const kg_tchunk &Q, const char *ib, const kg_tc_where &w, uint32_t r)
{
    return ib + ((int64_t)w.off[1] + (int64_t)(w.c0 + (r < w.cn ? r : 0u)) * Q.sci + w.j0) * ES;
}

template <int ES>
__device__ __forceinline__ void kg_tc_fetch(const kg_tchunk &Q, const char *ib, const kg_tc_where &w, kg_tc_rows<ES> &R)
{
    constexpr int LR = kg_tc_rows<ES>::LR, RW = kg_tc_rows<ES>::RW;
    const char *iend = ib + (int64_t)Q.in_n * ES;
    const int lane = threadIdx.x & 31, k = lane % LR, warp = threadIdx.x >> 5;
    const uint32_t span = w.jn * ES;
#pragma unroll
    for (int x = 0; x < KG_TC_U; x++) {
        const uint32_t r = (uint32_t)(warp + x * (KG_EW_THREADS / 32)) * RW + lane / LR;
        const char *src = kg_tc_src<ES>(Q, ib, w, r);
        const uint32_t s = (uint32_t)(uintptr_t)src & 15u;
        const char *a = src - s + 16 * k;
        const bool row = r < w.cn;
        R.c[x] = R.e[x] = make_uint4(0, 0, 0, 0);
        if (row && 16u * k < s + span && a >= ib && a + 16 <= iend)
            R.c[x] = *(const uint4 *)a;
        if (k == LR - 1 && row && s && 16u * k < s + span && a >= ib && a + 32 <= iend)
            R.e[x] = *(const uint4 *)(a + 16);
    }
}

/* Content word u (bytes 4 u .. 4 u + 3 of the row from its element j0) of
   a row of span bytes at src, element by element (those inside the row). */
template <int ES> __device__ __forceinline__ uint32_t kg_tc_word(const char *src, uint32_t u, uint32_t span)
{
    if constexpr (ES >= 4) {
        return *(const uint32_t *)(src + 4 * u);
    } else {
        uint32_t v = 0;
#pragma unroll
        for (int t = 0; t < 4 / ES; t++)
            if (4 * u + t * ES < span)
                v |= (uint32_t)kg_rv_load<ES>(src + 4 * u + t * ES) << (8 * ES * t);
        return v;
    }
}

template <int ES>
__device__ __forceinline__ void kg_tc_put(const kg_tchunk &Q, const char *ib, unsigned char *st, const kg_tc_where &w,
                                          const kg_tc_rows<ES> &R)
{
    constexpr int LR = kg_tc_rows<ES>::LR, RW = kg_tc_rows<ES>::RW;
    const char *iend = ib + (int64_t)Q.in_n * ES;
    const int lane = threadIdx.x & 31, k = lane % LR, warp = threadIdx.x >> 5;
    const uint32_t span = w.jn * ES;
#pragma unroll
    for (int x = 0; x < KG_TC_U; x++) {
        const uint32_t r = (uint32_t)(warp + x * (KG_EW_THREADS / 32)) * RW + lane / LR;
        const char *src = kg_tc_src<ES>(Q, ib, w, r);
        const uint32_t s = (uint32_t)(uintptr_t)src & 15u, q = s >> 2, b = (s & 3u) * 8u;
        const char *a = src - s + 16 * k;
        const uint32_t n = __shfl_down_sync(0xffffffffu, R.c[x].x, 1);
        if (!(r < w.cn && 16u * k < s + span))
            continue;
        const bool last = k == LR - 1;
        const uint32_t z[8] = {R.c[x].x, R.c[x].y, R.c[x].z, R.c[x].w,
                               last ? R.e[x].x : n,      R.e[x].y, R.e[x].z, R.e[x].w};
        const bool fast = a >= ib && a + (s ? 32 : 16) <= iend;
        uint32_t *d = (uint32_t *)(st + r * KG_TC_PITCH(ES));
#pragma unroll
        for (int i = 0; i < 7; i++) {
            const int u = 4 * k + i - (int)q; /* the content word */
            if ((i < 4 || last) && u >= 0 && 4u * u < span)
                d[u] = fast ? __funnelshift_r(z[i], z[i + 1], b) : kg_tc_word<ES>(src, (uint32_t)u, span);
        }
    }
}

/* One output chunk of a tile: output row jj's aligned 16-byte chunk q
   (elements c0 + e0 .. + M - 1, e0 = q M - h, h the row's offset in its
   chunk in elements), element e from stage row e at byte jj ES; a chunk
   the tile covers whole is one 16-byte store, else its elements inside the
   tile are stored one by one. */
template <int ES>
__device__ __forceinline__ void kg_tc_chunk(const kg_tchunk &Q, char *ob, const unsigned char *st, const kg_tc_where &w,
                                            uint32_t jj, uint32_t q)
{
    constexpr int M = 16 / ES, P = KG_TC_PITCH(ES);
    char *row = ob + ((int64_t)w.off[0] + (int64_t)(w.j0 + jj) * Q.soj + w.c0) * ES;
    const uint32_t so = (uint32_t)(uintptr_t)row & 15u;
    if (16u * q >= so + w.cn * ES)
        return;
    const int e0 = (int)(q * M) - (int)(so / ES);
    const bool whole = e0 >= 0 && e0 + M <= (int)w.cn;
    const unsigned char *sp = st + (e0 * P + (int)(jj * ES));
    char *dst = row - so + 16 * q;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (whole) {
#pragma unroll
        for (int i = 0; i < M; i++)
            kg_rv_put<ES>(v, i, kg_rv_load<ES>((const char *)sp + i * P));
        *(uint4 *)dst = v;
    } else {
#pragma unroll
        for (int i = 0; i < M; i++)
            if (e0 + i >= 0 && e0 + i < (int)w.cn)
                kg_rv_store<ES>(dst + i * ES, kg_rv_load<ES>((const char *)sp + i * P));
    }
}

/* Stores a tile from the stage: 4 output rows a warp instruction, 8
   consecutive chunks each (lane = row * 8 + chunk; chunks 0 .. 7, or 0 ..
   15 in two units where cq > 8), one unit a warp and step; with cq 8 or 16
   the rows' last chunks (q = cq, partial) in a pass of one row a thread. */
template <int ES>
__device__ __forceinline__ void kg_tc_store(const kg_tchunk &Q, char *ob, const unsigned char *st, const kg_tc_where &w)
{
    const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5, hs = Q.cq <= 8 ? 0u : 1u;
    const uint32_t units = ((w.jn + 3) / 4) << hs;
    for (uint32_t u = warp; u < units; u += KG_EW_THREADS / 32) {
        const uint32_t jj = (u >> hs) * 4 + lane / 8, q = (u & hs) * 8 + lane % 8;
        if (jj < w.jn && q <= Q.cq)
            kg_tc_chunk<ES>(Q, ob, st, w, jj, q);
    }
    if (Q.cq == 8 || Q.cq == 16)
        for (uint32_t jj = threadIdx.x; jj < w.jn; jj += KG_EW_THREADS)
            kg_tc_chunk<ES>(Q, ob, st, w, jj, Q.cq);
}

/* tchunk (kg_tperm.h): a block takes tiles tpb * blockIdx.x .. + tpb - 1,
   each fetched and put into the stage, then (after a barrier) stored
   (kg_tc_store). The stage is the launch's dynamic shared memory (Q.stage
   bytes). A copy moves bits. */
template <typename F, int N> __device__ __forceinline__ void kg_ew_tchunk(const kg_ew_ptrs &p, const kg_tchunk &Q)
{
    typedef typename F::out_t X;
    static_assert(F::arity == 1 && sizeof(typename F::in0_t) == sizeof(X), "tchunk: copies");
    constexpr int ES = sizeof(X);
    extern __shared__ __align__(16) unsigned char kg_tq_smem[];
    const char *ib = (const char *)p.in[0];
    char *ob = (char *)p.out;
    const uint32_t first = blockIdx.x * Q.tpb;
    const uint32_t end = Q.tiles - first < Q.tpb ? Q.tiles : first + Q.tpb;
    for (uint32_t tile = first; tile < end; tile++) {
        const kg_tc_where w = kg_tc_tile<ES>(Q, tile);
        {
            kg_tc_rows<ES> R;
            kg_tc_fetch<ES>(Q, ib, w, R);
            kg_tc_put<ES>(Q, ib, kg_tq_smem, w, R);
        }
        __syncthreads();
        kg_tc_store<ES>(Q, ob, kg_tq_smem, w);
        __syncthreads(); /* the next tile reuses the stage */
    }
}

/* Two tiles per pass (ops of one input; see kg_ew_tperm_nt). */
template <typename F, int N> __device__ __forceinline__ void kg_ew_tperm2(const kg_ew_ptrs &p, const kg_tperm &L)
{
    static_assert(F::arity == 1, "tperm2: ops of one input (two tiles of two operands exceed static shared memory)");
    kg_ew_tperm_nt<F, N, 2>(p, L);
}

#endif
