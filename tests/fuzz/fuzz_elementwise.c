/* libFuzzer target: element-wise validation (every op, any arity given). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    kg_context *ctx = fz_ctx();
    kg_tensor t[4];
    const kg_op op = (kg_op)(int)(fz_byte(&f) % (KG_OP_COUNT + 2));
    const int n_in = (int)(fz_byte(&f) % 4);
    fz_tensors(&f, t, 4);
    const kg_tensor *in[3] = {&t[1], &t[2], &t[3]};
    const unsigned how = fz_byte(&f) % 8;
    if (how == 0) /* in place: out is an input */
        in[0] = &t[0];
    if (how == 1)
        in[fz_byte(&f) % 3] = NULL;
    fz_check(ctx, kg_elementwise(ctx, op, how == 2 ? NULL : &t[0], in, n_in));
    return 0;
}
