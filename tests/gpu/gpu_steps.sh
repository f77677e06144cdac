# The steps the GPU checks share (cuda.sh, amd.sh), sourced by them after
# they set: root (the tree), build (the build folder), jobs (parallel build
# jobs), script (the name their log and summary carry: "cuda", "amd").  Each step prints its name
# and outcome; record keeps the summary's lines; summary prints them and
# exits 1 if any step failed.
# shellcheck shell=bash
# root, build and script come from the sourcing script, which uses
# cmake_deps and results.
# shellcheck disable=SC2154,SC2034

tee_pid=
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  exec > >(tee "$OUT/$script.log") 2>&1
  tee_pid=$!
fi

results=()   # "PASS|FAIL|SKIP  STEP (detail)"
failed=0

step() {
  printf '\n==== %s ====\n' "$*"
}

# record NAME STATUS [DETAIL]: one line of the summary.
record() {
  local name=$1 status=$2 detail=${3:-}
  if [ "$status" -eq 0 ]; then
    results+=("PASS  $name${detail:+  ($detail)}")
    echo "---- $name: PASS${detail:+ ($detail)}"
  else
    results+=("FAIL  $name${detail:+  ($detail)}")
    echo "---- $name: FAIL${detail:+ ($detail)}"
    failed=1
  fi
}

# skipped NAME WHY: a step that has nothing to run here, which fails nothing.
skipped() {
  results+=("SKIP  $1  ($2)")
  echo "---- $1: SKIP ($2)"
}

summary() {
  step "summary"
  printf '%s\n' "${results[@]}"
  if [ "$failed" -eq 0 ]; then echo "$script.sh: all steps passed"; else echo "$script.sh: FAILED"; fi
  # The log is whole once tee has written the last line.
  if [ -n "$tee_pid" ]; then
    exec >&- 2>&-
    wait "$tee_pid"
  fi
  exit "$failed"
}

# ---- Dependencies from a prefix ------------------------------------------

run_env=()  # what tests and benchmarks run with
cmake_deps=()
if [ -n "${RIG_DEPS_PREFIX:-}" ]; then
  prefix=$(cd "$RIG_DEPS_PREFIX" && pwd)
  multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
  libs="$prefix/usr/lib/$multiarch:$prefix/lib/$multiarch"
  # The packages' .pc files name /usr: copies of them name the prefix.
  pc="$root/$build/deps-pkgconfig"
  mkdir -p "$pc"
  for f in "$prefix/usr/lib/$multiarch/pkgconfig"/*.pc "$prefix/usr/share/pkgconfig"/*.pc; do
    [ -e "$f" ] || continue
    sed -E "s#^(prefix|exec_prefix|libdir|includedir)=/usr#\\1=$prefix/usr#" "$f" > "$pc/$(basename "$f")"
  done
  export PKG_CONFIG_PATH="$pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export CPATH="$prefix/usr/include${CPATH:+:$CPATH}"
  export LIBRARY_PATH="$prefix/usr/lib/$multiarch${LIBRARY_PATH:+:$LIBRARY_PATH}"
  # The linker finds the libraries those libraries need there too; only
  # the tests and benchmarks run with them (the build tools keep the
  # machine's own).
  cmake_deps=(-DCMAKE_PREFIX_PATH="$prefix/usr"
              -DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath-link,$prefix/usr/lib/$multiarch:$prefix/lib/$multiarch")
  run_env=(env "LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  echo "$script.sh: dependencies from $prefix"
fi

# ---- Steps -----------------------------------------------------------------

# build_rig SUITE NEEDED CMAKE_ARG...: step 1 of every GPU check: the
# release preset configured in $build, warnings not fatal (a newer
# compiler's new warnings must not stop the checks; CI holds -Werror), with
# the CMAKE_ARGs; every target built, going on past one that fails, so that
# a target the checks do not need cannot stop them; each path of NEEDED
# (under $build, space-separated) that is missing recorded.  The run ends
# where rig or SUITE is missing.
build_rig() {
  local suite=$1 needed f
  read -r -d "" -a needed <<< "$2" || true
  shift 2
  step "1. configure and build ($build)"
  cmake --preset release -B "$build" -DRIG_WERROR=OFF "$@" "${cmake_deps[@]}"
  record "configure" $?
  [ "$failed" -eq 0 ] || summary
  cmake --build "$build" -j "$jobs" -- -k 0
  record "build (every target)" $?
  for f in "${needed[@]}"; do
    [ -e "$build/$f" ] || record "built $f" 1 "missing"
  done
  if [ ! -x "$build/tools/rig" ] || [ ! -x "$build/$suite" ]; then summary; fi
}

# device_opens NAME: `rig devices` lists NAME available, or the run ends.
device_opens() {
  local name=$1 listing
  "${run_env[@]}" "$build/tools/rig" devices
  listing=$("${run_env[@]}" "$build/tools/rig" devices --json)
  if grep -q "\"name\": \"$name\", \"available\": true" <<< "$listing"; then
    record "$name opens" 0
  else
    record "$name opens" 1 "$(grep "\"$name\"" <<< "$listing" || echo "$name not listed")"
    summary
  fi
}

# run_suite NAME TIMEOUT COMMAND...: a Criterion suite, its per-test lines
# shown and its counts in the summary.
run_suite() {
  local name=$1 limit=$2
  shift 2
  local log
  log=$(mktemp)
  timeout "$limit" "${run_env[@]}" "$@" --jobs 1 --verbose 2>&1 | tee "$log" | grep -v '^\[RUN \]'
  local status=${PIPESTATUS[0]}
  local counts
  counts=$(grep -o 'Tested: [0-9]* | Passing: [0-9]* | Failing: [0-9]* | Crashing: [0-9]*' "$log" | tail -1)
  local skipped
  skipped=$(grep -c '^\[SKIP\]' "$log")
  [ "$status" -eq 124 ] && counts="timed out after $limit s; $counts"
  rm -f "$log"
  record "$name" "$status" "${counts:-no counts}, skipped $skipped"
}

# conformance_on DEVICES: every conformance suite on RIG_TEST_DEVICES=DEVICES.
conformance_on() {
  local suite
  for suite in "$build"/tests/conformance_test_*; do
    run_suite "conformance $(basename "$suite")" 90 env RIG_TEST_DEVICES="$1" "$suite"
  done
}

# load_onto DEVICE: `rig load` of a 96 MiB file into DEVICE's memory through
# the io device DISK, verified.
load_onto() {
  local file
  file=$(mktemp -p /var/tmp)
  head -c $((96 << 20)) /dev/urandom > "$file"
  timeout 120 "${run_env[@]}" "$build/tools/rig" load "$file" --device "$1" --offset 4K --verify
  record "rig load onto $1" $?
  rm -f "$file"
}

# device_checks DEVICE SUITE_NAME SUITE: steps 4 to 6 of every GPU check:
# conformance on DEVICE,MEM:0, the driver's suite SUITE with every test
# required to run, and `rig load` of a file into DEVICE's memory.
device_checks() {
  local device=$1 name=$2 suite=$3
  step "4. conformance on $device,MEM:0"
  conformance_on "$device,MEM:0"
  step "5. the $name suite"
  run_suite "$name suite" 150 env RIG_GPU_REQUIRED=1 "$suite"
  step "6. rig load FILE --device $device --verify"
  load_onto "$device"
}
