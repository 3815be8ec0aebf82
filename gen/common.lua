-- common.lua - what the kernel families share: the named dtype sets a
-- catalogue entry's `dtypes` field refers to, the substitution of the
-- compute type T into a catalogue expression, the dtypes by name, and the
-- frame of a family's public op header (guard, extern "C", op enum).
local M = {}

M.sets = {
  float = { f32 = true, f64 = true, f16 = true, bf16 = true },
  numeric = { f32 = true, f64 = true, f16 = true, bf16 = true, i32 = true, i64 = true, u8 = true },
  all = { f32 = true, f64 = true, f16 = true, bf16 = true, i32 = true, i64 = true, u8 = true, bool = true },
}

-- Replaces the identifier T in an expression by a type name.
function M.typed(expr, t)
  return (expr:gsub("%f[%w_]T%f[^%w_]", t))
end

-- Numbers the dtypes (d.index, from 0 in enum order) and returns them by name.
function M.by_name(dtypes)
  local t = {}
  for i, d in ipairs(dtypes) do t[d.name] = d; d.index = i - 1 end
  return t
end

-- The opening of a public op header: include guard, extern "C" and the enum
-- `enum` of `ops` (each op's enum name and doc comment), from `none` = 0 to
-- `count`. Returns the list of parts; the family appends its declarations,
-- then M.header_end.
function M.op_header(G, guard, comment, enum, none, count, ops)
  local h = { G.header("gen/catalogue.lua"), "#ifndef " .. guard .. "\n#define " .. guard .. "\n\n#include \"kg_core.h\"\n\n",
              "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
              "/* " .. comment .. " */\ntypedef enum " .. enum .. " {\n    " .. none .. " = 0,\n" }
  for _, op in ipairs(ops) do
    h[#h + 1] = string.format("    %s, /* %s */\n", op.enum, op.doc)
  end
  h[#h + 1] = "    " .. count .. "\n} " .. enum .. ";\n\n"
  return h
end

M.header_end = "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n"

return M
