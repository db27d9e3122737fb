#!/usr/bin/env bash
# A band's boxes in step (play --sync, README "A band's boxes in step"): three real `play
# --link` processes, one leader and two followers, inside a network namespace the script
# makes itself (`unshare -n`, loopback only, multicast on: Link's discovery and the sync
# messages never leave the test). Devices: alsa-lib's null and file plugins (paced to the wall
# clock), 64-frame periods; one follower through JACK (a dummy jackd). Measured: a song change asked of the leader (OSC) happens on all
# three boxes at the same bar line: each box's own report of the Link time at which its
# switch began, compared (within 2 ms); a snapshot recalled on the leader (OSC) recalled by
# it and a follower on the same bar line (each box's report of the Link time of its recall,
# within 2 ms), and the leader's transpose (OSC, twice up) taken by it; a section jump asked of
# the leader (OSC) taken by it on the same bar line (each box's report of the Link time of
# its jump, within 2 ms); unsigned, wrongly signed, replayed and garbage
# datagrams (and a flood) on a follower's sync port refused and logged, rate limited, the
# show going on; a follower stopped and restarted mid-song comes back to the leader's song,
# snapshot and transpose;
# a follower that never answers is said in the leader's log; a short key is refused.
# Last line: "N passed, N failed", and its time.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [[ -z ${STAGERACK_IN_NETNS:-} ]]; then
  exec unshare -n env STAGERACK_IN_NETNS=1 "$0" "$@"
fi
started=$(date +%s%N)
source Tests/cli/harness.sh
ip link set lo up && ip link set lo multicast on || { echo "FAIL cannot bring loopback up in the namespace"; exit 1; }

cat >"$WORK/alsa.conf" <<CONF
pcm.sync_null { type null }
pcm.sync_in { type file  slave.pcm "sync_null"  format "raw"  file "/dev/null"  infile "/dev/zero" }
CONF
export ALSA_CONFIG_PATH="/usr/share/alsa/alsa.conf:$WORK/alsa.conf"
# Song 3: the slapback rack with a snapshot ("solo": the slap louder).
sed 's|^  "connections"|  "snapshots": { "solo": { "morph": 0, "params": { "mix.gain2": 0 } } },\n  "connections"|' racks/rock-slapback.json >"$WORK/slap.json"
cat >"$WORK/band.json" <<JSON
{ "format": 1, "name": "Band",
  "songs": [ { "rack": "$PWD/racks/default.json", "name": "One" },
             { "rack": "$PWD/racks/vocal-clean.json", "name": "Two" },
             { "rack": "$WORK/slap.json", "name": "Three", "tempo": 120, "transposeAt": "now",
               "sections": [ { "name": "verse", "at": 1 }, { "name": "chorus", "at": 400 } ] } ] }
JSON
export STAGERACK_SYNC_KEY="the band's long shared secret"
box() {
  "$BIN" play "$WORK/band.json" --playback sync_null --capture sync_in --period 64 --no-config --link "$@"
}
leader() { box --sync leader --sync-port 9730 --sync-followers 127.0.0.1:9731,127.0.0.1:9732 --osc 127.0.0.1:9741 "$@"; }

# OSC `/stagerack/song i` to 127.0.0.1:PORT (the leader's remote).
send_song() {
  python3 - "$1" "$2" <<'PY'
import socket, struct, sys
msg = b"/stagerack/song\0" + b",i\0\0" + struct.pack(">i", int(sys.argv[2]))
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(msg, ("127.0.0.1", int(sys.argv[1])))
PY
}

# OSC `/stagerack/snapshot s` to 127.0.0.1:PORT.
send_snapshot() {
  python3 - "$1" "$2" <<'PY'
import socket, sys
def s(x):
    b = x.encode() + b"\0"
    return b + b"\0" * (-len(b) % 4)
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(s("/stagerack/snapshot") + s(",s") + s(sys.argv[2]), ("127.0.0.1", int(sys.argv[1])))
PY
}

# Sleeps until 0.2 s after a bar line of the song that began at Link time $1 (us), at
# 120 BPM in 4/4: a change asked then reaches a follower well within the bar.
wait_past_bar_line() {
  python3 - "$1" <<'PY'
import sys, time
start = int(sys.argv[1]) / 1e6  # Link's clock: CLOCK_MONOTONIC_RAW
bar = 2.0  # 4 beats at 120 BPM
time.sleep((0.2 - (time.clock_gettime(time.CLOCK_MONOTONIC_RAW) - start) % bar) % bar)
PY
}

# `same_moment WHAT NAME`: the Link times of the leader's and box B's "Link: WHAT ... at N us"
# lines, within 2 ms of each other (figures kept).
same_moment() {
  grep -h "Link: $1" "$WORK/a.log" "$WORK/b.log" | sed 's/^/  /' | tee -a "$WORK/figures"
  local ta tb
  ta=$(grep -oE "Link: $1 at .* at [0-9]+ us" "$WORK/a.log" | grep -oE '[0-9]+ us$' | grep -oE '[0-9]+')
  tb=$(grep -oE "Link: $1 at .* at [0-9]+ us" "$WORK/b.log" | grep -oE '[0-9]+ us$' | grep -oE '[0-9]+')
  python3 - "$ta" "$tb" "$2" <<'PY' | tee -a "$WORK/figures"
import sys
a, b = int(sys.argv[1]), int(sys.argv[2])
print(f"  {sys.argv[3]} on the follower {(b - a) / 1000:+.3f} ms from the leader")
sys.exit(0 if abs(b - a) < 2000 else 1)
PY
}

# An OSC message with no arguments, `send_osc PORT ADDRESS` (`/stagerack/transpose/up`).
send_osc() {
  python3 - "$1" "$2" <<'PY'
import socket, sys
def s(x):
    b = x.encode() + b"\0"
    return b + b"\0" * (-len(b) % 4)
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(s(sys.argv[2]) + s(","), ("127.0.0.1", int(sys.argv[1])))
PY
}

# What a stranger (or a replaying attacker) sends to a sync port: `sync_send PORT WHAT`.
# WHAT: unsigned | wrongkey | replay (one message signed with the band's key, sent twice) |
# garbage | flood (2000 garbage datagrams).
sync_send() {
  python3 - "$1" "$2" <<'PY'
import hashlib, hmac, os, socket, sys
port, what = int(sys.argv[1]), sys.argv[2]
def s(x):
    b = x.encode() + b"\0"
    return b + b"\0" * (-len(b) % 4)
def osc(*strings):
    return s("/stagerack/sync") + s("," + "s" * len(strings)) + b"".join(s(x) for x in strings)
def signed(payload, key):
    return osc(payload, hmac.new(key.encode(), payload.encode(), hashlib.sha256).hexdigest())
payload = "stagerack-sync 1\nsession 5eed5eed5eed5eed\nseq 7\nkind state\nsong 1"
out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
send = lambda b: out.sendto(b, ("127.0.0.1", port))
if what == "unsigned": send(osc(payload))
elif what == "wrongkey": send(signed(payload, "another band's long secret"))
elif what == "replay":
    m = signed(payload, os.environ["STAGERACK_SYNC_KEY"])
    send(m); send(m)
elif what == "garbage": send(b"\x00\x01not osc at all")
elif what == "flood":
    for i in range(2000): send(os.urandom(64))
PY
}

# The Link time each box's switch to song N began (µs), from its log.
switch_time() { grep -oE "Link: song $2 began at beat [-0-9.]+ \([0-9.]+ BPM\) at [0-9]+ us" "$1" | tail -1 | grep -oE '[0-9]+ us$' | grep -oE '[0-9]+'; }

# Box C plays through JACK (its own jackd, dummy driver, 64-frame periods, in this
# namespace): a follower under `--driver jack` switches on the same bar line too.
jack_box() {
  JACK_DEFAULT_SERVER=stagerack-sync JACK_NO_AUDIO_RESERVATION=1 "$BIN" play "$WORK/band.json" --driver jack \
    --jack-outputs none --jack-inputs none --no-config --link "$@"
}

# Stops background jobs on a failed step: those started through a function (a subshell)
# by their children (`play`), then each job itself (jackd).
stop() {
  local p
  for p in "$@"; do pkill -TERM -P "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null; done
}

band() {
  command -v jackd >/dev/null || { echo "jackd missing (scripts/install-deps.sh --test)"; return 1; }
  # a fixed server name: jackd reclaims a killed run's registry entry only under its own name
  JACK_NO_AUDIO_RESERVATION=1 jackd -n stagerack-sync -d dummy -r 48000 -p 64 >"$WORK/jackd.log" 2>&1 &
  local server=$!
  JACK_DEFAULT_SERVER=stagerack-sync jack_wait -w -t 10 >/dev/null 2>&1 || { kill $server; wait $server; return 1; }
  # The leader and box B play until the test stops them (SIGTERM, below): the steps take
  # 21-28 s on an idle machine (three wait for a bar line), longer on a loaded one.
  leader --duration 300 2>"$WORK/a.log" &
  local a=$!
  box --sync follower --sync-port 9731 --duration 300 2>"$WORK/b.log" &
  local b=$!
  jack_box --sync follower --sync-port 9732 --duration 7 2>"$WORK/c.log" &
  local c=$!
  wait_for_line "$WORK/a.log" '^info: sync: follower 127.0.0.1:9731 answers' 10 && wait_for_line "$WORK/a.log" '^info: sync: follower 127.0.0.1:9732 answers' 10 \
    && wait_for_line "$WORK/a.log" '^info: Link: 2 peers' 10 && wait_for_line "$WORK/b.log" '^info: Link: 2 peers' 10 \
    && wait_for_line "$WORK/c.log" '^info: Link: 2 peers' 10 || { stop $a $b $c $server; wait; return 1; }
  # Song 2, asked of the leader: all three begin it at the same bar line.
  send_song 9741 2
  for f in a b c; do wait_for_line "$WORK/$f.log" '^info: Link: song 2 began' 6 || { stop $a $b $c $server; wait; return 1; }; done
  grep -h 'sync: leading song 2\|Link: song 2 began' "$WORK/a.log" "$WORK/b.log" "$WORK/c.log" | sed 's/^/  /' | tee -a "$WORK/figures"
  local ta tb tc
  ta=$(switch_time "$WORK/a.log" 2) tb=$(switch_time "$WORK/b.log" 2) tc=$(switch_time "$WORK/c.log" 2)
  python3 - "$ta" "$tb" "$tc" <<'PY' | tee -a "$WORK/figures" || { stop $a $b $c $server; wait; return 1; }
import sys
a, b, c = (int(x) for x in sys.argv[1:])
db, dc = (b - a) / 1000, (c - a) / 1000
print(f"  song 2 began on the followers {db:+.3f} ms (ALSA) and {dc:+.3f} ms (JACK) from the leader (one period: 1.333 ms)")
sys.exit(0 if abs(db) < 2 and abs(dc) < 2 else 1)
PY
  # Box C stops (its duration), the leader moves to song 3 meanwhile; C restarted comes back
  # to song 3 from the leader's state.
  wait $c
  kill $server; wait $server 2>/dev/null
  grep -q 'info: stopped after 7 s' "$WORK/c.log" || { echo "box C did not stop cleanly"; stop $a $b; wait; return 1; }
  send_song 9741 3
  wait_for_line "$WORK/b.log" '^info: Link: song 3 began' 6 || { stop $a $b; wait; return 1; }
  wait_for_line "$WORK/a.log" '^warning: sync: follower 127.0.0.1:9732 has not answered for 3 s' 6 || { stop $a $b; wait; return 1; }
  # A snapshot recalled on the leader 0.2 s after a bar line waits for the next one there,
  # and box B recalls it on the same bar line (C, stopped, catches up below).
  local t3
  t3=$(switch_time "$WORK/a.log" 3)
  wait_past_bar_line "$t3"
  send_snapshot 9741 solo
  wait_for_line "$WORK/a.log" '^info: sync: leading snapshot "solo" at song beat' 3 \
    && wait_for_line "$WORK/b.log" '^info: sync: the leader recalls snapshot "solo" at song beat' 3 && wait_for_line "$WORK/b.log" '^info: snapshot "solo"' 3 \
    && wait_for_line "$WORK/a.log" '^info: Link: snapshot recall 1 made' 4 && wait_for_line "$WORK/b.log" '^info: Link: snapshot recall 1 made' 4 \
    || { grep -h 'snapshot' "$WORK/a.log" "$WORK/b.log"; stop $a $b; wait; return 1; }
  same_moment "snapshot recall 1 made" "the snapshot recall" || { stop $a $b; wait; return 1; }
  # The leader's song a whole step up (two presses, OSC, 0.2 s after a bar line; the song
  # transposes "now"): held for the next bar line there and told with it; box B takes +2 on
  # the same bar line.
  wait_past_bar_line "$t3"
  send_osc 9741 /stagerack/transpose/up
  send_osc 9741 /stagerack/transpose/up
  wait_for_line "$WORK/a.log" '^info: sync: leading transpose \+2 at song beat' 3 \
    && wait_for_line "$WORK/b.log" '^info: sync: the leader transposes to \+2 at song beat' 3 \
    && wait_for_line "$WORK/b.log" '^info: transpose \+2 on the bar line at song beat' 3 \
    && wait_for_line "$WORK/a.log" '^info: Link: transpose 1 made' 4 && wait_for_line "$WORK/b.log" '^info: Link: transpose 1 made' 4 \
    || { grep -h transpose "$WORK/a.log" "$WORK/b.log"; stop $a $b; wait; return 1; }
  same_moment "transpose 1 made" "the transpose" || { stop $a $b; wait; return 1; }
  # A section jump asked of the leader 0.2 s after a bar line (so the follower hears of it
  # within the bar): both boxes jump on the next bar line.
  wait_past_bar_line "$t3"
  send_osc 9741 /stagerack/section/next
  wait_for_line "$WORK/a.log" '^info: sync: leading a section jump \(next\)' 3 && wait_for_line "$WORK/b.log" '^info: sync: the leader jumps to the next section' 3 \
    && wait_for_line "$WORK/a.log" '^info: Link: section jump 1 began' 4 && wait_for_line "$WORK/b.log" '^info: Link: section jump 1 began' 4 \
    || { grep -h 'section' "$WORK/a.log" "$WORK/b.log"; stop $a $b; wait; return 1; }
  same_moment "section jump 1 began" "the section jump" || { stop $a $b; wait; return 1; }
  local t0=$(date +%s%N)
  box --sync follower --sync-port 9732 --duration 5 2>"$WORK/c2.log" &
  c=$!
  wait_for_line "$WORK/c2.log" '^info: sync: catching up with the leader: song 3' 6 && wait_for_line "$WORK/c2.log" 'switched to Three \(3/3\)' 3 \
    || { stop $a $b $c; wait; return 1; }
  echo "  box C restarted was back on song 3 after $(( ($(date +%s%N) - t0) / 1000000 )) ms (from its start)" | tee -a "$WORK/figures"
  wait_for_line "$WORK/c2.log" '^info: sync: catching up with the leader: snapshot "solo"' 3 && wait_for_line "$WORK/c2.log" '^info: snapshot "solo"' 3 \
    || { stop $a $b $c; wait; return 1; }
  echo "  ... and on its snapshot after $(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a "$WORK/figures"
  wait_for_line "$WORK/c2.log" '^info: sync: catching up with the leader: transpose \+2' 3 && wait_for_line "$WORK/c2.log" '^info: transpose \+2$' 3 \
    || { grep transpose "$WORK/c2.log"; stop $a $b $c; wait; return 1; }
  echo "  ... and on its transpose (+2) after $(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a "$WORK/figures"
  wait_for_line "$WORK/a.log" '^info: sync: follower 127.0.0.1:9732 answers again' 3 || { stop $a $b $c; wait; return 1; }
  # Bad input on box B's sync port: each refused and logged, a flood in one line; B plays on.
  for what in unsigned wrongkey garbage flood replay; do sync_send 9731 $what; done
  wait_for_line "$WORK/b.log" 'sync: refused a replayed message \(seq 7, last taken 7\)' 3 || { stop $a $b $c; wait; return 1; }
  # The replayed message was taken once (a run B had not heard: it says song 2); the leader's
  # next state puts B back on song 3.
  local replayed_at
  replayed_at=$(grep -n 'refused a replayed message' "$WORK/b.log" | head -1 | cut -d: -f1)
  # tail's output captured before it is searched (`| grep -q` fails at random under pipefail)
  local after_replay
  wait_for_line "$WORK/b.log" '^info: sync: catching up with the leader: song 3' 3 \
    && after_replay=$(tail -n +"$replayed_at" "$WORK/b.log") \
    && [[ $after_replay == *'catching up with the leader: song 3'* ]] || { stop $a $b $c; wait; return 1; }
  wait $c; local rc=$?
  kill -0 $a && kill -0 $b || { echo "the leader or box B stopped before the test's end"; stop $a $b; wait; return 1; }
  pkill -TERM -P $a; pkill -TERM -P $b  # play exits 0 on SIGTERM
  wait $a; local ra=$?
  wait $b; local rb=$?
  ((ra == 0 && rb == 0 && rc == 0)) || { echo "exits $ra $rb $rc"; return 1; }
  grep -q '^warning: sync: refused unsigned message' "$WORK/b.log" \
    && grep -q '^warning: sync: refused wrong signature' "$WORK/b.log" \
    && grep -q '^warning: sync: refused not a sync message' "$WORK/b.log" || { grep sync: "$WORK/b.log"; return 1; }
  local garbage
  garbage=$(grep -c 'refused not a sync message' "$WORK/b.log")
  echo "  box B: 2001 garbage datagrams cost $garbage log line(s); $(grep -c 'sync: refused' "$WORK/b.log") refusal lines in all" | tee -a "$WORK/figures"
  ((garbage <= 2)) && grep -q 'info: stopped after' "$WORK/b.log" || return 1
}
check "a leader and two followers: song changes on one bar line (within 2 ms), a restarted follower catches up, bad input refused" band

short_key() {
  STAGERACK_SYNC_KEY=short box --sync follower --duration 1 2>"$WORK/short.log" || return 1
  grep -q '^error: sync: syncKey is too short (5 characters): at least 16.*playing without sync' "$WORK/short.log" \
    && grep -q 'info: stopped after 1 s' "$WORK/short.log" || { tail -5 "$WORK/short.log"; return 1; }
}
check "a short syncKey: sync refused with a clear error, the show goes on" short_key

cat "$WORK/figures" 2>/dev/null
echo "sync tests took $(( ($(date +%s%N) - started) / 1000000 )) ms"
finish
