/*
 * reduce_rows_words.cuh - ROWS over 2-byte elements with each 16-byte
 * vector loaded as four 32-bit words and split into elements only when
 * pushed, after the batch's loads are issued (kg_red_args.vstore 1 on a
 * ROWS plan; templates/reduce.cu includes this file in the 2-byte base
 * modules alone). A vector of 2-byte elements loaded as such is split into
 * 16-bit registers at the load, and ptxas makes the next load wait for it
 * (as in kg_red_nest_v and the COLS modes WIDE32 / VEC32). The same
 * elements in the same order as kg_red_run_row: the same bits.
 */
#ifndef KG_REDUCE_ROWS_WORDS_CUH
#define KG_REDUCE_ROWS_WORDS_CUH

#include "reduce.cuh"

/* kg_red_run_row with the vectors as words. */
template <class Op>
__device__ __forceinline__ kg_racc<Op> kg_red_run_row_w(const typename Op::in_t *row, int64_t c0, int64_t c1, int t,
                                                        int nt)
{
    typedef typename Op::in_t T;
    constexpr int V = Op::vec;
    static_assert(sizeof(T) == 2 && V == 8, "words: 16-byte vectors of 2-byte elements");
    typedef kgd_vec<T, V> VT;
    typedef kgd_vec<uint32_t, 4> WT;
    auto split = [](const WT &w) {
        VT v;
#pragma unroll
        for (int k = 0; k < V; k++) {
            const uint16_t b = (uint16_t)(w.v[k / 2] >> (16 * (k & 1)));
            memcpy(&v.v[k], &b, 2);
        }
        return v;
    };
    kg_racc<Op> a = kg_red_identity<Op>();
    const int64_t n = c1 - c0;
    if (n <= 0)
        return a;
    const T *p = row + c0;
    int64_t h = (int64_t)((16 - ((uintptr_t)p & 15)) & 15) / (int64_t)sizeof(T);
    if (h > n)
        h = n;
    for (int64_t k = t; k < h; k += nt)
        kg_red_push<Op>(a, p[k], c0 + k);
    const int64_t nv = (n - h) / V;
    const WT *vp = (const WT *)(p + h);
    const int64_t at = c0 + h;
    int64_t v = t;
    for (; v + (KG_RED_UNROLL - 1) * (int64_t)nt < nv; v += KG_RED_UNROLL * (int64_t)nt) {
        WT x[KG_RED_UNROLL];
#pragma unroll
        for (int j = 0; j < KG_RED_UNROLL; j++)
            x[j] = vp[v + j * (int64_t)nt];
#pragma unroll
        for (int j = 0; j < KG_RED_UNROLL; j++)
            kg_red_push_vec<Op>(a, split(x[j]), at + (v + j * (int64_t)nt) * V);
    }
    for (; v < nv; v += nt)
        kg_red_push_vec<Op>(a, split(vp[v]), at + v * V);
    const int64_t done = h + nv * V;
    for (int64_t k = t; k < n - done; k += nt)
        kg_red_push<Op>(a, p[done + k], c0 + done + k);
    return a;
}

/* ROWS of 2-byte elements: words where the plan says so (args.vstore). */
template <class Op> __device__ __forceinline__ void kg_red_rows_words(const kg_red_args &A)
{
    const typename Op::in_t *in = (const typename Op::in_t *)A.in;
    if (A.vstore)
        kg_red_units<Op>(A, [&](int64_t io, int64_t c0, int64_t c1, int t, int nt) {
            return kg_red_run_row_w<Op>(in + io, c0, c1, t, nt);
        });
    else
        kg_red_rows<Op>(A);
}

#endif
