# One line of the test registry's gpu-binaries.txt (cmake/TlrtTesting.cmake), recorded from the
# SHARDS, LEAVE and ENV (VAR=VALUE words beside TLRT_DEVICE=cuda) given with -D and printed as
# "recorded: LINE"; words the registry refuses stop it with their message.
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/TlrtTesting.cmake)
set(env TLRT_DEVICE=cuda ${ENV})
tlrt__record_gpu(demo "${env}" "racecheck" "${SHARDS}" "${LEAVE}")
get_property(lines GLOBAL PROPERTY TLRT_GPU_BINARIES)
message("recorded: ${lines}")
