# Install rules: static libraries, headers under include/perfschema/ (included by
# their path in the tree: "agent/provider/pfs.h"), the exported CMake package and
# the pkg-config files. tests/live/install_test.sh builds projects outside the tree
# (tests/consumer in C++, tests/consumer_c in C) against them every way.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(pfs_timers PROPERTIES EXPORT_NAME timers)
set_target_properties(pfs_region PROPERTIES EXPORT_NAME region)
set_target_properties(pfs_agent PROPERTIES EXPORT_NAME agent)
set_target_properties(pfs_reader PROPERTIES EXPORT_NAME reader)

install(TARGETS pfs_timers pfs_region pfs_agent pfs_reader EXPORT perfschemaTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(PFS_SHARED)  # perfschema::shared
  install(TARGETS perfschema EXPORT perfschemaTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

# The tools: the interposer (LD_PRELOAD=<libdir>/perfschema/libpfs_preload.so), the
# trace merger, the flame graph writer, the OpenTelemetry exporter, pfs_top, and the
# demo program.
install(TARGETS pfs_preload LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/perfschema)
install(TARGETS pfs_trace_merge pfs_flamegraph pfs_otlp pfs_demo RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET pfs_top)
  install(TARGETS pfs_top RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# The public headers only: what a part keeps for itself is in its internal/ folder
# (agent/provider/internal, agent/reader/internal), which is not installed. The
# test installed_headers installs this component and checks that (cmake/
# check_installed_headers.cmake).
foreach(dir timers agent/region agent/provider agent/reader)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/perfschema/${dir}
          COMPONENT headers FILES_MATCHING PATTERN "*.h" PATTERN "*.inc" PATTERN "internal" EXCLUDE)
endforeach()
if(PFS_BUILD_TESTS)
  enable_testing()
  add_test(NAME installed_headers
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DPREFIX=${CMAKE_BINARY_DIR}/installed_headers
                   -DINCLUDEDIR=${CMAKE_INSTALL_INCLUDEDIR} -P ${PROJECT_SOURCE_DIR}/cmake/check_installed_headers.cmake)
endif()

set(PFS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/perfschema)
install(EXPORT perfschemaTargets NAMESPACE perfschema:: DESTINATION ${PFS_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/perfschemaConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/perfschemaConfig.cmake INSTALL_DESTINATION ${PFS_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/perfschemaConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/perfschemaConfig.cmake ${CMAKE_BINARY_DIR}/perfschemaConfigVersion.cmake
        DESTINATION ${PFS_CMAKE_DIR})

# Relocatable: the prefix is found from the .pc file's own place (cmake --install
# --prefix, a package's staging directory, /usr all work).
file(RELATIVE_PATH PFS_PC_UP /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" PFS_PC_UP "${PFS_PC_UP}")
set(PFS_PC_FILES perfschema perfschema-reader)
if(PFS_SHARED)
  list(APPEND PFS_PC_FILES perfschema-shared)  # libperfschema.so
endif()
foreach(pc ${PFS_PC_FILES})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${CMAKE_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
