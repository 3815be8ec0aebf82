#!/usr/bin/env bash
# `ninja bench`: runs every benchmark program, collecting CSV rows in
# build/bench.csv, then the PyTorch side-by-side scripts where python3 has
# torch (the GPU machine). Run from the repository root.
set -u
dir=${KG_BENCH_DIR:-build}
csv=${KG_BENCH_CSV:-$dir/bench.csv}
: > "$csv"
for prog in "$dir"/bench/bench_*; do
  [ -x "$prog" ] || continue
  KG_BENCH_CSV=$csv "$prog" || exit 1
done
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  for script in bench/torch_*.py; do
    [ "$script" = bench/torch_common.py ] && continue
    python3 "$script" "$csv" || exit 1
  done
else
  echo "PyTorch with CUDA is not available here: the side-by-side scripts (bench/torch_*.py) did not run"
fi
