/*
 * reduce_plan.c - how a reduction call becomes one kernel launch: pure host
 * code (no device call), so every step is tested on machines without a GPU.
 *
 * kg_reduce_plan_tuned runs these steps in order:
 *   validate    arguments, axes, dtypes, the result's shape, overlap, and
 *               every tensor through the geometry layer's boundary check
 *               (runtime/geometry.h: element count and byte extent refused
 *               past 2^63 bytes, alignment, no wrap, before any other
 *               arithmetic on them; after that every product below is
 *               bounded by an extent or an element count and cannot overflow)
 *   nest        the input's dims split into kept and reduced dims, dims of
 *               size 1 dropped, each list ordered by input stride (reduced
 *               dims of index reductions keep their logical order, so an
 *               index is the position in the walk) and neighbours whose
 *               strides chain merged: innermost first, the nest of kept and
 *               reduced groups
 *   class       by what is innermost:
 *                 ROWS / PACKED  one reduced run of stride 1 (also the full
 *                                reduction of a dense tensor)
 *                 COLS           the innermost kept dim has stride 1 and is
 *                                innermost: column tiles over it, up to
 *                                KG_RED_WALK_DIMS reduced dims walked outside
 *                                (unless the columns are too few for the
 *                                reduced elements: then NEST); with the
 *                                tuning's cols_runs, also a short reduced run
 *                                innermost right under the columns (each lane
 *                                reads its column's run; elements of at most
 *                                cols_runs_es bytes; not where NEST moves the
 *                                run in vectors, cols_runs_nest_vec); runs
 *                                that divide a 16-byte vector under columns
 *                                of whole vectors in vectors, each run folded
 *                                at the end (cols_runs_vec, value reductions;
 *                                before TILE, tile_vec)
 *                 NEST           up to KG_RED_WALK_DIMS reduced dims, the
 *                                innermost of them innermost (in vectors where
 *                                the inner run is contiguous and aligned);
 *                                short reductions over many outputs take one
 *                                lane per output and 4 outputs per lane
 *                                (nest_multi), and so do short contiguous
 *                                rows (rows_multi) and narrow column tiles
 *                                over contiguous outputs (cols_min_cols)
 *                 STRIDED32/64   anything else (more reduced groups than a
 *                                walk holds)
 *   split       lanes per output, or whole blocks per output split across
 *               blocks (combined by the last block, deterministically) when
 *               there are too few outputs to fill the GPU
 *   grid        blocks, capped at a few per multiprocessor (grid-stride loops)
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kg_red_table.h"
#include "geometry.h"
#include "reduce_plan.h"

/* Blocks per multiprocessor the plans aim for (two waves of four). */
enum { BLOCKS_PER_SM = 8, MAX_SPLITS = 8192 };

/* Measured on an H200 (bench_reduce's sweep, KG_RED_SWEEP=1):
   - columns: with the tiles alone filling the GPU, 128 or 256 lanes across
     columns (one or two down each) ran [64,4194304] dim 0 at 103% of copy,
     32 lanes at 101%; with too few tiles, so that the reduced dim is split
     across blocks, 64 lanes and a power-of-two split count near 8 units per
     multiprocessor ran [16384,16384] dim 0 at 106% (32 lanes and 17 splits:
     103%; more splits were slower, up to 8%, whole waves of resident blocks
     did not help);
   - packed short rows: 101% (sum) and 99% (argmax) of copy on
     [4194304,64] dim 1 with one block per resident slot, 100% and 97% with
     16 blocks per multiprocessor; lane groups of 1, 2 or 4 per row: 64-88%.
   Any axes (bench_reduce's sweep with KG_RED_ALTS, H200, 2026-12-01 15:52,
   87 cases of 2^24..2^27 elements, each variant timed on every case):
   - narrow walks: nest plans gained on every case they changed (e.g. 25 ->
     40%, 12 -> 21%, 19 -> 28% of copy); column plans gained on 2-byte
     elements (16 -> 23%, 20 -> 28%, 22 -> 31%) and lost on 4-byte ones
     (39 -> 31%, 31 -> 25%, 14 -> 10%): deep_walk 1 takes nests and 2-byte
     columns;
   - column runs: 9 -> 27%, 11 -> 21%, 12 -> 31%, 23 -> 34%, one loss 34 ->
     23% (runs of 24 bf16);
   - tiles: rows of 2 to 7 elements of at most 14 bytes gained (22 -> 72%,
     19 -> 30%, 12 -> 29%); rows of 11 to 96 elements lost (73 -> 35%, 31 ->
     21%, 34 -> 16%): at most 16-byte rows;
   - vector column splits: 2 units per multiprocessor instead of 8 gained on
     every vector case (11 -> 21%, 15 -> 18%, 18.5 -> 21% where 8 gave 512 to
     1024 splits; 96.5 -> 98.9% at 4 splits) and lost on narrow ones: taken
     where 8 would split more than 64 ways (the headline [16384,16384] dim 0,
     16 splits, keeps its measured plan).
   Evening of 2026-12-01 (two runs, each variant timed beside the default
   on every sweep case it changes; 60 and 188 cases):
   - column modes: several 4-byte columns per lane, cw apart, won almost
     everywhere (25 -> 57%, 32 -> 79%, 44 -> 83%, 37 -> 79% of copy) but
     lost with 2 columns (25.7 -> 22.6%, 13.5 -> 10.3%: one per lane
     there); 16-byte vectors of 2-byte columns won everywhere (23 -> 34%,
     21 -> 32%, 26 -> 39%);
   - ROWS / NEST / STRIDED splits of one wave of resident blocks won on
     every case they changed ([2048,16384] all 67.5 -> 84.3%, [65537,256]
     all 60 -> 66%, [43691,384] dim 0 53 -> 75%);
   - 4 column split units per multiprocessor instead of 8: median 56.4%
     against 53.0% over 37 changed cases ([16384,16384] dim 0 101.2%
     against 99.3%);
   - narrower column tiles where one tile idles lanes (cols_fit) lost where
     they took 8 lanes (38 -> 18%, 31 -> 17%) and gained a little at 16:
     off; tiles of rows up to 64 or 256 bytes lost to the lane groups and
     column runs on all 13 cases (31 -> 21%, 72 -> 39%): 16 bytes kept;
     bank-friendly tile lanes won the one case they changed (24.5 ->
     27.9%).
   Round 2 of 2026-12-01 (run r6, H200, copy 4226 GB/s, all 240 sweep
   cases): 2-byte vectors kept as 32-bit words until a batch's 8 loads are
   issued (cols_words, nest_words; before, each 16-byte bf16 load was split
   into 16-bit registers at once and ptxas made the next load wait for it)
   won on all 17 cases they changed, 1.13x to 2.00x ([256,524288] dim 0
   bf16 43.3 -> 83.1%, [349526,384] dim 0 31.9 -> 63.8%, [100,63,168,127]
   (0,2,3) nest 45.5 -> 88.0%, [67,31,128,255] dim 0 34.0 -> 55.1%).
   Session 5 (run r4, H200, copy 4185 GB/s, all 240 sweep cases, the
   candidate as the base line and 9 variants beside it, every changed case
   verified): NEST lanes of 4 outputs each (nest_multi, kg_red_nest_multi),
   for short reductions over many outputs (one lane per output kept 1-2
   loads in flight: a memory latency per output), taken where the outputs
   give each multiprocessor 256 such lanes (nest_multi_lanes; 2048 and 1024
   lost the cases they dropped: #11 29.5 -> 14.5%, #48 73.7 -> 37.4%; 256
   won the two it added, #62 49.6 -> 66.0%, #111 12.0 -> 24.7%), for up to
   1024 positions where the outputs are contiguous (nest_g1_items; 64 lost
   #133 85.6 -> 32.1%), narrow column tiles under 256 columns with such
   outputs that move in no vector (cols_min_cols; without: #24 61.6 ->
   19.1%, #100 66.4 -> 31.3%, #133 85.6 -> 32.1%; a 2-byte vector tile lost
   68.9 -> 35.5%), contiguous rows of at most 16 elements (rows_multi; 64
   lost rows of 63: 57.9 -> 15.2%). Against the old plans on the 16
   cases changed: [87,31,256,3,33,2] (1,3) f32 32.1 -> 85.6%, [63,34,1000,
   8,2]p (1) i32 19.1 -> 61.6%, [96,500,9,2,78]p (0) i32 37.3 -> 73.7%,
   [2048,8,128,2,2,2]p (1,4) bf16 14.6 -> 29.5%, [511,11,24,32,2,2]p (3)
   bf16 15.1 -> 32.4%, [9,15,1023,2,61] (3) bf16 8.5 -> 16.6%, [3728271,9]
   (1) f32 58.7 -> 73.6%, [6710887,5]p (1) f32 46.6 -> 66.6%; level on
   [5,63,512,105]p (0) i32 28.1 -> 27.4%. Wider rules (1024 columns, 4096
   positions, rows of 256) lost 4 cases (#176 68.9 -> 35.5%).
   Session 6 (run r1, H200, 2026-12-02, all 240 sweep cases, PyTorch in the
   same script): the COLS and NEST kernels take 117-128 registers (one
   function for every column mode, 64-bit walks) under their (256, 2)
   launch bound: 2 blocks of 256 per multiprocessor. The same code at 4
   blocks (4 loads in flight per lane, 32-bit walks where they fit; 64
   registers, 8 bytes of spill for sum f32) on every value COLS and NEST
   plan: >= 90% of copy 42 cases (32), median 66.1% (65.2%), 40 slower
   than PyTorch (46), median 1.84x (1.75x); nests gained on every case but
   one (-1.2 points; #96 72.1 -> 90.7%, #116 80.0 -> 95.3%, #103 77.4 ->
   92.5%, #137 52.9 -> 70.7%), columns up to +20 points (#165 65.9 ->
   86.2%, #200 42.1 -> 56.1%, #4 54.4 -> 67.2%, #160 39.9 -> 51.8%, #9 82.0
   -> 90.7%) and lost where the grid held at most 2 blocks per
   multiprocessor (column splits of 32 to 256 in 160 to 256 blocks: #49
   79.0 -> 72.1%, #231 89.7 -> 79.9%) and on some 4-byte strided columns
   (#229 82.3 -> 64.6%): cols_occ takes grids of more than 2 blocks per
   multiprocessor (cols_occ_blocks; that rule over the run's figures:
   median 66.5%, 39 slower than PyTorch). 3 blocks with 8 loads (COLSP, 80
   registers, 48 bytes of spill) was between the two (median 65.5%); twice
   the column splits beside the 4-block kernel won where splits were many
   (#49 72.1 -> 88.7%) and lost elsewhere (#112 29.5 -> 21.2%).
   Run r2 (all 240 cases, that rule compiled in): the narrow walks at 4
   blocks with 8 loads (narrow_occ: COLSNO, NESTNO; were 3 blocks with 16)
   gained up to 6.8 points on 52 cases (#67 67.3 -> 74.1%, #174 32.5 ->
   38.6%, #56 19.5 -> 25.2%, #101 44.6 -> 50.3%), were level on 4 bf16
   nests (within 1 point) and lost on NEST lanes of 4 outputs (#62 66.4 ->
   54.7%, #100 66.8 -> 57.2%, #48 70.3 -> 60.8%), which keep theirs; i32
   strided columns (8-byte accumulators, 48 bytes of spill at 64
   registers) lost on the 4-block kernel (#229 82.2 -> 68.7%, #185 56.9 ->
   49.9%, net -17.6 points over 9 cases; every other dtype and mode
   gained): cols_occ_wide off. The default of r1 + r2 (each plan timed
   in r2): worst 7.5%, 10th percentile 29.6%, median 67.0%, 90th
   percentile 94.2% of copy, 42 cases >= 90% (the old default in r2: 7.5,
   29.0, 65.6, 93.1%, 32); against PyTorch median 1.90x (1.80x), worst
   0.60x (0.50x), 25 of 240 slower (39). Run r3 timed this default itself:
   worst 7.5%, 10th percentile 29.1%, median 67.3%, 90th percentile 93.9%,
   41 cases >= 90%; PyTorch median 1.85x, worst 0.58x, 35 slower (kgen's
   figures as in r2, median ratio 1.002; PyTorch's 3.1% faster).
   Session 7 (run r3, H200, 2026-12-02 05:49-05:54, copy 4185 GB/s, all 240
   sweep cases, PyTorch in the same script): a column mode of 32 bytes per
   lane and row (two 16-byte vectors of adjacent columns, one lane down each
   column, for tiles of at most 32 rows; ptxas: 128 registers without spill
   only in the 2-block kernel, 60-208 bytes of spill at 4 or 3 blocks, so it
   ran in the 2-block kernel) lost on every case it took: [2048,3,4096]
   axis 1 f32 46.2% of copy (this default, 4 blocks, 16 bytes a lane:
   60.0%; 16 bytes a lane in the 2-block kernel: 48.1%), [7,1048576] axis 0
   47.7% (72.7%; 61.2%), [9,15,122,255,16] axis 0 bf16 36.7% (59.3%;
   51.3%), [64,4194304] axis 0 with the rows limit lifted 101.0% (102.6%).
   The 2-block kernel in place of the 4-block one (cols_occ 0) lost on all
   51 sweep plans it changed, by 0.1 to 22 points (#165 89.9 -> 67.9%, #27
   83.9 -> 66.0%, #202 56.6 -> 44.4%). Few-row column tiles are held back
   by warps per multiprocessor, not by bytes in flight per lane: the mode
   was not kept. This default in that run:
   worst 7.4%, 10th percentile 30.1%, median 68.5%, 90th percentile 97.3%
   of copy, 49 cases >= 90%; against PyTorch median 1.87x, worst 0.59x, 29
   of 240 slower.
   Session 8 (run r1, H200, 2026-12-02 09:02-09:07, all 240 sweep cases,
   PyTorch in the same script): NEST over runs that cannot move in whole
   vectors in covering 16-byte vectors (nest_cover, kernel NESTO) took 25
   sweep cases, all R-inner nests that were narrow walks (one element per
   load), and won on every one against the narrow walk in the same run, by
   6.7 to 39.0 points (#211 f32 runs of 66: 34.8 -> 73.8%, #150 f32 runs of
   511: 53.2 -> 84.0%, #53 f32 runs of 127: 58.2 -> 88.6%, #239 i32: 55.0 ->
   81.7%; bf16 least: #205 runs of 43: 21.0 -> 27.7%, #38 runs of 500: 25.2
   -> 36.1%): nest_cover on. This default in that run: worst 7.4%, 10th
   percentile 32.1%, median 69.5%, 90th percentile 94.1% of copy; against
   PyTorch median 1.83x, worst 0.58x, 28 of 240 slower (the final run of
   session 7: 34). Run r2 (09:19-09:22) again: the previous walk lost on
   all 25 (-6.9 to -38.7 points); covering vectors in the 2-block kernel
   (nest_cover_occ 0, 8 loads in flight, no spill) lost on 20 of 25 (up to
   -15.0: #206 bf16 48.2 -> 33.2%, #211 73.6 -> 60.2%) and won at most 2.2
   points on 5 split plans (noise); over short rows (nest_cover_rows, the
   lanes of 4 outputs' cases) -7.3 to -19.3 points on all 3 ([6710887,5]
   66.7 -> 47.4%); FLAT over slabs of 512, 256 or 64 elements
   (flat_min_outer) -5 to -23 points on all 2, 4, 5 it took. This default
   in r2: worst 7.5%, 10th percentile 29.8%, median 68.6%, 90th percentile
   94.1% of copy, 40 cases >= 90%; against PyTorch median 1.86x, worst
   0.58x, 27 of 240 slower. Run r4 (09:42-09:43): vectors wholly inside
   their run pushed without a test per element (nest_cover_whole, same
   bits) won on the long runs of 4-byte elements (#166 i32 runs of 24570:
   71.4 -> 81.8%, #239 runs of 5481: 77.9 -> 86.4%, #150 f32 runs of 511:
   78.3 -> 83.3%, #82 +3.6, #139 runs of 510 +1.7) and lost on short ones
   (i32 runs of 17-122: -4.2 to -7.3 points; f32 runs of 65 and 127: -0.9,
   -1.3) and on every bf16 run but one (-0.8 to -1.7, 500-1023 elements):
   on where a run holds 1 KiB or more of 4-byte or wider elements.
   Session 9 (H200, 2026-12-02 13:11, all 240 sweep cases, copy 4217 GB/s,
   PyTorch in the same script): column splits were a power of two near 4
   units per multiprocessor (2 for vectors split more than 64 ways), so few
   tiles over a long reduction ran 160-256 blocks in the 2-block kernel
   (grid <= 2 per SM). Splits that fill one wave of the kernel's resident
   blocks (cols_split_fill; the 4-block kernel then takes them) alone: net
   -59 points over 46 cases (capped at 16 x lanes-down splits, single tiles
   fell to 64-128 units: #98 57.8 -> 19.8%); with 16-lane split tiles
   (cols_split_lanes 16) +168 over 64 cases (#145 55.2 -> 86.6%, #39 64.9 ->
   86.1%, #162 28.2 -> 48.5%, #112 27.2 -> 43.6%, #98 57.8 -> 73.2%, #208
   59.7 -> 75.3%), but 16 split lanes also re-tiled unsplit plans (#160 54.2
   -> 22.5%, #58 94.2 -> 80.7%). The default takes the fill, and 16-lane
   tiles only where the fill would cut more than 8 x lanes-down splits
   (cols_split_few): each of its 44 changed plans but 3 was timed in that
   run; composed, median 68.9 -> 69.9%, 10th percentile 30.7 -> 33.0%, 42 ->
   45 cases >= 90%, 26 -> 23 slower than PyTorch. Column kernels over a walk
   of one dim without the walk's digits lost everywhere: 8 loads in flight
   at 4 blocks per SM net -788 points over 55 cases (3 wins), 4 loads at 6
   blocks -1242 (1 win); dropped.
   Session 10 (run r1, H200, 2026-12-02 15:15-15:19, all 240 sweep cases,
   PyTorch in the same script): FLAT with a warp per unit (flat_warp, kernel
   FLATW, slabs of rows x columns only in that run) on slabs of 256 to 16384
   elements under at least 24 outer positions per multiprocessor won all 4
   cases it took: #111 K2 R512 f32 24.6 -> 86.1% of copy (PyTorch 41.6%),
   #23 i32 19.6 -> 67.3%, #32 K80 R64 44.3 -> 56.7%, #130 K64 R255 86.9 ->
   100.8%; down to 8 outer positions per multiprocessor and up to 131072
   elements it also took #221 (17664 elements, 85.0 -> 89.2%) and lost #219
   (63488 elements, 97.4 -> 92.8%) and #175 (slabs of 32 elements: 47.0 ->
   4.8%, a fold per 8 vectors): slabs of 256 to 32768 elements. Column
   splits that fill 3 or 4 waves where one wave leaves the tiles unsplit
   (a trailing partial wave, #71: 656 tiles) lost on 13 of 17 cases (#71
   43.5 -> 35.1%, #201 91.1 -> 82.2%, #226 94.8 -> 83.5%; won #44 76.2 ->
   81.8%, #148 48.7 -> 51.7%): not kept. Tiles of any size (tile_min_elems
   1) lost all 7 (#152 11.7 -> 0.1%).
   Run r2 (15:36, copy 4218 GB/s): FLATW over runs under the columns and
   strided blocks (flat_warp 2) won #152 R2 K2 R16 | R29 bf16 11.6 -> 35.7%
   (PyTorch 18.2%), #173 R2 K8 R384 f32 44.4 -> 90.9%, #200 R2 K2 R4560
   55.5 -> 87.1% and lost #124 (runs of 23 f32, 92 bytes: 57.2 -> 43.0%, the
   nest's covering vectors): runs within 16 bytes (flat_warp_run). Its one
   load loop for slabs and blocks lost on the slabs against r1's (#111 86.1
   -> 76.7%; #221 bf16 at flat_warp_max 65536 45.4% against r1's 89.2%):
   the slab loop is r1's again, the blocks' a separate instantiation.
   Run r3 (15:48, copy 4190 GB/s), this kernel and default beside the old
   plans in the same run: #111 24.7 -> 82.3%, #152 11.6 -> 43.6%, #23 19.3
   -> 63.3%, #32 44.2 -> 55.3%, #130 86.5 -> 100.0%, #173 44.8 -> 91.8%,
   #200 56.1 -> 91.0% of copy; #124 stays NEST (57.8%).
   Session 12 (H200, runs r1a 00:17 and r1 00:42 of 2026-12-03, all 240
   sweep cases, each tuning beside the default in the same process): the
   column run path off (cols_runs 0) won all 5 sweep cases of 4-byte
   elements it changed (r1a: #182 i32 runs of 16 43.1 -> 78.3%, #148 48.5 ->
   57.9%, #203 33.2 -> 42.1%, #72 f32 39.7 -> 46.8%, #33 43.7 -> 44.6%: NEST
   takes them) and lost 6 of the 7 of 2-byte elements (#65 bf16 28.1 ->
   17.8%, #89 42.2 -> 30.7%, #2 30.6 -> 21.4%): runs only over elements of at
   most 2 bytes (cols_runs_es). Run r2 (01:05) again: #182 41.8 -> 80.4%,
   #148 49.0 -> 58.2%, #72 39.2 -> 47.3%, #203 33.2 -> 40.2%, #33 43.0 ->
   44.8%; 2-byte runs lost without (#65 28.1 -> 17.6%) but for #56 (bf16
   runs of 24, 48 bytes: 25.4 -> 61.3%, 25.3 -> 62.6% in r1a). Split tiles
   of 16, 32, 128 or 256 lanes (cols_split_lanes), 32- or 128-lane tiles
   (cols_lanes), COLSP (cols_occ 3), grids of 8 or 32 blocks per
   multiprocessor, cols_split_few 0, 8 or 32, cols_split_fill 2 and
   split_waves 2 each lost net in every run that timed them (r1, 256-lane
   split tiles: #160 [256,65536] axis 0 bf16 53.7 -> 72.4% but #229 84.2 ->
   62.3%, #92 67.9 -> 51.7%).
   Session 14 (run s14r1, H200, 2026-12-03 08:05, all 240 sweep cases, each
   tuning beside the default in the same process; us, the NEST plan / the
   candidate): SLAB (a cp.async ring, 2 tiles of 8 KiB in flight) won on
   2-byte elements in slabs of at most 8 rows (#127 bf16 8 x 63 68.4 / 46.8,
   #190 2 x 61 72.3 / 34.1, #11 8 x 256 29.4 / 22.1) and lost on 32 rows
   (#174 bf16 26.3 / 30.6) and on 4-byte elements (#175 f32 16 x 2 297.6 /
   354.7, #133 3 x 66 155.8 / 204.3, #100 i32 49.0 / 69.8; level on #144
   76.5 / 73.7, #62 99.1 / 101.0): slab_es 2, slab_max_rows 8; the tiles
   through registers lost to the ring on every 2-byte case (#127 65.7, #190
   45.4) and 4 KiB tiles on all 9 (#133 355.8). TRANS (its cases in a second
   process) won where an output reduces 5 elements (#77 bf16 1017.8 / 249.7,
   #144 i32 77.3 / 37.4) and lost at 96 and 104 (#48 93.1 / 105.0, #100 at
   trans_min_side 8 48.5 / 113.2): trans_max_red 16; 2 or 8 walk positions a
   batch lost to 4 (#77 262.0, 269.7 against 249.7; #144 39.5, 44.6 against
   37.4).
   Session 15 (run s15r2, H200, 2026-12-03 12:57, all 240 sweep cases, each
   tuning beside the default in the same process; us, FLATW / FLATWO): every
   FLATW grid holds at least 3 blocks per multiprocessor (flat_warp_units),
   what FLATW keeps resident: #32's 413 blocks ran 1.04 waves (ncu, s15r1).
   FLATW at 4 blocks (FLATWO, 64 registers) won all 7 FLATW cases: #32 f32
   K80 R64 30.4 / 22.6 (53.9 -> 72.5% of copy; PyTorch 0.91x in s15r1),
   #111 94.1 / 80.0, #130 130.8 / 126.9, #152 bf16 19.1 / 16.9, #23 i32
   49.1 / 46.5, #200 80.7 / 72.1, #173 77.2 / 71.5: flat_warp_occ 4. All 32
   lanes where a period takes 20 (#32: 5 accumulator sets a lane) won
   against FLATW (27.2) and lost with FLATWO (24.5): not kept.
   Session 17 (run s17r1, H200, 2026-12-03 18:45, copy 4226 GB/s, all 240
   sweep cases, tile 0 beside the default in the same process; us, TILE /
   the plan without it): the two bf16 tile plans lost to theirs, #8
   [22369622,3] axis 1 (rows of 3) 157.5 / 133.5 (NEST lanes of 4 rows),
   #54 [33,3,3075,63,7] (0,4) (runs of 7 under a walk of 33) 219.8 / 146.7
   (narrow columns over runs): tiles only over elements of 4 bytes or
   more (tile_min_es). Over 4-byte elements tiles won #25 i32 48.4 /
   101.0, #223 f32 93.2 / 211.6, #237 f32 84.4 / 104.7 and lost #120 f32
   120.9 / 89.2, #194 i32 94.8 / 65.5 (#91 level, 41.3 / 40.9): kept.
   Session 18 (run s18r2, H200, 2026-12-03 23:42, all 240 sweep cases,
   same process, us, FLAT / FLAT in 32-bit words): flat_words won all 8
   bf16 FLAT cases: #45 32.0 / 30.3, #63 13.6 / 13.2, #73 28.7 / 27.0, #114
   44.3 / 41.4, #115 118.2 / 115.5, #136 21.6 / 21.0, #140 25.4 / 24.0,
   #221 84.5 / 78.8.
   Session 20 (run s20r1, H200, 2026-12-04 10:52, copy 4176 GB/s, the 9
   sweep cases the candidates change, two processes, each beside main's
   plan in the same process; us, main / candidate, second process in
   brackets): short runs under the columns in vectors (cols_runs_vec,
   templates/reduce_cols_runs.cuh) with no TILE where they apply
   (tile_vec) won all 6 plans they changed: #194 i32 TILE 94.9 / 28.9
   (96.1 / 29.8; 17.1 -> 56.0% of copy, the sweep's worst case), #223 f32
   TILE 93.3 / 75.0 (94.8 / 74.8), #120 f32 TILE 123.2 / 88.1 (122.7 /
   88.1), #25 i32 TILE 49.2 / 45.2 (49.5 / 45.7), #214 bf16 narrow column
   runs 104.7 / 45.3 (104.9 / 45.5), #72 f32 NEST 36.6 / 30.5 (37.0 /
   29.7); no scalar column run where NEST moves the run in vectors
   (cols_runs_nest_vec) won the one it changed, #56 bf16 runs of 24 33.0 /
   14.2 (33.1 / 14.0; 25.6 -> 59.7%). Index reductions keep their plans
   (the run kernel is for values). Run s20r2 (11:21, all 240 sweep cases at
   that default, same process): main's rules / the new default (run fold
   in colso) / the fold in colsp (3 blocks, 80 registers): #194 94.9 /
   30.1 / 27.2, #120 121.9 / 87.3 / 76.7, #72 36.5 / 29.6 / 28.4, #214
   104.8 / 45.6 / 44.7, #25 49.7 / 45.5 / 45.3, #223 93.4 / 74.7 / 75.4;
   #56 33.4 / 13.7: the fold runs in colsp (the colso kernel stays main's).
   The sweep at that default: worst 20.7% of copy (#159 bf16 narrow
   columns of 2), median 72.3, 53 at 90 or more.
   Session 23 (run s23r1, H200, 2026-12-04 20:40, copy 4198 GB/s, the sweep
   cases the rules change in two processes, each beside main's plan; us,
   main / new): flatw_kept #175 f32 298.8 / 140.4 (46.6 -> 99.2% of copy);
   cols_runs_fold #159 bf16 41.2 / 18.5 (20.7 -> 46.1%), #86 i32 44.0 /
   28.6, #44 f32 170.7 / 134.6, and #132 i32 (a kept dim of 64, 256 bytes)
   73.3 / 111.1: the fold only under kept dims narrower than a vector. The
   sweep (r1, all 240, PyTorch in the same script): worst 25.2% (#10 bf16),
   median 73.5, 54 at 90 or more; kgen / PyTorch worst 0.86x (#160),
   median 2.48x, 7 below. */
const kg_red_tuning kg_red_tuning_default = {
    .cols_lanes = KG_RED_THREADS,
    .cols_split_lanes = 64,
    .cols_split_units_per_sm = BLOCKS_PER_SM / 2,
    .cols_split_units_per_sm_vec = 2,
    .cols_split_pow2 = 1,
    .pack_rows = 1,
    .packed_blocks_per_sm = KG_RED_MIN_BLOCKS,
    .rows_group = 0,
    .blocks_per_sm = 2 * BLOCKS_PER_SM,
    .splits = 0,
    .cols_runs = 1,
    .deep_walk = 1,
    .tile = 1,
    .tile_max_bytes = 16,
    .tile_min_elems = 1024,
    .tile_min_es = 4,
    .cols_wide = 1,
    .cols_strided = 1,
    .split_waves = 1,
    .tile_banks = 1,
    .cols_fit = 0,
    .flat = 1,
    .flat_units_per_sm = KG_RED_WALK_MIN_BLOCKS,
    .flat_partials = 8192,
    .flat_min_elems = 32768,
    .flat_min_outer = 2048,
    .flat_min_pct = 100,
    .flat_min_pct2 = 25,
    .flat_words = 1,
    .flat_fill = 75,       /* s35r3 (H100): 4 rows geomean x1.131, min x1.028 (#136), #331 x1.199, #115 x1.108 */
    .flat_fill_to = 100,
    .cols_words = 1,
    .nest_words = 1,
    .nest_multi = 4,
    .nest_multi_lanes = 256,
    .nest_g1_items = 1024,
    .cols_min_cols = 256,
    .rows_multi = 16,
    .cols_occ = 4,
    .cols_occ_blocks = KG_RED_WALK_MIN_BLOCKS,
    .cols_occ_wide = 0,
    .nest_occ = 4,
    .narrow_occ = 4,
    .nest_cover = 1,
    .nest_cover_min = 0,
    .nest_cover_rows = 0,
    .nest_cover_whole = 1,
    .nest_cover_whole_bytes = 1024,
    .nest_cover_whole_es = 4,
    .nest_cover_occ = 1,
    .cols_split_fill = 1,
    .cols_split_few = 16,
    .cols_runs_fill_grid = 0,
    .flat_warp = 2,
    .flat_warp_min = 256,
    .flat_warp_max = 32768,
    .flat_warp_units = 24,
    .flat_warp_run = 16,
    .flat_warp_occ = 4,
    .cols_runs_es = 2,
    .slab = 1,
    .slab_max_cols = 256,
    .slab_min_units = 4,
    .slab_es = 2,
    .slab_max_rows = 8,
    .slab_bytes = KG_RED_SLAB_BYTES,
    .trans = 1,
    .trans_min_units = 4,
    .trans_min_side = 16,
    .trans_max_red = 16,
    .trans_run = 8,
    .trans_ko2 = 16,
    .trans_min_util = 70,
    /* rounds s42r3 / s42r4 (H100): 1024 over 256 x2.077 (21 rows, min x1.242),
       2048 over 1024 x1.219 (100 rows, min x0.963) */
    .rows_block_min = 2048,
    .slab_max_walk = 128,
    /* SLAB only over tiles of at least 1024 elements: session 46's round
       (H100) timed all 59 draws of the 100000-case sweep whose SLAB tiles
       were smaller (0.2-30.8% of copy; a block's 256 lanes served as few as
       8 elements a tile): geomean x8.11 over the plans that replace them,
       min x0.679, 2 under x0.95, worst 0.2 -> 5.5% of copy (replicated on
       the final build: x8.18, min x0.681) */
    .slab_min_tile = 1024,
    .cols_vstore = 1,
    .cols_pair = 1,
    .cols_pair_rows = 32,
    .cols_runs_nest_vec = 1,
    .cols_runs_vec = 1,
    .tile_vec = 1,
    .cols_chain = 1024,
    .cols_chain_red = 128,
    .nest_multi_plain = 2,
    .cols_runs_plain = 1,
    .cols_runs_kept = 1,
    .flatw_kept = 1,
    .cols_runs_fold = 1,
    .run_tiles = 1,
    .run_tiles_vb = 16,
    .run_tiles_vb_min = 4,
    .run_tiles_units = 2 * KG_RED_RUNT_MIN_BLOCKS,
    .seg_rows = 1,
    .run_tiles_cap = 8, /* s28r1 (H100): sweep #2 0.890, #65 0.868, #180 0.976 x uncapped */
    .run_tiles_cap_units = KG_RED_RUNT_MIN_BLOCKS,
    .rows_stripes = 1, /* s30r1 (H100): sum 2^28 f32 x1.066, i32 x1.075, prod x1.061; 21 rows geomean 1.043, min 0.992 */
    .cols_strided_occ = 4, /* s34r1 (H100): 27 rows geomean x1.047, #71 x1.087, worst #738 x0.985 */
    .trans_vec = 128,      /* s35r2 (H100): 9 rows geomean x1.367, min x1.170 (t4), #77 x1.537 (267.5 -> 174.0 us) */
    .trans_vec_f16 = 128,  /* s35r4 (H100): f16 t0-t6 7 rows geomean x1.292, min x1.171 (t4); 0: TRANS's own kernel */
    /* flatw_ragged in place of COLS plans reading one column a lane: round
       s37r3 (H100), 297 fresh rows of a 300000-case draw (cases 100000 and
       up), geomean x2.107, min x1.222, worst 6.6 -> 26.1% of copy (s37r1 /
       s37r2 chose the rule: 71 + 104 rows, the losers outside it) */
    .flatw_ragged = 8,
    .flatw_ragged_v = 1,
    .flatw_ragged_min = 1024,
    .flatw_ragged_late = 1,
    .flatw_ragged_2 = 11,
    /* TRANS in place of COLS where outputs reduce at most 6 elements: rounds
       s37r3 / s37r4 (H100) chose the bound (TRANS ahead of COLS lost x0.82-0.90
       on 2-byte outputs of 7-11 elements); round s37r5 on fresh cases: README */
    .trans_first = 6,
};

int kg_red_tuning_parse(const char *text, kg_red_tuning *t)
{
/* clang-format off */
#define F(x) {#x, offsetof(kg_red_tuning, x)}
    static const struct {
        const char *name;
        size_t at;
    } fields[] = {F(cols_lanes), F(cols_split_lanes), F(cols_split_units_per_sm), F(cols_split_units_per_sm_vec),
                  F(cols_split_pow2), F(pack_rows), F(packed_blocks_per_sm), F(rows_group), F(blocks_per_sm),
                  F(splits), F(cols_runs), F(deep_walk), F(tile), F(tile_max_bytes), F(tile_min_elems), F(tile_min_es),
                  F(cols_wide), F(cols_strided), F(split_waves), F(tile_banks), F(cols_fit), F(flat),
                  F(flat_units_per_sm), F(flat_partials), F(flat_min_elems), F(flat_min_outer), F(flat_min_pct),
                  F(flat_min_pct2), F(flat_words), F(flat_fill), F(flat_fill_to),
                  F(cols_words), F(nest_words), F(nest_multi), F(nest_multi_lanes), F(nest_g1_items),
                  F(cols_min_cols), F(rows_multi), F(cols_occ), F(cols_occ_blocks), F(cols_occ_wide), F(nest_occ),
                  F(narrow_occ), F(nest_cover), F(nest_cover_min),
                  F(nest_cover_rows), F(nest_cover_whole),
                  F(nest_cover_whole_bytes), F(nest_cover_whole_es), F(nest_cover_occ),
                  F(cols_split_fill), F(cols_split_few), F(cols_runs_fill_grid), F(flat_warp), F(flat_warp_min),
                  F(flat_warp_max), F(flat_warp_units), F(flat_warp_run), F(flat_warp_occ), F(cols_runs_es),
                  F(slab), F(slab_max_cols),
                  F(slab_min_units), F(slab_bytes), F(slab_es), F(slab_max_rows),
                  F(trans), F(trans_min_units), F(trans_min_side), F(trans_max_red), F(cols_vstore), F(cols_pair),
                  F(cols_pair_rows), F(cols_runs_nest_vec), F(cols_runs_vec), F(tile_vec), F(cols_chain), F(cols_chain_red),
                  F(nest_multi_plain), F(cols_runs_plain),
                  F(cols_runs_kept), F(flatw_kept),
                  F(cols_runs_fold), F(run_tiles), F(run_tiles_vb), F(run_tiles_vb_min), F(run_tiles_units),
                  F(seg_rows), F(run_tiles_cap), F(run_tiles_cap_units), F(rows_stripes),
                  F(cols_strided_occ), F(trans_vec), F(trans_vec_f16), F(flatw_ragged),
                  F(flatw_ragged_v), F(flatw_ragged_min), F(flatw_ragged_late), F(flatw_ragged_2), F(trans_first),
                  F(slab_max_walk), F(trans_run), F(trans_ko2), F(trans_min_util), F(rows_block_min),
                  F(flat_max_cw), F(slab_min_tile), F(slab_late_rows)};
#undef F
    /* clang-format on */
    const char *p = text;
    while (p && *p) {
        const char *eq = strchr(p, '=');
        if (!eq)
            return -1;
        size_t i = 0, n = sizeof fields / sizeof fields[0];
        for (; i < n; i++)
            if (strlen(fields[i].name) == (size_t)(eq - p) && !strncmp(fields[i].name, p, (size_t)(eq - p)))
                break;
        if (i == n)
            return -1;
        char *end;
        const long v = strtol(eq + 1, &end, 10);
        if (end == eq + 1 || (*end && *end != ',') || v < INT32_MIN / 2 || v > INT32_MAX / 2)
            return -1;
        *(int *)((char *)t + fields[i].at) = (int)v;
        p = *end ? end + 1 : end;
    }
    return 0;
}

typedef struct dim {
    int64_t size, in, out, idx;
} dim;

/* ---- arithmetic that cannot overflow ------------------------------------ */

/* ceil(a / b) for a >= 0, b > 0, without forming a + b - 1. */
static int64_t cdiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* a * b for a, b >= 0, saturating at INT64_MAX. */
static int64_t smul(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t pow2_floor(int64_t x)
{
    int64_t p = 1;
    while (p <= x / 2)
        p *= 2;
    return p;
}

static int64_t pow2_ceil(int64_t x)
{
    int64_t p = 1;
    while (p < x && p <= INT64_MAX / 2)
        p *= 2;
    return p;
}

/* ---- validate ------------------------------------------------------------ */

/* Refuses the byte ranges ra (of tensor an) and rb (bn) sharing a byte
   (checked tensors: the ranges do not overflow or wrap; a missing tensor has
   an empty range). */
static kg_status check_disjoint(kg_context *ctx, kgi_range ra, const char *an, kgi_range rb, const char *bn)
{
    if (!kgi_ranges_overlap(ra, rb))
        return KG_OK;
    return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                   "invalid argument: %s overlaps %s (bytes [%p, %p) and [%p, %p)); a reduction's results may not "
                   "share memory with its input or each other",
                   an, bn, (void *)ra.lo, (void *)ra.hi, (void *)rb.lo, (void *)rb.hi);
}

static kg_status check_axes(kg_context *ctx, const char *name, const kg_tensor *in, const int *axes, int n_axes,
                            unsigned *mask)
{
    const int nd = in->ndim > 0 ? in->ndim : 1; /* a 0-d tensor takes axis 0 or -1, as in PyTorch */
    *mask = 0;
    if (n_axes < 0 || n_axes > KG_MAX_DIMS)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s: n_axes is %d (0..%d; 0 = every axis)", name,
                       n_axes, KG_MAX_DIMS);
    if (n_axes > 0 && !axes)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s: axes is NULL but n_axes is %d", name,
                       n_axes);
    if (n_axes == 0) {
        *mask = in->ndim ? (1u << in->ndim) - 1 : 0;
        return KG_OK;
    }
    unsigned m = 0;
    for (int i = 0; i < n_axes; i++) {
        const int a = axes[i];
        if (a < -nd || a >= nd)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                           "invalid argument: %s: axis %d is out of range for a %d-dim input (valid: %d..%d)", name, a,
                           in->ndim, -nd, nd - 1);
        const int d = a < 0 ? a + nd : a;
        if (m & (1u << d))
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s: axis %d (dim %d) appears twice in axes",
                           name, a, d);
        m |= 1u << d;
    }
    *mask = in->ndim ? m : 0;
    return KG_OK;
}

/* Checks a result tensor: dtype, shape, geometry, alignment, no
   self-overlap. */
static kg_status check_result(kg_context *ctx, const char *opname, const kg_tensor *t, const char *name, kg_dtype want,
                              int nd, const int64_t *shape, const kg_tensor *in)
{
    kg_status st = kgi_check_tensor(ctx, t, name);
    if (st != KG_OK)
        return st;
    if (t->dtype != want)
        return kg_fail(ctx, KG_ERR_DTYPE, "%s: %s is %s but the result over %s is %s", opname, name,
                       kg_dtype_name(t->dtype), kg_dtype_name(in->dtype), kg_dtype_name(want));
    int same = t->ndim == nd;
    for (int d = 0; same && d < nd; d++)
        same = t->shape[d] == shape[d];
    if (!same) {
        char a[128], b[128], c[128];
        return kg_fail(ctx, KG_ERR_SHAPE, "shape mismatch: %s: %s is %s but reducing in %s gives %s", opname, name,
                       kg_shape_str(a, sizeof a, t->ndim, t->shape), kg_shape_str(b, sizeof b, in->ndim, in->shape),
                       kg_shape_str(c, sizeof c, nd, shape));
    }
    return kgi_check_no_self_overlap(ctx, t, name);
}

/* Everything but the plan: returns the reduced-dims mask and the result's
   shape in plan->out_ndim / out_shape. */
static kg_status plan_validate(kg_context *ctx, kg_reduce_op op, const kg_tensor *out, const kg_tensor *indices,
                               const kg_tensor *in, const int *axes, int n_axes, int keepdim, kg_red_plan *plan,
                               unsigned *mask_out, int64_t *red_out)
{
    if ((int)op <= KG_RED_NONE || op >= KG_RED_COUNT)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %d is not a reduction (kg_reduce_op)", (int)op);
    const kg_red_info *info = &kg_red_infos[op];
    /* argmax with values is kg_max_with_indices: messages name the call */
    char with[32];
    const char *name = info->name;
    if (info->indexed && out && strncmp(name, "arg", 3) == 0) {
        snprintf(with, sizeof with, "%s_with_indices", name + 3);
        name = with;
    }
    kg_status st = kgi_check_tensor(ctx, in, "in");
    if (st != KG_OK)
        return st;
    const kg_dtype dt = in->dtype;
    if (!(info->dtype_mask & (1u << dt)))
        return kg_fail_dtype(ctx, name, dt, info->dtype_mask);
    unsigned mask;
    if ((st = check_axes(ctx, name, in, axes, n_axes, &mask)) != KG_OK)
        return st;

    /* the result's shape; red <= numel(in) <= INT64_MAX (kg_check_tensor) */
    plan->out_ndim = 0;
    int64_t red = 1;
    for (int d = 0; d < in->ndim; d++) {
        const int reduced = (mask >> d) & 1u;
        if (reduced)
            red = smul(red, in->shape[d]);
        if (!reduced || keepdim)
            plan->out_shape[plan->out_ndim++] = reduced ? 1 : in->shape[d];
    }

    if (info->indexed) {
        if (!indices)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                           "invalid argument: %s: indices is NULL (it returns indices; values are optional)",
                           name);
    } else {
        if (!out)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s: out is NULL", name);
        if (indices)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                           "invalid argument: %s returns no indices (pass NULL; for the indices of the maximum "
                           "or minimum use kg_max_with_indices or kg_min_with_indices)",
                           name);
    }
    if (out && (st = check_result(ctx, name, out, info->indexed ? "values" : "out", info->out[dt], plan->out_ndim,
                                  plan->out_shape, in)) != KG_OK)
        return st;
    if (indices &&
        (st = check_result(ctx, name, indices, "indices", KG_I64, plan->out_ndim, plan->out_shape, in)) != KG_OK)
        return st;
    if (red == 0 && info->nonempty) {
        char a[128];
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: %s of an empty slice: reducing in %s over dims of total size 0 has no "
                       "result (only sum, mean, prod and norm have one)",
                       name, kg_shape_str(a, sizeof a, in->ndim, in->shape));
    }
    /* each range once (the geometry layer computes it) */
    const kgi_range none = {0, 0}, ri = kgi_tensor_range(in), ro = out ? kgi_tensor_range(out) : none,
                    rx = indices ? kgi_tensor_range(indices) : none;
    if ((st = check_disjoint(ctx, ro, info->indexed ? "values" : "out", ri, "in")) != KG_OK ||
        (st = check_disjoint(ctx, rx, "indices", ri, "in")) != KG_OK ||
        (st = check_disjoint(ctx, ro, "values", rx, "indices")) != KG_OK)
        return st;
    *mask_out = mask;
    *red_out = red;
    return KG_OK;
}

/* ---- nest ---------------------------------------------------------------- */

/* Stable insertion sort of dims by input stride, then merging of neighbours
   whose strides chain (for every operand). Returns the new count. Sizes and
   strides come from checked tensors: a merged size is at most the element
   count, a chained stride at most the extent. */
static int coalesce(dim *v, int n, int sort)
{
    if (sort)
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && v[j].in < v[j - 1].in; j--) {
                const dim x = v[j];
                v[j] = v[j - 1];
                v[j - 1] = x;
            }
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m > 0) {
            dim *p = &v[m - 1];
            if (v[i].in == smul(p->in, p->size) && v[i].out == smul(p->out, p->size) &&
                v[i].idx == smul(p->idx, p->size)) {
                p->size = smul(p->size, v[i].size);
                continue;
            }
        }
        v[m++] = v[i];
    }
    return m;
}

/* Kept dims (K, with the results' strides) and reduced dims (D), innermost
   first, size-1 dims dropped, coalesced. Returns the output count. */
static int64_t plan_nest(const kg_tensor *out, const kg_tensor *indices, const kg_tensor *in, unsigned mask,
                         int keepdim, int indexed, int64_t red, dim *K, int *nk, dim *D, int *nr)
{
    int place[KG_MAX_DIMS], at = 0;
    for (int d = 0; d < in->ndim; d++) {
        place[d] = at;
        if (!((mask >> d) & 1u) || keepdim)
            at++;
    }
    int k = 0, r = 0;
    int64_t n_out = 1;
    for (int d = in->ndim - 1; d >= 0; d--) {
        const int64_t size = in->shape[d];
        if ((mask >> d) & 1u) {
            if (size > 1)
                D[r++] = (dim){size, in->strides[d], 0, 0};
            continue;
        }
        n_out = smul(n_out, size);
        if (size > 1)
            K[k++] =
                (dim){size, in->strides[d], out ? out->strides[place[d]] : 0, indices ? indices->strides[place[d]] : 0};
    }
    *nk = coalesce(K, k, 1);
    *nr = red == 0 ? 0 : coalesce(D, r, !indexed);
    return n_out;
}

/* ---- class --------------------------------------------------------------- */

static void fill_dims(kg_red_dims *o, const dim *v, int n, int fast)
{
    memset(o, 0, sizeof *o);
    o->n = n;
    for (int d = 0; d < n; d++) {
        o->size[d] = v[d].size;
        o->in[d] = v[d].in;
        o->out[d] = v[d].out;
        o->idx[d] = v[d].idx;
        if (fast && d < n - 1)
            kgi_divmod_magic((uint32_t)v[d].size, &o->magic[d], &o->shift[d]);
    }
}

/* The classes whose threads walk a run of kept dims K[0] (FLAT, COLS, TILE):
   the outer index walks the other kept dims, `outer` positions, with magic
   division where it fits 32 bits. */
static void fill_outer_of_run(kg_red_args *A, const dim *K, int nk, int64_t outer)
{
    A->fast = outer < ((int64_t)1 << 31);
    fill_dims(&A->outer, K + 1, nk - 1, A->fast);
    A->n_out = outer;
}

/* The walk over reduced dims v (n <= KG_RED_WALK_DIMS), dim 0 in units of
   `vec` elements, advancing `step` positions at a time. */
static void fill_walk(kg_red_walk *w, const dim *v, int n, int64_t vec, int64_t step)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    for (int d = 0; d < n; d++) {
        w->size[d] = d == 0 ? v[d].size / vec : v[d].size;
        w->in[d] = d == 0 ? v[d].in * vec : v[d].in;
    }
    int64_t s = step;
    for (int d = 0; d < n; d++) {
        if (d == n - 1) {
            w->step[d] = s;
        } else {
            w->step[d] = s % w->size[d];
            s /= w->size[d];
        }
        if (d > 0 && w->step[d])
            w->hi = 1;
    }
}

/* 1 when every digit and input offset of walk w, a lane's offset one step
   past its end and the sums in between (before a carry takes a digit's
   size back) stay below 2^31 (32-bit walk arithmetic): the spans sum below
   2^30. */
static int walk_fits32(const kg_red_walk *w)
{
    const int64_t lim = (int64_t)1 << 31;
    int64_t sum = 0;
    for (int d = 0; d < w->n; d++) {
        /* size and step first, each below 2^31, so that their sum cannot
           overflow (a stride-0 input of 2^63 - 2 elements reaches here:
           fuzz finding of 2026-12-02) */
        if (w->size[d] >= lim || w->step[d] >= lim || w->size[d] + w->step[d] + 1 >= lim)
            return 0;
        const int64_t span = smul(w->size[d] + (d == w->n - 1 ? w->step[d] + 1 : 0), w->in[d]);
        if (span >= lim)
            return 0;
        sum += span;
        if (sum >= ((int64_t)1 << 30))
            return 0;
    }
    return 1;
}

/* What the class step leaves to the split step. */
typedef struct shape_of_work {
    int64_t groups;    /* output groups (outputs, or column tiles) */
    int64_t per_group; /* partial results per group per split */
    int64_t min_chunk; /* > 0: the reduced elements may be split, chunks at least this */
    int64_t align;     /* chunks a multiple of this */
    int64_t red;       /* what splits cut: reduced elements, or rows of runs (COLS with a run) */
} shape_of_work;

/* Lanes per output in a unit over `items` positions: enough that each lane
   keeps eight loads in flight, up to a warp. */
static int64_t lanes_for(int64_t items)
{
    const int64_t g = pow2_floor(items / 8 > 1 ? items / 8 : 1);
    return g > 32 ? 32 : g;
}

/* 1 where ROWS would take PACKED: dense rows of 8, 16 or 32 whole vectors. */
static int packs_rows(const kg_red_tuning *T, const kg_tensor *in, const dim *K, int nk, int nr, int64_t red, size_t es)
{
    const int64_t V = 16 / (int64_t)es, nvec = red / V;
    return T->pack_rows && nr == 1 && nk == 1 && K[0].in == red && red % V == 0 &&
           (nvec == 8 || nvec == 16 || nvec == 32) && kgi_aligned(in->data, 16);
}

static void plan_rows(kg_red_plan *plan, const kg_tensor *in, const dim *K, int nk, int nr, int64_t red, int64_t n_out,
                      size_t es, int64_t lanes_full, const kg_red_tuning *T, shape_of_work *w)
{
    kg_red_args *A = &plan->args;
    const int64_t V = 16 / (int64_t)es, nvec = red / V;
    int64_t g = lanes_for(nvec);
    if (T->rows_group > 0)
        g = T->rows_group;
    plan->cls = KG_RED_ROWS;
    fill_dims(&A->outer, K, nk, A->fast);
    A->n_out = n_out;
    A->group = (int32_t)g;
    /* PACKED: dense rows of 8, 16 or 32 whole vectors, several to a warp's
       load of 512 contiguous bytes (reduce.cuh) */
    if (packs_rows(T, in, K, nk, nr, red, es)) {
        plan->cls = KG_RED_PACKED;
        A->group = (int32_t)nvec;
    } else if (smul(n_out, g) < lanes_full && red > smul(T->rows_block_min > 0 ? T->rows_block_min : 256, V)) {
        A->group = KG_RED_THREADS;
        w->min_chunk = KG_RED_THREADS * V * 8;
        w->align = V;
    }
}

/* Columns a COLS lane takes in mode vec (kg_red_cols_mode) for elements of
   es bytes (the kernels' Op::cvec, 16-byte vectors, KG_RED_SCOLS). */
int kg_red_cols_per_lane(int vec, size_t es)
{
    switch (vec) {
    case KG_RED_CV_VEC:
    case KG_RED_CV_VEC32: return es >= 4 ? 16 / (int)es : 4;
    case KG_RED_CV_WIDE:
    case KG_RED_CV_WIDE32: return 16 / (int)es;
    case KG_RED_CV_STRIDED: return KG_RED_SCOLS;
    default: return 1;
    }
}
#define cols_per_lane(v, es) ((int64_t)kg_red_cols_per_lane((v), (es)))

/* Shrinks splits until the partials fit the scratch budget. */
static int64_t fit_partials(int64_t groups, int64_t per_group, int64_t red, int64_t splits, size_t entry, int64_t align,
                            int64_t *chunk)
{
    while (splits > 1 && smul(smul(smul(groups, splits), per_group), (int64_t)entry) > (int64_t)KG_RED_PARTIAL_BYTES) {
        splits = (splits + 1) / 2;
        *chunk = smul(cdiv(cdiv(red, splits), align), align);
        splits = cdiv(red, *chunk);
    }
    return splits;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        const int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* flat_fill (FLAT plans that leave multiprocessors idle; default 75 with
   flat_fill_to 100 since session 35's H100 round s35r3):
   FLAT's splits are capped by flat_partials / columns (8192 / 128 = 64 for
   sweep #136 [24,365,15,128] axes (0,1,2) bf16: 64 blocks on 132
   multiprocessors, ncu s35r2 achieved occupancy 12%, DRAM 36%, 29 us), and
   only 2-byte plans (flat_min_pct2 25) are taken below one unit a
   multiprocessor. A plan of fewer units than sm x flat_fill / 100 takes
   cdiv(sm x flat_fill_to / 100, outer) splits (flat_fill_to 0: flat_fill),
   within flat_min_elems a split, MAX_SPLITS and the scratch
   (fit_partials); a plan that would not gain splits keeps its own. The
   last block folds splits x columns partials, CAP / columns splits a pass
   (16 for 128 bf16 columns; s34x fp32k: #136 at 256 splits 21.8 -> 27.9
   us, #115 at 264 125.3 -> 111.2): the aim is one unit a multiprocessor,
   not more. s35r3 (same process, best of 5): 132 splits for #331
   [262144,128] (0) 48.2 -> 40.2 us (x1.20), #575 [737461,13,7] (0) 90.7 ->
   75.6 (x1.20), #115 125.8 -> 113.5 (x1.11), #136 22.3 -> 21.7 (x1.03:
   five more fold passes cost about what the idle multiprocessors did);
   264 splits (flat_fill_to 200) lost on #136 (x0.77), and 100 (filling
   #411's 130 and #830's 128 units) was level there. Returns the splits
   (chunk set). */
static int64_t flat_fill_splits(int64_t outer, int64_t red, int64_t s, int64_t min_rows, int64_t cols, size_t entry,
                                int64_t sm, const kg_red_tuning *T, int64_t *chunk)
{
    const int64_t to = T->flat_fill_to > 0 ? T->flat_fill_to : T->flat_fill;
    if (smul(smul(outer, s), 100) >= smul(sm, T->flat_fill) || outer > KG_RED_MAX_SEMAPHORES)
        return s;
    int64_t s2 = cdiv(cdiv(smul(sm, to), 100), outer);
    if (s2 > red / min_rows)
        s2 = red / min_rows;
    if (s2 > MAX_SPLITS)
        s2 = MAX_SPLITS;
    if (s2 <= s)
        return s;
    int64_t c2 = cdiv(red, s2);
    s2 = cdiv(red, c2);
    s2 = fit_partials(outer, cols, red, s2, entry, 1, &c2);
    if (s2 <= s)
        return s;
    *chunk = c2;
    return s2;
}

/* FLAT (reduce.cuh, kg_red_flat): value reductions whose one reduced dim
   (after coalescing) lies right outside the contiguous kept dim of at most
   KG_RED_FLAT_COLS columns, elements of 2 to 8 bytes; a unit is one outer
   position (the further kept dims) and one split of its rows: about
   flat_units_per_sm units per multiprocessor, at most flat_partials
   partials per outer position (splits x columns: the last block folds them
   all), at least flat_min_elems elements per split. Taken where an outer
   position holds at least flat_min_outer elements and the units fill at
   least flat_min_pct percent of the multiprocessors (flat_min_pct2 for
   2-byte elements, whose column modes are slower). Measured on the H200
   (2026-12-01 20:53, 35 sweep cases, each beside the column and nest plans
   of before): 22 -> 60%, 28 -> 52%, 38 -> 74%, 26 -> 66%, 36 -> 90%, 45 ->
   87%, 64 -> 93% of copy where it filled the GPU, 19 -> 56% and 30 -> 37%
   for bf16 at 97 and 64 units; units of 32 to 504 elements lost (42 ->
   0.5%, 19 -> 4%: a fold per few vectors), and so did 4-byte plans of 8 to
   81 units (61 -> 4%, 83 -> 32%, 58 -> 18%: the GPU half idle, the last
   block folding up to 8192 partials); level where the column modes hold
   4 columns per lane (80 -> 75%, 57 -> 51%, 56 -> 58%). Sets the splits;
   returns 0 (and plans nothing) elsewhere. */
static int plan_flat(kg_red_plan *plan, const kg_red_info *info, kg_dtype dt, const dim *K, int nk, const dim *D,
                     int nr, int64_t red, int64_t n_out, size_t es, int64_t sm, const kg_red_tuning *T,
                     shape_of_work *w)
{
    kg_red_args *A = &plan->args;
    if (!T->flat || info->indexed || es < 2 || es > 8 || nr != 1 || nk < 1 || K[0].in != 1 || D[0].in != K[0].size ||
        K[0].size > KG_RED_FLAT_COLS || red < 2)
        return 0;
    const int64_t cols = K[0].size, V = 16 / (int64_t)es, G = cols / gcd64(cols, V), outer = n_out / cols;
    if (G > KG_RED_THREADS || (T->flat_max_cw > 0 && G > T->flat_max_cw) || smul(red, cols) < T->flat_min_outer)
        return 0;
    /* the splits */
    int64_t s = cdiv(smul(sm, T->flat_units_per_sm > 0 ? T->flat_units_per_sm : 1), outer);
    const int64_t by_partials = (T->flat_partials > 0 ? T->flat_partials : 1) / cols;
    if (s > by_partials)
        s = by_partials;
    const int64_t min_rows = cdiv(T->flat_min_elems > 0 ? T->flat_min_elems : 1, cols);
    if (s > red / min_rows)
        s = red / min_rows;
    if (s > MAX_SPLITS)
        s = MAX_SPLITS;
    if (s < 1 || outer > KG_RED_MAX_SEMAPHORES)
        s = 1;
    int64_t chunk = cdiv(red, s);
    s = cdiv(red, chunk);
    const size_t entry = (size_t)info->acc_size[dt];
    s = fit_partials(outer, cols, red, s, entry, 1, &chunk);
    const int64_t pct = es == 2 ? T->flat_min_pct2 : T->flat_min_pct;
    if (smul(smul(outer, s), 100) < smul(sm, pct))
        return 0;
    /* flat_fill: the class is decided above with the splits as planned;
       only then a plan of fewer units than flat_fill percent of the
       multiprocessors takes more splits (never fewer) */
    if (T->flat_fill > 0 && s > 1)
        s = flat_fill_splits(outer, red, s, min_rows, cols, entry, sm, T, &chunk);
    plan->cls = KG_RED_FLAT;
    fill_outer_of_run(A, K, nk, outer);
    A->cw = (int32_t)G;
    A->inner = cols;
    A->tiles = 1;
    A->run = 1;
    A->inner_out = K[0].out;
    A->inner_idx = K[0].idx;
    A->splits = 1;
    A->chunk = red;
    if (s > 1) {
        A->splits = (int32_t)s;
        A->chunk = chunk;
        plan->partial_idx_at = (size_t)(outer * s * cols) * entry;
        plan->partial_bytes = plan->partial_idx_at;
    }
    A->units = smul(outer, A->splits);
    A->vstore = es == 2 && T->flat_words;
    w->groups = outer;
    w->per_group = cols;
    w->red = red;
    return 1;
}

/* A FLATW plan's fields (the plan's class FLAT, args.group 32, unsplit):
   outer positions over K[1..], cw lanes, inner columns K[0] under a run of
   `run`, chunk periods, nb blocks (the walk's one dim; its stride and the
   units are the caller's). */
static void plan_flatw_fill(kg_red_plan *plan, const dim *K, int nk, int64_t outer, int64_t cw, int64_t inner,
                            int64_t run, int64_t chunk, int64_t nb, shape_of_work *w)
{
    kg_red_args *A = &plan->args;
    plan->cls = KG_RED_FLAT;
    fill_outer_of_run(A, K, nk, outer);
    A->group = 32;
    A->cw = (int32_t)cw;
    A->inner = inner;
    A->tiles = 1;
    A->run = run;
    A->inner_out = K[0].out;
    A->inner_idx = K[0].idx;
    A->splits = 1;
    A->chunk = chunk;
    memset(&A->walk, 0, sizeof A->walk);
    A->walk.n = 1;
    A->walk.size[0] = nb;
    w->groups = outer;
    w->per_group = inner;
}

/* A plan emptied back to the chain's start (plan_validate's result shape,
   red, fast, and a fresh shape of work) for a class to plan it again in
   place of `keep` (the planned plan, which the caller restores if that
   class declines). */
static void plan_restart(kg_red_plan *plan, const kg_red_plan *keep, int64_t n_out, int64_t red, shape_of_work *w)
{
    memset(plan, 0, sizeof *plan);
    plan->out_ndim = keep->out_ndim;
    memcpy(plan->out_shape, keep->out_shape, sizeof plan->out_shape);
    plan->args.red = red;
    plan->args.fast = keep->args.fast;
    *w = (shape_of_work){n_out, 1, 0, 1, red};
}

/* FLATW (templates/reduce_flatw.cuh; the plan's class FLAT, args.group
   32): one warp per outer position, unsplit, for value reductions of
   elements of 2 to 8 bytes over a slab of the shape [R_out x] R_mid x K x a
   (innermost last): a reduced run of a elements innermost (or none, a = 1),
   K contiguous columns right outside it, R_mid periods of them (a reduced
   dim of stride a K, or none), and at most one reduced dim outside that
   (R_out blocks at any stride, each block whole aligned vectors). Taken
   with flat and flat_warp (1: rows x columns slabs only, 2: every shape above) where a period of P = a K elements fits
   a warp's lanes (P / gcd(P, V) <= 32), a slab holds flat_warp_min to flat_warp_max elements and the outer positions
   give each multiprocessor at least flat_warp_units warps: many short slabs, where FLAT's block fold per unit was the
   cost, or the columns' lanes read 2- to 8-byte pieces (e.g. K2 R512 over 69300 outer positions went to NEST's lanes of
   4 outputs at 25% of copy). Tried before every other class (a short row alone, a single reduced run, stays ROWS).
   Returns 0 (and plans nothing) elsewhere. */
static int plan_flatw(kg_red_plan *plan, const kg_red_info *info, const kg_tensor *in, const dim *K, int nk,
                      const dim *D, int nr, int64_t red, int64_t n_out, size_t es, int64_t sm, const kg_red_tuning *T,
                      int ragged_ok, shape_of_work *w)
{
    kg_red_args *A = &plan->args;
    if (!T->flat || !T->flat_warp || info->indexed || es < 2 || es > 8 || nk < 1 || nr < 1 || red < 2)
        return 0;
    const int64_t V = 16 / (int64_t)es;
    int di = 0;
    const int64_t a = D[0].in == 1 ? D[0].size : 1;
    di += a > 1;
    if (K[0].in != a || K[0].size > KG_RED_FLAT_COLS)
        return 0;
    const int64_t cols = K[0].size, P = a * cols;
    int64_t mid = 1;
    if (di < nr && D[di].in == P)
        mid = D[di++].size;
    int64_t nb = 1, S = 0;
    if (di < nr) {
        nb = D[di].size;
        S = D[di].in;
        di++;
    }
    const int64_t n = smul(mid, P), outer = n_out / cols, G = P / gcd64(P, V);
    if (di != nr || G > 32 || (a == 1 && mid == 1) || (a > 1 && nr == 1) || (T->flat_warp < 2 && (a > 1 || nb > 1)) ||
        smul(a, (int64_t)es) > T->flat_warp_run || smul(n, nb) < T->flat_warp_min || smul(n, nb) > T->flat_warp_max ||
        n >= ((int64_t)1 << 31))
        return 0;
    int ragged = 0;
    int64_t extent = 1;
    if (nb > 1) { /* blocks of whole aligned vectors: every block's start aligned */
        int ok = n % V == 0 && S % V == 0 && kgi_aligned(in->data, 16);
        for (int d = 1; d < nk; d++)
            ok = ok && K[d].in % V == 0;
        if (!ok) {
            /* flatw_ragged: blocks whose starts are whole periods (P divides
               the vector) and at least 128 bytes (the covering vectors read
               at most an eighth more), read in the aligned vectors that cover
               them (the input aligned: none starts before it; args.tiles its
               extent in elements: a vector past it is read element by
               element), in the flatwr kernel (modules of bf16, f16, f32 and
               i32) */
            const kg_dtype dt = in->dtype;
            ok = ragged_ok && T->flatw_ragged > 0 && (dt == KG_BF16 || dt == KG_F16 || dt == KG_F32 || dt == KG_I32) &&
                 V % P == 0 && S % P == 0 && S > 0 && smul(n, (int64_t)es) >= 128 && kgi_aligned(in->data, 16) &&
                 smul(smul(n, nb), (int64_t)es) >= T->flatw_ragged_min;
            for (int d = 1; d < nk; d++)
                ok = ok && K[d].in % P == 0;
            if (!ok)
                return 0;
            ragged = 1;
            extent = 1;
            for (int d = 0; d < in->ndim; d++)
                if (in->shape[d] > 1)
                    extent += (in->shape[d] - 1) * in->strides[d];
        }
    }
    if (outer < smul(sm, !ragged ? T->flat_warp_units
                               : es == 2 && T->flatw_ragged_2 > T->flatw_ragged ? T->flatw_ragged_2
                                                                               : T->flatw_ragged))
        return 0;
    plan_flatw_fill(plan, K, nk, outer, G, cols, a, mid, nb, w);
    if (ragged) { /* flatw_ragged (kg_red_flatw_v, mode 2; flatw_ragged_v 1: mode 3) */
        /* flatw_ragged_v 1: mode 3, whose block positions and vector
           indices are 32-bit (an extent under 2^31 elements; else mode 2) */
        A->vec = T->flatw_ragged_v == 1 && extent < ((int64_t)1 << 31) ? 2 : 1;
        A->tiles = extent;
    }
    A->walk.in[0] = S;
    A->units = outer;
    w->red = red;
    return 1;
}

/* FLATW over packed rows of interleaved outputs (flatw_kept; the plan's
   class FLAT, args.group 32, args.tile_rows = kw): value reductions whose one
   reduced dim D[0] (L elements, stride kw) lies right outside a contiguous
   kept dim K[0] of kw = 2 or 4 elements dividing the vector, the rows of kw
   x L elements 8, 16 or 32 whole 16-byte vectors and dense (the further kept
   dims chain from the row's length; e.g. sweep #175 f32 [100,21,2048,8,2,2]
   axes (3,4), memory K2 R16 K4300800, went to NEST's lanes of 4 outputs,
   each load a 4-byte piece). PACKED's warp loads (512 contiguous bytes) and
   a butterfly per row that keeps the kw columns apart
   (templates/reduce_flatw.cuh). Returns 0 (and plans nothing) elsewhere. */
static int plan_flatw_kept(kg_red_plan *plan, const kg_red_info *info, const kg_tensor *in, const dim *K, int nk,
                           const dim *D, int nr, int64_t n_out, size_t es, const kg_red_tuning *T, shape_of_work *w)
{
    kg_red_args *A = &plan->args;
    if (!T->flat || !T->flatw_kept || info->indexed || es < 2 || es > 8 || nr != 1 || nk < 2 || K[0].in != 1 ||
        !kgi_aligned(in->data, 16))
        return 0;
    const int64_t V = 16 / (int64_t)es, kw = K[0].size, L = D[0].size, row = smul(kw, L);
    const int64_t nv = smul(row, (int64_t)es) / 16;
    if ((kw != 2 && kw != 4) || V % kw != 0 || D[0].in != kw || L < 2 || row % V != 0 ||
        (nv != 8 && nv != 16 && nv != 32) || K[1].in != row)
        return 0;
    for (int d = 2; d < nk; d++)
        if (K[d].in != smul(K[d - 1].in, K[d - 1].size))
            return 0;
    const int64_t rows = n_out / kw;
    plan_flatw_fill(plan, K, nk, rows, nv, kw, 1, L, 1, w);
    A->tile_rows = kw;
    A->units = cdiv(rows, 32 / nv * KG_RED_PACK); /* a warp's rows */
    w->red = L;
    return 1;
}

/* Outputs per lane of NEST (tuning nest_multi: 4, the kernels' one
   choice) where n_out outputs give each of sm multiprocessors
   nest_multi_lanes such lanes, else 1. */
static int64_t nest_multi_of(const kg_red_tuning *T, int64_t n_out, int64_t sm)
{
    const int64_t M = T->nest_multi == 4 ? 4 : 1;
    return M > 1 && n_out / M >= smul(sm, T->nest_multi_lanes) ? M : 1;
}

/* 1 where NEST moves the reduced walk's inner run in 16-byte vectors: the
   run contiguous and whole vectors, every start aligned. */
static int nest_moves_vectors(const kg_tensor *in, const dim *K, int nk, const dim *D, int nr, size_t es)
{
    const int64_t V = 16 / (int64_t)es;
    int vec = V > 1 && nr >= 1 && D[0].in == 1 && D[0].size % V == 0 && kgi_aligned(in->data, 16);
    for (int d = 1; d < nr; d++)
        vec = vec && D[d].in % V == 0;
    for (int d = 0; d < nk; d++)
        vec = vec && K[d].in % V == 0;
    return vec;
}

/* cols_runs_vec: the elements a vector of COLS's run path holds (8 of 2
   bytes in 32-bit words, KG_RED_CV_WIDE32; else Op::cvec, KG_RED_CV_VEC),
   where a value reduction's short contiguous reduced run D[0] lies right
   under the columns K[0], the run divides the vector and every row (the
   columns' runs) and every start are whole aligned vectors; else 0. */
static int64_t cols_run_vec(const kg_red_tuning *T, const kg_tensor *in, const dim *K, int nk, const dim *D, int nr,
                            size_t es, int indexed, int64_t kw)
{
    if (!T->cols_runs_vec || indexed || es < 2 || es > 8 || (es == 2 && !(T->cols_wide && T->cols_words)) || nr < 2 ||
        nr - 1 > KG_RED_WALK_DIMS || nk < 1 || D[0].in != kw || K[0].in != smul(D[0].size, kw) || D[0].size < 2 ||
        !kgi_aligned(in->data, 16))
        return 0;
    const int64_t n = 16 / (int64_t)es, L = D[0].size;
    int ok = n % smul(L, kw) == 0 && smul(smul(K[0].size, L), kw) % n == 0;
    for (int d = 1; d < nr; d++)
        ok = ok && D[d].in % n == 0;
    for (int d = 1; d < nk; d++)
        ok = ok && K[d].in % n == 0;
    return ok ? n : 0;
}

/* cols_runs_fold: the elements a vector of the run kernel holds (as
   cols_run_vec) where a value reduction's contiguous kept dim K[0] of kw >=
   2 elements, narrower than a vector (wider ones move in vectors as
   columns: s23r1 #132 i32 K64 R5 lost, 73.3 / 111.1 us), lies under its
   reduced run D[0] of L elements, a period of P = kw L elements wider than
   a vector, times the kept dim K[1] right outside
   where its stride is P and the tile holds them (m of them, else m = 1), in
   whole aligned vectors
   filling at most one tile of cols_lanes lanes, with a walk of further
   reduced dims outside whose starts are whole vectors too (then *m gets
   m); else 0. */
static int64_t cols_fold_vec(const kg_red_tuning *T, const kg_tensor *in, const dim *K, int nk, const dim *D, int nr,
                             size_t es, int indexed, int64_t *m)
{
    if (!T->cols_runs_fold || !T->cols_runs_vec || indexed || es < 2 || es > 8 ||
        (es == 2 && !(T->cols_wide && T->cols_words)) || nr < 2 || nr - 1 > KG_RED_WALK_DIMS || nk < 1 ||
        K[0].in != 1 || K[0].size < 2 || smul(K[0].size, (int64_t)es) >= 16 || D[0].in != K[0].size ||
        D[0].size < 2 || !kgi_aligned(in->data, 16))
        return 0;
    const int64_t n = 16 / (int64_t)es, P = smul(K[0].size, D[0].size);
    const int64_t lim = smul(T->cols_lanes, n);
    const int64_t mm = nk >= 2 && K[1].in == P && smul(P, K[1].size) <= lim ? K[1].size : 1, inner = smul(P, mm);
    int ok = P > n && inner % n == 0 && inner <= lim;
    for (int d = 1; d < nr; d++)
        ok = ok && D[d].in % n == 0;
    for (int d = mm > 1 ? 2 : 1; d < nk; d++)
        ok = ok && K[d].in % n == 0;
    if (ok)
        *m = mm;
    return ok ? n : 0;
}

/* (cols_runs_vec and cols_runs_nest_vec: s20r1 figures in the defaults'
   comment above.) Returns 0 (and plans nothing) when the columns are too
   few for the reduced walk: most of a block's lanes down the reduced dims would idle;
   or, with cols_min_cols, when fewer columns than that would take NEST's
   lanes of several outputs each (outputs contiguous: one lane per output
   reads the neighbour of the next lane's element). */
static int plan_cols(kg_red_plan *plan, const kg_tensor *in, const dim *K, int nk, const dim *D, int nr, int64_t red,
                     int64_t n_out, size_t es, int64_t target, int64_t multi, int indexed, const kg_red_tuning *T,
                     shape_of_work *w)
{
    kg_red_args *A = &plan->args;
    const int64_t cv = es >= 4 ? 16 / (int64_t)es : 4;
    /* cols_runs_kept: a short kept dim K[0] (kw contiguous elements) under
       the reduced run D[0], the columns K[1] right outside both, their
       results' stride kw times K[0]'s: rows of periods of kw x run elements
       in whole vectors (cols_runs_vec's), each result folding its run's
       accumulators (reduce_cols_runs.cuh; A->tile_rows = kw). Columns of
       K[0] alone (the strided or scalar columns) read kw of every kw x run
       elements of a row per load. H200 s22r2, same process, us, K[0]'s
       columns / this: #155 bf16 [9,4095,128,2,2,2] axes (0,1,4) 84.5 / 30.9
       (21.3 -> 58.2% of copy; the one sweep case it changes). */
    int64_t kw = 1, rv = 0;
    dim k0 = K[0];
    if (T->cols_runs_kept && !indexed && (es == 2 || es == 4) && nk >= 2 && nr >= 2 && K[0].in == 1 &&
        K[0].size >= 2 && D[0].in == K[0].size && K[1].out == smul(K[0].out, K[0].size) &&
        (rv = cols_run_vec(T, in, K + 1, nk - 1, D, nr, es, indexed, K[0].size)) > 0) {
        kw = K[0].size;
        K++;
        nk--;
    }
    /* cols_runs_fold: the period of kw kept x L reduced elements (times the
       kept dim of stride P right outside, m of them) as one tile of columns
       in vectors; the columns are a synthetic dim of m (P apart) over the
       further kept dims (outer), each result folds its L columns across the
       tile's lanes at the end (reduce_cols_runs.cuh; A->rdims the kept
       digits: kw, then m). H200 s23r1: the defaults' comment. */
    dim Kf[KG_MAX_DIMS];
    int64_t fm = 0;
    const dim *k1 = NULL;
    if (kw == 1 && (rv = cols_fold_vec(T, in, K, nk, D, nr, es, indexed, &fm)) > 0) {
        kw = K[0].size;
        k1 = fm > 1 ? &K[1] : NULL;
        const int skip = fm > 1 ? 2 : 1;
        Kf[0] = (dim){fm, smul(kw, D[0].size), k1 ? k1->out : 0, k1 ? k1->idx : 0};
        for (int d = skip; d < nk; d++)
            Kf[d - skip + 1] = K[d];
        nk = nk - skip + 1;
        K = Kf;
    }
    /* cols_runs_vec: the rows' columns x run elements in whole vectors */
    if (kw == 1)
        rv = cols_run_vec(T, in, K, nk, D, nr, es, indexed, 1);
    /* a short contiguous reduced run innermost with the columns right
       outside it: each lane reads its column's run (the walk counts runs);
       with cols_runs_nest_vec not where NEST moves the run in vectors */
    const int64_t run = rv || (T->cols_runs && (T->cols_runs_es <= 0 || es <= (size_t)T->cols_runs_es) && nr >= 2 &&
                               D[0].in == 1 && K[0].in == D[0].size && D[0].size * (int64_t)es <= 64 &&
                               !(T->cols_runs_nest_vec && nest_moves_vectors(in, K, nk, D, nr, es)))
                            ? D[0].size
                            : 1;
    if (run > 1) {
        D++;
        nr--;
    }
    if (nr > KG_RED_WALK_DIMS || K[0].in != run * kw)
        return 0;
    const int64_t rows = red / run;
    dim inner = K[0];
    if (rv) /* the columns' runs as columns of elements, folded by run at the end */
        inner.size = smul(smul(K[0].size, run), kw);
    if (kw > 1)
        inner.out = k0.out; /* (the fold's results: kw per period, k0's stride apart) */
    /* cols_chain: the columns over K[0] and the kept dims whose input
       strides chain with it, K[0 .. a) (their results' strides do not, or
       plan_nest would have merged them): each result's offset from its
       column's digits (A->rdims), where K[0] alone is short. H200 s21r2,
       same process, us, K[0]'s columns / the chain (bounds 256, 1024 and
       4096 bytes alike): i32 #19 [255,63,128,33,2]p (1,2) 487.5 / 148.9
       (26.4 -> 86.4% of copy), #34 47.4 / 28.9, #164 37.8 / 29.7, #48 92.5 /
       85.5, #24 57.2 / 56.3, #167 53.9 / 54.1; f32 #225 120.4 / 80.5, #170
       58.6 / 46.3; bf16 #176 (K[0] of 256 bytes: 1024 only) 89.4 / 72.8.
       Only where an output reduces at least cols_chain_red bytes: the
       results' stores scatter (one 32-byte sector each where the columns'
       results are far apart), e.g. #77 bf16 of 5 elements an output keeps
       TRANS, built for those */
    int a = 1;
    if (run == 1 && T->cols_chain > 0 && smul(K[0].size, (int64_t)es) < T->cols_chain &&
        smul(red, (int64_t)es) >= T->cols_chain_red) {
        while (a < nk && K[a].in == inner.size && smul(inner.size, K[a].size) < ((int64_t)1 << 31)) {
            inner.size *= K[a].size;
            a++;
        }
        if (a > 1)
            inner.out = inner.idx = 0; /* (unused: no vector stores, no COLSQ) */
    }
    /* vectors of n adjacent columns: every column group's start aligned */
    int vec = rv == 0 ? KG_RED_CV_SCALAR : es == 2 ? KG_RED_CV_WIDE : KG_RED_CV_VEC;
    for (int wide = es == 2 && T->cols_wide; wide >= 0 && vec == KG_RED_CV_SCALAR; wide--) {
        const int64_t n = wide ? 16 / (int64_t)es : cv;
        int ok = run == 1 && inner.size % n == 0 && kgi_aligned(in->data, es * (size_t)n);
        for (int d = 0; d < nr; d++)
            ok = ok && D[d].in % n == 0;
        for (int d = a; d < nk; d++)
            ok = ok && K[d].in % n == 0;
        if (ok)
            vec = wide ? KG_RED_CV_WIDE : KG_RED_CV_VEC;
    }
    /* else several columns per lane, cw apart, each loaded on its own */
    /* (two columns: half of a lane's loads would be repeats) */
    if (vec == KG_RED_CV_SCALAR && run == 1 && T->cols_strided && inner.size > 2)
        vec = KG_RED_CV_STRIDED;
    /* columns that move in no vector, fewer than cols_min_cols: NEST's
       lanes of 4 outputs where those apply (r4: a 2-byte vector tile of 128
       columns lost that way, 68.9 -> 35.5%) */
    if ((vec == KG_RED_CV_SCALAR || vec == KG_RED_CV_STRIDED) && T->cols_min_cols > 0 &&
        inner.size < T->cols_min_cols && run == 1 && inner.in == 1 && red <= T->nest_g1_items && multi > 1)
        return 0;
    if (es == 2 && T->cols_words && (vec == KG_RED_CV_WIDE || vec == KG_RED_CV_VEC))
        vec = vec == KG_RED_CV_WIDE ? KG_RED_CV_WIDE32 : KG_RED_CV_VEC32;
    const int64_t vu = cols_per_lane(vec, es);
    /* lanes across columns: as many as there are vectors of columns, up to
       cols_lanes (the whole block: one lane down each column); with
       cols_fit, narrower tiles where one tile would leave more than an
       eighth of its lanes idle (48 vectors: 3 tiles of 16, not 1 of 64) */
    const int64_t nv = cdiv(inner.size, vu);
    int64_t cw = pow2_ceil(nv);
    if (cw > T->cols_lanes)
        cw = T->cols_lanes;
    if (T->cols_fit && !fm && nv < cw * 7 / 8) { /* (a folded period keeps its one tile) */
        int64_t best = cw, best_used = nv * 8 / (cdiv(nv, cw) * cw); /* eighths of the lanes used */
        for (int64_t c = cw / 2; c >= 8 && best_used < 7; c /= 2) {
            const int64_t used = nv * 8 / (cdiv(nv, c) * c);
            if (used > best_used) {
                best = c;
                best_used = used;
            }
        }
        cw = best;
    }
    const int64_t outer = n_out / (rv ? K[0].size * kw : inner.size);
    const int64_t bytes = smul(smul(n_out, red), (int64_t)es);
    if (!fm && smul(smul(outer, cdiv(inner.size, cw * vu)), 2) < target && cw > T->cols_split_lanes &&
        rows > KG_RED_THREADS / T->cols_split_lanes * 16 && bytes >= ((int64_t)1 << 18))
        cw = T->cols_split_lanes; /* too few tiles: the reduced dims will be split, in narrower tiles */
    if (rows < 2 * (KG_RED_THREADS / cw))
        return 0;
    plan->cls = KG_RED_COLS;
    fill_outer_of_run(A, K + a - 1, nk - a + 1, outer);
    fill_dims(&A->rdims, K, a > 1 ? a : 0, 0);
    A->cw = (int32_t)cw;
    A->vec = vec;
    A->inner = inner.size;
    A->tiles = cdiv(inner.size, cw * vu);
    A->inner_out = inner.out;
    A->inner_idx = inner.idx;
    A->run = run;
    A->tile_rows = kw > 1 ? kw : 0; /* cols_runs_kept's fold, and cols_runs_fold's */
    if (fm) { /* cols_runs_fold: each result's offset from its kept digits (kw, then m) */
        A->rdims.n = 2;
        A->rdims.size[0] = kw;
        A->rdims.in[0] = 1;
        A->rdims.out[0] = k0.out;
        A->rdims.idx[0] = k0.idx;
        A->rdims.size[1] = fm;
        A->rdims.in[1] = Kf[0].in;
        A->rdims.out[1] = Kf[0].out;
        A->rdims.idx[1] = Kf[0].idx;
    }
    const int64_t ny = KG_RED_THREADS / cw;
    static const dim one = {1, 0, 0, 0}; /* a run and no other reduced dim: one row */
    fill_walk(&A->walk, nr ? D : &one, nr ? nr : 1, 1, ny);
    if (rv && !walk_fits32(&A->walk))
        return 0; /* (the run kernel walks in 32-bit arithmetic) */
    A->deep = vec == KG_RED_CV_SCALAR && (T->deep_walk > 1 || (T->deep_walk == 1 && es <= 2)) && walk_fits32(&A->walk);
    /* cols_runs_plain: value reductions' column runs (one element a load)
       in the plain walk, cols_occ's kernels. H200 s21r2, same process, us,
       narrow / plain, bf16: #65 123.3 / 112.0, #89 154.1 / 141.7, #10 135.3 /
       129.7, #2 26.2 / 25.0, #180 26.7 / 25.9, #54 146.4 / 145.1 */
    if (run > 1 && !indexed && T->cols_runs_plain)
        A->deep = 0;
    w->groups = smul(outer, A->tiles);
    w->per_group = cw * vu;
    w->red = rows;
    if (smul(w->groups, 2) < target && rows > ny * 16 && bytes >= ((int64_t)1 << 18))
        w->min_chunk = ny * 8;
    return 1;
}

/* RUNT (run_tiles; templates/reduce_runt.cuh): a value reduction's short
   contiguous reduced run D[0] of L elements (at most 64 bytes) right under
   the columns K[0], further reduced dims D[1..] walked outside (at most
   KG_RED_WALK_DIMS, in 32-bit arithmetic), 2-byte elements (since session 25). The
   widest load of 16, 8, 4 or 2 bytes (at most run_tiles_vb, at least one
   element) for which the input, every row (K[0] x L elements), every
   further stride and so every start are whole aligned vectors of n
   elements (one element a load always is: 2-byte elements take any row); a tile is the whole row where it fits KG_RED_THREADS vectors,
   else TC columns, TC L a multiple of n, in cw vectors across (a multiple of
   L / gcd(L, n), the most lanes busy: cw x floor(KG_RED_THREADS / cw), then
   the widest). Splits of the rows where the tiles give fewer than
   run_tiles_units units per multiprocessor (each split at least
   KG_RED_RUNT_BYTES of loads per lane). Sets the whole plan; returns 0 (and
   plans nothing) elsewhere. Default (run_tiles 1, run_tiles_vb_min 4) since session 25's H200 round. */
static int64_t split(int64_t groups, int64_t red, int64_t target, int64_t min_chunk, int64_t align, int64_t *chunk);

static int plan_runt(kg_red_plan *plan, const kg_red_info *info, kg_dtype dt, const kg_tensor *in, const dim *K,
                     int nk, const dim *D, int nr, int64_t red, int64_t n_out, int64_t sm, const kg_red_tuning *T)
{
    const size_t es = kg_dtype_size(dt);
    if (!T->run_tiles || info->indexed || es != 2 || nk < 1 || nr < 2 || nr - 1 > KG_RED_WALK_DIMS ||
        D[0].in != 1 || D[0].size < 2 || smul(D[0].size, (int64_t)es) > 64 || K[0].in != D[0].size)
        return 0;
    const int64_t L = D[0].size, rowlen = smul(K[0].size, L);
    int64_t vb = 0;
    for (int64_t b = 16; b >= 2 && b >= (int64_t)es && !vb; b /= 2) {
        const int64_t n = b / (int64_t)es;
        if (b > T->run_tiles_vb || n < 1 || !kgi_aligned(in->data, (size_t)b))
            continue;
        int ok = rowlen % n == 0;
        for (int d = 1; d < nr; d++)
            ok = ok && D[d].in % n == 0;
        for (int d = 1; d < nk; d++)
            ok = ok && K[d].in % n == 0;
        if (ok)
            vb = b;
    }
    if (!vb || vb < T->run_tiles_vb_min)
        return 0;
    const int64_t n = vb / (int64_t)es, nv = rowlen / n;
    int64_t cw = nv, tc = K[0].size;
    if (nv > KG_RED_THREADS) {
        const int64_t c0 = L / gcd64(L, n); /* vectors of the fewest whole columns */
        int64_t best = 0, used = 0;
        for (int64_t c = c0; c <= KG_RED_THREADS; c += c0)
            if (c * (KG_RED_THREADS / c) >= used) {
                used = c * (KG_RED_THREADS / c);
                best = c;
            }
        cw = best;
        tc = cw * n / L;
    }
    const int64_t ny = KG_RED_THREADS / cw, rows = red / L, outer = n_out / K[0].size;
    kg_red_args *A = &plan->args;
    kg_red_walk walk;
    fill_walk(&walk, D + 1, nr - 1, 1, ny);
    if (!walk_fits32(&walk) || rows < 1)
        return 0;
    const int64_t fast = A->fast;
    memset(A, 0, sizeof *A);
    A->red = red;
    A->fast = (int32_t)fast;
    plan->cls = KG_RED_RUNT;
    plan->occ = 0;
    plan->partial_bytes = plan->partial_idx_at = 0;
    fill_outer_of_run(A, K, nk, outer);
    A->walk = walk;
    A->cw = (int32_t)cw;
    A->vec = (int32_t)vb;
    A->inner = K[0].size;
    A->run = L;
    A->tile_rows = tc;
    A->tiles = cdiv(K[0].size, tc);
    A->inner_out = K[0].out;
    A->inner_idx = K[0].idx;
    /* splits: each at least a batch of loads per lane down the rows */
    const int64_t groups = smul(outer, A->tiles), target = smul(sm, T->run_tiles_units);
    const int64_t min_chunk = smul(ny, KG_RED_RUNT_BYTES / vb);
    int64_t chunk = rows, s = 1;
    if (groups < target && rows > min_chunk && groups <= KG_RED_MAX_SEMAPHORES) {
        s = split(groups, rows, target, min_chunk, 1, &chunk);
        /* many splits (run_tiles_cap): aim at fewer units, each split longer */
        if (T->run_tiles_cap > 0 && s > T->run_tiles_cap && T->run_tiles_cap_units > 0)
            s = split(groups, rows, smul(sm, T->run_tiles_cap_units), min_chunk, 1, &chunk);
        s = fit_partials(groups, tc, rows, s, (size_t)info->acc_size[dt], 1, &chunk);
    }
    A->splits = (int32_t)s;
    A->chunk = s > 1 ? chunk : rows;
    A->units = smul(groups, s);
    if (s > 1)
        plan->partial_bytes = (size_t)smul(smul(groups, s), tc) * (size_t)info->acc_size[dt];
    return 1;
}

/* SEGW (seg_rows; templates/reduce_runt.cuh): a value reduction of short
   dense rows, the one reduced dim D[0] of L elements (stride 1) under the
   one kept dim K[0] (stride L), the input 16-byte aligned, elements of 2
   to 8 bytes: the rows one stream, a warp's chunk of R rows the least
   common multiple of 512 bytes (32 lanes' 16-byte vectors) and a row's
   bytes where that fits KG_RED_SEGW_BYTES and holds a row for every lane
   (R = 512 / gcd(512, L es) >= 32 rows, args.cw = the chunk's vectors per
   lane). Sets the whole plan; returns 0
   (and plans nothing) elsewhere. Default (seg_rows 1) since session 25's H200 round. */
static int plan_segw(kg_red_plan *plan, const kg_red_info *info, kg_dtype dt, const kg_tensor *in, const dim *K,
                     int nk, const dim *D, int nr, int64_t red, int64_t n_out, const kg_red_tuning *T)
{
    const size_t es = kg_dtype_size(dt);
    if (!T->seg_rows || info->indexed || es < 2 || es > 8 || nk != 1 || nr != 1 || D[0].in != 1 || D[0].size < 2 ||
        K[0].in != D[0].size || !kgi_aligned(in->data, 16) || smul(D[0].size, (int64_t)es) > KG_RED_SEGW_BYTES)
        return 0;
    const int64_t L = D[0].size, rb = L * (int64_t)es, R = 512 / gcd64(512, rb), chunk = R * rb;
    if (chunk > KG_RED_SEGW_BYTES || R < 32)
        return 0; /* (fewer rows a chunk than lanes: longer rows, for ROWS / PACKED) */
    kg_red_args *A = &plan->args;
    memset(A, 0, sizeof *A);
    plan->cls = KG_RED_SEGW;
    plan->occ = 0;
    plan->partial_bytes = plan->partial_idx_at = 0;
    A->red = red;
    A->fast = 1;
    A->n_out = 1; /* one outer position: the stream */
    A->run = L;
    A->inner = K[0].size;
    A->inner_out = K[0].out;
    A->inner_idx = K[0].idx;
    A->tile_rows = R;
    A->cw = (int32_t)(chunk / 512);
    A->splits = 1;
    A->chunk = red;
    A->units = cdiv(n_out, R);
    return 1;
}

/* TILE with tile_banks: the fewest lanes per row g (a power of two from g0
   up, at most 32 and L) such that a warp's first reads of rows of L elements (es bytes)
   in shared memory, lane l reading element l % g of row l / g, meet at most
   one other word in a bank (4-byte words, lanes of a word share it; 8-byte
   elements: per half warp, 8-byte banks): a two-way conflict costs less
   than the shuffles of more lanes per row. */
static int64_t tile_lanes(int64_t L, size_t es, int64_t g0)
{
    const int64_t unit = es > 4 ? 8 : 4, lanes = es > 4 ? 16 : 32, banks = 128 / unit;
    int64_t g = g0;
    for (; g < 32 && g * 2 <= L; g *= 2) {
        int64_t word[32][2];
        int ok = 1;
        for (int64_t b = 0; b < banks; b++)
            word[b][0] = word[b][1] = -1;
        for (int64_t l = 0; l < lanes && ok; l++) {
            const int64_t w = ((l / g) * L + l % g) * (int64_t)es / unit, b = w % banks;
            if (word[b][0] < 0 || word[b][0] == w)
                word[b][0] = w;
            else if (word[b][1] < 0 || word[b][1] == w)
                word[b][1] = w;
            else
                ok = 0;
        }
        if (ok)
            return g;
    }
    return g;
}

/* TILE: a short contiguous reduced run D[0] (the logically innermost reduced
   dim for index reductions) under the dense kept dim K[0] (stride = the
   run), further reduced dims walked outside (at most KG_RED_WALK_DIMS),
   further kept dims as outer positions. Returns 0 (and plans nothing) where
   that is not the nest, where the rows are long (ROWS / NEST read them in
   vectors) or the tile would be small (few rows under a long walk: a sync
   per few elements). */
static int plan_tile(kg_red_plan *plan, const kg_tensor *in, const dim *K, int nk, const dim *D, int nr, int64_t red,
                     int64_t n_out, size_t es, int indexed, int64_t target, const kg_red_tuning *T, shape_of_work *w)
{
    kg_red_args *A = &plan->args;
    if (T->tile < (indexed ? 2 : 1) || nr < 1 || nk < 1 || nr - 1 > KG_RED_WALK_DIMS || D[0].in != 1 ||
        K[0].in != D[0].size)
        return 0;
    const int64_t L = D[0].size, E = KG_RED_TILE_ELEMS;
    if (L < 2 || L * (int64_t)es > T->tile_max_bytes || L > E / 16 || (int64_t)es < T->tile_min_es)
        return 0;
    if (T->tile_vec && cols_run_vec(T, in, K, nk, D, nr, es, indexed, 1))
        return 0; /* COLS over the runs in vectors */
    /* PACKED rows (dense rows of 8, 16 or 32 vectors) stay packed */
    const int64_t V = 16 / (int64_t)es;
    if (T->pack_rows && nr == 1 && nk == 1 && L % V == 0 && (L / V == 8 || L / V == 16 || L / V == 32) &&
        kgi_aligned(in->data, 16))
        return 0;
    int64_t g = pow2_floor(L / 2 > 1 ? L / 2 : 1);
    if (g > 32)
        g = 32;
    if (T->tile_banks) /* enough lanes that a tile's rows fill the block */
        g = tile_lanes(L, es, pow2_ceil(cdiv(L * KG_RED_THREADS, E)));
    const int64_t mr = E / (2 * KG_RED_THREADS);
    int64_t rows = E / L;
    if (rows > mr * (KG_RED_THREADS / g))
        rows = mr * (KG_RED_THREADS / g);
    if (rows > K[0].size)
        rows = K[0].size;
    if (rows * L < T->tile_min_elems)
        return 0;
    static const dim one = {1, 0, 0, 0}; /* no reduced dim outside the runs: one position */
    plan->cls = KG_RED_TILE;
    const int64_t outer = n_out / K[0].size;
    fill_outer_of_run(A, K, nk, outer);
    A->run = L;
    A->inner = K[0].size;
    A->inner_out = K[0].out;
    A->inner_idx = K[0].idx;
    A->group = (int32_t)g;
    A->tile_rows = rows;
    A->tiles = cdiv(K[0].size, rows);
    fill_walk(&A->walk, nr > 1 ? D + 1 : &one, nr > 1 ? nr - 1 : 1, 1, 1);
    w->groups = smul(outer, A->tiles);
    w->per_group = rows;
    w->red = red / L;
    if (smul(w->groups, 2) < target && w->red >= 8)
        w->min_chunk = 2;
    return 1;
}

/* SLAB (tuning slab, templates/reduce_slab.cuh): value reductions of
   elements of at most 4 bytes whose reduced dim D[0] of R rows lies right
   outside C <= slab_max_cols contiguous kept columns (C <= the block's
   threads; the columns: K[0] of stride 1 and the kept dims whose input
   strides chain with it, a, whatever their values strides), the [R, C]
   slabs dense along K[a] (stride R x C); further reduced dims walked
   outside (at most KG_RED_WALK_DIMS), further kept dims as outer positions.
   A tile holds the most whole slabs of K[a] that fit slab_bytes (at most
   KG_RED_SLAB_BYTES) and give a thread at most KG_RED_SLAB_OUTS outputs (a
   thread takes one column of every P-th slab, P = threads / C). No splits:
   taken only where the tiles give each multiprocessor slab_min_units units,
   over elements of slab_es bytes (0: any) in slabs of at most slab_max_rows
   rows, and never where an output reduces more than KG_RED_CHAIN_MAX
   elements (a thread sums them in one chain); with slab_min_tile, only
   where a tile holds at least that many elements.
   Returns 0 (and plans nothing) elsewhere. */
static int plan_slab(kg_red_plan *plan, const dim *K, int nk, const dim *D, int nr, int64_t red, int64_t n_out,
                     size_t es, int indexed, int64_t sm, const kg_red_tuning *T, shape_of_work *w)
{
    kg_red_args *A = &plan->args;
    if (!T->slab || indexed || es > 4 || (T->slab_es > 0 && es != (size_t)T->slab_es) || nk < 2 || nr < 1 ||
        nr - 1 > KG_RED_WALK_DIMS || K[0].in != 1)
        return 0;
    int a = 1; /* the column dims: K[0 .. a) */
    int64_t C = K[0].size;
    while (a < nk - 1 && K[a].in == C && K[a].in != D[0].in) {
        C = smul(C, K[a].size);
        a++;
    }
    const int64_t bytes = T->slab_bytes > 0 && T->slab_bytes < KG_RED_SLAB_BYTES ? T->slab_bytes : KG_RED_SLAB_BYTES;
    const int64_t R = D[0].size, E = bytes / (int64_t)es;
    if (D[0].in != C || K[a].in != smul(C, R) || C > T->slab_max_cols || C > KG_RED_THREADS || R < 2 ||
        R > T->slab_max_rows || C * R > E || (T->slab_max_walk > 0 && red / R > T->slab_max_walk) ||
        red > KG_RED_CHAIN_MAX)
        return 0;
    int64_t S = E / (C * R);
    if (S > KG_RED_THREADS / C * KG_RED_SLAB_OUTS)
        S = KG_RED_THREADS / C * KG_RED_SLAB_OUTS;
    if (S > K[a].size)
        S = K[a].size;
    if (T->slab_min_tile > 0 && smul(smul(S, C), R) < T->slab_min_tile)
        return 0;
    const int64_t outer = n_out / C, tiles = cdiv(K[a].size, S), groups = smul(outer / K[a].size, tiles);
    if (groups < smul(sm, T->slab_min_units))
        return 0;
    static const dim one = {1, 0, 0, 0}; /* no reduced dim outside the slabs: one position */
    plan->cls = KG_RED_SLAB;
    A->fast = outer < ((int64_t)1 << 31);
    fill_dims(&A->outer, K + a, nk - a, A->fast);
    A->n_out = outer;
    fill_dims(&A->rdims, K, a, 0);
    A->run = R;
    A->cw = (int32_t)C;
    A->inner = K[a].size;
    A->tile_rows = S;
    A->tiles = tiles;
    fill_walk(&A->walk, nr > 1 ? D + 1 : &one, nr > 1 ? nr - 1 : 1, 1, 1);
    w->groups = groups;
    w->per_group = S * C;
    w->red = red / R;
    return 1;
}

/* TRANS (tuning trans, templates/reduce_trans.cuh): value reductions of
   elements of at most 4 bytes over a walk of at most KG_RED_WALK_DIMS
   reduced dims whose input-innermost kept dim K[0] is not the values'
   innermost: the kept dim of the least values stride K[j] (j > 0) gives the
   output-contiguous side (ko), K[0] and the kept dims below K[j] whose input
   strides chain with it the input-contiguous side (ki), the other kept dims
   outer positions. Taken where both sides hold at least trans_min_side
   outputs, the tiles of 32 x 32 outputs give each multiprocessor
   trans_min_units units and an output reduces at most trans_max_red
   elements (never more than KG_RED_CHAIN_MAX: a thread sums them in one
   chain). Two extensions (session 38; defaults since its round s38r2,
   with trans_min_util 70: only where a 32 x 32 tile holds 70% outputs):
   - trans_run: K[0] need not be the input's innermost dim: a reduced run
     D[0] of L <= trans_run contiguous elements may lie under it (K[0]'s
     input stride L; args.cw = L, the ki side's input offset ki L; the run
     is the walk's dim 0, so a warp reads 32 L contiguous elements a
     position). Such plans (outputs scattered in the input's order, each
     reducing a few contiguous elements) otherwise end as NEST, TILE or
     ROWS, whose lanes write outputs one at a time.
   - trans_ko2: where K[j] holds fewer than trans_ko2 outputs, the kept dim
     whose values stride continues K[j]'s (values stride K[j].out K[j].size)
     joins it on the ko side (args.vstore = K[j].size, args.run its input
     stride: ko output k at input offset (k % n1) K[j].in + (k / n1) in2,
     values offset k K[j].out), e.g. [.., 23, 2] outputs of which only the
     2 are contiguous.
   Returns 0 (and plans nothing) elsewhere. */
static int plan_trans(kg_red_plan *plan, const dim *K, int nk, const dim *D, int nr, int64_t red, int64_t n_out,
                      size_t es, int indexed, int64_t sm, const kg_red_tuning *T, shape_of_work *w)
{
    kg_red_args *A = &plan->args;
    if (!T->trans || indexed || es > 4 || nk < 2 || nr < 1 || nr > KG_RED_WALK_DIMS || K[0].out <= 0 ||
        red > T->trans_max_red || red > KG_RED_CHAIN_MAX)
        return 0;
    int64_t L = 1; /* the reduced run under K[0] (trans_run) */
    if (K[0].in != 1) {
        if (!T->trans_run || D[0].in != 1 || D[0].size < 2 || D[0].size > T->trans_run || K[0].in != D[0].size)
            return 0;
        L = D[0].size;
    }
    int jo = 0;
    for (int i = 1; i < nk; i++)
        if (K[i].out > 0 && K[i].out < K[jo].out)
            jo = i;
    if (jo == 0)
        return 0;
    int j2 = -1; /* trans_ko2: the kept dim continuing K[jo]'s values stride (not K[0]) */
    if (T->trans_ko2 > 0 && K[jo].size < T->trans_ko2)
        for (int i = 1; i < nk; i++)
            if (i != jo && K[i].out == smul(K[jo].out, K[jo].size))
                j2 = i;
    int a = 1; /* the ki dims: K[0 .. a), up to the first ko dim */
    while (a < jo && a != j2 && K[a].in == smul(K[a - 1].in, K[a - 1].size))
        a++;
    int64_t ki = 1;
    for (int i = 0; i < a; i++)
        ki = smul(ki, K[i].size);
    const int64_t TT = KG_RED_TRANS_TILE, nko = j2 >= 0 ? smul(K[jo].size, K[j2].size) : K[jo].size,
                  outer = n_out / ki / nko;
    if (nko < T->trans_min_side || ki < T->trans_min_side)
        return 0;
    /* trans_min_util: the extensions' tiles at least that many percent
       outputs (a 32 x 32 tile of 16 x 17 outputs idles 3 lanes in 4) */
    if ((L > 1 || j2 >= 0) && T->trans_min_util > 0 &&
        100.0 * (double)ki / (double)(TT * cdiv(ki, TT)) * (double)nko / (double)(TT * cdiv(nko, TT)) <
            (double)T->trans_min_util)
        return 0;
    const int64_t units = smul(smul(outer, cdiv(ki, TT)), cdiv(nko, TT));
    if (units < smul(sm, T->trans_min_units))
        return 0;
    dim O[KG_MAX_DIMS];
    int no = 0;
    for (int i = a; i < nk; i++)
        if (i != jo && i != j2)
            O[no++] = K[i];
    plan->cls = KG_RED_TRANS;
    A->fast = n_out < ((int64_t)1 << 31);
    fill_dims(&A->outer, O, no, A->fast);
    A->n_out = outer;
    fill_dims(&A->rdims, K, a, A->fast);
    A->inner = ki;
    A->tiles = cdiv(ki, TT);
    A->tile_rows = nko;
    A->inner_out = K[jo].out;
    A->inner_idx = K[jo].in;
    if (L > 1)
        A->cw = (int32_t)L;
    if (j2 >= 0) {
        A->vstore = (int32_t)K[jo].size;
        A->run = K[j2].in;
    }
    fill_walk(&A->walk, D, nr, 1, 1);
    w->groups = units;
    w->per_group = TT * TT;
    w->red = red;
    return 1;
}

/* The input's lowest and highest element offsets from its data pointer
   (the geometry was checked: no sum overflows). */
static void input_extent(const kg_tensor *in, int64_t *lo, int64_t *hi)
{
    *lo = *hi = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (in->shape[d] <= 1)
            continue;
        const int64_t span = (in->shape[d] - 1) * in->strides[d];
        if (span < 0)
            *lo += span;
        else
            *hi += span;
    }
}

/* NEST over covering vectors (nest_cover, KG_RED_NEST_COVER): runs D[0] of
   L contiguous elements that do not move in whole vectors, each covered by
   the aligned 16-byte vectors that hold it (dim 0 of the walk: NV vectors of
   V elements). Returns 0 (and plans nothing) where it does not apply. */
static int plan_nest_cover(kg_red_plan *plan, const kg_tensor *in, const dim *D, int nr, int64_t red, int64_t n_out,
                           size_t es, int64_t lanes_full, int indexed, const kg_red_tuning *T, shape_of_work *w)
{
    kg_red_args *A = &plan->args;
    const int64_t V = 16 / (int64_t)es;
    if (!T->nest_cover || (T->nest_cover_occ && T->nest_occ != 4) || indexed || V < 2 || nr < 1 ||
        nr > KG_RED_WALK_DIMS || D[0].in != 1 || !kgi_aligned(in->data, es))
        return 0;
    const int64_t L = D[0].size;
    if (L < (T->nest_cover_min > 0 ? T->nest_cover_min : V) || L >= ((int64_t)1 << 30))
        return 0;
    const int64_t nv = (L + 2 * V - 2) / V, runs = red / L, pos = smul(nv, runs);
    dim C[KG_RED_WALK_DIMS];
    for (int d = 0; d < nr; d++)
        C[d] = D[d];
    C[0].size = nv;
    C[0].in = V;
    int64_t g = lanes_for(pos);
    int64_t min_chunk = 0;
    if (smul(n_out, g) < lanes_full && pos > 32 * 8) {
        g = KG_RED_THREADS;
        min_chunk = KG_RED_THREADS * 8;
    }
    kg_red_walk walk;
    fill_walk(&walk, C, nr, 1, g);
    if (!walk_fits32(&walk))
        return 0;
    A->vec = KG_RED_NEST_COVER;
    A->cw = T->nest_cover_whole && smul(L, (int64_t)es) >= T->nest_cover_whole_bytes &&
                    (int64_t)es >= T->nest_cover_whole_es
                ? 1
                : 0;
    A->group = (int32_t)g;
    A->walk = walk;
    A->deep = 0;
    A->run = L;
    A->tiles = pos;
    input_extent(in, &A->inner_out, &A->inner_idx);
    w->red = pos;
    w->min_chunk = min_chunk;
    w->align = 1;
    return 1;
}

static void plan_nest_class(kg_red_plan *plan, const kg_tensor *in, const dim *K, int nk, const dim *D, int nr,
                            int64_t red, int64_t n_out, size_t es, int64_t lanes_full, int64_t M,
                            const kg_red_tuning *T, int short_rows, int indexed, shape_of_work *w)
{
    kg_red_args *A = &plan->args;
    const int64_t V = 16 / (int64_t)es;
    /* vectors: the inner run contiguous, every start aligned */
    const int vec = nest_moves_vectors(in, K, nk, D, nr, es);
    const int64_t vu = vec ? V : 1, items = red / vu;
    plan->cls = KG_RED_NEST;
    fill_dims(&A->outer, K, nk, A->fast);
    A->n_out = n_out;
    A->vec = vec && es == 2 && T->nest_words ? 2 : vec;
    if (!vec && (!short_rows || T->nest_cover_rows) &&
        plan_nest_cover(plan, in, D, nr, red, n_out, es, lanes_full, indexed, T, w))
        return;
    int64_t g = lanes_for(items);
    /* one lane per output, M outputs per lane (args.cw; nest_multi_of) */
    const int multi = M > 1;
    if (multi && ((items <= T->nest_g1_items && nk >= 1 && K[0].in == 1) || short_rows))
        g = 1; /* neighbouring lanes read neighbouring elements, or short rows (rows_multi) */
    if (smul(n_out, g) < lanes_full && items > 32 * 8) {
        g = KG_RED_THREADS;
        w->min_chunk = KG_RED_THREADS * vu * 8;
        w->align = vu;
    }
    A->group = (int32_t)g;
    if (g == 1 && multi)
        A->cw = (int32_t)M;
    fill_walk(&A->walk, D, nr, vu, g);
    A->deep = !vec && T->deep_walk && walk_fits32(&A->walk);
    /* nest_multi_plain: value reductions' lanes of several outputs over
       elements of that size walk without the narrow walk, in the 4-block
       kernel (nest_occ). H200 s21r2, same process, us, narrow / plain:
       bf16 #174 26.4 / 18.6, #70 47.4 / 38.5, #8 133.2 / 117.6; f32 and
       i32 lost (#62 99.6 / 165.1, #48 92.5 / 135.8, #133 156.2 / 197.9,
       #87 48.1 / 55.0; #67 57.2 / 52.0 the one win): 2-byte elements only */
    if (g == 1 && multi && !indexed && (T->nest_multi_plain == 1 || (T->nest_multi_plain == 2 && es == 2)))
        A->deep = 0;
}

static void plan_strided(kg_red_plan *plan, const dim *K, int nk, const dim *D, int nr, int64_t red, int64_t n_out,
                         int64_t lanes_full, shape_of_work *w)
{
    kg_red_args *A = &plan->args;
    int64_t maxoff = 0; /* at most the input's extent (checked) */
    for (int d = 0; d < nr; d++)
        maxoff += (D[d].size - 1) * D[d].in;
    const int small = red < ((int64_t)1 << 31) && maxoff < ((int64_t)1 << 31);
    int64_t g = pow2_floor(red / 4 > 1 ? red / 4 : 1);
    if (g > 32)
        g = 32;
    if (nk > 0 && K[0].in < D[0].in)
        g = 1; /* neighbouring outputs are closer in memory than reduced elements */
    plan->cls = small ? KG_RED_STRIDED32 : KG_RED_STRIDED64;
    fill_dims(&A->outer, K, nk, A->fast);
    fill_dims(&A->rdims, D, nr, small);
    A->n_out = n_out;
    A->group = (int32_t)g;
    if (smul(n_out, g) < lanes_full && red > 32 * 4 * 4) {
        A->group = KG_RED_THREADS;
        w->min_chunk = KG_RED_THREADS * 4;
    }
}

/* ---- occupancy ----------------------------------------------------------- */

/* COLS and NEST value reductions whose walk fits 32-bit arithmetic: the
   kernels at more blocks per multiprocessor (kg_reduce_params.h: COLSO,
   COLSP, NESTO; COLSNO, NESTNO for narrow walks; fewer loads in flight per
   lane, more lanes). NEST (nest_occ) and narrow walks (narrow_occ) here,
   before the split (NEST's split waves count resident blocks); COLS
   (cols_occ) after the grid, only where it holds more than cols_occ_blocks
   blocks per multiprocessor (where the 2-block kernel already holds every
   block, its 8 loads in flight per lane won: H200 run r1 of 2026-12-02,
   below). */
static void plan_occ(kg_red_plan *plan, const kg_red_info *info, const kg_red_tuning *T)
{
    const kg_red_args *A = &plan->args;
    plan->occ = 0;
    if (info->indexed || (plan->cls != KG_RED_COLS && plan->cls != KG_RED_NEST) || !walk_fits32(&A->walk))
        return;
    /* narrow NEST lanes of several outputs keep their 16 loads in flight
       at 3 blocks (r2: 4 blocks with 8 lost 66.4 -> 54.7%, 66.8 -> 57.2%) */
    const int multi = plan->cls == KG_RED_NEST && A->group == 1 && A->cw > 1;
    if (plan->cls == KG_RED_NEST && A->vec == KG_RED_NEST_COVER && !T->nest_cover_occ)
        return; /* the 2-block kernel */
    if (A->deep ? T->narrow_occ == 4 && !multi : plan->cls == KG_RED_NEST && T->nest_occ == 4)
        plan->occ = 4;
}

/* FLATW (flat_warp_occ): the kernel at 4 blocks per multiprocessor
   (FLATWO). FLATW keeps KG_RED_FLAT_MIN_BLOCKS resident, and its grid holds
   at least flat_warp_units warps per multiprocessor (3 blocks at the default
   24): a grid just above that runs a partial second wave. */
static void plan_occ_flatw(kg_red_plan *plan, const kg_red_tuning *T)
{
    if (plan->cls == KG_RED_FLAT && plan->args.group == 32 && T->flat_warp_occ == 4 && plan->args.tile_rows == 0)
        plan->occ = 4;
}

/* 1 where a COLS plan may take the kernel of cols_occ (whatever its grid). */
static int cols_occ_applies(const kg_red_plan *plan, const kg_red_info *info, kg_dtype dt, const kg_red_tuning *T)
{
    const kg_red_args *A = &plan->args;
    if (plan->cls != KG_RED_COLS || A->deep || info->indexed || (T->cols_occ != 3 && T->cols_occ != 4) ||
        !walk_fits32(&A->walk))
        return 0;
    /* 4 strided columns of 8-byte accumulators (i32 sums and the like)
       spill at 64 registers (48 bytes; 8 for f32): r2 lost on 4 of its 9
       such cases (82.2 -> 68.7%, 56.9 -> 49.9%), net -17.6 points */
    return !(A->vec == KG_RED_CV_STRIDED && info->acc_size[dt] == 8 && !T->cols_occ_wide);
}

/* cols_strided_occ (session 33's sp3w; 4 is the default since session 34's
   H100 round s34r1): f16 / bf16 COLS plans in the strided mode that
   cols_occ's rule sends to colso take colsp instead: 3 always (a tuning,
   and the plan 4 picks from), 4 where its waves do not grow
   (kg_reduce_plan_tuned). In the strided mode a lane loads one element per
   load, so colso's 4 rows of 4 columns keep 32 bytes a lane in flight over
   2-byte elements (32 KB a multiprocessor; f32 in the same plan 64 KB);
   colsp keeps 8 rows (48 KB a multiprocessor at 3 blocks). Session 31's sp3
   (every strided colso plan in colsp) gained on the bf16 rows (H100 s31r1:
   #71 x1.15, #40 1.09, #215 1.08, #162 1.07) and lost where 3 blocks turned
   one wave of 4 into two (#42 512 blocks 0.94, #92 525 0.92) and on f32
   (colsp spills more at 4 bytes). s34r1 (H100, bf16): under 4 the 27 rows
   it changes x1.047 geomean (#71 1.087, worst #738 0.985), the rows it
   leaves x1.00; under 3 #92 0.91 and #42 0.94 again. The split fill counts
   colsp's 3 resident blocks (cols_resident), as sp3's did. */
static int cols_occ_of(const kg_red_plan *plan, kg_dtype dt, const kg_red_tuning *T)
{
    if ((T->cols_strided_occ == 3 || T->cols_strided_occ == 4) && plan->args.vec == KG_RED_CV_STRIDED &&
        (dt == KG_F16 || dt == KG_BF16))
        return 3;
    return T->cols_occ;
}

static void plan_occ_cols(kg_red_plan *plan, const kg_red_info *info, kg_dtype dt, int64_t sm, const kg_red_tuning *T)
{
    if (plan->cls == KG_RED_COLS && plan->args.run > 1 && plan->args.vec != KG_RED_CV_SCALAR) {
        plan->occ = 3; /* cols_runs_vec: the colsp kernel has the run fold (s20r2: colsp won) */
        return;
    }
    const int64_t least = smul(sm, T->cols_occ_blocks > 0 ? T->cols_occ_blocks : 0);
    if ((int64_t)plan->grid <= least || !cols_occ_applies(plan, info, dt, T))
        return;
    plan->occ = cols_occ_of(plan, dt, T);
}

/* Resident blocks per multiprocessor of the kernel a COLS plan will take
   (where its split fills whole waves, cols_occ's kernel takes it). */
static int64_t cols_resident(const kg_red_plan *plan, const kg_red_info *info, kg_dtype dt, const kg_red_tuning *T)
{
    if (plan->args.run > 1 && plan->args.vec != KG_RED_CV_SCALAR) /* cols_runs_vec (plan_occ_cols) */
        return KG_RED_OCC3_MIN_BLOCKS;
    if (cols_occ_applies(plan, info, dt, T))
        return cols_occ_of(plan, dt, T) == 3 ? KG_RED_OCC3_MIN_BLOCKS : KG_RED_OCC_MIN_BLOCKS;
    if (plan->args.deep) /* COLSNO at 4 (plan_occ), COLSN at 3 */
        return T->narrow_occ == 4 && !info->indexed ? KG_RED_OCC_MIN_BLOCKS : KG_RED_NARROW_MIN_BLOCKS;
    return KG_RED_WALK_MIN_BLOCKS;
}

/* A COLS plan over column runs: runs of reduced elements under the columns,
   further reduced dims in rdims (the run path of reduce.cuh) */
static int cols_over_runs(const kg_red_args *A) { return A->run > 1 && A->rdims.n > 0; }

/* Splits that fill cols_split_fill waves of the kernel's resident blocks
   over `groups` tiles (0 where cols_split_fill is off). */
static int64_t cols_fill(const kg_red_plan *plan, const kg_red_info *info, kg_dtype dt, int64_t sm, int64_t groups,
                         const kg_red_tuning *T)
{
    if (T->cols_split_fill <= 0)
        return 0;
    return smul(smul(sm, cols_resident(plan, info, dt, T)), T->cols_split_fill) / (groups > 0 ? groups : 1);
}

/* ---- split --------------------------------------------------------------- */

/* Splits of `red` elements per group so that groups x splits reaches about
   `target` units, each split at least `min_chunk` (a multiple of `align`)
   elements. Sets chunk and returns the split count (1..MAX_SPLITS). */
static int64_t split(int64_t groups, int64_t red, int64_t target, int64_t min_chunk, int64_t align, int64_t *chunk)
{
    int64_t s = cdiv(target, groups > 0 ? groups : 1);
    const int64_t most = cdiv(red, min_chunk);
    if (s > most)
        s = most;
    if (s > MAX_SPLITS)
        s = MAX_SPLITS;
    if (s < 1)
        s = 1;
    int64_t c = smul(cdiv(cdiv(red, s), align), align);
    if (c < 1)
        c = 1;
    *chunk = c;
    const int64_t n = cdiv(red, c);
    return n > 0 ? n : 1;
}

static void plan_split(kg_red_plan *plan, const kg_red_info *info, kg_dtype dt, int64_t sm, int64_t target,
                       const kg_red_tuning *T, const shape_of_work *w)
{
    kg_red_args *A = &plan->args;
    if (plan->cls == KG_RED_FLAT || plan->cls == KG_RED_RUNT || plan->cls == KG_RED_SEGW)
        return; /* split by plan_flat, plan_runt; SEGW: no splits */
    const int64_t red = w->red;
    const size_t entry = (size_t)info->acc_size[dt] + (info->indexed ? 8 : 0);
    A->splits = 1;
    A->chunk = red;
    if (w->min_chunk > 0) {
        int64_t chunk;
        const int cols = plan->cls == KG_RED_COLS;
        int64_t s =
            split(w->groups, red, cols ? sm * T->cols_split_units_per_sm : target, w->min_chunk, w->align, &chunk);
        /* whole blocks per output (ROWS, NEST, STRIDED): split_waves waves
           of the kernel's resident blocks at most (each block streams a
           long chunk; few last-block combines) */
        if (!cols && plan->cls != KG_RED_TILE && T->split_waves > 0) {
            const int64_t resident = plan->cls != KG_RED_NEST ? KG_RED_MIN_BLOCKS
                                     : plan->occ              ? KG_RED_OCC_MIN_BLOCKS
                                     : A->deep                ? KG_RED_NARROW_MIN_BLOCKS
                                                              : KG_RED_WALK_MIN_BLOCKS;
            const int64_t units = smul(smul(sm, resident), T->split_waves);
            int64_t want = units / (w->groups > 0 ? w->groups : 1);
            if (want < 1)
                want = 1;
            const int64_t most = cdiv(red, w->min_chunk) < MAX_SPLITS ? cdiv(red, w->min_chunk) : MAX_SPLITS;
            if (want > most)
                want = most;
            chunk = smul(cdiv(cdiv(red, want), w->align), w->align);
            s = cdiv(red, chunk);
        }
        /* vector columns split more than 64 ways: fewer splits (the last
           block's combine reads splits / lanes-down partials in a row) */
        if (cols && A->vec != KG_RED_CV_SCALAR && T->cols_split_units_per_sm_vec > 0 && s > 64)
            s = split(w->groups, red, sm * T->cols_split_units_per_sm_vec, w->min_chunk, w->align, &chunk);
        /* cols_split_fill: whole waves of the kernel's resident blocks */
        int fill = cols && T->cols_split_fill > 0 && T->splits <= 0;
        if (fill) {
            int64_t f = cols_fill(plan, info, dt, sm, w->groups, T);
            /* the last block's combine reads splits / lanes-down partials
               per lane, two at a time: at most 8 such rounds */
            const int64_t ny = KG_RED_THREADS / (A->cw > 0 ? A->cw : 1);
            if (f > 16 * ny)
                f = 16 * ny;
            /* cols_runs_fill_grid: tiles over column runs (wide tiles, few
               lanes down) keep the split above where the fill would leave
               fewer blocks than multiprocessors (at least one split a tile) */
            if (T->cols_runs_fill_grid > 0 && cols_over_runs(A) && smul(w->groups, f > 1 ? f : 1) < sm)
                fill = 0;
            else
                s = f;
        }
        if (T->splits > 0 || cols) {
            const int64_t most = cdiv(red, w->min_chunk) < MAX_SPLITS ? cdiv(red, w->min_chunk) : MAX_SPLITS;
            s = T->splits > 0 ? T->splits : T->cols_split_pow2 && !fill ? pow2_floor(s) : s;
            if (s < 1)
                s = 1;
            if (s > most)
                s = most;
            chunk = smul(cdiv(cdiv(red, s), w->align), w->align);
            s = cdiv(red, chunk);
        }
        s = fit_partials(w->groups, w->per_group, red, s, entry, w->align, &chunk);
        if (s > 1 && w->groups <= KG_RED_MAX_SEMAPHORES) {
            A->splits = (int32_t)s;
            A->chunk = chunk;
            /* at most KG_RED_PARTIAL_BYTES (fit_partials) */
            const size_t vals = (size_t)(w->groups * s * w->per_group) * (size_t)info->acc_size[dt];
            plan->partial_idx_at = (vals + 255) / 256 * 256;
            plan->partial_bytes =
                plan->partial_idx_at + (info->indexed ? (size_t)(w->groups * s * w->per_group) * 8 : 0);
        }
    }
    A->units = smul(w->groups, A->splits);
}

/* ---- grid ---------------------------------------------------------------- */

static void plan_grid(kg_red_plan *plan, int64_t n_out, int64_t sm, const kg_red_tuning *T)
{
    kg_red_args *A = &plan->args;
    int64_t blocks;
    if (plan->cls == KG_RED_PACKED) {
        A->units = cdiv(n_out, 32 / A->group * KG_RED_PACK); /* a warp's rows */
        blocks = cdiv(A->units, KG_RED_THREADS / 32);
    } else if ((plan->cls == KG_RED_FLAT && A->group == 32) || plan->cls == KG_RED_SEGW) {
        blocks = cdiv(A->units, KG_RED_THREADS / 32); /* a warp per unit (FLATW, SEGW) */
    } else if (plan->cls == KG_RED_COLS || plan->cls == KG_RED_TILE || plan->cls == KG_RED_FLAT ||
               plan->cls == KG_RED_SLAB || plan->cls == KG_RED_TRANS || plan->cls == KG_RED_RUNT ||
               A->group == KG_RED_THREADS) {
        blocks = A->units;
    } else if (plan->cls == KG_RED_NEST && A->group == 1 && A->cw > 1) {
        blocks = cdiv(cdiv(A->units, A->cw), KG_RED_THREADS); /* A->cw outputs per lane */
    } else {
        blocks = cdiv(smul(A->units, A->group), KG_RED_THREADS);
    }
    const int per_sm = plan->cls == KG_RED_PACKED ? T->packed_blocks_per_sm : T->blocks_per_sm;
    const int64_t cap = sm * (per_sm > 0 ? per_sm : 1);
    plan->grid = (unsigned)(blocks < cap ? (blocks > 0 ? blocks : 1) : cap);
}

/* COLSQ (cols_pair): a COLS plan of the 4-block kernel over vectors of
   columns with one lane down each column (cw = KG_RED_THREADS), unsplit,
   over at most cols_pair_rows rows and at least two column tiles per outer
   position takes two tiles per unit: half the units, each lane's loads of
   both tiles in flight at once (a short walk of 3 rows under 4096 f32
   columns was 3 loads a lane per unit; ncu s16r1: 0.63 issued per
   scheduler, DRAM 48%). Not where the units of two tiles would make one
   wave of the kernel's resident blocks and a few more (each block one unit:
   two units' time for the whole call). H200 s16r2, same process, us, COLSO
   / COLSQ: sum f32 [2048,3,4096] axis 1 53.5 / 35.8, [7,1048576] axis 0
   11.5 / 8.4, bf16 [9,15,122,255,16] axis 0 61.7 / 52.6; bf16
   [15,2237,1000] axis 0 (547 units of two tiles on 528 resident blocks)
   31.7 / 32.7. */
static void plan_cols_pair(kg_red_plan *plan, int64_t n_out, int64_t sm, const kg_red_tuning *T)
{
    kg_red_args *A = &plan->args;
    if (!T->cols_pair || plan->cls != KG_RED_COLS || plan->occ != 4 || A->deep || A->cw != KG_RED_THREADS ||
        A->rdims.n > 0 ||
        A->splits != 1 || A->run != 1 || (A->vec != KG_RED_CV_VEC && A->vec != KG_RED_CV_WIDE32) || A->tiles < 2 ||
        A->red > T->cols_pair_rows)
        return;
    const int64_t units = smul(A->n_out, cdiv(A->tiles, 2)), wave = smul(sm, KG_RED_OCC_MIN_BLOCKS);
    if (T->cols_pair == 1 && units > wave && units < 2 * wave)
        return;
    A->group = 2;
    A->tiles = cdiv(A->tiles, 2);
    A->units = units;
    plan_grid(plan, n_out, sm, T);
}

/* trans_vec (default 128 since session 35's H100 round s35r2): a TRANS plan
   of bf16 elements (f16: trans_vec_f16, default 128 since session 35's H100
   round s35r4; 0 keeps TRANS's own kernel) whose input-contiguous side (ki, A.inner) holds at least
   trans_vec outputs and whose outputs reduce at most KG_RED_TRANSV_POS walk
   positions reads that side in 16-byte vectors, each row aligned at its
   first walk position (kernel TRANSV, templates/reduce_transv.cuh; a later
   position off 16 bytes in 8- or 4-byte loads, or element by element at 2
   bytes off 4): tiles of TKI = KG_RED_TRANSV_VECS x 8 ki by
   KG_RED_TRANSV_ROWS ko outputs (A.tiles ki tiles), args.vec 1, args.chunk
   and args.run the input's lowest and highest element offsets (a vector
   reaching past them is read element by element). TRANS reads one 2-byte
   element a load (a warp 64 bytes, 16 loads a lane in flight at 4 blocks a
   multiprocessor: about 32 KB a multiprocessor, half of it for the last
   position of a walk of 5); sweep #77 bf16 [33,1695,5,96,5]p axis 4 (ki
   55935, ko 480, 5 positions 53.7 MB apart) ran at 40% of copy. */
static void plan_trans_vec(kg_red_plan *plan, const kg_tensor *in, int64_t n_out, int64_t sm, const kg_red_tuning *T)
{
    kg_red_args *A = &plan->args;
    /* bf16 under trans_vec, f16 under trans_vec_f16 (the kernels of both
       modules are the same template; value ops only: TRANS takes no index
       reduction, and the transv modules have no index kernels) */
    const int bound = in->dtype == KG_BF16 ? T->trans_vec : in->dtype == KG_F16 ? T->trans_vec_f16 : 0;
    if (!bound || plan->cls != KG_RED_TRANS || A->inner < bound || A->red > KG_RED_TRANSV_POS || A->splits != 1 ||
        A->cw > 1 || A->vstore > 0) /* (trans_run's and trans_ko2's sides: TRANS's own kernel) */
        return;
    int64_t lo, hi;
    input_extent(in, &lo, &hi);
    const int64_t TKI = KG_RED_TRANSV_VECS * 8, TKO = KG_RED_TRANSV_ROWS;
    A->vec = 1;
    A->tiles = cdiv(A->inner, TKI);
    A->units = smul(smul(A->n_out, A->tiles), cdiv(A->tile_rows, TKO));
    A->chunk = lo;
    A->run = hi;
    plan_grid(plan, n_out, sm, T);
}

/* cols_vstore: a COLS plan in vectors of a value reduction stores each
   lane's adjacent results as one vector where the values are contiguous
   along the columns and every lane's vector place is aligned to its size
   (s16r1 ncu of sum [2048,3,4096] axis 1 f32: L2 86% busy at 48% of DRAM,
   the results one 4-byte store per column); 1: 2-byte elements only, 2:
   every size. H200 s16r3, same process, us, default / vector stores: bf16
   #217 [15,2237,1000] axis 0 31.6 / 26.4, #94 52.1 / 48.9, #4 49.1 / 47.4,
   #112 18.2 / 17.5, #160 15.4 / 15.2, #15 35.0 / 35.1; 4-byte elements
   within 1% either way on 17 cases (#21 24.7 / 25.0, [64,4194304] 257.7 /
   251.7). */
static void plan_vstore(kg_red_plan *plan, const kg_red_info *info, const kg_tensor *out, kg_dtype dt,
                        const kg_red_tuning *T)
{
    kg_red_args *A = &plan->args;
    if (!T->cols_vstore || (T->cols_vstore == 1 && kg_dtype_size(dt) != 2) || plan->cls != KG_RED_COLS ||
        info->indexed || !out || A->inner_out != 1 || A->run != 1 ||
        (A->vec != KG_RED_CV_VEC && A->vec != KG_RED_CV_WIDE && A->vec != KG_RED_CV_WIDE32 &&
         A->vec != KG_RED_CV_VEC32))
        return;
    const int64_t V = kg_red_cols_per_lane(A->vec, kg_dtype_size(dt));
    int ok = kgi_aligned(out->data, (size_t)V * kg_dtype_size(info->out[dt]));
    for (int d = 0; d < A->outer.n; d++)
        ok = ok && A->outer.out[d] % V == 0;
    A->vstore = ok;
}

/* ---- the planner --------------------------------------------------------- */

kg_status kg_reduce_plan(kg_context *ctx, kg_reduce_op op, const kg_tensor *out, const kg_tensor *indices,
                         const kg_tensor *in, const int *axes, int n_axes, int keepdim, int sm_count, kg_red_plan *plan)
{
    return kg_reduce_plan_tuned(ctx, op, out, indices, in, axes, n_axes, keepdim, sm_count, NULL, plan);
}

static kg_status plan_tuned(kg_context *ctx, kg_reduce_op op, const kg_tensor *out, const kg_tensor *indices,
                            const kg_tensor *in, const int *axes, int n_axes, int keepdim, int sm_count,
                            const kg_red_tuning *T, kg_red_plan *plan);

/* cols_strided_occ 4 (the default): the plan of cols_strided_occ 3 (f16 /
   bf16 strided columns in colsp, the split fill at 3 blocks) where the plan
   of cols_strided_occ 0 is one of those in colso and colsp's grid needs no
   more waves of 3 blocks a multiprocessor than that grid of 4:
   ceil(g3 / 3 SMs) <= ceil(g4 / 4 SMs) (132 SMs: one-wave grids of
   397-528 blocks that stay at that size, sweep #42 512 and #92 525, would
   run a second wave; split grids re-filled at 3 blocks stay one wave; #71's
   656 blocks are two waves either way). Elsewhere the plan of 0. */
kg_status kg_reduce_plan_tuned(kg_context *ctx, kg_reduce_op op, const kg_tensor *out, const kg_tensor *indices,
                               const kg_tensor *in, const int *axes, int n_axes, int keepdim, int sm_count,
                               const kg_red_tuning *T, kg_red_plan *plan)
{
    if (!T)
        T = &kg_red_tuning_default;
    if (T->cols_strided_occ != 4)
        return plan_tuned(ctx, op, out, indices, in, axes, n_axes, keepdim, sm_count, T, plan);
    kg_red_tuning M = *T;
    M.cols_strided_occ = 0;
    const kg_status st = plan_tuned(ctx, op, out, indices, in, axes, n_axes, keepdim, sm_count, &M, plan);
    if (st != KG_OK || plan->empty || plan->cls != KG_RED_COLS || plan->occ != 4 ||
        plan->args.vec != KG_RED_CV_STRIDED || (in->dtype != KG_F16 && in->dtype != KG_BF16))
        return st;
    M.cols_strided_occ = 3;
    kg_red_plan p3;
    const int64_t sm = sm_count > 0 ? sm_count : 1;
    if (plan_tuned(ctx, op, out, indices, in, axes, n_axes, keepdim, sm_count, &M, &p3) == KG_OK && p3.occ == 3 &&
        p3.cls == KG_RED_COLS && p3.args.vec == KG_RED_CV_STRIDED &&
        cdiv(p3.grid, sm * KG_RED_OCC3_MIN_BLOCKS) <= cdiv(plan->grid, sm * KG_RED_OCC_MIN_BLOCKS))
        *plan = p3;
    return KG_OK;
}

static kg_status plan_tuned(kg_context *ctx, kg_reduce_op op, const kg_tensor *out, const kg_tensor *indices,
                            const kg_tensor *in, const int *axes, int n_axes, int keepdim, int sm_count,
                            const kg_red_tuning *T, kg_red_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    unsigned mask = 0;
    int64_t red = 0;
    kg_status st = plan_validate(ctx, op, out, indices, in, axes, n_axes, keepdim, plan, &mask, &red);
    if (st != KG_OK)
        return st;
    const kg_red_info *info = &kg_red_infos[op];
    const kg_dtype dt = in->dtype;
    const size_t es = kg_dtype_size(dt);

    dim K[KG_MAX_DIMS], D[KG_MAX_DIMS];
    int nk, nr;
    const int64_t n_out = plan_nest(out, indices, in, mask, keepdim, info->indexed, red, K, &nk, D, &nr);
    if (n_out == 0) {
        plan->empty = 1;
        return KG_OK;
    }

    kg_red_args *A = &plan->args;
    A->red = red;
    A->fast = n_out < ((int64_t)1 << 31);
    const int64_t sm = sm_count > 0 ? sm_count : 1;
    const int64_t target = sm * BLOCKS_PER_SM * 2;
    const int64_t lanes_full = sm * 1024;              /* half the resident threads */
    const int64_t multi = nest_multi_of(T, n_out, sm); /* NEST's outputs per lane */
    shape_of_work w = {n_out, 1, 0, 1, red};
    if (plan_segw(plan, info, dt, in, K, nk, D, nr, red, n_out, T))
        ;
    else if (T->run_tiles == 2 && plan_runt(plan, info, dt, in, K, nk, D, nr, red, n_out, sm, T))
        ;
    else if (plan_flatw_kept(plan, info, in, K, nk, D, nr, n_out, es, T, &w))
        ;
    else if (plan_flatw(plan, info, in, K, nk, D, nr, red, n_out, es, sm, T, !T->flatw_ragged_late, &w))
        ; /* flatw_ragged_late: no ragged blocks in the chain; they replace the flagged plans below */
    else if (T->trans_run && nk >= 1 && K[0].in != 1 &&
             plan_trans(plan, K, nk, D, nr, red, n_out, es, info->indexed, sm, T, &w))
        ; /* trans_run: a few contiguous reduced elements an output, outputs scattered in the input's order */
    else if (plan_tile(plan, in, K, nk, D, nr, red, n_out, es, info->indexed, target, T, &w))
        ;
    else if (nr == 1 && D[0].in == 1 && red <= T->rows_multi && multi > 1 && !packs_rows(T, in, K, nk, nr, red, es))
        plan_nest_class(plan, in, K, nk, D, nr, red, n_out, es, lanes_full, multi, T, 1, info->indexed, &w);
    else if (nr == 0 || (nr == 1 && D[0].in == 1))
        plan_rows(plan, in, K, nk, nr, red, n_out, es, lanes_full, T, &w);
    else if (plan_flat(plan, info, dt, K, nk, D, nr, red, n_out, es, sm, T, &w))
        ;
    else if (plan_slab(plan, K, nk, D, nr, red, n_out, es, info->indexed, sm, T, &w))
        ;
    else if (nk >= 1 && (K[0].in == 1 || D[0].in == 1) &&
             plan_cols(plan, in, K, nk, D, nr, red, n_out, es, target, multi, info->indexed, T, &w))
        ;
    else if (plan_trans(plan, K, nk, D, nr, red, n_out, es, info->indexed, sm, T, &w))
        ;
    else if (nr <= KG_RED_WALK_DIMS)
        plan_nest_class(plan, in, K, nk, D, nr, red, n_out, es, lanes_full, multi, T, 0, info->indexed, &w);
    else
        plan_strided(plan, K, nk, D, nr, red, n_out, lanes_full, &w);
    /* run_tiles: a COLS plan's scalar column run (one element a load) in
       RUNT's tiles of vectors where they apply */
    if (T->run_tiles && plan->cls == KG_RED_COLS && A->run > 1 && A->vec == KG_RED_CV_SCALAR && A->rdims.n == 0 &&
        A->tile_rows == 0) {
        const kg_red_plan keep = *plan;
        if (!plan_runt(plan, info, dt, in, K, nk, D, nr, red, n_out, sm, T))
            *plan = keep;
    }
    /* flatw_ragged_late: a COLS plan reading one column a lane (flag 1) or a
       NEST plan of 2-byte elements (flag 2) planned again as FLATW over
       ragged blocks where that applies (else kept as it was) */
    if (T->flatw_ragged_late && T->flatw_ragged &&
        (((T->flatw_ragged_late & 1) && plan->cls == KG_RED_COLS && A->vec == KG_RED_CV_SCALAR) ||
         ((T->flatw_ragged_late & 2) && plan->cls == KG_RED_NEST && es == 2))) {
        const kg_red_plan keep = *plan;
        const shape_of_work wkeep = w;
        plan_restart(plan, &keep, n_out, red, &w);
        if (!plan_flatw(plan, info, in, K, nk, D, nr, red, n_out, es, sm, T, 1, &w) || A->vec == 0) {
            *plan = keep;
            w = wkeep;
        }
    }
    /* slab_late_rows: a NEST plan planned again as SLAB over slabs of up to
       slab_late_rows rows where that applies (else kept as it was). Round
       c1 of session 44 (slab_max_rows 20 in the chain): SLAB won x1.10-2.20
       over half of 40 draws where it replaced NEST and lost x0.61-0.81
       where it replaced TRANS or COLS (and up to x0.025 over tiny tiles:
       slab_min_tile) */
    if (T->slab_late_rows > T->slab_max_rows && plan->cls == KG_RED_NEST) {
        const kg_red_plan keep = *plan;
        const shape_of_work wkeep = w;
        kg_red_tuning t2 = *T;
        t2.slab_max_rows = T->slab_late_rows;
        plan_restart(plan, &keep, n_out, red, &w);
        if (!plan_slab(plan, K, nk, D, nr, red, n_out, es, info->indexed, sm, &t2, &w)) {
            *plan = keep;
            w = wkeep;
        }
    }
    /* trans_first: a COLS plan whose outputs reduce at most trans_first
       elements each planned again as TRANS where that applies (outputs
       scattered in the input's order: COLS writes each one alone) */
    if (T->trans_first > 0 && plan->cls == KG_RED_COLS && red <= T->trans_first) {
        const kg_red_plan keep = *plan;
        const shape_of_work wkeep = w;
        plan_restart(plan, &keep, n_out, red, &w);
        if (!plan_trans(plan, K, nk, D, nr, red, n_out, es, info->indexed, sm, T, &w)) {
            *plan = keep;
            w = wkeep;
        }
    }
    /* few column tiles over a long reduction (cols_split_few): narrower
       tiles, more lanes down each, more splits */
    if (plan->cls == KG_RED_COLS && !cols_over_runs(A) && w.min_chunk > 0 && T->cols_split_few > 0 &&
        A->cw > T->cols_split_few &&
        cols_fill(plan, info, dt, sm, w.groups, T) > 8 * (KG_RED_THREADS / A->cw)) {
        kg_red_tuning t2 = *T;
        t2.cols_lanes = T->cols_split_few;
        w = (shape_of_work){n_out, 1, 0, 1, red};
        if (!plan_cols(plan, in, K, nk, D, nr, red, n_out, es, target, multi, info->indexed, &t2, &w)) {
            w = (shape_of_work){n_out, 1, 0, 1, red}; /* (not reached: the rows fill 16 lanes down) */
            plan_cols(plan, in, K, nk, D, nr, red, n_out, es, target, multi, info->indexed, T, &w);
        }
    }
    plan_occ(plan, info, T);
    plan_split(plan, info, dt, sm, target, T, &w);
    /* rows_stripes: a split ROWS row read in interleaved lines per split */
    if (T->rows_stripes && plan->cls == KG_RED_ROWS && A->group == KG_RED_THREADS && A->splits > 1)
        A->run = KG_RED_ROWS_STRIPES;
    plan_grid(plan, n_out, sm, T);
    plan_occ_cols(plan, info, dt, sm, T);
    plan_occ_flatw(plan, T);
    plan_cols_pair(plan, n_out, sm, T);
    plan_vstore(plan, info, out, dt, T);
    plan_trans_vec(plan, in, n_out, sm, T);
    return KG_OK;
}
