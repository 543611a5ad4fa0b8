// Layer normalization (SPEC-ops 9; symbols-ops.tsv group normalization). Pure symbols: every
// failure (rows or cols zero, checked before any operand is looked at; released buffer, non-buffer
// argument, encoded buffer, mixed dtypes, sizes that disagree with rows and cols, out of memory,
// device error) panics. Every argument is borrowed; each result is a Lean triple (a, (b, c)) of
// three fresh owned buffers of the operands' dtype.
#include <utility>

#include "abi/boundary.h"
#include "runtime/layer_norm_dispatch.h"

using namespace tlrt::abi;

namespace {

// (a, (b, c)) of the three results.
lean_obj_res box_triple(tlrt::LayerNormResults results) {
  return box_tuple(std::move(results[0]), std::move(results[1]), std::move(results[2]));
}

}  // namespace

extern "C" {

// x, gamma, beta borrowed; result owned: (y, (xhat, invStd)), y and xhat of rows*cols, invStd of
// rows. invCols is ignored; epsilon is used unrounded in binary64.
lean_obj_res torchlean_cuda_buffer_layer_norm_fwd(b_lean_obj_arg x, b_lean_obj_arg gamma,
                                                  b_lean_obj_arg beta, uint32_t rows, uint32_t cols,
                                                  double invCols, double epsilon) {
  (void)invCols;
  return pure_call([&] {
    const char* op = "layer_norm_fwd";
    tlrt::layer_norm_dims(rows, cols, "layerNormFwd", op);
    tlrt::Buffer& input = live_buffer(x, op);
    tlrt::Buffer& weight = live_buffer(gamma, op);
    tlrt::Buffer& bias = live_buffer(beta, op);
    return box_triple(tlrt::layer_norm_fwd(input, weight, bias, rows, cols, epsilon, op));
  });
}

// dout, normalized, invStd, gamma borrowed; result owned: (dx, (dGamma, dBeta)), dx of rows*cols,
// dGamma and dBeta of cols. colsScale and invCols are rounded to the dtype.
lean_obj_res torchlean_cuda_buffer_layer_norm_bwd(b_lean_obj_arg dout, b_lean_obj_arg normalized,
                                                  b_lean_obj_arg invStd, b_lean_obj_arg gamma,
                                                  uint32_t rows, uint32_t cols, double colsScale,
                                                  double invCols) {
  return pure_call([&] {
    const char* op = "layer_norm_bwd";
    tlrt::layer_norm_dims(rows, cols, "layerNormBwd", op);
    tlrt::Buffer& dy = live_buffer(dout, op);
    tlrt::Buffer& xhat = live_buffer(normalized, op);
    tlrt::Buffer& inv_std = live_buffer(invStd, op);
    tlrt::Buffer& weight = live_buffer(gamma, op);
    return box_triple(
        tlrt::layer_norm_bwd(dy, xhat, inv_std, weight, rows, cols, colsScale, invCols, op));
  });
}

}  // extern "C"
