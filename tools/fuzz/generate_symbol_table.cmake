# Generates the fuzzer's symbol table from the ABI symbol tables (abi/spec/*.tsv), so that every
# row of every table is fuzzed without editing the fuzzer: one entry per symbol (name, table,
# group, IO or pure, parameter C types, names and Lean types) and one call shim per distinct C
# signature (a function that casts the symbol's address to its C type and calls it with
# ArgValue fields).
#
#   cmake -DTABLES="a.tsv|b.tsv" -DOUTPUT=fuzz_symbol_table.cpp -P generate_symbol_table.cmake
#
# Columns are found by their header names: symbol, c_return_type, c_params and lean_decl are
# required; io_or_pure and group are used when present. A table without io_or_pure counts a
# symbol as IO when its C return type says "(IO ...)" or its Lean result type starts with "IO ".
# Lean parameter types come from the binders of lean_decl, matched to c_params by position; when
# the counts differ the Lean types are left empty and the fuzzer decides (see call_rules.cpp).
# A symbol listed in two tables keeps its first row; tables whose file name contains "runtime"
# are read first.
#
# The per-C-type table below is the only place that knows C spellings. A parameter or return
# type it does not list makes the symbol's shim null and names the type in `unsupported`, so the
# fuzzer skips that symbol visibly instead of the build failing.

cmake_minimum_required(VERSION 3.24)

if(NOT DEFINED TABLES OR NOT DEFINED OUTPUT)
  message(FATAL_ERROR "usage: cmake -DTABLES=\"a.tsv|b.tsv\" -DOUTPUT=file.cpp -P ${CMAKE_CURRENT_LIST_FILE}")
endif()

# ---- per-C-type table -----------------------------------------------------------------------------
# parameter C type -> "<CType enumerator>|<C++ spelling>|<ArgValue field expression>"
set(PARAM_b_lean_obj_arg "object|b_lean_obj_arg|.object")
set(PARAM_lean_obj_arg "owned_object|lean_obj_arg|.object")
set(PARAM_uint8_t "u8|uint8_t|.u8")
set(PARAM_uint16_t "u16|uint16_t|.u16")
set(PARAM_uint32_t "u32|uint32_t|.u32")
set(PARAM_uint64_t "u64|uint64_t|.u64")
set(PARAM_size_t "size|size_t|.size")
set(PARAM_double "f64|double|.f64")
set(PARAM_float "f32|float|.f32")
set(PARAM_int32_t "i32|int32_t|.i32")
set(PARAM_int64_t "i64|int64_t|.i64")
set(PARAM_torchlean_cuda_buffer_ptr "record|torchlean_cuda_buffer*|.record")
# return C type (first word of c_return_type) -> "<ReturnCType enumerator>|<C++ spelling>|<wrapper>"
set(RETURN_lean_obj_res "object|lean_obj_res|return_object")
set(RETURN_uint8_t "u8|uint8_t|return_scalar")
set(RETURN_uint16_t "u16|uint16_t|return_scalar")
set(RETURN_uint32_t "u32|uint32_t|return_scalar")
set(RETURN_uint64_t "u64|uint64_t|return_scalar")
set(RETURN_size_t "size|size_t|return_scalar")
set(RETURN_double "f64|double|return_double")
set(RETURN_float "f32|float|return_double")
set(RETURN_int32_t "i32|int32_t|return_scalar")
set(RETURN_int64_t "i64|int64_t|return_scalar")
set(RETURN_void "none|void|")
set(RETURN_torchlean_cuda_buffer_ptr "record|torchlean_cuda_buffer*|return_record")

# Characters CMake lists or regexes would misread are replaced while parsing, restored on output.
set(SEMI_MARK "@SEMI@")
set(LBRACKET_MARK "@LBR@")
set(RBRACKET_MARK "@RBR@")

function(type_key c_type out)
  string(STRIP "${c_type}" t)
  string(REPLACE "*" "_ptr" t "${t}")
  string(REGEX REPLACE "[^A-Za-z0-9_]" "_" t "${t}")
  set(${out} "${t}" PARENT_SCOPE)
endfunction()

# C++ string literal of `text` (quotes and backslashes escaped, markers restored).
function(cxx_literal text out)
  string(REPLACE "${SEMI_MARK}" ";" t "${text}")
  string(REPLACE "${LBRACKET_MARK}" "[" t "${t}")
  string(REPLACE "${RBRACKET_MARK}" "]" t "${t}")
  string(REPLACE "\\" "\\\\" t "${t}")
  string(REPLACE "\"" "\\\"" t "${t}")
  set(${out} "\"${t}\"" PARENT_SCOPE)
endfunction()

# Lean binder types of a declaration, in order: "(a b : @& Buffer) (n : UInt32 := 4)" gives
# Buffer;Buffer;UInt32. Only innermost parenthesised groups of the form "names : type" count;
# text from the first "[" on is commentary.
function(lean_binder_types decl out)
  set(types "")
  string(FIND "${decl}" "${LBRACKET_MARK}" cut)
  if(cut GREATER -1)
    string(SUBSTRING "${decl}" 0 ${cut} decl)
  endif()
  string(REGEX MATCHALL "\\([^()]*\\)" groups "${decl}")
  foreach(group IN LISTS groups)
    if(NOT group MATCHES "^\\(([^:]+) : (.*)\\)$")
      continue()
    endif()
    set(names "${CMAKE_MATCH_1}")
    set(type "${CMAKE_MATCH_2}")
    string(REGEX REPLACE " :=.*$" "" type "${type}")
    string(REGEX REPLACE "^@& " "" type "${type}")
    string(STRIP "${type}" type)
    string(STRIP "${names}" names)
    if(names MATCHES "[^A-Za-z0-9_' ]")
      continue()
    endif()
    string(REGEX REPLACE " +" ";" name_list "${names}")
    foreach(unused IN LISTS name_list)
      list(APPEND types "${type}")
    endforeach()
  endforeach()
  set(${out} "${types}" PARENT_SCOPE)
endfunction()

# Lean result type: the text after the last ") : " before any "[" commentary.
function(lean_result_type decl out)
  string(FIND "${decl}" "${LBRACKET_MARK}" cut)
  if(cut GREATER -1)
    string(SUBSTRING "${decl}" 0 ${cut} decl)
  endif()
  set(result "")
  if(decl MATCHES "\\) : ([^()]*)$")
    string(STRIP "${CMAKE_MATCH_1}" result)
  endif()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# The Lean API a private raw declaration is wrapped by, from the "[...]" commentary of lean_decl
# ("[LibTorch.deviceInfo]" gives deviceInfo): error messages may name the op by it.
function(lean_wrapper_name decl out)
  set(name "")
  string(FIND "${decl}" "${LBRACKET_MARK}" at)
  if(at GREATER -1)
    string(SUBSTRING "${decl}" ${at} -1 comment)
    if(comment MATCHES "[A-Za-z_][A-Za-z0-9_]*\\.([A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_])")
      set(name "${CMAKE_MATCH_1}")
      string(REGEX REPLACE "^.*\\." "" name "${name}")
    endif()
  endif()
  set(${out} "${name}" PARENT_SCOPE)
endfunction()

string(REPLACE "|" ";" table_files "${TABLES}")
set(ordered_tables "")
foreach(f IN LISTS table_files)
  get_filename_component(n "${f}" NAME)
  if(n MATCHES "runtime")
    list(APPEND ordered_tables "${f}")
  endif()
endforeach()
foreach(f IN LISTS table_files)
  get_filename_component(n "${f}" NAME)
  if(NOT n MATCHES "runtime")
    list(APPEND ordered_tables "${f}")
  endif()
endforeach()

set(seen_symbols "")
set(signatures "")   # distinct signature keys, index = shim number
set(shim_code "")
set(param_code "")
set(entry_code "")
set(entry_count 0)

foreach(table IN LISTS ordered_tables)
  get_filename_component(table_name "${table}" NAME)
  file(READ "${table}" content)
  string(REPLACE ";" "${SEMI_MARK}" content "${content}")
  string(REPLACE "[" "${LBRACKET_MARK}" content "${content}")
  string(REPLACE "]" "${RBRACKET_MARK}" content "${content}")
  string(REPLACE "\r" "" content "${content}")
  string(REPLACE "\n" ";" lines "${content}")
  list(GET lines 0 header)
  list(REMOVE_AT lines 0)
  string(REPLACE "\t" ";" header_cols "${header}")
  foreach(col symbol c_return_type c_params lean_decl io_or_pure group)
    list(FIND header_cols "${col}" COL_${col})
  endforeach()
  foreach(col symbol c_return_type c_params lean_decl)
    if(COL_${col} EQUAL -1)
      message(FATAL_ERROR "${table}: no '${col}' column in the header")
    endif()
  endforeach()

  foreach(line IN LISTS lines)
    if(line STREQUAL "")
      continue()
    endif()
    string(REPLACE "\t" ";" cols "${line}")
    list(LENGTH cols ncols)
    list(GET cols ${COL_symbol} symbol)
    if(NOT symbol MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
      message(WARNING "${table_name}: skipping a row whose symbol is not a C identifier: ${symbol}")
      continue()
    endif()
    list(FIND seen_symbols "${symbol}" already)
    if(already GREATER -1)
      continue()
    endif()
    list(APPEND seen_symbols "${symbol}")
    list(GET cols ${COL_c_return_type} c_return)
    list(GET cols ${COL_c_params} c_params)
    list(GET cols ${COL_lean_decl} lean_decl)
    set(group "")
    if(COL_group GREATER -1 AND COL_group LESS ncols)
      list(GET cols ${COL_group} group)
    endif()
    lean_result_type("${lean_decl}" lean_result)
    lean_wrapper_name("${lean_decl}" lean_wrapper)
    set(effect "pure")
    if(COL_io_or_pure GREATER -1 AND COL_io_or_pure LESS ncols)
      list(GET cols ${COL_io_or_pure} io_col)
      if(io_col STREQUAL "io")
        set(effect "io")
      endif()
    elseif(c_return MATCHES "\\(IO " OR lean_result MATCHES "^IO ")
      set(effect "io")
    endif()

    # C parameters: "type name@SEMI@ type name".
    set(param_types "")
    set(param_names "")
    string(STRIP "${c_params}" c_params)
    if(NOT c_params STREQUAL "" AND NOT c_params STREQUAL "void")
      string(REPLACE "${SEMI_MARK}" ";" param_list "${c_params}")
      foreach(p IN LISTS param_list)
        string(STRIP "${p}" p)
        if(p MATCHES "^(.*[^A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)$")
          string(STRIP "${CMAKE_MATCH_1}" ptype)
          list(APPEND param_types "${ptype}")
          list(APPEND param_names "${CMAKE_MATCH_2}")
        else()
          list(APPEND param_types "${p}")
          list(APPEND param_names "arg")
        endif()
      endforeach()
    endif()
    list(LENGTH param_types nparams)

    lean_binder_types("${lean_decl}" lean_types)
    list(LENGTH lean_types nlean)
    if(NOT nlean EQUAL nparams)
      set(lean_types "")
    endif()

    # Signature and shim.
    set(unsupported "")
    string(REGEX MATCH "^[A-Za-z_][A-Za-z0-9_]*\\*?" ret_word "${c_return}")
    type_key("${ret_word}" ret_key)
    if(DEFINED RETURN_${ret_key})
      string(REPLACE "|" ";" ret_info "${RETURN_${ret_key}}")
      list(GET ret_info 0 ret_enum)
      list(GET ret_info 1 ret_cxx)
      list(LENGTH ret_info ret_info_len)
      set(ret_wrap "")
      if(ret_info_len GREATER 2)
        list(GET ret_info 2 ret_wrap)
      endif()
    else()
      set(unsupported "return type ${c_return}")
      set(ret_enum "none")
    endif()
    set(sig_key "${ret_key}")
    set(cxx_params "")
    set(call_args "")
    set(param_entries "")
    set(i 0)
    foreach(ptype IN LISTS param_types)
      list(GET param_names ${i} pname)
      set(ltype "")
      if(NOT lean_types STREQUAL "")
        list(GET lean_types ${i} ltype)
      endif()
      type_key("${ptype}" pkey)
      if(DEFINED PARAM_${pkey})
        string(REPLACE "|" ";" pinfo "${PARAM_${pkey}}")
        list(GET pinfo 0 penum)
        list(GET pinfo 1 pcxx)
        list(GET pinfo 2 pfield)
        list(APPEND cxx_params "${pcxx}")
        list(APPEND call_args "a[${i}]${pfield}")
      else()
        set(penum "unsupported")
        if(unsupported STREQUAL "")
          set(unsupported "parameter type ${ptype}")
        endif()
      endif()
      string(APPEND sig_key "-${pkey}")
      cxx_literal("${pname}" pname_lit)
      cxx_literal("${ltype}" ltype_lit)
      cxx_literal("${ptype}" ptype_lit)
      string(APPEND param_entries "    {CType::${penum}, ${ptype_lit}, ${pname_lit}, ${ltype_lit}},\n")
      math(EXPR i "${i} + 1")
    endforeach()

    set(shim "nullptr")
    if(unsupported STREQUAL "")
      list(FIND signatures "${sig_key}" shim_index)
      if(shim_index EQUAL -1)
        list(LENGTH signatures shim_index)
        list(APPEND signatures "${sig_key}")
        string(REPLACE ";" ", " cxx_param_text "${cxx_params}")
        string(REPLACE ";" ", " call_arg_text "${call_args}")
        set(fn_type "${ret_cxx} (*)(${cxx_param_text})")
        set(call "reinterpret_cast<${fn_type}>(fn)(${call_arg_text})")
        if(ret_enum STREQUAL "none")
          set(body "  ${call};\n  return return_none();\n")
        else()
          set(body "  return ${ret_wrap}(${call});\n")
        endif()
        string(APPEND shim_code "// ${sig_key}\nReturnValue shim_${shim_index}(void* fn, [[maybe_unused]] const ArgValue* a) {\n${body}}\n\n")
      endif()
      set(shim "&shim_${shim_index}")
    endif()

    set(params_ref "nullptr")
    if(nparams GREATER 0)
      set(params_ref "params_${entry_count}")
      string(APPEND param_code "const ParamSpec params_${entry_count}[] = {\n${param_entries}};\n")
    endif()
    cxx_literal("${symbol}" symbol_lit)
    cxx_literal("${table_name}" table_lit)
    cxx_literal("${group}" group_lit)
    cxx_literal("${c_return}" c_return_lit)
    cxx_literal("${lean_result}" lean_result_lit)
    cxx_literal("${unsupported}" unsupported_lit)
    cxx_literal("${lean_wrapper}" lean_wrapper_lit)
    string(APPEND entry_code
           "    {${symbol_lit}, ${table_lit}, ${group_lit}, Effect::${effect}, ReturnCType::${ret_enum},\n"
           "     ${c_return_lit}, ${lean_result_lit}, ${lean_wrapper_lit}, ${nparams}, ${params_ref},\n"
           "     ${shim}, ${unsupported_lit}},\n")
    math(EXPR entry_count "${entry_count} + 1")
  endforeach()
endforeach()

set(source_list "")
foreach(f IN LISTS ordered_tables)
  get_filename_component(n "${f}" NAME)
  string(APPEND source_list " ${n}")
endforeach()

file(WRITE "${OUTPUT}.tmp"
"// Generated at build time by tools/fuzz/generate_symbol_table.cmake from${source_list}.
// Edits are overwritten; change the tables or the generator instead.
#include \"tools/fuzz/symbol_table.h\"

namespace tlrt_fuzz {
namespace {

${shim_code}${param_code}
}  // namespace

const SymbolSpec kSymbolSpecs[] = {
${entry_code}};

const size_t kSymbolSpecCount = ${entry_count};

}  // namespace tlrt_fuzz
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
