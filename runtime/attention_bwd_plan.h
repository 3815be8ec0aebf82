/*
 * attention_bwd_plan.h - the query splits of the attention backward's
 * kvq kernels (runtime/attention_bwd.c), a host function of the
 * shape, the kernel's tile and the multiprocessor count; declared here for
 * the CPU tests (tests/test_attention_bwd.c).
 */
#ifndef KG_ATTENTION_BWD_PLAN_H
#define KG_ATTENTION_BWD_PLAN_H

#include <stdint.h>

/* At most this many splits of a key block's queries. */
#define KGI_ATTNB_SPLIT_MAX 16

/* The most splits a shape may use (0: none, the shape has enough (batch, kv
   head, key block) triples or nothing to split): what
   kg_attention_backward_scratch_bytes reserves for, whatever the device. */
int kgi_attnb_split_max(int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Sk, int64_t D);

/* The splits (*sh parts of the group's query heads times *st parts of the
   query tiles; 1 x 1: none) of least modelled time for kvq blocks of bn keys
   and bm-query tiles, `lanes` dQ lanes, nsm multiprocessors (one block
   each), steps of `path` 0 (mma.sync), 1 (FFMA), 2 (wgmma) or 3 (split
   TF32 mma.sync, f32), at most
   `waves` waves of blocks (the runtime: 8, wgmma 4); causal: the bottom-right
   rule. */
void kgi_attnb_split(int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Sk, int64_t D, int causal, int bn, int bm,
                     int64_t lanes, int nsm, int path, int waves, int *sh, int *st);

/* kgi_attnb_split's model itself (kgi_attnb_split answers from a cache of
   it, keyed by every argument). */
void kgi_attnb_split_model(int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Sk, int64_t D, int causal, int bn,
                           int bm, int64_t lanes, int nsm, int path, int waves, int *sh, int *st);

/* Reads the benchmark and test hooks KG_ATTNB_* from the environment again
   (kg_attention_backward reads them once, at its first call). */
void kgi_attnb_hooks_reload(void);

/* Which portable kernels of kg_attnb_table[dtype][slot] for mask kind `kind`
   fit `limit` bytes of shared memory a block (limit <= 0: any): kvq tuning
   `want` where it fits, else the first kvq tuning that does (the index), else
   -1 for the separate kv and q kernels, else -2 with *need the least bytes
   any of them takes. */
int kgi_attnb_fit(int dtype, int slot, int kind, int want, int limit, int *need);

/* A test hook: the kernel index (kg_kernels) of the dK / dV kernel that the
   process's last kg_attention_backward launched (the kvq kernel, or the
   separate kv kernel), -1 before any. The tests that force a Hopper tuning
   check with it that the forced kernel ran, not a default. */
int kgi_attnb_last_kv_kernel(void);

/* The same for the dQ kernel of the separate dq pass (attnb_q_tc, or the
   Hopper one, attnb_q_wg): -1 before any, and after a call
   on the fused path (no dQ kernel). */
int kgi_attnb_last_q_kernel(void);

#endif
