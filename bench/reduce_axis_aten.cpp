// ATen side of the axis-reduction rows of tlrt-bench: what TorchLean's LibTorch backend runs,
// registered under the ops' names (aten_bench.cpp times them). Every input arrives as one flat
// tensor; the host scalars give the view:
//   * reduce_sum_by_row (rows, cols): sum(1);
//   * reduce_max_by_row / reduce_max_by_column (rows, cols): masked_fill(isnan, -inf).amax(axis);
//   * reduce_sum_axis (dims[axis], the other extents' product), deterministic mode, axis 0: the
//     ordered column fold as segment_reduce("sum") over one segment of all rows from 0.0, the
//     lengths moved to the device by a blocking copy as TorchLean does per call;
//   * reduce_from_broadcast (outDims = [64, 1024, 1024]; inDims = [1024], axisMap = [0, 0, 1]):
//     the reduced axes first (here the identity permutation), reshaped to (65536, 1024), then
//     the same segment_reduce.
#include <ATen/ATen.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "aten_registry.h"

namespace bench::aten {
namespace {

at::Tensor ordered_columns(const at::Tensor& matrix) {
  const std::vector<int64_t> lengths = {matrix.size(0)};
  const at::Tensor device_lengths = at::tensor(lengths, at::TensorOptions().dtype(at::kLong))
                                        .to(matrix.device(), at::kLong, false, true);
  return at::segment_reduce(matrix, "sum", device_lengths, std::nullopt, std::nullopt, 0, true, 0.0)
      .reshape({matrix.size(1)});
}

at::Tensor max_ignoring_nan(const at::Tensor& x, int64_t axis) {
  return x.masked_fill(x.isnan(), -std::numeric_limits<double>::infinity()).amax({axis}, false);
}

int64_t dim(S s, int i) {
  return static_cast<int64_t>(s[i]);
}

const AtenOpRegistration kReduceAxisOps({
    {"reduce_sum_by_row", 1, false, "sum(x.view(rows, cols), 1)",
     [](X x, S s) -> Tensors {
       return {x[0].view({dim(s, 0), dim(s, 1)}).sum(1)};
     }},
    {"reduce_max_by_row", 1, false, "masked_fill(isnan, -inf).amax(1)",
     [](X x, S s) -> Tensors {
       return {max_ignoring_nan(x[0].view({dim(s, 0), dim(s, 1)}), 1)};
     }},
    {"reduce_max_by_column", 1, false, "masked_fill(isnan, -inf).amax(0)",
     [](X x, S s) -> Tensors {
       return {max_ignoring_nan(x[0].view({dim(s, 0), dim(s, 1)}), 0)};
     }},
    {"reduce_sum_axis", 1, false, "segment_reduce(sum, lengths = [rows], axis 0, initial 0)",
     [](X x, S s) -> Tensors {
       return {ordered_columns(x[0].view({dim(s, 0), dim(s, 1)}))};
     }},
    {"reduce_from_broadcast", 1, false,
     "permute(reduced axes first).reshape(rows, cols), segment_reduce(sum, initial 0)",
     [](X x, S s) -> Tensors {
       const at::Tensor dy = x[0].view({dim(s, 0), dim(s, 1), dim(s, 2)});
       const int64_t cols = dim(s, 2);
       return {ordered_columns(dy.permute({0, 1, 2}).reshape({dy.numel() / cols, cols}))};
     }},
});

}  // namespace
}  // namespace bench::aten
