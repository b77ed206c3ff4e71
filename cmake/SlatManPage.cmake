# Man pages from a program's --help and --version, with help2man (Debian:
# help2man), built with the program and installed into MANDIR/man1. Without
# help2man, or when the programs cannot run here (cross builds) or run
# under sanitizers, there are none.
find_program(SLAT_HELP2MAN help2man)
if(CMAKE_CROSSCOMPILING OR SLAT_SANITIZE)
  set(SLAT_MAN_PAGES OFF)
elseif(NOT SLAT_HELP2MAN)
  message(STATUS "help2man not found: no man pages for slat-dump and "
                 "slat-perf (Debian: help2man; scripts/deps.sh installs it)")
  set(SLAT_MAN_PAGES OFF)
else()
  set(SLAT_MAN_PAGES ON)
endif()

# slat_man_page(TARGET "what it does"): TARGET.1, in the ALL target.
function(slat_man_page target description)
  if(NOT SLAT_MAN_PAGES)
    return()
  endif()
  set(page ${CMAKE_CURRENT_BINARY_DIR}/${target}.1)
  add_custom_command(OUTPUT ${page}
    COMMAND ${SLAT_HELP2MAN} --no-info --section=1 --name=${description}
            --output=${page} $<TARGET_FILE:${target}>
    DEPENDS ${target}
    COMMENT "Generating the ${target}(1) man page"
    VERBATIM)
  add_custom_target(${target}-man ALL DEPENDS ${page})
  install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endfunction()
