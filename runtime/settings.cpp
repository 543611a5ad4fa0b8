#include "runtime/settings.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "common/error.h"
#include "runtime/env_switch.h"

namespace tlrt {
namespace {

std::atomic<uint32_t> g_settings[kSettingCount];
std::once_flag g_settings_once;

void check_id(uint32_t id, const char* op) {
  if (id >= kSettingCount) {
    fail(ErrorKind::invalid_argument, op,
         "unknown runtime setting " + std::to_string(id) + " (valid ids are 0-8)");
  }
}

}  // namespace

bool deterministic_from_environment(const char* value) {
  return env_value_enables(value);
}

void initialize_settings() {
  std::call_once(g_settings_once, [] {
    const bool det =
        deterministic_from_environment(std::getenv("TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS"));
    const uint32_t defaults[kSettingCount] = {0, 0, det ? 1u : 0u, 0, 1, 1, 1, 1, 1};
    for (uint32_t i = 0; i < kSettingCount; ++i) g_settings[i].store(defaults[i]);
  });
}

uint32_t get_setting(uint32_t id) {
  check_id(id, "get_setting");
  initialize_settings();
  return g_settings[id].load(std::memory_order_relaxed);
}

void set_setting(uint32_t id, uint32_t enabled) {
  check_id(id, "set_setting");
  if (enabled > 1) {
    fail(ErrorKind::invalid_argument, "set_setting",
         "runtime boolean must be zero or one (got " + std::to_string(enabled) + " for setting " +
             std::to_string(id) + ")");
  }
  initialize_settings();
  const auto det = static_cast<uint32_t>(Setting::deterministic);
  const auto bench = static_cast<uint32_t>(Setting::cudnn_benchmark);
  if (id == bench && enabled == 1 && g_settings[det].load() == 1) {
    fail(
        ErrorKind::invalid_argument, "set_setting",
        "disable deterministic mode before enabling cuDNN benchmarking (setting 2 is on; setting 3 "
        "cannot be turned on with it)");
  }
  if (id == det && enabled == 1) g_settings[bench].store(0);
  g_settings[id].store(enabled);
}

bool setting_enabled(Setting s) {
  initialize_settings();
  return g_settings[static_cast<uint32_t>(s)].load(std::memory_order_relaxed) != 0;
}

}  // namespace tlrt
