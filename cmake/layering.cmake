# The direction of dependencies, enforced by the build (docs/development.md, "Layers"):
# fdl_layer(<library> FOLDER <folder> MAY_INCLUDE <folder>...) makes <library> depend on a
# check that fails the build when a file of <folder> includes a header of ours from
# anywhere else. Linking alone would not catch an inline function or a type.
function(fdl_layer library)
  cmake_parse_arguments(PARSE_ARGV 1 layer "" "FOLDER" "MAY_INCLUDE")
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/${layer_FOLDER}/*.hpp"
       "${PROJECT_SOURCE_DIR}/${layer_FOLDER}/*.cpp")
  string(REPLACE "/" "_" name "${layer_FOLDER}")
  set(stamp "${PROJECT_BINARY_DIR}/layering/${name}.stamp")
  set(allowed ${layer_FOLDER} ${layer_MAY_INCLUDE})
  add_custom_command(OUTPUT "${stamp}"
    COMMAND ${CMAKE_COMMAND} -DFOLDER=${layer_FOLDER} "-DALLOWED=${allowed}"
            -DROOT=${PROJECT_SOURCE_DIR} -DSTAMP=${stamp} -P ${PROJECT_SOURCE_DIR}/cmake/check_includes.cmake
    DEPENDS ${sources} ${PROJECT_SOURCE_DIR}/cmake/check_includes.cmake
    COMMENT "Checking that ${layer_FOLDER} includes only ${allowed}" VERBATIM)
  add_custom_target(${library}_layering DEPENDS "${stamp}")
  add_dependencies(${library} ${library}_layering)
endfunction()
