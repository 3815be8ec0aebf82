/*
 * bench_common.c - timing helpers for the benchmark programs.
 */
#include <time.h>

#include "bench_common.h"

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
    return 2.0 * (double)bytes / (us * 1e3);
}

FILE *bench_csv_open(void)
{
    const char *path = getenv("KG_BENCH_CSV");
    return path ? fopen(path, "a") : NULL;
}
