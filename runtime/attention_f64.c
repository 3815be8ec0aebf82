/*
 * attention_f64.c - kg_attention's f64 path (attention_pack.h): the
 * generated f64 kernels (gen/attention_f64.lua, templates/attention_f64.cuh),
 * one launch with grid (query blocks, Hq, B). kg_attention has validated
 * every argument before (shapes, dtypes, overlap, sizes: Sq, Sk < 2^31,
 * B, Hq <= 65535, a usable device) and handles empty outputs; here only the
 * kernel for the head dim is picked and the strides are passed as they are.
 */
#include <string.h>

#include "attention_f64_params.h"
#include "attention_pack.h"
#include "kg_attn64_table.h"

kg_status kgi_attention_f64(kg_context *ctx, const kg_tensor *out, const kg_tensor *lse, const kg_tensor *q,
                            const kg_tensor *k, const kg_tensor *v, const kg_tensor *mask, int causal, double scale)
{
    const int64_t B = q->shape[0], Hq = q->shape[1], Sq = q->shape[2], D = q->shape[3];
    const kg_attn64_entry *e = NULL;
    for (int i = 0; i < KG_ATTN64_COUNT && !e; i++)
        if (kg_attn64_table[i].dmax >= D)
            e = &kg_attn64_table[i];
    if (!e)
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: attention: f64 head dim %lld is more than %d",
                        (long long)D, kg_attn64_table[KG_ATTN64_COUNT - 1].dmax);
    kg_attn64_params p;
    memset(&p, 0, sizeof p);
    p.q = q->data;
    p.k = k->data;
    p.v = v->data;
    p.out = out->data;
    for (int d = 0; d < 4; d++) {
        p.q_s[d] = q->strides[d];
        p.k_s[d] = k->strides[d];
        p.v_s[d] = v->strides[d];
        p.o_s[d] = out->strides[d];
    }
    if (lse) {
        p.lse = lse->data;
        for (int d = 0; d < 3; d++)
            p.l_s[d] = lse->strides[d];
    }
    if (mask) {
        /* right-aligned broadcast to [B, Hq, Sq, Sk]: broadcast dims read stride 0 */
        const int64_t mshape[4] = {B, Hq, Sq, k->shape[2]};
        kgi_broadcast_strides(mask, 4, mshape, p.m_s);
        p.mask = mask->data;
        p.mask_f64 = mask->dtype == KG_F64;
    }
    p.sq = (int32_t)Sq;
    p.sk = (int32_t)k->shape[2];
    p.d = (int32_t)D;
    p.group = (int32_t)(Hq / k->shape[1]);
    p.causal = causal != 0;
    p.scale = scale;

    cudaKernel_t kern;
    kg_status st = kgi_kernel(ctx, e->kernel, &kern);
    if (st != KG_OK)
        return st;
    cudaError_t err =
        cudaKernelSetAttributeForDevice(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, e->smem, ctx->device);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return kgi_cuda_fail(ctx, err, "raising the f64 attention kernel's shared memory limit");
    }
    const dim3 grid = {(unsigned)((Sq + e->rows - 1) / e->rows), (unsigned)Hq, (unsigned)B};
    void *argv[1] = {&p};
    st = kgi_launch(ctx, e->kernel, grid, (dim3){(unsigned)e->threads, 1, 1}, argv, (size_t)e->smem);
    return st == KG_OK ? kgi_ok(ctx) : st;
}
