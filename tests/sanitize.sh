#!/usr/bin/env bash
# compute-sanitizer over every GPU test (issue 13): memcheck (with leak
# check), racecheck, synccheck and initcheck, one job per (test, tool), jobs
# in parallel, each program in quick mode (KG_TEST_QUICK=1: the tests that
# read it use smaller problems; KG_TEST_SANITIZER=1: tests that fault on
# purpose skip). Runs from the repository root (`ninja sanitize`) or from a
# staged folder (tests/stage-gpu.sh); needs no Lua or ninja:
#
#   tests/sanitize.sh [build-dir]                       (default build)
#
# The GPU tests: every Criterion test that skips when CUDA sees no device
# (found by running each program once with CUDA_VISIBLE_DEVICES= -- their
# CPU tests run then, quickly -- or read from $KG_SANITIZE_LIST, a file of
# "program suite/test" lines that `tests/sanitize.sh --list` writes), plus
# test_threads as a whole. CPU-only tests launch nothing a device tool could
# check (valgrind and the fuzz targets cover their host code).
#
# Environment:
#   KG_SANITIZE_TOOLS     tools (default: memcheck racecheck synccheck initcheck)
#   KG_SANITIZE_TESTS     programs (default: every build/tests/test_* program)
#   KG_SANITIZE_FILTER    an extended regex on "program suite/test tool": only matching jobs
#   KG_SANITIZE_PAR       jobs at once (default: the CPU count, at most 16)
#   KG_SANITIZE_SECS      time limit of one job (default 600)
#   KG_SANITIZE_DEADLINE  seconds from the start: no job starts after it (those
#                         are listed as not run) and running jobs are cut there
#   KG_SANITIZE_JOBLIST   a file of "program suite/test tool" lines to run instead
#                         (test_threads as "test_threads - tool")
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
[ "$par" -gt 16 ] && par=16
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
jobs=$work/jobs
: >"$jobs"
[ -n "${KG_SANITIZE_JOBLIST:-}" ] && tools="" && cp "$KG_SANITIZE_JOBLIST" "$jobs"
for tool in $tools; do
    for p in $progs; do
        [ -x "$build/tests/$p" ] || { echo "$p: not built"; continue; }
        if [ "$p" = test_threads ]; then
            echo "$p - $tool" >>"$jobs"
        else
            awk -v p="$p" -v t="$tool" '$1 == p {print p, $2, t}' "$list" >>"$jobs"
        fi
    done
done
awk '!seen[$0]++' "$jobs" >"$jobs.u" && mv "$jobs.u" "$jobs" # each job once
if [ -n "${KG_SANITIZE_FILTER:-}" ]; then
    grep -E "$KG_SANITIZE_FILTER" "$jobs" >"$jobs.f"
    mv "$jobs.f" "$jobs"
fi

# Tests that provoke a CUDA error on purpose (a real cudaMalloc failure; a
# bundle without this GPU's machine code): the tools' report of failing API
# calls is off for them alone; every memory access is still checked.
api_errors_expected='runtime/out_of_memory_is_reported_and_the_context_stays_usable|noimage/real_bundle_without_this_gpus_machine_code'

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
    local log="$logs/$p.$(echo "$t" | tr '/' '.').$tool.log" s0
    s0=$(date +%s)
    timeout "$lim" "$cs" --tool "$tool" "${extra[@]}" --target-processes all --error-exitcode 97 \
        "$build/tests/$p" "${args[@]}" >"$log" 2>&1
    local rc=$? secs_=$(( $(date +%s) - s0 ))
    # a test that skips before any CUDA call (KG_TEST_SANITIZER): the tool
    # exits 255 with nothing to check
    if [ $rc = 255 ] && grep -q 'terminated before first instrumented API call' "$log" &&
        grep -q 'Synthesis: Tested: 0 | Passing: 0 | Failing: 0 | Crashing: 0' "$log"; then
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
rm -rf "$work"
exit $status
