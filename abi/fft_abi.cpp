// Real FFT of packed half spectra (SPEC-ops 12) and the legacy spectral convolution pair (SPEC-ops
// 16; symbols-ops.tsv groups fft and legacy). Pure symbols: every failure (released buffer,
// non-buffer or encoded argument, a zero length, sizes that disagree with the arguments, out of
// memory, device error) panics. The scalar arguments are checked before any operand is looked
// at, as TorchLean does.
#include "abi/boundary.h"
#include "runtime/fft_dispatch.h"

using namespace tlrt::abi;

extern "C" {

// x borrowed; result owned: a fresh (batch, n/2 + 1, 2) buffer of x's dtype, the unnormalized
// half spectrum of each row as [Re, Im] pairs.
lean_obj_res torchlean_cuda_buffer_rfft1d_packed(b_lean_obj_arg x, uint32_t batch, uint32_t n) {
  return pure_call([&] {
    tlrt::fft_length(n, false, "rfft1d_packed");
    tlrt::Buffer& input = live_buffer(x, "rfft1d_packed");
    return box(tlrt::rfft1d_packed(input, batch, n, "rfft1d_packed"));
  });
}

// spec borrowed; result owned: a fresh (batch, n) buffer, the Hermitian inverse of each packed
// row times fl(1/n) (endpoint imaginary parts ignored).
lean_obj_res torchlean_cuda_buffer_irfft1d_packed(b_lean_obj_arg spec, uint32_t batch, uint32_t n) {
  return pure_call([&] {
    tlrt::fft_length(n, true, "irfft1d_packed");
    tlrt::Buffer& input = live_buffer(spec, "irfft1d_packed");
    return box(tlrt::irfft1d_packed(input, batch, n, true, "irfft1d_packed"));
  });
}

// spec borrowed; result owned: as irfft1d_packed without the 1/n factor.
lean_obj_res torchlean_cuda_buffer_irfft1d_packed_unnormalized(b_lean_obj_arg spec, uint32_t batch,
                                                               uint32_t n) {
  return pure_call([&] {
    tlrt::fft_length(n, true, "irfft1d_packed_unnormalized");
    tlrt::Buffer& input = live_buffer(spec, "irfft1d_packed_unnormalized");
    return box(tlrt::irfft1d_packed(input, batch, n, false, "irfft1d_packed_unnormalized"));
  });
}

// x, wRe, wIm borrowed; result owned: a fresh (grid, width) buffer.
lean_obj_res torchlean_cuda_buffer_spectral_conv1d_rfft_fwd(b_lean_obj_arg x, b_lean_obj_arg wRe,
                                                            b_lean_obj_arg wIm, uint32_t grid,
                                                            uint32_t width, uint32_t modes) {
  constexpr const char* op = "spectral_conv1d_rfft_fwd";
  return pure_call([&] {
    tlrt::spectral_shapes(grid, width, modes, op);
    tlrt::Buffer& input = live_buffer(x, op);
    tlrt::Buffer& real = live_buffer(wRe, op);
    tlrt::Buffer& imaginary = live_buffer(wIm, op);
    return box(tlrt::spectral_conv1d_rfft_fwd(input, real, imaginary, grid, width, modes, op));
  });
}

// x, wRe, wIm, dY borrowed; result owned: the triple (dx, (dWRe, dWIm)) of fresh buffers.
lean_obj_res torchlean_cuda_buffer_spectral_conv1d_rfft_bwd(b_lean_obj_arg x, b_lean_obj_arg wRe,
                                                            b_lean_obj_arg wIm, b_lean_obj_arg dY,
                                                            uint32_t grid, uint32_t width,
                                                            uint32_t modes) {
  constexpr const char* op = "spectral_conv1d_rfft_bwd";
  return pure_call([&] {
    tlrt::spectral_shapes(grid, width, modes, op);
    tlrt::Buffer& input = live_buffer(x, op);
    tlrt::Buffer& real = live_buffer(wRe, op);
    tlrt::Buffer& imaginary = live_buffer(wIm, op);
    tlrt::Buffer& dout = live_buffer(dY, op);
    tlrt::SpectralGrads g =
        tlrt::spectral_conv1d_rfft_bwd(input, real, imaginary, dout, grid, width, modes, op);
    return box_tuple(std::move(g.dx), std::move(g.dwre), std::move(g.dwim));
  });
}

}  // extern "C"
