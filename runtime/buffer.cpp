#include "runtime/buffer.h"

#include <string>

#include "common/error.h"
#include "runtime/context.h"
#include "runtime/counters.h"

namespace tlrt {

std::unique_ptr<Buffer> Buffer::allocate(Backend backend, Dtype dtype, uint64_t n, const char* op) {
  const uint64_t bytes = checked_mul(n, dtype_width(dtype), op);
  if (bytes > (uint64_t{1} << 62)) {
    fail(ErrorKind::invalid_argument, op,
         std::to_string(n) + " " + dtype_name(dtype) + " scalars exceed the addressable size");
  }
  // The record exists before the payload so that a failed allocation leaks nothing and moves no
  // counter.
  std::unique_ptr<Buffer> b(new Buffer(backend, dtype, 0, nullptr));
  if (bytes != 0) {
    b->data_ = tlrt::allocator(backend).allocate(static_cast<size_t>(bytes), op);
    b->size_ = n;
    payload_counter().add(bytes);
  }
  return b;
}

std::unique_ptr<Buffer> Buffer::adopt(Backend backend, Dtype dtype, uint64_t n, void* data) {
  std::unique_ptr<Buffer> b(new Buffer(backend, dtype, n, data));
  payload_counter().add(b->bytes());
  return b;
}

Buffer::~Buffer() {
  release();
}

bool Buffer::release() {
  if (released_) return false;
  released_ = true;
  const uint64_t b = bytes();
  void* data = data_;
  data_ = nullptr;
  size_ = 0;
  if (data == nullptr) return false;
  tlrt::allocator(backend_).free(data);
  payload_counter().remove(b);
  return true;
}

void require_live(const Buffer& b, const char* op) {
  if (b.released()) fail(ErrorKind::released_buffer, op, "buffer has been released");
}

}  // namespace tlrt
