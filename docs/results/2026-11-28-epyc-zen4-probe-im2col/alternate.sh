#!/bin/bash
# usage: alternate.sh "BIN_A BIN_B" DIR ALGO ROUNDS LAYER...
# Times ALGO on each LAYER (batch 16, 2 threads, `convlab conv --reps 7` medians) with the convlab binaries
# BIN_A and BIN_B alternately, ROUNDS times each, and prints each binary's median of the rounds with them all.
bins=$1 dir=$2 algo=$3 n=$4
shift 4
for l in "$@"; do
  declare -A acc=()
  for k in $(seq "$n"); do
    for b in $bins; do
      acc[$b]+=" $("$b" conv "$l" --batch 16 --algo "$algo" --dir "$dir" --reps 7 --threads 2 2>&1 |
                   grep -oE 'median [0-9.]+ ms' | grep -oE '[0-9.]+')"
    done
  done
  for b in $bins; do
    echo "$l $dir $algo $b: $(echo ${acc[$b]} | tr ' ' '\n' | sort -n |
      awk '{a[NR]=$1} END {printf "median %.3f (", a[int((NR+1)/2)]; for (i=1;i<=NR;i++) printf "%s ", a[i]; printf ")"}')"
  done
done
