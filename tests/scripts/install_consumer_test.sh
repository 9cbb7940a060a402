#!/usr/bin/env bash
# install.consumer_builds: `cmake --install` this build into a fresh prefix,
# then configure, build and run examples/consumer against it, as a project
# outside the tree would (find_package(convlab), convlab::convlab,
# <convlab/convlab.hpp>). The consumer runs twice on one cache file: the first
# run tunes (cache miss), the second must read the answer back (cache hit).
#   install_consumer_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
for f in include/convlab/convlab.hpp include/convlab/core/problem.hpp lib/cmake/convlab/convlabConfig.cmake \
         lib/cmake/convlab/convlabTargets.cmake lib/cmake/convlab/dependencies.cmake bin/convlab; do
  [ -e "$prefix/$f" ] || { echo "FAIL: install did not write $f"; exit 1; }
done
# The public API only, under <convlab/...>: the headers convlab.hpp, testing.hpp and
# algorithms/plugin.hpp include, each compiling alone with PREFIX/include as the
# only include path, every include of convlab's own prefixed.
for f in include/convlab/testing.hpp include/convlab/algorithms/plugin.hpp include/convlab/autotune/policy.hpp; do
  [ -e "$prefix/$f" ] || { echo "FAIL: install did not write $f"; exit 1; }
done
for d in include/convlab/train include/convlab/net include/convlab/dist include/convlab/report \
         include/convlab/kernels/cpu include/convlab/kernels/cuda include/convlab/algorithms/cpu include/core; do
  [ ! -e "$prefix/$d" ] || { echo "FAIL: install wrote the internal folder $d"; exit 1; }
done
[ -z "$(find "$prefix/include" -type f ! -path "$prefix/include/convlab/*")" ] \
  || { echo "FAIL: headers installed outside include/convlab/"; exit 1; }
if grep -rn '#include "' "$prefix/include"; then
  echo "FAIL: an installed header includes by a tree-relative path (above)"
  exit 1
fi
while IFS= read -r h; do
  c++ -std=c++20 -fsyntax-only -I"$prefix/include" -x c++ "$h" 2>"$tmp/header.log" \
    || { echo "FAIL: ${h#$prefix/} does not compile alone"; cat "$tmp/header.log"; exit 1; }
done < <(find "$prefix/include" -name '*.hpp' | grep -v '/testing.hpp$')
targets=$(cat "$prefix"/lib/cmake/convlab/convlabTargets.cmake)
if grep -n 'INTERFACE_INCLUDE_DIRECTORIES' <<<"$targets" | grep -v '"\${_IMPORT_PREFIX}/include"$'; then
  echo "FAIL: an exported target puts more than PREFIX/include on the consumer's include path (above)"
  exit 1
fi
# CUDA, cuDNN, oneDNN, OpenBLAS, FFTW, MPI and NCCL: link-only, never in a consumer's compile.
if grep -n 'INTERFACE_LINK_LIBRARIES' <<<"$targets" | sed 's/\$<LINK_ONLY:[^>]*>//g' \
     | grep -E 'CUDA::|cudnn|DNNL|openblas|fftw|MPI|nccl'; then
  echo "FAIL: an exported target links a device or vendor library publicly (above)"
  exit 1
fi
# Nothing installed may point back into the source or build tree.
if grep -rlF -e "$src" -e "$build" "$prefix/lib/cmake/convlab"; then
  echo "FAIL: the installed CMake files name the source or build folder (above)"
  exit 1
fi

# The consumer sees only the prefix: no convlab source folder on its include path.
cmake -S "$src/examples/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/consumer" -j 2 >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
if grep -F -- "-I$src" "$tmp/consumer/CMakeFiles/consumer.dir/flags.make"; then
  echo "FAIL: the consumer compiles with the source tree on its include path"
  exit 1
fi

export OMP_NUM_THREADS=1
cache=$tmp/tune.jsonl
"$tmp/consumer/consumer" "$cache" cpu.winograd_f4x3 | tee "$tmp/run1.txt"
grep -q '^run: cpu.winograd_f4x3 fwd .*: ok$' "$tmp/run1.txt" || { echo "FAIL: no checked run"; exit 1; }
grep -q '^get: ' "$tmp/run1.txt" || { echo "FAIL: no get prediction"; exit 1; }
grep -q '^tuned: .*(cache miss, find' "$tmp/run1.txt" || { echo "FAIL: the first run did not tune"; exit 1; }
[ -s "$cache" ] || { echo "FAIL: no cache file written"; exit 1; }
"$tmp/consumer/consumer" "$cache" | tee "$tmp/run2.txt"
grep -q '^tuned: .*(cache hit' "$tmp/run2.txt" || { echo "FAIL: the second run did not read the cache"; exit 1; }
[ "$(sed -n 's/^tuned: \([^ ]*\).*/\1/p' "$tmp/run1.txt")" = "$(sed -n 's/^tuned: \([^ ]*\).*/\1/p' "$tmp/run2.txt")" ] \
  || { echo "FAIL: the cache hit chose another algorithm than the find that wrote it"; exit 1; }
# Bad arguments: one line, exit 2.
set +e
"$tmp/consumer/consumer" "$cache" cpu.no_such_algorithm 2>"$tmp/err.txt"; rc=$?
set -e
[ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err.txt")" = 1 ] || { echo "FAIL: unknown algorithm gave exit $rc"; cat "$tmp/err.txt"; exit 1; }
echo "PASS: installed, consumer configured, built and ran against $prefix"
