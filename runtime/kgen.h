/*
 * kgen.h - ahead-of-time compiled CUDA kernels for C programs.
 *
 * Overview
 * --------
 * kgen is a library of GPU kernels generated from templates at build time
 * (Lua expands them for every op, dtype and layout class; nvcc compiles them
 * into one bundle embedded in this library). Link libkgen and call:
 *
 *     kg_context *ctx;
 *     if (kg_open(&ctx, 0) != KG_OK) { puts(kg_errmsg(ctx)); kg_close(ctx); }
 *     kg_tensor a = kg_tensor_contiguous(a_dev, KG_F32, 2, (int64_t[]){1024, 512});
 *     ...
 *     kg_status st = kg_add(ctx, &out, &a, &b);
 *
 * Tensors are plain data: a device pointer, a dtype, a shape and strides
 * counted in elements (not bytes). Strides may be any non-negative values; 0
 * expresses an expanded (broadcast) view. Every op checks each tensor first:
 * ndim 0..KG_MAX_DIMS, sizes and strides >= 0, elements * element size and
 * the byte extent ((1 + sum of (size - 1) * stride) * element size) below
 * 2^63 (for these two bounds a size 0 counts as 1, so they hold for empty
 * tensors too), and, unless it is empty, data aligned to the element size
 * whose extent does not wrap past the end of the address space. Inputs
 * broadcast as in NumPy; the
 * output's shape must be the broadcast shape. An output may alias an input
 * exactly (in place); any other overlap of memory ranges is refused.
 *
 * Errors: every call returns a kg_status. A specific message for the last
 * failure ("shape mismatch: a is [2,3], b is [4]") is kept on the context and
 * read with kg_errmsg(); kg_status_name()/kg_status_text() describe a bare
 * code. The library never prints, aborts or exits.
 *
 * Asynchrony: ops are enqueued on the context's stream (kg_set_stream) and
 * return without waiting. They allocate nothing, do no host synchronization
 * and no host-to-device copy, so they may be captured in a CUDA graph.
 *
 * Threads: a context must not be used from two threads at once; separate
 * contexts (also on the same device) may be used from separate threads.
 */
#ifndef KGEN_H
#define KGEN_H

/* Status codes, dtypes, tensors, the context, device memory, version. */
#include "kg_core.h"

/* The headers' version; kg_version() gives the library's. The shared
   library's SONAME is libkgen.so.MAJOR. */
#define KG_VERSION_MAJOR 0
#define KG_VERSION_MINOR 1
#define KG_VERSION_PATCH 0

/* Matrix products through cuBLAS: kg_matmul, kg_matmul_ex, kg_set_tf32. */
#include "kg_gemm.h"

/* The generated op enum and one entry point per op (kg_add, kg_exp, ...). */
#include "kg_ops.h"
/* Reductions along any axes (sum, mean, argmax, ...). */
#include "kg_reduce.h"
/* Fused attention forward (flash attention). */
#include "kg_attention.h"
/* Its backward pass (dq, dk, dv). */
#include "kg_attention_bwd.h"
/* Normalizations (softmax, log_softmax, logsumexp, layer_norm, rms_norm). */
#include "kg_norm.h"

#endif
