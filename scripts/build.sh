#!/usr/bin/env bash
# Configures and builds convlab into build/ (Release). CUDA is compiled whenever
# nvcc is present (CONVLAB_CUDA defaults ON then).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset default >/dev/null
cmake --build --preset default -j "$jobs"
