/* libFuzzer target: reduction validation and planning. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    kg_context *ctx = fz_ctx();
    fz_check(ctx, fz_reduce(&f, ctx, NULL));
    return 0;
}
