/*
 * reduce_slab.cuh - SLAB (kg_reduce_params.h): value reductions of elements
 * of at most 4 bytes whose one reduced dim of R = A.run rows lies right
 * outside C = A.cw contiguous kept columns (C <= KG_RED_THREADS; the
 * kept dims A.rdims, input strides chained from 1, any values strides),
 * the [R, C] slabs dense along the kept dim outer.0 (input stride R x C,
 * A.inner slabs, values' stride outer.out[0]); kernel slab:
 * templates/reduce.cu includes this file in the slab modules alone.
 *
 * Further reduced dims are walked outside the slabs (A.walk, one position at
 * a time), further kept dims are outer positions. A unit is a tile of at most
 * A.tile_rows slabs of one outer position (A.tiles tiles a position); no
 * splits. Per walk position the block loads the tile's slabs x R x C
 * contiguous elements in the aligned 16-byte vectors that hold them (a first
 * or last vector that reaches past them element by element: no byte outside
 * the tensor is read) into shared memory by cp.async, and thread t reduces
 * column t mod C of slabs t / C, t / C + P, ... (P = KG_RED_THREADS / C; the
 * planner keeps a thread's slabs within KG_RED_SLAB_OUTS), rows in
 * increasing order. The stages form a ring of KG_RED_SLAB_STAGES: the next
 * tiles (the next walk positions, then the block's next units) are in flight
 * while one is reduced, no registers held for them. Every combination order
 * is fixed: bitwise the same run to run.
 */
#ifndef KG_REDUCE_SLAB_CUH
#define KG_REDUCE_SLAB_CUH

#include "reduce.cuh"

/* Values offset of column c: its digits over A.rdims times their values
   strides (c and every size below KG_RED_THREADS: 32-bit division). */
__device__ __forceinline__ int64_t kg_red_slab_cout(const kg_red_args &A, int c)
{
    int64_t off = 0;
    int r = c;
#pragma unroll 1
    for (int d = 0; d < A.rdims.n; d++) {
        const int n = (int)A.rdims.size[d], q = r / n;
        off += (int64_t)(r - q * n) * A.rdims.out[d];
        r = q;
    }
    return off;
}

/* A stage's tile. */
struct kg_red_slab_meta {
    int64_t oo; /* the tile's first slab's values offset */
    int ph, slabs, last; /* the elements' phase in the stage, slabs, 1: the unit's last walk position */
};

template <class Op> __device__ __forceinline__ void kg_red_slab(const kg_red_args &A)
{
    typedef typename Op::in_t T;
    constexpr int V = Op::vec;
    typedef kgd_vec<T, V> VT;
    constexpr int E = KG_RED_SLAB_BYTES / (int)sizeof(T);
    constexpr int SB = (E / V + 1) * 16; /* bytes a stage */
    constexpr int NS = KG_RED_SLAB_STAGES;
    constexpr int MO = KG_RED_SLAB_OUTS;
    __shared__ __align__(16) unsigned char buf[NS * SB];
    __shared__ kg_red_slab_meta meta[NS];
    const int R = (int)A.run, C = A.cw, RC = R * C, P = KG_RED_THREADS / C;
    const int t = threadIdx.x, col = t % C, s1 = t / C;
    const bool live = t < P * C;
    const int64_t npos = A.red / R;

    /* the producer: the next tile to load */
    int64_t pu = blockIdx.x, pw = 0, pio = 0, poo = 0;
    int pslabs = 0;
    kg_red_pos<int64_t> wp;
    auto unit = [&]() {
        const int64_t o = pu / A.tiles, tile = pu - o * A.tiles, s0 = tile * A.tile_rows;
        int64_t xo;
        kg_red_outer(A, o * A.inner + s0, pio, poo, xo);
        pslabs = (int)(A.inner - s0 < A.tile_rows ? A.inner - s0 : A.tile_rows);
        kg_walk_at(A.walk, 0, wp);
        pw = 0;
    };
    if (pu < A.units)
        unit();
    int issued = 0;
    /* issues the loads of the producer's tile into stage k and advances */
    auto issue = [&](int k) {
        unsigned char *sb = buf + k * SB;
        const int n = pslabs * RC;
        const T *p = (const T *)A.in + pio + wp.off;
        const int phase = (int)(((uintptr_t)p & 15) / sizeof(T));
        const VT *pa = (const VT *)(p - phase);
        const int nv = (phase + n + V - 1) / V;
        const bool ragged = phase > 0 || (phase + n) % V != 0;
        for (int v = t; v < nv; v += KG_RED_THREADS) {
            if (ragged && (v == 0 || v == nv - 1)) {
#pragma unroll
                for (int e = 0; e < V; e++) {
                    const int q = v * V + e - phase;
                    if (q >= 0 && q < n)
                        ((T *)sb)[v * V + e] = p[q];
                }
            } else {
                kgd_cp_async16(kgd_smem_addr(sb + v * 16), pa + v, true);
            }
        }
        if (t == 0) {
            meta[k].oo = poo;
            meta[k].ph = phase;
            meta[k].slabs = pslabs;
            meta[k].last = pw + 1 == npos;
        }
        issued++;
        if (pw + 1 < npos) {
            kg_walk_step(A.walk, wp);
            pw++;
        } else {
            pu += gridDim.x;
            if (pu < A.units)
                unit();
        }
    };
#pragma unroll
    for (int k = 0; k < NS - 1; k++) {
        if (pu < A.units)
            issue(k);
        kgd_cp_async_commit();
    }
    kg_racc<Op> acc[MO];
#pragma unroll
    for (int m = 0; m < MO; m++)
        acc[m] = kg_red_identity<Op>();
    for (int i = 0; i < issued; i++) {
        if (pu < A.units)
            issue((i + NS - 1) % NS);
        kgd_cp_async_commit();
        kgd_cp_async_wait<NS - 1>(); /* tile i's copies of this thread landed */
        __syncthreads();
        const int k = i % NS;
        const kg_red_slab_meta mt = meta[k];
        const T *st = (const T *)(buf + k * SB) + mt.ph;
        if (live) {
#pragma unroll
            for (int m = 0; m < MO; m++) {
                const int s = s1 + m * P;
                if (s >= mt.slabs)
                    break;
                const T *q = st + s * RC + col;
                kg_racc<Op> a = acc[m];
#pragma unroll 4
                for (int r = 0; r < R; r++)
                    kg_red_push<Op>(a, q[r * C], 0);
                acc[m] = a;
            }
            if (mt.last) {
                const int64_t cof = kg_red_slab_cout(A, col);
#pragma unroll
                for (int m = 0; m < MO; m++) {
                    const int s = s1 + m * P;
                    if (s >= mt.slabs)
                        break;
                    kg_red_store<Op>(A, mt.oo + s * A.outer.out[0] + cof, 0, acc[m]);
                    acc[m] = kg_red_identity<Op>();
                }
            }
        }
        __syncthreads(); /* stage k is read: the next issue may refill it */
    }
}

#endif
