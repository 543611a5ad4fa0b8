# Test registry. A suite is registered with one call; nothing else needs to know it exists:
#
#   tlrt_cpu_test(NAME SOURCES ... [LINK ...] [ENV ...] [ARGS ...])
#       a GoogleTest binary NAME_test run once, label cpu (runs anywhere, CI).
#   tlrt_gpu_test(NAME SOURCES ... [LINK ...] [SHARDS N] [SANITIZER_ENV VAR=VALUE ...]
#                 [SANITIZER_SHARDS N] [SANITIZER_LEAVE_OUT TOOL=PATTERN ...])  (only with CUDA)
#       a binary NAME_test that needs a device, label gpu; it skips visibly without one. With
#       SHARDS N (N >= 2), instead of one entry NAME, the entries NAME_1_of_N ... NAME_N_of_N, each
#       running GoogleTest's shard of the sub-tests (GTEST_TOTAL_SHARDS, GTEST_SHARD_INDEX), so
#       that `ctest -j` runs the parts of a long suite side by side. Every sub-test is in exactly
#       one shard; a shard that selects no sub-test fails (tests/test_main.cpp), so N must not
#       exceed the suite's sub-test count.
#   tlrt_abi_suite(NAME SOURCES ... [LINK ...] [SANITIZER_ENV VAR=VALUE ...]
#                  [SANITIZER_SKIP TOOL ...] [SANITIZER_SHARDS N] [SANITIZER_LEAVE_OUT TOOL=PATTERN ...])
#       a suite through the Lean ABI (libtlrt + the Lean runtime double), run twice: NAME_reference
#       (TLRT_DEVICE=cpu, label cpu) and NAME_cuda (TLRT_DEVICE=cuda, label gpu). SANITIZER_SKIP
#       names the tools (memcheck, racecheck, initcheck, synccheck) that leave it out, each with
#       its reason in a comment at the registration.
#   For both kinds of gpu binary: SANITIZER_ENV VAR=VALUE is set for its runs under the
#   compute-sanitizer tools only (TLRT_TEST_RUNS=N: tests/support/repeat_runs.h). SANITIZER_SHARDS
#   N (N >= 2) runs the binary under each compute-sanitizer tool as N processes, GoogleTest's shards
#   1..N of its sub-tests, reported as NAME_1_of_N ... NAME_N_of_N, so that a suite too long for one
#   run under a tool is split over the stage's parallel runs. SANITIZER_LEAVE_OUT TOOL=PATTERN
#   leaves the sub-tests matching the GoogleTest PATTERN (no spaces or colons) out of that tool's
#   runs only; the stage prints a line for each, and the reason is a comment at the registration.
#
# Every binary that runs on a device is written to ${CMAKE_BINARY_DIR}/gpu-binaries.txt, one
# "NAME PATH VAR=VALUE... [skip=TOOL,...] [shards=N] [leave=TOOL=PATTERN...]" line each, which
# scripts/gpu-check.sh reads to run the compute-sanitizer tools over all of them: under every tool
# but those after skip=, with the VAR=VALUE words in the environment, as N shard processes with
# shards=, and without the sub-tests a leave= word names for that tool.
#
# Every binary has tests/test_main.cpp's main(), which exits with TLRT_SKIP_CODE (77) when every
# sub-test that ran skipped (GTEST_SKIP); entries running such a binary set SKIP_RETURN_CODE to it
# and then report "Skipped". A failure beside skips stays a failure (an output pattern would mark
# the entry skipped whatever its exit status), and a suite that passes with some skips lists them
# through scripts/skip-report.sh (run by scripts/run-tests.sh and scripts/gpu-check.sh).
# TLRT_SKIP_REGEX is for the cmake-script entries, which print that line and stop.

set(TLRT_SKIP_CODE 77)
set(TLRT_SKIP_REGEX "\\[  SKIPPED \\]")
set_property(GLOBAL PROPERTY TLRT_GPU_BINARIES "")

# NAME_test from SOURCES and tests/test_main.cpp; THREADSAFE_DEATH for binaries that may hold a
# CUDA context.
function(tlrt__add_binary name)
  cmake_parse_arguments(T "THREADSAFE_DEATH" "" "SOURCES;LINK" ${ARGN})
  add_executable(${name}_test ${T_SOURCES} ${CMAKE_SOURCE_DIR}/tests/test_main.cpp)
  target_link_libraries(${name}_test PRIVATE ${T_LINK} GTest::gtest)
  if(T_THREADSAFE_DEATH)
    target_compile_definitions(${name}_test PRIVATE TLRT_THREADSAFE_DEATH_TESTS=1)
  endif()
  target_include_directories(${name}_test PRIVATE ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/tests)
endfunction()

# One line of gpu-binaries.txt: ENV a list of VAR=VALUE, SKIP a list of tools, SHARDS empty or
# N >= 2, LEAVE a list of TOOL=PATTERN (checked here: a tool name, a pattern without spaces or colons).
function(tlrt__record_gpu name env skip shards leave)
  string(REPLACE ";" " " words "${env}")
  if(skip)
    string(REPLACE ";" "," tools "${skip}")
    string(APPEND words " skip=${tools}")
  endif()
  if(NOT shards STREQUAL "")
    if(NOT shards MATCHES "^[0-9]+$" OR shards LESS 2)
      message(FATAL_ERROR "${name}: SANITIZER_SHARDS ${shards} is not a whole number of at least 2")
    endif()
    string(APPEND words " shards=${shards}")
  endif()
  foreach(word ${leave})
    if(NOT word MATCHES "^(memcheck|racecheck|initcheck|synccheck)=[^ :=]+$")
      message(FATAL_ERROR "${name}: SANITIZER_LEAVE_OUT ${word} is not TOOL=PATTERN "
                          "(a compute-sanitizer tool, a GoogleTest pattern without spaces or colons)")
    endif()
    string(APPEND words " leave=${word}")
  endforeach()
  set_property(GLOBAL APPEND PROPERTY TLRT_GPU_BINARIES
               "${name} $<TARGET_FILE:${name}_test> ${words}")
endfunction()

# The ctest entries of binary NAME_test with LABEL and environment ENV (a list, may be empty): one
# entry NAME, or with SHARDS >= 2 one entry per GoogleTest shard. ARGS go to the binary.
function(tlrt__add_entries name label shards env)
  set(args ${ARGN})
  if(NOT shards OR shards LESS 2)
    add_test(NAME ${name} COMMAND ${name}_test ${args})
    set_tests_properties(${name} PROPERTIES LABELS ${label} SKIP_RETURN_CODE ${TLRT_SKIP_CODE})
    if(env)
      set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}")
    endif()
    return()
  endif()
  math(EXPR last "${shards} - 1")
  foreach(i RANGE ${last})
    math(EXPR k "${i} + 1")
    set(entry ${name}_${k}_of_${shards})
    set(entry_env ${env} GTEST_TOTAL_SHARDS=${shards} GTEST_SHARD_INDEX=${i})
    add_test(NAME ${entry} COMMAND ${name}_test ${args})
    set_tests_properties(${entry} PROPERTIES LABELS ${label} SKIP_RETURN_CODE ${TLRT_SKIP_CODE}
                         ENVIRONMENT "${entry_env}")
  endforeach()
endfunction()

function(tlrt_cpu_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LINK;ENV;ARGS" ${ARGN})
  tlrt__add_binary(${name} SOURCES ${T_SOURCES} LINK ${T_LINK})
  tlrt__add_entries(${name} cpu "" "${T_ENV}" ${T_ARGS})
endfunction()

function(tlrt_gpu_test name)
  if(NOT TLRT_HAVE_CUDA)
    return()
  endif()
  cmake_parse_arguments(T "" "SHARDS;SANITIZER_SHARDS" "SOURCES;LINK;SANITIZER_ENV;SANITIZER_LEAVE_OUT"
                        ${ARGN})
  tlrt__require_words(${name} SANITIZER_ENV "^[A-Za-z_][A-Za-z0-9_]*=[^ ]*$"
                      "is not VAR=VALUE without spaces" ${T_SANITIZER_ENV})
  tlrt__add_binary(${name} THREADSAFE_DEATH SOURCES ${T_SOURCES} LINK ${T_LINK} CUDA::cudart)
  tlrt__add_entries(${name} gpu "${T_SHARDS}" "")
  set(env TLRT_DEVICE=cuda ${T_SANITIZER_ENV})
  tlrt__record_gpu(${name} "${env}" "" "${T_SANITIZER_SHARDS}" "${T_SANITIZER_LEAVE_OUT}")
endfunction()

# Stops the configure step at the first word after WHY that does not match REGEX.
function(tlrt__require_words name what regex why)
  foreach(word ${ARGN})
    if(NOT word MATCHES "${regex}")
      message(FATAL_ERROR "${name}: ${what} ${word} ${why}")
    endif()
  endforeach()
endfunction()

function(tlrt_abi_suite name)
  cmake_parse_arguments(T "" "SANITIZER_SHARDS" "SOURCES;LINK;SANITIZER_ENV;SANITIZER_SKIP;SANITIZER_LEAVE_OUT"
                        ${ARGN})
  tlrt__require_words(${name} SANITIZER_SKIP "^(memcheck|racecheck|initcheck|synccheck)$"
                      "is not a compute-sanitizer tool" ${T_SANITIZER_SKIP})
  tlrt__require_words(${name} SANITIZER_ENV "^[A-Za-z_][A-Za-z0-9_]*=[^ ]*$"
                      "is not VAR=VALUE without spaces" ${T_SANITIZER_ENV})
  tlrt__add_binary(${name} THREADSAFE_DEATH SOURCES ${T_SOURCES} abi_test_support.cpp
                   LINK tlrt tlrt_lean_double ${T_LINK})
  add_test(NAME ${name}_reference COMMAND ${name}_test)
  set_tests_properties(${name}_reference PROPERTIES LABELS cpu ENVIRONMENT "TLRT_DEVICE=cpu"
                       SKIP_RETURN_CODE ${TLRT_SKIP_CODE})
  add_test(NAME ${name}_cuda COMMAND ${name}_test)
  set_tests_properties(${name}_cuda PROPERTIES LABELS gpu ENVIRONMENT "TLRT_DEVICE=cuda"
                       SKIP_RETURN_CODE ${TLRT_SKIP_CODE})
  if(TLRT_HAVE_CUDA)
    set(env TLRT_DEVICE=cuda ${T_SANITIZER_ENV})
    tlrt__record_gpu(${name} "${env}" "${T_SANITIZER_SKIP}" "${T_SANITIZER_SHARDS}"
                     "${T_SANITIZER_LEAVE_OUT}")
  endif()
endfunction()

# Called once after every suite is registered.
function(tlrt_write_gpu_binaries)
  get_property(lines GLOBAL PROPERTY TLRT_GPU_BINARIES)
  string(REPLACE ";" "\n" text "${lines}")
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/gpu-binaries.txt CONTENT "${text}\n")
endfunction()
