#!/usr/bin/env bash
# Configures the reference backend (no CUDA, no bench) with sanitizer flags in a build directory of
# its own and builds the given targets; the sanitizer scripts share it.
#
#   scripts/sanitized-build.sh BUILD_DIR "COMPILE_FLAGS" "LINK_FLAGS" TARGET...
#
# Environment: JOBS (nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=$1 FLAGS=$2 LINK=$3
shift 3
cmake -S . -B "$BUILD" -G Ninja \
  -DTLRT_ENABLE_CUDA=OFF -DTLRT_BUILD_TESTS=ON -DTLRT_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="$FLAGS" -DCMAKE_CXX_FLAGS="$FLAGS" \
  -DCMAKE_EXE_LINKER_FLAGS="$LINK" -DCMAKE_SHARED_LINKER_FLAGS="$LINK"
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target "$@"
