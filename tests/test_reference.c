/*
 * test_reference.c - the CPU reference generated from the catalogue's
 * expressions, against values computed by hand. Every op has cases; the
 * coverage test fails when an op is added to the catalogue without them.
 * The GPU tests compare with this reference (tests/TESTING.md, "Rules" and
 * "Tolerances"), so it is checked against values nobody computed with it.
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
