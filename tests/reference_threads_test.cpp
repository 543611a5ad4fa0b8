// The reference backend's loops that run in ranges on several host threads (matrix products,
// convolutions, softmax, layer normalization, selective scans, real FFTs, axis reductions and the
// ordered column fold) give the same bits as the
// same loops run as one range on the calling thread (host_range_cap 1), on shapes large enough to
// be split on any host with two or more hardware threads.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kernels/common/host_parallel.h"
#include "kernels/conv/conv.h"
#include "kernels/fft/fft.h"
#include "kernels/layer_norm/layer_norm.h"
#include "kernels/matmul/matmul.h"
#include "kernels/reduce_axis/reduce_axis.h"
#include "kernels/scan/scan.h"
#include "kernels/softmax/softmax.h"
#include "tests/support/gpu_test_support.h"

namespace {

using gpu_test::random_values;
using tlrt::kernels::host_range_cap;
using tlrt::kernels::host_thread_count;

// Runs `compute` (which fills the outputs it returns) once as one range and once split, and
// expects the same bytes.
template <class T>
void expect_same_split(const std::string& what,
                       const std::function<std::vector<std::vector<T>>()>& compute) {
  host_range_cap().store(1);
  const std::vector<std::vector<T>> serial = compute();
  host_range_cap().store(UINT64_MAX);
  const std::vector<std::vector<T>> split = compute();
  ASSERT_EQ(serial.size(), split.size()) << what;
  for (size_t k = 0; k < serial.size(); ++k) {
    ASSERT_EQ(serial[k].size(), split[k].size()) << what << " output " << k;
    EXPECT_EQ(std::memcmp(serial[k].data(), split[k].data(), serial[k].size() * sizeof(T)), 0)
        << what << " output " << k;
  }
}

class ReferenceThreads : public ::testing::Test {
 protected:
  void SetUp() override {
    if (host_thread_count() < 2) {
      GTEST_SKIP() << "one hardware thread: every loop is one range already";
    }
  }
  void TearDown() override { host_range_cap().store(UINT64_MAX); }
};

template <class T>
void matmul_case() {
  tlrt::kernels::MatmulShape s{2, 300, 64, 64, false, false};  // rows of 4096 products: 2 ranges+
  const auto a = random_values<T>(s.batch * s.m * s.n, 1),
             b = random_values<T>(s.batch * s.n * s.p, 2);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      s.transpose_a = ta;
      s.transpose_b = tb;
      expect_same_split<T>("bmm", [&] {
        std::vector<T> c(s.batch * s.m * s.p);
        tlrt::kernels::bmm_ref(a.data(), b.data(), c.data(), s);
        return std::vector<std::vector<T>>{c};
      });
    }
  }
}

TEST_F(ReferenceThreads, MatrixProducts) {
  matmul_case<float>();
  matmul_case<double>();
}

template <class T>
void conv_case() {
  tlrt::kernels::ConvShape s;
  s.rank = 2;
  s.batch = 8;
  s.cin = 4;
  s.cout = 16;
  s.groups = 1;
  s.kernel_cols = 4;
  s.in[0] = 24;
  s.in[1] = 24;
  s.k[0] = 3;
  s.k[1] = 3;
  s.pre[0] = s.pre[1] = s.post[0] = s.post[1] = 1;
  s.out[0] = 24;
  s.out[1] = 24;
  const uint64_t xs = s.batch * s.cin * s.in_volume(), ys = s.batch * s.cout * s.out_volume();
  const uint64_t ws = s.cout * s.cin * s.k_volume();
  const auto x = random_values<T>(xs, 3), w = random_values<T>(ws, 4), dy = random_values<T>(ys, 5),
             bias = random_values<T>(s.cout, 6), bias_in = random_values<T>(s.cin, 7);
  expect_same_split<T>("conv", [&] {
    std::vector<T> y(ys), dx(xs), dw(ws);
    tlrt::kernels::conv_fprop_ref(s, x.data(), w.data(), bias.data(), y.data());
    tlrt::kernels::conv_dgrad_ref(s, dy.data(), w.data(), bias_in.data(), dx.data());
    tlrt::kernels::conv_wgrad_ref(s, x.data(), dy.data(), dw.data());
    return std::vector<std::vector<T>>{y, dx, dw};
  });
}

TEST_F(ReferenceThreads, Convolutions) {
  conv_case<float>();
  conv_case<double>();
}

template <class T>
void softmax_case() {
  const uint64_t rows = 4096, cols = 64;
  const auto x = random_values<T>(rows * cols, 8, 4.0),
             mask = random_values<T>(rows * cols, 9, 1.0, 1.0);
  std::vector<T> m(mask.size());
  for (size_t i = 0; i < m.size(); ++i) m[i] = mask[i] < T(0.5) ? T(0) : T(1);
  expect_same_split<T>("softmax", [&] {
    std::vector<T> a(rows * cols), b(rows * cols);
    tlrt::kernels::softmax_rows_ref(x.data(), m.data(), rows, cols, a.data());
    tlrt::kernels::softmax_axis_ref(x.data(), 64, 64, 64, b.data());
    return std::vector<std::vector<T>>{a, b};
  });
}

TEST_F(ReferenceThreads, Softmax) {
  softmax_case<float>();
  softmax_case<double>();
}

template <class T>
void layer_norm_case() {
  const tlrt::kernels::LayerNormShape s{4096, 64};
  const uint64_t n = s.rows * s.cols;
  const auto x = random_values<T>(n, 10, 3.0), g = random_values<T>(s.cols, 11),
             be = random_values<T>(s.cols, 12), dy = random_values<T>(n, 13);
  expect_same_split<T>("layer_norm", [&] {
    std::vector<T> y(n), h(n), is(s.rows), dx(n), dg(s.cols), db(s.cols);
    tlrt::kernels::layer_norm_fwd_ref(x.data(), g.data(), be.data(), s, 1e-5, y.data(), h.data(),
                                      is.data());
    tlrt::kernels::layer_norm_bwd_ref(dy.data(), h.data(), is.data(), g.data(), s, T(64),
                                      T(1.0 / 64), dx.data(), dg.data(), db.data());
    return std::vector<std::vector<T>>{y, h, is, dx, dg, db};
  });
}

TEST_F(ReferenceThreads, LayerNorm) {
  layer_norm_case<float>();
  layer_norm_case<double>();
}

template <class T>
void scan_case(bool variable) {
  const uint64_t steps = 2000, state = 256;
  const auto a = random_values<T>(variable ? steps * state : state, 14, 0.99),
             b = random_values<T>(variable ? steps * state : state, 15),
             x = random_values<T>(steps * state, 16), h0 = random_values<T>(state, 17),
             dy = random_values<T>(steps * state, 18);
  tlrt::kernels::ScanOperands<T> in;
  in.a = a.data();
  in.b = b.data();
  in.x = x.data();
  in.h0 = h0.data();
  in.steps = steps;
  in.state = state;
  in.variable = variable;
  expect_same_split<T>(variable ? "scan (variable)" : "scan", [&] {
    std::vector<T> h(steps * state), da(a.size()), db(b.size()), dx(steps * state), dh0(state);
    tlrt::kernels::selective_scan_fwd_ref(in, h.data());
    tlrt::kernels::ScanGradients<T> grad{da.data(), db.data(), dx.data(), dh0.data()};
    tlrt::kernels::selective_scan_bwd_ref(in, h.data(), dy.data(), grad);
    return std::vector<std::vector<T>>{h, da, db, dx, dh0};
  });
}

TEST_F(ReferenceThreads, SelectiveScans) {
  for (bool variable : {false, true}) {
    scan_case<float>(variable);
    scan_case<double>(variable);
  }
}

template <class T>
void fft_case(uint64_t n, uint64_t batch) {
  const uint64_t bins = n / 2 + 1;
  const auto x = random_values<T>(batch * n, 19), spec = random_values<T>(batch * bins * 2, 20);
  expect_same_split<T>("fft n = " + std::to_string(n), [&] {
    std::vector<T> f(batch * bins * 2), i(batch * n), u(batch * n);
    tlrt::kernels::rfft1d_ref(x.data(), batch, n, f.data());
    tlrt::kernels::irfft1d_ref(spec.data(), batch, n, true, i.data());
    tlrt::kernels::irfft1d_ref(spec.data(), batch, n, false, u.data());
    return std::vector<std::vector<T>>{f, i, u};
  });
}

TEST_F(ReferenceThreads, RealFfts) {
  fft_case<float>(64, 2000);  // radix 2
  fft_case<double>(64, 2000);
  fft_case<float>(97, 1000);  // Bluestein
  fft_case<double>(97, 1000);
}

template <class T>
void reduce_axis_case() {
  const uint64_t rows = 600, cols = 512;  // rows of 512: 128 a range; 512 columns: 109 a range
  auto x = random_values<T>(rows * cols, 21);
  x[5] = std::numeric_limits<T>::quiet_NaN();  // the max rules' NaN as -inf, in one range
  const tlrt::kernels::FoldGeometry g = tlrt::kernels::matrix_fold_geometry(rows, cols);
  expect_same_split<T>("axis reductions", [&] {
    std::vector<T> sr(rows), mr(rows), mc(cols), fold(cols);
    tlrt::kernels::reduce_sum_by_row_ref(x.data(), rows, cols, sr.data());
    tlrt::kernels::reduce_max_by_row_ref(x.data(), rows, cols, mr.data());
    tlrt::kernels::reduce_max_by_column_ref(x.data(), rows, cols, mc.data());
    tlrt::kernels::ordered_fold_ref(x.data(), g, fold.data());
    return std::vector<std::vector<T>>{sr, mr, mc, fold};
  });
}

TEST_F(ReferenceThreads, AxisReductions) {
  reduce_axis_case<float>();
  reduce_axis_case<double>();
}

}  // namespace
