-- attention_f64.lua - the f64 attention family (issue 16): one module
-- (attn64.cu from templates/attention_f64.cu + attention_f64.cuh) with one
-- kernel per largest head dim, and kg_attn64_table.c / .h (largest head dim
-- -> kernel index, threads, dynamic shared memory) for
-- runtime/attention_f64.c. kg_attention (runtime/attention.c) hands f64
-- calls to it; the family also carries runtime/attention_pack.c (packed and
-- zero-padded operands for the f16/bf16/f32 kernels); tests/test_attention_f64.c
-- tests both.
local M = {}

M.dims = { 32, 64, 128, 256 } -- each kernel serves head dims up to its own
M.warps = 8                   -- warps per block
-- query rows per warp: each K or V value read from shared memory feeds that
-- many FMAs; 2 at D 256 keeps a block within sm_80's 163 KB
M.rpw = { [32] = 4, [64] = 4, [128] = 4, [256] = 2 }
M.runtime = { "attention_pack.c" }

-- shared memory of a block: K tile [32][d + 1], V tile [32][d], q rows [warps * rpw][d]
local function smem(d) return (32 * (d + 1) + 32 * d + M.warps * M.rpw[d] * d) * 8 end

function M.generate(G)
  G:dep(G.root .. "/templates/attention_f64.cu")
  G:dep(G.root .. "/templates/attention_f64.cuh")
  local module = G:module("attn64")
  local kernels, rows, dims = {}, {}, {}
  for _, d in ipairs(M.dims) do
    local name = string.format("kg_attn64_d%d", d)
    local desc = string.format("attention f64, head dims up to %d (%d query rows per warp, 32 keys per tile, f64 FFMA)",
                               d, M.rpw[d])
    local idx = G:kernel({ name = name, module = module, vec = 1, desc = desc })
    kernels[#kernels + 1] = { name = name, dmax = d, rpw = M.rpw[d], smem = smem(d), desc = desc }
    rows[#rows + 1] = string.format("    {%d, %d, %d, %d, %d},\n", d, idx, 32 * M.warps, M.warps * M.rpw[d], smem(d))
    dims[#dims + 1] = tostring(d)
  end
  G:write("attn64.cu", G:render("attention_f64.cu", {
    header = G.header("templates/attention_f64.cu and gen/attention_f64.lua"),
    kernels = kernels, dims = dims,
  }))
  G:write("kg_attn64_table.h", G.header("gen/attention_f64.lua") .. string.format([[
#ifndef KG_ATTN64_TABLE_H
#define KG_ATTN64_TABLE_H

#include <stdint.h>

#define KG_ATTN64_COUNT %d

typedef struct kg_attn64_entry {
    int32_t dmax;    /* largest head dim the kernel serves */
    int32_t kernel;  /* index into kg_kernels */
    int32_t threads; /* block size */
    int32_t rows;    /* query rows per block */
    int32_t smem;    /* dynamic shared memory, bytes */
} kg_attn64_entry;

/* by increasing dmax */
extern const kg_attn64_entry kg_attn64_table[KG_ATTN64_COUNT];

#endif
]], #M.dims))
  G:write("kg_attn64_table.c", G.header("gen/attention_f64.lua") .. '#include "kg_attn64_table.h"\n\n' ..
    "const kg_attn64_entry kg_attn64_table[KG_ATTN64_COUNT] = {\n" .. table.concat(rows) .. "};\n")
end

return M
