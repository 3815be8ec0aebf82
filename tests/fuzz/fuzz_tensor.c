/* libFuzzer target: the public tensor and status helpers, defined for
   every input. */
#include "fuzz.h"

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
    return 0;
}
