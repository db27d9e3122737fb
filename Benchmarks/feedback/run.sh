#!/usr/bin/env bash
# `feedback` unit cost against `tune`: callgrind instructions per sample of each unit on the
# same 10 s of espeak-ng speech at 48 kHz (256-frame blocks), the harness floor (a `gain`
# unit, the same program) subtracted, all in this one run. Pi 4 estimate as in
# /work/shared/docs/PEERS.md (instructions per sample / IPC and clock there).
#
# Needs: valgrind, sox, espeak-ng, libfftw3-dev. Usage: Benchmarks/feedback/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=.build/bench-feedback
mkdir -p "$OUT"
if [ ! -f "$OUT/voice.f32" ]; then
    espeak-ng -s 150 -w "$OUT/speech.wav" "The singer steps up to the microphone and the band starts to play. \
Every note goes through the rack: pitch, delay and reverb, then the mixer and the speakers."
    sox "$OUT/speech.wav" -r 48000 -c 1 -e floating-point -b 32 -t raw "$OUT/voice.f32" trim 0 10 norm -1
fi
FRAMES=$(( $(stat -c %s "$OUT/voice.f32") / 4 ))
swift build -c release --target StageUnits 2>&1 | grep -E "error|Build" || true
swiftc -O -wmo -parse-as-library -I .build/release/Modules -I Sources/CFFTW -I .build/release/CLoadOnUse.build -I Sources/CLoadOnUse/include Benchmarks/feedback/FeedbackBench.swift \
    .build/release/StageUnits.build/*.o .build/release/StageCore.build/*.o .build/release/CLoadOnUse.build/*.o -lfftw3f -ldl -o "$OUT/feedback-bench"
# Stripped: valgrind 3.19 gives up on Swift 6.3's debug information ("corrupted debuginfo").
strip "$OUT/feedback-bench"
ir() { # total instructions of one case
    valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.$1" "$OUT/feedback-bench" "$OUT/voice.f32" "$1" >/dev/null 2>"$OUT/cg.$1.log"
    grep -E "Collected" "$OUT/cg.$1.log" | awk '{ print $NF }'
}
GAIN=$(ir gain)
FB=$(ir feedback)
TUNE=$(ir tune)
awk -v g="$GAIN" -v f="$FB" -v t="$TUNE" -v n="$FRAMES" 'BEGIN {
    printf "frames %d\n", n
    printf "feedback  %.0f instructions/sample\n", (f - g) / n
    printf "tune      %.0f instructions/sample\n", (t - g) / n
    printf "feedback / tune %.2f\n", (f - g) / (t - g)
}'
