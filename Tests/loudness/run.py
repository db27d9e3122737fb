#!/usr/bin/env python3
"""Level-matched presets (make loudness-test).

Renders every shipped rack (racks/*.json) on the built-in demo (`render --demo`: the sung
phrase and the chord progression) and on speech made with espeak-ng (about 20 s, no MIDI),
measures the EBU R128 integrated loudness of each output with pyloudnorm (ITU-R BS.1770-4,
installed by scripts/install-deps.sh --test), and asserts:
  - every rack's output within +-1 LU of vocal-clean's on each input, except racks whose
    leading comment says "Not level-matched:" and why (their purpose differs);
  - a rack with a second output (the monitor rack's in-ear mix; the karaoke and pad racks'
    with their click) is held to the same;
  - no rack's output hits the output limiter on the demo: `render` says "the output
    limiter held N samples" when it does (the safety stage counts every sample it turned
    down, SafetyCounters.limitedSamples).
Prints each rack's LU against vocal-clean, and its time. Needs .build/release/stagerack
(or $STAGERACK), sox and espeak-ng.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyloudnorm
import scipy.io.wavfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("STAGERACK", os.path.join(ROOT, ".build/release/stagerack"))
TOLERANCE = 1.0
REFERENCE = "vocal-clean"
SPEECH = ("Good evening everyone, thank you for coming out tonight. This next song is about a "
          "long summer on the coast, the first one I wrote on this old guitar. Sing along if you "
          "know the words, and if you don't, just clap your hands and stay with us.")


def exemption(rack):
    """The reason after "Not level-matched:" in the rack's leading comment, else None."""
    lines = []
    for line in open(rack, encoding="utf-8"):
        if not line.lstrip().startswith("//"):
            break
        lines.append(line.lstrip()[2:].strip())
    text = " ".join(lines)
    m = re.search(r"Not level-matched:\s*(.*?\.)(?=\s|$)", text)
    return m.group(1).strip() if m else None


def loudness(path):
    rate, data = scipy.io.wavfile.read(path)
    scale = 2.0 ** (8 * data.dtype.itemsize - 1) if data.dtype.kind == "i" else 1.0
    data = data.astype(np.float64) / scale
    return pyloudnorm.Meter(rate).integrated_loudness(data)


def render(rack, out, extra):
    r = subprocess.run([BIN, "render", rack, "--output", out] + extra, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{rack}: render failed: {r.stderr.strip()}")
    held = re.search(r"the output limiter held (\d+) samples", r.stderr)
    outputs = sorted(glob.glob(out[:-4] + "*.wav"))
    return outputs, int(held.group(1)) if held else 0


def speech(tmp):
    raw = os.path.join(tmp, "speech-raw.wav")
    wav = os.path.join(tmp, "speech.wav")
    subprocess.run(["espeak-ng", "-s", "150", "-w", raw, SPEECH], check=True)
    # A microphone's level: peaks at -6 dBFS, 48 kHz mono.
    subprocess.run(["sox", raw, "-r", "48000", "-c", "1", "-b", "24", wav, "norm", "-6"], check=True)
    return wav


def main():
    start = time.time()
    racks = sorted(glob.glob(os.path.join(ROOT, "racks", "*.json")))
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        inputs = {"demo": ["--demo"], "speech": ["--input", speech(tmp)]}
        results = {}
        for name, extra in inputs.items():
            for rack in racks:
                base = os.path.splitext(os.path.basename(rack))[0]
                outputs, held = render(rack, os.path.join(tmp, f"{name}-{base}.wav"), extra)
                for o in outputs:
                    label = base + os.path.basename(o)[len(f"{name}-{base}"):-4]
                    results[(name, label)] = (loudness(o), held, base)
        for name in inputs:
            ref = results[(name, REFERENCE)][0]
            print(f"{name}: {REFERENCE} {ref:.1f} LUFS")
            for (n, label), (lufs, held, base) in sorted(results.items()):
                if n != name:
                    continue
                delta = lufs - ref
                why = exemption(os.path.join(ROOT, "racks", base + ".json"))
                note = f"  (not level-matched: {why})" if why else ""
                lim = f"  limiter held {held} samples" if held else ""
                print(f"  {label:24s} {lufs:6.1f} LUFS  {delta:+5.1f} LU{lim}{note}")
                if why is None and abs(delta) > TOLERANCE:
                    failures.append(f"{name}: {label} is {delta:+.1f} LU from {REFERENCE} (at most +-{TOLERANCE})")
                if name == "demo" and held:
                    failures.append(f"demo: {label}: the output limiter held {held} samples")
    for f in failures:
        print("FAIL " + f)
    print(f"loudness: {len(results)} outputs measured, {len(failures)} failures, {time.time() - start:.0f} s")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
