#!/usr/bin/env bash
# The GPU loop, in one device call: configure and build for sm_90, run the gpu (and cpu) test
# suites, run the gpu suites again under compute-sanitizer memcheck, run tlrt-parity and
# tlrt-bench, and leave logs, JSON and a summary under $OUT (default ./gpu-out).
#
#   OUT=/some/dir scripts/gpu-check.sh [--quick]     (--quick: skip memcheck and the bench)
#
# GoogleTest comes from an installed package or from .deps/googletest (a copy of Debian's
# /usr/src/googletest carried to machines that lack it).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
QUICK=0
[ "${1:-}" = "--quick" ] && QUICK=1
LOG="$OUT/gpu-check.log"
SUMMARY="$OUT/summary.txt"
: >"$LOG"
: >"$SUMMARY"
JOBS=$(nproc)
BUILD=build-gpu

say() { echo "$*" | tee -a "$SUMMARY"; }
run() {  # run NAME CMD... : output to the log, status to the summary
  local name=$1
  shift
  echo "===== $name: $*" >>"$LOG"
  local t0=$SECONDS
  "$@" >>"$LOG" 2>&1
  local rc=$?
  say "$(printf '%-28s rc=%-3s %4ss' "$name" "$rc" $((SECONDS - t0)))"
  return $rc
}

say "gpu-check $(date -u +%Y-%m-%dT%H:%MZ) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
GTEST_ARGS=()
[ -d .deps/googletest ] && GTEST_ARGS=(-DTLRT_GTEST_SOURCE="$PWD/.deps/googletest")
run configure cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DTLRT_ENABLE_CUDA=ON "${GTEST_ARGS[@]}" || {
  tail -40 "$LOG"
  exit 1
}
run build ninja -C "$BUILD" -j "$JOBS" || {
  grep -E 'error|FAILED' "$LOG" | head -40
  exit 1
}

run ctest-gpu ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 900
grep -E 'tests passed|tests failed|Skipped|\*\*\*Failed|Not Run' "$LOG" | tail -6 | tee -a "$SUMMARY"
run ctest-cpu ctest --test-dir "$BUILD" -L cpu --output-on-failure -j 4 --timeout 900
grep -E 'tests passed|tests failed' "$LOG" | tail -1 | tee -a "$SUMMARY"

if [ $QUICK = 0 ]; then
  # Memcheck with the caching allocator in pass-through mode so that every buffer is its own
  # driver allocation and out-of-bounds accesses are visible. Death tests end in exit(1) by
  # design and are left to the plain run.
  export TLRT_CACHING_ALLOCATOR=0
  for t in abi_test elementwise_test reduce_test runtime_gpu_test random_gpu_test; do
    bin=$(find "$BUILD" -name "$t" -type f -perm -u+x | head -1)
    # The 2^32-element cases are left to the plain run: under the checker they take minutes.
    # A cuDNN handle keeps three device allocations (25,352 bytes on the H200) after
    # cudnnDestroy until the context ends, which the leak check reports; its test runs in the
    # plain suite.
    TLRT_DEVICE=cuda run "memcheck-$t" compute-sanitizer --tool memcheck --leak-check full \
      --error-exitcode 99 "$bin" --gtest_filter='-*DeathTest*:*Past2To32*:*Cudnn*'
    grep -E 'ERROR SUMMARY' "$LOG" | tail -1 | tee -a "$SUMMARY"
  done
  unset TLRT_CACHING_ALLOCATOR
fi

LARGE=--large
[ $QUICK = 1 ] && LARGE=
run parity "$BUILD/tools/tlrt-parity" --n 16777216 $LARGE --json "$OUT/parity.json" \
  --markdown "$OUT/parity.md"
grep -E 'ops checked' "$LOG" | tail -1 | tee -a "$SUMMARY"

if [ $QUICK = 0 ]; then
  run bench "$BUILD/bench/tlrt-bench" --out "$OUT" --sweep
  [ -f "$OUT/bench.md" ] && cat "$OUT/bench.md" >>"$SUMMARY"
  # GB/s against size from the sweep in bench.json (skips itself without matplotlib).
  [ -f "$OUT/bench.json" ] && run plot python3 bench/plot_bench.py "$OUT/bench.json" \
    "$OUT/bench_sweep.png"
fi
[ -f "$OUT/parity.md" ] && cat "$OUT/parity.md" >>"$SUMMARY"
echo
cat "$SUMMARY"
