/*
 * bench_attention.c - kg_attention on the cases of issue 5: bf16 and f16,
 * D 64 and 128, Sq = Sk in {1024, 4096, 16384} with B x S = 32768 and 16
 * heads, causal and not; f32 [2,16,4096,128]; the seed's [2,8,128,64] f32
 * causal (latency). TFLOP/s counts 4 B H Sq Sk D, halved when causal.
 *
 * Each case is checked before it is timed: a few rows against a float64 CPU
 * reference. Rows go to $KG_BENCH_CSV for bench/torch_attention.py:
 *   attention,<dtype>,B,H,S,D,causal,us,tflops
 * Set KG_BENCH_FILTER=<substring of "dtype D S causal"> to run a subset.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "kg_attention.h"
#include "kg_test.h"

typedef struct {
    kg_context *ctx;
    kg_tensor q, k, v, out, lse;
    kg_attention_opts opts;
} call_t;

static void run(void *arg)
{
    call_t *c = arg;
    BENCH_CHECK(c->ctx, kg_attention(c->ctx, &c->out, &c->lse, &c->q, &c->k, &c->v, NULL, &c->opts));
}

/* Checks rows of (b, h) = (last, last) and (0, 0) against float64. */
static int check(const call_t *c, const void *hq, const void *hk, const void *hv, int B, int H, int S, int D)
{
    const kg_dtype dt = c->q.dtype;
    const size_t es = kg_dtype_size(dt);
    const int64_t n = (int64_t)B * H * S * D;
    void *ho = malloc(n * es);
    BENCH_CHECK(c->ctx, kg_sync(c->ctx));
    BENCH_CHECK(c->ctx, kg_copy_out(c->ctx, ho, c->out.data, n * es));
    double *s = malloc(sizeof(double) * S), worst = 0;
    const double scale = 1.0 / sqrt((double)D);
    const int rows[4] = {0, 1, S / 2 + 3, S - 1};
    for (int bh = 0; bh < 2; bh++) {
        const int64_t base = bh ? (int64_t)(B * H - 1) * S * D : 0;
        for (int r = 0; r < 4; r++) {
            const int i = rows[r];
            double m = -INFINITY, l = 0;
            const int nk = c->opts.causal ? i + 1 : S;
            for (int j = 0; j < nk; j++) {
                double dot = 0;
                for (int d = 0; d < D; d++)
                    dot += kt_get(hq, dt, base + (int64_t)i * D + d) * kt_get(hk, dt, base + (int64_t)j * D + d);
                s[j] = dot * scale;
                m = s[j] > m ? s[j] : m;
            }
            for (int j = 0; j < nk; j++)
                l += (s[j] = exp(s[j] - m));
            for (int d = 0; d < D; d++) {
                double o = 0;
                for (int j = 0; j < nk; j++)
                    o += s[j] * kt_get(hv, dt, base + (int64_t)j * D + d);
                const double err = fabs(o / l - kt_get(ho, dt, base + (int64_t)i * D + d));
                worst = err > worst ? err : worst;
            }
        }
    }
    free(s);
    free(ho);
    const double tol = dt == KG_F32 ? 1e-5 : dt == KG_F16 ? 2e-3 : 1.6e-2;
    if (!(worst <= tol)) {
        fprintf(stderr, "%s B=%d H=%d S=%d D=%d causal=%d: max error %.3g over checked rows > %.3g\n",
                kg_dtype_name(dt), B, H, S, D, c->opts.causal, worst, tol);
        return 0;
    }
    return 1;
}

int main(void)
{
    kg_context *ctx = bench_open("bench_attention");
    FILE *csv = bench_csv_open();
    const char *filter = getenv("KG_BENCH_FILTER");
    struct {
        kg_dtype dt;
        int B, H, S, D, causal;
    } cases[64];
    int nc = 0;
    const kg_dtype tc[2] = {KG_BF16, KG_F16};
    for (int t = 0; t < 2; t++)
        for (int D = 64; D <= 128; D += 64)
            for (int S = 1024; S <= 16384; S *= 4)
                for (int causal = 0; causal < 2; causal++)
                    cases[nc].dt = tc[t], cases[nc].B = 32768 / S, cases[nc].H = 16, cases[nc].S = S, cases[nc].D = D,
                    cases[nc++].causal = causal;
    for (int causal = 0; causal < 2; causal++)
        cases[nc].dt = KG_F32, cases[nc].B = 2, cases[nc].H = 16, cases[nc].S = 4096, cases[nc].D = 128,
        cases[nc++].causal = causal;
    cases[nc].dt = KG_F32, cases[nc].B = 2, cases[nc].H = 8, cases[nc].S = 128, cases[nc].D = 64,
    cases[nc++].causal = 1;

    printf("%-5s %3s %3s %6s %4s %6s %10s %8s\n", "dtype", "B", "H", "S", "D", "causal", "us", "TFLOP/s");
    uint64_t rng = 12345;
    int ok = 1;
    for (int ci = 0; ci < nc; ci++) {
        const kg_dtype dt = cases[ci].dt;
        const int B = cases[ci].B, H = cases[ci].H, S = cases[ci].S, D = cases[ci].D;
        char name[64];
        snprintf(name, sizeof name, "%s D%d S%d causal%d", kg_dtype_name(dt), D, S, cases[ci].causal);
        if (filter && !strstr(name, filter))
            continue;
        const size_t es = kg_dtype_size(dt);
        const int64_t n = (int64_t)B * H * S * D;
        void *h[3], *d[3], *dout, *dl;
        /* inputs: chunks of a pool of uniform(-1, 1) values at random
           offsets (rounding every element through kt_set is slow) */
        enum { POOL = 1 << 20, CHUNK = 4096 };
        unsigned char *pool = malloc((size_t)(POOL + CHUNK) * es);
        for (int64_t e = 0; e < POOL + CHUNK; e++)
            kt_set(pool, dt, e, kt_uniform(&rng, -1, 1));
        for (int i = 0; i < 3; i++) {
            h[i] = malloc(n * es);
            for (int64_t e = 0; e < n; e += CHUNK) {
                const int64_t len = n - e < CHUNK ? n - e : CHUNK;
                memcpy((char *)h[i] + e * es, pool + (kt_next(&rng) % POOL) * es, (size_t)len * es);
            }
            BENCH_CHECK(ctx, kg_malloc(ctx, &d[i], n * es));
            BENCH_CHECK(ctx, kg_copy_in(ctx, d[i], h[i], n * es));
        }
        free(pool);
        BENCH_CHECK(ctx, kg_malloc(ctx, &dout, n * es));
        BENCH_CHECK(ctx, kg_malloc(ctx, &dl, (size_t)B * H * S * 4));
        const int64_t shape[4] = {B, H, S, D};
        call_t c = {ctx,
                    kg_tensor_contiguous(d[0], dt, 4, shape),
                    kg_tensor_contiguous(d[1], dt, 4, shape),
                    kg_tensor_contiguous(d[2], dt, 4, shape),
                    kg_tensor_contiguous(dout, dt, 4, shape),
                    kg_tensor_contiguous(dl, KG_F32, 3, shape),
                    {0.f, cases[ci].causal}};
        run(&c);
        if (!check(&c, h[0], h[1], h[2], B, H, S, D))
            ok = 0;
        const double flop = 4.0 * B * H * (double)S * S * D / (cases[ci].causal ? 2 : 1);
        const int inner = flop > 1e11 ? 5 : flop > 1e9 ? 20 : 200;
        const double us = bench_time_us(ctx, run, &c, inner, 7);
        const double tf = flop / (us * 1e6);
        printf("%-5s %3d %3d %6d %4d %6d %10.1f %8.1f\n", kg_dtype_name(dt), B, H, S, D, cases[ci].causal, us, tf);
        fflush(stdout);
        if (csv)
            fprintf(csv, "attention,%s,%d,%d,%d,%d,%d,%.3f,%.2f\n", kg_dtype_name(dt), B, H, S, D, cases[ci].causal, us,
                    tf);
        bench_record(ctx, &(bench_case){.family = "attention",
                                        .name = cases[ci].causal ? "attention causal" : "attention",
                                        .dtype = kg_dtype_name(dt),
                                        .ndim = 4,
                                        .shape = {B, H, S, D},
                                        .time_us = us,
                                        .tflops = tf,
                                        .note = "shape is [B, H, S, D]; TFLOP/s = 4 B H S^2 D, halved if causal"});
        for (int i = 0; i < 3; i++) {
            free(h[i]);
            kg_free(ctx, d[i]);
        }
        kg_free(ctx, dout);
        kg_free(ctx, dl);
    }
    if (csv)
        fclose(csv);
    kg_close(ctx);
    return ok ? 0 : 1;
}
