/*
 * bench_attention_f64.c - what issue 16's attention paths cost, each next to
 * the direct call it replaces, in one process:
 *   - packed operands (head dim not contiguous, misaligned rows): the extra
 *     strided copies, against the same call on dense operands;
 *   - a head dim that is not generated (100, 8): zero-padded to the next
 *     one (128, 32), against a call with the padded head dim itself;
 *   - f64 (the portable f64 kernels): time and FP64 rate.
 * Prints one line per case: time, and the ratio to its direct call.
 * PyTorch's f64 SDPA time for the same f64 shape comes from the GPU script
 * (.stage/trust/gpu.sh), in the same run.
 */
#include <math.h>
#include <string.h>

#include "bench_common.h"
#include "kg_attention.h"

typedef struct {
    kg_context *ctx;
    kg_tensor q, k, v, out;
} call_t;

static void run(void *arg)
{
    call_t *c = arg;
    BENCH_CHECK(c->ctx, kg_attention(c->ctx, &c->out, NULL, &c->q, &c->k, &c->v, NULL, NULL));
}

/* [B,H,S,D] in a buffer: dense, head dim stride 2, or rows of D + 1
   elements starting one element in (misaligned). */
static kg_tensor lay(void *buf, kg_dtype dt, int64_t B, int64_t H, int64_t S, int64_t D, int how)
{
    kg_tensor t = kg_tensor_contiguous(buf, dt, 4, (const int64_t[]){B, H, S, D});
    if (how == 1) {
        for (int d = 0; d < 4; d++)
            t.strides[d] *= 2;
    } else if (how == 2) {
        t.data = (char *)buf + kg_dtype_size(dt);
        t.strides[2] = D + 1, t.strides[1] = S * (D + 1), t.strides[0] = H * S * (D + 1);
    }
    return t;
}

static double time_case(kg_context *ctx, kg_dtype dt, int64_t B, int64_t H, int64_t S, int64_t D, int how,
                        void *bufs[4])
{
    call_t c = {ctx, lay(bufs[0], dt, B, H, S, D, how), lay(bufs[1], dt, B, H, S, D, how),
                lay(bufs[2], dt, B, H, S, D, how), lay(bufs[3], dt, B, H, S, D, how)};
    return bench_time_us(ctx, run, &c, 5, 7);
}

int main(void)
{
    kg_context *ctx = bench_open("bench_attention_f64");
    void *bufs[4];
    const size_t bytes = (size_t)256 << 20;
    for (int i = 0; i < 4; i++) {
        BENCH_CHECK(ctx, kg_malloc(ctx, &bufs[i], bytes));
        BENCH_CHECK(ctx, kg_memset(ctx, bufs[i], 0, bytes)); /* zeros: finite everywhere */
    }
    printf("case | us | x direct\n");
    /* packing: bf16 [4,16,2048,128] and a short-sequence f16 case */
    const struct {
        kg_dtype dt;
        int64_t B, H, S, D;
    } pk[] = {{KG_BF16, 4, 16, 2048, 128}, {KG_F16, 8, 16, 512, 64}, {KG_F32, 4, 8, 1024, 64}};
    for (size_t i = 0; i < sizeof pk / sizeof pk[0]; i++) {
        const double d = time_case(ctx, pk[i].dt, pk[i].B, pk[i].H, pk[i].S, pk[i].D, 0, bufs);
        const double h = time_case(ctx, pk[i].dt, pk[i].B, pk[i].H, pk[i].S, pk[i].D, 1, bufs);
        const double m = time_case(ctx, pk[i].dt, pk[i].B, pk[i].H, pk[i].S, pk[i].D, 2, bufs);
        printf("%s [%lld,%lld,%lld,%lld] dense | %.1f | 1.00\n", kg_dtype_name(pk[i].dt), (long long)pk[i].B,
               (long long)pk[i].H, (long long)pk[i].S, (long long)pk[i].D, d);
        printf("%s packed: head dim stride 2 | %.1f | %.2f\n", kg_dtype_name(pk[i].dt), h, h / d);
        printf("%s packed: rows of D+1, data misaligned | %.1f | %.2f\n", kg_dtype_name(pk[i].dt), m, m / d);
    }
    /* padding: D 100 -> 128 and D 8 -> 32, against the padded dim directly */
    const struct {
        kg_dtype dt;
        int64_t B, H, S, D, Dp;
    } pd[] = {{KG_BF16, 4, 16, 2048, 100, 128}, {KG_F16, 4, 4, 1024, 8, 32}};
    for (size_t i = 0; i < sizeof pd / sizeof pd[0]; i++) {
        const double d = time_case(ctx, pd[i].dt, pd[i].B, pd[i].H, pd[i].S, pd[i].Dp, 0, bufs);
        const double p = time_case(ctx, pd[i].dt, pd[i].B, pd[i].H, pd[i].S, pd[i].D, 0, bufs);
        printf("%s [%lld,%lld,%lld,D] D=%lld direct | %.1f | 1.00\n", kg_dtype_name(pd[i].dt), (long long)pd[i].B,
               (long long)pd[i].H, (long long)pd[i].S, (long long)pd[i].Dp, d);
        printf("%s D=%lld zero-padded to %lld | %.1f | %.2f\n", kg_dtype_name(pd[i].dt), (long long)pd[i].D,
               (long long)pd[i].Dp, p, p / d);
    }
    /* f64 */
    const int64_t fB = 1, fH = 8, fS = 1024;
    const int64_t fd[] = {64, 128};
    for (size_t i = 0; i < 2; i++) {
        const double t = time_case(ctx, KG_F64, fB, fH, fS, fd[i], 0, bufs);
        const double flop = 4.0 * fB * fH * fS * fS * fd[i];
        printf("f64 [%lld,%lld,%lld,%lld] | %.1f | %.2f TFLOP/s (FP64)\n", (long long)fB, (long long)fH,
               (long long)fS, (long long)fd[i], t, flop / t * 1e-6);
    }
    for (int i = 0; i < 4; i++)
        kg_free(ctx, bufs[i]);
    kg_close(ctx);
    return 0;
}
