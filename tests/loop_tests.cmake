# The learner's loop (issue 5): watch mode, progress between runs, autograder formats.

kvcourse_test(watch_test SOURCES watch_test.cpp LIBS grader_core)
kvcourse_test(view_test SOURCES view_test.cpp LIBS grader_core)
kvcourse_test(formats_test SOURCES formats_test.cpp LIBS grader_core)
kvcourse_test(progress_test SOURCES progress_test.cpp LIBS grader_core)

# A sandbox for the watch-mode tests: a copy of the reference's sources in the build
# folder, behind the runner runner-watch-sandbox. The tests edit the copy and let
# `grader --watch` rebuild it with `cmake --build`, as it rebuilds runner-learner for a
# learner, so the real src/ and adapters/ are never touched. Built on demand only (not
# part of `all`), so a test stopped halfway can never break the normal build.
set(KVCOURSE_WATCH_SANDBOX ${CMAKE_CURRENT_BINARY_DIR}/watch-sandbox)
set(sandbox_sources)
foreach(file IN LISTS KVCOURSE_REFERENCE_SOURCES)
  get_filename_component(name ${file} NAME)
  if(NOT EXISTS ${KVCOURSE_WATCH_SANDBOX}/src/${name})
    file(COPY ${file} DESTINATION ${KVCOURSE_WATCH_SANDBOX}/src)
  endif()
  list(APPEND sandbox_sources ${KVCOURSE_WATCH_SANDBOX}/src/${name})
endforeach()
add_course_runner(watch-sandbox ${sandbox_sources} LEARNER_DIRS ${KVCOURSE_WATCH_SANDBOX}/src)
set_target_properties(runner-watch-sandbox PROPERTIES EXCLUDE_FROM_ALL TRUE)

kvcourse_test(loop_cli_test SOURCES loop_cli_test.cpp LIBS nlohmann_json::nlohmann_json util)
target_compile_definitions(loop_cli_test PRIVATE KVCOURSE_WATCH_SANDBOX="${KVCOURSE_WATCH_SANDBOX}")
add_dependencies(loop_cli_test grader runner-learner runner-reference)
add_dependencies(loop_cli_test runner-misbehaving)
