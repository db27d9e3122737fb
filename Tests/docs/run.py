#!/usr/bin/env python3
"""The documentation is code: checks README.md and racks/README.md against the program.

- Every ```json / ```json5 block is validated with `stagerack validate`:
    ```json5                 a whole rack, as it stands;
    ```json5 rack-fragment   members of a rack ("midi": {...}, "snapshots": {...}), put
                             into FRAGMENT_RACK below (its units: mic, pitch, delay,
                             reverb, synth, mix with 4 inputs, out);
    ```json5 setlist         a setlist; each "*.json" it names is written next to it as a
                             copy of FRAGMENT_RACK; each "*.cho" (a ChordPro file) is
                             racks/' own if there is one, else a small one.
- Every ```chordpro block is read as a song's lyrics (a setlist of one song naming it,
  validated): its errors are reported at the README's own line.
  Errors are reported at the README's own line.
- Every ```sh / ```bash block is run, in the repository, as one bash script (so `export`
  and `cd` carry over from line to line), each command checked for exit status 0; the
  commands that cannot run here are listed in SKIPPED with the reason, those that must
  fail in a known way in EXPECTED.
- The command synopsis (a plain ``` block of `stagerack ...` lines) matches each
  command's `--help` usage both ways: every [group] of the README is in the help, every
  --option of the help is in the README (a README line ending in [...] is a summary).
- Every inline `stagerack ...` in the text names a real command, and options it accepts.

Usage: Tests/docs/run.py [--bin PATH]     Last line: "N passed, N failed".
"""
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOCS = ["README.md", "racks/README.md"]
BIN = os.environ.get("STAGERACK", os.path.join(REPO, ".build/release/stagerack"))
if "--bin" in sys.argv:
    BIN = os.path.abspath(sys.argv[sys.argv.index("--bin") + 1])

# The rack a fragment is put into: the units the README's examples refer to. The
# fragment's members come last, so they may add to (not replace) these keys.
FRAGMENT_RACK = """{
  "format": 1,
  "units": {
    "mic": { "type": "input" },
    "pitch": { "type": "pitch" },
    "delay": { "type": "delay" },
    "reverb": { "type": "reverb" },
    "synth": { "type": "synth" },
    "mix": { "type": "mixer", "inputs": 4 },
    "out": { "type": "output" },
  },
  "connections": [ "mic -> pitch -> delay -> reverb -> mix:1", "synth -> mix:2", "mix -> out" ],
"""


def sound_card():
    """A playback device exists: commands that would play for ever are not run."""
    return any(re.match(r"pcmC\d+D\d+p$", n) for n in os.listdir("/dev/snd")) if os.path.isdir("/dev/snd") else False


# Commands that are not run, each with the reason (a regex on the command, whitespace
# collapsed; a condition when it applies only on some machines).
SKIPPED = [
    (r"^make test\b", "this test is part of `make test` (it would run itself)", None),
    (r"^sudo ", "changes the machine as root (packages, files under /opt, /usr/local, /etc, systemd units)", None),
    (r"^git clone \.\.\.", "a placeholder for the repository's address; the test runs in a clone already", None),
    (r"^journalctl ", "reads the systemd journal of the installed service (the build machines run no systemd)", None),
    (r"^make run\b", "plays the default rack live until Ctrl-C on a machine with a sound card", sound_card),
]

# Commands that must fail here, in the way the README leads a user to expect: regex,
# exit status, a regex the output must match, and why.
EXPECTED = [
    (r"stagerack play .*--playback hw:CARD=USB", 1, r"stagerack devices",
     "needs the USB interface; without it, the error must say what to do (stagerack devices)"),
    (r"stagerack soundcheck .*--input /tmp/quiet\.wav", 1, r"is silent.*unchanged",
     "a recording of the quiet alone: refused as silent with what to do, the rack left as it is"),
]



def measure_recording(path):
    """The "Play without a sound card" recipe's WAV: 3 s (+ pre-fill) of the test tone
    through the default rack, stereo 48 kHz. Returns a problem, or None."""
    import math
    import struct
    import wave
    with wave.open(path) as w:
        rate, channels, width, frames = w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes()
        data = w.readframes(frames)
    if (rate, channels, width) != (48000, 2, 2):
        return "%d Hz, %d channels, %d bytes per sample (want 48000, 2, 2)" % (rate, channels, width)
    if not 3 * rate <= frames <= 3 * rate + 4096:
        return "%d frames (want 3 s = %d, plus the pre-fill)" % (frames, 3 * rate)
    x = struct.unpack("<%dh" % (len(data) // 2), data)
    rms = math.sqrt(sum(v * v for v in x) / max(len(x), 1)) / 32768
    level = 20 * math.log10(max(rms, 1e-9))
    if level < -30:
        return "RMS %.1f dBFS: the tone did not come through (want above -30)" % level
    return None


# Files that README commands write, measured after their block ran (removed before it).
MEASURED = {"/tmp/stagerack-play.wav": measure_recording}

passed = failed = 0


def ok(what):
    global passed
    passed += 1
    print("ok   " + what)


def bad(what, detail=""):
    global failed
    failed += 1
    print("FAIL " + what)
    for line in detail.rstrip().splitlines()[-25:]:
        print("     " + line)


def blocks(path):
    """Fenced code blocks: (line of the opening fence, info words, text)."""
    out, lines = [], open(os.path.join(REPO, path), encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("<!--"):  # a comment's text is not a block
            while i < len(lines) and "-->" not in lines[i]:
                i += 1
            i += 1
            continue
        m = re.match(r"^(\s*)(`{3,}|~{3,})(.*)$", lines[i])
        if m:
            fence, start, body = m.group(2), i + 1, []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence):
                body.append(lines[i][len(m.group(1)):] if lines[i].startswith(m.group(1)) else lines[i])
                i += 1
            out.append((start, m.group(3).split(), "\n".join(body) + "\n"))
        i += 1
    return out


def inline_spans(path):
    """Inline code spans outside fenced blocks: (line, text)."""
    spans, in_block = [], False
    for n, line in enumerate(open(os.path.join(REPO, path), encoding="utf-8"), 1):
        if re.match(r"^\s*(```|~~~)", line):
            in_block = not in_block
            continue
        if not in_block:
            spans += [(n, s) for s in re.findall(r"`([^`]+)`", line)]
    return spans


def run(args, cwd=REPO, timeout=600, env=None):
    p = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout + p.stderr


# ---------------------------------------------------------------- JSON blocks

def make_audio_files(text, folder):
    """The sound files a block's players name ("file": "songs/intro.wav"): five seconds
    of a quiet tone as WAV, then silence to a minute (libsndfile reads by content, whatever
    the extension; a cue past a file's end is an error)."""
    import math, struct, wave
    for name in set(re.findall(r'"(?:file|track|cue)"\s*:\s*"([^"/][^"]*)"', text)):
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with wave.open(path, "wb") as w:
            w.setnchannels(2)
            w.setsampwidth(2)
            w.setframerate(48000)
            w.writeframes(b"".join(struct.pack("<hh", v, v) for v in
                                   (int(3000 * math.sin(i * 0.06)) for i in range(48000 * 5))))
            w.writeframes(b"\0" * (4 * 48000 * 55))  # then silence: a minute, for cues


def make_midi_files(text, folder):
    """The MIDI files a block's songs name ("midi": "songs/intro.mid"): one bar of a C
    major chord, 480 ticks a quarter note (a type 0 Standard MIDI File)."""
    import struct
    for name in set(re.findall(r'"midi"\s*:\s*"([^"/][^"]*)"', text)):
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        body = b"".join(bytes([0, 0x90, k, 90]) for k in (60, 64, 67))
        body += bytes([0x8F, 0x00, 0x80, 60, 0, 0, 0x80, 64, 0, 0, 0x80, 67, 0, 0, 0xFF, 0x2F, 0])
        with open(path, "wb") as f:
            f.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, 480) + b"MTrk" + struct.pack(">I", len(body)) + body)


def check_json(doc, line, info, text, work):
    kind = "setlist" if "setlist" in info else "rack-fragment" if "rack-fragment" in info else "rack"
    folder = tempfile.mkdtemp(dir=work)
    offset = 0
    if kind == "rack-fragment":
        content = FRAGMENT_RACK + text + "}\n"
        offset = FRAGMENT_RACK.count("\n")
    else:
        content = text
    if kind == "setlist":
        for name in sorted(set(re.findall(r'"([^"\s]+\.json5?)"', text))):
            os.makedirs(os.path.dirname(os.path.join(folder, name)) or folder, exist_ok=True)
            library = os.path.join(REPO, "racks", name)
            if os.path.isfile(library):
                # A rack of the preset library (its tracks beside it), as it stands.
                import shutil
                shutil.copyfile(library, os.path.join(folder, name))
                if not os.path.isdir(os.path.join(folder, "tracks")):
                    shutil.copytree(os.path.join(REPO, "racks", "tracks"), os.path.join(folder, "tracks"))
                continue
            with open(os.path.join(folder, name), "w") as f:
                f.write(FRAGMENT_RACK + "}\n")
    if kind == "setlist":
        for name in sorted(set(re.findall(r'"([^"\s]+\.cho)"', text))):
            os.makedirs(os.path.dirname(os.path.join(folder, name)) or folder, exist_ok=True)
            library = os.path.join(REPO, "racks", name)
            with open(os.path.join(folder, name), "w") as f:
                f.write(open(library).read() if os.path.isfile(library) else "{title: A song}\n{sov}\n[C]La la\n{eov}\n")
    path = os.path.join(folder, "block.json")
    with open(path, "w") as f:
        f.write(content)
    make_audio_files(text, folder)
    make_midi_files(text, folder)
    rc, out = run([BIN, "validate", path])
    where = "%s:%d" % (doc, line)
    if rc == 0:
        ok("%s: the %s block validates" % (where, kind))
        return
    # FILE:LINE:COL: ... → the README's own line (the fence is line `line`).
    def relocate(m):
        return "%s:%d:%s" % (doc, line + int(m.group(1)) - offset, m.group(2))
    bad("%s: the %s block does not validate" % (where, kind),
        re.sub(re.escape(path) + r":(\d+):(\d+)", relocate, out))


def check_chordpro(doc, line, text, work):
    """A ChordPro block: the lyrics of a one-song setlist, validated."""
    folder = tempfile.mkdtemp(dir=work)
    song = os.path.join(folder, "song.cho")
    with open(song, "w") as f:
        f.write(text)
    with open(os.path.join(folder, "rack.json"), "w") as f:
        f.write(FRAGMENT_RACK + "}\n")
    setlist = os.path.join(folder, "set.json")
    with open(setlist, "w") as f:
        f.write('{ "format": 2, "songs": [ { "rack": "rack.json", "lyrics": "song.cho" } ] }\n')
    rc, out = run([BIN, "validate", setlist])
    where = "%s:%d" % (doc, line)
    if rc == 0:
        ok("%s: the ChordPro block reads" % where)
        return
    bad("%s: the ChordPro block does not read" % where,
        re.sub(re.escape(song) + r":(\d+):(\d+)", lambda m: "%s:%d:%s" % (doc, line + int(m.group(1)), m.group(2)), out))


# ---------------------------------------------------------------- shell blocks

def commands(text, first_line):
    """The block's commands: (line, text) with continuation lines and here-documents
    kept whole; comment-only and blank lines dropped."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        start, cmd = i, lines[i]
        if not cmd.strip() or cmd.strip().startswith("#"):
            i += 1
            continue
        while cmd.endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd += "\n" + lines[i]
        heredoc = re.search(r"<<-?\s*'?\"?(\w+)'?\"?", cmd)
        if heredoc:
            while i + 1 < len(lines):
                i += 1
                cmd += "\n" + lines[i]
                if lines[i].strip() == heredoc.group(1):
                    break
        out.append((first_line + start + 1, cmd))
        i += 1
    return out


def flat(cmd):
    """A command on one line, its trailing comment dropped (for matching and messages)."""
    first = cmd.split("\n")[0] if "<<" in cmd else cmd.replace("\\\n", " ")
    return re.sub(r"\s+", " ", without_comments(first)).strip()


def without_comments(cmd):
    """The command as run: each line's trailing `# comment` (outside quotes) dropped, so
    that a failure handler appended after it is not commented out."""
    def strip(line):
        quote = None
        for i, c in enumerate(line):
            if quote:
                quote = None if c == quote else quote
            elif c in "'\"":
                quote = c
            elif c == "#" and (i == 0 or line[i - 1].isspace()):
                return line[:i].rstrip()
        return line
    return "\n".join(strip(l) for l in cmd.split("\n"))


def check_shell(doc, line, text, work):
    script = ["set -uo pipefail", "cd %s" % sh_quote(REPO), 'PATH="%s:$PATH"' % os.path.dirname(BIN)]
    ran = []
    for n, cmd in commands(text, line):
        one = flat(cmd)
        where = "%s:%d" % (doc, n)
        skip = next((r for p, r, cond in SKIPPED if re.search(p, one) and (cond is None or cond())), None)
        if skip:
            ran.append((where, one, None, skip))
            continue
        expected = next((e for e in EXPECTED if re.search(e[0], one)), None)
        out = os.path.join(work, "cmd-%d.out" % len(ran))
        fail = 'echo "__FAIL__ %s"; exit 1' % where
        if "<<" not in cmd:
            cmd = without_comments(cmd)
        head, _, rest = cmd.partition("\n")
        if expected:
            _, status, pattern, why = expected
            if "<<" in head:
                script.append("%s >%s 2>&1%s" % (head, sh_quote(out), "\n" + rest if rest else ""))
            else:
                script.append("%s >%s 2>&1" % (cmd, sh_quote(out)))
            script.append('rc=$?; [[ $rc == %d ]] && grep -Eq %s %s || { cat %s; echo "status $rc"; %s; }'
                          % (status, sh_quote(pattern), sh_quote(out), sh_quote(out), fail))
            ran.append((where, one, "fails as expected (status %d, says /%s/): %s" % (status, pattern, why), None))
        else:
            # The failure handler goes on the command's first line (a here-document's
            # body follows it), or after its last continuation line.
            if "<<" in head:
                script.append("%s || { %s; }%s" % (head, fail, "\n" + rest if rest else ""))
            else:
                script.append("%s || { %s; }" % (cmd, fail))
            ran.append((where, one, "runs", None))
    if all(skip for *_, skip in ran):
        for where, one, _, skip in ran:
            ok("%s: not run: `%s` (%s)" % (where, one, skip))
        return
    measured = [f for f in MEASURED if f in text]
    for f in measured:
        if os.path.exists(f):
            os.remove(f)
    path = os.path.join(work, "block-%d.sh" % line)
    with open(path, "w") as f:
        f.write("\n".join(script) + "\n")
    try:
        rc, out = run(["bash", path])
    except subprocess.TimeoutExpired:
        rc, out = 124, "timed out after 600 s"
    failed_at = re.search(r"__FAIL__ (\S+)", out)
    for where, one, what, skip in ran:
        if skip:
            ok("%s: not run: `%s` (%s)" % (where, one, skip))
            continue
        if failed_at and failed_at.group(1) == where:
            bad("%s: `%s` %s" % (where, one, what), out.replace(failed_at.group(0), ""))
            return
        if rc != 0 and not failed_at:
            bad("%s: `%s` %s (the block stopped, status %d)" % (where, one, what, rc), out)
            return
        ok("%s: `%s` %s" % (where, one, what))
    for f in measured:
        problem = MEASURED[f](f) if os.path.exists(f) else "not written"
        if problem:
            bad("%s:%d: the block's %s: %s" % (doc, line, f, problem))
        else:
            ok("%s:%d: the block's %s measures right (3 s of the tone through the rack)" % (doc, line, f))


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


# ---------------------------------------------------------------- synopsis and inline commands

help_cache = {}


def usage_of(command):
    """The usage lines of `stagerack COMMAND --help` (up to the first blank line), or None."""
    if command not in help_cache:
        rc, out = run([BIN, command, "--help"])
        m = re.search(r"usage: (stagerack .*?)(\n\s*\n|\Z)", out, re.S)
        help_cache[command] = (re.sub(r"\s+", " ", m.group(1)), out) if rc == 0 and m else None
    return help_cache[command]


def bracket_groups(s):
    groups, depth, cur = [], 0, ""
    for c in s:
        if c == "[":
            depth += 1
        if depth:
            cur += c
        if c == "]":
            depth -= 1
            if depth == 0:
                groups.append(cur)
                cur = ""
    return groups


def check_synopsis(doc, line, text):
    joined = re.sub(r"\n\s+(?=[\[-])", " ", text)  # continuation lines start with [ or --
    for entry in joined.split("\n"):
        words = entry.split()
        if len(words) < 2 or words[0] != "stagerack" or words[1].startswith("-"):
            continue
        where = "%s:%d" % (doc, line)
        help_ = usage_of(words[1])
        if help_ is None:
            bad("%s: synopsis names `stagerack %s`, which has no --help usage" % (where, words[1]))
            continue
        usage, _ = help_
        entry = re.sub(r"\s+", " ", entry).strip()
        missing = [g for g in bracket_groups(entry) if g != "[...]" and g not in usage]
        summary = entry.endswith("[...]")
        extra = [] if summary else [o for o in sorted(set(re.findall(r"--[a-z][a-z-]*", usage)))
                                    if o not in re.findall(r"--[a-z][a-z-]*", entry)]
        if missing or extra:
            bad("%s: the synopsis of `stagerack %s` differs from its --help" % (where, words[1]),
                "".join("README has %s, --help does not\n" % g for g in missing)
                + "".join("--help has %s, README does not\n" % o for o in extra)
                + "help: " + usage)
        else:
            ok("%s: the synopsis of `stagerack %s` matches its --help" % (where, words[1]))


def check_inline(doc, line, span):
    words = span.split()
    if words[0].endswith("/stagerack"):
        words[0] = "stagerack"
    if words[0] != "stagerack" or len(words) < 2 or words[1].startswith("-") or not re.match(r"^[a-z-]+$", words[1]):
        return
    where = "%s:%d" % (doc, line)
    help_ = usage_of(words[1])
    if help_ is None:
        bad("%s: `%s` names a command stagerack does not have" % (where, span))
        return
    options = [w.split("=")[0] for w in words[2:] if w.startswith("--")]
    unknown = [o for o in options if not re.search(re.escape(o) + r"\b", help_[1])]
    if unknown:
        bad("%s: `%s`: %s not in `stagerack %s --help`" % (where, span, ", ".join(unknown), words[1]))
    else:
        ok("%s: `%s` is a real command line" % (where, span))


def main():
    if not os.access(BIN, os.X_OK):
        print("0 passed, 1 failed (no %s: build it with `make build`)" % BIN)
        return 1
    with tempfile.TemporaryDirectory() as work:
        for doc in DOCS:
            for line, info, text in blocks(doc):
                lang = info[0] if info else ""
                if lang in ("json", "json5"):
                    check_json(doc, line, info, text, work)
                elif lang == "chordpro":
                    check_chordpro(doc, line, text, work)
                elif lang in ("sh", "bash", "shell"):
                    check_shell(doc, line, text, work)
                elif lang in ("", "text") and re.search(r"^stagerack [a-z]", text, re.M) and "[" in text:
                    check_synopsis(doc, line, text)
            for line, span in inline_spans(doc):
                check_inline(doc, line, span)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
