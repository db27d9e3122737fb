#!/usr/bin/env bash
# Channel-strip benchmark: the `eq`, `dynamics` and `deesser` units and the whole strip
# (eq -> dynamics -> deesser) against C -O2 builds of the same algorithms (ref_strip.c) and
# against sox (`highpass` + `equalizer` x3 + `treble` for the EQ, `compand` for the
# compressor; sox has no de-esser), in instruction counts (callgrind), side by side in one run.
#
#   Benchmarks/strip/run.sh [SECONDS]      (default 60 s of a voice-like signal, mono 48 kHz)
#
# Instruction counts are net: each contestant's count minus the count of the same program
# doing everything but the work (`strip-bench none`, `sox in out`). valgrind 3.19 rejects
# the release binary's debug info, so callgrind counts a copy made with
# `objcopy --strip-debug` (PEERS.md). Also prints thread-CPU ns per sample (medians of
# interleaved rounds) for the units against C. Ratios are the figures to read. Column
# `c-like`: the C reference with the Swift units' log2/exp2 formulation (README).
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_OF_INPUT=${1:-60}
OUT=.build/bench-strip
mkdir -p "$OUT"

echo "== build" >&2
swift build -c release --target StageUnits >&2
BIN=$(swift build -c release --show-bin-path)
# The bench linked with one build of the C reference: build_bench GCC_FLAGS NAME.
build_bench() {
    gcc -O2 $1 -c Benchmarks/strip/ref_strip.c -o "$OUT/$2.o"
    swiftc -O -wmo -module-name StripBench -I "$BIN/Modules" \
        -import-objc-header Benchmarks/strip/ref_strip.h \
        Benchmarks/strip/StripBench.swift "$OUT/$2.o" \
        "$BIN"/StageCore.build/*.o "$BIN"/StageUnits.build/*.o \
        -o "$OUT/$2"
    objcopy --strip-debug "$OUT/$2" "$OUT/$2-nodebug"
}
build_bench "" strip-bench
# The like-for-like reference: ref_strip.c with the Swift units' integer log2 split and
# unclamped exp2 (-DREF_LIKE_SWIFT; same output bit for bit). The column `c` keeps the
# first reference, as the issue's figures were taken against it.
build_bench -DREF_LIKE_SWIFT strip-bench-like

# Instructions of one command (callgrind's total Ir).
instr() {
    local f="$OUT/cg.out"
    valgrind --tool=callgrind --callgrind-out-file="$f" "$@" >/dev/null 2>&1
    awk '/^summary:/ {print $2}' "$f"
}

B="$OUT/strip-bench-nodebug"
L="$OUT/strip-bench-like-nodebug"
N=$((SECONDS_OF_INPUT * 48000))
base=$(instr "$B" none eq "$SECONDS_OF_INPUT")
likebase=$(instr "$L" none eq "$SECONDS_OF_INPUT")
"$B" write "$OUT/voice.raw" "$SECONDS_OF_INPUT"
sox -t raw -r 48000 -e floating-point -b 32 -c 1 "$OUT/voice.raw" "$OUT/voice.wav"
soxbase=$(instr sox "$OUT/voice.wav" "$OUT/copy.wav")
SOX_EQ="highpass 90 equalizer 300 1.0q -3 equalizer 1000 1.0q 2 equalizer 3000 1.0q 3 treble 2 10000"
SOX_COMP="compand 0.01,0.15 6:-70,-70,-20,-20,0,-13.33 0 -90 0"

echo "== instructions per sample (callgrind, net of set-up / file copy), $SECONDS_OF_INPUT s"
printf '%-9s %10s %10s %10s %10s %12s %12s %12s\n' unit swift c c-like sox swift/c swift/c-like swift/sox
for u in eq dynamics deesser strip; do
    s=$(( ($(instr "$B" swift "$u" "$SECONDS_OF_INPUT") - base) ))
    c=$(( ($(instr "$B" c "$u" "$SECONDS_OF_INPUT") - base) ))
    cl=$(( ($(instr "$L" c "$u" "$SECONDS_OF_INPUT") - likebase) ))
    case $u in
        eq) sx=$(( $(instr sox "$OUT/voice.wav" "$OUT/o.wav" $SOX_EQ) - soxbase )) ;;
        dynamics) sx=$(( $(instr sox "$OUT/voice.wav" "$OUT/o.wav" $SOX_COMP) - soxbase )) ;;
        strip) sx=$(( $(instr sox "$OUT/voice.wav" "$OUT/o.wav" $SOX_EQ $SOX_COMP) - soxbase )) ;;
        *) sx=0 ;;
    esac
    awk -v u="$u" -v s="$s" -v c="$c" -v cl="$cl" -v x="$sx" -v n="$N" 'BEGIN {
        printf "%-9s %10.1f %10.1f %10.1f %10s %12.2f %12.2f %12s\n", u, s / n, c / n, cl / n, (x > 0 ? sprintf("%.1f", x / n) : "-"), s / c, s / cl, (x > 0 ? sprintf("%.2f", s / x) : "-")
    }'
done
rm -f "$OUT/o.wav" "$OUT/copy.wav"

echo
echo "== thread CPU, ns per sample (medians of interleaved rounds)"
for u in eq dynamics deesser strip; do "$OUT/strip-bench" time "$u" 10 9; done
