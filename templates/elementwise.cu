@-- elementwise.cu - template of one element-wise module (one dtype).
@-- For each op: a functor (what one element computes, from the catalogue's
@-- expression) and one kernel per layout variant, each a call into the
@-- loops of elementwise.cuh.
$(header)/*
 * Element-wise kernels whose first input is $(dtype.name), op group $(group)
 * (gen/catalogue.lua; casts: the group cast).
 * Variants: $(table.concat(variants, ", ")) (see templates/kg_params.h).
 */
#include "$(include or "elementwise.cuh")"
@for _, f in ipairs(functors) do

struct $(f.name) {
    typedef $(f.out.storage) out_t;
@  for j = 1, 3 do
@    local inp = f.inputs[j]
    typedef $(inp and inp.dt.storage or "kg_unused") in$(j - 1)_t;
@  end
    static constexpr int arity = $(#f.inputs);
@  if tperm then
    static constexpr bool bits = $(f.bits and "true" or "false"); /* the op moves its input's bits */
@  end
@  local params = {}
@  for j = 1, 3 do params[j] = f.inputs[j] and ("in" .. (j - 1) .. "_t " .. f.inputs[j].name .. "_") or ("in" .. (j - 1) .. "_t") end
    static __device__ __forceinline__ out_t apply($(table.concat(params, ", ")))
    {
@  if f.raw then
        return $(f.inputs[1].name)_; /* a copy: the bits as they are (no round trip through float) */
@  else
@   for j, inp in ipairs(f.inputs) do
        const $(inp.via or inp.dt.compute) $(inp.name) = ($(inp.via or inp.dt.compute))($(string.format(inp.dt.load, inp.name .. "_")));
@   end
        return $(f.body);
@  end
    }
};
@  for _, v in ipairs(variants) do
@   if (v ~= "tperm2" or f.tperm2) and (v ~= "tperma" or f.tperma) and (v ~= "tperms" or f.tperms) and (v ~= "tplanem" or f.tplanem) and (v ~= "tpermc" or f.tpermc) and ((v ~= "rowsv" and v ~= "tplanev" and v ~= "tslab" and v ~= "tchunk") or f.rowsv) then
@    local arg = (v == "dense") and "int64_t n" or (v == "nd32" or v == "nd32v" or v == "rows") and "kg_nd32 layout"
@      or (v == "perm" or v == "permf") and "kg_perm layout" or (v == "tperm" or v == "tperm2" or v == "tperma" or v == "tperms" or v == "tpermc") and "kg_tperm layout" or v == "rowsv" and "kg_rowsv layout"
@      or v == "tplanev" and "kg_tplane layout" or v == "tplanem" and "kg_tplanem layout" or v == "tslab" and "kg_tslab layout" or v == "tchunk" and "kg_tchunk layout" or "kg_nd64 layout"
extern "C" __global__ void __launch_bounds__($(v == "tperm2" and "KG_EW_THREADS, KG_TP2_MIN_BLOCKS" or v == "tchunk" and "KG_EW_THREADS, KG_TC_MIN_BLOCKS" or v == "tperma" and "KG_EW_THREADS, KG_TPA_MIN_BLOCKS" or v == "tperms" and "KG_EW_THREADS, KG_TPH_MIN_BLOCKS" or v == "tpermc" and "KG_EW_THREADS, KG_TPC_MIN_BLOCKS" or v == "tperm" and f.tperm_min and ("KG_EW_THREADS, " .. f.tperm_min) or "KG_EW_THREADS")) $(f.name)_$(v)(kg_ew_ptrs p, $(arg)) { kg_ew_$(v)<$(f.name), $(f.vec)>(p, $(v == "dense" and "n" or "layout")); }
@   end
@  end
@end
