#!/usr/bin/env bash
# scripts/arm64/build.sh ROOT: the stagerack release build for aarch64 with Debian's swiftlang,
# in the arm64 root under proot + qemu-aarch64-static (scripts/arm64/lib.sh), niced. The source
# is synced into ROOT/work/stagerack (rsync: unchanged files keep their inode and mtime, so a
# second run is incremental); the build folder ROOT/work/build stays between runs.
# The link flags are make deb's (build ID, full RELRO) and -z separate-code: without it the
# aarch64 link puts code and data in one LOAD segment with RWX permissions (the linker warns;
# readelf -lW on the result is checked by check-arm64). The whole log: .build/check-arm64/build.log.
# ARM64_BUILD_TIMEOUT (s, default 5400): the watchdog (a first attempt hung on a futex).
# ARM64_JOBS (default 2): swift build -j.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/arm64/lib.sh
root=${1:?usage: scripts/arm64/build.sh ROOT}
log=.build/check-arm64/build.log
mkdir -p .build/check-arm64 "$root/work/stagerack"
arm64_tools
command -v rsync >/dev/null || { echo "arm64: rsync is missing: apt-get install rsync" >&2; exit 2; }
git ls-files -co --exclude-standard | rsync -a --delete-missing-args --files-from=- ./ "$root/work/stagerack/"
ARM64_LINK_FLAGS="-Xlinker --build-id=sha1 -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now -Xlinker -z -Xlinker separate-code"
ARM64_TIMEOUT=${ARM64_BUILD_TIMEOUT:-5400} ARM64_NICE=10 in_arm64 "$root" \
  "cd /work/stagerack && swift build -c release --product stagerack -j ${ARM64_JOBS:-2} $ARM64_LINK_FLAGS --scratch-path /work/build" \
  > "$log" 2>&1 &
pid=$!
# progress on the terminal: the compile steps ([N/M]) as they come, at most once a minute
while kill -0 $pid 2>/dev/null; do
  sleep 60
  p=$(grep -o '^\[[0-9]*/[0-9]*\][^(]*' "$log" 2>/dev/null | tail -1 | cut -c1-100 || true)
  [[ -n $p ]] && echo "   $(date -u +%H:%M:%S) $p" >&2
done
rc=0; wait $pid || rc=$?
grep -E "error:|warning: .*(RWX|LOAD)|Build complete|Compiling|Linking" "$log" | grep -v '^\[' | sort -u | tail -20 >&2 || true
exit $rc
