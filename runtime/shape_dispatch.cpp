#include "runtime/shape_dispatch.h"

#include <string>

#include "kernels/shape/shape.h"
#include "runtime/dispatch.h"

namespace tlrt {
namespace {

// Throws invalid_argument "size(<name>) = <size> but <arg> = <value>" when they differ.
void require_size(const Buffer& b, const char* name, const char* arg, uint64_t value,
                  const char* op) {
  if (b.size() == value) return;
  fail(ErrorKind::invalid_argument, op,
       std::string("size(") + name + ") = " + std::to_string(b.size()) + " but " + arg + " = " +
           std::to_string(value));
}

}  // namespace

std::unique_ptr<Buffer> concat1d(const Buffer& a, const Buffer& b, uint64_t n, uint64_t m,
                                 const char* op) {
  require_compatible(op, {&a, &b}, SameSize::no);
  require_size(a, "a", "n", n, op);
  require_size(b, "b", "m", m, op);
  std::unique_ptr<Buffer> out = Buffer::allocate(a.backend(), a.dtype(), checked_add(n, m, op), op);
  on_backend(
      a.backend(), a.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::concat1d_ref(a.as<T>(), n, b.as<T>(), m, out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::concat1d_cuda(a.as<T>(), n, b.as<T>(), m, out->as<T>(), s);
      });
  return out;
}

std::unique_ptr<Buffer> slice1d(const Buffer& x, uint64_t n, uint64_t start, uint64_t len,
                                const char* op) {
  require_native(x, op);
  require_size(x, "x", "n", n, op);
  if (start > n || len > n - start) {
    fail(ErrorKind::invalid_argument, op,
         "slice out of bounds (n = " + std::to_string(n) + ", start = " + std::to_string(start) +
             ", len = " + std::to_string(len) + ")");
  }
  std::unique_ptr<Buffer> out = Buffer::allocate(x.backend(), x.dtype(), len, op);
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::slice1d_ref(x.as<T>(), start, len, out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::slice1d_cuda(x.as<T>(), start, len, out->as<T>(), s);
      });
  return out;
}

}  // namespace tlrt
