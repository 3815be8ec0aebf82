#!/bin/bash
# ew, session 26 -> the next session's first round. Staged from /work/wt/ew (branch ew) by:
#   bash /work/tools/stage.sh ew /work/status/rounds26/ew.sh "test_elementwise bench_elementwise"
# (the branch holds the same script as .rounds/ew.sh). Run inside the stage folder: $OUT set, LD_LIBRARY_PATH=lib.
# 75 s in all: every step has a timeout, cut to the time left (73 s). Two fatbins differ from main's:
# ew_bf16_tperm, ew_f16_tperm (candidate C's code in the 2-byte <op>_tperms; every other kernel as main's).
#
# CANDIDATES (all forced only; the defaults are main's):
#  A  "rule 2", KG_EW_TUNE_TPERMW 3 (kg_ew_tpx_on_tperma, runtime/elementwise.c; host only): tpx (session 25's
#     kernel) also on copies main runs with tperma, where tpx's plan has >= 16 j tiles, tiles >= 90% full on both
#     axes, >= 3 waves of 6 x SMs blocks and a last wave >= 1/4 full (or none). From s25r1: tpx won on the tperma
#     rows with long j axes ending mid-wave (x1.02-1.23) and lost on full-tile rows just past whole waves.
#  B  "rule 2 in c tiles of 64", KG_EW_TUNE_TPERMW 4 (= A + kg_ew_tpx_on_tperma64; host only): where A declines
#     tpx's plan in c tiles of 128 but takes the same copy planned in c tiles of 64, that plan (tail rows at
#     2.0-3.0 waves move to 4-6; c tiles of 128 < 90% full). Never timed against tperma.
#     Mode 4 runs A's rows exactly as mode 3 does, so ONE A/B (step 2) times both classes.
#  C  "long j", KG_EW_TUNE_TPERMW_CW 1 (templates/elementwise_tpx.cuh, L.rj 126): tpx in j tiles of 126 (each
#     input row of a tile read as one 252-byte run, 64 words, rather than 124 bytes) in c tiles of 64. Why: 2-byte
#     tiles reading <= 128-byte runs (tperm, tperma, tpx) sit at 50-74% of copy, 4-byte ones reading 256-byte
#     runs at 80-90% (s24f, s25r1). Same bytes staged a tile as tpx at CW 128.
#     The tperms kernel's static shared memory grows 19008 -> 21512 bytes for it (6 blocks/SM still fit);
#     ptxas sm_90: 40 registers, spills 32 -> 40 bytes (the kernel's, every form together).
#
# Step 1 (decides whether a candidate may ship at all): test_elementwise, GPU:
#   tperms::copies_2byte_pairs_second_rule (A, B: modes 4 and 3 on 8 layouts of 12-34 M elements, bf16 and f16,
#     input/output off by 0/1, every output element's bits against the int64-indexed reference, the poison around
#     the output untouched, the variant each rule predicts on this device);
#   tperms::copies_2byte_pairs_long_j (C: every permutation of the tperm shapes and of [127,33,259],
#     [5,3,35,129], [129,5,257], 16 output phases, a 6-d reversal/rotation; bf16/f16; bits vs the reference);
#   the defaults' pins: tperms::copies_2byte_pairs_by_the_rule, tperma::default_choice (the static shared memory
#     change touches the default tpx path: these must still pass).
#   Any FAIL in second_rule: A and B do not ship (a failing case with want 2 only: B does not ship).
#   Any FAIL in long_j: C does not ship. A FAIL in the pins: nothing ships (report it).
# Step 2 (decides A and B): bench_elementwise, bf16 permutations (fixed rows, both sweeps, EXTRA rows), main's
#   choice vs KG_EW_TPERMW=4, interleaved, best of 3 each; perm.log columns: main us, % of copy, variant
#   | alt us, % of copy, variant, x = main us / alt us (x > 1: the candidate is faster).
#   Class A rows (tperma -> tperms): fixed 6007x5003 p1.0, 33x64x95x91 p0.3.2.1 / p2.0.3.1 / p3.0.2.1,
#     sweep 429x487x105 p2.1.0, 11009x1983 p1.0, 73x85x219x17 p2.3.0.1; extra 7x2053x1999 p0.2.1,
#     1999x5x2053 p2.1.0 and the 16 of EXTRA_A.
#   Class B rows (tperma -> tperms in c tiles of 64): fixed 33x64x95x91 p3.2.0.1; extra 3001x4097, 2053x8191,
#     1031x16411 (p1.0) and the 10 of EXTRA_B.
#   Every other row must show the same variant twice (x ~ 1.00); the default tpx rows (255x387x259 p2.0.1,
#   p2.1.0, sweep 533x179x229 p2.0.1: tperms in both columns) are the control for C's shared-memory change:
#   s25r1 had them at 63.8 / 59.6 / 61.0% of copy (a drop of more than 3 points there: look before shipping C).
#   RULE (A, B): a class becomes the default (tpermw_mode 3 for A; 4 for A + B; B alone needs mode 4 without A's
#   clause) iff its step-1 test passed, EVERY row of the class has x >= 1.02 and none is slower (x < 1.00).
#   If some rows miss, the class may be narrowed only to a subclass the planner names (rank, rc, waves, fills)
#   holding every winning row and no row below x 1.02, reported as a refit on one round.
# Step 3 (decides C): the same rows and EXTRA_X (tperma rows both rules decline), main's choice vs C forced
#   wherever tpx could run (KG_EW_TPERMW=1,KG_EW_TPERMW_CW=1; even shapes tperm2 pairs included: expected losers).
#   RULE (C): C becomes the form of a class the planner names (e.g. the tperma rows with j >= 252 and c >= 58,
#   or A's class in place of tpx at TJ 62) iff every row of it has x >= 1.02 here, none < 1.00, and on A's rows
#   C beats step 2's alt (tpx at TJ 62) too (x here > x there + 0.02). Diagnostic: if C's x over s25r1's tpx x
#   (same rows) is > 1.05 on most rows, the 256-byte-run hypothesis holds (next: a 4-byte and f32 analogue).
# Step 4 (PyTorch, information): bench/torch_elementwise.py on step 2's CSV (main's figures; its limit row is the
#   copy row the script needs): PyTorch's % of copy per row, beside the A/Bs' alt columns.
export LD_LIBRARY_PATH=lib PATH=/opt/torch/.venv/bin:$PATH
T=build/tests/test_elementwise
B=build/bench/bench_elementwise
# line-buffered stdout where stdbuf exists, so that a step cut by its timeout keeps the rows it printed
SB=""; command -v stdbuf > /dev/null && SB="stdbuf -oL"
START=$SECONDS
left() { echo $((73 - (SECONDS - START))); }
step() { # step NAME BUDGET: prints the header, sets TO = min(budget, time left)
  TO=$2; [ "$TO" -gt "$(left)" ] && TO=$(left)
  echo "== $1 ($(date +%T), +$((SECONDS - START)) s, timeout $TO s)"
}

step "1 tests: A, B (second rule), C (long j), the defaults' pins" 20
[ "$TO" -gt 0 ] && timeout $TO $T \
  --filter '@(tperms/copies_2byte_pairs_@(second_rule|long_j|by_the_rule)|tperma/default_choice)' \
  --verbose > $OUT/test.log 2>&1; echo rc $?
grep -E '^\[(PASS|FAIL)|Synthesis' $OUT/test.log
grep -E 'Assert|case [0-9]' $OUT/test.log | head -8

EX0="7x2053x1999 p0.2.1;1999x5x2053 p2.1.0;3001x4097 p1.0;2053x8191 p1.0;1031x16411 p1.0;4097x3001 p1.0"
EXTRA_A="8735x3341 p1.0;715x625x69 p2.1.0;201x56x265x11 p2.3.0.1;119x9x31x31x31 p3.4.2.1.0;8112x3025 p1.0;1177x548x53 p1.2.0;187x81x207x11 p1.2.3.0;56x27x45x71x7 p3.4.2.0.1;15128x2251 p1.0;1107x469x51 p1.2.0;118x91x187x11 p3.2.1.0;43x55x46x37x5 p3.2.4.0.1;6371x3225 p1.0;1126x1035x29 p2.1.0;35x288x251x13 p2.3.0.1;65x111x25x13x9 p2.4.3.0.1"
EXTRA_B="2923x6333 p1.0;908x691x31 p2.1.0;19x119x207x53 p0.3.2.1;7881x4065 p1.0;1023x459x37 p2.1.0;118x51x59x69 p2.3.1.0;15469x1155 p1.0;789x1137x33 p2.1.0;4517x4291 p1.0;799x489x65 p1.2.0"
EXTRA_X="12901x1937 p1.0;337x559x169 p1.2.0;148x169x281x5 p2.1.3.0;5465x4615 p1.0;157x149x879 p0.2.1;211x193x27x17 p3.2.0.1;47x47x75x41x3 p3.4.1.2.0;7241x2633 p1.0;345x762x121 p1.2.0"
step "2 A/B bf16 perms: main vs KG_EW_TPERMW=4 (A + B)" 18
[ "$TO" -gt 0 ] && KG_BENCH_CSV=$OUT/perm.csv KG_EW_BENCH_PERM_ONLY=1 KG_EW_BENCH_DTYPE=bf16 \
  KG_EW_BENCH_EXTRA="$EX0;$EXTRA_A;$EXTRA_B" KG_EW_BENCH_ALT="KG_EW_TPERMW=4" KG_EW_BENCH_ALT_ROUNDS=3 \
  timeout $TO $SB $B > $OUT/perm.log 2>&1; echo rc $?
grep -E 'worst|sweep \(' $OUT/perm.log
echo "rows whose variant changed: $(grep -c 'tperma  | alt .*tperms' $OUT/perm.log)"

step "3 A/B bf16 perms: main vs C (long j) forced wherever tpx runs" 18
[ "$TO" -gt 0 ] && KG_EW_BENCH_PERM_ONLY=1 KG_EW_BENCH_DTYPE=bf16 \
  KG_EW_BENCH_EXTRA="$EX0;$EXTRA_A;$EXTRA_B;$EXTRA_X" KG_EW_BENCH_ALT="KG_EW_TPERMW=1,KG_EW_TPERMW_CW=1" \
  KG_EW_BENCH_ALT_ROUNDS=3 timeout $TO $SB $B > $OUT/longj.log 2>&1; echo rc $?
grep -E 'worst|sweep \(' $OUT/longj.log

step "4 PyTorch on step 2's rows" 15
[ "$TO" -gt 3 ] && timeout $TO python3 bench/torch_elementwise.py $OUT/perm.csv > $OUT/torch_perm.log 2>&1; echo rc $?
grep -E '^worst' $OUT/torch_perm.log
echo "== run.sh done at +$((SECONDS - START)) s"
