// The catalogue of fuzzable symbols: every generated table row resolved against the loaded
// library (dlsym, so an unexported row is skipped and counted, not a link error), its parameters
// given roles from their Lean types and C names, and its spec rule chosen by name or group.
#include <dlfcn.h>

#include <cctype>
#include <cstring>
#include <map>
#include <string>

#include "tools/fuzz/fuzz_model.h"

namespace tlrt_fuzz {
namespace {

std::string lower(const char* s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool starts_with(const std::string& s, const std::string& head) {
  return s.compare(0, head.size(), head) == 0;
}

std::string stem_of(const std::string& symbol) {
  for (const char* prefix : {"torchlean_cuda_buffer_", "torchlean_cuda_", "torchlean_libtorch_",
                             "torchlean_runtime_", "torchlean_"}) {
    if (starts_with(symbol, prefix)) return symbol.substr(std::strlen(prefix));
  }
  return symbol;
}

// deviceInfo -> device_info.
std::string snake_case(const std::string& camel) {
  std::string out;
  for (char ch : camel) {
    if (std::isupper(static_cast<unsigned char>(ch))) {
      if (!out.empty()) out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    } else {
      out += ch;
    }
  }
  return out;
}

ParamRole u32_role(const std::string& name) {
  if (name == "token" || name == "u") return ParamRole::token;
  if (starts_with(name, "transpose") || starts_with(name, "has") || name == "enabled") {
    return ParamRole::flag;
  }
  if (name == "axis" || name == "depth") return ParamRole::small_index;
  if (name == "setting") return ParamRole::setting_id;
  if (name == "index" || name == "device") return ParamRole::device_index;
  if (name == "format") return ParamRole::format_code;
  if (name == "n" || name == "count" || name == "size") return ParamRole::element_count;
  return ParamRole::dimension;
}

ParamRole u64_role(const std::string& name) {
  if (name == "key") return ParamRole::key;
  if (name == "width") return ParamRole::word_width;
  if (name == "count" || name == "n" || name == "size") return ParamRole::request_size;
  return ParamRole::other_u64;
}

ParamRole f64_role(const std::string& name) {
  if (name == "p" || name == "keepprob") return ParamRole::probability;
  if (name == "fraction") return ParamRole::fraction;
  return ParamRole::scalar;
}

ParamRole object_role(const std::string& lean_type) {
  if (lean_type == "Buffer") return ParamRole::buffer;
  if (lean_type == "FloatArray") return ParamRole::float_array;
  if (lean_type == "ByteArray") return ParamRole::byte_array;
  if (lean_type == "String") return ParamRole::string;
  if (lean_type == "Array Nat") return ParamRole::nat_array;
  if (lean_type == "Array Buffer") return ParamRole::buffer_array;
  if (lean_type == "Array ByteArray") return ParamRole::byte_array_array;
  if (lean_type == "Array FloatArray") return ParamRole::float_array_array;
  if (ends_with(lean_type, "FloatFormat")) return ParamRole::format_object;
  return ParamRole::unknown;
}

ParamRole role_of(const ParamSpec& p) {
  const std::string name = lower(p.name);
  const std::string lean_type = p.lean_type;
  switch (p.c_type) {
    case CType::object:
    case CType::owned_object:
      return object_role(lean_type);
    case CType::u8:
      if (lean_type == "Dtype" || name == "dtype" || name == "source") return ParamRole::dtype_code;
      return ParamRole::other_u8;
    case CType::u16:
      return ParamRole::other_u16;
    case CType::u32:
      return u32_role(name);
    case CType::u64:
      return u64_role(name);
    case CType::size:
      return ParamRole::host_size;
    case CType::i32:
    case CType::i64:
      return ParamRole::signed_value;
    case CType::f32:
    case CType::f64:
      return f64_role(name);
    case CType::record:
      return ParamRole::record;
    case CType::unsupported:
      return ParamRole::unknown;
  }
  return ParamRole::unknown;
}

// Rows of symbols-runtime.tsv (and the one runtime row repeated in symbols-ops.tsv) with a rule
// of their own; SPEC-runtime sections 2-10 state each one.
const std::map<std::string, RuleKind>& named_rules() {
  static const std::map<std::string, RuleKind> rules = {
      {"torchlean_cuda_buffer_unbox", RuleKind::unbox},
      {"torchlean_cuda_buffer_alloc", RuleKind::alloc},
      {"torchlean_cuda_buffer_release", RuleKind::release},
      {"torchlean_cuda_buffer_release_with_token", RuleKind::release},
      {"torchlean_cuda_buffer_release_then", RuleKind::release_then},
      {"torchlean_cuda_buffer_size", RuleKind::size_query},
      {"torchlean_cuda_buffer_size_with_token", RuleKind::size_query},
      {"torchlean_cuda_buffer_dtype", RuleKind::dtype_query},
      {"torchlean_cuda_buffer_format", RuleKind::format_query},
      {"torchlean_cuda_buffer_fail", RuleKind::fail},
      {"torchlean_cuda_buffer_zeros_like", RuleKind::zeros_like},
      {"torchlean_cuda_buffer_copy", RuleKind::copy},
      {"torchlean_cuda_buffer_duplicate", RuleKind::copy},
      {"torchlean_cuda_buffer_copy_and_release", RuleKind::copy_and_release},
      {"torchlean_cuda_buffer_zeros", RuleKind::constructor},
      {"torchlean_cuda_buffer_zeros_io", RuleKind::constructor},
      {"torchlean_cuda_buffer_full", RuleKind::constructor},
      {"torchlean_cuda_buffer_full_io", RuleKind::constructor},
      {"torchlean_cuda_buffer_rand_uniform", RuleKind::constructor},
      {"torchlean_cuda_buffer_rand_uniform_io", RuleKind::constructor},
      {"torchlean_cuda_buffer_rand_normal", RuleKind::constructor},
      {"torchlean_cuda_buffer_bernoulli_mask", RuleKind::constructor},
      {"torchlean_cuda_buffer_bernoulli_mask_io", RuleKind::constructor},
      {"torchlean_cuda_buffer_of_float_array", RuleKind::constructor_from_array},
      {"torchlean_cuda_buffer_of_float_array_io", RuleKind::constructor_from_array},
      {"torchlean_cuda_buffer_to_float_array", RuleKind::to_float_array},
      {"torchlean_cuda_buffer_to_float_array_io", RuleKind::to_float_array},
      {"torchlean_cuda_buffer_to_bytes_io", RuleKind::to_bytes},
      {"torchlean_cuda_buffer_to_float32_bytes_io", RuleKind::to_bytes},
      {"torchlean_cuda_buffer_of_bytes_io", RuleKind::of_bytes},
      {"torchlean_cuda_buffer_of_float32_bytes_io", RuleKind::of_bytes},
      {"torchlean_cuda_buffer_of_encoded_io", RuleKind::of_encoded},
      {"torchlean_cuda_buffer_to_encoded_io", RuleKind::to_encoded},
      {"torchlean_kernel_run_buffer", RuleKind::kernel_run},
      {"torchlean_kernel_run_bytes", RuleKind::kernel_run},
      {"torchlean_kernel_run_encoded", RuleKind::kernel_run},
      {"torchlean_kernel_run_host", RuleKind::kernel_run},
      {"torchlean_libtorch_set_device", RuleKind::set_device},
      {"torchlean_libtorch_get_setting", RuleKind::get_setting},
      {"torchlean_libtorch_set_setting", RuleKind::set_setting},
      {"torchlean_libtorch_set_memory_fraction", RuleKind::set_memory_fraction},
      {"torchlean_libtorch_device_name", RuleKind::device_info},
      {"torchlean_libtorch_device_capability", RuleKind::device_info},
      {"torchlean_libtorch_device_sm_count", RuleKind::device_info},
      {"torchlean_libtorch_device_clock_khz", RuleKind::device_info},
      {"torchlean_libtorch_device_mem_clock_khz", RuleKind::device_info},
      {"torchlean_libtorch_device_mem_bus_width", RuleKind::device_info},
      {"torchlean_libtorch_device_total_bytes", RuleKind::device_info},
      {"torchlean_float32_bytes_to_float_array", RuleKind::float32_bytes_to_float_array},
      {"torchlean_float_array_to_float32_bytes", RuleKind::always_succeeds},
      {"torchlean_cuda_runtime_status", RuleKind::always_succeeds},
      {"torchlean_libtorch_version", RuleKind::always_succeeds},
      {"torchlean_libtorch_device_count", RuleKind::always_succeeds},
      {"torchlean_libtorch_get_device", RuleKind::always_succeeds},
      {"torchlean_runtime_collect_allocator", RuleKind::always_succeeds},
      {"torchlean_libtorch_get_memory_fraction", RuleKind::always_succeeds},
      {"torchlean_libtorch_synchronize", RuleKind::always_succeeds},
      {"torchlean_libtorch_empty_cache", RuleKind::always_succeeds},
      {"torchlean_libtorch_device_kind", RuleKind::always_succeeds},
      {"torchlean_libtorch_driver_version", RuleKind::always_succeeds},
      {"torchlean_libtorch_runtime_version", RuleKind::always_succeeds},
  };
  return rules;
}

RuleKind rule_of(const SymbolSpec& spec) {
  const auto& rules = named_rules();
  const auto it = rules.find(spec.symbol);
  if (it != rules.end()) return it->second;
  const std::string group = spec.group;
  // Ownership counters and allocator statistics take only a token and never fail on a backend
  // that has a device.
  if (group == "counters" || group == "allocator-stats") return RuleKind::always_succeeds;
  if (starts_with(group, "elementwise") || group == "optimizer") return RuleKind::same_shape;
  if (group == "reduction-whole") return RuleKind::whole_reduction;
  // The groups whose valid calls are fixed by their size arguments (judge_sized_op), the legacy
  // spectral pair of the FFT block and the legacy attention pair.
  if (group == "matmul" || group == "reduction-axis" || group == "shape" ||
      starts_with(group, "indexing") || group == "softmax" || group == "normalization" ||
      group == "scan" || group == "fft" ||
      starts_with(spec.symbol, "torchlean_cuda_buffer_spectral_conv1d_rfft_") ||
      starts_with(spec.symbol, "torchlean_libtorch_attention_")) {
    return RuleKind::sized_op;
  }
  // Group conv-pool: convolution and pooling, the array checks and one dtype (judge_sized_op, their
  // blocks).
  if (group == "conv-pool") return RuleKind::sized_op;
  return RuleKind::generic;
}

int result_buffer_count(const SymbolSpec& spec) {
  if (spec.return_type != ReturnCType::object) return 0;
  // `Except String (A x B)`: the Lean declaration's parenthesised result is not parsed; the C
  // return column spells it too.
  const std::string result =
      std::strstr(spec.c_return_type, "Except") != nullptr ? spec.c_return_type : spec.lean_result;
  int n = 0;
  for (size_t pos = result.find("Buffer"); pos != std::string::npos;
       pos = result.find("Buffer", pos + 6)) {
    ++n;
  }
  return n;
}

}  // namespace

std::vector<FuzzSymbol> build_catalog() {
  std::vector<FuzzSymbol> symbols;
  symbols.reserve(kSymbolSpecCount);
  for (size_t i = 0; i < kSymbolSpecCount; ++i) {
    FuzzSymbol s;
    s.spec = &kSymbolSpecs[i];
    s.stem = stem_of(s.spec->symbol);
    s.wrapper_op = snake_case(s.spec->lean_wrapper);
    s.rule = rule_of(*s.spec);
    s.result_buffers = result_buffer_count(*s.spec);
    for (size_t k = 0; k < s.spec->param_count; ++k) s.roles.push_back(role_of(s.spec->params[k]));
    // unbox is a C-only helper without a Lean declaration: its object is a buffer.
    if (s.rule == RuleKind::unbox && !s.roles.empty()) s.roles[0] = ParamRole::buffer;

    s.address = dlsym(RTLD_DEFAULT, s.spec->symbol);
    if (s.address == nullptr) {
      s.skip = SkipReason::unexported;
    } else if (s.spec->shim == nullptr) {
      s.skip = SkipReason::unsupported_type;
      s.skip_detail = s.spec->unsupported;
    } else {
      for (size_t k = 0; k < s.roles.size(); ++k) {
        if (s.roles[k] == ParamRole::record) {
          // box and drop_unboxed take a raw record: the only valid values come from alloc or a
          // wrapper, and anything else is undefined behaviour by contract, not a finding. alloc
          // is fuzzed and its records go through drop_unboxed, which exercises both.
          s.skip = SkipReason::raw_record;
          s.skip_detail = std::string("parameter ") + s.spec->params[k].name +
                          " is a raw torchlean_cuda_buffer*";
          break;
        }
        if (s.roles[k] == ParamRole::unknown) {
          s.skip = SkipReason::unmodelled;
          s.skip_detail = std::string("parameter ") + s.spec->params[k].name +
                          " has no Lean type the fuzzer can build (\"" +
                          s.spec->params[k].lean_type + "\")";
          break;
        }
      }
    }
    symbols.push_back(std::move(s));
  }
  return symbols;
}

const char* rule_name(RuleKind rule) {
  switch (rule) {
    case RuleKind::generic:
      return "generic";
    case RuleKind::sized_op:
      return "sized_op";
    case RuleKind::same_shape:
      return "same_shape";
    case RuleKind::whole_reduction:
      return "whole_reduction";
    case RuleKind::constructor:
      return "constructor";
    case RuleKind::constructor_from_array:
      return "constructor_from_array";
    case RuleKind::release:
      return "release";
    case RuleKind::release_then:
      return "release_then";
    case RuleKind::size_query:
      return "size_query";
    case RuleKind::format_query:
      return "format_query";
    case RuleKind::dtype_query:
      return "dtype_query";
    case RuleKind::zeros_like:
      return "zeros_like";
    case RuleKind::copy:
      return "copy";
    case RuleKind::copy_and_release:
      return "copy_and_release";
    case RuleKind::fail:
      return "fail";
    case RuleKind::to_float_array:
      return "to_float_array";
    case RuleKind::to_bytes:
      return "to_bytes";
    case RuleKind::of_bytes:
      return "of_bytes";
    case RuleKind::of_encoded:
      return "of_encoded";
    case RuleKind::to_encoded:
      return "to_encoded";
    case RuleKind::kernel_run:
      return "kernel_run";
    case RuleKind::set_device:
      return "set_device";
    case RuleKind::get_setting:
      return "get_setting";
    case RuleKind::set_setting:
      return "set_setting";
    case RuleKind::set_memory_fraction:
      return "set_memory_fraction";
    case RuleKind::device_info:
      return "device_info";
    case RuleKind::always_succeeds:
      return "always_succeeds";
    case RuleKind::float32_bytes_to_float_array:
      return "float32_bytes_to_float_array";
    case RuleKind::unbox:
      return "unbox";
    case RuleKind::alloc:
      return "alloc";
  }
  return "?";
}

const char* role_name(ParamRole role) {
  switch (role) {
    case ParamRole::buffer:
      return "buffer";
    case ParamRole::float_array:
      return "float_array";
    case ParamRole::byte_array:
      return "byte_array";
    case ParamRole::string:
      return "string";
    case ParamRole::nat_array:
      return "nat_array";
    case ParamRole::buffer_array:
      return "buffer_array";
    case ParamRole::byte_array_array:
      return "byte_array_array";
    case ParamRole::float_array_array:
      return "float_array_array";
    case ParamRole::format_object:
      return "format_object";
    case ParamRole::dtype_code:
      return "dtype_code";
    case ParamRole::token:
      return "token";
    case ParamRole::flag:
      return "flag";
    case ParamRole::small_index:
      return "small_index";
    case ParamRole::setting_id:
      return "setting_id";
    case ParamRole::device_index:
      return "device_index";
    case ParamRole::format_code:
      return "format_code";
    case ParamRole::element_count:
      return "element_count";
    case ParamRole::dimension:
      return "dimension";
    case ParamRole::key:
      return "key";
    case ParamRole::word_width:
      return "word_width";
    case ParamRole::request_size:
      return "request_size";
    case ParamRole::other_u64:
      return "other_u64";
    case ParamRole::other_u8:
      return "other_u8";
    case ParamRole::other_u16:
      return "other_u16";
    case ParamRole::signed_value:
      return "signed_value";
    case ParamRole::probability:
      return "probability";
    case ParamRole::fraction:
      return "fraction";
    case ParamRole::scalar:
      return "scalar";
    case ParamRole::host_size:
      return "host_size";
    case ParamRole::record:
      return "record";
    case ParamRole::unknown:
      return "unknown";
  }
  return "?";
}

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::ok:
      return "ok";
    case Outcome::io_error:
      return "io_error";
    case Outcome::clean_panic:
      return "clean_panic";
    case Outcome::crash:
      return "crash";
    case Outcome::sanitizer_report:
      return "sanitizer_report";
    case Outcome::wrong_success:
      return "wrong_success";
    case Outcome::unexpected_error:
      return "unexpected_error";
    case Outcome::unexpected_panic:
      return "unexpected_panic";
    case Outcome::malformed_error:
      return "malformed_error";
    case Outcome::malformed_result:
      return "malformed_result";
    case Outcome::counter_leak:
      return "counter_leak";
    case Outcome::timeout:
      return "timeout";
    case Outcome::replay_diverged:
      return "replay_diverged";
    case Outcome::count_:
      break;
  }
  return "?";
}

}  // namespace tlrt_fuzz
