// Whole-buffer reductions (SPEC-ops 6.4; symbols-ops.tsv group reduction-whole). Pure symbols:
// every failure (released buffer, non-buffer or encoded argument, out of memory, device error)
// panics.
#include "abi/boundary.h"
#include "runtime/reduce_dispatch.h"

using namespace tlrt::abi;

extern "C" {

// x borrowed; result owned: a fresh one-element buffer of x's dtype holding the sum of x in the
// deterministic 256-lane tree order (bit-exact; empty -> +0).
lean_obj_res torchlean_cuda_buffer_reduce_sum(b_lean_obj_arg x) {
  return pure_call(
      [&] { return box(tlrt::reduce_sum(live_buffer(x, "reduce_sum"), "reduce_sum")); });
}

// x borrowed; result owned: a fresh one-element buffer of x's dtype holding
// fl(reduce_sum(x) * fl(1 / fl(n))) (empty -> NaN).
lean_obj_res torchlean_cuda_buffer_reduce_mean(b_lean_obj_arg x) {
  return pure_call(
      [&] { return box(tlrt::reduce_mean(live_buffer(x, "reduce_mean"), "reduce_mean")); });
}

}  // extern "C"
