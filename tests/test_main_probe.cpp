// Sub-tests that pass, fail and skip, for the checks of tests/test_main.cpp's exit status
// (tests/CMakeLists.txt, test_main_*): each check selects some of them with --gtest_filter.
#include <gtest/gtest.h>

TEST(Probe, Passes) {
  EXPECT_EQ(1 + 1, 2);
}

TEST(Probe, Fails) {
  EXPECT_EQ(1 + 1, 3) << "planted failure";
}

TEST(Probe, Skips) {
  GTEST_SKIP() << "planted skip";
}

TEST(Probe, AlsoSkips) {
  GTEST_SKIP() << "planted skip";
}
