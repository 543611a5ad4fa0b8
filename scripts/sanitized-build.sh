#!/usr/bin/env bash
# Configures tlrt (no bench) with sanitizer flags on its C and C++ code in a build directory of its
# own and builds the given targets; the sanitizer scripts share it. The reference backend alone,
# unless SANITIZED_CUDA_ARCHS names the CUDA architectures to build for: then the CUDA backend too,
# its .cpp files instrumented and its .cu files (kernels and their host stubs) compiled as usual.
#
#   scripts/sanitized-build.sh BUILD_DIR "COMPILE_FLAGS" "LINK_FLAGS" TARGET...
#
# Environment: JOBS (nproc), SANITIZED_CUDA_ARCHS (empty).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=$1 FLAGS=$2 LINK=$3
shift 3
BACKEND=(-DTLRT_ENABLE_CUDA=OFF)
if [ -n "${SANITIZED_CUDA_ARCHS:-}" ]; then
  BACKEND=(-DTLRT_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$SANITIZED_CUDA_ARCHS")
fi
mapfile -t DEPS < <(scripts/deps-cmake-args.sh)
cmake -S . -B "$BUILD" -G Ninja "${BACKEND[@]}" "${DEPS[@]}" \
  -DTLRT_BUILD_TESTS=ON -DTLRT_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="$FLAGS" -DCMAKE_CXX_FLAGS="$FLAGS" \
  -DCMAKE_EXE_LINKER_FLAGS="$LINK" -DCMAKE_SHARED_LINKER_FLAGS="$LINK"
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target "$@"
