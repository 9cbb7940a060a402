#!/bin/bash
# Network tables after the change (convlab layers + scripts/cpu_vs_onednn.py), the threads' round trip around each
# (pingpong.c of docs/results/2026-11-27-epyc-zen5-thread-placement/).
cd "$(dirname "$0")/../../.."  # the repository root
Z=${Z:-/tmp/z3}; mkdir -p $Z
CONVLAB=${CONVLAB:-./build/convlab}
run() { local name=$1; shift
  ${PINGPONG:-/tmp/pingpong} > $Z/$name.ping.before; env "$@" > $Z/$name.log 2>&1; ${PINGPONG:-/tmp/pingpong} > $Z/$name.ping.after
  python3 scripts/cpu_vs_onednn.py $Z/$name.json > $Z/$name.md; }
run resnet50-b16 X=1 $CONVLAB layers resnet50 --batch 16 --threads 2 --json $Z/resnet50-b16.json
run mobilenet_v2-b16-avx2 CONVLAB_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2 $CONVLAB layers mobilenet_v2 --batch 16 --threads 2 --json $Z/mobilenet_v2-b16-avx2.json
run resnet50-b16-avx2 CONVLAB_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2 $CONVLAB layers resnet50 --batch 16 --threads 2 --json $Z/resnet50-b16-avx2.json
echo done > $Z/DONE
