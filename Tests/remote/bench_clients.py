"""Render load with eight scripted WebSocket clients subscribed to the meters versus none,
side by side in one run of `play` (the default rack on null devices, 64-frame periods,
--status): phases of 6 s alternate none / eight clients / none / eight clients, and the
median of the per-second render loads (the highest render time over the period time in
each second) of each kind is compared. A report, not a bound (the machine is shared);
the check is that every client gets its meters 10-20 times a second (20 on an idle
machine; the main thread publishes them every 50 ms). The repeatable figure, the render
path's callgrind instructions with and without the clients, is Benchmarks/remote/run.sh."""
import json
import os
import re
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Play, check, finish, free_port  # noqa: E402

import warnings  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

warnings.simplefilter("ignore", DeprecationWarning)  # connect() outside a `with`: closed by hand

PHASE = 6.0
port = free_port(socket.SOCK_STREAM)
play = Play(["racks/default.json", "--playback", "null", "--capture", "null", "--period", "64", "--status",
             "--web", "127.0.0.1:%d" % port], env={"STAGERACK_WEB_PIN": "1234", "STAGERACK_WEB_CLIENTS": "8"},
            wait_text="running")
phases = []  # (kind, start, end) in seconds since the epoch
counts = []


def client(stop, out):
    c = connect("ws://127.0.0.1:%d/" % port, origin="http://127.0.0.1:%d" % port, open_timeout=5)
    c.send(json.dumps({"type": "meters", "on": True}))
    n = 0
    start = time.time()
    while not stop.is_set():
        try:
            m = c.recv(timeout=0.2)
        except TimeoutError:
            continue
        if '"meters"' in m:
            n += 1
    out.append(n / (time.time() - start))
    c.close()


def thread_cpu(name):
    """CPU seconds used so far by the thread of `play` named `name` (from /proc)."""
    total = 0.0
    task = "/proc/%d/task" % play.proc.pid
    for tid in os.listdir(task):
        try:
            with open("%s/%s/comm" % (task, tid)) as f:
                if f.read().strip() != name:
                    continue
            with open("%s/%s/stat" % (task, tid)) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            continue
    return total


web_cpu = {"none": 0.0, "eight": 0.0}
web_time = {"none": 0.0, "eight": 0.0}


def run_phase(kind):
    cpu0 = thread_cpu("stagerack-web")
    stop = threading.Event()
    threads = []
    rates = []
    if kind == "eight":
        for _ in range(8):
            t = threading.Thread(target=client, args=(stop, rates))
            t.start()
            threads.append(t)
    t0 = time.time()
    time.sleep(PHASE)
    stop.set()
    for t in threads:
        t.join(5)
    phases.append((kind, t0, time.time()))
    web_cpu[kind] += thread_cpu("stagerack-web") - cpu0
    web_time[kind] += time.time() - t0
    if rates:
        counts.extend(rates)


time.sleep(2)  # the first seconds (start-up) are not measured
log_start = len(play.text().splitlines())
line_times = []
stamps = threading.Event()


def stamp_lines():
    seen = log_start
    while not stamps.is_set():
        lines = play.text().splitlines()
        for line in lines[seen:]:
            m = re.search(r"load (\d+)%", line)
            if m:
                line_times.append((time.time(), int(m.group(1))))
        seen = len(lines)
        time.sleep(0.05)


watcher = threading.Thread(target=stamp_lines)
watcher.start()
for kind in ["none", "eight", "none", "eight", "none", "eight"]:
    run_phase(kind)
stamps.set()
watcher.join()
play.stop()


def loads(kind):
    out = []
    for k, t0, t1 in phases:
        if k == kind:
            out += [load for t, load in line_times if t0 + 1.2 <= t <= t1]  # a line covers the second before it
    return out


none, eight = loads("none"), loads("eight")


def report():
    assert none and eight, "no status lines (%d, %d)" % (len(none), len(eight))
    a, b = statistics.median(none), statistics.median(eight)
    ratio = b / a if a > 0 else float("nan")
    print("bench: render load per second (max over the second), median: none %.1f %% (%d s), eight clients %.1f %% (%d s), ratio %.2f"
          % (a, len(none), b, len(eight), ratio))
    print("bench: meters per second per client: %s" % ", ".join("%.1f" % r for r in counts))
    print("bench: the web thread's CPU: none %.2f %%, eight clients %.2f %% of one core"
          % (100 * web_cpu["none"] / web_time["none"], 100 * web_cpu["eight"] / web_time["eight"]))


def meters_rate():
    assert len(counts) == 24, "clients: %d" % len(counts)
    assert all(10 <= r <= 21 for r in counts), counts


check("bench: render load with eight meter clients vs none (report)", report)
check("bench: every client gets its meters 10-20 times a second", meters_rate)
sys.exit(finish())
