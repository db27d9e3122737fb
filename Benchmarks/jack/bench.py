"""The JACK backend's per-period overhead against the ALSA backend's, in callgrind instruction
counts of the render thread, side by side in one run on the same rack, period and rate:
`play` on alsa-lib's null devices (the ALSA backend's own loop: read, render, write, the
paced wait) and `play --driver jack` on a jackd with the dummy driver (libjack's process
thread: its cycle wait and signal, the process callback, the ports' buffers).

Each backend runs twice under callgrind (--separate-threads), SHORT and LONG seconds; the
render thread is the thread whose profile calls RackPlayer.render. Per period:
    overhead = Δ(thread instructions − render's inclusive instructions) / Δ(render calls)
between the two runs, so the thread's start (stream set-up, pre-fill, client activation) and
the rack's own work cancel out; what is left is what each backend costs a period. The
rack's render (per call) is printed too, as the scale.

JACK also costs a period in its server (another process; on a Pi the same cores): jackd
itself runs under callgrind (a server of its own) while `play --driver jack` (not under
valgrind) plays on it, its counters zeroed once the client runs and dumped LONG seconds later:
the server's instructions a period (cycles counted by its calls of CycleTakeBeginTime), with
the client and, as the baseline, with no client. Run by Benchmarks/jack/run.sh.
Usage: bench.py COUNTED_BIN OUT SHORT LONG PERIOD"""
import glob
import os
import re
import subprocess
import sys
import time

COUNTED, OUT = sys.argv[1], sys.argv[2]
SHORT, LONG, PERIOD = float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
RACK = "racks/default.json"
RENDER = re.compile(r"10RackPlayerC6render10frameCount")  # StageCore.RackPlayer.render(frameCount:input:output:)


def play_args(backend):
    base = [COUNTED, "play", RACK, "--no-config", "--period", str(PERIOD)]
    if backend == "alsa":
        return base + ["--playback", "null", "--capture", "null"]
    return base + ["--driver", "jack", "--jack-outputs", "system:playback_", "--jack-inputs", "system:capture_"]


def run(backend, seconds):
    prefix = os.path.join(OUT, "callgrind-%s-%g" % (backend, seconds))
    for old in glob.glob(prefix + "*"):
        os.remove(old)
    log = open(os.path.join(OUT, "play-%s-%g.log" % (backend, seconds)), "w")
    # --duration for ALSA counts frames; JACK's clock is the server's, so stopped by time too.
    p = subprocess.Popen(["valgrind", "--tool=callgrind", "--separate-threads=yes", "--callgrind-out-file=" + prefix]
                         + play_args(backend) + ["--duration", str(seconds)], stdout=log, stderr=subprocess.STDOUT)
    p.wait(900)
    if p.returncode != 0:
        raise SystemExit("%s run failed:\n%s" % (backend, open(log.name).read()[-2000:]))
    return glob.glob(prefix + "-*")


def thread_figures(files):
    """(thread instructions, render inclusive instructions, render calls) of the render thread."""
    for path in files:
        text = open(path).read()
        # A name is given once, at its id's first use (name compression); later uses give the id.
        render_ids = {i for i, n in re.findall(r"^c?fn=\((\d+)\) (.*)$", text, re.M) if RENDER.search(n)}
        if not render_ids:
            continue
        total = int(re.search(r"^(?:summary|totals): (\d+)", text, re.M).group(1))
        # A call line "calls=N ..." follows its "cfn=(id)"; the next line is the inclusive cost.
        calls = inclusive = 0
        lines = text.splitlines()
        cfn = None
        for k, line in enumerate(lines):
            m = re.match(r"^cfn=\((\d+)\)", line)
            if m:
                cfn = m.group(1)
                continue
            m = re.match(r"^calls=(\d+)", line)
            if m and cfn in render_ids:
                calls += int(m.group(1))
                inclusive += int(lines[k + 1].split()[1])  # "position cost"
        return total, inclusive, calls
    raise SystemExit("no thread called RackPlayer.render in " + ", ".join(files))


def server_cost(with_client):
    """jackd's instructions a period over LONG seconds, with `play --driver jack` or alone."""
    # a fixed name: jackd reclaims a killed run's registry entry only under its own name
    name = "stagerack-bench-server-%d" % with_client
    env = dict(os.environ, JACK_DEFAULT_SERVER=name, JACK_NO_AUDIO_RESERVATION="1")
    out = os.path.join(OUT, "callgrind-jackd-%s" % ("client" if with_client else "alone"))
    for old in glob.glob(out + "*"):
        os.remove(old)
    server = subprocess.Popen(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, "jackd", "-n", name,
                               "-d", "dummy", "-r", "48000", "-p", str(PERIOD)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = None
    try:
        subprocess.run(["jack_wait", "-w", "-t", "60"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        if with_client:
            log_path = os.path.join(OUT, "play-on-counted-server.log")
            client = subprocess.Popen([COUNTED] + play_args("jack")[1:] + ["--duration", str(LONG + 60)], env=env,
                                      stdout=subprocess.DEVNULL, stderr=open(log_path, "w"))
            deadline = time.time() + 30
            while "info: running" not in open(log_path).read():
                if time.time() > deadline or client.poll() is not None:
                    raise SystemExit("play on the counted server never ran:\n" + open(log_path).read()[-2000:])
                time.sleep(0.05)
        ctl = ["callgrind_control"]
        subprocess.run(ctl + ["-z", str(server.pid)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(LONG)
        subprocess.run(ctl + ["-d", str(server.pid)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        if client:
            client.terminate()
            client.wait(30)
        server.terminate()
        server.wait(60)
    dumps = sorted(glob.glob(out + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]))
    if not dumps:
        raise SystemExit("jackd under callgrind left no dump in " + OUT)
    text = open(dumps[0]).read()
    total = int(re.search(r"^summary: (\d+)", text, re.M).group(1))
    ids = {i for i, n in re.findall(r"^c?fn=\((\d+)\) (.*)$", text, re.M) if "CycleTakeBeginTime" in n}
    cycles = 0
    cfn = None
    for line in text.splitlines():
        m = re.match(r"^cfn=\((\d+)\)", line)
        if m:
            cfn = m.group(1)
            continue
        m = re.match(r"^calls=(\d+)", line)
        if m and cfn in ids:
            cycles += int(m.group(1))
    if cycles == 0:
        raise SystemExit("no server cycle counted in " + dumps[0])
    return total / cycles, cycles


results = {}
for backend in ["alsa", "jack"]:
    short = thread_figures(run(backend, SHORT))
    long = thread_figures(run(backend, LONG))
    periods = long[2] - short[2]
    overhead = ((long[0] - long[1]) - (short[0] - short[1])) / periods
    render = (long[1] - short[1]) / periods
    results[backend] = overhead
    print("bench-jack: %-4s %d periods of %d frames between the runs: %.0f instructions a period outside the render,"
          " the render %.0f" % (backend, periods, PERIOD, overhead, render), flush=True)
print("bench-jack: per-period overhead in the render thread, JACK / ALSA: %.3f (%+.0f instructions a period)"
      % (results["jack"] / results["alsa"], results["jack"] - results["alsa"]), flush=True)
alone, alone_cycles = server_cost(False)
served, served_cycles = server_cost(True)
print("bench-jack: jackd (dummy driver) a period: %.0f instructions with StageRack's client (%d cycles), %.0f alone (%d cycles)"
      % (served, served_cycles, alone, alone_cycles))
print("bench-jack: per-period overhead with the server, JACK (client + jackd) / ALSA: %.3f (%.0f against %.0f instructions)"
      % ((results["jack"] + served) / results["alsa"], results["jack"] + served, results["alsa"]))
