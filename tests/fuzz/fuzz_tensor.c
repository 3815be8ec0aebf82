/* libFuzzer target: the public tensor, status and DLPack helpers, defined
   for every input (DLTensors hold exactly ndim shape and stride entries, on
   the heap, so a read past them is an ASan report). */
#include "fuzz.h"
#include "kg_dlpack.h"

static void dlpack(fz *f)
{
    kg_context *ctx = fz_ctx();
    DLTensor d;
    memset(&d, 0, sizeof d);
    static const int devs[] = {kDLCUDA, kDLCPU, kDLCUDAManaged, kDLCUDAHost, 0, 99};
    d.device.device_type = (DLDeviceType)devs[fz_byte(f) % 6];
    d.device.device_id = (int32_t)(int8_t)fz_byte(f);
    d.ndim = (int32_t)(fz_byte(f) % 44) - 3;
    d.dtype.code = (uint8_t)fz_byte(f) % 8;
    static const uint8_t bits[] = {1, 8, 16, 32, 64, 128, 0, 7};
    d.dtype.bits = bits[fz_byte(f) % 8];
    d.dtype.lanes = (uint16_t)(fz_byte(f) % 3);
    const int n = d.ndim > 0 ? d.ndim : 0;
    int64_t *shape = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    int64_t *strides = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        shape[i] = fz_extent(f), strides[i] = fz_byte(f) & 1 ? fz_extent(f) : (int64_t)(fz_byte(f) % 5);
    d.shape = n || fz_byte(f) & 1 ? shape : NULL;
    d.strides = fz_byte(f) & 1 ? strides : NULL;
    d.data = fz_addr(f, NULL, 0);
    d.byte_offset = fz_byte(f) & 1 ? (uint64_t)fz_extent(f) : fz_byte(f);
    kg_tensor t;
    memset(&t, 0, sizeof t);
    const kg_status st = kg_tensor_from_dlpack(fz_byte(f) & 1 ? NULL : ctx, &d, &t);
    if ((int)st < 0 || st >= KG_STATUS_COUNT)
        abort();
    if (st == KG_OK) {
        (void)kg_numel(&t);
        DLTensor back;
        const kg_status s2 = kg_tensor_to_dlpack(ctx, &t, &back);
        if ((int)s2 < 0 || s2 >= KG_STATUS_COUNT)
            abort();
    }
    free(shape);
    free(strides);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    kg_tensor t = fz_tensor(&f, NULL, 0);
    t.ndim = (int)(int8_t)fz_byte(&f) % 12; /* out of range too */
    const int64_t n = kg_numel(&t);
    (void)n;
    (void)kg_numel(NULL);
    int64_t shape[12];
    for (int i = 0; i < 12; i++)
        shape[i] = fz_extent(&f);
    kg_tensor c = kg_tensor_contiguous(t.data, t.dtype, t.ndim, fz_byte(&f) & 1 ? shape : NULL);
    (void)kg_numel(&c);
    const int code = (int)(int8_t)fz_byte(&f);
    if (!kg_status_name((kg_status)code) || !kg_status_text((kg_status)code))
        abort();
    if (!kg_dtype_name((kg_dtype)code))
        abort();
    (void)kg_dtype_size((kg_dtype)code);
    if (!kg_errmsg(NULL))
        abort();
    dlpack(&f);
    return 0;
}
