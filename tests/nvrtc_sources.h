// Generated-kernel sources in the Lean generator's dialects (SPEC-runtime 10.7), for the kernel-run
// suites: the fixed entry text, checked reads that fill the error record, bit-pattern literals.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace nvrtc_sources {

// The entry point for `inputs` inputs of scalar type s, through the output guard.
inline std::string signature(const char* s, size_t inputs) {
  std::string t = "extern \"C\" __global__ void torchlean_kernel(";
  for (size_t k = 0; k < inputs; ++k) {
    t += std::string("const ") + s + "* input" + std::to_string(k) + ", unsigned long long size" +
         std::to_string(k) + ", ";
  }
  t += std::string(s) + "* output, unsigned long long* error, unsigned long long count) {\n";
  t += "unsigned long long index = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n";
  t += "if (index >= count) return;\n";
  return t;
}

// A checked read of input k at the index variable `at` into a new variable `var` of type s.
inline std::string read(const char* s, size_t k, const std::string& at, const std::string& var) {
  const std::string K = std::to_string(k);
  return "if (" + at + " >= size" + K + ") {\nif (atomicCAS(error, 0ULL, 1ULL) == 0ULL) {\n" +
         "error[1] = " + K + "ULL;\nerror[2] = " + at + ";\nerror[3] = size" + K + ";\n}\n" +
         "return;\n}\n" + s + " " + var + " = input" + K + "[" + at + "];\n";
}

inline std::string finish(const std::string& result) {
  return "output[index] = " + result + ";\n}\n";
}

inline std::string f32_literal(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return "__uint_as_float(" + std::to_string(u) + "U)";
}

inline std::string f64_literal(double v) {
  uint64_t u;
  std::memcpy(&u, &v, 8);
  return "__longlong_as_double((long long)" + std::to_string(u) + "ULL)";
}

// (input0[i] + input1[i]) * c: two checked reads, one add, one multiply.
inline std::string add_mul_source(float c) {
  return signature("float", 2) + read("float", 0, "index", "v0") + read("float", 1, "index", "v1") +
         "float v2 = __fadd_rn(v0, v1);\nfloat v3 = __fmul_rn(v2, " + f32_literal(c) + ");\n" +
         finish("v3");
}

// The configured dialect's head: the header, the word type and the four operator functions.
inline std::string configured_head(int e, int f, long long bias, int encoding) {
  std::string t = "#include \"torchlean_binary.cuh\"\n";
  t += "using scalar = TLBinary<" + std::to_string(e) + ", " + std::to_string(f) + ", " +
       std::to_string(bias) + "LL, " + std::to_string(encoding) + ">;\n";
  t += "__device__ scalar tl_add(scalar x, scalar y) { return x + y; }\n";
  t += "__device__ scalar tl_sub(scalar x, scalar y) { return x - y; }\n";
  t += "__device__ scalar tl_mul(scalar x, scalar y) { return x * y; }\n";
  t += "__device__ scalar tl_div(scalar x, scalar y) { return x / y; }\n";
  return t;
}

}  // namespace nvrtc_sources
