/*
 * layout.h - a coalesced layout (geometry.h) as the element-wise kernels'
 * arguments (kg_params.h): 32-bit with magic numbers for fast division, or
 * 64-bit. The shared geometry itself (broadcasting, overlap, coalescing)
 * is in geometry.h.
 */
#ifndef KG_LAYOUT_H
#define KG_LAYOUT_H

#include "internal.h"
#include "kg_params.h"
#include "kg_tperm.h"

/* tperm (kg_tperm.h): permuted layouts through per-tile offset tables, for
   the ops of the groups core and cast. A variant outside kg_ew_variant (its
   kernels have their own table, kg_ew_tperm_table); the force / last
   variant test hooks call it KG_EW_TPERM. */
#define KG_EW_TPERM KG_EW_VARIANT_COUNT
/* copies of rows kept in place by realigned 16-byte chunks (<op>_rowsv,
   kg_tperm.h), reported by kg_test_last_ew_variant */
#define KG_EW_ROWSV (KG_EW_VARIANT_COUNT + 1)
/* copies of planes contiguous in both operands, transposed (<op>_tplanev,
   kg_tperm.h), forced and reported like the others */
#define KG_EW_TPLANE (KG_EW_VARIANT_COUNT + 2)
/* copies by slabs of whole output rows (<op>_tslab, kg_tperm.h), forced and
   reported like the others */
#define KG_EW_TSLAB (KG_EW_VARIANT_COUNT + 3)
/* copies by tiles of aligned 16-byte chunks on both sides (<op>_tchunk,
   kg_tperm.h), forced and reported like the others */
#define KG_EW_TCHUNK (KG_EW_VARIANT_COUNT + 4)
/* copies of 2-byte elements by tperm's square tiles at 6 blocks per SM
   (<op>_tperma, templates/elementwise_tpa.cuh), forced (where tperm is
   planned) and reported like the others */
#define KG_EW_TPERMA (KG_EW_VARIANT_COUNT + 5)
/* copies of 4-byte elements by tperm's tiles with output rows cut at
   32-byte sectors (<op>_tperms, templates/elementwise_tph.cuh, where
   kg_ew_tperms_ok), forced (where tperm is planned) and reported like the
   others */
#define KG_EW_TPERMS (KG_EW_VARIANT_COUNT + 6)
/* copies of 2- and 4-byte elements by tplanev's planes several a block
   (<op>_tplanem, kg_tperm.h kg_tplanem; by the default choice where
   kg_ew_tplanem_by_default), forced and reported like the others */
#define KG_EW_TPLANEM (KG_EW_VARIANT_COUNT + 7)
/* copies of 2-byte elements by tperm's square tiles with output rows cut
   at 32-byte sectors and stored as aligned 16-byte chunks (<op>_tpermc,
   templates/elementwise_tpc.cuh, where kg_ew_tpermc_ok), forced (where
   tperm is planned) or KG_EW_TUNE_TPERMC 1 / 2, and reported like the
   others */
#define KG_EW_TPERMC (KG_EW_VARIANT_COUNT + 8)

/* 1 when the c axis of the tperm plan tp is one run of the output: its
   first dim of unit output stride, each next dim's output stride the
   product of the sizes before it (so c position x of any j and b is output
   element x past that row's start), at most maxd dims */
KG_API int kg_ew_tp_c_chained(const kg_tperm *tp, int maxd);
/* 1 when a copy planned as tp can run <op>_tperms (input 0 staged, square
   tiles, no word pairs, the c axis one dim of output stride 1; under
   KG_EW_TUNE_TPERMS_CHAIN 1 also a c axis of several dims that chain in
   the output, kg_ew_tp_c_chained) */
KG_API int kg_ew_tperms_ok(const kg_tperm *tp);
/* 1 when a copy of 2-byte elements planned as tp can run <op>_tpermc
   (templates/elementwise_tpc.cuh): input 0 staged, square tiles, no word
   pairs, the c axis one run of the output (kg_ew_tp_c_chained) */
KG_API int kg_ew_tpermc_ok(const kg_tperm *tp);
/* 1 where the output rows of a 2-byte copy planned as tp into out start
   off 32-byte sectors (the output's address, or an output stride of a j or
   b dim, off 16 elements): what KG_EW_TUNE_TPERMC 1 asks besides
   kg_ew_tpermc_ok */
KG_API int kg_ew_tpermc_rows_off(const kg_tperm *tp, const void *out);
/* 1 when the default choice runs <op>_tperms for a 4-byte copy planned as
   tp into out (kg_ew_tperms_ok, output rows off 32-byte sectors, a c axis
   of at least 96 positions; the measured rule in runtime/elementwise.c) */
KG_API int kg_ew_tperms_by_default(const kg_tperm *tp, const void *out);

/* The plan of the 2-byte <op>_tperms kernels (templates/elementwise_tpw.cuh:
   copies of f16 / bf16 by 32-bit words on both sides, output rows cut at
   32-byte sectors) for the coalesced layout L (operand 0 the output, 1 the
   input): flat, c = dim 0 (unit stride in the output, not in the input), j
   = the dim of unit input stride, every other dim walked by block; tiles of
   KG_TPW_CW c by KG_TPW_TJ j positions (the numbers elementwise_tpw.cuh
   compiles with). 0 where L has no such dims or its offsets or tiles do not
   fit in 31 bits. */
#define KG_TPW_TJ 64
#define KG_TPW_CW 128
KG_API int kg_ew_plan_tpw(const kgi_layout *L, kg_tperm *o);

/* The plan of the second form of the 2-byte <op>_tperms (words 2;
   templates/elementwise_tpx.cuh: element pairs made in registers, 16-byte
   output chunks cut at 32-byte sectors) for the coalesced layout L (operand
   0 the output, 1 the input): j = the input's unit-stride dim and, in
   turn, every dim whose input stride is the run so far (one contiguous run
   of the input; its output offsets by division, once a tile); c = dim 0
   (unit stride in the output, not in the input) and, while its tiles are
   less than 90% full, the dim that continues its run in the output (one
   contiguous run of the output; its input offsets by division, once a
   tile, where it has several dims); every other dim walked by block; tiles
   of o->rc c positions (KG_TPX_CW, or 64 where those fill the c axis by a
   tenth more, or as KG_EW_TUNE_TPERMW_CW says) by KG_TPX_TJ j positions
   (elementwise_tpx.cuh's numbers). 0 where L has no such dims or its
   offsets or tiles do not fit in 31 bits. */
#define KG_TPX_TJ 62
#define KG_TPX_CW 128
KG_API int kg_ew_plan_tpx(const kgi_layout *L, kg_tperm *o);
/* 1 where KG_EW_TUNE_TPERMW 2 (the default) runs the second form on a
   kg_ew_plan_tpx plan tw of a copy whose kg_ew_plan_tperm plan is tp: tp
   stages input 0, has square tiles, no word pairs, and
   kg_ew_tperma_by_default leaves it to tperm2 (its tile-count clauses);
   tw's tiles are at least 80% full along both axes (H200 run s25r1, in
   runtime/elementwise.c) */
KG_API int kg_ew_tpx_by_default(const kg_tperm *tp, const kg_tperm *tw);
/* Rule A (the default since round s29r1; KG_EW_TUNE_TPX_A 0 turns it
   off): 1 where the second form also takes a copy that the default choice runs by
   <op>_tperma (kg_ew_tperma_by_default(tp)), its kg_ew_plan_tpx plan tw in
   c tiles of KG_TPX_CW, at least 2 of them and at least 16 j tiles, both
   axes' tiles at least 90% full, more than 2 waves of 6 blocks on each of
   sm_count multiprocessors with the last wave empty or at least a quarter
   full (the reasons in runtime/elementwise.c) */
KG_API int kg_ew_tpx_a(const kg_tperm *tp, const kg_tperm *tw, int sm_count);

/* 1 when the default choice runs <op>_tperma for a copy of 2-byte
   elements planned as tp (square tiles, no word pairs; the measured rule
   in runtime/elementwise.c) */
KG_API int kg_ew_tperma_by_default(const kg_tperm *tp);

/* The tperm plan of L (kg_tperm.h; es[k]: operand k's element size). 0 when
   L has fewer than 2 dims, its offsets do not fit in 31 bits, or no input
   has a non-zero stride. */
KG_API int kg_ew_plan_tperm(const kgi_layout *L, const size_t *es, kg_tperm *o);

/* The rowsv plan (kg_tperm.h) of the coalesced layout L of a copy of
   es-byte elements (operand 0 the output, 1 the input): 1 where dim 0 is
   contiguous in both, its rows at least KG_EW_TUNE_ROWSV_MIN_BYTES (default
   4096) and everything within 31 bits, unless nd32v_ok (nd32v would serve
   L; KG_EW_TUNE_ROWSV 2 takes rowsv there too) or KG_EW_TUNE_ROWSV is 0. */
KG_API int kg_ew_plan_rowsv(const kgi_layout *L, size_t es, int nd32v_ok, kg_rowsv *r);

/* The tplane plan (kg_tperm.h) of the coalesced layout L of a copy of
   es-byte elements (operand 0 the output, 1 the input): 1 where dims 0 and
   1 are a plane contiguous in both and transposed (the output's strides 1
   and size[0], the input's size[1] and 1), the plane of at least
   KG_EW_TUNE_TPLANE_MIN_BYTES (default 16384) and its shared-memory buffer
   (the plane + 32 bytes) at most 48 KiB, everything within 31 bits, unless
   KG_EW_TUNE_TPLANE is 0. *smem: the buffer's bytes. */
KG_API int kg_ew_plan_tplane(const kgi_layout *L, size_t es, kg_tplane *q, size_t *smem);
/* The tplanem plan (kg_tperm.h kg_tplanem) of the coalesced layout L of a
   copy of es-byte elements (2 or 4): tplanev's planes (kg_ew_plan_tplane's
   shape, any plane size) whose layout dim 2 has stride nc * nj in both
   operands; groups of ppb planes along it, ppb the most whose bytes stay
   within KG_EW_TUNE_TPLANEM_BYTES (default 16384; at least one plane, the
   buffer at most 48 KiB), evened out over dim 2. 0 where L has no such
   planes. *smem: the buffer's bytes (ppb planes + 32). */
KG_API int kg_ew_plan_tplanem(const kgi_layout *L, size_t es, kg_tplanem *m, size_t *smem);
/* 1 when the default choice takes the tplanem plan m of es-byte
   elements: KG_EW_TUNE_TPLANEM 1 (the default) and planes (nc * nj * es
   bytes) under KG_EW_TUNE_TPLANE_MIN_BYTES, which tplanev does not take. */
KG_API int kg_ew_tplanem_by_default(const kg_tplanem *m, size_t es);

/* The tslab plan (kg_tperm.h) of the coalesced layout L of a copy of
   es-byte elements: 1 where dim 0 is contiguous in the output (stride 1)
   and short (2 to KG_EW_TUNE_TSLAB elements; 0: never) and dim 1 is the
   input's fast dim (input stride 1, output stride size[0]), everything
   within 31 bits. Slabs of J positions along dim 1: J the largest multiple
   of 16 / es whose buffer (size[0] rows of J * es + 4 bytes, 8-byte
   elements + 8) fits KG_EW_TUNE_TSLAB_BYTES (default 16384), capped at
   dim 1 rounded up; at least 16 / es. *smem: the buffer's bytes. */
KG_API int kg_ew_plan_tslab(const kgi_layout *L, size_t es, kg_tslab *z, size_t *smem);

/* The tchunk plan (kg_tperm.h) of the coalesced layout L of a copy of
   es-byte elements (operand 0 the output, 1 the input): 1 where dim 0 is
   the output's fast dim (stride 1), some other dim the input's (stride 1),
   the input not broadcast along dim 0 and everything within 31 bits,
   unless KG_EW_TUNE_TCHUNK is 0. Tiles of KG_EW_TUNE_TCHUNK_CQ output
   chunks a row (0: KG_TC_CQ_MAX, at most that) and up to KG_TC_JN j
   positions, both evened out over the axis; KG_EW_TUNE_TCHUNK_TPB tiles a
   block. *smem: the stage's bytes (at most 48 KiB, else no plan). */
KG_API int kg_ew_plan_tchunk(const kgi_layout *L, size_t es, kg_tchunk *z, size_t *smem);

/* The dense kernels' vectors a thread for op (KG_EW_TUNE_DENSE_VPT, or by
   default 1 for exp and add, 2 for the others; op: a kg_op). */
KG_API int kg_ew_dense_vpt(int op);

/* 1 when the default choice takes the tslab plan z of es-byte elements:
   2-byte elements whose dim 1 fills at least one whole slab (nj >= J). */
KG_API int kg_ew_tslab_by_default(const kg_tslab *z, size_t es);

/* 1 when the default choice takes the tperm plan tp over the other
   eligible variants (perm's plan pm when perm_ok, nd32v when nd32v_ok);
   es_max: the widest operand's element size, out_es the output's. */
KG_API int kg_ew_tperm_preferred(const kg_tperm *tp, const kg_perm *pm, int perm_ok, int nd32v_ok, size_t es_max,
                                 size_t out_es);

/* 1 when the tperm plan tp of an op with 2-byte elements in and out may
   take the word path (kg_tperm.h words): input 0 (in) staged, the first dim
   of the output's c axis and of the input's j axis of unit stride and even
   size, every other stride even, the pointers on 4 bytes (so element pairs
   are aligned 32-bit words on both sides). in1: NULL for ops of one input;
   else input 1, direct (not staged), its c axis's first dim of unit stride,
   every other stride even. */
KG_API int kg_ew_tperm_words_ok(const kg_tperm *tp, const void *out, const void *in, const void *in1);

/* Fills a 32-bit layout (kgi_layout_fits32) with magic numbers for fast
   division. */
void kgi_layout_to_nd32(const kgi_layout *L, kg_nd32 *out);
void kgi_layout_to_nd64(const kgi_layout *L, kg_nd64 *out);

/* Tuning hook (tests and benches), process-wide:
   KG_EW_TUNE_PERM_BLOCKS_PER_SM: perm/permf launch that many persistent
     blocks per SM instead of one block per tile (0, the default);
   KG_EW_TUNE_ROWS_MIN: the shortest inner dim rows serves (nd32 below);
   KG_EW_TUNE_ROWS_MAX_BYTES: rows for elements of at most that many bytes;
   KG_EW_TUNE_FOLD_MAX: perm folds dims of at most that many elements (0:
     the default, 48 for 64-element tiles, half a tile for 32-element ones);
   KG_EW_TUNE_ROWS_MIN_WARPS: rows only where its warps (one per 32 rows)
     number at least that many per SM (default 16);
   KG_EW_TUNE_TPERM: where tperm runs: 0 the default choice, 1 wherever it
     has a kernel and a plan (dense layouts aside), 2 never;
   KG_EW_TUNE_TPERM_FILL: tperm folds another dim into an axis whose tiles
     are less than that many percent full (default 90);
   KG_EW_TUNE_TPERM_MAP: tperm's element mapping, 0, 1 (default) or 2 (kg_tperm.h);
   KG_EW_TUNE_TPERM_FLAT: 0 = tperm reads offset tables even where both
     axes are one dim (default 1: offsets by multiplication there);
   KG_EW_TUNE_TPERM_JFIRST: 1 = tperm's blocks take the j tiles fastest,
     0 = the c tiles; 2 (the default) = the j tiles where the elements
     have at least 4 bytes and the c axis has at least 256 times as many
     tiles as j, or for ops of two inputs with 2-byte elements where the
     output runs on along j (c's first dim continued by a j dim, not by
     c's second), else the c tiles; 3 = the first of those rules only;
   KG_EW_TUNE_TPERM_PAIR: ops of one input whose elements have at most 2
     bytes run tperm with two tiles per pass (the kernels <op>_tperm2; 1,
     the default), or one (0);
   KG_EW_TUNE_TPERM_WORDS: 1 = <op>_tperm2 moves 2-byte elements as 32-bit
     pairs where kg_ew_tperm_words_ok; 2 (the default) = also <op>_tperm for
     ops of two inputs; 0 = never;
   KG_EW_TUNE_TPERM_FULL: 1 (the default) = tperm runs passes of whole tiles
     without predicates (elements of at most 2 bytes, mapping 1); 0 = never;
   KG_EW_TUNE_TPERM_DIVISORS: 1 (the default) = where no power of 2 of the
     long side fills the tiles of a j axis shorter than a tile, tperm splits
     off the smallest other divisor up to 2T that does; 0 = powers of 2 only;
   KG_EW_TUNE_TPERM_RECT: n > 0 = tperm's rectangular tiles (kg_tperm.h
     rect) where the output's dim 0 has 2 to n elements and makes each
     tile's output one contiguous run (default 56); 0 = never;
   KG_EW_TUNE_TPERM_RECT_STEP: rect's long tile side is a multiple of that
     many positions (1 to 32, default 8);
   KG_EW_TUNE_TPERM_RECT_TILES: rect only with at least that many tiles
     along the long side (default 16; its tiles are always >= 90% full);
   KG_EW_TUNE_TPERM_RECT_MIN_BYTES: rect only where the widest operand's
     elements have at least that many bytes (default 4);
   KG_EW_TUNE_ROWSV: copies whose dim 0 is contiguous in the output and the
     input run <op>_rowsv (realigned 16-byte chunks): 0 never, 1 where no
     16-byte vector fits (nd32v; the default), 2 wherever such rows are;
   KG_EW_TUNE_ROWSV_MIN_BYTES: ... for rows of at least that many bytes (64
     and up; default 4096);
   KG_EW_TUNE_TPLANE: copies of planes contiguous in both operands and
     transposed (kg_ew_plan_tplane; under the default choice only,
     KG_EW_TUNE_TPERM 0, or forced) run <op>_tplanev (1, the default) or
     not (0);
   KG_EW_TUNE_TPLANE_MIN_BYTES: ... for planes of at least that many bytes
     (default 16384);
   KG_EW_TUNE_TSLAB: copies whose output's dim 0 has 2 to that many
     elements (default 56) and whose dim 1 is the input's fast dim run
     <op>_tslab where no plane serves them (kg_ew_plan_tslab; forced, or by
     the default choice where kg_ew_tslab_by_default); 0: never;
   KG_EW_TUNE_TSLAB_BYTES: tslab's buffer of at most that many bytes (1024
     to 49152, default 16384);
   KG_EW_TUNE_GATHER_ROT: 1 = tplanev, tplanem and tslab gather their
     chunks in rotated orders (kg_tq_gather), 0 = in order, 2 (the default)
     = tplanev and tplanem where the plane's rows have an even number of
     elements;
   KG_EW_TUNE_TCHUNK: copies that kg_ew_plan_tchunk plans run <op>_tchunk
     where no plane or slab serves them: 0 never (the default), 1 always
     (under the default choice, KG_EW_TUNE_TPERM 0; or forced); since
     session 37 the bundle holds no tchunk kernel: 1 plans as 0;
   KG_EW_TUNE_TCHUNK_CQ: tchunk's output chunks a tile row (1 to 64, at
     most KG_TC_CQ_MAX; 0, the default: KG_TC_CQ_MAX);
   KG_EW_TUNE_TCHUNK_TPB: tchunk's tiles a block (1 to 4096, default 1);
   KG_EW_TUNE_DENSE_VPT: the dense kernels' vectors a thread (1 or 2; 0,
     the default: by op, kg_ew_dense_vpt);
   KG_EW_TUNE_DENSE_THREADS: the dense kernels' threads a block (128 or
     256, the default);
   KG_EW_TUNE_TPERMA: copies of 2-byte elements that run tperm with square
     tiles and no word pairs run <op>_tperma instead: 2 (the default) by the
     default choice where kg_ew_tperma_by_default, 1 always (forced tperm
     too), 0 never;
   KG_EW_TUNE_TPERMA_BPS: tperma's blocks per SM (1 to 64), each block
     taking every grid-th tile; 0 (the default): one block a tile;
   KG_EW_TUNE_TPERMS: copies of 4-byte elements that run tperm run
     <op>_tperms: 2 (the default) by the default choice where
     kg_ew_tperms_by_default, 1 wherever kg_ew_tperms_ok (forced tperm too),
     0 never;
   KG_EW_TUNE_TPERMW: copies of 2-byte elements that run tperm with square
     tiles and no word pairs run <op>_tperms (the form KG_EW_TUNE_TPERMW_FORM
     says): 2 (the default; with KG_EW_TUNE_TPERMW_FORM 1) where
     kg_ew_tpx_by_default, 1 wherever tperm runs them, 0 never (forced
     only);
   KG_EW_TUNE_TPERMW_FORM: which form of the 2-byte <op>_tperms runs where
     it runs (forced, KG_EW_TUNE_TPERMW 1 or 2): 1 (the default) pairs made
     in registers (kg_ew_plan_tpx; under KG_EW_TUNE_TPERMW 1 also where
     tperm2 would pair elements), 0 session 23's words (kg_ew_plan_tpw;
     forced or KG_EW_TUNE_TPERMW 1 only);
   KG_EW_TUNE_TPERMW_BPS: the second form's blocks a multiprocessor, 4 or
     5 (held by dynamic shared memory); 0 (the default) as compiled (6);
   KG_EW_TUNE_TPERMW_CW: the second form's c tiles, 64 or 128 positions; 0
     (the default) kg_ew_plan_tpx's choice;
   KG_EW_TUNE_TPX_A: 1 (the default since round s29r1) the second form
     also where kg_ew_tpx_a takes a copy that the default choice would run
     by <op>_tperma (under KG_EW_TUNE_TPERMW 2, KG_EW_TUNE_TPERMW_FORM 1
     and KG_EW_TUNE_TPERMA 2); 0 not (tperma keeps it);
   KG_EW_TUNE_TPLANEM: copies of 2- and 4-byte elements whose planes
     kg_ew_plan_tplanem plans and tplanev does not take (planes under
     KG_EW_TUNE_TPLANE_MIN_BYTES) run <op>_tplanem under the default choice
     (KG_EW_TUNE_TPERM 0; kg_ew_tplanem_by_default): 1 (the default since
     round s30r1) yes, 0 no (forced only);
   KG_EW_TUNE_TPLANEM_BYTES: tplanem's groups of at most that many bytes
     of planes (64 to 49120, default 16384; at least one plane);
   KG_EW_TUNE_TPERMC: copies of 2-byte elements that the default choice
     would run by <op>_tperma or tperm / tperm2 with square tiles (after
     the tpx rules) run <op>_tpermc where kg_ew_tpermc_ok: 1 (the default since round
     s31r1) where their output rows start off sectors
     (kg_ew_tpermc_rows_off), 2 wherever, 0 never (forced only);
   KG_EW_TUNE_TPERMS_CHAIN: 1 = <op>_tperms (4-byte copies) also serves c
     axes of several dims that chain in the output (kg_ew_tperms_ok; the
     default choice then takes them by kg_ew_tperms_by_default, forced
     tperms and KG_EW_TUNE_TPERMS 1 too; the default since round s31r1);
     0 c of one dim only.
   Returns the setting's value before the call (0 for an unknown what). */
enum {
    KG_EW_TUNE_PERM_BLOCKS_PER_SM,
    KG_EW_TUNE_ROWS_MIN,
    KG_EW_TUNE_ROWS_MAX_BYTES,
    KG_EW_TUNE_FOLD_MAX,
    KG_EW_TUNE_ROWS_MIN_WARPS,
    KG_EW_TUNE_TPERM,
    KG_EW_TUNE_TPERM_FILL,
    KG_EW_TUNE_TPERM_MAP,
    KG_EW_TUNE_TPERM_FLAT,
    KG_EW_TUNE_TPERM_JFIRST,
    KG_EW_TUNE_TPERM_PAIR,
    KG_EW_TUNE_ROWSV,
    KG_EW_TUNE_ROWSV_MIN_BYTES,
    KG_EW_TUNE_TPERM_WORDS,
    KG_EW_TUNE_TPERM_FULL,
    KG_EW_TUNE_TPERM_DIVISORS,
    KG_EW_TUNE_TPERM_RECT,
    KG_EW_TUNE_TPERM_RECT_STEP,
    KG_EW_TUNE_TPERM_RECT_TILES,
    KG_EW_TUNE_TPERM_RECT_MIN_BYTES,
    KG_EW_TUNE_TPLANE,
    KG_EW_TUNE_TPLANE_MIN_BYTES,
    KG_EW_TUNE_TSLAB,
    KG_EW_TUNE_TSLAB_BYTES,
    KG_EW_TUNE_GATHER_ROT,
    KG_EW_TUNE_TCHUNK,
    KG_EW_TUNE_TCHUNK_CQ,
    KG_EW_TUNE_TCHUNK_TPB,
    KG_EW_TUNE_DENSE_VPT,
    KG_EW_TUNE_DENSE_THREADS,
    KG_EW_TUNE_TPERMA,
    KG_EW_TUNE_TPERMA_BPS,
    KG_EW_TUNE_TPERMS,
    KG_EW_TUNE_TPERMW,
    KG_EW_TUNE_TPERMW_FORM,
    KG_EW_TUNE_TPERMW_BPS,
    KG_EW_TUNE_TPERMW_CW,
    KG_EW_TUNE_TPX_A,
    KG_EW_TUNE_TPLANEM,
    KG_EW_TUNE_TPLANEM_BYTES,
    KG_EW_TUNE_TPERMC,
    KG_EW_TUNE_TPERMS_CHAIN
};
KG_API int kg_test_ew_tune(int what, int value);

#endif
