// Values on the tools' command lines (tlrt-bench, tlrt-parity, tlrt-fuzz). A value is the whole
// argument or it is refused: "12x", "-1", " 5", "" and a number past the type never pass as some
// other number.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tlrt {

// A whole number: decimal digits, or 0x / 0X and hexadecimal digits; no sign, no space, at most
// 2^64 - 1. Returns false, leaving *out as it was, for anything else (nullptr included).
bool parse_whole_number(const char* text, uint64_t* out);

// A finite number greater than 0, the whole argument in strtod's decimal syntax ("2", "0.5",
// "1e3"; not "inf", "nan" or hexadecimal floating point). Returns false, leaving *out as it was,
// for anything else.
bool parse_positive_number(const char* text, double* out);

// The non-empty items of a comma-separated list, in order ("a,,b," gives a and b).
std::vector<std::string> split_list(const std::string& text);

}  // namespace tlrt
