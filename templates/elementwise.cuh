/*
 * elementwise.cuh - the loops every element-wise kernel runs.
 *
 * A generated kernel is one of these loops instantiated with a functor F:
 *   F::out_t, F::in0_t .. in2_t   storage types (kg_unused past F::arity)
 *   F::apply(in0, in1, in2)       one element, storage in, storage out
 * and N, the elements per thread of the vectorized variants (16 bytes of the
 * first input). Variants (the runtime picks one per call, kg_params.h):
 *   dense  one contiguous range: N-element vector loads, scalar tail
 *   nd32   any strides, 32-bit offsets, fast divmod over up to 8 dims
 *   nd32v  as nd32 but the inner dim moves N elements at a time (each
 *          input's inner stride 1, or 0 = broadcast of one element)
 *   nd64   any strides, 64-bit offsets (tensors over 2^31 elements)
 *   rows   any strides, 32-bit offsets: groups of 4 to 32 lanes walk a row
 *          of dim 0 each, its offsets computed once (inner dims that no
 *          vector fits, e.g. a permutation keeping an odd inner dim)
 *   tile   2-d with inputs whose fast dim is the output's slow dim: those go
 *          through a shared-memory tile so both reads and writes coalesce
 *   perm   any rank, inputs whose fast dim J is not the output's fast dim
 *          (transposes, permutations): 64 x 64 tiles of the (0, J) plane
 *          (32 x 32 for 8-byte types) staged through shared memory, N-wide
 *          vector loads along each operand's own fast dim where aligned,
 *          the other dims walked by block
 *   permf  perm with a dim shorter than a tile folded with one more, so
 *          short dims still fill tiles (each position's offset by a magic
 *          division; perm's strength-reduced addressing is faster where no
 *          dim needs folding)
 */
#ifndef KG_ELEMENTWISE_CUH
#define KG_ELEMENTWISE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "kg_device.cuh"
#include "kg_params.h"

#define KG_TILE_ROWS 8

typedef uint8_t kg_unused;

/* float -> integer: truncate toward zero, saturate to the type's range, NaN -> 0. */
template <typename To, typename From> __device__ __forceinline__ To kg_saturate(From x)
{
    if (!(x == x))
        return (To)0;
    if (sizeof(To) == 1) { /* u8 */
        if (x <= (From)0)
            return (To)0;
        if (x >= (From)255)
            return (To)255;
        return (To)x;
    }
    if (sizeof(To) == 4) {
        if (x <= (From)-2147483648.0)
            return (To)INT32_MIN;
        if (x >= (From)2147483648.0)
            return (To)INT32_MAX;
        return (To)x;
    }
    if (x <= (From)-9223372036854775808.0)
        return (To)INT64_MIN;
    if (x >= (From)9223372036854775808.0)
        return (To)INT64_MAX;
    return (To)x;
}

/* Integer power with two's-complement wrapping (the CPU reference has the
   same function): b < 0 gives 1 for a = 1, +-1 for a = -1 by b's parity,
   and 0 otherwise (0 to a negative power included). */
__device__ __forceinline__ int64_t kg_ipow(int64_t a, int64_t b)
{
    if (b < 0)
        return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    uint64_t r = 1, x = (uint64_t)a, e = (uint64_t)b;
    while (e) {
        if (e & 1)
            r *= x;
        x *= x;
        e >>= 1;
    }
    return (int64_t)r;
}

/* The MUFU forms without denormal handling: ex2.approx.ftz and rcp.approx.ftz
   are one instruction each, where the non-ftz forms (what exp2f / __expf /
   __fdividef compile to without -ftz) add a range test and two multiplies.
   A result below 2^-126 becomes 0 (far below the f16/bf16 test tolerance;
   README "Numbers"). */
__device__ __forceinline__ float kg_ex2_ftz(float x)
{
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
__device__ __forceinline__ float kg_rcp_ftz(float x)
{
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

/* exp for f16/bf16 (computed in f32): 2^(x log2 e) on the exp2 unit; relative
   error about 2^-22 + |x| 2^-24, far below those types' rounding step. */
__device__ __forceinline__ float kg_exp_fast(float x) { return kg_ex2_ftz(x * 1.4426950408889634f); }

/* gelu for f16/bf16 (computed in f32): x * Phi(x) with the normal tail
   Q(z) = phi(z) * t * P(t), t = 1 / (1 + p z), z = |x| (Abramowitz & Stegun
   26.2.17, |error| < 7.5e-8 on Q), on the fast reciprocal and exp2. Checked
   against the float64 erf form to far below the f16 rounding step; about
   half the instructions of erff, which made gelu compute-bound at 2-byte
   elements. Matches the reference on +-inf (-inf gives NaN, as a/2 *
   (1 + erf) does) and NaN. */
__device__ __forceinline__ float kg_gelu_fast(float x)
{
    const float z = fabsf(x);
    const float t = kg_rcp_ftz(fmaf(0.2316419f, z, 1.0f));
    const float k = 0.3989422804014327f; /* 1 / sqrt(2 pi) */
    const float poly =
        t * (0.319381530f * k +
             t * (-0.356563782f * k + t * (1.781477937f * k + t * (-1.821255978f * k + t * (1.330274429f * k)))));
    const float q = kg_ex2_ftz((z * -0.72134752044448170368f) * z) * poly; /* e^(-z^2/2) */
    return x * (x >= 0.0f ? 1.0f - q : q);
}

template <typename F>
__device__ __forceinline__ typename F::out_t kg_apply_at(const kg_ew_ptrs &p, int64_t o1, int64_t o2, int64_t o3)
{
    typename F::in0_t a = ((const typename F::in0_t *)p.in[0])[o1];
    typename F::in1_t b{};
    typename F::in2_t c{};
    if constexpr (F::arity > 1)
        b = ((const typename F::in1_t *)p.in[1])[o2];
    if constexpr (F::arity > 2)
        c = ((const typename F::in2_t *)p.in[2])[o3];
    return F::apply(a, b, c);
}

/* One vector: N elements of every operand at vector index i. */
template <typename F, int N> struct kg_dense_vecs {
    kgd_vec<typename F::in0_t, N> a;
    kgd_vec<typename F::in1_t, N> b;
    kgd_vec<typename F::in2_t, N> c;
    __device__ __forceinline__ void load(const kg_ew_ptrs &p, int64_t i)
    {
        a = ((const kgd_vec<typename F::in0_t, N> *)p.in[0])[i];
        if constexpr (F::arity > 1)
            b = ((const kgd_vec<typename F::in1_t, N> *)p.in[1])[i];
        if constexpr (F::arity > 2)
            c = ((const kgd_vec<typename F::in2_t, N> *)p.in[2])[i];
    }
    __device__ __forceinline__ void store(const kg_ew_ptrs &p, int64_t i) const
    {
        kgd_vec<typename F::out_t, N> o;
#pragma unroll
        for (int k = 0; k < N; k++)
            o.v[k] = F::apply(a.v[k], b.v[k], c.v[k]);
        ((kgd_vec<typename F::out_t, N> *)p.out)[i] = o;
    }
};

/* Grid-stride over vectors, two per iteration (both loaded before either is
   computed) so every thread keeps two loads per input in flight. */
template <typename F, int N> __device__ __forceinline__ void kg_ew_dense(const kg_ew_ptrs &p, int64_t n)
{
    const int64_t nvec = n / N;
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    const int64_t gid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t i = gid;
    for (; i + step < nvec; i += 2 * step) {
        kg_dense_vecs<F, N> x{}, y{};
        x.load(p, i);
        y.load(p, i + step);
        x.store(p, i);
        y.store(p, i + step);
    }
    if (i < nvec) {
        kg_dense_vecs<F, N> x{};
        x.load(p, i);
        x.store(p, i);
    }
    const int64_t t = nvec * N + gid;
    if (t < n)
        ((typename F::out_t *)p.out)[t] = kg_apply_at<F>(p, t, t, t);
}

/* Offsets of element (or vector) i for every operand, 32-bit. */
__device__ __forceinline__ void kg_offsets32(const kg_nd32 &L, uint32_t i, int32_t off[KG_EW_MAX_OPERANDS])
{
#pragma unroll
    for (int k = 0; k < KG_EW_MAX_OPERANDS; k++)
        off[k] = 0;
    uint32_t r = i;
#pragma unroll
    for (int d = 0; d < KG_LAYOUT_MAX_DIMS; d++) {
        if (d == L.ndim)
            break;
        const uint32_t q = kgd_div_magic(r, L.magic[d], L.shift[d]);
        const int32_t m = (int32_t)(r - q * L.size[d]);
        r = q;
#pragma unroll
        for (int k = 0; k < KG_EW_MAX_OPERANDS; k++)
            off[k] += m * L.stride[k][d];
    }
}

template <typename F, int N> __device__ __forceinline__ void kg_ew_nd32(const kg_ew_ptrs &p, const kg_nd32 &L)
{
    constexpr int U = KG_ND32_ILP;
    const uint64_t step = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i0 = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i0 < L.n; i0 += U * step) {
        int32_t off[U][KG_EW_MAX_OPERANDS];
        typename F::out_t v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint64_t i = i0 + u * step;
            if (i < L.n) {
                kg_offsets32(L, (uint32_t)i, off[u]);
                v[u] = kg_apply_at<F>(p, off[u][1], off[u][2], off[u][3]);
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            if (i0 + u * step < L.n)
                ((typename F::out_t *)p.out)[off[u][0]] = v[u];
    }
}

/* Loads N elements at `at`, or one element repeated when `bcast`. */
template <typename T, int N>
__device__ __forceinline__ kgd_vec<T, N> kg_load_vec(const void *base, int32_t at, bool bcast)
{
    kgd_vec<T, N> v;
    if (bcast) {
        const T x = ((const T *)base)[at];
#pragma unroll
        for (int k = 0; k < N; k++)
            v.v[k] = x;
    } else {
        v = *(const kgd_vec<T, N> *)((const T *)base + at);
    }
    return v;
}

template <typename F, int N> __device__ __forceinline__ void kg_ew_nd32v(const kg_ew_ptrs &p, const kg_nd32 &L)
{
    typedef typename F::out_t O;
    constexpr int U = KG_ND32_ILP / 2; /* vectors per thread and step */
    const uint64_t step = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i0 = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i0 < L.n; i0 += U * step) {
        int32_t off[U][KG_EW_MAX_OPERANDS];
        kgd_vec<O, N> o[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint64_t i = i0 + u * step;
            if (i >= L.n)
                continue;
            kg_offsets32(L, (uint32_t)i, off[u]);
            kgd_vec<typename F::in0_t, N> a = kg_load_vec<typename F::in0_t, N>(p.in[0], off[u][1], L.bcast & 2u);
            kgd_vec<typename F::in1_t, N> b{};
            kgd_vec<typename F::in2_t, N> c{};
            if constexpr (F::arity > 1)
                b = kg_load_vec<typename F::in1_t, N>(p.in[1], off[u][2], L.bcast & 4u);
            if constexpr (F::arity > 2)
                c = kg_load_vec<typename F::in2_t, N>(p.in[2], off[u][3], L.bcast & 8u);
#pragma unroll
            for (int k = 0; k < N; k++)
                o[u].v[k] = F::apply(a.v[k], b.v[k], c.v[k]);
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            if (i0 + u * step < L.n)
                *(kgd_vec<O, N> *)((O *)p.out + off[u][0]) = o[u];
    }
}

/* rows: dim 0 walked by groups of 2^L.bcast lanes (4 to 32), every other
   dim once per row (for an inner dim that is the fast dim of the operands
   but no vector fits, e.g. a permutation keeping an odd inner dim in place).
   A warp takes 32 rows per step: lane l computes the offsets of row r0 + l
   (its first element's); then each lane group walks its rows, KG_ROWS_ILP
   of them at a time with the offsets shuffled from their lanes, every lane
   loading its element of each before storing any. */
template <typename F, int N> __device__ __forceinline__ void kg_ew_rows(const kg_ew_ptrs &p, const kg_nd32 &L)
{
    typedef typename F::out_t O;
    constexpr int U = KG_ROWS_ILP;
    constexpr int K = F::arity + 1; /* operands */
    const uint32_t n0 = L.size[0], nrows = L.n / n0;
    const int lane = threadIdx.x & 31, lg = (int)L.bcast, lp = 1 << lg, groups = 32 >> lg;
    const int g = lane >> lg, li = lane & (lp - 1);
    const uint32_t nw = (gridDim.x * (uint32_t)blockDim.x) >> 5;
    int32_t s[K];
#pragma unroll
    for (int k = 0; k < K; k++)
        s[k] = L.stride[k][0];
    for (uint32_t r0 = ((blockIdx.x * (uint32_t)blockDim.x + threadIdx.x) >> 5) * 32; r0 < nrows; r0 += nw * 32) {
        int32_t mine[KG_EW_MAX_OPERANDS];
        kg_offsets32(L, (r0 + lane < nrows ? r0 + lane : nrows - 1) * n0, mine);
        const int rows = nrows - r0 < 32 ? (int)(nrows - r0) : 32;
        for (int u0 = 0; u0 < rows; u0 += groups * U) {
            int32_t off[U][K];
            bool ok[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int row = u0 + g + u * groups;
                ok[u] = row < rows;
#pragma unroll
                for (int k = 0; k < K; k++)
                    off[u][k] = __shfl_sync(0xffffffffu, mine[k], row & 31) + li * s[k];
            }
            for (uint32_t e = li; e < n0; e += lp) {
                O v[U];
#pragma unroll
                for (int u = 0; u < U; u++)
                    if (ok[u])
                        v[u] = kg_apply_at<F>(p, off[u][1 % K], off[u][2 % K], off[u][3 % K]);
#pragma unroll
                for (int u = 0; u < U; u++) {
                    if (ok[u])
                        ((O *)p.out)[off[u][0]] = v[u];
#pragma unroll
                    for (int k = 0; k < K; k++)
                        off[u][k] += lp * s[k];
                }
            }
        }
    }
}

template <typename F, int N> __device__ __forceinline__ void kg_ew_nd64(const kg_ew_ptrs &p, const kg_nd64 &L)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < L.n; i += step) {
        int64_t off[KG_EW_MAX_OPERANDS] = {0, 0, 0, 0};
        int64_t r = i;
        for (int d = 0; d < L.ndim; d++) {
            const int64_t q = r / L.size[d];
            const int64_t m = r - q * L.size[d];
            r = q;
#pragma unroll
            for (int k = 0; k < KG_EW_MAX_OPERANDS; k++)
                off[k] += m * L.stride[k][d];
        }
        ((typename F::out_t *)p.out)[off[0]] = kg_apply_at<F>(p, off[1], off[2], off[3]);
    }
}

#define KG_TILE 32

/* 2-d: size[1] rows of size[0] columns, one 32 x 32 tile per block of 32 x 8
   threads (grid-stride over tiles beyond the grid). Inputs whose fast dim is
   the rows (bit k of L.transposed) are staged through shared memory, read by
   threads walking rows so their loads coalesce; the other inputs are read
   straight into registers along columns. Every global load of a tile is
   issued before the first shared-memory store: a store through shared
   memory may alias a generic pointer, so a load after it could not be
   hoisted, and the loads would run one at a time. The output is written
   along rows, its fast dim. */
template <typename F, int N> __device__ __forceinline__ void kg_ew_tile(const kg_ew_ptrs &p, const kg_nd64 &L)
{
    constexpr int R = KG_TILE / KG_TILE_ROWS; /* elements per thread and input */
    typedef typename F::in0_t A;
    typedef typename F::in1_t B;
    typedef typename F::in2_t C;
    __shared__ A s0[KG_TILE][KG_TILE + 1];
    __shared__ B s1[F::arity > 1 ? KG_TILE : 1][KG_TILE + 1];
    __shared__ C s2[F::arity > 2 ? KG_TILE : 1][KG_TILE + 1];
    const A *pa = (const A *)p.in[0];
    const B *pb = (const B *)p.in[1];
    const C *pc = (const C *)p.in[2];
    const int64_t rows = L.size[1], cols = L.size[0];
    const int64_t tiles_c = (cols + KG_TILE - 1) / KG_TILE, tiles = tiles_c * ((rows + KG_TILE - 1) / KG_TILE);
    const int tx = threadIdx.x, ty = threadIdx.y;
    const bool t0 = L.transposed & 2u, t1 = L.transposed & 4u, t2 = L.transposed & 8u;
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int64_t r0 = (tile / tiles_c) * KG_TILE, c0 = (tile % tiles_c) * KG_TILE;
        A a[R] = {};
        B b[R] = {};
        C c[R] = {};
        /* 1. every load: element (r0 + tx, c0 + lc) for staged inputs,
              (r0 + lc, c0 + tx) for direct ones */
#pragma unroll
        for (int j = 0; j < R; j++) {
            const int lc = ty + KG_TILE_ROWS * j;
            const int64_t sr = r0 + tx, sc = c0 + lc, dr = r0 + lc, dc = c0 + tx;
            const bool sin = sr < rows && sc < cols, din = dr < rows && dc < cols;
            if (t0 ? sin : din)
                a[j] = pa[(t0 ? sr : dr) * L.stride[1][1] + (t0 ? sc : dc) * L.stride[1][0]];
            if constexpr (F::arity > 1)
                if (t1 ? sin : din)
                    b[j] = pb[(t1 ? sr : dr) * L.stride[2][1] + (t1 ? sc : dc) * L.stride[2][0]];
            if constexpr (F::arity > 2)
                if (t2 ? sin : din)
                    c[j] = pc[(t2 ? sr : dr) * L.stride[3][1] + (t2 ? sc : dc) * L.stride[3][0]];
        }
        /* 2. stage the transposed ones */
#pragma unroll
        for (int j = 0; j < R; j++) {
            const int lc = ty + KG_TILE_ROWS * j;
            if (t0)
                s0[lc][tx] = a[j];
            if constexpr (F::arity > 1)
                if (t1)
                    s1[lc][tx] = b[j];
            if constexpr (F::arity > 2)
                if (t2)
                    s2[lc][tx] = c[j];
        }
        __syncthreads();
        /* 3. compute and store element (r0 + lr, c0 + tx) */
#pragma unroll
        for (int j = 0; j < R; j++) {
            const int lr = ty + KG_TILE_ROWS * j;
            const int64_t row = r0 + lr, col = c0 + tx;
            if (row >= rows || col >= cols)
                continue;
            if (t0)
                a[j] = s0[tx][lr];
            if constexpr (F::arity > 1)
                if (t1)
                    b[j] = s1[tx][lr];
            if constexpr (F::arity > 2)
                if (t2)
                    c[j] = s2[tx][lr];
            ((typename F::out_t *)p.out)[row * L.stride[0][1] + col * L.stride[0][0]] = F::apply(a[j], b[j], c[j]);
        }
        __syncthreads(); /* the next tile reuses shared memory */
    }
}

/* ---- perm: the (0, J) plane in tiles, any number of dims outside it ------ */

template <typename F> struct kg_perm_shape {
    static constexpr int S0 = sizeof(typename F::out_t) > sizeof(typename F::in0_t) ? sizeof(typename F::out_t)
                                                                                      : sizeof(typename F::in0_t);
    static constexpr int S1 = S0 > sizeof(typename F::in1_t) ? S0 : sizeof(typename F::in1_t);
    static constexpr int SZ = S1 > sizeof(typename F::in2_t) ? S1 : sizeof(typename F::in2_t);
    static constexpr int T = SZ >= 8 ? 32 : 64;           /* tile edge, elements */
    static constexpr int E = T * T / KG_EW_THREADS;       /* elements per thread and operand */
};

/* Which tile element each thread holds. Thread t's m-th element (of E) is
   at (c, j) = (c_at + m * c_step, j_at) on the staged side (consecutive
   lanes along J; groups of N consecutive m are one vector along J when
   L.vec_j) and at (j_at + m * j_step, c_at) on the output side (consecutive
   lanes along dim 0; N-vectors along it when L.vec_c). The steps are
   constants, so a thread's addresses are one base plus constant multiples. */
template <int N, int T> struct kg_perm_map {
    int row, col, step; /* row: c (staged) / j (out); col: j / c; row of element m: row + (m / G) * step */
    static constexpr int G_VEC = N, G_SCALAR = 1;
    __device__ __forceinline__ kg_perm_map(bool vec)
    {
        if (vec) { /* T / N lanes per row, N elements each */
            row = threadIdx.x / (T / N);
            col = (threadIdx.x % (T / N)) * N;
            step = KG_EW_THREADS / (T / N);
        } else {
            row = threadIdx.x / T;
            col = threadIdx.x % T;
            step = KG_EW_THREADS / T;
        }
    }
};

/* Operand k's offset of position c on the c axis / j on the j axis. */
__device__ __forceinline__ int64_t kg_perm_offc(const kg_perm &L, int k, int64_t c)
{
    if (!L.fold_c)
        return c * L.stride[k][0];
    const int64_t hi = kgd_div_magic((uint32_t)c, L.fmagic_c, L.fshift_c);
    return (c - hi * L.fold_c) * L.stride[k][0] + hi * L.fstride[0][k];
}

__device__ __forceinline__ int64_t kg_perm_offj(const kg_perm &L, int k, int64_t j)
{
    if (!L.fold_j)
        return j * L.stride[k][1];
    const int64_t hi = kgd_div_magic((uint32_t)j, L.fmagic_j, L.fshift_j);
    return (j - hi * L.fold_j) * L.stride[k][1] + hi * L.fstride[1][k];
}

/* A staged input: element (c0 + c, j0 + j) of the tile, read along J (its
   fast dim). Out-of-range elements are zero (staged, never stored). */
template <typename X, int N, int T, int E>
__device__ __forceinline__ void kg_perm_load_staged(const X *base, const kg_perm &L, int k, int64_t c0, int64_t j0,
                                                    X (&r)[E])
{
    const int64_t s0 = L.stride[k][0], sj = L.stride[k][1];
    const kg_perm_map<N, T> at(L.vec_j);
    const int64_t c = c0 + at.row, j = j0 + at.col, cl = L.n0 - c;
    if (L.vec_j) {
        const X *q = base + c * s0 + j;
        const bool jin = j < L.nj;
#pragma unroll
        for (int i = 0; i < E / N; i++) {
            kgd_vec<X, N> v{};
            if (jin && i * at.step < cl)
                v = *(const kgd_vec<X, N> *)(q + (int64_t)(i * at.step) * s0);
#pragma unroll
            for (int e = 0; e < N; e++)
                r[i * N + e] = v.v[e];
        }
    } else {
        const X *q = base + c * s0 + j * sj;
        const bool jin = j < L.nj;
#pragma unroll
        for (int m = 0; m < E; m++)
            r[m] = (jin && m * at.step < cl) ? q[(int64_t)(m * at.step) * s0] : X{};
    }
}

/* permf: a staged input: element (c0 + c, j0 + j) of the tile, read along J (its
   fast dim). Out-of-range elements are zero (staged, never stored). */
template <typename X, int N, int T, int E>
__device__ __forceinline__ void kg_permf_load_staged(const X *base, const kg_perm &L, int k, int64_t c0, int64_t j0,
                                                    X (&r)[E])
{
    const kg_perm_map<N, T> at(L.vec_j);
    const int64_t j = j0 + at.col;
    const bool jin = j < L.nj;
    const X *q = base + (jin ? kg_perm_offj(L, k, j) : 0);
    if (L.vec_j) {
#pragma unroll
        for (int i = 0; i < E / N; i++) {
            const int64_t c = c0 + at.row + i * at.step;
            kgd_vec<X, N> v{};
            if (jin && c < L.n0)
                v = *(const kgd_vec<X, N> *)(q + kg_perm_offc(L, k, c));
#pragma unroll
            for (int e = 0; e < N; e++)
                r[i * N + e] = v.v[e];
        }
    } else {
#pragma unroll
        for (int m = 0; m < E; m++) {
            const int64_t c = c0 + at.row + m * at.step;
            r[m] = (jin && c < L.n0) ? q[kg_perm_offc(L, k, c)] : X{};
        }
    }
}

/* The staged values into s[j][c] (the mapping of kg_perm_load_staged). */
template <typename X, int N, int T, int E>
__device__ __forceinline__ void kg_perm_stage(X (*s)[T + 1], const kg_perm &L, const X (&r)[E])
{
    const kg_perm_map<N, T> at(L.vec_j);
    if (L.vec_j) {
#pragma unroll
        for (int i = 0; i < E / N; i++)
#pragma unroll
            for (int e = 0; e < N; e++)
                s[at.col + e][at.row + i * at.step] = r[i * N + e];
    } else {
#pragma unroll
        for (int m = 0; m < E; m++)
            s[at.col][at.row + m * at.step] = r[m];
    }
}

/* A direct input (fast along dim 0 like the output, broadcast along it, or
   neither): read in the output's mapping. */
template <typename X, int N, int T, int E>
__device__ __forceinline__ void kg_perm_load_direct(const X *base, const kg_perm &L, int k, int64_t c0, int64_t j0,
                                                    X (&r)[E])
{
    const int64_t s0 = L.stride[k][0], sj = L.stride[k][1];
    const kg_perm_map<N, T> at(L.vec_c);
    const int64_t j = j0 + at.row, c = c0 + at.col, jl = L.nj - j;
    const X *q = base + j * sj + c * s0;
    const bool cin = c < L.n0;
    if (L.vec_c) {
#pragma unroll
        for (int i = 0; i < E / N; i++) {
            kgd_vec<X, N> v{};
            if (cin && i * at.step < jl) {
                const X *qi = q + (int64_t)(i * at.step) * sj;
                if (s0 == 0) {
                    const X x = *qi;
#pragma unroll
                    for (int e = 0; e < N; e++)
                        v.v[e] = x;
                } else {
                    v = *(const kgd_vec<X, N> *)qi;
                }
            }
#pragma unroll
            for (int e = 0; e < N; e++)
                r[i * N + e] = v.v[e];
        }
    } else {
#pragma unroll
        for (int m = 0; m < E; m++)
            r[m] = (cin && m * at.step < jl) ? q[(int64_t)(m * at.step) * sj] : X{};
    }
}

/* permf: a direct input (fast along dim 0 like the output, broadcast along it, or
   neither): read in the output's mapping. */
template <typename X, int N, int T, int E>
__device__ __forceinline__ void kg_permf_load_direct(const X *base, const kg_perm &L, int k, int64_t c0, int64_t j0,
                                                    X (&r)[E])
{
    const kg_perm_map<N, T> at(L.vec_c);
    const int64_t c = c0 + at.col;
    const bool cin = c < L.n0;
    const X *q = base + (cin ? kg_perm_offc(L, k, c) : 0);
    if (L.vec_c) {
        const bool bcast = L.stride[k][0] == 0;
#pragma unroll
        for (int i = 0; i < E / N; i++) {
            const int64_t j = j0 + at.row + i * at.step;
            kgd_vec<X, N> v{};
            if (cin && j < L.nj) {
                const X *qi = q + kg_perm_offj(L, k, j);
                if (bcast) {
                    const X x = *qi;
#pragma unroll
                    for (int e = 0; e < N; e++)
                        v.v[e] = x;
                } else {
                    v = *(const kgd_vec<X, N> *)qi;
                }
            }
#pragma unroll
            for (int e = 0; e < N; e++)
                r[i * N + e] = v.v[e];
        }
    } else {
#pragma unroll
        for (int m = 0; m < E; m++) {
            const int64_t j = j0 + at.row + m * at.step;
            r[m] = (cin && j < L.nj) ? q[kg_perm_offj(L, k, j)] : X{};
        }
    }
}

/* A tile's input: staged (read along J, its fast dim) or direct (read in
   the output's mapping); FOLD: on folded axes (permf). */
template <bool FOLD, typename X, int N, int T, int E>
__device__ __forceinline__ void kg_perm_load(bool staged, const X *base, const kg_perm &L, int k, int64_t c0,
                                             int64_t j0, X (&r)[E])
{
    if constexpr (FOLD) {
        if (staged)
            kg_permf_load_staged<X, N, T, E>(base, L, k, c0, j0, r);
        else
            kg_permf_load_direct<X, N, T, E>(base, L, k, c0, j0, r);
    } else {
        if (staged)
            kg_perm_load_staged<X, N, T, E>(base, L, k, c0, j0, r);
        else
            kg_perm_load_direct<X, N, T, E>(base, L, k, c0, j0, r);
    }
}

/* perm (FOLD false) and permf (FOLD true: on folded axes, kg_perm_offc /
   kg_perm_offj give each position's offset): one block per tile of the
   (0, J) plane and index of the other dims (grid-stride beyond the grid).
   Every global load of a tile is issued before the first shared-memory
   store (see kg_ew_tile), then the staged inputs go through shared memory,
   and the output is written along dim 0. */
template <typename F, int N, bool FOLD>
__device__ __forceinline__ void kg_ew_perm_tiles(const kg_ew_ptrs &p, const kg_perm &L)
{
    typedef kg_perm_shape<F> PS;
    constexpr int T = PS::T, E = PS::E;
    typedef typename F::in0_t A;
    typedef typename F::in1_t B;
    typedef typename F::in2_t C;
    typedef typename F::out_t O;
    __shared__ A s0[T][T + 1];
    __shared__ B s1[F::arity > 1 ? T : 1][T + 1];
    __shared__ C s2[F::arity > 2 ? T : 1][T + 1];
    const bool t0 = L.staged & 2u, t1 = L.staged & 4u, t2 = L.staged & 8u;
    for (uint32_t tile = blockIdx.x; tile < L.tiles; tile += gridDim.x) {
        const uint32_t q = kgd_div_magic(tile, L.magic_c, L.shift_c);
        uint32_t b = kgd_div_magic(q, L.magic_j, L.shift_j);
        const int64_t c0 = (int64_t)(tile - q * L.tiles_c) * T, j0 = (int64_t)(q - b * L.tiles_j) * T;
        int64_t off[KG_EW_MAX_OPERANDS] = {0, 0, 0, 0};
        for (int d = 0; d < L.nbatch; d++) {
            const uint32_t nb = kgd_div_magic(b, L.bmagic[d], L.bshift[d]);
            const int64_t m = b - nb * L.bsize[d];
            b = nb;
#pragma unroll
            for (int k = 0; k < KG_EW_MAX_OPERANDS; k++)
                off[k] += m * L.stride[k][2 + d];
        }
        A a[E];
        B bb[E];
        C cc[E];
        /* 1. every load */
        kg_perm_load<FOLD, A, N, T, E>(t0, (const A *)p.in[0] + off[1], L, 1, c0, j0, a);
        if constexpr (F::arity > 1)
            kg_perm_load<FOLD, B, N, T, E>(t1, (const B *)p.in[1] + off[2], L, 2, c0, j0, bb);
        if constexpr (F::arity > 2)
            kg_perm_load<FOLD, C, N, T, E>(t2, (const C *)p.in[2] + off[3], L, 3, c0, j0, cc);
        /* 2. stage */
        if (t0)
            kg_perm_stage<A, N, T, E>(s0, L, a);
        if constexpr (F::arity > 1)
            if (t1)
                kg_perm_stage<B, N, T, E>(s1, L, bb);
        if constexpr (F::arity > 2)
            if (t2)
                kg_perm_stage<C, N, T, E>(s2, L, cc);
        __syncthreads();
        /* 3. compute and store along dim 0; the thread's output row jj:
           inside the tensor (perm: jl rows from the thread's first), its
           address */
        const kg_perm_map<N, T> at(L.vec_c);
        const int64_t os0 = L.stride[0][0], osj = L.stride[0][1];
        const int64_t jl = L.nj - (j0 + at.row);
        const bool cin = c0 + at.col < L.n0;
        O *out = FOLD ? (O *)p.out + off[0] + (cin ? kg_perm_offc(L, 0, c0 + at.col) : 0)
                      : (O *)p.out + off[0] + (j0 + at.row) * osj + (c0 + at.col) * os0;
        if (L.vec_c) {
#pragma unroll
            for (int i = 0; i < E / N; i++) {
                const int jj = at.row + i * at.step;
                kgd_vec<O, N> v;
#pragma unroll
                for (int e = 0; e < N; e++) {
                    const int m = i * N + e, cc_ = at.col + e;
                    B y{};
                    C z{};
                    if constexpr (F::arity > 1)
                        y = t1 ? s1[jj][cc_] : bb[m];
                    if constexpr (F::arity > 2)
                        z = t2 ? s2[jj][cc_] : cc[m];
                    v.v[e] = F::apply(t0 ? s0[jj][cc_] : a[m], y, z);
                }
                if constexpr (FOLD) {
                    if (cin && j0 + jj < L.nj)
                        *(kgd_vec<O, N> *)(out + kg_perm_offj(L, 0, j0 + jj)) = v;
                } else {
                    if (cin && i * at.step < jl)
                        *(kgd_vec<O, N> *)(out + (int64_t)(i * at.step) * osj) = v;
                }
            }
        } else {
#pragma unroll
            for (int m = 0; m < E; m++) {
                const int jj = at.row + m * at.step;
                B y{};
                C z{};
                if constexpr (F::arity > 1)
                    y = t1 ? s1[jj][at.col] : bb[m];
                if constexpr (F::arity > 2)
                    z = t2 ? s2[jj][at.col] : cc[m];
                const O v = F::apply(t0 ? s0[jj][at.col] : a[m], y, z);
                if constexpr (FOLD) {
                    if (cin && j0 + jj < L.nj)
                        out[kg_perm_offj(L, 0, j0 + jj)] = v;
                } else {
                    if (cin && m * at.step < jl)
                        out[(int64_t)(m * at.step) * osj] = v;
                }
            }
        }
        __syncthreads(); /* the next tile reuses shared memory */
    }
}

template <typename F, int N> __device__ __forceinline__ void kg_ew_perm(const kg_ew_ptrs &p, const kg_perm &L)
{
    kg_ew_perm_tiles<F, N, false>(p, L);
}

template <typename F, int N> __device__ __forceinline__ void kg_ew_permf(const kg_ew_ptrs &p, const kg_perm &L)
{
    kg_ew_perm_tiles<F, N, true>(p, L);
}

#endif
