#!/usr/bin/env bash
# reduce round (prepared in session 26, for the next session's first round):
# two forced-only candidates of branch reduce, both in the RUNT group
# (templates/reduce_runt.cuh; only red_bf16_runt and red_f16_runt differ from
# main's fatbins; the default plans are main's):
#   CAP (tuning run_tiles_cap / run_tiles_cap_units; planner only): where the
#     default split target (6 units per SM) splits a run tile plan more than
#     8 ways, aim at 3 units per SM (s25r1: rt1u3 beat rt1 on #2 #65 #180 by
#     5-14%, lost on #10, which has 4 splits and keeps its plan).
#   SHIFT (tuning run_tiles_shift, bits 1 short runs / 2 plain columns / 4
#     ends off the vector; new kernel path, args.vstore 1): 2-byte rows and
#     columns off their vectors (odd row lengths / strides) read as aligned
#     16/8/4-byte vectors, each lane's elements funnel-shifted out of the
#     aligned vector holding the first and the next; a row's last vector
#     partial; the input's start aligned to the vector, its end too (bits 1,
#     2) or anywhere (bit 4: a lane whose vectors would pass it reads its
#     elements one by one). Today these read one 2-byte element a load (COLS
#     scalar runs / strided columns: #89 45.7%, #54 43.3%, #40 39.3%, #71
#     39.9%, #104 42.8%, #162 44.4%, #215 41.3% of copy, s24f).
#   run_tiles_lanes (A/B word): at most 64 lanes across a RUNT tile.
# Staged by, in /work/wt/reduce:
#   bash /work/tools/stage.sh reduce /work/status/rounds26/reduce.sh "test_reduce bench_reduce"
# Runs from inside the stage: $OUT set, LD_LIBRARY_PATH=lib. At most ~75 s
# (timeouts 34 + 18 + 10, the summary, the sanitizer in what is left).
#
# Step 1 (GPU tests; decides whether each candidate may merge at all; <= 34 s):
#   test_reduce gpu/run_tiles_shifted_* (3 tests, f16 and bf16, the dtypes
#   RUNT takes (KG_RED_TEST_DTYPES): every value op x dtype x
#   table case under run_tiles_shift 7, through the default chain in 16-byte
#   loads and ahead of it in 8-byte (64 units/SM, tiles of <= 64 lanes) and
#   4-byte loads, each call twice bitwise equal, against the float64 / int64
#   reference; asserts shifted plans in the part's load width, split and
#   several-tile plans ran; 4 new table cases incl. an odd element count),
#   gpu/random_sweep_under_shifted_run_tiles_twice_bitwise (test_reduce's
#   400-case random sweep, every op and dtype, under run_tiles 2 +
#   run_tiles_shift 7: shifted plans must occur),
#   gpu/run_tiles_split_cap_* (2 tests: capped plans of sweep-sized shapes
#   (66 outer rows of 30x17, #180's nest, #2) must split fewer ways than the default, every value op, bf16/f16,
#   twice bitwise, vs float64), and the default paths the new kernel build
#   carries: gpu/run_tiles_over_the_scalar_column_runs_* (default chain's
#   RUNT), gpu/sum_every_dtype_and_case (4 new table cases: rows of 539,
#   columns of 1677, rows of 65, rows of 539 in an odd element count). A
#   candidate whose tests fail does not merge (SHIFT: remove its kernel
#   path and tests, the table cases stay; CAP: remove the two tuning fields).
# Step 2 (same-process A/B, <= 18 s): bench_reduce over the 17 sweep cases
#   the candidates plan otherwise (KG_RED_LIST on 132 SMs: cap -> #2 #65
#   #180; sh3 -> #89 (runs) and #40 #42 #71 #92 #104 #156 #198 #215
#   (columns); sh7 also #54 (runs), #52 #162 #202 (columns), and #71 #104
#   in 16-byte loads; #10 a RUNT control that no candidate changes), 3
#   rounds in one process, each round main's plan then every alternative that
#   plans otherwise: cap (run_tiles_cap=8), capu4 (=8,
#   run_tiles_cap_units=4), sh3 (run_tiles_shift=3), sh7 (=7), sh7l64 (+
#   run_tiles_lanes=64), l64 (run_tiles_lanes=64 alone: #2 #180), rt0 (run_tiles=0: #2 #10 #65 #180
#   in COLS, the kernel check). Best of 3, us, % of copy, alt/main, x PyTorch.
#   RULES (a default is a one-line change in kg_red_tuning_default, rule
#   "every row of the class faster by >= 2% (alt/main <= 0.98), none
#   slower", tests of step 1 passed, no WRONG RESULTS line):
#   - CAP class = RUNT plans whose default split count exceeds 8 (#2 #65
#     #180): run_tiles_cap = 8 if cap <= 0.98 on all three; if capu4 also
#     qualifies and its summed time is lower, run_tiles_cap_units = 4 too.
#   - SHIFT runs class (bit 1): with bit 4 (sh7: #89 #54) if sh7 <= 0.98 on
#     both; else bit 1 alone if sh3 <= 0.98 on #89.
#   - SHIFT columns class (bit 2): with bit 4 (sh7: #40 #42 #52 #71 #92 #104
#     #156 #162 #198 #202 #215) if sh7 <= 0.98 on all eleven; else bit 2
#     alone if sh3 <= 0.98 on its eight (#40 #42 #71 #92 #104 #156 #198
#     #215); else, if sh7l64 is <= 0.98 on all eleven, bits 2+4 with
#     run_tiles_lanes 64 for shifted plain columns (one planner line); else
#     forced-only (no narrowing from one round).
#   - Bit 4 is one default for both classes: on only if each class that
#     takes SHIFT takes it with bit 4.
#   - Both SHIFT classes also need step 4's memcheck clean (the extent claim).
#   - l64: record only (a hint for a RUNT tile-width rule; no default).
#   - Kernel check (same process): main's #2 #10 #65 #180 run RUNT in the
#     new red_bf16_runt build (80 registers, 8 B spill vs main's 4 B); alt
#     rt0 (run_tiles=0) runs them in COLS, whose fatbins are main's. The
#     ratio RUNT / COLS must stay within 3% of s25r1's (rt1 / main: 0.895
#     0.429 0.687 0.780) on all four; else the shifted path's registers cost
#     the default paths: SHIFT does not merge (report it).
# Step 3 (PyTorch, <= 10 s): torch_reduce.py on step 2's CSV (main's plans).
# Step 4 (what is left of 72 s, if >= 8 s): compute-sanitizer memcheck +
#   racecheck of gpu/run_tiles_shifted_over_rows_off_their_vectors_* (the
#   default chain, 16-byte loads, the odd-element-count table case; sanitizer
#   sampling mode): every shifted load inside the input's allocation.
set -u
cases=2,65,180,10,89,54,40,42,71,92,104,156,198,215,52,162,202
echo "== step 1: GPU tests $(date +%T)"
( KG_RED_TEST_DTYPES=f16,bf16 timeout 34 build/tests/test_reduce --filter 'gpu/run_tiles_shifted*' \
    --jobs 3 --verbose > $OUT/test_shift.log 2>&1
  echo "exit $?" >> $OUT/test_shift.log ) &
( timeout 34 build/tests/test_reduce --filter 'gpu/random_sweep_under_shifted*' \
    --verbose > $OUT/test_shift_sweep.log 2>&1
  echo "exit $?" >> $OUT/test_shift_sweep.log ) &
( timeout 34 build/tests/test_reduce --filter 'gpu/run_tiles_split_cap*' \
    --jobs 2 --verbose > $OUT/test_cap.log 2>&1
  echo "exit $?" >> $OUT/test_cap.log ) &
( KG_RED_TEST_DTYPES=f16,bf16 timeout 34 build/tests/test_reduce --filter 'gpu/run_tiles_over_the_scalar*' \
    --verbose > $OUT/test_runt.log 2>&1
  echo "exit $?" >> $OUT/test_runt.log ) &
( KG_RED_TEST_DTYPES=f16,bf16,f32,i32 timeout 34 build/tests/test_reduce --filter 'gpu/sum_every_dtype_and_case' \
    --verbose > $OUT/test_sum.log 2>&1
  echo "exit $?" >> $OUT/test_sum.log ) &
wait
for f in test_shift test_shift_sweep test_cap test_runt test_sum; do
  echo "-- $f: $(grep -E 'Synthesis' $OUT/$f.log) $(tail -1 $OUT/$f.log)"
  grep -E '\[(FAIL|ERR)|\[SKIP\].*(no usable|CUDA)|run tiles|capped|launches|random sweep part' $OUT/$f.log | head -14
done
echo "== step 2: A/B $(date +%T)"
KG_BENCH_CSV=$OUT/red_ab.csv KG_RED_SWEEP_FIRST=$cases KG_RED_SWEEP_ONLY=1 KG_RED_NO_BASE=1 KG_RED_NO_NAMED=1 \
  KG_RED_ROUNDS=3 KG_RED_VERIFY=262144 KG_RED_SWEEP_SECONDS=15 \
  KG_RED_ALTS="cap:run_tiles_cap=8;capu4:run_tiles_cap=8,run_tiles_cap_units=4;sh3:run_tiles_shift=3;sh7:run_tiles_shift=7;sh7l64:run_tiles_shift=7,run_tiles_lanes=64;l64:run_tiles_lanes=64;rt0:run_tiles=0" \
  timeout 18 build/bench/bench_reduce > $OUT/ab.log 2>&1
echo "bench exit $?"
grep -E 'WRONG|device-to-device' $OUT/ab.log
echo "== step 3: PyTorch $(date +%T)"
KG_RED_TORCH_ONLY_ANY=1 KG_RED_TORCH_SECONDS=6 timeout 10 python3 bench/torch_reduce.py $OUT/red_ab.csv > $OUT/torch.log 2>&1
echo "torch exit $?"
echo "== summary $(date +%T)"
python3 - $OUT/ab.log $OUT/torch.log <<'EOF'
import re, sys
ab, tl = open(sys.argv[1]).read().splitlines(), open(sys.argv[2]).read().splitlines()
copy = None
best, order, cur = {}, [], None  # best[(case, plan)] = (us, pct, class)
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
alts = ['cap', 'capu4', 'sh3', 'sh7', 'sh7l64', 'l64', 'rt0']
print(f"best of 3, us (% of copy); alt / main time; x PyTorch GB/s (torch {'found' if torch else 'missing'})")
for c in order:
    if (c, 'main') not in best:
        continue
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
# the rules, per class (alt / main <= 0.98 on every row)
cols3 = ['#40', '#42', '#71', '#92', '#104', '#156', '#198', '#215']
rules = [('CAP (#2 #65 #180)', ['#2', '#65', '#180'], ['cap', 'capu4']),
         ('SHIFT runs, bit 1', ['#89'], ['sh3']),
         ('SHIFT runs, bits 1+4', ['#89', '#54'], ['sh7', 'sh7l64']),
         ('SHIFT columns, bit 2', cols3, ['sh3']),
         ('SHIFT columns, bits 2+4', cols3 + ['#52', '#162', '#202'], ['sh7', 'sh7l64'])]
for name, cs, al in rules:
    for a in al:
        r = [best[(c, a)][0] / best[(c, 'main')][0] for c in cs if (c, a) in best and (c, 'main') in best]
        miss = len(cs) - len(r)
        ok = miss == 0 and all(x <= 0.98 for x in r)
        print(f"rule {name} {a}: {'WINS' if ok else 'no'} ({len(r)} rows, worst ratio {max(r) if r else 0:.3f}, "
              f"{miss} rows missing)")
ref = {'#2': 0.895, '#10': 0.429, '#65': 0.687, '#180': 0.780}  # s25r1: rt1 (RUNT) / main (COLS) time
for c, v in ref.items():
    if (c, 'main') in best and (c, 'rt0') in best:
        r = best[(c, 'main')][0] / best[(c, 'rt0')][0]
        print(f"kernel check {c}: RUNT {best[(c, 'main')][0]:.1f} us / COLS {best[(c, 'rt0')][0]:.1f} us = {r:.3f} "
              f"(s25r1 {v}): {'ok' if r <= v * 1.03 else 'SLOWER'}")
    else:
        print(f"kernel check {c}: missing rows")
EOF
left=$(( 72 - SECONDS ))
echo "== step 4: sanitizer, $left s left $(date +%T)"
if [ $left -gt 8 ]; then
  printf '%s\n' "test_reduce gpu/run_tiles_shifted_over_rows_off_their_vectors_every_value_op_dtype_and_case" \
    > $OUT/sanitize.list
  KG_SANITIZE_LIST=$OUT/sanitize.list KG_SANITIZE_TESTS=test_reduce KG_SANITIZE_TOOLS="memcheck racecheck" \
    KG_SANITIZE_DEADLINE=$(( left - 4 )) KG_SANITIZE_SECS=$(( left - 4 )) KG_RED_TEST_DTYPES=bf16,f16 \
    timeout $(( left - 2 )) bash tests/sanitize.sh > $OUT/sanitize.log 2>&1
  echo "sanitize exit $?"; tail -8 $OUT/sanitize.log
fi
echo "== done $(date +%T)"
