/* libFuzzer target: reduction validation and planning. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    kg_context *ctx = fz_ctx();
    kg_tensor t[3];
    const kg_reduce_op op = (kg_reduce_op)(int)(fz_byte(&f) % 12) - 1;
    fz_tensors(&f, t, 3);
    int axes[10];
    const int n_axes = (int)(fz_byte(&f) % 11) - 1;
    for (int i = 0; i < 10; i++)
        axes[i] = (int)(int8_t)fz_byte(&f) % 12;
    const unsigned how = fz_byte(&f);
    const kg_tensor *indices = how & 1 ? &t[1] : NULL;
    fz_check(ctx, kg_reduce(ctx, op, &t[0], indices, &t[2], how & 2 ? NULL : axes, n_axes, (int)(how >> 2 & 1)));
    return 0;
}
