#!/usr/bin/env bash
# The main job: the default rack live when a sound card exists, else its demo rendered to a file.
set -euo pipefail
BIN=${BIN:-.build/release/stagerack}
RACK=${RACK:-racks/default.json}
OUT=${OUT:-out}
if compgen -G "/dev/snd/pcmC*D*p" >/dev/null; then
  echo "sound card found: playing $RACK live (stop with Ctrl-C); devices: $BIN devices" >&2
  exec "$BIN" play "$RACK" --status
fi
mkdir -p "$OUT"
echo "no sound card on this machine: rendering the demo of $RACK instead" >&2
"$BIN" render "$RACK" --demo --output "$OUT/default-demo.wav"
echo "wrote $OUT/default-demo.wav (play it on a machine with sound: aplay $OUT/default-demo.wav)" >&2
