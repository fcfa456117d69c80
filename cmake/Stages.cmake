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

# Each stage's ids as C++ sees them: the slug with "-" turned to "_" (KVCOURSE_STAGE_IDS,
# in course order).
set(KVCOURSE_STAGE_IDS)
foreach(_slug IN LISTS KVCOURSE_STAGE_SLUGS)
  string(REPLACE "-" "_" _id ${_slug})
  list(APPEND KVCOURSE_STAGE_IDS ${_id})
endforeach()

# kvcourse_stage_table(TARGET NAME FILES f... [REQUIRED] INCLUDE header TYPE type
#                      FUNCTION signature DECLARE text ROW text)
#
# A stage's parts in C++ live in its own folder (stages/<folder>/gen/cases.cpp, ...), and
# the code that needs every stage's part reads a table of them: this writes that table,
# so that no file of the grader lists the stages. For each stage of the manifest, in
# course order, whose folder holds the FILES (paths under it), those files are added to
# TARGET's sources; NAME.cpp, written into the build folder, includes INCLUDE and defines
# FUNCTION (e.g. "const std::vector<StageCases>& stage_cases()") returning a static
# std::vector<TYPE> of one ROW per such stage, after DECLARE once per stage (the
# declarations of what the stage's files define). In DECLARE and ROW, @id@ is the stage's
# snake_case id, @slug@ its slug and @folder@ its folder. With REQUIRED a stage without
# one of the FILES stops the configuration.
function(kvcourse_stage_table target name)
  # DECLARE and ROW hold C++, whose ";" CMake reads as list separators: they are joined back.
  cmake_parse_arguments(T "REQUIRED" "INCLUDE;TYPE;FUNCTION" "FILES;DECLARE;ROW" ${ARGN})
  list(JOIN T_DECLARE ";" T_DECLARE)
  list(JOIN T_ROW ";" T_ROW)
  set(declarations "")
  set(rows "")
  foreach(_slug _folder _id IN ZIP_LISTS KVCOURSE_STAGE_SLUGS KVCOURSE_STAGE_FOLDERS KVCOURSE_STAGE_IDS)
    set(files)
    foreach(_file IN LISTS T_FILES)
      set(_path ${PROJECT_SOURCE_DIR}/stages/${_folder}/${_file})
      if(EXISTS ${_path})
        list(APPEND files ${_path})
      elseif(T_REQUIRED)
        message(FATAL_ERROR "stage ${_slug}: stages/${_folder}/${_file} is missing (every stage has one)")
      endif()
    endforeach()
    if(NOT files)
      continue()
    endif()
    target_sources(${target} PRIVATE ${files})
    foreach(_part DECLARE ROW)
      string(REPLACE "@id@" "${_id}" _text "${T_${_part}}")
      string(REPLACE "@slug@" "${_slug}" _text "${_text}")
      string(REPLACE "@folder@" "${_folder}" _text "${_text}")
      if(_part STREQUAL "DECLARE")
        string(APPEND declarations "${_text}\n")
      else()
        string(APPEND rows "      ${_text}\n")
      endif()
    endforeach()
  endforeach()
  set(_out ${CMAKE_CURRENT_BINARY_DIR}/stage_tables/${name}.cpp)
  file(CONFIGURE OUTPUT ${_out} @ONLY CONTENT
"// Written by cmake/Stages.cmake (kvcourse_stage_table) from stages/manifest.json and the
// stages' folders: each stage's part, in course order. Do not edit.
#include \"${T_INCLUDE}\"

namespace course {

${declarations}
${T_FUNCTION} {
  static const std::vector<${T_TYPE}> table = {
${rows}  };
  return table;
}

}  // namespace course
")
  target_sources(${target} PRIVATE ${_out})
endfunction()

# kvcourse_stage_sources(TARGET FILE): adds each stage's stages/<folder>/FILE that exists
# to TARGET's sources, in course order (parts that need no table: what they define is
# declared in a header of the grader, e.g. judge/localize.hpp).
function(kvcourse_stage_sources target file)
  foreach(_folder IN LISTS KVCOURSE_STAGE_FOLDERS)
    if(EXISTS ${PROJECT_SOURCE_DIR}/stages/${_folder}/${file})
      target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/stages/${_folder}/${file})
    endif()
  endforeach()
endfunction()
