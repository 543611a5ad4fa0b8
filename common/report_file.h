// Closing a report file that a tool has written (tlrt-bench's bench.md and bench.json,
// tlrt-parity's --json and --markdown): a failed open, write or close is reported, never passed
// over.
#pragma once

#include <cstdio>
#include <string>

namespace tlrt {

// Closes f, which is nullptr when its open failed (errno still as the open left it). Returns
// false, with "<tool>: cannot write <path>: <reason>" on stderr, when the open, a write or the
// close failed.
bool close_report(std::FILE* f, const std::string& path, const char* tool);

}  // namespace tlrt
