#!/usr/bin/env bash
# pre, first GPU round of session 25 (prepared in session 24 without a GPU).
# Stage (in /work/wt/pre):  bash /work/tools/stage.sh pre .rounds/pre.sh "test_attention bench_attention"
# Runs inside the stage folder: $OUT set, LD_LIBRARY_PATH=lib. About 70 s
# (tests ~35 s, A/B ~20 s, PyTorch with what is left of 85 s).
#
# Candidates (all forced only; the default path's fatbins are main's, byte
# for byte): the persistent kernel with the ping-pong turns for each work
# tile's first products only (attention_sm90.cuh TB), three forms:
#   "Hopper persistent tb": two warpgroups, with ep (the epilogue under the
#     next tile's first Q K^T; turn = last P V + next first S); D 64 on
#     128-row tiles, D 128.
#   "Hopper persistent tf": two warpgroups, one tile after the other (turn
#     = the tile's first S; f2's first two at D 128 not causal); D 64, D 128.
#   "Hopper persistent t3": the D 32 / 64 default (three warpgroups, ep
#     causal, sk not causal), the turn going round the three; D 32, D 64.
# None and causal each. And
#   "Hopper persistent ts": the D 64 / D 128 persistent defaults with each
#     warpgroup's output rows stored by bulk tensor copies (TMA store; one
#     thread, two copies at D 128) instead of every thread's 16-byte loads
#     and stores + a barrier, not waited for until the next epilogue
#     (attention_sm90.cuh TS; D 64 without warp stores).
#   "Hopper persistent tbs": tb with ts (prebuilt in case both win alone).
#
# Step 1 (decides whether a candidate may merge at all): its GPU tests,
#   attention/persistent_tb_*, _tf_*, _t3_*, _ts_*, _tbs_* (float64 reference; bits
#   against "Hopper persistent" (D 128; t3, ts: the D 32 / 64 default) /
#   "Hopper persistent base" (tb, tf, tbs at D 64),
#   queue and in turn, TMA and cp.async; run to run), and the
#   tests that force every variant, these five included
#   (every_dtype_head_dim_and_mask_kind_f16 / _bf16: odd shapes;
#   sequence_lengths_bf16_causal and _f16: TESTING.md's (Sq, Sk) pairs, Sq 1
#   and Sk 1 included; fully_masked_rows_are_zero_not_nan;
#   no_keys_gives_zero_and_minus_inf: Sk 0; strided_layouts_mqa_masks_and_scale:
#   [B,S,H,D] views, MQA, ts's output map on a strided view). If the 50 s cut
#   the step after all 16 candidate tests ended, the round goes on; if a
#   candidate test never ended (a hang?), it stops.
#   A candidate with a failing test is dropped whatever it measures. Also
#   the CPU test attention_plan/turn_*.
# Step 2 (decides the default): same process, in turn, best of 3
#   (KG_BENCH_VS): default / tb / tf / t3 / ts / tbs on the short rows where kgen trails
#   cuDNN (D 64 and D 128 S 1k causal, bf16 and f16; D 64 / D 128 S 1k not
#   causal) and the controls (D 128 S 4k causal (pp default), GQA Hq 32 Hkv
#   8 S 4k causal, D 64 S 4k causal, D 128 S 16k causal (f2), D 32 S 4k
#   causal and not (t3 only); extra rows off the bench's list: bf16 B 16
#   S 2048 D 128 causal (the plain persistent default's longest), bf16 B 8
#   Hq 32 Hkv 8 S 1500 D 64 causal, f16 B 16 S 2000 D 64 causal). A candidate
#   becomes the default for a (D, kind, key range) when it is faster than
#   the default on every row of that class, bf16 and f16, by more than 1%
#   (noise in s23 was ~0.5% best of 3); the change is one line in
#   runtime/attention.c choose_variant (return KG_ATTN_V_HOPPER_PERSIST_TB
#   / _TF / _T3 / _TS / _TBS where D / kind / sk match) plus its figures.
#   Expected if the lead holds: tb or tf below the default on D 128 S 1k
#   causal (default ~309-313 us; cuDNN 296.6) and D 64 S 1k causal
#   (default ~222; cuDNN 201.4). If both are level or slower, the
#   boundary stagger is not the lever (record it; drop the variants).
# Step 3 (for the next leads, decides nothing now): ncu of the two worst
#   defaults, bf16 D 128 and D 64 S 1k causal (kg_attn90q_*_causal, one
#   launch each): SOL (L2 / compute throughput), compute workload (pipe
#   use: tensor, MUFU), memory workload (L2 <-> SM bytes), warp states
#   (stall reasons). The question it answers: is the D 128 persistent
#   kernel's K/V stream from L2 (~4.7-5.2 TB/s by arithmetic) near the
#   L2's limit (then 2-CTA clusters with TMA multicast of K/V are the
#   lever), or is it latency (barrier / wgmma waits)?
# Step 4 (context only): PyTorch flash / cuDNN on the same rows
#   (torch_attention.py on step 2's CSV), with what is left.
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
t0=$(date +%s)
stamp() { echo "== $(date +%T) (+$(($(date +%s) - t0)) s) $*"; }
{
  stamp start
  nvidia-smi --query-gpu=name,clocks.max.sm,temperature.gpu --format=csv,noheader 2>&1 | head -2
  git_commit=$(cat COMMIT 2>/dev/null); echo "commit: $git_commit"

  stamp "step 1: GPU tests of tb / tf / t3 / ts / tbs (and the CPU test of their table entries)"
  timeout 10 build/tests/test_attention --filter 'attention_plan/turn_*' --verbose 2>&1 | tail -3
  # one process, Criterion's parallel jobs (extglob filter: checked on the CPU)
  timeout 50 build/tests/test_attention --verbose --filter \
    'attention/@(persistent_t*|every_dtype_head_dim_and_mask_kind_f16|every_dtype_head_dim_and_mask_kind_bf16|sequence_lengths_bf16_causal|sequence_lengths_f16|fully_masked_rows_are_zero_not_nan|no_keys_gives_zero_and_minus_inf|strided_layouts_mqa_masks_and_scale)' \
    > "$OUT/tests.log" 2>&1
  r1=$?; echo "tests exit $r1"
  grep -E "^\[(PASS|FAIL|ERR|----)|Synthesis|Assertion|fail" "$OUT/tests.log" | grep -v "Criterion v" | head -40
  # the 16 candidate tests all ended (even if the slower ones were cut): go on
  ended=$(grep -cE "^\[(PASS|FAIL)\] attention::persistent_t" "$OUT/tests.log")
  echo "candidate tests ended: $ended of 16"
  [ "$r1" = 124 ] && [ "$ended" -ge 16 ] && r1=0

  stamp "step 2: A/B in one process: default / tb / tf / t3 / ts / tbs, in turn, best of 3"
  if [ "$r1" = 124 ]; then
    echo "a test step timed out (a hang?): no A/B; look at the tests' logs"
    stamp done
    exit 0
  fi
  bt=$((82 - ($(date +%s) - t0)))
  [ "$bt" -gt 40 ] && bt=40
  KG_BENCH_FILTER='D64 S1024 causal1|D128 S1024 causal1|bf16 D64 S1024 causal0|bf16 D128 S1024 causal0|f16 D128 S1024 causal0|bf16 D128 S4096 causal1 Hq16|bf16 D64 S4096 causal1 Hq16|D128 S4096 causal1 Hq32 Hkv8|bf16 D128 S16384 causal1|bf16 D32 S4096|sweep list' \
  KG_BENCH_ROWS='bf16:16:16:16:2048:128:1,bf16:8:32:8:1500:64:1,f16:16:16:16:2000:64:1' \
  KG_BENCH_VS='Hopper persistent tb,Hopper persistent tf,Hopper persistent t3,Hopper persistent ts,Hopper persistent tbs' KG_BENCH_CSV="$OUT/ab.csv" \
    timeout "$bt" build/bench/bench_attention > "$OUT/ab.log" 2>&1
  echo "bench_attention exit $?"
  cat "$OUT/ab.log"

  left=$((84 - ($(date +%s) - t0)))
  stamp "step 3: ncu of the D 128 / D 64 S 1k causal defaults (${left} s left)"
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  for d in 128 64; do
    left=$((84 - ($(date +%s) - t0)))
    [ "$left" -gt 26 ] || break
    KG_BENCH_FILTER="bf16 D$d S1024 causal1" timeout 15 "$NCU" --kernel-name "regex:kg_attn90q_bf16_d${d}_causal" \
      --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
      --section WarpStateStats build/bench/bench_attention > "$OUT/ncu_d$d.txt" 2>&1
    echo "ncu D $d exit $?"
    grep -E "Throughput|Pipe|Busy|Issue|Stall|Bandwidth|L2 |Elapsed|Duration|Executed Ipc" "$OUT/ncu_d$d.txt" | head -30
  done

  left=$((85 - ($(date +%s) - t0)))
  stamp "step 4: PyTorch flash / cuDNN on the same rows (${left} s left)"
  if [ "$left" -gt 12 ] && [ -s "$OUT/ab.csv" ]; then
    PY=/opt/torch/.venv/bin/python3
    [ -x "$PY" ] || PY=python3
    timeout "$left" "$PY" bench/torch_attention.py "$OUT/ab.csv" > "$OUT/torch.log" 2>&1
    echo "torch_attention exit $?"
    grep -v Warning "$OUT/torch.log" | grep -v "fn = lambda" | head -30
  fi
  stamp done
} 2>&1 | tee "$OUT/run.log"
