/*
 * error.c - status names and texts (from the one X-macro list), messages kept
 * on the context, and the mapping of CUDA errors onto kgen's codes.
 */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"
#include "trust.h" /* kgi_cuda_sticky */

static const char *const status_names[] = {
#define KG_STATUS_NAME(sym, val, text) [val] = #sym,
    KG_STATUS_LIST(KG_STATUS_NAME)
#undef KG_STATUS_NAME
};

static const char *const status_texts[] = {
#define KG_STATUS_TEXT(sym, val, text) [val] = text,
    KG_STATUS_LIST(KG_STATUS_TEXT)
#undef KG_STATUS_TEXT
};

const char *kg_status_name(kg_status status)
{
    if ((int)status < 0 || status >= KG_STATUS_COUNT || !status_names[status])
        return "KG_STATUS_UNKNOWN";
    return status_names[status];
}

const char *kg_status_text(kg_status status)
{
    if ((int)status < 0 || status >= KG_STATUS_COUNT || !status_texts[status])
        return "unknown status code";
    return status_texts[status];
}

const char *kg_errmsg(const kg_context *ctx)
{
    if (!ctx)
        return "no context: the kg_context pointer is NULL (kg_open sets it to NULL only when host memory "
               "runs out; otherwise a context was never opened)";
    return ctx->msg;
}

kg_status kgi_fail(kg_context *ctx, kg_status status, const char *fmt, ...)
{
    if (ctx) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->msg, sizeof ctx->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

kg_status kgi_ok(kg_context *ctx)
{
    if (ctx)
        ctx->msg[0] = '\0';
    return KG_OK;
}

int kgi_cuda_sticky(cudaError_t err)
{
    switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert: return 1;
    default: return 0;
    }
}

kg_status kgi_cuda_fail(kg_context *ctx, cudaError_t err, const char *what)
{
    kg_status st;
    if (kgi_cuda_sticky(err)) /* the CUDA context is lost for the rest of the process */
        return kgi_fail(ctx, KG_ERR_CUDA,
                        "CUDA error: a device fault (sticky: every later call in this process fails too): %s: %s (%s)",
                        what, cudaGetErrorString(err), cudaGetErrorName(err));
    switch (err) {
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
    case cudaErrorInitializationError:
    case cudaErrorStubLibrary:
    case cudaErrorCallRequiresNewerDriver:
        st = KG_ERR_NO_DEVICE;
        return kgi_fail(ctx, st, "no CUDA driver or device: %s: %s", what, cudaGetErrorString(err));
    case cudaErrorInvalidDevice: st = KG_ERR_DEVICE_RANGE; break;
    case cudaErrorMemoryAllocation: st = KG_ERR_OUT_OF_MEMORY; break;
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidKernelImage:
    case cudaErrorUnsupportedPtxVersion:
        st = KG_ERR_NO_KERNEL_IMAGE;
        return kgi_fail(ctx, st, "no kernel image for sm_%d%d in this bundle (built for %s): %s: %s",
                        ctx ? ctx->cc_major : 0, ctx ? ctx->cc_minor : 0, kgi_bundle_archs(), what,
                        cudaGetErrorString(err));
    case cudaErrorLaunchOutOfResources:
    case cudaErrorInvalidConfiguration:
    case cudaErrorLaunchTimeout: st = KG_ERR_LAUNCH; break;
    default: st = KG_ERR_CUDA; break;
    }
    return kgi_fail(ctx, st, "%s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
}
