# The Debian package (issue 17): CPack's DEB generator packs what `cmake --install` puts in
# place, for the prefix /usr, into fdl-mirror_<version>_<arch>.deb, and the debug symbols into
# fdl-mirror-dbgsym_<version>_<arch>.ddeb. scripts/package runs it; docs/operations.md ("From
# the Debian package") says what the package does and why it is CPack and not
# dpkg-buildpackage; tests/system/debian_package_test.sh installs it for real and purges it.
#
# Included last by the top-level CMakeLists.txt, once every install() rule exists.
include(GNUInstallDirs)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME fdl-mirror)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)   # Debian's revision: 0.1.0-1
set(FDL_MIRROR_PACKAGE_MAINTAINER "fdl-mirror maintainers <maintainers@example.org>" CACHE STRING
    "the Maintainer field of the Debian package (scripts/package): Name <address>")
set(CPACK_PACKAGE_CONTACT "${FDL_MIRROR_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${FDL_MIRROR_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "mirror and verify FDL repositories")
# The summary line is CPACK_PACKAGE_DESCRIPTION_SUMMARY; an empty line becomes " .".
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "fdl-mirror copies new versions of FDL repositories (DuckLake
catalogs and their data files) from an origin (a folder, HTTPS or S3) to a
mirror (a folder or S3), byte for byte, checking every size, digest and, with
trusted keys, SSH signature before anything is published. It runs as a command
or as a hardened systemd service with Prometheus metrics.

This package is built from the source tree by CPack, not by the Debian archive:
it carries its own libssh 0.12 and DuckDB C library in
/usr/${CMAKE_INSTALL_LIBDIR}/fdl-mirror. The service is installed but neither
enabled nor started.")

# The prefix a Debian package uses. DESTDIR staging, so that what install rules write at
# install time from CMAKE_INSTALL_PREFIX (the unit's ExecStart=, the alert rules' runbook
# URLs) names /usr, not CPack's staging folder.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Pack what the build holds, as `cmake --install` does: run the install script itself
# rather than a project install, which asks the generator to bring the build up to date first.
set(CPACK_INSTALL_CMAKE_PROJECTS "")
set(CPACK_INSTALL_SCRIPTS "${PROJECT_BINARY_DIR}/cmake_install.cmake")

# Depends: from dpkg-shlibdeps, over the binary and the private libraries. libssh 0.12 and
# DuckDB are inside the package (the RPATH's folder, given relative to the staging root), so
# they bring no dependency; their own needs (libssl3, libstdc++6…) do. The maintainer
# scripts need systemd-sysusers and systemd-tmpfiles: systemd's, or the standalone ones of a
# machine without systemd.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "usr/${CMAKE_INSTALL_LIBDIR}/fdl-mirror")
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "systemd | systemd-standalone-sysusers, systemd | systemd-standalone-tmpfiles")

# Stripped binary and libraries; their debug information, by build id under
# /usr/lib/debug/.build-id/, in fdl-mirror-dbgsym (a .ddeb, as Debian's archive makes them).
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)

# postinst makes the user and the folders; prerm stops the service on removal; postrm cleans up
# on purge (systemd/debian/). Nothing under /etc is shipped (the example configuration is in
# /usr/share/doc), so there are no conffiles.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/systemd/debian/postinst
    ${PROJECT_SOURCE_DIR}/systemd/debian/prerm ${PROJECT_SOURCE_DIR}/systemd/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# After staging, before packing: what Debian's policy asks of a package and `cmake --install`
# does not do (manual pages compressed, copyright and changelog in the documentation folder).
set(FDL_MIRROR_PACKAGE_DUCKDB_LICENSE "")
if(DUCKDB_LIBRARY)
  get_filename_component(duckdb_dir "${DUCKDB_LIBRARY}" DIRECTORY)
  if(EXISTS "${duckdb_dir}/LICENSE")
    set(FDL_MIRROR_PACKAGE_DUCKDB_LICENSE "${duckdb_dir}/LICENSE")
  endif()
endif()
set(CPACK_FDL_MIRROR_DUCKDB_LICENSE "${FDL_MIRROR_PACKAGE_DUCKDB_LICENSE}")
set(CPACK_FDL_MIRROR_MANDIR "${CMAKE_INSTALL_MANDIR}")
set(CPACK_FDL_MIRROR_DOCDIR "${CMAKE_INSTALL_DOCDIR}")
# daemon/CMakeLists.txt's FDL_MIRROR_PRIVATE_LIBDIR, relative to the prefix.
set(CPACK_FDL_MIRROR_PRIVATE_LIBDIR "${CMAKE_INSTALL_LIBDIR}/fdl-mirror")
set(CPACK_PRE_BUILD_SCRIPTS "${PROJECT_SOURCE_DIR}/systemd/debian/pre_build.cmake")

include(CPack)
