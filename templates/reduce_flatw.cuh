/*
 * reduce_flatw.cuh - FLATW: the FLAT class (reduce.cuh, kg_red_flat_v) with
 * one warp per unit instead of a block, for many short slabs: no block
 * barrier per unit, a fold in the warp's own slice of shared memory. It also
 * takes slabs of a more general shape than FLAT's rows x columns: a short
 * reduced run innermost under the columns, and blocks repeated at a stride
 * by one reduced dim outside them.
 */
#ifndef KG_REDUCE_FLATW_CUH
#define KG_REDUCE_FLATW_CUH

#include "reduce.cuh"

/* flatwr's mode 3 (tuning flatw_ragged_v 1): covering vectors a lane a batch,
   two batches in flight (the next loaded before this one folds): 4 for 4-byte
   elements (80 registers at 3 blocks, no spill), 3 for 2-byte ones (V = 8
   accumulators: 80 registers, 4 bytes of spill on sm_90; at 4 it spills
   about 160 bytes) */
#ifndef KG_RED_FLATWR_PIPE
#define KG_RED_FLATWR_PIPE 4
#endif
#ifndef KG_RED_FLATWR_PIPE2
#define KG_RED_FLATWR_PIPE2 3
#endif

/* Warp w of the grid takes units (outer positions) w, w + warps, ...; unit
   u reads A.walk.size[0] blocks (A.walk.in[0] elements apart) of n =
   A.chunk x P contiguous elements, P = a x K: a = A.run reduced elements
   innermost, K = A.inner columns right outside them, A.chunk such periods
   (a reduced dim); the element at block position q belongs to column
   (q mod P) / a. A single block moves in 16-byte vectors from the aligned
   address at or before its start (h elements before it; ragged end vectors
   element by element), several blocks in whole aligned vectors (the
   planner's condition; Mode 1), or (Mode 2, args.vec 1, tuning
   flatw_ragged) several blocks whose starts are whole periods (P divides V,
   G = 1, every block start a multiple of P elements from the aligned
   A.in) in the W = (n + 2 V - P - 1) / V aligned vectors from the one at or
   before each start (h_r elements before it), the elements outside the
   block dropped and a vector wholly past it not read, a vector that reaches
   past the input's extent (A.tiles elements) read element by element: its
   element e lies at period position e mod P, as with h = 0. Lane t of the NT = 32 / G x G that take part (G =
   A.cw = P / gcd(P, V) <= 32, so that NT x V is a multiple of P) takes
   vectors t, t + NT, ... of the unit, KG_RED_FLAT_UNROLL loads in flight:
   element e of each lies at position (t x V + e - h) mod P of a period, so
   each lane keeps V accumulators and does no index arithmetic per element.
   The lanes' accumulators go to the warp's 32 x V slots of sv, the NT / G
   periods of L = G x V slots fold in a fixed tree (upper half into the
   lower), and column c combines the slots (h + c x a + r) mod P + m x P,
   m outer, r inner, in order. Every combination order is fixed by the
   plan. U: the loads a lane keeps in flight. Modes 2 and 3 (mode 2
   pipelined) are the flatwr kernel's alone (kg_red_flatwr). */
template <class Op, int Mode, int U>
__device__ __forceinline__ void kg_red_flatw_v(const kg_red_args &A, typename Op::acc_t *sv)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    constexpr int V = Op::vec;
    constexpr int WARPS = KG_RED_THREADS / 32;
    typedef kgd_vec<T, V> VT;
    const int K = (int)A.inner, a = (int)A.run, P = a * K, G = A.cw, NT = 32 / G * G, L = G * V;
    constexpr bool Blocks = Mode > 0;
    const int t = threadIdx.x & 31;
    AT *sw = sv + (threadIdx.x >> 5) * (32 * V);
    const int64_t n = A.chunk * P, nb = Blocks ? A.walk.size[0] : 1, SV = A.walk.in[0] / V;
    const int64_t step = (int64_t)gridDim.x * WARPS;
    for (int64_t u = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5); u < A.units; u += step) {
        int64_t io, oo, xo;
        kg_red_outer(A, u, io, oo, xo);
        const T *p = (const T *)A.in + io; /* the unit's first element */
        const int h = Blocks ? 0 : (int)(((uintptr_t)p & 15) / sizeof(T));
        /* each block's whole vectors: [jl, jh) from the aligned address at
           or before its start (several blocks: all of them, h = 0) */
        const int64_t nvec = (h + n + V - 1) / V, jl = h > 0 ? 1 : 0, jh = (h + n) / V;
        const uint32_t W = jh > jl ? (uint32_t)(jh - jl) : 0;
        AT acc[V];
#pragma unroll
        for (int e = 0; e < V; e++)
            acc[e] = Op::identity();
        auto push = [&](const VT &x) {
#pragma unroll
            for (int e = 0; e < V; e++)
                acc[e] = Op::combine(acc[e], Op::map(x.v[e]));
        };
        if constexpr (Mode == 2) {
            /* vector j of the unit (block r = j / W, vector i = j mod W of
               the W that cover it from the aligned element at or before its
               start s_r = io + r S, h_r = s_r mod V elements before it) goes
               to lane j mod NT (G = 1: NT = 32); element e of that vector is
               block position q = i V + e - h_r, taken where 0 <= q < n */
            const int64_t S = A.walk.in[0], ext = A.tiles;
            const uint32_t WR = (uint32_t)((n + 2 * V - P - 1) / V);
            const VT *vin = (const VT *)A.in;
            const uint32_t qs = 32u / WR, rs = 32u % WR;
            uint32_t i = (uint32_t)t % WR, r = (uint32_t)t / WR;
            /* block r's first covering vector (vb) and its h */
            int64_t vb = 0;
            int h = 0;
            auto at_block = [&]() {
                const int64_t s = io + (int64_t)r * S;
                h = (int)(s & (V - 1));
                vb = (s - h) / V;
            };
            at_block();
            for (int64_t left = nb * (int64_t)WR - t; left > 0; left -= U * 32) {
                VT x[U];
                int lh[U]; /* the elements taken: [lh & 255, lh >> 8) */
#pragma unroll
                for (int k = 0; k < U; k++) {
                    lh[k] = 0;
                    if (k * 32 < left) {
                        const int q0 = (int)i * V - h; /* block position of the vector's element 0 */
                        if (q0 < n) {
                            const int lo = q0 < 0 ? -q0 : 0, hi = n - q0 < V ? (int)(n - q0) : V;
                            lh[k] = lo | hi << 8;
                            if ((vb + i + 1) * V <= ext) {
                                x[k] = vin[vb + i];
                            } else { /* past the input's extent: its elements in the block alone */
                                const T *e0 = (const T *)(vin + vb + i);
#pragma unroll
                                for (int e = 0; e < V; e++)
                                    if (e >= lo && e < hi)
                                        x[k].v[e] = e0[e];
                            }
                        }
                        i += rs;
                        const uint32_t r0 = r;
                        r += qs;
                        if (i >= WR) {
                            i -= WR;
                            r++;
                        }
                        if (r != r0)
                            at_block();
                    }
                }
#pragma unroll
                for (int k = 0; k < U; k++)
#pragma unroll
                    for (int e = 0; e < V; e++)
                        if (e >= (lh[k] & 255) && e < (lh[k] >> 8))
                            acc[e] = Op::combine(acc[e], Op::map(x[k].v[e]));
            }
        } else if constexpr (Mode == 3) {
            /* mode 2's vectors, lanes and fold order (the same bits), in a
               software pipeline: the next U covering vectors a lane are
               loaded before this batch folds (2 U in flight), each batch's
               taken elements one bit a element in one 32-bit mask (U V <=
               32), 32-bit block positions and vector indices (the planner's
               condition: the input's extent under 2^31 elements), the
               extent tested in whole vectors */
            static_assert(U * V <= 32, "flatwr mode 3: one 32-bit mask a batch");
            const uint32_t S = (uint32_t)A.walk.in[0], vext = (uint32_t)(A.tiles / V), io32 = (uint32_t)io;
            const int nn = (int)n;
            const uint32_t WR = (uint32_t)((n + 2 * V - P - 1) / V);
            const VT *vin = (const VT *)A.in;
            /* a lane's place: block start sb (elements from A.in; its
               first covering vector sb / V, h = sb mod V) and vector i of
               the block; a step of 32 vectors is qs blocks and rs vectors */
            const uint32_t qs = 32u / WR, rs = 32u % WR, dS = qs * S;
            uint32_t i = (uint32_t)t % WR, sb = io32 + (uint32_t)t / WR * S;
            auto load = [&](VT(&x)[U], uint32_t &mk, int left) {
                mk = 0;
#pragma unroll
                for (int k = 0; k < U; k++)
                    if (k * 32 < left) {
                        const int h = (int)(sb & (V - 1));
                        const int q0 = (int)i * V - h; /* block position of the vector's element 0 */
                        if (q0 < nn) {
                            const int lo = q0 < 0 ? -q0 : 0, hi = nn - q0 < V ? nn - q0 : V;
                            const uint32_t g = sb / V + i;
                            mk |= (((1u << hi) - 1u) & ~((1u << lo) - 1u)) << (k * V);
                            if (g < vext) {
                                x[k] = vin[g];
                            } else { /* past the input's extent: its elements in the block alone */
                                const T *e0 = (const T *)(vin + g);
#pragma unroll
                                for (int e = 0; e < V; e++)
                                    if (e >= lo && e < hi)
                                        x[k].v[e] = e0[e];
                            }
                        }
                        i += rs;
                        sb += dS;
                        if (i >= WR) {
                            i -= WR;
                            sb += S;
                        }
                    }
            };
            auto fold = [&](const VT(&x)[U], uint32_t mk) {
#pragma unroll
                for (int k = 0; k < U; k++)
#pragma unroll
                    for (int e = 0; e < V; e++)
                        if (mk >> (k * V + e) & 1u)
                            acc[e] = Op::combine(acc[e], Op::map(x[k].v[e]));
            };
            VT xa[U], xb[U];
            uint32_t ma, mb;
            int left = (int)(nb * (int64_t)WR) - t;
            load(xa, ma, left);
            left -= U * 32;
            for (;;) {
                if (left <= 0) {
                    fold(xa, ma);
                    break;
                }
                load(xb, mb, left);
                left -= U * 32;
                fold(xa, ma);
                if (left <= 0) {
                    fold(xb, mb);
                    break;
                }
                load(xa, ma, left);
                left -= U * 32;
                fold(xb, mb);
            }
        } else if constexpr (Blocks) {
            /* vector j of the unit (block r = j / W, vector i = j mod W of
               it, h = 0) goes to lane j mod NT; a lane steps NT vectors:
               qs blocks and rs vectors */
            if (t < NT) {
                const VT *vb = (const VT *)p;
                const uint32_t qs = (uint32_t)NT / W, rs = (uint32_t)NT % W;
                uint32_t i = (uint32_t)t % W;
                int64_t r = (uint32_t)t / W;
                for (int64_t left = nb * W - t; left > 0; left -= U * NT) {
                    VT x[U];
#pragma unroll
                    for (int k = 0; k < U; k++)
                        if (k * NT < left) {
                            x[k] = vb[r * SV + i];
                            i += rs;
                            r += qs;
                            if (i >= W) {
                                i -= W;
                                r++;
                            }
                        }
#pragma unroll
                    for (int k = 0; k < U; k++)
                        if (k * NT < left)
                            push(x[k]);
                }
            }
        } else if (t < NT) {
            /* the slab's whole vectors [jl, jh): vector j goes to lane j mod
               NT; then the ragged first and last ones, element by element */
            const int64_t j0 = t < jl ? t + NT : t;
            const VT *q = (const VT *)(p - h) + j0;
            for (int64_t left = jh - j0; left > 0; left -= U * NT, q += U * NT) {
                VT x[U];
#pragma unroll
                for (int k = 0; k < U; k++)
                    if (k * NT < left)
                        x[k] = q[k * NT];
#pragma unroll
                for (int k = 0; k < U; k++)
                    if (k * NT < left)
                        push(x[k]);
            }
            const int64_t ragged[2] = {t == 0 && h > 0 ? 0 : -1,
                                       jh < nvec && jh % NT == t && !(jh == 0 && h > 0) ? jh : -1};
#pragma unroll
            for (int k = 0; k < 2; k++)
                if (ragged[k] >= 0)
#pragma unroll
                    for (int e = 0; e < V; e++) {
                        const int64_t i = ragged[k] * V + e - h;
                        if (i >= 0 && i < n)
                            acc[e] = Op::combine(acc[e], Op::map(p[i]));
                    }
        }
        __syncwarp(); /* the previous unit's readers of sw are done */
        if (t < NT)
#pragma unroll
            for (int e = 0; e < V; e++)
                sw[t * V + e] = acc[e];
        __syncwarp();
        for (int ns = NT / G; ns > 1;) {
            const int half = ns >> 1, up = ns - half;
            for (int i = t; i < half * L; i += 32)
                sw[i] = Op::combine(sw[i], sw[i + up * L]);
            __syncwarp();
            ns = up;
        }
        for (int c = t; c < K; c += 32) {
            kg_racc<Op> r;
            r.v = Op::identity();
            r.i = 0;
            for (int m = 0; m < L; m += P)
                for (int k = 0; k < a; k++)
                    r.v = Op::combine(r.v, sw[m + (h + c * a + k) % P]);
            kg_red_store<Op>(A, oo + c * A.inner_out, xo + c * A.inner_idx, r);
        }
    }
}

/* One butterfly step of kg_red_flatw_kept between lanes l and l ^ m over
   the first 2 H partials (value reductions): the lower lane keeps a[0 .. H),
   the upper lane a[H .. 2 H) moved down to a[0 .. H), each merging its
   partner's copy with the lower lane's partial on the left; H = 0: a plain
   step, both lanes end with the merged a[0]. */
template <class Op, int N, int H> __device__ __forceinline__ void kg_red_kept_step(typename Op::acc_t (&a)[N], int m)
{
    typedef typename Op::acc_t AT;
    const bool upper = (threadIdx.x & m) != 0;
    if constexpr (H == 0) {
        const AT r = kgd_shfl_xor(a[0], m);
        a[0] = upper ? Op::combine(r, a[0]) : Op::combine(a[0], r);
    } else {
#pragma unroll
        for (int k = 0; k < H; k++) {
            const AT lo = a[k], hi = a[k + H];
            const AT r = kgd_shfl_xor(upper ? lo : hi, m);
            a[k] = upper ? Op::combine(r, hi) : Op::combine(lo, r);
        }
    }
}

/* FLATW over packed rows of interleaved outputs (args.tile_rows = KW > 1,
   tuning flatw_kept; value reductions): A.n_out rows, each of nv = A.cw
   16-byte vectors (8, 16 or 32) holding L reduced elements x KW kept
   columns innermost (element q of a row belongs to column q mod KW), every
   row right after the one before. PACKED's loads (reduce.cuh,
   kg_red_rows_packed): a warp's unit is U x 512 contiguous bytes, load j of
   lane l is vector l mod nv of row j x 32 / nv + l / nv, U loads in flight.
   Each lane folds its vector's elements into KW partials (element e into
   partial e mod KW, in order), the U x KW partials of its loads in a[j KW +
   k]; the nv lanes of a row then halve them in a butterfly (a step per bit
   of nv, the highest first) until each holds C / nv consecutive partials
   (C = U KW), merging in plain steps past one: lane l, l' = l mod nv, holds
   partials [l' C / nv, (l' + 1) C / nv), or partial l' / (nv / C). The
   combination order is fixed by the plan. */
template <class Op, int KW, int U> __device__ __forceinline__ void kg_red_flatw_kept(const kg_red_args &A)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    constexpr int V = Op::vec, C = U * KW;
    static_assert(V % KW == 0 && C >= 8 && C <= 32, "kept columns: whole periods in a vector, 8 to 32 partials");
    typedef kgd_vec<T, V> VT;
    const VT *vin = (const VT *)A.in;
    const int nv = A.cw, rpl = 32 / nv, lg = __ffs(nv) - 1; /* lanes per row, rows per load, log2(nv) */
    const int lane = threadIdx.x & 31, p = lane & (nv - 1);
    const int hold = C >> lg; /* partials a lane holds at the end (0: one, held by nv / C lanes) */
    const int64_t nvec = A.n_out * nv;
    const int64_t warp = ((int64_t)blockIdx.x * KG_RED_THREADS + threadIdx.x) >> 5;
    const int64_t nwarps = (int64_t)gridDim.x * (KG_RED_THREADS / 32);
    for (int64_t u = warp; u < A.units; u += nwarps) {
        VT x[U];
        kg_red_packed_load(vin, u, lane, nvec, x); /* PACKED's loads */
        AT a[C];
#pragma unroll
        for (int j = 0; j < U; j++)
#pragma unroll
            for (int k = 0; k < KW; k++) {
                a[j * KW + k] = Op::map(x[j].v[k]);
#pragma unroll
                for (int e = k + KW; e < V; e += KW)
                    a[j * KW + k] = Op::combine(a[j * KW + k], Op::map(x[j].v[e]));
            }
        kg_red_kept_step<Op, C, (C >> 1)>(a, nv >> 1);
        kg_red_kept_step<Op, C, (C >> 2)>(a, nv >> 2);
        kg_red_kept_step<Op, C, (C >> 3)>(a, nv >> 3);
        if (lg > 3)
            kg_red_kept_step<Op, C, (C >> 4)>(a, nv >> 4);
        if (lg > 4)
            kg_red_kept_step<Op, C, (C >> 5)>(a, nv >> 5);
#pragma unroll
        for (int h = 0; h < C / 8; h++) {
            const bool mine = hold > 0 ? h < hold : h == 0 && (p & ((nv / C) - 1)) == 0;
            const int i = hold > 0 ? p * hold + h : p / (nv / C); /* the partial's j KW + k */
            const int64_t row = u * (U * rpl) + (int64_t)(i / KW) * rpl + (lane >> lg);
            if (mine && row < A.n_out) {
                int64_t io, oo, xo;
                kg_red_outer(A, row, io, oo, xo);
                kg_racc<Op> r;
                r.v = a[h];
                r.i = 0;
                kg_red_store<Op>(A, oo + (i % KW) * A.inner_out, xo, r);
            }
        }
    }
}

/* FLATW: the kernel (value reductions of elements of 2 to 8 bytes; other
   ops and dtypes get an empty one); UO > 0 (kernel flatwo): UO loads in
   flight per lane. Packed rows of interleaved outputs (args.tile_rows > 1)
   take the flatw kernel alone (KG_RED_PACK loads in flight): the flatwo
   kernel, every other FLATW plan's by default, stays as it was. */
template <class Op, int UO = 0> __device__ __forceinline__ void kg_red_flatw(const kg_red_args &A)
{
    constexpr int N = Op::indexed || Op::vec > 8 ? 1 : KG_RED_THREADS * Op::vec;
    constexpr int U = UO > 0 ? UO : sizeof(typename Op::in_t) == 2 ? KG_RED_FLAT_UNROLL * 3 / 4 : KG_RED_FLAT_UNROLL;
    __shared__ typename Op::acc_t sv[N];
    if constexpr (N > 1) {
        if constexpr (UO == 0) {
            if (A.tile_rows > 1) { /* packed rows of interleaved outputs (flatw_kept; kernel flatw only) */
                if (A.tile_rows == 2)
                    kg_red_flatw_kept<Op, 2, KG_RED_PACK>(A);
                else if constexpr (Op::vec % 4 == 0)
                    kg_red_flatw_kept<Op, 4, KG_RED_PACK>(A);
                return;
            }
        }
        if (A.walk.size[0] > 1)
            kg_red_flatw_v<Op, 1, U>(A, sv);
        else
            kg_red_flatw_v<Op, 0, U>(A, sv);
    }
}

/* FLATWR (tuning flatw_ragged, args.vec 1): FLATW's blocks whose starts are
   whole periods but not whole vectors (kg_red_flatw_v mode 2), U loads in
   flight per lane; value reductions of 2- and 4-byte elements (the modules
   of other dtypes and the index ops have no such kernel). args.vec 2
   (tuning flatw_ragged_v 1): mode 3, the same vectors and fold order in a
   software pipeline of 2 x KG_RED_FLATWR_PIPE (2-byte: _PIPE2) loads a lane. */
template <class Op, int U> __device__ __forceinline__ void kg_red_flatwr(const kg_red_args &A)
{
    constexpr int N = Op::indexed || Op::vec > 8 ? 1 : KG_RED_THREADS * Op::vec;
    __shared__ typename Op::acc_t sv[N];
    if constexpr (N > 1) {
        if (A.vec == 2)
            kg_red_flatw_v<Op, 3, sizeof(typename Op::in_t) == 2 ? KG_RED_FLATWR_PIPE2 : KG_RED_FLATWR_PIPE>(A, sv);
        else
            kg_red_flatw_v<Op, 2, U>(A, sv);
    }
}

#endif
