#include "runtime/layer_norm_dispatch.h"

#include "kernels/layer_norm/layer_norm.h"
#include "runtime/dispatch.h"
#include "runtime/shape_geometry.h"

namespace tlrt {

// rows > 0 and cols > 0 first (the contract's message), then the operands (live, native, one
// backend, one dtype), then each size against rows and cols.
void layer_norm_dims(uint64_t rows, uint64_t cols, const char* what, const char* op) {
  if (rows == 0 || cols == 0) {
    fail(ErrorKind::invalid_argument, op,
         std::string(what) + ": dimensions must be positive (rows = " + std::to_string(rows) +
             ", cols = " + std::to_string(cols) + ")");
  }
}

LayerNormResults layer_norm_fwd(const Buffer& x, const Buffer& gamma, const Buffer& beta,
                                uint64_t rows, uint64_t cols, double epsilon, const char* op) {
  layer_norm_dims(rows, cols, "layerNormFwd", op);
  require_compatible(op, {&x, &gamma, &beta}, SameSize::no);
  require_shape(x, "x", Dims{rows, cols}, "[rows, cols]", op);
  require_shape(gamma, "gamma", Dims{cols}, "[cols]", op);
  require_shape(beta, "beta", Dims{cols}, "[cols]", op);
  const uint64_t n = rows * cols;  // checked by require_shape
  LayerNormResults out;
  out[0] = Buffer::allocate(x.backend(), x.dtype(), n, op);
  out[1] = Buffer::allocate(x.backend(), x.dtype(), n, op);
  out[2] = Buffer::allocate(x.backend(), x.dtype(), rows, op);
  const kernels::LayerNormShape s{rows, cols};
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::layer_norm_fwd_ref<T>(x.as<T>(), gamma.as<T>(), beta.as<T>(), s, epsilon,
                                       out[0]->as<T>(), out[1]->as<T>(), out[2]->as<T>());
      },
      [&](auto as, CUstream_st* stream) {
        using T = typename decltype(as)::type;
        kernels::layer_norm_fwd_cuda<T>(x.as<T>(), gamma.as<T>(), beta.as<T>(), s, epsilon,
                                        out[0]->as<T>(), out[1]->as<T>(), out[2]->as<T>(), stream);
      });
  return out;
}

LayerNormResults layer_norm_bwd(const Buffer& dout, const Buffer& xhat, const Buffer& inv_std,
                                const Buffer& gamma, uint64_t rows, uint64_t cols,
                                double cols_scale, double inv_cols, const char* op) {
  layer_norm_dims(rows, cols, "layerNormBwd", op);
  require_compatible(op, {&dout, &xhat, &inv_std, &gamma}, SameSize::no);
  require_shape(dout, "dOut", Dims{rows, cols}, "[rows, cols]", op);
  require_shape(xhat, "normalized", Dims{rows, cols}, "[rows, cols]", op);
  require_shape(inv_std, "invStd", Dims{rows}, "[rows]", op);
  require_shape(gamma, "gamma", Dims{cols}, "[cols]", op);
  const uint64_t n = rows * cols;  // checked by require_shape
  LayerNormResults out;
  out[0] = Buffer::allocate(dout.backend(), dout.dtype(), n, op);
  out[1] = Buffer::allocate(dout.backend(), dout.dtype(), cols, op);
  out[2] = Buffer::allocate(dout.backend(), dout.dtype(), cols, op);
  const kernels::LayerNormShape s{rows, cols};
  on_backend(
      dout.backend(), dout.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::layer_norm_bwd_ref<T>(dout.as<T>(), xhat.as<T>(), inv_std.as<T>(), gamma.as<T>(),
                                       s, static_cast<T>(cols_scale), static_cast<T>(inv_cols),
                                       out[0]->as<T>(), out[1]->as<T>(), out[2]->as<T>());
      },
      [&](auto as, CUstream_st* stream) {
        using T = typename decltype(as)::type;
        Workspace workspace(dout.backend(), kernels::layer_norm_bwd_workspace_bytes(s), op);
        kernels::layer_norm_bwd_cuda<T>(dout.as<T>(), xhat.as<T>(), inv_std.as<T>(), gamma.as<T>(),
                                        s, static_cast<T>(cols_scale), static_cast<T>(inv_cols),
                                        out[0]->as<T>(), out[1]->as<T>(), out[2]->as<T>(),
                                        workspace.data(), stream);
      });
  return out;
}

}  // namespace tlrt
