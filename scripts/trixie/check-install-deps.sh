#!/usr/bin/env bash
# scripts/install-deps.sh on a fresh Debian 13 without Swift (a throw-away overlay on the bare
# root .build/trixie-base): it must say it installs swiftlang from apt, install it and the
# project's packages, and leave a working Swift 6.0 compiler. Downloads ~580 MB. Run as root.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/trixie/lib.sh
[[ $(id -u) -eq 0 ]] || { echo "check-install-deps: needs root (chroot)" >&2; exit 2; }
trap 'trixie_fresh_cleanup' EXIT INT TERM
t0=$(date +%s)
base=$(scripts/trixie/root.sh base)
fresh_copy "$base"
trixie_mount "$FRESH"
mkdir -p "$FRESH/work/stagerack/scripts"; cp scripts/install-deps.sh "$FRESH/work/stagerack/scripts/"
in_root "$FRESH" 'command -v swift || [ -x /usr/libexec/swift/bin/swift ] && { echo "the base root has Swift already"; exit 1; }
  cd /work/stagerack && env PATH=/usr/sbin:/usr/bin:/sbin:/bin scripts/install-deps.sh 2>&1 | grep -Ei "swift|installing|error|^E:" | grep -v "^Selecting\|^Preparing\|^Unpacking\|^Setting up\|^Processing" | tail -8
  /usr/libexec/swift/bin/swift --version 2>&1 | head -1 | grep -q "version 6.0" || { echo "no Swift 6.0 after install-deps"; exit 1; }
  echo "swift after install-deps: $(/usr/libexec/swift/bin/swift --version 2>&1 | head -1)"
  env PATH=/usr/sbin:/usr/bin:/sbin:/bin:/usr/libexec/swift/bin scripts/install-deps.sh && echo "second run: nothing to install"' | tee /tmp/stagerack-install-deps.log
grep -q "no swift found: installing Debian's swiftlang" /tmp/stagerack-install-deps.log || { echo "check-install-deps: it did not say it installs swiftlang" >&2; exit 1; }
echo "check-install-deps: passed in $(( $(date +%s) - t0 )) s" >&2
