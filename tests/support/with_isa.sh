#!/usr/bin/env bash
# usage: with_isa.sh ISA CONVLAB COMMAND [ARGS...]
# Runs COMMAND with CONVLAB_ISA=ISA (the run-time ISA cap, core/device.hpp), so
# the narrower dispatch paths (no AVX-512; no AVX2) are tested on a CPU that has
# more. Exits 77 (CTest's SKIP_RETURN_CODE) with the reason when this CPU lacks
# ISA itself: convlab's own answer decides, not a guess from /proc/cpuinfo.
set -uo pipefail
isa=$1 convlab=$2
shift 2
if ! err=$(CONVLAB_ISA=$isa "$convlab" algos 2>&1 >/dev/null); then
  case $err in
    *"but this CPU"*"has only"*) echo "skipped: $err"; exit 77 ;;
    *) echo "with_isa.sh: convlab algos failed under CONVLAB_ISA=$isa: $err" >&2; exit 1 ;;
  esac
fi
export CONVLAB_ISA=$isa
exec "$@"
