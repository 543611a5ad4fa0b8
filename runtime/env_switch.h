// A process-wide on/off switch of a CUDA path: its default comes from an environment variable,
// read on first use, and `set` overrides it from then on. For a switch that is on by default the
// variable turns it off only when it is exactly "0"; for one that is off by default any non-empty
// value other than "0" turns it on.
#pragma once

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace tlrt {

// Whether an environment value turns on a setting that is off by default: set, not empty and not
// exactly "0" (the rule of TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS as well).
inline bool env_value_enables(const char* value) {
  return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
}

class EnvSwitch {
 public:
  constexpr EnvSwitch(const char* variable, bool on_by_default)
      : variable_(variable), on_by_default_(on_by_default) {}

  bool on() {
    int v = state_.load(std::memory_order_acquire);
    if (v < 0) {
      int expected = -1;
      state_.compare_exchange_strong(expected, from_environment() ? 1 : 0);
      v = state_.load(std::memory_order_acquire);
    }
    return v == 1;
  }

  void set(bool enabled) { state_.store(enabled ? 1 : 0, std::memory_order_release); }

 private:
  bool from_environment() const {
    const char* e = std::getenv(variable_);
    if (on_by_default_) return e == nullptr || std::strcmp(e, "0") != 0;
    return env_value_enables(e);
  }

  const char* variable_;
  bool on_by_default_;
  std::atomic<int> state_{-1};  // -1 until the environment is read
};

}  // namespace tlrt
