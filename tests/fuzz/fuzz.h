/*
 * fuzz.h - what the libFuzzer targets share: a byte reader that turns fuzz
 * input into tensors (shapes, strides and addresses biased toward the
 * values that break arithmetic: 0, 1, powers of two, INT32/INT64 limits,
 * addresses near the top of the address space, odd addresses, aliasing),
 * and the invariant every target checks.
 *
 * Invariant: no crash and no undefined behaviour (ASan, UBSan abort), every
 * status is a kg_status with a message, and without a device (the targets
 * hide it) no call that would launch work returns KG_OK.
 */
#ifndef KG_FUZZ_H
#define KG_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"        /* kg_gemm_describe (fz_gemm) */
#include "reduce_plan.h" /* kg_reduce_plan_tuned (fz_reduce) */
#include "kgen.h"

typedef struct fz {
    const uint8_t *p;
    size_t n;
    unsigned zero; /* fz_tensors: bit i when tensor i has a valid rank and a 0 extent */
    unsigned used; /* fz_<family>: bit i when tensor i goes to the call */
} fz;

static uint64_t fz_u64(fz *f, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) {
        v = v << 8 | (f->n ? *f->p : 0);
        if (f->n)
            f->p++, f->n--;
    }
    return v;
}

static unsigned fz_byte(fz *f) { return (unsigned)fz_u64(f, 1); }

static int64_t fz_extent(fz *f)
{
    static const int64_t table[] = {0,
                                    1,
                                    2,
                                    3,
                                    4,
                                    5,
                                    7,
                                    8,
                                    16,
                                    17,
                                    31,
                                    32,
                                    64,
                                    127,
                                    128,
                                    129,
                                    255,
                                    256,
                                    1000,
                                    4096,
                                    65535,
                                    65536,
                                    (int64_t)INT32_MAX,
                                    (int64_t)INT32_MAX + 1,
                                    (int64_t)1 << 32,
                                    ((int64_t)1 << 32) + 1,
                                    (int64_t)1 << 40,
                                    (int64_t)1 << 62,
                                    INT64_MAX / 2,
                                    INT64_MAX / 3,
                                    INT64_MAX - 1,
                                    INT64_MAX,
                                    -1,
                                    INT64_MIN};
    const unsigned b = fz_byte(f);
    if (b < 200)
        return table[b % (sizeof table / sizeof table[0])];
    if (b < 240)
        return (int64_t)fz_u64(f, 1);
    return (int64_t)fz_u64(f, 8);
}

static void *fz_addr(fz *f, const kg_tensor *prev, int nprev)
{
    const unsigned b = fz_byte(f);
    switch (b % 10) {
    case 0: return NULL;
    case 1: return (void *)(uintptr_t)(0x10000000u + 1); /* odd */
    case 2: return (void *)(uintptr_t)(UINTPTR_MAX - 63); /* near the top */
    case 3: return (void *)(uintptr_t)(UINTPTR_MAX - (fz_u64(f, 2)));
    case 4:
    case 5:
        if (nprev) /* alias an earlier tensor, maybe offset */
            return (void *)((uintptr_t)prev[fz_byte(f) % nprev].data + (uintptr_t)(int64_t)(int8_t)fz_byte(f));
        return (void *)(uintptr_t)0x20000000u;
    case 6: return (void *)(uintptr_t)(fz_u64(f, 8));
    default: return (void *)(uintptr_t)(0x10000000u + 0x100000u * (b % 16) + 256u * fz_byte(f));
    }
}

/* A tensor: mostly valid dtypes and ndims, sometimes not; contiguous
   strides or fuzzed ones. */
static kg_tensor fz_tensor(fz *f, const kg_tensor *prev, int nprev)
{
    kg_tensor t;
    memset(&t, 0, sizeof t);
    const unsigned hdr = fz_byte(f);
    t.dtype = (kg_dtype)(hdr % 16 < 14 ? hdr % 8 : (hdr % 16 == 14 ? 8 : -1));
    const unsigned nd = fz_byte(f);
    t.ndim = nd < 250 ? (int)(nd % 9) : (nd == 250 ? -1 : 9 + (int)(nd % 3));
    const int nd_ok = t.ndim >= 0 && t.ndim <= KG_MAX_DIMS ? t.ndim : 0;
    for (int d = 0; d < nd_ok; d++)
        t.shape[d] = fz_extent(f);
    const unsigned mode = fz_byte(f) % 4;
    int64_t s = 1;
    for (int d = nd_ok - 1; d >= 0; d--) {
        if (mode == 0) { /* contiguous (with wrapping arithmetic) */
            t.strides[d] = s;
            s = (int64_t)((uint64_t)s * (uint64_t)(t.shape[d] > 1 ? t.shape[d] : 1));
        } else if (mode == 1) {
            t.strides[d] = fz_extent(f);
        } else if (mode == 2) {
            t.strides[d] = (int64_t)(fz_byte(f) % 4);
        } else {
            t.strides[d] = s;
            s = (int64_t)((uint64_t)s * (uint64_t)(t.shape[d] > 1 ? t.shape[d] : 1) * (1 + fz_byte(f) % 3));
        }
    }
    t.data = fz_addr(f, prev, nprev);
    return t;
}

/* n tensors in turn, each able to alias the ones before it. */
static void fz_tensors(fz *f, kg_tensor *t, int n)
{
    f->zero = 0;
    for (int i = 0; i < n; i++) {
        t[i] = fz_tensor(f, t, i);
        for (int d = 0; t[i].ndim >= 0 && d < t[i].ndim && d < KG_MAX_DIMS; d++)
            if (t[i].shape[d] == 0)
                f->zero |= 1u << i;
    }
}

/* Opens the shared context once, with the device hidden. */
static kg_context *fz_ctx(void)
{
    static kg_context *ctx;
    if (!ctx) {
        setenv("CUDA_VISIBLE_DEVICES", "", 1);
        kg_open(&ctx, 0);
        if (!ctx)
            abort();
    }
    return ctx;
}

/* ---- Each family's call from fuzz input ----------------------------------
   The family targets (fuzz_<family>.c) run these with the device hidden;
   fuzz_plan.c runs them on a context that claims an H200. The input formats
   are the targets' corpora's: keep them as they are. */

/* element-wise: every op, any arity given */
static kg_status fz_elementwise(fz *f, kg_context *ctx)
{
    kg_tensor t[4];
    const kg_op op = (kg_op)(int)(fz_byte(f) % (KG_OP_COUNT + 2));
    const int n_in = (int)(fz_byte(f) % 4);
    fz_tensors(f, t, 4);
    const kg_tensor *in[3] = {&t[1], &t[2], &t[3]};
    const unsigned how = fz_byte(f) % 8;
    if (how == 0) /* in place: out is an input */
        in[0] = &t[0];
    if (how == 1)
        in[fz_byte(f) % 3] = NULL;
    f->used = (how == 2 ? 0u : 1u) | (n_in > 0 && how != 0 ? 2u : 0u) | (n_in > 1 ? 4u : 0u) | (n_in > 2 ? 8u : 0u);
    return kg_elementwise(ctx, op, how == 2 ? NULL : &t[0], in, n_in);
}

/* reductions: every op, axes or none, indices or none, keepdim; with a
   tuning (not NULL) planned by kg_reduce_plan_tuned and launched */
static kg_status fz_reduce(fz *f, kg_context *ctx, const kg_red_tuning *tuning)
{
    kg_tensor t[3];
    const kg_reduce_op op = (kg_reduce_op)(int)(fz_byte(f) % 12) - 1;
    fz_tensors(f, t, 3);
    int axes[10];
    const int n_axes = (int)(fz_byte(f) % 11) - 1;
    for (int i = 0; i < 10; i++)
        axes[i] = (int)(int8_t)fz_byte(f) % 12;
    const unsigned how = fz_byte(f);
    const kg_tensor *indices = how & 1 ? &t[1] : NULL;
    f->used = 1u | 4u | (how & 1 ? 2u : 0u);
    if (!tuning)
        return kg_reduce(ctx, op, &t[0], indices, &t[2], how & 2 ? NULL : axes, n_axes, (int)(how >> 2 & 1));
    kg_red_plan plan;
    const kg_status st = kg_reduce_plan_tuned(ctx, op, &t[0], indices, &t[2], how & 2 ? NULL : axes, n_axes,
                                              (int)(how >> 2 & 1), ctx->sm_count, tuning, &plan);
    return st != KG_OK ? st : kg_reduce_launch(ctx, op, &plan, &t[0], indices, &t[2]);
}

/* normalizations: softmax, log_softmax, logsumexp, layer_norm, rms_norm,
   rms_norm with a residual */
static kg_status fz_norm(fz *f, kg_context *ctx)
{
    kg_tensor t[6];
    fz_tensors(f, t, 6);
    const unsigned which = fz_byte(f) % 6, how = fz_byte(f);
    const int axis = (int)(int8_t)fz_byte(f) % 12;
    int axes[10];
    const int n_axes = (int)(fz_byte(f) % 11) - 1;
    for (int i = 0; i < 10; i++)
        axes[i] = (int)(int8_t)fz_byte(f) % 12;
    static const double eps[] = {1e-5, 0.0, -1.0, 1e300, __builtin_nan(""), __builtin_inf(), 1e-12};
    const double e = eps[fz_byte(f) % 7];
    const kg_tensor *w = how & 1 ? &t[3] : NULL, *b = how & 2 ? &t[4] : NULL;
    f->used = 3u | (how & 1 ? 8u : 0u) | (how & 2 ? 16u : 0u) | (which == 3 && how & 16 ? 4u : 0u) |
              (which == 3 && how & 32 ? 32u : 0u) | (which == 5 ? 4u : 0u);
    switch (which) {
    case 0: return kg_softmax(ctx, &t[0], &t[1], axis);
    case 1: return kg_log_softmax(ctx, &t[0], &t[1], axis);
    case 2: return kg_logsumexp(ctx, &t[0], &t[1], how & 4 ? NULL : axes, n_axes, (int)(how >> 3 & 1));
    case 3: return kg_layer_norm(ctx, &t[0], how & 16 ? &t[2] : NULL, how & 32 ? &t[5] : NULL, &t[1], axis, w, b, e);
    case 4: return kg_rms_norm(ctx, &t[0], &t[1], w, e);
    default: return kg_rms_norm_residual(ctx, &t[0], &t[2], &t[1], w, e);
    }
}

/* attention forward */
static kg_status fz_attention(fz *f, kg_context *ctx)
{
    kg_tensor t[6];
    fz_tensors(f, t, 6);
    const unsigned how = fz_byte(f);
    static const float scales[] = {0.0f, 0.125f, 1.0f, -1.0f, 3e38f, 2.4e38f, 1e-30f, __builtin_nanf(""),
                                   __builtin_inff(), -0.0f};
    kg_attention_opts o = {scales[fz_byte(f) % 10], (int)(how >> 4 & 1)};
    f->used = 1u | 4u | 8u | 16u | (how & 1 ? 2u : 0u) | (how & 2 ? 32u : 0u);
    return kg_attention(ctx, &t[0], how & 1 ? &t[1] : NULL, &t[2], &t[3], &t[4], how & 2 ? &t[5] : NULL,
                        how & 4 ? NULL : &o);
}

/* attention backward, and the scratch size helper on any sizes */
static kg_status fz_attention_bwd(fz *f, kg_context *ctx)
{
    kg_tensor t[11];
    fz_tensors(f, t, 11);
    const unsigned how = fz_byte(f);
    static const float scales[] = {0.0f, 0.125f, -1.0f, 2.4e38f, __builtin_nanf(""), __builtin_inff()};
    kg_attention_opts o = {scales[fz_byte(f) % 6], (int)(how >> 4 & 1)};
    (void)kg_attention_backward_scratch_bytes(fz_extent(f), fz_extent(f), fz_extent(f), fz_extent(f), fz_extent(f),
                                              fz_extent(f));
    f->used = 0xffu | (how & 1 ? 0u : 0x100u) | (how & 2 ? 0x200u : 0u);
    return kg_attention_backward(ctx, &t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6], &t[7], how & 1 ? NULL : &t[8],
                                 how & 2 ? &t[9] : NULL, how & 4 ? NULL : &o);
}

/* matmul: the layout describer and packing plans (kg_gemm_describe runs on
   the host; its description is checked here), then kg_matmul_ex */
static kg_status fz_gemm(fz *f, kg_context *ctx)
{
    kg_tensor t[4];
    fz_tensors(f, t, 4);
    const unsigned how = fz_byte(f);
    kg_matmul_opts o = {how & 1 ? &t[3] : NULL, (kg_epilogue)((int)(how >> 1 & 3) - (how >> 7)),
                        (kg_gemm_backend)(int)(how >> 3 & 3)};
    kg_gemm_desc g;
    const kg_status st = kg_gemm_describe(ctx, &t[0], &t[1], &t[2], how & 64 ? NULL : &o, &g);
    if ((int)st < 0 || st >= KG_STATUS_COUNT)
        abort();
    if (st == KG_OK) { /* a description within cuBLAS's limits */
        if (!g.empty && !g.fill && (g.batch < 1 || g.batch > INT32_MAX || g.m < 1 || g.n < 1 || g.k < 1))
            abort();
        if (g.nloop > 0) {
            int64_t calls = 1;
            for (int i = 0; i < g.nloop; i++)
                calls *= g.loop_size[i];
            if (calls > KG_GEMM_MAX_LOOP)
                abort(); /* no host loop proportional to the data */
        }
    }
    f->used = 7u | (how & 1 && !(how & 64) ? 8u : 0u);
    return kg_matmul_ex(ctx, &t[0], &t[1], &t[2], how & 64 ? NULL : &o);
}

/* The invariant on one call's result. */
static void fz_check(kg_context *ctx, kg_status st)
{
    if ((int)st < 0 || st >= KG_STATUS_COUNT)
        abort(); /* not a kg_status */
    if (st == KG_OK)
        abort(); /* no device: nothing that would launch may succeed */
    const char *m = kg_errmsg(ctx);
    if (!m || !m[0] || strlen(m) >= 512)
        abort(); /* every failure has a message */
}

#endif
