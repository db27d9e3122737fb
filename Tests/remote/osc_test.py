"""OSC against the real `play` (null devices, --osc on 127.0.0.1): the address space, its
errors, subscriptions, the allowed networks, and a bounded random sender (the server never
crashes, the rack keeps playing). Run by Tests/remote/run.sh (make remote-test)."""
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import OSCClient, Play, check, finish, free_port, osc_message, work_folder  # noqa: E402

work = work_folder()
port = free_port()
play = Play([os.path.join(work, "set.json"), "--playback", "null", "--capture", "null", "--osc", str(port)],
            wait_text="OSC: listening")
client = OSCClient(port)
watcher = OSCClient(port)



def expect_error(path, *args, raw=None, words=""):
    def run():
        before = client.state()
        if raw is not None:
            client.send_raw(raw)
        else:
            client.send(path, *args)
        msgs = client.receive(1.5, until=lambda p, a: p == "/stagerack/error")
        errs = [a[0] for p, a in msgs if p == "/stagerack/error"]
        assert errs, "no /stagerack/error reply"
        assert words in errs[0], "reply %r lacks %r" % (errs[0], words)
        after = client.state()
        assert before == after, "the state changed"
    return run


def test_listens_on_localhost_only():
    assert "OSC: listening on udp 127.0.0.1:%d" % port in play.text(), play.text()[-500:]


def test_state_and_subscription():
    watcher.send("/stagerack/subscribe")
    msgs = dict(watcher.receive_quiet())
    assert msgs.get("/stagerack/song") == [1, "Opener"], msgs.get("/stagerack/song")
    assert abs(msgs["/stagerack/param/reverb/dryWetMix"][0] - 20) < 1e-4
    assert msgs["/stagerack/bypass/reverb"] == [0]


def test_param_change_reaches_subscribers():
    # Sent with liblo's own oscsend.
    subprocess.run(["oscsend", "127.0.0.1", str(port), "/stagerack/param/reverb/dryWetMix", "f", "65"], check=True, timeout=10)
    msgs = watcher.receive(2.0, until=lambda p, a: p == "/stagerack/param/reverb/dryWetMix")
    got = [a for p, a in msgs if p == "/stagerack/param/reverb/dryWetMix"]
    assert got and abs(got[-1][0] - 65) < 1e-4, msgs
    assert abs(client.state()["/stagerack/param/reverb/dryWetMix"][0] - 65) < 1e-4


def test_bypass():
    client.send("/stagerack/bypass/reverb", 1)
    msgs = watcher.receive(2.0, until=lambda p, a: p == "/stagerack/bypass/reverb")
    assert ("/stagerack/bypass/reverb", [1]) in msgs, msgs
    client.send("/stagerack/bypass/reverb", 0)
    watcher.receive(2.0, until=lambda p, a: p == "/stagerack/bypass/reverb")


def test_snapshot():
    client.send("/stagerack/snapshot", "wet")
    msgs = watcher.receive(2.0, until=lambda p, a: p == "/stagerack/param/reverb/dryWetMix")
    assert ("/stagerack/snapshot", ["wet"]) in msgs, msgs
    got = [a for p, a in msgs if p == "/stagerack/param/reverb/dryWetMix"]
    assert got and abs(got[-1][0] - 90) < 1e-4, msgs


def test_songs_next_previous():
    client.send("/stagerack/song", 2)
    msgs = watcher.receive(5.0, until=lambda p, a: p == "/stagerack/song")
    assert ("/stagerack/song", [2, "Closer"]) in msgs, ("song 2", msgs)
    play.wait_for("switched to Closer", 5)
    client.send("/stagerack/previous")
    msgs = watcher.receive(5.0, until=lambda p, a: p == "/stagerack/song")
    assert ("/stagerack/song", [1, "Opener"]) in msgs, ("previous", msgs)
    watcher.receive_quiet()
    client.send("/stagerack/next")
    msgs = watcher.receive(5.0, until=lambda p, a: p == "/stagerack/song")
    assert ("/stagerack/song", [2, "Closer"]) in msgs, ("next", msgs)
    client.send("/stagerack/song", 1)
    watcher.receive(5.0, until=lambda p, a: p == "/stagerack/song")


def test_panic():
    client.send("/stagerack/panic")
    assert not [a for p, a in client.receive(0.5) if p == "/stagerack/error"]


def test_fuzz_never_crashes():
    rng = random.Random(18)
    good = [osc_message("/stagerack/param/reverb/dryWetMix", 50.0), osc_message("/stagerack/song", 1),
            osc_message("/stagerack/bypass/vox", 1), osc_message("/stagerack/snapshot", "wet")]
    for i in range(3000):
        kind = i % 3
        if kind == 0:
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))
        elif kind == 1:
            b = bytearray(rng.choice(good))
            for _ in range(rng.randrange(1, 6)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            data = bytes(b[: rng.randrange(1, len(b) + 1)])
        else:
            data = osc_message("/stagerack/" + rng.choice(["param/reverb/dryWetMix", "song", "bypass/reverb", "x"]),
                               *[rng.choice([1.0e30, -1.0e30, float("nan"), 7, -7, "s" * rng.randrange(50)]) for _ in range(rng.randrange(3))])
        client.send_raw(data)
        if i % 200 == 0:
            client.receive(0.01)
    client.receive_quiet(0.3)
    assert play.alive(), "play died"
    state = client.state()
    assert "/stagerack/song" in state, "no answer after the fuzz"


check("OSC listens on localhost only", test_listens_on_localhost_only)
check("OSC state and subscription", test_state_and_subscription)
check("OSC param change (oscsend) reaches subscribers and the state", test_param_change_reaches_subscribers)
check("OSC bypass", test_bypass)
check("OSC snapshot recall", test_snapshot)
check("OSC song, next, previous", test_songs_next_previous)
check("OSC panic", test_panic)
check("OSC unknown address: error reply, nothing changes", expect_error("/stagerack/volume", 1.0, words="unknown address"))
check("OSC unknown unit: error reply", expect_error("/stagerack/param/nobody/gain", 1.0, words="no unit"))
check("OSC wrong argument type: error reply", expect_error("/stagerack/param/vox/gain", "loud", words="number"))
check("OSC song out of range: error reply", expect_error("/stagerack/song", 9, words="no song"))
check("OSC garbage: error reply", expect_error(None, raw=b"\x00\x01garbage", words="not an OSC message"))
check("OSC bundle: error reply", expect_error(None, raw=b"#bundle\0" + b"\0" * 8, words="bundles"))
check("OSC oversized message: error reply", expect_error("/stagerack/snapshot", "w" * 5000, words="the most taken is 4096"))
check("OSC fuzz: 3000 random and mutated packets, the server answers after", test_fuzz_never_crashes)
client.close()
watcher.close()
code = play.stop()
check("play stopped cleanly after the OSC tests", lambda: (_ for _ in ()).throw(AssertionError(code)) if code != 0 else None)


def test_allowed_networks():
    p2 = free_port()
    other = Play([os.path.join(work, "a.json"), "--playback", "null", "--capture", "null", "--osc", "127.0.0.1:%d" % p2],
                 env={"STAGERACK_OSC_ALLOW": "10.0.0.0/8"}, wait_text="OSC: listening")
    try:
        c = OSCClient(p2)
        c.send("/stagerack/state")
        got = c.receive(1.0)
        assert got == [], "a source outside oscAllow got an answer: %r" % got[:3]
        c.close()
    finally:
        other.stop()
    p3 = free_port()
    allowed = Play([os.path.join(work, "a.json"), "--playback", "null", "--capture", "null", "--osc", "127.0.0.1:%d" % p3],
                   env={"STAGERACK_OSC_ALLOW": "127.0.0.0/8"}, wait_text="OSC: listening")
    try:
        c = OSCClient(p3)
        assert "/stagerack/song" in c.state()
        c.close()
    finally:
        allowed.stop()


check("OSC oscAllow: sources outside it get nothing, inside it are answered", test_allowed_networks)
sys.exit(finish())
