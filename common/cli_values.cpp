#include "common/cli_values.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace tlrt {

namespace {

// The value of c as a digit of base 10 or 16, or -1.
int digit_value(char c, unsigned base) {
  if (c >= '0' && c <= '9') return c - '0';
  if (base == 16 && c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (base == 16 && c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool parse_whole_number(const char* text, uint64_t* out) {
  if (text == nullptr) return false;
  unsigned base = 10;
  if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text += 2;
  }
  if (*text == '\0') return false;
  uint64_t value = 0;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  for (; *text != '\0'; ++text) {
    const int d = digit_value(*text, base);
    if (d < 0) return false;
    if (value > (kMax - static_cast<uint64_t>(d)) / base) return false;
    value = value * base + static_cast<uint64_t>(d);
  }
  *out = value;
  return true;
}

bool parse_positive_number(const char* text, double* out) {
  if (text == nullptr) return false;
  // strtod also takes leading space, a sign, "inf", "nan" and hexadecimal: the first character
  // must be a digit or a point, and no x may follow.
  const char first = text[0];
  if (!((first >= '0' && first <= '9') || first == '.')) return false;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p == 'x' || *p == 'X') return false;
  }
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !std::isfinite(value) || !(value > 0))
    return false;
  *out = value;
  return true;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const size_t end = comma == std::string::npos ? text.size() : comma;
    if (end > start) items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

}  // namespace tlrt
