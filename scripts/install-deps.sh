#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build and test tlrt: a C++17 compiler,
# CMake, Ninja, GoogleTest and binutils (nm, for the symbol test). The CUDA toolkit is optional:
# without it tlrt builds the reference backend only. Does nothing when everything is present.
set -eu
need=()
command -v g++ >/dev/null || need+=(g++)
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v nm >/dev/null || need+=(binutils)
[ -f /usr/include/gtest/gtest.h ] || [ -d /usr/src/googletest ] || need+=(libgtest-dev)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
fi
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "note: nvcc is at /usr/local/cuda/bin; the build finds it there"
fi
