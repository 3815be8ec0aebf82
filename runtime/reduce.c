/*
 * reduce.c - kg_reduce: plans a call (reduce_plan.c: validation, the nest
 * of kept and reduced dims, the class and the work split, all host code)
 * and launches the plan: the only step that touches the device.
 */
#include <string.h>

#include "internal.h"
#include "kg_red_table.h"
#include "kg_table.h"
#include "reduce_plan.h"

/* The last valid call's arguments and plan, per thread: a call repeating
   them exactly (same context, tensors, pointers, axes) reuses the plan, as
   planning is a pure function of them (and of the multiprocessor count). A
   call that differs in any byte of the key plans afresh; an invalid call is
   never cached, so its error is reported every time. */
typedef struct red_key {
    kg_context *ctx;
    int op, sms, n_axes, keepdim, has_out, has_idx;
    int axes[KG_MAX_DIMS];
    kg_tensor out, idx, in;
} red_key;

static _Thread_local red_key last_key;
static _Thread_local kg_red_plan last_plan;
static _Thread_local int last_valid;

kg_status kg_reduce(kg_context *ctx, kg_reduce_op op, const kg_tensor *out, const kg_tensor *indices,
                    const kg_tensor *in, const int *axes, int n_axes, int keepdim)
{
    if (!ctx)
        return KG_ERR_INVALID_ARGUMENT;
    red_key k;
    int keyed = in && n_axes >= 0 && n_axes <= KG_MAX_DIMS && (n_axes == 0 || axes);
    if (keyed) {
        memset(&k, 0, sizeof k); /* padding too: keys compare as bytes */
        k.ctx = ctx;
        k.op = (int)op;
        k.sms = ctx->sm_count;
        k.n_axes = n_axes;
        k.keepdim = keepdim;
        k.has_out = out != NULL;
        k.has_idx = indices != NULL;
        if (n_axes > 0) /* axes may be NULL when there are none */
            memcpy(k.axes, axes, sizeof(int) * (size_t)n_axes);
        if (out)
            k.out = *out;
        if (indices)
            k.idx = *indices;
        k.in = *in;
        if (last_valid && !memcmp(&k, &last_key, sizeof k))
            return kg_reduce_launch(ctx, op, &last_plan, out, indices, in);
    }
    kg_red_plan plan;
    kg_status st = kg_reduce_plan(ctx, op, out, indices, in, axes, n_axes, keepdim, ctx->sm_count, &plan);
    if (st != KG_OK)
        return st;
    if (keyed) {
        last_key = k;
        last_plan = plan;
        last_valid = 1;
    }
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
    /* narrow walks (args.deep) have kernels of their own (kg_reduce_params.h) */
    kg_red_class k = !A->deep ? plan->cls : plan->cls == KG_RED_COLS ? KG_RED_COLSN : KG_RED_NESTN;
    /* and so do the walks at more blocks per multiprocessor (plan->occ) */
    if (plan->occ && (plan->cls == KG_RED_COLS || plan->cls == KG_RED_NEST)) {
        if (A->deep)
            k = plan->cls == KG_RED_NEST ? KG_RED_NESTNO : KG_RED_COLSNO;
        else
            k = plan->cls == KG_RED_NEST ? KG_RED_NESTO : plan->occ == 3 ? KG_RED_COLSP : KG_RED_COLSO;
    }
    /* COLS over two column tiles per unit */
    if (plan->cls == KG_RED_COLS && A->group == 2)
        k = KG_RED_COLSQ;
    /* FLAT with a warp per unit (at 4 blocks per multiprocessor: plan->occ) */
    if (plan->cls == KG_RED_FLAT && A->group == 32)
        k = plan->occ ? KG_RED_FLATWO : KG_RED_FLATW;
    /* ... whose blocks start off the vector grid (flatw_ragged; bf16, f16,
       f32 and i32 value ops only: the other entries are -1) */
    if (plan->cls == KG_RED_FLAT && A->group == 32 && (A->vec == 1 || A->vec == 2)) {
        k = KG_RED_FLATWR;
        if (kg_red_table[op][in->dtype][k] < 0)
            return kg_fail(ctx, KG_ERR_DTYPE, "%s: no FLATWR kernel (flatw_ragged) for %s", kg_red_infos[op].name,
                           kg_dtype_name(in->dtype));
    }
    /* TRANS of bf16 / f16 elements in 16-byte vectors (trans_vec,
       trans_vec_f16; value ops over bf16 and f16 only: the other entries
       are -1) */
    if (plan->cls == KG_RED_TRANS && A->vec == 1) {
        k = KG_RED_TRANSV;
        if (kg_red_table[op][in->dtype][k] < 0)
            return kg_fail(ctx, KG_ERR_DTYPE, "%s: no vector TRANS kernel (trans_vec) for %s", kg_red_infos[op].name,
                           kg_dtype_name(in->dtype));
    }
    st =
        kg_launch(ctx, kg_red_table[op][in->dtype][k], (dim3){plan->grid, 1, 1}, (dim3){KG_RED_THREADS, 1, 1}, args, 0);
    return st == KG_OK ? kg_ok(ctx) : st;
}
