/*
 * reduce_stripes.cuh - ROWS in stripes (tuning rows_stripes, args.run
 * KG_RED_ROWS_STRIPES): the splits of a long row read interleaved lines of
 * its vectors instead of one contiguous chunk each. Included by the modules
 * with the rows kernel (templates/reduce.cu, has.rows) after reduce.cuh.
 */
#include "kg_red_stripes.h"

/* Split s of S of a row of n elements (a block, lane t) reads the row's
   aligned vectors as lines of KG_RED_THREADS vectors, lines s, s + S, s + 2 S,
   ... (KG_RED_UNROLL lines in flight), instead of one contiguous chunk: all
   S splits of the row read within S x KG_RED_UNROLL lines of each other (one
   output of 2^28 f32 elements over 528 splits: a window of 17 MB, not 528
   streams 2 MB apart over 1 GiB). Split 0 takes the scalar head before the
   first aligned vector, split S - 1 the vectors after the last whole line
   and the scalar tail: each lane's elements in increasing index order,
   every element in exactly one split, the same splits every call. */
template <class Op>
__device__ __forceinline__ kg_racc<Op> kg_red_run_stripes(const typename Op::in_t *row, int64_t n, int64_t s,
                                                          int64_t S, int t)
{
    typedef typename Op::in_t T;
    constexpr int V = Op::vec, NT = KG_RED_THREADS, U = KG_RED_UNROLL;
    typedef kgd_vec<T, V> VT;
    kg_racc<Op> a = kg_red_identity<Op>();
    int64_t h = (int64_t)((16 - ((uintptr_t)row & 15)) & 15) / (int64_t)sizeof(T);
    if (h > n)
        h = n;
    if (s == 0)
        for (int64_t k = t; k < h; k += NT)
            kg_red_push<Op>(a, row[k], k);
    const int64_t nv = (n - h) / V, lines = nv / NT;
    const VT *vp = (const VT *)(row + h);
    int64_t r = s;
    for (; r + (U - 1) * S < lines; r += U * S) {
        VT x[U];
#pragma unroll
        for (int j = 0; j < U; j++)
            x[j] = vp[(r + j * S) * NT + t];
#pragma unroll
        for (int j = 0; j < U; j++)
            kg_red_push_vec<Op>(a, x[j], h + ((r + j * S) * NT + t) * V);
    }
    for (; r < lines; r += S)
        kg_red_push_vec<Op>(a, vp[r * NT + t], h + (r * NT + t) * V);
    if (s == S - 1) {
        for (int64_t v = lines * NT + t; v < nv; v += NT)
            kg_red_push_vec<Op>(a, vp[v], h + v * V);
        const int64_t done = h + nv * V;
        for (int64_t k = t; k < n - done; k += NT)
            kg_red_push<Op>(a, row[done + k], done + k);
    }
    return a;
}

/* The rows kernel: the stripes where the plan says so, else kg_red_rows. */
template <class Op> __device__ __forceinline__ void kg_red_rows_any(const kg_red_args &A)
{
    if (A.group == KG_RED_THREADS && A.run == KG_RED_ROWS_STRIPES) {
        const typename Op::in_t *in = (const typename Op::in_t *)A.in;
        kg_red_units<Op>(A, [&](int64_t io, int64_t c0, int64_t c1, int t, int nt) {
            return kg_red_run_stripes<Op>(in + io, A.red, c0 / A.chunk, A.splits, t);
        });
        return;
    }
    kg_red_rows<Op>(A);
}
