#!/usr/bin/env bash
# The GPU loop: configure and build for sm_90, run the gpu and cpu suites, run every registered gpu
# binary under the compute-sanitizer tools, prove each tool can fail on a planted bug, fuzz the ABI
# on the device, run tlrt-parity and tlrt-bench, and leave logs, JSON and a summary under $OUT
# (default ./gpu-out).
#
#   OUT=/some/dir scripts/gpu-check.sh [STAGE...]
#
# Stages, in order (default: all of them; a device call lasts at most 10 minutes, so a session
# usually splits them over two or three calls, the build directory persisting in between):
#   build      configure and build (always run first; incremental)
#   test       ctest -L gpu (GPU_TEST_JOBS entries at a time, default 4: the suites share the
#              device; binary_gpu runs as four shard entries), then ctest -L cpu
#   memcheck racecheck initcheck synccheck
#              that compute-sanitizer tool over every binary listed in build-gpu/gpu-binaries.txt
#              (written by the test registry, cmake/TlrtTesting.cmake); memcheck with leak check,
#              where a run whose only reports are a cuDNN handle's own leaks passes, saying so
#              (scripts/sanitizer-known-leaks.sh). A suite registered with SANITIZER_SHARDS N runs
#              as N processes, one GoogleTest shard each (NAME_k_of_N); one registered with
#              SANITIZER_LEAVE_OUT TOOL=PATTERN runs under TOOL without those sub-tests, with a
#              line saying so (tests/tools/sanitize-stage-check.sh checks these on a stand-in)
#   canary     each tool on tests/sanitizer_canary.cu's planted bug: the tool must report it
#   tsan       ThreadSanitizer over the CUDA backend's host code: the threads suite on the device
#              (scripts/threads-sanitized.sh with TLRT_TSAN_BACKEND=cuda, build in $BUILD-tsan-cuda)
#   fuzz       tlrt-fuzz on the CUDA backend
#   parity     tlrt-parity with the 2^31+ mode
#   shapes     tlrt-parity on random shapes: --shapes ${PARITY_SHAPES:-16} --n 2^20 (not in the
#              default list; the seed is printed for replay)
#   bench      tlrt-bench with the size sweep (BENCH_SWEEP= leaves it out)
#   baseline   tlrt-bench (no sweep; BENCH_ONLY applies) of another tree, for figures side by
#              side in one session: BASELINE=DIR (default .baseline, e.g. `git archive REF | tar -x -C .baseline`),
#              built in build-baseline, results in $OUT/baseline-bench.{md,json}
#   quick      test + parity without --large
#
# SANITIZE_JOBS=N runs N binaries under a tool at once (default 8), each with a limit of
# SANITIZE_TIMEOUT seconds (default 900); a run the limit ends is reported NOT FINISHED and fails.
# Each run's line goes to $OUT/TOOL-as-ended.txt as it ends (removed when the stage completes and
# the lines are in the summary in the registry's order), so a stage cut short leaves what ended.
# Narrowing (for a family's own check): SANITIZE_ONLY=name[,name] limits the tools to those lines
# of gpu-binaries.txt, BENCH_ONLY=group[,group] and PARITY_ONLY=op[,op] are passed as --only,
# TEST_ONLY=regex as ctest -R to both suites of the test stage, FUZZ_ONLY=group[,word] as
# tlrt-fuzz --only (one family's symbols, with their consistent operands).
#
# GoogleTest comes from an installed package or from .deps/googletest (a copy of Debian's
# /usr/src/googletest carried to machines that lack it); cudnn-frontend from .deps/cudnn-frontend.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
LOG="$OUT/gpu-check.log"
SUMMARY="$OUT/summary.txt"
touch "$LOG" "$SUMMARY"
JOBS=$(nproc)
BUILD=${BUILD:-build-gpu}
STAGES=("$@")
[ ${#STAGES[@]} -eq 0 ] &&
  STAGES=(test memcheck racecheck initcheck synccheck canary tsan fuzz parity bench)
FAILED=0

say() { echo "$*" | tee -a "$SUMMARY"; }
run() { # run NAME CMD... : output to the log, status to the summary
  local name=$1
  shift
  echo "===== $name: $*" >>"$LOG"
  local t0=$SECONDS
  "$@" >>"$LOG" 2>&1
  local rc=$?
  say "$(printf '%-36s rc=%-3s %4ss' "$name" "$rc" $((SECONDS - t0)))"
  [ $rc -ne 0 ] && FAILED=1
  return $rc
}

say "gpu-check $(date -u +%Y-%m-%dT%H:%MZ) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1): ${STAGES[*]}"
# GoogleTest and MPFR from .deps where the machine lacks the packages (scripts/install-deps.sh).
mapfile -t DEPS_ARGS < <(scripts/deps-cmake-args.sh)
run configure cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DTLRT_ENABLE_CUDA=ON "${DEPS_ARGS[@]}" || {
  tail -40 "$LOG"
  exit 1
}
run build ninja -C "$BUILD" -j "$JOBS" || {
  grep -E 'error|FAILED' "$LOG" | head -40
  exit 1
}

# Sub-tests left to the plain run under every tool: death tests end in exit(1) by design, and the
# 2^31- and 2^32-element cases take minutes under a checker.
SANITIZER_FILTER='-*DeathTest*:*Past2To32*:*Past2To31*'

tool_flags() { # the flags every run of a tool uses, canaries included
  case $1 in
  memcheck) echo "--leak-check full" ;;
  racecheck) echo "--racecheck-report all" ;;
  esac
}

sanitize_one() { # sanitize_one TOOL NAME BIN FILTER ENV...: one binary under one tool
  local tool=$1 name=$2 bin=$3 filter=$4
  shift 4
  # Pass-through allocator: every buffer is its own driver allocation, so out-of-bounds
  # accesses and reads of never-written memory are attributed to the right buffer.
  # shellcheck disable=SC2046
  env TLRT_CACHING_ALLOCATOR=0 "$@" timeout "${SANITIZE_TIMEOUT:-900}" compute-sanitizer \
    --tool "$tool" $(tool_flags "$tool") --error-exitcode 99 "$bin" --gtest_filter="$filter" \
    >"$OUT/$tool-$name.log" 2>&1
  local rc=$?
  local what
  what=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool-$name.log" | tail -1)
  # 77: every sub-test the filter left skipped (tests/test_main.cpp): nothing was checked.
  [ $rc -eq 77 ] && what="SKIPPED, every sub-test skipped: $what"
  # 124: the time limit ended the run, so the binary was not checked to its end.
  [ $rc -eq 124 ] && what="NOT FINISHED in ${SANITIZE_TIMEOUT:-900} s: $what"
  # The leaks of a cuDNN handle, kept after cudnnDestroy by cuDNN itself, are the one report a
  # memcheck run may end with and pass (scripts/sanitizer-known-leaks.sh says why and how).
  local verdict
  if [ "$tool" = memcheck ] && [ $rc -eq 99 ] &&
    verdict=$(scripts/sanitizer-known-leaks.sh "$OUT/$tool-$name.log"); then
    rc=0
    what="$what, each a cuDNN handle's own allocation inside cudnnCreate (known; no tlrt allocation)"
    # Records the tool could not print, not counted in its ERROR SUMMARY: said, not hidden.
    if [[ $verdict == *"(and "* ]]; then
      local unprinted=${verdict##*(and }
      what="$what, and ${unprinted%)}"
    fi
  fi
  printf '%-36s rc=%-3s %s\n' "$tool $name" "$rc" "$what" >"$OUT/$tool-$name.result"
  # Also as it ends, so that a stage cut short still leaves the results of the runs that ended.
  cat "$OUT/$tool-$name.result" >>"$OUT/$tool-as-ended.txt"
  return $rc
}

sanitize() { # sanitize TOOL: the tool over every registered gpu binary, SANITIZE_JOBS at a time
  # The registry's words (GoogleTest patterns among them) are split but never globbed.
  local -
  set -f
  local tool=$1
  local filter=$SANITIZER_FILTER
  local jobs=${SANITIZE_JOBS:-8} names=()
  # Each line: NAME PATH VAR=VALUE... [skip=TOOL,...] [shards=N] [leave=TOOL=PATTERN...]
  # (cmake/TlrtTesting.cmake); a suite's settings for the tools and the reasons for them are at its
  # registration in tests/CMakeLists.txt.
  while read -r name bin rest; do
    [ -z "$name" ] && continue
    if [ -n "${SANITIZE_ONLY:-}" ] && [[ ",$SANITIZE_ONLY," != *",$name,"* ]]; then continue; fi
    local env="" skip="" shards=1 own=$filter word
    for word in $rest; do
      case $word in
      skip=*) skip=${word#skip=} ;;
      shards=*) shards=${word#shards=} ;;
      leave="$tool"=*)
        # SANITIZER_FILTER is a negative filter: the pattern joins the sub-tests it leaves out.
        own="$own:${word#leave="$tool"=}"
        say "$(printf '%-36s %s' "$tool $name" "leaves out ${word#leave="$tool"=} by its registration (tests/CMakeLists.txt)")"
        ;;
      leave=*) ;;
      *) env="$env $word" ;;
      esac
    done
    if [[ ",$skip," == *",$tool,"* ]]; then
      say "$(printf '%-36s %s' "$tool $name" "left out by its registration (tests/CMakeLists.txt)")"
      continue
    fi
    if ! [[ $shards =~ ^[1-9][0-9]*$ ]]; then  # the registry writes N >= 2; anything else is a fault
      say "$(printf '%-36s %s' "$tool $name" "FAILED: shards=$shards in gpu-binaries.txt is not a count")"
      FAILED=1
      continue
    fi
    # One process per GoogleTest shard (shards=N), each a run of its own among the parallel ones.
    local k run_name run_env
    for ((k = 1; k <= shards; k++)); do
      run_name=$name run_env=$env
      if [ "$shards" -gt 1 ]; then
        run_name="${name}_${k}_of_$shards"
        run_env="$env GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$((k - 1))"
      fi
      # At most SANITIZE_JOBS binaries at once (each a process of its own on the one device).
      while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
      # shellcheck disable=SC2086
      sanitize_one "$tool" "$run_name" "$bin" "$own" $run_env &
      names+=("$run_name")
    done
  done <"$BUILD/gpu-binaries.txt"
  wait
  # The results in the registry's order, whatever order the runs ended in.
  local name rc
  for name in "${names[@]}"; do
    cat "$OUT/$tool-$name.log" >>"$LOG"
    say "$(cat "$OUT/$tool-$name.result")"
    rc=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^rc=/) { print substr($i, 4); exit } }' \
      "$OUT/$tool-$name.result")
    [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && FAILED=1
    rm -f "$OUT/$tool-$name.log" "$OUT/$tool-$name.result"
  done
  rm -f "$OUT/$tool-as-ended.txt"
}

canary() { # every tool must report its planted bug, run with the same flags as above
  local bin="$BUILD/tests/sanitizer_canary"
  for pair in memcheck:memcheck memcheck:leak racecheck:racecheck initcheck:initcheck \
    synccheck:synccheck; do
    local tool=${pair%%:*} mode=${pair##*:}
    # shellcheck disable=SC2046
    timeout 120 compute-sanitizer --tool "$tool" $(tool_flags "$tool") --error-exitcode 99 \
      "$bin" "$mode" >"$OUT/canary-$mode.log" 2>&1
    local rc=$?
    cat "$OUT/canary-$mode.log" >>"$LOG"
    local verdict="caught"
    if [ $rc -ne 99 ]; then
      verdict="NOT CAUGHT"
      FAILED=1
    fi
    say "$(printf '%-36s rc=%-3s %s: %s' "canary $tool/$mode" "$rc" "$verdict" \
      "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/canary-$mode.log" | tail -1)")"
    rm -f "$OUT/canary-$mode.log"
  done
}

for stage in "${STAGES[@]}"; do
  case $stage in
  build) ;;
  test | quick)
    # shellcheck disable=SC2086
    run ctest-gpu ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 900 \
      -j "${GPU_TEST_JOBS:-4}" ${TEST_ONLY:+-R $TEST_ONLY}
    grep -E 'tests passed|tests failed' "$LOG" | tail -1 | tee -a "$SUMMARY"
    # shellcheck disable=SC2086
    run ctest-cpu ctest --test-dir "$BUILD" -L cpu --output-on-failure -j 4 --timeout 900 \
      ${TEST_ONLY:+-R $TEST_ONLY}
    grep -E 'tests passed|tests failed' "$LOG" | tail -1 | tee -a "$SUMMARY"
    scripts/skip-report.sh "$BUILD" | tee -a "$SUMMARY"
    if [ "$stage" = quick ]; then
      run parity "$BUILD/tools/tlrt-parity" --n 1048576 --json "$OUT/parity.json" \
        --markdown "$OUT/parity.md" ${PARITY_ONLY:+--only $PARITY_ONLY}
    fi
    ;;
  memcheck | racecheck | initcheck | synccheck) sanitize "$stage" ;;
  canary) canary ;;
  tsan)
    run tsan-cuda env TLRT_TSAN_BACKEND=cuda JOBS="$JOBS" scripts/threads-sanitized.sh \
      "$BUILD-tsan-cuda"
    grep -E '^threads-sanitized: (passed|FAILED|SKIPPED)' "$LOG" | tail -1 | tee -a "$SUMMARY"
    ;;
  fuzz)
    # shellcheck disable=SC2086
    run fuzz-cuda env TLRT_DEVICE=cuda "$BUILD/tools/fuzz/tlrt-fuzz" --backend cuda --seed 7 \
      --calls 1500 --time-limit 150 ${FUZZ_ONLY:+--only $FUZZ_ONLY}
    grep -E '^[0-9]+ passed, [0-9]+ failed' "$LOG" | tail -1 | tee -a "$SUMMARY"
    ;;
  shapes)
    # shellcheck disable=SC2086
    run parity-shapes "$BUILD/tools/tlrt-parity" --n 1048576 --shapes "${PARITY_SHAPES:-16}" \
      --json "$OUT/parity-shapes.json" ${PARITY_ONLY:+--only $PARITY_ONLY}
    grep -E '^tlrt-parity: |^[0-9]+ rows, ' "$LOG" | tail -2 | tee -a "$SUMMARY"
    ;;
  parity)
    # shellcheck disable=SC2086
    run parity "$BUILD/tools/tlrt-parity" --n 16777216 --large --json "$OUT/parity.json" \
      --markdown "$OUT/parity.md" ${PARITY_ONLY:+--only $PARITY_ONLY}
    grep -E '^[0-9]+ rows, ' "$LOG" | tail -1 | tee -a "$SUMMARY"
    [ -f "$OUT/parity.md" ] && cat "$OUT/parity.md" >>"$SUMMARY"
    ;;
  bench)
    # BENCH_SWEEP= (empty) leaves the size sweep out.
    # shellcheck disable=SC2086
    run bench "$BUILD/bench/tlrt-bench" --out "$OUT" ${BENCH_SWEEP---sweep} ${BENCH_ONLY:+--only $BENCH_ONLY}
    [ -f "$OUT/bench.md" ] && cat "$OUT/bench.md" >>"$SUMMARY"
    # GB/s against size from the sweep in bench.json (skips itself without matplotlib).
    [ -f "$OUT/bench.json" ] && run plot python3 bench/plot_bench.py "$OUT/bench.json" \
      "$OUT/bench_sweep.png"
    ;;
  baseline)
    BASE=${BASELINE:-.baseline}
    if [ ! -f "$BASE/CMakeLists.txt" ]; then
      say "baseline: no tree in $BASE"
      FAILED=1
      continue
    fi
    run baseline-configure cmake -S "$BASE" -B build-baseline -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DTLRT_ENABLE_CUDA=ON -DTLRT_BUILD_TESTS=OFF \
      "${DEPS_ARGS[@]}" &&
      run baseline-build ninja -C build-baseline -j "$JOBS" tlrt-bench &&
      mkdir -p "$OUT/baseline" &&
      run baseline-bench build-baseline/bench/tlrt-bench --out "$OUT/baseline" \
        ${BENCH_ONLY:+--only $BENCH_ONLY} &&
      mv "$OUT/baseline/bench.md" "$OUT/baseline-bench.md" &&
      mv "$OUT/baseline/bench.json" "$OUT/baseline-bench.json"
    rmdir "$OUT/baseline" 2>/dev/null
    ;;
  *)
    say "unknown stage $stage"
    FAILED=1
    ;;
  esac
done
echo
cat "$SUMMARY"
exit $FAILED
