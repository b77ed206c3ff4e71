# The libraries of slat: each component is a static archive (target NAME,
# libNAME.a: what tools, tests and a hypervisor link) and, with
# SLAT_BUILD_SHARED, a shared library built from the same sources with the
# same flags (target NAME-shared, libNAME.so.MAJOR). Both are compiled with
# -fvisibility=hidden: only the functions marked SLAT_API in
# include/slat/*.h are exported (tests/install/check-exports.sh checks it).

# slat_add_library(NAME SOURCES... ): the static target NAME, and NAME-shared.
function(slat_add_library name)
  add_library(${name} STATIC ${ARGN})
  if(SLAT_BUILD_SHARED)
    add_library(${name}-shared SHARED ${ARGN})
  endif()
endfunction()

# slat_library_targets(VAR NAME): NAME and, when it exists, NAME-shared.
function(slat_library_targets var name)
  set(targets ${name})
  if(TARGET ${name}-shared)
    list(APPEND targets ${name}-shared)
  endif()
  set(${var} ${targets} PARENT_SCOPE)
endfunction()

# slat_finish_library(NAME COMPONENT): visibility, names, SONAME, exports
# (slat::COMPONENT_static, slat::COMPONENT_shared in the CMake package) and
# the install rules of NAME and NAME-shared.
function(slat_finish_library name component)
  slat_library_targets(targets ${name})
  set_target_properties(${name} PROPERTIES
    C_VISIBILITY_PRESET hidden
    EXPORT_NAME ${component}_static)
  if(TARGET ${name}-shared)
    set_target_properties(${name}-shared PROPERTIES
      C_VISIBILITY_PRESET hidden
      OUTPUT_NAME ${name}
      VERSION ${PROJECT_VERSION}
      SOVERSION ${PROJECT_VERSION_MAJOR}
      EXPORT_NAME ${component}_shared)
    # The other slat libraries it needs are installed beside it (the core
    # needs none, not even libc).
    if(NOT component STREQUAL "core")
      set_target_properties(${name}-shared PROPERTIES INSTALL_RPATH "$ORIGIN")
    endif()
    # Every symbol it uses must come from a library it links (sanitizer
    # runtimes are linked into the executable, not the library).
    if(NOT SLAT_SANITIZE)
      target_link_options(${name}-shared PRIVATE LINKER:--no-undefined)
    endif()
  endif()
  install(TARGETS ${targets} EXPORT slatTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  # The names the installed package gives, for a project that adds slat as
  # a subdirectory.
  add_library(slat::${component}_static ALIAS ${name})
  if(TARGET ${name}-shared)
    add_library(slat::${component}_shared ALIAS ${name}-shared)
    add_library(slat::${component} ALIAS ${name}-shared)
  else()
    add_library(slat::${component} ALIAS ${name})
  endif()
endfunction()
