/* libFuzzer target: matmul validation, the layout describer and packing
   plans (kg_gemm_describe runs on the host), and kg_matmul_ex. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    kg_context *ctx = fz_ctx();
    fz_check(ctx, fz_gemm(&f, ctx));
    return 0;
}
