# The man pages dumplens-cli(1) and dumplens(1) and dumplens-cli's bash completion, written at build
# time from the programs' own definitions, so they cannot drift from --help:
#   dumplens-cli(1) and the completion: `dumplens-cli --generate man|bash-completion` walks its CLI11
#     definition (app/cli/cli_reference.cpp): every command, option and choice, the exit statuses
#     and the environment of the --help footer;
#   dumplens(1): Debian's help2man over `dumplens --help` and `--version` (QCommandLineParser),
#     with resources/man/dumplens.h2m for what --help of a desktop app does not say.
# Included from app/CMakeLists.txt, once the targets exist.
set(DUMPLENS_MAN_DIR ${PROJECT_BINARY_DIR}/man CACHE INTERNAL "where the build writes the man pages and the completion")
set(_run ${PROJECT_SOURCE_DIR}/cmake/run_to_file.cmake)
set(_outputs ${DUMPLENS_MAN_DIR}/dumplens-cli.1.gz ${DUMPLENS_MAN_DIR}/completions/dumplens-cli)
add_custom_command(OUTPUT ${DUMPLENS_MAN_DIR}/dumplens-cli.1.gz
  COMMAND ${CMAKE_COMMAND} -DOUT=${DUMPLENS_MAN_DIR}/dumplens-cli.1 -DGZIP=ON
          "-DCOMMAND=$<TARGET_FILE:dumplens-cli>|--generate|man" -P ${_run}
  DEPENDS dumplens-cli ${_run} COMMENT "Writing dumplens-cli(1)" VERBATIM)
add_custom_command(OUTPUT ${DUMPLENS_MAN_DIR}/completions/dumplens-cli
  COMMAND ${CMAKE_COMMAND} -DOUT=${DUMPLENS_MAN_DIR}/completions/dumplens-cli
          "-DCOMMAND=$<TARGET_FILE:dumplens-cli>|--generate|bash-completion" -P ${_run}
  DEPENDS dumplens-cli ${_run} COMMENT "Writing the bash completion of dumplens-cli" VERBATIM)
if(TARGET dumplens)
  find_program(DUMPLENS_HELP2MAN help2man REQUIRED)
  set(_h2m ${PROJECT_SOURCE_DIR}/resources/man/dumplens.h2m)
  add_custom_command(OUTPUT ${DUMPLENS_MAN_DIR}/dumplens.1.gz
    # Offscreen: --help needs no display, and a DISPLAY of the build machine must not matter.
    COMMAND ${CMAKE_COMMAND} -DOUT=${DUMPLENS_MAN_DIR}/dumplens.1 -DGZIP=ON -DENV=QT_QPA_PLATFORM=offscreen
            "-DCOMMAND=${DUMPLENS_HELP2MAN}|--no-info|--section=1|--include=${_h2m}|--name=find the first fp16 overflow in operator dumps (desktop app)|$<TARGET_FILE:dumplens>"
            -P ${_run}
    DEPENDS dumplens ${_h2m} ${_run} COMMENT "Writing dumplens(1) with help2man" VERBATIM)
  list(APPEND _outputs ${DUMPLENS_MAN_DIR}/dumplens.1.gz)
  install(FILES ${DUMPLENS_MAN_DIR}/dumplens.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
add_custom_target(manuals ALL DEPENDS ${_outputs})
install(FILES ${DUMPLENS_MAN_DIR}/dumplens-cli.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
# Where bash-completion's loader looks for the completion of the command `dumplens-cli`.
install(FILES ${DUMPLENS_MAN_DIR}/completions/dumplens-cli
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
