#!/bin/bash
# ResNet-50 (AVX-512) and MobileNetV2 (AVX2 path) network tables, as run_networks.sh of
# docs/results/2026-11-28-epyc-zen4-gemm-grid-pack/ makes them.
cd "$(dirname "$0")/../../.."
Z=${Z:-/tmp/z}; mkdir -p $Z
CONVLAB=${CONVLAB:-./build/convlab}
run() { # name envprefix args...
  local name=$1; shift
  ${PINGPONG:-/tmp/pingpong} > $Z/$name.ping.before
  env "$@" > $Z/$name.log 2>&1
  ${PINGPONG:-/tmp/pingpong} > $Z/$name.ping.after
  python3 scripts/cpu_vs_onednn.py $Z/$name.json > $Z/$name.md
}
run resnet50-b16 X=1 $CONVLAB layers resnet50 --batch 16 --threads 2 --json $Z/resnet50-b16.json
run mobilenet_v2-b16-avx2 CONVLAB_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2 $CONVLAB layers mobilenet_v2 --batch 16 --threads 2 --json $Z/mobilenet_v2-b16-avx2.json
echo done > $Z/DONE
