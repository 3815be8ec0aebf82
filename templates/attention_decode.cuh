/*
 * attention_decode.cuh - flash attention forward for short queries (decode,
 * speculative decode, chunked prefill with few rows): flash-decoding.
 *
 * The query rows of all the query heads that share one key/value head are
 * packed into one tile (GQA / MQA: packed row r of KV head hk is query head
 * hk * group + r / Sq, query r % Sq), so K and V are read once per KV head and
 * row tile instead of once per query head. The key range is split across
 * blocks: grid (row tiles x splits, Hkv, B); block (tile rt, split s) walks
 * keys [s * chunk, (s + 1) * chunk) in tiles of BN with a NST-stage pipeline
 * (bulk tensor copies on compute capability 9.0 at head dims 64, 96, 128, 256,
 * else cp.async; dec_unit), its four warps taking BN / 4 keys of each tile each and every
 * row (or, for 64-row tiles, 16 rows each and every key; mma.sync m16n8k16,
 * f32 accumulators, the online softmax of attention.cuh). The warps'
 * partial (max, sum, output) are merged in warp order through shared memory;
 * with one split the block writes the result, else f32 partials of its valid
 * rows go to scratch and are merged in a fixed order, one pass per (row,
 * float4 column) by a group of lanes (as many as the split count needs,
 * kg_attn_merge_lanes) with the online softmax (merge_row): by the last
 * block of the row tile
 * to finish (an integer counter per row tile, p.counters, zero between
 * calls), or, where that one block would read too much (p.counters NULL), by
 * a second grid (attn_dec_combine). Fixed orders throughout, no float
 * atomics: a call is bitwise reproducible. On sm_90 the kernels are launched
 * with programmatic dependent launch: they wait for the previous grid before
 * any global access (pdl_wait) and let the next one start launching.
 *
 * Partials (p.part): for partial index x = ((b * Hkv + hk) * nrt + rt) *
 * splits + s, rows R = p.rows_tile: output [R][D] at part + x * R * (D + 2),
 * then max [R] (log2 domain) and sum [R].
 */
#ifndef KG_ATTENTION_DECODE_CUH
#define KG_ATTENTION_DECODE_CUH

#include "attention.cuh"
#include "attention_tma.cuh"

/* One more kg_attn_params.dflags bit of the short-query kernels (the
   runtime's attention.c has the same value; attention_params.h has
   KG_DEC_LATE_PDL): KG_DEC_COMB_EARLY, the combine kernel lets the next
   grid launch at its start, before its wait for the decode grid (and does
   its index arithmetic before that wait). No result bit changes. */
#define KG_DEC_COMB_EARLY 2u
/* KG_DEC_TAIL (decode kernel, with p.counters): no combine grid; the last
   K blocks of a row tile to write their partials merge its splits, each a
   share of the merge's passes (K = dflags >> 8, 1 to 255; runtime/attn_plan.h's
   kg_attn_dec_tail_mergers, which also keeps the blocks that can wait at
   once below the multiprocessor count, so a waiting block never holds the
   place a block it waits for needs). The same merge rows and lanes as the
   combine kernel: the same bits. p.counters[tile] counts the tile's
   written splits; the last split in zeroes it (zero between calls). */
#define KG_DEC_TAIL 4u

namespace kg_attn
{

/* the query row of packed row r: (query head offset in the group, query) */
__device__ __forceinline__ void dec_row(const kg_attn_params &p, int r, int &hg, int &i)
{
    hg = r / p.sq;
    i = r - hg * p.sq;
}

/* Programmatic dependent launch (sm_90; the runtime sets the launch
   attribute there): wait until the grids this one depends on have finished
   and their writes are visible; let the grids that depend on this one start
   launching (they wait in turn). No-ops below sm_90. */
__device__ __forceinline__ void pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_launch_dependents()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

/* 16 bytes global -> shared with a 256-byte L2 prefetch (K and V stream). */
__device__ __forceinline__ void cp_async16_pf(uint32_t dst, const void *src, bool pred)
{
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(pred ? 16 : 0));
}

/* load_tile (attention.cuh) with the prefetching copy. KG_DEC_ROWS (the
   default): each thread copies the same 16-byte column of every RS-th row
   (RS = NT / CPR, or 8 rows of the first 8 CPR threads where that is no
   whole number: D 96), its source pointer stepping by a fixed stride, so a
   copy costs a few instructions instead of the division and 64-bit row
   product of the general form (the Hopper producer's measured ~45
   instructions per copy, attention_sm90.cuh); tiles that end before n take
   no bounds checks. */
#ifndef KG_DEC_ROWS
#define KG_DEC_ROWS 1
#endif
template <int ROWS, int D, int P, int E, int NT>
__device__ __forceinline__ void load_kv(uint32_t dst, const char *base, int64_t ld, int row0, int n, int tid)
{
    static_assert(E == 2, "16-bit elements (tile_at)");
    constexpr int CPR = D * E / 16;
    constexpr int RS = !KG_DEC_ROWS ? 0 : NT % CPR == 0 ? NT / CPR : NT / CPR >= 8 ? 8 : 0;
    if constexpr (RS > 0 && ROWS % RS == 0) {
        if (RS * CPR < NT && tid >= RS * CPR)
            return;
        const int r0 = tid / CPR, c = tid % CPR;
        const char *src = base + ((int64_t)(row0 + r0) * ld) * E + c * 16;
        const int64_t step = (int64_t)RS * ld * E;
        const int lim = n - row0 - r0; /* pass it copies a real row while it RS < lim */
        if (lim >= ROWS) {
#pragma unroll
            for (int it = 0; it < ROWS / RS; it++) {
                cp_async16_pf(dst + tile_at<P>(r0 + it * RS, c * 8), src, true);
                src += step;
            }
        } else {
#pragma unroll
            for (int it = 0; it < ROWS / RS; it++) {
                const bool ok = it * RS < lim;
                cp_async16_pf(dst + tile_at<P>(r0 + it * RS, c * 8), ok ? src : base, ok);
                src += step;
            }
        }
    } else {
#pragma unroll
        for (int i = tid; i < ROWS * CPR; i += NT) {
            const int r = i / CPR, c = i % CPR;
            const bool ok = row0 + r < n;
            const char *src = ok ? base + ((int64_t)(row0 + r) * ld) * E + c * 16 : base;
            cp_async16_pf(dst + tile_at<P>(r, c * 8), src, ok);
        }
    }
}

/* The layout of the K and V tiles (tile_at): head dims from 64 in the
   128-byte-swizzled panels that bulk tensor copies write (BN rows each; D 96
   takes two panels, the second half used: its bulk copy fills columns past
   D with zeros, the cp.async copies leave them unwritten, and nothing reads
   them), D 32 in rows of D + 8 elements (both conflict-free for ldmatrix). */
template <int D, int BN> __device__ __forceinline__ constexpr int dec_kv_pitch() { return D >= 64 ? -BN : D + 8; }

/* A 32-bit load with acquire semantics at GPU scope (KG_DEC_TAIL's count
   of a row tile's written splits). */
__device__ __forceinline__ int ld_acquire(const int *a)
{
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(a) : "memory");
    return v;
}

/* One split's partial (max m, sum l, output v) folded into a running
   (mr, sum, acc) in the log2 domain: the online softmax once more. A split
   with no visible key has m = -inf, l = 0, v = 0 and adds nothing. */
__device__ __forceinline__ void fold_split(float &mr, float &sum, float4 &acc, float m, float l, float4 v)
{
    const float mn = fmaxf(mr, m);
    if (mn == -CUDART_INF_F)
        return;
    const float a = ex2(mr - mn), w = ex2(m - mn);
    sum = sum * a + l * w;
    acc.x = acc.x * a + v.x * w;
    acc.y = acc.y * a + v.y * w;
    acc.z = acc.z * a + v.z * w;
    acc.w = acc.w * a + v.w * w;
    mr = mn;
}

/* Writes one merged float4 of a row (and, from its first column, the lse). */
template <typename T>
__device__ __forceinline__ void dec_store(const kg_attn_params &p, int r, int c, int hk, int b, float m, float sum,
                                          float4 acc)
{
    int hg, i;
    dec_row(p, r, hg, i);
    const int h = hk * p.group + hg;
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    T *out = (T *)p.out + b * p.o_sb + (int64_t)h * p.o_sh + (int64_t)i * p.o_ss;
    uint2 u;
    u.x = mma<T>::pack(acc.x * inv, acc.y * inv);
    u.y = mma<T>::pack(acc.z * inv, acc.w * inv);
    *(uint2 *)&out[4 * c] = u;
    if (p.lse && c == 0)
        p.lse[b * p.l_sb + h * p.l_sh + (int64_t)i * p.l_ss] = sum > 0.f ? (m + log2f(sum)) * KG_LN2 : -CUDART_INF_F;
}

/* Merges the S partials of one row (part: split 0's partial of its row tile,
   rr: the row in the tile) for float4 column c with a group of G lanes (G a
   power of two up to 32: G consecutive lanes of one warp, gl this lane's
   place in the group; every lane of the warp calls it with the same G):
   lane gl folds splits gl, gl + G, gl + 2G, ... in that order, U loads in
   flight at a time (one round of loads where S <= U x G), then the group
   folds its lanes in a fixed tree (lane gl takes lane gl + o for o = 1, 2,
   ..., G / 2 where gl is a multiple of 2o). Lane 0 of the group holds the
   result. G = 1: the splits in split order. The partials were written by
   other blocks: read through L2 (ld.cg). */
template <int D, int U>
__device__ __forceinline__ void merge_row(const float *part, int64_t ps, int R, int rr, int c, int S, int G, int gl,
                                          float &mr, float &sum, float4 &acc)
{
    mr = -CUDART_INF_F;
    sum = 0.f;
    acc = make_float4(0.f, 0.f, 0.f, 0.f);
    const float *src = part + rr * D + 4 * c + gl * ps, *ml = part + R * D + rr + gl * ps;
    const int64_t st = (int64_t)G * ps;
    const int n = S > gl ? (S - gl + G - 1) / G : 0; /* this lane's splits */
    for (int s = 0; s < n; s += U) {
        float4 v[U];
        float m[U], l[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (s + u < n) {
                v[u] = __ldcg((const float4 *)(src + (s + u) * st));
                m[u] = __ldcg(ml + (s + u) * st);
                l[u] = __ldcg(ml + (s + u) * st + R);
            }
#pragma unroll
        for (int u = 0; u < U; u++)
            if (s + u < n)
                fold_split(mr, sum, acc, m[u], l[u], v[u]);
    }
    for (int o = 1; o < G; o *= 2) {
        const float m = __shfl_down_sync(0xffffffffu, mr, o, G), l = __shfl_down_sync(0xffffffffu, sum, o, G);
        float4 v;
        v.x = __shfl_down_sync(0xffffffffu, acc.x, o, G);
        v.y = __shfl_down_sync(0xffffffffu, acc.y, o, G);
        v.z = __shfl_down_sync(0xffffffffu, acc.z, o, G);
        v.w = __shfl_down_sync(0xffffffffu, acc.w, o, G);
        if ((gl & (2 * o - 1)) == 0)
            fold_split(mr, sum, acc, m, l, v);
    }
}

/* The lanes of the merge of S splits: the fewest, a power of two up to 32,
   that take every split in one round of 8 loads each (runtime/attention.c's
   kg_attn_merge_lanes, which sizes the combine kernel's blocks, is the
   same rule). */
__device__ __forceinline__ int dec_lanes(int S)
{
    int g = 1;
    while (g < 32 && g * 8 < S)
        g *= 2;
    return g;
}

/* The fused merge: the last block of a row tile merges its p.splits partials
   (part: split 0's) for the tile's vr valid rows (the others were never
   written): groups of dec_lanes(p.splits) threads take (row, float4 column)
   items, each merged in one pass (merge_row; the combine kernel's lanes by
   default, so the same bits; the merge is a latency tail after the last
   split's stream). Passes of NT / G items; this block takes passes first,
   first + step, ... (KG_DEC_TAIL: merger first of step; else 0 of 1). */
template <typename T, int D, int R, int NT>
__device__ __forceinline__ void dec_merge(const kg_attn_params &p, const float *part, int r0, int rows, int hk, int b,
                                          int first = 0, int step = 1)
{
    constexpr int C4 = D / 4;
    const int G = dec_lanes(p.splits), vr = min(R, rows - r0), gl = threadIdx.x % G, n = vr * C4;
    for (int it0 = first * (NT / G); it0 < n; it0 += step * (NT / G)) { /* the same trip count in every lane of a warp */
        const int x = it0 + (int)threadIdx.x / G, it = min(x, n - 1), r = it / C4, c = it - r * C4;
        float m, sum;
        float4 acc;
        merge_row<D, 8>(part, (int64_t)R * (D + 2), R, r, c, p.splits, G, gl, m, sum, acc);
        if (gl == 0 && x < n)
            dec_store<T>(p, r0 + r, c, hk, b, m, sum, acc);
    }
}

/* The rows a thread accumulates (WR: warps along the rows; 1: every warp
   all R = MT x 16 rows, 4: each warp MT x 16 rows of its own): running max,
   sum and output zeroed, and each row's query index and mask row. */
template <int D, int MT, int WR, int KIND>
__device__ __forceinline__ void dec_rows(const kg_attn_params &p, int r0, int hk, int b, float (&o)[MT][D / 8][4],
                                         float (&mx)[MT][2], float (&l)[MT][2], int (&qi)[MT][2],
                                         const float *(&mrow)[MT][2])
{
    const int g = (threadIdx.x & 31) >> 2, wr = ((threadIdx.x >> 5) % WR) * MT * 16;
    const int rows = p.group * p.sq;
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
#pragma unroll
        for (int d = 0; d < D / 8; d++)
            o[mt][d][0] = o[mt][d][1] = o[mt][d][2] = o[mt][d][3] = 0.f;
#pragma unroll
        for (int x = 0; x < 2; x++) {
            mx[mt][x] = -CUDART_INF_F;
            l[mt][x] = 0.f;
            int hg, i;
            dec_row(p, min(r0 + wr + mt * 16 + g + 8 * x, rows - 1), hg, i);
            qi[mt][x] = i;
            mrow[mt][x] = KIND == KG_ATTN_MASK
                              ? p.mask + b * p.m_sb + (int64_t)(hk * p.group + hg) * p.m_sh + (int64_t)i * p.m_sq
                              : nullptr;
        }
    }
}

/* One key tile of a unit: keys [j0, j0 + BN) in shared memory (K at aK, V
   at aV, laid out as dec_kv_pitch says), the NW = 4 / WR warps taking BN / NW keys each;
   S = Q K^T (Q at aQ), scaled, masked (keys from kend on, the causal rule,
   the additive mask), the online softmax and O += P V. */
template <typename T, int D, int MT, int WR, int BN, int KIND>
__device__ __forceinline__ void dec_tile(const kg_attn_params &p, uint32_t aQ, uint32_t aK, uint32_t aV, int j0,
                                         int kend, int imin, const int (&qi)[MT][2], const float *const (&mrow)[MT][2],
                                         float (&o)[MT][D / 8][4], float (&mx)[MT][2], float (&l)[MT][2])
{
    constexpr int NW = 4 / WR, PD = D + 8, E = 2, KP = dec_kv_pitch<D, BN>();
    constexpr int KW = BN / NW, NS = KW / 8, ND = D / 8, KD = D / 16;
    static_assert(KW % 16 == 0, "each warp takes a multiple of 16 keys");
    const bool causal = KIND == KG_ATTN_CAUSAL || (KIND == KG_ATTN_MASK && p.causal);
    const int lane = threadIdx.x & 31, t = lane & 3;
    const int warp = (threadIdx.x >> 5) / WR, wr = ((threadIdx.x >> 5) % WR) * MT * 16; /* key group, first row */
    const int a_row = lane & 15, a_col = (lane >> 4) * 8;
    const int b_row = (lane & 7) + ((lane >> 4) << 3), b_col = ((lane >> 3) & 1) * 8;
    const int v_row = (lane & 7) + (((lane >> 3) & 1) << 3), v_col = (lane >> 4) * 8;
    const int wk = warp * KW; /* the warp's keys inside a tile */
    const int n0 = j0 + wk;   /* the warp's first key */

    float s[MT][NS][4];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int n = 0; n < NS; n++)
            s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < KD; kk++) {
        uint32_t a[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
            kgd_ldmatrix_x4(a[mt], aQ + ((wr + mt * 16 + a_row) * PD + kk * 16 + a_col) * E);
#pragma unroll
        for (int nn = 0; nn < KW / 16; nn++) {
            uint32_t bf[4];
            kgd_ldmatrix_x4(bf, aK + tile_at<KP>(wk + nn * 16 + b_row, kk * 16 + b_col));
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                mma<T>::run(s[mt][2 * nn], a[mt], bf[0], bf[1]);
                mma<T>::run(s[mt][2 * nn + 1], a[mt], bf[2], bf[3]);
            }
        }
    }

    const bool check = n0 + KW > kend || (causal && n0 + KW - 1 > imin + p.sk - p.sq);
    uint32_t pa[MT][KW / 16][4];
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
        float tmax[2] = {-CUDART_INF_F, -CUDART_INF_F};
#pragma unroll
        for (int n = 0; n < NS; n++)
#pragma unroll
            for (int x = 0; x < 4; x++) {
                const int i = x >> 1, c = n0 + n * 8 + 2 * t + (x & 1);
                float y = s[mt][n][x] * p.scale_log2;
                if (KIND == KG_ATTN_MASK && c < kend)
                    y += mrow[mt][i][(int64_t)c * p.m_sk] * KG_LOG2E;
                if (check && (c >= kend || (causal && c > qi[mt][i] + p.sk - p.sq)))
                    y = -CUDART_INF_F;
                s[mt][n][x] = y;
                tmax[i] = fmaxf(tmax[i], y);
            }
        softmax_tile<T, NS, ND>(s[mt], tmax, mx[mt], l[mt], o[mt], pa[mt]);
    }
    pv_tile_at<T, MT, KW, D, KP>(o, pa, aV, wk, v_row, v_col);
}

/* The end of a unit: the NW warps' (max, sum, output) of each row merged in
   warp (key) order through shared memory at buf, ER rows a pass; with one
   split (final) the normalized rows and lse go to out, else the valid rows'
   partial (output, max, sum) to part. */
template <typename T, int D, int MT, int WR, int ER>
__device__ __forceinline__ void dec_finish(const kg_attn_params &p, float *buf, const float (&o)[MT][D / 8][4],
                                           const float (&mx)[MT][2], const float (&l)[MT][2], float *part, int r0,
                                           int hk, int b, bool final)
{
    constexpr int NT = 128, NW = 4 / WR, R = WR * MT * 16, OP = D + 8, ND = D / 8;
    constexpr int TPR = NT / ER; /* threads per row of a pass */
    static_assert(R % ER == 0 && ER % 16 == 0 && (WR == 1 || ER == R), "passes of whole m-tiles");
    static_assert(D % (4 * TPR) == 0, "partial rows in float4 columns");
    const int tid = threadIdx.x, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const int warp = (tid >> 5) / WR, wr = ((tid >> 5) % WR) * MT * 16;
    const int rows = p.group * p.sq;
    float *wm = buf;         /* [NW][ER] */
    float *wl = wm + NW * ER; /* [NW][ER] */
    /* [NW][ER][D + 8]: rows of D + 8 floats (8 banks apart), so that the float2
       stores of a half-warp (4 rows x 4 lanes) take no bank conflict */
    float *wo = wl + NW * ER;
#pragma unroll
    for (int e = 0; e < R / ER; e++) {
        /* each warp writes (m, l, o) of its rows of this pass */
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            if ((wr + mt * 16) / ER != e) /* warp-uniform */
                continue;
#pragma unroll
            for (int i = 0; i < 2; i++) {
                const int r = wr + mt * 16 + g + 8 * i - e * ER;
                const float sum = quad_sum(l[mt][i]);
                if (t == 0) {
                    wm[warp * ER + r] = mx[mt][i];
                    wl[warp * ER + r] = sum;
                }
#pragma unroll
                for (int d = 0; d < ND; d++)
                    *(float2 *)&wo[(warp * ER + r) * OP + d * 8 + 2 * t] =
                        make_float2(o[mt][d][2 * i], o[mt][d][2 * i + 1]);
            }
        }
        __syncthreads();

        if (final) {
            const int r = tid / TPR, c0 = tid % TPR, pr = e * ER + r; /* pass row, tile row */
            float m = -CUDART_INF_F;
#pragma unroll
            for (int w = 0; w < NW; w++)
                m = fmaxf(m, wm[w * ER + r]);
            const float use = m == -CUDART_INF_F ? 0.f : m;
            float sc[NW], sum = 0.f;
#pragma unroll
            for (int w = 0; w < NW; w++) {
                sc[w] = ex2(wm[w * ER + r] - use);
                sum += wl[w * ER + r] * sc[w];
            }
            int hg, i;
            dec_row(p, min(r0 + pr, rows - 1), hg, i);
            const int h = hk * p.group + hg;
            const float inv = sum > 0.f ? 1.f / sum : 0.f;
            T *out = (T *)p.out + b * p.o_sb + (int64_t)h * p.o_sh + (int64_t)i * p.o_ss;
            if (r0 + pr < rows) {
                for (int c = 2 * c0; c < D; c += 2 * TPR) {
                    float a0 = 0.f, a1 = 0.f;
#pragma unroll
                    for (int w = 0; w < NW; w++) {
                        a0 += wo[(w * ER + r) * OP + c] * sc[w];
                        a1 += wo[(w * ER + r) * OP + c + 1] * sc[w];
                    }
                    *(uint32_t *)&out[c] = mma<T>::pack(a0 * inv, a1 * inv);
                }
                if (p.lse && c0 == 0)
                    p.lse[b * p.l_sb + h * p.l_sh + (int64_t)i * p.l_ss] =
                        sum > 0.f ? (m + log2f(sum)) * KG_LN2 : -CUDART_INF_F;
            }
        } else {
            /* the partial of the valid rows (the merge reads no other): a
               thread a (row, float4 column) item at a time, eight lanes on
               128 contiguous bytes of one row (C4 is a multiple of 8), so
               that the shared-memory reads take no bank conflict */
            constexpr int C4 = D / 4;
            static_assert(C4 % 8 == 0, "a row in whole 128-byte pieces");
            for (int x = tid; x < ER * C4; x += NT) {
                const int r = x / C4, q = x - r * C4, pr = e * ER + r;
                if (r0 + pr >= rows)
                    break; /* rows only grow with x */
                float m = -CUDART_INF_F;
#pragma unroll
                for (int w = 0; w < NW; w++)
                    m = fmaxf(m, wm[w * ER + r]);
                const float use = m == -CUDART_INF_F ? 0.f : m;
                float sum = 0.f;
                float4 a = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
                for (int w = 0; w < NW; w++) {
                    const float sc = ex2(wm[w * ER + r] - use);
                    sum += wl[w * ER + r] * sc;
                    const float4 y = *(const float4 *)&wo[(w * ER + r) * OP + 4 * q];
                    a.x += y.x * sc;
                    a.y += y.y * sc;
                    a.z += y.z * sc;
                    a.w += y.w * sc;
                }
                *(float4 *)&part[pr * D + 4 * q] = a;
                if (q == 0) {
                    part[R * D + pr] = m;
                    part[R * D + R + pr] = sum;
                }
            }
        }
        if (e + 1 < R / ER)
            __syncthreads(); /* the next pass writes over buf */
    }
}

/* The queries of packed rows [r0, r0 + R) that are valid span [imin, imax]. */
__device__ __forceinline__ void dec_span(const kg_attn_params &p, int r0, int R, int &imin, int &imax)
{
    const int rl = min(r0 + R, p.group * p.sq) - 1;
    imin = 0, imax = p.sq - 1;
    if (r0 / p.sq == rl / p.sq)
        imin = r0 % p.sq, imax = rl % p.sq;
}

/* One work unit (row tile rt, split) a block; keys [split x
   chunk, + chunk) in tiles of BN through an NST-stage pipeline: cp.async
   copies by every thread, or (tm.on: head dims from 64) bulk tensor
   copies issued by thread 0 that complete on one barrier per stage; the
   same bytes land in the same places for the keys the unit reads (bulk
   copies also bring the rows of the tile past the unit's keys, masked out
   as the zeros the other path writes there), so the results are bitwise
   the same. Returns 1 where this block merged the row tile's splits (fused
   merge). */
template <typename T, int D, int MT, int WR, int BN, int NST, int KIND>
__device__ __forceinline__ int dec_unit(const kg_attn_params &p, const kg_attn_tmaps &tm, int rt, int split, int hk,
                                        int b, int nrt, int hkv, uint64_t &t_start, uint64_t &t_stream)
{
    constexpr int NT = 128, R = WR * MT * 16, PD = D + 8, E = 2, CPR = D * E / 16, KP = dec_kv_pitch<D, BN>();
    extern __shared__ __align__(16) unsigned char smem[];
    /* Q (rows of PD elements), then NST stages of [K tile, V tile]; the
       swizzled tiles start on 1024 bytes (gen/attention.lua counts it) */
    const uint32_t aQ = kgd_smem_addr(smem), aKV = KP < 0 ? (aQ + R * PD * E + 1023) & ~1023u : aQ + R * PD * E;
    constexpr int DP = (D + 63) / 64 * 64; /* whole panels */
    constexpr uint32_t TILE = BN * (KP < 0 ? DP : PD) * E, STAGE = 2 * TILE;
    __shared__ alignas(8) uint64_t full[KG_DEC_MAX_STAGES]; /* bulk copies: stage s landed (K and V: two arrivals) */
    const bool tma = KP < 0 && tm.on;
    /* the stages: bulk copies take p.stages where the launch gave the
       shared memory for them (more bytes in flight for grids of one block
       per multiprocessor), cp.async its NST (its waits count groups) */
    const int ns = tma && p.stages >= 2 ? min((int)p.stages, KG_DEC_MAX_STAGES) : NST;

    const int tid = threadIdx.x;
    const int rows = p.group * p.sq, r0 = rt * R;
    const bool causal = KIND == KG_ATTN_CAUSAL || (KIND == KG_ATTN_MASK && p.causal);
    int imin, imax;
    dec_span(p, r0, R, imin, imax);
    const int k0 = split * p.chunk;
    int kend = (int)min((int64_t)p.sk, (int64_t)k0 + p.chunk);
    if (causal)
        kend = min(kend, imax + 1 + p.sk - p.sq);
    const int ntiles = kend > k0 ? (kend - k0 + BN - 1) / BN : 0;

    const char *k = (const char *)p.k + (b * p.k_sb + hk * p.k_sh) * E;
    const char *v = (const char *)p.v + (b * p.v_sb + hk * p.v_sh) * E;
    /* tile j of the unit into stage st */
    auto load = [&](int st, int j) {
        const uint32_t at = aKV + st * STAGE;
        if (tma) {
            if (tid == 0) {
                const uint32_t bar = kgd_smem_addr(&full[st]);
                tma_tile<BN, DP>(at, tm.k, bar, k0 + j * BN, hk, b);
                tma_tile<BN, DP>(at + TILE, tm.v, bar, k0 + j * BN, hk, b);
            }
        } else {
            load_kv<BN, D, KP, E, NT>(at, k, p.k_ss, k0 + j * BN, kend, tid);
            load_kv<BN, D, KP, E, NT>(at + TILE, v, p.v_ss, k0 + j * BN, kend, tid);
        }
    };
    if (tma) {
        if (tid == 0) {
            for (int st = 0; st < ns; st++)
                mbar_init(kgd_smem_addr(&full[st]), 2);
            mbar_init_fence();
            tma_prefetch(tm.k);
            tma_prefetch(tm.v);
        }
        __syncthreads();
    }
    /* the barriers and the maps' prefetch above touch no global memory, so
       they overlap the end of the previous grid in the stream: wait for it
       only now, before the first load (programmatic dependent launch) */
    pdl_wait();
    if (p.dflags & KG_DEC_LATE_PDL)
        pdl_launch_dependents();
    if (p.trace && tid == 0)
        t_start = globaltimer();

    /* Q rows (each its own head and query), zero past the last row */
    for (int x = tid; x < R * CPR; x += NT) {
        const int r = x / CPR, c = x % CPR;
        int hg, i;
        dec_row(p, min(r0 + r, rows - 1), hg, i);
        const char *src =
            (const char *)p.q + (b * p.q_sb + (int64_t)(hk * p.group + hg) * p.q_sh + (int64_t)i * p.q_ss) * E + c * 16;
        kgd_cp_async16(aQ + (r * PD) * E + c * 16, src, r0 + r < rows);
    }
    kgd_cp_async_commit();
    for (int st = 0; st < ns - 1; st++) {
        if (st < ntiles)
            load(st, st);
        kgd_cp_async_commit();
    }

    float o[MT][D / 8][4], mx[MT][2], l[MT][2];
    const float *mrow[MT][2];
    int qi[MT][2]; /* query index of the lane's rows */
    dec_rows<D, MT, WR, KIND>(p, r0, hk, b, o, mx, l, qi, mrow);

    for (int j = 0; j < ntiles; j++) {
        if (tma) {
            if (j == 0)
                kgd_cp_async_wait<0>(); /* Q */
            mbar_wait(kgd_smem_addr(&full[j % ns]), (j / ns) & 1);
        } else {
            kgd_cp_async_wait<NST - 2>(); /* tile j (and Q) arrived */
        }
        __syncthreads(); /* ... for every thread; tile j - 1's stage is free */
        {
            const int jn = j + ns - 1;
            if (jn < ntiles)
                load(jn % ns, jn);
            kgd_cp_async_commit();
        }
        const uint32_t aK = aKV + (j % ns) * STAGE;
        dec_tile<T, D, MT, WR, BN, KIND>(p, aQ, aK, aK + TILE, k0 + j * BN, kend, imin, qi, mrow, o, mx, l);
    }
    kgd_cp_async_wait<0>();
    __syncthreads(); /* the pipeline's shared memory is free */
    if (p.trace && tid == 0)
        t_stream = globaltimer();

    const bool final = p.splits == 1;
    const int64_t px = (((int64_t)b * hkv + hk) * nrt + rt) * p.splits + split;
    dec_finish<T, D, MT, WR, R>(p, (float *)smem, o, mx, l, p.part + px * R * (D + 2), r0, hk, b, final);
    int merged = 0;
    if (!final && p.counters && (p.dflags & KG_DEC_TAIL)) {
        /* the last K blocks of the row tile to write their partials merge
           it, merger i taking passes i, i + K, ...: the last one to arrive
           zeroes the count (for the next call) and merges at once; the
           others wait until the count reads all in (p.splits, or 0 once
           zeroed: no block of this call counts after the last) */
        __shared__ int mi;
        const int K = p.dflags >> 8;
        const int64_t gi = ((int64_t)b * hkv + hk) * nrt + rt;
        __syncthreads(); /* every thread's partial stores issued */
        if (tid == 0) {
            __threadfence(); /* ... and visible before the count */
            const int t = atomicAdd(&p.counters[gi], 1);
            mi = t - (p.splits - K);
            if (t == p.splits - 1) {
                __threadfence(); /* the others' partials, seen through the count; then the zero */
                *(volatile int *)&p.counters[gi] = 0;
            } else if (mi >= 0) {
                for (int v = ld_acquire(&p.counters[gi]); v != 0 && v < p.splits; v = ld_acquire(&p.counters[gi]))
                    __nanosleep(32);
                __threadfence();
            }
        }
        __syncthreads();
        if (mi >= 0)
            dec_merge<T, D, R, NT>(p, p.part + gi * p.splits * R * (D + 2), r0, rows, hk, b, mi, K);
        merged = mi >= 0;
    } else if (!final && p.counters) { /* else the combine kernel merges (attn_dec_combine) */
        /* the last block of the row tile to finish merges every split */
        __shared__ int last;
        const int64_t gi = ((int64_t)b * hkv + hk) * nrt + rt;
        __threadfence();
        __syncthreads();
        if (tid == 0)
            last = atomicAdd(&p.counters[gi], 1) == p.splits - 1;
        __syncthreads();
        if (last) {
            __threadfence();
            dec_merge<T, D, R, NT>(p, p.part + gi * p.splits * R * (D + 2), r0, rows, hk, b);
            if (tid == 0)
                p.counters[gi] = 0; /* zero again for the next call */
        }
        merged = last;
    }
    return merged;
}

/* The decode kernel: grid (row tiles x splits, Hkv, B), one work unit (row
   tile, split) a block (dec_unit). */
template <typename T, int D, int MT, int WR, int BN, int NST, int KIND>
__device__ __forceinline__ void attn_dec(const kg_attn_params &p, const kg_attn_tmaps &tm)
{
    const int tid = threadIdx.x;
    /* the previous grid in the stream may still be writing q, k, v or
       reading out (launched early with PDL): dec_unit waits for it before
       its first global access (and, KG_DEC_LATE_PDL, only then lets the
       next grid launch) */
    if (!(p.dflags & KG_DEC_LATE_PDL))
        pdl_launch_dependents();
    uint64_t t_start = 0, t_stream = 0;
    const int nrt = (p.group * p.sq + p.rows_tile - 1) / p.rows_tile;
    const int rt = blockIdx.x / p.splits, split = blockIdx.x - rt * p.splits;
    const int merged =
        dec_unit<T, D, MT, WR, BN, NST, KIND>(p, tm, rt, split, blockIdx.y, blockIdx.z, nrt, gridDim.y, t_start,
                                              t_stream);
    if (p.trace && tid == 0) { /* a test hook: when this block started (after the
                                 wait for the previous grid), ended its keys and finished */
        unsigned long long *tr = p.trace + 4 * ((int64_t)(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x);
        tr[0] = t_start;
        tr[1] = t_stream;
        tr[2] = globaltimer();
        tr[3] = merged;
    }
}

/* The combine kernel, for a split launch whose merge would be long for the
   one block the fused merge gives each row tile (many splits of many rows,
   e.g. MQA): the decode kernel ran with p.counters NULL (partials only), and
   this grid (x, Hkv, B) of blocks (G, NT / G) has a group of G threads
   (threadIdx.x the lane) per (valid packed row, float4 column) of a KV
   head's group x Sq rows, each merged in one pass (merge_row). Same partial
   layout as dec_merge. */
template <typename T, int D, int NT> __device__ __forceinline__ void attn_dec_combine(const kg_attn_params &p)
{
    constexpr int C4 = D / 4;
    const bool early = p.dflags & KG_DEC_COMB_EARLY;
    if (early) /* the next grid launches now; it waits for this one */
        pdl_launch_dependents();
    else {
        pdl_wait(); /* the decode grid's partials */
        pdl_launch_dependents();
    }
    const int rows = p.group * p.sq, R = p.rows_tile, nrt = (rows + R - 1) / R, G = blockDim.x, gl = threadIdx.x;
    const int tid = threadIdx.y * G + gl; /* the group's lanes: consecutive lanes of one warp */
    const int64_t x = (int64_t)blockIdx.x * (NT / G) + threadIdx.y, n = (int64_t)rows * C4;
    if ((int64_t)blockIdx.x * (NT / G) + (tid & ~31) / G >= n) /* whole warps: the groups shuffle */
        return;
    const int64_t xi = x < n ? x : n - 1;
    const int r = (int)(xi / C4), c = (int)(xi - (int64_t)r * C4);
    const int hk = blockIdx.y, b = blockIdx.z, rt = r / R;
    const int64_t ps = (int64_t)R * (D + 2);
    const float *base = p.part + ((((int64_t)b * gridDim.y + hk) * nrt + rt) * p.splits) * ps;
    if (early)
        pdl_wait(); /* the decode grid's partials */
    float m, sum;
    float4 acc;
    merge_row<D, 8>(base, ps, R, r - rt * R, c, p.splits, G, gl, m, sum, acc);
    if (gl == 0 && x < n)
        dec_store<T>(p, r, c, hk, b, m, sum, acc);
}

} // namespace kg_attn

#endif
