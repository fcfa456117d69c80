# Stages one-token, prefill and prefix-reuse (issue 4).

# Digest comparison and the decode fixtures' own promises (weights named, sizes); the
# diagnoses (identification, localization, work) on hand-made outputs. Fast: no model, no
# runner.
kvcourse_test(decode_course_test SOURCES decode_course_test.cpp LIBS grader_core)
kvcourse_test(diagnose_test SOURCES diagnose_test.cpp LIBS grader_core)
