#!/bin/bash
# usage: pingab.sh N DIR ALGO LAYER BIN...
# N rounds; in each, every convlab binary BIN times ALGO on LAYER once (batch 16, 2 threads,
# `convlab conv --reps 5` median), the threads' placement sampled just before (`/tmp/m/pingpong`, the
# thread-placement file's pingpong.c). Prints "ROUND_TRIP_NS BINARY MEDIAN_MS" per run; the file's
# summary calls a run far above 200 ns, near below:
#   awk '{print ($1 > 200 ? "far" : "near"), $2, $3}' LOG | sort -k1,2 -k3n
n=$1 dir=$2 algo=$3 layer=$4
shift 4
for k in $(seq "$n"); do
  for b in "$@"; do
    p=$(/tmp/m/pingpong | awk '{print $3}')
    t=$("$b" conv "$layer" --batch 16 --algo "$algo" --dir "$dir" --reps 5 --threads 2 2>&1 |
        grep -oE 'median [0-9.]+ ms' | grep -oE '[0-9.]+')
    echo "$p $(basename "$b") $t"
  done
done
