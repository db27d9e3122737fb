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
if "$SWIFT" build -c release --static-swift-stdlib --product stagerack --scratch-path .build/static >"$log" 2>&1; then
    # Debug info off (75 MB instead of 83), the symbol table kept for backtraces.
    strip --strip-debug -o "$OUT.new" .build/static/release/stagerack
    echo "installed binary: the Swift runtime linked statically ($OUT)"
else
    echo "installed binary: this toolchain cannot link the Swift runtime statically (see $log): the dynamic build instead"
    "$SWIFT" build -c release --product stagerack
    cp .build/release/stagerack "$OUT.new"
fi
mv "$OUT.new" "$OUT"
