#!/usr/bin/env bash
# Pitch unit benchmark: ns/sample of `pitch` (voice and any mode, +300 cents) against
# `sox in.wav out.wav pitch 300` on the same 60 s of speech, sox's file I/O removed by
# subtracting a plain `sox in.wav out.wav` copy (as PEERS.md did), CPU = user+sys, median
# of ROUNDS interleaved rounds, all in this one run. Also prints Rubber Band's real-time
# latency beside ours.
#
# Needs: sox, espeak-ng (apt-get install sox espeak-ng), gcc; librubberband-dev for the
# Rubber Band latency line (skipped without it). Usage: Benchmarks/pitch/run.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-5}
OUT=.build/bench-pitch
mkdir -p "$OUT"

# 1. The workload: 60 s of espeak-ng speech, mono 48 kHz float, peak -1 dBFS.
if [ ! -f "$OUT/voice.wav" ]; then
    TEXT="The singer steps up to the microphone and the band starts to play. Every note goes \
through the rack: pitch, delay and reverb, then the mixer and the speakers. We measure what \
each unit costs, how long it delays the voice, and whether it sounds the way it should. \
A harmony a fifth above follows the melody, and the audience hears one voice become two."
    espeak-ng -s 150 -w "$OUT/speech.wav" "$TEXT"
    sox "$OUT/speech.wav" -r 48000 -c 1 -e floating-point -b 32 "$OUT/speech48.wav"
    sox "$OUT/speech48.wav" "$OUT/long.wav" repeat 20
    sox "$OUT/long.wav" "$OUT/voice.wav" trim 0 60 norm -1
    rm -f "$OUT/speech.wav" "$OUT/speech48.wav" "$OUT/long.wav"
fi
sox "$OUT/voice.wav" -t raw -e floating-point -b 32 "$OUT/voice.f32"
FRAMES=$(( $(stat -c %s "$OUT/voice.f32") / 4 ))

# 2. Our driver, linked against the release build of StageUnits and StageCore.
swift build -c release --target StageUnits 2>&1 | grep -E "error|Compiling|Build" || true
swiftc -O -wmo -parse-as-library -I .build/release/Modules Benchmarks/pitch/PitchBench.swift \
    .build/release/StageUnits.build/*.o .build/release/StageCore.build/*.o -o "$OUT/pitch-bench"

cpu() { # user+sys seconds of a command
    /usr/bin/time -f "%U %S" -o "$OUT/time.txt" "$@" >/dev/null 2>&1
    awk '{ printf "%.4f\n", $1 + $2 }' "$OUT/time.txt"
}
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

: >"$OUT/ours.txt"
: >"$OUT/sox-pitch.txt"
: >"$OUT/sox-copy.txt"
for r in $(seq "$ROUNDS"); do
    "$OUT/pitch-bench" "$OUT/voice.f32" 1 "$OUT" >>"$OUT/ours.txt"
    cpu sox "$OUT/voice.wav" "$OUT/sox-pitch.wav" pitch 300 >>"$OUT/sox-pitch.txt"
    cpu sox "$OUT/voice.wav" "$OUT/sox-copy.wav" >>"$OUT/sox-copy.txt"
done
VOICE=$(awk '$1 == "voice" { print $2 }' "$OUT/ours.txt" | median)
ANY=$(awk '$1 == "any" { print $2 }' "$OUT/ours.txt" | median)
FLOOR=$(awk '$1 == "gain" { print $2 }' "$OUT/ours.txt" | median)
SOXP=$(median <"$OUT/sox-pitch.txt")
SOXC=$(median <"$OUT/sox-copy.txt")
for m in voice any; do
    sox -r 48000 -c 1 -e floating-point -b 32 -t raw "$OUT/$m.f32" "$OUT/pitch-$m.wav"
done

awk -v v="$VOICE" -v a="$ANY" -v f="$FLOOR" -v p="$SOXP" -v c="$SOXC" -v n="$FRAMES" -v r="$ROUNDS" 'BEGIN {
    sox = (p - c) / n * 1e9
    printf "pitch benchmark: %d s of espeak-ng speech, +300 cents, median of %d rounds (CPU user+sys)\n", n / 48000, r
    printf "  pitch voice mode (PSOLA)        %7.1f ns/sample  %.2fx sox  (%.2f%% of a core at 48 kHz)\n", v, v / sox, v * 0.0048
    printf "  pitch any mode (granular)       %7.1f ns/sample  %.2fx sox  (%.2f%% of a core at 48 kHz)\n", a, a / sox, a * 0.0048
    printf "  harness floor (gain unit)       %7.1f ns/sample  (included above)\n", f
    printf "  sox pitch 300, I/O removed      %7.1f ns/sample  (%.3f s - %.3f s copy)\n", sox, p, c
}'
echo "  listen: $OUT/pitch-voice.wav $OUT/pitch-any.wav $OUT/sox-pitch.wav (input $OUT/voice.wav)"

# 3. Latency beside Rubber Band's real-time mode (a common alternative).
echo "latency at 48 kHz:"
echo "  pitch (both modes)              696 frames = 14.5 ms (reported; mean delay of the grains)"
if [ -f /usr/include/rubberband/rubberband-c.h ]; then
    gcc -O2 Benchmarks/pitch/rubberband_latency.c -o "$OUT/rubberband-latency" -lrubberband -lm
    "$OUT/rubberband-latency" | awk '{
        printf "  rubberband %s real-time, +3 st  start delay %d frames = %.1f ms; streamed in 256-frame blocks: %d frames = %.1f ms\n",
            $1, $2, $2 / 48, $3, $3 / 48 }'
else
    echo "  rubberband: librubberband-dev not installed, skipped"
fi
