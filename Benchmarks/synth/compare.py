#!/usr/bin/env python3
"""Runs the synth benchmark variants in interleaved rounds and prints medians and ratios.

Called by run.sh (which builds everything first). CPU = user + sys of each child process
(resource.getrusage(RUSAGE_CHILDREN) deltas); the two in-memory renderers also report the
CPU of their render loop alone.
"""
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
import wave


def run(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    fields = dict(re.findall(r"(\w+) ([-0-9.e]+)", proc.stdout))
    return cpu, after.ru_maxrss, fields


def wall_run(cmd):
    t = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}")
    return time.perf_counter() - t


def main():
    out, font, song, seconds, rounds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
    fonts = sys.argv[6:]
    wav = os.path.join(out, "cli.wav")
    variants = {
        "ours (synth unit, Swift, 64-frame blocks)": [os.path.join(out, "synth_swift"), font, song, str(seconds)],
        "C on libfluidsynth (write_float, 64)": [os.path.join(out, "synth_c"), font, song, str(seconds)],
        "fluidsynth -ni -F (CLI)": ["fluidsynth", "-ni", "-q", "-F", wav, "-r", "48000",
                                    "-o", "synth.reverb.active=0", "-o", "synth.chorus.active=0", font, song],
    }
    names = list(variants)
    results = {n: {"cpu": [], "render": [], "audio": []} for n in names}
    for n in names:  # warm-up: page cache, dynamic linking
        run(variants[n])
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            cpu, _, fields = run(variants[n])
            results[n]["cpu"].append(cpu)
            if "render_cpu" in fields:
                results[n]["render"].append(float(fields["render_cpu"]))
                results[n]["audio"].append(float(fields["frames"]) / 48000)
            else:
                with wave.open(wav) as w:
                    results[n]["audio"].append(w.getnframes() / w.getframerate())

    print(f"\nSynth workload: {song} ({os.path.basename(font)}, effects off), "
          f"{rounds} interleaved rounds, medians")
    print(f"{'variant':44} {'process CPU s':>13} {'audio s':>8} {'CPU s/audio s':>13} {'render-loop CPU s':>17} {'ns/frame':>9}")
    med = {}
    for n in names:
        cpu = statistics.median(results[n]["cpu"])
        audio = statistics.median(results[n]["audio"])
        render = statistics.median(results[n]["render"]) if results[n]["render"] else None
        med[n] = (cpu, audio, render)
        per = cpu / audio
        ns = (render if render is not None else cpu) / (audio * 48000) * 1e9
        print(f"{n:44} {cpu:13.3f} {audio:8.2f} {per:13.5f} {render if render is not None else float('nan'):17.3f} {ns:9.1f}")
    ours, c, cli = (med[n] for n in names)
    print("\nratios (ours / other; target: within 5 % of the C program):")
    print(f"  render loop, ours / C:            {ours[2] / c[2]:.3f} (median), "
          f"{min(results[names[0]]['render']) / min(results[names[1]]['render']):.3f} (fastest runs)")
    print(f"  whole process per audio s, ours / C:   {(ours[0] / ours[1]) / (c[0] / c[1]):.3f}")
    print(f"  whole process per audio s, ours / CLI: {(ours[0] / ours[1]) / (cli[0] / cli[1]):.3f}")
    print(f"  spread (max/min) of render loop: ours {max(results[names[0]]['render']) / min(results[names[0]]['render']):.3f}, "
          f"C {max(results[names[1]]['render']) / min(results[names[1]]['render']):.3f}")

    if shutil.which("valgrind"):
        # Instruction counts do not care how busy the machine is: the difference between
        # a 15 s and a 5 s render is the cost of 10 s of rendering alone (start-up, font
        # load and parsing cancel out).
        counts = {}
        for key, exe in (("ours", "synth_swift"), ("c", "synth_c")):
            n = []
            for secs in (5, 15):
                proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                                       os.path.join(out, exe), font, song, str(secs)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                n.append(int(re.search(r"Collected : (\d+)", proc.stderr).group(1)))
            counts[key] = (n[1] - n[0]) / (10 * 48000)
        print(f"\ninstructions per frame rendered (callgrind, 15 s minus 5 s render): "
              f"ours {counts['ours']:.1f}, C {counts['c']:.1f}, ours / C {counts['ours'] / counts['c']:.4f}")

    if fonts:
        print("\nSoundFont load time (warm page cache; median of 3; ours = SoundFontLibrary, "
              "C = fluid_synth_sfload):")
        print(f"{'font':26} {'MB':>7} {'ours CPU s':>11} {'ours wall s':>12} {'C CPU s':>9} {'C wall s':>9}")
        for f in fonts:
            if not os.path.exists(f):
                print(f"{os.path.basename(f):26} (not installed)")
                continue
            rows = {"ours": [], "c": []}
            run([os.path.join(out, "synth_c"), "--load", f])  # warm the page cache
            for _ in range(3):
                for key, exe in (("ours", "synth_swift"), ("c", "synth_c")):
                    _, _, fields = run([os.path.join(out, exe), "--load", f])
                    rows[key].append((float(fields["load_cpu"]), float(fields["load_wall"])))
            o_cpu = statistics.median(x[0] for x in rows["ours"])
            o_wall = statistics.median(x[1] for x in rows["ours"])
            c_cpu = statistics.median(x[0] for x in rows["c"])
            c_wall = statistics.median(x[1] for x in rows["c"])
            mb = os.path.getsize(f) / 1e6
            print(f"{os.path.basename(f):26} {mb:7.1f} {o_cpu:11.3f} {o_wall:12.3f} {c_cpu:9.3f} {c_wall:9.3f}")

        print("\nStart-up to first audio (process start, load, synth, one 64-frame block with a note, "
              "exit; wall s, median of 5):")
        print(f"{'font':26} {'ours':>8} {'C':>8}")
        for f in fonts:
            if not os.path.exists(f):
                continue
            ours = statistics.median(wall_run([os.path.join(out, "synth_swift"), "--first-block", f]) for _ in range(5))
            c = statistics.median(wall_run([os.path.join(out, "synth_c"), "--first-block", f]) for _ in range(5))
            print(f"{os.path.basename(f):26} {ours:8.3f} {c:8.3f}")


if __name__ == "__main__":
    main()
