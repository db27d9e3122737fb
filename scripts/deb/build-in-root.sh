#!/usr/bin/env bash
# Runs inside the Debian 13 build root (scripts/make-deb.sh copies the source to
# /work/stagerack): builds the release binary (the Swift runtime from Debian's libswiftlang,
# ~20 MB, not the whole compiler; a --static-swift-stdlib link failed with Debian's
# swiftlang 6.0.3, not looked into), lays the package out with `stagerack install-service
# --root` (the same racks/, soundfonts/, web/, config and unit a source install gets, with
# /usr as the prefix), splits the debug info into a -dbgsym package, and builds both with
# dpkg-deb into /tmp/deb/out. Depends come from dpkg-shlibdeps.
# For arm64 (scripts/deb/build-arm64.sh) it runs on the x86_64 host instead, after the
# emulated build and install-service have laid the tree out: DEB_LAID_OUT names that work
# folder (its stagerack/ is the installed tree), and DEB_ARCH, DEB_SOURCE, DEB_CROSS (binutils
# prefix), DEB_ADMINDIR (the arm64 root's dpkg database), DEB_SHLIBDEPS (dpkg-shlibdeps run
# where the root's libraries are seen at their own paths) and DEB_SWIFT_VERSION say the rest.
set -euo pipefail
cd "${DEB_SOURCE:-/work/stagerack}"
arch=${DEB_ARCH:-$(dpkg --print-architecture)}
admindir=(); [[ -n ${DEB_ADMINDIR:-} ]] && admindir=(--admindir="$DEB_ADMINDIR")
version=$(sed -n 's/^let version = "\(.*\)"/\1/p' Sources/stagerack/main.swift)
[[ -n $version ]] || { echo "make deb: no version in Sources/stagerack/main.swift" >&2; exit 1; }
if [[ -z ${DEB_LAID_OUT:-} ]]; then
# Linked with lld (-use-ld=lld, the ld.lld Debian's swiftlang ships): Swift 6.0.3 emits some
# .rodata sections writable (flags WAR), and GNU ld then starts the data segment with that
# .rodata and gives no GNU_RELRO at all, whatever -z relro says (lintian: hardening-no-relro);
# lld keeps the relro sections in a PT_GNU_RELRO segment of their own. Checked below.
if ! nice -n 10 swift build -c release --product stagerack -Xswiftc -use-ld=lld -Xlinker --build-id=sha1 -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now --scratch-path /work/build-deb >/tmp/deb-build.log 2>&1; then
  grep -E "error" /tmp/deb-build.log | sort -u | head -20 >&2
  echo "make deb: the release build failed (/tmp/deb-build.log in the root)" >&2; exit 1
fi
grep -E "warning: .*(RWX|LOAD)|Build complete" /tmp/deb-build.log >&2 || true
bin=/work/build-deb/release/stagerack
[[ -x $bin ]] || { echo "make deb: the release build failed" >&2; exit 1; }
segments=$(readelf -lW "$bin")
[[ $segments == *GNU_RELRO* ]] || { echo "make deb: $bin has no GNU_RELRO segment (the link lost -z relro)" >&2; exit 1; }
fi

# DEB_MAINTAINER names who publishes the package (the default is a placeholder).
maintainer=${DEB_MAINTAINER:-StageRack developers <stagerack@example.org>}
if [[ -n ${DEB_LAID_OUT:-} ]]; then
  work=$DEB_LAID_OUT; pkg=$work/stagerack; dbg=$work/stagerack-dbgsym
  [[ -x $pkg/usr/bin/stagerack ]] || { echo "make deb: nothing laid out in $pkg" >&2; exit 1; }
  rm -rf "$work/out" "$dbg"; mkdir -p "$work/out"
else
  work=/tmp/deb; rm -rf "$work"; mkdir -p "$work/out"
  pkg=$work/stagerack; dbg=$work/stagerack-dbgsym
  "$bin" install-service --root "$pkg" --prefix /usr --source /work/stagerack --no-enable >"$work/install.log"
fi
# Debian puts units under /usr/lib/systemd/system; systemd-sysusers makes the user.
mkdir -p "$pkg/usr/lib/systemd/system" "$pkg/usr/lib/sysusers.d" "$pkg/usr/share/doc/stagerack" "$pkg/DEBIAN"
mv "$pkg/etc/systemd/system/stagerack.service" "$pkg/usr/lib/systemd/system/"
rmdir -p "$pkg/etc/systemd/system" 2>/dev/null || true
sed -i 's/^# which fills in the binary path and the user.*/# (the Debian package: \/usr\/bin; sudo systemctl enable --now stagerack). See README.md, "Raspberry Pi"./' \
  "$pkg/usr/lib/systemd/system/stagerack.service"
install -m 644 packaging/deb/sysusers.conf "$pkg/usr/lib/sysusers.d/stagerack.conf"
install -m 644 packaging/deb/copyright "$pkg/usr/share/doc/stagerack/copyright"
# The manual page, made from the binary's own --help (help2man runs it; for the arm64 package
# laid out by the emulated build, DEB_MAN_BINARY is a wrapper that runs it under emulation).
man_bin=${DEB_MAN_BINARY:-}
[[ -z ${DEB_LAID_OUT:-} ]] && man_bin=$bin
if [[ -n $man_bin ]]; then
  mkdir -p "$pkg/usr/share/man/man1"
  scripts/deb/man-page.sh "$man_bin" "$work/stagerack.1"
  gzip -9n < "$work/stagerack.1" > "$pkg/usr/share/man/man1/stagerack.1.gz"
fi
mkdir -p "$pkg/usr/share/lintian/overrides"
install -m 644 packaging/deb/lintian-overrides "$pkg/usr/share/lintian/overrides/stagerack"
{
  echo "stagerack ($version) unstable; urgency=medium"
  echo
  echo "  * Built from the StageRack repository with Debian's swiftlang (${DEB_SWIFT_VERSION:-$(swift --version 2>&1 | head -1 | sed 's/.*version \([0-9.]*\).*/\1/')})."
  echo
  echo " -- $maintainer  $(date -R -d @"${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")"
} | gzip -9n > "$pkg/usr/share/doc/stagerack/changelog.gz"

# Debug info split off: the stripped binary keeps a .gnu_debuglink; the .debug file goes in
# stagerack-dbgsym under /usr/lib/debug/.build-id, as Debian's dh_strip does.
build_id=$(readelf -n "$pkg/usr/bin/stagerack" | awk '/Build ID/ { print $3 }')
[[ -n $build_id ]] || { echo "make deb: the binary has no build ID (linked without --build-id)" >&2; exit 1; }
debug_file=usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug
mkdir -p "$dbg/$(dirname "$debug_file")" "$dbg/DEBIAN" "$dbg/usr/share/doc"
objcopy=${DEB_CROSS:-}objcopy strip=${DEB_CROSS:-}strip
$objcopy --only-keep-debug --compress-debug-sections "$pkg/usr/bin/stagerack" "$dbg/$debug_file"
$strip --remove-section=.comment --remove-section=.note --strip-unneeded "$pkg/usr/bin/stagerack"
$objcopy --add-gnu-debuglink="$dbg/$debug_file" "$pkg/usr/bin/stagerack"
ln -s stagerack "$dbg/usr/share/doc/stagerack-dbgsym"

# Permissions as Debian wants them; the package's files are owned by root (--root-owner-group).
find "$pkg" "$dbg" -type d -exec chmod 755 {} +
find "$pkg" "$dbg" -type f -exec chmod 644 {} +
chmod 755 "$pkg/usr/bin/stagerack"
install -m 755 packaging/deb/postinst packaging/deb/prerm packaging/deb/postrm "$pkg/DEBIAN/"
echo /etc/stagerack/stagerack.json > "$pkg/DEBIAN/conffiles"

# dpkg-shlibdeps wants a debian/control naming the package.
mkdir -p "$work/src/debian"
printf 'Source: stagerack\n\nPackage: stagerack\nArchitecture: any\n' > "$work/src/debian/control"
# libswiftlang ships no shlibs or symbols file (its libraries have unversioned sonames,
# libswiftCore.so), so dpkg-shlibdeps cannot map them: it is told to pass over them, and the
# runtime is pinned to the exact version the binary was built with (Swift has no stable ABI
# on Linux), read from dpkg's database of the build root.
depends=$(cd "$work/src" && ${DEB_SHLIBDEPS:-dpkg-shlibdeps} --ignore-missing-info -O "$pkg/usr/bin/stagerack" 2>"$work/shlibdeps.log" | sed -n 's/^shlibs:Depends=//p')
[[ -n $depends ]] || { cat "$work/shlibdeps.log" >&2; echo "make deb: dpkg-shlibdeps gave no Depends" >&2; exit 1; }
# The libraries StageRack opens with dlopen when a feature starts (Sources/CLoadOnUse: the web
# remote, OSC, sync, LV2, the feedback unit, transposed tracks): dpkg-shlibdeps sees only the
# linked ones. Depends, not Recommends: the remote, sync and LV2 are core features on a Pi,
# and without the library the feature is refused. Each is the package that holds the soname
# in the build root (libwebsockets19t64 on Debian 13, libwebsockets17 on 12, ...).
for soname in 'libwebsockets.so.[0-9]*' libcrypto.so.3 liblo.so.7 liblilv-0.so.0 libfftw3f.so.3 'librubberband.so.[0-9]*'; do
  owner=$(dpkg-query "${admindir[@]}" -S "*/$soname" 2>/dev/null | sed -n 's/^\([^:]*\):.*/\1/p' | grep -v -- '-dev$' | head -n1 || true)
  [[ -n $owner ]] || { echo "make deb: no installed package holds $soname (scripts/install-deps.sh)" >&2; exit 1; }
  [[ ", $depends," == *", $owner "* || ", $depends," == *", $owner,"* ]] || depends="$depends, $owner"
done
# (grep without -q: an early exit would kill readelf with SIGPIPE and fail the pipe under pipefail)
if readelf -d "$pkg/usr/bin/stagerack" | grep 'NEEDED.*libswiftCore.so' >/dev/null; then
  depends="$depends, libswiftlang (= $(dpkg-query "${admindir[@]}" -W -f='${Version}' libswiftlang))"
fi

fill() {  # fill TEMPLATE TREE: the control file with version, arch, size, depends, build id
  sed -e "s/@VERSION@/$version/g" -e "s/@ARCH@/$arch/g" -e "s/@SIZE@/$(du -sk --exclude=DEBIAN "$2" | cut -f1)/" \
      -e "s/@DEPENDS@/$depends/" -e "s/@BUILDID@/$build_id/" -e "s/@MAINTAINER@/$maintainer/" "$1" > "$2/DEBIAN/control"
}
for tree in "$pkg" "$dbg"; do
  (cd "$tree" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum > DEBIAN/md5sums)
done
fill packaging/deb/control.in "$pkg"
fill packaging/deb/control-dbgsym.in "$dbg"
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$work/out/stagerack_${version}_${arch}.deb" >&2
dpkg-deb --root-owner-group -Zxz --build "$dbg" "$work/out/stagerack-dbgsym_${version}_${arch}.deb" >&2
echo "Depends: $depends" >&2
