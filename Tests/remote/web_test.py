"""The web server's security and protocol against the real `play` (null devices, --web and
--osc on 127.0.0.1): each case of racks/README.md § Remote control is a check of its own
(no PIN, wrong PIN, failures slowed, wrong Origin, oversized message, garbage, path
traversal, too many clients, the rate limit, read-only viewing off), plus a bounded fuzz of
WebSocket frames and JSON. Run by Tests/remote/run.sh (make remote-test)."""
import json
import os
import random
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import OSCClient, Play, check, finish, free_port, work_folder  # noqa: E402

import warnings  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

warnings.simplefilter("ignore", DeprecationWarning)  # connect() outside a `with`: closed by hand

PIN = "4711"
work = work_folder()
web_port = free_port(socket.SOCK_STREAM)
osc_port = free_port()
play = Play([os.path.join(work, "set.json"), "--playback", "null", "--capture", "null",
             "--web", "127.0.0.1:%d" % web_port, "--osc", str(osc_port)],
            env={"STAGERACK_WEB_PIN": PIN, "STAGERACK_WEB_CLIENTS": "4"}, wait_text="web: open")
osc = OSCClient(osc_port)
URL = "ws://127.0.0.1:%d/" % web_port
ORIGIN = "http://127.0.0.1:%d" % web_port


def ws(origin=ORIGIN):
    return connect(URL, origin=origin, open_timeout=5, close_timeout=2, max_size=2 ** 22)


def receive_until(c, kind, seconds=3.0, field=None):
    """Messages until one of type `kind` (and `field` matching) came; that one is returned."""
    end = time.time() + seconds
    while time.time() < end:
        try:
            m = json.loads(c.recv(timeout=max(0.05, end - time.time())))
        except TimeoutError:
            break
        if m.get("type") == kind and (field is None or all(m.get(k) == v for k, v in field.items())):
            return m
    raise AssertionError("no %s message %s" % (kind, field or ""))


def logged_in():
    c = ws()
    receive_until(c, "hello")
    c.send(json.dumps({"type": "login", "pin": PIN}))
    receive_until(c, "session")
    return c


def reverb_mix():
    return osc.state()["/stagerack/param/reverb/dryWetMix"][0]


def http(raw):
    s = socket.create_connection(("127.0.0.1", web_port), timeout=5)
    s.sendall(raw)
    data = b""
    end = time.time() + 5
    try:
        while len(data) < 1_000_000 and time.time() < end:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    s.close()
    return data


def test_log_gives_the_address_and_pin_setting():
    text = play.text()
    assert "web: open http://127.0.0.1:%d/" % web_port in text, text[-800:]
    assert PIN not in text, "the configured PIN is printed"


def test_page_is_served():
    r = http(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    assert r.startswith(b"HTTP/1.1 200"), r[:200]
    assert b"X-Frame-Options: DENY" in r or b"x-frame-options: DENY" in r, r[:600]
    assert b"<script src=\"app.js\">" in r
    r = http(b"GET /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    assert r.startswith(b"HTTP/1.1 200") and b"WebSocket" in r


def test_path_traversal():
    for path in [b"/../../../../etc/passwd", b"/%2e%2e/%2e%2e/%2e%2e/etc/passwd", b"/..%2f..%2f..%2fetc%2fpasswd",
                 b"//etc/passwd", b"/web/../../README.md", b"/./index.html/../../Package.swift", b"/.git/config",
                 b"/index.html%00.js", b"/Package.swift", b"/../Package.swift"]:
        r = http(b"GET " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert b"root:" not in r and b"swift-tools-version" not in r and b"[core]" not in r, (path, r[:300])
        assert not r.startswith(b"HTTP/1.1 200") or b"<!doctype html>" in r, (path, r[:200])


def test_post_is_refused():
    r = http(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
    assert not r.startswith(b"HTTP/1.1 200"), r[:200]


def test_no_pin_is_read_only():
    before = reverb_mix()
    c = ws()
    receive_until(c, "hello")
    state = receive_until(c, "state")
    assert any(u["id"] == "reverb" for u in state["units"]), "viewers see the rack"
    c.send(json.dumps({"type": "set", "unit": "reverb", "param": "dryWetMix", "value": 77}))
    e = receive_until(c, "error")
    assert "read-only" in e["error"], e
    time.sleep(0.2)
    assert reverb_mix() == before, "a page without the PIN changed the rack"
    c.close()


def test_wrong_pin():
    c = ws()
    receive_until(c, "hello")
    c.send(json.dumps({"type": "login", "pin": "0000"}))
    e = receive_until(c, "error")
    assert "wrong PIN" in e["error"], e
    c.send(json.dumps({"type": "set", "unit": "reverb", "param": "dryWetMix", "value": 77}))
    assert "read-only" in receive_until(c, "error")["error"]
    c.close()


def test_pin_then_changes_reach_the_engine_and_every_page():
    a = logged_in()
    b = ws()
    try:
        pin_then_changes(a, b)
    finally:
        a.close()
        b.close()


def pin_then_changes(a, b):
    receive_until(b, "state")
    a.send(json.dumps({"type": "set", "unit": "reverb", "param": "dryWetMix", "value": 42.5}))
    m = receive_until(b, "change", field={"unit": "reverb", "param": "dryWetMix"})
    assert abs(m["value"] - 42.5) < 1e-3 and m["text"] == "42.5 %", m
    assert abs(reverb_mix() - 42.5) < 1e-3, "OSC shows another value"
    # And the other way: OSC moves it, the page hears it.
    osc.send("/stagerack/param/reverb/dryWetMix", 12.0)
    m = receive_until(a, "change", field={"unit": "reverb", "param": "dryWetMix", "value": 12})
    assert m["text"] == "12 %", m
    a.send(json.dumps({"type": "bypass", "unit": "reverb", "on": True}))
    receive_until(b, "bypass", field={"unit": "reverb", "on": True})
    a.send(json.dumps({"type": "bypass", "unit": "reverb", "on": False}))
    receive_until(b, "bypass", field={"unit": "reverb", "on": False})
    a.send(json.dumps({"type": "song", "number": 2}))
    s = receive_until(b, "state", seconds=5, field={"song": 2})
    assert s["rack"] == "Song B", s["rack"]
    a.send(json.dumps({"type": "previous"}))
    receive_until(b, "state", seconds=5, field={"song": 1})
    a.send(json.dumps({"type": "snapshot", "name": "wet"}))
    receive_until(b, "snapshot", field={"name": "wet"})
    a.send(json.dumps({"type": "panic"}))


def test_session_token_resumes():
    c = ws()
    receive_until(c, "hello")
    c.send(json.dumps({"type": "login", "pin": PIN}))
    token = receive_until(c, "session")["token"]
    c.close()
    d = ws()
    receive_until(d, "hello")
    d.send(json.dumps({"type": "resume", "token": token}))
    receive_until(d, "session")
    d.send(json.dumps({"type": "resume", "token": "0" * 32}))
    assert "session has ended" in receive_until(d, "error")["error"]
    d.close()


def test_wrong_origin_is_refused():
    for origin in ["http://evil.example", "http://127.0.0.1:1", "null", "http://127.0.0.1:%d.evil.example" % web_port]:
        try:
            c = ws(origin=origin)
        except Exception:
            continue
        c.close()
        raise AssertionError("a WebSocket from %s was let in" % origin)
    ws().close()  # its own origin is let in


def test_oversized_message_closes():
    c = logged_in()
    c.send(json.dumps({"type": "snapshot", "name": "x" * 5000}))
    end = time.time() + 3
    closed = False
    while time.time() < end:
        try:
            c.recv(timeout=0.5)
        except TimeoutError:
            continue
        except Exception:
            closed = True
            break
    assert closed, "a 5 kB message did not close the connection"
    assert play.alive()


def test_garbage_gets_an_error_and_changes_nothing():
    before = reverb_mix()
    c = logged_in()
    for junk in ["not json{", "[1,2,3]", "{\"type\": 5}", "{\"type\":\"set\",\"unit\":\"reverb\",\"param\":\"dryWetMix\",\"value\":\"loud\"}",
                 "{\"type\":\"set\",\"unit\":\"nobody\",\"param\":\"x\",\"value\":1}", "{\"type\":\"song\",\"number\":99}",
                 "{\"type\":\"warp\"}", "{" * 300]:
        c.send(junk)
        e = receive_until(c, "error")
        assert e["error"], junk
    c.send(b"\x00\x01binary")
    assert "JSON text" in receive_until(c, "error")["error"]
    time.sleep(0.2)
    assert reverb_mix() == before
    c.close()


def test_too_many_clients():
    """webClients slots are for PIN holders: a fifth login is refused (the page stays a
    viewer); viewers without the PIN take other slots (Tests/remote/stage_security_test.py)."""
    open_ = [logged_in() for _ in range(4)]
    try:
        extra = ws()
        receive_until(extra, "hello")
        extra.send(json.dumps({"type": "login", "pin": PIN}))
        assert "webClients" in receive_until(extra, "error")["error"]
        extra.close()
    finally:
        for c in open_:
            c.close()
    time.sleep(0.3)
    logged_in().close()  # room again


def test_rate_limit():
    c = logged_in()
    for i in range(400):
        c.send(json.dumps({"type": "set", "unit": "vox", "param": "gain", "value": -10 - (i % 10)}))
    receive_until(c, "error", seconds=5, field=None)
    c.close()


def test_fuzz_frames_and_json():
    rng = random.Random(18)
    words = ["type", "set", "login", "pin", "unit", "param", "value", "reverb", "dryWetMix", "song", "number", "bypass", "on",
             "snapshot", "name", "meters", "resume", "token", "next", "previous", "panic"]

    def random_json(depth=0):
        r = rng.random()
        if depth > 3 or r < 0.3:
            return rng.choice([rng.choice(words), rng.uniform(-1e9, 1e9), rng.randrange(-5, 200), True, None, "", "\u2028\ud7ff"])
        if r < 0.6:
            return {rng.choice(words): random_json(depth + 1) for _ in range(rng.randrange(4))}
        return [random_json(depth + 1) for _ in range(rng.randrange(4))]

    sent = 0
    for round_ in range(8):
        c = logged_in()
        for _ in range(150):
            kind = rng.randrange(4)
            if kind == 0:
                c.send(json.dumps(random_json()))
            elif kind == 1:
                c.send(json.dumps({"type": rng.choice(words), rng.choice(words): random_json()}))
            elif kind == 2:
                c.send(bytes(rng.randrange(256) for _ in range(rng.randrange(64))))
            else:
                c.send("".join(chr(rng.randrange(32, 0x2FF)) for _ in range(rng.randrange(64))))
            sent += 1
            time.sleep(0.003)
        c.close()
    assert play.alive(), "play died"
    c = logged_in()
    c.close()
    # Raw TCP garbage and cut-off handshakes.
    for _ in range(30):
        s = socket.create_connection(("127.0.0.1", web_port), timeout=2)
        s.sendall(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 600))))
        s.close()
    time.sleep(0.3)
    assert play.alive(), "play died after raw garbage"
    ws().close()


def test_failures_are_slowed():
    c = ws()
    receive_until(c, "hello")
    waits = []
    for _ in range(5):
        c.send(json.dumps({"type": "login", "pin": "9999"}))
        waits.append(receive_until(c, "error")["error"])
    assert "try again in" in waits[3] or "too many wrong PINs" in waits[4], waits
    c.send(json.dumps({"type": "login", "pin": PIN}))
    e = receive_until(c, "error")
    assert "too many wrong PINs" in e["error"], "the right PIN was checked during the lock: %r" % e
    c.close()


check("web: the log gives the address, never the configured PIN", test_log_gives_the_address_and_pin_setting)
check("web: the page and its script are served", test_page_is_served)
check("web: path traversal never serves a file outside web/", test_path_traversal)
check("web: POST is refused (nothing changes over HTTP)", test_post_is_refused)
check("web: no PIN is read-only", test_no_pin_is_read_only)
check("web: a wrong PIN changes nothing", test_wrong_pin)
check("web: with the PIN, changes reach the engine (OSC) and every page; songs, snapshots, bypass, panic", test_pin_then_changes_reach_the_engine_and_every_page)
check("web: a session token resumes, a made-up one does not", test_session_token_resumes)
check("web: a WebSocket from another origin is refused", test_wrong_origin_is_refused)
check("web: an oversized message closes the connection", test_oversized_message_closes)
check("web: garbage gets an error reply and changes nothing", test_garbage_gets_an_error_and_changes_nothing)
check("web: too many PIN holders are refused (webClients 4)", test_too_many_clients)
check("web: the per-client rate limit answers a flood with an error", test_rate_limit)
check("web: fuzz of WebSocket frames, JSON and raw TCP: the server stays up", test_fuzz_frames_and_json)
check("web: repeated wrong PINs are slowed (the right one waits too)", test_failures_are_slowed)
osc.close()
code = play.stop()
check("play stopped cleanly after the web tests", lambda: None if code == 0 else (_ for _ in ()).throw(AssertionError(code)))


def test_viewers_off():
    p = free_port(socket.SOCK_STREAM)
    other = Play([os.path.join(work, "a.json"), "--playback", "null", "--capture", "null", "--web", str(p)],
                 env={"STAGERACK_WEB_PIN": PIN, "STAGERACK_WEB_VIEWERS": "false"}, wait_text="web: open")
    try:
        c = connect("ws://127.0.0.1:%d/" % p, origin="http://127.0.0.1:%d" % p, open_timeout=5)
        receive_until(c, "hello")
        assert "log in" in receive_until(c, "error")["error"]
        try:
            receive_until(c, "state", seconds=0.5)
            raise AssertionError("the state was sent before the PIN")
        except AssertionError as e:
            if "before the PIN" in str(e):
                raise
        c.send(json.dumps({"type": "login", "pin": PIN}))
        receive_until(c, "state")
        c.close()
    finally:
        other.stop()


check("web: with webViewers false, nothing is shown before the PIN", test_viewers_off)
sys.exit(finish())
