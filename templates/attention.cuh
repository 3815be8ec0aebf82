/*
 * attention.cuh - flash attention forward: out = softmax(scale q k^T + mask) v
 * and the row log-sum-exp, never materializing the Sq x Sk matrix.
 *
 * One block owns BM query rows of one (batch, head) and walks the key/value
 * sequence in tiles of BN keys with the online softmax (FlashAttention-2):
 * running row max m and sum l, the output accumulator rescaled by
 * exp2(m_old - m_new) whenever the max grows. Softmax runs in the log2
 * domain (scores pre-multiplied by scale * log2 e) so each exponential is one
 * ex2. A row whose keys are all masked keeps m = -inf; it is exponentiated
 * against 0 instead (every term is 0), so it ends with l = 0, output 0 and
 * lse -inf rather than NaN.
 *
 * Two kernels:
 *   attn_tc   f16 / bf16 on tensor cores: mma.sync m16n8k16 with f32
 *             accumulators, operands through ldmatrix from shared memory
 *             filled by cp.async (the load of the next K tile and of the
 *             current V tile overlap the two matrix products). Each warp owns
 *             MT x 16 query rows; the P tile goes from the S accumulators
 *             straight into A fragments, never through shared memory.
 *   attn_f32  true FP32 (FFMA): 256 threads as 16 x 16, each thread a
 *             BM/16-row by BN/16-column block of S and a BM/16-row by D/16
 *             block of out.
 *
 * Masks (KIND): NONE; CAUSAL (query i sees keys j <= i + Sk - Sq, the
 * bottom-right alignment); MASK (additive f32 mask read per score, plus the
 * causal rule when p.causal). Key-bound and causal checks run only on the
 * tiles that cross the sequence end or the diagonal.
 */
#ifndef KG_ATTENTION_CUH
#define KG_ATTENTION_CUH

/* In three parts: attention_common.cuh (helpers shared by every kernel here,
   the decode, Hopper and backward kernels), attention_tc.cuh (attn_tc) and
   attention_f32.cuh (attn_f32). */
#include "attention_common.cuh"
#include "attention_tc.cuh"
#include "attention_f32.cuh"

#endif
