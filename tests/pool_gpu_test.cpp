// The pooling launchers on the GPU against the reference loops, in one process: every path of
// kernels/pool/pool.cu (the 2x2 stride-2 pair loads and stores, the compile-time 2x2 and 3x3
// plane kernels, the runtime-kernel plane kernel, the 3-D kernels, the disjoint-window backward
// with and without the zeroing memset, the gather backward and, for the shapes outside the
// smooth-max tiles, its smooth-max statistics pass; the smooth-max shared-memory tiles for 2x2 and
// 3x3 kernels at stride 1 and 2 with padding, the 16-byte 2x2 stride-2 group kernel, and the
// streaming kernels of float32 3x3 stride 1, also compared with the tiles bit for bit),
// operands at an element offset of 1 (the pair paths must step aside), NaN / +-inf / -0 inputs,
// and ten runs giving the same bits with the deterministic setting on. Max and average pooling
// are bit-exact ("equal bits or both NaN"); smooth max pooling within the bound of
// docs/NUMERICS.md ("Pooling"). Without a device every test skips with a visible reason.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/pool/pool.h"
#include "kernels/random/splitmix.h"
#include "runtime/context.h"
#include "runtime/pool_dispatch.h"
#include "runtime/settings.h"
#include "tests/support/offset_device.h"
#include "tests/support/same_bits.h"

namespace {

using tlrt::kernels::PoolGeometry;

class PoolGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (tlrt::cuda_device_count() == 0) {
      GTEST_SKIP() << "no CUDA device visible: GPU checks of the pooling family cannot run here";
    }
  }
};

template <class T>
std::vector<T> random_values(uint64_t count, uint64_t key, bool specials) {
  std::vector<T> v(count);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t h = tlrt::random::splitmix64_finalize(key + i);
    const double u = static_cast<double>(h >> 11) * 0x1p-53;
    v[i] = static_cast<T>(std::round((2 * u - 1) * 32) / 4);
    if (specials) {
      switch (h % 23) {
        case 0:
          v[i] = std::numeric_limits<T>::quiet_NaN();
          break;
        case 1:
          v[i] = std::numeric_limits<T>::infinity();
          break;
        case 2:
          v[i] = -std::numeric_limits<T>::infinity();
          break;
        case 3:
          v[i] = -T(0);
          break;
        default:
          break;
      }
    }
  }
  return v;
}

enum class Op { max_fwd, max_bwd, avg_fwd, avg_bwd, smooth_fwd, smooth_bwd };
const Op kOps[] = {Op::max_fwd, Op::max_bwd,    Op::avg_fwd,
                   Op::avg_bwd, Op::smooth_fwd, Op::smooth_bwd};

const char* name_of(Op op) {
  const char* names[] = {"maxpool_fwd", "maxpool_bwd",        "avgpool_fwd",
                         "avgpool_bwd", "smooth_maxpool_fwd", "smooth_maxpool_bwd"};
  return names[static_cast<int>(op)];
}

bool backward(Op op) {
  return op == Op::max_bwd || op == Op::avg_bwd || op == Op::smooth_bwd;
}

template <class T>
std::vector<T> run_ref(Op op, const PoolGeometry& g, const std::vector<T>& x,
                       const std::vector<T>& dy, T b) {
  std::vector<T> r((backward(op) ? g.in_volume : g.out_volume) * g.channels);
  if (r.empty()) return r;
  switch (op) {
    case Op::max_fwd:
      tlrt::kernels::maxpool_fwd_ref(x.data(), r.data(), g);
      break;
    case Op::max_bwd:
      tlrt::kernels::maxpool_bwd_ref(x.data(), dy.data(), r.data(), g);
      break;
    case Op::avg_fwd:
      tlrt::kernels::avgpool_fwd_ref(x.data(), r.data(), g);
      break;
    case Op::avg_bwd:
      tlrt::kernels::avgpool_bwd_ref(dy.data(), r.data(), g);
      break;
    case Op::smooth_fwd:
      tlrt::kernels::smooth_maxpool_fwd_ref(x.data(), b, r.data(), g);
      break;
    case Op::smooth_bwd:
      tlrt::kernels::smooth_maxpool_bwd_ref(x.data(), dy.data(), b, r.data(), g);
      break;
  }
  return r;
}

template <class T>
std::vector<T> run_cuda(Op op, const PoolGeometry& g, const std::vector<T>& x,
                        const std::vector<T>& dy, T b, uint64_t offset) {
  const uint64_t n = (backward(op) ? g.in_volume : g.out_volume) * g.channels;
  gpu_test::OffsetDevice<T> dx(x, offset), ddy(dy, offset), out(n, offset);
  void* workspace = nullptr;
  const uint64_t bytes = tlrt::kernels::smooth_maxpool_bwd_workspace_bytes(g, sizeof(T));
  if (op == Op::smooth_bwd && bytes != 0) {
    EXPECT_EQ(cudaMalloc(&workspace, bytes), cudaSuccess);
  }
  cudaStream_t s = nullptr;
  if (n != 0) {
    switch (op) {
      case Op::max_fwd:
        tlrt::kernels::maxpool_fwd_cuda(dx.data(), out.data(), g, s);
        break;
      case Op::max_bwd:
        tlrt::kernels::maxpool_bwd_cuda(dx.data(), ddy.data(), out.data(), g, s);
        break;
      case Op::avg_fwd:
        tlrt::kernels::avgpool_fwd_cuda(dx.data(), out.data(), g, s);
        break;
      case Op::avg_bwd:
        tlrt::kernels::avgpool_bwd_cuda(ddy.data(), out.data(), g, s);
        break;
      case Op::smooth_fwd:
        tlrt::kernels::smooth_maxpool_fwd_cuda(dx.data(), b, out.data(), g, s);
        break;
      case Op::smooth_bwd:
        tlrt::kernels::smooth_maxpool_bwd_cuda(dx.data(), ddy.data(), b, out.data(), workspace, g,
                                               s);
        break;
    }
  }
  std::vector<T> r = out.read();
  if (workspace != nullptr) cudaFree(workspace);
  return r;
}

template <class T>
uint64_t bits(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof v);
  return b;
}

// Exact for max and average; for smooth max the bound of docs/NUMERICS.md with mass = the largest
// sum of |dY| over the windows of one input (backward) or 1 (forward).
template <class T>
void expect_agree(Op op, const std::vector<T>& got, const std::vector<T>& want,
                  const PoolGeometry& g, double beta, double mass, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double eps = std::numeric_limits<T>::epsilon() / 2;
  const double n = static_cast<double>(g.kernel_volume);
  int reported = 0;
  for (size_t i = 0; i < got.size() && reported < 5; ++i) {
    if (test_bits::same_bits_or_nan(got[i], want[i])) continue;
    bool ok = false;
    if ((op == Op::smooth_fwd || op == Op::smooth_bwd) && std::isfinite(got[i]) &&
        std::isfinite(want[i])) {
      const double w = static_cast<double>(want[i]);
      const double allowed =
          op == Op::smooth_fwd
              ? eps * ((2 * n + 4 + 5 * std::log(n)) / std::fabs(beta) + 3 * std::fabs(w))
              : eps * ((4 * n + 12) * mass + 2 * std::fabs(w));
      ok = std::fabs(static_cast<double>(got[i]) - w) <= allowed;
    }
    if (!ok) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", reference " << want[i];
      ++reported;
    }
  }
}

PoolGeometry geometry(const std::vector<uint64_t>& in, const std::vector<uint64_t>& k,
                      const std::vector<uint64_t>& s, const std::vector<uint64_t>& p, uint32_t c) {
  tlrt::PoolArguments a;
  a.in = in;
  a.kernel = k;
  a.stride = s;
  a.padding = p;
  a.channels = c;
  return tlrt::pool_geometry(a, "pool_gpu_test");
}

std::vector<PoolGeometry> geometries() {
  return {
      geometry({112, 112}, {2, 2}, {2, 2}, {0, 0}, 16),  // pair path, exact tiling
      geometry({56, 58}, {2, 2}, {2, 2}, {0, 0}, 5),     // pair path, other widths
      geometry({57, 59}, {2, 2}, {2, 2}, {0, 0}, 3),     // odd extents: plane kernels, memset
      geometry({64, 64}, {3, 3}, {1, 1}, {1, 1}, 6),     // 3x3 plane kernel, gather backward
      geometry({33, 35}, {3, 3}, {2, 2}, {1, 1}, 4),     // overlapping 3x3 stride 2
      geometry({40, 41}, {4, 3}, {5, 4}, {2, 1}, 3),     // disjoint with gaps and padding
      geometry({300}, {5}, {2}, {2}, 7),                 // rank 1 (runtime-kernel planes)
      geometry({1000}, {2}, {2}, {0}, 3),                // rank 1, 2 of stride 2
      geometry({9, 10, 11}, {3, 2, 3}, {2, 2, 1}, {1, 1, 1}, 3),  // 3-D overlapping
      geometry({8, 8, 8}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, 5),    // 3-D exact tiling
      geometry({7, 6, 9}, {2, 3, 2}, {3, 3, 2}, {1, 1, 0}, 2),    // 3-D disjoint with gaps
      geometry({1, 2, 1}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, 4),    // 3-D smaller than the kernel
      // Smooth-max tiles: many tiles per plane, thin planes, 2x2 at stride 1 and with padding,
      // and the 16-byte 2x2 group kernel on a small plane.
      geometry({112, 112}, {3, 3}, {1, 1}, {1, 1}, 3),
      geometry({5, 300}, {3, 3}, {1, 1}, {0, 0}, 2),
      geometry({300, 5}, {2, 2}, {1, 1}, {1, 1}, 2),
      geometry({30, 34}, {2, 2}, {2, 2}, {1, 1}, 3),
      geometry({16, 24}, {2, 2}, {2, 2}, {0, 0}, 4),
      geometry({1, 1}, {3, 3}, {1, 1}, {1, 1}, 5),
  };
}

// Twenty random planar and 3-D geometries beside the fixed ones (kernel 1-4, stride 1-5, padding up
// to kernel / 2, extents 1-40).
std::vector<PoolGeometry> random_geometries() {
  std::vector<PoolGeometry> result;
  uint64_t h = 0x600d;
  auto draw = [&](uint64_t m) {
    h = tlrt::random::splitmix64_finalize(h + 1);
    return h % m;
  };
  while (result.size() < 20) {
    const size_t rank = 1 + draw(3);
    std::vector<uint64_t> in, k, s, p;
    for (size_t a = 0; a < rank; ++a) {
      const uint64_t kk = 1 + draw(4);
      k.push_back(kk);
      s.push_back(1 + draw(5));
      p.push_back(draw(kk / 2 + 1));
      in.push_back(1 + draw(rank == 3 ? 12 : 40));
    }
    const PoolGeometry g = geometry(in, k, s, p, static_cast<uint32_t>(1 + draw(4)));
    if (g.out_volume != 0) result.push_back(g);
  }
  return result;
}

double max_mass(const PoolGeometry& g, const std::vector<double>& dy_abs) {
  // Upper bound: windows containing one input (per axis ceil(k / s)) times max |dY|.
  double m = 0;
  for (double v : dy_abs) m = std::max(m, v);
  double windows = 1;
  for (int a = 0; a < tlrt::kernels::kPoolAxes; ++a) {
    windows *= static_cast<double>((g.kernel[a] + g.stride[a] - 1) / g.stride[a]);
  }
  return m * windows;
}

template <class T>
void parity_for_every_path() {
  uint64_t key = 11;
  std::vector<PoolGeometry> all = geometries();
  for (const PoolGeometry& g : random_geometries()) all.push_back(g);
  for (const PoolGeometry& g : all) {
    for (bool specials : {false, true}) {
      const std::vector<T> x = random_values<T>(g.channels * g.in_volume, key++, specials);
      const std::vector<T> dy = random_values<T>(g.channels * g.out_volume, key++, false);
      std::vector<double> dy_abs;
      for (T v : dy) dy_abs.push_back(std::fabs(static_cast<double>(v)));
      const double mass = max_mass(g, dy_abs);
      for (double beta : {1.0, -0.5}) {
        for (Op op : kOps) {
          if (beta != 1.0 && op != Op::smooth_fwd && op != Op::smooth_bwd) continue;
          const std::vector<T> want = run_ref(op, g, x, dy, static_cast<T>(beta));
          for (uint64_t offset : {0, 1}) {
            const std::string what = std::string(name_of(op)) + " C " + std::to_string(g.channels) +
                                     " in " + std::to_string(g.in[0]) + "x" +
                                     std::to_string(g.in[1]) + "x" + std::to_string(g.in[2]) +
                                     " offset " + std::to_string(offset) +
                                     (specials ? " specials" : "");
            expect_agree(op, run_cuda(op, g, x, dy, static_cast<T>(beta), offset), want, g, beta,
                         mass, what);
          }
        }
      }
    }
  }
}

TEST_F(PoolGpu, EveryPathMatchesTheReferenceFloat32) {
  parity_for_every_path<float>();
}

TEST_F(PoolGpu, EveryPathMatchesTheReferenceFloat64) {
  parity_for_every_path<double>();
}

template <class T>
void repeatable() {
  tlrt::initialize_settings();
  const uint32_t saved = tlrt::get_setting(2);
  tlrt::set_setting(2, 1);
  uint64_t key = 99;
  for (const PoolGeometry& g : geometries()) {
    const std::vector<T> x = random_values<T>(g.channels * g.in_volume, key++, true);
    const std::vector<T> dy = random_values<T>(g.channels * g.out_volume, key++, false);
    for (Op op : kOps) {
      const std::vector<T> first = run_cuda(op, g, x, dy, T(0.75), 0);
      for (int r = 1; r < 10; ++r) {
        const std::vector<T> again = run_cuda(op, g, x, dy, T(0.75), 0);
        ASSERT_EQ(again.size(), first.size());
        for (size_t i = 0; i < first.size(); ++i) {
          ASSERT_EQ(bits(again[i]), bits(first[i])) << name_of(op) << " run " << r << " at " << i;
        }
      }
    }
  }
  tlrt::set_setting(2, saved);
}

TEST_F(PoolGpu, TenRunsGiveTheSameBitsFloat32) {
  repeatable<float>();
}

TEST_F(PoolGpu, TenRunsGiveTheSameBitsFloat64) {
  repeatable<double>();
}

// The streaming kernels of float32 3x3 stride-1 smooth max pooling against the shared-memory
// tiles, bit for bit: paddings 0 to 2, widths around the 4-column groups and the 120 columns a
// warp writes (one and several warps across a row), heights from 1 to several strips, both signs
// of beta, NaN / +-inf / -0 inputs.
TEST_F(PoolGpu, SmoothStreamingMatchesTilesBitForBit) {
  using tlrt::kernels::SmoothSchedule;
  uint64_t key = 0x5eed;
  int compared = 0;
  for (uint64_t pad : {0, 1, 2}) {
    for (uint64_t w : {1, 3, 4, 5, 7, 112, 119, 121, 125, 250, 301}) {
      for (uint64_t h : {1, 2, 3, 33, 130}) {
        if (h + 2 * pad < 3 || w + 2 * pad < 3) continue;
        const PoolGeometry g = geometry({h, w}, {3, 3}, {1, 1}, {pad, pad}, 3);
        const std::vector<float> x = random_values<float>(g.channels * g.in_volume, key++, true);
        const std::vector<float> dy = random_values<float>(g.channels * g.out_volume, key++, false);
        for (float beta : {1.0f, -0.5f, 3e4f}) {
          for (Op op : {Op::smooth_fwd, Op::smooth_bwd}) {
            tlrt::kernels::set_smooth_schedule(SmoothSchedule::tiles);
            const std::vector<float> want = run_cuda(op, g, x, dy, beta, 0);
            tlrt::kernels::set_smooth_schedule(SmoothSchedule::streaming);
            for (uint64_t offset : {0, 1}) {
              const std::vector<float> got = run_cuda(op, g, x, dy, beta, offset);
              ASSERT_EQ(got.size(), want.size());
              for (size_t i = 0; i < got.size(); ++i) {
                ASSERT_EQ(bits(got[i]), bits(want[i]))
                    << name_of(op) << " " << h << "x" << w << " pad " << pad << " beta " << beta
                    << " offset " << offset << " at " << i;
              }
              ++compared;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 1000);
}

// Indices past 2^31: a rank-1 geometry of 2^31 + 8 float32 elements, 2 of stride 2 (the 64-bit
// plane forward and the 64-bit disjoint backward). The input is one repeated word, so every
// window selects its first position: y = that word, dx = +0 + dY at even positions and +0 at odd
// ones; checked at both ends and around 2^31.
TEST_F(PoolGpu, IndicesPast2To31) {
  const uint64_t n = (uint64_t{1} << 31) + 8, m = n / 2;
  size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  if (free_bytes < 3 * n * sizeof(float) + (uint64_t{1} << 30)) {
    GTEST_SKIP() << "needs " << 3 * n * sizeof(float) << " bytes of device memory";
  }
  const PoolGeometry g = geometry({n}, {2}, {2}, {0}, 1);
  float *x = nullptr, *y = nullptr, *dx = nullptr, *dy = nullptr;
  ASSERT_EQ(cudaMalloc(&x, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dx, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&y, m * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dy, m * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(x, 0x3f, n * sizeof(float)), cudaSuccess);   // 0x3f3f3f3f
  ASSERT_EQ(cudaMemset(dy, 0x40, m * sizeof(float)), cudaSuccess);  // 0x40404040
  ASSERT_EQ(cudaMemset(y, 0xff, m * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(dx, 0xff, n * sizeof(float)), cudaSuccess);
  tlrt::kernels::maxpool_fwd_cuda<float>(x, y, g, nullptr);
  tlrt::kernels::maxpool_bwd_cuda<float>(x, dy, dx, g, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto word = [](const float* p, uint64_t i) {
    uint32_t w = 0;
    EXPECT_EQ(cudaMemcpy(&w, p + i, sizeof w, cudaMemcpyDeviceToHost), cudaSuccess);
    return w;
  };
  for (uint64_t i : {uint64_t{0}, uint64_t{1}, (uint64_t{1} << 30) - 1, uint64_t{1} << 30, m - 1}) {
    EXPECT_EQ(word(y, i), 0x3f3f3f3fu) << "y at " << i;
  }
  for (uint64_t i : {uint64_t{0}, uint64_t{1}, (uint64_t{1} << 31) - 2, (uint64_t{1} << 31) - 1,
                     uint64_t{1} << 31, (uint64_t{1} << 31) + 1, n - 2, n - 1}) {
    EXPECT_EQ(word(dx, i), i % 2 == 0 ? 0x40404040u : 0u) << "dx at " << i;
  }
  cudaFree(x);
  cudaFree(y);
  cudaFree(dx);
  cudaFree(dy);
}

}  // namespace
