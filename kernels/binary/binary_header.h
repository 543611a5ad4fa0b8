// The text of torchlean_binary.cuh (SPEC-runtime 10.8), embedded in the library: NVRTC registers it
// as the one in-memory header of every kernel-run compile, and the reference backend writes it
// beside the generated source it compiles on the host. Nothing is read from disk at run time.
#pragma once

#include <string_view>

namespace tlrt::kernels {

std::string_view torchlean_binary_header();

}  // namespace tlrt::kernels
