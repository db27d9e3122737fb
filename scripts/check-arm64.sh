#!/usr/bin/env bash
# make check-arm64: StageRack built for aarch64 (Raspberry Pi OS trixie 64-bit) with Debian 13's
# own Swift (swiftlang 6.0.x) and run, all under emulation on this x86_64 machine, which has
# no binfmt_misc: a trixie arm64 root (scripts/arm64/root.sh, cached under .build/arm64-root)
# run by qemu-aarch64-static under proot (scripts/arm64/lib.sh). Steps, each timed:
#   the release build of `stagerack` (scripts/arm64/build.sh; ~35-60 min the first time,
#   incremental afterwards), no LOAD segment both writable and executable (readelf -lW),
#   `stagerack validate` on every shipped rack and setlist, every shipped rack's demo
#   rendered there and compared with this machine's build (.build/release/stagerack) as
#   make check-trixie does (compare_demos: pure-Swift racks identical or within -120 dBFS;
#   synth, player, LV2: the RMS level within 0.5 dB), the flush-to-zero shim (FPCR.FZ)
#   compiled and run in the root.
# Unit tests: not run by default. Building them under emulation is a second build of every
# module with the test targets (another hour or more here, started beside the release build);
# ARM64_TESTS='a --filter' builds them and runs that filter. Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/trixie/lib.sh   # step, compare_demos
. scripts/arm64/lib.sh    # arm64_tools, in_arm64
HOST_BIN=${HOST_BIN:-.build/release/stagerack}
TESTS=${ARM64_TESTS:-none}
[[ $(id -u) -eq 0 ]] || { echo "check-arm64: needs root (mmdebstrap --mode=root makes the root)" >&2; exit 2; }
[[ -x $HOST_BIN ]] || { echo "check-arm64: no host build at $HOST_BIN: run swift build -c release --product stagerack" >&2; exit 2; }
command -v sox >/dev/null || { echo "check-arm64: sox is missing (the demos are compared with it): apt-get install sox" >&2; exit 2; }
command -v readelf >/dev/null || { echo "check-arm64: readelf is missing: apt-get install binutils" >&2; exit 2; }
total0=$(date +%s)
out=.build/check-arm64; mkdir -p "$out"; rm -rf "$out/host" "$out/arm64"

step "proot, qemu-aarch64-static, the seccomp launcher" arm64_tools
root=""
get_root() { root=$(scripts/arm64/root.sh); }
step "the trixie arm64 root (cached, made if stale)" get_root
swift_version() {
  ARM64_TIMEOUT=300 in_arm64 "$root" 'uname -m; swift --version 2>&1 | head -1; case "$(swift --version 2>&1)" in *"version 6.0"*) ;; *) echo "not Swift 6.0" >&2; exit 1;; esac'
}
step "Debian's Swift in the arm64 root is 6.0.x" swift_version
step "the source synced into the root" arm64_sync_source "$root"
# The test build starts beside the release build: with whole-module optimisation swift-build
# compiles one module at a time along the dependency chain, so one core is mostly idle.
tests_pid=""
if [[ $TESTS != none ]]; then
  # its watchdog: 3 h (beside the release build it had compiled 44 of 55 steps when 90 min ended it)
  ARM64_SYNCED=1 ARM64_BUILD_TIMEOUT=${ARM64_TESTS_BUILD_TIMEOUT:-10800} scripts/arm64/build.sh "$root" tests 2>"$out/build-tests.progress" &
  tests_pid=$!
  echo "the test build started beside the release build (its progress: $out/build-tests.progress)" >&2
fi
step "release build for aarch64 (emulated, -j ${ARM64_JOBS:-2})" env ARM64_SYNCED=1 scripts/arm64/build.sh "$root"
BIN=$root/work/build/release/stagerack

# The linker of Debian's swiftlang on aarch64 put code and data in one LOAD segment with RWX
# permissions (it warned); -z separate-code (build.sh) splits them.
no_rwx() {
  # file's output captured before it is searched (`| grep -q` fails at random under pipefail)
  local kind
  kind=$(file "$BIN")
  [[ $kind == *'ARM aarch64'* ]] || { echo "not an aarch64 executable: $kind" >&2; return 1; }
  readelf -lW "$BIN" | awk '$1 == "LOAD" || $1 == "GNU_STACK"' | tee "$out/segments.txt" >&2
  # the flags column is three letters wide (R, W, E or spaces): "RWE" is the only writable and executable form
  if grep -Eq ' RWE +0x[0-9a-f]+$' "$out/segments.txt"; then
    echo "a segment is writable and executable (RWE)" >&2; return 1
  fi
  ! grep -q 'LOAD segment with RWX' "$out/build.log" || { echo "the linker still warns about an RWX LOAD segment" >&2; return 1; }
  echo "no segment is both writable and executable" >&2
  # full RELRO, as make deb asks for (lld; GNU ld dropped the segment, see build.sh)
  local segments
  segments=$(readelf -lW "$BIN")
  [[ $segments == *GNU_RELRO* ]] || { echo "no GNU_RELRO segment" >&2; return 1; }
  echo "a GNU_RELRO segment" >&2
}
failed=""
step "readelf -lW: no RWX segment, a GNU_RELRO one" no_rwx || failed+="RWX segment or no RELRO; "

mapfile -t all_racks < <(find racks -name '*.json' | sort)
validate_all() {
  ARM64_TIMEOUT=1800 in_arm64 "$root" 'cd /work/stagerack && rc=0; n=0; for r in '"${all_racks[*]}"'; do n=$((n+1)); o=$(/work/build/release/stagerack validate "$r" 2>&1) || { rc=1; echo "FAIL $r: $o"; }; done; echo "$n racks and setlists validated under emulation"; exit $rc' >&2
}
step "stagerack validate, every shipped rack and setlist (arm64)" validate_all || failed+="validate; "

racks=(racks/*.json racks/lv2/*.json)
render_host() {
  local r n; mkdir -p "$out/host"
  for r in "${racks[@]}"; do
    n=$(basename "$r" .json)
    "$HOST_BIN" render "$r" --demo --output "$out/host/$n.wav" 2>"$out/host/$n.log" \
      || { echo "host render failed: $r"; cat "$out/host/$n.log"; return 1; } >&2
  done
}
render_arm64() {
  rm -rf "$root/tmp/demos"; mkdir -p "$root/tmp/demos" "$out/arm64"
  ARM64_TIMEOUT=3600 in_arm64 "$root" 'cd /work/stagerack && rc=0; for r in '"${racks[*]}"'; do n=$(basename $r .json); t0=$(date +%s); /work/build/release/stagerack render $r --demo --output /tmp/demos/$n.wav 2>/tmp/demos/$n.log || { echo "arm64 render failed: $r"; cat /tmp/demos/$n.log; rc=1; }; echo "  $n: $(( $(date +%s) - t0 )) s"; done; exit $rc' >&2
  local rc=$?
  cp "$root"/tmp/demos/* "$out/arm64/"
  return $rc
}
step "every rack's demo rendered, host build (${#racks[@]} racks)" render_host || failed+="host render; "
step "every rack's demo rendered, arm64 build (emulated)" render_arm64 || failed+="arm64 render; "
compare() {
  local rc=0
  compare_demos "$out/host" "$out/arm64" arm64 "${racks[@]}" 2>"$out/compare.txt" || rc=$?
  cat "$out/compare.txt" >&2
  return $rc
}
step "demos compared, host (x86_64) vs arm64" compare || failed+="demo comparison; "

# The flush-to-zero shim (Sources/CStageShim) as the binary links it, with the root's gcc:
# subnormals flushed through FPCR.FZ once enabled, not before (scripts/aarch64/ftz_check.c).
ftz() {
  mkdir -p "$root/tmp/ftz"
  cp scripts/aarch64/ftz_check.c Sources/CStageShim/stage_shim.c Sources/CStageShim/include/*.h "$root/tmp/ftz/"
  ARM64_TIMEOUT=600 in_arm64 "$root" 'cd /tmp/ftz && gcc -std=gnu11 -O2 -Wall -Werror -I . ftz_check.c stage_shim.c -o ftz_check && ./ftz_check' >&2
}
step "flush-to-zero shim (FPCR.FZ), compiled and run in the arm64 root" ftz || failed+="FTZ; "

run_tests() {
  if [[ $TESTS == none ]]; then
    echo "unit tests skipped: building the test targets under emulation is a second build of every module (an hour or more here); ARM64_TESTS='FILTER' runs them" >&2
    return 0
  fi
  local rc=0
  wait "$tests_pid" || rc=$?
  cat "$out/build-tests.progress" >&2
  ((rc == 0)) || { echo "the test build failed (.build/check-arm64/build-tests.log)" >&2; return $rc; }
  ARM64_TIMEOUT=${ARM64_TEST_TIMEOUT:-3600} ARM64_NICE=10 in_arm64 "$root" "cd /work/stagerack && swift test -c release --skip-build --scratch-path /work/build-tests --filter '$TESTS'" > "$out/unit-tests.log" 2>&1 || rc=$?
  grep -E ': error: |Fatal error|Executed [0-9]+ tests' "$out/unit-tests.log" | cut -c1-300 | tail -20 >&2 || true
  return $rc
}
step "unit tests (arm64): $TESTS" run_tests || failed+="unit tests (see $out/unit-tests.log); "

if [[ -n $failed ]]; then echo "check-arm64: FAILED: $failed" >&2; else echo "check-arm64: every step passed" >&2; fi
printf '  %s\n' "${STEP_TIMES[@]}" >&2
echo "  total: $(( $(date +%s) - total0 )) s" >&2
[[ -z $failed ]]
