/*
 * geometry.c - the boundary check of tensor arguments and the shape
 * arithmetic every family shares (see geometry.h for what the check
 * guarantees to the code after it).
 *
 * Overflow: kgi_tensor_size is the only place that multiplies or adds
 * unchecked shapes and strides, and it does so with __builtin_*_overflow.
 * Every other function here takes checked tensors, whose offsets fit int64.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* The element count and byte extent of t with every size 0 counted as 1:
   what the boundary check bounds, so that any product of sizes and any sum
   of (size - 1) * stride that a family computes fits int64, empty tensors
   included. 0: not a valid descriptor or an overflow (*what says which:
   'n' the element count, 'b' the extent). */
static int nominal(const kg_tensor *t, int64_t *numel, int64_t *bytes, int *empty, char *what)
{
    *what = 0;
    if (!t || t->ndim < 0 || t->ndim > KG_MAX_DIMS)
        return 0;
    int64_t n = 1, last = 0; /* element count; offset of the last element */
    *empty = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] < 0 || t->strides[d] < 0)
            return 0;
        *empty |= t->shape[d] == 0;
    }
    for (int d = 0; d < t->ndim; d++) {
        const int64_t s = t->shape[d] ? t->shape[d] : 1;
        if (__builtin_mul_overflow(n, s, &n)) {
            *what = 'n';
            return 0;
        }
    }
    *numel = n;
    for (int d = 0; d < t->ndim; d++) {
        const int64_t s = t->shape[d] ? t->shape[d] : 1;
        int64_t span;
        if (__builtin_mul_overflow(s - 1, t->strides[d], &span) || __builtin_add_overflow(last, span, &last)) {
            *what = 'b';
            return 0;
        }
    }
    if (__builtin_add_overflow(last, 1, bytes) ||
        __builtin_mul_overflow(*bytes, (int64_t)kg_dtype_size(t->dtype), bytes)) {
        *what = 'b';
        return 0;
    }
    /* the bytes the elements would occupy stored densely: only a broadcast
       or overlapping layout gets here with more than its extent */
    int64_t dense;
    if (__builtin_mul_overflow(n, (int64_t)kg_dtype_size(t->dtype), &dense)) {
        *what = 'd';
        return 0;
    }
    return 1;
}

int kgi_tensor_size(const kg_tensor *t, int64_t *numel, int64_t *bytes)
{
    int64_t n, e;
    int empty;
    char what;
    if (!nominal(t, &n, &e, &empty, &what))
        return 0;
    if (numel)
        *numel = empty ? 0 : n;
    if (bytes)
        *bytes = empty ? 0 : e;
    return 1;
}

kg_status kgi_check_tensor(kg_context *ctx, const kg_tensor *t, const char *name)
{
    if (!t)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: tensor %s is NULL", name);
    if ((int)t->dtype < 0 || t->dtype >= KG_DTYPE_COUNT)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s has dtype %d, not a kg_dtype", name,
                       (int)t->dtype);
    if (t->ndim < 0 || t->ndim > KG_MAX_DIMS)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s has %d dims (0..%d supported)", name,
                       t->ndim, KG_MAX_DIMS);
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] < 0)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s has size %lld in dim %d", name,
                           (long long)t->shape[d], d);
        if (t->strides[d] < 0)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                           "invalid argument: %s has stride %lld in dim %d (strides must be >= 0)", name,
                           (long long)t->strides[d], d);
    }
    const size_t es = kg_dtype_size(t->dtype);
    int64_t n, bytes;
    int empty;
    char what;
    if (!nominal(t, &n, &bytes, &empty, &what)) {
        char sh[KG_MSG_LEN / 4], st[KG_MSG_LEN / 4];
        kg_shape_str(sh, sizeof sh, t->ndim, t->shape);
        if (what == 'n' && !empty)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                           "invalid argument: %s: shape %s has more than 2^63 - 1 elements", name, sh);
        if (what == 'd')
            return kg_fail(
                ctx, KG_ERR_INVALID_ARGUMENT,
                "invalid argument: %s: shape %s: %lld %s of %zu-byte %s exceed 2^63 - 1 bytes (more than any "
                "allocation holds)",
                name, sh, (long long)n, empty ? "elements (nonzero sizes)" : "elements", es, kg_dtype_name(t->dtype));
        if (what == 'n')
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                           "invalid argument: %s: shape %s: the product of its nonzero sizes exceeds 2^63 - 1", name,
                           sh);
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: %s: shape %s spans more than 2^63 bytes (strides %s, %zu-byte %s elements)",
                       name, sh, kg_shape_str(st, sizeof st, t->ndim, t->strides), es, kg_dtype_name(t->dtype));
    }
    if (empty)
        return KG_OK; /* no element: no address is read or written */
    if (!t->data)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s has %lld elements but a NULL data pointer",
                       name, (long long)n);
    const uintptr_t lo = (uintptr_t)t->data;
    if ((uint64_t)bytes > UINTPTR_MAX - lo) /* the end address lo + bytes must exist */
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: %s: its %lld bytes from data %p wrap past the end of the address space", name,
                       (long long)bytes, t->data);
    if (!kgi_aligned(t->data, es))
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: %s's data %p is not aligned to its %zu-byte %s elements", name, t->data, es,
                       kg_dtype_name(t->dtype));
    return KG_OK;
}

kgi_range kgi_tensor_range(const kg_tensor *t)
{
    int64_t bytes = 0;
    kgi_range r = {(uintptr_t)t->data, (uintptr_t)t->data};
    if (kgi_tensor_size(t, NULL, &bytes))
        r.hi = r.lo + (uint64_t)bytes; /* checked: does not wrap */
    return r;
}

int kgi_ranges_overlap(kgi_range a, kgi_range b) { return a.lo < a.hi && b.lo < b.hi && a.lo < b.hi && b.lo < a.hi; }

kg_status kgi_check_no_self_overlap(kg_context *ctx, const kg_tensor *t, const char *name)
{
    int idx[KG_MAX_DIMS], n = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] == 0)
            return KG_OK;
        if (t->shape[d] > 1)
            idx[n++] = d;
    }
    /* sort the non-trivial dims by stride, then each stride must exceed the
       span of all smaller ones (checked tensor: spans fit int64) */
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

kg_status kgi_check_alias(kg_context *ctx, const kg_tensor *out, const kg_tensor *in, const char *name)
{
    const kgi_range o = kgi_tensor_range(out), i = kgi_tensor_range(in);
    if (!kgi_ranges_overlap(o, i))
        return KG_OK;
    if (o.lo == i.lo && kg_dtype_size(out->dtype) == kg_dtype_size(in->dtype)) {
        int64_t st[KG_MAX_DIMS];
        kgi_broadcast_strides(in, out->ndim, out->shape, st);
        int same = 1;
        for (int d = 0; d < out->ndim; d++)
            if (out->shape[d] > 1 && st[d] != out->strides[d])
                same = 0;
        if (same)
            return KG_OK;
    }
    if (o.lo == i.lo && o.hi == i.hi) { /* the same bytes, another layout */
        char osh[96], ost[160], ish[96], ist[160];
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: out %s strides %s and %s %s strides %s cover the same bytes [%p, %p) in "
                       "different layouts; an output may only alias an input exactly (in place)",
                       kg_shape_str(osh, sizeof osh, out->ndim, out->shape),
                       kg_shape_str(ost, sizeof ost, out->ndim, out->strides), name,
                       kg_shape_str(ish, sizeof ish, in->ndim, in->shape),
                       kg_shape_str(ist, sizeof ist, in->ndim, in->strides), (void *)o.lo, (void *)o.hi);
    }
    return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                   "invalid argument: out partially overlaps %s (bytes [%p, %p) and [%p, %p)); an output may "
                   "only alias an input exactly (in place)",
                   name, (void *)o.lo, (void *)o.hi, (void *)i.lo, (void *)i.hi);
}

kg_status kgi_check_disjoint(kg_context *ctx, const char *op, const kg_tensor *a, const char *an, const kg_tensor *b,
                             const char *bn)
{
    const kgi_range ra = kgi_tensor_range(a), rb = kgi_tensor_range(b);
    if (!kgi_ranges_overlap(ra, rb))
        return KG_OK;
    return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s: %s overlaps %s (bytes [%p, %p) and [%p, %p))",
                   op, an, bn, (void *)ra.lo, (void *)ra.hi, (void *)rb.lo, (void *)rb.hi);
}

kg_status kgi_check_aligned(kg_context *ctx, const char *op, const kg_tensor *t, const char *name, size_t bytes)
{
    int64_t n = 0;
    if (!kgi_tensor_size(t, &n, NULL) || n == 0 || kgi_aligned(t->data, bytes))
        return KG_OK;
    return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s: %s's data %p is not %zu-byte aligned", op, name,
                   t->data, bytes);
}

kg_status kgi_check_finite(kg_context *ctx, const char *op, const char *name, double v, double limit)
{
    if (isfinite(v) && fabs(v) <= limit)
        return KG_OK;
    if (limit == FLT_MAX)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: %s: %s is %g (it must be finite and at most %g in magnitude, the largest "
                       "float)",
                       op, name, v, limit);
    return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                   "invalid argument: %s: %s is %g (it must be finite and at most %g in magnitude)", op, name, v,
                   limit);
}

kg_status kgi_broadcast_shapes(kg_context *ctx, const kg_tensor *const *in, const char *const *names, int n, int *ndim,
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

void kgi_broadcast_strides(const kg_tensor *t, int ndim, const int64_t *shape, int64_t *strides)
{
    for (int d = 0; d < ndim; d++) {
        const int td = d - (ndim - t->ndim);
        strides[d] = (td < 0 || t->shape[td] == 1 || shape[d] == 1) ? 0 : t->strides[td];
    }
}

void kgi_layout_build(kgi_layout *L, const kg_tensor *out, const kg_tensor *const *in, int n_in)
{
    int64_t st[KGI_MAX_OPERANDS][KG_MAX_DIMS];
    L->nops = n_in + 1;
    for (int d = 0; d < out->ndim; d++)
        st[0][d] = out->strides[d];
    for (int k = 0; k < n_in; k++)
        kgi_broadcast_strides(in[k], out->ndim, out->shape, st[k + 1]);

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
    /* merged sizes are partial products of out's shape and merged strides
       offsets within one operand: both fit int64 (checked tensors) */
    L->ndim = 0;
    for (int i = 0; i < n; i++) {
        const int d = dims[i];
        if (L->ndim > 0) {
            const int p = L->ndim - 1;
            int chain = 1;
            for (int k = 0; k < L->nops; k++) {
                int64_t next;
                if (__builtin_mul_overflow(L->stride[k][p], L->size[p], &next) || st[k][d] != next)
                    chain = 0;
            }
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

int kgi_layout_fits32(const kgi_layout *L)
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

void kgi_divmod_magic(uint32_t d, uint32_t *magic, uint32_t *shift)
{
    uint32_t s = 0;
    while (s < 32 && ((uint64_t)1 << s) < d)
        s++;
    *shift = s;
    *magic = (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << s) - d)) / d + 1);
}
