"""Lyrics and chords on the page (issue 30) in a real browser: Debian's chromium, headless,
driven by Selenium, against `play` on alsa-lib's null devices with --web and --osc on
127.0.0.1. A setlist song at 240 BPM in 4/4 (a bar a second) with a section every bar and a
ChordPro file: the page shows the section playing (its lines, chords above the words) and
the next section's first lines, and follows the sections within 100 ms: the song is chosen
over OSC at time t0, section i starts at t0 + its bar's time (the song's clock starts at
the rack's first frame, a little after t0, so each figure is an upper bound), and the page
notes when it shows each section. The chord transposer (web/chords.js) is checked on sharps,
flats and slash chords; a meters message with "transpose" moves the chords shown; the
lyrics view (?view=lyrics) shows the lyrics alone, large. The song's row: the section playing
and the next, a vamp from ↺ Section (the next section shows two bars later, not one), the
song a whole step up from ♯ twice and back from ♭ twice (the engine's transpose, from its
meters). A song whose ChordPro lines carry times in its backing track ([0:01.00]): each line
is lit when the track reaches its time, within 100 ms (the track's time in the meters that
lit it, against the line's). Run by Tests/remote/run.sh."""
import math
import os
import socket
import struct
import sys
import time
import wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import OSCClient, Play, check, finish, free_port, work_folder  # noqa: E402

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

PIN = "2468"
SHOTS = os.environ.get("STAGERACK_PERFORMER_SHOTS", "out/remote")
BAR_SECONDS = 1.0  # 240 BPM, 4/4
RACK = """{ "format": 2, "name": "Lyrics test",
  "units": { "mic": { "type": "input" }, "vox": { "type": "gain" }, "out": { "type": "output" } },
  "connections": [ "mic -> vox -> out" ],
  "midi": { "map": [ { "note": 101, "action": "transpose-up" }, { "note": 102, "action": "transpose-down" } ] } }"""
NAMES = ["intro", "verse", "chorus", "verse", "chorus", "solo", "bridge", "chorus", "outro"]
SECTIONS = ", ".join('{ "name": "%s", "at": "%d:1" }' % (n, i + 1) for i, n in enumerate(NAMES))
TRACK_RACK = """{ "format": 2, "name": "Timed lyrics",
  "units": { "track": { "type": "player", "file": "t.wav", "startOnLoad": true }, "out": { "type": "output" } },
  "connections": [ "track -> out" ] }"""
TIMED_CHO = """{title: Timed}
[0:01.00] First [G]line
[0:02.00] Second line
[0:03.00] [C]Third line
"""
LINE_TIMES = [1.0, 2.0, 3.0]
SETLIST = """{ "format": 2, "name": "Lyrics set",
  "songs": [ { "rack": "r.json", "name": "Warm-up" },
             { "rack": "r.json", "name": "Grace", "tempo": 240, "timeSignature": "4/4", "bars": 12,
               "lyrics": "grace.cho", "sections": [ %s ] },
             { "rack": "r2.json", "name": "Timed", "track": "t.wav", "lyrics": "timed.cho" } ] }""" % SECTIONS
CHO = """{title: Amazing Grace}
{start_of_verse: Verse 1}
A[G]mazing [G7]grace, how [C]sweet the [G]sound
That [G]saved a [Em]wretch like [D]me
{end_of_verse}
{soc}
[D/F#]Praise the [Bb]grace, [F#m7]praise the [Eb/Bb]sound
{c: all together}
[C]Sing it a[G]gain
{eoc}
{sov: Verse 2}
'Twas [G]grace that [G7]taught my [C]heart to [G]fear
{eov}
{sob}
[Am]Through many [D]dangers
{eob}
"""

work = work_folder()
for name, text in (("r.json", RACK), ("lyrics-set.json", SETLIST), ("grace.cho", CHO), ("r2.json", TRACK_RACK), ("timed.cho", TIMED_CHO)):
    with open(os.path.join(work, name), "w") as f:
        f.write(text)
with wave.open(os.path.join(work, "t.wav"), "wb") as w:  # 5 s of a quiet 220 Hz tone
    w.setnchannels(1)
    w.setsampwidth(2)
    w.setframerate(48000)
    w.writeframes(b"".join(struct.pack("<h", int(3000 * math.sin(2 * math.pi * 220 * n / 48000))) for n in range(5 * 48000)))
web_port = free_port(socket.SOCK_STREAM)
osc_port = free_port()
play = Play([os.path.join(work, "lyrics-set.json"), "--playback", "null", "--capture", "null",
              "--web", "127.0.0.1:%d" % web_port, "--osc", str(osc_port)],
             env={"STAGERACK_WEB_PIN": PIN}, wait_text="web: open")
osc = OSCClient(osc_port)
figures = {}

options = webdriver.ChromeOptions()
for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800",
          "--no-first-run", "--disable-extensions", "--disable-background-networking"]:
    options.add_argument(a)
options.binary_location = "/usr/bin/chromium"
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
wait = WebDriverWait(driver, 20)


def wait_until(fn, seconds=10, what="a condition"):
    end = time.time() + seconds
    while time.time() < end:
        v = fn()
        if v is not None and v is not False:
            return v
        time.sleep(0.02)
    raise AssertionError("timed out waiting for " + what)


def text(id_):
    return driver.find_element(By.ID, id_).text


def test_log_in():
    driver.get("http://127.0.0.1:%d/" % web_port)
    wait.until(lambda d: d.find_element(By.ID, "pin").is_displayed())
    driver.find_element(By.ID, "pin").send_keys(PIN)
    driver.find_element(By.ID, "login-button").click()
    wait.until(lambda d: "write" in d.find_element(By.TAG_NAME, "body").get_attribute("class"))
    wait.until(lambda d: d.find_element(By.ID, "song-name").text == "Warm-up")
    assert not driver.find_element(By.ID, "lyrics").is_displayed(), "no lyrics panel for a song without lyrics"


def test_transposer():
    """web/chords.js: the root and a slash chord's bass move; sharps stay sharps, flats stay
    flats, naturals get the usual names; "6/9" is no slash chord; annotations stay."""
    cases = [("G", 2, "A"), ("F#m7", 1, "Gm7"), ("F#m7", 2, "G#m7"), ("Bb", 2, "C"), ("Bb", 1, "B"), ("Eb", -1, "D"),
             ("Ab", 1, "A"), ("Bbmaj7", 1, "Bmaj7"), ("B", 1, "C"), ("C", 1, "C#"), ("C", 3, "Eb"), ("Am", -3, "F#m"),
             ("D/F#", 2, "E/G#"), ("Bb/D", 2, "C/E"), ("Eb/Bb", 1, "E/B"), ("C/E", 1, "C#/F"), ("Am/G", -2, "Gm/F"),
             ("C6/9", 2, "D6/9"), ("C6/9/E", 2, "D6/9/F#"), ("G#dim7", 1, "Adim7"), ("C#", 12, "C#"), ("Db", -13, "C"),
             ("F♯m", 1, "Gm"), ("Dsus4/A", 5, "Gsus4/D"), ("N.C.", 3, "N.C."), ("*Rit.", 2, "*Rit."), ("A", 0, "A"), ("H7", 2, "H7")]
    got = driver.execute_script("return arguments[0].map((c) => transposeChord(c[0], c[1]))", [[c, s] for c, s, _ in cases])
    wrong = ["%s %+d: %s, not %s" % (c, s, g, want) for (c, s, want), g in zip(cases, got) if g != want]
    figures["transposer"] = "%d chords, %d wrong" % (len(cases), len(wrong))
    assert not wrong, wrong


def test_lyrics_follow_the_sections_within_100_ms():
    driver.execute_script("""
        window.__shown = {};
        const box = document.getElementById('lyrics');
        new MutationObserver(() => {
          const s = box.dataset.section;
          if (s !== undefined && s !== '' && !(s in window.__shown)) window.__shown[s] = performance.timeOrigin + performance.now();
        }).observe(box, { attributes: true, attributeFilter: ['data-section'] });""")
    t0 = time.time() * 1000
    osc.send("/stagerack/song", 2)
    wait.until(lambda d: d.find_element(By.ID, "song-name").text == "Grace")
    # Section 1 (the first verse, bar 2): its lines, chords above the words; next: the chorus.
    wait.until(lambda d: d.find_element(By.ID, "lyrics").get_attribute("data-section") == "1")
    assert text("lyrics-section") == "verse · Verse 1", text("lyrics-section")
    chords = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#lyrics-now .lyric-line:first-child .chord")]
    assert chords == ["", "G", "G7", "C", "G"], chords
    words = "".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, "#lyrics-now .lyric-line:first-child .words"))
    assert words.replace("\u00a0", "").startswith("Amazing grace, how sweet"), words
    assert text("lyrics-next-label") == "next: chorus", text("lyrics-next-label")
    assert "Praise the" in text("lyrics-next")
    # The rest of the song: every section change seen by the page, timed.
    last = len(NAMES) - 1
    wait_until(lambda: driver.execute_script("return window.__shown[%d]" % last), 15, "the last section shown")
    shown = driver.execute_script("return window.__shown")
    late = []
    for i in range(2, len(NAMES)):  # 1 and 0 come with the song's load; the rest on the clock
        late.append(shown[str(i)] - (t0 + i * BAR_SECONDS * 1000))
    figures["follow"] = "section start to the page showing it (upper bounds): %s ms; worst %.0f ms" % (
        ", ".join("%.0f" % x for x in late), max(late))
    # The clock starts after t0, never before: a negative figure would mean the null device
    # runs faster than real time and the figure means nothing.
    assert min(late) > -5, figures["follow"]
    assert max(late) <= 100, figures["follow"]
    # Sections without lyrics show their name; repeated names take the verses in order.
    assert text("lyrics-section") == "outro"
    assert text("lyrics-now") == ""


def test_chords_follow_the_transpose():
    """The meters' "transpose" (semitones; missing: 0) moves the chords shown (a meters
    message made in the page, as the engine's will carry it)."""
    index = int(driver.find_element(By.ID, "lyrics").get_attribute("data-section"))
    driver.execute_script("send({type: 'meters', on: false})")  # the engine's meters would overwrite these
    time.sleep(0.3)
    driver.execute_script("receive({type: 'meters', in: null, out: 0, load: 0, xruns: 0, gr: [], readouts: [], midi: [], sectionIndex: 2, transpose: 2})")
    chords = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#lyrics-now .lyric-line:first-child .chord")]
    assert chords == ["E/G#", "C", "G#m7", "F/C"], chords
    driver.execute_script("receive({type: 'meters', in: null, out: 0, load: 0, xruns: 0, gr: [], readouts: [], midi: [], sectionIndex: 2})")
    chords = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#lyrics-now .lyric-line:first-child .chord")]
    assert chords == ["D/F#", "Bb", "F#m7", "Eb/Bb"], chords
    assert "all together" in text("lyrics-now"), "the comment inside the chorus"
    driver.execute_script("send({type: 'meters', on: true})")
    figures["transpose"] = "chorus +2: E/G#, C, G#m7, F/C (section %d before)" % index


def test_section_and_transpose_buttons():
    osc.send("/stagerack/song", 1)
    wait.until(lambda d: d.find_element(By.ID, "song-name").text == "Warm-up")
    wait.until(lambda d: d.find_element(By.ID, "transpose").text == "key 0")  # the rack maps transpose: a row for it
    # The song's name comes with the state, the section buttons with the next meters (a
    # meters message of the song before may still be on its way): wait for them to go.
    wait_until(lambda: not driver.find_element(By.ID, "next-section").is_displayed(), 2,
               "no section buttons for a song without sections")
    driver.execute_script("""
        window.__at = {};
        const box = document.getElementById('lyrics');
        new MutationObserver(() => {
          const s = box.dataset.section;
          if (s !== undefined && s !== '' && !(s in window.__at)) window.__at[s] = performance.now();
          // ↺ pressed as soon as the page shows the chorus (in the page: a WebDriver round
          // trip on a loaded machine can take longer than the 1-s bar).
          if (s === '2' && !window.__vamped) {
            window.__vamped = performance.now();
            document.getElementById('repeat-section').click();
          }
        }).observe(box, { attributes: true, attributeFilter: ['data-section'] });""")
    osc.send("/stagerack/song", 2)
    wait.until(lambda d: d.find_element(By.ID, "lyrics").get_attribute("data-section") == "2")
    for b in ["repeat-section", "next-section", "transpose-down", "transpose-up"]:
        size = driver.find_element(By.ID, b).size
        assert size["height"] >= 44, "touch target %s %r" % (b, size)
    wait_until(lambda: driver.execute_script("return window.__at[3]"), 5, "the verse after the vamp")
    at = driver.execute_script("return window.__at")
    pressed = driver.execute_script("return window.__vamped") - at["2"]
    assert pressed < 500, "↺ pressed %.0f ms into the 1-s chorus" % pressed
    gap = (at["3"] - at["2"]) / 1000
    figures["vamp"] = "↺ Section in the chorus: the next verse %.2f s after the chorus began (a bar is 1 s; 2 with the vamp)" % gap
    assert 1.8 <= gap <= 2.3, figures["vamp"]
    wait.until(lambda d: text("section") == "verse → chorus")  # the row: the section playing → the next
    for _ in range(2):
        driver.find_element(By.ID, "transpose-up").click()
    wait.until(lambda d: d.find_element(By.ID, "transpose").text == "key +2")  # at the next section
    figures["transpose buttons"] = "♯ twice: the engine's transpose +2 by section %s" % driver.find_element(By.ID, "lyrics").get_attribute("data-section")
    for _ in range(2):
        driver.find_element(By.ID, "transpose-down").click()
    wait.until(lambda d: d.find_element(By.ID, "transpose").text == "key 0")


def test_timed_lines_follow_the_track():
    driver.execute_script("""
        window.__lit = {};
        const box = document.getElementById('lyrics');
        new MutationObserver(() => {
          const i = box.dataset.line;
          if (i !== undefined && i !== '' && !(i in window.__lit)) window.__lit[i] = lyrics.trackTime;
        }).observe(box, { attributes: true, attributeFilter: ['data-line'] });""")
    osc.send("/stagerack/song", 3)
    wait.until(lambda d: d.find_element(By.ID, "song-name").text == "Timed")
    wait_until(lambda: driver.execute_script("return window.__lit[2]") is not None, 8, "the third line lit")
    lit = driver.execute_script("return window.__lit")
    late = [(lit[str(i)] - t) * 1000 for i, t in enumerate(LINE_TIMES)]
    figures["timed lines"] = "each line lit when the track had passed its time by %s ms" % ", ".join("%.0f" % x for x in late)
    assert all(0 <= x <= 100 for x in late), figures["timed lines"]
    sung = driver.find_elements(By.CSS_SELECTOR, "#lyrics-now .lyric-line.sung")
    assert len(sung) == 1 and "Third line" in sung[0].text, [e.text for e in sung]
    chords = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#lyrics-now .lyric-line:first-child .chord")]
    assert chords == ["", "G"], "the time tag is no chord: %r" % chords


def test_lyrics_view():
    """A 1280x800 tablet: the lyrics alone, at 6 % of the screen's height or more."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": True})
    driver.get("http://127.0.0.1:%d/?view=lyrics" % web_port)
    wait.until(lambda d: d.find_element(By.ID, "lyrics").is_displayed())
    assert not driver.find_element(By.ID, "controls").is_displayed()
    assert not driver.find_element(By.ID, "meters").is_displayed()
    time.sleep(0.5)
    driver.execute_script("send({type: 'meters', on: false})")
    time.sleep(0.3)
    driver.execute_script("receive({type: 'meters', in: null, out: 0, load: 0, xruns: 0, gr: [], readouts: [], midi: [], sectionIndex: 1})")
    size = driver.execute_script("return parseFloat(getComputedStyle(document.getElementById('lyrics-now')).fontSize)")
    figures["lyrics view"] = "lyrics at %.0f px on a 1280x800 screen" % size
    assert size >= 40, figures["lyrics view"]
    os.makedirs(SHOTS, exist_ok=True)
    driver.save_screenshot(os.path.join(SHOTS, "lyrics-1280x800.png"))
    # The performer's view on a phone: the panel under the key and tempo.
    driver.find_element(By.ID, "lyrics-view").click()
    driver.set_window_size(390, 844)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    time.sleep(0.3)
    driver.save_screenshot(os.path.join(SHOTS, "lyrics-performer-390x844.png"))
    driver.find_element(By.ID, "lyrics-view").click()
    driver.find_element(By.ID, "lyrics-view").click()
    wait.until(lambda d: d.find_element(By.ID, "meters").is_displayed())


try:
    check("lyrics: no lyrics panel for a song without lyrics", test_log_in)
    check("lyrics: chords transposed (sharps, flats, slash chords)", test_transposer)
    check("lyrics: the page follows the song's sections within 100 ms, chords above the words", test_lyrics_follow_the_sections_within_100_ms)
    check("lyrics: chords follow the meters' transpose", test_chords_follow_the_transpose)
    check("lyrics: the song's row: ↺ Section vamps, ♯/♭ move the song's transpose", test_section_and_transpose_buttons)
    check("lyrics: lines timed in the track are lit as it reaches them, within 100 ms", test_timed_lines_follow_the_track)
    check("lyrics: the lyrics view (?view=lyrics) shows the lyrics alone, large", test_lyrics_view)
finally:
    driver.quit()
    osc.close()
    play.stop()
for k, v in figures.items():
    print("figure %s: %s" % (k, v))
sys.exit(finish())
