/*
 * test_noimage.c - linked against a copy of the library whose bundle says it
 * was built for sm_100 only (build/sm100/libkgen.so: bundle.c compiled with
 * archs = 100 and PTX 100, every other object the same). On a GPU of another
 * architecture kg_open reports KG_ERR_NO_KERNEL_IMAGE naming both the GPU's
 * architecture and the bundle's list, and the context still validates calls.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "kg_test.h"
#include "kgen.h"

Test(noimage, bundle_without_this_gpus_arch)
{
    int n = 0, major = 0, minor = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
        cr_skip_test("no usable CUDA device");
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
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
