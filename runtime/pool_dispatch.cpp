#include "runtime/pool_dispatch.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "runtime/construct.h"
#include "runtime/conv_geometry.h"
#include "runtime/dispatch.h"

namespace tlrt {
namespace {

constexpr const char* kGeometry = "torchlean conv/pool: ";

[[noreturn]] void geometry_error(const char* op, const std::string& what) {
  fail(ErrorKind::invalid_argument, op, kGeometry + what);
}

// The product of the extents (0 as soon as one is 0, as the reference computes it), checked in
// 64 bits.
uint64_t volume(const Dims& dims, const char* name, const char* op) {
  for (uint64_t d : dims) {
    if (d == 0) return 0;
  }
  uint64_t v = 1;
  for (uint64_t d : dims) {
    if (v > std::numeric_limits<uint64_t>::max() / d) {
      geometry_error(op, std::string("dimension product overflow (prod(") + name + ") for " + name +
                             " = " + dims_text(dims) + ")");
    }
    v *= d;
  }
  return v;
}

void require_pool_size(const Buffer& b, const char* name, uint64_t expected, const char* what,
                       const char* op) {
  if (b.size() != expected) {
    geometry_error(op, std::string("buffer size mismatch (size(") + name +
                           ") = " + std::to_string(b.size()) + " but C x prod(" + what +
                           ") = " + std::to_string(expected) + ")");
  }
}

template <class T>
T checked_beta(double beta, const char* op) {
  const T b = static_cast<T>(beta);
  if (!std::isfinite(b) || b == T(0)) {
    char text[96];
    std::snprintf(text, sizeof text, "beta = %.17g, %.17g in the buffer's dtype", beta,
                  static_cast<double>(b));
    fail(ErrorKind::invalid_argument, op,
         std::string("torchlean smooth pool: beta must be finite and nonzero (") + text + ")");
  }
  return b;
}

void check_beta(Dtype dtype, double beta, const char* op) {
  if (dtype == Dtype::f32) {
    checked_beta<float>(beta, op);
  } else {
    checked_beta<double>(beta, op);
  }
}

uint64_t input_count(const kernels::PoolGeometry& g) {
  return g.channels * g.in_volume;
}

uint64_t output_count(const kernels::PoolGeometry& g) {
  return g.channels * g.out_volume;
}

}  // namespace

kernels::PoolGeometry pool_geometry(const PoolArguments& args, const char* op) {
  const size_t rank = args.in.size();
  if (rank < 1 || rank > 3) {
    geometry_error(op, "spatial rank must be one, two, or three (size(inSpatial) = " +
                           std::to_string(rank) + ")");
  }
  if (args.kernel.size() != rank || args.stride.size() != rank || args.padding.size() != rank) {
    geometry_error(op, "array rank mismatch (size(inSpatial) = " + std::to_string(rank) +
                           ", size(kernel) = " + std::to_string(args.kernel.size()) +
                           ", size(stride) = " + std::to_string(args.stride.size()) +
                           ", size(padding) = " + std::to_string(args.padding.size()) + ")");
  }
  kernels::PoolGeometry g;
  Dims out(rank);
  const size_t lead = kernels::kPoolAxes - rank;
  for (size_t a = 0; a < rank; ++a) {
    const uint64_t in = args.in[a], k = args.kernel[a], s = args.stride[a], p = args.padding[a];
    const uint64_t limit = std::numeric_limits<uint32_t>::max();
    if (in > limit || k == 0 || k > limit || s == 0 || s > limit || p > limit) {
      geometry_error(op, "invalid spatial dimension, kernel, stride or padding (axis " +
                             std::to_string(a) + ": inSpatial = " + std::to_string(in) +
                             ", kernel = " + std::to_string(k) + ", stride = " + std::to_string(s) +
                             ", padding = " + std::to_string(p) + ")");
    }
    uint64_t o = 0;
    if (in != 0 && p <= k / 2 && in + 2 * p >= k) o = (in + 2 * p - k) / s + 1;
    if (o > limit) {
      fail(ErrorKind::invalid_argument, op,
           "LibTorch conv/pool: outDim overflow (axis " + std::to_string(a) + ": " +
               std::to_string(o) + " exceeds UInt32)");
    }
    out[a] = o;
    g.in[lead + a] = static_cast<int64_t>(in);
    g.kernel[lead + a] = static_cast<int64_t>(k);
    g.stride[lead + a] = static_cast<int64_t>(s);
    g.padding[lead + a] = static_cast<int64_t>(p);
    g.out[lead + a] = static_cast<int64_t>(o);
  }
  g.in_volume = volume(args.in, "inSpatial", op);
  g.kernel_volume = volume(args.kernel, "kernel", op);
  g.out_volume = volume(out, "outSpatial", op);
  g.channels = args.channels;
  conv_volume(args.channels, args.in, op);
  conv_volume(args.channels, out, op);
  return g;
}

std::unique_ptr<Buffer> maxpool_fwd(const Buffer& x, const PoolArguments& args, const char* op) {
  const kernels::PoolGeometry g = pool_geometry(args, op);
  require_native(x, op);
  require_pool_size(x, "input", input_count(g), "inSpatial", op);
  const uint64_t n = output_count(g);
  std::unique_ptr<Buffer> y = Buffer::allocate(x.backend(), x.dtype(), n, op);
  if (n == 0) return y;
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::maxpool_fwd_ref<T>(x.as<T>(), y->as<T>(), g);
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::maxpool_fwd_cuda<T>(x.as<T>(), y->as<T>(), g, s);
      });
  return y;
}

std::unique_ptr<Buffer> maxpool_bwd(const Buffer& x, const Buffer& dy, const PoolArguments& args,
                                    const char* op) {
  const kernels::PoolGeometry g = pool_geometry(args, op);
  require_native(dy, op);
  require_pool_size(dy, "gradOutput", output_count(g), "outSpatial", op);
  require_native(x, op);
  require_pool_size(x, "input", input_count(g), "inSpatial", op);
  require_compatible(op, {&x, &dy}, SameSize::no);
  const uint64_t n = input_count(g);
  if (dy.size() == 0) return make_zeros(x.backend(), x.dtype(), n, op);
  std::unique_ptr<Buffer> dx = Buffer::allocate(x.backend(), x.dtype(), n, op);
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::maxpool_bwd_ref<T>(x.as<T>(), dy.as<T>(), dx->as<T>(), g);
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::maxpool_bwd_cuda<T>(x.as<T>(), dy.as<T>(), dx->as<T>(), g, s);
      });
  return dx;
}

std::unique_ptr<Buffer> avgpool_fwd(const Buffer& x, const PoolArguments& args, const char* op) {
  const kernels::PoolGeometry g = pool_geometry(args, op);
  require_native(x, op);
  require_pool_size(x, "input", input_count(g), "inSpatial", op);
  const uint64_t n = output_count(g);
  std::unique_ptr<Buffer> y = Buffer::allocate(x.backend(), x.dtype(), n, op);
  if (n == 0) return y;
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::avgpool_fwd_ref<T>(x.as<T>(), y->as<T>(), g);
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::avgpool_fwd_cuda<T>(x.as<T>(), y->as<T>(), g, s);
      });
  return y;
}

std::unique_ptr<Buffer> avgpool_bwd(const Buffer& dy, const PoolArguments& args, const char* op) {
  const kernels::PoolGeometry g = pool_geometry(args, op);
  require_native(dy, op);
  require_pool_size(dy, "gradOutput", output_count(g), "outSpatial", op);
  const uint64_t n = input_count(g);
  if (dy.size() == 0) return make_zeros(dy.backend(), dy.dtype(), n, op);
  std::unique_ptr<Buffer> dx = Buffer::allocate(dy.backend(), dy.dtype(), n, op);
  on_backend(
      dy.backend(), dy.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::avgpool_bwd_ref<T>(dy.as<T>(), dx->as<T>(), g);
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::avgpool_bwd_cuda<T>(dy.as<T>(), dx->as<T>(), g, s);
      });
  return dx;
}

std::unique_ptr<Buffer> smooth_maxpool_fwd(const Buffer& x, double beta, const PoolArguments& args,
                                           const char* op) {
  const kernels::PoolGeometry g = pool_geometry(args, op);
  require_native(x, op);
  require_pool_size(x, "input", input_count(g), "inSpatial", op);
  const uint64_t n = output_count(g);
  if (n == 0) return Buffer::allocate(x.backend(), x.dtype(), 0, op);
  check_beta(x.dtype(), beta, op);
  std::unique_ptr<Buffer> y = Buffer::allocate(x.backend(), x.dtype(), n, op);
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::smooth_maxpool_fwd_ref<T>(x.as<T>(), static_cast<T>(beta), y->as<T>(), g);
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::smooth_maxpool_fwd_cuda<T>(x.as<T>(), static_cast<T>(beta), y->as<T>(), g, s);
      });
  return y;
}

std::unique_ptr<Buffer> smooth_maxpool_bwd(const Buffer& x, const Buffer& dy, double beta,
                                           const PoolArguments& args, const char* op) {
  const kernels::PoolGeometry g = pool_geometry(args, op);
  require_native(dy, op);
  require_pool_size(dy, "gradOutput", output_count(g), "outSpatial", op);
  require_native(x, op);
  require_pool_size(x, "input", input_count(g), "inSpatial", op);
  require_compatible(op, {&x, &dy}, SameSize::no);
  check_beta(x.dtype(), beta, op);
  const uint64_t n = input_count(g);
  if (dy.size() == 0) return make_zeros(x.backend(), x.dtype(), n, op);
  std::unique_ptr<Buffer> dx = Buffer::allocate(x.backend(), x.dtype(), n, op);
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::smooth_maxpool_bwd_ref<T>(x.as<T>(), dy.as<T>(), static_cast<T>(beta), dx->as<T>(),
                                           g);
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        const uint64_t bytes = kernels::smooth_maxpool_bwd_workspace_bytes(g, sizeof(T));
        Workspace workspace(x.backend(), bytes, op);
        kernels::smooth_maxpool_bwd_cuda<T>(x.as<T>(), dy.as<T>(), static_cast<T>(beta),
                                            dx->as<T>(), workspace.data(), g, s);
      });
  return dx;
}

}  // namespace tlrt
