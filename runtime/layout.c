/*
 * layout.c - broadcasting, overlap checks and dimension coalescing.
 */
#include <stdio.h>
#include <string.h>

#include "layout.h"

kg_status kg_broadcast_shapes(kg_context *ctx, const kg_tensor *const *in, const char *const *names, int n, int *ndim,
                              int64_t *shape)
{
    int nd = 0;
    for (int i = 0; i < n; i++)
        nd = in[i]->ndim > nd ? in[i]->ndim : nd;
    for (int d = 0; d < nd; d++)
        shape[d] = 1;
    for (int i = 0; i < n; i++) {
        const kg_tensor *t = in[i];
        for (int d = 0; d < t->ndim; d++) {
            int64_t *s = &shape[nd - t->ndim + d];
            const int64_t v = t->shape[d];
            if (v == *s || v == 1)
                continue;
            if (*s == 1) {
                *s = v;
                continue;
            }
            char buf[KG_MSG_LEN] = "shape mismatch:", sh[128];
            size_t at = strlen(buf);
            for (int j = 0; j < n && at < sizeof buf; j++)
                at += (size_t)snprintf(buf + at, sizeof buf - at, "%s %s is %s", j ? "," : "", names[j],
                                       kg_shape_str(sh, sizeof sh, in[j]->ndim, in[j]->shape));
            return kg_fail(ctx, KG_ERR_SHAPE, "%s (dim %d: %lld vs %lld do not broadcast)", buf, d - t->ndim,
                           (long long)*s, (long long)v);
        }
    }
    *ndim = nd;
    return KG_OK;
}

void kg_broadcast_strides(const kg_tensor *t, int ndim, const int64_t *shape, int64_t *strides)
{
    for (int d = 0; d < ndim; d++) {
        const int td = d - (ndim - t->ndim);
        strides[d] = (td < 0 || t->shape[td] == 1 || shape[d] == 1) ? 0 : t->strides[td];
    }
}

/* Byte extent [0, end) of t's elements from t->data. */
static uint64_t extent(const kg_tensor *t)
{
    uint64_t end = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] == 0)
            return 0;
        end += (uint64_t)(t->shape[d] - 1) * (uint64_t)t->strides[d];
    }
    return (end + 1) * kg_dtype_size(t->dtype);
}

kg_status kg_check_no_self_overlap(kg_context *ctx, const kg_tensor *t, const char *name)
{
    int idx[KG_MAX_DIMS], n = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] == 0)
            return KG_OK;
        if (t->shape[d] > 1)
            idx[n++] = d;
    }
    /* sort the non-trivial dims by stride, then each stride must exceed the
       span of all smaller ones */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t->strides[idx[j]] < t->strides[idx[j - 1]]; j--) {
            int x = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = x;
        }
    int64_t span = 0;
    for (int i = 0; i < n; i++) {
        const int d = idx[i];
        if (t->strides[d] <= span) {
            char sh[128], st[128];
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                           "invalid argument: %s overlaps itself (shape %s, strides %s): an output needs one "
                           "memory location per element",
                           name, kg_shape_str(sh, sizeof sh, t->ndim, t->shape),
                           kg_shape_str(st, sizeof st, t->ndim, t->strides));
        }
        span += (t->shape[d] - 1) * t->strides[d];
    }
    return KG_OK;
}

kg_status kg_check_alias(kg_context *ctx, const kg_tensor *out, const kg_tensor *in, const char *name)
{
    const uint64_t oe = extent(out), ie = extent(in);
    if (!oe || !ie)
        return KG_OK;
    const uintptr_t o0 = (uintptr_t)out->data, i0 = (uintptr_t)in->data;
    if (o0 + oe <= i0 || i0 + ie <= o0)
        return KG_OK;
    if (o0 == i0 && kg_dtype_size(out->dtype) == kg_dtype_size(in->dtype)) {
        int64_t st[KG_MAX_DIMS];
        kg_broadcast_strides(in, out->ndim, out->shape, st);
        int same = 1;
        for (int d = 0; d < out->ndim; d++)
            if (out->shape[d] > 1 && st[d] != out->strides[d])
                same = 0;
        if (same)
            return KG_OK;
    }
    return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                   "invalid argument: out partially overlaps %s (bytes [%p, %p) and [%p, %p)); an output may "
                   "only alias an input exactly (in place)",
                   name, (void *)o0, (void *)(o0 + oe), (void *)i0, (void *)(i0 + ie));
}

void kg_layout_build(kg_layout *L, const kg_tensor *out, const kg_tensor *const *in, int n_in)
{
    int64_t st[KG_EW_MAX_OPERANDS][KG_MAX_DIMS];
    L->nops = n_in + 1;
    for (int d = 0; d < out->ndim; d++)
        st[0][d] = out->strides[d];
    for (int k = 0; k < n_in; k++)
        kg_broadcast_strides(in[k], out->ndim, out->shape, st[k + 1]);

    /* keep dims of size > 1, innermost first */
    int dims[KG_MAX_DIMS], n = 0;
    for (int d = out->ndim - 1; d >= 0; d--)
        if (out->shape[d] != 1)
            dims[n++] = d;
    /* stable insertion sort by the output's stride, ascending */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && st[0][dims[j]] < st[0][dims[j - 1]]; j--) {
            int x = dims[j];
            dims[j] = dims[j - 1];
            dims[j - 1] = x;
        }
    L->ndim = 0;
    for (int i = 0; i < n; i++) {
        const int d = dims[i];
        if (L->ndim > 0) {
            const int p = L->ndim - 1;
            int chain = 1;
            for (int k = 0; k < L->nops; k++)
                if (st[k][d] != L->stride[k][p] * L->size[p])
                    chain = 0;
            if (chain) {
                L->size[p] *= out->shape[d];
                continue;
            }
        }
        L->size[L->ndim] = out->shape[d];
        for (int k = 0; k < L->nops; k++)
            L->stride[k][L->ndim] = st[k][d];
        L->ndim++;
    }
}

int kg_layout_fits32(const kg_layout *L)
{
    const int64_t lim = (int64_t)1 << 31;
    int64_t n = 1;
    for (int d = 0; d < L->ndim; d++)
        n *= L->size[d];
    if (n >= lim)
        return 0;
    for (int k = 0; k < L->nops; k++) {
        int64_t end = 0;
        for (int d = 0; d < L->ndim; d++)
            end += (L->size[d] - 1) * L->stride[k][d];
        if (end >= lim)
            return 0;
    }
    return 1;
}

void kg_divmod_magic(uint32_t d, uint32_t *magic, uint32_t *shift)
{
    uint32_t s = 0;
    while (s < 32 && ((uint64_t)1 << s) < d)
        s++;
    *shift = s;
    *magic = (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << s) - d)) / d + 1);
}

void kg_layout_to_nd32(const kg_layout *L, kg_nd32 *o)
{
    memset(o, 0, sizeof *o);
    int64_t n = 1;
    o->ndim = L->ndim;
    for (int d = 0; d < L->ndim; d++) {
        n *= L->size[d];
        o->size[d] = (uint32_t)L->size[d];
        kg_divmod_magic(o->size[d], &o->magic[d], &o->shift[d]);
        for (int k = 0; k < L->nops; k++)
            o->stride[k][d] = (int32_t)L->stride[k][d];
    }
    o->n = (uint32_t)n;
}

void kg_layout_to_nd64(const kg_layout *L, kg_nd64 *o)
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
