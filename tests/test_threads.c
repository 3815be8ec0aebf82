/*
 * test_threads.c - several threads, each driving its own context at once.
 * Without a device every thread runs validation paths (the exact messages
 * are checked: a context's message must never show another thread's
 * failure); with one, each thread also runs real work on its own stream
 * (element-wise, a split reduction, a packed matmul) and checks it. Only
 * KG_ERR_NO_DEVICE means "no device": any other failure of kg_open, of the
 * probe or of a thread after the probe opened the device, fails the test.
 *
 * A plain program (no Criterion), so the same source runs under
 * ThreadSanitizer (`ninja tsan`, CPU side). Exit status 0 when clean.
 * $KG_TEST_QUICK: fewer iterations.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kg_core.h"
#include "kg_gemm.h"
#include "kg_ops_core.h" /* kg_add */
#include "kg_reduce.h"

enum { THREADS = 4 };

static int iterations(void) { return getenv("KG_TEST_QUICK") ? 200 : 5000; }

typedef struct job {
    int id;
    int failures;
    char first[1024];
} job;

static void fail(job *j, const char *what, const char *msg)
{
    if (!j->failures++)
        snprintf(j->first, sizeof j->first, "thread %d: %s: %s", j->id, what, msg);
}

#define EXPECT(j, ctx, call, code, text)                                                                               \
    do {                                                                                                               \
        kg_status st_ = (call);                                                                                        \
        if (st_ != (code) || strcmp(kg_errmsg(ctx), (text)) != 0)                                                      \
            fail(j, #call, kg_errmsg(ctx));                                                                            \
    } while (0)

/* Validation failures on every thread's own context; `device`: the context
   has one, so valid calls (fake addresses) are not made. */
static void validation(job *j, kg_context *ctx, int n, int device)
{
    const uintptr_t base = 0x10000000u + 0x1000000u * (uintptr_t)j->id;
    for (int i = 0; i < n; i++) {
        const int64_t m = 2 + (i + j->id) % 5;
        kg_tensor a = kg_tensor_contiguous((void *)base, KG_F32, 2, (int64_t[]){m, 3});
        kg_tensor b = kg_tensor_contiguous((void *)(base + 0x10000), KG_F32, 2, (int64_t[]){4, 5});
        kg_tensor o = kg_tensor_contiguous((void *)(base + 0x20000), KG_F32, 2, (int64_t[]){m, 5});
        char want[256];
        snprintf(want, sizeof want, "shape mismatch: matmul: a is [%lld,3], b is [4,5]: inner dims 3 and 4 differ",
                 (long long)m);
        EXPECT(j, ctx, kg_matmul(ctx, &o, &a, &b), KG_ERR_SHAPE, want);
        kg_tensor h = kg_tensor_contiguous((void *)(base + 0x30000), KG_F16, 2, (int64_t[]){m, 3});
        EXPECT(j, ctx, kg_add(ctx, &a, &a, &h), KG_ERR_DTYPE,
               "dtype mismatch: add: a is f32, b is f16 (inputs of one call share a dtype; convert with kg_cast)");
        if (device)
            continue;
        /* valid calls reach the device check */
        kg_status st = kg_add(ctx, &a, &a, &a);
        if (st != KG_ERR_NO_DEVICE)
            fail(j, "kg_add without a device", kg_errmsg(ctx));
        kg_tensor s = kg_tensor_contiguous((void *)(base + 0x40000), KG_F32, 0, NULL);
        st = kg_sum(ctx, &s, &a, NULL, 0, 0);
        if (st != KG_ERR_NO_DEVICE)
            fail(j, "kg_sum without a device", kg_errmsg(ctx));
    }
}

static void gpu_work(job *j, kg_context *ctx, int n)
{
    const int64_t len = (int64_t)1 << 20;
    float *h = malloc(sizeof(float) * (size_t)len);
    double want = 0;
    for (int64_t i = 0; i < len; i++) {
        h[i] = (float)((i * 7 + j->id) % 5 - 2);
        want += 2.0 * h[i];
    }
    void *x = NULL, *y = NULL, *s = NULL, *mo = NULL;
    if (kg_malloc(ctx, &x, sizeof(float) * (size_t)len) || kg_malloc(ctx, &y, sizeof(float) * (size_t)len) ||
        kg_malloc(ctx, &s, sizeof(float)) || kg_malloc(ctx, &mo, 16 * sizeof(float)) ||
        kg_copy_in(ctx, x, h, sizeof(float) * (size_t)len)) {
        fail(j, "allocating", kg_errmsg(ctx));
        goto done;
    }
    kg_tensor X = kg_tensor_contiguous(x, KG_F32, 1, &len), Y = kg_tensor_contiguous(y, KG_F32, 1, &len);
    kg_tensor S = kg_tensor_contiguous(s, KG_F32, 0, NULL);
    /* a [4,4] (x's head) @ b = x[16:48] viewed [4,4] with strides [8,2] (packed) */
    kg_tensor A = kg_tensor_contiguous(x, KG_F32, 2, (int64_t[]){4, 4});
    kg_tensor B = kg_tensor_contiguous((float *)x + 16, KG_F32, 2, (int64_t[]){4, 4});
    B.strides[0] = 8, B.strides[1] = 2;
    kg_tensor MO = kg_tensor_contiguous(mo, KG_F32, 2, (int64_t[]){4, 4});
    for (int i = 0; i < n; i++) {
        float got = 0, mg[16];
        if (kg_add(ctx, &Y, &X, &X) || kg_sum(ctx, &S, &Y, NULL, 0, 0) || kg_matmul(ctx, &MO, &A, &B) ||
            kg_copy_out(ctx, &got, s, sizeof got) || kg_copy_out(ctx, mg, mo, sizeof mg)) {
            fail(j, "gpu work", kg_errmsg(ctx));
            break;
        }
        if ((double)got != want) {
            char m[128];
            snprintf(m, sizeof m, "sum %.9g, want %.9g", got, want);
            fail(j, "gpu sum", m);
        }
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++) {
                double w = 0;
                for (int k = 0; k < 4; k++)
                    w += (double)h[r * 4 + k] * h[16 + k * 8 + c * 2];
                if ((double)mg[r * 4 + c] != w)
                    fail(j, "gpu matmul", "wrong element");
            }
    }
done:
    kg_free(ctx, x);
    kg_free(ctx, y);
    kg_free(ctx, s);
    kg_free(ctx, mo);
    free(h);
}

static int have_device;

static void *run(void *arg)
{
    job *j = arg;
    kg_context *ctx = NULL;
    kg_status st = kg_open(&ctx, 0);
    if (!ctx) {
        fail(j, "kg_open", "no context");
        return NULL;
    }
    /* each thread must open what the probe opened: the device when it did
       (any failure then is one: a thread must not fall back to validation
       alone and pass), else exactly KG_ERR_NO_DEVICE (as kt_open_gpu) */
    if (have_device ? st != KG_OK : st != KG_ERR_NO_DEVICE) {
        char m[512];
        snprintf(m, sizeof m, "returned %s (the probe %s): %s", kg_status_name(st),
                 have_device ? "opened the device" : "found no device", kg_errmsg(ctx));
        fail(j, "kg_open", m);
        kg_close(ctx);
        return NULL;
    }
    validation(j, ctx, st == KG_OK ? iterations() / 10 : iterations(), st == KG_OK);
    if (st == KG_OK) {
        gpu_work(j, ctx, getenv("KG_TEST_QUICK") ? 3 : 20);
    }
    kg_close(ctx);
    return NULL;
}

int main(void)
{
    kg_context *probe = NULL;
    const kg_status pst = kg_open(&probe, 0);
    have_device = pst == KG_OK;
    if (pst != KG_OK && pst != KG_ERR_NO_DEVICE) {
        /* only the absence of a device means "validation only" */
        fprintf(stderr, "FAIL kg_open(device 0) failed with %s: %s\n", kg_status_name(pst), kg_errmsg(probe));
        kg_close(probe);
        return 1;
    }
    kg_close(probe);
    pthread_t t[THREADS];
    job jobs[THREADS];
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < THREADS; i++) {
        jobs[i].id = i;
        pthread_create(&t[i], NULL, run, &jobs[i]);
    }
    int bad = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        if (jobs[i].failures) {
            fprintf(stderr, "FAIL %s (%d failures)\n", jobs[i].first, jobs[i].failures);
            bad = 1;
        }
    }
    printf("test_threads: %d threads, %s, %s\n", THREADS, have_device ? "validation + GPU work" : "validation (no device)",
           bad ? "FAILED" : "passed");
    return bad;
}
