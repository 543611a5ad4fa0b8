#!/usr/bin/env bash
# Builds tlrt and runs every test. Tests labelled gpu skip visibly when no CUDA device is visible.
#   scripts/run-tests.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD=${1:-build}
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j "$(nproc)"
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)" --timeout 1500
