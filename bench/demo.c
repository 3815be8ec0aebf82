/*
 * demo.c - the README's first command runs this: a short tour of real ops on
 * the GPU with their results, or, where there is no GPU, what was built and
 * why no GPU work ran. It sees only the public headers, as a user's program does.
 */
#include <math.h>
#include <stdio.h>

#include "kgen.h"

static int check(kg_context *ctx, kg_status st, const char *what)
{
    if (st != KG_OK)
        fprintf(stderr, "%s failed: %s: %s\n", what, kg_status_name(st), kg_errmsg(ctx));
    return st == KG_OK;
}

static void print_row(const char *label, const float *v, int n)
{
    printf("  %-28s [", label);
    for (int i = 0; i < n; i++)
        printf(i ? ", %.4g" : "%.4g", v[i]);
    printf("]\n");
}

int main(void)
{
    int kernels, modules;
    size_t bundle;
    const char *archs = kg_bundle_info(&kernels, &modules, &bundle);
    printf("kgen %s: %d kernels in %d modules, bundle %.1f MiB embedded (%s)\n", kg_version(NULL, NULL, NULL), kernels,
           modules, (double)bundle / (1 << 20), archs);

    kg_context *ctx;
    kg_status st = kg_open(&ctx, 0);
    if (st != KG_OK) {
        printf("no GPU work ran: %s (%s)\n", kg_errmsg(ctx), kg_status_name(st));
        printf("the library and this demo are built; `ninja test` builds and runs the tests (GPU tests skip here),\n"
               "`ninja` builds everything; run this program on a machine with a CUDA GPU of compute capability 8.0\n"
               "or newer for GPU work.\n");
        kg_close(ctx);
        return 0;
    }
    char name[128];
    int ccM, ccm, sms;
    if (!check(ctx, kg_device_info(ctx, name, sizeof name, &ccM, &ccm, &sms), "kg_device_info"))
        return 1;
    printf("device 0: %s (sm_%d%d, %d SMs)\n", name, ccM, ccm, sms);

    enum { N = 6 };
    const float x[N] = {-2.0f, -0.5f, 0.0f, 0.5f, 1.0f, 3.0f}, y[N] = {1, 2, 3, 4, 5, 6};
    const int64_t shape[1] = {N}, mat[2] = {2, 3}, row[1] = {3};
    void *dx, *dy, *dz;
    if (!check(ctx, kg_malloc(ctx, &dx, sizeof x), "kg_malloc") ||
        !check(ctx, kg_malloc(ctx, &dy, sizeof y), "kg_malloc") ||
        !check(ctx, kg_malloc(ctx, &dz, sizeof x), "kg_malloc") ||
        !check(ctx, kg_copy_in(ctx, dx, x, sizeof x), "kg_copy_in") ||
        !check(ctx, kg_copy_in(ctx, dy, y, sizeof y), "kg_copy_in"))
        return 1;
    kg_tensor tx = kg_tensor_contiguous(dx, KG_F32, 1, shape), ty = kg_tensor_contiguous(dy, KG_F32, 1, shape),
              tz = kg_tensor_contiguous(dz, KG_F32, 1, shape);
    float z[N];
    print_row("x", x, N);
    print_row("y", y, N);
    struct {
        const char *label;
        kg_status (*unary)(kg_context *, const kg_tensor *, const kg_tensor *);
        kg_status (*binary)(kg_context *, const kg_tensor *, const kg_tensor *, const kg_tensor *);
    } ops[] = {{"x + y", NULL, kg_add},    {"x * y", NULL, kg_mul},          {"exp(x)", kg_exp, NULL},
               {"gelu(x)", kg_gelu, NULL}, {"sigmoid(x)", kg_sigmoid, NULL}, {NULL, NULL, NULL}};
    for (size_t i = 0; i + 1 < sizeof ops / sizeof ops[0]; i++) {
        st = ops[i].unary ? ops[i].unary(ctx, &tz, &tx) : ops[i].binary(ctx, &tz, &tx, &ty);
        if (!check(ctx, st, ops[i].label) || !check(ctx, kg_copy_out(ctx, z, dz, sizeof z), "kg_copy_out"))
            return 1;
        print_row(ops[i].label, z, N);
    }
    /* broadcasting: a [2,3] matrix plus a [3] row */
    kg_tensor m = kg_tensor_contiguous(dy, KG_F32, 2, mat), r = kg_tensor_contiguous(dx, KG_F32, 1, row),
              mo = kg_tensor_contiguous(dz, KG_F32, 2, mat);
    if (!check(ctx, kg_add(ctx, &mo, &m, &r), "kg_add broadcast") ||
        !check(ctx, kg_copy_out(ctx, z, dz, sizeof z), "kg_copy_out"))
        return 1;
    print_row("[2,3] y + [3] x[:3]", z, N);
    /* an error, reported with its reason */
    kg_tensor bad = kg_tensor_contiguous(dx, KG_F32, 1, (const int64_t[]){4});
    st = kg_add(ctx, &tz, &tx, &bad);
    printf("  a bad call reports:          %s: %s\n", kg_status_name(st), kg_errmsg(ctx));
    kg_free(ctx, dx);
    kg_free(ctx, dy);
    kg_free(ctx, dz);
    kg_close(ctx);
    return 0;
}
