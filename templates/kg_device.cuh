/*
 * kg_device.cuh - device helpers every kernel family shares: the aligned
 * vector type, the magic-number division the 32-bit layouts use, warp
 * shuffles of any 4- or 8-byte type, and the PTX wrappers of asynchronous
 * copies and ldmatrix (sm_80 and up). Names start with kgd_.
 *
 * The division is written once for host and device: the host computes the
 * magic pair (runtime/geometry.c, kgi_divmod_magic) and tests/test_layout.c
 * checks this very function against plain division, so the kernels and the
 * host cannot disagree. From C (no __CUDACC__) only that part is visible.
 *
 * Families converted to it: none yet (the family owners switch their
 * templates; until then elementwise.cuh's kg_vec, reduce.cuh's kg_rvec and
 * kg_shfl_xor, attention.cuh's cp_async16/ldmatrix_x4 are the copies this
 * replaces).
 */
#ifndef KG_DEVICE_CUH
#define KG_DEVICE_CUH

#include <stdint.h>

#if defined(__CUDACC__)
#define KGD_HD __host__ __device__ __forceinline__
#else
#define KGD_HD static inline
#endif

/* The high 32 bits of the 64-bit product a * b. */
KGD_HD uint32_t kgd_umulhi(uint32_t a, uint32_t b)
{
#if defined(__CUDA_ARCH__)
    return __umulhi(a, b);
#else
    return (uint32_t)(((uint64_t)a * b) >> 32);
#endif
}

/* r / d for r < 2^31 and the divisor's pair (magic, shift) from
   kgi_divmod_magic(d): q = (umulhi(r, magic) + r) >> shift (no overflow:
   umulhi(r, magic) < r < 2^31). */
KGD_HD uint32_t kgd_div_magic(uint32_t r, uint32_t magic, uint32_t shift)
{
    return (kgd_umulhi(r, magic) + r) >> shift;
}

#if defined(__CUDACC__)

#include <string.h>

/* N elements of T in one aligned load or store (16 bytes at most). */
template <typename T, int N> struct alignas(sizeof(T) * N) kgd_vec {
    T v[N];
};

/* __shfl_xor_sync of a whole warp for any 4- or 8-byte type. */
template <typename T> __device__ __forceinline__ T kgd_shfl_xor(T v, int mask)
{
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "kgd_shfl_xor: 4- or 8-byte types");
    if constexpr (sizeof(T) == 8) {
        long long b;
        memcpy(&b, &v, 8);
        b = __shfl_xor_sync(0xffffffffu, b, mask);
        memcpy(&v, &b, 8);
    } else {
        int b;
        memcpy(&b, &v, 4);
        b = __shfl_xor_sync(0xffffffffu, b, mask);
        memcpy(&v, &b, 4);
    }
    return v;
}

/* The shared-memory address of p, for PTX operands. */
__device__ __forceinline__ uint32_t kgd_smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* 16 bytes global -> shared, bypassing L1; zero-filled when !pred. */
__device__ __forceinline__ void kgd_cp_async16(uint32_t dst, const void *src, bool pred)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(pred ? 16 : 0));
}
__device__ __forceinline__ void kgd_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
/* Waits until at most N committed groups are still in flight. */
template <int N> __device__ __forceinline__ void kgd_cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* Four 8x8 b16 matrices from shared memory into registers (and transposed). */
__device__ __forceinline__ void kgd_ldmatrix_x4(uint32_t (&r)[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
__device__ __forceinline__ void kgd_ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

#endif /* __CUDACC__ */

#endif
