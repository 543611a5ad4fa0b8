// Seeded random constructors, CUDA backend: rand_uniform, rand_normal and bernoulli_mask on
// contiguous float / double buffers. One fused kernel per op; element i depends on (key, i) only,
// so any thread may produce any element and results do not depend on the launch geometry.
// Uniform and Bernoulli are bit-identical with the reference (SPEC-runtime 7.2, 7.3; Bernoulli
// compares the draw against an equivalent threshold computed on the host). Normal evaluates the
// eight stages of SPEC 7.4 with every product and sum written as an explicitly rounded intrinsic,
// so nothing is contracted whatever -fmad says, and only the final step is a deliberate fma; log
// and cos are CUDA's non-fast-math logf/cosf (log/cos for double).
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/launch.cuh"
#include "kernels/random/random.h"
#include "kernels/random/splitmix.h"

namespace tlrt::kernels {
namespace {

// Explicitly rounded arithmetic per type, so the compiler cannot fuse a product into a later sum.
template <class T>
struct Rounded;
template <>
struct Rounded<float> {
  __device__ static float from_draw(uint32_t r) { return __uint2float_rn(r); }
  __device__ static float add(float a, float b) { return __fadd_rn(a, b); }
  __device__ static float mul(float a, float b) { return __fmul_rn(a, b); }
  __device__ static float sqrt(float a) { return __fsqrt_rn(a); }
  __device__ static float log(float a) { return logf(a); }
  __device__ static float cos(float a) { return cosf(a); }
  __device__ static float fma(float a, float b, float c) { return fmaf(a, b, c); }
};
template <>
struct Rounded<double> {
  __device__ static double from_draw(uint32_t r) { return __uint2double_rn(r); }
  __device__ static double add(double a, double b) { return __dadd_rn(a, b); }
  __device__ static double mul(double a, double b) { return __dmul_rn(a, b); }
  __device__ static double sqrt(double a) { return __dsqrt_rn(a); }
  __device__ static double log(double a) { return ::log(a); }
  __device__ static double cos(double a) { return ::cos(a); }
  __device__ static double fma(double a, double b, double c) { return ::fma(a, b, c); }
};

// Scaling by 2^-32 after the conversion is exact, so this is RN_T(r / 2^32) as SPEC 7.2 states.
template <class T>
__device__ __forceinline__ T uniform_from_draw(uint32_t r) {
  return Rounded<T>::mul(Rounded<T>::from_draw(r), static_cast<T>(0x1p-32));
}

// Generators: element value from its index. The integer streams cost about 22 instructions per
// element, so issue rate, not HBM, is their limit; eight groups per thread (a whole block's 64 KiB
// of float output per pass) measured fastest for 64 M floats on an H200, ahead of 2, 4 and 16.
template <class T>
struct UniformGen {
  using value_type = T;
  static constexpr int kGroupsPerThread = 8;
  uint64_t key;
  __device__ __forceinline__ T operator()(uint64_t i) const {
    return uniform_from_draw<T>(random::draw(key, i));
  }
};

// Element i is 1 when u_i < p. u is a non-decreasing function of the draw, so that holds exactly
// for the draws below a threshold fixed on the host; comparing draws saves the conversion and the
// scaling on the device (Bernoulli then runs as fast as uniform).
template <class T>
struct BernoulliGen {
  using value_type = T;
  static constexpr int kGroupsPerThread = 8;
  uint64_t key;
  uint32_t threshold;
  __device__ __forceinline__ T operator()(uint64_t i) const {
    return random::draw(key, i) < threshold ? T(1) : T(0);
  }
};

template <class T>
struct ConstantGen {
  using value_type = T;
  static constexpr int kGroupsPerThread = 8;
  T value;
  __device__ __forceinline__ T operator()(uint64_t) const { return value; }
};

template <class T>
struct NormalGen {
  using value_type = T;
  // log and cos dominate; more groups per thread would only add registers.
  static constexpr int kGroupsPerThread = 1;
  uint64_t key;
  T mean;
  T deviation;
  T k;       // RN_T(1 / RN_T(4294967297)), computed on the host exactly as the reference does.
  T two_pi;  // RN_T(6.2831853071795864769)
  __device__ __forceinline__ T operator()(uint64_t i) const {
    const uint32_t r1 = random::draw(key, 2 * i);
    const uint32_t r2 = random::draw(key, 2 * i + 1);
    using R = Rounded<T>;
    const T a = R::from_draw(r1);
    const T s = R::add(a, T(1));
    const T u1 = R::mul(s, k);  // in (0, 1]: the +1 keeps log finite.
    const T u2 = uniform_from_draw<T>(r2);
    const T t = R::mul(R::log(u1), T(-2));
    const T radius = R::sqrt(t);
    const T theta = R::mul(u2, two_pi);
    const T angle = R::cos(theta);
    const T z = R::mul(radius, angle);
    return R::fma(deviation, z, mean);
  }
};

// One pass of a thread: kGroupsPerThread groups of 16 bytes (consecutive elements), spaced a
// block apart so every warp store covers 512 contiguous bytes. All values are computed before the
// first store; the unguarded instantiation serves every block but the last partial one.
template <class Gen, bool kVectorStores, bool kGuarded>
__device__ __forceinline__ void generate_pass(typename Gen::value_type* __restrict__ out,
                                              uint64_t block_base, uint64_t n_groups,
                                              const Gen& gen) {
  using T = typename Gen::value_type;
  constexpr int kLanes = 16 / sizeof(T);
  constexpr int kGroups = Gen::kGroupsPerThread;
  T v[kGroups][kLanes];
#pragma unroll
  for (int g = 0; g < kGroups; ++g) {
    const uint64_t group = block_base + static_cast<uint64_t>(g) * kThreads + threadIdx.x;
    if (!kGuarded || group < n_groups) {
#pragma unroll
      for (int l = 0; l < kLanes; ++l) v[g][l] = gen(group * kLanes + l);
    }
  }
#pragma unroll
  for (int g = 0; g < kGroups; ++g) {
    const uint64_t group = block_base + static_cast<uint64_t>(g) * kThreads + threadIdx.x;
    if (!kGuarded || group < n_groups) {
      T* p = out + group * kLanes;
      if constexpr (kVectorStores) {
        store16(p, v[g]);
      } else {
#pragma unroll
        for (int l = 0; l < kLanes; ++l) p[l] = v[g][l];
      }
    }
  }
}

// Grid-stride over blocks of kThreads * kGroupsPerThread groups. Elements past the last
// whole group (fewer than one group) are written one by one by the first threads of the grid.
template <class Gen, bool kVectorStores>
__global__ void __launch_bounds__(kThreads)
    generate_kernel(typename Gen::value_type* __restrict__ out, uint64_t n, Gen gen) {
  using T = typename Gen::value_type;
  constexpr int kLanes = 16 / sizeof(T);
  constexpr uint64_t kGroupsPerBlock = uint64_t{kThreads} * Gen::kGroupsPerThread;
  const uint64_t n_groups = n / kLanes;
  const uint64_t stride = uint64_t{gridDim.x} * kGroupsPerBlock;
  for (uint64_t block_base = uint64_t{blockIdx.x} * kGroupsPerBlock; block_base < n_groups;
       block_base += stride) {
    if (n_groups - block_base >= kGroupsPerBlock) {
      generate_pass<Gen, kVectorStores, false>(out, block_base, n_groups, gen);
    } else {
      generate_pass<Gen, kVectorStores, true>(out, block_base, n_groups, gen);
    }
  }
  const uint64_t tail_begin = n_groups * kLanes;
  const uint64_t t = uint64_t{blockIdx.x} * kThreads + threadIdx.x;
  if (t < n - tail_begin) out[tail_begin + t] = gen(tail_begin + t);
}

template <class Gen>
void launch_generate(typename Gen::value_type* out, uint64_t n, const Gen& gen, cudaStream_t stream,
                     const char* op) {
  if (n == 0) return;
  using T = typename Gen::value_type;
  constexpr uint64_t kLanes = 16 / sizeof(T);
  // Fewer elements than one group: one block does the tail alone.
  const dim3 grid = grid_for(n / kLanes, uint64_t{kThreads} * Gen::kGroupsPerThread);
  // The allocator hands out 512-byte aligned blocks; views at an element offset take the scalar
  // path rather than faulting on a misaligned vector store.
  if (aligned16(out)) {
    generate_kernel<Gen, true><<<grid, kThreads, 0, stream>>>(out, n, gen);
  } else {
    generate_kernel<Gen, false><<<grid, kThreads, 0, stream>>>(out, n, gen);
  }
  check_launch(op);
}

// The host evaluates u exactly as the reference does (the conversion rounds to nearest, the
// scaling is exact), so the search reproduces the comparison u < p for every draw.
inline float host_uniform(uint32_t r, float) {
  return static_cast<float>(r) * 0x1p-32f;
}
inline double host_uniform(uint32_t r, double) {
  return static_cast<double>(r) * 0x1p-32;
}

// Smallest draw r with u(r) >= p, or 2^32 when every draw has u(r) < p.
template <class T>
uint64_t bernoulli_threshold(T p) {
  uint64_t below = 0;                        // every r < below has u(r) < p
  uint64_t at_or_above = uint64_t{1} << 32;  // every r >= at_or_above has u(r) >= p
  while (below < at_or_above) {
    const uint64_t mid = below + (at_or_above - below) / 2;
    if (host_uniform(static_cast<uint32_t>(mid), T()) < p) {
      below = mid + 1;
    } else {
      at_or_above = mid;
    }
  }
  return below;
}

inline float two_pi_t(float) {
  return 6.2831853071795864769f;
}
inline double two_pi_t(double) {
  return 6.2831853071795864769;
}

}  // namespace

template <class T>
void rand_uniform_cuda(T* out, uint64_t n, uint64_t key, CUstream_st* stream) {
  launch_generate(out, n, UniformGen<T>{key}, stream, "rand_uniform");
}

template <class T>
void rand_normal_cuda(T* out, uint64_t n, T mean, T deviation, uint64_t key, CUstream_st* stream) {
  const T k = T(1) / static_cast<T>(4294967297.0);
  launch_generate(out, n, NormalGen<T>{key, mean, deviation, k, two_pi_t(T())}, stream,
                  "rand_normal");
}

template <class T>
void bernoulli_mask_cuda(T* out, uint64_t n, T p, uint64_t key, CUstream_st* stream) {
  // Endpoints as in SPEC 7.3: they skip the draws altogether.
  if (!(p > T(0))) {
    launch_generate(out, n, ConstantGen<T>{T(0)}, stream, "bernoulli_mask");
  } else if (!(p < T(1))) {
    launch_generate(out, n, ConstantGen<T>{T(1)}, stream, "bernoulli_mask");
  } else if (const uint64_t threshold = bernoulli_threshold(p); threshold > UINT32_MAX) {
    // binary64 p above the largest uniform value 1 - 2^-32: every draw is kept.
    launch_generate(out, n, ConstantGen<T>{T(1)}, stream, "bernoulli_mask");
  } else {
    launch_generate(out, n, BernoulliGen<T>{key, static_cast<uint32_t>(threshold)}, stream,
                    "bernoulli_mask");
  }
}

template void rand_uniform_cuda<float>(float*, uint64_t, uint64_t, CUstream_st*);
template void rand_uniform_cuda<double>(double*, uint64_t, uint64_t, CUstream_st*);
template void rand_normal_cuda<float>(float*, uint64_t, float, float, uint64_t, CUstream_st*);
template void rand_normal_cuda<double>(double*, uint64_t, double, double, uint64_t, CUstream_st*);
template void bernoulli_mask_cuda<float>(float*, uint64_t, float, uint64_t, CUstream_st*);
template void bernoulli_mask_cuda<double>(double*, uint64_t, double, uint64_t, CUstream_st*);

}  // namespace tlrt::kernels
