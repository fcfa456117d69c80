# Handing the course out (issue 10): results documents in every path, the learner's
# export, and the Exercism and Gradescope autograders.

kvcourse_test(results_document_test SOURCES handout/results_document_test.cpp LIBS nlohmann_json::nlohmann_json)
add_dependencies(results_document_test grader runner-reference)
