# Run by cpack (CPACK_PRE_BUILD_SCRIPTS, systemd/package.cmake) on the staged files, before
# they are packed: what Debian's policy asks of a package and `cmake --install` does not do.
# - manual pages compressed with `gzip -9n` (policy 12.1), where `man` still finds them;
# - /usr/share/doc/fdl-mirror/copyright (policy 12.5): the libraries the package carries and
#   their licences;
# - /usr/share/doc/fdl-mirror/changelog.Debian.gz (policy 12.7).
# The documentation's own .md files stay uncompressed: they link to one another by name.
set(root "${CPACK_TEMPORARY_INSTALL_DIRECTORY}${CPACK_INSTALL_PREFIX}")
if(NOT EXISTS "${root}/bin/fdl-mirror")
  message(FATAL_ERROR "pre_build.cmake: no bin/fdl-mirror under the staging folder ${root}")
endif()

file(GLOB pages "${root}/${CPACK_FDL_MIRROR_MANDIR}/man*/*.[1-9]")
if(NOT pages)
  message(FATAL_ERROR "pre_build.cmake: no manual page under ${root}/${CPACK_FDL_MIRROR_MANDIR}")
endif()
foreach(page IN LISTS pages)
  execute_process(COMMAND gzip -9nf "${page}" RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "pre_build.cmake: gzip ${page} failed: ${status}")
  endif()
endforeach()

set(doc "${root}/${CPACK_FDL_MIRROR_DOCDIR}")
file(GLOB private_libssh "${root}/${CPACK_FDL_MIRROR_PRIVATE_LIBDIR}/libssh.so*")
file(GLOB private_duckdb "${root}/${CPACK_FDL_MIRROR_PRIVATE_LIBDIR}/libduckdb.so*")
set(text "fdl-mirror, packaged from its source tree by scripts/package (CPack).

fdl-mirror
  Copyright: the fdl-mirror authors.
  Licence: the source tree does not state one yet.
")
if(private_libssh)
  string(APPEND text "
libssh 0.12 (the libssh.so files in the package's private library folder), built from
Debian's libssh source package by the project's scripts/setup
  Copyright: Aris Adamantiadis, Andreas Schneider and the libssh contributors.
  Licence: GNU Lesser General Public License, version 2.1. On Debian systems its full text
  is in /usr/share/common-licenses/LGPL-2.1.
")
endif()
if(private_duckdb)
  string(APPEND text "
DuckDB's C library (libduckdb.so in the package's private library folder), from the
@duckdb/node-bindings-linux-x64 package pinned by the project's scripts/deps/duckdb
  Licence: MIT, whose text follows.
")
  if(CPACK_FDL_MIRROR_DUCKDB_LICENSE AND EXISTS "${CPACK_FDL_MIRROR_DUCKDB_LICENSE}")
    file(READ "${CPACK_FDL_MIRROR_DUCKDB_LICENSE}" license)
    string(STRIP "${license}" license)
    string(REPLACE "\n" "\n  " license "${license}")
    string(REPLACE "\n  \n" "\n\n" license "${license}")
    string(APPEND text "\n  ${license}\n")
  else()
    message(FATAL_ERROR "pre_build.cmake: the package carries libduckdb.so, but DuckDB's LICENSE "
      "was not found beside the library the build used")
  endif()
endif()
file(WRITE "${doc}/copyright" "${text}")

# The date honours SOURCE_DATE_EPOCH, as string(TIMESTAMP) does.
string(TIMESTAMP date "%a, %d %b %Y %H:%M:%S +0000" UTC)
set(version "${CPACK_PACKAGE_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")
file(WRITE "${doc}/changelog.Debian" "fdl-mirror (${version}) bookworm; urgency=medium

  * Built from the source tree by scripts/package (CPack), not by the Debian
    archive; see /usr/share/doc/fdl-mirror/operations.md.

 -- ${CPACK_DEBIAN_PACKAGE_MAINTAINER}  ${date}
")
execute_process(COMMAND gzip -9nf "${doc}/changelog.Debian" RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "pre_build.cmake: gzip ${doc}/changelog.Debian failed: ${status}")
endif()
