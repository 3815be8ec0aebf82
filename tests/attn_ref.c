/*
 * attn_ref.c - the attention tests' shared case helpers (attn_ref.h).
 */
#include <math.h>

#include "attn_ref.h"
#include "kg_test.h" /* KT_DEV, KT_SHAPE */

double attn_ref_mask_at(const acase *c, const float *m, int b, int h, int i, int j)
{
    if (c->mask == MASK_NONE)
        return 0.0;
    switch (c->mask_ndim) {
    case 1: return m[j];
    case 2: return m[(int64_t)i * c->Sk + j];
    default:
        if (c->mask == MASK_PAD)
            return m[(int64_t)b * c->Sk + j];
        return m[(((int64_t)b * c->Hq + h) * c->Sq + i) * c->Sk + j];
    }
}

int64_t attn_ref_mask_numel(const acase *c)
{
    switch (c->mask_ndim) {
    case 1: return c->Sk;
    case 2: return (int64_t)c->Sq * c->Sk;
    default: return c->mask == MASK_PAD ? (int64_t)c->B * c->Sk : (int64_t)c->B * c->Hq * c->Sq * c->Sk;
    }
}

int64_t attn_ref_off(const acase *c, int H, int S, int b, int h, int s)
{
    if (c->bshd)
        return (((int64_t)b * S + s) * H + h) * c->D;
    return (((int64_t)b * H + h) * S + s) * c->D;
}

kg_tensor attn_ref_view4(const acase *c, void *data, int H, int S)
{
    kg_tensor t = kg_tensor_contiguous(data, c->dt, 4, (const int64_t[]){c->B, H, S, c->D});
    if (c->bshd) {
        t.strides[3] = 1;
        t.strides[1] = c->D;
        t.strides[2] = (int64_t)H * c->D;
        t.strides[0] = (int64_t)S * H * c->D;
    }
    return t;
}

attn_call attn_ref_valid_call(kg_dtype dt, int64_t D)
{
    attn_call c;
    c.q = kg_tensor_contiguous(KT_DEV(0), dt, 4, KT_SHAPE(2, 8, 100, D));
    c.k = kg_tensor_contiguous(KT_DEV(1 << 24), dt, 4, KT_SHAPE(2, 2, 120, D));
    c.v = kg_tensor_contiguous(KT_DEV(2 << 24), dt, 4, KT_SHAPE(2, 2, 120, D));
    c.out = kg_tensor_contiguous(KT_DEV(3 << 24), dt, 4, KT_SHAPE(2, 8, 100, D));
    c.lse = kg_tensor_contiguous(KT_DEV(4 << 24), KG_F32, 3, KT_SHAPE(2, 8, 100));
    c.dout = kg_tensor_contiguous(KT_DEV(5 << 24), dt, 4, KT_SHAPE(2, 8, 100, D));
    c.dq = kg_tensor_contiguous(KT_DEV(6 << 24), dt, 4, KT_SHAPE(2, 8, 100, D));
    c.dk = kg_tensor_contiguous(KT_DEV(7 << 24), dt, 4, KT_SHAPE(2, 2, 120, D));
    c.dv = kg_tensor_contiguous(KT_DEV(8 << 24), dt, 4, KT_SHAPE(2, 2, 120, D));
    return c;
}

double attn_ref_lse_tol(double max_lp, double want)
{
    const double t = 2 * max_lp + 1e-5 + 1.3e-6 * fabs(want), before = 1e-4 + 1e-5 * fabs(want);
    return t < before ? t : before;
}
