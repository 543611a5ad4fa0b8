// Generation of one call: arguments for every parameter of a symbol from its role, drawn from
// the batch's buffer pool, the session's fixed objects and the seeded stream, with at most one
// deliberate defect per call (a released or non-buffer argument, mismatched operands, an
// extreme scalar or a malformed array).
#pragma once

#include <lean/lean.h>

#include <string>
#include <vector>

#include "tools/fuzz/fuzz_model.h"
#include "tools/fuzz/random_stream.h"

namespace tlrt_fuzz {

// Objects that live for the whole session (dropped at its end) and stand in where the spec
// allows other objects.
struct Fixtures {
  std::vector<lean_object*> non_buffers;  // a String, a FloatArray, a ByteArray, a structure
  std::vector<std::string> non_buffer_names;
  lean_object* foreign_external = nullptr;
  std::vector<lean_object*> formats;  // FloatFormat stand-ins
  // An encoded buffer of 4 binary16 words, passed only to symbols that must reject it
  // (rejects_encoded), so that no call changes it; null when the library cannot make one.
  lean_object* encoded = nullptr;
};

struct GenerationLimits {
  uint64_t large_elements = 262144;  // upper end of "large" generated sizes
  size_t max_pool_entries = 96;
  uint64_t pool_budget_bytes = 64ull << 20;  // payload bytes the pool may hold
};

// Creates pool buffers for the generator through the library (SessionDriver implements it).
class BufferSource {
 public:
  virtual ~BufferSource() = default;
  // A new live buffer of `size` scalars of `dtype`; returns its pool index, or -1.
  virtual int make_buffer(uint64_t size, uint8_t dtype) = 0;
  // A new live buffer holding `values` (rounded to `dtype`); returns its pool index, or -1.
  virtual int make_buffer_of(const std::vector<double>& values, uint8_t dtype) = 0;
  // Payload bytes the pool may still take (0 when it holds its most entries).
  virtual uint64_t room_bytes() const = 0;
  // A new released buffer; returns its pool index, or -1.
  virtual int make_released_buffer(uint64_t size, uint8_t dtype) = 0;
};

class CallGenerator {
 public:
  CallGenerator(RandomStream& rng, std::vector<PoolBuffer>& pool, const Fixtures& fixtures,
                BufferSource& source, const GenerationLimits& limits)
      : rng_(rng), pool_(pool), fixtures_(fixtures), source_(source), limits_(limits) {}

  CallPlan plan(const FuzzSymbol& symbol);

  // Shared by the session when it seeds a batch.
  uint64_t element_count();
  double special_or_random_double();
  std::vector<double> host_values(uint64_t n);
  // One of the special values (NaNs, infinities, signed zeros, subnormals, extremes).
  double special_double();

 private:
  enum class Defect {
    none,
    released_buffer,
    non_buffer,
    foreign_external,
    encoded_buffer,
    size_mismatch,
    dtype_mismatch,
    extreme_scalar,
    bad_array,
  };

  Defect choose_defect(const FuzzSymbol& symbol);
  void buffer_arg(CallPlan& plan, size_t k, Defect defect, size_t target, int anchor,
                  bool same_shape);
  void scalar_arg(CallPlan& plan, const FuzzSymbol& symbol, size_t k, bool extreme);
  void object_arg(CallPlan& plan, const FuzzSymbol& symbol, size_t k, bool malformed);
  // Shape extents of a call: half the time a factorisation of `target_product` (the first
  // buffer operand's size), so shaped ops get past their size checks.
  void dimensions(CallPlan& plan, const std::vector<size_t>& params, uint64_t target_product);
  // Gather/scatter calls: most of the time, an `indices` list of length k whose entries are
  // mostly in range of `rows` (or `n`), some just past it and some at 2^32 - 1.
  void index_list(CallPlan& plan, const FuzzSymbol& symbol);
  void set_nat_array(CallPlan& plan, size_t k, const std::vector<uint64_t>& values);
  int pick_live(int avoid_size_of = -1);
  int matching(int anchor);
  int released();
  void set_buffer(PlannedArg& arg, int index);
  std::vector<uint64_t> factor(uint64_t product, size_t parts);

  // Consistent operands for the op families (operand_builder.cpp) use the helpers above.
  friend class OperandBuilder;

  RandomStream& rng_;
  std::vector<PoolBuffer>& pool_;
  const Fixtures& fixtures_;
  BufferSource& source_;
  const GenerationLimits& limits_;
};

std::string describe_double(double v);

}  // namespace tlrt_fuzz
