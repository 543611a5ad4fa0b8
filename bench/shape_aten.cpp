// ATen side of the shape rows of tlrt-bench: what TorchLean's LibTorch backend calls for concat1d
// (cat of the two buffers) and slice1d (narrow, then clone into a fresh tensor), registered under
// the ops' names (aten_bench.cpp times them). slice1d's host scalars are the ABI's n, start, len.
#include <ATen/ATen.h>

#include <cstdint>

#include "aten_registry.h"

namespace bench::aten {
namespace {

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
});

}  // namespace
}  // namespace bench::aten
