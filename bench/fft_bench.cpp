// The FFT family: rfft1d_packed, irfft1d_packed and irfft1d_packed_unnormalized through the
// runtime's dispatch (plan from the per-device cache, work area and result from the caching
// allocator, all on the runtime's stream) at batch 4096 x n 4096 float32, 4096 x 1000 float32 and
// 4096 x 4096 float64, each beside a bare cuFFT R2C / C2R on the same data (its own plan and work
// area, made before the timed region; the bare C2R writes into a scratch copy of the spectrum, as
// C2R overwrites its input) and TorchLean's ATen composition; the inverses also through cuFFT's
// load callback (the opt-in path of TLRT_FFT_LOAD_CALLBACKS) where it can be built. Each tlrt row's
// note counts plan creations and driver allocations over the timed iterations (after one untimed
// call): both must be 0, and the copy pass's row says how many chunks it used; where it chunks, a
// "[one piece]" row and, for the normalized inverse, rows at half, twice and four times the chunk
// size beside it. bytes = input read + output written.
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "aten_bench.h"
#include "bench_group.h"
#include "bench_harness.h"
#include "kernels/fft/irfft_pow2.h"
#include "kernels/random/random.h"
#include "runtime/caching_allocator.h"
#include "runtime/context.h"
#include "runtime/fft_dispatch.h"
#include "runtime/plan_cache.h"

namespace bench {
namespace {

constexpr const char* kAtenRfft = "rfft1d_packed";
constexpr const char* kAtenIrfft = "irfft1d_packed";
constexpr const char* kAtenIrfftUn = "irfft1d_packed_unnormalized";

enum class Which { rfft, irfft, irfft_unnormalized };

const char* op_of(Which w) {
  return w == Which::rfft ? kAtenRfft : w == Which::irfft ? kAtenIrfft : kAtenIrfftUn;
}

struct Counts {
  uint64_t creates, driver_allocs;
  static Counts read() {
    return {tlrt::plan_cache_counters().creates,
            tlrt::allocator(tlrt::Backend::cuda).stats().source_allocs};
  }
};

// The tlrt row and the bare cuFFT row of one op at one size, then ATen's.
template <class T>
void add_rows(Harness& h, Which which, uint64_t batch, uint64_t n) {
  const bool f64 = sizeof(T) == 8;
  const tlrt::Dtype dtype = f64 ? tlrt::Dtype::f64 : tlrt::Dtype::f32;
  const uint64_t bins = n / 2 + 1;
  const uint64_t real_count = batch * n, packed_count = batch * bins * 2;
  const bool forward = which == Which::rfft;
  const uint64_t in_count = forward ? real_count : packed_count;
  const uint64_t out_count = forward ? packed_count : real_count;
  const double bytes = static_cast<double>(in_count + out_count) * sizeof(T);
  const std::string size_text =
      std::to_string(batch) + " x " + std::to_string(n) + (f64 ? " float64" : " float32");

  std::unique_ptr<tlrt::Buffer> input =
      tlrt::Buffer::allocate(tlrt::Backend::cuda, dtype, in_count, "bench");
  tlrt::kernels::rand_uniform_cuda(input->as<T>(), in_count, 0xFF7, h.stream());
  cudaStreamSynchronize(h.stream());

  auto call = [&] {
    if (forward) return tlrt::rfft1d_packed(*input, batch, n, "bench");
    return tlrt::irfft1d_packed(*input, batch, n, which == Which::irfft, "bench");
  };
  // One row of the configuration in force: a warm-up call (its plans made, the pool warmed), then
  // the timed calls; the note starts with the plan creations and driver allocations over them.
  auto timed_row = [&](const std::string& label) {
    call();
    cudaStreamSynchronize(h.stream());
    const Counts c0 = Counts::read();
    const double us = h.device_median_us([&](CUstream_st*) { call(); });
    cudaStreamSynchronize(h.stream());
    const Counts c1 = Counts::read();
    Row row;
    row.group = "fft";
    row.name = std::string(op_of(which)) + (label.empty() ? " " : " [" + label + "] ") + size_text;
    row.median_us = us;
    row.bytes = bytes;
    row.size = in_count;
    row.note = "plan creations " + std::to_string(c1.creates - c0.creates) +
               ", driver allocations " + std::to_string(c1.driver_allocs - c0.driver_allocs) +
               " over the timed calls";
    return row;
  };
  Row r = timed_row("");
  const bool pow2 =
      !forward && tlrt::fft_pow2_inverse_on() && tlrt::kernels::irfft_pow2_supported(n, sizeof(T));
  if (pow2) {
    r.note +=
        "; tlrt's power-of-two inverse kernel: the spectrum read once, the reals written "
        "once, no cuFFT";
  } else if (!forward) {
    // The chunking the copy pass used (TLRT_FFT_CHUNK_BYTES, docs/NUMERICS.md "FFT").
    const tlrt::IrfftChunking c = tlrt::irfft1d_chunking(f64, batch, n);
    r.note += "; spectrum copy with endpoint fix-up and 1/n fused, then C2R, ";
    if (c.chunks == 1) {
      r.note += "one piece";
    } else {
      r.note += "in " + std::to_string(c.chunks) + " chunks of " + std::to_string(c.rows) +
                " rows" +
                (c.last_rows != c.rows ? " (last " + std::to_string(c.last_rows) + ")" : "") +
                ", " + std::to_string(tlrt::fft_chunk_bytes() >> 10) + " KiB target";
    }
  }
  const void* inputs[1] = {input->data()};
  const double scalars[2] = {static_cast<double>(batch), static_cast<double>(n)};
  r.aten_us = std::max(
      0.0, aten::median_us(h, op_of(which), f64 ? 1 : 0, inputs, 1, scalars, in_count, 20));
  h.add(r);

  // The rows below time cuFFT's paths: the power-of-two kernel is off until the function returns.
  struct Pow2Off {
    bool before = tlrt::fft_pow2_inverse_on();
    Pow2Off() { tlrt::set_fft_pow2_inverse(false); }
    ~Pow2Off() { tlrt::set_fft_pow2_inverse(before); }
  } pow2_off;
  if (pow2) {
    Row c = timed_row("cuFFT copy pass");
    c.note =
        "TLRT_FFT_POW2_INVERSE=0: spectrum copy with endpoint fix-up and 1/n fused, then C2R; " +
        c.note;
    h.add(c);
  }

  // The copy pass in one piece beside the chunked default, where the default chunks; for the
  // normalized inverse also under other chunk sizes (rows "[chunks N KiB]"), to choose the default.
  if (!forward && tlrt::irfft1d_chunking(f64, batch, n).chunks > 1) {
    const uint64_t chunk = tlrt::fft_chunk_bytes();
    std::vector<uint64_t> sizes = {0};
    if (which == Which::irfft) {
      for (uint64_t other : {chunk / 2, chunk * 2, chunk * 4}) sizes.push_back(other);
    }
    for (uint64_t other : sizes) {
      tlrt::set_fft_chunk_bytes(other);
      const tlrt::IrfftChunking c = tlrt::irfft1d_chunking(f64, batch, n);
      if (other != 0 && c.chunks < 2) continue;
      Row o = timed_row(other == 0 ? std::string("one piece")
                                   : "chunks " + std::to_string(other >> 10) + " KiB");
      o.note = "TLRT_FFT_CHUNK_BYTES=" + std::to_string(other) + ": " +
               (other == 0 ? std::string("the whole spectrum copied, then one C2R")
                           : std::to_string(c.chunks) + " chunks of " + std::to_string(c.rows) +
                                 " rows (last " + std::to_string(c.last_rows) + ")") +
               "; " + o.note;
      h.add(o);
    }
    tlrt::set_fft_chunk_bytes(chunk);
  }

  // The inverse through cuFFT's load callback (opt-in path), when it can be built here.
  if (!forward) {
    tlrt::set_fft_load_callbacks(true);
    std::string why;
    bool active = tlrt::fft_load_callbacks_active(f64, &why);
    if (active) {
      call();  // the callback plan (JIT-linked) created and cached
      cudaStreamSynchronize(h.stream());
      // A callback plan that cannot be made leaves the call on the copy pass: no row then.
      active = tlrt::fft_load_callbacks_active(f64, &why);
    }
    if (active) {
      Row c = timed_row("load callback");
      c.note = "TLRT_FFT_LOAD_CALLBACKS=1: no copy pass; " + c.note;
      h.add(c);
    } else {
      std::fprintf(stderr, "tlrt-bench: no load-callback row for %s: %s\n", size_text.c_str(),
                   why.c_str());
    }
    tlrt::set_fft_load_callbacks(false);
  }

  // Bare cuFFT on the same data: its own plan and work area, made here.
  if (which == Which::irfft_unnormalized) return;  // the same transform as the C2R row
  cufftHandle plan = 0;
  long long len = static_cast<long long>(n);
  size_t work = 0;
  const cufftType type = forward ? (f64 ? CUFFT_D2Z : CUFFT_R2C) : (f64 ? CUFFT_Z2D : CUFFT_C2R);
  if (cufftCreate(&plan) != CUFFT_SUCCESS ||
      cufftMakePlanMany64(plan, 1, &len, nullptr, 1, 0, nullptr, 1, 0, type,
                          static_cast<long long>(batch), &work) != CUFFT_SUCCESS) {
    std::fprintf(stderr, "tlrt-bench: cuFFT plan for %s failed\n", size_text.c_str());
    cufftDestroy(plan);
    return;
  }
  void* out = nullptr;
  void* scratch = nullptr;
  if (cudaMalloc(&out, out_count * sizeof(T)) != cudaSuccess ||
      (!forward && cudaMalloc(&scratch, in_count * sizeof(T)) != cudaSuccess)) {
    std::fprintf(stderr, "tlrt-bench: cudaMalloc failed\n");
    cudaFree(out);
    cufftDestroy(plan);
    return;
  }
  // The C2R input: a copy of the spectrum, which every execution overwrites again.
  if (!forward) {
    cudaMemcpyAsync(scratch, input->data(), in_count * sizeof(T), cudaMemcpyDeviceToDevice,
                    h.stream());
  }
  cufftSetStream(plan, h.stream());
  const double bare_us = h.device_median_us([&](CUstream_st*) {
    if (forward) {
      if (f64) {
        cufftExecD2Z(plan, reinterpret_cast<double*>(input->data()),
                     static_cast<cufftDoubleComplex*>(out));
      } else {
        cufftExecR2C(plan, reinterpret_cast<float*>(input->data()),
                     static_cast<cufftComplex*>(out));
      }
    } else if (f64) {
      cufftExecZ2D(plan, static_cast<cufftDoubleComplex*>(scratch), static_cast<double*>(out));
    } else {
      cufftExecC2R(plan, static_cast<cufftComplex*>(scratch), static_cast<float*>(out));
    }
  });
  cudaStreamSynchronize(h.stream());
  Row b;
  b.group = "fft";
  b.name = std::string(forward ? "bare cuFFT R2C " : "bare cuFFT C2R ") + size_text;
  b.median_us = bare_us;
  b.bytes = bytes;
  b.size = in_count;
  b.note = forward ? "reference point for rfft1d_packed (goal: within 5%)"
                   : "reference point for irfft1d_packed (goal: at most 1.25x); overwrites a "
                     "scratch spectrum";
  h.add(b);
  cudaFree(scratch);
  cudaFree(out);
  cufftDestroy(plan);
}

void fft_benchmarks(Harness& h, const BenchOptions&) {
  for (Which w : {Which::rfft, Which::irfft, Which::irfft_unnormalized}) {
    add_rows<float>(h, w, 4096, 4096);
    add_rows<float>(h, w, 4096, 1000);
    add_rows<double>(h, w, 4096, 4096);
  }
  aten::release_cache();
}

// Rank 70: after the reductions and shape groups.
const GroupRegistration kFftGroup({"fft",
                                   "rfft1d_packed, irfft1d_packed(_unnormalized) 4096 x 4096 / "
                                   "4096 x 1000 float32, 4096 x 4096 float64, beside bare cuFFT "
                                   "and ATen; plan creations and driver allocations counted",
                                   70, fft_benchmarks, "", []() -> std::vector<std::string> {
                                     return {kAtenRfft, kAtenIrfft, kAtenIrfftUn};
                                   }});

}  // namespace
}  // namespace bench
