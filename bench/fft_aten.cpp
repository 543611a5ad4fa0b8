// ATen side of the FFT rows of tlrt-bench: TorchLean's LibTorch compositions for rfft1d_packed,
// irfft1d_packed and irfft1d_packed_unnormalized (its csrc/libtorch/torchlean.cpp), registered
// under the ops' names. The buffer arrives flat; the host scalars are the ABI's (batch, n).
#include <ATen/ATen.h>

#include "aten_registry.h"

namespace bench::aten {
namespace {

// The inverse: a contiguous complex copy of the packed spectrum, the endpoint imaginary parts
// zeroed, then irfft with an explicit n ("backward" divides by n, "forward" does not).
at::Tensor inverse(const at::Tensor& flat, int64_t batch, int64_t n, bool normalized) {
  auto packed = flat.view({batch, n / 2 + 1, 2});
  auto spectrum = at::view_as_complex(packed.contiguous()).clone();
  auto imaginary = at::imag(spectrum);
  imaginary.select(1, 0).zero_();
  if (n % 2 == 0) imaginary.select(1, n / 2).zero_();
  return at::fft_irfft(spectrum, n, 1, normalized ? "backward" : "forward");
}

const AtenOpRegistration kFftOps({
    {"rfft1d_packed", 1, false, "view_as_real(fft_rfft(x.view({batch, n}), n, 1, \"backward\"))",
     [](X x, S s) -> Tensors {
       const auto batch = static_cast<int64_t>(s[0]), n = static_cast<int64_t>(s[1]);
       return {at::view_as_real(at::fft_rfft(x[0].view({batch, n}), n, 1, "backward"))};
     }},
    {"irfft1d_packed", 1, false,
     "fft_irfft(view_as_complex(spec.contiguous()).clone() with Im X_0, Im X_n/2 zeroed, n, 1, "
     "\"backward\")",
     [](X x, S s) -> Tensors {
       return {inverse(x[0], static_cast<int64_t>(s[0]), static_cast<int64_t>(s[1]), true)};
     }},
    {"irfft1d_packed_unnormalized", 1, false,
     "fft_irfft(view_as_complex(spec.contiguous()).clone() with Im X_0, Im X_n/2 zeroed, n, 1, "
     "\"forward\")",
     [](X x, S s) -> Tensors {
       return {inverse(x[0], static_cast<int64_t>(s[0]), static_cast<int64_t>(s[1]), false)};
     }},
});

}  // namespace
}  // namespace bench::aten
