#!/usr/bin/env bash
# Prepares the GPU check on a normal machine (one with Debian's archive), for a
# GPU machine that has CUDA 13, cuDNN (possibly only inside PyTorch's wheel
# nvidia-cudnn-cu13), CMake and Python, but no oneDNN, OpenBLAS, FFTW,
# GoogleTest or Google Benchmark and no package registry.
#
# It builds convlab for sm_90 here (preset `gpu`, build-gpu/), then packs into
# gpu-carry/ (git-ignored):
#   bundle.tar.xz   build-gpu/'s executables (stripped) and the CTest files that
#                   run them, plus lib/: every shared library they load that the
#                   GPU machine lacks (the ldd closure minus glibc, libstdc++,
#                   libgcc_s and the CUDA/cuDNN libraries, which it has)
#   manifest.txt    the commit, the absolute paths CTest and the tests were built
#                   with (gpu-check.sh recreates them as links there), the newest
#                   glibc / libstdc++ symbol versions the binaries need, sizes
# Send gpu-carry/ along with the working tree (the device tool's `carry`), then
# run scripts/gpu-check.sh there. The whole tree that travels must stay under
# 64 MiB; this script fails if gpu-carry/ alone passes CARRY_LIMIT_MB (48).
#
#   scripts/gpu-prepare.sh            # build and pack
#   NO_BUILD=1 scripts/gpu-prepare.sh # pack what build-gpu/ holds
#   GPU_PYTHON=/path/to/python3.12 scripts/gpu-prepare.sh
#                                     # also the Python package, built for that
#                                     # interpreter (the GPU machine's minor version,
#                                     # with nanobind): its bridge tests and the
#                                     # check's bridge stage then run there
# GPU_BUILD_DIR (a CUDA build folder to pack instead of build-gpu/, with
# NO_BUILD=1), CARRY_DIR (instead of gpu-carry/) and XZ_LEVEL (9) serve the
# offline rehearsal test (tests/scripts/gpu_check_rehearsal_test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
carry=${CARRY_DIR:-$root/gpu-carry}
limit_mb=${CARRY_LIMIT_MB:-48}
jobs=$(nproc 2>/dev/null || echo 2)

if [ -z "${NO_BUILD:-}" ]; then
  bash scripts/install-deps.sh
  command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] \
    || { echo "gpu-prepare: nvcc not found: the GPU build needs the CUDA toolkit here" >&2; exit 1; }
  if [ -n "${GPU_PYTHON:-}" ]; then
    "$GPU_PYTHON" -m nanobind --cmake_dir >/dev/null \
      || { echo "gpu-prepare: GPU_PYTHON=$GPU_PYTHON has no nanobind ($GPU_PYTHON -m pip install nanobind)" >&2; exit 1; }
    cmake --preset gpu -DCONVLAB_PYTHON3="$GPU_PYTHON" >/dev/null
  else
    cmake --preset gpu >/dev/null
  fi
  cmake --build --preset gpu -j "$jobs"
fi
build=${GPU_BUILD_DIR:-$root/build-gpu}
[ -x "$build/convlab" ] || { echo "gpu-prepare: $build/convlab missing (build failed?)" >&2; exit 1; }
build=$(cd "$build" && pwd)
grep -q '^CONVLAB_CUDA:BOOL=ON' "$build/CMakeCache.txt" \
  || { echo "gpu-prepare: $build was configured without CUDA" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/build-gpu/lib"

# Executables: convlab, the benchmarks and every test binary, their debug
# information stripped but their symbols kept, so compute-sanitizer's host
# backtraces name functions (the kernels' source lines travel in the fatbinary:
# the CUDA half is compiled with -lineinfo). Not the emulated kernels' and
# cuda.* algorithms' _asan / _tsan builds: they run on the CPU and CI checks them.
mapfile -t exes < <(cd "$build" && find . -path ./CMakeFiles -prune -o -type f -perm -u+x \
  \( -name convlab -o -name convlab_sweep -o -name 'bench_*' -o -name 'test_*' \) ! -name '*_asan' ! -name '*_tsan' \
  -print | sort)
for e in "${exes[@]}"; do
  mkdir -p "$stage/build-gpu/$(dirname "$e")"
  strip --strip-debug -o "$stage/build-gpu/$e" "$build/$e"
done
# The Python package where it was built (GPU_PYTHON): the extension module
# (stripped likewise) and the pure-Python files beside it.
python_exe=$(sed -n 's/^_Python_EXECUTABLE:INTERNAL=//p' "$build/CMakeCache.txt")
if grep -q '^CONVLAB_PYTHON:BOOL=ON' "$build/CMakeCache.txt" && ls "$build"/python/convlab/_convlab.*.so >/dev/null 2>&1; then
  mkdir -p "$stage/build-gpu/python"
  cp -r "$build/python/convlab" "$stage/build-gpu/python/"
  find "$stage/build-gpu/python" -name '__pycache__' -prune -exec rm -rf {} +
  for so in "$stage"/build-gpu/python/convlab/_convlab.*.so; do strip --strip-debug "$so"; done
  mapfile -t -O "${#exes[@]}" exes < <(cd "$build" && ls python/convlab/_convlab.*.so | sed 's#^#./#')
else
  python_exe=""
fi
# CTest's files: the test lists (gtest_discover_tests writes them at build time).
(cd "$build" && find . -path '*/CMakeFiles' -prune -o \
  \( -name CTestTestfile.cmake -o -name '*_include.cmake' -o -name '*_tests.cmake' \) -print) |
  while read -r f; do mkdir -p "$stage/build-gpu/$(dirname "$f")"; cp "$build/$f" "$stage/build-gpu/$f"; done

# Shared libraries the GPU machine lacks. It has glibc, libstdc++/libgcc_s
# (newer than ours: cuDNN's wheel needs them), the CUDA toolkit's libraries and
# cuDNN; everything else (oneDNN, OpenBLAS + gfortran, FFTW, OpenMP, Google
# Benchmark, the OpenCL loader oneDNN links) travels.
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libpthread|libdl\.|librt\.|libstdc\+\+|libgcc_s|libcuda\.|libcudart|libcublas|libcufft|libcurand|libcudnn|libnccl|libnvrtc|libnvJitLink)'
for e in "${exes[@]}"; do ldd "$build/$e"; done | awk '$2=="=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r name path; do
    if [[ $name =~ $skip ]]; then continue; fi
    cp -L "$path" "$stage/build-gpu/lib/$name"
  done
missing=$(for e in "${exes[@]}"; do ldd "$build/$e"; done | grep 'not found' | sort -u || true)
[ -z "$missing" ] || { echo "gpu-prepare: unresolved libraries here: $missing" >&2; exit 1; }

# What the binaries need from the GPU machine's own libraries.
need_glibc=$(for f in "$stage"/build-gpu/convlab "$stage"/build-gpu/tests/test_* "$stage"/build-gpu/lib/*; do
  objdump -T "$f" 2>/dev/null; done | grep -oE 'GLIBC_[0-9.]+' | sort -uV | tail -1)
need_glibcxx=$(for f in "$stage"/build-gpu/convlab "$stage"/build-gpu/tests/test_* "$stage"/build-gpu/lib/*; do
  objdump -T "$f" 2>/dev/null; done | grep -oE 'GLIBCXX_[0-9.]+' | sort -uV | tail -1)

rm -rf "$carry"
mkdir -p "$carry"
tar -C "$stage" -cf - build-gpu | xz -T"$jobs" -"${XZ_LEVEL:-9}" > "$carry/bundle.tar.xz"
source_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
{
  echo "commit=$(git rev-parse HEAD)$(git diff --quiet HEAD -- . ':!gpu-carry' || echo '-dirty')"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
  echo "source_dir=$source_dir"
  echo "binary_dir=$build"
  echo "cuda_architectures=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$build/CMakeCache.txt")"
  echo "python=$python_exe"
  echo "python_module=$(cd "$build" && ls python/convlab/_convlab.*.so 2>/dev/null | xargs -r -n1 basename)"
  echo "nvcc=$(nvcc --version 2>/dev/null | grep -oE "release [0-9.]+" || /usr/local/cuda/bin/nvcc --version | grep -oE "release [0-9.]+")"
  echo "needs_glibc=$need_glibc"
  echo "needs_glibcxx=$need_glibcxx"
  echo "executables=${#exes[@]}"
  echo "libraries=$(ls "$stage/build-gpu/lib" | tr '\n' ' ')"
  echo "unpacked_mb=$(du -sm "$stage" | cut -f1)"
  echo "bundle_mb=$(du -sm "$carry/bundle.tar.xz" | cut -f1)"
} > "$carry/manifest.txt"
cat "$carry/manifest.txt"
size_mb=$(du -sm "$carry" | cut -f1)
tree_mb=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | awk '{printf "%d", $1/1048576 + 1}')
echo "gpu-carry/: ${size_mb} MiB; tracked files: ${tree_mb} MiB (the tree that travels must stay under 64 MiB)"
if [ "$size_mb" -gt "$limit_mb" ]; then
  echo "gpu-prepare: gpu-carry/ is ${size_mb} MiB, over CARRY_LIMIT_MB=$limit_mb" >&2
  exit 1
fi
