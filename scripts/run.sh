#!/usr/bin/env bash
# The README's main-job command: install what is missing, build, run the main job:
# `convlab report` -- AlexNet's per-layer algorithm comparison, then training rounds
# under each algorithm-selection policy (default, get, find, find-context, fixed:...),
# interleaved, with 95 % intervals, the step's limit and the in-context find,
# written to results/ (report.md, report.html, train.json/csv, layers.json/csv). Extra arguments
# go to `convlab report` (e.g. --batch 32 --iters 5). `./build/convlab demo` is still
# the quick every-algorithm check.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
exec ./build/convlab report --net alexnet --batch 8 --iters 6 --warmup 1 "$@"
