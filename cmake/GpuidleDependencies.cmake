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

if(GPUIDLE_WITH_CUPTI)
  find_package(CUDAToolkit QUIET)
  if(NOT TARGET CUDA::cupti)
    message(WARNING "CUPTI not found: building without the live collector")
    set(GPUIDLE_WITH_CUPTI OFF)
  endif()
endif()

if(GPUIDLE_BUILD_TESTS)
  find_package(GTest REQUIRED)
  find_package(benchmark QUIET)
endif()
