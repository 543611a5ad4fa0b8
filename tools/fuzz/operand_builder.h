// Consistent operands for the op families. A call whose shape arguments and buffers are drawn
// independently almost never passes an op's validation, so the kernels behind it would run only
// on empty or tiny inputs. Without a planned defect, 60% of the calls of a modelled family get a
// shape drawn for that op (small, medium, and large shapes at the edges of the CUDA backend's
// schedule rules) and fresh operands of exactly the sizes it needs, mostly finite values with a
// few special ones; the judge then holds them to success and to the result sizes of the spec.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "tools/fuzz/call_generator.h"

namespace tlrt_fuzz {

class OperandBuilder {
 public:
  OperandBuilder(CallGenerator& generator, CallPlan& plan, const FuzzSymbol& symbol);

  // For a modelled family, 60% of the time: replaces the plan's shape arguments and operands
  // with a consistent set. Otherwise, and for other symbols, the plan stays as it is.
  void build();

  // Whether the symbol's family has consistent operands here.
  static bool models(const FuzzSymbol& symbol);

 private:
  using Family = void (OperandBuilder::*)();
  static Family family_of(const SymbolSpec& spec);
  // How fresh operands are filled.
  enum class Fill : uint8_t {
    mixed,   // the generator's values: a quarter specials (NaN, infinities, extremes)
    finite,  // uniform in [-1, 1), and in 30% of the buffers one to four special values
    mask,    // 0 and 1 at a density drawn per buffer (all blocked and all allowed included)
    offset,  // 1e6 plus uniform noise in [-1, 1): the layer norm's large common offset
  };

  void scans();
  void layer_norm();
  void softmax();
  void fft();
  void attention();
  void axis_reductions();
  void shape_ops();
  void broadcast_maps();
  void matmul();
  void indexing();
  void conv_pool();
  void kernel_runs();

  int param(const char* name) const;
  void set_u32(const char* name, uint64_t value);
  void set_scalar(const char* name, double value);
  void set_array(const char* name, const std::vector<uint64_t>& values);
  // A fresh buffer of `size` scalars of dtype_ for parameter `name` (true when the op has no
  // such parameter); false when the pool has no room.
  bool set_operand(const char* name, uint64_t size, Fill fill);
  // A pool buffer holding `contents` for argument k, dropped after the call.
  bool set_fresh(int k, const std::vector<double>& contents);
  // A host index list of length `count` for parameter `name`: in range of `range`, with repeats,
  // and some entries past it or at 2^32 - 1.
  void set_indices(const char* name, uint64_t count, uint64_t range);
  std::vector<double> values(uint64_t n, Fill fill);
  // True when `scalars` more scalars of dtype_ fit the pool.
  bool fits(uint64_t scalars) const;
  Fill data_fill();
  uint64_t pick(const std::vector<uint64_t>& choices);

  CallGenerator& g_;
  RandomStream& rng_;
  CallPlan& plan_;
  const FuzzSymbol& symbol_;
  std::string name_;  // the full symbol name
  std::string op_;    // without its torchlean_* prefix
  uint8_t dtype_ = 0;
};

// A generated-kernel source in the generator's form (SPEC-runtime 10.2, 10.3): `inputs` inputs of
// `type` ("float" or "double"), each read at the output index after its bounds check (a read past
// an input's size fills the error record), the sum plus 0.5 written.
std::string generated_kernel_source(uint64_t inputs, const char* type);

}  // namespace tlrt_fuzz
