# Build options and output layout: binaries in build/bin, libraries in build/lib.
option(GPUIDLE_BUILD_TESTS "Build the GoogleTest suite and the benchmarks" ON)
option(GPUIDLE_BUILD_EXAMPLES "Build the CUDA scenario programs in examples/ (needs nvcc)" ON)
# OFF: no CUDA toolkit needed; gpuidle analyze, the C++ analysis API and the Python package
# analyse traces, and every way of collecting says that this build cannot.
option(GPUIDLE_WITH_CUPTI "Build the live collector (needs the CUDA toolkit's CUPTI and NVTX headers)" ON)
# The overhead benchmark's probes (lib/collect/collector_probes.h) and its reader of their
# settings (tests/benchmarks/overhead/probe_settings.cc): never in a product build.
option(GPUIDLE_COLLECTOR_PROBES "Compile in the collector's benchmark probes (GPUIDLE_BENCH_*)" OFF)
if(NOT GPUIDLE_WITH_CUPTI)
  set(GPUIDLE_BUILD_EXAMPLES OFF CACHE BOOL "" FORCE)
  set(GPUIDLE_COLLECTOR_PROBES OFF CACHE BOOL "" FORCE)
endif()

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
# Export only the public API: internals must not clash with the host process's libraries.
set(CMAKE_CXX_VISIBILITY_PRESET hidden)
set(CMAKE_VISIBILITY_INLINES_HIDDEN ON)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)

set(CMAKE_RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/bin")
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/lib")
set(CMAKE_ARCHIVE_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/lib")

# -DGPUIDLE_SANITIZE=address,undefined or =thread (cmake/GpuidleSanitizers.cmake).
include(GpuidleSanitizers)
