#!/usr/bin/env bash
# Benchmarks/engine/run.sh [RACK] [SECONDS] [BLOCKS]: the engine's own cost in callgrind
# instructions: `stagerack-bench --pass engine` (the engine pass) minus `--pass units` (the
# same units run alone on the same buffers, with the same parameter values and MIDI, in the
# blocks the engine rendered them), both minus `--pass none` (loading and recording, which
# all three share). RACK defaults to Benchmarks/default-rack-baseline.json, SECONDS to 2,
# BLOCKS to "16 64". Prints instructions a block and the overhead as a share of the engine
# pass. STAGERACK_BENCH=path: a binary already built (no build). Output: .build/bench-engine.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
OUT=.build/bench-engine
# FluidSynth renders through OpenMP: one thread and no spin-waiting, or libgomp's spinning adds
# thousands of instructions a block that vary from run to run.
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
mkdir -p "$OUT"
command -v valgrind >/dev/null || { echo "missing valgrind (scripts/install-deps.sh --test)" >&2; exit 1; }
if [[ -z ${STAGERACK_BENCH:-} ]]; then
    swift build -c release --product stagerack-bench >&2
fi
# valgrind 3.19 rejects the release binary's debug info: count a copy without it (PEERS.md).
objcopy --strip-debug "${STAGERACK_BENCH:-.build/release/stagerack-bench}" "$OUT/stagerack-bench"
RACK=${1:-Benchmarks/default-rack-baseline.json}
SECONDS_OF_AUDIO=${2:-2}
instructions() {  # instructions PASS BLOCK: the whole process's instruction count
    valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.$1.$2" "$OUT/stagerack-bench" "$RACK" \
        --block "$2" --seconds "$SECONDS_OF_AUDIO" --pass "$1" 2>"$OUT/valgrind.$1.$2.log" >/dev/null
    sed -nE 's/.*Collected : ([0-9]+).*/\1/p' "$OUT/valgrind.$1.$2.log"
}
echo "rack $RACK, $SECONDS_OF_AUDIO s of audio at 48 kHz; callgrind instructions"
for block in ${3:-16 64}; do
    none=$(instructions none "$block")
    engine=$(instructions engine "$block")
    units=$(instructions units "$block")
    python3 - "$block" "$SECONDS_OF_AUDIO" "$none" "$engine" "$units" <<'PY'
import sys
block, seconds, none, engine, units = int(sys.argv[1]), float(sys.argv[2]), *map(int, sys.argv[3:])
blocks = int(seconds * 48000) // block
e, u = engine - none, units - none
over = e - u
print(f"block {block}: engine pass {e / blocks:,.0f} instr a block, units alone {u / blocks:,.0f}; "
      f"engine overhead {over / blocks:,.0f} instr a block = {100 * over / e:.1f} % of the engine pass")
PY
done
echo "Benchmarks/engine/run.sh: $(( $(date +%s) - start )) s"
