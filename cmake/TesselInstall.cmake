# `cmake --install`: the public headers, the libraries, the tessel command, a CMake package
# (find_package(Tessel): Tessel::tessel compiles and runs models, Tessel::runtime only loads
# packages and needs no LLVM) and tessel-runtime.pc for pkg-config. README.md, "Installing".
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TESSEL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Tessel)

# Headers keep the folders the sources include them by ("runtime/model.h"). The few that include
# LLVM, ONNX/protobuf or XGBoost headers are internal to their library's .cc files and stay out;
# tests/install checks that no installed header reaches one.
set(tessel_header_dirs ir tir te topi reference frontend passes driver autotune codegen runtime)
set(tessel_internal_headers
    "^codegen/llvm/"
    "^frontend/(onnx_proto_convert|onnx_shape_inference|proto_file|validate_model)\\.h$"
    "^autotune/xgb_tuner\\.h$")
list(JOIN tessel_internal_headers "|" tessel_internal_regex)
foreach(dir ${tessel_header_dirs})
  file(GLOB_RECURSE headers RELATIVE ${PROJECT_SOURCE_DIR} CONFIGURE_DEPENDS
       ${PROJECT_SOURCE_DIR}/${dir}/*.h)
  list(FILTER headers EXCLUDE REGEX "${tessel_internal_regex}")
  foreach(header ${headers})
    get_filename_component(subdir ${header} DIRECTORY)
    install(FILES ${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessel/${subdir})
  endforeach()
endforeach()

# Tessel::tessel: everything a program that compiles models or te kernels links (the driver
# depends on every other library). A target of its own, since `tessel` names the command.
add_library(tessel_lib INTERFACE)
target_link_libraries(tessel_lib INTERFACE tessel_driver)
set_target_properties(tessel_lib PROPERTIES EXPORT_NAME tessel)
# The same names inside this build, so examples/ builds unchanged in the tree and outside it.
add_library(Tessel::tessel ALIAS tessel_lib)
add_library(Tessel::runtime ALIAS tessel_runtime)

# Two export sets, so that find_package(Tessel COMPONENTS runtime) loads neither LLVM nor ONNX.
set(tessel_runtime_libs tessel_ir tessel_runtime)
set(tessel_compiler_libs tessel_tir tessel_te tessel_runtime_jit tessel_codegen tessel_topi
    tessel_reference tessel_frontend tessel_passes tessel_autotune tessel_driver)
foreach(lib ${tessel_runtime_libs} ${tessel_compiler_libs})
  string(REPLACE "tessel_" "" export_name ${lib})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${export_name})
endforeach()
install(TARGETS ${tessel_runtime_libs} EXPORT TesselRuntimeTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS ${tessel_compiler_libs} tessel_lib EXPORT TesselTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS tessel RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT TesselRuntimeTargets NAMESPACE Tessel:: DESTINATION ${TESSEL_INSTALL_CMAKEDIR})
install(EXPORT TesselTargets NAMESPACE Tessel:: DESTINATION ${TESSEL_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/TesselConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/TesselConfig.cmake
                              INSTALL_DESTINATION ${TESSEL_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TesselConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TesselConfig.cmake ${PROJECT_BINARY_DIR}/TesselConfigVersion.cmake
        DESTINATION ${TESSEL_INSTALL_CMAKEDIR})

# Static libraries need their dependencies on the link line; shared ones bring them along.
if(BUILD_SHARED_LIBS)
  set(TESSEL_PC_REQUIRES "fmt")
  set(TESSEL_PC_REQUIRES_PRIVATE "libzip libarchive")
  set(TESSEL_PC_LIBS_PRIVATE "-pthread -ldl")
  set(TESSEL_PC_LIBS_STATIC "")
else()
  set(TESSEL_PC_REQUIRES "fmt libzip libarchive")
  set(TESSEL_PC_REQUIRES_PRIVATE "")
  set(TESSEL_PC_LIBS_PRIVATE "")
  set(TESSEL_PC_LIBS_STATIC "-pthread -ldl")
endif()
# Relative to the .pc file, so that the installed tree can move (a temporary prefix, the .deb).
file(RELATIVE_PATH TESSEL_PC_PREFIX_FROM_PCDIR /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" TESSEL_PC_PREFIX_FROM_PCDIR "${TESSEL_PC_PREFIX_FROM_PCDIR}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tessel-runtime.pc.in
               ${PROJECT_BINARY_DIR}/tessel-runtime.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tessel-runtime.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
