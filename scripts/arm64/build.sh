#!/usr/bin/env bash
# scripts/arm64/build.sh ROOT [tests]: the stagerack release build for aarch64 with Debian's
# swiftlang, in the arm64 root under proot + qemu-aarch64-static (scripts/arm64/lib.sh), niced.
# The source is synced into ROOT/work/stagerack (rsync: unchanged files keep their inode and
# mtime, so a second run is incremental; ARM64_SYNCED=1 skips it, for a second build started
# beside the first); the build folder ROOT/work/build stays between runs.
# With `tests`: every module and the test targets (`--build-tests`, -enable-testing, so a build
# of its own) in ROOT/work/build-tests, logged in .build/check-arm64/build-tests.log.
# The link flags are make deb's (lld, build ID, full RELRO) and -z separate-code: with GNU ld
# and without it the aarch64 link put code and data in one LOAD segment with RWX permissions,
# and GNU ld made no GNU_RELRO segment at all (Swift 6.0.3 flags some .rodata writable);
# lld keeps a GNU_RELRO segment (readelf -lW on the result is checked by check-arm64). The whole log: .build/check-arm64/build.log.
# ARM64_BUILD_TIMEOUT (s, default 5400): the watchdog (a first attempt hung on a futex).
# ARM64_JOBS (default 2): swift build -j.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/arm64/lib.sh
ARM64_LINK_FLAGS="-Xswiftc -use-ld=lld -Xlinker --build-id=sha1 -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now -Xlinker -z -Xlinker separate-code"
root=${1:?usage: scripts/arm64/build.sh ROOT [tests]}
if [[ ${2:-} == tests ]]; then
  log=.build/check-arm64/build-tests.log
  what="--build-tests --scratch-path /work/build-tests"
else
  log=.build/check-arm64/build.log
  what="--product stagerack $ARM64_LINK_FLAGS --scratch-path /work/build"
fi
mkdir -p .build/check-arm64 "$root/work/stagerack"
arm64_tools
[[ ${ARM64_SYNCED:-} == 1 ]] || arm64_sync_source "$root"

# qemu-user (Debian 12's 7.2) now and then deadlocks a child that swift-build has just
# forked (a posix_spawn that qemu turns into a fork): the child waits on a futex forever and
# never execs; the build waits with it. Such a child -- a qemu process of this build whose
# command line is still its parent's, over STUCK_AFTER seconds old -- is killed; the build
# is then cancelled and run again (incremental: only what was not finished is compiled).
STUCK_AFTER=${ARM64_STUCK_AFTER:-120}
# Both read the process table with ps, never by a name or /proc/PID/stat's fields: a forked
# child carries the name of the thread that forked it (swift-build names its threads, so the
# stuck child was not called qemu-aarch64-static and `ps -C` missed it), and a name with a
# space shifts stat's fields.
descends_from() {  # PID ANCESTOR
  local p=$1
  while [[ -n $p && $p -gt 1 ]]; do
    [[ $p == "$2" ]] && return 0
    p=$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ') || return 1
  done
  return 1
}
kill_stuck_children() {  # ANCESTOR: prints how many it killed
  local n=0 pid ppid age
  while read -r pid ppid age; do
    [[ $age -ge $STUCK_AFTER ]] || continue
    [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == */qemu-aarch64-static ]] || continue
    [[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == "$(tr '\0' ' ' <"/proc/$ppid/cmdline" 2>/dev/null)" ]] || continue
    descends_from "$ppid" "$1" || continue
    echo "   $(date -u +%H:%M:%S) a forked child (pid $pid) stuck for ${age} s before its exec ($(cat "/proc/$pid/wchan" 2>/dev/null)): killed, the build is run again" >&2
    kill -9 "$pid" 2>/dev/null && n=$((n + 1))
  done < <(ps -e -o pid=,ppid=,etimes= 2>/dev/null)
  echo $n
}

attempts=${ARM64_BUILD_ATTEMPTS:-6}
: > "$log"
rc=1
for ((attempt = 1; attempt <= attempts; attempt++)); do
  echo "== attempt $attempt, $(date -u +%H:%M:%S)" >> "$log"
  ARM64_TIMEOUT=${ARM64_BUILD_TIMEOUT:-5400} ARM64_NICE=10 in_arm64 "$root" \
    "cd /work/stagerack && swift build -c release -j ${ARM64_JOBS:-2} $what" \
    >> "$log" 2>&1 &
  pid=$!
  killed=0 last=""
  # progress on the terminal: the compile steps ([N/M]) as they come, once a minute at most
  while kill -0 $pid 2>/dev/null; do
    for _ in 1 2 3 4 5 6; do sleep 10; kill -0 $pid 2>/dev/null || break; done
    k=$(kill_stuck_children "$pid"); killed=$((killed + k))
    p=$(grep -o '^\[[0-9]*/[0-9]*\][^(]*' "$log" 2>/dev/null | tail -1 | cut -c1-100 || true)
    [[ -n $p && $p != "$last" ]] && echo "   $(date -u +%H:%M:%S) ${2:+$2: }$p" >&2
    last=$p
  done
  rc=0; wait $pid || rc=$?
  ((rc == 0)) && break
  ((killed > 0)) || break   # a real failure (or the watchdog): not tried again
done
grep -E "error:|warning: .*(RWX|LOAD)|complete!|cancelled!|^== attempt" "$log" | sort -u | tail -20 >&2 || true
exit $rc
