// The repeatability checks' run count (tests/support/repeat_runs.h): ten runs unless
// TLRT_TEST_RUNS lowers them, a note on stderr when it does, and a stop with a message for a value
// that is not a count from 2 to 10^6. Each case runs in a child process, which reads the variable
// once.
#include "tests/support/repeat_runs.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

// Exits with the run count a check asking for `wanted` runs makes with TLRT_TEST_RUNS at `value`
// (unset for nullptr).
[[noreturn]] void exit_with_runs(const char* value, int wanted) {
  if (value == nullptr) {
    unsetenv("TLRT_TEST_RUNS");
  } else {
    setenv("TLRT_TEST_RUNS", value, 1);
  }
  const int first = test_runs::repeat_runs(wanted);
  const int second = test_runs::repeat_runs(wanted);  // the same count, the note once
  std::exit(first == second ? first : 100);
}

TEST(RepeatRuns, UnsetMakesEveryRunAskedFor) {
  EXPECT_EXIT(exit_with_runs(nullptr, 10), testing::ExitedWithCode(10), "^$");
}

TEST(RepeatRuns, LowersTheRunsAndSaysSoOnce) {
  EXPECT_EXIT(exit_with_runs("3", 10), testing::ExitedWithCode(3),
              "^\\[tlrt test\\] repeatability checks make 3 runs instead of 10 "
              "\\(TLRT_TEST_RUNS\\)\n$");
  EXPECT_EXIT(exit_with_runs("2", 10), testing::ExitedWithCode(2), "make 2 runs instead of 10");
}

TEST(RepeatRuns, NeverRaisesTheRuns) {
  EXPECT_EXIT(exit_with_runs("20", 10), testing::ExitedWithCode(10), "^$");
  EXPECT_EXIT(exit_with_runs("10", 10), testing::ExitedWithCode(10), "^$");
}

// `text` as a POSIX extended regular expression that matches it literally.
std::string literal(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::string(".[]{}()\\*+?|^$").find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

TEST(RepeatRuns, AnythingButACountFromTwoStopsWithItsValue) {
  for (const char* bad :
       {"", "1", "0", "-2", "+2", "2x", " 2", "0x10", "x", "1000001", "99999999999999999999"}) {
    EXPECT_EXIT(exit_with_runs(bad, 10), testing::ExitedWithCode(2),
                "TLRT_TEST_RUNS=" + literal(bad) +
                    ": a repeatability check needs a whole number of runs from 2 to 1000000")
        << "value \"" << bad << "\"";
  }
}

}  // namespace
