#include "tools/parity/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace tlrt::parity {

ProgressBar::ProgressBar(uint64_t total) : total_(total ? total : 1), tty_(isatty(2) != 0) {}

void ProgressBar::show(uint64_t done) {
  done = std::min(done, total_);
  done_ = std::max(done_, done);
  if (finished_) return;
  finished_ = done == total_;
  const auto now = std::chrono::steady_clock::now();
  if (tty_) {
    if (done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
  } else {
    const uint64_t tenth = 10 * done / total_;
    if (tenth == last_tenth_) return;
    last_tenth_ = tenth;
  }
  last_ = now;
  const int width = 30;
  const int filled = static_cast<int>(width * done / total_);
  std::fprintf(stderr, "%s[%.*s%*s] %" PRIu64 "/%" PRIu64 "%s", tty_ ? "\r" : "", filled,
               "==============================", width - filled, "", done, total_,
               tty_ && done < total_ ? "" : "\n");
}

}  // namespace tlrt::parity
