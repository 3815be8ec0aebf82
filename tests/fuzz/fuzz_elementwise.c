/* libFuzzer target: element-wise validation (every op, any arity given). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    kg_context *ctx = fz_ctx();
    fz_check(ctx, fz_elementwise(&f, ctx));
    return 0;
}
