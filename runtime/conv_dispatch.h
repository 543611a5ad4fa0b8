// Convolution symbols (SPEC-ops 14.2, 14.6), dispatched to the backend that holds the inputs. The
// geometry arrives validated (runtime/conv_geometry.h); these check the buffers against it in
// TorchLean's order (input, kernel, bias or gradient: "buffer size mismatch"; then the output
// volume), then one backend and one dtype (mixed dtypes fail), and apply the empty rules of 14.1
// before any device work. Every result is a fresh buffer of the inputs' dtype; an empty result
// has no payload. Failures throw tlrt::Error naming `op`.
//
// CUDA backend: cuDNN (cudnn-frontend graphs, execution plans cached per geometry in a per-device
// plan cache, workspaces from the caching allocator, deterministic engines only under the
// deterministic setting, no TF32 unless Setting::conv_tf32) when the build has the frontend and
// Setting::cudnn_enabled is on; the own direct kernels of kernels/conv where cuDNN offers no engine
// for a geometry (and with cuDNN off). Bias add, bias gradient, group packing and zero fills are
// own kernels. conv_io's unequal before / after padding is given to cuDNN as pre / post padding;
// where no engine takes it, the input is zero-padded into a workspace and run unpadded (a copy).
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/buffer.h"
#include "runtime/conv_geometry.h"

namespace tlrt {

// conv_fwd (transposed = false: kernel (outC, inC, k...)) or convtranspose_fwd (transposed: kernel
// (inC, outC, k...)); g from conv_geometry with the matching ConvKind. Output (outC, g.out...).
std::unique_ptr<Buffer> conv_forward(const Buffer& input, const Buffer& kernel, const Buffer& bias,
                                     const ConvGeometry& g, uint64_t in_channels,
                                     uint64_t out_channels, bool transposed, const char* op);

struct ConvGradients {
  std::unique_ptr<Buffer> kernel, bias, input;  // (dKernel, dBias, dInput)
};

// conv_bwd / convtranspose_bwd: gradient (outC, g.out...). Empty dY, input or kernel: dKernel and
// dInput zeros, dBias = sum of dY per channel (zeros when dY is empty).
ConvGradients conv_backward(const Buffer& input, const Buffer& kernel, const Buffer& gradient,
                            const ConvGeometry& g, uint64_t in_channels, uint64_t out_channels,
                            bool transposed, const char* op);

// conv_io: output (batch, Cout, g.out...), g.out_total elements.
std::unique_ptr<Buffer> conv_io(const Buffer& input, const Buffer& kernel, const Buffer& bias,
                                const ConvIoGeometry& g, const char* op);

// How the CUDA backend ran the passes since the process started (tests and tlrt-bench).
struct ConvPathCounters {
  uint64_t cudnn_passes = 0;   // passes queued through a cuDNN plan
  uint64_t direct_passes = 0;  // passes queued on the own direct kernels
};
ConvPathCounters conv_path_counters();

}  // namespace tlrt
