"""MIDI keeps working while pages are open (the complaint users of other racks make: program
changes switched off, knobs the page cannot follow). The real `play` plays a two-song
setlist with its web server on; two pages are open, one logged in. MIDI comes in as raw
bytes through STAGERACK_MIDI_PIPE (the same MIDIRouter the sequencer feeds: no
/dev/snd/seq here). Checks: a program change switches the song on every page; a knob
(CC 91 → reverb.dryWetMix) moves the page's control and the engine (OSC reads it back);
after the page has changed the value, the knob moves it again. The time from the MIDI byte
to the page's message is printed (the issue asks for 100 ms; the bound asserted is looser,
as the machine may be busy). Run by Tests/remote/run.sh (make remote-test)."""
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import OSCClient, Play, check, finish, free_port, receive_until, work_folder  # noqa: E402

import warnings  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

warnings.simplefilter("ignore", DeprecationWarning)

PIN = "2468"
work = work_folder()
fifo = os.path.join(work, "midi.fifo")
os.mkfifo(fifo)
web_port = free_port(socket.SOCK_STREAM)
osc_port = free_port()
play = Play([os.path.join(work, "set.json"), "--playback", "null", "--capture", "null",
             "--web", "127.0.0.1:%d" % web_port, "--osc", str(osc_port)],
            env={"STAGERACK_WEB_PIN": PIN, "STAGERACK_MIDI_PIPE": fifo}, wait_text="web: open")
osc = OSCClient(osc_port)
midi = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # play holds it open for reading
URL = "ws://127.0.0.1:%d/" % web_port
ORIGIN = "http://127.0.0.1:%d" % web_port


def ws():
    return connect(URL, origin=ORIGIN, open_timeout=5, close_timeout=2, max_size=2 ** 22)


def reverb_mix():
    return osc.state()["/stagerack/param/reverb/dryWetMix"][0]


editor = ws()
receive_until(editor, "hello")
editor.send(json.dumps({"type": "login", "pin": PIN}))
receive_until(editor, "session")
viewer = ws()
receive_until(viewer, "hello")
receive_until(viewer, "state")


def song_of(message):
    return message.get("song")


def test_program_change_switches_the_song_on_every_page():
    os.write(midi, bytes([0xC0, 1]))  # program 2 (format 2 counts 1…128)
    for page in (editor, viewer):
        s = receive_until(page, "state", seconds=10, where=lambda m: song_of(m) == 2)
        assert s["rack"] == "Song B", s["rack"]
    os.write(midi, bytes([0xC0, 0]))  # back to program 1
    for page in (editor, viewer):
        receive_until(page, "state", seconds=10, where=lambda m: song_of(m) == 1)


def knob(value):
    """CC 91 → reverb.dryWetMix (0…100 %); the seconds until the viewer shows it."""
    want = value * 100.0 / 127.0
    t0 = time.time()
    os.write(midi, bytes([0xB0, 91, value]))
    m = receive_until(viewer, "change", seconds=5,
                      where=lambda m: m.get("unit") == "reverb" and m.get("param") == "dryWetMix"
                      and abs(m.get("value", -1) - want) < 0.5)
    return time.time() - t0, m


def test_a_knob_moves_every_page_and_the_engine():
    seconds, _ = knob(127)
    print("     MIDI knob → page: %.1f ms" % (seconds * 1000))
    assert seconds < 1.0, "%.0f ms from the knob to the page" % (seconds * 1000)
    assert abs(reverb_mix() - 100) < 0.5, reverb_mix()


def test_the_knob_still_moves_a_value_the_page_changed():
    editor.send(json.dumps({"type": "set", "unit": "reverb", "param": "dryWetMix", "value": 30}))
    receive_until(viewer, "change", where=lambda m: m.get("param") == "dryWetMix" and abs(m["value"] - 30) < 1e-3)
    assert abs(reverb_mix() - 30) < 1e-3
    # The mapping has no takeover: the knob jumps to where it is (pickup and scale are
    # SoftTakeoverTests' and the router's); sweep through it as a hand would.
    for v in (20, 38, 64):
        knob(v)
    assert abs(reverb_mix() - 64 * 100 / 127) < 0.5, reverb_mix()


for name, test in sorted((n, f) for n, f in list(globals().items()) if n.startswith("test_")):
    check("midi with pages: " + name[5:].replace("_", " "), test)
editor.close()
viewer.close()
os.close(midi)
play.stop()
sys.exit(finish())
