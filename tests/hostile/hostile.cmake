# The sandbox against hostile submissions (grader/SANDBOX.md): runner-hostile attacks the
# grader in the way $KVCOURSE_HOSTILE names (hostile_runner.cpp), and hostile_test checks
# that no attack passes a case, truncates or rewrites the results, outlives the grader or
# changes a file; it also compiles includes of the course's private files with the
# learner's own compile command and launcher.
add_course_runner(hostile ${CMAKE_CURRENT_LIST_DIR}/hostile_runner.cpp LIBS course_reference
  LEARNER_DIRS ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(runner-hostile PRIVATE nlohmann_json::nlohmann_json)
target_compile_definitions(runner-hostile PRIVATE HOSTILE_COURSE_DIR="${PROJECT_SOURCE_DIR}")

# The learner runner's compiler launcher, one argument a line, for the compile tests.
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/learner-launcher.txt
  CONTENT "$<JOIN:$<TARGET_PROPERTY:runner-learner,CXX_COMPILER_LAUNCHER>,\n>\n")

# The grader where namespaces are refused, as in Docker (the uid mode's tests).
add_executable(no-namespaces ${CMAKE_CURRENT_LIST_DIR}/no_namespaces.cpp)
target_link_libraries(no-namespaces PRIVATE Seccomp::Seccomp)

kvcourse_test(hostile_test LABELS process build SOURCES ${CMAKE_CURRENT_LIST_DIR}/hostile_test.cpp LIBS nlohmann_json::nlohmann_json)
target_compile_definitions(hostile_test PRIVATE
  KVCOURSE_BUILD_DIR="${CMAKE_BINARY_DIR}"
  KVCOURSE_LAUNCHER_FILE="${CMAKE_CURRENT_BINARY_DIR}/learner-launcher.txt")
add_dependencies(hostile_test grader runner-hostile runner-learner runner-reference sandbox-compile no-namespaces)

# A learner's crash, for the crash-location tests: built with the learner runner's checks.
add_course_runner(crash ${CMAKE_CURRENT_LIST_DIR}/crash_adapters.cpp LIBS course_reference)
target_compile_definitions(runner-crash PRIVATE _GLIBCXX_ASSERTIONS)
# The same without debug info (the last -g wins), as a learner's Release build compiles it.
add_course_runner(crash-nodebug ${CMAKE_CURRENT_LIST_DIR}/crash_adapters.cpp LIBS course_reference)
target_compile_definitions(runner-crash-nodebug PRIVATE _GLIBCXX_ASSERTIONS)
target_compile_options(runner-crash-nodebug PRIVATE -g0)

# The sandbox's modes, the results file, and where a crash happened, seen from the command line.
kvcourse_test(sandbox_test LABELS process SOURCES ${CMAKE_CURRENT_LIST_DIR}/sandbox_test.cpp LIBS nlohmann_json::nlohmann_json)
add_dependencies(sandbox_test grader runner-reference runner-crash runner-crash-nodebug runner-misbehaving runner-hostile
  no-namespaces)

# Several runners grading one stage at once (--jobs): the same verdicts as one, a spin
# stopped in one runner while the other passes, a uid per runner in the uid mode.
kvcourse_test(parallel_test LABELS process SOURCES ${CMAKE_CURRENT_LIST_DIR}/parallel_test.cpp LIBS nlohmann_json::nlohmann_json)
add_dependencies(parallel_test grader runner-reference runner-misbehaving runner-hostile
  runner-buggy-kv_swapped runner-buggy-masked_decode no-namespaces)
