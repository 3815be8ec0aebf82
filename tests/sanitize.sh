#!/usr/bin/env bash
# compute-sanitizer over the GPU test programs: memcheck (with leak check),
# racecheck, synccheck and initcheck, each program in quick mode
# (KG_TEST_QUICK=1: the tests that read it use smaller problems;
# KG_TEST_SANITIZER=1: tests that fault on purpose skip). Runs from the
# repository root or from a staged folder (tests/stage-gpu.sh), needs no Lua
# or ninja:   tests/sanitize.sh [build-dir]   (default build)
# $KG_SANITIZE_TOOLS and $KG_SANITIZE_TESTS narrow the run;
# $KG_SANITIZE_FILTER passes a Criterion --filter pattern.
# Prints one line per (program, tool) with the error summary; exits 1 when any
# reports an error or a leak.
set -u
build=${1:-build}
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
tools=${KG_SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}
tests=${KG_SANITIZE_TESTS:-test_gemm test_faults test_threads test_elementwise test_attention test_reduce test_core}
export KG_TEST_QUICK=1 KG_TEST_SANITIZER=1
status=0
for t in $tests; do
    bin=$build/tests/$t
    [ -x "$bin" ] || { echo "$t: not built"; continue; }
    args=()
    case $t in test_threads) ;; *) args+=(--jobs=1); [ -n "${KG_SANITIZE_FILTER:-}" ] && args+=("--filter=$KG_SANITIZE_FILTER");; esac
    for tool in $tools; do
        extra=()
        [ $tool = memcheck ] && extra+=(--leak-check full)
        log=$(mktemp)
        start=$(date +%s)
        "$cs" --tool $tool "${extra[@]}" --target-processes all --error-exitcode 97 "$bin" "${args[@]}" >"$log" 2>&1
        rc=$?
        secs=$(( $(date +%s) - start ))
        errs=$(grep -o 'ERROR SUMMARY: [0-9]*' "$log" | awk '{s += $3} END {print s + 0}')
        leaks=$(grep -c 'Leaked [0-9]* bytes' "$log")
        res=$(grep -E 'Synthesis|test_threads:' "$log" | tail -1)
        [ "$errs" = 0 ] || status=1
        echo "$t $tool: ${errs:-0} errors, $leaks leaks, exit $rc, ${secs}s; $res"
        if [ $rc -ne 0 ] || [ "${leaks}" != 0 ]; then
            status=1
            grep -E '^=========  ?(Invalid|Leaked|Race|Barrier|Uninitialized|Program hit)' "$log" | sort | uniq -c | head -8
        fi
        rm -f "$log"
    done
done
exit $status
