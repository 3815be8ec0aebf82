#!/usr/bin/env bash
# The conformance runner on the GPU machine from a staged folder (its
# build/libkgen.so, tests/conformance.py, runtime/python for --package, and
# the expecttest wheel in .whl/):  cd DEST && bash tests/gpu-conformance.sh $OUT [secs]
set -u
out=${1:-.}
secs=${2:-60}
export PYTHONUNBUFFERED=1
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl &&
        export PYTHONPATH=/tmp/site
fi
timeout "$secs" python3 tests/conformance.py build/libkgen.so --markdown "$out/conformance.md" >"$out/conformance.log" 2>&1
echo "conformance exit $?"
grep -E '^(TOTAL|MISMATCH)' "$out/conformance.log"
grep -E '^op ' "$out/conformance.log" | awk '{print}' | grep -v 'mismatched 0' || echo "every op: mismatched 0"
