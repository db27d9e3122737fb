#!/bin/sh
# Benchmarks/reverb/run.sh: the `reverb` unit against a C -O2 Freeverb (mono, 8 combs +
# 4 allpasses) on the same input, side by side in one process (passes alternate). Prints
# ns per sample (per mono input frame) for both and the ratio; the issue's target is
# reverb <= 1.0x Freeverb.
#
# Builds the product's StageCore + StageUnits in release with SwiftPM, compiles
# freeverb.c with gcc -O2, and links the driver (bench.swift) against both, all into
# .build/reverb-bench/. Environment: SECONDS of input (10), PASSES (9), BLOCK frames (64).
set -eu
cd "$(dirname "$0")/../.."
SECONDS_OF_INPUT=${SECONDS:-10}
PASSES=${PASSES:-9}
BLOCK=${BLOCK:-64}
OUT=.build/reverb-bench
mkdir -p "$OUT"

echo "building (release)..." >&2
swift build -c release --target StageUnits >&2
BIN=$(swift build -c release --show-bin-path)
gcc -O2 -c Benchmarks/reverb/freeverb.c -o "$OUT/freeverb.o"
swiftc -O -wmo -module-name ReverbBench -I "$BIN/Modules" -I "$BIN" -I Benchmarks/reverb \
    Benchmarks/reverb/bench.swift "$OUT/freeverb.o" "$BIN"/StageCore.build/*.o "$BIN"/StageUnits.build/*.o \
    -o "$OUT/reverb-bench" >&2

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$OUT/reverb-bench" "$SECONDS_OF_INPUT" "$PASSES" "$BLOCK"
