# Configures and builds libtlrt.so, the Lean runtime double and the suites lean_next_suites runs
# against the next lean.h generation (tests/lean_double/CMakeLists.txt): CUDA off, Release.
#   cmake -DSOURCE_DIR=... -DBUILD_DIR=... -DGENERATOR=... [-DC_COMPILER=... -DCXX_COMPILER=...]
#         [-DGTEST_SOURCE=...] -P lean_next_build.cmake
cmake_minimum_required(VERSION 3.24)

set(args -S ${SOURCE_DIR} -B ${BUILD_DIR} -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
         -DTLRT_LEAN_HEADER=next -DTLRT_ENABLE_CUDA=OFF -DTLRT_BUILD_BENCH=OFF
         -DTLRT_TEST_LEAN_NEXT=OFF)
if(C_COMPILER)
  list(APPEND args -DCMAKE_C_COMPILER=${C_COMPILER})
endif()
if(CXX_COMPILER)
  list(APPEND args -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
if(GTEST_SOURCE)
  list(APPEND args -DTLRT_GTEST_SOURCE=${GTEST_SOURCE})
endif()

execute_process(COMMAND ${CMAKE_COMMAND} ${args} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring ${BUILD_DIR} against the next lean.h failed (${rc})")
endif()
cmake_host_system_information(RESULT cores QUERY NUMBER_OF_LOGICAL_CORES)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} -j ${cores} --target tlrt
                        lean_double_test lean_runtime_symbols_test abi_test elementwise_test
                        shape_test
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building ${BUILD_DIR} against the next lean.h failed (${rc})")
endif()
message(STATUS "built ${BUILD_DIR} against abi/lean_compat/next/lean/lean.h")
