#!/usr/bin/env bash
# What `ninja install` delivers, tested on the CPU (part of `ninja test`):
#  - PREFIX=<temp> install (runtime/install.sh, what `ninja install` runs) and a
#    DESTDIR staging install: the files, the SONAME and the two links, the
#    pkg-config files with the version of the headers;
#  - tests/install_probe.c built through pkg-config alone, once against
#    libkgen.a (kgen-static) and once against libkgen.so (kgen), and run;
#  - every installed header compiles alone as C11 and as C++17;
#  - nm -D of libkgen.so lists exactly the KG_API functions of the installed
#    headers, all kg_, none of the internal ones;
#  - bench/run-all.sh (`ninja bench`) without a GPU: says why, succeeds;
#  - the Python package (tests/test_python_cpu.py) over the installed library.
# Run from anywhere; needs build/ built (ninja).
set -euo pipefail
cd "$(dirname "$0")/.."
cc=${CC:-gcc}
cxx=${CXX:-g++}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_install: FAILED: $*" >&2; exit 1; }
pass() { echo "test_install: ok: $*"; }

ver() { sed -n "s/^#define KG_VERSION_$1 \([0-9][0-9]*\)\$/\1/p" runtime/kgen.h; }
major=$(ver MAJOR) version=$(ver MAJOR).$(ver MINOR).$(ver PATCH)

prefix=$tmp/prefix
PREFIX=$prefix runtime/install.sh > "$tmp/install.log" || { cat "$tmp/install.log"; fail "install into $prefix"; }
lib=$prefix/lib
for f in include/kgen/kgen.h include/kgen/kg_dlpack.h include/kgen/kg_ops.h include/kgen/kg_status.h lib/libkgen.a \
  "lib/libkgen.so.$version" lib/pkgconfig/kgen.pc lib/pkgconfig/kgen-static.pc share/kgen/manifest.txt; do
  [ -f "$prefix/$f" ] || fail "$f is not installed"
done
[ "$(readlink "$lib/libkgen.so.$major")" = "libkgen.so.$version" ] || fail "libkgen.so.$major -> libkgen.so.$version"
[ "$(readlink "$lib/libkgen.so")" = "libkgen.so.$major" ] || fail "libkgen.so -> libkgen.so.$major"
soname=$(readelf -d "$lib/libkgen.so.$version" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "libkgen.so.$major" ] || fail "SONAME is '$soname', want libkgen.so.$major"
# every header the build calls public, and nothing else
diff <(runtime/install.sh --headers | xargs -n1 basename | sort) <(ls "$prefix/include/kgen" | sort) ||
  fail "include/kgen differs from the public headers"
cmp -s generated/manifest.txt "$prefix/share/kgen/manifest.txt" || fail "manifest"
pass "installed $version under a temporary PREFIX: headers, libkgen.a, libkgen.so.$version (SONAME $soname) and links, kgen.pc, manifest"

DESTDIR=$tmp/stage PREFIX=/opt/kgen runtime/install.sh > /dev/null
[ -f "$tmp/stage/opt/kgen/lib/libkgen.so.$version" ] || fail "DESTDIR: nothing under \$DESTDIR/opt/kgen"
grep -qx 'prefix=/opt/kgen' "$tmp/stage/opt/kgen/lib/pkgconfig/kgen.pc" || fail "DESTDIR: kgen.pc must name PREFIX, not the staging dir"
pass "DESTDIR stages under \$DESTDIR\$PREFIX and kgen.pc names \$PREFIX"

export PKG_CONFIG_PATH=$lib/pkgconfig
[ "$(pkg-config --modversion kgen)" = "$version" ] || fail "pkg-config --modversion kgen"
grep -q '^Libs.private:.*-lcudart.*-lcublasLt.*-lcublas.*-lpthread.*-lm' "$lib/pkgconfig/kgen.pc" || fail "kgen.pc Libs.private"

# shellcheck disable=SC2046
$cc -o "$tmp/probe_shared" tests/install_probe.c $(pkg-config --cflags --libs kgen) || fail "building against kgen.pc"
deps=$(ldd "$tmp/probe_shared")
grep -q "libkgen.so.$major => $lib/libkgen.so.$major" <<< "$deps" ||
  fail "probe_shared does not load $lib/libkgen.so.$major: $(grep kgen <<< "$deps")"
"$tmp/probe_shared" || fail "probe_shared"
pass "a program built with \$(pkg-config --cflags --libs kgen) runs against libkgen.so.$major"
# shellcheck disable=SC2046
$cc -o "$tmp/probe_static" tests/install_probe.c $(pkg-config --cflags --libs kgen-static) || fail "building against kgen-static.pc"
deps=$(ldd "$tmp/probe_static")
if grep -q libkgen <<< "$deps"; then fail "probe_static loads libkgen.so"; fi
"$tmp/probe_static" || fail "probe_static"
pass "a program built with \$(pkg-config --cflags --libs kgen-static) runs with libkgen.a linked in"

for h in "$prefix"/include/kgen/*.h; do
  name=$(basename "$h")
  # shellcheck disable=SC2046
  printf '#include "%s"\nint kg_header_probe;\n' "$name" | $cc -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only -x c - \
    $(pkg-config --cflags kgen) || fail "$name alone as C11"
  # shellcheck disable=SC2046
  printf '#include "%s"\nint kg_header_probe;\n' "$name" | $cxx -std=c++17 -Wall -Wextra -Werror -pedantic -fsyntax-only -x c++ - \
    $(pkg-config --cflags kgen) || fail "$name alone as C++17"
done
pass "every installed header compiles alone as C11 and as C++17 ($(ls "$prefix/include/kgen" | wc -l) headers)"

nm -D --defined-only "$lib/libkgen.so.$version" | awk '{print $3}' | sort > "$tmp/exported"
grep -h '^KG_API' "$prefix"/include/kgen/*.h | grep -o 'kg_[a-z0-9_]*(' | tr -d '(' | sort -u > "$tmp/api"
diff "$tmp/api" "$tmp/exported" > "$tmp/nm.diff" || { cat "$tmp/nm.diff"; fail "libkgen.so exports differ from the KG_API functions of the headers (< missing, > extra)"; }
if grep -v '^kg_' "$tmp/exported"; then fail "non-kg_ symbols exported"; fi
for internal in kg_fail kg_launch kg_test_force_ew_variant kg_fatbin_ew_f32 kg_kernels kg_blas_ready; do
  if grep -qx "$internal" "$tmp/exported"; then fail "internal symbol $internal is exported"; fi
done
pass "nm -D: libkgen.so exports the $(wc -l < "$tmp/api") KG_API functions and nothing else"

# `ninja bench` where there is no GPU (hidden here, so the same everywhere):
# each program says why it ran nothing and the run succeeds, writing nothing
if ! CUDA_VISIBLE_DEVICES= KG_BENCH_DIR=build KG_BENCH_CSV=$tmp/b.csv KG_BENCH_JSON=$tmp/b.json bench/run-all.sh \
  > "$tmp/bench.log" 2>&1; then
  cat "$tmp/bench.log"
  fail "bench/run-all.sh without a GPU exits non-zero"
fi
grep -q "no benchmark ran: no usable CUDA GPU" "$tmp/bench.log" || { cat "$tmp/bench.log"; fail "run-all.sh does not say why nothing ran"; }
[ ! -e "$tmp/b.json" ] || fail "run-all.sh wrote results without a GPU"
pass "ninja bench without a GPU says why nothing ran and succeeds ($(grep -c 'no GPU work ran' "$tmp/bench.log") programs)"

if command -v python3 > /dev/null; then
  KGEN_LIBRARY=$lib/libkgen.so.$major PYTHONPATH=runtime/python python3 tests/test_python_cpu.py || fail "Python package"
  pass "the Python package loads the installed library and reports without a GPU"
else
  echo "test_install: python3 is not installed: the Python package was not tested"
fi
