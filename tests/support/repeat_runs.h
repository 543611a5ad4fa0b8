// How many runs a repeatability check makes. A check asks for `wanted` runs (ten in the suites);
// TLRT_TEST_RUNS=N (a whole number from 2 to 10^6) lowers that to N for every check of the process
// that asks for more. Registrations set it through SANITIZER_ENV for a suite's runs under the
// compute-sanitizer tools only (tests/CMakeLists.txt says which and why): a tool checks the
// accesses of each launch, which the later runs of a check repeat, and the test stage (`ctest -L
// gpu`) makes every run asked for. The first lowered check of a process says so on stderr; a value
// that is not such a number stops the process with a message naming it.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace test_runs {

// TLRT_TEST_RUNS as a count of at least 2, 0 where it is unset; anything else ends the process.
inline int lowered_runs_from_environment() {
  const char* text = std::getenv("TLRT_TEST_RUNS");
  if (text == nullptr) return 0;
  // Decimal digits only, the whole value: no sign, space, prefix or trailing character.
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(text, &end, 10);
  if (!(text[0] >= '0' && text[0] <= '9') || *end != '\0' || errno != 0 || n < 2 || n > 1000000) {
    std::fprintf(stderr,
                 "TLRT_TEST_RUNS=%s: a repeatability check needs a whole number of runs from 2 "
                 "to 1000000\n",
                 text);
    std::exit(2);
  }
  return static_cast<int>(n);
}

inline int repeat_runs(int wanted) {
  static const int lowered = lowered_runs_from_environment();
  if (lowered == 0 || lowered >= wanted) return wanted;
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) {
    std::fprintf(stderr,
                 "[tlrt test] repeatability checks make %d runs instead of %d (TLRT_TEST_RUNS)\n",
                 lowered, wanted);
  }
  return lowered;
}

}  // namespace test_runs
