# rig_install_runpath(TARGET BINDIR): the installed TARGET, a program that
# goes in BINDIR, finds librig under its own prefix ($ORIGIN/../lib), so a
# prefix install (cmake --install --prefix X) runs without
# LD_LIBRARY_PATH.  Not for the system prefix /usr, where ld.so finds the
# library and distributions refuse a RUNPATH.
function(rig_install_runpath target bindir)
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr" OR IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${bindir}")
    return()
  endif()
  file(RELATIVE_PATH to_lib /prefix/${bindir} /prefix/${CMAKE_INSTALL_LIBDIR})
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "$ORIGIN/${to_lib}")
endfunction()
