#!/bin/bash
# get's share within 10 % of find, two convlab binaries alternated, ROUNDS rounds (default 4): each round
# measures one fresh probe per network and binary (get_vs_find.py) against the find times of the
# `convlab layers --json` files in Z9 (MobileNetV2, DenseNet-121), Z8 (ResNet-50) and GV (ResNet-50 and
# MobileNetV2 on the AVX2 path).   usage: alternate_get.sh BIN_A BIN_B [ROUNDS]
G=$(cd "$(dirname "$0")" && pwd)/../2026-11-28-epyc-zen4-probe-im2col/get_vs_find.py
for r in $(seq 1 "${3:-4}"); do
  for b in "$1" "$2"; do
    echo "== $b round $r"
    python3 "$G" "$b" "${Z9:-/tmp/m/z9}" 1 mobilenet_v2 densenet121 | grep repeat
    python3 "$G" "$b" "${Z8:-/tmp/m/z8}" 1 resnet50 | grep repeat
    python3 "$G" "$b" "${GV:-/tmp/m/gv}" 1 --avx2 resnet50 mobilenet_v2 | grep repeat | sed 's/^/avx2 /'
  done
done
