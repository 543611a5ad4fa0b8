#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build and test tlrt: a C++17 compiler,
# CMake, Ninja, GoogleTest and binutils (nm, for the symbol test); with a CUDA toolkit, the
# cudnn-frontend headers (the include/ folder of the nvidia-cudnn-frontend wheel, unpacked into
# .deps/cudnn-frontend). The CUDA toolkit is optional: without it tlrt builds the reference backend
# only. Does nothing when everything is present.
set -eu
need=()
command -v g++ >/dev/null || need+=(g++)
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v nm >/dev/null || need+=(binutils)
[ -f /usr/include/gtest/gtest.h ] || [ -d /usr/src/googletest ] || need+=(libgtest-dev)
# FFTW's quad-precision build: the oracle of tlrt-parity's FFT rows (never linked by libtlrt).
[ -f /usr/include/fftw3.h ] || need+=(libfftw3-dev)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
fi
# The wheel carries the headers of one cudnn-frontend release; the version is pinned so that every
# machine compiles the same graph API. A failed download leaves the build without it (reported by
# CMake), never a failed install.
CUDNN_FRONTEND_VERSION=1.32.0
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FRONTEND="$ROOT/.deps/cudnn-frontend"
if { command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; } &&
  [ ! -f "$FRONTEND/include/cudnn_frontend.h" ]; then
  PIP=$(command -v pip3 || command -v pip || true)
  if [ -z "$PIP" ] && command -v python3 >/dev/null; then PIP="python3 -m pip"; fi
  if [ -n "$PIP" ]; then
    wheels=$(mktemp -d)
    if $PIP download -q --no-deps -d "$wheels" "nvidia-cudnn-frontend==$CUDNN_FRONTEND_VERSION"; then
      rm -rf "$FRONTEND.tmp" && mkdir -p "$FRONTEND.tmp"
      python3 - "$wheels" "$FRONTEND.tmp" <<'PY'
import os, sys, zipfile
wheels, dest = sys.argv[1], sys.argv[2]
wheel = next(f for f in os.listdir(wheels) if f.endswith(".whl"))
with zipfile.ZipFile(os.path.join(wheels, wheel)) as z:
    members = [n for n in z.namelist() if n.startswith("include/")]
    z.extractall(dest, members)
    for name in z.namelist():
        if name.endswith("LICENSE") or name.endswith("LICENSE.txt"):
            z.extract(name, dest)
PY
      rm -rf "$FRONTEND" && mv "$FRONTEND.tmp" "$FRONTEND"
      echo "cudnn-frontend $CUDNN_FRONTEND_VERSION headers in $FRONTEND/include"
    else
      echo "note: could not download nvidia-cudnn-frontend; building without it"
    fi
    rm -rf "$wheels"
  fi
fi
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "note: nvcc is at /usr/local/cuda/bin; the build finds it there"
fi
