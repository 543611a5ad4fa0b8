// Diagonal selective scans (SPEC-ops 13; symbols-ops.tsv group scan). Pure symbols: every failure
// (bad sizes, mixed dtypes, released or encoded operands, out of memory, device error) panics.
// Every buffer argument is borrowed; results are fresh owned buffers.
#include "abi/boundary.h"
#include "runtime/scan_dispatch.h"

using namespace tlrt::abi;

namespace {

constexpr const char* kFwd = "selective_scan_diag_fwd";
constexpr const char* kBwd = "selective_scan_diag_bwd";
constexpr const char* kVarFwd = "selective_scan_diag_var_fwd";
constexpr const char* kVarBwd = "selective_scan_diag_var_bwd";

lean_obj_res forward(b_lean_obj_arg a_obj, b_lean_obj_arg b_obj, b_lean_obj_arg x_obj,
                     b_lean_obj_arg h0_obj, uint32_t steps, uint32_t state, bool variable,
                     const char* op) {
  return pure_call(
      [&] {
        tlrt::Buffer& a = live_buffer(a_obj, op);
        tlrt::Buffer& b = live_buffer(b_obj, op);
        tlrt::Buffer& x = live_buffer(x_obj, op);
        tlrt::Buffer& h0 = live_buffer(h0_obj, op);
        return box(tlrt::selective_scan_fwd(a, b, x, h0, steps, state, variable, op));
      },
      op);
}

// (dA, (dB, (dX, dH0))): Lean's right-nested products.
lean_obj_res box_gradients(tlrt::ScanGradientBuffers g) {
  return box_tuple(std::move(g.da), std::move(g.db), std::move(g.dx), std::move(g.dh0));
}

lean_obj_res backward(b_lean_obj_arg a_obj, b_lean_obj_arg b_obj, b_lean_obj_arg x_obj,
                      b_lean_obj_arg h0_obj, b_lean_obj_arg out_obj, b_lean_obj_arg dy_obj,
                      uint32_t steps, uint32_t state, bool variable, const char* op) {
  return pure_call(
      [&] {
        tlrt::Buffer& a = live_buffer(a_obj, op);
        tlrt::Buffer& b = live_buffer(b_obj, op);
        tlrt::Buffer& x = live_buffer(x_obj, op);
        tlrt::Buffer& h0 = live_buffer(h0_obj, op);
        tlrt::Buffer& out = live_buffer(out_obj, op);
        tlrt::Buffer& dy = live_buffer(dy_obj, op);
        return box_gradients(
            tlrt::selective_scan_bwd(a, b, x, h0, out, dy, steps, state, variable, op));
      },
      op);
}

}  // namespace

extern "C" {

// A, B (length state), X (seqLen*state), h0 (state) borrowed; result owned: h of seqLen*state.
lean_obj_res torchlean_cuda_buffer_selective_scan_diag_fwd(b_lean_obj_arg A, b_lean_obj_arg B,
                                                           b_lean_obj_arg X, b_lean_obj_arg h0,
                                                           uint32_t seqLen, uint32_t state) {
  return forward(A, B, X, h0, seqLen, state, false, kFwd);
}

// All borrowed; result owned: (dA, (dB, (dX, dH0))) of state, state, seqLen*state, state.
lean_obj_res torchlean_cuda_buffer_selective_scan_diag_bwd(b_lean_obj_arg A, b_lean_obj_arg B,
                                                           b_lean_obj_arg X, b_lean_obj_arg h0,
                                                           b_lean_obj_arg out, b_lean_obj_arg dY,
                                                           uint32_t seqLen, uint32_t state) {
  return backward(A, B, X, h0, out, dY, seqLen, state, false, kBwd);
}

// A, B, X (seqLen*state), h0 (state) borrowed; result owned: h of seqLen*state.
lean_obj_res torchlean_cuda_buffer_selective_scan_diag_var_fwd(b_lean_obj_arg A, b_lean_obj_arg B,
                                                               b_lean_obj_arg X, b_lean_obj_arg h0,
                                                               uint32_t seqLen, uint32_t state) {
  return forward(A, B, X, h0, seqLen, state, true, kVarFwd);
}

// All borrowed; result owned: (dA, (dB, (dX, dH0))) of seqLen*state (three) and state.
lean_obj_res torchlean_cuda_buffer_selective_scan_diag_var_bwd(b_lean_obj_arg A, b_lean_obj_arg B,
                                                               b_lean_obj_arg X, b_lean_obj_arg h0,
                                                               b_lean_obj_arg out,
                                                               b_lean_obj_arg dY, uint32_t seqLen,
                                                               uint32_t state) {
  return backward(A, B, X, h0, out, dY, seqLen, state, true, kVarBwd);
}

}  // extern "C"
