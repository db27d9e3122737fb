#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Copyright (c) StageRack contributors
"""Check soundfonts/stagerack-basic.sf2: structure, determinism, and real
playback through FluidSynth (pitch, level, no warnings).

Python 3 standard library only; needs the `fluidsynth` command
(`apt-get install fluidsynth`). Prints one line per check and
`N passed, N failed` last; exits non-zero if anything failed.

Usage: python3 tools/soundfont/check_soundfont.py [SF2] [--no-regen] [--keep DIR]
"""

import argparse
import cmath
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SF2 = os.path.normpath(os.path.join(HERE, "..", "..", "soundfonts",
                                            "stagerack-basic.sf2"))
GENERATOR = os.path.join(HERE, "make_soundfont.py")

PROGRAMS = [(0, "StageRack Soft Piano"), (1, "StageRack Pad"),
            (2, "StageRack Saw Lead")]
NOTES = [36, 69, 84]              # C2, A4, C6
VELOCITY = 100
RATE = 48000
HOLD_S = 9.0                      # note length in the test MIDI file
WINDOW = (1.5, 8.9)               # steady stretch analysed for pitch (s)
MAX_CENTS = 2.0
PEAK_DB_RANGE = (-20.0, -1.0)
MAX_BYTES = 2 * 1024 * 1024

passed = 0
failed = 0


def check(ok, label, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
    print("%s  %s%s" % ("PASS" if ok else "FAIL", label,
                        (": " + detail) if detail else ""))
    return ok


def midi_hz(key):
    return 440.0 * 2.0 ** ((key - 69) / 12.0)


def note_name(key):
    names = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]
    return "%s%d" % (names[key % 12], key // 12 - 1)


# --------------------------------------------------------------------------
# Structure
# --------------------------------------------------------------------------

def read_chunks(data, start, end):
    """List of (id, payload_start, payload_size) for the chunks in [start, end)."""
    out = []
    pos = start
    while pos < end:
        if pos + 8 > end:
            raise ValueError("truncated chunk header at %d" % pos)
        ckid = data[pos:pos + 4]
        size = struct.unpack_from("<I", data, pos + 4)[0]
        if pos + 8 + size > end:
            raise ValueError("chunk %r at %d overruns its parent" % (ckid, pos))
        out.append((ckid, pos + 8, size))
        pos += 8 + size + (size & 1)
    if pos != end:
        raise ValueError("chunk padding overruns parent")
    return out


def check_structure(path):
    data = open(path, "rb").read()
    check(len(data) < MAX_BYTES, "file size", "%d bytes" % len(data))
    ok = (data[:4] == b"RIFF" and data[8:12] == b"sfbk"
          and struct.unpack_from("<I", data, 4)[0] == len(data) - 8)
    if not check(ok, "RIFF sfbk header and size"):
        return None
    try:
        top = read_chunks(data, 12, len(data))
    except ValueError as e:
        check(False, "RIFF chunk sizes", str(e))
        return None
    lists = [(data[p:p + 4], p, s) for ckid, p, s in top if ckid == b"LIST"]
    ok = [l[0] for l in lists] == [b"INFO", b"sdta", b"pdta"] and len(top) == 3
    if not check(ok, "top level LIST INFO, sdta, pdta"):
        return None
    subs = {}
    for ltype, p, s in lists:
        subs[ltype] = read_chunks(data, p + 4, p + s)

    # INFO
    info = {ckid: data[p:p + s] for ckid, p, s in subs[b"INFO"]}
    first = subs[b"INFO"][0][0]
    check(first == b"ifil" and info.get(b"ifil") == struct.pack("<HH", 2, 1),
          "INFO ifil first, version 2.01")
    for key in (b"isng", b"INAM", b"ICOP"):
        v = info.get(key)
        check(v is not None and len(v) % 2 == 0 and v.endswith(b"\0")
              and len(v) <= 256, "INFO %s zero-terminated, even, <=256" % key.decode(),
              repr(v.rstrip(b"\0").decode("ascii", "replace")) if v else "missing")
    check(b"MIT" in info.get(b"ICOP", b""), "INFO ICOP states the MIT licence")
    for ckid, p, s in subs[b"INFO"]:
        if ckid != b"ifil":
            check(s % 2 == 0 and data[p + s - 1] == 0,
                  "INFO %s even and terminated" % ckid.decode())

    # sdta
    sd = subs[b"sdta"]
    if not check(len(sd) == 1 and sd[0][0] == b"smpl" and sd[0][2] % 2 == 0,
                 "sdta holds one smpl chunk of 16-bit data"):
        return None
    smpl_off, smpl_size = sd[0][1], sd[0][2]
    n_points = smpl_size // 2
    smpl = struct.unpack_from("<%dh" % n_points, data, smpl_off)

    # pdta
    order = [b"phdr", b"pbag", b"pmod", b"pgen", b"inst", b"ibag", b"imod",
             b"igen", b"shdr"]
    recsize = dict(zip(order, [38, 4, 10, 4, 22, 4, 10, 4, 46]))
    pd = subs[b"pdta"]
    if not check([c[0] for c in pd] == order, "pdta sub-chunk order"):
        return None
    raw = {}
    for ckid, p, s in pd:
        minimum = 1 if ckid in (b"pmod", b"imod") else 2
        ok = s % recsize[ckid] == 0 and s // recsize[ckid] >= minimum
        check(ok, "pdta %s size multiple of %d, terminal present"
              % (ckid.decode(), recsize[ckid]), "%d records" % (s // recsize[ckid]))
        raw[ckid] = [data[p + i:p + i + recsize[ckid]]
                     for i in range(0, s, recsize[ckid])]

    def cname(b):
        return b[:20].split(b"\0")[0].decode("ascii", "replace")

    phdr = [(cname(r),) + struct.unpack_from("<HHHIII", r, 20) for r in raw[b"phdr"]]
    inst = [(cname(r), struct.unpack_from("<H", r, 20)[0]) for r in raw[b"inst"]]
    pbag = [struct.unpack("<HH", r) for r in raw[b"pbag"]]
    ibag = [struct.unpack("<HH", r) for r in raw[b"ibag"]]
    pgen = [struct.unpack("<HH", r) for r in raw[b"pgen"]]
    igen = [struct.unpack("<HH", r) for r in raw[b"igen"]]
    shdr = [(cname(r),) + struct.unpack_from("<IIIIIBbHH", r, 20) for r in raw[b"shdr"]]

    check(phdr[-1][0] == "EOP" and phdr[-1][3] == len(pbag) - 1, "phdr terminal EOP")
    check(inst[-1][0] == "EOI" and inst[-1][1] == len(ibag) - 1, "inst terminal EOI")
    check(shdr[-1][0] == "EOS", "shdr terminal EOS")
    check(pbag[-1] == (len(pgen) - 1, len(raw[b"pmod"]) - 1), "pbag terminal indices")
    check(ibag[-1] == (len(igen) - 1, len(raw[b"imod"]) - 1), "ibag terminal indices")
    check(raw[b"pmod"][-1] == b"\0" * 10 and raw[b"imod"][-1] == b"\0" * 10
          and pgen[-1] == (0, 0) and igen[-1] == (0, 0), "mod/gen terminal records zero")
    mono = lambda seq: all(a <= b for a, b in zip(seq, seq[1:]))
    check(mono([p[3] for p in phdr]) and mono([i[1] for i in inst])
          and mono([b[0] for b in pbag]) and mono([b[0] for b in ibag])
          and mono([b[1] for b in pbag]) and mono([b[1] for b in ibag]),
          "bag and generator indices monotonic")

    presets = {(p[2], p[1]): p[0] for p in phdr[:-1]}
    for prog, name in PROGRAMS:
        check(presets.get((0, prog)) == name, "preset bank 0 program %d" % prog,
              repr(presets.get((0, prog))))
    check((128, 0) in presets, "preset bank 128 program 0 (MIDI channel 10)",
          repr(presets.get((128, 0))))

    def zones(bags, gens, first, last, terminal_gen):
        """Generator lists of the zones with bag indices [first, last)."""
        out = []
        for b in range(first, last):
            out.append(gens[bags[b][0]:bags[b + 1][0]])
        ok = True
        for zi, z in enumerate(out):
            opers = [g[0] for g in z]
            if 43 in opers and opers.index(43) != 0:
                ok = False
            if 44 in opers and opers.index(44) != (1 if 43 in opers else 0):
                ok = False
            if terminal_gen in opers:
                if opers.index(terminal_gen) != len(opers) - 1:
                    ok = False
            elif zi != 0:
                ok = False          # only the first zone may be global
        return out, ok

    all_ok = True
    for i in range(len(phdr) - 1):
        _, ok = zones(pbag, pgen, phdr[i][3], phdr[i + 1][3], 41)
        all_ok &= ok
    inst_zones = []
    for i in range(len(inst) - 1):
        z, ok = zones(ibag, igen, inst[i][1], inst[i + 1][1], 53)
        all_ok &= ok
        inst_zones.append(z)
    check(all_ok, "generator order (keyRange first, instrument/sampleID last, "
          "global zone first)")

    # key ranges: every melodic instrument covers 0..127, each key by the
    # same number of zones (a stereo pair: 2); note which samples loop
    looped = set()
    for i, z in enumerate(inst_zones):
        cover = [0] * 128
        global_modes = dict(z[0]).get(54, 0) if z and 53 not in dict(z[0]) else 0
        for gens in z:
            d = dict(gens)
            if 53 in d:
                lo, hi = (d[43] & 0xFF, d[43] >> 8) if 43 in d else (0, 127)
                for k in range(lo, hi + 1):
                    cover[k] += 1
                if d.get(54, global_modes) & 1:
                    looped.add(d[53])
        if "Drum" in inst[i][0]:
            continue
        check(min(cover) >= 1 and min(cover) == max(cover),
              "instrument %r key ranges tile 0..127" % inst[i][0],
              "%d sample zones, %d per key" % (sum(1 for g in z if 53 in dict(g)),
                                                cover[0]))

    # samples
    bounds = sorted((s[1], s[2]) for s in shdr[:-1])
    gaps_ok = all(b[0] - a[1] >= 46 for a, b in zip(bounds, bounds[1:]))
    tail_ok = n_points - bounds[-1][1] >= 46
    zeros_ok = all(all(v == 0 for v in smpl[e:e + 46]) for _, e in bounds)
    check(gaps_ok and tail_ok and zeros_ok, "46 zero points after every sample")
    worst_resid = 0.0
    bad_samples = 0
    for sid, (name, start, end, sl, el, rate, root, corr, link, stype) in \
            enumerate(shdr[:-1]):
        problems = []
        if not (start + 8 <= sl and sl + 32 <= el and el + 8 <= end <= n_points):
            problems.append("loop bounds")
        if stype != 1 or link != 0:
            problems.append("not a mono sample")
        if not (8000 <= rate <= 96000):
            problems.append("rate %d" % rate)
        peak = max(abs(v) for v in smpl[start:end]) or 1
        if sid not in looped:
            if problems:
                bad_samples += 1
                check(False, "sample %r" % name, "; ".join(problems))
            continue
        if not (-1 <= min(smpl[sl + i] - smpl[el + i] for i in range(8))
                and max(smpl[sl + i] - smpl[el + i] for i in range(8)) <= 1):
            problems.append("data after loop end differs from loop start")
        crossing = smpl[sl] == 0 or smpl[sl - 1] * smpl[sl] < 0 or \
            smpl[sl] * smpl[sl + 1] < 0
        if abs(smpl[sl]) > 0.02 * peak or not crossing:
            problems.append("loop start not at a zero crossing (%d, %d, %d)"
                            % (smpl[sl - 1], smpl[sl], smpl[sl + 1]))
        f = midi_hz(root) * 2.0 ** (-corr / 1200.0)
        cycles = (el - sl) * f / rate
        resid = 1200.0 * math.log2(round(cycles) / cycles) if cycles >= 0.5 else 99.0
        worst_resid = max(worst_resid, abs(resid))
        if abs(resid) > 0.1:
            problems.append("loop holds %.4f periods (%.3f cents off)" % (cycles, resid))
        if problems:
            bad_samples += 1
            check(False, "sample %r" % name, "; ".join(problems))
    check(bad_samples == 0, "samples: bounds, zero-crossing loops holding "
          "integer periods", "%d samples, %d looped, worst loop pitch residual "
          "%.4f cents" % (len(shdr) - 1, len(looped), worst_resid))
    return data


# --------------------------------------------------------------------------
# Rendering and measurement
# --------------------------------------------------------------------------

def vlq(n):
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


def write_midi(path, program, notes, velocity=VELOCITY, hold_s=HOLD_S,
               tail_s=0.5, channel=0):
    """Format 0 file: program change, then each note in turn, held hold_s."""
    division = 480                     # ticks per quarter; 120 bpm -> 960 ticks/s
    hold = int(round(hold_s * 960))
    tail = int(round(tail_s * 960))
    ch = channel & 0x0F
    ev = b""
    ev += vlq(0) + b"\xFF\x51\x03" + (500000).to_bytes(3, "big")
    if ch != 9:
        ev += vlq(0) + bytes([0xB0 | ch, 0, 0])   # bank select MSB 0
        ev += vlq(0) + bytes([0xB0 | ch, 32, 0])  # bank select LSB 0
    ev += vlq(0) + bytes([0xC0 | ch, program])
    for note in ([notes] if isinstance(notes, int) else notes):
        ev += vlq(0) + bytes([0x90 | ch, note, velocity])
        ev += vlq(hold) + bytes([0x80 | ch, note, 0])
    ev += vlq(tail) + b"\xFF\x2F\x00"
    with open(path, "wb") as fh:
        fh.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, division))
        fh.write(b"MTrk" + struct.pack(">I", len(ev)) + ev)


def render(sf2, mid, wav):
    cmd = ["fluidsynth", "-ni", "-F", wav, "-r", str(RATE),
           "-o", "synth.reverb.active=0", "-o", "synth.chorus.active=0", sf2, mid]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return p.returncode, p.stdout + p.stderr


def read_wav(path):
    with wave.open(path, "rb") as w:
        ch, width, rate, n = (w.getnchannels(), w.getsampwidth(),
                              w.getframerate(), w.getnframes())
        raw = w.readframes(n)
    if width != 2:
        raise ValueError("expected 16-bit WAV, got %d bytes/sample" % width)
    v = struct.unpack("<%dh" % (n * ch), raw)
    mono = [sum(v[i:i + ch]) / (ch * 32768.0) for i in range(0, len(v), ch)]
    peak = max(abs(x) / 32768.0 for x in v) if v else 0.0
    return rate, mono, peak


def box(seq, m):
    """Moving sum of length m (valid part only)."""
    out = []
    acc = sum(seq[:m])
    out.append(acc)
    for i in range(m, len(seq)):
        acc += seq[i] - seq[i - m]
        out.append(acc)
    return out


def estimate_pitch(x, rate, f_expected):
    """Frequency of the strongest component within +-3 % of f_expected.

    The signal is mixed down by f_expected, low-passed by three cascaded
    one-period moving sums (their nulls sit on the harmonics), decimated to
    about one point per period, and
    the peak of the Hann-windowed DTFT of this baseband is found by a coarse
    scan and golden-section refinement. Resolution is far below 0.01 Hz for
    multi-second windows. Returns (frequency, relative amplitude)."""
    n = len(x)
    w0 = -2.0 * math.pi * f_expected / rate
    rot = cmath.exp(1j * w0)
    z = 1.0 + 0j
    base = []
    for i in range(n):
        if i % 4096 == 0:
            z = cmath.exp(1j * w0 * i)     # re-anchor the rotation
        base.append(x[i] * z)
        z *= rot
    m = max(1, int(round(rate / f_expected)))
    for _ in range(3):
        base = box(base, m)
    dec = m                 # baseband rate ~f: plenty for the +-3 % search span
    base = base[::dec]
    brate = rate / dec
    nb = len(base)
    win = [0.5 - 0.5 * math.cos(2.0 * math.pi * k / (nb - 1)) for k in range(nb)]
    wb = [b * w for b, w in zip(base, win)]

    def mag(df):
        r = cmath.exp(-2j * math.pi * df / brate)
        acc = 0j
        zz = 1.0 + 0j
        for k, v in enumerate(wb):
            if k % 4096 == 0:
                zz = cmath.exp(-2j * math.pi * df * k / brate)
            acc += v * zz
            zz *= r
        return abs(acc)

    span = 0.03 * f_expected
    dur = nb / brate
    step = 0.25 / dur
    grid = [-span + i * step for i in range(int(2 * span / step) + 1)]
    vals = [mag(d) for d in grid]
    i = max(range(len(vals)), key=vals.__getitem__)
    lo = grid[max(0, i - 1)]
    hi = grid[min(len(grid) - 1, i + 1)]
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = mag(c), mag(d)
    while b - a > 1e-5:
        if fc > fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = mag(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = mag(d)
    df = (a + b) / 2.0
    # amplitude of that component relative to the RMS of the stretch
    gain = (m ** 3) * sum(win) * 0.5
    amp = mag(df) / gain if gain else 0.0
    rms = math.sqrt(sum(v * v for v in x) / n) if n else 0.0
    return f_expected + df, (amp / (rms * math.sqrt(2.0)) if rms else 0.0)


WARN_RE = re.compile(r"warn|error|panic|invalid|ignor|fail", re.I)


def check_playback(sf2, workdir, notes=NOTES):
    figures = []
    for program, pname in PROGRAMS:
        for note in notes:
            tag = "prog %d %s" % (program, note_name(note))
            mid = os.path.join(workdir, "p%d_n%d.mid" % (program, note))
            wav = os.path.join(workdir, "p%d_n%d.wav" % (program, note))
            write_midi(mid, program, note)
            rc, out = render(sf2, mid, wav)
            noisy = [l for l in out.splitlines() if WARN_RE.search(l)]
            check(rc == 0 and not noisy, "%s fluidsynth clean" % tag,
                  "; ".join(noisy[:3]) if noisy else "")
            if rc != 0 or not os.path.exists(wav):
                continue
            rate, x, peak = read_wav(wav)
            peak_db = 20.0 * math.log10(peak) if peak > 0 else -999.0
            check(PEAK_DB_RANGE[0] <= peak_db <= PEAK_DB_RANGE[1],
                  "%s level" % tag, "peak %.1f dBFS (velocity %d)" % (peak_db, VELOCITY))
            seg = x[int(WINDOW[0] * rate):int(WINDOW[1] * rate)]
            f_exp = midi_hz(note)
            f, rel = estimate_pitch(seg, rate, f_exp)
            cents = 1200.0 * math.log2(f / f_exp)
            check(abs(cents) <= MAX_CENTS and rel > 0.05, "%s pitch" % tag,
                  "%.4f Hz (expected %.4f), %+.3f cents, fundamental %.2f of RMS"
                  % (f, f_exp, cents, rel))
            figures.append((pname, note, f, cents, peak_db))
    if notes != NOTES:
        worst = max(figures, key=lambda r: abs(r[3])) if figures else None
        if worst:
            print("worst pitch error over the scan: %s %s %+.3f cents"
                  % (worst[0], note_name(worst[1]), worst[3]))
    # drum kit on MIDI channel 10: renders cleanly, sensible level
    mid = os.path.join(workdir, "drums.mid")
    wav = os.path.join(workdir, "drums.wav")
    write_midi(mid, 0, [36, 38, 42, 46, 45, 49], hold_s=0.5, tail_s=1.5, channel=9)
    rc, out = render(sf2, mid, wav)
    noisy = [l for l in out.splitlines() if WARN_RE.search(l)]
    check(rc == 0 and not noisy, "drums (channel 10) fluidsynth clean",
          "; ".join(noisy[:3]) if noisy else "")
    if rc == 0 and os.path.exists(wav):
        rate, x, peak = read_wav(wav)
        peak_db = 20.0 * math.log10(peak) if peak > 0 else -999.0
        check(PEAK_DB_RANGE[0] <= peak_db <= PEAK_DB_RANGE[1], "drums level",
              "peak %.1f dBFS (velocity %d)" % (peak_db, VELOCITY))
    print()
    print("%-22s %-5s %12s %9s %9s" % ("program", "note", "measured Hz", "cents", "peak dB"))
    for pname, note, f, cents, peak_db in figures:
        print("%-22s %-5s %12.4f %+9.3f %9.1f" % (pname, note_name(note), f, cents, peak_db))
    print()


def main(argv=None):
    ap = argparse.ArgumentParser(description="Check the StageRack SoundFont.")
    ap.add_argument("sf2", nargs="?", default=DEFAULT_SF2)
    ap.add_argument("--no-regen", action="store_true",
                    help="skip regenerating the font to compare bytes")
    ap.add_argument("--keep", metavar="DIR",
                    help="keep MIDI/WAV files in DIR")
    ap.add_argument("--scan", action="store_true",
                    help="measure every key C1..C7 (73 keys x 3 programs, slow)")
    args = ap.parse_args(argv)

    if not check(os.path.isfile(args.sf2), "font exists", args.sf2):
        print("%d passed, %d failed" % (passed, failed))
        return 1
    data = check_structure(args.sf2)

    workdir = args.keep or tempfile.mkdtemp(prefix="sfcheck-")
    os.makedirs(workdir, exist_ok=True)
    try:
        if not args.no_regen and os.path.isfile(GENERATOR):
            out = os.path.join(workdir, "regen.sf2")
            p = subprocess.run([sys.executable, GENERATOR, "-o", out],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            same = p.returncode == 0 and data is not None and \
                open(out, "rb").read() == data
            check(same, "generator reproduces the file byte for byte")
        if shutil.which("fluidsynth") is None:
            check(False, "fluidsynth installed", "apt-get install fluidsynth")
        else:
            check_playback(args.sf2, workdir,
                           list(range(24, 97)) if args.scan else NOTES)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
