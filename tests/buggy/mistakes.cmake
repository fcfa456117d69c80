# Known-buggy implementations and valid alternatives (README.md in this folder), in each
# stage's folder, stages/<folder>/mistakes/:
#   NAME.mistake      the reference with one mistake put in, built as runner-buggy-NAME; the
#                     grader must name exactly its diagnosis
#   NAME.alternative  the reference written another, equally right way, built as
#                     runner-alternative-NAME; it must pass every case of its stage
# Both are find/replace edits to one reference file (apply_mistake.cpp); every other file
# comes from the reference library. The fixture generator runs them all (target fixtures),
# and course_test grades them all.
add_executable(apply-mistake ${CMAKE_CURRENT_LIST_DIR}/apply_mistake.cpp)
target_link_libraries(apply-mistake PRIVATE course_variant_file)

# kvcourse_variant(FILE PREFIX): runner-PREFIX-NAME from FILE, NAME.mistake or NAME.alternative.
function(kvcourse_variant edits prefix)
  get_filename_component(name ${edits} NAME_WE)
  file(STRINGS ${edits} file_line REGEX "^file: ")
  string(REGEX REPLACE "^file: *" "" edited "${file_line}")
  if(NOT edited)
    message(FATAL_ERROR "${edits} has no \"file:\" line")
  endif()
  get_filename_component(edited_name ${edited} NAME)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${prefix}/${name}/${edited_name})
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/${prefix}/${name}
    COMMAND apply-mistake ${edits} ${PROJECT_SOURCE_DIR} ${out}
    DEPENDS apply-mistake ${edits} ${PROJECT_SOURCE_DIR}/${edited}
    VERBATIM)
  add_course_runner(${prefix}-${name} ${out} LIBS course_reference)
  # Built as a learner's code is (grader/CMakeLists.txt, add_course_runner), so that it
  # fails as theirs would; that also lets it reuse the learner runner's precompiled
  # standard headers, most of compiling one such file.
  target_compile_definitions(runner-${prefix}-${name} PRIVATE _GLIBCXX_ASSERTIONS)
  target_compile_options(runner-${prefix}-${name} PRIVATE ${KVCOURSE_LEARNER_OPTIONS})
  target_precompile_headers(runner-${prefix}-${name} REUSE_FROM runner-learner)
  set_property(GLOBAL APPEND PROPERTY KVCOURSE_VARIANT_RUNNERS runner-${prefix}-${name})
endfunction()

function(kvcourse_mistake file)
  kvcourse_variant(${file} buggy)
endfunction()

function(kvcourse_alternative file)
  kvcourse_variant(${file} alternative)
endfunction()
