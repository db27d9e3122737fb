#!/usr/bin/env bash
# scripts/build-installed.sh SWIFT OUT: builds the binary `make install` installs and copies it
# to OUT. The Swift runtime and Foundation are linked in statically where the toolchain can
# (swift.org's toolchains ship the static libraries): the installed service then needs no
# toolchain at run time, starts faster and keeps less memory resident. A toolchain that
# cannot (Debian's swiftlang has no static Swift libraries) gets the ordinary dynamic build,
# with one line saying so. The static build has a build directory of its own
# (.build/static), so the everyday dynamic builds are not redone.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${1:?usage: build-installed.sh SWIFT OUT}
OUT=${2:?usage: build-installed.sh SWIFT OUT}
mkdir -p "$(dirname "$OUT")" .build
log=.build/static-build.log
# Linked by lld with packed relative relocations (DT_RELR, glibc 2.36+: Debian 12 and 13,
# Raspberry Pi OS): the static runtime's ~120,000 relative relocations take 15 kB instead of
# 1.8 MB of .rela.dyn, which start-up reads and keeps resident (`render` of the synth rack:
# 39.5 MB peak RSS instead of 41.5, 1.29x the fluidsynth CLI; start-up 114.3 M instructions
# instead of 114.6 M; Benchmarks/startup, 2026-12-06).
relr=(-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)
if "$SWIFT" build -c release --static-swift-stdlib --product stagerack --scratch-path .build/static "${relr[@]}" >"$log" 2>&1; then
    # Debug info off (75 MB instead of 83), the symbol table kept for backtraces.
    strip --strip-debug -o "$OUT.new" .build/static/release/stagerack
    echo "installed binary: the Swift runtime linked statically ($OUT)"
else
    echo "installed binary: this toolchain cannot link the Swift runtime statically (see $log): the dynamic build instead"
    "$SWIFT" build -c release --product stagerack
    cp .build/release/stagerack "$OUT.new"
fi
mv "$OUT.new" "$OUT"
