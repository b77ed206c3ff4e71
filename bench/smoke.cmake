# The bench-smoke tests (bench/CMakeLists.txt): run every scenario of
# slat-bench once on reduced sizes and check its JSON document. No timing is
# asserted, not even that it is positive: only the schema (every key, of the
# right JSON type), the exact counts and the checks slat-bench made (which
# are counts and lookups too; the targets' pass/fail is timing and is not
# looked at).
#
#   cmake -DBENCH=path/to/slat-bench -DFORMAT=arm-s2 -DGRANULE=4k -P smoke.cmake

cmake_minimum_required(VERSION 3.20)

if(NOT BENCH OR NOT FORMAT OR NOT GRANULE)
  message(FATAL_ERROR "usage: cmake -DBENCH=... -DFORMAT=... -DGRANULE=... -P smoke.cmake")
endif()

execute_process(
  COMMAND ${BENCH} --small --json --format ${FORMAT} --granule ${GRANULE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE doc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "slat-bench exited with ${rc}: ${err}\n${doc}")
endif()

set(failures "")
# expect(CONDITION TEXT): CONDITION as if() takes it, in one string.
macro(expect cond text)
  set(_expect_text "${text}")
  cmake_language(EVAL CODE "if(NOT (${cond}))
    list(APPEND failures \"\${_expect_text}\")
  endif()")
endmacro()

# string(JSON) fails the script on a malformed document or a missing key.
string(JSON v GET "${doc}" bench)
expect("\"${v}\" STREQUAL \"slat-bench\"" "bench is ${v}")
string(JSON v GET "${doc}" schema)
expect("${v} EQUAL 4" "schema is ${v}")
# The machine's state is reported, whatever it was.
string(JSON v TYPE "${doc}" cpus)
expect("\"${v}\" STREQUAL \"NUMBER\"" "cpus is a ${v}")
string(JSON v TYPE "${doc}" loaded)
expect("\"${v}\" STREQUAL \"BOOLEAN\"" "loaded is a ${v}")
foreach(when before after)
  string(JSON v LENGTH "${doc}" load_average ${when})
  expect("${v} EQUAL 3" "load_average ${when} has ${v} figures")
endforeach()
string(JSON v GET "${doc}" format)
expect("\"${v}\" STREQUAL \"${FORMAT}\"" "format is ${v}")
string(JSON v GET "${doc}" reps)
expect("${v} EQUAL 1" "reps is ${v}")
string(JSON granule GET "${doc}" granule)

set(peer_expected OFF)
if(FORMAT STREQUAL "arm-s2" AND granule EQUAL 4096)
  set(peer_expected ON)
endif()

# Every scenario either ran or was skipped with a reason.
string(JSON n LENGTH "${doc}" scenarios)
string(JSON nskip LENGTH "${doc}" skipped)
math(EXPR total "${n} + ${nskip}")
expect("${total} EQUAL 18" "${n} scenarios ran and ${nskip} were skipped, not 18")
set(ids "")
if(nskip GREATER 0)
  math(EXPR last "${nskip} - 1")
  foreach(i RANGE ${last})
    string(JSON id GET "${doc}" skipped ${i} id)
    string(JSON reason GET "${doc}" skipped ${i} reason)
    list(APPEND ids ${id})
    expect("NOT \"${reason}\" STREQUAL \"\"" "skipped ${id} without a reason")
    # Only the split of level-1 blocks may be missing (16K and 64K), and
    # the unmap with FWB (an Arm feature) on EPT.
    expect("(\"${id}\" STREQUAL \"6\" AND NOT granule EQUAL 4096) OR
            (\"${id}\" STREQUAL \"15\" AND NOT FORMAT STREQUAL \"arm-s2\")"
           "scenario ${id} skipped: ${reason}")
  endforeach()
endif()

math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  string(JSON sc GET "${doc}" scenarios ${i})
  string(JSON id GET "${sc}" id)
  list(APPEND ids ${id})
  string(JSON leaves GET "${sc}" leaves)
  string(JSON size GET "${sc}" size_bytes)
  string(JSON ok GET "${sc}" check pass)
  string(JSON nfail LENGTH "${sc}" check failures)
  expect("\"${ok}\" STREQUAL \"ON\" AND nfail EQUAL 0"
         "scenario ${id}: slat-bench's own checks failed")
  expect("leaves GREATER 0" "scenario ${id}: ${leaves} leaves")
  # Timings are present, as numbers (null when not finite), and their
  # values are never looked at: on a loaded machine a floor measured in the
  # same run can be slower than the scenario (a ratio printed as 0.000) or
  # too short for the clock (null).
  # Both clocks: the wall clock's fields at the top, the thread CPU
  # time's in "cpu" (the targets' clock).
  foreach(key median_ns_per_leaf min_ns_per_leaf median_ns_per_run
              ratio_to_floor wall_ratio_to_floor load_average
              "cpu;median_ns_per_leaf" "cpu;min_ns_per_leaf"
              "cpu;median_ns_per_run" "floor;ns_per_entry"
              "floor;cpu_ns_per_entry")
    string(JSON vt TYPE "${sc}" ${key})
    expect("\"${vt}\" MATCHES \"^(NUMBER|NULL)$\""
           "scenario ${id}: ${key} is a ${vt}")
  endforeach()
  string(JSON fe GET "${sc}" floor entries)
  expect("fe GREATER_EQUAL leaves" "scenario ${id}: a floor sample of ${fe} entries")
  string(JSON fk GET "${sc}" floor kind)
  expect("\"${fk}\" MATCHES \"^(store|store-zero|load|claim|call-store)$\"" "scenario ${id}: floor kind ${fk}")

  string(JSON peer TYPE "${sc}" peer)
  if(peer_expected AND id MATCHES "^([1-9]|1[0345])$")
    expect("\"${peer}\" STREQUAL \"OBJECT\"" "scenario ${id}: no peer figure")
    string(JSON pir GET "${sc}" peer ir_per_leaf)
    expect("pir GREATER 0" "scenario ${id}: KVM's instructions per leaf ${pir}")
  else()
    expect("\"${peer}\" STREQUAL \"NULL\"" "scenario ${id}: a peer figure where none applies")
  endif()
  string(JSON tt TYPE "${sc}" target)
  # Targets relative to KVM only where its figures apply; those relative
  # to the floor everywhere.
  if(id MATCHES "^(5|6|7|10|16|17)$" OR
     (peer_expected AND id MATCHES "^(1|2|3|4|8|9|14)$"))
    expect("\"${tt}\" STREQUAL \"OBJECT\"" "scenario ${id}: no target")
  else()
    expect("\"${tt}\" STREQUAL \"NULL\"" "scenario ${id}: a target where none is set")
  endif()

  # Exact counts.
  string(JSON visited GET "${sc}" counts visited)
  string(JSON wleaf GET "${sc}" counts written_leaf)
  string(JSON wattr GET "${sc}" counts written_attr)
  string(JSON wclear GET "${sc}" counts written_clear)
  string(JSON retries GET "${sc}" counts retries)
  string(JSON pages GET "${sc}" memory table_pages)
  string(JSON minpages GET "${sc}" memory min_table_pages)
  expect("retries EQUAL 0" "scenario ${id}: ${retries} retries")
  expect("pages EQUAL minpages"
         "scenario ${id}: ${pages} table pages, the layout needs ${minpages}")
  if(id MATCHES "^(1|2|13|18)$")
    expect("wleaf EQUAL leaves" "scenario ${id}: ${wleaf} leaves written of ${leaves}")
  elseif(id MATCHES "^(5|6)$")
    expect("wleaf EQUAL leaves" "scenario ${id}: split wrote ${wleaf} leaves of ${leaves}")
  elseif(id STREQUAL "7")
    expect("visited LESS leaves" "scenario 7 visited ${visited} entries for ${leaves} leaves")
  elseif(id MATCHES "^(8|9)$")
    expect("wattr EQUAL leaves" "scenario ${id}: ${wattr} attribute writes of ${leaves}")
  elseif(id STREQUAL "12")
    expect("wclear EQUAL leaves" "scenario 12: ${wclear} clears of ${leaves}")
  elseif(id MATCHES "^(16|17)$")
    string(JSON dirty GET "${sc}" dirty_pages)
    expect("dirty EQUAL leaves" "scenario ${id}: ${dirty} dirty pages of ${leaves}")
    if(id STREQUAL "17")
      expect("wattr EQUAL leaves" "scenario 17: ${wattr} attribute writes of ${leaves}")
    endif()
  elseif(id STREQUAL "10")
    expect("visited GREATER_EQUAL leaves" "scenario 10 read ${visited} of ${leaves} leaves")
  endif()
  string(JSON mapped GET "${sc}" memory bytes_mapped)
  string(JSON bpg TYPE "${sc}" memory bytes_per_gib)
  if(mapped GREATER 0)
    expect("\"${bpg}\" STREQUAL \"NUMBER\"" "scenario ${id}: no bytes per GiB")
  else()
    expect("\"${bpg}\" STREQUAL \"NULL\"" "scenario ${id}: bytes per GiB with nothing mapped")
  endif()
endforeach()

foreach(want 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18)
  list(FIND ids ${want} at)
  expect("at GREATER -1" "scenario ${want} neither ran nor was skipped")
endforeach()

if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "slat-bench ${FORMAT} ${GRANULE}:\n  ${text}")
endif()
message(STATUS "slat-bench ${FORMAT} ${GRANULE}: ${n} scenarios ran, ${nskip} skipped, JSON and counts sane")
