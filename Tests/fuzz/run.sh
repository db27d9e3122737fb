#!/usr/bin/env bash
# Coverage-guided fuzzing of StageRack's readers with libFuzzer (`make fuzz`, run by
# `make test`): six targets built with -sanitize=fuzzer,address in their own package
# (Tests/fuzz/Package.swift, so the release build never sees them):
#   rack        the JSON5 reader, rack and setlist validation, the graph, the MIDI mappings
#   midi-file   the Standard MIDI File reader
#   midi-bytes  the MIDI byte parser, its messages through a rack's mappings
#   audio-file  audio-file input (libsndfile, then the resampler)
#   remote      OSC datagrams (liblo, the address space) and the web page's JSON requests
#   sync        datagrams on the sync port between boxes (liblo, the HMAC, the payload)
# (lld links them: gold trips over the sanitizer runtime's debug info.)
# Each runs for FUZZ_SECONDS (default 20) from a seed corpus: the fixtures
# (Tests/Fixtures: racks, setlists, Tests/Fixtures/fuzz/seeds/TARGET) and every saved
# crasher (Tests/Fixtures/fuzz/crashers/TARGET, also run by the XCTest suites). An input
# slower than FUZZ_TIMEOUT seconds (default 5) counts as a hang. A crash or hang fails the
# run and is saved under out/fuzz/TARGET/; keep it as a regression fixture with
#   cp out/fuzz/TARGET/crash-* Tests/Fixtures/fuzz/crashers/TARGET/
# Usage: Tests/fuzz/run.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
seconds=${FUZZ_SECONDS:-20}
timeout=${FUZZ_TIMEOUT:-5}
all=(rack midi-file midi-bytes audio-file remote sync)
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")
# Targets whose known crashes are fixed on another branch: their findings are reported but
# do not fail the run (empty once every fix is merged).
# Targets with a crasher listed in Tests/Fixtures/fuzz/crashers/OPEN (a fix pending on
# another branch): their findings are reported but do not fail the run, and they run in
# fork mode so that every distinct crash is collected, not only the first.
known_open=${FUZZ_KNOWN_OPEN-$( (grep -v '^#' Tests/Fixtures/fuzz/crashers/OPEN 2>/dev/null || true) | cut -d/ -f1 | sort -u | tr '\n' ' ')}

mkdir -p "$root/.build"
started=$(date +%s)
swift=${SWIFT:-swift}
echo "fuzz: building the targets (-sanitize=fuzzer,address)"
"$swift" build -c release --package-path Tests/fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld >"$root/.build/fuzz-build.log" 2>&1 \
  || { cat "$root/.build/fuzz-build.log" >&2; echo "fuzz: build failed" >&2; exit 1; }
bin=$("$swift" build -c release --package-path Tests/fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld --show-bin-path)
built=$(date +%s)

seed_dirs() {
  local t=$1 d
  local dirs=("Tests/Fixtures/fuzz/seeds/$t" "Tests/Fixtures/fuzz/crashers/$t")
  case $t in
    rack) dirs+=(Tests/Fixtures/racks/valid Tests/Fixtures/racks/invalid Tests/Fixtures/setlists racks) ;;
    midi-bytes) dirs+=(Tests/Fixtures/fuzz/seeds/midi-file) ;;
  esac
  for d in "${dirs[@]}"; do [[ -d $d ]] && echo "$d"; done
  return 0
}

failed=()
open_found=()
for t in "${targets[@]}"; do
  corpus=$root/.build/fuzz-corpus/$t    # grows from run to run (not in git)
  artifacts=$root/out/fuzz/$t
  mkdir -p "$corpus" "$artifacts"
  rm -f "$artifacts"/crash-* "$artifacts"/timeout-* "$artifacts"/oom-* "$artifacts"/leak-*
  dict=()
  [[ -f Tests/fuzz/$t.dict ]] && dict=(-dict="Tests/fuzz/$t.dict")
  mapfile -t seeds < <(seed_dirs "$t")
  t0=$(date +%s)
  mode=()
  [[ " $known_open " == *" $t "* ]] && mode=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  set +e
  # The Swift backtracer is off: ASan flags its memory reads; libFuzzer prints the stack.
  SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 \
    "$bin/fuzz-$t" "$corpus" "${seeds[@]}" "${dict[@]}" "${mode[@]}" -max_total_time="$seconds" -timeout="$timeout" \
    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/" \
    >"$artifacts/log.txt" 2>&1
  rc=$?
  set -e
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$artifacts/log.txt" | tail -1)
  found=$(find "$artifacts" -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' | wc -l)
  echo "fuzz: $t: ${runs:-?} inputs in $(( $(date +%s) - t0 )) s, exit $rc, $found inputs that crash or hang"
  if ((rc != 0 || found > 0)); then
    grep -E "^==[0-9]+==ERROR|^SUMMARY|Fatal error|ALARM|Test unit written" "$artifacts/log.txt" | head -8 >&2 || true
    if [[ " $known_open " == *" $t "* ]]; then open_found+=("$t"); else failed+=("$t"); fi
  fi
done
echo "fuzz: ${#targets[@]} targets in $(( $(date +%s) - started )) s (build $(( built - started )) s, fuzzing $(( $(date +%s) - built )) s)"
((${#open_found[@]} == 0)) || echo "fuzz: known open (fixed on another branch): ${open_found[*]}; see out/fuzz/" >&2
if ((${#failed[@]})); then
  echo "fuzz: FAILED: ${failed[*]} (inputs in out/fuzz/TARGET/; logs out/fuzz/TARGET/log.txt)" >&2
  exit 1
fi
