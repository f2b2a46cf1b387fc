# cmake --install build --prefix PREFIX: headers under include/graphjit, static libraries, and the
# graphjit CMake package (graphjit::graphjit).
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

install(TARGETS graphjit gj_executors gj_fusers gj_passes gj_models gj_ir gj_runtime gj_support gj_dnnl gj_openblas
        EXPORT graphjitTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY support runtime ir passes fusers executors models
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/graphjit
        FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
install(EXPORT graphjitTargets NAMESPACE graphjit:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/graphjit)
configure_package_config_file(cmake/graphjitConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/graphjitConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/graphjit)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/graphjitConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/graphjitConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/graphjitConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/graphjit)
install(TARGETS graphir graphbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
