#!/usr/bin/python3
"""A second JACK client that measures StageRack through the server: it plays a sine on its
port `tone`, records its ports `in_1` and `in_2` once something is connected to both ports
it owns, and prints one JSON line: the tone's frequency and RMS, and each input's frequency
(zero crossings, interpolated) and RMS in dBFS. JACK-Client (python3-jack-client), no numpy.
With ONSET (a sixth argument, 1), the tone starts only once both ports are connected, and
the JSON also gives `onset_frames`: frames from the tone's first sample to the first sample of
in_1 over a tenth of the tone's amplitude (the round trip's latency; Tests/jack/netjack.sh).
Usage: meter.py NAME FREQUENCY AMPLITUDE SECONDS [TIMEOUT [ONSET]]"""
import array
import json
import math
import sys
import threading
import time

import jack

name, frequency, amplitude, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
timeout = float(sys.argv[5]) if len(sys.argv) > 5 else 20.0
measure_onset = len(sys.argv) > 6 and sys.argv[6] == "1"

client = jack.Client(name, no_start_server=True)
rate = client.samplerate
tone = client.outports.register("tone")
ins = [client.inports.register("in_1"), client.inports.register("in_2")]

# Two seconds of the sine, looped in whole periods of the table (phase continuous enough:
# the table holds a whole number of cycles of a frequency rounded to fit it).
table_frames = int(rate * 2)
cycles = round(frequency * table_frames / rate)
played_frequency = cycles * rate / table_frames
table = array.array("f", (amplitude * math.sin(2 * math.pi * cycles * i / table_frames) for i in range(table_frames)))
table_bytes = table.tobytes() * 2
position = 0
recording = False
settle_cycles = 0
wanted = int(seconds * rate)
recorded = [bytearray(), bytearray()]
done = threading.Event()
# ONSET: silent until connected (tone_on), then in_1 kept from the tone's first frame for
# up to a second (onset_buffer), which the onset is found in.
tone_on = not measure_onset
onset_buffer = bytearray()


@client.set_process_callback
def process(frames):
    global position, recording, settle_cycles
    out = memoryview(tone.get_buffer())
    if not tone_on:
        out[:] = bytes(frames * 4)
        return
    out[:] = table_bytes[position * 4:(position + frames) * 4]
    position = (position + frames) % table_frames
    if measure_onset and len(onset_buffer) < rate * 4:
        onset_buffer.extend(bytes(ins[0].get_buffer()))
    if not recording:
        return
    if settle_cycles > 0:  # the rack's gain ramps and the first blocks after connecting
        settle_cycles -= 1
        return
    if len(recorded[0]) < wanted * 4:
        for k in range(2):
            recorded[k] += bytes(ins[k].get_buffer())
    else:
        done.set()


def analyse(samples):
    """Frequency from the median interval between rising zero crossings (interpolated) and
    level from the median RMS of 0.1 s blocks: a cycle the server dropped under load (an
    xrun, counted by StageRack) does not move either."""
    n = len(samples)
    crossings = []
    for i in range(1, n):
        a, b = samples[i - 1], samples[i]
        if a < 0 <= b and b != a:
            crossings.append(i - 1 + (-a) / (b - a))
    intervals = sorted(crossings[i + 1] - crossings[i] for i in range(len(crossings) - 1))
    hz = rate / intervals[len(intervals) // 2] if intervals else 0.0
    block = rate // 10
    levels = sorted(math.sqrt(sum(x * x for x in samples[k:k + block]) / block) for k in range(0, n - block + 1, block))
    rms = levels[len(levels) // 2] if levels else 0.0
    return {"hz": hz, "dbfs": 20 * math.log10(rms) if rms > 0 else -200.0}


with client:
    print("ready", client.name, file=sys.stderr, flush=True)  # active, under this name: its ports can be connected now
    deadline = time.time() + timeout
    while time.time() < deadline:
        if tone.connections and all(p.connections for p in ins):
            break
        time.sleep(0.02)
    else:
        print(json.dumps({"error": "nothing connected to %s's ports in %g s" % (name, timeout)}))
        sys.exit(1)
    connected_from = [p.name for p in ins[0].connections]
    tone_on = True
    settle_cycles = int(0.3 * rate / client.blocksize) + 1
    recording = True
    if not done.wait(seconds + timeout):
        print(json.dumps({"error": "recorded %d of %d frames" % (len(recorded[0]) // 4, wanted)}))
        sys.exit(1)
    channels = [analyse(array.array("f", bytes(r[:wanted * 4]))) for r in recorded]
    tone_dbfs = 20 * math.log10(amplitude / math.sqrt(2))
    extra = {}
    if measure_onset:
        heard = [i for i, x in enumerate(array.array("f", bytes(onset_buffer))) if abs(x) > amplitude * 0.1]
        extra["onset_frames"] = heard[0] if heard else -1
    print(json.dumps({**extra, "rate": rate, "blocksize": client.blocksize, "tone_hz": played_frequency, "tone_dbfs": tone_dbfs,
                      "from": connected_from, "channels": channels}))
