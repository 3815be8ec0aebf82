/* libFuzzer target: attention validation. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    kg_context *ctx = fz_ctx();
    fz_check(ctx, fz_attention(&f, ctx));
    return 0;
}
