#!/usr/bin/env bash
# Stages what the GPU machine needs into gpu/ (git-ignored; name it in the
# device tool's `carry`): the shared library, every test and bench program,
# the PyTorch comparison scripts and the non-system libraries they load
# (Criterion and its dependencies). There, run programs from the repository
# root with LD_LIBRARY_PATH=gpu/lib, e.g. gpu/build/tests/test_elementwise
# (cd gpu first for the tests that read generated/manifest.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
ninja
rm -rf gpu
mkdir -p gpu/build/tests gpu/build/bench gpu/lib
cp build/libkgen.so gpu/build/
progs=$(find build/tests build/bench -maxdepth 1 -type f -perm -u+x 2>/dev/null || true)
for p in $progs; do cp "$p" "gpu/$p"; done
[ -z "$progs" ] || ../shared/tools/gpu-bundle-libs gpu/lib $progs >/dev/null
rm -f gpu/lib/libkgen.so          # travels once, in gpu/build (the programs' rpath)
mkdir -p gpu/generated && cp generated/manifest.txt gpu/generated/
cp build/demo gpu/build/ 2>/dev/null || true
strip --strip-debug gpu/build/libkgen.so gpu/build/tests/* gpu/build/bench/* 2>/dev/null || true
du -sh gpu
