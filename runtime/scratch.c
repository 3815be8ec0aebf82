/*
 * scratch.c - the context's per-stream device memory: the reductions'
 * scratch (see internal.h for the contract every user keeps: zeroed
 * counters first, then free space for one call) and the pack area (see
 * trust.h), one slot per stream. Also the internal allocation hook.
 *
 * Why per stream: work enqueued from one context on two streams that run
 * concurrently must not share partial results or counters (a split
 * reduction on stream A would read stream B's partials). Keying the memory
 * by stream makes that impossible without any synchronization between the
 * streams. Work on one stream is ordered by the stream itself.
 *
 * Why grow and never shrink: a launch may not allocate (graph capture, no
 * host synchronization), so a slot's buffers are made at the first call on
 * that stream that needs them outside capture (or through
 * kg_reserve_scratch / kg_gemm_prepare on that stream) and kept until
 * kg_close, or until the slot is reused for another stream (least recently
 * used first; cudaFree waits for the device, so nothing queued still uses
 * it). A graph captured on a stream uses that stream's slot when replayed:
 * do not replay it concurrently with other work on that stream's slot.
 */
#include <stdio.h>
#include <stdlib.h>

#include "trust.h"

/* ---- Allocation hook ----------------------------------------------------- */

static _Thread_local int fail_at;  /* 0: off; else the allocation that fails */
static _Thread_local int counted;  /* allocations since kg_test_fail_alloc */

static int injected_failure(void)
{
    counted++;
    if (fail_at > 0 && counted == fail_at) {
        fail_at = 0;
        return 1;
    }
    return 0;
}

int kg_test_fail_alloc(int n)
{
    const int c = counted;
    counted = 0;
    fail_at = n > 0 ? n : 0;
    return c;
}

cudaError_t kgi_device_alloc(void **p, size_t bytes)
{
    *p = NULL;
    if (injected_failure())
        return cudaErrorMemoryAllocation;
    const cudaError_t err = cudaMalloc(p, bytes);
    if (err != cudaSuccess) {
        *p = NULL;
        cudaGetLastError(); /* not sticky: clear it */
    }
    return err;
}

void *kgi_host_alloc(size_t bytes) { return injected_failure() ? NULL : calloc(1, bytes); }

/* ---- Slots --------------------------------------------------------------- */

typedef struct slot {
    int used;
    cudaStream_t stream;
    unsigned long long last_use;
    void *scratch; /* counters + partials, zeroed when made */
    size_t scratch_bytes;
    void *pack; /* pack area */
    size_t pack_bytes;
} slot;

typedef struct slots {
    unsigned long long tick;
    slot s[KG_STREAM_SLOTS];
} slots;

static void free_slot(slot *s)
{
    if (s->scratch)
        cudaFree(s->scratch);
    if (s->pack)
        cudaFree(s->pack);
    s->scratch = s->pack = NULL;
    s->scratch_bytes = s->pack_bytes = 0;
    s->used = 0;
}

void kgi_scratch_release(kg_context *ctx)
{
    slots *all = ctx->scratch;
    if (!all)
        return;
    for (int i = 0; i < KG_STREAM_SLOTS; i++)
        free_slot(&all->s[i]);
    free(all);
    ctx->scratch = NULL;
    ctx->scratch_bytes = 0;
}

/* The slot of ctx->stream; makes one (evicting the least recently used) when
   the stream has none. */
static kg_status find_slot(kg_context *ctx, const char *what, size_t bytes, slot **out)
{
    slots *all = ctx->scratch;
    if (!all) {
        all = kgi_host_alloc(sizeof *all);
        if (!all)
            return kgi_fail(ctx, KG_ERR_HOST_MEMORY, "out of host memory: the per-stream scratch table (%zu bytes)",
                           sizeof *all);
        ctx->scratch = all;
    }
    all->tick++;
    slot *lru = NULL;
    for (int i = 0; i < KG_STREAM_SLOTS; i++) {
        slot *s = &all->s[i];
        if (s->used && s->stream == ctx->stream) {
            s->last_use = all->tick;
            *out = s;
            return KG_OK;
        }
        if (!lru || (!s->used && lru->used) || (s->used == lru->used && s->last_use < lru->last_use))
            lru = s;
    }
    if (kgi_stream_capturing(ctx->stream)) {
        /* the call that gives this one what it needs: the scratch's exact
           size (kg_reserve_scratch(ctx, 0) gives the default size, which
           split decode partials or long normalizations may exceed) */
        char fix[64];
        if (what[0] == 's')
            snprintf(fix, sizeof fix, "kg_reserve_scratch(ctx, %zu)", bytes);
        else
            snprintf(fix, sizeof fix, "kg_gemm_prepare(ctx)");
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                        "invalid argument: this call needs %zu bytes of device %s for the context's stream, which "
                        "has none, and it cannot be allocated during CUDA graph capture; call %s on that stream (or "
                        "run the call once on it) before capturing",
                        bytes, what, fix);
    }
    if (lru->used)
        free_slot(lru); /* cudaFree waits for the device: nothing queued uses it */
    lru->used = 1;
    lru->stream = ctx->stream;
    lru->last_use = all->tick;
    *out = lru;
    return KG_OK;
}

static kg_status grow(kg_context *ctx, void **buf, size_t *have, size_t bytes, int zero, const char *what,
                      const char *reserve)
{
    if (kgi_stream_capturing(ctx->stream))
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: this call needs %zu bytes of device %s but the context's stream has %zu, "
                       "and it cannot grow during CUDA graph capture; call %s on that stream (or run the call "
                       "once on it) before capturing",
                       bytes, what, *have, reserve);
    cudaError_t err;
    if (*buf) {
        /* cudaFree waits for the device, so no queued kernel still uses it */
        if ((err = cudaFree(*buf)) != cudaSuccess)
            return kgi_cuda_fail(ctx, err, "freeing the old device scratch");
        *buf = NULL;
        *have = 0;
    }
    void *p = NULL;
    err = kgi_device_alloc(&p, bytes);
    if (err == cudaErrorMemoryAllocation)
        return kgi_fail(ctx, KG_ERR_OUT_OF_MEMORY, "out of memory: the device %s (%zu bytes)", what, bytes);
    if (err != cudaSuccess)
        return kgi_cuda_fail(ctx, err, "cudaMalloc of the device scratch");
    /* synchronous on purpose: the counters must be zero before any stream
       uses them */
    if (zero && ((err = cudaMemset(p, 0, bytes)) != cudaSuccess || (err = cudaDeviceSynchronize()) != cudaSuccess)) {
        cudaFree(p);
        return kgi_cuda_fail(ctx, err, "clearing the device scratch");
    }
    *buf = p;
    *have = bytes;
    return KG_OK;
}

kg_status kgi_scratch(kg_context *ctx, size_t bytes, void **base)
{
    if (bytes < KG_SCRATCH_COUNTER_BYTES)
        bytes = KG_SCRATCH_COUNTER_BYTES;
    slot *s;
    kg_status st = find_slot(ctx, "scratch", bytes, &s);
    if (st != KG_OK)
        return st;
    if (s->scratch_bytes < bytes) {
        char fix[64]; /* (what a capture that finds too little should have reserved) */
        snprintf(fix, sizeof fix, "kg_reserve_scratch(ctx, %zu)", bytes);
        st = grow(ctx, &s->scratch, &s->scratch_bytes,
                  bytes < KGI_SCRATCH_RESERVE_BYTES ? KGI_SCRATCH_RESERVE_BYTES : bytes, 1, "scratch", fix);
        if (st != KG_OK)
            return st;
    }
    ctx->scratch_bytes = s->scratch_bytes;
    *base = s->scratch;
    return KG_OK;
}

kg_status kgi_pack_area(kg_context *ctx, size_t bytes, void **base)
{
    slot *s;
    kg_status st = find_slot(ctx, "pack area", bytes, &s);
    if (st != KG_OK)
        return st;
    if (s->pack_bytes < bytes) {
        st = grow(ctx, &s->pack, &s->pack_bytes, bytes, 0, "pack area",
                            "kg_gemm_prepare(ctx) or kg_gemm_reserve(ctx, bytes)");
        if (st != KG_OK)
            return st;
    }
    *base = s->pack;
    return KG_OK;
}

kg_status kg_reserve_scratch(kg_context *ctx, size_t bytes)
{
    kg_status st = kgi_ready(ctx);
    if (st != KG_OK)
        return st;
    void *base;
    st = kgi_scratch(ctx, bytes ? bytes : (size_t)KGI_SCRATCH_RESERVE_BYTES, &base);
    return st == KG_OK ? kgi_ok(ctx) : st;
}
