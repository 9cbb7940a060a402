#!/usr/bin/env bash
# usage: bridge_vs_train_test.sh SRC
# scripts/bridge_vs_train.py on a planted pair of files: a convlab train JSON (two convolution layers, a
# pooling layer between them) and a bridge layers.csv (a PyTorch baseline row, two policies). A pair with
# the same algorithm is compared (11 ms vs 10 ms: 1.100, within 10 %; 13 vs 10: not), a pair whose
# algorithms differ is listed but not counted, an unrun direction (0 ms) is left out; the summary counts
# what it compared; train's fused bias + ReLU epilogue (epilogue_s) is taken off its fwd and bwd-filter;
# several runs of each tool are pooled (per pair the median of each tool's runs); a missing folder or no
# common policy exits 1 with one line.
set -uo pipefail
src=$1
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
cat > "$work/train.json" <<'JSON'
{"policies": [
  {"policy": "find", "ran": true, "layers": [
    {"name": "conv1", "kind": "conv", "fwd_s": 0.010, "bwd_data_s": 0, "bwd_filter_s": 0.010,
     "algos": {"fwd": {"algo": "cpu.direct"}, "bwd-filter": {"algo": "cpu.direct"}}},
    {"name": "pool1", "kind": "pool", "fwd_s": 0.001, "bwd_data_s": 0.001, "bwd_filter_s": 0},
    {"name": "conv2", "kind": "conv", "fwd_s": 0.010, "bwd_data_s": 0.010, "bwd_filter_s": 0.010,
     "epilogue_s": {"fwd": 0.0002, "bwd": 0.0005},
     "algos": {"fwd": {"algo": "cpu.fft"}, "bwd-data": {"algo": "cpu.fft"}, "bwd-filter": {"algo": "cpu.fft"}}}]},
  {"policy": "default", "ran": false, "layers": []}]}
JSON
mkdir -p "$work/bridge"
cat > "$work/bridge/layers.csv" <<'CSV'
policy,layer,problem,fwd_ms,bwd_ms,fwd_algo,bwd_data_algo,bwd_filter_algo,own_fwd_ms,own_bwd_data_ms,own_bwd_filter_ms
pytorch,features.0,,12.0,13.0,,,,,,
find,features.0,,12.0,13.0,cpu.direct,,cpu.direct,11.0,,13.0
find,features.3,,12.0,13.0,cpu.fft,cpu.winograd_f4x3,cpu.fft,10.5,30.0,9.5
CSV
python3 "$src/scripts/bridge_vs_train.py" "$work/train.json" "$work/bridge" > "$work/out.md" || fail "exit $?"
cat "$work/out.md"
grep -q '^| find | conv1 (features.0) | fwd | cpu.direct | cpu.direct | 10.000 | 11.000 | 1.100 | yes |' "$work/out.md" \
  || fail "conv1 fwd: 1.100 is within 10 %"
grep -q '^| find | conv1 (features.0) | bwd-filter | .* | 1.300 | \*\*no\*\* |' "$work/out.md" || fail "conv1 bwd-filter: 1.3 is not"
grep -q '| bwd-data | cpu.fft | cpu.winograd_f4x3 | .* | not compared (choices differ) |' "$work/out.md" \
  || fail "differing choices must be listed, not compared"
grep -q 'conv1 (features.0) | bwd-data' "$work/out.md" && fail "an unrun direction must be left out"
grep -q '^| find | conv2 (features.3) | fwd | cpu.fft | cpu.fft | 9.800 | 10.500 | 1.071 | yes |' "$work/out.md" \
  || fail "conv2 fwd: train's epilogue taken off"
grep -q '^| find | conv2 (features.3) | bwd-filter | cpu.fft | cpu.fft | 9.500 | 9.500 | 1.000 | yes |' "$work/out.md" \
  || fail "conv2 bwd-filter: train's epilogue backward taken off"
grep -q "^train's times: the convolution call alone" "$work/out.md" || fail "what train's times are"
grep -q '^summary: 3 of 4 (layer, direction) pairs with the same algorithm agree within 10 %; largest deviation 1.300x (find conv1 bwd-filter)' \
  "$work/out.md" || fail "summary line"
# Several runs of each tool pooled: per pair the median of each tool's runs (10 and 12 ms: 11).
sed 's/"fwd_s": 0.010, "bwd_data_s": 0, "bwd_filter_s": 0.010,/"fwd_s": 0.012, "bwd_data_s": 0, "bwd_filter_s": 0.010,/' \
  "$work/train.json" > "$work/train2.json"
cp -r "$work/bridge" "$work/bridge2"
python3 "$src/scripts/bridge_vs_train.py" "$work/train.json" "$work/train2.json" "$work/bridge" "$work/bridge2" \
  > "$work/pooled.md" || fail "pooled: exit $?"
grep -q '^pooled: 2 train run(s), 2 bridge run(s)' "$work/pooled.md" || fail "pooled: its line"
grep -q '^| find | conv1 (features.0) | fwd | cpu.direct | cpu.direct | 11.000 | 11.000 | 1.000 | yes |' "$work/pooled.md" \
  || fail "pooled: the median of the two train runs"
python3 "$src/scripts/bridge_vs_train.py" "$work/train.json" "$work/nowhere" > /dev/null 2> "$work/err" && fail "missing folder must exit 1"
grep -q '^error: .*layers.csv' "$work/err" || fail "missing folder: one line naming the file"
sed 's/^find,/get,/' "$work/bridge/layers.csv" > "$work/other.csv" && mkdir -p "$work/other" && mv "$work/other.csv" "$work/other/layers.csv"
python3 "$src/scripts/bridge_vs_train.py" "$work/train.json" "$work/other" > /dev/null 2> "$work/err" && fail "no common policy must exit 1"
grep -q '^error: no policy in both' "$work/err" || fail "no common policy: its line"
echo ok
