#!/usr/bin/env bash
# The live path of the release `stagerack play`, through alsa-lib's file plugin (no sound
# hardware): devices that keep no time are paced to the wall clock; SIGHUP reloads under a
# storm leave every queue with its one producer and consumer thread (the binary reports any
# queue used by a second thread) and release every old rack; a failed reload is a warning.
# Last line: "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
source Tests/cli/harness.sh

cat >"$WORK/alsa.conf" <<CONF
pcm.live_null { type null }
pcm.live_out { type file  slave.pcm "live_null"  format "raw"  truncate true  file "$WORK/playback.raw" }
pcm.live_in { type file  slave.pcm "live_null"  format "raw"  file "/dev/null"  infile "/dev/zero" }
CONF
export ALSA_CONFIG_PATH="/usr/share/alsa/alsa.conf:$WORK/alsa.conf"

paced() {
  local t0 t1 out
  t0=$(date +%s%N)
  "$BIN" play racks/default.json --playback live_out --capture live_in --duration 2 --no-config 2>"$WORK/paced.log" || return 1
  t1=$(date +%s%N)
  local ms=$(( (t1 - t0) / 1000000 ))
  out=$(cat "$WORK/paced.log")
  echo "2 s of audio took $ms ms of wall time"
  grep -q 'keeps no time .*pacing to the wall clock' <<<"$out" && grep -q 'stopped after 2 s, 0 xruns' <<<"$out" \
    && ((ms >= 1900 && ms < 6000))
}
check "play: a device that keeps no time is paced: 2 s of audio take 2 s" paced

reload_storm() {
  cp Tests/Fixtures/setlists/echo-a.json Tests/Fixtures/setlists/dry-b.json "$WORK/"
  printf '{ "format": 1, "songs": [ { "rack": "echo-a.json", "program": 1 }, { "rack": "dry-b.json", "program": 2 } ] }\n' >"$WORK/set.json"
  "$BIN" play "$WORK/set.json" --playback live_out --capture live_in --no-config 2>"$WORK/storm.log" &
  local pid=$!
  # The signals are blocked and waited for before the ready line ("info: running ...").
  wait_for_line "$WORK/storm.log" '^info: running ' || { kill -TERM $pid; wait $pid; return 1; }
  # The storm: 20 SIGHUPs 0.1 s apart (the pace is the load, not a wait).
  for _ in $(seq 20); do kill -HUP $pid; sleep 0.1; done
  # Its reloads done: the last "SIGHUP: reloading" line has its "switched to" after it.
  local last_done='{ if (/SIGHUP: reloading/) s = 1; else if (/switched to echo-a.json/) s = 0 } END { exit s }'
  local deadline=$(($(date +%s) + 20))
  until awk "$last_done" "$WORK/storm.log"; do
    (($(date +%s) < deadline)) || { echo "the storm's last reload never finished"; break; }
    sleep 0.02
  done
  # A broken file on the next reload: a warning, and the rack keeps playing.
  printf '{ "format": 1, "units": { "x": { "type": "reverbe" } } }\n' >"$WORK/echo-a.json"
  kill -HUP $pid
  wait_for_line "$WORK/storm.log" '^warning: cannot switch to echo-a.json'
  kill -TERM $pid
  wait $pid
  local rc=$?
  local out switched
  out=$(cat "$WORK/storm.log")
  switched=$(grep -c 'switched to echo-a.json' <<<"$out")
  echo "exit $rc, $switched reloads carried out"
  test $rc -eq 0 && ((switched >= 5)) && ! grep -q 'internal:' <<<"$out" \
    && grep -q '^warning: cannot switch to echo-a.json; the current rack keeps playing' <<<"$out" \
    && grep -q 'info: stopped after' <<<"$out" || { sed 's/^/  /' "$WORK/storm.log" | tail -30; return 1; }
}
check "play: a storm of SIGHUP reloads, one owner per queue, a broken reload is a warning" reload_storm

gain_reduction() {
  local out
  out=$("$BIN" play racks/default.json --playback live_out --capture live_in --duration 2.5 --status --no-config 2>&1) || return 1
  grep -q '^status: .* | GR [a-z]* [0-9.]* dB' <<<"$out" || { echo "$out" | tail -5; return 1; }
}
check "play --status: the default rack's compressor and de-esser show their gain reduction" gain_reduction

finish
