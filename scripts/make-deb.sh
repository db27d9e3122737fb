#!/usr/bin/env bash
# make deb: stagerack_VERSION_ARCH.deb (and stagerack-dbgsym_...) built in the Debian 13 root
# (scripts/trixie/root.sh build: Debian's swiftlang, linked against trixie's libraries) by
# scripts/deb/build-in-root.sh, checked with lintian there, and put in DEB_OUT (out/deb) only
# when everything succeeded: no half-built package is left there.
# make deb-test (--test): then installed in a fresh Debian 13 (an overlay on the cached bare
# root .build/trixie-base, thrown away afterwards): apt install ./stagerack_*.deb, every shipped
# rack validates from /usr/share/stagerack/racks, systemd-analyze verify on the unit,
# `stagerack render --demo` as the service user, apt purge leaves nothing. Run as root.
# ARCH: the machine's (amd64), or arm64 on an amd64 machine: built in the emulated arm64 root
# of make check-arm64 (scripts/deb/build-arm64.sh; the first build takes most of an hour),
# checked with this machine's lintian; --test then installs it in a bare arm64 trixie
# (scripts/arm64/root.sh base, an overlay thrown away afterwards) with apt, its maintainer
# scripts and every check above run under emulation (qemu-aarch64-static under proot).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/trixie/lib.sh
. scripts/arm64/lib.sh   # in_arm64 (ARCH=arm64)
OUT_DIR=${DEB_OUT:-out/deb}
ARCH=${ARCH:-$(dpkg --print-architecture)}
test_it=false; [[ ${1:-} == --test ]] && test_it=true
[[ $(id -u) -eq 0 ]] || { echo "make deb: needs root (it builds in a chroot)" >&2; exit 2; }
total0=$(date +%s)
trap 'trixie_fresh_cleanup' EXIT INT TERM
if [[ $ARCH == arm64 && $(dpkg --print-architecture) == amd64 ]]; then
  command -v lintian >/dev/null || { echo "make deb ARCH=arm64: lintian is missing on this machine (the arm64 root has none): apt-get install lintian" >&2; exit 2; }
  root=""
  get_arm64_root() { root=$(scripts/arm64/root.sh); }
  step "the trixie arm64 root (cached, made if stale)" get_arm64_root
  step "arm64: release build (emulated), laid out, dpkg-deb" scripts/deb/build-arm64.sh "$root"
  lint_arm64() {
    lintian --no-tag-display-limit --info "$root"/tmp/deb/out/*.deb > "$root/tmp/deb/lintian.txt" 2>&1 || true
    cat "$root/tmp/deb/lintian.txt" >&2
    if grep -q '^E:' "$root/tmp/deb/lintian.txt"; then echo "make deb: lintian reports errors (above)" >&2; return 1; fi
    echo "lintian ($(lintian --version)): $(grep -c '^W:' "$root/tmp/deb/lintian.txt") warnings, $(grep -c '^I:' "$root/tmp/deb/lintian.txt") info, no errors" >&2
  }
  step "lintian (this machine's; no errors)" lint_arm64
  deliver_arm64() {
    mkdir -p "$OUT_DIR"
    local staging f; staging=$(mktemp -d "$OUT_DIR/.partial.XXXXXX")
    cp "$root"/tmp/deb/out/*.deb "$staging/"; cp "$root/tmp/deb/lintian.txt" "$staging/lintian-arm64.txt"
    for f in "$staging"/*; do mv -f "$f" "$OUT_DIR/"; done
    rmdir "$staging"
    ls -l "$OUT_DIR"/*_arm64.deb >&2
  }
  step "packages moved to $OUT_DIR" deliver_arm64
elif [[ $ARCH != "$(dpkg --print-architecture)" ]]; then
  echo "make deb: ARCH=$ARCH is not supported here (this machine is $(dpkg --print-architecture); arm64 is built on amd64 under emulation)" >&2
  exit 2
else
buildroot=""
get_root() { buildroot=$(scripts/trixie/root.sh build); }
step "the trixie build root (cached, made if stale)" get_root
# A throw-away overlay on the build root (make check-trixie may use the root at the same
# time); the package's build folder persists in .build/deb-build, bound into it.
fresh_copy "$buildroot"
root=$FRESH
trixie_mount "$root"
mkdir -p .build/deb-build "$root/work/build-deb"
mount --bind "$PWD/.build/deb-build" "$root/work/build-deb" && TRIXIE_MOUNTS+=("$root/work/build-deb")
step "the source copied into the root" copy_source "$root/work/stagerack"
build() { in_root "$root" 'cd /work/stagerack && scripts/deb/build-in-root.sh'; }
step "release build, package laid out, dpkg-deb" build
lint() {
  in_root "$root" 'lintian --no-tag-display-limit --info /tmp/deb/out/*.deb > /tmp/deb/lintian.txt 2>&1; rc=$?; cat /tmp/deb/lintian.txt; exit $rc' >&2 || true
  if grep -q '^E:' "$root/tmp/deb/lintian.txt"; then echo "make deb: lintian reports errors (above)" >&2; return 1; fi
  echo "lintian: $(grep -c '^E:' "$root/tmp/deb/lintian.txt") errors, $(grep -c '^W:' "$root/tmp/deb/lintian.txt") warnings, $(grep -c '^I:' "$root/tmp/deb/lintian.txt") info" >&2
}
step "lintian (no errors)" lint
deliver() {
  mkdir -p "$OUT_DIR"
  local staging; staging=$(mktemp -d "$OUT_DIR/.partial.XXXXXX")
  cp "$root"/tmp/deb/out/*.deb "$root/tmp/deb/lintian.txt" "$staging/"
  local f; for f in "$staging"/*; do mv -f "$f" "$OUT_DIR/"; done
  rmdir "$staging"
  ls -l "$OUT_DIR"/*.deb >&2
}
step "packages moved to $OUT_DIR" deliver
fi

if $test_it; then
  trixie_fresh_cleanup
  base=""
  if [[ $ARCH == "$(dpkg --print-architecture)" ]]; then
    get_base() { base=$(scripts/trixie/root.sh base); }
    step "the bare trixie root (cached, made if stale)" get_base
    fresh_copy "$base"
    t=$FRESH
    trixie_mount "$t"
  else
    # arm64 on amd64: every command below runs in the bare arm64 root under emulation
    # (chroot, then qemu under a proot that translates no path: scripts/arm64/lib.sh)
    get_base() { base=$(scripts/arm64/root.sh base); }
    step "the bare trixie arm64 root (cached, made if stale)" get_base
    fresh_copy "$base"
    t=$FRESH
    trixie_mount "$t"
    in_root() { ARM64_TIMEOUT=3600 in_arm64_chroot "$@"; }
  fi
  deb=$(ls "$OUT_DIR"/stagerack_*_"$ARCH".deb)
  cp "$deb" "$t/tmp/"
  in_root "$t" 'find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /tmp -o -path /run -o -path /var/cache -o -path /var/lib/apt -o -path /var/lib/dpkg -o -path /var/log -o -path /var/lib/systemd/deb-systemd-helper-enabled -o -path /etc/ld.so.cache -o -path /host-rootfs \) -prune -o -print | sort > /tmp/before.txt'
  install_it() { in_root "$t" 'apt-get install -y -q ./tmp/'"$(basename "$deb")"' 2>&1 | tail -4; exit ${PIPESTATUS[0]}'; }
  step "apt install ./$(basename "$deb") in a fresh trixie" install_it
  # racks/lv2/x42-vocal-eq.json hosts x42's EQ: the package Suggests x42-plugins; installed here
  # so that every shipped rack can validate.
  validate_all() {
    in_root "$t" 'apt-get install -y -q --no-install-recommends x42-plugins >/dev/null || exit 1; rc=0; n=0; for r in $(find /usr/share/stagerack/racks -name "*.json" | sort); do n=$((n+1)); out=$(stagerack validate "$r" 2>&1) || { rc=1; echo "FAIL $r: $out"; }; done; echo "$n racks and setlists validated"; exit $rc'
  }
  step "every shipped rack validates from /usr/share/stagerack/racks" validate_all
  verify_unit() { in_root "$t" 'systemd-analyze verify --man=no /usr/lib/systemd/system/stagerack.service 2>&1 | tee /tmp/verify.txt; [ ! -s /tmp/verify.txt ]'; }
  step "systemd-analyze verify stagerack.service" verify_unit
  render_as_user() {
    in_root "$t" 'getent passwd stagerack && id stagerack && cd /tmp && runuser -u stagerack -- stagerack render /usr/share/stagerack/racks/default.json --demo --output /tmp/demo.wav 2>&1 | tail -2; exit ${PIPESTATUS[0]}'
  }
  if [[ $ARCH != "$(dpkg --print-architecture)" ]]; then
    # under emulation proot itself runs as the service user (see in_arm64_chroot)
    render_as_user() {
      local ids audio
      ids=$(awk -F: '$1 == "stagerack" { print $3 ":" $4 }' "$t/etc/passwd")
      audio=$(awk -F: '$1 == "audio" { print $3 }' "$t/etc/group")
      [[ -n $ids && -n $audio ]] || { echo "no stagerack user or audio group in the root" >&2; return 1; }
      ARM64_USER=$ids ARM64_GROUPS=${ids#*:},$audio in_root "$t" 'id; cd /tmp && stagerack render /usr/share/stagerack/racks/default.json --demo --output /tmp/demo.wav 2>&1 | tail -2; exit ${PIPESTATUS[0]}'
    }
  fi
  step "stagerack render --demo as the service user" render_as_user
  purge_it() {
    in_root "$t" '{ dpkg -L stagerack; echo /etc/stagerack; echo /var/lib/stagerack; echo /etc/systemd/system/multi-user.target.wants/stagerack.service; } | sort -u > /tmp/owned.txt
      apt-get purge --autoremove -y -q stagerack x42-plugins 2>&1 | tail -2
      find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /tmp -o -path /run -o -path /var/cache -o -path /var/lib/apt -o -path /var/lib/dpkg -o -path /var/log -o -path /var/lib/systemd/deb-systemd-helper-enabled -o -path /etc/ld.so.cache -o -path /host-rootfs \) -prune -o -print | sort > /tmp/after.txt
      new=$(comm -13 /tmp/before.txt /tmp/after.txt)
      # What stagerack owned or made (files and its own folders; /usr, /etc are shared).
      left=$(while read -r f; do [ -e "$f" ] && { [ ! -d "$f" ] || echo "$f" | grep -q stagerack; } && echo "$f"; done < /tmp/owned.txt; echo "$new" | grep stagerack)
      user=$(getent passwd stagerack || true)
      [ -n "$new" ] && { echo "$(echo "$new" | wc -l) paths new since before the install, none of them stagerack'"'"'s (dependencies apt kept or left), e.g.:"; echo "$new" | head -5; }
      if [ -n "$left$user" ]; then echo "left behind by stagerack after purge:"; echo "$left"; echo "$user"; exit 1; fi
      echo "nothing of stagerack left behind: its files, /etc/stagerack, /var/lib/stagerack, the enable link, the user"'
  }
  step "apt purge --autoremove leaves nothing" purge_it
fi
echo "make deb: done" >&2
printf '  %s\n' "${STEP_TIMES[@]}" >&2
echo "  total: $(( $(date +%s) - total0 )) s" >&2
