// The spec rules of SPEC-runtime sections 2-10 and SPEC-ops as the fuzzer applies them. A
// judgement is deliberately conservative: `success` only where the spec leaves no way to fail
// (and the new payloads fit the pool budget), `failure` only where it names the rejection, and
// `either` everywhere else, so a symbol without a rule of its own (a new op family) is still
// held to the universal rules: a non-buffer, foreign or released buffer argument must fail (an
// encoded one too, for the numerical operations: rejects_encoded), and nothing may crash, trip a
// sanitizer, leak, or fail without a message naming the op.
#include "tools/fuzz/call_rules.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "tools/fuzz/lean_values.h"
#include "tools/fuzz/rule_detail.h"

namespace tlrt_fuzz {

using namespace rule_detail;

bool rejects_encoded(const FuzzSymbol& symbol) {
  const char* name = symbol.spec->symbol;
  return std::strcmp(symbol.spec->table, "symbols-ops.tsv") == 0 &&
         std::strcmp(name, "torchlean_cuda_buffer_concat1d") != 0 &&
         std::strcmp(name, "torchlean_cuda_buffer_slice1d") != 0;
}

namespace {

int param_with_role(const CallPlan& plan, ParamRole role) {
  for (size_t k = 0; k < plan.args.size(); ++k) {
    if (plan.symbol->roles[k] == role) return static_cast<int>(k);
  }
  return -1;
}

bool valid_dtype(uint8_t code) {
  return code == 0 || code == 1;
}

// Symbols that accept released buffers (SPEC-runtime 2.3): size, release, format, downloads.
bool tolerates_released(RuleKind rule) {
  switch (rule) {
    case RuleKind::release:
    case RuleKind::release_then:
    case RuleKind::size_query:
    case RuleKind::format_query:
    case RuleKind::to_float_array:
    case RuleKind::to_bytes:
    case RuleKind::unbox:
      return true;
    default:
      return false;
  }
}

// The mask argument of the legacy attention forward with hasMask != 1: never read.
bool unread_attention_mask(const CallPlan& plan, size_t k) {
  if (std::strcmp(plan.symbol->spec->symbol, "torchlean_libtorch_attention_fwd") != 0) return false;
  if (std::strcmp(plan.symbol->spec->params[k].name, "mask") != 0) return false;
  const int flag = param_named(plan, "hasMask");
  return flag >= 0 && plan.args[static_cast<size_t>(flag)].value.u32 != 1;
}

// What a call's arguments are, for the rules every buffer parameter obeys.
struct ArgSummary {
  bool non_buffer = false, foreign = false, released = false, unknown_state = false;
  bool encoded = false;
  std::vector<const PoolBuffer*> live;  // the live buffer operands, in parameter order
  bool bad_array = false, nat_arrays = false;
};

ArgSummary summarize_args(const CallPlan& plan, const RuleContext& c, Judgement& j) {
  const FuzzSymbol& s = *plan.symbol;
  ArgSummary args;
  for (size_t k = 0; k < plan.args.size(); ++k) {
    const PlannedArg& a = plan.args[k];
    // release_then returns `keep` with one more reference and never reads it (SPEC-runtime
    // 2.3), so whatever object it is passes through.
    if (s.rule == RuleKind::release_then && k == 1) {
      if (a.kind != ArgKind::live_buffer && a.kind != ArgKind::released_buffer) {
        j.skip_result_check = true;
      }
      continue;
    }
    // attention_fwd reads its mask only with hasMask = 1 (with hasMask > 1 it fails first).
    if (unread_attention_mask(plan, k)) continue;
    switch (a.kind) {
      case ArgKind::non_buffer:
        args.non_buffer = true;
        break;
      case ArgKind::foreign_external:
        args.foreign = true;
        break;
      case ArgKind::encoded_buffer:
        args.encoded = true;
        break;
      case ArgKind::released_buffer:
        args.released = true;
        break;
      case ArgKind::unknown_buffer:
        args.unknown_state = true;
        break;
      case ArgKind::live_buffer:
        args.live.push_back(&c.pool[a.pool_index]);
        break;
      case ArgKind::nat_array:
        args.nat_arrays = true;
        if (a.bad_element) args.bad_array = true;
        break;
      case ArgKind::buffer_array:
        if (a.bad_element) args.bad_array = true;
        break;
      default:
        break;
    }
  }
  return args;
}

// The rules on buffer parameters every call obeys (SPEC-runtime 2.2, 2.3, 3); false when none
// of them decides the call.
bool universal_rules(const FuzzSymbol& s, const ArgSummary& args, Verdict& v, Judgement& j) {
  if (args.non_buffer) {
    // A non-external object panics, also inside IO symbols.
    v.failure("a non-buffer object where a Buffer is expected");
    j.may_panic = true;
  } else if (args.foreign) {
    // An external object of another class: a C++ error, so a panic or an IO error.
    v.failure("an external object of another class where a Buffer is expected");
    j.may_panic = true;
  } else if (args.released && !tolerates_released(s.rule)) {
    v.failure("a released buffer");
  } else if (args.unknown_state && !tolerates_released(s.rule)) {
    v.either("a buffer whose state an earlier call may have changed");
  } else if (args.encoded) {
    // Only offered to the operations that must refuse it (rejects_encoded).
    if (rejects_encoded(s)) {
      v.failure("an encoded buffer where a float32 or float64 buffer is expected");
    } else {
      v.either("an encoded buffer");
    }
  } else {
    return false;
  }
  return true;
}

// A call as the per-rule expectations read it: its symbol, its live buffer operands, and the
// helpers the rules share.
struct RuleCall {
  const CallPlan& plan;
  const RuleContext& c;
  const FuzzSymbol& s;
  Verdict& v;
  Judgement& j;
  const std::vector<const PoolBuffer*>& live;
  bool bad_array;

  void all_same(bool* sizes_differ, bool* dtypes_differ) const {
    *sizes_differ = *dtypes_differ = false;
    for (const PoolBuffer* b : live) {
      if (b->size != live[0]->size) *sizes_differ = true;
      if (b->dtype != live[0]->dtype) *dtypes_differ = true;
    }
  }
  uint8_t u8_arg(const char* name, uint8_t fallback) const {
    const int k = param_named(plan, name);
    return k >= 0 ? plan.args[k].value.u8 : fallback;
  }
  uint64_t u32_role(ParamRole role) const {
    const int k = param_with_role(plan, role);
    return k >= 0 ? plan.args[k].value.u32 : 0;
  }
  uint64_t length_of(ParamRole role) const {
    const int k = param_with_role(plan, role);
    return k >= 0 ? plan.args[k].length : 0;
  }
  void expect_shape(uint64_t size, uint8_t dtype) const {
    j.check_result_shape = true;
    j.expected_result_size = size;
    j.expected_result_dtype = dtype;
  }

  // The expectation of the symbol's rule; the longer rules in the members below.
  void expectations() const;
  void same_shape() const;   // also whole_reduction
  void constructor() const;  // also constructor_from_array
  void release() const;
  void size_query() const;
  void fail() const;
  void of_bytes() const;
  void of_encoded() const;
  void kernel_run() const;
  void set_device() const;
  void set_setting() const;
  void set_memory_fraction() const;
  void alloc() const;
};

void RuleCall::expectations() const {
  switch (s.rule) {
    case RuleKind::same_shape:
    case RuleKind::whole_reduction:
      return same_shape();
    case RuleKind::constructor:
    case RuleKind::constructor_from_array:
      return constructor();
    case RuleKind::release:
      return release();
    case RuleKind::release_then:
      v.success();
      j.releases = {0};
      return;
    case RuleKind::size_query:
      return size_query();
    case RuleKind::format_query:
    case RuleKind::to_float_array:
    case RuleKind::always_succeeds:
    case RuleKind::unbox:
      return v.success();
    case RuleKind::dtype_query:
      v.success();
      j.expected_scalar = live.at(0)->dtype;
      return;
    case RuleKind::zeros_like: {
      const uint64_t count = u32_role(ParamRole::element_count);
      const PoolBuffer& b = *live.at(0);
      v.success_within(count * dtype_width(b.dtype), c);
      return expect_shape(count, b.dtype);
    }
    case RuleKind::copy: {
      const PoolBuffer& b = *live.at(0);
      v.success_within(saturating_mul(b.size * dtype_width(b.dtype), s.result_buffers), c);
      return expect_shape(b.size, b.dtype);
    }
    case RuleKind::copy_and_release: {
      const PoolBuffer& b = *live.at(0);
      v.success_within(b.size * dtype_width(b.dtype), c);
      expect_shape(b.size, b.dtype);
      j.releases = {0};
      return;
    }
    case RuleKind::fail:
      return fail();
    case RuleKind::to_bytes:
      if (!valid_dtype(u8_arg("dtype", 0))) {
        return v.failure("checkpoint dtype code " + std::to_string(u8_arg("dtype", 0)));
      }
      return v.success();
    case RuleKind::of_bytes:
      return of_bytes();
    case RuleKind::of_encoded:
      return of_encoded();
    case RuleKind::to_encoded:
      // Only encoded buffers can be downloaded raw, and the pool holds native ones (encoded
      // results are not adopted into it).
      return v.failure("a native buffer has no encoded bytes");
    case RuleKind::kernel_run:
      return kernel_run();
    case RuleKind::set_device:
      return set_device();
    case RuleKind::get_setting:
      if (u32_role(ParamRole::setting_id) > 8) return v.failure("unknown setting id");
      return v.success();
    case RuleKind::set_setting:
      return set_setting();
    case RuleKind::set_memory_fraction:
      return set_memory_fraction();
    case RuleKind::device_info: {
      const uint64_t index = u32_role(ParamRole::device_index);
      const uint64_t devices = c.abi.device_count != nullptr ? c.abi.device_count(0) : 0;
      if (index >= devices) return v.failure("device index past the device count");
      return v.success();
    }
    case RuleKind::float32_bytes_to_float_array:
      if (length_of(ParamRole::byte_array) % 4 != 0) {
        return v.failure("byte length is not a multiple of 4");
      }
      return v.success();
    case RuleKind::alloc:
      return alloc();
    case RuleKind::sized_op:
      return judge_sized_op(plan, c, v, j);
    case RuleKind::generic:
      return v.either();
  }
}

void RuleCall::same_shape() const {
  bool sizes_differ, dtypes_differ;
  all_same(&sizes_differ, &dtypes_differ);
  if (live.empty()) {
    v.either();
  } else if (sizes_differ) {
    v.failure("operand sizes differ");
  } else if (dtypes_differ) {
    v.failure("operand dtypes differ");
  } else {
    const PoolBuffer& b = *live[0];
    const uint64_t out = s.rule == RuleKind::whole_reduction ? 1 : b.size;
    v.success_within(saturating_mul(out * dtype_width(b.dtype), s.result_buffers + 1), c);
    expect_shape(out, b.dtype);
  }
}

void RuleCall::constructor() const {
  const uint8_t code = u8_arg("dtype", 0);
  const uint64_t n = s.rule == RuleKind::constructor ? u32_role(ParamRole::element_count)
                                                     : length_of(ParamRole::float_array);
  if (!valid_dtype(code)) {
    v.failure("dtype code " + std::to_string(code) + " is neither float32 nor float64");
  } else {
    v.success_within(n * dtype_width(code), c);
    expect_shape(n, code);
  }
}

void RuleCall::release() const {
  // 1 exactly when a live nonempty payload was retired.
  const PlannedArg& a = plan.args[0];
  const PoolBuffer& b = c.pool[a.pool_index];
  v.success();
  j.releases = {0};
  if (a.kind != ArgKind::unknown_buffer) {
    j.expected_scalar = a.kind == ArgKind::live_buffer && b.size > 0 ? 1 : 0;
  }
}

void RuleCall::size_query() const {
  const PlannedArg& a = plan.args[0];
  v.success();
  if (a.kind != ArgKind::unknown_buffer) {
    j.expected_scalar =
        a.kind == ArgKind::live_buffer ? static_cast<int64_t>(c.pool[a.pool_index].size) : 0;
  }
}

void RuleCall::fail() const {
  const int k = param_with_role(plan, ParamRole::string);
  v.failure("fail always ends the process");
  if (k >= 0) {
    j.exact_panic = true;
    j.exact_panic_message = lean_string_cstr(plan.args[k].value.object);
  }
}

void RuleCall::of_bytes() const {
  const uint8_t code = u8_arg("dtype", 0);
  const uint8_t source = u8_arg("source", code);
  const uint64_t length = length_of(ParamRole::byte_array);
  if (!valid_dtype(code) || !valid_dtype(source)) {
    v.failure("checkpoint dtype codes " + std::to_string(code) + "/" + std::to_string(source));
  } else if (length % dtype_width(source) != 0) {
    v.failure("byte length " + std::to_string(length) + " is not a multiple of " +
              std::to_string(dtype_width(source)));
  } else {
    const uint64_t n = length / dtype_width(source);
    v.success_within(n * dtype_width(code), c);
    expect_shape(n, code);
  }
}

void RuleCall::of_encoded() const {
  const int w = param_with_role(plan, ParamRole::word_width);
  const uint64_t width = w >= 0 ? plan.args[w].value.u64 : 1;
  const uint64_t length = length_of(ParamRole::byte_array);
  // ---- encoded buffers (SPEC-runtime 9): valid exactly when the width is non-zero, divides
  // the byte length and leaves at most 2^32 - 1 words; the bytes are the new payload.
  if (width == 0 || length % width != 0) {
    v.failure("word width " + std::to_string(width) + " does not divide " + std::to_string(length) +
              " bytes");
  } else if (length / width > UINT32_MAX) {
    v.failure(std::to_string(length / width) + " words exceed UInt32");
  } else {
    v.success_within(length, c);
  }
}

void RuleCall::kernel_run() const {
  const int k = param_with_role(plan, ParamRole::request_size);
  const uint64_t count = k >= 0 ? plan.args[k].value.u64 : 0;
  // ---- nvrtc: the layout rules of SPEC-runtime 10.1 (kernel_run_bytes: format 0..2, width
  // 4 / 8 / non-zero; kernel_run_host: format 0 or 1) fail before any compile.
  const std::string kernel_symbol = plan.symbol->spec->symbol;
  const int fw = param_with_role(plan, ParamRole::word_width);
  const uint64_t kernel_width = fw >= 0 ? plan.args[fw].value.u64 : 0;
  const uint64_t kernel_format = u32_role(ParamRole::format_code);
  const bool bytes_layout_bad =
      kernel_symbol == "torchlean_kernel_run_bytes" &&
      (kernel_format > 2 || kernel_width == 0 || (kernel_format == 0 && kernel_width != 4) ||
       (kernel_format == 1 && kernel_width != 8));
  const bool host_format_bad = kernel_symbol == "torchlean_kernel_run_host" && kernel_format > 1;
  // ---- end nvrtc
  if (bytes_layout_bad || host_format_bad) {
    v.failure("kernel layout: format " + std::to_string(kernel_format) + ", width " +
              std::to_string(kernel_width));
  } else if (count >= (1ull << 40)) {
    v.failure("an output of " + std::to_string(count) + " elements cannot be allocated");
  } else if (plan.kernel.set) {
    // The generator's source reads every input at the output index (SPEC-runtime 10.3).
    size_t short_input = plan.kernel.sizes.size();
    for (size_t k = 0; k < plan.kernel.sizes.size(); ++k) {
      if (plan.kernel.sizes[k] < count) short_input = std::min(short_input, k);
    }
    if (short_input < plan.kernel.sizes.size()) {
      v.failure("input " + std::to_string(short_input) + " holds fewer than count scalars");
    } else {
      v.success();
      if (kernel_symbol == "torchlean_kernel_run_buffer") {
        j.check_result_shape = true;
        j.expected_result_size = count;
        j.expected_result_dtype = 0;
      }
    }
  } else {
    v.either();
  }
  if (bad_array) j.may_panic = true;
}

void RuleCall::set_device() const {
  const uint64_t index = u32_role(ParamRole::device_index);
  const uint64_t devices = c.abi.device_count != nullptr ? c.abi.device_count(0) : 0;
  const uint64_t wrappers = c.abi.wrapper_live != nullptr ? c.abi.wrapper_live(0) : 1;
  if (index >= devices) {
    v.failure("device " + std::to_string(index) + " of " + std::to_string(devices));
  } else if (wrappers != 0) {
    v.failure(std::to_string(wrappers) + " buffer wrappers are alive");
  } else {
    v.success();
  }
}

void RuleCall::set_setting() const {
  const uint64_t id = u32_role(ParamRole::setting_id);
  const uint64_t value = u32_role(ParamRole::flag);
  if (id > 8) {
    v.failure("unknown setting id");
  } else if (value > 1) {
    v.failure("setting value is not 0 or 1");
  } else if (id == 3 && value == 1 && c.abi.setting(2) == 1) {
    v.failure("cuDNN benchmarking while deterministic mode is on");
  } else if (id == 3 && value == 1 && c.abi.setting(2) < 0) {
    v.either();
  } else {
    v.success();
  }
}

void RuleCall::set_memory_fraction() const {
  const int k = param_with_role(plan, ParamRole::fraction);
  const double f = k >= 0 ? plan.args[k].value.f64 : 1.0;
  if (!std::isfinite(f) || !(f > 0.0) || f > 1.0) {
    v.failure("memory fraction outside (0, 1]");
  } else {
    v.success();
  }
  // The cap outlives the call, so it is only ever changed in a child process.
  j.isolate = true;
}

void RuleCall::alloc() const {
  const int k = param_with_role(plan, ParamRole::host_size);
  const uint64_t n = k >= 0 ? plan.args[k].value.size : 0;
  if (n > static_cast<uint64_t>(INT64_MAX)) {
    v.failure("n exceeds INT64_MAX");
  } else if (n <= c.pool_budget_bytes / 4) {
    v.success_within(n * 4, c);
  } else {
    v.either("large allocation (out of memory is allowed)");
  }
  j.owned_record_result = true;
}

}  // namespace

void judge(CallPlan& plan, const RuleContext& c) {
  Judgement& j = plan.judgement;
  j = Judgement{};
  Verdict v{j};
  const FuzzSymbol& s = *plan.symbol;
  const bool io = s.io();
  const ArgSummary args = summarize_args(plan, c, j);
  if (!universal_rules(s, args, v, j)) {
    RuleCall{plan, c, s, v, j, args.live, args.bad_array}.expectations();
  } else if (s.rule == RuleKind::alloc) {
    j.owned_record_result = true;
  }

  // A call whose name says it releases, without a rule saying which argument, leaves every
  // buffer argument in an unknown state.
  if (s.rule == RuleKind::generic && s.stem.find("release") != std::string::npos) {
    j.state_unknown_after = true;
  }
  // Malformed Array Nat metadata may panic even inside IO symbols (SPEC-runtime 3).
  if (io && args.nat_arrays && s.rule == RuleKind::generic) j.may_panic = true;
  if (io && args.bad_array) j.may_panic = true;
  if (!io && j.expect != Expect::success) j.isolate = true;
  if (io && j.may_panic) j.isolate = true;
}

bool message_names_op(const FuzzSymbol& symbol, const std::string& message, std::string* why) {
  static const std::string prefix = "tlrt: ";
  if (message.empty()) {
    *why = "empty message";
    return false;
  }
  if (!starts_with(message, prefix)) {
    *why = "message does not start with \"tlrt: \"";
    return false;
  }
  const size_t colon = message.find(": ", prefix.size());
  if (colon == std::string::npos || colon == prefix.size()) {
    *why = "message has no \"<op>: \" after \"tlrt: \"";
    return false;
  }
  if (colon + 2 >= message.size()) {
    *why = "message has no detail after the op";
    return false;
  }
  const std::string op = message.substr(prefix.size(), colon - prefix.size());
  if (op == symbol.stem || starts_with(symbol.stem, op + "_")) return true;
  if (!symbol.wrapper_op.empty() && op == symbol.wrapper_op) return true;
  *why = "message names op \"" + op + "\", not \"" + symbol.stem + "\"" +
         (symbol.wrapper_op.empty() ? "" : " or \"" + symbol.wrapper_op + "\"");
  return false;
}

void collect_result_buffers(lean_object* o, const lean_external_class* buffer_class,
                            std::vector<lean_object*>& out) {
  if (o == nullptr || lean_is_scalar(o)) return;
  if (lean_is_external(o)) {
    if (lean_get_external_class(o) == buffer_class) out.push_back(o);
    return;
  }
  if (lean_ptr_tag(o) <= LeanMaxCtorTag) {
    for (unsigned i = 0; i < lean_ctor_num_objs(o); ++i) {
      collect_result_buffers(lean_ctor_get(o, i), buffer_class, out);
    }
  }
}

namespace {

// The wrapper and payload counters a failed call must leave unchanged (SPEC-runtime 2.5).
std::string moved_counters(const CounterSnapshot& a, const CounterSnapshot& b) {
  std::string moved;
  auto check = [&](const char* name, uint64_t x, uint64_t y) {
    if (x != y) {
      moved += std::string(moved.empty() ? "" : ", ") + name + " " + std::to_string(x) + " -> " +
               std::to_string(y);
    }
  };
  check("payload live bytes", a.payload_live_bytes, b.payload_live_bytes);
  check("payload created", a.payload_created, b.payload_created);
  check("payload retired", a.payload_retired, b.payload_retired);
  check("wrapper live", a.wrapper_live, b.wrapper_live);
  check("wrapper created", a.wrapper_created, b.wrapper_created);
  check("wrapper finalized", a.wrapper_finalized, b.wrapper_finalized);
  check("allocated bytes", a.allocated_bytes, b.allocated_bytes);
  return moved;
}

Evaluation check_result_structure(const CallPlan& plan, lean_object* value, const AbiHandles& abi,
                                  const lean_external_class* cls) {
  Evaluation e;
  const FuzzSymbol& s = *plan.symbol;
  const Judgement& j = plan.judgement;
  if (s.spec->return_type != ReturnCType::object || j.skip_result_check) return e;
  if (value == nullptr) {
    e.outcome = Outcome::malformed_result;
    e.detail = "null result object";
    return e;
  }
  std::vector<lean_object*> buffers;
  collect_result_buffers(value, cls, buffers);
  if (static_cast<int>(buffers.size()) != s.result_buffers) {
    e.outcome = Outcome::malformed_result;
    e.detail = "result holds " + std::to_string(buffers.size()) + " buffers, " +
               std::string(s.spec->lean_result) + " has " + std::to_string(s.result_buffers);
    return e;
  }
  for (size_t i = 0; i < buffers.size() && j.check_result_shape; ++i) {
    if (abi.size == nullptr || abi.dtype == nullptr) break;
    const uint64_t size = abi.size(buffers[i]);
    const uint8_t dtype = abi.dtype(buffers[i]);
    if (size != j.expected_result_size || dtype != j.expected_result_dtype) {
      e.outcome = Outcome::malformed_result;
      e.detail = "result buffer " + std::to_string(i) + " has " + std::to_string(size) +
                 " scalars of dtype " + std::to_string(dtype) + ", expected " +
                 std::to_string(j.expected_result_size) + " of dtype " +
                 std::to_string(j.expected_result_dtype);
      return e;
    }
  }
  return e;
}

// A call that failed with `message` (an IO error or an `Except.error`): the message names the
// op, the call was allowed to fail, and it moved no counter.
Evaluation judge_error(const CallPlan& plan, const std::string& message,
                       const CounterSnapshot& before, const CounterSnapshot& after) {
  Evaluation e;
  std::string why;
  if (!message_names_op(*plan.symbol, message, &why)) {
    e.outcome = Outcome::malformed_error;
    e.detail = why + ": \"" + message + "\"";
    return e;
  }
  if (plan.judgement.expect == Expect::success) {
    e.outcome = Outcome::unexpected_error;
    e.detail = message;
    return e;
  }
  const std::string moved = moved_counters(before, after);
  if (!moved.empty()) {
    e.outcome = Outcome::counter_leak;
    e.detail = "a failed call moved counters (" + moved + "): " + message;
    return e;
  }
  e.outcome = Outcome::io_error;
  e.detail = message;
  return e;
}

// A pure symbol with an `Except String α` result (constructor 0: error with its message,
// constructor 1: ok with the value): errors are judged as IO errors are.
Evaluation evaluate_except(const CallPlan& plan, const ReturnValue& result,
                           const CounterSnapshot& before, const CounterSnapshot& after,
                           const AbiHandles& abi, const lean_external_class* buffer_class) {
  const Judgement& j = plan.judgement;
  Evaluation e;
  lean_object* r = result.object;
  if (r == nullptr || lean_is_scalar(r) || !lean_is_ctor(r) || lean_ptr_tag(r) > 1 ||
      lean_ctor_num_objs(r) != 1) {
    e.outcome = Outcome::malformed_result;
    e.detail = "not an Except constructor";
    return e;
  }
  lean_object* field = lean_ctor_get(r, 0);
  if (lean_ptr_tag(r) == 1) {
    if (j.expect == Expect::failure) {
      e.outcome = Outcome::wrong_success;
      e.detail = "Except.ok although the call has " + j.reason;
      return e;
    }
    return check_result_structure(plan, field, abi, buffer_class);
  }
  if (lean_is_scalar(field) || !lean_is_string(field)) {
    e.outcome = Outcome::malformed_error;
    e.detail = "Except.error without a String";
    return e;
  }
  return judge_error(plan, lean_string_cstr(field), before, after);
}

}  // namespace

Evaluation evaluate_return(const CallPlan& plan, const ReturnValue& result,
                           const CounterSnapshot& before, const CounterSnapshot& after,
                           const AbiHandles& abi, const lean_external_class* buffer_class) {
  const FuzzSymbol& s = *plan.symbol;
  const Judgement& j = plan.judgement;
  Evaluation e;
  if (!s.io() && std::strstr(s.spec->c_return_type, "Except") != nullptr) {
    return evaluate_except(plan, result, before, after, abi, buffer_class);
  }
  if (!s.io()) {
    if (j.expect == Expect::failure) {
      e.outcome = Outcome::wrong_success;
      e.detail = "returned normally although the call has " + j.reason;
      return e;
    }
    if (j.expected_scalar >= 0 && result.scalar != static_cast<uint64_t>(j.expected_scalar)) {
      e.outcome = Outcome::malformed_result;
      e.detail = "returned " + std::to_string(result.scalar) + ", the spec says " +
                 std::to_string(j.expected_scalar);
      return e;
    }
    return check_result_structure(plan, result.object, abi, buffer_class);
  }
  const IoResult io = decode_io_result(result.object);
  if (!io.well_formed) {
    e.outcome = io.layout_ok ? Outcome::malformed_error : Outcome::malformed_result;
    e.detail = io.problem;
    return e;
  }
  if (io.ok) {
    if (j.expect == Expect::failure) {
      e.outcome = Outcome::wrong_success;
      e.detail = "IO ok although the call has " + j.reason;
      return e;
    }
    return check_result_structure(plan, lean_io_result_get_value(result.object), abi, buffer_class);
  }
  std::string why;
  if (io.os_code != 0 && message_names_op(s, io.message, &why)) {
    e.outcome = Outcome::malformed_error;
    e.detail = "osCode " + std::to_string(io.os_code) + " (the spec says 0): " + io.message;
    return e;
  }
  return judge_error(plan, io.message, before, after);
}

}  // namespace tlrt_fuzz
