// A buffer: a flat payload of `size` scalars on one backend (SPEC-runtime section 2.1). The payload
// comes from the caching allocator of the backend's selected device and goes back to that same
// allocator, whichever device is selected by then. The payload ownership counters (SPEC-runtime
// 2.5) see a nonempty payload from the moment it is published as a result (publish(), which the
// ABI calls when it makes the Lean-facing record) until it is retired, exactly once each; a payload
// that is never published (the outputs of a call that fails after allocating them, a temporary)
// moves no counter, so a failed constructor or kernel run leaves them unchanged. A native buffer
// holds float32 or float64 scalars (width 4 or 8); an encoded buffer (Dtype::encoded, SPEC-runtime
// section 9) holds `size` opaque words of `width` bytes each, word i at bytes [i * width, (i + 1) *
// width). Either way the payload is size * width bytes, which is what the payload counters see.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "runtime/dtype.h"

namespace tlrt {

class CachingAllocator;

// State an op keeps on its result for a later op (the legacy attention pair keeps its saved
// operands on the forward's output). Owned by the buffer; dropped by release() and destruction.
class BufferContext {
 public:
  virtual ~BufferContext() = default;
};

class Buffer {
 public:
  // Allocates an uninitialised payload of n scalars of a native dtype on `backend` (n == 0 gives
  // an empty buffer with no payload). Throws out_of_memory or invalid_argument (byte size
  // overflow) naming `op`.
  // `dtype` must be float32 or float64 (encoded: invalid_argument; use allocate_encoded).
  static std::unique_ptr<Buffer> allocate(Backend backend, Dtype dtype, uint64_t n, const char* op);
  // Allocates an uninitialised payload of n encoded words of `width` bytes (width > 0; n == 0
  // gives an empty buffer with no payload). Throws invalid_argument naming `op` and the sizes for
  // width 0 or an n * width that overflows or exceeds the addressable size, out_of_memory when the
  // allocator cannot serve it.
  static std::unique_ptr<Buffer> allocate_encoded(Backend backend, uint64_t width, uint64_t n,
                                                  const char* op);
  // A fresh uninitialised buffer of n scalars of the same kind as `like`: its dtype, or for an
  // encoded buffer its word width.
  static std::unique_ptr<Buffer> allocate_like(const Buffer& like, uint64_t n, const char* op);
  // Takes `data`, a block of n > 0 scalars of `width` bytes from allocator(backend) (width is the
  // dtype's for native dtypes, the word width for encoded), as the payload of a fresh buffer. For
  // results computed into a bare block first (a kernel run whose bounds record is checked after the
  // launch).
  static std::unique_ptr<Buffer> adopt(Backend backend, Dtype dtype, uint64_t width, uint64_t n,
                                       void* data);

  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // Counts the payload as attached to a result (payload counters: created, live, peak) unless it
  // is empty, released or already counted.
  void publish();
  bool published() const { return published_; }

  // Drops the payload now (returned to the allocator, stream-ordered) and any context. Returns
  // true exactly when a nonempty payload was retired (counted as retired if it was published);
  // later calls return false. The size becomes 0.
  bool release();

  // The context attached by the op that made this buffer; null when there is none or after
  // release(). Copies of a buffer never carry it.
  BufferContext* context() const { return context_.get(); }
  void set_context(std::unique_ptr<BufferContext> context) { context_ = std::move(context); }

  bool released() const { return released_; }
  uint64_t size() const { return size_; }
  uint64_t bytes() const { return size_ * width_; }
  // Bytes per scalar: 4 or 8 for native dtypes, the word width for encoded buffers.
  uint64_t width() const { return width_; }
  bool encoded() const { return dtype_ == Dtype::encoded; }
  Dtype dtype() const { return dtype_; }
  Backend backend() const { return backend_; }
  void* data() const { return data_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  Buffer(Backend backend, Dtype dtype, uint64_t width, uint64_t size, void* data,
         CachingAllocator* pool)
      : backend_(backend), dtype_(dtype), width_(width), size_(size), data_(data), pool_(pool) {}
  static std::unique_ptr<Buffer> allocate_bytes(Backend backend, Dtype dtype, uint64_t width,
                                                uint64_t n, const char* op);

  Backend backend_;
  Dtype dtype_;
  uint64_t width_;
  bool released_ = false;
  bool published_ = false;
  uint64_t size_;
  void* data_;
  CachingAllocator* pool_;  // where data_ came from and goes back to; null without a payload
  std::unique_ptr<BufferContext> context_;
};

// Throws released_buffer naming `op` when `b` has been released.
void require_live(const Buffer& b, const char* op);

}  // namespace tlrt
