#!/usr/bin/env bash
# Checks the compute-sanitizer stages of scripts/gpu-check.sh on a machine without a device: a
# stand-in compute-sanitizer (and no-op cmake and ninja) on PATH, and a gpu-binaries.txt of made-up
# binaries that exercise each word of the registry's lines. Exits 0 when every promise holds, 1 with
# the first broken one named. Usage: sanitize-stage-check.sh REPO_ROOT
set -u
root=${1:?usage: sanitize-stage-check.sh REPO_ROOT}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The stage runs from a copy of the scripts, so that the working directory is the check's own.
mkdir -p "$work/bin" "$work/build" "$work/repo"
cp -R "$root/scripts" "$work/repo/" || { echo "sanitize-stage-check: cannot copy $root/scripts"; exit 1; }
for tool in cmake ninja; do
  printf '#!/bin/sh\nexit 0\n' >"$work/bin/$tool"
done
# The stand-in: records its arguments and shard variables, then behaves by the binary's name.
cat >"$work/bin/compute-sanitizer" <<'EOF'
#!/usr/bin/env bash
bin=""
for a in "$@"; do case $a in /fake/*) bin=${a#/fake/} ;; esac; done
echo "args: $*"
echo "shard: ${GTEST_TOTAL_SHARDS:-none}/${GTEST_SHARD_INDEX:-none}"
echo "runs: ${TLRT_TEST_RUNS:-unset}"
case $bin in
bad) echo "========= ERROR SUMMARY: 1 error"; exit 99 ;;
slow) sleep 5 ;;
esac
echo "========= ERROR SUMMARY: 0 errors"
EOF
chmod +x "$work/bin/"*
cat >"$work/build/gpu-binaries.txt" <<'EOF'
plain /fake/plain TLRT_DEVICE=cuda
split /fake/split TLRT_DEVICE=cuda TLRT_TEST_RUNS=2 shards=3
part /fake/part TLRT_DEVICE=cuda leave=racecheck=Part.Threads leave=memcheck=Part*.Other
skipped /fake/skipped TLRT_DEVICE=cuda skip=racecheck
EOF

fail() {
  echo "sanitize-stage-check: $*"
  exit 1
}
stage() { # stage OUTDIR TOOL [VAR=VALUE...]: the stage over the registry above
  local out=$1 tool=$2
  shift 2
  (cd "$work/repo" && env PATH="$work/bin:$PATH" BUILD="$work/build" OUT="$out" "$@" \
    scripts/gpu-check.sh "$tool" >/dev/null 2>&1)
}
line() { # line OUTDIR REGEX: the summary has a line matching REGEX
  grep -Eq "$2" "$1/summary.txt" || fail "no summary line matching '$2' in $(cat "$1/summary.txt")"
}
no_line() {
  ! grep -Eq "$2" "$1/summary.txt" || fail "a summary line matches '$2'"
}

# racecheck: shards expand into one run each, leave= words narrow that tool's filter only, skip=
# leaves the binary out, VAR=VALUE words set the environment; every run passes, so the stage does.
out=$work/race
stage "$out" racecheck || fail "racecheck stage failed: $(cat "$out/summary.txt")"
for k in 1 2 3; do line "$out" "^racecheck split_${k}_of_3 +rc=0 "; done
no_line "$out" "^racecheck split "
line "$out" "^racecheck plain +rc=0 "
line "$out" "^racecheck part +leaves out Part\.Threads by its registration"
no_line "$out" "Part\*?\.Other"
line "$out" "^racecheck part +rc=0 "
line "$out" "^racecheck skipped +left out by its registration"
grep -q "shard: 3/2" "$out/gpu-check.log" || fail "the third shard did not run as index 2 of 3"
[ "$(grep -c "shard: none/none" "$out/gpu-check.log")" -eq 2 ] ||
  fail "unsharded runs saw shard variables"
# A registration's VAR=VALUE words reach its runs' environment, every shard's, and no other run's.
[ "$(grep -c "runs: 2" "$out/gpu-check.log")" -eq 3 ] || fail "a shard run lacked TLRT_TEST_RUNS=2"
[ "$(grep -c "runs: unset" "$out/gpu-check.log")" -eq 2 ] ||
  fail "TLRT_TEST_RUNS reached a run not registered with it"
grep -Eq -- "--gtest_filter=-[^ ]*:Part\.Threads( |$)" "$out/gpu-check.log" ||
  fail "the left-out sub-test is not in racecheck's filter"
# The results come in the registry's order whatever order the runs end in.
order=$(grep -Eo "^racecheck [a-z_0-9]+ +rc" "$out/summary.txt" | awk '{print $2}' | tr '\n' ' ')
[ "$order" = "plain split_1_of_3 split_2_of_3 split_3_of_3 part " ] || fail "order: $order"
[ ! -e "$out/racecheck-as-ended.txt" ] || fail "the as-ended file outlived a completed stage"

# memcheck: the same binary's other leave= word applies, racecheck's does not; skipped binaries
# run. Its pattern reaches the filter as written, not as a glob over the working directory (a file
# the glob matches is made there for the run).
out=$work/mem
touch "$work/repo/leave=memcheck=Part-glob.Other"
stage "$out" memcheck || fail "memcheck stage failed: $(cat "$out/summary.txt")"
grep -Eq -- "--gtest_filter=-[^ ]*:Part\*\.Other( |$)" "$out/gpu-check.log" ||
  fail "memcheck's left-out pattern did not reach the filter as written"
line "$out" "^memcheck part +leaves out Part\*\.Other by its registration"
no_line "$out" "Part\.Threads"
line "$out" "^memcheck skipped +rc=0 "

# A failing run fails the stage; a run past SANITIZE_TIMEOUT is NOT FINISHED and fails it too.
printf 'bad /fake/bad TLRT_DEVICE=cuda\n' >>"$work/build/gpu-binaries.txt"
out=$work/bad
stage "$out" synccheck SANITIZE_ONLY=bad,plain && fail "a run with errors passed the stage"
line "$out" "^synccheck bad +rc=99 "
line "$out" "^synccheck plain +rc=0 "
printf 'slow /fake/slow TLRT_DEVICE=cuda shards=2\n' >>"$work/build/gpu-binaries.txt"
out=$work/slow
stage "$out" initcheck SANITIZE_ONLY=slow SANITIZE_TIMEOUT=1 && fail "an unfinished run passed"
line "$out" "^initcheck slow_2_of_2 +rc=124 NOT FINISHED in 1 s"
# A shard count that is not a count fails the stage instead of running nothing.
printf 'odd /fake/odd TLRT_DEVICE=cuda shards=two\n' >>"$work/build/gpu-binaries.txt"
out=$work/odd
stage "$out" memcheck SANITIZE_ONLY=odd && fail "a malformed shard count passed"
line "$out" "^memcheck odd +FAILED: shards=two in gpu-binaries.txt is not a count"
echo "sanitize-stage-check: every promise held"
