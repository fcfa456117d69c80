# Stages cache-structure and multi-layer-cache: one runner per known mistake.
include(${CMAKE_CURRENT_LIST_DIR}/mistakes.cmake)
foreach(name transposed_layout off_by_one_growth kv_swapped shared_layers length_counts_all_layers
             shallow_clone clone_empty)
  kvcourse_mistake(${name})
endforeach()

# A runner that crashes, hangs, exits, throws or prints on request (cli_test.cpp).
add_course_runner(misbehaving ${CMAKE_CURRENT_LIST_DIR}/misbehaving_adapters.cpp LIBS course_reference)
