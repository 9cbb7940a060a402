#!/usr/bin/env bash
# The README's test command: install what is missing, build, check that every
# file the build resolved comes from a package install-deps.sh installs, run
# every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
bash scripts/check-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
ctest --preset default -j "$jobs"
