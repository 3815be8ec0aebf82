-- reduce.lua - the reduction family: every catalogue reduction (M.reduce)
-- crossed with the dtypes it accepts and the kernel classes below.
--
-- Writes red_<dtype>[_<group>].cu (one module per input dtype and group of
-- kernel classes, M.groups, from templates/reduce.cu),
-- kg_red_ops.h / kg_red_ops.c (the public op enum and one entry point per
-- op, plus <name>_with_indices for index reductions), kg_red_table.c / .h
-- (op x dtype x class -> kernel index, and each op's rules for the runtime)
-- and kg_red_reference.c / .h (the float64 / int64 CPU reference, from the
-- same expressions).
local M = {}

-- Kernel classes, in the order of kg_red_class in templates/kg_reduce_params.h.
-- colsn and nestn: the narrow (one element per load) walks of cols and nest
-- with 16 loads in flight and 32-bit walk arithmetic, under a tighter launch
-- bound (more blocks per multiprocessor); the planner keeps the class cols or
-- nest and sets kg_red_args.deep, the launch picks these kernels.
-- tile: short reduced runs under a dense kept dim, staged through shared
-- memory (templates/reduce.cuh, kg_red_tile).
-- flat: value reductions of short contiguous rows streamed as one flat run
-- (kg_red_flat), in the cols group.
-- colso, colsp, nesto: cols and nest at more blocks per multiprocessor (fewer
-- registers, 32-bit walk arithmetic; kg_red_plan.occ), in their class's group;
-- colsno, nestno: the same for the narrow walks.
-- flatw: flat with one warp per unit (many short slabs; the planner keeps
-- the class flat and sets kg_red_args.group 32, the launch picks this
-- kernel), in a group of its own; flatwo: flatw at more blocks per
-- multiprocessor (kg_red_plan.occ 4), in the same group.
-- colsq: cols over two column tiles per unit (the planner keeps the class
-- cols and sets kg_red_args.group 2, the launch picks this kernel), in the
-- cols group.
-- slab: narrow columns over a short reduced dim, whole slabs staged in shared
-- memory by cp.async, a group of its own (templates/reduce_slab.cuh), with
-- trans: outputs scattered in the input's order, written through shared
-- memory (templates/reduce_trans.cuh).
-- runt: column runs of any length in tiles of whole vectors, and segw:
-- short dense rows staged a warp at a time, a group of their own
-- (templates/reduce_runt.cuh; its own group so that no other module changed
-- when it came; run_tiles and seg_rows default since session 25).
-- transv: TRANS plans of 2-byte elements read in 16-byte vectors (tunings
-- trans_vec, trans_vec_f16, templates/reduce_transv.cuh; the default for
-- bf16 since round s35r2, for f16 since s35r4), a group of its own
-- built for bf16 and f16 only (`dtypes`: no other module changes, no empty
-- modules; the other dtypes' table entries are -1, which the planner never
-- reaches) and for value ops only (`values`: TRANS plans take no index
-- reduction; dropping the empty argmax / argmin kernels made room in the
-- bundle's 30 MiB for the f16 module).
-- flatwr: FLATW plans whose blocks start off the vector grid (tuning
-- flatw_ragged, args.vec 1 and 2; a default since session 37), the
-- covering vectors read and the elements outside each block dropped
-- (templates/reduce_flatw.cuh, mode 2): a group of its own built for bf16,
-- f16, f32 and i32 and value ops only, so that no other module changes.
M.classes = { "rows", "cols", "strided32", "strided64", "packed", "nest", "colsn", "nestn", "tile", "flat",
              "colso", "colsp", "nesto", "colsno", "nestno", "flatw", "slab", "trans", "flatwo", "colsq", "runt", "segw",
              "transv", "flatwr" }
-- Modules: one per input dtype and group of classes, each with every op the
-- dtype takes (red_<dtype> for the first group, red_<dtype>_<group>). The
-- first call of a class loads only its group's machine code (each group
-- about 1 MB of sm_90 code or less for f32; the whole f32 module was 4 MB and
-- cost the first kg_sum 13.6 ms), and the ops of a module, nearly the same
-- code, compress together (a module per op and dtype made the bundle 30% larger).
M.groups = {
  { name = "", classes = { "rows", "strided32", "strided64", "packed" } },
  { name = "cols", classes = { "cols", "flat", "colso", "colsp", "colsq" } },
  { name = "nest", classes = { "nest", "nesto" } },
  { name = "narrow", classes = { "colsn", "nestn", "colsno", "nestno" } },
  { name = "tile", classes = { "tile" } },
  { name = "flatw", classes = { "flatw", "flatwo" } },
  { name = "slab", classes = { "slab", "trans" } },
  { name = "runt", classes = { "runt", "segw" } },
  { name = "transv", classes = { "transv" }, dtypes = { bf16 = true, f16 = true }, values = true },
  { name = "flatwr", classes = { "flatwr" }, dtypes = { bf16 = true, f16 = true, f32 = true, i32 = true },
    values = true },
}
-- build fields (gen/expand.lua): the planner's own file, and the planner's CPU
-- test program beside tests/test_reduce.c (the GPU parity tests)
M.runtime = { "reduce_plan.c" }
M.tests = { "test_reduce_plan" }

local common = require("common")
local sets, typed = common.sets, common.typed

local function pick(op, dt, field)
  if dt.kind ~= "float" and op["int_" .. field] then return op["int_" .. field] end
  return op[field]
end

-- The accumulator's device type for op over dt.
local function acc_type(op, dt)
  if op.acc == "compute" then return dt.compute end
  assert(op.acc == "wide", op.name .. ": acc must be wide or compute")
  if dt.kind == "float" then return dt.name == "f64" and "double" or "float" end
  return "int64_t"
end

-- The dtype of the result's values.
local function out_dtype(op, dt, D)
  if op.out == "same" or dt.kind == "float" then return dt end
  assert(op.out == "wide", op.name .. ": out must be same or wide")
  return D.i64
end

local limits = {
  float = { lowest = "-INFINITY", highest = "INFINITY" },
  double = { lowest = "-(double)INFINITY", highest = "(double)INFINITY" },
  int32_t = { lowest = "INT32_MIN", highest = "INT32_MAX" },
  int64_t = { lowest = "INT64_MIN", highest = "INT64_MAX" },
  uint32_t = { lowest = "0u", highest = "UINT32_MAX" },
}

local function identity(op, acc)
  if op.identity == "0" or op.identity == "1" then return "(" .. acc .. ")" .. op.identity end
  return assert(limits[acc][op.identity], op.name .. ": unknown identity " .. tostring(op.identity))
end

function M.generate(G)
  local dtypes, ops = G.dtypes, G.catalogue.reduce
  local D = common.by_name(dtypes)
  local table_ = {} -- [op id][dtype index][class index] -> kernel

  for i, op in ipairs(ops) do
    assert(sets[op.dtypes], op.name .. ": unknown dtype set " .. tostring(op.dtypes))
    assert((op.combine ~= nil) ~= (op.better ~= nil), op.name .. ": needs exactly one of combine and better")
    op.enum = "KG_RED_" .. op.name:upper()
    op.id = i
    op.indexed = op.better ~= nil
    op.nonempty = op.identity == "lowest" or op.identity == "highest"
    table_[i] = {}
  end

  local grouped = {}
  for _, grp in ipairs(M.groups) do
    for _, c in ipairs(grp.classes) do
      assert(not grouped[c], "class " .. c .. " in two module groups")
      grouped[c] = true
    end
  end
  for _, c in ipairs(M.classes) do assert(grouped[c], "class " .. c .. " in no module group") end

  for _, dt in ipairs(dtypes) do
    -- the functors of every op over dt
    local functors = {}
    for _, op in ipairs(ops) do
      if sets[op.dtypes][dt.name] then
        local acc = acc_type(op, dt)
        local od = out_dtype(op, dt, D)
        functors[#functors + 1] = {
          op = op, name = "kg_red_" .. op.name .. "_" .. dt.name, acc = acc, out = od.storage,
          indexed = op.indexed and "true" or "false",
          identity = identity(op, acc),
          load = string.format(dt.load, "x_"),
          map = typed(op.map or "x", acc),
          combine = op.indexed and "a" or typed(pick(op, dt, "combine"), acc),
          better = op.indexed and typed(pick(op, dt, "better"), acc) or "false",
          finish = string.format(od.store, typed(op.finish or "acc", acc)),
        }
        table_[op.id][dt.index] = {}
      end
    end
    -- one module per class group, every op in it
    for _, grp in ipairs(M.groups) do
      if grp.dtypes and not grp.dtypes[dt.name] then goto next_group end
      local mname = "red_" .. dt.name .. (grp.name == "" and "" or "_" .. grp.name)
      local module = G:module(mname)
      local has = {}
      for _, c in ipairs(grp.classes) do has[c] = true end
      -- `values`: the group's kernels for value ops only (the planner sends
      -- no index reduction to its classes; their table entries are -1)
      local gfunctors = functors
      if grp.values then
        gfunctors = {}
        for _, f in ipairs(functors) do
          if not f.op.indexed then gfunctors[#gfunctors + 1] = f end
        end
      end
      for _, f in ipairs(gfunctors) do
        for ci, c in ipairs(M.classes) do
          if has[c] then
            table_[f.op.id][dt.index][ci - 1] = G:kernel({ name = f.name .. "_" .. c, module = module,
                                                           vec = 16 // dt.size,
                                                           desc = f.op.name .. "(" .. dt.name .. ") [" .. c .. "]" })
          end
        end
      end
      G:write(mname .. ".cu", G:render("reduce.cu", {
        header = G.header("templates/reduce.cu and gen/catalogue.lua"),
        dtype = dt, functors = gfunctors, classes = grp.classes, has = has, vec = 16 // dt.size,
        cvec = math.min(4, 16 // dt.size),
      }))
      ::next_group::
    end
  end

  -- the dispatch table and each op's rules
  local t = { G.header("gen/catalogue.lua"), '#include "kg_red_table.h"\n\n',
              "const int16_t kg_red_table[KG_RED_COUNT][KG_DTYPE_COUNT][KG_RED_CLASS_COUNT] = {\n" }
  for _, op in ipairs(ops) do
    for _, dt in ipairs(dtypes) do
      local ks = table_[op.id][dt.index]
      if ks then
        local row = {}
        for ci = 1, #M.classes do row[ci] = tostring(ks[ci - 1] or -1) end
        t[#t + 1] = string.format("    [%s][%s] = {%s},\n", op.enum, dt.enum, table.concat(row, ", "))
      end
    end
  end
  t[#t + 1] = "};\n\nconst kg_red_info kg_red_infos[KG_RED_COUNT] = {\n"
  for _, op in ipairs(ops) do
    local mask, accs, outs = 0, {}, {}
    for _, dt in ipairs(dtypes) do
      if sets[op.dtypes][dt.name] then mask = mask | (1 << dt.index) end
      local a = acc_type(op, dt)
      accs[#accs + 1] = (a == "double" or a == "int64_t") and "8" or "4"
      outs[#outs + 1] = out_dtype(op, dt, D).enum
    end
    t[#t + 1] = string.format("    [%s] = {\"%s\", 0x%02xu, %d, %d, {%s}, {%s}, %s, \"%s\"},\n", op.enum, op.name,
                              mask, op.indexed and 1 or 0, op.nonempty and 1 or 0, table.concat(outs, ", "),
                              table.concat(accs, ", "),
                              op.with_values and ('"kg_' .. op.with_values .. '"') or "0", op.combine or op.better)
  end
  t[#t + 1] = "};\n"
  G:write("kg_red_table.c", table.concat(t))
  G:write("kg_red_table.h", G.header("gen/reduce.lua") .. [[
#ifndef KG_RED_TABLE_H
#define KG_RED_TABLE_H

#include "kg_reduce_params.h"
#include "kg_reduce.h"

/* What the runtime needs to know of each reduction. */
typedef struct kg_red_info {
    const char *name;
    unsigned dtype_mask;            /* bit (1 << d) for each accepted input dtype d */
    int indexed;                    /* 1: returns indices (argmax, argmin) */
    int nonempty;                   /* 1: an empty reduced slice has no result (an error) */
    kg_dtype out[KG_DTYPE_COUNT];   /* the values' dtype per input dtype */
    int acc_size[KG_DTYPE_COUNT];   /* bytes of the accumulator per input dtype */
    const char *with_values;        /* index reductions: the entry point returning values too */
    const char *combine;            /* the catalogue's combine (or better) expression, for tests */
} kg_red_info;

extern const kg_red_info kg_red_infos[KG_RED_COUNT];

/* Kernel index for [op][input dtype][class]; entries of dtypes an op does not
   accept are 0 and never reached (the dtype rule is checked first). */
extern const int16_t kg_red_table[KG_RED_COUNT][KG_DTYPE_COUNT][KG_RED_CLASS_COUNT];

#endif
]])

  -- public enum and entry points
  local h = common.op_header(G, "KG_RED_OPS_H", "Reductions, in catalogue order (see kg_reduce).", "kg_reduce_op",
                             "KG_RED_NONE", "KG_RED_COUNT", ops)
  h[#h + 1] = [[
/* Reduces `in` over `axes` (n_axes of them; n_axes == 0 means every axis)
   into out and, for index reductions, indices (i64). Every entry point below
   is this call with the op fixed. See kg_reduce.h. */
KG_API kg_status kg_reduce(kg_context *ctx, kg_reduce_op op, const kg_tensor *out, const kg_tensor *indices,
                           const kg_tensor *in, const int *axes, int n_axes, int keepdim);

]]
  local c = { G.header("gen/catalogue.lua"), '#include "kg_reduce.h"\n' }
  local tail = "const kg_tensor *in, const int *axes, int n_axes, int keepdim)"
  for _, op in ipairs(ops) do
    if op.indexed then
      local p1 = string.format("kg_status kg_%s(kg_context *ctx, const kg_tensor *indices, %s", op.name, tail)
      local p2 = string.format("kg_status kg_%s(kg_context *ctx, const kg_tensor *values, const kg_tensor *indices, %s",
                               op.with_values, tail)
      h[#h + 1] = string.format("/* %s */\nKG_API %s;\n", op.doc, p1)
      h[#h + 1] = string.format("/* the values and the indices of %s together */\nKG_API %s;\n", op.name, p2)
      c[#c + 1] = string.format("\n%s\n{\n    return kg_reduce(ctx, %s, NULL, indices, in, axes, n_axes, keepdim);\n}\n",
                                p1, op.enum)
      c[#c + 1] = string.format("\n%s\n{\n    return kg_reduce(ctx, %s, values, indices, in, axes, n_axes, keepdim);\n}\n",
                                p2, op.enum)
    else
      local p = string.format("kg_status kg_%s(kg_context *ctx, const kg_tensor *out, %s", op.name, tail)
      h[#h + 1] = string.format("/* %s */\nKG_API %s;\n", op.doc, p)
      c[#c + 1] = string.format("\n%s\n{\n    return kg_reduce(ctx, %s, out, NULL, in, axes, n_axes, keepdim);\n}\n",
                                p, op.enum)
    end
  end
  h[#h + 1] = common.header_end
  G:write("kg_red_ops.h", table.concat(h))
  G:write("kg_red_ops.c", table.concat(c))

  -- the CPU reference: sequential, in double (floats) or int64 (integers)
  local r = { G.header("gen/catalogue.lua"),
              "#include <math.h>\n#include <stdint.h>\n\n#include \"kg_red_reference.h\"\n" }
  local entries = {}
  local ref_limits = { double = { lowest = "-INFINITY", highest = "INFINITY" },
                       int64_t = { lowest = "INT64_MIN", highest = "INT64_MAX" } }
  local function ref_fn(op, kind, T)
    local dt = kind == "float" and D.f32 or D.i64
    local ident = (op.identity == "0" or op.identity == "1") and ("(" .. T .. ")" .. op.identity)
                  or ref_limits[T][op.identity]
    local body
    if op.indexed then
      body = string.format("        if (at < 0 || (%s)) {\n            acc = b;\n            at = k;\n        }\n",
                           typed(pick(op, dt, "better"):gsub("%f[%w_]a%f[^%w_]", "B"):gsub("%f[%w_]b%f[^%w_]", "acc")
                                 :gsub("%f[%w_]B%f[^%w_]", "b"), T))
    else
      body = string.format("        const %s a = acc;\n        acc = %s;\n", T, typed(pick(op, dt, "combine"), T))
    end
    local name = string.format("red_%s_%s", kind == "float" and "f" or "i", op.name)
    return name, string.format([[

static %s %s(const %s *in, int64_t n, int64_t *index)
{
    %s acc = %s;
    int64_t at = -1;
    for (int64_t k = 0; k < n; k++) {
        const %s x = in[k];
        const %s b = %s;
%s    }
    if (index)
        *index = at;
    (void)at;
    return %s;
}
]], T, name, T, T, ident, T, T, typed(op.map or "x", T), body, typed(op.finish or "acc", T))
  end
  for _, op in ipairs(ops) do
    local fname, fsrc = ref_fn(op, "float", "double")
    r[#r + 1] = fsrc
    local iname = "0"
    if sets[op.dtypes].i32 then
      local src
      iname, src = ref_fn(op, "int", "int64_t")
      r[#r + 1] = src
    end
    entries[#entries + 1] = string.format("    [%s] = {%s, %s},\n", op.enum, fname, iname)
  end
  r[#r + 1] = "\nconst kg_red_ref_entry kg_red_refs[KG_RED_COUNT] = {\n" .. table.concat(entries) .. "};\n"
  G:write("kg_red_reference.c", table.concat(r))
  G:write("kg_red_reference.h", G.header("gen/catalogue.lua") .. [[
#ifndef KG_RED_REFERENCE_H
#define KG_RED_REFERENCE_H

#include <stdint.h>

#include "kg_reduce.h"

/* The CPU reference of each reduction over n elements in order: f in double
   (float dtypes), i in int64 with wrapping (integers and bool; NULL where the
   op takes none). Index reductions store the index in *index (-1 when n is
   0); the values are returned. */
typedef struct kg_red_ref_entry {
    double (*f)(const double *in, int64_t n, int64_t *index);
    int64_t (*i)(const int64_t *in, int64_t n, int64_t *index);
} kg_red_ref_entry;

extern const kg_red_ref_entry kg_red_refs[KG_RED_COUNT];

#endif
]])
end

-- the C enums whose order the lists above must match (expand.lua checks)
M.enums = { { "templates/kg_reduce_params.h", "kg_red_class", "KG_RED_", M.classes } }

return M
