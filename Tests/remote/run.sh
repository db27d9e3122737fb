#!/usr/bin/env bash
# The remote's tests against the real `play` (make remote-test): each script starts `play`
# on alsa-lib's null devices with its servers on 127.0.0.1 ports and prints ok/FAIL lines.
# Loopback only; every wait is bounded. Prints how long it took. MIDI reaches `play` through
# a named pipe of raw bytes (STAGERACK_MIDI_PIPE, a test hook: there is no /dev/snd/seq here)
# that feeds the same MIDIRouter as the sequencer.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
rc=0
for t in Tests/remote/osc_test.py Tests/remote/web_test.py Tests/remote/stage_security_test.py Tests/remote/stage_small_test.py Tests/remote/learn_test.py Tests/remote/lv2_save_test.py Tests/remote/midi_pages_test.py Tests/remote/tls_test.py Tests/remote/browser_test.py Tests/remote/performer_test.py Tests/remote/lyrics_test.py Tests/remote/soundcheck_test.py Tests/remote/bench_clients.py; do
  echo "== $t"
  timeout 600 python3 "$t" || rc=1
done
echo "make remote-test: $(( $(date +%s) - start )) s"
exit $rc
