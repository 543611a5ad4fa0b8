#include "runtime/encoded.h"

#include <cstring>
#include <string>

#include "common/error.h"
#include "kernels/encoded/encoded.h"
#include "runtime/context.h"
#include "runtime/dispatch.h"

#if TLRT_HAVE_CUDA
#include "runtime/cuda_device.h"
#endif

namespace tlrt {
namespace {

std::string words_text(uint64_t n, uint64_t width) {
  return std::to_string(n) + " words of " + std::to_string(width) + " bytes";
}

// The CUDA launchers on the selected device's stream; no_cuda_backend in builds without CUDA.
void concat_on_device(const Buffer& a, const Buffer& b, Buffer& out, const char* op) {
#if TLRT_HAVE_CUDA
  kernels::encoded_concat_cuda(a.data(), a.bytes(), b.data(), b.bytes(), out.data(),
                               selected_stream(op));
#else
  (void)a;
  (void)b;
  (void)out;
  no_cuda_backend(op);
#endif
}

void slice_on_device(const Buffer& x, uint64_t offset, Buffer& out, const char* op) {
#if TLRT_HAVE_CUDA
  kernels::encoded_slice_cuda(x.data(), offset, out.bytes(), out.data(), selected_stream(op));
#else
  (void)x;
  (void)offset;
  (void)out;
  no_cuda_backend(op);
#endif
}

// "<what> (<detail>)" under `op`, invalid_argument.
[[noreturn]] void reject(const char* op, const char* what, const std::string& detail) {
  fail(ErrorKind::invalid_argument, op, std::string(what) + " (" + detail + ")");
}

std::string kind_text(const Buffer& b) {
  if (b.encoded()) return "an encoded buffer of width " + std::to_string(b.width());
  return std::string("a ") + dtype_name(b.dtype()) + " buffer";
}

}  // namespace

uint64_t encoded_word_count(uint64_t length, uint64_t width, const char* op) {
  if (width == 0 || length % width != 0) {
    fail(ErrorKind::invalid_argument, op,
         "encoded buffer: truncated scalar word (" + std::to_string(length) +
             " bytes are not a whole number of " + std::to_string(width) + "-byte words)");
  }
  const uint64_t count = length / width;
  if (count > UINT32_MAX) {
    fail(ErrorKind::invalid_argument, op,
         "encoded buffer: scalar count exceeds the tape ABI (" + words_text(count, width) +
             ", more than 4294967295)");
  }
  return count;
}

std::unique_ptr<Buffer> upload_encoded(Backend backend, uint64_t width, const uint8_t* bytes,
                                       uint64_t length, const char* op) {
  const uint64_t count = encoded_word_count(length, width, op);
  std::unique_ptr<Buffer> b = Buffer::allocate_encoded(backend, width, count, op);
  if (b->bytes() == 0) return b;
  if (backend == Backend::reference) {
    std::memcpy(b->data(), bytes, b->bytes());
    return b;
  }
#if TLRT_HAVE_CUDA
  cuda::upload_staged(selected_device(), b->data(), static_cast<size_t>(b->bytes()),
                      [&](void* chunk, size_t offset, size_t chunk_length) {
                        std::memcpy(chunk, bytes + offset, chunk_length);
                      });
#else
  no_cuda_backend(op);
#endif
  return b;
}

void download_encoded(const Buffer& src, uint8_t* dst, const char* op) {
  require_live(src, op);
  if (!src.encoded()) reject(op, "encoded buffer: invalid handle", kind_text(src));
  if (src.bytes() == 0) return;
  if (src.backend() == Backend::reference) {
    std::memcpy(dst, src.data(), src.bytes());
    return;
  }
#if TLRT_HAVE_CUDA
  cuda::download_staged(selected_device(), src.data(), static_cast<size_t>(src.bytes()),
                        [&](const void* chunk, size_t offset, size_t chunk_length) {
                          std::memcpy(dst + offset, chunk, chunk_length);
                        });
#else
  no_cuda_backend(op);
#endif
}

std::unique_ptr<Buffer> concat_encoded(const Buffer& a, const Buffer& b, uint64_t n, uint64_t m,
                                       const char* op) {
  const char* what = "concat: incompatible encoded buffers";
  if (!a.encoded() || !b.encoded()) {
    reject(op, what, "a is " + kind_text(a) + ", b is " + kind_text(b));
  }
  if (a.released() || b.released()) {
    reject(op, what, std::string(a.released() ? "a" : "b") + " has been released");
  }
  if (a.width() != b.width()) {
    reject(op, what,
           "word widths differ: " + std::to_string(a.width()) + " vs " + std::to_string(b.width()));
  }
  if (a.size() != n || b.size() != m) {
    reject(op, what,
           "size(a) = " + std::to_string(a.size()) + ", size(b) = " + std::to_string(b.size()) +
               " but n = " + std::to_string(n) + ", m = " + std::to_string(m));
  }
  if (a.backend() != b.backend()) {
    reject(op, what,
           std::string("buffers live on different backends: ") + backend_name(a.backend()) +
               " vs " + backend_name(b.backend()));
  }
  const uint64_t total = checked_add(n, m, op);
  if (total > UINT32_MAX) {
    fail(ErrorKind::invalid_argument, op,
         "encoded buffer: scalar count exceeds the tape ABI (n + m = " + std::to_string(total) +
             " words, more than 4294967295)");
  }
  std::unique_ptr<Buffer> out = Buffer::allocate_encoded(a.backend(), a.width(), total, op);
  if (out->bytes() == 0) return out;
  if (a.backend() == Backend::reference) {
    kernels::encoded_concat_ref(a.data(), a.bytes(), b.data(), b.bytes(), out->data());
  } else {
    concat_on_device(a, b, *out, op);
  }
  return out;
}

std::unique_ptr<Buffer> slice_encoded(const Buffer& x, uint64_t n, uint64_t start, uint64_t len,
                                      const char* op) {
  const char* what = "slice: invalid encoded buffer or extent";
  if (!x.encoded()) reject(op, what, "x is " + kind_text(x));
  if (x.released()) reject(op, what, "x has been released");
  if (x.size() != n || start > n || len > n - start) {
    reject(op, what,
           "size(x) = " + std::to_string(x.size()) + ", n = " + std::to_string(n) +
               ", start = " + std::to_string(start) + ", len = " + std::to_string(len));
  }
  std::unique_ptr<Buffer> out = Buffer::allocate_encoded(x.backend(), x.width(), len, op);
  if (out->bytes() == 0) return out;
  // start <= n and the payload holds n * width bytes, so start * width cannot overflow.
  const uint64_t offset = start * x.width();
  if (x.backend() == Backend::reference) {
    kernels::encoded_slice_ref(x.data(), offset, out->bytes(), out->data());
  } else {
    slice_on_device(x, offset, *out, op);
  }
  return out;
}

}  // namespace tlrt
