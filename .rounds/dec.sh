#!/usr/bin/env bash
# Round script of engineer dec, session 26 (issue 9, decode attention): the
# multicast decode kernels (kg_attn_dec_mc; forced-only: kg_test_attn_dec_mc /
# bench words "mc", "mcd"). The 16-row decode variant's two row tiles of a split run
# as one thread-block cluster of 2; each K / V tile is one bulk tensor copy
# multicast to both blocks (rank 0 issues K, rank 1 V), so K and V cross L2
# once instead of twice; main's plan, partials and merge are kept, so the bits
# are main's. Runs in the stage folder (stage.sh), $OUT set, 75 s wall in all.
#
# Step 1 (<= 28 s, tests in parallel processes) DECIDES WHETHER IT MAY MERGE:
#   t_mc_rows  attention_decode_mc/mqa_rows_match_default_bits_and_reference:
#              MQA / GQA groups of 20-32 rows, bf16 / f16, D 64 / 128, the
#              planner's splits and merge: the multicast run taken (on an
#              H200 with bulk copies), its output and lse bitwise equal to the
#              default's (same split count) with each refill (mc, then mcd: the
#              counters are back to zero between), and within the float64
#              reference's tolerance. Its log prints
#              "mc D d: N clusters of 2 resident" (cudaOccupancyMaxActiveClusters,
#              66 needed for 132 blocks).
#   t_mc_edges attention_decode_mc/edges_match_default_bits_and_reference: Sk 1,
#              Sk 40 / 100 (below one key tile / one stage), Sk not a multiple of
#              the tile, 1 / 3 / 5 / 7 / 64 forced splits, each merge (fused,
#              combine, tail), causal Sq 2-4 (Sk 3 < Sq: hidden rows), the
#              additive mask with fully masked heads.
#   t_mc_not   attention_decode_mc/not_taken_where_it_does_not_apply (one / three
#              row tiles, D 96): the hook changes nothing.
#   t_mc_table attention_decode_mc_table/* (CPU): the multicast table holds the
#              16-row variant's shapes (the launch's condition for taking it).
#   t_main_*   main's decode tests through the changed host code (launch_pdl's
#              attribute array, the planner's slots): fused / tail merges,
#              reproducibility, stages, tile rule, host path, spread; attention_plan/*.
#   san_memcheck: compute-sanitizer memcheck on the edges test (a sample of its
#              cases, kt_take), in parallel with the tests (26 s cap; a cut run is
#              "no result", not a failure). (racecheck, 8x slower, left out: it
#              gave no result in s25r1's window and would slow the tests beside it.)
#   All tests must pass (rc 0), and memcheck must report 0 errors where it
#   finished, for the candidate to merge. A main test cut by its timeout (rc
#   124) is no result: rerun it alone before deciding.
# Step 2 (<= 32 s) DECIDES WHETHER IT BECOMES THE DEFAULT: bench_attention,
#   KG_BENCH_DECVS "def;mc;mcd;r16,mc;def;mc;mcd;r16,mc" (def = main's path;
#   mc = the multicast kernel where the launch can take it, thread 0 waiting for
#   both blocks' word before each refill; mcd = the same with the deferred
#   refill, KG_DEC_MC_DEFER; r16,mc = main's 16-row variant forced, with
#   multicast), three interleaved rounds, best of each; each config's bits
#   against def's ('=' in the configs line) and float64 where they differ; the
#   configs line shows "mc 1/N" or "mc 2/N" (taken, N clusters of 2 resident)
#   or "mc -1" (not applicable).
#   RULE 1 (the class: 16-row decode launches of two row tiles, Sq 1, group
#   17-32 where kg_attn_dec_tile_rows picks 16, D 64 / 128, sm_90, one wave):
#   a refill mode m (mc or mcd) becomes the default for the class
#   (runtime/attn_plan.h: #define KG_ATTN_DEC_MC 1 for mc, 2 for mcd) iff on
#   EVERY row of the A/B where def takes 16-row tiles and m is taken,
#   min(m) <= 0.98 x min(def) (both positions' best), and no row of the class
#   is slower. If both modes qualify: the one with the lower sum of times over
#   those rows. Else dropped.
#   RULE 2 (informational unless it holds everywhere): rows where def takes the
#   32-row tile (MQA B 8): if r16,mc <= 0.98 x def on every such row, the tile
#   rule could name 16 rows with multicast there (a next-session change, its
#   own round).
#   Control row (GQA group 4, bf16 B 1 Hq 32 Hkv 8 Sk 32768: mc -1) must be level.
#   Rows, in order: bf16 MQA B 1 Sk 32768 D 128; bf16 MQA B 2 / B 4 Sk 8192 D 128;
#   f16 MQA B 1 Sk 32768 D 64; f16 MQA B 2 Sk 8192 D 64; bf16 B 1 Hq 64 Hkv 2
#   Sk 32768 D 128; bf16 B 2 Hq 32 Hkv 1 Sk 20000 D 64; f16 B 4 Hq 24 Hkv 1
#   Sk 47210 D 64; bf16 MQA B 8 Sk 8192 D 128; control. By kg_attn_dec_tile_rows
#   on 132 multiprocessors (computed on paper; the configs line shows the variant
#   def took): 16-row tiles (rule 1) on rows 1-5 and 7; the 32-row tile (rule 2)
#   on rows 6 (B 1 Hq 64 Hkv 2), 8 (f16 B 4 Hq 24) and 9 (MQA B 8).
# Step 2b (<= 9 s): PyTorch flash / cuDNN on the A/B rows (torch_attention.py
#   on the CSV of main's figures).
# Step 3 (<= 6 s, informational): per-block traces of def / mc / mcd / tail /
#   mcd,tail on MQA B 1 Sk 32768 D 128 and MQA B 4 Sk 8192 (when the keys end,
#   the merge tail; tail = the decode grid's last blocks merge, no combine
#   grid: the next idea for the tail after the keys).
set -u
export LD_LIBRARY_PATH=lib:${LD_LIBRARY_PATH:-}
T=build/tests/test_attention
TD=build/tests/test_attention_decode
B=build/bench/bench_attention
t0=$(date +%s)
stamp() { echo "== $1 at +$(( $(date +%s) - t0 )) s"; }

stamp "1: GPU tests"
run_t() { # name program filter secs
    timeout -k 2 "$4" "$2" --filter "$3" --verbose >"$OUT/t_$1.log" 2>&1
    echo "$1 rc $?" >>"$OUT/t_rc.txt"
}
: >"$OUT/t_rc.txt"
run_t mc_rows "$TD" 'attention_decode_mc/mqa_rows*' 26 &
run_t mc_edges "$TD" 'attention_decode_mc/edges*' 26 &
run_t mc_not "$TD" 'attention_decode_mc/not_taken*' 20 &
run_t mc_table "$TD" 'attention_decode_mc_table/*' 10 &
run_t plan "$T" 'attention_plan/*' 15 &
run_t main_tail "$T" 'attention/decode_tail_merge_bits_reference_and_graph' 26 &
run_t main_fused "$T" 'attention/decode_fused_merge_bits_counters_and_graph' 26 &
run_t main_repro "$T" 'attention/decode_is_bitwise_reproducible' 26 &
run_t main_stages "$T" 'attention/decode_stages_and_late_trigger_keep_the_bits' 26 &
run_t main_tile "$T" 'attention/decode_tile_rule_keeps_the_bits' 26 &
run_t main_host "$T" 'attention/decode_host_path_keeps_the_bits' 26 &
run_t main_spread "$T" 'attention/decode_spread_padding_off_and_on' 26 &
cs=/usr/local/cuda/bin/compute-sanitizer
(KG_TEST_SANITIZER=memcheck timeout -k 2 26 "$cs" --tool memcheck --error-exitcode 97 "$TD" --jobs=1 \
    --filter 'attention_decode_mc/edges*' >"$OUT/san_memcheck.log" 2>&1
 echo "san_memcheck rc $?" >>"$OUT/t_rc.txt") &
wait
cat "$OUT/t_rc.txt"
grep -h "^\[PASS\]\|^\[FAIL\]\|Synthesis\|cr_assert\|clusters of 2\|^\[----\].*:" "$OUT"/t_*.log | grep -v "Criterion v" | head -60
grep -H "ERROR SUMMARY\|Synthesis" "$OUT"/san_*.log

stamp "2: A/B def / mc / mcd"
ROWS="bf16:1:32:1:32768:128,bf16:2:32:1:8192:128,bf16:4:32:1:8192:128,f16:1:32:1:32768:64"
ROWS="$ROWS,f16:2:32:1:8192:64,bf16:1:64:2:32768:128,bf16:2:32:1:20000:64,f16:4:24:1:47210:64"
ROWS="$ROWS,bf16:8:32:1:8192:128,bf16:1:32:8:32768:128"
left=$(( 60 - ($(date +%s) - t0) ))
KG_BENCH_CSV="$OUT/ab.csv" KG_BENCH_FILTER="dseed list" KG_BENCH_DEC_ROWS="$ROWS" \
    KG_BENCH_DECVS="def;mc;mcd;r16,mc;def;mc;mcd;r16,mc" timeout -k 2 $(( left > 32 ? 32 : left > 10 ? left : 10 )) \
    "$B" >"$OUT/ab.log" 2>&1
echo "rc $?"
cat "$OUT/ab.log"

left=$(( 69 - ($(date +%s) - t0) ))
stamp "2b: PyTorch flash / cuDNN on the A/B rows (main's figure in the CSV; mc's is in ab.log)"
if [ -f "$OUT/ab.csv" ] && [ "$left" -gt 3 ]; then
    PATH=/opt/torch/.venv/bin:$PATH timeout -k 1 $(( left > 9 ? 9 : left )) \
        python3 bench/torch_attention.py "$OUT/ab.csv" >"$OUT/torch.log" 2>&1
    echo "torch rc $?"
    tail -16 "$OUT/torch.log"
fi

left=$(( 73 - ($(date +%s) - t0) ))
stamp "3: traces def / mc / mcd / tail / mcd,tail (MQA B 1 Sk 32768 D 128, MQA B 4 Sk 8192), $left s left"
if [ "$left" -gt 2 ]; then
    KG_BENCH_FILTER="dseed list" KG_BENCH_DEC_ROWS="bf16:1:32:1:32768:128,bf16:4:32:1:8192:128" \
        KG_BENCH_TRACE=1 KG_BENCH_DECVS="def;mc;mcd;tail;mcd,tail" timeout -k 1 $(( left > 6 ? 6 : left )) "$B" >"$OUT/trace.log" 2>&1
    echo "rc $?"
    head -40 "$OUT/trace.log"
fi
stamp "end"
