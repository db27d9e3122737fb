"""TLS for the web page and the remote's limits as settings, against the real `play`
(null devices, 127.0.0.1): with webCert/webKey (a self-signed certificate for 127.0.0.1 made
here by openssl) the page comes over HTTPS and the WebSocket over WSS, logging in and
changing a value work, and plain HTTP on that port gets nothing; a missing key file or a
certificate without its key is an error in the log and the rack plays on without the page.
webRate, webSessions and oscSubscribers change the limits (5 messages a second, one session,
one OSC subscriber). Run by Tests/remote/run.sh (make remote-test)."""
import json
import os
import socket
import ssl
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import OSCClient, Play, check, finish, free_port, receive_until, work_folder  # noqa: E402

import warnings  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

warnings.simplefilter("ignore", DeprecationWarning)

PIN = "8642"
work = work_folder()
cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
               check=True, capture_output=True, timeout=60)
trusting = ssl.create_default_context(cafile=cert)  # the phone told to trust this certificate
web_port = free_port(socket.SOCK_STREAM)
osc_port = free_port()
play = Play([os.path.join(work, "set.json"), "--playback", "null", "--capture", "null",
             "--web", "127.0.0.1:%d" % web_port, "--osc", str(osc_port)],
            env={"STAGERACK_WEB_PIN": PIN, "STAGERACK_WEB_CERT": cert, "STAGERACK_WEB_KEY": key,
                 "STAGERACK_WEB_RATE": "5", "STAGERACK_WEB_SESSIONS": "1", "STAGERACK_OSC_SUBSCRIBERS": "1"},
            wait_text="web: open")
osc = OSCClient(osc_port)
ORIGIN = "https://127.0.0.1:%d" % web_port


def wss():
    # Once in about ten CI runs the opening handshake right after the untrusted-certificate
    # test timed out (5 s, machine otherwise idle; not reproduced in 6 runs alone). Not
    # understood: a second attempt is made and the first one's timeout printed, so it stays
    # visible in the log without failing everyone's CI (the session's closing note says so).
    for attempt in (1, 2):
        try:
            return connect("wss://127.0.0.1:%d/" % web_port, origin=ORIGIN, ssl=trusting, open_timeout=5, close_timeout=2)
        except TimeoutError as e:
            if attempt == 2:
                raise
            print("note: a WSS opening handshake timed out (%s); trying once more" % e, flush=True)


def login(c):
    receive_until(c, "hello")
    c.send(json.dumps({"type": "login", "pin": PIN}))
    return receive_until(c, "session")["token"]


def test_the_log_gives_an_https_address():
    assert "web: open https://127.0.0.1:%d/" % web_port in play.text(), play.text()[-1500:]


def test_the_page_over_https():
    with urllib.request.urlopen("https://127.0.0.1:%d/" % web_port, context=trusting, timeout=5) as r:
        assert r.status == 200 and b"<title>StageRack</title>" in r.read()


def test_plain_http_gets_no_page():
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/" % web_port, timeout=5) as r:
            body = r.read()
        raise AssertionError("plain HTTP answered: %r" % body[:80])
    except AssertionError:
        raise
    except Exception:
        pass  # refused, reset or garbage: no page in the clear


def test_an_untrusted_certificate_is_refused_by_the_client():
    try:
        connect("wss://127.0.0.1:%d/" % web_port, origin=ORIGIN, ssl=ssl.create_default_context(), open_timeout=5).close()
        raise AssertionError("a client that does not trust the certificate connected")
    except ssl.SSLError:
        pass


def test_log_in_and_change_a_value_over_wss():
    c = wss()
    login(c)
    c.send(json.dumps({"type": "set", "unit": "reverb", "param": "dryWetMix", "value": 61}))
    end = time.time() + 5
    while osc.state().get("/stagerack/param/reverb/dryWetMix", [None])[0] != 61 and time.time() < end:
        time.sleep(0.1)
    assert osc.state()["/stagerack/param/reverb/dryWetMix"][0] == 61
    c.close()


def test_web_rate_limits_messages():
    c = wss()
    login(c)
    time.sleep(2.5)  # the bucket refills (bursts of twice the rate)
    for i in range(14):
        c.send(json.dumps({"type": "set", "unit": "reverb", "param": "dryWetMix", "value": i}))
    m = receive_until(c, "error")
    assert "at most 5 a second" in m["error"], m
    c.close()


def test_web_sessions_keeps_one_token():
    first = wss()
    token = login(first)
    first.close()
    second = wss()
    login(second)  # a second session: the first token is forgotten
    second.close()
    c = wss()
    receive_until(c, "hello")
    c.send(json.dumps({"type": "resume", "token": token}))
    assert "session has ended" in receive_until(c, "error")["error"]
    c.close()


def test_osc_subscribers_keeps_one():
    a, b = OSCClient(osc_port), OSCClient(osc_port)
    a.send("/stagerack/subscribe")
    a.receive_quiet()
    b.send("/stagerack/subscribe")  # the oldest (a) goes
    b.receive_quiet()
    osc.send("/stagerack/param/vox/gain", -9.0)
    got_b = b.receive(3, until=lambda p, args: p == "/stagerack/param/vox/gain")
    got_a = a.receive(1, until=lambda p, args: p == "/stagerack/param/vox/gain")
    assert any(p == "/stagerack/param/vox/gain" for p, _ in got_b), got_b
    assert not any(p == "/stagerack/param/vox/gain" for p, _ in got_a), got_a
    a.close()
    b.close()


def test_a_certificate_without_its_key_is_an_error():
    p = Play([os.path.join(work, "a.json"), "--playback", "null", "--capture", "null", "--web", "127.0.0.1:%d" % free_port(socket.SOCK_STREAM)],
             env={"STAGERACK_WEB_CERT": cert}, wait_text="running")
    p.wait_for("webCert and webKey go together", 5)
    p.wait_for("playing without the web page", 5)
    assert p.alive()
    p.stop()
    p = Play([os.path.join(work, "a.json"), "--playback", "null", "--capture", "null", "--web", "127.0.0.1:%d" % free_port(socket.SOCK_STREAM)],
             env={"STAGERACK_WEB_CERT": cert, "STAGERACK_WEB_KEY": os.path.join(work, "missing.pem")}, wait_text="running")
    p.wait_for("missing.pem", 5)
    assert p.alive()
    p.stop()


for name, fn in list(globals().items()):
    if name.startswith("test_"):
        check(name[5:].replace("_", " "), fn)
osc.close()
play.stop()
sys.exit(finish())
