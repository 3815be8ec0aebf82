/*
 * kg_test.c - shared test helpers (see kg_test.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kg_test.h"

uint64_t kt_seed(void)
{
    static uint64_t seed;
    static int set;
    if (!set) {
        const char *s = getenv("KG_TEST_SEED");
        seed = s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
        set = 1;
    }
    return seed;
}

int kt_sanitizer(void)
{
    const char *s = getenv("KG_TEST_SANITIZER");
    return s && *s && strcmp(s, "0") != 0 && strcmp(s, "full") != 0;
}

/* How much slower than memcheck's ordinary pace each tool runs the tests'
   kernels (H200, 2026-12-01): racecheck checks every shared-memory access. */
static int tool_factor(void)
{
    const char *s = getenv("KG_TEST_SANITIZER");
    if (!kt_sanitizer())
        return 1;
    return !strcmp(s, "racecheck") ? 8 : !strcmp(s, "initcheck") ? 3 : !strcmp(s, "memcheck") || !strcmp(s, "synccheck") ? 2 : 1;
}

int kt_take(int every)
{
    static int64_t calls;
    const int64_t i = calls++;
    if (!kt_sanitizer() || every <= 1 || i == 0)
        return 1;
    const uint64_t n = (uint64_t)every * (uint64_t)tool_factor();
    return (uint64_t)(i - 1 + (int64_t)(kt_seed() % n)) % n == 0;
}

int64_t kt_size(int64_t n, int64_t small) { return kt_sanitizer() && small < n ? small : n; }

uint64_t kt_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double kt_uniform(uint64_t *state, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(kt_next(state) >> 11) * 0x1.0p-53);
}

/* Rounds x to a binary float with `mant` explicit mantissa bits and
   exponent range [emin, emax] (normal numbers), subnormals below. */
static double round_to(double x, int mant, int emin, int emax)
{
    if (isnan(x) || isinf(x) || x == 0)
        return x;
    int e;
    frexp(x, &e); /* x = m * 2^e, 0.5 <= |m| < 1 */
    e -= 1;       /* x = M * 2^e, 1 <= |M| < 2 */
    if (e < emin)
        e = emin;
    const double q = ldexp(1.0, e - mant); /* spacing at this exponent */
    const double r = nearbyint(x / q) * q; /* ties to even under the default rounding mode */
    const double max = ldexp(2.0 - ldexp(1.0, -mant), emax);
    if (fabs(r) > max)
        return copysign(INFINITY, x);
    return r;
}

static uint16_t pack(double r, int mant, int ebits, int bias)
{
    uint16_t sign = signbit(r) ? (uint16_t)(1u << 15) : 0;
    if (isnan(r))
        return (uint16_t)(sign | (((1u << ebits) - 1) << mant) | (1u << (mant - 1)));
    r = fabs(r);
    if (isinf(r))
        return (uint16_t)(sign | (((1u << ebits) - 1) << mant));
    if (r == 0)
        return sign;
    int e;
    frexp(r, &e);
    e -= 1;
    if (e < 1 - bias) /* subnormal */
        return (uint16_t)(sign | (uint16_t)(r / ldexp(1.0, 1 - bias - mant)));
    const double frac = r / ldexp(1.0, e) - 1.0;
    return (uint16_t)(sign | ((uint16_t)(e + bias) << mant) | (uint16_t)(frac * (1 << mant)));
}

static double unpack(uint16_t h, int mant, int ebits, int bias)
{
    const int sign = h >> 15;
    const int e = (h >> mant) & ((1 << ebits) - 1);
    const int f = h & ((1 << mant) - 1);
    double v;
    if (e == (1 << ebits) - 1)
        v = f ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)f, 1 - bias - mant);
    else
        v = ldexp(1.0 + (double)f / (1 << mant), e - bias);
    return sign ? -v : v;
}

uint16_t kt_to_f16(double x) { return pack(round_to(x, 10, -14, 15), 10, 5, 15); }
uint16_t kt_to_bf16(double x) { return pack(round_to(x, 7, -126, 127), 7, 8, 127); }
double kt_from_f16(uint16_t h) { return unpack(h, 10, 5, 15); }
double kt_from_bf16(uint16_t b) { return unpack(b, 7, 8, 127); }

int kt_is_float(kg_dtype dt) { return dt == KG_F32 || dt == KG_F64 || dt == KG_F16 || dt == KG_BF16; }

double kt_get(const void *buf, kg_dtype dt, int64_t i)
{
    switch (dt) {
    case KG_F32: return ((const float *)buf)[i];
    case KG_F64: return ((const double *)buf)[i];
    case KG_F16: return kt_from_f16(((const uint16_t *)buf)[i]);
    case KG_BF16: return kt_from_bf16(((const uint16_t *)buf)[i]);
    default: return (double)kt_get_i(buf, dt, i);
    }
}

int64_t kt_get_i(const void *buf, kg_dtype dt, int64_t i)
{
    switch (dt) {
    case KG_I32: return ((const int32_t *)buf)[i];
    case KG_I64: return ((const int64_t *)buf)[i];
    case KG_U8: return ((const uint8_t *)buf)[i];
    case KG_BOOL: return ((const uint8_t *)buf)[i] != 0;
    default: return (int64_t)kt_get(buf, dt, i);
    }
}

void kt_set(void *buf, kg_dtype dt, int64_t i, double v)
{
    switch (dt) {
    case KG_F32: ((float *)buf)[i] = (float)v; break;
    case KG_F64: ((double *)buf)[i] = v; break;
    case KG_F16: ((uint16_t *)buf)[i] = kt_to_f16(v); break;
    case KG_BF16: ((uint16_t *)buf)[i] = kt_to_bf16(v); break;
    default: kt_set_i(buf, dt, i, (int64_t)v); break;
    }
}

void kt_set_i(void *buf, kg_dtype dt, int64_t i, int64_t v)
{
    switch (dt) {
    case KG_I32: ((int32_t *)buf)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    case KG_I64: ((int64_t *)buf)[i] = v; break;
    case KG_U8: ((uint8_t *)buf)[i] = (uint8_t)(uint64_t)v; break;
    case KG_BOOL: ((uint8_t *)buf)[i] = v != 0; break;
    default: kt_set(buf, dt, i, (double)v); break;
    }
}

double kt_round(kg_dtype dt, double v)
{
    switch (dt) {
    case KG_F32: return (double)(float)v;
    case KG_F16: return kt_from_f16(kt_to_f16(v));
    case KG_BF16: return kt_from_bf16(kt_to_bf16(v));
    default: return v;
    }
}

void kt_tolerance(kg_dtype dt, double *rtol, double *atol)
{
    switch (dt) {
    case KG_F32:
        *rtol = 1.3e-6;
        *atol = 1e-5;
        break;
    case KG_F16:
        *rtol = 1e-3;
        *atol = 1e-5;
        break;
    case KG_BF16:
        *rtol = 1.6e-2;
        *atol = 1e-5;
        break;
    case KG_F64:
        *rtol = 1e-7;
        *atol = 1e-7;
        break;
    default:
        *rtol = 0;
        *atol = 0;
        break;
    }
}

int kt_close(double got, double want, double rtol, double atol)
{
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got))
        return got == want;
    return fabs(got - want) <= atol + rtol * fabs(want);
}

kg_context *kt_open_gpu(void)
{
    kg_context *ctx = NULL;
    kg_status st = kg_open(&ctx, 0);
    if (st != KG_OK) {
        /* only the absence of a device skips: any other failure to open one
         * (no kernel image for this GPU, a CUDA error) is a failure */
        char why[600];
        snprintf(why, sizeof why, "%s", kg_errmsg(ctx));
        kg_close(ctx);
        if (st == KG_ERR_NO_DEVICE)
            cr_skip_test("no usable CUDA device: %s", why);
        cr_assert_fail("kg_open(device 0) failed with %s on a machine with a device: %s", kg_status_name(st), why);
    }
    return ctx;
}

kg_context *kt_open_without_device(void)
{
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    kg_context *ctx = NULL;
    kg_status st = kg_open(&ctx, 0);
    cr_assert_eq(st, KG_ERR_NO_DEVICE, "kg_open with no device returned %s: %s", kg_status_name(st), kg_errmsg(ctx));
    return ctx;
}

void *kt_alloc(kg_context *ctx, size_t bytes)
{
    void *p = NULL;
    KT_OK(ctx, kg_malloc(ctx, &p, bytes));
    return p;
}

void kt_upload(kg_context *ctx, void *dev, const void *host, size_t bytes)
{
    KT_OK(ctx, kg_copy_in(ctx, dev, host, bytes));
}

void kt_download(kg_context *ctx, void *host, const void *dev, size_t bytes)
{
    KT_OK(ctx, kg_copy_out(ctx, host, dev, bytes));
}
