#!/usr/bin/env bash
# Delay benchmark: StageRack's `delay` unit against C -O2 feedback delays, side by side in
# one process, plus `sox ... echos` per-sample cost for reference.
#
#   Benchmarks/delay/run.sh [SECONDS_PER_PASS] [ROUNDS]
#
# Builds StageUnits in release, the C references with gcc -O2 (into .build/, never into
# the product) and a small Swift driver linked against both. 48 kHz, 64-frame blocks, all
# in memory; medians of interleaved rounds of thread CPU time. Compare the ratios, not the
# absolute figures (the machine is shared; see docs/REALTIME-SWIFT.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_PER_PASS=${1:-5}
ROUNDS=${2:-21}
OUT=.build/bench-delay
mkdir -p "$OUT"

echo "== build"
swift build -c release --target StageUnits 2>&1 | grep -E "error|Compiling|Build" || true
BIN=$(swift build -c release --show-bin-path)
gcc -O2 -c Benchmarks/delay/ref_delay.c -o "$OUT/ref_delay.o"
swiftc -O -wmo -module-name DelayBench -I "$BIN/Modules" \
    -import-objc-header Benchmarks/delay/ref_delay.h \
    Benchmarks/delay/DelayBench.swift "$OUT/ref_delay.o" \
    "$BIN"/StageCore.build/*.o "$BIN"/StageUnits.build/*.o \
    -o "$OUT/delay-bench"

echo
echo "== delay unit vs C (target: swift / c-plain within 2x)"
MONO=$("$OUT/delay-bench" "$SECONDS_PER_PASS" "$ROUNDS" 1)
echo "$MONO"
SWIFT_NS=$(echo "$MONO" | awk '$1 == "swift" {print $2}')
echo
"$OUT/delay-bench" "$SECONDS_PER_PASS" "$ROUNDS" 2

echo
echo "== sox echos (PEERS.md method: CPU of the effect minus CPU of a plain copy)"
if ! command -v sox >/dev/null; then
    echo "sox not installed: skipped"
    exit 0
fi
IN="$OUT/voice.wav"
# 60 s of mono 48 kHz float: pink noise under a syllable-rate tremolo (speech-like level
# changes), peak about -6 dBFS.
sox -n -r 48000 -c 1 -b 32 -e floating-point "$IN" synth 60 pinknoise tremolo 3 90 gain -n -6 2>/dev/null
# User + system CPU seconds of one command (child rusage, microsecond resolution).
cpu() {
    python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime + r.ru_stime)' "$@"
}
copy=()
echos=()
for _ in 1 2 3 4 5 6 7 8 9 10 11; do
    copy+=("$(cpu sox "$IN" "$OUT/copy.wav")")
    echos+=("$(cpu sox "$IN" "$OUT/echos.wav" echos 0.8 0.7 300 0.5 600 0.25)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mc=$(median "${copy[@]}")
me=$(median "${echos[@]}")
awk -v c="$mc" -v e="$me" -v s="$SWIFT_NS" 'BEGIN {
    n = 60 * 48000
    sox = (e - c) * 1e9 / n
    printf "  sox copy %.4f s CPU, sox echos %.4f s CPU (11 rounds, medians)\n", c, e
    printf "  sox echos, I/O removed: %.2f ns per sample\n", sox
    if (sox > 0) printf "  ratio swift (mono, above) / sox echos: %.2f\n", s / sox
}'
rm -f "$OUT/copy.wav" "$OUT/echos.wav"
