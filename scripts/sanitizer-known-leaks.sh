#!/usr/bin/env bash
# Whether a compute-sanitizer memcheck log reports nothing but the leaks of a cuDNN handle.
#
#   scripts/sanitizer-known-leaks.sh LOG
#
# A cuDNN handle makes three device allocations inside cudnnCreate (25,344 + 4 + 4 bytes with
# cuDNN 9.14) and keeps them after cudnnDestroy until the context ends, so memcheck's leak check
# reports them in every process that used cuDNN; none of them is a tlrt allocation. Exit status 0
# when every error record of LOG is a "Leaked" record whose allocation backtrace passes through
# cudnnCreate, there is at least one, and the ERROR SUMMARY counts exactly as many; 1 otherwise
# (any other error, a leak allocated elsewhere, a count that does not add up, no summary); 2 when
# LOG cannot be read. One line on stdout says which. scripts/gpu-check.sh's memcheck stage passes
# a binary whose memcheck run failed on these leaks alone.
#
# A line "========= Error in printing record" is the tool failing to print one of its records (seen
# in a multithreaded process, 2026-12-06). It is not taken for an error record: the rule still
# needs the ERROR SUMMARY to count exactly the cudnnCreate leaks, so a record that could not be
# printed and was an error makes the counts differ and fails. The line on stdout says how many
# such records there were.
set -u
if [ $# -ne 1 ] || [ ! -r "$1" ]; then
  echo "usage: $0 LOG (a readable compute-sanitizer memcheck log)" >&2
  exit 2
fi
awk '
  /^========= [^ ]/ {
    if ($0 ~ /^========= (COMPUTE-SANITIZER|LEAK SUMMARY:)/) next
    if ($0 ~ /^========= Error in printing record *$/) { unprinted++; next }
    if ($0 ~ /^========= ERROR SUMMARY: /) { summary = $4; next }
    n++
    leak[n] = ($0 ~ /^========= Leaked [0-9,]+ bytes at /)
    next
  }
  /^=========  +Host Frame: cudnnCreate / { if (n) cudnn[n] = 1 }
  END {
    note = unprinted ? sprintf(" (and %d records the tool could not print)", unprinted) : ""
    known = 0
    for (i = 1; i <= n; i++) if (leak[i] && cudnn[i]) known++
    if (summary == "") { print "no ERROR SUMMARY line"; exit 1 }
    if (n == 0) { printf "no error records, ERROR SUMMARY %s\n", summary; exit 1 }
    if (known == n && summary == n) {
      printf "only cuDNN handle leaks: %d records, each allocated inside cudnnCreate%s\n", n, note
      exit 0
    }
    printf "not only cuDNN handle leaks: %d error records, %d of them leaks allocated inside cudnnCreate, ERROR SUMMARY %s%s\n", n, known, summary, note
    exit 1
  }' "$1"
