#!/usr/bin/env bash
# Builds the reference backend with ThreadSanitizer in its own build directory and runs the
# suites whose threads share runtime state: several threads calling the ABI at once
# (tests/threads_test.cpp), the caching allocator's and the plan cache's concurrent tests and the
# reference backend's host thread ranges. Exits non-zero on a failing test or any data race,
# lock-order inversion or other ThreadSanitizer report.
#
#   scripts/threads-sanitized.sh [BUILD_DIR]          BUILD_DIR defaults to build-tsan
#
# Environment: JOBS (nproc).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${1:-build-tsan}
JOBS=${JOBS:-$(nproc)}
SANITIZE="-fsanitize=thread -fno-omit-frame-pointer"

start=$(date +%s)
JOBS=$JOBS scripts/sanitized-build.sh "$BUILD" "$SANITIZE" "-fsanitize=thread" \
  threads_test caching_allocator_test plan_cache_test host_parallel_test
echo "threads-sanitized: build $(($(date +%s) - start)) s"

# halt_on_error: the first report ends the process with exit status 66.
# second_deadlock_stack: both stacks of a lock-order inversion.
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1"
failures=0
# run NAME [gtest arguments...]: one suite's binary on the reference backend.
run() {
  local name=$1 status
  shift
  set +e
  TLRT_DEVICE=cpu "$BUILD/tests/${name}_test" "$@"
  status=$?
  set -e
  echo "threads-sanitized: $name exit status $status"
  if [[ "$status" -ne 0 ]]; then failures=$((failures + 1)); fi
}
run threads
run caching_allocator
run plan_cache
# ThreadSanitizer cannot follow a child that starts threads after a fork of a threaded process,
# which is what the fork test checks; it runs in the plain builds.
echo "threads-sanitized: note: HostParallel.AForkedChildRunsLoopsWithoutTheWorkers left out" \
     "(threads started in a forked child are outside ThreadSanitizer's support)"
run host_parallel --gtest_filter=-HostParallel.AForkedChildRunsLoopsWithoutTheWorkers

echo "threads-sanitized: total $(($(date +%s) - start)) s"
if [[ "$failures" -ne 0 ]]; then
  echo "threads-sanitized: FAILED ($failures suites)"
  exit 1
fi
echo "threads-sanitized: passed"
