#!/usr/bin/env bash
# Benchmarks/memory/run.sh: peak memory (RSS) of `stagerack play` against the fluidsynth CLI
# on the same SoundFont and the same song, side by side in one run (README.md beside this
# file has the figures).
#
#   Benchmarks/memory/run.sh [SECONDS]       (default 6 s of play)
#   STAGERACK=path/to/stagerack              (a binary already built: no build)
#   BEFORE=path/to/other/stagerack           (also measure another build, e.g. main's)
#
# Both play through alsa-lib's file plugin into the null device (no sound card needed).
# `play` runs racks/default.json (the vocal strip and the synth) with the song fed as raw
# MIDI in real time through STAGERACK_MIDI_PIPE; the CLI plays the same notes from the
# same pattern as a MIDI file (Benchmarks/synth/make_song.py's workload: an 8-note chord
# every 250 ms and a melody note every 125 ms). Each is run 3 times; the lowest peak RSS
# (VmHWM, sampled every 0.1 s) is printed. (VmLck is no measure under MCL_ONFAULT: it
# counts whole locked mappings, resident or not.)
set -euo pipefail
cd "$(dirname "$0")/../.."
S=${1:-6}
FONT=/usr/share/sounds/sf2/TimGM6mb.sf2
OUT=.build/bench-memory
mkdir -p "$OUT"
for tool in fluidsynth python3; do
    command -v "$tool" >/dev/null || { echo "missing $tool (scripts/install-deps.sh --test)" >&2; exit 1; }
done
[[ -r $FONT ]] || { echo "missing $FONT (scripts/install-deps.sh --test)" >&2; exit 1; }
if [[ -z ${STAGERACK:-} ]]; then
    swift build -c release --product stagerack >&2
    STAGERACK=.build/release/stagerack
fi
cat >"$OUT/alsa.conf" <<CONF
pcm.mem_null { type null }
pcm.mem_out { type file  slave.pcm "mem_null"  format "raw"  truncate true  file "/dev/null" }
pcm.mem_in { type file  slave.pcm "mem_null"  format "raw"  file "/dev/null"  infile "/dev/zero" }
CONF
export ALSA_CONFIG_PATH="/usr/share/alsa/alsa.conf:$PWD/$OUT/alsa.conf"
python3 Benchmarks/synth/make_song.py "$OUT/song.mid" >/dev/null

# Sends the song's first SECONDS as raw MIDI bytes into a FIFO, in real time.
cat >"$OUT/send.py" <<'PY'
import sys, time
path, seconds = sys.argv[1], float(sys.argv[2])
chords = [[36, 48, 52, 55, 60, 64, 67, 72], [33, 45, 52, 57, 60, 64, 69, 72],
          [29, 41, 53, 57, 60, 65, 69, 72], [31, 43, 50, 55, 59, 62, 67, 71]]
with open(path, "wb", buffering=0) as f:
    t0 = time.monotonic()
    events = []
    for k in range(int(seconds * 8)):
        t = k * 0.125
        if k % 2 == 0:
            c = chords[(k // 16) % 4]
            events += [(t, bytes([0x90, n, 90])) for n in c] + [(t + 0.24, bytes([0x80, n, 0])) for n in c]
        m = 72 + (k * 5) % 12
        events += [(t, bytes([0x90, m, 100])), (t + 0.115, bytes([0x80, m, 0]))]
    for t, b in sorted(events, key=lambda e: e[0]):
        d = t0 + t - time.monotonic()
        if d > 0: time.sleep(d)
        f.write(b)
PY

peak() {  # peak LABEL CMD...: runs CMD 3 times, prints the lowest VmHWM (MB), then it in kB
    local label=$1; shift
    local best=999999
    for _ in 1 2 3; do
        "$@" >/dev/null 2>"$OUT/run.log" &
        local pid=$! hwm=0
        while kill -0 $pid 2>/dev/null; do
            if [[ -r /proc/$pid/status ]]; then
                read -r h < <(awk '/^VmHWM/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
                [[ -n $h ]] && ((h > hwm)) && hwm=$h
            fi
            sleep 0.1
        done
        wait $pid || { echo "$label failed:"; tail -n 5 "$OUT/run.log"; return 1; }
        ((hwm < best)) && best=$hwm
    done
    printf '%-34s %7.1f MB peak RSS\n' "$label" "$(bc -l <<<"$best/1024")"
    echo "$best"
}

play_run() {  # play_run BINARY
    rm -f "$OUT/midi.fifo"; mkfifo "$OUT/midi.fifo"
    (python3 "$OUT/send.py" "$OUT/midi.fifo" "$S" &)
    STAGERACK_MIDI_PIPE="$OUT/midi.fifo" exec "$1" play racks/default.json --playback mem_out --capture mem_in \
        --duration "$S" --no-config
}
cli_run() {  # the whole song: the null device keeps no time, so the CLI plays it faster than real time
    exec fluidsynth -ni -q -a alsa -o audio.alsa.device=mem_out -o synth.lock-memory=1 -z 128 \
        "$FONT" "$OUT/song.mid"
}
echo "== peak memory, $S s (lowest of 3 runs each)"
cli=$(peak "fluidsynth CLI (same font, song)" cli_run | tee /dev/stderr | tail -n1)
now=$(peak "stagerack play (this build)" play_run "$STAGERACK" | tee /dev/stderr | tail -n1)
printf 'ratio: play / fluidsynth CLI = %.2f\n' "$(bc -l <<<"$now/$cli")"
if [[ -n ${BEFORE:-} ]]; then
    before=$(peak "stagerack play (BEFORE)" play_run "$BEFORE" | tee /dev/stderr | tail -n1)
    printf 'ratio: BEFORE / fluidsynth CLI = %.2f\n' "$(bc -l <<<"$before/$cli")"
fi
