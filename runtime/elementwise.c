/*
 * elementwise.c - validation and dispatch of every element-wise op.
 *
 * Order: arguments, dtypes, shapes and overlap are checked on the host; only
 * then is the device touched. The call is coalesced (layout.c) and sent to
 * one of the generated variants (kg_params.h): dense when every operand is
 * one aligned contiguous range, perm when an input's fast dim is not the
 * output's (transposes and permutations of any rank; permf when a dim must
 * be folded to fill tiles), nd32v when the inner
 * dim is contiguous or broadcast for every operand, rows when the inner dim
 * is long enough for a warp, nd32 or nd64 otherwise (by whether offsets fit
 * in 31 bits). tile (the 2-d form of perm) runs
 * when forced by the test hook, or for a 2-d transpose perm cannot take.
 * For the core and cast ops, tperm (kg_tperm.h, own modules and table)
 * serves permuted layouts first unless kg_ew_tperm_preferred says another
 * eligible variant measured faster.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "kg_ew_table.h"
#include "kg_table.h"
#include "layout.h"

/* Grids cover the whole problem (one pass, as PyTorch's kernels do; the
   kernels' grid-stride loops only matter beyond 2^31 - 1 blocks). */
#define MAX_BLOCKS ((int64_t)0x7fffffff)
/* Tunings (kg_test_ew_tune; process-wide):
   rows serves inner dims of at least rows_min elements when no vector fits
   (nd32 the shorter ones); perm/permf launch one block per tile
   (perm_blocks_per_sm = 0) or that many persistent blocks per SM. */
static int rows_min = 8;
static int perm_blocks_per_sm = 0;
/* rows for elements of at most this many bytes (wider ones: nd32, measured
   faster for 4-byte elements on the H200) */
static int rows_max_bytes = 2;
/* perm folds a dim of at most fold_max elements (0: 48 for 64-element
   tiles, measured on the H200: a dim of 33-47 then runs 1.1-1.2x faster
   than in half-empty tiles; half a tile for 32-element ones) */
static int fold_max = 0;
/* rows only with at least this many warps per SM (a warp takes 32 rows):
   long rows are few, and a few warps cannot fill the GPU (nd32 then) */
static int rows_min_warps_per_sm = 16;
/* where tperm runs (KG_EW_TUNE_TPERM): 0 the default choice, 1 wherever
   planned, 2 never */
static int tperm_mode = 0;
/* tperm grows an axis (folds one more dim into it) while it is shorter
   than a tile or its tiles are less than tperm_fill percent full */
static int tperm_fill = 90;
/* tperm's element mapping (kg_tperm.h map); table-free addressing where
   the axes are one dim each (kg_tperm.h flat; 0 = tables always) */
static int tperm_map = 1;
static int tperm_flat = 1;
/* tperm's block order (kg_tperm.h jfirst): 0 the c tiles fastest, 1 the j
   tiles, 2 (the default) the j tiles where the elements have at least 4
   bytes and the c axis has at least tperm_jfirst_ratio times as many tiles
   as j (a short j axis: the few j tiles of a run of input rows then load
   together). H200 run s14r3 (this default against c first, same process):
   f32 [33,64,95,91] p3.0.1.2 80.7 vs 74.8, p3.1.2.0 78.1 vs 72.9,
   [255,387,259] p2.0.1 68.3 vs 63.9; bf16 lost there (47.7 vs 51.6, [533,
   179,229] p2.0.1 48.9 vs 53.6), so 2-byte elements keep c first. H200 run s14r2 of
   2026-12-03 (same process, c first -> j first), % of copy: f32
   [33,64,95,91] p3.0.1.2 75.2 -> 81.5 and p3.1.2.0 72.3 -> 78.7 (1568 x 3
   tiles), [255,387,259] p2.0.1 64.1 -> 68.9 (1542 x 5); bf16 the same
   three 51.0 -> 57.7, 50.6 -> 55.8, 42.8 -> 44.9, [33,64,95,91] p2.0.1.3
   56.4 -> 59.8, [533,179,229] p2.0.1 45.1 -> 46.2; neutral (-0.5, -0.3) on
   two others of at least 256 times; below 256 times mostly lost (ratio
   147: -3.1, 67: -3.4; 2-d transposes -5 to -10; a long j -15 to -32). */
static int tperm_jfirst = 2;
static const int64_t tperm_jfirst_ratio = 256;
/* Ops of two inputs with 2-byte elements (their own 4-block kernels) take
   the j tiles first where the output runs on along j (tperm_out_along_j)
   under mode 2 too; mode 3 keeps session 14's rule (the tile counts only).
   H200 run s15r1 (j first against c first, same process): bf16 add
   [160,214,118,6] p0.2.3.1 64.0 -> 80.2% of copy, [78,24,18,18,36]
   p0.3.1.2.4 57.4 -> 67.2, [127,69,227,11] p3.0.2.1 56.0 -> 59.7; the
   other two adds it takes -0.1 and 0.0; the bf16 adds it leaves lost
   0.5-23.7 points under j first, and bf16 copies (tperm2) lost 1 point or
   more on 27 of 47, gained on 1. Run s15r2 (this rule against mode 3,
   same process): 64.0 -> 80.8, 57.8 -> 67.4, 55.8 -> 59.5. */

/* 1 where c has two dims or more, its second not chained to its first in
   the output, and some j dim's output stride is the run of c's first dim:
   consecutive j tiles then write adjacent output, consecutive c tiles
   pieces of c's first dim far apart. */
static int tperm_out_along_j(const kg_tperm *o)
{
    if (o->nd[KG_TP_C] < 2)
        return 0;
    const int64_t run = (int64_t)o->size[KG_TP_C][0] * o->stride[KG_TP_C][0][0];
    if (o->stride[KG_TP_C][0][1] == run)
        return 0;
    for (int i = 0; i < o->nd[KG_TP_J]; i++)
        if (o->stride[KG_TP_J][0][i] == run)
            return 1;
    return 0;
}
/* ops of one input whose elements have at most 2 bytes: tperm with two
   tiles per pass (<op>_tperm2, the kernel after <op>_tperm, generated for
   those ops only; twice the bytes in flight per block); 0 = one tile.
   Wider elements have no such kernel: in the H200 run of 2026-12-01 21:00
   UTC (forced tperm, 48 cases per dtype), bf16 better in
   33 cases (up to +10 points of copy), worse in 9 (at most -3.4); f32 worse
   in 44 (down to -11.4: 255x387x259 p0.2.1 80.0 -> 68.6%), better in 2. */
static int tperm_pair = 1;
/* <op>_tperm2 moves 2-byte elements as 32-bit pairs where it can
   (kg_ew_tperm_words_ok; KG_EW_TUNE_TPERM_WORDS 1); 2 (the default): so
   does <op>_tperm for ops of two inputs (input 0 staged, input 1 direct).
   H200 run r2 of 2026-12-02 (same run): bf16 add of even shapes 47.4-55.6%
   of copy -> 52.1-66.9 (11 cases up 1 point or more, none down), and with
   KG_TP_BIN2_MIN_BLOCKS 64.8-87.1. */
static int tperm_words = 2;
/* tperm's passes of whole tiles without predicates (kg_tperm.h full) */
static int tperm_full = 1;
/* tperm's split of a long side for a short one tries other divisors than
   powers of 2 (KG_EW_TUNE_TPERM_DIVISORS) */
static int tperm_divisors = 1;
/* rect (kg_tperm.h): tperm's rectangular tiles where the output's dim 0
   has 2 to tperm_rect elements (0: never; KG_EW_TUNE_TPERM_RECT), the long
   side a multiple of tperm_rect_step positions (1..32; _STEP), its tiles at
   least 90% full (T * T positions) and at least tperm_rect_tiles along the
   long side (_TILES), one tile a pass (<op>_tperm; its code in tperm2
   spilled and slowed that kernel). The forms
   below that lost (class A, the mirror with the input's short fast dim
   taken whole; one tile a pass in bf16; tiles staged by rows) were removed
   in session 10. H200 run r1 of 2026-12-02 (same run, copy
   4224 GB/s), every rect plan of the perm bench against the default:
   class B with a long j gained in f32 (2-d [553280,33]^T 66.7 -> 69.0% of
   copy with steps of 8, 58.4 with 32; [54,2700,168]-like 61.5 -> 69.1)
   but lost where j was short (p2.1.3.0, j 91: 71.4 -> 55.3; c 64, j 91:
   84.8 -> 53.7), the tiles then cut; class A lost on 12 of 13 f32 cases
   (-3 to -62 points: the tile cannot grow past the output's dim 0) and
   every bf16 rect plan lost in <op>_tperm (-14 to -45: one tile a pass
   where the default runs two); with 64 x 64 tiles and a long j rect ran
   at 69.9% against the default's 87.6 (f32 [33,64,95,91] p0.2.3.1): its
   per-element index arithmetic (three magic divisions) costs more than
   the sectors it saves. Run r2 (copy 4177-4183 GB/s, class B tiles
   staged in the output's order: rect 2): f32 [553280,33]^T (the bench's
   [33,64,95,91] p1.2.3.0) 66.7 -> 81.0% of copy, [54,2700,168] 61.7 ->
   81.8; bf16 p1.2.3.0 48.7 -> 48.2 (two tiles a pass): default for
   elements of 4 bytes and more, class B, short side up to 56. */
static int tperm_rect = 56;
static int tperm_rect_step = 8;
static int tperm_rect_tiles = 16;
/* rect only where the widest operand has at least this many bytes an
   element (KG_EW_TUNE_TPERM_RECT_MIN_BYTES) */
static int tperm_rect_min_bytes = 4;
/* copies whose dim 0 is contiguous in the output and the input (a
   permutation keeping the inner dim in place, or a contiguous copy off
   16-byte alignment): <op>_rowsv (realigned 16-byte chunks) where no
   16-byte vector fits (1, the default), also where nd32v fits (2), or never
   (0) (KG_EW_TUNE_ROWSV); for rows of at least rowsv_min_bytes
   (KG_EW_TUNE_ROWSV_MIN_BYTES, 64 and up). H200, 2026-12-02 run r3 (same
   run, copy limit 4203 GB/s): rows of 8645 elements ([33,64,95,91]
   p1.0.2.3) bf16 50.1 -> 73.4% of copy, f32 74.6 -> 80.9%; 2709 f32
   elements 75.6 -> 82.1%; a bf16 contiguous copy one element off
   alignment 37.8 -> 92.5% (f32 86.7 -> 87.2); but rows of 91 elements
   lost (bf16 51.5-64.0 -> 39%, f32 66-86 -> 63%) and rows of 259 lost 2-4
   points (518 B bf16, 1036 B f32), and over nd32v it lost 3-12 points. */
static int rowsv_mode = 1;
static int rowsv_min_bytes = 4096;
/* copies of planes contiguous in both operands and transposed: <op>_tplanev
   (1, the default) or not (0), for planes of at least tplane_min_bytes (the
   bench's planes have 17-35 KB); the buffer (one plane) at most
   KG_TQ_MAX_BYTES. H200 run s15r2 (each process: the default of the build
   against its alternative, % of copy): against tperm, tplanev f32
   [33,64,95,91] p1.0.3.2 62.1 -> 78.3, p0.1.3.2 67.3 -> 78.3,
   [103,39,249,23] p0.1.3.2 74.9 -> 85.2, bf16 p0.1.3.2 56.2 -> 60.1,
   p1.0.3.2 53.6 -> 58.9, [24,64,204,70] p0.1.3.2 65.6 -> 64.9. The element
   by element form (session 15's <op>_tplane) lost to it everywhere (bf16
   43.5, 43.0, 46.9 in the same run) and was removed in session 16. */
static int tplane_mode = 1;
static int tplane_min_bytes = 16384;
/* copies of 2- and 4-byte elements whose planes (tplanev's shape) are
   under tplane_min_bytes and lie one after the other along the layout's
   dim 2 in both operands: <op>_tplanem (several planes a block, groups of
   at most tplanem_bytes) under the default choice (1, the default since
   round s30r1; kg_ew_tplanem_by_default) or forced only (0;
   KG_EW_TUNE_TPLANEM, _BYTES). Such a copy ran tperm / tperma / tperms /
   tslab before: f32 [273,147,81,7] p0.1.3.2 (planes of 81 x 7, 2268
   bytes, 40131 of them in a row) ran tperm at 78.5% of copy, 0.95x
   PyTorch: tperm's c axis of 81 positions is two tiles, the second 27%
   full, and its output rows of 324 bytes start off sectors; a plane a
   block (tplanev) leaves 114 of 256 lanes idle. A group of 7 such planes
   is one 15876-byte run on both sides: 993 input chunks in one pass of
   the block's loads (256 threads x 4), then 993 output chunks. NVIDIA
   H100, 2026-12-05 round s30r1 (same process, best of 3 interleaved, % of
   copy, before -> tplanem): faster on all 21 rows it changed, f32
   x1.117-6.011 ([273,147,81,7] p0.1.3.2 78.3 -> 93.0, PyTorch 83.3;
   1398107x3x4 p0.2.1 15.1 -> 91.0), bf16 x1.112-9.535 (8.7-66.3 ->
   70.9-83.9); a plane a block (tplanev from 1 byte) lost on 15 of them
   (down to x0.028), every gather rotated (KG_EW_TUNE_GATHER_ROT 1) beat
   the default rotation on none by 2%. */
static int tplanem_mode = 1;
static int tplanem_bytes = 16384;
/* copies by slabs of whole output rows (<op>_tslab) where the output's dim
   0 has 2 to tslab_max_nc elements (0: never), the buffer at most
   tslab_bytes; by the default choice only for 2-byte elements whose dim 1
   fills at least one whole slab (kg_ew_tslab_by_default). H200 run s16r2
   (same process, % of copy, default -> tslab with in-order gathers): bf16
   [33,64,95,91] p1.2.3.0 (a 33 x 553280 plane) 49.5 -> 58.4 (tperm before);
   it lost where dim 1 was short (bf16 p2.1.3.0, rows of 91: 52.0 -> 31.3),
   where the output's dim 0 had 64 elements (bf16 p0.2.3.1 64.6 -> 47.7,
   p2.0.3.1 63.6 -> 44.6; f32 87.8 -> 54.7, 85.2 -> 56.7), for f32 against
   rect (p1.2.3.0 80.9 -> 74.1) and on the f32 sweep cases (54 x 10: 81.2
   -> 80.3, [28,44,32,10,56] p0.3.1.4.2 87.2 -> 61.5). */
static int tslab_max_nc = 56;
static int tslab_bytes = 16384;
/* tplanev, tplanem and tslab gather their output chunks in rotated
   orders (kg_tq_gather): 1 always, 0 never, 2 (the default) tplanev and
   tplanem where the plane's rows have an even number of elements (for
   tplanem, 1 against 2 in round s30r1, each against the same default in
   its own process: no row's ratio 2% higher, bf16 [273,147,81,7]
   p0.1.3.2 and 4099x13x315 p0.2.1 3.6% lower). H200 run s16r2 (same
   process, with tslab): tplanev bf16 [24,64,204,70] p0.1.3.2 (rows of 70)
   60.6 -> 69.3% of copy; on rows of 91 and 23 (odd) it moved f32 74.8 ->
   76.1 and 74.5 -> 75.4, bf16 59.1 -> 58.0 and 58.4 -> 57.3, f32
   [103,39,249,23] 78.8 -> 76.6; tslab bf16 p1.2.3.0 58.4 in order, 56.1
   rotated (two processes of the same call). */
static int gather_rot = 2;
#define KG_TQ_MAX_BYTES ((int64_t)48 * 1024)
/* copies by tiles of aligned 16-byte chunks (<op>_tchunk): 0 never (the
   default), 1 wherever planned (KG_EW_TUNE_TCHUNK); tchunk_cq output chunks
   a tile row (0: KG_TC_CQ_MAX), tchunk_tpb tiles a block. A candidate
   (forced-only). Since session 37 the bundle holds no tchunk kernel (its 7
   kernels, about 65 KB, made room for new kernels; gen/elementwise.lua):
   kg_ew_copy_tpk's entry is -1, and the tuning or the force plans as without
   it (the plan, kg_ew_plan_tchunk, stays, with its CPU tests). Its first
   form (tiles widened by M - 1 input rows so that
   every output chunk came whole from one tile, two cp.async stages,
   swizzled stage) lost on H200 runs s17r2/s17r3 (same process, tperm
   default -> tchunk, % of copy, 2 tiles a block: f32 6007x5003^T 73.6 ->
   79.7, [255,387,259] p2.1.0 64.8 -> 63.9, bf16 6007x5003^T 63.2 -> 60.2,
   p2.1.0 50.5 -> 39.7; ncu: 2.6x tperm's instructions, 25% of the input
   read twice); this form reads no input element twice and computes each
   row's address once.
   Session 20 tried "sect" tiles in this slot (branch ew-s20-sect): each
   operand row's part of a 64 x 64 tile cut at k 64 less the row's
   misalignment, so every warp access covers whole 32-byte sectors, the
   tiles still partitioning the plane. Slower on every row in three forms
   (H200, same process, % of copy, default / sect): loads held in
   registers (s20r1) f32 [255,387,259] p2.1.0 65.0 / 48.7, 6007x5003^T
   73.6 / 63.8, 8192^2 96.2 / 66.6, bf16 50.6 / 18.6, 63.3 / 25.3, 90.1 /
   28.5; by cp.async into an input-order stage (s20r2) f32 64.8 / 49.7,
   74.4 / 61.3, 96.8 / 66.0, bf16 50.6 / 19.6, 63.3 / 25.4, 90.3 / 28.2;
   64 x 128 tiles and two-stage pipelines no better. It ran at about
   300-350 G elements/s whatever the element size, aligned 8192^2 too:
   bound by its own per-element work, not by sectors. ncu (s20r3, f32
   p2.1.0, tperm / sect): 22.2 M / 83.5 M instructions, issue active 34 /
   86%, shared bank conflicts 0.03 M / 5.98 M, and no fewer L2 sectors
   (read 3.54 M / 3.98 M, write 3.71 M / 4.12 M). */
static int tchunk_mode = 0;
static int tchunk_cq = 0;
static int tchunk_tpb = 1;

/* copies of 2-byte elements (f16, bf16) that run tperm with square tiles
   and no word pairs: <op>_tperma (templates/elementwise_tpa.cuh: tperm's
   tiles at 6 blocks per SM, one tile a block) by the default choice where
   kg_ew_tperma_by_default (tperma_mode 2), wherever eligible (1; forced
   tperm too), or never (0) (KG_EW_TUNE_TPERMA); tperma_bps blocks per SM,
   each taking every grid-th tile (0: one block a tile; KG_EW_TUNE_TPERMA_BPS;
   s21r1: 6 lost on every row). */
static int tperma_mode = 2;
static int tperma_bps = 0;

/* H200 run s21r2 (same process, % of copy, tperm2 -> tperma, 33 bf16 rows
   of the perm bench): tperma gained 2 to 6% on 16 rows (6007x5003^T 63.0
   -> 64.5, [255,387,259] p1.2.0 60.5 -> 63.4, p0.2.1 61.1 -> 62.5,
   [33,64,95,91] p0.3.1.2 64.1 -> 67.8, p3.0.1.2 59.2 -> 62.4, p3.2.0.1
   61.4 -> 64.5, sweep 115x1041x183 p0.2.1 59.8 -> 62.9), was within 0.6%
   on 7 and lost on four, which this rule leaves to tperm2: input 0 not
   staged (p1.0.2 55.0 -> 53.6; four more within 0.6%), a flat plan whose
   j axis has at most 5 tiles against at least 256 times as many c tiles
   (p2.0.1, 1542 x 5 tiles: 52.7 -> 50.6; 533x179x229 p2.0.1, 1491 x 4:
   54.9 -> 53.9) and a table plan whose c axis has at most 5 tiles against
   at least 256 times as many j tiles (p2.1.0, 4 x 1567: 51.1 -> 50.1; the
   flat p1.2.0 of the same tiles gained 4.7%). */
KG_API int kg_ew_tperma_by_default(const kg_tperm *tp)
{
    if (!(tp->staged & 2u) || tp->rect || tp->words)
        return 0;
    if (tp->flat && tp->tiles_j <= 5 && (int64_t)tp->tiles_c >= 256 * (int64_t)tp->tiles_j)
        return 0;
    if (!tp->flat && tp->tiles_c <= 5 && (int64_t)tp->tiles_j >= 256 * (int64_t)tp->tiles_c)
        return 0;
    return 1;
}

/* <op>_tperms (templates/elementwise_tph.cuh; copies of 4-byte elements)
   serves a square-tile plan whose input 0 is staged and whose c axis is one
   dim of output stride 1 (its rows are cut at 32-byte sectors along it):
   by the default choice where kg_ew_tperms_by_default (tperms_mode 2),
   wherever it serves a copy tperm would run (1; forced tperm too), or never
   (0) (KG_EW_TUNE_TPERMS). */
static int tperms_mode = 2;

/* the c axes <op>_tperms serves (KG_EW_TUNE_TPERMS_CHAIN): 0 one dim of
   unit output stride; 1 (the default since round s31r1) also several dims
   that chain in the output (kg_ew_tp_c_chained), the rows' input offsets
   from a table. Those rows' output dim 0 is short (95, 33, 203, 201, 113
   positions) and the plan folds the next output dim into c, which
   kg_ew_tperms_ok refused before: their odd output rows (3135, 38367,
   21909, 10735 positions) wrote partial sectors as tperm. Measured (round
   s31r1, NVIDIA H100 80GB HBM3, f32, A/B in one process, best of 3): all
   17 rows it changes faster, x1.044 .. x1.223, median x1.176 ([33,64,95,91]
   p3.1.0.2 69.3 -> 83.0% of copy, p1.3.0.2 74.0 -> 85.5; 157x195x73x11
   p3.1.0.2 72.0 -> 86.3; worst 42x70x94x14x6 p2.0.4.1.3 79.8 -> 83.3); the
   f32 worst row over 115 not lower (63.0 / 62.9%, a row it does not
   change); 98 unchanged rows x0.998 .. x1.003. */
static int tperms_chain = 1;

KG_API int kg_ew_tp_c_chained(const kg_tperm *tp, int maxd)
{
    const int nd = tp->nd[KG_TP_C];
    if (nd < 1 || nd > maxd || nd > KG_LAYOUT_MAX_DIMS || tp->stride[KG_TP_C][0][0] != 1)
        return 0;
    for (int i = 1; i < nd; i++)
        if ((int64_t)tp->stride[KG_TP_C][0][i] != (int64_t)tp->stride[KG_TP_C][0][i - 1] * tp->size[KG_TP_C][i - 1])
            return 0;
    return 1;
}

KG_API int kg_ew_tperms_ok(const kg_tperm *tp)
{
    return (tp->staged & 2u) && !tp->rect && !tp->words && kg_ew_tp_c_chained(tp, tperms_chain ? KG_LAYOUT_MAX_DIMS : 1);
}

/* <op>_tpermc (templates/elementwise_tpc.cuh; copies of 2-byte elements):
   tperm's square tiles (tperma's plan, any folds) with each output row cut
   at its first 32-byte sector and stored as aligned 16-byte chunks, where
   kg_ew_tpermc_ok (the c axis one run of the output). KG_EW_TUNE_TPERMC: 0
   forced only; 1 (the default since round s31r1) by the default choice on
   the copies it would run by tperma or tperm / tperm2 with square tiles
   (after the tpx rules) whose output rows start off sectors
   (kg_ew_tpermc_rows_off); 2 the same wherever kg_ew_tpermc_ok. For round
   s30r1's finding: the bf16 tperma rows at 54.6-54.9% of copy wrote
   1.41-1.43 times the output's L2 sectors; tpx, which cuts at sectors,
   cannot plan them well. Measured (round s31r1, NVIDIA H100 80GB HBM3,
   bf16, A/B in one process, best of 3): all 24 rows it changes (all
   tperma's by default) faster, x1.216 .. x1.384, median x1.314
   ([33,64,95,91] p3.1.0.2 55.2 -> 72.5% of copy, [429,487,105] p2.1.0
   55.0 -> 74.8, 157x195x73x11 p3.2.0.1 55.3 -> 76.5; worst 157x195x73x11
   p1.3.0.2 59.7 -> 72.6); the bf16 worst row over 115 not lower (49.4 /
   49.3%, a tperm row it does not change); 91 unchanged rows x0.991 ..
   x1.008. f16 shares the kernel and the rule, not timed. */
static int tpermc_mode = 1;

KG_API int kg_ew_tpermc_ok(const kg_tperm *tp)
{
    return (tp->staged & 2u) && !tp->rect && !tp->words && kg_ew_tp_c_chained(tp, KG_LAYOUT_MAX_DIMS);
}

KG_API int kg_ew_tpermc_rows_off(const kg_tperm *tp, const void *out)
{
    int off = (uintptr_t)out % 32 != 0;
    for (int d = 0; d < tp->nd[KG_TP_J]; d++)
        off |= tp->stride[KG_TP_J][0][d] % 16 != 0;
    for (int d = 0; d < tp->nd[KG_TP_B]; d++)
        off |= tp->stride[KG_TP_B][0][d] % 16 != 0;
    return off;
}

/* H200 s22r2 (same process, % of copy, main's tperm -> tperms, every f32
   copy row of the perm bench that tperm ran): faster on 17 rows whose
   output rows start off 32-byte sectors (6007x5003^T 73.8 -> 88.7,
   [255,387,259] p2.1.0 64.9 -> 78.1, p2.0.1 68.8 -> 84.2, p0.2.1 80.1 ->
   85.2, sweep 6229x3503^T 74.0 -> 85.4, 125x239x223x5 p2.1.3.0 66.9 ->
   76.2), level (within 0.3%) or slower where every output row starts on a
   sector (nothing to cut; the halo and predicates cost: [33,64,95,91]
   p0.3.2.1, p2.0.3.1, p3.0.2.1 86.2 -> 78.2, 85.1 -> 77.5, 83.8 -> 76.5,
   c axis of 64), and slower on one row whose c axis is short (sweep
   273x147x81x7 p0.1.3.2, c = 81: 75.3 -> 63.4; the shortest c axis that
   gained had 125, sweep 125x239x223x5). So: rows off sectors (an output
   stride of a j or b dim, or the output's address, off 32 bytes) and a c
   axis of at least 96 positions. */
KG_API int kg_ew_tperms_by_default(const kg_tperm *tp, const void *out)
{
    if (!kg_ew_tperms_ok(tp) || tp->n[KG_TP_C] < 96)
        return 0;
    int off = (uintptr_t)out % 32 != 0;
    for (int d = 0; d < tp->nd[KG_TP_J]; d++)
        off |= tp->stride[KG_TP_J][0][d] % 8 != 0;
    for (int d = 0; d < tp->nd[KG_TP_B]; d++)
        off |= tp->stride[KG_TP_B][0][d] % 8 != 0;
    return off;
}

/* copies of 2-byte elements that run tperm with square tiles and no word
   pairs: <op>_tperms by words (elementwise_tpw.cuh) where kg_ew_plan_tpw
   plans them, wherever tperm would run them (1) or forced only (0, the
   default; KG_EW_TUNE_TPERMW). H200, same process, % of copy, main's
   choice (tperma, tperm2) / tperms by words: s23r1, every bf16 copy row of
   the perm bench that tperm ran: faster on 6007x5003^T 64.2 / 68.2, slower
   on every other (a c axis of 33 to 387 positions, tiles of 128: [255,387,
   259] p1.2.0 62.3 / 59.1, p2.1.0 50.3 / 40.6, p0.2.1 63.6 / 36.8,
   [33,64,95,91] x0.20-0.49); s23r2, taken where both axes had at least 8
   tiles, each at least 90% full: faster on 6007x5003^T 64.9 / 68.2,
   [1999,5,2053] p2.1.0 49.8 / 55.2, sweep 11009x1983^T 59.4 / 63.8,
   73x85x219x17 p2.3.0.1 63.4 / 64.2, slower on 4097x3001^T 58.7 / 54.5,
   2053x8191^T 61.7 / 60.5, [7,2053,1999] p0.2.1 66.5 / 59.1, level on
   3001x4097^T: no rule, so forced only. Its tiles that are not whole (the
   first j tile, a c tile with fewer than 144 positions left) take the
   predicated path. 2 (the default since s25r1): the second form (below)
   where kg_ew_tpx_by_default. */
static int tpermw_mode = 2;

/* 1 where an axis of n positions in `tiles` tiles of `width` is at least
   pct percent full (n * 100 >= tiles * width * pct; n, tiles and width
   below 2^31) */
static int tiles_full(int64_t n, int64_t tiles, int64_t width, int pct) { return n * 100 >= tiles * width * pct; }

/* The rule of tpermw_mode 2 (the default, with tpermw_form 1): the second
   form where main's choice would run tperm2 on a 2-byte copy whose input
   0 is staged because kg_ew_tperma_by_default's tile-count clauses leave
   it there (a flat plan with at most 5 j tiles against 256 times as many c
   tiles, or a table plan the other way round), and the second form's tiles
   are at least 80% full along both axes. H200 run s25r1 (2026-12-05, same
   process, best of 3 interleaved, % of copy, main's choice / tpx): every
   bf16 row of the perm bench in that class gained: [255,387,259] p2.0.1
   tperm2 52.9 / 63.8 (x1.21; tpx tiles c 1.00, j 0.84), p2.1.0 51.1 / 59.6
   (x1.17), sweep 533x179x229 p2.0.1 55.3 / 61.0 (x1.10). Where tperma runs
   (its rule's rows) tpx did not win as a class: faster on [429,487,105]
   p2.1.0 52.2 / 64.3, [1999,5,2053] p2.1.0 50.0 / 60.2, [7,2053,1999]
   p0.2.1 66.8 / 73.7, 6007x5003^T 65.1 / 68.3 and six more, slower on
   4097x3001^T 59.3 / 53.2, 1031x16411^T 61.7 / 57.9, 3001x4097^T 59.2 /
   56.7, [255,387,259] p1.2.0 63.7 / 62.3, 115x1041x183 p0.2.1 64.1 / 56.5,
   [33,64,95,91] p3.2.0.1 65.1 / 59.0 with tiles at least 90% full, and
   far slower with a short axis (j 91: x0.72-0.92; c 33 in tiles of 64:
   x0.45-0.68; j 11: x0.30); the even shapes tperm2 pairs lost (x0.14-0.92).
   So those keep tperma / tperm2. tp is main's tperm plan, tw the second
   form's (kg_ew_plan_tpx). */
KG_API int kg_ew_tpx_by_default(const kg_tperm *tp, const kg_tperm *tw)
{
    return (tp->staged & 2u) && !tp->rect && !tp->words && !kg_ew_tperma_by_default(tp) && tw->words == 2 &&
           tw->rc > 0 && tiles_full(tw->n[KG_TP_C], tw->tiles_c, tw->rc, 80) &&
           tiles_full(tw->n[KG_TP_J], tw->tiles_j, KG_TPX_TJ, 80);
}

/* Rule A (KG_EW_TUNE_TPX_A; 1, the default since round s29r1; 0 off):
   the second form (tpx) also on copies that the default choice runs by
   tperma (kg_ew_tperma_by_default, under KG_EW_TUNE_TPERMA 2), where
   kg_ew_tpx_a: tpx's plan in c tiles of KG_TPX_CW, at least 2 of them and
   at least 16 j tiles, both axes' tiles at least 90% full, more than 2
   waves of 6 blocks per SM, the last empty or at least a quarter full.
   Session 26's A, narrowed. Round s28r1 (NVIDIA H100 80GB HBM3,
   2026-12-05, same process, best of 3 interleaved, % of copy, tperma /
   tpx) measured A (without the 2-c-tile clause) and B (the
   same in c tiles of 64 where 128 fails A): 34 bf16 rows changed, 32
   faster (x1.025-1.438), two slower, and both losing classes keep tperma:
   [33,64,95,91] p3.2.0.1 (x0.952) was B's (c tiles of 64: 33 x 140 tiles;
   in 128 its last wave holds 4 of 792 tiles), so A takes c tiles of
   KG_TPX_CW only; 119x9x31x31x31 p3.4.2.1.0 (x0.977) was the one A row
   whose c axis is a single tile (the output's dim 0, 119 positions,
   unfolded: every block stores the same 119-position rows, 93% of its c
   side), so A wants at least 2 c tiles (that clause rests on that one
   measured row, not a model). The waves: tpx's tiles are 128 x 62
   positions against tperma's 64 x 64, half as many blocks, so a thin last
   wave (or fewer than 3) idles more of the GPU than tperma's (4097x3001^T,
   2.04 waves, lost x0.90 in s25r1 and is left out). Round s29r1 (NVIDIA
   H100 80GB HBM3, 2026-12-05, same process, best of 3 interleaved, % of
   copy, tperma / tpx) measured the narrowed A: faster on all 15 bf16 rows
   it changes, x1.058-1.306 (6007x5003^T 59.3 / 74.8, [1999,5,2053] p2.1.0
   53.9 / 66.8, [7,2053,1999] p0.2.1 61.5 / 78.8, 2053x8191^T 58.2 / 69.2,
   1463x10221^T 59.0 / 62.4, the lowest), the 171 rows it leaves x0.978-
   1.013 (the noise), the seeded sweeps' worst case 53.6% both ways; so
   it is the default. tp is main's tperm plan, tw tpx's. */
static int tpx_a_mode = 1;

KG_API int kg_ew_tpx_a(const kg_tperm *tp, const kg_tperm *tw, int sm_count)
{
    if (!kg_ew_tperma_by_default(tp) || tw->words != 2 || tw->rc != KG_TPX_CW || tw->tiles_c < 2 ||
        tw->tiles_j < 16 || sm_count <= 0)
        return 0;
    if (!tiles_full(tw->n[KG_TP_C], tw->tiles_c, KG_TPX_CW, 90) ||
        !tiles_full(tw->n[KG_TP_J], tw->tiles_j, KG_TPX_TJ, 90))
        return 0;
    const int64_t wave = 6 * (int64_t)sm_count, tiles = tw->tiles, last = tiles % wave;
    return tiles > 2 * wave && (last == 0 || 4 * last >= wave);
}

/* which form of the 2-byte <op>_tperms runs where it runs
   (KG_EW_TUNE_TPERMW_FORM): 1 (the default since s25r1: tpermw_mode 2
   runs it where kg_ew_tpx_by_default) element pairs made in registers
   with 16-byte stores (elementwise_tpx.cuh, kg_ew_plan_tpx), 0 session
   23's words (elementwise_tpw.cuh, kg_ew_plan_tpw; forced or tpermw_mode
   1 only). tpermw_bps (KG_EW_TUNE_TPERMW_BPS): the form-1 blocks a
   multiprocessor holds, 4 or 5 by dynamic shared memory, or 0 (the
   default): as compiled (6; s25r1, six rows, 6 against 5: x0.85-0.99,
   against 4: x0.83-0.97, all slower). */
static int tpermw_form = 1;
static int tpermw_bps = 0;
/* the second form's c tiles (KG_EW_TUNE_TPERMW_CW): 0 (the default)
   kg_ew_plan_tpx's choice, 64 or 128 those */
static int tpermw_cw = 0;

/* A tperm plan's axis extents and tile counts (each below 2^31) */
static void tp_set_extents(kg_tperm *o, int64_t nc, int64_t nj, int64_t nb, int64_t tiles_c, int64_t tiles_j,
                           int64_t tiles)
{
    o->n[KG_TP_C] = (uint32_t)nc;
    o->n[KG_TP_J] = (uint32_t)nj;
    o->n[KG_TP_B] = (uint32_t)nb;
    o->tiles_c = (uint32_t)tiles_c;
    o->tiles_j = (uint32_t)tiles_j;
    o->tiles = (uint32_t)tiles;
    kgi_divmod_magic(o->tiles_c, &o->magic_c, &o->shift_c);
    kgi_divmod_magic(o->tiles_j, &o->magic_j, &o->shift_j);
}

/* A tperm plan's dims, an axis at a time (c, j, b): axis a holds L's dims
   lists[a][0 .. counts[a]), each with its size, the size's division magic
   and every operand's stride */
static void tp_set_axes(kg_tperm *o, const kgi_layout *L, const int *const lists[3], const int counts[3])
{
    for (int a = 0; a < 3; a++) {
        o->nd[a] = counts[a];
        for (int i = 0; i < counts[a]; i++) {
            const int d = lists[a][i];
            o->size[a][i] = (uint32_t)L->size[d];
            kgi_divmod_magic(o->size[a][i], &o->magic[a][i], &o->shift[a][i]);
            for (int k = 0; k < L->nops; k++)
                o->stride[a][k][i] = (int32_t)L->stride[k][d];
        }
    }
}

/* The first dim after dim 0 of unit stride in the input (operand 1) of a
   copy's layout L, or -1 */
static int input_unit_dim(const kgi_layout *L)
{
    for (int d = 1; d < L->ndim; d++)
        if (L->stride[1][d] == 1)
            return d;
    return -1;
}

/* 1 where the 2-byte tperms can plan the copy L: 2 to KG_LAYOUT_MAX_DIMS
   dims, 31-bit offsets, dim 0 of unit stride in the output, not in the
   input */
static int tp_word_layout(const kgi_layout *L)
{
    return L->ndim >= 2 && L->ndim <= KG_LAYOUT_MAX_DIMS && L->nops == 2 && kgi_layout_fits32(L) &&
           L->stride[0][0] == 1 && L->stride[1][0] != 1;
}

/* The plans of the 2-byte tperms (kg_ew_plan_tpw, kg_ew_plan_tpx) from
   their axes: c = clist (ncd dims, nc positions), j = jlist (njd dims, nj
   positions), every other dim of L from 1 (used[d] 0) walked by block, in
   tiles of cw c by tj j positions. 0 where the tiles reach 2^31 (sizes
   below 2^31, fits32: no overflow on the way). */
static int tp_word_plan(const kgi_layout *L, kg_tperm *o, const int *used, const int *clist, int ncd, int64_t nc,
                        const int *jlist, int njd, int64_t nj, int cw, int tj)
{
    const int64_t tiles_c = (nc + cw - 1) / cw, tiles_j = (nj + tj - 1) / tj;
    int64_t tiles = tiles_c * tiles_j, nb = 1;
    int nbd = 0, blist[KG_LAYOUT_MAX_DIMS];
    for (int d = 1; d < L->ndim; d++) {
        if (used[d])
            continue;
        blist[nbd++] = d;
        nb *= L->size[d];
        if ((tiles *= L->size[d]) >= ((int64_t)1 << 31))
            return 0;
    }
    if (tiles >= ((int64_t)1 << 31))
        return 0;
    tp_set_extents(o, nc, nj, nb, tiles_c, tiles_j, tiles);
    const int *const lists[3] = {clist, jlist, blist};
    tp_set_axes(o, L, lists, (const int[3]){ncd, njd, nbd});
    o->staged = 2u;
    o->map = 1;
    o->flat = ncd == 1 && njd == 1;
    return 1;
}

KG_API int kg_ew_plan_tpw(const kgi_layout *L, kg_tperm *o)
{
    memset(o, 0, sizeof *o);
    if (!tp_word_layout(L))
        return 0;
    const int jd = input_unit_dim(L);
    if (jd < 0)
        return 0;
    int used[KG_LAYOUT_MAX_DIMS] = {0};
    used[jd] = 1;
    return tp_word_plan(L, o, used, (const int[1]){0}, 1, L->size[0], &jd, 1, L->size[jd], KG_TPW_CW, KG_TPW_TJ);
}

/* kg_ew_plan_tpx's runs: the dim of L (from 1, not yet used) whose operand
   k stride is run, marked used and appended to list (*n); its size, or 0
   where there is none */
static int64_t tpx_next_dim(const kgi_layout *L, int k, int64_t run, int *used, int *list, int *n)
{
    for (int d = 1; d < L->ndim; d++)
        if (!used[d] && L->stride[k][d] == run) {
            used[d] = 1;
            list[(*n)++] = d;
            return L->size[d];
        }
    return 0;
}

KG_API int kg_ew_plan_tpx(const kgi_layout *L, kg_tperm *o)
{
    memset(o, 0, sizeof *o);
    if (!tp_word_layout(L))
        return 0;
    int jlist[KG_LAYOUT_MAX_DIMS], njd = 0, used[KG_LAYOUT_MAX_DIMS] = {0};
    /* the j axis: the input's contiguous run from its unit-stride dim (below
       2^31, fits32: a span of the input) */
    int64_t run = 1;
    for (int64_t s; (s = tpx_next_dim(L, 1, run, used, jlist, &njd)) > 0;)
        run *= s;
    if (njd == 0)
        return 0;
    /* the c axis: dim 0, and while its tiles are less than 90% full, the
       dim that continues its run in the output (if the j axis has not
       taken it); tiles of KG_TPX_CW, or of 64 where those fill the axis
       by a tenth more (a short axis, or a short last tile) or
       KG_EW_TUNE_TPERMW_CW says so */
    int clist[KG_LAYOUT_MAX_DIMS] = {0}, ncd = 1;
    int64_t nc = L->size[0], cw = tpermw_cw == 64 ? 64 : KG_TPX_CW;
    while ((nc + cw - 1) / cw * cw * 9 > nc * 10) {
        const int64_t s = tpx_next_dim(L, 0, nc, used, clist, &ncd);
        if (s == 0)
            break;
        nc *= s;
    }
    if (tpermw_cw == 0 && (nc + 63) / 64 * 64 * 11 < (nc + KG_TPX_CW - 1) / KG_TPX_CW * KG_TPX_CW * 10)
        cw = 64;
    if (!tp_word_plan(L, o, used, clist, ncd, nc, jlist, njd, run, (int)cw, KG_TPX_TJ))
        return 0;
    o->words = 2;
    o->rc = (uint32_t)cw;
    return 1;
}

/* the dynamic shared memory that holds the 2-byte <op>_tperms to bps (4 or
   5) blocks a multiprocessor: each block's footprint (its 19008 static
   bytes, the 1 KiB the hardware keeps a block, this) just over 1 / (bps +
   1) of the 228 KiB a multiprocessor shares; 0 for any other bps */
static size_t tpx_pad(int bps)
{
    if (bps != 4 && bps != 5)
        return 0;
    return (size_t)(233472 / (bps + 1) + 1 - 19008 - 1024);
}

/* the dense kernels' launch: dense_vpt vectors a thread (the launch's
   threads cover nvec / dense_vpt; 1 or 2; 0, the default: by op,
   kg_ew_dense_vpt), dense_threads threads a block (KG_EW_TUNE_DENSE_VPT,
   KG_EW_TUNE_DENSE_THREADS) */
static int dense_vpt = 0;

/* H200 run s18r2 (one Python process, interleaved, 2^28, GB/s one vector a
   thread / two, 256 threads): exp bf16 4234.1 / 4202.6 (PyTorch 4250.5),
   f16 4251.0 / 4200.0 (4250.6), f32 4277.8 / 4220.6 (4226.2); add bf16
   4381.2 / 4365.3, f32 4398.0 / 4383.0 (2^24: 4097.5 / 4072.1); gelu bf16
   3966.5 / 4161.1 (compute-bound: two a thread); cast bf16 -> f32 4086.7 /
   4084.5. One vector a thread for the measured winners, exp and add. */
KG_API int kg_ew_dense_vpt(int op)
{
    if (dense_vpt == 1 || dense_vpt == 2)
        return dense_vpt;
    return op == KG_OP_EXP || op == KG_OP_ADD ? 1 : 2;
}
/* 256 threads a block (KG_EW_TUNE_DENSE_THREADS 128: 128). H200 s23r3,
   same process, exp of f16 / bf16 in blocks of 128 against 256 (PyTorch's
   launch is one vector a thread in blocks of 128): 2^24 19.12 / 19.16 us
   and 19.10 / 19.16, 2^28 254.71 / 254.58 and 254.68 / 254.68, 2^12 5.13
   / 4.60 and 4.82 / 5.07 (launch-bound): level, so not taken. */
static int dense_threads = KG_EW_THREADS;

/* The lanes per row of rows, as a log2 (2..5): the widest group (longest
   runs per warp access) that leaves at most 30% of the lanes idle over a
   row, else the one leaving the fewest idle. */
static uint32_t rows_lanes_log2(int64_t n0)
{
    uint32_t best = 5;
    double beff = 0;
    for (uint32_t lg = 5; lg >= 2; lg--) {
        const int64_t lp = (int64_t)1 << lg, steps = (n0 + lp - 1) / lp;
        const double e = (double)n0 / (double)(steps * lp);
        if (e >= 0.7)
            return lg;
        if (e > beff) {
            beff = e;
            best = lg;
        }
    }
    return best;
}

static kg_status check_dtypes(kg_context *ctx, const kg_op_info *info, const kg_tensor *out, const kg_tensor *const *in,
                              kg_dtype *dt)
{
    const int first = info->cond_first ? 1 : 0;
    if (info->cond_first && in[0]->dtype != KG_BOOL)
        return kg_fail(ctx, KG_ERR_DTYPE, "%s: %s must be bool, got %s", info->name, info->inputs[0],
                       kg_dtype_name(in[0]->dtype));
    *dt = in[first]->dtype;
    for (int i = first + 1; i < info->arity; i++)
        if (in[i]->dtype != *dt)
            return kg_fail(ctx, KG_ERR_DTYPE,
                           "dtype mismatch: %s: %s is %s, %s is %s (inputs of one call share a dtype; convert "
                           "with kg_cast)",
                           info->name, info->inputs[first], kg_dtype_name(*dt), info->inputs[i],
                           kg_dtype_name(in[i]->dtype));
    if (!(info->dtype_mask & (1u << *dt)))
        return kg_fail_dtype(ctx, info->name, *dt, info->dtype_mask);
    const kg_dtype want = info->out_rule == KG_OUT_BOOL ? KG_BOOL : *dt;
    if (info->out_rule != KG_OUT_ANY && out->dtype != want)
        return kg_fail(ctx, KG_ERR_DTYPE, "%s: out is %s but the result is %s", info->name, kg_dtype_name(out->dtype),
                       kg_dtype_name(want));
    return KG_OK;
}

static kg_status check_shapes(kg_context *ctx, const kg_op_info *info, const kg_tensor *out, const kg_tensor *const *in)
{
    int nd;
    int64_t shape[KG_MAX_DIMS];
    kg_status st = kgi_broadcast_shapes(ctx, in, info->inputs, info->arity, &nd, shape);
    if (st != KG_OK)
        return st;
    int same = out->ndim == nd;
    for (int d = 0; same && d < nd; d++)
        same = out->shape[d] == shape[d];
    if (!same) {
        char o[128], b[128];
        return kg_fail(ctx, KG_ERR_SHAPE, "shape mismatch: %s: out is %s but the inputs broadcast to %s", info->name,
                       kg_shape_str(o, sizeof o, out->ndim, out->shape), kg_shape_str(b, sizeof b, nd, shape));
    }
    return KG_OK;
}

/* 1 when every stride of operand k but the one along `along` is a multiple of vec. */
static int strides_divide(const kgi_layout *L, int k, int along, int vec)
{
    for (int d = 0; d < L->ndim; d++)
        if (d != along && L->stride[k][d] % vec)
            return 0;
    return 1;
}

static unsigned grid_for(int64_t work)
{
    /* ceiling division without work + KG_EW_THREADS - 1 (work may be up to INT64_MAX: a valid tensor of 2^63 - 1
       one-byte elements; found by fuzz_plan) */
    int64_t blocks = work / KG_EW_THREADS + (work % KG_EW_THREADS != 0);
    if (blocks > MAX_BLOCKS)
        blocks = MAX_BLOCKS;
    return (unsigned)(blocks > 0 ? blocks : 1);
}

/* The nd32v form of L: inner dim moved `vec` elements at a time. 0 when some
   operand's inner dim is neither contiguous nor broadcast, or not aligned. */
static int try_nd32v(const kgi_layout *L, const kg_ew_ptrs *p, const kg_tensor *out, const kg_tensor *const *in, int vec,
                     kg_nd32 *o)
{
    if (L->ndim < 1 || L->size[0] % vec || L->stride[0][0] != 1)
        return 0;
    unsigned bcast = 0;
    for (int k = 0; k < L->nops; k++) {
        const size_t es = kg_dtype_size(k ? in[k - 1]->dtype : out->dtype);
        const void *base = k ? p->in[k - 1] : p->out;
        if (L->stride[k][0] == 0) {
            bcast |= 1u << k;
            continue;
        }
        if (L->stride[k][0] != 1 || !kgi_aligned(base, es * (size_t)vec))
            return 0;
        for (int d = 1; d < L->ndim; d++)
            if (L->stride[k][d] % vec)
                return 0;
    }
    kgi_layout V = *L;
    V.size[0] /= vec;
    for (int k = 0; k < L->nops; k++)
        V.stride[k][0] *= vec;
    kgi_layout_to_nd32(&V, o);
    o->bcast = bcast;
    return 1;
}

/* The perm form of L (kg_params.h): J is the fast dim (smallest non-zero
   stride) of the first input whose fast dim is not dim 0 and that is not
   broadcast along dim 0; every such input with the same fast dim is staged.
   Dim 0 or J of at most half a tile is folded with one more dim (the batch dim
   of the smallest output stride, resp. the smallest non-zero stride of the
   first staged input). Vectors of `vec` elements along J (staged inputs) and
   along dim 0 (the output and the other inputs) where the sizes, strides and
   pointers allow. es[k] and ptrs[k] are operand k's element size and base
   (0 = output). Returns 0 when no input is transposed, or for more than
   2^31 - 1 tiles. */
KG_API int kg_ew_plan_perm(const kgi_layout *L, const void *const *ptrs, const size_t *es, int vec, kg_perm *o)
{
    memset(o, 0, sizeof *o);
    if (L->ndim < 2 || L->ndim > KG_LAYOUT_MAX_DIMS)
        return 0;
    int fast[KG_EW_MAX_OPERANDS], J = -1, k0 = -1;
    size_t maxes = 0;
    for (int k = 0; k < L->nops; k++) {
        fast[k] = -1;
        for (int d = 0; d < L->ndim; d++)
            if (L->stride[k][d] != 0 && (fast[k] < 0 || L->stride[k][d] < L->stride[k][fast[k]]))
                fast[k] = d;
        if (k > 0 && J < 0 && fast[k] > 0 && L->stride[k][0] != 0) {
            J = fast[k];
            k0 = k;
        }
        maxes = es[k] > maxes ? es[k] : maxes;
    }
    if (J < 0)
        return 0;
    const int64_t T = maxes >= 8 ? 32 : 64; /* kg_perm_shape in elementwise.cuh */
    const int64_t lim = (int64_t)1 << 31;   /* 32-bit tile indices; no product below overflows */
    int fc = -1, fj = -1;
    /* fold an axis whose dim fills at most half a tile: measured on the H200,
       a dim of 5-23 runs 2-5x faster folded, one of 33-59 mostly slower
       (permf's per-position offsets cost more than the idle lanes) */
    const int64_t fmax = fold_max > 0 ? fold_max : T == 64 ? 48 : T / 2;
    if (L->size[0] <= fmax) /* dims are ordered by the output's stride */
        for (int d = 1; d < L->ndim && fc < 0; d++)
            if (d != J && L->size[d] < lim / L->size[0])
                fc = d;
    if (L->size[J] <= fmax)
        for (int d = 1; d < L->ndim; d++)
            if (d != J && d != fc && L->stride[k0][d] != 0 && L->size[d] < lim / L->size[J] &&
                (fj < 0 || L->stride[k0][d] < L->stride[k0][fj]))
                fj = d;
    const int64_t n0 = L->size[0] * (fc >= 0 ? L->size[fc] : 1), nj = L->size[J] * (fj >= 0 ? L->size[fj] : 1);
    const int64_t tiles_c = (n0 + T - 1) / T, tiles_j = (nj + T - 1) / T;
    if (n0 >= lim || nj >= lim || tiles_c * tiles_j >= lim)
        return 0;
    int64_t tiles = tiles_c * tiles_j;
    for (int d = 1; d < L->ndim; d++)
        if (d != J && d != fc && d != fj && (L->size[d] >= lim || (tiles *= L->size[d]) >= lim))
            return 0;
    o->n0 = n0;
    o->nj = nj;
    o->tiles = (uint32_t)tiles;
    o->tiles_c = (uint32_t)tiles_c;
    o->tiles_j = (uint32_t)tiles_j;
    kgi_divmod_magic(o->tiles_c, &o->magic_c, &o->shift_c);
    kgi_divmod_magic(o->tiles_j, &o->magic_j, &o->shift_j);
    if (fc >= 0) {
        o->fold_c = (uint32_t)L->size[0];
        kgi_divmod_magic(o->fold_c, &o->fmagic_c, &o->fshift_c);
    }
    if (fj >= 0) {
        o->fold_j = (uint32_t)L->size[J];
        kgi_divmod_magic(o->fold_j, &o->fmagic_j, &o->fshift_j);
    }
    for (int k = 0; k < L->nops; k++) {
        o->stride[k][0] = L->stride[k][0];
        o->stride[k][1] = L->stride[k][J];
        o->fstride[0][k] = fc >= 0 ? L->stride[k][fc] : 0;
        o->fstride[1][k] = fj >= 0 ? L->stride[k][fj] : 0;
    }
    for (int d = 1; d < L->ndim; d++) {
        if (d == J || d == fc || d == fj)
            continue;
        const int b = o->nbatch++;
        o->bsize[b] = (uint32_t)L->size[d];
        kgi_divmod_magic(o->bsize[b], &o->bmagic[b], &o->bshift[b]);
        for (int k = 0; k < L->nops; k++)
            o->stride[k][2 + b] = L->stride[k][d];
    }
    for (int k = 1; k < L->nops; k++)
        if (fast[k] == J && L->stride[k][0] != 0)
            o->staged |= 1u << k;
    /* operand k moves `vec` elements at a time along dim `along` */
#define VEC_OK(k, along)                                                                                               \
    (L->stride[k][along] == 1 && (kgi_aligned(ptrs[k], es[k] * (size_t)vec)) && strides_divide(L, k, along, vec))
    int vj = vec > 1 && L->size[J] % vec == 0, vc = vec > 1 && L->size[0] % vec == 0 && VEC_OK(0, 0);
    for (int k = 1; k < L->nops; k++) {
        if (o->staged & (1u << k))
            vj = vj && VEC_OK(k, J);
        else
            vc = vc && (L->stride[k][0] == 0 || VEC_OK(k, 0));
    }
#undef VEC_OK
    o->vec_j = (uint32_t)vj;
    o->vec_c = (uint32_t)vc;
    return 1;
}

/* rect's tile extents (kg_tperm.h rect) for input kr whose fast dim is d
   (>= 1): the output's dim 0 of 2 to tperm_rect elements, its dim 1 = d (kr
   reads it faster than dim 0), the output contiguous over both: rc = that
   dim 0 (each tile's output one run), rj the largest multiple of
   tperm_rect_step (at least 32; up to d rounded up) whose tile holds at
   most T * T positions and fits every input's staging buffer
   (KG_TPR_PITCH). Returns 0 where that does not hold. */
static int rect_extents(const kgi_layout *L, const size_t *es, int64_t T, int kr, int d, int64_t *rc, int64_t *rj)
{
    const int64_t n0 = L->size[0], nd = L->size[d];
    if (!(d == 1 && n0 >= 2 && n0 <= tperm_rect && nd >= 64 && L->stride[0][0] == 1 && L->stride[0][1] == n0 &&
          L->stride[kr][0] > L->stride[kr][1]))
        return 0;
    int64_t best = 0;
    const int64_t step = tperm_rect_step;
    for (int64_t x = (32 + step - 1) / step * step; x <= (nd + step - 1) / step * step && n0 * x <= T * T; x += step) {
        int fits = 1;
        for (int k = 1; k < L->nops; k++)
            fits = fits && n0 * (int64_t)KG_TPR_PITCH(es[k], (uint32_t)x) <= (int64_t)KG_TP_STAGE_ELEMS(es[k], T);
        if (fits)
            best = x;
    }
    /* the tiles: at least 90% of T * T positions each (the long side's last
       one aside), at least tperm_rect_tiles of them along the long side */
    if (best == 0 || n0 * best * 10 < T * T * 9 || nd < best * tperm_rect_tiles)
        return 0;
    *rc = n0;
    *rj = best;
    return 1;
}

/* The tperm form of L (kg_tperm.h). The c axis starts with dim 0 (the
   output's fast dim) and takes further dims in the output's order; the j
   axis starts with the fast dim of the first input whose fast dim is not
   dim 0 and that is not broadcast along dim 0 (else of the first input with
   a non-zero stride) and takes further dims in that input's stride order.
   While an axis is shorter than a tile T, or its last tile leaves it less
   than tperm_fill percent full, it folds in its next dim not taken yet (the
   shorter axis first, so the run an operand reads contiguously grows where
   it is shortest); with no dim left, a power-of-2 part of the other axis's
   outermost dim moves over (a transpose with one short side); every dim
   left is walked by block. Inputs more
   contiguous along j than along c are staged. */
KG_API int kg_ew_plan_tperm(const kgi_layout *L0, const size_t *es, kg_tperm *o)
{
    memset(o, 0, sizeof *o);
    if (L0->ndim < 2 || L0->ndim > KG_LAYOUT_MAX_DIMS || L0->nops < 2 || !kgi_layout_fits32(L0))
        return 0;
    kgi_layout M = *L0, *L = &M; /* split dims (below) are added to this copy */
    size_t maxes = 0;
    for (int k = 0; k < L->nops; k++)
        maxes = es[k] > maxes ? es[k] : maxes;
    const int64_t T = KG_TP_TILE(maxes);
    const int64_t lim = (int64_t)1 << 31;
    int kr = -1, kany = -1;
    for (int k = 1; k < L->nops && kr < 0; k++) {
        int fast = -1;
        for (int d = 0; d < L->ndim; d++)
            if (L->stride[k][d] != 0 && (fast < 0 || L->stride[k][d] < L->stride[k][fast]))
                fast = d;
        if (fast > 0 && L->stride[k][0] != 0)
            kr = k;
        if (fast >= 0 && kany < 0)
            kany = k;
    }
    if (kr < 0)
        kr = kany;
    if (kr < 0)
        return 0;
    /* j candidates: dims 1.. with a non-zero stride in kr, by that stride */
    int ord[KG_LAYOUT_MAX_DIMS], no = 0;
    for (int d = 1; d < L->ndim; d++) {
        if (L->stride[kr][d] == 0)
            continue;
        int i = no++;
        while (i > 0 && L->stride[kr][ord[i - 1]] > L->stride[kr][d]) {
            ord[i] = ord[i - 1];
            i--;
        }
        ord[i] = d;
    }
    int axis[KG_LAYOUT_MAX_DIMS];
    for (int d = 0; d < L->ndim; d++)
        axis[d] = KG_TP_B;
    axis[0] = KG_TP_C;
    int64_t n[2] = {L->size[0], 1};
    int list[2][KG_LAYOUT_MAX_DIMS], cnt[2] = {1, 0};
    list[KG_TP_C][0] = 0;
    if (no > 0) {
        axis[ord[0]] = KG_TP_J;
        n[KG_TP_J] = L->size[ord[0]];
        list[KG_TP_J][cnt[KG_TP_J]++] = ord[0];
    }
    int64_t rc = T, rj = T; /* tile extents (rect: rect_extents) */
    const int rect = no > 0 && tperm_rect > 0 && maxes >= (size_t)tperm_rect_min_bytes &&
                     rect_extents(L, es, T, kr, ord[0], &rc, &rj);
    for (; !rect;) {
        int cand[2] = {-1, -1}, want[2];
        for (int d = 1; d < L->ndim && cand[KG_TP_C] < 0; d++)
            if (axis[d] == KG_TP_B)
                cand[KG_TP_C] = d;
        for (int i = 0; i < no && cand[KG_TP_J] < 0; i++)
            if (axis[ord[i]] == KG_TP_B)
                cand[KG_TP_J] = ord[i];
        for (int a = 0; a < 2; a++) {
            const int64_t tiles = (n[a] + T - 1) / T;
            want[a] = cand[a] >= 0 && L->size[cand[a]] < lim / n[a] &&
                      (n[a] < T || n[a] * 100 < (int64_t)tperm_fill * tiles * T);
        }
        if (!want[KG_TP_C] && !want[KG_TP_J]) {
            /* an axis still below the fill with no dim left: split the other
               axis's outermost dim d (size s) into s / f (staying) and f (moving
               over), f the smallest power of 2 dividing s that fills the short
               axis and leaves the other one at least a tile */
            int a = -1;
            for (int x = 0; x < 2; x++) {
                const int64_t tiles = (n[x] + T - 1) / T;
                if (cand[x] < 0 && n[x] * 100 < (int64_t)tperm_fill * tiles * T)
                    a = x;
            }
            if (a < 0 || L->ndim >= KG_LAYOUT_MAX_DIMS || cnt[1 - a] == 0)
                break;
            const int d = list[1 - a][cnt[1 - a] - 1];
            int64_t f = 2;
            for (; f <= L->size[d] && L->size[d] % f == 0 && n[1 - a] / f >= T; f *= 2) {
                const int64_t nn = n[a] * f, tiles = (nn + T - 1) / T;
                if (nn * 100 >= (int64_t)tperm_fill * tiles * T)
                    break;
            }
            int split = f <= L->size[d] && L->size[d] % f == 0 && n[1 - a] / f >= T;
            /* no power of 2 fills it (an odd long side) and the short axis is
               j, shorter than a tile (the input's rows): the smallest other
               divisor up to 2T that fills it (H200 run r4 of 2026-12-02,
               same run: bf16 [847,891,29] p2.0.1 add 35.8 -> 61.2% of copy,
               [1043,875,25] copy 38.4 -> 51.5, f32 [1106,942,22] 58.0 ->
               67.0; a short c lost, 41 x 532385^T bf16 55.3 -> 50.2, and so
               did splits for the fill of axes longer than a tile, -2 to -12) */
            for (int64_t g = 3; !split && tperm_divisors && a == KG_TP_J && n[a] < T && g <= 2 * T; g++) {
                if ((g & (g - 1)) == 0 || g > L->size[d] || L->size[d] % g || n[1 - a] / g < T)
                    continue;
                const int64_t nn = n[a] * g, tiles = (nn + T - 1) / T;
                if (nn * 100 >= (int64_t)tperm_fill * tiles * T) {
                    f = g;
                    split = 1;
                }
            }
            if (!split)
                break;
            const int nd_ = L->ndim++;
            L->size[d] /= f;
            L->size[nd_] = f;
            for (int k = 0; k < L->nops; k++)
                L->stride[k][nd_] = L->stride[k][d] * L->size[d];
            axis[nd_] = a;
            list[a][cnt[a]++] = nd_;
            n[a] *= f;
            n[1 - a] /= f;
            continue;
        }
        const int a = want[KG_TP_C] && (!want[KG_TP_J] || n[KG_TP_C] <= n[KG_TP_J]) ? KG_TP_C : KG_TP_J;
        axis[cand[a]] = a;
        n[a] *= L->size[cand[a]];
        list[a][cnt[a]++] = cand[a];
    }
    const int64_t tiles_c = (n[KG_TP_C] + rc - 1) / rc, tiles_j = (n[KG_TP_J] + rj - 1) / rj;
    int64_t tiles = tiles_c * tiles_j, nb = 1;
    int nbd = 0, blist[KG_LAYOUT_MAX_DIMS];
    for (int d = 1; d < L->ndim; d++)
        if (axis[d] == KG_TP_B) {
            blist[nbd++] = d;
            nb *= L->size[d];
        }
    if ((tiles *= nb) >= lim) /* n < 2^31 (fits32), so no product above overflows */
        return 0;
    tp_set_extents(o, n[KG_TP_C], n[KG_TP_J], nb, tiles_c, tiles_j, tiles);
    const int *const lists[3] = {list[KG_TP_C], list[KG_TP_J], blist};
    tp_set_axes(o, L, lists, (const int[3]){cnt[KG_TP_C], cnt[KG_TP_J], nbd});
    /* staged: the smallest non-zero stride along j below the one along c */
    for (int k = 1; k < L->nops; k++) {
        int64_t sm[2] = {0, 0};
        for (int d = 0; d < L->ndim; d++)
            if (axis[d] != KG_TP_B && L->stride[k][d] != 0 && (sm[axis[d]] == 0 || L->stride[k][d] < sm[axis[d]]))
                sm[axis[d]] = L->stride[k][d];
        if (sm[KG_TP_J] != 0 && sm[KG_TP_C] != 0 && sm[KG_TP_J] < sm[KG_TP_C])
            o->staged |= 1u << k;
    }
    o->map = (uint32_t)tperm_map;
    o->flat = tperm_flat && o->nd[KG_TP_C] == 1 && o->nd[KG_TP_J] == 1;
    const int by_tiles = maxes >= 4 && tiles_c >= tperm_jfirst_ratio * tiles_j;
    o->jfirst = (uint32_t)(tperm_jfirst == 3   ? by_tiles
                           : tperm_jfirst == 2 ? by_tiles || (L->nops == 3 && maxes == 2 && tperm_out_along_j(o))
                                               : tperm_jfirst);
    o->full = (uint32_t)tperm_full;
    if (rect) {
        o->rect = 1;
        o->full = 0;
        o->rc = (uint32_t)rc;
        o->rj = (uint32_t)rj;
        kgi_divmod_magic(o->rc, &o->magic_rc, &o->shift_rc);
        kgi_divmod_magic(o->rj, &o->magic_rj, &o->shift_rj);
    }
    return 1;
}

KG_API int kg_ew_tperm_words_ok(const kg_tperm *tp, const void *out, const void *in, const void *in1)
{
    if (tp->rect || tp->staged != 2u || (((uintptr_t)out | (uintptr_t)in | (uintptr_t)in1) & 3u) ||
        tp->nd[KG_TP_C] < 1 || tp->nd[KG_TP_J] < 1)
        return 0;
    if (tp->stride[KG_TP_C][0][0] != 1 || tp->size[KG_TP_C][0] % 2 || tp->stride[KG_TP_J][1][0] != 1 ||
        tp->size[KG_TP_J][0] % 2 || (in1 && tp->stride[KG_TP_C][2][0] != 1))
        return 0;
    /* the unit strides above aside (the output's and input 1's along c,
       input 0's along j), every stride even */
    const int nk = in1 ? 3 : 2;
    for (int a = 0; a < 3; a++)
        for (int k = 0; k < nk; k++)
            for (int i = 0; i < tp->nd[a]; i++)
                if (!(i == 0 && (a == KG_TP_C ? k != 1 : a == KG_TP_J && k == 1)) && tp->stride[a][k][i] % 2)
                    return 0;
    return 1;
}

/* rowsv's plan (kg_tperm.h) for the coalesced layout L of a copy of es-byte
   elements (out = operand 0, in = operand 1): 1 where the rule takes it
   (rowsv_mode, rowsv_min_bytes above; nd32v_ok: nd32v would serve L) and
   dim 0 is contiguous in both, its rows (and the chunk count) within 31
   bits. */
KG_API int kg_ew_plan_rowsv(const kgi_layout *L, size_t es, int nd32v_ok, kg_rowsv *r)
{
    memset(r, 0, sizeof *r);
    if (rowsv_mode == 0 || (nd32v_ok && rowsv_mode != 2) || L->ndim < 1 || L->nops != 2 || L->stride[0][0] != 1 ||
        L->stride[1][0] != 1 || !kgi_layout_fits32(L))
        return 0;
    int64_t rows = 1;
    for (int d = 1; d < L->ndim; d++)
        rows *= L->size[d]; /* fits32: every product of sizes is below 2^31 */
    const int64_t nb = L->size[0] * (int64_t)es, cpr = nb / 16 + 2;
    if (nb < rowsv_min_bytes || nb >= ((int64_t)1 << 31) || rows * cpr >= ((int64_t)1 << 31))
        return 0;
    kgi_layout_to_nd32(L, &r->L);
    r->cpr = (uint32_t)cpr;
    r->chunks = (uint32_t)(rows * cpr);
    kgi_divmod_magic(r->cpr, &r->magic, &r->shift);
    return 1;
}

/* The other dims of L than 0 and 1 (one dim of 1 where there are none). */
static void layout_outer(const kgi_layout *L, kg_nd32 *B)
{
    kgi_layout O = *L;
    O.ndim = L->ndim - 2;
    for (int d = 0; d < O.ndim; d++) {
        O.size[d] = L->size[d + 2];
        for (int k = 0; k < L->nops; k++)
            O.stride[k][d] = L->stride[k][d + 2];
    }
    if (O.ndim == 0) {
        O.ndim = 1;
        O.size[0] = 1;
        for (int k = 0; k < L->nops; k++)
            O.stride[k][0] = 0;
    }
    kgi_layout_to_nd32(&O, B);
}

KG_API int kg_ew_plan_tplane(const kgi_layout *L, size_t es, kg_tplane *q, size_t *smem)
{
    memset(q, 0, sizeof *q);
    *smem = 0;
    if (tplane_mode == 0 || L->ndim < 2 || L->nops != 2 || !kgi_layout_fits32(L))
        return 0;
    const int64_t nc = L->size[0], nj = L->size[1];
    if (L->stride[0][0] != 1 || L->stride[0][1] != nc || L->stride[1][1] != 1 || L->stride[1][0] != nj)
        return 0;
    /* the buffer: the run and its first chunk's offset in 16-byte chunks */
    const int64_t bytes = nc * nj * (int64_t)es + 32;
    if (nc * nj * (int64_t)es < tplane_min_bytes || bytes > KG_TQ_MAX_BYTES)
        return 0;
    layout_outer(L, &q->B);
    q->nc = (uint32_t)nc;
    q->nj = (uint32_t)nj;
    q->planes = q->B.n;
    q->rot = (uint32_t)(gather_rot == 1 || (gather_rot == 2 && nj % 2 == 0));
    kgi_divmod_magic(q->nc, &q->magic_nc, &q->shift_nc);
    *smem = (size_t)bytes;
    return 1;
}

KG_API int kg_ew_plan_tplanem(const kgi_layout *L, size_t es, kg_tplanem *m, size_t *smem)
{
    memset(m, 0, sizeof *m);
    *smem = 0;
    if ((es != 2 && es != 4) || L->ndim < 3 || L->nops != 2 || !kgi_layout_fits32(L))
        return 0;
    const int64_t nc = L->size[0], nj = L->size[1], n = nc * nj, pb = n * (int64_t)es, s0 = L->size[2];
    if (L->stride[0][0] != 1 || L->stride[0][1] != nc || L->stride[1][1] != 1 || L->stride[1][0] != nj ||
        L->stride[0][2] != n || L->stride[1][2] != n || pb + 32 > KG_TQ_MAX_BYTES)
        return 0;
    /* the most planes within tplanem_bytes (at least one, the buffer within
       KG_TQ_MAX_BYTES), then as many groups along dim 2 and as few planes a
       group as that takes */
    int64_t ppb = tplanem_bytes / pb;
    ppb = ppb < 1 ? 1 : ppb > s0 ? s0 : ppb;
    if (ppb * pb + 32 > KG_TQ_MAX_BYTES)
        ppb = (KG_TQ_MAX_BYTES - 32) / pb;
    const int64_t gpr = (s0 + ppb - 1) / ppb;
    ppb = (s0 + gpr - 1) / gpr;
    layout_outer(L, &m->q.B);
    const int64_t groups = gpr * (m->q.B.n / s0);
    if (groups >= ((int64_t)1 << 31))
        return 0;
    m->q.nc = (uint32_t)nc;
    m->q.nj = (uint32_t)nj;
    m->q.planes = m->q.B.n;
    m->q.rot = (uint32_t)(gather_rot == 1 || (gather_rot == 2 && nj % 2 == 0));
    kgi_divmod_magic(m->q.nc, &m->q.magic_nc, &m->q.shift_nc);
    m->s0 = (uint32_t)s0;
    m->ppb = (uint32_t)ppb;
    m->gpr = (uint32_t)gpr;
    m->groups = (uint32_t)groups;
    kgi_divmod_magic(m->gpr, &m->magic_gpr, &m->shift_gpr);
    kgi_divmod_magic(m->q.nj, &m->magic_nj, &m->shift_nj);
    *smem = (size_t)(ppb * pb + 32);
    return 1;
}

KG_API int kg_ew_plan_tslab(const kgi_layout *L, size_t es, kg_tslab *z, size_t *smem)
{
    memset(z, 0, sizeof *z);
    *smem = 0;
    if (tslab_max_nc == 0 || L->ndim < 2 || L->nops != 2 || !kgi_layout_fits32(L))
        return 0;
    const int64_t nc = L->size[0], nj = L->size[1], M = 16 / (int64_t)es, pad = es >= 8 ? 8 : 4;
    if (nc < 2 || nc > tslab_max_nc || L->stride[0][0] != 1 || L->stride[0][1] != nc || L->stride[1][1] != 1 ||
        L->stride[1][0] == 0)
        return 0;
    /* J: the largest multiple of M whose buffer fits, at most nj rounded up */
    int64_t J = ((int64_t)tslab_bytes / nc - pad) / (int64_t)es / M * M;
    if (J > (nj + M - 1) / M * M)
        J = (nj + M - 1) / M * M;
    if (J < M)
        return 0;
    layout_outer(L, &z->B);
    const int64_t sj = (nj + J - 1) / J, slabs = sj * z->B.n;
    if (slabs >= ((int64_t)1 << 31))
        return 0;
    z->nc = (uint32_t)nc;
    z->nj = (uint32_t)nj;
    z->J = (uint32_t)J;
    z->sj = (uint32_t)sj;
    z->slabs = (uint32_t)slabs;
    z->pitch = (uint32_t)(J * (int64_t)es + pad);
    z->cpr = (uint32_t)(J * (int64_t)es / 16);
    z->sci = (int32_t)L->stride[1][0];
    z->rot = (uint32_t)(gather_rot == 1);
    kgi_divmod_magic(z->nc, &z->magic_nc, &z->shift_nc);
    kgi_divmod_magic(z->sj, &z->magic_sj, &z->shift_sj);
    *smem = (size_t)nc * z->pitch;
    return 1;
}

KG_API int kg_ew_tslab_by_default(const kg_tslab *z, size_t es) { return es == 2 && z->nj >= z->J; }

KG_API int kg_ew_tplanem_by_default(const kg_tplanem *m, size_t es)
{
    return tplanem_mode == 1 && (int64_t)m->q.nc * m->q.nj * (int64_t)es < tplane_min_bytes;
}

KG_API int kg_ew_plan_tchunk(const kgi_layout *L, size_t es, kg_tchunk *z, size_t *smem)
{
    memset(z, 0, sizeof *z);
    *smem = 0;
    if (tchunk_mode == 0 || L->ndim < 2 || L->nops != 2 || !kgi_layout_fits32(L) || L->stride[0][0] != 1 ||
        L->stride[1][0] == 0)
        return 0;
    const int J = input_unit_dim(L);
    if (J < 0)
        return 0;
    const int64_t e = (int64_t)es, nc = L->size[0], nj = L->size[J];
    /* tiles of at most cq_max output chunks (M elements each) along c and
       KG_TC_JN positions along j, evened out over each axis */
    const int64_t cq_max = tchunk_cq > 0 && tchunk_cq < KG_TC_CQ_MAX(e) ? tchunk_cq : KG_TC_CQ_MAX(e), M = 16 / e;
    const int64_t chunks = (nc + M - 1) / M, tiles_c0 = (chunks + cq_max - 1) / cq_max;
    const int64_t cq = (chunks + tiles_c0 - 1) / tiles_c0, tiles_c = (nc + cq * M - 1) / (cq * M);
    const int64_t tiles_j = (nj + KG_TC_JN - 1) / KG_TC_JN, jn = (nj + tiles_j - 1) / tiles_j;
    const int64_t stage = KG_TC_STAGE_BYTES(e, cq);
    if (stage > KG_TQ_MAX_BYTES)
        return 0;
    /* B: every dim but 0 and J */
    kgi_layout O = *L;
    O.ndim = 0;
    for (int d = 1; d < L->ndim; d++) {
        if (d == J)
            continue;
        O.size[O.ndim] = L->size[d];
        for (int k = 0; k < L->nops; k++)
            O.stride[k][O.ndim] = L->stride[k][d];
        O.ndim++;
    }
    if (O.ndim == 0) {
        O.ndim = 1;
        O.size[0] = 1;
        O.stride[0][0] = O.stride[1][0] = 0;
    }
    kgi_layout_to_nd32(&O, &z->B);
    const int64_t tiles = tiles_c * tiles_j * (int64_t)z->B.n;
    if (tiles >= ((int64_t)1 << 31))
        return 0;
    int64_t in_n = 1;
    for (int d = 0; d < L->ndim; d++)
        in_n += (L->size[d] - 1) * L->stride[1][d];
    z->nc = (uint32_t)nc;
    z->nj = (uint32_t)nj;
    z->cq = (uint32_t)cq;
    z->jn = (uint32_t)jn;
    z->sci = (int32_t)L->stride[1][0];
    z->soj = (int32_t)L->stride[0][J];
    z->tiles_c = (uint32_t)tiles_c;
    z->tiles_j = (uint32_t)tiles_j;
    z->tiles = (uint32_t)tiles;
    z->tpb = (uint32_t)tchunk_tpb;
    kgi_divmod_magic(z->tiles_c, &z->magic_c, &z->shift_c);
    kgi_divmod_magic(z->tiles_j, &z->magic_j, &z->shift_j);
    z->stage = (uint32_t)stage;
    z->in_n = (uint32_t)in_n;
    *smem = (size_t)stage;
    return 1;
}

/* The default choice between a tperm plan tp and the other variants (where
   perm's plan pm and nd32v are eligible), from the H200 measurements of
   2026-12-01 (bench/RESULTS.md): vectors win where they fit (nd32v; perm with vector
   stores along the output's fast dim and tiles at least 90% full on both
   axes, e.g. bf16 [33,64,95,91] p0.2.3.1 64.3% against tperm's 56.3%; with
   a tile axis less full tperm wins, p0.3.1.2 54.2 vs 50.8), except for
   elements of at most 2 bytes where perm would also load vectors (both
   fast dims aligned: even 2-d transposes), where tperm wins (two tiles per
   pass for copies and casts; H200 2026-12-02 run r5: bf16 copy 6016x5024^T
   67.9% vs perm 64.9, 8192^2 72.8 vs 72.0, add 4096^2 58.5 vs 56.3; run of
   2026-12-01 21:00: 73.7 vs 72.0, 57.5 vs 56.3). With scalar loads perm
   stays ahead (r5: [33,64,95,91] p0.2.3.1 64.0 vs 63.1, p2.3.0.1 65.7 vs
   63.0), and so does it in f32 (0.6-1.0 points);
   for elements of 4 bytes and more
   with no staged input (an inner dim kept in place), nd32 wins unless every
   row the tiles write starts on a 32-byte sector (every output stride
   outside the c axis a multiple of 32 bytes); tperm everywhere else.
   es_max: the widest operand's element size, out_es the output's. */
KG_API int kg_ew_tperm_preferred(const kg_tperm *tp, const kg_perm *pm, int perm_ok, int nd32v_ok, size_t es_max,
                                 size_t out_es)
{
    if (nd32v_ok)
        return 0;
    if (perm_ok && pm->vec_c && !(es_max <= 2 && pm->vec_j)) { /* perm's tiles full on both axes (>= 90%) */
        const int64_t T = KG_TP_TILE(es_max), tc = (pm->n0 + T - 1) / T * T, tj = (pm->nj + T - 1) / T * T;
        if (pm->n0 * 10 >= tc * 9 && pm->nj * 10 >= tj * 9)
            return 0;
    }
    if (es_max >= 4 && tp->staged == 0)
        for (int a = KG_TP_J; a <= KG_TP_B; a++)
            for (int i = 0; i < tp->nd[a]; i++)
                if (((int64_t)tp->stride[a][0][i] * (int64_t)out_es) % 32)
                    return 0;
    return 1;
}

/* tperm's word path for this call (kg_tperm.h words: <op>_tperm2, one
   input, 2-byte elements in and out, kg_ew_tperm_words_ok). Where it holds
   tperm is the default choice over perm (H200 run r1 of 2026-12-02: bf16
   copy 6544x3334^T 76.6% of copy against perm's 66.7; 8192^2 89.3%, was
   74.3 with elements one by one). */
static int words_ok(const kg_tperm *tp, const kg_ew_ptrs *p, int n_in, kg_dtype dt, kg_dtype odt)
{
    return ((n_in == 1 && tperm_pair && tperm_words) || (n_in == 2 && tperm_words == 2)) && kg_dtype_size(dt) == 2 &&
           kg_dtype_size(odt) == 2 && kg_ew_tperm_words_ok(tp, p->out, p->in[0], n_in == 2 ? p->in[1] : NULL);
}

kg_status kg_elementwise(kg_context *ctx, kg_op op, const kg_tensor *out, const kg_tensor *const *in, int n_in)
{
    if (!ctx)
        return KG_ERR_INVALID_ARGUMENT;
    const kg_op_info *info = kg_op_get_info(op);
    if (!info)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %d is not an element-wise op", (int)op);
    if (n_in != info->arity)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s takes %d input%s, got %d", info->name,
                       info->arity, info->arity == 1 ? "" : "s", n_in);
    if (n_in > 0 && !in)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s: inputs is NULL but n_inputs is %d",
                       info->name, n_in);
    kg_status st = kgi_check_tensor(ctx, out, "out");
    for (int i = 0; st == KG_OK && i < n_in; i++)
        st = kgi_check_tensor(ctx, in[i], info->inputs[i]);
    kg_dtype dt = KG_F32;
    if (st == KG_OK)
        st = check_dtypes(ctx, info, out, in, &dt);
    if (st == KG_OK)
        st = check_shapes(ctx, info, out, in);
    if (st == KG_OK)
        st = kgi_check_no_self_overlap(ctx, out, "out");
    for (int i = 0; st == KG_OK && i < n_in; i++)
        st = kgi_check_alias(ctx, out, in[i], info->inputs[i]);
    if (st == KG_OK)
        st = kg_ready(ctx);
    if (st != KG_OK)
        return st;
    if (kg_numel(out) == 0)
        return kg_ok(ctx);

    const int16_t *ks = kg_ew_table[op][dt][out->dtype];
    kg_ew_ptrs p;
    memset(&p, 0, sizeof p);
    p.out = out->data;
    for (int i = 0; i < n_in; i++)
        p.in[i] = in[i]->data;

    kgi_layout L;
    kgi_layout_build(&L, out, in, n_in);
    if (L.ndim == 0) { /* a single element */
        L.ndim = 1;
        L.size[0] = 1;
        for (int k = 0; k < L.nops; k++)
            L.stride[k][0] = 1;
    }

    /* which variants can serve this call; the common dense case decides
       first and skips the rest (host time per call matters for small ops) */
    const int vec = kg_kernels[ks[KG_EW_DENSE]].vec;
    int ok[KG_EW_VARIANT_COUNT] = {0};
    ok[KG_EW_DENSE] = L.ndim == 1;
    for (int k = 0; ok[KG_EW_DENSE] && k < L.nops; k++) {
        const size_t es = kg_dtype_size(k ? in[k - 1]->dtype : out->dtype);
        ok[KG_EW_DENSE] = L.stride[k][0] == 1 && kgi_aligned(k ? p.in[k - 1] : p.out, es * (size_t)vec);
    }
    const int force = (int)ctx->test_force[KGI_TEST_EW_VARIANT];
    unsigned transposed = 0;
    kg_nd32 v32;
    kg_perm pm;
    kg_tperm tp;
    int var = -1, tperm_ok = 0;
    size_t es_max = 0; /* the widest operand's element size (set where tperm is planned) */
    const int tperm_k = kg_ew_tperm_table[op][dt][out->dtype] - 1;
    if (ok[KG_EW_DENSE] && (force < 0 || force == KG_EW_DENSE)) {
        var = KG_EW_DENSE;
    } else {
        if (L.ndim == 2)
            for (int k = 1; k < L.nops; k++)
                if (L.stride[k][0] > 1 && L.stride[k][1] > 0 && L.stride[k][1] < L.stride[k][0])
                    transposed |= 1u << k;
        ok[KG_EW_TILE] = L.ndim == 2;
        if (L.ndim >= 2) {
            const void *ptrs[KG_EW_MAX_OPERANDS] = {p.out, p.in[0], p.in[1], p.in[2]};
            size_t es[KG_EW_MAX_OPERANDS] = {kg_dtype_size(out->dtype), 0, 0, 0};
            es_max = es[0];
            for (int k = 1; k < L.nops; k++) {
                es[k] = kg_dtype_size(in[k - 1]->dtype);
                es_max = es[k] > es_max ? es[k] : es_max;
            }
            ok[KG_EW_PERMF] = kg_ew_plan_perm(&L, ptrs, es, vec, &pm);
            ok[KG_EW_PERM] = ok[KG_EW_PERMF] && !pm.fold_c && !pm.fold_j; /* perm reads no fold */
            tperm_ok = tperm_k >= 0 && tperm_mode != 2 && kg_ew_plan_tperm(&L, es, &tp);
        }
        ok[KG_EW_ND32] = kgi_layout_fits32(&L);
        ok[KG_EW_ND32V] = ok[KG_EW_ND32] && try_nd32v(&L, &p, out, in, vec, &v32);
        ok[KG_EW_ROWS] = ok[KG_EW_ND32];
        ok[KG_EW_ND64] = 1;
        if (force >= 0 && force < KG_EW_VARIANT_COUNT && ok[force])
            var = force;
        else if ((force == KG_EW_TPERM || force == KG_EW_TPERMA || force == KG_EW_TPERMS || force == KG_EW_TPERMC) &&
                 tperm_ok)
            var = KG_EW_TPERM;
        else if (ok[KG_EW_DENSE])
            var = KG_EW_DENSE;
        else if (tperm_ok &&
                 (tperm_mode == 1 || (!ok[KG_EW_ND32V] && (tp.rect || words_ok(&tp, &p, n_in, dt, out->dtype))) ||
                  kg_ew_tperm_preferred(&tp, &pm, ok[KG_EW_PERM], ok[KG_EW_ND32V], es_max, kg_dtype_size(out->dtype))))
            var = KG_EW_TPERM;
        else if (ok[KG_EW_PERM])
            var = KG_EW_PERM;
        else if (ok[KG_EW_PERMF])
            var = KG_EW_PERMF;
        else if (transposed)
            var = KG_EW_TILE;
        else if (ok[KG_EW_ND32V])
            var = KG_EW_ND32V;
        else if (ok[KG_EW_ROWS] && L.ndim >= 2 && L.size[0] >= rows_min && 16 / vec <= rows_max_bytes &&
                 kg_numel(out) / L.size[0] / 32 >= (int64_t)rows_min_warps_per_sm * ctx->sm_count)
            var = KG_EW_ROWS;
        else if (ok[KG_EW_ND32])
            var = KG_EW_ND32;
        else
            var = KG_EW_ND64;
    }
    const dim3 threads = {KG_EW_THREADS, 1, 1};
    /* rowsv (kg_ew_plan_rowsv): copies, not dense, not forced; over nd32 /
       rows / tperm (and nd32v where rowsv_mode is 2) */
    kg_rowsv rv;
    if (force < 0 && var != KG_EW_DENSE && op == KG_OP_COPY && n_in == 1 && dt == out->dtype && dt != KG_BOOL &&
        tperm_k >= 0 && kg_ew_plan_rowsv(&L, kg_dtype_size(dt), var == KG_EW_ND32V, &rv)) {
        void *args[] = {&p, &rv};
        ctx->test_last[KGI_TEST_EW_VARIANT] = KG_EW_ROWSV;
        /* its kernel follows tperm and tperm2 (elements of at most 2 bytes) */
        st = kg_launch(ctx, tperm_k + kg_ew_copy_tpk[dt][KG_EW_TPK_ROWSV], (dim3){grid_for((rv.chunks + 3) / 4), 1, 1},
                       threads, args, 0);
        return st == KG_OK ? kg_ok(ctx) : st;
    }
    /* tplanev (kg_ew_plan_tplane), else tslab (kg_ew_plan_tslab), else
       tchunk (kg_ew_plan_tchunk, where the bundle has its kernel: none since
       session 37): copies, not dense; by the default choice
       (KG_EW_TUNE_TPERM 0) or forced. Their kernels follow rowsv: tplanev,
       tslab (tchunk until session 37). */
    const int by_default = force < 0 && tperm_mode == 0;
    if ((by_default || force == KG_EW_TPLANE || force == KG_EW_TSLAB || force == KG_EW_TCHUNK ||
         force == KG_EW_TPLANEM) &&
        var != KG_EW_DENSE && op == KG_OP_COPY && n_in == 1 && dt == out->dtype && dt != KG_BOOL && tperm_k >= 0) {
        const int8_t *const kc = kg_ew_copy_tpk[dt]; /* the copy's kernels, from tperm_k */
        kg_tplane tq;
        kg_tslab tz;
        size_t smem;
        kg_tchunk tc;
        if (force != KG_EW_TSLAB && force != KG_EW_TCHUNK && force != KG_EW_TPLANEM &&
            kg_ew_plan_tplane(&L, kg_dtype_size(dt), &tq, &smem)) {
            void *args[] = {&p, &tq};
            ctx->test_last[KGI_TEST_EW_VARIANT] = KG_EW_TPLANE;
            st = kg_launch(ctx, tperm_k + kc[KG_EW_TPK_TPLANEV], (dim3){tq.planes, 1, 1}, threads, args, smem);
            return st == KG_OK ? kg_ok(ctx) : st;
        }
        /* tplanem: forced, or by the default choice where tplanev did not
           take the planes (kg_ew_tplanem_by_default: under
           tplane_min_bytes); its kernel follows tperms (2- and 4-byte
           elements) */
        kg_tplanem tm;
        const size_t es1 = kg_dtype_size(dt);
        if ((force == KG_EW_TPLANEM || force < 0) && (es1 == 2 || es1 == 4) &&
            kg_ew_plan_tplanem(&L, es1, &tm, &smem) && (force == KG_EW_TPLANEM || kg_ew_tplanem_by_default(&tm, es1))) {
            void *args[] = {&p, &tm};
            ctx->test_last[KGI_TEST_EW_VARIANT] = KG_EW_TPLANEM;
            st = kg_launch(ctx, tperm_k + kc[KG_EW_TPK_TPLANEM], (dim3){tm.groups, 1, 1}, threads, args, smem);
            return st == KG_OK ? kg_ok(ctx) : st;
        }
        if (force != KG_EW_TPLANE && force != KG_EW_TCHUNK && kg_ew_plan_tslab(&L, kg_dtype_size(dt), &tz, &smem) &&
            (force == KG_EW_TSLAB || kg_ew_tslab_by_default(&tz, kg_dtype_size(dt)))) {
            void *args[] = {&p, &tz};
            ctx->test_last[KGI_TEST_EW_VARIANT] = KG_EW_TSLAB;
            st = kg_launch(ctx, tperm_k + kc[KG_EW_TPK_TSLAB], (dim3){tz.slabs, 1, 1}, threads, args, smem);
            return st == KG_OK ? kg_ok(ctx) : st;
        }
        /* (no dtype's copy has a tchunk kernel since session 37: -1) */
        if ((force == KG_EW_TCHUNK || force < 0) && kc[KG_EW_TPK_TCHUNK] >= 0 &&
            kg_ew_plan_tchunk(&L, kg_dtype_size(dt), &tc, &smem)) {
            void *args[] = {&p, &tc};
            ctx->test_last[KGI_TEST_EW_VARIANT] = KG_EW_TCHUNK;
            st = kg_launch(ctx, tperm_k + kc[KG_EW_TPK_TCHUNK], (dim3){(tc.tiles + tc.tpb - 1) / tc.tpb, 1, 1}, threads,
                           args, smem);
            return st == KG_OK ? kg_ok(ctx) : st;
        }
    }
    ctx->test_last[KGI_TEST_EW_VARIANT] = var;

    switch (var) {
    case KG_EW_DENSE: {
        int64_t n = L.size[0];
        void *args[] = {&p, &n};
        const int dt_ = dense_threads == 128 ? 128 : KG_EW_THREADS;
        int64_t blocks = (n / vec / kg_ew_dense_vpt(op) + 1 + dt_ - 1) / dt_;
        blocks = blocks > MAX_BLOCKS ? MAX_BLOCKS : blocks;
        st = kg_launch(ctx, ks[var], (dim3){(unsigned)blocks, 1, 1}, (dim3){(unsigned)dt_, 1, 1}, args, 0);
        break;
    }
    case KG_EW_ND32:
    case KG_EW_ND32V: {
        kg_nd32 a;
        if (var == KG_EW_ND32V)
            a = v32;
        else
            kgi_layout_to_nd32(&L, &a);
        void *args[] = {&p, &a};
        const int64_t per = var == KG_EW_ND32V ? KG_ND32_ILP / 2 : KG_ND32_ILP;
        st = kg_launch(ctx, ks[var], (dim3){grid_for(((int64_t)a.n + per - 1) / per), 1, 1}, threads, args, 0);
        break;
    }
    case KG_EW_ROWS: {
        kg_nd32 a;
        kgi_layout_to_nd32(&L, &a);
        a.bcast = rows_lanes_log2(L.size[0]);
        void *args[] = {&p, &a};
        /* one warp per 32 rows */
        const int64_t warps = ((int64_t)a.n / a.size[0] + 31) / 32;
        st = kg_launch(ctx, ks[var], (dim3){grid_for(warps * 32), 1, 1}, threads, args, 0);
        break;
    }
    case KG_EW_TILE: {
        kg_nd64 t;
        kgi_layout_to_nd64(&L, &t);
        t.transposed = transposed;
        /* one block per 32 x 32 tile */
        int64_t tiles = ((L.size[0] + 31) / 32) * ((L.size[1] + 31) / 32);
        if (tiles > MAX_BLOCKS)
            tiles = MAX_BLOCKS;
        void *args[] = {&p, &t};
        st = kg_launch(ctx, ks[var], (dim3){(unsigned)tiles, 1, 1}, (dim3){32, 8, 1}, args, 0);
        break;
    }
    case KG_EW_TPERM: {
        void *args[] = {&p, &tp};
        /* <op>_tperm2 (one input): a block per two tiles; rect tiles in
           <op>_tperm (tperm2 has no rect path: H200 run s15r2, B A B A
           against main's tperm2 with it, which spilled: 4 bf16 copies +1.2
           to +1.5 points, e.g. 6007x5003 62.0 -> 63.2% of copy, none
           down) */
        const int pair = n_in == 1 && tperm_pair && es_max <= 2 && !tp.rect;
        tp.words = (uint32_t)words_ok(&tp, &p, n_in, dt, out->dtype);
        /* 4-byte copies: <op>_tperms (output rows cut at sectors,
           elementwise_tph.cuh), one block a tile; after tslab (tperm, rowsv,
           tplanev, tslab, tperms) */
        if (op == KG_OP_COPY && n_in == 1 && dt == out->dtype && kg_dtype_size(dt) == 4 && kg_ew_tperms_ok(&tp) &&
            (tperms_mode == 1 || force == KG_EW_TPERMS ||
             (tperms_mode == 2 && force < 0 && tperm_mode == 0 && kg_ew_tperms_by_default(&tp, p.out)))) {
            ctx->test_last[KGI_TEST_EW_VARIANT] = KG_EW_TPERMS;
            st = kg_launch(ctx, tperm_k + kg_ew_copy_tpk[dt][KG_EW_TPK_TPERMS], (dim3){tp.tiles, 1, 1}, threads, args,
                           0);
            break;
        }
        /* 2-byte copies by words: <op>_tperms (elementwise_tpw.cuh, or
           the second form, elementwise_tpx.cuh, which also takes the copies
           that pair elements) with its own plan, after tperma (tperm,
           tperm2, rowsv, tplanev, tslab, tperma, tperms) */
        kg_tperm tw;
        if (op == KG_OP_COPY && n_in == 1 && dt == out->dtype && kg_dtype_size(dt) == 2 &&
            (force == KG_EW_TPERMS ||
             (force < 0 && tpermw_mode == 1 && !tp.rect && (!tp.words || tpermw_form)) ||
             (force < 0 && tpermw_mode == 2 && tpermw_form && tperm_mode == 0 && !tp.rect && !tp.words)) &&
            (tpermw_form ? kg_ew_plan_tpx(&L, &tw) : kg_ew_plan_tpw(&L, &tw)) &&
            (force == KG_EW_TPERMS || tpermw_mode == 1 || kg_ew_tpx_by_default(&tp, &tw) ||
             (tpx_a_mode && tpermw_form && tperma_mode == 2 && kg_ew_tpx_a(&tp, &tw, ctx->sm_count)))) {
            void *wargs[] = {&p, &tw};
            ctx->test_last[KGI_TEST_EW_VARIANT] = KG_EW_TPERMS;
            st = kg_launch(ctx, tperm_k + kg_ew_copy_tpk[dt][KG_EW_TPK_TPERMS], (dim3){tw.tiles, 1, 1}, threads, wargs,
                           tpermw_form ? tpx_pad(tpermw_bps) : 0);
            break;
        }
        /* <op>_tpermc (2-byte copies, output rows cut at sectors in 16-byte
           chunks on tperm's plan; elementwise_tpc.cuh): forced, or
           KG_EW_TUNE_TPERMC 1 / 2 on what tperma or tperm / tperm2 would run;
           the last kernel of the 2-byte copy's (after tplanem) */
        if (op == KG_OP_COPY && n_in == 1 && dt == out->dtype && kg_dtype_size(dt) == 2 && kg_ew_tpermc_ok(&tp) &&
            (force == KG_EW_TPERMC ||
             (force < 0 && tperm_mode == 0 &&
              (tpermc_mode == 2 || (tpermc_mode == 1 && kg_ew_tpermc_rows_off(&tp, p.out)))))) {
            ctx->test_last[KGI_TEST_EW_VARIANT] = KG_EW_TPERMC;
            st = kg_launch(ctx, tperm_k + kg_ew_copy_tpk[dt][KG_EW_TPK_TPERMC], (dim3){tp.tiles, 1, 1}, threads, args,
                           0);
            break;
        }
        /* <op>_tperma: after tslab (tperm, tperm2, rowsv, tplanev, tslab,
           tperma) */
        if (op == KG_OP_COPY && n_in == 1 && dt == out->dtype && kg_dtype_size(dt) == 2 && !tp.rect && !tp.words &&
            (tperma_mode == 1 || force == KG_EW_TPERMA ||
             (tperma_mode == 2 && force < 0 && tperm_mode == 0 && kg_ew_tperma_by_default(&tp)))) {
            int64_t grid = (int64_t)tperma_bps * ctx->sm_count;
            if (grid == 0 || grid >= (int64_t)tp.tiles)
                grid = tp.tiles;
            else /* the fewest blocks at the same tiles a block (no block one tile short of the others but the last) */
                grid = ((int64_t)tp.tiles + ((int64_t)tp.tiles + grid - 1) / grid - 1) /
                       (((int64_t)tp.tiles + grid - 1) / grid);
            ctx->test_last[KGI_TEST_EW_VARIANT] = KG_EW_TPERMA;
            st = kg_launch(ctx, tperm_k + kg_ew_copy_tpk[dt][KG_EW_TPK_TPERMA], (dim3){(unsigned)grid, 1, 1}, threads,
                           args, 0);
            break;
        }
        st = kg_launch(ctx, tperm_k + (pair ? KG_EW_TPERM2_AT : 0),
                       (dim3){pair ? tp.tiles / 2 + tp.tiles % 2 : tp.tiles, 1, 1}, threads, args, 0);
        break;
    }
    case KG_EW_PERM:
    case KG_EW_PERMF: {
        void *args[] = {&p, &pm};
        /* one block per tile, or (perm_blocks_per_sm > 0) that many blocks
           per SM, each taking every grid-th tile */
        uint32_t grid = pm.tiles;
        if (perm_blocks_per_sm > 0 && (int64_t)perm_blocks_per_sm * ctx->sm_count < (int64_t)grid)
            grid = (uint32_t)(perm_blocks_per_sm * ctx->sm_count);
        st = kg_launch(ctx, ks[var], (dim3){grid, 1, 1}, threads, args, 0);
        break;
    }
    default: {
        kg_nd64 w;
        kgi_layout_to_nd64(&L, &w);
        void *args[] = {&p, &w};
        st = kg_launch(ctx, ks[KG_EW_ND64], (dim3){grid_for(w.n), 1, 1}, threads, args, 0);
        break;
    }
    }
    return st == KG_OK ? kg_ok(ctx) : st;
}

/* The tunings (kg_test_ew_tune, layout.h): each setting's variable, the
   values it takes and the one an out-of-range value sets (on/off settings:
   0 off, anything else on). */
static const struct {
    int what, *var, lo, hi, other;
} tunings[] = {
    {KG_EW_TUNE_PERM_BLOCKS_PER_SM, &perm_blocks_per_sm, 1, 64, 0},
    {KG_EW_TUNE_ROWS_MIN, &rows_min, 1, INT_MAX, 1},
    {KG_EW_TUNE_ROWS_MAX_BYTES, &rows_max_bytes, INT_MIN, INT_MAX, 0},
    {KG_EW_TUNE_FOLD_MAX, &fold_max, 1, 1023, 0},
    {KG_EW_TUNE_ROWS_MIN_WARPS, &rows_min_warps_per_sm, 0, INT_MAX, 0},
    {KG_EW_TUNE_TPERM, &tperm_mode, 0, 2, 0},
    {KG_EW_TUNE_TPERM_FILL, &tperm_fill, 1, 100, 90},
    {KG_EW_TUNE_TPERM_MAP, &tperm_map, 0, 2, 1},
    {KG_EW_TUNE_TPERM_FLAT, &tperm_flat, 0, 1, 1},
    {KG_EW_TUNE_TPERM_JFIRST, &tperm_jfirst, 0, 3, 1},
    {KG_EW_TUNE_TPERM_PAIR, &tperm_pair, 0, 1, 1},
    {KG_EW_TUNE_ROWSV, &rowsv_mode, 0, 2, 1},
    {KG_EW_TUNE_ROWSV_MIN_BYTES, &rowsv_min_bytes, 64, INT_MAX, 4096},
    {KG_EW_TUNE_TPERM_WORDS, &tperm_words, 0, 2, 2},
    {KG_EW_TUNE_TPERM_FULL, &tperm_full, 0, 1, 1},
    {KG_EW_TUNE_TPERM_DIVISORS, &tperm_divisors, 0, 1, 1},
    {KG_EW_TUNE_TPERM_RECT, &tperm_rect, 0, 1024, 56},
    {KG_EW_TUNE_TPERM_RECT_STEP, &tperm_rect_step, 1, 32, 8},
    {KG_EW_TUNE_TPERM_RECT_TILES, &tperm_rect_tiles, 1, INT_MAX, 1},
    {KG_EW_TUNE_TPERM_RECT_MIN_BYTES, &tperm_rect_min_bytes, 1, 8, 4},
    {KG_EW_TUNE_TPLANE, &tplane_mode, 0, 1, 1},
    {KG_EW_TUNE_TPLANE_MIN_BYTES, &tplane_min_bytes, 1, INT_MAX, 16384},
    {KG_EW_TUNE_TSLAB, &tslab_max_nc, 0, 4096, 56},
    {KG_EW_TUNE_TSLAB_BYTES, &tslab_bytes, 1024, 49152, 16384},
    {KG_EW_TUNE_GATHER_ROT, &gather_rot, 0, 2, 2},
    {KG_EW_TUNE_TCHUNK, &tchunk_mode, 0, 1, 1},
    {KG_EW_TUNE_TCHUNK_CQ, &tchunk_cq, 0, 64, 0},
    {KG_EW_TUNE_TCHUNK_TPB, &tchunk_tpb, 1, 4096, 1},
    {KG_EW_TUNE_DENSE_VPT, &dense_vpt, 0, 2, 0},
    {KG_EW_TUNE_DENSE_THREADS, &dense_threads, 128, 256, KG_EW_THREADS},
    {KG_EW_TUNE_TPERMA, &tperma_mode, 0, 2, 2},
    {KG_EW_TUNE_TPERMA_BPS, &tperma_bps, 0, 64, 0},
    {KG_EW_TUNE_TPERMS, &tperms_mode, 0, 2, 2},
    {KG_EW_TUNE_TPERMW, &tpermw_mode, 0, 2, 0},
    {KG_EW_TUNE_TPERMW_FORM, &tpermw_form, 0, 1, 0},
    {KG_EW_TUNE_TPERMW_BPS, &tpermw_bps, 0, 6, 0},
    {KG_EW_TUNE_TPERMW_CW, &tpermw_cw, 0, 128, 0},
    {KG_EW_TUNE_TPX_A, &tpx_a_mode, 0, 1, 1},
    {KG_EW_TUNE_TPLANEM, &tplanem_mode, 0, 1, 1},
    {KG_EW_TUNE_TPLANEM_BYTES, &tplanem_bytes, 64, 49120, 16384},
    {KG_EW_TUNE_TPERMC, &tpermc_mode, 0, 2, 1},
    {KG_EW_TUNE_TPERMS_CHAIN, &tperms_chain, 0, 1, 1},
};

int kg_test_ew_tune(int what, int value)
{
    for (size_t i = 0; i < sizeof tunings / sizeof tunings[0]; i++)
        if (tunings[i].what == what) {
            const int was = *tunings[i].var;
            *tunings[i].var = value >= tunings[i].lo && value <= tunings[i].hi ? value : tunings[i].other;
            return was;
        }
    return 0;
}

void kg_test_force_ew_variant(kg_context *ctx, int variant)
{
    if (ctx)
        ctx->test_force[KGI_TEST_EW_VARIANT] = variant;
}

int kg_test_last_ew_variant(const kg_context *ctx) { return ctx ? (int)ctx->test_last[KGI_TEST_EW_VARIANT] : -1; }
