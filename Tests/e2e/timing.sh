#!/usr/bin/env bash
# Live MIDI timing on a real kernel in the VM (report only: under TCG the guest's timing is
# the host's). A MIDI file of 60 notes at irregular times is played by aplaymidi straight to
# StageRack:in (the sequencer delivers each at its time); the Loopback card's output is
# recorded and each note's onset found; the spread of (onset − file time) is the jitter.
# Twice: with live events stamped for the next block's first frame (as before issue 13,
# STAGERACK_MIDI_TIMING=block), then scheduled on the audio clock at arrival + one period.
#   Tests/e2e/timing.sh            on the host: boots the VM, runs itself inside
# Last line: "N passed, N failed". A run fails when StageRack does not start or plays no
# note at all; the figures are a report (a busy host makes the guest underrun: then it says
# the jitter was not measurable, with the xrun count).
set -euo pipefail
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)

# ------------------------------------------------------------------ host side
if [[ ${E2E_IN_VM:-} != 1 ]]; then
    source "$SCRIPT_DIR/host.sh"
    run_in_vm timing 20 "$SCRIPT_DIR/timing.sh" "$@"
fi

# ------------------------------------------------------------------ guest side
WORK=${E2E_SHARE:-/tmp}/timing
rm -rf "$WORK"
mkdir -p "$WORK"
exec >"$WORK/log" 2>&1
BIN=$REPO/.build/release/stagerack
PERIOD=${E2E_PERIOD:-512}
PERIODS=${E2E_PERIODS:-3}
passed=0 failed=0
ok() { echo "ok   - $1"; passed=$((passed + 1)); }
bad() { echo "FAIL - $1${2:+: $2}"; failed=$((failed + 1)); }
wait_for() {
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.05
    done
}
cleanup() { pkill -x stagerack 2>/dev/null || true; pkill arecord 2>/dev/null || true; }
trap cleanup EXIT

# 60 short C4s, 120 to 280 ms apart (irregular, so no spacing lines up with the periods).
python3 -S - "$WORK/notes.mid" "$WORK/times.txt" <<'PY'
import struct, sys
def vlq(v):
    out = [v & 0x7F]
    v >>= 7
    while v:
        out.insert(0, (v & 0x7F) | 0x80)
        v >>= 7
    return bytes(out)
ppq, tempo = 480, 500000  # 960 ticks a second
times, t, state = [], 960, 12345
events = []
for k in range(60):
    state = (state * 1103515245 + 12345) & 0x7FFFFFFF
    t += 115 + state % 154  # 120…280 ms
    events += [(t, bytes([0x90, 60, 100])), (t + 58, bytes([0x80, 60, 0]))]
    times.append(t / 960.0)
track, last = b"", 0
for tick, e in events:
    track += vlq(tick - last) + e
    last = tick
track += b"\x00\xff\x2f\x00"
open(sys.argv[1], "wb").write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, ppq) + b"MTrk" + struct.pack(">I", len(track)) + track)
open(sys.argv[2], "w").write("\n".join("%.6f" % x for x in times))
PY

run_once() {  # run_once NAME TIMING: play the file through StageRack, record, measure
    local name=$1 timing=$2
    arecord -q -D hw:Loopback,1,0 -f FLOAT_LE -c 2 -r 48000 "$WORK/$name.wav" 2>"$WORK/arecord-$name.err" &
    local rec=$!
    STAGERACK_MIDI_TIMING=$timing "$BIN" play "$SCRIPT_DIR/racks/timing.json" --playback hw:Loopback,0,0 \
        --period "$PERIOD" --periods "$PERIODS" --no-config 2>"$WORK/stagerack-$name.log" &
    local sr=$!
    if ! wait_for 60 grep -q 'audio thread running' "$WORK/stagerack-$name.log"; then
        bad "$name: stagerack play started" "$(tr '\n' '|' <"$WORK/stagerack-$name.log")"
        kill $sr $rec 2>/dev/null || true
        return
    fi
    sleep 1
    aplaymidi -p StageRack:0 "$WORK/notes.mid" 2>"$WORK/aplaymidi-$name.err" || bad "$name: aplaymidi" "$(cat "$WORK/aplaymidi-$name.err")"
    sleep 1
    kill -TERM $sr
    wait $sr || true
    kill -INT $rec 2>/dev/null || true
    wait $rec 2>/dev/null || true
    local xruns
    xruns=$(grep -o '[0-9]* xruns\?' "$WORK/stagerack-$name.log" | tail -n1 || true)
    if python3 -S - "$WORK/$name.wav" "$WORK/times.txt" >"$WORK/$name.txt" <<'PY'
import struct, sys
raw = open(sys.argv[1], "rb").read()
pos, data = 12, b""
while pos + 8 <= len(raw):
    cid, size = raw[pos:pos + 4], struct.unpack("<I", raw[pos + 4:pos + 8])[0]
    if cid == b"data":
        data = raw[pos + 8:pos + 8 + size]
    pos += 8 + size + (size & 1)
n = len(data) // 8
left = struct.unpack("<%df" % (2 * n), data[:n * 8])[0::2]
times = [float(x) for x in open(sys.argv[2]).read().split()]
# Onsets: the first sample over 0.01 after at least 20 ms under it. Under TCG a busy host
# makes the guest underrun, and a gap's end looks like an onset too: each note takes the
# first onset within 40 ms of where it is due (the first note sets the offset), and the
# run counts if most notes are found.
onsets, quiet = [], 0
for i, x in enumerate(left):
    if abs(x) > 0.01:
        if quiet >= 960:
            onsets.append(i / 48000.0)
        quiet = 0
    else:
        quiet += 1
if not onsets:
    print("no note in the recording")
    sys.exit(1)
base = onsets[0] - times[0]
d = []
for t in times:
    near = [o for o in onsets if abs(o - t - base) < 0.04]
    if near:
        d.append(near[0] - t)
if len(d) < len(times) // 2:
    print("not measurable: found %d of %d notes (the guest underran)" % (len(d), len(times)))
    sys.exit(0)
mean = sum(d) / len(d)
sd = (sum((x - mean) ** 2 for x in d) / len(d)) ** 0.5
print("%d of %d notes: onset - file time spread %.2f ms (max - min), sd %.2f ms" % (len(d), len(times), (max(d) - min(d)) * 1000, sd * 1000))
PY
    then
        ok "$name: $(cat "$WORK/$name.txt") at ${PERIOD}x${PERIODS} (${xruns:-0 xruns})"
    else
        bad "$name: notes found" "$(cat "$WORK/$name.txt")"
    fi
}

run_once "block boundaries (before)" block
run_once "scheduled on the audio clock" clock
echo "$passed passed, $failed failed" | tee "$WORK/summary"
((failed == 0))
