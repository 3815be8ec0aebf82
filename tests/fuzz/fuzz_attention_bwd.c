/* libFuzzer target: attention backward validation, and the scratch size
   helper on any sizes. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    kg_context *ctx = fz_ctx();
    fz_check(ctx, fz_attention_bwd(&f, ctx));
    return 0;
}
