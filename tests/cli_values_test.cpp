// The tools' command-line values (common/cli_values.h): the whole argument or nothing.
#include "common/cli_values.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

TEST(CliValues, WholeNumbersInDecimalAndHexadecimal) {
  uint64_t v = 7;
  EXPECT_TRUE(tlrt::parse_whole_number("0", &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(tlrt::parse_whole_number("65536", &v));
  EXPECT_EQ(v, 65536u);
  EXPECT_TRUE(tlrt::parse_whole_number("010", &v));  // decimal, not octal
  EXPECT_EQ(v, 10u);
  EXPECT_TRUE(tlrt::parse_whole_number("0x1F", &v));
  EXPECT_EQ(v, 31u);
  EXPECT_TRUE(tlrt::parse_whole_number("0Xff", &v));
  EXPECT_EQ(v, 255u);
  EXPECT_TRUE(tlrt::parse_whole_number("18446744073709551615", &v));
  EXPECT_EQ(v, UINT64_MAX);
  EXPECT_TRUE(tlrt::parse_whole_number("0xffffffffffffffff", &v));
  EXPECT_EQ(v, UINT64_MAX);
}

TEST(CliValues, WholeNumbersRefuseEverythingElseAndKeepTheOldValue) {
  const std::vector<const char*> bad = {"",
                                        "-1",
                                        "+1",
                                        " 5",
                                        "5 ",
                                        "12x",
                                        "1.5",
                                        "1e3",
                                        "0x",
                                        "0xg",
                                        "x10",
                                        "--1",
                                        "18446744073709551616",
                                        "0x10000000000000000",
                                        "99999999999999999999999"};
  for (const char* text : bad) {
    uint64_t v = 42;
    EXPECT_FALSE(tlrt::parse_whole_number(text, &v)) << '"' << text << '"';
    EXPECT_EQ(v, 42u) << '"' << text << '"';
  }
  uint64_t v = 42;
  EXPECT_FALSE(tlrt::parse_whole_number(nullptr, &v));
  EXPECT_EQ(v, 42u);
}

TEST(CliValues, PositiveNumbers) {
  double v = 0;
  EXPECT_TRUE(tlrt::parse_positive_number("1.10", &v));
  EXPECT_EQ(v, 1.10);
  EXPECT_TRUE(tlrt::parse_positive_number("2", &v));
  EXPECT_EQ(v, 2.0);
  EXPECT_TRUE(tlrt::parse_positive_number(".5", &v));
  EXPECT_EQ(v, 0.5);
  EXPECT_TRUE(tlrt::parse_positive_number("1e3", &v));
  EXPECT_EQ(v, 1000.0);
}

TEST(CliValues, PositiveNumbersRefuseEverythingElseAndKeepTheOldValue) {
  const std::vector<const char*> bad = {"",       "0",     "0.0",      "-1",  "+1",  " 1",
                                        "1 ",     "1x",    "x",        "inf", "nan", "1e999",
                                        "1e-400", "0x1p0", "Infinity", "-0",  "."};
  for (const char* text : bad) {
    double v = 3.0;
    EXPECT_FALSE(tlrt::parse_positive_number(text, &v)) << '"' << text << '"';
    EXPECT_EQ(v, 3.0) << '"' << text << '"';
  }
  double v = 3.0;
  EXPECT_FALSE(tlrt::parse_positive_number(nullptr, &v));
  EXPECT_EQ(v, 3.0);
}

TEST(CliValues, ListsKeepTheirNonEmptyItemsInOrder) {
  using List = std::vector<std::string>;
  EXPECT_EQ(tlrt::split_list("scan"), List({"scan"}));
  EXPECT_EQ(tlrt::split_list("a,b,c"), List({"a", "b", "c"}));
  EXPECT_EQ(tlrt::split_list(",a,,b,"), List({"a", "b"}));
  EXPECT_EQ(tlrt::split_list(""), List());
  EXPECT_EQ(tlrt::split_list(",,"), List());
}

}  // namespace
