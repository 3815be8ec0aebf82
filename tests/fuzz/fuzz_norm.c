/* libFuzzer target: normalization validation (softmax, log_softmax,
   logsumexp, layer_norm, rms_norm, rms_norm with a residual). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    kg_context *ctx = fz_ctx();
    fz_check(ctx, fz_norm(&f, ctx));
    return 0;
}
