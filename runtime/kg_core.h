/*
 * kg_core.h - the core of kgen's public API: status codes, dtypes, tensors,
 * the context, device memory, version. Users include kgen.h, which includes
 * this and every op family's header; the library's own files include only
 * what they use (so adding an op rebuilds only what depends on it).
 */
#ifndef KG_CORE_H
#define KG_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "kg_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KG_API __attribute__((visibility("default")))
#else
#define KG_API
#endif

#define KG_MAX_DIMS 8

typedef enum kg_status {
#define KG_STATUS_ENUM(sym, val, text) sym = val,
    KG_STATUS_LIST(KG_STATUS_ENUM)
#undef KG_STATUS_ENUM
        KG_STATUS_COUNT
} kg_status;

/* Element types. f16/bf16 compute in f32; bool is one byte holding 0 or 1. */
typedef enum kg_dtype { KG_F32, KG_F64, KG_F16, KG_BF16, KG_I32, KG_I64, KG_U8, KG_BOOL, KG_DTYPE_COUNT } kg_dtype;

typedef struct kg_tensor {
    void *data; /* device pointer; may be NULL when empty */
    kg_dtype dtype;
    int ndim; /* 0 (a scalar) .. KG_MAX_DIMS */
    int64_t shape[KG_MAX_DIMS];
    int64_t strides[KG_MAX_DIMS]; /* in elements, >= 0 */
} kg_tensor;

typedef struct kg_context kg_context;

/* Same type as cudaStream_t, without including the CUDA headers. */
typedef struct CUstream_st *kg_stream;

/* ---- Status and messages ------------------------------------------------ */

/* The message of the last failure on ctx ("" after success). Never NULL. */
KG_API const char *kg_errmsg(const kg_context *ctx);
/* "KG_ERR_SHAPE" and "shape mismatch" for KG_ERR_SHAPE, and so on. */
KG_API const char *kg_status_name(kg_status status);
KG_API const char *kg_status_text(kg_status status);

/* ---- Context -------------------------------------------------------------- */

/*
 * Opens a context on CUDA device `device`. As sqlite3_open does, *ctx is set
 * even when this fails (unless host memory ran out, when it is NULL), so the
 * reason can be read with kg_errmsg(*ctx); close it with kg_close either way.
 * A context that failed to open still validates calls: ops check their
 * arguments first and only then report why it failed (KG_ERR_NO_DEVICE,
 * KG_ERR_DEVICE_RANGE, ...). A device index outside 0..count-1 is
 * KG_ERR_DEVICE_RANGE (a negative one on every machine, before any CUDA
 * call).
 */
KG_API kg_status kg_open(kg_context **ctx, int device);
KG_API void kg_close(kg_context *ctx);
/* The stream ops are enqueued on; NULL (the default) is the legacy stream. */
KG_API kg_status kg_set_stream(kg_context *ctx, kg_stream stream);
KG_API kg_stream kg_get_stream(const kg_context *ctx);
/* Waits for all work on the context's stream. */
KG_API kg_status kg_sync(kg_context *ctx);
/* Human-readable device name and compute capability, for logs. */
KG_API kg_status kg_device_info(kg_context *ctx, char *name, size_t name_len, int *cc_major, int *cc_minor,
                                int *sm_count);

/* ---- Device memory --------------------------------------------------------- */

KG_API kg_status kg_malloc(kg_context *ctx, void **ptr, size_t bytes);
KG_API kg_status kg_free(kg_context *ctx, void *ptr);
/* Copies on the context's stream and waits for the copy to finish. */
KG_API kg_status kg_copy_in(kg_context *ctx, void *dst_device, const void *src_host, size_t bytes);
KG_API kg_status kg_copy_out(kg_context *ctx, void *dst_host, const void *src_device, size_t bytes);
KG_API kg_status kg_memset(kg_context *ctx, void *dst_device, int byte, size_t bytes);
/* Makes sure the context's device scratch for its current stream (used by
   split reductions, normalizations, split decode attention, the attention
   backward and other ops with partial results) holds at least `bytes` bytes
   (0: the default size, the split counters and 4 MiB of partials, which
   split reductions stay within; split decode attention, long outer-axis
   normalizations and the attention backward
   (kg_attention_backward_scratch_bytes) may need more: a call captured
   without enough fails naming the bytes to pass), allocating (and zeroing)
   it now. Call it outside graph capture; it synchronizes the device when it
   allocates. */
KG_API kg_status kg_reserve_scratch(kg_context *ctx, size_t bytes);

/* ---- Tensors ---------------------------------------------------------------- */

/* A row-major (C-contiguous) tensor over `data`. Defined for any input; ops
   refuse what is not a valid tensor, with the reason: with ndim outside
   0..KG_MAX_DIMS (or shape NULL and ndim > 0) the result has that ndim and
   all-zero shape and strides; a stride that would exceed INT64_MAX is
   INT64_MAX (such a non-empty tensor spans more than 2^63 bytes). */
KG_API kg_tensor kg_tensor_contiguous(void *data, kg_dtype dtype, int ndim, const int64_t *shape);
/* The element count (the product of the shape; 1 for a scalar, 0 when a
   size is 0), or -1 when t is NULL, its ndim is outside 0..KG_MAX_DIMS, a
   size is negative, or the count exceeds INT64_MAX. */
KG_API int64_t kg_numel(const kg_tensor *t);
KG_API size_t kg_dtype_size(kg_dtype dtype);
/* "f32", "bf16", ... ; "?" for an invalid value. */
KG_API const char *kg_dtype_name(kg_dtype dtype);

/* ---- Version and bundle (version.c) -------------------------------------- */

/* "MAJOR.MINOR.PATCH" of the library linked at run time; each pointer may be
   NULL. */
KG_API const char *kg_version(int *major, int *minor, int *patch);
/* The embedded bundle: its GPU architectures as text ("sm_80, sm_90", with
   " (+PTX compute_90)" where build.ninja's ptx_arch embeds PTX) and, where the pointers are not NULL, how many kernels and
   modules it holds and its size in bytes. */
KG_API const char *kg_bundle_info(int *kernels, int *modules, size_t *bytes);

#ifdef __cplusplus
}
#endif

#endif
