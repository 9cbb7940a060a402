#!/usr/bin/env bash
# usage: gpu_ncu_table_test.sh SRC
# The ncu stage's table from a raw `ncu --csv --page raw` file (the program's own
# output and ncu's ==PROF== lines mixed in, numbers with thousands separators,
# a kernel launched twice): one row per kernel per run, its derived columns
# computed from the counters (8000 sectors / 1000 requests = 8.00; 100 bank
# conflicts / 400 wavefronts = 0.25), namespaces and parameters dropped.
set -uo pipefail
src=$1
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
cp "$src/tests/scripts/data/ncu_raw_sample.csv" "$work/cuda.direct.conv1.bwd-data.csv"
python3 "$src/scripts/gpu_ncu_table.py" "$work" > "$work/table.md" || fail "table exit $?"
cat "$work/table.md"
row=$(grep '^| cuda.direct | conv1 | bwd-data |' "$work/table.md")
[ "$(grep -c '^| cuda.direct' "$work/table.md")" = 1 ] || fail "a kernel launched twice in one run is one row"
[[ $row == *"| direct_bwd_data_kernel<4> |"* ]] || fail "kernel name: $row"
[[ $row == *"| 40 | 0 | 55.5 | 8.00 | - | 0.25 | - | 8.1 | 33000.1 |" ]] || fail "derived columns: $row"
tail -1 "$work/table.md" | grep -q '^summary: 1 kernel rows from 1 profiled runs$' || fail "summary line"
[ "$(wc -l < "$work/kernels.csv")" = 2 ] || fail "kernels.csv: a header and one row"
# No kernel row at all (ncu failed, or profiled nothing): exit 1.
rm "$work"/*.csv && echo '==PROF== Connected' > "$work/cuda.fft_cufft.conv3.fwd.csv"
python3 "$src/scripts/gpu_ncu_table.py" "$work" > /dev/null && fail "no kernel rows must exit 1"
echo ok
