# `cpack -G DEB` in a build folder (after building it; a Release build makes a far smaller
# package): tessel_<version>_<arch>.deb holding what `cmake --install` puts under /usr. Its
# dependencies are the shared libraries the tessel command links (found by dpkg-shlibdeps, from
# dpkg-dev) and the Debian -dev packages that Tessel's headers and find_package(Tessel) need.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tessel)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Tessel deep-learning compiler: the tessel command, C++ libraries, headers, CMake package")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "Tessel developers")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# `tessel compile` links packages by running `cc`, which Debian's gcc package provides (another
# c-compiler, gcc-12 alone or a clang, installs no `cc`: seen on a clean bookworm chroot).
set(tessel_deb_depends llvm-19-dev libfmt-dev libdlpack-dev libonnx-dev libprotobuf-dev
    nlohmann-json3-dev libarchive-dev libzip-dev pkg-config gcc)
if(TESSEL_WITH_XGBOOST)
  list(APPEND tessel_deb_depends libxgboost-dev)
endif()
list(JOIN tessel_deb_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
# Building against the installed CMake package needs a C++ compiler and CMake.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "g++, cmake")
include(CPack)
