// An independent oracle for the configured binary formats of SPEC-runtime 10.8: words are decoded
// into MPFR values (or their special class), + - * / are computed by MPFR at precision F + 1 with
// the format's exponent range and subnormalisation (round to nearest, ties to even), and the
// special values, invalid results and overflow results are taken from the spec's encoding table.
// Nothing here shares code with kernels/binary/torchlean_binary.cuh.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tlrt::binary_oracle {

struct Format {
  int e = 0;
  int f = 0;
  long long bias = 0;
  int encoding = 0;
  int bytes() const { return (1 + e + f + 7) / 8; }
  std::string name() const;
};

enum class Op { add, sub, mul, div };
const char* op_name(Op op);

using Word = std::vector<std::uint8_t>;  // little-endian bytes, Format::bytes() of them

class Oracle {
 public:
  explicit Oracle(const Format& format);
  ~Oracle();
  Oracle(const Oracle&) = delete;
  Oracle& operator=(const Oracle&) = delete;

  Word compute(Op op, const Word& a, const Word& b);
  Word negate(const Word& a) const;
  bool equal(const Word& a, const Word& b);
  bool less(const Word& a, const Word& b);
  bool is_nan(const Word& a) const;

 private:
  struct State;
  Format format_;
  std::unique_ptr<State> state_;
};

// Words that over-represent special values: zeros, subnormals, the smallest normal, the largest
// finite value, infinities, NaNs with payloads, values near overflow and near ties, and second
// operands derived from the first (cancellation, near-halfway alignments).
class WordSource {
 public:
  WordSource(const Format& format, std::uint64_t seed);
  Word next();
  Word next_related(const Word& a);

 private:
  std::uint64_t draw();
  Word fields(bool neg, std::uint64_t exp, const Word& frac) const;
  Word random_fraction();
  Format format_;
  std::uint64_t state_;
};

// Pair count: TLRT_BINARY_PAIRS when set, else the given default.
std::uint64_t pair_count(std::uint64_t fallback);

}  // namespace tlrt::binary_oracle
