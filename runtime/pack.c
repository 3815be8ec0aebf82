/*
 * pack.c - dense copies of operands a kernel or cuBLAS cannot read as they
 * are (see trust.h). The copy is the generated same-dtype strided copy
 * (kg_cast with equal dtypes), so any strides, broadcast included, cost one
 * read and one write of the operand and no new kernel.
 */
#include <string.h>

#include "kg_ops_cast.h" /* kg_cast */
#include "trust.h"

kg_status kgi_pack_bytes(kg_context *ctx, int n, const kg_tensor *const *src, size_t *bytes)
{
    size_t total = 0;
    *bytes = 0;
    for (int i = 0; i < n; i++) {
        const kg_tensor *t = src[i];
        uint64_t e = kg_dtype_size(t->dtype);
        for (int d = 0; d < t->ndim; d++)
            if (__builtin_mul_overflow(e, (uint64_t)t->shape[d], &e))
                e = UINT64_MAX;
        size_t r = e > SIZE_MAX - KG_PACK_ALIGN ? SIZE_MAX : kgi_pack_round((size_t)e);
        if (e == UINT64_MAX || r == SIZE_MAX || __builtin_add_overflow(total, r, &total) ||
            total > ((size_t)1 << 62)) {
            char s[128];
            return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                           "invalid argument: a dense copy of a %s tensor %s would take more than 2^62 bytes",
                           kg_dtype_name(t->dtype), kgi_shape_str(s, sizeof s, t->ndim, t->shape));
        }
    }
    *bytes = total;
    return KG_OK;
}

/* The dense row-major tensor of src's dtype and shape at `at`. */
static kg_tensor dense_at(const kg_tensor *src, void *at)
{
    return kg_tensor_contiguous(at, src->dtype, src->ndim, src->shape);
}

static kg_status copy(kg_context *ctx, const kg_tensor *dst, const kg_tensor *src)
{
    /* The strided copy validates both again (cheap) and launches one
       kernel; its failure message is the one the caller reports. */
    return kg_cast(ctx, dst, src);
}

kg_status kgi_pack(kg_context *ctx, int n, const kg_tensor *const *src, kg_tensor *dst)
{
    if (n < 0 || n > KG_PACK_MAX)
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: kgi_pack of %d tensors (at most %d)", n,
                       KG_PACK_MAX);
    size_t bytes;
    kg_status st = kgi_pack_bytes(ctx, n, src, &bytes);
    if (st != KG_OK)
        return st;
    void *base = NULL;
    if (bytes > 0 && (st = kgi_pack_area(ctx, bytes, &base)) != KG_OK)
        return st;
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        size_t one;
        kgi_pack_bytes(ctx, 1, &src[i], &one);
        dst[i] = dense_at(src[i], one ? (char *)base + at : NULL);
        at += one;
        if (one && (st = copy(ctx, &dst[i], src[i])) != KG_OK)
            return st;
    }
    return KG_OK;
}

kg_status kgi_unpack(kg_context *ctx, const kg_tensor *dst, const kg_tensor *src) { return copy(ctx, dst, src); }

int kgi_pack_is_aligned(const kg_tensor *t, size_t align)
{
    if (t->ndim > 0 && t->shape[t->ndim - 1] > 1 && t->strides[t->ndim - 1] != 1)
        return 0;
    uint64_t bits = (uint64_t)(uintptr_t)t->data;
    const uint64_t es = kg_dtype_size(t->dtype);
    for (int d = 0; d + 1 < t->ndim; d++)
        if (t->shape[d] > 1)
            bits |= (uint64_t)t->strides[d] * es;
    return align == 0 || bits % align == 0;
}
