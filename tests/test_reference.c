/*
 * test_reference.c - the CPU reference generated from the catalogue's
 * expressions, against values computed by hand. Every op has cases; the
 * coverage test fails when an op is added to the catalogue without them.
 * The GPU tests compare with this reference (tests/TESTING.md, "Rules" and
 * "Tolerances"), so it is checked against values nobody computed with it;
 * so are the tests' own helpers (tests/kg_test.c): the f16/bf16 conversions
 * every pattern and midpoint, kt_round, kt_close and the tolerance floor.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kg_reference.h"
#include "kg_test.h"

#define PI 3.14159265358979323846

typedef struct {
    const char *op;
    double in[3];
    double want;
} fcase;

typedef struct {
    const char *op;
    int64_t in[3];
    int64_t want;
} icase;

static const fcase fcases[] = {
    {"add", {2, 3}, 5},
    {"add", {INFINITY, -INFINITY}, NAN},
    {"sub", {2, 3}, -1},
    {"mul", {-2, 3}, -6},
    {"mul", {0, INFINITY}, NAN},
    {"div", {1, 0}, INFINITY},
    {"div", {-1, 0}, -INFINITY},
    {"div", {0, 0}, NAN},
    {"div", {7, 2}, 3.5},
    {"maximum", {NAN, 1}, NAN},
    {"maximum", {1, NAN}, NAN},
    {"maximum", {-1, 2}, 2},
    {"minimum", {NAN, 1}, NAN},
    {"minimum", {1, NAN}, NAN},
    {"minimum", {-1, 2}, -1},
    {"pow", {2, 10}, 1024},
    {"pow", {-8, 1.0 / 3}, NAN},
    {"pow", {0, 0}, 1},
    {"eq", {1, 1}, 1},
    {"eq", {NAN, NAN}, 0},
    {"ne", {NAN, NAN}, 1},
    {"ne", {1, 1}, 0},
    {"lt", {1, 2}, 1},
    {"lt", {2, 2}, 0},
    {"le", {2, 2}, 1},
    {"le", {NAN, 2}, 0},
    {"gt", {3, 2}, 1},
    {"gt", {-0.0, 0.0}, 0},
    {"ge", {2, 2}, 1},
    {"ge", {1, 2}, 0},
    {"where", {1, 5, 6}, 5},
    {"where", {0, 5, 6}, 6},
    {"neg", {2}, -2},
    {"abs", {-3.5}, 3.5},
    {"abs", {-INFINITY}, INFINITY},
    {"sign", {-2}, -1},
    {"sign", {0}, 0},
    {"sign", {7}, 1},
    {"sign", {NAN}, NAN},
    {"relu", {-1}, 0},
    {"relu", {2.5}, 2.5},
    {"relu", {NAN}, NAN},
    {"exp", {1}, 2.718281828459045},
    {"exp", {-INFINITY}, 0},
    {"log", {1}, 0},
    {"log", {-1}, NAN},
    {"log", {0}, -INFINITY},
    {"sin", {PI / 2}, 1},
    {"sin", {0}, 0},
    {"cos", {0}, 1},
    {"cos", {PI}, -1},
    {"sqrt", {4}, 2},
    {"sqrt", {-1}, NAN},
    {"rsqrt", {4}, 0.5},
    {"rsqrt", {0}, INFINITY},
    {"tanh", {0}, 0},
    {"tanh", {INFINITY}, 1},
    {"sigmoid", {0}, 0.5},
    {"sigmoid", {-INFINITY}, 0},
    {"gelu", {1}, 0.8413447460685429},
    {"gelu", {-1}, -0.15865525393145707},
    {"gelu", {0}, 0},
    {"silu", {1}, 0.7310585786300049},
    {"silu", {0}, 0},
    {"floor", {-1.5}, -2},
    {"floor", {1.5}, 1},
    {"ceil", {-1.5}, -1},
    {"ceil", {1.2}, 2},
    {"round", {2.5}, 2},
    {"round", {3.5}, 4},
    {"round", {-0.5}, -0.0},
    {"reciprocal", {4}, 0.25},
    {"reciprocal", {0}, INFINITY},
    {"copy", {-2.5}, -2.5},
    {"copy", {NAN}, NAN},
};

static const icase icases[] = {
    {"add", {2, 3}, 5},
    {"add", {INT64_MAX, 1}, INT64_MIN},
    {"sub", {2, 3}, -1},
    {"mul", {-2, 3}, -6},
    {"div", {7, 2}, 3},
    {"div", {-7, 2}, -3},
    {"div", {7, -2}, -3},
    {"div", {5, 0}, 0},
    {"div", {INT64_MIN, -1}, INT64_MIN},
    {"maximum", {-1, 2}, 2},
    {"minimum", {-1, 2}, -1},
    {"eq", {1, 1}, 1},
    {"ne", {1, 1}, 0},
    {"lt", {1, 2}, 1},
    {"le", {3, 2}, 0},
    {"gt", {3, 2}, 1},
    {"ge", {1, 2}, 0},
    {"where", {1, 5, 6}, 5},
    {"where", {0, 5, 6}, 6},
    {"neg", {5}, -5},
    {"neg", {INT64_MIN}, INT64_MIN},
    {"abs", {-5}, 5},
    {"abs", {INT64_MIN}, INT64_MIN},
    {"sign", {-9}, -1},
    {"sign", {0}, 0},
    {"sign", {9}, 1},
    {"relu", {-9}, 0},
    {"relu", {9}, 9},
    /* integer power: exact, wrapping; negative exponents (README) */
    {"pow", {2, 10}, 1024},
    {"pow", {-2, 3}, -8},
    {"pow", {0, 0}, 1},
    {"pow", {7, 0}, 1},
    {"pow", {0, 5}, 0},
    {"pow", {3, 40}, -6289078614652622815}, /* 3^40 mod 2^64 */
    {"pow", {2, 64}, 0},
    {"pow", {1, -5}, 1},
    {"pow", {-1, -3}, -1},
    {"pow", {-1, -4}, 1},
    {"pow", {2, -1}, 0},
    {"pow", {0, -1}, 0},
    {"pow", {-5, -2}, 0},
    /* rounding an integer is the identity */
    {"floor", {-7}, -7},
    {"floor", {INT64_MAX}, INT64_MAX},
    {"ceil", {-7}, -7},
    {"ceil", {5}, 5},
    {"round", {-3}, -3},
    {"round", {INT64_MIN}, INT64_MIN},
    {"copy", {-9}, -9},
};

static int op_by_name(const char *name)
{
    for (int op = KG_OP_NONE + 1; op < KG_OP_COUNT; op++)
        if (strcmp(kg_op_get_info((kg_op)op)->name, name) == 0)
            return op;
    cr_assert_fail("no op named %s", name);
    return -1;
}

static int same(double got, double want)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    if (want == 0)
        return got == 0 && signbit(got) == signbit(want);
    return fabs(got - want) <= 1e-15 * fabs(want);
}

Test(reference, float_ops_match_hand_computed_values)
{
    for (size_t i = 0; i < sizeof fcases / sizeof fcases[0]; i++) {
        int op = op_by_name(fcases[i].op);
        cr_assert_not_null(kg_ref_ops[op].f, "%s has no float reference", fcases[i].op);
        double got = kg_ref_ops[op].f(fcases[i].in);
        cr_assert(same(got, fcases[i].want), "%s(%g, %g, %g) = %.17g, want %.17g", fcases[i].op, fcases[i].in[0],
                  fcases[i].in[1], fcases[i].in[2], got, fcases[i].want);
    }
}

Test(reference, integer_ops_match_hand_computed_values)
{
    for (size_t i = 0; i < sizeof icases / sizeof icases[0]; i++) {
        int op = op_by_name(icases[i].op);
        cr_assert_not_null(kg_ref_ops[op].i, "%s has no integer reference", icases[i].op);
        int64_t got = kg_ref_ops[op].i(icases[i].in);
        cr_assert_eq(got, icases[i].want, "%s(%lld, %lld) = %lld, want %lld", icases[i].op, (long long)icases[i].in[0],
                     (long long)icases[i].in[1], (long long)got, (long long)icases[i].want);
    }
}

/* bool results are stored as (x != 0): the integer reference, then that
   wrap, makes add/maximum a logical or, mul/minimum a logical and, and abs,
   sign and the rounding ops the identity. */
Test(reference, bool_ops_are_logical)
{
    static const struct {
        const char *op;
        int64_t want[4]; /* for (a, b) = (0,0), (0,1), (1,0), (1,1); unary: a = 0, 1 */
    } bcases[] = {
        {"add", {0, 1, 1, 1}},   {"mul", {0, 0, 0, 1}},    {"maximum", {0, 1, 1, 1}}, {"minimum", {0, 0, 0, 1}},
        {"abs", {0, 1, -1, -1}}, {"sign", {0, 1, -1, -1}}, {"copy", {0, 1, -1, -1}},
    };
    for (size_t i = 0; i < sizeof bcases / sizeof bcases[0]; i++) {
        const int op = op_by_name(bcases[i].op);
        const kg_op_info *info = kg_op_get_info((kg_op)op);
        cr_assert(info->dtype_mask & (1u << KG_BOOL), "%s does not accept bool", bcases[i].op);
        cr_assert_not_null(kg_ref_ops[op].i);
        for (int v = 0; v < (info->arity == 2 ? 4 : 2); v++) {
            const int64_t in[3] = {info->arity == 2 ? v >> 1 : v, v & 1, 0};
            const int64_t got = kg_ref_ops[op].i(in) != 0;
            cr_assert_eq(got, bcases[i].want[v], "%s(%lld, %lld) on bool = %lld, want %lld", bcases[i].op,
                         (long long)in[0], (long long)in[1], (long long)got, (long long)bcases[i].want[v]);
        }
    }
}

Test(reference, every_op_has_hand_computed_cases)
{
    for (int op = KG_OP_NONE + 1; op < KG_OP_COUNT; op++) {
        const kg_op_info *info = kg_op_get_info((kg_op)op);
        if (op == KG_OP_CAST)
            continue; /* specified in the README, checked by the GPU tests' own reference */
        int f = 0, i = 0;
        for (size_t c = 0; c < sizeof fcases / sizeof fcases[0]; c++)
            f += strcmp(fcases[c].op, info->name) == 0;
        for (size_t c = 0; c < sizeof icases / sizeof icases[0]; c++)
            i += strcmp(icases[c].op, info->name) == 0;
        cr_assert(f > 0, "%s has no float case", info->name);
        const int has_int = (info->dtype_mask >> KG_I32) & 1;
        cr_assert(!has_int || i > 0, "%s accepts integers but has no integer case", info->name);
        cr_assert(has_int || !kg_ref_ops[op].i, "%s has an integer reference but accepts no integer", info->name);
    }
}

/* The sanitizer size mode of kg_test.h: identity outside it; in it the first
   case and then one in `every`, at an offset the seed picks, and min sizes. */
Test(test_helpers, sanitizer_mode_samples_cases_and_shrinks_sizes)
{
    unsetenv("KG_TEST_SANITIZER");
    cr_assert_eq(kt_sanitizer(), 0);
    cr_assert_eq(kt_size(4224, 1100), 4224);
    int all = 0;
    for (int i = 0; i < 40; i++)
        all += kt_take(4);
    cr_assert_eq(all, 40, "outside the mode every case runs");
    setenv("KG_TEST_SANITIZER", "full", 1);
    cr_assert_eq(kt_sanitizer(), 0, "\"full\": sanitizer runs at full size");
    setenv("KG_TEST_SANITIZER", "1", 1);
    cr_assert_eq(kt_sanitizer(), 1);
    cr_assert_eq(kt_size(4224, 1100), 1100);
    cr_assert_eq(kt_size(64, 1100), 64);
    /* the counter is per process: 40 calls made above */
    int taken = 0, first = -1;
    for (int i = 0; i < 40; i++)
        if (kt_take(4)) {
            taken++;
            if (first < 0)
                first = i;
            else
                cr_assert_eq((i - first) % 4, 0, "one call in 4: call %d after %d", i, first);
        }
    cr_assert_eq(taken, 10);
    cr_assert_lt(first, 4);
    /* a tool's factor: racecheck takes one in 8 x every */
    setenv("KG_TEST_SANITIZER", "racecheck", 1);
    taken = 0;
    for (int i = 0; i < 320; i++)
        taken += kt_take(4);
    cr_assert_eq(taken, 10, "racecheck: one call in 32, got %d of 320", taken);
    unsetenv("KG_TEST_SANITIZER");
}

/* ---- the tests' own conversions and comparisons (tests/kg_test.c) ---------
   Every GPU test builds its f16/bf16 inputs with kt_to_f16 / kt_to_bf16,
   reads outputs with kt_from_*, rounds its float64 reference with kt_round
   and compares with kt_close: a bug there would hide a kernel's bug in
   every family at once. They are checked here against values obtained
   another way: f16 through the compiler's _Float16 (IEEE binary16, libgcc's
   correctly rounded conversions), bf16 from its bit layout (the top 16 bits
   of an f32), and round-to-nearest-even at every midpoint between
   neighbouring values. */

static double f16_bits_value(uint16_t h)
{
    _Float16 x;
    memcpy(&x, &h, sizeof x);
    return (double)x;
}

static double bf16_bits_value(uint16_t b)
{
    const uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return (double)f;
}

static int same_bits_value(double got, double want) { return got == want && signbit(got) == signbit(want); }

/* For every pattern of a 16-bit format (value(): its value computed
   independently): decoding gives the value, encoding the value gives the
   pattern back, and between each finite positive or negative pattern h and
   h + 1 (the next one away from zero) the midpoint rounds to the one with
   an even mantissa, a hair below it to h and a hair above to h + 1. */
static void check_16bit_format(const char *name, double (*value)(uint16_t), uint16_t (*to)(double),
                               double (*from)(uint16_t), uint16_t exp_mask)
{
    int nans = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        const uint16_t b = (uint16_t)h;
        const int is_nan = (b & exp_mask) == exp_mask && (b & (uint16_t)~(exp_mask | 0x8000u));
        if (is_nan) {
            nans++;
            cr_assert(isnan(from(b)), "%s %#06x: decodes to %g, want NaN", name, h, from(b));
            continue;
        }
        const double v = value(b);
        cr_assert(same_bits_value(from(b), v), "%s %#06x: decodes to %.17g, want %.17g", name, h, from(b), v);
        cr_assert_eq(to(v), b, "%s: %.17g encodes to %#06x, want %#06x", name, v, to(v), h);
        const uint16_t next = (uint16_t)(b + 1); /* away from zero */
        if (isinf(v) || ((next & exp_mask) == exp_mask && (next & (uint16_t)~(exp_mask | 0x8000u))))
            continue;
        /* the next pattern's value; past the largest finite, the first
           value that would not be rounded down: max + one ulp */
        const double w = isinf(value(next)) ? v + (v - value((uint16_t)(b - 1))) : value(next);
        const double mid = v / 2 + w / 2; /* exact: both are short */
        const uint16_t even = (b & 1) ? next : b;
        cr_assert_eq(to(mid), even, "%s: the midpoint %.17g of %#06x and %#06x encodes to %#06x, want %#06x (even)",
                     name, mid, h, (unsigned)next, to(mid), even);
        cr_assert_eq(to(nextafter(mid, 0)), b, "%s: just below the midpoint %.17g: %#06x, want %#06x", name, mid,
                     to(nextafter(mid, 0)), h);
        cr_assert_eq(to(nextafter(mid, mid > 0 ? INFINITY : -INFINITY)), next,
                     "%s: just above the midpoint %.17g: %#06x, want %#06x", name, mid,
                     to(nextafter(mid, mid > 0 ? INFINITY : -INFINITY)), (unsigned)next);
    }
    cr_assert_gt(nans, 0, "%s: no NaN pattern was checked", name);
    cr_assert(isnan(from(to(NAN))), "%s: NaN does not survive a round trip", name);
    cr_assert(isinf(from(to(1e300))) && from(to(-1e300)) < 0, "%s: overflow is not inf", name);
    cr_assert(same_bits_value(from(to(-0.0)), -0.0), "%s: -0.0 loses its sign", name);
    cr_assert(same_bits_value(from(to(1e-300)), 0.0) && same_bits_value(from(to(-1e-300)), -0.0),
              "%s: underflow is not a signed zero", name);
}

Test(test_helpers, f16_conversions_are_exact_and_round_to_nearest_even)
{
    check_16bit_format("f16", f16_bits_value, kt_to_f16, kt_from_f16, 0x7c00);
    /* hand-known patterns */
    cr_assert_eq(kt_to_f16(1.0), 0x3c00);
    cr_assert_eq(kt_to_f16(65504.0), 0x7bff);
    cr_assert_eq(kt_to_f16(65519.99), 0x7bff);
    cr_assert_eq(kt_to_f16(65520.0), 0x7c00, "65520 is the midpoint to 2^16: rounds to inf");
    cr_assert_eq(kt_to_f16(0x1p-24), 0x0001, "the smallest subnormal");
    cr_assert_eq(kt_to_f16(0x1p-25), 0x0000, "half the smallest subnormal ties to even (zero)");
    cr_assert_eq(kt_to_f16(3 * 0x1p-25), 0x0002);
    cr_assert_eq(kt_to_f16(-2.0), 0xc000);
    /* against the compiler's conversion at random doubles of every magnitude */
    uint64_t rng = kt_seed();
    for (int i = 0; i < 200000; i++) {
        const double d = ldexp(kt_uniform(&rng, -2, 2), (int)(kt_next(&rng) % 48) - 30);
        const _Float16 x = (_Float16)d;
        uint16_t want;
        memcpy(&want, &x, sizeof want);
        cr_assert_eq(kt_to_f16(d), want, "%.17g: %#06x, the compiler's _Float16 %#06x (seed %llu)", d, kt_to_f16(d),
                     want, (unsigned long long)kt_seed());
        cr_assert(same_bits_value(kt_round(KG_F16, d), (double)x), "kt_round(f16, %.17g) = %.17g, want %.17g", d,
                  kt_round(KG_F16, d), (double)x);
    }
}

Test(test_helpers, bf16_conversions_are_exact_and_round_to_nearest_even)
{
    check_16bit_format("bf16", bf16_bits_value, kt_to_bf16, kt_from_bf16, 0x7f80);
    cr_assert_eq(kt_to_bf16(1.0), 0x3f80);
    cr_assert_eq(kt_to_bf16(1.00390625), 0x3f80, "1 + 2^-8, the midpoint of 1 and 1 + 2^-7, ties to even (1)");
    cr_assert_eq(kt_to_bf16(1.01171875), 0x3f82, "1 + 3 * 2^-8 ties to even (1 + 2^-6)");
    cr_assert_eq(kt_to_bf16(-3.0), 0xc040);
    cr_assert_eq(kt_to_bf16(0x1p-133), 0x0001, "the smallest subnormal");
    /* rounded from the double directly, not through f32 (no double rounding):
       1 + 2^-8 + 2^-40 is above the midpoint, but (float) of it is 1 + 2^-8 */
    cr_assert_eq(kt_to_bf16(1.0 + 0x1p-8 + 0x1p-40), 0x3f81);
    cr_assert(same_bits_value(kt_round(KG_BF16, 1.0 + 0x1p-8 + 0x1p-40), 1.0078125));
}

Test(test_helpers, f32_rounding_element_access_and_integer_wrap)
{
    cr_assert_eq(kt_round(KG_F32, 1.0 + 0x1p-24), 1.0, "ties to even");
    cr_assert_eq(kt_round(KG_F32, 1.0 + 0x1p-24 + 0x1p-50), 1.0 + 0x1p-23);
    cr_assert_eq(kt_round(KG_F64, 1.0 + 0x1p-50), 1.0 + 0x1p-50, "f64 is kept as is");
    cr_assert(isinf(kt_round(KG_F32, 3.5e38)));
    unsigned char buf[16];
    kt_set_i(buf, KG_I32, 0, ((int64_t)1 << 32) + 5);
    cr_assert_eq(kt_get_i(buf, KG_I32, 0), 5, "i32 stores wrap");
    kt_set_i(buf, KG_I32, 1, (int64_t)INT32_MAX + 1);
    cr_assert_eq(kt_get_i(buf, KG_I32, 1), INT32_MIN);
    kt_set_i(buf, KG_U8, 0, 256 + 7);
    cr_assert_eq(kt_get_i(buf, KG_U8, 0), 7, "u8 stores wrap");
    kt_set_i(buf, KG_U8, 1, -1);
    cr_assert_eq(kt_get_i(buf, KG_U8, 1), 255);
    kt_set_i(buf, KG_BOOL, 2, 2);
    cr_assert_eq(buf[2], 1, "bool stores 0 or 1");
    buf[3] = 0x40;
    cr_assert_eq(kt_get_i(buf, KG_BOOL, 3), 1, "any non-zero byte reads as true");
    kt_set(buf, KG_I64, 1, -3.75);
    cr_assert_eq(kt_get_i(buf, KG_I64, 1), -3, "a double stored into an integer truncates");
    kt_set(buf, KG_F32, 0, 0.1);
    cr_assert_eq(kt_get(buf, KG_F32, 0), (double)0.1f);
    kt_set(buf, KG_BF16, 0, -2.5);
    cr_assert_eq(((uint16_t *)buf)[0], 0xc020);
    cr_assert_eq(kt_get(buf, KG_BF16, 0), -2.5);
}

/* kt_close is |got - want| <= atol + rtol |want|, NaN only with NaN, an
   infinity only with the same one; kt_tolerance is TESTING.md's table. */
Test(test_helpers, kt_close_and_the_tolerance_floor)
{
    cr_assert(kt_close(NAN, NAN, 0, 0));
    cr_assert_not(kt_close(NAN, 1, 1, 1e300));
    cr_assert_not(kt_close(1, NAN, 1, 1e300));
    cr_assert(kt_close(INFINITY, INFINITY, 0, 0));
    cr_assert_not(kt_close(-INFINITY, INFINITY, 1, 1e300));
    cr_assert_not(kt_close(1e308, INFINITY, 1, 1e300));
    cr_assert_not(kt_close(INFINITY, 1e308, 1, 1e300));
    cr_assert(kt_close(1.5, 1.0, 0.25, 0.25), "exactly at the bound");
    cr_assert_not(kt_close(1.5 + 0x1p-40, 1.0, 0.25, 0.25), "just past the bound");
    cr_assert(kt_close(-1.5, -1.0, 0.25, 0.25), "|want| scales rtol");
    cr_assert_not(kt_close(0.0, 1e-300, 0, 0), "zero tolerance is exact");
    static const struct {
        kg_dtype dt;
        double rtol, atol;
    } floor_[] = {{KG_F64, 1e-7, 1e-7}, {KG_F32, 1.3e-6, 1e-5}, {KG_F16, 1e-3, 1e-5},
                  {KG_BF16, 1.6e-2, 1e-5}, {KG_I32, 0, 0},       {KG_I64, 0, 0},
                  {KG_U8, 0, 0},           {KG_BOOL, 0, 0}};
    for (size_t i = 0; i < sizeof floor_ / sizeof floor_[0]; i++) {
        double r = -1, a = -1;
        kt_tolerance(floor_[i].dt, &r, &a);
        cr_assert(r == floor_[i].rtol && a == floor_[i].atol, "%s: rtol %g atol %g, TESTING.md says %g %g",
                  kg_dtype_name(floor_[i].dt), r, a, floor_[i].rtol, floor_[i].atol);
    }
}
