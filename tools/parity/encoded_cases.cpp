// Parity cases of encoded buffers (SPEC-runtime 9; SPEC-ops 8 for the encoded concat1d / slice1d):
// words of any width moved as bytes, so the subject must equal the reference backend byte for byte,
// and without a GPU (or with --oracle) the reference is measured against the bytes cut from the
// host inputs directly. Ops (as --only names them):
//   encoded_copy      of_encoded_io, copy, zeros_like (count = n), to_encoded_io
//   concat1d_encoded  [a; b] with an empty, a one-word and an equal second operand
//   slice1d_encoded   the whole buffer, empty windows at both ends, the interior, a random window
// at widths 1, 2, 3, 4, 5, 8, 16 and 129 and at 0, 1, 7, 1023, 65537 and --n / width words; the
// words are random bytes with a block of patterns first (-0, all ones, NaN-like payloads,
// +inf-like, +0, in the little-endian layout Lean writes). One row per op and width.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/random/splitmix.h"
#include "runtime/construct.h"
#include "runtime/encoded.h"
#include "tools/parity/parity_case.h"

namespace tlrt::parity {
namespace {

using tlrt::random::splitmix64_finalize;
using Bytes = std::vector<uint8_t>;

enum class EncodedOp { copy, concat, slice };

const char* name_of(EncodedOp op) {
  return op == EncodedOp::copy     ? "encoded_copy"
         : op == EncodedOp::concat ? "concat1d_encoded"
                                   : "slice1d_encoded";
}

constexpr uint64_t kWidths[] = {1, 2, 3, 4, 5, 8, 16, 129};
constexpr uint64_t kPatterns = 5;

// n words of `width` bytes drawn with `key`: the pattern block first, then random bytes.
Bytes operand(uint64_t n, uint64_t width, uint64_t key) {
  Bytes b(n * width);
  for (uint64_t k = 0; k < b.size(); ++k) b[k] = static_cast<uint8_t>(splitmix64_finalize(key + k));
  for (uint64_t i = 0; i < std::min(n, kPatterns); ++i) {
    uint8_t* w = b.data() + i * width;
    std::memset(w, i == 1 || i == 2 ? 0xFF : 0, width);
    if (i == 0) w[width - 1] = 0x80;  // -0
    if (i == 2) {
      w[width - 1] = 0x7F;  // a NaN-like word with a payload in its low byte
      w[0] = width > 1 ? 0x01 : 0x7F;
    }
    if (i == 3) w[width - 1] = 0x7F;  // +inf-like in the formats whose exponent fills the top byte
  }
  return b;
}

// got against want word by word into stats.
void compare_words(const Bytes& got, const Bytes& want, uint64_t width, const std::string& where,
                   Stats& stats) {
  if (got.size() != want.size()) {
    throw std::runtime_error("result has " + std::to_string(got.size()) + " bytes, expected " +
                             std::to_string(want.size()));
  }
  for (uint64_t i = 0; i < got.size() / width; ++i) {
    const uint8_t* g = got.data() + i * width;
    const uint8_t* w = want.data() + i * width;
    if (std::memcmp(g, w, width) == 0) {
      stats.record_equal();
      continue;
    }
    Deviation d;
    d.within = false;
    stats.record(d, [&] {
      return where + ", word " + std::to_string(i) + ": " + hex_word(g, width) + ", expected " +
             hex_word(w, width);
    });
  }
}

Bytes download_bytes(const Buffer& b) {
  Bytes out(b.bytes());
  download_encoded(b, out.data(), "parity");
  return out;
}

struct Recipe {
  uint64_t n = 0;      // words of the (first) operand
  uint64_t m = 0;      // concat: words of b
  uint64_t start = 0;  // slice
  uint64_t len = 0;    // slice
  uint64_t key = 0;
};

class EncodedCase : public ParityCase {
 public:
  EncodedCase(EncodedOp op, uint64_t width, Recipe recipe) : op_(op), width_(width), r_(recipe) {}

  std::string op() const override { return name_of(op_); }
  std::string label() const override { return op() + " [width " + std::to_string(width_) + "]"; }
  Dtype dtype() const override { return Dtype::encoded; }
  std::string shape() const override {
    std::string s = "width = " + std::to_string(width_) + ", n = " + std::to_string(r_.n);
    if (op_ == EncodedOp::concat) s += ", m = " + std::to_string(r_.m);
    if (op_ == EncodedOp::slice) {
      s += ", start = " + std::to_string(r_.start) + ", len = " + std::to_string(r_.len);
    }
    return s;
  }
  std::string oracle_name() const override { return "the input bytes"; }

  void evaluate(const RunContext& ctx, RowTable& rows) override {
    Row& vs_reference = rows.row(label(), Dtype::encoded, "reference", Bound::bit_exact());
    Row* vs_oracle = ctx.with_oracle ? &rows.row(label(), Dtype::encoded, "ref vs input bytes",
                                                 Bound::bit_exact())
                                     : nullptr;
    try {
      a_ = operand(r_.n, width_, r_.key);
      if (op_ == EncodedOp::concat) b_ = operand(r_.m, width_, splitmix64_finalize(r_.key ^ 1));
      const std::vector<Bytes> want = run(Backend::reference);
      const std::vector<Bytes> got = run(ctx.subject);
      const std::vector<Bytes> cut = expected();
      for (size_t k = 0; k < want.size(); ++k) {
        const std::string where = shape() + ", output " + std::to_string(k);
        compare_words(got[k], want[k], width_, where, vs_reference.stats);
        if (vs_oracle != nullptr) compare_words(want[k], cut[k], width_, where, vs_oracle->stats);
      }
    } catch (const std::exception& e) {
      if (vs_reference.error.empty()) vs_reference.error = shape() + ": " + e.what();
    }
  }

 private:
  std::vector<Bytes> run(Backend backend) const {
    const char* op = "parity";
    const std::unique_ptr<Buffer> a = upload_encoded(backend, width_, a_.data(), a_.size(), op);
    switch (op_) {
      case EncodedOp::copy: {
        const std::unique_ptr<Buffer> c = copy_buffer(*a, op);
        const std::unique_ptr<Buffer> z = make_zeros_like(*a, r_.n, op);
        return {download_bytes(*a), download_bytes(*c), download_bytes(*z)};
      }
      case EncodedOp::concat: {
        const std::unique_ptr<Buffer> b = upload_encoded(backend, width_, b_.data(), b_.size(), op);
        return {download_bytes(*concat_encoded(*a, *b, r_.n, r_.m, op))};
      }
      case EncodedOp::slice:
        return {download_bytes(*slice_encoded(*a, r_.n, r_.start, r_.len, op))};
    }
    return {};
  }

  // The results cut from the host inputs.
  std::vector<Bytes> expected() const {
    switch (op_) {
      case EncodedOp::copy:
        return {a_, a_, Bytes(a_.size(), 0)};
      case EncodedOp::concat: {
        Bytes out = a_;
        out.insert(out.end(), b_.begin(), b_.end());
        return {out};
      }
      case EncodedOp::slice:
        return {Bytes(a_.begin() + r_.start * width_, a_.begin() + (r_.start + r_.len) * width_)};
    }
    return {};
  }

  EncodedOp op_;
  uint64_t width_;
  Recipe r_;
  Bytes a_, b_;
};

std::vector<uint64_t> sizes_for(uint64_t n, uint64_t width) {
  std::vector<uint64_t> sizes = {0, 1, 7, 1023, 65537};
  const uint64_t words = std::max<uint64_t>(1, n / width);
  if (std::find(sizes.begin(), sizes.end(), words) == sizes.end()) sizes.push_back(words);
  return sizes;
}

CaseList make_encoded_cases(const Options& options) {
  CaseList list;
  uint64_t key = 0x5EED0000 + options.seed;
  for (uint64_t width : kWidths) {
    for (uint64_t s : sizes_for(options.n, width)) {
      ++key;
      list.push_back(
          std::make_unique<EncodedCase>(EncodedOp::copy, width, Recipe{s, 0, 0, 0, key}));
      for (uint64_t m : {uint64_t{0}, uint64_t{1}, s}) {
        list.push_back(
            std::make_unique<EncodedCase>(EncodedOp::concat, width, Recipe{s, m, 0, 0, key + m}));
      }
      const uint64_t start = splitmix64_finalize(key) % (s + 1);
      const uint64_t len = splitmix64_finalize(key ^ s) % (s - start + 1);
      for (Recipe r : {Recipe{s, 0, 0, s, key}, Recipe{s, 0, 0, 0, key}, Recipe{s, 0, s, 0, key},
                       Recipe{s, 0, s / 2, s - s / 2, key}, Recipe{s, 0, start, len, key}}) {
        list.push_back(std::make_unique<EncodedCase>(EncodedOp::slice, width, r));
      }
    }
  }
  return list;
}

const FamilyRegistration kEncodedFamily("encoded", &make_encoded_cases);

}  // namespace
}  // namespace tlrt::parity
