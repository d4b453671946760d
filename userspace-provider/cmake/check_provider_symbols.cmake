# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# cmake -DNM=... -DOBJDUMP=... -DLIB=libsroce-rdmav<PABI>.so -DPABI=<PABI>
#       -DSTAMP=file -P this
#
# Checks the built provider the way libibverbs will meet it:
#  1. it references verbs_register_driver_<PABI>@IBVERBS_PRIVATE_<PABI>
#     (PABI 34 for rdma-core 44.0 and 56.1, 65 for 65.0) and no other
#     IBVERBS_PRIVATE_ version, so a libibverbs without that exact private
#     ABI makes dlopen() fail and the provider is skipped instead of running
#     against the wrong layouts;
#  2. every undefined symbol is versioned by libibverbs, glibc or libstdc++
#     (-z defs guarantees resolution; this checks *where* from);
#  3. it needs no shared libraries besides those three, and has no SONAME;
#  4. it exports nothing (all internals are hidden).
# Writes STAMP only when everything holds, so a failure re-runs next build.

foreach(var NM OBJDUMP LIB PABI STAMP)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_provider_symbols: ${var} not set")
  endif()
endforeach()

if(NOT PABI MATCHES "^[0-9]+$")
  message(FATAL_ERROR "check_provider_symbols: PABI '${PABI}' is not a number")
endif()
set(register_sym "verbs_register_driver_${PABI}@IBVERBS_PRIVATE_${PABI}")
get_filename_component(lib_name "${LIB}" NAME)
if(NOT lib_name STREQUAL "libsroce-rdmav${PABI}.so")
  message(FATAL_ERROR "check_provider_symbols: ${LIB} is not named "
    "libsroce-rdmav${PABI}.so, the only name libibverbs (PABI ${PABI}) opens")
endif()

file(REMOVE "${STAMP}")

execute_process(
  COMMAND "${NM}" -D "${LIB}"
  OUTPUT_VARIABLE nm_out
  ERROR_VARIABLE nm_err
  RESULT_VARIABLE nm_rc)
if(NOT nm_rc EQUAL 0)
  message(FATAL_ERROR "check_provider_symbols: ${NM} -D ${LIB} failed: ${nm_err}")
endif()

set(errors "")
set(found_register FALSE)
string(REPLACE "\n" ";" nm_lines "${nm_out}")
foreach(line IN LISTS nm_lines)
  string(STRIP "${line}" line)
  if(line STREQUAL "")
    continue()
  endif()
  # "[value] type name[@[@]version]"; undefined symbols have no value.
  if(NOT line MATCHES "^([0-9a-fA-F]+ )?([A-Za-z]) ([^ ]+)$")
    string(APPEND errors "  unparsable nm line: ${line}\n")
    continue()
  endif()
  set(type "${CMAKE_MATCH_2}")
  set(sym "${CMAKE_MATCH_3}")

  if(sym STREQUAL register_sym AND type STREQUAL "U")
    set(found_register TRUE)
  endif()
  if(sym MATCHES "@IBVERBS_PRIVATE_([0-9]+)$" AND NOT CMAKE_MATCH_1 STREQUAL PABI)
    string(APPEND errors "  private symbol of another PABI: ${sym}\n")
  endif()

  if(type STREQUAL "U")
    if(NOT sym MATCHES "@(IBVERBS_[A-Z0-9_.]+|GLIBC_[0-9.]+|GLIBCXX_[0-9.]+|CXXABI_[0-9.]+)$")
      string(APPEND errors "  undefined symbol from an unexpected library: ${sym}\n")
    endif()
  elseif(type STREQUAL "w" OR type STREQUAL "v")
    # Weak references (__gmon_start__, _ITM_*, __cxa_finalize) are optional.
  else()
    string(APPEND errors "  exported symbol (should be hidden): ${type} ${sym}\n")
  endif()
endforeach()

if(NOT found_register)
  string(APPEND errors
    "  no undefined reference to ${register_sym}\n")
endif()

execute_process(
  COMMAND "${OBJDUMP}" -p "${LIB}"
  OUTPUT_VARIABLE od_out
  ERROR_VARIABLE od_err
  RESULT_VARIABLE od_rc)
if(NOT od_rc EQUAL 0)
  message(FATAL_ERROR "check_provider_symbols: ${OBJDUMP} -p ${LIB} failed: ${od_err}")
endif()
string(REGEX MATCHALL "NEEDED +[^\n]+" needed_lines "${od_out}")
foreach(entry IN LISTS needed_lines)
  string(REGEX REPLACE "NEEDED +" "" lib "${entry}")
  string(STRIP "${lib}" lib)
  if(NOT lib MATCHES "^(libibverbs\\.so\\.1|libc\\.so\\.6|libstdc\\+\\+\\.so\\.6)$")
    string(APPEND errors "  unexpected DT_NEEDED: ${lib}\n")
  endif()
endforeach()
if(od_out MATCHES "SONAME")
  string(APPEND errors "  has a SONAME; providers are dlopen()ed by file name\n")
endif()

if(NOT errors STREQUAL "")
  message(FATAL_ERROR "check_provider_symbols: ${LIB}:\n${errors}")
endif()

file(WRITE "${STAMP}" "${nm_out}")
