// The part of the CUDA Driver API (cuda.h) that the CUDA driver uses,
// declared here so that rig builds without the CUDA toolkit and links no
// libcuda: the driver loads libcuda.so.1 with dlopen at its first open
// (cuda_api.cpp).  tests/gpu/cuda_api_check.cpp checks every type,
// constant, structure and function below against the toolkit's cuda.h
// where one is installed.
//
// Names differ from cuda.h's on purpose (kSuccess for CUDA_SUCCESS): cuda.h
// defines many of its names as macros, which would rewrite ours in a file
// that includes both.  Each function's symbol is the one cuda.h's macros
// call (cuMemAlloc is cuMemAlloc_v2), as of CUDA 12 and 13.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

// cuda.h's opaque handle types, named as cuda.h names them.
struct CUctx_st;
struct CUstream_st;
struct CUevent_st;
struct CUmod_st;
struct CUfunc_st;
struct CUarray_st;

namespace rig::cu {

using Result = int;                    // CUresult
using Device = int;                    // CUdevice
using DevicePtr = unsigned long long;  // CUdeviceptr on 64-bit hosts
using Context = CUctx_st *;
using Stream = CUstream_st *;
using Event = CUevent_st *;
using Module = CUmod_st *;
using Function = CUfunc_st *;
using Array = CUarray_st *;
using DeviceAttribute = int;    // CUdevice_attribute
using FunctionAttribute = int;  // CUfunction_attribute
using JitOption = int;          // CUjit_option
using MemoryType = int;         // CUmemorytype
using RangeHandleType = int;    // CUmemRangeHandleType

// CUctxCreateParams: no execution affinity, no CIG (all zero).
struct CtxCreateParams {
  void *execAffinityParams;
  int numExecAffinityParams;
  void *cigParams;
};

// CUDA_MEMCPY2D.
struct Memcpy2D {
  size_t srcXInBytes;
  size_t srcY;
  MemoryType srcMemoryType;
  const void *srcHost;
  DevicePtr srcDevice;
  Array srcArray;
  size_t srcPitch;
  size_t dstXInBytes;
  size_t dstY;
  MemoryType dstMemoryType;
  void *dstHost;
  DevicePtr dstDevice;
  Array dstArray;
  size_t dstPitch;
  size_t WidthInBytes;
  size_t Height;
};

// X(our name, cuda.h's name, value): every constant the driver uses.
#define RIG_CUDA_CONSTANTS(X)                                                                        \
  X(kSuccess, CUDA_SUCCESS, 0)                                                                       \
  X(kErrorInvalidValue, CUDA_ERROR_INVALID_VALUE, 1)                                                 \
  X(kErrorOutOfMemory, CUDA_ERROR_OUT_OF_MEMORY, 2)                                                  \
  X(kErrorDeinitialized, CUDA_ERROR_DEINITIALIZED, 4)                                                \
  X(kErrorDeviceUnavailable, CUDA_ERROR_DEVICE_UNAVAILABLE, 46)                                      \
  X(kErrorEccUncorrectable, CUDA_ERROR_ECC_UNCORRECTABLE, 214)                                       \
  X(kErrorNvlinkUncorrectable, CUDA_ERROR_NVLINK_UNCORRECTABLE, 220)                                 \
  X(kErrorNotFound, CUDA_ERROR_NOT_FOUND, 500)                                                       \
  X(kErrorNotReady, CUDA_ERROR_NOT_READY, 600)                                                       \
  X(kErrorIllegalAddress, CUDA_ERROR_ILLEGAL_ADDRESS, 700)                                           \
  X(kErrorLaunchTimeout, CUDA_ERROR_LAUNCH_TIMEOUT, 702)                                             \
  X(kErrorLaunchIncompatibleTexturing, CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, 703)                \
  X(kErrorPeerAccessAlreadyEnabled, CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, 704)                     \
  X(kErrorContextIsDestroyed, CUDA_ERROR_CONTEXT_IS_DESTROYED, 709)                                  \
  X(kErrorAssert, CUDA_ERROR_ASSERT, 710)                                                            \
  X(kErrorHostMemoryAlreadyRegistered, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, 712)               \
  X(kErrorHardwareStackError, CUDA_ERROR_HARDWARE_STACK_ERROR, 714)                                  \
  X(kErrorIllegalInstruction, CUDA_ERROR_ILLEGAL_INSTRUCTION, 715)                                   \
  X(kErrorMisalignedAddress, CUDA_ERROR_MISALIGNED_ADDRESS, 716)                                     \
  X(kErrorInvalidAddressSpace, CUDA_ERROR_INVALID_ADDRESS_SPACE, 717)                                \
  X(kErrorInvalidPc, CUDA_ERROR_INVALID_PC, 718)                                                     \
  X(kErrorLaunchFailed, CUDA_ERROR_LAUNCH_FAILED, 719)                                               \
  X(kErrorExternalDevice, CUDA_ERROR_EXTERNAL_DEVICE, 911)                                           \
  X(kErrorUnknown, CUDA_ERROR_UNKNOWN, 999)                                                          \
  X(kAttrMaxThreadsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1)                           \
  X(kAttrMaxBlockDimX, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 2)                                       \
  X(kAttrMaxBlockDimY, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 3)                                       \
  X(kAttrMaxBlockDimZ, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 4)                                       \
  X(kAttrMaxGridDimX, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 5)                                         \
  X(kAttrMaxGridDimY, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 6)                                         \
  X(kAttrMaxGridDimZ, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 7)                                         \
  X(kAttrMaxPitch, CU_DEVICE_ATTRIBUTE_MAX_PITCH, 11)                                                \
  X(kAttrKernelExecTimeout, CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT, 17)                             \
  X(kAttrCanMapHostMemory, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 19)                              \
  X(kAttrL2CacheSize, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 38)                                         \
  X(kAttrUnifiedAddressing, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 41)                              \
  X(kAttrComputeCapabilityMajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75)                   \
  X(kAttrComputeCapabilityMinor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76)                   \
  X(kAttrCanUseHostPointerForRegisteredMem, CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, \
    91)                                                                                              \
  X(kAttrMaxSharedMemoryPerBlockOptin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 97)    \
  X(kAttrHostRegisterSupported, CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED, 99)                     \
  X(kAttrCanUse64BitStreamMemOps, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 122)            \
  X(kAttrDmaBufSupported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 124)                                \
  X(kAttrHostNumaId, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 134)                                          \
  X(kFuncAttrMaxThreadsPerBlock, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0)                         \
  X(kFuncAttrSharedSizeBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 1)                                \
  X(kFuncAttrMaxDynamicSharedSizeBytes, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8)          \
  X(kMemHostAllocPortable, CU_MEMHOSTALLOC_PORTABLE, 0x01)                                           \
  X(kMemHostAllocDeviceMap, CU_MEMHOSTALLOC_DEVICEMAP, 0x02)                                         \
  X(kMemHostRegisterPortable, CU_MEMHOSTREGISTER_PORTABLE, 0x01)                                     \
  X(kMemHostRegisterDeviceMap, CU_MEMHOSTREGISTER_DEVICEMAP, 0x02)                                   \
  X(kMemoryTypeUnified, CU_MEMORYTYPE_UNIFIED, 0x04)                                                 \
  X(kStreamNonBlocking, CU_STREAM_NON_BLOCKING, 0x1)                                                 \
  X(kEventDisableTiming, CU_EVENT_DISABLE_TIMING, 0x2)                                               \
  X(kStreamWaitValueGeq, CU_STREAM_WAIT_VALUE_GEQ, 0x0)                                              \
  X(kStreamWriteValueDefault, CU_STREAM_WRITE_VALUE_DEFAULT, 0x0)                                    \
  X(kJitErrorLogBuffer, CU_JIT_ERROR_LOG_BUFFER, 5)                                                  \
  X(kJitErrorLogBufferSizeBytes, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, 6)                              \
  X(kLaunchParamEnd, CU_LAUNCH_PARAM_END_AS_INT, 0x00)                                               \
  X(kLaunchParamBufferPointer, CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT, 0x01)                          \
  X(kLaunchParamBufferSize, CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT, 0x02)                                \
  X(kMemRangeHandleTypeDmaBufFd, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0x1)

#define RIG_CUDA_CONSTANT(name, theirs, value) constexpr int name = value;
RIG_CUDA_CONSTANTS(RIG_CUDA_CONSTANT)
#undef RIG_CUDA_CONSTANT

// X(name, symbol, parameters): every function the driver requires, by the
// symbol cuda.h's macros call; each returns a Result.
#define RIG_CUDA_FUNCTIONS(X)                                                                        \
  X(cuInit, "cuInit", (unsigned int flags))                                                          \
  X(cuDriverGetVersion, "cuDriverGetVersion", (int *version))                                        \
  X(cuGetErrorName, "cuGetErrorName", (Result error, const char **text))                            \
  X(cuGetErrorString, "cuGetErrorString", (Result error, const char **text))                        \
  X(cuDeviceGetCount, "cuDeviceGetCount", (int *count))                                              \
  X(cuDeviceGet, "cuDeviceGet", (Device *device, int ordinal))                                       \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", (int *value, DeviceAttribute attribute, Device device)) \
  X(cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId", (char *bus, int length, Device device))              \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", (size_t *bytes, Device device))                         \
  X(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer", (int *can, Device device, Device peer))          \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (Context *context, Device device))         \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (Device device))                      \
  X(cuCtxGetCurrent, "cuCtxGetCurrent", (Context *context))                                          \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", (Context context))                                           \
  X(cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess", (Context peer, unsigned int flags))              \
  X(cuCtxDestroy, "cuCtxDestroy_v2", (Context context))                                              \
  X(cuCtxPopCurrent, "cuCtxPopCurrent_v2", (Context *context))                                       \
  X(cuStreamCreate, "cuStreamCreate", (Stream *stream, unsigned int flags))                          \
  X(cuStreamDestroy, "cuStreamDestroy_v2", (Stream stream))                                          \
  X(cuStreamQuery, "cuStreamQuery", (Stream stream))                                                 \
  X(cuStreamWaitEvent, "cuStreamWaitEvent", (Stream stream, Event event, unsigned int flags))        \
  X(cuStreamWaitValue64, "cuStreamWaitValue64_v2",                                                   \
    (Stream stream, DevicePtr address, uint64_t value, unsigned int flags))                          \
  X(cuStreamWriteValue64, "cuStreamWriteValue64_v2",                                                 \
    (Stream stream, DevicePtr address, uint64_t value, unsigned int flags))                          \
  X(cuStreamWriteValue32, "cuStreamWriteValue32_v2",                                                 \
    (Stream stream, DevicePtr address, uint32_t value, unsigned int flags))                          \
  X(cuEventCreate, "cuEventCreate", (Event *event, unsigned int flags))                              \
  X(cuEventDestroy, "cuEventDestroy_v2", (Event event))                                              \
  X(cuEventRecord, "cuEventRecord", (Event event, Stream stream))                                    \
  X(cuMemAlloc, "cuMemAlloc_v2", (DevicePtr *address, size_t bytes))                                 \
  X(cuMemFree, "cuMemFree_v2", (DevicePtr address))                                                  \
  X(cuMemHostAlloc, "cuMemHostAlloc", (void **host, size_t bytes, unsigned int flags))               \
  X(cuMemFreeHost, "cuMemFreeHost", (void *host))                                                    \
  X(cuMemHostRegister, "cuMemHostRegister_v2", (void *host, size_t bytes, unsigned int flags))       \
  X(cuMemHostUnregister, "cuMemHostUnregister", (void *host))                                        \
  X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2",                                       \
    (DevicePtr *address, void *host, unsigned int flags))                                            \
  X(cuMemcpyAsync, "cuMemcpyAsync", (DevicePtr dst, DevicePtr src, size_t bytes, Stream stream))    \
  X(cuMemcpy2DAsync, "cuMemcpy2DAsync_v2", (const Memcpy2D *copy, Stream stream))                    \
  X(cuMemsetD8Async, "cuMemsetD8Async", (DevicePtr dst, unsigned char value, size_t bytes, Stream stream)) \
  X(cuMemGetHandleForAddressRange, "cuMemGetHandleForAddressRange",                                  \
    (void *handle, DevicePtr address, size_t bytes, RangeHandleType type, unsigned long long flags)) \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx",                                                        \
    (Module * module, const void *image, unsigned int count, JitOption *options, void **values))     \
  X(cuModuleUnload, "cuModuleUnload", (Module module))                                               \
  X(cuModuleGetFunction, "cuModuleGetFunction", (Function * function, Module module, const char *name)) \
  X(cuFuncGetAttribute, "cuFuncGetAttribute", (int *value, FunctionAttribute attribute, Function function)) \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", (Function function, FunctionAttribute attribute, int value)) \
  X(cuLaunchKernel, "cuLaunchKernel",                                                                \
    (Function function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,               \
     unsigned int block_x, unsigned int block_y, unsigned int block_z, unsigned int shared_bytes,    \
     Stream stream, void **params, void **extra))

// Functions of newer drivers that the driver uses where present (null
// otherwise): the layout of a kernel's parameters (CUDA 12.4), the load
// of a function that lazy loading would defer to its first launch, and
// the creation of a context of rig's own (CUDA 12.5).
#define RIG_CUDA_OPTIONAL_FUNCTIONS(X)                                                               \
  X(cuCtxCreate, "cuCtxCreate_v4",                                                                   \
    (Context * context, CtxCreateParams *params, unsigned int flags, Device device))                 \
  X(cuFuncGetParamInfo, "cuFuncGetParamInfo",                                                        \
    (Function function, size_t index, size_t *offset, size_t *bytes))                                \
  X(cuFuncLoad, "cuFuncLoad", (Function function))

#define RIG_CUDA_TYPE(name, symbol, parameters) using name##_t = Result(*) parameters;
RIG_CUDA_FUNCTIONS(RIG_CUDA_TYPE)
RIG_CUDA_OPTIONAL_FUNCTIONS(RIG_CUDA_TYPE)
#undef RIG_CUDA_TYPE

// The loaded functions.
struct Api {
#define RIG_CUDA_MEMBER(name, symbol, parameters) name##_t name = nullptr;
  RIG_CUDA_FUNCTIONS(RIG_CUDA_MEMBER)
  RIG_CUDA_OPTIONAL_FUNCTIONS(RIG_CUDA_MEMBER)
#undef RIG_CUDA_MEMBER

  // "CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure".
  std::string describe(Result r) const;
};

// The API of libcuda.so.1, loaded and initialised (cuInit) at the first
// call, or nullptr with *why the reason: no libcuda.so.1, a symbol it
// lacks, or cuInit's error.  The answer holds for the life of the process.
const Api *load_api(std::string *why);

// True iff r leaves the context unusable (a sticky error, such as a
// kernel's trap): every later call in the context answers an error.
bool breaks_context(Result r);

}  // namespace rig::cu
