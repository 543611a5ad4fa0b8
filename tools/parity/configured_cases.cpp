// Parity cases of the configured binary formats (SPEC-runtime 9 and 10.8) through generated-kernel
// runs: one source per format computes, with torchlean_binary.cuh's operators,
//   v2 = x + y; v3 = v2 * y; v4 = v3 - x; v5 = v4 / y;
//   out = v5 <= x ? (v5 == y ? x : -v5) : v5
// and runs through kernel_run_encoded's runtime path on encoded buffers: on the subject backend
// (NVRTC with the hardware shortcuts where the format is an IEEE one) and on the reference backend
// (the same source and header compiled by the host C++ compiler, software paths only). The words
// must be equal bit for bit. Inputs: every pair of the 40 words with sign, exponent {0, 1,
// max - 1, all ones} and fraction {0, 1, top bit, all ones, all ones but the top bit} first, then
// random words whose second operand is, three times in four, the first one as is, with its sign
// flipped (cancellation) or with its lowest bit flipped (near ties). Formats: binary16, bfloat16,
// binary32 and binary64 as configured, E5F10 with bias 13, E8F23 in encoding 1, E4F3 in encodings 2
// and 3, E11F60, E15F112 and E30F1000. The oracle (without a GPU, or with --oracle; built when MPFR
// is installed) stages the same expression with tests/binary_oracle.h's MPFR evaluation, which
// shares no code with the header.
#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/random/splitmix.h"
#include "runtime/encoded.h"
#include "runtime/kernel_run.h"
#include "tools/parity/parity_case.h"

#if TLRT_HAVE_MPFR
#include "tests/binary_oracle.h"
#endif

namespace tlrt::parity {
namespace {

using tlrt::random::splitmix64_finalize;
using Bytes = std::vector<uint8_t>;

struct Format {
  int e, f;
  long long bias;
  int encoding;
  uint64_t max_words;  // the case size cap (the widest formats are slow on the host)
  uint64_t width() const { return static_cast<uint64_t>((1 + e + f + 7) / 8); }
  std::string name() const {
    return "E" + std::to_string(e) + "F" + std::to_string(f) + " bias " + std::to_string(bias) +
           " enc " + std::to_string(encoding);
  }
};

const Format kFormats[] = {
    {5, 10, 15, 0, 1 << 16},
    {8, 7, 127, 0, 1 << 16},
    {8, 23, 127, 0, 1 << 16},
    {11, 52, 1023, 0, 1 << 16},
    {5, 10, 13, 0, 1 << 16},
    {8, 23, 127, 1, 1 << 16},
    {4, 3, 7, 2, 1 << 16},
    {4, 3, 7, 3, 1 << 16},
    {11, 60, 1023, 0, 1 << 14},
    {15, 112, 16383, 0, 1 << 14},
    {30, 1000, (1LL << 29) - 1, 0, 1 << 10},
};

std::string configured_source(const Format& fmt) {
  std::string t = "#include \"torchlean_binary.cuh\"\n";
  t += "using scalar = TLBinary<" + std::to_string(fmt.e) + ", " + std::to_string(fmt.f) + ", " +
       std::to_string(fmt.bias) + "LL, " + std::to_string(fmt.encoding) + ">;\n";
  t += "extern \"C\" __global__ void torchlean_kernel(const scalar* input0, unsigned long long "
       "size0, const scalar* input1, unsigned long long size1, scalar* output, unsigned long long* "
       "error, unsigned long long count) {\n";
  t += "unsigned long long index = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n";
  t += "if (index >= count) return;\n";
  for (int k = 0; k < 2; ++k) {
    const std::string K = std::to_string(k);
    t += "if (index >= size" + K +
         ") {\nif (atomicCAS(error, 0ULL, 1ULL) == 0ULL) {\nerror[1] = " + K +
         "ULL;\nerror[2] = index;\nerror[3] = size" + K + ";\n}\nreturn;\n}\n";
    t += "scalar v" + K + " = input" + K + "[index];\n";
  }
  t += "scalar v2 = v0 + v1;\nscalar v3 = v2 * v1;\nscalar v4 = v3 - v0;\nscalar v5 = v4 / v1;\n";
  t += "scalar v6;\nif (v5 <= v0) {\nif (v5 == v1) {\nv6 = v0;\n} else {\nv6 = -v5;\n}\n} else {\n"
       "v6 = v5;\n}\noutput[index] = v6;\n}\n";
  return t;
}

// Bit k of a word (bit k mod 8 of byte k / 8).
void set_bit(uint8_t* w, int k, bool on) {
  if (on) {
    w[k / 8] = static_cast<uint8_t>(w[k / 8] | (1u << (k % 8)));
  } else {
    w[k / 8] = static_cast<uint8_t>(w[k / 8] & ~(1u << (k % 8)));
  }
}

// The word with the given sign, exponent field and fraction pattern.
void fields(const Format& fmt, uint8_t* w, bool neg, uint64_t exp, int frac_pattern) {
  std::memset(w, 0, fmt.width());
  for (int k = 0; k < fmt.f; ++k) {
    bool on = false;
    switch (frac_pattern) {
      case 0:
        on = false;
        break;  // zero
      case 1:
        on = k == 0;
        break;  // the lowest bit
      case 2:
        on = k == fmt.f - 1;
        break;  // the top bit only (IEEE: quiet NaN)
      case 3:
        on = true;
        break;  // all ones
      default:
        on = k != fmt.f - 1;
        break;  // all but the top bit (IEEE: signalling NaN)
    }
    set_bit(w, k, on);
  }
  for (int k = 0; k < fmt.e; ++k) set_bit(w, fmt.f + k, ((exp >> k) & 1u) != 0);
  set_bit(w, fmt.e + fmt.f, neg);
}

// A random word of the format (bits above the sign cleared) from stream `key`.
void random_word(const Format& fmt, uint8_t* w, uint64_t key, uint64_t i) {
  const uint64_t width = fmt.width();
  for (uint64_t j = 0; j < width; ++j) {
    w[j] = static_cast<uint8_t>(splitmix64_finalize(key + i * width + j));
  }
  for (int bit = 1 + fmt.e + fmt.f; bit < static_cast<int>(8 * width); ++bit) {
    set_bit(w, bit, false);
  }
}

bool bit_of(const uint8_t* w, int k) {
  return ((w[k / 8] >> (k % 8)) & 1u) != 0;
}

// Operand k (0 or 1) of n words.
Bytes operand(const Format& fmt, uint64_t n, int k, uint64_t seed) {
  const uint64_t width = fmt.width();
  Bytes b(n * width);
  const uint64_t all = (uint64_t{1} << fmt.e) - 1;
  const uint64_t exps[] = {0, 1, all - 1, all};
  const uint64_t first_key = splitmix64_finalize(seed), second_key = splitmix64_finalize(seed + 1);
  for (uint64_t i = 0; i < n; ++i) {
    uint8_t* w = b.data() + i * width;
    if (i < 40 * 40) {
      // Every pair of the 40 special words: operand 0 walks the rows, operand 1 the columns.
      const uint64_t pick = k == 0 ? i / 40 : i % 40;
      fields(fmt, w, (pick & 1) != 0, exps[(pick / 2) % 4], static_cast<int>(pick / 8));
    } else if (k == 0 || i % 4 == 3) {
      random_word(fmt, w, k == 0 ? first_key : second_key, i);
    } else {
      // The first operand's word with its sign (cancellation) or its lowest bit flipped, or as is.
      random_word(fmt, w, first_key, i);
      if (i % 4 == 0) set_bit(w, fmt.e + fmt.f, !bit_of(w, fmt.e + fmt.f));
      if (i % 4 == 1) set_bit(w, 0, !bit_of(w, 0));
    }
  }
  return b;
}

class ConfiguredCase : public ParityCase {
 public:
  ConfiguredCase(const Format& fmt, uint64_t n) : fmt_(fmt), n_(n) {}

  std::string op() const override { return "kernel_run_encoded"; }
  std::string label() const override { return op() + " [" + fmt_.name() + "]"; }
  Dtype dtype() const override { return Dtype::encoded; }
  std::string shape() const override {
    return fmt_.name() + ", width " + std::to_string(fmt_.width()) + ", n = " + std::to_string(n_);
  }
  std::string oracle_name() const override {
#if TLRT_HAVE_MPFR
    return "MPFR at precision F + 1, staged";
#else
    return {};
#endif
  }

  void evaluate(const RunContext& ctx, RowTable& rows) override {
    Row& vs_reference = rows.row(label(), Dtype::encoded, "reference", Bound::bit_exact());
#if TLRT_HAVE_MPFR
    Row* vs_oracle = ctx.with_oracle
                         ? &rows.row(label(), Dtype::encoded, "ref vs MPFR", Bound::bit_exact())
                         : nullptr;
#endif
    try {
      const uint64_t seed = splitmix64_finalize(ctx.options.seed ^ (fmt_.width() << 20) ^
                                                static_cast<uint64_t>(fmt_.encoding) ^ n_);
      a_ = operand(fmt_, n_, 0, seed);
      b_ = operand(fmt_, n_, 1, seed);
      const Bytes want = run(Backend::reference);
      compare(run(ctx.subject), want, vs_reference.stats);
#if TLRT_HAVE_MPFR
      if (vs_oracle != nullptr) compare(want, oracle(), vs_oracle->stats);
#endif
    } catch (const std::exception& e) {
      if (vs_reference.error.empty()) vs_reference.error = shape() + ": " + e.what();
    }
  }

 private:
  Bytes run(Backend backend) const {
    const char* op = "kernel_run_encoded";
    const uint64_t width = fmt_.width();
    const std::unique_ptr<Buffer> a = upload_encoded(backend, width, a_.data(), a_.size(), op);
    const std::unique_ptr<Buffer> b = upload_encoded(backend, width, b_.data(), b_.size(), op);
    const std::unique_ptr<Buffer> out =
        kernel_run_encoded_buffers(configured_source(fmt_), {a.get(), b.get()}, width, n_, op);
    Bytes bytes(out->bytes());
    download_encoded(*out, bytes.data(), op);
    return bytes;
  }

#if TLRT_HAVE_MPFR
  Bytes oracle() const {
    namespace bo = tlrt::binary_oracle;
    bo::Format f;
    f.e = fmt_.e;
    f.f = fmt_.f;
    f.bias = fmt_.bias;
    f.encoding = fmt_.encoding;
    bo::Oracle o(f);
    const uint64_t width = fmt_.width();
    Bytes out(n_ * width);
    for (uint64_t i = 0; i < n_; ++i) {
      const bo::Word x(a_.begin() + i * width, a_.begin() + (i + 1) * width);
      const bo::Word y(b_.begin() + i * width, b_.begin() + (i + 1) * width);
      const bo::Word v2 = o.compute(bo::Op::add, x, y);
      const bo::Word v3 = o.compute(bo::Op::mul, v2, y);
      const bo::Word v4 = o.compute(bo::Op::sub, v3, x);
      const bo::Word v5 = o.compute(bo::Op::div, v4, y);
      const bool le = o.less(v5, x) || o.equal(v5, x);
      const bo::Word v6 = le ? (o.equal(v5, y) ? x : o.negate(v5)) : v5;
      std::copy(v6.begin(), v6.end(), out.begin() + i * width);
    }
    return out;
  }
#endif

  void compare(const Bytes& got, const Bytes& want, Stats& stats) const {
    const uint64_t width = fmt_.width();
    if (got.size() != want.size()) {
      throw std::runtime_error("result has " + std::to_string(got.size()) + " bytes, expected " +
                               std::to_string(want.size()));
    }
    for (uint64_t i = 0; i < n_; ++i) {
      const uint8_t* g = got.data() + i * width;
      const uint8_t* w = want.data() + i * width;
      if (std::memcmp(g, w, width) == 0) {
        stats.record_equal();
        continue;
      }
      Deviation d;
      d.within = false;
      stats.record(d, [&] {
        return shape() + ", word " + std::to_string(i) + ": x " +
               hex_word(a_.data() + i * width, width) + ", y " +
               hex_word(b_.data() + i * width, width) + ": got " + hex_word(g, width) +
               ", expected " + hex_word(w, width);
      });
    }
  }

  Format fmt_;
  uint64_t n_;
  Bytes a_, b_;
};

CaseList make_configured_cases(const Options& options) {
  CaseList cases;
  if (kernels::host_compiler().empty()) return cases;  // the reference side runs on the host
  for (const Format& fmt : kFormats) {
    const uint64_t big = std::min<uint64_t>(std::max<uint64_t>(options.n, 1), fmt.max_words);
    for (uint64_t n : {uint64_t{1}, uint64_t{40 * 40 + 7}, big}) {
      if (n == 40 * 40 + 7 && big <= n) continue;
      cases.push_back(std::make_unique<ConfiguredCase>(fmt, n));
    }
  }
  return cases;
}

const FamilyRegistration kConfiguredFamily("configured", &make_configured_cases);

}  // namespace
}  // namespace tlrt::parity
