#!/usr/bin/env bash
# make deb ARCH=arm64 on an x86_64 host (scripts/make-deb.sh runs it as root): the arm64
# package from the emulated arm64 root (scripts/arm64/root.sh, as make check-arm64 uses):
#   - the release build under emulation (scripts/arm64/build.sh: the same build folder and
#     link flags as check-arm64, so one build serves both; make deb's build ID and full RELRO);
#   - `stagerack install-service --root` run there (the arm64 binary lays the tree out, as
#     for amd64), into ROOT/tmp/deb;
#   - the rest natively (scripts/deb/build-in-root.sh with DEB_LAID_OUT): debug info split
#     with aarch64-linux-gnu-objcopy, Depends from the host's dpkg-shlibdeps run in a proot
#     that shows the root's libraries at their own paths and reads the root's dpkg database
#     (configure-root.sh wrote it from the unpacked .debs), dpkg-deb.
# Output: ROOT/tmp/deb/out/*.deb (make-deb.sh checks and delivers them).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/arm64/lib.sh
root=${1:?usage: scripts/deb/build-arm64.sh ARM64_ROOT}
arm64_tools
command -v aarch64-linux-gnu-objcopy >/dev/null || { echo "make deb ARCH=arm64: aarch64-linux-gnu-objcopy is missing: apt-get install binutils-aarch64-linux-gnu" >&2; exit 2; }
command -v dpkg-shlibdeps >/dev/null || { echo "make deb ARCH=arm64: dpkg-shlibdeps is missing: apt-get install dpkg-dev" >&2; exit 2; }
scripts/arm64/build.sh "$root"
ARM64_TIMEOUT=900 in_arm64 "$root" 'rm -rf /tmp/deb && mkdir -p /tmp/deb && /work/build/release/stagerack install-service --root /tmp/deb/stagerack --prefix /usr --source /work/stagerack --no-enable > /tmp/deb/install.log'
shlibdeps=$ARM64_TOOLS/dpkg-shlibdeps-arm64
cat > "$shlibdeps" <<SH
#!/bin/sh
# dpkg-shlibdeps for the arm64 root $root: its libraries and its Swift runtime seen at their own
# paths, its dpkg database as the admin dir (proot binds; the seccomp launcher for statx).
exec "$ARM64_TOOLS/proot-launch" proot -b "$root/usr/lib/aarch64-linux-gnu:/usr/lib/aarch64-linux-gnu" \\
  -b "$root/usr/libexec/swift:/usr/libexec/swift" -b "$root/var/lib/dpkg:/var/lib/arm64-dpkg" \\
  dpkg-shlibdeps --admindir=/var/lib/arm64-dpkg -l/usr/lib/aarch64-linux-gnu "\$@"
SH
chmod +x "$shlibdeps"
# help2man runs the binary (--help, --version, each command's --help): a wrapper named like it
# that runs the arm64 one in the root under emulation.
mkdir -p "$ARM64_TOOLS/man-bin"
cat > "$ARM64_TOOLS/man-bin/stagerack" <<SH
#!/bin/sh
# the arm64 stagerack of $root, under proot + qemu-aarch64-static (make deb ARCH=arm64's manual page)
exec "$ARM64_TOOLS/proot-launch" proot -q qemu-aarch64-static -r "$root" -b /dev -b /proc -b /sys -w / \
  /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb /work/build/release/stagerack "\$@"
SH
chmod +x "$ARM64_TOOLS/man-bin/stagerack"
swift_version=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Version}' swiftlang | sed 's/[+~-].*//')
DEB_MAN_BINARY=$ARM64_TOOLS/man-bin/stagerack DEB_LAID_OUT=$root/tmp/deb DEB_ARCH=arm64 DEB_SOURCE=$PWD DEB_CROSS=aarch64-linux-gnu- \
  DEB_ADMINDIR=$root/var/lib/dpkg DEB_SHLIBDEPS=$shlibdeps DEB_SWIFT_VERSION=$swift_version \
  scripts/deb/build-in-root.sh
