#!/usr/bin/env bash
# The end-to-end scenario of issue 7 on a real kernel (snd-aloop, snd-virmidi) in the VM:
#   Tests/e2e/scenario.sh          on the host: builds the release stagerack, boots the VM,
#                                  runs itself inside
# Inside: `stagerack play` a rack on the Loopback card with its MIDI connected to a VirMIDI
# port by name; a "voice" is played into its capture side with aplay, a real MIDI file
# with aplaymidi into a VirMIDI port, the output recorded with arecord; then measured:
# synth notes at the right pitches in order, the voice shifted by the rack's interval, a
# CC lowering the synth at its moment, a forced xrun recovered, a controller that appears
# later picked up by name, exit 0 on SIGTERM with no process left, and a period too short
# for the machine named as such (32 frames). Xruns are reported, not bounded: under TCG
# the emulated CPU runs as fast as the host lets it, so their count measures the host (a
# fresh-clone CI on a loaded machine failed an xrun bound calibrated minutes before, 21 in
# 12 s against 20). What fails is what the guest controls: a device lost, a stream that
# stalled (played time far behind the wall clock, no status lines), a forced xrun not
# recovered, audio wrong or missing.
# Last line: "N passed, N failed"; exit status non-zero on any failure.
set -euo pipefail
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)

# ------------------------------------------------------------------ host side
if [[ ${E2E_IN_VM:-} != 1 ]]; then
    source "$SCRIPT_DIR/host.sh"
    run_in_vm scenario 40 "$SCRIPT_DIR/scenario.sh" "$@"
fi

# ------------------------------------------------------------------ guest side
WORK=${E2E_SHARE:-/tmp}/scenario
rm -rf "$WORK"
mkdir -p "$WORK"
exec >"$WORK/log" 2>&1
BIN=$REPO/.build/release/stagerack
PERIOD=${E2E_PERIOD:-512}
PERIODS=${E2E_PERIODS:-3}
passed=0 failed=0
ok() { echo "ok   - $1"; passed=$((passed + 1)); }
bad() { echo "FAIL - $1${2:+: $2}"; failed=$((failed + 1)); }
finish() {
    echo "$passed passed, $failed failed" | tee "$WORK/summary"
    ((failed == 0))
}
wait_for() {  # wait_for SECONDS COMMAND...: until COMMAND succeeds
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.05
    done
}
cleanup() { pkill -x stagerack 2>/dev/null || true; pkill arecord 2>/dev/null || true; pkill -f 'cat /dev/snd/midiC1D0' 2>/dev/null || true; }
trap cleanup EXIT

# Test material: a 200 Hz "voice" (2.5 s, stereo float WAV) and a MIDI file:
# C4 E4 G4 C5 (0.5 s each, from 0.5 s), then A4 held from 2.5 s to 4 s with CC7 = 0 at 3.25 s.
python3 -S - "$WORK" <<'PY'
import math, struct, sys
work = sys.argv[1]
rate, n = 48000, 48000 * 5 // 2
data = b"".join(struct.pack("<ff", *(2 * [0.25 * math.sin(2 * math.pi * 200 * i / rate)])) for i in range(n))
with open(work + "/voice.wav", "wb") as f:
    f.write(b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 3, 2, rate, rate * 8, 8, 32)
            + b"data" + struct.pack("<I", len(data)) + data)
def vlq(v):
    out = [v & 0x7F]
    v >>= 7
    while v:
        out.insert(0, (v & 0x7F) | 0x80)
        v >>= 7
    return bytes(out)
ppq = 480  # 120 BPM: 960 ticks per second
events = [(0, b"\xb0\x07\x7f")]
for k, note in enumerate([60, 64, 67, 72]):
    events += [(480 + k * 480, bytes([0x90, note, 100])), (480 + k * 480 + 470, bytes([0x80, note, 0]))]
events += [(2400, b"\x90\x45\x64"), (3120, b"\xb0\x07\x00"), (3840, b"\x80\x45\x00")]
track, last = b"", 0
for t, e in sorted(events, key=lambda x: x[0]):
    track += vlq(t - last) + e
    last = t
track += b"\x00\xff\x2f\x00"
with open(work + "/song.mid", "wb") as f:
    f.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, ppq) + b"MTrk" + struct.pack(">I", len(track)) + track)
PY

# 0. Xruns are sorted by the second they fall in, from the status lines (one a second: the
#    render load, the highest render time of a period over the period, and the xrun
#    count): a second whose load reached 100 % had a period that took longer to render than
#    it lasts, which under TCG is the emulated CPU's speed at that moment (the host's).
#    Both kinds are reported; neither is bounded.
xrun_profile() {  # xrun_profile LOG: prints "FIT_XRUNS FIT_SECONDS OVER_XRUNS OVER_SECONDS"
    # A line's count includes xruns up to a second old, and recovering from an overload
    # can take a few periods more: a second right after one at 100 % counts as over too.
    # The two status lines after the forced stall (the line STALL_LINE: the log's length
    # when the process was stopped) are left out.
    awk -v stall="${STALL_LINE:-0}" 'stall > 0 && NR == stall + 1 { skip = 2 }
         /^status: load/ { load = $3 + 0; x = $6 + 0; d = x - last; last = x; over = load >= 100 || prev >= 100; prev = load
                           if (skip > 0) { skip--; next }
                           if (over) { ox += d; os++ } else { fx += d; fs++ } }
         END { printf "%d %d %d %d\n", fx, fs, ox, os }' "$1"
}

# 1. The recorder first (what StageRack plays into Loopback 0,0 comes out of 1,0).
arecord -q -D hw:Loopback,1,0 -f FLOAT_LE -c 2 -r 48000 "$WORK/out.wav" 2>"$WORK/arecord.err" &
ARECORD=$!
wait_for 10 grep -q RUNNING /proc/asound/Loopback/pcm1c/sub0/status || bad "arecord started" "$(cat "$WORK/arecord.err")"

# 2. StageRack, as a user runs it: playback 0,0, capture 1,1, MIDI by name.
"$BIN" play "$SCRIPT_DIR/racks/scenario.json" --playback hw:Loopback,0,0 --capture hw:Loopback,1,1 \
    --period "$PERIOD" --periods "$PERIODS" --status 2>"$WORK/stagerack.log" &
SR=$!
SR_START=$SECONDS
if wait_for 60 grep -q 'audio thread running' "$WORK/stagerack.log" && wait_for 20 grep -q 'MIDI: connected: .*VirMIDI 1-1' "$WORK/stagerack.log"; then
    ok "stagerack play runs on the Loopback card and connected to VirMIDI 1-1 by name"
else
    bad "stagerack play started and connected" "$(tr '\n' '|' <"$WORK/stagerack.log")"
fi
grep -m1 'latency' "$WORK/stagerack.log" || true

# 3. The voice into the capture side, the MIDI file into VirMIDI 1-0, bridged raw into
#    VirMIDI 1-1 (the port the rack names): aplaymidi → 20:0 → hw:1,0 → hw:1,1 → 21:0 → StageRack.
cat /dev/snd/midiC1D0 >/dev/snd/midiC1D1 &
BRIDGE=$!
sleep 0.5
aplay -q -D plughw:Loopback,0,1 "$WORK/voice.wav" 2>"$WORK/aplay.err" &
APLAY=$!
wait $APLAY || bad "aplay the voice" "$(cat "$WORK/aplay.err")"
sleep 0.3
aplaymidi -p 20:0 "$WORK/song.mid" 2>"$WORK/aplaymidi.err" || bad "aplaymidi" "$(cat "$WORK/aplaymidi.err")"
sleep 0.5

# 4. Hotplug: a controller that appears now, by name, raises CC7 again, plays C5 and leaves.
if python3 -S "$SCRIPT_DIR/seqclient.py" LateController --wait-subscriber 15 --linger 0.6 "B0 07 7F" "90 48 64" >"$WORK/late.out" 2>&1 \
    && wait_for 10 grep -q 'MIDI: connected: LateController' "$WORK/stagerack.log"; then
    ok "a controller that appeared after the start was connected by name ($(head -n1 "$WORK/late.out"))"
else
    bad "hotplug controller" "$(cat "$WORK/late.out") | $(grep MIDI "$WORK/stagerack.log" | tr '\n' '|')"
fi
sleep 1.2

# 5. Xrun recovery on purpose: the whole process is stopped (SIGSTOP) for 0.2 s, far longer
#    than the buffer, then continued; the stream must come back and keep running, with the
#    xrun counted. (No test hook in the binary: the kernel's own job control stalls it.)
before=$(grep -o 'xruns [0-9]*' "$WORK/stagerack.log" | tail -n1 | awk '{print $2}')
STALL_LINE=$(wc -l <"$WORK/stagerack.log")
kill -STOP $SR
sleep 0.2
kill -CONT $SR
sleep 2.5
after=$(grep -o 'xruns [0-9]*' "$WORK/stagerack.log" | tail -n1 | awk '{print $2}')
if kill -0 $SR 2>/dev/null && ((${after:-0} > ${before:-0})); then
    ok "a forced stall was recovered as an xrun (count ${before:-0} → ${after:-0}) and the rack kept running"
else
    bad "forced xrun recovered" "before ${before:-?} after ${after:-?}"
fi

# 5. SIGTERM: exit 0, nothing left behind.
kill -TERM $SR
rc=0
wait $SR || rc=$?
SR_WALL=$((SECONDS - SR_START))
if ((rc == 0)) && ! pgrep -x stagerack >/dev/null; then ok "stagerack exits 0 on SIGTERM and leaves no process"; else bad "exit on SIGTERM" "status $rc"; fi
sleep 0.3
kill $BRIDGE 2>/dev/null || true
kill -INT $ARECORD 2>/dev/null || true
wait $ARECORD 2>/dev/null || true

# Xruns: StageRack's own failures are hard ones (a device lost, a stream that stopped
# coming back: played time far behind the wall clock, or no status lines). The count is
# reported: it measures the host's load under TCG (see 0. and Tests/e2e/README.md).
read -r PLAYED TOTAL_XRUNS <<<"$(sed -nE 's/.*stopped after ([0-9.]+) s, ([0-9]+) xruns?.*/\1 \2/p' "$WORK/stagerack.log")" || true
if grep -q 'audio device lost' "$WORK/stagerack.log"; then
    bad "every xrun recovered" "$(grep -m 3 'audio device lost' "$WORK/stagerack.log" | tr '\n' '|')"
elif [[ -z ${PLAYED:-} ]] || ! awk -v p="$PLAYED" -v w="$SR_WALL" 'BEGIN { exit !(p >= 0.25 * w) }'; then
    bad "every xrun recovered" "played ${PLAYED:-?} s in ${SR_WALL} s of wall time"
else
    ok "every xrun recovered: played $PLAYED s in ${SR_WALL} s of wall time, no device lost"
fi
read -r FIT FIT_S OVER OVER_S <<<"$(xrun_profile "$WORK/stagerack.log")"
summary="$FIT in $FIT_S s under 100 % load, $OVER in $OVER_S s at 100 % load or over (the emulated CPU too slow then), ${TOTAL_XRUNS:-?} in all, at ${PERIOD}x${PERIODS}"
if ((FIT_S + OVER_S == 0)); then
    bad "status lines every second" "no status lines in the log"
else
    ok "status lines every second ($((FIT_S + OVER_S)) in ${SR_WALL} s)"
    echo "report: xruns $summary (reported, not bounded: under TCG they measure the host)"
fi

# 6. Measure the recording.
python3 -S - "$WORK/out.wav" <<'PY' >"$WORK/analysis.txt"
import math, struct, sys
raw = open(sys.argv[1], "rb").read()
pos, fmt, data = 12, None, b""
while pos + 8 <= len(raw):
    cid, size = raw[pos:pos + 4], struct.unpack("<I", raw[pos + 4:pos + 8])[0]
    if cid == b"data":
        data = raw[pos + 8:pos + 8 + size]
    pos += 8 + size + (size & 1)
n = len(data) // 8
left = struct.unpack("<%df" % (2 * n), data[:n * 8])[0::2]
rate, win = 48000, 2400  # 50 ms windows
names = {200.0: "dry", 299.66: "voice+700", 261.63: "C4", 329.63: "E4", 392.0: "G4", 523.25: "C5", 440.0: "A4"}
coef = {f: 2 * math.cos(2 * math.pi * f / rate) for f in names}
hann = [0.5 - 0.5 * math.cos(2 * math.pi * i / (win - 1)) for i in range(win)]
labels, levels = [], []
for w in range(n // win):
    seg = left[w * win:(w + 1) * win]
    mags = {}
    for f, c in coef.items():
        s1 = s2 = 0.0
        for i, x in enumerate(seg):
            s0 = x * hann[i] + c * s1 - s2
            s2, s1 = s1, s0
        mags[f] = math.sqrt(max(s1 * s1 + s2 * s2 - c * s1 * s2, 0)) * 4 / win
    rms = math.sqrt(sum(x * x for x in seg) / win)
    best = max(mags, key=mags.get)
    labels.append(names[best] if mags[best] > 0.003 else "-")
    levels.append((rms, mags))
runs = []
for i, l in enumerate(labels):
    if runs and runs[-1][0] == l:
        runs[-1][2] = i
    else:
        runs.append([l, i, i])
# An xrun leaves a gap of about one buffer (32 ms at 512x3): a window or two off the
# label. Runs of the same label split by such a gap (up to 3 windows, 150 ms) are one run
# (under TCG on a busy host the scenario gets xruns every second; an xrun is counted and
# reported above, the music is checked here). A longer gap is audio missing.
runs_all = [list(r) for r in runs]
merged = []
for r in runs:
    if r[0] == "-" or r[2] - r[1] < 1:
        continue
    if merged and merged[-1][0] == r[0] and r[1] - merged[-1][2] <= 4:
        merged[-1][2] = r[2]
    else:
        merged.append(list(r))
runs = [r for r in merged if r[2] - r[1] >= 2]
print("runs", " ".join("%s@%.2f-%.2f" % (r[0], r[1] * 0.05, (r[2] + 1) * 0.05) for r in runs))
seq = [r[0] for r in runs]
voice = [r for r in runs if r[0] == "voice+700"]
# The dry voice would be a sustained 200 Hz: windows in "dry" runs of two or more (a
# single window is an xrun's click, broadband, where any probe frequency may come out on top).
dry_windows = sum(r[2] - r[1] + 1 for r in runs_all if r[0] == "dry" and r[2] > r[1])
if voice:
    # Every run of the shifted voice counts: under TCG a burst of xruns (the host's load,
    # reported above) can cut the phrase in two with a gap longer than the merge allows.
    ratios = [levels[i][1][299.66] / max(levels[i][1][200.0], 1e-9)
              for v in voice for i in range(v[1] + 2, v[2] - 1) if labels[i] == "voice+700"]
    shifted = sum(v[2] - v[1] + 1 for v in voice)
    # A dry leak lowers every window's ratio; an xrun's click (broadband) lowers one or two.
    median = sorted(ratios)[len(ratios) // 2] if ratios else 0
    clean = sum(1 for r in ratios if r > 5) / max(len(ratios), 1)
    print("voice %.2f s shifted in %d run(s), dry windows %d, shifted/dry ratio median %.1f, min %.1f, over 5 in %.0f %% of windows"
          % (shifted * 0.05, len(voice), dry_windows, median, min(ratios) if ratios else 0, 100 * clean))
    print("VOICE_OK" if shifted >= 31 and dry_windows == 0 and median > 20 and clean >= 0.8 else "VOICE_BAD")
else:
    print("VOICE_BAD no shifted voice")
want = ["C4", "E4", "G4", "C5", "A4"]
it = iter(seq)
print("NOTES_OK" if all(any(x == w for x in it) for w in want) else "NOTES_BAD %s" % seq)
a4 = [r for r in runs if r[0] == "A4"]
if a4:
    r = a4[0]
    start = r[1]
    before = max(levels[i][0] for i in range(start + 3, start + 12))
    after = max(levels[i][0] for i in range(start + 18, min(start + 28, len(levels))))
    drop = 20 * math.log10(before / max(after, 1e-9))
    # The first window more than 20 dB down, in seconds after the note's onset (CC at 0.75 s).
    at = next(((i - start) * 0.05 for i in range(start + 3, len(levels)) if levels[i][0] < before / 10), -1)
    print("cc drop %.1f dB, %.2f s after the A4 onset" % (drop, at))
    # The CC comes 0.75 s after the note on; it reaches StageRack through a `cat` bridge at
    # normal priority, which a busy guest delays by up to a few periods (as it may the note).
    print("CC_OK" if drop > 20 and 0.55 <= at <= 1.0 else "CC_BAD")
else:
    print("CC_BAD no A4")
late = "A4" in seq and "C5" in seq[seq.index("A4") + 1:]
print("LATE_OK" if late else "LATE_BAD")
PY
cat "$WORK/analysis.txt"
grep -q VOICE_OK "$WORK/analysis.txt" && ok "the voice came out shifted up a fifth (200 → 299.7 Hz), no dry voice" || bad "voice shifted" "$(grep -i voice "$WORK/analysis.txt")"
grep -q NOTES_OK "$WORK/analysis.txt" && ok "the synth played C4 E4 G4 C5 A4 in order at their pitches" || bad "synth notes" "$(grep NOTES "$WORK/analysis.txt")"
grep -q CC_OK "$WORK/analysis.txt" && ok "CC7 = 0 lowered the synth by more than 20 dB at its moment ($(grep 'cc drop' "$WORK/analysis.txt"))" || bad "CC moved the level" "$(grep -i cc "$WORK/analysis.txt")"
grep -q LATE_OK "$WORK/analysis.txt" && ok "the late controller's note (C5) reached the synth" || bad "late controller's note heard"

# 7. A period this emulated CPU cannot keep (32 frames × 2: every restart xruns again):
#    `play` says in words that the period is too short. If the VM ever does keep it (most of
#    the audio moved), the warning must not come.
timeout -s INT -k 5 8 "$BIN" play "$SCRIPT_DIR/racks/scenario.json" --playback hw:Loopback,0,2 --capture hw:Loopback,1,3 \
    --period 32 --periods 2 --duration 4 2>"$WORK/starved.log" || true
read -r STARVED_PLAYED <<<"$(sed -nE 's/.*stopped after ([0-9.]+) s.*/\1/p' "$WORK/starved.log")" || true
if grep -q 'the period is too short for this machine' "$WORK/starved.log"; then
    ok "at 32x2 play said the period is too short ($(grep -m1 -o 'only [0-9.]* s of audio moved in the last [0-9.]* s' "$WORK/starved.log"))"
elif awk -v p="${STARVED_PLAYED:-0}" 'BEGIN { exit !(p >= 3.5) }'; then
    ok "at 32x2 the VM kept up (played ${STARVED_PLAYED} s): no warning, none expected"
else
    bad "a period too short is named" "played ${STARVED_PLAYED:-?} s, no warning: $(grep -m2 xrun "$WORK/starved.log" | tr '\n' '|')"
fi
finish
