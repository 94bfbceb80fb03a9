# Build time only, never what is built: precompiled third-party headers for from-scratch builds (CI, the
# sanitized tree). ATTNBENCH_PCH (default OFF: a ccache'd local build gains little from it, and a forced
# include would hide a missing #include) precompiles nlohmann/json and fmt once for the C++ layers, CLI11 once
# more for the cli layer, and GoogleTest with json and fmt once for all tests/cpu programs. Unity builds are
# CMake's own CMAKE_UNITY_BUILD, with CMAKE_UNITY_BUILD_BATCH_SIZE=0: all of a target's C++ files in one unity file
# (scripts/sanitized-build.sh, and .ci/run through scripts/build.sh).
option(ATTNBENCH_PCH "Precompile the heavy third-party headers (nlohmann/json, fmt, CLI11, GoogleTest)" OFF)

# The CUDA kernels stay one compile each under a unity build (newer CMake merges a target's .cu files too: 4.4 did,
# 3.25 does not). The fused tile instances are split over kernels/fused_attention_*.cu so that they compile in
# parallel: one unity file of all the kernels took 85 s on a 16-core H100 machine, the longest single file 24 s.
if(TARGET attnbench_kernels)
  set_property(TARGET attnbench_kernels PROPERTY UNITY_BUILD OFF)
endif()

set(ATTNBENCH_PCH_COMMON <string> <vector> <map> <memory> <functional> <optional> <nlohmann/json.hpp> <fmt/format.h>)

# The C++ layers: attnbench_core owns the precompiled header; every other layer with the same compile flags
# reuses it; the cli layer, which alone includes CLI11, has its own.
function(attnbench_precompile_layers)
  if(NOT ATTNBENCH_PCH)
    return()
  endif()
  target_precompile_headers(attnbench_core PRIVATE ${ATTNBENCH_PCH_COMMON})
  foreach(t ${ARGN})
    target_precompile_headers(${t} REUSE_FROM attnbench_core)
  endforeach()
  target_precompile_headers(attnbench_cli PRIVATE ${ATTNBENCH_PCH_COMMON} <CLI/CLI.hpp>)
endfunction()

# Test programs: OWNER (a target with the tests' compile flags) precompiles GoogleTest, json and fmt; each
# target of ARGN reuses it.
function(attnbench_precompile_tests owner)
  if(NOT ATTNBENCH_PCH)
    return()
  endif()
  target_precompile_headers(${owner} PRIVATE ${ATTNBENCH_PCH_COMMON} <gtest/gtest.h>)
  foreach(t ${ARGN})
    target_precompile_headers(${t} REUSE_FROM ${owner})
  endforeach()
endfunction()

# Targets of ARGN reuse OWNER's precompiled header (the same compile flags): the GPU tests reuse the CPU tests',
# the attnbench executable the cli layer's.
function(attnbench_reuse_pch owner)
  if(NOT ATTNBENCH_PCH)
    return()
  endif()
  foreach(t ${ARGN})
    target_precompile_headers(${t} REUSE_FROM ${owner})
  endforeach()
endfunction()
