"""The render thread's cost with eight WebSocket clients taking the meters at 20 Hz versus
none, in callgrind instruction counts of the render path (RackPlayer.render and all it
calls, on the audio thread): `play` (the default rack, null devices, 64-frame periods, the
web page on 127.0.0.1) runs under callgrind twice in one sitting, once with no client and
once with eight logged-in clients with meters on, for the same number of frames. Printed:
instructions per rendered block in each run and their ratio, the blocks counted, and the
meters each client received per second (paced by `play`'s main loop, slowed by valgrind).
Run by Benchmarks/remote/run.sh."""
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

import warnings

from websockets.sync.client import connect

warnings.simplefilter("ignore", DeprecationWarning)  # connect() outside a `with`: closed by hand

BIN = sys.argv[1]
OUT = sys.argv[2]
SECONDS = float(sys.argv[3]) if len(sys.argv) > 3 else 4.0
RENDER = "*10RackPlayerC6render10frameCount*"  # StageCore.RackPlayer.render(frameCount:input:output:), mangled


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def client(port, stop, rates):
    c = connect("ws://127.0.0.1:%d/" % port, origin="http://127.0.0.1:%d" % port, open_timeout=30)
    c.send(json.dumps({"type": "login", "pin": "1234"}))
    c.send(json.dumps({"type": "meters", "on": True}))
    n, start = 0, time.time()
    while not stop.is_set():
        try:
            if '"meters"' in c.recv(timeout=0.2):
                n += 1
        except TimeoutError:
            continue
        except Exception:
            break
    rates.append(n / (time.time() - start))
    c.close()


def run(kind):
    port = free_port()
    out = os.path.join(OUT, "callgrind-%s.out" % kind)
    log = open(os.path.join(OUT, "play-%s.log" % kind), "w")
    env = dict(os.environ, STAGERACK_WEB_PIN="1234", STAGERACK_WEB_CLIENTS="8")
    p = subprocess.Popen(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, "--toggle-collect=" + RENDER,
                          BIN, "play", "racks/default.json", "--playback", "null", "--capture", "null", "--period", "64",
                          "--duration", str(SECONDS), "--web", "127.0.0.1:%d" % port, "--no-config"],
                         stdout=log, stderr=subprocess.STDOUT, env=env)
    path = log.name
    deadline = time.time() + 120
    while "web: open" not in open(path).read():
        if p.poll() is not None or time.time() > deadline:
            raise SystemExit("play did not start:\n" + open(path).read()[-2000:])
        time.sleep(0.1)
    stop, rates, threads = threading.Event(), [], []
    if kind == "eight":
        for _ in range(8):
            t = threading.Thread(target=client, args=(port, stop, rates))
            t.start()
            threads.append(t)
    p.wait(600)
    stop.set()
    for t in threads:
        t.join(10)
    return out, rates


def instructions_and_blocks(path):
    """Instructions collected (inside render, inclusive) and the calls of render."""
    text = open(path).read()
    total = int(re.search(r"^(?:summary|totals): (\d+)", text, re.M).group(1))
    names = dict(re.findall(r"^c?fn=\((\d+)\) (.*)$", text, re.M))
    render_ids = {i for i, n in names.items() if re.search(r"10RackPlayerC6render10frameCount", n)}
    calls = 0
    current_cfn = None
    for line in text.splitlines():
        m = re.match(r"^cfn=\((\d+)\)", line)
        if m:
            current_cfn = m.group(1)
            continue
        m = re.match(r"^calls=(\d+)", line)
        if m and current_cfn in render_ids:
            calls += int(m.group(1))
    return total, calls


results = {}
for kind in ["none", "eight"]:
    out, rates = run(kind)
    total, blocks = instructions_and_blocks(out)
    results[kind] = (total, blocks, rates)
    print("bench-remote: %-5s clients: %d blocks rendered, %.0f instructions per block (render path)%s"
          % ("no" if kind == "none" else "eight", blocks, total / max(blocks, 1),
             "" if not rates else "; meters per second per client: " + ", ".join("%.1f" % r for r in rates)), flush=True)
a = results["none"][0] / max(results["none"][1], 1)
b = results["eight"][0] / max(results["eight"][1], 1)
print("bench-remote: render path with eight meter clients / none: %.4f" % (b / a))
