/*
 * internal.h - what the runtime's files share and users do not see.
 *
 * Layers: the core (error.c, archs.c, tensor.c, geometry.c, context.c,
 * bundle.c, scratch.c) calls no op family; each family (elementwise.c,
 * reduce.c, attention.c, gemm.c + blas.c, ...) builds on the core and hooks
 * its per-context state in with kgi_register_hooks. Internal names start
 * with kgi_ (public ones with kg_).
 *
 * Conventions: every function that can fail returns kg_status and, on
 * failure, has already stored the specific message on the context with
 * kg_fail(). Validation (host only) comes before any CUDA call, so a context
 * without a device still answers argument errors precisely.
 */
#ifndef KG_INTERNAL_H
#define KG_INTERNAL_H

#include <cuda_runtime_api.h>

#include "kg_core.h"

#define KG_MSG_LEN 512

typedef struct kgi_hooks kgi_hooks; /* below */
#define KGI_MAX_HOOKS 8

/* Testing aids of the op families: a test forces a planner choice (a kernel
   variant, a split count) and reads back what the last launch chose. The
   context keeps one value per slot and per direction and knows nothing of
   their meaning; each slot belongs to one family, which documents its
   values. Both start at -1 ("the planner chooses", "no launch yet"). */
typedef enum kgi_test_slot {
    KGI_TEST_EW_VARIANT,   /* elementwise.c: kg_ew_variant */
    KGI_TEST_ATTN_VARIANT, /* attention.c: kg_attn_variant */
    KGI_TEST_ATTN_SPLITS,  /* attention.c: key splits of a decode launch (force 0: the planner's) */
    KGI_TEST_ATTN_MERGE,   /* attention.c: decode merge (1 fused, 2 combine kernel; last 0: no split) */
    KGI_TEST_ATTN_PDL,     /* attention.c: force 0: decode launches without programmatic dependent launch */
    KGI_TEST_ATTN_TRACE,   /* attention.c: force: device words for the decode blocks' stamps */
    KGI_TEST_ATTN_ORDER,   /* attention.c: causal Hopper block order (1 heaviest first, 0 plain grid) */
    KGI_TEST_SLOT_COUNT
} kgi_test_slot;

struct kg_context {
    int device;            /* CUDA ordinal asked for */
    int usable;            /* 1 when the device opened and the bundle fits it */
    kg_status open_status; /* why it is unusable, reported by ops */
    char open_msg[KG_MSG_LEN];
    cudaStream_t stream;
    int sm_count;
    int cc_major, cc_minor;
    char msg[KG_MSG_LEN]; /* message of the last failure */
    /* Op families hang their per-context state here, with their hooks
       (kgi_register_hooks, kgi_hooks_state). */
    const kgi_hooks *hooks[KGI_MAX_HOOKS];
    void *hooks_state[KGI_MAX_HOOKS];
    int nhooks;
    void *scratch; /* per-stream device scratch and pack areas (scratch.c) */
    size_t scratch_bytes;
    intptr_t test_force[KGI_TEST_SLOT_COUNT], test_last[KGI_TEST_SLOT_COUNT];
};

/* Tests use these to run every eligible layout variant over the same cases:
   a forced variant is used only when it can serve the call. */
KG_API void kg_test_force_ew_variant(kg_context *ctx, int variant);
KG_API int kg_test_last_ew_variant(const kg_context *ctx);
/* Likewise for attention's kernel variants (kg_attn_variant in
   kg_attn_table.h). */
KG_API void kg_test_force_attn_variant(kg_context *ctx, int variant);
KG_API int kg_test_last_attn_variant(const kg_context *ctx);
KG_API void kg_test_force_attn_splits(kg_context *ctx, int splits);
KG_API int kg_test_last_attn_splits(const kg_context *ctx);
/* Decode launches, and since session 30 the Hopper prefill ones
   (attention_sm90.cuh: start, consumers' start, end, work tiles taken),
   write each block's globaltimer stamps to `trace` (device memory, 4 words
   per block; NULL: off); the persistent prefill kernels then 4 words per
   work tile after their grid's blocks (taken, its keys done, block, key
   tiles): the buffer holds 4 x (blocks + tiles) words. */
KG_API void kg_test_attn_trace(kg_context *ctx, unsigned long long *trace);
/* The decode merge (1: fused in the last block, 2: the combine kernel; 0:
   the runtime's choice) and the one the last decode launch used (0: no
   split); programmatic dependent launch of the decode kernels on / off. */
KG_API void kg_test_force_attn_combine(kg_context *ctx, int mode);
KG_API int kg_test_last_attn_combine(const kg_context *ctx);
KG_API void kg_test_attn_pdl(kg_context *ctx, int on);

/* ---- Messages and status (error.c) -------------------------------------- */

/* Stores a formatted message and returns `status`. */
kg_status kgi_fail(kg_context *ctx, kg_status status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Clears the message (successful call) and returns KG_OK. */
kg_status kgi_ok(kg_context *ctx);
/* Maps a CUDA error to a status and message, prefixed by what was done. */
kg_status kgi_cuda_fail(kg_context *ctx, cudaError_t err, const char *what);

/* ---- Context (context.c) --------------------------------------------------- */

/* Returns KG_OK when ctx can run device work, else its open failure. */
kg_status kgi_ready(kg_context *ctx);
/* 1 when stream s is being captured into a CUDA graph (0 when the query
   fails: the error is cleared). */
int kgi_stream_capturing(cudaStream_t s);

/* Per-context state of an op family hooks into the context's life: the core
   calls no family. A family registers its hooks on a context when it first
   creates state there (registering the same hooks again does nothing);
   kg_set_stream calls every set_stream after changing ctx->stream, kg_close
   every release (latest registered first) before freeing the context. */
struct kgi_hooks {
    const char *name;                         /* for messages: "cuBLAS" */
    kg_status (*set_stream)(kg_context *ctx); /* may be NULL */
    void (*release)(kg_context *ctx);         /* may be NULL */
};
kg_status kgi_register_hooks(kg_context *ctx, const kgi_hooks *hooks);
/* The state pointer the context keeps for a family with its registered
   hooks (*slot is NULL until the family stores its state there; its release
   hook frees it). NULL when these hooks are not registered on ctx. */
void **kgi_hooks_state(kg_context *ctx, const kgi_hooks *hooks);

/* ---- Tensors (tensor.c) and geometry (geometry.h) ---------------------------- */

/* Formats a shape as "[2,3]" into buf (always terminated). */
const char *kgi_shape_str(char *buf, size_t len, int ndim, const int64_t *shape);
/* KG_ERR_DTYPE: "<op> is not available for <dt> (it accepts f32, f64, ...)",
   listing the dtypes whose bit (1 << dtype) is set in accepted. */
kg_status kgi_fail_dtype(kg_context *ctx, const char *op, kg_dtype dt, unsigned accepted);

/* ---- Device scratch (scratch.c) ------------------------------------------ */

/* Makes ctx->scratch hold at least `bytes` bytes and stores it in *base. It
   grows (cudaFree + cudaMalloc, zero-filled, synchronizing) only outside graph
   capture; during capture a scratch too small is KG_ERR_INVALID_ARGUMENT.
   Contract for every user: the first KG_SCRATCH_COUNTER_BYTES bytes are
   counters that are zero between calls (a kernel that bumps one sets it back
   to zero before it ends); the rest holds any op's partial results for the
   duration of one call, ordered by the context's stream. */
#define KG_SCRATCH_COUNTER_BYTES ((size_t)64 << 10)
/* What a stream's scratch holds from its first use: the counters and 4 MiB
   for partial results, which a planner may count on without growing it
   (the reductions plan within it; tests/kg_constants_check.c ties them). */
#define KGI_SCRATCH_RESERVE_BYTES (KG_SCRATCH_COUNTER_BYTES + ((size_t)4 << 20))
kg_status kgi_scratch(kg_context *ctx, size_t bytes, void **base);

/* ---- Bundle (bundle.c) ---------------------------------------------------- */

/* The kernel of table index `k`, loading the bundle on first use. */
kg_status kgi_kernel(kg_context *ctx, int k, cudaKernel_t *out);
/* Launch with the launch error mapped to a status. */
kg_status kgi_launch(kg_context *ctx, int k, dim3 grid, dim3 block, void **args, size_t smem);

/* ---- What the bundle was built for (archs.c) ---------------------------------- */

/* 1 when the bundle has code that runs on compute capability major.minor. */
int kgi_bundle_supports(int major, int minor);
/* "sm_80, sm_90" (+ " (+PTX compute_90)" where PTX is embedded) */
const char *kgi_bundle_archs(void);

/* ---- Older names (to be removed once every family uses the kgi_ ones) ------ */
#define kg_fail kgi_fail
#define kg_ok kgi_ok
#define kg_cuda_fail kgi_cuda_fail
#define kg_ready kgi_ready
#define kg_stream_capturing kgi_stream_capturing
#define kg_shape_str kgi_shape_str
#define kg_fail_dtype kgi_fail_dtype
#define kg_scratch kgi_scratch
#define kg_kernel kgi_kernel
#define kg_launch kgi_launch
#define kg_bundle_supports kgi_bundle_supports
#define kg_bundle_archs kgi_bundle_archs

/* The shared geometry: the boundary check of tensor arguments, extents,
   overlap, alignment, broadcasting, coalescing. */
#include "geometry.h"

#endif
