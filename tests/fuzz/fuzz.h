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

#include "kgen.h"

typedef struct fz {
    const uint8_t *p;
    size_t n;
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
    for (int i = 0; i < n; i++)
        t[i] = fz_tensor(f, t, i);
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
