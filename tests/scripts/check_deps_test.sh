#!/usr/bin/env bash
# usage: check_deps_test.sh SRC BUILD PACKAGE FILE_WORD
#        check_deps_test.sh SRC BUILD --bad-args
# Runs scripts/check-deps.sh on BUILD against install-deps.sh's list with PACKAGE left
# out: it must fail (exit 1) with a line naming a file that contains FILE_WORD
# and says it is from PACKAGE. (Without ocl-icd-opencl-dev the
# configure step of a fresh machine fails; the check must see it coming.)
set -uo pipefail
src=$1 build=$2
check=$src/scripts/check-deps.sh
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT

if [ "$3" = --bad-args ]; then
  for args in "--nope" "--build $tmp/none" "--build $build --deps $tmp/missing.txt" "--deps"; do
    # shellcheck disable=SC2086
    bash "$check" $args >"$tmp/out" 2>"$tmp/err"
    code=$?
    [ $code = 2 ] || fail "check-deps $args: exit $code, want 2: $(cat "$tmp/err")"
    [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q '^error: ' "$tmp/err" || fail "check-deps $args: want one 'error:' line, got: $(cat "$tmp/err")"
  done
  echo "ok: bad arguments are one line and exit 2"
  exit 0
fi

pkg=$3 word=$4
bash "$src/scripts/install-deps.sh" --list >"$tmp/all.txt" || fail "install-deps.sh --list failed"
grep -qx -- "$pkg" "$tmp/all.txt" || fail "$pkg is not in install-deps.sh's list"
grep -vx -- "$pkg" "$tmp/all.txt" >"$tmp/deps.txt"
bash "$check" --build "$build" --deps "$tmp/deps.txt" >"$tmp/out" 2>"$tmp/err"
code=$?
cat "$tmp/out" "$tmp/err"
[ $code = 1 ] || fail "check-deps without $pkg: exit $code, want 1"
grep -E "^check-deps: /[^ ]*${word}[^ ]* \(.*\) is from ([^ ]*,)?${pkg}(,[^ ]*)?, which deps.txt neither lists" "$tmp/out" >/dev/null ||
  fail "check-deps without $pkg named no file containing '$word' from $pkg"
echo "ok: check-deps names the $word file(s) of $pkg when the list leaves it out"
