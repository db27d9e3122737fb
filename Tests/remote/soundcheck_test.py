"""The page's Soundcheck button (issue 29) in a real browser (Debian's chromium, headless,
Selenium through chromium-driver), against `play` whose input is alsa-lib's file plugin
reading an espeak-ng take (room noise, then the voice at show level, then noise), paced to
the wall clock: after the PIN, "Soundcheck" in the engineer's view shows the guide (stay
quiet, then sing, counted down), then the proposals; they agree with the offline
`stagerack soundcheck --input` of the same stretch of the file (within 1.5 dB, the same
high-pass within 5 Hz: the take's start is the click's, known to a few tenths of a second).
A page without the PIN cannot start or apply one (an error, nothing written). "Apply" sets
the values in the engine (read back over OSC) and writes them into the rack file, its
comments kept. Run by Tests/remote/run.sh (make remote-test)."""
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, OSCClient, Play, check, finish, free_port, receive_until, work_folder  # noqa: E402

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

warnings.simplefilter("ignore", DeprecationWarning)
PIN = "2468"
RATE = 48000
LEAD = 18.0   # seconds of room noise before the voice in the capture file
CLICK = 12.0  # when the test presses Soundcheck (seconds of audio played): 3 s quiet, 20 s sing;
              # the voice must come 2 s or more after it (the noise floor is the take's first 2 s)

work = work_folder()
rack = os.path.join(work, "voice.json")
shutil.copy("racks/vocal-clean.json", rack)
original = open(rack).read()


def sox(*args):
    subprocess.run(["sox"] + list(args), check=True, capture_output=True)


# The capture file: LEAD s of room noise, the espeak-ng voice 6 dB under full scale, then
# noise to 60 s (alsa-lib's file plugin repeats stale data past the end), stereo floats.
text = ("Sing it loud: she sells sea shells on the sea shore. This is the soundcheck, one, two, one, two. "
        "Yes, sister, the show starts at six, so sing it strong and sweet, and sometimes softly.")
subprocess.run(["espeak-ng", "-w", os.path.join(work, "v.wav"), text], check=True)
sox(os.path.join(work, "v.wav"), "-r", str(RATE), os.path.join(work, "v48.wav"), "gain", "-6")
sox("-n", "-r", str(RATE), "-c", "1", os.path.join(work, "lead.wav"), "synth", str(LEAD), "whitenoise", "vol", "0.0003")
sox("-n", "-r", str(RATE), "-c", "1", os.path.join(work, "tail.wav"), "synth", "40", "whitenoise", "vol", "0.0003")
whole = os.path.join(work, "whole.wav")
sox(os.path.join(work, "lead.wav"), os.path.join(work, "v48.wav"), os.path.join(work, "tail.wav"), "-e", "floating-point", "-b", "32", whole)
sox(whole, "-t", "raw", "-e", "floating-point", "-b", "32", "-c", "2", os.path.join(work, "in.raw"))
conf = os.path.join(work, "alsa.conf")
with open(conf, "w") as f:
    f.write('pcm.take_in { type file slave.pcm "null" format "raw" file "/dev/null" infile "%s" }\n' % os.path.join(work, "in.raw"))

# The browser first (its start is the slow part), so the page is up well before CLICK.
options = webdriver.ChromeOptions()
for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900",
          "--no-first-run", "--disable-extensions", "--disable-background-networking"]:
    options.add_argument(a)
options.binary_location = "/usr/bin/chromium"
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
wait = WebDriverWait(driver, 20)
web_port = free_port(socket.SOCK_STREAM)
osc_port = free_port()
play = Play([rack, "--playback", "null", "--capture", "take_in", "--format", "FLOAT_LE", "--web", "127.0.0.1:%d" % web_port,
             "--osc", str(osc_port)],
            env={"STAGERACK_WEB_PIN": PIN, "ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:" + conf}, wait_text="info: running")
started = time.time()  # the audio starts as "running" is logged (paced from there)
osc = OSCClient(osc_port)
figures = {}

proposal = {}
clicked = [0.0]


def stranger():
    url = "ws://127.0.0.1:%d/" % web_port
    c = connect(url, origin="http://127.0.0.1:%d" % web_port, open_timeout=5, close_timeout=2, max_size=2 ** 22)
    receive_until(c, "hello")
    return c


def osc_value(path):
    osc.send("/stagerack/state")
    return {p: a for p, a in osc.receive_quiet()}.get(path, [None])[0]


def guide():
    return driver.find_element(By.ID, "soundcheck-guide").text


def test_a_stranger_cannot_start_one():
    c = stranger()
    c.send('{"type":"soundcheck","go":"start"}')
    m = receive_until(c, "error")
    assert "read-only" in m["error"], m
    c.close()
    time.sleep(0.3)
    assert "soundcheck" not in play.text(), "nothing started"


def test_the_button_guides_and_proposes():
    driver.get("http://127.0.0.1:%d/" % web_port)
    wait.until(lambda d: d.find_element(By.ID, "login").is_displayed())
    assert not driver.find_element(By.ID, "soundcheck").is_displayed(), "no Soundcheck button before the PIN"
    driver.find_element(By.ID, "pin").send_keys(PIN)
    driver.find_element(By.ID, "login-button").click()
    wait.until(lambda d: "write" in d.find_element(By.TAG_NAME, "body").get_attribute("class"))
    driver.find_element(By.ID, "view").click()
    wait.until(lambda d: d.find_element(By.ID, "soundcheck").is_displayed())
    left = CLICK - (time.time() - started)
    assert left > 0 or CLICK - left < LEAD - 2, "the page took %.1f s to come up" % (CLICK - left)
    left = max(left, 0)
    time.sleep(left)
    driver.find_element(By.ID, "soundcheck").click()
    clicked[0] = time.time() - started
    wait.until(lambda d: guide().startswith("Stay quiet"))
    quiet = guide()
    WebDriverWait(driver, 10).until(lambda d: guide().startswith("Sing and speak at show level"))
    counts = []
    end = time.time() + 30
    while time.time() < end and guide().startswith("Sing"):
        m = re.search(r": (\d+) s", guide())
        if m and (not counts or counts[-1] != int(m.group(1))):
            counts.append(int(m.group(1)))
        time.sleep(0.2)
    figures["guide"] = "%r, then the sing countdown %s" % (quiet, counts)
    assert len(counts) >= 10 and counts == sorted(counts, reverse=True), figures["guide"]
    WebDriverWait(driver, 60).until(lambda d: d.find_element(By.ID, "soundcheck-values").is_displayed())
    for row in driver.find_elements(By.CSS_SELECTOR, "#soundcheck-values tr"):
        proposal[row.get_attribute("data-target")] = float(row.find_element(By.CSS_SELECTOR, "td.value").text)
    assert driver.find_element(By.ID, "soundcheck-apply").is_displayed()

    # The offline soundcheck of the same stretch of the file (from the click, 23 s).
    take = os.path.join(work, "take.wav")
    sox(whole, take, "trim", "%.3f" % clicked[0], "23")
    copy = os.path.join(work, "offline.json")
    shutil.copy(rack, copy)
    r = subprocess.run([BIN, "soundcheck", copy, "--input", take], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    offline = {}
    for line in r.stdout.splitlines():
        words = line.split()
        if line.startswith("  ") and len(words) >= 2 and "." in words[0]:
            offline[words[0]] = float(words[1])
    figures["proposal"] = "clicked at %.2f s; page %s; offline %s" % (clicked[0], sorted(proposal.items()), sorted(offline.items()))
    assert set(proposal) == set(offline) and "comp.threshold" in offline and "deess.threshold" in offline, figures["proposal"]
    for k, v in offline.items():
        tolerance = 5 if k.startswith("eq.frequency") else 1.5
        assert abs(proposal[k] - v) <= tolerance, "%s: page %s, offline %s" % (k, proposal[k], v)


def test_a_stranger_cannot_apply_it():
    c = stranger()
    c.send('{"type":"soundcheck","go":"apply"}')
    m = receive_until(c, "error")
    assert "read-only" in m["error"], m
    c.close()
    time.sleep(0.3)
    assert open(rack).read() == original, "nothing written"


def test_apply_sets_the_engine_and_writes_the_rack():
    before = osc_value("/stagerack/param/comp/threshold")
    driver.find_element(By.ID, "soundcheck-apply").click()
    WebDriverWait(driver, 10).until(lambda d: "soundcheck applied" in d.find_element(By.ID, "notice").text)
    assert not driver.find_element(By.ID, "soundcheck-values").is_displayed()
    after = osc_value("/stagerack/param/comp/threshold")
    de = osc_value("/stagerack/param/deess/threshold")
    figures["apply"] = "comp.threshold %s -> %s dB, deess.threshold %s (proposed %s, %s); %s" % (
        before, after, de, proposal["comp.threshold"], proposal["deess.threshold"], driver.find_element(By.ID, "notice").text)
    assert abs(after - proposal["comp.threshold"]) < 0.01 and abs(de - proposal["deess.threshold"]) < 0.01, figures["apply"]
    written = open(rack).read()
    assert written != original
    assert [l for l in written.splitlines() if l.startswith("//")] == [l for l in original.splitlines() if l.startswith("//")]
    assert re.search(r'"threshold": %s\b' % re.escape(("%g" % proposal["comp.threshold"])), written), written
    assert '"expansionThreshold":' in written
    r = subprocess.run([BIN, "validate", rack], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


try:
    for name, fn in [(n, f) for n, f in list(globals().items()) if n.startswith("test_")]:
        check(name[5:].replace("_", " "), fn)
finally:
    for k, v in figures.items():
        print("  %s: %s" % (k, v))
    driver.quit()
    osc.close()
    play.stop()
sys.exit(finish())
