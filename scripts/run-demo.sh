#!/usr/bin/env bash
# Builds tlrt and runs the main job: tlrt-parity on the default backend (the GPU when one is
# visible, otherwise the reference backend against the contract's binary64 formulas), printing
# a table of elements checked, mismatching bits, max ULP and max relative error per op.
#   scripts/run-demo.sh [tlrt-parity options]
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The CMake install-deps.sh put in the user's pip location when the system's is too old.
USER_BIN=$(python3 -c 'import os, site; print(os.path.join(site.getuserbase(), "bin"))' 2>/dev/null ||
  true)
if [ -n "$USER_BIN" ] && [ -x "$USER_BIN/cmake" ]; then export PATH="$USER_BIN:$PATH"; fi
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target tlrt-parity
build/tools/tlrt-parity "$@"
