# Known-buggy implementations: each tests/buggy/NAME.mistake is the reference with one
# mistake put in (see apply_mistake.cpp), built as its own runner, runner-buggy-NAME. The
# course's self-check (course_test.cpp) grades each and expects the diagnosis id the
# .mistake file names.
add_executable(apply-mistake ${CMAKE_CURRENT_LIST_DIR}/apply_mistake.cpp)

# kvcourse_mistake(NAME): runner-buggy-NAME from tests/buggy/NAME.mistake.
function(kvcourse_mistake name)
  set(mistake ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${name}.mistake)
  file(STRINGS ${mistake} file_line REGEX "^file: ")
  string(REGEX REPLACE "^file: *" "" edited "${file_line}")
  if(NOT edited)
    message(FATAL_ERROR "${mistake} has no \"file:\" line")
  endif()
  get_filename_component(edited_name ${edited} NAME)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/buggy/${name}/${edited_name})
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/buggy/${name}
    COMMAND apply-mistake ${mistake} ${PROJECT_SOURCE_DIR} ${out}
    DEPENDS apply-mistake ${mistake} ${PROJECT_SOURCE_DIR}/${edited}
    VERBATIM)
  add_course_runner(buggy-${name} ${out} LIBS course_reference)
  set_property(GLOBAL APPEND PROPERTY KVCOURSE_MISTAKES ${name})
endfunction()
