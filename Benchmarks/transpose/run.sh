#!/usr/bin/env bash
# The player's transpose: instructions a second of audio of librubberband as the player's
# disk thread runs it (R3, real time, stereo, 1024-frame blocks; transpose_bench.c), at
# +1, -2, +5, -5 semitones beside the plain copy (0), all counted by callgrind in this one
# run; the net count (shift minus copy) gives a Raspberry Pi 4 estimate at one instruction a
# cycle and 1.5 GHz (a Cortex-A72 core; not measured on a Pi), as Benchmarks/harmony does.
# Needs: gcc, valgrind, librubberband-dev. Usage: Benchmarks/transpose/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=.build/bench-transpose
mkdir -p "$OUT"
gcc -O2 -o "$OUT/transpose-bench" Benchmarks/transpose/transpose_bench.c $(pkg-config --cflags --libs rubberband) -lm
count() { # instructions of one run under callgrind
    valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.out" "$OUT/transpose-bench" "$1" >/dev/null 2>"$OUT/cg.err"
    awk '/^summary:/ { print $2 }' "$OUT/cg.out"
}
seconds=4
base=$(count 0)
echo "transpose benchmark: ${seconds} s of a stereo mix at 48 kHz, librubberband R3 real time (callgrind, net of the copy)"
printf "  %-12s %16s %18s %12s\n" "semitones" "instructions" "instr / s audio" "Pi 4 core"
for n in 1 -2 5 -5; do
    c=$(count "$n")
    awk -v n="$n" -v c="$c" -v b="$base" -v s="$seconds" 'BEGIN {
        net = (c - b) / s
        printf "  %-12s %16.0f %18.0f %11.1f%%\n", n, c, net, net / 1.5e9 * 100
    }'
done
echo "  Pi 4 core: net instructions a second over a 1.5 GHz Cortex-A72 retiring one a cycle (an estimate)"
