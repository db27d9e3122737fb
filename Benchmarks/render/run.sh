#!/usr/bin/env bash
# Benchmarks/render/run.sh: `stagerack render` against sox and the fluidsynth CLI, side by
# side in one run, on the same input (README.md next to this file has the figures).
#
#   Benchmarks/render/run.sh [SECONDS]     (default 60 s of voice-like input and MIDI song; the
#                                           song is cut to SECONDS too, for us and the peers)
#   LONG_SECONDS=3600 (the long input of the memory comparison; 0 skips it)
#   STAGERACK=path/to/stagerack (a binary already built: no build)
#
# 1. File I/O floor, instructions (callgrind, start-up included): a rack of only
#    input -> output writing stereo float (.w64), against
#    `sox in.wav -e floating-point -b 32 out.wav channels 2`.
# 2. Peak RSS (/usr/bin/time %M): render of a 10 s input against a LONG_SECONDS one (made
#    by sox in a temp folder, deleted after); the synth rack against the fluidsynth CLI.
# 3. The frozen default rack (Benchmarks/default-rack-baseline.json), instructions: its
#    octave double removed, muted (as frozen, -96 dB) and up (0 dB); and the whole rack
#    against the peer pipeline (fluidsynth CLI + sox delay/reverb chain + `sox -m`).
# 4. Silence (SignalSilence): the same rack idle (a silent voice, a song with no note) and
#    with long rests (sung and played 10 s of every 30 s) against the peer pipeline on the
#    same material (the jobs run in parallel: instruction counts do not mind); FluidSynth's
#    own share (fluid_synth_render_blocks, inclusive) of our playing rack and of the CLI.
#   PARTS="3 4" runs only those parts (default: all).
# valgrind 3.19 rejects the release binary's debug info: callgrind counts a copy made with
# `objcopy --strip-debug` (PEERS.md). Everything goes to .build/bench-render (and $TMPDIR).
set -euo pipefail
cd "$(dirname "$0")/../.."
S=${1:-60}
LONG_SECONDS=${LONG_SECONDS:-3600}
PARTS=${PARTS:-1 2 3 4}
part() { [[ " $PARTS " == *" $1 "* ]]; }
OUT=.build/bench-render
FONT=/usr/share/sounds/sf2/TimGM6mb.sf2
mkdir -p "$OUT"
for tool in sox fluidsynth valgrind /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "missing $tool (scripts/install-deps.sh --test)" >&2; exit 1; }
done
[[ -r $FONT ]] || { echo "missing $FONT (scripts/install-deps.sh --test)" >&2; exit 1; }

if [[ -z ${STAGERACK:-} ]]; then
    echo "== build" >&2
    swift build -c release --product stagerack >&2
fi
objcopy --strip-debug "${STAGERACK:-.build/release/stagerack}" "$OUT/stagerack"
SR="$OUT/stagerack"

echo "== material: ${S} s voice-like input, ${S} s MIDI song (Benchmarks/synth/make_song.py)" >&2
# A sung-like input: a sawtooth gliding 150-300 Hz through a formant band, with vibrato.
sox -n -r 48000 -c 1 -b 32 -e floating-point "$OUT/voice.wav" \
    synth "$S" sawtooth 150-300 synth sine amod 5 30 sinc -n 255 300-3000 vol 0.4 2>/dev/null
# The song cut to the length measured: the peers render the same S seconds of notes.
python3 Benchmarks/synth/make_song.py "$OUT/song.mid" "$S"
cat >"$OUT/io.json" <<'EOF'
{ "format": 2, "units": { "mic": { "type": "input" }, "out": { "type": "output" } }, "connections": [ "mic -> out" ] }
EOF
cat >"$OUT/synth.json" <<EOF
{ "format": 2, "units": { "synth": { "type": "synth", "soundfont": "$FONT", "channel": "all" }, "out": { "type": "output" } },
  "connections": [ "synth -> out" ] }
EOF
BASE=Benchmarks/default-rack-baseline.json
sed 's/"gain3": -96/"gain3": 0/' "$BASE" >"$OUT/baseline-up.json"
sed 's/    "mic -> double -> mix:3",//' "$BASE" >"$OUT/baseline-nodouble.json"
grep -q '"gain3": 0' "$OUT/baseline-up.json" && ! grep -q 'double -> mix' "$OUT/baseline-nodouble.json" \
    || { echo "the baseline rack changed: update the variants" >&2; exit 1; }

# Instructions of one command (callgrind's total, every thread, start-up included).
instr() {
    local f="$OUT/cg.out"
    valgrind --tool=callgrind --callgrind-out-file="$f" "$@" >/dev/null 2>"$OUT/vg.log" \
        || { cat "$OUT/vg.log" >&2; exit 1; }
    awk '/^summary:/ {print $2}' "$f"
}
# Peak resident memory of one command, in MB.
rss() {
    /usr/bin/time -f %M -o "$OUT/rss" "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
    awk '{printf "%.1f", $1 / 1024}' "$OUT/rss"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
M() { awk -v a="$1" 'BEGIN { printf "%.1f M", a / 1e6 }'; }

if part 1; then
echo "== 1. file I/O floor (instructions, ${S} s, start-up included)" >&2
ours=$(instr "$SR" render "$OUT/io.json" --input "$OUT/voice.wav" --duration "$S" --output "$OUT/io.w64")
ours_wav=$(instr "$SR" render "$OUT/io.json" --input "$OUT/voice.wav" --duration "$S" --output "$OUT/io.wav")
sox_f=$(instr sox "$OUT/voice.wav" -e floating-point -b 32 "$OUT/sox.wav" channels 2)
sox_copy=$(instr sox "$OUT/voice.wav" "$OUT/sox-copy.wav")
echo "render input -> output, stereo float .w64      $(M "$ours")"
echo "render input -> output, .wav (32-bit integer)   $(M "$ours_wav")"
echo "sox in -e floating-point -b 32 out channels 2   $(M "$sox_f")"
echo "sox in out (plain copy, mono float)             $(M "$sox_copy")"
echo "ratio: render .w64 / sox stereo float = $(ratio "$ours" "$sox_f") (goal <= 1.0); .wav / sox = $(ratio "$ours_wav" "$sox_f")"

fi

if part 2; then
echo "== 2. peak memory (RSS)" >&2
sox -n -r 48000 -c 1 -b 32 -e floating-point "$OUT/short.wav" synth 10 sine 440 vol 0.5
short=$(rss "$SR" render "$OUT/io.json" --input "$OUT/short.wav" --output "$OUT/short.w64")
echo "render, 10 s input                       $short MB"
if ((LONG_SECONDS > 0)); then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    sox -n -r 48000 -c 1 -b 32 -e floating-point "$tmp/long.wav" synth "$LONG_SECONDS" sine 440 vol 0.5
    long=$(rss "$SR" render "$OUT/io.json" --input "$tmp/long.wav" --output "$tmp/long.w64")
    rm -rf "$tmp"
    echo "render, ${LONG_SECONDS} s input                  $long MB   (difference $(awk -v a="$long" -v b="$short" 'BEGIN { printf "%.1f", a - b }') MB)"
fi
sox_rss=$(rss sox "$OUT/voice.wav" -e floating-point -b 32 "$OUT/sox.wav" channels 2)
echo "sox, ${S} s input                          $sox_rss MB"
synth_rss=$(rss "$SR" render "$OUT/synth.json" --midi "$OUT/song.mid" --output "$OUT/synth.wav")
fs_rss=$(rss fluidsynth -ni -F "$OUT/fs.wav" -r 48000 -o synth.reverb.active=0 -o synth.chorus.active=0 "$FONT" "$OUT/song.mid")
echo "synth rack, TimGM6mb                     $synth_rss MB"
echo "fluidsynth CLI, same font and song       $fs_rss MB"
echo "ratio: synth rack / fluidsynth = $(ratio "$synth_rss" "$fs_rss") (goal <= 2)"

fi

run_rack() { instr "$SR" render "$1" --input "${2:-$OUT/voice.wav}" --midi "${3:-$OUT/song.mid}" --duration "$S" --output "$OUT/rack.w64"; }
if part 3; then
echo "== 3. the frozen default rack (instructions, ${S} s voice + song)" >&2
none=$(run_rack "$OUT/baseline-nodouble.json")
muted=$(run_rack "$BASE")
up=$(run_rack "$OUT/baseline-up.json")
echo "baseline without the double        $(M "$none")"
echo "baseline, double muted (-96 dB)    $(M "$muted")   double costs $(M $((muted - none))) ($(awk -v a=$((muted - none)) -v b="$none" 'BEGIN { printf "%.2f", 100 * a / b }') %)"
echo "baseline, double up (0 dB)         $(M "$up")   double costs $(M $((up - none))) ($(awk -v a=$((up - none)) -v b="$none" 'BEGIN { printf "%.2f", 100 * a / b }') %)"
fs=$(instr fluidsynth -ni -F "$OUT/p-synth.wav" -r 48000 -o synth.reverb.active=0 -o synth.chorus.active=0 "$FONT" "$OUT/song.mid")
chain=$(instr sox "$OUT/voice.wav" "$OUT/p-voice.wav" echos 0.8 0.7 350 0.25 reverb 20)
mix=$(instr sox -m "$OUT/p-voice.wav" "$OUT/p-synth.wav" "$OUT/p-mix.wav")
peer=$((fs + chain + mix))
echo "peers: fluidsynth $(M "$fs") + sox chain $(M "$chain") + sox -m $(M "$mix") = $(M "$peer")"
echo "ratio: default rack (double muted) / peer pipeline = $(ratio "$muted" "$peer") (goal <= 0.6)"
fi

if part 4; then
echo "== 4. silence: the rack playing, idle and with long rests, against the peers (parallel jobs)" >&2
sox -n -r 48000 -c 1 -b 32 -e floating-point "$OUT/silent.wav" trim 0 "$S"
sox "$OUT/voice.wav" "$OUT/voice-rests.wav" trim 0 10 pad 0 20 repeat $(((S + 29) / 30 - 1)) trim 0 "$S"
python3 Benchmarks/render/rest_song.py empty "$OUT/empty.mid" "$S" >&2
python3 Benchmarks/render/rest_song.py rests "$OUT/rests.mid" "$S" >&2
# One callgrind profile per job, kept (cg-NAME.out); the totals go to NAME.count.
job() {
    local name=$1
    shift
    valgrind --tool=callgrind --callgrind-out-file="$OUT/cg-$name.out" "$@" >/dev/null 2>"$OUT/vg-$name.log" \
        || { cat "$OUT/vg-$name.log" >&2; return 1; }
    awk '/^summary:/ {print $2}' "$OUT/cg-$name.out" >"$OUT/$name.count"
}
ours() { job "ours-$1" "$SR" render "$BASE" --input "$2" --midi "$3" --duration "$S" --output "$OUT/rack-$1.w64"; }
peer() {
    job "fs-$1" fluidsynth -ni -F "$OUT/p-synth-$1.wav" -r 48000 -o synth.reverb.active=0 -o synth.chorus.active=0 "$FONT" "$3"
    job "chain-$1" sox "$2" "$OUT/p-voice-$1.wav" echos 0.8 0.7 350 0.25 reverb 20
    job "mix-$1" sox -m "$OUT/p-voice-$1.wav" "$OUT/p-synth-$1.wav" "$OUT/p-mix-$1.wav"
}
pids=()
for c in "playing $OUT/voice.wav $OUT/song.mid" "idle $OUT/silent.wav $OUT/empty.mid" "rests $OUT/voice-rests.wav $OUT/rests.mid"; do
    read -r name voice midi <<<"$c"
    ours "$name" "$voice" "$midi" & pids+=($!)
    peer "$name" "$voice" "$midi" & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "a job failed" >&2; exit 1; }; done
n() { cat "$OUT/$1.count"; }
echo "                        StageRack      peers = fluidsynth + sox chain + sox -m           ratio"
for name in playing idle rests; do
    o=$(n "ours-$name")
    p=$(($(n "fs-$name") + $(n "chain-$name") + $(n "mix-$name")))
    echo "$name: $(M "$o")   $(M "$p") = $(M "$(n "fs-$name")") + $(M "$(n "chain-$name")") + $(M "$(n "mix-$name")")   $(ratio "$o" "$p")   ($name / playing: ours $(ratio "$o" "$(n ours-playing)"), peers $(ratio "$p" $(($(n fs-playing) + $(n chain-playing) + $(n mix-playing)))))"
done
# The synth's share: FluidSynth's own work, the inclusive count of fluid_synth_write_float
# (voices, mixing; the CLI's file renderer calls it too), in our playing rack and in the CLI.
inclusive() {
    callgrind_annotate --inclusive=yes --threshold=100 "$OUT/cg-$1.out" 2>/dev/null \
        | awk '/fluid_synth_write_float / { gsub(",", "", $1); print $1; found = 1; exit } END { if (!found) print 0 }'
}
o=$(n ours-playing)
p=$(($(n fs-playing) + $(n chain-playing) + $(n mix-playing)))
ours_fluid=$(inclusive ours-playing)
cli_fluid=$(inclusive fs-playing)
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", 100 * a / b }'; }
echo "FluidSynth (fluid_synth_write_float, inclusive): our rack $(M "$ours_fluid") ($(pct "$ours_fluid" "$o") % of it); the CLI $(M "$cli_fluid") ($(pct "$cli_fluid" "$(n fs-playing)") % of it)"
echo "everything but FluidSynth: our rack $(M $((o - ours_fluid))), the peers $(M $((p - cli_fluid))): $(ratio $((o - ours_fluid)) $((p - cli_fluid)))"
echo "the goal 0.6 x peers = $(M $((p * 6 / 10))) against FluidSynth alone in our rack $(M "$ours_fluid"): $(ratio "$ours_fluid" "$p") of the peers before anything else"
echo "idle: fluid_synth_write_float in our rack $(M "$(inclusive ours-idle)"), in the CLI $(M "$(inclusive fs-idle)")"
fi
