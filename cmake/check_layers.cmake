# Holds every layer under lib/ to the includes its place allows (docs/ARCHITECTURE.md): a file of
# one layer may include its own layer's headers, those of the layers below it and the public
# headers (gpuidle/...), never a layer above or beside it. Run by the build (lib/CMakeLists.txt,
# target gpuidle_layer_check) and by its test on a tree with a violation:
#
#   cmake -DGPUIDLE_LIB_DIR=<dir with the layer folders> [-DGPUIDLE_LAYER_STAMP=<file>] -P check_layers.cmake
#
# On a violation it prints each offending include as file:line and fails.

cmake_policy(VERSION 3.25)

# Each layer, then the layers it may include besides itself.
set(_allowed_core "")
set(_allowed_model core)
set(_allowed_settings core model)
set(_allowed_collect core model)
set(_allowed_ingest core model)
set(_allowed_analysis core model)
set(_allowed_report core model)
set(_allowed_api core model ingest analysis report)
set(_allowed_session core model settings collect ingest analysis report api)
set(_allowed_inject core model settings collect ingest analysis report api session)
set(_allowed_cli core model settings collect ingest analysis report api session)
set(_layers core model settings collect ingest analysis report api session inject cli)

if(NOT GPUIDLE_LIB_DIR)
  message(FATAL_ERROR "check_layers.cmake: set GPUIDLE_LIB_DIR")
endif()

set(_violations "")
file(GLOB _folders RELATIVE "${GPUIDLE_LIB_DIR}" "${GPUIDLE_LIB_DIR}/*")
foreach(_folder IN LISTS _folders)
  if(NOT IS_DIRECTORY "${GPUIDLE_LIB_DIR}/${_folder}")
    continue()
  endif()
  if(NOT _folder IN_LIST _layers)
    list(APPEND _violations "lib/${_folder}: a folder that is no layer (add it to cmake/check_layers.cmake)")
    continue()
  endif()
  file(GLOB_RECURSE _files "${GPUIDLE_LIB_DIR}/${_folder}/*.h" "${GPUIDLE_LIB_DIR}/${_folder}/*.cc"
       "${GPUIDLE_LIB_DIR}/${_folder}/*.in")
  foreach(_file IN LISTS _files)
    file(STRINGS "${_file}" _lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    file(RELATIVE_PATH _shown "${GPUIDLE_LIB_DIR}/.." "${_file}")
    foreach(_line IN LISTS _lines)
      if(NOT _line MATCHES "#[ \t]*include[ \t]*\"([^/\"]+)/")
        continue()
      endif()
      set(_target "${CMAKE_MATCH_1}")
      if(NOT _target IN_LIST _layers OR _target STREQUAL _folder)
        continue()  # gpuidle/, absl/, rapidjson/, ... or the layer's own
      endif()
      if(NOT _target IN_LIST _allowed_${_folder})
        string(STRIP "${_line}" _line)
        list(JOIN _allowed_${_folder} ", " _may)
        list(APPEND _violations "${_shown}: ${_line} (${_folder} may include: ${_may})")
      endif()
    endforeach()
  endforeach()
endforeach()

if(_violations)
  list(JOIN _violations "\n  " _text)
  message(FATAL_ERROR "A layer includes a layer above or beside it (docs/ARCHITECTURE.md):\n  ${_text}")
endif()
if(GPUIDLE_LAYER_STAMP)
  file(TOUCH "${GPUIDLE_LAYER_STAMP}")
endif()
