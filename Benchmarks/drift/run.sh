#!/usr/bin/env bash
# The drift compensator's cost, side by side in one run: callgrind instruction counts of
# `stagerack-bench --drift Q` (stereo, 128-frame periods, a capture clock 100 ppm fast) for
# libsamplerate's fastest, medium and best sinc converters against `copy` (the same loop
# without resampling); instructions per stereo frame = (Q − copy) / frames.
#   Benchmarks/drift/run.sh [SECONDS]      (default 10)
set -euo pipefail
cd "$(dirname "$0")/../.."
# valgrind 3.19 rejects the release binary's debug info: callgrind counts a copy made with
# `objcopy --strip-debug` (as Benchmarks/render/run.sh does).
BENCH=$(mktemp)
trap 'rm -f "$BENCH"' EXIT
objcopy --strip-debug .build/release/stagerack-bench "$BENCH"
chmod +x "$BENCH"
SECONDS_RUN=${1:-10}
frames=$(( SECONDS_RUN * 48000 / 128 * 128 ))
declare -A count
for q in copy fastest medium best; do
    out=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BENCH" --drift "$q" --block 128 --seconds "$SECONDS_RUN" 2>"$out" >/dev/null
    count[$q]=$(grep -o 'Collected : [0-9]*' "$out" | grep -o '[0-9]*$')
    rm -f "$out"
done
printf '%-8s %16s %22s\n' quality instructions "per stereo frame (net)"
for q in copy fastest medium best; do
    printf '%-8s %16d %22.1f\n' "$q" "${count[$q]}" "$(echo "(${count[$q]} - ${count[copy]}) / $frames" | bc -l)"
done
