// Function qualifiers for code compiled both by nvcc (device and host) and by the host compiler
// alone (the reference backend): the seeded random stream, shared formulas.
#pragma once

#if defined(__CUDACC__)
#define TLRT_HOST_DEVICE __host__ __device__ __forceinline__
#define TLRT_DEVICE_INLINE __device__ __forceinline__
#else
#define TLRT_HOST_DEVICE inline
#endif
