/*
 * elementwise_tsm.cuh - <op>_tslabm: copies of 2- and 4-byte elements by
 * tslab's whole planes, several a block (kg_tslabm.h). Included by the 2-
 * and 4-byte tperm modules after their own kernels' header.
 *
 * Why: where the output's dim 0 is short (33) and its dim 1 is the input's
 * fast dim but short too (91), each plane's output is one run of a few KB
 * (f32 [33,64,95,91] p2.1.3.0: 33 x 91 = 3003 floats, 12012 bytes) and its
 * input 33 rows of 364 bytes far apart. tperm folds the output's dims 0
 * and 2 (33 and 64, which do not chain) into its c axis, so its tile rows
 * are runs of 33 floats and the partial sectors at their ends are written
 * by two tiles (69.2% of copy on the H100, s30f); rect refuses a j side of
 * one tile. Here a block loads whole planes' rows into shared memory and
 * writes their output runs with aligned 16-byte stores (partial sectors
 * only at the group's two ends); several planes a block where the planes
 * are small (bf16: two of 6.3 KB in 16 KB). A candidate, not measured.
 */
#ifndef KG_ELEMENTWISE_TSM_CUH
#define KG_ELEMENTWISE_TSM_CUH

#include "elementwise_tperm.cuh"
#include "kg_tslabm.h"

/* tslabm (kg_tperm.h kg_tslabm): tslab's whole planes several a block
   (copies of 2- and 4-byte elements whose plane's input rows are short and
   apart: one plane a block would leave its lanes idle between two
   barriers). A block takes groups g = blockIdx.x, + gridDim.x, ...: the
   cnt planes of group g, whose output is one run of cnt * nc * nj
   elements; their cnt * nc input rows are loaded realigned into the buffer
   (plane k's row c at byte (k * nc + c) * pitch) by tslab's chunks, chunk
   t at row c = t % nc of plane k = (t / nc) % ppb, chunk kc = t / (nc ppb)
   of the row (lanes at consecutive rows; a k past cnt is no chunk); after a
   barrier the output's run is filled from it plane by plane (kg_tq_fill
   with PLANES: the plane's rows nc * pitch apart). The buffer is the
   launch's dynamic shared memory (ppb * nc * pitch bytes). A copy moves
   bits. */
template <typename F, int N> __device__ __forceinline__ void kg_ew_tslabm(const kg_ew_ptrs &p, const kg_tslabm &Q)
{
    typedef typename F::out_t X;
    static_assert(F::arity == 1 && sizeof(typename F::in0_t) == sizeof(X), "tslabm: copies");
    constexpr int ES = sizeof(X), M = 16 / ES, U = 4;
    extern __shared__ __align__(16) unsigned char kg_tq_smem[];
    const uint32_t nc = Q.z.nc, nj = Q.z.nj, cpr = (nj * ES + 15u) / 16u, chunks = Q.ppb * nc * cpr;
    for (uint32_t g = blockIdx.x; g < Q.groups; g += gridDim.x) {
        const uint32_t r = kgd_div_magic(g, Q.magic_gpr, Q.shift_gpr), first = (g - r * Q.gpr) * Q.ppb;
        const uint32_t cnt = Q.s0 - first < Q.ppb ? Q.s0 - first : Q.ppb;
        int32_t off[KG_EW_MAX_OPERANDS];
        kg_offsets32(Q.z.B, r * Q.s0 + first, off);
        const char *ib = (const char *)p.in[0] + (int64_t)off[1] * ES;
        char *ob = (char *)p.out + (int64_t)off[0] * ES;
        for (uint32_t t0 = threadIdx.x; t0 < chunks; t0 += U * KG_EW_THREADS) {
            uint4 v[U];
            uint32_t at[U];
            bool live[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const uint32_t t = t0 + u * KG_EW_THREADS, q = kgd_div_magic(t, Q.z.magic_nc, Q.z.shift_nc),
                               c = t - q * nc, kc = kgd_div_magic(q, Q.magic_ppb, Q.shift_ppb), k = q - kc * Q.ppb;
                at[u] = (k * nc + c) * Q.z.pitch + 16u * kc;
                live[u] = t < chunks && k < cnt;
                if (!live[u])
                    continue;
                /* plane k's row c: its element j = 0 */
                const char *row = ib + ((int64_t)k * Q.sb + (int64_t)c * Q.z.sci) * ES;
                const char *src = row + (int64_t)kc * M * ES, *end = row + (int64_t)nj * ES;
                const uint32_t sh = (uint32_t)((uintptr_t)src & 15u);
                const char *a = src - sh;
                if (src + 16 <= end && a >= row && a + (sh ? 32 : 16) <= end) {
                    v[u] = *(const uint4 *)a;
                    if (sh)
                        v[u] = kg_rv_shift(v[u], *(const uint4 *)(a + 16), sh);
                } else {
                    v[u] = make_uint4(0, 0, 0, 0);
#pragma unroll
                    for (int i = 0; i < M; i++)
                        if (src + i * ES < end)
                            kg_rv_put<ES>(v[u], i, kg_rv_load<ES>(src + i * ES));
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                if (!live[u])
                    continue;
                uint32_t *d = (uint32_t *)(kg_tq_smem + at[u]);
                d[0] = v[u].x;
                d[1] = v[u].y;
                d[2] = v[u].z;
                d[3] = v[u].w;
            }
        }
        __syncthreads();
        kg_tq_fill<ES, true>(ob, cnt * nc * nj, kg_tq_smem, Q.z.pitch, nc, Q.z.magic_nc, Q.z.shift_nc, Q.z.rot != 0,
                             nj, Q.magic_nj, Q.shift_nj);
        __syncthreads(); /* the next group reuses the buffer */
    }
}

#endif
