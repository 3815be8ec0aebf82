#!/usr/bin/env bash
# The reliability checks on the GPU machine, from a staged folder
# (tests/stage-gpu.sh DEST; copy tests/*.sh, tests/conformance.py and the
# expecttest wheel into DEST): GEMM, fault, thread tests; the conformance
# runner; compute-sanitizer in quick mode. Logs go to $1 (default .).
#   cd DEST && bash tests/gpu-trust.sh $OUT
set -u
out=${1:-.}
export LD_LIBRARY_PATH=lib PYTHONUNBUFFERED=1
s=$(date +%s)
t() { echo "== $* ($(( $(date +%s) - s ))s)"; }
t test_gemm;    timeout 60 build/tests/test_gemm 2>&1 | tail -25 | tee $out/test_gemm.log
t test_faults;  timeout 40 build/tests/test_faults --verbose 2>&1 | tail -25 | tee $out/test_faults.log
t test_noimage; timeout 20 build/tests/test_noimage 2>&1 | tail -5 | tee $out/test_noimage.log
t test_threads; timeout 30 build/tests/test_threads 2>&1 | tee $out/test_threads.log
t conformance
if [ -d .whl ]; then python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site; fi
timeout ${KG_CONF_SECS:-70} python3 tests/conformance.py build/libkgen.so --markdown $out/conformance.md > $out/conformance.log 2>&1
echo "conformance exit $?"; grep -E '^(op |TOTAL|MISMATCH)' $out/conformance.log | tail -60; tail -5 $out/conformance.log
t sanitize
KG_SANITIZE_TESTS="test_faults" KG_SANITIZE_TOOLS="memcheck racecheck" timeout 60 tests/sanitize.sh build 2>&1 | tee $out/sanitize.log
KG_SANITIZE_TESTS="test_gemm" KG_SANITIZE_FILTER='gemm_gpu/packed*' timeout 60 tests/sanitize.sh build 2>&1 | tee -a $out/sanitize.log
t done
