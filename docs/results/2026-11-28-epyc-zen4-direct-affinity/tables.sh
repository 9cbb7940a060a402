#!/bin/bash
# usage: tables.sh SET   (SET: 1 = ResNet-50 AVX-512, MobileNetV2 and ResNet-50 on the AVX2 path;
#                               2 = DenseNet-121 and MobileNetV2, AVX-512; 3 = VGG-16, AVX-512)
# Network tables after the change (convlab layers + scripts/cpu_vs_onednn.py), the threads' round trip around
# each (pingpong.c of docs/results/2026-11-27-epyc-zen5-thread-placement/).
cd "$(dirname "$0")/../../.."  # the repository root
Z=${Z:-/tmp/z}; mkdir -p $Z
CONVLAB=${CONVLAB:-./build/convlab}
AVX2="CONVLAB_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2"
run() { # name net [env...]
  local name=$1 net=$2; shift 2
  ${PINGPONG:-/tmp/pingpong} > $Z/$name.ping.before
  env "$@" $CONVLAB layers $net --batch 16 --threads 2 --json $Z/$name.json > $Z/$name.log 2>&1
  ${PINGPONG:-/tmp/pingpong} > $Z/$name.ping.after
  python3 scripts/cpu_vs_onednn.py $Z/$name.json > $Z/$name.md
}
case "$1" in
  1) run resnet50-b16 resnet50; run mobilenet_v2-b16-avx2 mobilenet_v2 $AVX2; run resnet50-b16-avx2 resnet50 $AVX2 ;;
  2) run densenet121-b16 densenet121; run mobilenet_v2-b16 mobilenet_v2 ;;
  3) run vgg16-b16 vgg16 ;;
  *) echo "usage: tables.sh 1|2|3" >&2; exit 2 ;;
esac
echo done > $Z/DONE
