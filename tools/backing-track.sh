#!/bin/sh
# Makes racks/tracks/demo-backing.ogg, the small backing track the KTV and looper racks
# play: the demo's chord progression (C Am F G, 2 s each) from the bundled synth, rendered
# by StageRack itself and written as Ogg Vorbis (about 60 KB). Usage: tools/backing-track.sh [STAGERACK]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/.build/release/stagerack}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/chords.json" <<'RACK'
{ "format": 2,
  "units": { "synth": { "type": "synth", "soundfont": "stagerack-basic", "program": 1, "channel": "all", "params": { "gain": 3 } },
             "out": { "type": "output" } },
  "connections": [ "synth -> out" ] }
RACK
cp "$here/soundfonts/stagerack-basic.sf2" "$tmp/" 2>/dev/null || true
"$bin" render "$tmp/chords.json" --demo --duration 8 --output "$here/racks/tracks/demo-backing.ogg"
