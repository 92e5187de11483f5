# `cpack -G DEB` in a build folder: dumplens_<version>_<arch>.deb with Depends computed by
# dpkg-shlibdeps from the installed binaries. Installs with `apt install ./dumplens_*.deb`;
# Debian's dpkg triggers refresh the menu, icon cache and MIME database.
# Debian requires a Maintainer. The default is the identity every commit of the project carries;
# set your own when you build a package you distribute. No Homepage field: the project has no
# web address of its own yet, and the field is optional.
set(DUMPLENS_PACKAGE_CONTACT "DumpLens maintainers <maintainers@users.noreply.a-seed-e3404b2d.example>"
    CACHE STRING "Maintainer field of the Debian package")

set(CPACK_PACKAGE_NAME dumplens)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "DumpLens")
set(CPACK_PACKAGE_CONTACT ${DUMPLENS_PACKAGE_CONTACT})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "find the first fp16 overflow in MindSpore/CANN/msprobe operator dumps")
# Lines of at most 80 characters (lintian: extended-description-line-too-long).
set(CPACK_PACKAGE_DESCRIPTION
    "DumpLens indexes the operator dumps that MindSpore, CANN and msprobe write,\n"
    "computes fp16-aware statistics for every tensor, finds the first overflowing\n"
    "operator and its chain across ranks and pipeline stages, replays it in fp16,\n"
    "bf16 and fp32, compares runs and writes PDF reports.\n"
    "Provides the desktop app dumplens and the command line tool dumplens-cli.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
if(DUMPLENS_BUILD_UI)
  # The app and the PDF report draw text with whatever font fontconfig finds.
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "fonts-dejavu-core")
endif()

# usr/share/doc/dumplens/: the copyright file in Debian's machine-readable format and the changelog
# (a native package: changelog.gz, in debian/changelog syntax, gzip -9n), beside the docs.
set(DUMPLENS_DOCDIR ${CMAKE_INSTALL_DATAROOTDIR}/doc/dumplens)
file(STRINGS ${PROJECT_SOURCE_DIR}/resources/debian/changelog _newest LIMIT_COUNT 1)
if(NOT _newest MATCHES "^dumplens \\(${PROJECT_VERSION}\\) ")
  message(FATAL_ERROR "resources/debian/changelog: the newest entry is '${_newest}', not dumplens (${PROJECT_VERSION}); "
                      "add an entry for ${PROJECT_VERSION} first.")
endif()
set(_changelog ${PROJECT_BINARY_DIR}/package/changelog)
configure_file(${PROJECT_SOURCE_DIR}/resources/debian/changelog ${_changelog} COPYONLY)
add_custom_command(OUTPUT ${_changelog}.gz COMMAND gzip -9nkf ${_changelog}
                   DEPENDS ${PROJECT_SOURCE_DIR}/resources/debian/changelog VERBATIM)
add_custom_target(package_changelog ALL DEPENDS ${_changelog}.gz)
install(FILES ${_changelog}.gz resources/debian/copyright DESTINATION ${DUMPLENS_DOCDIR})
install(FILES README.md docs/cli.md docs/formats.md DESTINATION ${DUMPLENS_DOCDIR})
if(DUMPLENS_BUILD_UI)
  install(FILES docs/app.md DESTINATION ${DUMPLENS_DOCDIR})
endif()

include(CPack)
