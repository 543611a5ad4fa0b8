// A buffer: a flat payload of `size` scalars on one backend (SPEC-runtime section 2.1). The payload
// comes from the backend's caching allocator; attaching and retiring a nonempty payload moves the
// payload ownership counters exactly once each.
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/dtype.h"

namespace tlrt {

class Buffer {
 public:
  // Allocates an uninitialised payload of n scalars of a native dtype on `backend` (n == 0 gives
  // an empty buffer with no payload). Throws out_of_memory or invalid_argument (byte size
  // overflow) naming `op`; a failed call changes no counter.
  static std::unique_ptr<Buffer> allocate(Backend backend, Dtype dtype, uint64_t n, const char* op);
  // Takes `data`, a block of n > 0 scalars from allocator(backend), as the payload of a fresh
  // buffer; the payload counters move as for allocate. For results that are computed before they
  // may count (a kernel run whose bounds record is checked after the launch).
  static std::unique_ptr<Buffer> adopt(Backend backend, Dtype dtype, uint64_t n, void* data);

  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // Drops the payload now (returned to the allocator, stream-ordered). Returns true exactly when
  // a nonempty payload was retired; later calls return false. The size becomes 0.
  bool release();

  bool released() const { return released_; }
  uint64_t size() const { return size_; }
  uint64_t bytes() const { return size_ * dtype_width(dtype_); }
  Dtype dtype() const { return dtype_; }
  Backend backend() const { return backend_; }
  void* data() const { return data_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  Buffer(Backend backend, Dtype dtype, uint64_t size, void* data)
      : backend_(backend), dtype_(dtype), size_(size), data_(data) {}

  Backend backend_;
  Dtype dtype_;
  bool released_ = false;
  uint64_t size_;
  void* data_;
};

// Throws released_buffer naming `op` when `b` has been released.
void require_live(const Buffer& b, const char* op);

}  // namespace tlrt
