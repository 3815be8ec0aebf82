#!/usr/bin/env bash
# norm round (issue 14): session 24's candidates, prepared without a GPU; run from the stage
# (bash /work/tools/stage.sh norm .rounds/norm.sh "test_norm bench_norm"), OUT set, LD_LIBRARY_PATH=lib.
# Every candidate is a tuning configuration (forced by KG_NORM_CLUSTER / KG_NORM_ALTS cluster=c+1); the planner's
# defaults are main's, except the fix of step 1e (a correctness fix of main's f32 softmax, default kernels).
#
# Step 1 (tests, ~30 s, four processes at once): they decide whether a candidate may merge. All must PASS.
#   1a/1b gpu/outer_axis_softmax_by_clusters, tunings 19-30 (configurations 18-29 forced: L4, EK, P2, ST, VS) and
#         49-59 (18, 25-28 at 16 blocks a cluster), each against the float64 reference (and tuning 0, the planner).
#   1c gpu/outer_axis_of_narrow_columns: the defaults as before, then EK (19-24) forced under each merge, f16/bf16,
#         and VS's 29 (f32).
#   1d gpu/session_24_tunings_match_their_base_bits: ST and VS's 27 = configuration 6's bits (3 staggers, 3 and 16
#         blocks), P2 and VS's 28 = configuration 0's bits on -5..5 inputs, VS's 29 = 13's, L4 and EK the same bits
#         twice;
#         gpu/cluster_persistent_halves_match_configuration_4_bits (its test now shares a driver with 1d).
#   1e gpu/a_lane_of_minus_infinity_under_a_column_maximum_below_minus_88: every configuration and the planner on
#         columns of -inf with two values near -100. main's f32 softmax (configurations 4-17, the kept exps) gives NaN
#         there (0 x exp(100) = 0 x inf); the branch's fix (a factor of 0 where a lane's maximum is -inf) must PASS.
#         If 1e fails only on configurations the fix does not reach, read its log: the fix is incomplete.
# Step 2 (same-process A/B, interleaved, best of 3 rounds, % of the same run's copy; ~25 s):
#   2a dim 0 (f32 and bf16 [16384,16384], log_softmax f32, f32 [8192,32768], [4096,65536], bf16 log_softmax
#      [12000,22360]): alt 1 L4 (cluster=19), alt 2 ST 10 us (cluster=27), alt 3 ST 4 us, alt 4 ST 20 us, alt 5 VS 27
#      (cluster=28: 6 with 16-byte stores), alt 6 P2 (cluster=26), alt 7 P2 + VS (cluster=29). The f32 cases fall
#      to COLS under the 2-byte-only configurations (alts 6, 7), the bf16 ones under the f32-only ones (alts 1-5):
#      ignore those lines.
#      Decides: L4, ST or VS 27 becomes the f32 default for a shape class where it beats alt 0 (main's configuration
#      6, with the fix) by >= 2 points of copy on every f32 row of that class here (and again in a second round);
#      the planner change is one line (runtime/norm.c plan_cluster: CCFG_TR -> 18, 26 or 27; VS alone can also be
#      made the default by setting VS in the default kernels, the same bits). P2 / P2 + VS becomes the 2-byte
#      default (cfg 25 / 28 for 0) where it beats alt 0 on both bf16 rows by >= 2 points.
#   2b narrow 2-byte softmax (bf16 [262144,32,32] dim 1: 4 lanes a row; [65536,64,16]: 2; [131072,32,64]: 8;
#      [2097152,16,8]: 1): alts 1-6 = EK configurations 19-24 (k 4 at lpr 8/4/2/1, k 8 at lpr 4/2; all with 16-byte
#      stores), alt 7 = VS's 29 (f32 only: the f32 [262144,32,32] row, against main's 13; same bits).
#      Decides: the EK configuration of the row's lane count (19-22; or 23/24 where they beat those) replaces COLT's
#      narrow default for the 2-byte softmax where it beats alt 0 by >= 2 points on that row (colt_cfg: take the
#      EK twin for 2-byte softmax); VS for COLT's f32 narrow form where alt 7 beats alt 0 by >= 2 points.
#   The f32 rows of 2b under alts 1-6, and the bf16 rows under alt 7, fall to COLS (no kernel): ignore those lines.
# Step 3 (if time is left): PyTorch for the step-2 cases (torch_norm.py on 2a's CSV), then ncu of L4 and VS 27 on
#   softmax f32 [16384,16384] dim 0 (max active clusters, DRAM throughput, SM active cycles against s23r1's cl6:
#   14 clusters, 46% DRAM, 86% SM active).
set -u
T=build/tests/test_norm
B=build/bench/bench_norm
export PATH=/opt/torch/.venv/bin:/usr/local/cuda/bin:$PATH
t0=$(date +%s)
left() { echo $((90 - 3 - ($(date +%s) - t0))); }
cap() { local l; l=$(left); [ "$l" -lt "$1" ] && echo $((l > 1 ? l : 1)) || echo "$1"; } # min(N, seconds left), >= 1
echo "== step 1: tests (four processes at once) $(date +%T)"
(KG_NORM_TEST_TUNINGS=19-30 timeout 45 $T --filter 'gpu/outer_axis_softmax_by_clusters' --verbose >"$OUT/t_cl_a.log" 2>&1
 echo "rc $?" >>"$OUT/t_cl_a.log") &
(KG_NORM_TEST_TUNINGS=49-59 timeout 45 $T --filter 'gpu/outer_axis_softmax_by_clusters' --verbose >"$OUT/t_cl_b.log" 2>&1
 echo "rc $?" >>"$OUT/t_cl_b.log") &
(timeout 45 $T --filter 'gpu/outer_axis_of_narrow_columns' --verbose >"$OUT/t_narrow.log" 2>&1
 echo "rc $?" >>"$OUT/t_narrow.log") &
(timeout 20 $T --filter 'gpu/a_lane_of_minus_infinity*' --verbose >"$OUT/t_inf.log" 2>&1
 echo "rc $?" >>"$OUT/t_inf.log"
 timeout 25 $T --filter 'gpu/session_24_tunings_match_their_base_bits' --verbose >"$OUT/t_bits.log" 2>&1
 echo "rc $?" >>"$OUT/t_bits.log"
 timeout 15 $T --filter 'gpu/cluster_persistent_halves_match_configuration_4_bits' --verbose >"$OUT/t_ph.log" 2>&1
 echo "rc $?" >>"$OUT/t_ph.log") &
wait
for f in t_cl_a t_cl_b t_narrow t_inf t_bits t_ph; do
  echo "-- $f: $(grep -E '^\[(PASS|FAIL|SKIP)\] gpu|Synthesis|^rc' "$OUT/$f.log" | grep -v errors:: | tr '\n' ' ')"
  grep -E 'FAIL|error|Assertion|differ|not the bits|NaN' "$OUT/$f.log" | head -5
done
echo "== step 2a: dim 0, A/B $(date +%T) (alt 1 L4, 2 ST 10us, 3 ST 4us, 4 ST 20us, 5 VS 27, 6 P2, 7 P2+VS)"
KG_NORM_TUNE=11 KG_BENCH_CSV="$OUT/ab_dim0.csv" \
  KG_NORM_CASES='softmax [16384,16384] dim 0;softmax [8192,32768] dim 0;softmax [4096,65536] dim 0;log_softmax [12000,22360] dim 0' \
  KG_NORM_ALTS='cluster=19;cluster=27;cluster=27,stagger=4;cluster=27,stagger=20;cluster=28;cluster=26;cluster=29' \
  timeout 30 $B >"$OUT/ab_dim0.log" 2>&1
echo "rc $?"
grep -E '^(softmax|log_softmax)|alt [0-9] best' "$OUT/ab_dim0.log"
echo "== step 2b: narrow softmax, A/B $(date +%T) (alts 1-6: EK configurations 19-24, 7: VS 29)"
KG_NORM_TUNE=11 KG_BENCH_CSV="$OUT/ab_narrow.csv" \
  KG_NORM_CASES='softmax [262144,32,32] dim 1;softmax [65536,64,16] dim 1;softmax [131072,32,64] dim 1;softmax [2097152,16,8] dim 1' \
  KG_NORM_ALTS='cluster=20;cluster=21;cluster=22;cluster=23;cluster=24;cluster=25;cluster=30' \
  timeout "$(cap 25)" $B >"$OUT/ab_narrow.log" 2>&1
echo "rc $?"
grep -E '^(softmax|log_softmax)|alt [0-9] best' "$OUT/ab_narrow.log"
echo "== step 3: PyTorch $(date +%T), $(left) s left"
if [ "$(left)" -gt 12 ]; then
  cat "$OUT/ab_dim0.csv" "$OUT/ab_narrow.csv" 2>/dev/null | awk -F, '!(/^norm-limit/ && n++)' >"$OUT/ab_all.csv"
  timeout "$(cap 20)" python3 bench/torch_norm.py "$OUT/ab_all.csv" >"$OUT/torch.log" 2>&1
  echo "rc $?"; cat "$OUT/torch.log" | head -30
fi
echo "== step 3: ncu $(date +%T), $(left) s left"
if [ "$(left)" -gt 20 ] && command -v ncu >/dev/null; then
  for c in 19 28; do
    KG_NORM_CLUSTER=$c KG_NORM_CASES='softmax [16384,16384] dim 0' KG_NORM_ROUNDS=1 \
      timeout "$(cap 25)" ncu --clock-control none -k regex:kg_norm_softmax_f32_cl -c 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats $B >"$OUT/ncu_$c.log" 2>&1
    echo "rc $?"; grep -E 'Profiling|Duration|DRAM Throughput|Max Active Clusters|SM Active Cycles|Elapsed Cycles|Achieved Occ' "$OUT/ncu_$c.log"
    [ "$(left)" -gt 20 ] || break
  done
fi
echo "== done $(date +%T), $(( $(date +%s) - t0 )) s"
