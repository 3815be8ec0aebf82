/*
 * tensor.c - tensors as plain data: construction, sizes, names. (The check
 * every op applies to each tensor argument is kgi_check_tensor, geometry.c.)
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const struct {
    const char *name;
    size_t size;
} dtypes[KG_DTYPE_COUNT] = {
    [KG_F32] = {"f32", 4}, [KG_F64] = {"f64", 8}, [KG_F16] = {"f16", 2}, [KG_BF16] = {"bf16", 2},
    [KG_I32] = {"i32", 4}, [KG_I64] = {"i64", 8}, [KG_U8] = {"u8", 1},   [KG_BOOL] = {"bool", 1},
};

size_t kg_dtype_size(kg_dtype dtype) { return (int)dtype >= 0 && dtype < KG_DTYPE_COUNT ? dtypes[dtype].size : 0; }

const char *kg_dtype_name(kg_dtype dtype)
{
    return (int)dtype >= 0 && dtype < KG_DTYPE_COUNT ? dtypes[dtype].name : "?";
}

kg_tensor kg_tensor_contiguous(void *data, kg_dtype dtype, int ndim, const int64_t *shape)
{
    kg_tensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.dtype = dtype;
    t.ndim = ndim;
    if (ndim < 0 || ndim > KG_MAX_DIMS || (ndim > 0 && !shape))
        return t; /* kgi_check_tensor reports it */
    /* past an overflow the strides saturate at INT64_MAX: the tensor then
       spans more than 2^63 bytes, which kgi_check_tensor reports (unless it
       is empty, when no stride is used) */
    int64_t stride = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        t.shape[d] = shape[d];
        t.strides[d] = stride;
        if (shape[d] > 1 && __builtin_mul_overflow(stride, shape[d], &stride))
            stride = INT64_MAX;
    }
    return t;
}

int64_t kg_numel(const kg_tensor *t)
{
    if (!t || t->ndim < 0 || t->ndim > KG_MAX_DIMS)
        return -1;
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] < 0)
            return -1;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] == 0)
            return 0;
    for (int d = 0; d < t->ndim; d++)
        if (__builtin_mul_overflow(n, t->shape[d], &n))
            return -1;
    return n;
}

const char *kgi_shape_str(char *buf, size_t len, int ndim, const int64_t *shape)
{
    size_t at = 0;
    at += (size_t)snprintf(buf + at, len - at, "[");
    for (int d = 0; d < ndim && at < len; d++)
        at += (size_t)snprintf(buf + at, len - at, d ? ",%lld" : "%lld", (long long)shape[d]);
    if (at < len)
        snprintf(buf + at, len - at, "]");
    return buf;
}

kg_status kgi_fail_dtype(kg_context *ctx, const char *op, kg_dtype dt, unsigned accepted)
{
    char list[128] = "";
    size_t at = 0;
    for (int d = 0; d < KG_DTYPE_COUNT; d++)
        if (accepted & (1u << d))
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", at ? ", " : "", kg_dtype_name((kg_dtype)d));
    return kgi_fail(ctx, KG_ERR_DTYPE, "%s is not available for %s (it accepts %s)", op, kg_dtype_name(dt), list);
}
