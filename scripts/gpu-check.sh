#!/usr/bin/env bash
# The GPU half's verification on a machine with an NVIDIA GPU, in stages that
# each fit in well under 10 minutes and can run alone:
#
#   build     unpack gpu-carry/bundle.tar.xz (made by scripts/gpu-prepare.sh on a
#             normal machine) into build-gpu/, or build from source (preset gpu)
#             when there is no bundle; check every library resolves; `convlab algos`
#   tests     the GPU tests through CTest (every test whose name says cuda/cudnn/
#             gpu, the registry sweep of cuda.* and cudnn.*); FAILS if any of them
#             failed or skipped for want of a device
#   sanitize  compute-sanitizer memcheck and racecheck over the GPU unit tests
#   check     `convlab layers alexnet --device cuda`: every cuda.* / cudnn.*
#             algorithm on every AlexNet layer and direction in one process, each
#             checked against the fp64 reference; FAILS on any failed/inaccurate row
#   tune      `convlab tune alexnet --device cuda` (cuDNN Find and Get_v7 beside
#             convlab's find and get), then again with --tf32
#   train     AlexNet training on the GPU under the default policies, and the
#             report's GPU half on the tiny net
#   dist      data-parallel training over NCCL on every GPU the machine
#             has, one rank per GPU under mpirun: `convlab train alexnet --device
#             cuda --ranks 1,N`; with one GPU the NCCL path runs on one rank in the
#             tests stage (NcclCuda.*) and this stage says so; FAILS when N >= 2
#             GPUs and the run fails, or when there is no mpirun to start it
#   bench     `bench_conv --device=cuda`: every cuda.* / cudnn.* algorithm on every
#             AlexNet layer and direction, CUDA-event times (the CPU benchmarks are
#             not run here); FAILS without a CUDA device
#
#   scripts/gpu-check.sh build tests sanitize   # one device command
#   scripts/gpu-check.sh build check tune       # another (the build stage only unpacks)
#   scripts/gpu-check.sh                        # every stage in turn (> 10 minutes)
#
# The build stage must run first in every fresh machine. Results land in
# results/gpu/<stage>/ with one line per stage in results/gpu/summary.txt; when
# $OUT is set (the device tool), they are also packed into
# $OUT/gpu-check-<stages>.tar.gz with summary.txt beside it.
# Exit status: non-zero when any stage failed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${OUT_DIR:-results/gpu}
mkdir -p "$out" && out=$(cd "$out" && pwd)
summary="$out/summary.txt"
jobs=$(nproc 2>/dev/null || echo 2)
status=0
note() { echo "$*" | tee -a "$summary"; }
stage_fail() { status=1; note "$1: FAILED — $2"; }
stage_ok() { note "$1: ok — $2"; }
bin=$root/build-gpu

all_stages=(build tests sanitize check tune train dist bench)
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=("${all_stages[@]}")
for s in "${stages[@]}"; do
  [[ " ${all_stages[*]} " == *" $s "* ]] || { echo "gpu-check: unknown stage '$s' (stages: ${all_stages[*]})" >&2; exit 2; }
done

# ---- environment: carried libraries, then the machine's CUDA and cuDNN -------
# The bundle's binaries open libcudnn/libcublas/libcufft/libnccl on first use
# (by SONAME, through the loader's search: this LD_LIBRARY_PATH); on the GPU
# machine they may be in the toolkit (/usr/local/cuda*) or only inside Python
# wheels (nvidia-cudnn-cu13 and friends, where PyTorch keeps them). A missing
# one fails only what calls it, with the loader's reason.
lib_dirs=("$bin/lib")
py=$(command -v python3 || true)
if [ -n "$py" ]; then
  while read -r d; do [ -d "$d" ] && lib_dirs+=("$d"); done < <("$py" - <<'EOF' 2>/dev/null
import glob, os, site
roots = list(site.getsitepackages()) + [site.getusersitepackages()]
for r in roots:
    for d in sorted(glob.glob(os.path.join(r, "nvidia", "*", "lib")) + glob.glob(os.path.join(r, "nvidia", "cu*", "lib"))):
        print(d)
EOF
  )
fi
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do [ -d "$d" ] && lib_dirs+=("$d"); done
LD_LIBRARY_PATH=$(IFS=:; echo "${lib_dirs[*]}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
export PATH=/usr/local/cuda/bin:$PATH

# The bundle's CTest files name the absolute folders it was built in: rewrite
# them to this checkout's; the CLI tests find convlab through CONVLAB_BINARY_DIR.
relocate_bundle() {
  local manifest=gpu-carry/manifest.txt src bdir
  src=$(sed -n 's/^source_dir=//p' "$manifest")
  bdir=$(sed -n 's/^binary_dir=//p' "$manifest")
  [ -n "$src" ] && [ -n "$bdir" ] || return 1
  find "$bin" -name '*.cmake' -print0 | xargs -0 sed -i -e "s#$bdir#$bin#g" -e "s#$src/#$root/#g"
}
export CONVLAB_BINARY_DIR=$bin

pack_results() {
  [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ] || return 0
  local name; name=gpu-check-$(IFS=-; echo "${stages[*]}")
  tar -C "$out" -czf "$OUT/$name.tar.gz" . 2>/dev/null
  cp "$summary" "$OUT/summary.txt"
}

# ---- stages -----------------------------------------------------------------
stage_build() {
  local d=$out/build; mkdir -p "$d"
  note "gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $jobs CPUs ($(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1))"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi > "$d/nvidia-smi.txt" 2>&1
    note "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | head -1)"
  else
    note "gpu: nvidia-smi not found"
  fi
  note "nvcc: $(nvcc --version 2>/dev/null | tail -2 | head -1); glibc $(ldd --version 2>/dev/null | head -1 | grep -oE '[0-9.]+$')"
  if [ -f gpu-carry/bundle.tar.xz ]; then
    local want have
    want=$(sed -n 's/^needs_glibc=GLIBC_//p' gpu-carry/manifest.txt)
    have=$(ldd --version 2>/dev/null | head -1 | grep -oE '[0-9]+\.[0-9]+$')
    if [ -n "$want" ] && [ -n "$have" ] && [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -1)" != "$want" ]; then
      stage_fail build "the bundle needs glibc $want, this machine has $have: build here from source instead"; return
    fi
    rm -rf "$bin" && mkdir -p "$bin" && tar -C "$root" -xJf gpu-carry/bundle.tar.xz || { stage_fail build "could not unpack gpu-carry/bundle.tar.xz"; return; }
    relocate_bundle || { stage_fail build "gpu-carry/manifest.txt lacks the bundle's build paths"; return; }
    cp gpu-carry/manifest.txt "$d/"
    note "bundle: $(sed -n 's/^commit=//p' gpu-carry/manifest.txt), built $(sed -n 's/^built=//p' gpu-carry/manifest.txt)"
  else
    note "no gpu-carry/bundle.tar.xz: building from source (preset gpu)"
    if ! { cmake --preset gpu > "$d/configure.log" 2>&1 && cmake --build --preset gpu -j "$jobs" > "$d/build.log" 2>&1; }; then
      stage_fail build "see $d/configure.log, $d/build.log"; return
    fi
  fi
  # Every library must resolve, and each to the folder we expect.
  local unresolved=""
  for e in "$bin"/convlab "$bin"/bench_conv "$bin"/tests/test_*; do
    [ -x "$e" ] || continue
    ldd "$e" > "$d/ldd.$(basename "$e").txt" 2>&1
    grep -q 'not found' "$d/ldd.$(basename "$e").txt" && unresolved+=" $(basename "$e"):$(grep 'not found' "$d/ldd.$(basename "$e").txt" | awk '{print $1}' | tr '\n' ',')"
  done
  [ -z "$unresolved" ] || { stage_fail build "unresolved libraries:$unresolved (LD_LIBRARY_PATH=$LD_LIBRARY_PATH)"; return; }
  if [ -f gpu-carry/bundle.tar.xz ]; then
    # From the bundle, everything but glibc, libstdc++/libgcc_s and CUDA/cuDNN
    # must come from build-gpu/lib: that is what proves the bundle complete on a
    # machine that happens to have the Debian packages too (the offline rehearsal).
    local outside
    outside=$(cat "$d"/ldd.*.txt | awk '$2=="=>" {print $1, $3}' | sort -u |
      grep -vE '^(linux-vdso|ld-linux|libc\.|libm\.|libpthread|libdl\.|librt\.|libstdc\+\+|libgcc_s|libcuda\.|libcudart|libcublas|libcufft|libcurand|libcudnn|libnccl|libnvrtc|libnvJitLink)' |
      grep -v " $bin/lib/" | awk '{print $1 "=" $2}' | tr '\n' ' ')
    [ -z "$outside" ] || { stage_fail build "libraries resolved outside the bundle: $outside"; return; }
  fi
  # cuDNN, cuBLAS, cuFFT (and NCCL) are not linked but opened on first use
  # (core/cuda_libraries.hpp): the files `convlab algos` opened, as the loader reports them.
  if ! LD_DEBUG=files "$bin/convlab" algos > "$d/algos.txt" 2> "$d/algos.ld_debug.txt"; then
    stage_fail build "convlab algos: $(grep -v '^ *[0-9]*:' "$d/algos.ld_debug.txt" | tail -1)"; return
  fi
  sed -nE 's#.*calling init: (.*/(libcudnn|libcublas|libcufft|libnccl)[^/]*)$#  opened \1#p' "$d/algos.ld_debug.txt" |
    sort -u | tee -a "$summary"
  "$bin/convlab" algos --json > "$d/algos.json" 2>&1
  local listed avail
  listed=$(grep -cE '^(cuda|cudnn)\.' "$d/algos.txt")
  avail=$(grep -E '^(cuda|cudnn)\.' "$d/algos.txt" | grep -cE ' yes$')
  stage_ok build "$listed cuda/cudnn algorithms listed, $avail available here$([ "$avail" = 0 ] && echo ": $(grep -m1 -E '^(cuda|cudnn)\.' "$d/algos.txt" | sed -E 's/^[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +//')")"
}

# The tests that exercise the GPU: by name (CTest runs each discovered test on
# its own). The emulated builds (test_kernels_cuda, test_algorithms_cuda) run on
# the CPU here too; their sanitizer variants (asan./tsan.) are left to CI. The
# cuda.* algorithms run on the device in test_algorithms' registry sweep
# (RegistrySweep.MatchesReference/cuda_*, cuda.winograd_f6x3 included).
gpu_test_regex='[Cc]uda|[Cc]udnn|[Gg]pu|Vendor'
stage_tests() {
  local d=$out/tests; mkdir -p "$d"
  [ -f "$bin/CTestTestfile.cmake" ] || { stage_fail tests "no build-gpu/ (run the build stage first)"; return; }
  ctest --test-dir "$bin" -R "$gpu_test_regex" -E '^(asan|tsan)\.' -j "$jobs" --timeout 600 \
    --output-junit "$d/ctest.xml" > "$d/ctest.log" 2>&1
  local rc=$?
  python3 - "$d/ctest.xml" > "$d/skips.txt" <<'EOF'
import re, sys, xml.etree.ElementTree as ET
# A GPU test that skipped for want of a device did not run: that is a failure
# here. Tests skipped because a device IS present (the no-device paths) are fine.
no_device = re.compile(r"no CUDA device|needs a CUDA device|CUDA driver|no device", re.I)
ran = failed = skipped_ok = 0
bad = []
for tc in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    st = tc.get("status")
    name = tc.get("name").split("  #")[0]
    outtxt = (tc.findtext("system-out") or "")
    if st == "run": ran += 1
    elif st == "fail": failed += 1; print("FAILED", name)
    elif st == "notrun":
        m = re.search(r"Skipped\n(.*)", outtxt)
        why = m.group(1).strip() if m else "(no reason printed)"
        if no_device.search(why): bad.append(name); print("SKIPPED-NO-DEVICE", name, "::", why)
        else: skipped_ok += 1; print("skipped", name, "::", why)
print(f"summary: {ran} passed, {failed} failed, {len(bad)} skipped for want of a device, {skipped_ok} skipped for other reasons")
sys.exit(1 if failed or bad else 0)
EOF
  local prc=$?
  local line; line=$(tail -1 "$d/skips.txt")
  if [ $rc -ne 0 ] || [ $prc -ne 0 ]; then stage_fail tests "$line; see $d/ctest.log and $d/skips.txt"
  else stage_ok tests "$line"; fi
}

stage_sanitize() {
  local d=$out/sanitize; mkdir -p "$d"
  command -v compute-sanitizer >/dev/null || { stage_fail sanitize "compute-sanitizer not found"; return; }
  # The hand-written kernels on the device: the registry sweep of cuda.* and
  # the GPU layer kernels. Each tool's run is capped so the stage fits.
  local any=0 t f
  for tool in memcheck racecheck; do
    for t in test_algorithms test_train; do
      f='*RegistrySweep.MatchesReference/cuda_*'
      [ $t = test_train ] && f='LayersCuda.*:NetCuda.*'
      # The first CONVLAB_SWEEP_LIMIT problems of each sweep: racecheck runs
      # shared-memory kernels hundreds of times slower.
      CONVLAB_SWEEP_LIMIT=${SANITIZE_SWEEP_LIMIT:-8} timeout "${SANITIZE_CAP_S:-120}" \
        compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 \
        "$bin/tests/$t" --gtest_filter="$f" > "$d/$tool.$t.txt" 2>&1
      local rc=$?
      local errs; errs=$(grep -oE '(ERROR|RACECHECK) SUMMARY: [0-9]+ (error|hazard)' "$d/$tool.$t.txt" | tail -1)
      local done_tests; done_tests=$(grep -cE '^\[ +(OK|FAILED) +\] [^ ]+ \(' "$d/$tool.$t.txt")
      if [ $rc -eq 99 ] || { [ -n "$errs" ] && ! [[ $errs =~ SUMMARY:\ 0\  ]]; }; then
        any=1; note "  $tool $t: ${errs:-errors}; see $d/$tool.$t.txt"
      elif [ $rc -eq 124 ]; then note "  $tool $t: stopped at ${SANITIZE_CAP_S:-120} s after $done_tests tests, no error reported so far"
      elif [ $rc -ne 0 ]; then note "  $tool $t: $errs, but tests failed under it (rc $rc; the tests stage has them); see $d/$tool.$t.txt"
      else note "  $tool $t: ok, $done_tests tests ($errs)"; fi
    done
  done
  if [ $any -ne 0 ]; then stage_fail sanitize "compute-sanitizer found errors"; else stage_ok sanitize "memcheck + racecheck clean"; fi
}

stage_check() {
  local d=$out/check; mkdir -p "$d"
  "$bin/convlab" layers alexnet --device cuda --batch 32 --json "$d/layers_alexnet_cuda.json" \
    > "$d/layers_alexnet_cuda.txt" 2>&1
  local rc=$?
  [ -f "$d/layers_alexnet_cuda.json" ] || { stage_fail check "convlab layers exit $rc, no JSON; see $d/layers_alexnet_cuda.txt"; return; }
  python3 - "$d/layers_alexnet_cuda.json" > "$d/check.txt" <<'EOF'
import json, sys, collections
rows = json.load(open(sys.argv[1]))["rows"]
by = collections.Counter(r["status"] for r in rows)
# unsupported (this problem) and unavailable (on this GPU) come with their reason
bad = [r for r in rows if r["status"] not in ("ok", "unsupported", "unavailable")]
for r in bad:
    print("BAD", r["layer"], r["direction"], r["algorithm"], r["status"], r.get("note", ""), r.get("max_rel_error"))
cases = collections.defaultdict(int)
for r in rows:
    cases[(r["layer"], r["direction"])] += r["status"] == "ok"
empty = [k for k, v in cases.items() if v == 0]
for k in empty: print("NO-ALGORITHM-RAN", *k)
algos = sorted({r["algorithm"] for r in rows if r["status"] == "ok"})
print(f"summary: {len(rows)} rows ({dict(by)}); {len(cases)} layer-directions; {len(algos)} algorithms ran: {' '.join(algos)}")
sys.exit(1 if bad or empty else 0)
EOF
  local prc=$?
  if [ $rc -ne 0 ] || [ $prc -ne 0 ]; then stage_fail check "exit $rc; $(tail -1 "$d/check.txt"); see $d/check.txt"
  else stage_ok check "$(tail -1 "$d/check.txt")"; fi
}

stage_tune() {
  local d=$out/tune; mkdir -p "$d"
  local cache=$d/tune_cache.jsonl; rm -f "$cache"
  if "$bin/convlab" tune alexnet --device cuda --batch 32 --list --cache "$cache" > "$d/tune_alexnet_cuda.txt" 2>&1 &&
     "$bin/convlab" tune alexnet --device cuda --batch 32 --json --quiet --cache "$cache" \
       > "$d/tune_alexnet_cuda.json" 2> "$d/tune_alexnet_cuda.err"; then
    stage_ok tune "alexnet: $(grep -E '^vendor cudnn' "$d/tune_alexnet_cuda.txt" | tr '\n' ' ' | tr -s ' ')"
  else
    stage_fail tune "see $d/tune_alexnet_cuda.txt / .err"
  fi
  "$bin/convlab" tune alexnet --device cuda --batch 32 --tf32 --json --quiet > "$d/tune_alexnet_cuda_tf32.json" \
    2> "$d/tune_alexnet_cuda_tf32.err" || stage_fail tune "--tf32: see $d/tune_alexnet_cuda_tf32.err"
}

stage_train() {
  local d=$out/train; mkdir -p "$d"
  if "$bin/convlab" train alexnet --device cuda --batch 32 --iters 5 --warmup 2 --json "$d/train_alexnet_cuda.json" \
       > "$d/train_alexnet_cuda.md" 2> "$d/train_alexnet_cuda.log"; then
    stage_ok train "alexnet --device cuda: $(grep -cE '^\| ' "$d/train_alexnet_cuda.md") table rows; see $d/train_alexnet_cuda.md"
  else
    stage_fail train "alexnet --device cuda: see $d/train_alexnet_cuda.log"
  fi
  "$bin/convlab" report --net tiny --batch 8 --iters 3 --gpu on --out "$d/report_tiny" > "$d/report_tiny.txt" 2>&1 \
    || stage_fail train "report --gpu on: see $d/report_tiny.txt"
}

stage_dist() {
  local d=$out/dist; mkdir -p "$d"
  local ngpu
  ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  if [ "${ngpu:-0}" -lt 2 ]; then
    stage_ok dist "${ngpu:-0} GPU: NCCL ran on one rank in the tests stage (NcclCuda.*); N-GPU data-parallel needs >= 2 GPUs"
    return
  fi
  local mpirun
  mpirun=$(command -v mpirun || command -v mpiexec || true)
  [ -n "$mpirun" ] || { stage_fail dist "$ngpu GPUs but no mpirun here (Open MPI's runtime is not in the bundle)"; return; }
  if OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 540 "$mpirun" -np "$ngpu" --bind-to none \
       -x LD_LIBRARY_PATH "$bin/convlab" train alexnet --device cuda --batch $((32 * ngpu)) --iters 5 --warmup 2 \
       --policy 'default;get;find' --ranks "1,$ngpu" --json "$d/train_alexnet_cuda_dist.json" \
       > "$d/train_alexnet_cuda_dist.md" 2> "$d/train_alexnet_cuda_dist.log"; then
    stage_ok dist "$ngpu GPUs over NCCL: see $d/train_alexnet_cuda_dist.md"
  else
    stage_fail dist "mpirun -np $ngpu convlab train --device cuda: see $d/train_alexnet_cuda_dist.log"
  fi
}

stage_bench() {
  local d=$out/bench; mkdir -p "$d"
  [ -x "$bin/bench_conv" ] || { stage_fail bench "no build-gpu/bench_conv"; return; }
  if timeout "${BENCH_CAP_S:-540}" "$bin/bench_conv" --device=cuda --reps=1 --benchmark_filter="${BENCH_FILTER:-.}" \
       --benchmark_min_time="${BENCH_MIN_TIME:-0.05}" --benchmark_out="$d/bench_conv_cuda.json" \
       --benchmark_out_format=json > "$d/bench_conv_cuda.txt" 2>&1; then
    stage_ok bench "$(grep -cE '^conv/.* ms ' "$d/bench_conv_cuda.txt") benchmark lines; see $d/bench_conv_cuda.txt"
  else
    stage_fail bench "bench_conv --device=cuda exit $?; see $d/bench_conv_cuda.txt"
  fi
}

for s in "${stages[@]}"; do
  t0=$(date +%s)
  "stage_$s"
  echo "  ($s: $(( $(date +%s) - t0 )) s)" | tee -a "$summary"
done
note "results in $out/ (status $status)"
pack_results
exit $status
