# Every dependency comes from where users get it: Debian packages (Abseil, RapidJSON, zlib,
# GoogleTest, Google Benchmark) and the CUDA toolkit (CUPTI, NVTX) in /usr/local/cuda.
find_package(Threads REQUIRED)
find_package(absl REQUIRED)
find_package(ZLIB REQUIRED)

# RapidJSON is header-only; Debian's config file sets RAPIDJSON_INCLUDE_DIRS.
find_package(RapidJSON QUIET)
find_path(GPUIDLE_RAPIDJSON_INCLUDE_DIR rapidjson/reader.h HINTS ${RAPIDJSON_INCLUDE_DIRS})
if(NOT GPUIDLE_RAPIDJSON_INCLUDE_DIR)
  message(FATAL_ERROR "RapidJSON not found: install rapidjson-dev")
endif()
add_library(gpuidle_rapidjson INTERFACE)
target_include_directories(gpuidle_rapidjson SYSTEM INTERFACE ${GPUIDLE_RAPIDJSON_INCLUDE_DIR})
# Strings need no SSE4.2 probe; keep the build portable across x86-64 machines.
target_compile_definitions(gpuidle_rapidjson INTERFACE RAPIDJSON_HAS_STDSTRING=1)

# The live collector compiles against the toolkit's CUPTI and NVTX headers; it loads libcupti at
# run time (never links it or the CUDA runtime), so the library works in processes without CUDA.
# Only lib/collect sees them (gpuidle_cuda_headers is linked PRIVATE there).
if(GPUIDLE_WITH_CUPTI)
find_package(CUDAToolkit REQUIRED)
find_path(GPUIDLE_CUPTI_INCLUDE_DIR cupti.h HINTS ${CUDAToolkit_INCLUDE_DIRS}
          ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/include)
find_path(GPUIDLE_NVTX_INCLUDE_DIR nvtx3/nvToolsExt.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
if(NOT GPUIDLE_CUPTI_INCLUDE_DIR OR NOT GPUIDLE_NVTX_INCLUDE_DIR)
  message(FATAL_ERROR "CUPTI and NVTX headers not found: install the CUDA toolkit (13.0)")
endif()
add_library(gpuidle_cuda_headers INTERFACE)
target_include_directories(gpuidle_cuda_headers SYSTEM INTERFACE
  ${GPUIDLE_CUPTI_INCLUDE_DIR} ${GPUIDLE_NVTX_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
endif()

if(GPUIDLE_BUILD_TESTS)
  find_package(GTest REQUIRED)
  find_package(benchmark QUIET)
endif()
