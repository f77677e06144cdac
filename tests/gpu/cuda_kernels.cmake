# rig_cuda_kernels(TARGET DIR): a target that compiles tests/gpu/kernels/
# kernels.cu with nvcc (RIG_NVCC) into DIR/kernels.cubin (for sm_RIG_CUDA_ARCH)
# and DIR/kernels.ptx (for compute_RIG_CUDA_ARCH), which the CUDA suite and
# the GPU benchmarks load through rig at run time.
set(RIG_CUDA_ARCH 90 CACHE STRING "The compute capability the test kernels' cubin is for (90: H100, H200)")

function(rig_cuda_kernels target dir)
  set(source ${PROJECT_SOURCE_DIR}/tests/gpu/kernels/kernels.cu)
  add_custom_command(
    OUTPUT ${dir}/kernels.cubin ${dir}/kernels.ptx
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${RIG_NVCC} -cubin -arch=sm_${RIG_CUDA_ARCH} -o ${dir}/kernels.cubin ${source}
    COMMAND ${RIG_NVCC} -ptx -arch=compute_${RIG_CUDA_ARCH} -o ${dir}/kernels.ptx ${source}
    DEPENDS ${source}
    COMMENT "nvcc: the test kernels for sm_${RIG_CUDA_ARCH}, as a cubin and as PTX"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${dir}/kernels.cubin ${dir}/kernels.ptx)
endfunction()
