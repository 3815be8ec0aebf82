/*
 * kg_dlpack.h - kgen tensors to and from DLPack (dlpack/dlpack.h, the
 * libdlpack-dev package), the exchange format of PyTorch, CuPy, JAX and
 * others. Neither direction copies data or takes ownership: a kg_tensor made
 * from a DLTensor points into the producer's memory, which must stay alive
 * (and unchanged in shape) while kgen uses it.
 *
 *     kg_tensor t;
 *     if (kg_tensor_from_dlpack(ctx, &managed->dl_tensor, &t) != KG_OK)
 *         fprintf(stderr, "%s\n", kg_errmsg(ctx));
 *
 * Both calls take the context first, as every kgen call does, so that a
 * refusal leaves its message there (kg_errmsg); ctx may be NULL, in which
 * case only the status says what went wrong. On failure *dst is unchanged.
 */
#ifndef KG_DLPACK_H
#define KG_DLPACK_H

#include <dlpack/dlpack.h>

#include "kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Describes src as a kg_tensor (data = src->data + src->byte_offset; shape and
 * strides copied; NULL strides mean row-major). Refused with
 * KG_ERR_INVALID_ARGUMENT: a device other than CUDA or CUDA managed memory, a
 * device other than ctx's (when ctx opened a device), more than KG_MAX_DIMS
 * dims, a negative size or stride, and a byte_offset that leaves the data
 * misaligned for its element type. Refused with KG_ERR_DTYPE: lanes != 1 and
 * element types kgen does not have (kDLBool is taken as KG_BOOL; the other
 * accepted types are float 16/32/64, bfloat 16, int 32/64 and uint 8).
 */
KG_API kg_status kg_tensor_from_dlpack(kg_context *ctx, const DLTensor *src, kg_tensor *dst);

/*
 * Describes src as a DLTensor on ctx's CUDA device (byte_offset 0). dst's
 * shape and strides point into src's arrays, so src must outlive dst. ctx is
 * needed here for its device number.
 */
KG_API kg_status kg_tensor_to_dlpack(kg_context *ctx, const kg_tensor *src, DLTensor *dst);

#ifdef __cplusplus
}
#endif

#endif
