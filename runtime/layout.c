/*
 * layout.c - coalesced layouts as element-wise kernel arguments.
 */
#include <string.h>

#include "layout.h"

/* host and device agree on the kernel arguments' bounds */
_Static_assert(KG_LAYOUT_MAX_DIMS == KG_MAX_DIMS, "kg_params.h KG_LAYOUT_MAX_DIMS != kgen.h KG_MAX_DIMS");
_Static_assert(KG_EW_MAX_OPERANDS == KGI_MAX_OPERANDS, "kg_params.h KG_EW_MAX_OPERANDS != geometry.h KGI_MAX_OPERANDS");

void kgi_layout_to_nd32(const kgi_layout *L, kg_nd32 *o)
{
    memset(o, 0, sizeof *o);
    int64_t n = 1;
    o->ndim = L->ndim;
    for (int d = 0; d < L->ndim; d++) {
        n *= L->size[d];
        o->size[d] = (uint32_t)L->size[d];
        kgi_divmod_magic(o->size[d], &o->magic[d], &o->shift[d]);
        for (int k = 0; k < L->nops; k++)
            o->stride[k][d] = (int32_t)L->stride[k][d];
    }
    o->n = (uint32_t)n;
}

void kgi_layout_to_nd64(const kgi_layout *L, kg_nd64 *o)
{
    memset(o, 0, sizeof *o);
    int64_t n = 1;
    o->ndim = L->ndim;
    for (int d = 0; d < L->ndim; d++) {
        n *= L->size[d];
        o->size[d] = L->size[d];
        for (int k = 0; k < L->nops; k++)
            o->stride[k][d] = L->stride[k][d];
    }
    o->n = n;
}
