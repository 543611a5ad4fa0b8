# Installation and packaging: `cmake --install` lays out
#   lib/libtlrt.so.<VERSION> (SONAME libtlrt.so.<SOVERSION>), lib/libtlrt_unavailable.so.<VERSION>
#   include/tlrt/torchlean_abi.h           the public header; it includes <lean/lean.h>, which the
#                                          consumer's Lean toolchain provides (never shipped here)
#   lib/cmake/tlrt/                        find_package(tlrt): tlrt::tlrt, tlrt::unavailable
#   lib/pkgconfig/tlrt.pc, tlrt-unavailable.pc
#   bin/tlrt-parity, bin/tlrt-bench        when built (tlrt-bench measures with the CUDA backend;
#                                          without it only --help, --list and --compare work)
#   lib/tlrt/libtlrt_lean_double.so        only beside tlrt-bench: the Lean runtime double its ABI
#                                          timings run against; never linked by a consumer
# and `cpack` (CPackConfig.cmake in the build tree) turns the same layout into a .deb.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TLRT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/tlrt" CACHE STRING
    "Where the CMake package files go, relative to the prefix")

set_target_properties(tlrt PROPERTIES EXPORT_NAME tlrt)
set_target_properties(tlrt_unavailable PROPERTIES EXPORT_NAME unavailable)
# The libraries keep the CUDA library directories they were linked against (outside the system
# directories) as their run path, so an installed libtlrt.so finds cuBLAS, cuFFT and cuDNN.
set_target_properties(tlrt tlrt_unavailable PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS tlrt tlrt_unavailable EXPORT tlrtTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
                NAMELINK_COMPONENT development
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/tlrt/torchlean_abi.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tlrt COMPONENT development)
install(EXPORT tlrtTargets NAMESPACE tlrt:: DESTINATION ${TLRT_INSTALL_CMAKEDIR}
        COMPONENT development)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/tlrtConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/package/tlrtConfig.cmake
                              INSTALL_DESTINATION ${TLRT_INSTALL_CMAKEDIR})
# Before 1.0 a minor release may change the ABI: the same minor version is required.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/tlrtConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/package/tlrtConfig.cmake
              ${CMAKE_BINARY_DIR}/package/tlrtConfigVersion.cmake
        DESTINATION ${TLRT_INSTALL_CMAKEDIR} COMPONENT development)

# pkg-config: relative to the .pc file's own folder, so an unpacked .deb or a moved prefix works.
file(RELATIVE_PATH TLRT_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
foreach(pc tlrt tlrt-unavailable)
  configure_file(${CMAKE_SOURCE_DIR}/cmake/${pc}.pc.in ${CMAKE_BINARY_DIR}/package/${pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/package/${pc}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)
endforeach()

# ---- tools ---------------------------------------------------------------------------------------------
if(TARGET tlrt-parity)
  set_target_properties(tlrt-parity PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS tlrt-parity RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
endif()
if(TARGET tlrt-bench)
  set_target_properties(tlrt-bench PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS tlrt-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
endif()
if(TARGET tlrt-bench AND TLRT_HAVE_CUDA)
  # The measuring build times the ABI through libtlrt.so with the Lean runtime double.
  set_property(TARGET tlrt-bench APPEND PROPERTY INSTALL_RPATH
               "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}" "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}/tlrt")
  install(TARGETS tlrt_lean_double LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/tlrt
          COMPONENT tools NAMELINK_SKIP)
endif()

# ---- cpack: one .deb with the libraries, the header, the packages and the tools ------------------------
set(CPACK_GENERATOR "DEB" CACHE STRING "cpack generators")
set(CPACK_PACKAGE_NAME "tlrt")
set(CPACK_PACKAGE_VENDOR "tlrt")
set(CPACK_PACKAGE_CONTACT "tlrt maintainers <tlrt@localhost>" CACHE STRING "Debian Maintainer field")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "TorchLean's GPU buffer ABI on CUDA without ATen (libtlrt.so, libtlrt_unavailable.so)")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "libs")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/leanprover/TorchLean")
# Dependencies stated by name: the C and C++ runtimes and, in a build with the CUDA backend, the
# CUDA libraries of NVIDIA's apt repository for this toolkit (cudart, cuBLAS, cuFFT; cuDNN when
# linked). A CUDA toolkit installed without apt can drop those with -DTLRT_DEB_CUDA_DEPENDS=.
set(tlrt_deb_depends "libc6, libstdc++6, libgcc-s1")
if(TLRT_HAVE_QUADMATH)
  string(APPEND tlrt_deb_depends ", libquadmath0")
endif()
if(TARGET tlrt-parity AND TLRT_FFTW3Q_LIBRARY)
  string(APPEND tlrt_deb_depends ", libfftw3-quad3")
endif()
set(tlrt_deb_cuda "")
if(TLRT_HAVE_CUDA)
  set(tlrt_cuda_mm "${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR}")
  set(tlrt_deb_cuda "cuda-cudart-${tlrt_cuda_mm}, libcublas-${tlrt_cuda_mm}, libcufft-${tlrt_cuda_mm}")
  if(TLRT_HAVE_CUDNN)
    string(APPEND tlrt_deb_cuda ", libcudnn9-cuda-${CUDAToolkit_VERSION_MAJOR}")
  endif()
endif()
set(TLRT_DEB_CUDA_DEPENDS "${tlrt_deb_cuda}" CACHE STRING "The .deb's CUDA library dependencies")
if(TLRT_DEB_CUDA_DEPENDS)
  string(APPEND tlrt_deb_depends ", ${TLRT_DEB_CUDA_DEPENDS}")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${tlrt_deb_depends}")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "lean4")
set(CPACK_STRIP_FILES OFF)
include(CPack)
