// ATen side of the reduction rows of tlrt-bench: ATen's sum, which TorchLean's LibTorch backend
// calls for reduce_sum, registered under the op's name (aten_bench.cpp times it).
#include <ATen/ATen.h>

#include "aten_registry.h"

namespace bench::aten {
namespace {

const AtenOpRegistration kReduceOps({
    {"reduce_sum", 1, false, "sum(x)", [](X x, S) -> Tensors { return {at::sum(x[0])}; }},
});

}  // namespace
}  // namespace bench::aten
