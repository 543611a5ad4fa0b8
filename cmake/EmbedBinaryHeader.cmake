# Writes OUTPUT, a C++ source defining tlrt::kernels::torchlean_binary_header() (binary_header.h)
# as the text of INPUT (kernels/binary/torchlean_binary.cuh). Run at build time by the custom
# command in CMakeLists.txt, which reruns it whenever the header changes; the library never reads
# the header from disk.
#   cmake -DINPUT=<.cuh> -DOUTPUT=<.cpp> -P EmbedBinaryHeader.cmake
file(READ "${INPUT}" text)
set(delimiter "tlbinary_text")  # at most 16 characters
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )${delimiter}\"")
endif()
file(WRITE "${OUTPUT}.tmp"
"// Generated from kernels/binary/torchlean_binary.cuh by cmake/EmbedBinaryHeader.cmake: do not edit.
#include \"kernels/binary/binary_header.h\"

namespace tlrt::kernels {
namespace {
constexpr char kText[] = R\"${delimiter}(${text})${delimiter}\";
}  // namespace

std::string_view torchlean_binary_header() { return {kText, sizeof kText - 1}; }
}  // namespace tlrt::kernels
")
# Replace only when the text changed, so an unchanged header does not recompile the library.
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUTPUT}.tmp" "${OUTPUT}")
file(REMOVE "${OUTPUT}.tmp")
