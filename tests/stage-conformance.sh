#!/usr/bin/env bash
# Adds to a minimal stage (KG_STAGE_PROGS=... tests/stage-gpu.sh DEST) what
# the conformance runner needs, without the 19 MiB of a second bundle:
# DEST/build/libkgen.so = the runtime (libkgen_internal.a, the public API
# exported as in the shipped library) loading its kernels from the stage's
# build/libkgen_bundle.so; tests/conformance.py, tests/gpu-conformance.sh,
# runtime/python (--package), and the expecttest wheel ($KG_WHEELS, a
# folder of wheels, default /tmp/whl) in DEST/.whl.
#   tests/stage-conformance.sh DEST
set -euo pipefail
cd "$(dirname "$0")/.."
dest=$1
major=$(sed -n 's/^#define KG_VERSION_MAJOR //p' runtime/kgen.h)
mkdir -p "$dest/build" "$dest/tests" "$dest/runtime" "$dest/.whl"
gcc -shared -o "$dest/build/libkgen.so" -Wl,-soname,libkgen.so."$major" -Wl,--version-script,build/kgen.map \
    -Wl,--whole-archive build/libkgen_internal.a -Wl,--no-whole-archive -Lbuild -lkgen_bundle -Wl,-rpath,'$ORIGIN' \
    -L/usr/local/cuda/lib64 -lcudart -lcublasLt -lcublas -lpthread -lm -Wl,-rpath,/usr/local/cuda/lib64
strip --strip-debug "$dest/build/libkgen.so"
cp tests/conformance.py tests/gpu-conformance.sh "$dest/tests/"
rm -rf "$dest/runtime/python"
cp -r runtime/python "$dest/runtime/"
cp "${KG_WHEELS:-/tmp/whl}"/*.whl "$dest/.whl/" 2>/dev/null || echo "no wheels in ${KG_WHEELS:-/tmp/whl}"
du -sh "$dest"
