# The installed package: headers (sources and generated .inc files), the fa4
# libraries as imported targets FA4::<name>, the tools and FA4Config.cmake.
# An embedder writes
#
#   find_package(FA4 REQUIRED CONFIG)
#   target_link_libraries(app PRIVATE FA4::FA4InitAll)
#
# and gets the dialect, the passes, the pipeline and, through them, MLIR.
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

set(FA4_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/fa4)
set(fa4_libraries FA4Dialect FA4ToNVVM FA4Transforms FA4InitAll FA4Simulator)

# Installed binaries find libMLIR.so/libLLVM.so where they were built
# against, and the fa4 libraries next to them.
foreach(target FA4CAPI FA4Plugin fa4-opt fa4-sim)
  if(TARGET ${target})
    # The same path in the build tree (bin/ and lib/ there too): installing
    # then copies the file as it is.
    set_target_properties(${target} PROPERTIES BUILD_WITH_INSTALL_RPATH ON
      INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${LLVM_LIBRARY_DIR}")
  endif()
endforeach()

foreach(lib ${fa4_libraries})
  # In the build tree the include directories are global; installed targets
  # carry them.
  target_include_directories(${lib} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
install(TARGETS ${fa4_libraries}
  EXPORT FA4Targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET FA4CAPI)
  target_include_directories(FA4CAPI INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  install(TARGETS FA4CAPI EXPORT FA4Targets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
if(TARGET FA4Plugin)
  install(TARGETS FA4Plugin LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(TARGETS fa4-opt fa4-sim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/fa4
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/fa4
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.inc")

install(EXPORT FA4Targets NAMESPACE FA4:: DESTINATION ${FA4_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/FA4Config.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/FA4Config.cmake
  INSTALL_DESTINATION ${FA4_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/FA4ConfigVersion.cmake
  VERSION ${FA4_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/FA4Config.cmake
  ${PROJECT_BINARY_DIR}/cmake/FA4ConfigVersion.cmake
  DESTINATION ${FA4_INSTALL_CMAKEDIR})
