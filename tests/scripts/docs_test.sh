#!/usr/bin/env bash
# shellcheck disable=SC2016  # backticks in single quotes here are Markdown, not expansions
# README.md and docs/ describe the product, not its history:
#   - README.md has at most 200 lines;
#   - README.md and docs/**/*.md outside docs/results/ name no issue ("issue 17",
#     "issues 16 and 18"), no commit hash (`6f71808`, or "commit 6f71808") and no path
#     under ./before (a build folder a fresh clone does not have); dated
#     measurements with their commits belong in docs/results/;
#   - no source file, script or build file names an issue either;
#   - every relative Markdown link in README.md, ARCHITECTURE.md and docs/
#     (docs/results/ included) points to a file or folder that exists, and a
#     #fragment to a heading of that file.
# usage: docs_test.sh SOURCE_DIR     check the tree
#        docs_test.sh --self-test    check that each rule catches what it is for
set -uo pipefail

# GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'.
slug() {
  printf '%s' "$1" | tr '[:upper:]' '[:lower:]' | LC_ALL=C sed -e 's/[^a-z0-9 _-]//g' -e 's/ /-/g'
}

# Prints one line per problem in the tree at $1; returns 1 when there is any.
check_tree() {
  local root=$1 bad=0 f
  if [ ! -f "$root/README.md" ]; then
    echo "$root/README.md: missing"
    return 1
  fi
  local lines
  lines=$(wc -l <"$root/README.md")
  if [ "$lines" -gt 200 ]; then
    echo "README.md: $lines lines (at most 200: reference goes to docs/, measurements to docs/results/)"
    bad=1
  fi

  # Product pages: README.md and docs/ outside docs/results/.
  local product=("$root/README.md")
  if [ -d "$root/docs" ]; then
    while IFS= read -r -d '' f; do product+=("$f"); done \
      < <(find "$root/docs" -path "$root/docs/results" -prune -o -type f -name '*.md' -print0 | sort -z)
  fi
  local hit
  for f in "${product[@]}"; do
    local rel=${f#"$root"/}
    hit=$(grep -n -i -E '\bissues? #?[0-9]+' "$f") &&
      { printf '%s\n' "$hit" | sed "s|^|$rel:|; s|$| (an issue number: say what it is in words)|"; bad=1; }
    # A hash in backticks, or a bare word of 7-40 hex digits with a letter and a digit in it.
    hit=$( (grep -n -o -E '`[0-9a-f]{7,40}`' "$f"
            grep -n -o -w -E '[0-9a-f]{7,40}' "$f" | grep -E '^[0-9]+:[0-9a-f]*[a-f]' | grep -E '^[0-9]+:[0-9a-f]*[0-9]') |
          sort -t: -k1,1n -u) &&
      [ -n "$hit" ] &&
      { printf '%s\n' "$hit" | sed "s|^|$rel:|; s|$| (a commit hash: history goes to docs/results/)|"; bad=1; }
    hit=$(grep -n -F './before' "$f") &&
      { printf '%s\n' "$hit" | sed "s|^|$rel:|; s|$| (./before is not in a fresh clone)|"; bad=1; }
  done

  # The code speaks of the product too: no issue number in a source file, script or build file (their
  # comments and the text they print).
  local src
  while IFS= read -r -d '' src; do
    local rel=${src#"$root"/}
    case "$rel" in tests/scripts/docs_test.sh | build*/* | .git/* | docs/*) continue ;; esac
    hit=$(grep -n -i -E '\bissues? #?[0-9]+|\bthe issue.s\b' "$src") &&
      { printf '%s\n' "$hit" | sed "s|^|$rel:|; s|$| (an issue number: say what it is in words)|"; bad=1; }
  done < <(find "$root" \( -path "$root/build*" -o -path "$root/.git" -o -path "$root/docs" \) -prune -o -type f \
             \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.h' -o -name '*.sh' \
                -o -name '*.py' -o -name 'CMakeLists.txt' -o -name '*.cmake' -o -name '*.ipynb' \) -print0 | sort -z)

  # Relative links, outside fenced code blocks.
  local pages=("$root/README.md")
  [ -f "$root/ARCHITECTURE.md" ] && pages+=("$root/ARCHITECTURE.md")
  if [ -d "$root/docs" ]; then
    while IFS= read -r -d '' f; do pages+=("$f"); done < <(find "$root/docs" -type f -name '*.md' -print0 | sort -z)
  fi
  local line target path frag dest
  for f in "${pages[@]}"; do
    local rel=${f#"$root"/} dir
    dir=$(dirname "$f")
    while IFS=$'\t' read -r line target; do
      case $target in
        http://* | https://* | mailto:*) continue ;;
      esac
      path=${target%%#*}
      frag=
      [[ $target == *#* ]] && frag=${target#*#}
      if [ -z "$path" ]; then dest=$f; else dest=$dir/$path; fi
      if [ ! -e "$dest" ]; then
        echo "$rel:$line: link to $target: no such file"
        bad=1
        continue
      fi
      if [ -n "$frag" ]; then
        if [ ! -f "$dest" ]; then
          echo "$rel:$line: link to $target: a #fragment on a folder"
          bad=1
          continue
        fi
        local found=0 heading
        while IFS= read -r heading; do
          [ "$(slug "$heading")" = "$frag" ] && { found=1; break; }
        done < <(awk '/^```/ { code = !code; next } !code && /^#+ / { sub(/^#+ +/, ""); print }' "$dest")
        [ $found = 1 ] || { echo "$rel:$line: link to $target: no heading with that anchor"; bad=1; }
      fi
    done < <(awk '/^```/ { code = !code; next }
                  !code {
                    s = $0
                    while (match(s, /\]\([^) \t]+\)/)) {
                      print FNR "\t" substr(s, RSTART + 2, RLENGTH - 3)
                      s = substr(s, RSTART + RLENGTH)
                    }
                  }' "$f")
  done
  return $bad
}

self_test() {
  local tmp fails=0
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  # A clean tree: a short README, a docs page with a link and an anchor, a results file that may keep history.
  make_clean() {
    rm -rf "$tmp/t" && mkdir -p "$tmp/t/docs/results"
    printf '# x\n\nSee [training](docs/training.md#find-in-context) and [results](docs/results/README.md).\n' \
      >"$tmp/t/README.md"
    printf '# Arch\n\n[layout](docs/training.md)\n' >"$tmp/t/ARCHITECTURE.md"
    printf '# Training\n\n## Find in context\n\nBack to [the README](../README.md#x).\n' >"$tmp/t/docs/training.md"
    printf '# Results\n\nAt commit `6f71808`, ./before/convlab was a build of it; issue 17 targets.\n' \
      >"$tmp/t/docs/results/README.md"
  }
  expect() {  # expect pass|fail WHAT: check the tree in $tmp/t
    local out rc
    out=$(check_tree "$tmp/t" 2>&1)
    rc=$?
    if [ "$1" = pass ] && [ $rc != 0 ]; then
      echo "FAIL: $2 was refused:"; echo "$out"; fails=1
    elif [ "$1" = fail ] && [ $rc = 0 ]; then
      echo "FAIL: $2 was not caught"; fails=1
    else
      echo "ok: $2${out:+ -> $(head -1 <<<"$out")}"
    fi
  }
  make_clean; expect pass "a clean tree (history only in docs/results/)"
  make_clean; for i in $(seq 301); do echo "line $i" >>"$tmp/t/README.md"; done
  expect fail "a README over 200 lines"
  make_clean; echo 'Against issue 19 targets.' >>"$tmp/t/README.md"; expect fail "an issue number in README.md"
  make_clean; echo 'As issues 16 and 18 asked.' >>"$tmp/t/docs/training.md"; expect fail "an issue number in docs/"
  make_clean; mkdir -p "$tmp/t/core"; echo '// The cache (issue 16 item 9).' >"$tmp/t/core/x.cpp"
  expect fail "an issue number in a source comment"
  make_clean; echo 'echo "targets of the issue'"'"'s list"' >"$tmp/t/run.sh"; expect fail "the issue's in a script"
  make_clean; echo 'Built at `0908cb4`.' >>"$tmp/t/docs/training.md"; expect fail "a commit hash in docs/"
  make_clean; echo 'Measured on commit 5ff8e6f.' >>"$tmp/t/docs/training.md"; expect fail "a bare commit hash in docs/"
  make_clean; echo 'Build 0123456 and 4294967296 of fc6, a deadbeefed word.' >>"$tmp/t/docs/training.md"
  expect pass "long numbers and hex-letter words are not hashes"
  make_clean; echo 'Run `./before/convlab layers`.' >>"$tmp/t/README.md"; expect fail "a ./before path in README.md"
  make_clean; echo 'See [gone](docs/gone.md).' >>"$tmp/t/README.md"; expect fail "a link to a missing file"
  make_clean; echo 'See [x](training.md#no-such-heading).' >>"$tmp/t/docs/training.md"
  expect fail "a link to a missing heading"
  make_clean; echo '[gone](missing.md)' >>"$tmp/t/docs/results/README.md"; expect fail "a missing link in docs/results/"
  make_clean; echo '[gone](docs/missing.md)' >>"$tmp/t/ARCHITECTURE.md"; expect fail "a missing link in ARCHITECTURE.md"
  make_clean; printf '```\n[not a link](nowhere.md)\n```\n[web](https://example.com/x.md)\n' \
    >>"$tmp/t/docs/training.md"
  expect pass "code blocks and web links are not checked as relative links"
  return $fails
}

if [ "${1:-}" = --self-test ]; then
  self_test && echo "docs_test self-test: ok"
  exit
fi
if [ $# != 1 ] || [ ! -d "$1" ]; then
  echo "usage: docs_test.sh SOURCE_DIR | --self-test" >&2
  exit 2
fi
if check_tree "$1"; then
  echo "docs_test: ok"
else
  echo "docs_test: README.md / docs/ fail the checks above"
  exit 1
fi
