#pragma once
#include <string_view>
namespace tlrt::kernels {
// The text of torchlean_binary.cuh, registered with NVRTC as the in-memory header of that name.
std::string_view torchlean_binary_header();
}  // namespace tlrt::kernels
