#!/usr/bin/env bash
# Whether every failure in a ctest log (run with --output-on-failure) is LeakSanitizer's own tracer
# crashing at process exit, and which entries those are.
#
#   scripts/lsan-tracer-crash.sh LOG
#
# At a process's exit LeakSanitizer stops every thread with a tracer before it looks for leaks;
# on some kernels that tracer itself now and then dies of a segmentation fault ("Tracer caught
# signal 11", then "LeakSanitizer has encountered a fatal error") and the process exits non-zero
# although the test passed and no leak was looked for. Such a failure says nothing about the code.
# Exit status 0 when LOG has at least one failed entry and every failed entry's output holds that
# crash and nothing a sanitizer or GoogleTest reports (no "ERROR: AddressSanitizer", no "ERROR:
# LeakSanitizer: detected memory leaks", no "runtime error:", no "SUMMARY: ...Sanitizer", no
# "[  FAILED  ]"), and its ctest status is Failed (not a timeout or a crash of the test itself);
# the names of those entries then go to stdout, one a line. Exit status 1 otherwise, with a line
# naming the first failed entry that is something else (or saying that nothing failed); 2 when LOG
# cannot be read. scripts/suites-sanitized.sh runs those entries once more, and only those.
set -u
if [ $# -ne 1 ] || [ ! -r "$1" ]; then
  echo "usage: $0 LOG (a readable ctest log, run with --output-on-failure)" >&2
  exit 2
fi
awk '
  function close_block() {
    if (name == "") return
    if (!(tracer && fatal) || other) {
      if (bad == "") bad = name
    } else {
      crashed[++n] = name
    }
    name = ""
  }
  # An entry ends: "12/78 Test #21: name ....***Failed  5.21 sec" (or Passed, ***Skipped, which
  # is no failure, ***Timeout, ...).
  /^ *[0-9]+\/[0-9]+ Test +#[0-9]+: / {
    close_block()
    if (($0 ~ /\*\*\*/ && $0 !~ /\*\*\*Skipped/) || $0 ~ /Not Run/) {
      failed++
      name = $4
      tracer = fatal = other = 0
      if ($0 !~ /\*\*\*Failed/) other = 1
    }
    next
  }
  /^ *Start +[0-9]+: / || /^[0-9]+% tests passed/ { close_block(); next }
  name != "" {
    if ($0 ~ /^Tracer caught signal 11/) tracer = 1
    else if ($0 ~ /LeakSanitizer has encountered a fatal error/) fatal = 1
    else if ($0 ~ /ERROR: (AddressSanitizer|LeakSanitizer: detected memory leaks)/ ||
             $0 ~ /runtime error:/ || $0 ~ /SUMMARY: [A-Za-z]+Sanitizer/ ||
             $0 ~ /\[  FAILED  \]/) other = 1
  }
  END {
    close_block()
    if (failed == 0) { print "no failed entry"; exit 1 }
    if (bad != "") { print "not only the tracer crash: " bad; exit 1 }
    for (i = 1; i <= n; i++) print crashed[i]
  }
' "$1"
