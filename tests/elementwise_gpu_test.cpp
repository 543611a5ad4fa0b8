// The CUDA backend of the elementwise family against the reference backend, in one process: every
// op of elementwise_ops.def in both dtypes, on the parity inputs of tlrt-parity (a block of
// special values, then values drawn for the op) at sizes with vector tails (4097, 2^20 + 3), with
// every scalar set of the op. Bit-exact ops must give equal bits (NaN against NaN equal);
// toleranced ops stay within the op's ULP bound, measured at the reference's error scale. Ten runs
// on the GPU give identical bits. Operands one element past an aligned base take the kernels'
// scalar path, with guard elements around the output. Without a device every test skips with a
// visible reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/elementwise/elementwise.h"
#include "runtime/construct.h"
#include "runtime/context.h"
#include "runtime/elementwise_dispatch.h"
#include "runtime/transfer.h"
#include "tests/support/cuda_suite.h"
#include "tools/parity/case_key.h"
#include "tools/parity/elementwise_inputs.h"
#include "tools/parity/ulp.h"

#if TLRT_HAVE_CUDA
#include "runtime/cuda_device.h"
#endif

namespace {

using tlrt::Backend;
using tlrt::Buffer;
using tlrt::Dtype;
using tlrt::kernels::ElementwiseInfo;
using tlrt::kernels::ElementwiseOp;
using namespace tlrt::parity;

constexpr uint64_t kSeed = 0x5EED0E1E3E47ull;
constexpr uint64_t kSizes[] = {1, 3, 4097, (uint64_t{1} << 20) + 3};
constexpr uint64_t kLarge = (uint64_t{1} << 20) + 3;
constexpr int kRepeats = 10;

template <class T>
constexpr Dtype dtype_of() {
  return sizeof(T) == 4 ? Dtype::f32 : Dtype::f64;
}

template <class T>
bool identical_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Inputs of the parity cases for op: the special block, then random values, n elements each.
template <class T>
std::vector<std::vector<T>> inputs_for(ElementwiseOp op, uint64_t n, const double* scalars) {
  const ElementwiseInfo& info = tlrt::kernels::elementwise_info(op);
  std::vector<std::vector<T>> in(info.inputs, std::vector<T>(n));
  std::vector<T*> ptrs;
  for (auto& v : in) ptrs.push_back(v.data());
  fill_inputs<T>(op, case_key(kSeed, info.name, sizeof(T) == 4), scalars, ptrs.data(), 0, n);
  return in;
}

template <class T>
std::vector<std::vector<T>> run_on(Backend backend, ElementwiseOp op,
                                   const std::vector<std::vector<T>>& in, const double* scalars) {
  constexpr Dtype dt = dtype_of<T>();
  const uint64_t n = in[0].size();
  std::vector<std::unique_ptr<Buffer>> owned;
  const Buffer* operands[tlrt::kernels::kMaxElementwiseInputs] = {};
  for (size_t k = 0; k < in.size(); ++k) {
    owned.push_back(tlrt::upload_words(backend, dt, reinterpret_cast<const uint8_t*>(in[k].data()),
                                       n, dt, "elementwise_gpu_test"));
    operands[k] = owned.back().get();
  }
  const auto outs = tlrt::run_elementwise(op, operands, scalars);
  std::vector<std::vector<T>> result;
  for (const auto& o : outs) {
    EXPECT_EQ(o->backend(), backend);
    EXPECT_EQ(o->size(), n);
    result.emplace_back(n);
    tlrt::download_words(*o, reinterpret_cast<uint8_t*>(result.back().data()), dt,
                         "elementwise_gpu_test");
  }
  return result;
}

template <class T>
std::string show(T v) {
  std::ostringstream s;
  s.precision(sizeof(T) == 4 ? 9 : 17);
  s << v;
  return s.str();
}

// Compares got (GPU) with want (reference) element by element within the op's bound; reports at
// most a few offending elements with their inputs.
template <class T>
void expect_within_bound(ElementwiseOp op, const std::vector<std::vector<T>>& in,
                         const std::vector<double>& scalars, const std::vector<std::vector<T>>& got,
                         const std::vector<std::vector<T>>& want, const std::string& what) {
  const ElementwiseInfo& info = tlrt::kernels::elementwise_info(op);
  const double bound = sizeof(T) == 4 ? info.ulp_f32 : info.ulp_f64;
  T s[tlrt::kernels::kMaxElementwiseScalars] = {};
  for (int k = 0; k < info.scalars; ++k) s[k] = static_cast<T>(scalars[k]);
  int reported = 0;
  uint64_t bad = 0;
  for (int o = 0; o < info.outputs; ++o) {
    for (uint64_t i = 0; i < got[o].size(); ++i) {
      const T g = got[o][i], w = want[o][i];
      if (same_bits(g, w)) continue;
      bool ok = false;
      double ulps = INFINITY;
      if (bound > 0) {
        T x[tlrt::kernels::kMaxElementwiseInputs];
        for (int k = 0; k < info.inputs; ++k) x[k] = in[k][i];
        const double scale = tlrt::kernels::elementwise_error_scale<T>(op, x, s, w);
        // ULPs at the reference's error scale where it exceeds the result (cancelling sums),
        // else on the ordered integer line.
        const bool at_scale = std::isfinite(g) && std::isfinite(w) && std::isfinite(scale) &&
                              scale > std::fabs(static_cast<double>(w));
        ulps = at_scale
                   ? std::fabs(static_cast<double>(g) - static_cast<double>(w)) / ulp_at<T>(scale)
                   : ulp_distance<T>(g, w);
        ok = ulps <= bound;
      }
      if (ok) continue;
      ++bad;
      if (reported++ < 5) {
        std::string inputs;
        for (int k = 0; k < info.inputs; ++k) inputs += (k ? ", " : "") + show(in[k][i]);
        ADD_FAILURE() << what << ": output " << o << " element " << i << " of " << got[o].size()
                      << ", inputs (" << inputs << "): GPU " << show(g) << ", reference " << show(w)
                      << (bound > 0 ? ", " + std::to_string(ulps) + " ULP" : "") << " (bound "
                      << (bound > 0 ? std::to_string(bound) + " ULP" : "bit-exact") << ")";
      }
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": elements outside the bound";
}

struct Case {
  ElementwiseOp op;
  bool f32;
};

std::vector<Case> all_cases() {
  int count = 0;
  const ElementwiseOp* ops = tlrt::kernels::elementwise_ops(&count);
  std::vector<Case> cases;
  for (int k = 0; k < count; ++k) {
    cases.push_back({ops[k], true});
    cases.push_back({ops[k], false});
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<Case>& p) {
  return std::string(tlrt::kernels::elementwise_info(p.param.op).name) +
         (p.param.f32 ? "_float32" : "_float64");
}

class ElementwiseGpu : public gpu_test::CudaSuite<::testing::TestWithParam<Case>> {
 protected:
  ElementwiseGpu() : CudaSuite("GPU parity of the elementwise family") {}

  template <class T>
  void parity() {
    const ElementwiseOp op = GetParam().op;
    const char* name = tlrt::kernels::elementwise_info(op).name;
    for (const std::vector<double>& set : scalar_sets(op)) {
      for (uint64_t n : kSizes) {
        const auto in = inputs_for<T>(op, n, set.data());
        const auto got = run_on<T>(Backend::cuda, op, in, set.data());
        const auto want = run_on<T>(Backend::reference, op, in, set.data());
        std::ostringstream what;
        what << name << " n = " << n << " scalars (";
        for (size_t k = 0; k < set.size(); ++k) what << (k ? ", " : "") << set[k];
        what << ")";
        expect_within_bound<T>(op, in, set, got, want, what.str());
      }
    }
  }

  template <class T>
  void repeatable() {
    const ElementwiseOp op = GetParam().op;
    const std::vector<double> set = scalar_sets(op)[0];
    const auto in = inputs_for<T>(op, kLarge, set.data());
    const auto first = run_on<T>(Backend::cuda, op, in, set.data());
    for (int r = 1; r < kRepeats; ++r) {
      const auto again = run_on<T>(Backend::cuda, op, in, set.data());
      for (size_t o = 0; o < first.size(); ++o) {
        uint64_t differing = 0;
        for (uint64_t i = 0; i < kLarge; ++i)
          differing += !identical_bits(first[o][i], again[o][i]);
        EXPECT_EQ(differing, 0u) << "run " << r << ", output " << o;
      }
    }
  }

  // Operands one element past the allocation's base (no 16-byte accesses possible) through the
  // CUDA launcher directly, with a guard element on each side of the output.
  template <class T>
  void misaligned() {
#if TLRT_HAVE_CUDA
    constexpr Dtype dt = dtype_of<T>();
    const ElementwiseOp op = GetParam().op;
    const ElementwiseInfo& info = tlrt::kernels::elementwise_info(op);
    const std::vector<double> set = scalar_sets(op)[0];
    T s[tlrt::kernels::kMaxElementwiseScalars] = {};
    for (int k = 0; k < info.scalars; ++k) s[k] = static_cast<T>(set[k]);
    for (uint64_t n : {uint64_t{1}, uint64_t { 4097 }}) {
      const auto in = inputs_for<T>(op, n, set.data());
      std::vector<std::unique_ptr<Buffer>> keep;
      const T* dev_in[tlrt::kernels::kMaxElementwiseInputs] = {};
      T* dev_out[tlrt::kernels::kMaxElementwiseOutputs] = {};
      const T* host_in[tlrt::kernels::kMaxElementwiseInputs] = {};
      for (int k = 0; k < info.inputs; ++k) {
        std::vector<T> padded(n + 1, T(7));
        std::memcpy(padded.data() + 1, in[k].data(), n * sizeof(T));
        keep.push_back(tlrt::upload_words(Backend::cuda, dt,
                                          reinterpret_cast<const uint8_t*>(padded.data()), n + 1,
                                          dt, "elementwise_gpu_test"));
        dev_in[k] = keep.back()->template as<T>() + 1;
        host_in[k] = in[k].data();
      }
      std::vector<std::unique_ptr<Buffer>> outs;
      for (int o = 0; o < info.outputs; ++o) {
        outs.push_back(tlrt::make_full(Backend::cuda, dt, n + 2, 12345.0, "elementwise_gpu_test"));
        dev_out[o] = outs.back()->template as<T>() + 1;
      }
      tlrt::kernels::elementwise_cuda<T>(op, dev_in, dev_out, s, n,
                                         tlrt::cuda::stream(tlrt::selected_device()));
      std::vector<std::vector<T>> want(info.outputs, std::vector<T>(n));
      T* want_ptrs[tlrt::kernels::kMaxElementwiseOutputs] = {};
      for (int o = 0; o < info.outputs; ++o) want_ptrs[o] = want[o].data();
      tlrt::kernels::elementwise_ref<T>(op, host_in, want_ptrs, s, n);
      std::vector<std::vector<T>> got;
      for (int o = 0; o < info.outputs; ++o) {
        std::vector<T> whole(n + 2);
        tlrt::download_words(*outs[o], reinterpret_cast<uint8_t*>(whole.data()), dt,
                             "elementwise_gpu_test");
        EXPECT_EQ(whole[0], T(12345)) << "write before the output";
        EXPECT_EQ(whole[n + 1], T(12345)) << "write past the output";
        got.emplace_back(whole.begin() + 1, whole.end() - 1);
      }
      expect_within_bound<T>(op, in, set, got, want,
                             std::string(info.name) + " misaligned n = " + std::to_string(n));
    }
#else
    GTEST_SKIP() << "this build has no CUDA backend";
#endif
  }
};

TEST_P(ElementwiseGpu, MatchesTheReferenceWithinTheOpsBound) {
  if (GetParam().f32) {
    parity<float>();
  } else {
    parity<double>();
  }
}

TEST_P(ElementwiseGpu, TenRunsGiveIdenticalBits) {
  if (GetParam().f32) {
    repeatable<float>();
  } else {
    repeatable<double>();
  }
}

TEST_P(ElementwiseGpu, MisalignedOperandsTakeTheScalarPath) {
  if (GetParam().f32) {
    misaligned<float>();
  } else {
    misaligned<double>();
  }
}

INSTANTIATE_TEST_SUITE_P(EveryOp, ElementwiseGpu, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
