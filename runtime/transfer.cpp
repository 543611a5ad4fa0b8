#include "runtime/transfer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "kernels/common/host_parallel.h"
#include "runtime/context.h"

#if TLRT_HAVE_CUDA
#include "runtime/cuda_device.h"
#endif

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "checkpoint words are little-endian; a big-endian host needs byte swaps here");

namespace tlrt {
namespace {

// Host conversion threads at most (more do not raise the bus or page-fault rate further).
constexpr uint64_t kMaxConversionThreads = 16;

// Converts `n` scalars from `from` to `to` (host memory; equal dtypes copy bits).
void convert_serial(void* dst, Dtype to, const void* src, Dtype from, uint64_t n) {
  if (to == from) {
    std::memcpy(dst, src, n * dtype_width(to));
  } else if (to == Dtype::f32) {
    const double* s = static_cast<const double*>(src);
    float* d = static_cast<float*>(dst);
    for (uint64_t i = 0; i < n; ++i) d[i] = static_cast<float>(s[i]);
  } else {
    const float* s = static_cast<const float*>(src);
    double* d = static_cast<double*>(dst);
    for (uint64_t i = 0; i < n; ++i) d[i] = static_cast<double>(s[i]);
  }
}

// Large host conversions run on several threads: a single core neither saturates the bus nor
// takes page faults on a freshly allocated Lean array fast enough.
void convert(void* dst, Dtype to, const void* src, Dtype from, uint64_t n) {
  constexpr uint64_t kPerThreadBytes = uint64_t{2} << 20;
  const uint64_t to_w = dtype_width(to), from_w = dtype_width(from);
  kernels::parallel_ranges(
      n, kPerThreadBytes / std::max(to_w, from_w),
      [&](uint64_t begin, uint64_t end) {
        convert_serial(static_cast<char*>(dst) + begin * to_w, to,
                       static_cast<const char*>(src) + begin * from_w, from, end - begin);
      },
      kMaxConversionThreads);
}

// Fills a fresh buffer of `dtype` from n host scalars of `from`.
std::unique_ptr<Buffer> upload(Backend backend, Dtype dtype, const void* src, Dtype from,
                               uint64_t n, const char* op) {
  std::unique_ptr<Buffer> b = Buffer::allocate(backend, dtype, n, op);
  if (n == 0) return b;
  if (backend == Backend::reference) {
    convert(b->data(), dtype, src, from, n);
    return b;
  }
#if TLRT_HAVE_CUDA
  const size_t to_w = dtype_width(dtype);
  const size_t from_w = dtype_width(from);
  cuda::upload_staged(
      selected_device(), b->data(), b->bytes(), [&](void* chunk, size_t offset, size_t length) {
        const uint64_t first = offset / to_w;
        convert(chunk, dtype, static_cast<const char*>(src) + first * from_w, from, length / to_w);
      });
#endif
  return b;
}

// Asks the kernel to back the whole 2 MiB pages inside [p, p + bytes) with huge pages before the
// host array is first written. Downloads write fresh Lean arrays, which otherwise take one page
// fault per 4 KiB (about 20 ms per 128 MiB in the VM of docs/BENCH.md). Only a hint: where
// transparent huge pages are off, or the call fails, nothing changes. Arrays below 4 MiB are left
// alone (at most one whole huge page would gain).
void prefer_huge_pages(void* p, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (bytes < 2 * kHuge) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

void download(const Buffer& b, void* dst, Dtype to, const char* op) {
  (void)op;  // transfers report failures under their own names ("download")
  if (b.released() || b.size() == 0) return;
  prefer_huge_pages(dst, b.size() * dtype_width(to));
  if (b.backend() == Backend::reference) {
    convert(dst, to, b.data(), b.dtype(), b.size());
    return;
  }
#if TLRT_HAVE_CUDA
  const size_t from_w = dtype_width(b.dtype());
  const size_t to_w = dtype_width(to);
  cuda::download_staged(
      selected_device(), b.data(), b.bytes(), [&](const void* chunk, size_t offset, size_t length) {
        const uint64_t first = offset / from_w;
        convert(static_cast<char*>(dst) + first * to_w, to, chunk, b.dtype(), length / from_w);
      });
#endif
}

}  // namespace

std::unique_ptr<Buffer> upload_f64(Backend backend, Dtype dtype, const double* src, uint64_t n,
                                   const char* op) {
  return upload(backend, dtype, src, Dtype::f64, n, op);
}

void download_f64(const Buffer& src, double* dst, const char* op) {
  download(src, dst, Dtype::f64, op);
}

std::unique_ptr<Buffer> upload_words(Backend backend, Dtype dtype, const uint8_t* bytes,
                                     uint64_t count, Dtype source, const char* op) {
  return upload(backend, dtype, bytes, source, count, op);
}

void download_words(const Buffer& src, uint8_t* dst, Dtype target, const char* op) {
  download(src, dst, target, op);
}

}  // namespace tlrt
