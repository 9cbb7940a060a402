#!/usr/bin/env bash
# install.my_algorithm: a researcher's own algorithm against the INSTALLED
# convlab (examples/my_algorithm): built with find_package(convlab), checked by
# the installed tester (convlab::testing), then loaded as a plugin by the
# installed CLI, where it goes through algos, conv --check, layers, tune --mode
# find and its cache, and a fixed: training policy like a built-in. Bad plugins
# (a missing file, a library without the entry point, a reserved or duplicate
# name) are one line "error: ..." and exit 2.
#   install_my_algorithm_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
[ -e "$prefix/include/convlab/testing.hpp" ] || fail "the tester's header is not installed"
cmake -S "$src/examples/my_algorithm" -B "$tmp/my" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/my" -j 2 >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
plugin=$tmp/my/libmy_algorithm.so
# The plugin carries no copy of convlab: its registry is the executable's.
# Outputs are captured before grep -q reads them: grep leaving at its first
# match would kill the writer with SIGPIPE, which pipefail turns into a miss.
if grep -q 'convlab::register_algorithm' <<< "$(nm -C --defined-only "$plugin")"; then fail "the plugin links a copy of the registry"; fi

export OMP_NUM_THREADS=1
"$tmp/my/my_algorithm_test" >"$tmp/test.txt" 2>&1 || { cat "$tmp/test.txt"; fail "the installed tester failed"; }
grep -q '^user.direct_naive: [0-9]* cases checked' "$tmp/test.txt" || { cat "$tmp/test.txt"; fail "no tester summary"; }

cl=$prefix/bin/convlab
"$cl" --plugin "$plugin" algos >"$tmp/algos.txt"
grep -q '^user.direct_naive ' "$tmp/algos.txt" || { cat "$tmp/algos.txt"; fail "algos does not list it"; }
[ "$(tail -n 1 "$tmp/algos.txt" | cut -d' ' -f1)" = user.direct_naive ] || fail "not listed after the built-ins"
grep -q '^user.direct_naive ' <<< "$(CONVLAB_PLUGINS="$plugin" "$cl" algos)" || fail "CONVLAB_PLUGINS did not load it"

p='mb2ic4ih9oc6kh3ph1'
"$cl" conv "$p" --algo user.direct_naive --check --reps 1 --plugin "$plugin" >"$tmp/conv.txt" \
  || { cat "$tmp/conv.txt"; fail "conv --check"; }
"$cl" --plugin "$plugin" layers "$p" --dir fwd --max-seconds 20 >"$tmp/layers.txt" \
  || { cat "$tmp/layers.txt"; fail "layers"; }
grep -q 'user.direct_naive' "$tmp/layers.txt" || { cat "$tmp/layers.txt"; fail "layers leaves it out"; }
"$cl" --plugin "$plugin" tune "$p" --mode find --dir fwd --cache "$tmp/c.jsonl" --quiet >"$tmp/tune.txt" \
  || { cat "$tmp/tune.txt"; fail "tune --mode find"; }
grep -q '"user.direct_naive"' "$tmp/c.jsonl" || fail "find's cache holds no measurement of it"
# get prices it from the cost it states (never "cannot price it").
"$cl" --plugin "$plugin" tune "$p" --mode get --dir fwd --no-cache --list >"$tmp/get.txt" \
  || { cat "$tmp/get.txt"; fail "tune --mode get"; }
grep 'user.direct_naive' "$tmp/get.txt" | grep -q 'scalar direct loops' || { cat "$tmp/get.txt"; fail "get does not price it"; }
"$cl" --plugin "$plugin" train tiny --policy fixed:user.direct_naive --iters 2 --warmup 0 --batch 4 \
  >"$tmp/train.txt" 2>&1 || { cat "$tmp/train.txt"; fail "train --policy fixed:user.direct_naive"; }
grep -q '^| fixed:user.direct_naive | .* | yes |' "$tmp/train.txt" || { cat "$tmp/train.txt"; fail "no trained row"; }

# The benchmark binary of this build takes the same plugin: its entries join the filters.
if [ -x "$build/bench_conv" ]; then
  "$build/bench_conv" --plugin "$plugin" --benchmark_list_tests=true --benchmark_filter='/user\.direct_naive/' \
    >"$tmp/bench.txt" 2>&1 || { cat "$tmp/bench.txt"; fail "bench_conv --plugin"; }
  grep -q '^conv/alexnet.conv1/fwd/user.direct_naive/' "$tmp/bench.txt" || { cat "$tmp/bench.txt"; fail "bench_conv's filter"; }
fi

# Bad plugins: one line, exit 2, before any work.
bad() {  # bad EXPECTED-TEXT ARGS...
  local want=$1; shift
  set +e; "$cl" "$@" >/dev/null 2>"$tmp/err.txt"; local rc=$?; set -e
  [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err.txt")" = 1 ] && grep -q "^error: .*$want" "$tmp/err.txt" \
    || { cat "$tmp/err.txt"; fail "$* gave exit $rc"; }
}
bad "cannot open" --plugin "$tmp/no_such.so" algos
bad "convlab_register_algorithms" --plugin "$(ldd "$cl" | awk '/libm\.so/ {print $3; exit}')" algos
bad "already registered" --plugin "$plugin" --plugin "$plugin" algos
bad "needs a path" algos --plugin
printf '#include <convlab/convlab.hpp>\nstruct A : convlab::NamedAlgorithm {\n  A() : NamedAlgorithm("cpu.mine", convlab::DeviceKind::cpu, "direct", "x") {}\n  convlab::Support supports(const convlab::ConvProblem&, convlab::Direction) const override { return {false, "no"}; }\n  void run(const convlab::ConvProblem&, convlab::Direction, const convlab::ConvBuffers&, void*, const convlab::ExecContext&) const override {}\n};\nextern "C" void convlab_register_algorithms() { static const A a; convlab::register_algorithm(a); }\n' >"$tmp/reserved.cpp"
c++ -std=c++20 -shared -fPIC -I"$prefix/include" -I"$prefix/include/convlab" "$tmp/reserved.cpp" -o "$tmp/libreserved.so"
bad "reserved" --plugin "$tmp/libreserved.so" algos
echo "PASS: user.direct_naive built against $prefix, tested, and run by the installed convlab"
