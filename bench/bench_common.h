/*
 * bench_common.h - what the benchmark programs share: CUDA-event timing
 * (median of repeats of many back-to-back launches), the same-run copy
 * bandwidth, and a CSV line per case for the PyTorch side-by-side script.
 */
#ifndef KG_BENCH_COMMON_H
#define KG_BENCH_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "kgen.h"

#define BENCH_CHECK(ctx, call)                                                                                         \
    do {                                                                                                               \
        kg_status st_ = (call);                                                                                        \
        if (st_ != KG_OK) {                                                                                            \
            fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, kg_status_name(st_), kg_errmsg(ctx));  \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

typedef void (*bench_fn)(void *arg);

/* Median over `reps` repeats of the mean time of `inner` back-to-back calls
   of fn(arg) on the context's stream, in microseconds (after warm-up). */
double bench_time_us(kg_context *ctx, bench_fn fn, void *arg, int inner, int reps);

/* Device-to-device cudaMemcpy bandwidth (bytes read + written), GB/s. */
double bench_copy_gbps(kg_context *ctx, size_t bytes);

/* Opens the CSV file named by $KG_BENCH_CSV (NULL when unset). */
FILE *bench_csv_open(void);

/* Seconds on the host's monotonic clock. */
double bench_now(void);

#endif
