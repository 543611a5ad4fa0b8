// ATen side of the shape rows of tlrt-bench: what TorchLean's LibTorch backend calls for concat1d
// (cat of the two buffers), slice1d (narrow, then clone into a fresh tensor), broadcast_to
// (permute to the mapped input axes, reshape with the inserted axes as 1, expand, clone),
// broadcast_vec_to_cols (unsqueeze(1), expand, clone) and swap_adjacent_at_depth (reshape to dims,
// transpose, clone), registered under the ops' names (aten_bench.cpp times them). Host scalars:
// slice1d n, start, len; broadcast_vec_to_cols rows, cols; broadcast_to rank(inDims), inDims,
// rank(outDims), outDims, axisMap; swap_adjacent_at_depth depth, rank, dims.
#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "aten_registry.h"

namespace bench::aten {
namespace {

int64_t at_index(S s, size_t k) {
  return static_cast<int64_t>(s[k]);
}

// TorchLean's broadcast_shape followed by its broadcast_to composition.
at::Tensor broadcast_to(const at::Tensor& x, S s) {
  size_t k = 0;
  std::vector<int64_t> in(static_cast<size_t>(at_index(s, k++)));
  for (int64_t& d : in) d = at_index(s, k++);
  std::vector<int64_t> out(static_cast<size_t>(at_index(s, k++)));
  for (int64_t& d : out) d = at_index(s, k++);
  std::vector<int64_t> permutation, expanded;
  for (size_t j = 0; j < out.size(); ++j) {
    const int64_t mapped = at_index(s, k++);
    if (mapped == 0) {
      expanded.push_back(1);
    } else {
      permutation.push_back(mapped - 1);
      expanded.push_back(in[static_cast<size_t>(mapped - 1)]);
    }
  }
  return x.reshape(in).permute(permutation).reshape(expanded).expand(out).clone();
}

at::Tensor swap_adjacent(const at::Tensor& x, S s) {
  const int64_t depth = at_index(s, 0);
  std::vector<int64_t> dims(static_cast<size_t>(at_index(s, 1)));
  for (size_t j = 0; j < dims.size(); ++j) dims[j] = at_index(s, 2 + j);
  return x.reshape(dims).transpose(depth, depth + 1).clone();
}

const AtenOpRegistration kShapeOps({
    {"concat1d", 2, false, "cat({a, b})",
     [](X x, S) -> Tensors {
       return {at::cat({x[0], x[1]})};
     }},
    {"slice1d", 1, false, "clone(narrow(x, 0, start, len))",
     [](X x, S s) -> Tensors {
       return {
           at::clone(at::narrow(x[0], 0, static_cast<int64_t>(s[1]), static_cast<int64_t>(s[2])))};
     }},
    {"broadcast_to", 1, false, "permute(x).reshape(expanded).expand(outDims).clone()",
     [](X x, S s) -> Tensors { return {broadcast_to(x[0], s)}; }},
    {"broadcast_vec_to_cols", 1, false, "unsqueeze(v, 1).expand({rows, cols}).clone()",
     [](X x, S s) -> Tensors {
       return {x[0].unsqueeze(1).expand({at_index(s, 0), at_index(s, 1)}).clone()};
     }},
    {"swap_adjacent_at_depth", 1, false, "reshape(x, dims).transpose(depth, depth + 1).clone()",
     [](X x, S s) -> Tensors { return {swap_adjacent(x[0], s)}; }},
});

}  // namespace
}  // namespace bench::aten
