// Real FFT of packed half spectra (SPEC-ops 12) and the legacy spectral convolution pair (SPEC-ops
// 16), dispatched to the backend that holds the inputs. Each returns fresh buffers of the inputs'
// dtype on their backend, never an alias of an input, or throws tlrt::Error naming `op` with the
// sizes involved (released input: released_buffer; encoded, mixed dtypes or backends, a zero
// length, sizes that disagree with the arguments: invalid_argument). Results are tolerance-level
// (docs/NUMERICS.md, "FFT"). Device work is queued on the device's stream (asynchronous); cuFFT
// plans come from a per-device plan cache and their work areas from the caching allocator.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/buffer.h"

namespace tlrt {

// The CUDA inverse through cuFFT's JIT-linked load callback (the callback reads the borrowed
// spectrum with the endpoint rule and fl(1/n) applied, so no copy pass runs). Off unless
// TLRT_FFT_LOAD_CALLBACKS is set to anything but "0" (read on first use) or it is switched on
// here; where the callback cannot be built (no NVRTC, no LTO support) the inverse keeps the copy
// pass and fft_load_callbacks_active says why.
void set_fft_load_callbacks(bool enabled);
// Whether the next CUDA inverse of dtype f64 / f32 takes the callback path (builds the callback on
// first use); *why (when given) says why not.
bool fft_load_callbacks_active(bool f64, std::string* why);

// The CUDA inverse of power-of-two lengths 256..8192 (4096 in float64;
// kernels::irfft_pow2_supported) as one kernel of tlrt's own (kernels/fft/irfft_pow2.h: one read of
// the spectrum, one write of the reals, no cuFFT plan). On unless TLRT_FFT_POW2_INVERSE is "0"
// (read on first use) or it is switched off here; other lengths, and all lengths when it is off,
// take cuFFT.
void set_fft_pow2_inverse(bool enabled);
bool fft_pow2_inverse_on();

// The CUDA inverse's copy pass in chunks of rows (docs/NUMERICS.md, "FFT"): `chunks` pieces of
// `rows` rows, the last of `last_rows`; one piece (rows = batch) for small spectra and long rows.
struct IrfftChunking {
  uint64_t chunks = 1;
  uint64_t rows = 0;
  uint64_t last_rows = 0;
};
// The chunking the copy pass uses for (batch, n) in the dtype (the load-callback path is never
// chunked).
IrfftChunking irfft1d_chunking(bool f64, uint64_t batch, uint64_t n);
// The chunk size of the copy pass in bytes of spectrum; 0 keeps every batch one piece. Read from
// TLRT_FFT_CHUNK_BYTES on first use (default 8 MiB), or set here.
uint64_t fft_chunk_bytes();
void set_fft_chunk_bytes(uint64_t bytes);

// The checks that come before any operand is looked at (TorchLean's order), run first by the
// functions below too: n > 0, else "rfft1dPacked: length must be positive" (the inverses say
// irfft1dPacked); and for the spectral pair, "spectralConv1dRfft: grid and width must be
// positive", "spectralConv1dRfft: modes exceeds rfft frequency count" (modes > grid/2 + 1), then
// the shape products.
void fft_length(uint64_t n, bool inverse, const char* op);
void spectral_shapes(uint64_t grid, uint64_t width, uint64_t modes, const char* op);

// x (batch, n) -> (batch, n/2 + 1, 2). n = 0 fails "rfft1dPacked: length must be positive".
std::unique_ptr<Buffer> rfft1d_packed(const Buffer& x, uint64_t batch, uint64_t n, const char* op);

// spec (batch, n/2 + 1, 2) -> (batch, n); normalize multiplies by fl(1/n). n = 0 fails
// "irfft1dPacked: length must be positive".
std::unique_ptr<Buffer> irfft1d_packed(const Buffer& spec, uint64_t batch, uint64_t n,
                                       bool normalize, const char* op);

// x (grid, width), wre / wim (modes, width, width) -> y (grid, width). Checks in TorchLean's
// order: "spectralConv1dRfft: grid and width must be positive", "spectralConv1dRfft: modes
// exceeds rfft frequency count" (modes > grid/2 + 1), shape products, then the buffers.
std::unique_ptr<Buffer> spectral_conv1d_rfft_fwd(const Buffer& x, const Buffer& wre,
                                                 const Buffer& wim, uint64_t grid, uint64_t width,
                                                 uint64_t modes, const char* op);

struct SpectralGrads {
  std::unique_ptr<Buffer> dx, dwre, dwim;
};
// The exact real-linear adjoint of spectral_conv1d_rfft_fwd at (x, w) applied to dy.
SpectralGrads spectral_conv1d_rfft_bwd(const Buffer& x, const Buffer& wre, const Buffer& wim,
                                       const Buffer& dy, uint64_t grid, uint64_t width,
                                       uint64_t modes, const char* op);

}  // namespace tlrt
