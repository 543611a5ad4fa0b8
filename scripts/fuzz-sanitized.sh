#!/usr/bin/env bash
# Builds tlrt-fuzz on the reference backend with AddressSanitizer and UndefinedBehaviorSanitizer
# (no recovery from undefined behaviour) in its own build directory and runs it twice:
#   1. FUZZ_CALLS calls with the caching allocator (the product configuration), holding one
#      buffer until static destruction so that dropping a buffer after main returns is checked;
#   2. FUZZ_PASSTHROUGH_CALLS calls with TLRT_CACHING_ALLOCATOR=0, where every payload is its
#      own heap block, so AddressSanitizer also sees overruns between payloads (the caching
#      allocator carves payloads out of larger segments, which it cannot see into).
# Exits non-zero on any finding: a call with an unacceptable outcome, a counter leak, a sanitizer
# report, or a leak or error at process exit.
#
#   scripts/fuzz-sanitized.sh [BUILD_DIR]          BUILD_DIR defaults to build-asan
#
# Environment: FUZZ_SEED (1), FUZZ_CALLS (100000), FUZZ_PASSTHROUGH_CALLS (20000; 0 skips the
# second run), FUZZ_TIME_LIMIT (seconds each run's calls may take; 600), JOBS (nproc). When the
# time limit stops a run early, the calls made still count and the script says how many ran.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${1:-build-asan}
SEED=${FUZZ_SEED:-1}
CALLS=${FUZZ_CALLS:-100000}
PASSTHROUGH_CALLS=${FUZZ_PASSTHROUGH_CALLS:-20000}
TIME_LIMIT=${FUZZ_TIME_LIMIT:-600}
JOBS=${JOBS:-$(nproc)}
SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
SANITIZE_LINK="-fsanitize=address,undefined"

start=$(date +%s)
JOBS=$JOBS scripts/sanitized-build.sh "$BUILD" "$SANITIZE" "$SANITIZE_LINK" tlrt-fuzz
echo "fuzz-sanitized: build $(($(date +%s) - start)) s"

# detect_leaks: leaks at the parent's exit fail the run (children leave through _exit).
# allocator_may_return_null: a huge request must reach tlrt's out-of-memory path.
# quarantine_size_mb: a smaller quarantine keeps the parent small, which keeps fork() cheap.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:allocator_may_return_null=1:quarantine_size_mb=32:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

failures=0
# run NAME SEED CALLS [extra tlrt-fuzz arguments...]
run() {
  local name=$1 seed=$2 calls=$3
  shift 3
  local summary="$BUILD/fuzz-$name.txt" began status last
  began=$(date +%s)
  set +e
  "$BUILD/tools/fuzz/tlrt-fuzz" --backend cpu --seed "$seed" --calls "$calls" \
    --time-limit "$TIME_LIMIT" "$@" | tee "$summary"
  status=${PIPESTATUS[0]}
  set -e
  echo "fuzz-sanitized: $name run $(($(date +%s) - began)) s, exit status $status"
  last=$(tail -n 1 "$summary")
  if ! [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    echo "fuzz-sanitized: $name FAILED: the run ended without its summary (see the output above)"
    failures=$((failures + 1))
    return
  fi
  if grep -q "stopped by --time-limit" "$summary"; then
    echo "fuzz-sanitized: $name: note: the time limit stopped the run after" \
         "$((BASH_REMATCH[1] + BASH_REMATCH[2])) calls"
  fi
  if [[ "$status" -ne 0 ]]; then
    if [[ "${BASH_REMATCH[2]}" -eq 0 ]]; then
      echo "fuzz-sanitized: $name FAILED: no call failed, but the process exited with status" \
           "$status (a sanitizer or leak report at exit; see above)"
    else
      echo "fuzz-sanitized: $name FAILED: ${BASH_REMATCH[2]} findings"
    fi
    failures=$((failures + 1))
  fi
}

run caching "$SEED" "$CALLS" --exit-holding-buffer
if [[ "$PASSTHROUGH_CALLS" -gt 0 ]]; then
  export TLRT_CACHING_ALLOCATOR=0
  run passthrough "$((SEED + 1))" "$PASSTHROUGH_CALLS"
  unset TLRT_CACHING_ALLOCATOR
fi

echo "fuzz-sanitized: total $(($(date +%s) - start)) s"
if [[ "$failures" -ne 0 ]]; then
  echo "fuzz-sanitized: FAILED"
  exit 1
fi
echo "fuzz-sanitized: passed"
