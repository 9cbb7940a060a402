#!/usr/bin/env bash
# The GPU half's verification on a machine with an NVIDIA GPU, as one command
# that fits one device contact. Run with no stage names it runs every stage in
# the order below inside a budget (GPU_CHECK_BUDGET_S, default 420 s): each
# stage has its own cap, a stage that no longer fits says "not run" with the
# seconds left, and every stage's results reach $OUT the moment it finishes
# (gpu-check.tar.gz and summary.txt, replaced whole after each stage), so a
# command killed at its limit still returns what was done.
#
#   build     unpack gpu-carry/bundle.tar.xz (made by scripts/gpu-prepare.sh on a
#             normal machine) into build-gpu/, or build from source (preset gpu)
#             when there is no bundle; check every library resolves; `convlab algos`
#   tests     the GPU tests through CTest (every test whose name says cuda/cudnn/
#             gpu/nccl, the registry sweep of cuda.* and cudnn.*); FAILS if any
#             failed or skipped for want of a device; says whether NCCL ran
#   check     `convlab layers alexnet --device cuda --batch 32 --tf32`: every cuda.* /
#             cudnn.* algorithm on every AlexNet layer and direction in one process,
#             checked against the fp64 reference and timed; FAILS on any failed or
#             inaccurate row
#   tune      `convlab tune alexnet --device cuda` (cuDNN Find and Get_v7 beside
#             convlab's find and get)
#   train     AlexNet training on the GPU: default, get, find, find,own (no cuDNN), find-context and
#             a fixed policy per family (5 iterations), with find,own/find <= 1.3 as an expectation
#   ncu       Nsight Compute counters of every hand-written kernel of each cuda.*
#             algorithm on AlexNet conv3 (every direction) and conv1 backward-data:
#             global sectors per request, shared-memory bank conflicts per
#             wavefront, achieved occupancy, registers, active lanes per instruction
#             (NCU_RUNS="ALGO|LAYER|DIR ..." profiles those runs instead; LAYER conv3, conv1 or
#             a layer id such as resnet50.res2.1x1a, at batch 32)
#   sanitize  compute-sanitizer memcheck and racecheck over a sample of the cuda.*
#             registry sweep and the GPU layer tests
#   resnet    `convlab layers resnet50 --device cuda --batch 32 --tf32`: ResNet-50's
#             layers as the check stage does AlexNet's (0.1 s of timed work each)
#   bench     `bench_conv --device=cuda`: every cuda.* / cudnn.* algorithm on every
#             AlexNet layer and direction, CUDA-event times with an L2 flush
#   bridge    the Python package in PyTorch on the GPU: `python -m convlab.torch compare --device
#             cuda` on ResNet-18 (get, find and find,tf32 against PyTorch's cuDNN: its default
#             (TF32), fp32, cudnn.benchmark, channels-last); "not run" where PyTorch, the carried
#             package or a device is missing; then bench/python/bridge_cuda.py (the bridge's
#             submission cost per call and its layers against PyTorch's cuDNN in fp32 and TF32)
#   dist      data-parallel training over NCCL, one rank per GPU under mpirun;
#             "not run" with fewer than 2 GPUs or no mpirun (a one-rank all-reduce
#             changes nothing: the tests stage's NcclCuda.* is all one GPU proves)
#
#   scripts/gpu-check.sh                     # every stage, inside the budget
#   scripts/gpu-check.sh build tests check   # the named stages, in that order
#
# The build stage must run first in every fresh machine. Results land in
# results/gpu/<stage>/ (OUT_DIR) with one line per stage in summary.txt.
# Exit status: 1 when any stage failed, 2 on a bad stage name; a stage that was
# not run (budget, no second GPU) is said in the summary and fails nothing.
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
stage_not_run() { note "$1: not run — $2"; }
stage_partial() { note "$1: partial — $2"; }
bin=$root/build-gpu

all_stages=(build tests check tune train ncu sanitize resnet bench bridge dist)
# Each stage's cap in seconds: the most it may take of the budget.
declare -A cap=([build]=90 [tests]=150 [check]=120 [tune]=60 [train]=60 [bridge]=150 [ncu]=90 [sanitize]=60 [resnet]=90
                [bench]=60 [dist]=60)
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=("${all_stages[@]}")
for s in "${stages[@]}"; do
  [[ " ${all_stages[*]} " == *" $s "* ]] || { echo "gpu-check: unknown stage '$s' (stages: ${all_stages[*]})" >&2; exit 2; }
done
budget=${GPU_CHECK_BUDGET_S:-420}
[[ $budget =~ ^[0-9]+$ ]] && [ "$budget" -ge 30 ] || { echo "gpu-check: GPU_CHECK_BUDGET_S must be a whole number of seconds >= 30, got '$budget'" >&2; exit 2; }
t_start=$(date +%s)
budget_left() { echo $(( budget - ($(date +%s) - t_start) )); }
# The seconds a stage's command may run: its cap, or what is left of the
# budget (a few seconds kept for packing the results), whichever is less.
stage_limit=0
left() { local l=$(( stage_deadline - $(date +%s) )); [ $l -gt 1 ] && echo $l || echo 1; }

# Results reach $OUT after every stage: the archive is written beside and then
# renamed, so a command killed mid-pack still leaves the previous whole one.
publish() {
  [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ] || return 0
  tar -C "$out" -czf "$OUT/.gpu-check.tar.gz.part" . 2>/dev/null && mv -f "$OUT/.gpu-check.tar.gz.part" "$OUT/gpu-check.tar.gz"
  cp "$summary" "$OUT/.summary.part" && mv -f "$OUT/.summary.part" "$OUT/summary.txt"
}

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
  # The Python tests name the interpreter the package was built for: this machine's python3.
  local pyb pyh
  pyb=$(sed -n 's/^python=//p' "$manifest")
  pyh=$(command -v python3 || true)
  if [ -n "$pyb" ] && [ -n "$pyh" ]; then find "$bin" -name '*.cmake' -print0 | xargs -0 sed -i -e "s#$pyb#$pyh#g"; fi
  return 0
}
export CONVLAB_BINARY_DIR=$bin

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
# its own), not those labelled gpu_check (the rehearsal and the ptxas table:
# build-machine checks). The emulated builds (test_kernels_cuda, test_algorithms_cuda) run on
# the CPU here too; their sanitizer variants (asan./tsan.) are left to CI. The
# cuda.* algorithms run on the device in test_algorithms' registry sweep
# (RegistrySweep.MatchesReference/cuda_*, cuda.winograd_f6x3 included).
gpu_test_regex='[Cc]uda|[Cc]udnn|[Gg]pu|Vendor|[Nn]ccl'
stage_tests() {
  local d=$out/tests; mkdir -p "$d"
  [ -f "$bin/CTestTestfile.cmake" ] || { stage_fail tests "no build-gpu/ (run the build stage first)"; return; }
  # CTest starts no test after the stage's deadline (--stop-time) and writes its
  # report of what ran; `timeout` is the backstop.
  # The Python bridge's tests need PyTorch, which this machine may lack (no registry to install it from).
  local exclude='^(asan|tsan|gpu_check)\.'
  local why_not=""
  if ! python3 -c 'import torch' 2>/dev/null; then
    why_not="no PyTorch on this machine (python3 -c 'import torch' failed)"
  elif ! PYTHONPATH="$bin/python" python3 -c 'import convlab' 2>/dev/null; then
    why_not="the Python package is not in $bin/python (not built, or not carried)"
  fi
  if [ -n "$why_not" ]; then
    exclude='^(asan|tsan|gpu_check|python)\.'
    echo "python bridge: not run: $why_not" > "$d/python.txt"
  fi
  timeout "$(left)" ctest --test-dir "$bin" -R "$gpu_test_regex" -E "$exclude" -LE gpu_check -j "$jobs" \
    --timeout "$(left)" --stop-time "$(date -d "@$(( stage_deadline - 10 ))" +%H:%M:%S)" \
    --output-junit "$d/ctest.xml" > "$d/ctest.log" 2>&1
  local rc=$?
  [ -f "$d/ctest.xml" ] || { stage_fail tests "ctest stopped at the stage's cap ($stage_limit s) before writing its report; see $d/ctest.log"; return; }
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
# NCCL on the device: did its tests (NcclCuda.*: one rank, one GPU) run, or skip, and why.
nccl = [tc for tc in ET.parse(sys.argv[1]).getroot().iter("testcase") if tc.get("name").startswith("NcclCuda.")]
nccl_ran = sum(tc.get("status") == "run" for tc in nccl)
if not nccl:
    print("nccl: not run: no NcclCuda test in this build")
elif nccl_ran:
    print(f"nccl: {nccl_ran} of {len(nccl)} NcclCuda tests passed, on one rank (an all-reduce over one rank changes nothing)")
else:
    m = re.search(r"Skipped\n(.*)", nccl[0].findtext("system-out") or "")
    print(f"nccl: not run: {m.group(1).strip() if m else 'no test ran'}")
print(f"summary: {ran} passed, {failed} failed, {len(bad)} skipped for want of a device, {skipped_ok} skipped for other reasons")
sys.exit(1 if failed or bad else 0)
EOF
  local prc=$?
  local line; line=$(tail -1 "$d/skips.txt")
  note "  $(grep -m1 '^nccl:' "$d/skips.txt")"
  [ -f "$d/python.txt" ] && note "  $(cat "$d/python.txt")"
  if [ $rc -ne 0 ] || [ $prc -ne 0 ]; then stage_fail tests "$line; see $d/ctest.log and $d/skips.txt"
  else stage_ok tests "$line"; fi
}

# Nsight Compute's counters for every hand-written kernel: one process per
# (algorithm, layer, direction), `convlab conv --reps 1`, each of our kernels
# (demangled names in convlab::) profiled at its first launches; cuDNN's,
# cuBLAS's and cuFFT's kernels are not. The clocks are left as they are.
ncu_metrics=launch__registers_per_thread,launch__block_size,launch__grid_size,\
launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic,launch__occupancy_limit_registers,\
sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,\
smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed.sum
stage_ncu() {
  local d=$out/ncu; mkdir -p "$d"
  local ncu; ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  [ -n "$ncu" ] || { stage_not_run ncu "ncu (Nsight Compute) not found on this machine"; return; }
  local conv3='mb32ic256ih13oc384oh13kh3ph1n"alexnet.conv3"' conv1='mb32ic3ih227oc96oh55kh11sh4n"alexnet.conv1"'
  local runs=() a dir
  # cuda.im2col_cublas's own kernels are cuda.im2col_gemm's. In order of use,
  # so that a run stopped at the cap keeps the most: every forward, the two
  # strided backward-data paths, then the backward directions.
  local algos; algos=$(grep -oE '^cuda\.[a-z0-9_]+' "$out/build/algos.txt" 2>/dev/null | grep -v cublas)
  [ -n "$algos" ] || { stage_fail ncu "no cuda.* algorithm listed by the build stage"; return; }
  if [ -n "${NCU_RUNS:-}" ]; then  # ALGO|LAYER|DIR ...: LAYER conv3, conv1 or a layer id (batch 32)
    read -r -a runs <<< "$NCU_RUNS"
  else
    for a in $algos; do runs+=("$a|conv3|fwd"); done
    runs+=("cuda.implicit_gemm|conv1|bwd-data" "cuda.direct|conv1|bwd-data")
    for dir in bwd-filter bwd-data; do for a in $algos; do runs+=("$a|conv3|$dir"); done; done
  fi
  local done_runs=0 failed=0 r layer prob log
  : > "$d/runs.txt"
  for r in "${runs[@]}"; do
    IFS='|' read -r a layer dir <<< "$r"
    [ "$(left)" -gt 8 ] || { note "  ncu: stopped at the stage's cap after $done_runs of ${#runs[@]} runs"; break; }
    local batch=()
    case $layer in conv3) prob=$conv3 ;; conv1) prob=$conv1 ;; *) prob=$layer; batch=(--batch 32) ;; esac
    log="$d/$a.${layer//./_}.$dir.csv"
    timeout "$(left)" "$ncu" --clock-control none --kernel-name-base demangled -k 'regex:convlab::' \
      --launch-count 12 --metrics "$ncu_metrics" --csv --page raw \
      "$bin/convlab" conv "$prob" "${batch[@]}" --algo "$a" --dir "$dir" --reps 1 > "$log" 2> "$log.err"
    local rc=$?
    done_runs=$((done_runs + 1))
    if [ $rc -eq 2 ] && grep -q 'does not support' "$log" "$log.err"; then
      echo "$a $layer $dir unsupported: $(grep -h -m1 'does not support' "$log" "$log.err")" >> "$d/runs.txt"; rm -f "$log"
    else
      echo "$a $layer $dir exit $rc" >> "$d/runs.txt"
      [ $rc -eq 0 ] || failed=$((failed + 1))
    fi
  done
  python3 "$root/scripts/gpu_ncu_table.py" "$d" > "$d/kernels.md" 2> "$d/table.err"
  local prc=$?
  if [ $failed -gt 0 ] || [ $prc -ne 0 ]; then
    stage_fail ncu "$failed of $done_runs runs failed, table exit $prc; see $d/runs.txt, $d/*.err"
  elif [ $done_runs -lt ${#runs[@]} ]; then
    stage_partial ncu "$done_runs of ${#runs[@]} runs inside the cap; $(tail -1 "$d/kernels.md")"
  else
    stage_ok ncu "$done_runs runs; $(tail -1 "$d/kernels.md")"
  fi
}

stage_sanitize() {
  local d=$out/sanitize; mkdir -p "$d"
  command -v compute-sanitizer >/dev/null || { stage_fail sanitize "compute-sanitizer not found"; return; }
  # The hand-written kernels on the device: the registry sweep of cuda.* and
  # the GPU layer kernels. Each tool's run is capped so the stage fits.
  local any=0 t f runs_done=0
  for tool in memcheck racecheck; do
    for t in test_algorithms test_net; do
      f='*RegistrySweep.MatchesReference/cuda_*'
      [ $t = test_net ] && f='LayersCuda.*:NetCuda.*'
      # The first CONVLAB_SWEEP_LIMIT problems of each sweep: racecheck runs
      # shared-memory kernels hundreds of times slower.
      local runs_left=$(( 4 - runs_done )) run_cap; run_cap=$(( $(left) / runs_left )); runs_done=$(( runs_done + 1 ))
      CONVLAB_SWEEP_LIMIT=${SANITIZE_SWEEP_LIMIT:-8} timeout "$run_cap" \
        compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 \
        "$bin/tests/$t" --gtest_filter="$f" > "$d/$tool.$t.txt" 2>&1
      local rc=$?
      local errs; errs=$(grep -oE '(ERROR|RACECHECK) SUMMARY: [0-9]+ (error|hazard)' "$d/$tool.$t.txt" | tail -1)
      local done_tests; done_tests=$(grep -cE '^\[ +(OK|FAILED) +\] [^ ]+ \(' "$d/$tool.$t.txt")
      if [ $rc -eq 99 ] || { [ -n "$errs" ] && ! [[ $errs =~ SUMMARY:\ 0\  ]]; }; then
        any=1; note "  $tool $t: ${errs:-errors}; see $d/$tool.$t.txt"
      elif [ $rc -eq 124 ]; then note "  $tool $t: stopped at its share of the cap ($run_cap s) after $done_tests tests, no error reported so far"
      elif [ $rc -ne 0 ]; then note "  $tool $t: $errs, but tests failed under it (rc $rc; the tests stage has them); see $d/$tool.$t.txt"
      else note "  $tool $t: ok, $done_tests tests ($errs)"; fi
    done
  done
  if [ $any -ne 0 ]; then stage_fail sanitize "compute-sanitizer found errors"
  else stage_ok sanitize "memcheck + racecheck: no error in what ran (the lines above say how much)"; fi
}

stage_check() {
  local d=$out/check; mkdir -p "$d"
  timeout "$(left)" "$bin/convlab" layers alexnet --device cuda --batch 32 --tf32 --json "$d/layers_alexnet_cuda.json" \
    > "$d/layers_alexnet_cuda.txt" 2>&1
  local rc=$?
  [ $rc -ne 124 ] || { stage_fail check "did not finish within the stage's cap ($stage_limit s); see $d/layers_alexnet_cuda.txt"; return; }
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
  python3 "$root/scripts/gpu_vs_cudnn.py" "$d/layers_alexnet_cuda.json" > "$d/vs_cudnn.md" 2>&1 \
    && note "  $(tail -1 "$d/vs_cudnn.md")"
  if [ $rc -ne 0 ] || [ $prc -ne 0 ]; then stage_fail check "exit $rc; $(tail -1 "$d/check.txt"); see $d/check.txt"
  else stage_ok check "$(tail -1 "$d/check.txt")"; fi
}

stage_tune() {
  local d=$out/tune; mkdir -p "$d"
  local cache=$d/tune_cache.jsonl; rm -f "$cache"
  if timeout "$(left)" "$bin/convlab" tune alexnet --device cuda --batch 32 --list --cache "$cache" > "$d/tune_alexnet_cuda.txt" 2>&1 &&
     timeout "$(left)" "$bin/convlab" tune alexnet --device cuda --batch 32 --json --quiet --cache "$cache" \
       > "$d/tune_alexnet_cuda.json" 2> "$d/tune_alexnet_cuda.err"; then
    stage_ok tune "alexnet: $(grep -E '^vendor cudnn' "$d/tune_alexnet_cuda.txt" | tr '\n' ' ' | tr -s ' ')"
  else
    stage_fail tune "see $d/tune_alexnet_cuda.txt / .err"
  fi
  timeout "$(left)" "$bin/convlab" tune alexnet --device cuda --batch 32 --tf32 --json --quiet --no-cache \
    > "$d/tune_alexnet_cuda_tf32.json" 2> "$d/tune_alexnet_cuda_tf32.err" || stage_fail tune "--tf32: see $d/tune_alexnet_cuda_tf32.err"
}

stage_train() {
  local d=$out/train; mkdir -p "$d"
  # find,own beside find: what cuDNN adds to a step whose choices are otherwise convlab's own kernels.
  local policies='default;get;find;find,own;find-context;fixed:cuda.implicit_gemm;fixed:cuda.im2col_cublas'
  policies+=';fixed:cuda.fft_cufft;fixed:cuda.winograd_f2x3;fixed:cuda.direct;fixed:cudnn.implicit_precomp_gemm'
  if timeout "$(left)" "$bin/convlab" train alexnet --device cuda --batch 32 --iters 5 --warmup 2 --policy "$policies" \
       --expect 'find,own/find<=1.3' --json "$d/train_alexnet_cuda.json" \
       > "$d/train_alexnet_cuda.md" 2> "$d/train_alexnet_cuda.log"; then
    stage_ok train "alexnet --device cuda: $(grep -cE '^\| ' "$d/train_alexnet_cuda.md") table rows; see $d/train_alexnet_cuda.md"
  elif grep -q 'expectation (--expect) was not met' "$d/train_alexnet_cuda.log"; then
    stage_ok train "alexnet --device cuda: trained; the expectation find,own/find<=1.3 was not met (see $d/train_alexnet_cuda.md)"
  else
    stage_fail train "alexnet --device cuda: see $d/train_alexnet_cuda.log"
  fi
  timeout "$(left)" "$bin/convlab" report --net tiny --batch 8 --iters 3 --gpu on --out "$d/report_tiny" > "$d/report_tiny.txt" 2>&1 \
    || stage_fail train "report --gpu on: see $d/report_tiny.txt"
}

stage_dist() {
  local d=$out/dist; mkdir -p "$d"
  local ngpu
  ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  if [ "${ngpu:-0}" -lt 2 ]; then
    stage_not_run dist "${ngpu:-0} GPU here: data-parallel training needs >= 2 ranks (the tests stage's nccl line says what one GPU ran)"
    return
  fi
  local mpirun
  mpirun=$(command -v mpirun || command -v mpiexec || true)
  [ -n "$mpirun" ] || { stage_not_run dist "$ngpu GPUs but no mpirun here (Open MPI's runtime is not in the bundle)"; return; }
  if OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout "$(left)" "$mpirun" -np "$ngpu" --bind-to none \
       -x LD_LIBRARY_PATH "$bin/convlab" train alexnet --device cuda --batch $((32 * ngpu)) --iters 5 --warmup 2 \
       --policy 'default;get;find' --ranks "1,$ngpu" --json "$d/train_alexnet_cuda_dist.json" \
       > "$d/train_alexnet_cuda_dist.md" 2> "$d/train_alexnet_cuda_dist.log"; then
    stage_ok dist "$ngpu GPUs over NCCL: see $d/train_alexnet_cuda_dist.md"
  else
    stage_fail dist "mpirun -np $ngpu convlab train --device cuda: see $d/train_alexnet_cuda_dist.log"
  fi
}

# The Python package in PyTorch on the GPU: the training comparison on ResNet-18,
# convlab's get and find against PyTorch's own cuDNN convolutions.
stage_bridge() {
  local d=$out/bridge; mkdir -p "$d"
  if ! python3 -c 'import torch' 2>/dev/null; then
    stage_not_run bridge "no PyTorch on this machine (python3 -c 'import torch' failed)"; return
  fi
  if ! python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    stage_not_run bridge "PyTorch sees no CUDA device here"; return
  fi
  if ! PYTHONPATH="$bin/python" python3 -c 'import convlab' > "$d/import.txt" 2>&1; then
    stage_not_run bridge "the Python package does not import from $bin/python (scripts/gpu-prepare.sh packs it with GPU_PYTHON): $(tail -1 "$d/import.txt")"; return
  fi
  if PYTHONPATH="$bin/python" PYTHONUNBUFFERED=1 timeout "$(left)" python3 -m convlab.torch compare --device cuda \
       --model resnet18 --batch 32 --rounds 3 --steps 2 --warmup-rounds 1 --policies 'get;find;find,tf32' --out "$d/resnet18" \
       > "$d/compare_resnet18.md" 2> "$d/compare_resnet18.log"; then
    stage_ok bridge "resnet18 --device cuda: $(grep -cE '^\| ' "$d/compare_resnet18.md") table rows; see $d/compare_resnet18.md"
  else
    stage_fail bridge "resnet18 --device cuda (exit $?): $(tail -1 "$d/compare_resnet18.log")"
  fi
  publish
  # The bridge's own cost on CUDA tensors: submission per call, and per layer against PyTorch's cuDNN.
  if PYTHONPATH="$bin/python" PYTHONUNBUFFERED=1 timeout "$(left)" python3 "$root/bench/python/bridge_cuda.py" \
       --json "$d/bridge_cuda.json" > "$d/bridge_cuda.md" 2> "$d/bridge_cuda.log"; then
    note "  bridge_cuda.py: $(grep -c '^| ' "$d/bridge_cuda.md") table rows; see $d/bridge_cuda.md"
  else
    stage_fail bridge "bench/python/bridge_cuda.py (exit $?): $(tail -1 "$d/bridge_cuda.log")"
  fi
}

stage_resnet() {
  local d=$out/resnet; mkdir -p "$d"
  timeout "$(left)" "$bin/convlab" layers resnet50 --device cuda --batch 32 --tf32 --max-seconds 0.1 \
    --json "$d/layers_resnet50_cuda.json" > "$d/layers_resnet50_cuda.txt" 2>&1
  local rc=$?
  [ $rc -ne 124 ] || { stage_partial resnet "did not finish within the stage's cap ($stage_limit s); see $d/layers_resnet50_cuda.txt"; return; }
  [ -f "$d/layers_resnet50_cuda.json" ] || { stage_fail resnet "convlab layers exit $rc, no JSON; see $d/layers_resnet50_cuda.txt"; return; }
  python3 "$root/scripts/gpu_vs_cudnn.py" "$d/layers_resnet50_cuda.json" > "$d/vs_cudnn.md" 2>&1
  if [ $rc -ne 0 ]; then stage_fail resnet "convlab layers exit $rc; see $d/layers_resnet50_cuda.txt"
  else stage_ok resnet "$(tail -1 "$d/vs_cudnn.md")"; fi
}

stage_bench() {
  local d=$out/bench; mkdir -p "$d"
  [ -x "$bin/bench_conv" ] || { stage_fail bench "no build-gpu/bench_conv"; return; }
  if timeout "$(left)" "$bin/bench_conv" --device=cuda --reps=1 --benchmark_filter="${BENCH_FILTER:-.}" \
       --benchmark_min_time="${BENCH_MIN_TIME:-0.05}" --benchmark_out="$d/bench_conv_cuda.json" \
       --benchmark_out_format=json > "$d/bench_conv_cuda.txt" 2>&1; then
    stage_ok bench "$(grep -cE '^conv/.* ms ' "$d/bench_conv_cuda.txt") benchmark lines; see $d/bench_conv_cuda.txt"
  else
    local rc=$?
    if [ $rc -eq 124 ]; then
      stage_partial bench "stopped at the stage's cap ($stage_limit s) after $(grep -cE '^conv/.* ms ' "$d/bench_conv_cuda.txt") benchmark lines (partial); see $d/bench_conv_cuda.txt"
    else stage_fail bench "bench_conv --device=cuda exit $rc; see $d/bench_conv_cuda.txt"; fi
  fi
}

for s in "${stages[@]}"; do
  t0=$(date +%s)
  left_now=$(budget_left)
  if [ "$left_now" -lt 20 ]; then
    stage_not_run "$s" "the budget of $budget s is spent ($left_now s left)"; publish; continue
  fi
  stage_limit=${cap[$s]}
  [ $(( left_now - 5 )) -lt "$stage_limit" ] && stage_limit=$(( left_now - 5 ))
  stage_deadline=$(( t0 + stage_limit ))
  "stage_$s"
  echo "  ($s: $(( $(date +%s) - t0 )) s of its ${stage_limit} s)" | tee -a "$summary"
  publish
done
note "results in $out/ (status $status; $(( $(date +%s) - t_start )) s of the $budget s budget)"
publish
exit $status
