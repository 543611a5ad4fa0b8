// The geometry of a strided copy out[o] = x[sum_j o_j * strides[j]] (o_j the row-major coordinates
// of output element o in `dims`), reduced to what the CUDA kernels of kernels/shape/shape.cu walk:
// output axes of extent 1 dropped, adjacent output axes merged where they are contiguous in both
// the output and the input (strides[j] == strides[j + 1] * dims[j + 1], which includes two
// broadcast axes), so that fewer coordinates are divided out per element. Host code only, shared
// with the tests that check the plan against the reference loops.
//
// A fast unsigned 32-bit division by a runtime divisor (multiply-high and shift, exact for
// dividends and divisors below 2^31) is here too: the kernels use it whenever every offset of a
// copy fits in 31 bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/host_device.h"

namespace tlrt::kernels {

// The axes of a plan: the first kInline in the object itself, so that planning the copies of the
// ranks calls have in practice allocates nothing (it runs on the host for every strided copy);
// longer plans continue on the heap.
class PlanAxes {
 public:
  static constexpr size_t kInline = 8;

  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const uint64_t* data() const { return n_ <= kInline ? inline_ : heap_.data(); }
  uint64_t* data() { return n_ <= kInline ? inline_ : heap_.data(); }
  const uint64_t* begin() const { return data(); }
  const uint64_t* end() const { return data() + n_; }
  uint64_t operator[](size_t i) const { return data()[i]; }
  uint64_t& operator[](size_t i) { return data()[i]; }
  uint64_t& back() { return data()[n_ - 1]; }
  void push_back(uint64_t v) {
    if (n_ < kInline) {
      inline_[n_] = v;
    } else {
      if (n_ == kInline) heap_.assign(inline_, inline_ + kInline);
      heap_.push_back(v);
    }
    ++n_;
  }

 private:
  uint64_t inline_[kInline] = {};
  std::vector<uint64_t> heap_;  // all the axes once there are more than kInline
  size_t n_ = 0;
};

struct CopyPlan {
  PlanAxes dims;      // collapsed output extents, each >= 2 (empty: one element)
  PlanAxes strides;   // the input stride each collapsed axis walks
  uint64_t size = 0;  // output elements (0: nothing to copy)
};

inline CopyPlan plan_copy(const uint64_t* dims, const uint64_t* strides, size_t rank) {
  CopyPlan plan;
  plan.size = 1;
  for (size_t j = 0; j < rank; ++j) plan.size *= dims[j];
  if (plan.size == 0) return plan;
  for (size_t j = 0; j < rank; ++j) {
    if (dims[j] == 1) continue;
    if (!plan.dims.empty() && plan.strides.back() == strides[j] * dims[j]) {
      plan.dims.back() *= dims[j];
      plan.strides.back() = strides[j];
      continue;
    }
    plan.dims.push_back(dims[j]);
    plan.strides.push_back(strides[j]);
  }
  return plan;
}

// n / d for n, d < 2^31 (d >= 1): q = (umulhi(n, m) + n) >> s with s = ceil(log2 d) and
// m = floor(2^32 (2^s - d) / d) + 1. umulhi(n, m) <= n, so the sum stays below 2^32.
struct FastDiv32 {
  uint32_t d = 1;
  uint32_t m = 1;
  uint32_t s = 0;

  FastDiv32() = default;
  explicit FastDiv32(uint32_t divisor) : d(divisor) {
    s = 0;
    while ((uint64_t{1} << s) < divisor) ++s;
    m = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << s) - divisor)) / divisor + 1);
  }

  TLRT_HOST_DEVICE uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t t = __umulhi(n, m);
#else
    const uint32_t t = static_cast<uint32_t>((uint64_t{n} * m) >> 32);
#endif
    return (t + n) >> s;
  }
};

}  // namespace tlrt::kernels
