/*
 * attention_check.h - the shape checks kg_attention (runtime/attention.c)
 * and kg_attention_backward (runtime/attention_bwd.c) share, as static
 * functions of a header, so that neither family links the other. `what`
 * names the op in the message ("attention", "attention backward"). Not
 * part of the public API.
 */
#ifndef KG_ATTENTION_CHECK_H
#define KG_ATTENTION_CHECK_H

#include "internal.h"

/* lse must be [B, Hq, Sq] for q [B, Hq, Sq, D]. */
static inline kg_status kgi_attn_check_lse(kg_context *ctx, const char *what, const kg_tensor *l, const kg_tensor *q)
{
    if (l->ndim == 3 && l->shape[0] == q->shape[0] && l->shape[1] == q->shape[1] && l->shape[2] == q->shape[2])
        return KG_OK;
    char ls[96], qs[96];
    return kgi_fail(ctx, KG_ERR_SHAPE, "shape mismatch: %s: lse is %s but must be [B, Hq, Sq] for q %s", what,
                    kgi_shape_str(ls, sizeof ls, l->ndim, l->shape), kgi_shape_str(qs, sizeof qs, 4, q->shape));
}

/* An additive mask must broadcast (numpy rules, at most 4 dims) to
   [B, Hq, Sq, Sk] for q [B, Hq, Sq, D] and k [B, Hkv, Sk, D]. */
static inline kg_status kgi_attn_check_mask(kg_context *ctx, const char *what, const kg_tensor *m, const kg_tensor *q,
                                            const kg_tensor *k)
{
    const int64_t want[4] = {q->shape[0], q->shape[1], q->shape[2], k->shape[2]};
    int ok = m->ndim <= 4;
    for (int d = 0; ok && d < m->ndim; d++) {
        const int64_t s = m->shape[m->ndim - 1 - d];
        ok = s == 1 || s == want[3 - d];
    }
    if (ok)
        return KG_OK;
    char ms[96], ws[96];
    return kgi_fail(ctx, KG_ERR_SHAPE, "shape mismatch: %s: mask %s is not broadcastable to [B, Hq, Sq, Sk] = %s", what,
                    kgi_shape_str(ms, sizeof ms, m->ndim, m->shape), kgi_shape_str(ws, sizeof ws, 4, want));
}

#endif
