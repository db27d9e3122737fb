#!/usr/bin/env bash
# netjack2: StageRack's outputs reach another machine's JACK server over the network
# (front of house, a recording laptop), with Debian's jackd2 and nothing of StageRack's own.
# Two network namespaces made here (ip netns, names of their own, removed at exit), joined
# by a veth pair, multicast routed on it; nothing else is a target:
#   "front of house" (FOH): a dummy-driver jackd with the netmanager internal client loaded
#   (jack_load): the netjack2 master;
#   "box": a jackd with the net driver (`jackd -d net`): the slave, which finds the master by
#   multicast and takes its rate and buffer size; `stagerack play --driver jack` on it, its
#   inputs and outputs on the slave's system ports (the defaults).
# On FOH, meter.py plays 997 Hz into the box (box:to_slave_1 → the box's system:capture_1 →
# StageRack's in_1) and records what comes back (StageRack's main_1/2 → system:playback_1/2
# → box:from_slave_1/2): the tone 6 dB lower (Tests/jack/tone.json) within 0.5 dB, at 997 Hz,
# and the round trip's latency in frames (both network hops, both servers' periods).
# Master and slave must be on different hosts (here namespaces): on one host they share
# netjack2's UDP port and the slave never gets the master's parameters (with jackd2 1.9.21
# it then dies of a floating point exception, dividing by the sample rate 0 it was never sent).
# Needs root (ip netns). Last line: "N passed, N failed" and the time taken.
set -uo pipefail
cd "$(dirname "$0")/../.."
source Tests/cli/harness.sh
start_time=$(date +%s)
PY=/usr/bin/python3  # Debian's, with python3-jack-client
RACK=Tests/jack/tone.json
PERIOD=256
for tool in jackd jack_load ip; do
  command -v $tool >/dev/null || { echo "$tool missing (scripts/install-deps.sh --test installs jackd2 and iproute2)"; exit 1; }
done
$PY -c 'import jack' 2>/dev/null || { echo "python3-jack-client missing (scripts/install-deps.sh --test)"; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "Tests/jack/netjack.sh needs root (ip netns)"; exit 1; }

# A fixed server name: jackd reclaims a stale entry of its shared-memory registry (a killed
# run's) only for its own name, and the registry holds 8 servers: names made unique per run
# (with $$) filled it over a day of killed runs, after which every jackd said "Too many
# servers already active".
FOH=stagerack-foh
BOX=stagerack-box
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  ip netns del "$FOH" 2>/dev/null
  ip netns del "$BOX" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
in_foh() { ip netns exec "$FOH" env JACK_DEFAULT_SERVER="$FOH" JACK_NO_AUDIO_RESERVATION=1 "$@"; }
in_box() { ip netns exec "$BOX" env JACK_DEFAULT_SERVER="$BOX" JACK_NO_AUDIO_RESERVATION=1 "$@"; }
# `start_in NS COMMAND...`: COMMAND in the background in namespace NS, its own PID in PIDS
# (ip and env exec it), so that cleanup's SIGTERM reaches jackd itself and it leaves the
# registry (a function run with & would leave the PID of a subshell, and jackd orphaned).
start_in() {
  local ns=$1
  shift
  ip netns exec "$ns" env JACK_DEFAULT_SERVER="$ns" JACK_NO_AUDIO_RESERVATION=1 "$@" &
  PIDS+=($!)
}

make_network() {
  ip netns add "$FOH" && ip netns add "$BOX" || return 1
  ip link add sr-foh netns "$FOH" type veth peer name sr-box netns "$BOX" || return 1
  ip -n "$FOH" addr add 10.213.0.1/24 dev sr-foh
  ip -n "$BOX" addr add 10.213.0.2/24 dev sr-box
  local ns dev
  for ns in "$FOH:sr-foh" "$BOX:sr-box"; do
    dev=${ns#*:} ns=${ns%%:*}
    ip -n "$ns" link set lo up && ip -n "$ns" link set "$dev" up && ip -n "$ns" route add 224.0.0.0/4 dev "$dev" || return 1
  done
}

# The FOH master and the box's slave, each ready when its log says so.
start_servers() {
  start_in "$FOH" jackd -n "$FOH" -d dummy -r 48000 -p $PERIOD >"$WORK/foh.log" 2>&1
  in_foh jack_wait -w -t 10 >/dev/null || return 1
  in_foh jack_load netmanager >"$WORK/netmanager.log" 2>&1 || { cat "$WORK/netmanager.log"; return 1; }
  start_in "$BOX" jackd -n "$BOX" -d net -n box >"$WORK/box.log" 2>&1
  wait_for_line "$WORK/box.log" '^Sample rate : 48000' 15 || return 1
  in_box jack_wait -w -t 10 >/dev/null
}

tone_over_the_network() {
  make_network || return 1
  start_servers || { tail -5 "$WORK/foh.log" "$WORK/box.log"; return 1; }
  start_in "$BOX" "$BIN" play "$RACK" --driver jack --no-config --status 2>"$WORK/play.log"
  wait_for_line "$WORK/play.log" '^info: running ' 15 || return 1
  rm -f "$WORK/meter.err"
  in_foh $PY Tests/jack/meter.py meter 997 0.25 1 20 1 >"$WORK/meter.json" 2>"$WORK/meter.err" &
  local meter=$!
  wait_for_line "$WORK/meter.err" '^ready ' 10 || return 1
  # The box's ports on the master: box:to_slave_N (into the box), box:from_slave_N (out of it).
  in_foh jack_connect meter:tone box:to_slave_1 && in_foh jack_connect box:from_slave_1 meter:in_1 \
    && in_foh jack_connect box:from_slave_2 meter:in_2 || return 1
  wait $meter || { cat "$WORK/meter.json" "$WORK/meter.err"; return 1; }
  local m
  m=$($PY -c 'import json,sys; m=json.load(open(sys.argv[1])); c=m["channels"]
print("%.3f %.3f %.3f %d %d" % (c[0]["hz"], c[0]["dbfs"] - m["tone_dbfs"], c[1]["dbfs"] - m["tone_dbfs"], m["onset_frames"], m["blocksize"]))' "$WORK/meter.json") || return 1
  read -r hz db1 db2 onset block <<<"$m"
  {
  echo "front of house hears: $hz Hz, main_1 $db1 dB and main_2 $db2 dB against the tone sent;"
  echo "  round trip (FOH → box → StageRack → FOH): $onset frames = $($PY -c "print('%.1f' % ($onset / 48.0))") ms at $block-frame periods ($($PY -c "print('%.1f' % ($onset / $block))") periods)"
  grep -E 'JACK client|connected' "$WORK/play.log" | sed 's/^/  /'
  grep -E '^Network latency' "$WORK/box.log" | head -1 | sed 's/^/  slave: /'
  } | tee "$WORK/figures"
  $PY -c 'import sys; hz, a, b, onset = map(float, sys.argv[1:5]); sys.exit(0 if abs(hz - 997) < 1 and abs(a + 6) < 0.5 and abs(b + 6) < 0.5 and onset > 0 else 1)' \
    "$hz" "$db1" "$db2" "$onset"
}
check "netjack2: StageRack's outputs at front of house over the network, 997 Hz, -6 dB within 0.5 dB, latency measured" tone_over_the_network
cat "$WORK/figures" 2>/dev/null
echo "Tests/jack/netjack.sh: $(( $(date +%s) - start_time )) s"
finish
