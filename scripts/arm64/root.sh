#!/usr/bin/env bash
# scripts/arm64/root.sh [build|base]: makes (or reuses) a Debian 13 "trixie" arm64 root, prints
# its path. `build` (the default): make check-arm64's, with Debian's Swift and the -dev packages
# (scripts/arm64/root.packages, .build/arm64-root). `base`: a bare trixie with systemd, where
# make deb-test ARCH=arm64 installs the package with apt under emulation
# (scripts/arm64/base.packages, .build/arm64-base).
# mmdebstrap --variant=extract unpacks the packages of the list (and their dependencies)
# natively: no emulated second stage (debootstrap's crawls under qemu), no maintainer scripts;
# scripts/arm64/configure-root.sh then sets up what must run (ld.so.cache, the swift link, dpkg's
# database). Cached; made again when the package list, the mirror or ROOT_FORMAT changes (a
# hash in its stamp) or when it is broken (no stamp). Built under a .new name, moved in place
# only when complete. Needs root (mmdebstrap --mode=root).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/trixie/lib.sh  # trixie_remove
. scripts/arm64/lib.sh   # in_arm64 (ldconfig under emulation)
flavour=${1:-build}
case $flavour in
  build) list=scripts/arm64/root.packages; root=$PWD/.build/arm64-root; ready=usr/libexec/swift/bin/swift-frontend ;;
  base) list=scripts/arm64/base.packages; root=$PWD/.build/arm64-base; ready=usr/bin/apt-get ;;
  *) echo "arm64 root: no flavour '$flavour' (build or base)" >&2; exit 2 ;;
esac
MIRROR=${TRIXIE_MIRROR:-http://deb.debian.org/debian}
# Bump when the way the root is made changes (mmdebstrap options, configure-root.sh).
ROOT_FORMAT=1
key=$( { grep -v '^\s*#' "$list"; echo "$MIRROR arm64 format $ROOT_FORMAT"; } | sha256sum | cut -c1-16)
stamp=$root/.stagerack-root
packages=$(grep -v '^\s*#' "$list" | sed 's/#.*//' | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
if [[ -f $stamp && $(head -1 "$stamp") == "$key" && -x $root/$ready ]]; then
  echo "$root"; exit 0
fi
[[ $(id -u) -eq 0 ]] || { echo "arm64 root: making $root needs root (mmdebstrap --mode=root); run as root" >&2; exit 2; }
command -v mmdebstrap >/dev/null || { echo "arm64 root: mmdebstrap is missing: apt-get install mmdebstrap" >&2; exit 2; }
arm64_tools
if ! curl -fsS -o /dev/null --max-time 20 "$MIRROR/dists/trixie/Release"; then
  echo "arm64 root: the Debian archive ($MIRROR/dists/trixie/Release) is not reachable: no network to make $root" >&2
  exit 2
fi
[[ -e $root ]] && echo "arm64 root: $root is stale or broken: making it again" >&2
trixie_remove "$root.new"
trap 'trixie_remove "$root.new"' EXIT INT TERM  # an interrupted mmdebstrap may leave mounts in it
start=$(date +%s)
echo "arm64 root: mmdebstrap --arch=arm64 --variant=extract trixie into $root ..." >&2
# The merged-/usr symlinks (/bin -> usr/bin, ...) as debootstrap makes them: the extract
# variant runs no usrmerge. The .debs are kept (/var/cache/apt/archives): configure-root.sh
# records them in dpkg's database, so dpkg-shlibdeps and dpkg-query work in the root.
if ! DEBIAN_FRONTEND=noninteractive mmdebstrap --mode=root --variant=extract --architectures=arm64 --quiet \
     --include="$packages" --skip=cleanup/apt/lists --skip=cleanup/apt/cache \
     --setup-hook=/usr/share/mmdebstrap/hooks/merged-usr/setup00.sh \
     --aptopt='Acquire::Retries "3"' \
     trixie "$root.new" "$MIRROR" >&2; then
  trixie_remove "$root.new"
  echo "arm64 root: mmdebstrap failed (see above); nothing was kept" >&2; exit 1
fi
if [[ $flavour == base ]]; then
  # A bare system as a fresh install leaves it: every package configured by its own
  # maintainer scripts (dpkg --configure -a under emulation, as debootstrap's second stage).
  ARM64_STATUS=unpacked scripts/arm64/configure-root.sh "$root.new" >&2
  second_stage() {
    # base-passwd's preinst (preinsts are not run here): the system's users and groups, which
    # base-files' postinst needs (root:mail)
    cp "$root.new/usr/share/base-passwd/passwd.master" "$root.new/etc/passwd"
    cp "$root.new/usr/share/base-passwd/group.master" "$root.new/etc/group"
    mount -t proc proc "$root.new/proc" && mount --bind /dev "$root.new/dev" && mount --bind /sys "$root.new/sys" || return 1
    # systemd-tmpfiles (boot-time directories, run by systemd's and dbus's maintainer scripts)
    # crashes Debian 12's proot 5.1 itself (an empty path, AT_EMPTY_PATH: "compare_paths2:
    # Assertion `length2 > 0' failed"): diverted to true in this test root; the package under
    # test ships no tmpfiles.d.
    ARM64_TIMEOUT=1800 in_arm64_chroot "$root.new" 'ldconfig && dpkg-divert --local --rename --divert /usr/bin/systemd-tmpfiles.real --add /usr/bin/systemd-tmpfiles && ln -s /bin/true /usr/bin/systemd-tmpfiles && dpkg --configure -a' >"$root.new.log" 2>&1
    local rc=$?
    umount -l "$root.new/proc" "$root.new/dev" "$root.new/sys"
    return $rc
  }
  second_stage || { tail -20 "$root.new.log" >&2; trixie_remove "$root.new"; echo "arm64 root: dpkg --configure -a under emulation failed (above; $root.new.log)" >&2; exit 1; }
else
  scripts/arm64/configure-root.sh "$root.new" >&2
  # The loader's cache, made by the root's own ldconfig under emulation (a few seconds).
  ARM64_TIMEOUT=300 in_arm64 "$root.new" ldconfig >&2 || { trixie_remove "$root.new"; echo "arm64 root: ldconfig under emulation failed (above)" >&2; exit 1; }
fi
printf '%s\npackages: %s\nsource: %s\n' "$key" "$packages" "$MIRROR arm64 format $ROOT_FORMAT" > "$root.new/.stagerack-root"
trixie_remove "$root"; mv "$root.new" "$root"
trap - EXIT INT TERM
echo "arm64 root: made in $(( $(date +%s) - start )) s, $(du -sxh "$root" | cut -f1)" >&2
echo "$root"
