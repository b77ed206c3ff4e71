# pkg-config files and the CMake package, for what this build installs:
# slat_components (core; hosted and sim unless SLAT_CORE_ONLY) and
# slat_pc (the .pc files).
include(CMakePackageConfigHelpers)

# pkg-config: the prefix is the one of the install, not of the configure
# (cmake --install --prefix DIR), so the .pc files are written when
# installing, from cmake/NAME.pc.in; what they need but the prefix is fixed
# here.
set(slat_pc_dir ${PROJECT_BINARY_DIR}/pkgconfig)
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(slat_pc_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(slat_pc_${dir} "\\\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
set(slat_pc_code "
set(PROJECT_VERSION \"${PROJECT_VERSION}\")
set(SLAT_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
set(SLAT_PC_LIBDIR \"${slat_pc_LIBDIR}\")
set(SLAT_PC_INCLUDEDIR \"${slat_pc_INCLUDEDIR}\")
")
foreach(pc ${slat_pc})
  string(APPEND slat_pc_code
    "configure_file(\"${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in\" \"${slat_pc_dir}/${pc}.pc\" @ONLY)\n")
  list(APPEND slat_pc_files ${slat_pc_dir}/${pc}.pc)
endforeach()
install(CODE "${slat_pc_code}")
install(FILES ${slat_pc_files} DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# find_package(slat): slatConfig.cmake, slatConfigVersion.cmake and
# slatTargets.cmake (slat::COMPONENT_static and slat::COMPONENT_shared;
# slatConfig.cmake makes slat::COMPONENT of one of them).
set(slat_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/slat)
set(SLAT_PACKAGE_COMPONENTS ${slat_components})
configure_package_config_file(cmake/slatConfig.cmake.in
  ${PROJECT_BINARY_DIR}/slatConfig.cmake
  INSTALL_DESTINATION ${slat_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/slatConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(EXPORT slatTargets NAMESPACE slat:: DESTINATION ${slat_cmake_dir})
install(FILES ${PROJECT_BINARY_DIR}/slatConfig.cmake
              ${PROJECT_BINARY_DIR}/slatConfigVersion.cmake
        DESTINATION ${slat_cmake_dir})
