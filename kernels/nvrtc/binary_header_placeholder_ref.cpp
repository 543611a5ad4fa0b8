// Placeholder text of torchlean_binary.cuh until the configured-binary header joins the tree: a
// valid header that defines nothing. Kernel runs in the native dialects need nothing from it;
// configured-format tests skip while the text lacks "TLBinary".
#include "kernels/binary/binary_header.h"

namespace tlrt::kernels {

std::string_view torchlean_binary_header() {
  return "#pragma once\n";
}

}  // namespace tlrt::kernels
