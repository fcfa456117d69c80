# FindPCRE2: the 8-bit PCRE2 library (Debian 12: libpcre2-dev).
#
# Debian's libpcre2-dev ships pkg-config files and pcre2-config but no CMake package
# file, so find_package(PCRE2) needs this module. It defines
#   PCRE2_FOUND, PCRE2_VERSION, PCRE2_INCLUDE_DIR, PCRE2_8BIT_LIBRARY
#   PCRE2::8BIT  imported target (the same name upstream's own CMake package file uses),
#                with PCRE2_CODE_UNIT_WIDTH=8 set for its users.

find_path(PCRE2_INCLUDE_DIR NAMES pcre2.h)
find_library(PCRE2_8BIT_LIBRARY NAMES pcre2-8)

if(PCRE2_INCLUDE_DIR AND EXISTS "${PCRE2_INCLUDE_DIR}/pcre2.h")
  file(STRINGS "${PCRE2_INCLUDE_DIR}/pcre2.h" _pcre2_version_lines
       REGEX "^#define PCRE2_(MAJOR|MINOR)[ \t]+[0-9]+")
  string(REGEX REPLACE ".*PCRE2_MAJOR[ \t]+([0-9]+).*" "\\1" _pcre2_major "${_pcre2_version_lines}")
  string(REGEX REPLACE ".*PCRE2_MINOR[ \t]+([0-9]+).*" "\\1" _pcre2_minor "${_pcre2_version_lines}")
  set(PCRE2_VERSION "${_pcre2_major}.${_pcre2_minor}")
  unset(_pcre2_version_lines)
  unset(_pcre2_major)
  unset(_pcre2_minor)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(PCRE2
  REQUIRED_VARS PCRE2_8BIT_LIBRARY PCRE2_INCLUDE_DIR
  VERSION_VAR PCRE2_VERSION
  REASON_FAILURE_MESSAGE "install it with: apt-get install libpcre2-dev (or bash scripts/deps.sh)")

if(PCRE2_FOUND AND NOT TARGET PCRE2::8BIT)
  add_library(PCRE2::8BIT UNKNOWN IMPORTED)
  set_target_properties(PCRE2::8BIT PROPERTIES
    IMPORTED_LOCATION "${PCRE2_8BIT_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${PCRE2_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS "PCRE2_CODE_UNIT_WIDTH=8")
endif()

mark_as_advanced(PCRE2_INCLUDE_DIR PCRE2_8BIT_LIBRARY)
