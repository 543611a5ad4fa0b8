// CUDA backend of the encoded byte copies (kernels/encoded/encoded.h): device-to-device
// cudaMemcpyAsync on the given stream (the copy engine or the driver's copy kernel; either way a
// byte copy at any alignment and length), nothing queued for an empty part.
#include <cuda_runtime.h>

#include "kernels/common/launch.cuh"
#include "kernels/encoded/encoded.h"

namespace tlrt::kernels {
namespace {

void copy_bytes(void* dst, const void* src, uint64_t bytes, CUstream_st* stream, const char* op) {
  if (bytes == 0) return;
  check_cuda(
      cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice, stream), op,
      "cudaMemcpyAsync device to device");
}

}  // namespace

void encoded_concat_cuda(const void* a, uint64_t a_bytes, const void* b, uint64_t b_bytes,
                         void* out, CUstream_st* stream) {
  auto* dst = static_cast<unsigned char*>(out);
  copy_bytes(dst, a, a_bytes, stream, "concat1d");
  copy_bytes(dst + a_bytes, b, b_bytes, stream, "concat1d");
}

void encoded_slice_cuda(const void* x, uint64_t offset, uint64_t bytes, void* out,
                        CUstream_st* stream) {
  copy_bytes(out, static_cast<const unsigned char*>(x) + offset, bytes, stream, "slice1d");
}

}  // namespace tlrt::kernels
