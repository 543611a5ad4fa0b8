// main() of the ABI suites. Their death tests re-run the binary instead of forking a process
// that holds a CUDA context.
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
