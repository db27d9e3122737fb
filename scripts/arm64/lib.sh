# Sourced by scripts/check-arm64.sh (and make deb ARCH=arm64): running commands in the arm64
# root (scripts/arm64/root.sh) under proot + qemu-aarch64-static, with no binfmt_misc.
# Needs proot, qemu-user-static and a C compiler (scripts/arm64/proot-launch.c).

ARM64_TOOLS=${ARM64_TOOLS:-$PWD/.build/arm64-tools}

# arm64_tools: checks proot and qemu-aarch64-static, builds the seccomp launcher when stale.
arm64_tools() {
  local missing=()
  command -v proot >/dev/null || missing+=(proot)
  command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)
  command -v cc >/dev/null || missing+=(gcc)
  if ((${#missing[@]})); then
    echo "arm64: ${missing[*]} missing: apt-get install ${missing[*]} (or scripts/install-deps.sh --arm64)" >&2
    return 2
  fi
  [[ $(uname -m) == x86_64 ]] || { echo "arm64: the emulated root is run from an x86_64 host (this is $(uname -m))" >&2; return 2; }
  mkdir -p "$ARM64_TOOLS"
  if [[ ! -x $ARM64_TOOLS/proot-launch || scripts/arm64/proot-launch.c -nt $ARM64_TOOLS/proot-launch ]]; then
    cc -O2 -Wall -Wextra -Werror -o "$ARM64_TOOLS/proot-launch" scripts/arm64/proot-launch.c || return 1
  fi
}

# in_arm64 ROOT CMD...: CMD through bash -c inside ROOT, run by qemu-aarch64-static under
# proot (the seccomp launcher in front), a clean environment, Debian's Swift on PATH; /dev,
# /proc and /sys bound from the host (proot binds: nothing is mounted, nothing to undo).
# ARM64_TIMEOUT (seconds): a watchdog; when it fires the whole command is killed and one line says so.
# ARM64_NICE: run it with nice -n ARM64_NICE (the long build shares the machine).
in_arm64() {
  local root=$1; shift
  local limit=${ARM64_TIMEOUT:-0} rc
  local cmd=(nice -n "${ARM64_NICE:-0}" "$ARM64_TOOLS/proot-launch" proot -q qemu-aarch64-static -r "$root" -b /dev -b /proc -b /sys -w /
    /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/libexec/swift/bin
    /bin/bash -c "$*")
  if ((limit > 0)); then
    timeout --kill-after=30 "$limit" "${cmd[@]}"; rc=$?
    if ((rc == 124 || rc == 137)); then
      echo "arm64: the watchdog ended the command after ${limit} s (ARM64_TIMEOUT; hung, e.g. on a futex, or too slow): $*" | cut -c1-300 >&2
    fi
    return $rc
  fi
  "${cmd[@]}"
}

# in_arm64_chroot ROOT CMD...: CMD through bash -c in ROOT entered with chroot (its /proc, /sys,
# /dev mounted by the caller), each arm64 program run by qemu-aarch64-static under a proot that
# translates no path (its root is the chroot's /) and without the seccomp launcher. Used where
# the path-translating proot fails: systemd 257's tools (systemd-sysusers in maintainer
# scripts) abort there with "Assertion 'path_is_absolute(p)' failed" (chase()), after the
# launcher's ENOSYS for openat2/statx. The x86_64 proot, its libraries and qemu are copied
# into ROOT (/opt/stagerack-x86, /lib64, /usr/lib/x86_64-linux-gnu): for the bare root of
# make deb-test ARCH=arm64 only. ARM64_TIMEOUT as for in_arm64. ARM64_USER=UID:GID (and
# ARM64_GROUPS, a list of GIDs): proot and everything under it run as that user (a program that
# changes user under proot cannot exec: proot's loader is its own, in a folder only it reads).
in_arm64_chroot() {
  local root=$1; shift
  local x=$root/opt/stagerack-x86 lib
  if [[ ! -x $x/proot ]]; then
    mkdir -p "$x" "$root/lib64" "$root/usr/lib/x86_64-linux-gnu"
    cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
    for lib in $(ldd "$(command -v proot)" | awk '$3 ~ /^\// { print $3 }'); do cp -L "$lib" "$root/usr/lib/x86_64-linux-gnu/"; done
    cp "$(command -v proot)" "$(command -v qemu-aarch64-static)" "$x/"
  fi
  local as=()
  [[ -n ${ARM64_USER:-} ]] && as=(--userspec="$ARM64_USER" --groups="${ARM64_GROUPS:-$ARM64_USER}")
  timeout --kill-after=30 "${ARM64_TIMEOUT:-3600}" chroot "${as[@]}" "$root" /opt/stagerack-x86/proot -q /opt/stagerack-x86/qemu-aarch64-static \
    /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -c "$*"
}

# arm64_sync_source ROOT: the repository's files (tracked and untracked, not ignored) synced into
# ROOT/work/stagerack; rsync keeps unchanged files' inode and mtime, so builds stay incremental.
arm64_sync_source() {
  command -v rsync >/dev/null || { echo "arm64: rsync is missing: apt-get install rsync" >&2; return 2; }
  mkdir -p "$1/work/stagerack"
  git ls-files -co --exclude-standard | rsync -a --delete-missing-args --files-from=- ./ "$1/work/stagerack/"
}
