"""MIDI learn and "save" from the page, through the real `play` and its WebSocket server
(two clients: what one does, the other sees). MIDI comes in as raw bytes through a named
pipe (STAGERACK_MIDI_PIPE: this machine has no /dev/snd/seq) into the same MIDIRouter the
sequencer feeds. Checks: learn makes the mapping `stagerack learn` would, every page shows
it, the knob then moves the parameter; it can be removed; read-only pages cannot learn or
save; "save" writes the values and the learned mapping into the rack file keeping its text
(comments, layout), or a new snapshot; `--watch` does not reload the rack for its own
write (and does for someone else's); a rack the player cannot write is saved as a copy in
the state directory ($STATE_DIRECTORY) that the next start plays. Run by
Tests/remote/run.sh (make remote-test)."""
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import OSCClient, Play, check, finish, free_port, receive_until, work_folder  # noqa: E402

import warnings  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

warnings.simplefilter("ignore", DeprecationWarning)

PIN = "1357"
RACK = """{ "format": 2, "name": "Learn test",
  // a comment that saving keeps
  "units": {
    "mic": { "type": "input" },
    "vox": { "type": "gain", "params": { "gain": -6 } },
    "reverb": { "type": "reverb" },   /* no params yet */
    "out": { "type": "output" }
  },
  "connections": [ "mic -> vox -> reverb -> out" ]
}
"""

work = work_folder()
rack_path = os.path.join(work, "learn.json")
with open(rack_path, "w") as f:
    f.write(RACK)
fifo = os.path.join(work, "midi.fifo")
os.mkfifo(fifo)
web_port = free_port(socket.SOCK_STREAM)
osc_port = free_port()
play = Play([rack_path, "--playback", "null", "--capture", "null", "--watch",
             "--web", "127.0.0.1:%d" % web_port, "--osc", str(osc_port)],
            env={"STAGERACK_WEB_PIN": PIN, "STAGERACK_MIDI_PIPE": fifo}, wait_text="web: open")
osc = OSCClient(osc_port)
midi = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # play holds it open for reading
URL = "ws://127.0.0.1:%d/" % web_port
ORIGIN = "http://127.0.0.1:%d" % web_port


def ws():
    return connect(URL, origin=ORIGIN, open_timeout=5, close_timeout=2, max_size=2 ** 22)


def logged_in():
    c = ws()
    receive_until(c, "hello")
    c.send(json.dumps({"type": "login", "pin": PIN}))
    receive_until(c, "session")
    return c


def cc(controller, *values):
    os.write(midi, bytes(b for v in values for b in (0xB0, controller, v)))


def gain():
    return osc.state()["/stagerack/param/vox/gain"][0]


def learned(m):
    return any(x["learned"] is not None and '"cc": 21' in x["text"] for x in m["mappings"])


a = logged_in()
b = logged_in()


def test_learn_from_the_page():
    a.send(json.dumps({"type": "learn", "unit": "vox", "param": "gain"}))
    m = receive_until(b, "mappings", where=lambda m: m["learning"] == "vox.gain")
    assert "move a control" in m["notice"], m
    for v in (10, 20, 30, 40, 50):  # a knob turned
        cc(21, v)
        time.sleep(0.03)
    for c in (a, b):  # the mapping is made and every page sees it
        m = receive_until(c, "mappings", where=learned)
        assert m["learning"] is None, m
        texts = [x["text"] for x in m["mappings"]]
        assert '{ "cc": 21, "channel": 1, "to": "vox.gain" }' in texts, texts
        assert m["notice"].startswith("learned"), m


def test_the_learned_knob_moves_the_parameter():
    cc(21, 127)
    top = receive_until(b, "change", where=lambda m: m["unit"] == "vox" and m["param"] == "gain")["value"]
    deadline = time.time() + 3
    while abs(gain() - top) > 1e-3 and time.time() < deadline:
        time.sleep(0.1)
    assert abs(gain() - top) < 1e-3, (gain(), top)
    cc(21, 0)
    low = receive_until(a, "change", where=lambda m: m["unit"] == "vox" and m["value"] < top)["value"]
    assert low < top - 10, (low, top)


def test_read_only_pages_cannot_learn_or_save():
    c = ws()
    receive_until(c, "hello")
    c.send(json.dumps({"type": "learn", "unit": "vox", "param": "gain"}))
    assert "read-only" in receive_until(c, "error")["error"]
    c.send(json.dumps({"type": "save"}))
    assert "read-only" in receive_until(c, "error")["error"]
    c.close()


def test_a_learned_mapping_can_be_removed():
    a.send(json.dumps({"type": "unlearn", "index": 0}))
    for c in (a, b):
        m = receive_until(c, "mappings", where=lambda m: not learned(m))
        assert m["notice"].startswith("removed"), m
    before = gain()
    cc(21, 64)
    time.sleep(0.5)
    assert gain() == before, (gain(), before)
    a.send(json.dumps({"type": "unlearn", "index": 5}))  # no such mapping: nothing changes
    time.sleep(0.3)


def test_learning_can_be_cancelled():
    a.send(json.dumps({"type": "learn", "unit": "reverb", "param": "dryWetMix"}))
    receive_until(b, "mappings", where=lambda m: m["learning"] == "reverb.dryWetMix")
    a.send(json.dumps({"type": "learnCancel"}))
    m = receive_until(b, "mappings", where=lambda m: m["learning"] is None)
    assert "cancelled" in m["notice"], m


def test_save_writes_values_and_mappings_keeping_the_text():
    a.send(json.dumps({"type": "learn", "unit": "reverb", "param": "dryWetMix"}))
    receive_until(a, "mappings", where=lambda m: m["learning"] == "reverb.dryWetMix")
    for v in (5, 15, 25, 35):
        cc(22, v)
        time.sleep(0.03)
    receive_until(a, "mappings", where=lambda m: m["notice"].startswith("learned"))
    a.send(json.dumps({"type": "set", "unit": "reverb", "param": "dryWetMix", "value": 42}))
    a.send(json.dumps({"type": "set", "unit": "vox", "param": "gain", "value": -3.5}))
    receive_until(b, "change", where=lambda m: m["param"] == "gain" and m["value"] == -3.5)
    a.send(json.dumps({"type": "save"}))
    m = receive_until(b, "mappings", where=lambda m: m["notice"].startswith("saved"))
    assert rack_path in m["notice"], m
    text = open(rack_path).read()
    assert "// a comment that saving keeps" in text and "/* no params yet */" in text, text
    assert '"gain": -3.5' in text, text
    assert '"dryWetMix": 42' in text, text
    assert '{ "cc": 22, "channel": 1, "to": "reverb.dryWetMix" }' in text, text
    assert text.count("\n") >= RACK.count("\n"), text
    # It reads back as a rack with those values (validate is the reader's own check).
    r = subprocess.run([os.environ.get("STAGERACK", ".build/release/stagerack"), "validate", rack_path],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    # The saved mappings are the rack file's now: no longer listed as removable.
    assert not any(x["learned"] is not None for x in m["mappings"]), m


def test_watch_ignores_its_own_write():
    time.sleep(1.0)  # --watch is polled by the main loop
    log = play.text()
    assert "saved from the page, not reloading" in log, log[-1500:]
    assert "changed on disk: reloading" not in log, log[-1500:]
    # Someone else's edit is still reloaded.
    with open(rack_path) as f:
        text = f.read()
    with open(rack_path, "w") as f:
        f.write(text.replace('"gain": -3.5', '"gain": -4'))
    play.wait_for("changed on disk: reloading", 10)
    # The reloaded rack is a new generation: a page's command for the old one is refused.
    # Wait until both pages have its whole state (vox gain -4) before the next test's sets.
    def reloaded(m):
        vox = [u for u in m["units"] if u["id"] == "vox"]
        return bool(vox) and any(p["id"] == "gain" and p["value"] == -4 for p in vox[0]["params"])
    for c in (a, b):
        receive_until(c, "state", seconds=10, where=reloaded)


def test_save_as_a_snapshot():
    play.wait_for("Learn test", 5)
    a.send(json.dumps({"type": "set", "unit": "reverb", "param": "dryWetMix", "value": 77}))
    receive_until(b, "change", where=lambda m: m["param"] == "dryWetMix" and m["value"] == 77)
    a.send(json.dumps({"type": "save", "snapshot": "page wet"}))
    receive_until(b, "mappings", where=lambda m: (m["notice"] or "").startswith("saved snapshot"))
    text = open(rack_path).read()
    assert '"page wet": { "params": { "reverb.dryWetMix": 77 } }' in text, text
    a.send(json.dumps({"type": "save", "snapshot": "page wet"}))  # a name taken is refused
    m = receive_until(b, "mappings", where=lambda m: (m["notice"] or "").startswith("not saved"))
    assert "already" in m["notice"], m
    a.send(json.dumps({"type": "save", "snapshot": "x" * 65}))
    assert "snapshot name" in receive_until(a, "error")["error"]


for name, fn in list(globals().items()):
    if name.startswith("test_"):
        check(name[5:].replace("_", " "), fn)
os.close(midi)
a.close()
b.close()
play.stop()


def test_a_read_only_rack_is_saved_to_the_state_directory():
    """`play` as the unprivileged user `nobody` (as the service's own user): the rack's folder
    is not writable, so the save goes to $STATE_DIRECTORY/racks/, named in
    saved-racks.json, and the next start plays the copy."""
    nobody = pwd.getpwnam("nobody")
    shipped = os.path.join(work, "shipped")
    state = os.path.join(work, "state")
    os.mkdir(shipped)
    os.mkdir(state)
    os.chmod(work, 0o755)
    shutil.copy(os.path.join(work, "a.json"), os.path.join(shipped, "a.json"))
    os.chmod(os.path.join(shipped, "a.json"), 0o644)
    os.chown(state, nobody.pw_uid, nobody.pw_gid)
    # The binary and the page's files copied where `nobody` can read them: the checkout may
    # sit in a folder only its owner can enter (a clone in `mktemp -d`).
    built = os.path.abspath(os.environ.get("STAGERACK", ".build/release/stagerack"))
    runnable = os.path.join(work, "bin")
    os.mkdir(runnable)
    binary = shutil.copy2(built, os.path.join(runnable, "stagerack"))
    shutil.copytree("web", os.path.join(runnable, "web"))
    for root, dirs, files in os.walk(runnable):
        for name in dirs + files:
            os.chmod(os.path.join(root, name), 0o755 if name in dirs or name == "stagerack" else 0o644)
    os.chmod(runnable, 0o755)
    env = {"STAGERACK": "/usr/bin/setpriv", "STAGERACK_WEB_PIN": PIN, "STATE_DIRECTORY": state}
    args = ["--reuid=%d" % nobody.pw_uid, "--regid=%d" % nobody.pw_gid, "--clear-groups", binary, "play",
            os.path.join(shipped, "a.json"), "--playback", "null", "--capture", "null", "--web", "127.0.0.1:%d" % web_port]
    p = Play2(args, env)
    try:
        c = logged_in()
        c.send(json.dumps({"type": "set", "unit": "reverb", "param": "dryWetMix", "value": 33}))
        c.send(json.dumps({"type": "save"}))
        m = receive_until(c, "mappings", where=lambda m: (m["notice"] or "").startswith("saved"))
        copy = os.path.join(state, "racks", "a.json")
        assert copy in m["notice"], m
        assert '"dryWetMix": 33' in open(copy).read()
        assert '"dryWetMix": 20' in open(os.path.join(shipped, "a.json")).read()
        index = json.load(open(os.path.join(state, "saved-racks.json")))
        assert index == {os.path.join(shipped, "a.json"): copy}, index
        time.sleep(1.1)  # one save a second at most
        c.send(json.dumps({"type": "set", "unit": "vox", "param": "gain", "value": -2}))
        c.send(json.dumps({"type": "save"}))  # the second save edits the copy: both changes kept
        receive_until(c, "mappings", where=lambda m: (m["notice"] or "").startswith("saved 1 value: vox.gain in"))
        text = open(copy).read()
        assert '"dryWetMix": 33' in text and '"gain": -2' in text, text
        c.close()
    finally:
        p.stop()
    p = Play2(args, env)
    try:
        p.wait_for("playing the copy saved from the page", 10)
    finally:
        p.stop()


class Play2(Play):
    """`play` started through setpriv (the first argument list is setpriv's)."""

    def __init__(self, args, env):
        import tempfile
        fd, self.log_path = tempfile.mkstemp(prefix="stagerack-play-", suffix=".log")
        os.chmod(self.log_path, 0o666)
        self.log = os.fdopen(fd, "w")
        e = dict(os.environ)
        e.update(env)
        self.proc = subprocess.Popen(["/usr/bin/setpriv"] + args + ["--no-config"], stdout=self.log, stderr=subprocess.STDOUT, env=e)
        self.wait_for("web: open", 30)


if os.geteuid() == 0 and os.path.exists("/usr/bin/setpriv"):
    check("a read-only rack is saved to the state directory", test_a_read_only_rack_is_saved_to_the_state_directory)
else:
    print("skip a read-only rack is saved to the state directory (needs root to become nobody)")
sys.exit(finish())
