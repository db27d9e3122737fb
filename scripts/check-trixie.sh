#!/usr/bin/env bash
# make check-trixie: StageRack built and tested with Debian 13's own Swift (swiftlang 6.0.x) in
# a Debian 13 root (scripts/trixie/root.sh, cached under .build/trixie-build), and every shipped
# rack's demo rendered there and compared with this machine's build (.build/release/stagerack):
#   pure-Swift racks (no synth, no player, no LV2 plugin): the difference at most -120 dBFS;
#   racks with the synth (FluidSynth), the player (libsndfile's Ogg decoder) or an LV2 plugin
#   (C libraries of other versions in trixie): the level (RMS) within 0.5 dB.
# Prints each step's time. Run as root (chroot).
# Environment: TRIXIE_TESTS=all (default) | none | a swift test --filter expression.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/trixie/lib.sh
HOST_BIN=${HOST_BIN:-.build/release/stagerack}
TESTS=${TRIXIE_TESTS:-all}
[[ $(id -u) -eq 0 ]] || { echo "check-trixie: needs root (chroot into the trixie root)" >&2; exit 2; }
[[ -x $HOST_BIN ]] || { echo "check-trixie: no host build at $HOST_BIN: run swift build -c release --product stagerack" >&2; exit 2; }
command -v sox >/dev/null || { echo "check-trixie: sox is missing (the demos are compared with it): apt-get install sox" >&2; exit 2; }
total0=$(date +%s)
trap 'trixie_umount_all' EXIT INT TERM
out=.build/check-trixie; rm -rf "$out"; mkdir -p "$out"

root=""
get_root() { root=$(scripts/trixie/root.sh build); }
step "the trixie root (cached, made if stale)" get_root
trixie_mount "$root"
swift_version() {
  in_root "$root" 'swift --version 2>&1 | head -1; case "$(swift --version 2>&1)" in *"version 6.0"*) ;; *) echo "not Swift 6.0" >&2; exit 1;; esac'
}
step "Debian's Swift in the root is 6.0.x" swift_version
step "the source copied into the root (/work/stagerack)" copy_source "$root/work/stagerack"
# The build directory stays in the root between runs (/work/build): later runs are incremental.
# With the tests, as `swift test -c release` builds them (a build without them compiles
# every module again with other flags, and the test run would then do it once more).
build_release() {
  in_root "$root" 'cd /work/stagerack && nice -n 10 swift build -c release --build-tests --scratch-path /work/build > /tmp/build.log 2>&1; rc=$?; grep -E "error:|Build complete" /tmp/build.log | sort -u | tail -20; exit $rc'
}
step "release build with the tests, Swift 6.0 (trixie)" build_release
# The whole log in .build/check-trixie/unit-tests.log; the failures and the summary printed.
run_tests() {
  local filter=""
  case $TESTS in
    none) echo "unit tests skipped (TRIXIE_TESTS=none)" >&2; return 0 ;;
    all) ;;
    *) filter="--filter '$TESTS'" ;;
  esac
  in_root "$root" "cd /work/stagerack && nice -n 10 swift test -c release --skip-build --scratch-path /work/build $filter > /tmp/unit-tests.log 2>&1; echo \$? > /tmp/unit-tests.rc"
  cp "$root/tmp/unit-tests.log" "$out/unit-tests.log"
  grep -E ': error: |Fatal error|crashed|Executed [0-9]+ tests.*with [1-9]' "$out/unit-tests.log" | cut -c1-300 | head -30 >&2 || true
  grep -E '^\s*Executed [0-9]+ tests' "$out/unit-tests.log" | tail -1 >&2 || true
  return "$(cat "$root/tmp/unit-tests.rc")"
}
failed=""
step "unit tests with Swift 6.0 (trixie): $TESTS" run_tests || failed+="unit tests (see $out/unit-tests.log); "

mkdir -p "$out/host" "$root/tmp/demos"
racks=(racks/*.json racks/lv2/*.json)
render_host() {
  local r
  for r in "${racks[@]}"; do
    "$HOST_BIN" render "$r" --demo --output "$out/host/$(basename "$r" .json).wav" 2>"$out/host/$(basename "$r" .json).log" \
      || { echo "host render failed: $r"; cat "$out/host/$(basename "$r" .json).log"; return 1; }
  done
}
render_trixie() {
  in_root "$root" 'cd /work/stagerack && for r in '"${racks[*]}"'; do n=$(basename $r .json); /work/build/release/stagerack render $r --demo --output /tmp/demos/$n.wav 2>/tmp/demos/$n.log || { echo "trixie render failed: $r"; cat /tmp/demos/$n.log; exit 1; }; done'
  mkdir -p "$out/trixie"; cp "$root"/tmp/demos/* "$out/trixie/"
}
step "every rack's demo rendered, host build (${#racks[@]} racks)" render_host
step "every rack's demo rendered, trixie build" render_trixie

# compare_demos (scripts/trixie/lib.sh): measured with sox, never hashed.
compare() { compare_demos "$out/host" "$out/trixie" trixie "${racks[@]}"; }
step "demos compared, host vs trixie" compare || failed+="demo comparison; "

if [[ -n $failed ]]; then echo "check-trixie: FAILED: $failed" >&2; else echo "check-trixie: every step passed" >&2; fi
printf '  %s\n' "${STEP_TIMES[@]}" >&2
echo "  total: $(( $(date +%s) - total0 )) s" >&2
[[ -z $failed ]]
