// main() of the project's GoogleTest binaries (cmake/TlrtTesting.cmake).
//
// Exit status: 77 when no sub-test passed, none failed and at least one skipped (no device, no
// shared contract, a library this machine lacks); the registry maps 77 to ctest's "Skipped"
// (SKIP_RETURN_CODE). Otherwise GoogleTest's own status: a failure is a failure even beside
// skipped sub-tests, and a suite that passes with some skips lists them through
// scripts/skip-report.sh.
//
// A shard (GTEST_TOTAL_SHARDS set: the registry's SHARDS entries) that selects no sub-test fails,
// so that more shards than sub-tests cannot pass unseen.
//
// Binaries that may hold a CUDA context (TLRT_THREADSAFE_DEATH_TESTS) run their death tests by
// re-running the binary instead of forking the process.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
#if TLRT_THREADSAFE_DEATH_TESTS
  GTEST_FLAG_SET(death_test_style, "threadsafe");
#endif
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  const char* shards = std::getenv("GTEST_TOTAL_SHARDS");
  if (shards != nullptr && unit.test_to_run_count() == 0) {
    const char* index = std::getenv("GTEST_SHARD_INDEX");
    std::fprintf(stderr, "shard %s of %s selected no sub-test\n", index ? index : "?", shards);
    return 1;
  }
  if (rc == 0 && unit.failed_test_count() == 0 && unit.successful_test_count() == 0 &&
      unit.skipped_test_count() > 0) {
    return 77;
  }
  return rc;
}
