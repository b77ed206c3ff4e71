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
  slat_localize_archive(${name})
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

# slat_localize_archive(NAME): the static archive NAME becomes one object in
# which every symbol but the public ones (SLAT_API) is local, as the shared
# library's are: a hypervisor links it beside its own code, which may well
# have a core_walk or a sim_run of its own. Linked relocatable (-r) from the
# whole archive, then objcopy --localize-hidden: the hidden symbols are the
# ones the library's objects share among themselves.
function(slat_localize_archive name)
  if(NOT CMAKE_OBJCOPY)
    message(FATAL_ERROR "objcopy not found: it makes the static archives' "
            "internal symbols local (install binutils)")
  endif()
  set(obj ${CMAKE_CURRENT_BINARY_DIR}/${name}-localized.o)
  add_custom_command(TARGET ${name} POST_BUILD
    COMMAND ${CMAKE_C_COMPILER} -r -nostdlib
            -Wl,--whole-archive $<TARGET_FILE:${name}> -Wl,--no-whole-archive
            -o ${obj}
    COMMAND ${CMAKE_OBJCOPY} --localize-hidden ${obj}
    COMMAND ${CMAKE_COMMAND} -E remove $<TARGET_FILE:${name}>
    COMMAND ${CMAKE_AR} qc $<TARGET_FILE:${name}> ${obj}
    COMMAND ${CMAKE_RANLIB} $<TARGET_FILE:${name}>
    COMMENT "Making the internal symbols of lib${name}.a local"
    VERBATIM)
endfunction()
