#!/usr/bin/env bash
# Builds tlrt and runs the main job: tlrt-parity on the default backend (the GPU when one is
# visible, otherwise the reference backend against the contract's binary64 formulas), printing
# a table of elements checked, mismatching bits, max ULP and max relative error per op.
#   scripts/run-demo.sh [tlrt-parity options]
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target tlrt-parity
build/tools/tlrt-parity "$@"
