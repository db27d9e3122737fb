#!/usr/bin/env bash
# Smoke test of the e2e VM: proves the virtual ALSA devices work.
#   Tests/e2e/smoke.sh            on the host: boots the VM and runs itself inside
#   (inside the VM, E2E_IN_VM=1)  runs the checks
# Checks: /dev/snd/seq, Loopback card, VirMIDI sequencer clients, a 1 kHz tone
# through hw:Loopback,0,0 -> hw:Loopback,1,0, a MIDI note from rawmidi
# hw:VirMIDI,0 to a sequencer subscriber of 20:0.
# Last line: "N passed, N failed"; exit status non-zero on any failure.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# ------------------------------------------------------------------ host side
if [[ ${E2E_IN_VM:-} != 1 ]]; then
    share=$(mktemp -d "${E2E_VM_DIR:-$SCRIPT_DIR/../../.build/vm}/share-XXXX" 2>/dev/null) || {
        mkdir -p "${E2E_VM_DIR:-$SCRIPT_DIR/../../.build/vm}"
        share=$(mktemp -d "${E2E_VM_DIR:-$SCRIPT_DIR/../../.build/vm}/share-XXXX")
    }
    rc=0
    "$SCRIPT_DIR/run-in-vm.sh" --timeout "${E2E_TIMEOUT:-120}" --share "$share" -- "$SCRIPT_DIR/smoke.sh" "$@" || rc=$?
    # Repeat the guest's verdict as our own last line.
    if [[ -s $share/smoke/summary ]]; then
        cat "$share/smoke/summary"
    else
        echo "0 passed, 1 failed (the smoke test did not complete in the VM, status $rc)"
        ((rc)) || rc=1
    fi
    exit "$rc"
fi

# ------------------------------------------------------------------ guest side
WORK=${E2E_SHARE:-/tmp}/smoke
rm -rf "$WORK"
mkdir -p "$WORK"
passed=0 failed=0
T0=$EPOCHREALTIME
t() { awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%5.1fs", b - a }'; }
ok() { echo "ok   - [$(t)] $1"; passed=$((passed + 1)); }
bad() { echo "FAIL - [$(t)] $1${2:+: $2}"; failed=$((failed + 1)); }
summary() {
    echo "$passed passed, $failed failed" | tee "$WORK/summary"
    ((failed == 0))
}
# wait_for SECONDS COMMAND...: polls every 20 ms.
wait_for() {
    local deadline=$((SECONDS + $1)); shift
    local rc
    while :; do
        rc=0; "$@" || rc=$?
        ((rc == 0)) && return 0
        ((rc == 1 && SECONDS < deadline)) || return 1
        sleep 0.02
    done
}
# alive_and_grep PID PATTERN FILE: 0 if FILE matches; 1 to keep waiting; exits the
# wait (status 2, via wait_for) when the background process PID has died.
alive_and_grep() {
    grep -sq "$2" "$3" && return 0
    kill -0 "$1" 2>/dev/null || return 2
    return 1
}
BG=()
cleanup() { local p; for p in "${BG[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

echo "== e2e smoke test in $(uname -r) (guest uptime $(cut -d" " -f1 /proc/uptime)s), work dir $WORK"
for tool in aplay arecord amidi aseqdump aconnect stdbuf python3; do
    command -v "$tool" >/dev/null || { bad "tool $tool available" "not in PATH ($PATH)"; }
done
((failed == 0)) || { summary; exit 1; }

# 1. sequencer device
if [[ -c /dev/snd/seq ]]; then ok "/dev/snd/seq exists"; else bad "/dev/snd/seq exists" "$(ls /dev/snd 2>&1 | tr '\n' ' ')"; fi

# 2. Loopback card
aplay -l >"$WORK/aplay-l.txt" 2>&1 || true
if grep -q 'Loopback' "$WORK/aplay-l.txt"; then ok "aplay -l lists Loopback"; else bad "aplay -l lists Loopback" "$(head -c 300 "$WORK/aplay-l.txt")"; fi

# 3. VirMIDI sequencer clients
aconnect -l >"$WORK/aconnect-l.txt" 2>&1 || true
n=$(grep -c "^client [0-9]*: 'Virtual Raw MIDI" "$WORK/aconnect-l.txt" || true)
if grep -q "^client 20: 'Virtual Raw MIDI" "$WORK/aconnect-l.txt" && grep -q 'VirMIDI' "$WORK/aconnect-l.txt"; then
    ok "aconnect -l lists VirMIDI clients ($n, first is 20)"
else
    bad "aconnect -l lists VirMIDI clients" "$(head -c 300 "$WORK/aconnect-l.txt")"
fi

# 4. 1 kHz tone through the loopback cable (S16_LE stereo 48 kHz, raw files).
# python3 -S: skipping site.py saves ~0.7 s per start under TCG (stdlib only here).
RATE=48000
python3 -S - "$WORK/tone.raw" "$RATE" <<'PY'
import math, struct, sys
path, rate = sys.argv[1], int(sys.argv[2])
pre, tone, post = int(0.1 * rate), int(1.0 * rate), int(0.3 * rate)   # pad: aloop drops the last tick
v = [int(round(16000 * math.sin(2 * math.pi * 1000 * i / rate))) for i in range(tone)]
frames = [0] * pre + v + [0] * post
with open(path, 'wb') as f:
    f.write(struct.pack('<%dh' % (2 * len(frames)), *[s for s in frames for _ in (0, 1)]))
PY
status_file=/proc/asound/Loopback/pcm1c/sub0/status
arecord -q -t raw -D hw:Loopback,1,0 -f S16_LE -c 2 -r "$RATE" -d 20 "$WORK/rec.raw" 2>"$WORK/arecord.err" &
rec_pid=$!; BG+=("$rec_pid")
if ! wait_for 10 alive_and_grep "$rec_pid" 'state: RUNNING' "$status_file"; then
    bad "loopback capture starts" "$(tr '\n' ' ' <"$status_file" 2>&1) $(cat "$WORK/arecord.err")"
else
    aplay -q -t raw -D hw:Loopback,0,0 -f S16_LE -c 2 -r "$RATE" "$WORK/tone.raw" 2>"$WORK/aplay.err" \
        || bad "aplay into hw:Loopback,0,0" "$(cat "$WORK/aplay.err")"
    sleep 0.2
    kill -INT "$rec_pid" 2>/dev/null || true
    wait "$rec_pid" || true   # arecord's status after SIGINT says nothing; the data does
    if verdict=$(python3 -S - "$WORK/rec.raw" "$WORK/tone.raw" "$RATE" <<'PY'
import math, struct, sys
def left(path):
    raw = open(path, 'rb').read()
    raw = raw[:len(raw) // 4 * 4]
    return list(struct.unpack('<%dh' % (len(raw) // 2), raw))[0::2]
rec, ref, rate = left(sys.argv[1]), left(sys.argv[2]), int(sys.argv[3])
nz = [i for i, v in enumerate(rec) if v]
if not nz:
    print('recording is silent (%d frames)' % len(rec)); sys.exit(1)
# The tone is the first sound up to the first 50 ms of silence. (snd-aloop may emit
# one stale timer tick, ~4 ms of old ring-buffer data, after playback stops.)
a, b, gap = nz[0], nz[-1] + 1, rate // 20
for i, j in zip(nz, nz[1:]):
    if j - i > gap:
        b = i + 1
        break
tail = sum(1 for i in nz if i >= b)
sound = rec[a:b]
def goertzel(x, f):
    k = 2 * math.cos(2 * math.pi * f / rate); s1 = s2 = 0.0
    for v in x:
        s1, s2 = v + k * s1 - s2, s1
    return s1 * s1 + s2 * s2 - k * s1 * s2
rms = math.sqrt(sum(v * v for v in sound) / len(sound))
p1k, p500 = goertzel(sound, 1000), goertzel(sound, 500)
ratio_db = 10 * math.log10(p1k / p500) if p500 > 0 else 999.0
r0 = next(i for i, v in enumerate(ref) if v)
r1 = len(ref) - next(i for i, v in enumerate(reversed(ref)) if v)
exact = sound == ref[r0:r1]
print('tone at %.3fs, %.3f s long, rms=%.0f, 1kHz/500Hz=%.0f dB, bit_exact=%s, %d stray samples after' % (
    a / rate, (b - a) / rate, rms, min(ratio_db, 999), exact, tail))
sys.exit(0 if rms > 8000 and ratio_db > 30 and 0.95 < (b - a) / rate < 1.1 else 1)
PY
    ); then
        ok "1 kHz tone recorded from hw:Loopback,1,0 ($verdict)"
    else
        bad "1 kHz tone recorded from hw:Loopback,1,0" "$verdict; arecord: $(head -c 200 "$WORK/arecord.err")"
    fi
fi

# 5. MIDI note: rawmidi hw:VirMIDI,0 -> sequencer client 20:0 -> aseqdump
stdbuf -oL aseqdump -p 20:0 >"$WORK/aseqdump.txt" 2>&1 &
dump_pid=$!; BG+=("$dump_pid")
if ! wait_for 10 alive_and_grep "$dump_pid" 'Connected From: 20:0' /proc/asound/seq/clients; then
    bad "aseqdump subscribes to 20:0" "$(cat "$WORK/aseqdump.txt")"
else
    amidi -p hw:VirMIDI,0 -S '90 3C 64' 2>"$WORK/amidi.err" || bad "amidi -S into hw:VirMIDI,0" "$(cat "$WORK/amidi.err")"
    if wait_for 5 grep -sEq '20:0 +Note on +0, note 60, velocity 100' "$WORK/aseqdump.txt"; then
        ok "MIDI note on 60/100 from hw:VirMIDI,0 arrived at a subscriber of 20:0"
    else
        bad "MIDI note from hw:VirMIDI,0 arrived at 20:0" "aseqdump saw: $(tr '\n' '|' <"$WORK/aseqdump.txt")"
    fi
fi

summary
