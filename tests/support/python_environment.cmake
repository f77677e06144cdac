# rig_python_sanitizer_environment(OUT): the environment a python process
# needs to load a sanitized librig, in OUT (empty in plain builds).  The
# sanitizer's runtime must load first into the python process, which is not
# built with it, and libstdc++ with it so that the runtime finds the
# __cxa_throw it intercepts (librig throws inside itself).  Python's own
# allocations are not ours to check.
function(rig_python_sanitizer_environment out)
  set(environment "")
  if(RIG_SANITIZE)
    if(RIG_SANITIZE STREQUAL "address")
      set(runtime libasan.so)
    else()
      set(runtime libtsan.so)
    endif()
    set(preload "")
    foreach(library ${runtime} libstdc++.so)
      execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${library}
                      OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE)
      string(APPEND preload "${path}:")
    endforeach()
    set(environment "LD_PRELOAD=${preload}")
    if(RIG_SANITIZE STREQUAL "address")
      list(APPEND environment "ASAN_OPTIONS=detect_leaks=0")
    endif()
  endif()
  set(${out} "${environment}" PARENT_SCOPE)
endfunction()
