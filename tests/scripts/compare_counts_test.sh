#!/usr/bin/env bash
# usage: compare_counts_test.sh SRC
# The emulator-vs-ncu comparison on recorded files: the H200 run's ncu table and the
# emulator's counts of cuda.winograd_f2x3 forward on AlexNet conv3 (batch 32, 16 blocks
# sampled per launch). Both launches are matched by name across the two spellings, each
# global request count agrees within 10 %, and a folder with nothing to match exits 1.
set -uo pipefail
src=$1
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
mkdir -p "$work/simt"
cp "$src/tests/scripts/data/simt_counts_winograd_f2x3_conv3_fwd.csv" "$work/simt/cuda.winograd_f2x3.conv3.fwd.csv"
python3 "$src/scripts/compare_counts.py" "$src/docs/results/2026-11-26-h200/ncu-kernels.csv" "$work/simt" > "$work/out.md" \
  || fail "exit $?"
cat "$work/out.md"
[ "$(grep -c '^| cuda.winograd_f2x3 | conv3 | fwd |' "$work/out.md")" = 2 ] || fail "both launches must be matched"
grep -q '^| cuda.winograd_f2x3 | conv3 | fwd | winograd_f2x3_fused_kernel | 1.00 |' "$work/out.md" || fail "fused kernel's load requests"
grep -q '^summary: 2 launches, 16 counts compared' "$work/out.md" || fail "summary line"
mkdir -p "$work/none" && echo 'kernel,function' > "$work/none/cuda.fft_cufft.conv3.fwd.csv"
python3 "$src/scripts/compare_counts.py" "$src/docs/results/2026-11-26-h200/ncu-kernels.csv" "$work/none" > /dev/null \
  && fail "nothing matched must exit 1"
echo ok
