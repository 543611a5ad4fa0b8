// Progress of a tlrt-parity run on stderr: a bar redrawn at most ten times a second on a terminal,
// a line per tenth of the work otherwise (logs of remote runs).
#pragma once

#include <chrono>
#include <cstdint>

namespace tlrt::parity {

class ProgressBar {
 public:
  explicit ProgressBar(uint64_t total);
  uint64_t done() const { return done_; }
  void step(uint64_t k = 1) { show(done_ + k); }
  // Moves the bar to `done` units of the total (clamped); the last unit ends the line.
  void show(uint64_t done);

 private:
  uint64_t total_;
  uint64_t done_ = 0;
  bool tty_;
  bool finished_ = false;
  uint64_t last_tenth_ = 0;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace tlrt::parity
