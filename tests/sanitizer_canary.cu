// Planted bugs, one per compute-sanitizer tool, so the GPU loop can prove that each tool run over
// tlrt's gpu binaries is able to fail: scripts/gpu-check.sh runs this binary under each tool with
// the matching mode and requires the tool to report an error. Without a tool every mode runs
// quietly to completion (exit 0), so the bugs are visible only to the checkers.
//
//   sanitizer_canary memcheck | leak | racecheck | initcheck | synccheck
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

namespace {

// One element past the end of an exact-size allocation.
__global__ void write_past_end(float* p, int n) {
  if (threadIdx.x == 0 && blockIdx.x == 0) p[n] = 1.0f;
}

// Each thread writes its shared slot and reads its neighbour's with no barrier between: across a
// warp boundary the read races with the write (volatile keeps both accesses in the program).
__global__ void shared_race(int* out) {
  __shared__ volatile int slots[256];
  slots[threadIdx.x] = static_cast<int>(threadIdx.x);
  out[threadIdx.x] = slots[(threadIdx.x + 1) % blockDim.x];
}

// Reads device memory that nothing ever wrote.
__global__ void read_uninitialised(const float* src, float* dst, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) dst[i] = src[i] + 1.0f;
}

// Two misuses of barriers: lanes 0-15 call __syncwarp with a mask that leaves them out, and only
// the first warp of the block reaches __syncthreads.
__global__ void misused_barriers(int* out) {
  __syncwarp(0xffff0000u);
  if (threadIdx.x < 32) __syncthreads();
  out[threadIdx.x] = 1;
}

int finish(const char* mode) {
  const cudaError_t st = cudaDeviceSynchronize();
  std::printf("sanitizer_canary %s: %s\n", mode, cudaGetErrorString(st));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("sanitizer_canary: no CUDA device\n");
    return 2;
  }
  constexpr int n = 1024;
  if (std::strcmp(mode, "memcheck") == 0) {
    float* p = nullptr;
    cudaMalloc(&p, n * sizeof(float));
    write_past_end<<<1, 32>>>(p, n);
    finish(mode);
    cudaFree(p);
    return 0;
  }
  if (std::strcmp(mode, "leak") == 0) {
    float* p = nullptr;
    cudaMalloc(&p, n * sizeof(float));  // never freed
    return finish(mode);
  }
  if (std::strcmp(mode, "racecheck") == 0) {
    int* out = nullptr;
    cudaMalloc(&out, 256 * sizeof(int));
    shared_race<<<1, 256>>>(out);
    finish(mode);
    cudaFree(out);
    return 0;
  }
  if (std::strcmp(mode, "initcheck") == 0) {
    float *src = nullptr, *dst = nullptr;
    cudaMalloc(&src, n * sizeof(float));
    cudaMalloc(&dst, n * sizeof(float));
    read_uninitialised<<<n / 256, 256>>>(src, dst, n);
    finish(mode);
    cudaFree(src);
    cudaFree(dst);
    return 0;
  }
  if (std::strcmp(mode, "synccheck") == 0) {
    int* out = nullptr;
    cudaMalloc(&out, 64 * sizeof(int));
    misused_barriers<<<1, 64>>>(out);
    finish(mode);
    cudaFree(out);
    return 0;
  }
  std::fprintf(stderr, "usage: sanitizer_canary memcheck|leak|racecheck|initcheck|synccheck\n");
  return 2;
}
