#!/usr/bin/env bash
# `make e2e`: prepares the VM, then runs the scenario, the MIDI layer and the timing report,
# each in a VM of its own (each stops the run when it fails). Prints how long it took, then
# the sum of their "N passed, N failed" lines as its last line.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
passed=0 failed=0 rc=0
Tests/e2e/prepare-vm.sh || { echo "make e2e: the VM could not be prepared"; echo "0 passed, 1 failed"; exit 1; }
for script in scenario midi timing latency drift; do
    out=$(mktemp)
    E2E_SKIP_BUILD=1 "Tests/e2e/$script.sh" | tee "$out"
    status=${PIPESTATUS[0]}
    line=$(tail -n 1 "$out")
    rm -f "$out"
    if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
        passed=$((passed + BASH_REMATCH[1]))
        failed=$((failed + BASH_REMATCH[2]))
    fi
    if ((status != 0)); then
        rc=$status
        ((failed > 0)) || failed=1
        break
    fi
done
echo "make e2e: $(( $(date +%s) - start )) s"
echo "$passed passed, $failed failed"
exit "$rc"
