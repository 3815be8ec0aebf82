/*
 * kg_tslabm.h - the argument of the element-wise <op>_tslabm kernels
 * (copies of 2- and 4-byte elements; templates/elementwise_tsm.cuh), shared
 * by the runtime (C) and the kernels (CUDA C++). Kept out of kg_tperm.h so
 * that the tperm modules of other element sizes do not depend on it.
 */
#ifndef KG_TSLABM_H
#define KG_TSLABM_H

#include <stdint.h>

#include "kg_tperm.h"

/* tslab's planes whole (z.sj == 1: z.J >= z.nj, so a plane's output is one
   run of nc * nj elements), several a block. z is tslab's plan of the
   coalesced layout (the output's dim 0, nc elements, contiguous; its dim 1,
   nj elements, output stride nc, the input's fast dim; the input's stride
   of dim 0 z.sci; z.pitch = z.J * es + 4 bytes a buffer row, an odd number
   of words). The layout's dim 2 (B's dim 0, s0 planes; s0 = 1 where it
   does not continue the output's run, or there is none) has output stride
   nc * nj, so planes b .. b + k - 1 along it are one output run of k * nc *
   nj elements; in the input plane k + 1 is sb elements past plane k. A
   block takes group g = (r, s) = (g / gpr, g % gpr): the cnt = min(ppb, s0
   - s * ppb) planes from b = r * s0 + s * ppb (groups = gpr * z.B.n / s0).
   Its cnt * nc input rows (plane k's row c at k * sb + c * z.sci, nj
   elements) are loaded realigned into the buffer at byte (k * nc + c) *
   z.pitch; chunk t of the group is row c = t % nc of plane k = (t / nc) %
   ppb, its chunk kc = t / (nc ppb) (lanes at consecutive buffer rows; k >=
   cnt is no chunk); the output's run is then filled from the buffer plane
   by plane (row pitch z.pitch, plane pitch nc * z.pitch). */
typedef struct kg_tslabm {
    kg_tslab z;
    uint32_t s0, ppb, gpr, groups;
    int32_t sb;
    uint32_t magic_gpr, shift_gpr; /* division by gpr */
    uint32_t magic_ppb, shift_ppb; /* division by ppb */
    uint32_t magic_nj, shift_nj;   /* division by z.nj */
} kg_tslabm;

#endif
