"""The render thread's cost with Ableton Link versus without, in callgrind instruction counts
of the render path (RackPlayer.render and all it calls, on the audio thread): `play` (the
default rack, null devices, 64-frame periods) runs under callgrind twice in one sitting, once
plain and once with `--link` while a second `play --link` (not under valgrind) shares the
session, so every block reads a shared session, and a third time as a sync follower
(`--link --sync follower`) of that peer as its leader (`--sync leader`: a state message
every second, each verified and answered off the render thread). Printed: instructions per rendered block in
each run and their ratio, and the blocks counted. Run by Benchmarks/link/run.sh."""
import os
import re
import subprocess
import sys
import time

COUNTED, BIN, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
SECONDS = float(sys.argv[4]) if len(sys.argv) > 4 else 3.0
RENDER = "*10RackPlayerC6render10frameCount*"  # StageCore.RackPlayer.render(frameCount:input:output:), mangled
PLAY = ["play", "racks/default.json", "--playback", "null", "--capture", "null", "--period", "64", "--no-config"]


def run(kind):
    out = os.path.join(OUT, "callgrind-%s.out" % kind)
    log_path = os.path.join(OUT, "play-%s.log" % kind)
    peer = None
    extra = []
    os.environ["STAGERACK_SYNC_KEY"] = "the benchmark's long shared secret"
    if kind in ("link", "sync"):
        extra = ["--link", "--status"]
        lead = []
        if kind == "sync":
            extra += ["--sync", "follower", "--sync-port", "9731"]
            lead = ["--sync", "leader", "--sync-followers", "127.0.0.1:9731", "--sync-port", "9730"]
        peer = subprocess.Popen([BIN] + PLAY + ["--link", "--duration", "600"] + lead, stdout=subprocess.DEVNULL,
                                stderr=open(os.path.join(OUT, "peer-%s.log" % kind), "w"))
    p = subprocess.Popen(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, "--toggle-collect=" + RENDER,
                          COUNTED] + PLAY + ["--duration", str(SECONDS)] + extra,
                         stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
    p.wait(600)
    if peer:
        peer.terminate()
        peer.wait(30)
        if "link 1 peer" not in open(log_path).read():
            raise SystemExit("the Link run never shared its session:\n" + open(log_path).read()[-2000:])
        if kind == "sync" and "sync: following the leader" not in open(log_path).read():
            raise SystemExit("the sync run never heard its leader:\n" + open(log_path).read()[-2000:])
    return out


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
for kind in ["plain", "link", "sync"]:
    total, blocks = instructions_and_blocks(run(kind))
    results[kind] = total / max(blocks, 1)
    print("bench-link: %-5s %d blocks rendered, %.0f instructions per block (render path)" % (kind, blocks, results[kind]), flush=True)
print("bench-link: render path with Link (a shared session) / without: %.4f (%+.0f instructions a block)"
      % (results["link"] / results["plain"], results["link"] - results["plain"]))
print("bench-link: render path as a sync follower / with Link alone: %.4f (%+.0f instructions a block)"
      % (results["sync"] / results["link"], results["sync"] - results["link"]))
