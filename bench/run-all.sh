#!/usr/bin/env bash
# `ninja bench`: runs every benchmark program, then the PyTorch side-by-side
# scripts where python3 has torch with CUDA (the GPU machine). Results:
#   build/bench.json  every case in one schema (family, case, dtype, shape,
#                     time_us, gbps or tflops, pct_of_limit, limit, gpu, date),
#                     with a "torch" column per case that the scripts fill in;
#                     `python3 bench/plot.py` draws PNGs from it
#   build/bench.csv   the rows the torch scripts read
# On a machine without a usable GPU each program says why it ran nothing, and
# this succeeds with no result files. Run from the repository root;
# KG_BENCH_DIR names the folder holding bench/ programs (default build).
set -u
dir=${KG_BENCH_DIR:-build}
csv=${KG_BENCH_CSV:-$dir/bench.csv}
json=${KG_BENCH_JSON:-$dir/bench.json}
rows=$json.rows
: > "$csv"
: > "$rows"
status=0
# cold start (issue 11): every module's first use in turn, in one fresh
# process, before the other programs load anything (a line per module, the
# worst last; no device: one line saying so)
[ -x "$dir/bench/bench_coldstart" ] && "$dir/bench/bench_coldstart" modules
for prog in "$dir"/bench/bench_*; do
  [ -x "$prog" ] || continue
  if ! KG_BENCH_CSV=$csv KG_BENCH_JSON=$rows "$prog"; then
    echo "run-all: $prog failed" >&2
    status=1
  fi
done
if [ ! -s "$rows" ]; then
  rm -f "$rows" "$csv" "$json"
  echo "run-all: no benchmark ran: no usable CUDA GPU here (each program said why above); no results written"
  exit $status
fi
# the programs' JSON lines -> one JSON array
{
  echo "["
  sed '$!s/$/,/' "$rows"
  echo "]"
} > "$json"
rm -f "$rows"
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  for script in bench/torch_*.py; do
    [ "$script" = bench/torch_common.py ] && continue
    KG_BENCH_JSON=$json python3 "$script" "$csv" || status=1
  done
else
  echo "run-all: PyTorch with CUDA is not available here: the side-by-side scripts (bench/torch_*.py) did not run"
fi
echo "run-all: $(grep -c '"family"' "$json") cases in $json; \`python3 bench/plot.py $json\` draws the plots"
exit $status
