#!/usr/bin/env python3
"""Writes the dense synth workload of docs PEERS.md as a Standard MIDI File.

60 s (or SECONDS: the same pattern cut to that length), one channel (1), piano (program 0), 120 bpm: an 8-note chord struck every 250 ms
(held 240 ms) and a melody note every 125 ms (held 115 ms): 1,920 + 480 = 2,400 notes.
Deterministic (no randomness), format 0, 480 ticks per quarter note.

Usage: make_song.py OUT.mid [SECONDS]
"""
import struct
import sys

PPQ = 480
TEMPO_US = 500_000  # 120 bpm: a quarter note is 0.5 s, so 1 tick = 1/960 s
SECONDS = 60
CHORD_TICKS = 240   # 250 ms
MELODY_TICKS = 120  # 125 ms

# A I-vi-IV-V progression in C, voiced over three octaves (8 notes each).
CHORDS = [
    [36, 43, 48, 52, 55, 60, 64, 67],  # C
    [33, 40, 45, 48, 52, 57, 60, 64],  # Am
    [29, 36, 41, 45, 48, 53, 57, 60],  # F
    [31, 38, 43, 47, 50, 55, 59, 62],  # G
]
MELODY = [72, 74, 76, 79, 81, 79, 76, 74, 72, 71, 72, 76, 77, 76, 74, 71]


def var_len(n):
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    seconds = int(sys.argv[2]) if len(sys.argv) == 3 else SECONDS
    events = []  # (tick, order, bytes): note-offs sort before note-ons at one tick
    total_ticks = seconds * 960
    for i, tick in enumerate(range(0, total_ticks, CHORD_TICKS)):
        chord = CHORDS[(i // 8) % len(CHORDS)]
        for k, note in enumerate(chord):
            velocity = 60 + (i * 7 + k * 5) % 40
            events.append((tick, 1, bytes([0x90, note, velocity])))
            events.append((tick + CHORD_TICKS - 10, 0, bytes([0x80, note, 0])))
    for i, tick in enumerate(range(0, total_ticks, MELODY_TICKS)):
        note = MELODY[i % len(MELODY)]
        events.append((tick, 1, bytes([0x90, note, 80 + (i * 3) % 30])))
        events.append((tick + MELODY_TICKS - 10, 0, bytes([0x80, note, 0])))
    events.sort(key=lambda e: (e[0], e[1]))

    track = bytearray()
    track += var_len(0) + b"\xFF\x51\x03" + TEMPO_US.to_bytes(3, "big")
    track += var_len(0) + bytes([0xC0, 0])  # piano
    last = 0
    for tick, _, data in events:
        track += var_len(tick - last) + data
        last = tick
    track += var_len(0) + b"\xFF\x2F\x00"

    with open(sys.argv[1], "wb") as f:
        f.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, PPQ))
        f.write(b"MTrk" + struct.pack(">I", len(track)) + track)
    notes = sum(1 for e in events if e[2][0] == 0x90)
    print(f"{sys.argv[1]}: {notes} notes, {seconds} s")


if __name__ == "__main__":
    main()
