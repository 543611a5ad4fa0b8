// The fuzzer's model of a run: the symbols it can call and what each parameter means, the pool
// of buffer objects a batch owns, one planned call with its arguments, what the spec says the
// call must do (its judgement), and the outcome classes a call can end in.
#pragma once

#include <lean/lean.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tools/fuzz/symbol_table.h"

namespace tlrt_fuzz {

// ---- symbols
// -------------------------------------------------------------------------------------

// What a parameter is, from its Lean type and C name; it picks the argument generator.
enum class ParamRole : uint8_t {
  buffer,
  float_array,
  byte_array,
  string,
  nat_array,
  buffer_array,
  byte_array_array,
  float_array_array,
  format_object,
  dtype_code,     // UInt8 Dtype: 0 float32, 1 float64, anything else rejected
  token,          // ignored UInt32 (token, u)
  flag,           // 0/1 switches (transposeA, hasMask, enabled)
  small_index,    // axis, depth
  setting_id,     // runtime setting 0..8
  device_index,   // device ordinal
  format_code,    // kernel_run format 0..2
  element_count,  // UInt32 number of scalars to create (n, count, size)
  dimension,      // any other UInt32: a shape extent
  key,            // UInt64 random-stream key
  word_width,     // UInt64 bytes per word
  request_size,   // UInt64 element count of a request (count, n, size)
  other_u64,
  other_u8,
  other_u16,
  signed_value,  // Int32 / Int64
  probability,   // Float in [0,1] by contract (p, keepProb)
  fraction,      // Float memory fraction
  scalar,        // any other Float
  host_size,     // size_t element count (alloc)
  record,        // raw native record pointer
  unknown,
};

// The spec rule that judges a call (call_rules.cpp). `generic` knows only the universal rules.
enum class RuleKind : uint8_t {
  generic,
  same_shape,       // elementwise, optimizer: every buffer the same size and dtype
  whole_reduction,  // same_shape inputs, one-element result
  constructor,      // n scalars of a dtype code
  constructor_from_array,
  release,
  release_then,
  size_query,
  format_query,
  dtype_query,
  zeros_like,
  copy,
  copy_and_release,
  fail,
  to_float_array,
  to_bytes,
  of_bytes,
  of_encoded,
  to_encoded,
  kernel_run,
  set_device,
  get_setting,
  set_setting,
  set_memory_fraction,
  device_info,
  always_succeeds,
  float32_bytes_to_float_array,
  unbox,
  alloc,
  sized_op,  // shape, axis-reduction, matmul and gather/scatter ops: sizes from their arguments
};

enum class SkipReason : uint8_t { none, unexported, raw_record, unsupported_type, unmodelled };

struct FuzzSymbol {
  const SymbolSpec* spec = nullptr;
  void* address = nullptr;
  std::string stem;        // symbol without its torchlean_* prefix: what error messages name
  std::string wrapper_op;  // snake_case name of the Lean API wrapping it ("device_info"), or ""
  RuleKind rule = RuleKind::generic;
  std::vector<ParamRole> roles;
  int result_buffers = 0;  // buffers in a successful result (pairs and triples count each)
  SkipReason skip = SkipReason::none;
  std::string skip_detail;
  bool io() const { return spec->effect == Effect::io; }
};

// Resolves every table row against the loaded library and classifies its parameters.
std::vector<FuzzSymbol> build_catalog();
const char* rule_name(RuleKind rule);
const char* role_name(ParamRole role);

// ---- buffers
// ---------------------------------------------------------------------------------------

enum class BufferState : uint8_t { live, released, unknown };

struct PoolBuffer {
  lean_object* object = nullptr;  // one owned reference
  uint64_t size = 0;
  uint8_t dtype = 0;  // 0 float32, 1 float64
  BufferState state = BufferState::live;
  int id = 0;  // number within the batch, for descriptions
};

inline uint64_t dtype_width(uint8_t dtype) {
  return dtype == 1 ? 8 : 4;
}

// ---- one call
// --------------------------------------------------------------------------------------

enum class ArgKind : uint8_t {
  scalar,
  live_buffer,
  released_buffer,
  unknown_buffer,    // a buffer whose state a call may have changed
  non_buffer,        // a Lean object that is not external (String, FloatArray, structure)
  foreign_external,  // an external object of another class
  encoded_buffer,    // a live encoded buffer (dtype code 2), a session fixture
  float_array,
  byte_array,
  string,
  nat_array,
  buffer_array,
  host_array_array,
  format_object,
};

struct PlannedArg {
  ArgKind kind = ArgKind::scalar;
  ArgValue value;
  int pool_index = -1;           // buffers: index into the batch pool
  uint64_t length = 0;           // arrays: elements (bytes for ByteArray)
  uint64_t product = 1;          // Array Nat: product of the entries
  std::vector<uint64_t> values;  // Array Nat: the entries
  bool bad_element = false;      // arrays: an element the spec rejects
  std::string text;              // for descriptions
};

enum class Expect : uint8_t { success, failure, either };

struct Judgement {
  Expect expect = Expect::either;
  bool may_panic = false;    // IO symbols: a panic is allowed (isolated run)
  bool isolate = false;      // run in a child process
  std::string reason;        // why this outcome is expected
  bool exact_panic = false;  // a panic must carry exactly exact_panic_message
  std::string exact_panic_message;
  bool skip_result_check = false;    // the result is an argument passed through unchecked
  bool owned_record_result = false;  // the returned record must go to drop_unboxed
  std::vector<size_t> releases;      // buffer parameters a normal return releases
  bool state_unknown_after = false;  // buffer arguments may have changed state
  int64_t expected_scalar = -1;      // an integer result the spec fixes (size, dtype, release)
  bool check_result_shape = false;   // every result buffer: operand size (or 1) and dtype
  uint64_t expected_result_size = 0;
  uint8_t expected_result_dtype = 0;
};

// A generated-kernel run whose source the generator wrote (operand_builder.cpp): each of its
// inputs read at the output index, so the run succeeds exactly when every input holds at least
// `count` scalars of the source's type.
struct KnownKernel {
  bool set = false;
  uint32_t format = 0;          // 0 float, 1 double
  std::vector<uint64_t> sizes;  // scalars of each input
};

struct CallPlan {
  const FuzzSymbol* symbol = nullptr;
  std::vector<PlannedArg> args;
  std::vector<lean_object*> owned;     // created for this call, dropped after it
  std::vector<int> transient_buffers;  // pool entries made for this call, dropped after it
  KnownKernel kernel;                  // set when the source is the generator's
  Judgement judgement;
  std::string description;
};

// Outcome classes. The first three are acceptable; the rest are findings.
enum class Outcome : uint8_t {
  ok,
  io_error,
  clean_panic,
  crash,
  sanitizer_report,
  wrong_success,
  unexpected_error,
  unexpected_panic,
  malformed_error,
  malformed_result,
  counter_leak,
  timeout,
  replay_diverged,
  count_,
};
const char* outcome_name(Outcome o);
inline bool outcome_acceptable(Outcome o) {
  return o == Outcome::ok || o == Outcome::io_error || o == Outcome::clean_panic;
}

}  // namespace tlrt_fuzz
