#!/usr/bin/env bash
# The player's transpose: instructions a second of audio of librubberband as the player's
# disk thread runs it (real time, stereo, 1024-frame blocks; transpose_bench.c), for each
# setting of transpose_options.h (R3 as before issue 30's cost work, R3's short window: the
# player's default now, R2 and its options), at +1, -2, +5, -5 semitones beside the plain
# copy (0), all counted by callgrind in this one run; the net count (shift minus copy) gives
# a Raspberry Pi 4 estimate at one instruction a cycle and 1.5 GHz (a Cortex-A72 core; not
# measured on a Pi), as Benchmarks/harmony does. Then, unless QUALITY=0, each setting's
# pitch, level and length against the player's criteria (transpose_quality.c).
# Needs: gcc, valgrind, librubberband-dev.
# Usage: [SHIFTS="5 -5"] [QUALITY=0] Benchmarks/transpose/run.sh [VARIANT...]
#   (default: every setting of transpose_options.h at +1 -2 +5 -5; figures in README.md)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.build/bench-transpose}  # its own folder per concurrent run
mkdir -p "$OUT"
flags="$(pkg-config --cflags --libs rubberband) -lm"
gcc -O2 -o "$OUT/transpose-bench" Benchmarks/transpose/transpose_bench.c $flags
gcc -O2 -o "$OUT/transpose-quality" Benchmarks/transpose/transpose_quality.c $flags
variants=("$@")
if [ ${#variants[@]} -eq 0 ]; then
    variants=($(sed -n 's/^ *{"\([a-z0-9-]*\)", RubberBand.*/\1/p' Benchmarks/transpose/transpose_options.h))
fi
count() { # instructions of one run under callgrind
    valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.out" "$OUT/transpose-bench" "$1" "$2" >/dev/null 2>"$OUT/cg.err"
    awk '/^summary:/ { print $2 }' "$OUT/cg.out"
}
seconds=4
base=$(count r3 0)
echo "transpose benchmark: ${seconds} s of a stereo mix at 48 kHz, librubberband $(pkg-config --modversion rubberband) real time (callgrind, net of the copy)"
printf "  %-18s %-10s %16s %18s %12s\n" "setting" "semitones" "instructions" "instr / s audio" "Pi 4 core"
for v in "${variants[@]}"; do
    for n in ${SHIFTS:-1 -2 5 -5}; do
        c=$(count "$v" "$n")
        awk -v v="$v" -v n="$n" -v c="$c" -v b="$base" -v s="$seconds" 'BEGIN {
            net = (c - b) / s
            printf "  %-18s %-10s %16.0f %18.0f %11.1f%%\n", v, n, c, net, net / 1.5e9 * 100
        }'
    done
done
echo "  Pi 4 core: net instructions a second over a 1.5 GHz Cortex-A72 retiring one a cycle (an estimate)"
if [ "${QUALITY:-1}" != 0 ]; then
    echo "criteria: pitch within 5 cents, level within 0.5 dB, length within 1 ms a minute"
    for v in "${variants[@]}"; do "$OUT/transpose-quality" "$v"; done
fi
