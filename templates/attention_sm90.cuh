/*
 * attention_sm90.cuh - flash attention forward on Hopper (sm_90a): the same
 * contract and online softmax as attention.cuh, with the two matrix products
 * on warpgroup MMA (wgmma.mma_async) instead of mma.sync.
 *
 * A block is NWG warpgroups (128 threads each); warpgroup w owns query rows
 * [m0 + 64 w, m0 + 64 w + 64) and holds, per thread, its S tile (m64 x BN)
 * and its output accumulator (m64 x D) in registers. Q, and two stages each
 * of K and V, live in shared memory in the 128-byte-swizzled layout wgmma
 * reads (per 64-column panel: row r's 16-byte chunk c at chunk c ^ (r % 8)),
 * filled by cp.async from every thread; the loads for the next tiles are in
 * flight while the current ones are multiplied.
 *
 * Per key tile j, inside each warpgroup (FlashAttention-3's intra-warpgroup
 * overlap): S_j = Q K_j^T and O += P_{j-1} V_{j-1} are issued back to back as
 * two asynchronous wgmma groups; the softmax of S_j runs while the second is
 * still on the tensor cores; only then is O rescaled and P_j packed into the
 * A-operand registers of the next PV product. Q and K are K-major operands
 * from shared memory, V an N-major one (transposed on the fly), P comes from
 * registers, so S never goes through shared memory.
 */
#ifndef KG_ATTENTION_SM90_CUH
#define KG_ATTENTION_SM90_CUH

#include "attention.cuh"
#include "attention_tma.cuh"
#include "kg_wgmma.cuh"

/* 0 builds the forward's softmax without the folded exponent argument (an
   FMUL by the scale, then an FADD, as before 2026-12-02): a measurement
   switch only */
#ifndef KG_ATTN_FOLD
#define KG_ATTN_FOLD 1
#endif
/* The persistent consumers' pipeline across work tiles (below): 1 in every
   persistent variant, 0 in none (each tile's first S, its softmax and its
   epilogue then run with no product of the warpgroup in flight, as before
   2026-12-02), -1 (the default) where it measured faster: the ping-pong
   variant (and the persistent 192-key one, removed in session 17). H200, session 7 r3, us, same run, runtime's
   picks, across / one tile after the other (main's kernels): ping-pong D 64
   S 1k causal 254 / 259, S 4k causal 738 / 763, D 128 S 1k causal 344 /
   343, GQA D 128 S 1540 causal 1178 / 1187, D 64 S 1113 causal 1215 / 1227;
   plain D 64 S 1k 401 / 392, D 128 S 1k 533 / 521, D 96 S 4k 883 / 868
   (slower: without the turns both warpgroups reach the tile's end at
   once); 192 keys, D 64 S 4k 1292 against the grid-mode long variant's
   1329. The second Q stage alone changed nothing (level within 1%).
   Session 17 (s17r3) measured it again on the three-warpgroup D 32 / 64
   kernel with its shifted causal blocks: 2-8% slower (gen/attention.lua). */
#ifndef KG_ATTN_XT
#define KG_ATTN_XT -1
#endif

namespace kg_attn
{

__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wg_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* shared memory written through the generic proxy (cp.async) is then read by
   wgmma through the async proxy */
__device__ __forceinline__ void fence_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

/* TS: a bulk tensor store (shared to global through the tensor map tm, a
   kernel parameter) of the box at (c0, c1, c2, c3) from src; elements
   outside the tensor are not written. bulk_commit closes this thread's
   stores so far into one bulk group; bulk_wait_read: this thread's groups
   have read their shared memory (it may be written again); bulk_wait: they
   are done (their global writes complete). */
__device__ __forceinline__ void tma_store4(const kg_attn_tmap &tm, uint32_t src, int c0, int c1, int c2, int c3)
{
    asm volatile(
        "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"((uint64_t)&tm),
        "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
        : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }

/* wgmma shared memory descriptor, 128-byte swizzle: start address, leading
   byte offset (between 64-element panels of an N-major operand; unused for
   K-major), stride byte offset (between groups of 8 rows). */
__device__ __forceinline__ uint64_t sw128_desc(uint32_t addr, uint32_t lbo, uint32_t sbo)
{
    return (uint64_t)((addr & 0x3FFFFu) >> 4) | (uint64_t)(lbo >> 4) << 16 | (uint64_t)(sbo >> 4) << 32 |
           (uint64_t)1 << 62;
}

/* Byte offset of 16-byte chunk cc of row r in a ROWS-row tile of panels of
   SWB / 2 16-bit elements a row (SWB bytes), each panel ROWS x SWB bytes,
   with the swizzle of that width: SWB 128, sw128_at (chunk c of row r at
   chunk c ^ (r % 8)); SWB 64 (32-element panels: the backward's head dims
   that are a multiple of 32 without padding), chunk c (of 4) of row r at
   chunk c ^ ((r / 2) % 4), the hardware's 64-byte swizzle of address bits
   4-5 by bits 7-8; 512-byte atoms of 8 rows. */
template <int ROWS, int SWB> __device__ __forceinline__ uint32_t swz_at(int r, int cc)
{
    static_assert(SWB == 128 || SWB == 64, "128- or 64-byte swizzle");
    if constexpr (SWB == 128)
        return sw128_at<ROWS>(r, cc);
    else
        return (uint32_t)((cc >> 2) * ROWS * 64 + r * 64 + (((cc & 3) ^ ((r >> 1) & 3)) << 4));
}

/* Rows [row0, row0 + ROWS) of a [n, D] 16-bit matrix (row stride ld
   elements) into the tile at dst in the SWB-byte swizzle (swz_at); rows
   past n are zero-filled. Unrolled by 4: the producer that runs it has few
   registers. (The backward kernels' form; the forward's producer uses
   load_sw128_rows.) */
template <int ROWS, int D, int NT, int SWB>
__device__ __forceinline__ void load_swz(uint32_t dst, const char *base, int64_t ld, int row0, int n, int tid)
{
    constexpr int CPR = D / 8;
    static_assert(ROWS * CPR % NT == 0, "tile loads must divide evenly among the threads");
#pragma unroll 4
    for (int it = 0; it < ROWS * CPR / NT; it++) {
        const int i = tid + it * NT, r = i / CPR, cc = i % CPR;
        const bool ok = row0 + r < n;
        const char *src = ok ? base + (int64_t)(row0 + r) * ld * 2 + cc * 16 : base;
        kgd_cp_async16(dst + swz_at<ROWS, SWB>(r, cc), src, ok);
    }
}

/* load_swz's 128-byte instance: the tile in the 128-byte swizzle (sw128_at) */
template <int ROWS, int D, int NT>
__device__ __forceinline__ void load_sw128(uint32_t dst, const char *base, int64_t ld, int row0, int n, int tid)
{
    load_swz<ROWS, D, NT, 128>(dst, base, ld, row0, n, tid);
}

/* load_sw128's copy where the NT threads cover whole rows (NT a multiple of
   D / 8): each thread copies the same 16-byte column of every (NT / CPR)-th
   row, so its source pointer steps by a fixed stride and its destination by
   a fixed offset (the swizzle's row bits stay fixed, or alternate where a
   pass covers fewer than 8 rows), and a copy costs a few instructions
   rather than the division, 64-bit products and swizzle of the general form
   (about 45 instructions per 16-byte copy in the SASS of D 128, issued by
   producer warps that share each scheduler with the consumers). Tiles that
   end before n take no bounds checks. */
template <int ROWS, int D, int NT>
__device__ __forceinline__ void load_sw128_rows(uint32_t dst, const char *base, int64_t ld, int row0, int n, int tid)
{
    constexpr int CPR = D / 8;
    /* rows per pass: every thread where NT / CPR is a power of two or a
       multiple of 8; else (D 96: 10.7 rows) 8 rows of the first 8 CPR
       threads, the others idle */
    constexpr int RS = NT % CPR == 0 && ((NT / CPR) % 8 == 0 || 8 % (NT / CPR) == 0) ? NT / CPR : NT / CPR >= 8 ? 8 : 0;
    if constexpr (RS > 0) {
        constexpr int IT = ROWS / RS; /* passes */
        static_assert(ROWS % RS == 0, "whole passes");
        if (RS * CPR < NT && tid >= RS * CPR)
            return;
        const int r0 = tid / CPR, cc = tid % CPR;
        /* RS < 8: r0 < RS, so row r0 + it RS has row bits r0 ^ (it RS % 8) */
        const uint32_t d0 = dst + (uint32_t)((cc >> 3) * ROWS * 128 + r0 * 128);
        const uint32_t x0 = (uint32_t)((cc & 7) ^ (r0 & 7));
        const char *src = base + (int64_t)(row0 + r0) * ld * 2 + cc * 16;
        const int64_t step = (int64_t)RS * ld * 2;
        const int lim = n - row0 - r0; /* pass it copies a real row while it RS < lim */
        if (lim >= ROWS) {
#pragma unroll 4
            for (int it = 0; it < IT; it++) {
                const uint32_t x = RS % 8 == 0 ? x0 : x0 ^ (uint32_t)((it * RS) & 7);
                kgd_cp_async16(d0 + it * RS * 128 + (x << 4), src, true);
                src += step;
            }
        } else {
#pragma unroll 4
            for (int it = 0; it < IT; it++) {
                const uint32_t x = RS % 8 == 0 ? x0 : x0 ^ (uint32_t)((it * RS) & 7);
                const bool ok = it * RS < lim;
                kgd_cp_async16(d0 + it * RS * 128 + (x << 4), ok ? src : base, ok);
                src += step;
            }
        }
    } else {
        load_sw128<ROWS, D, NT>(dst, base, ld, row0, n, tid);
    }
}

/*
 * Warp-specialized: NWG consumer warpgroups and one producer warpgroup (the
 * last). The producer streams K and V tiles through two rings of two stages
 * each (cp.async, every producer thread a share of each tile); a stage's
 * "full" barrier completes once every producer thread's copies into it have
 * landed (cp.async.mbarrier.arrive), its "empty" barrier once every consumer
 * warp is done reading it. Consumers fence the landed tile for the async
 * proxy wgmma reads through before their first product on it. Consumers never wait for each other, so
 * one warpgroup's softmax runs while another's products keep the tensor
 * cores busy. The producer gives up registers (setmaxnreg) to the consumers.
 *
 * PERSIST: gridDim.x blocks (one per multiprocessor) take the work tiles
 * of p.units, blockIdx.x first, then every gridDim.x-th or (p.queue) the
 * next one not yet taken (the producer publishes each in shared memory for
 * the consumers); the producer also loads each
 * tile's Q, into two stages in turn (fullQ / emptyQ barriers of each; a
 * stage is free once every S of its tile is done), so the next tile's Q lands
 * while this one's runs; the K/V rings run on from tile to tile (stage and
 * phase from the tiles streamed so far), and the output is staged in its own
 * tile. The consumers' pipeline runs across tiles too (see below).
 *
 * tm.on: the producer's first thread alone loads each tile with bulk tensor
 * copies (TMA, one per 64-element panel; a full barrier then completes on
 * its one arrival and the copies' bytes), the other producer threads leave;
 * the same bytes land in the same places as with cp.async, so the results
 * are bitwise the same.
 *
 * NF (persistent only): with TMA on, the consumers skip the proxy fence
 * before their products (landed(), below).
 * KS: the stages of each of the K and V rings (the D 64 persistent default
 * takes 3 with NF; gen/attention.lua).
 * WS (persistent only): each warp stores its own 16 staged output rows
 * (store_out), with warp syncs instead of the warpgroup's two named
 * barriers.
 * PC (persistent only): the producer publishes each work tile's
 * coordinates with it (sched), so the consumers do no integer divisions.
 * SH (persistent only, one tile per work tile): the query blocks
 * shifted up by the padding of the last one (mb_row), so that the block
 * with fewer real rows is the first, which sees the fewest keys under the
 * causal rule (its rows before the sequence start are zero-filled and never
 * stored).
 * EP (persistent, not ping-pong; the D 32 / 64 default when causal since
 * session 21, gen/attention.lua has the figures): a work tile's last
 * O += P V and the next tile's first S = Q K^T are issued back to back,
 * and the tile's epilogue (normalize, stage, store) runs while that S is
 * on the tensor cores; the same arithmetic in the same order as one tile
 * after the other (bitwise the same results).
 * F2 (one work tile at a time, no turns: grid mode, or persistent without
 * EP; since session 22 the D 128 persistent default not causal and causal
 * beyond 4096 keys, and the D 256 grid default not causal; figures in
 * gen/attention.lua): a tile of two key tiles or more issues its first two
 * S together, runs the first softmax under the second S, then key step 1
 * issues P_0 V_0 alone (the second S done or in flight): the first softmax
 * no longer waits with no product of its warpgroup on the tensor cores.
 * Same order, same bits.
 * SK (persistent, not causal, three consumer warpgroups; the D 32 / 64
 * default when not causal since session 21):
 * a work tile whose real query rows all lie in the first warpgroup's 64
 * (the last block of a length of 64 past a multiple of 192, as S 1k, 4k,
 * 16k) has its key tiles dealt round the three warpgroups (tile j to
 * warpgroup j % 3), each over those 64 rows, the three partial softmax
 * states merged through shared memory in warpgroup order by the first
 * one: that tile takes a third of the key steps instead of every
 * warpgroup multiplying all keys for 128 padding rows. Other bits than the
 * default on those rows (another summation order), still reproducible.
 * TS (persistent, two consumer warpgroups, no warp stores, one work tile
 * at a time; session 31; since session 32 the D 128 causal default up to
 * 2048 keys, the plain persistent kernel with it, after round s31r1):
 * each warpgroup's staged 64 output rows go to global memory by bulk
 * tensor stores (one per 64-column panel, issued by the warpgroup's first
 * thread once the rows are fenced for the async proxy and the warpgroup's
 * barrier has passed) instead of every thread's 16-byte shared loads and
 * global stores between two barriers, and the warpgroup goes on to its next
 * tile without waiting for them: its staging rows are waited for (the
 * stores have read them) only at its next stage_out, and every store is
 * complete before the warpgroup exits. A box with no row inside the output
 * (the last block's second warpgroup where Sq ends in its first 64 rows)
 * is not issued; rows past Sq in a box are not written (the tensor's
 * bounds). tmo: the output's tensor map (boxes of 64 columns x 64 rows),
 * or null where the runtime could not encode it or the loads are not bulk
 * copies: then the ordinary stores. The same bytes in the same places:
 * the same bits. (Session 24's form of this on the D 64 three-warpgroup
 * kernel, with the shifted causal blocks, stopped with an illegal
 * instruction in s25r1. Session 31's TW, the same stores per warp with no
 * warpgroup barrier, on the D 64 and D 128 defaults, measured slower on
 * every row in s31r1 and was removed; TS on f2, not causal, lost there
 * too: gen/attention.lua.)
 */
template <typename T, int D, int NWG, int BN, int KIND, bool PP = false, bool PERSIST = false, bool NF = false,
          int KS = 2, bool WS = false, bool PC = false, bool SH = false, bool EP = false, bool SK = false,
          bool F2 = false, bool TS = false>
__device__ __forceinline__ void attn_wg(const kg_attn_params &p, const kg_attn_tmaps &tm,
                                        const kg_attn_tmap *tmo = nullptr)
{
    /* DP: D padded to whole 64-element panels (D 32 and 96). The padding
       columns of Q, K and V in shared memory are never written: S = Q K^T
       takes D / 16 steps (the real columns only); O = P V runs N = DP wide,
       so the accumulator's padding columns hold whatever the padding of V
       held, and are never stored. */
    constexpr int DP = (D + 63) / 64 * 64;
    constexpr int BM = NWG * 64, E = 2;
    constexpr int QB = BM * DP * E, KB = BN * DP * E, NS = BN / 8, ND = D / 8;
    /* (three consumer warpgroups: 32 producer registers leave them 160,
       which D 64 needs without spills; with 40 they get 152 and spill) */
    constexpr int PRODUCER_REGS = NWG == 3 ? 32 : 40, CONSUMER_REGS = (65536 / 128 - PRODUCER_REGS) / NWG / 8 * 8;
    static_assert(D % 32 == 0 && BN % 16 == 0, "head dims of 32-element halves of panels; 16-key steps");
    static_assert(!NF || PERSIST, "the fence-free consumers are persistent (grid mode loads Q by cp.async)");
    static_assert(!(WS || PC || SH) || PERSIST, "warp stores and published coordinates: persistent only (grid mode "
                                          "stages the output in Q's tile)");
    static_assert(!EP || (PERSIST && !PP), "the epilogue under the next tile's first product: persistent, no turns");
    static_assert(!SK || (PERSIST && !PP && !EP && NWG == 3 && KIND == KG_ATTN_NONE),
                  "the dealt key tiles: persistent, no turns, three consumer warpgroups, no mask");
    static_assert(!F2 || (!PP && !EP && !SK), "a tile's second S under its first softmax: consume(), no turns");
    static_assert(!TS || (PERSIST && NWG == 2 && !WS && !PP && !EP && !SK && !SH),
                  "the bulk tensor stores: persistent (the staging tile its own), two warpgroups' rows, one tile "
                  "after the other, no shifted blocks");
    extern __shared__ __align__(16) unsigned char smem[];
    const uint32_t raw = kgd_smem_addr(smem), aQ = (raw + 1023) & ~1023u; /* swizzle atoms are 1024-byte aligned */
    const uint32_t aK = aQ + QB, aV = aK + KS * KB;                       /* KS stages each */
    /* PERSIST: the output's own staging tile, and a second Q stage (aQ1:
       the producer loads the next work tile's Q while this one's is read) */
    const uint32_t aO = aV + KS * KB, aQ1 = aO + QB, bars = aO + (PERSIST ? 2 * QB : 0);
    /* fullK[KS], fullV[KS], emptyK[KS], emptyV[KS]; PERSIST: fullQ, emptyQ
       of Q stage 0, then of Q stage 1; fullT[2] and the work tile of each Q
       stage (an int each; PC: SW = 4 ints, the tile and its mb, h, b) */
    unsigned char *sO = smem + ((PERSIST ? aO : aQ) - raw);
    auto full_k = [&](int s) { return bars + 8 * s; };
    auto full_v = [&](int s) { return bars + 8 * (KS + s); };
    auto empty_k = [&](int s) { return bars + 8 * (2 * KS + s); };
    auto empty_v = [&](int s) { return bars + 8 * (3 * KS + s); };
    auto full_qs = [&](int s) { return bars + 32 * KS + 16 * s; };
    auto empty_qs = [&](int s) { return bars + 32 * KS + 8 + 16 * s; };
    auto full_t = [&](int s) { return bars + 32 * KS + 32 + 8 * s; };
    /* the K / V tile streamed x-th: its ring stage, and the parity of the
       stage's barrier phase it completes */
    auto stg = [](int x) { return (int)((unsigned)x % KS); };
    auto par = [](int x) { return (int)((unsigned)x / KS & 1u); };
    /* PERSIST: the work tile of Q stage s (sched[SW s]), written by the
       producer before it arrives on full_t(s) (the number p.units: no tile
       left) */
    constexpr int SW = PC ? 4 : 1;
    volatile int *const sched = (volatile int *)(smem + (bars + 32 * KS + 48 - raw));

    const int tid = threadIdx.x, wgi = tid >> 7, wq = (tid >> 5) & 3, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const bool causal = KIND == KG_ATTN_CAUSAL || (KIND == KG_ATTN_MASK && p.causal);
    const int nmb = (p.sq + BM - 1) / BM;
    /* the first query row of block mb (SH: shifted up by the padding) */
    auto mb_row = [&](int mb) { return mb * BM - (SH ? nmb * BM - p.sq : 0); };
    /* The work tile: query block mb of head h of batch b. Grid mode: one per
       block. PERSIST: gridDim.x blocks take tiles (above) of p.units =
       B x Hq x nmb tiles (p.hkv = Hq; attention.c), batch
       major, each batch's tiles in the order grid mode launches them;
       causal with KG_ATTN_XORDER_PAIRS(p) > 0 (attention_params.h; the
       runtime's kg_attn_persist_sched) in sections across batches, below. */
    /* Both causal orders below take their sections of n heads ((batch, head)
       pairs) at most G at a time, G the heads whose K and V (about 16 MB)
       stay in L2: G = max(1, min(n, 16 MB / (S_k x D x 4 bytes))) */
    auto l2_group = [&](int n) {
        const int64_t kv = (int64_t)p.sk * D * 4;
        return (int)max((int64_t)1, min((int64_t)n, ((int64_t)16 << 20) / (kv > 0 ? kv : 1)));
    };
    auto coords = [&](int tile, int &mb, int &h, int &b) {
        int x = tile, H;
        if (PERSIST && causal && KG_ATTN_XORDER_PAIRS(p) > 0) {
            /* (since session 30 the plain persistent kernel's causal
               launches; 0 in the others': kg_attn_persist_sched) the
               same heaviest-first sections, of the
               KG_ATTN_XORDER_PAIRS(p) = B x H (batch, head) pairs of the
               launch, so that a section may span
               batches, the heaviest tiles of every batch first: ceil(P / G)
               sections of G pairs at most (the same L2 budget) and of equal
               sizes within one pair (r of q + 1 pairs, then q: no short
               section left for the end); pair y is head y % H of batch
               y / H */
            const int P = KG_ATTN_XORDER_PAIRS(p);
            const int G = l2_group(P);
            const int ns = (P + G - 1) / G, q = P / ns, r = P - q * ns, big = r * (q + 1) * nmb;
            const int gs = tile < big ? q + 1 : q, t2 = tile < big ? tile : tile - big;
            const int sec = t2 / (gs * nmb), rem = t2 - sec * gs * nmb;
            const int y = (tile < big ? 0 : r * (q + 1)) + sec * gs + rem % gs;
            mb = nmb - 1 - rem / gs;
            b = y / p.hkv;
            h = y - b * p.hkv;
            return;
        }
        if constexpr (PERSIST) {
            H = p.hkv;
            b = tile / (nmb * H);
            x = tile - b * nmb * H;
        } else {
            H = KIND != KG_ATTN_NONE && gridDim.y == 1 ? gridDim.x / nmb : gridDim.y;
            b = blockIdx.z;
        }
        if (PERSIST ? causal : KIND != KG_ATTN_NONE && gridDim.y == 1) {
            /* causal, grid (query blocks x Hq, 1, B) (attention.c): the heads of
               a batch in sections of G, each section's blocks heaviest (longest
               key range) first across its heads, so that a launch ends on the
               lightest blocks; G heads' K and V (about 16 MB) stay in L2 */
            const int G = l2_group(H);
            const int sec = x / (G * nmb), rem = x - sec * G * nmb;
            const int gs = min(G, H - sec * G);
            mb = nmb - 1 - rem / gs;
            h = sec * G + rem % gs;
        } else if constexpr (PERSIST) {
            mb = x % nmb;
            h = x / nmb;
        } else {
            mb = gridDim.x - 1 - blockIdx.x; /* the longest causal blocks first */
            h = blockIdx.y;
        }
    };

    int mb1 = 0, h1 = 0, b1 = 0; /* grid mode: the block's work tile */
    if constexpr (!PERSIST)
        coords(blockIdx.x, mb1, h1, b1);

    const bool tma = tm.on != 0;
    /* p.trace (a test hook, kg_test_attn_trace; NULL in every other launch):
       4 words a block: its start, when its consumers had their registers
       (setmaxnreg), when its first consumer thread was done, the work tiles
       it took (globaltimer ns). PERSIST: then, after the gridDim.x blocks'
       words, 4 words a work tile (tile_word): when the producer took it (its
       Q load issued), when the first consumer thread was done with its key
       tiles (the kernels with the epilogue under the next tile's first S:
       every S of the tile done, its last P V and epilogue not yet; the
       others: its epilogue too), the block, its key tiles. */
    /* (its address formed where it is written, from the parameter, so that
       no register holds it across the loops: held, it spilled in the mask
       kernels at D 96-256) */
    auto trace_word = [&](int w) -> unsigned long long & {
        return p.trace[4 * ((int64_t)(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) + w];
    };
    auto tile_word = [&](int tile, int w) -> unsigned long long & {
        return p.trace[4 * ((int64_t)gridDim.x + tile) + w];
    };
    if (p.trace && tid == 0)
        trace_word(0) = globaltimer();
    if (tid == 0) {
        for (int s = 0; s < 2 * KS; s++)
            mbar_init(bars + 8 * s, tma ? 1 : 128); /* full: every producer thread, or the one loading by TMA */
        for (int s = 2 * KS; s < 4 * KS; s++)
            mbar_init(bars + 8 * s, NWG * 4); /* empty: every consumer warp */
        if (PERSIST) {
            for (int s = 0; s < 2; s++) {
                mbar_init(full_qs(s), tma ? 1 : 128);
                mbar_init(empty_qs(s), NWG * 4);
                mbar_init(full_t(s), 1);
            }
        }
        mbar_init_fence();
    }
    __syncthreads();

    /* one branch per role, as setmaxnreg requires */
    if (wgi == NWG) {
        /* ---- producer ---- */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
        const int pt = tid - NWG * 128;
        if (tma) {
            if (pt != 0)
                return; /* one thread issues the bulk copies */
            tma_prefetch(tm.k);
            tma_prefetch(tm.v);
            if (PERSIST)
                tma_prefetch(tm.q);
        }
        /* K and V tiles of one work tile; it0: the tiles streamed before it
           (stage and phase of the rings) */
        auto produce = [&](int mb, int h, int b, int it0) {
            const int hk = h / p.group, ntiles = key_tiles(p, causal, mb_row(mb), BM, BN);
            const char *k = (const char *)p.k + (b * p.k_sb + hk * p.k_sh) * E;
            const char *v = (const char *)p.v + (b * p.v_sb + hk * p.v_sh) * E;
            for (int j = 0; j < ntiles; j++) {
                const int x = it0 + j, s = stg(x);
                if (x >= KS)
                    mbar_wait(empty_k(s), par(x) ^ 1);
                if (tma) {
                    tma_tile<BN, DP>(aK + s * KB, tm.k, full_k(s), j * BN, hk, b);
                } else {
                    load_sw128_rows<BN, D, 128>(aK + s * KB, k, p.k_ss, j * BN, p.sk, pt);
                    cp_async_arrive(full_k(s));
                }
                if (x >= KS)
                    mbar_wait(empty_v(s), par(x) ^ 1);
                if (tma) {
                    tma_tile<BN, DP>(aV + s * KB, tm.v, full_v(s), j * BN, hk, b);
                } else {
                    load_sw128_rows<BN, D, 128>(aV + s * KB, v, p.v_ss, j * BN, p.sk, pt);
                    cp_async_arrive(full_v(s));
                }
            }
            return ntiles;
        };
        if constexpr (PERSIST) {
            /* The work tiles: blockIdx.x first, then (p.queue NULL) every
               gridDim.x-th, or (p.queue) the next untaken one, counted in
               p.queue[0] (zero between calls): each block takes the next
               tile in the heaviest-first order as it starts on one, so
               the blocks end level whatever the tiles' costs. The first
               producer thread takes it and publishes each tile in the
               sched word of its Q stage (full_t), for the consumers and,
               with cp.async, the other producer threads. */
            int it0 = 0, next = blockIdx.x;
            for (int tc = 0;; tc++) {
                /* tile tc into Q stage tc % 2, once the consumers are done
                   with the tile before the last */
                const int qs = tc & 1;
                if (tc >= 2)
                    mbar_wait(empty_qs(qs), ((tc >> 1) - 1) & 1);
                if (pt == 0) {
                    /* (KG_ATTN_LATE_CLAIM(p) > 0: since session 30 the
                       plain persistent kernel's causal launches,
                       kg_attn_persist_sched) this tile taken only now,
                       once the tile before has its loads issued, i.e. with
                       at most KS of its key tiles left to the consumers,
                       rather than as that one started: a block holds no
                       second tile while its first runs, so the queue's last
                       tiles go to the blocks that are free first */
                    if (KG_ATTN_LATE_CLAIM(p) > 0 && tc > 0)
                        next = p.queue ? (int)gridDim.x + atomicAdd(p.queue, 1) : next + (int)gridDim.x;
                    sched[SW * qs] = next;
                    if (PC && next < p.units) {
                        int mb, h, b;
                        coords(next, mb, h, b);
                        sched[SW * qs + 1] = mb, sched[SW * qs + 2] = h, sched[SW * qs + 3] = b;
                    }
                    mbar_arrive(full_t(qs));
                }
                mbar_wait(full_t(qs), (tc >> 1) & 1);
                const int tile = sched[SW * qs];
                int mb = 0, h = 0, b = 0;
                if (PC && tile < p.units)
                    mb = sched[SW * qs + 1], h = sched[SW * qs + 2], b = sched[SW * qs + 3];
                /* cp.async: every producer thread has read the words before
                   the first thread may write them again (tile tc + 2) */
                if (!tma)
                    asm volatile("bar.sync 5, 128;\n" ::: "memory");
                if (tile >= p.units) {
                    if (p.trace && pt == 0)
                        trace_word(3) = (unsigned long long)tc;
                    break;
                }
                /* the next one, taken now (the atomic's latency hides
                   behind this tile's loads); KG_ATTN_LATE_CLAIM(p) > 0 (the
                   late claim, kg_attn_persist_sched): above instead */
                if (pt == 0 && KG_ATTN_LATE_CLAIM(p) <= 0)
                    next = p.queue ? (int)gridDim.x + atomicAdd(p.queue, 1) : tile + (int)gridDim.x;
                if (!PC)
                    coords(tile, mb, h, b);
                if (p.trace && pt == 0) {
                    tile_word(tile, 0) = globaltimer();
                    tile_word(tile, 2) = blockIdx.x;
                    tile_word(tile, 3) = (unsigned)key_tiles(p, causal, mb_row(mb), BM, BN);
                }
                if (tma) {
                    /* (SH: rows before the start zero-filled as out of bounds) */
                    tma_tile<BM, DP>(qs ? aQ1 : aQ, tm.q, full_qs(qs), mb_row(mb), h, b);
                } else {
                    const char *q = (const char *)p.q + (b * p.q_sb + h * p.q_sh) * E;
                    const int m0 = mb_row(mb);
                    if (SH && m0 < 0) {
                        /* the shifted first block: its rows before the start zero-filled */
                        constexpr int CPR = D / 8;
#pragma unroll 1
                        for (int i = pt; i < BM * CPR; i += 128) {
                            const int r = i / CPR, cc = i % CPR;
                            const bool ok = m0 + r >= 0 && m0 + r < p.sq;
                            const char *src = ok ? q + (int64_t)(m0 + r) * p.q_ss * E + cc * 16 : q;
                            kgd_cp_async16((qs ? aQ1 : aQ) + sw128_at<BM>(r, cc), src, ok);
                        }
                    } else {
                        load_sw128_rows<BM, D, 128>(qs ? aQ1 : aQ, q + (int64_t)m0 * p.q_ss * E, p.q_ss, 0, p.sq - m0,
                                                    pt);
                    }
                    cp_async_arrive(full_qs(qs));
                }
                it0 += produce(mb, h, b, it0);
            }
            /* the last block to leave sets the queue back to zero (every
               block has taken its last tile before it counts itself out) */
            if (p.queue && pt == 0) {
                __threadfence();
                if (atomicAdd(p.queue + 1, 1) == (int)gridDim.x - 1) {
                    p.queue[0] = 0;
                    p.queue[1] = 0;
                }
            }
        } else {
            produce(mb1, h1, b1, 0);
            if (p.trace && pt == 0)
                trace_word(3) = 1;
        }
        kgd_cp_async_wait<0>(); /* nothing of this thread's in flight when it exits */
    } else {
        /* ---- consumers ---- */
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
        if (p.trace && tid == 0)
            trace_word(1) = globaltimer();
        /* The consumers' steps, shared by consume() (one work tile at a time)
           and the persistent pipeline across work tiles below; each takes
           the per-thread state it works on (o, s, pa, mx, l) and this
           thread's row offset wr as arguments; wr, fold and the K / V
           descriptors dk0, dv0 are set by each path where it set them
           before, and a tile's Q descriptor is read where it was read
           before: the same generated code, byte for byte. */
        bool fold;
        uint64_t dk0, dv0;
        /* fold (no mask tensor, scale > 0, a uniform branch): the row
           maxima are taken over the raw scores (scaling by a positive
           factor keeps the order, and rounding is monotonic, so the
           scaled maximum is the same float), and each exponential's
           argument is one FFMA, s * scale - max, as FlashAttention-3
           does, instead of an FMUL then an FADD; ptxas then also leaves
           the exponentials under P_{j-1} V_{j-1} (it placed the wait for
           that product before them). Not in the ping-pong variants:
           there it measured 3-4% slower (H200, session 6 r1, us, fold /
           not: D 64 S 4k causal 800 / 766, D 128 S 1k causal 361 / 351),
           where elsewhere it is faster (D 64 S 4k 1444 / 1604, D 128 S
           4k 1888 / 2084, S 1k 525 / 541). */
        /* The scaled, masked scores of S_j (key tile j of the tile of query
           rows from m0; this thread's rows m0 + wr + g and + 8, its mask
           rows mrow, KIND MASK only) -> exponentials relative to the new
           running max (in s), their row sums (rs) and the factor alpha the
           output and the sums so far must be scaled by. */
        auto softmax = [&](float(&s)[BN / 2], float(&mx)[2], const float *(&mrow)[2], int j, int m0,
                           int wr, float(&alpha)[2], float(&rs)[2]) {
            const int n0 = j * BN;
            const bool check = n0 + BN > p.sk || (causal && n0 + BN - 1 > m0 + wr + p.sk - p.sq);
            /* scale (and add the mask) everywhere; key bounds and the causal
               rule only on tiles that cross the sequence end or the diagonal:
               row r sees keys c < lim = min(Sk, r + Sk - Sq + 1) */
            if (!fold) {
#pragma unroll
                for (int n = 0; n < NS; n++)
#pragma unroll
                    for (int x = 0; x < 4; x++) {
                        float &e = s[4 * n + x];
                        e *= p.scale_log2;
                        if (KIND == KG_ATTN_MASK) {
                            const int i = x >> 1, c = n0 + n * 8 + 2 * t + (x & 1);
                            if (c < p.sk && m0 + wr + g + 8 * i < p.sq)
                                e += mrow[i][(int64_t)c * p.m_sk] * KG_LOG2E;
                        }
                    }
            }
            if (check) {
                int lim[2];
#pragma unroll
                for (int i = 0; i < 2; i++)
                    lim[i] = causal ? min(p.sk, m0 + wr + g + 8 * i + p.sk - p.sq + 1) : p.sk;
#pragma unroll
                for (int n = 0; n < NS; n++)
#pragma unroll
                    for (int x = 0; x < 4; x++)
                        if (n0 + n * 8 + 2 * t + (x & 1) >= lim[x >> 1])
                            s[4 * n + x] = -CUDART_INF_F;
            }
            /* row maxima and sums in two chains per row (even and odd
               8-key groups): half the dependent FMNMX / FADD latency */
            float tmax[2][2] = {{-CUDART_INF_F, -CUDART_INF_F}, {-CUDART_INF_F, -CUDART_INF_F}};
#pragma unroll
            for (int n = 0; n < NS; n++)
#pragma unroll
                for (int x = 0; x < 4; x++)
                    tmax[n & 1][x >> 1] = fmaxf(tmax[n & 1][x >> 1], s[4 * n + x]);
            float use[2], rsp[2][2] = {{0.f, 0.f}, {0.f, 0.f}};
#pragma unroll
            for (int i = 0; i < 2; i++) {
                const float qm = quad_max(fmaxf(tmax[0][i], tmax[1][i]));
                const float mnew = fmaxf(mx[i], fold ? qm * p.scale_log2 : qm);
                use[i] = mnew == -CUDART_INF_F ? 0.f : mnew;
                alpha[i] = ex2(mx[i] - use[i]);
                mx[i] = mnew;
                rs[i] = 0.f;
            }
            if (fold) {
#pragma unroll
                for (int n = 0; n < NS; n++)
#pragma unroll
                    for (int x = 0; x < 4; x++) {
                        float &e = s[4 * n + x];
                        e = ex2(fmaf(e, p.scale_log2, -use[x >> 1]));
                        rsp[n & 1][x >> 1] += e;
                    }
            } else {
#pragma unroll
                for (int n = 0; n < NS; n++)
#pragma unroll
                    for (int x = 0; x < 4; x++) {
                        float &e = s[4 * n + x];
                        e = ex2(e - use[x >> 1]);
                        rsp[n & 1][x >> 1] += e;
                    }
            }
#pragma unroll
            for (int i = 0; i < 2; i++)
                rs[i] = rsp[0][i] + rsp[1][i];
        };
        /* P (the exponentials in s) into the A-operand registers of P V */
        auto pack_p = [&](uint32_t(&pa)[BN / 16][4], const float(&s)[BN / 2]) {
#pragma unroll
            for (int kk = 0; kk < BN / 16; kk++)
                mma<T>::pack_a16(s + 8 * kk, pa[kk]);
        };
        /* The stages' descriptors: each product's is its stage's base
           descriptor plus the byte offset / 16 in the start-address field
           (shared addresses stay below 256 KB, so no carry leaves it),
           a 64-bit add instead of building it from the address (about
           six uniform instructions per wgmma in the SASS of D 128): dk0, dv0 */
        /* S = Q K^T from K stage `stage`, Q from the descriptor dq */
        auto issue_s = [&](float(&s)[BN / 2], int stage, uint64_t dq) {
            const uint64_t dk = dk0 + (uint64_t)(stage * (KB >> 4));
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++) {
                const uint32_t off = (kk >> 2) * BM * 128 + (kk & 3) * 32;
                wg<T, BN>::ss(s, dq + (off >> 4), dk + (uint64_t)((((kk >> 2) * BN * 128 + (kk & 3) * 32)) >> 4),
                              kk > 0);
            }
            wg_commit();
        };
        /* O += P V from V stage `stage` */
        auto issue_pv = [&](float(&o)[DP / 2], uint32_t(&pa)[BN / 16][4], int stage) {
            const uint64_t dv = dv0 + (uint64_t)(stage * (KB >> 4));
#pragma unroll
            for (int kk = 0; kk < BN / 16; kk++)
                wg<T, DP>::rs(o, pa[kk], dv + (uint64_t)((kk * 16 * 128) >> 4), 1);
            wg_commit();
        };
        /* PP (ping-pong, two consumer warpgroups): the warpgroups take turns
           to issue their products (named barriers 3 and 4: a warpgroup waits
           for its turn, issues, and passes the turn on), so that one's
           softmax runs while the other's products occupy the tensor cores
           rather than both multiplying, then both exponentiating. */
        static_assert(!PP || NWG == 2, "ping-pong takes two consumer warpgroups");
        auto turn_wait = [&]() {
            if constexpr (PP)
                asm volatile("bar.sync %0, 256;\n" ::"r"(3 + wgi) : "memory");
        };
        auto turn_pass = [&]() {
            if constexpr (PP)
                asm volatile("bar.arrive %0, 256;\n" ::"r"(3 + (wgi ^ 1)) : "memory");
        };
        /* a landed tile ready for the products: copies by cp.async (the
           generic proxy) fenced for wgmma's async proxy; NF: bulk tensor
           copies land through the async proxy, their barrier's completion
           makes them visible, so no fence (a uniform branch) */
        auto landed = [&]() {
            if (!NF || !tma)
                fence_async_smem();
        };
        /* this warp is done reading a stage */
        auto release = [&](uint32_t bar) {
            __syncwarp();
            if (lane == 0)
                mbar_arrive(bar);
        };
        /* O scaled to the new running max */
        auto rescale_o = [&](float(&o)[DP / 2], const float(&alpha)[2]) {
#pragma unroll
            for (int n = 0; n < ND; n++) {
                o[4 * n] *= alpha[0];
                o[4 * n + 1] *= alpha[0];
                o[4 * n + 2] *= alpha[1];
                o[4 * n + 3] *= alpha[1];
            }
        };
        auto zero_o = [&](float(&o)[DP / 2]) {
#pragma unroll
            for (int i = 0; i < DP / 2; i++)
                o[i] = 0.f;
        };
        /* epilogue, first half: normalize, and stage the warpgroup's own
           (swizzled, so conflict-free) rows of the staging tile; lse */
        auto stage_out = [&](const float(&o)[DP / 2], int m0, int wr, int h, int b, const float(&mxv)[2],
                             const float(&lv)[2]) {
            if constexpr (TS) {
                /* the warpgroup's last bulk stores have read its staging rows */
                if (tmo) {
                    if ((tid & 127) == 0)
                        bulk_wait_read();
                    __syncwarp();
                    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + wgi) : "memory");
                }
            }
#pragma unroll
            for (int i = 0; i < 2; i++) {
                const float sum = quad_sum(lv[i]);
                const float inv = sum > 0.f ? 1.f / sum : 0.f;
                const int rl = wr + g + 8 * i, r = m0 + rl;
#pragma unroll
                for (int n = 0; n < ND; n++)
                    *(uint32_t *)(sO + sw128_at<BM>(rl, n) + 4 * t) =
                        mma<T>::pack(o[4 * n + 2 * i] * inv, o[4 * n + 2 * i + 1] * inv);
                if (p.lse && t == 0 && r >= 0 && r < p.sq)
                    p.lse[b * p.l_sb + h * p.l_sh + (int64_t)r * p.l_ss] =
                        sum > 0.f ? (mxv[i] + log2f(sum)) * KG_LN2 : -CUDART_INF_F;
            }
        };
        /* second half: 16-byte coalesced stores of the staged rows;
           PERSIST: the staging tile free again after them. WS: each warp
           its own 16 rows (the ones it staged), so warp syncs order them */
        auto store_out = [&](int m0, int h, int b) {
            char *out = (char *)p.out + (b * p.o_sb + h * p.o_sh) * E;
            constexpr int CPR = D / 8;
            if constexpr (WS) {
                __syncwarp();
#pragma unroll
                for (int it = 0; it < 16 * CPR / 32; it++) {
                    const int i = lane + it * 32, rl = wgi * 64 + wq * 16 + i / CPR, cc = i % CPR, r = m0 + rl;
                    if (r >= 0 && r < p.sq)
                        *(uint4 *)(out + (int64_t)r * p.o_ss * E + cc * 16) =
                            *(const uint4 *)(sO + sw128_at<BM>(rl, cc));
                }
                __syncwarp(); /* the warp's staging rows are free for the next work tile */
                return;
            }
            if constexpr (TS) {
                if (tmo) {
                    /* every thread's staged rows, written through the
                       generic proxy, visible to the bulk copies' async
                       one, then one thread's copies of the warpgroup's 64
                       rows (none where no row is inside the output) */
                    fence_async_smem();
                    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + wgi) : "memory");
                    const int r0 = m0 + wgi * 64;
                    if ((tid & 127) == 0 && r0 < p.sq) {
#pragma unroll
                        for (int pn = 0; pn < DP / 64; pn++)
                            tma_store4(*tmo, aO + pn * BM * 128 + wgi * 64 * 128, pn * 64, r0, h, b);
                        bulk_commit();
                    }
                    __syncwarp(); /* (the warp converged before its next wgmma) */
                    return;       /* (stage_out waits for the rows to be read) */
                }
            }
            asm volatile("bar.sync %0, 128;\n" ::"r"(1 + wgi) : "memory");
#pragma unroll
            for (int it = 0; it < 64 * CPR / 128; it++) {
                const int i = (tid & 127) + it * 128, rl = wgi * 64 + i / CPR, cc = i % CPR, r = m0 + rl;
                if (r < p.sq)
                    *(uint4 *)(out + (int64_t)r * p.o_ss * E + cc * 16) = *(const uint4 *)(sO + sw128_at<BM>(rl, cc));
            }
            if constexpr (PERSIST) /* the staging tile is free for the next work tile */
                asm volatile("bar.sync %0, 128;\n" ::"r"(1 + wgi) : "memory");
        };

        /* the persistent pipeline's staged tile whose stores wait (pm0 >= 0:
           its rows m0, head, batch), stored once the next products are
           issued; consume() stages none (pm0 stays -1) */
        int pm0 = -1, ph = 0, pb = 0;
        auto flush = [&]() {
            if (pm0 >= 0) {
                store_out(pm0, ph, pb);
                pm0 = -1;
            }
        };
        /* A tile's first S and its softmax (its Q landed, nothing of this
           warpgroup's in flight); it0: the K/V tiles streamed before it,
           dq(): the descriptor of its Q rows */
        auto first_s = [&](float(&s)[BN / 2], uint32_t(&pa)[BN / 16][4], float(&mx)[2], float(&l)[2],
                           const float *(&mrow)[2], int m0, int wr, int it0, auto &&dq) {
            float alpha[2], rs[2];
            mbar_wait(full_k(stg(it0)), par(it0));
            landed();
            wg_fence();
            turn_wait();
            issue_s(s, stg(it0), dq());
            turn_pass();
            wg_wait<0>();
            release(empty_k(stg(it0)));
            softmax(s, mx, mrow, 0, m0, wr, alpha, rs);
            l[0] = rs[0], l[1] = rs[1];
            pack_p(pa, s);
        };
        /* Key tiles j0 (1, or 2 where F2 took key tile 1 with the first) ..
           ntiles - 1 of a begun tile (flush(): the staged tile's stores,
           once a step's products are issued).
           (Measured, H200, session 5: ptxas places the wait for
           P_{j-1} V_{j-1} before the exponentials of S_j (it packs them
           into the P registers that product reads), so within a
           warpgroup only the scaling and masking run under it. A loop
           that moved O's rescale and P's packing to the next step,
           keeping the softmax under P V in the SASS, was 3-15% slower on
           every shape (6-23%): the two warpgroups already take turns on
           the tensor cores.) */
        /* A key step once S_j (into s, from K stage sk) and then P_{j-1}
           V_{j-1} (V stage sv) are issued: the softmax of S_j while that
           product runs, then the sums and O rescaled and P_j packed (the
           key loops of mainloop(), SK and F2 share it) */
        auto step_end = [&](float(&o)[DP / 2], float(&s)[BN / 2], uint32_t(&pa)[BN / 16][4], float(&mx)[2],
                            float(&l)[2], const float *(&mrow)[2], int j, int m0, int wr, int sk, int sv) {
            float alpha[2], rs[2];
            wg_wait<1>(); /* S_j is ready; softmax while P_{j-1} V_{j-1} runs */
            release(empty_k(sk));
            softmax(s, mx, mrow, j, m0, wr, alpha, rs);
            wg_wait<0>(); /* O is final for tile j-1: rescale; P_j replaces P_{j-1} */
            release(empty_v(sv));
#pragma unroll
            for (int i = 0; i < 2; i++)
                l[i] = l[i] * alpha[i] + rs[i];
            rescale_o(o, alpha);
            pack_p(pa, s);
        };
        auto mainloop = [&](float(&o)[DP / 2], float(&s)[BN / 2], uint32_t(&pa)[BN / 16][4], float(&mx)[2],
                            float(&l)[2], const float *(&mrow)[2], int m0, int wr, int ntiles, int it0, uint64_t dq,
                            int j0 = 1) {
            for (int j = j0; j < ntiles; j++) {
                const int sk_ = stg(it0 + j), sv = stg(it0 + j - 1);
                mbar_wait(full_k(sk_), par(it0 + j));
                mbar_wait(full_v(sv), par(it0 + j - 1));
                landed();
                wg_fence();
                turn_wait();
                issue_s(s, sk_, dq);
                issue_pv(o, pa, sv);
                turn_pass();
                flush();
                step_end(o, s, pa, mx, l, mrow, j, m0, wr, sk_, sv);
            }
        };
        /* a tile's last O += P V on its own; it1: the K/V tiles streamed up
           to the tile's end; PERSIST: its V stage released (the next work
           tile's producer refills it) */
        auto last_pv = [&](float(&o)[DP / 2], uint32_t(&pa)[BN / 16][4], int it1) {
            const int sv = stg(it1 - 1);
            mbar_wait(full_v(sv), par(it1 - 1));
            landed();
            wg_fence();
            turn_wait();
            issue_pv(o, pa, sv);
            turn_pass();
            flush();
            wg_wait<0>();
            if constexpr (PERSIST)
                release(empty_v(sv)); /* the next work tile's producer refills it */
        };
        /* one work tile; it0: the K/V tiles streamed before it; x (PERSIST):
           the work tiles before it (its Q stage is x % 2). Grid mode, and
           PERSIST with KG_ATTN_XT 0; else the persistent consumers below. */
        auto consume = [&](const int mb, const int h, const int b, const int it0, const int x) {
            const int m0 = mb_row(mb), ntiles = key_tiles(p, causal, m0, BM, BN);
            if constexpr (!PERSIST) {
                /* this warpgroup's Q rows (PERSIST: the producer loads them) */
                const char *q = (const char *)p.q + (b * p.q_sb + h * p.q_sh) * E;
                constexpr int CPR = D / 8;
#pragma unroll
                for (int it = 0; it < 64 * CPR / 128; it++) {
                    const int i = (tid & 127) + it * 128, rl = wgi * 64 + i / CPR, cc = i % CPR;
                    const bool ok = m0 + rl < p.sq;
                    const char *src = ok ? q + (int64_t)(m0 + rl) * p.q_ss * E + cc * 16 : q;
                    kgd_cp_async16(aQ + sw128_at<BM>(rl, cc), src, ok);
                }
                kgd_cp_async_commit();
                kgd_cp_async_wait<0>();
                fence_async_smem();
                asm volatile("bar.sync %0, 128;\n" ::"r"(1 + wgi) : "memory");
            }

            /* this thread's rows: m0 + wr + g and + 8 */
            const int wr = wgi * 64 + wq * 16;
            float o[DP / 2], s[BN / 2];
            uint32_t pa[BN / 16][4];
            float mx[2] = {-CUDART_INF_F, -CUDART_INF_F}, l[2] = {0.f, 0.f};
            zero_o(o);
            const float *mrow[2];
#pragma unroll
            for (int i = 0; i < 2; i++) {
                const int r = min(m0 + wr + g + 8 * i, p.sq - 1);
                mrow[i] = KIND == KG_ATTN_MASK ? p.mask + b * p.m_sb + h * p.m_sh + (int64_t)r * p.m_sq : nullptr;
            }
            /* Q rows of this warpgroup; K-major, so stepping 16 along D is +32 bytes
               inside a panel */
            const uint64_t dq = sw128_desc((PERSIST && (x & 1) ? aQ1 : aQ) + wgi * 64 * 128, 16, 1024);
            fold = KG_ATTN_FOLD && !PP && KIND != KG_ATTN_MASK && p.scale_log2 > 0.f;
            dk0 = sw128_desc(aK, 16, 1024), dv0 = sw128_desc(aV, BN * 128, 1024);

            if constexpr (SK) {
                if (p.sq - m0 <= 64) {
                    /* every real row in warpgroup 0's 64: key tile j to
                       warpgroup j % 3, each over warpgroup 0's Q rows; a
                       tile another warpgroup takes is waited for and
                       released at once (the rings' phases stay in step) */
                    const int wr0 = wq * 16;
                    const uint64_t dq0 = sw128_desc((x & 1) ? aQ1 : aQ, 16, 1024);
                    auto skip = [&](int j) {
                        const int xk = it0 + j, st = stg(xk);
                        mbar_wait(full_k(st), par(xk));
                        release(empty_k(st));
                        mbar_wait(full_v(st), par(xk));
                        release(empty_v(st));
                    };
                    const int first = wgi < ntiles ? wgi : ntiles;
                    for (int j = 0; j < first; j++)
                        skip(j);
                    int last = -1; /* this warpgroup's last key tile */
                    if (first < ntiles) {
                        /* its first tile: first_s()'s steps at key tile `first` */
                        float alpha[2], rs[2];
                        const int sk_ = stg(it0 + first);
                        mbar_wait(full_k(sk_), par(it0 + first));
                        landed();
                        wg_fence();
                        issue_s(s, sk_, dq0);
                        wg_wait<0>();
                        release(empty_k(sk_));
                        softmax(s, mx, mrow, first, m0, wr0, alpha, rs);
                        l[0] = rs[0], l[1] = rs[1];
                        pack_p(pa, s);
                        last = first;
                        /* the next ones: mainloop()'s steps, the other
                           warpgroups' tiles between passed */
                        for (int j = first + NWG; j < ntiles; j += NWG) {
                            for (int u = j - NWG + 1; u < j; u++)
                                skip(u);
                            const int xk = it0 + j, sk2 = stg(xk), sv = stg(it0 + j - NWG);
                            mbar_wait(full_k(sk2), par(xk));
                            mbar_wait(full_v(sv), par(it0 + j - NWG));
                            landed();
                            wg_fence();
                            issue_s(s, sk2, dq0);
                            issue_pv(o, pa, sv);
                            step_end(o, s, pa, mx, l, mrow, j, m0, wr0, sk2, sv);
                            last = j;
                        }
                        release(empty_qs(x & 1)); /* every S = Q K^T of the tile is done */
                        last_pv(o, pa, it0 + last + 1);
                        for (int j = last + 1; j < ntiles; j++)
                            skip(j);
                    } else {
                        release(empty_qs(x & 1));
                    }
                    /* warpgroups 1, 2 hand their state to 0 (per thread,
                       element-major: conflict-free), which merges them in
                       order and stores the rows */
                    constexpr int SE = DP / 2 + 4;
                    float *scr = (float *)(smem + (((bars + 32 * KS + 48 + 8 * SW + 15) & ~15u) - raw));
                    const int ti = tid & 127;
                    if (wgi > 0) {
                        float *w = scr + (wgi - 1) * SE * 128 + ti;
#pragma unroll
                        for (int k = 0; k < DP / 2; k++)
                            w[k * 128] = o[k];
                        w[(DP / 2) * 128] = mx[0], w[(DP / 2 + 1) * 128] = mx[1];
                        w[(DP / 2 + 2) * 128] = l[0], w[(DP / 2 + 3) * 128] = l[1];
                    }
                    asm volatile("bar.sync 8, %0;\n" ::"n"(NWG * 128) : "memory");
                    if (wgi == 0) {
#pragma unroll 1
                        for (int u = 1; u < NWG; u++) {
                            const float *w = scr + (u - 1) * SE * 128 + ti;
                            float a[2], c[2];
#pragma unroll
                            for (int i = 0; i < 2; i++) {
                                const float mw = w[(DP / 2 + i) * 128], mn = fmaxf(mx[i], mw);
                                const float use = mn == -CUDART_INF_F ? 0.f : mn;
                                a[i] = ex2(mx[i] - use);
                                c[i] = ex2(mw - use);
                                l[i] = l[i] * a[i] + w[(DP / 2 + 2 + i) * 128] * c[i];
                                mx[i] = mn;
                            }
#pragma unroll
                            for (int k = 0; k < DP / 2; k++)
                                o[k] = o[k] * a[(k >> 1) & 1] + w[k * 128] * c[(k >> 1) & 1];
                        }
                        stage_out(o, m0, wr0, h, b, mx, l);
                        store_out(m0, h, b);
                    }
                    asm volatile("bar.sync 8, %0;\n" ::"n"(NWG * 128) : "memory"); /* the scratch free again */
                    return ntiles;
                }
            }
            if (wgi == 1)
                turn_pass(); /* warpgroup 0 goes first */
            if (ntiles > 0) {
                bool two = false; /* F2: key step 1 taken here */
                if constexpr (F2)
                    two = ntiles > 1;
                if (two) {
                    float s2[BN / 2], alpha[2], rs[2];
                    const int sk0 = stg(it0), sk1 = stg(it0 + 1);
                    mbar_wait(full_k(sk0), par(it0));
                    landed();
                    wg_fence();
                    issue_s(s, sk0, dq);
                    mbar_wait(full_k(sk1), par(it0 + 1));
                    landed();
                    wg_fence();
                    issue_s(s2, sk1, dq);
                    wg_wait<1>(); /* the first S is ready; the second still runs */
                    release(empty_k(sk0));
                    softmax(s, mx, mrow, 0, m0, wr, alpha, rs);
                    l[0] = rs[0], l[1] = rs[1];
                    pack_p(pa, s);
                    mbar_wait(full_v(sk0), par(it0));
                    landed();
                    wg_fence();
                    issue_pv(o, pa, sk0);
                    /* (the second S's softmax while P_0 V_0 runs) */
                    step_end(o, s2, pa, mx, l, mrow, 1, m0, wr, sk1, sk0);
                } else {
                    first_s(s, pa, mx, l, mrow, m0, wr, it0, [&] { return dq; });
                }
                mainloop(o, s, pa, mx, l, mrow, m0, wr, ntiles, it0, dq, two ? 2 : 1);
                if constexpr (PERSIST)
                    release(empty_qs(x & 1)); /* every S = Q K^T of the tile is done */
                last_pv(o, pa, it0 + ntiles);
            } else if constexpr (PERSIST) {
                release(empty_qs(x & 1));
            }
            if (wgi == 0)
                turn_wait(); /* the turn warpgroup 1 passed last: no arrival left pending */
            stage_out(o, m0, wr, h, b, mx, l);
            store_out(m0, h, b);
            return ntiles;
        };
        constexpr bool XT = KG_ATTN_XT < 0 ? PP : KG_ATTN_XT != 0;
        static_assert(!(SH && XT), "SH: one work tile at a time (the pipeline across tiles marks no staged tile "
                                   "with a negative row)");
        /* PERSIST: work tile x of this block (counted from 0), once the
           producer has published it. Lane 0 alone reads the word and hands
           it to its warp: lane 0 is the thread that arrives on the Q
           stage's empty barrier (release), whose completion lets the
           producer write the word again (tile x + 2), so the read is
           ordered before that write by the barrier itself. */
        auto tile_of = [&](int x) {
            mbar_wait(full_t(x & 1), (x >> 1) & 1);
            int v = 0;
            if (lane == 0)
                v = sched[SW * (x & 1)];
            return __shfl_sync(0xffffffffu, v, 0);
        };
        /* and its coordinates (PC: as published with it; read by lane 0
           before the same release) */
        auto coords_of = [&](int x, int tile, int &mb, int &h, int &b) {
            if constexpr (PC) {
                int c[3] = {0, 0, 0};
                if (lane == 0)
                    c[0] = sched[SW * (x & 1) + 1], c[1] = sched[SW * (x & 1) + 2], c[2] = sched[SW * (x & 1) + 3];
                mb = __shfl_sync(0xffffffffu, c[0], 0);
                h = __shfl_sync(0xffffffffu, c[1], 0);
                b = __shfl_sync(0xffffffffu, c[2], 0);
            } else {
                coords(tile, mb, h, b);
            }
        };
        if constexpr (PERSIST && (EP || XT)) {
            /* The persistent consumers' pipeline across work tiles, two
               forms of one boundary between tiles that both have key
               tiles; everything else (the set-up, the next tile's
               coordinates and key tiles, a boundary where either tile has
               none) is shared.
               XT: the next tile's first S = Q K^T is issued together with
               this tile's last O += P V, its softmax runs while that
               product is on the tensor cores, and this tile's output goes
               to the staging tile then (its global stores wait for the
               next issue of products, so they too run under the tensor
               cores' work): the first softmax and the epilogue of a tile
               no longer leave the warpgroup's products idle.
               EP: the last P V of this tile and the first Q K^T of the
               next are issued together (P V first: it is waited for
               first), and this tile's epilogue runs while the next tile's
               S is on the tensor cores; then that S's softmax as first_s()
               does it.
               Same arithmetic in the same order as grid mode (bitwise the
               same results). */
            static_assert(!(EP && XT), "EP: its own boundary between work tiles");
            static_assert(KIND != KG_ATTN_MASK, "no persistent mask kernels");
            const int wr = wgi * 64 + wq * 16;
            float o[DP / 2], s[BN / 2];
            uint32_t pa[BN / 16][4];
            float mx[2], l[2];
            const float *nomask[2] = {nullptr, nullptr};
            /* this warpgroup's Q rows in Q stage 0 and 1 */
            const uint64_t dq0 = sw128_desc(aQ + wgi * 64 * 128, 16, 1024),
                           dq1 = sw128_desc(aQ1 + wgi * 64 * 128, 16, 1024);
            /* work tile x (counted from 0 in this block) reads Q stage x % 2 */
            auto dq_of = [&](int x) { return (x & 1) ? dq1 : dq0; };
            dk0 = sw128_desc(aK, 16, 1024), dv0 = sw128_desc(aV, BN * 128, 1024);
            fold = KG_ATTN_FOLD && !PP && p.scale_log2 > 0.f; /* (no mask kernels) */
            /* a tile's first S and softmax (its Q landed, nothing of this
               warpgroup's in flight); it0: the K/V tiles streamed before it,
               x: the work tiles before it */
            auto begin = [&](int m0, int ntiles, int it0, int x) {
#pragma unroll
                for (int i = 0; i < 2; i++)
                    mx[i] = -CUDART_INF_F, l[i] = 0.f;
                zero_o(o);
                if (ntiles > 0)
                    first_s(s, pa, mx, l, nomask, m0, wr, it0, [&] { return dq_of(x); });
                else
                    release(empty_qs(x & 1));
            };

            if (wgi == 1)
                turn_pass(); /* warpgroup 0 goes first */
            int it0 = 0, tc = 0, tile = tile_of(0), mb = 0, h = 0, b = 0, m0 = 0, nt = 0;
            if (tile < p.units) {
                coords_of(0, tile, mb, h, b);
                m0 = mb_row(mb);
                nt = key_tiles(p, causal, m0, BM, BN);
                mbar_wait(full_qs(0), 0);
                landed();
                begin(m0, nt, 0, 0);
            }
            while (tile < p.units) {
                mainloop(o, s, pa, mx, l, nomask, m0, wr, nt, it0, dq_of(tc));
                if (p.trace && tid == 0)
                    tile_word(tile, 1) = globaltimer();
                if (nt > 0)
                    release(empty_qs(tc & 1)); /* every S = Q K^T of the tile is done */
                const int nx = tile_of(tc + 1), it1 = it0 + nt;
                int mb2 = 0, h2 = 0, b2 = 0, m2 = 0, nt2 = 0;
                if (nx < p.units) {
                    coords_of(tc + 1, nx, mb2, h2, b2);
                    m2 = mb_row(mb2);
                    nt2 = key_tiles(p, causal, m2, BM, BN);
                }
                if (nt > 0 && nt2 > 0) {
                    float alpha[2], rs[2];
                    if constexpr (EP) {
                        /* the epilogue under the next tile's first S */
                        const int sv = stg(it1 - 1), sk2 = stg(it1);
                        mbar_wait(full_v(sv), par(it1 - 1));
                        landed();
                        wg_fence();
                        issue_pv(o, pa, sv);
                        mbar_wait(full_qs((tc + 1) & 1), ((tc + 1) >> 1) & 1);
                        mbar_wait(full_k(sk2), par(it1));
                        landed();
                        wg_fence();
                        issue_s(s, sk2, dq_of(tc + 1));
                        wg_wait<1>(); /* O is final for this tile; the next S still runs */
                        release(empty_v(sv));
                        stage_out(o, m0, wr, h, b, mx, l);
                        store_out(m0, h, b);
                        wg_wait<0>();
                        release(empty_k(sk2));
                        mx[0] = mx[1] = -CUDART_INF_F;
                        softmax(s, mx, nomask, 0, m2, wr, alpha, rs);
                    } else {
                        /* the next tile's first S with this tile's last P V */
                        const int sv = stg(it1 - 1);
                        mbar_wait(full_v(sv), par(it1 - 1));
                        mbar_wait(full_qs((tc + 1) & 1), ((tc + 1) >> 1) & 1);
                        mbar_wait(full_k(stg(it1)), par(it1));
                        landed();
                        wg_fence();
                        turn_wait();
                        issue_s(s, stg(it1), dq_of(tc + 1));
                        issue_pv(o, pa, sv);
                        turn_pass();
                        flush();
                        wg_wait<1>();
                        release(empty_k(stg(it1)));
                        const float mxo[2] = {mx[0], mx[1]}, lo[2] = {l[0], l[1]};
                        mx[0] = mx[1] = -CUDART_INF_F;
                        softmax(s, mx, nomask, 0, m2, wr, alpha, rs);
                        wg_wait<0>();
                        release(empty_v(sv));
                        stage_out(o, m0, wr, h, b, mxo, lo);
                        pm0 = m0, ph = h, pb = b;
                    }
                    zero_o(o);
                    l[0] = rs[0], l[1] = rs[1];
                    pack_p(pa, s);
                } else {
                    if (nt > 0)
                        last_pv(o, pa, it1); /* the next work tile's producer refills the V stage */
                    else
                        flush();
                    stage_out(o, m0, wr, h, b, mx, l);
                    store_out(m0, h, b);
                    if (nx < p.units) {
                        mbar_wait(full_qs((tc + 1) & 1), ((tc + 1) >> 1) & 1);
                        landed();
                        begin(m2, nt2, it1, tc + 1);
                    }
                }
                it0 = it1, tc++, tile = nx;
                mb = mb2, h = h2, b = b2, m0 = m2, nt = nt2;
            }
            flush();
            if (wgi == 0)
                turn_wait(); /* the turn warpgroup 1 passed last: no arrival left pending */
        } else if constexpr (PERSIST) {
            int it0 = 0;
            for (int tc = 0;; tc++) {
                const int tile = tile_of(tc);
                if (tile >= p.units)
                    break;
                int mb, h, b;
                coords_of(tc, tile, mb, h, b);
                mbar_wait(full_qs(tc & 1), (tc >> 1) & 1);
                landed();
                it0 += consume(mb, h, b, it0, tc);
                if (p.trace && tid == 0)
                    tile_word(tile, 1) = globaltimer();
            }
        } else {
            consume(mb1, h1, b1, 0, 0);
        }
        if constexpr (TS) {
            /* the last bulk stores done before the block's shared memory goes */
            if (tmo && (tid & 127) == 0)
                bulk_wait();
            __syncwarp();
        }
        if (p.trace && tid == 0)
            trace_word(2) = globaltimer();
    }
}

} // namespace kg_attn

#endif
