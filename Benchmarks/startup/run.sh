#!/usr/bin/env bash
# Benchmarks/startup/run.sh: start-up to the first audio block, StageRack against the
# fluidsynth CLI, in callgrind instructions (repeatable on a loaded machine), side by side
# in one run. Both load TimGM6mb and render a one-note MIDI file to a WAV file; callgrind
# dumps its counts just before the first block is rendered (`--dump-before` on
# `RenderEngine.render` and on `fluid_synth_write_float`), so the first dump is the whole
# start-up: the dynamic loader, reading the rack, loading the font, making the synth.
#
#   Benchmarks/startup/run.sh
#   STAGERACK=path/to/stagerack       (default: the installed binary `make installed-binary`
#                                      builds, .build/install/stagerack, then .build/release's)
#   BEFORE=path/to/other/stagerack    (also measure another build, e.g. the dynamic one)
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
FONT=/usr/share/sounds/sf2/TimGM6mb.sf2
OUT=.build/bench-startup
rm -rf "$OUT" && mkdir -p "$OUT"
for tool in fluidsynth valgrind python3; do
    command -v "$tool" >/dev/null || { echo "missing $tool (scripts/install-deps.sh --test)" >&2; exit 1; }
done
[[ -r $FONT ]] || { echo "missing $FONT (scripts/install-deps.sh --test)" >&2; exit 1; }
if [[ -z ${STAGERACK:-} ]]; then
    STAGERACK=.build/install/stagerack
    [[ -x $STAGERACK ]] || STAGERACK=.build/release/stagerack
fi
[[ -x $STAGERACK ]] || { echo "no binary: make installed-binary (or make build)" >&2; exit 1; }
# FluidSynth's OpenMP: one thread, no spin-waiting (libgomp's spinning varies run to run).
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
python3 - "$OUT/note.mid" <<'PY'
import struct, sys
track = bytes([0, 0x90, 60, 100, 10, 0x80, 60, 0, 0, 0xFF, 0x2F, 0])
with open(sys.argv[1], "wb") as f:
    f.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, 480) + b"MTrk" + struct.pack(">I", len(track)) + track)
PY
cat >"$OUT/synth.json" <<JSON
{ "format": 1, "name": "start-up", "units": {
    "synth": { "type": "synth", "soundfont": "$FONT", "program": 0, "channel": "all" },
    "out": { "type": "output" } },
  "connections": [ "synth -> out" ] }
JSON
first_dump() {  # first_dump NAME FUNCTION COMMAND...: instructions before FUNCTION's first call
    local name=$1 fn=$2; shift 2
    mkdir -p "$OUT/$name"
    valgrind --tool=callgrind --callgrind-out-file="$OUT/$name/cg" --dump-before="$fn" "$@" \
        >"$OUT/$name.log" 2>&1 || { echo "$name failed: $OUT/$name.log" >&2; exit 1; }
    [[ -f $OUT/$name/cg.1 ]] || { echo "$name: $fn was never called ($OUT/$name.log)" >&2; exit 1; }
    sed -nE 's/^summary: ([0-9]+)/\1/p' "$OUT/$name/cg.1"
    rm -f "$OUT/$name"/cg.[2-9]* "$OUT/$name"/cg.1[0-9]*
}
measure() {  # measure NAME BINARY: StageRack's start-up
    local copy="$OUT/$1.bin"
    # valgrind 3.19 rejects the release binary's DWARF 5: count a copy without it (PEERS.md).
    objcopy --strip-debug "$2" "$copy"
    first_dump "$1" '$s9StageCore12RenderEngineC6render10frameCountySi_tF' \
        "$copy" render "$OUT/synth.json" --midi "$OUT/note.mid" --output "$OUT/$1.wav" --block 64
}
cli=$(first_dump cli fluid_synth_write_float \
    fluidsynth -ni -q -F "$OUT/cli.wav" -r 48000 -T wav "$FONT" "$OUT/note.mid")
ours=$(measure stagerack "$STAGERACK")
report() { python3 -c "import sys; o, c = int(sys.argv[2]), int(sys.argv[3]); print(f'{sys.argv[1]}: {o / 1e6:.1f} M instructions = {o / c:.2f}x the fluidsynth CLI ({c / 1e6:.1f} M)')" "$@"; }
echo "start-up to the first block, TimGM6mb, callgrind instructions"
report "$STAGERACK" "$ours" "$cli"
if [[ -n ${BEFORE:-} ]]; then
    before=$(measure before "$BEFORE")
    report "$BEFORE" "$before" "$cli"
fi
echo "Benchmarks/startup/run.sh: $(( $(date +%s) - start )) s"
