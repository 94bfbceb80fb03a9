# The build's layers: one static library per source folder, with the folders it may use declared once here.
# attnbench_layer(FOLDER [DEPENDS folder...] [CUDA] [EXCLUDE file...]) makes attnbench_<name> from FOLDER's
# *.cpp (and *.cu with CUDA), where <name> is the folder's last part (core, run, ...; backends/cpu becomes
# backend_cpu, backends/cuda cuda), links it to the targets of DEPENDS, and records "FOLDER: DEPENDS" for
# tests/check_layers.py, which fails when a file includes a header from a folder its layer does not depend on.
# A CUDA layer is recorded even when CUDA is off, so that its includes are still checked. Layers are declared
# bottom-up: a dependency's target must exist when a layer names it.
set_property(GLOBAL PROPERTY ATTNBENCH_LAYERS "")

function(attnbench_layer_target folder out)
  if(folder STREQUAL "backends/cpu")
    set(${out} attnbench_backend_cpu PARENT_SCOPE)
  elseif(folder STREQUAL "backends/cuda")
    set(${out} attnbench_cuda PARENT_SCOPE)
  else()
    get_filename_component(last ${folder} NAME)
    set(${out} attnbench_${last} PARENT_SCOPE)
  endif()
endfunction()

function(attnbench_layer folder)
  cmake_parse_arguments(L "CUDA" "" "DEPENDS;EXCLUDE" ${ARGN})
  string(REPLACE ";" " " deps_text "${L_DEPENDS}")
  set_property(GLOBAL APPEND_STRING PROPERTY ATTNBENCH_LAYERS "${folder}: ${deps_text}\n")
  if(L_CUDA AND NOT ATTNBENCH_CUDA)
    return()
  endif()
  if(folder STREQUAL "kernels")
    set(dir ${CMAKE_SOURCE_DIR}/kernels)
  else()
    set(dir ${CMAKE_SOURCE_DIR}/src/${folder})
  endif()
  set(patterns ${dir}/*.cpp)
  if(L_CUDA)
    list(APPEND patterns ${dir}/*.cu)
  endif()
  file(GLOB sources CONFIGURE_DEPENDS ${patterns})
  foreach(x ${L_EXCLUDE})
    list(REMOVE_ITEM sources ${dir}/${x})
  endforeach()
  attnbench_layer_target(${folder} target)
  add_library(${target} STATIC ${sources})
  target_include_directories(${target} PUBLIC ${CMAKE_SOURCE_DIR}/src)
  foreach(dep ${L_DEPENDS})
    attnbench_layer_target(${dep} dep_target)
    if(TARGET ${dep_target})  # a CUDA layer has no target when CUDA is off
      target_link_libraries(${target} PUBLIC ${dep_target})
    endif()
  endforeach()
endfunction()

# Writes the recorded layers to ${CMAKE_BINARY_DIR}/layers.txt (read by the layering test).
function(attnbench_write_layers)
  get_property(text GLOBAL PROPERTY ATTNBENCH_LAYERS)
  file(WRITE ${CMAKE_BINARY_DIR}/layers.txt "# folder: the folders it may include (CMakeLists.txt's attnbench_layer calls)\n${text}")
endfunction()
