/* libFuzzer target: normalization validation (softmax, log_softmax,
   logsumexp, layer_norm, rms_norm, rms_norm with a residual). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    kg_context *ctx = fz_ctx();
    kg_tensor t[6];
    fz_tensors(&f, t, 6);
    const unsigned which = fz_byte(&f) % 6, how = fz_byte(&f);
    const int axis = (int)(int8_t)fz_byte(&f) % 12;
    int axes[10];
    const int n_axes = (int)(fz_byte(&f) % 11) - 1;
    for (int i = 0; i < 10; i++)
        axes[i] = (int)(int8_t)fz_byte(&f) % 12;
    static const double eps[] = {1e-5, 0.0, -1.0, 1e300, __builtin_nan(""), __builtin_inf(), 1e-12};
    const double e = eps[fz_byte(&f) % 7];
    const kg_tensor *w = how & 1 ? &t[3] : NULL, *b = how & 2 ? &t[4] : NULL;
    kg_status st;
    switch (which) {
    case 0: st = kg_softmax(ctx, &t[0], &t[1], axis); break;
    case 1: st = kg_log_softmax(ctx, &t[0], &t[1], axis); break;
    case 2: st = kg_logsumexp(ctx, &t[0], &t[1], how & 4 ? NULL : axes, n_axes, (int)(how >> 3 & 1)); break;
    case 3:
        st = kg_layer_norm(ctx, &t[0], how & 16 ? &t[2] : NULL, how & 32 ? &t[5] : NULL, &t[1], axis, w, b, e);
        break;
    case 4: st = kg_rms_norm(ctx, &t[0], &t[1], w, e); break;
    default: st = kg_rms_norm_residual(ctx, &t[0], &t[2], &t[1], w, e); break;
    }
    fz_check(ctx, st);
    return 0;
}
