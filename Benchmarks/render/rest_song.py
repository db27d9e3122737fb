#!/usr/bin/env python3
"""Writes the rests workloads of Benchmarks/render as Standard MIDI Files.

rest_song.py rests OUT.mid SECONDS : Benchmarks/synth/make_song.py's dense pattern (an
    8-note chord every 250 ms, a melody note every 125 ms) during the first 10 s of every
    30 s, silence in between (a song with long rests).
rest_song.py empty OUT.mid SECONDS : no note at all, SECONDS long (an idle rack).
Format 0, 480 ticks per quarter note, 120 bpm (1 tick = 1/960 s).
"""
import importlib.util
import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("make_song", os.path.join(here, "../synth/make_song.py"))
song = importlib.util.module_from_spec(spec)
spec.loader.exec_module(song)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("rests", "empty"):
        sys.exit(__doc__)
    kind, path, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    total = seconds * 960
    events = []
    if kind == "rests":
        def sounding(tick):
            return tick % (30 * 960) < 10 * 960
        for i, tick in enumerate(range(0, total, song.CHORD_TICKS)):
            if not sounding(tick):
                continue
            for k, note in enumerate(song.CHORDS[(i // 8) % len(song.CHORDS)]):
                events.append((tick, 1, bytes([0x90, note, 60 + (i * 7 + k * 5) % 40])))
                events.append((tick + song.CHORD_TICKS - 10, 0, bytes([0x80, note, 0])))
        for i, tick in enumerate(range(0, total, song.MELODY_TICKS)):
            if not sounding(tick):
                continue
            note = song.MELODY[i % len(song.MELODY)]
            events.append((tick, 1, bytes([0x90, note, 80 + (i * 3) % 30])))
            events.append((tick + song.MELODY_TICKS - 10, 0, bytes([0x80, note, 0])))
    events.sort(key=lambda e: (e[0], e[1]))
    track = bytearray()
    track += song.var_len(0) + b"\xFF\x51\x03" + song.TEMPO_US.to_bytes(3, "big")
    track += song.var_len(0) + bytes([0xC0, 0])
    last = 0
    for tick, _, data in events:
        track += song.var_len(tick - last) + data
        last = tick
    track += song.var_len(total - last) + b"\xFF\x2F\x00"  # the end at SECONDS
    with open(path, "wb") as f:
        f.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, song.PPQ))
        f.write(b"MTrk" + struct.pack(">I", len(track)) + track)
    print(f"{path}: {sum(1 for e in events if e[2][0] == 0x90)} notes, {seconds} s")


if __name__ == "__main__":
    main()
