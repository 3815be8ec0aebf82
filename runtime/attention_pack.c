/*
 * attention_pack.c - kg_attention through dense, zero-padded copies (see
 * attention_pack.h). The copies are made by the generated same-dtype
 * strided copy (kg_cast) into the pack area of the context's stream
 * (trust.h), so any strides cost one extra read and write of each operand
 * that needs it, and no new kernel:
 *
 *   q', k', v'  [B, H, S, Dp] dense at 256-byte aligned addresses; where
 *               Dp > D the area is zeroed first and only the first D
 *               columns are copied, so the padded columns are exact zeros:
 *               q'.k' = q.k term for term (the added products are 0), and
 *               the padded output columns (p . 0) are dropped;
 *   out'        [B, Hq, Sq, Dp] dense; its first D columns are copied to out;
 *   lse, mask   used as they are (the kernels take any strides there).
 *
 * The scale is the original head dim's (1/sqrt(D) by default), passed
 * explicitly, so padding does not change the result.
 */
#include <stdint.h>

#include "attention_pack.h"
#include "kg_attention.h"
#include "kg_attn_table.h"
#include "kg_ops_cast.h" /* kg_cast */
#include "trust.h"

int64_t kgi_attn_padded_dim(int64_t D)
{
    int64_t best = -1;
    for (int i = 0; i < KG_ATTN_DIM_COUNT; i++)
        if (kg_attn_dims[i] >= D && (best < 0 || kg_attn_dims[i] < best))
            best = kg_attn_dims[i];
    return best;
}

int kgi_attn_direct(const kg_tensor *t) { return kg_numel(t) == 0 || kgi_pack_is_aligned(t, 16); }

/* Bytes of a dense [s0, s1, s2, Dp] copy of elsize es, rounded up to the
   pack alignment; 0 on overflow past 2^62 (reported by the caller). */
static uint64_t dense_bytes(const kg_tensor *t, int64_t Dp, uint64_t es, int *overflow)
{
    uint64_t n = es;
    const int64_t dims[4] = {t->shape[0], t->shape[1], t->shape[2], Dp};
    for (int d = 0; d < 4; d++)
        if (__builtin_mul_overflow(n, (uint64_t)dims[d], &n) || n > ((uint64_t)1 << 62)) {
            *overflow = 1;
            return 0;
        }
    return (n + KG_PACK_ALIGN - 1) / KG_PACK_ALIGN * KG_PACK_ALIGN;
}

kg_status kgi_attention_packed(kg_context *ctx, const kg_tensor *out, const kg_tensor *lse, const kg_tensor *q,
                               const kg_tensor *k, const kg_tensor *v, const kg_tensor *mask, int causal, float scale,
                               int64_t Dp)
{
    const kg_tensor *src[4] = {q, k, v, out};
    const int64_t D = q->shape[3];
    const uint64_t es = kg_dtype_size(q->dtype);
    int pack[4];
    uint64_t off[4] = {0, 0, 0, 0}, total = 0, inputs_end = 0;
    int overflow = 0;
    for (int i = 0; i < 4; i++) {
        pack[i] = Dp != D || !kgi_attn_direct(src[i]);
        if (!pack[i])
            continue;
        off[i] = total;
        total += dense_bytes(src[i], Dp, es, &overflow); /* each <= 2^62: no wrap */
        if (overflow || total > ((uint64_t)1 << 62)) {
            char s[96];
            return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                            "invalid argument: attention: dense copies of q, k, v and out %s padded to head dim %lld "
                            "would take more than 2^62 bytes",
                            kgi_shape_str(s, sizeof s, 4, q->shape), (long long)Dp);
        }
        if (i < 3)
            inputs_end = total;
    }
    void *base = NULL;
    kg_status st = KG_OK;
    if (total > 0 && (st = kgi_pack_area(ctx, (size_t)total, &base)) != KG_OK)
        return st;
    kg_tensor use[4];
    for (int i = 0; i < 4; i++) {
        if (!pack[i]) {
            use[i] = *src[i];
            continue;
        }
        const int64_t shape[4] = {src[i]->shape[0], src[i]->shape[1], src[i]->shape[2], Dp};
        const int empty = shape[0] * shape[1] * shape[2] == 0 || Dp == 0;
        use[i] = kg_tensor_contiguous(empty ? NULL : (char *)base + off[i], q->dtype, 4, shape);
    }
    /* the padded columns of q', k', v' must be zeros (NaN poison in v's
       padding would reach the output through 0 * NaN) */
    if (Dp != D && inputs_end > 0 && (st = kg_memset(ctx, base, 0, (size_t)inputs_end)) != KG_OK)
        return st;
    for (int i = 0; i < 3; i++) {
        if (!pack[i] || kg_numel(src[i]) == 0)
            continue;
        kg_tensor view = use[i];
        view.shape[3] = D; /* the first D columns of the dense copy */
        if ((st = kg_cast(ctx, &view, src[i])) != KG_OK)
            return st;
    }
    const kg_attention_opts o = {scale, causal};
    st = kg_attention(ctx, &use[3], lse, &use[0], &use[1], &use[2], mask, &o);
    if (st != KG_OK || !pack[3] || kg_numel(out) == 0)
        return st;
    kg_tensor view = use[3];
    view.shape[3] = D;
    return kg_cast(ctx, out, &view);
}
