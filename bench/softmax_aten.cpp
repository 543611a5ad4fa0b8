// ATen side of the softmax rows of tlrt-bench: what TorchLean's LibTorch backend runs, registered
// under the ops' names (aten_bench.cpp times them). Every input arrives as one flat tensor; the
// host scalars give the view:
//   * hard_masked_softmax_by_row (rows, cols): allowed = mask.ne(0); masked = scores
//     .masked_fill(!allowed, -inf); empty = !allowed.any(1, keepdim); softmax(masked
//     .masked_fill(empty, 0), 1).masked_fill(!allowed | empty, 0) (about ten kernels);
//   * softmax_io (dims[0], dims[1], dims[2], axis): softmax(x.reshape(dims), axis, x's dtype).
#include <ATen/ATen.h>

#include <cstdint>
#include <limits>

#include "aten_registry.h"

namespace bench::aten {
namespace {

int64_t dim(S s, int i) {
  return static_cast<int64_t>(s[i]);
}

const AtenOpRegistration kSoftmaxOps({
    {"hard_masked_softmax_by_row", 2, false,
     "ne, logical_not, masked_fill(-inf), any(1), logical_not, masked_fill(0), softmax(1), "
     "logical_not, logical_or, masked_fill(0)",
     [](X x, S s) -> Tensors {
       const at::Tensor scores = x[0].view({dim(s, 0), dim(s, 1)});
       const at::Tensor allowed = x[1].view({dim(s, 0), dim(s, 1)}).ne(0);
       const at::Tensor masked =
           scores.masked_fill(allowed.logical_not(), -std::numeric_limits<double>::infinity());
       const at::Tensor empty = allowed.any(1, true).logical_not();
       const at::Tensor probabilities = at::softmax(masked.masked_fill(empty, 0), 1);
       return {probabilities.masked_fill(allowed.logical_not().logical_or(empty), 0)};
     }},
    {"softmax_io", 1, false, "softmax(x.reshape(dims), axis, dtype)",
     [](X x, S s) -> Tensors {
       const at::Tensor v = x[0].reshape({dim(s, 0), dim(s, 1), dim(s, 2)});
       return {at::softmax(v, dim(s, 3), v.scalar_type())};
     }},
});

}  // namespace
}  // namespace bench::aten
