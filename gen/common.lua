-- common.lua - what the kernel families share: the named dtype sets a
-- catalogue entry's `dtypes` field refers to, and the substitution of the
-- compute type T into a catalogue expression.
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

return M
