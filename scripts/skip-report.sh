#!/usr/bin/env bash
# Prints every skipped GoogleTest sub-test of the last ctest run in BUILD_DIR with its reason, so a
# skip inside a passing suite is as visible as a skipped suite; sub-tests of one entry skipped for
# one reason share a line:
#   skipped  <ctest entry> <Suite.Test or N sub-tests>: <reason>
#   scripts/skip-report.sh [BUILD_DIR]
# The test_main_* entries check the test binaries' exit status on planted skips; they are left out.
set -u
LOG="${1:-build}/Testing/Temporary/LastTest.log"
[ -f "$LOG" ] || exit 0
awk '
  /^[0-9]+\/[0-9]+ Test: / { entry = $3; planted = (entry ~ /^test_main_/) }
  /^\[ RUN      \] / { test = $4; reason = ""; grab = 0 }
  # The reason: the lines after the first "file:line: Skipped" of the sub-test (a helper that
  # skips may be called, and skip, again).
  grab == 1 && NF > 0 && !/^\[/ && !/ Skipped$/ { reason = (reason == "" ? $0 : reason " " $0) }
  / Skipped$/ { grab = (reason == "") }
  # The closing summary of GoogleTest lists the skipped sub-tests again: not counted twice.
  /^\[  SKIPPED \] [0-9]+ tests?, listed below:/ { listing = 1; next }
  listing && /^\[  SKIPPED \] / { next }
  { listing = 0 }
  !planted && /^\[  SKIPPED \] [^0-9]/ {
    key = entry "\t" reason
    if (!(key in count)) { order[++keys] = key; first[key] = $4 }
    count[key]++
    total++
    grab = 0
  }
  END {
    for (k = 1; k <= keys; k++) {
      split(order[k], part, "\t")
      what = count[order[k]] == 1 ? first[order[k]] : count[order[k]] " sub-tests (" first[order[k]] ", ...)"
      printf "skipped  %-26s %s: %s\n", part[1], what, part[2]
    }
    printf "%d skipped sub-tests in all\n", total
  }
' "$LOG"
