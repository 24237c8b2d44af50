# Warnings for our own targets only (never for dependencies' headers).
add_library(gpuidle_warnings INTERFACE)
target_compile_options(gpuidle_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wconversion -Wno-sign-conversion
  -Werror=return-type -Werror=unused-result)
