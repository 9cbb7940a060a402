#!/usr/bin/env bash
# usage: include_floors_test.sh SRC
# ARCHITECTURE.md's floors: a folder includes only itself and the folders below
# it, core < kernels < algorithms < autotune < net < train < dist < report < tools;
# bench/, examples/ and python/ sit beside tools (anything but tools). Prints every include that
# points up a floor and fails on any.
set -uo pipefail
cd "$1" || exit 1
floors=(core kernels algorithms autotune net train dist report tools)
rank() { local i; for i in "${!floors[@]}"; do [ "${floors[$i]}" = "$1" ] && { echo "$i"; return; }; done; echo -1; }
bad=0
check_folder() {  # folder, highest floor it may include
  local dir=$1 max=$2 f line target r
  while IFS= read -r line; do
    f=${line%%:*}
    target=$(sed -nE 's/.*#include "([a-z_]+)\/.*/\1/p' <<<"${line#*:}")
    r=$(rank "$target")
    [ "$r" -ge 0 ] || continue
    if [ "$r" -gt "$max" ]; then echo "up a floor: $f includes $target/ (${dir} may include up to ${floors[$max]}/)"; bad=1; fi
  done < <(grep -rnE '^\s*#\s*include "[a-z_]+/' "$dir" --include='*.hpp' --include='*.cpp' --include='*.cu' --include='*.inc' | sed -E 's/^([^:]+):[0-9]+:/\1:/')
}
for i in "${!floors[@]}"; do [ -d "${floors[$i]}" ] && check_folder "${floors[$i]}" "$i"; done
# include/ (the public API header), bench/, examples/ and python/ sit beside tools: anything below it.
for extra in include bench examples python; do [ -d "$extra" ] && check_folder "$extra" "$(rank report)"; done
# Every folder holding sources is a floor or one of those beside them, and
# ARCHITECTURE.md states the same floors in the same order.
for d in */; do
  d=${d%/}
  [ -f "$d/CMakeCache.txt" ] && continue  # a build folder
  case " ${floors[*]} include bench examples python tests notebooks scripts docs cmake " in *" $d "*) continue ;; esac
  if [ -n "$(find "$d" -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' | head -1)" ]; then
    echo "not a floor: $d/ holds sources but is not in this test's floors (${floors[*]})"; bad=1
  fi
done
stated=$(printf '%s < ' "${floors[@]}"); stated=${stated% < }
if ! grep -qF "$stated." ARCHITECTURE.md; then echo "ARCHITECTURE.md does not state the floors as: $stated"; bad=1; fi
[ $bad = 0 ] && echo "ok: every include stays on its floor or below (${floors[*]})"
exit $bad
