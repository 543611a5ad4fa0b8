#include "runtime/reduce_dispatch.h"

#include <string>

#include "kernels/reduce/reduce.h"
#include "runtime/context.h"
#include "runtime/error.h"

#if TLRT_HAVE_CUDA
#include "runtime/cuda_device.h"
#endif

namespace tlrt {
namespace {

enum class Reduction { sum, mean };

template <class T>
void reduce_reference(const Buffer& x, Buffer& out, Reduction kind) {
  const T* in = x.as<T>();
  *out.as<T>() = kind == Reduction::sum ? kernels::reduce_sum_ref(in, x.size())
                                        : kernels::reduce_mean_ref(in, x.size());
}

#if TLRT_HAVE_CUDA
template <class T>
void reduce_device(const Buffer& x, Buffer& out, Reduction kind, const char* op) {
  CachingAllocator& pool = allocator(Backend::cuda);
  const uint64_t n = x.size();
  // Freed right after the launch: the next user of the block is queued behind this kernel on the
  // same stream.
  void* workspace = pool.allocate(kernels::reduce_sum_workspace_bytes(n, sizeof(T)), op);
  try {
    CUstream_st* s = cuda::stream(selected_device());
    if (kind == Reduction::sum) {
      kernels::reduce_sum_cuda(x.as<T>(), n, out.as<T>(), workspace, s);
    } else {
      kernels::reduce_mean_cuda(x.as<T>(), n, out.as<T>(), workspace, s);
    }
  } catch (...) {
    pool.free(workspace);
    throw;
  }
  pool.free(workspace);
}
#endif

std::unique_ptr<Buffer> reduce(const Buffer& x, Reduction kind, const char* op) {
  require_live(x, op);
  if (x.dtype() != Dtype::f32 && x.dtype() != Dtype::f64) {
    fail(ErrorKind::invalid_argument, op,
         std::string("expected a float32 or float64 buffer, got ") + dtype_name(x.dtype()));
  }
  std::unique_ptr<Buffer> out = Buffer::allocate(x.backend(), x.dtype(), 1, op);
  const bool f32 = x.dtype() == Dtype::f32;
  if (x.backend() == Backend::reference) {
    if (f32)
      reduce_reference<float>(x, *out, kind);
    else
      reduce_reference<double>(x, *out, kind);
  } else {
#if TLRT_HAVE_CUDA
    if (f32)
      reduce_device<float>(x, *out, kind, op);
    else
      reduce_device<double>(x, *out, kind, op);
#else
    fail(ErrorKind::unavailable, op, "this build of tlrt has no CUDA backend");
#endif
  }
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
