// The ABI symbols the fuzzer knows, as generated at build time from abi/spec/*.tsv by
// generate_symbol_table.cmake: one SymbolSpec per table row, with a call shim per distinct C
// signature. A shim takes the symbol's address (resolved at run time, so a row the library does
// not export is skipped rather than failing the link) and the arguments as ArgValue fields.
#pragma once

#include <lean/lean.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tlrt/torchlean_abi.h"

namespace tlrt_fuzz {

// C parameter types of the tables (the generator's per-C-type table lists their spellings).
enum class CType : uint8_t {
  object,        // b_lean_obj_arg: borrowed Lean object
  owned_object,  // lean_obj_arg: the callee consumes one reference
  u8,
  u16,
  u32,
  u64,
  size,
  i32,
  i64,
  f32,
  f64,
  record,       // torchlean_cuda_buffer*: a raw native record
  unsupported,  // a C type the generator does not know
};

enum class ReturnCType : uint8_t {
  object,
  u8,
  u16,
  u32,
  u64,
  size,
  i32,
  i64,
  f32,
  f64,
  record,
  none
};

enum class Effect : uint8_t { pure, io };

// One argument of a call; the shim reads the field its parameter's C type names.
struct ArgValue {
  lean_object* object = nullptr;
  torchlean_cuda_buffer* record = nullptr;
  uint64_t u64 = 0;
  size_t size = 0;
  int64_t i64 = 0;
  double f64 = 0.0;
  float f32 = 0.0f;
  int32_t i32 = 0;
  uint32_t u32 = 0;
  uint16_t u16 = 0;
  uint8_t u8 = 0;
};

struct ReturnValue {
  ReturnCType kind = ReturnCType::none;
  lean_object* object = nullptr;  // owned by the caller
  torchlean_cuda_buffer* record = nullptr;
  uint64_t scalar = 0;  // integer results, or the bits of a double
};

inline ReturnValue return_object(lean_object* o) {
  ReturnValue r;
  r.kind = ReturnCType::object;
  r.object = o;
  return r;
}
inline ReturnValue return_record(torchlean_cuda_buffer* p) {
  ReturnValue r;
  r.kind = ReturnCType::record;
  r.record = p;
  return r;
}
inline ReturnValue return_scalar(uint64_t v) {
  ReturnValue r;
  r.kind = ReturnCType::u64;
  r.scalar = v;
  return r;
}
inline ReturnValue return_double(double v) {
  ReturnValue r;
  r.kind = ReturnCType::f64;
  std::memcpy(&r.scalar, &v, sizeof v);
  return r;
}
inline ReturnValue return_none() {
  return ReturnValue{};
}

using CallShim = ReturnValue (*)(void* fn, const ArgValue* args);

struct ParamSpec {
  CType c_type;
  const char* c_spelling;  // as written in c_params
  const char* name;        // the C parameter name
  const char* lean_type;   // from lean_decl ("Buffer", "Array Nat", "Dtype", ...); "" if unknown
};

struct SymbolSpec {
  const char* symbol;
  const char* table;  // file name of the tsv row
  const char* group;  // the row's group column ("" when the table has none)
  Effect effect;
  ReturnCType return_type;
  const char* c_return_type;  // as written, e.g. "lean_obj_res (Buffer x Buffer)"
  const char* lean_result;    // Lean result type, e.g. "IO Buffer"; "" if unknown
  const char* lean_wrapper;   // the Lean API wrapping a raw declaration ("deviceInfo"), or ""
  size_t param_count;
  const ParamSpec* params;
  CallShim shim;            // null when `unsupported` is set
  const char* unsupported;  // the C type the generator could not map, or ""
};

extern const SymbolSpec kSymbolSpecs[];
extern const size_t kSymbolSpecCount;

}  // namespace tlrt_fuzz
