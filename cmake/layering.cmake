# The one-way arrows between the parts of the tree (cmake/layering.txt), checked by
# cmake/check_layering.py whenever a C or C++ file or the rules change: a build
# fails on an include that runs against them, naming the file and the include.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  set(pfs_layering_globs)
  foreach(dir timers agent fdw tools bench tests)
    foreach(suffix c h cpp cc hpp inc)
      list(APPEND pfs_layering_globs ${PROJECT_SOURCE_DIR}/${dir}/*.${suffix})
    endforeach()
  endforeach()
  file(GLOB_RECURSE pfs_layering_sources CONFIGURE_DEPENDS ${pfs_layering_globs})
  set(pfs_layering_stamp ${CMAKE_BINARY_DIR}/layering_checked)
  add_custom_command(OUTPUT ${pfs_layering_stamp}
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/cmake/check_layering.py ${PROJECT_SOURCE_DIR}
            --stamp ${pfs_layering_stamp}
    DEPENDS ${pfs_layering_sources} ${PROJECT_SOURCE_DIR}/cmake/layering.txt
            ${PROJECT_SOURCE_DIR}/cmake/check_layering.py
    COMMENT "Checking the include arrows of cmake/layering.txt" VERBATIM)
  add_custom_target(pfs_layering_check ALL DEPENDS ${pfs_layering_stamp})
else()
  message(STATUS "No Python 3: the include arrows (cmake/layering.txt) are not checked")
endif()
