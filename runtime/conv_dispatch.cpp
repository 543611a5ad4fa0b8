#include "runtime/conv_dispatch.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

#include "kernels/conv/conv.h"
#include "runtime/construct.h"
#include "runtime/context.h"
#include "runtime/dispatch.h"
#include "runtime/settings.h"

#if TLRT_HAVE_CUDA
#include "runtime/cuda_libraries.h"
#endif

namespace tlrt {
namespace {

using kernels::ConvPass;
using kernels::ConvShape;

std::atomic<uint64_t> g_cudnn_passes{0};
std::atomic<uint64_t> g_direct_passes{0};

// The three-axis shape of a rank-r geometry: the r axes last, unit axes before them.
ConvShape make_shape(uint64_t batch, uint64_t cin, uint64_t cout, uint64_t groups, bool dense,
                     const Dims& in, const Dims& k, const Dims& out, const Dims& stride,
                     const Dims& pre, const Dims& post, const Dims* dil) {
  ConvShape s;
  const size_t r = in.size();
  s.rank = static_cast<uint32_t>(r);
  s.batch = batch;
  s.cin = cin;
  s.cout = cout;
  s.groups = groups;
  s.kernel_cols = dense ? cin : cin / groups;
  for (size_t a = 0; a < r; ++a) {
    const size_t t = kernels::kConvAxes - r + a;
    s.in[t] = in[a];
    s.k[t] = k[a];
    s.out[t] = out[a];
    s.stride[t] = stride[a];
    s.pre[t] = pre[a];
    s.post[t] = post[a];
    s.dil[t] = dil != nullptr ? (*dil)[a] : 1;
  }
  return s;
}

// The conv whose passes a fixed-layout symbol uses: conv_* as given; convtranspose_* as the conv
// from the transposed output (outC channels, g.out) to its input (inC channels, g.in).
ConvShape fixed_shape(const ConvGeometry& g, uint64_t in_channels, uint64_t out_channels,
                      bool transposed) {
  if (!transposed) {
    return make_shape(1, in_channels, out_channels, 1, false, g.in, g.kernel, g.out, g.stride,
                      g.padding, g.padding, nullptr);
  }
  return make_shape(1, out_channels, in_channels, 1, false, g.out, g.kernel, g.in, g.stride,
                    g.padding, g.padding, nullptr);
}

#if TLRT_HAVE_CUDA

struct ConvKey {
  uint32_t device = 0;
  ConvPass pass = ConvPass::fprop;
  kernels::ConvPlanPolicy policy;
  ConvShape s;

  bool operator==(const ConvKey& o) const {
    if (device != o.device || pass != o.pass || policy.f64 != o.policy.f64 ||
        policy.deterministic != o.policy.deterministic || policy.tf32 != o.policy.tf32 ||
        s.rank != o.s.rank || s.batch != o.s.batch || s.cin != o.s.cin || s.cout != o.s.cout ||
        s.groups != o.s.groups || s.kernel_cols != o.s.kernel_cols) {
      return false;
    }
    for (int a = 0; a < kernels::kConvAxes; ++a) {
      if (s.in[a] != o.s.in[a] || s.k[a] != o.s.k[a] || s.out[a] != o.s.out[a] ||
          s.stride[a] != o.s.stride[a] || s.pre[a] != o.s.pre[a] || s.post[a] != o.s.post[a] ||
          s.dil[a] != o.s.dil[a]) {
        return false;
      }
    }
    return true;
  }
};

struct ConvKeyHash {
  size_t operator()(const ConvKey& k) const {
    uint64_t h = 0x9e3779b97f4a7c15ull;
    auto mix = [&](uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    mix(k.device);
    mix((static_cast<uint64_t>(k.pass) << 8) | (uint64_t{k.policy.f64} << 2) |
        (uint64_t{k.policy.deterministic} << 1) | uint64_t{k.policy.tf32});
    mix(k.s.rank);
    mix(k.s.batch);
    mix(k.s.cin);
    mix(k.s.cout);
    mix(k.s.groups);
    mix(k.s.kernel_cols);
    for (int a = 0; a < kernels::kConvAxes; ++a) {
      mix(k.s.in[a]);
      mix(k.s.k[a]);
      mix(k.s.out[a]);
      mix(k.s.stride[a]);
      mix(k.s.pre[a]);
      mix(k.s.post[a]);
      mix(k.s.dil[a]);
    }
    return static_cast<size_t>(h);
  }
};

cuda::DevicePlanCaches<ConvKey, kernels::ConvCudnnPlan, ConvKeyHash> g_conv_plans(
    [](kernels::ConvCudnnPlan& plan) { kernels::conv_cudnn_plan_destroy(plan); });

// A cuDNN handle carries its stream and is not for concurrent calls: queuing a pass is one step.
std::mutex g_cudnn_exec;

bool cudnn_wanted() {
  return kernels::conv_cudnn_available() && setting_enabled(Setting::cudnn_enabled);
}

using PlanLease =
    cuda::DevicePlanCaches<ConvKey, kernels::ConvCudnnPlan, ConvKeyHash>::Cache::Lease;

// One pass on cuDNN: false (nothing queued) when cuDNN has no plan for the geometry. Unequal pre
// and post padding (conv_io's fprop) is given to cuDNN as such first; without an engine for it,
// the input is zero-padded into a workspace and the pass runs unpadded on that copy.
template <class T>
bool cudnn_pass(ConvPass pass, const ConvShape& s, const T* a, const T* b, const T* bias, T* out,
                Backend backend, CUstream_st* stream, const char* op) {
  ConvShape packed = s;
  packed.kernel_cols = s.cin_group();
  kernels::ConvPlanPolicy policy;
  policy.f64 = sizeof(T) == 8;
  policy.deterministic = setting_enabled(Setting::deterministic);
  policy.tf32 = !policy.f64 && setting_enabled(Setting::conv_tf32);
  const uint32_t device = selected_device();
  std::lock_guard<std::mutex> exec(g_cudnn_exec);
  cudnnContext* handle = cuda::cudnn_handle(device);
  auto plan_for = [&](const ConvShape& shape) {
    return g_conv_plans.on(device).acquire(
        ConvKey{device, pass, policy, shape}, [&](const ConvKey& key) {
          return kernels::conv_cudnn_plan_create(key.s, key.pass, key.policy, handle, op);
        });
  };
  std::optional<PlanLease> lease;
  lease.emplace(plan_for(packed));
  bool asymmetric = false;
  for (int a = 0; a < kernels::kConvAxes; ++a) asymmetric = asymmetric || s.pre[a] != s.post[a];
  bool padded_copy = false;
  if ((*lease)->graph == nullptr) {
    lease->used();
    lease.reset();
    if (pass != ConvPass::fprop || !asymmetric) return false;
    lease.emplace(plan_for(kernels::conv_padded_shape(packed)));
    if ((*lease)->graph == nullptr) {
      lease->used();
      return false;
    }
    padded_copy = true;
  }
  const ConvShape padded = kernels::conv_padded_shape(s);
  Workspace pad(backend, padded_copy ? s.batch * s.cin * padded.in_volume() * sizeof(T) : 0, op);
  const T* input = a;
  if (padded_copy) {
    kernels::conv_pad_input_cuda(s, a, static_cast<T*>(pad.data()), stream);
    input = static_cast<const T*>(pad.data());
  }
  const T* weights = b;
  const uint64_t packed_bytes = s.dense_kernel() && pass != ConvPass::wgrad
                                    ? s.cout * s.cin_group() * s.k_volume() * sizeof(T)
                                    : 0;
  Workspace pack(backend, packed_bytes, op);
  if (packed_bytes != 0) {
    kernels::conv_pack_groups_cuda(b, s.cout, s.cin, s.groups, s.k_volume(),
                                   static_cast<T*>(pack.data()), stream);
    weights = static_cast<const T*>(pack.data());
  }
  Workspace work(backend, (*lease)->workspace_bytes, op);
  kernels::conv_cudnn_execute(**lease, handle, input, weights, out, work.data(), op);
  lease->used();
  if (bias != nullptr) {
    const bool dgrad = pass == ConvPass::dgrad;
    kernels::conv_bias_add_cuda(bias, s.batch, dgrad ? s.cin : s.cout,
                                dgrad ? s.in_volume() : s.out_volume(), out, stream);
  }
  return true;
}

// Runs one pass of the packed-or-dense geometry s on the device: cuDNN when it has a plan, else
// the direct kernels. fprop: a = x, b = w; dgrad: a = dy, b = w; wgrad: a = x, b = dy. A bias
// (fprop, dgrad) is added to the result.
template <class T>
void run_pass(ConvPass pass, const ConvShape& s, const T* a, const T* b, const T* bias, T* out,
              Backend backend, CUstream_st* stream, const char* op) {
  if (cudnn_wanted() && cudnn_pass(pass, s, a, b, bias, out, backend, stream, op)) {
    g_cudnn_passes.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  switch (pass) {
    case ConvPass::fprop:
      kernels::conv_fprop_direct_cuda(s, a, b, bias, out, stream);
      break;
    case ConvPass::dgrad:
      kernels::conv_dgrad_direct_cuda(s, a, b, bias, out, stream);
      break;
    case ConvPass::wgrad:
      kernels::conv_wgrad_direct_cuda(s, a, b, out, stream);
      break;
  }
  g_direct_passes.fetch_add(1, std::memory_order_relaxed);
}

#endif  // TLRT_HAVE_CUDA

// Reference pass: the same roles as run_pass.
template <class T>
void ref_pass(ConvPass pass, const ConvShape& s, const T* a, const T* b, const T* bias, T* out) {
  switch (pass) {
    case ConvPass::fprop:
      kernels::conv_fprop_ref(s, a, b, bias, out);
      break;
    case ConvPass::dgrad:
      kernels::conv_dgrad_ref(s, a, b, bias, out);
      break;
    case ConvPass::wgrad:
      kernels::conv_wgrad_ref(s, a, b, out);
      break;
  }
}

// One pass on whichever backend holds `like`, writing `out`.
void pass_on_backend(ConvPass pass, const ConvShape& s, const Buffer& a, const Buffer& b,
                     const Buffer* bias, Buffer& out, const char* op) {
  on_backend(
      out.backend(), out.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        ref_pass<T>(pass, s, a.as<T>(), b.as<T>(), bias != nullptr ? bias->as<T>() : nullptr,
                    out.as<T>());
      },
      [&](auto as, CUstream_st* stream) {
        using T = typename decltype(as)::type;
#if TLRT_HAVE_CUDA
        run_pass<T>(pass, s, a.as<T>(), b.as<T>(), bias != nullptr ? bias->as<T>() : nullptr,
                    out.as<T>(), out.backend(), stream, op);
#else
        (void)stream;
#endif
      });
}

// out (batch, channels, volume) = bias broadcast.
void fill_bias(const Buffer& bias, uint64_t batch, uint64_t channels, uint64_t volume, Buffer& out,
               const char* op) {
  on_backend(
      out.backend(), out.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::conv_bias_fill_ref(bias.as<T>(), batch, channels, volume, out.as<T>());
      },
      [&](auto as, CUstream_st* stream) {
        using T = typename decltype(as)::type;
        kernels::conv_bias_fill_cuda(bias.as<T>(), batch, channels, volume, out.as<T>(), stream);
      });
}

// db[o] = sum over (batch, volume) of dy[., o, .].
void bias_grad(const Buffer& dy, uint64_t batch, uint64_t channels, uint64_t volume, Buffer& db,
               const char* op) {
  on_backend(
      db.backend(), db.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::conv_bias_grad_ref(dy.as<T>(), batch, channels, volume, db.as<T>());
      },
      [&](auto as, CUstream_st* stream) {
        using T = typename decltype(as)::type;
        kernels::conv_bias_grad_cuda(dy.as<T>(), batch, channels, volume, db.as<T>(), stream);
      });
}

}  // namespace

ConvPathCounters conv_path_counters() {
  ConvPathCounters c;
  c.cudnn_passes = g_cudnn_passes.load(std::memory_order_relaxed);
  c.direct_passes = g_direct_passes.load(std::memory_order_relaxed);
  return c;
}

std::unique_ptr<Buffer> conv_forward(const Buffer& input, const Buffer& kernel, const Buffer& bias,
                                     const ConvGeometry& g, uint64_t in_channels,
                                     uint64_t out_channels, bool transposed, const char* op) {
  require_conv_size(input, "input", in_channels, g.in, "inC * prod(inSpatial)", op);
  if (transposed) {
    require_conv_kernel_size(kernel, "kernel", in_channels, out_channels, g.kernel,
                             "inC * outC * prod(kernelSpatial)", op);
  } else {
    require_conv_kernel_size(kernel, "kernel", out_channels, in_channels, g.kernel,
                             "outC * inC * prod(kernelSpatial)", op);
  }
  require_conv_size(bias, "bias", out_channels, {}, "outC", op);
  const uint64_t total = conv_volume(out_channels, g.out, op);
  require_compatible(op, {&input, &kernel, &bias}, SameSize::no);

  std::unique_ptr<Buffer> out = Buffer::allocate(input.backend(), input.dtype(), total, op);
  if (total == 0) return out;
  if (input.size() == 0) {
    fill_bias(bias, 1, out_channels, g.out_volume, *out, op);
    return out;
  }
  const ConvShape s = fixed_shape(g, in_channels, out_channels, transposed);
  // conv: fprop(x, W) + bias; convtranspose: the adjoint pass dgrad(x as dY, W) + bias.
  pass_on_backend(transposed ? ConvPass::dgrad : ConvPass::fprop, s, input, kernel, &bias, *out,
                  op);
  return out;
}

ConvGradients conv_backward(const Buffer& input, const Buffer& kernel, const Buffer& gradient,
                            const ConvGeometry& g, uint64_t in_channels, uint64_t out_channels,
                            bool transposed, const char* op) {
  require_conv_size(input, "input", in_channels, g.in, "inC * prod(inSpatial)", op);
  if (transposed) {
    require_conv_kernel_size(kernel, "kernel", in_channels, out_channels, g.kernel,
                             "inC * outC * prod(kernelSpatial)", op);
  } else {
    require_conv_kernel_size(kernel, "kernel", out_channels, in_channels, g.kernel,
                             "outC * inC * prod(kernelSpatial)", op);
  }
  require_conv_size(gradient, "gradOutput", out_channels, g.out, "outC * prod(output extents)", op);
  conv_volume(out_channels, g.out, op);
  require_compatible(op, {&input, &kernel, &gradient}, SameSize::no);

  ConvGradients r;
  const Backend backend = input.backend();
  const Dtype dtype = input.dtype();
  if (gradient.size() == 0 || input.size() == 0 || kernel.size() == 0) {
    r.kernel = make_zeros(backend, dtype, kernel.size(), op);
    r.bias = make_zeros(backend, dtype, out_channels, op);
    if (gradient.size() != 0) bias_grad(gradient, 1, out_channels, g.out_volume, *r.bias, op);
    r.input = make_zeros(backend, dtype, input.size(), op);
    return r;
  }
  r.kernel = Buffer::allocate(backend, dtype, kernel.size(), op);
  r.bias = Buffer::allocate(backend, dtype, out_channels, op);
  r.input = Buffer::allocate(backend, dtype, input.size(), op);
  const ConvShape s = fixed_shape(g, in_channels, out_channels, transposed);
  if (!transposed) {
    // dW = wgrad(x, dY), dX = dgrad(dY, W).
    pass_on_backend(ConvPass::wgrad, s, input, gradient, nullptr, *r.kernel, op);
    pass_on_backend(ConvPass::dgrad, s, gradient, kernel, nullptr, *r.input, op);
  } else {
    // The conv runs from dY (outC, g.out) to x (inC, g.in): dW = wgrad(dY, x), dX = fprop(dY, W).
    pass_on_backend(ConvPass::wgrad, s, gradient, input, nullptr, *r.kernel, op);
    pass_on_backend(ConvPass::fprop, s, gradient, kernel, nullptr, *r.input, op);
  }
  bias_grad(gradient, 1, out_channels, g.out_volume, *r.bias, op);
  return r;
}

std::unique_ptr<Buffer> conv_io(const Buffer& input, const Buffer& kernel, const Buffer& bias,
                                const ConvIoGeometry& g, const char* op) {
  require_conv_io_size(input, "input", g.input_dims, op);
  require_conv_io_size(kernel, "kernel", g.kernel_dims, op);
  require_conv_io_size(bias, "bias", Dims{g.cout}, op);
  require_compatible(op, {&input, &kernel, &bias}, SameSize::no);

  std::unique_ptr<Buffer> out = Buffer::allocate(input.backend(), input.dtype(), g.out_total, op);
  if (g.out_total == 0) return out;
  uint64_t out_volume = 1;
  for (uint64_t e : g.out) out_volume *= e;
  if (input.size() == 0) {
    fill_bias(bias, g.batch, g.cout, out_volume, *out, op);
    return out;
  }
  const ConvShape s = make_shape(g.batch, g.cin, g.cout, g.groups, g.groups > 1, g.in, g.kernel,
                                 g.out, g.stride, g.before, g.after, &g.dilation);
  pass_on_backend(ConvPass::fprop, s, input, kernel, &bias, *out, op);
  return out;
}

}  // namespace tlrt
