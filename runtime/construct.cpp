#include "runtime/construct.h"

#include <cstring>
#include <type_traits>

#include "common/error.h"
#include "kernels/fill/fill.h"
#include "kernels/random/random.h"
#include "runtime/context.h"
#include "runtime/dispatch.h"

#if TLRT_HAVE_CUDA
#include "runtime/cuda_device.h"
#endif

namespace tlrt {
namespace {

// Runs `ref(T*)` or `dev(T*, stream)` on the freshly allocated buffer, for the buffer's dtype.
template <class Ref, class Dev>
std::unique_ptr<Buffer> build(Backend backend, Dtype dtype, uint64_t n, const char* op, Ref ref,
                              Dev dev) {
  std::unique_ptr<Buffer> b = Buffer::allocate(backend, dtype, n, op);
  if (n == 0) return b;
  Buffer& out = *b;
  on_backend(
      backend, dtype, op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        ref(out.as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        dev(out.as<T>(), s);
      });
  return b;
}

}  // namespace

namespace {

// Fills a fresh buffer's payload with zero bytes (+0 in both native dtypes and in every encoding).
std::unique_ptr<Buffer> zero_filled(std::unique_ptr<Buffer> b, const char* op) {
  if (b->bytes() == 0) return b;
  if (b->backend() == Backend::reference) {
    std::memset(b->data(), 0, b->bytes());
  } else {
#if TLRT_HAVE_CUDA
    cuda::zero_async(selected_device(), b->data(), b->bytes(), op);
#else
    no_cuda_backend(op);
#endif
  }
  return b;
}

}  // namespace

std::unique_ptr<Buffer> make_zeros(Backend backend, Dtype dtype, uint64_t n, const char* op) {
  return zero_filled(Buffer::allocate(backend, dtype, n, op), op);
}

std::unique_ptr<Buffer> make_zeros_like(const Buffer& like, uint64_t n, const char* op) {
  require_live(like, op);
  return zero_filled(Buffer::allocate_like(like, n, op), op);
}

std::unique_ptr<Buffer> make_full(Backend backend, Dtype dtype, uint64_t n, double value,
                                  const char* op) {
  return build(
      backend, dtype, n, op,
      [&](auto* out) {
        using T = std::remove_pointer_t<decltype(out)>;
        kernels::fill_ref<T>(out, n, static_cast<T>(value));
      },
      [&](auto* out, CUstream_st* s) {
        using T = std::remove_pointer_t<decltype(out)>;
        kernels::fill_cuda<T>(out, n, static_cast<T>(value), s);
      });
}

std::unique_ptr<Buffer> make_rand_uniform(Backend backend, Dtype dtype, uint64_t n, uint64_t key,
                                          const char* op) {
  return build(
      backend, dtype, n, op, [&](auto* out) { kernels::rand_uniform_ref(out, n, key); },
      [&](auto* out, CUstream_st* s) { kernels::rand_uniform_cuda(out, n, key, s); });
}

std::unique_ptr<Buffer> make_rand_normal(Backend backend, Dtype dtype, uint64_t n, double mean,
                                         double deviation, uint64_t key, const char* op) {
  return build(
      backend, dtype, n, op,
      [&](auto* out) {
        using T = std::remove_pointer_t<decltype(out)>;
        kernels::rand_normal_ref<T>(out, n, static_cast<T>(mean), static_cast<T>(deviation), key);
      },
      [&](auto* out, CUstream_st* s) {
        using T = std::remove_pointer_t<decltype(out)>;
        kernels::rand_normal_cuda<T>(out, n, static_cast<T>(mean), static_cast<T>(deviation), key,
                                     s);
      });
}

std::unique_ptr<Buffer> make_bernoulli_mask(Backend backend, Dtype dtype, uint64_t n, double p,
                                            uint64_t key, const char* op) {
  return build(
      backend, dtype, n, op,
      [&](auto* out) {
        using T = std::remove_pointer_t<decltype(out)>;
        kernels::bernoulli_mask_ref<T>(out, n, static_cast<T>(p), key);
      },
      [&](auto* out, CUstream_st* s) {
        using T = std::remove_pointer_t<decltype(out)>;
        kernels::bernoulli_mask_cuda<T>(out, n, static_cast<T>(p), key, s);
      });
}

std::unique_ptr<Buffer> copy_buffer(const Buffer& source, const char* op) {
  require_live(source, op);
  std::unique_ptr<Buffer> b = Buffer::allocate_like(source, source.size(), op);
  if (b->bytes() == 0) return b;
  if (source.backend() == Backend::reference) {
    std::memcpy(b->data(), source.data(), b->bytes());
  } else {
#if TLRT_HAVE_CUDA
    cuda::copy_async(selected_device(), b->data(), source.data(), b->bytes(), op);
#else
    no_cuda_backend(op);
#endif
  }
  return b;
}

}  // namespace tlrt
