# The course's stages as CMake sees them, read from stages/manifest.json (the one list of
# stages; grader/judge/stages.hpp reads the same file): after include(Stages),
#   KVCOURSE_STAGE_SLUGS    the stages' slugs, in course order
#   KVCOURSE_STAGE_FOLDERS  their folders under stages/, in the same order
# Editing the manifest reconfigures the build.
set(_manifest ${PROJECT_SOURCE_DIR}/stages/manifest.json)
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_manifest})
file(READ ${_manifest} _manifest_text)
string(JSON _count ERROR_VARIABLE _error LENGTH "${_manifest_text}" stages)
if(_error)
  message(FATAL_ERROR "${_manifest}: no list \"stages\" (${_error})")
endif()
set(KVCOURSE_STAGE_SLUGS)
set(KVCOURSE_STAGE_FOLDERS)
math(EXPR _last "${_count} - 1")
foreach(_i RANGE ${_last})
  string(JSON _slug ERROR_VARIABLE _error GET "${_manifest_text}" stages ${_i} slug)
  string(JSON _folder ERROR_VARIABLE _error2 GET "${_manifest_text}" stages ${_i} folder)
  if(_error OR _error2 OR NOT IS_DIRECTORY ${PROJECT_SOURCE_DIR}/stages/${_folder})
    message(FATAL_ERROR "${_manifest}: stage ${_i} has no slug, or no folder under stages/")
  endif()
  list(APPEND KVCOURSE_STAGE_SLUGS ${_slug})
  list(APPEND KVCOURSE_STAGE_FOLDERS ${_folder})
endforeach()
unset(_manifest_text)
