#!/usr/bin/env bash
# The GPU checks of the ROCr driver, in one run on a machine with an AMD GPU,
# the amdgpu kernel driver and ROCm (libhsa-runtime64.so.1, rocminfo, and
# ROCm's clang, or a clang that targets amdgcn with ld.lld):
#   1. configure and build rig: the release preset in its own build folder,
#      every target, going on past one that fails to build (the checks need
#      only some), warnings not fatal (a newer compiler's new warnings must
#      not stop the checks; CI holds -Werror); the ROCr suite's code object
#      (tests/gpu/kernels/rocr_kernels.cl) is compiled for the GPU's gfx
#      target (RIG_AMD_ARCH) by that clang, -target amdgcn-amd-amdhsa;
#   2. check that AMD:0 opens (`rig devices`): an AMD:0 that does not open
#      fails the run here, loudly;
#   3. the gpu-absent suite of the ROCr driver (which skips itself where
#      AMD:0 opens);
#   4. the conformance suite on AMD:0 and MEM:0 (RIG_TEST_DEVICES);
#   5. the ROCr suite (tests/gpu/test_rocr.c), every test required to run:
#      a code object's kernel launched, copies, waits with a memory and a
#      simulated device, a trapping kernel losing the device;
#   6. `rig load` of a file into AMD:0's memory through the io device DISK;
#   7. the ROCr benchmarks beside raw HSA (bench/gpu/bench_rocr), where
#      bench/ has them; bench/ has none yet, and the step says so.
# It prints each step's name and outcome, the suites' pass/fail counts and
# the benchmarks' ratios, then a summary; it exits 1 if any step failed.
#
# Environment:
#   RIG_DEPS_PREFIX  a folder of Debian packages unpacked with dpkg -x
#                    (tests/gpu/fetch-deps.sh), for a machine that lacks
#                    rig's -dev packages (liburing, libnuma, criterion)
#   OUT              where set, the whole log is also written to $OUT/amd.log
#   BUILD            the build folder (default build/amd)
#   RIG_AMD_ARCH     the gfx target of the suite's code object (default:
#                    rocminfo's first GPU agent, else gfx90a)
#   ROCM_PATH        where ROCm lies (default /opt/rocm)
#   JOBS             parallel build jobs (default: the cores)
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build/amd}
jobs=${JOBS:-$(nproc)}
rocm=${ROCM_PATH:-/opt/rocm}

script=amd
# shellcheck source=tests/gpu/gpu_steps.sh
. "$root/tests/gpu/gpu_steps.sh"

export PATH="$PATH:$rocm/bin:$rocm/llvm/bin"

# ---- 0. The machine ------------------------------------------------------

step "0. the machine"
uname -a
rocminfo 2>&1 | grep -E '^ *(Marketing Name|Name):' || true
rocm-smi --showproductname --showmeminfo vram 2>&1 || true
cmake --version | head -1
# The GPU agents' names are gfx targets; the CPU agents' are not.
arch=${RIG_AMD_ARCH:-$(rocminfo 2>/dev/null | grep -oE '^ *Name: *gfx[0-9a-f]+' | head -1 | grep -oE 'gfx[0-9a-f]+')}
arch=${arch:-gfx90a}
clang_args=()
if [ -x "$rocm/llvm/bin/clang" ]; then clang_args=(-DRIG_AMDGCN_CLANG="$rocm/llvm/bin/clang"); fi
echo "the suite's code object for $arch"

# ---- 1. Build --------------------------------------------------------------

build_rig tests/gpu/gpu_test_rocr \
  "tools/rig tests/gpu/gpu_test_rocr tests/gpu/gpu_test_rocr_absent tests/gpu/rocr_kernels/kernels.hsaco
   tests/conformance_test_buffers" \
  -DRIG_AMD_ARCH="$arch" "${clang_args[@]}"

# ---- 2. AMD:0 opens ------------------------------------------------------

step "2. rig devices"
device_opens AMD:0

# ---- 3. The gpu-absent suite -----------------------------------------------

step "3. the gpu-absent suite of the ROCr driver"
run_suite "gpu-absent suite (skips where AMD:0 opens)" 60 "$build/tests/gpu/gpu_test_rocr_absent"

# ---- 4 to 6. Conformance, the ROCr suite, a file into GPU memory ---------

device_checks AMD:0 ROCr "$build/tests/gpu/gpu_test_rocr"

# ---- 7. Benchmarks ---------------------------------------------------------

step "7. bench_rocr (rig beside raw HSA)"
if [ -x "$build/bench/gpu/bench_rocr" ]; then
  blog=$(mktemp)
  timeout 240 "${run_env[@]}" "$build/bench/gpu/bench_rocr" 2>&1 | tee "$blog"
  record "bench_rocr" "${PIPESTATUS[0]}"
  echo
  echo "ratios:"
  grep '^ratio ' "$blog"
  while read -r line; do results+=("      $line"); done < <(grep '^ratio ' "$blog")
  rm -f "$blog"
else
  skipped "bench_rocr" "bench/gpu has no ROCr benchmark"
fi

summary
