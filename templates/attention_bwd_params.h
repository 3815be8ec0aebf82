/*
 * attention_bwd_params.h - the argument of every attention backward kernel,
 * shared by the runtime (runtime/attention_bwd.c) and the kernels
 * (templates/attention_bwd.cuh). Passed by value.
 *
 * Strides are in elements; the head dim of every [B, H, S, D] tensor is
 * contiguous. Head h of q reads head h / group of k and v. rows is the
 * call's device scratch: n = B * Hq * Sq floats of delta (rowsum(dout * out))
 * followed by n floats of lse2 (lse * log2 e, +inf for a row without keys),
 * both indexed (b * Hq + h) * Sq + i. dqp (the fused path, f16 / bf16) holds
 * `lanes` f32 partial sums of dq, lane c at dqp + c * nrows * D, row-major
 * [(b * Hq + h) * Sq + i][D]. dkvp (kvq with splits > 1) holds the f32
 * partials of dk and dv of every split: split s's dk at
 * dkvp + 2 s nkrows D and its dv nkrows D floats later, row-major
 * [(b * Hkv + hk) * Sk + j][D], unscaled (attnb_dkvsum adds them up).
 */
#ifndef KG_ATTENTION_BWD_PARAMS_H
#define KG_ATTENTION_BWD_PARAMS_H

#include <stdint.h>

#include "attention_params.h" /* kg_attn_kind */

typedef struct kg_attnb_params {
    const void *q, *k, *v, *out, *dout;
    void *dq, *dk, *dv;
    const float *lse;
    const float *mask; /* KG_ATTN_MASK only; broadcast dims have stride 0 */
    float *rows;       /* scratch: delta then lse2, 2 * B * Hq * Sq floats */
    float *dqp;        /* scratch: lanes dQ partials of B * Hq * Sq * D floats (kvq, dqsum) */
    int64_t q_sb, q_sh, q_ss;
    int64_t k_sb, k_sh, k_ss;
    int64_t v_sb, v_sh, v_ss;
    int64_t o_sb, o_sh, o_ss;
    int64_t do_sb, do_sh, do_ss;
    int64_t dq_sb, dq_sh, dq_ss;
    int64_t dk_sb, dk_sh, dk_ss;
    int64_t dv_sb, dv_sh, dv_ss;
    int64_t l_sb, l_sh, l_ss;
    int64_t m_sb, m_sh, m_sq, m_sk;
    int64_t nrows; /* B * Hq * Sq */
    int32_t hq, sq, sk;
    int32_t group;    /* Hq / Hkv */
    int32_t causal;   /* KG_ATTN_MASK: also apply the causal mask */
    int32_t kind;     /* kg_attn_kind of the call (dqsum) */
    int32_t lanes;    /* dQ partials: kvq blocks per (batch, kv head), see lane_block */
    int32_t nkb;      /* key blocks of kv_bn keys */
    int32_t kv_bn;    /* kvq: keys per block */
    int32_t kv_bm;    /* kvq: queries per tile */
    int32_t mrev;     /* Hopper kvq: walk a key block's query tiles from the last one down */
    int32_t direct;   /* Hopper kvq, lanes == 1, every query row reached: dq written at the last touch, no dqsum */
    float scale;      /* softmax scale */
    float scale_log2; /* scale * log2(e) */
    /* the query splits of the portable kvq kernels (at the end: the other
       kernels' argument offsets stay as they were) */
    float *dkvp;       /* scratch: splits x (dk, dv) partials of B * Hkv * Sk * D floats (kvq, dkvsum) */
    int64_t nkrows; /* B * Hkv * Sk (dkvsum) */
    int32_t splits;   /* portable kvq: blocks per lane, each a part of every key block's queries (split_of) */
    int32_t split_h;  /* ... split_h parts of the group's query heads */
    int32_t split_t;  /* ... times split_t parts of the query tiles; splits = split_h * split_t */
    int32_t hkv;      /* kv heads (dkvsum) */
} kg_attnb_params;

#endif
