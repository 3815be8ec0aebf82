/*
 * attn_plan.h - the key split of attention's short-query (decode) kernels
 * (templates/attention_decode.cuh): pure host code, tested on the CPU.
 */
#ifndef KG_ATTN_PLAN_H
#define KG_ATTN_PLAN_H

#include <stdint.h>

#include "kg_core.h"

/* Most key splits of one call. */
#define KG_ATTN_MAX_SPLITS 256
/* Fewest key tiles a split gets (the planner's choice; a forced count may
   give fewer). */
#define KG_ATTN_MIN_SPLIT_TILES 2
/* Fewest keys per split, per valid packed row of a tile, as the decode
   tile rule (kg_attn_dec_tile_rows) plans both tiles: the partials a split
   writes and the merge reads stay within 1/16 of the split's K and V
   bytes. (8 as the launch's minimum measured faster on the one row it
   changed in two runs and slower in a third, H200, same process, MQA B 1
   Hq 32 Sk 32768 D 128 on 32-row tiles, 64 / 128 splits, µs: s17r1 15.78
   / 15.15, s17r2 15.57 / 15.28, s17r3 15.51 / 15.74; that row now takes
   16-row tiles, 64 splits either way.) */
#define KG_ATTN_CHUNK_PER_ROW 16
/* Fewest keys per split, per valid packed row, of the decode launch's own
   split (once the tile is chosen): within 1/4 of the split's K and V bytes.
   It binds only where few keys meet many rows (the grid then short of a
   wave): H200, s20r2, same process, 16 / 4 keys a row, µs: B 4 Hq 54 Hkv 2
   Sk 5907 D 128 (12 / 16 splits) 14.66 / 13.14, f16 B 4 Hq 48 Hkv 2 Sk
   1125 (4 / 6) 9.31 / 8.59, B 1 Hq 19 Hkv 1 Sk 10126 (32 / 53) 9.88 / 9.87;
   no other of 24 small-grid rows changed. */
#define KG_ATTN_SPLIT_PER_ROW 4
/* The runtime takes the decode variants for Sq up to this (f16 / bf16). */
#define KG_ATTN_DECODE_MAX_SQ 16

typedef struct kg_attn_split {
    int splits; /* blocks along the keys of one row tile; 1: no partials, no combine */
    int chunk;  /* keys per split, a multiple of the tile's keys (the last split may have fewer) */
} kg_attn_split;

/* The fill of kg_attn_plan_split for the decode kernels at D 32 (cp.async
   copies, three blocks per multiprocessor), percent. H200 (s16r1, D 32, 3
   blocks a multiprocessor, 396 slots), us, 1 split (256 blocks, 0.65 of a
   wave) / 3 splits (0.97 of two): B 64 Hq 32 Hkv 4 Sk 24858 301.6 / 236.9,
   B 32 Hq 64 Hkv 8 Sk 7605 97.3 / 77.6; 2 splits (0.65 of two waves)
   290.3 and 92.3. */
#define KG_ATTN_FILL_PCT 90

/* The split of `keys` keys for `blocks` row tiles (B x Hkv x row tiles per
   KV head) on a GPU with `slots` resident blocks (multiprocessors x blocks
   per multiprocessor), tiles of `bn` keys, at most max_splits splits. The
   count is slots / blocks (rounded down, at least 1): every block resident
   at once, since memory-bound blocks share the bandwidth rather than queue
   for multiprocessors (more waves measured slower: each block's start and
   merge cost more than the balance gains); each split gets at least
   KG_ATTN_MIN_SPLIT_TILES tiles and, when min_chunk > 0, min_chunk keys.
   With fill > 0 the count then grows (within those limits) until the
   blocks x splits fill their waves of `slots` blocks to at least fill
   percent (blocks that need several a multiprocessor to stream well).
   `forced` > 0 asks for that count instead (still capped by max_splits and
   by one tile per split). The chunk is keys / splits rounded up to whole
   tiles, and splits is recomputed from it, so no split is empty. keys <= 0
   gives {1, bn}. */
KG_API kg_attn_split kg_attn_plan_split(int64_t blocks, int64_t keys, int bn, int64_t slots, int max_splits,
                                        int64_t min_chunk, int fill, int forced);

/* The decode tile for `rows` packed rows (group x Sq) of each of `heads`
   KV heads (B x Hkv), `keys` keys in tiles of `bn`, `slots` resident blocks
   (one a multiprocessor: head dims 64 and 128): 16, 32 or 64 rows, the
   fewest tiles that hold the rows (rows 1-16, 17-32, 33 on), except that
   17-32 rows take two 16-row tiles where the 32-row grid's blocks would
   each walk enough more key tiles than the 16-row grid's that the 16-row
   tile's cheaper key tile (KG_ATTN_DEC_TILE16_COST tenths of the 32-row
   tile's) wins: the 32-row grid under-fills the GPU where the 16 keys per
   row a split must get (KG_ATTN_CHUNK_PER_ROW) cap its splits, and two
   16-row tiles a KV head double its blocks. Cost of a tile: its grid's
   waves x key tiles a split x the tile's cost; the 32-row tile on ties. */
KG_API int kg_attn_dec_tile_rows(int64_t rows, int64_t heads, int64_t keys, int bn, int64_t slots);

/* A 16-row tile's key tile against a 32-row tile's, tenths (the 16-row tile
   runs half the rows through the same keys). H200, same process, best of
   3, µs, 32 / 16-row tiles (key tiles a block): s18r2 MQA B 1 Hq 32 Sk
   32768 D 128 (8 / 8) 15.49 / 13.93, MQA B 8 Sk 8192 (8 / 16) 15.73 /
   19.28; s20r1 MQA B 1 15.36 / 14.16, MQA B 2 Sk 8192 (8 / 4) 14.07 /
   10.63, MQA B 4 (8 / 8) 14.44 / 13.24, B 2 Hq 32 Hkv 1 Sk 20000 D 64 (5 /
   5) 11.21 / 10.77, B 4 Hq 64 Hkv 2 Sk 6000 (9 / 12) 15.58 / 15.83 (7
   took 16 rows there), MQA B 8 15.64 / 19.23: 16-row tiles win at the
   same key tiles a block, lose at 12 against 9. */
#define KG_ATTN_DEC_TILE16_COST 8

/* The decode tile rule, process-wide (a test and benchmark hook): -1 the
   fewest tiles that hold the rows (the rule before session 20), 0 the
   runtime's choice (kg_attn_dec_tile_rows). */
KG_API void kg_test_attn_dec_tile(int on);

/* The split planner's fewest keys per valid packed row of a split,
   process-wide (a test and benchmark hook): > 0 that many, -1 none (only
   KG_ATTN_MIN_SPLIT_TILES tiles), 0 the runtime's (KG_ATTN_SPLIT_PER_ROW). */
KG_API void kg_test_attn_dec_chunk(int keys_per_row);

/* Partials one thread of the decode merge loads at a time (merge_row's U,
   templates/attention_decode.cuh). */
#define KG_ATTN_MERGE_LOADS 8

/* The threads that merge one (row, float4 column) of `splits` splits (the
   combine kernel's block width; the fused merge takes the same,
   attention_decode.cuh's dec_lanes): the fewest, a power of two up to 32,
   that take every split in one round of KG_ATTN_MERGE_LOADS loads each. */
KG_API int kg_attn_merge_lanes(int splits);

/* The tail merge's mergers a row tile (templates/attention_decode.cuh,
   KG_DEC_TAIL): the last K blocks of each of `tiles` row tiles to write
   their partials merge it, each a share of its passes (`items` (valid row,
   float4 column) items of `lanes` threads, 128 / lanes a pass), so no
   combine grid is launched. K: one pass each where the splits allow (at
   most `splits`), and at most (sms - 1) / tiles + 1, so that fewer than
   `sms` blocks wait at once (a merger waits only for its tile's other
   splits: some multiprocessor always runs or frees, so a waited-for block
   always gets one), at most 255; 0 where it does not apply (fewer than two
   splits). This counts on the grid reaching every multiprocessor the
   device reports: a context held to fewer (a green context, an MPS limit
   the reported count does not show) could fill all it has with waiting
   blocks; the runtime takes the tail merge by kg_attn_dec_tail_rule only. */
KG_API int kg_attn_dec_tail_mergers(int64_t tiles, int splits, int64_t items, int lanes, int64_t sms);

/* Whether a split decode call's grid of `nblocks` blocks merges in its own
   last blocks (the tail merge, kg_attn_dec_tail_mergers) instead of a
   combine grid, on `sms` multiprocessors, reading `kv_bytes` of K and V
   in `splits` splits of row tiles of `rows` valid packed rows (the first
   tile's): where the grid is one wave of one block a multiprocessor at
   most, the splits at most KG_ATTN_DEC_TAIL_SPLITS, and K and V at most
   KG_ATTN_DEC_TAIL_BYTES, or at most KG_ATTN_DEC_TAIL_BYTES_ROWS where a
   tile has at least KG_ATTN_DEC_TAIL_ROWS valid rows. The tail merge saves the
   combine launch (host time a call, H200 host, µs, two launches / one:
   s22r1 9.6-10.0 / 5.7-6.1, s22r2 6.5-7.4 / 3.8-4.2) and the grid
   hand-off, but its count of splits and wait cost device time on the
   smallest calls (CUDA graph, combine / tail: s22r2 f16 B 2 Hq 8 Hkv 1 Sk
   3652 D 128 5.98 / 6.81, bf16 B 2 Hq 30 Hkv 1 Sk 1295 6.47 / 7.23), so
   it wins there where the host bounds the call and loses ~0.3 µs where
   not. Same process, event µs, combine / tail: s22r1 (slow host) those
   two 10.09 / 7.78 and 10.03 / 8.21, f16 B 4 Hq 48 Hkv 2 Sk 1125 10.20 /
   8.50; s22r2 7.21 / 7.51, 7.61 / 7.93, 8.73 / 8.27; s22r2 seeded sweep
   2021 (24 rows, 1.4-62 MB): all 9 rows up to 16 MB faster (-0.06 to
   -1.04: f16 B 2 Hq 44 Hkv 4 Sk 5855 D 64, 12 MB, 9.45 / 8.41), larger
   rows mixed (11 faster, -0.02 to -0.67; 4 slower, +0.02 to +0.75:
   bf16 B 4 Hq 2 Hkv 2 Sk 23304 D 64, 48 MB, 15.48 / 16.23). */
#define KG_ATTN_DEC_TAIL_BYTES ((int64_t)16 << 20)
/* Above 16 MB the tail merge won where a tile has 8 valid rows or more and
   lost on half the rows with fewer (a tile's merge one pass by its last
   block): s23r2, H200, same process, 2 interleaved rounds of 3, best,
   combine / tail µs, 16-117 MB, <= 56 splits: at 8-32 rows 16 of 16 faster
   or level (MQA B 8 Sk 8192 D 128 15.99 / 15.49, f16 B 4 Hq 48 Hkv 2 Sk 9904
   D 64 11.86 / 11.32, f16 B 4 Hq 32 Hkv 4 Sk 5000 D 64 9.84 / 9.46, f16 B 4
   Hq 24 Hkv 1 Sk 47210 D 64 21.35 / 20.69, f16 B 2 Hq 224 Hkv 8 Sk 27810 D
   64 39.05 / 38.51; worst f16 B 1 Hq 56 Hkv 4 Sk 40577 D 64 14.29 /
   14.30); at 1-7 rows 5 of 11 slower (bf16 B 4 Hq 2 Hkv 2 Sk 23304 D 64
   15.36 / 16.08, B 16 Hq 4 Hkv 1 Sk 11198 D 64 14.33 / 14.99, B 2 Hq 16
   Hkv 8 Sk 6000 D 128 16.74 / 17.12), 6 faster (B 1 Hq 56 Hkv 8 Sk 29438
   D 64 21.50 / 21.17). s23r1: MQA B 8 15.83 / 15.15. s23r3, the rule in
   place: 12 of 12 rows it changes faster or level (MQA B 8 15.97 / 15.43,
   f16 B 2 Hq 64 Hkv 2 Sk 12000 D 128 14.11 / 13.64, worst f16 B 1 Hq 64
   Hkv 4 Sk 20584 D 128 16.19 / 16.11). */
#define KG_ATTN_DEC_TAIL_BYTES_ROWS ((int64_t)128 << 20)
#define KG_ATTN_DEC_TAIL_ROWS 8
/* Many splits count into one counter a row tile one atomic at a time: the
   tail merge lost where they were many (event µs, combine / tail: s22r2 f16
   B 1 Hq 21 Hkv 1 Sk 48875 D 128, 128 splits, 15.26 / 15.81; s22r3 sweep
   2020 f16 B 2 Hq 1 Hkv 1 Sk 15120 D 128, 60 splits, 9.83 / 10.03, bf16 B 1
   Hq 21 Hkv 1 Sk 38712 D 64, 101 splits, 10.95 / 11.19; MQA B 1 Sk 32768,
   64 splits, level in s22r2 and s22r3) and won up to 53 (s22r2 bf16 B 1
   Hq 24 Hkv 2 Sk 20315 D 64, 53 splits, 9.72 / 8.92). */
#define KG_ATTN_DEC_TAIL_SPLITS 56
KG_API int kg_attn_dec_tail_rule(int64_t nblocks, int64_t sms, int64_t kv_bytes, int splits, int64_t rows);

/* The combine kernel's lanes, process-wide: 1, 2, 4, .., 32 forces that
   count (a test and benchmark hook), 0 the runtime's choice
   (kg_attn_merge_lanes); the last split decode launch's lanes. */
KG_API void kg_test_attn_dec_lanes(int lanes);
KG_API int kg_test_last_attn_dec_lanes(void);

/* The decode pipeline's stages on bulk tensor copies, process-wide: 2 to
   KG_DEC_MAX_STAGES (attention_params.h) asks for that many where the
   shared memory fits (else the kernel's own), -1 the kernel's own, 0 the
   runtime's choice; the stages the last decode launch took (0: the
   kernel's own). */
KG_API void kg_test_attn_dec_stages(int stages);
KG_API int kg_test_last_attn_dec_stages(void);

/* The decode kernel's PDL trigger, process-wide: 1 after its wait for the
   previous grid (KG_DEC_LATE_PDL), -1 at its start, 0 the runtime's
   choice (after the wait, since session 17); whether the last decode
   launch took it after the wait. */
KG_API void kg_test_attn_dec_late(int on);
KG_API int kg_test_last_attn_dec_late(void);

/* The decode planner's fill of waves, process-wide: -1 off (a test and
   benchmark hook), 0 the runtime's choice; the fill percent the last decode
   launch planned with (0: none). */
KG_API void kg_test_attn_dec_fill(int on);
KG_API int kg_test_last_attn_dec_fill(void);

/* The decode call's host path, process-wide (a test and benchmark hook):
   -1 as before session 21 (q's tensor map encoded too, the kernel's shared
   memory limit set at every call, the runtime's launches), 1 k and v's
   maps only and the limit set only above the most set before on the
   device, with the runtime's launches, 0 the runtime's: that with the
   driver's launches (cuLaunchKernelEx). */
KG_API void kg_test_attn_dec_host(int on);

/* Whether the combine kernel of a split decode call lets the next grid
   launch before its wait for the decode grid of `blocks` blocks on `sms`
   multiprocessors (1: the next call's decode blocks take the idle
   multiprocessors while this call still runs, so their start overlaps it;
   the results are the same bits): where the grid leaves at least half the
   multiprocessors idle. H200, same process, best of 3, µs a call, after /
   before the wait (s21r1, s21r2): f16 B 2 Hq 8 Hkv 1 Sk 3652 D 128 (58
   blocks) 7.33 / 7.21, 7.33 / 7.10; f16 B 1 Hq 20 Sk 2795 (44) 7.52 /
   7.33, 7.58 / 7.24; bf16 B 2 Hq 30 Sk 1295 (28) 7.84 / 7.52, 7.82 /
   7.56; f16 B 4 Hq 48 Hkv 2 Sk 1125 (96) 8.14 / 8.24, 8.11 / 7.93; MQA B 1
   Sk 32768 (128) 14.00 / 15.37, 13.84 / 15.06; MQA B 8 Sk 8192 (128)
   16.31 / 17.05, 16.38 / 17.33. (In a CUDA graph the early trigger was
   faster on all six rows, 0.01-0.55 µs; the loss on full grids is in
   plain stream order only, cause not known.) */
KG_API int kg_attn_dec_comb_early(int64_t blocks, int64_t sms);

/* The decode kernels' bits, process-wide (a test and benchmark hook): 2
   the combine kernel's trigger before its wait; -1 none, 0 the runtime's
   (kg_attn_dec_comb_early); the bits the last decode launch took. */
KG_API void kg_test_attn_dec_kflags(int bits);
KG_API int kg_test_last_attn_dec_kflags(void);

/* Causal prefill on the Hopper variants: heaviest blocks first (1), the
   plain grid order (0) or the runtime's choice (-1: heaviest first at
   D >= 128); whether the last launch took the heaviest-first order. */
KG_API void kg_test_attn_order(kg_context *ctx, int on);
KG_API int kg_test_last_attn_order(const kg_context *ctx);
/* The decode launch's padding of its shared memory to one block per
   multiprocessor (compute capability 9.0 only: its 228 KB), process-wide: 1
   always where two would fit, -1 never, 0 the runtime's choice (grids of at
   most one block per multiprocessor); whether the last decode launch
   padded. */
KG_API void kg_test_attn_dec_spread(int on);
KG_API int kg_test_last_attn_dec_spread(void);

/* "pair", session 31's launch (the runtime's choice where
   kg_attn_dec_pair_rule takes it, below): two blocks a multiprocessor for
   the 64-row decode tiles (KG_ATTN_V_DECODE4, group x Sq from 33 rows) at
   head dims 64 and 128 on bulk tensor copies, compute capability 9.0.
   Those blocks run the most
   mma.sync work per byte of K and V (64 rows against each key), one warp a
   scheduler: B 8 Hq 32 Hkv 1 Sq 16 Sk 8192 D 128 ran 157 TFLOP/s (109 µs)
   against a 10 µs floor of its 34 MB of K and V (H100, s30f). Two blocks
   give each scheduler a second warp to issue while the first waits on its
   loads, shuffles and exponentials, and the planner plans for 2 x the
   multiprocessors (twice the splits, or half the waves where one split
   already fills them). At D 128 they fit only with 2 stages instead of 3.
   The dynamic shared memory one such block may take:
   half of the 228 KB, less the 1 KB the hardware reserves a block and 256
   bytes for the kernel's static shared memory (its barriers, two ints). */
#define KG_ATTN_DEC_PAIR_SMEM ((114 << 10) - 1024 - 256)

/* The dynamic shared memory a 64-row decode block (each warp 16 rows of
   its own, attention_decode.cuh's WR = 4) of `rows_tile` rows at head dim
   D (64 to 256) needs with `stages` stages of `bn`-key K and V tiles on
   bulk tensor copies: Q (rows of D + 8 elements), 1 KB of alignment, the
   stages in whole 64-element panels, and at least the warps' merge (and
   gen/attention.lua's 256 floats a row). -1 for arguments out of range
   (rows_tile 1-64, bn 1-256, stages 2 to KG_DEC_MAX_STAGES). With the
   kernel's own stages it is gen/attention.lua's size of the kernel. */
KG_API int64_t kg_attn_dec4_smem(int64_t rows_tile, int64_t D, int64_t bn, int stages);

/* The most stages, 2 to `most`, with which two such blocks fit one
   multiprocessor (kg_attn_dec4_smem at most KG_ATTN_DEC_PAIR_SMEM); 0 where
   not even 2 do. D 128 (64-key tiles): 2; D 64 (128-key tiles): 3. */
KG_API int kg_attn_dec_pair_stages(int64_t rows_tile, int64_t D, int64_t bn, int most);

/* Session 33's predicate for the pair launch (kg_attn_dec_pair_rule): the
   model's gain the pair launch must reach, percent, and the throughput of a
   multiprocessor running two such blocks, in quarters of one block's (5:
   1.25x; H100 s31r1: 1.21-1.36x on the full compute-bound grids). Fixed
   before round s34r1 (H100, 2026-12-06), which measured the rule: on the 19
   rows it took, 10 of s31r1's and 9 fresh ones, x 1.225 geomean against
   the launch without pair (worst x 1.051; the fresh rows alone x 1.213),
   the 26 rows it declined 0.996-1.006 (the same launch); forced everywhere,
   pair was x 1.086 on 38 rows, worst 0.844 (one row tile a KV head). */
#define KG_ATTN_DEC_PAIR_GAIN_PCT 110
#define KG_ATTN_DEC_PAIR_TWO_Q 5

/* Session 33's predicate: whether the pair launch should be taken where it
   applies (s31r1: it lost where each K / V tile had one row tile, and where
   its grid left many multiprocessors with one block). 1 iff all of:
   - row_tiles (the 64-row tiles of one KV head, group x Sq / 64 rounded
     up) >= 2: each K / V tile then serves two or more blocks (L2), so a
     block streams at most half of its tile's bytes from memory. With one
     row tile a block at one a multiprocessor already streams 32 KB a key
     tile every ~1.7 µs, 132 x 32 KB / 1.7 µs = 2.5 TB/s, ~83% of copy
     (s31r1 measured those rows at 76-81% of copy): a second block has no
     bytes to take, and pays the 2 stages and the larger merge;
   - def_per_sm (the blocks the default launch has resident a
     multiprocessor) is 1: where it is 2 already (D 64's 3 stages on more
     than one wave, not padded), the pair launch is the default's;
   - the pair grid (blocks x pair_splits) exceeds `sms`, and its critical
     path in key tiles, with a multiprocessor of two blocks running them at
     KG_ATTN_DEC_PAIR_TWO_Q / 4 of one block's throughput and a last wave
     of at most `sms` blocks one a multiprocessor, is at most
     100 / KG_ATTN_DEC_PAIR_GAIN_PCT of the default's (its waves of `sms`
     blocks x its key tiles a block): the gain must pay the larger partials
     and merge. A grid that leaves multiprocessors with one block (s31r1:
     B 1 Hq 16 Hkv 2 Sq 16 Sk 15951, 200 blocks: 68 with two, 64 with one)
     gains nothing on its critical path.
   blocks: the row tiles of the call (B x Hkv x row_tiles); splits / chunk
   and pair_splits / pair_chunk: kg_attn_plan_split's plans for `sms` and
   2 x `sms` slots; bn: the kernel's key tile. 0 for arguments out of range. */
KG_API int kg_attn_dec_pair_rule(int64_t row_tiles, int64_t blocks, int splits, int chunk, int pair_splits,
                                 int pair_chunk, int bn, int64_t sms, int def_per_sm);

/* The pair launch, process-wide (a test and benchmark hook): 1 forced (where
   it applies: the 64-row tiles at D 64 / 128 on bulk tensor copies,
   compute capability 9.0, and the planned grid larger than the
   multiprocessors), 2 where it applies and kg_attn_dec_pair_rule says so,
   -1 off, 0 the runtime's choice: the rule (as 2, since round s34r1);
   whether the last decode launch took it. */
KG_API void kg_test_attn_dec_pair(int on);
KG_API int kg_test_last_attn_dec_pair(void);

/* The pair mode the next decode launch takes (0 off, 1 forced, 2 the rule):
   the hook's, its 0 the rule. Internal. */
int kgi_attn_dec_pair_mode(void);

/* The K / V loads of the Hopper prefill kernels and (compute capability
   9.0, head dims 64, 96, 128, 256) the decode kernels, process-wide: -1
   cp.async copies; 0 or 1 the runtime's choice (bulk tensor copies, TMA,
   wherever the operands' tensor maps can be encoded); whether the last
   launch took bulk tensor copies. */
KG_API void kg_test_attn_tma(int on);
KG_API int kg_test_last_attn_tma(void);

/* The persistent Hopper prefill kernels' work queue (the next tile to the
   block that starts one; else every multiprocessor's block takes each
   grid-th tile), process-wide: -1 never; 0 or 1 the runtime's choice (the
   queue, wherever the stream's scratch can be had); whether the last
   prefill launch took the queue. */
KG_API void kg_test_attn_queue(int on);
KG_API int kg_test_last_attn_queue(void);

/* The persistent Hopper prefill kernels' schedule of a launch of variant
   (kg_attn_variant) over `pairs` (batch, head) pairs (B x Hq) (the
   kernel argument's xorder_pairs and late_claim, attention_params.h):
   *xorder_pairs the pairs whose tiles are ordered together heaviest first
   (sections that may span batches; 0: batch by batch, the order before
   session 30), only where causal;
   *late_claim 1 where a block takes its next work tile once the current one's
   loads are issued (0: as it starts the current one). Since session 30
   (round s30r2, NVIDIA H100) both on causal launches of the plain
   persistent variant (KG_ATTN_V_HOPPER_PERSIST; and of its twin with bulk
   tensor stores, KG_ATTN_V_HOPPER_PERSIST_TS, the D 128 causal default up
   to 2048 keys since session 32: that kernel with another epilogue) and
   off on every other
   launch (pp, base, f2; not causal). xorder and lclaim (the hooks below):
   -1 off, 0 that rule, 1 on. */
KG_API void kg_attn_persist_sched(int variant, int causal, int64_t pairs, int xorder, int lclaim, int32_t *xorder_pairs,
                                  int32_t *late_claim);

/* The persistent Hopper prefill kernels' tile order across batches
   (causal launches) and their late claim, process-wide: -1 never (the
   order and claim before session 30), 0 the runtime's rule
   (kg_attn_persist_sched), 1 on every persistent launch; whether the last
   prefill launch took it. */
KG_API void kg_test_attn_xorder(int on);
KG_API int kg_test_last_attn_xorder(void);
KG_API void kg_test_attn_lclaim(int on);
KG_API int kg_test_last_attn_lclaim(void);

/* Whether the last prefill launch stored its output by bulk tensor copies
   (the "Hopper persistent ts" variant, where the output's tensor map
   could be encoded and the loads take bulk tensor copies). */
KG_API int kg_test_last_attn_tmo(void);

#endif
