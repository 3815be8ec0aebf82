/*
 * bench_coldstart.c - the cost of starting: after the CUDA context exists,
 * how long kg_open and the first op of a module take in a fresh process
 * (the first op loads its module: the driver inflates the compressed fatbin
 * and loads the cubin for this GPU), against the same op once warm.
 * Target (issue 11): kg_open + the first op under 10 ms.
 *
 *   bench_coldstart          kg_open, the first kg_add, the same warm, then
 *                            the first kg_sum (a second module); recorded
 *   bench_coldstart OP       kg_open + OP as the process's first op, for OP
 *                            in add, sum, exp, softmax (one line, the module
 *                            it loaded and that module's size)
 *   bench_coldstart module M kg_open + the first use of module M (an index
 *                            into the bundle's modules) as the process's
 *                            first: one line; exit 3 past the last module
 *   bench_coldstart modules  kg_open, then the first use of every module in
 *                            turn in this one process: a line each, the worst
 *
 * A module's first use is the library's own loading of its first kernel
 * (kgi_kernel: cudaLibraryLoadData of the embedded image, then
 * cudaLibraryGetKernel) and cudaFuncGetAttributes, which loads the kernel
 * into the context as a first launch does; the launch itself (a few
 * microseconds once loaded) is not in it: the kernels' arguments differ.
 *
 * Each figure is one event in this process (a cold start happens once), on
 * the host's monotonic clock, each first op followed by kg_sync.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "bench_common.h"
#include "kg_ops_core.h" /* kg_add */
#include "kg_ops_math.h" /* kg_exp */
#include "kg_norm.h"
#include "kg_reduce.h"
#include "kg_table.h"
#include "internal.h" /* kgi_kernel */

static double ms_since(double t) { return (bench_now() - t) * 1e3; }

enum { N = 4096 };
static kg_tensor tx, ty, to, ts;

static kg_status run_op(kg_context *ctx, const char *op)
{
    if (strcmp(op, "add") == 0)
        return kg_add(ctx, &to, &tx, &ty);
    if (strcmp(op, "sum") == 0)
        return kg_sum(ctx, &ts, &tx, NULL, 0, 0);
    if (strcmp(op, "exp") == 0)
        return kg_exp(ctx, &to, &tx);
    return kg_softmax(ctx, &to, &tx, -1);
}

/* The module holding the kernel an op's first call uses (its dense / rows
   f32 kernel), for the report. */
static const kg_module_image *module_of(const char *op)
{
    const char *k = strcmp(op, "add") == 0   ? "kg_add_f32_dense"
                    : strcmp(op, "sum") == 0 ? "kg_red_sum_f32_rows"
                    : strcmp(op, "exp") == 0 ? "kg_exp_f32_dense"
                                             : "kg_norm_softmax_f32_rows";
    for (int i = 0; i < KG_KERNEL_COUNT; i++)
        if (strcmp(kg_kernels[i].name, k) == 0)
            return &kg_modules[kg_kernels[i].module];
    return NULL;
}

/* kg_open, timed into *open_ms; NULL (with the reason printed) when no
   context opens: the bench then reports that no GPU work ran. */
static kg_context *open_timed(double *open_ms)
{
    const double t = bench_now();
    kg_context *ctx;
    kg_status st = kg_open(&ctx, 0);
    *open_ms = ms_since(t);
    if (st != KG_OK) {
        printf("bench_coldstart: no GPU work ran: %s\n", kg_errmsg(ctx));
        kg_close(ctx);
        return NULL;
    }
    return ctx;
}

/* The first use of module m (see the top): milliseconds, or -1 on an error
   (printed). */
static double first_use_ms(kg_context *ctx, int m, int *kernels)
{
    int k0 = -1;
    *kernels = 0;
    for (int k = 0; k < KG_KERNEL_COUNT; k++)
        if (kg_kernels[k].module == m) {
            if (k0 < 0)
                k0 = k;
            ++*kernels;
        }
    if (k0 < 0)
        return 0;
    const double t = bench_now();
    cudaKernel_t kern;
    struct cudaFuncAttributes fa;
    if (kgi_kernel(ctx, k0, &kern) != KG_OK) {
        printf("module %s: %s\n", kg_modules[m].name, kg_errmsg(ctx));
        return -1;
    }
    const cudaError_t err = cudaFuncGetAttributes(&fa, (const void *)kern);
    const double ms = ms_since(t);
    if (err != cudaSuccess) {
        printf("module %s: cudaFuncGetAttributes: %s\n", kg_modules[m].name, cudaGetErrorString(err));
        return -1;
    }
    return ms;
}

static double mib(int m) { return (double)(kg_modules[m].end - kg_modules[m].begin) / 1048576; }

/* bench_coldstart module M / modules */
static int modules_main(int m)
{
    if (m >= KG_MODULE_COUNT)
        return 3;
    if (cudaFree(0) != cudaSuccess) {
        printf("bench_coldstart: no GPU work ran: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 0;
    }
    int major = 0, minor = 0;
    double open_ms;
    kg_context *ctx = open_timed(&open_ms);
    if (!ctx)
        return 0;
    kg_device_info(ctx, NULL, 0, &major, &minor, NULL);
    int kernels, rc = 0;
    if (m >= 0) { /* one module, the process's first */
        if (kg_modules[m].sm90a && !(major == 9 && minor == 0)) {
            printf("module %-28s sm_90a only: not on this GPU\n", kg_modules[m].name);
        } else {
            const double ms = first_use_ms(ctx, m, &kernels);
            if (ms < 0)
                rc = 1;
            else
                printf("module %-28s %6.2f MiB %4d kernels: kg_open %.3f + first use %.3f = %.3f ms (target < 10 ms: "
                       "%s)\n",
                       kg_modules[m].name, mib(m), kernels, open_ms, ms, open_ms + ms,
                       open_ms + ms < 10.0 ? "met" : "MISSED");
        }
    } else { /* every module in turn */
        double worst = -1;
        int at = -1, over = 0, n = 0;
        for (int i = 0; i < KG_MODULE_COUNT; i++) {
            if (kg_modules[i].sm90a && !(major == 9 && minor == 0))
                continue;
            const double ms = first_use_ms(ctx, i, &kernels);
            if (ms < 0) {
                rc = 1;
                continue;
            }
            printf("module %-28s %6.2f MiB %4d kernels: first use %.3f ms%s\n", kg_modules[i].name, mib(i), kernels,
                   ms, ms >= 10.0 ? " (over 10 ms)" : "");
            n++;
            over += ms >= 10.0;
            if (ms > worst) {
                worst = ms;
                at = i;
            }
        }
        if (at >= 0)
            printf("bench_coldstart modules: kg_open %.3f ms; %d modules in turn, one process: worst %s %.3f ms, %d over "
                   "10 ms\n",
                   open_ms, n, kg_modules[at].name, worst, over);
    }
    kg_close(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    const char *first = argc > 1 ? argv[1] : NULL;
    if (first && strcmp(first, "module") == 0 && argc > 2)
        return modules_main(atoi(argv[2]));
    if (first && strcmp(first, "modules") == 0)
        return modules_main(-1);
    if (first && strcmp(first, "add") && strcmp(first, "sum") && strcmp(first, "exp") && strcmp(first, "softmax")) {
        fprintf(stderr, "usage: bench_coldstart [add|sum|exp|softmax | module M | modules]\n");
        return 2;
    }
    /* the CUDA context first: its creation is not kgen's */
    if (cudaFree(0) != cudaSuccess) {
        printf("bench_coldstart: no GPU work ran: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 0;
    }
    float *x, *y, *o, *s;
    if (cudaMalloc((void **)&x, N * 4) != cudaSuccess || cudaMalloc((void **)&y, N * 4) != cudaSuccess ||
        cudaMalloc((void **)&o, N * 4) != cudaSuccess || cudaMalloc((void **)&s, 4) != cudaSuccess ||
        cudaMemset(x, 0, N * 4) != cudaSuccess || cudaMemset(y, 0, N * 4) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess) {
        printf("bench_coldstart: no GPU work ran: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 0;
    }
    tx = kg_tensor_contiguous(x, KG_F32, 1, (int64_t[]){N});
    ty = kg_tensor_contiguous(y, KG_F32, 1, (int64_t[]){N});
    to = kg_tensor_contiguous(o, KG_F32, 1, (int64_t[]){N});
    ts = kg_tensor_contiguous(s, KG_F32, 0, NULL);

    double open_ms, t;
    kg_context *ctx = open_timed(&open_ms);
    if (!ctx)
        return 0;

    if (first) {
        t = bench_now();
        BENCH_CHECK(ctx, run_op(ctx, first));
        BENCH_CHECK(ctx, kg_sync(ctx));
        const double op_ms = ms_since(t);
        const kg_module_image *m = module_of(first);
        printf("bench_coldstart: kg_open %.3f ms + first %s %.3f ms (loads module %s, %.2f MiB) = %.3f ms "
               "(target < 10 ms: %s)\n",
               open_ms, first, op_ms, m ? m->name : "?", m ? (double)(m->end - m->begin) / 1048576 : 0.0,
               open_ms + op_ms, open_ms + op_ms < 10.0 ? "met" : "MISSED");
    } else {
        t = bench_now();
        BENCH_CHECK(ctx, run_op(ctx, "add"));
        BENCH_CHECK(ctx, kg_sync(ctx));
        const double first_add_ms = ms_since(t);
        t = bench_now();
        BENCH_CHECK(ctx, run_op(ctx, "add"));
        BENCH_CHECK(ctx, kg_sync(ctx));
        const double warm_add_ms = ms_since(t);
        t = bench_now();
        BENCH_CHECK(ctx, run_op(ctx, "sum"));
        BENCH_CHECK(ctx, kg_sync(ctx));
        const double first_sum_ms = ms_since(t);

        const double total = open_ms + first_add_ms, total_sum = open_ms + first_sum_ms;
        printf("bench_coldstart: kg_open %.3f ms; first kg_add (loads module %s) %.3f ms, warm %.3f ms; first kg_sum "
               "(loads %s) %.3f ms; kg_open + first op: kg_add %.3f ms (target < 10 ms: %s), kg_sum %.3f ms (%s)\n",
               open_ms, module_of("add")->name, first_add_ms, warm_add_ms, module_of("sum")->name, first_sum_ms, total,
               total < 10.0 ? "met" : "MISSED", total_sum, total_sum < 10.0 ? "met" : "MISSED");
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
    }
    kg_close(ctx);
    cudaFree(x);
    cudaFree(y);
    cudaFree(o);
    cudaFree(s);
    return 0;
}
