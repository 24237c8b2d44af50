# Installation and the package files that let other projects use gpuidle:
#   find_package(gpuidle) -> gpuidle::gpuidle   (gpuidleConfig.cmake, ...Version, ...Targets)
#   pkg-config gpuidle                          (gpuidle.pc)
# Installed: libgpuidle.so (+ SONAME links), the `gpuidle` CLI, include/gpuidle/*.h, the JSON
# Schema files (share/gpuidle/schema).
# The static layers stay inside libgpuidle.so (whole-archive, hidden): they are never installed
# and never exported, so the export set holds gpuidle_shared alone.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(GPUIDLE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/gpuidle"
    CACHE STRING "Where gpuidleConfig.cmake is installed (relative to the prefix)")

# Where the library sits as seen from the CLI, and the prefix as seen from the .pc file.
# GNUInstallDirs gives lib/<multiarch> on Debian for the prefix /usr and lib elsewhere.
file(RELATIVE_PATH _gpuidle_bin_to_lib
     "${CMAKE_INSTALL_FULL_BINDIR}" "${CMAKE_INSTALL_FULL_LIBDIR}")
file(RELATIVE_PATH _gpuidle_prefix_to_lib
     "${CMAKE_INSTALL_FULL_BINDIR}/.." "${CMAKE_INSTALL_FULL_LIBDIR}")

# --- libgpuidle.so ----------------------------------------------------------------------------
# Consumers see it as gpuidle::gpuidle (the same name as the in-tree alias). Its interface is
# the public headers and absl::status/statusor/strings; its private whole-archive link to the
# layers is not part of the interface of a shared library, so nothing internal is exported.
set_target_properties(gpuidle_shared PROPERTIES EXPORT_NAME gpuidle)
if(NOT GPUIDLE_PYTHON_BUNDLE_DEPS)
  # Dependencies found outside the system directories (a CUDA toolkit, an Abseil in another
  # prefix) stay findable from the installed copy; LD_LIBRARY_PATH still wins (RUNPATH). The
  # Python package's copy finds its bundled ones instead (bindings/python/CMakeLists.txt).
  set_target_properties(gpuidle_shared PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
endif()
# The public headers use std::optional and inline variables.
target_compile_features(gpuidle_shared PUBLIC cxx_std_17)

# lib/CMakeLists.txt already puts <prefix>/include in the installed interface.
if(NOT CMAKE_INSTALL_INCLUDEDIR STREQUAL "include")
  set(_gpuidle_includes INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
install(TARGETS gpuidle_shared EXPORT gpuidleTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          COMPONENT gpuidle_runtime NAMELINK_COMPONENT gpuidle_development
  ${_gpuidle_includes})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/gpuidle
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT gpuidle_development
  FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/gpuidle/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gpuidle
  COMPONENT gpuidle_development)

# --- the CLI -----------------------------------------------------------------------------------
# `gpuidle run` points CUDA_INJECTION64_PATH / LD_PRELOAD at libgpuidle.so next to the CLI:
# <bindir>/../lib/libgpuidle.so, which is where it is in the build tree (build/bin, build/lib)
# and in an install whose libdir is `lib`. Where GNUInstallDirs chose another libdir (Debian's
# lib/x86_64-linux-gnu for the prefix /usr), the CLI is told the installed one.
set_target_properties(gpuidle PROPERTIES
  INSTALL_RPATH "$ORIGIN/${_gpuidle_bin_to_lib}"
  INSTALL_RPATH_USE_LINK_PATH TRUE)
if(NOT _gpuidle_prefix_to_lib STREQUAL "lib")
  target_compile_definitions(gpuidle_cli PRIVATE
    GPUIDLE_INSTALL_RELATIVE_LIBDIR="${_gpuidle_prefix_to_lib}")
endif()
install(TARGETS gpuidle
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT gpuidle_runtime)

# --- the JSON Schema files of the outputs (docs/REPORT_SCHEMA.md, "Schema files and versions")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/schema/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/gpuidle/schema
  COMPONENT gpuidle_runtime
  FILES_MATCHING PATTERN "*.schema.json")

# --- find_package(gpuidle) ---------------------------------------------------------------------
install(EXPORT gpuidleTargets
  NAMESPACE gpuidle::
  DESTINATION ${GPUIDLE_INSTALL_CMAKEDIR}
  COMPONENT gpuidle_development)
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/gpuidleConfig.cmake.in
  ${PROJECT_BINARY_DIR}/gpuidleConfig.cmake
  INSTALL_DESTINATION ${GPUIDLE_INSTALL_CMAKEDIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/gpuidleConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/gpuidleConfig.cmake
  ${PROJECT_BINARY_DIR}/gpuidleConfigVersion.cmake
  DESTINATION ${GPUIDLE_INSTALL_CMAKEDIR}
  COMPONENT gpuidle_development)

# --- pkg-config gpuidle ------------------------------------------------------------------------
# Relocatable: the prefix is found from the .pc file's own directory, so that
# `cmake --install build --prefix DIR` and DESTDIR staging both give a working file. An absolute
# libdir or includedir is written as it is.
file(RELATIVE_PATH _gpuidle_pc_to_prefix
     "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" _gpuidle_pc_to_prefix "${_gpuidle_pc_to_prefix}")
set(GPUIDLE_PC_PREFIX "\${pcfiledir}/${_gpuidle_pc_to_prefix}")
foreach(_dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_dir}}")
    set(GPUIDLE_PC_${_dir} "${CMAKE_INSTALL_${_dir}}")
  else()
    set(GPUIDLE_PC_${_dir} "\${prefix}/${CMAKE_INSTALL_${_dir}}")
  endif()
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/gpuidle.pc.in ${PROJECT_BINARY_DIR}/gpuidle.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/gpuidle.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT gpuidle_development)
