# rig-trace, a BPF tool in the style of libbpf-tools: its BPF programs
# (rig-trace.bpf.c) compiled by clang for the BPF target, embedded by a
# skeleton that `bpftool gen skeleton` makes, and its user side
# (rig-trace.c) on libbpf.  Built where clang, bpftool and libbpf are found
# (Debian: clang, bpftool, libbpf-dev); its programs read only the probes'
# arguments, so no kernel type information (vmlinux.h) is needed.
find_package(PkgConfig REQUIRED)
pkg_check_modules(RIG_LIBBPF IMPORTED_TARGET libbpf)
find_program(RIG_BPFTOOL bpftool PATHS /usr/sbin /sbin)
find_program(RIG_BPF_CLANG clang)
if(NOT RIG_LIBBPF_FOUND OR NOT RIG_BPFTOOL OR NOT RIG_BPF_CLANG)
  message(STATUS "rig: rig-trace is not built (it needs clang, bpftool and libbpf-dev)")
  return()
endif()

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(rig_bpf_arch x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(rig_bpf_arch arm64)
else()
  message(STATUS "rig: rig-trace is not built for ${CMAKE_SYSTEM_PROCESSOR}")
  return()
endif()
# The kernel's user headers of the build machine's multiarch folder
# (asm/ptrace.h), which clang's BPF target does not search by itself.
execute_process(COMMAND ${CMAKE_C_COMPILER} -print-multiarch OUTPUT_VARIABLE rig_multiarch
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)

set(rig_trace_object ${CMAKE_CURRENT_BINARY_DIR}/rig-trace.bpf.o)
set(rig_trace_skeleton ${CMAKE_CURRENT_BINARY_DIR}/rig-trace.skel.h)
add_custom_command(
  OUTPUT ${rig_trace_object}
  COMMAND ${RIG_BPF_CLANG} -g -O2 -target bpf -D__TARGET_ARCH_${rig_bpf_arch} -I/usr/include/${rig_multiarch}
          -I${CMAKE_CURRENT_SOURCE_DIR} -c ${CMAKE_CURRENT_SOURCE_DIR}/rig-trace.bpf.c -o ${rig_trace_object}
  DEPENDS rig-trace.bpf.c rig-trace.h
  COMMENT "Compiling rig-trace's BPF programs")
add_custom_command(
  OUTPUT ${rig_trace_skeleton}
  COMMAND ${RIG_BPFTOOL} gen skeleton ${rig_trace_object} name rig_trace > ${rig_trace_skeleton}
  DEPENDS ${rig_trace_object}
  COMMENT "Making rig-trace's skeleton")

add_executable(rig_trace rig-trace.c ${rig_trace_skeleton})
set_target_properties(rig_trace PROPERTIES OUTPUT_NAME rig-trace)
target_include_directories(rig_trace PRIVATE ${CMAKE_CURRENT_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(rig_trace PRIVATE PkgConfig::RIG_LIBBPF)
install(TARGETS rig_trace RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR})
