# Locate the CUDA libraries tlrt uses beyond the runtime: cuBLAS and cuFFT come with the toolkit;
# cuDNN may sit under the toolkit (/usr/local/cuda) or in the distribution's multiarch directories
# (/usr/include/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu). CCCL (CUB) headers live under the
# toolkit's include/cccl on CUDA 13.
find_path(TLRT_CUDNN_INCLUDE_DIR cudnn.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV CUDNN_ROOT
  PATHS /usr/include /usr/include/x86_64-linux-gnu /usr/include/aarch64-linux-gnu
  PATH_SUFFIXES include)
find_library(TLRT_CUDNN_LIBRARY cudnn
  HINTS ${CUDAToolkit_LIBRARY_DIR} ENV CUDNN_ROOT
  PATHS /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu
  PATH_SUFFIXES lib64 lib)
if(TLRT_CUDNN_INCLUDE_DIR AND TLRT_CUDNN_LIBRARY)
  add_library(tlrt::cudnn UNKNOWN IMPORTED)
  set_target_properties(tlrt::cudnn PROPERTIES IMPORTED_LOCATION "${TLRT_CUDNN_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${TLRT_CUDNN_INCLUDE_DIR}")
  set(TLRT_HAVE_CUDNN ON)
  message(STATUS "tlrt: cuDNN ${TLRT_CUDNN_LIBRARY} (headers ${TLRT_CUDNN_INCLUDE_DIR})")
else()
  set(TLRT_HAVE_CUDNN OFF)
  message(STATUS "tlrt: cuDNN not found; convolution and pooling will report it at run time")
endif()
find_path(TLRT_CCCL_INCLUDE_DIR cub/cub.cuh
  HINTS ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES cccl NO_DEFAULT_PATH)
if(TLRT_CCCL_INCLUDE_DIR)
  message(STATUS "tlrt: CCCL headers ${TLRT_CCCL_INCLUDE_DIR}")
endif()
if(NOT TARGET CUDA::cublas OR NOT TARGET CUDA::cublasLt OR NOT TARGET CUDA::cufft)
  message(FATAL_ERROR "tlrt: cuBLAS, cuBLASLt or cuFFT missing from the CUDA toolkit")
endif()

# cudnn-frontend: the header-only C++ graph API for cuDNN 9, taken from the include/ folder of the
# nvidia-cudnn-frontend wheel that scripts/install-deps.sh unpacks into .deps/cudnn-frontend
# (or any tree named by TLRT_CUDNN_FRONTEND_DIR). Families that build cuDNN graphs link
# tlrt::cudnn_frontend through tlrt_cuda_kernels; without it they report it at run time.
set(TLRT_CUDNN_FRONTEND_DIR "${CMAKE_CURRENT_SOURCE_DIR}/.deps/cudnn-frontend" CACHE PATH
    "cudnn-frontend tree (include/cudnn_frontend.h)")
find_path(TLRT_CUDNN_FRONTEND_INCLUDE_DIR cudnn_frontend.h
  HINTS "${TLRT_CUDNN_FRONTEND_DIR}/include" NO_DEFAULT_PATH)
if(TLRT_HAVE_CUDNN AND TLRT_CUDNN_FRONTEND_INCLUDE_DIR)
  add_library(tlrt::cudnn_frontend INTERFACE IMPORTED)
  set_target_properties(tlrt::cudnn_frontend PROPERTIES
                        INTERFACE_INCLUDE_DIRECTORIES "${TLRT_CUDNN_FRONTEND_INCLUDE_DIR}")
  # The frontend's engine interface (experimental/nvrtc_shim.h, pulled in by cudnn_frontend.h)
  # calls NVRTC directly unless it loads every library dynamically: a translation unit that
  # includes the frontend needs libnvrtc at link time.
  if(TARGET CUDA::nvrtc)
    set_property(TARGET tlrt::cudnn_frontend APPEND PROPERTY INTERFACE_LINK_LIBRARIES CUDA::nvrtc)
  endif()
  message(STATUS "tlrt: cudnn-frontend headers ${TLRT_CUDNN_FRONTEND_INCLUDE_DIR}")
else()
  message(STATUS "tlrt: cudnn-frontend not found (scripts/install-deps.sh puts it in .deps/)")
endif()
