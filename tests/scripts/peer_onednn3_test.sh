#!/usr/bin/env bash
# usage: peer_onednn3_test.sh table SRC | tool SRC BUILD
# table: scripts/peer_table.py on two rounds of hand-made documents. Per (layer, direction) and
#   side the best ok row of each round (cpu.reference and a row whose check failed are never a
#   best), the median of the rounds' bests, the union of their intervals, the fastest side and
#   whether it overlaps the runner-up, "-" where a side has no ok row; bad input exits 2 with
#   one "error:" line; peer-onednn3.sh's argument checks exit 2 before any install or build.
# tool: convlab_onednn3 (bench/onednn3) on small problems of every direction: one libdnnl (the
#   wheel's) in the process, every auto/direct row checked against the fp64 reference and timed,
#   oneDNN planning for the --threads asked, bad arguments exit 2. Exits 77 (skipped, with the reason) when the tool is not built.
set -uo pipefail
mode=$1 src=$2
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT

table_test() {
  python3 - "$work" <<'EOF'
import json, sys
w = sys.argv[1]
def c(rows): return {"tool": "convlab layers", "rows": rows}
def o(rows): return {"tool": "convlab_onednn3", "rows": rows}
def r(algo, t, lo, hi, status="ok", prob="mb2ic4ih8oc4oh8kh3ph1", d="fwd", layer="L1"):
    return {"layer": layer, "problem": prob, "direction": d, "algorithm": algo, "status": status,
            "time_ms": t, "time_lo_ms": lo, "time_hi_ms": hi, "implementation": "jit:x" if algo.startswith("onednn3") else None}
P2 = "mb2ic4ih8oc8oh4kh1sh2"
rounds = [
  (c([r("cpu.reference", 0.1, 0.1, 0.1), r("cpu.direct", 2.0, 1.9, 2.1), r("cpu.im2col_gemm", 3.0, 2.9, 3.1),
      r("onednn.auto", 4.0, 3.9, 4.1), r("cpu.direct", 1.0, 0.9, 1.1, prob=P2, d="bwd-data", layer="L2"),
      r("onednn.direct", 5.0, 4.0, 6.0, prob=P2, d="bwd-data", layer="L2")]),
   o([r("onednn3.auto", 1.5, 1.4, 1.6), r("onednn3.direct", 0.5, 0.4, 0.6, status="inaccurate"),
      r("onednn3.auto", None, None, None, status="unsupported", prob=P2, d="bwd-data")])),
  (c([r("cpu.direct", 4.0, 3.0, 5.0), r("cpu.im2col_gemm", 2.5, 2.4, 2.6), r("onednn.auto", 6.0, 5.9, 6.1),
      r("cpu.direct", 1.2, 1.1, 1.3, prob=P2, d="bwd-data", layer="L2"),
      r("onednn.direct", 0.8, 0.7, 1.15, prob=P2, d="bwd-data", layer="L2")]),
   o([r("onednn3.auto", 1.7, 1.6, 2.45), r("onednn3.direct", 9.0, 8.9, 9.1),
      r("onednn3.direct", 3.0, 2.9, 3.1, prob=P2, d="bwd-data")])),
]
for i, (cd, od) in enumerate(rounds, 1):
    json.dump(cd, open("%s/c%d.json" % (w, i), "w"))
    json.dump(od, open("%s/o%d.json" % (w, i), "w"))
EOF
  local t="python3 $src/scripts/peer_table.py"
  $t --convlab "$work/c1.json" "$work/c2.json" --onednn3 "$work/o1.json" "$work/o2.json" --machine "cpu: test" \
     --command "cmd" --md "$work/t.md" --json "$work/t.json" --csv "$work/t.csv" || fail "peer_table exit $?"
  cat "$work/t.md"
  # L1 fwd: convlab's bests 2.0 (cpu.direct; cpu.reference's 0.1 ignored) and 2.5 -> median 2.25, [1.9, 2.6];
  # 2.6: 4.0 and 6.0 -> 5.0; 3.x: 1.5 (the inaccurate 0.5 ignored) and 1.7 -> 1.6, [1.4, 2.45], which
  # overlaps convlab's interval; convlab / 3.x = 1.6 / 2.25.
  grep -qF '| L1 | fwd | 2.250 [1.900, 2.600] cpu.direct/cpu.im2col_gemm | 5.000 [3.900, 6.100] onednn.auto | 1.600 [1.400, 2.450] onednn3.auto jit:x | oneDNN 3.x (overlaps convlab) | 0.71 |' "$work/t.md" ||
    fail "L1 fwd row"
  # L2 bwd-data: 3.x has no ok row in round 1 -> "-"; 2.6: 5.0 and 0.8 -> 2.9, [0.7, 6.0]; convlab 1.1, [0.9, 1.3]
  # is fastest, overlapping 2.6.
  grep -qF '| L2 | bwd-data | 1.100 [0.900, 1.300] cpu.direct | 2.900 [0.700, 6.000] onednn.direct | - | convlab (overlaps oneDNN 2.6) | - |' "$work/t.md" ||
    fail "L2 bwd-data row"
  grep -qF 'fastest: convlab 1, oneDNN 2.6 0, oneDNN 3.x 1 of 2 pairs' "$work/t.md" || fail "tally"
  grep -qF -- '- command: `cmd`' "$work/t.md" || fail "command line"
  [ "$(wc -l < "$work/t.csv")" = 3 ] || fail "csv: a header and two rows"
  grep -q '^L2,mb2ic4ih8oc8oh4kh1sh2,bwd-data,cpu.direct,1.1,0.9,1.3,onednn.direct,2.9,0.7,6.0,,,,,convlab (overlaps oneDNN 2.6),$' "$work/t.csv" ||
    fail "csv L2 row"
  python3 -c "
import json, sys
d = json.load(open('$work/t.json'))
r = d['rows'][0]
assert d['rounds'] == 2 and r['fastest_side'] == 'onednn3' and r['onednn3']['rounds'] == [1.5, 1.7], r
assert d['rows'][1]['onednn3'] is None and d['rows'][1]['fastest_side'] == 'convlab', d['rows'][1]
" || fail "json"
  # Bad input: one line, exit 2, no table.
  $t --convlab "$work/c1.json" --onednn3 "$work/o1.json" "$work/o2.json" --md "$work/x.md" --json "$work/x.json" \
     --csv "$work/x.csv" 2> "$work/err"
  [ $? = 2 ] && [ "$(wc -l < "$work/err")" = 1 ] && grep -q '^error: .*one --convlab and one --onednn3' "$work/err" ||
    fail "round count mismatch: $(cat "$work/err")"
  [ ! -e "$work/x.md" ] || fail "a table written from bad input"
  $t --convlab "$work/o1.json" --onednn3 "$work/o1.json" --md "$work/x.md" --json "$work/x.json" --csv "$work/x.csv" \
     2> "$work/err"
  [ $? = 2 ] && grep -q "^error: .*written by 'convlab_onednn3', expected 'convlab layers'" "$work/err" ||
    fail "wrong document kind: $(cat "$work/err")"
  bash "$src/scripts/peer-onednn3.sh" mb2ic4ih8oc4oh8kh3ph1 2> "$work/err"
  [ $? = 2 ] && grep -q '^error: peer-onednn3.sh: --out DIR is needed$' "$work/err" || fail "script without --out"
  bash "$src/scripts/peer-onednn3.sh" --out "$work/o" --rounds 0 mb2ic4ih8oc4oh8kh3ph1 2> "$work/err"
  [ $? = 2 ] && grep -q '^error: peer-onednn3.sh: --rounds expects 1..99, got 0$' "$work/err" || fail "--rounds 0"
}

tool_test() {
  local build=$1 tool=$1/convlab_onednn3
  if [ ! -x "$tool" ]; then
    echo "SKIP: convlab_onednn3 is not built: configure with -DCONVLAB_ONEDNN3_ROOT=<prefix of PyPI's onednn," \
         "onednn-devel and tbb-devel> (scripts/peer-onednn3.sh makes one under the build folder)"
    exit 77
  fi
  local libs
  libs=$(ldd "$tool" | grep -c 'libdnnl\.so') || true
  [ "$libs" = 1 ] || fail "convlab_onednn3 loads $libs libdnnl: $(ldd "$tool" | grep libdnnl)"
  "$tool" mb2ic8ih9oc16oh5kh3sh2ph1 g2mb2ic8ih7oc8oh7kh3ph1 mb3ic16ih6oc8oh6kh1 --threads 1 --max-seconds 0.02 \
    --json "$work/t.json" > "$work/out" 2>&1 || { cat "$work/out"; fail "tool exit $?"; }
  python3 - "$work/t.json" <<'EOF' || fail "tool rows"
import json, math, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
assert d["onednn_version"].startswith("3."), d["onednn_version"]
assert len(rows) == 3 * 3 * 3, len(rows)
for r in rows:
    if r["algorithm"] == "onednn3.winograd" and r["status"] == "unsupported":
        assert r["note"], r
        continue
    assert r["status"] == "ok", r
    assert r["implementation"] and not r["implementation"].startswith("ref"), r
    assert 0 <= r["check_err_ratio"] <= 1, r
    assert r["reps"] >= 3 and r["threads"] == 1, r
    assert 0 < r["time_lo_ms"] <= r["time_ms"] <= r["time_hi_ms"], r
print("tool rows ok:", len(rows))
EOF
  # --threads 1 reaches oneDNN: its own report of the thread count it plans for.
  ONEDNN_VERBOSE=1 "$tool" mb2ic8ih9oc16oh5kh3sh2ph1 --dir fwd --threads 1 > "$work/verbose" 2>&1 ||
    fail "verbose run exit $?"
  grep -q '^onednn_verbose,.*info,cpu,runtime:.*,nthr:1$' "$work/verbose" ||
    fail "oneDNN does not plan for 1 thread: $(grep nthr "$work/verbose")"
  "$tool" mb2ic8ih9oc16oh5kh3sh2ph1 --threads -1 2> "$work/err"
  [ $? = 2 ] && [ "$(wc -l < "$work/err")" = 1 ] && grep -q '^error: convlab_onednn3: --threads' "$work/err" ||
    fail "bad --threads: $(cat "$work/err")"
}

case $mode in
  table) table_test ;;
  tool) tool_test "$3" ;;
  *) fail "unknown mode $mode" ;;
esac
echo ok
