#!/usr/bin/env bash
# usage: scripts/check-deps.sh [--build DIR] [--deps FILE] [-v]
#
# Every file the build resolved from the system must come from a Debian package
# that scripts/install-deps.sh installs (its --list) or from a hard
# dependency of one (apt-cache depends --recurse, no Recommends/Suggests): a
# file from anywhere else is there by luck on this machine and missing on a
# fresh one (libdnnl-dev's dnnl-config.cmake needs OpenCL, a mere
# Recommends). Run by scripts/test.sh after the build.
#
# The files, from the configured and built tree DIR (default build/):
#   - CMakeCache.txt: every cached absolute path to a file (find_library,
#     find_program, find_path results, compilers), and the *.cmake files in
#     every <Pkg>_DIR package-config folder;
#   - the CMake files the configure step read (CMakeFiles/Makefile.cmake or
#     build.ninja): package configs, Find modules, their helpers;
#   - the headers the compiler read (its dependency files, *.d);
#   - the shared libraries DIR/convlab loads (ldd).
# Each is mapped to its package with dpkg -S (as given, then symlinks resolved,
# then the /usr-merge twin). Files of the source and build trees are ours;
# files no package owns (the CUDA toolkit under /usr/local/cuda, which is not
# a Debian package here) are reported and allowed. Essential packages count as
# installed (they are, on every Debian system).
#
# Exit 0: every file accounted for. 1: one line per file from an unlisted
# package (and per library ldd cannot find). 2: bad arguments or no build.
# --deps FILE checks against another package list (tests use one with a
# package left out); -v also lists each file and its package.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=$src/build deps="" verbose=0
while [ $# -gt 0 ]; do
  case $1 in
    --build) [ $# -ge 2 ] || { echo "error: --build needs a folder" >&2; exit 2; }; build=$2; shift 2 ;;
    --deps) [ $# -ge 2 ] || { echo "error: --deps needs a file" >&2; exit 2; }; deps=$2; shift 2 ;;
    -v) verbose=1; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -f "$build/CMakeCache.txt" ] || { echo "error: no CMakeCache.txt in '$build': configure first" >&2; exit 2; }
build=$(cd "$build" && pwd -P)
src=$(cd "$src" && pwd -P)
if [ -n "$deps" ]; then  # a file of package names, whitespace-separated, `#` comments
  [ -f "$deps" ] && [ -r "$deps" ] || { echo "error: cannot read package list '$deps'" >&2; exit 2; }
  mapfile -t listed < <(sed -e 's/#.*//' "$deps" | tr -s ' \t' '\n' | sed '/^$/d')
else
  mapfile -t listed < <(bash "$here/install-deps.sh" --list)
fi
[ ${#listed[@]} -gt 0 ] || { echo "error: no packages in '${deps:-scripts/install-deps.sh --list}'" >&2; exit 2; }
for tool in dpkg dpkg-query apt-cache; do
  command -v $tool >/dev/null || { echo "error: check-deps needs $tool (a Debian system)" >&2; exit 2; }
done

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# ---- 1. the files, each with where it came from: "path<TAB>origin" ----------
{
  # CMakeCache.txt: NAME:TYPE=VALUE, VALUE possibly a ;-list.
  while IFS= read -r line; do
    case $line in '#'*|'//'*|'') continue ;; esac
    name=${line%%:*} value=${line#*=}
    [ "$name" = CMAKE_INSTALL_PREFIX ] && continue
    IFS=';' read -ra parts <<<"$value"
    for v in "${parts[@]}"; do
      [[ $v == /* ]] || continue
      if [ -f "$v" ]; then
        printf '%s\tCMakeCache.txt %s\n' "$v" "$name"
      elif [ -d "$v" ] && [[ $name == *_DIR ]]; then
        for f in "$v"/*.cmake; do [ -f "$f" ] && printf '%s\tCMakeCache.txt %s\n' "$f" "$name"; done
      fi
    done
  done <"$build/CMakeCache.txt"
  # The CMake files configure read.
  if [ -f "$build/CMakeFiles/Makefile.cmake" ]; then
    sed -n '/^set(CMAKE_MAKEFILE_DEPENDS/,/^ *)/p' "$build/CMakeFiles/Makefile.cmake" |
      sed -n 's/^ *"\(\/[^"]*\)".*/\1/p' | sed 's/$/\tread by the configure step/'
  elif [ -f "$build/build.ninja" ]; then
    awk '/^build build.ninja/ {on=1} on {print} on && !/\$$/ {exit}' "$build/build.ninja" |
      tr ' ' '\n' | grep '^/' | sed 's/$/\tread by the configure step/'
  fi
  # Headers, from the compiler's dependency files.
  find "$build" -name '*.d' -type f -print0 2>/dev/null | xargs -0 -r cat 2>/dev/null | tr ' \\' '\n\n' |
    grep '^/' | sort -u | sed 's/$/\theader the compiler read/'
  # Shared libraries the binary loads.
  if [ -x "$build/convlab" ]; then
    ldd "$build/convlab" 2>/dev/null | awk '
      /=> not found/ {print "NOTFOUND:" $1 "\tldd convlab"; next}
      /=> \// {print $3 "\tldd convlab"; next}
      $1 ~ /^\// {print $1 "\tldd convlab"}'
  fi
} >"$tmp/raw"

# Normalise (bulk realpath: one process, not one per file), drop our own trees
# (as given or resolved), keep each file's first origin.
fail_lines=()
raw_paths=() raw_from=()
while IFS=$'\t' read -r path from; do
  if [[ $path == NOTFOUND:* ]]; then
    fail_lines+=("check-deps: ${path#NOTFOUND:} (ldd convlab): not found on this machine")
    continue
  fi
  raw_paths+=("$path") raw_from+=("$from")
done <"$tmp/raw"
files=()
declare -A origin=()
if [ ${#raw_paths[@]} -gt 0 ]; then
  mapfile -t norm < <(realpath -s -m -- "${raw_paths[@]}")
  mapfile -t resolved < <(realpath -m -- "${raw_paths[@]}")
  for i in "${!raw_paths[@]}"; do
    p=${norm[$i]} r=${resolved[$i]}
    [ -f "$p" ] || continue
    case $p in "$src"/*|"$build"/*) continue ;; esac
    case $r in "$src"/*|"$build"/*) continue ;; esac
    [ -n "${origin[$p]+x}" ] && continue
    origin[$p]=${raw_from[$i]}
    files+=("$p")
  done
fi
# ---- 2. file -> packages, with dpkg -S --------------------------------------
declare -A owner=()
# dpkg_owners FILE...: fills owner[] for the ones dpkg knows (packages without :arch).
dpkg_owners() {
  [ $# -gt 0 ] || return 0
  printf '%s\0' "$@" | xargs -0 -r dpkg -S 2>/dev/null | while IFS= read -r line; do
    case $line in "diversion by"*) continue ;; esac
    pk=${line%%: /*} f=${line#*: }
    printf '%s\t%s\n' "$f" "$(printf '%s' "$pk" | sed 's/:[a-z0-9_-]*//g; s/ //g')"
  done >"$tmp/owners"
  while IFS=$'\t' read -r f pk; do owner[$f]=$pk; done <"$tmp/owners"
}
dpkg_owners "${files[@]}"
# Not owned as given: follow its symlinks one hop at a time (an alternatives
# link such as libopenblas.so -> /etc/alternatives/... -> openblas-pthread/
# libopenblas.so belongs to the package of the first owned hop), each hop also
# as its /usr-merge twin (/lib <-> /usr/lib).
declare -A alias=()
retry=()
for f in "${files[@]}"; do
  [ -n "${owner[$f]+x}" ] && continue
  hop=$f
  for _ in 1 2 3 4 5 6 7 8; do
    for c in "$hop" "${hop/#\/usr\//\/}" "/usr$hop"; do
      [ "$c" != "$f" ] && [ -e "$c" ] || continue
      alias[$f]+="$c "
      retry+=("$c")
    done
    [ -L "$hop" ] || break
    next=$(readlink -- "$hop") || break
    [[ $next == /* ]] || next=$(dirname -- "$hop")/$next
    hop=$(realpath -s -m -- "$next")
  done
done
dpkg_owners "${retry[@]}"
for f in "${files[@]}"; do
  [ -n "${owner[$f]+x}" ] && continue
  for c in ${alias[$f]:-}; do
    if [ -n "${owner[$c]+x}" ]; then owner[$f]=${owner[$c]}; break; fi
  done
done

# ---- 3. what counts as installed: the list + hard dependencies, + Essential --
# One apt-cache call per run, kept in DIR/check-deps/ for the next run with the
# same roots while the package database and lists are unchanged.
mapfile -t essential < <(dpkg-query -W -f='${Package}\t${Essential}\n' 2>/dev/null | awk -F'\t' '$2 == "yes" {print $1}')
key=$( { printf '%s\n' "${listed[@]}" "${essential[@]}" | sort -u
         stat -c '%n %Y %s' /var/lib/dpkg/status /var/lib/apt/lists 2>/dev/null; } | md5sum | cut -c1-16)
cache=$build/check-deps/closure-$key.txt
if [ -s "$cache" ]; then
  cp "$cache" "$tmp/closure"
elif apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
    --no-enhances "${listed[@]}" "${essential[@]}" >"$tmp/closure" 2>"$tmp/apt.err"; then
  mkdir -p "$build/check-deps" && cp "$tmp/closure" "$cache.tmp.$$" && mv -f "$cache.tmp.$$" "$cache"
else
  echo "error: apt-cache depends failed ($(head -1 "$tmp/apt.err")): run 'apt-get update' first" >&2
  exit 2
fi
declare -A allowed=()
while IFS= read -r line; do
  case $line in ' '*|'') continue ;; esac
  line=${line#<} line=${line%>} line=${line%%:*}
  allowed[$line]=1
done <"$tmp/closure"
for p in "${listed[@]}"; do allowed[$p]=1; done

# ---- 4. the verdict ------------------------------------------------------------
declare -A outside=()
checked=0 outside_n=0
for f in "${files[@]}"; do
  pks=${owner[$f]:-}
  if [ -z "$pks" ]; then
    # Group by the first three components (/usr/local/cuda-13.0/...) so the CUDA toolkit is one line.
    IFS=/ read -r _ a b c _ <<<"$f"
    root=/$a/$b/$c
    outside[$root]=$(( ${outside[$root]:-0} + 1 ))
    outside_n=$((outside_n + 1))
    [ $verbose = 1 ] && echo "  $f: no package (${origin[$f]})"
    continue
  fi
  checked=$((checked + 1))
  ok=0
  IFS=',' read -ra cands <<<"$pks"
  for p in "${cands[@]}"; do [ -n "${allowed[$p]+x}" ] && ok=1; done
  [ $verbose = 1 ] && echo "  $f: $pks (${origin[$f]})$([ $ok = 1 ] || echo '  <- NOT INSTALLED BY install-deps.sh')"
  [ $ok = 1 ] && continue
  fail_lines+=("check-deps: $f (${origin[$f]}) is from $pks, which $(if [ -n "$deps" ]; then basename "$deps"; else echo install-deps.sh; fi) neither lists nor gets as a hard dependency")
done

for root in "${!outside[@]}"; do
  echo "check-deps: ${outside[$root]} file(s) under $root belong to no Debian package (allowed: not installed by apt)"
done | sort
# The Python package's PyPI modules, where the build has the package: each must import.
if grep -q '^CONVLAB_PYTHON:BOOL=ON' "$build/CMakeCache.txt"; then
  py=$(sed -n 's/^Python_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")
  for m in $(bash "$here/install-deps.sh" --list-pip); do
    "${py:-python3}" -c "import $m" 2>/dev/null ||
      fail_lines+=("check-deps: the Python module '$m' does not import in ${py:-python3}: scripts/install-deps.sh installs it")
  done
fi
if [ ${#fail_lines[@]} -gt 0 ]; then
  printf '%s\n' "${fail_lines[@]}"
  echo "check-deps: FAILED: ${#fail_lines[@]} file(s) a fresh machine would lack; add their packages to scripts/install-deps.sh" >&2
  exit 1
fi
echo "check-deps: ok: $checked files from ${#listed[@]} listed packages and their hard dependencies ($outside_n outside dpkg)"
exit 0
