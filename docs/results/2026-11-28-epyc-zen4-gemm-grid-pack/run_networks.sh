#!/bin/bash
cd "$(dirname "$0")/../../.."
Z=${Z:-/tmp/z}; mkdir -p $Z
# The five network tables of this folder: `convlab layers` and scripts/cpu_vs_onednn.py, the threads' placement
# measured around each (pingpong.c of docs/results/2026-11-27-epyc-zen5-thread-placement/).
run() { # name envprefix args...
  local name=$1; shift
  ${PINGPONG:-/tmp/pingpong} > $Z/$name.ping.before
  env "$@" > $Z/$name.log 2>&1
  ${PINGPONG:-/tmp/pingpong} > $Z/$name.ping.after
  python3 scripts/cpu_vs_onednn.py $Z/$name.json > $Z/$name.md
}
run mobilenet_v2-b16-avx2 CONVLAB_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2 ./build/convlab layers mobilenet_v2 --batch 16 --threads 2 --json $Z/mobilenet_v2-b16-avx2.json
run mobilenet_v2-b16 X=1 ./build/convlab layers mobilenet_v2 --batch 16 --threads 2 --json $Z/mobilenet_v2-b16.json
run densenet121-b16 X=1 ./build/convlab layers densenet121 --batch 16 --threads 2 --json $Z/densenet121-b16.json
run resnet50-b16-avx2 CONVLAB_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2 ./build/convlab layers resnet50 --batch 16 --threads 2 --json $Z/resnet50-b16-avx2.json
run resnet50-b16 X=1 ./build/convlab layers resnet50 --batch 16 --threads 2 --json $Z/resnet50-b16.json
echo done > $Z/DONE
