/*
 * attention_params.h - the argument of every attention kernel, shared by the
 * runtime (runtime/attention.c) and the kernels (templates/attention.cuh).
 * Passed by value: a launch needs no allocation and no host-to-device copy.
 *
 * Strides are in elements; the head dim of q, k, v and out is contiguous.
 * Head h of q reads head h / group of k and v (group = Hq / Hkv).
 */
#ifndef KG_ATTENTION_PARAMS_H
#define KG_ATTENTION_PARAMS_H

#include <stdint.h>

/* Mask kinds, the last index of the generated kernel table. */
typedef enum kg_attn_kind {
    KG_ATTN_NONE,   /* no masking */
    KG_ATTN_CAUSAL, /* bottom-right aligned causal */
    KG_ATTN_MASK,   /* additive f32 mask, causal as a run-time flag */
    KG_ATTN_KIND_COUNT
} kg_attn_kind;

/* kg_attn_params.dflags of the short-query kernels (attention_decode.cuh) */
#define KG_DEC_LATE_PDL 1u   /* let the next grid launch only after the wait for the previous one */
#define KG_DEC_MAX_STAGES 8  /* most kg_attn_params.stages */

typedef struct kg_attn_params {
    const void *q, *k, *v;
    void *out;
    float *lse;        /* NULL when not wanted */
    const float *mask; /* KG_ATTN_MASK only; broadcast dims have stride 0 */
    int64_t q_sb, q_sh, q_ss;
    int64_t k_sb, k_sh, k_ss;
    int64_t v_sb, v_sh, v_ss;
    int64_t o_sb, o_sh, o_ss;
    int64_t l_sb, l_sh, l_ss;
    int64_t m_sb, m_sh, m_sq, m_sk;
    int32_t sq, sk;
    int32_t group;    /* Hq / Hkv */
    int32_t causal;   /* KG_ATTN_MASK: also apply the causal mask */
    float scale_log2; /* softmax scale * log2(e) */
    /* Short-query kernels (attention_decode.cuh) only: the key range is cut
       into `splits` chunks of `chunk` keys; with splits > 1 each block writes
       f32 partials of rows_tile packed rows to `part` (scratch), and the
       last block of each row tile (counted in `counters`, zero between
       calls) merges them. */
    float *part;
    int *counters;
    int32_t splits, chunk; /* (the persistent Hopper prefill: below) */
    int32_t rows_tile;
    /* (in the 4 bytes before trace: no other field moves) the TMA
       pipeline's stages (0: the kernel's own) and KG_DEC_* flags */
    int16_t stages;
    uint16_t dflags;
    /* test hook (kg_test_attn_trace), NULL otherwise: 4 words per block of
       a short-query launch (start, end of its keys, end, 1 if it merged),
       globaltimer nanoseconds */
    unsigned long long *trace;
    /* The persistent Hopper prefill kernels (attention_sm90.cuh): `units`
       work tiles (B x Hq x query blocks; hkv = Hq), taken in turn (queue
       NULL) or from a queue: two counters, zero between calls (the tiles
       taken after each block's first, the blocks that have left). */
    int *queue;
    int32_t units, hkv;
} kg_attn_params;

/* The persistent Hopper prefill kernels have no key split: the words of
   `splits` and `chunk` carry their schedule (kg_attn_persist_sched), read
   and written (the runtime, attention_sm90.cuh) only by these names.
   KG_ATTN_XORDER_PAIRS: causal launches' tiles heaviest first across
   batches, in sections of these (batch, head) pairs (B x Hq); 0 batch by
   batch. KG_ATTN_LATE_CLAIM > 0: a block takes its next work tile once the
   one before has its loads issued; 0 as it starts that one. (Not fields of
   their own: those would move the fields after them. Nor anonymous unions
   with splits and chunk: that moves no field, but nvcc then loads the two
   words otherwise and the short-query kernels' machine code changed,
   session 32.) */
#define KG_ATTN_XORDER_PAIRS(p) ((p).splits)
#define KG_ATTN_LATE_CLAIM(p) ((p).chunk)

#endif
