/*
 * bench_coldstart.c - the cost of starting: after the CUDA context exists,
 * how long kg_open and the first op of a module take in a fresh process
 * (the first op loads its module: the driver inflates the compressed fatbin
 * and loads the cubin for this GPU), against the same op once warm.
 * Target (issue 11): kg_open + the first op under 10 ms.
 *
 * Each figure is one event in this process (a cold start happens once), on
 * the host's monotonic clock, each first op followed by kg_sync.
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "bench_common.h"
#include "kgen.h"

static double ms_since(double t) { return (bench_now() - t) * 1e3; }

int main(void)
{
    /* the CUDA context first: its creation is not kgen's */
    if (cudaFree(0) != cudaSuccess) {
        printf("bench_coldstart: no GPU work ran: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 0;
    }
    enum { N = 4096 };
    float *x, *y, *o, *s;
    if (cudaMalloc((void **)&x, N * 4) != cudaSuccess || cudaMalloc((void **)&y, N * 4) != cudaSuccess ||
        cudaMalloc((void **)&o, N * 4) != cudaSuccess || cudaMalloc((void **)&s, 4) != cudaSuccess ||
        cudaMemset(x, 0, N * 4) != cudaSuccess || cudaMemset(y, 0, N * 4) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess) {
        printf("bench_coldstart: no GPU work ran: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 0;
    }

    double t = bench_now();
    kg_context *ctx;
    kg_status st = kg_open(&ctx, 0);
    const double open_ms = ms_since(t);
    if (st != KG_OK) {
        printf("bench_coldstart: no GPU work ran: %s\n", kg_errmsg(ctx));
        kg_close(ctx);
        return 0;
    }
    kg_tensor tx = kg_tensor_contiguous(x, KG_F32, 1, (int64_t[]){N});
    kg_tensor ty = kg_tensor_contiguous(y, KG_F32, 1, (int64_t[]){N});
    kg_tensor to = kg_tensor_contiguous(o, KG_F32, 1, (int64_t[]){N});
    kg_tensor ts = kg_tensor_contiguous(s, KG_F32, 0, NULL);

    t = bench_now();
    BENCH_CHECK(ctx, kg_add(ctx, &to, &tx, &ty));
    BENCH_CHECK(ctx, kg_sync(ctx));
    const double first_add_ms = ms_since(t);
    t = bench_now();
    BENCH_CHECK(ctx, kg_add(ctx, &to, &tx, &ty));
    BENCH_CHECK(ctx, kg_sync(ctx));
    const double warm_add_ms = ms_since(t);
    t = bench_now();
    BENCH_CHECK(ctx, kg_sum(ctx, &ts, &tx, NULL, 0, 0));
    BENCH_CHECK(ctx, kg_sync(ctx));
    const double first_sum_ms = ms_since(t);

    const double total = open_ms + first_add_ms, total_sum = open_ms + first_sum_ms;
    printf("bench_coldstart: kg_open %.3f ms; first kg_add (loads module ew_f32) %.3f ms, warm %.3f ms; first kg_sum "
           "(loads red_f32) %.3f ms; kg_open + first op: kg_add %.3f ms (target < 10 ms: %s), kg_sum %.3f ms (%s)\n",
           open_ms, first_add_ms, warm_add_ms, first_sum_ms, total, total < 10.0 ? "met" : "MISSED", total_sum,
           total_sum < 10.0 ? "met" : "MISSED");
    bench_case c;
    memset(&c, 0, sizeof c);
    c.family = "host";
    c.name = "cold start: kg_open + first kg_add";
    c.dtype = "f32";
    c.ndim = 1;
    c.shape[0] = N;
    c.time_us = total * 1e3;
    c.note = "after CUDA context creation; one event in a fresh process; target < 10 ms";
    bench_record(ctx, &c);
    c.name = "cold start: kg_open + first kg_sum (second module)";
    c.time_us = total_sum * 1e3;
    bench_record(ctx, &c);
    kg_close(ctx);
    cudaFree(x);
    cudaFree(y);
    cudaFree(o);
    cudaFree(s);
    return 0;
}
