#include "runtime/reduce_dispatch.h"

#include "kernels/reduce/reduce.h"
#include "runtime/dispatch.h"

namespace tlrt {
namespace {

enum class Reduction { sum, mean };

std::unique_ptr<Buffer> reduce(const Buffer& x, Reduction kind, const char* op) {
  require_native(x, op);
  std::unique_ptr<Buffer> out = Buffer::allocate(x.backend(), x.dtype(), 1, op);
  const uint64_t n = x.size();
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        *out->as<T>() = kind == Reduction::sum ? kernels::reduce_sum_ref(x.as<T>(), n)
                                               : kernels::reduce_mean_ref(x.as<T>(), n);
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        Workspace workspace(x.backend(), kernels::reduce_sum_workspace_bytes(n, sizeof(T)), op);
        if (kind == Reduction::sum) {
          kernels::reduce_sum_cuda(x.as<T>(), n, out->as<T>(), workspace.data(), s);
        } else {
          kernels::reduce_mean_cuda(x.as<T>(), n, out->as<T>(), workspace.data(), s);
        }
      });
  return out;
}

}  // namespace

std::unique_ptr<Buffer> reduce_sum(const Buffer& x, const char* op) {
  return reduce(x, Reduction::sum, op);
}

std::unique_ptr<Buffer> reduce_mean(const Buffer& x, const char* op) {
  return reduce(x, Reduction::mean, op);
}

}  // namespace tlrt
