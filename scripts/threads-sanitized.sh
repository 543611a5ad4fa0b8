#!/usr/bin/env bash
# Builds tlrt with ThreadSanitizer in its own build directory and runs the suites whose threads
# share runtime state: several threads calling the ABI at once (tests/threads_test.cpp), the
# caching allocator's and the plan cache's concurrent tests and the reference backend's host thread
# ranges. Exits non-zero on a failing test or any data race, lock-order inversion or other
# ThreadSanitizer report.
#
#   scripts/threads-sanitized.sh [BUILD_DIR]          BUILD_DIR defaults to build-tsan
#
# With TLRT_TSAN_BACKEND=cuda (scripts/gpu-check.sh's tsan stage, on a machine with a device) the
# build has the CUDA backend, its host code (.cpp) instrumented, and the threads suite runs on the
# device: the locks around the cuBLAS, cuFFT and cuDNN handles, the plan caches and the pinned
# staging, which the reference backend never takes. The other suites do not depend on the backend
# and run in the default mode (CI). A run whose sub-tests all skip (no device) fails with status 77:
# nothing was checked.
#
# Environment: JOBS (nproc), TLRT_TSAN_BACKEND (reference), CUDA_ARCHS (90, with cuda).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${1:-build-tsan}
JOBS=${JOBS:-$(nproc)}
SANITIZE="-fsanitize=thread -fno-omit-frame-pointer"

BACKEND=${TLRT_TSAN_BACKEND:-reference}
case $BACKEND in
reference) DEVICE=cpu ARCHS="" TARGETS=(threads_test caching_allocator_test plan_cache_test
  host_parallel_test) ;;
cuda) DEVICE=cuda ARCHS=${CUDA_ARCHS:-90} TARGETS=(threads_test) ;;
*)
  echo "threads-sanitized: TLRT_TSAN_BACKEND=$BACKEND is neither reference nor cuda" >&2
  exit 2
  ;;
esac

start=$(date +%s)
# --as-needed as in the plain builds (Debian's compiler drops it when a sanitizer is on): without
# it libtlrt would need the driver's library (linked from the toolkit's stub) to load at all.
JOBS=$JOBS SANITIZED_CUDA_ARCHS=$ARCHS scripts/sanitized-build.sh "$BUILD" "$SANITIZE" \
  "-fsanitize=thread -Wl,--as-needed" "${TARGETS[@]}"
echo "threads-sanitized: $BACKEND backend, build $(($(date +%s) - start)) s"

# halt_on_error: the first report ends the process with exit status 66.
# second_deadlock_stack: both stacks of a lock-order inversion.
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1"
failures=0 skipped=0
# run NAME [gtest arguments...]: one suite's binary on the backend.
run() {
  local name=$1 status
  shift
  set +e
  TLRT_DEVICE=$DEVICE "$BUILD/tests/${name}_test" "$@"
  status=$?
  set -e
  echo "threads-sanitized: $name exit status $status"
  # 77: every sub-test skipped (tests/test_main.cpp).
  if [[ "$status" -eq 77 ]]; then
    skipped=$((skipped + 1))
  elif [[ "$status" -ne 0 ]]; then
    failures=$((failures + 1))
  fi
}
run threads
if [[ "$BACKEND" = reference ]]; then
  run caching_allocator
  run plan_cache
  # ThreadSanitizer cannot follow a child that starts threads after a fork of a threaded process,
  # which is what the fork test checks; it runs in the plain builds.
  echo "threads-sanitized: note: HostParallel.AForkedChildRunsLoopsWithoutTheWorkers left out" \
    "(threads started in a forked child are outside ThreadSanitizer's support)"
  run host_parallel --gtest_filter=-HostParallel.AForkedChildRunsLoopsWithoutTheWorkers
fi

echo "threads-sanitized: total $(($(date +%s) - start)) s"
if [[ "$failures" -ne 0 ]]; then
  echo "threads-sanitized: FAILED ($failures suites, $BACKEND backend)"
  exit 1
fi
if [[ "$skipped" -ne 0 ]]; then
  echo "threads-sanitized: SKIPPED: every sub-test of $skipped suites skipped ($BACKEND backend)"
  exit 77
fi
echo "threads-sanitized: passed ($BACKEND backend)"
