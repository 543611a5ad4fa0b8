#include "runtime/shape_geometry.h"

#include <cstdint>
#include <utility>

#include "common/error.h"

namespace tlrt {

std::string dims_text(const Dims& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) text += ", ";
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

uint64_t shape_size(const Dims& dims, const char* name, const char* op) {
  uint64_t product = 1;
  for (uint64_t d : dims) {
    if (d != 0 && product > static_cast<uint64_t>(INT64_MAX) / d) {
      fail(ErrorKind::invalid_argument, op,
           std::string("shape size overflow (") + name + " = " + dims_text(dims) + ")");
    }
    product *= d;
  }
  return product;
}

void require_shape(const Buffer& b, const char* name, const Dims& dims, const char* dims_name,
                   const char* op) {
  const uint64_t expected = shape_size(dims, dims_name, op);
  if (b.size() == expected) return;
  fail(ErrorKind::invalid_argument, op,
       std::string("buffer size does not match shape (size(") + name +
           ") = " + std::to_string(b.size()) + " but prod(" + dims_name +
           ") = " + std::to_string(expected) + " for " + dims_name + " = " + dims_text(dims) + ")");
}

uint64_t BroadcastGeometry::in_stride(size_t a) const {
  uint64_t stride = 1;
  for (size_t k = a + 1; k < in_dims.size(); ++k) stride *= in_dims[k];
  return stride;
}

std::vector<uint64_t> BroadcastGeometry::read_strides() const {
  std::vector<uint64_t> strides(out_dims.size(), 0);
  for (size_t j = 0; j < out_dims.size(); ++j) {
    if (!reduced(j)) strides[j] = in_stride(static_cast<size_t>(source[j]));
  }
  return strides;
}

bool BroadcastGeometry::reduced(size_t j) const {
  return source[j] < 0 || in_dims[static_cast<size_t>(source[j])] == 1;
}

BroadcastGeometry broadcast_geometry(Dims in_dims, Dims out_dims,
                                     const std::vector<uint64_t>& axis_map, const char* op) {
  BroadcastGeometry g;
  g.in_size = shape_size(in_dims, "inDims", op);
  g.out_size = shape_size(out_dims, "outDims", op);
  g.in_dims = std::move(in_dims);
  g.out_dims = std::move(out_dims);
  const Dims& ins = g.in_dims;
  const Dims& outs = g.out_dims;
  if (axis_map.size() != outs.size()) {
    fail(ErrorKind::invalid_argument, op,
         "axis map rank mismatch (axisMap has " + std::to_string(axis_map.size()) +
             " entries, outDims " + std::to_string(outs.size()) + ")");
  }
  PlanArena arena;
  std::pmr::vector<bool> seen(ins.size(), false, arena.get());
  g.source.assign(outs.size(), -1);
  for (size_t j = 0; j < outs.size(); ++j) {
    const uint64_t mapped = axis_map[j];
    if (mapped > ins.size()) {
      fail(ErrorKind::invalid_argument, op,
           "broadcast axis out of range (axisMap[" + std::to_string(j) +
               "] = " + std::to_string(mapped) + " for an input of rank " +
               std::to_string(ins.size()) + ")");
    }
    if (mapped == 0) continue;
    const size_t a = static_cast<size_t>(mapped - 1);
    if (seen[a]) {
      fail(ErrorKind::invalid_argument, op,
           "repeated broadcast input axis (input axis " + std::to_string(a) +
               " mapped twice, again by axisMap[" + std::to_string(j) + "])");
    }
    seen[a] = true;
    if (ins[a] != 1 && ins[a] != outs[j]) {
      fail(ErrorKind::invalid_argument, op,
           "incompatible broadcast dimension (inDims[" + std::to_string(a) +
               "] = " + std::to_string(ins[a]) + " but outDims[" + std::to_string(j) +
               "] = " + std::to_string(outs[j]) + ")");
    }
    g.source[j] = static_cast<int64_t>(a);
  }
  for (size_t a = 0; a < ins.size(); ++a) {
    if (!seen[a]) {
      fail(
          ErrorKind::invalid_argument, op,
          "broadcast omits an input axis (input axis " + std::to_string(a) + " is not in axisMap)");
    }
  }
  return g;
}

}  // namespace tlrt
