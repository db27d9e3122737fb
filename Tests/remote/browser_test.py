"""The page in a real browser: Debian's chromium (headless, 390x844, a phone) driven by
Selenium through chromium-driver, against `play` on alsa-lib's file plugin (a 440 Hz tone in,
the output recorded) with --web and --osc on 127.0.0.1. It enters the PIN, moves the
reverb's dryWetMix to fully dry (the engineer's view, the fader's Home key), switches to the next song, and
checks each in the engine (OSC) and in the recording (the tone at −6 dB, then at −12 dB);
an OSC message then moves a control and the page shows it. The screenshot is saved
(STAGERACK_SCREENSHOT, default out/remote/remote-page.png; the README's docs/remote-page.png is
one made with STAGERACK_SCREENSHOT=docs/remote-page.png) and checked not to be blank."""
import math
import os
import socket
import struct
import sys
import tempfile
import time
import wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import OSCClient, Play, check, finish, free_port, work_folder  # noqa: E402

from PIL import Image  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

PIN = "2580"
RATE = 48000
AMPLITUDE = 0.3
SCREENSHOT = os.environ.get("STAGERACK_SCREENSHOT", "out/remote/remote-page.png")

work = work_folder()
recording = os.path.join(work, "out.wav")
tone = os.path.join(work, "tone.raw")
with open(tone, "wb") as f:  # 60 s of a 440 Hz tone, raw float stereo (the capture file)
    one = b"".join(struct.pack("<2f", *2 * [AMPLITUDE * math.sin(2 * math.pi * 440 * n / RATE)]) for n in range(RATE))
    f.write(one * 60)
conf = os.path.join(work, "alsa.conf")
with open(conf, "w") as f:
    f.write("""pcm.to_file { type plug slave { pcm { type file slave.pcm "null" format "wav" file "%s" } format S16_LE } }
pcm.from_file { type file slave.pcm "null" format "raw" file "/dev/null" infile "%s" }
""" % (recording, tone))

fifo = os.path.join(work, "midi.fifo")  # raw MIDI into play's router (no /dev/snd/seq here)
os.mkfifo(fifo)
web_port = free_port(socket.SOCK_STREAM)
osc_port = free_port()
play = Play([os.path.join(work, "set.json"), "--playback", "to_file", "--capture", "from_file", "--duration", "55",
             "--web", "127.0.0.1:%d" % web_port, "--osc", str(osc_port)],
            env={"STAGERACK_WEB_PIN": PIN, "STAGERACK_MIDI_PIPE": fifo, "ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:" + conf}, wait_text="running")
started = time.time()
osc = OSCClient(osc_port)
marks = {}

options = webdriver.ChromeOptions()
for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=390,844",
          "--no-first-run", "--disable-extensions", "--disable-background-networking"]:
    options.add_argument(a)
options.binary_location = "/usr/bin/chromium"
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
driver.set_window_size(390, 844)
# The page itself gets 390x844 CSS pixels, as on a phone (the window's own bars aside).
driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
wait = WebDriverWait(driver, 20)


def osc_value(path):
    return osc.state().get(path, [None])[0]


def wait_until(fn, seconds=10, what="a condition"):
    end = time.time() + seconds
    while time.time() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError("timed out waiting for " + what)


def show(view):
    """The performer's or the engineer's view (the header's button switches)."""
    if not driver.find_element(By.ID, view).is_displayed():
        driver.execute_script("window.scrollTo(0, 0)")
        driver.find_element(By.ID, "view").click()
        wait.until(lambda d: d.find_element(By.ID, view).is_displayed())


def test_open_and_log_in():
    driver.get("http://127.0.0.1:%d/" % web_port)
    wait.until(lambda d: d.find_element(By.ID, "login").is_displayed())
    driver.find_element(By.ID, "pin").send_keys(PIN)
    driver.find_element(By.ID, "login-button").click()
    wait.until(lambda d: "can change" in d.find_element(By.ID, "link").get_attribute("textContent"))
    assert driver.find_element(By.ID, "rack").text == "Song A"
    size = driver.find_element(By.ID, "next").size
    assert size["height"] >= 44 and size["width"] >= 44, "touch target %r" % size


def test_move_the_reverb_dry_wet_mix():
    show("engineer")
    slider = wait.until(lambda d: d.find_element(By.ID, "param-reverb-dryWetMix"))
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", slider)
    slider.click()  # a tap: focuses the fader, changes nothing
    slider.send_keys(Keys.HOME)  # the fader's own keyboard control: all the way down
    wait_until(lambda: abs(osc_value("/stagerack/param/reverb/dryWetMix")) < 1e-3, what="dryWetMix 0 in the engine")
    marks["dry"] = time.time() - started
    wait.until(lambda d: d.find_element(By.ID, "value-reverb-dryWetMix").text == "0 %")
    time.sleep(2.5)


def test_switch_song():
    show("performer")
    driver.find_element(By.ID, "next").click()
    wait_until(lambda: osc_value("/stagerack/song") == 2, what="song 2 in the engine")
    marks["switched"] = time.time() - started
    wait.until(lambda d: d.find_element(By.ID, "rack").text == "Song B")
    time.sleep(2.5)


def test_osc_moves_a_control_on_the_page():
    show("engineer")
    osc.send("/stagerack/param/vox/gain", -20.0)
    wait.until(lambda d: d.find_element(By.ID, "value-vox-gain").text == "-20 dB")
    marks["osc"] = time.time() - started
    osc.send("/stagerack/param/vox/gain", -12.0)
    wait.until(lambda d: d.find_element(By.ID, "value-vox-gain").text == "-12 dB")


def test_midi_learn():
    """Touch "learn" on vox.gain, turn a knob (CC 24 through the pipe): the mapping shows in
    the list, the knob moves the page's control; "remove" takes the mapping away."""
    midi = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    try:
        button = driver.find_element(By.ID, "learn-vox-gain")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
        button.click()
        wait.until(lambda d: d.find_element(By.ID, "learn-vox-gain").text == "move a knob…")
        for v in (40, 50, 60, 70):
            os.write(midi, bytes([0xB0, 24, v]))
            time.sleep(0.03)
        item = '{ "cc": 24, "channel": 1, "to": "vox.gain" }'
        wait.until(lambda d: any(e.text == item for e in d.find_elements(By.CSS_SELECTOR, "#mappings code")))
        assert driver.find_element(By.ID, "learn-vox-gain").text == "learn"
        os.write(midi, bytes([0xB0, 24, 0]))
        wait.until(lambda d: d.find_element(By.ID, "value-vox-gain").text != "-12 dB")
        wait_until(lambda: osc_value("/stagerack/param/vox/gain") < -20, what="the knob moving vox.gain in the engine")
        remove = driver.find_element(By.CSS_SELECTOR, "#mappings button.unlearn")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", remove)
        remove.click()
        wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#mappings button.unlearn"))
    finally:
        os.close(midi)


def test_screenshot():
    driver.execute_script("document.getElementById('unit-reverb').scrollIntoView({block: 'end'})")
    time.sleep(0.5)
    os.makedirs(os.path.dirname(SCREENSHOT) or ".", exist_ok=True)
    assert driver.save_screenshot(SCREENSHOT)
    image = Image.open(SCREENSHOT).convert("RGB")
    assert image.size == (390, 844), image.size
    colors = image.getcolors(1 << 20) or []
    assert len(colors) > 50, "the screenshot looks blank (%d colours)" % len(colors)


def rms(samples):
    return math.sqrt(sum(s * s for s in samples) / max(len(samples), 1))


def test_recording():
    code = play.stop()
    assert code == 0, code
    with wave.open(recording) as w:
        assert w.getframerate() == RATE
        frames = w.readframes(w.getnframes())
    left = [struct.unpack_from("<h", frames, 4 * i)[0] / 32768 for i in range(len(frames) // 4)]

    def segment(t0, t1):
        return left[int(t0 * RATE):int(t1 * RATE)]

    # Times are wall-clock seconds since "running"; the file starts within a few periods of
    # it (paced to the wall clock), so each segment keeps 0.5 s away from its ends.
    dry = rms(segment(marks["dry"] + 0.5, marks["switched"] - 0.5))
    song_b = rms(segment(marks["switched"] + 0.8, marks["osc"] - 0.5))
    expected_dry = AMPLITUDE * 10 ** (-6 / 20) / math.sqrt(2)
    assert abs(20 * math.log10(dry / expected_dry)) < 1.0, "song A fully dry: %.4f, expected %.4f" % (dry, expected_dry)
    assert abs(20 * math.log10(song_b / dry) + 6) < 1.0, "song B should be 6 dB below: %.1f dB" % (20 * math.log10(song_b / dry))


try:
    check("browser: opens the page at 390x844, the PIN unlocks it, 44 px buttons", test_open_and_log_in)
    check("browser: the reverb's dryWetMix slider moves the engine (OSC shows 0)", test_move_the_reverb_dry_wet_mix)
    check("browser: the screenshot is saved and not blank", test_screenshot)
    check("browser: next switches the song in the engine", test_switch_song)
    check("browser: an OSC message moves the page's control", test_osc_moves_a_control_on_the_page)
    check("browser: MIDI learn from the page (learn, a knob moves the control, remove)", test_midi_learn)
finally:
    driver.quit()
    osc.close()
check("browser: the recording has the dry tone at -6 dB, then song B 6 dB lower", test_recording)
play.stop()
sys.exit(finish())
