/*
 * reduce_plan.h - how a reduction call becomes one kernel launch (reduce.c).
 * Pure host code, so the axis logic, the coalescing and the class choice are
 * tested on machines without a GPU.
 */
#ifndef KG_REDUCE_PLAN_H
#define KG_REDUCE_PLAN_H

#include "internal.h"
#include "kg_reduce_params.h"

/* Bytes of split partial results a plan may use after the counters. */
#define KG_RED_PARTIAL_BYTES ((size_t)4 << 20)

typedef struct kg_red_plan {
    kg_red_class cls;
    int empty;    /* the result has no elements: nothing to launch */
    int out_ndim; /* the result's shape */
    int64_t out_shape[KG_MAX_DIMS];
    kg_red_args args;      /* everything but the pointers */
    unsigned grid;         /* blocks of KG_RED_THREADS */
    size_t partial_bytes;  /* scratch after the counters (0: none) */
    size_t partial_idx_at; /* offset of the partial indices in that space */
} kg_red_plan;

/* Validates a kg_reduce call (every error but the device's) and plans it for
   a GPU of sm_count multiprocessors. */
kg_status kg_reduce_plan(kg_context *ctx, kg_reduce_op op, const kg_tensor *out, const kg_tensor *indices,
                         const kg_tensor *in, const int *axes, int n_axes, int keepdim, int sm_count,
                         kg_red_plan *plan);

#endif
