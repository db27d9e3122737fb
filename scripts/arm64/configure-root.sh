#!/usr/bin/env bash
# configure-root.sh ROOT: the little an arm64 root unpacked by mmdebstrap --variant=extract
# needs to build and run StageRack under proot + qemu (scripts/arm64/root.sh runs it, natively:
# nothing here runs an arm64 program).
#   - /etc/ld.so.conf.d is read by the loader only through ld.so.cache: the multiarch folders
#     and Swift's runtime folder are written there and the cache is made under emulation later
#     (scripts/arm64/run.sh ROOT ldconfig), as no native ldconfig can write an aarch64 cache;
#   - /usr/bin/swift -> /usr/libexec/swift/bin/swift (swiftlang's debconf question is never asked);
#   - a root user and group, /tmp, /etc/hosts.
set -euo pipefail
root=${1:?usage: configure-root.sh ROOT}
mkdir -p "$root/etc/ld.so.conf.d" "$root/tmp" "$root/root" "$root/work"
chmod 1777 "$root/tmp"
[[ -e $root/usr/bin/swift ]] || ln -s ../libexec/swift/bin/swift "$root/usr/bin/swift"
grep -qs '^root:' "$root/etc/passwd" || echo 'root:x:0:0:root:/root:/bin/bash' >> "$root/etc/passwd"
grep -qs '^root:' "$root/etc/group" || echo 'root:x:0:' >> "$root/etc/group"
[[ -s $root/etc/hosts ]] || printf '127.0.0.1 localhost\n' > "$root/etc/hosts"
[[ -e $root/etc/ld.so.conf ]] || echo 'include /etc/ld.so.conf.d/*.conf' > "$root/etc/ld.so.conf"
printf '/usr/local/lib\n/usr/lib/aarch64-linux-gnu\n/lib/aarch64-linux-gnu\n' > "$root/etc/ld.so.conf.d/aarch64-linux-gnu.conf"
# dpkg's database from the unpacked .debs (their control files), so dpkg-query, dpkg-shlibdeps
# and dpkg-architecture know what is there; nothing is configured by it. ARM64_STATUS=unpacked
# (the bare root of deb-test): recorded as unpacked with their maintainer scripts, for the
# `dpkg --configure -a` that scripts/arm64/root.sh then runs under emulation.
status=$root/var/lib/dpkg/status
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
: > "$status.new"
for deb in "$root"/var/cache/apt/archives/*.deb; do
  [[ -f $deb ]] || continue
  name=$(dpkg-deb -f "$deb" Package)
  dpkg-deb -f "$deb" | sed "/^Package:/a Status: install ok ${ARM64_STATUS:-installed}" >> "$status.new"
  echo >> "$status.new"
  tmp=$(mktemp -d); dpkg-deb -e "$deb" "$tmp"
  multi=$(dpkg-deb -f "$deb" Multi-Arch)
  suffix=""; [[ $multi == same ]] && suffix=":arm64"
  for f in shlibs symbols triggers; do [[ -f $tmp/$f ]] && cp "$tmp/$f" "$root/var/lib/dpkg/info/$name$suffix.$f"; done
  if [[ ${ARM64_STATUS:-installed} == unpacked ]]; then  # dpkg --configure -a runs them later
    for f in postinst config templates conffiles md5sums; do [[ -f $tmp/$f ]] && cp "$tmp/$f" "$root/var/lib/dpkg/info/$name$suffix.$f"; done
  fi
  dpkg-deb -c "$deb" | awk '{ p = $6; sub(/^\./, "", p); if (p == "/") p = "/."; sub(/\/$/, "", p); print p }' > "$root/var/lib/dpkg/info/$name$suffix.list"
  rm -rf "$tmp"
done
mv "$status.new" "$status"
echo "arm64 root: $(grep -c '^Package:' "$status") packages recorded in dpkg's database" >&2
