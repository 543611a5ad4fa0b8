// ATen side of the selective-scan rows of tlrt-bench: what TorchLean's LibTorch backend runs for
// the four ops, registered under the ops' names (aten_bench.cpp times them). Inputs arrive in the
// ABI's order (A, B, X, h0 and, for the backward, out, dY) as flat tensors of T*S elements, of
// which the constant variant's A, B and every h0 use the first S; the host scalars are (T, S).
//
// The composition, call for call: the constant variant's A and B expanded over time; B * X; the
// eligibility test |A| <= 1, finite b and h0 (one host synchronisation); the coefficients in
// binary64, the first state a_0 * h0 + b_0, then the Hillis-Steele log-step prefix (for each
// stride 1, 2, 4, ... < T: the right coefficients times the left states in binary64, plus the
// right states, rounded to the dtype; the coefficient products; two copies back), and the final
// all-finite test (a second synchronisation). The backward shifts A by one step (cat with a zero
// row), runs the same scan on the time-reversed tensors from h0 = 0 and flips the result back,
// builds hprev (cat of h0 and out without its last row), multiplies, and for the constant
// variant folds dA and dB over reversed time with segment_reduce (lengths copied to the device
// by a blocking copy per call), then g * B and g_0 * A_0.
#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "aten_registry.h"

namespace bench::aten {
namespace {

int64_t dim(S s, int i) {
  return static_cast<int64_t>(s[i]);
}

at::Tensor ordered_columns(const at::Tensor& matrix) {
  const std::vector<int64_t> lengths = {matrix.size(0)};
  const at::Tensor device_lengths = at::tensor(lengths, at::TensorOptions().dtype(at::kLong))
                                        .to(matrix.device(), at::kLong, false, true);
  return at::segment_reduce(matrix, "sum", device_lengths, std::nullopt, std::nullopt, 0, true, 0.0)
      .reshape({matrix.size(1)});
}

at::Tensor affine_scan(const at::Tensor& a, const at::Tensor& b, const at::Tensor& initial) {
  const int64_t steps = b.size(0);
  if (steps == 0 || b.size(1) == 0) return at::empty_like(b);
  auto sequential = [&]() {
    at::Tensor result = at::empty_like(b);
    at::Tensor state = initial;
    for (int64_t t = 0; t < steps; ++t) {
      state = a.select(0, t) * state + b.select(0, t);
      result.select(0, t).copy_(state);
    }
    return result;
  };
  const at::Tensor eligible =
      a.abs().le(1).all().logical_and(b.isfinite().all()).logical_and(initial.isfinite().all());
  if (!eligible.item<bool>()) return sequential();
  at::Tensor coefficients = a.to(at::kDouble).clone();
  at::Tensor states = b.clone();
  states.select(0, 0).copy_(a.select(0, 0) * initial + b.select(0, 0));
  for (int64_t stride = 1; stride < steps; stride *= 2) {
    const int64_t count = steps - stride;
    const at::Tensor right = coefficients.narrow(0, stride, count);
    const at::Tensor next_states = (right * states.narrow(0, 0, count).to(at::kDouble) +
                                    states.narrow(0, stride, count).to(at::kDouble))
                                       .to(states.scalar_type());
    const at::Tensor next_coefficients = right * coefficients.narrow(0, 0, count);
    states.narrow(0, stride, count).copy_(next_states);
    coefficients.narrow(0, stride, count).copy_(next_coefficients);
  }
  return states.isfinite().all().item<bool>() ? states : sequential();
}

struct Inputs {
  at::Tensor a, b, x, initial;
};

Inputs inputs(X x, S s, bool variable) {
  const int64_t steps = dim(s, 0), state = dim(s, 1), n = steps * state;
  Inputs in;
  if (variable) {
    in.a = x[0].narrow(0, 0, n).view({steps, state});
    in.b = x[1].narrow(0, 0, n).view({steps, state});
  } else {
    in.a = x[0].narrow(0, 0, state).unsqueeze(0).expand({steps, state});
    in.b = x[1].narrow(0, 0, state).unsqueeze(0).expand({steps, state});
  }
  in.x = x[2].narrow(0, 0, n).view({steps, state});
  in.initial = x[3].narrow(0, 0, state);
  return in;
}

Tensors forward(X x, S s, bool variable) {
  const Inputs in = inputs(x, s, variable);
  return {affine_scan(in.a, in.b * in.x, in.initial)};
}

Tensors backward(X x, S s, bool variable) {
  const Inputs in = inputs(x, s, variable);
  const int64_t steps = dim(s, 0), state = dim(s, 1), n = steps * state;
  const at::Tensor output = x[4].narrow(0, 0, n).view({steps, state});
  const at::Tensor dy = x[5].narrow(0, 0, n).view({steps, state});
  const at::Tensor shifted =
      at::cat({in.a.narrow(0, 1, steps - 1), at::zeros({1, state}, in.a.options())}, 0);
  const at::Tensor g =
      affine_scan(shifted.flip({0}), dy.flip({0}), at::zeros_like(in.initial)).flip({0});
  const at::Tensor previous = at::cat({in.initial.unsqueeze(0), output.narrow(0, 0, steps - 1)}, 0);
  at::Tensor da = g * previous;
  at::Tensor db = g * in.x;
  if (!variable) {
    da = ordered_columns(da.flip({0}));
    db = ordered_columns(db.flip({0}));
  }
  return {da, db, g * in.b, g.select(0, 0) * in.a.select(0, 0)};
}

const AtenOpRegistration kScanOps({
    {"selective_scan_diag_fwd", 4, false,
     "expand A, B; B*X; eligibility (sync); Hillis-Steele log-step prefix in binary64 "
     "coefficients; finite test (sync)",
     [](X x, S s) -> Tensors { return forward(x, s, false); }},
    {"selective_scan_diag_var_fwd", 4, false,
     "B*X; eligibility (sync); Hillis-Steele log-step prefix in binary64 coefficients; finite "
     "test (sync)",
     [](X x, S s) -> Tensors { return forward(x, s, true); }},
    {"selective_scan_diag_bwd", 6, false,
     "shift A; log-step prefix on flipped tensors; g*hprev, g*X folded over reversed time by "
     "segment_reduce; g*B; g_0*A_0",
     [](X x, S s) -> Tensors { return backward(x, s, false); }},
    {"selective_scan_diag_var_bwd", 6, false,
     "shift A; log-step prefix on flipped tensors; g*hprev, g*X, g*B; g_0*A_0",
     [](X x, S s) -> Tensors { return backward(x, s, true); }},
});

}  // namespace
}  // namespace bench::aten
