// Helpers for driving the ABI through Lean objects in tests: owned-object handles, host arrays,
// IO result decoding and counter snapshots.
#pragma once

#include <gtest/gtest.h>
#include <lean/lean.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/same_bits.h"
#include "tlrt/torchlean_abi.h"

#if TLRT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace abi_test {

// The ABI's dtype code of a scalar type and the unsigned word with its bits.
template <class T>
struct Dt;
template <>
struct Dt<float> {
  static constexpr uint8_t kCode = 0;
  using Bits = uint32_t;
};
template <>
struct Dt<double> {
  static constexpr uint8_t kCode = 1;
  using Bits = uint64_t;
};

// Owns one Lean reference and drops it on destruction.
class Obj {
 public:
  Obj() = default;
  explicit Obj(lean_object* o) : o_(o) {}
  ~Obj() { reset(); }
  Obj(Obj&& other) noexcept : o_(other.o_) { other.o_ = nullptr; }
  Obj& operator=(Obj&& other) noexcept {
    if (this != &other) {
      reset();
      o_ = other.o_;
      other.o_ = nullptr;
    }
    return *this;
  }
  Obj(const Obj&) = delete;
  Obj& operator=(const Obj&) = delete;
  lean_object* get() const { return o_; }
  void reset() {
    if (o_ != nullptr) lean_dec(o_);
    o_ = nullptr;
  }

 private:
  lean_object* o_ = nullptr;
};

Obj float_array(const std::vector<double>& values);
Obj byte_array(const std::vector<uint8_t>& bytes);
// A Lean Array holding a new reference to each of `items` (kernel-run inputs).
Obj array_of(const std::vector<const Obj*>& items);
std::vector<double> doubles_of(lean_object* float_array);
std::vector<uint8_t> bytes_of(lean_object* byte_array);

// The IO.Error constructor tags tlrt produces.
constexpr unsigned kOtherError = 1;
constexpr unsigned kResourceExhausted = 14;
constexpr unsigned kUserError = 18;

// A decoded IO result; consumes the result object.
struct Io {
  bool ok = false;
  Obj value;               // success payload (owned)
  unsigned error_tag = 0;  // IO.Error constructor on failure
  uint32_t os_code = 0;
  std::string message;
};
Io take_io(lean_object* result);

// Downloads a buffer object through to_float_array.
std::vector<double> values_of(lean_object* buffer);

// A buffer object of n zeros of `dtype` (0 float32, 1 float64), already released: the wrapper
// stays alive (owned by the caller, or consumed by the symbol it is passed to) and any use panics.
lean_object* released_buffer(uint32_t n, uint8_t dtype = 0);

struct Counters {
  uint64_t live_bytes, peak_bytes, alloc_count, free_count;
  uint64_t wrapper_live, wrapper_peak, wrapper_alloc, wrapper_finalize;
  static Counters read();
};

// What one call must create: `buffers` fresh buffer wrappers (each buffer of a tuple counts one),
// holding `bytes` payload bytes in `payloads` allocations (empty buffers have none).
struct FreshResult {
  uint64_t buffers = 1;
  uint64_t bytes = 0;
  uint64_t payloads = 1;
};
// A single buffer of `bytes` bytes: one payload, or none when it is empty.
inline FreshResult fresh_buffer(uint64_t bytes) {
  return {1, bytes, bytes != 0 ? 1u : 0u};
}

// Runs `call` and checks the ownership rules on its result: the counters move by exactly
// `expected`, no buffer of the result (tuples are walked) is one of `inputs`, and dropping the
// result returns the live bytes and wrappers to where they were and frees every payload it made
// (and the call itself frees nothing and finalises no wrapper before the drop).
// `what` names the case in failure messages.
template <class Call>
void expect_fresh_result(const std::string& what, Call&& call, FreshResult expected,
                         std::initializer_list<lean_object*> inputs);

bool cuda_requested();     // TLRT_DEVICE=cuda
bool backend_available();  // runtime status 1

// Base fixture of the ABI suites: skips visibly in the cuda pass when no device is visible, and
// checks that every test ends with as many live buffer wrappers as it started with.
class BackendSuite : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  Counters before_{};
};

// The buffers of a result: the object itself, or the leaves of nested constructor objects.
void buffers_of(lean_object* result, std::vector<lean_object*>& out);

template <class Call>
void expect_fresh_result(const std::string& what, Call&& call, FreshResult expected,
                         std::initializer_list<lean_object*> inputs) {
  const Counters before = Counters::read();
  Obj r(call());
  const Counters mid = Counters::read();
  EXPECT_EQ(mid.alloc_count - before.alloc_count, expected.payloads) << what;
  EXPECT_EQ(mid.live_bytes - before.live_bytes, expected.bytes) << what;
  EXPECT_EQ(mid.wrapper_alloc - before.wrapper_alloc, expected.buffers) << what;
  EXPECT_EQ(mid.wrapper_live - before.wrapper_live, expected.buffers) << what;
  EXPECT_EQ(mid.free_count, before.free_count) << what;
  std::vector<lean_object*> made;
  buffers_of(r.get(), made);
  EXPECT_EQ(made.size(), expected.buffers) << what;
  for (lean_object* b : made) {
    for (lean_object* input : inputs) EXPECT_NE(b, input) << what;
  }
  r.reset();
  const Counters after = Counters::read();
  EXPECT_EQ(after.live_bytes, before.live_bytes) << what;
  EXPECT_EQ(after.free_count - before.free_count, expected.payloads) << what;
  EXPECT_EQ(after.wrapper_finalize - before.wrapper_finalize, expected.buffers) << what;
  EXPECT_EQ(after.wrapper_live, before.wrapper_live) << what;
}

// The raw bits of a value and back.
template <class T>
typename Dt<T>::Bits bits_of(T v) {
  typename Dt<T>::Bits b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

template <class T>
T value_of(typename Dt<T>::Bits b) {
  T v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

using test_bits::same_bits_or_nan;

// The bytes of host values, as they lie in memory.
template <class V>
std::vector<uint8_t> bytes_from(const std::vector<V>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(V));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// A buffer of dtype T holding exactly `bytes` (of_bytes_io: no rounding, NaN payloads kept).
template <class T>
Obj buffer_of_bytes(const std::vector<uint8_t>& bytes) {
  Io io = take_io(
      torchlean_cuda_buffer_of_bytes_io(byte_array(bytes).get(), Dt<T>::kCode, Dt<T>::kCode));
  EXPECT_TRUE(io.ok) << io.message;
  return std::move(io.value);
}

// A buffer of dtype T holding exactly `values`.
template <class T>
Obj make_buffer(const std::vector<T>& values) {
  return buffer_of_bytes<T>(bytes_from(values));
}

// The words of values of dtype T (NaN payloads and signed zeros kept).
template <class T>
using Words = std::vector<typename Dt<T>::Bits>;

// A buffer of dtype T holding exactly these words.
template <class T>
Obj make_words(const Words<T>& words) {
  return buffer_of_bytes<T>(bytes_from(words));
}

// A buffer of dtype T read back exactly (to_bytes_io) as values (V = T) or words (V =
// Dt<T>::Bits); checks the dtype first.
template <class T, class V>
std::vector<V> read_back(lean_object* buffer) {
  static_assert(sizeof(V) == sizeof(T), "values or words of T");
  EXPECT_EQ(torchlean_cuda_buffer_dtype(buffer), Dt<T>::kCode);
  Io io = take_io(torchlean_cuda_buffer_to_bytes_io(buffer, Dt<T>::kCode));
  EXPECT_TRUE(io.ok) << io.message;
  if (!io.ok) return {};
  const std::vector<uint8_t> bytes = bytes_of(io.value.get());
  std::vector<V> out(bytes.size() / sizeof(V));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(V));
  return out;
}
template <class T>
std::vector<T> read_values(lean_object* buffer) {
  return read_back<T, T>(buffer);
}
template <class T>
Words<T> words_of(lean_object* buffer) {
  return read_back<T, typename Dt<T>::Bits>(buffer);
}
// The words of host values.
template <class T>
Words<T> words(const std::vector<T>& values) {
  Words<T> w;
  w.reserve(values.size());
  for (T v : values) w.push_back(bits_of(v));
  return w;
}

// A Lean Array Nat of scalar-boxed entries (dims, axis maps, host index lists): raw (owned by the
// caller) and wrapped.
lean_object* nat_list(const std::vector<uint64_t>& entries);
inline Obj nats(const std::vector<uint64_t>& entries) {
  return Obj(nat_list(entries));
}

// The memory fraction in force (-1, with a failed expectation, when it cannot be read).
double memory_fraction();
// The out-of-memory tests' cap: after a synchronize and an empty_cache, what device 0 has reserved
// plus `headroom` bytes. set_memory_cap sets the memory fraction to `bytes` of the device's total;
// true when the call succeeded (restore the fraction memory_fraction read before).
uint64_t reserved_plus(uint64_t headroom);
bool set_memory_cap(uint64_t bytes);

// Runtime setting 2 (deterministic algorithms) on or off; true when the call succeeded.
inline bool set_deterministic(bool on) {
  Io io = take_io(torchlean_libtorch_set_setting(2, on ? 1 : 0));
  return io.ok;
}

// Sets the deterministic setting for a scope and restores its earlier value at scope exit.
class DeterministicScope {
 public:
  explicit DeterministicScope(bool on) {
    Io io = take_io(torchlean_libtorch_get_setting(2));
    saved_ = io.ok && lean_unbox(io.value.get()) != 0;
    EXPECT_TRUE(set_deterministic(on));
  }
  ~DeterministicScope() { set_deterministic(saved_); }
  DeterministicScope(const DeterministicScope&) = delete;
  DeterministicScope& operator=(const DeterministicScope&) = delete;

 private:
  bool saved_ = false;
};

uint32_t f32_bits(double widened);
uint64_t f64_bits(double v);

#if TLRT_HAVE_CUDA
// Base fixture of the tests that call a CUDA launcher directly (paths the ABI cannot reach): they
// run in the cuda pass only and skip visibly without a device; each test gets a stream of its own.
class LauncherSuite : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_requested()) GTEST_SKIP() << "launcher checks run in the cuda pass only";
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      GTEST_SKIP() << "no CUDA device visible: the launcher checks cannot run here";
    }
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  cudaStream_t stream_ = nullptr;
};
#endif

}  // namespace abi_test
