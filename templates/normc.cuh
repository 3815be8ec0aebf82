/*
 * normc.cuh - the CLUSTER class of softmax and log_softmax along an outer
 * axis (sm_90: thread-block clusters and distributed shared memory).
 *
 * The normalized dim has a stride; a kept dim (the columns) is contiguous.
 * One cluster of CS blocks serves one strip of W = LPR x V columns (LPR lanes
 * of a row, one 16-byte vector each) of one outer position: block q of the
 * cluster holds rows [q chunk, (q + 1) chunk) of the strip in registers (K
 * vectors a lane, rows ty, ty + T / LPR, ...; then KS more in shared
 * memory), so every element is read
 * once and written once (the two-launch COLS class reads it twice):
 *   1. each lane: the maximum of its K values per column, then the sum of
 *      exp(x - shift(max)); lanes of a column merge (online softmax) by
 *      butterflies in the warp, then over the warps in order (shared
 *      memory), giving the block's (max, sum) per column;
 *   2. cluster barrier; the first W lanes of every block merge the CS
 *      blocks' partials in rank order through distributed shared memory
 *      (every block the same result: the same merges in the same order;
 *      TR: the block gathers them, then merges them by a tree);
 *   3. every lane applies to its values and writes them; a second cluster
 *      barrier keeps each block's shared memory alive until the cluster's
 *      reads of it are done.
 * The runtime picks it where the column fits: n <= CS x rows a block with
 * CS <= 16 (runtime/norm.c), columns and strides in whole vectors. PH
 * (kg_norm_cluster_ph, a tuning): a persistent form whose blocks hold two
 * strips at once, one a half.
 */
#ifndef KG_NORMC_CUH
#define KG_NORMC_CUH

#include <cooperative_groups.h>

#include "norm.cuh"

/* KS: vectors a lane keeps in (dynamic) shared memory beyond its K in
   registers (rows j = K .. K + KS - 1 of the same walk), loaded by cp.async
   (no registers on the way); each lane reads back only its own slots. */
extern __shared__ uint4 kg_ncbuf[]; /* [KS][T] */

__device__ __forceinline__ void kg_ncp16(uint4 *dst, const void *src)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
}

/* m[v] = max(m[v], value v of vector u) */
template <class Op, int V> __device__ __forceinline__ void kg_ncl_vmax(typename Op::acc_t (&m)[V], const uint4 &u)
{
    typename Op::in_t e[V];
    memcpy(e, &u, 16);
#pragma unroll
    for (int v = 0; v < V; v++)
        m[v] = kg_nmax(m[v], Op::ld(e[v]));
}

/* The 2-byte types' packed pairs */
template <class IT>
using kg_ncl_t2 = typename std::conditional<std::is_same<IT, __half>::value, __half2, __nv_bfloat162>::type;

/* The 2-byte types: m2[i] = the packed pairs' maxima with those of vector u
   (__hmax2: a NaN loses to a number; the sum's exps then make the sum NaN) */
template <class IT, int V> __device__ __forceinline__ void kg_ncl_vmax2(kg_ncl_t2<IT> (&m2)[V / 2], const uint4 &u)
{
    kg_ncl_t2<IT> w[V / 2];
    memcpy(w, &u, sizeof w);
#pragma unroll
    for (int i = 0; i < V / 2; i++)
        m2[i] = __hmax2(m2[i], w[i]);
}
/* m2 = pairs of -inf */
template <class Op, int V> __device__ __forceinline__ void kg_ncl_m2init(kg_ncl_t2<typename Op::in_t> (&m2)[V / 2])
{
#pragma unroll
    for (int i = 0; i < V / 2; i++)
        m2[i].x = m2[i].y = Op::st(-(typename Op::acc_t)INFINITY);
}
/* m = the packed maxima m2 unpacked, s = 0 */
template <class Op, int V>
__device__ __forceinline__ void kg_ncl_m2out(const kg_ncl_t2<typename Op::in_t> (&m2)[V / 2], typename Op::acc_t (&m)[V],
                                             typename Op::acc_t (&s)[V])
{
#pragma unroll
    for (int i = 0; i < V / 2; i++) {
        m[2 * i] = Op::ld(m2[i].x);
        m[2 * i + 1] = Op::ld(m2[i].y);
        s[2 * i] = s[2 * i + 1] = 0;
    }
}

/* s[v] += exp(value v of u - shift(m[v])); HS: m holds the shifts (computed once a column by the caller: main's
   PTX computes kg_nshift's abs / setp / selp again for every element) */
template <class Op, int V, bool HS = false>
__device__ __forceinline__ void kg_ncl_vsum(typename Op::acc_t (&s)[V], const typename Op::acc_t (&m)[V],
                                            const uint4 &u)
{
    typename Op::in_t e[V];
    memcpy(e, &u, 16);
#pragma unroll
    for (int v = 0; v < V; v++)
        s[v] += kg_nexp_sum(Op::ld(e[v]) - (HS ? m[v] : kg_nshift(m[v])));
}

/* A 16-byte store of u at y. VS (tunings of session 24): one st.global.v4 (__stwb); else a plain store, which
   LLVM splits into four 4-byte stores here (PTX of main's cluster and COLT kernels: st.global.f32, or
   st.global.v2.u16 for the 2-byte types, four a vector; ptxas does not merge them). */
template <bool VS> __device__ __forceinline__ void kg_ncl_st16(void *y, const uint4 &u)
{
    if constexpr (VS)
        __stwb((uint4 *)y, u);
    else
        *(uint4 *)y = u;
}

/* Writes at y the vector of f(v, value v of x), each rounded to the input type. */
template <class Op, int V, bool VS = false, class F>
__device__ __forceinline__ void kg_ncl_vput(const uint4 &x, typename Op::in_t *y, F f)
{
    typename Op::in_t e[V];
    memcpy(e, &x, 16);
#pragma unroll
    for (int v = 0; v < V; v++)
        e[v] = Op::st(f(v, Op::ld(e[v])));
    uint4 u;
    memcpy(&u, e, 16);
    kg_ncl_st16<VS>(y, u);
}

/* Writes the output vector of input vector x (row values rv) at y. */
template <class Op, int V, bool VS = false>
__device__ __forceinline__ void kg_ncl_vstore(const uint4 &x, const kg_nrow<typename Op::acc_t> (&rv)[V],
                                              typename Op::in_t *y)
{
    typedef typename Op::acc_t AT;
    kg_ncl_vput<Op, V, VS>(x, y, [&](int v, AT a) { return Op::apply(a, rv[v], (AT)1, (AT)0); });
}

/* A lane's registers xs[j < jn]: m = their maxima per column (s = 0), then
   s = their sums of exps; each pass over fresh opaque copies, so the
   unpacked values die with it. */
template <class Op, int V, int K>
__device__ __forceinline__ void kg_ncl_regmax(const uint4 (&xs)[K], int jn, typename Op::acc_t (&m)[V],
                                              typename Op::acc_t (&s)[V])
{
#pragma unroll
    for (int v = 0; v < V; v++) {
        m[v] = -(typename Op::acc_t)INFINITY;
        s[v] = (typename Op::acc_t)0;
    }
#pragma unroll
    for (int j = 0; j < K; j++)
        if (j < jn)
            kg_ncl_vmax<Op, V>(m, kg_nopaque(xs[j]));
}
template <class Op, int V, int K, bool HS = false>
__device__ __forceinline__ void kg_ncl_regsum(const uint4 (&xs)[K], int jn, const typename Op::acc_t (&m)[V],
                                              typename Op::acc_t (&s)[V])
{
#pragma unroll
    for (int j = 0; j < K; j++)
        if (j < jn)
            kg_ncl_vsum<Op, V, HS>(s, m, kg_nopaque(xs[j]));
}
/* EX (softmax of f32, Op::expm): s[v] += exp(x - shift(m[v])) of vector u,
   and u's values replaced by those exps, so that the apply multiplies
   instead of taking the exp again (the lane's max m stays the shift). HS: m holds the shifts (kg_ncl_vsum). */
template <class Op, int V, bool HS = false>
__device__ __forceinline__ void kg_ncl_vsumex(typename Op::acc_t (&s)[V], const typename Op::acc_t (&m)[V], uint4 &u)
{
    static_assert(sizeof(typename Op::in_t) == sizeof(typename Op::acc_t), "EX: f32");
    typename Op::in_t e[V];
    memcpy(e, &u, 16);
#pragma unroll
    for (int v = 0; v < V; v++) {
        const typename Op::acc_t ex = kg_nexp(Op::ld(e[v]) - (HS ? m[v] : kg_nshift(m[v])));
        s[v] += ex;
        e[v] = Op::st(ex);
    }
    memcpy(&u, e, 16);
}
/* EX's output vector of exps u (those of kg_ncl_vsumex, taken at the lane's
   shift): y = apply_e(u c), c[v] = exp(shift(lane max) - the column's m). */
template <class Op, int V, bool VS = false>
__device__ __forceinline__ void kg_ncl_vstoreex(const uint4 &u, const kg_nrow<typename Op::acc_t> (&rv)[V],
                                                const typename Op::acc_t (&c)[V], typename Op::in_t *y)
{
    typedef typename Op::acc_t AT;
    kg_ncl_vput<Op, V, VS>(u, y, [&](int v, AT a) { return Op::apply_e(a * c[v], rv[v]); });
}

/* The output vector of x for the 2-byte softmax: the output's exp flushed below 2^-126
   (kg_nexp_sum, as LEAN2's FTZ form: f16 holds nothing there, bf16's denormals become 0). */
template <class Op, int V, bool VS = false>
__device__ __forceinline__ void kg_nct_vstore_ftz(const uint4 &x, const kg_nrow<typename Op::acc_t> (&rv)[V],
                                                  typename Op::in_t *y)
{
    typedef typename Op::acc_t AT;
    kg_ncl_vput<Op, V, VS>(x, y, [&](int v, AT a) { return Op::apply_e(kg_nexp_sum(a - rv[v].m), rv[v]); });
}

/* rv = the lane's columns' values f[0 .. V) */
template <class Op, int V>
__device__ __forceinline__ void kg_ncl_vals(kg_nrow<typename Op::acc_t> (&rv)[V], const kg_nrow<typename Op::acc_t> *f)
{
#pragma unroll
    for (int v = 0; v < V; v++)
        rv[v] = f[v];
}
/* The outputs of registers xs[j < jn], row j at y + j ys. */
template <class Op, int V, int K, bool VS = false>
__device__ __forceinline__ void kg_ncl_regstore(const uint4 (&xs)[K], int jn,
                                                const kg_nrow<typename Op::acc_t> (&rv)[V], typename Op::in_t *y,
                                                int64_t ys)
{
#pragma unroll
    for (int j = 0; j < K; j++)
        if (j < jn)
            kg_ncl_vstore<Op, V, VS>(kg_nopaque(xs[j]), rv, y + (int64_t)j * ys);
}

/* A barrier of T threads: the block's (H false), or half h's of a block of
   2 T (H: named barrier 1 + h, T threads). */
template <int T, bool H> __device__ __forceinline__ void kg_ncl_bar(int h)
{
    if constexpr (H)
        asm volatile("bar.sync %0, %1;\n" ::"r"(1 + h), "n"(T) : "memory");
    else
        __syncthreads();
}

/* The block's (max, sum) per column from each lane's (m, s): butterflies
   over the lanes of a column in the warp, then the warps in order through
   wm / ws; the first W lanes write them to cm / cs. Every lane calls it. */
template <class Op, int V, int LPR, int T, bool H = false>
__device__ __forceinline__ void kg_ncl_block(typename Op::acc_t (&m)[V], typename Op::acc_t (&s)[V],
                                             typename Op::acc_t (*wm)[LPR * V], typename Op::acc_t (*ws)[LPR * V],
                                             typename Op::acc_t *cm, typename Op::acc_t *cs, int tid = threadIdx.x,
                                             int h = 0)
{
    typedef typename Op::acc_t AT;
    constexpr int W = LPR * V, NW = T / 32;
    const int tx = tid % LPR, lane = tid & 31;
    /* the callers' loops and loads are guarded by each lane's row count:
       reconverge the warp before the shuffles and the block barrier */
    __syncwarp();
    /* the merge is symmetric: both partners end with the same values */
#pragma unroll
    for (int mk = LPR; mk < 32; mk <<= 1)
#pragma unroll
        for (int v = 0; v < V; v++) {
            const AT om = kgd_shfl_xor(m[v], mk), os = kgd_shfl_xor(s[v], mk);
            kg_nlse_merge(m[v], s[v], om, os);
        }
    if (lane < LPR)
#pragma unroll
        for (int v = 0; v < V; v++) {
            wm[tid >> 5][tx * V + v] = m[v];
            ws[tid >> 5][tx * V + v] = s[v];
        }
    __syncwarp();
    kg_ncl_bar<T, H>(h);
    if (tid < W) {
        AT a = wm[0][tid], c = ws[0][tid];
        for (int k = 1; k < NW; k++)
            kg_nlse_merge(a, c, wm[k][tid], ws[k][tid]);
        cm[tid] = a;
        cs[tid] = c;
    }
}

/* The cluster's partials (cm / cs of each of its CS blocks) copied into gm
   / gs by the block's lanes, one remote load each, all at once; then the
   block's (H: the half's) barrier. The same trip count for every lane (a
   lane-dependent count left the warps divergent at the __syncthreads():
   synccheck, [3001,4096] dim 0, 2026-12-02). */
template <class Op, int W, int T, bool H>
__device__ __forceinline__ void kg_ncl_gather(cooperative_groups::cluster_group &cl, int CS,
                                              typename Op::acc_t *cm, typename Op::acc_t *cs,
                                              typename Op::acc_t (*gm)[W], typename Op::acc_t (*gs)[W], int tid,
                                              int h)
{
    for (int i0 = 0; i0 < CS * W; i0 += T) {
        const int i = i0 + tid;
        if (i < CS * W) {
            const int k = i / W, c = i - k * W;
            gm[k][c] = cl.map_shared_rank(cm, k)[c];
            gs[k][c] = cl.map_shared_rank(cs, k)[c];
        }
    }
    __syncwarp();
    kg_ncl_bar<T, H>(h);
}

/* After a cluster barrier: the first W lanes merge the cluster's partials
   (cm / cs of every block) in rank order into fin. f32 with CS > 1: the
   block's lanes first copy them into gm / gs, one remote load each, all at
   once (the rank walk waits on one remote load after another; H200
   2026-12-02 r2, % of copy against the walk: f32 [16384,16384] dim 0
   softmax 60.8 / 59.7, log_softmax 66.7 / 64.0; bf16 softmax lost, 35.1 /
   41.8, and so did one-block clusters, [1000,262144] 72.0 / 74.1). */
template <class Op, int W, int T, bool H = false, bool TR = false>
__device__ __forceinline__ void kg_ncl_cluster(cooperative_groups::cluster_group &cl, typename Op::acc_t *cm,
                                               typename Op::acc_t *cs, typename Op::acc_t (*gm)[W],
                                               typename Op::acc_t (*gs)[W], kg_nrow<typename Op::acc_t> *fin,
                                               const kg_norm_args &A, int tid = threadIdx.x, int h = 0)
{
    typedef typename Op::acc_t AT;
    const int CS = (int)cl.num_blocks();
    if constexpr (TR) {
        /* TR (every dtype): the gathered partials merged by a tree, rank
           k with k + st at step st (1, 2, 4, 8), a block barrier a step,
           instead of the W lanes' walk of CS merges in turn */
        if (CS > 1) {
            kg_ncl_gather<Op, W, T, H>(cl, CS, cm, cs, gm, gs, tid, h);
            for (int st = 1; st < CS; st <<= 1) {
                const int np = (CS + 2 * st - 1) / (2 * st);
                for (int i0 = 0; i0 < np * W; i0 += T) {
                    const int i = i0 + tid;
                    if (i < np * W) {
                        const int a = i / W, c = i - a * W, k = 2 * st * a;
                        if (k + st < CS) {
                            AT m1 = gm[k][c], s1 = gs[k][c];
                            kg_nlse_merge(m1, s1, gm[k + st][c], gs[k + st][c]);
                            gm[k][c] = m1;
                            gs[k][c] = s1;
                        }
                    }
                }
                __syncwarp();
                kg_ncl_bar<T, H>(h);
            }
            if (tid < W) {
                kg_nstat<AT> st = kg_nstat_init<AT>();
                st.a = gm[0][tid];
                st.c = gs[0][tid];
                fin[tid] = kg_nfinish<Op>(st, A.n, A.eps);
            }
            return;
        }
    } else if constexpr (sizeof(typename Op::in_t) == 4) {
        if (CS > 1) { /* (the same for the whole block) */
            kg_ncl_gather<Op, W, T, H>(cl, CS, cm, cs, gm, gs, tid, h);
            if (tid < W) {
                kg_nstat<AT> st = kg_nstat_init<AT>();
                for (int k = 0; k < CS; k++)
                    kg_nlse_merge(st.a, st.c, gm[k][tid], gs[k][tid]);
                fin[tid] = kg_nfinish<Op>(st, A.n, A.eps);
            }
            return;
        }
    }
    if (tid < W) {
        kg_nstat<AT> st = kg_nstat_init<AT>();
        for (int k = 0; k < CS; k++) {
            const AT *rm = cl.map_shared_rank(cm, k), *rs = cl.map_shared_rank(cs, k);
            kg_nlse_merge(st.a, st.c, rm[tid], rs[tid]);
        }
        fin[tid] = kg_nfinish<Op>(st, A.n, A.eps);
    }
}

/* A block's shared partials: each warp's (wm, ws), the block's (cm, cs; the
   cluster reads them: NB buffers) and the columns' values (fin). */
template <class Op, int V, int LPR, int T, int NB = 1, bool TR = false> struct kg_ncl_shared {
    static_assert(sizeof(typename Op::in_t) * V == 16, "16-byte vectors");
    typename Op::acc_t wm[T / 32][LPR * V], ws[T / 32][LPR * V];
    typename Op::acc_t cm[NB][LPR * V], cs[NB][LPR * V]; /* (NB: by the parity of the strip, PH) */
    /* the cluster's (cm, cs), gathered (f32 alone; TR: every dtype) */
    typename Op::acc_t gm[sizeof(typename Op::in_t) == 4 || TR ? 16 : 1][LPR * V],
        gs[sizeof(typename Op::in_t) == 4 || TR ? 16 : 1][LPR * V];
    kg_nrow<typename Op::acc_t> fin[LPR * V];
};

/* The lane's statistics of its rows (xs[j < jn] in registers, then rows K +
   j < jn in its shared-memory slots): m = the maxima per column, s = the
   sums of exp(x - shift(m)); with EX (f32 softmax) the values become those
   exps (kg_ncl_vsumex), in registers and in the slots. */
template <class Op, int V, int T, int K, int KS, bool EX, bool P2 = false, bool HS = false>
__device__ __forceinline__ void kg_ncl_lane(uint4 (&xs)[K], int jn, typename Op::acc_t (&m)[V],
                                            typename Op::acc_t (&s)[V], int tid, uint4 *buf)
{
    typedef typename Op::in_t IT;
    /* P2: the maxima by packed pairs, registers then slots (kg_ncl_vmax2), unpacked once */
    constexpr bool PM = P2 && sizeof(IT) == 2;
    kg_ncl_t2<IT> m2[V / 2];
    if constexpr (PM) {
        kg_ncl_m2init<Op, V>(m2);
#pragma unroll
        for (int j = 0; j < K; j++)
            if (j < jn)
                kg_ncl_vmax2<IT, V>(m2, xs[j]);
    } else {
        kg_ncl_regmax<Op, V>(xs, jn, m, s);
    }
    if constexpr (KS > 0) {
        asm volatile("cp.async.wait_all;\n" ::: "memory");
#pragma unroll
        for (int j = 0; j < KS; j++)
            if (K + j < jn) {
                if constexpr (PM)
                    kg_ncl_vmax2<IT, V>(m2, buf[j * T + tid]);
                else
                    kg_ncl_vmax<Op, V>(m, buf[j * T + tid]);
            }
    }
    if constexpr (PM)
        kg_ncl_m2out<Op, V>(m2, m, s);
    /* HS: the shifts once a column (ms: the shifts, or the maxima) */
    typename Op::acc_t hs[V];
#pragma unroll
    for (int v = 0; v < V; v++)
        hs[v] = HS ? kg_nshift(m[v]) : m[v];
    const typename Op::acc_t(&ms)[V] = HS ? hs : m;
    if constexpr (EX) {
#pragma unroll
        for (int j = 0; j < K; j++)
            if (j < jn)
                kg_ncl_vsumex<Op, V, HS>(s, ms, xs[j]);
#pragma unroll
        for (int j = 0; j < KS; j++)
            if (K + j < jn) {
                uint4 u = buf[j * T + tid];
                kg_ncl_vsumex<Op, V, HS>(s, ms, u);
                buf[j * T + tid] = u;
            }
    } else {
        kg_ncl_regsum<Op, V, K, HS>(xs, jn, ms, s);
#pragma unroll
        for (int j = 0; j < KS; j++)
            if (K + j < jn)
                kg_ncl_vsum<Op, V, HS>(s, ms, buf[j * T + tid]);
    }
}

/* The factor of a lane's kept exps (taken at its maximum ml) for the column's m: exp(shift(ml) - m), and 0 where ml
   is -inf (the lane's exps are all 0, and the factor exp(0 - m) overflows to inf once m < -88.7: 0 x inf was NaN,
   main before session 24, softmax f32 of a column of -inf with its finite values below -88.7 on other lanes) */
template <class AT> __device__ __forceinline__ AT kg_ncl_kfac(AT ml, AT m)
{
    return ml == -(AT)INFINITY ? (AT)0 : kg_nexp(kg_nshift(ml) - m);
}

/* EX: the outputs of registers xs[j < jn] (exps at the lane's maxima ml), row j at y + j ys, by the factors
   c[v] = kg_ncl_kfac(ml[v], the column's m) (left in c). */
template <class Op, int V, int K, bool VS = false>
__device__ __forceinline__ void kg_ncl_regstoreex(const uint4 (&xs)[K], int jn,
                                                  const kg_nrow<typename Op::acc_t> (&rv)[V],
                                                  const typename Op::acc_t (&ml)[V], typename Op::acc_t (&c)[V],
                                                  typename Op::in_t *y, int64_t ys)
{
#pragma unroll
    for (int v = 0; v < V; v++)
        c[v] = kg_ncl_kfac(ml[v], rv[v].m);
#pragma unroll
    for (int j = 0; j < K; j++)
        if (j < jn)
            kg_ncl_vstoreex<Op, V, VS>(xs[j], rv, c, y + (int64_t)j * ys);
}

/* The lane's outputs: rows j < jn at y + j ys (registers, then its slots);
   EX: from the exps at the lane's maxima ml. */
template <class Op, int V, int T, int K, int KS, bool EX, bool P2 = false, bool VS = false>
__device__ __forceinline__ void kg_ncl_out(const uint4 (&xs)[K], int jn, const kg_nrow<typename Op::acc_t> *f,
                                           const typename Op::acc_t (&ml)[V], typename Op::in_t *y, int64_t ys,
                                           int tid, uint4 *buf)
{
    typedef typename Op::acc_t AT;
    kg_nrow<AT> rv[V];
    kg_ncl_vals<Op, V>(rv, f);
    if constexpr (P2 && Op::expm && sizeof(typename Op::in_t) == 2) {
        /* P2, the 2-byte softmax: the output's exps flushed below 2^-126 (kg_nct_vstore_ftz, as COLT) */
#pragma unroll
        for (int j = 0; j < K; j++)
            if (j < jn)
                kg_nct_vstore_ftz<Op, V, VS>(kg_nopaque(xs[j]), rv, y + (int64_t)j * ys);
#pragma unroll
        for (int j = 0; j < KS; j++)
            if (K + j < jn)
                kg_nct_vstore_ftz<Op, V, VS>(buf[j * T + tid], rv, y + (int64_t)(K + j) * ys);
    } else if constexpr (EX) {
        AT c[V];
        kg_ncl_regstoreex<Op, V, K, VS>(xs, jn, rv, ml, c, y, ys);
#pragma unroll
        for (int j = 0; j < KS; j++)
            if (K + j < jn)
                kg_ncl_vstoreex<Op, V, VS>(buf[j * T + tid], rv, c, y + (int64_t)(K + j) * ys);
    } else {
        kg_ncl_regstore<Op, V, K, VS>(xs, jn, rv, y, ys);
#pragma unroll
        for (int j = 0; j < KS; j++)
            if (K + j < jn)
                kg_ncl_vstore<Op, V, VS>(buf[j * T + tid], rv, y + (int64_t)(K + j) * ys);
    }
}

/* The lane's loads of its rows j < jn, row j at p + j rs: rows K + j into
   its slots buf[j T + tid] (cp.async, one group), rows j < K into xs. */
template <int T, int K, int KS, class IT>
__device__ __forceinline__ void kg_ncl_load(uint4 (&xs)[K], int jn, const IT *p, int64_t rs, int tid, uint4 *buf)
{
    if constexpr (KS > 0) {
#pragma unroll
        for (int j = 0; j < KS; j++)
            if (K + j < jn)
                kg_ncp16(&buf[j * T + tid], p + (int64_t)(K + j) * rs);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
#pragma unroll
    for (int j = 0; j < K; j++)
        if (j < jn)
            xs[j] = __ldg((const uint4 *)(p + (int64_t)j * rs));
}

/* P2 (tunings of session 24, the 2-byte types): the lane's maxima by packed pairs (kg_ncl_vmax2) and softmax's
   output exps flushed below 2^-126 (kg_nct_vstore_ftz), as COLT's 2-byte path; elsewhere no effect. VS (tunings of
   session 24): the outputs by 16-byte stores (kg_ncl_st16), the lane's shifts once a column (kg_ncl_lane's HS);
   the same bits. */
template <class Op, int V, int LPR, int T, int K, int KS = 0, bool EX0 = false, bool TR = false, bool P2 = false,
          bool VS = false>
__device__ __forceinline__ void kg_norm_cluster(const kg_norm_args &A)
{
    typedef typename Op::in_t IT;
    typedef typename Op::acc_t AT;
    constexpr int RY = T / LPR, W = LPR * V;
    constexpr bool EX = EX0 && Op::expm && sizeof(IT) == sizeof(AT);
    __shared__ kg_ncl_shared<Op, V, LPR, T, 1, TR> sh;
    cooperative_groups::cluster_group cl = cooperative_groups::this_cluster();
    const int CS = (int)cl.num_blocks();
    const int q = (int)cl.block_rank();
    const int64_t cid = blockIdx.x / CS; /* 1-d clusters: consecutive blocks */
    const int64_t o = cid / A.tiles, tile = cid - o * A.tiles;
    int64_t off[KG_NORM_NOPS];
    kg_nouter(A, o, off);
    const int tid = threadIdx.x, tx = tid % LPR, ty = tid / LPR;
    const int64_t col = tile * W + tx * V;
    const int64_t r0 = (int64_t)q * A.chunk;
    const int64_t rend = r0 + A.chunk < A.n ? r0 + A.chunk : A.n;
    /* this lane's rows: j < jn (rows r0 + ty + j RY below rend) */
    int jn = 0;
    if (col < A.cols && r0 + ty < rend) {
        const int64_t t = (rend - r0 - ty + RY - 1) / RY;
        jn = t < K + KS ? (int)t : K + KS;
    }
    const int64_t ns = A.inner.st[0][KG_NO_IN], nso = A.inner.st[0][KG_NO_OUT];
    const IT *p = (const IT *)A.p[KG_NO_IN] + off[KG_NO_IN] + col + (r0 + ty) * ns;
    uint4 xs[K];
    kg_ncl_load<T, K, KS>(xs, jn, p, RY * ns, tid, kg_ncbuf);
    /* 1. the lane's statistics, per column */
    AT m[V], s[V], ml[V];
    kg_ncl_lane<Op, V, T, K, KS, EX, P2, VS>(xs, jn, m, s, tid, kg_ncbuf);
#pragma unroll
    for (int v = 0; v < V; v++)
        ml[v] = m[v];
    kg_ncl_block<Op, V, LPR, T>(m, s, sh.wm, sh.ws, sh.cm[0], sh.cs[0]);
    /* 2. the cluster's partials, in rank order. The cluster barriers here
       and below are the non-aligned forms: the lanes of a warp may arrive
       apart (their row counts jn differ where the rows end inside a warp). */
    cl.sync();
    kg_ncl_cluster<Op, W, T, false, TR>(cl, sh.cm[0], sh.cs[0], sh.gm, sh.gs, sh.fin, A);
    __syncthreads();
    /* this block's reads of the others' shared memory are done */
    asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
    /* 3. the apply */
    IT *y = (IT *)A.p[KG_NO_OUT] + off[KG_NO_OUT] + col + (r0 + ty) * nso;
    if (jn > 0)
        kg_ncl_out<Op, V, T, K, KS, EX, P2, VS>(xs, jn, sh.fin + tx * V, ml, y, RY * nso, tid, kg_ncbuf);
    /* every block's shared memory stays until the cluster's reads are done */
    asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}

/* PH: the persistent form with two halves. A block of 2 T threads holds two
   strips at once, half h (threads h T .. h T + T - 1) one of them, as a
   block of kg_norm_cluster<.., T, ..> does: the same rows, sums and merges
   in the same order (the same bits). Cluster c (of ncl) serves strips 2 c +
   h, 2 c + h + 2 ncl, ...; a half's cluster exchange waits on an mbarrier of
   its own (the CS blocks' halves h arrive on every block's), not on the
   cluster barrier, so one half's statistics, exchange and apply run while
   the other's loads and stores stream; each half loads its next strip into
   the registers and slots its stores have just read. Half 1 starts its
   first loads once half 0's have landed (unless A.opt bit 0), so that the
   halves run out of phase. The partials are double-buffered by the strip's
   parity: a block writes buffer p again (two strips on) only after every
   block has arrived for the strip between, that is, after their reads of
   this one. */
__device__ __forceinline__ void kg_ncl_arrive_all(cooperative_groups::cluster_group &cl, uint64_t *bar, int cs)
{
    const uint32_t a = (uint32_t)__cvta_generic_to_shared(bar);
    for (int k = 0; k < cs; k++) {
        uint32_t r;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(a), "r"(k));
        asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(r) : "memory");
    }
}
__device__ __forceinline__ void kg_ncl_wait_cluster(uint64_t *bar, uint32_t parity)
{
    const uint32_t a = (uint32_t)__cvta_generic_to_shared(bar);
    uint32_t done;
    do {
        asm volatile("{\n"
                     "  .reg .pred p;\n"
                     "  mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
                     "  selp.u32 %0, 1, 0, p;\n"
                     "}\n"
                     : "=r"(done)
                     : "r"(a), "r"(parity)
                     : "memory");
    } while (!done);
}

template <class Op, int V, int LPR, int T, int K, int KS, bool EX0>
__device__ __forceinline__ void kg_norm_cluster_ph(const kg_norm_args &A)
{
    typedef typename Op::in_t IT;
    typedef typename Op::acc_t AT;
    constexpr int RY = T / LPR, W = LPR * V;
    constexpr bool EX = EX0 && Op::expm && sizeof(IT) == sizeof(AT);
    __shared__ kg_ncl_shared<Op, V, LPR, T, 2> sh[2];
    __shared__ uint64_t full[2][2]; /* [half][parity] */
    cooperative_groups::cluster_group cl = cooperative_groups::this_cluster();
    const int CS = (int)cl.num_blocks();
    const int q = (int)cl.block_rank();
    const int h = (int)threadIdx.x / T, tid = (int)threadIdx.x - h * T, tx = tid % LPR, ty = tid / LPR;
    const int64_t ncl = gridDim.x / CS, cid = blockIdx.x / CS; /* 1-d clusters: consecutive blocks */
    const int64_t items = A.rows * A.tiles;
    uint4 *buf = kg_ncbuf + h * KS * T;
    if (tid == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"((uint32_t)__cvta_generic_to_shared(&full[h][0])),
                     "r"(CS)
                     : "memory");
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"((uint32_t)__cvta_generic_to_shared(&full[h][1])),
                     "r"(CS)
                     : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    /* every block's barriers initialized before any arrives on them */
    asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
    const int64_t r0 = (int64_t)q * A.chunk;
    const int64_t rend = r0 + A.chunk < A.n ? r0 + A.chunk : A.n;
    /* this lane's rows in a full strip: j < jr (rows r0 + ty + j RY below rend) */
    int jr = 0;
    if (r0 + ty < rend) {
        const int64_t t = (rend - r0 - ty + RY - 1) / RY;
        jr = t < K + KS ? (int)t : K + KS;
    }
    const int64_t ns = A.inner.st[0][KG_NO_IN], nso = A.inner.st[0][KG_NO_OUT];
    /* strip w's first input row of this lane, its offset of the output and its rows jn */
    auto strip = [&](int64_t w, int64_t &yo, int &jn) -> const IT * {
        const int64_t o = w / A.tiles, tile = w - o * A.tiles;
        int64_t off[KG_NORM_NOPS];
        kg_nouter(A, o, off);
        const int64_t col = tile * W + tx * V;
        jn = col < A.cols ? jr : 0;
        yo = off[KG_NO_OUT] + col + (r0 + ty) * nso;
        return (const IT *)A.p[KG_NO_IN] + off[KG_NO_IN] + col + (r0 + ty) * ns;
    };
    int64_t w = 2 * cid + h, yo = 0;
    int jn = 0;
    uint4 xs[K];
    if (h == 1 && !(A.opt & 1) && w < items)
        asm volatile("bar.sync 3, %0;\n" ::"n"(2 * T) : "memory"); /* after half 0's first loads */
    if (w < items) {
        const IT *x = strip(w, yo, jn);
        kg_ncl_load<T, K, KS>(xs, jn, x, RY * ns, tid, buf);
    }
    for (uint32_t it = 0; w < items; it++) {
        const int p = (int)(it & 1);
        /* 1. the lane's statistics, per column, and the half's */
        AT m[V], s[V], ml[V];
        kg_ncl_lane<Op, V, T, K, KS, EX>(xs, jn, m, s, tid, buf);
        if (it == 0 && h == 0 && !(A.opt & 1) && w + 1 < items) {
            __syncwarp();
            asm volatile("bar.arrive 3, %0;\n" ::"n"(2 * T) : "memory");
        }
#pragma unroll
        for (int v = 0; v < V; v++)
            ml[v] = m[v];
        kg_ncl_block<Op, V, LPR, T, true>(m, s, sh[h].wm, sh[h].ws, sh[h].cm[p], sh[h].cs[p], tid, h);
        /* 2. the cluster's partials, in rank order, once every block's half
           h has written its own */
        __syncwarp();
        kg_ncl_bar<T, true>(h);
        if (tid == 0)
            kg_ncl_arrive_all(cl, &full[h][p], CS);
        kg_ncl_wait_cluster(&full[h][p], (it >> 1) & 1);
        kg_ncl_cluster<Op, W, T, true>(cl, sh[h].cm[p], sh[h].cs[p], sh[h].gm, sh[h].gs, sh[h].fin, A, tid, h);
        kg_ncl_bar<T, true>(h);
        /* 3. the apply, then the next strip's loads (each register and
           slot taking its next row as soon as it is stored ran slower:
           H200 s17r1, softmax f32 [16384,16384] dim 0 48.7% of copy
           against 56.0) */
        if (jn > 0)
            kg_ncl_out<Op, V, T, K, KS, EX>(xs, jn, sh[h].fin + tx * V, ml, (IT *)A.p[KG_NO_OUT] + yo, RY * nso,
                                            tid, buf);
        w += 2 * ncl;
        if (w < items) {
            const IT *x = strip(w, yo, jn);
            kg_ncl_load<T, K, KS>(xs, jn, x, RY * ns, tid, buf);
        }
    }
    /* every block's shared memory stays until the cluster is done with it */
    __syncwarp();
    asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}

#endif
