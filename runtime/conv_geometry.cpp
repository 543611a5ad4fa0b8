#include "runtime/conv_geometry.h"

#include <algorithm>
#include <string>

#include "runtime/dispatch.h"

namespace tlrt {
namespace {

constexpr uint64_t kU32Max = 0xffffffffull;
constexpr uint64_t kI64Max = 0x7fffffffffffffffull;

[[noreturn]] void bad(const char* op, const std::string& detail) {
  fail(ErrorKind::invalid_argument, op, detail);
}

std::string num(uint64_t v) {
  return std::to_string(v);
}

// Product with a zero factor 0 (never overflowing), else overflow-checked against `limit`.
bool volume_of(const Dims& dims, uint64_t limit, uint64_t* result) {
  if (std::find(dims.begin(), dims.end(), uint64_t{0}) != dims.end()) {
    *result = 0;
    return true;
  }
  uint64_t v = 1;
  for (uint64_t d : dims) {
    if (v > limit / d) return false;
    v *= d;
  }
  *result = v;
  return true;
}

}  // namespace

uint64_t conv_out_dim(uint64_t in, uint64_t k, uint64_t s, uint64_t p, const char* op) {
  const uint64_t padded = in + 2 * p;  // in, p <= 2^32-1: no overflow
  if (padded < k) return 0;
  const uint64_t out = (padded - k) / s + 1;
  if (out > kU32Max) {
    bad(op, "LibTorch conv/pool: outDim overflow (in = " + num(in) + ", kernel = " + num(k) +
                ", stride = " + num(s) + ", padding = " + num(p) + " give " + num(out) + ")");
  }
  return out;
}

uint64_t conv_transpose_out_dim(uint64_t in, uint64_t k, uint64_t s, uint64_t p, const char* op) {
  if (in == 0) return 0;
  const uint64_t t = (in - 1) * s + k;  // < 2^64 for entries <= 2^32-1
  const uint64_t sub = 2 * p;
  const uint64_t out = t >= sub ? t - sub : 0;
  if (out > kU32Max) {
    bad(op, "LibTorch conv/pool: outDimTranspose overflow (in = " + num(in) +
                ", kernel = " + num(k) + ", stride = " + num(s) + ", padding = " + num(p) +
                " give " + num(out) + ")");
  }
  return out;
}

uint64_t pool_out_dim(uint64_t in, uint64_t k, uint64_t s, uint64_t p, const char* op) {
  if (in == 0 || p > k / 2) return 0;
  return conv_out_dim(in, k, s, p, op);
}

ConvGeometry conv_geometry(const Dims& in, const Dims& kernel, const Dims& stride,
                           const Dims& padding, ConvKind kind, const char* op) {
  if (in.empty() || in.size() > 3) {
    bad(op, "torchlean conv/pool: spatial rank must be one, two, or three (size(inSpatial) = " +
                num(in.size()) + ")");
  }
  if (kernel.size() != in.size() || stride.size() != in.size() || padding.size() != in.size()) {
    bad(op, "torchlean conv/pool: array rank mismatch (inSpatial " + dims_text(in) +
                ", kernelSpatial " + dims_text(kernel) + ", stride " + dims_text(stride) +
                ", padding " + dims_text(padding) + ")");
  }
  ConvGeometry g;
  g.in = in;
  g.kernel = kernel;
  g.stride = stride;
  g.padding = padding;
  for (size_t a = 0; a < in.size(); ++a) {
    if (in[a] > kU32Max || kernel[a] == 0 || kernel[a] > kU32Max || stride[a] == 0 ||
        stride[a] > kU32Max || padding[a] > kU32Max) {
      bad(op, "torchlean conv/pool: invalid spatial dimension, kernel, stride or padding (axis " +
                  num(a) + ": in = " + num(in[a]) + ", kernel = " + num(kernel[a]) +
                  ", stride = " + num(stride[a]) + ", padding = " + num(padding[a]) + ")");
    }
    g.out.push_back(kind == ConvKind::transposed
                        ? conv_transpose_out_dim(in[a], kernel[a], stride[a], padding[a], op)
                    : kind == ConvKind::pooling
                        ? pool_out_dim(in[a], kernel[a], stride[a], padding[a], op)
                        : conv_out_dim(in[a], kernel[a], stride[a], padding[a], op));
  }
  const struct {
    const Dims* dims;
    const char* name;
    uint64_t* volume;
  } parts[] = {{&g.in, "inSpatial", &g.in_volume},
               {&g.kernel, "kernelSpatial", &g.kernel_volume},
               {&g.out, "output extents", &g.out_volume}};
  for (const auto& part : parts) {
    if (!volume_of(*part.dims, ~uint64_t{0}, part.volume)) {
      bad(op, std::string("torchlean conv/pool: dimension product overflow (") + part.name + " " +
                  dims_text(*part.dims) + ")");
    }
  }
  return g;
}

uint64_t conv_volume(uint64_t channels, const Dims& spatial, const char* op) {
  Dims shape{channels};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  uint64_t v = 0;
  if (!volume_of(shape, ~uint64_t{0}, &v)) {
    bad(op, "torchlean conv/pool: dimension product overflow (shape " + dims_text(shape) + ")");
  }
  if (v > kI64Max) {
    bad(op, "torchlean conv/pool: tensor size exceeds ATen indexing (shape " + dims_text(shape) +
                " has " + num(v) + " elements)");
  }
  return v;
}

void require_conv_size(const Buffer& b, const char* name, uint64_t channels, const Dims& spatial,
                       const char* what, const char* op) {
  require_native(b, op);
  const uint64_t v = conv_volume(channels, spatial, op);
  if (b.size() != v) {
    bad(op, std::string("torchlean conv/pool: buffer size mismatch (size(") + name +
                ") = " + num(b.size()) + " but " + what + " = " + num(v) + ")");
  }
}

void require_conv_kernel_size(const Buffer& b, const char* name, uint64_t a, uint64_t c,
                              const Dims& spatial, const char* what, const char* op) {
  require_native(b, op);
  Dims rest{c};
  rest.insert(rest.end(), spatial.begin(), spatial.end());
  const uint64_t v = conv_volume(a, rest, op);
  if (b.size() != v) {
    bad(op, std::string("torchlean conv/pool: buffer size mismatch (size(") + name +
                ") = " + num(b.size()) + " but " + what + " = " + num(v) + ")");
  }
}

uint64_t conv_io_volume(const Dims& dims, const char* op) {
  uint64_t v = 0;
  if (!volume_of(dims, kI64Max, &v)) {
    bad(op, "LibTorch: dimension product overflow (dims = " + dims_text(dims) + ")");
  }
  return v;
}

void require_conv_io_size(const Buffer& b, const char* name, const Dims& shape, const char* op) {
  require_native(b, op);
  const uint64_t v = conv_io_volume(shape, op);
  if (b.size() != v) {
    bad(op, std::string("LibTorch: buffer size mismatch (size(") + name + ") = " + num(b.size()) +
                " but the product of " + dims_text(shape) + " = " + num(v) + ")");
  }
}

ConvIoGeometry conv_io_geometry(const Dims& input_dims, const Dims& kernel_dims, const Dims& stride,
                                const Dims& before, const Dims& after, const Dims& dilation,
                                uint64_t groups, const char* op) {
  const size_t rank = stride.size();
  if (rank < 1 || rank > 3) {
    bad(op, "LibTorch conv: spatial rank must be one, two, or three (size(stride) = " + num(rank) +
                ")");
  }
  if (input_dims.size() < rank + 1 || kernel_dims.size() != rank + 2 || before.size() != rank ||
      after.size() != rank || dilation.size() != rank) {
    bad(op, "LibTorch conv: rank mismatch (rank " + num(rank) + ": inputDims " +
                dims_text(input_dims) + ", kernelDims " + dims_text(kernel_dims) +
                ", paddingBefore " + dims_text(before) + ", paddingAfter " + dims_text(after) +
                ", dilation " + dims_text(dilation) + ")");
  }
  ConvIoGeometry g;
  g.input_dims = input_dims;
  g.kernel_dims = kernel_dims;
  g.stride = stride;
  g.before = before;
  g.after = after;
  g.dilation = dilation;
  g.groups = groups;
  const size_t channel_axis = input_dims.size() - rank - 1;
  g.cin = input_dims[channel_axis];
  g.cout = kernel_dims[0];
  if (groups == 0 || g.cin == 0 || g.cout == 0 || g.cin % groups != 0 || g.cout % groups != 0 ||
      kernel_dims[1] != g.cin) {
    bad(op, "LibTorch conv: invalid channel groups (Cin = " + num(g.cin) +
                ", Cout = " + num(g.cout) + ", kernelDims[1] = " + num(kernel_dims[1]) +
                ", groups = " + num(groups) + ")");
  }
  const Dims leading(input_dims.begin(), input_dims.begin() + channel_axis);
  g.batch = conv_io_volume(leading, op);
  if (g.batch > kU32Max) {
    bad(op, "LibTorch conv: batch exceeds ABI (batch = " + num(g.batch) + ")");
  }
  Dims output{g.batch, g.cout};
  for (size_t a = 0; a < rank; ++a) {
    const uint64_t k = kernel_dims[a + 2];
    if (k == 0 || stride[a] == 0 || dilation[a] == 0) {
      bad(op, "LibTorch conv: kernel, stride and dilation must be positive (axis " + num(a) +
                  ": kernel = " + num(k) + ", stride = " + num(stride[a]) +
                  ", dilation = " + num(dilation[a]) + ")");
    }
    const uint64_t effective = (k - 1) * dilation[a] + 1;
    const uint64_t in = input_dims[channel_axis + 1 + a];
    const uint64_t padded = in + before[a] + after[a];
    const uint64_t extent = padded < effective ? 0 : (padded - effective) / stride[a] + 1;
    if (extent > kU32Max) {
      bad(op, "LibTorch conv: output dimension exceeds ABI (axis " + num(a) + ": extent " +
                  num(extent) + ")");
    }
    g.in.push_back(in);
    g.kernel.push_back(k);
    g.out.push_back(extent);
    output.push_back(extent);
  }
  g.out_total = conv_io_volume(output, op);
  if (g.out_total > kU32Max) {
    bad(op, "LibTorch conv: output exceeds ABI (output " + dims_text(output) + " has " +
                num(g.out_total) + " elements)");
  }
  return g;
}

}  // namespace tlrt
