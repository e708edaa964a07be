# pgflow_embed_sql(OUTPUT <file.cc> MIGRATIONS <files...> AUDITS <files...> PGMQ <file>)
#
# Generates a C++ source that embeds the SQL migrations (with their SHA-256 checksums), their
# read-only upgrade audits (`pgflow audit`) and the bundled PGMQ script, so the library installs its schema without any files on disk.
# The generation runs at build time and re-runs whenever one of the SQL files changes.
function(pgflow_embed_sql)
  cmake_parse_arguments(ARG "" "OUTPUT;PGMQ" "MIGRATIONS;AUDITS" ${ARGN})
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${ARG_OUTPUT} -DPGMQ=${ARG_PGMQ}
            "-DMIGRATIONS=${ARG_MIGRATIONS}" "-DAUDITS=${ARG_AUDITS}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_sql.cmake
    DEPENDS ${ARG_MIGRATIONS} ${ARG_AUDITS} ${ARG_PGMQ} ${PROJECT_SOURCE_DIR}/cmake/embed_sql.cmake
    COMMENT "Embedding SQL migrations"
    VERBATIM)
endfunction()
