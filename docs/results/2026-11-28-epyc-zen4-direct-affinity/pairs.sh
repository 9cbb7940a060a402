#!/bin/bash
# usage: pairs.sh "BIN_A BIN_B" ROUNDS "LAYER DIR"...
# Per round: the threads' cache-line round trip (pingpong), then each binary's `convlab conv --reps 7` median
# on each (layer, direction) with cpu.direct, alternately; one line per round and case.
bins=$1 n=$2
shift 2
cases=("$@")
for k in $(seq "$n"); do
  ping=$(${PINGPONG:-/tmp/pingpong} | grep -oE '[0-9.]+')
  for c in "${cases[@]}"; do
    read -r layer dir <<< "$c"
    line="round $k ping $ping $layer $dir:"
    for b in $bins; do
      t=$("$b" conv "$layer" --batch 16 --algo ${ALGO:-cpu.direct} --dir "$dir" --reps 7 --threads 2 2>&1 | grep -oE 'median [0-9.]+ ms' | grep -oE '[0-9.]+')
      line+=" $(basename $b) $t"
    done
    echo "$line"
  done
done
