// Parity cases of generated-kernel runs (SPEC-runtime 10): sources in the generator's native
// dialect run through the runtime core (run_generated) on the subject backend (NVRTC on the GPU)
// and on the reference backend (the same source compiled by the host C++ compiler). Each intrinsic
// is one IEEE rounding on both and neither contracts, so the results must be equal bit for bit
// (NaN against NaN equal). Cases:
//   * kernel_run_buffer, float32: (x + y) * c with two checked reads (the bench's kernel), and an
//     8-term counted loop of squares (ordered accumulation), on --n random values with every
//     special value in front;
//   * kernel_run_bytes, float64: (x * y + c) / y - x through the double intrinsics.
// The oracle (without a GPU, or with --oracle) evaluates the same expression in plain C++ with one
// rounding per operation (volatile temporaries, so nothing fuses) and must match bit for bit.
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/random/splitmix.h"
#include "runtime/kernel_run.h"
#include "tools/parity/parity_case.h"

namespace tlrt::parity {
namespace {

using tlrt::random::splitmix64_finalize;

std::string signature(const char* s, size_t inputs) {
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

std::string checked_read(const char* s, size_t k, const std::string& at, const std::string& var) {
  const std::string K = std::to_string(k);
  return "if (" + at + " >= size" + K + ") {\nif (atomicCAS(error, 0ULL, 1ULL) == 0ULL) {\n" +
         "error[1] = " + K + "ULL;\nerror[2] = " + at + ";\nerror[3] = size" + K + ";\n}\n" +
         "return;\n}\n" + s + " " + var + " = input" + K + "[" + at + "];\n";
}

enum class Kernel { add_mul, square_loop, f64_mix };

constexpr float kScale = 0.75f;
constexpr double kOffset = 0.1;

std::string source_of(Kernel k) {
  switch (k) {
    case Kernel::add_mul:
      return signature("float", 2) + checked_read("float", 0, "index", "v0") +
             checked_read("float", 1, "index", "v1") +
             "float v2 = __fadd_rn(v0, v1);\nfloat v3 = __fmul_rn(v2, __uint_as_float(" +
             "1061158912U));\noutput[index] = v3;\n}\n";  // 0.75f
    case Kernel::square_loop:
      return signature("float", 1) + "float v1 = __uint_as_float(0U);\n" +
             "for (unsigned long long v2 = 0ULL; v2 < 8ULL; ++v2) {\n" +
             "unsigned long long v3 = index * 8ULL + v2;\n" + checked_read("float", 0, "v3", "v4") +
             "v1 = __fadd_rn(v1, __fmul_rn(v4, v4));\n}\noutput[index] = v1;\n}\n";
    case Kernel::f64_mix: {
      uint64_t bits;
      std::memcpy(&bits, &kOffset, 8);
      return signature("double", 2) + checked_read("double", 0, "index", "v0") +
             checked_read("double", 1, "index", "v1") +
             "double v2 = __dmul_rn(v0, v1);\ndouble v3 = __dadd_rn(v2, "
             "__longlong_as_double((long long)" +
             std::to_string(bits) +
             "ULL));\ndouble v4 = __ddiv_rn(v3, v1);\ndouble v5 = __dsub_rn(v4, v0);\n"
             "output[index] = v5;\n}\n";
    }
  }
  return {};
}

const char* op_of(Kernel k) {
  return k == Kernel::f64_mix ? "kernel_run_bytes" : "kernel_run_buffer";
}

class KernelCase final : public ComparedCase {
 public:
  KernelCase(Kernel kernel, uint64_t n) : kernel_(kernel), n_(n) {}
  std::string op() const override { return op_of(kernel_); }
  std::string label() const override {
    return kernel_ == Kernel::add_mul       ? "kernel_run_buffer [add+mul]"
           : kernel_ == Kernel::square_loop ? "kernel_run_buffer [loop of 8 squares]"
                                            : "kernel_run_bytes [f64 mul add div sub]";
  }
  Dtype dtype() const override { return kernel_ == Kernel::f64_mix ? Dtype::f64 : Dtype::f32; }
  std::string shape() const override { return "n = " + std::to_string(n_); }
  Bound bound() const override { return Bound::bit_exact(); }
  std::string oracle_name() const override { return "host C++, one rounding per operation"; }
  std::string oracle_label() const override { return "staged host evaluation"; }

  void make_inputs(uint64_t seed) override {
    const Dtype d = dtype();
    const uint64_t inputs = kernel_ == Kernel::square_loop ? 1 : 2;
    const uint64_t len = kernel_ == Kernel::square_loop ? 8 * n_ : n_;
    in_.assign(inputs, HostArray(d, len));
    for (uint64_t k = 0; k < inputs; ++k) {
      for (uint64_t i = 0; i < len; ++i) {
        const uint64_t r = splitmix64_finalize(seed * 31 + k * 0x9E3779B97F4A7C15ull + i);
        if (d == Dtype::f32) {
          const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -3.4e38f, 1.0f};
          float v;
          if (i < 8 * 8) {
            v = specials[(i + k * 3) % 8];
          } else {
            const uint32_t u = static_cast<uint32_t>(r >> 32);
            std::memcpy(&v, &u, 4);
          }
          in_[k].as<float>()[i] = v;
        } else {
          double v;
          std::memcpy(&v, &r, 8);
          if (i < 6) v = (i % 2 == 0 ? 0.0 : -0.0);
          in_[k].as<double>()[i] = v;
        }
      }
    }
  }

  HostArrays run(Backend backend) override {
    const Dtype d = dtype();
    const uint64_t width = d == Dtype::f32 ? 4 : 8;
    std::vector<std::unique_ptr<Buffer>> buffers;
    std::vector<KernelArg> args;
    for (const HostArray& a : in_) {
      buffers.push_back(upload(backend, a, 0, a.size()));
      args.push_back({buffers.back()->data(), a.size()});
    }
    std::unique_ptr<Buffer> out = Buffer::allocate(backend, d, n_, "parity");
    run_generated(backend, source_of(kernel_),
                  d == Dtype::f32 ? KernelScalar::f32 : KernelScalar::f64, width, args, out->data(),
                  n_, op().c_str());
    HostArrays result;
    result.push_back(download(*out));
    return result;
  }

  void check_oracle(const HostArrays& reference, Stats& stats) const override {
    const HostArray& got = reference[0];
    for (uint64_t i = 0; i < n_; ++i) {
      double want = 0;
      if (kernel_ == Kernel::add_mul) {
        volatile float s = in_[0].as<float>()[i] + in_[1].as<float>()[i];
        volatile float m = s * kScale;
        want = m;
      } else if (kernel_ == Kernel::square_loop) {
        volatile float acc = 0.0f;
        for (uint64_t j = 0; j < 8; ++j) {
          const float x = in_[0].as<float>()[8 * i + j];
          volatile float sq = x * x;
          acc = acc + sq;
        }
        want = acc;
      } else {
        const double x = in_[0].as<double>()[i], y = in_[1].as<double>()[i];
        volatile double p = x * y;
        volatile double s = p + kOffset;
        volatile double q = s / y;
        volatile double r = q - x;
        want = r;
      }
      const double g = got.at(i);
      if (same_bits(g, want) || (std::isnan(g) && std::isnan(want))) {
        stats.record_equal();
      } else {
        Deviation dev;
        dev.ulps = ulps_between(g, want, dtype());
        dev.within = false;
        stats.record(dev, [&] {
          return "element " + std::to_string(i) + ": got " + number(g, dtype()) + ", expected " +
                 number(want, dtype());
        });
      }
    }
  }

 private:
  Kernel kernel_;
  uint64_t n_;
  HostArrays in_;
};

CaseList make_nvrtc_cases(const Options& options) {
  CaseList cases;
  if (kernels::host_compiler().empty()) return cases;  // the reference side runs on the host
  for (Kernel k : {Kernel::add_mul, Kernel::square_loop, Kernel::f64_mix}) {
    for (uint64_t n : {uint64_t{1}, uint64_t{257}, options.n}) {
      cases.push_back(std::make_unique<KernelCase>(k, n));
    }
  }
  return cases;
}

const FamilyRegistration kNvrtcFamily("nvrtc", &make_nvrtc_cases);

}  // namespace
}  // namespace tlrt::parity
