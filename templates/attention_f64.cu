@-- attention_f64.cu - template of the f64 attention module: one kernel per
@-- largest head dim (DMAX), each an instantiation of attention_f64.cuh with
@-- the rows per warp gen/attention_f64.lua chose.
$(header)/*
 * Flash attention forward kernels for f64 (8 warps per block, 32 keys per
 * tile, FFMA in f64). Head dims up to $(table.concat(dims, ", ")).
 */
#include "attention_f64.cuh"
@for _, k in ipairs(kernels) do

/* $(k.desc) */
extern "C" __global__ void __launch_bounds__(256, 1) $(k.name)(kg_attn64_params p)
{
    static_assert(kg_attn64::smem_bytes($(k.dmax), $(k.rpw)) == $(k.smem), "gen/attention_f64.lua's smem");
    kg_attn64::forward<$(k.dmax), $(k.rpw)>(p);
}
@end
