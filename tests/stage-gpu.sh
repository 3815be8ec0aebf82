#!/usr/bin/env bash
# Stages what the GPU machine needs into a git-ignored folder (default gpu/;
# or the folder given as $1, relative to the repository root or absolute):
# the shared library, every test and bench program, the bench scripts, the
# manifest and the non-system libraries they load (Criterion and its
# dependencies). Name the folder in the device tool's `carry`; there, cd into
# it and run programs with LD_LIBRARY_PATH=lib, e.g.
#   cd gpu && LD_LIBRARY_PATH=lib build/tests/test_elementwise
#   cd gpu && LD_LIBRARY_PATH=lib KG_BENCH_DIR=build bench/run-all.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-gpu}
ninja
rm -rf "$dest"
mkdir -p "$dest/build/tests" "$dest/build/bench" "$dest/lib" "$dest/bench" "$dest/generated"
# KG_STAGE_PROGS="test_x bench_y" stages only those programs and the bundle
# (the test and bench programs link the runtime statically and load only
# libkgen_bundle.so), small enough for three stages in one device call.
if [ -n "${KG_STAGE_PROGS:-}" ]; then
  cp build/libkgen_bundle.so "$dest/build/"
  progs=""
  for n in $KG_STAGE_PROGS; do
    for d in build/tests build/bench; do [ -x "$d/$n" ] && progs="$progs $d/$n"; done
  done
else
  cp build/libkgen.so build/libkgen_bundle.so "$dest/build/"
  progs=$(find build/tests build/bench -maxdepth 1 -type f -perm -u+x 2>/dev/null || true)
fi
for p in $progs; do cp "$p" "$dest/$p"; done
# the tools folder sits next to the main checkout, also when run from a worktree
tools=$(cd "$(git rev-parse --git-common-dir)/.." && pwd)/../shared/tools
[ -z "$progs" ] || "$tools/gpu-bundle-libs" "$dest/lib" $progs >/dev/null
rm -f "$dest/lib/libkgen.so" "$dest/lib/libkgen_bundle.so" # travel once, in build/ (the programs' rpath)
cp generated/manifest.txt "$dest/generated/"
cp bench/*.py bench/*.sh "$dest/bench/"
mkdir -p "$dest/runtime" "$dest/tests" # the Python package (it loads build/libkgen.so) and its GPU test
cp -r runtime/python "$dest/runtime/"
cp tests/test_python_torch.py tests/conformance.py tests/*.sh tests/sanitize.times "$dest/tests/"
# the demo links libkgen.a statically (the whole bundle again): not staged, to stay under the device tool's 64 MiB
strip --strip-debug "$dest"/build/libkgen*.so "$dest"/build/tests/* "$dest"/build/bench/* 2>/dev/null || true
du -sh "$dest"
