#!/bin/bash
C=("mobilenet_v2.conv0 fwd" "resnet50.conv1 fwd" "resnet50.res3.3x3_s2 fwd" "resnet50.res3.3x3_s2 bwd-data" "resnet50.res4.3x3_s2 fwd" "resnet50.res4.3x3_s2 bwd-data" "vgg16.conv1_1 fwd")
CONVLAB_ISA=avx2 ./pairs.sh "/tmp/aff/convlab.base /tmp/aff/convlab.queue" 8 "${C[@]}" > /tmp/aff/r-avx2.txt 2>&1
./pairs.sh "/tmp/aff/convlab.base /tmp/aff/convlab.queue" 8 "${C[@]}" > /tmp/aff/r-avx512.txt 2>&1
echo done > /tmp/aff/DONE
