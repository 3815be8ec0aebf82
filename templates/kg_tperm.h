/*
 * kg_tperm.h - the argument of the element-wise tperm kernels (shared by
 * the runtime, C, and templates/elementwise_tperm.cuh, CUDA C++). Kept out
 * of kg_params.h so that the other element-wise modules do not depend on it.
 *
 * tperm serves permuted layouts (transposes, N-d permutations, inner dims
 * kept in place) with 32-bit offsets. The dims of a coalesced layout are
 * split into three sets, each flattened into one axis:
 *   c  the output's innermost dims (dim 0 first): the output and the direct
 *      inputs move along it, consecutive lanes at consecutive positions;
 *   j  the staged inputs' innermost dims (their fast dim first): those are
 *      read along it and transposed through shared memory;
 *   b  every other dim, walked by block.
 * A block serves one T x T tile of the (c, j) plane at one b index. Each
 * axis position's offsets are computed once per tile by one thread (a magic
 * division per dim of the axis) into a shared-memory table, so any number
 * of dims may make up an axis at the cost of one table read per element:
 * odd and short dims fold into long axes and tiles stay full.
 */
#ifndef KG_TPERM_H
#define KG_TPERM_H

#include <stdint.h>

#include "kg_params.h"

#define KG_TP_C 0
#define KG_TP_J 1
#define KG_TP_B 2

/* the tile edge in elements, by the widest operand's element size in bytes
   (host planner and kg_tp_shape alike) */
#define KG_TP_TILE(es) ((es) >= 8 ? 32 : 64)

/* the kernels <op>_tperm2 (two tiles per pass, ops of one input) are
   compiled for at least this many resident blocks per SM (64 registers a
   thread): 4 blocks of two tiles each keep twice tperm's bytes in flight */
#define KG_TP2_MIN_BLOCKS 4

/* the kernels <op>_tperm of ops of two inputs with 2-byte elements are
   compiled for at least this many resident blocks per SM (64 registers a
   thread, where the compiler took 117-128 and so ran 2 blocks: 16 KB of
   loads in flight a block). H200 run r2 of 2026-12-02 (same run, copy
   4201-4218 GB/s), bf16 add: 47.4-57.4% of copy -> 56.0-87.1% (14 cases,
   odd and even shapes); 3 blocks gained less (54.7-77.8%); the same bounds
   for f32 add (-2.7 points on 6007x5003) and 5 or 6 blocks for ops of one
   input (f32 copies -3 to -25 points) lost, so those keep the compiler's
   choice. */
#define KG_TP_BIN2_MIN_BLOCKS 4

typedef struct kg_tperm {
    uint32_t n[3];          /* extents of the c, j and b axes */
    uint32_t tiles_c, tiles_j, tiles; /* tiles along c, along j, in all (b included) */
    uint32_t magic_c, shift_c, magic_j, shift_j; /* division by tiles_c, tiles_j */
    int32_t nd[3];          /* dims in each axis */
    uint32_t staged;        /* bit k: input k is read along j through shared memory */
    uint32_t map;           /* element mapping (kg_tp_v, kg_tp_stage in elementwise_tperm.cuh): 0, 1 or 2 */
    uint32_t flat;          /* 1: c and j are one dim each, offsets by multiplication (no tables) */
    uint32_t jfirst;        /* block order: 0 = c tiles fastest, then j, then b; 1 = j tiles fastest */
    uint32_t size[3][KG_LAYOUT_MAX_DIMS];  /* each axis's dims, innermost first */
    uint32_t magic[3][KG_LAYOUT_MAX_DIMS];
    uint32_t shift[3][KG_LAYOUT_MAX_DIMS];
    int32_t stride[3][KG_EW_MAX_OPERANDS][KG_LAYOUT_MAX_DIMS];
    uint32_t words; /* 1: 2-byte elements move as 32-bit pairs (kg_ew_tperm_words_ok): <op>_tperm2 (one input), <op>_tperm (two) */
    uint32_t full;  /* 1: passes of whole tiles run without predicates (elements of at most 2 bytes, map 1) */
    /* rect (kg_tpr_tile in elementwise_tperm.cuh; c and j one dim each):
       tiles of rc x rj positions (rc * rj <= T * T), loaded in the staged
       inputs' order (j fastest: position e of a tile is c = e / rj, j =
       e % rj), stored in the output's (c fastest: j = e / rc, c = e % rc).
       The output's dim 0 is short and its dim 1 is the staged input's fast
       dim: rc = the whole dim 0, so each tile's output is one contiguous run
       (position (c, j) at c + rc j), staged in that order (no division per
       stored element). 1: rect tiles, 0: square ones. */
    uint32_t rect;
    uint32_t rc, rj;
    uint32_t magic_rc, shift_rc, magic_rj, shift_rj; /* division by rc, by rj */
} kg_tperm;

/* rect's fit rule (the planner's rect_extents): rc rows of rj elements of
   es bytes at this pitch (an odd number of words, or of 8-byte pairs) within
   the tile buffer. The kernel stages in the output's order (kg_tpr_lin),
   which fits wherever rc * rj <= T * T; the rule, measured with the tiles it
   picks, is kept. */
#define KG_TPR_PITCH(es, rj)                                                                                           \
    ((es) >= 4 ? ((rj) | 1u) : (es) == 2 ? ((((rj) + 3u) & ~3u) + 2u) : ((((rj) + 7u) & ~7u) + 4u))
/* the elements of the tile buffer of an es-byte staged operand
   (kg_tp_pitch in elementwise_tperm.cuh), tiles of edge t */
#define KG_TP_STAGE_ELEMS(es, t) ((t) * ((t) + ((es) >= 4 ? 1 : 4 / (es))))

/* The argument of the kernels <op>_rowsv (copies whose dim 0 is contiguous
   in both the output and the input: a permutation keeping the inner dim in
   place, rows of any length and alignment). Rows = L.n / L.size[0]; each
   row is cpr chunks (16-byte aligned pieces of the output that may overlap
   the row), row = chunk / cpr by magic and shift; chunks = rows * cpr
   (< 2^31), row bytes L.size[0] * element size < 2^31. */
typedef struct kg_rowsv {
    kg_nd32 L;
    uint32_t cpr, magic, shift, chunks;
} kg_rowsv;

/* The argument of the kernels <op>_tplanev (copies): the coalesced layout's
   dims 0 and 1 form a plane contiguous in both operands, transposed: the
   output's dim 0 (nc elements) is the input's second dim (input stride nj)
   and its dim 1 (nj elements, output stride nc) the input's fast dim. So
   each plane is one run of nc * nj elements in the input (position c * nj
   + j) and one in the output (j * nc + c). A block loads a whole plane's
   input run into shared memory by aligned 16-byte chunks, then fills the
   output's run by aligned 16-byte chunks from it. B walks the planes (the
   layout's other dims; B.n planes), each plane's offsets by magic division
   once. rot: the lanes of a warp gather their chunks' elements in rotated
   orders (kg_tq_gather), so that lanes at rows 32 / M * 8 apart read
   distinct banks. */
typedef struct kg_tplane {
    kg_nd32 B;
    uint32_t nc, nj, planes;
    uint32_t magic_nc, shift_nc; /* division by nc */
    uint32_t rot;
} kg_tplane;

/* The argument of the kernels <op>_tplanem (copies of 2- and 4-byte
   elements): tplanev's planes where several make one block's run. q is
   tplanev's plan; besides, the layout's dim 2 (B's dim 0, s0 planes) has
   stride nc * nj in both operands, so planes b .. b + k - 1 along it are one
   run of k * nc * nj elements in the input and one in the output. A block
   takes group g = (r, s) = (g / gpr, g % gpr): the cnt = min(ppb, s0 - s *
   ppb) planes from b = r * s0 + s * ppb (gpr = groups along dim 2, groups =
   gpr * q.planes / s0). Its run is loaded into shared memory as tplanev's
   plane is (element e of plane k at k * nc * nj + c * nj + j) and the
   output's run filled from it (kg_tq_fill with planes: position q of the
   output's run is plane q / (nc nj), j = (q / nc) % nj, c = q % nc). */
typedef struct kg_tplanem {
    kg_tplane q;
    uint32_t s0, ppb, gpr, groups;
    uint32_t magic_gpr, shift_gpr; /* division by gpr */
    uint32_t magic_nj, shift_nj;   /* division by q.nj */
} kg_tplanem;

/* The argument of the kernels <op>_tslab (copies): slabs of whole output
   rows. The coalesced layout's dim 0 (nc elements) is contiguous in the
   output, its dim 1 (nj elements, output stride nc) is the input's fast
   dim; the input's stride of dim 0 is sci (any). A slab is the nc x jn
   positions at j0 .. j0 + jn - 1 (jn = min(J, nj - j0)): one run of nc * jn
   elements in the output (from j0 * nc), nc rows of jn elements in the
   input (row c at c * sci + j0). A block loads the slab's input rows
   realigned into shared memory (row c at byte c * pitch, pitch = J * es +
   4, an odd number of words; 8-byte elements: J * es + 8, an odd number of
   pairs) by 16-byte chunks, lanes at consecutive rows (distinct banks),
   then fills the output's run by aligned 16-byte chunks from it
   (kg_tq_gather, rotated as rot says). B walks the layout's other
   dims; slab s is (s / sj, s % sj) = (b, j0 / J). */
typedef struct kg_tslab {
    kg_nd32 B;
    uint32_t nc, nj, J, sj, slabs, pitch, cpr; /* cpr = J * es / 16 chunks a row */
    int32_t sci;
    uint32_t magic_nc, shift_nc, magic_sj, shift_sj;
    uint32_t rot;
} kg_tslab;

/* The argument of the kernels <op>_tchunk (copies): tiles whose global
   accesses are aligned 16-byte chunks (but at a tile row's two ends). The
   coalesced layout's dim 0 (nc elements) is the output's fast dim (stride
   1), its dim J (nj elements) the input's (stride 1); sci: the input's
   stride along dim 0, soj: the output's along J; B: every other dim (index
   b -> both operands' offsets). Tile (ct, jt, b), ct fastest, covers c =
   ct * cq * M .. + cq * M - 1 (M = 16 / es elements a chunk; cq output
   chunks a tile row) and j = jt * jn .. + jn - 1 (jn <= KG_TC_JN), cut at
   the axes' ends: no element is read or written by two tiles but the
   aligned chunks at the tile rows' ends. Its input rows are loaded by the
   aligned 16-byte chunks covering them, realigned (funnel shifts with the
   next lane's chunk) into one shared-memory stage (row r at byte r *
   KG_TC_PITCH(es); element by element where a chunk would leave the
   input's extent, elements 0 .. in_n - 1 of p.in[0]); each output row of
   the tile is stored by its aligned 16-byte chunks gathered from the stage
   (element by element at the row's two ends). A block takes tiles tpb *
   blockIdx.x .. + tpb - 1. */
#define KG_TC_JN 64           /* j positions a tile: KG_TC_JN * es bytes of each input row (4 es chunks) */
#define KG_TC_CQ_MAX(es) 16 /* output chunks a tile row: 256 bytes */
/* a stage row's bytes: KG_TC_JN elements and a pad (an odd number of words;
   8-byte elements: an odd number of pairs) */
#define KG_TC_PITCH(es) (KG_TC_JN * (es) + ((es) >= 8 ? 8 : 4))
/* the stage's bytes for cq chunks a tile row */
#define KG_TC_STAGE_BYTES(es, cq) ((cq) * (16 / (es)) * KG_TC_PITCH(es))
/* compiled for at least this many resident blocks per SM (64 registers) */
#define KG_TC_MIN_BLOCKS 5
typedef struct kg_tchunk {
    kg_nd32 B;
    uint32_t nc, nj, cq, jn; /* cq: output chunks a tile row; jn: j positions a tile */
    int32_t sci, soj;
    uint32_t tiles_c, tiles_j, tiles, tpb;
    uint32_t magic_c, shift_c, magic_j, shift_j;
    uint32_t stage, in_n; /* stage: bytes of the stage */
} kg_tchunk;

#endif
