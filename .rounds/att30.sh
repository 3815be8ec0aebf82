#!/usr/bin/env bash
# att30, session 30 round: programmatic dependent launch (PDL) of the Hopper
# prefill kernels, forced only (kg_test_attn_prefill_pdl; main launches them
# without). Stage (in /work/wt/att30):
#   bash /work/tools/stage-branch.sh att30 test_attention bench_attention
# Runs in its stage folder ($OUT set, LD_LIBRARY_PATH=lib); everything under
# $OUT/att30; ends by itself within ~155 s (SECS = 160), every step under
# timeout.
#
# Candidate "pdl": every sm_90a prefill kernel (attention_sm90.cuh attn_wg,
# grid and persistent) now waits (griddepcontrol.wait) before its first
# global access and then lets the next grid launch (launch_dependents); the
# runtime launches it with the programmatic-stream-serialization attribute
# only where the hook asks. Without the attribute both instructions return
# at once (main's launches; the same bits). With it, a call's launch, block
# set-up (barriers, setmaxnreg, tensor-map prefetch) overlap the end of the
# call before, as the decode kernels have done since session 8 (0.3-2 us a
# call there). Expected: ~1-3 us a call: 2-6% on 40-80 us launches (B 4 H
# 16 S 1k: kgen 43.1 against cuDNN 35.5 in s29), ~1% or level on 200 us+.
#
# Step 1: GPU tests: the candidate against the float64 reference (every
#   sm_90a variant forced, D 32-256, causal / not / masked, GQA, odd S,
#   Sq != Sk both ways, lse), dependent calls chained with PDL (RAW and WAR
#   across calls, 4 calls x 5 reps + a captured graph, bits = without PDL;
#   prefill and decode calls chained on each other's outputs),
#   the prefill trace hook (every work tile taken once, stamps in order,
#   bits unchanged) and the graph test of main. A failing test drops the
#   candidate (a failing trace test drops the trace figures only).
# Step 2 also prints each row's per-block trace with and without PDL (the
#   last of 3 back-to-back calls: start skew, when blocks were past the wait,
#   block ends, tiles a block): where a short launch's time goes (s29: B 4 H
#   16 S 1k D 64 causal 43.1 us against ~29 us of modelled tile work).
# Step 2: A/B in one process (bench_attention KG_BENCH_PDL=1: default and
#   pdl in turn, best of 3 rounds), rows below.
# Step 3 (diagnosis of line a, f16 slower than bf16 at the same shape): the
#   SM clock and power while f16 / bf16 B 8 H 16 S 4k D 128 run (nvidia-smi
#   sampled every 100 ms; the two kernels' SASS differ only in the HGMMA and
#   F2FP type bits, so a lower f16 clock would say power, not code).
# Step 4: PyTorch flash / cuDNN on the A/B rows (own process, right after).
# Step 5: table (bench/attn_ab_table.py) with the rule, fixed before the run:
#   class "short" (the first 6 rows, launches under ~100 us): pdl becomes the
#   default for every Hopper prefill launch if geomean default/pdl >= 1.02
#   and no short row < 0.99, AND class "big" (the other 6) has geomean >=
#   0.995 and no row < 0.98 (it must not lose where it cannot gain much).
#   Otherwise main stays (no PDL on prefill).
set -u
OUT=${OUT:-out}
O="$OUT/att30"
mkdir -p "$O"
export LD_LIBRARY_PATH=lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
t0=$(date +%s)
left() { echo $((150 - ($(date +%s) - t0))); }
stamp() { echo "== $(date +%T) (+$(($(date +%s) - t0)) s) $*"; }
PY=/opt/torch/.venv/bin/python3
[ -x "$PY" ] || PY=python3
{
  stamp start
  nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1 | head -2

  stamp "step 1: GPU tests (candidate vs float64 reference; chained calls)"
  timeout 8 build/tests/test_attention --filter 'attention_validation/prefill_pdl*' 2>&1 | tail -1
  timeout 38 build/tests/test_attention --jobs 4 --verbose --filter \
    'attention/@(prefill_pdl_*|prefill_trace_*|captured_in_a_cuda_graph_and_replayed)' > "$O/tests.log" 2>&1
  echo "tests exit $?"
  grep -E "^\[(PASS|FAIL|ERR|----)|Synthesis|Assertion|fail" "$O/tests.log" | grep -v "Criterion v" | head -20

  bt=$(($(left) - 72))
  [ "$bt" -gt 55 ] && bt=55
  stamp "step 2: A/B in one process, in turn, best of 3: default / pdl (${bt} s)"
  ROWS="bf16:4:16:16:1024:64:1,f16:4:16:16:1024:64:1,bf16:4:16:16:1024:128:1,f16:2:32:8:1024:128:0"
  ROWS="$ROWS,bf16:1:16:16:2048:256:1,bf16:8:16:16:1024:64:0"
  ROWS="$ROWS,bf16:32:16:16:1024:64:1,f16:32:16:16:1024:64:1,f16:32:16:16:1024:128:1,f16:8:16:16:4096:128:0"
  ROWS="$ROWS,bf16:6:32:4:2140:256:1,bf16:2:16:16:4096:256:0"
  KG_BENCH_FILTER='sweep list' KG_BENCH_ROWS="$ROWS" KG_BENCH_PDL=1 KG_BENCH_PTRACE=1 KG_BENCH_CSV="$O/ab.csv" \
    timeout "$bt" build/bench/bench_attention > "$O/ab.log" 2>&1
  echo "bench_attention exit $?"
  grep -E "^(f16|bf16|same-run)|in turn|pdl|trace" "$O/ab.log" | head -60

  stamp "step 3: f16 / bf16 clocks and power at B 8 H 16 S 4k D 128 (line a)"
  Q="clocks.sm,power.draw,clocks_event_reasons.active"
  nvidia-smi --query-gpu=$Q --format=csv,noheader > /dev/null 2>&1 || Q="clocks.sm,power.draw"
  echo "  sampled: $Q"
  for dt in f16 bf16; do
    [ "$(left)" -lt 50 ] && break
    nvidia-smi --query-gpu=$Q --format=csv,noheader,nounits -lms 100 > "$O/smi_$dt.tmp" 2>&1 &
    sp=$!
    KG_BENCH_FILTER='sweep list' KG_BENCH_ROWS="$dt:8:16:16:4096:128:0" KG_BENCH_PDL=1 KG_BENCH_PDL_ROUNDS=25 \
      timeout 9 build/bench/bench_attention 2>&1 | grep -E "^$dt |in turn" | head -2
    kill "$sp" 2>/dev/null
    wait "$sp" 2>/dev/null
    # busy samples: power above 60% of the largest sample
    awk -F', *' -v dt=$dt '$2+0 > 0 { c[NR]=$1; p[NR]=$2; r[NR]=$3; if ($2+0 > mx) mx=$2+0 }
      END { n=0; for (i in p) if (p[i] > 0.6*mx) { n++; sc+=c[i]; sp+=p[i]; rr[r[i]]++ }
            printf "  %s: %d busy samples, mean SM clock %.0f MHz, mean power %.0f W, reasons:", dt, n, n?sc/n:0, n?sp/n:0;
            for (k in rr) printf " %s x%d", k, rr[k]; printf "\n" }' "$O/smi_$dt.tmp"
    { echo "# $dt"; cat "$O/smi_$dt.tmp"; } >> "$O/smi.log"
    rm -f "$O/smi_$dt.tmp"
  done

  tt=$(($(left) - 4))
  [ "$tt" -gt 40 ] && tt=40
  stamp "step 4: PyTorch flash / cuDNN on the A/B rows (${tt} s)"
  if [ "$tt" -gt 8 ] && [ -s "$O/ab.csv" ]; then
    timeout "$tt" "$PY" bench/torch_attention.py "$O/ab.csv" > "$O/torch.log" 2>&1
    echo "torch_attention exit $?"
    grep -v -E "Warning|fn = lambda" "$O/torch.log" | head -16
  fi

  stamp "step 5: the table and the rule"
  timeout 5 "$PY" bench/attn_ab_table.py "$O/ab.log" "$O/torch.log" pdl --rule=1.02:0.99 \
    'short=^(bf16 B4 Hq16 Hkv16 S1024 D(64|128) causal|f16 B4 Hq16 Hkv16 S1024 D64 causal|f16 B2 Hq32 Hkv8 S1024 D128|bf16 B1 Hq16 Hkv16 S2048 D256 causal|bf16 B8 Hq16 Hkv16 S1024 D64)$'
  echo "control class big (must not lose: geomean >= 0.995, no row < 0.98):"
  timeout 5 "$PY" bench/attn_ab_table.py "$O/ab.log" /dev/null pdl --rule=0.995:0.98 \
    'big=^((bf16|f16) B32 Hq16 Hkv16 S1024 D64 causal|f16 B32 Hq16 Hkv16 S1024 D128 causal|f16 B8 Hq16 Hkv16 S4096 D128|bf16 B6 Hq32 Hkv4 S2140 D256 causal|bf16 B2 Hq16 Hkv16 S4096 D256)$' |
    grep '^# class'
  stamp done
} 2>&1 | tee "$O/summary.log"
