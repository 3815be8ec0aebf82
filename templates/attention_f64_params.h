/*
 * attention_f64_params.h - the argument of the f64 attention kernels, shared
 * by the runtime (runtime/attention_f64.c) and the kernels
 * (templates/attention_f64.cuh). Passed by value.
 *
 * Strides are in elements, every dim's (the head dim's too: the f64 kernels
 * read any layout). Broadcast mask dims have stride 0. Head h of q reads
 * head h / group of k and v.
 */
#ifndef KG_ATTENTION_F64_PARAMS_H
#define KG_ATTENTION_F64_PARAMS_H

#include <stdint.h>

typedef struct kg_attn64_params {
    const double *q, *k, *v;
    double *out;
    float *lse;        /* NULL when not wanted */
    const void *mask;  /* NULL for none; f32, or f64 where mask_f64 */
    int64_t q_s[4], k_s[4], v_s[4], o_s[4];
    int64_t l_s[3], m_s[4];
    int32_t sq, sk, d;
    int32_t group;  /* Hq / Hkv */
    int32_t causal; /* bottom-right aligned */
    int32_t mask_f64;
    double scale;
} kg_attn64_params;

#endif
