# Handing the course out: results documents in every path, the learner's
# export, and the Exercism and Gradescope autograders.

kvcourse_test(results_document_test LABELS process SOURCES handout/results_document_test.cpp LIBS nlohmann_json::nlohmann_json)
add_dependencies(results_document_test grader runner-learner runner-reference)
# The one list of what a course tree contains, and the Exercism Dockerfile's copy of it.
kvcourse_test(course_tree_test LABELS unit SOURCES handout/course_tree_test.cpp)

# The slow ones build a whole copy of the course (minutes on 2 cores): labels "slow" and
# "build", so `ctest -LE slow` leaves them out and `ctest -L slow` runs only them.
function(kvcourse_slow_test name)
  add_executable(${name} handout/${name}.cpp)
  target_link_libraries(${name} PRIVATE GTest::gtest_main nlohmann_json::nlohmann_json)
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_definitions(${name} PRIVATE KVCOURSE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    KVCOURSE_BIN_DIR="${CMAKE_RUNTIME_OUTPUT_DIRECTORY}" KVCOURSE_CMAKE="${CMAKE_COMMAND}")
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 30 PROPERTIES TIMEOUT 1800 ${ARGN})
  kvcourse_label_discovered(${name} slow build)
endfunction()

kvcourse_slow_test(export_test)

# The autograders (autograders/): the Gradescope package is unpacked and set up in the
# build folder once (the fixture), and both platforms' scripts grade submissions with the
# course it built. The tests share that course: one at a time (RESOURCE_LOCK).
set(KVCOURSE_AUTOGRADER_DIR ${CMAKE_CURRENT_BINARY_DIR}/handout-autograder)
add_test(NAME handout_autograder_setup
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/handout/autograder_setup.sh ${PROJECT_SOURCE_DIR} ${KVCOURSE_AUTOGRADER_DIR})
set_tests_properties(handout_autograder_setup PROPERTIES FIXTURES_SETUP handout_autograder
  RESOURCE_LOCK handout_autograder TIMEOUT 1800)
kvcourse_labels(handout_autograder_setup slow build)
kvcourse_slow_test(autograders_test FIXTURES_REQUIRED handout_autograder RESOURCE_LOCK handout_autograder)
target_compile_definitions(autograders_test PRIVATE KVCOURSE_AUTOGRADER_DIR="${KVCOURSE_AUTOGRADER_DIR}")
# A throw-away stage added to a copy of the course: its folder and manifest entry are enough.
kvcourse_slow_test(new_stage_test)
