/*
 * modload.c - what loading one kernel module image costs, for choosing
 * how the bundle stores its modules (nvcc --compress-mode, which entries a
 * fatbin holds). In a fresh process, after the CUDA context exists, as the
 * library's first op of a module does it: cudaLibraryLoadData on the image,
 * cudaLibraryGetKernel, then the first launch (or, for a kernel whose
 * arguments are not known here, cudaFuncGetAttributes, which also loads it
 * into the context), then the same again on a second copy of the image
 * (the driver's one-time costs paid).
 *
 *   modload IMAGE KERNEL [ew]
 *
 * IMAGE: a fatbin or cubin file; a name ending in .zst is inflated first
 * (outside the load timing, timed apart: the staged files travel small,
 * and a raw cubin inflated so costs what a runtime inflating its own
 * zstd images would pay). "ew": KERNEL is an
 * element-wise dense kernel (kg_ew_ptrs p, int64_t n), launched with n = 0.
 * Prints one line: the image's size and the milliseconds of each step.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <zstd.h>

static double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double inflate_ms; /* the .zst input's inflation (libzstd, this host) */

static unsigned char *read_image(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    const long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
    if (!b || fread(b, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        free(b);
        return NULL;
    }
    fclose(f);
    *n = (size_t)len;
    const size_t pl = strlen(path);
    if (pl > 4 && strcmp(path + pl - 4, ".zst") == 0) {
        const unsigned long long full = ZSTD_getFrameContentSize(b, *n);
        if (full == ZSTD_CONTENTSIZE_ERROR || full == ZSTD_CONTENTSIZE_UNKNOWN) {
            free(b);
            return NULL;
        }
        unsigned char *x = malloc(full);
        const double t = bench_now();
        const size_t got = x ? ZSTD_decompress(x, full, b, *n) : 0;
        inflate_ms = (bench_now() - t) * 1e3;
        free(b);
        if (!x || ZSTD_isError(got) || got != full) {
            free(x);
            return NULL;
        }
        b = x;
        *n = got;
    }
    return b;
}

/* One load of the image: load, kernel lookup, first launch; ms each. */
static int load_once(const unsigned char *image, const char *kernel, int ew, double ms[3])
{
    cudaLibrary_t lib;
    cudaKernel_t k;
    double t = bench_now();
    if (cudaLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0) != cudaSuccess)
        return 0;
    ms[0] = (bench_now() - t) * 1e3;
    t = bench_now();
    if (cudaLibraryGetKernel(&k, lib, kernel) != cudaSuccess)
        return 0;
    ms[1] = (bench_now() - t) * 1e3;
    t = bench_now();
    if (ew) {
        static unsigned char ptrs[512]; /* kg_ew_ptrs, all NULL; n = 0 touches none */
        int64_t n = 0;
        void *args[2] = {ptrs, &n};
        if (cudaLaunchKernel((const void *)k, (dim3){1, 1, 1}, (dim3){128, 1, 1}, args, 0, 0) != cudaSuccess ||
            cudaDeviceSynchronize() != cudaSuccess)
            return 0;
    } else {
        struct cudaFuncAttributes a;
        if (cudaFuncGetAttributes(&a, (const void *)k) != cudaSuccess)
            return 0;
    }
    ms[2] = (bench_now() - t) * 1e3;
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: modload IMAGE KERNEL [ew]\n");
        return 2;
    }
    const int ew = argc > 3 && strcmp(argv[3], "ew") == 0;
    size_t n = 0;
    unsigned char *image = read_image(argv[1], &n), *copy = image ? malloc(n) : NULL;
    if (!image || !copy) {
        fprintf(stderr, "modload: cannot read %s\n", argv[1]);
        return 1;
    }
    memcpy(copy, image, n);
    if (cudaFree(0) != cudaSuccess) {
        printf("modload: no GPU work ran: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 0;
    }
    double first[3], again[3];
    if (!load_once(image, argv[2], ew, first) || !load_once(copy, argv[2], ew, again)) {
        printf("modload: %s %s: %s\n", argv[1], argv[2], cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    printf("modload: %s %.2f MiB: first load %.3f ms, kernel %.3f ms, first launch %.3f ms, total %.3f ms; "
           "second copy total %.3f ms (load %.3f); .zst inflate on the host %.3f ms\n",
           argv[1], (double)n / 1048576, first[0], first[1], first[2], first[0] + first[1] + first[2],
           again[0] + again[1] + again[2], again[0], inflate_ms);
    free(image);
    free(copy);
    return 0;
}
