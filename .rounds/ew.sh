#!/bin/bash
# ew, session 24 -> s25 round 1 (staged by: bash /work/tools/stage.sh ew .rounds/ew.sh "test_elementwise bench_elementwise"
# from /work/wt/ew; run from inside the stage folder: $OUT set, LD_LIBRARY_PATH=lib). 90 s in all; every step
# has a timeout and the script checks the time left before each.
#
# Candidate "tpx" (branch ew): the second form of the 2-byte <op>_tperms, templates/elementwise_tpx.cuh,
# plan kg_ew_plan_tpx (c = the output's run from dim 0 in tiles of 128 or 64, j = the input's run from its
# unit dim in tiles of 62). Forced only:
# KG_EW_TUNE_TPERMW 1 (wherever tperm would run a 2-byte copy with square tiles and no word pairs) with
# KG_EW_TUNE_TPERMW_FORM 1, or the tperms force hook with FORM 1. Only ew_bf16_tperm / ew_f16_tperm differ
# from main's fatbins (stage.sh says "2 fatbins differ").
#
# Step 1 (decides whether the candidate may merge at all): test_elementwise 'tperms/*' on the GPU:
#   tperms::copies_2byte_pairs_rows_cut_at_sectors, copies_2byte_pairs_c_tiles_of_64,
#   copies_2byte_pairs_fewer_blocks and copies_2byte_pairs_by_the_rule (new: tpx against the reference, bits
#   exact, every permutation of 2-6-d shapes, 16 output phases, c tiles of 128 and 64, BPS 4/5,
#   KG_EW_TUNE_TPERMW 2's provisional rule kg_ew_tpx_by_default), and
#   the older tperms tests (the 2-byte kernel's launch bound went 4 -> 6, so session 23's word form now runs
#   at 40 registers). Every test must PASS. A failure: tpx does not merge (look at test.log).
# Step 2 (owed from session 23: main's ec8d6f7, one tp_set_axes for kg_ew_plan_tperm and kg_ew_plan_tpw, has
#   never run on a GPU): test_elementwise '@(tperm|tperma)/*'. Must PASS; a failure is main's (report it).
# Step 3 (the A/B that decides the default): bench_elementwise, bf16 permutations only (the fixed rows, the
#   2-d transposes of s23r2's extra list, both seeded sweeps), each row timed with main's choice and with
#   tpx (KG_EW_TPERMW=1,KG_EW_TPERMW_FORM=1: every copy main sends to tperm/tperma/tperm2, the even shapes
#   that tperm2 pairs included) interleaved in one process, best of 3 each: perm.log columns
#   "us, % of copy, variant | alt us, % of copy, variant, x main/tpx". Rows main runs elsewhere (tplanev,
#   tslab, rowsv, nd32v, perm, adds) show the same variant twice (x ~1.00).
#   Makes tpx the default where it wins: x >= 1.03 on a class of rows a rule can name from the plan, no row
#   of that class below x 0.99. The provisional rule (KG_EW_TUNE_TPERMW 2, kg_ew_tpx_by_default: both axes'
#   tiles >= 85% full; tperm_plan::tpx_rule_takes_well_filled_tiles lists the bench rows it takes) is the
#   first guess: if its rows all win, the default becomes tpermw_mode 2 + tpermw_form 1 (two initializers);
#   else refit its thresholds from perm.log and the plan fills (report ew.md lists them). The worst
#   bf16 row (51.0% in s23, [255,387,259] p2.1.0) should rise. Expected losers: short j (157x195x73x11
#   p3.1.0.2, j = 11) and short unfoldable c ([33,64,95,91] p2.1.3.0, c = 33).
# Step 4: tpx's occupancy on six rows: compiled 6 blocks/SM (default here: tpx forced by env) against 5 and
#   4 (KG_EW_TPERMW_BPS, dynamic shared memory), interleaved. Picks the bound if tpx is taken (x > 1.02).
#   Then tpx's c tiles on the rows where its plan takes 64 (c = 387, 429, 33, 64): the plan's 64 against
#   128 forced (KG_EW_TPERMW_CW=128; x < 0.98 keeps 64 in the rule, x > 1.02 drops it).
# Step 5 (if time is left; no candidate code): exp f16/bf16/f32 at 2^24 and 2^28, main's one vector a thread
#   against two (KG_EW_DENSE_VPT=2), interleaved, then PyTorch on the same rows (exp f16/bf16 was 0.98-0.99x
#   PyTorch at 2^24 in s23): data for a later exp candidate. (PyTorch on the perm rows: s23 had kgen ahead on
#   every row, so it is left out.)
export LD_LIBRARY_PATH=lib PATH=/opt/torch/.venv/bin:$PATH
T=build/tests/test_elementwise
B=build/bench/bench_elementwise
START=$SECONDS
left() { echo $((88 - (SECONDS - START))); }
step() { # step NAME BUDGET: prints the header, sets TO = min(budget, time left)
  TO=$2; [ "$TO" -gt "$(left)" ] && TO=$(left)
  echo "== $1 ($(date +%T), +$((SECONDS - START)) s, timeout $TO s)"
}

step "1 tperms tests (candidate)" 28
[ "$TO" -gt 0 ] && timeout $TO $T --filter 'tperms/*' --verbose > $OUT/test_tperms.log 2>&1; echo rc $?
grep -E '^\[(PASS|FAIL)|Synthesis' $OUT/test_tperms.log

step "2 tperm + tperma tests (owed, main's ec8d6f7)" 20
[ "$TO" -gt 0 ] && timeout $TO $T --filter '@(tperm|tperma)/*' --verbose > $OUT/test_tperm.log 2>&1; echo rc $?
grep -E '^\[FAIL|Synthesis' $OUT/test_tperm.log

EXTRA="4097x3001 p1.0;3001x4097 p1.0;2053x8191 p1.0;1031x16411 p1.0;7x2053x1999 p0.2.1;1999x5x2053 p2.1.0"
step "3 A/B bf16 perms: main vs tpx" 18
[ "$TO" -gt 0 ] && KG_BENCH_CSV=$OUT/perm.csv KG_EW_BENCH_PERM_ONLY=1 KG_EW_BENCH_DTYPE=bf16 KG_EW_BENCH_EXTRA="$EXTRA" \
  KG_EW_BENCH_ALT="KG_EW_TPERMW=1,KG_EW_TPERMW_FORM=1" KG_EW_BENCH_ALT_ROUNDS=3 \
  timeout $TO $B > $OUT/perm.log 2>&1; echo rc $?
grep -E 'worst|sweep \(' $OUT/perm.log

CASES="bf16:copy 255x387x259 p2.1.0;bf16:copy 255x387x259 p2.0.1;bf16:copy 6007x5003 p1.0;bf16:copy 429x487x105 p2.1.0 [sweep];bf16:copy 533x179x229 p2.0.1 [sweep];bf16:copy 33x64x95x91 p3.1.0.2"
for bps in 5 4; do
  step "4 tpx 6 blocks/SM vs $bps" 5
  [ "$TO" -gt 0 ] && KG_EW_TPERMW=1 KG_EW_TPERMW_FORM=1 KG_EW_BENCH_PERM_ONLY=1 KG_EW_BENCH_CASES="$CASES" \
    KG_EW_BENCH_ALT="KG_EW_TPERMW_BPS=$bps" KG_EW_BENCH_ALT_ROUNDS=3 timeout $TO $B > $OUT/bps$bps.log 2>&1; echo rc $?
done

CASES64="bf16:copy 255x387x259 p0.2.1;bf16:copy 429x487x105 p2.1.0 [sweep];bf16:copy 33x64x95x91 p2.1.3.0;bf16:copy 33x64x95x91 p0.3.2.1;bf16:copy 33x64x95x91 p3.2.1.0"
step "4 tpx c tiles: the plan's 64 vs 128" 6
[ "$TO" -gt 0 ] && KG_EW_TPERMW=1 KG_EW_TPERMW_FORM=1 KG_EW_BENCH_PERM_ONLY=1 KG_EW_BENCH_CASES="$CASES64" \
  KG_EW_BENCH_ALT="KG_EW_TPERMW_CW=128" KG_EW_BENCH_ALT_ROUNDS=3 timeout $TO $B > $OUT/cw128.log 2>&1; echo rc $?

step "5 exp vpt 1 vs 2, then PyTorch" 5
[ "$TO" -gt 2 ] && KG_BENCH_CSV=$OUT/exp.csv KG_EW_BENCH_SIZES_ONLY=1 KG_EW_BENCH_QUICK=1 KG_EW_BENCH_OPS=exp \
  KG_EW_BENCH_ALT="KG_EW_DENSE_VPT=2" KG_EW_BENCH_ALT_ROUNDS=3 timeout $TO $B > $OUT/exp.log 2>&1; echo rc $?
step "5b PyTorch exp" 8
[ "$TO" -gt 3 ] && timeout $TO python3 bench/torch_elementwise.py $OUT/exp.csv > $OUT/torch_exp.log 2>&1; echo rc $?
echo "== run.sh done at +$((SECONDS - START)) s"
