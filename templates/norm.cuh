/*
 * norm.cuh - the loops every normalization kernel runs.
 *
 * A generated kernel is one of these loops instantiated with a functor Op
 * (templates/norm.cu, from gen/catalogue.lua's M.norm):
 *   Op::in_t, acc_t        storage and accumulator (f32 for 2-byte types)
 *   Op::stats              KG_NS_LSE, KG_NS_MOMENTS or KG_NS_SUMSQ
 *   Op::elementwise        true: writes an output element per input element
 *   Op::nres               per-row results it writes (0..2)
 *   Op::ld(x), Op::st(v)   storage <-> accumulator
 *   Op::apply(x, row, w, b), Op::result0(row), Op::result1(row)
 *
 * Statistics are exact per chunk and merged between chunks:
 *   lse      the chunk's maximum M (NaN propagates), then s = sum exp(x - sh)
 *            with sh = M where finite, else 0; chunks merge by rescaling
 *            (the online softmax), so a row of all -inf has s = 0 and
 *            lse = -inf, a +inf gives s = lse = +inf;
 *   moments  the chunk's mean, then the sum of squared deviations from it;
 *            chunks merge with Chan's formula;
 *   sumsq    the sum of squares.
 * Lanes combine through butterflies (within a warp) and a fixed left fold
 * over the warps (a block), so every result is the same run to run.
 */
#ifndef KG_NORM_CUH
#define KG_NORM_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <type_traits>

#include "kg_device.cuh"
#include "norm_params.h"

enum { KG_NS_LSE, KG_NS_MOMENTS, KG_NS_SUMSQ };

/* A row's values, as the catalogue's apply expressions name them. */
template <typename T> struct kg_nrow {
    T m, s, ls, lse, mean, rstd; /* ls = log(s) */
};

/* A row's running statistics. lse: a = the maximum, c = the sum of
   exp(x - shift(a)); moments: n, a = mean, c = M2; sumsq: c = the sum. */
template <typename T> struct kg_nstat {
    T n, a, c;
};

template <typename T> __device__ __forceinline__ T kg_nmax(T a, T b) { return (a != a || a > b) ? a : b; }

/* exp on the device: for float, 2^(x log2 e) on the special-function unit
   (within a few ulp; the argument's rounding adds |x| 2^-24 relative), so
   that the 2-byte types stay memory-bound; for double, exp. The catalogue's
   exp() in apply expressions becomes this (gen/norm.lua). */
__device__ __forceinline__ float kg_nexp(float x) { return exp2f(x * 1.4426950408889634f); }
__device__ __forceinline__ double kg_nexp(double x) { return exp(x); }
template <typename T> __device__ __forceinline__ T kg_nshift(T m) { return isfinite(m) ? m : (T)0; }
/* exp for a statistic's sum of exp(x - shift) only (never an output): 2^(x
   log2 e) with results below 2^-126 flushed to 0 (ex2.approx.ftz: no
   denormal fix-up around the special-function unit, 4 instructions an
   element fewer). The sum holds exp(0) = 1 from the row's maximum (or is
   infinite, NaN or all zeros), so the flushed terms, each below 2^-126, never
   reach its rounding. */
__device__ __forceinline__ float kg_nexp_sum(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.4426950408889634f));
    return y;
}
__device__ __forceinline__ double kg_nexp_sum(double x) { return exp(x); }

struct kg_nsum_f {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
struct kg_nmax_f {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return kg_nmax(a, b); }
};

/* Combines v over the aligned group of g lanes (g <= 32, a power of two) or,
   for g > 32, over the whole block (blockDim.x == g). Every lane of the
   group ends with the same value. Every lane of the warp (of the block)
   must call it. */
template <typename T, class F> __device__ __forceinline__ T kg_ngroup(T v, int g, F f)
{
    const int w = g < 32 ? g : 32;
    for (int m = w >> 1; m > 0; m >>= 1) {
        const T o = kgd_shfl_xor(v, m);
        v = (threadIdx.x & m) ? f(o, v) : f(v, o);
    }
    if (g > 32) {
        __shared__ T sh[1024 / 32]; /* any block */
        __syncthreads();            /* the previous call's readers are done */
        if ((threadIdx.x & 31) == 0)
            sh[threadIdx.x >> 5] = v;
        __syncthreads();
        v = sh[0];
        for (int k = 1; k < (g >> 5); k++)
            v = f(v, sh[k]);
    }
    return v;
}

/* lse: merges (m2, s2) into (m1, s1); s is relative to each max's shift. */
template <typename T> __device__ __forceinline__ void kg_nlse_merge(T &m1, T &s1, T m2, T s2)
{
    const T M = kg_nmax(m1, m2), sh = kg_nshift(M);
    const T t1 = s1 == (T)0 ? (T)0 : s1 * exp(kg_nshift(m1) - sh);
    const T t2 = s2 == (T)0 ? (T)0 : s2 * exp(kg_nshift(m2) - sh);
    m1 = M;
    s1 = t1 + t2;
}

/* moments: Chan's merge of (n2, mean2, M2_2) into (n1, mean1, M2_1). */
template <typename T> __device__ __forceinline__ void kg_nmom_merge(kg_nstat<T> &a, const kg_nstat<T> &b)
{
    if (b.n == (T)0)
        return;
    if (a.n == (T)0) {
        a = b;
        return;
    }
    const T n = a.n + b.n, d = b.a - a.a;
    if (!isfinite(a.a) || !isfinite(b.a)) {
        /* an infinite or NaN mean: the weighted mean (+-inf or NaN, as
           sum(x) / n is), and no variance (x - mean is NaN) */
        a.a = a.a * (a.n / n) + b.a * (b.n / n);
        a.c = (T)NAN;
        a.n = n;
        return;
    }
    a.a = a.a + d * (b.n / n);
    a.c = a.c + b.c + d * d * (a.n * (b.n / n));
    a.n = n;
}

template <typename T> __device__ __forceinline__ kg_nstat<T> kg_nstat_init()
{
    kg_nstat<T> s;
    s.n = (T)0;
    s.a = -(T)INFINITY;
    s.c = (T)0;
    return s;
}

template <class Op>
__device__ __forceinline__ void kg_nmerge(kg_nstat<typename Op::acc_t> &a, const kg_nstat<typename Op::acc_t> &b)
{
    if constexpr (Op::stats == KG_NS_LSE)
        kg_nlse_merge(a.a, a.c, b.a, b.c);
    else if constexpr (Op::stats == KG_NS_MOMENTS)
        kg_nmom_merge(a, b);
    else {
        a.n += b.n;
        a.c += b.c;
    }
}

/* The row's values from its statistics over n elements. */
template <class Op>
__device__ __forceinline__ kg_nrow<typename Op::acc_t> kg_nfinish(const kg_nstat<typename Op::acc_t> &s, int64_t n,
                                                                  double eps)
{
    typedef typename Op::acc_t T;
    kg_nrow<T> r;
    r.m = r.s = r.ls = r.lse = r.mean = r.rstd = (T)0;
    if constexpr (Op::stats == KG_NS_LSE) {
        r.m = kg_nshift(s.a);
        r.s = s.c;
        r.ls = log(r.s);
        r.lse = r.m + r.ls;
    } else if constexpr (Op::stats == KG_NS_MOMENTS) {
        r.mean = n > 0 ? s.a : (T)NAN;
        r.rstd = (T)1 / sqrt(s.c / (T)n + (T)eps);
    } else {
        r.rstd = (T)1 / sqrt(s.c / (T)n + (T)eps);
    }
    return r;
}

/* A read-only load of the vector type VT at p (16, 8, 4 or 2 bytes). */
template <typename T, typename VT> __device__ __forceinline__ VT kg_nldg(const T *p, const VT *)
{
    VT v;
    if constexpr (sizeof(VT) == 16) {
        const uint4 u = __ldg((const uint4 *)p);
        memcpy(&v, &u, 16);
    } else if constexpr (sizeof(VT) == 8) {
        const uint2 u = __ldg((const uint2 *)p);
        memcpy(&v, &u, 8);
    } else if constexpr (sizeof(VT) == 4) {
        const unsigned u = __ldg((const unsigned *)p);
        memcpy(&v, &u, 4);
    } else {
        const unsigned short u = __ldg((const unsigned short *)p);
        memcpy(&v, &u, 2);
    }
    return v;
}

/* A 16-byte load and store that stream (evict-first: ld.global.cs,
   st.global.cs), so that the rows leave the weight and bias in L1. */
template <typename T, typename VT> __device__ __forceinline__ VT kg_nldcs(const T *p, const VT *)
{
    static_assert(sizeof(VT) == 16, "kg_nldcs: 16-byte vectors");
    const uint4 u = __ldcs((const uint4 *)p);
    VT v;
    memcpy(&v, &u, 16);
    return v;
}
template <typename T, typename VT> __device__ __forceinline__ void kg_nstcs(T *p, const VT &v)
{
    static_assert(sizeof(VT) == 16, "kg_nstcs: 16-byte vectors");
    uint4 u;
    memcpy(&u, &v, 16);
    __stcs((uint4 *)p, u);
}

/* Writes a row's results: a reduction's (logsumexp) in the input's dtype,
   statistics (layer_norm's mean, rstd) in the accumulator's. */
template <class Op>
__device__ __forceinline__ void kg_nstore_results(const kg_norm_args &A, int64_t o0, int64_t o1,
                                                  const kg_nrow<typename Op::acc_t> &rv)
{
    typedef typename Op::acc_t AT;
    if (!A.p[KG_NO_S0] && !A.p[KG_NO_S1])
        return;
    if constexpr (!Op::elementwise) {
        if (A.p[KG_NO_S0])
            ((typename Op::in_t *)A.p[KG_NO_S0])[o0] = Op::st(Op::result0(rv));
    } else {
        if (A.p[KG_NO_S0])
            ((AT *)A.p[KG_NO_S0])[o0] = Op::result0(rv);
        if (Op::nres > 1 && A.p[KG_NO_S1])
            ((AT *)A.p[KG_NO_S1])[o1] = Op::result1(rv);
    }
}

/* Offsets of row `row` for every operand. */
__device__ __forceinline__ void kg_nouter(const kg_norm_args &A, int64_t row, int64_t (&off)[KG_NORM_NOPS])
{
    const kg_norm_dims &D = A.outer;
#pragma unroll
    for (int k = 0; k < KG_NORM_NOPS; k++)
        off[k] = 0;
    int64_t r = row;
#pragma unroll 1
    for (int d = 0; d < D.n; d++) {
        int64_t q, m;
        if (d == D.n - 1) {
            q = 0;
            m = r;
        } else if (A.fast) {
            const uint32_t r32 = (uint32_t)r;
            const uint32_t q32 = kgd_div_magic(r32, D.magic[d], D.shift[d]);
            q = q32;
            m = r32 - q32 * (uint32_t)D.size[d];
        } else {
            q = r / D.size[d];
            m = r - q * D.size[d];
        }
#pragma unroll
        for (int k = 0; k < KG_NORM_NOPS; k++)
            off[k] += m * D.st[d][k];
        r = q;
    }
}

/* Offset of normalized element j for operand k (STRIDED; any dims). */
__device__ __forceinline__ int64_t kg_ninner(const kg_norm_dims &D, int64_t j, int k)
{
    if (D.n == 1)
        return j * D.st[0][k];
    int64_t off = 0;
#pragma unroll 1
    for (int d = 0; d < D.n; d++) {
        const int64_t q = d == D.n - 1 ? 0 : j / D.size[d];
        off += (j - q * D.size[d]) * D.st[d][k];
        j = q;
    }
    return off;
}

/* A copy of v the compiler cannot see through (an empty asm per word):
   values computed from it are not shared with those computed from v, so
   LEAN holds the 2-byte types' rows packed and unpacks them in each pass
   rather than holding both forms. */
template <class VT> __device__ __forceinline__ VT kg_nopaque(const VT &v)
{
    static_assert(sizeof(VT) % 4 == 0, "kg_nopaque: whole words");
    uint32_t w[sizeof(VT) / 4];
    memcpy(w, &v, sizeof v);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(VT) / 4); i++)
        asm volatile("" : "+r"(w[i]));
    VT o;
    memcpy(&o, w, sizeof o);
    return o;
}

/* Element e of vector x in the accumulator's type, as Op::ld(x.v[e]); bf16
   into float straight from the vector's 32-bit words: the high element by a
   mask, the low one by a shift, one instruction each (element by element
   the compiler moves the high half down and shifts it back, two). Exact. */
template <class Op, int V>
__device__ __forceinline__ typename Op::acc_t kg_nld(const kgd_vec<typename Op::in_t, V> &x, int e)
{
    if constexpr (std::is_same<typename Op::in_t, __nv_bfloat16>::value &&
                  std::is_same<typename Op::acc_t, float>::value && V % 2 == 0) {
        /* the word as a word (memcpy at the element's 2-byte alignment read
           a vector in shared memory byte by byte); only the half of element
           e is used, which no store to element e ^ 1 changes */
        const uint32_t w = reinterpret_cast<const uint32_t *>(&x)[e >> 1];
        return __uint_as_float(e & 1 ? w & 0xffff0000u : w << 16);
    } else {
        return Op::ld(x.v[e]);
    }
}

/* Folds a = f(a, value) over a lane's values x[k] (k < NX with ok(k)), in
   order, each value in the accumulator's type. OPQ (2-byte types): each
   vector through kg_nopaque as it is used, so its unpacked values die with
   the fold (the row stays packed between passes). */
template <class Op, int V, int NX, bool OPQ = false, class VT, class OK, class F>
__device__ __forceinline__ typename Op::acc_t kg_nfold(const VT (&x)[NX], OK ok, typename Op::acc_t a, F f)
{
#pragma unroll
    for (int k = 0; k < NX; k++)
        if (ok(k)) {
            if constexpr (OPQ && sizeof(typename Op::in_t) == 2) {
                const VT xk = kg_nopaque(x[k]);
#pragma unroll
                for (int e = 0; e < V; e++)
                    a = f(a, kg_nld<Op>(xk, e));
            } else {
#pragma unroll
                for (int e = 0; e < V; e++)
                    a = f(a, kg_nld<Op>(x[k], e));
            }
        }
    return a;
}

/* The lane's maximum (fmax skips NaN: a NaN still makes the sum of exps,
   so every result, NaN) and its sum of exp(x - sh). */
template <class Op, int V, int NX, class VT, class OK>
__device__ __forceinline__ typename Op::acc_t kg_nfold_max(const VT (&x)[NX], OK ok)
{
    typedef typename Op::acc_t AT;
    return kg_nfold<Op, V>(x, ok, -(AT)INFINITY, [](AT a, AT v) { return fmax(a, v); });
}
template <class Op, int V, int NX, bool FTZ = false, class VT, class OK>
__device__ __forceinline__ typename Op::acc_t kg_nfold_exp(const VT (&x)[NX], OK ok, typename Op::acc_t sh)
{
    typedef typename Op::acc_t AT;
    if constexpr (FTZ)
        return kg_nfold<Op, V>(x, ok, (AT)0, [sh](AT a, AT v) { return a + kg_nexp_sum(v - sh); });
    else
        return kg_nfold<Op, V>(x, ok, (AT)0, [sh](AT a, AT v) { return a + kg_nexp(v - sh); });
}
/* The maximum by packed pairs for the 2-byte types (max.bf16x2 / max.f16x2
   skip NaN as fmax does; a maximum is exact in any precision), else
   kg_nfold_max: half an instruction an element, none to unpack. */
template <class Op, int V, int NX, class VT, class OK>
__device__ __forceinline__ typename Op::acc_t kg_nfold_max2(const VT (&x)[NX], OK ok)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    if constexpr (sizeof(T) == 2 && V % 2 == 0) {
        typedef typename std::conditional<std::is_same<T, __half>::value, __half2, __nv_bfloat162>::type T2;
        T2 m;
        m.x = m.y = Op::st(-(AT)INFINITY);
#pragma unroll
        for (int k = 0; k < NX; k++)
            if (ok(k)) {
                T2 w[V / 2];
                memcpy(w, &x[k], sizeof w);
#pragma unroll
                for (int i = 0; i < V / 2; i++)
                    m = __hmax2(m, w[i]);
            }
        return fmax(Op::ld(m.x), Op::ld(m.y));
    } else {
        return kg_nfold_max<Op, V>(x, ok);
    }
}

/* The sum, and the sum of squared deviations from mean. */
template <class Op, int V, int NX, bool OPQ = false, class VT, class OK>
__device__ __forceinline__ typename Op::acc_t kg_nfold_sum(const VT (&x)[NX], OK ok)
{
    typedef typename Op::acc_t AT;
    return kg_nfold<Op, V, NX, OPQ>(x, ok, (AT)0, [](AT a, AT v) { return a + v; });
}
template <class Op, int V, int NX, bool OPQ = false, class VT, class OK>
__device__ __forceinline__ typename Op::acc_t kg_nfold_dev2(const VT (&x)[NX], OK ok, typename Op::acc_t mean)
{
    typedef typename Op::acc_t AT;
    return kg_nfold<Op, V, NX, OPQ>(x, ok, (AT)0, [mean](AT a, AT v) {
        const AT d = v - mean;
        return a + d * d;
    });
}

/* One lane's statistics of its values x[i] (i < NX with ok(i)), in the form
   chunks merge in: lse (its max, the sum of exp(x - shift(max))), moments
   (its count, mean and M2, two passes over its registers), sumsq. */
template <class Op, int V, int NX, class VT, class OK>
__device__ __forceinline__ kg_nstat<typename Op::acc_t> kg_nlocal(const VT (&x)[NX], OK ok)
{
    typedef typename Op::acc_t AT;
    kg_nstat<AT> s;
    s.n = 0;
    s.a = 0;
    s.c = 0;
    if constexpr (Op::stats == KG_NS_LSE) {
        s.a = kg_nfold_max<Op, V>(x, ok);
        s.c = kg_nfold_exp<Op, V>(x, ok, kg_nshift(s.a));
    } else if constexpr (Op::stats == KG_NS_MOMENTS) {
        AT n = 0, sum = 0;
#pragma unroll
        for (int k = 0; k < NX; k++)
            if (ok(k)) {
                n += (AT)V;
#pragma unroll
                for (int e = 0; e < V; e++)
                    sum += kg_nld<Op>(x[k], e);
            }
        const AT mean = n > (AT)0 ? sum / n : (AT)0;
        s.n = n;
        s.a = mean;
        s.c = kg_nfold_dev2<Op, V>(x, ok, mean);
    } else {
        AT n = 0, q = 0;
#pragma unroll
        for (int k = 0; k < NX; k++)
            if (ok(k)) {
                n += (AT)V;
#pragma unroll
                for (int e = 0; e < V; e++) {
                    const AT v = kg_nld<Op>(x[k], e);
                    q += v * v;
                }
            }
        s.n = n;
        s.c = q;
    }
    return s;
}

/* Merges lanes' statistics over the group of g lanes (as kg_ngroup: g <= 32
   aligned lanes, or the whole block), one reduction for any statistic;
   partners merge (lower, upper) so every lane ends with the same bits. */
template <class Op>
__device__ __forceinline__ kg_nstat<typename Op::acc_t> kg_nstat_group(kg_nstat<typename Op::acc_t> v, int g)
{
    typedef typename Op::acc_t AT;
    const int w = g < 32 ? g : 32;
    for (int m = w >> 1; m > 0; m >>= 1) {
        kg_nstat<AT> o;
        o.n = kgd_shfl_xor(v.n, m);
        o.a = kgd_shfl_xor(v.a, m);
        o.c = kgd_shfl_xor(v.c, m);
        if (threadIdx.x & m) {
            kg_nmerge<Op>(o, v);
            v = o;
        } else {
            kg_nmerge<Op>(v, o);
        }
    }
    if (g > 32) {
        __shared__ kg_nstat<AT> sh[1024 / 32];
        __syncthreads(); /* the previous call's readers are done */
        if ((threadIdx.x & 31) == 0)
            sh[threadIdx.x >> 5] = v;
        __syncthreads();
        v = sh[0];
        for (int k = 1; k < (g >> 5); k++)
            kg_nmerge<Op>(v, sh[k]);
    }
    return v;
}

/*
 * The statistics of one chunk of a row held by a group of g lanes: lane
 * values x[k] where ok(k), cnt elements in all. sumsq, and moments of 4- and
 * 8-byte types: one merged group reduction (each lane's count, mean, M2 or
 * sum of squares); lse, and moments of the 2-byte types: two cheap
 * reductions (2026-12-01 window 2: merging (max, sum) pairs costs exps and
 * ran logsumexp rows at 68% instead of 97% of copy, packed softmax rows at
 * 31-44% instead of 75-85%; merged moments ran f32 layer_norm at 85% instead
 * of 78% but bf16 at 48% instead of 62%).
 */
template <class Op, int V, int NX, bool FTZ = false, class VT, class OK>
__device__ __forceinline__ kg_nstat<typename Op::acc_t> kg_nchunk_stat(const VT (&x)[NX], OK ok, int g, int64_t cnt)
{
    typedef typename Op::acc_t AT;
    typedef typename Op::in_t T;
    if constexpr (Op::stats == KG_NS_SUMSQ || (Op::stats == KG_NS_MOMENTS && sizeof(T) >= 4)) {
        return kg_nstat_group<Op>(kg_nlocal<Op, V, NX>(x, ok), g);
    } else {
        kg_nstat<AT> cs;
        cs.n = (AT)cnt;
        if constexpr (Op::stats == KG_NS_LSE) {
            /* FTZ: also the maximum by packed pairs */
            const AT m =
                kg_ngroup(FTZ ? kg_nfold_max2<Op, V>(x, ok) : kg_nfold_max<Op, V>(x, ok), g, kg_nmax_f());
            cs.a = m;
            cs.c = kg_ngroup(kg_nfold_exp<Op, V, NX, FTZ>(x, ok, kg_nshift(m)), g, kg_nsum_f());
        } else {
            /* moments of the 2-byte types: the mean, then the squared deviations */
            const AT mean = kg_ngroup(kg_nfold_sum<Op, V>(x, ok), g, kg_nsum_f()) / (AT)cnt;
            cs.a = mean;
            cs.c = kg_ngroup(kg_nfold_dev2<Op, V>(x, ok, mean), g, kg_nsum_f());
        }
        return cs;
    }
}

/* kg_nchunk_stat's lse statistics of a row held whole by its group, each
   exp(x - shift) also handed to keep(k, e, value) for the apply to reuse
   (LEAN's softmax: f32 / f64 in place of x, the 2-byte types' EXPS in
   f32). FTZ as kg_nchunk_stat's: the maximum by packed pairs, the exps by
   kg_nexp_sum. The same operations in the same order as kg_nchunk_stat,
   so the same bits (gpu/lean2_matches_lean4_bits). */
template <class Op, int V, int NX, bool FTZ, class VT, class OK, class K>
__device__ __forceinline__ kg_nstat<typename Op::acc_t> kg_nlse_kept(const VT (&x)[NX], OK ok, int g, int64_t cnt,
                                                                     K keep)
{
    typedef typename Op::acc_t AT;
    const AT m = kg_ngroup(FTZ ? kg_nfold_max2<Op, V>(x, ok) : kg_nfold_max<Op, V>(x, ok), g, kg_nmax_f());
    const AT sh = kg_nshift(m); /* NaN: the sum below is NaN */
    AT s = 0;
#pragma unroll
    for (int k = 0; k < NX; k++)
        if (ok(k))
#pragma unroll
            for (int e = 0; e < V; e++) {
                const AT v = kg_nld<Op>(x[k], e) - sh;
                const AT ex = FTZ ? kg_nexp_sum(v) : kg_nexp(v);
                keep(k, e, ex);
                s = s + ex;
            }
    kg_nstat<AT> cs;
    cs.n = (AT)cnt;
    cs.a = m;
    cs.c = kg_ngroup(s, g, kg_nsum_f());
    return cs;
}

/*
 * LEAN moments (layer_norm): the row's count, mean and M2, exactly, by two
 * passes over the lane's registers and cheap sums. A group of <= 32 lanes:
 * the sum over the group, the mean, then the squared deviations from it over
 * the group (two butterflies of one value, no division in them). A block:
 * each warp the same over its own values (its count, sum, mean, M2), then
 * one round through shared memory in which every lane merges the warps in
 * order: M2 = sum of M2_w + n_w (mean_w - mean)^2, a sum of non-negative
 * terms (no cancellation). The merged reduction (kg_nstat_group: three
 * values a step, Chan's merge with a division at each) costs ~3x the
 * instructions and, for a block, 15 serial merges (hidden 16384 f32: 75.2%
 * of copy against 85.5% in r3). Non-finite values: the mean is sum / n (+-inf or
 * NaN) and M2 NaN, as the reference's.
 */
template <class Op, int V, int NX, bool OPQ = false, bool COPY = false, class VT, class OK>
__device__ __forceinline__ kg_nstat<typename Op::acc_t> kg_nmoments(const VT (&x0)[NX], OK ok, int g, int64_t n,
                                                                    int nvec)
{
    /* COPY (2-byte): an opaque copy of the row for each pass (x0 itself
       otherwise) */
    VT xc[COPY ? NX : 1];
    if constexpr (COPY)
#pragma unroll
        for (int k = 0; k < NX; k++)
            xc[k] = kg_nopaque(x0[k]);
    const VT(&x)[NX] = *reinterpret_cast<const VT(*)[NX]>(COPY ? xc : x0);
    typedef typename Op::acc_t AT;
    const int w = g < 32 ? g : 32;
    AT nw = (AT)n; /* the elements this lane's warp (its group) holds */
    if (g > 32) {
        const int l0 = (int)(threadIdx.x & ~31u);
        int c = 0;
#pragma unroll
        for (int k = 0; k < NX; k++) {
            const int r = nvec - (k * g + l0);
            c += r < 0 ? 0 : r > 32 ? 32 : r;
        }
        nw = (AT)(c * V);
    }
    const AT sw = kg_ngroup(kg_nfold_sum<Op, V, NX, OPQ>(x, ok), w, kg_nsum_f());
    const AT mw = nw > (AT)0 ? sw / nw : (AT)0;
    if constexpr (COPY)
#pragma unroll
        for (int k = 0; k < NX; k++)
            xc[k] = kg_nopaque(x0[k]);
    const AT qw = kg_ngroup(kg_nfold_dev2<Op, V, NX, OPQ>(x, ok, mw), w, kg_nsum_f());
    kg_nstat<AT> st;
    st.n = (AT)n;
    st.a = mw;
    st.c = qw;
    if (g > 32) {
        struct q4 {
            AT n, s, m, q;
        };
        __shared__ q4 sh[1024 / 32];
        __syncthreads(); /* the previous row's readers are done */
        if ((threadIdx.x & 31) == 0)
            sh[threadIdx.x >> 5] = q4{nw, sw, mw, qw};
        __syncthreads();
        const int nwarps = g >> 5;
        AT s = 0;
        for (int k = 0; k < nwarps; k++)
            s += sh[k].s;
        const AT mean = s / (AT)n;
        AT q = 0;
        for (int k = 0; k < nwarps; k++) {
            const q4 e = sh[k];
            if (e.n > (AT)0) {
                const AT d = e.m - mean;
                q += e.q + e.n * (d * d);
            }
        }
        st.a = mean;
        st.c = q;
    }
    return st;
}

/* A weight or bias vector: loaded from p (read-only, ld.global.nc: free to
   move above the stores), or every element dflt (1 or 0, exact in every
   storage type) where p is NULL, so that the apply converts it unselected. */
template <class Op, int V>
__device__ __forceinline__ void kg_nwb_vec(kgd_vec<typename Op::in_t, V> &v, const typename Op::in_t *p,
                                           typename Op::acc_t dflt)
{
    if (p) {
        v = kg_nldg(p, (const kgd_vec<typename Op::in_t, V> *)0);
    } else {
#pragma unroll
        for (int e = 0; e < V; e++)
            v.v[e] = Op::st(dflt);
    }
}

/* The output vector of input vector x of a row with values rv; w and b
   point at the vector's weight and bias (NULL: 1 and 0). */
template <class Op, int V>
__device__ __forceinline__ kgd_vec<typename Op::in_t, V>
kg_napply(const kgd_vec<typename Op::in_t, V> &x, const kg_nrow<typename Op::acc_t> &rv, const typename Op::in_t *w,
          const typename Op::in_t *b)
{
    typedef typename Op::acc_t AT;
    typedef kgd_vec<typename Op::in_t, V> VT;
    /* read-only loads (ld.global.nc): free to move above the stores */
    VT wv, bv, y;
    if constexpr (sizeof(typename Op::in_t) == 2) {
        kg_nwb_vec<Op>(wv, w, (AT)1);
        kg_nwb_vec<Op>(bv, b, (AT)0);
#pragma unroll
        for (int e = 0; e < V; e++)
            y.v[e] = Op::st(Op::apply(kg_nld<Op>(x, e), rv, kg_nld<Op>(wv, e), kg_nld<Op>(bv, e)));
    } else {
        /* (the wider types select: vectors of 1 and 0 held in registers
           spilled f32's LEAN8P, 128 registers) */
        if (w)
            wv = kg_nldg(w, (const VT *)0);
        if (b)
            bv = kg_nldg(b, (const VT *)0);
#pragma unroll
        for (int e = 0; e < V; e++)
            y.v[e] = Op::st(Op::apply(Op::ld(x.v[e]), rv, w ? Op::ld(wv.v[e]) : (AT)1, b ? Op::ld(bv.v[e]) : (AT)0));
    }
    return y;
}

/* A lane's place in its row's group of g lanes: aligned lanes of a warp
   (g <= 32, several groups a block) or the whole block (g > 32). */
struct kg_nlanes {
    int g, lane, slots, slot;
};
__device__ __forceinline__ kg_nlanes kg_nlanes_of(int g)
{
    const bool whole = g > 32;
    kg_nlanes L;
    L.g = g;
    L.lane = whole ? (int)threadIdx.x : (int)(threadIdx.x & (g - 1));
    L.slots = whole ? 1 : (int)blockDim.x / g;
    L.slot = whole ? 0 : (int)threadIdx.x / g;
    return L;
}

/* LEAN: operand k's stride between rows (one outer dim at most). */
__device__ __forceinline__ int64_t kg_nrow_stride(const kg_norm_args &A, int k)
{
    return A.outer.n > 0 ? A.outer.st[0][k] : 0;
}

/*
 * ROWS, PACKED, STRIDED: a group of g lanes serves R rows at once (R = 1,
 * or KG_NORM_PACK / 2 in the packed classes). Each lane holds up to NVR
 * vectors of V elements per row per chunk (KG_NORM_NV, or 1 packed): vector k of lane l in chunk c is
 * the row's vector c * g * nv + k * g + l, so each of a group's loads is
 * contiguous. V = 1 (STRIDED) addresses elements through the inner dims.
 * A row of one chunk stays in registers from the statistics to the apply;
 * longer rows are read again (the fused residual form reads back h).
 */
template <class Op, int V, int R, int NVR, bool GEN, bool RES>
__device__ __forceinline__ void kg_norm_rows(const kg_norm_args &A)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    typedef kgd_vec<T, V> VT;
    const kg_nlanes L = kg_nlanes_of(A.group);
    const int g = L.g, lane = L.lane, slots = L.slots, slot = L.slot;
    const int64_t n = A.n, nvec = n / V;
    const int nv = A.nv;
    const int64_t per_chunk = (int64_t)g * nv;
    const int64_t nchunks = (nvec + per_chunk - 1) / per_chunk;
    const int64_t step = (int64_t)slots * R;
    const T *in = (const T *)A.p[KG_NO_IN];
    T *out = (T *)A.p[KG_NO_OUT];
    T *res = (T *)A.p[KG_NO_RES];
    const T *wp = (const T *)A.p[KG_NO_W];
    const T *bp = (const T *)A.p[KG_NO_B];

    for (int64_t base = (int64_t)blockIdx.x * step; base < A.rows; base += (int64_t)gridDim.x * step) {
        int64_t row[R];
        bool act[R];
        int64_t off[KG_NORM_NOPS];
        if constexpr (R == 1) {
            row[0] = base + slot;
            act[0] = row[0] < A.rows;
            kg_nouter(A, act[0] ? row[0] : 0, off);
        } else {
#pragma unroll
            for (int r = 0; r < R; r++) {
                row[r] = base + (int64_t)r * slots + slot;
                act[r] = row[r] < A.rows;
            }
        }
        /* the offset of operand k of row r (PACKED: one outer dim at most) */
        auto roff = [&](int r, int k) -> int64_t {
            if constexpr (R == 1)
                return off[k];
            else
                return A.outer.n ? row[r] * A.outer.st[0][k] : 0;
        };
        /* element offset of vector index vi for operand k */
        auto eoff = [&](int64_t vi, int k) -> int64_t {
            if constexpr (GEN)
                return kg_ninner(A.inner, vi, k);
            else
                return vi * V;
        };
        /* vector vi of the row's input (or, reading back, of h in the residual) */
        auto load_in = [&](int r, int64_t vi, const T *base, int k) -> VT {
            VT x;
            if constexpr (GEN)
                x.v[0] = base[roff(r, k) + eoff(vi, k)];
            else
                x = *(const VT *)(base + roff(r, k) + eoff(vi, k));
            return x;
        };
        const bool hres = RES && res != NULL; /* RES: this kernel has the residual code */
        auto valid = [&](int r, int k, int64_t c0) -> bool {
            return act[r] && k < nv && c0 + (int64_t)k * g + lane < nvec;
        };

        kg_nstat<AT> st[R];
#pragma unroll
        for (int r = 0; r < R; r++)
            st[r] = kg_nstat_init<AT>();
        VT x[R][NVR];
        for (int64_t c = 0; c < nchunks; c++) {
            const int64_t c0 = c * per_chunk;
            /* every load of the chunk first (no store between them), then
               the residual's h = x + r written back */
#pragma unroll
            for (int r = 0; r < R; r++)
#pragma unroll
                for (int k = 0; k < NVR; k++)
                    if (valid(r, k, c0))
                        x[r][k] = load_in(r, c0 + (int64_t)k * g + lane, in, KG_NO_IN);
            if (hres) {
                VT hv[R][NVR];
#pragma unroll
                for (int r = 0; r < R; r++)
#pragma unroll
                    for (int k = 0; k < NVR; k++)
                        if (valid(r, k, c0))
                            hv[r][k] = load_in(r, c0 + (int64_t)k * g + lane, res, KG_NO_RES);
#pragma unroll
                for (int r = 0; r < R; r++)
#pragma unroll
                    for (int k = 0; k < NVR; k++)
                        if (valid(r, k, c0)) {
#pragma unroll
                            for (int e = 0; e < V; e++)
                                hv[r][k].v[e] = Op::st(kg_nld<Op>(x[r][k], e) + kg_nld<Op>(hv[r][k], e));
                            T *rp = res + roff(r, KG_NO_RES) + eoff(c0 + (int64_t)k * g + lane, KG_NO_RES);
                            if constexpr (GEN)
                                *rp = hv[r][k].v[0];
                            else
                                *(VT *)rp = hv[r][k];
                            x[r][k] = hv[r][k];
                        }
            }
            /* statistics of the chunk (kg_nchunk_stat) */
#pragma unroll
            for (int r = 0; r < R; r++) {
                const int64_t cnt = (nvec - c0 < per_chunk ? nvec - c0 : per_chunk) * V;
                kg_nmerge<Op>(st[r], kg_nchunk_stat<Op, V, NVR>(
                                         x[r], [&](int k) { return valid(r, k, c0); }, g, cnt));
            }
        }

        kg_nrow<AT> rv[R];
#pragma unroll
        for (int r = 0; r < R; r++)
            rv[r] = kg_nfinish<Op>(st[r], n, A.eps);

        if constexpr (Op::elementwise) {
            for (int64_t c = 0; c < nchunks; c++) {
                const int64_t c0 = c * per_chunk;
                /* the row again when it streams: every load before the stores */
                if (nchunks > 1) {
#pragma unroll
                    for (int r = 0; r < R; r++)
#pragma unroll
                        for (int k = 0; k < NVR; k++)
                            if (valid(r, k, c0))
                                x[r][k] = hres ? load_in(r, c0 + (int64_t)k * g + lane, res, KG_NO_RES)
                                               : load_in(r, c0 + (int64_t)k * g + lane, in, KG_NO_IN);
                }
#pragma unroll
                for (int r = 0; r < R; r++)
#pragma unroll
                    for (int k = 0; k < NVR; k++) {
                        const int64_t vi = c0 + (int64_t)k * g + lane;
                        if (!valid(r, k, c0))
                            continue;
                        const VT y = kg_napply<Op, V>(x[r][k], rv[r], wp ? wp + eoff(vi, KG_NO_W) : NULL,
                                                      bp ? bp + eoff(vi, KG_NO_B) : NULL);
                        if constexpr (GEN)
                            out[roff(r, KG_NO_OUT) + eoff(vi, KG_NO_OUT)] = y.v[0];
                        else
                            *(VT *)(out + roff(r, KG_NO_OUT) + eoff(vi, KG_NO_OUT)) = y;
                    }
            }
        }
        if constexpr (Op::nres > 0) {
#pragma unroll
            for (int r = 0; r < R; r++)
                if (act[r] && lane == 0)
                    kg_nstore_results<Op>(A, roff(r, KG_NO_S0), roff(r, KG_NO_S1), rv[r]);
        }
    }
}

/* The fused residual form: x += h (rounded to the dtype), written to dst. */
template <class Op, int V>
__device__ __forceinline__ void kg_nres_add(kgd_vec<typename Op::in_t, V> &x, const kgd_vec<typename Op::in_t, V> &h,
                                            typename Op::in_t *dst)
{
#pragma unroll
    for (int e = 0; e < V; e++)
        x.v[e] = Op::st(kg_nld<Op>(x, e) + kg_nld<Op>(h, e));
    *(kgd_vec<typename Op::in_t, V> *)dst = x;
}

/* LEAN: a lane's vectors x[k] of the row at xin (element offset
   at(k)) where ok(k), every load first; with a residual row xr (not NULL)
   its vectors are added and h = x + r written back (x becomes h). */
template <class Op, int V, int NV, bool CS = false, class AT_, class OK>
__device__ __forceinline__ void kg_nload_row(kgd_vec<typename Op::in_t, V> (&x)[NV], const typename Op::in_t *xin,
                                             typename Op::in_t *xr, AT_ at, OK ok)
{
    typedef kgd_vec<typename Op::in_t, V> VT;
#pragma unroll
    for (int k = 0; k < NV; k++)
        if (ok(k)) {
            if constexpr (CS)
                x[k] = kg_nldcs(xin + at(k), (const VT *)0);
            else
                x[k] = *(const VT *)(xin + at(k));
        }
    if (xr) {
        VT h[NV];
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (ok(k))
                h[k] = *(const VT *)(xr + at(k));
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (ok(k))
                kg_nres_add<Op, V>(x[k], h[k], xr + at(k));
    }
}

/*
 * LEAN (ROWS where a row is one chunk and the rows are one outer dim at
 * most): the same lane layout as ROWS (vector k of lane l is the row's
 * vector k * g + l, NV a lane), without ROWS's general addressing and chunk
 * loop, so fewer registers and more rows resident per multiprocessor. Each
 * group loads its whole row (and the residual's) before any reduction, then
 * statistics (kg_nchunk_stat), apply and stores from registers: one read
 * and one write. NV is a template argument (the class: LEAN4, LEAN8) so the
 * registers held are what the row needs.
 */
/* LEAN variants (X, bits; 0: the plain kernel): */
enum {
    KG_NX_NMOM = 1,   /* 2-byte moments by kg_nmoments (one block round) instead of two group sums */
    KG_NX_OPQ = 2,    /* 2-byte: each vector opaque as each pass uses it */
    KG_NX_NOCOPY = 4, /* 2-byte: no opaque copy of the whole row before the statistics */
    KG_NX_OADDR = 8,  /* 2-byte: the output, weight and bias pointers opaque before the apply */
    KG_NX_CS = 16,    /* streaming cache hints: rows loaded and stored evict-first */
    KG_NX_RECOPY = 32, /* 2-byte, with NMOM: an opaque copy of the row before each pass */
    KG_NX_FTZ = 64,    /* lse: the sum's exps by kg_nexp_sum */
    KG_NX_PF = 128,    /* the group's next row loaded (and its residual) before this row's statistics */
    KG_NX_EXPS = 256   /* 2-byte softmax with FTZ: the sum's exps kept in registers (NV x V floats) and reused by
                          the apply, which computed the same values (the same bits, half the exps) */
};

/* LEAN's and LEAN2R's 2-byte statistics (kg_nlean_stat2) run on a copy of
   the packed row, opaque unless KG_NX_NOCOPY, so the unpacked values die with
   the pass. The copy stays outside kg_nlean_stat2: made inside it (x by
   reference), nvcc numbered the unpacked halves in another order and ptxas
   scheduled the residual rms_norm and LEAN8S kernels differently (PTX and
   cubin compared on this machine, 2026-12-04); made here, both kernels'
   machine code is main's byte for byte. */
template <int X, class VT, int NV> __device__ __forceinline__ void kg_nlean_copy2(VT (&xs)[NV], const VT (&x)[NV])
{
#pragma unroll
    for (int k = 0; k < NV; k++)
        xs[k] = (X & KG_NX_NOCOPY) ? x[k] : kg_nopaque(x[k]);
}

/* LEAN's and LEAN2R's 2-byte statistics of a row held whole by its group
   (xs: kg_nlean_copy2's copy, NV vectors a lane; act: the group's row is
   real, nvec its vectors) into rv for the variants X. One helper for both
   kernels, so LEAN2R keeps LEAN2's operations in LEAN2's order
   (gpu/lean2_matches_lean4_bits). */
template <class Op, int V, int NV, int X, class VT, class OK>
__device__ __forceinline__ void kg_nlean_stat2(kg_nrow<typename Op::acc_t> &rv, VT (&xs)[NV], const OK &ok, int g,
                                               const kg_norm_args &A, bool act, int nvec)
{
    typedef typename Op::acc_t AT;
    /* the 2-byte types: statistics of an opaque copy, so the
       unpacked values die with the pass (the row stays packed);
       their moments stay two group reductions (kg_nchunk_stat):
       kg_nmoments ran bf16 layer_norm at 60-69% of copy against
       68-81% in every 2-byte kernel (r3, with the merged form
       beside it) and at 46-73% in the LOOSE kernels alone (r6) */
    constexpr bool opq = (X & KG_NX_OPQ) != 0;
    if constexpr ((X & KG_NX_NMOM) && Op::stats == KG_NS_MOMENTS) {
        rv = kg_nfinish<Op>(
            kg_nmoments<Op, V, NV, opq, (X & KG_NX_RECOPY) != 0>(xs, ok, g, A.n, act ? nvec : 0), A.n, A.eps);
    } else if constexpr (opq && Op::stats == KG_NS_MOMENTS) {
        kg_nstat<AT> cs;
        cs.n = (AT)A.n;
        cs.a = kg_ngroup(kg_nfold_sum<Op, V, NV, true>(xs, ok), g, kg_nsum_f()) / (AT)A.n;
        cs.c = kg_ngroup(kg_nfold_dev2<Op, V, NV, true>(xs, ok, cs.a), g, kg_nsum_f());
        rv = kg_nfinish<Op>(cs, A.n, A.eps);
    } else {
        rv = kg_nfinish<Op>(kg_nchunk_stat<Op, V, NV, (X & KG_NX_FTZ) != 0>(xs, ok, g, A.n), A.n, A.eps);
    }
}

/* LEAN's and LEAN2R's apply and stores of a row held whole by its group (x,
   NV vectors a lane, those with ok(k); rv its statistics), to out + r x
   s_out. KEEP: softmax's exps kept in ex (EXPS); REUSE: the exps in place
   of x (f32 / f64 softmax). r and s_out by reference: by value, LLVM moved
   LEAN2R's row offset (r x s_out) and ptxas scheduled its three kernels
   differently (PTX compared, 2026-12-04); so every LEAN / LEAN2R kernel's
   machine code stays main's. */
template <class Op, int V, int NV, int X, bool KEEP, bool REUSE, class T, class VT, class OK, class EX>
__device__ __forceinline__ void kg_nlean_out(const VT (&x)[NV], const EX &ex, const kg_nrow<typename Op::acc_t> &rv,
                                             const OK &ok, T *out, const int64_t &r, const int64_t &s_out,
                                             const T *wp, const T *bp, int g, int lane)
{
    T *orow = out + r * s_out;
    const T *wrow = wp, *brow = bp;
    if constexpr ((X & KG_NX_OADDR) != 0) {
        asm volatile("" : "+l"(orow));
        asm volatile("" : "+l"(wrow));
        asm volatile("" : "+l"(brow));
    }
#pragma unroll
    for (int k = 0; k < NV; k++)
        if (ok(k)) {
            const int e0 = (k * g + lane) * V;
            VT y;
            if constexpr (KEEP) {
#pragma unroll
                for (int e = 0; e < V; e++)
                    y.v[e] = Op::st(Op::apply_e(ex[k][e], rv));
            } else if constexpr (REUSE) {
#pragma unroll
                for (int e = 0; e < V; e++)
                    y.v[e] = Op::st(Op::apply_e(kg_nld<Op>(x[k], e), rv));
            } else if constexpr ((X & KG_NX_FTZ) != 0 && Op::expm && sizeof(T) == 2) {
                /* softmax of the 2-byte types: the output's exp flushed
                   below 2^-126 too (f16 holds nothing there; bf16's
                   denormals become 0) */
                const VT xk = kg_nopaque(x[k]);
#pragma unroll
                for (int e = 0; e < V; e++)
                    y.v[e] = Op::st(Op::apply_e(kg_nexp_sum(kg_nld<Op>(xk, e) - rv.m), rv));
            } else {
                y = kg_napply<Op, V>(sizeof(T) == 2 ? kg_nopaque(x[k]) : x[k], rv, wrow ? wrow + e0 : NULL,
                                     brow ? brow + e0 : NULL);
            }
            if constexpr ((X & KG_NX_CS) != 0)
                kg_nstcs(orow + e0, y);
            else if constexpr ((X & KG_NX_OADDR) != 0)
                *(VT *)(orow + e0) = y;
            else
                *(VT *)(out + r * s_out + e0) = y;
        }
}

template <class Op, int V, int NV, bool RES, int X = 0>
__device__ __forceinline__ void kg_norm_lean(const kg_norm_args &A)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    typedef kgd_vec<T, V> VT;
    const kg_nlanes L = kg_nlanes_of(A.group);
    const int g = L.g, lane = L.lane, slots = L.slots, slot = L.slot;
    const int nvec = (int)(A.n / V);
    const int64_t s_in = kg_nrow_stride(A, KG_NO_IN), s_out = kg_nrow_stride(A, KG_NO_OUT);
    const int64_t s_res = kg_nrow_stride(A, KG_NO_RES);
    const T *in = (const T *)A.p[KG_NO_IN], *wp = (const T *)A.p[KG_NO_W], *bp = (const T *)A.p[KG_NO_B];
    T *out = (T *)A.p[KG_NO_OUT], *res = (T *)A.p[KG_NO_RES];
    const bool hres = RES && res != NULL;
    const int64_t step = (int64_t)gridDim.x * slots;
    /* PF: the next row's vectors (and its residual's), loaded before this
       row's statistics so that its loads overlap them and the stores */
    constexpr bool PF = (X & KG_NX_PF) != 0;
    VT xn[PF ? NV : 1], hn[PF && RES ? NV : 1];
    auto fetch = [&](int64_t b) {
        const int64_t rw = b + slot;
        const bool a = rw < A.rows;
        const int64_t rr = a ? rw : 0;
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (a && k * g + lane < nvec) {
                const int e0 = (k * g + lane) * V;
                if constexpr (X & KG_NX_CS)
                    xn[k] = kg_nldcs(in + rr * s_in + e0, (const VT *)0);
                else
                    xn[k] = *(const VT *)(in + rr * s_in + e0);
                if constexpr (RES)
                    if (hres)
                        hn[k] = *(const VT *)(res + rr * s_res + e0);
            }
    };
    if constexpr (PF)
        fetch((int64_t)blockIdx.x * slots);
    /* every group of a warp (of the block) walks the same bases: the
       reductions need all of its lanes */
    for (int64_t base = (int64_t)blockIdx.x * slots; base < A.rows; base += step) {
        const int64_t row = base + slot;
        const bool act = row < A.rows;
        const int64_t r = act ? row : 0;
        auto ok = [&](int k) -> bool { return act && k * g + lane < nvec; };
        VT x[NV];
        if constexpr (PF) {
#pragma unroll
            for (int k = 0; k < NV; k++)
                if (ok(k)) {
                    x[k] = sizeof(T) == 2 ? kg_nopaque(xn[k]) : xn[k]; /* (the 2-byte row stays packed) */
                    if constexpr (RES)
                        if (hres)
                            kg_nres_add<Op, V>(x[k], hn[k], res + r * s_res + (k * g + lane) * V);
                }
            fetch(base + step);
        } else {
            /* offsets in 32 bits (a row of one chunk: < 2^16 elements), so
               that hoisted addresses hold fewer registers */
            kg_nload_row<Op, V, NV, (X & KG_NX_CS) != 0>(
                x, in + r * s_in, hres ? res + r * s_res : NULL, [&](int k) -> int { return (k * g + lane) * V; },
                ok);
        }
        /* softmax of f32 / f64 (Op::expm): the sum's exps replace x and the
           apply reuses them (the same values kg_nchunk_stat and the apply's
           exp compute, so the same bits). Not for the 2-byte types: their
           exps in f32 beside the packed row spill (ptxas, 2026-12-01). */
        constexpr bool reuse = Op::expm && Op::stats == KG_NS_LSE && sizeof(T) == sizeof(AT);
        /* EXPS: the 2-byte softmax's exps of the sum (kg_nexp_sum(x - shift), as kg_nchunk_stat's FTZ form
           folds them, in its order) kept in f32 for the apply */
        constexpr bool keep = (X & KG_NX_EXPS) != 0 && (X & KG_NX_FTZ) != 0 && Op::expm &&
                              Op::stats == KG_NS_LSE && sizeof(T) == 2;
        AT ex[keep ? NV : 1][keep ? V : 1];
        (void)ex;
        kg_nrow<AT> rv;
        if constexpr (keep) {
            rv = kg_nfinish<Op>(kg_nlse_kept<Op, V, NV, true>(x, ok, g, A.n, [&](int k, int e, AT v) { ex[k][e] = v; }),
                                A.n, A.eps);
        } else if constexpr (reuse) {
            rv = kg_nfinish<Op>(
                kg_nlse_kept<Op, V, NV, false>(x, ok, g, A.n, [&](int k, int e, AT v) { x[k].v[e] = Op::st(v); }),
                A.n, A.eps);
        } else if constexpr (sizeof(T) == 2) {
            VT xs[NV];
            kg_nlean_copy2<X>(xs, x);
            kg_nlean_stat2<Op, V, NV, X>(rv, xs, ok, g, A, act, nvec);
        } else {
            VT xs[NV];
#pragma unroll
            for (int k = 0; k < NV; k++)
                xs[k] = x[k];
            kg_nstat<AT> cs;
            /* layer_norm: kg_nmoments (the merged reduction beside it as a
               tuning made LEAN8 f32 spill 44 B instead of 24; without it
               hidden 16384 ran 89.2% of copy against 85.5%, r6) */
            if constexpr (Op::stats == KG_NS_MOMENTS)
                cs = kg_nmoments<Op, V, NV>(xs, ok, g, A.n, act ? nvec : 0);
            else
                cs = kg_nchunk_stat<Op, V, NV>(xs, ok, g, A.n);
            rv = kg_nfinish<Op>(cs, A.n, A.eps);
        }
        if constexpr (Op::elementwise)
            kg_nlean_out<Op, V, NV, X, keep, reuse>(x, ex, rv, ok, out, r, s_out, wp, bp, g, lane);
        if constexpr (Op::nres > 0) {
            if (act && lane == 0)
                kg_nstore_results<Op>(A, r * kg_nrow_stride(A, KG_NO_S0), r * kg_nrow_stride(A, KG_NO_S1), rv);
        }
    }
}

/*
 * LEAN2R (the 2-byte rows of 32 elements; a candidate behind the tuning's lean2 5): LEAN2 with two rows a lane
 * group at once. The group loads both rows' vectors before either row's statistics, so a lane has twice LEAN2's
 * bytes in flight (LEAN2 ran logsumexp bf16 [4194304,32] at 73.9% of copy, LEAN4F with half the lanes resident
 * 64.0: the short rows are bound by the bytes in flight). Each row's statistics, apply and stores are LEAN2's
 * 2-byte path (an opaque copy for the statistics, kg_nchunk_stat, kg_napply or the flushed exps of softmax),
 * the same operations in the same order: LEAN2's bits. A block's unit is 2 x slots rows; the group's rows are
 * slot and slots + slot of it, so each of a warp's loads stays contiguous. One outer dim at most, no residual.
 */
/* G > 0: the group's lanes as a constant (the runtime plans LEAN2R with A.group = G and NV x G vectors a row):
   the reductions' butterflies unrolled, the block-wide path and the vector tests gone (the same operations on the
   values, so the same bits); G = 0: A.group. */
template <class Op, int V, int NV, int X, int G>
__device__ __forceinline__ void kg_norm_lean_r2_g(const kg_norm_args &A)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    typedef kgd_vec<T, V> VT;
    static_assert(sizeof(T) == 2 && (X & ~(KG_NX_FTZ | KG_NX_OADDR)) == 0, "LEAN2R: LEAN2's 2-byte path");
    const kg_nlanes L = kg_nlanes_of(G > 0 ? G : A.group);
    const int g = L.g, lane = L.lane, slots = L.slots, slot = L.slot;
    const int nvec = G > 0 ? NV * G : (int)(A.n / V);
    const int64_t s_in = kg_nrow_stride(A, KG_NO_IN), s_out = kg_nrow_stride(A, KG_NO_OUT);
    const T *in = (const T *)A.p[KG_NO_IN], *wp = (const T *)A.p[KG_NO_W], *bp = (const T *)A.p[KG_NO_B];
    T *out = (T *)A.p[KG_NO_OUT];
    const int64_t step = (int64_t)gridDim.x * slots * 2;
    /* every group of a warp (of the block) walks the same bases: the reductions need all of its lanes */
    for (int64_t base = (int64_t)blockIdx.x * slots * 2; base < A.rows; base += step) {
        VT x[2][NV];
        int64_t r[2];
        bool act[2];
#pragma unroll
        for (int j = 0; j < 2; j++) {
            const int64_t row = base + (int64_t)j * slots + slot;
            act[j] = row < A.rows;
            r[j] = act[j] ? row : 0;
        }
#pragma unroll
        for (int j = 0; j < 2; j++)
            kg_nload_row<Op, V, NV>(
                x[j], in + r[j] * s_in, NULL, [&](int k) -> int { return (k * g + lane) * V; },
                [&](int k) -> bool { return act[j] && (G > 0 || k * g + lane < nvec); });
#pragma unroll
        for (int j = 0; j < 2; j++) {
            auto ok = [&](int k) -> bool { return act[j] && (G > 0 || k * g + lane < nvec); };
            VT xs[NV];
            kg_nlean_copy2<X>(xs, x[j]);
            kg_nrow<AT> rv;
            kg_nlean_stat2<Op, V, NV, X>(rv, xs, ok, g, A, act[j], nvec);
            if constexpr (Op::elementwise)
                kg_nlean_out<Op, V, NV, X, false, false>(x[j], 0, rv, ok, out, r[j], s_out, wp, bp, g, lane);
            if constexpr (Op::nres > 0) {
                if (act[j] && lane == 0)
                    kg_nstore_results<Op>(A, r[j] * kg_nrow_stride(A, KG_NO_S0), r[j] * kg_nrow_stride(A, KG_NO_S1),
                                          rv);
            }
        }
    }
}

/* LEAN2R's kernel: groups of 2 (rows of 32), 4 (64) and 8 lanes (128) with the group as a constant (H200
   s21r2, bf16, same process, % of copy, the group a constant / not (s21r1, against LEAN2 in each run): logsumexp
   [4194304,32] 95.3 (LEAN2 73.4) / 60.7 (52.7), layer_norm 95.6 (83.1) / 67.9 (62.1), [4194304,64] 98.3 (80.1) /
   80.2 (73.9)) */
template <class Op, int V, int NV, bool RES, int X = 0>
__device__ __forceinline__ void kg_norm_lean_r2(const kg_norm_args &A)
{
    static_assert(!RES, "LEAN2R: no residual form");
    if (A.group == 2)
        kg_norm_lean_r2_g<Op, V, NV, X, 2>(A);
    else if (A.group == 4)
        kg_norm_lean_r2_g<Op, V, NV, X, 4>(A);
    else /* (the runtime plans LEAN2R at 2, 4 or 8 lanes alone) */
        kg_norm_lean_r2_g<Op, V, NV, X, 8>(A);
}

/*
 * LEANU: LEAN for contiguous rows that 16-byte vectors do not tile (a
 * length that is not a multiple of V, so most rows start inside a vector).
 * The group loads the aligned vectors that cover its row (the first and
 * the last may hold a neighbour row's elements), leaves the elements
 * outside the row out of the statistics, and stores whole vectors inside
 * the row, element by element at its two ends (a neighbour's elements are
 * never written; the residual's h likewise). Its vectors never reach past
 * the tensor's last element: where the last row's would (its end off a
 * vector boundary), the runtime runs that row by STRIDED, a second launch.
 * Weight and bias: element loads. The input, the output and the residual share one row stride (in
 * elements) and 16-byte aligned bases; one outer dim at most.
 */
/* SAN (the LEANU4S / LEANU8S / LEANU4S_RES classes): the elements outside
   the row, in its first and last vectors only, are replaced once by a value
   that leaves the statistic unchanged (lse: -inf, whose exp is 0; sums: 0),
   so the folds take every element of a vector without a test; moments: the
   second pass (squared deviations) replaces them by the mean as stored, d =
   ld(st(mean)) - mean from it (0 for f32), and takes their (nvr V - n) d^2
   back from the sum. The sums' exps by kg_nexp_sum. Weight and bias: element
   loads without tests in the vectors inside the row. */
template <class Op, int V, int NV, bool RES, bool SAN = false>
__device__ __forceinline__ void kg_norm_leanu(const kg_norm_args &A)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    typedef kgd_vec<T, V> VT;
    const kg_nlanes L = kg_nlanes_of(A.group);
    const int g = L.g, lane = L.lane, slots = L.slots, slot = L.slot;
    const int n = (int)A.n;
    const int64_t srow = kg_nrow_stride(A, KG_NO_IN);
    const T *in = (const T *)A.p[KG_NO_IN], *wp = (const T *)A.p[KG_NO_W], *bp = (const T *)A.p[KG_NO_B];
    T *out = (T *)A.p[KG_NO_OUT], *res = (T *)A.p[KG_NO_RES];
    const bool hres = RES && res != NULL;
    const int64_t step = (int64_t)gridDim.x * slots;
    for (int64_t base = (int64_t)blockIdx.x * slots; base < A.rows; base += step) {
        const int64_t row = base + slot;
        const bool act = row < A.rows;
        const int64_t r = act ? row : 0;
        const int64_t e0 = r * srow;         /* the row's first element */
        const int sft = (int)(e0 & (V - 1)); /* its place in its vector */
        const int64_t v0 = e0 - sft;         /* the first vector's first element */
        const int nvr = (sft + n + V - 1) / V;
        auto ok = [&](int k) -> bool { return act && k * g + lane < nvr; };
        /* the row position of element 0 of the lane's vector k */
        auto p0 = [&](int k) -> int { return (k * g + lane) * V - sft; };
        VT x[NV];
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (ok(k))
                x[k] = *(const VT *)(in + v0 + (k * g + lane) * V);
        if (hres) {
            VT h[NV];
#pragma unroll
            for (int k = 0; k < NV; k++)
                if (ok(k))
                    h[k] = *(const VT *)(res + v0 + (k * g + lane) * V);
#pragma unroll
            for (int k = 0; k < NV; k++)
                if (ok(k)) {
#pragma unroll
                    for (int e = 0; e < V; e++)
                        x[k].v[e] = Op::st(kg_nld<Op>(x[k], e) + kg_nld<Op>(h[k], e));
                    T *q = res + v0 + (k * g + lane) * V;
                    const int p = p0(k);
                    if (p >= 0 && p + V <= n) {
                        *(VT *)q = x[k];
                    } else {
#pragma unroll
                        for (int e = 0; e < V; e++)
                            if (p + e >= 0 && p + e < n)
                                q[e] = x[k].v[e];
                    }
                }
        }
        /* SAN: the elements outside the row (first and last vectors) become neu */
        auto sanitize = [&](T neu) {
            /* on whole 32-bit words (a 2-byte row stays packed) */
            uint32_t nw;
            if constexpr (sizeof(T) == 2) {
                uint16_t h;
                memcpy(&h, &neu, 2);
                nw = (uint32_t)h * 0x10001u;
            } else {
                memcpy(&nw, &neu, 4);
            }
#pragma unroll
            for (int k = 0; k < NV; k++)
                if (ok(k)) {
                    const int p = p0(k);
                    if (p < 0 || p + V > n) {
                        uint32_t w[4];
                        memcpy(w, &x[k], 16);
#pragma unroll
                        for (int i = 0; i < 4; i++) {
                            uint32_t keep;
                            if constexpr (sizeof(T) == 2) {
                                const int e = p + 2 * i;
                                keep = (e >= 0 && e < n ? 0xffffu : 0u) | (e + 1 >= 0 && e + 1 < n ? 0xffff0000u : 0u);
                            } else {
                                keep = p + i >= 0 && p + i < n ? ~0u : 0u;
                            }
                            w[i] = (w[i] & keep) | (nw & ~keep);
                        }
                        memcpy(&x[k], w, 16);
                    }
                }
        };
        /* SAN: folds over every element of the lane's vectors */
        auto sfold = [&](AT a, auto f) -> AT {
#pragma unroll
            for (int k = 0; k < NV; k++)
                if (ok(k)) {
                    const VT xk = sizeof(T) == 2 ? kg_nopaque(x[k]) : x[k];
#pragma unroll
                    for (int e = 0; e < V; e++)
                        a = f(a, kg_nld<Op>(xk, e));
                }
            return a;
        };
        /* folds over the row's elements only (2-byte rows stay packed: each
           vector opaque as a pass uses it) */
        auto fold = [&](AT a, auto f) -> AT {
#pragma unroll
            for (int k = 0; k < NV; k++)
                if (ok(k)) {
                    const VT xk = sizeof(T) == 2 ? kg_nopaque(x[k]) : x[k];
                    const int p = p0(k);
#pragma unroll
                    for (int e = 0; e < V; e++)
                        if (p + e >= 0 && p + e < n)
                            a = f(a, kg_nld<Op>(xk, e));
                }
            return a;
        };
        kg_nstat<AT> cs;
        cs.n = (AT)n;
        cs.a = 0;
        if constexpr (SAN) {
            sanitize(Op::st(Op::stats == KG_NS_LSE ? -(AT)INFINITY : (AT)0));
            if constexpr (Op::stats == KG_NS_LSE) {
                const AT m = kg_ngroup(kg_nfold_max2<Op, V>(x, ok), g, kg_nmax_f());
                const AT sh = kg_nshift(m);
                cs.a = m;
                cs.c = kg_ngroup(sfold((AT)0, [sh](AT a, AT v) { return a + kg_nexp_sum(v - sh); }), g, kg_nsum_f());
            } else if constexpr (Op::stats == KG_NS_MOMENTS) {
                const AT mean = kg_ngroup(sfold((AT)0, [](AT a, AT v) { return a + v; }), g, kg_nsum_f()) / (AT)n;
                const T ms = Op::st(mean);
                sanitize(ms);
                const AT d = Op::ld(ms) - mean;
                cs.a = mean;
                const AT q = kg_ngroup(sfold((AT)0,
                                             [mean](AT a, AT v) {
                                                 const AT dv = v - mean;
                                                 return a + dv * dv;
                                             }),
                                       g, kg_nsum_f());
                const int nvr0 = (sft + n + V - 1) / V;
                const AT corr = (AT)(nvr0 * V - n) * (d * d);
                /* (an infinite or NaN q stays so) */
                cs.c = isfinite(q) && corr != (AT)0 ? fmax(q - corr, (AT)0) : q;
            } else {
                cs.c = kg_ngroup(sfold((AT)0, [](AT a, AT v) { return a + v * v; }), g, kg_nsum_f());
            }
        } else if constexpr (Op::stats == KG_NS_LSE) {
            /* fmax skips NaN; a NaN still makes the sum, so every result, NaN */
            const AT m = kg_ngroup(fold(-(AT)INFINITY, [](AT a, AT v) { return fmax(a, v); }), g, kg_nmax_f());
            const AT sh = kg_nshift(m);
            cs.a = m;
            cs.c = kg_ngroup(fold((AT)0, [sh](AT a, AT v) { return a + kg_nexp(v - sh); }), g, kg_nsum_f());
        } else if constexpr (Op::stats == KG_NS_MOMENTS) {
            const AT mean = kg_ngroup(fold((AT)0, [](AT a, AT v) { return a + v; }), g, kg_nsum_f()) / (AT)n;
            cs.a = mean;
            cs.c = kg_ngroup(fold((AT)0,
                                  [mean](AT a, AT v) {
                                      const AT d = v - mean;
                                      return a + d * d;
                                  }),
                             g, kg_nsum_f());
        } else {
            cs.c = kg_ngroup(fold((AT)0, [](AT a, AT v) { return a + v * v; }), g, kg_nsum_f());
        }
        const kg_nrow<AT> rv = kg_nfinish<Op>(cs, A.n, A.eps);
        if constexpr (Op::elementwise) {
#pragma unroll
            for (int k = 0; k < NV; k++)
                if (ok(k)) {
                    const VT xk = sizeof(T) == 2 ? kg_nopaque(x[k]) : x[k];
                    const int p = p0(k);
                    T *q = out + v0 + (k * g + lane) * V;
                    VT y;
#pragma unroll
                    for (int e = 0; e < V; e++) {
                        AT w, b;
                        if constexpr (SAN) {
                            /* outside the row: any element's (not stored) */
                            const int pe = p + e < 0 ? 0 : p + e >= n ? n - 1 : p + e;
                            w = wp ? Op::ld(__ldg(wp + pe)) : (AT)1;
                            b = bp ? Op::ld(__ldg(bp + pe)) : (AT)0;
                        } else {
                            const bool inrow = p + e >= 0 && p + e < n;
                            w = wp && inrow ? Op::ld(__ldg(wp + p + e)) : (AT)1;
                            b = bp && inrow ? Op::ld(__ldg(bp + p + e)) : (AT)0;
                        }
                        if constexpr (SAN && Op::expm && sizeof(T) == 2)
                            y.v[e] = Op::st(Op::apply_e(kg_nexp_sum(kg_nld<Op>(xk, e) - rv.m), rv)); /* as LEAN4F */
                        else
                            y.v[e] = Op::st(Op::apply(kg_nld<Op>(xk, e), rv, w, b));
                    }
                    if (p >= 0 && p + V <= n) {
                        *(VT *)q = y;
                    } else {
#pragma unroll
                        for (int e = 0; e < V; e++)
                            if (p + e >= 0 && p + e < n)
                                q[e] = y.v[e];
                    }
                }
        }
        if constexpr (Op::nres > 0) {
            if (act && lane == 0)
                kg_nstore_results<Op>(A, r * kg_nrow_stride(A, KG_NO_S0), r * kg_nrow_stride(A, KG_NO_S1), rv);
        }
    }
}

/*
 * COLS: the normalized dim has a stride, and a kept dim (the columns) is
 * contiguous. A unit is one outer position x one tile of 32 columns x one
 * slice (split) of the normalized dim; a block of 32 x 8 lanes serves it,
 * lanes across columns (coalesced), 8 down the slice.
 * STATS writes each unit's statistics per column to the scratch; APPLY
 * merges a column's slices in order and applies to its own slice (or, for
 * a reduction, writes the result). Each lane accumulates element by element
 * (lse: the online rescaling; moments: sums shifted by the lane's first
 * element), then the 8 lanes of a column merge in order.
 */
template <class Op>
__device__ __forceinline__ void kg_ncols_unit(const kg_norm_args &A, int64_t u, int64_t &o, int64_t &col,
                                              int64_t &split, int64_t &grp)
{
    grp = u / A.splits;
    split = u - grp * A.splits;
    o = grp / A.tiles;
    col = (grp - o * A.tiles) * KG_NORM_COL_LANES + (threadIdx.x & (KG_NORM_COL_LANES - 1));
}

/* COLS: one lane's running statistics of a column slice,
   element by element (lse: the online rescaling; moments: sums shifted by
   the lane's first element, and the plain sum for a non-finite mean). */
template <class Op> struct kg_ncol_acc {
    typedef typename Op::acc_t AT;
    kg_nstat<AT> s;
    AT k0, s1, s2, sx; /* moments: shift, shifted sums, plain sum */
    __device__ __forceinline__ void init()
    {
        s = kg_nstat_init<AT>();
        s.a = Op::stats == KG_NS_LSE ? -(AT)INFINITY : (AT)0;
        k0 = s1 = s2 = sx = 0;
    }
    __device__ __forceinline__ void push(AT x)
    {
        if constexpr (Op::stats == KG_NS_LSE) {
            if (x <= s.a && isfinite(s.a))
                s.c += kg_nexp(x - s.a);
            else
                kg_nlse_merge(s.a, s.c, x, exp(x - kg_nshift(x)));
        } else if constexpr (Op::stats == KG_NS_MOMENTS) {
            if (s.n == (AT)0)
                k0 = x;
            const AT d = x - k0;
            s1 += d;
            s2 += d * d;
            sx += x;
            s.n += (AT)1;
        } else {
            s.c += x * x;
            s.n += (AT)1;
        }
    }
    /* the statistics in the form they merge in */
    __device__ __forceinline__ kg_nstat<AT> done()
    {
        if constexpr (Op::stats == KG_NS_MOMENTS) {
            if (s.n > (AT)0) {
                s.a = k0 + s1 / s.n;
                s.c = s2 - s1 * (s1 / s.n);
                if (s.c < (AT)0)
                    s.c = 0;
                if (!isfinite(s.a)) {
                    /* an infinity or NaN among the values: the mean is
                       sum(x) / n (+-inf or NaN, as the reference's), no
                       variance */
                    s.a = sx / s.n;
                    s.c = (AT)NAN;
                }
            }
        }
        return s;
    }
};

/* Rows r, r + NY, ... below r1 of a column at p (element stride ns), U
   loads at once before their uses: f(value, row). */
template <int U, class T, class F>
__device__ __forceinline__ void kg_ncol_walk(const T *p, int64_t ns, int64_t r, int64_t r1, int NY, F f)
{
    for (; r + (U - 1) * NY < r1; r += U * NY) {
        T xs[U];
#pragma unroll
        for (int j = 0; j < U; j++)
            xs[j] = p[(r + j * NY) * ns];
#pragma unroll
        for (int j = 0; j < U; j++)
            f(xs[j], r + j * NY);
    }
    for (; r < r1; r += NY)
        f(p[r * ns], r);
}

/* A lane's statistics of rows r, r + NY, ... below r1 of column col (outer
   offsets off), writing the residual's h = x + r back where there is one. */
template <class Op, int U>
__device__ __forceinline__ kg_nstat<typename Op::acc_t>
kg_ncol_stats(const kg_norm_args &A, const int64_t (&off)[KG_NORM_NOPS], int64_t col, int64_t r, int64_t r1, int NY)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    kg_ncol_acc<Op> acc;
    acc.init();
    if (col < A.cols) {
        const T *p = (const T *)A.p[KG_NO_IN] + off[KG_NO_IN] + col * A.cst[KG_NO_IN];
        T *res = (T *)A.p[KG_NO_RES];
        T *q = Op::residual && res ? res + off[KG_NO_RES] + col * A.cst[KG_NO_RES] : NULL;
        const int64_t ns_res = A.inner.st[0][KG_NO_RES];
        kg_ncol_walk<U>(p, A.inner.st[0][KG_NO_IN], r, r1, NY, [&](T xs, int64_t rr) {
            AT x = Op::ld(xs);
            if (Op::residual && q) {
                const T h = Op::st(x + Op::ld(q[rr * ns_res]));
                q[rr * ns_res] = h;
                x = Op::ld(h);
            }
            acc.push(x);
        });
    }
    return acc.done();
}

/* The apply to rows r, r + NY, ... below r1 of column col (outer offsets
   off; the residual's h where there is one) with the column's values rv. */
template <class Op, int U>
__device__ __forceinline__ void kg_ncol_apply(const kg_norm_args &A, const int64_t (&off)[KG_NORM_NOPS], int64_t col,
                                              int64_t r, int64_t r1, int NY, const kg_nrow<typename Op::acc_t> &rv)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    const T *res = (const T *)A.p[KG_NO_RES];
    const T *wp = (const T *)A.p[KG_NO_W];
    const T *bp = (const T *)A.p[KG_NO_B];
    const bool hres = Op::residual && res;
    const T *p = hres ? res + off[KG_NO_RES] + col * A.cst[KG_NO_RES]
                      : (const T *)A.p[KG_NO_IN] + off[KG_NO_IN] + col * A.cst[KG_NO_IN];
    T *y = (T *)A.p[KG_NO_OUT] + off[KG_NO_OUT] + col * A.cst[KG_NO_OUT];
    const int64_t ns_out = A.inner.st[0][KG_NO_OUT];
    kg_ncol_walk<U>(p, hres ? A.inner.st[0][KG_NO_RES] : A.inner.st[0][KG_NO_IN], r, r1, NY, [&](T xs, int64_t rr) {
        const AT w = wp ? Op::ld(wp[rr * A.inner.st[0][KG_NO_W] + col * A.cst[KG_NO_W]]) : (AT)1;
        const AT b = bp ? Op::ld(bp[rr * A.inner.st[0][KG_NO_B] + col * A.cst[KG_NO_B]]) : (AT)0;
        y[rr * ns_out] = Op::st(Op::apply(Op::ld(xs), rv, w, b));
    });
}

template <class Op> __device__ __forceinline__ void kg_norm_cols_stats(const kg_norm_args &A)
{
    typedef typename Op::acc_t AT;
    constexpr int NY = KG_NORM_THREADS / KG_NORM_COL_LANES;
    __shared__ kg_nstat<AT> sh[KG_NORM_THREADS];
    const int ty = threadIdx.x / KG_NORM_COL_LANES, tx = threadIdx.x & (KG_NORM_COL_LANES - 1);
    for (int64_t u = blockIdx.x; u < A.units; u += gridDim.x) {
        int64_t o, col, split, grp;
        kg_ncols_unit<Op>(A, u, o, col, split, grp);
        int64_t off[KG_NORM_NOPS];
        kg_nouter(A, o, off);
        const int64_t r0 = split * A.chunk, r1 = r0 + A.chunk < A.n ? r0 + A.chunk : A.n;
        kg_nstat<AT> s = kg_ncol_stats<Op, 4>(A, off, col, r0 + ty, r1, NY);
        __syncthreads(); /* the previous unit's readers are done */
        sh[threadIdx.x] = s;
        __syncthreads();
        if (ty == 0 && col < A.cols) {
            for (int k = 1; k < NY; k++)
                kg_nmerge<Op>(s, sh[k * KG_NORM_COL_LANES + tx]);
            kg_nstat<AT> *P = (kg_nstat<AT> *)A.partial;
            P[(grp * A.splits + split) * KG_NORM_COL_LANES + tx] = s;
        }
    }
}

template <class Op> __device__ __forceinline__ void kg_norm_cols_apply(const kg_norm_args &A)
{
    typedef typename Op::acc_t AT;
    constexpr int NY = KG_NORM_THREADS / KG_NORM_COL_LANES;
    const int ty = threadIdx.x / KG_NORM_COL_LANES, tx = threadIdx.x & (KG_NORM_COL_LANES - 1);
    for (int64_t u = blockIdx.x; u < A.units; u += gridDim.x) {
        int64_t o, col, split, grp;
        kg_ncols_unit<Op>(A, u, o, col, split, grp);
        if (col >= A.cols)
            continue;
        if (!Op::elementwise && (split != 0 || ty != 0))
            continue;
        int64_t off[KG_NORM_NOPS];
        kg_nouter(A, o, off);
        const kg_nstat<AT> *P = (const kg_nstat<AT> *)A.partial;
        kg_nstat<AT> s = P[grp * A.splits * KG_NORM_COL_LANES + tx];
        for (int64_t k = 1; k < A.splits; k++)
            kg_nmerge<Op>(s, P[(grp * A.splits + k) * KG_NORM_COL_LANES + tx]);
        const kg_nrow<AT> rv = kg_nfinish<Op>(s, A.n, A.eps);
        if (Op::nres > 0 && split == 0 && ty == 0)
            kg_nstore_results<Op>(A, off[KG_NO_S0] + col * A.cst[KG_NO_S0], off[KG_NO_S1] + col * A.cst[KG_NO_S1], rv);
        if constexpr (Op::elementwise) {
            const int64_t r0 = split * A.chunk, r1 = r0 + A.chunk < A.n ? r0 + A.chunk : A.n;
            kg_ncol_apply<Op, 4>(A, off, col, r0 + ty, r1, NY, rv);
        }
    }
}

/*
 * COLSV (softmax and log_softmax of f32, f16, bf16; session 8): COLS over
 * VB-byte vectors of columns. A unit is one outer position x one tile of LX
 * x VE columns (LX = A.group lanes across, each a vector of VE elements) x
 * one slice of the normalized dim; the block's other lanes go down the
 * slice (NY = blockDim.x / LX of them). STATS: each lane U vectors at once,
 * their maximum per column, then the sum of exp(x - shift(max)) against
 * the running maximum (rescaled only where it grew: the online softmax a
 * chunk at a time), the NY lanes of a column merged in order, the slice's
 * (max, sum) per column to the scratch. APPLY: the lanes of a column merge
 * the slices in a fixed partition (lane ty the slices ty, ty + NY, ...),
 * then in lane order, and apply to their own slice. The planner picks it
 * (VB = 8, kernels colsv_stats8 / colsv_apply8) where the columns are
 * contiguous and 8 bytes are the widest vector the strides allow (the last
 * vector of a row may be partial: element by element); at VB = 16 it lost
 * to COLS (H200, 2026-12-02 r2; runtime/norm.c plan_colsv).
 */
template <class Op, int VB>
__device__ __forceinline__ void kg_ncolv_at(const kg_norm_args &A, int64_t u, int64_t &col, int64_t &split,
                                            int64_t &grp, int64_t (&off)[KG_NORM_NOPS])
{
    constexpr int VE = VB / (int)sizeof(typename Op::in_t);
    const int LX = A.group;
    grp = u / A.splits;
    split = u - grp * A.splits;
    const int64_t o = grp / A.tiles;
    col = ((grp - o * A.tiles) * LX + (int)threadIdx.x % LX) * VE;
    kg_nouter(A, o, off);
}

template <class Op, int VB, int U>
__device__ __forceinline__ void kg_ncolv_load(const typename Op::in_t *p, int64_t ns, int64_t r, int64_t r1, int NY,
                                              bool full, int nc,
                                              kgd_vec<typename Op::in_t, VB / sizeof(typename Op::in_t)> (&v)[U])
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    constexpr int VE = VB / (int)sizeof(T);
    typedef kgd_vec<T, VE> VT;
#pragma unroll
    for (int j = 0; j < U; j++) {
        const int64_t rr = r + (int64_t)j * NY;
        if (rr < r1 && full)
            v[j] = *(const VT *)(p + rr * ns);
        else
#pragma unroll
            for (int e = 0; e < VE; e++)
                v[j].v[e] = rr < r1 && e < nc ? p[rr * ns + e] : Op::st(-(AT)INFINITY);
    }
}

template <class Op, int VB> __device__ __forceinline__ void kg_norm_colsv_stats(const kg_norm_args &A)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    constexpr int VE = VB / (int)sizeof(T), U = VB == 16 ? 8 : 16;
    __shared__ AT shm[KG_NORM_THREADS][VE], shs[KG_NORM_THREADS][VE];
    const int LX = A.group, NY = (int)blockDim.x / LX;
    const int tx = (int)threadIdx.x % LX, ty = (int)threadIdx.x / LX;
    const int64_t ns = A.inner.st[0][KG_NO_IN];
    for (int64_t u = blockIdx.x; u < A.units; u += gridDim.x) {
        int64_t col, split, grp, off[KG_NORM_NOPS];
        kg_ncolv_at<Op, VB>(A, u, col, split, grp, off);
        const int64_t r0 = split * A.chunk, r1 = r0 + A.chunk < A.n ? r0 + A.chunk : A.n;
        AT m[VE], sm[VE];
#pragma unroll
        for (int e = 0; e < VE; e++) {
            m[e] = -(AT)INFINITY;
            sm[e] = (AT)0;
        }
        if (col < A.cols) {
            const T *p = (const T *)A.p[KG_NO_IN] + off[KG_NO_IN] + col;
            const int nc = A.cols - col < VE ? (int)(A.cols - col) : VE;
            const bool full = nc == VE;
            for (int64_t r = r0 + ty; r < r1; r += (int64_t)U * NY) {
                kgd_vec<T, VE> x[U];
                kg_ncolv_load<Op, VB, U>(p, ns, r, r1, NY, full, nc, x);
                AT mx[VE], sh[VE];
#pragma unroll
                for (int e = 0; e < VE; e++)
                    mx[e] = m[e];
#pragma unroll
                for (int j = 0; j < U; j++) {
                    const kgd_vec<T, VE> xk = kg_nopaque(x[j]); /* unpacked values die with each pass */
#pragma unroll
                    for (int e = 0; e < VE; e++)
                        mx[e] = kg_nmax(mx[e], kg_nld<Op>(xk, e));
                }
#pragma unroll
                for (int e = 0; e < VE; e++) {
                    sh[e] = kg_nshift(mx[e]);
                    if (mx[e] != m[e] && sm[e] != (AT)0) /* the maximum grew (or turned NaN): rescale */
                        sm[e] *= exp(kg_nshift(m[e]) - sh[e]);
                    m[e] = mx[e];
                }
#pragma unroll
                for (int j = 0; j < U; j++) {
                    const kgd_vec<T, VE> xk = kg_nopaque(x[j]);
#pragma unroll
                    for (int e = 0; e < VE; e++)
                        sm[e] += kg_nexp_sum(kg_nld<Op>(xk, e) - sh[e]);
                }
            }
        }
#pragma unroll
        for (int e = 0; e < VE; e++) {
            shm[threadIdx.x][e] = m[e];
            shs[threadIdx.x][e] = sm[e];
        }
        __syncthreads();
        if (ty == 0 && col < A.cols) {
            for (int k = 1; k < NY; k++)
#pragma unroll
                for (int e = 0; e < VE; e++)
                    kg_nlse_merge(m[e], sm[e], shm[k * LX + tx][e], shs[k * LX + tx][e]);
            kg_nstat<AT> *P = (kg_nstat<AT> *)A.partial + (grp * A.splits + split) * (int64_t)LX * VE + tx * VE;
#pragma unroll
            for (int e = 0; e < VE; e++) {
                kg_nstat<AT> st;
                st.n = (AT)0;
                st.a = m[e];
                st.c = sm[e];
                P[e] = st;
            }
        }
        __syncthreads(); /* shm / shs are free for the next unit */
    }
}

template <class Op, int VB> __device__ __forceinline__ void kg_norm_colsv_apply(const kg_norm_args &A)
{
    typedef typename Op::in_t T;
    typedef typename Op::acc_t AT;
    constexpr int VE = VB / (int)sizeof(T), U = VB == 16 ? 8 : 16;
    typedef kgd_vec<T, VE> VT;
    __shared__ AT shm[KG_NORM_THREADS][VE], shs[KG_NORM_THREADS][VE];
    __shared__ kg_nrow<AT> fin[32 * VE]; /* LX <= 32 (the planner) */
    const int LX = A.group, NY = (int)blockDim.x / LX;
    const int tx = (int)threadIdx.x % LX, ty = (int)threadIdx.x / LX;
    const int64_t ns = A.inner.st[0][KG_NO_IN], nso = A.inner.st[0][KG_NO_OUT];
    for (int64_t u = blockIdx.x; u < A.units; u += gridDim.x) {
        int64_t col, split, grp, off[KG_NORM_NOPS];
        kg_ncolv_at<Op, VB>(A, u, col, split, grp, off);
        /* this lane's share of the slices' statistics, then the lanes' in order */
        AT m[VE], sm[VE];
#pragma unroll
        for (int e = 0; e < VE; e++) {
            m[e] = -(AT)INFINITY;
            sm[e] = (AT)0;
        }
        if (col < A.cols) {
            const kg_nstat<AT> *P = (const kg_nstat<AT> *)A.partial + grp * A.splits * (int64_t)LX * VE + tx * VE;
            for (int64_t k = ty; k < A.splits; k += NY)
#pragma unroll
                for (int e = 0; e < VE; e++) {
                    const kg_nstat<AT> st = P[k * (int64_t)LX * VE + e];
                    kg_nlse_merge(m[e], sm[e], st.a, st.c);
                }
        }
#pragma unroll
        for (int e = 0; e < VE; e++) {
            shm[threadIdx.x][e] = m[e];
            shs[threadIdx.x][e] = sm[e];
        }
        __syncthreads();
        if (ty == 0) {
            for (int k = 1; k < NY; k++)
#pragma unroll
                for (int e = 0; e < VE; e++)
                    kg_nlse_merge(m[e], sm[e], shm[k * LX + tx][e], shs[k * LX + tx][e]);
#pragma unroll
            for (int e = 0; e < VE; e++) {
                kg_nstat<AT> st = kg_nstat_init<AT>();
                st.a = m[e];
                st.c = sm[e];
                fin[tx * VE + e] = kg_nfinish<Op>(st, A.n, A.eps);
            }
        }
        __syncthreads();
        if (col < A.cols) {
            kg_nrow<AT> rv[VE];
#pragma unroll
            for (int e = 0; e < VE; e++)
                rv[e] = fin[tx * VE + e];
            const T *p = (const T *)A.p[KG_NO_IN] + off[KG_NO_IN] + col;
            T *y = (T *)A.p[KG_NO_OUT] + off[KG_NO_OUT] + col;
            const int nc = A.cols - col < VE ? (int)(A.cols - col) : VE;
            const bool full = nc == VE;
            const int64_t r0 = split * A.chunk;
            const int64_t r1 = r0 + A.chunk < A.n ? r0 + A.chunk : A.n;
            for (int64_t r = r0 + ty; r < r1; r += (int64_t)U * NY) {
                VT x[U];
                kg_ncolv_load<Op, VB, U>(p, ns, r, r1, NY, full, nc, x);
#pragma unroll
                for (int j = 0; j < U; j++) {
                    const int64_t rr = r + (int64_t)j * NY;
                    if (rr < r1) {
                        VT v;
                        const VT xk = kg_nopaque(x[j]);
#pragma unroll
                        for (int e = 0; e < VE; e++)
                            v.v[e] = Op::st(Op::apply(kg_nld<Op>(xk, e), rv[e], (AT)1, (AT)0));
                        if (full)
                            *(VT *)(y + rr * nso) = v;
                        else
                            for (int e = 0; e < nc; e++)
                                y[rr * nso + e] = v.v[e];
                    }
                }
            }
        }
        __syncthreads(); /* fin, shm, shs are free for the next unit */
    }
}

#endif
