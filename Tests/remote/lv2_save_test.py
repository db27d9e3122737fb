""""Save" from the page with an LV2 plugin that keeps state (x42's convolver, Debian's
x42-plugins), through the real `play` and its WebSocket server: the save writes the
playing plugin's state into its unit's "state" (replacing the one on disk: a relative path
becomes the absolute one the plugin saved, with the properties the plugin keeps), keeps the
rest of the text, and the file still validates; a snapshot does not touch the state.
The reloaded response is measured by LV2StateSaveTests. Run by Tests/remote/run.sh."""
import json
import os
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Play, check, finish, free_port, receive_until, work_folder  # noqa: E402

import warnings  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

warnings.simplefilter("ignore", DeprecationWarning)

PIN = "2468"
IR = "/usr/lib/lv2/zeroconvo.lv2/ir/delta-48k.wav"
BINARY = os.path.abspath(os.environ.get("STAGERACK", ".build/release/stagerack"))
RACK = """{ "format": 2, "name": "LV2 save test",
  // a comment that saving keeps
  "units": {
    "mic": { "type": "input" },
    "zc": { "type": "lv2", "plugin": "http://gareus.org/oss/lv2/zeroconvolv#Mono",
      "state": { "http://gareus.org/oss/lv2/zeroconvolv#ir": { "type": "http://lv2plug.in/ns/ext/atom#Path", "value": "ir.wav" } } },
    "out": { "type": "output" }
  },
  "connections": [ "mic -> zc -> out" ]
}
"""

if not os.path.exists(IR):
    print("skip lv2 save (x42-plugins is not installed: scripts/install-deps.sh --test)")
    sys.exit(0)

work = work_folder()
rack_path = os.path.join(work, "lv2.json")
shutil.copy(IR, os.path.join(work, "ir.wav"))
with open(rack_path, "w") as f:
    f.write(RACK)
web_port = free_port(socket.SOCK_STREAM)
play = Play([rack_path, "--playback", "null", "--capture", "null", "--web", "127.0.0.1:%d" % web_port],
            env={"STAGERACK_WEB_PIN": PIN}, wait_text="web: open")


c = connect("ws://127.0.0.1:%d/" % web_port, origin="http://127.0.0.1:%d" % web_port, open_timeout=5, close_timeout=2, max_size=2 ** 22)
receive_until(c, "hello")
c.send(json.dumps({"type": "login", "pin": PIN}))
receive_until(c, "session")


def test_snapshot_leaves_the_state():
    c.send(json.dumps({"type": "save", "snapshot": "as found"}))
    receive_until(c, "mappings", where=lambda m: (m["notice"] or "").startswith("saved snapshot"))
    text = open(rack_path).read()
    assert '"value": "ir.wav"' in text and "zeroconvolv#gain" not in text, text


def test_save_writes_the_playing_state():
    time.sleep(1.1)  # one save a second at most
    c.send(json.dumps({"type": "save"}))
    m = receive_until(c, "mappings", where=lambda m: (m["notice"] or "").startswith("saved"))
    assert "the state of zc" in m["notice"], m
    text = open(rack_path).read()
    assert "// a comment that saving keeps" in text and '"mic": { "type": "input" },' in text, text
    assert '"value": "%s"' % os.path.join(work, "ir.wav") in text, text
    assert "zeroconvolv#gain" in text and "zeroconvolv#channel_gain" in text, text
    state = [line for line in text.splitlines() if line.lstrip().startswith('"http://gareus.org/oss/lv2/zeroconvolv#')]
    assert len(state) >= 5, text
    assert all(line.startswith("        ") for line in state), text  # indented under the unit
    r = subprocess.run([BINARY, "validate", rack_path], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


try:
    check("a snapshot leaves the plugin's state alone", test_snapshot_leaves_the_state)
    check("save writes the playing plugin's state, keeping the text", test_save_writes_the_playing_state)
finally:
    c.close()
    play.stop()
sys.exit(finish())
