# Stages one-token, prefill and prefix-reuse (issue 4).

# Digest comparison, the decode detectors on hand-made outputs, and the decode fixtures'
# own promises (weights named, sizes). Fast: no model, no runner.
kvcourse_test(decode_course_test SOURCES decode_course_test.cpp LIBS grader_core)
