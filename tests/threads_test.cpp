// Several host threads calling the ABI at once (SPEC-runtime 2.4): each thread runs a workload of
// its own that passes through every piece of shared runtime state a call can reach (the caching
// allocator, the pinned staging of uploads, downloads and host index lists, the cuBLAS handle, the
// FFT plan cache, the scan workspace, the seeded stream, the kernel cache; cuDNN in a workload of
// its own), and must get the bits the same workload gets alone. Buffers also move between threads:
// a thread marks one of its results multi-threaded (as Lean does before sharing an object) and
// another thread drops it, after an explicit release or without one. Afterwards every payload and
// wrapper made is retired. Runs once per backend; scripts/threads-sanitized.sh runs it under
// ThreadSanitizer (the reference pass in CI, the CUDA pass in the GPU loop's tsan stage).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/abi_test_support.h"
#include "tests/nvrtc_sources.h"

namespace {

using namespace abi_test;

constexpr uint8_t kF32 = 0;
constexpr uint8_t kF64 = 1;

// Inputs of a workload: a splitmix64 stream of values in [-1, 1).
class Values {
 public:
  explicit Values(uint64_t seed) : state_(seed * 0x9e3779b97f4a7c15ull + 1) {}
  double next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1p-52 - 1.0;
  }
  template <class T>
  std::vector<T> take(size_t n) {
    std::vector<T> v(n);
    for (T& e : v) e = static_cast<T>(next());
    return v;
  }
  std::vector<double> doubles(size_t n) { return take<double>(n); }

 private:
  uint64_t state_;
};

using Bytes = std::vector<uint8_t>;

// The bytes of a buffer in its own dtype; an empty vector and a recorded failure when the
// download fails.
Bytes bytes_of_buffer(lean_object* buffer) {
  const uint8_t dtype = torchlean_cuda_buffer_dtype(buffer);
  Io io = take_io(torchlean_cuda_buffer_to_bytes_io(buffer, dtype));
  EXPECT_TRUE(io.ok) << io.message;
  if (!io.ok) return {};
  return bytes_of(io.value.get());
}

// Buffers handed from one thread to another: whoever takes one drops it.
class Handoff {
 public:
  void give(lean_object* o) {
    lean_mark_mt(o);
    std::lock_guard<std::mutex> lock(mutex_);
    items_.push_back(o);
  }
  lean_object* take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (items_.empty()) return nullptr;
    lean_object* o = items_.front();
    items_.pop_front();
    return o;
  }

 private:
  std::mutex mutex_;
  std::deque<lean_object*> items_;
};

// Lets every thread start its calls at the same moment, so that first uses (the cuBLAS handle,
// plans, compiled kernels) race.
class StartLine {
 public:
  explicit StartLine(int parties) : waiting_(parties) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (--waiting_ == 0) {
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [this] { return waiting_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int waiting_;
};

// The kernel every thread runs (one source, so the kernel cache sees concurrent misses and hits):
// output = input0 * input1 + input0.
std::string shared_kernel() {
  using namespace nvrtc_sources;
  return signature("float", 2) + read("float", 0, "index", "v1") + read("float", 1, "index", "v2") +
         finish("__fadd_rn(__fmul_rn(v1, v2), v1)");
}

// One workload: the results' bytes in call order. `w` varies the shapes between workloads, and
// every workload also runs the shapes all of them share. `handoff` (when given) receives one
// result and has one taken and dropped per call of this function.
std::vector<Bytes> workload(int w, Handoff* handoff) {
  Values gen(static_cast<uint64_t>(w) + 17);
  std::vector<Bytes> out;
  auto keep = [&out](const Obj& buffer) { out.push_back(bytes_of_buffer(buffer.get())); };

  // Uploads through the staging path (FloatArray), the seeded stream, an elementwise sum.
  const uint32_t n = 65536 + 97 * static_cast<uint32_t>(w);
  const Obj host = float_array(gen.doubles(n));
  Obj x32(torchlean_cuda_buffer_of_float_array(host.get(), kF32));
  Obj x64(torchlean_cuda_buffer_of_float_array(host.get(), kF64));
  Obj noise(torchlean_cuda_buffer_rand_normal(n, 0.0, 1.0, 1000 + static_cast<uint64_t>(w), kF32));
  Obj sum(torchlean_cuda_buffer_add(x32.get(), noise.get()));
  keep(sum);
  {
    Obj down(torchlean_cuda_buffer_to_float_array(x64.get()));
    out.push_back(bytes_from(doubles_of(down.get())));
  }

  // Matrix products on cuBLAS, and dgemm from host arrays.
  const uint32_t m = 33 + static_cast<uint32_t>(w), k = 17, p = 29;
  Obj a(make_buffer(gen.take<float>(2 * m * k)));
  Obj b(make_buffer(gen.take<float>(2 * k * p)));
  Obj bt(make_buffer(gen.take<float>(2 * p * k)));
  Obj c00(torchlean_cuda_buffer_bmm_with_transpose(a.get(), b.get(), 2, m, k, p, 0, 0));
  Obj c01(torchlean_cuda_buffer_bmm_with_transpose(a.get(), bt.get(), 2, m, k, p, 0, 1));
  keep(c00);
  keep(c01);
  {
    const Obj da = float_array(gen.doubles(64 * 48));
    const Obj db = float_array(gen.doubles(48 * 40));
    Obj dc(torchlean_dgemm_cuda(da.get(), db.get(), 64, 48, 40));
    out.push_back(bytes_from(doubles_of(dc.get())));
  }

  // Real FFTs: a length of this workload's own and one every workload shares (the plan cache
  // sees concurrent creations and hits).
  for (uint32_t len : {256u + static_cast<uint32_t>(w), 1000u}) {
    Obj signal(make_buffer(gen.take<float>(8 * len)));
    Obj spec(torchlean_cuda_buffer_rfft1d_packed(signal.get(), 8, len));
    Obj back(torchlean_cuda_buffer_irfft1d_packed(spec.get(), 8, len));
    keep(spec);
    keep(back);
  }

  // A selective scan long enough for the fast schedule's workspace (with the deterministic
  // setting off) and one in float64.
  {
    const uint32_t steps = 5000, state = 32;
    std::vector<float> coef = gen.take<float>(state);
    for (float& e : coef) e *= 0.9f;
    Obj sa(make_buffer(coef)), sb(make_buffer(gen.take<float>(state)));
    Obj sx(make_buffer(gen.take<float>(steps * state))), sh(make_buffer(gen.take<float>(state)));
    Obj h(torchlean_cuda_buffer_selective_scan_diag_fwd(sa.get(), sb.get(), sx.get(), sh.get(),
                                                        steps, state));
    keep(h);
  }
  {
    const uint32_t steps = 300, state = 16;
    Obj sa(make_buffer(gen.take<double>(steps * state))),
        sb(make_buffer(gen.take<double>(steps * state)));
    Obj sx(make_buffer(gen.take<double>(steps * state))), sh(make_buffer(gen.take<double>(state)));
    Obj h(torchlean_cuda_buffer_selective_scan_diag_var_fwd(sa.get(), sb.get(), sx.get(), sh.get(),
                                                            steps, state));
    keep(h);
  }

  // Gather and scatter with host index lists (converted into the pinned staging).
  {
    const uint32_t rows = 64, cols = 32, picks = 200 + static_cast<uint32_t>(w);
    std::vector<uint64_t> idx(picks);
    for (uint32_t i = 0; i < picks; ++i) idx[i] = (i * 7 + static_cast<uint32_t>(w)) % (rows + 3);
    Obj table(make_buffer(gen.take<float>(rows * cols)));
    Obj values(make_buffer(gen.take<float>(picks * cols)));
    Obj list(nat_list(idx));
    Obj g(torchlean_cuda_buffer_gather_rows(table.get(), rows, cols, list.get(), picks));
    Obj s(torchlean_cuda_buffer_scatter_add_rows(table.get(), values.get(), rows, cols, list.get(),
                                                 picks));
    keep(g);
    keep(s);
  }

  // Masked softmax, layer norm, an axis reduction.
  {
    const uint32_t rows = 48, cols = 130;
    std::vector<float> mask(rows * cols);
    for (size_t i = 0; i < mask.size(); ++i)
      mask[i] = (i * 5 + static_cast<size_t>(w)) % 7 == 0 ? 0.f : 1.f;
    Obj scores(make_buffer(gen.take<float>(rows * cols))), mk(make_buffer(mask));
    Obj sm(torchlean_cuda_buffer_hard_masked_softmax_by_row(scores.get(), mk.get(), rows, cols));
    keep(sm);
    Obj gamma(make_buffer(gen.take<float>(cols))), beta(make_buffer(gen.take<float>(cols)));
    Obj ln(torchlean_cuda_buffer_layer_norm_fwd(scores.get(), gamma.get(), beta.get(), rows, cols,
                                                1.0 / cols, 1e-5));
    std::vector<lean_object*> parts;
    buffers_of(ln.get(), parts);
    EXPECT_EQ(parts.size(), 3u);
    for (lean_object* part : parts) out.push_back(bytes_of_buffer(part));
    Obj col(torchlean_cuda_buffer_reduce_sum_axis(scores.get(), nats({rows, cols}).get(), 0));
    keep(col);
  }

  // A generated kernel (NVRTC on the GPU, the host compiler on the reference backend).
  {
    const std::string text = shared_kernel();
    const Obj source(lean_mk_string_from_bytes(text.data(), text.size()));
    const Obj inputs = array_of({&sum, &x32});
    Io run = take_io(torchlean_kernel_run_buffer(source.get(), inputs.get(), n));
    EXPECT_TRUE(run.ok) << run.message;
    if (run.ok) keep(run.value);
  }

  // Hand one buffer to another thread and drop one handed over, released first or not.
  if (handoff != nullptr) {
    lean_inc(sum.get());
    handoff->give(sum.get());
    if (lean_object* taken = handoff->take()) {
      if (w % 2 == 0) {
        EXPECT_EQ(torchlean_cuda_buffer_release(taken), 1u);
      }
      lean_dec(taken);
    }
  }
  return out;
}

// Convolutions, forward and backward (cuDNN on the GPU, whose handle and calls the threads share),
// in shapes of this workload's own and shapes every workload shares. A workload and sub-test of
// its own, so that the allocation backtraces in memcheck's report of the cuDNN handle's
// allocations, which cuDNN keeps past the handle's destruction, name this sub-test (the memcheck
// stage passes a run whose only reports are those: scripts/sanitizer-known-leaks.sh).
std::vector<Bytes> conv_workload(int w, Handoff* handoff) {
  Values gen(static_cast<uint64_t>(w) + 101);
  std::vector<Bytes> out;
  for (uint32_t side : {12u + static_cast<uint32_t>(w), 16u}) {
    const Obj in = nats({side, side}), ks = nats({3, 3}), st = nats({1, 1}), pd = nats({1, 1});
    const uint32_t cin = 3, cout = 4;
    Obj x(make_buffer(gen.take<float>(cin * side * side)));
    Obj k(make_buffer(gen.take<float>(cout * cin * 9)));
    Obj b(make_buffer(gen.take<float>(cout)));
    Obj y(torchlean_cuda_conv_fwd(x.get(), k.get(), b.get(), in.get(), ks.get(), st.get(), pd.get(),
                                  cin, cout));
    out.push_back(bytes_of_buffer(y.get()));
    Obj dy(make_buffer(gen.take<float>(cout * side * side)));
    Obj grads(torchlean_cuda_conv_bwd(x.get(), k.get(), dy.get(), in.get(), ks.get(), st.get(),
                                      pd.get(), cin, cout));
    std::vector<lean_object*> parts;
    buffers_of(grads.get(), parts);
    EXPECT_EQ(parts.size(), 3u);
    for (lean_object* part : parts) out.push_back(bytes_of_buffer(part));
    if (handoff != nullptr && side == 16u) {
      lean_inc(y.get());
      handoff->give(y.get());
      if (lean_object* taken = handoff->take()) lean_dec(taken);
    }
  }
  return out;
}

using Workload = std::vector<Bytes> (*)(int, Handoff*);

class Threads : public BackendSuite {
 protected:
  // Runs `workers` threads of `rounds` workloads each, then the same workloads alone, and
  // compares. The threads go first, so that in a fresh process their first uses (device
  // initialisation, module loads, the staging buffers, the cuBLAS and cuDNN handles, plans,
  // compiled kernels) race.
  void run_concurrently(Workload workload, bool deterministic, int workers, int rounds) {
    DeterministicScope scope(deterministic);
    const Counters before = Counters::read();
    Handoff handoff;
    StartLine start(workers);
    std::vector<std::vector<std::vector<Bytes>>> got(workers);
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        start.arrive_and_wait();
        for (int r = 0; r < rounds; ++r) {
          got[w].push_back(workload(w, &handoff));
          // Cached memory handed back while the other threads allocate.
          if (w == 0) {
            EXPECT_TRUE(take_io(torchlean_libtorch_empty_cache(0)).ok);
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    while (lean_object* o = handoff.take()) lean_dec(o);

    std::vector<std::vector<Bytes>> alone(workers);
    for (int w = 0; w < workers; ++w) alone[w] = workload(w, nullptr);
    std::vector<std::string> first_mismatch(workers);
    int mismatches = 0;
    for (int w = 0; w < workers; ++w) {
      for (const Bytes& b : alone[w]) ASSERT_FALSE(b.empty()) << "workload " << w;
      for (int r = 0; r < rounds; ++r) {
        if (got[w][r].size() != alone[w].size()) {
          ++mismatches;
          first_mismatch[w] = "round " + std::to_string(r) + ": result count " +
                              std::to_string(got[w][r].size()) + " against " +
                              std::to_string(alone[w].size());
          continue;
        }
        for (size_t i = 0; i < alone[w].size(); ++i) {
          if (got[w][r][i] == alone[w][i]) continue;
          ++mismatches;
          if (first_mismatch[w].empty()) {
            first_mismatch[w] = "round " + std::to_string(r) + ", result " + std::to_string(i);
          }
        }
      }
    }
    for (int w = 0; w < workers; ++w) {
      EXPECT_TRUE(first_mismatch[w].empty())
          << "workload " << w << " differs from its run alone at " << first_mismatch[w];
    }
    EXPECT_EQ(mismatches, 0);
    const Counters after = Counters::read();
    EXPECT_EQ(after.live_bytes, before.live_bytes);
    EXPECT_EQ(after.wrapper_live, before.wrapper_live);
    EXPECT_EQ(after.alloc_count - before.alloc_count, after.free_count - before.free_count);
    EXPECT_EQ(after.wrapper_alloc - before.wrapper_alloc,
              after.wrapper_finalize - before.wrapper_finalize);
    EXPECT_GT(after.alloc_count - before.alloc_count, 0u);
  }
};

TEST_F(Threads, EachThreadGetsTheBitsOfItsWorkloadAlone) {
  run_concurrently(workload, false, 4, 3);
}

TEST_F(Threads, EachThreadGetsTheBitsOfItsWorkloadAloneDeterministic) {
  run_concurrently(workload, true, 4, 3);
}

// With the deterministic setting on, so that cuDNN's backward algorithms repeat bit for bit.
TEST_F(Threads, CudnnConvolutionsGetTheBitsOfTheirWorkloadAlone) {
  run_concurrently(conv_workload, true, 4, 3);
}

// Threads calling the same cached paths in a tight loop (kernel cache and FFT plan cache hits,
// the cuBLAS handle, host index lists through the staging), so that their lookups overlap.
TEST_F(Threads, CachedPathsUnderContention) {
  constexpr int kWorkers = 4, kIterations = 150;
  Values gen(5);
  const Obj x(make_buffer(gen.take<float>(64)));
  const Obj y(make_buffer(gen.take<float>(64)));
  const std::string text = shared_kernel();
  const Obj source(lean_mk_string_from_bytes(text.data(), text.size()));
  const Obj inputs = array_of({&x, &y});
  const Obj list = nats({3, 1, 3, 0});
  auto one_round = [&](std::vector<Bytes>& out) {
    Io run = take_io(torchlean_kernel_run_buffer(source.get(), inputs.get(), 64));
    EXPECT_TRUE(run.ok) << run.message;
    if (run.ok) out.push_back(bytes_of_buffer(run.value.get()));
    Obj spec(torchlean_cuda_buffer_rfft1d_packed(x.get(), 4, 16));
    out.push_back(bytes_of_buffer(spec.get()));
    Obj c(torchlean_cuda_buffer_bmm_with_transpose(x.get(), y.get(), 1, 8, 8, 8, 1, 0));
    out.push_back(bytes_of_buffer(c.get()));
    Obj g(torchlean_cuda_buffer_gather_rows(x.get(), 4, 16, list.get(), 4));
    out.push_back(bytes_of_buffer(g.get()));
  };
  std::vector<Bytes> alone;
  one_round(alone);
  lean_mark_mt(x.get());
  lean_mark_mt(y.get());
  lean_mark_mt(source.get());
  lean_mark_mt(inputs.get());
  lean_mark_mt(list.get());
  StartLine start(kWorkers);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      for (int i = 0; i < kIterations; ++i) {
        std::vector<Bytes> got;
        one_round(got);
        if (got != alone) ++mismatches;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// Many threads making, copying and releasing small buffers: every payload and wrapper made is
// counted once and retired once.
TEST_F(Threads, CountersBalanceUnderConcurrentAllocation) {
  constexpr int kWorkers = 6, kIterations = 300;
  const Counters before = Counters::read();
  StartLine start(kWorkers);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      start.arrive_and_wait();
      for (int i = 0; i < kIterations; ++i) {
        const uint32_t n = 1 + static_cast<uint32_t>((i * 37 + w * 11) % 3000);
        Obj a(torchlean_cuda_buffer_full(n, static_cast<double>(w), i % 2 == 0 ? kF32 : kF64));
        Obj b(torchlean_cuda_buffer_copy(a.get()));
        if (torchlean_cuda_buffer_size(b.get()) != n) ++failures;
        if (i % 3 == 0 && torchlean_cuda_buffer_release(a.get()) != 1u) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  const Counters after = Counters::read();
  const uint64_t made = 2ull * kWorkers * kIterations;
  EXPECT_EQ(after.alloc_count - before.alloc_count, made);
  EXPECT_EQ(after.free_count - before.free_count, made);
  EXPECT_EQ(after.wrapper_alloc - before.wrapper_alloc, made);
  EXPECT_EQ(after.wrapper_finalize - before.wrapper_finalize, made);
  EXPECT_EQ(after.live_bytes, before.live_bytes);
  EXPECT_EQ(after.wrapper_live, before.wrapper_live);
}

}  // namespace
