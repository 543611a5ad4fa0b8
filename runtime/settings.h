// Runtime settings 0-8 of SPEC-runtime section 4.4. Process-wide; configure before concurrent work.
//
//   0 TF32 in float32 matrix products          default 0
//   1 TF32 in float32 convolution              default 0
//   2 deterministic algorithms                 default from TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS
//   3 convolution autotuning                   default 0 (refused while 2 is on)
//   4 flash attention permitted                default 1
//   5 memory-efficient attention permitted     default 1
//   6 math attention permitted                 default 1
//   7 cuDNN attention permitted                default 1
//   8 cuDNN permitted at all                   default 1
#pragma once

#include <cstdint>

namespace tlrt {

enum class Setting : uint32_t {
  matmul_tf32 = 0,
  conv_tf32 = 1,
  deterministic = 2,
  cudnn_benchmark = 3,
  sdp_flash = 4,
  sdp_efficient = 5,
  sdp_math = 6,
  sdp_cudnn = 7,
  cudnn_enabled = 8,
};
constexpr uint32_t kSettingCount = 9;

// Reads the environment variable once and applies every default. Idempotent.
void initialize_settings();

// Throws invalid_argument for an id above 8.
uint32_t get_setting(uint32_t id);
// Throws invalid_argument for an unknown id, enabled not 0/1, or enabling 3 while 2 is on.
// Enabling 2 turns 3 off.
void set_setting(uint32_t id, uint32_t enabled);

bool setting_enabled(Setting s);

// Parses the environment variable rule: unset, empty or exactly "0" -> off; anything else -> on.
bool deterministic_from_environment(const char* value);

}  // namespace tlrt
