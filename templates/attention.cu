@-- attention.cu - template of one attention module (one dtype, one path): one
@-- kernel per head dim x mask kind, each an instantiation of the path's header
@-- (attention.cuh, portable; attention_sm90.cuh, Hopper) with the tile shape
@-- gen/attention.lua chose for that head dim. The Hopper path's kernels take
@-- the tensor maps of q, k and v as a second argument (kg_attn_tmaps).
$(header)/*
 * Flash attention forward kernels for $(dtype.name), $(path).
 * Head dims: $(table.concat(dims, ", ")). Mask kinds: $(table.concat(kinds, ", ")).
 */
#include "$(include)"
@for _, k in ipairs(kernels) do

/* $(k.desc) */
extern "C" __global__ void __launch_bounds__($(k.threads), $(k.minb)) $(k.name)(kg_attn_params p$(k.params))
{
    kg_attn::$(k.call)(p$(k.args));
}
@end
