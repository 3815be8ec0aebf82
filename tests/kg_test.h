/*
 * kg_test.h - what every kgen test shares: seeded random inputs, dtype
 * conversions done independently of the library (correct rounding from
 * double), tolerance checks, and opening the GPU or skipping with a reason.
 */
#ifndef KG_TEST_H
#define KG_TEST_H

#include <criterion/criterion.h>
#include <stdint.h>

#include "kg_core.h" /* a test includes the headers of the families it calls (kgen.h for all) */

/* The run's seed: $KG_TEST_SEED if set, else from the clock. Tests print it
   in every failure message so a failing run can be repeated. */
uint64_t kt_seed(void);
/* splitmix64 step, and uniform doubles in [lo, hi). */
uint64_t kt_next(uint64_t *state);
double kt_uniform(uint64_t *state, double lo, double hi);

/* Sanitizer size mode: $KG_TEST_SANITIZER is set (tests/sanitize.sh sets
   it for every job of `ninja sanitize`) and is not "full". The GPU tests
   then run a seeded sample of their cases at smaller sizes, so that each
   (test, tool) job of compute-sanitizer finishes in seconds; a run with
   another seed samples other cases. Outside this mode every helper below is
   the identity: the ordinary runs are unchanged. */
int kt_sanitizer(void);
/* 1 when the case about to run is to run: always outside sanitizer mode; in
   it the first call of the process (Criterion runs each test in its own
   process) and then one call in `every` x the tool's factor, at an offset
   drawn from the seed. $KG_TEST_SANITIZER names the tool (sanitize.sh):
   memcheck and synccheck 2, initcheck 3, racecheck 8 (it checks every
   shared-memory access), any other value 1. */
int kt_take(int every);
/* n outside sanitizer mode, else min(n, small). */
int64_t kt_size(int64_t n, int64_t small);

/* Independent conversions (round to nearest even, overflow to inf). */
uint16_t kt_to_f16(double x);
uint16_t kt_to_bf16(double x);
double kt_from_f16(uint16_t h);
double kt_from_bf16(uint16_t b);

/* Element i of a host buffer of dtype dt, as double / as int64 (bool 0/1). */
double kt_get(const void *buf, kg_dtype dt, int64_t i);
int64_t kt_get_i(const void *buf, kg_dtype dt, int64_t i);
/* Stores v rounded to dt (floats) / wrapped to dt's width (integers). */
void kt_set(void *buf, kg_dtype dt, int64_t i, double v);
void kt_set_i(void *buf, kg_dtype dt, int64_t i, int64_t v);
/* v rounded to dt and back: what a correct kernel can at best return. */
double kt_round(kg_dtype dt, double v);
int kt_is_float(kg_dtype dt);

/* PyTorch's default tolerances per float dtype (TESTING.md's floor). */
void kt_tolerance(kg_dtype dt, double *rtol, double *atol);
/* 1 when got matches want: NaN only with NaN, inf only with the same inf,
   else |got - want| <= atol + rtol * |want|. */
int kt_close(double got, double want, double rtol, double atol);

/* Opens device 0, or skips the test (cr_skip_test) with the reason when
   this machine has no usable CUDA device. */
kg_context *kt_open_gpu(void);

/* Device buffer helpers that fail the test (with kg_errmsg) on error. */
void *kt_alloc(kg_context *ctx, size_t bytes);
void kt_upload(kg_context *ctx, void *dev, const void *host, size_t bytes);
void kt_download(kg_context *ctx, void *host, const void *dev, size_t bytes);

/* A shape literal: KT_SHAPE(2, 3). */
#define KT_SHAPE(...) ((const int64_t[]){__VA_ARGS__})
/* A fake device address for validation tests: every such call fails on the
   host before anything is dereferenced. */
#define KT_DEV(x) ((void *)(uintptr_t)(0x10000000u + (x)))

/* Hides the GPU (CUDA_VISIBLE_DEVICES="", so the same on every machine) and
   returns a context that failed to open with KG_ERR_NO_DEVICE: it still
   validates calls, which is what the validation tests exercise. */
kg_context *kt_open_without_device(void);

/* Asserts that `call` returns `code` with exactly the message `text`. */
#define KT_EXPECT(ctx, call, code, text)                                                                               \
    do {                                                                                                               \
        kg_status kt_st_ = (call);                                                                                     \
        cr_assert_eq(kt_st_, code, "%s returned %s, want %s: %s", #call, kg_status_name(kt_st_), kg_status_name(code), \
                     kg_errmsg(ctx));                                                                                  \
        cr_assert_str_eq(kg_errmsg(ctx), text);                                                                        \
    } while (0)

/* Asserts st == KG_OK, printing the context's message otherwise. */
#define KT_OK(ctx, call)                                                                                               \
    do {                                                                                                               \
        kg_status kt_st_ = (call);                                                                                     \
        cr_assert_eq(kt_st_, KG_OK, "%s -> %s: %s (seed %llu)", #call, kg_status_name(kt_st_), kg_errmsg(ctx),         \
                     (unsigned long long)kt_seed());                                                                   \
    } while (0)

#endif
