# Sanitizer builds: -DGPUIDLE_SANITIZE=address,undefined (ASan + UBSan) or =thread (TSan).
# The flags are set for the whole directory tree, so every target of the project is instrumented
# alike: the layers, the CLI, libgpuidle.so, the Python module and the tests. UBSan stops at the
# first finding (-fno-sanitize-recover), so a finding fails the test instead of only printing.
# cmake/ci_sanitizers.sh builds and runs the suites that CI runs this way.
set(GPUIDLE_SANITIZE "" CACHE STRING
    "Sanitizers for every target, comma-separated: address, undefined, thread (empty: none)")

if(GPUIDLE_SANITIZE)
  string(REPLACE "," ";" _gpuidle_sanitizers "${GPUIDLE_SANITIZE}")
  foreach(_sanitizer IN LISTS _gpuidle_sanitizers)
    if(NOT _sanitizer MATCHES "^(address|undefined|thread)$")
      message(FATAL_ERROR "GPUIDLE_SANITIZE: unknown sanitizer '${_sanitizer}' "
                          "(address, undefined or thread)")
    endif()
  endforeach()
  if("thread" IN_LIST _gpuidle_sanitizers AND "address" IN_LIST _gpuidle_sanitizers)
    message(FATAL_ERROR "GPUIDLE_SANITIZE: thread and address cannot be combined")
  endif()
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "GPUIDLE_SANITIZE needs GCC or Clang")
  endif()

  # Frame pointers give the sanitizers' fast unwinder whole stacks in their reports.
  set(_gpuidle_sanitize_flags "-fsanitize=${GPUIDLE_SANITIZE}" -fno-omit-frame-pointer)
  if("undefined" IN_LIST _gpuidle_sanitizers)
    list(APPEND _gpuidle_sanitize_flags -fno-sanitize-recover=undefined)
  endif()
  # C++ only: nvcc (the CUDA examples and benchmarks) takes none of these flags.
  list(JOIN _gpuidle_sanitize_flags "$<SEMICOLON>" _gpuidle_sanitize_joined)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${_gpuidle_sanitize_joined}>")
  add_link_options("$<$<LINK_LANGUAGE:CXX>:${_gpuidle_sanitize_joined}>")
  message(STATUS "gpuidle: sanitizers ${GPUIDLE_SANITIZE} on every target")
endif()
