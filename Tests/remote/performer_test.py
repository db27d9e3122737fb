"""The performer's view in a real browser (issue 32): Debian's chromium, headless, driven by
Selenium through chromium-driver, against `play` on alsa-lib's null devices with --web and
--osc on 127.0.0.1, at 390x844 (a phone) and 1280x800 (a laptop). After the PIN the
performer's view comes first and fits the phone without scrolling; a drag on a fader moves
the engine's value by the drag, from wherever it is touched (the error in dB is printed); a
tap changes nothing; a group fader moves all its targets; a toggle, a snapshot button and ▶
reach the engine; the page follows a change made over OSC within 100 ms (the latency is
printed); the looper's transport is a row of buttons; the engineer's view is one tap away, with a
value typed in after a long press.
Screenshots go to out/remote/ (STAGERACK_PERFORMER_SHOTS); with STAGERACK_DOCS_SHOT set,
the phone's performer view is also saved there (docs/performer-view.png).
Run by Tests/remote/run.sh (make remote-test)."""
import json
import math
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import OSCClient, Play, check, finish, free_port, receive_until, work_folder  # noqa: E402

from PIL import Image  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

PIN = "1357"
SHOTS = os.environ.get("STAGERACK_PERFORMER_SHOTS", "out/remote")
DOCS_SHOT = os.environ.get("STAGERACK_DOCS_SHOT")

RACK = """{ "format": 2, "name": "Performer test", "tempo": 96,
  "units": { "mic": { "type": "input" }, "tuner": { "type": "tuner" }, "eq": { "type": "eq" },
    "delay": { "type": "delay", "params": { "wetDryMix": 100 } },
    "reverb": { "type": "reverb", "params": { "dryWetMix": 100 } },
    "choir": { "type": "harmony", "voices": 2, "source": "scale", "key": "G", "scale": "major" },
    "loop": { "type": "looper" },
    "mix": { "type": "mixer", "inputs": 5, "params": { "gain1": -6, "gain2": -30, "gain3": -30, "gain4": -20 } },
    "out": { "type": "output" } },
  "connections": [ "mic -> tuner -> eq -> mix:1", "mic -> delay -> mix:2", "mic -> reverb -> mix:3", "mic -> choir -> mix:4", "mic -> loop -> mix:5", "mix -> out" ],
  "snapshots": { "verse": { "params": { "mix.gain3": -40 }, "morph": 0 }, "chorus": { "params": { "mix.gain3": -12 }, "morph": 0 },
    "bridge": { "params": { "mix.gain3": -24 }, "morph": 0 } },
  "performance": [
    { "label": "Voice", "to": "mix.gain1", "min": -40, "max": 6 },
    { "label": "Echo", "to": "mix.gain2", "min": -60, "max": 0 },
    { "label": "Reverb", "to": "mix.gain3", "min": -60, "max": 0 },
    { "label": "Harmony", "to": ["mix.gain4", "choir.voiceLevel1", "choir.voiceLevel2"], "min": -60, "max": 0 },
    { "label": "Effects", "to": ["mix.gain2", "mix.gain3"], "min": -60, "max": 0 },
    { "label": "Presence", "to": "eq.gain4", "min": -6, "max": 6 },
    { "label": "Echo on", "to": "delay.bypass" },
    { "label": "Reverb on", "to": "reverb.bypass" } ] }"""
SETLIST = """{ "format": 1, "name": "Performer set",
  "songs": [ { "rack": "perf.json", "name": "Amazing Grace" }, { "rack": "perf.json", "name": "Hallelujah" },
             { "rack": "perf.json", "name": "Fly Me to the Moon" } ] }"""

work = work_folder()
with open(os.path.join(work, "perf.json"), "w") as f:
    f.write(RACK)
with open(os.path.join(work, "perf-set.json"), "w") as f:
    f.write(SETLIST)
# A 440 Hz tone at -10.5 dBFS in (alsa-lib's file plugin reading raw floats), so the meters
# move; the output goes to the null device.
tone = os.path.join(work, "tone.raw")
with open(tone, "wb") as f:
    one = b"".join(struct.pack("<2f", *2 * [0.3 * math.sin(2 * math.pi * 440 * n / 48000)]) for n in range(48000))
    f.write(one * 120)
conf = os.path.join(work, "alsa.conf")
with open(conf, "w") as f:
    f.write('pcm.from_file { type file slave.pcm "null" format "raw" file "/dev/null" infile "%s" }\n' % tone)
web_port = free_port(socket.SOCK_STREAM)
osc_port = free_port()
play = Play([os.path.join(work, "perf-set.json"), "--playback", "null", "--capture", "from_file",
             "--web", "127.0.0.1:%d" % web_port, "--osc", str(osc_port)],
            env={"STAGERACK_WEB_PIN": PIN, "ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:" + conf}, wait_text="web: open")
osc = OSCClient(osc_port)
figures = {}

options = webdriver.ChromeOptions()
for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800",
          "--no-first-run", "--disable-extensions", "--disable-background-networking"]:
    options.add_argument(a)
options.binary_location = "/usr/bin/chromium"
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
wait = WebDriverWait(driver, 20)


def size(width, height, mobile):
    """The page gets width x height CSS pixels (the window's own bars aside)."""
    driver.set_window_size(width, height)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def osc_value(path):
    return osc.state().get(path, [None])[0]


def wait_until(fn, seconds=10, what="a condition"):
    end = time.time() + seconds
    while time.time() < end:
        v = fn()
        if v is not None and v is not False:
            return v
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def shot(name):
    os.makedirs(SHOTS, exist_ok=True)
    path = os.path.join(SHOTS, name)
    assert driver.save_screenshot(path)
    image = Image.open(path).convert("RGB")
    colors = image.getcolors(1 << 20) or []
    assert len(colors) > 50, "%s looks blank (%d colours)" % (name, len(colors))
    return path


def fader(i):
    return driver.find_element(By.ID, "control-input-%d" % i)


def inner_width(element):
    """The fader's travel: its width inside the border (the page's clientWidth)."""
    return driver.execute_script("return arguments[0].clientWidth", element)


def drag(element, from_fraction, dx):
    """Presses `element` at `from_fraction` of its width, moves `dx` px in steps, releases."""
    w = element.size["width"]
    start = int((from_fraction - 0.5) * w)
    chain = ActionChains(driver, duration=20).move_to_element_with_offset(element, start, 0).click_and_hold()
    steps = 8
    step = round(dx / steps)  # whole pixels: the drag made is exactly the one measured
    for _ in range(steps):
        chain = chain.move_by_offset(step, 0)
    chain.release().perform()
    return step * steps


def test_log_in_to_the_performer_view():
    size(390, 844, True)
    driver.get("http://127.0.0.1:%d/" % web_port)
    wait.until(lambda d: d.find_element(By.ID, "login").is_displayed())
    driver.find_element(By.ID, "pin").send_keys(PIN)
    driver.find_element(By.ID, "login-button").click()
    wait.until(lambda d: "write" in d.find_element(By.TAG_NAME, "body").get_attribute("class"))
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#controls .control")) == 8)
    assert driver.find_element(By.ID, "performer").is_displayed()
    assert not driver.find_element(By.ID, "engineer").is_displayed()
    assert driver.find_element(By.ID, "song-name").text == "Amazing Grace"
    assert driver.find_element(By.ID, "song-number").text == "1/3"
    assert driver.find_element(By.ID, "next-song").text == "next: Hallelujah"
    assert driver.find_element(By.ID, "tempo").text == "96 BPM"
    assert driver.find_element(By.ID, "key").text == "G major"
    labels = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#controls .control-label")]
    assert labels == ["Voice", "Echo", "Reverb", "Harmony", "Effects", "Presence", "Echo on", "Reverb on"], labels
    for e in driver.find_elements(By.CSS_SELECTOR, "#performer button, #controls .fader, #top button"):
        if not e.is_displayed():
            continue  # a row this song has not (its sections, its transpose)
        assert e.size["height"] >= 44, "touch target %s %r" % (e.get_attribute("id") or e.text, e.size)


def test_fits_the_phone_without_scrolling():
    time.sleep(0.5)  # meters running
    h = driver.execute_script("return [document.documentElement.scrollHeight, window.innerHeight, document.documentElement.scrollWidth, window.innerWidth]")
    figures["fit"] = "page %d px high in a %d px window, %d px wide in %d" % tuple(h)
    assert h[0] <= h[1] and h[2] <= h[3], figures["fit"]
    bottom = driver.execute_script("return document.getElementById('snapshots').getBoundingClientRect().bottom")
    figures["fit"] += "; the last row (snapshots, below the looper's transport) ends at %d px" % bottom
    assert bottom <= h[1], "the snapshots end at %d" % bottom
    shot("performer-390x844.png")
    if DOCS_SHOT:
        os.makedirs(os.path.dirname(DOCS_SHOT) or ".", exist_ok=True)
        driver.save_screenshot(DOCS_SHOT)


def test_a_drag_moves_the_value_by_the_drag():
    before = osc_value("/stagerack/param/mix/gain1")
    assert abs(before - -6) < 0.01, before
    f = fader(0)
    w = inner_width(f)
    dx = round(-0.25 * w)
    # Touched at 90 % of the width while the value sits at 74 %: no jump to the finger.
    dx = drag(f, 0.9, dx)
    expected = before + dx / w * 46  # the fader's whole width is -40…6 dB
    after = wait_until(lambda: (lambda v: v if v is not None and abs(v - before) > 0.5 else None)(osc_value("/stagerack/param/mix/gain1")),
                       what="mix.gain1 moved")
    time.sleep(0.3)
    after = osc_value("/stagerack/param/mix/gain1")
    error = abs(after - expected)
    figures["drag"] = "dragged %d px of %d: expected %.2f dB, got %.2f dB, error %.3f dB" % (dx, w, expected, after, error)
    assert error < 0.1, figures["drag"]
    # Fine: the same drag moves a quarter as far.
    driver.find_element(By.ID, "fine").click()
    fine_dx = drag(fader(0), 0.5, -dx)
    time.sleep(0.4)
    fine = osc_value("/stagerack/param/mix/gain1")
    driver.find_element(By.ID, "fine").click()
    fine_expected = after + fine_dx / w * 46 / 4
    figures["fine"] = "fine: expected %.2f dB, got %.2f dB, error %.3f dB" % (fine_expected, fine, abs(fine - fine_expected))
    assert abs(fine - fine_expected) < 0.1, figures["fine"]


def test_a_tap_changes_nothing():
    before = osc_value("/stagerack/param/mix/gain1")
    for fraction in (0.02, 0.98, 0.5):
        f = fader(0)
        x = int((fraction - 0.5) * f.size["width"])
        ActionChains(driver).move_to_element_with_offset(f, x, 0).click().perform()
        ActionChains(driver, duration=20).move_to_element_with_offset(f, x, 0).click_and_hold().move_by_offset(3, 0).release().perform()
    time.sleep(0.5)
    after = osc_value("/stagerack/param/mix/gain1")
    assert after == before, "a tap moved mix.gain1 from %s to %s" % (before, after)


def test_a_group_moves_together():
    drag(fader(4), 0.2, round(0.25 * fader(4).size["width"]))
    g2 = wait_until(lambda: (lambda v: v if v is not None and v > -29 else None)(osc_value("/stagerack/param/mix/gain2")), what="Effects moved")
    time.sleep(0.3)
    s = osc.state()
    g2, g3 = s["/stagerack/param/mix/gain2"][0], s["/stagerack/param/mix/gain3"][0]
    assert abs(g2 - g3) < 0.01 and abs(g2 - -15) < 0.6, (g2, g3)
    # The faders of its targets follow: Echo and Reverb show the same value.
    wait.until(lambda d: d.find_element(By.ID, "control-value-1").text == d.find_element(By.ID, "control-value-2").text)


def test_toggle_snapshot_next():
    toggle = driver.find_element(By.ID, "control-input-6")
    assert toggle.text == "on"
    toggle.click()
    wait_until(lambda: osc_value("/stagerack/bypass/delay") == 1, what="delay bypassed")
    wait.until(lambda d: d.find_element(By.ID, "control-input-6").text == "off")
    toggle.click()
    wait_until(lambda: osc_value("/stagerack/bypass/delay") == 0, what="delay back")
    buttons = driver.find_elements(By.CSS_SELECTOR, "#snapshots button")
    assert [b.text for b in buttons] == ["verse", "chorus", "bridge"]
    buttons[1].click()
    wait_until(lambda: abs(osc_value("/stagerack/param/mix/gain3") - -12) < 0.01, what="chorus recalled")
    wait.until(lambda d: "on" in d.find_elements(By.CSS_SELECTOR, "#snapshots button")[1].get_attribute("class"))
    driver.find_element(By.ID, "next").click()
    wait_until(lambda: osc_value("/stagerack/song") == 2, what="song 2")
    wait.until(lambda d: d.find_element(By.ID, "next-song").text == "next: Fly Me to the Moon")


def test_transport():
    """The looper's transport: a row of buttons (no one-button modes); a press fires the
    command without an error."""
    names = [b.text for b in driver.find_elements(By.CSS_SELECTOR, "#transport button")]
    assert names == ["record", "overdub", "play", "stop", "undo", "redo", "clear"], names
    driver.find_element(By.ID, "command-loop-record").click()
    driver.find_element(By.ID, "command-loop-stop").click()
    time.sleep(0.3)
    assert driver.find_element(By.ID, "message").text == "", driver.find_element(By.ID, "message").text


def test_tuner_readout():
    """The tuner's readout under the controls, from the meters: the 440 Hz tone is A4."""
    wait.until(lambda d: "A4" in d.find_element(By.ID, "readouts").text)
    figures["readout"] = driver.find_element(By.ID, "readouts").text


def engine_talk():
    """Talk as the engine has it, from the next meters message of a client of its own."""
    c = connect("ws://127.0.0.1:%d/" % web_port, origin="http://127.0.0.1:%d" % web_port, open_timeout=5)
    try:
        c.send(json.dumps({"type": "login", "pin": PIN}))
        c.send(json.dumps({"type": "meters", "on": True}))
        deadline = time.time() + 5
        while time.time() < deadline:
            m = json.loads(c.recv(timeout=5))
            if m.get("type") == "meters" and "talk" in m:
                return m["talk"]
        return None
    finally:
        c.close()


def test_talk():
    """Talk from the page: the engine's Talk on (it takes the delay's and reverb's feed to 0
    and bypasses the harmony: TalkStateTests measure that) and the button lit; again, off.
    The page's button follows the engine's Talk from the meters."""
    talk = driver.find_element(By.ID, "talk")
    assert talk.get_attribute("aria-pressed") == "false"
    assert engine_talk() is False
    talk.click()
    wait.until(lambda d: d.find_element(By.ID, "talk").get_attribute("aria-pressed") == "true")
    wait_until(lambda: engine_talk() is True, what="the engine's Talk on (meters)")
    talk.click()
    wait.until(lambda d: d.find_element(By.ID, "talk").get_attribute("aria-pressed") == "false")
    wait_until(lambda: engine_talk() is False, what="the engine's Talk off (meters)")


def test_follows_osc_within_100_ms():
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#controls .control")) == 8)
    time.sleep(0.5)
    latencies = []
    for value in (-20.0, -10.0, -30.0, -3.0, -25.0):
        driver.execute_script("""
            window.__seen = null;
            const out = document.getElementById('control-value-0');
            const want = arguments[0];
            const o = new MutationObserver(() => { if (out.textContent === want && !window.__seen) { window.__seen = Date.now(); o.disconnect(); } });
            o.observe(out, { childList: true, characterData: true, subtree: true });""", "%g dB" % value)
        sent = time.time() * 1000
        osc.send("/stagerack/param/mix/gain1", value)
        seen = wait_until(lambda: driver.execute_script("return window.__seen"), 5, "the page showing %g dB" % value)
        latencies.append(seen - sent)
        time.sleep(0.2)
    figures["follow"] = "OSC to page: %s ms (worst %.0f ms)" % (", ".join("%.0f" % x for x in latencies), max(latencies))
    assert max(latencies) <= 100, figures["follow"]


def test_osc_performs():
    """OSC /stagerack/perform/1 moves the first control (Voice, -40…+6 dB) like a drag: the
    engine and the page follow; /stagerack/tempo taps like the page's Tap."""
    osc.send("/stagerack/perform/1", 0.0)
    wait_until(lambda: osc_value("/stagerack/param/mix/gain1") == -40, what="mix.gain1 at -40 dB")
    wait.until(lambda d: d.find_element(By.ID, "control-value-0").text == "-40 dB")
    osc.send("/stagerack/tempo", 90.0)
    wait.until(lambda d: d.find_element(By.ID, "tempo").text == "90 BPM")


def test_engineer_view_one_tap_away():
    driver.find_element(By.ID, "view").click()
    wait.until(lambda d: d.find_element(By.ID, "engineer").is_displayed())
    assert not driver.find_element(By.ID, "performer").is_displayed()
    toggles = driver.find_elements(By.CSS_SELECTOR, "#units button.toggle")
    selects = driver.find_elements(By.CSS_SELECTOR, "#units select")
    assert selects, "enumerations as selects"
    units = driver.find_elements(By.CSS_SELECTOR, "#units details.unit")
    assert len(units) == 9, len(units)
    # Collapse one unit: its parameters hide.
    summary = driver.find_element(By.CSS_SELECTOR, "#unit-eq summary")
    summary.click()
    assert not driver.find_element(By.ID, "value-eq-gain4").is_displayed()
    summary.click()
    # A long press on a value types one in.
    out = driver.find_element(By.ID, "value-mix-gain4")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", out)
    ActionChains(driver).click_and_hold(out).pause(0.8).release().perform()
    field = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#units input.typed"))
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("-7.5", Keys.ENTER)
    wait_until(lambda: abs(osc_value("/stagerack/param/mix/gain4") - -7.5) < 0.01, what="mix.gain4 typed in")
    shot("engineer-390x844.png")
    figures["engineer"] = "%d units, %d selects, %d toggles" % (len(units), len(selects), len(toggles))
    driver.find_element(By.ID, "view").click()
    wait.until(lambda d: d.find_element(By.ID, "performer").is_displayed())


def test_messages_are_authenticated_and_checked():
    """perform and tempo over a WebSocket: refused without the PIN; with it, a bad control,
    position or tempo is an error reply; a good one moves the engine."""
    before = osc_value("/stagerack/param/mix/gain1")
    c = connect("ws://127.0.0.1:%d/" % web_port, origin="http://127.0.0.1:%d" % web_port, open_timeout=5, close_timeout=2)
    try:
        receive_until(c, "state")
        c.send('{"type":"perform","control":0,"value":1}')
        assert "read-only" in receive_until(c, "error")["error"]
        c.send('{"type":"tempo","bpm":120}')
        assert "read-only" in receive_until(c, "error")["error"]
        assert osc_value("/stagerack/param/mix/gain1") == before
        c.send('{"type":"login","pin":"%s"}' % PIN)
        receive_until(c, "session")
        for bad, words in (('{"type":"perform","control":8,"value":0}', "no performance control 9"),
                           ('{"type":"perform","control":0,"value":2}', "0…1"),
                           ('{"type":"perform","control":6,"value":0.5}', "0 or 1"),
                           ('{"type":"perform","control":"x","value":0}', "must be a number"),
                           ('{"type":"tempo","bpm":4000}', "20…400")):
            c.send(bad)
            e = receive_until(c, "error")["error"]
            assert words in e, (bad, e)
        c.send('{"type":"perform","control":0,"value":1}')
        m = receive_until(c, "perform", where=lambda m: m["control"] == 0)
        assert m["position"] == 1 and m["text"] == "6 dB", m
        wait_until(lambda: osc_value("/stagerack/param/mix/gain1") == 6, what="mix.gain1 at 6 dB")
        c.send('{"type":"tempo","bpm":100}')
        assert receive_until(c, "tempo")["bpm"] == 100
        wait.until(lambda d: d.find_element(By.ID, "tempo").text == "100 BPM")
        # The meters carry the tempo the engine follows and its source: the tap reached
        # the render thread (before it, the rack's 96 from "song").
        c.send('{"type":"meters","on":true}')
        m = receive_until(c, "meters", where=lambda m: m.get("tempo") == 100)
        assert m["tempoSource"] == "tap tempo", m
        wait.until(lambda d: d.find_element(By.ID, "tempo").get_attribute("title") == "tempo from tap tempo")
    finally:
        c.close()


def test_laptop():
    if not driver.find_element(By.ID, "performer").is_displayed():
        driver.find_element(By.ID, "view").click()
    size(1280, 800, False)
    time.sleep(0.5)
    h = driver.execute_script("return [document.documentElement.scrollHeight, window.innerHeight, document.documentElement.scrollWidth, window.innerWidth]")
    figures["laptop"] = "page %d px high in a %d px window, %d px wide in %d" % tuple(h)
    assert h[0] <= h[1] and h[2] <= h[3], figures["laptop"]
    before = osc_value("/stagerack/param/eq/gain4")
    f = fader(5)
    w = inner_width(f)
    dx = drag(f, 0.3, round(0.4 * w))
    time.sleep(0.5)
    after = osc_value("/stagerack/param/eq/gain4")
    expected = min(6, before + dx / w * 12)
    figures["laptop drag"] = "Presence: dragged %d px of %d: expected %.2f dB, got %.2f dB, error %.3f dB" % (dx, w, expected, after, abs(after - expected))
    assert abs(after - expected) < 0.1, figures["laptop drag"]
    shot("performer-1280x800.png")


try:
    check("performer: after the PIN the performer's view comes first (song, next, key, tempo, 8 labelled controls, 44 px)", test_log_in_to_the_performer_view)
    check("performer: fits 390x844 without scrolling", test_fits_the_phone_without_scrolling)
    check("performer: a drag moves the value by the drag, no jump; fine moves a quarter", test_a_drag_moves_the_value_by_the_drag)
    check("performer: a tap changes nothing", test_a_tap_changes_nothing)
    check("performer: a group fader moves all its targets", test_a_group_moves_together)
    check("performer: a toggle, a snapshot button and next reach the engine", test_toggle_snapshot_next)
    check("performer: the looper's transport as buttons", test_transport)
    check("performer: the tuner's note shown from the meters", test_tuner_readout)
    check("performer: Talk from the page takes the effects off the voice and back", test_talk)
    check("performer: the page follows an OSC change within 100 ms", test_follows_osc_within_100_ms)
    check("performer: OSC perform and tempo reach the engine and the page", test_osc_performs)
    check("performer: the engineer's view is one tap away (collapsible units, selects, a value typed in)", test_engineer_view_one_tap_away)
    check("performer: perform and tempo need the PIN and are checked", test_messages_are_authenticated_and_checked)
    check("performer: 1280x800 fits and a drag moves by the drag", test_laptop)
finally:
    driver.quit()
    osc.close()
    play.stop()
for k, v in figures.items():
    print("figure %s: %s" % (k, v))
sys.exit(finish())
