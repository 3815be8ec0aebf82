-- dtypes.lua - the element types kgen generates kernels for, in the order of
-- kg_dtype in runtime/kg_core.h (the generator checks that order).
--
--   storage : the device C type an element is stored as
--   compute : the device type arithmetic happens in (f16/bf16 compute in f32;
--             u8 and bool in 32-bit unsigned, truncated on store)
--   kind    : float | int | bool; decides which catalogue expression applies
--   load/store : device expressions converting storage <-> compute (default
--             "%s": the identity)
-- Each entry also gets enum = "KG_<NAME>".
local dtypes = {
  { name = "f32",  size = 4, storage = "float",         compute = "float",    kind = "float" },
  { name = "f64",  size = 8, storage = "double",        compute = "double",   kind = "float" },
  { name = "f16",  size = 2, storage = "__half",        compute = "float",    kind = "float",
    load = "__half2float(%s)", store = "__float2half_rn(%s)" },
  { name = "bf16", size = 2, storage = "__nv_bfloat16", compute = "float",    kind = "float",
    load = "__bfloat162float(%s)", store = "__float2bfloat16_rn(%s)" },
  { name = "i32",  size = 4, storage = "int32_t",       compute = "int32_t",  kind = "int",
    store = "(int32_t)(%s)" },
  { name = "i64",  size = 8, storage = "int64_t",       compute = "int64_t",  kind = "int",
    store = "(int64_t)(%s)" },
  { name = "u8",   size = 1, storage = "uint8_t",       compute = "uint32_t", kind = "int",
    load = "(uint32_t)(%s)", store = "(uint8_t)(%s)" },
  { name = "bool", size = 1, storage = "uint8_t",       compute = "uint32_t", kind = "bool",
    load = "(uint32_t)(%s != 0)", store = "(uint8_t)((%s) != 0)" },
}
for _, d in ipairs(dtypes) do
  d.enum = "KG_" .. d.name:upper()
  d.load = d.load or "%s"
  d.store = d.store or "%s"
end
return dtypes
