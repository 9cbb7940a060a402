#!/usr/bin/env bash
# One command for the first session on a machine with an NVIDIA GPU: builds
# convlab with CUDA, runs the whole test suite (the registry sweep runs every
# cuda.* algorithm for real once a device is present; the emulated kernel tests
# run too), the CLI demo, every cuda.* and cudnn.* algorithm on AlexNet's layers
# in every direction with --check, `convlab layers alexnet --device cuda`,
# `convlab tune alexnet --device cuda` (cuDNN's Find and Get_v7 beside convlab's
# find and get; also with --tf32), AlexNet training on the GPU under every
# policy, the report's GPU half, and the benchmarks. Everything lands in
# results/gpu/ (or $OUT_DIR).
#
#   scripts/gpu-check.sh            # full run
#   BENCH_FILTER=cuda scripts/gpu-check.sh   # only benchmarks whose name matches
#
# Exit status: non-zero if the build, the test suite or any --check failed
# (the remaining steps still run; see results/gpu/summary.txt).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT_DIR:-results/gpu}
mkdir -p "$out"
jobs=$(nproc 2>/dev/null || echo 2)
status=0
summary="$out/summary.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

note "convlab gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /' | tee -a "$summary"
else
  note "WARNING: nvidia-smi not found; the CUDA algorithms will report 'no CUDA device'"
fi

# ---- build ------------------------------------------------------------------
if cmake --preset default > "$out/configure.log" 2>&1 && cmake --build --preset default -j "$jobs" > "$out/build.log" 2>&1; then
  note "build: ok"
else
  note "build: FAILED (see $out/build.log)"
  exit 1
fi
./build/convlab algos | tee "$out/algos.txt"

# ---- tests ------------------------------------------------------------------
if ctest --test-dir build -j "$jobs" --output-on-failure --output-junit "$PWD/$out/ctest.xml" > "$out/ctest.log" 2>&1; then
  note "ctest: ok ($(grep -Eo '[0-9]+ tests passed|[0-9]+% tests passed.*' "$out/ctest.log" | tail -1))"
else
  status=1
  note "ctest: FAILED ($(grep -E 'tests passed' "$out/ctest.log" | tail -1)); see $out/ctest.log"
fi

# ---- demo and per-layer checks -----------------------------------------------
./build/convlab demo > "$out/demo.txt" 2>&1 || { status=1; note "demo: FAILED"; }
if ./build/convlab layers --help > /dev/null 2>&1; then
  ./build/convlab layers alexnet --device cuda > "$out/layers_alexnet_cuda.txt" 2>&1 \
    || { status=1; note "convlab layers alexnet --device cuda: FAILED"; }
else
  note "convlab layers: not in this build (skipped)"
fi
# ---- cuDNN's own Find / Get_v7 beside convlab's find and get -------------------
# The second run reads find's results back from the cache (cuDNN's Find still
# runs: it is the vendor's own measurement); the TF32 run adds the *_tf32 variants.
tune_cache="$out/tune_cache.jsonl"
rm -f "$tune_cache"
if ./build/convlab tune alexnet --device cuda --batch 32 --list --quiet --cache "$tune_cache" \
     > "$out/tune_alexnet_cuda.txt" 2>&1 &&
   ./build/convlab tune alexnet --device cuda --batch 32 --json --quiet --cache "$tune_cache" \
     > "$out/tune_alexnet_cuda.json" 2> "$out/tune_alexnet_cuda.err"; then
  note "convlab tune alexnet --device cuda: ok ($(grep -c '^    vendor cudnnFind' "$out/tune_alexnet_cuda.txt") cudnnFind picks; $(grep '^vendor cudnnFind' "$out/tune_alexnet_cuda.txt" | sed 's/.*: //'))"
else
  status=1
  note "convlab tune alexnet --device cuda: FAILED (see $out/tune_alexnet_cuda.txt / .err)"
fi
./build/convlab tune alexnet --device cuda --batch 32 --tf32 --json --quiet > "$out/tune_alexnet_cuda_tf32.json" \
  2> "$out/tune_alexnet_cuda_tf32.err" || { status=1; note "convlab tune alexnet --device cuda --tf32: FAILED"; }

algos=$(./build/convlab algos --json | grep -oE '"name": "(cuda|cudnn)\.[a-z0-9_]*"' | sed -E 's/.*"((cuda|cudnn)\.[a-z0-9_]*)"/\1/')
checks="$out/cuda_checks.txt"
: > "$checks"
for algo in $algos; do
  for layer in alexnet.conv1 alexnet.conv2 alexnet.conv3 alexnet.conv4 alexnet.conv5; do
    for dir in fwd bwd-data bwd-filter; do
      line=$(./build/convlab conv "$layer" --algo "$algo" --dir "$dir" --check 2>&1)
      rc=$?
      line=$(echo "$line" | tr '\n' ' ')
      if echo "$line" | grep -qiE "not support|unsupported|does not support"; then rc=0; fi
      echo "$algo $layer $dir rc=$rc :: $line" >> "$checks"
    done
  done
done
if grep -q "rc=[1-9]" "$checks"; then status=1; note "cuda --check: FAILURES (see $checks)"; else note "cuda --check: ok"; fi

# ---- the GPU training path ------------------------------------------------------
# AlexNet on the GPU under every default policy (hand-written layer kernels, cuBLAS fc,
# cuda.* / cudnn.* convolutions), then the report's GPU half on the tiny net.
if ./build/convlab train alexnet --device cuda --batch 32 --iters 5 --warmup 2 --json "$out/train_alexnet_cuda.json" \
     > "$out/train_alexnet_cuda.md" 2> "$out/train_alexnet_cuda.log"; then
  note "train alexnet --device cuda: ok ($(grep -m1 -E '^\| find \|' "$out/train_alexnet_cuda.md" | tr -s ' '))"
else
  status=1; note "train alexnet --device cuda: FAILED (see $out/train_alexnet_cuda.log)"
fi
./build/convlab report --net tiny --batch 8 --iters 3 --gpu on --out "$out/report_tiny" > "$out/report_tiny.txt" 2>&1 \
  || { status=1; note "report --gpu on: FAILED (see $out/report_tiny.txt)"; }

# ---- benchmarks ---------------------------------------------------------------
for b in build/bench_*; do
  [ -x "$b" ] || continue
  name=$(basename "$b")
  "$b" --benchmark_filter="${BENCH_FILTER:-.}" --benchmark_out="$out/$name.json" --benchmark_out_format=json \
    > "$out/$name.txt" 2>&1 || { status=1; note "$name: FAILED"; }
done
note "results in $out/ (status $status)"
exit $status
