# Installs mongolock as a CMake package, component "mongolock":
#   <prefix>/include/mongolock/*.h, <prefix>/lib/libmongolock.a,
#   <prefix>/lib/cmake/mongolock/{mongolockConfig,mongolockConfigVersion,mongolockTargets}.cmake
# A program outside this tree then uses it with
#   find_package(mongolock 1.0 REQUIRED)
#   target_link_libraries(app PRIVATE mongolock::mongolock)
# The version comes from include/mongolock/version.h (one place). test/install/ builds
# examples/example.cpp against such an install (ctest lib.install_find_package).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# A changed version.h reconfigures, so an incremental build installs the version it names.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${CMAKE_CURRENT_SOURCE_DIR}/include/mongolock/version.h)
file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/include/mongolock/version.h version_lines
     REGEX "^#define MONGOLOCK_VERSION_(MAJOR|MINOR|PATCH) [0-9]+$")
foreach(part MAJOR MINOR PATCH)
  string(REGEX REPLACE ".*#define MONGOLOCK_VERSION_${part} ([0-9]+).*" "\\1" MONGOLOCK_${part}
                       "${version_lines}")
endforeach()
set(MONGOLOCK_VERSION "${MONGOLOCK_MAJOR}.${MONGOLOCK_MINOR}.${MONGOLOCK_PATCH}")
if(NOT MONGOLOCK_VERSION MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
  message(FATAL_ERROR "mongolock: cannot read the version from include/mongolock/version.h")
endif()
set_target_properties(mongolock PROPERTIES VERSION ${MONGOLOCK_VERSION} EXPORT_NAME mongolock)

set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/mongolock)
install(TARGETS mongolock EXPORT mongolockTargets COMPONENT mongolock
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/mongolock
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT mongolock)
install(EXPORT mongolockTargets NAMESPACE mongolock:: DESTINATION ${config_dir}
        COMPONENT mongolock)
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/mongolockConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/mongolockConfig.cmake
                              INSTALL_DESTINATION ${config_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/mongolockConfigVersion.cmake
                                 VERSION ${MONGOLOCK_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/mongolockConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/mongolockConfigVersion.cmake
        DESTINATION ${config_dir} COMPONENT mongolock)
