#!/bin/sh
# Makes the shipped spoken cues (racks/README.md, "Spoken cues"): one short mono FLAC per
# common section name, spoken by espeak-ng, 16 kHz, in racks/cues/. Run once by hand when
# the list changes (apt-get install espeak-ng sox); the files are checked in.
set -eu
out="$(dirname "$0")/../racks/cues"
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for name in intro verse "verse one" "verse two" "verse three" pre-chorus chorus "last chorus" bridge \
    solo breakdown instrumental interlude tag outro ending; do
    file=$(echo "$name" | tr ' ' '-')
    espeak-ng -v en -s 170 -w "$tmp/$file.wav" "$name"
    # 16 kHz mono, the silence at both ends trimmed, peak at −1 dBFS.
    sox "$tmp/$file.wav" -r 16000 -c 1 -b 16 "$out/$file.flac" silence 1 0.01 0.5% reverse silence 1 0.01 0.5% reverse norm -1
done
ls -l "$out"
