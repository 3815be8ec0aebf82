#!/usr/bin/env bash
# How long adding one element-wise op takes to rebuild (issue 11: the
# target is <= 20 s on the 2-core development machine). Run it when the
# machine is otherwise idle: the wall time is the figure.
#
#   tests/time-add-op.sh [ninja targets]     (default: `ninja`'s default targets)
#
# Copies this checkout (the files git tracks, plus build/, generated/ and
# ninja's logs, modification times kept) to a temporary folder, makes sure
# the copy is up to date (`ninja -n` has nothing to do; otherwise it is
# built first, untimed, and the script says so), adds the README's example
# op to gen/catalogue.lua (softplus, as "Adding an op" says: in a group of
# its own, so its kernels form new modules, one per float dtype, and no
# existing module recompiles), then times `ninja`. Prints the load average
# before, the wall and CPU time, and what was rebuilt (edges by kind, the
# modules compiled). The checkout itself is not touched.
#   KG_ADDOP_KEEP=1   keep the temporary copy (its path is printed)
#   KG_ADDOP_JOBS=n   ninja -j n (default: ninja's own)
#   KG_ADDOP_GROUP=g  put the op in group g instead (e.g. act: that group's
#                     existing modules recompile with it)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/kgen-addop.XXXXXX)
trap '[ "${KG_ADDOP_KEEP:-0}" = 1 ] && echo "kept: $tmp" || rm -rf "$tmp"' EXIT
jobs=()
[ -n "${KG_ADDOP_JOBS:-}" ] && jobs=(-j "$KG_ADDOP_JOBS")
cd "$src"
# the tracked files and the build state, times kept (ninja compares them)
git ls-files -z | xargs -0 cp -a --parents -t "$tmp"
cp -a build generated "$tmp/"
for f in .ninja_log .ninja_deps; do [ -f "$f" ] && cp -a "$f" "$tmp/"; done
cd "$tmp"
if ! ninja -n "${jobs[@]}" "$@" | grep -q '^ninja: no work to do'; then
    echo "the copy was not up to date (the checkout has unbuilt changes): building it first, untimed"
    ninja "${jobs[@]}" "$@" >/dev/null
fi
# the README's example op, beside silu in the catalogue
KG_ADDOP_GROUP=${KG_ADDOP_GROUP:-softplus} python3 - <<'EOF'
import os
group = os.environ["KG_ADDOP_GROUP"]
p = "gen/catalogue.lua"
s = open(p).read()
anchor = '  { name = "silu", group = "act"'
assert anchor in s, "no silu entry in the act group to add beside"
op = ('  { name = "softplus", group = "%s", arity = 1, dtypes = "float", expr = "log((T)1 + exp(a))",\n'
      '    doc = "log(1 + e^a)" },\n') % group
s = s.replace(anchor, op + anchor, 1)
open(p, "w").write(s)
EOF
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
t0=$(date +%s.%N)
c0=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
ninja "${jobs[@]}" "$@" >"$tmp/ninja.log" 2>&1 || { tail -30 "$tmp/ninja.log"; echo "ninja FAILED"; exit 1; }
t1=$(date +%s.%N)
# CPU time of the build: this shell's children (ticks)
c1=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
hz=$(getconf CLK_TCK)
awk -v a="$t0" -v b="$t1" -v c="$c0" -v d="$c1" -v hz="$hz" \
    'BEGIN { printf "rebuilt in %.1f s wall, %.1f CPU-s (target <= 20 s wall)\n", b - a, (d - c) / hz }'
echo "edges by kind:"
sed -n 's/^\[[0-9]*\/[0-9]*\] \([A-Z]*\) .*/\1/p' "$tmp/ninja.log" | sort | uniq -c | sort -rn
echo "modules compiled: $(sed -n 's/^\[[0-9]*\/[0-9]*\] NVCC build\/fatbin\/\(.*\)\.fatbin.*/\1/p' "$tmp/ninja.log" | tr '\n' ' ')"
echo "C objects compiled: $(sed -n 's/^\[[0-9]*\/[0-9]*\] CC build\/obj\/\(.*\)\.o.*/\1/p' "$tmp/ninja.log" | tr '\n' ' ')"
grep -i 'summary\|kernels in' "$tmp/ninja.log" | tail -2 || true
