"""Issue 32's small ones against the real `play` (loopback): after a SIGHUP reload the page
shows the reloaded rack's name; song numbers in the page's errors are 1-based as elsewhere;
`play --web` started from another folder finds web/ in the checkout that holds the build.
Run by Tests/remote/run.sh (make remote-test)."""
import json
import os
import signal
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, Play, check, finish, free_port, receive_until, work_folder  # noqa: E402

import warnings  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

warnings.simplefilter("ignore", DeprecationWarning)

work = work_folder()


def page(port):
    return connect("ws://127.0.0.1:%d/" % port, origin="http://127.0.0.1:%d" % port, open_timeout=5, close_timeout=2)


def test_reload_shows_the_new_name():
    port = free_port(socket.SOCK_STREAM)
    p = Play([os.path.join(work, "a.json"), "--playback", "null", "--capture", "null", "--web", "127.0.0.1:%d" % port],
             env={"STAGERACK_WEB_PIN": "4711"}, wait_text="web: open")
    try:
        c = page(port)
        m = receive_until(c, "state")
        assert m["rack"] == "Song A" and m["songs"] == ["Song A"], m["songs"]
        path = os.path.join(work, "a.json")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace('"Song A"', '"Song A, reloaded"'))
        p.proc.send_signal(signal.SIGHUP)
        m = receive_until(c, "state", 10)
        assert m["rack"] == "Song A, reloaded" and m["songs"] == ["Song A, reloaded"], (m["rack"], m["songs"])
        c.send(json.dumps({"type": "login", "pin": "4711"}))
        receive_until(c, "session")
        c.send(json.dumps({"type": "song", "number": 3}))
        e = receive_until(c, "error")["error"]
        assert "no song 3 (songs 1…1)" in e, e
        c.close()
        with open(path, "w") as f:
            f.write(text)
    finally:
        p.stop()


def test_web_folder_found_from_anywhere():
    port = free_port(socket.SOCK_STREAM)
    old = os.getcwd()
    os.chdir(work)  # no web/ here
    try:
        p = Play([os.path.join(work, "a.json"), "--playback", "null", "--capture", "null", "--web", "127.0.0.1:%d" % port],
                 env={"STAGERACK_WEB_PIN": "4711"}, wait_text="running")
    finally:
        os.chdir(old)
    try:
        p.wait_for("web: open", 10)
    finally:
        p.stop()


import harness  # noqa: E402

harness.BIN = os.path.abspath(BIN)  # Play() resolves the binary after the chdir
check("web: after SIGHUP the page shows the reloaded rack's name; song errors are 1-based", test_reload_shows_the_new_name)
check("web: play --web started outside the checkout finds web/", test_web_folder_found_from_anywhere)
sys.exit(finish())
