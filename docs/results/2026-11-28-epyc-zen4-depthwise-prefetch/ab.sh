#!/bin/bash
# Alternates two convlab builds over MobileNetV2's plane-path depthwise layers: find + interleaved.
cd /tmp/cold/ab
for round in 1 2; do
  for isa in avx2 avx512; do
    for b in before after; do
      if [ $isa = avx2 ]; then E="CONVLAB_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2"; else E=""; fi
      env $E /tmp/cold/convlab.$b layers mobilenet_v2.s4.dw mobilenet_v2.s5.dw mobilenet_v2.s6.dw --batch 16 --threads 2 --json $isa-$b-$round.json > $isa-$b-$round.txt 2>&1
    done
  done
done
