#!/usr/bin/env bash
# Prints, one per line, the CMake arguments that point a configure step at what
# scripts/install-deps.sh left under .deps/ for a machine without the Debian packages: the
# GoogleTest source tree (libgtest-dev's /usr/src/googletest) and MPFR with GMP (libmpfr-dev, the
# configured formats' oracle). Nothing for what the machine has installed.
#
#   mapfile -t ARGS < <(scripts/deps-cmake-args.sh)
set -eu
cd "$(dirname "$0")/.."
if [ -d .deps/googletest ]; then echo "-DTLRT_GTEST_SOURCE=$PWD/.deps/googletest"; fi
if [ ! -f /usr/include/mpfr.h ] && [ -f .deps/mpfr/include/mpfr.h ]; then
  lib=$PWD/.deps/mpfr/lib
  echo "-DTLRT_MPFR_INCLUDE=$PWD/.deps/mpfr/include"
  echo "-DTLRT_MPFR_LIBRARY=$(find "$lib" -maxdepth 1 -name 'libmpfr.so.*' | sort | head -n1)"
  echo "-DTLRT_GMP_LIBRARY=$(find "$lib" -maxdepth 1 -name 'libgmp.so.*' | sort | head -n1)"
fi
