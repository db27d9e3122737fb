#!/usr/bin/env bash
# Harmony and tune benchmark: instruction counts (callgrind) per sample, side by side in one
# run, on the same 60 s of espeak-ng speech (mono 48 kHz):
#   - `harmony` with four voices plus the lead (scale mode: all four sing) against
#     `sox in.wav out.wav pitch 300` (goal: at most 1.0x);
#   - `tune` (chromatic, speed 0) against the same sox (goal: at most 0.5x);
#   - `tuner` (defaults) against `tune` (goal: at most 1.0x; it analyses more: 38 Hz-2.1 kHz
#     on a 12 kHz copy, refined at the full rate, but every 21 ms rather than 5.3 ms);
#   - each against the `pitch` unit in voice mode (+300 cents).
# Net of file I/O: our driver's count minus the same driver reading the input and rendering
# nothing (`harmony-bench none`); sox's minus a plain `sox in.wav out.wav` copy. valgrind
# 3.19 rejects the release binary's debug info, so callgrind counts a copy made with
# `objcopy --strip-debug` (PEERS.md). Prints a Raspberry Pi 4 estimate (see README.md).
#
# Needs: valgrind, sox, espeak-ng (scripts/install-deps.sh --test). Usage:
#   Benchmarks/harmony/run.sh [SECONDS]   (default 60)
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_OF_INPUT=${1:-60}
OUT=.build/bench-harmony
mkdir -p "$OUT"

# 1. The workload: espeak-ng speech, mono 48 kHz float, peak -1 dBFS (as Benchmarks/pitch).
TEXT="The singer steps up to the microphone and the band starts to play. Every note goes \
through the rack: pitch, delay and reverb, then the mixer and the speakers. We measure what \
each unit costs, how long it delays the voice, and whether it sounds the way it should. \
A harmony a fifth above follows the melody, and the audience hears one voice become two."
espeak-ng -s 150 -w "$OUT/speech.wav" "$TEXT"
sox "$OUT/speech.wav" -r 48000 -c 1 -e floating-point -b 32 "$OUT/speech48.wav"
sox "$OUT/speech48.wav" "$OUT/long.wav" repeat 30
sox "$OUT/long.wav" "$OUT/voice.wav" trim 0 "$SECONDS_OF_INPUT" norm -1
rm -f "$OUT/speech.wav" "$OUT/speech48.wav" "$OUT/long.wav"
sox "$OUT/voice.wav" -t raw -e floating-point -b 32 "$OUT/voice.f32"
N=$(( $(stat -c %s "$OUT/voice.f32") / 4 ))

# 2. Our driver, linked against the release build of StageUnits and StageCore.
echo "== build" >&2
swift build -c release --target StageUnits >&2
BIN=$(swift build -c release --show-bin-path)
swiftc -O -wmo -parse-as-library -I "$BIN/Modules" Benchmarks/harmony/HarmonyBench.swift \
    "$BIN"/StageUnits.build/*.o "$BIN"/StageCore.build/*.o -o "$OUT/harmony-bench"
objcopy --strip-debug "$OUT/harmony-bench" "$OUT/harmony-bench-nodebug"
B="$OUT/harmony-bench-nodebug"

instr() { # callgrind's total Ir of one command
    local f="$OUT/cg.out"
    valgrind --tool=callgrind --callgrind-out-file="$f" "$@" >/dev/null 2>&1
    awk '/^summary:/ {print $2}' "$f"
}

echo "== counting (callgrind)" >&2
floor=$(instr "$B" none "$OUT/voice.f32")
soxcopy=$(instr sox "$OUT/voice.wav" "$OUT/copy.wav")
soxpitch=$(( $(instr sox "$OUT/voice.wav" "$OUT/sox-pitch.wav" pitch 300) - soxcopy ))
pitch=$(( $(instr "$B" pitch "$OUT/voice.f32") - floor ))
harmony=$(( $(instr "$B" harmony4 "$OUT/voice.f32") - floor ))
tune=$(( $(instr "$B" tune "$OUT/voice.f32") - floor ))
tuner=$(( $(instr "$B" tuner "$OUT/voice.f32") - floor ))

# Listening copies.
"$B" harmony4 "$OUT/voice.f32" "$OUT/harmony4.f32"
sox -r 48000 -c 2 -e floating-point -b 32 -t raw "$OUT/harmony4.f32" "$OUT/harmony4.wav"
"$B" tune "$OUT/voice.f32" "$OUT/tune.f32"
sox -r 48000 -c 1 -e floating-point -b 32 -t raw "$OUT/tune.f32" "$OUT/tune.wav"
rm -f "$OUT/copy.wav" "$OUT/harmony4.f32" "$OUT/tune.f32"

awk -v h="$harmony" -v t="$tune" -v u="$tuner" -v p="$pitch" -v s="$soxpitch" -v n="$N" 'BEGIN {
    printf "harmony benchmark: %d s of espeak-ng speech, 48 kHz, instructions per sample (callgrind, net of file I/O)\n", n / 48000
    printf "  %-34s %8s %10s %10s %12s\n", "", "instr", "vs sox", "vs pitch", "Pi 4 core"
    printf "  %-34s %8.1f %9.2fx %9.2fx %11.1f%%\n", "harmony: 4 voices + lead", h / n, h / s, h / p, h / n * 48000 / 1.5e9 * 100
    printf "  %-34s %8.1f %9.2fx %9.2fx %11.1f%%\n", "tune (speed 0)", t / n, t / s, t / p, t / n * 48000 / 1.5e9 * 100
    printf "  %-34s %8.1f %9.2fx %9.2fx %11.1f%%   (%.2fx tune)\n", "tuner", u / n, u / s, u / p, u / n * 48000 / 1.5e9 * 100, u / t
    printf "  %-34s %8.1f %9.2fx %9.2fx %11.1f%%\n", "pitch, voice mode, +300 cents", p / n, p / s, 1, p / n * 48000 / 1.5e9 * 100
    printf "  %-34s %8.1f %9.2fx %10s %11.1f%%\n", "sox pitch 300", s / n, 1, "", s / n * 48000 / 1.5e9 * 100
    printf "  goals: harmony <= 1.0x sox, tune <= 0.5x sox, tuner <= 1.0x tune\n"
    printf "  Pi 4 core: instructions/s at 48 kHz over a 1.5 GHz Cortex-A72 retiring one instruction a cycle (see README.md)\n"
}'
echo "  listen: $OUT/harmony4.wav $OUT/tune.wav $OUT/sox-pitch.wav (input $OUT/voice.wav)"
