/*
 * bundle.c - the embedded kernel bundle: one fatbin per generated module,
 * loaded with cudaLibraryLoadData on first use of any of its kernels.
 *
 * A cudaLibrary_t is context-independent: loaded once per process, the driver
 * then loads it into each device's context lazily, so one load serves every
 * device and every kg_context. Kernel handles are cached per table index
 * (kg_kernel_handles, generated with the table).
 * Lookups are O(1): an index into the generated kernel table.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "trust.h" /* kgi_cuda_sticky */
#include "kg_table.h"

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

/* Module m's cudaLibrary_t (kg_module_handles, generated with the table:
   its size is the module count, which this file does not compile in), loaded
   on first use. */
static kg_status load_module(kg_context *ctx, int m, cudaLibrary_t *out)
{
    kg_status st = KG_OK;
    pthread_mutex_lock(&load_lock);
    if (!kg_module_handles[m]) {
        cudaLibrary_t lib = NULL;
        cudaError_t err = cudaLibraryLoadData(&lib, kg_modules[m].begin, NULL, NULL, 0, NULL, NULL, 0);
        if (err != cudaSuccess) {
            cudaGetLastError();
            char what[96];
            snprintf(what, sizeof what, "loading kernel module %s", kg_modules[m].name);
            st = kgi_cuda_fail(ctx, err, what);
        } else {
            kg_module_handles[m] = (void *)lib;
        }
    }
    *out = (cudaLibrary_t)kg_module_handles[m];
    pthread_mutex_unlock(&load_lock);
    return st;
}

kg_status kgi_kernel(kg_context *ctx, int k, cudaKernel_t *out)
{
    cudaKernel_t kern = (cudaKernel_t)atomic_load_explicit(&kg_kernel_handles[k], memory_order_acquire);
    if (kern) {
        *out = kern;
        return KG_OK;
    }
    cudaLibrary_t lib;
    kg_status st = load_module(ctx, kg_kernels[k].module, &lib);
    if (st != KG_OK)
        return st;
    cudaError_t err = cudaLibraryGetKernel(&kern, lib, kg_kernels[k].name);
    if (err != cudaSuccess) {
        cudaGetLastError();
        char what[160];
        snprintf(what, sizeof what, "looking up kernel %s", kg_kernels[k].name);
        return kgi_cuda_fail(ctx, err, what);
    }
    atomic_store_explicit(&kg_kernel_handles[k], (void *)kern, memory_order_release);
    *out = kern;
    return KG_OK;
}

kg_status kgi_launch(kg_context *ctx, int k, dim3 grid, dim3 block, void **args, size_t smem)
{
    cudaKernel_t kern;
    kg_status st = kgi_kernel(ctx, k, &kern);
    if (st != KG_OK)
        return st;
    cudaError_t err = cudaLaunchKernel((const void *)kern, grid, block, args, smem, ctx->stream);
    if (err != cudaSuccess) {
        cudaGetLastError();
        char what[160];
        snprintf(what, sizeof what, "launching %s (grid %u, block %u)", kg_kernels[k].name, grid.x, block.x);
        st = kgi_cuda_fail(ctx, err, what);
        if (st != KG_ERR_CUDA || kgi_cuda_sticky(err)) /* a device fault stays KG_ERR_CUDA */
            return st;
        char detail[KG_MSG_LEN];
        memcpy(detail, ctx->msg, sizeof detail);
        return kgi_fail(ctx, KG_ERR_LAUNCH, "kernel launch failed: %s", detail);
    }
    return KG_OK;
}
