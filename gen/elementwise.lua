-- elementwise.lua - the element-wise family: every catalogue op (and cast)
-- crossed with the dtypes it accepts and the layout variants below.
--
-- Writes ew_<dtype>[_<group>].cu (one module per dtype and op group, from
-- templates/elementwise.cu),
-- kg_ops.h / kg_ops.c (the op enum, op descriptions, one entry point per op),
-- kg_ew_table.c (op x dtype x out dtype x variant -> kernel index) and
-- kg_reference.c / .h (the float64 CPU reference from the same expressions).
local M = {}

-- Layout variants, in the order of kg_ew_variant in templates/kg_params.h.
M.variants = { "dense", "nd32", "nd32v", "nd64", "tile", "perm", "permf", "rows" }
-- The op groups that also get a tperm kernel (kg_tperm.h), in modules of
-- their own; the runtime calls it KG_EW_TPERM (runtime/layout.h).
M.tperm_groups = { "core", "cast" }
-- The kernels a copy's tperm module holds for it, in module order (those a
-- dtype's copy has; below): kg_ew_table.h's kg_ew_tpk (KG_EW_TPK_<NAME>)
-- and kg_ew_table.c's kg_ew_copy_tpk (each one's offset from the copy's
-- tperm kernel, by dtype), which the runtime launches them by (tchunk: no
-- dtype's copy has it since session 37, -1 everywhere).
M.tperm_kernels = { "tperm", "tperm2", "rowsv", "tplanev", "tslab", "tchunk", "tperma", "tperms", "tplanem", "tpermc" }

local common = require("common")
local sets, typed = common.sets, common.typed

local function accepts(op, dt) return sets[op.dtypes][dt.name] == true end

local function expr_for(op, dt)
  if dt.kind == "float" then
    if dt.size == 2 and op.half_expr then return op.half_expr end
    return op.expr
  end
  return op.int_expr or op.expr
end

-- The device conversion of a cast's source value into `dst`.
local function cast_plan(src, dst)
  if src.kind ~= "float" and dst.kind ~= "float" then
    return src.compute, dst.store -- integer -> integer wraps; -> bool is != 0
  end
  if dst.kind == "float" then
    local via = (src.name == "f64" or src.name == "i64" or src.name == "i32") and "double" or "float"
    local to = { f32 = "(float)(%s)", f64 = "(double)(%s)",
                 f16 = via == "double" and "__double2half(%s)" or "__float2half_rn(%s)",
                 bf16 = via == "double" and "__double2bfloat16(%s)" or "__float2bfloat16_rn(%s)" }
    return via, to[dst.name]
  end
  -- float -> integer / bool
  if dst.name == "bool" then return src.compute, "(uint8_t)((%s) != 0)" end
  return src.compute, "kg_saturate<" .. dst.storage .. ">(%s)"
end

function M.generate(G)
  local dtypes, cat = G.dtypes, G.catalogue
  local D = common.by_name(dtypes)
  local ops = cat.elementwise
  local nvar = #M.variants
  -- table[op][dtype][outdtype][variant] -> kernel index, -1 when none
  local table_ = {}
  local function slot(opi, di, oi, vi) return ((opi * #dtypes + di) * #dtypes + oi) * nvar + vi end

  local all_ops = {}
  for i, op in ipairs(ops) do
    op.inputs = op.inputs or (op.arity == 1 and { "a" } or { "a", "b" })
    assert(#op.inputs == op.arity, op.name .. ": inputs and arity disagree")
    assert(sets[op.dtypes], op.name .. ": unknown dtype set " .. tostring(op.dtypes))
    assert(type(op.group) == "string" and op.group:match("^[a-z][a-z0-9]*$"),
           op.name .. ": every op names its group (lower-case letters and digits)")
    assert(op.group ~= "cast", op.name .. ": the group cast is the casts'")
    op.enum = "KG_OP_" .. op.name:upper()
    op.id = i
    all_ops[i] = op
  end
  local cast = { name = cat.cast.name, doc = cat.cast.doc, enum = "KG_OP_CAST", id = #ops + 1, arity = 1,
                 inputs = { "a" }, dtypes = "all" }
  all_ops[#all_ops + 1] = cast

  local tperm_sets = {}
  -- One module per dtype and op group (the catalogue's `group`; casts are
  -- the group "cast"): ew_<dtype> for the group "core", ew_<dtype>_<group>
  -- for the others. A new op then recompiles only its group's modules, and
  -- the first call of an op loads (inflates) only its group's machine code.
  for _, dt in ipairs(dtypes) do
    local groups, order = {}, {}
    -- moves: the op returns its input converted to out (copy, cast: the
    -- catalogue's `moves`), so where the two dtypes match it is the input
    local function add(group, fname, opi, out, inputs, body, desc, moves)
      -- elements per vector: 16 bytes of the widest of the dtype and the
      -- output, so each warp-wide store covers whole 32-byte sectors
      local vec = 16 // math.max(dt.size, out.size)
      if not groups[group] then
        groups[group] = {}
        order[#order + 1] = group
      end
      local g = groups[group]
      -- raw: copies and identity casts of f16 / bf16 return their input's
      -- storage as it is (every variant, every module): the body's round
      -- trip through f32 would turn a NaN into the canonical one (sign and
      -- payload lost). f32 / f64 bodies are a plain move (no conversion
      -- instruction) and integer ones round-trip exactly, so they keep the
      -- body (tests/test_elementwise.c checks the bits of every dtype).
      local raw = moves and #inputs == 1 and inputs[1].dt.name == out.name and dt.kind == "float" and
                  dt.storage ~= dt.compute
      g[#g + 1] = { name = fname, out = out, inputs = inputs, body = body, vec = vec, opi = opi, desc = desc,
                    raw = raw, moves = moves }
    end
    for _, op in ipairs(ops) do
      if accepts(op, dt) then
        local out = op.out == "bool" and D.bool or dt
        local inputs = {}
        for j, nm in ipairs(op.inputs) do
          inputs[j] = { name = nm, dt = (op.cond and j == 1) and D.bool or dt }
        end
        local ex = typed(expr_for(op, dt), dt.compute)
        add(op.group, "kg_" .. op.name .. "_" .. dt.name, op.id, out, inputs, string.format(out.store, ex),
            op.name .. "(" .. dt.name .. ") = " .. op.doc, op.moves == true)
      end
    end
    for _, dst in ipairs(dtypes) do
      local via, to = cast_plan(dt, dst)
      add("cast", "kg_cast_" .. dt.name .. "_" .. dst.name, cast.id, dst, { { name = "a", dt = dt, via = via } },
          string.format(to, "a"), "cast " .. dt.name .. " -> " .. dst.name, true)
    end
    for _, group in ipairs(order) do
      local name = "ew_" .. dt.name .. (group == "core" and "" or "_" .. group)
      local module = G:module(name)
      local functors = groups[group]
      for _, f in ipairs(functors) do
        for vi, v in ipairs(M.variants) do
          local k = G:kernel({ name = f.name .. "_" .. v, module = module, vec = f.vec, desc = f.desc .. " [" .. v .. "]" })
          table_[slot(f.opi, dt.index, f.out.index, vi - 1)] = k
        end
      end
      G:write(name .. ".cu", G:render("elementwise.cu", {
        header = G.header("templates/elementwise.cu and gen/catalogue.lua"),
        dtype = dt, group = group, functors = functors, variants = M.variants, include = "elementwise.cuh", tperm = false,
      }))
    end
    -- the tperm kernels (kg_tperm.h) of the core and cast groups
    local tp = {}
    for _, group in ipairs(M.tperm_groups) do
      for _, f in ipairs(groups[group] or {}) do tp[#tp + 1] = f end
    end
    tperm_sets[#tperm_sets + 1] = { dt = dt, functors = tp }
  end

  -- One module per dtype for tperm, after every other element-wise module
  -- (its own template header: changing tperm rebuilds only these).
  local tperm_ = {}
  local copy_op
  for _, op in ipairs(ops) do
    if op.name == "copy" then copy_op = op end
  end
  assert(copy_op, "the catalogue has the op copy")
  -- an op's tperm2 follows its tperm at this offset (KG_EW_TPERM2_AT)
  local TPERM2_AT = 1
  -- copy_at[dtype index][kernel name] -> kernel index (M.tperm_kernels)
  local copy_at = {}
  for _, set in ipairs(tperm_sets) do
    local dt = set.dt
    if #set.functors > 0 then
      local name = "ew_" .. dt.name .. "_tperm"
      local module = G:module(name)
      for _, f in ipairs(set.functors) do
        local k = G:kernel({ name = f.name .. "_tperm", module = module, vec = f.vec, desc = f.desc .. " [tperm]" })
        tperm_[(f.opi * #dtypes + dt.index) * #dtypes + f.out.index] = k
        -- this functor's kernels in the module by name (M.tperm_kernels)
        local at = { tperm = k }
        if f.opi == copy_op.id then
          assert(f.out.index == dt.index and not copy_at[dt.index])
          copy_at[dt.index] = at
        end
        -- ops of one input whose elements have at most 2 bytes: <op>_tperm2
        -- (two tiles per pass) right after, at index k + 1 (the runtime
        -- launches it as tperm's index + 1 under the same rule)
        f.tperm2 = #f.inputs == 1 and math.max(dt.size, f.out.size) <= 2
        -- ops of two inputs with 2-byte elements: <op>_tperm compiled for a
        -- minimum of resident blocks per SM (kg_tperm.h)
        f.tperm_min = #f.inputs == 2 and math.max(dt.size, f.out.size) == 2 and "KG_TP_BIN2_MIN_BLOCKS" or nil
        -- copies and identity casts (bool aside) move bits in the tperm
        -- kernels: no convert through float and back per element
        f.bits = f.moves and #f.inputs == 1 and f.inputs[1].dt.name == f.out.name and dt.name ~= "bool"
        if f.tperm2 then
          local k2 = G:kernel({ name = f.name .. "_tperm2", module = module, vec = f.vec,
                                desc = f.desc .. " [tperm, two tiles per pass]" })
          assert(k2 == k + TPERM2_AT)
          at.tperm2 = k2
        end
        -- copies (bool aside): <op>_rowsv (rows kept in place, realigned
        -- 16-byte chunks) after them, at index k + 1 (+ 1 where tperm2 is)
        f.rowsv = f.moves and f.opi ~= cast.id and #f.inputs == 1 and dt.name ~= "bool"
        if f.rowsv then
          local kr = G:kernel({ name = f.name .. "_rowsv", module = module, vec = f.vec,
                                desc = f.desc .. " [rows in place, realigned 16-byte chunks]" })
          assert(kr == k + 1 + (f.tperm2 and 1 or 0))
          at.rowsv = kr
          -- and <op>_tplanev (planes contiguous in both operands, transposed,
          -- by 16-byte chunks) right after rowsv
          local kv = G:kernel({ name = f.name .. "_tplanev", module = module, vec = f.vec,
                                desc = f.desc .. " [contiguous planes transposed, 16-byte chunks]" })
          assert(kv == kr + 1)
          at.tplanev = kv
          -- and <op>_tslab (slabs of whole output rows, 16-byte chunks) after it
          local ks = G:kernel({ name = f.name .. "_tslab", module = module, vec = f.vec,
                                desc = f.desc .. " [slabs of whole output rows, 16-byte chunks]" })
          assert(ks == kv + 1)
          at.tslab = ks
          -- (<op>_tchunk, tiles of aligned 16-byte chunks on both sides, came
          -- after it until session 37: forced only, it lost every measured
          -- row (runtime/elementwise.c, tchunk_mode), and its 7 kernels
          -- (about 65 KB) made room in the bundle; kg_ew_copy_tpk holds -1)
          local kc = ks
          -- and after it, for 2-byte elements, <op>_tperma (tperm's tiles at
          -- 6 blocks per SM; elementwise_tpa.cuh), for 4-byte elements
          -- <op>_tperms (tperm's tiles with output rows cut at 32-byte
          -- sectors; elementwise_tph.cuh)
          -- (and for 2-byte elements, after tperma, <op>_tperms by 32-bit words
          -- on both sides; elementwise_tpw.cuh)
          local kt = kc
          for _, t in ipairs({ { "tperma", { [2] = true }, "6 blocks per SM" },
                               { "tperms", { [2] = true, [4] = true }, "output rows cut at sectors" } }) do
            f[t[1]] = t[2][dt.size] and f.bits
            if f[t[1]] then
              local k2 = G:kernel({ name = f.name .. "_" .. t[1], module = module, vec = f.vec,
                                    desc = f.desc .. " [tperm tiles, " .. t[3] .. "]" })
              assert(k2 == kt + 1)
              at[t[1]] = k2
              kt = k2
            end
          end
          -- and last, for 2- and 4-byte elements (where tperms is),
          -- <op>_tplanem (tplanev's planes, several a block's run)
          f.tplanem = f.tperms
          if f.tplanem then
            local k2 = G:kernel({ name = f.name .. "_tplanem", module = module, vec = f.vec,
                                  desc = f.desc .. " [contiguous planes transposed, several a block, 16-byte chunks]" })
            assert(k2 == kt + 1)
            at.tplanem = k2
            -- and after it, for 2-byte elements, <op>_tpermc (tperm's square
            -- tiles with output rows cut at 32-byte sectors and stored as
            -- aligned 16-byte chunks; elementwise_tpc.cuh; forced, or by
            -- the default choice under KG_EW_TUNE_TPERMC 1, the default
            -- since round s31r1)
            f.tpermc = dt.size == 2
            if f.tpermc then
              local k3 = G:kernel({ name = f.name .. "_tpermc", module = module, vec = f.vec,
                                    desc = f.desc .. " [tperm tiles, output rows cut at sectors, 16-byte chunks]" })
              assert(k3 == k2 + 1)
              at.tpermc = k3
            end
          end
        end
      end
      G:write(name .. ".cu", G:render("elementwise.cu", {
        header = G.header("templates/elementwise.cu and gen/catalogue.lua"),
        dtype = dt, group = table.concat(M.tperm_groups, " and "), functors = set.functors, variants = dt.size == 2 and { "tperm", "tperm2", "rowsv", "tplanev", "tslab", "tperma", "tperms", "tplanem", "tpermc" }
          or dt.size == 4 and { "tperm", "tperm2", "rowsv", "tplanev", "tslab", "tperms", "tplanem" }
          or { "tperm", "tperm2", "rowsv", "tplanev", "tslab" },
        include = dt.size == 2 and "elementwise_tpc.cuh" or dt.size == 4 and "elementwise_tph.cuh" or "elementwise_tperm.cuh",
        tperm = true,
      }))
    end
  end

  -- the dispatch table
  local lines = { G.header("gen/catalogue.lua"), '#include "kg_ew_table.h"\n\n',
                  "const int16_t kg_ew_table[KG_OP_COUNT][KG_DTYPE_COUNT][KG_DTYPE_COUNT][KG_EW_VARIANT_COUNT] = {\n" }
  for _, op in ipairs(all_ops) do
    for _, dt in ipairs(dtypes) do
      for _, od in ipairs(dtypes) do
        local ks, any = {}, false
        for vi = 0, nvar - 1 do
          local k = table_[slot(op.id, dt.index, od.index, vi)]
          ks[#ks + 1] = tostring(k or -1)
          any = any or k ~= nil
        end
        if any then
          lines[#lines + 1] = string.format("    [%s][%s][%s] = {%s},\n", op.enum, dt.enum, od.enum,
                                            table.concat(ks, ", "))
        end
      end
    end
  end
  lines[#lines + 1] = "};\n\nconst int16_t kg_ew_tperm_table[KG_OP_COUNT][KG_DTYPE_COUNT][KG_DTYPE_COUNT] = {\n"
  for _, op in ipairs(all_ops) do
    for _, dt in ipairs(dtypes) do
      for _, od in ipairs(dtypes) do
        local k = tperm_[(op.id * #dtypes + dt.index) * #dtypes + od.index]
        if k then
          lines[#lines + 1] = string.format("    [%s][%s][%s] = %d,\n", op.enum, dt.enum, od.enum, k + 1)
        end
      end
    end
  end
  lines[#lines + 1] = "};\n\nconst int8_t kg_ew_copy_tpk[KG_DTYPE_COUNT][KG_EW_TPK_COUNT] = {\n"
  for _, dt in ipairs(dtypes) do
    local at = copy_at[dt.index]
    if at then
      local known = {}
      for _, v in ipairs(M.tperm_kernels) do known[v] = true end
      for v in pairs(at) do assert(known[v], v .. ": not in M.tperm_kernels") end
      local offs, last = {}, -1
      for i, v in ipairs(M.tperm_kernels) do
        -- module order: each kernel the copy has after the one before
        assert(at[v] == nil or at[v] > last, v)
        last = at[v] or last
        offs[i] = at[v] and tostring(at[v] - at.tperm) or "-1"
      end
      lines[#lines + 1] = string.format("    [%s] = {%s},\n", dt.enum, table.concat(offs, ", "))
    end
  end
  lines[#lines + 1] = "};\n"
  G:write("kg_ew_table.c", table.concat(lines))
  local tpk = {}
  for i, v in ipairs(M.tperm_kernels) do tpk[i] = "KG_EW_TPK_" .. v:upper() end
  G:write("kg_ew_table.h", G.header("gen/elementwise.lua") ..
    "#ifndef KG_EW_TABLE_H\n#define KG_EW_TABLE_H\n\n#include \"kgen.h\"\n#include \"kg_params.h\"\n\n" ..
    "/* Kernel index for [op][input dtype][output dtype][variant]; -1 where none\n" ..
    "   (entries not listed are 0 and are never reached: the op's dtype rule is\n" ..
    "   checked first, and every accepted combination is listed). */\n" ..
    "extern const int16_t kg_ew_table[KG_OP_COUNT][KG_DTYPE_COUNT][KG_DTYPE_COUNT][KG_EW_VARIANT_COUNT];\n\n" ..
    "/* The tperm kernel (kg_tperm.h) for [op][input dtype][output dtype], as its\n" ..
    "   index + 1; 0 where none (ops outside the groups core and cast). */\n" ..
    "extern const int16_t kg_ew_tperm_table[KG_OP_COUNT][KG_DTYPE_COUNT][KG_DTYPE_COUNT];\n\n" ..
    "/* An op's <op>_tperm2 (ops of one input, elements of at most 2 bytes) is\n" ..
    "   its tperm kernel's index + this. */\n#define KG_EW_TPERM2_AT " .. TPERM2_AT .. "\n\n" ..
    "/* The kernels a copy's tperm module holds for it, in module order\n" ..
    "   (gen/elementwise.lua, M.tperm_kernels), and kg_ew_copy_tpk[dtype][kernel]:\n" ..
    "   each one's offset from the copy's tperm kernel, -1 where that dtype's\n" ..
    "   copy has none (bool's: tperm and tperm2 only). */\n" ..
    "typedef enum { " .. table.concat(tpk, ", ") .. ", KG_EW_TPK_COUNT } kg_ew_tpk;\n" ..
    "extern const int8_t kg_ew_copy_tpk[KG_DTYPE_COUNT][KG_EW_TPK_COUNT];\n\n#endif\n")

  -- public op enum, descriptions and entry points
  local h = common.op_header(G, "KG_OPS_H", "Element-wise ops, in catalogue order.", "kg_op", "KG_OP_NONE",
                             "KG_OP_COUNT", all_ops)
  h[#h + 1] = [[
/* What an op accepts. dtype_mask has bit (1 << d) set for each accepted
   input dtype d; out_rule says what the output's dtype must be. */
typedef enum kg_out_rule { KG_OUT_SAME, KG_OUT_BOOL, KG_OUT_ANY } kg_out_rule;

typedef struct kg_op_info {
    const char *name;
    int arity;
    kg_out_rule out_rule;
    int cond_first;        /* 1 when input 0 is a bool condition (where) */
    const char *inputs[3]; /* the inputs' names, as in messages and prototypes */
    unsigned dtype_mask;
    const char *doc;
} kg_op_info;

/* NULL for an op outside KG_OP_NONE+1 .. KG_OP_COUNT-1. */
KG_API const kg_op_info *kg_op_get_info(kg_op op);

/* Runs element-wise op `op` on n_inputs tensors into out. Every entry point
   below is this call with the op fixed. */
KG_API kg_status kg_elementwise(kg_context *ctx, kg_op op, const kg_tensor *out,
                                const kg_tensor *const *inputs, int n_inputs);

]]
  local c = { G.header("gen/catalogue.lua"), '#include "kgen.h"\n\n',
              "static const kg_op_info op_info[KG_OP_COUNT] = {\n" }
  for _, op in ipairs(all_ops) do
    local mask = 0
    for _, dt in ipairs(dtypes) do
      if sets[op.dtypes][dt.name] then mask = mask | (1 << dt.index) end
    end
    local rule = op == cast and "KG_OUT_ANY" or (op.out == "bool" and "KG_OUT_BOOL" or "KG_OUT_SAME")
    local names = {}
    for j, nm in ipairs(op.inputs) do names[j] = '"' .. nm .. '"' end
    c[#c + 1] = string.format("    [%s] = {\"%s\", %d, %s, %d, {%s}, 0x%02xu, \"%s\"},\n", op.enum, op.name,
                              op.arity, rule, op.cond and 1 or 0, table.concat(names, ", "), mask, op.doc)
  end
  c[#c + 1] = "};\n\nconst kg_op_info *kg_op_get_info(kg_op op)\n{\n" ..
              "    return op > KG_OP_NONE && op < KG_OP_COUNT ? &op_info[op] : 0;\n}\n"
  local by_group, groups = {}, {} -- the entry points again, by op group (below)
  for _, op in ipairs(all_ops) do
    local params, args = {}, {}
    for _, nm in ipairs(op.inputs) do
      params[#params + 1] = "const kg_tensor *" .. nm
      args[#args + 1] = nm
    end
    local proto = string.format("kg_status kg_%s(kg_context *ctx, const kg_tensor *out, %s)", op.name,
                                table.concat(params, ", "))
    h[#h + 1] = string.format("/* %s */\nKG_API %s;\n", op.doc, proto)
    local g = op == cast and "cast" or op.group
    if not by_group[g] then by_group[g] = {}; groups[#groups + 1] = g end
    table.insert(by_group[g], string.format("KG_API %s;\n", proto))
    c[#c + 1] = string.format("\n%s\n{\n    const kg_tensor *in[%d] = {%s};\n" ..
                              "    return kg_elementwise(ctx, %s, out, in, %d);\n}\n",
                              proto, op.arity, table.concat(args, ", "), op.enum, op.arity)
  end
  h[#h + 1] = common.header_end
  G:write("kg_ops.h", table.concat(h))
  G:write("kg_ops.c", table.concat(c))
  -- kg_ops_<group>.h: one group's entry points alone (the same declarations
  -- as kg_ops.h), for the library's and tests' own files that call a few
  -- ops: adding an op to another group leaves them unchanged, so they are
  -- not recompiled (users include kgen.h / kg_ops.h)
  for _, g in ipairs(groups) do
    local guard = "KG_OPS_" .. g:upper() .. "_H"
    G:write("kg_ops_" .. g .. ".h", table.concat({ G.header("gen/catalogue.lua"), "#ifndef ", guard, "\n#define ",
      guard, "\n\n#include \"kg_core.h\"\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n/* the ", g,
      " group's element-wise ops (kg_ops.h documents them) */\n", table.concat(by_group[g]), common.header_end }))
  end

  -- the float64 / int64 CPU reference, from the same expressions
  local r = { G.header("gen/catalogue.lua"),
              "#include <math.h>\n#include <stdint.h>\n\n#include \"kg_reference.h\"\n", [[

/* Integer power, as kg_ipow in templates/elementwise.cuh: exact with
   two's-complement wrapping; b < 0 gives 1 for a = 1, +-1 for a = -1 (by
   b's parity) and 0 otherwise (0 to a negative power included). */
static int64_t kg_ipow(int64_t a, int64_t b)
{
    if (b < 0)
        return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    uint64_t r = 1, x = (uint64_t)a, e = (uint64_t)b;
    while (e) {
        if (e & 1)
            r *= x;
        x *= x;
        e >>= 1;
    }
    return (int64_t)r;
}
]] }
  local entries = {}
  for _, op in ipairs(ops) do
    local names = {}
    for j, nm in ipairs(op.inputs) do names[j] = string.format("%s = in[%d]", nm, j - 1) end
    r[#r + 1] = string.format("\nstatic double ref_f_%s(const double *in)\n{\n    const double %s;\n    return %s;\n}\n",
                              op.name, table.concat(names, ", "), typed(op.expr, "double"))
    local has_int = sets[op.dtypes].i32 or sets[op.dtypes].bool
    if has_int then
      r[#r + 1] = string.format("\nstatic int64_t ref_i_%s(const int64_t *in)\n{\n    const int64_t %s;\n    return %s;\n}\n",
                                op.name, table.concat(names, ", "), typed(op.int_expr or op.expr, "int64_t"))
    end
    entries[#entries + 1] = string.format("    [%s] = {ref_f_%s, %s},\n", op.enum, op.name,
                                          has_int and ("ref_i_" .. op.name) or "0")
  end
  r[#r + 1] = "\nconst kg_ref_entry kg_ref_ops[KG_OP_COUNT] = {\n" .. table.concat(entries) .. "};\n"
  G:write("kg_reference.c", table.concat(r))
  G:write("kg_reference.h", G.header("gen/catalogue.lua") .. [[
#ifndef KG_REFERENCE_H
#define KG_REFERENCE_H

#include <stdint.h>

#include "kgen.h"

/* The CPU reference of each element-wise op: f computes float dtypes in
   double; i computes integer and bool dtypes in int64_t (the caller wraps the
   result to the dtype's width). NULL where the op has no such dtypes. Cast is
   not listed: its conversions are specified in the README. */
typedef struct kg_ref_entry {
    double (*f)(const double *in);
    int64_t (*i)(const int64_t *in);
} kg_ref_entry;

extern const kg_ref_entry kg_ref_ops[KG_OP_COUNT];

#endif
]])
end

-- the C enums whose order the lists above must match (expand.lua checks)
M.enums = { { "templates/kg_params.h", "kg_ew_variant", "KG_EW_", M.variants } }

return M
