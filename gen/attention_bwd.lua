-- attention_bwd.lua - the flash attention backward family: per dtype one
-- module (attnb_<dtype>.cu from templates/attention_bwd.cu +
-- templates/attention_bwd.cuh) with, per head dim, the delta pass and, per
-- head dim x mask kind, the kv kernel (dK, dV) and the q kernel (dQ); and
-- kg_attnb_table.c / .h: [dtype][head dim slot] -> the three launches
-- (kernel index, threads, rows per block, dynamic shared memory) that
-- runtime/attention_bwd.c issues. Head dims and mask kinds are the
-- forward's (gen/attention.lua).
local M = {}

local fwd = require("attention")
M.dims = fwd.dims
M.kinds = fwd.kinds
local kind_enum = { none = "KG_ATTN_NONE", causal = "KG_ATTN_CAUSAL", mask = "KG_ATTN_MASK" }

-- Tensor cores. kv: nkw warps of 16 keys (bn = 16 nkw keys per block), bm
-- queries per tile; split: two warps per 16 keys (dV and dK apart), for
-- D = 256 where both accumulators would not fit one thread's registers.
-- q: nw warps of 16 queries, bn keys per tile.
M.tc_kv = {
  [32] = { nkw = 4, bm = 64 },
  [64] = { nkw = 4, bm = 64 },
  [96] = { nkw = 4, bm = 32 },
  [128] = { nkw = 4, bm = 32 },
  [256] = { nkw = 4, bm = 32, split = true },
}
M.tc_q = {
  [32] = { nw = 4, bn = 64 },
  [64] = { nw = 4, bn = 64 },
  [96] = { nw = 4, bn = 32 },
  [128] = { nw = 4, bn = 32 },
  [256] = { nw = 4, bn = 32 },
}
-- f32 (FFMA, 256 threads): kv bn keys per block x bm queries per tile; q bm
-- queries per block x bn keys per tile.
M.f32_kv = { [32] = { bn = 64, bm = 64 }, [64] = { bn = 64, bm = 64 }, [96] = { bn = 64, bm = 64 },
             [128] = { bn = 64, bm = 64 }, [256] = { bn = 64, bm = 32 } }
M.f32_q = { [32] = { bm = 64, bn = 64 }, [64] = { bm = 64, bn = 64 }, [96] = { bm = 64, bn = 64 },
            [128] = { bm = 64, bn = 64 }, [256] = { bm = 64, bn = 32 } }

local dtypes = { "f32", "f16", "bf16" }

local function plans(dt, d, kind)
  local ke = kind_enum[kind]
  if dt.name == "f32" then
    local kv, q = M.f32_kv[d], M.f32_q[d]
    local p = d + 4
    return {
      kv = { threads = 256, minb = 1, rows = kv.bn,
             smem = ((2 * kv.bn + 2 * kv.bm) * p + 2 * kv.bn * (kv.bm + 4) + 2 * kv.bm) * 4,
             call = string.format("attnb_kv_f32<%d, %d, %d, %s>", d, kv.bn, kv.bm, ke),
             shape = string.format("%d keys x %d-query tiles, FFMA", kv.bn, kv.bm) },
      q = { threads = 256, minb = 1, rows = q.bm,
            smem = ((2 * q.bm + 2 * q.bn) * p + q.bm * (q.bn + 4)) * 4,
            call = string.format("attnb_q_f32<%d, %d, %d, %s>", d, q.bm, q.bn, ke),
            shape = string.format("%d queries x %d-key tiles, FFMA", q.bm, q.bn) },
    }
  end
  local kv, q = M.tc_kv[d], M.tc_q[d]
  local p = d + 8
  local bn, bm = 16 * kv.nkw, 16 * q.nw
  return {
    kv = { threads = 32 * kv.nkw * (kv.split and 2 or 1), minb = 1, rows = bn,
           smem = (2 * bn + 4 * kv.bm) * p * 2 + 4 * kv.bm * 4,
           call = string.format("attnb_kv_tc<%s, %d, %d, %d, %s, %s>", dt.storage, d, kv.nkw, kv.bm,
                                tostring(kv.split or false), ke),
           shape = string.format("%d keys x %d-query tiles%s, mma.sync", bn, kv.bm, kv.split and ", dV/dK warps" or "") },
    q = { threads = 32 * q.nw, minb = 1, rows = bm, smem = (2 * bm + 4 * q.bn) * p * 2,
          call = string.format("attnb_q_tc<%s, %d, %d, %d, %s>", dt.storage, d, q.nw, q.bn, ke),
          shape = string.format("%d queries x %d-key tiles, mma.sync", bm, q.bn) },
  }
end

function M.generate(G)
  G:dep(G.root .. "/templates/attention_bwd.cu")
  local by = require("common").by_name(G.dtypes)
  local rows = {}
  for _, name in ipairs(dtypes) do
    local dt = by[name]
    local module = G:module("attnb_" .. name)
    local kernels = {}
    local function add(kname, pl, desc)
      local idx = G:kernel({ name = kname, module = module, vec = 1, desc = desc })
      kernels[#kernels + 1] = { name = kname, threads = pl.threads, minb = pl.minb, call = pl.call, desc = desc }
      return string.format("{%d, %d, %d, %d}", idx, pl.threads, pl.rows, pl.smem)
    end
    for di, d in ipairs(M.dims) do
      local pre = add(string.format("kg_attnb_%s_d%d_pre", name, d),
                      { threads = 256, minb = 1, rows = 8, smem = 0,
                        call = string.format("attnb_pre<%s, %d>", dt.storage, d) },
                      string.format("attention backward %s D=%d: delta = rowsum(dout * out), lse2", name, d))
      local kv, q = {}, {}
      for _, kind in ipairs(M.kinds) do
        local pl = plans(dt, d, kind)
        kv[#kv + 1] = add(string.format("kg_attnb_%s_d%d_%s_kv", name, d, kind), pl.kv,
                          string.format("attention backward %s D=%d %s: dK, dV (%s)", name, d, kind, pl.kv.shape))
        q[#q + 1] = add(string.format("kg_attnb_%s_d%d_%s_q", name, d, kind), pl.q,
                        string.format("attention backward %s D=%d %s: dQ (%s)", name, d, kind, pl.q.shape))
      end
      rows[#rows + 1] = string.format("    [%s][%d] = {%s, {%s}, {%s}},\n", dt.enum, di - 1, pre,
                                      table.concat(kv, ", "), table.concat(q, ", "))
    end
    G:write("attnb_" .. name .. ".cu", G:render("attention_bwd.cu", {
      header = G.header("templates/attention_bwd.cu and gen/attention_bwd.lua"),
      dtype = dt, dims = M.dims, kinds = M.kinds, kernels = kernels,
      path = name == "f32" and "FFMA" or "mma.sync",
    }))
  end
  local dims = {}
  for i, d in ipairs(M.dims) do dims[i] = tostring(d) end
  G:write("kg_attnb_table.h", G.header("gen/attention_bwd.lua") .. string.format([[
#ifndef KG_ATTNB_TABLE_H
#define KG_ATTNB_TABLE_H

#include "kg_core.h"
#include "attention_bwd_params.h"

#define KG_ATTNB_DIM_COUNT %d
/* The generated head dims, in slot order, and as text for messages. */
extern const int kg_attnb_dims[KG_ATTNB_DIM_COUNT];
#define KG_ATTNB_DIMS_TEXT "%s"

typedef struct kg_attnb_launch {
    int16_t kernel;  /* index into kg_kernels; 0 with threads 0: not generated */
    int16_t threads; /* block size */
    int16_t rows;    /* pre: rows per block; kv: keys per block; q: queries per block */
    int32_t smem;    /* dynamic shared memory, bytes */
} kg_attnb_launch;

typedef struct kg_attnb_entry {
    kg_attnb_launch pre;
    kg_attnb_launch kv[KG_ATTN_KIND_COUNT];
    kg_attnb_launch q[KG_ATTN_KIND_COUNT];
} kg_attnb_entry;

/* [q dtype][head dim slot]; pre.threads == 0 where not generated. */
extern const kg_attnb_entry kg_attnb_table[KG_DTYPE_COUNT][KG_ATTNB_DIM_COUNT];

#endif
]], #M.dims, table.concat(dims, ", ")))
  G:write("kg_attnb_table.c", G.header("gen/attention_bwd.lua") .. '#include "kg_attnb_table.h"\n\n' ..
    "const int kg_attnb_dims[KG_ATTNB_DIM_COUNT] = {" .. table.concat(dims, ", ") .. "};\n\n" ..
    "const kg_attnb_entry kg_attnb_table[KG_DTYPE_COUNT][KG_ATTNB_DIM_COUNT] = {\n" ..
    table.concat(rows) .. "};\n")
end

return M
