# KRING_GUEST_ONLY builds (cross builds for arm64 guests): the libraries the
# guest programs use, without the host's compiled packages, which are of
# the host's architecture.
#
# - GoogleTest from Debian's source package (googletest, /usr/src/googletest),
#   built here for the target;
# - fmt header-only, CLI11 and nlohmann-json (header-only) from the host's
#   -dev packages: architecture-independent headers, reached through a
#   directory of links (not -I/usr/include, which would bring the host's C
#   library headers along).
#
# Each is announced to find_package() by an empty package configuration
# file, so the CMakeLists that use them stay as they are.
set(KRING_GTEST_SOURCE /usr/src/googletest CACHE PATH "GoogleTest's source tree")
if(NOT EXISTS ${KRING_GTEST_SOURCE}/CMakeLists.txt)
  message(FATAL_ERROR "no GoogleTest source in ${KRING_GTEST_SOURCE} (apt-get install googletest)")
endif()
set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
add_subdirectory(${KRING_GTEST_SOURCE} ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)

set(kring_guest_inc ${CMAKE_BINARY_DIR}/guest-include)
file(MAKE_DIRECTORY ${kring_guest_inc})
foreach(d fmt CLI nlohmann)
  if(NOT EXISTS /usr/include/${d})
    message(FATAL_ERROR "no /usr/include/${d} (tools/dev/deps.sh installs it)")
  endif()
  file(CREATE_LINK /usr/include/${d} ${kring_guest_inc}/${d} SYMBOLIC)
endforeach()

add_library(fmt::fmt INTERFACE IMPORTED GLOBAL)
set_target_properties(fmt::fmt PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${kring_guest_inc}
  INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY=1)
add_library(CLI11::CLI11 INTERFACE IMPORTED GLOBAL)
set_target_properties(CLI11::CLI11 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${kring_guest_inc})
add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED GLOBAL)
set_target_properties(nlohmann_json::nlohmann_json PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${kring_guest_inc})

set(kring_guest_pkgs ${CMAKE_BINARY_DIR}/guest-packages)
foreach(p fmt CLI11 nlohmann_json GTest)
  file(WRITE ${kring_guest_pkgs}/${p}/${p}Config.cmake
       "# ${p}: provided by tools/dev/cmake/guest-deps.cmake\n")
  set(${p}_DIR ${kring_guest_pkgs}/${p} CACHE PATH "" FORCE)
endforeach()
