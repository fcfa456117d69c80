# The catalogue of known mistakes and valid alternatives (README.md in this folder): one
# runner each, for every stages/<folder>/mistakes/NAME.mistake and NAME.alternative of the
# stages in stages/manifest.json (cmake/Stages.cmake). A new file there is found when the
# build is configured again (the glob is checked on every build).
include(${CMAKE_CURRENT_LIST_DIR}/mistakes.cmake)
include(Stages)

foreach(folder IN LISTS KVCOURSE_STAGE_FOLDERS)
  file(GLOB mistakes CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/stages/${folder}/mistakes/*.mistake)
  file(GLOB alternatives CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/stages/${folder}/mistakes/*.alternative)
  foreach(file IN LISTS mistakes)
    kvcourse_mistake(${file})
  endforeach()
  foreach(file IN LISTS alternatives)
    kvcourse_alternative(${file})
  endforeach()
endforeach()

# The fixture generator runs every one of them (grader/gen/mistake_runs.hpp).
get_property(variant_runners GLOBAL PROPERTY KVCOURSE_VARIANT_RUNNERS)
if(TARGET fixtures)
  add_dependencies(fixtures ${variant_runners})
endif()

# A runner that crashes, hangs, exits, throws or prints on request (cli_test.cpp).
add_course_runner(misbehaving ${CMAKE_CURRENT_LIST_DIR}/misbehaving_adapters.cpp LIBS course_reference)

# An adapter whose snapshots read the values through key(), with a right value() (catalogue_test.cpp).
add_course_runner(snapshot-values-from-keys ${CMAKE_CURRENT_LIST_DIR}/snapshot_values_from_keys.cpp LIBS course_reference)
