# include/slat/version.h is checked in (the core's sources and bare-metal
# builds use it as it is); its numbers must be the project's version.
file(STRINGS ${PROJECT_SOURCE_DIR}/include/slat/version.h slat_version_lines
     REGEX "^#define SLAT_VERSION_(MAJOR|MINOR|PATCH|STRING) ")
foreach(line ${slat_version_lines})
  if(line MATCHES "^#define SLAT_VERSION_([A-Z]+) +\"?([0-9.]+)\"?$")
    set(slat_h_${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
  endif()
endforeach()
if(NOT "${slat_h_MAJOR}.${slat_h_MINOR}.${slat_h_PATCH}" STREQUAL PROJECT_VERSION
   OR NOT "${slat_h_STRING}" STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR "include/slat/version.h says "
    "${slat_h_MAJOR}.${slat_h_MINOR}.${slat_h_PATCH} (\"${slat_h_STRING}\"), "
    "CMakeLists.txt says ${PROJECT_VERSION}: make them agree")
endif()
