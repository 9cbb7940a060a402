#!/usr/bin/env bash
# usage: cpu_vs_onednn_test.sh SRC
# scripts/cpu_vs_onednn.py on a planted `convlab layers --json` file: three (layer, direction) pairs, the
# hand-written best against oneDNN's best (2.0 ms vs 1.0: 0.50x; 1.0 vs 2.0: 2.00x), the reference and the
# library-backed cpu.im2col_openblas never counted as hand-written, a depthwise pair counted as one, get's
# pick against find's, the interleaved speeds, and the placements: pairs near (round trips within 2x of
# the run's nearest), far, and one that moved, with the summary again per placement. A file without
# placements gets neither the column nor the line.
set -uo pipefail
src=$1
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
row() {  # layer dir algo family time_ms [get]
  echo "{\"layer\": \"$1\", \"problem\": \"$2\", \"direction\": \"$3\", \"threads\": 2, \"algorithm\": \"$4\", \"family\": \"$5\", \"status\": \"ok\", \"time_ms\": $6, \"peak_fraction\": 0.1, \"get_choice\": ${7:-false}}"
}
{
  echo '{"batch": 16, "load": {"disturbed": false}, "rows": ['
  row n.a g8mb1ic8ih9oc8kh3ph1 fwd cpu.direct_depthwise direct 2.0 true; echo ,
  row n.a g8mb1ic8ih9oc8kh3ph1 fwd onednn.direct direct 1.0; echo ,
  row n.a g8mb1ic8ih9oc8kh3ph1 fwd cpu.reference ref 0.1; echo ,
  row n.b mb1ic8ih9oc8kh3ph1 fwd cpu.winograd_f4x3 winograd 1.0; echo ,
  row n.b mb1ic8ih9oc8kh3ph1 fwd cpu.im2col_openblas gemm 0.5 true; echo ,
  row n.b mb1ic8ih9oc8kh3ph1 fwd onednn.auto direct 2.0; echo ,
  row n.c mb1ic8ih9oc8kh1 bwd-data cpu.im2col_gemm gemm 1.0 true; echo ,
  row n.c mb1ic8ih9oc8kh1 bwd-data onednn.auto direct 1.0
  echo '], "duels": ['
  echo '{"layer": "n.a", "direction": "fwd", "rounds": 9, "speed": 0.6, "speed_lo": 0.5, "speed_hi": 0.7},'
  echo '{"layer": "n.b", "direction": "fwd", "rounds": 9, "speed": 1.9, "speed_lo": 1.8, "speed_hi": 2.0},'
  echo '{"layer": "n.c", "direction": "bwd-data", "rounds": 9, "speed": 1.0, "speed_lo": 0.9, "speed_hi": 1.1}'
  echo '], "placements": ['
  echo '{"layer": "n.a", "direction": "fwd", "threads": 2, "round_trip_ns": [380, 400, 390]},'
  echo '{"layer": "n.b", "direction": "fwd", "threads": 2, "round_trip_ns": [100, 120, 110]},'
  echo '{"layer": "n.c", "direction": "bwd-data", "threads": 2, "round_trip_ns": [100, 390, null]}'
  echo ']}'
} > "$work/run.json"
python3 "$src/scripts/cpu_vs_onednn.py" "$work/run.json" > "$work/out.md" || fail "exit $?"
cat "$work/out.md"
grep -q '^| n.a | fwd | cpu.direct_depthwise | 2.000 | onednn.direct | 1.000 | 0.50× |.* 0.60× \[0.50, 0.70\] | far / far |$' \
  "$work/out.md" || fail "n.a: 0.50x, far in find and in the interleaved timing"
grep -q '^| n.b | fwd | cpu.winograd_f4x3 | 1.000 | onednn.auto | 2.000 | 2.00× | cpu.im2col_openblas | 4.00× | cpu.im2col_openblas | 1.00 |.* near / near |$' \
  "$work/out.md" || fail "n.b: the hand-written best excludes OpenBLAS; the cpu.* best includes it"
grep -q '^| n.c | bwd-data | .* moved / - |$' "$work/out.md" || fail "n.c moved during find; no duel placement"
grep -q 'threads. round trip 100-400 ns over the run' "$work/out.md" || fail "the run's range"
grep -q '^summary: hand-written best >= oneDNN.s best on 2/3 pairs (67 %), 1 below 0.8x, slowest 0.50x (n.a fwd); with OpenBLAS/FFTW 2/3; depthwise 0/1 at >= 1.0x; get within 10 % of find on 2/3' \
  "$work/out.md" || fail "summary"
grep -q '^by placement .*near: find.s medians 1/1, interleaved 1/1 at >= 1.0x; far: find.s medians 0/1, interleaved 0/1 at >= 1.0x; moved: find.s medians 1/1, interleaved 0/0' \
  "$work/out.md" || fail "per placement"
# Without placements: no column, no per-placement line.
python3 - "$work/run.json" > "$work/old.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d.pop("placements"); print(json.dumps(d))
PY
python3 "$src/scripts/cpu_vs_onednn.py" "$work/old.json" > "$work/old.md" || fail "exit $? without placements"
grep -q 'placement' "$work/old.md" && fail "a file without placements gets no placement column or line"
grep -q '^| n.a | fwd | cpu.direct_depthwise | 2.000 | onednn.direct | 1.000 | 0.50× |.* 0.60× \[0.50, 0.70\] |$' "$work/old.md" \
  || fail "the old table's row"
# A run that saw one placement: which one is not told ("one"), unless --near-ns gives the near round trip.
python3 - "$work/run.json" > "$work/onefar.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["placements"]:
    p["round_trip_ns"] = [380, 400, 390]
print(json.dumps(d))
PY
python3 "$src/scripts/cpu_vs_onednn.py" "$work/onefar.json" > "$work/onefar.md" || fail "exit $? on one placement"
grep -q 'one placement throughout' "$work/onefar.md" || fail "one placement: said so"
grep -q '| one / one |$' "$work/onefar.md" || fail "one placement: the cases are one"
grep -q 'near / near' "$work/onefar.md" && fail "a run wholly far must not be called near"
grep -q '^by placement' "$work/onefar.md" && fail "one placement: no per-placement line"
python3 "$src/scripts/cpu_vs_onednn.py" --near-ns 100 "$work/onefar.json" > "$work/nearns.md" || fail "exit $? with --near-ns"
grep -q '| far / far |$' "$work/nearns.md" || fail "--near-ns 100: 380-400 ns is far"
python3 "$src/scripts/cpu_vs_onednn.py" --near-ns x "$work/onefar.json" > /dev/null 2>&1 && fail "--near-ns x must exit non-zero"
python3 "$src/scripts/cpu_vs_onednn.py" > /dev/null 2>&1 && fail "no file must exit non-zero"
echo "cpu_vs_onednn.py: ok"
