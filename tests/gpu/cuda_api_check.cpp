// Checks drivers/cuda/cuda_api.h against the CUDA toolkit's cuda.h at
// compile time: each function's symbol is the one cuda.h's macros name
// (cuMemAlloc is cuMemAlloc_v2), each function's type takes and returns
// what cuda.h's does (an enum of cuda.h and our int count as one where
// their sizes agree), each constant has cuda.h's value, and Memcpy2D lays
// out as CUDA_MEMCPY2D.  The build compiles it where cuda.h is found; a
// mismatch fails the build.
//
// Our header comes first, so that its names are declared before cuda.h's
// macros could rewrite them.
#include "../../drivers/cuda/cuda_api.h"

#include <cuda.h>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace {

// True iff a value of T passes where cuda.h passes one of U.
template <class T, class U>
constexpr bool same_abi() {
  if constexpr (std::is_same_v<T, U>) {
    return true;
  } else if constexpr (std::is_pointer_v<T> && std::is_pointer_v<U>) {
    using PT = std::remove_pointer_t<T>;
    using PU = std::remove_pointer_t<U>;
    if constexpr (std::is_const_v<PT> != std::is_const_v<PU>) {
      return false;
    } else {
      using A = std::remove_cv_t<PT>;
      using B = std::remove_cv_t<PU>;
      // Structures are compared field by field below.
      if constexpr (std::is_class_v<A> && std::is_class_v<B>)
        return sizeof(A) == sizeof(B);
      else
        return same_abi<A, B>();
    }
  } else if constexpr ((std::is_enum_v<T> && std::is_integral_v<U>) || (std::is_integral_v<T> && std::is_enum_v<U>)) {
    return sizeof(T) == sizeof(U);
  } else {
    return false;
  }
}

template <class F, class G>
struct same_function : std::false_type {};
template <class R, class... A, class S, class... B>
struct same_function<R (*)(A...), S (*)(B...)> {
  static constexpr bool value = [] {
    if constexpr (sizeof...(A) != sizeof...(B))
      return false;
    else
      return same_abi<R, S>() && (same_abi<A, B>() && ...);
  }();
};

#define RIG_STRINGIFY_(x) #x
#define RIG_STRINGIFY(x) RIG_STRINGIFY_(x)

// name expands to the function cuda.h's macros call; name##_t does not.
#define CHECK_FUNCTION(name, symbol, parameters)                                                  \
  static_assert(same_function<decltype(&name), rig::cu::name##_t>::value,                         \
                "cuda_api.h declares " #name " unlike cuda.h");                                    \
  static_assert(std::string_view(symbol) == RIG_STRINGIFY(name),                                  \
                "cuda_api.h loads " #name " as " symbol ", cuda.h calls " RIG_STRINGIFY(name));
RIG_CUDA_FUNCTIONS(CHECK_FUNCTION)
RIG_CUDA_OPTIONAL_FUNCTIONS(CHECK_FUNCTION)

#define CHECK_CONSTANT(name, theirs, value) \
  static_assert(rig::cu::name == static_cast<int>(theirs), "cuda_api.h's " #name " is not cuda.h's " #theirs);
RIG_CUDA_CONSTANTS(CHECK_CONSTANT)

static_assert(sizeof(rig::cu::DevicePtr) == sizeof(CUdeviceptr) && std::is_same_v<rig::cu::DevicePtr, CUdeviceptr>);
static_assert(std::is_same_v<rig::cu::Device, CUdevice>);
static_assert(sizeof(rig::cu::Result) == sizeof(CUresult));
static_assert(std::is_same_v<rig::cu::Context, CUcontext> && std::is_same_v<rig::cu::Stream, CUstream> &&
              std::is_same_v<rig::cu::Event, CUevent> && std::is_same_v<rig::cu::Module, CUmodule> &&
              std::is_same_v<rig::cu::Function, CUfunction> && std::is_same_v<rig::cu::Array, CUarray>);

static_assert(sizeof(rig::cu::CtxCreateParams) == sizeof(CUctxCreateParams) &&
              offsetof(rig::cu::CtxCreateParams, execAffinityParams) ==
                  offsetof(CUctxCreateParams, execAffinityParams) &&
              offsetof(rig::cu::CtxCreateParams, numExecAffinityParams) ==
                  offsetof(CUctxCreateParams, numExecAffinityParams) &&
              offsetof(rig::cu::CtxCreateParams, cigParams) == offsetof(CUctxCreateParams, cigParams),
              "CtxCreateParams lies unlike CUctxCreateParams");

static_assert(sizeof(rig::cu::Memcpy2D) == sizeof(CUDA_MEMCPY2D));
#define CHECK_FIELD(field)                                                                      \
  static_assert(offsetof(rig::cu::Memcpy2D, field) == offsetof(CUDA_MEMCPY2D, field) &&         \
                    sizeof(rig::cu::Memcpy2D::field) == sizeof(CUDA_MEMCPY2D::field),           \
                "Memcpy2D::" #field " lies unlike CUDA_MEMCPY2D's");
CHECK_FIELD(srcXInBytes)
CHECK_FIELD(srcY)
CHECK_FIELD(srcMemoryType)
CHECK_FIELD(srcHost)
CHECK_FIELD(srcDevice)
CHECK_FIELD(srcArray)
CHECK_FIELD(srcPitch)
CHECK_FIELD(dstXInBytes)
CHECK_FIELD(dstY)
CHECK_FIELD(dstMemoryType)
CHECK_FIELD(dstHost)
CHECK_FIELD(dstDevice)
CHECK_FIELD(dstArray)
CHECK_FIELD(dstPitch)
CHECK_FIELD(WidthInBytes)
CHECK_FIELD(Height)

}  // namespace
