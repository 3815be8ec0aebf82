/*
 * dlpack.c - kg_tensor <-> DLTensor (see kg_dlpack.h). Host-only: no CUDA
 * call, so it works (and reports precisely) without a device.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "kg_dlpack.h"

/* DLPack 0.8 added kDLBool; the 0.6 header of Debian's libdlpack-dev lacks it. */
enum { KG_DL_BOOL = 6 };

static const struct {
    uint8_t code, bits;
} dl_types[KG_DTYPE_COUNT] = {
    [KG_F32] = {kDLFloat, 32}, [KG_F64] = {kDLFloat, 64}, [KG_F16] = {kDLFloat, 16}, [KG_BF16] = {kDLBfloat, 16},
    [KG_I32] = {kDLInt, 32},   [KG_I64] = {kDLInt, 64},   [KG_U8] = {kDLUInt, 8},    [KG_BOOL] = {KG_DL_BOOL, 8},
};

static const char *dl_code_name(uint8_t code)
{
    switch (code) {
    case kDLInt: return "int";
    case kDLUInt: return "uint";
    case kDLFloat: return "float";
    case kDLOpaqueHandle: return "opaque handle";
    case kDLBfloat: return "bfloat";
    case kDLComplex: return "complex";
    case KG_DL_BOOL: return "bool";
    default: return NULL;
    }
}

/* "float32"; "of unknown type code 99 (32 bits)" for a code DLPack lacks. */
static const char *dl_dtype_str(char *buf, size_t len, DLDataType t)
{
    const char *name = dl_code_name(t.code);
    if (name)
        snprintf(buf, len, "%s%u", name, (unsigned)t.bits);
    else
        snprintf(buf, len, "of unknown type code %u (%u bits)", (unsigned)t.code, (unsigned)t.bits);
    return buf;
}

static const char *dl_device_name(int type)
{
    switch (type) {
    case kDLCPU: return "CPU";
    case kDLCUDA: return "CUDA";
    case kDLCUDAHost: return "CUDA host (pinned)";
    case kDLOpenCL: return "OpenCL";
    case kDLVulkan: return "Vulkan";
    case kDLMetal: return "Metal";
    case kDLVPI: return "VPI";
    case kDLROCM: return "ROCm";
    case kDLROCMHost: return "ROCm host";
    case kDLExtDev: return "ext_dev";
    case kDLCUDAManaged: return "CUDA managed";
    default: return "unknown";
    }
}

kg_status kg_tensor_from_dlpack(kg_context *ctx, const DLTensor *src, kg_tensor *dst)
{
    if (!src || !dst)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: kg_tensor_from_dlpack: %s is NULL",
                       !src ? "the DLTensor" : "the kg_tensor to fill");
    const int dev = (int)src->device.device_type;
    if (dev != kDLCUDA && dev != kDLCUDAManaged)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: DLPack tensor is on a %s device (device_type %d); kgen needs CUDA device "
                       "memory (kDLCUDA or kDLCUDAManaged)",
                       dl_device_name(dev), dev);
    if (ctx && ctx->usable && dev == kDLCUDA && src->device.device_id != ctx->device)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: DLPack tensor is on CUDA device %d, the context on device %d",
                       src->device.device_id, ctx->device);
    const DLDataType t = src->dtype;
    char tn[64];
    if (t.lanes != 1)
        return kg_fail(ctx, KG_ERR_DTYPE,
                       "DLPack dtype %s with %u lanes is not supported (kgen tensors have one lane per element)",
                       dl_dtype_str(tn, sizeof tn, t), (unsigned)t.lanes);
    int dtype = -1;
    for (int d = 0; d < KG_DTYPE_COUNT; d++)
        if (dl_types[d].code == t.code && dl_types[d].bits == t.bits)
            dtype = d;
    if (dtype < 0) {
        char code[16] = "";
        if (dl_code_name(t.code)) /* an unknown code is in the name already */
            snprintf(code, sizeof code, " (code %u)", (unsigned)t.code);
        return kg_fail(ctx, KG_ERR_DTYPE,
                       "DLPack dtype %s%s is not supported (kgen has float16/32/64, bfloat16, int32/64, uint8 and "
                       "bool)",
                       dl_dtype_str(tn, sizeof tn, t), code);
    }
    if (src->ndim < 0 || src->ndim > KG_MAX_DIMS)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: DLPack tensor has %d dims (0..%d supported)",
                       src->ndim, KG_MAX_DIMS);
    if (src->ndim > 0 && !src->shape)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: DLPack tensor has %d dims and a NULL shape",
                       src->ndim);
    const size_t size = kg_dtype_size((kg_dtype)dtype);
    const uintptr_t base = (uintptr_t)src->data;
    if (src->byte_offset > UINTPTR_MAX - base)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: DLPack data %p + byte_offset %llu wraps past the end of the address space",
                       src->data, (unsigned long long)src->byte_offset);
    const uintptr_t at = base + (uintptr_t)src->byte_offset;
    if (at % size)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: DLPack data %p + byte_offset %llu = %#llx is not aligned to the %zu bytes of "
                       "a %s element",
                       src->data, (unsigned long long)src->byte_offset, (unsigned long long)at, size,
                       kg_dtype_name((kg_dtype)dtype));
    kg_tensor out;
    memset(&out, 0, sizeof out);
    out.data = (void *)at;
    out.dtype = (kg_dtype)dtype;
    out.ndim = src->ndim;
    int64_t stride = 1;
    for (int d = src->ndim - 1; d >= 0; d--) {
        out.shape[d] = src->shape[d];
        out.strides[d] = src->strides ? src->strides[d] : stride;
        if (out.shape[d] > 1 && stride <= INT64_MAX / out.shape[d])
            stride *= out.shape[d];
    }
    kg_status st = kg_check_tensor(ctx, &out, "the DLPack tensor");
    if (st != KG_OK)
        return st;
    *dst = out;
    return kg_ok(ctx);
}

kg_status kg_tensor_to_dlpack(kg_context *ctx, const kg_tensor *src, DLTensor *dst)
{
    if (!ctx)
        return KG_ERR_INVALID_ARGUMENT;
    if (!src || !dst)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: kg_tensor_to_dlpack: the %s is NULL",
                       !src ? "kg_tensor" : "DLTensor");
    kg_status st = kg_check_tensor(ctx, src, "the tensor");
    if (st != KG_OK)
        return st;
    DLTensor out;
    memset(&out, 0, sizeof out);
    out.data = src->data;
    out.device.device_type = kDLCUDA;
    out.device.device_id = ctx->device;
    out.ndim = src->ndim;
    out.dtype.code = dl_types[src->dtype].code;
    out.dtype.bits = dl_types[src->dtype].bits;
    out.dtype.lanes = 1;
    out.shape = (int64_t *)src->shape;
    out.strides = (int64_t *)src->strides;
    out.byte_offset = 0;
    *dst = out;
    return kg_ok(ctx);
}
