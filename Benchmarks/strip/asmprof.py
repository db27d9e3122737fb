#!/usr/bin/env python3
"""Per-instruction counts from a callgrind file made with --dump-instr=yes, next to the
disassembly (objdump), for every function with at least 0.5 % of the instructions.

    asmprof.py CALLGRIND_FILE BINARY SAMPLES [FUNCTION_SUBSTRING]

Counts are per sample (divided by SAMPLES): a count of 1.000 is an instruction run once a
sample, 0.062 once per 16-sample segment, 0.016 once per 64-frame block. Self counts
only (the cost lines after a `calls=` line are the callee's, and are skipped)."""
import collections
import re
import subprocess
import sys

path, binary, samples = sys.argv[1], sys.argv[2], float(sys.argv[3])
only = sys.argv[4] if len(sys.argv) > 4 else None
names, counts = {}, collections.defaultdict(collections.Counter)
function, skip, last = None, False, [0, 0]


def position(token, i):
    if token == '*':
        return last[i]
    if token[0] in '+-':
        return last[i] + int(token, 0)
    return int(token, 0)


for line in open(path):
    line = line.rstrip('\n')
    if line.startswith(('fn=', 'cfn=')):
        m = re.match(r'c?fn=\((\d+)\)(?: (.*))?', line)
        if m.group(2):
            names[m.group(1)] = m.group(2)
        if line.startswith('fn='):
            function = names.get(m.group(1), m.group(1))
        continue
    if line.startswith('calls='):
        skip = True
        continue
    if line and line[0] in '0123456789+-*':
        parts = line.split()
        last[0], last[1] = position(parts[0], 0), position(parts[1], 1)
        if skip:
            skip = False
        elif function and len(parts) > 2:
            counts[function][last[0]] += int(parts[2])

total = sum(sum(c.values()) for c in counts.values())
for function, c in sorted(counts.items(), key=lambda kv: -sum(kv[1].values())):
    own = sum(c.values())
    if (only and only not in function) or (not only and own < 0.005 * total):
        continue
    print(f"== {function}: {own / samples:.2f} per sample")
    low, high = min(c), max(c)
    dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn', f'--start-address={low}',
                          f'--stop-address={high + 16}', binary], capture_output=True, text=True).stdout
    for row in dis.splitlines():
        m = re.match(r'\s*([0-9a-f]+):\s*(.*)', row)
        if m and c.get(int(m.group(1), 16)):
            text = re.sub(r'<\$s[^>]*\+(0x[0-9a-f]+)>', r'<+\1>', re.sub(r'\s*#.*', '', m.group(2)))
            print(f"{c[int(m.group(1), 16)] / samples:8.3f}  {m.group(1)}: {text}")
