#!/usr/bin/env bash
# usage: scripts/peer-onednn3.sh --out DIR [--threads N] [--rounds R] [--max-seconds S] [--build DIR]
#                                NET|PROBLEM|@FILE...
# convlab beside the oneDNN frameworks ship: Debian's oneDNN 2.6 (convlab's onednn.*) and
# oneDNN 3.x from PyPI (the `onednn` wheel), on the same problems, in one table.
#
#  1. A venv under the build folder (BUILD/onednn3-venv) with PyPI's onednn, onednn-devel and
#     tbb-devel, installed on first use (pip; nothing else is downloaded).
#  2. convlab and convlab_onednn3 (bench/onednn3) built with CONVLAB_ONEDNN3_ROOT pointing at it;
#     ldd must show one libdnnl in each, Debian's in convlab and the wheel's in the tool.
#  3. R rounds, each `convlab layers PROBLEMS --threads N --json` and `convlab_onednn3 PROBLEMS
#     --threads N --json` back to back (odd rounds convlab first, even rounds the tool first).
#  4. scripts/peer_table.py: DIR/peer.md, DIR/peer.json, DIR/peer.csv (per layer and direction:
#     convlab's best own algorithm, oneDNN 2.6's best, oneDNN 3.x's best, which is fastest),
#     headed by the machine (lscpu's model, the ISA each library dispatched to, the load
#     convlab measured) and this command line. The rounds' documents stay in DIR.
# Exit 0 when the table was written, 1 when a run's check failed (the table is still written
# from the rows that passed), 2 on bad arguments or a failed install / build.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
die() { printf 'error: %s\n' "$*" >&2; exit 2; }
cmdline="scripts/peer-onednn3.sh $*"
out="" threads=2 rounds=2 max_seconds=0.3 build="$src/build" problems=()
while [ $# -gt 0 ]; do
  case $1 in
    --out|--threads|--rounds|--max-seconds|--build)
      [ $# -ge 2 ] || die "peer-onednn3.sh: $1 needs a value"
      case $1 in
        --out) out=$2 ;; --threads) threads=$2 ;; --rounds) rounds=$2 ;;
        --max-seconds) max_seconds=$2 ;; --build) build=$2 ;;
      esac
      shift 2 ;;
    --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --*) die "peer-onednn3.sh: unknown option $(printf '%q' "$1")" ;;
    *) problems+=("$1"); shift ;;
  esac
done
[ -n "$out" ] || die "peer-onednn3.sh: --out DIR is needed"
[ ${#problems[@]} -gt 0 ] || die "peer-onednn3.sh: no problems given"
[[ $threads =~ ^[0-9]+$ ]] || die "peer-onednn3.sh: --threads expects a count, got $(printf '%q' "$threads")"
[[ $rounds =~ ^[1-9][0-9]?$ ]] || die "peer-onednn3.sh: --rounds expects 1..99, got $(printf '%q' "$rounds")"
mkdir -p "$out" 2>/dev/null && [ -w "$out" ] || die "peer-onednn3.sh: cannot write to $(printf '%q' "$out")"

venv="$build/onednn3-venv"
wheels=(onednn==2026.1.0 onednn-devel==2026.1.0 tbb-devel==2023.2.0)
if [ ! -e "$venv/lib/libdnnl.so.3" ] || [ ! -e "$venv/include/oneapi/dnnl/dnnl.hpp" ] ||
   [ ! -e "$venv/include/oneapi/tbb/global_control.h" ]; then
  echo "installing ${wheels[*]} into $venv (PyPI, about 2 GiB)" >&2
  mkdir -p "$build" && python3 -m venv "$venv" >&2 || die "peer-onednn3.sh: python3 -m venv $venv failed"
  "$venv/bin/pip" install --quiet "${wheels[@]}" >&2 || die "peer-onednn3.sh: pip install ${wheels[*]} failed"
fi
cmake -S "$src" -B "$build" -DCONVLAB_ONEDNN3_ROOT="$venv" > "$out/cmake.log" 2>&1 ||
  die "peer-onednn3.sh: cmake failed (see $out/cmake.log)"
cmake --build "$build" -j2 --target convlab convlab_onednn3 >> "$out/cmake.log" 2>&1 ||
  die "peer-onednn3.sh: the build failed (see $out/cmake.log)"
tool="$build/convlab_onednn3" convlab="$build/convlab"
dnnl_of() { ldd "$1" | awk '/libdnnl\.so/ {print $3}'; }
[ "$(dnnl_of "$tool" | wc -l)" = 1 ] && [[ $(dnnl_of "$tool") == "$venv"/* ]] ||
  die "peer-onednn3.sh: convlab_onednn3 must load exactly the wheel's libdnnl; ldd shows: $(dnnl_of "$tool" | tr '\n' ' ')"
[ "$(dnnl_of "$convlab" | wc -l)" = 1 ] && [[ $(dnnl_of "$convlab") != "$venv"/* ]] ||
  die "peer-onednn3.sh: convlab must load exactly Debian's libdnnl; ldd shows: $(dnnl_of "$convlab" | tr '\n' ' ')"

rc=0
run_convlab() {
  "$convlab" layers "${problems[@]}" --threads "$threads" --max-seconds "$max_seconds" --json "$out/convlab-r$1.json" \
    > "$out/convlab-r$1.txt" 2>&1
  local s=$?
  [ $s = 0 ] || { echo "convlab layers round $1 exited $s (see $out/convlab-r$1.txt)" >&2; [ $s = 1 ] || exit 2; rc=1; }
}
run_tool() {
  "$tool" "${problems[@]}" --threads "$threads" --max-seconds "$max_seconds" --json "$out/onednn3-r$1.json" \
    > "$out/onednn3-r$1.txt" 2>&1
  local s=$?
  [ $s = 0 ] || { echo "convlab_onednn3 round $1 exited $s (see $out/onednn3-r$1.txt)" >&2; [ $s = 1 ] || exit 2; rc=1; }
}
cargs=() oargs=()
for ((r = 1; r <= rounds; ++r)); do
  echo "round $r of $rounds" >&2
  if ((r % 2)); then run_convlab $r; run_tool $r; else run_tool $r; run_convlab $r; fi
  cargs+=("$out/convlab-r$r.json") oargs+=("$out/onednn3-r$r.json")
done

model=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
machine=("cpu: $model, $(nproc) CPUs online, $threads threads"
         "$(python3 - "$out/convlab-r1.json" "$out/onednn3-r1.json" <<'EOF'
import json, sys
c, o = (json.load(open(p)) for p in sys.argv[1:3])
peak = ", ".join("%s %.0f GFLOP/s at %d threads" % (p.get("isa"), p["gflops"], p["threads"]) for p in c.get("peak", []))
print("ISA: convlab %s (FMA peak %s); oneDNN 2.6 Debian; oneDNN %s dispatches to %s"
      % (c.get("fingerprint"), peak, o.get("onednn_version"), o.get("onednn_isa")))
EOF
)"
         "$(python3 - "${cargs[@]}" <<'EOF'
import json, sys
parts = []
for i, p in enumerate(sys.argv[1:], 1):
    l = json.load(open(p)).get("load") or {}
    parts.append("round %d: others' CPU share %.2f, loadavg %s, %s" % (
        i, l.get("others_cpu_share", float("nan")), l.get("loadavg1"),
        "disturbed: " + l.get("why", "") if l.get("disturbed") else "undisturbed"))
print("load during convlab layers: " + "; ".join(parts))
EOF
)")
margs=()
for m in "${machine[@]}"; do margs+=(--machine "$m"); done
python3 "$src/scripts/peer_table.py" --convlab "${cargs[@]}" --onednn3 "${oargs[@]}" "${margs[@]}" \
  --title "convlab vs oneDNN 2.6 (Debian) vs oneDNN 3.x (PyPI)" --command "$cmdline" \
  --md "$out/peer.md" --json "$out/peer.json" --csv "$out/peer.csv" || exit 2
cat "$out/peer.md"
exit $rc
