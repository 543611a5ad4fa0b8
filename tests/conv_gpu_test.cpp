// The CUDA backend of the convolution symbols against the reference backend, in one process: every
// symbol on random geometries (rank 1-3, stride > kernel, padding = kernel/2, kernel larger than
// the input, conv_io with groups, dilation, asymmetric padding and batch) within the bound of
// docs/NUMERICS.md ("Convolution"): |cuda - ref| <= 2 gamma_{n+1} * (the same convolution of the
// absolute values), n the terms per result; ten runs under the deterministic setting giving
// identical bits; float32 single products exact (no TF32); a second identical call creating no
// plan (the plan cache); and both paths (cuDNN with the cudnn_enabled setting on, the own direct
// kernels with it off). Without a device every test skips with a visible reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/random/splitmix.h"
#include "runtime/context.h"
#include "runtime/conv_dispatch.h"
#include "runtime/conv_geometry.h"
#include "runtime/plan_cache.h"
#include "runtime/settings.h"
#include "runtime/transfer.h"
#include "tests/support/cuda_suite.h"

namespace {

using tlrt::Backend;
using tlrt::Buffer;
using tlrt::Dims;
using tlrt::Dtype;

class ConvGpu : public gpu_test::CudaSuite<> {
 protected:
  ConvGpu() : CudaSuite("GPU checks of convolution") {}
  void TearDown() override {
    tlrt::set_setting(static_cast<uint32_t>(tlrt::Setting::deterministic), 0);
    tlrt::set_setting(static_cast<uint32_t>(tlrt::Setting::cudnn_enabled), 1);
  }
};

template <class T>
std::vector<T> random_values(uint64_t count, uint64_t key) {
  std::vector<T> v(count);
  for (uint64_t i = 0; i < count; ++i) {
    const double u =
        static_cast<double>(tlrt::random::splitmix64_finalize(key + i) >> 11) * 0x1p-53;
    v[i] = static_cast<T>(2 * u - 1);
  }
  return v;
}

template <class T>
std::unique_ptr<Buffer> upload(Backend backend, const std::vector<T>& v) {
  constexpr Dtype dt = sizeof(T) == 4 ? Dtype::f32 : Dtype::f64;
  return tlrt::upload_words(backend, dt, reinterpret_cast<const uint8_t*>(v.data()), v.size(), dt,
                            "conv_gpu_test");
}

template <class T>
std::vector<T> download(const Buffer& b) {
  constexpr Dtype dt = sizeof(T) == 4 ? Dtype::f32 : Dtype::f64;
  std::vector<T> v(b.size());
  tlrt::download_words(b, reinterpret_cast<uint8_t*>(v.data()), dt, "conv_gpu_test");
  return v;
}

template <class T>
std::vector<T> absolute(std::vector<T> v) {
  for (T& e : v) e = std::fabs(e);
  return v;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

double gamma_of(uint64_t n, double u) {
  const double nu = static_cast<double>(n) * u;
  return nu / (1 - nu);
}

struct Fixed {
  Dims in, k, s, p;
  uint64_t cin, cout;
};

uint64_t volume(const Dims& d) {
  uint64_t v = 1;
  for (uint64_t e : d) v *= e;
  return v;
}

// The results of one symbol on one backend (forward: one part; backward: three).
using Parts = std::vector<std::unique_ptr<Buffer>>;

template <class T>
Parts run_fixed(Backend backend, const Fixed& f, bool transposed, bool backward,
                const std::vector<T>& x, const std::vector<T>& w, const std::vector<T>& other) {
  const tlrt::ConvGeometry g = tlrt::conv_geometry(
      f.in, f.k, f.s, f.p, transposed ? tlrt::ConvKind::transposed : tlrt::ConvKind::convolution,
      "test");
  auto bx = upload(backend, x), bw = upload(backend, w), bo = upload(backend, other);
  Parts r;
  if (!backward) {
    r.push_back(tlrt::conv_forward(*bx, *bw, *bo, g, f.cin, f.cout, transposed, "test"));
  } else {
    tlrt::ConvGradients gr =
        tlrt::conv_backward(*bx, *bw, *bo, g, f.cin, f.cout, transposed, "test");
    r.push_back(std::move(gr.kernel));
    r.push_back(std::move(gr.bias));
    r.push_back(std::move(gr.input));
  }
  return r;
}

template <class T>
void check_fixed(const Fixed& f, bool transposed, bool backward, uint64_t key) {
  const tlrt::ConvGeometry g = tlrt::conv_geometry(
      f.in, f.k, f.s, f.p, transposed ? tlrt::ConvKind::transposed : tlrt::ConvKind::convolution,
      "test");
  const auto x = random_values<T>(f.cin * g.in_volume, key);
  const auto w = random_values<T>(f.cin * f.cout * g.kernel_volume, key + 1000003);
  const auto o = random_values<T>(backward ? f.cout * g.out_volume : f.cout, key + 2000003);
  const Parts cuda = run_fixed<T>(Backend::cuda, f, transposed, backward, x, w, o);
  const Parts ref = run_fixed<T>(Backend::reference, f, transposed, backward, x, w, o);
  const Parts mag = run_fixed<T>(Backend::reference, f, transposed, backward, absolute(x),
                                 absolute(w), absolute(o));
  const double u = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
  const uint64_t n = (f.cin + f.cout) * g.kernel_volume + g.out_volume + g.in_volume + 2;
  for (size_t part = 0; part < cuda.size(); ++part) {
    const auto a = download<T>(*cuda[part]), b = download<T>(*ref[part]),
               m = download<T>(*mag[part]);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const double bound = 2 * gamma_of(n, u) * m[i] + u * std::fabs(double(b[i]));
      ASSERT_LE(std::fabs(double(a[i]) - double(b[i])), bound)
          << "part " << part << " index " << i << (transposed ? " transposed" : "")
          << (backward ? " backward" : " forward") << " rank " << f.in.size();
    }
  }
  // Ten runs under the deterministic setting: identical bits.
  tlrt::set_setting(static_cast<uint32_t>(tlrt::Setting::deterministic), 1);
  std::vector<std::vector<T>> first;
  for (int run = 0; run < 10; ++run) {
    const Parts again = run_fixed<T>(Backend::cuda, f, transposed, backward, x, w, o);
    for (size_t part = 0; part < again.size(); ++part) {
      const auto a = download<T>(*again[part]);
      if (run == 0) {
        first.push_back(a);
      } else {
        ASSERT_TRUE(same_bits(a, first[part])) << "run " << run << " part " << part;
      }
    }
  }
  tlrt::set_setting(static_cast<uint32_t>(tlrt::Setting::deterministic), 0);
}

const std::vector<Fixed>& geometries() {
  static const std::vector<Fixed> list{{{17}, {3}, {1}, {1}, 3, 5},
                                       {{20}, {2}, {5}, {0}, 2, 3},
                                       {{3}, {7}, {1}, {3}, 2, 2},
                                       {{12, 11}, {3, 3}, {1, 1}, {1, 1}, 4, 6},
                                       {{9, 10}, {2, 4}, {3, 2}, {1, 2}, 3, 2},
                                       {{5, 6, 4}, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, 2, 3},
                                       {{4, 4, 4}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, 8, 4},
                                       {{32, 32}, {3, 3}, {1, 1}, {1, 1}, 16, 32}};
  return list;
}

TEST_F(ConvGpu, FixedLayoutSymbolsMatchTheReference) {
  uint64_t key = 1;
  for (int path = 0; path < 2; ++path) {
    tlrt::set_setting(static_cast<uint32_t>(tlrt::Setting::cudnn_enabled), path == 0 ? 1 : 0);
    for (const Fixed& f : geometries()) {
      for (int t = 0; t < 2; ++t) {
        for (int bwd = 0; bwd < 2; ++bwd) {
          check_fixed<float>(f, t == 1, bwd == 1, key += 7919);
          check_fixed<double>(f, t == 1, bwd == 1, key += 7919);
        }
      }
    }
  }
  const tlrt::ConvPathCounters c = tlrt::conv_path_counters();
  RecordProperty("cudnn_passes", std::to_string(c.cudnn_passes));
  RecordProperty("direct_passes", std::to_string(c.direct_passes));
  std::printf("conv passes: %llu on cuDNN, %llu on the direct kernels\n",
              static_cast<unsigned long long>(c.cudnn_passes),
              static_cast<unsigned long long>(c.direct_passes));
}

template <class T>
void check_io(const Dims& input_dims, const Dims& kernel_dims, const Dims& stride,
              const Dims& before, const Dims& after, const Dims& dil, uint32_t groups,
              uint64_t key) {
  const tlrt::ConvIoGeometry g =
      tlrt::conv_io_geometry(input_dims, kernel_dims, stride, before, after, dil, groups, "test");
  const auto x = random_values<T>(volume(input_dims), key);
  const auto w = random_values<T>(volume(kernel_dims), key + 1000003);
  const auto b = random_values<T>(g.cout, key + 2000003);
  auto run = [&](Backend backend, const std::vector<T>& xv, const std::vector<T>& wv,
                 const std::vector<T>& bv) {
    auto bx = upload(backend, xv), bw = upload(backend, wv), bb = upload(backend, bv);
    return download<T>(*tlrt::conv_io(*bx, *bw, *bb, g, "test"));
  };
  const auto a = run(Backend::cuda, x, w, b);
  const auto r = run(Backend::reference, x, w, b);
  const auto m = run(Backend::reference, absolute(x), absolute(w), absolute(b));
  const double u = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
  const uint64_t n = g.cin / groups * volume(g.kernel) + 2;
  ASSERT_EQ(a.size(), r.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_LE(std::fabs(double(a[i]) - double(r[i])),
              2 * gamma_of(n, u) * m[i] + u * std::fabs(double(r[i])))
        << i;
  }
  tlrt::set_setting(static_cast<uint32_t>(tlrt::Setting::deterministic), 1);
  const auto first = run(Backend::cuda, x, w, b);
  for (int k = 1; k < 10; ++k) ASSERT_TRUE(same_bits(run(Backend::cuda, x, w, b), first)) << k;
  tlrt::set_setting(static_cast<uint32_t>(tlrt::Setting::deterministic), 0);
}

TEST_F(ConvGpu, ConvIoMatchesTheReference) {
  for (int path = 0; path < 2; ++path) {
    tlrt::set_setting(static_cast<uint32_t>(tlrt::Setting::cudnn_enabled), path == 0 ? 1 : 0);
    check_io<float>({2, 8, 13}, {6, 8, 3}, {1}, {1}, {1}, {1}, 2, 11);
    check_io<float>({3, 4, 10, 9}, {8, 4, 3, 2}, {2, 1}, {2, 0}, {0, 3}, {1, 2}, 4, 12);
    check_io<double>({2, 6, 5, 6, 7}, {3, 6, 2, 3, 2}, {1, 2, 1}, {1, 0, 1}, {0, 1, 1}, {2, 1, 1},
                     3, 13);
    check_io<float>({4, 16, 28, 28}, {32, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, 14);
    check_io<double>({2, 3, 4, 9}, {6, 4, 3}, {2}, {0}, {2}, {3}, 1, 15);
  }
}

// One input channel and a 1 x 1 kernel: every result is the single product fl(w x) (bias 0), which
// float32 gives exactly; a TF32 engine (inputs rounded to 10-bit mantissas) would not. Run on the
// cuDNN path (default settings: TF32 off) for the fixed-layout forward and conv_io.
TEST_F(ConvGpu, Float32IsNotRoundedToTf32) {
  const Fixed f{{64, 64}, {1, 1}, {1, 1}, {0, 0}, 1, 8};
  const auto x = random_values<float>(64 * 64, 21), w = random_values<float>(8, 22);
  const std::vector<float> b(8, 0.0f);
  const Parts cuda = run_fixed<float>(Backend::cuda, f, false, false, x, w, b);
  const Parts ref = run_fixed<float>(Backend::reference, f, false, false, x, w, b);
  EXPECT_TRUE(same_bits(download<float>(*cuda[0]), download<float>(*ref[0])));
  const tlrt::ConvIoGeometry g = tlrt::conv_io_geometry({4, 1, 32, 32}, {8, 1, 1, 1}, {1, 1},
                                                        {0, 0}, {0, 0}, {1, 1}, 1, "test");
  const auto xi = random_values<float>(4 * 32 * 32, 23);
  auto run = [&](Backend backend) {
    auto bx = upload(backend, xi), bw = upload(backend, w), bb = upload(backend, b);
    return download<float>(*tlrt::conv_io(*bx, *bw, *bb, g, "test"));
  };
  EXPECT_TRUE(same_bits(run(Backend::cuda), run(Backend::reference)));
}

TEST_F(ConvGpu, SecondIdenticalCallCreatesNoPlan) {
  const Fixed f{{24, 24}, {3, 3}, {1, 1}, {1, 1}, 8, 16};
  const auto x = random_values<float>(8 * 24 * 24, 5), w = random_values<float>(16 * 8 * 9, 6),
             b = random_values<float>(16, 7), dy = random_values<float>(16 * 24 * 24, 8);
  run_fixed<float>(Backend::cuda, f, false, false, x, w, b);
  run_fixed<float>(Backend::cuda, f, false, true, x, w, dy);
  const tlrt::PlanCacheCounters before = tlrt::plan_cache_counters();
  run_fixed<float>(Backend::cuda, f, false, false, x, w, b);
  run_fixed<float>(Backend::cuda, f, false, true, x, w, dy);
  const tlrt::PlanCacheCounters after = tlrt::plan_cache_counters();
  EXPECT_EQ(after.creates, before.creates);
  EXPECT_EQ(after.misses, before.misses);
}

}  // namespace
