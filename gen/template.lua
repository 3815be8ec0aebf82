-- template.lua - a small Penlight-style template engine.
--
-- A line whose first non-blank character is '@' is Lua code; any other line
-- is text in which $(expr) is replaced by the value of the Lua expression.
-- Each template line becomes exactly one line of the compiled chunk, so an
-- error reports the template's own file and line. A name that is neither in
-- the environment given to render() nor a Lua global is an error, never an
-- empty string; so is a nil value inside $( ).

local M = {}

-- %q writes a newline as a backslash and a real newline, which would shift
-- the compiled chunk's line numbers; write it as \n instead.
local function quote(s) return (string.format("%q", s):gsub("\\\n", "\\n")) end

-- Splits "text $(a) more $(b)" into Lua concatenation code.
local function text_line(line, lineno, chunkname)
  local parts, pos = {}, 1
  while true do
    local s, e = line:find("%$%(", pos)
    if not s then break end
    -- find the matching ')' allowing nested parentheses
    local depth, i = 1, e + 1
    while i <= #line and depth > 0 do
      local c = line:sub(i, i)
      if c == "(" then depth = depth + 1 elseif c == ")" then depth = depth - 1 end
      i = i + 1
    end
    if depth ~= 0 then
      error(string.format("%s:%d: unclosed $( in template", chunkname, lineno), 0)
    end
    if s > pos then parts[#parts + 1] = quote(line:sub(pos, s - 1)) end
    parts[#parts + 1] = "_str(" .. line:sub(e + 1, i - 2) .. ")"
    pos = i
  end
  parts[#parts + 1] = quote(line:sub(pos) .. "\n")
  return "_put(" .. table.concat(parts, "..") .. ")"
end

-- Compiles template source into a function(env) -> string.
function M.compile(src, chunkname)
  local code, lineno = {}, 0
  for line in (src .. (src:sub(-1) == "\n" and "" or "\n")):gmatch("(.-)\n") do
    lineno = lineno + 1
    local lua = line:match("^%s*@(.*)$")
    code[#code + 1] = lua or text_line(line, lineno, chunkname)
  end
  local body = table.concat(code, "\n")
  return function(vars)
    local out = {}
    local env = setmetatable({
      _put = function(s) out[#out + 1] = s end,
      _str = function(v)
        if v == nil then error("nil value in $( )", 2) end
        return tostring(v)
      end,
    }, {
      __index = function(_, k)
        local v = vars[k]
        if v == nil then v = _G[k] end
        if v == nil then error("undefined name '" .. tostring(k) .. "' in template", 2) end
        return v
      end,
    })
    local fn, err = load(body, "@" .. chunkname, "t", env)
    if not fn then error(err, 0) end
    fn()
    return table.concat(out)
  end
end

function M.render_file(path, vars)
  local f = assert(io.open(path, "r"))
  local src = f:read("a")
  f:close()
  return M.compile(src, path)(vars)
end

return M
