/*
 * bench_attention_bwd.c - kg_attention_backward on the cases of issue 15:
 * bf16 and f16, D 64 and 128, Sq = Sk in {1024, 4096, 16384} with
 * B x S = 32768 and 16 heads, causal and not; f32 D 64 and 128, S 1k, 4k
 * (B x S = 8192, 16 heads) and 16k (B 1, 8 heads); bf16
 * D 32, 96 and 256 at [8,16,4096].
 * TFLOP/s counts 2.5 x the forward's 4 B H Sq Sk D, halved when causal.
 *
 * out and lse come from kg_attention. Each case is checked before it is
 * timed: dq, dk and dv rows of (b, h) = (0, 0) and (last, last) against
 * float64 on the CPU. Rows go to $KG_BENCH_CSV for
 * bench/torch_attention_bwd.py:
 *   attention_bwd,<dtype>,B,H,S,D,causal,us,tflops
 * KG_BENCH_SWEEP=<n> runs n shapes drawn from KG_BENCH_SEED instead (odd
 * lengths, GQA, every head dim; see main), KG_BENCH_SHAPES=
 * <dtype>/B/Hq/Hkv/S/D/causal[,...] the shapes given, both as rows
 *   attention_bwd_sweep,<dtype>,B,Hq,Hkv,S,D,causal,us,tflops,tune
 * Set KG_BENCH_FILTER=<substring of "dtype D S causal">[,<another>...] to
 * run a subset (^<text>: names that start with it). KG_ATTNB_TUNE (a library tuning hook: a kvq tuning index, or
 * "sep" for the separate dq kernel) is written as a tenth CSV column, followed by
 * "_s<h>x<t>" where KG_ATTNB_SPLIT (the query splits' hook) is set and
 * "_l<n>" where KG_ATTNB_LANES (the dQ lanes' hook) is.
 * KG_BENCH_HOST=1 also prints each case's host time a call (100 calls
 * enqueued back to back, wall clock). KG_BENCH_TUNES=<tune>[,<tune>...]
 * (at most 4; "default": KG_ATTNB_TUNE unset) times each case under every
 * tune given, in turn, KG_BENCH_ROUNDS times (1 to 5, default 2: a, b, a,
 * b: one process, the same inputs), each checked on its first run; a row
 * for each timing. KG_BENCH_REPS=<n> (1 to 15, default 5): repeats of
 * which each timing is the median.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attention_bwd_plan.h"
#include "bench_common.h"
#include "kg_attention_bwd.h"
#include "kg_test.h"

typedef struct {
    kg_context *ctx;
    kg_tensor dq, dk, dv, dout, q, k, v, out, lse;
    kg_attention_opts opts;
} call_t;

/* 1 when name contains one of the comma-separated parts of filter (a part
   that starts with '^': when name starts with the rest). */
static int matches(const char *filter, const char *name)
{
    char part[64];
    for (const char *f = filter; *f;) {
        size_t n = strcspn(f, ",");
        if (n > 0 && n < sizeof part) {
            memcpy(part, f, n);
            part[n] = 0;
            if (part[0] == '^' ? strncmp(name, part + 1, n - 1) == 0 : strstr(name, part) != NULL)
                return 1;
        }
        f += n + (f[n] == ',');
    }
    return 0;
}

static void run(void *arg)
{
    call_t *c = arg;
    BENCH_CHECK(c->ctx, kg_attention_backward(c->ctx, &c->dq, &c->dk, &c->dv, &c->dout, &c->q, &c->k, &c->v, &c->out,
                                              &c->lse, NULL, &c->opts));
}

/* One (b, h) slice of a device tensor as doubles (H heads). */
static double *slice(kg_context *ctx, const kg_tensor *t, int64_t bh, int S, int D)
{
    const size_t es = kg_dtype_size(t->dtype);
    const int64_t n = (int64_t)S * D;
    void *h = malloc(n * es);
    BENCH_CHECK(ctx, kg_copy_out(ctx, h, (const char *)t->data + bh * n * es, n * es));
    double *x = malloc(sizeof(double) * n);
    for (int64_t i = 0; i < n; i++)
        x[i] = kt_get(h, t->dtype, i);
    free(h);
    return x;
}

/* Rows 0, 1, S/2 + 3, S - 1 of dq (the first query head of the group), dk
   and dv (summed over the group's Hq / Hkv query heads) in two (b, kv head)
   slices, the first and the last, against float64 (from the inputs, out and
   lse the GPU used); the error relative to the largest reference value of
   the checked rows. */
static int check(const call_t *c, int B, int Hq, int Hkv, int S, int D)
{
    const kg_dtype dt = c->q.dtype;
    BENCH_CHECK(c->ctx, kg_sync(c->ctx));
    const double scale = 1.0 / sqrt((double)D);
    const int rows[4] = {0, 1, S / 2 + 3 < S ? S / 2 + 3 : S - 1, S - 1}, G = Hq / Hkv;
    double worst = 0, big = 0;
    float *lse = malloc(sizeof(float) * S);
    double *delta = malloc(sizeof(double) * S);
    for (int sl = 0; sl < 2; sl++) {
        const int64_t bk = sl ? (int64_t)B * Hkv - 1 : 0, b = bk / Hkv, hk = bk % Hkv;
        double *k = slice(c->ctx, &c->k, bk, S, D), *v = slice(c->ctx, &c->v, bk, S, D),
               *gk = slice(c->ctx, &c->dk, bk, S, D), *gv = slice(c->ctx, &c->dv, bk, S, D);
        double rk[4][256], rv[4][256], rq[4][256];
        for (int r = 0; r < 4; r++)
            for (int d = 0; d < D; d++)
                rk[r][d] = rv[r][d] = rq[r][d] = 0;
        double *gq = NULL;
        for (int g = 0; g < G; g++) {
            const int64_t bh = b * Hq + hk * G + g;
            double *q = slice(c->ctx, &c->q, bh, S, D), *o = slice(c->ctx, &c->out, bh, S, D),
                   *gd = slice(c->ctx, &c->dout, bh, S, D);
            if (g == 0)
                gq = slice(c->ctx, &c->dq, bh, S, D);
            BENCH_CHECK(c->ctx, kg_copy_out(c->ctx, lse, (const float *)c->lse.data + bh * S, sizeof(float) * S));
            for (int i = 0; i < S; i++) {
                delta[i] = 0;
                for (int d = 0; d < D; d++)
                    delta[i] += gd[(int64_t)i * D + d] * o[(int64_t)i * D + d];
            }
            for (int r = 0; r < 4; r++) {
                const int x = rows[r];
                for (int y = 0; y < S; y++) {
                    /* (query x, key y) for dq; (query y, key x) for dk, dv */
                    for (int pass = g == 0 ? 0 : 1; pass < 2; pass++) {
                        const int i = pass ? y : x, j = pass ? x : y;
                        if (c->opts.causal && j > i)
                            continue;
                        double s = 0, dp = 0;
                        for (int d = 0; d < D; d++) {
                            s += q[(int64_t)i * D + d] * k[(int64_t)j * D + d];
                            dp += gd[(int64_t)i * D + d] * v[(int64_t)j * D + d];
                        }
                        const double p = exp(s * scale - lse[i]), ds = p * (dp - delta[i]);
                        for (int d = 0; d < D; d++) {
                            if (pass == 0) {
                                rq[r][d] += scale * ds * k[(int64_t)j * D + d];
                            } else {
                                rk[r][d] += scale * ds * q[(int64_t)i * D + d];
                                rv[r][d] += p * gd[(int64_t)i * D + d];
                            }
                        }
                    }
                }
            }
            free(q), free(o), free(gd);
        }
        for (int r = 0; r < 4; r++) {
            const int x = rows[r];
            for (int d = 0; d < D; d++) {
                const double want[3] = {rq[r][d], rk[r][d], rv[r][d]};
                const double got[3] = {gq[(int64_t)x * D + d], gk[(int64_t)x * D + d], gv[(int64_t)x * D + d]};
                for (int e = 0; e < 3; e++) {
                    big = fabs(want[e]) > big ? fabs(want[e]) : big;
                    const double err = fabs(got[e] - want[e]);
                    worst = err > worst || isnan(err) ? err : worst;
                }
            }
        }
        free(k), free(v), free(gk), free(gv), free(gq);
    }
    free(lse);
    free(delta);
    const double rel = worst / (big > 0 ? big : 1), tol = dt == KG_F32 ? 1e-4 : dt == KG_F16 ? 5e-3 : 3e-2;
    if (!(rel <= tol)) {
        fprintf(stderr, "%s B=%d Hq=%d Hkv=%d S=%d D=%d causal=%d: max error %.3g of max |grad| %.3g (%.3g) > %.3g\n",
                kg_dtype_name(dt), B, Hq, Hkv, S, D, c->opts.causal, worst, big, rel, tol);
        return 0;
    }
    return 1;
}

int main(void)
{
    kg_context *ctx = bench_open("bench_attention_bwd");
    FILE *csv = bench_csv_open();
    const char *filter = getenv("KG_BENCH_FILTER");
    /* the CSV's tune column: KG_ATTNB_TUNE, then "_s" and KG_ATTNB_SPLIT, "_l" and KG_ATTNB_LANES where set */
    char tune[96];
    snprintf(tune, sizeof tune, "%s%s%s%s%s", getenv("KG_ATTNB_TUNE") ? getenv("KG_ATTNB_TUNE") : "default",
             getenv("KG_ATTNB_SPLIT") ? "_s" : "", getenv("KG_ATTNB_SPLIT") ? getenv("KG_ATTNB_SPLIT") : "",
             getenv("KG_ATTNB_LANES") ? "_l" : "", getenv("KG_ATTNB_LANES") ? getenv("KG_ATTNB_LANES") : "");
    const char *reps_env = getenv("KG_BENCH_REPS");
    const int reps = reps_env && atoi(reps_env) >= 1 && atoi(reps_env) <= 15 ? atoi(reps_env) : 5;
    const char *rounds_env = getenv("KG_BENCH_ROUNDS");
    const int rounds = rounds_env && atoi(rounds_env) >= 1 && atoi(rounds_env) <= 5 ? atoi(rounds_env) : 2;
    /* KG_BENCH_TUNES: the tunes timed in turn (none: the environment's) */
    char tunes[4][16];
    int ntunes = 0;
    for (const char *at = getenv("KG_BENCH_TUNES"); at && *at && ntunes < 4;) {
        const size_t n = strcspn(at, ",");
        snprintf(tunes[ntunes++], sizeof tunes[0], "%.*s", (int)(n < 15 ? n : 15), at);
        at += n + (at[n] == ',');
    }
    struct {
        kg_dtype dt;
        int B, H, S, D, causal, Hkv;
    } cases[64];
    int nc = 0;
    const char *sweep_env = getenv("KG_BENCH_SWEEP"), *shapes = getenv("KG_BENCH_SHAPES");
    int sweep = sweep_env ? atoi(sweep_env) : 0;
    /* KG_BENCH_SHAPES=<dtype>/B/Hq/Hkv/S/D/causal[,...]: those shapes
       instead, as sweep rows (attention_bwd_sweep) */
    for (const char *at = shapes; at && *at && nc < 64;) {
        char dn[8];
        int v[6], used = 0;
        kg_dtype dt = KG_F32;
        if (sscanf(at, "%7[^/]/%d/%d/%d/%d/%d/%d%n", dn, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &used) != 7)
            break;
        dt = strcmp(dn, "bf16") == 0 ? KG_BF16 : strcmp(dn, "f16") == 0 ? KG_F16 : KG_F32;
        cases[nc].dt = dt, cases[nc].B = v[0], cases[nc].H = v[1], cases[nc].Hkv = v[2], cases[nc].S = v[3];
        cases[nc].D = v[4], cases[nc++].causal = v[5];
        at += used;
        if (*at == ',')
            at++;
        sweep = -1; /* rows as the sweep's, no drawn shapes */
    }
    const kg_dtype tc[2] = {KG_BF16, KG_F16};
    for (int t = 0; t < 2 && !sweep; t++)
        for (int D = 64; D <= 128; D += 64)
            for (int S = 1024; S <= 16384; S *= 4)
                for (int causal = 0; causal < 2; causal++)
                    cases[nc].dt = tc[t], cases[nc].B = 32768 / S, cases[nc].H = 16, cases[nc].S = S, cases[nc].D = D,
                    cases[nc++].causal = causal;
    /* f32: B S = 8192 and 16 heads (S 16k: B 1, 8 heads) */
    for (int D = 64; D <= 128 && !sweep; D += 64)
        for (int S = 1024; S <= 16384; S *= 4)
            for (int causal = 0; causal < 2; causal++)
                cases[nc].dt = KG_F32, cases[nc].B = S < 16384 ? 8192 / S : 1, cases[nc].H = S < 16384 ? 16 : 8,
                cases[nc].S = S, cases[nc].D = D, cases[nc++].causal = causal;
    /* the other generated head dims (no target of issue 15; the whole space) */
    const int other[3] = {32, 96, 256};
    for (int i = 0; i < 3 && !sweep; i++)
        for (int causal = 0; causal < 2; causal++)
            cases[nc].dt = KG_BF16, cases[nc].B = 8, cases[nc].H = 16, cases[nc].S = 4096, cases[nc].D = other[i],
            cases[nc++].causal = causal;
    for (int i = 0; i < nc && sweep == 0; i++)
        cases[i].Hkv = cases[i].H;
    /* KG_BENCH_SWEEP=<n>: instead, n shapes drawn from KG_BENCH_SEED (1 when
       unset): dtype (bf16 2 : f16 1 : f32 2), D (64 and 128 three times as
       often as 32, 96, 256), Sq = Sk an odd number times a power of two in
       [100, 12000], causal or not, Hkv in {1, 2, 3, 4, 6, 8}, GQA groups
       {1, 1, 2, 3, 4, 8}, B (1..64) for ~4e11 FLOPs a call (f32 5e10),
       redrawn where one call exceeds 1.2e12 (f32 1.5e11): a few ms each.
       CSV family attention_bwd_sweep. */
    if (sweep > 0) {
        uint64_t srng = getenv("KG_BENCH_SEED") ? strtoull(getenv("KG_BENCH_SEED"), NULL, 10) : 1;
        const kg_dtype dts[5] = {KG_BF16, KG_BF16, KG_F16, KG_F32, KG_F32};
        const int dims[9] = {64, 64, 64, 128, 128, 128, 32, 96, 256}, hkvs[6] = {1, 2, 3, 4, 6, 8},
                  groups[6] = {1, 1, 2, 3, 4, 8};
        while (nc < sweep && nc < 64) {
            const kg_dtype dt = dts[kt_next(&srng) % 5];
            const int D = dims[kt_next(&srng) % 9], causal = (int)(kt_next(&srng) % 2);
            const int j = (int)(kt_next(&srng) % 7), o = 2 * (int)(kt_next(&srng) % ((12000 >> j) / 2)) + 1;
            const int S = o << j, Hkv = hkvs[kt_next(&srng) % 6], Hq = Hkv * groups[kt_next(&srng) % 6];
            const double one = 2.5 * 4.0 * Hq * (double)S * S * D / (causal ? 2 : 1);
            int B = (int)((dt == KG_F32 ? 5e10 : 4e11) / one + 0.5);
            B = B < 1 ? 1 : B > 64 ? 64 : B;
            if (S < 100 || B * one > (dt == KG_F32 ? 1.5e11 : 1.2e12))
                continue;
            cases[nc].dt = dt, cases[nc].B = B, cases[nc].H = Hq, cases[nc].Hkv = Hkv, cases[nc].S = S;
            cases[nc].D = D, cases[nc++].causal = causal;
        }
    }

    printf("attention backward\n%-5s %3s %3s %6s %4s %6s %10s %8s\n", "dtype", "B", "H", "S", "D", "causal", "us",
           "TFLOP/s");
    uint64_t rng = 12345;
    int ok = 1;
    double worst_tf = INFINITY;
    char worst_name[64] = "";
    for (int ci = 0; ci < nc; ci++) {
        const kg_dtype dt = cases[ci].dt;
        const int B = cases[ci].B, H = cases[ci].H, S = cases[ci].S, D = cases[ci].D, Hkv = cases[ci].Hkv;
        char name[64];
        if (Hkv != H)
            snprintf(name, sizeof name, "%s D%d S%d causal%d GQA %d:%d", kg_dtype_name(dt), D, S, cases[ci].causal,
                     H, Hkv);
        else
            snprintf(name, sizeof name, "%s D%d S%d causal%d", kg_dtype_name(dt), D, S, cases[ci].causal);
        if (filter && !matches(filter, name))
            continue;
        const size_t es = kg_dtype_size(dt);
        const int64_t n = (int64_t)B * H * S * D, nkv = (int64_t)B * Hkv * S * D;
        /* q, k, v, dout: chunks of a pool of uniform(-1, 1) values */
        enum { POOL = 1 << 20, CHUNK = 4096 };
        unsigned char *pool = malloc((size_t)(POOL + CHUNK) * es), *h = malloc(n * es);
        for (int64_t e = 0; e < POOL + CHUNK; e++)
            kt_set(pool, dt, e, kt_uniform(&rng, -1, 1));
        void *d[8];
        /* q, k, v, dout, out, dq, dk, dv; k, v, dk, dv have Hkv heads */
        for (int i = 0; i < 8; i++) {
            const int64_t ni = i == 1 || i == 2 || i == 6 || i == 7 ? nkv : n;
            BENCH_CHECK(ctx, kg_malloc(ctx, &d[i], ni * es));
            if (i < 4) {
                for (int64_t e = 0; e < ni; e += CHUNK) {
                    const int64_t len = ni - e < CHUNK ? ni - e : CHUNK;
                    memcpy(h + e * es, pool + (kt_next(&rng) % POOL) * es, (size_t)len * es);
                }
                BENCH_CHECK(ctx, kg_copy_in(ctx, d[i], h, ni * es));
            }
        }
        free(pool);
        free(h);
        void *dl;
        BENCH_CHECK(ctx, kg_malloc(ctx, &dl, (size_t)B * H * S * 4));
        const int64_t shape[4] = {B, H, S, D}, kshape[4] = {B, Hkv, S, D};
        call_t c = {ctx,
                    kg_tensor_contiguous(d[5], dt, 4, shape),
                    kg_tensor_contiguous(d[6], dt, 4, kshape),
                    kg_tensor_contiguous(d[7], dt, 4, kshape),
                    kg_tensor_contiguous(d[3], dt, 4, shape),
                    kg_tensor_contiguous(d[0], dt, 4, shape),
                    kg_tensor_contiguous(d[1], dt, 4, kshape),
                    kg_tensor_contiguous(d[2], dt, 4, kshape),
                    kg_tensor_contiguous(d[4], dt, 4, shape),
                    kg_tensor_contiguous(dl, KG_F32, 3, shape),
                    {0.f, cases[ci].causal}};
        BENCH_CHECK(ctx, kg_attention(ctx, &c.out, &c.lse, &c.q, &c.k, &c.v, NULL, &c.opts));
        for (int tr = 0; tr < (ntunes ? rounds * ntunes : 1); tr++) {
            if (ntunes) {
                const char *tn = tunes[tr % ntunes];
                if (strcmp(tn, "default") == 0)
                    unsetenv("KG_ATTNB_TUNE");
                else
                    setenv("KG_ATTNB_TUNE", tn, 1);
                kgi_attnb_hooks_reload();
                snprintf(tune, sizeof tune, "%s", tn);
            }
            run(&c);
            if (tr < (ntunes ? ntunes : 1) && !check(&c, B, H, Hkv, S, D))
                ok = 0;
            const double flop = 2.5 * 4.0 * B * H * (double)S * S * D / (cases[ci].causal ? 2 : 1);
            const int inner = flop > 1e12 ? 3 : flop > 1e10 ? 10 : 100;
            const double us = bench_time_us(ctx, run, &c, inner, reps);
            const double tf = flop / (us * 1e6);
            char hkv[24] = "";
            if (Hkv != H)
                snprintf(hkv, sizeof hkv, " Hkv %d", Hkv);
            printf("%-5s %3d %3d %6d %4d %6d %10.1f %8.1f%s%s%s\n", kg_dtype_name(dt), B, H, S, D, cases[ci].causal, us,
                   tf, hkv, ntunes ? " " : "", ntunes ? tune : "");
            fflush(stdout);
            if (dt != KG_F32 && tf < worst_tf) {
                worst_tf = tf;
                snprintf(worst_name, sizeof worst_name, "%s", name);
            }
            if (csv && sweep)
                fprintf(csv, "attention_bwd_sweep,%s,%d,%d,%d,%d,%d,%d,%.3f,%.2f,%s\n", kg_dtype_name(dt), B, H, Hkv, S,
                        D, cases[ci].causal, us, tf, tune);
            else if (csv)
                fprintf(csv, "attention_bwd,%s,%d,%d,%d,%d,%d,%.3f,%.2f,%s\n", kg_dtype_name(dt), B, H, S, D,
                        cases[ci].causal, us, tf, tune);
            if (csv)
                fflush(csv); /* rows survive a run cut short */
            bench_record(ctx,
                         &(bench_case){.family = "attention_bwd",
                                       .name = cases[ci].causal ? "attention backward causal" : "attention backward",
                                       .dtype = kg_dtype_name(dt),
                                       .ndim = 4,
                                       .shape = {B, H, S, D},
                                       .time_us = us,
                                       .tflops = tf,
                                       .note = "shape is [B, H, S, D]; TFLOP/s = 2.5 x 4 B H S^2 D, halved if causal"});
            if (getenv("KG_BENCH_HOST")) {
                /* host time a call: 100 calls enqueued back to back (2-4 launches
                   each, within the queue's depth), wall clock around the calls */
                BENCH_CHECK(ctx, kg_sync(ctx));
                struct timespec t0, t1;
                clock_gettime(CLOCK_MONOTONIC, &t0);
                for (int i = 0; i < 100; i++)
                    run(&c);
                clock_gettime(CLOCK_MONOTONIC, &t1);
                BENCH_CHECK(ctx, kg_sync(ctx));
                printf("host time a call: %s %.2f us\n", name,
                       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 100 / 1e3);
            }
        }
        for (int i = 0; i < 8; i++)
            kg_free(ctx, d[i]);
        kg_free(ctx, dl);
    }
    if (worst_name[0])
        printf("worst f16/bf16 case: %s, %.1f TFLOP/s\n", worst_name, worst_tf);
    if (csv)
        fclose(csv);
    kg_close(ctx);
    return ok ? 0 : 1;
}
