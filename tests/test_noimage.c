/*
 * test_noimage.c - a bundle without the running GPU's architecture, built
 * twice (build.ninja's reliability block):
 *
 * test_noimage: linked against a copy of the library whose bundle says it
 * was built for sm_100 only (build/sm100/libkgen_internal.a: archs.c
 * compiled with archs = 100 and PTX 100, every other object the same). On a
 * GPU of another architecture kg_open reports KG_ERR_NO_KERNEL_IMAGE naming
 * both the GPU's architecture and the bundle's list, and the context still
 * validates calls.
 *
 * test_noimage_real (KG_NOIMAGE_REAL): the runtime as shipped (its arch list
 * includes the GPU's, so kg_open succeeds) with a bundle whose every module
 * really is sm_100 machine code and no PTX (build/noimage/kg_bundle.o): the
 * driver itself refuses to load a module, and the call reports
 * KG_ERR_NO_KERNEL_IMAGE with the GPU's architecture, the module and the
 * driver's reason; validation still answers, the error is not sticky, and
 * calls that need no kernel (kg_memset) still run.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "kg_test.h"
#include "kg_core.h"
#include "kg_ops_core.h" /* kg_add */

/* The first device's compute capability; the test skips without a device. */
static void device_arch(int *major, int *minor)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
        cr_skip_test("no usable CUDA device");
    cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, 0);
}

#ifndef KG_NOIMAGE_REAL
Test(noimage, bundle_without_this_gpus_arch)
{
    int major = 0, minor = 0;
    device_arch(&major, &minor);
    if (major * 10 + minor >= 100)
        cr_skip_test("this GPU (sm_%d%d) can run an sm_100 bundle", major, minor);
    kg_context *c = NULL;
    kg_status st = kg_open(&c, 0);
    cr_assert_eq(st, KG_ERR_NO_KERNEL_IMAGE, "%s: %s", kg_status_name(st), kg_errmsg(c));
    char want[128];
    snprintf(want, sizeof want, "no kernel image for sm_%d%d in this bundle (built for sm_100 (+PTX compute_100))",
             major, minor);
    cr_assert_str_eq(kg_errmsg(c), want);
    kg_tensor a = kg_tensor_contiguous(KT_DEV(0), KG_F32, 1, KT_SHAPE(4));
    kg_tensor b = kg_tensor_contiguous(KT_DEV(0x100), KG_F32, 1, KT_SHAPE(5));
    cr_assert_eq(kg_add(c, &a, &a, &b), KG_ERR_SHAPE, "validation still answers: %s", kg_errmsg(c));
    cr_assert_eq(kg_add(c, &a, &a, &a), KG_ERR_NO_KERNEL_IMAGE, "%s", kg_errmsg(c));
    cr_assert_str_eq(kg_errmsg(c), want);
    kg_close(c);
}
#else
Test(noimage, real_bundle_without_this_gpus_machine_code)
{
    int major = 0, minor = 0;
    device_arch(&major, &minor);
    if (major == 10 && minor == 0)
        cr_skip_test("this GPU (sm_100) can run the sm_100 bundle");
    kg_context *c = NULL;
    kg_status st = kg_open(&c, 0);
    cr_assert_eq(st, KG_OK, "kg_open: the arch list names this GPU: %s", kg_errmsg(c));
    float *d = NULL;
    cr_assert_eq(kg_malloc(c, (void **)&d, 64 * sizeof(float)), KG_OK, "%s", kg_errmsg(c));
    kg_tensor a = kg_tensor_contiguous(d, KG_F32, 1, KT_SHAPE(16));
    kg_tensor b = kg_tensor_contiguous(d + 16, KG_F32, 1, KT_SHAPE(17));
    char want[96];
    snprintf(want, sizeof want, "no kernel image for sm_%d%d in this bundle (built for ", major, minor);
    for (int round = 0; round < 2; round++) { /* not sticky: the same answer twice */
        cr_assert_eq(kg_add(c, &a, &a, &b), KG_ERR_SHAPE, "validation still answers: %s", kg_errmsg(c));
        cr_assert_eq(kg_memset(c, d, 0, 64 * sizeof(float)), KG_OK, "no kernel needed: %s", kg_errmsg(c));
        cr_assert_eq(kg_add(c, &a, &a, &a), KG_ERR_NO_KERNEL_IMAGE, "%s", kg_errmsg(c));
        cr_assert(strncmp(kg_errmsg(c), want, strlen(want)) == 0, "%s", kg_errmsg(c));
        cr_assert(strstr(kg_errmsg(c), "loading kernel module ew_f32") != NULL ||
                      strstr(kg_errmsg(c), "looking up kernel kg_add_f32") != NULL,
                  "%s", kg_errmsg(c));
    }
    cr_assert_eq(kg_free(c, d), KG_OK, "%s", kg_errmsg(c));
    kg_close(c);
}
#endif
