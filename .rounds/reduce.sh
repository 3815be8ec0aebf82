#!/usr/bin/env bash
# reduce round (session 25's first round): the RUNT candidate (branch reduce,
# templates/reduce_runt.cuh, tuning run_tiles; forced-only, default plans =
# main's). Staged by, in /work/wt/reduce:
#   bash /work/tools/stage.sh reduce .rounds/reduce.sh "test_reduce bench_reduce"
# Runs from inside the stage: $OUT set, LD_LIBRARY_PATH=lib. At most ~86 s
# (timeouts 40 + 28 + 16, and the summary).
#
# Step 1 (GPU tests, decides whether RUNT may merge at all; at most 40 s):
#   test_reduce gpu/run_tiles_* (5 tests: every value op x dtype x table case
#   under run_tiles 2 in 16-, 8- and 4-byte loads and under run_tiles 1, each
#   call twice bitwise equal, against the float64 / int64 reference; index
#   reductions keep their plans; dtypes of 2 to 8 bytes), beside
#   gpu/sum_every_dtype_and_case (the default path over the 3 new table
#   cases, f16 bf16 f32 i32).
#   All must pass; any failure: RUNT stays off (report it, do not merge the
#   rule; the tests and bench mode may still merge).
# Step 2 (same-process A/B, decides the default; at most 28 s): bench_reduce over
#   the 21 sweep cases run_tiles 2 plans differently (the first 6: those
#   run_tiles 1 changes, the sweep's bf16 scalar column runs: #2, #10, #54,
#   #65, #89, #180), 3 rounds in one process, each
#   round main's plan then every alternative that plans differently:
#   rt1 (run_tiles=1), rt1u3 / rt1u12 (its split target of 3 / 12 units per
#   SM instead of 6), rt2 (run_tiles=2: also 4- and 8-byte elements and
#   ahead of the other classes). The summary prints best-of-3 us, % of copy
#   and alt / main per case.
#   Default rule: run_tiles=1 (one-line planner change, kg_red_tuning_default)
#   if rt1 (or rt1u3 / rt1u12, then with that run_tiles_units) is faster than
#   main's plan on all 6 of #2, #10, #54, #65, #89, #180 by more than 3%
#   (best of 3), and no WRONG RESULTS line; if it loses on some, a rule
#   narrowed to the load widths that won (vec 2 for #54 / #89, 4 for #2 /
#   #65, 8 for #10 / #180: run_tiles_vb cannot narrow from below, so a
#   one-line bound in plan_runt) after a second round. rt2: only the cases it wins by > 3% with no
#   loss elsewhere would justify a narrower rule (record per case; no default
#   from this round alone).
# Step 3 (PyTorch, at most 16 s): torch_reduce.py on step 2's CSV (main's plans):
#   PyTorch GB/s per case; the summary prints candidate / PyTorch.
set -u
cases=2,10,54,65,89,180,13,25,33,56,72,120,148,152,173,182,194,200,203,214,223
echo "== step 1: GPU tests $(date +%T)"
# (RUNT takes elements of 2 to 8 bytes: u8 and bool never reach it)
( KG_RED_TEST_DTYPES=f16,bf16,f32,f64,i32,i64 timeout 40 build/tests/test_reduce --filter 'gpu/run_tiles*' \
    --jobs 5 --verbose > $OUT/test_runt.log 2>&1
  echo "exit $?" >> $OUT/test_runt.log ) &
( KG_RED_TEST_DTYPES=f16,bf16,f32,i32 timeout 40 build/tests/test_reduce --filter 'gpu/sum_every_dtype_and_case' \
    --verbose > $OUT/test_sum.log 2>&1
  echo "exit $?" >> $OUT/test_sum.log ) &
wait
for f in test_runt test_sum; do
  echo "-- $f: $(grep -E 'Synthesis' $OUT/$f.log) $(tail -1 $OUT/$f.log)"
  grep -E '\[(FAIL|ERR|SKIP)|run tiles|launches of' $OUT/$f.log | head -12
done
echo "== step 2: A/B $(date +%T)"
KG_BENCH_CSV=$OUT/red_ab.csv KG_RED_SWEEP_FIRST=$cases KG_RED_SWEEP_ONLY=1 KG_RED_NO_BASE=1 KG_RED_NO_NAMED=1 \
  KG_RED_ROUNDS=3 KG_RED_VERIFY=262144 KG_RED_SWEEP_SECONDS=20 \
  KG_RED_ALTS="rt1:run_tiles=1;rt1u3:run_tiles=1,run_tiles_units=3;rt1u12:run_tiles=1,run_tiles_units=12;rt2:run_tiles=2" \
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
alts = ['rt1', 'rt1u3', 'rt1u12', 'rt2']
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
echo "== done $(date +%T)"
