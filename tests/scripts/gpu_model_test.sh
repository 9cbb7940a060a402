#!/usr/bin/env bash
# usage: gpu_model_test.sh SRC
# The GPU cost model on recorded files: the emulator's counts of cuda.winograd_f2x3
# forward on AlexNet conv3 and the H200 run's measured rows. Without measured rows it
# prints the published limits' prediction, labelled modelled; with them it fits and
# says how far the prediction is from the measurement; a bad card is one line, exit 2.
set -uo pipefail
src=$1
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
mkdir -p "$work/simt"
cp "$src/tests/scripts/data/simt_counts_winograd_f2x3_conv3_fwd.csv" "$work/simt/cuda.winograd_f2x3.conv3.fwd.csv"
python3 "$src/scripts/gpu_model.py" "$work/simt" --card h100 > "$work/plain.md" || fail "exit $?"
cat "$work/plain.md"
grep -q '^summary: modelled only' "$work/plain.md" || fail "without measured rows the output says modelled only"
grep -qE '^\| cuda.winograd_f2x3 \| conv3 \| fwd \| 2 \| [0-9]+ \| - \| - \| - \|$' "$work/plain.md" || fail "the modelled row"
python3 "$src/scripts/gpu_model.py" "$work/simt" --card h200 --measured "$src/docs/results/2026-11-26-h200/layers.csv" \
  --run 1 > "$work/fit.md" || fail "fit exit $?"
cat "$work/fit.md"
grep -qE '^\| cuda.winograd_f2x3 \| conv3 \| fwd \| 2 \| [0-9]+ \| [0-9]+ \| 770 \| [0-9.]+ \|$' "$work/fit.md" \
  || fail "the measured 770 µs row"
grep -q 'within 2x of measured: 1/1 in sample' "$work/fit.md" || fail "one fitted row lands within 2x"
python3 "$src/scripts/gpu_model.py" "$work/simt" --card a100 > /dev/null 2> "$work/err"
[ $? = 2 ] && [ "$(wc -l < "$work/err")" = 1 ] || fail "a bad card is one line and exit 2"
echo ok
