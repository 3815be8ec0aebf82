/*
 * bench_common.c - timing helpers for the benchmark programs.
 */
#include <string.h>
#include <time.h>

#include "bench_common.h"

static double last_copy_gbps;

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double bench_time_us(kg_context *ctx, bench_fn fn, void *arg, int inner, int reps)
{
    cudaStream_t s = (cudaStream_t)kg_get_stream(ctx);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int i = 0; i < inner; i++) /* warm-up */
        fn(arg);
    BENCH_CHECK(ctx, kg_sync(ctx));
    double *t = malloc(sizeof *t * (size_t)reps);
    for (int r = 0; r < reps; r++) {
        cudaEventRecord(e0, s);
        for (int i = 0; i < inner; i++)
            fn(arg);
        cudaEventRecord(e1, s);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        t[r] = 1000.0 * ms / inner;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    const double med = t[reps / 2];
    free(t);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return med;
}

typedef struct {
    void *dst, *src;
    size_t bytes;
    cudaStream_t s;
} copy_arg;

static void do_copy(void *p)
{
    copy_arg *a = p;
    cudaMemcpyAsync(a->dst, a->src, a->bytes, cudaMemcpyDeviceToDevice, a->s);
}

double bench_copy_gbps(kg_context *ctx, size_t bytes)
{
    copy_arg a = {NULL, NULL, bytes, (cudaStream_t)kg_get_stream(ctx)};
    BENCH_CHECK(ctx, kg_malloc(ctx, &a.dst, bytes));
    BENCH_CHECK(ctx, kg_malloc(ctx, &a.src, bytes));
    BENCH_CHECK(ctx, kg_memset(ctx, a.src, 0x3c, bytes));
    const double us = bench_time_us(ctx, do_copy, &a, 5, 9);
    kg_free(ctx, a.dst);
    kg_free(ctx, a.src);
    const double gbps = 2.0 * (double)bytes / (us * 1e3);
    last_copy_gbps = gbps;
    bench_record(ctx, &(bench_case){.family = "limit",
                                    .name = "copy",
                                    .dtype = "u8",
                                    .ndim = 1,
                                    .shape = {(int64_t)bytes},
                                    .time_us = us,
                                    .gbps = gbps,
                                    .pct_of_limit = 100,
                                    .limit = "device-to-device cudaMemcpyAsync, bytes read + written"});
    return gbps;
}

FILE *bench_csv_open(void)
{
    const char *path = getenv("KG_BENCH_CSV");
    return path ? fopen(path, "a") : NULL;
}

kg_context *bench_open(const char *prog)
{
    kg_context *ctx;
    kg_status st = kg_open(&ctx, 0);
    if (st != KG_OK) {
        printf("%s: no GPU work ran: %s (%s)\n", prog, kg_errmsg(ctx), kg_status_name(st));
        kg_close(ctx);
        exit(0);
    }
    return ctx;
}

/* s as a JSON string (quotes and backslashes escaped, control characters dropped). */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, const char *key, double v)
{
    if (v > 0)
        fprintf(f, ", \"%s\": %.6g", key, v);
    else
        fprintf(f, ", \"%s\": null", key);
}

void bench_record(kg_context *ctx, const bench_case *c)
{
    const char *path = getenv("KG_BENCH_JSON");
    if (!path)
        return;
    FILE *f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "bench: cannot append to %s\n", path);
        exit(1);
    }
    char gpu[128] = "?";
    int major = 0, minor = 0, sms = 0;
    kg_device_info(ctx, gpu, sizeof gpu, &major, &minor, &sms);
    char date[32];
    const time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    double pct = c->pct_of_limit;
    char limit[96];
    const char *limit_text = c->limit;
    if (!limit_text && c->gbps > 0 && last_copy_gbps > 0) {
        snprintf(limit, sizeof limit, "copy %.0f GB/s", last_copy_gbps);
        limit_text = limit;
        pct = 100.0 * c->gbps / last_copy_gbps;
    }
    fputs("{\"family\": ", f);
    json_str(f, c->family ? c->family : "?");
    fputs(", \"case\": ", f);
    json_str(f, c->name ? c->name : "?");
    fputs(", \"dtype\": ", f);
    json_str(f, c->dtype ? c->dtype : "?");
    fputs(", \"shape\": [", f);
    for (int d = 0; d < c->ndim && d < 8; d++)
        fprintf(f, d ? ", %lld" : "%lld", (long long)c->shape[d]);
    fputc(']', f);
    json_num(f, "time_us", c->time_us);
    json_num(f, "gbps", c->gbps);
    json_num(f, "tflops", c->tflops);
    json_num(f, "pct_of_limit", pct);
    fputs(", \"limit\": ", f);
    if (limit_text)
        json_str(f, limit_text);
    else
        fputs("null", f);
    fputs(", \"note\": ", f);
    if (c->note)
        json_str(f, c->note);
    else
        fputs("null", f);
    fputs(", \"gpu\": ", f);
    json_str(f, gpu);
    fprintf(f, ", \"sm\": \"sm_%d%d\", \"date\": \"%s\", \"torch\": {}}\n", major, minor, date);
    fclose(f);
}
