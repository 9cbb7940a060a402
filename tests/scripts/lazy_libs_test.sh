#!/usr/bin/env bash
# CPU work needs no CUDA library: convlab opens cuDNN, cuBLAS, cuFFT and NCCL
# on first use (core/cuda_libraries.hpp) and links the CUDA runtime statically.
#
#   lazy_libs_test.sh address_limit BUILD_DIR
#       the CLI needs none of them (readelf), and `algos`, a checked CPU `conv`
#       and a short CPU `train` run under a 1 GB address-space limit (the CUDA
#       libraries together map more than that). Skips (77) in a sanitized build.
#   lazy_libs_test.sh hidden BUILD_DIR TEST_CORE DIR...
#       the same commands with the folders DIR... (where the build found the
#       libraries) hidden behind empty ones in a private mount namespace, as on
#       a machine where they are not installed; the CUDA entries that need one
#       say why, and each library's loader says "<library> not loaded: ..."
#       (TEST_CORE's CudaLibraries.HiddenLibrariesSayWhy). Skips (77) where
#       unshare cannot make the namespace.
set -uo pipefail
mode=$1 build=$2
shift 2
convlab=$build/convlab
if [ "$mode" = hidden ] && [ "${LAZY_LIBS_INSIDE:-}" != 1 ]; then
  [ $# -gt 1 ] || { echo "skipped: no library folders given (built without CUDA)"; exit 77; }
  if ! why=$(unshare -rm true 2>&1); then
    echo "skipped: no private mount namespace here (unshare -rm: $why)"
    exit 77
  fi
  # Again inside a private mount namespace (as root of a user namespace: bind mounts allowed).
  exec env LAZY_LIBS_INSIDE=1 unshare -rm bash "$0" hidden "$build" "$@"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
export OMP_NUM_THREADS=2

# The CPU commands: each must succeed.
cpu_commands() {
  "$convlab" algos > algos.txt 2> algos.err || fail "convlab algos exit $?: $(cat algos.err)"
  grep -q '^cpu\.direct .* yes$' algos.txt || fail "algos lists no available cpu.direct: $(cat algos.txt)"
  "$convlab" conv alexnet.conv2 --algo cpu.direct --batch 1 --threads 2 --check > conv.txt 2>&1 ||
    fail "convlab conv exit $?: $(tail -3 conv.txt)"
  grep -q -- '-> PASS' conv.txt || fail "conv --check did not pass: $(tail -3 conv.txt)"
  "$convlab" train tiny --batch 2 --iters 2 --warmup 0 --classes 4 --threads 2 --policy default > train.md 2> train.err ||
    fail "convlab train exit $?: $(tail -3 train.err)"
  grep -q '^| default ' train.md || fail "train wrote no report row: $(tail -3 train.md)"
}

case $mode in
  address_limit)
    if [ -n "${CONVLAB_SANITIZE:-}" ]; then
      echo "skipped: a sanitized build (-fsanitize=$CONVLAB_SANITIZE) reserves more address space than the limit"
      exit 77
    fi
    if command -v readelf > /dev/null; then
      needed=$(readelf -d "$convlab" | grep NEEDED | grep -E 'cudart|cudnn|cublas|cufft|nccl|curand' || true)
      [ -z "$needed" ] || fail "convlab links CUDA libraries: $needed"
    fi
    ulimit -v 1000000 || fail "cannot set the address-space limit"
    cpu_commands
    echo "PASS: algos, conv and train on the CPU under a 1 GB address-space limit; no CUDA library linked"
    ;;
  hidden)
    test_core=$1
    shift
    mkdir empty
    for d in "$@"; do
      [ -d "$d" ] || { echo "note: $d does not exist here: nothing to hide"; continue; }
      mount --bind "$tmp/empty" "$d" || fail "cannot hide $d"
    done
    cpu_commands
    # The entries that need a vendor library: no device, or the library's reason.
    while read -r name why; do
      case $why in
        "no CUDA device"* | *" not loaded: "*) ;;
        *) fail "$name without its library: '$why'" ;;
      esac
    done < <(grep -E '^(cudnn\.|cuda\.im2col_cublas |cuda\.fft )' algos.txt | sed -E 's/^([^ ]+) +[^ ]+ +[^ ]+ +[^ ]+ +/\1 /')
    [ "$(grep -cE '^cudnn\.' algos.txt)" -gt 0 ] || fail "algos lists no cudnn.* entry: $(cat algos.txt)"
    CONVLAB_TEST_CUDA_LIBS_HIDDEN=1 "$test_core" --gtest_filter='CudaLibraries.HiddenLibrariesSayWhy' \
      > gtest.txt 2>&1 || fail "the loaders' reasons: $(cat gtest.txt)"
    grep -q '\[  PASSED  \] 1 test' gtest.txt && ! grep -q SKIPPED gtest.txt || fail "the loaders' test did not run: $(cat gtest.txt)"
    echo "PASS: with $* hidden, algos, conv and train run on the CPU and the CUDA entries say why"
    ;;
  *) echo "usage: lazy_libs_test.sh address_limit BUILD_DIR | hidden BUILD_DIR TEST_CORE DIR..." >&2; exit 2 ;;
esac
