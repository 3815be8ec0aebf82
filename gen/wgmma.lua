-- wgmma.lua - writes kg_wgmma.cuh: the Hopper warpgroup matrix-multiply
-- wrappers (wgmma.mma_async, sm_90a) the Hopper attention kernels use.
--
-- One instruction of shape m64nNk16 names N/2 f32 accumulator registers per
-- thread, each its own asm operand, so the wrappers are generated rather than
-- written out by hand: for each 16-bit input type and N,
--   wg<T, N>::ss(d, a_desc, b_desc, acc)   A and B from shared memory
--                                          (both K-major: q k^T)
--   wg<T, N>::rs(d, a, b_desc, acc)        A from registers (the P fragment),
--                                          B from shared memory N-major (v)
-- acc = 0 overwrites d (D = A B) instead of accumulating.
local M = {}

local types = { { "__half", "f16" }, { "__nv_bfloat16", "bf16" } }

-- the accumulator operands of an m64nNk16 wgmma: "%0, %1, ..." and the
-- matching "+f"(d[i]) constraints (also gen/attention_bwd.lua's wrappers)
local function operands(n)
  local regs, cons = {}, {}
  for i = 0, n / 2 - 1 do
    regs[#regs + 1] = "%" .. i
    cons[#cons + 1] = string.format('"+f"(d[%d])', i)
  end
  return table.concat(regs, ", "), table.concat(cons, ", ")
end

local function wrapper(ctype, ptype, n)
  local nd = n / 2
  local regs, cons = operands(n)
  local instr = string.format("wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s", n, ptype, ptype)
  return string.format([[
template <> struct wg<%s, %d> {
    static __device__ __forceinline__ void ss(float (&d)[%d], uint64_t a, uint64_t b, int acc)
    {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %%%d, 0;\n"
                     "%s {%s}, %%%d, %%%d, p, 1, 1, 0, 0;\n}\n"
                     : %s
                     : "l"(a), "l"(b), "r"(acc));
    }
    static __device__ __forceinline__ void rs(float (&d)[%d], const uint32_t (&a)[4], uint64_t b, int acc)
    {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %%%d, 0;\n"
                     "%s {%s}, {%%%d, %%%d, %%%d, %%%d}, %%%d, p, 1, 1, 1;\n}\n"
                     : %s
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(acc));
    }
};
]], ctype, n, nd, nd + 2, instr, regs, nd, nd + 1, cons,
    nd, nd + 5, instr, regs, nd, nd + 1, nd + 2, nd + 3, nd + 4, cons)
end

M.operands = operands

-- ns: the N extents wanted (key-tile sizes and head dims), each a multiple of 8
-- from 8 to 256.
function M.header(G, ns)
  local seen, list = {}, {}
  for _, n in ipairs(ns) do
    assert(n % 8 == 0 and n >= 8 and n <= 256, "wgmma N must be a multiple of 8 in [8, 256], got " .. n)
    if not seen[n] then seen[n] = true; list[#list + 1] = n end
  end
  table.sort(list)
  local parts = { G.header("gen/wgmma.lua"), [[
#ifndef KG_WGMMA_CUH
#define KG_WGMMA_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace kg_attn {

/* wgmma.mma_async m64nNk16, f32 accumulators; see gen/wgmma.lua. */
template <typename T, int N> struct wg;
]] }
  for _, t in ipairs(types) do
    for _, n in ipairs(list) do parts[#parts + 1] = wrapper(t[1], t[2], n) end
  end
  parts[#parts + 1] = "\n} // namespace kg_attn\n\n#endif\n"
  return table.concat(parts)
end

return M
