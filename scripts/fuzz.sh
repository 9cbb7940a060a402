#!/usr/bin/env bash
# Fuzzes convlab's input parsers with libFuzzer: problem strings and problem
# files / oneDNN verbose logs (problem_fuzz), .npy headers (npy_fuzz) and
# autotune cache lines (cache_line_fuzz). The invariants each one checks are in
# tests/fuzz/fuzz_checks.hpp.
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]     (default 600 s per target, all targets)
#
# Installs clang and its libFuzzer runtime (Debian: clang, libclang-rt-dev,
# libomp-dev) when missing, builds in build-fuzz/ (git-ignored) with
# -fsanitize=fuzzer,address,undefined, runs each target for SECONDS on a copy of
# its seed corpus (tests/fuzz/corpus/<name>, grown in build-fuzz/corpus/<name>),
# and prints executions per second and the corpus size. A finding (crash,
# sanitizer report, violated invariant) stops with exit 1 and leaves the input
# as build-fuzz/crash-*; reproduce with build-fuzz/tests/fuzz/<target> FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(problem cache_line npy)
case "$seconds" in ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, got '$seconds'" >&2; exit 2 ;; esac

# ---- the fuzzing toolchain (its own step: scripts/install-deps.sh does not need it) ----
packages=(clang libclang-rt-dev libomp-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "fuzz.sh: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "fuzz.sh: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    SUDO=sudo
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
bash scripts/install-deps.sh

# ---- build: the libraries instrumented for coverage + ASan + UBSan, the targets with libFuzzer ----
jobs=$(nproc 2>/dev/null || echo 2)
# -O1: the fuzzed parsers need no more, and the kernels (linked, never fuzzed) compile much faster.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DCONVLAB_CUDA=OFF \
  -DCONVLAB_TESTS=OFF -DCONVLAB_BENCH=OFF -DCONVLAB_FUZZ=ON \
  -DCONVLAB_SANITIZE=fuzzer-no-link,address,undefined \
  -DCMAKE_CXX_FLAGS="-O1 -fno-sanitize-recover=all" >/dev/null
names=()
for t in "${targets[@]}"; do names+=("${t}_fuzz"); done
cmake --build build-fuzz -j "$jobs" --target "${names[@]}"

# ---- run ----
status=0
summary=()
for t in "${targets[@]}"; do
  bin=build-fuzz/tests/fuzz/${t}_fuzz
  seeds=tests/fuzz/corpus/$t
  corpus=build-fuzz/corpus/$t
  mkdir -p "$corpus"
  log=build-fuzz/${t}_fuzz.log
  echo "fuzz.sh: $t for ${seconds}s (log $log)"
  # -rss_limit_mb: the readers bound what they read; a larger footprint is a finding.
  if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$bin" "$corpus" "$seeds" -max_total_time="$seconds" -max_len=8192 -rss_limit_mb=2048 \
      -timeout=10 -print_final_stats=1 -artifact_prefix=build-fuzz/ >"$log" 2>&1; then
    echo "fuzz.sh: $t FOUND A PROBLEM; the end of $log:" >&2
    tail -40 "$log" >&2
    status=1
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'exec/s: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
  size=$(find "$corpus" -type f | wc -l)
  summary+=("$(printf '%-11s %10s execs  %8s exec/s  corpus %s files' "$t" "${execs:-?}" "${rate:-?}" "$size")")
done
echo
printf '%s\n' "${summary[@]}"
exit $status
