# Writes OUT (a header defining ATTNBENCH_GIT) from the source tree's `git describe --always --dirty`,
# touching it only when the text changes. It runs at every build, not at configure time, so a report never
# names an older commit than the one built, and "-dirty" marks a tree that differs from its commit.
#   cmake -DSRC=<source dir> -DOUT=<header> -P write_git_info.cmake
# A copy of the tree whose .git is missing or not its own (the GPU machine's, a tarball) names its commit through
# the environment: ATTNBENCH_GIT_DESCRIBE=$(git describe --always --dirty --abbrev=7), which then wins over git.
execute_process(COMMAND git describe --always --dirty --abbrev=7 WORKING_DIRECTORY "${SRC}"
                OUTPUT_VARIABLE desc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT "$ENV{ATTNBENCH_GIT_DESCRIBE}" STREQUAL "")
  set(desc "$ENV{ATTNBENCH_GIT_DESCRIBE}")
  set(rc 0)
endif()
if(NOT rc EQUAL 0 OR desc STREQUAL "")
  set(desc "unknown")
endif()
set(text "// Generated at build time by cmake/write_git_info.cmake: the commit built.\n#pragma once\n#define ATTNBENCH_GIT \"${desc}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
