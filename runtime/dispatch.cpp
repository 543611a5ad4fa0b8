#include "runtime/dispatch.h"

#include <string>

#include "runtime/caching_allocator.h"
#include "runtime/context.h"

#if TLRT_HAVE_CUDA
#include "runtime/cuda_device.h"
#endif

namespace tlrt {

void no_cuda_backend(const char* op) {
  fail(ErrorKind::unavailable, op, "this build of tlrt has no CUDA backend");
}

CUstream_st* selected_stream(const char* op) {
#if TLRT_HAVE_CUDA
  (void)op;
  return cuda::stream(selected_device());
#else
  no_cuda_backend(op);
#endif
}

void require_native(const Buffer& b, const char* op) {
  require_live(b, op);
  if (b.dtype() != Dtype::f32 && b.dtype() != Dtype::f64) {
    fail(ErrorKind::invalid_argument, op, "expected a real (float32/float64) buffer");
  }
}

void require_compatible(const char* op, std::initializer_list<const Buffer*> operands,
                        SameSize same_size) {
  if (operands.size() == 0) return;
  const Buffer& first = **operands.begin();
  for (const Buffer* p : operands) {
    const Buffer& b = *p;
    require_native(b, op);
    if (same_size == SameSize::yes && b.size() != first.size()) {
      fail(ErrorKind::invalid_argument, op,
           "buffer sizes differ (" + std::to_string(first.size()) + " vs " +
               std::to_string(b.size()) + ")");
    }
    if (b.dtype() != first.dtype()) {
      fail(ErrorKind::invalid_argument, op,
           std::string("dtypes differ (") + dtype_name(first.dtype()) + " vs " +
               dtype_name(b.dtype()) + ")");
    }
    if (b.backend() != first.backend()) {
      fail(ErrorKind::invalid_argument, op,
           std::string("buffers live on different backends (") + backend_name(first.backend()) +
               " vs " + backend_name(b.backend()) + ")");
    }
  }
}

Workspace::Workspace(Backend backend, uint64_t bytes, const char* op) {
  if (bytes == 0) return;
  pool_ = &allocator(backend);
  data_ = pool_->allocate(bytes, op);
}

Workspace::~Workspace() {
  if (data_ != nullptr) pool_->free(data_);
}

void require_size(const Buffer& b, const char* name, const char* arg, uint64_t value,
                  const char* op) {
  if (b.size() == value) return;
  fail(ErrorKind::invalid_argument, op,
       std::string("buffer size does not match shape (size(") + name +
           ") = " + std::to_string(b.size()) + " but " + arg + " = " + std::to_string(value) + ")");
}

}  // namespace tlrt
