#!/usr/bin/env bash
# Runs every libFuzzer target for a fixed time (seconds, default 20) from its
# checked-in seed corpus (tests/fuzz/corpus/<target>; new inputs go to a
# temporary folder, the seeds stay as they are). Prints the executions per
# target; fails on the first finding (the crashing input is left in
# build/fuzz/findings/ and named in the output).
set -u
cd "$(dirname "$0")/../.."
secs=${1:-20}
mkdir -p build/fuzz/findings
status=0
for t in elementwise reduce gemm attention attention_bwd norm tensor plan; do
    bin=build/fuzz/fuzz_$t
    work=$(mktemp -d)
    log=build/fuzz/findings/$t.log
    CUDA_VISIBLE_DEVICES= UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix=build/fuzz/findings/$t- "$work" tests/fuzz/corpus/$t >"$log" 2>&1
    rc=$?
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    if [ $rc -eq 0 ]; then
        echo "fuzz_$t: ${runs} executions in ${secs} s, no finding"
    else
        echo "fuzz_$t: FINDING (exit $rc) after ${runs:-?} executions; log $log:"
        grep -E 'runtime error|ERROR: AddressSanitizer|deadly signal|Test unit written|-crash-' "$log" | head -5
        status=1
    fi
    rm -rf "$work"
done
exit $status
