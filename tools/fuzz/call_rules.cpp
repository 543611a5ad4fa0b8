// The spec rules of SPEC-runtime sections 2-10 and SPEC-ops as the fuzzer applies them. A
// judgement is deliberately conservative: `success` only where the spec leaves no way to fail
// (and the new payloads fit the pool budget), `failure` only where it names the rejection, and
// `either` everywhere else, so a symbol without a rule of its own (a new op family) is still
// held to the universal rules: a non-buffer, foreign or released buffer argument must fail, and
// nothing may crash, trip a sanitizer, leak, or fail without a message naming the op.
#include "tools/fuzz/call_rules.h"

#include <cmath>
#include <cstring>

#include "tools/fuzz/lean_values.h"

namespace tlrt_fuzz {
namespace {

bool starts_with(const std::string& s, const std::string& head) {
  return s.compare(0, head.size(), head) == 0;
}

int param_named(const CallPlan& plan, const char* name) {
  for (size_t k = 0; k < plan.args.size(); ++k) {
    if (std::strcmp(plan.symbol->spec->params[k].name, name) == 0) return static_cast<int>(k);
  }
  return -1;
}

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

struct Verdict {
  Judgement& j;
  void success() { j.expect = Expect::success; }
  void either(const std::string& why = "") {
    j.expect = Expect::either;
    j.reason = why;
  }
  void failure(const std::string& why) {
    j.expect = Expect::failure;
    j.reason = why;
  }
  // A success that allocates `bytes` new payload bytes.
  void success_within(uint64_t bytes, const RuleContext& c) {
    if (bytes <= c.pool_budget_bytes && c.pool_live_bytes + bytes <= c.pool_budget_bytes) {
      success();
    } else {
      either("new payloads exceed the pool budget (out of memory is allowed)");
    }
  }
};

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

}  // namespace

void judge(CallPlan& plan, const RuleContext& c) {
  Judgement& j = plan.judgement;
  j = Judgement{};
  Verdict v{j};
  const FuzzSymbol& s = *plan.symbol;
  const bool io = s.io();

  // ---- universal rules on buffer parameters (SPEC-runtime 2.2, 2.3, 3) -----------------------
  bool non_buffer = false, foreign = false, released = false, unknown_state = false;
  std::vector<const PoolBuffer*> live;
  bool bad_array = false, nat_arrays = false;
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
    switch (a.kind) {
      case ArgKind::non_buffer:
        non_buffer = true;
        break;
      case ArgKind::foreign_external:
        foreign = true;
        break;
      case ArgKind::released_buffer:
        released = true;
        break;
      case ArgKind::unknown_buffer:
        unknown_state = true;
        break;
      case ArgKind::live_buffer:
        live.push_back(&c.pool[a.pool_index]);
        break;
      case ArgKind::nat_array:
        nat_arrays = true;
        if (a.bad_element) bad_array = true;
        break;
      case ArgKind::buffer_array:
        if (a.bad_element) bad_array = true;
        break;
      default:
        break;
    }
  }
  bool decided = true;
  if (non_buffer) {
    // A non-external object panics, also inside IO symbols.
    v.failure("a non-buffer object where a Buffer is expected");
    j.may_panic = true;
  } else if (foreign) {
    // An external object of another class: a C++ error, so a panic or an IO error.
    v.failure("an external object of another class where a Buffer is expected");
    j.may_panic = true;
  } else if (released && !tolerates_released(s.rule)) {
    v.failure("a released buffer");
  } else if (unknown_state && !tolerates_released(s.rule)) {
    v.either("a buffer whose state an earlier call may have changed");
  } else {
    decided = false;
  }

  auto all_same = [&](bool* sizes_differ, bool* dtypes_differ) {
    *sizes_differ = *dtypes_differ = false;
    for (const PoolBuffer* b : live) {
      if (b->size != live[0]->size) *sizes_differ = true;
      if (b->dtype != live[0]->dtype) *dtypes_differ = true;
    }
  };
  auto u8_arg = [&](const char* name, uint8_t fallback) -> uint8_t {
    const int k = param_named(plan, name);
    return k >= 0 ? plan.args[k].value.u8 : fallback;
  };
  auto u32_role = [&](ParamRole role) -> uint64_t {
    const int k = param_with_role(plan, role);
    return k >= 0 ? plan.args[k].value.u32 : 0;
  };
  auto length_of = [&](ParamRole role) -> uint64_t {
    const int k = param_with_role(plan, role);
    return k >= 0 ? plan.args[k].length : 0;
  };
  auto expect_shape = [&](uint64_t size, uint8_t dtype) {
    j.check_result_shape = true;
    j.expected_result_size = size;
    j.expected_result_dtype = dtype;
  };

  // ---- per-rule expectations ------------------------------------------------------------------
  if (!decided) {
    switch (s.rule) {
      case RuleKind::same_shape:
      case RuleKind::whole_reduction: {
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
        break;
      }
      case RuleKind::constructor:
      case RuleKind::constructor_from_array: {
        const uint8_t code = u8_arg("dtype", 0);
        const uint64_t n = s.rule == RuleKind::constructor ? u32_role(ParamRole::element_count)
                                                           : length_of(ParamRole::float_array);
        if (!valid_dtype(code)) {
          v.failure("dtype code " + std::to_string(code) + " is neither float32 nor float64");
        } else {
          v.success_within(n * dtype_width(code), c);
          expect_shape(n, code);
        }
        break;
      }
      case RuleKind::release: {
        // 1 exactly when a live nonempty payload was retired.
        const PlannedArg& a = plan.args[0];
        const PoolBuffer& b = c.pool[a.pool_index];
        v.success();
        j.releases = {0};
        if (a.kind != ArgKind::unknown_buffer) {
          j.expected_scalar = a.kind == ArgKind::live_buffer && b.size > 0 ? 1 : 0;
        }
        break;
      }
      case RuleKind::release_then:
        v.success();
        j.releases = {0};
        break;
      case RuleKind::size_query: {
        const PlannedArg& a = plan.args[0];
        v.success();
        if (a.kind != ArgKind::unknown_buffer) {
          j.expected_scalar =
              a.kind == ArgKind::live_buffer ? static_cast<int64_t>(c.pool[a.pool_index].size) : 0;
        }
        break;
      }
      case RuleKind::format_query:
      case RuleKind::to_float_array:
      case RuleKind::always_succeeds:
      case RuleKind::unbox:
        v.success();
        break;
      case RuleKind::dtype_query:
        v.success();
        j.expected_scalar = live.at(0)->dtype;
        break;
      case RuleKind::zeros_like: {
        const uint64_t count = u32_role(ParamRole::element_count);
        const PoolBuffer& b = *live.at(0);
        v.success_within(count * dtype_width(b.dtype), c);
        expect_shape(count, b.dtype);
        break;
      }
      case RuleKind::copy: {
        const PoolBuffer& b = *live.at(0);
        v.success_within(saturating_mul(b.size * dtype_width(b.dtype), s.result_buffers), c);
        expect_shape(b.size, b.dtype);
        break;
      }
      case RuleKind::copy_and_release: {
        const PoolBuffer& b = *live.at(0);
        v.success_within(b.size * dtype_width(b.dtype), c);
        expect_shape(b.size, b.dtype);
        j.releases = {0};
        break;
      }
      case RuleKind::fail: {
        const int k = param_with_role(plan, ParamRole::string);
        v.failure("fail always ends the process");
        if (k >= 0) {
          j.exact_panic = true;
          j.exact_panic_message = lean_string_cstr(plan.args[k].value.object);
        }
        break;
      }
      case RuleKind::to_bytes: {
        const uint8_t code = u8_arg("dtype", 0);
        if (!valid_dtype(code)) {
          v.failure("checkpoint dtype code " + std::to_string(code));
        } else {
          v.success();
        }
        break;
      }
      case RuleKind::of_bytes: {
        const uint8_t code = u8_arg("dtype", 0);
        const uint8_t source = u8_arg("source", code);
        const uint64_t length = length_of(ParamRole::byte_array);
        if (!valid_dtype(code) || !valid_dtype(source)) {
          v.failure("checkpoint dtype codes " + std::to_string(code) + "/" +
                    std::to_string(source));
        } else if (length % dtype_width(source) != 0) {
          v.failure("byte length " + std::to_string(length) + " is not a multiple of " +
                    std::to_string(dtype_width(source)));
        } else {
          const uint64_t n = length / dtype_width(source);
          v.success_within(n * dtype_width(code), c);
          expect_shape(n, code);
        }
        break;
      }
      case RuleKind::of_encoded: {
        const int w = param_with_role(plan, ParamRole::word_width);
        const uint64_t width = w >= 0 ? plan.args[w].value.u64 : 1;
        const uint64_t length = length_of(ParamRole::byte_array);
        if (width == 0 || length % width != 0) {
          v.failure("word width " + std::to_string(width) + " does not divide " +
                    std::to_string(length) + " bytes");
        } else {
          v.either();
        }
        break;
      }
      case RuleKind::to_encoded:
        // Only encoded buffers can be downloaded raw, and the pool holds native ones.
        v.failure("a native buffer has no encoded bytes");
        break;
      case RuleKind::kernel_run: {
        const int k = param_with_role(plan, ParamRole::request_size);
        const uint64_t count = k >= 0 ? plan.args[k].value.u64 : 0;
        if (count >= (1ull << 40)) {
          v.failure("an output of " + std::to_string(count) + " elements cannot be allocated");
        } else {
          v.either();
        }
        if (bad_array) j.may_panic = true;
        break;
      }
      case RuleKind::set_device: {
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
        break;
      }
      case RuleKind::get_setting:
        if (u32_role(ParamRole::setting_id) > 8) {
          v.failure("unknown setting id");
        } else {
          v.success();
        }
        break;
      case RuleKind::set_setting: {
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
        break;
      }
      case RuleKind::set_memory_fraction: {
        const int k = param_with_role(plan, ParamRole::fraction);
        const double f = k >= 0 ? plan.args[k].value.f64 : 1.0;
        if (!std::isfinite(f) || !(f > 0.0) || f > 1.0) {
          v.failure("memory fraction outside (0, 1]");
        } else {
          v.success();
        }
        // The cap outlives the call, so it is only ever changed in a child process.
        j.isolate = true;
        break;
      }
      case RuleKind::device_info: {
        const uint64_t index = u32_role(ParamRole::device_index);
        const uint64_t devices = c.abi.device_count != nullptr ? c.abi.device_count(0) : 0;
        if (index >= devices) {
          v.failure("device index past the device count");
        } else {
          v.success();
        }
        break;
      }
      case RuleKind::float32_bytes_to_float_array:
        if (length_of(ParamRole::byte_array) % 4 != 0) {
          v.failure("byte length is not a multiple of 4");
        } else {
          v.success();
        }
        break;
      case RuleKind::alloc: {
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
        break;
      }
      case RuleKind::generic:
        v.either();
        break;
    }
  } else if (s.rule == RuleKind::alloc) {
    j.owned_record_result = true;
  }

  // A call whose name says it releases, without a rule saying which argument, leaves every
  // buffer argument in an unknown state.
  if (s.rule == RuleKind::generic && s.stem.find("release") != std::string::npos) {
    j.state_unknown_after = true;
  }
  // Malformed Array Nat metadata may panic even inside IO symbols (SPEC-runtime 3).
  if (io && nat_arrays && s.rule == RuleKind::generic) j.may_panic = true;
  if (io && bad_array) j.may_panic = true;
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
  const bool except = std::strstr(s.spec->lean_result, "Except") != nullptr;
  if (!except && static_cast<int>(buffers.size()) != s.result_buffers) {
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

}  // namespace

Evaluation evaluate_return(const CallPlan& plan, const ReturnValue& result,
                           const CounterSnapshot& before, const CounterSnapshot& after,
                           const AbiHandles& abi, const lean_external_class* buffer_class) {
  const FuzzSymbol& s = *plan.symbol;
  const Judgement& j = plan.judgement;
  Evaluation e;
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
  if (!message_names_op(s, io.message, &why)) {
    e.outcome = Outcome::malformed_error;
    e.detail = why + ": \"" + io.message + "\"";
    return e;
  }
  if (io.os_code != 0) {
    e.outcome = Outcome::malformed_error;
    e.detail = "osCode " + std::to_string(io.os_code) + " (the spec says 0): " + io.message;
    return e;
  }
  if (j.expect == Expect::success) {
    e.outcome = Outcome::unexpected_error;
    e.detail = io.message;
    return e;
  }
  const std::string moved = moved_counters(before, after);
  if (!moved.empty()) {
    e.outcome = Outcome::counter_leak;
    e.detail = "a failed call moved counters (" + moved + "): " + io.message;
    return e;
  }
  e.outcome = Outcome::io_error;
  e.detail = io.message;
  return e;
}

}  // namespace tlrt_fuzz
