#!/usr/bin/env bash
# Installs the Debian packages convlab needs, only those missing. Safe to re-run.
# The CUDA toolkit (nvcc, cuDNN, cuBLAS, cuFFT) is not a Debian package here: when
# /usr/local/cuda/bin/nvcc exists the build compiles the CUDA half, otherwise it
# configures with CONVLAB_CUDA=OFF and says so.
set -euo pipefail

# The one package list: scripts/check-deps.sh reads it through `--list` and fails
# when the build resolved a file from a package that is neither listed here nor a
# hard dependency of one listed here. Every package the build uses directly is
# named, even where another listed package already depends on it (cmake-data,
# libopenblas-pthread-dev), so the list says what the build needs.
packages=(
  build-essential cmake cmake-data git pkg-config ccache
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-dev libopenblas-pthread-dev libdnnl-dev libfftw3-dev
  libopenblas0-openmp  # the OpenBLAS convlab links: its threads are libgomp's (cmake/dependencies.cmake)
  ocl-icd-opencl-dev  # libdnnl-dev's dnnl-config.cmake calls find_package(OpenCL); only a Recommends there
  chromium python3    # the report.html rendering test (tests/report/html): headless Chromium, a PNG check in Python
  libopenmpi-dev openmpi-bin  # data-parallel training (dist/comm.hpp): MPI's C API, and mpirun for its tests
)
# Notebook execution in the test suite; CONVLAB_WITH_NOTEBOOKS=0 skips it (and the notebook test).
if [ "${CONVLAB_WITH_NOTEBOOKS:-1}" = 1 ]; then
  packages+=(python3 python3-numpy python3-matplotlib python3-nbformat python3-nbclient python3-ipykernel jupyter-nbconvert)
fi
# The Python package (python/, CONVLAB_PYTHON) and its tests: PyPI's packages for the python3 on
# PATH, installed when one of them does not import. CONVLAB_WITH_PYTHON=0 skips them (a build
# whose python3 lacks nanobind leaves the Python package out and says so). PyTorch's default wheel brings its CUDA
# libraries (about 5 GB with torchvision); it carries its own OpenMP runtime, which convlab's
# kernels then share (python/convlab/__init__.py).
pip_packages=(nanobind==3.1.0 scikit-build-core==1.1.2 pytest==9.2.0 numpy torch==2.15.0 torchvision==0.29.2)
pip_modules="nanobind scikit_build_core pytest numpy torch torchvision"
if [ "${1:-}" = --list ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi
if [ "${1:-}" = --list-pip ]; then
  [ "${CONVLAB_WITH_PYTHON:-1}" = 1 ] && printf '%s\n' $pip_modules
  exit 0
fi

install_pip() {
  [ "${CONVLAB_WITH_PYTHON:-1}" = 1 ] || return 0
  command -v python3 >/dev/null || { echo "install-deps: no python3 on PATH for the Python package" >&2; exit 1; }
  local missing_py=""
  for m in $pip_modules; do
    python3 -c "import $m" 2>/dev/null || missing_py="$missing_py $m"
  done
  [ -z "$missing_py" ] && return 0
  echo "install-deps: installing from PyPI for $(command -v python3) (missing:$missing_py)"
  python3 -m pip --version >/dev/null 2>&1 || { echo "install-deps: python3 has no pip (python3 -m pip)" >&2; exit 1; }
  python3 -m pip install --quiet --disable-pip-version-check "${pip_packages[@]}"
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  install_pip
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
install_pip
