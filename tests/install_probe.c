/*
 * install_probe.c - a user's program, built by tests/test_install.sh against
 * an installed kgen through pkg-config alone (once static, once shared). It
 * checks what a program can see from outside: the version agrees with the
 * headers, the bundle is there, errors come back with their messages, DLPack
 * converts, and a device is used if there is one (else KG_ERR_NO_DEVICE).
 * Prints "probe ok" and exits 0, or says what is wrong and exits 1.
 */
#include <stdio.h>
#include <string.h>

#include "kg_dlpack.h"
#include "kgen.h"

static int fails;

static void expect(int ok, const char *what)
{
    if (!ok) {
        printf("probe: FAILED: %s\n", what);
        fails++;
    }
}

int main(void)
{
    int major, minor, patch, kernels, modules;
    size_t bytes;
    const char *v = kg_version(&major, &minor, &patch);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", KG_VERSION_MAJOR, KG_VERSION_MINOR, KG_VERSION_PATCH);
    expect(major == KG_VERSION_MAJOR && minor == KG_VERSION_MINOR && patch == KG_VERSION_PATCH && !strcmp(v, want),
           "kg_version() agrees with the KG_VERSION_* macros");
    const char *archs = kg_bundle_info(&kernels, &modules, &bytes);
    expect(kernels > 0 && modules > 0 && bytes > 0 && strstr(archs, "sm_"), "kg_bundle_info() describes a bundle");
    printf("kgen %s: %d kernels, %d modules, %zu bytes (%s)\n", v, kernels, modules, bytes, archs);

    kg_context *ctx;
    kg_status st = kg_open(&ctx, 0);
    const int opened = st == KG_OK;
    expect(st == KG_OK || st == KG_ERR_NO_DEVICE, "kg_open succeeds or reports KG_ERR_NO_DEVICE");
    printf("kg_open: %s%s%s\n", kg_status_name(st), st ? ": " : "", kg_errmsg(ctx));

    /* validation answers before any device call, with or without a GPU */
    float *fake = (float *)(uintptr_t)0x10000000u;
    kg_tensor a = kg_tensor_contiguous(fake, KG_F32, 2, (const int64_t[]){2, 3});
    kg_tensor b = kg_tensor_contiguous(fake + 64, KG_F32, 1, (const int64_t[]){4});
    kg_tensor c = kg_tensor_contiguous(fake + 128, KG_F32, 2, (const int64_t[]){2, 3});
    st = kg_add(ctx, &c, &a, &b);
    expect(st == KG_ERR_SHAPE && strstr(kg_errmsg(ctx), "shape mismatch: a is [2,3], b is [4]"),
           "a bad kg_add reports KG_ERR_SHAPE with its shapes");

    DLTensor dl;
    st = kg_tensor_to_dlpack(ctx, &a, &dl);
    kg_tensor back;
    expect(st == KG_OK && kg_tensor_from_dlpack(ctx, &dl, &back) == KG_OK && back.data == a.data &&
               back.dtype == KG_F32 && back.shape[1] == 3 && back.strides[0] == 3,
           "a kg_tensor goes to DLPack and back");
    dl.device.device_type = kDLCPU;
    expect(kg_tensor_from_dlpack(ctx, &dl, &back) == KG_ERR_INVALID_ARGUMENT && strstr(kg_errmsg(ctx), "CPU"),
           "a CPU DLPack tensor is refused");

    int ran = 0;
    if (opened) {
        float host[6] = {1, 2, 3, 4, 5, 6}, out[6];
        void *d;
        expect(kg_malloc(ctx, &d, sizeof host) == KG_OK && kg_copy_in(ctx, d, host, sizeof host) == KG_OK,
               "kg_malloc and kg_copy_in");
        kg_tensor t = kg_tensor_contiguous(d, KG_F32, 1, (const int64_t[]){6});
        expect(kg_mul(ctx, &t, &t, &t) == KG_OK && kg_copy_out(ctx, out, d, sizeof out) == KG_OK, "kg_mul on the GPU");
        for (int i = 0; i < 6; i++)
            expect(out[i] == host[i] * host[i], "x * x");
        kg_free(ctx, d);
        ran = 1;
    }
    kg_close(ctx);
    printf("%s\n", ran ? "ran kg_mul on the GPU" : "no GPU: validation and conversions only");
    if (fails)
        return 1;
    printf("probe ok\n");
    return 0;
}
