# Driver for the slat-dump tests (cmake -P).
#   MODE=expected  run EXE SCRIPT in WORKDIR; stdout must equal EXPECTED
#   MODE=error     run EXE SCRIPT in WORKDIR; it must exit 2 and its stderr
#                  must equal EXPECTED
#   MODE=roundtrip run EXE --hex --raw OUT.img SCRIPT, then
#                  EXE --hex --read-raw OUT.img; the entry lines (those
#                  starting with 0x) must be the same
cmake_minimum_required(VERSION 3.20)

function(show_diff a b)
  find_program(DIFF diff)
  if(DIFF)
    execute_process(COMMAND ${DIFF} -u ${a} ${b})
  endif()
endfunction()

# Only the lines that list entries.
function(entry_lines text outvar)
  string(REPLACE "\n" ";" lines "${text}")
  set(kept "")
  foreach(l IN LISTS lines)
    if(l MATCHES "^0x")
      string(APPEND kept "${l}\n")
    endif()
  endforeach()
  set(${outvar} "${kept}" PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "expected" OR MODE STREQUAL "error")
  execute_process(COMMAND ${EXE} ${SCRIPT}
    WORKING_DIRECTORY ${WORKDIR}
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  file(READ ${WORKDIR}/${EXPECTED} want)
  if(MODE STREQUAL "expected")
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "slat-dump ${SCRIPT} exited ${rc}:\n${err}")
    endif()
    set(got "${out}")
  else()
    if(NOT rc EQUAL 2)
      message(FATAL_ERROR "slat-dump ${SCRIPT} exited ${rc}, not 2:\n${out}${err}")
    endif()
    set(got "${err}")
  endif()
  if(NOT got STREQUAL want)
    string(RANDOM LENGTH 8 tag)
    set(tmp ${CMAKE_CURRENT_BINARY_DIR}/slat-dump-got-${tag}.txt)
    file(WRITE ${tmp} "${got}")
    show_diff(${WORKDIR}/${EXPECTED} ${tmp})
    message(FATAL_ERROR "slat-dump ${SCRIPT}: output differs from ${EXPECTED} (got: ${tmp})")
  endif()
elseif(MODE STREQUAL "roundtrip")
  execute_process(COMMAND ${EXE} --hex --raw ${OUT}.img ${SCRIPT}
    OUTPUT_VARIABLE live ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "slat-dump --raw exited ${rc}:\n${err}")
  endif()
  execute_process(COMMAND ${EXE} --hex --read-raw ${OUT}.img
    OUTPUT_VARIABLE loaded ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "slat-dump --read-raw exited ${rc}:\n${err}")
  endif()
  if(NOT err STREQUAL "")
    message(FATAL_ERROR "slat-dump --read-raw warned:\n${err}")
  endif()
  entry_lines("${live}" a)
  entry_lines("${loaded}" b)
  if(a STREQUAL "")
    message(FATAL_ERROR "no entries listed for ${SCRIPT}")
  endif()
  if(NOT a STREQUAL b)
    file(WRITE ${OUT}.live.txt "${a}")
    file(WRITE ${OUT}.loaded.txt "${b}")
    show_diff(${OUT}.live.txt ${OUT}.loaded.txt)
    message(FATAL_ERROR "the raw image of ${SCRIPT} lists other entries than the live table")
  endif()
else()
  message(FATAL_ERROR "unknown MODE ${MODE}")
endif()
