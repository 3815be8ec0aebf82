#!/usr/bin/env bash
# Round script of engineer dec, session 24 (issue 9, decode attention): the
# cluster merge (KG_ATTN_V_DECODE_CL / DECODE2_CL / DECODE4_CL, forced-only:
# kg_test_attn_dec_cluster / bench word clN). Runs in the stage folder (stage.sh),
# $OUT set, under 90 s of wall time in all.
#
# Step 1 (<= 40 s, tests in parallel processes) DECIDES WHETHER IT MAY MERGE:
#   t_cl_ref   attention/decode_cluster_merge_matches_reference: the three
#              cluster variants (16/32/64 rows), D 64/128, f16/bf16, clusters of 2/4/8/16, against
#              the float64 reference (outputs and lse), one and several
#              clusters a row tile, empty splits, masks, causal, Sq 1..16,
#              several row tiles, the hook's own choice of variant.
#   t_cl_bits  attention/decode_cluster_merge_bits_counters_and_graph: one
#              cluster of <= 8 splits gives main's combine / tail bits;
#              several clusters: the same bits call after call (counters
#              back to zero, one merging block per share and tile), PDL on
#              and off, with and without the L2 prefetch (pf), a CUDA
#              graph replayed twice.
#   t_plan     attention_plan/* (CPU planners, incl. the cluster split).
#   t_main_*   main's decode tests through the changed host code (launch_pdl's
#              attributes, the launch's shared-memory helper): tail / fused
#              merges, reproducibility, spread padding, stages, and three that
#              force every variant on each case (run_case: the cluster ones
#              too): decode_short_queries_every_head_dim,
#              decode_merges_many_splits (its merge assertions now re-run
#              the runtime's variant last, run_split_default),
#              decode_fully_masked_rows_and_causal_overhang (Sq > Sk
#              causal, empty mask rows, Sk 0). The four
#              decode_query_and_key_lengths* tests (20-36 s each in s23,
#              more with the cluster variants) do not fit this window:
#              the merge's full test run covers them.
#   All must pass (rc 0) for the candidate to merge.
# Step 2 (about 25 s) DECIDES WHETHER IT BECOMES THE DEFAULT: same-process A/B,
#   bench_attention KG_BENCH_DECVS "def;cl8;cl8,pf;cl4;cl16;def;cl8;cl8,pf"
#   (def = main's path; clN = the cluster variants in clusters of N; pf =
#   their L2 prefetch of the first key tiles before the wait for the
#   previous grid, kg_test_attn_dec_prefetch), three interleaved
#   rounds, best of each, on 17 decode rows (small-grid MQA / GQA rows, a
#   long-context row, a large grid, MQA of 64 heads); the configs line shows the variant,
#   splits (s) and cluster size taken (cl). Every config's output is checked
#   against float64 where its bits differ from def's.
#   Default rule for the next session: take the cluster variants (one line:
#   choose_variant's hook default, dec_cluster_force = 8, or a rule on the
#   rows where they won) on the rows where cl8 (or cl4/cl16) is faster than
#   def by more than 1% in both def/cl pairs; MQA B 1 Sk 32768 D 128 is the
#   row it was written for (main 13.8 us, 28% of copy; expected ~9-10 us).
#   Rows where it loses keep main's path. pf (second candidate, on top of
#   the cluster variants): default where cl8,pf beats cl8 by more than 1% in
#   both pairs (the hook's default; the bits are the same).
# Step 2b (<= 14 s): PyTorch flash / cuDNN on the A/B rows (torch_attention.py
#   on the CSV of main's figures): the "faster than cuDNN" side.
# Step 3 (<= 10 s): where the time goes on MQA B 1 and B 8: per-block
#   traces and host enqueue / graph times of def, r32,c0 (main's 32-row tile
#   with the combine kernel), cl8, cl8,pf, cl16.
# Step 4 (the rest, informational): compute-sanitizer memcheck and racecheck
#   of the bits test (sampled; cut by the window if slow).
set -u
export LD_LIBRARY_PATH=lib:${LD_LIBRARY_PATH:-}
T=build/tests/test_attention
B=build/bench/bench_attention
t0=$(date +%s)
stamp() { echo "== $1 at +$(( $(date +%s) - t0 )) s"; }

stamp "1: GPU tests"
run_t() { # name filter secs
    timeout -k 3 "$3" "$T" --filter "$2" --verbose >"$OUT/t_$1.log" 2>&1
    echo "$1 rc $?" >>"$OUT/t_rc.txt"
}
: >"$OUT/t_rc.txt"
run_t cl_ref 'attention/decode_cluster_merge_matches_reference' 40 &
run_t cl_bits 'attention/decode_cluster_merge_bits_counters_and_graph' 40 &
run_t plan 'attention_plan/*' 20 &
run_t main_tail 'attention/decode_tail_merge_bits_reference_and_graph' 40 &
run_t main_fused 'attention/decode_fused_merge_bits_counters_and_graph' 40 &
run_t main_repro 'attention/decode_is_bitwise_reproducible' 40 &
run_t main_spread 'attention/decode_spread_padding_off_and_on' 40 &
run_t main_stages 'attention/decode_stages_and_late_trigger_keep_the_bits' 40 &
run_t main_short 'attention/decode_short_queries_every_head_dim' 40 &
run_t main_many 'attention/decode_merges_many_splits' 40 &
run_t main_masked 'attention/decode_fully_masked_rows_and_causal_overhang' 30 &
wait
cat "$OUT/t_rc.txt"
grep -h "^\[PASS\]\|^\[FAIL\]\|Synthesis\|cr_assert\|\[----\]" "$OUT"/t_*.log | head -60

stamp "2: A/B def / cluster"
ROWS="bf16:1:32:1:32768:128,bf16:8:32:1:8192:128,bf16:2:32:1:8192:128,bf16:4:32:1:8192:128"
ROWS="$ROWS,bf16:8:32:1:15997:64,bf16:1:32:8:32768:128,f16:1:64:4:20584:128,bf16:16:4:1:11198:64"
ROWS="$ROWS,f16:4:24:1:47210:64,f16:2:8:1:3652:128,bf16:1:32:4:131072:128,bf16:1:8:1:65536:64"
ROWS="$ROWS,bf16:8:32:8:8192:128,f16:4:48:2:9904:64,bf16:2:16:8:6000:128,f16:1:20:1:2795:128"
ROWS="$ROWS,bf16:1:64:1:32768:128"
KG_BENCH_CSV="$OUT/ab.csv" KG_BENCH_FILTER="dseed list" KG_BENCH_DEC_ROWS="$ROWS" \
    KG_BENCH_DECVS="def;cl8;cl8,pf;cl4;cl16;def;cl8;cl8,pf" timeout -k 3 25 "$B" >"$OUT/ab.log" 2>&1
echo "rc $?"
cat "$OUT/ab.log"

left=$(( 60 - ($(date +%s) - t0) ))
stamp "2b: PyTorch flash / cuDNN on the A/B rows (main's figure in the CSV; the cluster figure is in ab.log)"
if [ -f "$OUT/ab.csv" ]; then
    PATH=/opt/torch/.venv/bin:$PATH timeout -k 2 $(( left > 14 ? 14 : left > 5 ? left : 5 )) \
        python3 bench/torch_attention.py "$OUT/ab.csv" >"$OUT/torch.log" 2>&1
    echo "torch rc $?"
    tail -25 "$OUT/torch.log"
fi

stamp "3: traces, host and graph times (MQA B 1, B 8)"
KG_BENCH_FILTER="dseed list" KG_BENCH_DEC_ROWS="bf16:1:32:1:32768:128,bf16:8:32:1:8192:128" \
    KG_BENCH_TRACE=1 KG_BENCH_DEC_HOST=1 KG_BENCH_DECVS="def;r32,c0;cl8;cl8,pf;cl16" timeout -k 3 10 "$B" >"$OUT/trace.log" 2>&1
echo "rc $?"
cat "$OUT/trace.log"

left=$(( 86 - ($(date +%s) - t0) ))
stamp "4: compute-sanitizer memcheck / racecheck of the bits test (sampled, informational), $left s left"
if [ "$left" -gt 8 ]; then
    cs=/usr/local/cuda/bin/compute-sanitizer
    for tool in memcheck racecheck; do
        KG_TEST_SANITIZER=$tool timeout -k 2 $(( left - 3 )) "$cs" --tool $tool --error-exitcode 97 \
            "$T" --jobs=1 --filter 'attention/decode_cluster_merge_bits_counters_and_graph' >"$OUT/san_$tool.log" 2>&1 &
    done
    wait
    grep -H "ERROR SUMMARY\|Synthesis\|RACECHECK SUMMARY" "$OUT"/san_*.log
fi
stamp "end"
