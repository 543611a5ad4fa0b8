// Seeded random constructors (SPEC-runtime section 7): uniform, normal (Box-Muller, cosine branch)
// and Bernoulli masks, for float and double. The CUDA launchers queue one fused kernel on `stream`;
// the reference functions fill host memory. Both compute element i from (key, i) alone.
#pragma once

#include <cstdint>

struct CUstream_st;

namespace tlrt::kernels {

// Reference backend (plain loops; kernels/random/random_ref.cpp).
template <class T>
void rand_uniform_ref(T* out, uint64_t n, uint64_t key);
// mean and deviation are already rounded to T by the caller.
template <class T>
void rand_normal_ref(T* out, uint64_t n, T mean, T deviation, uint64_t key);
// p is already rounded to T by the caller.
template <class T>
void bernoulli_mask_ref(T* out, uint64_t n, T p, uint64_t key);

// CUDA backend (kernels/random/random.cu). Asynchronous on `stream`.
template <class T>
void rand_uniform_cuda(T* out, uint64_t n, uint64_t key, CUstream_st* stream);
template <class T>
void rand_normal_cuda(T* out, uint64_t n, T mean, T deviation, uint64_t key, CUstream_st* stream);
template <class T>
void bernoulli_mask_cuda(T* out, uint64_t n, T p, uint64_t key, CUstream_st* stream);

}  // namespace tlrt::kernels
