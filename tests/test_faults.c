/*
 * test_faults.c - the library under faults and concurrency: two streams of
 * one context running split reductions at once (per-stream scratch), every
 * internal allocation failing in turn (fault injection), a device fault
 * (illegal address), a NULL context.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "kg_test.h"
#include "kg_core.h"
#include "kg_gemm.h"
#include "kg_ops_core.h" /* kg_add */
#include "kg_reduce.h"
#include "trust.h"

/* $KG_TEST_QUICK: smaller problems (compute-sanitizer runs). */
static int quick(void) { return getenv("KG_TEST_QUICK") != NULL; }

Test(faults_cpu, null_context_says_so)
{
    cr_assert(strstr(kg_errmsg(NULL), "NULL") != NULL, "%s", kg_errmsg(NULL));
    cr_assert(strncmp(kg_errmsg(NULL), "no context", 10) == 0, "%s", kg_errmsg(NULL));
    kg_tensor t = kg_tensor_contiguous(KT_DEV(0), KG_F32, 1, KT_SHAPE(4));
    cr_assert_eq(kg_add(NULL, &t, &t, &t), KG_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kg_matmul(NULL, &t, &t, &t), KG_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kg_sum(NULL, &t, &t, NULL, 0, 0), KG_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kg_gemm_prepare(NULL), KG_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kg_reserve_scratch(NULL, 0), KG_ERR_INVALID_ARGUMENT);
}

Test(faults_cpu, injected_host_allocation_failure)
{
    /* the hook counts and fails host allocations too (no device needed) */
    kg_test_fail_alloc(1);
    cr_assert_null(kgi_host_alloc(16));
    void *p = kgi_host_alloc(16);
    cr_assert_not_null(p);
    free(p);
    cr_assert_eq(kg_test_fail_alloc(0), 2, "the failed allocation and the next one are counted");
}

/* Sums x (n f32 small integers) on the context's current stream into o. */
static void sum_on(kg_context *c, float *x, int64_t n, float *o)
{
    kg_tensor in = kg_tensor_contiguous(x, KG_F32, 1, &n), out = kg_tensor_contiguous(o, KG_F32, 0, NULL);
    KT_OK(c, kg_sum(c, &out, &in, NULL, 0, 0));
}

/* Two non-blocking streams of one context, split reductions queued on both
   in turns so they overlap: each stream has its own scratch, so both sums
   are exact (integers, so any order of addition gives the same). */
Test(faults_gpu, two_streams_reduce_concurrently, .timeout = 120)
{
    kg_context *c = kt_open_gpu();
    const int64_t n = quick() ? (int64_t)1 << 20 : (int64_t)1 << 24;
    float *h = malloc(sizeof(float) * (size_t)n);
    double want[2] = {0, 0};
    float *x[2], *o[2];
    cudaStream_t s[2];
    uint64_t rng = kt_seed();
    for (int k = 0; k < 2; k++) {
        for (int64_t i = 0; i < n; i++) {
            /* zero-mean small integers: every partial sum stays far below
               2^24, so any order of addition is exact */
            h[i] = (float)((int)floor(kt_uniform(&rng, -1 - k, 2 + k)));
            want[k] += h[i];
        }
        x[k] = kt_alloc(c, sizeof(float) * (size_t)n);
        o[k] = kt_alloc(c, sizeof(float) * 8);
        kt_upload(c, x[k], h, sizeof(float) * (size_t)n);
        cr_assert_eq(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking), cudaSuccess);
    }
    const int rounds = quick() ? 2 : 8;
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++) {
            KT_OK(c, kg_set_stream(c, (kg_stream)s[k]));
            sum_on(c, x[k], n, o[k] + r % 8);
        }
    for (int k = 0; k < 2; k++)
        cr_assert_eq(cudaStreamSynchronize(s[k]), cudaSuccess);
    const int nr = rounds < 8 ? rounds : 8; /* the sums written (o[k][r % 8]) */
    for (int k = 0; k < 2; k++) {
        float got[8];
        kt_download(c, got, o[k], sizeof(float) * (size_t)nr); /* only what was written (initcheck) */
        for (int r = 0; r < nr; r++)
            cr_assert_eq((double)got[r], want[k], "stream %d round %d: sum %.9g, want %.9g", k, r, got[r], want[k]);
    }
    KT_OK(c, kg_set_stream(c, NULL));
    for (int k = 0; k < 2; k++) {
        kg_free(c, x[k]);
        kg_free(c, o[k]);
        cudaStreamDestroy(s[k]);
    }
    free(h);
    kg_close(c);
}

/* One packed matmul and one split reduction on a fresh context, with the
   n-th internal allocation failing: the failing call reports
   KG_ERR_OUT_OF_MEMORY / KG_ERR_HOST_MEMORY naming the bytes, leaves out
   untouched, and the same context then runs both calls correctly. */
Test(faults_gpu, every_internal_allocation_can_fail, .timeout = 120)
{
    for (int nth = 1;; nth++) {
        kg_context *c = kt_open_gpu();
        float ha[12], hb[24], hx[1 << 16];
        for (int i = 0; i < 12; i++)
            ha[i] = (float)(i % 5 - 2);
        for (int i = 0; i < 24; i++)
            hb[i] = (float)(i % 3 - 1);
        for (int i = 0; i < (1 << 16); i++)
            hx[i] = (float)(i % 4);
        float *a = kt_alloc(c, sizeof ha), *b = kt_alloc(c, sizeof hb), *o = kt_alloc(c, 8 * sizeof(float));
        float *x = kt_alloc(c, sizeof hx), *so = kt_alloc(c, sizeof(float));
        kt_upload(c, a, ha, sizeof ha);
        kt_upload(c, b, hb, sizeof hb);
        KT_OK(c, kg_memset(c, o, 0xff, 8 * sizeof(float)));
        KT_OK(c, kg_memset(c, so, 0xff, sizeof(float)));
        /* a [2,6] @ b[:, ::3] ([6,4] strides [4,... ]): b is packed */
        kg_tensor A = kg_tensor_contiguous(a, KG_F32, 2, KT_SHAPE(2, 6));
        kg_tensor B = kg_tensor_contiguous(b, KG_F32, 2, KT_SHAPE(6, 2));
        B.strides[0] = 4, B.strides[1] = 2;
        kg_tensor O = kg_tensor_contiguous(o, KG_F32, 2, KT_SHAPE(2, 2));
        const int64_t nx = 1 << 16;
        kg_tensor X = kg_tensor_contiguous(x, KG_F32, 1, &nx), SO = kg_tensor_contiguous(so, KG_F32, 0, NULL);
        kt_upload(c, x, hx, sizeof hx);
        kg_test_fail_alloc(nth);
        kg_status st1 = kg_matmul(c, &O, &A, &B);
        char m1[600];
        snprintf(m1, sizeof m1, "%s", kg_errmsg(c));
        kg_status st2 = kg_sum(c, &SO, &X, NULL, 0, 0);
        char m2[600];
        snprintf(m2, sizeof m2, "%s", kg_errmsg(c));
        const int counted = kg_test_fail_alloc(0);
        KT_OK(c, kg_sync(c));
        float got[4], sgot;
        kt_download(c, got, o, sizeof got);
        kt_download(c, &sgot, so, sizeof sgot);
        const int failed1 = st1 != KG_OK, failed2 = st2 != KG_OK;
        cr_assert(failed1 + failed2 <= 1, "one injected failure, two failing calls: %s / %s", m1, m2);
        if (failed1) {
            cr_assert(st1 == KG_ERR_OUT_OF_MEMORY || st1 == KG_ERR_HOST_MEMORY, "allocation %d: %s: %s", nth,
                      kg_status_name(st1), m1);
            cr_assert(strstr(m1, "bytes") != NULL, "allocation %d: no sizes in: %s", nth, m1);
            for (int i = 0; i < 4; i++) {
                uint32_t bits;
                memcpy(&bits, &got[i], 4);
                cr_assert_eq(bits, 0xffffffffu, "allocation %d: out was written before the failure", nth);
            }
        }
        if (failed2) {
            cr_assert(st2 == KG_ERR_OUT_OF_MEMORY || st2 == KG_ERR_HOST_MEMORY, "allocation %d: %s: %s", nth,
                      kg_status_name(st2), m2);
            cr_assert(strstr(m2, "bytes") != NULL, "allocation %d: no sizes in: %s", nth, m2);
            uint32_t bits;
            memcpy(&bits, &sgot, 4);
            cr_assert_eq(bits, 0xffffffffu, "allocation %d: the sum's out was written before the failure", nth);
        }
        /* the context is usable: both calls again, checked */
        KT_OK(c, kg_matmul(c, &O, &A, &B));
        KT_OK(c, kg_sum(c, &SO, &X, NULL, 0, 0));
        KT_OK(c, kg_sync(c));
        kt_download(c, got, o, sizeof got);
        kt_download(c, &sgot, so, sizeof sgot);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                double w = 0;
                for (int k = 0; k < 6; k++)
                    w += (double)ha[i * 6 + k] * hb[k * 4 + j * 2];
                cr_assert_eq((double)got[i * 2 + j], w, "allocation %d: out[%d,%d] = %g, want %g", nth, i, j,
                             got[i * 2 + j], w);
            }
        double sw = 0;
        for (int i = 0; i < (1 << 16); i++)
            sw += hx[i];
        cr_assert_eq((double)sgot, sw, "allocation %d: sum %g, want %g", nth, sgot, sw);
        kg_free(c, a);
        kg_free(c, b);
        kg_free(c, o);
        kg_free(c, x);
        kg_free(c, so);
        kg_close(c);
        if (!failed1 && !failed2) {
            cr_assert(counted < nth, "allocation %d of %d did not fail", nth, counted);
            cr_assert(nth > 3, "only %d internal allocations seen", nth - 1);
            break;
        }
    }
}

/* A kernel reading a bad device address: the fault is reported (never a
   hang), and every later call fails with KG_ERR_CUDA naming it. Criterion
   runs each test in its own process, so the lost CUDA context stays here. */
Test(faults_gpu, device_fault_is_sticky, .timeout = 60)
{
    if (getenv("KG_TEST_SANITIZER"))
        cr_skip_test("a deliberate illegal address is an error under compute-sanitizer");
    kg_context *c = kt_open_gpu();
    const int64_t n = 1 << 20;
    float *good = kt_alloc(c, sizeof(float) * (size_t)n);
    kg_tensor bad = kg_tensor_contiguous((void *)(uintptr_t)0x7f0000000000ull, KG_F32, 1, &n);
    kg_tensor out = kg_tensor_contiguous(good, KG_F32, 1, &n);
    kg_status st = kg_add(c, &out, &bad, &bad); /* asynchronous: may succeed */
    kg_status sy = kg_sync(c);
    cr_assert(st != KG_OK || sy != KG_OK, "an illegal address went unreported");
    cr_assert(strstr(kg_errmsg(c), "illegal") != NULL, "%s", kg_errmsg(c));
    for (int i = 0; i < 3; i++) {
        st = kg_add(c, &out, &out, &out);
        cr_assert_eq(st, KG_ERR_CUDA, "later call %d: %s: %s", i, kg_status_name(st), kg_errmsg(c));
        cr_assert(strstr(kg_errmsg(c), "sticky") != NULL, "%s", kg_errmsg(c));
    }
    kg_close(c);
}
