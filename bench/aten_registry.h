// The registry of ATen compositions that tlrt-bench's rows are compared with: each
// bench/<family>_aten.cpp registers, under the name a row asks for (the tlrt op), the ATen call
// or composition TorchLean's LibTorch backend makes for it, and aten_bench.cpp looks them up and
// times them. A row with deliberately no ATen counterpart is registered too, through
// no_aten_equivalent, so that its missing column is a stated decision. Includes LibTorch's
// headers: only aten_bench.cpp and bench/*_aten.cpp (the tlrt_aten_bench objects, built only when
// LibTorch is found) include this file.
#pragma once

#include <ATen/ATen.h>

#include <initializer_list>
#include <vector>

namespace bench::aten {

using Tensors = std::vector<at::Tensor>;
using X = const Tensors&;  // the op's inputs in tlrt's order, then `step` where needed
using S = const double*;   // the op's host scalars in tlrt's order

struct AtenOp {
  const char* name;  // the tlrt op
  int inputs;
  bool needs_step;           // a device step counter follows the inputs (the fused optimizer)
  const char* composition;   // what ATen runs; for no equivalent, why there is none
  Tensors (*run)(X x, S s);  // nullptr: no ATen equivalent
};

// An op whose rows deliberately have no ATen column; `why` is reported as "none (why)".
constexpr AtenOp no_aten_equivalent(const char* op, const char* why) {
  return AtenOp{op, 0, false, why, nullptr};
}

// Adds compositions to the registry during static initialisation; a name registered twice is
// reported by tlrt-bench at start-up.
class AtenOpRegistration {
 public:
  AtenOpRegistration(std::initializer_list<AtenOp> ops);
};

}  // namespace bench::aten
