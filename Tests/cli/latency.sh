#!/usr/bin/env bash
# `stagerack latency` (and the outputs it measures) through alsa-lib's file plugin (no sound hardware): no signal, too
# noisy, and a capture file holding the test signal where a known round trip puts it
# (found frame-exact, stored by --write, reported by play). The real loop is measured in
# the VM on snd-aloop (Tests/e2e/latency.sh). Last line: "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
source Tests/cli/harness.sh

cat >"$WORK/alsa.conf" <<CONF
pcm.lat_null { type null }
pcm.lat_out { type file  slave.pcm "lat_null"  format "raw"  truncate true  file "$WORK/playback.raw" }
pcm.lat_silent { type file  slave.pcm "lat_null"  format "raw"  file "/dev/null"  infile "/dev/zero" }
pcm.lat_noise { type file  slave.pcm "lat_null"  format "raw"  file "/dev/null"  infile "$WORK/noise.raw" }
pcm.lat_loop { type file  slave.pcm "lat_null"  format "raw"  file "/dev/null"  infile "$WORK/loop.raw" }
CONF
export ALSA_CONFIG_PATH="/usr/share/alsa/alsa.conf:$WORK/alsa.conf"
# Two seconds of loud noise; and the test signal (StageRack's 4095-sample MLS at -12 dBFS)
# on channel 2, 2 × 64 + 37 frames after the probe writes it (100 ms in).
python3 - "$WORK" <<'PY'
import random, struct, sys
work = sys.argv[1]
random.seed(1)
with open(work + "/noise.raw", "wb") as f:
    f.write(struct.pack("<%df" % 192000, *(random.uniform(-0.5, 0.5) for _ in range(192000))))
order, taps, state, mls = 12, (12, 11, 10, 4), 1, []
for _ in range((1 << order) - 1):
    mls.append(1.0 if state & 1 else -1.0)
    fb = 0
    for t in taps:
        fb ^= (state >> (order - t)) & 1
    state = (state >> 1) | (fb << (order - 1))
frames = [0.0] * (2 * 96000)
start = 4800 + 2 * 64 + 37
for i, v in enumerate(mls):
    frames[2 * (start + i) + 1] = v * 10 ** (-12 / 20)
with open(work + "/loop.raw", "wb") as f:
    f.write(struct.pack("<%df" % len(frames), *frames))
PY

nothing() {
  local out rc
  out=$("$BIN" latency --playback lat_out --capture lat_silent --period 64 --runs 1 --no-config 2>&1); rc=$?
  echo "$out"
  test $rc -eq 1 && grep -q 'no signal came back .*connect the playback output to the capture input' <<<"$out"
}
check "latency: nothing comes back: says to connect the cable, exit 1" nothing

noisy() {
  local out rc
  out=$("$BIN" latency --playback lat_out --capture lat_noise --period 64 --runs 1 --no-config 2>&1); rc=$?
  echo "$out"
  test $rc -eq 1 && grep -q 'too noisy' <<<"$out"
}
check "latency: loud noise and no signal: too noisy, exit 1" noisy

planted() {
  local out rc
  out=$("$BIN" latency --playback lat_out --capture lat_loop --period 64 --runs 1 --config "$WORK/cfg.json" --write 2>&1); rc=$?
  echo "$out"
  test $rc -eq 0 && grep -q 'period 64×2 at 48000 Hz: round trip 3.4 ms (165 frames)' <<<"$out" \
    && grep -q "StageRack's buffering 2.7 ms (128 frames = 2 × 64), the rest (converters, driver, USB) 0.8 ms (37 frames)" <<<"$out" \
    && grep -q '"hardwareLatency": 37' "$WORK/cfg.json" || return 1
  out=$("$BIN" play racks/monitor.json --config "$WORK/cfg.json" --playback lat_out --capture lat_silent --period 64 --duration 0.1 2>&1)
  echo "$out"
  grep -q 'latency 3.4 ms round trip: buffering 2.7 (64×2) + interface 0.8 (measured) + units 0 (slowest path)' <<<"$out" \
    && grep -q 'latency mic → ears (ch 3-4): 3.4 ms round trip' <<<"$out"
}
check "latency: a planted round trip is found frame-exact, --write stores it, play reports the true round trip" planted

outputs() {  # the monitor rack's two outputs, listed by validate; render writes one file each
  local out
  out=$("$BIN" validate racks/monitor.json 2>&1) || { echo "$out"; return 1; }
  grep -q 'racks/monitor.json: 2 outputs: "out" on channels 1-2, "ears" on channels 3-4 (playback opens 4 channels)' <<<"$out" || { echo "$out"; return 1; }
  out=$("$BIN" render racks/monitor.json --demo --duration 1 --output "$WORK/live.flac" 2>&1) || { echo "$out"; return 1; }
  grep -q "to $WORK/live.flac, $WORK/live-ears.flac" <<<"$out" && test -s "$WORK/live-ears.flac"
}
check "validate lists a rack's outputs; render writes OUT and OUT-ears" outputs

bad_list() { local out; out=$("$BIN" latency --period 32,x --no-config 2>&1); test $? -eq 2 && grep -q -- '--period: a list of frame counts' <<<"$out"; }
check "latency: a bad --period list is a usage error" bad_list

finish
