#!/usr/bin/env bash
# pre, the first GPU round of session 27 (prepared in session 26 without a
# GPU; session 26's own round was cancelled: no device was lent).
# Stage (in /work/wt/pre):
#   bash /work/tools/stage.sh pre /work/status/rounds26/pre.sh "test_attention bench_attention"
# (the same file is committed on branch pre as .rounds/pre.sh)
# Runs inside the stage folder: $OUT set, LD_LIBRARY_PATH=lib. At most 75 s
# wall (each step under `timeout`, budgets from what is left).
#
# Candidates (forced only; every fatbin of main's 9d17440 is byte-identical;
# the new modules attn90c / attn90s / attn90d / attn90e (bf16, f16) are the
# only additions), two ideas on the persistent defaults' softmax:
#   CR, the conditional rescale (attention_sm90.cuh): O is rescaled only
#   where a row's maximum grew by more than 8 log2 units past the reference
#   its exponentials are taken against; otherwise the row keeps that
#   reference (alpha 1, exponentials up to 256), and a warp whose rows all
#   kept theirs skips the DP / 2 FMULs of O a thread (32 at D 64, 64 at D
#   128) between the wait for P V and the next products. Other bits than
#   the default; reproducible.
#   DG, causal: on a key tile that crosses the diagonal, the 32-key
#   quarters past every row of a warp take no maximum and no exponentials
#   (P set to 0: what ex2(-inf) gives). On S 1k causal that is 18.5% of
#   D 64's exponentials (warpgroup 0 of a 192-row tile sees 128 fewer keys
#   than the tile's last row; counted warp by warp over the six shifted
#   tiles) and 8.3% of D 128's; at D 64 MUFU is as busy as the tensor pipe
#   (1536 cycles each per step-round of the three warpgroups).
#   The SAME BITS as the default.
#   "Hopper persistent cr": D 64 the three-warpgroup default (ep causal, sk
#     not causal); D 128 the plain kernel causal (default up to 2048 keys),
#     f2 not causal (default at every key count).
#   "Hopper persistent pp cr": D 128 causal, the ping-pong kernel (default
#     from 2049 to 4096 keys).
#   "Hopper persistent dg": D 64 / D 128 causal, the defaults' kernels
#     (D 128: the plain one) with DG.
#   "Hopper persistent cr dg": both (cr's bits), D 64 / D 128 causal.
#
# Step 0 (context): GPU name, clocks, throttle reasons, processes on the
#   GPU. Session 25's round saw the device copy at 2135 GB/s (4227 in the
#   rounds before and after) and bf16 D 64 S 1k causal at 472 us (s24f:
#   223.0): the A/B's first row and its "same-run device copy" line answer
#   whether that was the machine (expected: ~4200 GB/s, ~223 us) or main.
# Step 1 (decides whether a candidate may merge at all): its GPU tests
#   attention/persistent_cr_d64, _d64_causal, _d128, _d128_causal,
#   persistent_cr_pp_d128_causal, persistent_cr_dg_d64_causal /
#   _d128_causal (float64 reference incl. GQA / MQA, [B,S,H,D], Sq > Sk,
#   fewer tiles than SMs, scales 1-2 that make the rescale fire, a negative
#   scale; bits queue / in turn, TMA / cp.async, run to run; cr dg bit for
#   bit cr), persistent_dg_d64_causal / _d128_causal (float64 reference;
#   bit for bit "Hopper persistent", queue / in turn, TMA / cp.async), and
#   the tests that force every variant, all four included
#   (every_dtype_head_dim_and_mask_kind_f16 / _bf16,
#   sequence_lengths_bf16_causal / _f16 (Sq 1, Sk 1 ...),
#   negative_scale_every_head_dim, fully_masked_rows_are_zero_not_nan,
#   no_keys_gives_zero_and_minus_inf, strided_layouts_mqa_masks_and_scale),
#   plus the CPU test attention_plan/cr_variant_table, and main's
#   f2_where_the_runtime_takes_it (pins the D 128 / 256 defaults the rule
#   below may change; the other pins, persistent_ep_* and persistent_sk_*,
#   ran in s25f and need no GPU time now: the defaults are main's, byte
#   for byte). ANY failure of a test that ran the variant: that variant
#   is dropped whatever it measures (the message names the variant). A bits failure of cr dg
#   against cr, or of dg against the default, condemns dg (and cr dg).
# Step 2 (decides the default): one process, in turn, best of 3
#   (KG_BENCH_VS): default / cr / pp cr / dg / cr dg on D 64 and D 128,
#   S 1k to 4k, causal and not, bf16 and f16, GQA (KG_BENCH_ROWS, in
#   priority order);
#   with KG_BENCH_QUEUE=1 each persistent default again with its work queue
#   the other way.
#   Only the candidates whose own step-1 tests all passed are timed (a
#   crash would end the process and every row after it, as in s25r1).
#   RULE: a candidate becomes the default for a class the planner can name,
#   (D, kind, key range as measured), only if EVERY row of that class,
#   bf16 and f16, has it faster than the default by >= 2% in the in-turn
#   best of 3, and NONE slower (a row cut by the timeout: the class is not
#   decided; re-measure). Classes and their rows:
#     D 64 causal, sk <= 4096: bf16 / f16 S 1k, bf16 S 4k, bf16 GQA Hq 32
#       Hkv 8 S 1500, f16 S 2000;
#     D 64 not causal, sk <= 4096: bf16 / f16 S 1k, bf16 S 2048, bf16 S 4k;
#     D 128 causal, sk <= 2048 (the plain kernel's range): bf16 / f16 S 1k
#       and S 2048;
#     D 128 not causal, sk <= 4096 (f2's): bf16 / f16 S 1k and S 4k, f16
#       S 2048;
#     D 128 causal, 2048 < sk <= 4096 (pp's range): bf16 / f16 S 4k,
#       bf16 GQA Hq 32 Hkv 8 S 4k.
#   Each candidate is judged on every class where it runs the rows (pp cr
#   also on D 128 causal sk <= 2048, cr / dg / cr dg also on 2048 < sk <=
#   4096; dg and cr dg on the causal classes only); where more than one
#   wins a class, the one whose smallest gain over the class's rows is
#   larger takes it.
#   The change: one line in runtime/attention.c choose_variant (return
#   KG_ATTN_V_HOPPER_PERSIST_CR / _PP_CR / _DG / _CRDG where D / kind / sk
#   match), the CPU tests that pin the default updated. A variant that wins no class is
#   removed with its module and tests (the bundle is at 29.2 of 30 MiB).
# Step 3 (context): PyTorch flash / cuDNN on step 2's rows
#   (bench/torch_attention.py on the CSV, S 1k rows first), with what is
#   left (cuDNN's figures for the bench's own rows are also in
#   /work/status/gpu/final23b/bench.log).
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
t0=$(date +%s)
stamp() { echo "== $(date +%T) (+$(($(date +%s) - t0)) s) $*"; }
left() { echo $((73 - ($(date +%s) - t0))); }
# line-buffered stdout, so that a row's in-turn figures survive the timeout
LB=; command -v stdbuf > /dev/null && LB="stdbuf -oL"
{
  stamp start
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>&1 | head -2
  nvidia-smi --query-gpu=clocks_throttle_reasons.active,memory.used --format=csv,noheader 2>&1 | head -2
  nvidia-smi --query-compute-apps=pid,name,used_memory --format=csv,noheader 2>&1 | head -5
  echo "commit: $(cat COMMIT 2>/dev/null)"

  stamp "step 1: GPU tests of cr / pp cr / dg / cr dg (and the tests that force every variant)"
  timeout 8 build/tests/test_attention --filter 'attention_plan/cr_variant_table' --verbose 2>&1 | tail -2
  timeout 36 build/tests/test_attention --verbose --filter \
    'attention/@(persistent_cr_*|persistent_dg_*|f2_where_the_runtime_takes_it|every_dtype_head_dim_and_mask_kind_f16|every_dtype_head_dim_and_mask_kind_bf16|sequence_lengths_bf16_causal|sequence_lengths_f16|negative_scale_every_head_dim|fully_masked_rows_are_zero_not_nan|no_keys_gives_zero_and_minus_inf|strided_layouts_mqa_masks_and_scale)' \
    > "$OUT/tests.log" 2>&1
  r1=$?; echo "tests exit $r1"
  grep -E "^\[(PASS|FAIL|ERR|----)|Synthesis|Assertion|fail" "$OUT/tests.log" | grep -v "Criterion v" | head -40
  ended=$(grep -cE "^\[(PASS|FAIL)\] attention::persistent_cr" "$OUT/tests.log")
  ended=$((ended + $(grep -cE "^\[(PASS|FAIL)\] attention::persistent_dg" "$OUT/tests.log")))
  echo "candidate tests ended: $ended of 9"
  # (timeout signals the whole process group, Criterion's workers too);
  # any process still on the GPU would share it with the timing below
  echo "compute apps now: $(nvidia-smi --query-compute-apps=pid,name --format=csv,noheader 2>&1 | head -3 | tr '\n' ' ')"
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,clocks_throttle_reasons.active --format=csv,noheader 2>&1 | head -2

  # the A/B times only the candidates whose own tests all passed (a crash
  # there would end the process, and every row after it, as in s25r1)
  vs=
  add() {
    local name=$1 t
    shift
    for t in "$@"; do
      grep -q "^\[PASS\] attention::$t:" "$OUT/tests.log" || { echo "not timed: $name ($t did not pass)"; return; }
    done
    vs=${vs:+$vs,}$name
  }
  add "Hopper persistent cr" persistent_cr_d64 persistent_cr_d64_causal persistent_cr_d128 persistent_cr_d128_causal
  add "Hopper persistent pp cr" persistent_cr_pp_d128_causal
  add "Hopper persistent dg" persistent_dg_d64_causal persistent_dg_d128_causal
  add "Hopper persistent cr dg" persistent_cr_dg_d64_causal persistent_cr_dg_d128_causal
  echo "timed in turn with the default: ${vs:-none}"
  bt=$(($(left) - 4))
  [ "$bt" -gt 31 ] && bt=31
  stamp "step 2: A/B in one process: default / cr / pp cr / dg / cr dg, in turn, best of 3 (${bt} s)"
  # the rows in priority order (KG_BENCH_ROWS, all named "sweep list"): S 1k
  # causal (where kgen trailed cuDNN) and D 128 causal S 2048, S 1k not
  # causal, pp cr's class (D 128 causal S 4k), then the longer rows of cr's
  KG_BENCH_FILTER='sweep list' \
  KG_BENCH_ROWS='bf16:32:16:16:1024:64:1,f16:32:16:16:1024:64:1,bf16:32:16:16:1024:128:1,f16:32:16:16:1024:128:1,bf16:16:16:16:2048:128:1,f16:16:16:16:2048:128:1,bf16:32:16:16:1024:64:0,f16:32:16:16:1024:64:0,bf16:32:16:16:1024:128:0,f16:32:16:16:1024:128:0,bf16:8:16:16:4096:128:1,f16:8:16:16:4096:128:1,bf16:4:32:8:4096:128:1,bf16:8:16:16:4096:64:1,bf16:8:32:8:1500:64:1,f16:16:16:16:2000:64:1,bf16:16:16:16:2048:64:0,bf16:8:16:16:4096:64:0,bf16:8:16:16:4096:128:0,f16:8:16:16:4096:128:0,f16:16:16:16:2048:128:0' \
  KG_BENCH_VS="$vs" KG_BENCH_QUEUE=1 KG_BENCH_CSV="$OUT/ab.csv" \
    timeout "$bt" $LB build/bench/bench_attention > "$OUT/ab.log" 2>&1
  echo "bench_attention exit $?"
  cat "$OUT/ab.log"

  l=$(left)
  stamp "step 3: PyTorch flash / cuDNN on the same rows (${l} s left)"
  if [ "$l" -gt 10 ] && [ -s "$OUT/ab.csv" ]; then
    PY=/opt/torch/.venv/bin/python3
    [ -x "$PY" ] || PY=python3
    # the S 1k rows first (the rows where kgen trailed cuDNN), then the rest
    { grep ',1024,1024,' "$OUT/ab.csv"; grep -v ',1024,1024,' "$OUT/ab.csv"; } > "$OUT/ab_torch.csv"
    timeout "$l" "$PY" -u bench/torch_attention.py "$OUT/ab_torch.csv" > "$OUT/torch.log" 2>&1
    echo "torch_attention exit $?"
    grep -v Warning "$OUT/torch.log" | grep -v "fn = lambda" | head -30
  fi
  stamp done
} 2>&1 | tee "$OUT/run.log"
