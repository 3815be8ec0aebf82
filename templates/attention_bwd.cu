@-- attention_bwd.cu - template of one attention backward module (one dtype):
@-- per head dim the delta/lse2 pass, and per head dim x mask kind the kv
@-- and q kernels, each an instantiation of templates/attention_bwd.cuh with
@-- the tile shape gen/attention_bwd.lua chose.
$(header)/*
 * Flash attention backward kernels for $(dtype.name), $(path).
 * Head dims: $(table.concat(dims, ", ")). Mask kinds: $(table.concat(kinds, ", ")).
 */
#include "$(include)"
@for _, k in ipairs(kernels) do

/* $(k.desc) */
extern "C" __global__ void __launch_bounds__($(k.threads), $(k.minb)) $(k.name)(kg_attnb_params p)
{
    kg_attnb::$(k.call)(p);
}
@end
