# Stages one-token, prefill and prefix-reuse (issue 4).

# Known-buggy decode loops: tests/buggy/NAME.mistake, each built as runner-buggy-NAME
# (mistakes.cmake). course_test grades each and expects the diagnosis its file names.
foreach(name masked_decode missing_scale append_after_attention double_append append_some_layers
             position_not_continuing close_summation_order prefill_no_mask mask_off_by_one reuse_no_clone
             suffix_positions_restart)
  kvcourse_mistake(${name})
endforeach()

# Digest comparison, the decode detectors on hand-made outputs, and the decode fixtures'
# own promises (weights named, sizes). Fast: no model, no runner.
kvcourse_test(decode_course_test SOURCES decode_course_test.cpp LIBS grader_core)
