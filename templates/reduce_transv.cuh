/*
 * reduce_transv.cuh - TRANSV (kg_reduce_params.h, tunings trans_vec and
 * trans_vec_f16; the kernel transv, modules red_bf16_transv and
 * red_f16_transv, value ops only; the code is for any 2-byte element):
 * TRANS plans (reduce_trans.cuh: outputs scattered in the input's
 * order) with the input-contiguous side read in aligned 16-byte vectors.
 *
 * The same split of the kept dims as TRANS: `ki` (A.rdims, input offset the
 * index, A.inner of them), `ko` (A.tile_rows of them, input stride
 * A.inner_idx, values stride A.inner_out), outer positions (A.outer); every
 * output reduces the walk A.walk (A.red <= KG_RED_TRANSV_POS positions,
 * whose offsets the block keeps in shared memory). A unit is a tile of TKI
 * = KG_RED_TRANSV_VECS x 8 ki x TKO = KG_RED_TRANSV_ROWS ko outputs of one
 * outer position (A.tiles ki tiles fastest, then ko tiles, then outer
 * positions). Warp w takes ko rows w + m NW of the tile; a row's TKI
 * contiguous elements are covered by at most 32 aligned 16-byte vectors
 * (lane l: vector l, from the aligned address at or below the row's first
 * element), loaded as four 32-bit words, two rows x KG_RED_TRANSV_UNROLL
 * walk positions in flight a lane (TRANS: one 2-byte element a load, a
 * warp 64 bytes). Elements outside the row's TKI are loaded and dropped;
 * a vector reaching outside the input's extent [in + A.chunk, in + A.run]
 * is loaded element by element (within it only). The rows' vectors are
 * aligned at the walk's first position only: a later position's offset
 * (poff) need not be a multiple of 8 elements (s35r1: bench t2
 * [17,1973,500,8], walk stride 16,770,500 = 4 mod 8, misaligned address),
 * so a position's vectors load at the width their address allows (the
 * same for every lane and row: the offset's): 16, 8 or 4 bytes, or at 2
 * bytes off 4 element by element (odd walk strides). Each element's
 * accumulator takes the walk positions in increasing order, as TRANS's
 * lane does: the same combination order, so the same bits. The
 * accumulators go through shared memory ([TKO][TKI + 1] of acc_t: the
 * finish, e.g. mean's division, once an output in one place of the code) and
 * lane x of warp w writes outputs (ki w + j NW, ko x), finished: a warp
 * writes TKO output-contiguous values, as TRANS.
 */
#ifndef KG_REDUCE_TRANSV_CUH
#define KG_REDUCE_TRANSV_CUH

#include "reduce.cuh"
#include "reduce_trans.cuh"

/* The 16-byte vector at q (aligned) as words, only its elements within
   [lo, hi] loaded (the others 0): a vector reaching past the input's
   extent (rare: a row at the input's first or last element), out of line. */
__device__ __noinline__ kgd_vec<uint32_t, 4> kg_red_transv_edge(const uint16_t *q, const uint16_t *lo,
                                                                 const uint16_t *hi)
{
    kgd_vec<uint32_t, 4> x;
#pragma unroll
    for (int k = 0; k < 4; k++)
        x.v[k] = 0;
#pragma unroll 1
    for (int e = 0; e < 8; e++)
        if (q + e >= lo && q + e <= hi)
            x.v[e / 2] |= (uint32_t)q[e] << (16 * (e & 1));
    return x;
}

template <class Op> __device__ __forceinline__ void kg_red_transv(const kg_red_args &A)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    typedef typename Op::out_t OT;
    typedef kgd_vec<uint32_t, 4> VT; /* a vector as words */
    static_assert(sizeof(T) == 2, "transv: 2-byte elements");
    constexpr int V = 8, TKI = KG_RED_TRANSV_VECS * V, TKO = KG_RED_TRANSV_ROWS, NW = KG_RED_THREADS / 32,
                  M = TKO / NW, MR = 2, U = KG_RED_TRANSV_UNROLL, P = TKI + 1;
    static_assert(M % MR == 0 && KG_RED_TRANSV_VECS < 32, "transv: rows in pairs, a row within 32 vectors");
    __shared__ AT sv[TKO * P];
    __shared__ int64_t poff[KG_RED_TRANSV_POS];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int npos = (int)A.red;
    if (threadIdx.x == 0) {
        kg_red_pos<int64_t> p;
        kg_walk_at(A.walk, 0, p);
        for (int i = 0; i < npos; i++) {
            poff[i] = p.off;
            kg_walk_step(A.walk, p);
        }
    }
    const T *in = (const T *)A.in;
    const T *lo = in + A.chunk, *hi = in + A.run; /* the input's lowest and highest elements */
    const int64_t nko = A.tile_rows, tko = (nko + TKO - 1) / TKO, per_o = A.tiles * tko;
    for (int64_t u = blockIdx.x; u < A.units; u += gridDim.x) {
        const int64_t o = u / per_o, rem = u - o * per_o, to = rem / A.tiles, ti = rem - to * A.tiles;
        int64_t io, oo, xo;
        kg_red_outer(A, o, io, oo, xo);
        const int64_t k0 = ti * TKI;
        const int nki = A.inner - k0 < TKI ? (int)(A.inner - k0) : TKI;
        __syncthreads(); /* the previous unit's writers have read sv (and poff is set) */
#pragma unroll 1 /* (one copy of the loads and pushes: the module's size) */
        for (int m0 = 0; m0 < M; m0 += MR) {
            AT acc[MR][V];
            const T *vb[MR];
            int sh[MR];
            bool on[MR];
#pragma unroll
            for (int r = 0; r < MR; r++) {
                const int64_t ko = to * TKO + w + (m0 + r) * NW;
                const T *row = in + io + k0 + (ko < nko ? ko : 0) * A.inner_idx;
                const uintptr_t a = (uintptr_t)row & ~(uintptr_t)15;
                sh[r] = (int)(((uintptr_t)row - a) / sizeof(T));
                vb[r] = (const T *)a + lane * V;
                on[r] = ko < nko && lane * V - sh[r] < nki;
#pragma unroll
                for (int e = 0; e < V; e++)
                    acc[r][e] = Op::identity();
            }
            for (int i = 0; i < npos; i += U) {
                VT x[MR][U];
#pragma unroll
                for (int j = 0; j < U; j++)
                    if (i + j < npos) {
                        const int64_t off = poff[i + j];
#pragma unroll
                        for (int r = 0; r < MR; r++)
                            if (on[r]) {
                                const T *q = vb[r] + off;
                                /* q's offset from 16 bytes is the walk offset's (vb[r] is aligned):
                                   the same for every lane and row of a position */
                                const unsigned mis = (unsigned)((uintptr_t)q & 15);
                                if (q >= lo && q + (V - 1) <= hi && !(mis & 3)) {
                                    if (!mis)
                                        x[r][j] = *(const VT *)q;
                                    else if (mis == 8) {
                                        const kgd_vec<uint32_t, 2> *p = (const kgd_vec<uint32_t, 2> *)q;
                                        const kgd_vec<uint32_t, 2> a0 = p[0], a1 = p[1];
                                        x[r][j].v[0] = a0.v[0];
                                        x[r][j].v[1] = a0.v[1];
                                        x[r][j].v[2] = a1.v[0];
                                        x[r][j].v[3] = a1.v[1];
                                    } else {
                                        const uint32_t *p = (const uint32_t *)q;
#pragma unroll
                                        for (int k = 0; k < 4; k++)
                                            x[r][j].v[k] = p[k];
                                    }
                                } else /* past the input's extent or at 2 bytes off 4: element by
                                          element, within it */
                                    x[r][j] = kg_red_transv_edge((const uint16_t *)q, (const uint16_t *)lo,
                                                                 (const uint16_t *)hi);
                            }
                    }
#pragma unroll
                for (int j = 0; j < U; j++)
                    if (i + j < npos)
#pragma unroll
                        for (int r = 0; r < MR; r++)
                            if (on[r])
#pragma unroll
                                for (int e = 0; e < V; e++) {
                                    const uint16_t b = (uint16_t)(x[r][j].v[e / 2] >> (16 * (e & 1)));
                                    T y;
                                    memcpy(&y, &b, 2);
                                    acc[r][e] = Op::combine(acc[r][e], Op::map(y));
                                }
            }
#pragma unroll
            for (int r = 0; r < MR; r++)
                if (on[r]) {
                    AT *srow = sv + (w + (m0 + r) * NW) * P;
#pragma unroll
                    for (int e = 0; e < V; e++) {
                        const int k = lane * V - sh[r] + e;
                        if (k >= 0 && k < nki)
                            srow[k] = acc[r][e];
                    }
                }
        }
        __syncthreads();
        const int64_t kow = to * TKO + lane;
        if (kow < nko)
            for (int kl = w; kl < nki; kl += NW)
                ((OT *)A.out)[oo + kg_red_trans_kout(A, k0 + kl) + kow * A.inner_out] =
                    Op::finish(sv[lane * P + kl], A.red);
    }
}

#endif
