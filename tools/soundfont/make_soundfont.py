#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Copyright (c) StageRack contributors
"""Generate soundfonts/stagerack-basic.sf2, StageRack's own small SoundFont.

Python 3 standard library only. The output is deterministic: running the
script twice produces identical bytes.

Presets (bank 0):
  0 "StageRack Soft Piano"  decaying additive piano-like tone
  1 "StageRack Pad"         detuned saw/triangle blend, slow attack
  2 "StageRack Saw Lead"    band-limited additive sawtooth

Every instrument uses one looped root sample per octave (roots on the A keys
21, 33, ... 105, each covering root-6 .. root+5). Pitch is exact by
construction: a loop of L sample points holds exactly c periods, and the
sample rate stored in the header is chosen as round(f_root * L / c), so the
rate implied by the loop differs from the equal-tempered root frequency by
far less than a cent (the residual, if any, goes into chPitchCorrection).
All partials are computed from one sine table of length L, so the loop data
are exactly periodic and the loop start is placed on a rising zero crossing.

Usage: python3 tools/soundfont/make_soundfont.py [-o OUTPUT.sf2] [-v]
"""

import argparse
import math
import os
import struct
import sys

OUTPUT_DEFAULT = os.path.normpath(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "soundfonts",
    "stagerack-basic.sf2"))

ROOTS = [21, 33, 45, 57, 69, 81, 93, 105]   # A0 .. A7
OUTPUT_NYQUIST_GUARD = 18000.0               # keep partials below this after transposition
SAMPLE_NYQUIST_FRACTION = 0.45               # and below 0.45 * sample rate
PEAK = 0.89                                  # sample normalisation (about -1 dBFS)

# SoundFont generator operators (SF2.01 section 8.1.2)
G_PAN = 17
G_DELAY_VOL_ENV = 33
G_ATTACK_VOL_ENV = 34
G_HOLD_VOL_ENV = 35
G_DECAY_VOL_ENV = 36
G_SUSTAIN_VOL_ENV = 37
G_RELEASE_VOL_ENV = 38
G_KEYNUM_TO_VOL_ENV_DECAY = 40
G_INSTRUMENT = 41
G_KEY_RANGE = 43
G_INITIAL_ATTENUATION = 48
G_SAMPLE_ID = 53
G_SAMPLE_MODES = 54


def midi_hz(key):
    return 440.0 * 2.0 ** ((key - 69) / 12.0)


def timecents(seconds):
    return int(round(1200.0 * math.log2(seconds)))


def key_range(root):
    i = ROOTS.index(root)
    lo = 0 if i == 0 else root - 6
    hi = 127 if i == len(ROOTS) - 1 else root + 5
    return lo, hi


def note_name(key):
    names = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]
    return "%s%d" % (names[key % 12], key // 12 - 1)


class Lcg:
    """Tiny deterministic pseudo-random generator (no dependency on `random`)."""

    def __init__(self, seed):
        self.state = seed & 0xFFFFFFFF

    def next(self):
        self.state = (1664525 * self.state + 1013904223) & 0xFFFFFFFF
        return self.state / 2147483648.0 - 1.0


# --------------------------------------------------------------------------
# Loop planning: integer number of periods in the loop, matching sample rate
# --------------------------------------------------------------------------

class LoopPlan:
    def __init__(self, root, sr_target, cycles):
        f = midi_hz(root)
        self.root = root
        self.freq = f
        self.cycles = cycles
        self.length = int(round(cycles * sr_target / f))
        self.rate = int(round(f * self.length / cycles))
        actual = cycles * self.rate / self.length
        error = 1200.0 * math.log2(actual / f)      # positive: sample is sharp
        self.correction = int(round(-error))         # chPitchCorrection
        self.residual = error + self.correction      # what is left, in cents
        # sine table over the loop: index j <-> phase j / length cycles
        n = self.length
        self.sin = [math.sin(2.0 * math.pi * j / n) for j in range(n)]

    def max_harmonic(self, key_hi, cycles=None):
        """Highest harmonic that stays band-limited at the sample's rate and,
        after transposing up to key_hi, below the output guard frequency."""
        c = cycles if cycles is not None else self.cycles
        f_sample = c * self.rate / self.length
        by_rate = SAMPLE_NYQUIST_FRACTION * self.rate / f_sample
        transpose = 2.0 ** (max(0, key_hi - self.root) / 12.0)
        by_output = OUTPUT_NYQUIST_GUARD / (f_sample * transpose)
        return max(1, int(min(by_rate, by_output)))


def add_partial(acc, plan, harmonic, cycles, amplitude, offset=0):
    """acc[n] += amplitude * sin(2*pi*harmonic*cycles*n/L + phase), exact."""
    n_len = plan.length
    tab = plan.sin
    step = (harmonic * cycles) % n_len
    idx = (harmonic * offset) % n_len
    for n in range(len(acc)):
        acc[n] += amplitude * tab[idx]
        idx += step
        if idx >= n_len:
            idx -= n_len


def rising_zero_crossing(loop):
    """Index j of the loop (cyclic) where loop[j-1] < 0 <= loop[j] and |loop[j]|
    is smallest."""
    best = 0
    best_val = None
    n = len(loop)
    for j in range(n):
        if loop[j - 1] < 0.0 <= loop[j]:
            v = min(abs(loop[j]), abs(loop[j - 1]))
            if best_val is None or v < best_val:
                best_val = v
                best = j if abs(loop[j]) <= abs(loop[j - 1]) else (j - 1) % n
    return best


def normalise(data, peak=PEAK):
    m = max(abs(x) for x in data) or 1.0
    g = peak / m
    return [x * g for x in data]


class Sample:
    def __init__(self, name, data, loop_start, loop_end, plan):
        self.name = name
        self.data = data            # floats in -1..1
        self.loop_start = loop_start
        self.loop_end = loop_end
        self.rate = plan.rate
        self.root = plan.root
        self.correction = plan.correction
        self.residual = plan.residual
        self.loop_cycles = plan.cycles


POST = 16   # valid points after the loop end (spec asks for at least 8)


def periodic_sample(name, plan, loop, pre):
    """A stationary sample: `pre` points, then the loop, then POST points, all
    taken from the L-periodic waveform `loop`; the loop starts at a rising
    zero crossing."""
    n = plan.length
    j0 = rising_zero_crossing(loop)
    total = pre + n + POST
    data = [loop[(j0 - pre + i) % n] for i in range(total)]
    data = normalise(data)
    return Sample(name, data, pre, pre + n, plan)


# --------------------------------------------------------------------------
# Instruments
# --------------------------------------------------------------------------

def make_saw(root):
    lo, hi = key_range(root)
    f = midi_hz(root)
    cycles = max(1, int(math.ceil(96 * f / 44100.0)))
    plan = LoopPlan(root, 44100, cycles)
    loop = [0.0] * plan.length
    for h in range(1, plan.max_harmonic(hi) + 1):
        add_partial(loop, plan, h, cycles, 1.0 / h)
    # pre-loop: one whole loop, so the sample also starts on the crossing
    return periodic_sample("SawLead %s" % note_name(root), plan, loop,
                           pre=max(plan.length, 32))


PAD_SIDE_LEVEL = 0.35      # level of each detuned oscillator vs. the centre one


def make_pad(root):
    lo, hi = key_range(root)
    f = midi_hz(root)
    sr = 22050 if root <= 45 else 32000
    # c cycles of the centre oscillator and c-1 / c+1 of the detuned pair in
    # one loop: detune = +-f/c Hz, about 6 cents from A3 up; the loop is
    # capped at 2.5 s, so the low octaves beat at ~0.4 Hz instead.
    cycles = max(12, min(300, int(2.5 * f)))
    plan = LoopPlan(root, sr, cycles)
    loop = [0.0] * plan.length
    fc = 2600.0
    oscillators = [(cycles, 1.0, 0),
                   (cycles - 1, PAD_SIDE_LEVEL, plan.length // 3),
                   (cycles + 1, PAD_SIDE_LEVEL, (2 * plan.length) // 3)]
    for c, level, offset in oscillators:
        for h in range(1, plan.max_harmonic(hi, cycles=c) + 1):
            saw = 0.55 / h
            tri = 0.0
            if h % 2 == 1:
                tri = 0.45 * (8.0 / (math.pi ** 2)) / (h * h)
                if (h // 2) % 2 == 1:
                    tri = -tri
            rolloff = 1.0 / math.sqrt(1.0 + (h * f / fc) ** 4)
            a = level * (saw + tri) * rolloff
            if abs(a) < 1e-5:
                continue
            add_partial(loop, plan, h, c, a, offset)
    return periodic_sample("Pad %s" % note_name(root), plan, loop, pre=32)


PIANO_PARTIALS = [1.0, 0.62, 0.42, 0.30, 0.22, 0.16, 0.05, 0.10,
                  0.07, 0.05, 0.035, 0.025, 0.018, 0.012, 0.008, 0.005]


def make_piano(root):
    lo, hi = key_range(root)
    f = midi_hz(root)
    sr = 32000 if root <= 45 else 44100
    cycles = max(1, int(math.ceil(64 * f / sr)))
    plan = LoopPlan(root, sr, cycles)
    n_loop = plan.length
    octave = ROOTS.index(root)
    t_decay = 0.75 - 0.06 * octave                  # seconds of timbre decay
    loop_start = int(math.ceil(t_decay * plan.rate / n_loop)) * n_loop
    total = loop_start + n_loop + POST
    t_end = loop_start / plan.rate
    data = [0.0] * total
    h_max = min(len(PIANO_PARTIALS), plan.max_harmonic(hi))
    for h in range(1, h_max + 1):
        a0 = PIANO_PARTIALS[h - 1]
        final = 0.55 / h ** 1.2                   # brightness left in the loop
        power = 2.0 + 0.5 * h                     # upper partials fade faster
        step = (h * cycles) % n_loop
        idx = 0
        tab = plan.sin
        for n in range(total):
            t = n / plan.rate
            w = (1.0 - t / t_end) ** power if t < t_end else 0.0
            data[n] += a0 * (final + (1.0 - final) * w) * tab[idx]
            idx += step
            if idx >= n_loop:
                idx -= n_loop
    # hammer: a few milliseconds of smoothed deterministic noise
    rng = Lcg(0x5A17 + root)
    y = 0.0
    coeff = math.exp(-2.0 * math.pi * min(6.0 * f, 5000.0) / plan.rate)
    n_noise = int(0.012 * plan.rate)
    for n in range(n_noise):
        t = n / plan.rate
        y = coeff * y + (1.0 - coeff) * rng.next()
        env = (1.0 - math.exp(-t / 0.0004)) * math.exp(-t / 0.0025)
        data[n] += 1.2 * env * y
    data = normalise(data)
    # data[loop_start] is exactly sin(0) = 0 before normalisation: a rising
    # zero crossing, and the loop holds exactly `cycles` periods.
    return Sample("Piano %s" % note_name(root), data, loop_start,
                  loop_start + n_loop, plan)


INSTRUMENTS = [
    {
        "name": "StageRack Soft Piano",
        "make": make_piano,
        "global": [
            (G_ATTACK_VOL_ENV, timecents(0.002)),
            (G_HOLD_VOL_ENV, timecents(0.01)),
            (G_DECAY_VOL_ENV, timecents(10.0)),
            (G_SUSTAIN_VOL_ENV, 300),              # -30 dB
            (G_RELEASE_VOL_ENV, timecents(0.6)),
            (G_KEYNUM_TO_VOL_ENV_DECAY, 40),
        ],
    },
    {
        "name": "StageRack Pad",
        "make": make_pad,
        "global": [
            (G_ATTACK_VOL_ENV, timecents(0.6)),
            (G_SUSTAIN_VOL_ENV, 0),
            (G_RELEASE_VOL_ENV, timecents(2.5)),
        ],
    },
    {
        "name": "StageRack Saw Lead",
        "make": make_saw,
        "global": [
            (G_ATTACK_VOL_ENV, timecents(0.004)),
            (G_SUSTAIN_VOL_ENV, 0),
            (G_RELEASE_VOL_ENV, timecents(0.12)),
            (G_INITIAL_ATTENUATION, 0),
        ],
    },
]

PRESETS = [  # (program, name, instrument index)
    (0, "StageRack Soft Piano", 0),
    (1, "StageRack Pad", 1),
    (2, "StageRack Saw Lead", 2),
]


# --------------------------------------------------------------------------
# RIFF / SF2 writer
# --------------------------------------------------------------------------

def chunk(ckid, data):
    out = ckid + struct.pack("<I", len(data)) + data
    if len(data) % 2:
        out += b"\0"
    return out


def list_chunk(list_type, subchunks):
    body = list_type + b"".join(subchunks)
    return chunk(b"LIST", body)


def zstr(text):
    """Zero-terminated string padded to an even length (INFO sub-chunks)."""
    raw = text.encode("ascii") + b"\0"
    if len(raw) % 2:
        raw += b"\0"
    assert len(raw) <= 256
    return raw


def name20(text):
    raw = text.encode("ascii")
    assert len(raw) <= 20, text
    return raw.ljust(20, b"\0")


def gen(oper, amount):
    if oper == G_KEY_RANGE:
        lo, hi = amount
        return struct.pack("<HBB", oper, lo, hi)
    if amount < 0:
        return struct.pack("<Hh", oper, amount)
    return struct.pack("<HH", oper, amount)


def to_int16(x):
    v = int(round(x * 32767.0))
    return max(-32768, min(32767, v))


def build(verbose=False):
    samples = []          # Sample objects in smpl order
    inst_zones = []       # per instrument: list of (global gens, [(root, sample index)])
    for inst in INSTRUMENTS:
        zones = []
        for root in ROOTS:
            s = inst["make"](root)
            zones.append((root, len(samples)))
            samples.append(s)
        inst_zones.append(zones)

    # sdta / smpl: every sample followed by 46 zero points
    smpl = bytearray()
    shdr = bytearray()
    pos = 0
    for s in samples:
        pcm = [to_int16(x) for x in s.data]
        start = pos
        end = start + len(pcm)
        smpl += struct.pack("<%dh" % len(pcm), *pcm)
        smpl += b"\0\0" * 46
        pos = end + 46
        shdr += struct.pack("<20sIIIIIBbHH", name20(s.name), start, end,
                            start + s.loop_start, start + s.loop_end, s.rate,
                            s.root, s.correction, 0, 1)
        if verbose:
            print("%-16s rate %5d  len %6d  loop %6d..%6d (%3d periods)  "
                  "root %3d  corr %+d  residual %+.4f cents" % (
                      s.name, s.rate, len(pcm), s.loop_start, s.loop_end,
                      s.loop_cycles, s.root, s.correction, s.residual))
    shdr += struct.pack("<20sIIIIIBbHH", name20("EOS"), 0, 0, 0, 0, 0, 0, 0, 0, 0)

    # instruments
    inst = bytearray()
    ibag = bytearray()
    igen = bytearray()
    n_ibag = 0
    n_igen = 0
    for i, spec in enumerate(INSTRUMENTS):
        inst += struct.pack("<20sH", name20(spec["name"]), n_ibag)
        # global zone (no sampleID)
        ibag += struct.pack("<HH", n_igen, 0)
        n_ibag += 1
        for oper, amount in spec["global"]:
            igen += gen(oper, amount)
            n_igen += 1
        for root, sidx in inst_zones[i]:
            ibag += struct.pack("<HH", n_igen, 0)
            n_ibag += 1
            for g in (gen(G_KEY_RANGE, key_range(root)),     # keyRange first
                      gen(G_SAMPLE_MODES, 1),                 # loop continuously
                      gen(G_SAMPLE_ID, sidx)):                # sampleID last
                igen += g
                n_igen += 1
    inst += struct.pack("<20sH", name20("EOI"), n_ibag)
    ibag += struct.pack("<HH", n_igen, 0)
    imod = b"\0" * 10
    igen += b"\0" * 4

    # presets
    phdr = bytearray()
    pbag = bytearray()
    pgen = bytearray()
    n_pbag = 0
    n_pgen = 0
    for program, name, inst_index in PRESETS:
        phdr += struct.pack("<20sHHHIII", name20(name), program, 0, n_pbag, 0, 0, 0)
        pbag += struct.pack("<HH", n_pgen, 0)
        n_pbag += 1
        pgen += gen(G_INSTRUMENT, inst_index)   # instrument last (only) gen
        n_pgen += 1
    phdr += struct.pack("<20sHHHIII", name20("EOP"), 0, 0, n_pbag, 0, 0, 0)
    pbag += struct.pack("<HH", n_pgen, 0)
    pmod = b"\0" * 10
    pgen += b"\0" * 4

    info = list_chunk(b"INFO", [
        chunk(b"ifil", struct.pack("<HH", 2, 1)),
        chunk(b"isng", zstr("EMU8000")),
        chunk(b"INAM", zstr("StageRack Basic")),
        chunk(b"IENG", zstr("StageRack contributors")),
        chunk(b"ICOP", zstr("Copyright (c) StageRack contributors. "
                            "MIT License (same as StageRack).")),
        chunk(b"ICMT", zstr("Synthesized by tools/soundfont/make_soundfont.py "
                            "(no recorded samples). Bank 0: 0 Soft Piano, "
                            "1 Pad, 2 Saw Lead.")),
        chunk(b"ISFT", zstr("make_soundfont.py:make_soundfont.py")),
    ])
    sdta = list_chunk(b"sdta", [chunk(b"smpl", bytes(smpl))])
    pdta = list_chunk(b"pdta", [
        chunk(b"phdr", bytes(phdr)),
        chunk(b"pbag", bytes(pbag)),
        chunk(b"pmod", pmod),
        chunk(b"pgen", bytes(pgen)),
        chunk(b"inst", bytes(inst)),
        chunk(b"ibag", bytes(ibag)),
        chunk(b"imod", imod),
        chunk(b"igen", bytes(igen)),
        chunk(b"shdr", bytes(shdr)),
    ])
    return chunk(b"RIFF", b"sfbk" + info + sdta + pdta)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default=OUTPUT_DEFAULT)
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print the sample table")
    args = ap.parse_args(argv)
    blob = build(verbose=args.verbose)
    out_dir = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(out_dir, exist_ok=True)
    tmp = args.output + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(blob)
    os.replace(tmp, args.output)
    print("wrote %s (%d bytes)" % (args.output, len(blob)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
