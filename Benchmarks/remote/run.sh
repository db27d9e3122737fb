#!/usr/bin/env bash
# Benchmarks/remote/run.sh [SECONDS]: the render thread's cost with eight WebSocket clients
# taking the meters at 20 Hz versus none, in callgrind instruction counts of the render path,
# side by side in one run (README.md next to this file). SECONDS of audio per run (default 4).
# STAGERACK=path/to/stagerack: a binary already built (no build). Output: .build/bench-remote.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
OUT=.build/bench-remote
mkdir -p "$OUT"
command -v valgrind >/dev/null || { echo "missing valgrind (scripts/install-deps.sh --test)" >&2; exit 1; }
if [[ -z ${STAGERACK:-} ]]; then
    swift build -c release --product stagerack >&2
fi
# valgrind 3.19 rejects the release binary's debug info: count a copy without it (PEERS.md).
objcopy --strip-debug "${STAGERACK:-.build/release/stagerack}" "$OUT/stagerack"
# The page's files are found next to the binary's ../../web: link them for the copy.
ln -sfn "$PWD/web" "$OUT/web"
python3 Benchmarks/remote/bench.py "$OUT/stagerack" "$OUT" "${1:-4}"
echo "Benchmarks/remote/run.sh: $(( $(date +%s) - start )) s"
