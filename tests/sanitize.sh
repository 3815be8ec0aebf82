#!/usr/bin/env bash
# compute-sanitizer over every GPU test (issue 13): memcheck (with leak
# check), racecheck, synccheck and initcheck, one job per (test, tool), jobs
# in parallel, longest first (by the durations of an earlier run), each
# program in sanitizer size mode (KG_TEST_SANITIZER=1: tests/kg_test.h's
# kt_take / kt_size run a seeded sample of each test's cases at smaller sizes,
# and the tests that fault on purpose skip; KG_TEST_QUICK=1 as well: the
# shorter sweeps of the quick runs). Runs from the repository root (`ninja
# sanitize`) or from a staged folder (tests/stage-gpu.sh); needs no Lua or
# ninja:
#
#   tests/sanitize.sh [build-dir]                       (default build)
#
# The GPU tests: every Criterion test that skips when CUDA sees no device
# (found by running each program once with CUDA_VISIBLE_DEVICES= -- their
# CPU tests run then, quickly -- or read from $KG_SANITIZE_LIST, a file of
# "program suite/test" lines that `tests/sanitize.sh --list` writes), plus
# the programs without such tests as a whole (test_threads; test_core and
# test_findings, whose few device calls -- a context opened -- do not skip)
# and test_reduce_plan's one test that reserves scratch on the device. The other CPU-only tests launch
# nothing a device tool could check (valgrind and the fuzz targets cover
# their host code).
#
# Environment:
#   KG_SANITIZE_TOOLS     tools (default: memcheck racecheck synccheck initcheck)
#   KG_SANITIZE_TESTS     programs (default: every build/tests/test_* program)
#   KG_SANITIZE_FILTER    an extended regex on "program suite/test tool": only matching jobs
#   KG_SANITIZE_PAR       jobs at once (default: the CPU count, at most 16)
#   KG_SANITIZE_TIMES     a file of "program suite/test tool seconds" lines (an
#                         earlier run's): jobs start longest first (a job it
#                         lacks counts as 30 s); default tests/sanitize.times
#   KG_SANITIZE_TIMES_OUT write this run's durations there (same format; a cut
#                         job's line is its limit, marked "cut")
#   KG_SANITIZE_SECS      time limit of one job (default 600)
#   KG_SANITIZE_DEADLINE  seconds from the start: no job starts after it (those
#                         are listed as not run) and running jobs are cut there
#   KG_SANITIZE_JOBLIST   a file of "program suite/test tool" lines to run instead
#                         (a whole program as "test_threads - tool")
#   KG_SANITIZE_EXTRA     a "program suite/test" line added to the GPU tests
#                         (default: test_reduce_plan's device-touching test)
#   KG_SANITIZE_GROUP     "suite": one job per (program, suite, tool) where it can
#                         (see below); default one job per (test, tool)
#   KG_SANITIZE_SKIP      an extended regex on "program suite/test tool": jobs left
#                         out by design (default: see the reason below; "" runs all)
#   KG_SANITIZE_LOGS      keep every job's full log in this folder
# Prints one line per job (errors, leaks, exit status, seconds, the tests it
# passed) and a coverage summary; exits 1 when a job reports an error or a
# leak, fails or times out.
set -u
if [ "${1:-}" = --list ]; then # the programs at once (their CPU tests run)
    build=${2:-build}
    ls "$build"/tests/test_* | grep -v '\.' | xargs -P "$(nproc)" -I{} sh -c \
        'CUDA_VISIBLE_DEVICES= {} --verbose --jobs=1 2>&1 |
         sed -n "s/^\[SKIP\] \([^:]*::[^:]*\): no usable CUDA device.*/$(basename {}) \1/p" | sed "s/::/\//"'
    exit 0
fi
build=${1:-build}
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
tools=${KG_SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}
progs=${KG_SANITIZE_TESTS:-$(cd "$build/tests" && ls test_* 2>/dev/null | grep -v '\.' | tr '\n' ' ')}
par=${KG_SANITIZE_PAR:-$(nproc)}
[ -z "${KG_SANITIZE_PAR:-}" ] && [ "$par" -gt 16 ] && par=16
times=${KG_SANITIZE_TIMES:-$(dirname "$0")/sanitize.times}
whole="test_threads test_core test_findings" # run as a whole
# Tests that provoke a CUDA error on purpose (a real cudaMalloc failure; a
# bundle without this GPU's machine code): the tools' report of failing API
# calls is off for them alone; every memory access is still checked.
api_errors_expected='runtime/out_of_memory_is_reported_and_the_context_stays_usable|noimage/real_bundle_without_this_gpus_machine_code'
# device-touching tests of CPU programs that do not skip without a device
extra_tests=${KG_SANITIZE_EXTRA:-"test_reduce_plan errors/a_valid_call_reaches_the_device_check"}
secs=${KG_SANITIZE_SECS:-600}
export KG_TEST_QUICK=1 KG_TEST_SANITIZER=1
start=$(date +%s)
deadline=$(( start + ${KG_SANITIZE_DEADLINE:-1000000} ))
work=$(mktemp -d)
logs=${KG_SANITIZE_LOGS:-$work/logs}
mkdir -p "$logs"

# the GPU tests, "program suite/test"
list=$work/tests
if [ -n "${KG_SANITIZE_LIST:-}" ]; then
    sort -u "$KG_SANITIZE_LIST" >"$list"
else
    "$0" --list "$build" | sort -u >"$list"
fi
[ -n "$extra_tests" ] && echo "$extra_tests" >>"$list"
jobs=$work/jobs
: >"$jobs"
[ -n "${KG_SANITIZE_JOBLIST:-}" ] && tools="" && cp "$KG_SANITIZE_JOBLIST" "$jobs"
for tool in $tools; do
    for p in $progs; do
        [ -x "$build/tests/$p" ] || { echo "$p: not built"; continue; }
        if echo " $whole " | grep -q " $p "; then
            echo "$p - $tool" >>"$jobs"
        else
            awk -v p="$p" -v t="$tool" '$1 == p {print p, $2, t}' "$list" >>"$jobs"
        fi
    done
done
awk '!seen[$0]++' "$jobs" >"$jobs.u" && mv "$jobs.u" "$jobs" # each job once
# Jobs left out by design, with the reason (listed as such, not counted clean):
# racecheck checks shared-memory accesses; the > 2^31-element element-wise
# test runs the dense and nd64 kernels, which use none, and racecheck's
# instrumentation makes its 3.2e9-element passes take over 144 s (H200).
skip_re=${KG_SANITIZE_SKIP-'^test_elementwise runtime/more_than_2_pow_31_elements racecheck$'}
if [ -n "$skip_re" ]; then
    grep -E "$skip_re" "$jobs" | sed 's/$/: left out by design (tests\/sanitize.sh: KG_SANITIZE_SKIP)/' >"$work/skipped"
    grep -vE "$skip_re" "$jobs" >"$jobs.k"
    mv "$jobs.k" "$jobs"
fi
if [ -n "${KG_SANITIZE_FILTER:-}" ]; then
    grep -E "$KG_SANITIZE_FILTER" "$jobs" >"$jobs.f"
    mv "$jobs.f" "$jobs"
fi
# KG_SANITIZE_GROUP=suite: one job per (program, suite, tool) where the
# jobs cover every GPU test of the suite, none provokes a CUDA error on
# purpose and none is left out (Criterion --filter 'suite/*': the suite's
# tests run one after the other under one compute-sanitizer process, which
# saves the tool's start per test; its CPU tests, if any, run too)
if [ "${KG_SANITIZE_GROUP:-}" = suite ]; then
    : >>"$work/skipped"
    awk -v api="^($api_errors_expected)\$" '
        FILENAME == ARGV[1] { split($2, a, "/"); all[$1 " " a[1]]++; next }
        FILENAME == ARGV[2] { sk[$1 " " $2] = 1; next }
        { split($2, a, "/"); k = $1 " " a[1] " " $3; n[k]++; line[k, n[k]] = $0
          if ($2 ~ api || ($1 " " $2) in sk) bad[k] = 1
          order[++m] = k }
        END { for (i = 1; i <= m; i++) {
                k = order[i]
                if (done[k]++) continue
                split(k, f, " ")
                if (!bad[k] && n[k] > 1 && n[k] == all[f[1] " " f[2]]) print f[1], f[2] "/*", f[3]
                else for (j = 1; j <= n[k]; j++) print line[k, j] } }' "$list" "$work/skipped" "$jobs" >"$jobs.g"
    mv "$jobs.g" "$jobs"
fi
# longest first (the last duration seen of each job, a group's the sum of its
# tests'; 30 s when unknown)
[ -f "$times" ] || times=/dev/null
awk 'NR == FNR { t[$1 " " $2 " " $3] = $4; split($2, a, "/"); g[$1 " " a[1] "/* " $3] += $4; next }
     { k = $1 " " $2 " " $3; print (k in t ? t[k] : k in g ? g[k] : 30), NR, $0 }' "$times" "$jobs" |
    sort -k1,1nr -k2,2n | cut -d' ' -f3- >"$jobs.s" && mv "$jobs.s" "$jobs"


one() { # program test tool -> one result line in $work/res.<n>
    local p=$1 t=$2 tool=$3 n=$4
    local left=$(( deadline - $(date +%s) )) lim=$secs
    if [ $left -le 3 ]; then
        echo "$p $t $tool: not run (deadline)" >"$work/res.$n"
        return 0
    fi
    [ $left -lt $lim ] && lim=$left
    local extra=() args=()
    [ "$tool" = memcheck ] && extra+=(--leak-check full)
    [ "$t" != - ] && args+=(--jobs=1 "--filter=$t")
    echo "$t" | grep -qxE "$api_errors_expected" && extra+=(--report-api-errors no)
    # the CPU programs run as a whole: their validation tests hide the device
    # on purpose (CUDA_VISIBLE_DEVICES=, the failing device query is the point)
    case " test_core test_findings " in *" $p "*) extra+=(--report-api-errors no) ;; esac
    local log="$logs/$p.$(echo "$t" | tr '/*' '._').$tool.log" s0
    s0=$(date +%s)
    KG_TEST_SANITIZER=$tool timeout -k 5 "$lim" "$cs" --tool "$tool" "${extra[@]}" --target-processes all --error-exitcode 97 \
        "$build/tests/$p" "${args[@]}" >"$log" 2>&1
    local rc=$? secs_=$(( $(date +%s) - s0 ))
    # a test that skips before any CUDA call (KG_TEST_SANITIZER), or a
    # whole program whose tests passed without one: the tool exits 255 with
    # nothing to check
    if [ $rc = 255 ] && grep -q 'terminated before first instrumented API call' "$log" &&
        grep -qE 'Synthesis: Tested: [0-9]+ \| Passing: [0-9]+ \| Failing: 0 \| Crashing: 0' "$log"; then
        rc=0
    fi
    local errs leaks res
    errs=$(grep -o 'ERROR SUMMARY: [0-9]*' "$log" | awk '{s += $3} END {print s + 0}')
    leaks=$(grep -c 'Leaked [0-9]* bytes' "$log")
    res=$(grep -E 'Synthesis|test_threads:' "$log" | tail -1 | sed 's/\[====\] Synthesis: //')
    {
        echo "$p $t $tool: $errs errors, $leaks leaks, exit $rc, ${secs_}s; $res"
        if [ $rc -ne 0 ] || [ "$leaks" != 0 ] || [ "$errs" != 0 ]; then
            grep -E '^=========  ?(Invalid|Leaked|Race|Barrier|Uninitialized|Program hit|Error)' "$log" |
                sort | uniq -c | head -8
            [ $rc = 124 ] && echo "    (cut after ${lim}s)"
        fi
    } >"$work/res.$n"
    head -1 "$work/res.$n" # as jobs finish (the summary below repeats them in order)
    [ -n "${KG_SANITIZE_TIMES_OUT:-}" ] &&
        echo "$p $t $tool $secs_$([ $rc = 124 ] && echo ' cut')" >>"$KG_SANITIZE_TIMES_OUT"
    # keep the logs of findings (their first 200 KB)
    head -1 "$work/res.$n" | grep -q ': 0 errors, 0 leaks, exit 0,' && rm -f "$log" || truncate -s '<200K' "$log"
    return 0
}
export -f one
export work logs deadline secs cs build api_errors_expected
n=0
while read -r p t tool; do
    n=$((n + 1))
    echo "$p $t $tool $n"
done <"$jobs" | xargs -P "$par" -L 1 bash -c 'one "$@"' _
status=0
total=0 clean=0 notrun=0 skipped=0
for f in $(cd "$work" && ls | grep '^res\.' | sort -t. -k2 -n); do
    cat "$work/$f"
    head -1 "$work/$f" >>"$work/all"
    total=$((total + 1))
    line=$(head -1 "$work/$f")
    case $line in
    *"not run"*) notrun=$((notrun + 1)); status=1 ;;
    *": 0 errors, 0 leaks, exit 0,"*) clean=$((clean + 1)) ;;
    *) status=1 ;;
    esac
    case $line in *": 0 errors, 0 leaks, exit 0,"*"Tested: 0 "*) skipped=$((skipped + 1)) ;; esac
done
echo "sanitize: $total jobs ($(awk '{print $1, $2}' "$jobs" | sort -u | wc -l) tests, tools: $(awk '{print $3}' "$jobs" |
    sort -u | tr '\n' ' ')); clean $clean (of which $skipped ran no test: skipped), not run $notrun," \
    "other $((total - clean - notrun)); $(( $(date +%s) - start ))s with $par at once"
[ -s "$work/skipped" ] && cat "$work/skipped"
# per tool: jobs, clean, with errors or leaks, failed or cut, not run
echo "tool       jobs  clean  errors/leaks  failed/cut  not run"
awk '{ for (i = 1; i <= NF; i++) if ($i ~ /check:$/) { tool = substr($i, 1, length($i) - 1); break }
       n[tool]++
       if ($0 ~ /not run/) nr[tool]++
       else if ($0 ~ /: 0 errors, 0 leaks, exit 0,/) c[tool]++
       else if ($0 ~ /: 0 errors, 0 leaks,/) f[tool]++
       else e[tool]++ }
     END { for (t in n) printf "%-10s %4d  %5d  %12d  %10d  %7d\n", t, n[t], c[t], e[t], f[t], nr[t] }' "$work/all" | sort
rm -rf "$work"
exit $status
