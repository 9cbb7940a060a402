#!/usr/bin/env bash
# usage: gpu_check_rehearsal_test.sh SRC BUILD
# The offline rehearsal of the GPU check: BUILD (this CUDA build) is
# packed by scripts/gpu-prepare.sh into a carried folder, a copy of the source
# tree gets that folder only, and scripts/gpu-check.sh's build and tests stages
# run there with no network (unshare -n, where allowed). Without a GPU the build
# stage must pass (every library resolved, from the bundle where it is not
# glibc / libstdc++ / CUDA) and the tests stage must FAIL, naming the GPU tests
# that skipped for want of a device: a GPU check never reports success when its
# GPU tests did not run. With a GPU both stages must pass.
set -uo pipefail
src=$1 build=$2
fail() { echo "FAIL: $*"; [ -f "${log:-}" ] && cat "$log"; exit 1; }
grep -q '^CONVLAB_CUDA:BOOL=ON' "$build/CMakeCache.txt" || { echo "built without CUDA: nothing to carry"; exit 77; }
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT

# The source tree as it travels: tracked files only (build folders stay behind).
mkdir -p "$work/repo"
(cd "$src" && git ls-files -z | tar --null -T - -cf -) | tar -C "$work/repo" -xf - || fail "cannot copy the tree"
NO_BUILD=1 GPU_BUILD_DIR=$build CARRY_DIR=$work/repo/gpu-carry XZ_LEVEL=0 CARRY_LIMIT_MB=1024 \
  bash "$src/scripts/gpu-prepare.sh" > "$work/prepare.log" 2>&1 || { log=$work/prepare.log; fail "gpu-prepare.sh failed"; }
grep -q '^needs_glibc=GLIBC_' "$work/repo/gpu-carry/manifest.txt" || fail "manifest lacks needs_glibc"

cd "$work/repo" || exit 1
offline=()
if unshare -n true 2>/dev/null; then offline=(unshare -n); else echo "note: unshare -n not permitted here; running with the network"; fi
log=$work/check.log
OUT_DIR=$work/results "${offline[@]}" bash scripts/gpu-check.sh build tests > "$log" 2>&1
rc=$?
grep -q '^build: ok' "$log" || fail "build stage did not pass"
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  [ $rc = 0 ] && grep -q '^tests: ok' "$log" || fail "with a GPU the tests stage must pass (exit $rc)"
else
  [ $rc = 1 ] || fail "without a GPU gpu-check must exit 1, got $rc"
  grep -qE '^tests: FAILED — summary: [0-9]+ passed, 0 failed, [1-9][0-9]* skipped for want of a device' "$log" || {
    grep -E '\*\*\*|Failed' "$work/results/tests/ctest.log" 2>/dev/null | head -20
    fail "the tests stage must fail on GPU tests skipped for want of a device"
  }
  grep -q '^SKIPPED-NO-DEVICE .*RegistrySweep.MatchesReference/cuda_' "$work/results/tests/skips.txt" \
    || fail "skips.txt must name the cuda.* sweeps that did not run"
fi
# A stage that cannot test what it exists for says "not run", never "ok", and
# fails nothing; every stage's results reach $OUT as it finishes.
mkdir -p "$work/devout"
OUT=$work/devout OUT_DIR=$work/results2 GPU_CHECK_BUDGET_S=60 bash scripts/gpu-check.sh dist ncu bridge > "$work/notrun.log" 2>&1
rc=$?
log=$work/notrun.log
if ! nvidia-smi -L >/dev/null 2>&1; then
  [ $rc = 0 ] || fail "stages that were not run must not fail the check (exit $rc)"
  grep -q '^dist: not run — 0 GPU here' "$log" || fail "dist on a machine without a second GPU must say 'not run'"
  grep -q '^bridge: not run — ' "$log" || fail "the bridge stage without a GPU must say 'not run'"
fi
grep -qE '^ncu: (not run|ok|partial|FAILED) — ' "$log" || fail "the ncu stage must report"
[ -s "$work/devout/gpu-check.tar.gz" ] && [ -s "$work/devout/summary.txt" ] || fail "results must reach \$OUT"
# (listed to a file first: grep -q leaving early would kill tar with SIGPIPE,
# and under pipefail that reads as a missing summary.)
tar -tzf "$work/devout/gpu-check.tar.gz" > "$work/devout.list" || fail "\$OUT/gpu-check.tar.gz cannot be listed"
grep -q 'summary.txt' "$work/devout.list" || fail "\$OUT/gpu-check.tar.gz must hold the summary"
# Bad stage names and budgets are one line and exit 2, before any work.
GPU_CHECK_BUDGET_S=soon bash scripts/gpu-check.sh dist > "$work/bad.out" 2> "$work/bad.err"
[ $? = 2 ] && [ "$(wc -l < "$work/bad.err")" = 1 ] || { log=$work/bad.err; fail "a bad budget must be one line and exit 2"; }
bash scripts/gpu-check.sh nosuchstage > "$work/bad.out" 2> "$work/bad.err"
[ $? = 2 ] && [ "$(wc -l < "$work/bad.err")" = 1 ] || { log=$work/bad.err; fail "an unknown stage must be one line and exit 2"; }
echo "ok: $(grep -E '^(build|tests):' "$log" | tr '\n' ' ')"
