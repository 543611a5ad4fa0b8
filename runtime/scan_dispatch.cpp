#include "runtime/scan_dispatch.h"

#include <string>

#include "kernels/scan/scan.h"
#include "runtime/construct.h"
#include "runtime/dispatch.h"
#include "runtime/settings.h"
#include "runtime/shape_geometry.h"

namespace tlrt {
namespace {

// T*S of two 32-bit extents fits 64 bits unsigned but can pass INT64_MAX, which is refused as
// "shape size overflow", the wording of every other family's shapes, before any size is compared.
uint64_t validate(const Buffer& a, const Buffer& b, const Buffer& x, const Buffer& h0,
                  uint64_t steps, uint64_t state, bool variable, const char* op) {
  const uint64_t total = shape_size({steps, state}, "[seqLen, state]", op);
  const char* coefficient_arg = variable ? "seqLen*state" : "state";
  const uint64_t coefficient_size = variable ? total : state;
  require_size(a, "A", coefficient_arg, coefficient_size, op);
  require_size(b, "B", coefficient_arg, coefficient_size, op);
  require_size(x, "X", "seqLen*state", total, op);
  require_size(h0, "h0", "state", state, op);
  return total;
}

template <class T>
kernels::ScanOperands<T> operands(const Buffer& a, const Buffer& b, const Buffer& x,
                                  const Buffer& h0, uint64_t steps, uint64_t state, bool variable) {
  kernels::ScanOperands<T> in;
  in.a = a.as<T>();
  in.b = b.as<T>();
  in.x = x.as<T>();
  in.h0 = h0.as<T>();
  in.steps = steps;
  in.state = state;
  in.variable = variable;
  return in;
}

}  // namespace

std::unique_ptr<Buffer> selective_scan_fwd(const Buffer& a, const Buffer& b, const Buffer& x,
                                           const Buffer& h0, uint64_t steps, uint64_t state,
                                           bool variable, const char* op) {
  require_compatible(op, {&a, &b, &x, &h0}, SameSize::no);
  const uint64_t total = validate(a, b, x, h0, steps, state, variable, op);
  std::unique_ptr<Buffer> out = Buffer::allocate(x.backend(), x.dtype(), total, op);
  if (total == 0) return out;
  const bool exact = setting_enabled(Setting::deterministic);
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::selective_scan_fwd_ref(operands<T>(a, b, x, h0, steps, state, variable),
                                        out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        Workspace workspace(
            x.backend(),
            kernels::selective_scan_fwd_workspace_bytes(steps, state, sizeof(T), variable, exact),
            op);
        kernels::selective_scan_fwd_cuda(operands<T>(a, b, x, h0, steps, state, variable),
                                         out->as<T>(), exact, workspace.data(), s);
      });
  return out;
}

ScanGradientBuffers selective_scan_bwd(const Buffer& a, const Buffer& b, const Buffer& x,
                                       const Buffer& h0, const Buffer& out, const Buffer& dy,
                                       uint64_t steps, uint64_t state, bool variable,
                                       const char* op) {
  require_compatible(op, {&a, &b, &x, &h0, &out, &dy}, SameSize::no);
  const uint64_t total = validate(a, b, x, h0, steps, state, variable, op);
  require_size(out, "out", "seqLen*state", total, op);
  require_size(dy, "dY", "seqLen*state", total, op);
  const uint64_t coefficient_size = variable ? total : state;
  ScanGradientBuffers r;
  if (total == 0) {
    // Zeros of the stated shapes (dX is empty).
    r.da = make_zeros(x.backend(), x.dtype(), coefficient_size, op);
    r.db = make_zeros(x.backend(), x.dtype(), coefficient_size, op);
    r.dx = Buffer::allocate(x.backend(), x.dtype(), 0, op);
    r.dh0 = make_zeros(x.backend(), x.dtype(), state, op);
    return r;
  }
  r.da = Buffer::allocate(x.backend(), x.dtype(), coefficient_size, op);
  r.db = Buffer::allocate(x.backend(), x.dtype(), coefficient_size, op);
  r.dx = Buffer::allocate(x.backend(), x.dtype(), total, op);
  r.dh0 = Buffer::allocate(x.backend(), x.dtype(), state, op);
  const bool exact = setting_enabled(Setting::deterministic);
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::ScanGradients<T> g{r.da->as<T>(), r.db->as<T>(), r.dx->as<T>(), r.dh0->as<T>()};
        kernels::selective_scan_bwd_ref(operands<T>(a, b, x, h0, steps, state, variable),
                                        out.as<T>(), dy.as<T>(), g);
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::ScanGradients<T> g{r.da->as<T>(), r.db->as<T>(), r.dx->as<T>(), r.dh0->as<T>()};
        Workspace workspace(
            x.backend(),
            kernels::selective_scan_bwd_workspace_bytes(steps, state, sizeof(T), variable, exact),
            op);
        kernels::selective_scan_bwd_cuda(operands<T>(a, b, x, h0, steps, state, variable),
                                         out.as<T>(), dy.as<T>(), g, exact, workspace.data(), s);
      });
  return r;
}

}  // namespace tlrt
