#!/usr/bin/env python3
"""A small ALSA sequencer client for the e2e tests: a controller that appears later.

    seqclient.py NAME [--wait-subscriber SECONDS] [--linger SECONDS] [--gap SECONDS] [--times] HEXBYTES...

Opens a sequencer client NAME with one readable port "out" (like a USB controller's),
waits until some client subscribes to it (StageRack connecting by name after the
port-start announcement), sends each HEXBYTES group (e.g. "B0 07 40") as one event to its
subscribers (`--gap`: that long after each), lingers, and exits (its port then vanishes).
Prints "client C:0" first; with `--times`, "sent MONOTONIC_SECONDS" after each event.
Exit status 2 when nobody subscribed in time. Needs only the standard library (ctypes).
"""
import ctypes
import sys
import time

SND_SEQ_OPEN_OUTPUT = 1
CAP_READ, CAP_SUBS_READ = 1 << 0, 1 << 5
TYPE_MIDI_GENERIC, TYPE_HARDWARE, TYPE_PORT = 1 << 1, 1 << 16, 1 << 19
QUEUE_DIRECT, ADDRESS_SUBSCRIBERS, ADDRESS_UNKNOWN = 253, 254, 253


class Addr(ctypes.Structure):
    _fields_ = [("client", ctypes.c_ubyte), ("port", ctypes.c_ubyte)]


class Event(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_ubyte), ("flags", ctypes.c_ubyte), ("tag", ctypes.c_ubyte), ("queue", ctypes.c_ubyte),
        ("time", ctypes.c_uint * 2), ("source", Addr), ("dest", Addr), ("data", ctypes.c_ubyte * 12),
    ]


def main(argv):
    args = list(argv[1:])
    name = args.pop(0).encode()
    wait_s, linger, gap, times = 10.0, 0.2, 0.0, False
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--wait-subscriber":
            wait_s = float(args.pop(0))
        elif opt == "--linger":
            linger = float(args.pop(0))
        elif opt == "--gap":
            gap = float(args.pop(0))
        elif opt == "--times":
            times = True
    lib = ctypes.CDLL("libasound.so.2")
    seq = ctypes.c_void_p()
    if lib.snd_seq_open(ctypes.byref(seq), b"default", SND_SEQ_OPEN_OUTPUT, 0) < 0:
        print("snd_seq_open failed", file=sys.stderr)
        return 1
    lib.snd_seq_set_client_name(seq, name)
    client = lib.snd_seq_client_id(seq)
    port = lib.snd_seq_create_simple_port(
        seq, b"out", CAP_READ | CAP_SUBS_READ, TYPE_MIDI_GENERIC | TYPE_HARDWARE | TYPE_PORT)
    if port < 0:
        print("snd_seq_create_simple_port failed", file=sys.stderr)
        return 1
    print("client %d:%d" % (client, port), flush=True)

    # Wait for a subscriber: /proc lists "Connecting To: C:P" under our port.
    deadline = time.monotonic() + wait_s
    while True:
        text = open("/proc/asound/seq/clients").read()
        block = text.split("Client %3d :" % client, 1)[-1].split("\nClient ", 1)[0]
        if "Connecting To:" in block:
            break
        if time.monotonic() > deadline:
            print("nobody subscribed to %s in %.1f s" % (name.decode(), wait_s), file=sys.stderr)
            return 2
        time.sleep(0.02)

    encoder = ctypes.c_void_p()
    lib.snd_midi_event_new(64, ctypes.byref(encoder))
    for group in args:
        raw = bytes(int(x, 16) for x in group.split())
        lib.snd_midi_event_reset_encode(encoder)
        ev = Event()
        lib.snd_midi_event_encode(encoder, raw, len(raw), ctypes.byref(ev))
        ev.queue = QUEUE_DIRECT
        ev.source.port = port
        ev.dest.client, ev.dest.port = ADDRESS_SUBSCRIBERS, ADDRESS_UNKNOWN
        if lib.snd_seq_event_output_direct(seq, ctypes.byref(ev)) < 0:
            print("snd_seq_event_output_direct failed", file=sys.stderr)
            return 1
        if times:
            print("sent %.6f" % time.monotonic(), flush=True)
        if gap:
            time.sleep(gap)
    time.sleep(linger)
    lib.snd_seq_close(seq)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
