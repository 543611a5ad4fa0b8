#!/usr/bin/env bash
# Builds tlrt and runs every test: the ctest suites (tests labelled gpu skip visibly when no CUDA
# device is visible; every skipped sub-test is listed with its reason), then the ABI fuzzer and the
# cpu suites on the reference backend under AddressSanitizer and UndefinedBehaviorSanitizer in a
# build of their own, then the suites of several threads at once under ThreadSanitizer in another.
#   scripts/run-tests.sh [BUILD_DIR]          TLRT_SKIP_FUZZ=1 leaves the fuzzer out,
#                                             TLRT_SKIP_ASAN_SUITES=1 the sanitized cpu suites,
#                                             TLRT_SKIP_TSAN=1 the ThreadSanitizer suites
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The CMake install-deps.sh put in the user's pip location when the system's is too old.
USER_BIN=$(python3 -c 'import os, site; print(os.path.join(site.getuserbase(), "bin"))' 2>/dev/null ||
  true)
if [ -n "$USER_BIN" ] && [ -x "$USER_BIN/cmake" ]; then export PATH="$USER_BIN:$PATH"; fi
BUILD=${1:-build}
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j "$(nproc)"
rc=0
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)" --timeout 1500 || rc=$?
scripts/skip-report.sh "$BUILD"
[ $rc -ne 0 ] && exit $rc
if [ "${TLRT_SKIP_FUZZ:-0}" != 1 ]; then
  scripts/fuzz-sanitized.sh "$BUILD-asan"
fi
if [ "${TLRT_SKIP_ASAN_SUITES:-0}" != 1 ]; then
  scripts/suites-sanitized.sh "$BUILD-asan"
fi
if [ "${TLRT_SKIP_TSAN:-0}" != 1 ]; then
  scripts/threads-sanitized.sh "$BUILD-tsan"
fi
