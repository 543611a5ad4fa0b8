# Configures and builds targets against the next lean.h generation in a folder of its own
# (tests/lean_double/CMakeLists.txt): CUDA off, the given build type (default Release) and targets
# (comma-separated).
#   cmake -DSOURCE_DIR=... -DBUILD_DIR=... -DGENERATOR=... -DTARGETS=... [-DBUILD_TYPE=Debug]
#         [-DC_COMPILER=... -DCXX_COMPILER=...] [-DGTEST_SOURCE=...] -P lean_next_build.cmake
cmake_minimum_required(VERSION 3.24)

string(REPLACE "," ";" TARGETS "${TARGETS}")
if(NOT BUILD_TYPE)
  set(BUILD_TYPE Release)
endif()
set(args -S ${SOURCE_DIR} -B ${BUILD_DIR} -G ${GENERATOR} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
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
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} -j ${cores} --target ${TARGETS}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building ${BUILD_DIR} against the next lean.h failed (${rc})")
endif()
message(STATUS "built ${TARGETS} in ${BUILD_DIR} (${BUILD_TYPE}) against abi/lean_compat/next/lean/lean.h")
