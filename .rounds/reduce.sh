#!/usr/bin/env bash
# reduce round (session 25's first round): two forced-only candidates of
# branch reduce (default plans = main's; both in the new module group
# red_<dtype>_runt, templates/reduce_runt.cuh; every other fatbin is main's):
#   RUNT (tuning run_tiles): short reduced column runs of any length in
#     tiles of whole vectors (bf16 scalar column runs #2 #10 #54 #65 #89 #180)
#   SEGW (tuning seg_rows): short dense rows, a warp's chunk of rows staged
#     in shared memory by cp.async (bf16 #8 #70, f32 #67 #87, #91 #237)
# Staged by, in /work/wt/reduce:
#   bash /work/tools/stage.sh reduce .rounds/reduce.sh "test_reduce bench_reduce"
# Runs from inside the stage: $OUT set, LD_LIBRARY_PATH=lib. At most ~86 s
# (timeouts 40 + 28 + 16, and the summary).
#
# Step 1 (GPU tests; decides whether each candidate may merge at all; at
#   most 40 s): test_reduce gpu/run_tiles_* (6 tests: every value op x dtype
#   x table case under run_tiles 2 in 16-, 8-, 4- and 2-byte loads and under
#   run_tiles 1, each call twice bitwise equal, against the float64 / int64
#   reference; index reductions keep their plans), gpu/warp_staged_rows_*
#   (2 tests, the same under seg_rows 1), both over dtypes of 2 to 8 bytes,
#   beside gpu/sum_every_dtype_and_case (the default path over the 5 new
#   table cases, f16 bf16 f32 i32). A candidate whose tests fail stays off
#   (report it; its code may merge off, or not at all).
# Step 2 (same-process A/B, decides the defaults; at most 28 s): bench_reduce
#   over 27 sweep cases (RUNT's 6 bf16 column runs, SEGW's 4 target rows,
#   then the 15 more cases run_tiles 2 takes, then SEGW's #91 #237), 3
#   rounds in one process, each round main's plan then every alternative
#   that plans differently: rt1 (run_tiles=1), rt1u3 / rt1u12 (its split
#   target of 3 / 12 units per SM instead of 6), rt1v2 (one 2-byte element
#   a lane everywhere: what the wider loads of #2 #10 #65 #180 are worth,
#   i.e. whether words with a parity shift for odd rows would pay), rt2 (run_tiles=2: also 4-
#   and 8-byte elements, ahead of the other classes), seg (seg_rows=1). The
#   summary prints best-of-3 us, % of copy, alt / main time and x PyTorch.
#   Defaults (one-line planner changes in kg_red_tuning_default):
#   run_tiles=1 (or with the run_tiles_units of rt1u3 / rt1u12 where that
#   wins more) if rt1 beats main's plan by more than 3% on all 6 of #2 #10
#   #54 #65 #89 #180 and no WRONG RESULTS line; if it loses on some, a rule
#   narrowed to the load widths that won (vec 2 for #54 / #89, 4 for #2 /
#   #65, 8 for #10 / #180; a bound in plan_runt) after a second round.
#   seg_rows=1 if seg beats main's plan by more than 3% on #8 #70 #67 #87;
#   if only on the bf16 two, seg_rows for 2-byte elements only (a bound in
#   plan_segw). rt2: record per case; no default from this round alone.
# Step 3 (PyTorch, at most 16 s): torch_reduce.py on step 2's CSV (main's
#   plans): PyTorch GB/s per case, for the summary's x PyTorch.
# Step 4 (what is left of 88 s, if 12 s or more): compute-sanitizer
#   racecheck + memcheck of one RUNT and one SEGW test.
set -u
cases=2,10,54,65,89,180,8,70,67,87,13,25,33,56,72,120,148,152,173,182,194,200,203,214,223,91,237
echo "== step 1: GPU tests $(date +%T)"
# (RUNT takes elements of 2 to 8 bytes: u8 and bool never reach it)
( KG_RED_TEST_DTYPES=f16,bf16,f32,f64,i32,i64 timeout 40 build/tests/test_reduce --filter 'gpu/run_tiles*' \
    --jobs 5 --verbose > $OUT/test_runt.log 2>&1
  echo "exit $?" >> $OUT/test_runt.log ) &
( KG_RED_TEST_DTYPES=f16,bf16,f32,f64,i32,i64 timeout 40 build/tests/test_reduce --filter 'gpu/warp_staged*' \
    --jobs 2 --verbose > $OUT/test_segw.log 2>&1
  echo "exit $?" >> $OUT/test_segw.log ) &
( KG_RED_TEST_DTYPES=f16,bf16,f32,i32 timeout 40 build/tests/test_reduce --filter 'gpu/sum_every_dtype_and_case' \
    --verbose > $OUT/test_sum.log 2>&1
  echo "exit $?" >> $OUT/test_sum.log ) &
wait
for f in test_runt test_segw test_sum; do
  echo "-- $f: $(grep -E 'Synthesis' $OUT/$f.log) $(tail -1 $OUT/$f.log)"
  grep -E '\[(FAIL|ERR)|\[SKIP\].*(no usable|CUDA)|run tiles|launches of' $OUT/$f.log | head -14
done
echo "== step 2: A/B $(date +%T)"
KG_BENCH_CSV=$OUT/red_ab.csv KG_RED_SWEEP_FIRST=$cases KG_RED_SWEEP_ONLY=1 KG_RED_NO_BASE=1 KG_RED_NO_NAMED=1 \
  KG_RED_ROUNDS=3 KG_RED_VERIFY=262144 KG_RED_SWEEP_SECONDS=20 \
  KG_RED_ALTS="rt1:run_tiles=1;rt1u3:run_tiles=1,run_tiles_units=3;rt1u12:run_tiles=1,run_tiles_units=12;rt1v2:run_tiles=1,run_tiles_vb=2;rt2:run_tiles=2;seg:seg_rows=1" \
  timeout 28 build/bench/bench_reduce > $OUT/ab.log 2>&1
echo "bench exit $?"
grep -E 'WRONG|device-to-device' $OUT/ab.log
echo "== step 3: PyTorch $(date +%T)"
KG_RED_TORCH_ONLY_ANY=1 KG_RED_TORCH_SECONDS=8 timeout 16 python3 bench/torch_reduce.py $OUT/red_ab.csv > $OUT/torch.log 2>&1
echo "torch exit $?"
echo "== summary $(date +%T)"
python3 - $OUT/ab.log $OUT/torch.log <<'EOF'
import re, sys
ab, tl = open(sys.argv[1]).read().splitlines(), open(sys.argv[2]).read().splitlines()
copy = None
best, order, cur = {}, [], None  # best[(case, plan)] = (us, pct)
for ln in ab:
    m = re.search(r'copy of 1 GiB: (\d+) GB/s', ln)
    if m:
        copy = float(m.group(1))
    m = re.match(r'^(#\d+) .*?\)\s+(bf16|f32|i32)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)%\s+(\S+)', ln)
    if m:
        cur = m.group(1)
        if cur not in order:
            order.append(cur)
        k = (cur, 'main')
        us = float(m.group(3))
        if k not in best or us < best[k][0]:
            best[k] = (us, float(m.group(5)), m.group(2) + ' ' + m.group(6))
        continue
    m = re.match(r'^\s+alt (\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)%\s+(\S+)', ln)
    if m and cur:
        k = (cur, m.group(1))
        us = float(m.group(2))
        if k not in best or us < best[k][0]:
            best[k] = (us, float(m.group(4)), m.group(5))
torch = {}
for ln in tl:
    m = re.match(r'^(#\d+) .*?\)\s+(bf16|f32|i32)\s+(\S+)\s+([\d.]+)\s+([\d.]+)', ln)
    if m:
        torch[m.group(1)] = max(torch.get(m.group(1), 0), float(m.group(5)))
alts = ['rt1', 'rt1u3', 'rt1u12', 'rt1v2', 'rt2', 'seg']
print(f"best of 3, us (% of copy); alt / main time; x PyTorch GB/s (torch {'found' if torch else 'missing'})")
for c in order:
    mu, mp, mc = best[(c, 'main')]
    line = f"{c:5} {mc:18} main {mu:7.1f} ({mp:5.1f}%)"
    if c in torch and copy:
        line += f" {mp * copy / 100 / torch[c]:4.2f}x"
    for a in alts:
        if (c, a) in best:
            u, p, cl = best[(c, a)]
            line += f" | {a} {u:7.1f} ({p:5.1f}%) {u / mu:5.3f}"
            if c in torch and copy:
                line += f" {p * copy / 100 / torch[c]:4.2f}x"
    print(line)
EOF
# Step 4 (only in what is left of 88 s): compute-sanitizer racecheck and
#   memcheck of one RUNT and one SEGW test (sanitizer size mode): shared
#   memory folds, the cp.async buffer and its __syncwarp. Any report is a
#   fault to fix before a default (the tests above may still have passed).
left=$(( 88 - SECONDS ))
echo "== step 4: sanitizer, $left s left $(date +%T)"
if [ $left -gt 12 ]; then
  printf '%s\n' "test_reduce gpu/run_tiles_of_one_2_byte_element_a_lane_half_the_value_ops_every_dtype_and_case" \
    "test_reduce gpu/warp_staged_rows_every_value_op_dtype_and_case_part_2" > $OUT/sanitize.list
  KG_SANITIZE_LIST=$OUT/sanitize.list KG_SANITIZE_TESTS=test_reduce KG_SANITIZE_TOOLS="racecheck memcheck" \
    KG_SANITIZE_DEADLINE=$(( left - 4 )) KG_SANITIZE_SECS=$(( left - 4 )) KG_RED_TEST_DTYPES=bf16,f32 \
    timeout $(( left - 2 )) bash tests/sanitize.sh > $OUT/sanitize.log 2>&1
  echo "sanitize exit $?"; tail -8 $OUT/sanitize.log
fi
echo "== done $(date +%T)"
