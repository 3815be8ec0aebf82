/*
 * bench_common.h - what the benchmark programs share: CUDA-event timing
 * (median of repeats of many back-to-back launches), the same-run copy
 * bandwidth, opening the GPU or saying why not, and the results: a CSV line
 * per case for the PyTorch side-by-side scripts, and one JSON object per case
 * in one schema for every family (bench_record), which bench/run-all.sh
 * gathers into build/bench.json.
 */
#ifndef KG_BENCH_COMMON_H
#define KG_BENCH_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "kg_core.h"

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

/* Opens device 0; where there is none, prints "<prog>: no GPU work ran:
   <reason>" and exits 0 (a machine without a GPU runs no benchmark and that
   is not a failure). */
kg_context *bench_open(const char *prog);

/* One measured case. Fields left 0 / NULL are absent from the JSON (null). */
typedef struct bench_case {
    const char *family; /* "elementwise", "reduce", "gemm", "attention", ... */
    const char *name;   /* the case, e.g. "add", "sum dim 1", "matmul" */
    const char *dtype;  /* kg_dtype_name() of the input */
    int ndim;           /* the problem's dims: a tensor shape, [M,N,K], [B,H,S,D] */
    int64_t shape[8];
    double time_us; /* device time per call (median) */
    double gbps;    /* bandwidth cases: bytes moved / time */
    double tflops;  /* compute cases */
    double pct_of_limit;
    const char *limit; /* what the percentage is of, e.g. "copy 4212 GB/s" */
    const char *note;  /* anything else worth keeping ("causal", the kernel variant, ...) */
} bench_case;

/* Appends c as one JSON line to $KG_BENCH_JSON (nothing when unset), with the
   GPU's name and the date. When c->gbps is set and c->limit is not, the
   percentage is of the copy bandwidth bench_copy_gbps() last measured. */
void bench_record(kg_context *ctx, const bench_case *c);

#endif
