#!/usr/bin/env bash
# Benchmarks/lv2/run.sh: the lv2 unit's host overhead per plugin per block, measured inside
# the engine, next to lilv's own lv2bench for the same plugin in the same run.
#
#   Benchmarks/lv2/run.sh [URI...]      (BLOCK=128 BENCH_SECONDS=10 to change)
#
# For each plugin (default: mda DeEss, mda Detune, x42 fil4 mono; each at its defaults):
# - time: `stagerack-bench --lv2 URI` (the rack mic → plugin → out against mic → out,
#   thread CPU, medians of 5 interleaved rounds) and `lv2bench -b BLOCK` (wall time);
# - callgrind (repeatable on a busy machine): the instructions of `LV2Unit.render`
#   (inclusive) per block, minus those executed inside the plugin's library = the host's
#   own overhead; and the plugin library's instructions per block under lv2bench.
set -euo pipefail
cd "$(dirname "$0")/../.."
BLOCK=${BLOCK:-128}
SECONDS_=${BENCH_SECONDS:-10}
OUT=.build/lv2-bench
mkdir -p "$OUT"
plugins=("$@")
((${#plugins[@]})) || plugins=(http://drobilla.net/plugins/mda/DeEss http://drobilla.net/plugins/mda/Detune 'http://gareus.org/oss/lv2/fil4#mono')
for tool in lv2bench valgrind callgrind_annotate; do
  command -v "$tool" >/dev/null || { echo "missing $tool (scripts/install-deps.sh --test; valgrind from Debian)" >&2; exit 1; }
done
echo "building stagerack-bench (release)..." >&2
swift build -c release --product stagerack-bench 2>&1 | grep -E "error|Build" >&2 || true
swift build -c release --product stagerack 2>&1 | grep -E "error" >&2 || true
BENCH=.build/release/stagerack-bench
# valgrind 3.19 rejects Swift 6.3's debug info: callgrind counts a copy without it (symbols kept).
objcopy --strip-debug "$BENCH" "$OUT/stagerack-bench"

# Sum of the Ir column of callgrind_annotate lines matching a pattern.
sum_ir() { awk -v pat="$2" 'index($0, pat) { gsub(",", "", $1); s += $1 } END { printf "%d", s }' "$1"; }

printf "%-42s %10s %10s %12s %12s %12s %12s\n" plugin "ns/blk" "lv2bench" "host Ir/blk" "plugin Ir/blk" "lv2bench Ir" "host share"
for uri in "${plugins[@]}"; do
  bundle=$(.build/release/stagerack units "$uri" | awk '/^  bundle /{print $2}')
  so=$bundle  # every library of the bundle counts as the plugin's
  # Time, side by side.
  ours=$($BENCH --lv2 "$uri" --block "$BLOCK" --seconds "$SECONDS_" | awk '/host \+ plugin/{print $(NF-3)}')
  frames=$((SECONDS_ * 48000))
  lb=$(lv2bench -b "$BLOCK" -n "$frames" "$uri" 2>/dev/null | awk '{print $1}')
  theirs=$(awk -v s="$lb" -v f="$frames" -v b="$BLOCK" 'BEGIN { printf "%.1f", s * 1e9 / (f / b) }')
  # Instructions.
  cg_seconds=2
  valgrind --tool=callgrind --callgrind-out-file="$OUT/ours.cg" "$OUT/stagerack-bench" --lv2 "$uri" --block "$BLOCK" --seconds $cg_seconds > "$OUT/ours.txt" 2>/dev/null
  blocks=$(awk '/blocks per rack/{for (i = 1; i <= NF; i++) if ($i == "blocks") print $(i-1)}' "$OUT/ours.txt" | tr -d ,)
  callgrind_annotate --inclusive=yes --threshold=100 "$OUT/ours.cg" > "$OUT/ours.incl" 2>/dev/null
  callgrind_annotate --threshold=100 "$OUT/ours.cg" > "$OUT/ours.excl" 2>/dev/null
  # LV2Unit.render, as Swift mangles it (`$s8StageLV20B4UnitC6render…`: "LV2" substituted).
  render=$(grep -E 's8StageLV20B4UnitC6render|LV2Unit\.render' "$OUT/ours.incl" | awk '{gsub(",", "", $1); if ($1 > m) m = $1} END { printf "%d", m }')
  plugin=$(sum_ir "$OUT/ours.excl" "[$so")
  valgrind --tool=callgrind --callgrind-out-file="$OUT/theirs.cg" lv2bench -b "$BLOCK" -n $((cg_seconds * 48000)) "$uri" >/dev/null 2>&1
  callgrind_annotate --threshold=100 "$OUT/theirs.cg" > "$OUT/theirs.excl" 2>/dev/null
  lbplugin=$(sum_ir "$OUT/theirs.excl" "[$so")
  lbblocks=$((cg_seconds * 48000 / BLOCK))
  awk -v u="$uri" -v ours="$ours" -v theirs="$theirs" -v r="$render" -v p="$plugin" -v n="$blocks" -v lp="$lbplugin" -v ln="$lbblocks" 'BEGIN {
    host = (r - p) / n; plug = p / n; lbp = lp / ln
    printf "%-42s %10s %10s %12.0f %12.0f %12.0f %11.1f%%\n", u, ours, theirs, host, plug, lbp, 100 * host / (host + plug) }'
done
echo "ns/blk: the lv2 unit inside the engine (thread CPU, host + plugin + the mono-to-stereo adapter for stereo plugins);"
echo "lv2bench: lilv's bench host, same block (wall). Ir: callgrind instructions per block; host = LV2Unit.render minus the plugin's library."
