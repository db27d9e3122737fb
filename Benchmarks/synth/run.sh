#!/usr/bin/env bash
# Benchmarks/synth/run.sh: the synth unit against FluidSynth's own CLI and a C program on
# libfluidsynth, rendering the same dense MIDI workload (PEERS.md: 60 s, one piano channel,
# 8-note chords every 250 ms + a melody every 125 ms) with the same SoundFont, effects off.
# Prints CPU (user + sys) medians of interleaved rounds, ratios, and SoundFont load times.
#
#   Benchmarks/synth/run.sh            (ROUNDS=7 RENDER_SECONDS=62 FONT=... to change)
#
# Everything it builds goes to .build/synth-bench/ (never into the product): the .mid from
# make_song.py, the C reference (gcc -O2) and the Swift bench (swiftc -O against the
# package's release objects of StageCore and StageSynth).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=.build/synth-bench
FONT=${FONT:-/usr/share/sounds/sf2/TimGM6mb.sf2}
ROUNDS=${ROUNDS:-7}
RENDER_SECONDS=${RENDER_SECONDS:-62}
mkdir -p "$OUT"

[[ -r "$FONT" ]] || { echo "missing $FONT (apt-get install timgm6mb-soundfont)" >&2; exit 1; }
command -v fluidsynth >/dev/null || { echo "missing the fluidsynth CLI (apt-get install fluidsynth)" >&2; exit 1; }

python3 Benchmarks/synth/make_song.py "$OUT/song.mid"

echo "building (release)..." >&2
swift build -c release --target StageSynth 2>&1 | grep -E "error|warning: unre|Compiling|Build" >&2 || true
gcc -O2 -o "$OUT/synth_c" Benchmarks/synth/synth_c.c $(pkg-config --cflags --libs fluidsynth)

# The Swift bench links the objects SwiftPM just built for StageCore and StageSynth.
objects=()
for f in $(find Sources/StageCore Sources/StageSynth -name '*.swift'); do
  target=$(echo "$f" | cut -d/ -f2)
  objects+=(".build/release/$target.build/$(basename "$f").o")
done
swiftc -O -module-cache-path "$OUT/module-cache" \
  -I .build/release/Modules -I Sources/CFluidSynth \
  Benchmarks/synth/SynthBench.swift "${objects[@]}" \
  $(pkg-config --libs fluidsynth) -o "$OUT/synth_swift"

python3 Benchmarks/synth/compare.py "$OUT" "$FONT" "$OUT/song.mid" "$RENDER_SECONDS" "$ROUNDS" \
  soundfonts/stagerack-basic.sf2 /usr/share/sounds/sf2/TimGM6mb.sf2 /usr/share/sounds/sf2/FluidR3_GM.sf2
