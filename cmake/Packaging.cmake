# `cpack -G DEB` in a build folder: dumplens_<version>_<arch>.deb with Depends computed by
# dpkg-shlibdeps from the installed binaries. Installs with `apt install ./dumplens_*.deb`;
# Debian's dpkg triggers refresh the menu, icon cache and MIME database.
set(DUMPLENS_PACKAGE_CONTACT "DumpLens maintainers <maintainers@dumplens.invalid>"
    CACHE STRING "Maintainer field of the Debian package")

set(CPACK_PACKAGE_NAME dumplens)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "DumpLens")
set(CPACK_PACKAGE_CONTACT ${DUMPLENS_PACKAGE_CONTACT})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "find the first fp16 overflow in MindSpore/CANN/msprobe operator dumps")
set(CPACK_PACKAGE_DESCRIPTION
    "DumpLens indexes the operator dumps that MindSpore, CANN and msprobe write, computes fp16-aware\n"
    "statistics for every tensor, finds the first overflowing operator and its chain across ranks\n"
    "and pipeline stages, replays it in fp16, bf16 and fp32, compares runs and writes PDF reports.\n"
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

include(CPack)
