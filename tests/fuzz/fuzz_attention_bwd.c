/* libFuzzer target: attention backward validation, and the scratch size
   helper on any sizes. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    kg_context *ctx = fz_ctx();
    kg_tensor t[11];
    fz_tensors(&f, t, 11);
    const unsigned how = fz_byte(&f);
    static const float scales[] = {0.0f, 0.125f, -1.0f, 2.4e38f, __builtin_nanf(""), __builtin_inff()};
    kg_attention_opts o = {scales[fz_byte(&f) % 6], (int)(how >> 4 & 1)};
    (void)kg_attention_backward_scratch_bytes(fz_extent(&f), fz_extent(&f), fz_extent(&f), fz_extent(&f), fz_extent(&f),
                                              fz_extent(&f));
    fz_check(ctx, kg_attention_backward(ctx, &t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6], &t[7],
                                        how & 1 ? NULL : &t[8], how & 2 ? &t[9] : NULL, how & 4 ? NULL : &o));
    return 0;
}
