/*
 * kg_status.h - the one list of kgen status codes.
 *
 * Every entry point returns one of these. The list is an X-macro (as libuv's
 * UV_ERRNO_MAP): the enum in kgen.h and the name and text tables in
 * runtime/error.c are generated from it, so they cannot drift apart.
 *
 *   X(symbol, value, fixed text)
 */
#ifndef KG_STATUS_H
#define KG_STATUS_H

#define KG_STATUS_LIST(X)                                                                                              \
    X(KG_OK, 0, "success")                                                                                             \
    X(KG_ERR_NO_DEVICE, 1, "no CUDA driver or device")                                                                 \
    X(KG_ERR_DEVICE_RANGE, 2, "device index out of range")                                                             \
    X(KG_ERR_OUT_OF_MEMORY, 3, "out of device memory")                                                                 \
    X(KG_ERR_NO_KERNEL_IMAGE, 4, "no kernel image for this GPU's architecture")                                        \
    X(KG_ERR_LAUNCH, 5, "kernel launch failed")                                                                        \
    X(KG_ERR_SYNC, 6, "synchronization failed")                                                                        \
    X(KG_ERR_SHAPE, 7, "shape mismatch")                                                                               \
    X(KG_ERR_INVALID_ARGUMENT, 8, "invalid argument")                                                                  \
    X(KG_ERR_DTYPE, 9, "op not available for this dtype")                                                              \
    X(KG_ERR_CUDA, 10, "CUDA error")                                                                                   \
    X(KG_ERR_CUBLAS, 11, "cuBLAS error")                                                                               \
    X(KG_ERR_HOST_MEMORY, 12, "out of host memory")

#endif
