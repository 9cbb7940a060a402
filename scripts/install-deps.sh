#!/usr/bin/env bash
# Installs the Debian packages convlab needs, only those missing. Safe to re-run.
# The CUDA toolkit (nvcc, cuDNN, cuBLAS, cuFFT) is not a Debian package here: when
# /usr/local/cuda/bin/nvcc exists the build compiles the CUDA half, otherwise it
# configures with CONVLAB_CUDA=OFF and says so.
set -euo pipefail

# The list lives in scripts/deps.txt (shared with scripts/check-deps.sh).
source "$(dirname "$0")/deps.sh"
mapfile -t packages < <(convlab_packages)
[ ${#packages[@]} -gt 0 ] || { echo "install-deps: no packages in scripts/deps.txt" >&2; exit 1; }

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
