#include "runtime/buffer.h"

#include <string>

#include "common/error.h"
#include "runtime/context.h"
#include "runtime/counters.h"

namespace tlrt {

std::unique_ptr<Buffer> Buffer::allocate(Backend backend, Dtype dtype, uint64_t n, const char* op) {
  if (dtype != Dtype::f32 && dtype != Dtype::f64) {
    fail(ErrorKind::invalid_argument, op,
         std::string(dtype_name(dtype)) + " buffers need a word width (allocate_encoded)");
  }
  return allocate_bytes(backend, dtype, dtype_width(dtype), n, op);
}

std::unique_ptr<Buffer> Buffer::allocate_encoded(Backend backend, uint64_t width, uint64_t n,
                                                 const char* op) {
  if (width == 0) {
    fail(ErrorKind::invalid_argument, op,
         "encoded word width is 0 (" + std::to_string(n) + " words requested)");
  }
  return allocate_bytes(backend, Dtype::encoded, width, n, op);
}

std::unique_ptr<Buffer> Buffer::allocate_like(const Buffer& like, uint64_t n, const char* op) {
  return like.encoded() ? allocate_encoded(like.backend(), like.width(), n, op)
                        : allocate(like.backend(), like.dtype(), n, op);
}

std::unique_ptr<Buffer> Buffer::allocate_bytes(Backend backend, Dtype dtype, uint64_t width,
                                               uint64_t n, const char* op) {
  const uint64_t bytes = checked_mul(n, width, op);
  if (bytes > (uint64_t{1} << 62)) {
    const std::string what = dtype == Dtype::encoded
                                 ? " encoded words of " + std::to_string(width) + " bytes"
                                 : std::string(" ") + dtype_name(dtype) + " scalars";
    fail(ErrorKind::invalid_argument, op,
         std::to_string(n) + what + " exceed the addressable size");
  }
  // The record exists before the payload so that a failed allocation leaks nothing.
  std::unique_ptr<Buffer> b(new Buffer(backend, dtype, width, 0, nullptr, nullptr));
  if (bytes != 0) {
    CachingAllocator& pool = tlrt::allocator(backend);
    b->data_ = pool.allocate(static_cast<size_t>(bytes), op);
    b->pool_ = &pool;
    b->size_ = n;
  }
  return b;
}

std::unique_ptr<Buffer> Buffer::adopt(Backend backend, Dtype dtype, uint64_t width, uint64_t n,
                                      void* data) {
  return std::unique_ptr<Buffer>(
      new Buffer(backend, dtype, width, n, data, &tlrt::allocator(backend)));
}

void Buffer::publish() {
  if (published_ || released_ || data_ == nullptr) return;
  payload_counter().add(bytes());
  published_ = true;
}

Buffer::~Buffer() {
  release();
}

bool Buffer::release() {
  context_.reset();
  if (released_) return false;
  released_ = true;
  const uint64_t b = bytes();
  void* data = data_;
  data_ = nullptr;
  size_ = 0;
  if (data == nullptr) return false;
  pool_->free(data);
  if (published_) payload_counter().remove(b);
  return true;
}

void require_live(const Buffer& b, const char* op) {
  if (b.released()) fail(ErrorKind::released_buffer, op, "buffer has been released");
}

}  // namespace tlrt
