/* libFuzzer target: matmul validation, the layout describer and packing
   plans (kg_gemm_describe runs on the host), and kg_matmul_ex. */
#include "blas.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    kg_context *ctx = fz_ctx();
    kg_tensor t[4];
    fz_tensors(&f, t, 4);
    const unsigned how = fz_byte(&f);
    kg_matmul_opts o = {how & 1 ? &t[3] : NULL, (kg_epilogue)((int)(how >> 1 & 3) - (how >> 7)),
                        (kg_gemm_backend)(int)(how >> 3 & 3)};
    kg_gemm_desc g;
    const kg_status st = kg_gemm_describe(ctx, &t[0], &t[1], &t[2], how & 64 ? NULL : &o, &g);
    if ((int)st < 0 || st >= KG_STATUS_COUNT)
        abort();
    if (st == KG_OK) { /* a description within cuBLAS's limits */
        if (!g.empty && !g.fill && (g.batch < 1 || g.batch > INT32_MAX || g.m < 1 || g.n < 1 || g.k < 1))
            abort();
        if (g.nloop > 0) {
            int64_t calls = 1;
            for (int i = 0; i < g.nloop; i++)
                calls *= g.loop_size[i];
            if (calls > KG_GEMM_MAX_LOOP)
                abort(); /* no host loop proportional to the data */
        }
    }
    fz_check(ctx, kg_matmul_ex(ctx, &t[0], &t[1], &t[2], how & 64 ? NULL : &o));
    return 0;
}
