// The one-kernel inverse real FFT of power-of-two lengths (kernels/fft/irfft_pow2.h): a block per
// row at a time, its threads over the row's butterflies. Per row: the first pass forms its inputs
// Z_k from the packed row (one read of the spectrum, fetched into registers while the previous
// row's passes run: each thread holds the values of a butterfly and its partner, whose inputs pair
// up, first_pass_inputs) and writes its outputs to shared memory; the Stockham passes of radix 8
// or 16 follow (the plan and the pass geometry compile-time constants: one kernel a plan), between
// two row buffers where they fit and in place otherwise, the last pass written straight to the
// row's n reals. The twiddle tables are built once per block; the grid is one wave of resident
// blocks striding over the rows.
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/common/launch.cuh"
#include "kernels/fft/irfft_pow2.h"

namespace tlrt::kernels {
namespace {

// Threads of a block: one per butterfly of the later passes (radix 2^kL), at least a warp and at
// most 256.
template <int kLogH, int kL>
constexpr int kPow2Threads = std::max(32, std::min(256, (1 << kLogH) >> kL));

// Position of row entry i in shared memory: one padding entry after every 128 bytes, so that the
// strided writes of the early passes fall into different banks.
template <class T>
__device__ __forceinline__ uint32_t padded(uint32_t i) {
  constexpr int kShift = sizeof(T) == 4 ? 4 : 3;  // 16 float or 8 double complex values a row
  return i + (i >> kShift);
}

// One Stockham pass (sub-transform size 2^kLogNs, radix R) from the row in `from` to `to`, with
// the pass's twiddles from `tw` (its own table); the last pass writes `dst` (the row's reals as
// h complex values) instead. In place (from == to) every thread's reads end at a barrier before
// any thread writes; between two buffers only the barrier after the writes remains.
template <class T, int kLogH, int kL, int R, int kLogNs, bool kLast, bool kInPlace>
__device__ __forceinline__ void pow2_pass(const Cplx<T>* from, Cplx<T>* to, const Cplx<T>* tw,
                                          Cplx<T>* __restrict__ dst) {
  constexpr uint32_t h = uint32_t{1} << kLogH, ns = uint32_t{1} << kLogNs, butterflies = h / R;
  constexpr int kThreads = kPow2Threads<kLogH, kL>;
  constexpr int kPer = (static_cast<int>(butterflies) + kThreads - 1) / kThreads;
  // Only the smallest lengths have fewer butterflies than threads.
  constexpr bool kGuard = static_cast<int>(butterflies) % kThreads != 0;
  static_assert(!kGuard || kPer == 1, "pass geometry");
  const bool active = !kGuard || threadIdx.x < butterflies;
  Cplx<T> v[kPer][R];
  if (active) {
#pragma unroll
    for (int b = 0; b < kPer; ++b) {
      const uint32_t j = threadIdx.x + uint32_t{kThreads} * b;
#pragma unroll
      for (int r = 0; r < R; ++r) v[b][r] = from[padded<T>(j + r * butterflies)];
    }
  }
  if constexpr (kInPlace) __syncthreads();
  if (active) {
#pragma unroll
    for (int b = 0; b < kPer; ++b) {
      const uint32_t j = threadIdx.x + uint32_t{kThreads} * b;
      const uint32_t m = j & (ns - 1);
      if constexpr (ns > 1) {
#pragma unroll
        for (int r = 1; r < R; ++r) v[b][r] = cmul(v[b][r], tw[(r - 1) * ns + m]);
      }
      radix_butterfly<T, R>(v[b]);
      const uint32_t o = stockham_out(j, ns, R);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if constexpr (kLast) {
          dst[o + r * ns] = v[b][r];
        } else {
          to[padded<T>(o + r * ns)] = v[b][r];
        }
      }
    }
  }
  if constexpr (!kLast) __syncthreads();
}

// The later passes from sub-transform size 2^kLogNs on; pass kIndex reads buffer a when kIndex
// is even and b when odd, and writes the other (a == b: one buffer, in place).
template <class T, int kLogH, int kL, int kLogNs, int kIndex, bool kInPlace>
__device__ __forceinline__ void later_passes(Cplx<T>* a, Cplx<T>* b, const Cplx<T>* tw,
                                             Cplx<T>* __restrict__ dst) {
  constexpr bool kLast = kLogNs + kL == kLogH;
  Cplx<T>* from = kIndex % 2 == 0 ? a : b;
  Cplx<T>* to = kIndex % 2 == 0 ? b : a;
  pow2_pass<T, kLogH, kL, 1 << kL, kLogNs, kLast, kInPlace>(
      from, to, tw + pass_twiddle_offset(kLogH, kL, kLogNs), dst);
  if constexpr (!kLast) {
    later_passes<T, kLogH, kL, kLogNs + kL, kIndex + 1, kInPlace>(a, b, tw, dst);
  }
}

// The twiddle tables of the later passes, from sub-transform size 2^kLogNs on, each entry as
// stockham_twiddle gives it (the first pass's entries are all 1 and go unread, so they are not
// written). The pass geometry is a compile-time constant, so the index arithmetic is shifts and
// masks rather than divisions.
template <class T, int kLogH, int kL, int kLogNs>
__device__ __forceinline__ void build_pass_tables(const Cplx<T>* table, Cplx<T>* tw) {
  constexpr uint32_t h = uint32_t{1} << kLogH, ns = uint32_t{1} << kLogNs;
  constexpr uint32_t radix = uint32_t{1} << kL, offset = pass_twiddle_offset(kLogH, kL, kLogNs);
  for (uint32_t e = threadIdx.x; e < (radix - 1) * ns; e += kPow2Threads<kLogH, kL>) {
    tw[offset + e] = stockham_twiddle(table, h, ns, radix, e & (ns - 1), (e >> kLogNs) + 1);
  }
  if constexpr (kLogNs + kL < kLogH) build_pass_tables<T, kLogH, kL, kLogNs + kL>(table, tw);
}

// The first pass (radix R0, ns = 1: no twiddles) from the spectrum values in registers: the thread
// takes butterflies j = threadIdx.x + kThreads b < B/2, b < kHalf, and their partners, and writes
// their outputs to `to`, then waits at a barrier (at n = 1024 half the threads have no pair).
template <int kLogH, int kL>
constexpr int kPow2FirstRadix = 1 << first_pass_log_radix(kLogH, kL);
template <int kLogH, int kL>
constexpr uint32_t kPow2FirstPairs = (uint32_t{1} << kLogH) / kPow2FirstRadix<kLogH, kL> / 2;
template <int kLogH, int kL>
constexpr int kPow2FirstHalf = (static_cast<int>(kPow2FirstPairs<kLogH, kL>) +
                                kPow2Threads<kLogH, kL> - 1) /
                               kPow2Threads<kLogH, kL>;

template <class T, int kLogH, int kL>
__device__ __forceinline__ void first_pass(
    const Cplx<T> (&xj)[kPow2FirstHalf<kLogH, kL>][kPow2FirstRadix<kLogH, kL>],
    const Cplx<T> (&xm)[kPow2FirstHalf<kLogH, kL>][kPow2FirstRadix<kLogH, kL>], Cplx<T> xh,
    const Cplx<T>* table, bool scaled, T scale, Cplx<T>* to) {
  constexpr uint32_t h = uint32_t{1} << kLogH;
  constexpr int R0 = kPow2FirstRadix<kLogH, kL>, kHalf = kPow2FirstHalf<kLogH, kL>;
  constexpr int kThreads = kPow2Threads<kLogH, kL>;
  constexpr uint32_t kPairs = kPow2FirstPairs<kLogH, kL>;
  static_assert(kPairs % kThreads == 0 || kHalf == 1, "geometry");
#pragma unroll
  for (int b = 0; b < kHalf; ++b) {
    const uint32_t j = threadIdx.x + uint32_t{kThreads} * b;
    if (kPairs % kThreads != 0 && j >= kPairs) break;
    const uint32_t m = static_cast<uint32_t>(first_pass_partner(j, h / R0));
    Cplx<T> zj[R0], zm[R0];
    first_pass_inputs<T, R0>(h, j, xj[b], xm[b], xh, table, scaled, scale, zj, zm);
    radix_butterfly<T, R0>(zj);
    radix_butterfly<T, R0>(zm);
#pragma unroll
    for (int r = 0; r < R0; ++r) {
      to[padded<T>(j * R0 + r)] = zj[r];
      to[padded<T>(m * R0 + r)] = zm[r];
    }
  }
  __syncthreads();
}

// A block's shared memory: irfft_pow2_shared_bytes (the tables and one padded row), plus a second
// padded row when the two still fit in kPow2InverseSharedBytes (then every pass runs between the
// two rows, with one barrier instead of two).
template <class T, int kLogH>
constexpr uint64_t kPow2RowBytes = ((uint64_t{1} << kLogH) +
                                    (uint64_t{1} << kLogH) * sizeof(Cplx<T>) / 128) *
                                   sizeof(Cplx<T>);
template <class T, int kLogH>
constexpr bool kPow2TwoRows =
    irfft_pow2_shared_bytes(uint64_t{2} << kLogH, sizeof(T)) + kPow2RowBytes<T, kLogH> <=
    kPow2InverseSharedBytes;
template <class T, int kLogH>
constexpr uint64_t kPow2BlockBytes = irfft_pow2_shared_bytes(uint64_t{2} << kLogH, sizeof(T)) +
                                     (kPow2TwoRows<T, kLogH> ? kPow2RowBytes<T, kLogH> : 0);

// Blocks an SM the registers must allow: enough for 768 threads an SM in float32 from n = 2048
// and 512 otherwise (float64 values take two registers; below n = 2048 a thread of the first
// pass holds eight butterfly inputs and their spectrum values), as far as the shared memory
// admits them (a block's is at most kPow2InverseSharedBytes, so at least two). The shared memory
// is the tighter limit for the radix-16 plans (163 to 244 registers a thread).
template <class T, int kLogH, int kL>
constexpr int kPow2MinBlocks = static_cast<int>(
    std::min<uint64_t>((sizeof(T) == 4 && kLogH >= 10 ? 768 : 512) / kPow2Threads<kLogH, kL>,
                       (uint64_t{227} << 10) / kPow2BlockBytes<T, kLogH>));

template <class T, int kLogH, int kL>
__global__ void __launch_bounds__(kPow2Threads<kLogH, kL>, kPow2MinBlocks<T, kLogH, kL>)
    irfft_pow2_kernel(const T* __restrict__ spec, uint64_t batch, bool scaled, T scale,
                      T* __restrict__ out) {
  constexpr uint32_t h = uint32_t{1} << kLogH;
  constexpr int kThreads = kPow2Threads<kLogH, kL>;
  extern __shared__ unsigned char pow2_smem[];
  Cplx<T>* table = reinterpret_cast<Cplx<T>*>(pow2_smem);  // e^{pi i k / h}, k < h
  Cplx<T>* tw = table + h;                                 // the passes' own tables
  Cplx<T>* data = tw + (h - 1);                            // the row, padded
  constexpr bool kTwoRows = kPow2TwoRows<T, kLogH>;
  Cplx<T>* other = kTwoRows ? data + kPow2RowBytes<T, kLogH> / sizeof(Cplx<T>) : data;
  // The spectrum values of this thread's first-pass butterflies and their partners, fetched a row
  // ahead while the passes run (the first row's while the tables are built); X_h for butterfly 0
  // (thread 0).
  constexpr int R0 = kPow2FirstRadix<kLogH, kL>, kHalf = kPow2FirstHalf<kLogH, kL>;
  constexpr uint32_t kFirstButterflies = h / R0;
  Cplx<T> xj[kHalf][R0], xm[kHalf][R0], xh = {T(0), T(0)};
  auto fetch = [&](uint64_t row) {
    const Cplx<T>* x = reinterpret_cast<const Cplx<T>*>(spec) + row * (h + 1);
#pragma unroll
    for (int b = 0; b < kHalf; ++b) {
      const uint32_t j = threadIdx.x + uint32_t{kThreads} * b;
      if (kPow2FirstPairs<kLogH, kL> % kThreads != 0 && j >= kPow2FirstPairs<kLogH, kL>) break;
      const uint32_t m = static_cast<uint32_t>(first_pass_partner(j, kFirstButterflies));
#pragma unroll
      for (int r = 0; r < R0; ++r) {
        xj[b][r] = x[j + r * kFirstButterflies];
        xm[b][r] = x[m + r * kFirstButterflies];
      }
    }
    if (threadIdx.x == 0) xh = x[h];
  };
  uint64_t row = blockIdx.x;
  if (row < batch) fetch(row);
  // e^{pi i k / h}: sincospi for k <= h/4, the rest by the exact symmetries
  // e^{i (pi/2 - t)} = (sin t, cos t) and e^{i (pi/2 + t)} = (-sin t, cos t).
  // Each thread's values are independent: unrolled, their evaluations overlap.
  constexpr uint32_t kQuarterRounds = (h / 4 + kThreads) / kThreads;
#pragma unroll
  for (uint32_t i = 0; i < kQuarterRounds; ++i) {
    const uint32_t k = threadIdx.x + i * kThreads;
    if (k <= h / 4) {
      double s = 0, c = 0;
      sincospi(static_cast<double>(k) / static_cast<double>(h), &s, &c);
      table[k] = {static_cast<T>(c), static_cast<T>(s)};
    }
  }
  __syncthreads();
  for (uint32_t k = h / 4 + 1 + threadIdx.x; k < h / 2; k += kThreads) {
    const Cplx<T> w = table[h / 2 - k];
    table[k] = {w.im, w.re};
  }
  __syncthreads();
  for (uint32_t k = h / 2 + threadIdx.x; k < h; k += kThreads) {
    const Cplx<T> w = table[k - h / 2];
    table[k] = {-w.im, w.re};
  }
  __syncthreads();
  build_pass_tables<T, kLogH, kL, first_pass_log_radix(kLogH, kL)>(table, tw);
  __syncthreads();  // the twiddle tables
  // Pass p reads `a` when p is even and `b` when odd (a == b: in place). The first pass writes b.
  Cplx<T>* a = data;
  Cplx<T>* b = other;
  for (; row < batch; row += gridDim.x) {
    first_pass<T, kLogH, kL>(xj, xm, xh, table, scaled, scale, b);
    if (row + gridDim.x < batch) fetch(row + gridDim.x);
    Cplx<T>* y = reinterpret_cast<Cplx<T>*>(out) + row * h;
    later_passes<T, kLogH, kL, first_pass_log_radix(kLogH, kL), 1, !kTwoRows>(a, b, tw, y);
    // The next row's first pass writes b. In place, the last pass's reads ended at its barrier.
    // Between two rows, when the last pass read b (an even number of passes), the rows trade
    // places: a was last read by the pass before, which ended at a barrier.
    if constexpr (kTwoRows && pow2_pass_count(kLogH, kL) % 2 == 0) {
      Cplx<T>* t = a;
      a = b;
      b = t;
    }
  }
}

// One wave of resident blocks (at most one a row) striding over the rows, under the plan of the
// length and dtype.
template <class T, int kLogH>
void launch_pow2(const T* spec, uint64_t batch, bool scaled, T scale, T* out, cudaStream_t stream,
                 const char* op) {
  constexpr int kL = pow2_later_log_radix(kLogH, sizeof(T));
  constexpr int kThreads = kPow2Threads<kLogH, kL>;
  constexpr size_t bytes = kPow2BlockBytes<T, kLogH>;
  const int per_sm = resident_blocks_per_sm<irfft_pow2_kernel<T, kLogH, kL>>(kThreads, bytes, op);
  const uint64_t wave = uint64_t{current_sm_count(op)} * static_cast<uint64_t>(per_sm);
  const uint64_t blocks = std::min(batch, wave);
  irfft_pow2_kernel<T, kLogH, kL>
      <<<static_cast<unsigned>(blocks), kThreads, bytes, stream>>>(spec, batch, scaled, scale, out);
  check_launch(op);
}

}  // namespace

template <class T>
void irfft_pow2_cuda(const T* spec, uint64_t batch, uint64_t n, bool scaled, T scale, T* out,
                     CUstream_st* stream, const char* op) {
  if (!irfft_pow2_supported(n, sizeof(T))) {
    fail(ErrorKind::invalid_argument, op,
         "irfft_pow2_cuda: length " + std::to_string(n) + " is not a supported power of two");
  }
  if (batch == 0) return;
  switch (n) {
    case 256:
      return launch_pow2<T, 7>(spec, batch, scaled, scale, out, stream, op);
    case 512:
      return launch_pow2<T, 8>(spec, batch, scaled, scale, out, stream, op);
    case 1024:
      return launch_pow2<T, 9>(spec, batch, scaled, scale, out, stream, op);
    case 2048:
      return launch_pow2<T, 10>(spec, batch, scaled, scale, out, stream, op);
    case 4096:
      return launch_pow2<T, 11>(spec, batch, scaled, scale, out, stream, op);
    default:  // 8192, float32 only (irfft_pow2_supported)
      if constexpr (sizeof(T) == 4) launch_pow2<T, 12>(spec, batch, scaled, scale, out, stream, op);
      return;
  }
}

template void irfft_pow2_cuda<float>(const float*, uint64_t, uint64_t, bool, float, float*,
                                     CUstream_st*, const char*);
template void irfft_pow2_cuda<double>(const double*, uint64_t, uint64_t, bool, double, double*,
                                      CUstream_st*, const char*);

}  // namespace tlrt::kernels
