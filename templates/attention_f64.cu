@-- attention_f64.cu - template of the f64 attention module: one kernel per
@-- largest head dim (DMAX), each an instantiation of attention_f64.cuh.
$(header)/*
 * Flash attention forward kernels for f64 (one warp per query row, $(rows)
 * rows per block, 32 keys per tile, FFMA in f64). Head dims up to
 * $(table.concat(dims, ", ")).
 */
#include "attention_f64.cuh"
@for _, k in ipairs(kernels) do

/* $(k.desc) */
extern "C" __global__ void __launch_bounds__($(32 * rows), 1) $(k.name)(kg_attn64_params p)
{
    kg_attn64::forward<$(k.dmax), $(rows)>(p);
}
@end
