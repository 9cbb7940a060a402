#!/usr/bin/env bash
# `convlab train --ranks` end to end under mpirun: 2 ranks on this machine, the
# tiny network, rank counts 1 and 2 in one world; then the refusals.
# Usage: train_cli_check.sh path/to/convlab   (CONVLAB_MPIEXEC names mpirun)
set -euo pipefail
# Open MPI refuses to start as root without these two (CI runs as root); for
# anyone else they change nothing. Set here so the script runs as it is.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
convlab=$1
mpirun=${CONVLAB_MPIEXEC:-mpirun}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$mpirun" -np 2 --oversubscribe --bind-to none "$convlab" train tiny --batch 32 --iters 2 --warmup 1 \
  --policy 'default;fixed:cpu.direct' --ranks 1,2 --bucket-mb 0.01 --json "$tmp/t.json" --md "$tmp/t.md" \
  >"$tmp/out.md" 2>"$tmp/err.txt" || { cat "$tmp/err.txt" >&2; fail "mpirun convlab train --ranks 1,2 failed"; }
grep -q "Iteration time per policy and rank count" "$tmp/out.md" || fail "no scaling table on stdout"
grep -q "an estimate, not a measurement" "$tmp/out.md" || fail "the on-paper estimate is not labelled"
cmp -s "$tmp/out.md" "$tmp/t.md" || fail "--md differs from stdout"
[ "$(grep -c '^# convlab train tiny: data-parallel scaling' "$tmp/out.md")" = 1 ] || fail "the report was printed by more than one rank"
python3 - "$tmp/t.json" <<'PY' || fail "the JSON's scaling object is wrong"
import json, sys
j = json.load(open(sys.argv[1]))
s = j["scaling"]
assert s["ranks"] == [1, 2], s["ranks"]
assert j["ranks"] == 2 and j["dist"]["grad_bytes"] > 0
m = s["model"][0]
assert m["ranks"] == 2 and m["model_ms"] > 0 and m["measured_ms"] > 0, m
for p in s["policies"]:
    runs = {r["ranks"]: r for r in p["runs"]}
    assert set(runs) == {1, 2}, p
    a, b = runs[1]["final_loss"], runs[2]["final_loss"]
    assert abs(a - b) <= 1e-4 * abs(a), (p["policy"], a, b)
    assert runs[2]["comm_ms"] > 0 and runs[2]["efficiency"] > 0, runs[2]
assert s["paper_estimate"]["estimate"] is True
PY

# Refusals: one line, exit 2, before any work.
expect_refusal() {
  local want=$1; shift
  set +e
  "$@" >"$tmp/o" 2>"$tmp/e"
  local rc=$?
  set -e
  grep -q "$want" "$tmp/e" || { cat "$tmp/e" >&2; fail "no '$want' in: $*"; }
  if [ "$1" = "$mpirun" ]; then
    # mpirun adds its own banner about the exit codes; ours is one line, from rank 0 alone.
    [ $rc != 0 ] || fail "exit 0: $*"
    [ "$(grep -c '^error: ' "$tmp/e")" = 1 ] || { cat "$tmp/e" >&2; fail "not exactly one error line: $*"; }
  else
    [ $rc = 2 ] || { cat "$tmp/e" >&2; fail "exit $rc (want 2): $*"; }
    [ "$(wc -l <"$tmp/e")" = 1 ] || { cat "$tmp/e" >&2; fail "more than one line: $*"; }
  fi
}
expect_refusal "not started by mpirun" "$convlab" train tiny --ranks 2
expect_refusal "needs 3 MPI processes" "$mpirun" -np 2 --oversubscribe --bind-to none "$convlab" train tiny --ranks 1,3
expect_refusal "does not split evenly" "$mpirun" -np 2 --oversubscribe --bind-to none "$convlab" train tiny --batch 15 --ranks 2
expect_refusal "ascending" "$convlab" train tiny --ranks 2,1
expect_refusal "needs --ranks" "$convlab" train tiny --overlap on
expect_refusal "auto, on or off" "$convlab" train tiny --ranks 1 --overlap maybe
expect_refusal "NODESxGPUS" "$convlab" train tiny --ranks 1 --estimate 2by4
echo "train_cli_check: ok"
