/*
 * reduce.c - kg_reduce: plans a call (reduce_plan.c: validation, the nest
 * of kept and reduced dims, the class and the work split, all host code)
 * and launches the plan: the only step that touches the device.
 */
#include "internal.h"
#include "kg_red_table.h"
#include "kg_table.h"
#include "reduce_plan.h"

kg_status kg_reduce(kg_context *ctx, kg_reduce_op op, const kg_tensor *out, const kg_tensor *indices,
                    const kg_tensor *in, const int *axes, int n_axes, int keepdim)
{
    if (!ctx)
        return KG_ERR_INVALID_ARGUMENT;
    kg_red_plan plan;
    kg_status st = kg_reduce_plan(ctx, op, out, indices, in, axes, n_axes, keepdim, ctx->sm_count, &plan);
    if (st != KG_OK)
        return st;
    return kg_reduce_launch(ctx, op, &plan, out, indices, in);
}

kg_status kg_reduce_launch(kg_context *ctx, kg_reduce_op op, kg_red_plan *plan, const kg_tensor *out,
                           const kg_tensor *indices, const kg_tensor *in)
{
    kg_status st = kg_ready(ctx);
    if (st != KG_OK)
        return st;
    if (plan->empty)
        return kg_ok(ctx);
    kg_red_args *A = &plan->args;
    A->out = out ? out->data : NULL;
    A->idx = indices ? (int64_t *)indices->data : NULL;
    A->in = in->data;
    if (plan->partial_bytes) {
        void *base;
        st = kg_scratch(ctx, KG_SCRATCH_COUNTER_BYTES + plan->partial_bytes, &base);
        if (st != KG_OK)
            return st;
        A->sema = (unsigned *)base;
        A->partial = (char *)base + KG_SCRATCH_COUNTER_BYTES;
        A->partial_idx = (int64_t *)((char *)A->partial + plan->partial_idx_at);
    }
    void *args[] = {A};
    st = kg_launch(ctx, kg_red_table[op][in->dtype][plan->cls], (dim3){plan->grid, 1, 1}, (dim3){KG_RED_THREADS, 1, 1},
                   args, 0);
    return st == KG_OK ? kg_ok(ctx) : st;
}
