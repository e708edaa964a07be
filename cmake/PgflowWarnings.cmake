# pgflow_set_warnings(target): strict warnings on pgflow's own targets only. They are errors
# only when the build opts in (PGFLOW_WERROR: the test script and CI do), so a user's build
# never breaks on a warning a newer compiler adds.
function(pgflow_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE
      -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
      -Wcast-align -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough
      $<$<BOOL:${PGFLOW_WERROR}>:-Werror>)
  endif()
endfunction()
