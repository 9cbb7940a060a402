#!/usr/bin/env bash
# The README's main-job command: install what is missing, build, run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
exec ./build/convlab demo "$@"
