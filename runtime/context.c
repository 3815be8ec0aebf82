/*
 * context.c - opening a context on a device, its stream, synchronization and
 * device memory.
 *
 * The core calls no op family: a family with per-context state registers
 * hooks (kgi_register_hooks) that kg_set_stream and kg_close call.
 *
 * A context that cannot reach a device is still returned (as sqlite3_open
 * does) so its message can be read and so it can validate calls; it records
 * why it is unusable and every op reports that after its argument checks.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "trust.h" /* kgi_scratch_release */

static double gib(size_t bytes) { return (double)bytes / (1024.0 * 1024.0 * 1024.0); }

static void mark_unusable(kg_context *ctx, kg_status st)
{
    ctx->usable = 0;
    ctx->open_status = st;
    memcpy(ctx->open_msg, ctx->msg, sizeof ctx->msg);
}

kg_status kg_open(kg_context **out, int device)
{
    if (!out)
        return KG_ERR_INVALID_ARGUMENT;
    kg_context *ctx = calloc(1, sizeof *ctx);
    *out = ctx;
    if (!ctx)
        return KG_ERR_HOST_MEMORY;
    ctx->device = device;
    for (int i = 0; i < KGI_TEST_SLOT_COUNT; i++)
        ctx->test_force[i] = ctx->test_last[i] = -1;

    kg_status st;
    /* an argument error: refused before any CUDA call, the same everywhere */
    if (device < 0) {
        st = kgi_fail(ctx, KG_ERR_DEVICE_RANGE, "device index out of range: %d (device indices count from 0)", device);
        mark_unusable(ctx, st);
        return st;
    }
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        cudaGetLastError();
        st = kgi_cuda_fail(ctx, err, "cudaGetDeviceCount");
        if (st != KG_ERR_NO_DEVICE)
            st = kgi_fail(ctx, KG_ERR_NO_DEVICE, "no CUDA driver or device: cudaGetDeviceCount: %s",
                          cudaGetErrorString(err));
        mark_unusable(ctx, st);
        return st;
    }
    if (count == 0) {
        st = kgi_fail(ctx, KG_ERR_NO_DEVICE, "no CUDA driver or device: the driver reports 0 devices");
        mark_unusable(ctx, st);
        return st;
    }
    if (device < 0 || device >= count) {
        st = kgi_fail(ctx, KG_ERR_DEVICE_RANGE, "device index out of range: %d (this machine has %d device%s, 0..%d)",
                      device, count, count == 1 ? "" : "s", count - 1);
        mark_unusable(ctx, st);
        return st;
    }
    if ((err = cudaSetDevice(device)) != cudaSuccess ||
        (err = cudaDeviceGetAttribute(&ctx->cc_major, cudaDevAttrComputeCapabilityMajor, device)) != cudaSuccess ||
        (err = cudaDeviceGetAttribute(&ctx->cc_minor, cudaDevAttrComputeCapabilityMinor, device)) != cudaSuccess ||
        (err = cudaDeviceGetAttribute(&ctx->sm_count, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess) {
        cudaGetLastError();
        st = kgi_cuda_fail(ctx, err, "opening the device");
        mark_unusable(ctx, st);
        return st;
    }
    if (!kgi_bundle_supports(ctx->cc_major, ctx->cc_minor)) {
        st = kgi_fail(ctx, KG_ERR_NO_KERNEL_IMAGE, "no kernel image for sm_%d%d in this bundle (built for %s)",
                      ctx->cc_major, ctx->cc_minor, kgi_bundle_archs());
        mark_unusable(ctx, st);
        return st;
    }
    ctx->usable = 1;
    return kgi_ok(ctx);
}

void kg_close(kg_context *ctx)
{
    if (!ctx)
        return;
    if (ctx->usable)
        cudaSetDevice(ctx->device);
    /* every family that registered hooks has state to free (a family creates
       device state only on a usable context; its hook knows what it made) */
    for (int i = ctx->nhooks - 1; i >= 0; i--)
        if (ctx->hooks[i]->release)
            ctx->hooks[i]->release(ctx);
    if (ctx->usable)
        kgi_scratch_release(ctx); /* per-stream scratch and pack areas (scratch.c) */
    free(ctx);
}

kg_status kgi_ready(kg_context *ctx)
{
    if (!ctx)
        return KG_ERR_INVALID_ARGUMENT;
    if (!ctx->usable) {
        memcpy(ctx->msg, ctx->open_msg, sizeof ctx->msg);
        return ctx->open_status;
    }
    int cur = -1;
    cudaError_t err = cudaGetDevice(&cur);
    if (err == cudaSuccess && cur == ctx->device)
        return KG_OK;
    err = cudaSetDevice(ctx->device);
    if (err != cudaSuccess)
        return kgi_cuda_fail(ctx, err, "cudaSetDevice");
    return KG_OK;
}

int kgi_stream_capturing(cudaStream_t s)
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &cs) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return cs != cudaStreamCaptureStatusNone;
}

kg_status kg_set_stream(kg_context *ctx, kg_stream stream)
{
    if (!ctx)
        return KG_ERR_INVALID_ARGUMENT;
    ctx->stream = (cudaStream_t)stream;
    for (int i = 0; i < ctx->nhooks; i++) {
        kg_status st = ctx->hooks[i]->set_stream ? ctx->hooks[i]->set_stream(ctx) : KG_OK;
        if (st != KG_OK)
            return st;
    }
    return kgi_ok(ctx);
}

kg_status kgi_register_hooks(kg_context *ctx, const kgi_hooks *hooks)
{
    for (int i = 0; i < ctx->nhooks; i++)
        if (ctx->hooks[i] == hooks)
            return KG_OK;
    if (ctx->nhooks == KGI_MAX_HOOKS)
        return kgi_fail(ctx, KG_ERR_HOST_MEMORY, "out of host memory: no room for the %s hooks (%d registered)",
                        hooks->name, KGI_MAX_HOOKS);
    ctx->hooks[ctx->nhooks++] = hooks;
    return KG_OK;
}

void **kgi_hooks_state(kg_context *ctx, const kgi_hooks *hooks)
{
    for (int i = 0; i < ctx->nhooks; i++)
        if (ctx->hooks[i] == hooks)
            return &ctx->hooks_state[i];
    return NULL;
}

kg_stream kg_get_stream(const kg_context *ctx) { return ctx ? (kg_stream)ctx->stream : NULL; }

kg_status kg_sync(kg_context *ctx)
{
    kg_status st = kgi_ready(ctx);
    if (st != KG_OK)
        return st;
    cudaError_t err = cudaStreamSynchronize(ctx->stream);
    if (err != cudaSuccess) {
        kgi_cuda_fail(ctx, err, "cudaStreamSynchronize");
        return kgi_fail(ctx, KG_ERR_SYNC, "synchronization failed: %s (%s)", cudaGetErrorString(err),
                        cudaGetErrorName(err));
    }
    return kgi_ok(ctx);
}

kg_status kg_device_info(kg_context *ctx, char *name, size_t name_len, int *cc_major, int *cc_minor, int *sm_count)
{
    kg_status st = kgi_ready(ctx);
    if (st != KG_OK)
        return st;
    if (name && name_len) {
        struct cudaDeviceProp prop;
        cudaError_t err = cudaGetDeviceProperties(&prop, ctx->device);
        if (err != cudaSuccess)
            return kgi_cuda_fail(ctx, err, "cudaGetDeviceProperties");
        strncpy(name, prop.name, name_len - 1);
        name[name_len - 1] = '\0';
    }
    if (cc_major)
        *cc_major = ctx->cc_major;
    if (cc_minor)
        *cc_minor = ctx->cc_minor;
    if (sm_count)
        *sm_count = ctx->sm_count;
    return kgi_ok(ctx);
}

kg_status kg_malloc(kg_context *ctx, void **ptr, size_t bytes)
{
    if (!ctx)
        return KG_ERR_INVALID_ARGUMENT;
    if (!ptr)
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: kg_malloc: ptr is NULL");
    *ptr = NULL;
    kg_status st = kgi_ready(ctx);
    if (st != KG_OK)
        return st;
    if (bytes == 0)
        return kgi_ok(ctx);
    cudaError_t err = cudaMalloc(ptr, bytes);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        *ptr = NULL;
        return kgi_fail(ctx, KG_ERR_OUT_OF_MEMORY,
                        "out of memory: requested %.2f GiB (%zu bytes), %.2f GiB total, %.2f GiB free", gib(bytes),
                        bytes, gib(total_b), gib(free_b));
    }
    if (err != cudaSuccess) {
        *ptr = NULL;
        return kgi_cuda_fail(ctx, err, "cudaMalloc");
    }
    return kgi_ok(ctx);
}

kg_status kg_free(kg_context *ctx, void *ptr)
{
    kg_status st = kgi_ready(ctx);
    if (st != KG_OK)
        return st;
    cudaError_t err = cudaFree(ptr);
    return err == cudaSuccess ? kgi_ok(ctx) : kgi_cuda_fail(ctx, err, "cudaFree");
}

static kg_status copy(kg_context *ctx, void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                      const char *what)
{
    if (!ctx)
        return KG_ERR_INVALID_ARGUMENT;
    if (bytes && (!dst || !src))
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: %s: %s pointer is NULL", what,
                        !dst ? "destination" : "source");
    kg_status st = kgi_ready(ctx);
    if (st != KG_OK || bytes == 0)
        return st != KG_OK ? st : kgi_ok(ctx);
    cudaError_t err = cudaMemcpyAsync(dst, src, bytes, kind, ctx->stream);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(ctx->stream);
    return err == cudaSuccess ? kgi_ok(ctx) : kgi_cuda_fail(ctx, err, what);
}

kg_status kg_copy_in(kg_context *ctx, void *dst_device, const void *src_host, size_t bytes)
{
    return copy(ctx, dst_device, src_host, bytes, cudaMemcpyHostToDevice, "kg_copy_in");
}

kg_status kg_copy_out(kg_context *ctx, void *dst_host, const void *src_device, size_t bytes)
{
    return copy(ctx, dst_host, src_device, bytes, cudaMemcpyDeviceToHost, "kg_copy_out");
}

kg_status kg_memset(kg_context *ctx, void *dst_device, int byte, size_t bytes)
{
    if (!ctx)
        return KG_ERR_INVALID_ARGUMENT;
    if (bytes && !dst_device)
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: kg_memset: destination pointer is NULL");
    kg_status st = kgi_ready(ctx);
    if (st != KG_OK || bytes == 0)
        return st != KG_OK ? st : kgi_ok(ctx);
    cudaError_t err = cudaMemsetAsync(dst_device, byte, bytes, ctx->stream);
    return err == cudaSuccess ? kgi_ok(ctx) : kgi_cuda_fail(ctx, err, "cudaMemsetAsync");
}
