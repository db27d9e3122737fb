#!/usr/bin/env bash
# `play --link` (Ableton Link) with two real `play` processes and nothing on the network but
# the test's own: the script runs itself again inside a network namespace it makes
# (`unshare -n`), with only loopback up and multicast on it, so Link's discovery (multicast
# on UDP port 20808) never leaves the test. Devices: alsa-lib's null and file plugins (paced
# to the wall clock). Measured: a tempo sent to one box over OSC reaches the other within
# 1 s and its rack follows it (source "Link"); the two boxes' beat grids, each as its own
# `--status` reports it (the beat at a time on Link's clock), agree within 1 ms, before and
# after the tempo change. Bad input: no peers, and Link's port held by another program: a
# clear line, and the show goes on. A box playing through JACK takes part as the others do
# (its remote too); Ableton's own LinkHut is a peer. Last line: "N passed, N failed", and its time.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [[ -z ${STAGERACK_IN_NETNS:-} ]]; then
  exec unshare -n env STAGERACK_IN_NETNS=1 "$0" "$@"
fi
started=$(date +%s%N)
source Tests/cli/harness.sh
ip link set lo up && ip link set lo multicast on || { echo "FAIL cannot bring loopback up in the namespace"; exit 1; }

cat >"$WORK/alsa.conf" <<CONF
pcm.link_null { type null }
pcm.link_in { type file  slave.pcm "link_null"  format "raw"  file "/dev/null"  infile "/dev/zero" }
CONF
export ALSA_CONFIG_PATH="/usr/share/alsa/alsa.conf:$WORK/alsa.conf"
play() { "$BIN" play racks/default.json --playback link_null --capture link_in --no-config --link --status "$@"; }

# OSC `/stagerack/tempo f` to 127.0.0.1:PORT.
send_tempo() {
  python3 - "$1" "$2" <<'PY'
import socket, struct, sys
path = b"/stagerack/tempo\0\0\0\0"
msg = path + b",f\0\0" + struct.pack(">f", float(sys.argv[2]))
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(msg, ("127.0.0.1", int(sys.argv[1])))
PY
}

# The page's meters from box A's web server: one message with the Link fields, printed.
link_meters() {
  timeout 10 python3 - "$1" <<'PY'
import json, sys
from websockets.sync.client import connect
port = int(sys.argv[1])
c = connect("ws://127.0.0.1:%d/" % port, origin="http://127.0.0.1:%d" % port, open_timeout=5)
c.send(json.dumps({"type": "login", "pin": "1234"}))
c.send(json.dumps({"type": "meters", "on": True}))
while True:
    m = json.loads(c.recv(timeout=5))
    if m.get("type") == "meters" and "link" in m:
        print(json.dumps({"tempo": m.get("tempo"), "tempoSource": m.get("tempoSource"), "link": m["link"]}))
        break
c.close()
PY
}

two_boxes() {
  STAGERACK_WEB_PIN=1234 play --osc 127.0.0.1:9471 --web 127.0.0.1:9472 --duration 9 2>"$WORK/a.log" &
  local a=$!
  play --duration 9 2>"$WORK/b.log" &
  local b=$!
  wait_for_line "$WORK/a.log" '^info: Link: 1 peer' 10 && wait_for_line "$WORK/b.log" '^info: Link: 1 peer' 10 || { kill $a $b; wait; return 1; }
  # The page's meters carry the session: one peer, the rack's tempo from Link.
  local meters
  meters=$(link_meters 9472) || { echo "no meters with Link from box A's page"; kill $a $b; wait; return 1; }
  echo "  box A's page meters: $meters" | tee -a "$WORK/figures"
  grep -q '"tempoSource": "Link", "link": {"peers": 1, "tempo": 120' <<<"$meters" || { kill $a $b; wait; return 1; }
  # Two status lines each at the session's first tempo (one a second; the first at a tempo
  # is not paired), then the change on box A.
  local deadline=$(($(date +%s) + 6))
  until (($(grep -c 'status: .*link 1 peer, 120.00' "$WORK/a.log") >= 2 && $(grep -c 'status: .*link 1 peer, 120.00' "$WORK/b.log") >= 2)); do
    (($(date +%s) < deadline)) || { echo "no two status lines at 120 BPM on each box"; kill $a $b; wait; return 1; }
    sleep 0.05
  done
  local t0=$(date +%s%N)
  send_tempo 9471 100
  wait_for_line "$WORK/b.log" '^info: Link: session tempo 100 BPM' 5 || { kill $a $b; wait; return 1; }
  local t1=$(date +%s%N)
  wait $a; local ra=$?
  wait $b; local rb=$?
  echo "  box B saw box A's tempo change after $(( (t1 - t0) / 1000000 )) ms; exits $ra, $rb" | tee -a "$WORK/figures"
  ((ra == 0 && rb == 0 && t1 - t0 < 1000000000)) || return 1
  grep -q 'status: .*link 1 peer, 100.00 BPM.*rack 100.00 BPM (Link)' "$WORK/b.log" || { echo "box B's rack does not follow Link"; grep status: "$WORK/b.log" | tail -3; return 1; }
  grep -q 'status: .*link 1 peer, 100.00 BPM.*rack 100.00 BPM (Link)' "$WORK/a.log" || { echo "box A's rack does not follow Link"; return 1; }
  # Phase: each status line gives the beat at a time on Link's clock; B's beat against A's
  # extrapolated to B's time at the tempo both report (modulo the 4-beat bar), in ms. Lines
  # are paired only at one tempo, skipping each box's first line at the new tempo.
  python3 - "$WORK/a.log" "$WORK/b.log" <<'PY' | tee -a "$WORK/figures"
import re, sys
pat = re.compile(r"link 1 peer, ([0-9.]+) BPM, beat (-?[0-9.]+) at ([0-9]+) us")
def lines(path):
    out, seen = [], set()
    for line in open(path):
        m = pat.search(line)
        if not m: continue
        bpm, beat, us = float(m[1]), float(m[2]), int(m[3])
        if bpm not in seen: seen.add(bpm); out.append(None)  # first line at a tempo: skipped
        else: out.append((bpm, beat, us))
    return [x for x in out if x]
a, b = lines(sys.argv[1]), lines(sys.argv[2])
worst, pairs = 0.0, {}
for bpm, beat_b, us_b in b:
    near = [x for x in a if x[0] == bpm and abs(x[2] - us_b) < 600_000]
    if not near: continue
    _, beat_a, us_a = min(near, key=lambda x: abs(x[2] - us_b))
    d = beat_b - (beat_a + (us_b - us_a) / 1e6 * bpm / 60)
    d -= 4 * round(d / 4)
    ms = d * 60000 / bpm
    worst = max(worst, abs(ms))
    pairs[bpm] = pairs.get(bpm, 0) + 1
print(f"  beat pairs by tempo {pairs}, worst phase difference {worst:.3f} ms")
sys.exit(0 if pairs.get(120.0, 0) >= 1 and pairs.get(100.0, 0) >= 2 and worst < 1.0 else 1)
PY
}
check "two play --link boxes: a tempo sent to one reaches the other within 1 s, their beats within 1 ms before and after" two_boxes

no_peers() {
  play --duration 2.5 2>"$WORK/alone.log" || { tail -5 "$WORK/alone.log"; return 1; }
  grep -q '^info: Link on: a session of one at 120 BPM' "$WORK/alone.log" \
    && grep -q 'status: .*link 0 peers, 120.00 BPM, .*rack 120.00 BPM (song)' "$WORK/alone.log" \
    && grep -q 'info: stopped after 2.5 s, 0 xruns' "$WORK/alone.log" || { tail -5 "$WORK/alone.log"; return 1; }
}
check "play --link with no peers: a session of one, the rack's own tempo, the show goes on" no_peers

port_taken() {
  python3 -c 'import socket, time; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 20808)); print("bound", flush=True); time.sleep(6)' \
    >"$WORK/holder.out" &
  local holder=$!
  wait_for_line "$WORK/holder.out" '^bound' 10 || { kill $holder; return 1; }  # held before the box starts
  play --duration 2 2>"$WORK/taken.log"
  local rc=$?
  kill $holder; wait $holder 2>/dev/null
  grep -q '^warning: Link: UDP port 20808 is held by another program' "$WORK/taken.log" \
    && grep -q 'info: stopped after 2 s, 0 xruns' "$WORK/taken.log" && ((rc == 0)) || { tail -5 "$WORK/taken.log"; return 1; }
}
check "play --link with Link's port held by another program: a warning, the show goes on" port_taken

# A box playing through JACK (its own jackd, dummy driver, in this namespace) shares the
# session with an ALSA box: a tempo sent to the JACK box's OSC (the remote under JACK) reaches
# the ALSA box, and the JACK box's rack follows Link.
jack_box() {
  command -v jackd >/dev/null || { echo "jackd missing (scripts/install-deps.sh --test)"; return 1; }
  # a fixed name: jackd reclaims a killed run's registry entry only under its own name (Tests/jack/netjack.sh)
  export JACK_DEFAULT_SERVER="stagerack-link" JACK_NO_AUDIO_RESERVATION=1
  jackd -n "$JACK_DEFAULT_SERVER" -d dummy -r 48000 -p 256 >"$WORK/jackd.log" 2>&1 &
  local server=$!
  jack_wait -w -t 10 >/dev/null 2>&1 || { kill $server; wait $server; return 1; }
  "$BIN" play racks/default.json --driver jack --jack-outputs none --jack-inputs none --no-config --link --status \
    --osc 127.0.0.1:9481 --duration 8 2>"$WORK/jack.log" &
  local j=$!
  play --duration 8 2>"$WORK/alsa.log" &
  local a=$!
  local ok=1
  wait_for_line "$WORK/jack.log" '^info: Link: 1 peer' 10 && wait_for_line "$WORK/alsa.log" '^info: Link: 1 peer' 10 \
    && wait_for_line "$WORK/jack.log" 'status: .*link 1 peer, 120.00' 5 && send_tempo 9481 90 \
    && wait_for_line "$WORK/alsa.log" '^info: Link: session tempo 90 BPM' 5 \
    && wait_for_line "$WORK/jack.log" 'status: .*link 1 peer, 90.00 BPM.*rack 90.00 BPM \(Link\)' 5 || ok=0
  wait $j; local rj=$?
  wait $a; local ra=$?
  kill $server; wait $server 2>/dev/null
  grep -E '^info: (JACK client|Link)' "$WORK/jack.log" | sed 's/^/  /'
  ((ok == 1 && rj == 0 && ra == 0)) && ! grep -q 'not available with --driver jack' "$WORK/jack.log"
}
check "play --driver jack --link --osc: the JACK box's OSC tempo reaches an ALSA box through Link, its rack follows Link" jack_box

# Ableton's own peer: Debian's LinkHut (ableton-link-utils; it plays a metronome through
# JACK, here a dummy server in this namespace), driven by its keys through a FIFO: enabled
# ("a"), its tempo raised twice ("e", one BPM each) and the box follows each; a tempo sent to
# the box over OSC shows in LinkHut's own table.
linkhut() {
  command -v LinkHut >/dev/null && command -v jackd >/dev/null || { echo "LinkHut or jackd missing (scripts/install-deps.sh --test)"; return 1; }
  export JACK_DEFAULT_SERVER="stagerack-hut" JACK_NO_AUDIO_RESERVATION=1
  jackd -n "$JACK_DEFAULT_SERVER" -d dummy -r 48000 -p 256 >"$WORK/hut-jackd.log" 2>&1 &
  local server=$!
  jack_wait -w -t 10 >/dev/null 2>&1 || { kill $server; wait $server; return 1; }
  mkfifo "$WORK/hut-keys"
  LinkHut <"$WORK/hut-keys" >"$WORK/hut.out" 2>&1 &
  local hut=$!
  exec 7>"$WORK/hut-keys"
  play --osc 127.0.0.1:9491 --duration 12 2>"$WORK/box.log" &
  local box=$!
  local ok=1
  printf a >&7
  wait_for_line "$WORK/box.log" '^info: Link: 1 peer' 10 && printf e >&7 \
    && wait_for_line "$WORK/box.log" '^info: Link: session tempo 121 BPM' 5 && printf e >&7 \
    && wait_for_line "$WORK/box.log" '^info: Link: session tempo 122 BPM' 5 \
    && wait_for_line "$WORK/box.log" 'status: .*link 1 peer, 122.00 BPM.*rack 122.00 BPM \(Link\)' 5 && send_tempo 9491 96 || ok=0
  # LinkHut redraws its table with carriage returns: one row a redraw.
  local deadline=$(($(date +%s) + 5)) rows
  while ((ok == 1)); do
    rows=$(tr '\r' '\n' <"$WORK/hut.out")
    [[ $rows =~ yes\ +\|\ 1\ +\|\ 4\ +\|[^|]*\|\ 96\.00 ]] && break
    (($(date +%s) < deadline)) || { echo "LinkHut never showed 96 BPM with one peer"; ok=0; }
    sleep 0.05
  done
  printf q >&7
  exec 7>&-
  kill $box $hut 2>/dev/null; wait $box $hut 2>/dev/null
  kill $server; wait $server 2>/dev/null
  grep -E '^info: Link' "$WORK/box.log" | sed 's/^/  /'
  ((ok == 1))
}
check "LinkHut (Ableton's peer, ableton-link-utils) and a box: its tempo keys move the box, the box's OSC tempo moves LinkHut" linkhut

cat "$WORK/figures" 2>/dev/null
echo "link tests took $(( ($(date +%s%N) - started) / 1000000 )) ms"
finish
