#!/usr/bin/env bash
# A report, not a test (not in `make e2e`): snd-aloop as a clock in the VM, the ground
# under `drift.sh`. Cable 1 is set 100 ppm fast ("PCM Rate Shift 100000" = 100010, as
# drift.sh does); `probes/aloop-pair.c` (built here with gcc) captures cable 1 and plays
# cable 0 for E2E_ALOOP_SECONDS (60) and prints both positions at each capture wake-up;
# this prints, per 10 s, the capture cable's rate against the playback cable's and the
# spread of the backlog (captured − played) within it, then the whole run's rate.
#   Tests/e2e/aloop-clock.sh        on the host: builds the probe, boots the VM, runs itself
set -euo pipefail
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)

if [[ ${E2E_IN_VM:-} != 1 ]]; then
    mkdir -p "$REPO/.build/vm"
    gcc -O2 -o "$REPO/.build/vm/aloop-pair" "$SCRIPT_DIR/probes/aloop-pair.c" -lasound
    E2E_SKIP_BUILD=1
    source "$SCRIPT_DIR/host.sh"
    run_in_vm aloop 20 "$SCRIPT_DIR/aloop-clock.sh" "$@"
fi

WORK=${E2E_SHARE:-/tmp}/aloop
mkdir -p "$WORK"
exec >"$WORK/log" 2>&1
amixer -q -c Loopback cset "iface=PCM,name=PCM Rate Shift 100000,device=0,subdevice=1" 100010
amixer -q -c Loopback cset "iface=PCM,name=PCM Rate Shift 100000,device=1,subdevice=1" 100010
# Something plays into cable 1 (as the tone does in drift.sh): its playback side open.
aplay -q -D plughw:Loopback,0,1 -f S16_LE -c 2 -r 48000 -d "$(( ${E2E_ALOOP_SECONDS:-60} + 10 ))" /dev/zero 2>"$WORK/aplay.err" &
APLAY=$!
sleep 1
"$REPO/.build/vm/aloop-pair" "${E2E_ALOOP_SECONDS:-60}" >"$WORK/positions.txt" || echo "the probe stopped early (status $?)"
kill $APLAY 2>/dev/null || true
python3 -S - "$WORK/positions.txt" <<'PY'
import sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if "xrun" not in l]
end = rows[-1][0] / 1e9
for w in range(0, int(end), 10):
    sub = [r for r in rows if w * 1e9 <= r[0] < (w + 10) * 1e9]
    if len(sub) < 2:
        continue
    a, b = sub[0], sub[-1]
    print("%3d-%3d s: capture %+5.0f ppm against playback, backlog %d to %d frames"
          % (w, w + 10, ((b[1] - a[1]) / (b[2] - a[2]) - 1) * 1e6, min(r[1] - r[2] for r in sub), max(r[1] - r[2] for r in sub)))
a, b = rows[len(rows) // 10], rows[-1]
print("whole run after the first tenth: capture %+.1f ppm against playback (%d wake-ups)" % (((b[1] - a[1]) / (b[2] - a[2]) - 1) * 1e6, len(rows)))
PY
echo "report only" >"$WORK/summary"
