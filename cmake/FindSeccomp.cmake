# FindSeccomp: libseccomp (Debian 12: libseccomp-dev), which builds the runner's system
# call filter (grader/sandbox/seccomp.cpp). Debian ships a pkg-config file and no CMake
# package file. It defines
#   Seccomp_FOUND, Seccomp_INCLUDE_DIR, Seccomp_LIBRARY
#   Seccomp::Seccomp  imported target

find_path(Seccomp_INCLUDE_DIR NAMES seccomp.h)
find_library(Seccomp_LIBRARY NAMES seccomp)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Seccomp
  REQUIRED_VARS Seccomp_LIBRARY Seccomp_INCLUDE_DIR
  REASON_FAILURE_MESSAGE "install it with: apt-get install libseccomp-dev (or bash scripts/deps.sh)")

if(Seccomp_FOUND AND NOT TARGET Seccomp::Seccomp)
  add_library(Seccomp::Seccomp UNKNOWN IMPORTED)
  set_target_properties(Seccomp::Seccomp PROPERTIES
    IMPORTED_LOCATION "${Seccomp_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Seccomp_INCLUDE_DIR}")
endif()

mark_as_advanced(Seccomp_INCLUDE_DIR Seccomp_LIBRARY)
