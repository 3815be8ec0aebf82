/*
 * kg_device_check.cu - compiles every helper of templates/kg_device.cuh for
 * sm_80 (the build's `ninja` does it; nothing runs), so the shared device
 * header cannot break unnoticed before a family includes it.
 */
#include "kg_device.cuh"

extern "C" __global__ void kg_device_check(const float *in, float *out, uint32_t magic, uint32_t shift)
{
    __shared__ __align__(16) uint16_t tile[16 * 64];
    kgd_cp_async16(kgd_smem_addr(tile + threadIdx.x * 8), in + threadIdx.x * 4, threadIdx.x < 128);
    kgd_cp_async_commit();
    kgd_cp_async_wait<0>();
    __syncthreads();
    uint32_t r[4], t[4];
    kgd_ldmatrix_x4(r, kgd_smem_addr(tile));
    kgd_ldmatrix_x4_trans(t, kgd_smem_addr(tile));
    const kgd_vec<float, 4> v = ((const kgd_vec<float, 4> *)in)[threadIdx.x];
    const double d = kgd_shfl_xor((double)v.v[0], 1) + kgd_shfl_xor(v.v[1], 2);
    out[threadIdx.x] = (float)d + (float)(r[0] ^ t[3]) + (float)kgd_div_magic(threadIdx.x, magic, shift);
}
