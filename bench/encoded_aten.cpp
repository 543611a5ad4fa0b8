// ATen side of the encoded rows of tlrt-bench: what TorchLean's LibTorch backend runs for encoded
// buffers, whose storage is a flat byte tensor: concat1d is cat of the two byte tensors, slice1d
// narrows the byte tensor to [start * width, (start + len) * width) and clones it, copy clones it.
// The bench hands the bytes over as float32 tensors of bytes / 4 elements (the registry's dtypes),
// and each composition views them as bytes first, so ATen runs on byte tensors as TorchLean does.
// Host scalars: slice1d n, start, len, width (words, and bytes per word).
#include <ATen/ATen.h>

#include <cstdint>

#include "aten_registry.h"

namespace bench::aten {
namespace {

at::Tensor bytes_of(const at::Tensor& x) {
  return x.view(at::kByte);
}

const AtenOpRegistration kEncodedOps({
    {"concat1d_encoded", 2, false, "cat({a, b}) of byte tensors",
     [](X x, S) -> Tensors {
       return {at::cat({bytes_of(x[0]), bytes_of(x[1])})};
     }},
    {"slice1d_encoded", 1, false,
     "clone(narrow(x, 0, start * width, len * width)) of a byte tensor",
     [](X x, S s) -> Tensors {
       const auto width = static_cast<int64_t>(s[3]);
       return {at::clone(at::narrow(bytes_of(x[0]), 0, static_cast<int64_t>(s[1]) * width,
                                    static_cast<int64_t>(s[2]) * width))};
     }},
    {"copy_encoded", 1, false, "clone(x) of a byte tensor",
     [](X x, S) -> Tensors { return {at::clone(bytes_of(x[0]))}; }},
});

}  // namespace
}  // namespace bench::aten
