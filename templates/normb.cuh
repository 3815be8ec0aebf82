/*
 * normb.cuh - the BULK class of the norms (layer_norm, rms_norm and its
 * fused residual form) on sm_90: rows staged in shared memory by the bulk
 * copy engine.
 *
 * A persistent block of T threads serves rows blockIdx.x, + gridDim.x, ...
 * one at a time. Its dynamic shared memory is a ring of S stages (A.chunk),
 * each one row (then the residual's row), filled by cp.async.bulk on the
 * stage's mbarrier: S - 1 rows stay in flight while the block reduces,
 * applies and stores the current one, and no register holds them (the LEAN
 * classes' next-row prefetch in registers lost for the 2-byte layer_norm and
 * the residual form: spills, fewer rows resident). Lane l takes the row's
 * vectors k T + l (k < NV) from the stage into registers; WR: the weight
 * and bias vectors of those columns are loaded once a block, into
 * registers (else read at each apply). Statistics as LEAN's 2-byte
 * moments: the block's sum, then the squared deviations from the mean;
 * sumsq one sum; the block's reductions are kg_ngroup's (butterflies, then
 * the warps in order), so the results are the same run to run. After the
 * first reduction's barriers every lane holds its vectors of the stage, and
 * thread 0 refills the stage with the row S ahead.
 * The runtime (runtime/norm.c) takes it where LEAN would serve the row, on
 * compute capability 9.0, rows in whole 16-byte vectors.
 */
#ifndef KG_NORMB_CUH
#define KG_NORMB_CUH

#include "norm.cuh"

/* most stages a block's ring holds (its mbarriers are static) */
#define KG_NORMB_MAX_STAGES 16

extern __shared__ __align__(128) unsigned char kg_nbbuf[];

__device__ __forceinline__ uint32_t kg_nb_saddr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* The stage's barrier expects bytes more, from this (the only) arrival. */
__device__ __forceinline__ void kg_nb_expect(uint64_t *bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(kg_nb_saddr(bar)), "r"(bytes)
                 : "memory");
}

/* bytes (a multiple of 16, both addresses 16-byte aligned) from global src
   to shared dst, completing on bar. */
__device__ __forceinline__ void kg_nb_copy(void *dst, const void *src, uint32_t bytes, uint64_t *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     kg_nb_saddr(dst)),
                 "l"(src), "r"(bytes), "r"(kg_nb_saddr(bar))
                 : "memory");
}

/* Waits for the completion of the barrier's phase of this parity. */
__device__ __forceinline__ void kg_nb_wait(uint64_t *bar, uint32_t parity)
{
    uint32_t done;
    do {
        asm volatile("{\n"
                     "  .reg .pred p;\n"
                     "  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "  selp.u32 %0, 1, 0, p;\n"
                     "}\n"
                     : "=r"(done)
                     : "r"(kg_nb_saddr(bar)), "r"(parity)
                     : "memory");
    } while (!done);
}

template <class Op, int V, int NV, int T, bool WR>
__device__ __forceinline__ void kg_norm_bulk(const kg_norm_args &A)
{
    static_assert(Op::stats != KG_NS_LSE && Op::elementwise, "BULK: the norms");
    typedef typename Op::in_t IT;
    typedef typename Op::acc_t AT;
    typedef kgd_vec<IT, V> VT;
    __shared__ uint64_t bar[KG_NORMB_MAX_STAGES];
    const int tid = (int)threadIdx.x;
    const int S = (int)A.chunk;
    const int nvec = (int)(A.n / V);
    const uint32_t rb = (uint32_t)A.n * (uint32_t)sizeof(IT);
    const int64_t s_in = kg_nrow_stride(A, KG_NO_IN), s_out = kg_nrow_stride(A, KG_NO_OUT);
    const int64_t s_res = kg_nrow_stride(A, KG_NO_RES);
    const IT *in = (const IT *)A.p[KG_NO_IN], *wp = (const IT *)A.p[KG_NO_W], *bp = (const IT *)A.p[KG_NO_B];
    IT *out = (IT *)A.p[KG_NO_OUT], *res = (IT *)A.p[KG_NO_RES];
    const bool hres = Op::residual && res != NULL;
    const uint32_t sb = hres ? 2 * rb : rb; /* a stage */
    const int64_t G = gridDim.x, b0 = blockIdx.x;
    const int64_t nr = A.rows > b0 ? (A.rows - b0 + G - 1) / G : 0; /* this block's rows */
    auto issue = [&](int64_t i) {
        const int st = (int)(i % S);
        const int64_t row = b0 + i * G;
        unsigned char *d = kg_nbbuf + (size_t)st * sb;
        kg_nb_expect(&bar[st], sb);
        kg_nb_copy(d, in + row * s_in, rb, &bar[st]);
        if (hres)
            kg_nb_copy(d + rb, res + row * s_res, rb, &bar[st]);
    };
    if (tid == 0) {
        for (int s = 0; s < S; s++)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(kg_nb_saddr(&bar[s])) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (tid == 0)
        for (int64_t i = 0; i < S && i < nr; i++)
            issue(i);
    auto ok = [&](int k) -> bool { return k * T + tid < nvec; };
    VT wv[WR ? NV : 1], bv[WR ? NV : 1];
    if constexpr (WR)
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (ok(k)) {
                kg_nwb_vec<Op>(wv[k], wp ? wp + (k * T + tid) * V : NULL, (AT)1);
                kg_nwb_vec<Op>(bv[k], bp ? bp + (k * T + tid) * V : NULL, (AT)0);
            }
    for (int64_t i = 0; i < nr; i++) {
        const int st = (int)(i % S);
        const int64_t row = b0 + i * G;
        kg_nb_wait(&bar[st], (uint32_t)((i / S) & 1));
        const VT *sx = (const VT *)(kg_nbbuf + (size_t)st * sb);
        VT x[NV];
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (ok(k))
                x[k] = sx[k * T + tid];
        if (hres) {
            const VT *sh = (const VT *)(kg_nbbuf + (size_t)st * sb + rb);
#pragma unroll
            for (int k = 0; k < NV; k++)
                if (ok(k))
                    kg_nres_add<Op, V>(x[k], sh[k * T + tid], res + row * s_res + (k * T + tid) * V);
        }
        kg_nstat<AT> cs;
        cs.n = (AT)A.n;
        cs.a = (AT)0;
        if constexpr (Op::stats == KG_NS_MOMENTS)
            cs.a = kg_ngroup(kg_nfold_sum<Op, V>(x, ok), T, kg_nsum_f()) / (AT)A.n;
        else
            cs.c = kg_ngroup(kg_nfold<Op, V>(x, ok, (AT)0, [](AT a, AT v) { return a + v * v; }), T, kg_nsum_f());
        /* every lane has read the stage (kg_ngroup's barriers): its next row */
        if (tid == 0 && i + S < nr)
            issue(i + S);
        if constexpr (Op::stats == KG_NS_MOMENTS)
            cs.c = kg_ngroup(kg_nfold_dev2<Op, V>(x, ok, cs.a), T, kg_nsum_f());
        const kg_nrow<AT> rv = kg_nfinish<Op>(cs, A.n, A.eps);
        IT *orow = out + row * s_out;
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (ok(k)) {
                const int e0 = (k * T + tid) * V;
                VT y;
                if constexpr (WR) {
#pragma unroll
                    for (int e = 0; e < V; e++)
                        y.v[e] = Op::st(Op::apply(kg_nld<Op>(x[k], e), rv, kg_nld<Op>(wv[k], e), kg_nld<Op>(bv[k], e)));
                } else {
                    y = kg_napply<Op, V>(x[k], rv, wp ? wp + e0 : NULL, bp ? bp + e0 : NULL);
                }
                *(VT *)(orow + e0) = y;
            }
        if constexpr (Op::nres > 0)
            if (tid == 0)
                kg_nstore_results<Op>(A, row * kg_nrow_stride(A, KG_NO_S0), row * kg_nrow_stride(A, KG_NO_S1), rv);
    }
}

/* BULKW: a warp a row. The block (one a multiprocessor) stages the weight
   and bias once into shared memory; each of its T / 32 warps owns a ring of
   S stages (A.chunk) with its own mbarriers and serves rows w, w + W, ...
   (w its warp's index in the grid, W the grid's warps): its lane 0 fills
   the stages, and the warp reads the staged row from shared memory in each
   pass (sum, squared deviations, apply: lane l takes vectors 32 k + l), so
   no register holds a row and no block barrier runs after the start (the
   warp's butterflies are its reductions). The residual form writes h = x +
   r (rounded) over x in the stage, read back by the lane that wrote it. */
#define KG_NORMB_MAX_WBARS 64

/* BULKW's start and ring, the same in both forms: the block's barriers
   (bar: W S + 1, each warp's S, then the weight's and bias's) initialised,
   the weight and bias staged at the front of kg_nbbuf, the warp's ring
   after them filled with its first S rows by its lane 0, and the weight
   and bias waited for. Row i of the warp (i < nr) is row(i); stage(i) waits
   for it and returns its stage (then the residual's row, rb bytes on);
   issue(i) refills that stage with row i. */
template <class Op, int V, int T> struct kg_nbw_ring {
    typedef typename Op::in_t IT;
    typedef typename Op::acc_t AT;
    typedef kgd_vec<IT, V> VT;
    static constexpr int W = T / 32;
    const IT *in, *res;
    int64_t s_in, s_res, G, w0, nr;
    uint32_t rb, sb;
    int S;
    bool hres;
    unsigned char *ring;
    uint64_t *wb;
    const VT *sw, *sbias; /* the staged weight and bias */
    VT one, zero;         /* the weight and bias without them */
    bool hw, hb;          /* whether the call has a weight, a bias */

    __device__ __forceinline__ kg_nbw_ring(const kg_norm_args &A, uint64_t *bar)
    {
        const int tid = (int)threadIdx.x, lane = tid & 31, wi = tid >> 5;
        const IT *wp = (const IT *)A.p[KG_NO_W], *bp = (const IT *)A.p[KG_NO_B];
        in = (const IT *)A.p[KG_NO_IN];
        res = (const IT *)A.p[KG_NO_RES];
        s_in = kg_nrow_stride(A, KG_NO_IN);
        s_res = kg_nrow_stride(A, KG_NO_RES);
        S = (int)A.chunk;
        rb = (uint32_t)A.n * (uint32_t)sizeof(IT);
        hres = Op::residual && res != NULL;
        sb = hres ? 2 * rb : rb;
        hw = wp != NULL;
        hb = bp != NULL;
        sw = (const VT *)kg_nbbuf;
        sbias = (const VT *)(kg_nbbuf + (wp ? rb : 0));
        kg_nwb_vec<Op>(one, (const IT *)NULL, (AT)1);
        kg_nwb_vec<Op>(zero, (const IT *)NULL, (AT)0);
        ring = kg_nbbuf + (wp ? rb : 0) + (bp ? rb : 0) + (size_t)wi * S * sb;
        wb = &bar[wi * S];
        G = (int64_t)gridDim.x * W;
        w0 = (int64_t)blockIdx.x * W + wi;
        nr = A.rows > w0 ? (A.rows - w0 + G - 1) / G : 0; /* this warp's rows */
        if (tid == 0) {
            for (int s = 0; s < W * S + 1; s++)
                asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(kg_nb_saddr(&bar[s])) : "memory");
            asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        }
        __syncthreads();
        if (tid == 0) {
            kg_nb_expect(&bar[W * S], (wp ? rb : 0) + (bp ? rb : 0));
            if (wp)
                kg_nb_copy(kg_nbbuf, wp, rb, &bar[W * S]);
            if (bp)
                kg_nb_copy(kg_nbbuf + (wp ? rb : 0), bp, rb, &bar[W * S]);
        }
        if (lane == 0)
            for (int64_t i = 0; i < S && i < nr; i++)
                issue(i);
        if (wp || bp)
            kg_nb_wait(&bar[W * S], 0);
    }
    __device__ __forceinline__ int64_t row(int64_t i) const { return w0 + i * G; }
    __device__ __forceinline__ void issue(int64_t i)
    {
        const int st = (int)(i % S);
        unsigned char *d = ring + (size_t)st * sb;
        kg_nb_expect(&wb[st], sb);
        kg_nb_copy(d, in + row(i) * s_in, rb, &wb[st]);
        if (hres)
            kg_nb_copy(d + rb, res + row(i) * s_res, rb, &wb[st]);
    }
    __device__ __forceinline__ unsigned char *stage(int64_t i)
    {
        const int st = (int)(i % S);
        kg_nb_wait(&wb[st], (uint32_t)((i / S) & 1));
        return ring + (size_t)st * sb;
    }
    /* Writes the output of the row's vector v (values x, row values rv) at
       orow: the apply with the staged weight and bias. Both forms store so.
       x by value (with x a reference into the stage, BULKW ran 1-3 points
       slower than before the helper: H200, session 16 r1). */
    __device__ __forceinline__ void store(IT *orow, int v, const VT x, const kg_nrow<AT> &rv) const
    {
        VT wv = one, bv = zero, y;
        if (hw)
            wv = sw[v];
        if (hb)
            bv = sbias[v];
#pragma unroll
        for (int e = 0; e < V; e++)
            y.v[e] = Op::st(Op::apply(kg_nld<Op>(x, e), rv, kg_nld<Op>(wv, e), kg_nld<Op>(bv, e)));
        *(VT *)(orow + (int64_t)v * V) = y;
    }
};

template <class Op, int V, int T>
__device__ __forceinline__ void kg_norm_bulkw(const kg_norm_args &A)
{
    static_assert(Op::stats != KG_NS_LSE && Op::elementwise, "BULKW: the norms");
    static_assert(T % 32 == 0 && T <= 1024, "BULKW: whole warps");
    typedef typename Op::in_t IT;
    typedef typename Op::acc_t AT;
    typedef kgd_vec<IT, V> VT;
    __shared__ uint64_t bar[KG_NORMB_MAX_WBARS + 1]; /* the rings', then the weight's and bias's */
    kg_nbw_ring<Op, V, T> rg(A, bar);
    const int lane = (int)threadIdx.x & 31;
    const int nvec = (int)(A.n / V), nk = (nvec + 31) / 32;
    const int64_t s_out = kg_nrow_stride(A, KG_NO_OUT);
    IT *out = (IT *)A.p[KG_NO_OUT], *res = (IT *)A.p[KG_NO_RES];
    for (int64_t i = 0; i < rg.nr; i++) {
        const int64_t row = rg.row(i);
        unsigned char *stage = rg.stage(i);
        VT *sx = (VT *)stage;
        if (rg.hres) {
            const VT *sh = (const VT *)(stage + rg.rb);
#pragma unroll 4
            for (int k = 0; k < nk; k++) {
                const int v = k * 32 + lane;
                if (v < nvec) {
                    VT x = sx[v];
                    kg_nres_add<Op, V>(x, sh[v], res + row * rg.s_res + (int64_t)v * V);
                    sx[v] = x;
                }
            }
        }
        kg_nstat<AT> cs;
        cs.n = (AT)A.n;
        cs.a = (AT)0;
        AT a = (AT)0;
#pragma unroll 4
        for (int k = 0; k < nk; k++) {
            const int v = k * 32 + lane;
            if (v < nvec) {
                const VT x = sx[v];
#pragma unroll
                for (int e = 0; e < V; e++) {
                    const AT u = kg_nld<Op>(x, e);
                    if constexpr (Op::stats == KG_NS_MOMENTS)
                        a = a + u;
                    else
                        a = a + u * u;
                }
            }
        }
        a = kg_ngroup(a, 32, kg_nsum_f());
        if constexpr (Op::stats == KG_NS_MOMENTS) {
            cs.a = a / (AT)A.n;
            AT d2 = (AT)0;
#pragma unroll 4
            for (int k = 0; k < nk; k++) {
                const int v = k * 32 + lane;
                if (v < nvec) {
                    const VT x = sx[v];
#pragma unroll
                    for (int e = 0; e < V; e++) {
                        const AT d = kg_nld<Op>(x, e) - cs.a;
                        d2 = d2 + d * d;
                    }
                }
            }
            cs.c = kg_ngroup(d2, 32, kg_nsum_f());
        } else {
            cs.c = a;
        }
        const kg_nrow<AT> rv = kg_nfinish<Op>(cs, A.n, A.eps);
        IT *orow = out + row * s_out;
#pragma unroll 4
        for (int k = 0; k < nk; k++) {
            const int v = k * 32 + lane;
            if (v < nvec)
                rg.store(orow, v, sx[v], rv);
        }
        if constexpr (Op::nres > 0)
            if (lane == 0)
                kg_nstore_results<Op>(A, row * kg_nrow_stride(A, KG_NO_S0), row * kg_nrow_stride(A, KG_NO_S1), rv);
        /* every lane has read the stage (and written h, ordered before the
           copy engine's writes by the proxy fence): its row S ahead */
        if (rg.hres)
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncwarp();
        if (lane == 0 && i + rg.S < rg.nr)
            rg.issue(i + rg.S);
    }
}

/* BULKW with the row in registers (R vectors a lane at most): the warp
   copies its staged row (h = x + r for the residual form) into registers
   and refills the stage at once, so S rows stay in flight while it reduces
   and applies; each fold over four accumulators (vectors k, k + 4, ... in
   each; then (a0 + a1) + (a2 + a3)), each vector through an opaque copy as
   it is used (the row stays packed). */
template <class Op, int V, int T, int R>
__device__ __forceinline__ void kg_norm_bulkwr(const kg_norm_args &A)
{
    static_assert(Op::stats != KG_NS_LSE && Op::elementwise, "BULKW: the norms");
    static_assert(T % 32 == 0 && T <= 1024 && R % 4 == 0, "BULKW: whole warps, four accumulators");
    typedef typename Op::in_t IT;
    typedef typename Op::acc_t AT;
    typedef kgd_vec<IT, V> VT;
    __shared__ uint64_t bar[KG_NORMB_MAX_WBARS + 1];
    kg_nbw_ring<Op, V, T> rg(A, bar);
    const int lane = (int)threadIdx.x & 31;
    const int nvec = (int)(A.n / V);
    const int64_t s_out = kg_nrow_stride(A, KG_NO_OUT);
    IT *out = (IT *)A.p[KG_NO_OUT], *res = (IT *)A.p[KG_NO_RES];
    auto ok = [&](int k) -> bool { return k * 32 + lane < nvec; };
    /* the sum of f over the lane's values, four accumulators */
    auto fold = [&](const VT(&x)[R], auto f) -> AT {
        AT a[4] = {(AT)0, (AT)0, (AT)0, (AT)0};
#pragma unroll
        for (int k = 0; k < R; k++)
            if (ok(k)) {
                const VT xk = kg_nopaque(x[k]);
#pragma unroll
                for (int e = 0; e < V; e++)
                    a[k & 3] = a[k & 3] + f(kg_nld<Op>(xk, e));
            }
        return (a[0] + a[1]) + (a[2] + a[3]);
    };
    for (int64_t i = 0; i < rg.nr; i++) {
        const int64_t row = rg.row(i);
        const unsigned char *stage = rg.stage(i);
        const VT *sx = (const VT *)stage;
        VT x[R];
#pragma unroll
        for (int k = 0; k < R; k++)
            if (ok(k))
                x[k] = sx[k * 32 + lane];
        if (rg.hres) {
            const VT *sh = (const VT *)(stage + rg.rb);
#pragma unroll
            for (int k = 0; k < R; k++)
                if (ok(k))
                    kg_nres_add<Op, V>(x[k], sh[k * 32 + lane], res + row * rg.s_res + (int64_t)(k * 32 + lane) * V);
        }
        /* every lane holds its vectors: the stage takes the row S ahead */
        __syncwarp();
        if (lane == 0 && i + rg.S < rg.nr)
            rg.issue(i + rg.S);
        kg_nstat<AT> cs;
        cs.n = (AT)A.n;
        cs.a = (AT)0;
        if constexpr (Op::stats == KG_NS_MOMENTS) {
            cs.a = kg_ngroup(fold(x, [](AT u) { return u; }), 32, kg_nsum_f()) / (AT)A.n;
            const AT mean = cs.a;
            cs.c = kg_ngroup(fold(x,
                                  [mean](AT u) {
                                      const AT d = u - mean;
                                      return d * d;
                                  }),
                             32, kg_nsum_f());
        } else {
            cs.c = kg_ngroup(fold(x, [](AT u) { return u * u; }), 32, kg_nsum_f());
        }
        const kg_nrow<AT> rv = kg_nfinish<Op>(cs, A.n, A.eps);
        IT *orow = out + row * s_out;
#pragma unroll
        for (int k = 0; k < R; k++)
            if (ok(k))
                rg.store(orow, k * 32 + lane, kg_nopaque(x[k]), rv);
        if constexpr (Op::nres > 0)
            if (lane == 0)
                kg_nstore_results<Op>(A, row * kg_nrow_stride(A, KG_NO_S0), row * kg_nrow_stride(A, KG_NO_S1), rv);
    }
}

#endif
