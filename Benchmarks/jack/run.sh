#!/usr/bin/env bash
# Benchmarks/jack/run.sh [SHORT LONG]: the JACK backend's per-period overhead against the
# ALSA backend's (null devices), callgrind instruction counts of the render thread, side by
# side in one run (bench.py; README.md next to this file). Its own jackd (dummy driver, a
# server name of its own, 48 kHz, 128-frame periods). SHORT and LONG: seconds of audio of the
# two runs of each backend (default 2 and 6). STAGERACK=path/to/stagerack: a binary already
# built (no build). Output: .build/bench-jack.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
for tool in valgrind jackd jack_wait; do
  command -v $tool >/dev/null || { echo "missing $tool (scripts/install-deps.sh --test)" >&2; exit 1; }
done
[[ -n ${STAGERACK:-} ]] || swift build -c release --product stagerack >&2
OUT=.build/bench-jack
mkdir -p "$OUT"
BIN=${STAGERACK:-.build/release/stagerack}
PERIOD=128
# valgrind 3.19 rejects the release binary's debug info: count a copy without it (PEERS.md).
objcopy --strip-debug "$BIN" "$OUT/stagerack"
# a fixed name: jackd reclaims a killed run's registry entry only under its own name (Tests/jack/netjack.sh)
export JACK_DEFAULT_SERVER="stagerack-bench" JACK_NO_AUDIO_RESERVATION=1
jackd -n "$JACK_DEFAULT_SERVER" -d dummy -r 48000 -p $PERIOD >"$OUT/jackd.log" 2>&1 &
jackd_pid=$!
trap 'kill $jackd_pid 2>/dev/null; wait $jackd_pid 2>/dev/null' EXIT
jack_wait -w -t 10 >/dev/null 2>&1
python3 Benchmarks/jack/bench.py "$OUT/stagerack" "$OUT" "${1:-2}" "${2:-6}" $PERIOD
echo "Benchmarks/jack/run.sh: $(( $(date +%s) - start )) s"
