@-- attention_bwd.cu - template of one attention backward module (one dtype;
@-- gen/attention_bwd.lua decides which kernels go to which module): the
@-- delta/lse2 pass and the dQ sum, or per mask kind the kv, q and kvq
@-- kernels, each an instantiation of templates/attention_bwd.cuh (or
@-- templates/attention_bwd_sm90.cuh) with the tile shape the generator chose.
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
