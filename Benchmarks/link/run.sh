#!/usr/bin/env bash
# Benchmarks/link/run.sh [SECONDS]: the render thread's cost with `play --link` (Ableton Link,
# a second `play --link` as the peer) versus without, in callgrind instruction counts of the
# render path (RackPlayer.render and all it calls), side by side in one run (README.md next
# to this file). Runs in a network namespace of its own (unshare -n, loopback only). SECONDS
# of audio per run (default 3). STAGERACK=path/to/stagerack: a binary already built (no
# build). Output: .build/bench-link.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ -z ${STAGERACK_IN_NETNS:-} ]]; then
  command -v valgrind >/dev/null || { echo "missing valgrind (scripts/install-deps.sh --test)" >&2; exit 1; }
  [[ -n ${STAGERACK:-} ]] || swift build -c release --product stagerack >&2
  exec unshare -n env STAGERACK_IN_NETNS=1 "$0" "$@"
fi
start=$(date +%s)
ip link set lo up && ip link set lo multicast on
OUT=.build/bench-link
mkdir -p "$OUT"
BIN=${STAGERACK:-.build/release/stagerack}
# valgrind 3.19 rejects the release binary's debug info: count a copy without it (PEERS.md).
objcopy --strip-debug "$BIN" "$OUT/stagerack"
python3 Benchmarks/link/bench.py "$OUT/stagerack" "$BIN" "$OUT" "${1:-3}"
echo "Benchmarks/link/run.sh: $(( $(date +%s) - start )) s"
