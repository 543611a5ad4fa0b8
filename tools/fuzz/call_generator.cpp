// Argument generation (see call_generator.h). Every choice comes from the batch's stream, so a
// (seed, batch) pair always yields the same calls with the same arguments.
#include "tools/fuzz/call_generator.h"

#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "tools/fuzz/call_rules.h"
#include "tools/fuzz/lean_values.h"
#include "tools/fuzz/operand_builder.h"

namespace tlrt_fuzz {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

double bits_to_double(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// Values at the edges of binary32 and binary64: NaNs (quiet, negative, signalling), infinities,
// signed zeros, subnormals of both formats, the largest finite values, values that overflow or
// underflow only in binary32, and a few ordinary ones.
const std::vector<double>& special_doubles() {
  static const std::vector<double> values = {
      kNaN,
      -kNaN,
      bits_to_double(0x7ff4000000000000ull),  // signalling NaN
      kInf,
      -kInf,
      0.0,
      -0.0,
      std::numeric_limits<double>::denorm_min(),
      -std::numeric_limits<double>::denorm_min(),
      1e-310,
      DBL_MIN,
      static_cast<double>(std::numeric_limits<float>::denorm_min()),
      1e-45,
      static_cast<double>(FLT_MIN),
      DBL_MAX,
      -DBL_MAX,
      static_cast<double>(FLT_MAX),
      3.5e38,
      -3.5e38,
      1e300,
      1.0,
      -1.0,
      0.5,
      2.0,
      1e-8,
      3.141592653589793,
      65504.0,
      88.72283935546875,  // exp overflows binary32 just above this
      -103.0,
      709.8,
      0.9999999999999999,
      1.0000000000000002,
  };
  return values;
}

std::string hex_u64(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

std::string decimal(uint64_t v) {
  return v > 0xffffffffull ? hex_u64(v) : std::to_string(v);
}

std::string buffer_text(const PoolBuffer& b) {
  std::string s = "b" + std::to_string(b.id) + ":";
  if (b.state == BufferState::released) return s + "released";
  if (b.state == BufferState::unknown) return s + "state-unknown";
  return s + (b.dtype == 1 ? "f64[" : "f32[") + std::to_string(b.size) + "]";
}

}  // namespace

std::string describe_double(double v) {
  if (std::isnan(v)) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof v);
    return (std::signbit(v) ? "-nan(" : "nan(") + hex_u64(bits) + ")";
  }
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0.0) return std::signbit(v) ? "-0" : "0";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

uint64_t CallGenerator::element_count() {
  switch (rng_.weighted({8, 8, 30, 30, 18, 6})) {
    case 0:
      return 0;
    case 1:
      return 1;
    case 2:
      return rng_.between(2, 33);
    case 3:
      return rng_.between(34, 1024);
    case 4:
      return rng_.between(1025, 16384);
    default:
      return rng_.between(16385, limits_.large_elements);
  }
}

double CallGenerator::special_double() {
  return rng_.pick(special_doubles());
}

double CallGenerator::special_or_random_double() {
  if (rng_.percent(50)) return rng_.pick(special_doubles());
  const double magnitude = std::ldexp(1.0, static_cast<int>(rng_.between(0, 40)) - 20);
  return (rng_.unit() * 2.0 - 1.0) * magnitude;
}

std::vector<double> CallGenerator::host_values(uint64_t n) {
  std::vector<double> v(n);
  for (double& x : v) {
    x = rng_.percent(25) ? rng_.pick(special_doubles()) : (rng_.unit() * 8.0 - 4.0);
  }
  return v;
}

int CallGenerator::pick_live(int avoid_size_of) {
  std::vector<int> live;
  for (size_t i = 0; i < pool_.size(); ++i) {
    if (pool_[i].state != BufferState::live) continue;
    if (avoid_size_of >= 0 && pool_[i].size == pool_[avoid_size_of].size) continue;
    live.push_back(static_cast<int>(i));
  }
  if (!live.empty()) return rng_.pick(live);
  if (avoid_size_of >= 0) {
    return source_.make_buffer(pool_[avoid_size_of].size + 1 + rng_.below(5),
                               static_cast<uint8_t>(rng_.below(2)));
  }
  return source_.make_buffer(element_count(), static_cast<uint8_t>(rng_.below(2)));
}

int CallGenerator::matching(int anchor) {
  const PoolBuffer& a = pool_[anchor];
  std::vector<int> same;
  for (size_t i = 0; i < pool_.size(); ++i) {
    const PoolBuffer& b = pool_[i];
    if (static_cast<int>(i) != anchor && b.state == BufferState::live && b.size == a.size &&
        b.dtype == a.dtype) {
      same.push_back(static_cast<int>(i));
    }
  }
  // Aliasing the anchor (add(x, x)) is a case of its own.
  if (rng_.percent(15)) return anchor;
  if (!same.empty() && rng_.percent(70)) return rng_.pick(same);
  const int made = source_.make_buffer(a.size, a.dtype);
  if (made >= 0) return made;
  return same.empty() ? anchor : rng_.pick(same);
}

int CallGenerator::released() {
  std::vector<int> gone;
  for (size_t i = 0; i < pool_.size(); ++i) {
    if (pool_[i].state == BufferState::released) gone.push_back(static_cast<int>(i));
  }
  if (!gone.empty() && rng_.percent(80)) return rng_.pick(gone);
  return source_.make_released_buffer(element_count(), static_cast<uint8_t>(rng_.below(2)));
}

void CallGenerator::set_buffer(PlannedArg& arg, int index) {
  const PoolBuffer& b = pool_[index];
  arg.pool_index = index;
  arg.value.object = b.object;
  arg.kind = b.state == BufferState::live       ? ArgKind::live_buffer
             : b.state == BufferState::released ? ArgKind::released_buffer
                                                : ArgKind::unknown_buffer;
  arg.text = buffer_text(b);
}

CallGenerator::Defect CallGenerator::choose_defect(const FuzzSymbol& symbol) {
  size_t buffers = 0, scalars = 0, arrays = 0;
  for (ParamRole r : symbol.roles) {
    if (r == ParamRole::buffer) {
      ++buffers;
    } else if (r == ParamRole::nat_array || r == ParamRole::buffer_array ||
               r == ParamRole::byte_array) {
      ++arrays;
    } else if (r != ParamRole::float_array && r != ParamRole::string &&
               r != ParamRole::format_object && r != ParamRole::byte_array_array &&
               r != ParamRole::float_array_array && r != ParamRole::token) {
      ++scalars;
    }
  }
  if (!rng_.percent(35)) return Defect::none;
  std::vector<Defect> options;
  if (buffers > 0) {
    options.insert(options.end(), {Defect::released_buffer, Defect::released_buffer,
                                   Defect::non_buffer, Defect::foreign_external});
    if (fixtures_.encoded != nullptr && rejects_encoded(symbol)) {
      options.push_back(Defect::encoded_buffer);
    }
  }
  if (buffers > 1) {
    options.insert(options.end(), {Defect::size_mismatch, Defect::size_mismatch,
                                   Defect::dtype_mismatch, Defect::dtype_mismatch});
  }
  if (scalars > 0) options.insert(options.end(), {Defect::extreme_scalar, Defect::extreme_scalar});
  if (arrays > 0) options.push_back(Defect::bad_array);
  if (options.empty()) return Defect::none;
  return rng_.pick(options);
}

void CallGenerator::buffer_arg(CallPlan& plan, size_t k, Defect defect, size_t target, int anchor,
                               bool same_shape) {
  PlannedArg& arg = plan.args[k];
  if (k == target) {
    switch (defect) {
      case Defect::released_buffer: {
        const int r = released();
        if (r >= 0) {
          set_buffer(arg, r);
          return;
        }
        break;
      }
      case Defect::non_buffer: {
        const size_t i = rng_.below(fixtures_.non_buffers.size());
        arg.kind = ArgKind::non_buffer;
        arg.value.object = fixtures_.non_buffers[i];
        arg.text = fixtures_.non_buffer_names[i];
        return;
      }
      case Defect::foreign_external:
        arg.kind = ArgKind::foreign_external;
        arg.value.object = fixtures_.foreign_external;
        arg.text = "foreign-external";
        return;
      case Defect::encoded_buffer:
        arg.kind = ArgKind::encoded_buffer;
        arg.value.object = fixtures_.encoded;
        arg.text = "encoded-buffer";
        return;
      case Defect::size_mismatch:
        if (anchor >= 0) {
          const int other = pick_live(anchor);
          if (other >= 0) {
            set_buffer(arg, other);
            return;
          }
        }
        break;
      case Defect::dtype_mismatch:
        if (anchor >= 0) {
          const PoolBuffer& a = pool_[anchor];
          const int other = source_.make_buffer(a.size, a.dtype == 1 ? 0 : 1);
          if (other >= 0) {
            set_buffer(arg, other);
            return;
          }
        }
        break;
      default:
        break;
    }
  }
  if (anchor < 0) anchor = pick_live();
  if (anchor < 0) {
    // No buffer could be made (pool full and empty of live buffers): pass a released one.
    const int r = released();
    if (r >= 0) set_buffer(arg, r);
    return;
  }
  // The first buffer parameter is the anchor; later ones match it (always for same-shape
  // rules, half the time otherwise).
  bool first = true;
  for (size_t j = 0; j < k; ++j) {
    if (plan.symbol->roles[j] == ParamRole::buffer) first = false;
  }
  if (first) {
    set_buffer(arg, anchor);
  } else if (same_shape || rng_.percent(50)) {
    set_buffer(arg, matching(anchor));
  } else {
    const int any = pick_live();
    set_buffer(arg, any >= 0 ? any : anchor);
  }
}

std::vector<uint64_t> CallGenerator::factor(uint64_t product, size_t parts) {
  std::vector<uint64_t> out(parts, 1);
  if (parts == 0) return out;
  if (product == 0) {
    for (uint64_t& v : out) v = rng_.below(5);
    out[rng_.below(parts)] = 0;
    return out;
  }
  uint64_t rest = product;
  for (size_t i = 0; i + 1 < parts; ++i) {
    std::vector<uint64_t> divisors;
    for (uint64_t d = 1; d * d <= rest; ++d) {
      if (rest % d == 0) {
        divisors.push_back(d);
        if (d * d != rest) divisors.push_back(rest / d);
      }
    }
    out[i] = rng_.pick(divisors);
    rest /= out[i];
  }
  out[parts - 1] = rest;
  // Shuffle so the largest factor is not always last.
  for (size_t i = parts; i > 1; --i) std::swap(out[i - 1], out[rng_.below(i)]);
  return out;
}

void CallGenerator::dimensions(CallPlan& plan, const std::vector<size_t>& params,
                               uint64_t target_product) {
  if (params.empty()) return;
  std::vector<uint64_t> values;
  if (rng_.percent(55)) {
    values = factor(target_product, params.size());
  } else {
    for (size_t i = 0; i < params.size(); ++i) {
      values.push_back(rng_.percent(50) ? rng_.below(9) : element_count());
    }
  }
  for (size_t i = 0; i < params.size(); ++i) {
    PlannedArg& arg = plan.args[params[i]];
    arg.value.u32 = static_cast<uint32_t>(std::min<uint64_t>(values[i], UINT32_MAX));
    arg.text = std::to_string(arg.value.u32);
  }
}

void CallGenerator::index_list(CallPlan& plan, const FuzzSymbol& symbol) {
  int k_param = -1, indices = -1, rows = -1;
  for (size_t k = 0; k < plan.args.size(); ++k) {
    const std::string name = symbol.spec->params[k].name;
    if (name == "k") k_param = static_cast<int>(k);
    if (name == "indices") indices = static_cast<int>(k);
    if (name == "rows" || name == "n") rows = static_cast<int>(k);
  }
  if (k_param < 0 || indices < 0) return;
  PlannedArg& list = plan.args[static_cast<size_t>(indices)];
  const uint64_t count = plan.args[static_cast<size_t>(k_param)].value.u32;
  if (list.kind != ArgKind::nat_array || list.bad_element || count > 65536 || !rng_.percent(70)) {
    return;
  }
  const uint64_t range = rows >= 0 ? plan.args[static_cast<size_t>(rows)].value.u32 : 0;
  std::vector<uint64_t> values(count);
  for (uint64_t& v : values) {
    if (range > 0 && rng_.percent(85)) {
      v = rng_.below(range);
    } else {
      v = rng_.percent(50) ? range + rng_.below(3) : UINT32_MAX;
    }
  }
  lean_object* o = make_nat_array(values);
  plan.owned.push_back(o);
  list.value.object = o;
  list.length = count;
  list.product = 1;
  list.values = values;
  list.text = "indices[" + std::to_string(count) + "]";
}

void CallGenerator::set_nat_array(CallPlan& plan, size_t k, const std::vector<uint64_t>& values) {
  PlannedArg& arg = plan.args[k];
  lean_object* o = make_nat_array(values);
  plan.owned.push_back(o);
  arg.value.object = o;
  arg.kind = ArgKind::nat_array;
  arg.bad_element = false;
  arg.length = values.size();
  arg.values = values;
  arg.product = 1;
  arg.text = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    arg.product = values[i] != 0 && arg.product > UINT64_MAX / values[i] ? UINT64_MAX
                                                                         : arg.product * values[i];
    arg.text += (i ? "," : "") + decimal(values[i]);
  }
  arg.text += "]";
}

void CallGenerator::scalar_arg(CallPlan& plan, const FuzzSymbol& symbol, size_t k, bool extreme) {
  PlannedArg& arg = plan.args[k];
  arg.kind = ArgKind::scalar;
  ArgValue& v = arg.value;
  static const std::vector<uint64_t> extreme_u32 = {UINT32_MAX,       UINT32_MAX - 1, 1ull << 31,
                                                    (1ull << 31) - 1, 1ull << 28,     65536};
  static const std::vector<uint64_t> extreme_u64 = {UINT64_MAX,       UINT64_MAX - 1,   1ull << 63,
                                                    (1ull << 63) - 1, (1ull << 63) + 1, 1ull << 62,
                                                    1ull << 40,       1ull << 32};
  switch (symbol.roles[k]) {
    case ParamRole::dtype_code:
      if (extreme || rng_.percent(12)) {
        v.u8 = static_cast<uint8_t>(rng_.percent(40) ? 2 : rng_.between(2, 255));
      } else {
        v.u8 = static_cast<uint8_t>(rng_.below(2));
      }
      arg.text = std::to_string(v.u8);
      return;
    case ParamRole::other_u8:
      v.u8 = static_cast<uint8_t>(rng_.below(256));
      arg.text = std::to_string(v.u8);
      return;
    case ParamRole::other_u16:
      v.u16 = static_cast<uint16_t>(rng_.below(65536));
      arg.text = std::to_string(v.u16);
      return;
    case ParamRole::token:
      v.u32 = static_cast<uint32_t>(rng_.next());
      v.u64 = rng_.next();
      arg.text = decimal(symbol.spec->params[k].c_type == CType::u64 ? v.u64 : v.u32);
      return;
    case ParamRole::flag:
      v.u32 = extreme            ? static_cast<uint32_t>(rng_.pick(extreme_u32))
              : rng_.percent(90) ? static_cast<uint32_t>(rng_.below(2))
                                 : static_cast<uint32_t>(rng_.between(2, 9));
      break;
    case ParamRole::small_index:
      v.u32 = extreme || rng_.percent(5) ? static_cast<uint32_t>(rng_.pick(extreme_u32))
                                         : static_cast<uint32_t>(rng_.below(6));
      break;
    case ParamRole::setting_id:
      v.u32 = extreme            ? static_cast<uint32_t>(rng_.pick(extreme_u32))
              : rng_.percent(85) ? static_cast<uint32_t>(rng_.below(9))
                                 : static_cast<uint32_t>(rng_.between(9, 40));
      break;
    case ParamRole::device_index:
      if (extreme) {
        v.u32 = static_cast<uint32_t>(rng_.pick(extreme_u32));
      } else {
        const size_t pick = rng_.weighted({60, 20, 20});
        v.u32 = pick == 0 ? 0 : pick == 1 ? 1 : static_cast<uint32_t>(rng_.next());
      }
      break;
    case ParamRole::format_code:
      v.u32 = extreme || rng_.percent(10) ? static_cast<uint32_t>(rng_.between(3, 1000))
                                          : static_cast<uint32_t>(rng_.below(3));
      break;
    case ParamRole::element_count:
    case ParamRole::dimension:
      v.u32 = extreme ? static_cast<uint32_t>(rng_.pick(extreme_u32))
                      : static_cast<uint32_t>(element_count());
      break;
    case ParamRole::key:
      v.u64 = rng_.percent(10) ? rng_.pick(extreme_u64) : rng_.next();
      arg.text = decimal(v.u64);
      return;
    case ParamRole::word_width: {
      const size_t pick = rng_.weighted({70, 15, 15});
      v.u64 = extreme || pick == 2 ? rng_.pick(extreme_u64)
              : pick == 0          ? rng_.pick(std::vector<uint64_t>{1, 2, 4, 8})
                                   : rng_.pick(std::vector<uint64_t>{0, 3, 16});
      arg.text = decimal(v.u64);
      return;
    }
    case ParamRole::request_size:
    case ParamRole::other_u64:
      v.u64 = extreme || rng_.percent(30) ? rng_.pick(extreme_u64) : element_count();
      arg.text = decimal(v.u64);
      return;
    case ParamRole::host_size:
      v.size = extreme || rng_.percent(15) ? static_cast<size_t>(rng_.pick(extreme_u64))
                                           : static_cast<size_t>(element_count());
      arg.text = decimal(v.size);
      return;
    case ParamRole::signed_value: {
      static const std::vector<int64_t> extremes = {INT64_MIN, INT64_MAX, INT32_MIN,
                                                    INT32_MAX, -1,        -(int64_t{1} << 40)};
      v.i64 = extreme || rng_.percent(20) ? rng_.pick(extremes)
                                          : static_cast<int64_t>(rng_.below(17)) - 8;
      v.i32 = static_cast<int32_t>(v.i64);
      arg.text = std::to_string(symbol.spec->params[k].c_type == CType::i32 ? v.i32 : v.i64);
      return;
    }
    case ParamRole::probability:
      v.f64 = rng_.percent(50) ? rng_.unit() : special_or_random_double();
      break;
    case ParamRole::fraction:
      v.f64 = rng_.percent(50) ? 1.0 - rng_.unit() : rng_.pick(special_doubles());
      break;
    case ParamRole::scalar:
      v.f64 = special_or_random_double();
      break;
    default:
      return;
  }
  if (symbol.roles[k] == ParamRole::probability || symbol.roles[k] == ParamRole::fraction ||
      symbol.roles[k] == ParamRole::scalar) {
    v.f32 = static_cast<float>(v.f64);
    arg.text = symbol.spec->params[k].c_type == CType::f32 ? describe_double(v.f32)
                                                           : describe_double(v.f64);
    return;
  }
  arg.text = std::to_string(v.u32);
}

void CallGenerator::object_arg(CallPlan& plan, const FuzzSymbol& symbol, size_t k, bool malformed) {
  PlannedArg& arg = plan.args[k];
  auto own = [&](lean_object* o) {
    plan.owned.push_back(o);
    arg.value.object = o;
  };
  switch (symbol.roles[k]) {
    case ParamRole::float_array: {
      const uint64_t n = element_count();
      own(make_float_array(host_values(n)));
      arg.kind = ArgKind::float_array;
      arg.length = n;
      arg.text = "FloatArray[" + std::to_string(n) + "]";
      return;
    }
    case ParamRole::byte_array: {
      const size_t shape = rng_.weighted({55, 20, 25});
      uint64_t n = element_count();
      n = shape == 0 ? n * 8 : shape == 1 ? n * 4 : n + rng_.below(8);
      if (malformed) n = n * 8 + 1 + rng_.below(7);
      std::vector<uint8_t> bytes(n);
      for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng_.next());
      own(make_byte_array(bytes));
      arg.kind = ArgKind::byte_array;
      arg.length = n;
      arg.text = "ByteArray[" + std::to_string(n) + "]";
      return;
    }
    case ParamRole::string: {
      static const std::vector<std::string> texts = {
          "",
          "x",
          "tlrt: fuzz message",
          "extern \"C\" __global__ void k(float* out, const float* const* in, unsigned long n) {}",
          "\xce\xbb \xe2\x88\x80 \xf0\x9f\x94\xa5 non-ASCII text",
          std::string(300, 'k'),
      };
      const std::string& text = rng_.pick(texts);
      own(make_string(text));
      arg.kind = ArgKind::string;
      arg.length = text.size();
      arg.text = "String[" + std::to_string(text.size()) + "]";
      return;
    }
    case ParamRole::nat_array: {
      // Anchor: the first live buffer argument's size, so shapes often fit it.
      uint64_t target = element_count();
      for (const PlannedArg& a : plan.args) {
        if (a.kind == ArgKind::live_buffer) {
          target = pool_[a.pool_index].size;
          break;
        }
      }
      const size_t rank = static_cast<size_t>(rng_.weighted({10, 25, 30, 20, 15}));
      std::vector<uint64_t> dims;
      if (rng_.percent(60)) {
        dims = factor(target, rank);
      } else {
        for (size_t i = 0; i < rank; ++i) dims.push_back(rng_.below(7));
      }
      if (malformed && rank > 0) {
        arg.bad_element = true;
        dims[rng_.below(rank)] =
            rng_.pick(std::vector<uint64_t>{(1ull << 32), (1ull << 32) + 1, 1ull << 40});
      } else if (malformed) {
        dims.push_back(1ull << 33);
        arg.bad_element = true;
      }
      uint64_t product = 1;
      for (uint64_t d : dims)
        product = d != 0 && product > UINT64_MAX / d ? UINT64_MAX : product * d;
      own(make_nat_array(dims));
      arg.kind = ArgKind::nat_array;
      arg.length = dims.size();
      arg.product = product;
      arg.values = dims;
      arg.text = "[";
      for (size_t i = 0; i < dims.size(); ++i) arg.text += (i ? "," : "") + decimal(dims[i]);
      arg.text += "]";
      return;
    }
    case ParamRole::buffer_array: {
      const size_t n = rng_.below(5);
      std::vector<lean_object*> elements;
      arg.text = "Buffers[";
      for (size_t i = 0; i < n; ++i) {
        lean_object* o;
        std::string t;
        if (malformed && i == 0) {
          o = fixtures_.non_buffers[0];
          t = fixtures_.non_buffer_names[0];
          arg.bad_element = true;
        } else {
          const int b = rng_.percent(85) ? pick_live() : released();
          if (b < 0) continue;
          o = pool_[b].object;
          t = buffer_text(pool_[b]);
          if (pool_[b].state != BufferState::live) arg.bad_element = true;
        }
        lean_inc(o);
        elements.push_back(o);
        arg.text += (i ? "," : "") + t;
      }
      arg.text += "]";
      own(make_object_array(elements));
      arg.kind = ArgKind::buffer_array;
      arg.length = elements.size();
      return;
    }
    case ParamRole::byte_array_array:
    case ParamRole::float_array_array: {
      const bool bytes = symbol.roles[k] == ParamRole::byte_array_array;
      const size_t n = rng_.below(4);
      std::vector<lean_object*> elements;
      for (size_t i = 0; i < n; ++i) {
        const uint64_t len = rng_.below(65);
        if (bytes) {
          std::vector<uint8_t> b(len * 4);
          for (uint8_t& x : b) x = static_cast<uint8_t>(rng_.next());
          elements.push_back(make_byte_array(b));
        } else {
          elements.push_back(make_float_array(host_values(len)));
        }
      }
      own(make_object_array(elements));
      arg.kind = ArgKind::host_array_array;
      arg.length = n;
      arg.text = std::string(bytes ? "ByteArrays[" : "FloatArrays[") + std::to_string(n) + "]";
      return;
    }
    case ParamRole::format_object:
      arg.kind = ArgKind::format_object;
      arg.value.object = rng_.pick(fixtures_.formats);
      arg.text = "FloatFormat";
      return;
    default:
      return;
  }
}

CallPlan CallGenerator::plan(const FuzzSymbol& symbol) {
  CallPlan plan;
  plan.symbol = &symbol;
  const size_t n = symbol.roles.size();
  plan.args.resize(n);
  const Defect defect = choose_defect(symbol);

  std::vector<size_t> buffer_params, scalar_params, array_params;
  for (size_t k = 0; k < n; ++k) {
    const ParamRole r = symbol.roles[k];
    if (r == ParamRole::buffer) {
      buffer_params.push_back(k);
    } else if (r == ParamRole::nat_array || r == ParamRole::buffer_array ||
               r == ParamRole::byte_array) {
      array_params.push_back(k);
    } else if (symbol.spec->params[k].c_type != CType::object &&
               symbol.spec->params[k].c_type != CType::owned_object && r != ParamRole::token) {
      scalar_params.push_back(k);
    }
  }
  const bool same_shape =
      symbol.rule == RuleKind::same_shape || symbol.rule == RuleKind::whole_reduction;

  // Buffers first: their sizes anchor the shapes of everything else.
  int anchor = -1;
  if (!buffer_params.empty()) {
    anchor = pick_live();
    size_t target = buffer_params[rng_.below(buffer_params.size())];
    // Mismatches need a correct first operand to mismatch against.
    if ((defect == Defect::size_mismatch || defect == Defect::dtype_mismatch) &&
        target == buffer_params[0]) {
      target = buffer_params[1];
    }
    for (size_t k : buffer_params) buffer_arg(plan, k, defect, target, anchor, same_shape);
  }
  const size_t bad_array = defect == Defect::bad_array && !array_params.empty()
                               ? array_params[rng_.below(array_params.size())]
                               : static_cast<size_t>(-1);
  for (size_t k = 0; k < n; ++k) {
    if (symbol.spec->params[k].c_type == CType::object ||
        symbol.spec->params[k].c_type == CType::owned_object) {
      if (symbol.roles[k] != ParamRole::buffer) object_arg(plan, symbol, k, k == bad_array);
    }
  }
  const size_t extreme = defect == Defect::extreme_scalar && !scalar_params.empty()
                             ? scalar_params[rng_.below(scalar_params.size())]
                             : static_cast<size_t>(-1);
  std::vector<size_t> dims;
  for (size_t k = 0; k < n; ++k) {
    const ParamRole r = symbol.roles[k];
    const CType c = symbol.spec->params[k].c_type;
    if (c == CType::object || c == CType::owned_object) continue;
    const bool joins_shape =
        (symbol.rule == RuleKind::generic || symbol.rule == RuleKind::sized_op) &&
        (r == ParamRole::dimension || r == ParamRole::element_count);
    if (joins_shape && k != extreme) {
      dims.push_back(k);
    } else {
      scalar_arg(plan, symbol, k, k == extreme);
    }
  }
  dimensions(plan, dims, anchor >= 0 ? pool_[anchor].size : element_count());
  if (symbol.rule == RuleKind::sized_op) index_list(plan, symbol);
  if (defect == Defect::none) OperandBuilder(*this, plan, symbol).build();

  plan.description = symbol.spec->symbol;
  plan.description += "(";
  for (size_t k = 0; k < n; ++k) {
    plan.description += (k ? ", " : "") + plan.args[k].text;
  }
  plan.description += ")";
  return plan;
}

}  // namespace tlrt_fuzz
