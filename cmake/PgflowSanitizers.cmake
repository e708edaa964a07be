# PGFLOW_SANITIZE: build every target of this project (library, CLI, tests, examples,
# benchmarks) with the compiler's sanitizers. Empty (the default) builds without any.
#
#   -DPGFLOW_SANITIZE=address,undefined   AddressSanitizer (+ LeakSanitizer) and UBSan
#   -DPGFLOW_SANITIZE=thread              ThreadSanitizer
#
# Any comma-separated list of address, undefined, leak and thread is accepted, except thread
# together with address or leak (the compilers refuse the combination). UBSan findings stop the
# program (-fno-sanitize-recover=undefined), so a test that triggers one fails. The options are
# added to the directory (and so to every target below it), not to the exported pgflow::pgflow:
# a sanitized build is for running this project's tests, not for installing.
#
# ThreadSanitizer needs every synchronization primitive instrumented: Debian's Abseil is built
# without it, so absl::Mutex looks like no synchronization at all and TSan reports races that
# are not there. scripts/build-check.sh tsan builds Abseil from Debian's source with
# -fsanitize=thread first (tests/sanitizers/build-abseil.sh); a configure against any other
# Abseil gets a warning.
set(PGFLOW_SANITIZE "" CACHE STRING
    "Sanitizers for every pgflow target: address,undefined | thread | empty for none")

if(PGFLOW_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "PGFLOW_SANITIZE needs g++ or clang++ (got ${CMAKE_CXX_COMPILER_ID})")
  endif()
  string(REPLACE "," ";" _pgflow_sanitizers "${PGFLOW_SANITIZE}")
  foreach(_pgflow_sanitizer IN LISTS _pgflow_sanitizers)
    if(NOT _pgflow_sanitizer MATCHES "^(address|undefined|leak|thread)$")
      message(FATAL_ERROR "PGFLOW_SANITIZE: unknown sanitizer '${_pgflow_sanitizer}' "
                          "(address, undefined, leak, thread)")
    endif()
  endforeach()
  if("thread" IN_LIST _pgflow_sanitizers AND
     ("address" IN_LIST _pgflow_sanitizers OR "leak" IN_LIST _pgflow_sanitizers))
    message(FATAL_ERROR "PGFLOW_SANITIZE: thread cannot be combined with address or leak")
  endif()

  set(_pgflow_sanitize_flags -fsanitize=${PGFLOW_SANITIZE} -fno-omit-frame-pointer)
  if("undefined" IN_LIST _pgflow_sanitizers)
    list(APPEND _pgflow_sanitize_flags -fno-sanitize-recover=undefined)
  endif()
  # g++ warns "may be used uninitialized" inside libstdc++'s <regex> once ASan instruments it
  # (the documented false positives of -Wmaybe-uninitialized under sanitizers). The warning
  # stays on, as an error, in the unsanitized builds that check warnings.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND _pgflow_sanitize_flags -Wno-maybe-uninitialized)
  endif()
  add_compile_options(${_pgflow_sanitize_flags})
  add_link_options(-fsanitize=${PGFLOW_SANITIZE})
  message(STATUS "pgflow: sanitizers ${PGFLOW_SANITIZE} on every target")

  if("thread" IN_LIST _pgflow_sanitizers)
    # Checked once the top-level CMakeLists.txt has found Abseil.
    function(_pgflow_check_tsan_abseil)
      if(NOT EXISTS "${absl_DIR}/pgflow-tsan-instrumented")
        message(WARNING "PGFLOW_SANITIZE=thread with an Abseil not built with -fsanitize=thread "
                        "(${absl_DIR}): ThreadSanitizer cannot see absl::Mutex and will report "
                        "false races. scripts/build-check.sh tsan builds an instrumented one.")
      endif()
    endfunction()
    cmake_language(DEFER CALL _pgflow_check_tsan_abseil)
  endif()
endif()
