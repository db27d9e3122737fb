"""Shared by the remote's tests (Tests/remote): racks written to a work folder, `play`
started on alsa-lib's null (or file) devices with --osc/--web on loopback ports, an OSC
client, and `check(name, fn)` that counts passes and failures. Loopback only, bounded
waits everywhere."""
import atexit
import json
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("STAGERACK", ".build/release/stagerack")
results = {"passed": 0, "failed": 0}


def check(name, fn):
    try:
        fn()
        results["passed"] += 1
        print("ok   " + name, flush=True)
    except Exception as e:  # a failed check never stops the others
        results["failed"] += 1
        print("FAIL %s: %s" % (name, e), flush=True)


def finish():
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 0 if results["failed"] == 0 else 1


def receive_until(c, kind, seconds=5.0, where=None):
    """WebSocket messages on `c` until one of type `kind` for which `where(m)` holds (any,
    when `where` is None); that one is returned. Bounded by `seconds`."""
    end = time.time() + seconds
    last = None
    while time.time() < end:
        try:
            m = json.loads(c.recv(timeout=max(0.05, end - time.time())))
        except TimeoutError:
            break
        if m.get("type") == kind:
            last = m
            if where is None or where(m):
                return m
    raise AssertionError("no %s message%s (the last: %s)" % (kind, "" if where is None else " as expected", last))


def free_port(kind=socket.SOCK_DGRAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


RACK_A = """{ "format": 2, "name": "Song A",
  "units": { "mic": { "type": "input" }, "vox": { "type": "gain", "params": { "gain": -6 } },
    "reverb": { "type": "reverb", "params": { "dryWetMix": 20 } }, "out": { "type": "output" } },
  "connections": [ "mic -> vox -> reverb -> out" ],
  "midi": { "map": [ { "cc": 91, "to": "reverb.dryWetMix", "min": 0, "max": 100 } ] },
  "snapshots": { "wet": { "params": { "reverb.dryWetMix": 90 }, "morph": 0 } } }"""
RACK_B = """{ "format": 2, "name": "Song B",
  "units": { "mic": { "type": "input" }, "vox": { "type": "gain", "params": { "gain": -12 } },
    "out": { "type": "output" } },
  "connections": [ "mic -> vox -> out" ] }"""
SETLIST = """{ "format": 1, "name": "Remote test",
  "songs": [ { "rack": "a.json", "program": 1, "name": "Opener" }, { "rack": "b.json", "program": 2, "name": "Closer" } ] }"""


def work_folder():
    """A fresh folder with the test racks, removed when the script ends."""
    d = tempfile.mkdtemp(prefix="stagerack-remote-")
    atexit.register(shutil.rmtree, d, True)
    for name, text in (("a.json", RACK_A), ("b.json", RACK_B), ("set.json", SETLIST)):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    return d


class Play:
    """`stagerack play` in the background; `wait_for(text)` reads its log (bounded)."""

    def __init__(self, args, env=None, wait_text="running", timeout=30):
        fd, self.log_path = tempfile.mkstemp(prefix="stagerack-play-", suffix=".log")
        self.log = os.fdopen(fd, "w")
        atexit.register(lambda: os.path.exists(self.log_path) and os.remove(self.log_path))
        e = dict(os.environ)
        e.update(env or {})
        self.proc = subprocess.Popen([BIN, "play"] + args + ["--no-config"], stdout=self.log, stderr=subprocess.STDOUT, env=e)
        self.wait_for(wait_text, timeout)

    def text(self):
        with open(self.log_path) as f:
            return f.read()

    def wait_for(self, text, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            if text in self.text():
                return
            if self.proc.poll() is not None:
                raise RuntimeError("play exited (%s):\n%s" % (self.proc.returncode, self.text()[-2000:]))
            time.sleep(0.05)
        raise RuntimeError("no %r in the log after %d s:\n%s" % (text, timeout, self.text()[-2000:]))

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(2)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()
        return self.proc.returncode


# ---------------------------------------------------------------- OSC (a test client)

def osc_string(s):
    b = s.encode() + b"\0"
    return b + b"\0" * (-len(b) % 4)


def osc_message(path, *args):
    types = ","
    data = b""
    for a in args:
        if isinstance(a, float):
            types += "f"
            data += struct.pack(">f", a)
        elif isinstance(a, int):
            types += "i"
            data += struct.pack(">i", a)
        else:
            types += "s"
            data += osc_string(a)
    return osc_string(path) + osc_string(types) + data


def osc_parse(packet):
    def string(i):
        end = packet.index(b"\0", i)
        return packet[i:end].decode(), (end + 4) & ~3
    path, i = string(0)
    types, i = string(i)
    args = []
    for t in types[1:]:
        if t == "f":
            args.append(struct.unpack(">f", packet[i:i + 4])[0])
            i += 4
        elif t == "i":
            args.append(struct.unpack(">i", packet[i:i + 4])[0])
            i += 4
        elif t == "s":
            s, i = string(i)
            args.append(s)
    return path, args


class OSCClient:
    def __init__(self, port):
        self.server = ("127.0.0.1", port)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)

    def send(self, path, *args):
        self.sock.sendto(osc_message(path, *args), self.server)

    def send_raw(self, data):
        self.sock.sendto(data, self.server)

    def receive(self, seconds=2.0, until=None):
        """Messages received for up to `seconds` (or until `until(path, args)` is true)."""
        out = []
        end = time.time() + seconds
        while time.time() < end:
            try:
                data, _ = self.sock.recvfrom(65536)
            except socket.timeout:
                continue
            m = osc_parse(data)
            out.append(m)
            if until and until(*m):
                break
        return out

    def receive_quiet(self, quiet=0.4, limit=5.0):
        """Messages until none came for `quiet` seconds after the first (which may take up
        to `limit` seconds on a busy machine)."""
        out = []
        end = time.time() + limit
        last = None
        while time.time() < end and (last is None or time.time() - last < quiet):
            try:
                data, _ = self.sock.recvfrom(65536)
            except socket.timeout:
                continue
            out.append(osc_parse(data))
            last = time.time()
        return out

    def state(self):
        self.send("/stagerack/state")
        return {p: a for p, a in self.receive_quiet()}

    def close(self):
        self.sock.close()
