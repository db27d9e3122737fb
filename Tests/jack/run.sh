#!/usr/bin/env bash
# `play --driver jack` against a real jackd (jackd2's dummy driver: no sound hardware), each
# server started here under a name of its own ($JACK_DEFAULT_SERVER), never the machine's.
# A second client (meter.py, JACK-Client) plays a 997 Hz tone into StageRack's in_1 and
# records its outputs: the rack (Tests/jack/tone.json, -6 dB) must give the tone back at
# 997 Hz, 6 dB lower within 0.5 dB; ports named by the rack's units and connected by the
# patterns given; the server's buffer size followed (also when jack_bufsize changes it while
# playing); no server: a clear line (and a wait with --device-wait); a server that goes away:
# reconnected, the show going on; stopped as its server goes too: stopped, no reconnecting. Last line: "N passed, N failed" and the time taken.
set -uo pipefail
cd "$(dirname "$0")/../.."
source Tests/cli/harness.sh
start_time=$(date +%s)
PY=/usr/bin/python3  # Debian's, with python3-jack-client
RACK=Tests/jack/tone.json
if ! command -v jackd >/dev/null || ! $PY -c 'import jack' 2>/dev/null; then
  echo "jackd or python3-jack-client missing (scripts/install-deps.sh --test installs them)"
  exit 1
fi
JACKD_PID=
PLAY_PID=
METER_PID=
# After each check, pass or fail: whatever it left running is stopped (by its own pid).
cleanup() {
  if [[ -n $PLAY_PID ]]; then kill -TERM "$PLAY_PID" 2>/dev/null; wait "$PLAY_PID" 2>/dev/null; PLAY_PID=; fi
  if [[ -n $METER_PID ]]; then kill "$METER_PID" 2>/dev/null; wait "$METER_PID" 2>/dev/null; METER_PID=; fi
  stop_jackd
}
jack_check() {
  check "$@"
  cleanup
}
stop_jackd() {
  if [[ -n $JACKD_PID ]]; then kill "$JACKD_PID" 2>/dev/null; wait "$JACKD_PID" 2>/dev/null; JACKD_PID=; fi
}
trap 'cleanup; rm -rf "$WORK"' EXIT
# `start_jackd PERIOD`: a dummy server at 48 kHz under $JACK_DEFAULT_SERVER, ready when
# jack_wait sees it.
start_jackd() {
  jackd -n "$JACK_DEFAULT_SERVER" -d dummy -r 48000 -p "$1" >>"$WORK/jackd.log" 2>&1 &
  JACKD_PID=$!
  jack_wait -w -t 10 >/dev/null
}
# a fixed name: jackd reclaims a killed run's registry entry only under its own name (netjack.sh)
export JACK_DEFAULT_SERVER="stagerack-test"

# `meter_start`: the meter client in the background, ready once it is active; it
# records once both its ports are connected. `meter_result`: its JSON → "hz dB blocksize
# from" (the first output's frequency, its level against the tone's, the server's buffer
# size, the port in_1 hears).
# Each meter has a name of its own (the server may not have let go of the last one's yet).
meter_start() {
  METER_NAME=${1:-meter}
  # Removed first: the background job truncates it only once it has started, and the last
  # meter's "ready" line must not be read as this one's.
  rm -f "$WORK/meter.err"
  $PY Tests/jack/meter.py "$METER_NAME" 997 0.25 1 20 >"$WORK/meter.json" 2>"$WORK/meter.err" &
  METER_PID=$!
  wait_for_line "$WORK/meter.err" '^ready ' 10 || return 1  # active (ports of an inactive client cannot be connected)
  METER_NAME=$(sed -n 's/^ready //p' "$WORK/meter.err")  # the name the server gave it
}
meter_result() {  # sets M (waited for here: not in a subshell, which cannot wait for it)
  wait $METER_PID || { METER_PID=; cat "$WORK/meter.json"; return 1; }
  METER_PID=
  M=$($PY -c 'import json,sys; m=json.load(open(sys.argv[1])); c=m["channels"][0]
print("%.3f %.3f %d %s" % (c["hz"], c["dbfs"] - m["tone_dbfs"], m["blocksize"], m["from"][0]))' "$WORK/meter.json")
}
# `tone_ok "hz dB ..."`: 997 Hz within 0.1 %, -6 dB within 0.5 dB.
tone_ok() {
  $PY -c 'import sys; hz, db = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if abs(hz - 997) < 1 and abs(db + 6) < 0.5 else 1)' $1
}

play_jack() {  # play_jack LOG [options...]: in the background, ready when its running line is
  local log=$1
  shift
  "$BIN" play "$RACK" --driver jack --no-config --jack-outputs 'meter:in_' --jack-inputs 'meter:tone' --status "$@" 2>"$log" &
  PLAY_PID=$!
}

# The meter's ports connected by hand (each alone: StageRack may have connected some by its
# patterns already, if the meter was there first; the meter checks all are connected).
connect_meter() {
  local deadline=$(($(date +%s) + 5))
  # Retried for a few seconds (a port registered a moment ago), then the meter says what is missing.
  local tone_links in2_links
  # jack_lsp's output captured before it is searched (`| grep -q` fails at random under pipefail)
  while tone_links=$(jack_lsp -c "$METER_NAME:tone"); in2_links=$(jack_lsp -c "$METER_NAME:in_2")
        [[ $tone_links != *stagerack:in_1* || $in2_links != *stagerack:main_2* ]]; do
    jack_connect stagerack:main_1 "$METER_NAME:in_1" 2>>"$WORK/connect.err"
    jack_connect stagerack:main_2 "$METER_NAME:in_2" 2>>"$WORK/connect.err"
    jack_connect "$METER_NAME:tone" stagerack:in_1 2>>"$WORK/connect.err"
    (($(date +%s) < deadline)) || return 0  # the meter says what is missing
    sleep 0.2
  done
}

tone_through_jack() {
  start_jackd 128
  meter_start || return 1
  play_jack "$WORK/tone.log"
  local m
  meter_result || { cat "$WORK/tone.log"; return 1; }
  m=$M
  echo "through JACK (128 frames): $m (Hz, dB against the tone, buffer, in_1 from)"
  # The buffer size changed while playing: followed, the tone still right.
  jack_bufsize 256 >/dev/null
  wait_for_line "$WORK/tone.log" "buffer size is now 256 frames; followed" 10 || { kill -TERM $PLAY_PID; return 1; }
  local m2
  meter_start meter2 || return 1
  connect_meter
  meter_result || return 1
  m2=$M
  echo "after jack_bufsize 256: $m2"
  kill -TERM $PLAY_PID
  wait $PLAY_PID
  local rc=$?
  PLAY_PID=
  stop_jackd
  echo "exit $rc"
  grep -E 'JACK client|connected|stopped' "$WORK/tone.log" | sed 's/^/  /'
  test $rc -eq 0 && tone_ok "$m" && tone_ok "$m2" \
    && [[ $(cut -d' ' -f3 <<<"$m") == 128 && $(cut -d' ' -f3 <<<"$m2") == 256 ]] \
    && grep -q 'JACK client stagerack: 48000 Hz and 128 frames a period, the server.s; ports main_1, main_2, in_1, in_2' "$WORK/tone.log" \
    && grep -q 'connected stagerack:main_1 → meter:in_1, stagerack:main_2 → meter:in_2' "$WORK/tone.log" \
    && grep -q 'connected meter:tone → stagerack:in_1' "$WORK/tone.log" \
    && [[ $(cut -d' ' -f4 <<<"$m") == stagerack:main_1 ]] && grep -q 'info: stopped after' "$WORK/tone.log"
}
jack_check "play --driver jack: 997 Hz through the rack's -6 dB at 0.5 dB, ports named and connected by pattern, buffer size followed" tone_through_jack

no_match() {
  start_jackd 128
  "$BIN" play "$RACK" --driver jack --no-config --jack-outputs 'nosuch:in_' --jack-inputs 'nosuch:out' --duration 0.5 2>"$WORK/nomatch.log"
  local rc=$?
  stop_jackd
  cat "$WORK/nomatch.log" | grep -E 'JACK|stopped'
  test $rc -eq 0 && grep -q 'warning: JACK: "nosuch:in_" matches no input port; outputs not connected' "$WORK/nomatch.log" \
    && grep -q 'info: stopped after 0.5 s' "$WORK/nomatch.log"
}
jack_check "play --driver jack: a pattern that matches nothing is a warning, the show goes on" no_match

no_server() {
  "$BIN" play "$RACK" --driver jack --no-config --duration 0.5 2>"$WORK/noserver.log"
  local rc=$?
  cat "$WORK/noserver.log" | tail -3
  test $rc -ne 0 && grep -q 'no JACK server is running' "$WORK/noserver.log" || return 1
  # With --device-wait the server is waited for, and the show starts when it comes.
  "$BIN" play "$RACK" --driver jack --no-config --duration 0.5 --device-wait 20 2>"$WORK/late.log" &
  local pid=$!
  wait_for_line "$WORK/late.log" 'JACK server' 10 || { kill $pid; return 1; }
  start_jackd 128
  wait $pid
  rc=$?
  stop_jackd
  tail -3 "$WORK/late.log"
  test $rc -eq 0 && grep -q 'info: stopped after 0.5 s' "$WORK/late.log"
}
jack_check "play --driver jack: no server is a clear line; with --device-wait it is waited for" no_server

server_goes_away() {
  start_jackd 128
  play_jack "$WORK/away.log"
  wait_for_line "$WORK/away.log" '^info: running ' 10 || return 1
  stop_jackd  # the server goes away while playing
  wait_for_line "$WORK/away.log" 'JACK server went away' 10 || return 1
  start_jackd 128
  wait_for_line "$WORK/away.log" 'JACK server back' 10 || return 1
  # The meter came after StageRack: connected by hand.
  meter_start meter3 || return 1
  connect_meter
  local m
  meter_result || { grep -v "^Cannot\|^jack server\|JackShm" "$WORK/connect.err"; grep JACK "$WORK/away.log"; return 1; }
  m=$M
  echo "after the server came back: $m"
  kill -TERM $PLAY_PID
  wait $PLAY_PID
  local rc=$?
  PLAY_PID=
  stop_jackd
  grep -E 'JACK|stopped' "$WORK/away.log" | sed 's/^/  /'
  test $rc -eq 0 && tone_ok "$m" && grep -q 'info: stopped after' "$WORK/away.log"
}
jack_check "play --driver jack: a server that goes away is reconnected, the tone comes back" server_goes_away

# Asked to stop, then the server goes too (a shutdown stops both): play stops, and does not
# wait for a server that is not coming back. Made certain: the server is frozen (SIGSTOP)
# before play's SIGTERM, so play cannot finish stopping before the server is gone.
stopped_with_its_server() {
  start_jackd 128
  play_jack "$WORK/both.log"
  wait_for_line "$WORK/both.log" '^info: running ' 10 || return 1
  kill -STOP "$JACKD_PID"
  kill -TERM "$PLAY_PID"
  wait_for_line "$WORK/both.log" '^info: stopping' 5 || { kill -CONT "$JACKD_PID"; return 1; }
  kill -TERM "$JACKD_PID"
  kill -CONT "$JACKD_PID"
  local deadline=$((SECONDS + 5))
  while kill -0 "$PLAY_PID" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
  if kill -0 "$PLAY_PID" 2>/dev/null; then
    echo "play still running 5 s after its SIGTERM and its server's:"; grep -E 'stopping|JACK|stopped' "$WORK/both.log"
    return 1
  fi
  wait "$PLAY_PID"
  local rc=$?
  PLAY_PID=
  grep -E 'stopping|JACK server|stopped' "$WORK/both.log" | sed 's/^/  /'
  test $rc -eq 0 && grep -q '^info: stopped' "$WORK/both.log"
}
jack_check "play --driver jack: asked to stop as its server goes too, it stops (no wait for the server)" stopped_with_its_server

echo "Tests/jack: $(( $(date +%s) - start_time )) s"
finish
