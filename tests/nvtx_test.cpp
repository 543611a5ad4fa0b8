// NVTX ranges around the ABI's ops (docs/PROFILE.md), through the test's own NVTX tool
// (nvtx_recorder.cpp, loaded by NVTX_INJECTION64_PATH, writing TLRT_NVTX_RECORD). With TLRT_NVTX=1
// every call opens exactly one range in the domain "tlrt", named by its op, with the element count
// of its first buffer operand (of the buffer built, for a constructor; else 0) as payload, and
// closes it before returning; with TLRT_NVTX unset no NVTX call is made at all.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "abi_test_support.h"

using namespace abi_test;

namespace {

bool ranges_on() {
  const char* value = std::getenv("TLRT_NVTX");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

std::vector<std::string> recorded() {
  std::vector<std::string> lines;
  const char* path = std::getenv("TLRT_NVTX_RECORD");
  if (path == nullptr) return lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The events since `from`, without the one-time domain creation.
std::vector<std::string> events_since(size_t from) {
  std::vector<std::string> all = recorded();
  std::vector<std::string> out;
  for (size_t k = from; k < all.size(); ++k) {
    if (all[k].rfind("domain ", 0) != 0) out.push_back(all[k]);
  }
  return out;
}

std::vector<std::string> one_range(const std::string& name, unsigned long long payload) {
  return {"push tlrt " + name + " " + std::to_string(payload), "pop tlrt"};
}

class Nvtx : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(std::getenv("NVTX_INJECTION64_PATH"), nullptr);
    const char* path = std::getenv("TLRT_NVTX_RECORD");
    ASSERT_NE(path, nullptr);
    std::remove(path);
  }
};

TEST_F(Nvtx, OneNamedRangePerCall) {
  if (!ranges_on()) GTEST_SKIP() << "TLRT_NVTX is not 1 (nvtx_off checks that case)";
  size_t mark = recorded().size();
  Obj a = make_buffer<float>({1, 2, 3, 4});
  EXPECT_EQ(events_since(mark), one_range("of_bytes_io", 4));  // the buffer it builds
  Obj b = make_buffer<float>({5, 6, 7, 8});

  mark = recorded().size();
  Obj sum(torchlean_cuda_buffer_add(a.get(), b.get()));
  EXPECT_EQ(events_since(mark), one_range("add", 4));

  mark = recorded().size();
  Obj total(torchlean_cuda_buffer_reduce_sum(sum.get()));
  EXPECT_EQ(events_since(mark), one_range("reduce_sum", 4));
  EXPECT_EQ(read_values<float>(total.get()), std::vector<float>{36});

  Obj x = make_buffer<float>({1, 2, 3, 4, 5, 6});
  Obj gamma = make_buffer<float>({1, 1, 1});
  Obj beta = make_buffer<float>({0, 0, 0});
  mark = recorded().size();
  Obj normed(
      torchlean_cuda_buffer_layer_norm_fwd(x.get(), gamma.get(), beta.get(), 2, 3, 1.0 / 3, 1e-5));
  EXPECT_EQ(events_since(mark), one_range("layer_norm_fwd", 6));

  mark = recorded().size();
  EXPECT_EQ(torchlean_cuda_buffer_size(x.get()), 6u);
  EXPECT_EQ(events_since(mark), one_range("size", 6));

  mark = recorded().size();
  (void)torchlean_libtorch_allocated_bytes(0);
  EXPECT_EQ(events_since(mark), one_range("libtorch_allocated_bytes", 0));  // no buffer operand

  mark = recorded().size();
  Obj zeros(torchlean_cuda_buffer_zeros(3, 0));
  EXPECT_EQ(events_since(mark), one_range("zeros", 3));

  // A failing IO call closes its range too: 3 bytes are no whole float32 word, so the count is
  // never known and the range carries 0.
  mark = recorded().size();
  Io bad = take_io(torchlean_cuda_buffer_of_bytes_io(byte_array({1, 2, 3}).get(), 0, 0));
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(events_since(mark), one_range("of_bytes_io", 0));

  // Balanced over the whole run, and every range in the one domain.
  int depth = 0;
  int domains = 0;
  for (const std::string& line : recorded()) {
    if (line.rfind("domain ", 0) == 0) {
      EXPECT_EQ(line, "domain tlrt");
      ++domains;
    } else if (line.rfind("push tlrt ", 0) == 0) {
      ++depth;
    } else {
      EXPECT_EQ(line, "pop tlrt");
      --depth;
      EXPECT_GE(depth, 0);
    }
  }
  EXPECT_EQ(depth, 0);
  EXPECT_EQ(domains, 1);
}

TEST_F(Nvtx, NoRangeWhenOff) {
  if (ranges_on()) GTEST_SKIP() << "TLRT_NVTX=1 (nvtx_on checks that case)";
  Obj a = make_buffer<float>({1, 2, 3});
  Obj sum(torchlean_cuda_buffer_add(a.get(), a.get()));
  Obj total(torchlean_cuda_buffer_reduce_sum(sum.get()));
  EXPECT_EQ(read_values<float>(total.get()), std::vector<float>{12});
  EXPECT_TRUE(recorded().empty());
}

}  // namespace
