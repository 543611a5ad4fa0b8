#include "runtime/fft_dispatch.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "kernels/fft/fft.h"
#include "kernels/fft/irfft_pow2.h"
#include "runtime/construct.h"
#include "runtime/context.h"
#include "runtime/dispatch.h"
#include "runtime/env_switch.h"
#include "runtime/shape_geometry.h"

#if TLRT_HAVE_CUDA
#include "runtime/cuda_libraries.h"
#endif

namespace tlrt {
namespace {

using kernels::FftDirection;
using kernels::FftPlanShape;

#if TLRT_HAVE_CUDA

// A cuFFT plan is identified by its device, dtype, direction, length, batch and layout.
struct FftKey {
  uint32_t device = 0;
  FftPlanShape shape;

  bool operator==(const FftKey& o) const {
    return device == o.device && shape.f64 == o.shape.f64 && shape.direction == o.shape.direction &&
           shape.n == o.shape.n && shape.batch == o.shape.batch &&
           shape.rstride == o.shape.rstride && shape.rdist == o.shape.rdist &&
           shape.cstride == o.shape.cstride && shape.cdist == o.shape.cdist &&
           shape.load_callback == o.shape.load_callback;
  }
};

struct FftKeyHash {
  size_t operator()(const FftKey& k) const {
    uint64_t h = 0x9e3779b97f4a7c15ull;
    auto mix = [&](uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    mix(k.device);
    mix((uint64_t{k.shape.f64} << 8) | static_cast<uint64_t>(k.shape.direction));
    mix(k.shape.n);
    mix(k.shape.batch);
    mix(k.shape.rstride);
    mix(k.shape.rdist);
    mix(k.shape.cstride);
    mix(k.shape.cdist);
    mix(k.shape.load_callback ? 1 : 0);
    return static_cast<size_t>(h);
  }
};

cuda::DevicePlanCaches<FftKey, kernels::FftPlan, FftKeyHash> g_fft_plans(
    [](kernels::FftPlan& plan) { kernels::fft_plan_destroy(plan); });

// cuFFT keeps the stream and the work area in the plan: setting them and queuing the transform
// is one step for every caller of a shared plan.
std::mutex g_fft_exec;

using PlanLease = cuda::DevicePlanCaches<FftKey, kernels::FftPlan, FftKeyHash>::Cache::Lease;

// Plans of different keys may be created at once in different threads (the cache creates
// without its lock); cuFFT's API is thread safe for distinct plans.
PlanLease acquire_plan(const FftPlanShape& shape, const char* op,
                       const kernels::FftLoadCallback* callback = nullptr) {
  const uint32_t device = selected_device();
  return g_fft_plans.on(device).acquire(FftKey{device, shape}, [&](const FftKey& key) {
    return kernels::fft_plan_create(key.shape, op, callback);
  });
}

// The load-callback path (TLRT_FFT_LOAD_CALLBACKS, off by default).
EnvSwitch g_callbacks_wanted("TLRT_FFT_LOAD_CALLBACKS", false);
// Set once a callback plan could not be made: the copy pass is used from then on.
std::atomic<bool> g_callbacks_failed{false};
std::mutex g_callbacks_why_mutex;
std::string g_callbacks_why;

void callbacks_failed(const std::string& why) {
  std::lock_guard<std::mutex> lock(g_callbacks_why_mutex);
  g_callbacks_why = why;
  g_callbacks_failed.store(true, std::memory_order_release);
}

// The power-of-two inverse kernel (TLRT_FFT_POW2_INVERSE, on by default).
EnvSwitch g_pow2_wanted("TLRT_FFT_POW2_INVERSE", true);

// Offsets inside one workspace block, 256-byte aligned.
uint64_t align256(uint64_t bytes) {
  return (bytes + 255) / 256 * 256;
}

#endif  // TLRT_HAVE_CUDA

// The chunk size of the inverse's copy pass: the spectrum copy of one chunk of rows is meant to
// stay in L2 between the copy kernel that writes it and the C2R that reads it. kUnread until the
// environment (TLRT_FFT_CHUNK_BYTES, "0" = one piece) or set_fft_chunk_bytes sets it. The default
// is one piece: on the H200 every chunk size measured was slower than one piece (docs/BENCH.md).
constexpr uint64_t kDefaultChunkBytes = 0;
constexpr uint64_t kUnread = ~uint64_t{0};
// Fewer rows per chunk than this leave too little work per C2R launch: such lengths stay one
// piece.
constexpr uint64_t kMinChunkRows = 32;
constexpr uint64_t kMaxChunks = 64;
std::atomic<uint64_t> g_chunk_bytes{kUnread};

uint64_t chunk_bytes() {
  uint64_t v = g_chunk_bytes.load(std::memory_order_acquire);
  if (v != kUnread) return v;
  v = kDefaultChunkBytes;
  const char* e = std::getenv("TLRT_FFT_CHUNK_BYTES");
  if (e != nullptr && *e != '\0') {
    char* end = nullptr;
    const unsigned long long parsed = std::strtoull(e, &end, 10);
    if (end != e && *end == '\0' && parsed != kUnread) v = parsed;
  }
  uint64_t expected = kUnread;
  g_chunk_bytes.compare_exchange_strong(expected, v, std::memory_order_acq_rel);
  return g_chunk_bytes.load(std::memory_order_acquire);
}

// The chunk count nearest to spectrum / target (at most kMaxChunks), or from there up to twice
// that the first count that divides the batch (one plan for every chunk), so a chunk holds from
// half the target to a quarter above it (more past kMaxChunks); where none divides, equal chunks
// and a shorter last one (a second plan). Under two chunks: one piece. Rows per chunk are a
// multiple of `unit`: cuFFT takes only output pointers aligned to the complex type, so for odd n a
// chunk starts at an even row (unit 2).
IrfftChunking chunking_for(uint64_t batch, uint64_t row_bytes, uint64_t unit) {
  IrfftChunking c{1, batch, batch};
  const uint64_t target = chunk_bytes();
  if (target == 0 || row_bytes == 0 || batch < 2) return c;
  if (target / row_bytes < kMinChunkRows) return c;
  // Past kMaxChunks chunks the chunks grow instead: each costs a launch and a cuFFT execution.
  const uint64_t target_rows = std::max(target / row_bytes, (batch + kMaxChunks - 1) / kMaxChunks);
  const uint64_t fewest = (batch + target_rows / 2) / target_rows;
  if (fewest < 2) return c;
  uint64_t count = fewest;
  for (uint64_t k = fewest; k < 2 * fewest && k <= kMaxChunks; ++k) {
    if (batch % k == 0) {
      count = k;
      break;
    }
  }
  const uint64_t rows = (batch + count - 1) / count;
  const uint64_t aligned_rows = (rows + unit - 1) / unit * unit;
  if (aligned_rows >= batch) return c;
  c.rows = aligned_rows;
  c.chunks = (batch + c.rows - 1) / c.rows;
  c.last_rows = batch - (c.chunks - 1) * c.rows;
  return c;
}

// Contiguous rows: transform b of the real side at b*n, of the complex side at b*(n/2+1).
template <class T>
FftPlanShape row_plan(FftDirection direction, uint64_t batch, uint64_t n) {
  FftPlanShape s;
  s.f64 = sizeof(T) == 8;
  s.direction = direction;
  s.n = n;
  s.batch = batch;
  s.rstride = 1;
  s.rdist = n;
  s.cstride = 1;
  s.cdist = kernels::fft_bins(n);
  return s;
}

// Columns of a (grid, width) matrix: element t of column i at t*width + i on both sides.
template <class T>
FftPlanShape column_plan(FftDirection direction, uint64_t grid, uint64_t width) {
  FftPlanShape s;
  s.f64 = sizeof(T) == 8;
  s.direction = direction;
  s.n = grid;
  s.batch = width;
  s.rstride = width;
  s.rdist = 1;
  s.cstride = width;
  s.cdist = 1;
  return s;
}

}  // namespace

void fft_length(uint64_t n, bool inverse, const char* op) {
  if (n != 0) return;
  fail(ErrorKind::invalid_argument, op,
       std::string(inverse ? "irfft1dPacked" : "rfft1dPacked") +
           ": length must be positive (n = 0)");
}

uint64_t fft_chunk_bytes() {
  return chunk_bytes();
}

void set_fft_chunk_bytes(uint64_t bytes) {
  g_chunk_bytes.store(bytes == kUnread ? bytes - 1 : bytes, std::memory_order_release);
}

IrfftChunking irfft1d_chunking(bool f64, uint64_t batch, uint64_t n) {
  if (n <= 1) return IrfftChunking{batch == 0 ? uint64_t{0} : uint64_t{1}, batch, batch};
  return chunking_for(batch, kernels::fft_bins(n) * 2 * (f64 ? 8 : 4), n % 2 == 0 ? 1 : 2);
}

void set_fft_load_callbacks(bool enabled) {
#if TLRT_HAVE_CUDA
  g_callbacks_wanted.set(enabled);
#else
  (void)enabled;
#endif
}

void set_fft_pow2_inverse(bool enabled) {
#if TLRT_HAVE_CUDA
  g_pow2_wanted.set(enabled);
#else
  (void)enabled;
#endif
}

bool fft_pow2_inverse_on() {
#if TLRT_HAVE_CUDA
  return g_pow2_wanted.on();
#else
  return false;
#endif
}

bool fft_load_callbacks_active(bool f64, std::string* why) {
#if TLRT_HAVE_CUDA
  if (!g_callbacks_wanted.on()) {
    if (why) *why = "switched off (TLRT_FFT_LOAD_CALLBACKS unset or \"0\")";
    return false;
  }
  if (!g_callbacks_failed.load(std::memory_order_acquire)) {
    const kernels::FftLoadCallback callback = kernels::irfft_load_callback(f64);
    if (callback.ltoir != nullptr) return true;
    callbacks_failed(callback.why);
  }
  if (why) {
    std::lock_guard<std::mutex> lock(g_callbacks_why_mutex);
    *why = g_callbacks_why;
  }
  return false;
#else
  (void)f64;
  if (why) *why = "this build has no CUDA backend";
  return false;
#endif
}

std::unique_ptr<Buffer> rfft1d_packed(const Buffer& x, uint64_t batch, uint64_t n, const char* op) {
  fft_length(n, false, op);
  require_native(x, op);
  require_shape(x, "x", Dims{batch, n}, "[batch, n]", op);
  const uint64_t bins = kernels::fft_bins(n);
  const uint64_t out_size = shape_size(Dims{batch, bins, 2}, "[batch, n/2 + 1, 2]", op);
  std::unique_ptr<Buffer> out = Buffer::allocate(x.backend(), x.dtype(), out_size, op);
  if (out_size == 0) return out;
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::rfft1d_ref(x.as<T>(), batch, n, out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
#if TLRT_HAVE_CUDA
        using T = typename decltype(as)::type;
        if (n == 1) {
          kernels::rfft_length1_cuda(x.as<T>(), batch, out->as<T>(), s, op);
          return;
        }
        PlanLease plan = acquire_plan(row_plan<T>(FftDirection::r2c, batch, n), op);
        Workspace work(x.backend(), plan->work_bytes, op);
        {
          std::lock_guard<std::mutex> lock(g_fft_exec);
          // Out-of-place R2C reads its input without writing it: the borrowed x stays intact,
          // and the transform writes the packed layout straight into the result.
          kernels::fft_exec_cuda(*plan, FftDirection::r2c, x.as<T>(), out->as<T>(), work.data(), s,
                                 op);
        }
        plan.used();
#else
        (void)as;
        (void)s;
#endif
      });
  return out;
}

std::unique_ptr<Buffer> irfft1d_packed(const Buffer& spec, uint64_t batch, uint64_t n,
                                       bool normalize, const char* op) {
  fft_length(n, true, op);
  require_native(spec, op);
  const uint64_t bins = kernels::fft_bins(n);
  require_shape(spec, "spec", Dims{batch, bins, 2}, "[batch, n/2 + 1, 2]", op);
  const uint64_t out_size = shape_size(Dims{batch, n}, "[batch, n]", op);
  std::unique_ptr<Buffer> out = Buffer::allocate(spec.backend(), spec.dtype(), out_size, op);
  if (out_size == 0) return out;
  on_backend(
      spec.backend(), spec.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::irfft1d_ref(spec.as<T>(), batch, n, normalize, out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
#if TLRT_HAVE_CUDA
        using T = typename decltype(as)::type;
        const T scale = kernels::fft_inverse_scale<T>(n);
        if (n == 1) {
          kernels::irfft_length1_cuda(spec.as<T>(), batch, normalize, scale, out->as<T>(), s, op);
          return;
        }
        if (kernels::irfft_pow2_supported(n, sizeof(T)) && g_pow2_wanted.on()) {
          kernels::irfft_pow2_cuda(spec.as<T>(), batch, n, normalize, scale, out->as<T>(), s, op);
          return;
        }
        if (g_callbacks_wanted.on() && !g_callbacks_failed.load(std::memory_order_acquire)) {
          const kernels::FftLoadCallback callback = kernels::irfft_load_callback(sizeof(T) == 8);
          std::optional<PlanLease> plan;
          if (callback.ltoir == nullptr) {
            callbacks_failed(callback.why);
          } else {
            FftPlanShape shape = row_plan<T>(FftDirection::c2r, batch, n);
            shape.load_callback = true;
            try {
              plan.emplace(acquire_plan(shape, op, &callback));
            } catch (const Error& e) {
              callbacks_failed(e.what());
            }
          }
          if (plan) {
            // The callback reads the borrowed spectrum; cuFFT may still use the array it is
            // handed as input for scratch, so it gets a block of the spectrum's size from the
            // pool, never the spectrum.
            const uint64_t spectrum_bytes = spec.size() * sizeof(T);
            const uint64_t input_at = align256((*plan)->work_bytes);
            Workspace work(spec.backend(), input_at + spectrum_bytes, op);
            char* base = static_cast<char*>(work.data());
            {
              // The caller info belongs to the plan: written and read under one lock.
              std::lock_guard<std::mutex> lock(g_fft_exec);
              kernels::fft_write_load_info_cuda((*plan)->callback_info, spec.as<T>(), n, normalize,
                                                scale, s, op);
              kernels::fft_exec_cuda(**plan, FftDirection::c2r, out->as<T>(),
                                     reinterpret_cast<T*>(base + input_at),
                                     (*plan)->work_bytes != 0 ? base : nullptr, s, op);
            }
            plan->used();
            return;
          }
        }
        // C2R overwrites its input: the spectrum is copied first, with the endpoint rule and
        // the factor fl(1/n) applied on the way (docs/NUMERICS.md bounds scaling the spectrum
        // instead of the result). A large batch goes in chunks of rows whose copy stays in L2
        // until its C2R reads it; every chunk reuses the same block, in stream order.
        const uint64_t row_elems = bins * 2;
        const IrfftChunking chunking =
            chunking_for(batch, row_elems * sizeof(T), n % 2 == 0 ? 1 : 2);
        PlanLease plan = acquire_plan(row_plan<T>(FftDirection::c2r, chunking.rows, n), op);
        std::optional<PlanLease> last;
        if (chunking.last_rows != chunking.rows) {
          last.emplace(acquire_plan(row_plan<T>(FftDirection::c2r, chunking.last_rows, n), op));
        }
        const uint64_t area =
            std::max<uint64_t>(plan->work_bytes, last ? (*last)->work_bytes : uint64_t{0});
        const uint64_t copy_at = align256(area);
        Workspace work(spec.backend(), copy_at + chunking.rows * row_elems * sizeof(T), op);
        char* base = static_cast<char*>(work.data());
        T* copy = reinterpret_cast<T*>(base + copy_at);
        {
          // Stream and work area bound once per plan for all the chunks, under one lock.
          std::lock_guard<std::mutex> lock(g_fft_exec);
          kernels::fft_bind_cuda(*plan, plan->work_bytes != 0 ? base : nullptr, s, op);
          if (last) {
            kernels::fft_bind_cuda(**last, (*last)->work_bytes != 0 ? base : nullptr, s, op);
          }
          for (uint64_t c = 0; c < chunking.chunks; ++c) {
            const uint64_t first_row = c * chunking.rows;
            const bool is_last = c + 1 == chunking.chunks;
            const uint64_t rows = is_last ? chunking.last_rows : chunking.rows;
            kernels::irfft_prepare_cuda(spec.as<T>() + first_row * row_elems, copy, rows, n, 1,
                                        bins, normalize, scale, s, op);
            kernels::fft_run_cuda((is_last && last) ? **last : *plan, FftDirection::c2r,
                                  out->as<T>() + first_row * n, copy, op);
          }
        }
        plan.used();
        if (last) last->used();
#else
        (void)as;
        (void)s;
#endif
      });
  return out;
}

// The checks of TorchLean's split-era adapter, in its order, before any buffer is read.
void spectral_shapes(uint64_t grid, uint64_t width, uint64_t modes, const char* op) {
  if (grid == 0 || width == 0) {
    fail(ErrorKind::invalid_argument, op,
         "spectralConv1dRfft: grid and width must be positive (grid = " + std::to_string(grid) +
             ", width = " + std::to_string(width) + ")");
  }
  if (modes > kernels::fft_bins(grid)) {
    fail(
        ErrorKind::invalid_argument, op,
        "spectralConv1dRfft: modes exceeds rfft frequency count (modes = " + std::to_string(modes) +
            " but grid/2 + 1 = " + std::to_string(kernels::fft_bins(grid)) + ")");
  }
  shape_size(Dims{grid, width}, "[grid, width]", op);
  shape_size(Dims{modes, width, width}, "[modes, width, width]", op);
}

std::unique_ptr<Buffer> spectral_conv1d_rfft_fwd(const Buffer& x, const Buffer& wre,
                                                 const Buffer& wim, uint64_t grid, uint64_t width,
                                                 uint64_t modes, const char* op) {
  spectral_shapes(grid, width, modes, op);
  require_native(x, op);
  require_native(wre, op);
  require_native(wim, op);
  require_shape(x, "x", Dims{grid, width}, "[grid, width]", op);
  require_shape(wre, "wRe", Dims{modes, width, width}, "[modes, width, width]", op);
  require_shape(wim, "wIm", Dims{modes, width, width}, "[modes, width, width]", op);
  require_compatible(op, {&x, &wre, &wim}, SameSize::no);
  if (modes == 0) return make_zeros(x.backend(), x.dtype(), x.size(), op);
  std::unique_ptr<Buffer> y = Buffer::allocate(x.backend(), x.dtype(), x.size(), op);
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::spectral_conv1d_fwd_ref(x.as<T>(), wre.as<T>(), wim.as<T>(), grid, width, modes,
                                         y->as<T>());
      },
      [&](auto as, CUstream_st* s) {
#if TLRT_HAVE_CUDA
        using T = typename decltype(as)::type;
        const uint64_t bins = kernels::fft_bins(grid);
        const uint64_t spectrum_bytes = bins * width * 2 * sizeof(T);
        const T scale = kernels::fft_inverse_scale<T>(grid);
        if (grid == 1) {
          Workspace work(x.backend(), 2 * align256(spectrum_bytes), op);
          T* xs = static_cast<T*>(work.data());
          T* z = reinterpret_cast<T*>(static_cast<char*>(work.data()) + align256(spectrum_bytes));
          kernels::rfft_length1_cuda(x.as<T>(), width, xs, s, op);
          kernels::spectral_mix_fwd_cuda(xs, wre.as<T>(), wim.as<T>(), grid, width, modes, scale, z,
                                         s, op);
          kernels::irfft_length1_cuda(z, width, false, scale, y->as<T>(), s, op);
          return;
        }
        PlanLease fwd = acquire_plan(column_plan<T>(FftDirection::r2c, grid, width), op);
        PlanLease inv = acquire_plan(column_plan<T>(FftDirection::c2r, grid, width), op);
        const uint64_t area = align256(std::max(fwd->work_bytes, inv->work_bytes));
        Workspace work(x.backend(), area + 2 * align256(spectrum_bytes), op);
        char* base = static_cast<char*>(work.data());
        T* xs = reinterpret_cast<T*>(base + area);
        T* z = reinterpret_cast<T*>(base + area + align256(spectrum_bytes));
        {
          std::lock_guard<std::mutex> lock(g_fft_exec);
          kernels::fft_exec_cuda(*fwd, FftDirection::r2c, x.as<T>(), xs, base, s, op);
        }
        kernels::spectral_mix_fwd_cuda(xs, wre.as<T>(), wim.as<T>(), grid, width, modes, scale, z,
                                       s, op);
        {
          std::lock_guard<std::mutex> lock(g_fft_exec);
          kernels::fft_exec_cuda(*inv, FftDirection::c2r, y->as<T>(), z, base, s, op);
        }
        fwd.used();
        inv.used();
#else
        (void)as;
        (void)s;
#endif
      });
  return y;
}

SpectralGrads spectral_conv1d_rfft_bwd(const Buffer& x, const Buffer& wre, const Buffer& wim,
                                       const Buffer& dy, uint64_t grid, uint64_t width,
                                       uint64_t modes, const char* op) {
  spectral_shapes(grid, width, modes, op);
  require_native(x, op);
  require_native(wre, op);
  require_native(wim, op);
  require_native(dy, op);
  require_shape(x, "x", Dims{grid, width}, "[grid, width]", op);
  require_shape(wre, "wRe", Dims{modes, width, width}, "[modes, width, width]", op);
  require_shape(wim, "wIm", Dims{modes, width, width}, "[modes, width, width]", op);
  require_shape(dy, "dY", Dims{grid, width}, "[grid, width]", op);
  require_compatible(op, {&x, &wre, &wim, &dy}, SameSize::no);
  SpectralGrads g;
  g.dx = modes == 0 ? make_zeros(x.backend(), x.dtype(), x.size(), op)
                    : Buffer::allocate(x.backend(), x.dtype(), x.size(), op);
  g.dwre = Buffer::allocate(x.backend(), x.dtype(), wre.size(), op);
  g.dwim = Buffer::allocate(x.backend(), x.dtype(), wim.size(), op);
  if (modes == 0) return g;  // the weight gradients are empty
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::spectral_conv1d_bwd_ref(x.as<T>(), wre.as<T>(), wim.as<T>(), dy.as<T>(), grid,
                                         width, modes, g.dx->as<T>(), g.dwre->as<T>(),
                                         g.dwim->as<T>());
      },
      [&](auto as, CUstream_st* s) {
#if TLRT_HAVE_CUDA
        using T = typename decltype(as)::type;
        const uint64_t bins = kernels::fft_bins(grid);
        const uint64_t spectrum = align256(bins * width * 2 * sizeof(T));
        if (grid == 1) {
          Workspace work(x.backend(), 3 * spectrum, op);
          char* base = static_cast<char*>(work.data());
          T* xs = reinterpret_cast<T*>(base);
          T* ds = reinterpret_cast<T*>(base + spectrum);
          T* dxs = reinterpret_cast<T*>(base + 2 * spectrum);
          kernels::rfft_length1_cuda(x.as<T>(), width, xs, s, op);
          kernels::rfft_length1_cuda(dy.as<T>(), width, ds, s, op);
          kernels::spectral_mix_bwd_cuda(xs, ds, wre.as<T>(), wim.as<T>(), grid, width, modes, dxs,
                                         g.dwre->as<T>(), g.dwim->as<T>(), s, op);
          kernels::irfft_length1_cuda(dxs, width, false, T(1), g.dx->as<T>(), s, op);
          return;
        }
        PlanLease fwd = acquire_plan(column_plan<T>(FftDirection::r2c, grid, width), op);
        PlanLease inv = acquire_plan(column_plan<T>(FftDirection::c2r, grid, width), op);
        const uint64_t area = align256(std::max(fwd->work_bytes, inv->work_bytes));
        Workspace work(x.backend(), area + 3 * spectrum, op);
        char* base = static_cast<char*>(work.data());
        T* xs = reinterpret_cast<T*>(base + area);
        T* ds = reinterpret_cast<T*>(base + area + spectrum);
        T* dxs = reinterpret_cast<T*>(base + area + 2 * spectrum);
        {
          std::lock_guard<std::mutex> lock(g_fft_exec);
          kernels::fft_exec_cuda(*fwd, FftDirection::r2c, x.as<T>(), xs, base, s, op);
          kernels::fft_exec_cuda(*fwd, FftDirection::r2c, dy.as<T>(), ds, base, s, op);
        }
        kernels::spectral_mix_bwd_cuda(xs, ds, wre.as<T>(), wim.as<T>(), grid, width, modes, dxs,
                                       g.dwre->as<T>(), g.dwim->as<T>(), s, op);
        {
          std::lock_guard<std::mutex> lock(g_fft_exec);
          kernels::fft_exec_cuda(*inv, FftDirection::c2r, g.dx->as<T>(), dxs, base, s, op);
        }
        fwd.used();
        inv.used();
#else
        (void)as;
        (void)s;
#endif
      });
  return g;
}

}  // namespace tlrt
