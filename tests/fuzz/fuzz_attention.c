/* libFuzzer target: attention validation. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    kg_context *ctx = fz_ctx();
    kg_tensor t[6];
    fz_tensors(&f, t, 6);
    const unsigned how = fz_byte(&f);
    static const float scales[] = {0.0f, 0.125f, 1.0f, -1.0f, 3e38f, 2.4e38f, 1e-30f, __builtin_nanf(""),
                                   __builtin_inff(), -0.0f};
    kg_attention_opts o = {scales[fz_byte(&f) % 10], (int)(how >> 4 & 1)};
    fz_check(ctx, kg_attention(ctx, &t[0], how & 1 ? &t[1] : NULL, &t[2], &t[3], &t[4], how & 2 ? &t[5] : NULL,
                               how & 4 ? NULL : &o));
    return 0;
}
