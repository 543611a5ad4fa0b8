#include "runtime/attention_dispatch.h"

#include <cmath>
#include <limits>
#include <string>

#include "kernels/attention/attention.h"
#include "kernels/matmul/matmul.h"
#include "kernels/softmax/softmax.h"
#include "runtime/dispatch.h"
#include "runtime/matmul_dispatch.h"
#include "runtime/settings.h"

namespace tlrt {
namespace {

// What the forward leaves on its output for the backward (whose backend and dtype are the
// output's).
struct AttentionContext final : BufferContext {
  AttentionContext(kernels::AttentionShape s, double sc, bool m, bool det)
      : shape(s), scale(sc), has_mask(m), deterministic(det) {}
  kernels::AttentionShape shape;
  double scale;
  bool has_mask;
  bool deterministic;
  // Empty when batch * n * d = 0.
  std::unique_ptr<Workspace> q, k, v, probs, blocked;
};

[[noreturn]] void attention_fail(const char* op, const std::string& detail) {
  fail(ErrorKind::invalid_argument, op, "LibTorch attention: " + detail);
}

// batch * rows * cols within int64 and with addressable bytes at 8 bytes a scalar.
uint64_t attention_elements(uint64_t batch, uint64_t rows, uint64_t cols, const char* what,
                            const char* op) {
  uint64_t count = batch;
  for (const uint64_t factor : {rows, cols}) {
    if (factor != 0 &&
        count > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / factor) {
      attention_fail(op, std::string("shape exceeds ATen's signed element count (") + what + " = " +
                             std::to_string(batch) + " * " + std::to_string(rows) + " * " +
                             std::to_string(cols) + ")");
    }
    count *= factor;
  }
  if (count > std::numeric_limits<uint64_t>::max() / 8) {
    attention_fail(op, std::string("buffer byte size overflow (") + what + " = " +
                           std::to_string(count) + " scalars)");
  }
  return count;
}

// `first` (named `first_name`) gives the dtype and backend every operand must share.
void check_operand(const Buffer& b, uint64_t elements, const char* name, const Buffer& first,
                   const char* first_name, const char* op) {
  if (b.released()) attention_fail(op, std::string(name) + " was released");
  if (b.encoded() || (b.dtype() != Dtype::f32 && b.dtype() != Dtype::f64)) {
    attention_fail(op, std::string(name) + " must be a float32 or float64 buffer");
  }
  if (b.size() != elements) {
    attention_fail(op, std::string(name) + " buffer size mismatch (expected " +
                           std::to_string(elements) + ", got " + std::to_string(b.size()) + ")");
  }
  if (b.dtype() != first.dtype()) {
    attention_fail(op, std::string(name) + " has dtype " + dtype_name(b.dtype()) + " but " +
                           first_name + " has " + dtype_name(first.dtype()));
  }
  if (b.backend() != first.backend()) {
    attention_fail(op, std::string(name) + " is not on the backend of " + first_name);
  }
}

// ATen runs the math pair, or for float32 the memory-efficient one, when it is permitted; with
// both off the request has no provider (flash and cuDNN attention take no float32 or float64).
void require_provider(Dtype dtype, const char* op) {
  const bool math = setting_enabled(Setting::sdp_math);
  const bool efficient = dtype == Dtype::f32 && setting_enabled(Setting::sdp_efficient);
  if (math || efficient) return;
  attention_fail(
      op, std::string("No available kernel: no enabled attention provider takes ") +
              dtype_name(dtype) + " inputs (math = 0, efficient = " +
              std::to_string(setting_enabled(Setting::sdp_efficient) ? 1 : 0) +
              ", flash = " + std::to_string(setting_enabled(Setting::sdp_flash) ? 1 : 0) +
              ", cuDNN = " + std::to_string(setting_enabled(Setting::sdp_cudnn) ? 1 : 0) + ")");
}

std::unique_ptr<Workspace> scalars(Backend backend, Dtype dtype, uint64_t count, const char* op) {
  return std::make_unique<Workspace>(backend, count * dtype_width(dtype), op);
}

}  // namespace

std::unique_ptr<Buffer> attention_fwd(const Buffer& q, const Buffer& k, const Buffer& v,
                                      const Buffer* mask, uint32_t has_mask, uint64_t batch,
                                      uint64_t n, uint64_t d, double scale, const char* op) {
  if (has_mask > 1) {
    attention_fail(op, "hasMask must be 0 or 1 (hasMask = " + std::to_string(has_mask) + ")");
  }
  if (!std::isfinite(scale)) attention_fail(op, "scale must be finite");
  if (std::abs(scale) > std::numeric_limits<float>::max()) {
    attention_fail(op, "scale exceeds the float32 range");
  }
  const uint64_t elements = attention_elements(batch, n, d, "batch * n * d", op);
  check_operand(q, elements, "Q", q, "Q", op);
  check_operand(k, elements, "K", q, "Q", op);
  check_operand(v, elements, "V", q, "Q", op);
  const uint64_t scores =
      has_mask != 0 || elements != 0 ? attention_elements(batch, n, n, "batch * n * n", op) : 0;
  if (has_mask != 0) check_operand(*mask, scores, "mask", q, "Q", op);
  const Backend backend = q.backend();
  const Dtype dtype = q.dtype();
  if (elements != 0) require_provider(dtype, op);
  const kernels::AttentionShape shape{batch, n, d};
  auto context = std::make_unique<AttentionContext>(shape, scale, has_mask != 0,
                                                    setting_enabled(Setting::deterministic));
  // Every workspace before the output, so that a failed allocation moves no ownership counter.
  const uint64_t rows = batch * n;
  std::unique_ptr<Workspace> scores_ws;  // the CUDA path's scores
  if (elements != 0) {
    context->q = scalars(backend, dtype, elements, op);
    context->k = scalars(backend, dtype, elements, op);
    context->v = scalars(backend, dtype, elements, op);
    context->probs = scalars(backend, dtype, scores, op);
    context->blocked = std::make_unique<Workspace>(backend, rows, op);
    if (backend == Backend::cuda) scores_ws = scalars(backend, dtype, scores, op);
  }
  std::unique_ptr<Buffer> out = Buffer::allocate(backend, dtype, elements, op);
  if (elements != 0) {
    auto* blocked = static_cast<uint8_t*>(context->blocked->data());
    const void* mask_data = has_mask != 0 ? mask->data() : nullptr;
    on_backend(
        backend, dtype, op,
        [&](auto as) {
          using T = typename decltype(as)::type;
          kernels::attention_fwd_ref(q.as<T>(), k.as<T>(), v.as<T>(),
                                     static_cast<const T*>(mask_data), shape, scale, out->as<T>(),
                                     static_cast<T*>(context->probs->data()), blocked);
          kernels::masked_rows_copy_ref(q.as<T>(), has_mask != 0 ? blocked : nullptr,
                                        static_cast<T*>(context->q->data()), rows, d);
          kernels::masked_rows_copy_ref(k.as<T>(), nullptr, static_cast<T*>(context->k->data()),
                                        rows, d);
          kernels::masked_rows_copy_ref(v.as<T>(), nullptr, static_cast<T*>(context->v->data()),
                                        rows, d);
        },
        [&](auto as, CUstream_st* s) {
          using T = typename decltype(as)::type;
          auto* probs = static_cast<T*>(context->probs->data());
          kernels::MatmulShape qk{batch, n, d, n, false, true};
          qk.alpha = scale;
          queue_product(backend, dtype, q.data(), k.data(), scores_ws->data(), qk, op);
          kernels::softmax_rows_cuda(static_cast<const T*>(scores_ws->data()),
                                     static_cast<const T*>(mask_data), rows, n, probs, s);
          kernels::masked_rows_copy_cuda(k.as<T>(), static_cast<const uint8_t*>(nullptr),
                                         static_cast<T*>(context->k->data()), rows, d, s, op);
          kernels::masked_rows_copy_cuda(v.as<T>(), static_cast<const uint8_t*>(nullptr),
                                         static_cast<T*>(context->v->data()), rows, d, s, op);
          const kernels::MatmulShape pv{batch, n, n, d, false, false};
          queue_product(backend, dtype, probs, v.data(), out->data(), pv, op);
          // Without a mask no row is blocked and the flags stay unwritten and unread (the
          // backward reads them only with a mask).
          const uint8_t* flags = has_mask != 0 ? blocked : nullptr;
          if (has_mask != 0) {
            kernels::attention_blocked_rows_cuda(static_cast<const T*>(probs), blocked, rows, n, s,
                                                 op);
            kernels::masked_rows_copy_cuda(out->as<T>(), flags, out->as<T>(), rows, d, s, op);
          }
          kernels::masked_rows_copy_cuda(q.as<T>(), flags, static_cast<T*>(context->q->data()),
                                         rows, d, s, op);
        });
  }
  out->set_context(std::move(context));
  return out;
}

AttentionGrads attention_bwd(const Buffer& out, const Buffer& dout, const char* op) {
  const auto* context = dynamic_cast<const AttentionContext*>(out.context());
  if (out.released() || context == nullptr) {
    attention_fail(op, "backward requires the original, unreleased forward buffer");
  }
  if (context->deterministic != setting_enabled(Setting::deterministic)) {
    attention_fail(op, "deterministic policy changed between forward and backward");
  }
  const kernels::AttentionShape shape = context->shape;
  // out is the forward's own live output: its size, dtype and backend are the context's.
  const uint64_t elements = shape.batch * shape.n * shape.d;  // checked by the forward
  check_operand(dout, elements, "dOut", out, "forward output", op);
  const Backend backend = out.backend();
  const Dtype dtype = out.dtype();
  const uint64_t rows = shape.batch * shape.n, n = shape.n, d = shape.d;
  // The CUDA path's workspaces before the results, so that a failed allocation moves no
  // ownership counter: the cotangent with its blocked rows +0 (only with a mask; without one no
  // row is blocked), and dp / ds.
  const bool device = backend == Backend::cuda && elements != 0;
  const uint64_t width = dtype_width(dtype);
  Workspace masked(backend, device && context->has_mask ? elements * width : 0, op);
  Workspace ds(backend, device ? rows * n * width : 0, op);
  AttentionGrads g{Buffer::allocate(backend, dtype, elements, op),
                   Buffer::allocate(backend, dtype, elements, op),
                   Buffer::allocate(backend, dtype, elements, op)};
  if (elements == 0) return g;
  const auto* blocked = static_cast<const uint8_t*>(context->blocked->data());
  const void* q = context->q->data();
  const void* k = context->k->data();
  const void* v = context->v->data();
  const void* probs = context->probs->data();
  on_backend(
      backend, dtype, op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::attention_bwd_ref(static_cast<const T*>(q), static_cast<const T*>(k),
                                   static_cast<const T*>(v), static_cast<const T*>(probs), blocked,
                                   dout.as<T>(), shape, context->scale, g.dq->as<T>(),
                                   g.dk->as<T>(), g.dv->as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        const uint8_t* flags = context->has_mask ? blocked : nullptr;
        const void* gm = dout.data();
        if (context->has_mask) {
          kernels::masked_rows_copy_cuda(dout.as<T>(), flags, static_cast<T*>(masked.data()), rows,
                                         d, s, op);
          gm = masked.data();
        }
        // dp = g v^T, then ds = p (dp - rowsum(p dp)) in place.
        queue_product(backend, dtype, gm, v, ds.data(),
                      kernels::MatmulShape{shape.batch, n, d, n, false, true}, op);
        kernels::attention_softmax_bwd_cuda(static_cast<const T*>(probs),
                                            static_cast<T*>(ds.data()), flags, rows, n, s, op);
        // dv = p^T g, dq = scale ds k, dk = scale ds^T q.
        queue_product(backend, dtype, probs, gm, g.dv->data(),
                      kernels::MatmulShape{shape.batch, n, n, d, true, false}, op);
        kernels::MatmulShape dsk{shape.batch, n, n, d, false, false};
        dsk.alpha = context->scale;
        queue_product(backend, dtype, ds.data(), k, g.dq->data(), dsk, op);
        kernels::MatmulShape dsq{shape.batch, n, n, d, true, false};
        dsq.alpha = context->scale;
        queue_product(backend, dtype, ds.data(), q, g.dk->data(), dsq, op);
        if (context->has_mask) {
          kernels::masked_rows_copy_cuda(g.dq->as<T>(), flags, g.dq->as<T>(), rows, d, s, op);
        }
      });
  return g;
}

}  // namespace tlrt
