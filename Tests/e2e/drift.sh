#!/usr/bin/env bash
# Capture and playback on two cables of snd-aloop with different clocks, in the VM:
# `play --drift-compensation` with playback on hw:Loopback,0,0 and capture on
# hw:Loopback,1,1, whose cable is made 100 ppm fast with snd-aloop's "PCM Rate Shift
# 100000" control (100010). A 1 kHz tone is played into the capture cable; the rack passes
# it through. Checked: the log says the compensation runs, the status lines show the
# measured drift near +100 ppm and a ratio below 1, the capture ring never ran short or
# over after the start, and the tone recorded from the playback cable is there. Reported:
# the tone's frequency on the playback clock (1000.1 Hz when the capture clock's time is
# kept), the xruns (TCG on a busy host). Periods of 1024 frames (E2E_DRIFT_PERIOD): under
# TCG on a loaded host 256-frame periods xrun continuously. About 80 s of VM time.
#   Tests/e2e/drift.sh              on the host: boots the VM, runs itself inside
# Not in `make e2e`: it has not passed, and under TCG snd-aloop is no clock to test it with
# (the shifted cable measured +5.7 to +48.6 ppm against the other, not +100, and each
# cable's position wanders ±1,000 frames against the guest's clock: aloop-clock.sh,
# Tests/e2e/README.md).
# Last line: "N passed, N failed".
set -euo pipefail
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)

# ------------------------------------------------------------------ host side
if [[ ${E2E_IN_VM:-} != 1 ]]; then
    source "$SCRIPT_DIR/host.sh"
    run_in_vm drift 20 "$SCRIPT_DIR/drift.sh" "$@"
fi

# ------------------------------------------------------------------ guest side
WORK=${E2E_SHARE:-/tmp}/drift
rm -rf "$WORK"
mkdir -p "$WORK"
exec >"$WORK/log" 2>&1
BIN=$REPO/.build/release/stagerack
SECONDS_PLAYED=${E2E_DRIFT_SECONDS:-60}
PERIOD=${E2E_DRIFT_PERIOD:-1024}
passed=0 failed=0
ok() { echo "ok   - $1"; passed=$((passed + 1)); }
bad() { echo "FAIL - $1${2:+: $2}"; failed=$((failed + 1)); }
cleanup() { pkill -x stagerack 2>/dev/null || true; pkill -x aplay 2>/dev/null || true; pkill -x arecord 2>/dev/null || true; }
trap cleanup EXIT

# The capture cable (subdevice 1) 100 ppm fast.
amixer -c Loopback controls | grep -i 'rate shift' | head -4 || true

if amixer -q -c Loopback cset "iface=PCM,name=PCM Rate Shift 100000,device=0,subdevice=1" 100010 \
    && amixer -q -c Loopback cset "iface=PCM,name=PCM Rate Shift 100000,device=1,subdevice=1" 100010; then
    ok "snd-aloop's cable 1 set 100 ppm fast (PCM Rate Shift 100010)"
else
    bad "snd-aloop's rate shift control"
fi
amixer -c Loopback cget "iface=PCM,name=PCM Rate Shift 100000,device=0,subdevice=1" | tail -1 || true

cat >"$WORK/thru.json" <<'RACK'
{ "format": 2, "units": { "mic": { "type": "input", "channel": 1 }, "out": { "type": "output" } }, "connections": [ "mic -> out" ] }
RACK
python3 -S - "$WORK/tone.wav" "$((SECONDS_PLAYED + 10))" <<'PY'
import math, struct, sys, wave
w = wave.open(sys.argv[1], "wb")
w.setnchannels(1); w.setsampwidth(2); w.setframerate(48000)
w.writeframes(b"".join(struct.pack("<h", int(16000 * math.sin(2 * math.pi * 1000 * n / 48000))) for n in range(int(sys.argv[2]) * 48000)))
w.close()
PY
arecord -q -D hw:Loopback,1,0 -f S16_LE -c 2 -r 48000 "$WORK/out.wav" 2>"$WORK/arecord.err" &
AREC=$!
for _ in $(seq 200); do grep -q RUNNING /proc/asound/Loopback/pcm1c/sub0/status 2>/dev/null && break; sleep 0.05; done
# stagerack opens the capture end first (the cable takes its format); the tone joins through plug.
"$BIN" play "$WORK/thru.json" --no-config --playback hw:Loopback,0,0 --capture hw:Loopback,1,1 --period "$PERIOD" --periods 3 \
    --drift-compensation --duration "$SECONDS_PLAYED" --status >"$WORK/play.log" 2>&1 &
PLAY=$!
for _ in $(seq 600); do grep -q 'info: running ' "$WORK/play.log" 2>/dev/null && break; sleep 0.1; done
aplay -q -D plughw:Loopback,0,1 "$WORK/tone.wav" 2>"$WORK/aplay.err" &
APLAY=$!
wait $PLAY || true
kill -INT $AREC 2>/dev/null || true
wait $AREC || true
kill $APLAY 2>/dev/null || true
wait $APLAY 2>/dev/null || true
grep -v '^status' "$WORK/play.log" | grep -v 'MIDI: connected' | head -30 || true
grep '^status' "$WORK/play.log" | awk 'NR % 5 == 0' | head -20 || true

if grep -q 'drift compensation: capture hw:Loopback,1,1 resampled to the clock of playback hw:Loopback,0,0' "$WORK/play.log"; then
    ok "play runs the drift compensation (capture and playback on different devices)"
else
    bad "play runs the drift compensation" "$(grep -i drift "$WORK/play.log" | head -3)"
fi
# The drift measured over the last five status lines: +100 ppm within 50. The loop settles
# in about a minute (0.01 Hz; 89 % of the way at 60 s), and snd-aloop's position moves a
# timer tick at a time (192 frames at HZ=250), which makes the reading wobble.
last=$(grep -o 'drift [-+][0-9.]* ppm, ratio [0-9.]*' "$WORK/play.log" | tail -5 || true)
echo "last drift readings:"; echo "$last"
if [[ -n $last ]] && echo "$last" | awk '{ v = $2 + 0; if (v < 50 || v > 150) bad = 1; r = $5 + 0; if (r >= 1) bad = 1 } END { exit bad }'; then
    ok "the status shows the measured drift near +100 ppm (±50) and a ratio below 1"
else
    bad "the status shows the measured drift near +100 ppm" "${last:-no drift in the status lines}"
fi
if grep -q 'capture clock: drift' "$WORK/play.log"; then
    ok "the log reports the capture clock's drift"
else
    bad "the log reports the capture clock's drift"
fi
# The capture ring: short or dropped frames after the start are a failure of the loop.
if grep -q 'the capture ring ran' "$WORK/play.log"; then
    bad "the capture ring never ran short or over" "$(grep 'the capture ring ran' "$WORK/play.log" | head -2)"
else
    ok "the capture ring never ran short or over"
fi
echo "report: $(grep -m1 'stopped after' "$WORK/play.log" || echo 'play did not stop cleanly')"
result=$(python3 -S - "$WORK/out.wav" <<'PY'
import math, struct, sys
data = open(sys.argv[1], "rb").read()
i = data.find(b"data")
raw = data[i + 8:] if i >= 0 else b""
n = len(raw) // 4
x = struct.unpack("<%dh" % (2 * n), raw[:4 * n])[0::2]
peak = max((abs(v) for v in x), default=0)
# The tone's frequency by interpolated rising zero crossings over the loud middle part.
loud = [k for k in range(0, n, 480) if abs(x[k]) > peak / 4] if peak else []
first, last = (loud[0] + 48000, loud[-1] - 48000) if len(loud) > 2 else (0, 0)
cross = [k + x[k] / (x[k] - x[k + 1]) for k in range(first, last) if x[k] <= 0 < x[k + 1]]
freq = (len(cross) - 1) * 48000 / (cross[-1] - cross[0]) if len(cross) > 2 else 0
print("%.4f %d %.1f" % (freq, peak, (last - first) / 48000))
PY
)
read -r freq peak span <<<"$result"
echo "report: the tone recorded from the playback cable: ${freq} Hz over ${span} s (1000.1 Hz is the capture clock's time kept; 1000.0 its samples played on the playback clock), peak $peak"
if awk -v f="$freq" -v p="$peak" 'BEGIN { exit !(p > 8000 && f > 999.5 && f < 1000.5) }'; then
    ok "the 1 kHz tone passes through (${freq} Hz, peak $peak)"
else
    bad "the 1 kHz tone passes through" "$result"
fi
echo "$passed passed, $failed failed" | tee "$WORK/summary"
((failed == 0))
