#!/usr/bin/env python3
"""Makes racks/tracks/pad-backing.mid, the MIDI-file backing of the example setlist's song
"Pad song with a MIDI backing" (racks/README.md, "A MIDI file as backing"): eight bars of
4/4, the chords C Am F G twice as whole-note triads on channel 1 with the root an octave
down, 480 ticks a quarter note, a tempo of 96 BPM (the song's tempo when the setlist names
none). A type 0 Standard MIDI File of about 300 bytes, written with the standard library
only, the same bytes on every run.

Usage: tools/midi-backing.py [OUTPUT]     (default: racks/tracks/pad-backing.mid)
"""
import os
import struct
import sys

PPQ = 480
BPM = 96
CHORDS = [(60, 64, 67), (57, 60, 64), (53, 57, 60), (55, 59, 62)]  # C, Am, F, G
BAR = 4 * PPQ


def variable_length(value):
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.insert(0, (value & 0x7F) | 0x80)
        value >>= 7
    return bytes(out)


def events():
    """(tick, order, bytes): note-offs before note-ons at the same tick."""
    found = []
    for bar in range(8):
        chord = CHORDS[bar % 4]
        start, end = bar * BAR, (bar + 1) * BAR
        for key in chord + (chord[0] - 12,):
            found.append((start, 1, bytes([0x90, key, 80])))
            found.append((end - PPQ // 8, 0, bytes([0x80, key, 0])))
    return sorted(found)


def track():
    micros = 60_000_000 // BPM
    data = bytearray(b"\x00\xff\x51\x03" + micros.to_bytes(3, "big"))
    data += b"\x00\xff\x58\x04\x04\x02\x18\x08"  # 4/4
    last = 0
    for tick, _, message in events():
        data += variable_length(tick - last) + message
        last = tick
    data += variable_length(8 * BAR - last) + b"\xff\x2f\x00"
    return bytes(data)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "racks", "tracks", "pad-backing.mid")
    body = track()
    smf = b"MThd" + struct.pack(">IHHH", 6, 0, 1, PPQ) + b"MTrk" + struct.pack(">I", len(body)) + body
    with open(path, "wb") as f:
        f.write(smf)
    print("%s: %d bytes" % (path, len(smf)))


if __name__ == "__main__":
    main()
