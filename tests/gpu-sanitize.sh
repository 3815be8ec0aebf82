#!/usr/bin/env bash
# The GPU window script of the reliability checks, from a stage:
#   KG_STAGE_PROGS="<every GPU test program> bench_coldstart" tests/stage-gpu.sh DEST
#   tests/sanitize.sh --list | sort -u > DEST/tests/sanitize.list
#   cp tests/gpu-sanitize.sh DEST/gpu.sh; then there: OUT=... bash gpu.sh
#   (to travel under 32 MiB: (cd DEST && tar -czf payload.tar.gz lib build/tests
#   build/bench && rm -rf lib build/tests build/bench): unpacked here first)
# 1. Cold start of every module (alone, before the sanitizers load the GPU):
#    bench_coldstart (kg_add, kg_sum), `modules` (every module in turn in one
#    process) and `module M` (each module as a fresh process's first use),
#    the fresh-process loop cut at KG_COLD_SECS (default 12: the other modules first, the element-wise ones last).
# 2. compute-sanitizer over every GPU test (tests/sanitize.sh: one job per
#    test and tool, longest first by tests/sanitize.times, KG_SANITIZE_PAR at
#    once, default 20), cut at the cap; durations written to
#    $OUT/sanitize.times for the next run (copy it over tests/sanitize.times).
#   KG_GPU_SECS           the cap (default 540: the whole matrix, 483 jobs on
#                         the merged main of 2026-12-01 21:25, is about 6,600
#                         job-seconds at 20 at once on the H200 by
#                         tests/sanitize.times: ~330 s longest first; its
#                         longest job ~225-300 s)
#   KG_COLD=0             skip the cold-start part
#   KG_SANITIZE_FILTER    only the matching jobs (e.g. '^test_(norm|reduce) ')
set -u
mkdir -p "$OUT"
export LD_LIBRARY_PATH=lib
[ -f payload.tar.gz ] && [ ! -d lib ] && tar -xzf payload.tar.gz
cap=${KG_GPU_SECS:-540}
s=$(date +%s)
t() { echo "== $* (+$(( $(date +%s) - s ))s)"; }
if [ "${KG_COLD:-1}" != 0 ]; then
    t coldstart
    {
        for i in 1 2 3; do timeout 10 build/bench/bench_coldstart; done
        timeout 20 build/bench/bench_coldstart modules
    } >"$OUT/coldstart.txt" 2>&1
    cs=$(date +%s)
    for m in $(seq 0 999); do
        [ $(( $(date +%s) - cs )) -ge "${KG_COLD_SECS:-12}" ] && { echo "(cut at module $m)"; break; }
        timeout 5 build/bench/bench_coldstart module "$m"
        [ $? = 3 ] && break
    done >"$OUT/coldstart-fresh.txt" 2>&1
    grep -E 'bench_coldstart' "$OUT/coldstart.txt"
    sort -t= -k2 -g "$OUT/coldstart-fresh.txt" | tail -5 # the worst
    echo "fresh-process modules over 10 ms: $(grep -c MISSED "$OUT/coldstart-fresh.txt")"
fi
# the bench scripts' shared helpers against the real torch (in the background)
if [ -x /opt/torch/.venv/bin/python3 ] && [ -f bench/torch_common.py ]; then
    ( cd bench && printf 'gemm,f32,1\nnorm,x\ngemm,bf16,2\n' >"$OUT/rows.csv" &&
      timeout 60 /opt/torch/.venv/bin/python3 -c "
import torch_common as c, sys
print('sdpa_backends f32:', c.sdpa_backends('f32'), 'bf16:', c.sdpa_backends('bf16'))
print('csv_rows gemm:', c.csv_rows(sys.argv[1], 'gemm'))
import torch_attention, torch_attention_bwd, torch_gemm
print('torch_attention, torch_attention_bwd, torch_gemm import: ok')" "$OUT/rows.csv" ) >"$OUT/torch_common.txt" 2>&1 &
fi
left=$(( cap - ($(date +%s) - s) - 6 ))
t "sanitize, deadline $left s"
# the GPU tests: tests/sanitize.list when staged with it, else found here
[ -f tests/sanitize.list ] && export KG_SANITIZE_LIST=tests/sanitize.list
# tests/sanitize.jobs when staged: only those jobs (e.g. what an earlier run left)
[ -f tests/sanitize.jobs ] && [ -z "${KG_SANITIZE_JOBLIST:-}" ] && export KG_SANITIZE_JOBLIST=tests/sanitize.jobs
KG_SANITIZE_PAR=${KG_SANITIZE_PAR:-20} KG_SANITIZE_DEADLINE=$left \
    KG_SANITIZE_LOGS="$OUT/san" KG_SANITIZE_TIMES_OUT="$OUT/sanitize.times" \
    tests/sanitize.sh build >"$OUT/sanitize.log" 2>&1
t done
grep -v ': 0 errors, 0 leaks, exit 0,\|not run (deadline)' "$OUT/sanitize.log" | tail -40
du -sh "$OUT"
