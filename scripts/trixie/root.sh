#!/usr/bin/env bash
# Makes (or reuses) a Debian 13 "trixie" root with mmdebstrap from the Debian archive.
# Usage: scripts/trixie/root.sh build|base   -> prints the root's path on stdout.
#   build: Debian's swiftlang (6.0.x) and the project's -dev packages (scripts/trixie/build.packages)
#   base:  a bare trixie with systemd (scripts/trixie/base.packages), for the .deb's install test
# The root is cached under .build/trixie-<flavour>; it is made again when its package list,
# the mirror or ROOT_FORMAT changes (a hash stored in the root), or when it is broken (no stamp). A root is
# built under a .new name and moved in place only when complete. Needs root (mmdebstrap --mode=root).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/trixie/lib.sh  # trixie_remove, trixie_mount
flavour=${1:?usage: scripts/trixie/root.sh build|base}
list=scripts/trixie/$flavour.packages
[[ -f $list ]] || { echo "trixie root: no package list $list (flavour build or base)" >&2; exit 2; }
MIRROR=${TRIXIE_MIRROR:-http://deb.debian.org/debian}
root=$PWD/.build/trixie-$flavour
# Bump when the way the root is made changes (mmdebstrap options): the roots are made again.
ROOT_FORMAT=1
key=$( { grep -v '^\s*#' "$list"; echo "$MIRROR format $ROOT_FORMAT"; } | sha256sum | cut -c1-16)
stamp=$root/.stagerack-root

packages=$(grep -v '^\s*#' "$list" | sed 's/#.*//' | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
if [[ -f $stamp && $(head -1 "$stamp") == "$key" && -x $root/usr/bin/apt-get ]]; then
  echo "$root"; exit 0
fi
# Only packages added to the list (same mirror and format): installed into the cached root
# with apt, which keeps its build folder, instead of making the root again.
if [[ -f $stamp && -x $root/usr/bin/apt-get && $(id -u) -eq 0 ]] && old=$(sed -n 's/^packages: //p' "$stamp") && [[ -n $old ]] \
   && [[ $(sed -n 's/^source: //p' "$stamp") == "$MIRROR format $ROOT_FORMAT" ]] \
   && [[ -z $(comm -23 <(tr , '\n' <<<"$old" | sort -u) <(tr , '\n' <<<"$packages" | sort -u)) ]]; then
  added=$(comm -13 <(tr , '\n' <<<"$old" | sort -u) <(tr , '\n' <<<"$packages" | sort -u) | tr '\n' ' ')
  echo "trixie root: adding to $root: $added" >&2
  . scripts/trixie/lib.sh
  trap trixie_umount_all EXIT
  trixie_mount "$root" >&2
  if in_root "$root" "apt-get update -qq && apt-get install -y -q --no-install-recommends $added" >&2; then
    trixie_umount_all
    printf '%s\npackages: %s\nsource: %s\n' "$key" "$packages" "$MIRROR format $ROOT_FORMAT" > "$stamp"
    echo "$root"; exit 0
  fi
  echo "trixie root: adding packages failed: making the root again" >&2
  trixie_umount_all
fi
[[ $(id -u) -eq 0 ]] || { echo "trixie root: making $root needs root (mmdebstrap --mode=root); run as root" >&2; exit 2; }
command -v mmdebstrap >/dev/null || { echo "trixie root: mmdebstrap is missing: apt-get install mmdebstrap" >&2; exit 2; }
if ! getent hosts "$(echo "$MIRROR" | sed -E 's|^[a-z]+://([^/:]+).*|\1|')" >/dev/null \
   || ! curl -fsS -o /dev/null --max-time 20 "$MIRROR/dists/trixie/Release"; then
  echo "trixie root: the Debian archive ($MIRROR/dists/trixie/Release) is not reachable: no network to make $root" >&2
  exit 2
fi
[[ -e $root ]] && echo "trixie root: $root is stale or broken: making it again" >&2
trixie_remove "$root.new"
trap 'trixie_remove "$root.new"' EXIT INT TERM  # an interrupted mmdebstrap leaves its mounts in it
start=$(date +%s)
echo "trixie root: mmdebstrap trixie ($flavour: $packages) into $root ..." >&2
# --skip=cleanup/apt/lists keeps the package lists: apt can install in the root afterwards.
if ! DEBIAN_FRONTEND=noninteractive mmdebstrap --mode=root --variant=apt --quiet \
     --include="$packages" --skip=cleanup/apt/lists \
     --aptopt='Acquire::Retries "3"' \
     trixie "$root.new" "$MIRROR" >&2; then
  trixie_remove "$root.new"
  echo "trixie root: mmdebstrap failed (see above); nothing was kept" >&2; exit 1
fi
# Debian's swiftlang links /usr/bin/swift only through a debconf answer; the compiler is
# /usr/libexec/swift/bin/swift either way (scripts use that path, or the link if present).
printf '%s\npackages: %s\nsource: %s\n' "$key" "$packages" "$MIRROR format $ROOT_FORMAT" > "$root.new/.stagerack-root"
trixie_remove "$root"; mv "$root.new" "$root"
trap - EXIT INT TERM
echo "trixie root: made in $(( $(date +%s) - start )) s, $(du -sxh "$root" | cut -f1)" >&2
echo "$root"
