#!/usr/bin/env bash
# Command-line tests of the release `stagerack`: exit codes, messages, signals, files.
# Live audio runs through alsa-lib's file plugin (no sound hardware needed).
# Last line: "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
source Tests/cli/harness.sh

cat >"$WORK/alsa.conf" <<CONF
pcm.cli_null { type null }
pcm.cli_out { type file  slave.pcm "cli_null"  format "raw"  truncate true  file "$WORK/playback.raw" }
pcm.cli_in { type file  slave.pcm "cli_null"  format "raw"  file "/dev/null"  infile "$WORK/capture.raw" }
CONF
export ALSA_CONFIG_PATH="/usr/share/alsa/alsa.conf:$WORK/alsa.conf"
# Ten seconds of a stereo float tone as the "microphone".
python3 - "$WORK/capture.raw" <<'PY'
import math, struct, sys
with open(sys.argv[1], "wb") as f:
    f.write(b"".join(struct.pack("<ff", *(2 * [0.3 * math.sin(2 * math.pi * 440 * i / 48000)])) for i in range(480000)))
PY

# Output is captured before it is searched: `"$BIN" ... | grep -q` fails under pipefail when
# grep exits at the first match and the writer then dies of SIGPIPE.
version() { local out; out=$("$BIN" --version) && grep -q '^stagerack ' <<<"$out"; }
check "--version" version

help_all() {
  local c out
  for c in play render validate units graph devices install-service; do
    out=$("$BIN" "$c" --help) && grep -q "usage: stagerack $c" <<<"$out" || return 1
  done
}
check "--help on every command" help_all

help_play_users() {  # no test hook in the binary or its help (the e2e stall is SIGSTOP: Tests/e2e/README.md)
  local out
  out=$("$BIN" play --help) && grep -q -- '--device-wait SECONDS|forever\] \[--config' <<<"$out" && ! grep -q SIGUSR1 <<<"$out"
}
check "play --help: --device-wait takes forever; no test hook advertised" help_play_users

unknown() { local out rc; out=$("$BIN" rendr 2>&1); rc=$?; grep -q 'did you mean "render"' <<<"$out" && test $rc -eq 2; }
check "unknown command suggests the right one, exit 2" unknown

validate_good() { "$BIN" validate racks/*.json Tests/Fixtures/setlists/echo-a.json; }
check "validate: shipped racks are valid" validate_good

validate_bad() {
  local out
  out=$("$BIN" validate Tests/Fixtures/racks/invalid/parameter-out-of-range.json 2>&1)
  local rc=$?
  test $rc -eq 1 && grep -q 'parameter-out-of-range.json:6:64: units.mix.params.gain2: 40 is outside -96…24 dB' <<<"$out" \
    && ! grep -qi 'fatal\|stack' <<<"$out"
}
check "validate: bad rack gives file:line:col, exit 1, no stack trace" validate_bad

validate_setlist() {
  local out
  out=$("$BIN" validate Tests/Fixtures/setlists/gig.json 2>&1)
  test $? -eq 1 && grep -q 'broken-c.json:1:44: units.out.type: unknown unit type "outptu"' <<<"$out"
}
check "validate: a setlist checks every rack" validate_setlist

render_demo() {
  "$BIN" render racks/default.json --demo --output "$WORK/demo.wav" 2>"$WORK/render.log" || return 1
  grep -q 'rendered 9 s to .*demo.wav: peak .* dBFS, CPU .* s, .*x real time' "$WORK/render.log" && test -s "$WORK/demo.wav"
}
check "render: the default rack's demo" render_demo

render_one_switch() {  # a counted noun agrees with its count: "1 switch", not "1 switches"
  python3 - "$WORK/one-switch.mid" <<'PY'
import struct, sys
track = b"\x00\xc0\x01" + b"\x83\x60\xff\x2f\x00"  # program change to song 2, end of track 0.5 s later
open(sys.argv[1], "wb").write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, 480) + b"MTrk" + struct.pack(">I", len(track)) + track)
PY
  local out
  out=$("$BIN" render Tests/Fixtures/setlists/gig.json --midi "$WORK/one-switch.mid" --duration 1 --output "$WORK/one.wav" 2>&1) \
    || { echo "$out"; return 1; }
  grep -q ', 1 switch,\|, 1 switch$' <<<"$out" || { echo "$out"; return 1; }
}
check "render: a setlist with one program change reports \"1 switch\"" render_one_switch

render_needs_output() { ! "$BIN" render racks/default.json --demo 2>/dev/null; }
check "render: --output is required" render_needs_output

render_input_problems() {  # the file named, what is wrong said, --midi suggested for a MIDI file
  local out rc
  printf 'MThd\0\0\0\6\0\0\0\1\1\340MTrk\0\0\0\4\0\377\57\0' >"$WORK/song.mid"
  out=$("$BIN" render racks/monitor.json --input "$WORK/song.mid" --output "$WORK/x.wav" 2>&1); rc=$?
  test $rc -ne 0 && grep -q -- "--input .*song.mid: is a MIDI file, not audio: give it with --midi .*song.mid" <<<"$out" \
    && ! grep -q 'Format not recognised' <<<"$out" || { echo "exit $rc: $out"; return 1; }
  out=$("$BIN" render racks/monitor.json --input "$WORK/nothere.wav" --output "$WORK/x.wav" 2>&1); rc=$?
  test $rc -ne 0 && grep -q -- "--input .*nothere.wav: no such file" <<<"$out" && ! grep -q 'System error' <<<"$out" \
    || { echo "exit $rc: $out"; return 1; }
  printf 'not audio at all, just words\n' >"$WORK/notes.wav"
  out=$("$BIN" render racks/monitor.json --input "$WORK/notes.wav" --output "$WORK/x.wav" 2>&1); rc=$?
  test $rc -ne 0 && grep -q -- "--input .*notes.wav: not an audio file this program reads" <<<"$out" || { echo "exit $rc: $out"; return 1; }
}
check "render --input: a MIDI file, a missing file, a text file: each named and said what it is" render_input_problems

setlist_all_errors() {  # the setlist's own errors and its missing rack in one report
  mkdir -p "$WORK/sets/sub"
  cp racks/monitor.json "$WORK/sets/"
  printf '{ "format": 1, "songs": [ { "rack": "../monitor.json", "program": 1 }, { "rack": "../gone.json", "program": 2 },\n  { "rack": "../monitor.json", "progam": 3 } ] }\n' \
    >"$WORK/sets/sub/set.json"
  local out
  out=$("$BIN" validate "$WORK/sets/sub/set.json" 2>&1)
  test $? -eq 1 && grep -q 'set.json:2:32: songs\[2\].progam: unknown key' <<<"$out" \
    && grep -q 'set.json:1:.*songs\[1\].rack: .*gone.json' <<<"$out" || { echo "$out"; return 1; }
}
check "validate: a setlist's own errors and a missing rack reported at once" setlist_all_errors

setlist_paths_normalised() {  # racks/setlists/../monitor.json is racks/monitor.json
  mkdir -p "$WORK/norm/setlists"
  cp Tests/Fixtures/racks/invalid/parameter-out-of-range.json "$WORK/norm/bad.json"
  printf '{ "format": 1, "songs": [ { "rack": "../bad.json", "program": 1 }, { "rack": "./../bad.json", "program": 2 } ] }\n' \
    >"$WORK/norm/setlists/set.json"
  local out bin
  bin=$(realpath "$BIN")
  out=$(cd "$WORK" && "$bin" validate norm/setlists/set.json 2>&1)
  grep -q '^norm/bad.json:6:64: units.mix.params.gain2' <<<"$out" && ! grep -q '\.\./\|/\./' <<<"$out" || { echo "$out"; return 1; }
}
check "validate: a setlist's song paths print normalised (no setlists/../)" setlist_paths_normalised

graph() { local out; out=$("$BIN" graph racks/default.json) && [[ ${out%%$'\n'*} == digraph* ]]; }
check "graph: DOT output" graph

units() {
  local all mixer
  all=$("$BIN" units) && mixer=$("$BIN" units mixer) && grep -q '^mixer:' <<<"$all" && grep -q 'pan1' <<<"$mixer"
}
check "units: types and parameters" units

lv2_units() {  # needs mda-lv2 and x42-plugins (scripts/install-deps.sh --test)
  local list one missing rc
  list=$("$BIN" units lv2) && one=$("$BIN" units 'http://gareus.org/oss/lv2/fil4#mono') || return 1
  grep -q '^  http://drobilla.net/plugins/mda/DeEss  MDA De-ess' <<<"$list" \
    && grep -q '^  freq1: 20…2000 Hz, default 160 - port 17, logarithmic' <<<"$one" || return 1
  missing=$("$BIN" units http://drobilla.net/plugins/mda/DeEs 2>&1); rc=$?
  test $rc -eq 2 && grep -q 'did you mean "http://drobilla.net/plugins/mda/DeEss"' <<<"$missing"
}
check "units lv2 / units URI: installed LV2 plugins and one plugin's parameters" lv2_units

lv2_presets_state() {  # needs mda-lv2 and x42-plugins: presets listed, a state printed for the rack file
  local detune state bad rc
  detune=$("$BIN" units http://drobilla.net/plugins/mda/Detune) || return 1
  grep -q '^  presets ("preset": NAME): "Out Of Tune", "Stereo Detune", "Symphonic"' <<<"$detune" || return 1
  state=$("$BIN" units 'http://gareus.org/oss/lv2/zeroconvolv#Mono' --state --preset 'No-OP Mono' 2>/dev/null) || return 1
  grep -q '"http://gareus.org/oss/lv2/zeroconvolv#ir": { "type": "http://lv2plug.in/ns/ext/atom#Path", "value": "/usr/lib/lv2/zeroconvo.lv2/ir/delta-48k.wav" }' <<<"$state" || return 1
  bad=$("$BIN" units 'http://gareus.org/oss/lv2/zeroconvolv#Mono' --state --preset 'No-OP' 2>&1); rc=$?
  test $rc -eq 2 && grep -q 'has no preset "No-OP" .*its presets: "No-OP Mono"' <<<"$bad"
}
check "units URI: an LV2 plugin's presets; --state prints its state as a rack unit's \"state\"" lv2_presets_state

lv2_validate() {
  local out
  printf '%s\n' '{ "format": 2, "units": { "mic": { "type": "input" },' \
    '  "eq": { "type": "lv2", "plugin": "http://lsp-plug.in/plugins/lv2/para_equalizer_x8_mono" },' \
    '  "out": { "type": "output" } }, "connections": [ "mic -> eq -> out" ] }' >"$WORK/lv2.json"
  out=$("$BIN" validate "$WORK/lv2.json" 2>&1)
  test $? -eq 1 && grep -q 'lv2.json:2:36: units.eq.plugin: no LV2 plugin .* is installed; it looks like one of Debian.s lsp-plugins-lv2' <<<"$out" \
    && "$BIN" validate racks/lv2/x42-vocal-eq.json >/dev/null
}
check "validate: an LV2 plugin not installed names its Debian package; the x42 rack validates" lv2_validate

devices() { "$BIN" devices --no-probe >/dev/null; }
check "devices: runs without sound hardware" devices

play_signals() {
  "$BIN" play Tests/Fixtures/setlists/gig.json --playback cli_out --capture cli_in --status 2>"$WORK/play.log" &
  local pid=$!
  wait_for_line "$WORK/play.log" '^info: running '
  kill -HUP $pid
  wait_for_line "$WORK/play.log" 'switched to echo-a.json'
  local t0=$(date +%s%N)
  kill -TERM $pid
  wait $pid
  local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  test $rc -eq 0 || { echo "exit $rc"; cat "$WORK/play.log"; return 1; }
  test $ms -lt 2000 || { echo "took ${ms} ms to stop"; return 1; }
  grep -q 'SIGHUP: reloading' "$WORK/play.log" && grep -q 'switched to echo-a.json' "$WORK/play.log" \
    && grep -q 'info: stopped after' "$WORK/play.log" && ! kill -0 $pid 2>/dev/null
}
check "play: SIGHUP reloads, SIGTERM stops within 2 s with exit 0" play_signals

play_duration() {
  "$BIN" play racks/default.json --playback cli_out --capture cli_in --duration 1 2>"$WORK/play2.log" || return 1
  # pre-fill (2 × 128 frames) + 1 s of stereo float
  test "$(stat -c %s "$WORK/playback.raw")" -eq $(( (256 + 48000) * 8 ))
}
check "play: --duration plays exactly that long" play_duration

play_bad_rack() {
  local out
  out=$("$BIN" play Tests/Fixtures/racks/invalid/unknown-unit-type.json --playback cli_out 2>&1)
  test $? -eq 78 && grep -q 'unknown-unit-type.json:5:22' <<<"$out"
}
check "play: a bad rack is reported, exit 78 (EX_CONFIG: systemd does not restart it)" play_bad_rack

play_bad_device() {
  local out
  out=$("$BIN" play racks/default.json --playback no_such_pcm --duration 1 2>&1)
  test $? -eq 1 && grep -q 'no_such_pcm: snd_pcm_open failed' <<<"$out"
}
check "play: an unknown device is a clear error" play_bad_device

play_missing_card() {  # what is wrong and what to do, without alsa-lib's chain of complaints
  local out
  out=$("$BIN" play racks/default.json --playback hw:CARD=NoSuchCard9,DEV=0 --duration 1 2>&1)
  test $? -eq 1 && grep -q 'cannot open the playback device "hw:CARD=NoSuchCard9,DEV=0": .*no sound card' <<<"$out" \
    && grep -q 'stagerack devices' <<<"$out" && grep -q -- '--device-wait' <<<"$out" \
    && grep -q -- '--playback null --capture null' <<<"$out" && ! grep -q 'warning: alsa-lib' <<<"$out" || { echo "$out"; return 1; }
}
check "play: a missing sound card says so and what to do (devices, --device-wait, null/file devices)" play_missing_card

latency_missing_card() {  # the same explanation as play, not alsa-lib's eight raw lines
  local out
  out=$("$BIN" latency --no-config --playback hw:CARD=NoSuchCard9,DEV=0 --capture hw:CARD=NoSuchCard9,DEV=0 --period 128 2>&1)
  test $? -eq 1 && grep -q 'stagerack latency: cannot open the playback device "hw:CARD=NoSuchCard9,DEV=0": .*no sound card' <<<"$out" \
    && grep -q 'stagerack devices' <<<"$out" && ! grep -q 'warning: alsa-lib' <<<"$out" && ! grep -q -- '--device-wait' <<<"$out" \
    || { echo "$out"; return 1; }
}
check "latency: a missing sound card says so and what to do, as play does" latency_missing_card

finish
