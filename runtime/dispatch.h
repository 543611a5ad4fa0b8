// Backend dispatch shared by every op family: the input checks each op repeats (live, native
// dtype, one backend, one dtype, equal sizes), the backend x dtype switch that hands a family's
// reference or CUDA launcher its scalar type (and the CUDA stream), the one "no CUDA backend"
// failure of builds without CUDA, and workspaces from the backend's caching allocator.
//
//   on_backend(x.backend(), x.dtype(), "softmax",
//       [&](auto as) { using T = typename decltype(as)::type; kernels::softmax_ref<T>(...); },
//       [&](auto as, CUstream_st* s) { using T = typename decltype(as)::type;
//                                      kernels::softmax_cuda<T>(..., s); });
//
// The CUDA branch is a template that is only instantiated in builds with CUDA, so a family's
// device launchers need no #if at the call site.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "common/error.h"
#include "runtime/buffer.h"

struct CUstream_st;

namespace tlrt {

class CachingAllocator;

// The scalar type handed to a dispatch branch: `typename decltype(as)::type`.
template <class T>
struct As {
  using type = T;
};

// Throws unavailable naming `op`: "this build of tlrt has no CUDA backend".
[[noreturn]] void no_cuda_backend(const char* op);

// The stream of the selected CUDA device (initialised on first use); no_cuda_backend without CUDA.
CUstream_st* selected_stream(const char* op);

// Throws released_buffer for a released operand and invalid_argument for an encoded one.
void require_native(const Buffer& b, const char* op);

// Throws invalid_argument "buffer size does not match shape (size(<name>) = <size> but <arg> =
// <value>)" (SPEC-ops 8's words) naming `op` when the buffer's element count differs from the size
// argument that describes it.
void require_size(const Buffer& b, const char* name, const char* arg, uint64_t value,
                  const char* op);

enum class SameSize : bool { no = false, yes = true };

// Every operand live and native, all on one backend with one dtype, and with SameSize::yes one
// size; the first offence throws tlrt::Error naming `op` and both values, e.g.
// "tlrt: add: buffer sizes differ (4096 vs 4095)".
void require_compatible(const char* op, std::initializer_list<const Buffer*> operands,
                        SameSize same_size);

// Runs ref(As<T>{}) on the reference backend or dev(As<T>{}, stream) on the CUDA backend, with T
// float for float32 and double for float64. Encoded dtypes are refused (invalid_argument).
template <class Ref, class Dev>
void on_backend(Backend backend, Dtype dtype, const char* op, Ref&& ref, Dev&& dev) {
  if (dtype != Dtype::f32 && dtype != Dtype::f64) {
    fail(ErrorKind::invalid_argument, op,
         std::string("expected a float32 or float64 buffer, got ") + dtype_name(dtype));
  }
  if (backend == Backend::reference) {
    if (dtype == Dtype::f32)
      ref(As<float>{});
    else
      ref(As<double>{});
    return;
  }
#if TLRT_HAVE_CUDA
  CUstream_st* s = selected_stream(op);
  if (dtype == Dtype::f32)
    dev(As<float>{}, s);
  else
    dev(As<double>{}, s);
#else
  (void)dev;
  no_cuda_backend(op);
#endif
}

// A block of `bytes` from the caching allocator of `backend` for the duration of one launch
// (the two-phase workspace pattern: a kernel header exports <f>_workspace_bytes(shape), the
// dispatch allocates it here). Returned at scope exit: the next user of the block is queued
// behind the launch on the same stream, so no synchronisation is needed.
class Workspace {
 public:
  Workspace(Backend backend, uint64_t bytes, const char* op);
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  void* data() const { return data_; }

 private:
  CachingAllocator* pool_ = nullptr;
  void* data_ = nullptr;
};

}  // namespace tlrt
