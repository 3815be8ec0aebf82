/*
 * test_layout.c - the shared geometry (extent, overlap, alignment, finite
 * parameters), broadcasting, coalescing and the fast division the 32-bit
 * kernels use: pure host logic, checked against direct computation.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kg_device.cuh" /* the division the kernels run, host side */
#include "kg_test.h"
#include "layout.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

static kg_tensor view(int ndim, const int64_t *shape, const int64_t *strides)
{
    kg_tensor t;
    memset(&t, 0, sizeof t);
    t.data = (void *)(uintptr_t)0x100000;
    t.dtype = KG_F32;
    t.ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        t.shape[d] = shape[d];
        t.strides[d] = strides[d];
    }
    return t;
}

static kg_tensor dense(int ndim, const int64_t *shape)
{
    return kg_tensor_contiguous((void *)(uintptr_t)0x100000, KG_F32, ndim, shape);
}

Test(broadcast, testing_md_pairs)
{
    static const struct {
        int na, nb, nr;
        int64_t a[3], b[3], r[3];
    } cases[] = {
        {1, 0, 1, {1}, {0}, {1}},
        {1, 0, 1, {2}, {0}, {2}},
        {1, 1, 1, {1}, {2}, {2}},
        {2, 1, 2, {2, 1}, {2}, {2, 2}},
        {2, 1, 2, {1, 2}, {2}, {1, 2}},
        {2, 1, 2, {3, 2}, {2}, {3, 2}},
        {3, 1, 3, {1, 3, 2}, {2}, {1, 3, 2}},
        {3, 2, 3, {1, 3, 2}, {3, 2}, {1, 3, 2}},
        {3, 2, 3, {3, 1, 2}, {3, 2}, {3, 3, 2}},
        {3, 0, 3, {2, 3, 2}, {0}, {2, 3, 2}},
        {3, 3, 3, {3, 1, 2}, {1, 3, 2}, {3, 3, 2}},
        {3, 3, 3, {0, 1, 3}, {0, 10, 3}, {0, 10, 3}},
    };
    const char *names[] = {"a", "b"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kg_tensor a = dense(cases[i].na, cases[i].a), b = dense(cases[i].nb, cases[i].b);
        const kg_tensor *in[] = {&a, &b};
        int nd = -1;
        int64_t shape[KG_MAX_DIMS];
        cr_assert_eq(kg_broadcast_shapes(NULL, in, names, 2, &nd, shape), KG_OK, "case %zu", i);
        cr_assert_eq(nd, cases[i].nr, "case %zu", i);
        for (int d = 0; d < nd; d++)
            cr_assert_eq(shape[d], cases[i].r[d], "case %zu dim %d", i, d);
    }
}

Test(broadcast, strides_are_zero_along_broadcast_dims)
{
    kg_tensor b = dense(2, SHAPE(3, 1));
    int64_t st[3];
    kg_broadcast_strides(&b, 3, SHAPE(2, 3, 4), st);
    cr_assert_eq(st[0], 0);
    cr_assert_eq(st[1], 1);
    cr_assert_eq(st[2], 0);
}

Test(coalesce, contiguous_becomes_one_dim)
{
    kg_tensor a = dense(3, SHAPE(2, 3, 4)), o = dense(3, SHAPE(2, 3, 4));
    const kg_tensor *in[] = {&a};
    kg_layout L;
    kg_layout_build(&L, &o, in, 1);
    cr_assert_eq(L.ndim, 1);
    cr_assert_eq(L.size[0], 24);
    cr_assert_eq(L.stride[0][0], 1);
    cr_assert_eq(L.stride[1][0], 1);
}

Test(coalesce, size_one_dims_vanish_and_scalars_have_no_dims)
{
    kg_tensor a = dense(4, SHAPE(1, 5, 1, 7)), o = dense(4, SHAPE(1, 5, 1, 7));
    const kg_tensor *in[] = {&a};
    kg_layout L;
    kg_layout_build(&L, &o, in, 1);
    cr_assert_eq(L.ndim, 1);
    cr_assert_eq(L.size[0], 35);
    kg_tensor s = dense(0, NULL), so = dense(0, NULL);
    const kg_tensor *sin_[] = {&s};
    kg_layout_build(&L, &so, sin_, 1);
    cr_assert_eq(L.ndim, 0);
}

Test(coalesce, row_broadcast_keeps_two_dims)
{
    kg_tensor a = dense(2, SHAPE(4096, 4096)), b = dense(1, SHAPE(4096)), o = dense(2, SHAPE(4096, 4096));
    const kg_tensor *in[] = {&a, &b};
    kg_layout L;
    kg_layout_build(&L, &o, in, 2);
    cr_assert_eq(L.ndim, 2);
    cr_assert_eq(L.size[0], 4096);
    cr_assert_eq(L.size[1], 4096);
    cr_assert_eq(L.stride[2][0], 1);
    cr_assert_eq(L.stride[2][1], 0);
    cr_assert_eq(L.stride[1][1], 4096);
}

Test(coalesce, dims_follow_the_output_order)
{
    /* out transposed, input contiguous: the output's unit stride goes inside */
    kg_tensor o = view(2, SHAPE(3, 5), SHAPE(1, 3)), a = dense(2, SHAPE(3, 5));
    const kg_tensor *in[] = {&a};
    kg_layout L;
    kg_layout_build(&L, &o, in, 1);
    cr_assert_eq(L.ndim, 2);
    cr_assert_eq(L.size[0], 3);
    cr_assert_eq(L.stride[0][0], 1);
    cr_assert_eq(L.stride[1][0], 5);
    /* both transposed the same way: one dense dim */
    kg_tensor at = view(2, SHAPE(3, 5), SHAPE(1, 3));
    const kg_tensor *in2[] = {&at};
    kg_layout_build(&L, &o, in2, 1);
    cr_assert_eq(L.ndim, 1);
    cr_assert_eq(L.size[0], 15);
}

Test(coalesce, every_other_element)
{
    /* t[:, ::2] of a [4,12]: rows of 6 at stride 2, 12 apart: one dim of stride 2 */
    kg_tensor a = view(2, SHAPE(4, 6), SHAPE(12, 2)), o = dense(2, SHAPE(4, 6));
    const kg_tensor *in[] = {&a};
    kg_layout L;
    kg_layout_build(&L, &o, in, 1);
    cr_assert_eq(L.ndim, 1);
    cr_assert_eq(L.stride[1][0], 2);
    /* of a [4,13]: rows no longer chain */
    a = view(2, SHAPE(4, 6), SHAPE(13, 2));
    kg_layout_build(&L, &o, in, 1);
    cr_assert_eq(L.ndim, 2);
    cr_assert_eq(L.stride[1][0], 2);
    cr_assert_eq(L.stride[1][1], 13);
}

Test(coalesce, offsets_match_direct_indexing)
{
    /* For random permuted/strided/broadcast views, walking the coalesced
       layout visits the same (out, in) offset pairs as the original. */
    uint64_t rng = kt_seed();
    for (int trial = 0; trial < 200; trial++) {
        int nd = 1 + (int)(kt_next(&rng) % 4);
        int64_t shape[4], ost[4], ist[4];
        int64_t n = 1;
        for (int d = 0; d < nd; d++) {
            shape[d] = 1 + (int64_t)(kt_next(&rng) % 4);
            n *= shape[d];
        }
        /* out: a random permutation of dense strides */
        int perm[4] = {0, 1, 2, 3};
        for (int d = nd - 1; d > 0; d--) {
            int j = (int)(kt_next(&rng) % (uint64_t)(d + 1)), x = perm[d];
            perm[d] = perm[j];
            perm[j] = x;
        }
        int64_t s = 1;
        for (int i = nd - 1; i >= 0; i--) {
            ost[perm[i]] = s;
            s *= shape[perm[i]];
        }
        for (int d = 0; d < nd; d++)
            ist[d] = (kt_next(&rng) % 3 == 0) ? 0 : (int64_t)(kt_next(&rng) % 20);
        kg_tensor o = view(nd, shape, ost), a = view(nd, shape, ist);
        const kg_tensor *in[] = {&a};
        kg_layout L;
        kg_layout_build(&L, &o, in, 1);
        int64_t ln = 1;
        for (int d = 0; d < L.ndim; d++)
            ln *= L.size[d];
        cr_assert_eq(ln, n, "trial %d (seed %llu)", trial, (unsigned long long)kt_seed());
        /* each output offset maps to the same input offset both ways */
        int64_t map[256];
        for (int i = 0; i < 256; i++)
            map[i] = -1;
        for (int64_t i = 0; i < n; i++) {
            int64_t r = i, oo = 0, io = 0;
            for (int d = nd - 1; d >= 0; d--) {
                int64_t m = r % shape[d];
                r /= shape[d];
                oo += m * ost[d];
                io += m * ist[d];
            }
            map[oo] = io;
        }
        /* and the coalesced walk visits every output offset exactly once
           (a walk that repeats one output and skips another, with matching
           input offsets, would pass the comparison alone) */
        int seen[256] = {0};
        for (int64_t i = 0; i < n; i++) {
            int64_t r = i, oo = 0, io = 0;
            for (int d = 0; d < L.ndim; d++) {
                int64_t m = r % L.size[d];
                r /= L.size[d];
                oo += m * L.stride[0][d];
                io += m * L.stride[1][d];
            }
            cr_assert(oo >= 0 && oo < n, "trial %d element %lld: out offset %lld outside [0, %lld) (seed %llu)", trial,
                      (long long)i, (long long)oo, (long long)n, (unsigned long long)kt_seed());
            cr_assert_eq(seen[oo]++, 0, "trial %d: out offset %lld visited twice (seed %llu)", trial, (long long)oo,
                         (unsigned long long)kt_seed());
            cr_assert_eq(map[oo], io, "trial %d element %lld (seed %llu)", trial, (long long)i,
                         (unsigned long long)kt_seed());
        }
    }
}

Test(divmod, magic_division_is_exact)
{
    uint64_t rng = kt_seed();
    for (uint32_t d = 1; d < 3000; d++) {
        uint32_t magic, shift;
        kg_divmod_magic(d, &magic, &shift);
        for (int t = 0; t < 64; t++) {
            uint32_t r = (uint32_t)(kt_next(&rng) & 0x7fffffffu);
            if (t < 4)
                r = (uint32_t[]){0, d - 1, d, 0x7fffffffu}[t];
            uint32_t q = kgd_div_magic(r, magic, shift); /* the kernels' own formula */
            cr_assert_eq(q, r / d, "%u / %u: got %u (seed %llu)", r, d, q, (unsigned long long)kt_seed());
        }
    }
    for (int t = 0; t < 20000; t++) {
        uint32_t d = 1 + (uint32_t)(kt_next(&rng) % 0x7fffffffu);
        uint32_t r = (uint32_t)(kt_next(&rng) & 0x7fffffffu), magic, shift;
        kg_divmod_magic(d, &magic, &shift);
        uint32_t q = kgd_div_magic(r, magic, shift);
        cr_assert_eq(q, r / d, "%u / %u (seed %llu)", r, d, (unsigned long long)kt_seed());
    }
}

Test(fits32, by_element_count_and_by_offset)
{
    kg_layout L = {.nops = 2, .ndim = 1, .size = {1000}, .stride = {{1}, {1}}};
    cr_assert(kg_layout_fits32(&L));
    L.stride[1][0] = 3000000;
    cr_assert_not(kg_layout_fits32(&L), "offsets reach 2^31");
    L.stride[1][0] = 1;
    L.size[0] = (int64_t)1 << 31;
    cr_assert_not(kg_layout_fits32(&L), "2^31 elements");
}

Test(overlap, transposed_outputs_do_not_overlap_themselves)
{
    kg_tensor t = view(3, SHAPE(4, 5, 6), SHAPE(1, 24, 4));
    cr_assert_eq(kg_check_no_self_overlap(NULL, &t, "out"), KG_OK);
    kg_tensor bad = view(2, SHAPE(4, 5), SHAPE(3, 1));
    cr_assert_eq(kg_check_no_self_overlap(NULL, &bad, "out"), KG_ERR_INVALID_ARGUMENT);
}

/* ---- The shared geometry (geometry.h) ------------------------------------- */

Test(geometry, size_and_extent_with_overflow_checks)
{
    int64_t n = -1, bytes = -1;
    kg_tensor t = view(2, SHAPE(3, 4), SHAPE(8, 1)); /* rows of 4 in rows of 8 */
    cr_assert(kgi_tensor_size(&t, &n, &bytes));
    cr_assert(n == 12 && bytes == (2 * 8 + 3 + 1) * 4, "%lld %lld", (long long)n, (long long)bytes);
    t = view(1, SHAPE(INT64_MAX), SHAPE(1));
    cr_assert_not(kgi_tensor_size(&t, &n, &bytes), "4 * (2^63 - 1) bytes");
    t = view(2, SHAPE(3, 0), SHAPE(4, INT64_MAX));
    cr_assert(kgi_tensor_size(&t, &n, &bytes) && n == 0 && bytes == 0, "empty");
    t.strides[0] = INT64_MAX; /* empty, but 2 * INT64_MAX: refused like a non-empty one */
    cr_assert_not(kgi_tensor_size(&t, &n, &bytes));
    t = view(1, SHAPE(5), SHAPE(0));
    cr_assert(kgi_tensor_size(&t, &n, &bytes) && n == 5 && bytes == 4, "broadcast: one element's bytes");
    t.ndim = 9;
    cr_assert_not(kgi_tensor_size(&t, &n, &bytes));
    t = view(1, SHAPE(5), SHAPE(-1));
    cr_assert_not(kgi_tensor_size(&t, &n, &bytes));
    cr_assert_not(kgi_tensor_size(NULL, &n, &bytes));
}

Test(geometry, ranges_and_disjointness)
{
    kg_tensor a = view(1, SHAPE(4), SHAPE(1)), b = a;
    kgi_range r = kgi_tensor_range(&a);
    cr_assert(r.lo == 0x100000 && r.hi == 0x100000 + 16);
    b.data = (char *)a.data + 16; /* adjacent, not overlapping */
    cr_assert_not(kgi_ranges_overlap(kgi_tensor_range(&a), kgi_tensor_range(&b)));
    cr_assert_eq(kgi_check_disjoint(NULL, "op", &a, "a", &b, "b"), KG_OK);
    b.data = (char *)a.data + 12;
    cr_assert(kgi_ranges_overlap(kgi_tensor_range(&a), kgi_tensor_range(&b)));
    kg_context *ctx = kt_open_without_device();
    cr_assert_eq(kgi_check_disjoint(ctx, "op", &a, "a", &b, "b"), KG_ERR_INVALID_ARGUMENT);
    cr_assert_str_eq(kg_errmsg(ctx), "invalid argument: op: a overlaps b (bytes [0x100000, 0x100010) and [0x10000c, "
                                     "0x10001c))");
    /* an empty tensor meets nothing, even at the same address */
    kg_tensor e = view(1, SHAPE(0), SHAPE(1));
    cr_assert_eq(kgi_check_disjoint(ctx, "op", &a, "a", &e, "e"), KG_OK);
    kg_close(ctx);
}

Test(geometry, alignment_and_finite_parameters)
{
    kg_context *ctx = kt_open_without_device();
    kg_tensor a = view(1, SHAPE(4), SHAPE(1));
    cr_assert_eq(kgi_check_aligned(ctx, "op", &a, "a", 16), KG_OK);
    a.data = (char *)a.data + 4;
    cr_assert_eq(kgi_check_aligned(ctx, "op", &a, "a", 16), KG_ERR_INVALID_ARGUMENT);
    cr_assert_str_eq(kg_errmsg(ctx), "invalid argument: op: a's data 0x100004 is not 16-byte aligned");
    a.shape[0] = 0;
    cr_assert_eq(kgi_check_aligned(ctx, "op", &a, "a", 16), KG_OK, "empty: nothing is read");
    cr_assert_eq(kgi_check_finite(ctx, "attention", "scale", 0.125, FLT_MAX), KG_OK);
    cr_assert_eq(kgi_check_finite(ctx, "attention", "scale", -FLT_MAX, FLT_MAX), KG_OK);
    cr_assert_eq(kgi_check_finite(ctx, "attention", "scale", 3.5e38, FLT_MAX), KG_ERR_INVALID_ARGUMENT);
    cr_assert_str_eq(kg_errmsg(ctx), "invalid argument: attention: scale is 3.5e+38 (it must be finite and at most "
                                     "3.40282e+38 in magnitude, the largest float)");
    /* a family picks the limit its kernel needs (e.g. scale * log2(e) must stay finite) */
    cr_assert_eq(kgi_check_finite(ctx, "attention", "scale", 2.4e38, FLT_MAX / 1.4426950408889634),
                 KG_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kgi_check_finite(ctx, "attention", "scale", NAN, FLT_MAX), KG_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kgi_check_finite(ctx, "attention", "scale", -INFINITY, DBL_MAX), KG_ERR_INVALID_ARGUMENT);
    kg_close(ctx);
}

Test(geometry, coalescing_never_overflows_on_huge_strides)
{
    /* an input whose next stride would be stride * size = 2^63: no merge */
    kg_tensor out = view(2, SHAPE(2, 2), SHAPE(2, 1));
    kg_tensor in = view(2, SHAPE(2, 2), SHAPE((int64_t)1 << 61, (int64_t)1 << 62));
    in.dtype = KG_U8;
    const kg_tensor *ins[] = {&in};
    kgi_layout L;
    kgi_layout_build(&L, &out, ins, 1);
    cr_assert_eq(L.ndim, 2);
}
