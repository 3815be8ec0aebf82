#!/usr/bin/env bash
# The reliability and conformance checks on the GPU machine, from a stage:
#   KG_STAGE_PROGS="test_attention_f64 bench_attention_f64 <every GPU test program>" tests/stage-gpu.sh DEST
#   tests/stage-conformance.sh DEST; tests/sanitize.sh --list | sort -u > DEST/tests/sanitize.list
#   cp tests/gpu-trust.sh DEST/gpu.sh; then there: OUT=... bash gpu.sh
# Bench (alone), then at once: the attention tests of issue 16 (f64,
# packing, padding, capture), the conformance runner, and compute-sanitizer
# over every GPU test (tests/sanitize.sh: one job per test and tool, cut at
# the deadline; what did not finish is listed as such).
#   KG_TRUST_SECS     the cap (default 60): the sanitizer's deadline follows
#   KG_TRUST_JOBLIST  a sanitize job list (default: every GPU test x 4 tools)
#   KG_TRUST_BENCH=0  skip the bench
#   KG_TRUST_PACKAGE=1  also the conformance runner through the Python package
#   KG_TRUST_PAR      sanitizer jobs at once (default 8)
set -u
mkdir -p "$OUT"
export LD_LIBRARY_PATH=lib PYTHONUNBUFFERED=1 PATH=/opt/torch/.venv/bin:$PATH
cap=${KG_TRUST_SECS:-60}
s=$(date +%s)
t() { echo "== $* (+$(( $(date +%s) - s ))s)"; }
if [ "${KG_TRUST_BENCH:-1}" != 0 ]; then
    t bench
    timeout 8 build/bench/bench_attention_f64 >"$OUT/bench.log" 2>&1; echo "bench exit $?" >>"$OUT/bench.log"
    timeout 8 python3 bench/torch_attention_f64.py >>"$OUT/bench.log" 2>&1
    cat "$OUT/bench.log"
fi
left=$(( cap - ($(date +%s) - s) - 4 ))
t "parallel, $left s"
( timeout 30 build/tests/test_attention_f64 --verbose >"$OUT/test_attention_f64.log" 2>&1
  echo "exit $?" >>"$OUT/test_attention_f64.log"
  timeout 10 build/tests/test_noimage_real --verbose >"$OUT/test_noimage_real.log" 2>&1
  echo "exit $?" >>"$OUT/test_noimage_real.log" ) &
( export PYTHONPATH=$(ls "$PWD"/.whl/*.whl | tr '\n' ':')
  timeout $(( left - 2 )) python3 tests/conformance.py build/libkgen.so --markdown "$OUT/conformance.md" \
      >"$OUT/conformance.log" 2>&1
  echo "conformance exit $?" >>"$OUT/conformance.log" ) &
if [ "${KG_TRUST_PACKAGE:-0}" = 1 ]; then
    ( export PYTHONPATH=$(ls "$PWD"/.whl/*.whl | tr '\n' ':') KGEN_LIBRARY=$PWD/build/libkgen.so
      timeout $(( left - 2 )) python3 tests/conformance.py build/libkgen.so --package \
          --markdown "$OUT/conformance-package.md" >"$OUT/conformance-package.log" 2>&1
      echo "conformance exit $?" >>"$OUT/conformance-package.log" ) &
fi
KG_SANITIZE_LIST=tests/sanitize.list KG_SANITIZE_TOOLS="memcheck initcheck synccheck racecheck" KG_SANITIZE_PAR=${KG_TRUST_PAR:-8} \
    KG_SANITIZE_DEADLINE=$(( left - 8 )) KG_SANITIZE_LOGS="$OUT/san" KG_SANITIZE_JOBLIST=${KG_TRUST_JOBLIST:-} \
    tests/sanitize.sh build >"$OUT/sanitize.log" 2>&1
wait
t done
tail -3 "$OUT/test_attention_f64.log"; grep -E "FAIL|Assert" "$OUT/test_attention_f64.log" | head
tail -2 "$OUT/test_noimage_real.log"; grep -E "FAIL|Assert" -A2 "$OUT/test_noimage_real.log" | head -5
grep -E '^(TOTAL|MISMATCH)|Traceback|Error' "$OUT/conformance.log" | head; tail -2 "$OUT/conformance.log"
grep scaled_dot "$OUT/conformance.log"
[ -f "$OUT/conformance-package.log" ] && grep -E '^(TOTAL|MISMATCH)|Traceback' "$OUT/conformance-package.log" | head
grep -v ': 0 errors, 0 leaks, exit 0,\|not run (deadline)' "$OUT/sanitize.log" | head -30
# few files back: the sanitizer's kept logs (findings and cut jobs) as one archive
[ -d "$OUT/san" ] && tar -C "$OUT" -czf "$OUT/san.tgz" san && rm -rf "$OUT/san"
du -sh "$OUT"; ls "$OUT"
