/* libFuzzer target: every family's planning and launch set-up on the
   figures of an H200, under hostile input.

   The family targets run with the device hidden, so a valid call stops at
   kg_ready before it plans (element-wise, attention), or plans for no
   device at all (reductions and normalizations: no multiprocessors, no
   compute capability). Here the context claims a usable compute capability
   9.0 device with 132 multiprocessors, and this file stands in for the CUDA
   runtime's current-device query (below), so kg_ready passes: a valid call
   then plans as it would on the GPU machine, computes its grids, and fails
   at its first real CUDA call (a module load, an allocation, a stream
   query), because this machine has no driver. The planners' arithmetic and
   the launch geometry meet the hostile shapes of fuzz.h that way.

   The second byte picks the device the context claims: 132
   multiprocessors of compute capability 9.0 (0, the H200) or another count
   (1, 2, 7, 78, 108, 144, 1024 multiprocessors) and capability (8.0, 8.6,
   9.0, 10.0), for the planners' division by the SM count and their
   per-architecture choices. The first byte b picks the family (b % 6); after
   the two, the input is that family target's own format (fuzz.h's
   fz_<family>), so the seeds are the family corpora's with two bytes in
   front. The first byte's high part k = b / 6, where not
   0, forces what the tests force, so the plans they reach (and the
   candidates of later defaults) meet the same shapes: element-wise the
   variant (k - 1) % (KG_EW_TPERMC + 1) (tperm and the copy forms after
   kg_ew_variant's, layout.h); attention, for odd k, the variant
   k / 2 % KG_ATTN_V_COUNT, for even k, k / 2 key splits of a decode call;
   reductions one of the tests' force tunings (tests/kg_red_force.h). A
   forced variant is taken only where it can serve the call, as in the
   tests.

   Invariant: fz_check's, except that KG_OK is allowed, for calls with
   nothing to do only (an operand without elements): any call with work
   reaches a CUDA call, which fails here. */
#include "fuzz.h"
#include "../kg_red_force.h"
#include "internal.h"
#include "kg_attn_table.h"
#include "layout.h"

/* The CUDA runtime's current device, as a usable device reports it (this
   definition takes the place of libcudart's for the whole program). */
cudaError_t cudaGetDevice(int *device)
{
    *device = 0;
    return cudaSuccess;
}

/* fuzz.h's shared context (opened with the device hidden), claiming a device */
static kg_context *claimed(unsigned device)
{
    kg_context *ctx = fz_ctx();
    /* every input: a usable device (a failed CUDA call may have changed it) */
    static const int sms[] = {132, 1, 2, 7, 78, 108, 144, 1024}, ccs[] = {90, 80, 86, 90, 100, 90, 90, 90};
    ctx->usable = 1;
    ctx->open_status = KG_OK;
    ctx->device = 0;
    ctx->sm_count = sms[device % 8];
    ctx->cc_major = ccs[device / 8 % 8] / 10;
    ctx->cc_minor = ccs[device / 8 % 8] % 10;
    return ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    const unsigned b = fz_byte(&f), family = b % 6, k = b / 6;
    kg_context *ctx = claimed(fz_byte(&f));
    kg_red_tuning tuning;
    static kg_red_tuning (*const forced_tuning[])(void) = {
        kg_red_force_slab,     kg_red_force_trans, kg_red_force_runs,        kg_red_force_chain,
        kg_red_force_runt_any, kg_red_force_segw,  kg_red_force_strided_occ, kg_red_force_transv};
    if (family == 1 && k)
        tuning = forced_tuning[(k - 1) % (sizeof forced_tuning / sizeof forced_tuning[0])]();
    if (family == 0 && k)
        kg_test_force_ew_variant(ctx, (int)((k - 1) % (KG_EW_TPERMC + 1)));
    if (family == 3 && k % 2)
        kg_test_force_attn_variant(ctx, (int)(k / 2 % KG_ATTN_V_COUNT));
    if (family == 3 && k && k % 2 == 0)
        kg_test_force_attn_splits(ctx, (int)(k / 2));
    kg_status st;
    switch (family) {
    case 0: st = fz_elementwise(&f, ctx); break;
    case 1: st = fz_reduce(&f, ctx, k ? &tuning : NULL); break;
    case 2: st = fz_norm(&f, ctx); break;
    case 3: st = fz_attention(&f, ctx); break;
    case 4: st = fz_attention_bwd(&f, ctx); break;
    default: st = fz_gemm(&f, ctx); break;
    }
    kg_test_force_ew_variant(ctx, -1); /* as kg_open leaves them */
    kg_test_force_attn_variant(ctx, -1);
    kg_test_force_attn_splits(ctx, -1);
    if (st == KG_OK) {
        if (!(f.zero & f.used))
            abort(); /* succeeded without a CUDA call, though every operand has elements */
        return 0;
    }
    fz_check(ctx, st);
    return 0;
}
