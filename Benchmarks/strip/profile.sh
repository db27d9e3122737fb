#!/usr/bin/env bash
# Per-line and per-instruction profile of one strip unit against its C reference, for
# finding where the Swift spends instructions the C does not (never part of the product).
#
#   Benchmarks/strip/profile.sh UNIT [SECONDS]     UNIT: eq | dynamics | deesser | strip
#
# Builds StageUnits again with DWARF 4 debug info into .build/bench-strip-prof (valgrind
# 3.19 cannot read the DWARF 5 of the normal release build; only the debug info differs:
# the objects' code sections have the same sizes), runs callgrind with
# --dump-instr=yes on `swift`, `c` and `none` (set-up only), prints the net instructions
# per sample, and leaves in .build/bench-strip-prof/out:
#   cg.MODE.UNIT       callgrind_annotate --auto=yes cg.swift.dynamics   (per source line)
#   asm.MODE.UNIT      every hot function's instructions with their counts per sample
#                      (Benchmarks/strip/asmprof.py), the clearest view of the loops.
set -euo pipefail
cd "$(dirname "$0")/../.."
U=${1:?unit}
S=${2:-5}
SCR=.build/bench-strip-prof
OUT=$SCR/out
mkdir -p "$OUT"
swift build -c release --target StageUnits --scratch-path "$SCR" -Xswiftc -g -Xswiftc -dwarf-version=4 >&2
BIN=$SCR/release
gcc -O2 -g -gdwarf-4 -c Benchmarks/strip/ref_strip.c -o "$OUT/ref_strip.o"
swiftc -O -wmo -g -dwarf-version=4 -module-name StripBench -I "$BIN/Modules" \
    -import-objc-header Benchmarks/strip/ref_strip.h \
    Benchmarks/strip/StripBench.swift "$OUT/ref_strip.o" \
    "$BIN"/StageCore.build/*.o "$BIN"/StageUnits.build/*.o -o "$OUT/strip-bench"
for m in swift c none; do
    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$OUT/cg.$m.$U" \
        "$OUT/strip-bench" $m "$U" "$S" >/dev/null 2>&1
done
base=$(awk '/^summary:/ {print $2}' "$OUT/cg.none.$U")
N=$((S * 48000))
for m in swift c; do
    t=$(awk '/^summary:/ {print $2}' "$OUT/cg.$m.$U")
    awk -v m=$m -v u="$U" -v t="$t" -v b="$base" -v n=$N 'BEGIN { printf "%s %s: %.2f instructions per sample (net)\n", m, u, (t - b) / n }'
    python3 Benchmarks/strip/asmprof.py "$OUT/cg.$m.$U" "$OUT/strip-bench" "$N" > "$OUT/asm.$m.$U"
done
echo "per line: callgrind_annotate --auto=yes $OUT/cg.swift.$U; per instruction: $OUT/asm.swift.$U, $OUT/asm.c.$U"
