#!/usr/bin/env bash
# The GPU checks of the CUDA driver, in one run on a machine with an NVIDIA
# GPU, the CUDA driver and the CUDA toolkit (nvcc):
#   1. configure and build rig: the release preset in its own build folder,
#      every target, going on past one that fails to build (the checks need
#      only some), warnings not fatal (a newer compiler's new warnings must
#      not stop the checks; CI holds -Werror);
#   2. check that CUDA:0 opens (`rig devices`): a CUDA:0 that does not open
#      fails the run here, loudly;
#   3. the check of drivers/cuda/cuda_api.h against cuda.h, and the
#      gpu-absent suite (which skips itself where CUDA:0 opens);
#   4. the conformance suite on CUDA:0 and MEM:0 (RIG_TEST_DEVICES);
#   5. the CUDA suite (tests/gpu/test_cuda.c), every test required to run;
#   6. `rig load` of a file into CUDA:0's memory through the io device DISK;
#   7. the GPU benchmarks (bench/gpu/bench_cuda.c), rig beside raw CUDA,
#      a stream of launches through a rigd serving CUDA:0 among them;
#   8. rigd serving CUDA:0 to two users' processes (tests/gpu/rigd_cuda.c):
#      one user's kernels overlapping, a context per user, a trap losing
#      that user's clients alone, a new client admitted at once, memory
#      per context and the client's RSS (run as root: the second user is
#      nobody).
# It prints each step's name and outcome, the suites' pass/fail counts and
# the benchmarks' ratios, then a summary; it exits 1 if any step failed.
# It takes a few minutes (under 8 on 16 cores).
#
# Environment:
#   RIG_DEPS_PREFIX  a folder of Debian packages unpacked with dpkg -x
#                    (tests/gpu/fetch-deps.sh), for a machine that lacks
#                    rig's -dev packages (liburing, libnuma, criterion)
#   OUT              where set, the whole log is also written to $OUT/cuda.log
#   BUILD            the build folder (default build/gpu)
#   RIG_CUDA_ARCH    the compute capability of the test kernels' cubin
#                    (default: nvidia-smi's for GPU 0, else 90)
#   JOBS             parallel build jobs (default: the cores)
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build/gpu}
jobs=${JOBS:-$(nproc)}

script=cuda
# shellcheck source=tests/gpu/gpu_steps.sh
. "$root/tests/gpu/gpu_steps.sh"

export PATH="$PATH:/usr/local/cuda/bin"

# ---- 0. The machine ------------------------------------------------------

step "0. the machine"
uname -a
nvidia-smi --query-gpu=index,name,compute_cap,driver_version,pci.bus_id,memory.total --format=csv 2>&1 || true
nvcc --version 2>&1 | tail -2 || true
cmake --version | head -1
arch=${RIG_CUDA_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null | tr -d '.[:space:]')}
arch=${arch:-90}
echo "test kernels for sm_$arch"

# ---- 1. Build --------------------------------------------------------------

build_rig tests/gpu/gpu_test_cuda \
  "tools/rig tests/gpu/gpu_test_cuda tests/gpu/gpu_test_cuda_absent tests/gpu/gpu_rigd_cuda bench/gpu/bench_cuda
   tests/conformance_test_buffers" \
  -DRIG_CUDA_ARCH="$arch"

# ---- 2. CUDA:0 opens -----------------------------------------------------

step "2. rig devices"
device_opens CUDA:0

# ---- 3. The cuda.h check and the gpu-absent suite ------------------------

step "3. cuda_api.h against cuda.h; the gpu-absent suite"
ctest --test-dir "$build" -R '^gpu_cuda_api_check$' --output-on-failure
record "cuda_api.h matches cuda.h" $?
run_suite "gpu-absent suite (skips where CUDA:0 opens)" 60 "$build/tests/gpu/gpu_test_cuda_absent"

# ---- 4 to 6. Conformance, the CUDA suite, a file into GPU memory ---------

device_checks CUDA:0 CUDA "$build/tests/gpu/gpu_test_cuda"

# ---- 7. Benchmarks ---------------------------------------------------------

step "7. bench_cuda (rig beside raw CUDA, and through rigd)"
blog=$(mktemp)
rigd_dir=$(mktemp -d)
"${run_env[@]}" "$build/service/rigd" --socket "$rigd_dir/rigd.sock" --devices CUDA:0 --foreground &
rigd_pid=$!
for _ in $(seq 100); do [ -S "$rigd_dir/rigd.sock" ] && break; sleep 0.1; done
timeout 240 "${run_env[@]}" env RIG_SERVICE="$rigd_dir/rigd.sock" "$build/bench/gpu/bench_cuda" 2>&1 | tee "$blog"
status=${PIPESTATUS[0]}
kill "$rigd_pid" 2>/dev/null
wait "$rigd_pid" 2>/dev/null
rm -rf "$rigd_dir"
record "bench_cuda" "$status"
echo
echo "ratios:"
grep '^ratio ' "$blog"
while read -r line; do results+=("      $line"); done < <(grep '^ratio ' "$blog")
rm -f "$blog"

# ---- 8. rigd serving CUDA:0 to two users -----------------------------------

step "8. rigd serving CUDA:0 (cuda_contexts = per_user) to two users"
rlog=$(mktemp)
timeout 180 "${run_env[@]}" "$build/tests/gpu/gpu_rigd_cuda" "$build/service/rigd" "$build/tests/gpu/kernels" 2>&1 |
  tee "$rlog"
record "rigd serving CUDA:0" "${PIPESTATUS[0]}" "$(grep -c 'check .*: PASS' "$rlog") checks passed, $(grep -c 'check .*: FAIL' "$rlog") failed"
while read -r line; do results+=("      $line"); done < <(grep -E '^(check |ratio |gpu_memory|client_rss)' "$rlog")
rm -f "$rlog"

summary
