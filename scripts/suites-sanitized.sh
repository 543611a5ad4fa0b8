#!/usr/bin/env bash
# Builds every test suite on the reference backend with AddressSanitizer and UndefinedBehavior-
# Sanitizer (no recovery from undefined behaviour) and runs the ctest entries labelled cpu: the
# reference kernels, the ABI through the Lean runtime double, the runtime, the allocator, the
# tools' command lines. Exits non-zero on a failing entry, which includes any sanitizer report
# and any leak at a test process's exit. An entry whose only failure is LeakSanitizer's tracer
# crashing at exit (scripts/lsan-tracer-crash.sh) runs once more, with a line saying so.
#
# It shares its build directory with scripts/fuzz-sanitized.sh (the same flags): run after it,
# only the suites are left to build.
#
#   scripts/suites-sanitized.sh [BUILD_DIR]          BUILD_DIR defaults to build-asan
#
# Left out: the install_* entries, which build consumer programs without the sanitizers against
# the instrumented library (the sanitizer runtime would have to come first in every consumer);
# they run in the plain build.
#
# Environment: JOBS (nproc).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${1:-build-asan}
JOBS=${JOBS:-$(nproc)}
SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
SANITIZE_LINK="-fsanitize=address,undefined"

start=$(date +%s)
JOBS=$JOBS scripts/sanitized-build.sh "$BUILD" "$SANITIZE" "$SANITIZE_LINK" all
echo "suites-sanitized: build $(($(date +%s) - start)) s"

# allocator_may_return_null: the suites' huge requests must reach tlrt's out-of-memory paths.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:allocator_may_return_null=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
began=$(date +%s)
rc=0
log="$BUILD/suites-sanitized.log"
ctest --test-dir "$BUILD" -L cpu -E '^install_' --output-on-failure -j "$JOBS" --timeout 1500 |
  tee "$log" || rc=$?
echo "suites-sanitized: run $(($(date +%s) - began)) s, total $(($(date +%s) - start)) s"
# LeakSanitizer's tracer now and then crashes at a process's exit, failing an entry that passed
# (scripts/lsan-tracer-crash.sh). When that is all that failed, those entries run once more, and
# only a second clean run passes them.
if [[ "$rc" -ne 0 ]]; then
  if crashed=$(scripts/lsan-tracer-crash.sh "$log"); then
    echo "suites-sanitized: $(wc -l <<<"$crashed") entries failed only by LeakSanitizer's own" \
      "tracer crash at exit (not a finding): $(paste -sd' ' <<<"$crashed"); running them once more"
    rc=0
    ctest --test-dir "$BUILD" -R "^($(paste -sd'|' <<<"$crashed"))\$" --output-on-failure \
      --timeout 1500 || rc=$?
  else
    echo "suites-sanitized: $crashed"
  fi
fi
scripts/skip-report.sh "$BUILD"
if [[ "$rc" -ne 0 ]]; then
  echo "suites-sanitized: FAILED"
  exit 1
fi
echo "suites-sanitized: passed"
