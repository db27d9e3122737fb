#!/usr/bin/env bash
# The `feedback` unit's notches end to end: `play` on a capture (alsa-lib's file plugin, no
# sound hardware) that carries a howl, a steady 1,250 Hz tone growing from silence; the
# unit's readout in `--status` (the generic UnitReadout path the tuner's readings take)
# shows a notch at the tone, and the output is cut under the input. Last line: "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
source Tests/cli/harness.sh

# The howl: 4 s of a 1,250 Hz sine faded in over 3 s, to −12 dBFS, mono 32-bit float.
sox -n -r 48000 -c 1 -e floating-point -b 32 -t raw "$WORK/howl.raw" synth 4 sine 1250 fade t 3 4 0 gain -12 || exit 1
cat >"$WORK/alsa.conf" <<CONF
pcm.fb_null { type null }
pcm.fb_out { type file  slave.pcm "fb_null"  format "raw"  truncate true  file "$WORK/playback.raw" }
pcm.fb_in { type file  slave.pcm "fb_null"  format "raw"  file "/dev/null"  infile "$WORK/howl.raw" }
CONF
export ALSA_CONFIG_PATH="/usr/share/alsa/alsa.conf:$WORK/alsa.conf"
cat >"$WORK/rack.json" <<'RACK'
{
  "format": 2,
  "units": {
    "mic": { "type": "input" },
    "fb":  { "type": "feedback" },
    "out": { "type": "output" },
  },
  "connections": [ "mic -> fb -> out" ],
}
RACK

notch_in_status() {
  local out hz
  out=$("$BIN" play "$WORK/rack.json" --playback fb_out --capture fb_in --capture-channels 1 --format FLOAT_LE --rate 48000 \
    --duration 3.5 --status --no-config 2>&1) || { echo "$out" | tail -5; return 1; }
  # The last status line's readout: "fb: 1 notch: 1250 Hz -6 dB".
  hz=$(grep '^status: ' <<<"$out" | tail -1 | grep -o 'fb: [0-9]* notch[es]*: [0-9]* Hz -[0-9.]* dB' | head -1)
  echo "last status: ${hz:-no notch} ($(grep -c '^status: ' <<<"$out") status lines)"
  [[ -n $hz ]] || { grep '^status: ' <<<"$out" | tail -3; return 1; }
  local f=${hz#*: *: }
  f=${f%% Hz*}
  # And the notch cuts: the last line's output at least 6 dB under its input.
  local levels
  levels=$(grep '^status: ' <<<"$out" | tail -1 | sed -E 's/.*\| in (-[0-9.]+) dBFS \| out (-[0-9.]+) dBFS.*/\1 \2/')
  echo "in, out (dBFS): $levels"
  ((f >= 1240 && f <= 1260)) && awk -v l="$levels" 'BEGIN { split(l, a, " "); exit !(a[2] < a[1] - 6) }'
}
check "play --status: a feedback unit shows its notch at a howl's 1,250 Hz, and it cuts" notch_in_status

finish
