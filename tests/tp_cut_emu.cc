/*
 * tp_cut_emu.cc - runs the CUDA source of <op>_tpermc (2-byte copies,
 * templates/elementwise_tpc.cuh) and of <op>_tperms on chained c axes
 * (4-byte copies, templates/elementwise_tph.cuh) on the CPU: each block's
 * 256 threads are host threads (pthreads), __syncthreads a barrier of the
 * 256, __any_sync a vote among a warp's 32, __shared__ a static buffer
 * (one block at a time), __byte_perm its PTX definition. The plans come
 * from the runtime's own planner (kg_ew_plan_tperm, kg_ew_tpermc_ok,
 * kg_ew_tperms_ok under KG_EW_TUNE_TPERMS_CHAIN 1); the two tperm helpers
 * the kernels call (kg_tp_offsets, kg_tp_where) are copied below from
 * templates/elementwise_tperm.cuh (whose other code is device-only).
 *
 * Every output element is compared with the input element its layout puts
 * there, the output poisoned first and guarded by poisoned elements on
 * both sides; built with AddressSanitizer and UBSan (alignment included)
 * so that a read or write past either buffer, or a 16-byte store off
 * alignment, stops it. A CPU check of the kernels' code where no GPU is
 * lent (session 31); the GPU tests (tpermc::*, tperms::copies_chained_c_axes)
 * are the real ones.
 *
 * Build and run (not in `ninja test`: about a minute on two cores):
 *   ninja build/tests/tp_cut_emu && build/tests/tp_cut_emu
 * It exits 0 when every launch matched (and enough of them ran).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the runtime (C); its CUDA headers bring the vector types (uint4, int4) */
extern "C" {
#include "internal.h"
#include "kgen.h"
#include "layout.h"
}

/* ---- the CUDA C++ the kernels use, on the host ---- */
#undef __device__
#undef __forceinline__
#undef __align__
#undef __shared__
#define __device__
#define __forceinline__ inline
#define __align__(n) alignas(n)
#define __shared__ static
struct kg_emu_idx {
    unsigned x, y, z;
};
static thread_local kg_emu_idx threadIdx, blockIdx;
static inline uint4 make_uint4(uint32_t x, uint32_t y, uint32_t z, uint32_t w)
{
    uint4 v;
    v.x = x;
    v.y = y;
    v.z = z;
    v.w = w;
    return v;
}
template <typename A, typename B> static inline A min(A a, B b) { return b < a ? (A)b : a; }
static pthread_barrier_t emu_block_bar, emu_warp_bar[8];
static int emu_vote[8][32];
static inline void __syncthreads(void) { pthread_barrier_wait(&emu_block_bar); }
static inline bool __any_sync(unsigned, bool pred)
{
    const int w = (int)threadIdx.x / 32, l = (int)threadIdx.x % 32;
    emu_vote[w][l] = pred;
    pthread_barrier_wait(&emu_warp_bar[w]);
    bool any = false;
    for (int i = 0; i < 32; i++)
        any = any || emu_vote[w][i];
    pthread_barrier_wait(&emu_warp_bar[w]);
    return any;
}
static inline uint32_t __byte_perm(uint32_t x, uint32_t y, uint32_t s)
{
    const uint64_t v = (uint64_t)y << 32 | x;
    uint32_t r = 0;
    for (int i = 0; i < 4; i++)
        r |= (uint32_t)(v >> (8 * ((s >> (4 * i)) & 7)) & 0xffu) << (8 * i);
    return r;
}

/* the template headers the two kernels include are skipped (the tperm
   loop, tperma's and the other 2-byte forms: device-only code); the two
   tperm helpers the kernels call are these, as elementwise_tperm.cuh
   writes them */
#define KG_ELEMENTWISE_TPERM_CUH
#define KG_ELEMENTWISE_TPA_CUH
#include "kg_device.cuh"
#include "kg_params.h"
#include "kg_tperm.h"

template <int K> static inline void kg_tp_offsets(const kg_tperm &L, int a, uint32_t x, int32_t (&off)[K])
{
    for (int d = 0; d < KG_LAYOUT_MAX_DIMS; d++) {
        if (d == L.nd[a])
            break;
        const uint32_t q = kgd_div_magic(x, L.magic[a][d], L.shift[a][d]);
        const int32_t m = (int32_t)(x - q * L.size[a][d]);
        x = q;
        for (int k = 0; k < K; k++)
            off[k] += m * L.stride[a][k][d];
    }
}

static inline uint32_t kg_tp_where(const kg_tperm &L, uint32_t tile, uint32_t &ct, uint32_t &jt)
{
    uint32_t b;
    if (L.jfirst) {
        const uint32_t q = kgd_div_magic(tile, L.magic_j, L.shift_j);
        b = kgd_div_magic(q, L.magic_c, L.shift_c);
        jt = tile - q * L.tiles_j;
        ct = q - b * L.tiles_c;
    } else {
        const uint32_t q = kgd_div_magic(tile, L.magic_c, L.shift_c);
        b = kgd_div_magic(q, L.magic_j, L.shift_j);
        ct = tile - q * L.tiles_c;
        jt = q - b * L.tiles_j;
    }
    return b;
}

#include "elementwise_tpc.cuh"
#include "elementwise_tph.cuh"

/* copies of X's bits (what the catalogue's copy functors are to the kernels) */
template <typename X> struct emu_copy {
    typedef X out_t, in0_t, in1_t, in2_t;
    static constexpr int arity = 1;
    static constexpr bool bits = true;
};

/* ---- one launch: grid blocks, 256 host threads a block ---- */
struct emu_launch {
    const kg_ew_ptrs *p;
    const kg_tperm *L;
    unsigned grid;
    int es;
};
static emu_launch emu_now;

static void *emu_thread(void *arg)
{
    const unsigned tx = (unsigned)(uintptr_t)arg;
    threadIdx = {tx, 0, 0};
    for (unsigned b = 0; b < emu_now.grid; b++) {
        blockIdx = {b, 0, 0};
        if (emu_now.es == 2)
            kg_ew_tpermc<emu_copy<uint16_t>, 8>(*emu_now.p, *emu_now.L);
        else
            kg_ew_tperms<emu_copy<uint32_t>, 4>(*emu_now.p, *emu_now.L);
        __syncthreads(); /* the block is done before the next reuses the shared buffer */
    }
    return NULL;
}

static void emu_run(const kg_ew_ptrs *p, const kg_tperm *L, int es)
{
    emu_now = {p, L, L->tiles, es};
    pthread_t th[KG_EW_THREADS];
    for (unsigned t = 0; t < KG_EW_THREADS; t++)
        if (pthread_create(&th[t], NULL, emu_thread, (void *)(uintptr_t)t)) {
            fprintf(stderr, "pthread_create failed\n");
            exit(2);
        }
    for (unsigned t = 0; t < KG_EW_THREADS; t++)
        pthread_join(th[t], NULL);
}

/* ---- the cases ---- */
static int failures, runs, ctab_runs, flat_runs, first_only_runs;

/* a copy of the dense buffer of physical shape P read in the order p into
   a dense output, the input ia and the output io elements off; es 2 runs
   tpermc, es 4 tperms (chain on); the layouts neither serves are skipped */
static void emu_case(int nd, const int64_t *P, const int *p, int es, int ia, int io, int flat)
{
    int64_t ps[KG_MAX_DIMS], shape[KG_MAX_DIMS], n = 1;
    for (int d = nd - 1; d >= 0; d--) {
        ps[d] = n;
        n *= P[d];
    }
    const int64_t guard = 40, in_n = n + ia, on = n + io + guard;
    char *ibuf = (char *)malloc((size_t)(in_n * es)); /* exactly the input's storage: ASan sees a read past it */
    const size_t obytes = ((size_t)((on + guard) * es) + 127) / 64 * 64;
    char *obase = (char *)aligned_alloc(64, obytes);
    char *obuf = obase + guard * es; /* 32-byte aligned: io sets the phase */
    kg_tensor ti, to;
    memset(&ti, 0, sizeof ti);
    memset(&to, 0, sizeof to);
    const kg_dtype dt = es == 2 ? KG_BF16 : KG_F32;
    for (int d = 0; d < nd; d++)
        shape[d] = P[p[d]];
    ti = kg_tensor_contiguous(ibuf + ia * es, dt, nd, shape);
    for (int d = 0; d < nd; d++)
        ti.strides[d] = ps[p[d]];
    to = kg_tensor_contiguous(obuf + io * es, dt, nd, shape);
    const kg_tensor *ins[1] = {&ti};
    kg_layout L;
    kg_layout_build(&L, &to, ins, 1);
    const size_t esz[KG_EW_MAX_OPERANDS] = {(size_t)es, (size_t)es, 0, 0};
    kg_tperm tp;
    kg_test_ew_tune(KG_EW_TUNE_TPERM_FLAT, flat);
    const int planned = L.ndim >= 2 && kg_ew_plan_tperm(&L, esz, &tp) &&
                        (es == 2 ? kg_ew_tpermc_ok(&tp) : kg_ew_tperms_ok(&tp));
    kg_test_ew_tune(KG_EW_TUNE_TPERM_FLAT, 1);
    if (!planned) {
        free(ibuf);
        free(obase);
        return;
    }
    runs++;
    ctab_runs += tp.nd[KG_TP_C] > 1;
    flat_runs += tp.flat != 0;
    first_only_runs += tp.tiles_c == 1;
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t s = 0; s < in_n; s++) /* a pattern, other for each pass */
            if (es == 2)
                ((uint16_t *)ibuf)[s] = (uint16_t)((uint64_t)(s + 7 * pass) * 40503u);
            else
                ((uint32_t *)ibuf)[s] = (uint32_t)((uint64_t)(s + 7 * pass) * 2654435761u);
        memset(obase, pass ? 0x5a : 0xa5, obytes);
        kg_ew_ptrs pp;
        memset(&pp, 0, sizeof pp);
        pp.out = to.data;
        pp.in[0] = ti.data;
        emu_run(&pp, &tp, es);
        /* every element against its input element; the guards and gaps untouched */
        int64_t idx[KG_MAX_DIMS] = {0};
        unsigned char *seen = (unsigned char *)calloc((size_t)(on + guard), 1);
        for (int64_t e = 0; e < n; e++) {
            int64_t ia_ = ia, oa = io;
            for (int d = 0; d < nd; d++) {
                ia_ += idx[d] * ti.strides[d];
                oa += idx[d] * to.strides[d];
            }
            seen[oa + guard] = 1;
            const uint32_t got = es == 2 ? ((uint16_t *)obuf)[oa] : ((uint32_t *)obuf)[oa];
            const uint32_t want = es == 2 ? ((uint16_t *)ibuf)[ia_] : ((uint32_t *)ibuf)[ia_];
            if (got != want && failures++ < 10)
                fprintf(stderr, "es %d perm %d%d%d%d%d ia %d io %d flat %d pass %d: element %lld = %#x, want %#x\n", es,
                        p[0], p[1], nd > 2 ? p[2] : 9, nd > 3 ? p[3] : 9, nd > 4 ? p[4] : 9, ia, io, flat, pass,
                        (long long)e, got, want);
            for (int d = nd - 1; d >= 0; d--) {
                if (++idx[d] < shape[d])
                    break;
                idx[d] = 0;
            }
        }
        const uint8_t poison = pass ? 0x5a : 0xa5;
        for (int64_t x = -guard; x < on; x++)
            if (!seen[x + guard])
                for (int b = 0; b < es; b++)
                    if ((uint8_t)obuf[x * es + b] != poison && failures++ < 10)
                        fprintf(stderr, "es %d ia %d io %d: element %lld outside the output written\n", es, ia, io,
                                (long long)x);
        free(seen);
    }
    free(ibuf);
    free(obase);
}

static int next_perm(int *p, int n)
{
    int i = n - 2;
    while (i >= 0 && p[i] >= p[i + 1])
        i--;
    if (i < 0)
        return 0;
    int j = n - 1;
    while (p[j] <= p[i])
        j--;
    int t = p[i];
    p[i] = p[j];
    p[j] = t;
    for (int a = i + 1, b = n - 1; a < b; a++, b--) {
        t = p[a];
        p[a] = p[b];
        p[b] = t;
    }
    return 1;
}

int main(void)
{
    pthread_barrier_init(&emu_block_bar, NULL, KG_EW_THREADS);
    for (int w = 0; w < 8; w++)
        pthread_barrier_init(&emu_warp_bar[w], NULL, 32);
    kg_test_ew_tune(KG_EW_TUNE_TPERMS_CHAIN, 1);
    /* small versions of the perm bench's slow rows, odd and short dims,
       whole tiles (c >= 144, j >= 64) from tables and by multiplication */
    static const struct {
        int nd;
        int64_t P[5];
    } cs[] = {{4, {13, 8, 19, 11}}, {3, {43, 49, 11}}, {4, {15, 19, 7, 5}}, {2, {257, 131}},
              {3, {67, 5, 130}},    {3, {37, 66, 45}}, {5, {3, 5, 7, 9, 11}}, {3, {150, 3, 131}}};
    for (int es = 2; es <= 4; es += 2)
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            int p[5] = {0, 1, 2, 3, 4};
            int k = 0;
            do {
                const int io = (k * 5 + (int)i) % (32 / es), ia = (k * 3 + 1) % 3;
                emu_case(cs[i].nd, cs[i].P, p, es, ia, io, k % 3 != 0);
                k++;
            } while (next_perm(p, cs[i].nd));
        }
    /* every output phase of a 2-d transpose and of a c axis of two dims */
    for (int es = 2; es <= 4; es += 2)
        for (int io = 0; io < 32 / es; io++) {
            emu_case(2, (const int64_t[]){257, 131}, (const int[]){1, 0}, es, io % 3, io, 1);
            emu_case(4, (const int64_t[]){13, 8, 19, 11}, (const int[]){3, 1, 0, 2}, es, (io + 1) % 3, io, 0);
        }
    /* rank 6: a reversal and a mixed permutation (c of up to three dims, b dims) */
    for (int es = 2; es <= 4; es += 2)
        for (int k = 0; k < 4; k++) {
            static const int64_t P6[6] = {3, 5, 7, 2, 9, 11};
            static const int rv[6] = {5, 4, 3, 2, 1, 0}, mx[6] = {3, 5, 1, 0, 4, 2};
            emu_case(6, P6, k % 2 ? mx : rv, es, k % 3, (k * 7 + 3) % (32 / es), k < 2);
        }
    printf("tp_cut_emu: %d launches (%d with c of several dims, %d flat, %d of one c tile), %d failures\n", runs,
           ctab_runs, flat_runs, first_only_runs, failures);
    return failures != 0 || runs < 50 || ctab_runs < 10;
}
