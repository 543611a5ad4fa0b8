#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build and test tlrt: a C++17 compiler,
# CMake (at least the version CMakeLists.txt requires: from the `cmake` wheel with pip --user when
# the distribution's is older), Ninja, GoogleTest, binutils (nm, for the symbol test),
# clang-format (the format check) and pkg-config; with a CUDA toolkit, the cudnn-frontend headers (the include/ folder of the
# nvidia-cudnn-frontend wheel, unpacked into .deps/cudnn-frontend). The CUDA toolkit is optional:
# without it tlrt builds the reference backend only. Does nothing when everything is present. As a
# user without root or sudo, it prints the apt-get line to have run instead of failing half-way.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# The CMake version the build needs: what CMakeLists.txt's cmake_minimum_required says.
CMAKE_NEEDED=$(sed -n 's/^cmake_minimum_required(VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
# 0 when version $1 >= version $2.
version_at_least() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }
cmake_version() { "$1" --version 2>/dev/null | sed -n 's/^cmake version \([0-9][0-9.]*\).*/\1/p'; }

need=()
command -v g++ >/dev/null || need+=(g++)
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v nm >/dev/null || need+=(binutils)
[ -f /usr/include/gtest/gtest.h ] || [ -d /usr/src/googletest ] || need+=(libgtest-dev)
# FFTW's quad-precision build: the oracle of tlrt-parity's FFT rows (never linked by libtlrt).
[ -f /usr/include/fftw3.h ] || need+=(libfftw3-dev)
# MPFR: the oracle of the configured binary formats (tests/binary_oracle.cpp; never linked by libtlrt).
[ -f /usr/include/mpfr.h ] || need+=(libmpfr-dev)
# clang-format: the format check (ctest -R format_check) skips without it.
command -v clang-format >/dev/null || need+=(clang-format)
# pkg-config and dpkg-deb: the install tests (ctest -R install_) skip without them.
command -v pkg-config >/dev/null || command -v pkgconf >/dev/null || need+=(pkg-config)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then
      SUDO=sudo
    else
      echo "install-deps.sh: these packages are missing: ${need[*]}" >&2
      echo "install-deps.sh: not root and no sudo here; as root (su -c '...'), or ask an" >&2
      echo "  administrator to, run:" >&2
      echo "    apt-get update && apt-get install -y --no-install-recommends ${need[*]}" >&2
      echo "  then run scripts/install-deps.sh again." >&2
      exit 1
    fi
  fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
fi

# CMake: Ubuntu 22.04 and Debian 11 ship one older than the build needs. Then a newer one comes
# from the `cmake` wheel on PyPI, installed with pip into the user's own location (pip --user: no
# root needed); the script says how to put it first on the PATH.
have_cmake=$(cmake_version cmake)
if [ -n "$CMAKE_NEEDED" ] && ! version_at_least "${have_cmake:-0}" "$CMAKE_NEEDED"; then
  user_bin=$(python3 -c 'import site, os; print(os.path.join(site.getuserbase(), "bin"))' 2>/dev/null ||
    echo "$HOME/.local/bin")
  user_cmake="$user_bin/cmake"
  if [ -x "$user_cmake" ] && version_at_least "$(cmake_version "$user_cmake")" "$CMAKE_NEEDED"; then
    echo "CMake $(cmake_version "$user_cmake") is in $user_bin (the one on the PATH is ${have_cmake:-missing})"
  else
    echo "CMake ${have_cmake:-missing} is older than the $CMAKE_NEEDED the build needs;" \
      "installing the cmake wheel with pip --user"
    PIP=$(command -v pip3 || command -v pip || true)
    if [ -z "$PIP" ] && command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1; then
      PIP="python3 -m pip"
    fi
    if [ -z "$PIP" ]; then
      echo "install-deps.sh: no pip to install CMake >= $CMAKE_NEEDED with; install python3-pip" >&2
      echo "  (apt-get install python3-pip) and run this script again, or install CMake" >&2
      echo "  >= $CMAKE_NEEDED from https://cmake.org/download/" >&2
      exit 1
    fi
    # --break-system-packages: newer pip refuses --user installs on Debian 12 / Ubuntu 24.04
    # (PEP 668) without it; older pip does not know it.
    if ! $PIP install --user -q "cmake>=$CMAKE_NEEDED" 2>/dev/null; then
      $PIP install --user -q --break-system-packages "cmake>=$CMAKE_NEEDED"
    fi
  fi
  case ":$PATH:" in
  *":$user_bin:"*) ;;
  *)
    echo "note: scripts/run-demo.sh and run-tests.sh use that CMake by themselves; to use it by hand,"
    echo "  put $user_bin first on the PATH (in this shell and in ~/.profile):"
    echo "    export PATH=\"$user_bin:\$PATH\""
    ;;
  esac
fi
# The wheel carries the headers of one cudnn-frontend release; the version is pinned so that every
# machine compiles the same graph API. A failed download leaves the build without it (reported by
# CMake), never a failed install.
CUDNN_FRONTEND_VERSION=1.32.0
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
# What scripts/gpu-check.sh carries to a GPU machine that may lack the packages: GoogleTest's
# sources and MPFR/GMP (headers and shared libraries, the configured-format oracle), copied from
# this machine's packages into .deps.
if { command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; }; then
  if [ ! -d "$ROOT/.deps/googletest" ] && [ -d /usr/src/googletest ]; then
    mkdir -p "$ROOT/.deps" && cp -r /usr/src/googletest "$ROOT/.deps/googletest"
  fi
  LIBDIR=$(dirname "$(find /usr/lib /usr/lib64 -name 'libmpfr.so.*' 2>/dev/null | head -n1)" 2>/dev/null || true)
  GMP_H=$(find /usr/include -name gmp.h 2>/dev/null | head -n1)
  if [ ! -d "$ROOT/.deps/mpfr" ] && [ -f /usr/include/mpfr.h ] && [ -n "$GMP_H" ] &&
    [ -n "$LIBDIR" ] && [ "$LIBDIR" != . ]; then
    mkdir -p "$ROOT/.deps/mpfr.tmp/include" "$ROOT/.deps/mpfr.tmp/lib"
    cp /usr/include/mpfr.h "$GMP_H" "$ROOT/.deps/mpfr.tmp/include/"
    cp -L "$LIBDIR"/libmpfr.so.* "$LIBDIR"/libgmp.so.* "$ROOT/.deps/mpfr.tmp/lib/"
    mv "$ROOT/.deps/mpfr.tmp" "$ROOT/.deps/mpfr"
    echo "MPFR and GMP for GPU machines in $ROOT/.deps/mpfr"
  fi
fi
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "note: nvcc is at /usr/local/cuda/bin; the build finds it there"
fi
