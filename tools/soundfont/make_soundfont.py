#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Copyright (c) StageRack contributors
"""Generate soundfonts/stagerack-basic.sf2, StageRack's own small SoundFont.

Python 3 standard library only. The output is deterministic: running the
script twice produces identical bytes.

Presets:
  bank 0   program 0  "StageRack Soft Piano"  decaying additive piano-like tone
  bank 0   program 1  "StageRack Pad"         detuned saw/triangle blend, stereo
  bank 0   program 2  "StageRack Saw Lead"    band-limited additive sawtooth
  bank 128 program 0  "StageRack Drums"       small synthesized GM-mapped kit
                                              (so MIDI channel 10 has a preset)

The melodic instruments use one looped root sample per octave (roots on the
A keys 21, 33, ... 105, each covering root-6 .. root+5). Pitch is exact by
construction: a loop of L sample points holds exactly c periods, and the
sample rate written to the header is round(f_root * L / c), so the rate
implied by the loop is within a few hundredths of a cent of the
equal-tempered root frequency (any whole-cent residual would go into
chPitchCorrection). All partials come from one sine table of length L, so the
loop data are exactly periodic; loops start on a zero crossing.

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
OUTPUT_NYQUIST_GUARD = 18000.0               # partials stay below this after transposition
SAMPLE_NYQUIST_FRACTION = 0.45               # and below 0.45 * the sample's rate
PEAK = 0.97                                  # sample normalisation (-0.26 dBFS)
POST = 16                                    # valid points after a loop end (spec: >= 8)

# SoundFont generator operators (SF2.01 section 8.1.2)
G_PAN = 17
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
G_EXCLUSIVE_CLASS = 57
G_OVERRIDING_ROOT_KEY = 58

# Modulator: MIDI velocity, negative, unipolar, concave -> initialAttenuation.
# Same source/destination/transform as the SF2.01 default modulator 8.4.1, so
# placing it in an instrument replaces the default (amount 960 cB) with a
# gentler velocity curve.
MOD_SRC_VELOCITY_CONCAVE_NEG = 0x0502
VELOCITY_CURVE_CB = 600


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
    """Tiny deterministic noise source (independent of the `random` module)."""

    def __init__(self, seed):
        self.state = seed & 0xFFFFFFFF

    def next(self):
        self.state = (1664525 * self.state + 1013904223) & 0xFFFFFFFF
        return self.state / 2147483648.0 - 1.0


# --------------------------------------------------------------------------
# Samples
# --------------------------------------------------------------------------

class Sample:
    def __init__(self, name, data, rate, root, loop_start, loop_end,
                 correction=0, residual=0.0, cycles=0):
        assert len(name) <= 20
        assert 8 <= loop_start and loop_start + 32 <= loop_end <= len(data) - 8
        self.name = name
        self.data = data            # floats, -1..1
        self.rate = rate
        self.root = root
        self.loop_start = loop_start
        self.loop_end = loop_end
        self.correction = correction
        self.residual = residual
        self.cycles = cycles        # periods in the loop (0: not a looped tone)


def normalise(data, peak=PEAK):
    m = max(abs(x) for x in data) or 1.0
    g = peak / m
    return [x * g for x in data]


class LoopPlan:
    """A loop of `length` points holding exactly `cycles` periods of the root
    frequency, and the integer sample rate that makes this exact."""

    def __init__(self, root, sr_target, cycles):
        f = midi_hz(root)
        self.root = root
        self.freq = f
        self.cycles = cycles
        self.length = int(round(cycles * sr_target / f))
        self.rate = int(round(f * self.length / cycles))
        actual = cycles * self.rate / self.length
        error = 1200.0 * math.log2(actual / f)       # > 0: the loop is sharp
        self.correction = int(round(-error))          # chPitchCorrection
        self.residual = error + self.correction       # left over, in cents
        n = self.length
        self.sin = [math.sin(2.0 * math.pi * j / n) for j in range(n)]

    def max_harmonic(self, key_hi, cycles=None):
        """Highest harmonic below 0.45 * rate and, transposed up to key_hi,
        below the output guard frequency."""
        c = self.cycles if cycles is None else cycles
        f_sample = c * self.rate / self.length
        by_rate = SAMPLE_NYQUIST_FRACTION * self.rate / f_sample
        transpose = 2.0 ** (max(0, key_hi - self.root) / 12.0)
        by_output = OUTPUT_NYQUIST_GUARD / (f_sample * transpose)
        return max(1, int(min(by_rate, by_output)))

    def sample(self, name, data, loop_start):
        return Sample(name, data, self.rate, self.root, loop_start,
                      loop_start + self.length, self.correction, self.residual,
                      self.cycles)


def add_partial(acc, plan, harmonic, cycles, amplitude, offset=0):
    """acc[n] += amplitude * sin(2 pi (harmonic * cycles * n + harmonic * offset) / L),
    taken from the loop's sine table, so it is exactly L-periodic."""
    n_len = plan.length
    tab = plan.sin
    step = (harmonic * cycles) % n_len
    idx = (harmonic * offset) % n_len
    acc[:] = [x + amplitude * tab[(idx + step * n) % n_len]
              for n, x in enumerate(acc)]


def zero_crossing(*loops):
    """Index j where every one of the cyclic waveforms (same length) crosses
    zero between j-1 and j in the same direction, with the largest |w[j]| as
    small as possible. With several waveforms (a stereo pair) the loop start
    is common to all, so left and right stay phase-aligned."""
    best, best_val = None, None
    for j in range(len(loops[0])):
        up = all(w[j - 1] < 0.0 <= w[j] for w in loops)
        down = all(w[j - 1] > 0.0 >= w[j] for w in loops)
        if up or down:
            v = max(abs(w[j]) for w in loops)
            if best_val is None or v < best_val:
                best, best_val = j, v
    if best is None:        # no common crossing: use the first wave's
        return zero_crossing(loops[0])
    return best


def periodic_data(loop, start, pre):
    """`pre` points, the loop, and POST points of the L-periodic waveform,
    with the loop beginning at index `start` of `loop`."""
    n = len(loop)
    return [loop[(start - pre + i) % n] for i in range(pre + n + POST)]


# --------------------------------------------------------------------------
# Melodic instruments
# --------------------------------------------------------------------------

def make_saw(root):
    lo, hi = key_range(root)
    f = midi_hz(root)
    cycles = max(1, int(math.ceil(96 * f / 44100.0)))
    plan = LoopPlan(root, 44100, cycles)
    loop = [0.0] * plan.length
    for h in range(1, plan.max_harmonic(hi) + 1):
        add_partial(loop, plan, h, cycles, 1.0 / h)
    # sine phases 0: loop[0] == 0 exactly, the rising crossing through the
    # middle of the saw's jump. One whole loop before the loop start.
    pre = plan.length
    data = normalise(periodic_data(loop, 0, pre))
    return [plan.sample("Saw %s" % note_name(root), data, pre)]


PAD_SIDE_LEVEL = 0.35      # each detuned oscillator vs. the centre one


def make_pad(root):
    """Stereo pair: identical centre oscillator, the +-detuned pair at
    different phases in the left and right samples."""
    lo, hi = key_range(root)
    f = midi_hz(root)
    sr = 16000 if root <= 45 else 32000
    # c periods of the centre oscillator, c-1 and c+1 of the detuned pair in
    # one loop: detune +-f/c Hz, about 6 cents from A3 up; the loop is capped
    # at 2 s, so the low octaves beat at 0.5 Hz instead.
    cycles = max(12, min(300, int(2.0 * f)))
    plan = LoopPlan(root, sr, cycles)
    n = plan.length
    fc = 2600.0
    loops = []
    for phases in ((n // 3, (2 * n) // 3), ((3 * n) // 4, n // 5)):
        loop = [0.0] * n
        oscillators = [(cycles, 1.0, 0),
                       (cycles - 1, PAD_SIDE_LEVEL, phases[0]),
                       (cycles + 1, PAD_SIDE_LEVEL, phases[1])]
        for c, level, offset in oscillators:
            for h in range(1, plan.max_harmonic(hi, cycles=c) + 1):
                saw = 0.55 / h
                tri = 0.0
                if h % 2 == 1:
                    tri = 0.45 * (8.0 / math.pi ** 2) / (h * h)
                    if (h // 2) % 2 == 1:
                        tri = -tri
                rolloff = 1.0 / math.sqrt(1.0 + (h * f / fc) ** 4)
                a = level * (saw + tri) * rolloff
                if abs(a) >= 1e-5:
                    add_partial(loop, plan, h, c, a, offset)
        loops.append(loop)
    pre = 32
    start = zero_crossing(*loops)
    # one gain for both sides, so the centre oscillator is identical in both
    gain = PEAK / max(abs(v) for w in loops for v in w)
    out = []
    for side, loop in zip("LR", loops):
        data = [v * gain for v in periodic_data(loop, start, pre)]
        out.append(plan.sample("Pad %s %s" % (note_name(root), side), data, pre))
    return out


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
    t_decay = 0.7 - 0.06 * octave                  # seconds of timbre change
    loop_start = int(math.ceil(t_decay * plan.rate / n_loop)) * n_loop
    total = loop_start + n_loop + POST
    t_end = loop_start / plan.rate
    t_rise = 0.003                                  # hammer contact
    data = [0.0] * total
    h_max = min(len(PIANO_PARTIALS), plan.max_harmonic(hi))
    tab = plan.sin
    for h in range(1, h_max + 1):
        a0 = PIANO_PARTIALS[h - 1]
        final = 0.55 / h ** 1.2                     # brightness left in the loop
        power = 2.0 + 0.5 * h                       # upper partials fade faster
        step = (h * cycles) % n_loop
        idx = 0
        for n in range(total):
            t = n / plan.rate
            w = (1.0 - t / t_end) ** power if t < t_end else 0.0
            env = final + (1.0 - final) * w
            if t < t_rise:
                env *= math.sin(0.5 * math.pi * t / t_rise)
            data[n] += a0 * env * tab[idx]
            idx += step
            if idx >= n_loop:
                idx -= n_loop
    # hammer: a few milliseconds of smoothed deterministic noise
    rng = Lcg(0x5A17 + root)
    y = 0.0
    coeff = math.exp(-2.0 * math.pi * min(6.0 * f, 5000.0) / plan.rate)
    for n in range(int(0.015 * plan.rate)):
        t = n / plan.rate
        y = coeff * y + (1.0 - coeff) * rng.next()
        env = (1.0 - math.exp(-t / 0.0006)) * math.exp(-t / 0.003)
        data[n] += 0.8 * env * y
    # data[loop_start] is a0 * sin(0) sums = 0 exactly: a rising zero
    # crossing; from there on the waveform is exactly n_loop-periodic.
    data = normalise(data)
    return [plan.sample("Piano %s" % note_name(root), data, loop_start)]


# --------------------------------------------------------------------------
# Drum kit (bank 128): one-shot samples at 32 kHz
# --------------------------------------------------------------------------

DRUM_RATE = 32000


def one_shot(name, data, root=60):
    """Unlooped sample; the loop points (unused, sampleModes 0) are put in
    the silent tail so that they are valid."""
    fade = int(0.01 * DRUM_RATE)
    for i in range(fade):
        data[-1 - i] *= i / fade
    data = normalise(data + [0.0] * 48, peak=PEAK)
    n = len(data)
    return Sample(name, data, DRUM_RATE, root, n - 44, n - 8)


def highpass(x, fc, rate=DRUM_RATE):
    a = 1.0 / (1.0 + 2.0 * math.pi * fc / rate)
    out, y, prev = [], 0.0, 0.0
    for v in x:
        y = a * (y + v - prev)
        prev = v
        out.append(y)
    return out


def lowpass(x, fc, rate=DRUM_RATE):
    c = math.exp(-2.0 * math.pi * fc / rate)
    out, y = [], 0.0
    for v in x:
        y = c * y + (1.0 - c) * v
        out.append(y)
    return out


def noise(n, seed):
    rng = Lcg(seed)
    return [rng.next() for _ in range(n)]


def drum_kick():
    n = int(0.5 * DRUM_RATE)
    out, ph = [], 0.0
    click = lowpass(noise(n, 11), 3000.0)
    for i in range(n):
        t = i / DRUM_RATE
        freq = 48.0 + 110.0 * math.exp(-t / 0.03)
        ph += 2.0 * math.pi * freq / DRUM_RATE
        body = math.sin(ph) * math.exp(-t / 0.22) * min(1.0, t / 0.001)
        out.append(body + 0.3 * click[i] * math.exp(-t / 0.003))
    return one_shot("Kick", out)


def drum_snare():
    n = int(0.35 * DRUM_RATE)
    hiss = highpass(lowpass(noise(n, 22), 9000.0), 900.0)
    out = []
    for i in range(n):
        t = i / DRUM_RATE
        tone = (0.6 * math.sin(2 * math.pi * 185.0 * t)
                + 0.3 * math.sin(2 * math.pi * 330.0 * t)) * math.exp(-t / 0.05)
        out.append((tone + 1.4 * hiss[i] * math.exp(-t / 0.08)) * min(1.0, t / 0.0005))
    return one_shot("Snare", out)


def drum_clap():
    n = int(0.4 * DRUM_RATE)
    hiss = highpass(lowpass(noise(n, 33), 2500.0), 700.0)
    out = []
    for i in range(n):
        t = i / DRUM_RATE
        env = 0.0
        for k in range(3):
            tk = t - 0.011 * k
            if tk >= 0:
                env += math.exp(-tk / 0.004)
        if t >= 0.022:
            env += 0.7 * math.exp(-(t - 0.022) / 0.07)
        out.append(hiss[i] * env)
    return one_shot("Clap", out)


def drum_hat(name, seconds, decay, seed):
    n = int(seconds * DRUM_RATE)
    hiss = highpass(highpass(noise(n, seed), 6000.0), 6000.0)
    out = [hiss[i] * math.exp(-(i / DRUM_RATE) / decay) for i in range(n)]
    return one_shot(name, out)


def drum_crash():
    n = int(1.4 * DRUM_RATE)
    hiss = highpass(noise(n, 55), 3500.0)
    out = []
    for i in range(n):
        t = i / DRUM_RATE
        out.append(hiss[i] * (0.35 * math.exp(-t / 0.02) + math.exp(-t / 0.45)))
    return one_shot("Crash", out)


TOM_ROOT = 45


def drum_tom():
    n = int(0.55 * DRUM_RATE)
    f0 = midi_hz(TOM_ROOT)
    thump = lowpass(noise(n, 66), 1200.0)
    out, ph = [], 0.0
    for i in range(n):
        t = i / DRUM_RATE
        ph += 2.0 * math.pi * f0 * (1.0 + 0.25 * math.exp(-t / 0.04)) / DRUM_RATE
        out.append(math.sin(ph) * math.exp(-t / 0.18) * min(1.0, t / 0.001)
                   + 0.4 * thump[i] * math.exp(-t / 0.01))
    return one_shot("Tom", out, root=TOM_ROOT)


def make_drums():
    """Zones: (lo, hi, [extra gens], sample). GM percussion keys."""
    kick, snare, clap = drum_kick(), drum_snare(), drum_clap()
    hat_closed = drum_hat("Hat Closed", 0.16, 0.03, 44)
    hat_pedal = drum_hat("Hat Pedal", 0.12, 0.02, 45)
    hat_open = drum_hat("Hat Open", 0.8, 0.25, 46)
    crash, tom = drum_crash(), drum_tom()
    zones = []

    def pair(key, sample, extra=(), centre=0, fixed=True):
        # like the melodic instruments: two voices panned centre -+ 250;
        # fixed: play the sample untransposed on this key
        gens = ([(G_OVERRIDING_ROOT_KEY, key)] if fixed else []) + list(extra)
        for pan in (centre - 250, centre + 250):
            zones.append((key, key, [(G_PAN, pan)] + gens, sample))

    pair(35, kick)
    pair(36, kick)
    pair(38, snare)
    pair(39, clap, centre=-100)
    pair(40, snare)
    for key, centre in ((41, -200), (43, -150), (45, -50), (47, 50),
                        (48, 150), (50, 200)):       # toms, pitched around the root
        pair(key, tom, centre=centre, fixed=False)
    pair(42, hat_closed, [(G_EXCLUSIVE_CLASS, 1)], centre=150)
    pair(44, hat_pedal, [(G_EXCLUSIVE_CLASS, 1)], centre=150)
    pair(46, hat_open, [(G_EXCLUSIVE_CLASS, 1)], centre=150)
    pair(49, crash, centre=-150)
    pair(57, crash, centre=150)
    samples = [kick, snare, clap, hat_closed, hat_pedal, hat_open, crash, tom]
    return samples, sorted(zones, key=lambda z: z[0])


# --------------------------------------------------------------------------
# Instrument table
# --------------------------------------------------------------------------

def melodic(make, pan):
    """Zones for an instrument with one (mono) or two (stereo) samples per
    root. Every key range plays as a pair of voices panned -pan/+pan: the
    stereo samples left/right, a mono sample twice. Under a constant-power
    pan law the pair is also ~5 dB louder than one centred voice."""
    samples, zones = [], []
    for root in ROOTS:
        lo, hi = key_range(root)
        made = make(root)
        samples.extend(made)
        left, right = made[0], made[-1]
        zones.append((lo, hi, [(G_PAN, -pan), (G_SAMPLE_MODES, 1)], left))
        zones.append((lo, hi, [(G_PAN, pan), (G_SAMPLE_MODES, 1)], right))
    return samples, zones


def velocity_curve(amount_cb):
    return [(MOD_SRC_VELOCITY_CONCAVE_NEG, G_INITIAL_ATTENUATION, amount_cb, 0, 0)]


VELOCITY_MOD = velocity_curve(VELOCITY_CURVE_CB)

INSTRUMENTS = [
    {
        "name": "StageRack Soft Piano",
        "zones": lambda: melodic(make_piano, 250),
        "global": [
            (G_ATTACK_VOL_ENV, timecents(0.001)),
            (G_HOLD_VOL_ENV, timecents(0.01)),
            (G_DECAY_VOL_ENV, timecents(10.0)),     # 10 s for the full 100 dB
            (G_SUSTAIN_VOL_ENV, 300),               # low sustain: -30 dB
            (G_RELEASE_VOL_ENV, timecents(0.6)),
            (G_KEYNUM_TO_VOL_ENV_DECAY, 40),        # higher keys decay faster
        ],
        "mods": VELOCITY_MOD,
    },
    {
        "name": "StageRack Pad",
        "zones": lambda: melodic(make_pad, 350),
        "global": [
            (G_ATTACK_VOL_ENV, timecents(0.6)),
            (G_SUSTAIN_VOL_ENV, 0),
            (G_RELEASE_VOL_ENV, timecents(2.5)),
        ],
        "mods": velocity_curve(300),                # pads: softer velocity response
    },
    {
        "name": "StageRack Saw Lead",
        "zones": lambda: melodic(make_saw, 250),
        "global": [
            (G_ATTACK_VOL_ENV, timecents(0.004)),
            (G_SUSTAIN_VOL_ENV, 0),
            (G_RELEASE_VOL_ENV, timecents(0.12)),
            (G_INITIAL_ATTENUATION, 20),            # saws are dense: -2 dB
        ],
        "mods": VELOCITY_MOD,
    },
    {
        "name": "StageRack Drums",
        "zones": make_drums,
        "global": [
            (G_ATTACK_VOL_ENV, timecents(0.001)),
            (G_SUSTAIN_VOL_ENV, 0),
            (G_RELEASE_VOL_ENV, timecents(1.5)),    # one-shots: let them ring
            (G_SAMPLE_MODES, 0),
        ],
        "mods": VELOCITY_MOD,
    },
]

PRESETS = [  # (bank, program, name, instrument index)
    (0, 0, "StageRack Soft Piano", 0),
    (0, 1, "StageRack Pad", 1),
    (0, 2, "StageRack Saw Lead", 2),
    (128, 0, "StageRack Drums", 3),
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
    return chunk(b"LIST", list_type + b"".join(subchunks))


def zstr(text):
    """Zero-terminated ASCII, padded to an even length (INFO sub-chunks)."""
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
        return struct.pack("<HBB", oper, amount[0], amount[1])
    return struct.pack("<Hh" if amount < 0 else "<HH", oper, amount)


def mod(src, dest, amount, amt_src, trans):
    return struct.pack("<HHhHH", src, dest, amount, amt_src, trans)


def to_int16(x):
    return max(-32768, min(32767, int(round(x * 32767.0))))


def build(verbose=False):
    samples = []
    sample_index = {}
    instruments = []
    for spec in INSTRUMENTS:
        inst_samples, zones = spec["zones"]()
        for s in inst_samples:
            sample_index[id(s)] = len(samples)
            samples.append(s)
        instruments.append(zones)

    # sdta/smpl: 16-bit points, every sample followed by 46 zero points
    smpl = bytearray()
    shdr = bytearray()
    pos = 0
    for s in samples:
        pcm = [to_int16(x) for x in s.data]
        start, end = pos, pos + len(pcm)
        smpl += struct.pack("<%dh" % len(pcm), *pcm)
        smpl += b"\0\0" * 46
        pos = end + 46
        shdr += struct.pack("<20sIIIIIBbHH", name20(s.name), start, end,
                            start + s.loop_start, start + s.loop_end, s.rate,
                            s.root, s.correction, 0, 1)     # 1 = monoSample
        if verbose:
            print("%-14s %5d Hz %6d pts  loop %6d..%6d  %3d periods  root %3d  "
                  "corr %+d  residual %+.4f cents" % (
                      s.name, s.rate, len(pcm), s.loop_start, s.loop_end,
                      s.cycles, s.root, s.correction, s.residual))
    shdr += struct.pack("<20sIIIIIBbHH", name20("EOS"), 0, 0, 0, 0, 0, 0, 0, 0, 0)

    # instruments: a global zone, then one zone per (key range, sample)
    inst, ibag, imod, igen = bytearray(), bytearray(), bytearray(), bytearray()
    n_ibag = n_imod = n_igen = 0
    for spec, zones in zip(INSTRUMENTS, instruments):
        inst += struct.pack("<20sH", name20(spec["name"]), n_ibag)
        ibag += struct.pack("<HH", n_igen, n_imod)
        n_ibag += 1
        for m in spec.get("mods", []):
            imod += mod(*m)
            n_imod += 1
        for oper, amount in spec["global"]:
            igen += gen(oper, amount)
            n_igen += 1
        for lo, hi, extra, sample in zones:
            ibag += struct.pack("<HH", n_igen, n_imod)
            n_ibag += 1
            gens = ([gen(G_KEY_RANGE, (lo, hi))]                 # keyRange first
                    + [gen(o, a) for o, a in extra]
                    + [gen(G_SAMPLE_ID, sample_index[id(sample)])])  # sampleID last
            igen += b"".join(gens)
            n_igen += len(gens)
    inst += struct.pack("<20sH", name20("EOI"), n_ibag)
    ibag += struct.pack("<HH", n_igen, n_imod)
    imod += b"\0" * 10
    igen += b"\0" * 4

    # presets: one zone each, holding only the instrument generator
    phdr, pbag, pgen = bytearray(), bytearray(), bytearray()
    n_pbag = n_pgen = 0
    for bank, program, name, inst_index in sorted(PRESETS):
        phdr += struct.pack("<20sHHHIII", name20(name), program, bank, n_pbag, 0, 0, 0)
        pbag += struct.pack("<HH", n_pgen, 0)
        n_pbag += 1
        pgen += gen(G_INSTRUMENT, inst_index)
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
        chunk(b"ICMT", zstr("Synthesized by tools/soundfont/make_soundfont.py, "
                            "no recorded material. Bank 0: 0 Soft Piano, 1 Pad, "
                            "2 Saw Lead. Bank 128: 0 Drums.")),
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
        chunk(b"imod", bytes(imod)),
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
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    tmp = args.output + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(blob)
    os.replace(tmp, args.output)
    print("wrote %s (%d bytes)" % (args.output, len(blob)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
