# GoogleTest: the installed package, else a source tree (TLRT_GTEST_SOURCE or Debian's
# /usr/src/googletest) built here.
find_package(GTest QUIET)
if(NOT GTest_FOUND)
  set(_gtest_src "${TLRT_GTEST_SOURCE}")
  if(NOT _gtest_src AND EXISTS /usr/src/googletest/CMakeLists.txt)
    set(_gtest_src /usr/src/googletest)
  endif()
  if(NOT _gtest_src)
    message(FATAL_ERROR "GoogleTest not found: install libgtest-dev or set TLRT_GTEST_SOURCE")
  endif()
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
  add_subdirectory(${_gtest_src} ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)
  add_library(GTest::gtest ALIAS gtest)
  add_library(GTest::gtest_main ALIAS gtest_main)
endif()

